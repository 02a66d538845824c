/*
 * Tests of AES-GCM (NIST SP 800-38D): the GCM specification's test cases
 * and the RFC 4106-layout vectors on every kernel the CPU offers, kernels
 * compared with each other in-process on random inputs, OpenSSL EVP
 * aes-128-gcm / aes-256-gcm as an independent implementation, and the
 * failure paths (bad tag, ciphertext, AAD or IV; bad lengths; batches).
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/gcm.h"

#define MAXV 1024

typedef void (*kernel_fn)(const struct tw_gcm_ctx *, const uint8_t *,
			  const uint8_t *, size_t, const uint8_t *, uint8_t *,
			  size_t, uint8_t *, int);

/* Every kernel the context may use (its own level and below). */
static int kernels(const struct tw_gcm_ctx *ctx, kernel_fn fn[3],
		   const char *name[3])
{
	int n = 0;

	fn[n] = tw_gcm_ct_crypt;
	name[n++] = "ct";
#if defined(__x86_64__)
	if (ctx->impl >= TW_GCM_IMPL_CLMUL) {
		fn[n] = tw_gcm_clmul_crypt;
		name[n++] = "clmul";
	}
	if (ctx->impl >= TW_GCM_IMPL_VAES) {
		fn[n] = tw_gcm_vaes_crypt;
		name[n++] = "vaes";
	}
#else
	(void)ctx;
#endif
	return n;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	return len == 0 || tw_ct_is_zero(p, len);
}

/* Checks one known answer through the API (separate buffers, in place,
 * every tag length) and through each kernel directly. */
static void check_known(const struct tv_case *c, const uint8_t *key,
			size_t key_len, const uint8_t *iv, const uint8_t *aad,
			size_t aad_len, const uint8_t *pt, size_t len,
			const uint8_t *ct, const uint8_t *tag, size_t tag_len)
{
	struct tw_gcm_ctx ctx;
	uint8_t out[MAXV], buf[MAXV], t[16], full[16];
	kernel_fn fn[3];
	const char *name[3];

	(void)c;
	CHECK_OK(tw_gcm_init(&ctx, key, key_len));
	/* The API: encrypt to a separate buffer, then in place. */
	memset(t, 0, sizeof(t));
	CHECK_OK(tw_gcm_encrypt(&ctx, iv, aad, aad_len, pt, out, len, t, tag_len));
	CHECK_MEM(out, ct, len);
	CHECK_MEM(t, tag, tag_len);
	memcpy(buf, pt, len);
	CHECK_OK(tw_gcm_encrypt(&ctx, iv, aad, aad_len, buf, buf, len, t, tag_len));
	CHECK_MEM(buf, ct, len);
	CHECK_MEM(t, tag, tag_len);
	/* Decrypt in place and to a separate buffer. */
	CHECK_OK(tw_gcm_decrypt(&ctx, iv, aad, aad_len, buf, buf, len, tag, tag_len));
	CHECK_MEM(buf, pt, len);
	CHECK_OK(tw_gcm_decrypt(&ctx, iv, aad, aad_len, ct, out, len, tag, tag_len));
	CHECK_MEM(out, pt, len);
	/* A flipped tag bit: refused, plaintext not released. */
	memcpy(t, tag, tag_len);
	t[tag_len - 1] ^= 0x01;
	memset(out, 0xa5, sizeof(out));
	CHECK_ERR(tw_gcm_decrypt(&ctx, iv, aad, aad_len, ct, out, len, t, tag_len),
		  TW_ERR_AUTH);
	CHECK(all_zero(out, len));
	/* Each kernel gives the same full tag and text. */
	int n = kernels(&ctx, fn, name);
	for (int k = 0; k < n; k++) {
		memset(out, 0, sizeof(out));
		fn[k](&ctx, iv, aad, aad_len, pt, out, len, full, 1);
		if (!CHECK(memcmp(out, ct, len) == 0 &&
			   memcmp(full, tag, tag_len) == 0))
			tw_note("kernel %s encrypt differs", name[k]);
		fn[k](&ctx, iv, aad, aad_len, ct, out, len, full, 0);
		if (!CHECK(memcmp(out, pt, len) == 0 &&
			   memcmp(full, tag, tag_len) == 0))
			tw_note("kernel %s decrypt differs", name[k]);
	}
	tw_gcm_wipe(&ctx);
}

static void gcm_vector(const struct tv_case *c)
{
	uint8_t key[32], iv[12], aad[MAXV], pt[MAXV], ct[MAXV], tag[16];
	size_t key_len = tv_hex(c, "key", key, sizeof(key));
	size_t aad_len = tv_hex(c, "aad", aad, sizeof(aad));
	size_t len = tv_hex(c, "plaintext", pt, sizeof(pt));
	size_t ct_len = tv_hex(c, "ciphertext", ct, sizeof(ct));

	CHECK(tv_hex(c, "iv", iv, sizeof(iv)) == 12);
	CHECK(tv_hex(c, "tag", tag, sizeof(tag)) == 16);
	CHECK(ct_len == len);
	check_known(c, key, key_len, iv, aad, aad_len, pt, len, ct, tag, 16);
	/* RFC 4106 §3: truncated tags are the leading octets. */
	check_known(c, key, key_len, iv, aad, aad_len, pt, len, ct, tag, 12);
	check_known(c, key, key_len, iv, aad, aad_len, pt, len, ct, tag, 8);
}

/* gcm_rfc4106.vec (the esp engineer's file): key = AES key | salt, iv = 8
 * octets, ciphertext = C | ICV. AES-192 cases are skipped. */
static void rfc4106_vector(const struct tv_case *c)
{
	uint8_t key[36], iv8[8], nonce[12], aad[MAXV], pt[MAXV], ct[MAXV + 16];
	size_t key_len = tv_hex(c, "key", key, sizeof(key));
	size_t aad_len = tv_hex(c, "aad", aad, sizeof(aad));
	size_t len = tv_hex(c, "plaintext", pt, sizeof(pt));
	size_t ct_len = tv_hex(c, "ciphertext", ct, sizeof(ct));

	CHECK(tv_hex(c, "iv", iv8, sizeof(iv8)) == 8);
	if (key_len == 28)
		return; /* AES-192: not offered */
	if (!CHECK((key_len == 20 || key_len == 36) && ct_len >= len &&
		   (ct_len - len == 8 || ct_len - len == 12 || ct_len - len == 16)))
		return;
	/* RFC 4106 §4: nonce = salt || IV. */
	memcpy(nonce, key + key_len - 4, 4);
	memcpy(nonce + 4, iv8, 8);
	check_known(c, key, key_len - 4, nonce, aad, aad_len, pt, len, ct,
		    ct + len, ct_len - len);
}

/* ---- cross-checks ---- */

static size_t rand_below(size_t n)
{
	return n == 0 ? 0 : tw_test_random_u32() % n;
}

static bool evp_gcm(int enc, const uint8_t *key, size_t key_len,
		    const uint8_t *iv, const uint8_t *aad, size_t aad_len,
		    const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
		    size_t tag_len)
{
	EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *ci = key_len == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
	int n, ok = e != NULL;

	ok = ok && EVP_CipherInit_ex(e, ci, NULL, NULL, NULL, enc) == 1;
	ok = ok && EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1;
	ok = ok && EVP_CipherInit_ex(e, NULL, NULL, key, iv, enc) == 1;
	if (ok && aad_len > 0)
		ok = EVP_CipherUpdate(e, NULL, &n, aad, (int)aad_len) == 1;
	if (ok && len > 0)
		ok = EVP_CipherUpdate(e, out, &n, in, (int)len) == 1;
	if (ok && !enc)
		ok = EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_GCM_SET_TAG, (int)tag_len, tag) == 1;
	ok = ok && EVP_CipherFinal_ex(e, out + len, &n) == 1;
	if (ok && enc)
		ok = EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_GCM_GET_TAG, (int)tag_len, tag) == 1;
	EVP_CIPHER_CTX_free(e);
	return ok;
}

enum { BIG = 70000 };
static uint8_t pt_buf[BIG + 64], ct_buf[BIG + 64], ref_buf[BIG + 64],
	dec_buf[BIG + 64];

/* twag (whatever kernel this CPU level selects) against OpenSSL. */
static void test_vs_openssl(void)
{
	static const size_t tag_lens[3] = { 16, 12, 8 };
	bool enc_ok = true, dec_ok = true, evp_ok = true, neg_ok = true;
	int rounds = 0;

	for (int i = 0; i < 400; i++) {
		uint8_t key[32], iv[12], aad[64], tag[16], rtag[16];
		size_t key_len = (i & 1) ? 32 : 16;
		size_t aad_len = rand_below(65);
		size_t len = i < 300 ? rand_below(1001) : (i < 390 ? rand_below(9000) : BIG - rand_below(100));
		size_t tag_len = tag_lens[i % 3];
		struct tw_gcm_ctx ctx;

		tw_test_random(key, sizeof(key));
		tw_test_random(iv, sizeof(iv));
		tw_test_random(aad, sizeof(aad));
		tw_test_random(pt_buf, len);
		if (tw_gcm_init(&ctx, key, key_len) != TW_OK) {
			CHECK(false);
			return;
		}
		evp_ok &= evp_gcm(1, key, key_len, iv, aad, aad_len, pt_buf,
				  ref_buf, len, rtag, tag_len);
		enc_ok &= tw_gcm_encrypt(&ctx, iv, aad, aad_len, pt_buf, ct_buf,
					 len, tag, tag_len) == TW_OK;
		enc_ok &= memcmp(ct_buf, ref_buf, len) == 0 &&
			  memcmp(tag, rtag, tag_len) == 0;
		/* OpenSSL opens ours; we open ours in place. */
		evp_ok &= evp_gcm(0, key, key_len, iv, aad, aad_len, ct_buf,
				  ref_buf, len, tag, tag_len);
		evp_ok &= memcmp(ref_buf, pt_buf, len) == 0;
		memcpy(dec_buf, ct_buf, len);
		dec_ok &= tw_gcm_decrypt(&ctx, iv, aad, aad_len, dec_buf, dec_buf,
					 len, tag, tag_len) == TW_OK;
		dec_ok &= memcmp(dec_buf, pt_buf, len) == 0;
		/* A flipped bit anywhere in C, A, IV or T is refused. */
		if (len + aad_len > 0 && i % 4 == 0) {
			size_t pos = rand_below(len + aad_len);
			uint8_t bit = (uint8_t)(1u << rand_below(8));
			uint8_t *p = pos < len ? &ct_buf[pos] : &aad[pos - len];

			*p ^= bit;
			memset(dec_buf, 0x5a, len);
			neg_ok &= tw_gcm_decrypt(&ctx, iv, aad, aad_len, ct_buf,
						 dec_buf, len, tag, tag_len) == TW_ERR_AUTH;
			neg_ok &= all_zero(dec_buf, len);
			*p ^= bit;
			iv[rand_below(12)] ^= bit;
			neg_ok &= tw_gcm_decrypt(&ctx, iv, aad, aad_len, ct_buf,
						 dec_buf, len, tag, tag_len) == TW_ERR_AUTH;
		}
		tw_gcm_wipe(&ctx);
		rounds++;
	}
	CHECK(evp_ok);
	CHECK(enc_ok);
	CHECK(dec_ok);
	CHECK(neg_ok);
	tw_note("gcm: %d random cases vs OpenSSL EVP (lengths 0..1000, ..9000, ~%d)",
		rounds, BIG);
}

/* Every kernel against the portable one, on contexts built at each CPU
 * restriction, in-process (tw_cpu_restrict). */
static void test_kernels_agree(void)
{
	static const uint32_t levels[] = {
		0,
		TW_CPU_AESNI | TW_CPU_PCLMUL | TW_CPU_SSE41,
		UINT32_MAX,
	};
	bool same = true, api_same = true;
	int compared = 0;

	for (int i = 0; i < 300; i++) {
		uint8_t key[32], iv[12], aad[300], t0[16], t1[16];
		size_t key_len = (i & 1) ? 32 : 16;
		size_t aad_len = i % 10 == 0 ? rand_below(300) : rand_below(40);
		size_t len = i < 250 ? rand_below(1001) : BIG - rand_below(300);
		struct tw_gcm_ctx ref, ctx;
		kernel_fn fn[3];
		const char *name[3];

		tw_test_random(key, sizeof(key));
		tw_test_random(iv, sizeof(iv));
		tw_test_random(aad, sizeof(aad));
		tw_test_random(pt_buf, len);
		tw_cpu_restrict(0);
		if (tw_gcm_init(&ref, key, key_len) != TW_OK) {
			tw_cpu_restrict(UINT32_MAX);
			CHECK(false);
			return;
		}
		tw_cpu_restrict(UINT32_MAX);
		CHECK(ref.impl == TW_GCM_IMPL_CT);
		tw_gcm_ct_crypt(&ref, iv, aad, aad_len, pt_buf, ref_buf, len, t0, 1);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			tw_cpu_restrict(levels[l]);
			int r = tw_gcm_init(&ctx, key, key_len);
			tw_cpu_restrict(UINT32_MAX);
			if (r != TW_OK) {
				CHECK(false);
				return;
			}
			/* The same key gives the same H powers on every path. */
			same &= memcmp(ctx.hpow, ref.hpow, sizeof(ref.hpow)) == 0;
			int n = kernels(&ctx, fn, name);
			for (int k = 0; k < n; k++) {
				/* Encrypt in place (the packet path). */
				memcpy(ct_buf, pt_buf, len);
				fn[k](&ctx, iv, aad, aad_len, ct_buf, ct_buf, len, t1, 1);
				bool ok = memcmp(ct_buf, ref_buf, len) == 0 &&
					  memcmp(t0, t1, 16) == 0;
				fn[k](&ctx, iv, aad, aad_len, ct_buf, ct_buf, len, t1, 0);
				ok &= memcmp(ct_buf, pt_buf, len) == 0 &&
				      memcmp(t0, t1, 16) == 0;
				if (!ok)
					tw_note("kernel %s differs: len %zu aad %zu",
						name[k], len, aad_len);
				same &= ok;
				compared++;
			}
			/* And the dispatching API picks one of them. */
			api_same &= tw_gcm_encrypt(&ctx, iv, aad, aad_len, pt_buf,
						   ct_buf, len, t1, 16) == TW_OK &&
				    memcmp(ct_buf, ref_buf, len) == 0 &&
				    memcmp(t0, t1, 16) == 0;
			tw_gcm_wipe(&ctx);
		}
		tw_gcm_wipe(&ref);
	}
	CHECK(same);
	CHECK(api_same);
	tw_note("gcm: %d kernel runs compared with the portable kernel", compared);
}

/* Every length 0..600 and AAD lengths 0..70, so each kernel's block
 * grouping and tail handling (partial blocks, 8/16-block boundaries, the
 * length block sharing the last aggregate or not) is exercised. */
static void test_length_sweep(void)
{
	uint8_t key[32], iv[12], aad[80], t0[16], t1[16];
	struct tw_gcm_ctx ctx;
	kernel_fn fn[3];
	const char *name[3];
	bool same = true;

	tw_test_random(key, sizeof(key));
	tw_test_random(iv, sizeof(iv));
	tw_test_random(aad, sizeof(aad));
	tw_test_random(pt_buf, 600);
	if (tw_gcm_init(&ctx, key, 16) != TW_OK) {
		CHECK(false);
		return;
	}
	int n = kernels(&ctx, fn, name);
	for (size_t len = 0; len <= 600; len++) {
		size_t aad_len = (len * 7) % 71;

		tw_gcm_ct_crypt(&ctx, iv, aad, aad_len, pt_buf, ref_buf, len, t0, 1);
		for (int k = 1; k < n; k++) {
			memset(ct_buf, 0xee, len + 64);
			fn[k](&ctx, iv, aad, aad_len, pt_buf, ct_buf, len, t1, 1);
			bool ok = memcmp(ct_buf, ref_buf, len) == 0 &&
				  memcmp(t0, t1, 16) == 0;
			/* Nothing is written past the end of out. */
			ok &= ct_buf[len] == 0xee && ct_buf[len + 63] == 0xee;
			fn[k](&ctx, iv, aad, aad_len, ct_buf, ct_buf, len, t1, 0);
			ok &= memcmp(ct_buf, pt_buf, len) == 0 &&
			      memcmp(t0, t1, 16) == 0;
			if (!ok)
				tw_note("kernel %s differs: len %zu aad %zu",
					name[k], len, aad_len);
			same &= ok;
		}
	}
	CHECK(same);
	tw_gcm_wipe(&ctx);
}

/* ---- failure paths and arguments ---- */

static void test_errors(void)
{
	struct tw_gcm_ctx ctx;
	uint8_t key[32] = { 1 }, iv[12] = { 2 }, buf[64] = { 3 }, tag[16];

	CHECK_ERR(tw_gcm_init(&ctx, key, 24), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_init(&ctx, key, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_init(&ctx, key, 17), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_init(NULL, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_gcm_init(&ctx, NULL, 16), TW_ERR_INVAL);
	CHECK_OK(tw_gcm_init(&ctx, key, 16));
	for (size_t t = 0; t <= 17; t++) {
		int want = (t == 8 || t == 12 || t == 16) ? TW_OK : TW_ERR_LENGTH;
		CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 0, buf, buf, 16, tag, t), want);
	}
	CHECK_ERR(tw_gcm_decrypt(&ctx, iv, NULL, 0, buf, buf, 16, tag, 4), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_decrypt(&ctx, iv, NULL, 0, buf, buf, 16, tag, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 5, buf, buf, 16, tag, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 0, NULL, buf, 16, tag, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 0, buf, NULL, 16, tag, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 0, buf, buf, 16, NULL, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_gcm_encrypt(NULL, iv, NULL, 0, buf, buf, 16, tag, 16), TW_ERR_INVAL);
	/* Empty text and AAD may be NULL. */
	CHECK_OK(tw_gcm_encrypt(&ctx, iv, NULL, 0, NULL, NULL, 0, tag, 16));
	CHECK_OK(tw_gcm_decrypt(&ctx, iv, NULL, 0, NULL, NULL, 0, tag, 16));
	tag[0] ^= 0x80;
	CHECK_ERR(tw_gcm_decrypt(&ctx, iv, NULL, 0, NULL, NULL, 0, tag, 16), TW_ERR_AUTH);
#if SIZE_MAX > UINT32_MAX
	/* SP 800-38D §5.2.1.1: at most 2^36 - 32 bytes (checked before any
	 * byte is touched, so the buffer need not be that long). */
	CHECK_ERR(tw_gcm_encrypt(&ctx, iv, NULL, 0, buf, buf,
				 ((size_t)1 << 36) - 31, tag, 16), TW_ERR_LENGTH);
	CHECK_ERR(tw_gcm_decrypt(&ctx, iv, NULL, 0, buf, buf,
				 (size_t)1 << 40, tag, 16), TW_ERR_LENGTH);
#endif
	/* Wiping clears key schedule and powers of H. */
	tw_gcm_wipe(&ctx);
	CHECK(tw_ct_is_zero(&ctx, sizeof(ctx)));
	CHECK(strcmp(tw_gcm_impl_name(&ctx), "ct") == 0);
}

static void test_batch(void)
{
	enum { N = 7 };
	struct tw_gcm_ctx ctx[2];
	struct tw_gcm_op op[N];
	uint8_t key[2][32], iv[N][12], aad[N][20], buf[N][600], pt[N][600],
		tag[N][16], t[16];
	bool single_ok = true;

	tw_test_random(key, sizeof(key));
	CHECK_OK(tw_gcm_init(&ctx[0], key[0], 16));
	CHECK_OK(tw_gcm_init(&ctx[1], key[1], 32));
	tw_test_random(iv, sizeof(iv));
	tw_test_random(aad, sizeof(aad));
	tw_test_random(pt, sizeof(pt));
	memcpy(buf, pt, sizeof(buf));
	for (int i = 0; i < N; i++) {
		op[i] = (struct tw_gcm_op){
			.ctx = &ctx[i & 1], .iv = iv[i], .aad = aad[i],
			.aad_len = (size_t)i * 3, .in = buf[i], .out = buf[i],
			.len = (size_t)i * 97, .tag = tag[i],
			.tag_len = i == 3 ? 8 : 16, .status = 1,
		};
	}
	CHECK_OK(tw_gcm_encrypt_batch(op, N));
	/* Each packet equals the single-packet call. */
	for (int i = 0; i < N; i++) {
		uint8_t one[600];

		single_ok &= op[i].status == TW_OK;
		single_ok &= tw_gcm_encrypt(&ctx[i & 1], iv[i], aad[i], op[i].aad_len,
					    pt[i], one, op[i].len, t,
					    op[i].tag_len) == TW_OK;
		single_ok &= memcmp(one, buf[i], op[i].len) == 0 &&
			     memcmp(t, tag[i], op[i].tag_len) == 0;
	}
	CHECK(single_ok);
	/* One forged packet: only it fails and is wiped. */
	buf[4][5] ^= 1;
	CHECK_ERR(tw_gcm_decrypt_batch(op, N), TW_ERR_AUTH);
	for (int i = 0; i < N; i++) {
		if (i == 4) {
			CHECK(op[i].status == TW_ERR_AUTH);
			CHECK(all_zero(buf[i], op[i].len));
		} else {
			CHECK(op[i].status == TW_OK);
			CHECK_MEM(buf[i], pt[i], op[i].len);
		}
	}
	/* A bad argument in one op is reported in it. */
	op[2].tag_len = 5;
	op[5].iv = NULL;
	CHECK_ERR(tw_gcm_encrypt_batch(op, N), TW_ERR_LENGTH);
	CHECK(op[2].status == TW_ERR_LENGTH && op[5].status == TW_ERR_INVAL &&
	      op[0].status == TW_OK);
	CHECK_ERR(tw_gcm_encrypt_batch(NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_gcm_decrypt_batch(NULL, 0));
	tw_gcm_wipe(&ctx[0]);
	tw_gcm_wipe(&ctx[1]);
}

/* Contexts live wherever callers put them (malloc gives 16-byte
 * alignment): a copied context at an address that is 16- but not
 * 64-byte aligned gives the same results. */
static void test_placement(void)
{
	static _Alignas(64) uint8_t raw[sizeof(struct tw_gcm_ctx) + 64];
	struct tw_gcm_ctx ctx, *moved = (struct tw_gcm_ctx *)(void *)(raw + 16);
	uint8_t key[32], iv[12], aad[13], t0[16], t1[16];
	bool ok = true;

	tw_test_random(key, sizeof(key));
	tw_test_random(iv, sizeof(iv));
	tw_test_random(aad, sizeof(aad));
	tw_test_random(pt_buf, 4000);
	CHECK_OK(tw_gcm_init(&ctx, key, 32));
	memcpy(moved, &ctx, sizeof(ctx));
	for (size_t len = 0; len <= 4000; len += 333) {
		ok &= tw_gcm_encrypt(&ctx, iv, aad, sizeof(aad), pt_buf, ct_buf,
				     len, t0, 16) == TW_OK;
		ok &= tw_gcm_encrypt(moved, iv, aad, sizeof(aad), pt_buf, ref_buf,
				     len, t1, 16) == TW_OK;
		ok &= memcmp(ct_buf, ref_buf, len) == 0 && memcmp(t0, t1, 16) == 0;
		ok &= tw_gcm_decrypt(moved, iv, aad, sizeof(aad), ref_buf, ref_buf,
				     len, t1, 16) == TW_OK;
		ok &= memcmp(ref_buf, pt_buf, len) == 0;
	}
	CHECK(ok);
	tw_gcm_wipe(&ctx);
	tw_gcm_wipe(moved);
}

void test_main(void)
{
	struct tw_gcm_ctx ctx;
	uint8_t key[16] = { 0 };

	if (tw_gcm_init(&ctx, key, 16) == TW_OK)
		tw_note("gcm kernel at this level: %s", tw_gcm_impl_name(&ctx));
	CHECK(tv_run_file("gcm.vec", gcm_vector) == 8);
	CHECK(tv_run_file("gcm_rfc4106.vec", rfc4106_vector) > 0);
	test_errors();
	test_batch();
	test_placement();
	test_length_sweep();
	test_kernels_agree();
	test_vs_openssl();
}
