/*
 * twag — AES-CMAC, RFC 4493 (June 2006) / NIST SP 800-38B (May 2005,
 * updated October 2016), on the dispatching tw_aes block cipher.
 */
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cmac.h"

/*
 * RFC 4493 §2.3: out = in << 1, then out[15] ^= Rb (0x87) iff MSB(in) = 1.
 * The condition is turned into a mask so the subkey, which is secret, never
 * decides a branch or an index.
 */
static void dbl(uint8_t out[16], const uint8_t in[16])
{
	uint8_t rb = (uint8_t)(0x87 & (0u - (unsigned)(in[0] >> 7)));

	for (int i = 0; i < 15; i++)
		out[i] = (uint8_t)(in[i] << 1 | in[i + 1] >> 7);
	out[15] = (uint8_t)(in[15] << 1) ^ rb;
}

int tw_cmac_init(struct tw_cmac_ctx *ctx, const uint8_t *key, size_t key_len)
{
	uint8_t l[16] = { 0 };
	int err;

	if (ctx == NULL || key == NULL)
		return TW_ERR_INVAL;
	memset(ctx, 0, sizeof(*ctx));
	/* SP 800-38B §6: any approved block cipher key; AES-192 only needs
	 * the general expansion (it is rare, so its decryption keys are
	 * expanded too and simply unused). */
	if (key_len == 24)
		err = tw_aes_init_any(&ctx->aes, key, key_len);
	else if (key_len == 16 || key_len == 32)
		err = tw_aes_init_enc(&ctx->aes, key, key_len);
	else
		err = TW_ERR_LENGTH;
	if (err != TW_OK)
		goto out;
	/* §2.3 steps 1-3: L = AES-K(const_Zero); K1 = dbl(L); K2 = dbl(K1) */
	tw_aes_encrypt(&ctx->aes, l, l);
	dbl(ctx->k1, l);
	dbl(ctx->k2, ctx->k1);
	err = TW_OK;
out:
	if (err != TW_OK)
		tw_wipe(ctx, sizeof(*ctx));
	tw_wipe(l, sizeof(l));
	return err;
}

void tw_cmac_update(struct tw_cmac_ctx *ctx, const void *msg, size_t len)
{
	const uint8_t *p = msg;

	if (len == 0)
		return;
	/* Fill the pending block; it is only MACed once more input shows it
	 * is not M_n (§2.4 step 6 treats the last block apart). */
	if (ctx->nbuf < 16) {
		size_t take = 16 - ctx->nbuf;

		if (take > len)
			take = len;
		memcpy(ctx->buf + ctx->nbuf, p, take);
		ctx->nbuf += (uint32_t)take;
		p += take;
		len -= take;
		if (len == 0)
			return;
	}
	/* §2.4 step 6: X = AES-K(X ^ M_i) for every block before M_n */
	tw_xor(ctx->x, ctx->x, ctx->buf, 16);
	tw_aes_encrypt(&ctx->aes, ctx->x, ctx->x);
	while (len > 16) {
		tw_xor(ctx->x, ctx->x, p, 16);
		tw_aes_encrypt(&ctx->aes, ctx->x, ctx->x);
		p += 16;
		len -= 16;
	}
	memcpy(ctx->buf, p, len);
	ctx->nbuf = (uint32_t)len;
}

void tw_cmac_final(struct tw_cmac_ctx *ctx, uint8_t tag[static 16])
{
	uint8_t last[16];

	/* §2.4 step 4: M_last = M_n ^ K1 when M_n is a complete block,
	 * else padding(M_n) ^ K2 with padding(x) = x || 10^i (an empty
	 * message is one incomplete block, step 3). */
	if (ctx->nbuf == 16) {
		tw_xor(last, ctx->buf, ctx->k1, 16);
	} else {
		memset(last, 0, sizeof(last));
		memcpy(last, ctx->buf, ctx->nbuf);
		last[ctx->nbuf] = 0x80;
		tw_xor(last, last, ctx->k2, 16);
	}
	/* step 7: Y = X ^ M_last; T = AES-K(Y) */
	tw_xor(last, last, ctx->x, 16);
	tw_aes_encrypt(&ctx->aes, tag, last);
	tw_wipe(last, sizeof(last));
	tw_cmac_reset(ctx);
}

void tw_cmac_reset(struct tw_cmac_ctx *ctx)
{
	tw_wipe(ctx->x, sizeof(ctx->x));
	tw_wipe(ctx->buf, sizeof(ctx->buf));
	ctx->nbuf = 0;
}

void tw_cmac_wipe(struct tw_cmac_ctx *ctx)
{
	tw_aes_wipe(&ctx->aes);
	tw_wipe(ctx, sizeof(*ctx));
}

int tw_cmac(uint8_t tag[static 16], const uint8_t *key, size_t key_len,
	    const uint8_t *msg, size_t len)
{
	struct tw_cmac_ctx ctx;
	int err;

	if (msg == NULL && len != 0) {
		memset(tag, 0, TW_CMAC_LEN);
		return TW_ERR_INVAL;
	}
	err = tw_cmac_init(&ctx, key, key_len);
	if (err != TW_OK) {
		memset(tag, 0, TW_CMAC_LEN);
		goto out;
	}
	tw_cmac_update(&ctx, msg, len);
	tw_cmac_final(&ctx, tag);
out:
	tw_cmac_wipe(&ctx);
	return err;
}

int tw_cmac_verify(struct tw_cmac_ctx *ctx, const uint8_t *tag, size_t tag_len,
		   const uint8_t *msg, size_t len)
{
	uint8_t t[16];
	int err;

	if (ctx == NULL || tag == NULL || (msg == NULL && len != 0))
		return TW_ERR_INVAL;
	if (tag_len < TW_CMAC_MIN_LEN || tag_len > TW_CMAC_LEN) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	/* §2.5: T' = AES-CMAC(K, M, len); valid iff T' = T, compared in
	 * constant time. */
	tw_cmac_reset(ctx);
	tw_cmac_update(ctx, msg, len);
	tw_cmac_final(ctx, t);
	err = tw_ct_eq(t, tag, tag_len) ? TW_OK : TW_ERR_AUTH;
out:
	tw_wipe(t, sizeof(t));
	return err;
}
