/*
 * twag — MD5 (RFC 1321, April 1992) and HMAC-MD5 (RFC 2104) with
 * precomputed inner/outer states. Legacy: used only by AH HMAC-MD5-96
 * (RFC 2403) for comparison. MD5 has no secret-dependent branches or
 * table lookups: it is additions, rotations and boolean functions.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/md5.h"
#include "md5_tab.h"

static const uint32_t md5_iv[4] = {
	0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
};

/* RFC 1321 §3.4: T[i] = floor(4294967296 * abs(sin(i))), i = 1..64. */
const uint32_t tw_md5_tab[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
	0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
	0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
	0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
	0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* RFC 1321 §3.4: the per-round shift amounts s. */
static const uint8_t md5_s[4][4] = {
	{ 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 }, { 6, 10, 15, 21 },
};

static inline uint32_t rotl(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

/* RFC 1321 §3.4 on n consecutive 64-octet blocks. */
static void md5_blocks(uint32_t h[4], const uint8_t *p, size_t n)
{
	uint32_t x[16];

	while (n--) {
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3];

		/* The block as 16 little-endian words X[0..15] (§2). */
		for (int i = 0; i < 16; i++)
			x[i] = tw_load_le32(p + 4 * i);
		/* §3.4 rounds 1-4: a = b + ((a + g(b,c,d) + X[k] + T[i]) <<< s),
		 * then (a, b, c, d) = (d, a', b, c); with F(X,Y,Z) = XY v not(X)Z,
		 * G = XZ v Y not(Z), H = X xor Y xor Z, I = Y xor (X v not(Z)), and
		 * the word order k = i, (1+5i), (5+3i), (7i) mod 16. One loop per
		 * round so each is a straight line after unrolling. */
#define MD5_STEP(fn, k)                                                        \
	do {                                                                   \
		uint32_t t_ = b + rotl(a + (fn) + x[(k)] + tw_md5_tab[i],           \
				       md5_s[i >> 4][i & 3]);                  \
		a = d;                                                         \
		d = c;                                                         \
		c = b;                                                         \
		b = t_;                                                        \
	} while (0)
#pragma GCC unroll 16
		for (int i = 0; i < 16; i++)
			MD5_STEP(d ^ (b & (c ^ d)), i);
#pragma GCC unroll 16
		for (int i = 16; i < 32; i++)
			MD5_STEP(c ^ (d & (b ^ c)), (1 + 5 * i) & 15);
#pragma GCC unroll 16
		for (int i = 32; i < 48; i++)
			MD5_STEP(b ^ c ^ d, (5 + 3 * i) & 15);
#pragma GCC unroll 16
		for (int i = 48; i < 64; i++)
			MD5_STEP(c ^ (b | ~d), (7 * i) & 15);
#undef MD5_STEP
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		p += 64;
	}
	tw_wipe(x, sizeof(x));
}

void tw_md5_init(struct tw_md5_ctx *ctx)
{
	memcpy(ctx->h, md5_iv, sizeof(ctx->h));
	ctx->len = 0;
}

void tw_md5_update(struct tw_md5_ctx *ctx, const void *msg, size_t len)
{
	const uint8_t *p = msg;
	size_t used = (size_t)(ctx->len % 64);

	if (len == 0)
		return; /* msg may be NULL */
	ctx->len += len;
	if (used != 0) {
		size_t take = 64 - used < len ? 64 - used : len;

		memcpy(ctx->buf + used, p, take);
		p += take;
		len -= take;
		if (used + take < 64)
			return;
		md5_blocks(ctx->h, ctx->buf, 1);
	}
	if (len >= 64) {
		md5_blocks(ctx->h, p, len / 64);
		p += len & ~(size_t)63;
		len &= 63;
	}
	if (len != 0)
		memcpy(ctx->buf, p, len);
}

void tw_md5_final(struct tw_md5_ctx *ctx, uint8_t out[static 16])
{
	size_t used = (size_t)(ctx->len % 64);
	uint64_t bits = ctx->len * 8;

	/* §3.1: a single 1 bit, zeros to 448 mod 512; §3.2: the 64-bit
	 * length, low-order word first. */
	ctx->buf[used++] = 0x80;
	if (used > 56) {
		memset(ctx->buf + used, 0, 64 - used);
		md5_blocks(ctx->h, ctx->buf, 1);
		used = 0;
	}
	memset(ctx->buf + used, 0, 56 - used);
	tw_store_le64(ctx->buf + 56, bits);
	md5_blocks(ctx->h, ctx->buf, 1);
	/* §3.5: A, B, C, D, each low-order byte first. */
	for (int i = 0; i < 4; i++)
		tw_store_le32(out + 4 * i, ctx->h[i]);
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_md5(uint8_t out[static 16], const void *msg, size_t len)
{
	struct tw_md5_ctx ctx;

	tw_md5_init(&ctx);
	tw_md5_update(&ctx, msg, len);
	tw_md5_final(&ctx, out);
}

/* RFC 2104 §2 steps (1)-(2) with B = 64, ipad 0x36, opad 0x5c. */
void tw_hmac_md5_init(struct tw_hmac_md5_ctx *ctx, const uint8_t *key,
		      size_t key_len)
{
	uint8_t k0[64], blk[64];

	memset(k0, 0, sizeof(k0));
	if (key_len > 64)
		tw_md5(k0, key, key_len);
	else if (key_len != 0)
		memcpy(k0, key, key_len);
	memcpy(ctx->istate, md5_iv, sizeof(ctx->istate));
	memcpy(ctx->ostate, md5_iv, sizeof(ctx->ostate));
	for (int i = 0; i < 64; i++)
		blk[i] = k0[i] ^ 0x36;
	md5_blocks(ctx->istate, blk, 1);
	for (int i = 0; i < 64; i++)
		blk[i] = k0[i] ^ 0x5c;
	md5_blocks(ctx->ostate, blk, 1);
	tw_hmac_md5_reset(ctx);
	tw_wipe(k0, sizeof(k0));
	tw_wipe(blk, sizeof(blk));
}

void tw_hmac_md5_reset(struct tw_hmac_md5_ctx *ctx)
{
	memcpy(ctx->inner.h, ctx->istate, sizeof(ctx->inner.h));
	ctx->inner.len = 64;
}

void tw_hmac_md5_update(struct tw_hmac_md5_ctx *ctx, const void *msg,
			size_t len)
{
	tw_md5_update(&ctx->inner, msg, len);
}

void tw_hmac_md5_final(struct tw_hmac_md5_ctx *ctx, uint8_t out[static 16])
{
	uint8_t blk[64];
	uint32_t h[4];

	/* Steps (3)-(4): inner = H((K0 ^ ipad) | text). */
	tw_md5_final(&ctx->inner, blk);
	/* Steps (5)-(7): the outer hash is one block: 16 octets of inner
	 * hash, 0x80, zeros, bit length (64 + 16) * 8 little-endian. */
	blk[16] = 0x80;
	memset(blk + 17, 0, 56 - 17);
	tw_store_le64(blk + 56, (64 + 16) * 8);
	memcpy(h, ctx->ostate, sizeof(h));
	md5_blocks(h, blk, 1);
	for (int i = 0; i < 4; i++)
		tw_store_le32(out + 4 * i, h[i]);
	tw_wipe(blk, sizeof(blk));
	tw_wipe(h, sizeof(h));
	tw_hmac_md5_reset(ctx);
}

void tw_hmac_md5_wipe(struct tw_hmac_md5_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_hmac_md5(uint8_t out[static 16], const uint8_t *key, size_t key_len,
		 const uint8_t *msg, size_t len)
{
	struct tw_hmac_md5_ctx ctx;

	tw_hmac_md5_init(&ctx, key, key_len);
	tw_hmac_md5_update(&ctx, msg, len);
	tw_hmac_md5_final(&ctx, out);
	tw_hmac_md5_wipe(&ctx);
}

void tw_md5_compress(uint32_t h[4], const uint8_t *p, size_t n)
{
	md5_blocks(h, p, n);
}
