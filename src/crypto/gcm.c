/*
 * twag — AES-GCM (NIST SP 800-38D, November 2007): argument checks, tag
 * comparison, kernel selection, and the portable constant-time kernel.
 *
 * GF(2^128) representation shared by every kernel (SP 800-38D §6.3 numbers
 * block bits left to right, bit 0 being the coefficient of x^0): a block is
 * read as a 128-bit integer with its first byte most significant (two
 * big-endian 64-bit words here; one byte-reversed xmm register in the
 * x86 kernels), so integer bit 127 is the coefficient of x^0 and bit i
 * that of x^(127-i). In this "reflected" form the 255-bit carry-less
 * product of a and b, read as a 256-bit integer whose bit k is the
 * coefficient of x^(255-k), is a*b*x; so the context keeps H*x^-1 (and its
 * powers), and X * (H x^-1) * x = X*H needs no per-block shift.
 * The 256-bit product is then folded twice, 64 bits at a time, with
 * x^128 = x^7 + x^2 + x + 1 (mod P):
 *   W0 (x^255..x^192) adds W0*(1 + x(x^6 + x + 1)) at x^64 (W1, W2);
 *   W1 (x^191..x^128) adds W1*(1 + x(x^6 + x + 1)) at x^0  (W2, W3);
 * the constant 0xc2 << 56 is x^6 + x + 1 in the 64-bit reflected form
 * shifted by one place, so the fold needs no extra shift.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/gcm.h"

/* SP 800-38D §5.2.1.1: len(P) <= 2^39 - 256 bits; len(A) <= 2^64 - 1 bits. */
#define GCM_MAX_LEN ((UINT64_C(1) << 36) - 32)
#define GCM_MAX_AAD_LEN ((UINT64_C(1) << 61) - 1)

/* ---- constant-time carry-less multiply ---- */

/*
 * Low 64 bits of the carry-less product x*y with ordinary multiplies: the
 * operands are split into four sets of bits spaced four apart, so each
 * integer product's column sums at most 15 one-bits below bit 64 and
 * carries never reach the next bit of the same set; the masks then keep
 * each set's parity bits. Time does not depend on x or y (the compiler
 * emits MUL, constant time on the targets we build for).
 */
static inline uint64_t bmul64(uint64_t x, uint64_t y)
{
	const uint64_t m0 = UINT64_C(0x1111111111111111);
	const uint64_t m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3;
	uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
	uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
	uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
	uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
	uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
	uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);

	return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

static inline uint64_t rev64(uint64_t x)
{
	x = ((x >> 1) & UINT64_C(0x5555555555555555)) | ((x & UINT64_C(0x5555555555555555)) << 1);
	x = ((x >> 2) & UINT64_C(0x3333333333333333)) | ((x & UINT64_C(0x3333333333333333)) << 2);
	x = ((x >> 4) & UINT64_C(0x0f0f0f0f0f0f0f0f)) | ((x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4);
	x = ((x >> 8) & UINT64_C(0x00ff00ff00ff00ff)) | ((x & UINT64_C(0x00ff00ff00ff00ff)) << 8);
	x = ((x >> 16) & UINT64_C(0x0000ffff0000ffff)) | ((x & UINT64_C(0x0000ffff0000ffff)) << 16);
	return (x >> 32) | (x << 32);
}

/*
 * A multiplier b = (b1:b0) with what the products need precomputed: the
 * Karatsuba middle operand b1 ^ b0 and the bit reversals of all three.
 */
struct gf_pre {
	uint64_t b[3], rb[3]; /* b1, b0, b1 ^ b0 and their rev64 */
};

static void gf_pre_init(struct gf_pre *p, uint64_t b1, uint64_t b0)
{
	p->b[0] = b1;
	p->b[1] = b0;
	p->b[2] = b1 ^ b0;
	for (int i = 0; i < 3; i++)
		p->rb[i] = rev64(p->b[i]);
}

/* Full 128-bit carry-less product x * y: the high half is the low half of
 * the product of the bit-reversed operands, reversed, shifted by one. */
static inline void clmul64(uint64_t x, uint64_t y, uint64_t ry, uint64_t *hi,
			   uint64_t *lo)
{
	*lo = bmul64(x, y);
	*hi = rev64(bmul64(rev64(x), ry)) >> 1;
}

/*
 * (y1:y0) = (a1:a0) * (b1:b0) * x in GF(2^128), reflected form (see the
 * file header): one Karatsuba 128x128 carry-less product, two folds.
 */
static void gf_mul(uint64_t *y1, uint64_t *y0, uint64_t a1, uint64_t a0,
		   const struct gf_pre *b)
{
	uint64_t p3, p2, p1, p0, m1, m0, w0, w1, w2, w3, t;

	clmul64(a1, b->b[0], b->rb[0], &p3, &p2);
	clmul64(a0, b->b[1], b->rb[1], &p1, &p0);
	clmul64(a1 ^ a0, b->b[2], b->rb[2], &m1, &m0);
	m1 ^= p3 ^ p1;
	m0 ^= p2 ^ p0;
	w0 = p0;
	w1 = p1 ^ m0;
	w2 = p2 ^ m1;
	w3 = p3;
	/* x^192 * W0 = x^64 * W0 * (x^7 + x^2 + x + 1) */
	t = w0;
	w1 ^= (t << 63) ^ (t << 62) ^ (t << 57);
	w2 ^= t ^ (t >> 1) ^ (t >> 2) ^ (t >> 7);
	/* x^128 * W1 = W1 * (x^7 + x^2 + x + 1) */
	t = w1;
	w2 ^= (t << 63) ^ (t << 62) ^ (t << 57);
	w3 ^= t ^ (t >> 1) ^ (t >> 2) ^ (t >> 7);
	*y1 = w3;
	*y0 = w2;
}

/* ---- the portable kernel ---- */

struct ghash_ct {
	uint64_t y1, y0; /* running Y_i */
	struct gf_pre h; /* H * x^-1 */
};

/* SP 800-38D §6.4: Y_i = (Y_{i-1} ^ X_i) * H over whole blocks; a final
 * partial block is zero-padded (the 0^v / 0^u of §7.1 step 5). */
static void ghash_ct_update(struct ghash_ct *g, const uint8_t *p, size_t len)
{
	uint8_t last[16];

	for (; len >= 16; len -= 16, p += 16)
		gf_mul(&g->y1, &g->y0, g->y1 ^ tw_load_be64(p),
		       g->y0 ^ tw_load_be64(p + 8), &g->h);
	if (len > 0) {
		memset(last, 0, sizeof(last));
		memcpy(last, p, len);
		gf_mul(&g->y1, &g->y0, g->y1 ^ tw_load_be64(last),
		       g->y0 ^ tw_load_be64(last + 8), &g->h);
		tw_wipe(last, sizeof(last));
	}
}

void tw_gcm_ct_crypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[12],
		     const uint8_t *aad, size_t aad_len, const uint8_t *in,
		     uint8_t *out, size_t len, uint8_t tag[16], int enc)
{
	struct ghash_ct g;
	uint8_t j0[16], ek_j0[16];

	g.y1 = 0;
	g.y0 = 0;
	gf_pre_init(&g.h, ctx->hpow[TW_GCM_NPOW - 1][1],
		    ctx->hpow[TW_GCM_NPOW - 1][0]);
	/* §7.1 step 2: J0 = IV || 0^31 || 1 for a 96-bit IV. */
	memcpy(j0, iv, 12);
	tw_store_be32(j0 + 12, 1);
	tw_aes_encrypt(&ctx->aes, ek_j0, j0);
	ghash_ct_update(&g, aad, aad_len);
	if (!enc)
		ghash_ct_update(&g, in, len);
	/* §7.1 step 3: C = GCTR_K(inc32(J0), P). The counter starts at 2 and
	 * len <= 2^36 - 32 bytes, so its low 32 bits never wrap and the
	 * 128-bit increment of tw_aes_ctr() equals inc32 here. */
	tw_store_be32(j0 + 12, 2);
	if (len > 0)
		tw_aes_ctr(&ctx->aes, j0, out, in, len);
	if (enc)
		ghash_ct_update(&g, out, len);
	/* §7.1 step 5: the last block is [len(A)]_64 || [len(C)]_64. */
	gf_mul(&g.y1, &g.y0, g.y1 ^ ((uint64_t)aad_len << 3),
	       g.y0 ^ ((uint64_t)len << 3), &g.h);
	/* §7.1 step 6: T = MSB_t(GCTR_K(J0, S)); the caller truncates. */
	tw_store_be64(tag, g.y1);
	tw_store_be64(tag + 8, g.y0);
	tw_xor(tag, tag, ek_j0, 16);
	tw_wipe(&g, sizeof(g));
	tw_wipe(ek_j0, sizeof(ek_j0));
}

/* ---- context set-up and dispatch ---- */

int tw_gcm_init(struct tw_gcm_ctx *ctx, const uint8_t *key, size_t key_len)
{
	uint8_t zero[16] = { 0 }, h[16];
	uint64_t p[2]; /* H * x^-1: [1] high, [0] low word */
	struct gf_pre hp;
	uint64_t mask;
	int ret;

	if (ctx == NULL || key == NULL)
		return TW_ERR_INVAL;
	if (key_len != 16 && key_len != 32)
		return TW_ERR_LENGTH;
	ret = tw_aes_init_enc(&ctx->aes, key, key_len);
	if (ret != TW_OK)
		goto out;
	/* §6.4 / §7.1 step 1: H = CIPH_K(0^128). */
	tw_aes_encrypt(&ctx->aes, h, zero);
	/* H * x^-1: a left shift in the reflected form; the x^0 term that
	 * leaves becomes x^-1 = x^127 + x^6 + x + 1 (0xc2 << 120 | 1). */
	mask = (uint64_t)0 - (h[0] >> 7);
	p[1] = (tw_load_be64(h) << 1 | tw_load_be64(h + 8) >> 63) ^
	       (mask & UINT64_C(0xc200000000000000));
	p[0] = (tw_load_be64(h + 8) << 1) ^ (mask & 1);
	ctx->hpow[TW_GCM_NPOW - 1][1] = p[1];
	ctx->hpow[TW_GCM_NPOW - 1][0] = p[0];
	/* H^(k+1) x^-1 = (H^k x^-1) * (H x^-1) * x. */
	gf_pre_init(&hp, p[1], p[0]);
	for (int i = TW_GCM_NPOW - 2; i >= 0; i--)
		gf_mul(&ctx->hpow[i][1], &ctx->hpow[i][0], ctx->hpow[i + 1][1],
		       ctx->hpow[i + 1][0], &hp);
	ctx->impl = TW_GCM_IMPL_CT;
#if defined(__x86_64__)
	if (ctx->aes.impl == TW_AES_IMPL_AESNI &&
	    tw_cpu_has(TW_CPU_AESNI | TW_CPU_PCLMUL | TW_CPU_SSE41)) {
		ctx->impl = TW_GCM_IMPL_CLMUL;
		if (tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512 | TW_CPU_AVX2))
			ctx->impl = TW_GCM_IMPL_VAES;
	}
#endif
	ret = TW_OK;
out:
	tw_wipe(h, sizeof(h));
	tw_wipe(p, sizeof(p));
	tw_wipe(&hp, sizeof(hp));
	tw_wipe(&mask, sizeof(mask));
	return ret;
}

static int check_args(const struct tw_gcm_ctx *ctx, const uint8_t *iv,
		      const uint8_t *aad, size_t aad_len, const uint8_t *in,
		      const uint8_t *out, size_t len, const uint8_t *tag,
		      size_t tag_len)
{
	if (ctx == NULL || iv == NULL || tag == NULL ||
	    (aad == NULL && aad_len > 0) ||
	    ((in == NULL || out == NULL) && len > 0))
		return TW_ERR_INVAL;
	/* RFC 4106 §3 and IEEE 802.11 GCMP: 16; RFC 4106 also 12 and 8. */
	if (tag_len != 16 && tag_len != 12 && tag_len != 8)
		return TW_ERR_LENGTH;
	if ((uint64_t)len > GCM_MAX_LEN || (uint64_t)aad_len > GCM_MAX_AAD_LEN)
		return TW_ERR_LENGTH;
	return TW_OK;
}

static void dispatch(const struct tw_gcm_ctx *ctx, const uint8_t *iv,
		  const uint8_t *aad, size_t aad_len, const uint8_t *in,
		  uint8_t *out, size_t len, uint8_t tag[16], int enc)
{
	switch (ctx->impl) {
#if defined(__x86_64__)
	case TW_GCM_IMPL_VAES:
		tw_gcm_vaes_crypt(ctx, iv, aad, aad_len, in, out, len, tag, enc);
		return;
	case TW_GCM_IMPL_CLMUL:
		tw_gcm_clmul_crypt(ctx, iv, aad, aad_len, in, out, len, tag, enc);
		return;
#endif
	default:
		tw_gcm_ct_crypt(ctx, iv, aad, aad_len, in, out, len, tag, enc);
		return;
	}
}

int tw_gcm_encrypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[static 12],
		   const uint8_t *aad, size_t aad_len, const uint8_t *in,
		   uint8_t *out, size_t len, uint8_t *tag, size_t tag_len)
{
	uint8_t full[16];
	int ret;

	ret = check_args(ctx, iv, aad, aad_len, in, out, len, tag, tag_len);
	if (ret != TW_OK)
		return ret;
	dispatch(ctx, iv, aad, aad_len, in, out, len, full, 1);
	memcpy(tag, full, tag_len);
	tw_wipe(full, sizeof(full));
	return TW_OK;
}

int tw_gcm_decrypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[static 12],
		   const uint8_t *aad, size_t aad_len, const uint8_t *in,
		   uint8_t *out, size_t len, const uint8_t *tag, size_t tag_len)
{
	uint8_t full[16];
	int ret;

	ret = check_args(ctx, iv, aad, aad_len, in, out, len, tag, tag_len);
	if (ret != TW_OK)
		return ret;
	dispatch(ctx, iv, aad, aad_len, in, out, len, full, 0);
	/* §7.2 step 8: T' = MSB_t(GCTR_K(J0, S)); release P only if T = T'. */
	if (!tw_ct_eq(full, tag, tag_len)) {
		if (len > 0)
			tw_wipe(out, len);
		ret = TW_ERR_AUTH;
		goto out;
	}
	ret = TW_OK;
out:
	tw_wipe(full, sizeof(full));
	return ret;
}

int tw_gcm_encrypt_batch(struct tw_gcm_op *ops, size_t n)
{
	int ret = TW_OK;

	if (ops == NULL && n > 0)
		return TW_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		struct tw_gcm_op *o = &ops[i];

		o->status = o->iv == NULL ? TW_ERR_INVAL
			: tw_gcm_encrypt(o->ctx, o->iv, o->aad, o->aad_len,
					 o->in, o->out, o->len, o->tag,
					 o->tag_len);
		if (o->status != TW_OK && ret == TW_OK)
			ret = o->status;
	}
	return ret;
}

int tw_gcm_decrypt_batch(struct tw_gcm_op *ops, size_t n)
{
	int ret = TW_OK;

	if (ops == NULL && n > 0)
		return TW_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		struct tw_gcm_op *o = &ops[i];

		o->status = o->iv == NULL ? TW_ERR_INVAL
			: tw_gcm_decrypt(o->ctx, o->iv, o->aad, o->aad_len,
					 o->in, o->out, o->len, o->tag,
					 o->tag_len);
		if (o->status != TW_OK && ret == TW_OK)
			ret = o->status;
	}
	return ret;
}

void tw_gcm_wipe(struct tw_gcm_ctx *ctx)
{
	if (ctx == NULL)
		return;
	tw_aes_wipe(&ctx->aes);
	tw_wipe(ctx, sizeof(*ctx));
}

const char *tw_gcm_impl_name(const struct tw_gcm_ctx *ctx)
{
	switch (ctx->impl) {
	case TW_GCM_IMPL_VAES:
		return "vaes";
	case TW_GCM_IMPL_CLMUL:
		return "clmul";
	default:
		return "ct";
	}
}
