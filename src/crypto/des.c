/*
 * twag — DES and Triple DES (FIPS 46-3, October 1999; NIST SP 800-67
 * Rev. 2, November 2017), ECB and CBC. Legacy transform for comparison
 * only (see twag/des.h for why and for the constant-time S-box lookup).
 *
 * Bit numbering follows FIPS 46-3: bit 1 is the most significant bit of a
 * block; the tables below are the standard's, 1-based.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/des.h"

#include "des_bs.h"
#include "des_tab.h"

/* Key schedule: "Permuted Choice 1" (64 -> 56) and "Permuted Choice 2"
 * (56 -> 48), and the left shifts per iteration. */
static const uint8_t pc1_tab[56] = {
	57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
	10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
	63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
	14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
};
static const uint8_t pc2_tab[48] = {
	14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10,
	23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
	41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48,
	44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
};
/* From this many blocks on, one bitsliced pass (64 lanes) beats the
 * one-block code block by block (measured with twag-bench). */
enum { BS_MIN_BLOCKS = 2 };

static const uint8_t shifts[16] = { 1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1 };

/*
 * S-boxes and P together, as bit planes (FIPS 46-3 "Primitive functions
 * S1, ..., S8" and "Primitive function P"): bit x of plane r of S_j is
 * output bit r+1 of S_j(x) (x = b1..b6, b1 the MSB), and P sends that bit
 * to f's bit sp_bit[j][r]. Each plane is stored rotated left by that
 * position, so rotating it right by x brings S_j(x)'s bit exactly there:
 * one rotation by a secret amount (constant time on x86-64 and ARMv8) and
 * one AND per output bit, the whole 64-bit word read each time.
 * Generated from the FIPS tables; the known answers and the OpenSSL
 * cross-check in tests/unit/test_des.c would catch any wrong bit.
 */
static const uint64_t sp_rot[8][4] = {
	{ 0xbd43733b0cc34ea4u, 0xc38da4bc135ed863u,
	  0xd3a924c13e3e524fu, 0x22f7d20cdf0368f1u },
	{ 0xcb734e1d32cf0cb0u, 0x8f93c169346c3e96u,
	  0x18a527f0dd1aa2ddu, 0xd6b4ae1945a3f348u },
	{ 0x692d696b9c90d396u, 0x863526f4794ad96au,
	  0xdae65830e70add25u, 0x8ea5955a692e3671u },
	{ 0xb0f9c67b64160fa4u, 0x9718c74ca0e97cb6u,
	  0xa3da4b339c6b3445u, 0x61a4cc7384dbbe0du },
	{ 0x6a79e1348e429dcdu, 0x72864599ae59a56eu,
	  0x859ce349782e95e3u, 0x496ed7291499b2dau },
	{ 0x5c9a4695bb44ab69u, 0x34c9c6b0af34d34eu,
	  0x278db242db4a597cu, 0x6d4b2f87946992b4u },
	{ 0x92c761f82c96d966u, 0x96699e643c3869cdu,
	  0x57d06a792e07d1aau, 0xf292f2d34c691d2cu },
	{ 0x21c638b5ce0bd5e9u, 0x29d2d62b2d54ad27u,
	  0xb14f91e27e194e2cu, 0x140e6b0ce3e15cfbu },
};
static const uint32_t sp_bit[8][4] = {
	{ 0x00800000u, 0x00008000u, 0x00000200u, 0x00000002u },
	{ 0x00080000u, 0x00000010u, 0x40000000u, 0x00004000u },
	{ 0x00000100u, 0x00010000u, 0x00000004u, 0x04000000u },
	{ 0x00000040u, 0x00001000u, 0x00400000u, 0x80000000u },
	{ 0x01000000u, 0x00040000u, 0x00000080u, 0x20000000u },
	{ 0x10000000u, 0x00000008u, 0x00200000u, 0x00002000u },
	{ 0x00000001u, 0x00100000u, 0x00000400u, 0x02000000u },
	{ 0x08000000u, 0x00000020u, 0x00020000u, 0x00000800u },
};

/* Output bit i (1-based, MSB first) = input bit tab[i] of an in_bits-wide
 * value. The positions are public; only shifts and masks touch data. */
static uint64_t permute(uint64_t in, const uint8_t *tab, unsigned n,
			unsigned in_bits)
{
	uint64_t out = 0;

	for (unsigned i = 0; i < n; i++)
		out = (out << 1) | ((in >> (in_bits - tab[i])) & 1);
	return out;
}

static inline uint64_t rotr64(uint64_t x, unsigned n)
{
	return (x >> (n & 63)) | (x << ((64 - n) & 63));
}

static inline uint32_t rotl32(uint32_t x, unsigned n)
{
	return n == 0 ? x : (x << n) | (x >> (32 - n));
}

/* f's share from S-box j: E's group j, bits 4j, 4j+1, .., 4j+5 of R
 * (1-based, wrapping from bit 32 to bit 1), is the top six bits of R
 * rotated left by 4j - 1; XORed with the key's group j it picks S_j's
 * four bits, each already where P puts it. Written out per box so the
 * compiler keeps all eight boxes' rotations in flight at once. */
#define SP_BOX(j)                                                              \
	do {                                                                   \
		unsigned b_ = (rotl32(r, (4 * (j) + 31) & 31) >> 26) ^ k[j];   \
		f |= ((uint32_t)rotr64(sp_rot[j][0], b_) & sp_bit[j][0]) |     \
		     ((uint32_t)rotr64(sp_rot[j][1], b_) & sp_bit[j][1]) |     \
		     ((uint32_t)rotr64(sp_rot[j][2], b_) & sp_bit[j][2]) |     \
		     ((uint32_t)rotr64(sp_rot[j][3], b_) & sp_bit[j][3]);      \
	} while (0)

/* The cipher function f(R, K) = P(S1(B1)..S8(B8)), B = E(R) ^ K. */
static inline uint32_t des_f(uint32_t r, const uint8_t k[8])
{
	uint32_t f = 0;

	SP_BOX(0);
	SP_BOX(1);
	SP_BOX(2);
	SP_BOX(3);
	SP_BOX(4);
	SP_BOX(5);
	SP_BOX(6);
	SP_BOX(7);
	return f;
}

/* 16 rounds L_i = R_{i-1}, R_i = L_{i-1} ^ f(R_{i-1}, K_i), then the
 * final swap (the preoutput is R16 L16). dec runs K16..K1. */
static void des_core(uint32_t *l, uint32_t *r, const uint8_t ks[16][8], int dec)
{
	uint32_t a = *l, b = *r;

	for (int i = 0; i < 16; i++) {
		uint32_t t = a ^ des_f(b, ks[dec ? 15 - i : i]);
		a = b;
		b = t;
	}
	*l = b;
	*r = a;
}

static void key_schedule(uint8_t ks[16][8], const uint8_t key[8])
{
	uint64_t cd = permute(tw_load_be64(key), pc1_tab, 56, 64);
	uint32_t c = (uint32_t)(cd >> 28) & 0x0fffffff;
	uint32_t d = (uint32_t)cd & 0x0fffffff;

	for (int i = 0; i < 16; i++) {
		unsigned s = shifts[i];

		c = ((c << s) | (c >> (28 - s))) & 0x0fffffff;
		d = ((d << s) | (d >> (28 - s))) & 0x0fffffff;
		uint64_t k = permute((uint64_t)c << 28 | d, pc2_tab, 48, 56);
		for (int j = 0; j < 8; j++)
			ks[i][j] = (uint8_t)((k >> (42 - 6 * j)) & 63);
		k = 0;
	}
	cd = 0;
	c = d = 0;
}

int tw_des3_init(struct tw_des3_ctx *ctx, const uint8_t *key, size_t key_len)
{
	if (ctx == NULL || key == NULL)
		return TW_ERR_INVAL;
	if (key_len != TW_DES3_KEY_LEN)
		return TW_ERR_LENGTH;
	for (int i = 0; i < 3; i++)
		key_schedule(ctx->ks[i], key + 8 * i);
	tw_des3_bs_keys(ctx);
	return TW_OK;
}

/* SP 800-67 §3.1. IP and IP^-1 of the inner DES stages cancel, so one IP
 * and one IP^-1 frame the three 16-round cores. */
static void des3_block(const struct tw_des3_ctx *ctx, uint8_t out[8],
		       const uint8_t in[8], int dec)
{
	uint64_t x = permute(tw_load_be64(in), ip_tab, 64, 64);
	uint32_t l = (uint32_t)(x >> 32), r = (uint32_t)x;

	if (!dec) {
		des_core(&l, &r, ctx->ks[0], 0);
		des_core(&l, &r, ctx->ks[1], 1);
		des_core(&l, &r, ctx->ks[2], 0);
	} else {
		des_core(&l, &r, ctx->ks[2], 1);
		des_core(&l, &r, ctx->ks[1], 0);
		des_core(&l, &r, ctx->ks[0], 1);
	}
	tw_store_be64(out, permute((uint64_t)l << 32 | r, fp_tab, 64, 64));
}

void tw_des3_encrypt(const struct tw_des3_ctx *ctx, uint8_t out[static 8],
		     const uint8_t in[static 8])
{
	des3_block(ctx, out, in, 0);
}

void tw_des3_decrypt(const struct tw_des3_ctx *ctx, uint8_t out[static 8],
		     const uint8_t in[static 8])
{
	des3_block(ctx, out, in, 1);
}

/* SP 800-38A §6.2: C_j = CIPH_K(P_j ^ C_{j-1}), C_0 = IV. */
int tw_des3_cbc_encrypt(const struct tw_des3_ctx *ctx, uint8_t iv[static 8],
			uint8_t *out, const uint8_t *in, size_t len)
{
	if (len % 8 != 0)
		return TW_ERR_LENGTH;
	for (size_t i = 0; i < len; i += 8) {
		uint8_t blk[8];

		tw_xor(blk, in + i, iv, 8);
		des3_block(ctx, out + i, blk, 0);
		memcpy(iv, out + i, 8);
	}
	return TW_OK;
}

/* P_j = CIPH^-1_K(C_j) ^ C_{j-1}; C_j is saved before out overwrites it. */
int tw_des3_cbc_decrypt(const struct tw_des3_ctx *ctx, uint8_t iv[static 8],
			uint8_t *out, const uint8_t *in, size_t len)
{
	if (len % 8 != 0)
		return TW_ERR_LENGTH;
	/* Every block is independent: many per bitsliced pass. */
	if (len >= 8 * BS_MIN_BLOCKS) {
		tw_des3_bs_cbc_decrypt(ctx, iv, out, in, len / 8);
		return TW_OK;
	}
	for (size_t i = 0; i < len; i += 8) {
		uint8_t c[8], p[8];

		memcpy(c, in + i, 8);
		des3_block(ctx, p, c, 1);
		tw_xor(out + i, p, iv, 8);
		memcpy(iv, c, 8);
		tw_wipe(p, sizeof(p));
	}
	return TW_OK;
}

void tw_des3_wipe(struct tw_des3_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}
