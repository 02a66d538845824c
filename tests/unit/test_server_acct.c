/*
 * Tests of twagd's accounting table (include/twag/acct.h): reading
 * Accounting-Requests (RFC 2866 §5, RFC 2869 §5.1-§5.3) into records, the
 * session life cycle of RFC 2866 §5.1 (Start, Interim-Update, Stop,
 * Accounting-On/-Off), the bound (oldest evicted, counted), the key (a
 * client never touches another's sessions) and the masked User-Name.
 */
#include <stdio.h>

#include "tw_test.h"
#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/radius.h"

static const uint8_t seed[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

struct req {
	uint8_t buf[TW_RADIUS_MAX_LEN];
	struct tw_radius_builder b;
};

static void begin(struct req *q, uint32_t status, const char *id, const char *nas_ident)
{
	uint8_t auth[16] = { 0 };

	tw_radius_build_init(&q->b, q->buf, sizeof(q->buf), TW_RADIUS_ACCOUNTING_REQUEST, 1, auth,
			     false);
	tw_radius_add_u32(&q->b, TW_RADIUS_ACCT_STATUS_TYPE, status);
	if (id != NULL)
		tw_radius_add(&q->b, TW_RADIUS_ACCT_SESSION_ID, id, strlen(id));
	if (nas_ident != NULL)
		tw_radius_add(&q->b, TW_RADIUS_NAS_IDENTIFIER, nas_ident, strlen(nas_ident));
}

static int parse(struct req *q, struct tw_acct_record *r, const struct tw_srv_addr *client,
		 uint64_t now)
{
	struct tw_radius_pkt p;
	size_t n;

	tw_store_be16(q->buf + 2, (uint16_t)q->b.len);
	n = q->b.len;
	if (tw_radius_decode(&p, q->buf, n) != TW_OK)
		return -100;
	return tw_acct_record_parse(r, &p, client, now);
}

static void test_parse(void)
{
	struct tw_srv_addr c = { 4, { 127, 0, 0, 1 } };
	struct tw_acct_record r;
	struct req q;
	uint8_t ip[4] = { 10, 0, 0, 9 }, v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	begin(&q, TW_RADIUS_ACCT_INTERIM_UPDATE, "s1", "ap-1");
	tw_radius_add(&q.b, TW_RADIUS_USER_NAME, "6001010123456789@wlan.example", 29);
	tw_radius_add_u32(&q.b, TW_RADIUS_ACCT_INPUT_OCTETS, 5);
	tw_radius_add_u32(&q.b, TW_RADIUS_ACCT_INPUT_GIGAWORDS, 2);
	tw_radius_add_u32(&q.b, TW_RADIUS_ACCT_OUTPUT_OCTETS, 0xffffffffu);
	tw_radius_add_u32(&q.b, TW_RADIUS_ACCT_SESSION_TIME, 30);
	tw_radius_add_u32(&q.b, TW_RADIUS_ACCT_DELAY_TIME, 4);
	tw_radius_add(&q.b, TW_RADIUS_FRAMED_IP_ADDRESS, ip, 4);
	CHECK_OK(parse(&q, &r, &c, 1000));
	CHECK(r.status == TW_RADIUS_ACCT_INTERIM_UPDATE);
	CHECK(r.key.nas_kind == TW_ACCT_NAS_IDENT && r.key.nas_len == 4);
	CHECK(r.key.id_len == 2 && memcmp(r.key.id, "s1", 2) == 0);
	/* RFC 2869 §5.1: Gigawords * 2^32 + Octets */
	CHECK(r.in_octets == 2ull * 4294967296ull + 5);
	CHECK(r.out_octets == 0xffffffffu);
	CHECK(r.session_time == 30 && (r.flags & TW_ACCT_F_SESSION_TIME));
	/* RFC 2866 §5.2: the event was Acct-Delay-Time ago */
	CHECK(r.event_time == 996);
	CHECK(strcmp(r.user, "6001010*****6789@wlan.example") == 0);
	CHECK(memcmp(r.framed_ip, ip, 4) == 0);

	/* NAS-IP-Address wins over NAS-Identifier, IPv6 over Identifier */
	begin(&q, TW_RADIUS_ACCT_START, "s1", "ap-1");
	tw_radius_add(&q.b, TW_RADIUS_NAS_IP_ADDRESS, ip, 4);
	tw_radius_add_u32(&q.b, TW_RADIUS_EVENT_TIMESTAMP, 777);
	CHECK_OK(parse(&q, &r, &c, 1000));
	CHECK(r.key.nas_kind == TW_ACCT_NAS_IPV4 && r.event_time == 777);
	begin(&q, TW_RADIUS_ACCT_START, "s1", "ap-1");
	tw_radius_add(&q.b, TW_RADIUS_NAS_IPV6_ADDRESS, v6, 16);
	CHECK_OK(parse(&q, &r, &c, 1000));
	CHECK(r.key.nas_kind == TW_ACCT_NAS_IPV6);
	begin(&q, TW_RADIUS_ACCT_START, "s1", NULL);
	CHECK_OK(parse(&q, &r, &c, 1000));
	CHECK(r.key.nas_kind == TW_ACCT_NAS_CLIENT);

	/* negative: each on its own */
	begin(&q, TW_RADIUS_ACCT_START, NULL, "ap");
	CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_NOTFOUND);       /* no Acct-Session-Id */
	begin(&q, TW_RADIUS_ACCT_ON, NULL, "ap");
	CHECK_OK(parse(&q, &r, &c, 1000));                         /* On needs none */
	{
		uint8_t auth[16] = { 0 };

		tw_radius_build_init(&q.b, q.buf, sizeof(q.buf), TW_RADIUS_ACCOUNTING_REQUEST, 1,
				     auth, false);
		tw_radius_add(&q.b, TW_RADIUS_ACCT_SESSION_ID, "x", 1);
		CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_NOTFOUND); /* no status */
	}
	begin(&q, TW_RADIUS_ACCT_START, "s", "ap");
	tw_radius_add(&q.b, TW_RADIUS_ACCT_INPUT_OCTETS, "abc", 3);
	CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_DECODE);         /* integer of 3 octets */
	begin(&q, TW_RADIUS_ACCT_START, "s", "ap");
	tw_radius_add(&q.b, TW_RADIUS_NAS_IPV6_ADDRESS, v6, 15);
	CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_DECODE);
	begin(&q, TW_RADIUS_ACCT_START, "", "ap");
	CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_DECODE);         /* empty id */
	{
		char id[TW_ACCT_ID_MAX + 2], nas[TW_ACCT_NAS_ID_MAX + 2];

		memset(id, 'i', sizeof(id) - 1);
		id[sizeof(id) - 1] = 0;
		memset(nas, 'n', sizeof(nas) - 1);
		nas[sizeof(nas) - 1] = 0;
		begin(&q, TW_RADIUS_ACCT_START, id, "ap");
		CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_LENGTH);
		id[TW_ACCT_ID_MAX] = 0;
		begin(&q, TW_RADIUS_ACCT_START, id, "ap");
		CHECK_OK(parse(&q, &r, &c, 1000));
		begin(&q, TW_RADIUS_ACCT_START, "s", nas);
		CHECK_ERR(parse(&q, &r, &c, 1000), TW_ERR_LENGTH);
	}
}

static struct tw_acct_record rec(uint32_t status, const char *id, uint8_t client_last,
				 const char *nas)
{
	struct tw_acct_record r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	r.key.client.family = 4;
	r.key.client.a[0] = 127;
	r.key.client.a[3] = client_last;
	r.key.nas_kind = TW_ACCT_NAS_IDENT;
	r.key.nas_len = (uint8_t)strlen(nas);
	memcpy(r.key.nas, nas, r.key.nas_len);
	r.key.id_len = (uint8_t)strlen(id);
	memcpy(r.key.id, id, r.key.id_len);
	r.event_time = 5000;
	return r;
}

static void test_life_cycle(void)
{
	struct tw_acct_table t;
	struct tw_acct_stats st;
	struct tw_acct_record r;
	struct tw_acct_session out[20];
	unsigned ended;
	uint32_t cur = 0;

	CHECK_ERR(tw_acct_table_init(&t, 8, seed), TW_ERR_INVAL);
	if (!CHECK_OK(tw_acct_table_init(&t, 16, seed)))
		return;
	r = rec(TW_RADIUS_ACCT_START, "a", 1, "ap1");
	CHECK(tw_acct_table_apply(&t, &r, 100, &ended) == TW_ACCT_STARTED);
	r = rec(TW_RADIUS_ACCT_INTERIM_UPDATE, "a", 1, "ap1");
	r.in_octets = 42;
	r.flags = TW_ACCT_F_IN_OCTETS;
	CHECK(tw_acct_table_apply(&t, &r, 110, &ended) == TW_ACCT_UPDATED);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"a", 1, out, 20) == 1);
	CHECK(out[0].r.in_octets == 42 && out[0].updates == 2 && out[0].start_time == 5000 &&
	      out[0].last_update == 110);
	/* the same id from another client or NAS is another session */
	r = rec(TW_RADIUS_ACCT_START, "a", 2, "ap1");
	CHECK(tw_acct_table_apply(&t, &r, 120, &ended) == TW_ACCT_STARTED);
	r = rec(TW_RADIUS_ACCT_START, "a", 1, "ap2");
	CHECK(tw_acct_table_apply(&t, &r, 120, &ended) == TW_ACCT_STARTED);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"a", 1, out, 20) == 3);
	/* Interim before Start creates; its start is event - session time */
	r = rec(TW_RADIUS_ACCT_INTERIM_UPDATE, "b", 1, "ap1");
	r.session_time = 60;
	r.flags = TW_ACCT_F_SESSION_TIME;
	CHECK(tw_acct_table_apply(&t, &r, 130, &ended) == TW_ACCT_CREATED);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"b", 1, out, 20) == 1 &&
	      out[0].start_time == 4940);
	/* Stop removes; a Stop of nothing is counted */
	r = rec(TW_RADIUS_ACCT_STOP, "b", 1, "ap1");
	CHECK(tw_acct_table_apply(&t, &r, 140, &ended) == TW_ACCT_STOPPED);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"b", 1, out, 20) == 0);
	CHECK(tw_acct_table_apply(&t, &r, 140, &ended) == TW_ACCT_STOP_UNKNOWN);
	/* Accounting-On of client 1 / ap1 ends only its session "a" */
	r = rec(TW_RADIUS_ACCT_ON, "", 1, "ap1");
	CHECK(tw_acct_table_apply(&t, &r, 150, &ended) == TW_ACCT_NAS_RESET && ended == 1);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"a", 1, out, 20) == 2);
	r = rec(TW_RADIUS_ACCT_OFF, "", 2, "ap1");
	CHECK(tw_acct_table_apply(&t, &r, 150, &ended) == TW_ACCT_NAS_RESET && ended == 1);
	r = rec(9, "z", 1, "ap1"); /* another status type: acknowledged, nothing kept */
	CHECK(tw_acct_table_apply(&t, &r, 150, &ended) == TW_ACCT_IGNORED);
	tw_acct_table_stats(&t, &st);
	CHECK(st.active == 1 && st.started == 3 && st.created_by_update == 1 && st.stopped == 1 &&
	      st.stops_unknown == 1 && st.ended_by_nas == 2 && st.evicted == 0 && st.max == 16);
	CHECK(tw_acct_table_list(&t, &cur, out, 20) == 1);
	CHECK(tw_acct_table_list(&t, &cur, out, 20) == 0);
	tw_acct_table_free(&t);
}

/* A flood beyond the table: bounded, the least recently updated goes. */
static void test_bound(void)
{
	struct tw_acct_table t;
	struct tw_acct_stats st;
	struct tw_acct_session out[64];
	unsigned ended;
	char id[16];

	if (!CHECK_OK(tw_acct_table_init(&t, 16, seed)))
		return;
	for (int i = 0; i < 1000; i++) {
		struct tw_acct_record r;

		snprintf(id, sizeof(id), "f%d", i);
		r = rec(TW_RADIUS_ACCT_START, id, 1, "ap");
		(void)tw_acct_table_apply(&t, &r, (uint64_t)i, &ended);
	}
	tw_acct_table_stats(&t, &st);
	CHECK(st.active == 16 && st.evicted == 1000 - 16);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"f999", 4, out, 64) == 1);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"f983", 4, out, 64) == 0);
	CHECK(tw_acct_table_find(&t, (const uint8_t *)"f0", 2, out, 64) == 0);
	{
		/* an update makes f984, the oldest, the youngest: the next
		 * start evicts f985 instead */
		struct tw_acct_record r = rec(TW_RADIUS_ACCT_INTERIM_UPDATE, "f984", 1, "ap");

		CHECK(tw_acct_table_apply(&t, &r, 2000, &ended) == TW_ACCT_UPDATED);
		r = rec(TW_RADIUS_ACCT_START, "g", 1, "ap");
		CHECK(tw_acct_table_apply(&t, &r, 2001, &ended) == TW_ACCT_STARTED);
		CHECK(tw_acct_table_find(&t, (const uint8_t *)"f984", 4, out, 64) == 1);
		CHECK(tw_acct_table_find(&t, (const uint8_t *)"f985", 4, out, 64) == 0);
	}
	{
		uint32_t cur = 0;
		size_t n = 0, k;

		while ((k = tw_acct_table_list(&t, &cur, out + n, 5)) > 0)
			n += k;
		CHECK(n == 16);
	}
	tw_acct_table_free(&t);
}

/* tw_acct_table_apply_ex tells what changed (what acct_db.c writes), and
 * tw_acct_table_restore puts sessions back as they were. */
static void test_change_restore(void)
{
	static struct tw_acct_table t, u;
	struct tw_acct_change ch;
	struct tw_acct_session out[20];
	struct tw_acct_record r;
	unsigned ended;
	char id[16];

	if (!CHECK_OK(tw_acct_table_init(&t, 16, seed)) || !CHECK_OK(tw_acct_table_init(&u, 16, seed)))
		return;
	r = rec(TW_RADIUS_ACCT_START, "s1", 1, "ap");
	CHECK(tw_acct_table_apply_ex(&t, &r, 100, &ended, &ch) == TW_ACCT_STARTED);
	CHECK(ch.have && !ch.evicted && ch.s.start_time == 5000 && ch.s.updates == 1);
	r = rec(TW_RADIUS_ACCT_INTERIM_UPDATE, "s1", 1, "ap");
	r.flags = TW_ACCT_F_IN_OCTETS | TW_ACCT_F_OUT_OCTETS;
	r.in_octets = 10;
	r.out_octets = 20;
	CHECK(tw_acct_table_apply_ex(&t, &r, 200, &ended, &ch) == TW_ACCT_UPDATED);
	CHECK(ch.have && ch.s.r.in_octets == 10 && ch.s.last_update == 200 && ch.s.updates == 2);
	/* a Stop: the session as it ended, the Stop merged in */
	r = rec(TW_RADIUS_ACCT_STOP, "s1", 1, "ap");
	r.flags = TW_ACCT_F_IN_OCTETS;
	r.in_octets = 30;
	CHECK(tw_acct_table_apply_ex(&t, &r, 300, &ended, &ch) == TW_ACCT_STOPPED);
	CHECK(ch.have && ch.s.r.in_octets == 30 && ch.s.r.out_octets == 20 &&
	      ch.s.last_status == TW_RADIUS_ACCT_STOP && ch.s.start_time == 5000);
	CHECK(tw_acct_table_apply_ex(&t, &r, 301, &ended, &ch) == TW_ACCT_STOP_UNKNOWN);
	CHECK(!ch.have && !ch.evicted);
	/* full: the 17th names the one evicted, the oldest */
	for (int i = 0; i < 17; i++) {
		snprintf(id, sizeof(id), "e%d", i);
		r = rec(TW_RADIUS_ACCT_START, id, 1, "ap");
		(void)tw_acct_table_apply_ex(&t, &r, 400 + (uint64_t)i, &ended, &ch);
		CHECK(ch.evicted == (i == 16));
	}
	CHECK(ch.evicted_key.id_len == 2 && memcmp(ch.evicted_key.id, "e0", 2) == 0);
	/* every live session copied into u as it is */
	{
		uint32_t cur = 0;
		size_t n = 0, k;

		while ((k = tw_acct_table_list(&t, &cur, out + n, 20 - n)) > 0)
			n += k;
		CHECK(n == 16);
		for (size_t i = 0; i < n; i++)
			CHECK_OK(tw_acct_table_restore(&u, &out[i]));
		CHECK(tw_acct_table_restore(&u, &out[0]) == TW_ERR_STATE);
		r = rec(TW_RADIUS_ACCT_START, "other", 1, "ap");
		{
			struct tw_acct_session extra = out[0];

			extra.r = r;
			CHECK(tw_acct_table_restore(&u, &extra) == TW_ERR_OVERFLOW);
		}
		CHECK(tw_acct_table_find(&u, (const uint8_t *)"e16", 3, out, 20) == 1);
		CHECK(out[0].last_update == 416 && out[0].updates == 1);
		/* the restored table goes on as the first would: e1 is the
		 * oldest, evicted by the next start */
		r = rec(TW_RADIUS_ACCT_START, "new", 1, "ap");
		(void)tw_acct_table_apply_ex(&u, &r, 999, &ended, &ch);
		CHECK(ch.evicted && ch.evicted_key.id_len == 2 && memcmp(ch.evicted_key.id, "e1", 2) == 0);
	}
	tw_acct_table_free(&t);
	tw_acct_table_free(&u);
}

static void test_mask(void)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "0001010123456789@wlan.mnc001.mcc001.3gppnetwork.org",
		  "0001010*****6789@wlan.mnc001.mcc001.3gppnetwork.org" },
		{ "1001010000000001", "1001010*****0001" },
		{ "001010123456789", "001010*****6789" },
		{ "7pseudonymXYZ@realm", "7************@realm" },
		{ "anonymous@realm.example", "a********@realm.example" },
		{ "a\nb", "a**" },
		{ "@realm", "@realm" },
	};
	char out[TW_ACCT_USER_MAX];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		tw_acct_mask_user(out, sizeof(out), (const uint8_t *)v[i].in, strlen(v[i].in));
		if (!CHECK(strcmp(out, v[i].out) == 0))
			tw_note("mask %s -> %s", v[i].in, out);
	}
	/* never the digits of the IMSI between MCC+MNC and the last four */
	tw_acct_mask_user(out, sizeof(out), (const uint8_t *)"6001015555555559", 16);
	CHECK(strstr(out, "55555") == NULL);
	/* too small an output: empty, not cut mid-way */
	tw_acct_mask_user(out, 8, (const uint8_t *)"6001015555555559", 16);
	CHECK(out[0] == 0);
}

void test_main(void)
{
	test_parse();
	test_life_cycle();
	test_change_restore();
	test_bound();
	test_mask();
}
