/* twagd tables: the EAP session table (cap, expiry, eviction of half-open
 * sessions only, one conversation per Calling-Station-Id, State lookup),
 * the RFC 5080 duplicate cache (new / pending / replay / expiry / ring
 * reuse) and the SipHash-2-4 they are keyed with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "twag/bytes.h"
#include "twag/server.h"

#include "../../src/server/srv_hash.h"

static const uint8_t seed[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
/* the client every session of these tests belongs to (RFC 5737 TEST-NET) */
static const struct tw_srv_addr nas_a = { 4, { 192, 0, 2, 10 } };

/* SipHash paper (Aumasson, Bernstein 2012) Appendix A: key 00..0f,
 * message 00..0e (15 octets) -> 0xa129ca6149be45e5; the reference
 * implementation's vectors.h, empty message: octets 31 0e 0e dd 47 db 6f
 * 72, i.e. 0x726fdb47dd0e0e31. */
static void test_siphash(void)
{
	uint64_t key[2];
	uint8_t k[16], msg[15];

	for (int i = 0; i < 16; i++)
		k[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	key[0] = tw_load_le64(k);
	key[1] = tw_load_le64(k + 8);
	CHECK(tw_srv_siphash(key, msg, 15) == 0xa129ca6149be45e5ULL);
	CHECK(tw_srv_siphash(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
}

static void token(uint8_t t[TW_SRV_TOKEN_LEN], unsigned n)
{
	memset(t, 0, TW_SRV_TOKEN_LEN);
	tw_store_be32(t, n);
	t[11] = 0x5a;
}

static struct tw_srv_session *start(struct tw_srv_sessions *t, const char *station,
				    unsigned n, uint64_t now)
{
	uint8_t tok[TW_SRV_TOKEN_LEN];

	token(tok, n);
	return tw_srv_sessions_start(t, &nas_a, (const uint8_t *)station,
				     station ? strlen(station) : 0, tok, now);
}

static void test_sessions_basic(void)
{
	static struct tw_srv_sessions t;
	struct tw_srv_sessions_stats st;
	struct tw_srv_session *s, *got;
	uint8_t state[16], bad[16];

	CHECK_ERR(tw_srv_sessions_init(&t, 8, 60, seed), TW_ERR_INVAL); /* < 16 */
	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	s = start(&t, "02-00-00-00-00-01", 1, 1000);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	tw_srv_session_state(&t, s, state);
	/* busy until released: a second packet of it is refused */
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1001, &got), TW_ERR_STATE);
	tw_srv_sessions_release(&t, s, false, 1002);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1003, &got));
	CHECK(got == s);
	tw_srv_sessions_release(&t, got, false, 1004);

	/* a forged token, a wrong length, an index out of range: nothing */
	memcpy(bad, state, 16);
	bad[15] ^= 1;
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, bad, 16, 1005, &got), TW_ERR_NOTFOUND);
	CHECK(got == NULL);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 15, 1005, &got), TW_ERR_NOTFOUND);
	memcpy(bad, state, 16);
	bad[0] ^= 0x80;
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, bad, 16, 1005, &got), TW_ERR_NOTFOUND);

	/* ended: its State finds nothing, and the engine area is wiped */
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1006, &got));
	memset(&got->eng, 0xa5, sizeof(got->eng));
	tw_srv_sessions_release(&t, got, true, 1007);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1008, &got), TW_ERR_NOTFOUND);
	CHECK(tw_ct_is_zero(&s->eng, sizeof(s->eng)));
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 0 && st.max == 16);

	/* expiry counts from the last packet (60 s) */
	s = start(&t, NULL, 2, 10000);
	tw_srv_session_state(&t, s, state);
	tw_srv_sessions_release(&t, s, false, 10000);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 69000, &got));
	tw_srv_sessions_release(&t, got, false, 69000);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 128999, &got));
	tw_srv_sessions_release(&t, got, false, 128999);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 188999, &got), TW_ERR_NOTFOUND);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.expired == 1 && st.active == 0);

	/* the sweep frees idle expired sessions, not fresh ones */
	s = start(&t, NULL, 3, 200000);
	tw_srv_sessions_release(&t, s, false, 200000);
	s = start(&t, NULL, 4, 250000);
	tw_srv_sessions_release(&t, s, false, 250000);
	CHECK(tw_srv_sessions_expire(&t, 259999, 100) == 0);
	CHECK(tw_srv_sessions_expire(&t, 260000, 100) == 1);
	CHECK(tw_srv_sessions_expire(&t, 400000, 100) == 1);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 0 && st.expired == 3);
	tw_srv_sessions_free(&t);
}

static void test_sessions_station(void)
{
	static struct tw_srv_sessions t;
	struct tw_srv_sessions_stats st;
	struct tw_srv_session *a, *b, *c, *got;
	uint8_t sa[16], sb[16], sc[16];
	char longid[200];

	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	a = start(&t, "02-00-00-00-00-01", 1, 1000);
	tw_srv_session_state(&t, a, sa);
	tw_srv_sessions_release(&t, a, false, 1000);
	/* another station: both live */
	b = start(&t, "02-00-00-00-00-02", 2, 1001);
	tw_srv_session_state(&t, b, sb);
	tw_srv_sessions_release(&t, b, false, 1001);
	/* a new start from station 1 ends its old conversation */
	c = start(&t, "02-00-00-00-00-01", 3, 1002);
	tw_srv_session_state(&t, c, sc);
	tw_srv_sessions_release(&t, c, false, 1002);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, sa, 16, 1003, &got), TW_ERR_NOTFOUND);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sb, 16, 1003, &got));
	tw_srv_sessions_release(&t, got, false, 1003);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sc, 16, 1003, &got));
	/* replaced while a worker holds it: freed when that worker releases */
	a = start(&t, "02-00-00-00-00-01", 4, 1004);
	tw_srv_session_state(&t, a, sa);
	CHECK(a != got);
	tw_srv_sessions_release(&t, got, false, 1005);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, sc, 16, 1006, &got), TW_ERR_NOTFOUND);
	tw_srv_sessions_release(&t, a, false, 1006);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sa, 16, 1007, &got));
	tw_srv_sessions_release(&t, got, true, 1007);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.replaced == 2 && st.active == 1);

	/* station ids longer than what is kept: hashed in full, so two long
	 * ids sharing the kept prefix are different stations */
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	a = start(&t, longid, 5, 2000);
	tw_srv_session_state(&t, a, sa);
	tw_srv_sessions_release(&t, a, false, 2000);
	longid[150] = 'y';
	b = start(&t, longid, 6, 2001);
	tw_srv_sessions_release(&t, b, false, 2001);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sa, 16, 2002, &got));
	tw_srv_sessions_release(&t, got, false, 2002);
	tw_srv_sessions_free(&t);
}

/* A flood of identity-only starts fills the table; conversations whose
 * peer answered are never evicted, half-open ones are (oldest first). */
static void test_sessions_flood(void)
{
	static struct tw_srv_sessions t;
	struct tw_srv_sessions_stats st;
	struct tw_srv_session *s, *legit, *got;
	uint8_t sl[16], first_flood[16];
	char station[32];
	int refused = 0;

	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	/* a phone starts and answers once: established */
	legit = start(&t, "phone", 1, 1000);
	tw_srv_session_state(&t, legit, sl);
	tw_srv_sessions_release(&t, legit, false, 1000);
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sl, 16, 1001, &got));
	got->established = true;
	tw_srv_sessions_release(&t, got, false, 1001);

	for (unsigned i = 0; i < 1000; i++) {
		snprintf(station, sizeof(station), "flood-%u", i);
		s = start(&t, station, 100 + i, 1002 + i / 100);
		if (s == NULL) {
			refused++;
			continue;
		}
		if (i == 0)
			tw_srv_session_state(&t, s, first_flood);
		tw_srv_sessions_release(&t, s, false, 1002 + i / 100);
	}
	CHECK(refused == 0);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 16);
	CHECK(st.evicted == 1000 - 15);
	/* the phone's conversation is still there; the oldest flood is not */
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, sl, 16, 1100, &got));
	tw_srv_sessions_release(&t, got, true, 1100);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, first_flood, 16, 1100, &got), TW_ERR_NOTFOUND);

	/* every slot established: a new start is refused (counted), until
	 * they expire */
	tw_srv_sessions_free(&t);
	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	for (unsigned i = 0; i < 16; i++) {
		s = start(&t, NULL, i, 5000);
		s->established = true;
		tw_srv_sessions_release(&t, s, false, 5000);
	}
	CHECK(start(&t, NULL, 99, 5001) == NULL);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.refused == 1);
	s = start(&t, NULL, 100, 65000);
	CHECK(s != NULL);
	if (s != NULL)
		tw_srv_sessions_release(&t, s, true, 65000);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.expired == 1);
	/* busy half-open sessions are not evicted either */
	tw_srv_sessions_free(&t);
	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	for (unsigned i = 0; i < 16; i++)
		CHECK(start(&t, NULL, i, 7000) != NULL); /* all held busy */
	CHECK(start(&t, NULL, 99, 7001) == NULL);
	tw_srv_sessions_free(&t);
}

/* RFC 3579 §2.1: the State goes to one NAS and comes back from it. From
 * another client it finds nothing to act on: the session is not held
 * busy (the owner's next packet is not turned away), its expiry is not
 * refreshed (another client cannot keep it alive) and its eviction order
 * is unchanged. */
static void test_sessions_client_binding(void)
{
	static struct tw_srv_sessions t;
	static const struct tw_srv_addr nas_b = { 4, { 192, 0, 2, 11 } };
	static const struct tw_srv_addr nas_v6 = { 6, { 0x20, 0x01, 0x0d, 0xb8, [15] = 10 } };
	struct tw_srv_sessions_stats st;
	struct tw_srv_session *s, *got;
	uint8_t state[16];

	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	s = start(&t, "02-00-00-00-00-01", 1, 1000);
	if (!CHECK(s != NULL))
		return;
	CHECK(tw_srv_addr_eq(&s->nas, &nas_a));
	tw_srv_session_state(&t, s, state);
	tw_srv_sessions_release(&t, s, false, 1000);

	/* another client, a v6 client with the same low octets: refused,
	 * nothing handed out */
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_b, state, 16, 1001, &got), TW_ERR_AUTH);
	CHECK(got == NULL);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_v6, state, 16, 1001, &got), TW_ERR_AUTH);
	/* not left busy: the owner goes on at once */
	CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1002, &got));
	CHECK(got == s);
	tw_srv_sessions_release(&t, got, false, 1002);
	/* another client presenting it just before expiry does not keep it
	 * alive: 60 s after the owner's last packet it is gone */
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_b, state, 16, 61000, &got), TW_ERR_AUTH);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 62002, &got), TW_ERR_NOTFOUND);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 0 && st.expired == 1);
	tw_srv_sessions_free(&t);

	/* one conversation per station OF A CLIENT: the same
	 * Calling-Station-Id through another client starts a second one and
	 * ends nothing; through the first client again it replaces only
	 * that client's */
	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	{
		uint8_t tok[TW_SRV_TOKEN_LEN], sb[16];
		struct tw_srv_session *sa2;

		s = start(&t, "02-00-00-00-00-07", 1, 1000);
		tw_srv_session_state(&t, s, state);
		tw_srv_sessions_release(&t, s, false, 1000);
		token(tok, 2);
		s = tw_srv_sessions_start(&t, &nas_b, (const uint8_t *)"02-00-00-00-00-07", 17,
					  tok, 1001);
		if (CHECK(s != NULL)) {
			tw_srv_session_state(&t, s, sb);
			tw_srv_sessions_release(&t, s, false, 1001);
		}
		CHECK_OK(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1002, &got));
		tw_srv_sessions_release(&t, got, false, 1002);
		tw_srv_sessions_stats(&t, &st);
		CHECK(st.active == 2 && st.replaced == 0);
		sa2 = start(&t, "02-00-00-00-00-07", 3, 1003);
		if (CHECK(sa2 != NULL))
			tw_srv_sessions_release(&t, sa2, false, 1003);
		CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 1004, &got),
			  TW_ERR_NOTFOUND);
		CHECK_OK(tw_srv_sessions_acquire(&t, &nas_b, sb, 16, 1004, &got));
		tw_srv_sessions_release(&t, got, false, 1004);
		tw_srv_sessions_stats(&t, &st);
		CHECK(st.active == 2 && st.replaced == 1);
	}
	tw_srv_sessions_free(&t);

	/* eviction order untouched: the oldest half-open session stays the
	 * first to go however often another client presents its State */
	CHECK_OK(tw_srv_sessions_init(&t, 16, 60, seed));
	for (unsigned i = 0; i < 16; i++) {
		s = start(&t, NULL, i, 2000 + i);
		if (i == 0)
			tw_srv_session_state(&t, s, state);
		tw_srv_sessions_release(&t, s, false, 2000 + i);
	}
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_b, state, 16, 2100, &got), TW_ERR_AUTH);
	s = start(&t, NULL, 99, 2101);
	CHECK(s != NULL);
	if (s != NULL)
		tw_srv_sessions_release(&t, s, true, 2101);
	CHECK_ERR(tw_srv_sessions_acquire(&t, &nas_a, state, 16, 2102, &got), TW_ERR_NOTFOUND);
	tw_srv_sessions_free(&t);
}

/* The sweep frees at most max sessions per call (one bounded lock hold). */
static void test_sessions_sweep_bounded(void)
{
	static struct tw_srv_sessions t;
	struct tw_srv_sessions_stats st;
	unsigned n, total = 0;

	CHECK_OK(tw_srv_sessions_init(&t, 128, 60, seed));
	for (unsigned i = 0; i < 100; i++) {
		struct tw_srv_session *s = start(&t, NULL, i, 1000);

		if (s != NULL)
			tw_srv_sessions_release(&t, s, false, 1000);
	}
	CHECK(tw_srv_sessions_expire(&t, 60999, 16) == 0); /* none due yet */
	CHECK(tw_srv_sessions_expire(&t, 61000, 16) == 16);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 84 && st.expired == 16);
	total = 16;
	while ((n = tw_srv_sessions_expire(&t, 61000, 16)) > 0) {
		CHECK(n <= 16);
		total += n;
	}
	CHECK(total == 100);
	tw_srv_sessions_stats(&t, &st);
	CHECK(st.active == 0 && st.expired == 100);
	tw_srv_sessions_free(&t);
}

/* a look-up with its hash made here */
static enum tw_srv_dup_result dl(struct tw_srv_dup *d, const struct tw_srv_addr *a, uint16_t port,
				 uint8_t id, const uint8_t auth[16], uint64_t now,
				 struct tw_srv_dup_entry **e)
{
	return tw_srv_dup_lookup(d, tw_srv_dup_hash(d, a, port, id, auth), a, port, id, auth, now,
				 e);
}

/*
 * The index after any sequence of operations: every slot in use names an
 * entry in use whose hash bits it holds, every entry in use is named by
 * exactly one slot reachable from its home without an empty slot
 * between, and a free entry by none.
 */
static unsigned dup_wrapped; /* live slots seen before their home (a run past the end) */

static bool dup_index_sound(const struct tw_srv_dup *d)
{
	const uint64_t idx_mask = (UINT64_C(1) << 25) - 1;
	const uint32_t mask = d->nslots - 1;
	uint8_t named[64] = { 0 };

	if (d->n > sizeof(named))
		return false;
	for (uint32_t s = 0; s < d->nslots; s++) {
		uint64_t v = d->slots[s];
		const struct tw_srv_dup_entry *e;
		uint32_t home;

		if (v == 0)
			continue;
		if ((v & idx_mask) == 0 || (v & idx_mask) > d->n || named[(v & idx_mask) - 1]++ != 0)
			return false;
		e = &d->e[(v & idx_mask) - 1];
		home = d->homes[(v & idx_mask) - 1] - 1;
		if (e->state == 0 || home != ((uint32_t)(v >> 25) & mask) ||
		    v >> 25 != tw_srv_dup_hash(d, &e->addr, e->port, e->id, e->auth) >> 25)
			return false;
		dup_wrapped += s < home;
		for (uint32_t t = home; t != s; t = (t + 1) & mask)
			if (d->slots[t] == 0)
				return false;
	}
	/* entries not indexed are free, with no home */
	for (uint32_t i = 0; i < d->n; i++)
		if ((d->e[i].state != 0) != (named[i] != 0) ||
		    (named[i] == 0 && d->homes[i] != 0))
			return false;
	return true;
}

static void test_dup(void)
{
	static struct tw_srv_dup d;
	struct tw_srv_dup_entry *e, *e2;
	struct tw_srv_addr a, b;
	static uint8_t big[TW_SRV_DUP_REPLY_MAX + 1];
	uint8_t auth[16], auth2[16], reply[100];
	unsigned prefix;

	CHECK_OK(tw_srv_addr_parse(&a, &prefix, "192.0.2.1"));
	CHECK_OK(tw_srv_addr_parse(&b, &prefix, "192.0.2.2"));
	memset(auth, 0x11, 16);
	memset(auth2, 0x11, 16);
	auth2[15] = 0x12;
	for (int i = 0; i < 100; i++)
		reply[i] = (uint8_t)i;
	CHECK_ERR(tw_srv_dup_init(&d, 8, 10, seed), TW_ERR_INVAL);
	CHECK_OK(tw_srv_dup_init(&d, 16, 10, seed));

	CHECK(dl(&d, &a, 1000, 7, auth, 0, &e) == TW_SRV_DUP_NEW);
	/* a retransmission while the first is processed: dropped */
	CHECK(dl(&d, &a, 1000, 7, auth, 1, &e2) == TW_SRV_DUP_PENDING);
	tw_srv_dup_done(&d, e, reply, sizeof(reply), 2);
	CHECK(dl(&d, &a, 1000, 7, auth, 3, &e2) == TW_SRV_DUP_REPLAY);
	CHECK(e2->reply_len == sizeof(reply) &&
	      memcmp(tw_srv_dup_reply(&d, e2), reply, sizeof(reply)) == 0);
	/* any field of the key different: a new request */
	CHECK(dl(&d, &b, 1000, 7, auth, 4, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_forget(&d, e2);
	CHECK(dl(&d, &a, 1001, 7, auth, 4, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_forget(&d, e2);
	CHECK(dl(&d, &a, 1000, 8, auth, 4, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_forget(&d, e2);
	CHECK(dl(&d, &a, 1000, 7, auth2, 4, &e2) == TW_SRV_DUP_NEW);
	/* forgotten (no reply was sent): the next copy is processed again */
	tw_srv_dup_forget(&d, e2);
	CHECK(dl(&d, &a, 1000, 7, auth2, 5, &e2) == TW_SRV_DUP_NEW);
	/* a reply too long for the cache is not kept */
	memset(big, 1, sizeof(big));
	tw_srv_dup_done(&d, e2, big, TW_SRV_DUP_REPLY_MAX + 1, 6);
	CHECK(dl(&d, &a, 1000, 7, auth2, 7, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_forget(&d, e2);
	/* expiry: 10 s after the reply */
	CHECK(dl(&d, &a, 1000, 7, auth, 10001, &e2) == TW_SRV_DUP_REPLAY);
	CHECK(dl(&d, &a, 1000, 7, auth, 10002, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_done(&d, e2, reply, 10, 10002);
	/* the ring: 16 newer requests push the oldest out (each lookup
	 * announced first, as a receive batch does: a hint, results the same;
	 * any k, even past the ring) */
	for (unsigned i = 0; i < 16; i++) {
		uint8_t x[16];

		memset(x, 0, 16);
		tw_store_be32(x, i + 100);
		tw_srv_dup_prefetch(&d, tw_srv_dup_hash(&d, &b, 2000, (uint8_t)i, x), i * 1000003u);
		CHECK(dl(&d, &b, 2000, (uint8_t)i, x, 10003, &e2) == TW_SRV_DUP_NEW);
		tw_srv_dup_done(&d, e2, reply, 20, 10003);
	}
	CHECK(dl(&d, &a, 1000, 7, auth, 10004, &e2) == TW_SRV_DUP_NEW);
	tw_srv_dup_forget(&d, e2);
	{
		uint8_t x[16];

		memset(x, 0, 16);
		tw_store_be32(x, 115);
		CHECK(dl(&d, &b, 2000, 15, x, 10005, &e2) == TW_SRV_DUP_REPLAY);
		CHECK(e2->reply_len == 20);
	}
	tw_srv_dup_free(&d);

	/* the reply ring: 16 entries share 16 * 256 = 4 KB, less than 4 *
	 * 4096 -> 16 KB ring; replies of 3000 octets push the oldest replies
	 * out before their entries are reused: those become misses, the
	 * newest stay intact byte for byte, and a reply never wraps */
	CHECK_OK(tw_srv_dup_init(&d, 16, 10, seed));
	CHECK(d.ring_len == 16384);
	{
		static uint8_t rep[6][3000];
		uint8_t x[16];

		for (unsigned i = 0; i < 6; i++) {
			memset(rep[i], (int)(0x30 + i), sizeof(rep[i]));
			rep[i][0] = (uint8_t)i;
			memset(x, 0, 16);
			x[0] = (uint8_t)i;
			CHECK(dl(&d, &a, 3000, 1, x, 1, &e2) == TW_SRV_DUP_NEW);
			tw_srv_dup_done(&d, e2, rep[i], sizeof(rep[i]), 1);
		}
		/* 5 * 3000 = 15000 octets fit; the 6th does not fit in the
		 * rest, starts a new lap and overwrites the first reply only */
		for (unsigned i = 0; i < 6; i++) {
			memset(x, 0, 16);
			x[0] = (uint8_t)i;
			if (i < 1) {
				CHECK(dl(&d, &a, 3000, 1, x, 2, &e2) == TW_SRV_DUP_NEW);
				tw_srv_dup_forget(&d, e2);
			} else {
				CHECK(dl(&d, &a, 3000, 1, x, 2, &e2) ==
				      TW_SRV_DUP_REPLAY);
				CHECK(e2->reply_len == 3000 &&
				      memcmp(tw_srv_dup_reply(&d, e2), rep[i], 3000) == 0);
			}
		}
		/* a reply longer than any RADIUS packet is not kept */
		memset(x, 0xee, 16);
		CHECK(dl(&d, &a, 3000, 1, x, 3, &e2) == TW_SRV_DUP_NEW);
		tw_srv_dup_done(&d, e2, big, TW_SRV_DUP_REPLY_MAX + 1, 3);
		CHECK(dl(&d, &a, 3000, 1, x, 4, &e2) == TW_SRV_DUP_NEW);
		tw_srv_dup_forget(&d, e2);
	}
	tw_srv_dup_free(&d);

	/* a worker caches a batch's replies at its end: more new requests
	 * than entries in one batch never take over an entry still waiting
	 * for its reply (that reply would be cached under another request's
	 * key); the extra ones are not cached. Each retransmission then gets
	 * its own reply or, uncached, is new again. */
	CHECK_OK(tw_srv_dup_init(&d, 16, 10, seed));
	{
		struct tw_srv_dup_entry *pe[20];
		uint8_t x[16], rep[20][40];

		for (unsigned i = 0; i < 20; i++) {
			memset(x, 0, 16);
			x[0] = (uint8_t)i;
			CHECK(dl(&d, &a, 4000, (uint8_t)i, x, 1, &pe[i]) ==
			      TW_SRV_DUP_NEW);
			CHECK(i < 16 ? pe[i] != NULL : pe[i] == NULL);
		}
		for (unsigned i = 0; i < 20; i++) {
			memset(rep[i], (int)i, sizeof(rep[i]));
			tw_srv_dup_done(&d, pe[i], rep[i], sizeof(rep[i]), 2); /* NULL: nothing */
		}
		for (unsigned i = 0; i < 20; i++) {
			memset(x, 0, 16);
			x[0] = (uint8_t)i;
			if (i < 16) {
				CHECK(dl(&d, &a, 4000, (uint8_t)i, x, 3, &e2) ==
				      TW_SRV_DUP_REPLAY);
				CHECK(e2->reply_len == 40 &&
				      memcmp(tw_srv_dup_reply(&d, e2), rep[i], 40) == 0);
			} else {
				CHECK(dl(&d, &a, 4000, (uint8_t)i, x, 3, &e2) ==
				      TW_SRV_DUP_NEW);
				tw_srv_dup_forget(&d, e2);
			}
		}
		tw_srv_dup_forget(&d, NULL);
	}
	tw_srv_dup_free(&d);
}

/*
 * The cache against a plain model of its rules (a ring of 16 entries
 * scanned linearly, the reply ring's positions computed the same way):
 * under one hash key, 60,000 random look-ups, replies and forgets over 24 keys, with time
 * moving on, replies of up to 3000 octets (so the reply ring laps and
 * overwrites) and at times more requests pending than entries. The index
 * (32 slots for 16 entries: long runs, many backward shifts) is checked
 * after every step.
 */
static void dup_model(const uint8_t dseed[16])
{
	static struct tw_srv_dup d;
	static uint8_t rep[3000];
	struct m_entry {
		int state; /* 0 free, 1 pending, 2 done */
		uint16_t port;
		uint8_t id, a0, fill;
		uint64_t off, expires;
		size_t len;
		struct tw_srv_dup_entry *e;
	} m[16];
	struct tw_srv_addr a = { 4, { 192, 0, 2, 1 } };
	uint32_t mnext = 0, x = 12345;
	uint64_t now = 0, wpos = 0;
	int pend[32], npend = 0;
	unsigned bad = 0, replays = 0, pendings = 0, uncached = 0;

	CHECK_OK(tw_srv_dup_init(&d, 16, 10, dseed));
	CHECK(d.nslots == 32);
	memset(m, 0, sizeof(m));
	for (unsigned op = 0; op < 60000 && bad == 0; op++) {
		unsigned r;

		x = x * 1103515245u + 12345u;
		r = x >> 8;
		now += r % 700;
		/* one stretch in ten has look-ups only: more pending than
		 * entries */
		if (r % 2 == 0 || npend == 0 || (op / 1000) % 10 == 9) {
			/* a look-up */
			uint16_t port = (uint16_t)(1 + (r >> 4) % 2);
			uint8_t id = (uint8_t)((r >> 6) % 4), auth[16];
			int found = -1;
			enum tw_srv_dup_result want, got;
			struct tw_srv_dup_entry *e = NULL;

			memset(auth, 0x5a, 16);
			auth[0] = (uint8_t)((r >> 9) % 3);
			for (int i = 0; i < 16; i++)
				if (m[i].state != 0 && m[i].port == port && m[i].id == id &&
				    m[i].a0 == auth[0])
					found = i;
			want = TW_SRV_DUP_NEW;
			if (found >= 0 && m[found].state == 1)
				want = TW_SRV_DUP_PENDING;
			else if (found >= 0 && now < m[found].expires &&
				 m[found].off + d.ring_len >= wpos)
				want = TW_SRV_DUP_REPLAY;
			else if (found >= 0)
				m[found].state = 0;
			got = dl(&d, &a, port, id, auth, now, &e);
			if (got != want) {
				fprintf(stderr, "op %u: result %d, model %d\n", op, got, want);
				bad++;
			} else if (got == TW_SRV_DUP_PENDING) {
				pendings++;
				bad += e != m[found].e;
			} else if (got == TW_SRV_DUP_REPLAY) {
				replays++;
				memset(rep, m[found].fill, m[found].len);
				bad += e != m[found].e || e->reply_len != m[found].len ||
				       memcmp(tw_srv_dup_reply(&d, e), rep, m[found].len) != 0;
			} else {
				int i = -1;

				for (int k = 0; k < 16; k++) {
					uint32_t j = mnext;

					mnext = (mnext + 1) % 16;
					if (m[j].state != 1) {
						i = (int)j;
						break;
					}
				}
				if (i < 0) {
					uncached++;
					bad += e != NULL;
				} else {
					m[i] = (struct m_entry){ .state = 1, .port = port, .id = id,
								 .a0 = auth[0], .e = e };
					bad += e != &d.e[i];
					pend[npend++] = i;
				}
			}
		} else {
			/* a reply to, or no reply for, a pending request */
			int k = (int)((r >> 4) % (unsigned)npend), i = pend[k];
			size_t len = 1 + (r >> 10) % 3000;

			pend[k] = pend[--npend];
			if ((r >> 23) % 5 == 0) {
				tw_srv_dup_forget(&d, m[i].e);
				m[i].state = 0;
			} else {
				size_t pos = wpos % d.ring_len;

				m[i].fill = (uint8_t)op;
				memset(rep, m[i].fill, len);
				tw_srv_dup_done(&d, m[i].e, rep, len, now);
				if (pos + len > d.ring_len)
					wpos += d.ring_len - pos;
				m[i].off = wpos;
				m[i].len = len;
				wpos += len;
				m[i].expires = now + 10000;
				m[i].state = 2;
			}
		}
		if (!dup_index_sound(&d)) {
			fprintf(stderr, "op %u: index unsound\n", op);
			bad++;
		}
	}
	CHECK(bad == 0);
	/* every rule was reached, many times */
	CHECK(replays > 1000 && pendings > 1000 && uncached > 10);
	if (bad != 0 || replays <= 1000 || pendings <= 1000 || uncached <= 10)
		fprintf(stderr, "replays %u pendings %u uncached %u\n", replays, pendings, uncached);
	tw_srv_dup_free(&d);
}

/* The model under eight hash keys: the slots the 24 keys land in differ
 * with each, so runs that wrap round the end of the index and shifts
 * across it are reached too. */
static void test_dup_model(void)
{
	dup_wrapped = 0;
	for (unsigned k = 0; k < 8; k++) {
		uint8_t dseed[16];

		memcpy(dseed, seed, 16);
		dseed[0] = (uint8_t)(dseed[0] + k);
		dup_model(dseed);
	}
	CHECK(dup_wrapped > 0);
}

void test_main(void)
{
	test_siphash();
	test_sessions_basic();
	test_sessions_station();
	test_sessions_flood();
	test_sessions_client_binding();
	test_sessions_sweep_bounded();
	test_dup();
	test_dup_model();
}
