/*
 * twag — portable constant-time AES (FIPS 197, 2001; updated 2023),
 * bitsliced on 64-bit words.
 *
 * Layout. Four blocks are processed at once in eight words x[0..7]: x[i]
 * holds bit i of every state byte of the four blocks. State byte s[r][c]
 * (FIPS 197 §3.4: input byte r + 4c) of block b sits at bit 16r + 4c + b,
 * so each row is a 16-bit lane:
 *   - ShiftRows rotates lane r by 4r bits (column c takes column c + r);
 *   - MixColumns needs s[r+1][c], which is the whole word rotated by 16.
 *
 * S-box. SubBytes (§5.1.1) is the affine map of the multiplicative inverse
 * in GF(2^8) = GF(2)[x]/(x^8+x^4+x^3+x+1). The inverse is computed as a
 * boolean circuit in an isomorphic tower field, derived for this file:
 *   GF(16)   = GF(2)[z]/(z^4 + z + 1)
 *   GF(256)' = GF(16)[y]/(y^2 + y + lam), lam = z^3 (0x8)
 * An element is ah*y + al (ah = bits 4..7, al = bits 0..3). Its inverse is
 *   N = lam*ah^2 + ah*al + al^2 (the norm, in GF(16))
 *   (ah*y + al)^-1 = (ah*N^-1)*y + (ah + al)*N^-1
 * The isomorphism maps the AES generator x to g = 0x20 (a root of the AES
 * polynomial in GF(256)'), i.e. x^i -> g^i; M_in is that 8x8 matrix over
 * GF(2). M_out = A * M_in^-1 with A the §5.1.1 affine matrix, and the
 * constant 0x63 shows up as complements. The inverse S-box (§5.3.2) uses
 * M_in * A^-1 (with the constant M_in*A^-1*0x63 = 0x47) before, and
 * M_in^-1 after, the same inversion. N^-1 in GF(16) is written in algebraic
 * normal form (10 ANDs). All of it was checked against the S-box for all
 * 256 inputs when derived, and the FIPS 197 / SP 800-38A vectors check it
 * at test time.
 *
 * Every operation is a fixed sequence of AND/XOR/shift on whole words:
 * no secret-indexed memory access, no secret-dependent branch, in the key
 * expansion as well.
 */
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"

/* The whole round inlined lets the compiler keep the 8 state words and the
 * S-box temporaries in registers across layers: ~25% fewer instructions
 * than calls per layer. */
#define TW_INLINE static inline __attribute__((always_inline))

/* ---- GF(16) arithmetic on bitsliced nibbles (4 words) ---- */

/* r = a * b mod z^4 + z + 1 (schoolbook, then z^4 = z + 1, z^5 = z^2 + z,
 * z^6 = z^3 + z^2). r may not alias a or b. */
static inline void gf16_mul(uint64_t r[4], const uint64_t a[4],
			    const uint64_t b[4])
{
	uint64_t c0 = a[0] & b[0];
	uint64_t c1 = (a[0] & b[1]) ^ (a[1] & b[0]);
	uint64_t c2 = (a[0] & b[2]) ^ (a[1] & b[1]) ^ (a[2] & b[0]);
	uint64_t c3 = (a[0] & b[3]) ^ (a[1] & b[2]) ^ (a[2] & b[1]) ^
		      (a[3] & b[0]);
	uint64_t c4 = (a[1] & b[3]) ^ (a[2] & b[2]) ^ (a[3] & b[1]);
	uint64_t c5 = (a[2] & b[3]) ^ (a[3] & b[2]);
	uint64_t c6 = a[3] & b[3];

	r[0] = c0 ^ c4;
	r[1] = c1 ^ c4 ^ c5;
	r[2] = c2 ^ c5 ^ c6;
	r[3] = c3 ^ c6;
}

/* r = a^-1 in GF(16) (0 -> 0), algebraic normal form of a^14. */
static inline void gf16_inv(uint64_t r[4], const uint64_t a[4])
{
	uint64_t a01 = a[0] & a[1], a02 = a[0] & a[2], a03 = a[0] & a[3];
	uint64_t a12 = a[1] & a[2], a13 = a[1] & a[3], a23 = a[2] & a[3];
	uint64_t a012 = a01 & a[2], a013 = a01 & a[3];
	uint64_t a023 = a02 & a[3], a123 = a12 & a[3];

	r[0] = a[0] ^ a[1] ^ a[2] ^ a[3] ^ a02 ^ a12 ^ a012 ^ a123;
	r[1] = a[3] ^ a01 ^ a02 ^ a12 ^ a13 ^ a013;
	r[2] = a[2] ^ a[3] ^ a01 ^ a02 ^ a03 ^ a023;
	r[3] = a[1] ^ a[2] ^ a[3] ^ a03 ^ a13 ^ a23 ^ a123;
}

/* In place: t = t^-1 in the tower field (t[0..3] = al, t[4..7] = ah). */
TW_INLINE void tower_inv(uint64_t t[8])
{
	const uint64_t *al = t, *ah = t + 4;
	uint64_t n[4], ni[4], m[4], s[4], hl[4];

	/* N = lam*ah^2 + ah*al + al^2: lam*a^2 and a^2 are linear maps. */
	gf16_mul(m, ah, al);
	n[0] = m[0] ^ ah[2] ^ al[0] ^ al[2];
	n[1] = m[1] ^ ah[1] ^ ah[2] ^ ah[3] ^ al[2];
	n[2] = m[2] ^ ah[1] ^ al[1] ^ al[3];
	n[3] = m[3] ^ ah[0] ^ ah[2] ^ ah[3] ^ al[3];
	gf16_inv(ni, n);
	for (int i = 0; i < 4; i++)
		hl[i] = ah[i] ^ al[i];
	gf16_mul(s, ah, ni);
	gf16_mul(m, hl, ni);
	for (int i = 0; i < 4; i++) {
		t[i] = m[i];
		t[4 + i] = s[i];
	}
}

/* FIPS 197 §5.1.1 SubBytes on all 64 byte slots. */
TW_INLINE void sub_bytes(uint64_t x[8])
{
	uint64_t t[8];

	/*
	 * M_in: AES polynomial basis -> tower basis. Rows (bit i of the
	 * result = xor of these input bits): 0:{0,5,7} 1:{2} 2:{2..7}
	 * 3:{3,4} 4:{4,5,6} 5:{1,4,6,7} 6:{2,3,5,7} 7:{5,7}; shared terms
	 * factored out.
	 */
	{
		uint64_t l0 = x[5] ^ x[7], l1 = x[4] ^ x[6], l2 = x[2] ^ x[3];
		uint64_t l3 = l0 ^ l2;

		t[0] = l0 ^ x[0];
		t[1] = x[2];
		t[2] = l1 ^ l3;
		t[3] = x[3] ^ x[4];
		t[4] = l1 ^ x[5];
		t[5] = l1 ^ x[1] ^ x[7];
		t[6] = l3;
		t[7] = l0;
	}
	tower_inv(t);
	/*
	 * M_out = A * M_in^-1, then + 0x63 (complements of bits 0,1,5,6).
	 * Rows: 0:{0,2,6} 1:{0..5} 2:{0,3,5,6} 3:{0,2,5} 4:{0,1,3,4,5}
	 * 5:{1,2,3,5,6,7} 6:{4,6,7} 7:{1,2}.
	 */
	{
		uint64_t l0 = t[3] ^ t[5], l1 = t[1] ^ t[2], l2 = l0 ^ t[0];
		uint64_t l3 = t[6] ^ t[7], l4 = t[0] ^ t[2], l5 = l2 ^ t[4];

		x[0] = ~(l4 ^ t[6]);
		x[1] = ~(l1 ^ l5);
		x[2] = l2 ^ t[6];
		x[3] = l4 ^ t[5];
		x[4] = l5 ^ t[1];
		x[5] = ~(l0 ^ l1 ^ l3);
		x[6] = ~(l3 ^ t[4]);
		x[7] = l1;
	}
}

/* FIPS 197 §5.3.2 InvSubBytes: inverse of (A * b^-1 + 0x63). */
TW_INLINE void inv_sub_bytes(uint64_t x[8])
{
	uint64_t t[8];

	/*
	 * M_in * A^-1 applied to (x + 0x63); the constant becomes 0x47
	 * (complements of bits 0,1,2,6). Rows: 0:{1,5,6} 1:{1,4,7} 2:{1,4}
	 * 3:{0,1,2,3,5,6} 4:{0,1,2,4,5,6,7} 5:{3,4,5,6} 6:{0,4,5,6}
	 * 7:{1,2,6,7}.
	 */
	{
		uint64_t l0 = x[5] ^ x[6], l1 = x[1] ^ x[7], l2 = l0 ^ x[4];
		uint64_t l3 = x[0] ^ x[2], l4 = l0 ^ x[1];

		t[0] = ~l4;
		t[1] = ~(l1 ^ x[4]);
		t[2] = ~(x[1] ^ x[4]);
		t[3] = l3 ^ l4 ^ x[3];
		t[4] = l1 ^ l2 ^ l3;
		t[5] = l2 ^ x[3];
		t[6] = ~(l2 ^ x[0]);
		t[7] = l1 ^ x[2] ^ x[6];
	}
	tower_inv(t);
	/*
	 * M_in^-1: tower basis -> AES polynomial basis. Rows: 0:{0,7}
	 * 1:{4,5,7} 2:{1} 3:{1,6,7} 4:{1,3,6,7} 5:{2,4,6} 6:{1,2,3,7}
	 * 7:{2,4,6,7}.
	 */
	{
		uint64_t l0 = t[6] ^ t[7], l1 = t[2] ^ t[4], l2 = t[1] ^ t[3];

		x[0] = t[0] ^ t[7];
		x[1] = t[4] ^ t[5] ^ t[7];
		x[2] = t[1];
		x[3] = l0 ^ t[1];
		x[4] = l0 ^ l2;
		x[5] = l1 ^ t[6];
		x[6] = l2 ^ t[2] ^ t[7];
		x[7] = l0 ^ l1;
	}
}

/* ---- linear layers ---- */

static inline uint64_t rotr64(uint64_t x, unsigned n)
{
	return (x >> n) | (x << (64 - n));
}

/* Exchanges the bits of x selected by m with those n places higher. */
static inline uint64_t delta_swap(uint64_t x, uint64_t m, unsigned n)
{
	uint64_t t = ((x >> n) ^ x) & m;

	return x ^ t ^ (t << n);
}

/*
 * §5.1.2 ShiftRows: s'[r][c] = s[r][(c + r) mod 4], i.e. lane r rotated
 * right by 4r bits: lanes 1 and 3 by 4, then lanes 2 and 3 by 8 (a swap
 * of their bytes).
 */
TW_INLINE void shift_rows(uint64_t x[8])
{
	for (int i = 0; i < 8; i++) {
		uint64_t v = x[i];

		v = (v & 0x0000ffff0000ffffull) | ((v >> 4) & 0x0fff00000fff0000ull) |
		    ((v << 12) & 0xf0000000f0000000ull);
		x[i] = delta_swap(v, 0x00ff00ff00000000ull, 8);
	}
}

/* §5.3.1 InvShiftRows: s'[r][(c + r) mod 4] = s[r][c], the rotations
 * reversed. */
TW_INLINE void inv_shift_rows(uint64_t x[8])
{
	for (int i = 0; i < 8; i++) {
		uint64_t v = x[i];

		v = (v & 0x0000ffff0000ffffull) | ((v << 4) & 0xfff00000fff00000ull) |
		    ((v >> 12) & 0x000f0000000f0000ull);
		x[i] = delta_swap(v, 0x00ff00ff00000000ull, 8);
	}
}

/* r = {02} * a in GF(2^8) (§4.2.1 xtime; reduction by 0x1b). */
static inline void xtime(uint64_t r[8], const uint64_t a[8])
{
	uint64_t hi = a[7];

	r[7] = a[6];
	r[6] = a[5];
	r[5] = a[4];
	r[4] = a[3] ^ hi;
	r[3] = a[2] ^ hi;
	r[2] = a[1];
	r[1] = a[0] ^ hi;
	r[0] = hi;
}

/*
 * §5.1.3 MixColumns: s'[r] = {02}s[r] ^ {03}s[r+1] ^ s[r+2] ^ s[r+3]
 *                          = {02}(s[r] ^ s[r+1]) ^ s[r+1] ^ (s[r+2] ^ s[r+3]).
 */
TW_INLINE void mix_columns(uint64_t x[8])
{
	uint64_t r1[8], t[8], xt[8];

	for (int i = 0; i < 8; i++) {
		r1[i] = rotr64(x[i], 16);
		t[i] = x[i] ^ r1[i];
	}
	xtime(xt, t);
	for (int i = 0; i < 8; i++)
		x[i] = xt[i] ^ r1[i] ^ rotr64(t[i], 32);
}

/*
 * §5.3.3 InvMixColumns, a'(x) = {0b}x^3 + {0d}x^2 + {09}x + {0e}
 * = a(x) * ({04}x^2 + {05}) mod x^4 + 1, so first
 * s[r] ^= {04}(s[r] ^ s[r+2]), then MixColumns.
 */
TW_INLINE void inv_mix_columns(uint64_t x[8])
{
	uint64_t t[8], u[8];

	for (int i = 0; i < 8; i++)
		t[i] = x[i] ^ rotr64(x[i], 32);
	xtime(u, t);
	xtime(t, u);
	for (int i = 0; i < 8; i++)
		x[i] ^= t[i];
	mix_columns(x);
}

static inline void add_round_key(uint64_t x[8], const uint64_t k[8])
{
	for (int i = 0; i < 8; i++)
		x[i] ^= k[i];
}

/* ---- bitslicing ---- */

static inline void swapmove(uint64_t *a, uint64_t *b, uint64_t m, unsigned n)
{
	uint64_t t = ((*a >> n) ^ *b) & m;

	*b ^= t;
	*a ^= t << n;
}

/* 8x8 bit transpose in every byte lane: bit i of word j <-> bit j of word i.
 * An involution. */
static void transpose(uint64_t w[8])
{
	for (int j = 0; j < 8; j += 2)
		swapmove(&w[j], &w[j + 1], 0x5555555555555555ull, 1);
	for (int j = 0; j < 8; j += 4) {
		swapmove(&w[j], &w[j + 2], 0x3333333333333333ull, 2);
		swapmove(&w[j + 1], &w[j + 3], 0x3333333333333333ull, 2);
	}
	for (int j = 0; j < 4; j++)
		swapmove(&w[j], &w[j + 4], 0x0f0f0f0f0f0f0f0full, 4);
}

/*
 * Four blocks (64 bytes) to planes. Word j = 4*c0 + b first gets columns
 * c0 (low half) and c0 + 2 (high half) of block b, so byte q = 4*c1 + r;
 * moving byte q to 2r + c1 and transposing puts s[r][c] of block b at bit
 * 8*(2r + c1) + 4*c0 + b = 16r + 4c + b.
 */
static void bitslice(uint64_t x[8], const uint8_t in[64])
{
	for (int c0 = 0; c0 < 2; c0++) {
		for (int b = 0; b < 4; b++) {
			const uint8_t *p = in + 16 * b + 4 * c0;
			uint64_t v = (uint64_t)tw_load_le32(p) |
				     (uint64_t)tw_load_le32(p + 8) << 32;

			v = delta_swap(v, 0x00000000ff00ff00ull, 24);
			v = delta_swap(v, 0x00000000ffff0000ull, 16);
			x[4 * c0 + b] = v;
		}
	}
	transpose(x);
}

static void unbitslice(uint8_t out[64], uint64_t x[8])
{
	transpose(x);
	for (int c0 = 0; c0 < 2; c0++) {
		for (int b = 0; b < 4; b++) {
			uint8_t *p = out + 16 * b + 4 * c0;
			uint64_t v = x[4 * c0 + b];

			v = delta_swap(v, 0x00000000ffff0000ull, 16);
			v = delta_swap(v, 0x00000000ff00ff00ull, 24);
			tw_store_le32(p, (uint32_t)v);
			tw_store_le32(p + 8, (uint32_t)(v >> 32));
		}
	}
}

/* ---- key expansion (FIPS 197 §5.2) ---- */

/* SubWord on the four bytes of w (byte k at bits 8k..8k+7), through the
 * same circuit: plane i gets bit i of byte k at bit k. */
static uint32_t sub_word(uint32_t w)
{
	uint64_t x[8];
	uint32_t r = 0;

	for (int i = 0; i < 8; i++) {
		uint32_t v = (w >> i) & 0x01010101u;

		x[i] = (v | v >> 7 | v >> 14 | v >> 21) & 0xf;
	}
	sub_bytes(x);
	for (int i = 0; i < 8; i++) {
		uint32_t v = (uint32_t)x[i];

		r |= ((v & 1) | (v & 2) << 7 | (v & 4) << 14 | (v & 8) << 21) << i;
	}
	tw_wipe(x, sizeof(x));
	return r;
}

void tw_aes_ct64_init(struct tw_aes_ctx *ctx, const uint8_t *key,
		      size_t key_len)
{
	/* §5.2 Rcon[i] = [x^(i-1), 0, 0, 0] */
	static const uint8_t rcon[10] = { 0x01, 0x02, 0x04, 0x08, 0x10,
					  0x20, 0x40, 0x80, 0x1b, 0x36 };
	uint32_t w[4 * (TW_AES_MAX_ROUNDS + 1)];
	uint8_t blk[64];
	unsigned nk = (unsigned)(key_len / 4), nr = nk + 6;

	for (unsigned i = 0; i < nk; i++)
		w[i] = tw_load_le32(key + 4 * i);
	for (unsigned i = nk; i < 4 * (nr + 1); i++) {
		uint32_t temp = w[i - 1];

		if (i % nk == 0)
			/* SubWord(RotWord(temp)) xor Rcon[i/Nk] */
			temp = sub_word(temp >> 8 | temp << 24) ^ rcon[i / nk - 1];
		else if (nk > 6 && i % nk == 4)
			temp = sub_word(temp);
		w[i] = w[i - nk] ^ temp;
	}
	/* Bitslice four round keys at a time (one per block slot), then copy
	 * slot b into all four slots of round key r0 + b. */
	for (unsigned r0 = 0; r0 <= nr; r0 += 4) {
		uint64_t x[8];

		memset(blk, 0, sizeof(blk));
		for (unsigned b = 0; b < 4 && r0 + b <= nr; b++)
			for (int j = 0; j < 4; j++)
				tw_store_le32(blk + 16 * b + 4 * j, w[4 * (r0 + b) + j]);
		bitslice(x, blk);
		for (unsigned b = 0; b < 4 && r0 + b <= nr; b++)
			for (int i = 0; i < 8; i++) {
				/* block slot b is the bits at positions
				 * = b (mod 4); times 0xf copies each into
				 * the other three slots (no carries: the
				 * set bits are 4 apart). */
				uint64_t v = (x[i] >> b) & 0x1111111111111111ull;

				ctx->rk.ct64[r0 + b][i] = v * 0xf;
			}
		tw_wipe(x, sizeof(x));
	}
	ctx->nr = nr;
	ctx->impl = TW_AES_IMPL_CT64;
	ctx->has_dec = 1;
	tw_wipe(w, sizeof(w));
	tw_wipe(blk, sizeof(blk));
}

/* ---- cipher ---- */

/* §5.1 Cipher on 1..4 blocks. */
void tw_aes_ct64_encrypt4(const struct tw_aes_ctx *ctx, uint8_t *out,
			  const uint8_t *in, size_t nblocks)
{
	uint8_t buf[64];
	uint64_t x[8];
	unsigned nr = ctx->nr;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, in, 16 * nblocks);
	bitslice(x, buf);
	add_round_key(x, ctx->rk.ct64[0]);
	for (unsigned r = 1; r < nr; r++) {
		sub_bytes(x);
		shift_rows(x);
		mix_columns(x);
		add_round_key(x, ctx->rk.ct64[r]);
	}
	sub_bytes(x);
	shift_rows(x);
	add_round_key(x, ctx->rk.ct64[nr]);
	unbitslice(buf, x);
	memcpy(out, buf, 16 * nblocks);
	tw_wipe(buf, sizeof(buf));
	tw_wipe(x, sizeof(x));
}

/* §5.3 InvCipher on 1..4 blocks. */
void tw_aes_ct64_decrypt4(const struct tw_aes_ctx *ctx, uint8_t *out,
			  const uint8_t *in, size_t nblocks)
{
	uint8_t buf[64];
	uint64_t x[8];
	unsigned nr = ctx->nr;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, in, 16 * nblocks);
	bitslice(x, buf);
	add_round_key(x, ctx->rk.ct64[nr]);
	for (unsigned r = nr - 1; r > 0; r--) {
		inv_shift_rows(x);
		inv_sub_bytes(x);
		add_round_key(x, ctx->rk.ct64[r]);
		inv_mix_columns(x);
	}
	inv_shift_rows(x);
	inv_sub_bytes(x);
	add_round_key(x, ctx->rk.ct64[0]);
	unbitslice(buf, x);
	memcpy(out, buf, 16 * nblocks);
	tw_wipe(buf, sizeof(buf));
	tw_wipe(x, sizeof(x));
}
