/*
 * Tests of AES (FIPS 197) and AES-CTR (SP 800-38A): published vectors on
 * every implementation the CPU offers, portable vs AES-NI in process, and
 * OpenSSL EVP on random keys, blocks, lengths and counters.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"

/* CPU masks that select each implementation in this run: portable always,
 * AES-NI and VAES when enabled (tests/run.sh also runs us once per
 * TWAG_CPU level). */
#define VAES_FEATURES (TW_CPU_VAES | TW_CPU_AVX512)
static uint32_t impl_mask[3];
static const char *impl_name[3];
static int n_impl;

static void impls_setup(void)
{
	impl_mask[0] = 0;
	impl_name[0] = "ct64";
	n_impl = 1;
	if (tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41)) {
		impl_mask[n_impl] = UINT32_MAX & ~(uint32_t)VAES_FEATURES;
		impl_name[n_impl++] = "aesni";
		if (tw_cpu_has(VAES_FEATURES)) {
			impl_mask[n_impl] = UINT32_MAX;
			impl_name[n_impl++] = "vaes";
		}
	}
}

/* ---- vectors ---- */

/* SP 800-38A B.1: the next counter block, big-endian, mod 2^128. */
static void ctr_inc(uint8_t ctr[16])
{
	for (int i = 15; i >= 0 && ++ctr[i] == 0; i--)
		;
}

static void run_vector(const struct tv_case *c)
{
	uint8_t key[32], pt[64], ct[64], icb[16], got[64], tmp[64];
	size_t klen = tv_hex(c, "key", key, sizeof(key));

	for (int m = 0; m < n_impl; m++) {
		struct tw_aes_ctx ctx, ectx;

		tw_cpu_restrict(impl_mask[m]);
		if (!CHECK_OK(tw_aes_init_any(&ctx, key, klen)))
			continue;
		CHECK(strcmp(tw_aes_impl_name(&ctx), impl_name[m]) == 0);
		/* AES-192 only through tw_aes_init_any(); else encrypt-only. */
		if (klen == 24) {
			CHECK_ERR(tw_aes_init(&ectx, key, klen), TW_ERR_LENGTH);
			CHECK_ERR(tw_aes_init_enc(&ectx, key, klen), TW_ERR_LENGTH);
			CHECK_OK(tw_aes_init_any(&ectx, key, klen));
		} else {
			CHECK_OK(tw_aes_init_enc(&ectx, key, klen));
		}

		if (tv_has(c, "last_round_key")) {
			/* Only the AES-NI schedule is stored in FIPS 197 form. */
			if (ctx.impl == TW_AES_IMPL_AESNI)
				TV_EXPECT(c, "last_round_key", ctx.rk.ni[0][ctx.nr], 16);
			else
				CHECK(ctx.nr == klen / 4 + 6);
			continue;
		}
		size_t n = tv_hex(c, "plaintext", pt, sizeof(pt));
		CHECK(tv_hex(c, "ciphertext", ct, sizeof(ct)) == n);
		const char *mode = tv_has(c, "mode") ? tv_str(c, "mode") : "ecb";

		if (strcmp(mode, "ctr") == 0) {
			tv_hex(c, "icb", icb, sizeof(icb));
			tw_aes_ctr(&ctx, icb, got, pt, n);
			TV_EXPECT(c, "ciphertext", got, n);
			tw_aes_ctr(&ctx, icb, got, ct, n);
			TV_EXPECT(c, "plaintext", got, n);
			/* In place, and split: block 2 on starts at counter T_2. */
			memcpy(tmp, pt, n);
			tw_aes_ctr(&ctx, icb, tmp, tmp, 16);
			ctr_inc(icb); /* T_2 = ...feff + 1 = ...ff00: a carry */
			tw_aes_ctr(&ctx, icb, tmp + 16, tmp + 16, n - 16);
			TV_EXPECT(c, "ciphertext", tmp, n);
			continue;
		}
		/* ECB: all blocks at once, one by one, in place, and back. */
		tw_aes_encrypt_blocks(&ctx, got, pt, n / 16);
		TV_EXPECT(c, "ciphertext", got, n);
		for (size_t i = 0; i < n; i += 16)
			tw_aes_encrypt(&ectx, tmp + i, pt + i);
		TV_EXPECT(c, "ciphertext", tmp, n);
		tw_aes_decrypt_blocks(&ctx, got, ct, n / 16);
		TV_EXPECT(c, "plaintext", got, n);
		memcpy(tmp, ct, n);
		for (size_t i = 0; i < n; i += 16)
			tw_aes_decrypt(&ctx, tmp + i, tmp + i);
		TV_EXPECT(c, "plaintext", tmp, n);
		/* An encrypt-only context still decrypts (slower on AES-NI). */
		tw_aes_decrypt_blocks(&ectx, got, ct, n / 16);
		TV_EXPECT(c, "plaintext", got, n);
		/* Negative: a one-bit change of the key changes every block. */
		key[klen - 1] ^= 0x01;
		CHECK_OK(tw_aes_init_any(&ectx, key, klen));
		key[klen - 1] ^= 0x01;
		tw_aes_encrypt_blocks(&ectx, got, pt, n / 16);
		for (size_t i = 0; i < n; i += 16)
			CHECK(memcmp(got + i, ct + i, 16) != 0);
		tw_aes_wipe(&ctx);
		tw_aes_wipe(&ectx);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- API contract ---- */

static void test_api(void)
{
	static const size_t bad[] = { 0, 1, 8, 15, 17, 20, 23, 24, 25, 31, 33, 48, 64 };
	struct tw_aes_ctx ctx;
	uint8_t key[64] = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(tw_aes_init(&ctx, key, bad[i]), TW_ERR_LENGTH);
		CHECK_ERR(tw_aes_init_enc(&ctx, key, bad[i]), TW_ERR_LENGTH);
		if (bad[i] != 24)
			CHECK_ERR(tw_aes_init_any(&ctx, key, bad[i]), TW_ERR_LENGTH);
	}
	CHECK_OK(tw_aes_init_any(&ctx, key, 24));
	CHECK_ERR(tw_aes_init(NULL, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_aes_init(&ctx, NULL, 16), TW_ERR_INVAL);

	/* The default choice follows the CPU level. */
	CHECK_OK(tw_aes_init(&ctx, key, 16));
	CHECK(strcmp(tw_aes_impl_name(&ctx), impl_name[n_impl - 1]) == 0);

	/* Wipe leaves nothing of the schedule. */
	tw_test_random(key, 32);
	CHECK_OK(tw_aes_init(&ctx, key, 32));
	CHECK(!tw_ct_is_zero(&ctx, sizeof(ctx)));
	tw_aes_wipe(&ctx);
	CHECK(tw_ct_is_zero(&ctx, sizeof(ctx)));

	/* CTR with len 0 writes nothing. */
	uint8_t icb[16] = { 0 }, buf[4] = { 1, 2, 3, 4 };
	CHECK_OK(tw_aes_init(&ctx, key, 16));
	tw_aes_ctr(&ctx, icb, buf, buf, 0);
	CHECK(buf[0] == 1 && buf[3] == 4);
	tw_aes_wipe(&ctx);
}

/* ---- OpenSSL EVP cross-checks ---- */

static const EVP_CIPHER *evp_ecb(size_t klen)
{
	return klen == 16 ? EVP_aes_128_ecb() : klen == 24 ? EVP_aes_192_ecb()
							    : EVP_aes_256_ecb();
}

static const EVP_CIPHER *evp_ctr(size_t klen)
{
	return klen == 16 ? EVP_aes_128_ctr() : klen == 24 ? EVP_aes_192_ctr()
							    : EVP_aes_256_ctr();
}

static bool evp_run(const EVP_CIPHER *c, int enc, const uint8_t *key,
		    const uint8_t *iv, uint8_t *out, const uint8_t *in, size_t len)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;
	bool ok = x != NULL && EVP_CipherInit_ex(x, c, NULL, key, iv, enc) == 1 &&
		  EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
		  EVP_CipherUpdate(x, out, &l1, in, (int)len) == 1 &&
		  EVP_CipherFinal_ex(x, out + l1, &l2) == 1 &&
		  (size_t)(l1 + l2) == len;

	EVP_CIPHER_CTX_free(x);
	return ok;
}

/* Counter starts that carry across the 8-, 32-, 64- and 128-bit edges. */
static void random_icb(uint8_t icb[16], unsigned kind)
{
	tw_test_random(icb, 16);
	switch (kind % 6) {
	case 0:
		break;
	case 1: /* low 32 bits about to wrap */
		memset(icb + 12, 0xff, 4);
		icb[15] = (uint8_t)(0xff - (tw_test_random_u32() % 8));
		break;
	case 2: /* low 64 bits about to wrap: carry into the high half */
		memset(icb + 8, 0xff, 8);
		icb[15] = (uint8_t)(0xff - (tw_test_random_u32() % 8));
		break;
	case 3: /* whole 128-bit counter wraps to zero */
		memset(icb, 0xff, 16);
		icb[15] = (uint8_t)(0xff - (tw_test_random_u32() % 8));
		break;
	case 4: /* a 16-block VAES step fits, then the low 64 bits carry */
		memset(icb + 8, 0xff, 8);
		icb[15] = (uint8_t)(0xff - 16 - (tw_test_random_u32() % 24));
		break;
	default: /* low byte wraps only */
		icb[15] = 0xfe;
		break;
	}
}

static void test_evp(void)
{
	static const size_t klens[] = { 16, 24, 32 };
	uint8_t key[32], icb[16], in[700], ours[700], ref[700];
	bool all_ecb = true, all_dec = true, all_ctr = true, evp_ok = true;

	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		for (int iter = 0; iter < 300; iter++) {
			size_t klen = klens[iter % 3];
			struct tw_aes_ctx ctx;

			tw_test_random(key, klen);
			if (!CHECK_OK(tw_aes_init_any(&ctx, key, klen)))
				break;
			/* ECB: 0..43 blocks covers the 8-way and 4-way tails. */
			size_t nb = tw_test_random_u32() % 44;
			tw_test_random(in, 16 * nb);
			tw_aes_encrypt_blocks(&ctx, ours, in, nb);
			evp_ok &= evp_run(evp_ecb(klen), 1, key, NULL, ref, in, 16 * nb);
			all_ecb &= memcmp(ours, ref, 16 * nb) == 0;
			tw_aes_decrypt_blocks(&ctx, ours, in, nb);
			evp_ok &= evp_run(evp_ecb(klen), 0, key, NULL, ref, in, 16 * nb);
			all_dec &= memcmp(ours, ref, 16 * nb) == 0;
			/* CTR: any length, counters across carry edges. */
			size_t len = tw_test_random_u32() % sizeof(in);
			random_icb(icb, (unsigned)iter);
			tw_test_random(in, len);
			tw_aes_ctr(&ctx, icb, ours, in, len);
			evp_ok &= evp_run(evp_ctr(klen), 1, key, icb, ref, in, len);
			all_ctr &= memcmp(ours, ref, len) == 0;
			/* in place gives the same */
			memcpy(ours, in, len);
			tw_aes_ctr(&ctx, icb, ours, ours, len);
			all_ctr &= memcmp(ours, ref, len) == 0;
			tw_aes_wipe(&ctx);
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(evp_ok);
	CHECK(all_ecb);
	CHECK(all_dec);
	CHECK(all_ctr);
}

/*
 * CBC encryption (SP 800-38A §6.2), one message and many side by side,
 * against EVP AES-CBC: batches of 0..19 messages of 0..12 blocks (the
 * interleaved runs end at different blocks), AES-128 with AES-256 mixed
 * in (a run of AES-NI contexts breaks at a change of round count), and a
 * tail shorter than a block left untouched.
 */
static void test_cbc(void)
{
	enum { N = 19, MAXB = 12 };
	static uint8_t key[N][32], iv[N][16], in[N][16 * MAXB + 7], buf[N][16 * MAXB + 7],
		ref[16 * MAXB];
	bool ok = true, evp_ok = true;

	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		for (int iter = 0; iter < 60; iter++) {
			struct tw_aes_ctx ctx[N];
			const struct tw_aes_ctx *kp[N];
			const uint8_t *ivp[N];
			uint8_t *bp[N];
			size_t len[N], n = (size_t)iter % (N + 1);

			tw_test_random(key, sizeof(key));
			tw_test_random(iv, sizeof(iv));
			tw_test_random(in, sizeof(in));
			for (size_t i = 0; i < n; i++) {
				size_t kl = (iter + i) % 5 == 3 ? 32 : 16;

				if (!CHECK_OK(tw_aes_init_enc(&ctx[i], key[i], kl)))
					return;
				kp[i] = &ctx[i];
				ivp[i] = iv[i];
				bp[i] = buf[i];
				len[i] = 16 * (tw_test_random_u32() % (MAXB + 1)) +
					 (i == 2 ? 7 : 0);
				memcpy(buf[i], in[i], sizeof(in[i]));
			}
			if (n == 1)
				tw_aes_cbc_encrypt(kp[0], ivp[0], bp[0], len[0]);
			else
				tw_aes_cbc_encrypt_many(kp, ivp, bp, len, n);
			for (size_t i = 0; i < n; i++) {
				size_t kl = (iter + i) % 5 == 3 ? 32 : 16, whole = len[i] / 16 * 16;

				evp_ok &= evp_run(kl == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc(), 1,
						  key[i], iv[i], ref, in[i], whole);
				ok &= memcmp(buf[i], ref, whole) == 0;
				ok &= memcmp(buf[i] + whole, in[i] + whole, sizeof(in[i]) - whole) == 0;
				tw_aes_wipe(&ctx[i]);
			}
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(evp_ok);
	CHECK(ok);
}

/* ---- portable vs AES-NI in one process ---- */

static void test_impls_agree(void)
{
	uint8_t key[32], icb[16], in[600], a[600], b[600];
	bool same = true;

	if (n_impl < 2) {
		tw_note("AES-NI not enabled at this level: portable-only run");
		return;
	}
	for (int iter = 0; iter < 300; iter++) {
		size_t klen = (iter & 1) ? 32 : 16;
		struct tw_aes_ctx pc, nc;
		int m = 1 + iter % (n_impl - 1);

		tw_test_random(key, klen);
		tw_cpu_restrict(0);
		CHECK_OK(tw_aes_init(&pc, key, klen));
		tw_cpu_restrict(impl_mask[m]);
		CHECK_OK(tw_aes_init(&nc, key, klen));
		same &= strcmp(tw_aes_impl_name(&pc), "ct64") == 0 &&
			strcmp(tw_aes_impl_name(&nc), impl_name[m]) == 0;
		size_t nb = 1 + tw_test_random_u32() % 37;
		tw_test_random(in, 16 * nb);
		tw_aes_encrypt_blocks(&pc, a, in, nb);
		tw_aes_encrypt_blocks(&nc, b, in, nb);
		same &= memcmp(a, b, 16 * nb) == 0;
		tw_aes_decrypt_blocks(&pc, a, in, nb);
		tw_aes_decrypt_blocks(&nc, b, in, nb);
		same &= memcmp(a, b, 16 * nb) == 0;
		size_t len = tw_test_random_u32() % sizeof(in);
		random_icb(icb, (unsigned)iter);
		tw_test_random(in, len);
		tw_aes_ctr(&pc, icb, a, in, len);
		tw_aes_ctr(&nc, icb, b, in, len);
		same &= memcmp(a, b, len) == 0;
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(same);
}

void test_main(void)
{
	impls_setup();
	CHECK(tv_run_file("aes.vec", run_vector) == 10);
	test_api();
	test_evp();
	test_cbc();
	test_impls_agree();
}
