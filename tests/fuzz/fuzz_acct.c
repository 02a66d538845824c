/*
 * Fuzz target: twagd's accounting input (RFC 2866): tw_radius_decode,
 * tw_radius_verify_acct_request_ctx, tw_acct_record_parse,
 * tw_acct_table_apply and tw_acct_mask_user.
 *
 * Invariants: no crash or overread; verification answers only OK or
 * AUTH, and the packet re-signed with tw_radius_finish_acct_request_ctx
 * under the fixed secret (same attributes, a Message-Authenticator first
 * when the input had one) verifies; record parsing answers only OK,
 * NOTFOUND, DECODE or LENGTH, and a record's lengths are within their
 * arrays; a table of 16 slots kept across inputs never holds more than
 * 16 live sessions and lists exactly those it counts; a masked user name
 * (of the raw input too) is NUL-terminated, within TW_ACCT_USER_MAX, and
 * has no control character; every status has a name; the sessions found
 * by a record's Acct-Session-Id carry that id. Once per process: table
 * sizes out of range are refused, and a table freed twice is freed once.
 *
 * Seeds (tests/fuzz/corpus/acct/) were written with Python hashlib/hmac
 * (tests/fuzz/gen_acct_corpus.py) under the secret below.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/radius.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t secret[] = "fuzzsecret";

static void check_user(const char *u)
{
	size_t n = strnlen(u, TW_ACCT_USER_MAX);

	if (n >= TW_ACCT_USER_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] < 0x20 || (unsigned char)u[i] >= 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct tw_acct_table t;
	static struct tw_radius_secret ks;
	static bool init;
	static struct tw_radius_pkt p, q;
	static uint8_t buf[TW_RADIUS_MAX_LEN];
	static struct tw_acct_session out[32];
	struct tw_acct_record r;
	struct tw_acct_stats st;
	char user[TW_ACCT_USER_MAX];
	struct tw_srv_addr client = { 4, { 127, 0, 0, 1 } };
	unsigned ended;
	int rc;

	if (!init) {
		static const uint8_t seed[16] = { 7 };

		struct tw_acct_table bad;

		/* sizes out of range are refused; a table freed twice is
		 * freed once */
		if (tw_acct_table_init(&bad, TW_ACCT_MIN_SESSIONS - 1, seed) == TW_OK ||
		    tw_acct_table_init(&bad, TW_ACCT_MAX_SESSIONS + 1, seed) == TW_OK ||
		    tw_acct_table_init(&bad, TW_ACCT_MIN_SESSIONS, seed) != TW_OK)
			abort();
		tw_acct_table_free(&bad);
		tw_acct_table_free(&bad);
		if (tw_acct_table_init(&t, 16, seed) != TW_OK ||
		    tw_radius_secret_init(&ks, secret, sizeof(secret) - 1) != TW_OK)
			abort();
		init = true;
	}
	tw_acct_mask_user(user, sizeof(user), data, size > 253 ? 253 : size);
	check_user(user);
	if (size > 0)
		client.a[3] = data[size - 1] & 3; /* a few clients */
	if (tw_radius_decode(&p, data, size) != TW_OK)
		return 0;
	rc = tw_radius_verify_acct_request_ctx(&p, &ks);
	if (rc != TW_OK && rc != TW_ERR_AUTH)
		abort();
	if (p.code == TW_RADIUS_ACCOUNTING_REQUEST) {
		/* the same attributes, signed here: must verify */
		struct tw_radius_builder b;
		size_t n = 0;

		tw_radius_build_init(&b, buf, sizeof(buf), p.code, p.id, p.authenticator,
				     p.msg_auth >= 0);
		for (unsigned i = 0; i < p.n_attrs; i++)
			if ((int)i != p.msg_auth)
				tw_radius_add(&b, p.attrs[i].type, tw_radius_value(&p, &p.attrs[i]),
					      p.attrs[i].len);
		if (tw_radius_finish_acct_request_ctx(&b, &ks, &n) == TW_OK) {
			if (tw_radius_decode(&q, buf, n) != TW_OK ||
			    tw_radius_verify_acct_request_ctx(&q, &ks) != TW_OK)
				abort();
		}
	}
	rc = tw_acct_record_parse(&r, &p, &client, 1000000);
	if (rc != TW_OK && rc != TW_ERR_NOTFOUND && rc != TW_ERR_DECODE && rc != TW_ERR_LENGTH)
		abort();
	if (rc != TW_OK)
		return 0;
	if (r.key.id_len > TW_ACCT_ID_MAX || r.key.nas_len > TW_ACCT_NAS_ID_MAX ||
	    r.calling_len > TW_ACCT_STATION_MAX || r.called_len > TW_ACCT_STATION_MAX)
		abort();
	check_user(r.user);
	{
		const char *sn = tw_acct_status_name(r.status);

		if (sn == NULL || sn[0] == '\0')
			abort();
	}
	(void)tw_acct_table_apply(&t, &r, 1000000, &ended);
	{
		/* a session found by its id carries that id; a Stop or an
		 * Accounting-On/Off leaves none of this key */
		size_t k = tw_acct_table_find(&t, r.key.id, r.key.id_len, out, 32);

		if (k > 16)
			abort();
		for (size_t i = 0; i < k; i++)
			if (out[i].r.key.id_len != r.key.id_len ||
			    memcmp(out[i].r.key.id, r.key.id, r.key.id_len) != 0)
				abort();
	}
	tw_acct_table_stats(&t, &st);
	if (st.active > 16)
		abort();
	{
		uint32_t cur = 0;
		size_t n = 0, k;

		while ((k = tw_acct_table_list(&t, &cur, out, 5)) > 0)
			n += k;
		if (n != st.active)
			abort();
	}
	return 0;
}
