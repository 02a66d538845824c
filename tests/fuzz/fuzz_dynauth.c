/*
 * Fuzz target: RFC 5176 dynamic authorization input of twagd: the
 * Disconnect/CoA-ACK/NAK a NAS sends back (tw_radius_decode,
 * tw_radius_dynauth_reply_check, tw_radius_error_cause_name) and the
 * control socket's request line (tw_srv_control_split,
 * tw_srv_dynauth_parse_attr).
 *
 * The first octet picks: even, the rest is a reply to a fixed
 * Disconnect-Request (odd octet 1: to a CoA-Request) signed under the
 * secret below; odd, the rest is a control request line.
 *
 * Invariants: no crash or overread; the reply check answers only OK,
 * NOTFOUND, AUTH or DECODE; OK only for the request's Identifier and an
 * ACK/NAK code of its kind, and then the same octets re-signed as a
 * response (tw_radius_finish_response_ctx) are what was received (the
 * check accepted exactly the authentic reply); the output is zeroed on
 * every error; every Error-Cause name is a non-empty string or NULL. A
 * split line gives at most the maximum of words, each NUL-terminated
 * within the line and not empty; an attribute
 * parses to OK with at most 253 octets and a type other than 0, or to
 * INVAL with a message.
 *
 * Seeds (tests/fuzz/corpus/dynauth/) were written with Python hashlib
 * (tests/fuzz/gen_dynauth_corpus.py) under the secret below.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_must.h"
#include "twag/bytes.h"
#include "twag/radius.h"

#include "../../src/server/dynauth_srv.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t secret[] = "fuzzsecret";
/* the request's Authenticator and Identifier (gen_dynauth_corpus.py) */
static const uint8_t req_auth[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
				      0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x01 };
enum { REQ_ID = 0x2a };

static void reply(const unsigned char *data, size_t size)
{
	static struct tw_radius_secret ks;
	static bool init;
	static struct tw_radius_pkt p;
	static uint8_t again[TW_RADIUS_MAX_LEN];
	struct tw_radius_dynauth_reply r;
	uint8_t code = size > 0 && (data[0] & 1) ? TW_RADIUS_COA_REQUEST
						 : TW_RADIUS_DISCONNECT_REQUEST;
	int rc;

	if (!init) {
		MUST(tw_radius_secret_init(&ks, secret, sizeof(secret) - 1) == TW_OK);
		init = true;
	}
	if (size > 0) {
		data++;
		size--;
	}
	if (size > TW_RADIUS_MAX_LEN || tw_radius_decode(&p, data, size) != TW_OK)
		return;
	rc = tw_radius_dynauth_reply_check(&p, code, REQ_ID, req_auth, &ks, &r);
	MUST(rc == TW_OK || rc == TW_ERR_NOTFOUND || rc == TW_ERR_AUTH || rc == TW_ERR_DECODE);
	if (rc != TW_OK) {
		MUST(!r.ack && !r.has_error_cause && r.error_cause == 0);
		return;
	}
	MUST(p.id == REQ_ID && (p.code == code + 1 || p.code == code + 2));
	MUST(r.ack == (p.code == code + 1));
	if (r.has_error_cause) {
		const char *n = tw_radius_error_cause_name(r.error_cause);

		MUST(n == NULL || n[0] != 0);
	}
	/* authentic: re-signing the same octets gives the same octets
	 * (a Message-Authenticator, if any, must have been first to be
	 * rebuilt: otherwise only the Response Authenticator is compared) */
	if (p.msg_auth <= 0) {
		struct tw_radius_builder b;
		size_t n = 0;

		tw_radius_build_init(&b, again, sizeof(again), p.code, p.id, req_auth,
				     p.msg_auth == 0);
		for (unsigned i = p.msg_auth == 0 ? 1 : 0; i < p.n_attrs; i++)
			tw_radius_add(&b, p.attrs[i].type, tw_radius_value(&p, &p.attrs[i]),
				      p.attrs[i].len);
		MUST(tw_radius_finish_response_ctx(&b, &ks, &n) == TW_OK);
		MUST(n == p.len && memcmp(again, data, n) == 0);
	}
}

static void control(const unsigned char *data, size_t size)
{
	static char line[TW_SRV_CONTROL_LINE_MAX + 1];
	char *argv[TW_SRV_CONTROL_ARGS];
	int argc = -1;

	if (size > TW_SRV_CONTROL_LINE_MAX)
		size = TW_SRV_CONTROL_LINE_MAX;
	memcpy(line, data, size);
	line[size] = 0;
	if (tw_srv_control_split(line, size, argv, TW_SRV_CONTROL_ARGS, &argc) != TW_OK) {
		MUST(argc == 0);
		return;
	}
	MUST(argc >= 0 && argc <= TW_SRV_CONTROL_ARGS);
	for (int i = 0; i < argc; i++) {
		size_t n;
		uint8_t type, val[253];
		size_t len = 99;
		char err[160] = "";
		int rc;

		MUST(argv[i] >= line && argv[i] < line + size);
		n = strlen(argv[i]);
		MUST(n > 0 && argv[i] + n <= line + size);
		rc = tw_srv_dynauth_parse_attr(argv[i], &type, val, &len, err, sizeof(err));
		MUST(rc == TW_OK || rc == TW_ERR_INVAL);
		if (rc == TW_OK)
			MUST(type != 0 && len <= 253);
		else
			MUST(err[0] != 0 && len == 0);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 0x80)
		control(data + 1, size - 1);
	else
		reply(data, size);
	return 0;
}
