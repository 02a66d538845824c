/*
 * twag — HMAC (RFC 2104, February 1997) over SHA-1 and SHA-256 with
 * precomputed inner/outer states.
 */
#include <string.h>

#include "sha_internal.h"
#include "twag/bytes.h"
#include "twag/hmac.h"

/*
 * RFC 2104 §2 steps (1)-(2): K0 = K padded with zeros to B = 64 octets (or
 * H(K) padded, if K is longer than B); the keyed states are the chaining
 * values after compressing K0 ^ ipad and K0 ^ opad (ipad 0x36, opad 0x5c).
 */
static void key_block(uint8_t k0[64], const uint8_t *key, size_t key_len,
		      int sha256)
{
	memset(k0, 0, 64);
	if (key_len > 64) {
		if (sha256)
			tw_sha256(k0, key, key_len);
		else
			tw_sha1(k0, key, key_len);
	} else if (key_len != 0) {
		memcpy(k0, key, key_len);
	}
}

static void xor_pad(uint8_t blk[64], const uint8_t k0[64], uint8_t pad)
{
	for (int i = 0; i < 64; i++)
		blk[i] = k0[i] ^ pad;
}

void tw_hmac_sha256_init(struct tw_hmac_sha256_ctx *ctx, const uint8_t *key,
			 size_t key_len)
{
	uint8_t k0[64], blk[64];

	key_block(k0, key, key_len, 1);
	memcpy(ctx->istate, tw_sha256_iv, sizeof(ctx->istate));
	memcpy(ctx->ostate, tw_sha256_iv, sizeof(ctx->ostate));
	xor_pad(blk, k0, 0x36);
	tw_sha256_blocks(ctx->istate, blk, 1);
	xor_pad(blk, k0, 0x5c);
	tw_sha256_blocks(ctx->ostate, blk, 1);
	tw_hmac_sha256_reset(ctx);
	tw_wipe(k0, sizeof(k0));
	tw_wipe(blk, sizeof(blk));
}

void tw_hmac_sha256_reset(struct tw_hmac_sha256_ctx *ctx)
{
	memcpy(ctx->inner.h, ctx->istate, sizeof(ctx->inner.h));
	ctx->inner.len = 64;
}

void tw_hmac_sha256_update(struct tw_hmac_sha256_ctx *ctx, const void *msg,
			   size_t len)
{
	tw_sha256_update(&ctx->inner, msg, len);
}

void tw_hmac_sha256_final(struct tw_hmac_sha256_ctx *ctx, uint8_t out[static 32])
{
	struct tw_sha256_ctx *in = &ctx->inner;
	uint8_t blk[64];
	uint32_t h[8];

	/* the usual short tail: pad it in place and finish inner and outer
	 * hash in one pass */
	size_t used = (size_t)(in->len & 63);
	if (used < 56) {
		in->buf[used] = 0x80;
		memset(in->buf + used + 1, 0, 55 - used);
		tw_store_be64(in->buf + 56, in->len << 3);
		tw_sha256_hmac_blocks(in->h, ctx->ostate, in->buf, 1, out);
		tw_wipe(in->buf, sizeof(in->buf));
		tw_hmac_sha256_reset(ctx);
		return;
	}
	/* RFC 2104 §2 steps (3)-(4): inner = H((K0 ^ ipad) | text) */
	tw_md_pad(in->h, in->buf, in->len, tw_sha256_blocks);
	for (int i = 0; i < 8; i++)
		tw_store_be32(blk + 4 * i, in->h[i]);
	/* Steps (5)-(7): H((K0 ^ opad) | inner) is exactly one more block:
	 * 32 octets of inner hash, 0x80, zeros, bit length (64 + 32) * 8. */
	blk[32] = 0x80;
	memset(blk + 33, 0, 64 - 33 - 8);
	tw_store_be64(blk + 56, (64 + 32) * 8);
	memcpy(h, ctx->ostate, sizeof(h));
	tw_sha256_blocks(h, blk, 1);
	for (int i = 0; i < 8; i++)
		tw_store_be32(out + 4 * i, h[i]);
	/* the buffered tail may be secret (PRF' feeds Tn-1 through it) */
	tw_wipe(in->buf, sizeof(in->buf));
	tw_hmac_sha256_reset(ctx);
	tw_wipe(blk, sizeof(blk));
	tw_wipe(h, sizeof(h));
}

/*
 * RFC 2104 §2 on a message the caller has already padded (FIPS 180-4
 * §5.1.1, bit length counted from the key block: (64 + len) * 8): the
 * inner hash is nblocks compressions from istate, the outer one block
 * from ostate. No buffering, no copies of the message: the KDFs build
 * their padded S once and change only the octets that vary.
 */
void tw_hmac_sha256_padded(const struct tw_hmac_sha256_ctx *ctx,
			   const uint8_t *blocks, size_t nblocks,
			   uint8_t out[static 32])
{
	tw_sha256_hmac_blocks(ctx->istate, ctx->ostate, blocks, nblocks, out);
}

size_t tw_sha256_pad_after_key(uint8_t *buf, size_t len, size_t max)
{
	/* FIPS 180-4 §5.1.1: 0x80, zeros to 56 mod 64, 64-bit bit length
	 * of the whole message (the 64-octet key block included) */
	size_t nblocks = (len + 1 + 8 + 63) / 64;

	if (nblocks * 64 > max)
		return 0;
	buf[len] = 0x80;
	memset(buf + len + 1, 0, nblocks * 64 - len - 1 - 8);
	tw_store_be64(buf + nblocks * 64 - 8, (uint64_t)(64 + len) * 8);
	return nblocks;
}

void tw_hmac_sha256_wipe(struct tw_hmac_sha256_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_hmac_sha256(uint8_t out[static 32], const uint8_t *key, size_t key_len,
		    const uint8_t *msg, size_t len)
{
	struct tw_hmac_sha256_ctx ctx;

	tw_hmac_sha256_init(&ctx, key, key_len);
	tw_hmac_sha256_update(&ctx, msg, len);
	tw_hmac_sha256_final(&ctx, out);
	tw_hmac_sha256_wipe(&ctx);
}

void tw_hmac_sha1_init(struct tw_hmac_sha1_ctx *ctx, const uint8_t *key,
		       size_t key_len)
{
	uint8_t k0[64], blk[64];

	key_block(k0, key, key_len, 0);
	memcpy(ctx->istate, tw_sha1_iv, sizeof(ctx->istate));
	memcpy(ctx->ostate, tw_sha1_iv, sizeof(ctx->ostate));
	xor_pad(blk, k0, 0x36);
	tw_sha1_blocks(ctx->istate, blk, 1);
	xor_pad(blk, k0, 0x5c);
	tw_sha1_blocks(ctx->ostate, blk, 1);
	tw_hmac_sha1_reset(ctx);
	tw_wipe(k0, sizeof(k0));
	tw_wipe(blk, sizeof(blk));
}

void tw_hmac_sha1_reset(struct tw_hmac_sha1_ctx *ctx)
{
	memcpy(ctx->inner.h, ctx->istate, sizeof(ctx->inner.h));
	ctx->inner.len = 64;
}

void tw_hmac_sha1_update(struct tw_hmac_sha1_ctx *ctx, const void *msg,
			 size_t len)
{
	tw_sha1_update(&ctx->inner, msg, len);
}

void tw_hmac_sha1_final(struct tw_hmac_sha1_ctx *ctx, uint8_t out[static 20])
{
	uint8_t blk[64];
	uint32_t h[5];

	tw_sha1_final(&ctx->inner, blk);
	/* One outer block: 20 octets of inner hash, 0x80, zeros, length. */
	blk[20] = 0x80;
	memset(blk + 21, 0, 64 - 21 - 8);
	tw_store_be64(blk + 56, (64 + 20) * 8);
	memcpy(h, ctx->ostate, sizeof(h));
	tw_sha1_blocks(h, blk, 1);
	for (int i = 0; i < 5; i++)
		tw_store_be32(out + 4 * i, h[i]);
	tw_hmac_sha1_reset(ctx);
	tw_wipe(blk, sizeof(blk));
	tw_wipe(h, sizeof(h));
}

void tw_hmac_sha1_wipe(struct tw_hmac_sha1_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_hmac_sha1(uint8_t out[static 20], const uint8_t *key, size_t key_len,
		  const uint8_t *msg, size_t len)
{
	struct tw_hmac_sha1_ctx ctx;

	tw_hmac_sha1_init(&ctx, key, key_len);
	tw_hmac_sha1_update(&ctx, msg, len);
	tw_hmac_sha1_final(&ctx, out);
	tw_hmac_sha1_wipe(&ctx);
}
