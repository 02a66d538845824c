/*
 * Tests of the RADIUS accounting authenticators (RFC 2866 §3; the
 * Message-Authenticator of an Accounting-Request as RFC 5176 §3.3,
 * FreeRADIUS and hostapd compute it: over a zero Authenticator field).
 *
 * RFC 2866 publishes no example packet with values, so every expected
 * value is computed at test time by independent code, on random packets:
 * - OpenSSL (EVP md5, HMAC(EVP_md5())) from the formulas;
 * - Python's hashlib/hmac (tests/vectors/radius_acct/ref.py), given the
 *   packets this program builds;
 * and negative cases beside them: every bit of a packet flipped, a wrong
 * secret, a wrong or misplaced Message-Authenticator, another Code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/radius.h"

enum { N_RANDOM = 200, N_PY = 48 };

static void ossl_md5(uint8_t out[16], const uint8_t *a, size_t al, const uint8_t *b, size_t bl,
		     const uint8_t *c, size_t cl)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;

	if (!CHECK(ctx != NULL))
		return;
	CHECK(EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 && EVP_DigestUpdate(ctx, a, al) == 1 &&
	      EVP_DigestUpdate(ctx, b, bl) == 1 && EVP_DigestUpdate(ctx, c, cl) == 1 &&
	      EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == 16);
	EVP_MD_CTX_free(ctx);
}

static void ossl_hmac_md5(uint8_t out[16], const uint8_t *key, size_t kl, const uint8_t *msg,
			  size_t ml)
{
	unsigned int n = 0;
	static const uint8_t none[1];

	CHECK(HMAC(EVP_md5(), kl ? key : none, (int)kl, msg, ml, out, &n) != NULL && n == 16);
}

/* A random Accounting-Request: Acct-Status-Type, Acct-Session-Id, random
 * other attributes (never 79/80), a Message-Authenticator first when ma.
 * Returns its length (finished by the library). */
static size_t random_request(uint8_t *buf, size_t max, const struct tw_radius_secret *s, bool ma,
			     size_t *ma_off)
{
	struct tw_radius_builder b;
	uint8_t junk[16], v[253];
	size_t len = 0;
	unsigned n = tw_test_random_u32() % 12;

	tw_test_random(junk, sizeof(junk));
	tw_radius_build_init(&b, buf, max, TW_RADIUS_ACCOUNTING_REQUEST,
			     (uint8_t)tw_test_random_u32(), junk, ma);
	*ma_off = b.msg_auth_off;
	tw_radius_add_u32(&b, TW_RADIUS_ACCT_STATUS_TYPE, 1 + tw_test_random_u32() % 3);
	tw_radius_add(&b, TW_RADIUS_ACCT_SESSION_ID, "sess-1", 6);
	for (unsigned i = 0; i < n; i++) {
		uint8_t t = (uint8_t)(1 + tw_test_random_u32() % 254);
		size_t vl = tw_test_random_u32() % 64;

		if (t == TW_RADIUS_EAP_MESSAGE || t == TW_RADIUS_MESSAGE_AUTHENTICATOR)
			t = TW_RADIUS_CLASS;
		tw_test_random(v, vl);
		tw_radius_add(&b, t, v, vl);
	}
	if (tw_radius_finish_acct_request_ctx(&b, s, &len) != TW_OK)
		return 0;
	return len;
}

/* What OpenSSL says the two authenticators of pkt are. */
static void expected(const uint8_t *pkt, size_t len, size_t ma_off, const uint8_t *sec,
		     size_t sl, uint8_t ra[16], uint8_t ma[16])
{
	uint8_t tmp[TW_RADIUS_MAX_LEN];

	memcpy(tmp, pkt, len);
	memset(tmp + 4, 0, 16);
	if (ma_off != 0) {
		memset(tmp + ma_off, 0, 16);
		ossl_hmac_md5(ma, sec, sl, tmp, len);
		memcpy(tmp + ma_off, ma, 16);
	}
	/* MD5(Code | Identifier | Length | 16 zero octets | Attributes | Secret) */
	ossl_md5(ra, tmp, len, sec, sl, NULL, 0);
}

static void test_random_requests(void)
{
	uint8_t buf[TW_RADIUS_MAX_LEN], sec[64], ra[16], ma[16];

	for (int i = 0; i < N_RANDOM; i++) {
		struct tw_radius_secret s;
		struct tw_radius_pkt p;
		size_t sl = 1 + tw_test_random_u32() % 64, ma_off = 0, len;
		bool with_ma = (i & 1) != 0;

		tw_test_random(sec, sl);
		if (!CHECK_OK(tw_radius_secret_init(&s, sec, sl)))
			continue;
		len = random_request(buf, sizeof(buf), &s, with_ma, &ma_off);
		if (!CHECK(len >= 20))
			continue;
		CHECK((ma_off != 0) == with_ma);
		expected(buf, len, ma_off, sec, sl, ra, ma);
		CHECK_MEM(buf + 4, ra, 16);
		if (with_ma)
			CHECK_MEM(buf + ma_off, ma, 16);
		if (!CHECK_OK(tw_radius_decode(&p, buf, len)))
			continue;
		CHECK(tw_radius_acct_authenticator_ok(&p, &s));
		CHECK(tw_radius_acct_msg_auth_ok(&p, &s));
		CHECK_OK(tw_radius_verify_acct_request_ctx(&p, &s));

		/* every bit of a few random octets, and the header: the packet
		 * either no longer decodes or no longer verifies */
		for (int k = 0; k < 24; k++) {
			size_t off = k < 20 ? (size_t)k : tw_test_random_u32() % len;
			uint8_t bit = (uint8_t)(1u << (tw_test_random_u32() % 8));
			struct tw_radius_pkt q;

			buf[off] ^= bit;
			if (tw_radius_decode(&q, buf, len) == TW_OK)
				CHECK_ERR(tw_radius_verify_acct_request_ctx(&q, &s), TW_ERR_AUTH);
			buf[off] ^= bit;
		}
		/* another secret */
		{
			struct tw_radius_secret o;

			sec[0] ^= 1;
			CHECK_OK(tw_radius_secret_init(&o, sec, sl));
			CHECK(!tw_radius_acct_authenticator_ok(&p, &o));
			if (with_ma)
				CHECK(!tw_radius_acct_msg_auth_ok(&p, &o));
			CHECK_ERR(tw_radius_verify_acct_request_ctx(&p, &o), TW_ERR_AUTH);
			tw_radius_secret_wipe(&o);
		}
		tw_radius_secret_wipe(&s);
	}
}

/* A Message-Authenticator that is wrong while the Request Authenticator
 * is right (recomputed over the wrong value): only the MA check fails. */
static void test_bad_msg_auth(void)
{
	uint8_t buf[TW_RADIUS_MAX_LEN], sec[] = "acct-secret", ra[16];
	struct tw_radius_secret s;
	struct tw_radius_pkt p;
	size_t ma_off = 0, len;

	CHECK_OK(tw_radius_secret_init(&s, sec, sizeof(sec) - 1));
	len = random_request(buf, sizeof(buf), &s, true, &ma_off);
	CHECK(len > 0 && ma_off != 0);
	buf[ma_off + 3] ^= 0x40;
	memset(buf + 4, 0, 16);
	ossl_md5(ra, buf, len, sec, sizeof(sec) - 1, NULL, 0);
	memcpy(buf + 4, ra, 16);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK(tw_radius_acct_authenticator_ok(&p, &s));
	CHECK(!tw_radius_acct_msg_auth_ok(&p, &s));
	CHECK_ERR(tw_radius_verify_acct_request_ctx(&p, &s), TW_ERR_AUTH);

	/* the MA computed the way Access-Requests compute it (over the
	 * Request Authenticator as sent) is not accepted */
	{
		uint8_t tmp[TW_RADIUS_MAX_LEN], mac[16];

		len = random_request(buf, sizeof(buf), &s, true, &ma_off);
		memcpy(tmp, buf, len);
		memset(tmp + ma_off, 0, 16);
		ossl_hmac_md5(mac, sec, sizeof(sec) - 1, tmp, len);
		memcpy(buf + ma_off, mac, 16);
		memset(buf + 4, 0, 16);
		ossl_md5(ra, buf, len, sec, sizeof(sec) - 1, NULL, 0);
		memcpy(buf + 4, ra, 16);
		CHECK_OK(tw_radius_decode(&p, buf, len));
		CHECK(tw_radius_acct_authenticator_ok(&p, &s));
		CHECK(!tw_radius_acct_msg_auth_ok(&p, &s));
	}
	/* another Code with a right authenticator: not an Accounting-Request */
	len = random_request(buf, sizeof(buf), &s, false, &ma_off);
	buf[0] = TW_RADIUS_ACCESS_REQUEST;
	memset(buf + 4, 0, 16);
	ossl_md5(ra, buf, len, sec, sizeof(sec) - 1, NULL, 0);
	memcpy(buf + 4, ra, 16);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK(!tw_radius_acct_authenticator_ok(&p, &s));
	/* NULLs */
	CHECK_ERR(tw_radius_verify_acct_request_ctx(NULL, &s), TW_ERR_INVAL);
	CHECK_ERR(tw_radius_verify_acct_request_ctx(&p, NULL), TW_ERR_INVAL);
	{
		struct tw_radius_builder b;
		size_t n = 0;

		tw_radius_build_init(&b, buf, 10, TW_RADIUS_ACCOUNTING_REQUEST, 1, ra, false);
		CHECK_ERR(tw_radius_finish_acct_request_ctx(&b, &s, &n), TW_ERR_OVERFLOW);
	}
	tw_radius_secret_wipe(&s);
}

/* The Accounting-Response (RFC 2866 §3) from the existing response
 * builder, against OpenSSL and the client-side check. */
static void test_response(void)
{
	uint8_t req[TW_RADIUS_MAX_LEN], resp[TW_RADIUS_MAX_LEN], sec[32], ra[16];

	for (int i = 0; i < 50; i++) {
		struct tw_radius_secret s;
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t sl = 1 + tw_test_random_u32() % 32, ma_off, rl, n = 0;

		tw_test_random(sec, sl);
		CHECK_OK(tw_radius_secret_init(&s, sec, sl));
		rl = random_request(req, sizeof(req), &s, false, &ma_off);
		tw_radius_build_init(&b, resp, sizeof(resp), TW_RADIUS_ACCOUNTING_RESPONSE, req[1],
				     req + 4, false);
		if (i & 1)
			tw_radius_add(&b, TW_RADIUS_REPLY_MESSAGE, "ok", 2);
		CHECK_OK(tw_radius_finish_response_ctx(&b, &s, &n));
		CHECK(rl > 0 && n >= 20 && resp[0] == 5 && resp[1] == req[1]);
		ossl_md5(ra, resp, 4, req + 4, 16, resp + 20, n - 20);
		{
			uint8_t full[16];
			EVP_MD_CTX *ctx = EVP_MD_CTX_new();
			unsigned int dl = 0;

			CHECK(ctx != NULL && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 &&
			      EVP_DigestUpdate(ctx, resp, 4) == 1 &&
			      EVP_DigestUpdate(ctx, req + 4, 16) == 1 &&
			      EVP_DigestUpdate(ctx, resp + 20, n - 20) == 1 &&
			      EVP_DigestUpdate(ctx, sec, sl) == 1 &&
			      EVP_DigestFinal_ex(ctx, full, &dl) == 1);
			EVP_MD_CTX_free(ctx);
			CHECK_MEM(resp + 4, full, 16);
		}
		CHECK_OK(tw_radius_decode(&p, resp, n));
		CHECK_OK(tw_radius_verify_response_ctx(&p, req + 4, &s, false));
		tw_radius_secret_wipe(&s);
	}
}

/* The same authenticators from Python's hashlib/hmac at test time. */
static void hex_of(char *out, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", v[i]);
}

static void test_python(void)
{
	static uint8_t pkts[N_PY][1024], resp[N_PY][64];
	static size_t lens[N_PY], ma_offs[N_PY], resp_lens[N_PY];
	uint8_t secs[N_PY][32];
	size_t sls[N_PY];
	char path[] = "/tmp/twag-acct-ref.XXXXXX", cmd[512], line[256];
	char hx[2 * 1024 + 1], hs[65], ha[33];
	int fd = mkstemp(path), got = 0;
	FILE *f, *p;

	if (!CHECK(fd >= 0))
		return;
	f = fdopen(fd, "w");
	if (!CHECK(f != NULL)) {
		close(fd);
		unlink(path);
		return;
	}
	for (int i = 0; i < N_PY; i++) {
		struct tw_radius_secret s;
		struct tw_radius_builder b;

		sls[i] = 1 + tw_test_random_u32() % 32;
		tw_test_random(secs[i], sls[i]);
		CHECK_OK(tw_radius_secret_init(&s, secs[i], sls[i]));
		lens[i] = random_request(pkts[i], sizeof(pkts[i]), &s, (i % 3) != 0, &ma_offs[i]);
		hex_of(hx, pkts[i], lens[i]);
		hex_of(hs, secs[i], sls[i]);
		fprintf(f, "req %s %s\n", hx, hs);
		tw_radius_build_init(&b, resp[i], sizeof(resp[i]), TW_RADIUS_ACCOUNTING_RESPONSE,
				     pkts[i][1], pkts[i] + 4, false);
		CHECK_OK(tw_radius_finish_response_ctx(&b, &s, &resp_lens[i]));
		hex_of(hx, resp[i], resp_lens[i]);
		hex_of(ha, pkts[i] + 4, 16);
		fprintf(f, "resp %s %s %s\n", hx, ha, hs);
		tw_radius_secret_wipe(&s);
	}
	CHECK(fclose(f) == 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s/radius_acct/ref.py' < '%s'", TW_VEC_DIR, path);
	p = popen(cmd, "r");
	if (!CHECK(p != NULL)) {
		unlink(path);
		return;
	}
	for (int i = 0; i < 2 * N_PY && fgets(line, sizeof(line), p) != NULL; i++) {
		int k = i / 2;
		char want_ra[33], want_ma[33];

		if (i % 2 == 0) {
			hex_of(want_ra, pkts[k] + 4, 16);
			if (ma_offs[k] != 0)
				hex_of(want_ma, pkts[k] + ma_offs[k], 16);
			else
				snprintf(want_ma, sizeof(want_ma), "-");
		} else {
			hex_of(want_ra, resp[k] + 4, 16);
			snprintf(want_ma, sizeof(want_ma), "-");
		}
		snprintf(cmd, sizeof(cmd), "ra=%s ma=%s\n", want_ra, want_ma);
		CHECK(strcmp(line, cmd) == 0);
		got++;
	}
	CHECK(pclose(p) == 0);
	CHECK(got == 2 * N_PY);
	unlink(path);
}

void test_main(void)
{
	test_random_requests();
	test_bad_msg_auth();
	test_response();
	test_python();
}
