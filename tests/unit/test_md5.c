/*
 * Tests of MD5 (RFC 1321 Appendix A.5) and HMAC-MD5 (RFC 2202 §2), with
 * cross-checks against OpenSSL libcrypto (EVP md5, HMAC) on random inputs
 * and lengths, and split updates.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/md5.h"


static void md5_case(const struct tv_case *c)
{
	uint8_t msg[128], d[16], d2[16];
	size_t n = tv_bytes(c, "msg", msg, sizeof(msg));
	struct tw_md5_ctx ctx;

	tw_md5(d, msg, n);
	TV_EXPECT(c, "digest", d, 16);
	/* The same message fed one octet at a time. */
	tw_md5_init(&ctx);
	for (size_t i = 0; i < n; i++)
		tw_md5_update(&ctx, msg + i, 1);
	tw_md5_final(&ctx, d2);
	CHECK_MEM(d, d2, 16);
	/* A flipped bit changes the digest. */
	if (n > 0) {
		msg[n / 2] ^= 0x10;
		tw_md5(d2, msg, n);
		CHECK(memcmp(d, d2, 16) != 0);
	}
}

static void hmac_case(const struct tv_case *c)
{
	uint8_t key[128], data[128], mac[16];
	size_t kn = tv_bytes(c, "key", key, sizeof(key));
	size_t dn = tv_bytes(c, "data", data, sizeof(data));
	struct tw_hmac_md5_ctx ctx;

	tw_hmac_md5(mac, key, kn, data, dn);
	TV_EXPECT(c, "digest", mac, 16);
	if (tv_has(c, "digest96"))
		TV_EXPECT(c, "digest96", mac, 12);
	/* A keyed context serves several messages. */
	tw_hmac_md5_init(&ctx, key, kn);
	tw_hmac_md5_update(&ctx, "junk", 4);
	tw_hmac_md5_reset(&ctx);
	for (int r = 0; r < 2; r++) {
		tw_hmac_md5_update(&ctx, data, dn / 2);
		tw_hmac_md5_update(&ctx, data + dn / 2, dn - dn / 2);
		tw_hmac_md5_final(&ctx, mac);
		TV_EXPECT(c, "digest", mac, 16);
	}
	tw_hmac_md5_wipe(&ctx);
	/* Wrong key: a different MAC. */
	key[0] ^= 1;
	tw_hmac_md5(mac, key, kn, data, dn);
	uint8_t exp[16];
	CHECK(tv_hex(c, "digest", exp, 16) == 16 && memcmp(exp, mac, 16) != 0);
}

/* Random lengths around the 55/56/64-octet padding edges and longer. */
static void cross_openssl(void)
{
	static uint8_t msg[3000];
	unsigned bad = 0, runs = 0;

	tw_test_random(msg, sizeof(msg));
	for (size_t n = 0; n < 200; n++, runs++) {
		uint8_t a[16], b[16];
		unsigned bl = 0;

		tw_md5(a, msg, n);
		if (EVP_Digest(msg, n, b, &bl, EVP_md5(), NULL) != 1 || bl != 16)
			bad++;
		bad += memcmp(a, b, 16) != 0;
	}
	for (int i = 0; i < 300; i++, runs++) {
		uint8_t key[100], a[16], b[16];
		size_t kn = tw_test_random_u32() % sizeof(key);
		size_t n = tw_test_random_u32() % sizeof(msg);
		unsigned bl = 0;
		struct tw_md5_ctx ctx;

		tw_test_random(key, kn);
		tw_hmac_md5(a, key, kn, msg, n);
		if (HMAC(EVP_md5(), key, (int)kn, msg, n, b, &bl) == NULL || bl != 16)
			bad++;
		bad += memcmp(a, b, 16) != 0;
		/* Split updates at a random point. */
		size_t cut = n ? tw_test_random_u32() % n : 0;
		tw_md5_init(&ctx);
		tw_md5_update(&ctx, msg, cut);
		tw_md5_update(&ctx, msg + cut, n - cut);
		tw_md5_final(&ctx, a);
		EVP_Digest(msg, n, b, &bl, EVP_md5(), NULL);
		bad += memcmp(a, b, 16) != 0;
	}
	CHECK(runs == 500);
	CHECK(bad == 0);
}

/*
 * Multi-buffer MD5 (tw_md5_mb): batches of 1..40 messages of random
 * lengths, each padded here (RFC 1321 §3.1-3.2) and split into up to four
 * segments at random block boundaries (some empty), run from the initial
 * value; every digest equals OpenSSL's MD5 of its message. Also a job with
 * no blocks at all (h unchanged) and a NULL job list.
 */
static void multi_buffer(void)
{
	enum { MAXN = 40, MAXLEN = 700 };
	static uint8_t msg[MAXN][MAXLEN + 128], spread[MAXN][MAXLEN + 128 + 4 * 64];
	static const uint32_t iv[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	struct tw_md5_job jobs[MAXN + 1];
	size_t len[MAXN];
	unsigned bad = 0, runs = 0;

	for (int round = 0; round < 200; round++) {
		size_t n = 1 + tw_test_random_u32() % MAXN;

		for (size_t i = 0; i < n; i++) {
			len[i] = tw_test_random_u32() % MAXLEN;
			tw_test_md_padded(msg[i], len[i], 0, spread[i], jobs[i].seg, jobs[i].nblk);
			memcpy(jobs[i].h, iv, sizeof(iv));
		}
		/* a job with nothing to do, in the middle */
		memcpy(jobs[n].h, iv, sizeof(iv));
		memset(jobs[n].nblk, 0, sizeof(jobs[n].nblk));
		tw_md5_mb(jobs, n + 1);
		bad += memcmp(jobs[n].h, iv, sizeof(iv)) != 0;
		for (size_t i = 0; i < n; i++, runs++) {
			uint8_t a[16], b[16];
			unsigned bl = 0;

			for (int w = 0; w < 4; w++)
				tw_store_le32(a + 4 * w, jobs[i].h[w]);
			if (EVP_Digest(msg[i], len[i], b, &bl, EVP_md5(), NULL) != 1 || bl != 16)
				bad++;
			bad += memcmp(a, b, 16) != 0;
		}
	}
	tw_md5_mb(NULL, 3);
	CHECK(runs > 1000);
	CHECK(bad == 0);
}

void test_main(void)
{
	CHECK(tv_run_file("md5.vec", md5_case) == 7);
	CHECK(tv_run_file("hmac_md5.vec", hmac_case) == 7);
	cross_openssl();
	/* every kernel the CPU offers: AVX-512 (16 lanes), AVX2 (two halves
	 * of 8), scalar */
	multi_buffer();
	tw_cpu_restrict(~(uint32_t)(TW_CPU_AVX512 | TW_CPU_VBMI));
	multi_buffer();
	tw_cpu_restrict(0);
	multi_buffer();
	tw_cpu_restrict(UINT32_MAX);
}
