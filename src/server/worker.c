/*
 * twag — twagd's packet path: one worker thread per SO_REUSEPORT socket,
 * batches of datagrams in (recvmmsg) and out (sendmmsg), and for each
 * Access-Request the RADIUS rules and one step of the EAP conversation.
 *
 * Specs: RFC 2865 (June 2000) §3-§5 RADIUS; RFC 3579 (September 2003)
 * §2.1 EAP over RADIUS (EAP-Message, State, EAP-Start), §3.2
 * Message-Authenticator; RFC 5080 (December 2007) §2.2.2 duplicates;
 * RFC 5997 (August 2010) §3 Status-Server; RFC 2548 (March 1999) §2.4
 * MS-MPPE keys; RFC 3748 (June 2004) §4.2, §5.3.1 EAP Failure and Nak;
 * TS 23.003 V17 §19.3 identity leading digits.
 *
 * Order of checks for each datagram (the Blast-RADIUS mitigations first):
 *   1. source address not a configured client: drop, count;
 *   2. strict decode (tw_radius_decode): drop, count malformed;
 *   3. Message-Authenticator required and verified (constant time) on
 *      every Access-Request with EAP and every Status-Server: drop, count;
 *      nothing below runs, so a forged request creates no state and does
 *      not touch the duplicate cache;
 *   4. duplicate cache: a retransmission gets the cached reply byte for
 *      byte (no EAP step, no vector), one still in progress is dropped;
 *   5. the EAP step, with a store call when the session needs a vector.
 * Every reply carries Message-Authenticator as its first attribute.
 *
 * No allocation here: buffers are the worker's, sessions the table's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/hex.h"
#include "twag/mem.h"
#include "twag/nai.h"

#include "dynauth_srv.h"
#include "srv.h"

enum {
	SWEEP_STEP = 256,       /* sessions freed per lock hold by the sweep */
	MAX_VECTOR_STEPS = 2,   /* store calls per EAP step (resync + vector) */
	ACT_PARKED = 100,       /* fetch_vector: the vector waits in w->park */
};


uint64_t tw_srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Random octets (RAND, State, MPPE salts, Class) from a per-worker pool
 * filled by OpenSSL's private DRBG (a per-thread NIST SP 800-90A CTR_DRBG
 * seeded and reseeded from the kernel, fork-safe): 4096 octets took 2.4 µs
 * against 16 µs from getrandom(2) on the development VM, whose ChaCha20
 * runs without vector units. Used octets are wiped from the pool.
 */
static int rnd(struct tw_srv_worker *w, uint8_t *out, size_t len)
{
	if (len > sizeof(w->rnd))
		return TW_ERR_INVAL;
	if (w->rnd_pos + len > sizeof(w->rnd)) {
		if (RAND_priv_bytes(w->rnd, (int)sizeof(w->rnd)) != 1)
			return TW_ERR_IO;
		w->rnd_pos = 0;
	}
	memcpy(out, w->rnd + w->rnd_pos, len);
	tw_wipe(w->rnd + w->rnd_pos, len);
	w->rnd_pos += len;
	return TW_OK;
}

/* The client's address as text, made only when a log line needs it. */
static const char *ip_of(struct tw_srv_req *r)
{
	const struct tw_srv_client *c = r->client;

	if (r->ip[0] != 0)
		return r->ip;
	/* a host entry's name ("addr/32", "addr/128") already is the text */
	if (c != NULL && c->prefix == (r->addr.family == 4 ? 32u : 128u)) {
		size_t k = strcspn(c->name, "/");

		if (k > 0 && k < sizeof(r->ip)) {
			memcpy(r->ip, c->name, k);
			r->ip[k] = 0;
			return r->ip;
		}
	}
	tw_srv_addr_text(&r->addr, r->ip, sizeof(r->ip));
	return r->ip;
}

/* Log lines of a request; the arguments are evaluated only when the
 * level is on (no address formatting on the fast path). */
#define LOGR(r, lvl, ...)                                                     \
	do {                                                                  \
		if (tw_log_enabled(lvl))                                      \
			tw_logf(&(r)->w->log, (lvl), __VA_ARGS__);            \
	} while (0)

static void count(struct tw_srv_req *r, enum tw_srv_ctr c)
{
	tw_srv_count(&r->w->ctr, c, 1);
}

/* ---- engines ------------------------------------------------------------ */

static const uint8_t eap_type_of[TW_SRV_N_METHODS] = {
	TW_EAP_TYPE_AKA_PRIME, TW_EAP_TYPE_AKA, TW_EAP_TYPE_SIM,
};

static bool method_enabled(const struct tw_srv *srv, unsigned m)
{
	for (unsigned i = 0; i < srv->cfg.n_methods; i++)
		if (srv->cfg.methods[i] == m)
			return true;
	return false;
}

/* TS 23.003 §19.3.2-§19.3.6, RFC 4186/4187/9048: the leading digit of the
 * EAP-Response/Identity names the method; anything else gets the first
 * method of --methods. */
static unsigned choose_method(const struct tw_srv *srv, const uint8_t *id, size_t len)
{
	struct tw_nai n;
	int m = -1;
	uint8_t d = 0;

	if (tw_nai_parse(&n, id, len) == TW_OK && n.user_len > 0)
		d = n.user[0];
	else if (len > 0)
		d = id[0];
	switch (d) {
	case '6': case '7': case '8':
		m = TW_SRV_M_AKA_PRIME;
		break;
	case '0': case '2': case '4':
		m = TW_SRV_M_AKA;
		break;
	case '1': case '3': case '5':
		m = TW_SRV_M_SIM;
		break;
	default:
		break;
	}
	if (m >= 0 && method_enabled(srv, (unsigned)m))
		return (unsigned)m;
	return srv->cfg.methods[0];
}

/* RFC 3748 §5.3.1: a Nak lists the types the peer wants; the first one we
 * run and have not tried in this conversation, or -1. */
static int nak_choice(const struct tw_srv *srv, const struct tw_srv_session *s,
		      const uint8_t *types, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned m = 0; m < TW_SRV_N_METHODS; m++)
			if (types[i] == eap_type_of[m] && method_enabled(srv, m) &&
			    !(s->tried & (1u << m)))
				return (int)m;
	return -1;
}

static int engine_init(struct tw_srv_req *r, struct tw_srv_session *s, unsigned m)
{
	/* a fresh slot's engine area is already clean (zeroed at start-up,
	 * wiped when its last conversation ended) and each init clears its
	 * own context; after a Nak the previous method's context may be
	 * the larger union member: wipe it all */
	if (s->tried != 0)
		tw_wipe(&s->eng, sizeof(s->eng));
	s->method = (uint8_t)m;
	s->tried |= (uint8_t)(1u << m);
	if (m == TW_SRV_M_SIM)
		return tw_eap_sim_server_init(&s->eng.sim, &r->srv->eap, &r->srv->sim_opts);
	return tw_aka_server_init(&s->eng.aka, &r->srv->eap, eap_type_of[m], 0);
}

static int engine_input(struct tw_srv_session *s, const uint8_t *pkt, size_t len,
			uint8_t *out, size_t *out_len)
{
	if (s->method == TW_SRV_M_SIM)
		return tw_eap_sim_server_input(&s->eng.sim, pkt, len, out, TW_SRV_EAP_OUT,
					       out_len);
	return tw_aka_server_input(&s->eng.aka, pkt, len, out, TW_SRV_EAP_OUT, out_len);
}

static const struct tw_eap_id_state *engine_ids(const struct tw_srv_session *s)
{
	return s->method == TW_SRV_M_SIM ? &s->eng.sim.ids : &s->eng.aka.ids;
}

static bool engine_reauth(const struct tw_srv_session *s)
{
	return s->method == TW_SRV_M_SIM ? s->eng.sim.reauth : s->eng.aka.reauth;
}

/* The masked IMSI of a session (STYLE: never a SUPI in clear), or "-". */
static void session_imsi(const struct tw_srv_session *s, char out[TW_NAI_MASK_MAX])
{
	const struct tw_eap_id_state *ids = engine_ids(s);

	if (ids->imsi_len == 0 ||
	    tw_nai_mask_imsi(out, TW_NAI_MASK_MAX, ids->imsi, ids->imsi_len) != TW_OK)
		snprintf(out, TW_NAI_MASK_MAX, "-");
}

static void store_latency(struct tw_srv_req *r, uint64_t t0)
{
	tw_srv_count(&r->w->ctr, TW_C_STORE_LAT_NS, now_ns() - t0);
	count(r, TW_C_STORE_LAT_COUNT);
}

static const char *store_reason(int rc)
{
	switch (rc) {
	case TW_ERR_NOTFOUND:
		return "unknown-subscriber";
	case TW_ERR_DISABLED:
		return "subscriber-disabled";
	case TW_ERR_UNSUPPORTED:
		return "method-not-for-subscriber";
	case TW_ERR_IO:
		return "store-io";
	case TW_ERR_RANGE:
		return "sqn-exhausted";
	default:
		return "store-error";
	}
}

static void store_failed(struct tw_srv_req *r, struct tw_srv_session *s, const char *what, int rc)
{
	char imsi[TW_NAI_MASK_MAX];

	r->reason = store_reason(rc);
	if (rc == TW_ERR_NOTFOUND || rc == TW_ERR_UNSUPPORTED || rc == TW_ERR_DISABLED)
		return;
	count(r, TW_C_STORE_ERRORS);
	session_imsi(s, imsi);
	LOGR(r, TW_LOG_WARN, "store-error", "op=%s imsi=%s error=%s client=%s",
		what, imsi, r->reason, ip_of(r));
}

/* TW_EAP_NEED_VECTOR: the store call (the only blocking step: a durable
 * SQN write for a subscriber's first vector, or a block used up before
 * the next was reserved ahead), then the engine continues; an EAP-AKA'
 * or EAP-AKA step of a batch is parked instead, its vector fetched with
 * the batch's others (finish_parked). */
static int fetch_vector(struct tw_srv_req *r, struct tw_srv_session *s, uint8_t *out,
			size_t *out_len)
{
	struct tw_srv_worker *w = r->w;
	struct tw_store *st = r->srv->store;
	char imsi[TW_NAI_MASK_MAX];
	uint64_t t0;
	int rc, act;

	if (s->method == TW_SRV_M_SIM) {
		const struct tw_eap_vec_request *q = tw_eap_sim_server_vec_request(&s->eng.sim);
		struct tw_eap_sim_triplet t[TW_EAP_SIM_MAX_TRIPLETS];
		uint8_t rands[TW_EAP_SIM_MAX_TRIPLETS][16];
		unsigned n;

		if (q == NULL || q->count < 1 || q->count > TW_EAP_SIM_MAX_TRIPLETS)
			return TW_ERR_STATE;
		n = q->count;
		/* RFC 4186 §4.3: the RANDs of one challenge are distinct (only
		 * RANDs that were drawn are compared) */
		do {
			rc = rnd(w, &rands[0][0], n * 16);
			if (rc != TW_OK)
				return rc;
		} while ((n >= 2 && memcmp(rands[0], rands[1], 16) == 0) ||
			 (n == 3 && (memcmp(rands[0], rands[2], 16) == 0 ||
				     memcmp(rands[1], rands[2], 16) == 0)));
		t0 = now_ns();
		rc = tw_store_sim_triplets(st, q->imsi, (const uint8_t(*)[16])rands, n, t);
		store_latency(r, t0);
		if (rc != TW_OK) {
			store_failed(r, s, "sim-triplets", rc);
			tw_wipe(t, sizeof(t));
			/* RFC 4186 §6.3.2: the authentication fails; the SIM
			 * engine has no "no triplets" entry, the session ends
			 * here with EAP-Failure answering the peer's response */
			rc = tw_eap_result(out, TW_SRV_EAP_OUT, TW_EAP_FAILURE, r->ev.id, out_len);
			return rc == TW_OK ? TW_EAP_REJECT : rc;
		}
		count(r, TW_C_STORE_VECTORS);
		act = tw_eap_sim_server_vector(&s->eng.sim, t, n, out, TW_SRV_EAP_OUT, out_len);
		tw_wipe(t, sizeof(t));
		return act;
	}

	{
		const struct tw_eap_vec_request *q = tw_aka_server_vec_request(&s->eng.aka);
		struct tw_eap_aka_vec v;
		uint8_t rand_[16];

		if (q == NULL)
			return TW_ERR_STATE;
		if (q->resync) {
			/* TS 33.102 §6.3.5 / C.3 via the store: MAC-S checked,
			 * SEQ_HE never goes backwards, rate-limited */
			t0 = now_ns();
			rc = tw_store_resync(st, q->imsi, q->rand_, q->auts);
			store_latency(r, t0);
			session_imsi(s, imsi);
			if (rc != TW_OK) {
				count(r, TW_C_RESYNCS_REFUSED);
				r->reason = rc == TW_ERR_AUTH ? "resync-bad-mac-s" :
					    rc == TW_ERR_RANGE ? "resync-rate-limited" :
								 store_reason(rc);
				if (rc == TW_ERR_IO)
					count(r, TW_C_STORE_ERRORS);
				LOGR(r, TW_LOG_WARN, "resync-refused",
					"method=%s imsi=%s reason=%s client=%s",
					tw_srv_method_name(s->method), imsi, r->reason, ip_of(r));
				return tw_aka_server_vector(&s->eng.aka, NULL, out,
							    TW_SRV_EAP_OUT, out_len);
			}
			count(r, TW_C_RESYNCS);
			LOGR(r, TW_LOG_INFO, "resync", "method=%s imsi=%s client=%s",
				tw_srv_method_name(s->method), imsi, ip_of(r));
		}
		rc = rnd(w, rand_, sizeof(rand_));
		if (rc != TW_OK)
			return rc;
		/* in the worker loop, an EAP-AKA' or EAP-AKA step of a request
		 * from the batch waits for the batch's end: its vector fetched
		 * with the others' (finish_parked), an EAP-AKA' challenge
		 * built with theirs */
		if (w->park_ok && (s->method == TW_SRV_M_AKA_PRIME || s->method == TW_SRV_M_AKA) &&
		    w->n_park < TW_SRV_BATCH && r->p != &w->pkt) {
			struct tw_srv_park *pk = &w->park[w->n_park];

			memcpy(pk->imsi, q->imsi, sizeof(pk->imsi));
			memcpy(pk->rand_, rand_, sizeof(pk->rand_));
			tw_wipe(rand_, sizeof(rand_));
			return ACT_PARKED;
		}
		t0 = now_ns();
		rc = tw_store_aka_vector(st, q->imsi, s->method == TW_SRV_M_AKA_PRIME, rand_, &v);
		store_latency(r, t0);
		if (rc != TW_OK) {
			store_failed(r, s, "aka-vector", rc);
			tw_wipe(&v, sizeof(v));
			/* no durable SQN, no vector: EAP-Failure (RFC 4187 §6.3.2) */
			return tw_aka_server_vector(&s->eng.aka, NULL, out, TW_SRV_EAP_OUT,
						    out_len);
		}
		count(r, TW_C_STORE_VECTORS);
		act = tw_aka_server_vector(&s->eng.aka, &v, out, TW_SRV_EAP_OUT, out_len);
		tw_wipe(&v, sizeof(v));
		return act;
	}
}

/* ---- replies -------------------------------------------------------------- */

static size_t finish(struct tw_srv_req *r, struct tw_radius_builder *b)
{
	struct tw_srv_worker *w = r->w;
	size_t n = 0;

	/* RFC 9765 (RADIUS/1.1 over TLS): no MD5, the request's Token */
	if (w->v11) {
		if (tw_radius_finish_v11(b, r->p->authenticator, &n) != TW_OK) {
			LOGR(r, TW_LOG_ERROR, "internal-error", "what=build-reply client=%s",
			     ip_of(r));
			return 0;
		}
		return n;
	}
	/* in the worker loop: signed with the rest of the batch
	 * (sign_batch), the same octets */
	if (w->defer_sign && b->err == TW_OK && w->n_pend < TW_SRV_BATCH) {
		w->pend[w->n_pend].b = *b;
		w->pend[w->n_pend].s = &r->client->key;
		w->pend[w->n_pend].e = NULL;
		w->pend[w->n_pend].tx = -1;
		w->cur_pend = w->n_pend++;
		return b->len;
	}
	if (tw_radius_finish_response_ctx(b, &r->client->key, &n) != TW_OK) {
		LOGR(r, TW_LOG_ERROR, "internal-error", "what=build-reply client=%s",
			ip_of(r));
		return 0;
	}
	return n;
}

/* Access-Reject (RFC 2865 §4.3), with EAP-Failure when eap is given
 * (RFC 3579 §2.6.3: an Access-Reject in an EAP conversation carries it). */
static size_t reply_reject(struct tw_srv_req *r, const uint8_t *eap, size_t eap_len)
{
	struct tw_radius_builder b;

	tw_radius_build_init(&b, r->reply, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCESS_REJECT,
			     r->p->id, r->p->authenticator, true);
	if (eap != NULL && eap_len > 0)
		tw_radius_add_eap(&b, eap, eap_len);
	count(r, TW_C_REJECTS);
	return finish(r, &b);
}

/* Access-Reject with EAP-Failure answering the request's EAP Identifier
 * (RFC 3748 §4.2), for requests that never reached a session. */
static size_t reject_no_session(struct tw_srv_req *r, const char *reason)
{
	uint8_t fail[4];
	size_t n = 0;

	LOGR(r, TW_LOG_INFO, "reject", "reason=%s client=%s", reason, ip_of(r));
	if (tw_eap_result(fail, sizeof(fail), TW_EAP_FAILURE, r->ev.id, &n) != TW_OK)
		n = 0;
	return reply_reject(r, fail, n);
}

static size_t reply_challenge(struct tw_srv_req *r, struct tw_srv_session *s,
			      const uint8_t *eap, size_t eap_len)
{
	struct tw_radius_builder b;
	uint8_t state[TW_SRV_STATE_LEN];

	tw_radius_build_init(&b, r->reply, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCESS_CHALLENGE,
			     r->p->id, r->p->authenticator, true);
	tw_radius_add_eap(&b, eap, eap_len);
	tw_srv_session_state(&r->srv->sessions, s, state);
	tw_radius_add(&b, TW_RADIUS_STATE, state, sizeof(state));
	count(r, TW_C_CHALLENGES);
	return finish(r, &b);
}

/* Access-Accept (RFC 2865 §4.2, RFC 3579 §2.6.3): EAP-Success, the MSK as
 * MS-MPPE-Recv-Key (MSK[0..31]) and MS-MPPE-Send-Key (MSK[32..63]),
 * salt-encrypted (RFC 2548 §2.4.2/§2.4.3), User-Name, Session-Timeout,
 * Acct-Interim-Interval, Class. */
static size_t reply_accept(struct tw_srv_req *r, struct tw_srv_session *s, const uint8_t *eap,
			   size_t eap_len)
{
	struct tw_radius_builder b;
	struct tw_eap_keys k;
	uint8_t rb[2 + 8];
	char cls[5 + 16 + 1];
	const uint8_t *ident;
	size_t ident_len, n = 0;

	memset(&k, 0, sizeof(k));
	if (s->method == TW_SRV_M_SIM) {
		const struct tw_eap_keys *kp = tw_eap_sim_server_keys(&s->eng.sim);

		if (kp == NULL)
			goto out;
		k = *kp;
		ident = s->eng.sim.identity;
		ident_len = s->eng.sim.identity_len;
	} else {
		if (tw_aka_server_keys(&s->eng.aka, &k) != TW_OK)
			goto out;
		ident = s->eng.aka.identity;
		ident_len = s->eng.aka.identity_len;
	}
	if (rnd(r->w, rb, sizeof(rb)) != TW_OK)
		goto out;
	memcpy(cls, "twag:", 5);
	tw_hex_encode(cls + 5, rb + 2, 8);
	tw_radius_build_init(&b, r->reply, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCESS_ACCEPT,
			     r->p->id, r->p->authenticator, true);
	tw_radius_add_eap(&b, eap, eap_len);
	/* salt-encrypted when the reply is finished: with the batch's others
	 * (sign_batch), or on its own */
	tw_radius_add_mppe_keys_later(&b, k.msk, tw_load_be16(rb));
	if (ident_len > 0 && ident_len <= TW_RADIUS_ATTR_MAX_VALUE)
		tw_radius_add(&b, TW_RADIUS_USER_NAME, ident, ident_len);
	if (r->srv->cfg.reply_session_timeout > 0)
		tw_radius_add_u32(&b, TW_RADIUS_SESSION_TIMEOUT,
				  r->srv->cfg.reply_session_timeout);
	/* RFC 2869 §5.16: how often the NAS sends Interim-Updates */
	if (r->srv->cfg.acct_interim_interval > 0)
		tw_radius_add_u32(&b, TW_RADIUS_ACCT_INTERIM_INTERVAL,
				  r->srv->cfg.acct_interim_interval);
	tw_radius_add(&b, TW_RADIUS_CLASS, cls, 5 + 16);
	n = finish(r, &b);
	if (n > 0) /* the session, for a later Disconnect/CoA (dynauth.c) */
		tw_srv_dynauth_note_accept(r->srv, r->p, &r->addr, rb + 2,
					   engine_ids(s)->imsi,
					   engine_ids(s)->imsi_len, ident, ident_len);
out:
	tw_wipe(&k, sizeof(k));
	if (n > 0)
		count(r, TW_C_ACCEPTS);
	return n;
}

/* ---- the conversation ----------------------------------------------------- */

/* One EAP step of session s with the response in w->eap_in; the session is
 * held busy and released here. */
static size_t converse_end(struct tw_srv_req *r, struct tw_srv_session *s, bool first,
			   int act, uint8_t *out, size_t out_len);

static size_t converse(struct tw_srv_req *r, struct tw_srv_session *s, bool first)
{
	struct tw_srv_worker *w = r->w;
	uint8_t *out = w->eap_out;
	size_t out_len = 0;
	int act;

	if (!first && r->ev.type == TW_EAP_TYPE_NAK && r->ev.id == s->last_req_id &&
	    s->idpkt_len > 0) {
		/* RFC 3748 §5.3.1: the peer refuses this method and proposes
		 * others: run the first acceptable one from the identity
		 * again, answering the Nak's Identifier */
		int m = nak_choice(r->srv, s, r->ev.data, r->ev.data_len);

		if (m >= 0) {
			uint8_t idpkt[TW_SRV_IDPKT_MAX];
			unsigned from = s->method;

			count(r, TW_C_NAKS);
			memcpy(idpkt, s->idpkt, s->idpkt_len);
			idpkt[1] = r->ev.id;
			act = engine_init(r, s, (unsigned)m);
			if (act == TW_OK)
				act = engine_input(s, idpkt, s->idpkt_len, out, &out_len);
			LOGR(r, TW_LOG_DEBUG, "nak", "from=%s to=%s client=%s",
				tw_srv_method_name(from), tw_srv_method_name(s->method), ip_of(r));
			goto step;
		}
	}
	act = engine_input(s, w->eap_in, r->eap_len, out, &out_len);
step:
	/* at most a resynchronisation and a vector per step: an engine that
	 * kept asking would otherwise spin this worker on the store */
	for (unsigned k = 0; act == TW_EAP_NEED_VECTOR; k++)
		act = k < MAX_VECTOR_STEPS ? fetch_vector(r, s, out, &out_len) : TW_ERR_STATE;
	if (act == ACT_PARKED) {
		struct tw_srv_park *pk = &w->park[w->n_park++];

		/* the session stays busy; finish_parked() goes on from here */
		pk->r = *r;
		pk->s = s;
		pk->first = first;
		pk->e = NULL;
		pk->tx = -1;
		w->parked_now = true;
		return 0;
	}
	return converse_end(r, s, first, act, out, out_len);
}

/* ---- per-request debug (debug.c) ---------------------------------------- */

/* Whether the conversation of s is debugged: once its client or its
 * IMSI (known from this step on) matches a condition, until it ends or
 * no condition is left. */
static bool debug_wanted(struct tw_srv_req *r, struct tw_srv_session *s)
{
	const struct tw_eap_id_state *ids;

	if (atomic_load_explicit(&r->srv->debug.on, memory_order_relaxed) == 0)
		return false;
	if (s != NULL && s->debug)
		return true;
	ids = s != NULL ? engine_ids(s) : NULL;
	if (!tw_srv_debug_match(&r->srv->debug, &r->addr,
				ids != NULL && ids->imsi_len > 0 ? ids->imsi : NULL,
				ids != NULL ? ids->imsi_len : 0))
		return false;
	if (s != NULL)
		s->debug = true;
	return true;
}

/* The request of r and its reply (r->reply[0..n), 0: none) in the log.
 * A reply still to be signed with its batch has its keys in the clear
 * and no Length yet: the copy dumped gets the Length and is wiped. */
static void debug_packets(struct tw_srv_worker *w, const char *client, const uint8_t *in,
			  size_t in_len, const uint8_t *reply, size_t n)
{
	uint8_t copy[TW_RADIUS_MAX_LEN];

	w->dbg_done = true;
	tw_srv_debug_dump(&w->log, "in", client, in, in_len);
	if (n < TW_RADIUS_HDR_LEN || n > sizeof(copy)) {
		tw_log_always(&w->log, TW_LOG_DEBUG, "debug-packet",
			      "dir=out client=%s msg=\"no reply (silently discarded)\"", client);
		return;
	}
	memcpy(copy, reply, n);
	copy[2] = (uint8_t)(n >> 8);
	copy[3] = (uint8_t)n;
	tw_srv_debug_dump(&w->log, "out", client, copy, n);
	tw_wipe(copy, n);
}

static void debug_log(struct tw_srv_req *r, size_t n)
{
	debug_packets(r->w, ip_of(r), r->p->buf, r->p->len, r->reply, n);
}

/* The rest of an EAP step once the engine has acted (act, its output in
 * out): the reply, the counters and log, the session released. */
static size_t converse_end(struct tw_srv_req *r, struct tw_srv_session *s, bool first,
			   int act, uint8_t *out, size_t out_len)
{
	struct tw_srv_worker *w = r->w;
	char imsi[TW_NAI_MASK_MAX];
	bool ended = true, dbg = debug_wanted(r, s);
	size_t n = 0;

	switch (act) {
	case TW_EAP_SEND:
		if (!first)
			s->established = true; /* the peer answered a request of ours */
		s->last_req_id = out[1];
		n = reply_challenge(r, s, out, out_len);
		ended = n == 0;
		break;
	case TW_EAP_ACCEPT:
		n = reply_accept(r, s, out, out_len);
		if (n > 0) {
			count(r, (engine_reauth(s) ? TW_C_ATTACH_REAUTH : TW_C_ATTACH_FULL) +
					 s->method);
			if (tw_log_enabled(TW_LOG_INFO)) {
				session_imsi(s, imsi);
				tw_logf(&w->log, TW_LOG_INFO, "accept",
					"method=%s kind=%s imsi=%s client=%s",
					tw_srv_method_name(s->method),
					engine_reauth(s) ? "reauth" : "full", imsi, ip_of(r));
			}
		}
		break;
	case TW_EAP_REJECT:
		n = reply_reject(r, out, out_len);
		count(r, TW_C_AUTH_FAIL + s->method);
		if (tw_log_enabled(TW_LOG_INFO)) {
			session_imsi(s, imsi);
			tw_logf(&w->log, TW_LOG_INFO, "reject",
				"method=%s imsi=%s reason=%s client=%s",
				tw_srv_method_name(s->method), imsi,
				r->reason != NULL ? r->reason : "eap-failure", ip_of(r));
		}
		break;
	case TW_EAP_DISCARD:
		/* RFC 3748 §4.1: not the response we wait for; the session
		 * stays unless this was its very first packet */
		count(r, TW_C_DROPPED);
		LOGR(r, TW_LOG_DEBUG, "drop", "reason=eap-discard method=%s client=%s",
			tw_srv_method_name(s->method), ip_of(r));
		ended = first;
		break;
	default:
		/* a caller error of ours: never leave the peer hanging */
		LOGR(r, TW_LOG_ERROR, "internal-error", "what=eap-engine rc=%d method=%s",
			act, tw_srv_method_name(s->method));
		count(r, TW_C_AUTH_FAIL + s->method);
		n = reject_no_session(r, "internal-error");
		break;
	}
	if (dbg)
		debug_log(r, n);
	tw_wipe(out, out_len);
	tw_srv_sessions_release(&r->srv->sessions, s, ended, r->now);
	return n;
}

/* A first Access-Request of a conversation: EAP-Response/Identity. */
static size_t start_session(struct tw_srv_req *r)
{
	const struct tw_radius_attr *csi;
	struct tw_srv_session *s;
	uint8_t token[TW_SRV_TOKEN_LEN];
	unsigned m;

	if (r->ev.type != TW_EAP_TYPE_IDENTITY)
		return reject_no_session(r, "no-state");
	if (r->eap_len > TW_SRV_IDPKT_MAX)
		return reject_no_session(r, "identity-too-long");
	if (rnd(r->w, token, sizeof(token)) != TW_OK)
		return reject_no_session(r, "no-random");
	csi = tw_radius_find(r->p, TW_RADIUS_CALLING_STATION_ID);
	s = tw_srv_sessions_start(&r->srv->sessions, &r->addr,
				  csi != NULL ? tw_radius_value(r->p, csi) : NULL,
				  csi != NULL ? csi->len : 0, token, r->now);
	tw_wipe(token, sizeof(token));
	if (s == NULL) {
		/* every slot is a live conversation: a counted, clean reject
		 * (logged at most once a second per worker: a flood must not
		 * turn into a log flood) */
		if (r->now - r->w->last_full_log_ms >= 1000) {
			r->w->last_full_log_ms = r->now;
			LOGR(r, TW_LOG_WARN, "sessions-full", "client=%s", ip_of(r));
		}
		return reject_no_session(r, "sessions-full");
	}
	memcpy(s->idpkt, r->w->eap_in, r->eap_len);
	s->idpkt_len = (uint16_t)r->eap_len;
	m = choose_method(r->srv, r->ev.data, r->ev.data_len);
	if (engine_init(r, s, m) != TW_OK) {
		tw_srv_sessions_release(&r->srv->sessions, s, true, r->now);
		return reject_no_session(r, "method-init");
	}
	return converse(r, s, true);
}

static size_t access_request(struct tw_srv_req *r)
{
	const struct tw_radius_pkt *p = r->p;
	const struct tw_radius_attr *st;
	struct tw_srv_session *s;
	size_t n;
	int rc;

	if (p->n_eap == 0) {
		/* not EAP (PAP, CHAP...): this server only does EAP */
		LOGR(r, TW_LOG_INFO, "reject", "reason=no-eap client=%s", ip_of(r));
		return reply_reject(r, NULL, 0);
	}
	if (p->eap_len == 0) {
		/* RFC 3579 §2.1 EAP-Start (an empty EAP-Message): answer with
		 * EAP-Request/Identity, statelessly (no State: the
		 * EAP-Response/Identity then starts the session) */
		struct tw_radius_builder b;
		uint8_t req_id[8], id;

		if (rnd(r->w, &id, 1) != TW_OK ||
		    tw_eap_request_identity(req_id, sizeof(req_id), id, &n) != TW_OK)
			return 0;
		tw_radius_build_init(&b, r->reply, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCESS_CHALLENGE,
				     p->id, p->authenticator, true);
		tw_radius_add_eap(&b, req_id, n);
		count(r, TW_C_CHALLENGES);
		return finish(r, &b);
	}
	rc = tw_radius_eap_join(p, r->w->eap_in, sizeof(r->w->eap_in), &r->eap_len);
	if (rc != TW_OK || tw_eap_decode(&r->ev, r->w->eap_in, r->eap_len) != TW_OK) {
		/* RFC 3579 §2.2: an invalid EAP packet is silently discarded */
		count(r, TW_C_MALFORMED);
		LOGR(r, TW_LOG_DEBUG, "drop", "reason=bad-eap client=%s", ip_of(r));
		return 0;
	}
	if (r->ev.code != TW_EAP_RESPONSE)
		return reject_no_session(r, "not-eap-response");
	st = tw_radius_find(p, TW_RADIUS_STATE);
	if (st == NULL)
		return start_session(r);
	/* a State is good only from the client that got it: from another
	 * one it is dropped before the session is touched (no busy mark, no
	 * expiry refresh), see tw_srv_sessions_acquire */
	rc = tw_srv_sessions_acquire(&r->srv->sessions, &r->addr, tw_radius_value(p, st),
				     st->len, r->now, &s);
	if (rc == TW_ERR_STATE) {
		/* another worker is on this session (the NAS retransmitted
		 * from another port): let that one answer */
		count(r, TW_C_DROPPED);
		return 0;
	}
	if (rc == TW_ERR_AUTH) {
		count(r, TW_C_DROPPED);
		LOGR(r, TW_LOG_WARN, "drop", "reason=state-from-other-client client=%s",
			ip_of(r));
		return 0;
	}
	if (rc != TW_OK)
		return reject_no_session(r, "unknown-state");
	return converse(r, s, false);
}

/* RFC 5997 §3: Status-Server (with a valid Message-Authenticator) is
 * answered with Access-Accept; no duplicate detection (§3, "SHOULD NOT"). */
static size_t status_server(struct tw_srv_req *r)
{
	struct tw_radius_builder b;

	tw_radius_build_init(&b, r->reply, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCESS_ACCEPT,
			     r->p->id, r->p->authenticator, true);
	count(r, TW_C_STATUS_SERVER);
	return finish(r, &b);
}

static size_t handle_one(struct tw_srv_worker *w, const uint8_t *in, size_t len,
			 const struct sockaddr *from, uint8_t *reply, uint64_t now_ms)
{
	struct tw_srv_dup_entry *e = NULL;
	struct tw_srv_req r;
	uint16_t port;
	size_t n;

	bool have_pre = w->pre_set;

	w->pre_set = false; /* one verdict, one request */
	memset(&r, 0, sizeof(r));
	w->cur_pend = -1;
	/* this request's: a worker whose last batch ended with a parked
	 * step still has it set, and a call on its own must not take its
	 * (already finished) park slot */
	w->parked_now = false;
	r.w = w;
	r.srv = w->srv;
	r.reply = reply;
	r.now = now_ms;
	if (tw_srv_addr_from_sockaddr(&r.addr, &port, from) != TW_OK)
		return 0;
	if (have_pre) {
		/* found, decoded and checked with the batch (verify_batch) */
		r.client = w->pre_client;
		r.p = w->pre_pkt;
	} else {
		/* RFC 2865 §3: only configured clients */
		r.client = tw_srv_clients_find(w->clients, &r.addr);
		if (r.client == NULL) {
			count(&r, TW_C_UNKNOWN_CLIENTS);
			LOGR(&r, TW_LOG_DEBUG, "drop", "reason=unknown-client client=%s",
			     ip_of(&r));
			return 0;
		}
		if (tw_radius_decode(&w->pkt, in, len) != TW_OK) {
			count(&r, TW_C_MALFORMED);
			LOGR(&r, TW_LOG_DEBUG, "drop", "reason=malformed client=%s", ip_of(&r));
			return 0;
		}
		r.p = &w->pkt;
	}
	if (r.p->code != TW_RADIUS_ACCESS_REQUEST && r.p->code != TW_RADIUS_STATUS_SERVER) {
		count(&r, TW_C_UNKNOWN_TYPES);
		LOGR(&r, TW_LOG_DEBUG, "drop", "reason=unknown-code code=%u client=%s",
			r.p->code, ip_of(&r));
		return 0;
	}
	if (r.p->code == TW_RADIUS_ACCESS_REQUEST)
		count(&r, TW_C_REQUESTS);
	/* RFC 3579 §3.2, RFC 5997 §3: Message-Authenticator checked before
	 * anything else: a request without a valid one leaves no trace.
	 * RADIUS/1.1 (w->v11, RFC 9765): TLS authenticates the packets,
	 * a Message-Authenticator is ignored */
	if (!w->v11 &&
	    (have_pre ? w->pre_rc : tw_radius_verify_request_ctx(r.p, &r.client->key)) != TW_OK) {
		count(&r, TW_C_BAD_AUTH);
		LOGR(&r, TW_LOG_DEBUG, "drop", "reason=bad-message-authenticator client=%s",
			ip_of(&r));
		return 0;
	}
	if (r.p->code == TW_RADIUS_STATUS_SERVER)
		return status_server(&r);
	/* a request without EAP gets a fixed Access-Reject (byte-identical
	 * for a retransmission anyway): it may carry no Message-Authenticator,
	 * so it must not reach the duplicate cache and push authenticated
	 * requests out of it */
	if (r.p->n_eap == 0)
		return access_request(&r);

	switch (tw_srv_dup_lookup(&w->dup,
				  have_pre ? w->pre_hash
					   : tw_srv_dup_hash(&w->dup, &r.addr, port, r.p->id,
							     r.p->authenticator),
				  &r.addr, port, r.p->id, r.p->authenticator, now_ms, &e)) {
	case TW_SRV_DUP_REPLAY:
		count(&r, TW_C_DUPLICATES);
		memcpy(reply, tw_srv_dup_reply(&w->dup, e), e->reply_len);
		LOGR(&r, TW_LOG_DEBUG, "duplicate", "action=resend client=%s", ip_of(&r));
		return e->reply_len;
	case TW_SRV_DUP_PENDING:
		count(&r, TW_C_DUPLICATES);
		count(&r, TW_C_DROPPED);
		return 0;
	case TW_SRV_DUP_NEW:
		break;
	}
	n = access_request(&r);
	if (w->parked_now) {
		w->park[w->n_park - 1].e = e; /* cached once built and signed */
		return 0;
	}
	if (n > 0 && w->cur_pend >= 0)
		w->pend[w->cur_pend].e = e; /* cached once signed (sign_batch) */
	else if (n > 0)
		tw_srv_dup_done(&w->dup, e, reply, n, now_ms);
	else
		tw_srv_dup_forget(&w->dup, e);
	return n;
}

size_t tw_srv_handle(struct tw_srv_worker *w, const uint8_t *in, size_t len,
		     const struct sockaddr *from, uint8_t *reply, uint64_t now_ms)
{
	struct tw_srv_req r;
	size_t n;

	w->dbg_done = false;
	n = handle_one(w, in, len, from, reply, now_ms);
	/* on its own (not the batched loop, which does it per batch) */
	if (!w->defer_sign)
		tw_srv_dynauth_flush(w->srv);
	/* what never reached a session (drops, EAP-Start, rejects before a
	 * session, duplicates) is debugged by its client; a parked step is
	 * when its reply is built */
	if (atomic_load_explicit(&w->srv->debug.on, memory_order_relaxed) == 0 || w->dbg_done ||
	    w->parked_now)
		return n;
	memset(&r, 0, sizeof(r));
	r.w = w;
	if (tw_srv_addr_from_sockaddr(&r.addr, NULL, from) != TW_OK ||
	    !tw_srv_debug_match(&w->srv->debug, &r.addr, NULL, 0))
		return n;
	r.client = tw_srv_clients_find(w->clients, &r.addr);
	debug_packets(w, ip_of(&r), in, len, reply, n);
	return n;
}

/*
 * The Message-Authenticators of the datagrams w->dg[0..ndg) checked at once
 * (RFC 3579 §3.2, RFC 5997 §3: the same rules as
 * tw_radius_verify_request_ctx, the HMAC-MD5 work in parallel lanes).
 * Only datagrams from a known client that decode get a verdict;
 * tw_srv_handle takes it with their client and packet (and finds and
 * decodes the others itself, to drop and count them).
 */
static void verify_batch(struct tw_srv_worker *w)
{
	int nv = 0;
	uint32_t nl = 0; /* duplicate-cache look-ups ahead */

	for (int i = 0; i < w->ndg; i++) {
		const struct tw_srv_dgram *d = &w->dg[i];
		const struct tw_srv_client *c;
		struct tw_srv_addr a;
		uint16_t port;

		w->vidx[i] = -1;
		if (d->bad ||
		    tw_srv_addr_from_sockaddr(&a, &port,
					      (const struct sockaddr *)&w->rx_addr[d->slot]) != TW_OK ||
		    (c = tw_srv_clients_find(w->clients, &a)) == NULL ||
		    tw_radius_decode(&w->vpkt[nv], d->p, d->len) != TW_OK)
			continue;
		/* the duplicate cache sees EAP Access-Requests only (tw_srv_handle) */
		if (w->vpkt[nv].code == TW_RADIUS_ACCESS_REQUEST && w->vpkt[nv].n_eap > 0) {
			w->vhash[nv] = tw_srv_dup_hash(&w->dup, &a, port, w->vpkt[nv].id,
						       w->vpkt[nv].authenticator);
			tw_srv_dup_prefetch(&w->dup, w->vhash[nv], nl++);
		}
		w->vjob[nv].p = &w->vpkt[nv];
		w->vjob[nv].s = &c->key;
		w->vclient[nv] = c;
		w->vidx[i] = nv++;
	}
	tw_radius_verify_requests_ctx(w->vjob, (size_t)nv);
}

/*
 * The replies of a batch signed at once (RFC 3579 §3.2
 * Message-Authenticator, RFC 2865 §3 Response Authenticator: the MD5 work
 * of all of them in parallel lanes, tw_radius_finish_responses_ctx), then
 * cached for retransmissions. A reply that cannot be finished (never
 * expected: its builder was sound when deferred) is not sent: its slot
 * gets length 0 and is left out by the caller.
 */
static void sign_batch(struct tw_srv_worker *w, uint64_t now_ms)
{
	struct tw_radius_finish_job jobs[TW_SRV_BATCH];

	for (int i = 0; i < w->n_pend; i++) {
		jobs[i].b = &w->pend[i].b;
		jobs[i].s = w->pend[i].s;
	}
	tw_radius_finish_responses_ctx(jobs, (size_t)w->n_pend);
	for (int i = 0; i < w->n_pend; i++) {
		int tx = w->pend[i].tx;

		if (jobs[i].rc != TW_OK) {
			tw_logf(&w->log, TW_LOG_ERROR, "internal-error", "what=sign-reply");
			if (w->pend[i].e != NULL)
				tw_srv_dup_forget(&w->dup, w->pend[i].e);
			if (tx >= 0)
				w->tx_iov[tx].iov_len = 0;
			continue;
		}
		if (w->pend[i].e != NULL)
			tw_srv_dup_done(&w->dup, w->pend[i].e, w->pend[i].b.buf, jobs[i].len,
					now_ms);
	}
	w->n_pend = 0;
}

/*
 * The parked EAP-AKA' and EAP-AKA steps of a batch: their vectors fetched
 * at once (tw_store_aka_vectors), their challenges built at once
 * (tw_aka_server_vector_many: EAP-AKA' key hierarchies and AT_MACs in
 * lockstep lanes, the same packets as one by one), then each step
 * finished as converse() would have, its reply in the send slot kept for
 * it.
 */
static void finish_parked(struct tw_srv_worker *w, uint64_t now_ms)
{
	struct tw_aka_server_vec_job jobs[TW_SRV_BATCH];
	struct tw_store_aka_req q[TW_SRV_BATCH];
	int n = w->n_park, m = 0;
	uint64_t t0 = now_ns();

	/* the vectors: as one by one, but the SQN reservations they need
	 * (first vectors since start) in one commit */
	for (int k = 0; k < n; k++)
		q[k] = (struct tw_store_aka_req){
			.imsi = w->park[k].imsi,
			.aka_prime = w->park[k].s->method == TW_SRV_M_AKA_PRIME,
			.rand_ = w->park[k].rand_,
			.out = &w->park[k].v,
		};
	tw_store_aka_vectors(w->srv->store, q, (size_t)n);
	/* the store's latency: the batch's, shared out */
	tw_srv_count(&w->ctr, TW_C_STORE_LAT_NS, now_ns() - t0);
	for (int k = 0; k < n; k++) {
		struct tw_srv_park *pk = &w->park[k];

		count(&pk->r, TW_C_STORE_LAT_COUNT);
		tw_wipe(pk->rand_, sizeof(pk->rand_));
		if (q[k].rc == TW_OK) {
			count(&pk->r, TW_C_STORE_VECTORS);
			jobs[m++] = (struct tw_aka_server_vec_job){
				.s = &pk->s->eng.aka, .v = &pk->v, .out = pk->out,
				.max = TW_SRV_EAP_OUT,
			};
		}
	}
	tw_aka_server_vector_many(jobs, (size_t)m);
	m = 0;
	for (int k = 0; k < n; k++) {
		struct tw_srv_park *pk = &w->park[k];
		size_t len, out_len = 0;
		int act;

		if (q[k].rc == TW_OK) {
			if (jobs[m].batched)
				tw_srv_count(&w->ctr, TW_C_AKA_BATCHED, 1);
			act = jobs[m].rc;
			out_len = jobs[m].out_len;
			m++;
		} else {
			/* no durable SQN, no vector: EAP-Failure (RFC 4187 §6.3.2) */
			store_failed(&pk->r, pk->s, "aka-vector", q[k].rc);
			act = tw_aka_server_vector(&pk->s->eng.aka, NULL, pk->out, TW_SRV_EAP_OUT,
						   &out_len);
		}
		tw_wipe(&pk->v, sizeof(pk->v));
		w->cur_pend = -1;
		len = converse_end(&pk->r, pk->s, pk->first, act, pk->out, out_len);
		if (pk->tx >= 0)
			w->tx_iov[pk->tx].iov_len = len;
		if (len > 0 && w->cur_pend >= 0) {
			w->pend[w->cur_pend].tx = pk->tx;
			w->pend[w->cur_pend].e = pk->e;
		} else if (len > 0) {
			tw_srv_dup_done(&w->dup, pk->e, pk->r.reply, len, now_ms);
		} else {
			tw_srv_dup_forget(&w->dup, pk->e);
		}
	}
	w->n_park = 0;
}

/* ---- the worker thread ------------------------------------------------------ */

int tw_srv_worker_init(struct tw_srv_worker *w, struct tw_srv *srv, unsigned idx, int fd)
{
	uint8_t seed[16];
	int rc;

	memset(w, 0, sizeof(*w));
	w->cur_pend = -1;
	w->srv = srv;
	w->idx = idx;
	w->fd = fd;
	tw_udp_gso_init(&w->txg, fd, srv->cfg.udp_gso);
	/* UDP GRO (Linux 5.0): datagrams of one flow that arrive together
	 * may come coalesced, one receive slot for several (next_datagrams
	 * cuts them apart again). Not with --spread-by-identifier: the
	 * group's program picks one socket for a coalesced packet by its
	 * first request's Identifier, so its other requests (and later their
	 * lone retransmissions) would reach different workers, each with its
	 * own duplicate cache; with GRO off on every socket, the kernel does
	 * not coalesce for them and each datagram is steered on its own. */
	if (srv->cfg.udp_gro && !srv->cfg.spread_by_id) {
		int one = 1;

		w->gro = setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	}
	w->rx_slot = w->gro ? TW_SRV_RX_LEN : TW_RADIUS_MAX_LEN + 1;
	w->rx_mem = tw_table_alloc(TW_SRV_BATCH, w->rx_slot);
	if (w->rx_mem == NULL)
		return TW_ERR_NOMEM;
	atomic_store(&w->ctr.v[TW_C_UDP_GSO_ON], w->txg.on ? 1 : 0);
	w->rnd_pos = sizeof(w->rnd); /* filled on first use */
	rc = rnd(w, seed, sizeof(seed));
	if (rc == TW_OK)
		rc = tw_srv_dup_init(&w->dup, srv->cfg.dup_entries, srv->cfg.dup_expiry, seed);
	tw_wipe(seed, sizeof(seed));
	return rc;
}

void tw_srv_worker_free(struct tw_srv_worker *w)
{
	tw_table_free(w->rx_mem, TW_SRV_BATCH, w->rx_slot);
	w->rx_mem = NULL;
	tw_srv_dup_free(&w->dup);
	/* Everything a request left behind: random octets not yet used,
	 * replies (MPPE keys) and their builders, parked steps (vectors: CK,
	 * IK, XRES), the EAP packets in and out. */
	tw_wipe(w->rnd, sizeof(w->rnd));
	tw_wipe(w->tx_buf, sizeof(w->tx_buf));
	tw_wipe(w->pend, sizeof(w->pend));
	tw_wipe(w->park, sizeof(w->park));
	tw_wipe(w->eap_in, sizeof(w->eap_in));
	tw_wipe(w->eap_out, sizeof(w->eap_out));
}

/* With a wildcard listen address the reply must leave from the address
 * the request was sent to: echo IP_PKTINFO / IPV6_PKTINFO. */
size_t tw_srv_reply_cmsg(const struct msghdr *in, uint8_t *out, size_t max)
{
	struct msghdr m;
	struct cmsghdr *c, *o;

	/* zeroed, padding included: replies to one path then have equal
	 * control octets, which send.c compares to group them */
	memset(out, 0, max);
	memset(&m, 0, sizeof(m));
	m.msg_control = out;
	m.msg_controllen = max;
	o = CMSG_FIRSTHDR(&m);
	for (c = CMSG_FIRSTHDR((struct msghdr *)in); c != NULL && o != NULL;
	     c = CMSG_NXTHDR((struct msghdr *)in, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo)) &&
		    CMSG_SPACE(sizeof(struct in_pktinfo)) <= max) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			pi.ipi_spec_dst = pi.ipi_addr;
			pi.ipi_ifindex = 0;
			o->cmsg_level = IPPROTO_IP;
			o->cmsg_type = IP_PKTINFO;
			o->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(o), &pi, sizeof(pi));
			return CMSG_SPACE(sizeof(pi));
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo)) &&
		    CMSG_SPACE(sizeof(struct in6_pktinfo)) <= max) {
			o->cmsg_level = IPPROTO_IPV6;
			o->cmsg_type = IPV6_PKTINFO;
			o->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
			memcpy(CMSG_DATA(o), CMSG_DATA(c), sizeof(struct in6_pktinfo));
			return CMSG_SPACE(sizeof(struct in6_pktinfo));
		}
	}
	return 0;
}

/* The segment size of a receive slot: its UDP_GRO control message (the
 * datagrams coalesced in it have this length, the last one may be
 * shorter), else the whole slot is one datagram (0). */
static uint32_t gro_size(const struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)h); c != NULL;
	     c = CMSG_NXTHDR((struct msghdr *)h, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v > 0 ? (uint32_t)v : 0;
		}
	return 0;
}

/* The length of the datagrams in receive slot i (the last may be
 * shorter): its GRO segment size, else the whole slot. */
static uint32_t slot_seg(const struct tw_srv_worker *w, int i)
{
	uint32_t total = w->rx[i].msg_len, seg = w->gro ? gro_size(&w->rx[i].msg_hdr) : 0;

	return seg == 0 || seg > total ? total : seg;
}

int tw_srv_next_datagrams(struct tw_srv_worker *w, int n, struct tw_srv_rx_cursor *cur)
{
	w->ndg = 0;
	while (cur->slot < n && w->ndg < TW_SRV_BATCH) {
		const struct msghdr *h = &w->rx[cur->slot].msg_hdr;
		uint32_t total = w->rx[cur->slot].msg_len, seg;
		struct tw_srv_dgram *d = &w->dg[w->ndg++];
		bool trunc = (h->msg_flags & MSG_TRUNC) != 0;

		/* a slot's control messages read once, as it is begun */
		if (cur->off == 0) {
			cur->seg = slot_seg(w, cur->slot);
			if (cur->seg < total)
				tw_srv_count(&w->ctr, TW_C_RX_GRO_DGRAMS,
					     (total + cur->seg - 1) / cur->seg);
		}
		seg = cur->seg;
		d->p = w->rx_mem + (size_t)cur->slot * w->rx_slot + cur->off;
		d->len = total - cur->off < seg ? total - cur->off : seg;
		d->slot = (uint16_t)cur->slot;
		/* longer than RFC 2865 allows; the part the kernel cut (the
		 * slot's last datagram); or any, when (with GRO) the control
		 * messages were cut: where the datagrams end is then unknown */
		d->bad = d->len > TW_RADIUS_MAX_LEN || (trunc && cur->off + d->len >= total) ||
			 (w->gro && (h->msg_flags & MSG_CTRUNC) != 0);
		cur->off += d->len;
		if (cur->off >= total || d->len == 0) {
			cur->slot++;
			cur->off = 0;
		}
	}
	return w->ndg;
}

int tw_srv_count_datagrams(const struct tw_srv_worker *w, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		uint32_t seg = slot_seg(w, i), total = w->rx[i].msg_len;

		k += seg >= total ? 1 : (int)((total + seg - 1) / seg);
	}
	return k;
}

/*
 * Handles w->dg[0..ndg): their Message-Authenticators checked at once,
 * each request, the parked EAP-AKA' steps, the replies signed at once and
 * sent.
 */
static void handle_datagrams(struct tw_srv_worker *w, uint64_t now)
{
	int m = 0;

	if (w->defer_sign)
		verify_batch(w);
	for (int i = 0; i < w->ndg; i++) {
		const struct tw_srv_dgram *d = &w->dg[i];
		struct msghdr *h = &w->rx[d->slot].msg_hdr;
		size_t len;

		w->pre_set = w->defer_sign && w->vidx[i] >= 0;
		if (w->pre_set) {
			w->pre_rc = w->vjob[w->vidx[i]].rc;
			w->pre_client = w->vclient[w->vidx[i]];
			w->pre_pkt = &w->vpkt[w->vidx[i]];
			w->pre_hash = w->vhash[w->vidx[i]];
		}
		if (d->bad) {
			w->pre_set = false;
			/* longer than RFC 2865's 4096 octets, or cut by the
			 * kernel (tw_srv_next_datagrams) */
			tw_srv_count(&w->ctr, TW_C_MALFORMED, 1);
			continue;
		}
		w->cur_pend = -1;
		w->parked_now = false;
		len = tw_srv_handle(w, d->p, d->len,
				    (const struct sockaddr *)&w->rx_addr[d->slot], w->tx_buf[m],
				    now);
		if (w->parked_now)
			w->park[w->n_park - 1].tx = m; /* its reply: this slot, later */
		else if (len == 0)
			continue;
		if (w->cur_pend >= 0)
			w->pend[w->cur_pend].tx = m;
		memset(&w->tx[m].msg_hdr, 0, sizeof(w->tx[m].msg_hdr));
		w->tx_iov[m].iov_base = w->tx_buf[m];
		w->tx_iov[m].iov_len = len;
		w->tx[m].msg_hdr.msg_iov = &w->tx_iov[m];
		w->tx[m].msg_hdr.msg_iovlen = 1;
		w->tx[m].msg_hdr.msg_name = &w->rx_addr[d->slot];
		w->tx[m].msg_hdr.msg_namelen = h->msg_namelen;
		if (w->srv->pktinfo) {
			size_t cl = tw_srv_reply_cmsg(h, w->tx_cmsg[m], sizeof(w->tx_cmsg[m]));

			if (cl > 0) {
				w->tx[m].msg_hdr.msg_control = w->tx_cmsg[m];
				w->tx[m].msg_hdr.msg_controllen = cl;
			}
		}
		m++;
	}
	if (w->n_park > 0)
		finish_parked(w, now);
	if (w->n_pend > 0 || m > 0) {
		int k = 0;

		if (w->n_pend > 0)
			sign_batch(w, now);
		for (int j = 0; j < m; j++) /* leave out what could not be signed or built */
			if (w->tx_iov[j].iov_len > 0) {
				if (k != j) {
					w->tx[k] = w->tx[j];
					w->tx_iov[k] = w->tx_iov[j];
					w->tx[k].msg_hdr.msg_iov = &w->tx_iov[k];
				}
				k++;
			}
		m = k;
	}
	if (m > 0)
		tw_srv_send_replies(w, w->tx, m);
	/* the batch's accepts into the authorized-session table, once
	 * their replies have left */
	tw_srv_dynauth_flush(w->srv);
}

void tw_srv_worker_begin(struct tw_srv_worker *w, struct tw_srv_loop *l)
{
	struct tw_srv *srv = w->srv;
	const char *nb = getenv("TWAG_NO_SIGN_BATCH"); /* diagnostics: sign one by one */

	w->defer_sign = nb == NULL || nb[0] == '\0' || nb[0] == '0';
	/* the challenges of a batch built together: with the batch signing
	 * (TWAG_NO_AKA_LANES=1 builds each on its own, for comparison) */
	const char *nl = getenv("TWAG_NO_AKA_LANES");

	w->park_ok = w->defer_sign && (nl == NULL || nl[0] == '\0' || nl[0] == '0');
	w->n_park = 0;
	/* OpenSSL makes this thread's DRBG on its first use: here, not on
	 * the first refill of the random pool amid traffic */
	{
		uint8_t b[16];

		(void)RAND_priv_bytes(b, sizeof(b));
		tw_wipe(b, sizeof(b));
	}
	l->used = TW_SRV_BATCH; /* receive slots the last batch filled */

	w->n_pend = 0;
	w->pre_set = false;
	/*
	 * Receive coalescing (--rx-coalesce-us, C): traffic is dense when the
	 * last receive brought at least two datagrams per C since the one
	 * before it returned (so about two or more arrive in any span of C).
	 * Then the next receive is not made before C after the last one
	 * returned (no wait at all if handling the batch took that long):
	 * what arrives meanwhile is taken, handled and answered as one batch
	 * (one wake-up and two system calls for all of it, the RADIUS MD5s in
	 * the multi-buffer kernel). Sparser traffic never waits; a full batch
	 * means more is queued, no wait either. Three waits in a row that
	 * each brought fewer than two datagrams did not pay (a client with
	 * one request in flight at a time looks dense by its timing alone):
	 * no wait for the next 20 C, so such a client is held up at most three
	 * times per 20 C. (One such wait alone says little: a closed-loop
	 * client with many requests in flight answers a batch in a burst.)
	 */
	l->co_ns = (uint64_t)(srv->cfg.rx_coalesce_us < TW_SRV_MAX_RX_COALESCE_US
				      ? srv->cfg.rx_coalesce_us
				      : TW_SRV_MAX_RX_COALESCE_US) * 1000;
	l->last_rx = now_ns();
	l->calm_until = 0;
	l->unpaid = 0;
	l->dense = false;
	l->rx_flags = MSG_WAITFORONE;
	l->clock_ms = tw_srv_now_ms;
}

int tw_srv_worker_turn(struct tw_srv_worker *w, struct tw_srv_loop *l)
{
	struct tw_srv *srv = w->srv;
	uint64_t epoch = atomic_load(&srv->epoch), now, t1;
	const uint64_t co_ns = l->co_ns;
	bool waited;
	int n;

	/* the client table of this batch; publishing the epoch tells a
	 * SIGHUP reload that the previous table is no longer used */
	w->clients = atomic_load(&srv->clients);
	atomic_store(&w->epoch_seen, epoch);

	/* the receive slots recvmmsg wrote to (lengths, flags) made
	 * whole again; the others are as set */
	for (int i = 0; i < l->used; i++) {
		w->rx_iov[i].iov_base = w->rx_mem + (size_t)i * w->rx_slot;
		w->rx_iov[i].iov_len = w->rx_slot;
		memset(&w->rx[i].msg_hdr, 0, sizeof(w->rx[i].msg_hdr));
		w->rx[i].msg_hdr.msg_iov = &w->rx_iov[i];
		w->rx[i].msg_hdr.msg_iovlen = 1;
		w->rx[i].msg_hdr.msg_name = &w->rx_addr[i];
		w->rx[i].msg_hdr.msg_namelen = sizeof(w->rx_addr[i]);
		if (srv->pktinfo || w->gro) {
			w->rx[i].msg_hdr.msg_control = w->rx_cmsg[i];
			w->rx[i].msg_hdr.msg_controllen = sizeof(w->rx_cmsg[i]);
		}
	}
	waited = false;
	if (l->dense) {
		uint64_t t = now_ns();

		if (t < l->last_rx + co_ns) {
			struct timespec d = { 0, (long)(l->last_rx + co_ns - t) }; /* < 10 ms */

			(void)nanosleep(&d, NULL);
			tw_srv_count(&w->ctr, TW_C_RX_WAITS, 1);
			waited = true;
		}
	}
	/* blocks for the first datagram (SO_RCVTIMEO 200 ms, so the
	 * stop flag is seen), then takes what is queued */
	n = recvmmsg(w->fd, w->rx, TW_SRV_BATCH, l->rx_flags, NULL);
	if (co_ns > 0) {
		int nd = n > 0 ? tw_srv_count_datagrams(w, n) : 0;

		t1 = now_ns();
		if (waited)
			l->unpaid = nd < 2 ? l->unpaid + 1 : 0;
		if (l->unpaid >= 3) {
			l->calm_until = t1 + 20 * co_ns;
			l->unpaid = 0;
		}
		l->dense = nd > 0 && n < TW_SRV_BATCH && t1 >= l->calm_until &&
			   (uint64_t)nd * co_ns >= 2 * (t1 - l->last_rx);
		if (n > 0)
			l->last_rx = t1;
	}
	l->used = n > 0 ? n : 0;
	if (n > 0)
		tw_srv_count(&w->ctr, TW_C_RX_BATCHES, 1);
	now = l->clock_ms();
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		tw_logf(&w->log, TW_LOG_ERROR, "socket-error", "op=recvmmsg errno=%d", errno);
	/* the datagrams in batches of at most TW_SRV_BATCH (with
	 * UDP GRO a receive can bring more) */
	for (struct tw_srv_rx_cursor cur = { 0, 0, 0 }; tw_srv_next_datagrams(w, n, &cur) > 0;)
		handle_datagrams(w, now);
	if (w->idx == 0 && now - w->last_sweep_ms >= 1000) {
		w->last_sweep_ms = now;
		/* in bounded steps: the lock is released between
		 * them, so other workers are never held up long */
		while (tw_srv_sessions_expire(&srv->sessions, now, SWEEP_STEP) == SWEEP_STEP)
			;
	}
	tw_log_flush(&w->log);
	return n;
}

void *tw_srv_worker_run(void *arg)
{
	struct tw_srv_worker *w = arg;
	struct tw_srv_loop l;

	tw_srv_worker_begin(w, &l);
	while (!atomic_load_explicit(&w->srv->stop, memory_order_relaxed)) {
		(void)tw_srv_worker_turn(w, &l);
		/* alive, for the watchdog (notify.c) */
		atomic_fetch_add_explicit(&w->beats, 1, memory_order_relaxed);
	}
	tw_log_flush(&w->log);
	return NULL;
}
