/*
 * Tests of twagd's control request line (control.c tw_srv_control_split:
 * words, RFC 3986 §2.1 percent escapes) and of the CoA attributes the
 * control socket takes (dynauth.c tw_srv_dynauth_parse_attr; RFC 5176
 * §3.6 table, RFC 2865 §5.27-§5.28, RFC 2869 §5.16), positive and
 * negative cases side by side; and the command table's answers that need
 * no running daemon (help, ping, unknown, usage).
 */
#include <string.h>

#include "tw_test.h"
#include "twag/bytes.h"

#include "../../src/server/dynauth_srv.h"

static int split(const char *in, char **argv, char *buf)
{
	int argc = -1;

	strcpy(buf, in);
	if (tw_srv_control_split(buf, strlen(buf), argv, 8, &argc) != TW_OK)
		return -1;
	return argc;
}

static void test_split(void)
{
	char buf[256], *argv[8];

	CHECK(split("disconnect session S1", argv, buf) == 3);
	CHECK(strcmp(argv[0], "disconnect") == 0 && strcmp(argv[2], "S1") == 0);
	CHECK(split("  a   b  ", argv, buf) == 2 && strcmp(argv[1], "b") == 0);
	CHECK(split("", argv, buf) == 0);
	CHECK(split("coa session a%20b%25c", argv, buf) == 3 && strcmp(argv[2], "a b%c") == 0);
	CHECK(split("x %7e", argv, buf) == 2 && strcmp(argv[1], "~") == 0);
	/* refused: NUL escape, bad escape, cut escape, control octet, high
	 * octet, too many words */
	CHECK(split("x %00", argv, buf) == -1);
	CHECK(split("x %zz", argv, buf) == -1);
	CHECK(split("x %4", argv, buf) == -1);
	CHECK(split("x \ty", argv, buf) == -1);
	CHECK(split("x \xc3\xa9", argv, buf) == -1);
	CHECK(split("1 2 3 4 5 6 7 8", argv, buf) == 8);
	CHECK(split("1 2 3 4 5 6 7 8 9", argv, buf) == -1);
}

static void attr_ok(const char *text, uint8_t type, const char *hex)
{
	uint8_t t = 0, v[253], want[253];
	size_t n = 99, wl = tw_test_hex(want, sizeof(want), hex);
	char err[160] = "";

	CHECK_OK(tw_srv_dynauth_parse_attr(text, &t, v, &n, err, sizeof(err)));
	CHECK(t == type && n == wl && memcmp(v, want, n) == 0);
}

static void attr_bad(const char *text)
{
	uint8_t t = 0, v[253];
	size_t n = 99;
	char err[160] = "";

	CHECK_ERR(tw_srv_dynauth_parse_attr(text, &t, v, &n, err, sizeof(err)), TW_ERR_INVAL);
	CHECK(err[0] != 0 && n == 0);
}

static void test_attrs(void)
{
	char long_text[300], long_hex[600];

	attr_ok("Session-Timeout=600", 27, "00000258");
	attr_ok("session-timeout=4294967295", 27, "ffffffff");
	attr_ok("Idle-Timeout=30", 28, "0000001e");
	attr_ok("Acct-Interim-Interval=300", 85, "0000012c");
	attr_ok("Filter-Id=gold", 11, "676f6c64");
	attr_ok("26=000000090102", 26, "000000090102");
	attr_ok("18=", 18, "");
	attr_bad("Session-Timeout=4294967296");
	attr_bad("Session-Timeout=-1");
	attr_bad("Session-Timeout=");
	attr_bad("Filter-Id=");
	attr_bad("Bogus=1");
	attr_bad("=1");
	attr_bad("noequals");
	attr_bad("0=00");
	attr_bad("256=00");
	attr_bad("26=0");
	attr_bad("26=zz");
	attr_bad("80=00000000000000000000000000000000");
	attr_bad("79=0200");
	attr_bad("1=41");
	attr_bad("44=41");
	attr_bad("31=41");
	attr_bad("4=7f000001");
	memset(long_text, 'a', sizeof(long_text));
	memcpy(long_text, "Filter-Id=", 10);
	long_text[10 + 254] = 0;
	attr_bad(long_text);
	long_text[10 + 253] = 0;
	{
		uint8_t t, v[253];
		size_t n;
		char err[160];

		CHECK_OK(tw_srv_dynauth_parse_attr(long_text, &t, v, &n, err, sizeof(err)));
		CHECK(n == 253);
	}
	memcpy(long_hex, "26=", 3);
	memset(long_hex + 3, '0', 2 * 254);
	long_hex[3 + 2 * 254] = 0;
	attr_bad(long_hex);
}

static void test_dispatch(void)
{
	char buf[2048], line[64], *argv[8];
	struct out o = { buf, sizeof(buf), 0, false };
	int argc;

	strcpy(line, "ping");
	CHECK_OK(tw_srv_control_split(line, strlen(line), argv, 8, &argc));
	tw_srv_control_dispatch(NULL, &o, argc, argv);
	CHECK(o.len == 8 && memcmp(buf, "ok pong\n", 8) == 0);
	o.len = 0;
	strcpy(line, "help");
	CHECK_OK(tw_srv_control_split(line, strlen(line), argv, 8, &argc));
	tw_srv_control_dispatch(NULL, &o, argc, argv);
	buf[o.len] = 0;
	CHECK(strstr(buf, "usage=disconnect") != NULL && strstr(buf, "\nok commands=") != NULL);
	o.len = 0;
	strcpy(line, "nosuch x");
	CHECK_OK(tw_srv_control_split(line, strlen(line), argv, 8, &argc));
	tw_srv_control_dispatch(NULL, &o, argc, argv);
	buf[o.len] = 0;
	CHECK(strncmp(buf, "error unknown command", 21) == 0);
	o.len = 0;
	strcpy(line, "disconnect session");
	CHECK_OK(tw_srv_control_split(line, strlen(line), argv, 8, &argc));
	tw_srv_control_dispatch(NULL, &o, argc, argv);
	buf[o.len] = 0;
	CHECK(strncmp(buf, "error usage: disconnect", 23) == 0);
	o.len = 0;
	tw_srv_control_dispatch(NULL, &o, 0, argv);
	buf[o.len] = 0;
	CHECK(strncmp(buf, "error empty", 11) == 0);
}

void test_main(void)
{
	test_split();
	test_attrs();
	test_dispatch();
}
