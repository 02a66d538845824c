/*
 * Fuzz target: twagd's packet path (tw_srv_handle, and in groups the
 * worker loop's batched receive path) with the state it keeps between
 * datagrams: the EAP session table, the duplicate cache and
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
 * Groups reach twagd's batched receive path (tw_srv_worker_turn: recvmmsg,
 * the Message-Authenticators checked together, EAP-AKA and EAP-AKA' steps
 * parked and their challenges built together, the replies signed together
 * and sent with sendmmsg/UDP GSO) over real loopback UDP sockets:
 *   op % 4 == 3 with op & 128 (not op & 64)  the open group is sent; with
 *                octets [flags][env] a new one opens: the requests the
 *                ops after it make (not the phone's engine: it answers the
 *                last reply before the group) are held and sent at once,
 *                at the next such op, at 64 datagrams or at the input's end;
 *   in a group, op % 4 == 0 with op & 32: a datagram of 4096 + n octets.
 * A group's NAS sockets by (op / 4) % 8: over IPv4 0-5 are 127.0.0.1 (a
 * host entry), 6 127.0.0.2 (a /24 entry), 7 127.0.1.1 (not a client);
 * over IPv6 all ::1. Flags: 1 TWAG_NO_SIGN_BATCH=1, 2 TWAG_NO_AKA_LANES=1
 * (else off, by env % 3 and env / 3 % 3: unset, empty or "0"), 4 replies
 * from IP(V6)_PKTINFO (srv->pktinfo, a wildcard listen's), ((flags >> 3)
 * & 3) % 3 the worker (127.0.0.1; 127.0.0.1 with UDP GRO and no
 * coalescing waits; ::1 with UDP GRO), 32 a socket's runs of one length
 * as one UDP_SEGMENT send (to a UDP GRO socket they arrive coalesced, as
 * from a NIC with GRO), 64 the log at debug level (to /dev/null), 128 an
 * empty receive after. Turns run until the worker has taken every
 * datagram sent; the replies are read up to a 0-octet datagram its
 * socket sends after them. Once, at start-up, tw_srv_worker_run itself
 * answers a Status-Server in a thread of its own and stops.
 *
 * Invariants: no crash or overread; every reply decodes, carries the
 * request's Identifier, a valid Response Authenticator and a valid
 * Message-Authenticator as its first attribute; a retransmitted EAP
 * Access-Request that was answered is answered with the same octets
 * (RFC 5080 §2.2.2); when the phone accepts EAP-Success, the
 * Access-Accept before it carried the phone's MSK as MS-MPPE keys (RFC
 * 2548, RFC 5247: Recv-Key, Send-Key). For a group: every reply comes
 * from the address and port its request went to, answers one request of
 * the group from that socket (no second reply to one datagram, none to a
 * source that is not a client) and passes the checks above; a
 * retransmission in the group is answered as its original was (or not
 * while that is in progress), and one of the request answered in the
 * group before, to the same worker from the same socket, with the same
 * octets. After each input the clock passes the session
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
 * Server, an EAP-Start, a retransmission and a malformed datagram; the
 * groups' seeds (batch_*) are written by tests/fuzz/gen_server_batch_corpus.py.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
static struct tw_srv_worker *w; /* tw_srv_handle's: wk[0].w */
static struct tw_srv_clients clients;

/*
 * The receive path's fixture: workers with real loopback sockets, set up
 * as twagd's (SO_RCVTIMEO, SO_RCVBUF, IP_PKTINFO and IPV6_RECVPKTINFO,
 * UDP_GRO when on), whose turns (tw_srv_worker_turn) a group drives; and
 * the NAS's sockets the group's requests leave from.
 */
enum {
	N_WK = 3,           /* 127.0.0.1; 127.0.0.1 with UDP GRO; ::1 with UDP GRO */
	N_SRC = 8,          /* NAS sockets per family */
	GROUP_MAX = 64,     /* datagrams in one group */
	DGRAM_MAX = 8192,   /* a group's datagram (longer than RFC 2865's 4096) */
};
struct wk {
	struct tw_srv_worker *w;
	struct tw_srv_loop loop;    /* kept from one group to the next */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int v6;
};
static struct wk wk[N_WK];
/* [0]: IPv4, sources 0-5 from 127.0.0.1 (a host entry), 6 from 127.0.0.2
 * (a /24 entry), 7 from 127.0.1.1 (no client); [1]: IPv6, all ::1 */
static int nas[2][N_SRC] = { { -1, -1, -1, -1, -1, -1, -1, -1 },
			     { -1, -1, -1, -1, -1, -1, -1, -1 } };
static struct sockaddr_storage nas_addr[2][N_SRC];
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
	for (int i = 0; i < N_WK; i++)
		if (wk[i].w != NULL) {
			if (wk[i].w->fd >= 0)
				close(wk[i].w->fd);
			tw_srv_worker_free(wk[i].w);
			free(wk[i].w);
			wk[i].w = NULL;
		}
	for (int f = 0; f < 2; f++)
		for (int i = 0; i < N_SRC; i++)
			if (nas[f][i] >= 0)
				close(nas[f][i]);
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

/* twagd's clients: a host entry (its name is the log's address), a
 * network, and ::1 */
static const char *const client_specs[] = { "127.0.0.1/32", "127.0.0.0/24", "::1/128" };

static uint64_t fuzz_clock(void)
{
	return now;
}

/* A UDP socket bound to ip, port 0, set up as twagd's open_udp (the
 * workers': with IP_PKTINFO and IPV6_RECVPKTINFO) or as a NAS's. */
static int udp_open(int family, const char *ip, bool worker, long rcvtimeo_ms,
		    struct sockaddr_storage *ss, socklen_t *len)
{
	struct timeval tv = { 0, rcvtimeo_ms * 1000 };
	int one = 1, buf = 4 << 20, fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t l = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);

	if (fd < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
	if (inet_pton(family,  ip,
		      family == AF_INET ? (void *)&((struct sockaddr_in *)ss)->sin_addr
					: (void *)&((struct sockaddr_in6 *)ss)->sin6_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
		goto fail;
	/* room for a whole group or its replies; as root beyond rmem_max */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (worker) {
		if (family == AF_INET6)
			(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		(void)setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)ss, l) != 0 ||
	    getsockname(fd, (struct sockaddr *)ss, &l) != 0)
		goto fail;
	if (len != NULL)
		*len = l;
	return fd;
fail:
	close(fd);
	return -1;
}

/* A worker on its own socket (UDP GRO when gro, as --no-udp-gro leaves
 * it otherwise), its loop begun; it signs and builds one by one until a
 * group's turn (tw_srv_handle on wk[0] must). */
static int worker_new(struct wk *k, unsigned idx, int family, const char *ip, bool gro,
		      unsigned coalesce_us)
{
	int fd = udp_open(family, ip, true, 200, &k->addr, &k->addr_len);

	if (fd < 0 || posix_memalign((void **)&k->w, 64, sizeof(*k->w)) != 0) {
		if (fd >= 0)
			close(fd);
		return TW_ERR_IO;
	}
	srv.cfg.udp_gro = gro;
	if (tw_srv_worker_init(k->w, &srv, idx, fd) != TW_OK)
		return TW_ERR_IO;
	k->w->clients = &clients;
	k->v6 = family == AF_INET6;
	srv.cfg.rx_coalesce_us = coalesce_us;
	tw_srv_worker_begin(k->w, &k->loop);
	k->w->defer_sign = k->w->park_ok = false;
	k->loop.rx_flags = MSG_DONTWAIT;
	k->loop.clock_ms = fuzz_clock;
	return TW_OK;
}

/*
 * tw_srv_worker_run itself, once: a thread of its own on a fourth socket
 * (SO_RCVTIMEO 1 ms, so that the stop flag is seen at once) answers one
 * Status-Server, then stops.
 */
static int run_thread(void)
{
	struct tw_radius_builder b;
	struct tw_radius_pkt rp;
	struct wk k;
	struct sockaddr_storage ss;
	uint8_t req[64], reply[TW_RADIUS_MAX_LEN], auth[16] = { 7 };
	struct pollfd pf = { nas[0][0], POLLIN, 0 };
	size_t len;
	ssize_t got = -1;
	int rc = TW_ERR_IO;
	int fd = udp_open(AF_INET, "127.0.0.1", true, 1, &ss, NULL);

	memset(&k, 0, sizeof(k));
	if (fd < 0 || posix_memalign((void **)&k.w, 64, sizeof(*k.w)) != 0)
		return TW_ERR_IO;
	srv.cfg.udp_gro = false;
	/* more than the longest span it takes (its waits are cut to 10 ms) */
	srv.cfg.rx_coalesce_us = 2 * TW_SRV_MAX_RX_COALESCE_US;
	if (tw_srv_worker_init(k.w, &srv, 3, fd) != TW_OK)
		return TW_ERR_IO;
	tw_radius_build_init(&b, req, sizeof(req), TW_RADIUS_STATUS_SERVER, 1, auth, true);
	if (tw_radius_finish_request(&b, (const uint8_t *)secret, strlen(secret), &len) != TW_OK ||
	    pthread_create(&k.w->thread, NULL, tw_srv_worker_run, k.w) != 0)
		return TW_ERR_IO;
	if (sendto(nas[0][0], req, len, 0, (const struct sockaddr *)&ss, sizeof(struct sockaddr_in)) ==
		    (ssize_t)len &&
	    poll(&pf, 1, 5000) == 1)
		got = recv(nas[0][0], reply, sizeof(reply), MSG_DONTWAIT);
	atomic_store(&srv.stop, true);
	pthread_join(k.w->thread, NULL);
	atomic_store(&srv.stop, false);
	if (got > 0 && tw_radius_decode(&rp, reply, (size_t)got) == TW_OK &&
	    rp.code == TW_RADIUS_ACCESS_ACCEPT &&
	    tw_radius_verify_response(&rp, auth, (const uint8_t *)secret, strlen(secret), true) ==
		    TW_OK)
		rc = TW_OK;
	close(fd);
	tw_srv_worker_free(k.w);
	free(k.w);
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
	if (tw_srv_sessions_init(&srv.sessions, 64, 60, seed) != TW_OK)
		return -1;
	for (size_t i = 0; i < sizeof(client_specs) / sizeof(client_specs[0]); i++)
		if (tw_srv_clients_add(&clients, client_specs[i], (const uint8_t *)secret,
				       strlen(secret), true, err, sizeof(err)) != TW_OK)
			return -1;
	atomic_store(&srv.clients, &clients);
	for (int i = 0; i < N_SRC; i++) {
		nas[0][i] = udp_open(AF_INET, i < 6 ? "127.0.0.1" : i == 6 ? "127.0.0.2" : "127.0.1.1",
				     false, 200, &nas_addr[0][i], NULL);
		nas[1][i] = udp_open(AF_INET6, "::1", false, 200, &nas_addr[1][i], NULL);
		if (nas[0][i] < 0 || nas[1][i] < 0)
			return -1;
	}
	/* worker 1 as with --rx-coalesce-us 0: no coalescing waits */
	if (worker_new(&wk[0], 0, AF_INET, "127.0.0.1", false, 100) != TW_OK ||
	    worker_new(&wk[1], 1, AF_INET, "127.0.0.1", true, 0) != TW_OK ||
	    worker_new(&wk[2], 2, AF_INET6, "::1", true, 100) != TW_OK)
		return -1;
	w = wk[0].w;
	srv.workers = &w;
	srv.n_workers = 1;
	tw_log_set_level(TW_LOG_ERROR);
	trace = getenv("TWAG_FUZZ_TRACE") != NULL;
	if (run_thread() != TW_OK)
		return -1;
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
	/* where the last request went: worker (-1: tw_srv_handle on wk[0]
	 * from s->from) and NAS socket (src: the op's (op / 4) % 8) */
	int last_wk;
	unsigned src;
	/* an open group: its flags, the worker it goes to, its datagrams;
	 * last_new: the group's latest request that was not a
	 * retransmission (-1: none yet) */
	bool grouping;
	uint8_t gflags;
	unsigned genv;         /* which way the switches are off */
	int gwk, n_items, last_new;
};

/* A datagram of a group: from NAS socket src; orig: the earlier one of
 * the group it retransmits (-1); expect: answered before the group as
 * prev (RFC 5080 §2.2.2: so again); the reply it got. */
static struct item {
	uint8_t req[DGRAM_MAX];
	size_t len;
	unsigned src;
	int orig;
	bool expect;
	uint8_t prev[TW_RADIUS_MAX_LEN];
	size_t prev_len;
	uint8_t reply[TW_RADIUS_MAX_LEN];
	size_t reply_len;
	bool answered;
} items[GROUP_MAX];

/* A group's flags (the octet of the op that opens it). */
enum {
	G_NO_SIGN_BATCH = 1,  /* TWAG_NO_SIGN_BATCH=1: replies signed one by one */
	G_NO_AKA_LANES = 2,   /* TWAG_NO_AKA_LANES=1: no parking */
	G_PKTINFO = 4,        /* a wildcard listen's twagd: replies from IP(V6)_PKTINFO */
	G_WORKER = 8 | 16,    /* ((flags >> 3) & 3) % 3: the worker */
	G_GSO = 32,           /* a NAS's runs of one length as one UDP_SEGMENT send */
	G_DEBUG = 64,         /* the log at debug level (to /dev/null) */
	G_EMPTY = 128,        /* one more turn after the group: an empty receive */
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

static void queue(struct script *s, const uint8_t *req, size_t len, int orig);

/* The reply (reply_len 0: none) to request req checked: it decodes,
 * carries the request's Identifier, a valid Response Authenticator and a
 * valid Message-Authenticator first; what it says kept in s. */
static void take_reply(struct script *s, const uint8_t *req, size_t req_len, const uint8_t *reply,
		       size_t reply_len)
{
	struct tw_radius_pkt rq, rp;
	const struct tw_radius_attr *st;
	uint8_t eap[TW_RADIUS_EAP_MAX];
	size_t eap_len = 0;
	bool eap_req;

	eap_req = tw_radius_decode(&rq, req, req_len) == TW_OK &&
		  rq.code == TW_RADIUS_ACCESS_REQUEST && rq.n_eap > 0;
	s->answered_eap = eap_req && reply_len > 0;
	if (trace)
		fprintf(stderr, "request %zu octets: reply %zu octets, code %u\n", req_len,
			reply_len, reply_len > 0 ? reply[0] : 0);
	if (reply_len == 0)
		return;
	if (reply_len > TW_RADIUS_MAX_LEN || tw_radius_decode(&rp, reply, reply_len) != TW_OK ||
	    rp.id != req[1] || rp.n_attrs == 0 ||
	    rp.attrs[0].type != TW_RADIUS_MESSAGE_AUTHENTICATOR ||
	    tw_radius_verify_response(&rp, req + 4, (const uint8_t *)secret, strlen(secret),
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
						      req + 4, s->accept_msk) == TW_OK;
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

/* The request in s->req handed over (to tw_srv_handle, or into the open
 * group); the reply checked; what it says kept. */
static void xmit(struct script *s)
{
	if (s->grouping) {
		queue(s, s->req, s->req_len, -1);
		return;
	}
	s->reply_len = tw_srv_handle(w, s->req, s->req_len, (const struct sockaddr *)&s->from,
				     s->reply, now);
	tw_log_flush(&w->log);
	s->last_wk = -1;
	take_reply(s, s->req, s->req_len, s->reply, s->reply_len);
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

/* ---- groups: the batched receive path --------------------------------- */

/* A datagram into the open group (full: it goes first, and a new one
 * with the same flags takes this); a retransmission of the group's latest
 * request, or of the request before the group when that went to this
 * worker from this socket and was an answered EAP Access-Request. */
static void flush(struct script *s);

static void queue_item(struct script *s, const uint8_t *req, size_t len, bool retrans)
{
	struct item *it;

	if (s->n_items == GROUP_MAX) {
		flush(s);
		s->grouping = true;
		s->n_items = 0;
		s->last_new = -1;
	}
	it = &items[s->n_items];
	memcpy(it->req, req, len);
	it->len = len;
	it->src = s->src;
	it->orig = -1;
	it->expect = false;
	it->reply_len = 0;
	it->answered = false;
	if (!retrans) {
		s->last_new = s->n_items;
	} else {
		it->orig = s->last_new;
		it->expect = s->last_new < 0 && s->answered_eap && s->last_wk == s->gwk &&
			     s->reply_len > 0;
		if (it->expect) {
			memcpy(it->prev, s->reply, s->reply_len);
			it->prev_len = s->reply_len;
		}
	}
	s->n_items++;
}

static void queue(struct script *s, const uint8_t *req, size_t len, int orig)
{
	queue_item(s, req, len, orig >= 0);
}

/* The NAS's datagrams items[i..i+k) from fd to the worker: with k > 1 as
 * one UDP_SEGMENT send (UDP GSO: the kernel cuts it at the first one's
 * length; to a socket with UDP_GRO it arrives coalesced, as from a NIC
 * with GRO), else one by one. Returns how many left. */
static int send_run(int fd, int i, int k, const struct sockaddr_storage *to, socklen_t to_len)
{
	struct iovec iov[GROUP_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} u;
	struct msghdr m;
	struct cmsghdr *c;
	uint16_t seg = (uint16_t)items[i].len;
	int sent = 0;

	if (k > 1) {
		memset(&m, 0, sizeof(m));
		memset(&u, 0, sizeof(u));
		for (int j = 0; j < k; j++) {
			iov[j].iov_base = items[i + j].req;
			iov[j].iov_len = items[i + j].len;
		}
		m.msg_name = (void *)to;
		m.msg_namelen = to_len;
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)k;
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		if (sendmsg(fd, &m, 0) >= 0)
			return k;
	}
	for (int j = 0; j < k; j++)
		if (sendto(fd, items[i + j].req, items[i + j].len, 0, (const struct sockaddr *)to,
			   to_len) == (ssize_t)items[i + j].len)
			sent++;
	return sent;
}

/* A reply that reached NAS socket src: it must answer one of the
 * group's requests from there (Identifier, Response Authenticator,
 * Message-Authenticator first), and one not answered yet. */
static void match(unsigned src, const uint8_t *reply, size_t len)
{
	struct tw_radius_pkt rp;
	int hit = -1;

	if (len > TW_RADIUS_MAX_LEN || tw_radius_decode(&rp, reply, len) != TW_OK ||
	    rp.n_attrs == 0 || rp.attrs[0].type != TW_RADIUS_MESSAGE_AUTHENTICATOR)
		abort();
	for (int i = 0; i < GROUP_MAX && hit < 0; i++)
		if (items[i].len >= 20 && items[i].src == src && !items[i].answered &&
		    items[i].req[1] == rp.id &&
		    tw_radius_verify_response(&rp, items[i].req + 4, (const uint8_t *)secret,
					      strlen(secret), true) == TW_OK)
			hit = i;
	if (hit < 0)
		abort(); /* a reply to nothing sent, or a second one */
	memcpy(items[hit].reply, reply, len);
	items[hit].reply_len = len;
	items[hit].answered = true;
}

/* The value of an environment switch: set ("1"), or one of the ways of
 * not setting it (unset, empty, "0"). */
static void env_switch(const char *name, bool on, unsigned off_form)
{
	if (on)
		(void)setenv(name, "1", 1);
	else if (off_form % 3 == 0)
		(void)unsetenv(name);
	else
		(void)setenv(name, off_form % 3 == 1 ? "" : "0", 1);
}

/*
 * The open group to its worker: the requests sent at once from the NAS
 * sockets, worker turns until it has taken them all (a second without
 * any ends that: loopback drops nothing), the replies collected up to a
 * datagram of 0 octets the worker's socket sends after them, checked,
 * and what they say kept in the group's order.
 */
static void flush(struct script *s)
{
	static uint8_t buf[1 << 16];
	struct wk *k = &wk[s->gwk];
	struct tw_srv_worker *gw = k->w;
	struct tw_srv_loop begun;
	const uint8_t f = s->gflags;
	int fam = k->v6, n = s->n_items, sent = 0, got = 0;
	unsigned used = 0;
	bool dbg = false;

	s->grouping = false;
	if (n == 0)
		return;
	for (int i = n; i < GROUP_MAX; i++)
		items[i].len = 0; /* matches nothing */
	for (int i = 0; i < n; i++)
		used |= 1u << items[i].src;
	for (unsigned c = 0; c < N_SRC; c++)
		while ((used & (1u << c)) && recv(nas[fam][c], buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			; /* nothing left over from before */
	/* the loop's settings, as twagd's workers take them */
	env_switch("TWAG_NO_SIGN_BATCH", f & G_NO_SIGN_BATCH, s->genv);
	env_switch("TWAG_NO_AKA_LANES", f & G_NO_AKA_LANES, s->genv / 3u);
	tw_srv_worker_begin(gw, &begun);
	srv.pktinfo = (f & G_PKTINFO) != 0;
	if ((f & G_DEBUG) && tw_log_open("/dev/null") == TW_OK) {
		tw_log_set_level(TW_LOG_DEBUG);
		dbg = true;
	}
	for (int i = 0; i < n;) {
		int j = i + 1;

		if ((f & G_GSO) && items[i].len > 0) {
			size_t total = items[i].len;

			while (j < n && j - i < 64 && items[j].src == items[i].src &&
			       items[j].len == items[i].len && total + items[j].len <= 65000)
				total += items[j++].len;
			if (j < n && j - i < 64 && items[j].src == items[i].src && items[j].len > 0 &&
			    items[j].len < items[i].len && total + items[j].len <= 65000)
				j++;
		}
		sent += send_run(nas[fam][items[i].src], i, j - i, &k->addr, k->addr_len);
		i = j;
	}
	while (got < sent) {
		struct pollfd pf = { gw->fd, POLLIN, 0 };
		int r;

		if (poll(&pf, 1, 1000) != 1)
			break;
		r = tw_srv_worker_turn(gw, &k->loop);
		if (r > 0)
			got += tw_srv_count_datagrams(gw, r);
	}
	if (f & G_EMPTY)
		(void)tw_srv_worker_turn(gw, &k->loop);
	gw->defer_sign = gw->park_ok = false; /* tw_srv_handle signs itself */
	srv.pktinfo = false;
	if (dbg) {
		tw_log_set_level(TW_LOG_ERROR);
		tw_log_close();
	}
	for (unsigned c = 0; c < N_SRC; c++) {
		struct sockaddr_storage from;
		socklen_t from_len;
		ssize_t r;

		if (!(used & (1u << c)) ||
		    sendto(gw->fd, "", 0, 0, (const struct sockaddr *)&nas_addr[fam][c],
			   k->addr_len) != 0)
			continue;
		for (;;) {
			struct pollfd pf = { nas[fam][c], POLLIN, 0 };

			if (poll(&pf, 1, 1000) != 1)
				break;
			from_len = sizeof(from);
			r = recvfrom(nas[fam][c], buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &from_len);
			if (r <= 0)
				break;
			/* from the address and port the request went to */
			if (from_len != k->addr_len || memcmp(&from, &k->addr, from_len) != 0)
				abort();
			match(c, buf, (size_t)r);
		}
	}
	for (int i = 0; i < n; i++) {
		const struct item *it = &items[i], *o = it->orig >= 0 ? &items[it->orig] : NULL;

		/* RFC 5080 §2.2.2: a retransmission is answered as its
		 * original was, or not at all while that is in progress */
		if (it->answered && o != NULL && o->answered &&
		    (it->reply_len != o->reply_len || memcmp(it->reply, o->reply, o->reply_len) != 0))
			abort();
		if (it->answered && it->expect &&
		    (it->reply_len != it->prev_len || memcmp(it->reply, it->prev, it->prev_len) != 0))
			abort();
	}
	if (trace)
		fprintf(stderr, "group of %d to worker %d (flags %#x): %d sent, %d taken\n", n,
			s->gwk, f, sent, got);
	for (int i = 0; i < n; i++)
		take_reply(s, items[i].req, items[i].len, items[i].reply, items[i].reply_len);
	memcpy(s->reply, items[n - 1].reply, items[n - 1].reply_len);
	s->reply_len = items[n - 1].reply_len;
	s->last_wk = s->gwk;
	s->n_items = 0;
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
	s.last_wk = -1;
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
		if (op % 4 == 3 && (op & 128) && !(op & 64)) {
			/* a group: the open one sent; with octets, a new one */
			if (s.grouping)
				flush(&s);
			if (n > 0) {
				s.grouping = true;
				s.gflags = p[0];
				s.genv = n > 1 ? p[1] : 0;
				s.gwk = ((p[0] >> 3) & 3) % N_WK;
				s.n_items = 0;
				s.last_new = -1;
			}
			continue;
		}
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
		if (op % 4 != 3) {
			s.from.sin_port = htons((uint16_t)(40000 + (op / 4) % 8));
			s.src = (op / 4) % 8;
		}
		switch (op % 4) {
		case 0:
			if (s.grouping && (op & 32)) {
				/* longer than RFC 2865 allows: 4096 + n octets */
				static uint8_t big[DGRAM_MAX];

				if (n > DGRAM_MAX - TW_RADIUS_MAX_LEN)
					n = DGRAM_MAX - TW_RADIUS_MAX_LEN;
				memset(big, 0, sizeof(big));
				memcpy(big, p, n);
				queue_item(&s, big, TW_RADIUS_MAX_LEN + n, false);
				forget(&s);
				continue;
			}
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
			/* answered here, from here: a group's went elsewhere */
			bool was = s.answered_eap && s.last_wk < 0;

			if (s.req_len == 0)
				continue;
			if (s.grouping) {
				queue_item(&s, s.req, s.req_len, true);
				continue;
			}
			memcpy(prev, s.reply, prev_len);
			xmit(&s);
			if (was && (s.reply_len != prev_len || memcmp(prev, s.reply, prev_len) != 0))
				abort();
			continue;
		}
		}
		xmit(&s);
	}
	if (s.grouping)
		flush(&s);
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
