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

/* "Primitive function P". */
static const uint8_t p_tab[32] = {
	16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
	2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25,
};
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

/* One S-box row: entry c (column 0..15) in nibble c of a 64-bit word. */
#define ROW(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)                  \
	((uint64_t)(a) | (uint64_t)(b) << 4 | (uint64_t)(c) << 8 |            \
	 (uint64_t)(d) << 12 | (uint64_t)(e) << 16 | (uint64_t)(f) << 20 |    \
	 (uint64_t)(g) << 24 | (uint64_t)(h) << 28 | (uint64_t)(i) << 32 |    \
	 (uint64_t)(j) << 36 | (uint64_t)(k) << 40 | (uint64_t)(l) << 44 |    \
	 (uint64_t)(m) << 48 | (uint64_t)(n) << 52 | (uint64_t)(o) << 56 |    \
	 (uint64_t)(p) << 60)

/* FIPS 46-3 "Primitive functions S1, ..., S8", row by row. */
static const uint64_t sbox[8][4] = {
	{ ROW(14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7),
	  ROW(0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8),
	  ROW(4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0),
	  ROW(15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13) },
	{ ROW(15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10),
	  ROW(3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5),
	  ROW(0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15),
	  ROW(13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9) },
	{ ROW(10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8),
	  ROW(13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1),
	  ROW(13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7),
	  ROW(1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12) },
	{ ROW(7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15),
	  ROW(13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9),
	  ROW(10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4),
	  ROW(3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14) },
	{ ROW(2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9),
	  ROW(14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6),
	  ROW(4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14),
	  ROW(11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3) },
	{ ROW(12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11),
	  ROW(10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8),
	  ROW(9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6),
	  ROW(4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13) },
	{ ROW(4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1),
	  ROW(13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6),
	  ROW(1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2),
	  ROW(6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12) },
	{ ROW(13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7),
	  ROW(1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2),
	  ROW(7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8),
	  ROW(2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11) },
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

/*
 * S_j(b) for a secret 6-bit b: row = b1 b6, column = b2..b5 (FIPS 46-3).
 * All four rows are read; the mask keeps one; the nibble is shifted out.
 */
static uint32_t sbox_ct(unsigned j, uint32_t b)
{
	uint32_t row = ((b >> 4) & 2) | (b & 1);
	uint32_t col = (b >> 1) & 15;
	uint64_t v = 0;

	for (uint32_t r = 0; r < 4; r++) {
		/* all-ones iff row == r, without a comparison branch */
		uint64_t m = -(((uint64_t)(row ^ r) - 1) >> 63);
		v |= sbox[j][r] & m;
	}
	return (uint32_t)(v >> (col << 2)) & 15;
}

static inline uint32_t rotl32(uint32_t x, unsigned n)
{
	return n == 0 ? x : (x << n) | (x >> (32 - n));
}

/* The cipher function f(R, K) = P(S1(B1)..S8(B8)), B = E(R) ^ K. */
static uint32_t des_f(uint32_t r, const uint8_t k[8])
{
	uint32_t s = 0;

	for (unsigned j = 0; j < 8; j++) {
		/* E: group j is bits 4j, 4j+1, .., 4j+5 of R (1-based,
		 * wrapping from bit 32 to bit 1): the top six bits of R
		 * rotated left by 4j - 1. */
		uint32_t b = (rotl32(r, (4 * j + 31) & 31) >> 26) ^ k[j];
		s |= sbox_ct(j, b) << (28 - 4 * j);
	}
	return (uint32_t)permute(s, p_tab, 32, 32);
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
