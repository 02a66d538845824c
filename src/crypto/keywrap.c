/*
 * twag — AES key wrap, RFC 3394 (September 2002), and AES key wrap with
 * padding, RFC 5649 (August 2009).
 *
 * Both use the index-based form of the wrapping function W (RFC 3394
 * §2.2.1 "2) Calculate intermediate values"), which works in place on
 * the caller's output: R[1..n] live in out, A in a local semiblock.
 */
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/keywrap.h"

/* RFC 3394 §2.2.3.1 default initial value */
static const uint8_t default_iv[8] = { 0xa6, 0xa6, 0xa6, 0xa6,
				       0xa6, 0xa6, 0xa6, 0xa6 };
/* RFC 5649 §3: AIV = A65959A6 || MLI (32-bit big-endian length) */
static const uint8_t aiv_const[4] = { 0xa6, 0x59, 0x59, 0xa6 };

/* RFC 5649 §3: MLI is 32 bits, so no valid padded key is longer. */
#define KWP_MAX_KEY 0xffffffffull

/*
 * RFC 3394 §2.2.1, for j = 0..5, i = 1..n:
 *   B = AES(K, A | R[i]);  A = MSB(64, B) ^ t, t = (n*j)+i;  R[i] = LSB(64, B)
 */
static void wrap_w(const struct tw_aes_ctx *kek, uint8_t a[8], uint8_t *r,
		   size_t n)
{
	uint8_t b[16];

	for (uint64_t j = 0; j <= 5; j++) {
		for (size_t i = 1; i <= n; i++) {
			uint8_t *ri = r + 8 * (i - 1);

			memcpy(b, a, 8);
			memcpy(b + 8, ri, 8);
			tw_aes_encrypt(kek, b, b);
			tw_store_be64(a, tw_load_be64(b) ^ (n * j + i));
			memcpy(ri, b + 8, 8);
		}
	}
	tw_wipe(b, sizeof(b));
}

/*
 * RFC 3394 §2.2.2, for j = 5..0, i = n..1:
 *   B = AES-1(K, (A ^ t) | R[i]), t = n*j+i;  A = MSB(64, B);  R[i] = LSB(64, B)
 */
static void unwrap_w(const struct tw_aes_ctx *kek, uint8_t a[8], uint8_t *r,
		     size_t n)
{
	uint8_t b[16];

#if defined(__x86_64__)
	if (kek->impl == TW_AES_IMPL_AESNI && kek->has_dec) {
		/* the chain in registers: no per-block call */
		tw_aes_ni_kw_unwrap(kek, &a, &r, n, 1);
		return;
	}
#endif
	for (uint64_t j = 6; j-- > 0;) {
		for (size_t i = n; i >= 1; i--) {
			uint8_t *ri = r + 8 * (i - 1);

			tw_store_be64(b, tw_load_be64(a) ^ (n * j + i));
			memcpy(b + 8, ri, 8);
			tw_aes_decrypt(kek, b, b);
			memcpy(a, b, 8);
			memcpy(ri, b + 8, 8);
		}
	}
	tw_wipe(b, sizeof(b));
}

/* Accepts any AES key size for the KEK (RFC 3394 §2: 128, 192, 256). */
static int kek_init(struct tw_aes_ctx *ctx, const uint8_t *kek, size_t kek_len)
{
	return tw_aes_init_any(ctx, kek, kek_len);
}

/* ---- RFC 3394 ---- */

int tw_keywrap_wrap_ctx(const struct tw_aes_ctx *kek, uint8_t *out,
			size_t out_max, size_t *out_len, const uint8_t *key,
			size_t key_len)
{
	uint8_t a[8];
	int err;

	if (out_len != NULL)
		*out_len = 0;
	if (kek == NULL || out == NULL || out_len == NULL || key == NULL)
		return TW_ERR_INVAL;
	/* §2: plaintext of n >= 2 64-bit blocks */
	if (key_len % 8 != 0 || key_len < 16) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	if (out_max < TW_KEYWRAP_OVERHEAD ||
	    key_len > out_max - TW_KEYWRAP_OVERHEAD) {
		err = TW_ERR_OVERFLOW;
		goto out;
	}
	/* §2.2.1 1) A = IV, R[i] = P[i] */
	memcpy(a, default_iv, 8);
	memmove(out + 8, key, key_len);
	wrap_w(kek, a, out + 8, key_len / 8);
	/* 3) C[0] = A, C[i] = R[i] */
	memcpy(out, a, 8);
	*out_len = key_len + 8;
	err = TW_OK;
out:
	tw_wipe(a, sizeof(a));
	return err;
}

/* RFC 3394 §2.2.2 step 1, with the checks: A = C[0] into a, R[i] = C[i]
 * into out; *n gets the semiblock count. */
static int unwrap_start(const struct tw_aes_ctx *kek, uint8_t *out, size_t out_max,
			size_t *out_len, const uint8_t *wrapped, size_t wrapped_len,
			uint8_t a[8], size_t *n)
{
	if (out_len != NULL)
		*out_len = 0;
	if (kek == NULL || out == NULL || out_len == NULL || wrapped == NULL)
		return TW_ERR_INVAL;
	/* §2.2.2: n+1 64-bit blocks, n >= 2 */
	if (wrapped_len % 8 != 0 || wrapped_len < 24)
		return TW_ERR_LENGTH;
	*n = wrapped_len / 8 - 1;
	if (out_max < 8 * *n)
		return TW_ERR_OVERFLOW;
	memcpy(a, wrapped, 8);
	memmove(out, wrapped + 8, 8 * *n);
	return TW_OK;
}

/* Step 3 / §2.2.3: A must be the IV; the comparison does not leak where it
 * differs. The output is wiped when it is not. */
static int unwrap_end(uint8_t a[8], uint8_t *out, size_t n, size_t *out_len)
{
	int err = TW_OK;

	if (!tw_ct_eq(a, default_iv, 8)) {
		tw_wipe(out, 8 * n);
		err = TW_ERR_AUTH;
	} else {
		*out_len = 8 * n;
	}
	tw_wipe(a, 8);
	return err;
}

int tw_keywrap_unwrap_ctx(const struct tw_aes_ctx *kek, uint8_t *out,
			  size_t out_max, size_t *out_len,
			  const uint8_t *wrapped, size_t wrapped_len)
{
	uint8_t a[8];
	size_t n = 0;
	int err = unwrap_start(kek, out, out_max, out_len, wrapped, wrapped_len, a, &n);

	if (err != TW_OK)
		return err;
	unwrap_w(kek, a, out, n);
	return unwrap_end(a, out, n, out_len);
}

int tw_keywrap_unwrap2_ctx(const struct tw_aes_ctx *kek, uint8_t *out1, size_t max1,
			   size_t *len1, const uint8_t *w1, size_t wl1, uint8_t *out2,
			   size_t max2, size_t *len2, const uint8_t *w2, size_t wl2, int *rc2)
{
	uint8_t a[2][8];
	size_t n1 = 0, n2 = 0;
	int rc, r2;

	rc = unwrap_start(kek, out1, max1, len1, w1, wl1, a[0], &n1);
	r2 = unwrap_start(kek, out2, max2, len2, w2, wl2, a[1], &n2);
#if defined(__x86_64__)
	/* two keys of one length, as K and OPc are: their chains side by side */
	if (rc == TW_OK && r2 == TW_OK && n1 == n2 && kek->impl == TW_AES_IMPL_AESNI &&
	    kek->has_dec) {
		uint8_t *ap[2] = { a[0], a[1] }, *rp[2] = { out1, out2 };

		tw_aes_ni_kw_unwrap(kek, ap, rp, n1, 2);
	} else
#endif
	{
		if (rc == TW_OK)
			unwrap_w(kek, a[0], out1, n1);
		if (r2 == TW_OK)
			unwrap_w(kek, a[1], out2, n2);
	}
	if (rc == TW_OK)
		rc = unwrap_end(a[0], out1, n1, len1);
	if (r2 == TW_OK)
		r2 = unwrap_end(a[1], out2, n2, len2);
	tw_wipe(a, sizeof(a));
	if (rc2 != NULL)
		*rc2 = r2;
	return rc;
}

/* ---- RFC 5649 ---- */

int tw_keywrap_wrap_pad_ctx(const struct tw_aes_ctx *kek, uint8_t *out,
			    size_t out_max, size_t *out_len,
			    const uint8_t *key, size_t key_len)
{
	uint8_t a[8];
	size_t padded;
	int err;

	if (out_len != NULL)
		*out_len = 0;
	if (kek == NULL || out == NULL || out_len == NULL || key == NULL)
		return TW_ERR_INVAL;
	/* §3: 1 <= MLI < 2^32 */
	if (key_len == 0 || (uint64_t)key_len > KWP_MAX_KEY) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	/* §4.1: pad with zeros to m = 8 * ceil(MLI / 8) octets */
	padded = (key_len + 7) & ~(size_t)7;
	if (out_max < TW_KEYWRAP_OVERHEAD ||
	    padded > out_max - TW_KEYWRAP_OVERHEAD) {
		err = TW_ERR_OVERFLOW;
		goto out;
	}
	memcpy(a, aiv_const, 4);
	tw_store_be32(a + 4, (uint32_t)key_len);
	memmove(out + 8, key, key_len);
	memset(out + 8 + key_len, 0, padded - key_len);
	if (padded == 8) {
		/* §4.1: exactly eight octets: C = ENC(K, AIV | P) in ECB mode */
		memcpy(out, a, 8);
		tw_aes_encrypt(kek, out, out);
	} else {
		/* §4.1: otherwise C = W(AIV, P) (RFC 3394 §2.2.1) */
		wrap_w(kek, a, out + 8, padded / 8);
		memcpy(out, a, 8);
	}
	*out_len = padded + 8;
	err = TW_OK;
out:
	tw_wipe(a, sizeof(a));
	return err;
}

/* 1 if x < y, else 0, without a branch; x and y below 2^63. */
static inline uint64_t ct_lt(uint64_t x, uint64_t y)
{
	return (x - y) >> 63;
}

int tw_keywrap_unwrap_pad_ctx(const struct tw_aes_ctx *kek, uint8_t *out,
			      size_t out_max, size_t *out_len,
			      const uint8_t *wrapped, size_t wrapped_len)
{
	uint8_t a[8], b[16];
	size_t n = wrapped_len / 8 - 1; /* used only once the length is valid */
	uint64_t mli, ok, pad;
	int err;

	if (out_len != NULL)
		*out_len = 0;
	if (kek == NULL || out == NULL || out_len == NULL || wrapped == NULL)
		return TW_ERR_INVAL;
	/* §4.2: n+1 semiblocks, n >= 1; no valid MLI needs more than
	 * 2^32 - 1 octets of key, i.e. 2^29 semiblocks. */
	if (wrapped_len % 8 != 0 || wrapped_len < 16 ||
	    (uint64_t)n > (KWP_MAX_KEY + 7) / 8) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	if (out_max < 8 * n) {
		err = TW_ERR_OVERFLOW;
		goto out;
	}
	if (n == 1) {
		/* §4.2: two semiblocks: A | P[1] = DEC(K, C[0] | C[1]) */
		memcpy(b, wrapped, 16);
		tw_aes_decrypt(kek, b, b);
		memcpy(a, b, 8);
		memcpy(out, b + 8, 8);
	} else {
		/* §4.2: otherwise (A, P) = W^-1(C) (RFC 3394 §2.2.2) */
		memcpy(a, wrapped, 8);
		memmove(out, wrapped + 8, 8 * n);
		unwrap_w(kek, a, out, n);
	}
	/*
	 * §3 checks, all folded into one flag so that neither timing nor the
	 * error tells which failed (the MLI and padding are secret-derived):
	 *   1) MSB(32, A) = A65959A6
	 *   2) 8*(n-1) < MLI <= 8*n
	 *   3) the last b = 8*n - MLI octets of P are zero
	 */
	mli = tw_load_be32(a + 4);
	ok = tw_ct_eq(a, aiv_const, 4);
	ok &= ct_lt(8 * (uint64_t)(n - 1), mli);
	ok &= 1 ^ ct_lt(8 * (uint64_t)n, mli);
	pad = 0;
	for (uint64_t k = 0; k < 8; k++) {
		uint64_t pos = 8 * (uint64_t)(n - 1) + k, m = mli;

		/* An opaque copy of MLI: otherwise the compiler folds pos - MLI
		 * into the loop's index and exit test, and the secret reaches
		 * an address and a branch (same values, but not by design). */
		__asm__("" : "+r"(m));
		/* byte must be zero when pos >= MLI */
		uint64_t must_zero = 1 ^ ct_lt(pos, m);

		pad |= (0 - must_zero) & out[pos];
	}
	ok &= (pad - 1) >> 63; /* pad == 0 */
	/* The verdict is public (accept or reject), as tw_ct_eq()'s is. */
	tw_ct_declassify(&ok, sizeof(ok));
	if (!ok) {
		tw_wipe(out, 8 * n);
		err = TW_ERR_AUTH;
		goto out;
	}
	/* Accepted: MLI is the length of the key the caller now uses. */
	tw_ct_declassify(&mli, sizeof(mli));
	*out_len = (size_t)mli;
	err = TW_OK;
out:
	tw_wipe(a, sizeof(a));
	tw_wipe(b, sizeof(b));
	return err;
}

/* ---- with a raw KEK: expand it, run the _ctx form, wipe the schedule ---- */

typedef int (*kw_ctx_fn)(const struct tw_aes_ctx *kek, uint8_t *out,
			 size_t out_max, size_t *out_len, const uint8_t *in,
			 size_t in_len);

static int with_kek(kw_ctx_fn fn, uint8_t *out, size_t out_max,
		    size_t *out_len, const uint8_t *kek, size_t kek_len,
		    const uint8_t *in, size_t in_len)
{
	struct tw_aes_ctx ctx;
	int err;

	if (out_len != NULL)
		*out_len = 0;
	err = kek_init(&ctx, kek, kek_len);
	if (err != TW_OK)
		goto out;
	err = fn(&ctx, out, out_max, out_len, in, in_len);
out:
	tw_aes_wipe(&ctx);
	return err;
}

int tw_keywrap_wrap(uint8_t *out, size_t out_max, size_t *out_len,
		    const uint8_t *kek, size_t kek_len, const uint8_t *key,
		    size_t key_len)
{
	return with_kek(tw_keywrap_wrap_ctx, out, out_max, out_len, kek, kek_len,
			key, key_len);
}

int tw_keywrap_unwrap(uint8_t *out, size_t out_max, size_t *out_len,
		      const uint8_t *kek, size_t kek_len,
		      const uint8_t *wrapped, size_t wrapped_len)
{
	return with_kek(tw_keywrap_unwrap_ctx, out, out_max, out_len, kek,
			kek_len, wrapped, wrapped_len);
}

int tw_keywrap_wrap_pad(uint8_t *out, size_t out_max, size_t *out_len,
			const uint8_t *kek, size_t kek_len, const uint8_t *key,
			size_t key_len)
{
	return with_kek(tw_keywrap_wrap_pad_ctx, out, out_max, out_len, kek,
			kek_len, key, key_len);
}

int tw_keywrap_unwrap_pad(uint8_t *out, size_t out_max, size_t *out_len,
			  const uint8_t *kek, size_t kek_len,
			  const uint8_t *wrapped, size_t wrapped_len)
{
	return with_kek(tw_keywrap_unwrap_pad_ctx, out, out_max, out_len, kek,
			kek_len, wrapped, wrapped_len);
}
