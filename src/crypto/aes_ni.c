/*
 * twag — AES-128/192/256 with x86-64 AES-NI (FIPS 197, 2001; updated 2023;
 * CTR per NIST SP 800-38A, 2001). Intel's AES instructions compute one
 * full round each: AESENC = ShiftRows, SubBytes, MixColumns, AddRoundKey;
 * AESDEC the equivalent inverse cipher's round (FIPS 197 §5.3.5), whose
 * round keys are InvMixColumns(w[i]) (AESIMC).
 *
 * The instructions take the same time for any data, so this path is
 * constant time. Only compiled on x86-64; the functions carry
 * target("aes,sse4.1") and aes.c calls them only when the CPU has both.
 * The VAES kernels (ECB and CTR on 16 blocks at a time, AVX-512 VAES)
 * share the AES-NI key schedule and are used when the context was made
 * with TW_CPU_VAES and TW_CPU_AVX512 enabled.
 */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"

#define TW_AESNI __attribute__((target("aes,sse4.1")))

/* ---- key expansion (FIPS 197 §5.2) ---- */

/*
 * One step of the §5.2 recurrence for four words at once: given the
 * previous four words k = w[i-Nk..i-Nk+3] and t (SubWord(RotWord(w[i-1]))
 * ^ Rcon, or SubWord(w[i-1]), in every word), returns
 * w[i+j] = w[i-Nk+j] ^ ... ^ w[i-Nk] ^ t (the prefix xor).
 */
static inline TW_AESNI __m128i expand_step(__m128i k, __m128i t)
{
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	k = _mm_xor_si128(k, _mm_slli_si128(k, 8));
	return _mm_xor_si128(k, t);
}

/*
 * SubWord(RotWord(w3)) ^ Rcon in all four words, w3 = the last word of k.
 * With every column equal, AESENCLAST's ShiftRows is the identity, so
 * AESENCLAST(broadcast(RotWord(w3)), broadcast(Rcon)) = broadcast(
 * SubWord(RotWord(w3)) ^ Rcon). Lower latency than AESKEYGENASSIST, and
 * Rcon need not be an immediate.
 */
static inline TW_AESNI __m128i sub_rot_w3(__m128i k, uint32_t rcon)
{
	const __m128i rot_w3 = _mm_set_epi8(12, 15, 14, 13, 12, 15, 14, 13,
					    12, 15, 14, 13, 12, 15, 14, 13);

	return _mm_aesenclast_si128(_mm_shuffle_epi8(k, rot_w3),
				    _mm_set1_epi32((int)rcon));
}

/* SubWord(w3) in all four words (the AES-256 §5.2 "i mod Nk = 4" step). */
static inline TW_AESNI __m128i sub_w3(__m128i k)
{
	const __m128i w3 = _mm_set_epi8(15, 14, 13, 12, 15, 14, 13, 12,
					15, 14, 13, 12, 15, 14, 13, 12);

	return _mm_aesenclast_si128(_mm_shuffle_epi8(k, w3), _mm_setzero_si128());
}

/* AESKEYGENASSIST's word 0 is SubWord(X1); Rcon 0. */
static inline TW_AESNI uint32_t sub_word(uint32_t w)
{
	return (uint32_t)_mm_cvtsi128_si32(
		_mm_aeskeygenassist_si128(_mm_set1_epi32((int)w), 0));
}

/* AES-192 (Nk = 6): the §5.2 recurrence word by word, since six-word
 * steps do not line up with 16-byte round keys. */
static TW_AESNI void expand192(__m128i rk[13], const uint8_t *key)
{
	static const uint8_t rcon[8] = { 0x01, 0x02, 0x04, 0x08,
					 0x10, 0x20, 0x40, 0x80 };
	uint32_t w[52];

	for (unsigned i = 0; i < 6; i++)
		w[i] = tw_load_le32(key + 4 * i);
	for (unsigned i = 6; i < 52; i++) {
		uint32_t temp = w[i - 1];

		if (i % 6 == 0)
			temp = sub_word(temp >> 8 | temp << 24) ^ rcon[i / 6 - 1];
		w[i] = w[i - 6] ^ temp;
	}
	for (unsigned r = 0; r < 13; r++)
		rk[r] = _mm_set_epi32((int)w[4 * r + 3], (int)w[4 * r + 2],
				      (int)w[4 * r + 1], (int)w[4 * r]);
	tw_wipe(w, sizeof(w));
}

TW_AESNI void tw_aes_ni_init(struct tw_aes_ctx *ctx, const uint8_t *key,
			     size_t key_len, int with_dec)
{
	__m128i rk[TW_AES_MAX_ROUNDS + 1];
	unsigned nr;

	/* §5.2 Rcon[i] = x^(i-1) in GF(2^8) */
	static const uint8_t rcon[10] = { 0x01, 0x02, 0x04, 0x08, 0x10,
					  0x20, 0x40, 0x80, 0x1b, 0x36 };

	if (key_len == 16) {
		nr = 10;
		rk[0] = _mm_loadu_si128((const __m128i *)key);
		for (unsigned i = 1; i <= 10; i++)
			rk[i] = expand_step(rk[i - 1], sub_rot_w3(rk[i - 1], rcon[i - 1]));
	} else if (key_len == 24) {
		nr = 12;
		expand192(rk, key);
	} else {
		nr = 14;
		rk[0] = _mm_loadu_si128((const __m128i *)key);
		rk[1] = _mm_loadu_si128((const __m128i *)(key + 16));
		for (unsigned i = 2; i <= 14; i += 2) {
			rk[i] = expand_step(rk[i - 2], sub_rot_w3(rk[i - 1], rcon[i / 2 - 1]));
			if (i < 14)
				rk[i + 1] = expand_step(rk[i - 1], sub_w3(rk[i]));
		}
	}
	for (unsigned i = 0; i <= nr; i++)
		_mm_store_si128((__m128i *)ctx->rk.ni[0][i], rk[i]);
	if (with_dec) {
		/* §5.3.5: dw[0] = w[Nr], dw[i] = InvMixColumns(w[Nr-i]),
		 * dw[Nr] = w[0]. */
		_mm_store_si128((__m128i *)ctx->rk.ni[1][0], rk[nr]);
		for (unsigned i = 1; i < nr; i++)
			_mm_store_si128((__m128i *)ctx->rk.ni[1][i],
					_mm_aesimc_si128(rk[nr - i]));
		_mm_store_si128((__m128i *)ctx->rk.ni[1][nr], rk[0]);
	}
	ctx->nr = nr;
	ctx->impl = TW_AES_IMPL_AESNI;
	ctx->has_dec = with_dec ? 1 : 0;
	tw_wipe(rk, sizeof(rk));
}

/* ---- ECB ---- */

static inline TW_AESNI __m128i enc1(const __m128i *k, unsigned nr, __m128i x)
{
	x = _mm_xor_si128(x, k[0]);
	for (unsigned r = 1; r < nr; r++)
		x = _mm_aesenc_si128(x, k[r]);
	return _mm_aesenclast_si128(x, k[nr]);
}

/*
 * CBC encryption of n <= 8 messages side by side: one block of every
 * message still running per step, each round issued for all of them
 * before the next, so the AESENC latency of one chain hides behind the
 * others'.
 */
TW_AESNI void tw_aes_ni_cbc_encrypt_many(const struct tw_aes_ctx *const *ctx,
					 const uint8_t *const *iv, uint8_t *const *buf,
					 const size_t *len, unsigned n)
{
	const __m128i *k[8];
	__m128i x[8];
	size_t most = 0;
	unsigned nr = ctx[0]->nr;

	if (n > 8)
		n = 8;
	for (unsigned s = 0; s < n; s++) {
		k[s] = (const __m128i *)ctx[s]->rk.ni[0];
		x[s] = _mm_loadu_si128((const __m128i *)iv[s]);
		if (len[s] / 16 * 16 > most)
			most = len[s] / 16 * 16;
	}
	for (size_t off = 0; off < most; off += 16) {
		/* a finished message's chain keeps turning on its last block;
		 * it is neither read nor written any more */
		for (unsigned s = 0; s < n; s++)
			if (off + 16 <= len[s])
				x[s] = _mm_xor_si128(x[s], _mm_loadu_si128((const __m128i *)(buf[s] + off)));
		for (unsigned s = 0; s < n; s++)
			x[s] = _mm_xor_si128(x[s], k[s][0]);
		for (unsigned r = 1; r < nr; r++)
			for (unsigned s = 0; s < n; s++)
				x[s] = _mm_aesenc_si128(x[s], k[s][r]);
		for (unsigned s = 0; s < n; s++) {
			x[s] = _mm_aesenclast_si128(x[s], k[s][nr]);
			if (off + 16 <= len[s])
				_mm_storeu_si128((__m128i *)(buf[s] + off), x[s]);
		}
	}
}

static inline TW_AESNI __m128i dec1(const __m128i *k, unsigned nr, __m128i x)
{
	x = _mm_xor_si128(x, k[0]);
	for (unsigned r = 1; r < nr; r++)
		x = _mm_aesdec_si128(x, k[r]);
	return _mm_aesdeclast_si128(x, k[nr]);
}

/*
 * RFC 3394 §2.2.2 unwrapping of `ways` (1 or 2) keys of n semiblocks each
 * under one KEK, their chains interleaved: for j = 5..0, i = n..1,
 * B = AES-1(K, (A ^ t) | R[i]), t = n*j+i, A = MSB(64, B), R[i] = LSB(64,
 * B). A stays in a register; t is XORed big-endian into its octets.
 */
TW_AESNI void tw_aes_ni_kw_unwrap(const struct tw_aes_ctx *ctx, uint8_t *const *a,
				  uint8_t *const *r, size_t n, unsigned ways)
{
	const __m128i *k = (const __m128i *)ctx->rk.ni[1];
	unsigned nr = ctx->nr;
	__m128i b[2];

	if (ways > 2)
		ways = 2;
	for (unsigned w = 0; w < ways; w++)
		b[w] = _mm_loadl_epi64((const __m128i *)a[w]);
	for (uint64_t j = 6; j-- > 0;) {
		for (size_t i = n; i >= 1; i--) {
			const __m128i tv = _mm_set_epi64x(0, (long long)__builtin_bswap64(n * j + i));

			for (unsigned w = 0; w < ways; w++)
				b[w] = _mm_xor_si128(
					_mm_unpacklo_epi64(_mm_xor_si128(b[w], tv),
							   _mm_loadl_epi64((const __m128i *)(r[w] + 8 * (i - 1)))),
					k[0]);
			for (unsigned rd = 1; rd < nr; rd++)
				for (unsigned w = 0; w < ways; w++)
					b[w] = _mm_aesdec_si128(b[w], k[rd]);
			for (unsigned w = 0; w < ways; w++) {
				b[w] = _mm_aesdeclast_si128(b[w], k[nr]);
				_mm_storel_epi64((__m128i *)(r[w] + 8 * (i - 1)),
						 _mm_unpackhi_epi64(b[w], b[w]));
			}
		}
	}
	for (unsigned w = 0; w < ways; w++) {
		_mm_storel_epi64((__m128i *)a[w], b[w]);
		b[w] = _mm_setzero_si128(); /* the key's last semiblock was in it */
		__asm__ volatile("" : : "x"(b[w]));
	}
}

/* Eight independent blocks in flight hide the AESENC latency. (For fewer
 * blocks, consecutive enc1() calls already overlap out of order.) */
static inline TW_AESNI void enc8(const __m128i *k, unsigned nr, __m128i b[8])
{
	for (int j = 0; j < 8; j++)
		b[j] = _mm_xor_si128(b[j], k[0]);
	for (unsigned r = 1; r < nr; r++) {
		__m128i kr = k[r];

		for (int j = 0; j < 8; j++)
			b[j] = _mm_aesenc_si128(b[j], kr);
	}
	for (int j = 0; j < 8; j++)
		b[j] = _mm_aesenclast_si128(b[j], k[nr]);
}

static inline TW_AESNI void dec8(const __m128i *k, unsigned nr, __m128i b[8])
{
	for (int j = 0; j < 8; j++)
		b[j] = _mm_xor_si128(b[j], k[0]);
	for (unsigned r = 1; r < nr; r++) {
		__m128i kr = k[r];

		for (int j = 0; j < 8; j++)
			b[j] = _mm_aesdec_si128(b[j], kr);
	}
	for (int j = 0; j < 8; j++)
		b[j] = _mm_aesdeclast_si128(b[j], k[nr]);
}

TW_AESNI void tw_aes_ni_encrypt_blocks(const struct tw_aes_ctx *ctx,
				       uint8_t *out, const uint8_t *in,
				       size_t nblocks)
{
	const __m128i *k = (const __m128i *)ctx->rk.ni[0];
	unsigned nr = ctx->nr;
	__m128i b[8];

	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int j = 0; j < 8; j++)
			b[j] = _mm_loadu_si128((const __m128i *)(in + 16 * j));
		enc8(k, nr, b);
		for (int j = 0; j < 8; j++)
			_mm_storeu_si128((__m128i *)(out + 16 * j), b[j]);
	}
	for (; nblocks > 0; nblocks--, in += 16, out += 16)
		_mm_storeu_si128((__m128i *)out,
				 enc1(k, nr, _mm_loadu_si128((const __m128i *)in)));
}

TW_AESNI void tw_aes_ni_decrypt_blocks(const struct tw_aes_ctx *ctx,
				       uint8_t *out, const uint8_t *in,
				       size_t nblocks)
{
	__m128i tmp[TW_AES_MAX_ROUNDS + 1];
	const __m128i *k = (const __m128i *)ctx->rk.ni[1];
	unsigned nr = ctx->nr;
	__m128i b[8];

	if (!ctx->has_dec) {
		/* Context from tw_aes_init_enc(): derive §5.3.5 keys here. */
		const __m128i *ek = (const __m128i *)ctx->rk.ni[0];

		tmp[0] = ek[nr];
		for (unsigned i = 1; i < nr; i++)
			tmp[i] = _mm_aesimc_si128(ek[nr - i]);
		tmp[nr] = ek[0];
		k = tmp;
	}
	for (; nblocks >= 8; nblocks -= 8, in += 128, out += 128) {
		for (int j = 0; j < 8; j++)
			b[j] = _mm_loadu_si128((const __m128i *)(in + 16 * j));
		dec8(k, nr, b);
		for (int j = 0; j < 8; j++)
			_mm_storeu_si128((__m128i *)(out + 16 * j), b[j]);
	}
	for (; nblocks > 0; nblocks--, in += 16, out += 16)
		_mm_storeu_si128((__m128i *)out,
				 dec1(k, nr, _mm_loadu_si128((const __m128i *)in)));
	if (!ctx->has_dec)
		tw_wipe(tmp, sizeof(tmp));
}

/* ---- CTR (SP 800-38A §6.5) ---- */

/*
 * The counter block is one 128-bit big-endian integer (hi, lo); T_{j+1} =
 * T_j + 1 mod 2^128. The counter is not secret; the carry is still taken
 * without a branch.
 */
static inline TW_AESNI __m128i ctr_block(uint64_t hi, uint64_t lo)
{
	/* memory bytes 0..7 = hi big-endian, 8..15 = lo big-endian */
	return _mm_set_epi64x((long long)__builtin_bswap64(lo),
			      (long long)__builtin_bswap64(hi));
}

TW_AESNI void tw_aes_ni_ctr(const struct tw_aes_ctx *ctx, const uint8_t icb[16],
			    uint8_t *out, const uint8_t *in, size_t len)
{
	const __m128i *k = (const __m128i *)ctx->rk.ni[0];
	unsigned nr = ctx->nr;
	uint64_t hi = tw_load_be64(icb), lo = tw_load_be64(icb + 8);
	__m128i b[8];

	/* The counter as a little-endian 128-bit value (lo in the low lane);
	 * PSHUFB turns it into the big-endian block. */
	const __m128i bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					   11, 12, 13, 14, 15);

	for (; len >= 128; len -= 128, in += 128, out += 128) {
		if (lo <= UINT64_MAX - 8) {
			/* No carry out of the low 64 bits in these eight. */
			__m128i c = _mm_set_epi64x((long long)hi, (long long)lo);

			for (int j = 0; j < 8; j++)
				b[j] = _mm_shuffle_epi8(
					_mm_add_epi64(c, _mm_set_epi64x(0, j)), bswap);
			lo += 8;
		} else {
			for (int j = 0; j < 8; j++) {
				b[j] = ctr_block(hi, lo);
				lo++;
				hi += (uint64_t)(lo == 0);
			}
		}
		enc8(k, nr, b);
		for (int j = 0; j < 8; j++) {
			__m128i p = _mm_loadu_si128((const __m128i *)(in + 16 * j));

			_mm_storeu_si128((__m128i *)(out + 16 * j),
					 _mm_xor_si128(p, b[j]));
		}
	}
	for (; len >= 16; len -= 16, in += 16, out += 16) {
		__m128i ks = enc1(k, nr, ctr_block(hi, lo));
		__m128i p = _mm_loadu_si128((const __m128i *)in);

		lo++;
		hi += (uint64_t)(lo == 0);
		_mm_storeu_si128((__m128i *)out, _mm_xor_si128(p, ks));
	}
	if (len > 0) {
		/* SP 800-38A §6.5: the last partial block uses MSB_u(O_n). */
		uint8_t ks[16];

		_mm_storeu_si128((__m128i *)ks, enc1(k, nr, ctr_block(hi, lo)));
		tw_xor(out, in, ks, len);
		tw_wipe(ks, sizeof(ks));
	}
}

/* ---- VAES: four blocks per 512-bit register, sixteen in flight ---- */

#define TW_VAES \
	__attribute__((target("aes,sse4.1,avx2,vaes,avx512f,avx512vl,avx512bw")))

static inline TW_VAES void enc16(const __m128i *k, unsigned nr, __m512i b[4])
{
	__m512i kr = _mm512_broadcast_i32x4(k[0]);

	for (int j = 0; j < 4; j++)
		b[j] = _mm512_xor_si512(b[j], kr);
	for (unsigned r = 1; r < nr; r++) {
		kr = _mm512_broadcast_i32x4(k[r]);
		for (int j = 0; j < 4; j++)
			b[j] = _mm512_aesenc_epi128(b[j], kr);
	}
	kr = _mm512_broadcast_i32x4(k[nr]);
	for (int j = 0; j < 4; j++)
		b[j] = _mm512_aesenclast_epi128(b[j], kr);
}

TW_VAES void tw_aes_vaes_encrypt_blocks(const struct tw_aes_ctx *ctx,
					uint8_t *out, const uint8_t *in,
					size_t nblocks)
{
	const __m128i *k = (const __m128i *)ctx->rk.ni[0];
	__m512i b[4];

	for (; nblocks >= 16; nblocks -= 16, in += 256, out += 256) {
		for (int j = 0; j < 4; j++)
			b[j] = _mm512_loadu_si512((const void *)(in + 64 * j));
		enc16(k, ctx->nr, b);
		for (int j = 0; j < 4; j++)
			_mm512_storeu_si512((void *)(out + 64 * j), b[j]);
	}
	if (nblocks > 0)
		tw_aes_ni_encrypt_blocks(ctx, out, in, nblocks);
}

/* SP 800-38A §6.5 as tw_aes_ni_ctr(), 16 counter blocks per step while the
 * low 64 bits of the counter cannot carry; the rest goes to the AES-NI
 * code, which handles any carry. */
TW_VAES void tw_aes_vaes_ctr(const struct tw_aes_ctx *ctx,
			     const uint8_t icb[16], uint8_t *out,
			     const uint8_t *in, size_t len)
{
	const __m128i *k = (const __m128i *)ctx->rk.ni[0];
	const __m512i bswap = _mm512_broadcast_i32x4(_mm_set_epi8(
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	/* lane j (of 4) holds counter + j; each register is 4 further on */
	const __m512i lane = _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0);
	const __m512i four = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
	uint64_t hi = tw_load_be64(icb), lo = tw_load_be64(icb + 8);
	uint8_t next[16];
	__m512i b[4];

	for (; len >= 256 && lo <= UINT64_MAX - 16;
	     len -= 256, in += 256, out += 256) {
		__m512i c = _mm512_add_epi64(
			_mm512_set_epi64((long long)hi, (long long)lo,
					 (long long)hi, (long long)lo,
					 (long long)hi, (long long)lo,
					 (long long)hi, (long long)lo),
			lane);

		for (int j = 0; j < 4; j++) {
			b[j] = _mm512_shuffle_epi8(c, bswap);
			c = _mm512_add_epi64(c, four);
		}
		lo += 16;
		enc16(k, ctx->nr, b);
		for (int j = 0; j < 4; j++) {
			__m512i p = _mm512_loadu_si512((const void *)(in + 64 * j));

			_mm512_storeu_si512((void *)(out + 64 * j),
					    _mm512_xor_si512(p, b[j]));
		}
	}
	if (len > 0) {
		tw_store_be64(next, hi);
		tw_store_be64(next + 8, lo);
		tw_aes_ni_ctr(ctx, next, out, in, len);
	}
}

#endif /* __x86_64__ */
