/* twagd's log forms and per-request debug (log.c, debug.c):
 *  - tw_log_text_to_json: each key=value of a text line becomes one JSON
 *    member in order; plain integers and decimals are numbers, anything
 *    else (leading zeros, IMSIs, hex) a string; quoted values lose their
 *    quotes, '\' and '"' are escaped, a bare word is "text"; a line that
 *    does not fit loses whole members, never the closing brace;
 *  - the debug conditions: IMSIs and networks added once, bad ones and a
 *    full set refused, removal, matching by prefix (IPv4, IPv6, /0) and by
 *    exact IMSI;
 *  - the dump of a packet never shows what it must elide: the value of
 *    User-Password, the MS-MPPE keys, Message-Authenticator, AT_RES and
 *    AT_MAC, the IMSI in clear; it shows AT_RAND and the masked identity.
 * Expected JSON is written from the format's rules above, by hand. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "tw_test.h"

#include "../../src/server/srv.h"

static void json_is(const char *text, const char *want)
{
	char out[1024];
	size_t n = tw_log_text_to_json(out, sizeof(out), text, strlen(text));

	out[n < sizeof(out) ? n : sizeof(out) - 1] = 0;
	if (!CHECK(strcmp(out, want) == 0))
		printf("  text: %s\n  got:  %s  want: %s", text, out, want);
}

static void test_json(void)
{
	char out[64];
	size_t n;

	json_is("ts=2026-01-02T03:04:05.678Z level=info event=x n=12 z=012 f=1.5 neg=-3\n",
		"{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"info\",\"event\":\"x\","
		"\"n\":12,\"z\":\"012\",\"f\":1.5,\"neg\":-3}\n");
	json_is("event=y msg=\"a b=c\" bare p=a\\b q=x\"y imsi=001010*****6789 zero=0 dot=1.",
		"{\"event\":\"y\",\"msg\":\"a b=c\",\"text\":\"bare\",\"p\":\"a\\\\b\","
		"\"q\":\"x\\\"y\",\"imsi\":\"001010*****6789\",\"zero\":0,\"dot\":\"1.\"}\n");
	json_is("", "{}\n");
	json_is("e=", "{\"e\":\"\"}\n");
	/* too long for out: whole members only, still one object */
	n = tw_log_text_to_json(out, sizeof(out), "a=1 b=22222222222 c=3333333333333333 d=4",
				strlen("a=1 b=22222222222 c=3333333333333333 d=4"));
	CHECK(n >= 3 && n < sizeof(out) && out[n - 2] == '}' && out[n - 1] == '\n');
	CHECK(n >= 8 && memcmp(out, "{\"a\":1,", 7) == 0);
	CHECK(tw_log_text_to_json(out, 3, "a=1", 3) == 0);
}

static void test_conditions(void)
{
	struct tw_srv_debug_set d;
	struct tw_srv_debug g;
	struct tw_srv_addr a;
	unsigned p;
	char err[128], text[512];

	memset(&d, 0, sizeof(d));
	CHECK_OK(tw_srv_debug_add(&d, true, "001010123456789", err, sizeof(err)));
	CHECK_OK(tw_srv_debug_add(&d, true, "001010123456789", err, sizeof(err)));
	CHECK(d.n_imsi == 1);
	CHECK(tw_srv_debug_add(&d, true, "00101a", err, sizeof(err)) == TW_ERR_INVAL);
	CHECK(tw_srv_debug_add(&d, true, "12345", err, sizeof(err)) == TW_ERR_INVAL);
	CHECK(tw_srv_debug_add(&d, true, "1234567890123456", err, sizeof(err)) == TW_ERR_INVAL);
	CHECK_OK(tw_srv_debug_add(&d, false, "10.1.0.0/16", err, sizeof(err)));
	CHECK_OK(tw_srv_debug_add(&d, false, "2001:db8::/32", err, sizeof(err)));
	CHECK(tw_srv_debug_add(&d, false, "10.1.0.0/33", err, sizeof(err)) == TW_ERR_INVAL);
	CHECK(tw_srv_debug_add(&d, false, "host", err, sizeof(err)) == TW_ERR_INVAL);
	CHECK(d.n_net == 2);
	tw_srv_debug_text(&d, text, sizeof(text));
	CHECK(strstr(text, "client=10.1.0.0/16") != NULL);
	CHECK(strstr(text, "client=2001:db8::/32") != NULL);
	CHECK(strstr(text, "imsi=001010*****6789") != NULL);
	CHECK(strstr(text, "0123456789") == NULL);

	tw_srv_debug_init(&g);
	CHECK(!tw_srv_debug_match(&g, NULL, "001010123456789", 15)); /* nothing in force */
	tw_srv_debug_publish(&g, &d);
	CHECK(atomic_load(&g.on) == 3);
	CHECK(tw_srv_debug_match(&g, NULL, "001010123456789", 15));
	CHECK(!tw_srv_debug_match(&g, NULL, "00101012345678", 14));
	CHECK(!tw_srv_debug_match(&g, NULL, "001010123456780", 15));
	CHECK_OK(tw_srv_addr_parse(&a, &p, "10.1.255.7"));
	CHECK(tw_srv_debug_match(&g, &a, NULL, 0));
	CHECK_OK(tw_srv_addr_parse(&a, &p, "10.2.0.1"));
	CHECK(!tw_srv_debug_match(&g, &a, NULL, 0));
	CHECK_OK(tw_srv_addr_parse(&a, &p, "2001:db8:ffff::1"));
	CHECK(tw_srv_debug_match(&g, &a, NULL, 0));
	CHECK_OK(tw_srv_addr_parse(&a, &p, "2001:db9::1"));
	CHECK(!tw_srv_debug_match(&g, &a, NULL, 0));

	CHECK_OK(tw_srv_debug_del(&d, false, "10.1.0.0/16"));
	CHECK(tw_srv_debug_del(&d, false, "10.1.0.0/16") == TW_ERR_NOTFOUND);
	CHECK_OK(tw_srv_debug_del(&d, true, "001010123456789"));
	CHECK(d.n_net == 1 && d.n_imsi == 0);
	CHECK_OK(tw_srv_debug_add(&d, false, "0.0.0.0/0", err, sizeof(err)));
	tw_srv_debug_publish(&g, &d);
	CHECK_OK(tw_srv_addr_parse(&a, &p, "192.0.2.1"));
	CHECK(tw_srv_debug_match(&g, &a, NULL, 0));
	CHECK(!tw_srv_debug_match(&g, NULL, "001010123456789", 15));

	/* full */
	memset(&d, 0, sizeof(d));
	for (unsigned i = 0; i < TW_SRV_DEBUG_MAX; i++) {
		char imsi[16];

		snprintf(imsi, sizeof(imsi), "0010100000%05u", i);
		CHECK_OK(tw_srv_debug_add(&d, true, imsi, err, sizeof(err)));
	}
	CHECK(tw_srv_debug_add(&d, true, "001019999999999", err, sizeof(err)) == TW_ERR_RANGE);
	memset(&d, 0, sizeof(d));
	tw_srv_debug_publish(&g, &d);
	CHECK(atomic_load(&g.on) == 0);
	tw_srv_debug_destroy(&g);
}

static size_t attr(uint8_t *p, uint8_t type, const void *v, size_t n)
{
	p[0] = type;
	p[1] = (uint8_t)(n + 2);
	memcpy(p + 2, v, n);
	return n + 2;
}

static void test_dump(void)
{
	static struct tw_log_buf b;
	uint8_t pkt[1024], eap[128], vsa[6 + 48];
	const char *user = "6001010123456789@wlan.mnc001.mcc001.3gppnetwork.org";
	size_t n = 20, e = 0;

	memset(pkt, 0, sizeof(pkt));
	pkt[0] = TW_RADIUS_ACCESS_REQUEST;
	pkt[1] = 7;
	n += attr(pkt + n, TW_RADIUS_USER_NAME, user, strlen(user));
	n += attr(pkt + n, 2, "\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xa0", 16);
	/* MS-MPPE-Recv-Key: vendor 311, type 17, a value of c3 octets */
	memcpy(vsa, "\x00\x00\x01\x37\x11\x32", 6);
	memset(vsa + 6, 0xc3, 48);
	n += attr(pkt + n, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
	/* EAP-Response/AKA'-Challenge: AT_RES (64 bits of d4), AT_MAC (e5) */
	memcpy(eap, "\x02\x09\x00\x00\x32\x01\x00\x00", 8);
	e = 8;
	memcpy(eap + e, "\x03\x03\x00\x40\xd4\xd4\xd4\xd4\xd4\xd4\xd4\xd4", 12);
	e += 12;
	memcpy(eap + e, "\x0b\x05\x00\x00", 4);
	memset(eap + e + 4, 0xe5, 16);
	e += 20;
	/* AT_RAND (reserved, then 16 octets of 5a) */
	memcpy(eap + e, "\x01\x05\x00\x00", 4);
	memset(eap + e + 4, 0x5a, 16);
	e += 20;
	eap[2] = (uint8_t)(e >> 8);
	eap[3] = (uint8_t)e;
	n += attr(pkt + n, TW_RADIUS_EAP_MESSAGE, eap, e);
	n += attr(pkt + n, TW_RADIUS_MESSAGE_AUTHENTICATOR,
		  "\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6\xf6", 16);
	pkt[2] = (uint8_t)(n >> 8);
	pkt[3] = (uint8_t)n;
	b.len = 0;
	tw_srv_debug_dump(&b, "in", "10.0.0.1", pkt, n);
	b.buf[b.len < sizeof(b.buf) ? b.len : sizeof(b.buf) - 1] = 0;
	CHECK(strstr(b.buf, "code=Access-Request id=7") != NULL);
	CHECK(strstr(b.buf, "attrs=5") != NULL);
	CHECK(strstr(b.buf, "attr=User-Name value=6001010*****6789@wlan") != NULL);
	CHECK(strstr(b.buf, "0123456789") == NULL);
	CHECK(strstr(b.buf, "attr=User-Password value=\"<16 octets elided>\"") != NULL);
	CHECK(strstr(b.buf, "a1a2") == NULL);
	CHECK(strstr(b.buf, "vendor 311 type 17: <48 octets elided>") != NULL);
	CHECK(strstr(b.buf, "c3c3") == NULL);
	CHECK(strstr(b.buf, "type=AKA' subtype=Challenge") != NULL);
	CHECK(strstr(b.buf, "AT_RES=<10 octets elided>") != NULL);
	CHECK(strstr(b.buf, "d4d4") == NULL);
	CHECK(strstr(b.buf, "AT_MAC=<18 octets elided>") != NULL);
	CHECK(strstr(b.buf, "e5e5") == NULL);
	CHECK(strstr(b.buf, "AT_RAND=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a ") != NULL ||
	      strstr(b.buf, "AT_RAND=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a\"") != NULL);
	CHECK(strstr(b.buf, "f6f6") == NULL);
	/* broken: the length runs past the datagram, and an attribute that
	 * runs past the EAP packet */
	b.len = 0;
	tw_srv_debug_dump(&b, "in", "10.0.0.1", pkt, 30);
	b.buf[b.len] = 0;
	CHECK(strstr(b.buf, "msg=undecodable") != NULL);
	b.len = 0;
	pkt[20 + 2 + strlen(user) + 18 + 2 + sizeof(vsa) + 2 + 8 + 1] = 0x40; /* AT_RES length */
	tw_srv_debug_dump(&b, "in", "10.0.0.1", pkt, n);
	b.buf[b.len] = 0;
	CHECK(strstr(b.buf, "malformed-attribute") != NULL);
	CHECK(strstr(b.buf, "d4d4") == NULL);
}

void test_main(void)
{
	test_json();
	test_conditions();
	test_dump();
}
