/*
 * Tests of RFC 5176 (January 2008) dynamic authorization in the RADIUS
 * codec: the Request Authenticator of a Disconnect-/CoA-Request (§2.3, as
 * RFC 2866 §3), its Message-Authenticator (§3.3), the check of the ACK/NAK
 * that answers it, and the Error-Cause names (§3.5).
 *
 * RFC 5176 publishes no packet with values, so every expected value comes
 * from independent code at test time:
 * - OpenSSL (EVP md5, HMAC(EVP_md5())) from the formulas, on random
 *   requests and on replies this program builds with OpenSSL alone;
 * - FreeRADIUS's radclient (when installed): the Disconnect-Request and
 *   CoA-Request it sends are checked here, and the ACK/NAK built by the
 *   library must satisfy radclient, which checks their authenticators;
 * and negative cases beside them: every bit of a packet flipped, a wrong
 * secret, the wrong Identifier or Code, an Error-Cause of a bad length.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/radius.h"

enum { N_RANDOM = 200 };

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

static void random_secret(struct tw_radius_secret *s, uint8_t *raw, size_t *len)
{
	*len = 1 + tw_test_random_u32() % 64;
	tw_test_random(raw, *len);
	CHECK_OK(tw_radius_secret_init(s, raw, *len));
}

/* A random Disconnect- or CoA-Request built by the library, with a
 * Message-Authenticator first when ma; checked against OpenSSL. */
static void one_request(void)
{
	struct tw_radius_secret s;
	struct tw_radius_builder b;
	struct tw_radius_pkt p;
	uint8_t raw[64], buf[TW_RADIUS_MAX_LEN], copy[TW_RADIUS_MAX_LEN], ra[16], mac[16], v[64];
	uint8_t junk[16];
	size_t sl, len = 0;
	bool ma = tw_test_random_u32() & 1;
	uint8_t code = (tw_test_random_u32() & 1) ? TW_RADIUS_DISCONNECT_REQUEST
						   : TW_RADIUS_COA_REQUEST;
	unsigned n = tw_test_random_u32() % 8;

	random_secret(&s, raw, &sl);
	tw_test_random(junk, sizeof(junk)); /* the init authenticator: ignored */
	tw_radius_build_init(&b, buf, sizeof(buf), code, (uint8_t)tw_test_random_u32(), junk, ma);
	tw_radius_add(&b, TW_RADIUS_USER_NAME, "0001010000000001@wlan.example", 29);
	tw_radius_add(&b, TW_RADIUS_ACCT_SESSION_ID, "5A2B-0001", 9);
	for (unsigned i = 0; i < n; i++) {
		size_t vl = tw_test_random_u32() % sizeof(v);

		tw_test_random(v, vl);
		tw_radius_add(&b, (uint8_t)(1 + tw_test_random_u32() % 78), v, vl);
	}
	if (!CHECK_OK(tw_radius_finish_dynauth_request_ctx(&b, &s, &len)))
		return;
	memcpy(copy, buf, len);
	memset(copy + 4, 0, 16);
	if (ma) {
		/* §3.3: HMAC-MD5 over the packet, Authenticator and the
		 * attribute's value as zeros; it comes first (offset 22) */
		CHECK(buf[20] == TW_RADIUS_MESSAGE_AUTHENTICATOR && buf[21] == 18);
		memset(copy + 22, 0, 16);
		ossl_hmac_md5(mac, raw, sl, copy, len);
		CHECK_MEM(mac, buf + 22, 16);
		memcpy(copy + 22, buf + 22, 16);
	}
	/* §2.3: MD5(Code | Identifier | Length | 16 zero octets | Attributes | Secret) */
	ossl_md5(ra, copy, len, raw, sl, NULL, 0);
	CHECK_MEM(ra, buf + 4, 16);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK(tw_radius_dynauth_request_ok(&p, &s));
	/* every bit flipped: refused (a flipped Code may stop being 40/43) */
	for (size_t bit = 0; bit < len * 8; bit += 1 + tw_test_random_u32() % 7) {
		memcpy(copy, buf, len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (tw_radius_decode(&p, copy, len) == TW_OK)
			CHECK(!tw_radius_dynauth_request_ok(&p, &s));
	}
	/* another secret */
	raw[0] ^= 1;
	{
		struct tw_radius_secret s2;

		CHECK_OK(tw_radius_secret_init(&s2, raw, sl));
		CHECK_OK(tw_radius_decode(&p, buf, len));
		CHECK(!tw_radius_dynauth_request_ok(&p, &s2));
		tw_radius_secret_wipe(&s2);
	}
	tw_radius_secret_wipe(&s);
}

/* A reply built with OpenSSL only: code, id, Error-Cause ec (0: none;
 * ec_len its value length), a Message-Authenticator when ma; returns its
 * length. */
static size_t ossl_reply(uint8_t *buf, uint8_t code, uint8_t id, const uint8_t req_auth[16],
			 const uint8_t *raw, size_t sl, uint32_t ec, size_t ec_len, bool ma)
{
	size_t len = 20, ma_off = 0;
	uint8_t mac[16], ra[16];

	buf[0] = code;
	buf[1] = id;
	memcpy(buf + 4, req_auth, 16);
	if (ma) {
		buf[len] = TW_RADIUS_MESSAGE_AUTHENTICATOR;
		buf[len + 1] = 18;
		ma_off = len + 2;
		memset(buf + ma_off, 0, 16);
		len += 18;
	}
	if (ec != 0) {
		buf[len] = TW_RADIUS_ERROR_CAUSE;
		buf[len + 1] = (uint8_t)(2 + ec_len);
		memset(buf + len + 2, 0, ec_len);
		if (ec_len >= 4)
			tw_store_be32(buf + len + 2, ec);
		len += 2 + ec_len;
	}
	buf[2] = (uint8_t)(len >> 8);
	buf[3] = (uint8_t)len;
	if (ma) {
		/* §3.3: over the packet with the Request Authenticator */
		ossl_hmac_md5(mac, raw, sl, buf, len);
		memcpy(buf + ma_off, mac, 16);
	}
	/* RFC 2865 §3: MD5(Code | ID | Length | RequestAuth | Attributes | Secret) */
	ossl_md5(ra, buf, len, raw, sl, NULL, 0);
	memcpy(buf + 4, ra, 16);
	return len;
}

static void one_reply(void)
{
	struct tw_radius_secret s;
	struct tw_radius_pkt p;
	struct tw_radius_dynauth_reply r;
	uint8_t raw[64], buf[256], copy[256], req_auth[16];
	size_t sl, len;
	bool coa = tw_test_random_u32() & 1, nak = tw_test_random_u32() & 1;
	bool ma = tw_test_random_u32() & 1;
	uint8_t rq = coa ? TW_RADIUS_COA_REQUEST : TW_RADIUS_DISCONNECT_REQUEST;
	uint8_t id = (uint8_t)tw_test_random_u32();
	uint32_t ec = nak ? TW_RADIUS_EC_SESSION_CONTEXT_NOT_FOUND : 0;

	random_secret(&s, raw, &sl);
	tw_test_random(req_auth, 16);
	len = ossl_reply(buf, (uint8_t)(rq + (nak ? 2 : 1)), id, req_auth, raw, sl, ec, 4, ma);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK_OK(tw_radius_dynauth_reply_check(&p, rq, id, req_auth, &s, &r));
	CHECK(r.ack == !nak);
	CHECK(r.has_error_cause == nak);
	CHECK(r.error_cause == ec);
	/* not this request's: another Identifier, the other kind's codes */
	CHECK_ERR(tw_radius_dynauth_reply_check(&p, rq, (uint8_t)(id + 1), req_auth, &s, &r),
		  TW_ERR_NOTFOUND);
	CHECK(!r.ack && !r.has_error_cause);
	CHECK_ERR(tw_radius_dynauth_reply_check(&p, coa ? TW_RADIUS_DISCONNECT_REQUEST
							: TW_RADIUS_COA_REQUEST,
						id, req_auth, &s, &r),
		  TW_ERR_NOTFOUND);
	CHECK_ERR(tw_radius_dynauth_reply_check(&p, TW_RADIUS_ACCESS_REQUEST, id, req_auth, &s, &r),
		  TW_ERR_INVAL);
	/* another request's authenticator */
	{
		uint8_t other[16];

		memcpy(other, req_auth, 16);
		other[tw_test_random_u32() % 16] ^= 0x10;
		CHECK_ERR(tw_radius_dynauth_reply_check(&p, rq, id, other, &s, &r), TW_ERR_AUTH);
	}
	/* every bit of the reply past the header's Code/Identifier flipped */
	for (size_t bit = 16; bit < len * 8; bit++) {
		memcpy(copy, buf, len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (tw_radius_decode(&p, copy, len) != TW_OK)
			continue;
		CHECK(tw_radius_dynauth_reply_check(&p, rq, id, req_auth, &s, &r) != TW_OK);
	}
	tw_radius_secret_wipe(&s);
}

static void bad_error_cause(void)
{
	struct tw_radius_secret s;
	struct tw_radius_pkt p;
	struct tw_radius_dynauth_reply r;
	uint8_t raw[16] = "a-shared-secret", buf[256], req_auth[16];
	size_t len;

	CHECK_OK(tw_radius_secret_init(&s, raw, 15));
	tw_test_random(req_auth, 16);
	/* an Error-Cause of 3 and of 5 octets: authentic, still refused */
	len = ossl_reply(buf, TW_RADIUS_DISCONNECT_NAK, 7, req_auth, raw, 15, 503, 3, false);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK_ERR(tw_radius_dynauth_reply_check(&p, TW_RADIUS_DISCONNECT_REQUEST, 7, req_auth, &s,
						&r),
		  TW_ERR_DECODE);
	len = ossl_reply(buf, TW_RADIUS_DISCONNECT_NAK, 7, req_auth, raw, 15, 503, 5, false);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK_ERR(tw_radius_dynauth_reply_check(&p, TW_RADIUS_DISCONNECT_REQUEST, 7, req_auth, &s,
						&r),
		  TW_ERR_DECODE);
	/* a NAK without Error-Cause, with a Message-Authenticator */
	len = ossl_reply(buf, TW_RADIUS_COA_NAK, 9, req_auth, raw, 15, 0, 0, true);
	CHECK_OK(tw_radius_decode(&p, buf, len));
	CHECK_OK(tw_radius_dynauth_reply_check(&p, TW_RADIUS_COA_REQUEST, 9, req_auth, &s, &r));
	CHECK(!r.ack && !r.has_error_cause);
	tw_radius_secret_wipe(&s);
}

static void builder_refuses_other_codes(void)
{
	struct tw_radius_secret s;
	struct tw_radius_builder b;
	uint8_t buf[128], auth[16] = { 0 };
	size_t len = 0;

	CHECK_OK(tw_radius_secret_init(&s, (const uint8_t *)"x", 1));
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCOUNTING_REQUEST, 1, auth, false);
	CHECK_ERR(tw_radius_finish_dynauth_request_ctx(&b, &s, &len), TW_ERR_INVAL);
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_DISCONNECT_ACK, 1, auth, false);
	CHECK_ERR(tw_radius_finish_dynauth_request_ctx(&b, &s, &len), TW_ERR_INVAL);
	tw_radius_secret_wipe(&s);
}

static void names(void)
{
	/* RFC 5176 §3.5's table, as FreeRADIUS's dictionary names them */
	static const struct {
		uint32_t v;
		const char *name;
	} t[] = {
		{ 201, "Residual-Session-Context-Removed" },
		{ 202, "Invalid-EAP-Packet" },
		{ 401, "Unsupported-Attribute" },
		{ 402, "Missing-Attribute" },
		{ 403, "NAS-Identification-Mismatch" },
		{ 404, "Invalid-Request" },
		{ 405, "Unsupported-Service" },
		{ 406, "Unsupported-Extension" },
		{ 407, "Invalid-Attribute-Value" },
		{ 501, "Administratively-Prohibited" },
		{ 502, "Request-Not-Routable" },
		{ 503, "Session-Context-Not-Found" },
		{ 504, "Session-Context-Not-Removable" },
		{ 505, "Other-Proxy-Processing-Error" },
		{ 506, "Resources-Unavailable" },
		{ 507, "Request-Initiated" },
		{ 508, "Multiple-Session-Selection-Unsupported" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *n = tw_radius_error_cause_name(t[i].v);

		CHECK(n != NULL && strcmp(n, t[i].name) == 0);
	}
	CHECK(tw_radius_error_cause_name(0) == NULL);
	CHECK(tw_radius_error_cause_name(200) == NULL);
	CHECK(tw_radius_error_cause_name(509) == NULL);
}

/*
 * radclient as the dynamic-authorization client: what it sends must pass
 * tw_radius_dynauth_request_ok (with its secret, not with another), and
 * the ACK (Disconnect) or NAK with Error-Cause (CoA) built here must
 * satisfy it: radclient exits 0 only for a reply whose authenticator
 * verifies and whose code is an ACK (a NAK: exit 1, as for a bad one; its
 * -x output then names the NAK's Error-Cause).
 */
static void radclient_one(const char *kind)
{
	static const char secret[] = "radclient-dm-secret";
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct tw_radius_secret s, wrong;
	struct tw_radius_pkt p;
	struct tw_radius_builder b;
	uint8_t buf[TW_RADIUS_MAX_LEN], out[256];
	char cmd[512], line[512], log[4096] = "";
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct pollfd pf;
	bool coa = strcmp(kind, "coa") == 0, named = false;
	size_t n = 0;
	ssize_t got;
	FILE *f;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), st;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		   getsockname(fd, (struct sockaddr *)&sa, &sl) == 0))
		return;
	snprintf(cmd, sizeof(cmd),
		 "printf 'User-Name = \"0001010000000001@wlan\"\\nAcct-Session-Id = \"S-1\"\\n"
		 "Calling-Station-Id = \"02-00-00-00-00-01\"\\nMessage-Authenticator = 0x00\\n' | "
		 "timeout 10 radclient -x -r 1 -t 3 127.0.0.1:%u %s %s 2>&1",
		 ntohs(sa.sin_port), kind, secret);
	f = popen(cmd, "r");
	if (!CHECK(f != NULL)) {
		close(fd);
		return;
	}
	pf.fd = fd;
	pf.events = POLLIN;
	pf.revents = 0;
	CHECK(poll(&pf, 1, 5000) == 1);
	got = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	CHECK_OK(tw_radius_secret_init(&s, (const uint8_t *)secret, strlen(secret)));
	CHECK_OK(tw_radius_secret_init(&wrong, (const uint8_t *)"radclient-dm-secreT",
				       strlen(secret)));
	if (CHECK(got >= 20) && CHECK_OK(tw_radius_decode(&p, buf, (size_t)got))) {
		CHECK(p.code == (coa ? TW_RADIUS_COA_REQUEST : TW_RADIUS_DISCONNECT_REQUEST));
		CHECK(p.msg_auth >= 0);
		CHECK(tw_radius_dynauth_request_ok(&p, &s));
		CHECK(!tw_radius_dynauth_request_ok(&p, &wrong));
		tw_radius_build_init(&b, out, sizeof(out),
				     (uint8_t)(p.code + (coa ? 2 : 1)), p.id, p.authenticator,
				     false);
		if (coa)
			tw_radius_add_u32(&b, TW_RADIUS_ERROR_CAUSE,
					  TW_RADIUS_EC_UNSUPPORTED_ATTRIBUTE);
		if (CHECK_OK(tw_radius_finish_response_ctx(&b, &s, &n)))
			CHECK(sendto(fd, out, n, 0, (struct sockaddr *)&from, fl) == (ssize_t)n);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strlen(log) + strlen(line) < sizeof(log))
			strcat(log, line);
		if (strstr(line, "Error-Cause") != NULL && strstr(line, "Unsupported-Attribute"))
			named = true;
	}
	st = pclose(f);
	/* Disconnect-ACK: accepted (0); CoA-NAK: radclient says it (1) */
	if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (coa ? 1 : 0)) || (coa && !CHECK(named)))
		tw_note("radclient %s said:\n%s", kind, log);
	if (!coa)
		CHECK(strstr(log, "Disconnect-ACK") != NULL);
	tw_radius_secret_wipe(&s);
	tw_radius_secret_wipe(&wrong);
	close(fd);
}

void test_main(void)
{
	for (int i = 0; i < N_RANDOM; i++)
		one_request();
	for (int i = 0; i < N_RANDOM; i++)
		one_reply();
	bad_error_cause();
	builder_refuses_other_codes();
	names();
	if (system("command -v radclient >/dev/null 2>&1") == 0) {
		radclient_one("disconnect");
		radclient_one("coa");
	} else {
		tw_note("radclient not installed: its cross-check skipped");
	}
}
