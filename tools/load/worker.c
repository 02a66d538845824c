/*
 * twag-load — one worker thread: attach slots over connected UDP sockets,
 * RADIUS (RFC 2865 §3-§5, RFC 3579 §3, RFC 2548 §2.4, RFC 5080 §2.2.1)
 * around the peer engines (eap_aka.h, eap_sim.h).
 *
 * An attach, as an access point relays it:
 *   Access-Request{EAP-Response/Identity}          -> Access-Challenge{State}
 *   Access-Request{State, EAP-Response/<method>}   -> Access-Challenge ...
 *   ...                                            -> Access-Accept{EAP-Success,
 *                                                     MS-MPPE-Recv/Send-Key}
 * Every reply must carry a valid Response Authenticator and
 * Message-Authenticator (RFC 3579 §3.2); the MPPE keys decrypted from the
 * Access-Accept must equal the peer's MSK (Recv-Key = MSK[0..31],
 * Send-Key = MSK[32..63]).
 *
 * Identifiers: slot `local` of a socket uses Identifiers local,
 * local + SLOTS_PER_SOCK, ... in turn (IDS_PER_SLOT of them), so a late
 * duplicate answer to an earlier request of the slot is recognised as
 * stray instead of being checked against the wrong authenticator.
 * Retransmissions resend the same bytes (same Identifier and Request
 * Authenticator: RFC 5080 §2.2.1 — the server answers them from its
 * duplicate cache).
 */
#define _GNU_SOURCE /* recvmmsg, sendmmsg (Linux) */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"
#include "twag/udp_gso.h"

struct slot {
	struct load_phone *ph;
	union {
		struct tw_aka_peer_ctx aka;
		struct tw_eap_sim_peer sim;
	} peer;
	struct tw_eap_peer_cfg pcfg;
	struct tw_eap_peer_ids ids;
	struct slot *prev, *next;      /* retransmission timer list */
	uint64_t t_start, deadline;
	unsigned sock;                 /* socket index in the worker */
	uint8_t local;                 /* slot position in its socket */
	uint8_t id;                    /* Identifier of the outstanding request */
	uint8_t k;                     /* Identifier rotation */
	uint8_t tries;                 /* sends of the outstanding request */
	bool active;                   /* an attach runs in this slot */
	bool waiting;                  /* a request is outstanding */
	bool queued;                   /* in its socket's send queue */
	bool in_timer;
	bool sync_seen, peer_refused;
	uint8_t identity[TW_EAP_ID_MAX];
	size_t identity_len;
	uint8_t state[TW_RADIUS_ATTR_MAX_VALUE];
	size_t state_len;
	uint8_t req_auth[TW_RADIUS_AUTH_LEN];
	size_t req_len;
	uint8_t req[TW_RADIUS_MAX_LEN];
	/* built, its Message-Authenticator computed with the socket's other
	 * new requests when they are sent (flush_sock) */
	bool need_sign;
	struct tw_radius_builder b;
};

struct wsock {
	int fd;
	unsigned nout;
	struct slot *outq[SLOTS_PER_SOCK];
};

struct wstate {
	struct load_worker *w;
	struct load_cfg *cfg;
	struct slot *slots;
	unsigned n_slots, active;
	struct wsock *socks;
	unsigned n_socks;
	struct pollfd *pfd;
	/* idle phones, FIFO */
	struct load_phone **idle;
	size_t idle_head, idle_n, idle_cap;
	/* timers: ordered by deadline (all intervals equal: append order) */
	struct slot *t_head, *t_tail;
	/* slots whose attach ended: a new one starts from the loop (never
	 * from finish(), so a failing start cannot recurse) */
	struct slot **pending;
	unsigned n_pending;
	bool stopping;
	uint64_t drain_until;
	/* packet buffers */
	struct tw_radius_pkt pkt;
	uint8_t eap[TW_RADIUS_EAP_MAX];
	uint8_t out[TW_EAP_OUT_MIN * 8];
	uint8_t rbuf[LOAD_BATCH][TW_RADIUS_MAX_LEN];
	struct mmsghdr rmsg[LOAD_BATCH], smsg[SLOTS_PER_SOCK];
	struct iovec riov[LOAD_BATCH], siov[SLOTS_PER_SOCK];
	/* the authenticators of a batch at once (RADIUS MD5 work in
	 * parallel lanes): replies checked before they are handled, new
	 * requests signed before they are sent */
	struct tw_radius_pkt vpkt[LOAD_BATCH];
	struct tw_radius_verify_resp_job vjob[LOAD_BATCH];
	int vidx[LOAD_BATCH];
	struct tw_radius_finish_job fjob[SLOTS_PER_SOCK];
	struct tw_udp_gso gso;       /* the sender of every socket here */
};

_Static_assert((int)SLOTS_PER_SOCK <= (int)TW_UDP_GSO_MAX_MSGS, "a socket's queue in one send");

static int peer_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	load_random(out, len);
	return TW_OK;
}

/* ---- timers ------------------------------------------------------------ */

static void timer_remove(struct wstate *ws, struct slot *s)
{
	if (!s->in_timer)
		return;
	if (s->prev)
		s->prev->next = s->next;
	else
		ws->t_head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		ws->t_tail = s->prev;
	s->prev = s->next = NULL;
	s->in_timer = false;
}

static void timer_push(struct wstate *ws, struct slot *s, uint64_t deadline)
{
	timer_remove(ws, s);
	s->deadline = deadline;
	s->prev = ws->t_tail;
	s->next = NULL;
	if (ws->t_tail)
		ws->t_tail->next = s;
	else
		ws->t_head = s;
	ws->t_tail = s;
	s->in_timer = true;
}

/* ---- phones ------------------------------------------------------------ */

static struct load_phone *idle_pop(struct wstate *ws)
{
	if (ws->idle_n == 0)
		return NULL;
	struct load_phone *ph = ws->idle[ws->idle_head];
	ws->idle_head = (ws->idle_head + 1) % ws->idle_cap;
	ws->idle_n--;
	return ph;
}

static void idle_push(struct wstate *ws, struct load_phone *ph)
{
	ws->idle[(ws->idle_head + ws->idle_n) % ws->idle_cap] = ph;
	ws->idle_n++;
}

/* May a new attach start? Claims one of --attaches. */
static bool may_start(struct wstate *ws, uint64_t now)
{
	struct load_cfg *cfg = ws->cfg;

	if (ws->stopping || atomic_load_explicit(&cfg->stop, memory_order_relaxed))
		return false;
	if (cfg->time_s > 0 && now >= cfg->t_end)
		return false;
	if (cfg->attaches > 0 &&
	    atomic_fetch_add_explicit(&cfg->started, 1, memory_order_relaxed) >= cfg->attaches)
		return false;
	return true;
}

/* ---- sending ----------------------------------------------------------- */

static void queue_send(struct wstate *ws, struct slot *s)
{
	struct wsock *so = &ws->socks[s->sock];

	if (s->queued)
		return;
	s->queued = true;
	so->outq[so->nout++] = s;
}

static void flush_sock(struct wstate *ws, struct wsock *so)
{
	unsigned n = 0, nf = 0;

	for (unsigned i = 0; i < so->nout; i++) {
		struct slot *s = so->outq[i];

		if (s->waiting && s->need_sign) {
			ws->fjob[nf].b = &s->b;
			ws->fjob[nf++].s = &ws->cfg->key;
		}
	}
	tw_radius_finish_requests_ctx(ws->fjob, nf);
	for (unsigned i = 0; i < nf; i++) {
		struct slot *s = (struct slot *)((char *)ws->fjob[i].b - offsetof(struct slot, b));

		s->need_sign = false;
		s->req_len = ws->fjob[i].rc == TW_OK ? ws->fjob[i].len : 0; /* 0: never sent */
	}
	for (unsigned i = 0; i < so->nout; i++) {
		struct slot *s = so->outq[i];
		s->queued = false;
		if (!s->waiting || s->req_len == 0)
			continue; /* finished while queued */
		ws->siov[n].iov_base = s->req;
		ws->siov[n].iov_len = s->req_len;
		memset(&ws->smsg[n].msg_hdr, 0, sizeof(ws->smsg[n].msg_hdr));
		ws->smsg[n].msg_hdr.msg_iov = &ws->siov[n];
		ws->smsg[n].msg_hdr.msg_iovlen = 1;
		n++;
	}
	so->nout = 0;
	/* requests of one length leave as one UDP GSO send (all go to the
	 * server); one the kernel refuses is lost, the timer retransmits it */
	unsigned done = tw_udp_gso_send(&ws->gso, so->fd, ws->smsg, n, MSG_DONTWAIT);

	ws->w->c.sent += done;
}

static void flush_all(struct wstate *ws)
{
	for (unsigned i = 0; i < ws->n_socks; i++)
		if (ws->socks[i].nout)
			flush_sock(ws, &ws->socks[i]);
}

/*
 * Builds the Access-Request that carries eap (RFC 3579 §3.1) with a new
 * Identifier and Request Authenticator, Message-Authenticator first
 * (RFC 3579 §3.2), and queues it.
 */
static int send_eap(struct wstate *ws, struct slot *s, const uint8_t *eap, size_t len,
		    uint64_t now)
{
	struct tw_radius_builder b;
	static const uint8_t nas_ip[4] = { 127, 0, 0, 1 };

	s->k = (uint8_t)((s->k + 1) % IDS_PER_SLOT);
	s->id = (uint8_t)(s->local + s->k * SLOTS_PER_SOCK);
	load_random(s->req_auth, sizeof(s->req_auth));
	tw_radius_build_init(&b, s->req, sizeof(s->req), TW_RADIUS_ACCESS_REQUEST, s->id,
			     s->req_auth, true);
	tw_radius_add(&b, TW_RADIUS_USER_NAME, s->identity, s->identity_len);
	tw_radius_add(&b, TW_RADIUS_NAS_IP_ADDRESS, nas_ip, sizeof(nas_ip));
	tw_radius_add_u32(&b, TW_RADIUS_NAS_PORT_TYPE, 19); /* Wireless-802.11 */
	tw_radius_add_u32(&b, TW_RADIUS_FRAMED_MTU, 1400);
	tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, s->ph->station, LOAD_STATION_LEN);
	if (s->state_len)
		tw_radius_add(&b, TW_RADIUS_STATE, s->state, s->state_len);
	tw_radius_add_eap(&b, eap, len);
	if (b.err != TW_OK)
		return -1;
	/* signed in flush_sock, with the others */
	s->b = b;
	s->need_sign = true;
	s->req_len = b.len;
	s->tries = 1;
	s->waiting = true;
	queue_send(ws, s);
	timer_push(ws, s, now + LOAD_RETRANSMIT_NS);
	return 0;
}

/* ---- attaches ---------------------------------------------------------- */

static void wipe_peer(struct wstate *ws, struct slot *s)
{
	if (ws->cfg->method == LOAD_SIM)
		tw_eap_sim_peer_wipe(&s->peer.sim);
	else
		tw_aka_peer_wipe(&s->peer.aka);
	tw_wipe(&s->ids, sizeof(s->ids));
}

static void finish(struct wstate *ws, struct slot *s, int cause, uint64_t now);

/* Starts an attach in slot s with the next idle phone: the access point's
 * EAP-Request/Identity (RFC 3748 §5.1) goes to the peer, its
 * EAP-Response/Identity into the first Access-Request. */
static void start_attach(struct wstate *ws, struct slot *s, uint64_t now)
{
	struct load_cfg *cfg = ws->cfg;
	struct load_phone *ph = idle_pop(ws);
	uint8_t req[8], eap_id;
	size_t req_len, out_len;
	int rc;

	if (ph == NULL) {
		s->active = false;
		return;
	}
	s->ph = ph;
	s->active = true;
	ws->active++;
	s->t_start = now;
	s->state_len = 0;
	s->sync_seen = s->peer_refused = false;
	memset(&s->ids, 0, sizeof(s->ids));
	memset(&s->pcfg, 0, sizeof(s->pcfg));
	s->pcfg.imsi = ph->usim.imsi;
	s->pcfg.imsi_len = ph->usim.imsi_len;
	s->pcfg.realm = cfg->realm_len ? cfg->realm : NULL;
	s->pcfg.realm_len = cfg->realm_len;
	s->pcfg.support_aka_prime = cfg->method == LOAD_AKA_PRIME;
	s->pcfg.network_name = cfg->network_name;
	s->pcfg.network_name_len = cfg->network_name_len;
	s->pcfg.random = peer_random;
	load_random(&eap_id, 1);
	if (tw_eap_request_identity(req, sizeof(req), eap_id, &req_len) != TW_OK)
		goto fail;
	if (cfg->method == LOAD_SIM) {
		if (tw_eap_sim_peer_init(&s->peer.sim, &s->pcfg, &s->ids, &ph->usim,
					 peer_random, NULL) != TW_OK)
			goto fail;
		rc = tw_eap_sim_peer_input(&s->peer.sim, req, req_len, ws->out,
					   sizeof(ws->out), &out_len);
	} else {
		if (tw_aka_peer_init(&s->peer.aka, &s->pcfg, &ph->usim, &s->ids) != TW_OK)
			goto fail;
		rc = tw_aka_peer_input(&s->peer.aka, req, req_len, ws->out, sizeof(ws->out),
				       &out_len);
	}
	/* EAP-Response/Identity: Code, Id, Length, Type 1, identity */
	if (rc != TW_EAP_SEND || out_len < 6 || out_len - 5 > sizeof(s->identity))
		goto fail;
	s->identity_len = out_len - 5;
	memcpy(s->identity, ws->out + 5, s->identity_len);
	if (send_eap(ws, s, ws->out, out_len, now) != 0)
		goto fail;
	return;
fail:
	finish(ws, s, CAUSE_OTHER, now);
}

/* Ends the attach in s (cause < 0: success); the slot waits in pending for
 * the loop to start the next one. */
static void finish(struct wstate *ws, struct slot *s, int cause, uint64_t now)
{
	struct load_counters *c = &ws->w->c;

	if (cause < 0) {
		c->ok++;
		load_hist_add(&c->latency, now - s->t_start);
	} else {
		c->fail[cause]++;
	}
	timer_remove(ws, s);
	s->waiting = false;
	wipe_peer(ws, s);
	idle_push(ws, s->ph);
	s->ph = NULL;
	s->active = false;
	ws->active--;
	ws->pending[ws->n_pending++] = s;
}

/* New attaches in the slots that became free (as many as were waiting on
 * entry: a start that fails at once puts its slot back). A refusal of
 * may_start is final (time over, --attaches all claimed, stop). */
static void start_pending(struct wstate *ws, uint64_t now)
{
	unsigned n = ws->n_pending;

	while (n-- > 0 && ws->n_pending > 0) {
		struct slot *s = ws->pending[--ws->n_pending];
		if (!may_start(ws, now)) {
			ws->n_pending = 0;
			return;
		}
		start_attach(ws, s, now);
	}
}

/* The cause of a failed attach: a stale SQN seen by the USIM first. */
static int fail_cause(const struct slot *s, int dflt)
{
	if (s->sync_seen)
		return CAUSE_SYNC;
	if (s->peer_refused)
		return CAUSE_PEER;
	return dflt;
}

/* Notes what the peer answered (RFC 4187 §9.5, §9.6, §9.14; RFC 4186
 * §9.9): Synchronization-Failure means the USIM found SQN not fresh. */
static void note_response(struct wstate *ws, struct slot *s, const uint8_t *eap, size_t len)
{
	if (len < 6 || eap[0] != TW_EAP_RESPONSE)
		return;
	uint8_t type = eap[4], subtype = eap[5];
	if (type == TW_EAP_TYPE_AKA || type == TW_EAP_TYPE_AKA_PRIME) {
		if (subtype == TW_SIMAKA_SYNC_FAILURE) {
			s->sync_seen = true;
			ws->w->c.sync_events++;
		} else if (subtype == TW_SIMAKA_AUTH_REJECT ||
			   subtype == TW_SIMAKA_CLIENT_ERROR) {
			s->peer_refused = true;
		}
	} else if (type == TW_EAP_TYPE_SIM && subtype == TW_SIMAKA_CLIENT_ERROR) {
		s->peer_refused = true;
	} else if (type == TW_EAP_TYPE_NAK) {
		s->peer_refused = true;
	}
}

static int peer_input(struct wstate *ws, struct slot *s, const uint8_t *eap, size_t len,
		      size_t *out_len)
{
	if (ws->cfg->method == LOAD_SIM)
		return tw_eap_sim_peer_input(&s->peer.sim, eap, len, ws->out, sizeof(ws->out),
					     out_len);
	return tw_aka_peer_input(&s->peer.aka, eap, len, ws->out, sizeof(ws->out), out_len);
}

/* Access-Accept: EAP-Success to the peer, then MPPE keys == MSK. */
static int on_accept(struct wstate *ws, struct slot *s, const struct tw_radius_pkt *p,
		     size_t eap_len)
{
	struct load_cfg *cfg = ws->cfg;
	struct tw_eap_keys k;
	uint8_t msk[64];
	size_t out_len;
	int cause = CAUSE_OTHER;

	memset(&k, 0, sizeof(k));
	if (peer_input(ws, s, ws->eap, eap_len, &out_len) != TW_EAP_ACCEPT)
		goto out;
	if (cfg->method == LOAD_SIM) {
		const struct tw_eap_keys *pk = tw_eap_sim_peer_keys(&s->peer.sim);
		if (pk == NULL)
			goto out;
		k = *pk;
	} else if (tw_aka_peer_keys(&s->peer.aka, &k) != TW_OK) {
		goto out;
	}
	cause = CAUSE_MPPE;
	if (tw_radius_get_mppe_keys_ctx(p, &cfg->key, s->req_auth, msk) != TW_OK ||
	    !tw_ct_eq(msk, k.msk, sizeof(msk)))
		goto out;
	cause = -1;
out:
	tw_wipe(&k, sizeof(k));
	tw_wipe(msk, sizeof(msk));
	return cause;
}

/* pre: the reply as decoded and checked with its batch (drain_sock), or
 * NULL: decoded and checked here. */
static void on_reply(struct wstate *ws, unsigned sock, const uint8_t *buf, size_t len,
		     uint64_t now, const struct tw_radius_verify_resp_job *pre)
{
	struct load_cfg *cfg = ws->cfg;
	struct load_counters *c = &ws->w->c;
	const struct tw_radius_pkt *p = pre != NULL ? pre->p : &ws->pkt;
	const struct tw_radius_attr *a;
	size_t eap_len = 0, out_len;
	unsigned idx;
	struct slot *s;
	int rc, eap_rc;

	c->received++;
	if (pre == NULL && tw_radius_decode(&ws->pkt, buf, len) != TW_OK) {
		c->malformed++;
		return;
	}
	idx = sock * SLOTS_PER_SOCK + p->id % SLOTS_PER_SOCK;
	if (idx >= ws->n_slots) {
		c->stray++;
		return;
	}
	s = &ws->slots[idx];
	if (!s->active || !s->waiting || s->id != p->id) {
		c->stray++;
		return;
	}
	/* RFC 2865 §3 Response Authenticator, RFC 3579 §3.2 MA required */
	if ((pre != NULL ? pre->rc : tw_radius_verify_response_ctx(p, s->req_auth, &cfg->key,
								    true)) != TW_OK) {
		finish(ws, s, CAUSE_BAD_AUTH, now);
		return;
	}
	timer_remove(ws, s);
	s->waiting = false;
	eap_rc = tw_radius_eap_join(p, ws->eap, sizeof(ws->eap), &eap_len);
	switch (p->code) {
	case TW_RADIUS_ACCESS_CHALLENGE:
		/* RFC 2865 §5.24: State goes back unmodified */
		a = tw_radius_find(p, TW_RADIUS_STATE);
		if (a == NULL || eap_rc != TW_OK) {
			finish(ws, s, fail_cause(s, CAUSE_OTHER), now);
			return;
		}
		memcpy(s->state, tw_radius_value(p, a), a->len);
		s->state_len = a->len;
		rc = peer_input(ws, s, ws->eap, eap_len, &out_len);
		if (rc != TW_EAP_SEND) {
			finish(ws, s, fail_cause(s, CAUSE_OTHER), now);
			return;
		}
		note_response(ws, s, ws->out, out_len);
		if (send_eap(ws, s, ws->out, out_len, now) != 0)
			finish(ws, s, CAUSE_OTHER, now);
		return;
	case TW_RADIUS_ACCESS_ACCEPT:
		if (eap_rc != TW_OK) {
			finish(ws, s, CAUSE_OTHER, now);
			return;
		}
		rc = on_accept(ws, s, p, eap_len);
		/* an attach that needed a resynchronisation counts as failed:
		 * the USIM saw a stale SQN */
		finish(ws, s, rc < 0 ? fail_cause(s, -1) : rc, now);
		return;
	case TW_RADIUS_ACCESS_REJECT:
		finish(ws, s, fail_cause(s, CAUSE_REJECT), now);
		return;
	default:
		finish(ws, s, CAUSE_OTHER, now);
		return;
	}
}

static void expire(struct wstate *ws, uint64_t now)
{
	while (ws->t_head && ws->t_head->deadline <= now) {
		struct slot *s = ws->t_head;
		timer_remove(ws, s);
		if (s->tries < LOAD_MAX_TRIES) {
			/* RFC 5080 §2.2.1: same Identifier, same Authenticator */
			s->tries++;
			ws->w->c.retransmits++;
			queue_send(ws, s);
			timer_push(ws, s, now + LOAD_RETRANSMIT_NS);
		} else {
			finish(ws, s, fail_cause(s, CAUSE_TIMEOUT), now);
		}
	}
}

/* Reads every datagram waiting on socket i. Returns how many. */
static unsigned drain_sock(struct wstate *ws, unsigned i)
{
	unsigned total = 0;

	for (;;) {
		for (unsigned j = 0; j < LOAD_BATCH; j++) {
			ws->riov[j].iov_base = ws->rbuf[j];
			ws->riov[j].iov_len = sizeof(ws->rbuf[j]);
			memset(&ws->rmsg[j].msg_hdr, 0, sizeof(ws->rmsg[j].msg_hdr));
			ws->rmsg[j].msg_hdr.msg_iov = &ws->riov[j];
			ws->rmsg[j].msg_hdr.msg_iovlen = 1;
		}
		int r = recvmmsg(ws->socks[i].fd, ws->rmsg, LOAD_BATCH, MSG_DONTWAIT, NULL);
		if (r <= 0) {
			if (r < 0 && errno == ECONNREFUSED)
				continue; /* the pending ICMP error, reported once */
			return total;
		}
		uint64_t now = load_now_ns();
		int nv = 0;

		/* the replies that answer an outstanding request, checked at
		 * once (on_reply matches again, and takes packet and verdict) */
		for (int j = 0; j < r; j++) {
			struct tw_radius_pkt *p = &ws->vpkt[nv];
			unsigned idx;

			ws->vidx[j] = -1;
			if (tw_radius_decode(p, ws->rbuf[j], ws->rmsg[j].msg_len) != TW_OK)
				continue;
			idx = i * SLOTS_PER_SOCK + p->id % SLOTS_PER_SOCK;
			if (idx >= ws->n_slots || !ws->slots[idx].active ||
			    !ws->slots[idx].waiting || ws->slots[idx].id != p->id)
				continue;
			ws->vjob[nv] = (struct tw_radius_verify_resp_job){
				.p = p, .req_auth = ws->slots[idx].req_auth, .s = &ws->cfg->key,
				.require_msg_auth = true };
			ws->vidx[j] = nv++;
		}
		tw_radius_verify_responses_ctx(ws->vjob, (size_t)nv);
		for (int j = 0; j < r; j++)
			on_reply(ws, i, ws->rbuf[j], ws->rmsg[j].msg_len, now,
				 ws->vidx[j] >= 0 ? &ws->vjob[ws->vidx[j]] : NULL);
		total += (unsigned)r;
		if (r < LOAD_BATCH)
			return total;
	}
}

static int open_socks(struct wstate *ws)
{
	struct load_cfg *cfg = ws->cfg;

	for (unsigned i = 0; i < ws->n_socks; i++) {
		int fd = socket(cfg->server.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int sz = 4 << 20;

		ws->socks[i].fd = fd;
		if (fd < 0) {
			perror("twag-load: socket");
			return -1;
		}
		/* room for a whole window of replies (root may exceed rmem_max) */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) != 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		if (connect(fd, (const struct sockaddr *)&cfg->server, cfg->server_len) != 0) {
			perror("twag-load: connect");
			return -1;
		}
		ws->pfd[i].fd = fd;
		ws->pfd[i].events = POLLIN;
		if (i == 0)
			tw_udp_gso_init(&ws->gso, fd, cfg->udp_gso);
	}
	return 0;
}

static void loop(struct wstate *ws)
{
	struct load_cfg *cfg = ws->cfg;
	uint64_t now = load_now_ns();

	for (unsigned i = 0; i < ws->n_slots; i++)
		ws->pending[ws->n_pending++] = &ws->slots[i];
	for (;;) {
		start_pending(ws, now);
		flush_all(ws);
		now = load_now_ns();
		if (!ws->stopping &&
		    ((cfg->time_s > 0 && now >= cfg->t_end) ||
		     atomic_load_explicit(&cfg->stop, memory_order_relaxed) ||
		     (cfg->attaches > 0 &&
		      atomic_load_explicit(&cfg->started, memory_order_relaxed) >= cfg->attaches))) {
			ws->stopping = true;
			ws->drain_until = now + cfg->drain_ns;
		}
		if (ws->active == 0 && ws->n_pending == 0)
			break;
		if (ws->stopping && now >= ws->drain_until) {
			for (unsigned i = 0; i < ws->n_slots; i++) {
				struct slot *s = &ws->slots[i];
				if (!s->active)
					continue;
				ws->w->c.unfinished++;
				timer_remove(ws, s);
				s->waiting = s->active = false;
				wipe_peer(ws, s);
			}
			break;
		}
		expire(ws, now);
		start_pending(ws, now);
		flush_all(ws);
		/* busy path: read without sleeping; sleep in poll only when
		 * nothing was waiting */
		unsigned got = 0;
		for (unsigned i = 0; i < ws->n_socks; i++)
			got += drain_sock(ws, i);
		if (got || ws->n_pending)
			continue;
		flush_all(ws);
		now = load_now_ns();
		uint64_t wait = 100ull * 1000 * 1000;
		if (ws->t_head)
			wait = ws->t_head->deadline > now ? ws->t_head->deadline - now : 0;
		if (cfg->time_s > 0 && !ws->stopping && cfg->t_end > now && cfg->t_end - now < wait)
			wait = cfg->t_end - now;
		if (wait > 100ull * 1000 * 1000)
			wait = 100ull * 1000 * 1000;
		int ms = (int)((wait + 999999) / 1000000);
		if (poll(ws->pfd, ws->n_socks, ms) < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < ws->n_socks; i++)
			if (ws->pfd[i].revents)
				(void)drain_sock(ws, i);
	}
}

void *load_worker_run(void *arg)
{
	struct load_worker *w = arg;
	struct wstate *ws = calloc(1, sizeof(*ws));

	if (ws == NULL) {
		fprintf(stderr, "twag-load: out of memory\n");
		w->err = -1;
		return NULL;
	}
	ws->w = w;
	ws->cfg = w->cfg;
	ws->n_slots = w->concurrency;
	ws->n_socks = (ws->n_slots + SLOTS_PER_SOCK - 1) / SLOTS_PER_SOCK;
	ws->slots = calloc(ws->n_slots, sizeof(*ws->slots));
	ws->socks = calloc(ws->n_socks, sizeof(*ws->socks));
	ws->pfd = calloc(ws->n_socks, sizeof(*ws->pfd));
	ws->pending = calloc(ws->n_slots, sizeof(*ws->pending));
	ws->idle_cap = w->n_phones;
	ws->idle = calloc(ws->idle_cap ? ws->idle_cap : 1, sizeof(*ws->idle));
	if (!ws->slots || !ws->socks || !ws->pfd || !ws->idle || !ws->pending) {
		fprintf(stderr, "twag-load: out of memory\n");
		w->err = -1;
		goto out;
	}
	for (unsigned i = 0; i < ws->n_socks; i++)
		ws->socks[i].fd = -1;
	for (unsigned i = 0; i < ws->n_slots; i++) {
		ws->slots[i].sock = i / SLOTS_PER_SOCK;
		ws->slots[i].local = (uint8_t)(i % SLOTS_PER_SOCK);
		/* the first send_eap moves k to 0 */
		ws->slots[i].k = IDS_PER_SLOT - 1;
	}
	for (size_t i = 0; i < w->n_phones; i++)
		idle_push(ws, w->phones[i]);
	if (open_socks(ws) != 0) {
		w->err = -1;
		goto out;
	}
	loop(ws);
out:
	if (ws->socks)
		for (unsigned i = 0; i < ws->n_socks; i++)
			if (ws->socks[i].fd >= 0)
				close(ws->socks[i].fd);
	if (ws->slots) {
		tw_wipe(ws->slots, ws->n_slots * sizeof(*ws->slots));
		free(ws->slots);
	}
	free(ws->socks);
	free(ws->pfd);
	free(ws->pending);
	free(ws->idle);
	tw_wipe(ws, sizeof(*ws));
	free(ws);
	return NULL;
}
