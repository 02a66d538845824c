/*
 * twag — AES API: implementation choice, ECB over many blocks, and CTR
 * mode (FIPS 197, 2001; updated 2023; NIST SP 800-38A, 2001).
 *
 * The kernel is chosen once per context in tw_aes_init*() from
 * tw_cpu_has(): AES-NI (aes_ni.c) or the portable bitsliced one
 * (aes_ct.c). A context keeps using its kernel, so a context made under
 * one tw_cpu_restrict() setting stays valid under another only if the CPU
 * really has AES-NI — which it does, since restrict can only narrow.
 */
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cpu.h"

#define NI_FEATURES (TW_CPU_AESNI | TW_CPU_SSE41)

static int init(struct tw_aes_ctx *ctx, const uint8_t *key, size_t key_len,
		int with_dec, int allow192)
{
	if (ctx == NULL || key == NULL)
		return TW_ERR_INVAL;
	/* FIPS 197 §5: Nk = 4, 6 or 8; AES-192 only where asked for. */
	if (key_len != TW_AES_128_KEY_LEN && key_len != TW_AES_256_KEY_LEN &&
	    !(allow192 && key_len == TW_AES_192_KEY_LEN))
		return TW_ERR_LENGTH;
	memset(ctx, 0, sizeof(*ctx));
#if defined(__x86_64__)
	if (tw_cpu_has(NI_FEATURES)) {
		tw_aes_ni_init(ctx, key, key_len, with_dec);
		ctx->vaes = tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512) ? 1 : 0;
		return TW_OK;
	}
#endif
	(void)with_dec; /* the portable kernel shares one key schedule */
	tw_aes_ct64_init(ctx, key, key_len);
	return TW_OK;
}

int tw_aes_init(struct tw_aes_ctx *ctx, const uint8_t *key, size_t key_len)
{
	return init(ctx, key, key_len, 1, 0);
}

int tw_aes_init_enc(struct tw_aes_ctx *ctx, const uint8_t *key,
		    size_t key_len)
{
	return init(ctx, key, key_len, 0, 0);
}

int tw_aes_init_any(struct tw_aes_ctx *ctx, const uint8_t *key,
		    size_t key_len)
{
	return init(ctx, key, key_len, 1, 1);
}

void tw_aes_encrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			   const uint8_t *in, size_t nblocks)
{
#if defined(__x86_64__)
	if (ctx->impl == TW_AES_IMPL_AESNI) {
		if (ctx->vaes && nblocks >= 16)
			tw_aes_vaes_encrypt_blocks(ctx, out, in, nblocks);
		else
			tw_aes_ni_encrypt_blocks(ctx, out, in, nblocks);
		return;
	}
#endif
	for (; nblocks >= 4; nblocks -= 4, in += 64, out += 64)
		tw_aes_ct64_encrypt4(ctx, out, in, 4);
	if (nblocks > 0)
		tw_aes_ct64_encrypt4(ctx, out, in, nblocks);
}

void tw_aes_decrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			   const uint8_t *in, size_t nblocks)
{
#if defined(__x86_64__)
	if (ctx->impl == TW_AES_IMPL_AESNI) {
		tw_aes_ni_decrypt_blocks(ctx, out, in, nblocks);
		return;
	}
#endif
	for (; nblocks >= 4; nblocks -= 4, in += 64, out += 64)
		tw_aes_ct64_decrypt4(ctx, out, in, 4);
	if (nblocks > 0)
		tw_aes_ct64_decrypt4(ctx, out, in, nblocks);
}

void tw_aes_cbc_encrypt_many(const struct tw_aes_ctx *const *ctx,
			     const uint8_t *const *iv, uint8_t *const *buf,
			     const size_t *len, size_t n)
{
	size_t i = 0;

#if defined(__x86_64__)
	/* runs of up to eight AES-NI contexts with one round count */
	while (i < n && ctx[i]->impl == TW_AES_IMPL_AESNI) {
		unsigned m = 1;

		while (m < 8 && i + m < n && ctx[i + m]->impl == TW_AES_IMPL_AESNI &&
		       ctx[i + m]->nr == ctx[i]->nr)
			m++;
		tw_aes_ni_cbc_encrypt_many(ctx + i, iv + i, buf + i, len + i, m);
		i += m;
	}
#endif
	for (; i < n; i++) {
		const uint8_t *prev = iv[i];

		for (size_t off = 0; off + 16 <= len[i]; off += 16) {
			tw_xor(buf[i] + off, buf[i] + off, prev, 16);
			tw_aes_encrypt(ctx[i], buf[i] + off, buf[i] + off);
			prev = buf[i] + off;
		}
	}
}

void tw_aes_cbc_encrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[static 16],
			uint8_t *buf, size_t len)
{
	tw_aes_cbc_encrypt_many(&ctx, &iv, &buf, &len, 1);
}

void tw_aes_encrypt(const struct tw_aes_ctx *ctx, uint8_t out[static 16],
		    const uint8_t in[static 16])
{
	tw_aes_encrypt_blocks(ctx, out, in, 1);
}

void tw_aes_decrypt(const struct tw_aes_ctx *ctx, uint8_t out[static 16],
		    const uint8_t in[static 16])
{
	tw_aes_decrypt_blocks(ctx, out, in, 1);
}

/*
 * SP 800-38A §6.5: O_j = CIPH_K(T_j), C_j = P_j ^ O_j, the final partial
 * block C*_n = P*_n ^ MSB_u(O_n); T_j from the standard incrementing
 * function on the whole 128-bit block (Appendix B.1, m = 128).
 */
void tw_aes_ctr(const struct tw_aes_ctx *ctx, const uint8_t icb[static 16],
		uint8_t *out, const uint8_t *in, size_t len)
{
#if defined(__x86_64__)
	if (ctx->impl == TW_AES_IMPL_AESNI) {
		if (ctx->vaes && len >= 256)
			tw_aes_vaes_ctr(ctx, icb, out, in, len);
		else
			tw_aes_ni_ctr(ctx, icb, out, in, len);
		return;
	}
#endif
	uint64_t hi = tw_load_be64(icb), lo = tw_load_be64(icb + 8);
	uint8_t ctr[64], ks[64];

	while (len > 0) {
		size_t n = len < sizeof(ks) ? len : sizeof(ks);
		size_t nb = (n + 15) / 16;

		for (size_t j = 0; j < nb; j++) {
			tw_store_be64(ctr + 16 * j, hi);
			tw_store_be64(ctr + 16 * j + 8, lo);
			lo++;
			hi += (uint64_t)(lo == 0);
		}
		tw_aes_ct64_encrypt4(ctx, ks, ctr, nb);
		tw_xor(out, in, ks, n);
		in += n;
		out += n;
		len -= n;
	}
	tw_wipe(ks, sizeof(ks));
}

void tw_aes_wipe(struct tw_aes_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}

const char *tw_aes_impl_name(const struct tw_aes_ctx *ctx)
{
	if (ctx->impl != TW_AES_IMPL_AESNI)
		return "ct64";
	return ctx->vaes ? "vaes" : "aesni";
}
