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

/*
 * Lengths around each kernel's lane count (64, 256, 512 blocks: a pass is
 * as wide as the blocks at hand allow, on the widest path TWAG_CPU
 * leaves), decrypted out of place and in place and split in two calls,
 * against OpenSSL.
 */
static void lane_edges(void)
{
	static const size_t nblk[] = { 1, 2, 3, 4, 7, 63, 64, 65, 127, 255, 256, 257,
				       300, 511, 512, 513, 1025, 1600 };
	static uint8_t pt[1600 * 8], ct[1600 * 8], a[1600 * 8];
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(nblk) / sizeof(nblk[0]); i++) {
		size_t n = 8 * nblk[i], cut = 8 * (tw_test_random_u32() % (nblk[i] + 1));
		uint8_t key[24], iv[8], iv2[8];
		struct tw_des3_ctx ctx;

		tw_test_random(key, sizeof(key));
		tw_test_random(iv, sizeof(iv));
		tw_test_random(pt, n);
		bad += tw_des3_init(&ctx, key, 24) != TW_OK;
		bad += !evp_cbc(1, key, iv, pt, ct, n);
		memcpy(iv2, iv, 8);
		bad += tw_des3_cbc_encrypt(&ctx, iv2, a, pt, n) != TW_OK;
		bad += memcmp(a, ct, n) != 0;
		memcpy(iv2, iv, 8);
		bad += tw_des3_cbc_decrypt(&ctx, iv2, a, ct, n) != TW_OK;
		bad += memcmp(a, pt, n) != 0 || memcmp(iv2, ct + n - 8, 8) != 0;
		memcpy(a, ct, n);
		memcpy(iv2, iv, 8);
		bad += tw_des3_cbc_decrypt(&ctx, iv2, a, a, cut) != TW_OK;
		bad += tw_des3_cbc_decrypt(&ctx, iv2, a + cut, a + cut, n - cut) != TW_OK;
		bad += memcmp(a, pt, n) != 0;
		tw_des3_wipe(&ctx);
	}
	CHECK(bad == 0);
}

/*
 * tw_des3_cbc_encrypt_multi: chains of different lengths (none, one block,
 * many), as many as fill 64, 256 and 512 lanes and more than those (lanes
 * reused as chains end), some in place, each against OpenSSL on its own.
 */
static void multi(void)
{
	enum { MAXC = 700, MAXB = 24 };
	static uint8_t pt[MAXC][MAXB * 8], out[MAXC][MAXB * 8], ref[MAXB * 8];
	static uint8_t ivs[MAXC][8], iv0[MAXC][8];
	static struct tw_des3_cbc_chain ch[MAXC];
	static const size_t counts[] = { 1, 2, 17, 64, 65, 256, 257, 512, 513, MAXC };
	unsigned bad = 0, runs = 0;
	uint8_t key[24];
	struct tw_des3_ctx ctx;

	tw_test_random(key, sizeof(key));
	CHECK_OK(tw_des3_init(&ctx, key, 24));
	for (size_t t = 0; t < sizeof(counts) / sizeof(counts[0]); t++) {
		size_t n = counts[t];

		for (size_t i = 0; i < n; i++) {
			size_t len = 8 * (tw_test_random_u32() % (MAXB + 1));
			bool inplace = tw_test_random_u32() % 2;

			if (i == 0)
				len = 8;
			tw_test_random(pt[i], len);
			tw_test_random(iv0[i], 8);
			memcpy(ivs[i], iv0[i], 8);
			if (inplace)
				memcpy(out[i], pt[i], len);
			ch[i] = (struct tw_des3_cbc_chain){ .iv = ivs[i], .out = out[i],
							    .in = inplace ? out[i] : pt[i],
							    .len = len };
		}
		bad += tw_des3_cbc_encrypt_multi(&ctx, ch, n) != TW_OK;
		for (size_t i = 0; i < n; i++, runs++) {
			size_t len = ch[i].len;

			bad += !evp_cbc(1, key, iv0[i], pt[i], ref, len);
			bad += memcmp(out[i], ref, len) != 0;
			bad += memcmp(ivs[i], len ? ref + len - 8 : iv0[i], 8) != 0;
		}
	}
	CHECK(runs > 2000);
	CHECK(bad == 0);
	/* A length not a multiple of 8 anywhere: nothing is written. */
	memset(out[0], 0x5a, 16);
	ch[0] = (struct tw_des3_cbc_chain){ .iv = ivs[0], .out = out[0], .in = pt[0], .len = 16 };
	ch[1] = (struct tw_des3_cbc_chain){ .iv = ivs[1], .out = out[1], .in = pt[1], .len = 12 };
	CHECK_ERR(tw_des3_cbc_encrypt_multi(&ctx, ch, 2), TW_ERR_LENGTH);
	CHECK(out[0][0] == 0x5a && out[0][15] == 0x5a);
	ch[1].in = NULL;
	ch[1].len = 8;
	CHECK_ERR(tw_des3_cbc_encrypt_multi(&ctx, ch, 2), TW_ERR_INVAL);
	CHECK_ERR(tw_des3_cbc_encrypt_multi(NULL, ch, 1), TW_ERR_INVAL);
	CHECK_ERR(tw_des3_cbc_encrypt_multi(&ctx, NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_des3_cbc_encrypt_multi(&ctx, NULL, 0));
	tw_des3_wipe(&ctx);
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
	lane_edges();
	multi();
	bad_args();
}
