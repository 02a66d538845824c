/*
 * Tests of AES-CMAC (RFC 4493 / SP 800-38B): the RFC and NIST examples on
 * every AES implementation (one-shot, streamed byte by byte and at every
 * split point, subkeys), verification with full and truncated tags, every
 * single-bit tag flip rejected, bad key and tag lengths, and OpenSSL
 * EVP_MAC "CMAC" on random keys (128/192/256) and messages 0..300 octets
 * fed in random pieces.
 */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cmac.h"
#include "twag/cpu.h"
#include "twag/err.h"

static uint32_t impl_mask[2];
static int n_impl;

static void run_vector(const struct tv_case *c)
{
	uint8_t key[32], msg[64], tag[16], got[16], bad[16];
	size_t kl = tv_hex(c, "key", key, sizeof(key));
	size_t ml = tv_has(c, "msg") ? tv_hex(c, "msg", msg, sizeof(msg)) : 0;
	struct tw_cmac_ctx ctx;

	CHECK(tv_hex(c, "tag", tag, sizeof(tag)) == 16);
	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		memset(got, 0, sizeof(got));
		CHECK_OK(tw_cmac(got, key, kl, msg, ml));
		TV_EXPECT(c, "tag", got, 16);
		if (!CHECK_OK(tw_cmac_init(&ctx, key, kl)))
			continue;
		if (tv_has(c, "k1")) {
			TV_EXPECT(c, "k1", ctx.k1, 16);
			TV_EXPECT(c, "k2", ctx.k2, 16);
		}
		/* Every split point, then byte by byte: the pending-block
		 * logic must not depend on how the input arrives. */
		bool all = true;
		for (size_t cut = 0; cut <= ml; cut++) {
			tw_cmac_update(&ctx, msg, cut);
			tw_cmac_update(&ctx, msg + cut, ml - cut);
			tw_cmac_final(&ctx, got);
			all &= memcmp(got, tag, 16) == 0;
		}
		for (size_t i = 0; i < ml; i++)
			tw_cmac_update(&ctx, msg + i, 1);
		tw_cmac_final(&ctx, got);
		all &= memcmp(got, tag, 16) == 0;
		/* A discarded partial message leaves no trace. */
		tw_cmac_update(&ctx, "junk", 4);
		tw_cmac_reset(&ctx);
		tw_cmac_update(&ctx, msg, ml);
		tw_cmac_final(&ctx, got);
		all &= memcmp(got, tag, 16) == 0;
		CHECK(all);

		/* Verify: full and truncated tags; every bit flip caught. */
		CHECK_OK(tw_cmac_verify(&ctx, tag, 16, msg, ml));
		CHECK_OK(tw_cmac_verify(&ctx, tag, 8, msg, ml));
		CHECK_ERR(tw_cmac_verify(&ctx, tag, 7, msg, ml), TW_ERR_LENGTH);
		CHECK_ERR(tw_cmac_verify(&ctx, tag, 17, msg, ml), TW_ERR_LENGTH);
		bool all_auth = true;
		for (unsigned bit = 0; bit < 128; bit++) {
			memcpy(bad, tag, 16);
			bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			all_auth &= tw_cmac_verify(&ctx, bad, 16, msg, ml) == TW_ERR_AUTH;
		}
		CHECK(all_auth);
		/* A changed message or key fails too. */
		if (ml > 0) {
			msg[ml - 1] ^= 1;
			CHECK_ERR(tw_cmac_verify(&ctx, tag, 16, msg, ml), TW_ERR_AUTH);
			msg[ml - 1] ^= 1;
			CHECK_ERR(tw_cmac_verify(&ctx, tag, 16, msg, ml - 1), TW_ERR_AUTH);
		}
		tw_cmac_wipe(&ctx);
		CHECK(tw_ct_is_zero(&ctx, sizeof(ctx)));
		key[0] ^= 0x01;
		CHECK_OK(tw_cmac(got, key, kl, msg, ml));
		CHECK(memcmp(got, tag, 16) != 0);
		key[0] ^= 0x01;
	}
	tw_cpu_restrict(UINT32_MAX);
}

static void test_args(void)
{
	uint8_t key[33] = { 0 }, tag[16];
	struct tw_cmac_ctx ctx;
	static const size_t bad_lens[] = { 0, 1, 8, 15, 17, 20, 23, 25, 31, 33 };

	for (size_t i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]); i++) {
		memset(tag, 0xaa, sizeof(tag));
		CHECK_ERR(tw_cmac(tag, key, bad_lens[i], key, 4), TW_ERR_LENGTH);
		CHECK(tw_ct_is_zero(tag, sizeof(tag)));
		CHECK_ERR(tw_cmac_init(&ctx, key, bad_lens[i]), TW_ERR_LENGTH);
	}
	CHECK_ERR(tw_cmac_init(&ctx, NULL, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_cmac_init(NULL, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_cmac(tag, key, 16, NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_cmac(tag, key, 16, NULL, 0));
	if (CHECK_OK(tw_cmac_init(&ctx, key, 16))) {
		CHECK_ERR(tw_cmac_verify(&ctx, NULL, 16, key, 1), TW_ERR_INVAL);
		CHECK_ERR(tw_cmac_verify(&ctx, tag, 16, NULL, 1), TW_ERR_INVAL);
		tw_cmac_wipe(&ctx);
	}
}

/* ---- OpenSSL EVP_MAC "CMAC" reference ---- */

static int evp_cmac(uint8_t out[16], const uint8_t *key, size_t kl,
		    const uint8_t *msg, size_t len)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *x = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
	const char *cipher = kl == 16 ? "AES-128-CBC" : kl == 24 ? "AES-192-CBC" : "AES-256-CBC";
	OSSL_PARAM params[2];
	size_t ol = 0;
	int rc = -1;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)cipher, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (x != NULL && EVP_MAC_init(x, key, kl, params) == 1 &&
	    EVP_MAC_update(x, msg, len) == 1 && EVP_MAC_final(x, out, &ol, 16) == 1 &&
	    ol == 16)
		rc = 0;
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(mac);
	return rc;
}

static void test_openssl(void)
{
	static const size_t kls[] = { 16, 24, 32 };
	uint8_t key[32], msg[300], ref[16], got[16], got2[16];
	struct tw_cmac_ctx ctx;
	bool all_ok = true, all_eq = true;
	int n = 0;

	for (int iter = 0; iter < 300; iter++) {
		size_t kl = kls[iter % 3];
		size_t len = iter < 40 ? (size_t)iter : tw_test_random_u32() % sizeof(msg);

		tw_test_random(key, kl);
		tw_test_random(msg, len);
		if (evp_cmac(ref, key, kl, msg, len) != 0) {
			CHECK(!"OpenSSL CMAC failed");
			return;
		}
		for (int m = 0; m < n_impl; m++) {
			tw_cpu_restrict(impl_mask[m]);
			all_ok &= tw_cmac(got, key, kl, msg, len) == TW_OK;
			all_eq &= memcmp(got, ref, 16) == 0;
			/* The same message in random pieces through one context. */
			all_ok &= tw_cmac_init(&ctx, key, kl) == TW_OK;
			for (size_t off = 0; off < len;) {
				size_t piece = 1 + tw_test_random_u32() % 40;

				if (piece > len - off)
					piece = len - off;
				tw_cmac_update(&ctx, msg + off, piece);
				off += piece;
			}
			tw_cmac_final(&ctx, got2);
			all_eq &= memcmp(got2, ref, 16) == 0;
			all_ok &= tw_cmac_verify(&ctx, ref, 16, msg, len) == TW_OK;
			tw_cmac_wipe(&ctx);
			n++;
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);
	CHECK(all_eq);
	CHECK(n >= 300);
}

void test_main(void)
{
	impl_mask[0] = 0;
	n_impl = 1;
	if (tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41))
		impl_mask[n_impl++] = UINT32_MAX;
	CHECK(tv_run_file("cmac.vec", run_vector) == 15);
	test_args();
	test_openssl();
}
