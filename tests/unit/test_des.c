/*
 * Tests of DES / Triple DES (FIPS 46-3, SP 800-67): NIST known answers
 * (SP 800-67 Appendix B, FIPS 81, SP 800-20), CBC against OpenSSL
 * des-ede3-cbc on random keys, IVs and lengths, in place and chained, and
 * argument checks.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/des.h"

static void des_case(const struct tv_case *c)
{
	uint8_t key[24], pt[64], ct[64], out[64];
	struct tw_des3_ctx ctx;
	size_t kn = tv_hex(c, "key", key, sizeof(key));
	size_t n = tv_hex(c, "plaintext", pt, sizeof(pt));

	if (!CHECK(kn == 24 && n % 8 == 0 && n > 0))
		return;
	CHECK_OK(tw_des3_init(&ctx, key, kn));
	for (size_t i = 0; i < n; i += 8)
		tw_des3_encrypt(&ctx, out + i, pt + i);
	TV_EXPECT(c, "ciphertext", out, n);
	CHECK(tv_hex(c, "ciphertext", ct, sizeof(ct)) == n);
	for (size_t i = 0; i < n; i += 8)
		tw_des3_decrypt(&ctx, out + i, ct + i);
	CHECK_MEM(out, pt, n);
	/* In place. */
	memcpy(out, pt, n);
	tw_des3_encrypt(&ctx, out, out);
	CHECK_MEM(out, ct, 8);
	/* A flipped key bit that is not a parity bit changes the result. */
	key[0] ^= 0x80;
	CHECK_OK(tw_des3_init(&ctx, key, kn));
	tw_des3_encrypt(&ctx, out, pt);
	CHECK(memcmp(out, ct, 8) != 0);
	/* A flipped parity bit (the low bit of each octet) does not. */
	key[0] ^= 0x81;
	CHECK_OK(tw_des3_init(&ctx, key, kn));
	tw_des3_encrypt(&ctx, out, pt);
	CHECK_MEM(out, ct, 8);
	tw_des3_wipe(&ctx);
}

static bool evp_cbc(int enc, const uint8_t key[24], const uint8_t iv[8],
		    const uint8_t *in, uint8_t *out, size_t len)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;
	bool ok = x != NULL &&
		  EVP_CipherInit_ex(x, EVP_des_ede3_cbc(), NULL, key, iv, enc) == 1 &&
		  EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
		  EVP_CipherUpdate(x, out, &l1, in, (int)len) == 1 &&
		  EVP_CipherFinal_ex(x, out + l1, &l2) == 1 && (size_t)(l1 + l2) == len;
	EVP_CIPHER_CTX_free(x);
	return ok;
}

static void cross_openssl(void)
{
	static uint8_t pt[2048], a[2048], b[2048];
	unsigned bad = 0, runs = 0;

	for (int i = 0; i < 200; i++, runs++) {
		uint8_t key[24], iv[8], iv2[8];
		size_t n = 8 * (tw_test_random_u32() % (sizeof(pt) / 8 + 1));
		struct tw_des3_ctx ctx;

		tw_test_random(key, sizeof(key));
		tw_test_random(iv, sizeof(iv));
		tw_test_random(pt, n);
		if (tw_des3_init(&ctx, key, 24) != TW_OK)
			bad++;
		memcpy(iv2, iv, 8);
		/* Two chained calls equal one. */
		size_t cut = 8 * (n ? tw_test_random_u32() % (n / 8 + 1) : 0);
		bad += tw_des3_cbc_encrypt(&ctx, iv2, a, pt, cut) != TW_OK;
		bad += tw_des3_cbc_encrypt(&ctx, iv2, a + cut, pt + cut, n - cut) != TW_OK;
		bad += !evp_cbc(1, key, iv, pt, b, n);
		bad += memcmp(a, b, n) != 0;
		if (n)
			bad += memcmp(iv2, a + n - 8, 8) != 0;
		/* Decrypt in place. */
		memcpy(iv2, iv, 8);
		bad += tw_des3_cbc_decrypt(&ctx, iv2, a, a, n) != TW_OK;
		bad += memcmp(a, pt, n) != 0;
		tw_des3_wipe(&ctx);
	}
	CHECK(runs == 200);
	CHECK(bad == 0);
}

static void bad_args(void)
{
	struct tw_des3_ctx ctx;
	uint8_t key[24] = { 0 }, iv[8] = { 0 }, buf[16] = { 0 };

	CHECK_ERR(tw_des3_init(&ctx, key, 16), TW_ERR_LENGTH);
	CHECK_ERR(tw_des3_init(&ctx, key, 25), TW_ERR_LENGTH);
	CHECK_ERR(tw_des3_init(&ctx, NULL, 24), TW_ERR_INVAL);
	CHECK_ERR(tw_des3_init(NULL, key, 24), TW_ERR_INVAL);
	CHECK_OK(tw_des3_init(&ctx, key, 24));
	CHECK_ERR(tw_des3_cbc_encrypt(&ctx, iv, buf, buf, 12), TW_ERR_LENGTH);
	CHECK_ERR(tw_des3_cbc_decrypt(&ctx, iv, buf, buf, 7), TW_ERR_LENGTH);
	CHECK_OK(tw_des3_cbc_encrypt(&ctx, iv, buf, buf, 0));
}

void test_main(void)
{
	CHECK(tv_run_file("des.vec", des_case) == 8);
	cross_openssl();
	bad_args();
}
