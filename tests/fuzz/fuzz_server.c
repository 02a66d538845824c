/*
 * Fuzz target: twagd's packet path (tw_srv_handle) with the state it
 * keeps between datagrams: the EAP session table, the duplicate cache and
 * a real SQLite store (in a temporary directory, with three subscribers:
 * EAP-SIM COMP128-1, EAP-AKA and EAP-AKA' Milenage), set up as in
 * tests/unit/test_server_flow.c. The method engines and the RADIUS codec
 * have targets of their own; this one reaches what joins them.
 *
 * An input is a script of requests, each [op][len high][len low][octets]:
 *   op % 4 == 0  the octets as a datagram, as they are;
 *   op % 4 == 1  the octets as the attributes of an Access-Request (or,
 *                with op & 32, a Status-Server) whose Message-Authenticator
 *                is valid and first, so what lies behind it is reached;
 *   op % 4 == 2  the octets as an EAP packet in EAP-Message attributes of
 *                an Access-Request with the State of the last reply and a
 *                Calling-Station-Id, Message-Authenticator valid; the EAP
 *                Identifier is set to the last EAP request's (with op & 32:
 *                no State): a conversation continued;
 *   op % 4 == 3  the previous request again (a retransmission);
 *   op & 64      the phone instead: twag's own EAP peer for one of the
 *                three subscribers answers the last EAP packet a reply
 *                carried (with op & 128: a new conversation, answering
 *                EAP-Request/Identity; op % 4 = 1, 2, 3 a new phone of
 *                the EAP-SIM, EAP-AKA or EAP-AKA' subscriber), its answer
 *                sent as an EAP Access-Request, so conversations reach
 *                Access-Accept, fast re-authentication and the identity
 *                commits that forged packets cannot.
 * (op / 4) % 8 picks the NAS's source port.
 *
 * Invariants: no crash or overread; every reply decodes, carries the
 * request's Identifier, a valid Response Authenticator and a valid
 * Message-Authenticator as its first attribute; a retransmitted EAP
 * Access-Request that was answered is answered with the same octets
 * (RFC 5080 §2.2.2); when the phone accepts EAP-Success, the
 * Access-Accept before it carried the phone's MSK as MS-MPPE keys (RFC
 * 2548, RFC 5247: Recv-Key, Send-Key). After each input the clock passes the session
 * timeout and the sessions are expired: none may be left (a slot kept
 * busy by an error path would never come back).
 *
 * State carries over from one input to the next (the store's SQN and
 * resynchronisation counters, identity rows; nonces and pseudonyms come
 * from the DRBG), so an input that fails may need the ones run before it
 * to fail again; the clock moves 62 s per input, past the duplicate
 * cache's expiry, so the same Request Authenticators in the next input
 * are new requests.
 *
 * Seeds (tests/fuzz/corpus/server/) were written by hand in this format:
 * identity responses of the three subscribers then a continued
 * conversation (EAP-SIM Start answered with AT_NONCE_MT and
 * AT_SELECTED_VERSION, EAP-AKA' with a synchronisation failure), Status-
 * Server, an EAP-Start, a retransmission and a malformed datagram.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/eap_sim.h"
#include "twag/radius.h"
#include "twag/store.h"
#include "twag/usim.h"

#include "../../src/server/srv.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char secret[] = "fuzzsecret";
static const char realm[] = "wlan.mnc001.mcc001.3gppnetwork.org";
static char dir[] = "/tmp/twag-fuzz-server-XXXXXX";
static struct tw_srv srv;
static struct tw_srv_worker *w;
static struct tw_srv_clients clients;
static uint64_t now = 1000000;
static int ready; /* 0: not yet, 1: set up, -1: failed */
static bool trace; /* TWAG_FUZZ_TRACE set: each request's answer on stderr */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static void cleanup(void)
{
	tw_store_close(srv.store); /* its write-behind thread stopped first */
	srv.store = NULL;
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int provision(const char *imsi, int comp128)
{
	static const uint8_t k[16] = { 0x46, 0x5b, 0x5c, 0xe8, 0xb1, 0x99, 0xb4, 0x9f,
				       0xaa, 0x5f, 0x0a, 0x2e, 0xe2, 0x38, 0xa6, 0xbc };
	static const uint8_t opc[16] = { 0xcd, 0x63, 0xcb, 0x71, 0x95, 0x4a, 0x9f, 0x4e,
					 0x48, 0xa5, 0x99, 0x4e, 0x37, 0xa0, 0x2b, 0xaf };
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_sub_keys keys;
	struct tw_subscriber s;
	int rc;

	rc = comp128 ? tw_sub_keys_comp128(&keys, 1, k) : tw_sub_keys_milenage(&keys, k, opc, NULL);
	if (rc == TW_OK)
		rc = tw_subscriber_init(&s, imsi, &keys, amf);
	if (rc == TW_OK)
		rc = tw_store_sub_put(srv.store, &s, false);
	return rc;
}

static int setup(void)
{
	static const uint8_t seed[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct tw_store_opts so;
	uint8_t kek[32];
	char db[128], err[256];

	if (mkdtemp(dir) == NULL)
		return -1;
	atexit(cleanup);
	snprintf(db, sizeof(db), "%s/twag.db", dir);
	memset(kek, 0x4b, sizeof(kek));
	memset(&so, 0, sizeof(so));
	so.path = db;
	so.kek = kek;
	if (tw_store_open(&srv.store, &so, err, sizeof(err)) != TW_OK)
		return -1;
	if (provision("001010000000001", 1) != TW_OK || provision("001010000000002", 0) != TW_OK ||
	    provision("001010000000003", 0) != TW_OK)
		return -1;
	tw_srv_config_defaults(&srv.cfg);
	srv.cfg.dup_entries = 64;
	snprintf(srv.cfg.realm, sizeof(srv.cfg.realm), "%s", realm);
	tw_srv_eap_setup(&srv);
	if (tw_srv_sessions_init(&srv.sessions, 64, 60, seed) != TW_OK ||
	    tw_srv_clients_add(&clients, "127.0.0.0/8", (const uint8_t *)secret,
			       strlen(secret), true, err, sizeof(err)) != TW_OK)
		return -1;
	atomic_store(&srv.clients, &clients);
	if (posix_memalign((void **)&w, 64, sizeof(*w)) != 0 ||
	    tw_srv_worker_init(w, &srv, 0, -1) != TW_OK)
		return -1;
	w->clients = &clients;
	srv.workers = &w;
	srv.n_workers = 1;
	tw_log_set_level(TW_LOG_ERROR);
	trace = getenv("TWAG_FUZZ_TRACE") != NULL;
	return 1;
}

/* What the script remembers between its requests. */
struct script {
	uint8_t req[TW_RADIUS_MAX_LEN], reply[TW_RADIUS_MAX_LEN];
	size_t req_len, reply_len;
	struct sockaddr_in from;
	bool answered_eap;     /* the last request: an EAP Access-Request, answered */
	uint8_t state[253];
	size_t state_len;
	uint8_t eap_id;        /* of the last EAP request received */
	uint8_t id;            /* RADIUS Identifier */
	uint32_t ctr;          /* makes Request Authenticators */
	/* the last EAP packet a reply carried, and an Access-Accept's keys */
	uint8_t last_eap[TW_RADIUS_EAP_MAX];
	size_t last_eap_len;
	bool accepted;
	uint8_t accept_msk[64];
	/* a phone: twag's own peer for one of the three subscribers */
	unsigned kind;         /* 0 none, 1 EAP-SIM, 2 EAP-AKA, 3 EAP-AKA' */
	struct tw_eap_sim_peer sim;
	struct tw_aka_peer_ctx aka;
	struct tw_usim usim;
	struct tw_eap_peer_ids mem;
	struct tw_eap_peer_cfg pc;
	unsigned rnd;
};

/* No previous request (a build that failed left s->req half written). */
static void forget(struct script *s)
{
	s->req_len = 0;
	s->reply_len = 0;
	s->answered_eap = false;
}

static void next_auth(struct script *s, uint8_t auth[16])
{
	for (int i = 0; i < 16; i += 4)
		tw_store_be32(auth + i, ++s->ctr * 0x9e3779b9u + (uint32_t)i);
}

/* A new request of code in s->req, Message-Authenticator first. */
static void begin(struct script *s, struct tw_radius_builder *b, uint8_t code)
{
	uint8_t auth[16];

	next_auth(s, auth);
	tw_radius_build_init(b, s->req, sizeof(s->req), code, ++s->id, auth, true);
}

/* The request finished (Length, Message-Authenticator); false when the
 * build failed, s->req then half overwritten: nothing to resend. */
static bool end(struct script *s, struct tw_radius_builder *b)
{
	if (tw_radius_finish_request(b, (const uint8_t *)secret, strlen(secret), &s->req_len) ==
	    TW_OK)
		return true;
	forget(s);
	return false;
}

/* The request in s->req handed over; the reply checked; what it says kept. */
static void xmit(struct script *s)
{
	struct tw_radius_pkt rq, rp;
	const struct tw_radius_attr *st;
	uint8_t eap[TW_RADIUS_EAP_MAX];
	size_t eap_len = 0;
	bool eap_req;

	eap_req = tw_radius_decode(&rq, s->req, s->req_len) == TW_OK &&
		  rq.code == TW_RADIUS_ACCESS_REQUEST && rq.n_eap > 0;
	s->reply_len = tw_srv_handle(w, s->req, s->req_len, (const struct sockaddr *)&s->from,
				     s->reply, now);
	tw_log_flush(&w->log);
	s->answered_eap = eap_req && s->reply_len > 0;
	if (trace)
		fprintf(stderr, "request %zu octets: reply %zu octets, code %u\n", s->req_len,
			s->reply_len, s->reply_len > 0 ? s->reply[0] : 0);
	if (s->reply_len == 0)
		return;
	if (s->reply_len > TW_RADIUS_MAX_LEN || tw_radius_decode(&rp, s->reply, s->reply_len) != TW_OK ||
	    rp.id != s->req[1] || rp.n_attrs == 0 ||
	    rp.attrs[0].type != TW_RADIUS_MESSAGE_AUTHENTICATOR ||
	    tw_radius_verify_response(&rp, s->req + 4, (const uint8_t *)secret, strlen(secret),
				      true) != TW_OK)
		abort();
	st = tw_radius_find(&rp, TW_RADIUS_STATE);
	if (st != NULL) {
		memcpy(s->state, tw_radius_value(&rp, st), st->len);
		s->state_len = st->len;
	}
	/* RFC 2548 §2.4.2: the keys under the request's authenticator */
	if (rp.code == TW_RADIUS_ACCESS_ACCEPT)
		s->accepted = tw_radius_get_mppe_keys(&rp, (const uint8_t *)secret, strlen(secret),
						      s->req + 4, s->accept_msk) == TW_OK;
	s->last_eap_len = 0;
	if (rp.n_eap > 0 && tw_radius_eap_join(&rp, eap, sizeof(eap), &eap_len) == TW_OK &&
	    eap_len >= 2) {
		memcpy(s->last_eap, eap, eap_len);
		s->last_eap_len = eap_len;
		s->eap_id = eap[1];
		if (trace && eap_len >= 6)
			fprintf(stderr, "  EAP code %u type %u subtype %u\n", eap[0], eap[4], eap[5]);
	}
}

static int phone_random(void *arg, uint8_t *out, size_t len)
{
	struct script *s = arg;

	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(s->rnd * 97 + i * 13 + 5);
	s->rnd++;
	return TW_OK;
}

/* A new phone of kind (1 SIM, 2 AKA, 3 AKA') for the subscriber of that
 * number, with an empty identity memory. */
static void phone_new(struct script *s, unsigned kind)
{
	static const uint8_t k[16] = { 0x46, 0x5b, 0x5c, 0xe8, 0xb1, 0x99, 0xb4, 0x9f,
				       0xaa, 0x5f, 0x0a, 0x2e, 0xe2, 0x38, 0xa6, 0xbc };
	static const uint8_t opc[16] = { 0xcd, 0x63, 0xcb, 0x71, 0x95, 0x4a, 0x9f, 0x4e,
					 0x48, 0xa5, 0x99, 0x4e, 0x37, 0xa0, 0x2b, 0xaf };
	static char imsi[16];
	struct tw_sub_keys keys;

	snprintf(imsi, sizeof(imsi), "00101000000000%u", kind);
	if ((kind == 1 ? tw_sub_keys_comp128(&keys, 1, k) : tw_sub_keys_milenage(&keys, k, opc, NULL)) !=
		    TW_OK ||
	    tw_usim_init(&s->usim, imsi, &keys) != TW_OK)
		abort();
	memset(&s->mem, 0, sizeof(s->mem));
	memset(&s->pc, 0, sizeof(s->pc));
	s->pc.imsi = imsi;
	s->pc.imsi_len = 15;
	s->pc.realm = realm;
	s->pc.realm_len = strlen(realm);
	s->pc.support_aka_prime = kind == 3;
	s->pc.use_pseudonym = s->pc.use_reauth = true;
	s->pc.random = phone_random;
	s->pc.random_arg = s;
	s->kind = kind;
}

/* A conversation of the phone starts: its engine fresh (the identity
 * memory kept). */
static void phone_begin(struct script *s)
{
	tw_eap_sim_peer_wipe(&s->sim);
	tw_aka_peer_wipe(&s->aka);
	if (s->kind == 1 ? tw_eap_sim_peer_init(&s->sim, &s->pc, &s->mem, &s->usim, phone_random,
						 s) != TW_OK
			 : tw_aka_peer_init(&s->aka, &s->pc, &s->usim, &s->mem) != TW_OK)
		abort();
}

/* The phone answers eap; its answer goes out as an EAP Access-Request
 * (with the State, unless a new conversation). Returns the engine's
 * action. When the phone accepts EAP-Success, the Access-Accept before it
 * must have carried the phone's MSK as MS-MPPE keys. */
static int phone_step(struct script *s, const uint8_t *eap, size_t eap_len, bool fresh)
{
	static uint8_t out[TW_RADIUS_EAP_MAX];
	struct tw_radius_builder b;
	struct tw_eap_keys k;
	size_t out_len = 0;
	int act;

	act = s->kind == 1 ? tw_eap_sim_peer_input(&s->sim, eap, eap_len, out, sizeof(out), &out_len)
			   : tw_aka_peer_input(&s->aka, eap, eap_len, out, sizeof(out), &out_len);
	if (act == TW_EAP_ACCEPT) {
		const struct tw_eap_keys *sk = s->kind == 1 ? tw_eap_sim_peer_keys(&s->sim) : NULL;

		if (s->kind != 1) {
			if (tw_aka_peer_keys(&s->aka, &k) != TW_OK)
				abort();
			sk = &k;
		}
		if (sk == NULL || !s->accepted || memcmp(sk->msk, s->accept_msk, 64) != 0)
			abort();
		return act;
	}
	if (act != TW_EAP_SEND || out_len == 0)
		return act;
	begin(s, &b, TW_RADIUS_ACCESS_REQUEST);
	if (out_len > 5 && out[4] == TW_EAP_TYPE_IDENTITY)
		tw_radius_add(&b, TW_RADIUS_USER_NAME, out + 5, out_len - 5);
	tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, "02-00-00-00-00-02", 17);
	if (!fresh && s->state_len > 0)
		tw_radius_add(&b, TW_RADIUS_STATE, s->state, s->state_len);
	tw_radius_add_eap(&b, out, out_len);
	if (end(s, &b)) {
		s->accepted = false;
		xmit(s);
	}
	return act;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct script s;
	struct tw_srv_sessions_stats stats;
	size_t off = 0;

	if (ready == 0)
		ready = setup();
	if (ready < 0)
		abort(); /* the fixture itself: nothing would be tested */
	tw_eap_sim_peer_wipe(&s.sim);
	tw_aka_peer_wipe(&s.aka);
	memset(&s, 0, sizeof(s));
	s.from.sin_family = AF_INET;
	s.from.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while (size - off >= 3) {
		uint8_t op = data[off];
		size_t n = (size_t)data[off + 1] << 8 | data[off + 2];
		const uint8_t *p = data + off + 3;
		struct tw_radius_builder b;
		uint8_t eap[TW_RADIUS_EAP_MAX];

		off += 3;
		if (n > size - off)
			n = size - off;
		off += n;
		if (op & 64) {
			/* the phone: with op & 128 a new one (kind op % 4, 0
			 * keeps the last) answering EAP-Request/Identity; else
			 * it answers the last EAP packet a reply carried */
			if (op & 128) {
				static const uint8_t id_req[5] = { TW_EAP_REQUEST, 1, 0, 5,
								   TW_EAP_TYPE_IDENTITY };

				if (op % 4 != 0)
					phone_new(&s, op % 4);
				if (s.kind == 0)
					continue;
				phone_begin(&s);
				(void)phone_step(&s, id_req, sizeof(id_req), true);
			} else if (s.kind != 0 && s.last_eap_len > 0) {
				(void)phone_step(&s, s.last_eap, s.last_eap_len, false);
			}
			continue;
		}
		/* a retransmission comes from where its original did (the
		 * phone sends from where the last request came) */
		if (op % 4 != 3)
			s.from.sin_port = htons((uint16_t)(40000 + (op / 4) % 8));
		switch (op % 4) {
		case 0:
			if (n > sizeof(s.req))
				n = sizeof(s.req);
			memcpy(s.req, p, n);
			s.req_len = n;
			break;
		case 1:
			begin(&s, &b, op & 32 ? TW_RADIUS_STATUS_SERVER : TW_RADIUS_ACCESS_REQUEST);
			if (n > b.max - b.len)
				n = b.max - b.len;
			memcpy(b.buf + b.len, p, n); /* attributes as they come */
			b.len += n;
			if (!end(&s, &b))
				continue;
			break;
		case 2:
			if (n > sizeof(eap))
				n = sizeof(eap);
			memcpy(eap, p, n);
			if (n >= 2)
				eap[1] = s.eap_id;
			begin(&s, &b, TW_RADIUS_ACCESS_REQUEST);
			tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, "02-00-00-00-00-01", 17);
			if (!(op & 32) && s.state_len > 0)
				tw_radius_add(&b, TW_RADIUS_STATE, s.state, s.state_len);
			tw_radius_add_eap(&b, eap, n);
			if (!end(&s, &b))
				continue;
			break;
		default: {
			/* the previous request again */
			uint8_t prev[TW_RADIUS_MAX_LEN];
			size_t prev_len = s.reply_len;
			bool was = s.answered_eap;

			if (s.req_len == 0)
				continue;
			memcpy(prev, s.reply, prev_len);
			xmit(&s);
			if (was && (s.reply_len != prev_len || memcmp(prev, s.reply, prev_len) != 0))
				abort();
			continue;
		}
		}
		xmit(&s);
	}
	/* past the session timeout: every session expires */
	now += 61000;
	while (tw_srv_sessions_expire(&srv.sessions, now, 1000) > 0)
		;
	tw_srv_sessions_stats(&srv.sessions, &stats);
	if (stats.active != 0)
		abort();
	now += 1000;
	return 0;
}
