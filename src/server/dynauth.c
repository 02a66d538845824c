/*
 * twag — twagd's dynamic authorization client (RFC 5176, January 2008):
 * Disconnect-Requests and CoA-Requests sent to the NAS of a session, on
 * an administrator's command (control.c) or when the subscriber is gone
 * from the store or disabled there.
 *
 * Which session: the Access-Accept carries Class "twag:" + 16 hex digits
 * (worker.c reply_accept); at that moment the worker keeps here, under
 * that token, the IMSI, the client, the User-Name of the Accept and the
 * Access-Request's Calling-Station-Id and NAS identification. The NAS
 * echoes the Class in its Accounting-Requests (RFC 2865 §5.25), which
 * accounting keeps (acct_table.c), so an accounting session maps to its
 * IMSI, and a subscriber's sessions are found even without accounting.
 * The table is bounded (--dynauth-max-sessions, allocated at start-up):
 * sets of 4 entries picked by the token (random: no hash needed), a new
 * entry takes a free slot of its set or the oldest; a spin lock per set
 * held for one entry's copy, so the packet path never waits long and
 * never allocates.
 *
 * A request (RFC 5176 §3: session identification as the NAS sent it):
 * Message-Authenticator first (§3.3), User-Name, Acct-Session-Id,
 * Calling-Station-Id, the NAS-IP-Address / NAS-IPv6-Address /
 * NAS-Identifier seen, and for a CoA the new attributes; the Request
 * Authenticator as for an Accounting-Request (§2.3), with the client's
 * shared secret. It goes to the client's address, port --dynauth-port
 * (3799, §3), and is sent again unchanged (same Identifier and
 * Authenticator, RFC 5080 §2.2.1) after --dynauth-timeout-ms, at most
 * --dynauth-retries times. A reply counts only from that address and
 * port, with that Identifier, the right Code and a Response Authenticator
 * that verifies against the request (tw_radius_dynauth_reply_check):
 * anything else is ignored and counted. One control command at a time
 * (the control thread): its requests, at most TW_SRV_DYNAUTH_BATCH, are
 * in flight together, each with its own Identifier.
 *
 * The store check (--dynauth-check-interval S): the control thread walks
 * the table, a bounded slice per 200 ms turn so that a pass takes about S
 * seconds, and disconnects the sessions whose subscriber is no longer in
 * the store or is disabled (whoever changed it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/hex.h"
#include "twag/nai.h"

#include "acct_srv.h"
#include "dynauth_srv.h"
#include "srv.h"

enum {
	WAYS = 4,
	USER_MAX = 128,
	NAS_ID_MAX = 64,
	STATION_MAX = 64,
	IMSI_MAX = 15,
	PER_TARGET_ACCT = 4,          /* accounting sessions of one Class */
	CHECK_IMSIS = 8,              /* subscribers a check turn may disconnect */
	CHECK_SETS_MAX = 256,         /* sets one check turn reads at most */
};

enum kind { K_DISCONNECT = 0, K_COA = 1, N_KIND };
enum outcome { O_ACK = 0, O_NAK, O_TIMEOUT, O_ERROR, N_OUTCOME, O_PENDING };
enum ignored { I_ADDRESS = 0, I_IDENTIFIER, I_AUTHENTICATOR, I_MALFORMED, N_IGNORED };

static const char *const kind_names[N_KIND] = { "disconnect", "coa" };
static const char *const outcome_names[N_OUTCOME] = { "ack", "nak", "timeout", "error" };
static const char *const ignored_names[N_IGNORED] = { "wrong-address", "wrong-identifier",
						      "bad-authenticator", "malformed" };

enum {
	E_NAS4 = 1u << 0,
	E_NAS6 = 1u << 1,
	E_NASID = 1u << 2,
	E_CALLING = 1u << 3,
	E_USER = 1u << 4,
};

/* One authorized session. */
struct authz {
	bool used;
	uint8_t flags;                /* E_* */
	uint8_t tok[TW_SRV_CLASS_TOKEN_LEN];
	char imsi[IMSI_MAX + 1];
	struct tw_srv_addr client;
	uint8_t nas4[4], nas6[16];
	uint8_t nas_id_len, calling_len, user_len;
	uint8_t nas_id[NAS_ID_MAX], calling[STATION_MAX], user[USER_MAX];
	uint64_t when_ms;             /* the Access-Accept (tw_srv_now_ms) */
};

struct set {
	atomic_flag lock;
	/* per way: its entry's when_ms + 1, 0 when free (the pick of a way
	 * reads this one cache line, not four entries) */
	uint64_t when[WAYS];
	struct authz e[WAYS];
};

/* One request of a command. */
struct req {
	enum kind kind;
	enum outcome outcome;
	struct tw_radius_dynauth_reply reply;
	struct sockaddr_storage to;
	socklen_t to_len;
	int fd;
	uint8_t id;
	uint8_t auth[16];
	struct tw_radius_secret secret;    /* the client's, copied: wiped after */
	size_t len;
	unsigned sent;
	uint64_t next_ms;
	/* for the result line, the log and the table */
	char session[TW_ACCT_ID_MAX + 1];
	char imsi[IMSI_MAX + 1];
	char client[48];
	uint8_t tok[TW_SRV_CLASS_TOKEN_LEN];
	bool has_tok;
	uint8_t pkt[TW_RADIUS_MAX_LEN];
};

struct tw_srv_dynauth {
	struct set *sets;
	uint32_t nsets;               /* a power of 2 */
	int fd4, fd6;
	uint8_t next_id;
	_Atomic uint64_t epoch_seen;
	_Atomic uint64_t sent[N_KIND][N_OUTCOME];
	_Atomic uint64_t ignored[N_IGNORED];
	_Atomic uint64_t noted, evicted, checks, check_gone, check_disabled;
	/* the store check */
	uint32_t check_cursor;
	uint64_t next_check_ms;
	/* one command's requests and scratch (the control thread's alone) */
	struct req reqs[TW_SRV_DYNAUTH_BATCH];
	unsigned nreq;
	struct tw_acct_session acct[TW_SRV_DYNAUTH_BATCH];
	struct authz found[TW_SRV_DYNAUTH_BATCH];
	uint8_t rx[TW_RADIUS_MAX_LEN + 1];
	struct tw_radius_pkt pkt;
};

static void add1(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- configuration ------------------------------------------------------------ */

static bool uint_of(const char *v, unsigned long min, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 || n < min || n > max)
		return false;
	*out = (unsigned)n;
	return true;
}

int tw_srv_dynauth_config(struct tw_srv_config *c, const char *name, const char *v,
			  const char *where, char *err, size_t err_len)
{
	static const struct {
		const char *name;
		unsigned long min, max;
		size_t off;
	} nums[] = {
		{ "dynauth-port", 1, 65535, offsetof(struct tw_srv_config, dynauth_port) },
		{ "dynauth-timeout-ms", 100, 30000,
		  offsetof(struct tw_srv_config, dynauth_timeout_ms) },
		{ "dynauth-retries", 0, 10, offsetof(struct tw_srv_config, dynauth_retries) },
		{ "dynauth-check-interval", 0, 86400,
		  offsetof(struct tw_srv_config, dynauth_check_interval) },
		{ "dynauth-max-sessions", TW_SRV_DYNAUTH_MIN, TW_SRV_DYNAUTH_MAX,
		  offsetof(struct tw_srv_config, dynauth_max_sessions) },
	};

	if (strcmp(name, "control-socket") == 0) {
		/* sockaddr_un's sun_path holds 107 octets and the NUL */
		if (*v == 0 || strlen(v) > 107 || strlen(v) >= sizeof(c->control_socket)) {
			snprintf(err, err_len, "%s: control-socket must be a path of 1..107 octets",
				 where);
			return TW_ERR_INVAL;
		}
		snprintf(c->control_socket, sizeof(c->control_socket), "%s", v);
		return TW_OK;
	}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(name, nums[i].name) != 0)
			continue;
		if (!uint_of(v, nums[i].min, nums[i].max, (unsigned *)((char *)c + nums[i].off))) {
			snprintf(err, err_len, "%s: %s must be an integer in %lu..%lu", where, name,
				 nums[i].min, nums[i].max);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	snprintf(err, err_len, "%s: unhandled option %s", where, name);
	return TW_ERR_INVAL;
}

/* ---- the table ------------------------------------------------------------------ */

static void set_lock(struct set *s)
{
	while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

static void set_unlock(struct set *s)
{
	atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

static struct set *set_of(struct tw_srv_dynauth *d, const uint8_t tok[TW_SRV_CLASS_TOKEN_LEN])
{
	/* the token is 8 random octets (worker.c): its low bits pick the set */
	return &d->sets[tw_load_le32(tok) & (d->nsets - 1)];
}

/*
 * The accepts of a worker's batch, noted into the table after the batch's
 * replies are sent (tw_srv_dynauth_flush): the table is large (tens of
 * MiB) and each insert touches a random set, so inserting one at a time
 * is a chain of cache misses on the reply path (measured: 9 % of twagd's
 * CPU under twag-load). Queued here, each set is prefetched when noted
 * and the chosen entry before it is written, so the misses of a batch
 * overlap. Per thread; never more than PEND_MAX waiting.
 */
enum { PEND_MAX = 32 };

static _Thread_local struct pend {
	struct tw_srv_dynauth *d;
	unsigned n;
	struct authz e[PEND_MAX];
} pend;

static void prefetch_set(struct set *s)
{
	__builtin_prefetch(&s->when[WAYS - 1], 1, 1);
}

/* The way of s a new entry takes: a free one, else the oldest. */
static unsigned pick_way(const struct set *s)
{
	unsigned pick = 0;

	for (unsigned i = 0; i < WAYS; i++) {
		if (s->when[i] == 0)
			return i;
		if (s->when[i] < s->when[pick])
			pick = i;
	}
	return pick;
}

void tw_srv_dynauth_flush(struct tw_srv *srv)
{
	struct tw_srv_dynauth *d = pend.d;

	(void)srv;
	if (pend.n == 0 || d == NULL)
		return;
	/* the entries to be written, prefetched for writing (a guess made
	 * without the lock: taken again under it) */
	for (unsigned k = 0; k < pend.n; k++) {
		struct set *s = set_of(d, pend.e[k].tok);
		const char *e = (const char *)&s->e[pick_way(s)];

		for (size_t off = 0; off < sizeof(struct authz); off += 64)
			__builtin_prefetch(e + off, 1, 1);
	}
	for (unsigned k = 0; k < pend.n; k++) {
		struct set *s = set_of(d, pend.e[k].tok);
		unsigned pick;

		set_lock(s);
		pick = pick_way(s);
		if (s->when[pick] != 0)
			add1(&d->evicted);
		s->e[pick] = pend.e[k];
		s->when[pick] = pend.e[k].when_ms + 1;
		set_unlock(s);
		add1(&d->noted);
	}
	tw_wipe(pend.e, pend.n * sizeof(pend.e[0]));
	pend.n = 0;
}

void tw_srv_dynauth_note_accept(struct tw_srv *srv, const struct tw_radius_pkt *req,
				const struct tw_srv_addr *client,
				const uint8_t tok[static TW_SRV_CLASS_TOKEN_LEN], const char *imsi,
				size_t imsi_len, const uint8_t *user, size_t user_len)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	struct authz *n;
	const struct tw_radius_attr *a;

	if (d == NULL || imsi_len == 0 || imsi_len > IMSI_MAX)
		return;
	if (pend.n > 0 && pend.d != d)
		tw_srv_dynauth_flush(srv); /* another server's (tests): its own table */
	if (pend.n == PEND_MAX)
		tw_srv_dynauth_flush(srv);
	pend.d = d;
	n = &pend.e[pend.n];
	prefetch_set(set_of(d, tok));
	memset(n, 0, offsetof(struct authz, nas_id));
	n->used = true;
	memcpy(n->tok, tok, sizeof(n->tok));
	memcpy(n->imsi, imsi, imsi_len);
	n->client = *client;
	n->when_ms = tw_srv_now_ms();
	if (user_len > 0 && user_len <= USER_MAX) {
		memcpy(n->user, user, user_len);
		n->user_len = (uint8_t)user_len;
		n->flags |= E_USER;
	}
	for (unsigned i = 0; i < req->n_attrs; i++) {
		a = &req->attrs[i];
		switch (a->type) {
		case TW_RADIUS_CALLING_STATION_ID:
			if (!(n->flags & E_CALLING) && a->len > 0 && a->len <= STATION_MAX) {
				memcpy(n->calling, tw_radius_value(req, a), a->len);
				n->calling_len = a->len;
				n->flags |= E_CALLING;
			}
			break;
		case TW_RADIUS_NAS_IP_ADDRESS:
			if (!(n->flags & E_NAS4) && a->len == 4) {
				memcpy(n->nas4, tw_radius_value(req, a), 4);
				n->flags |= E_NAS4;
			}
			break;
		case TW_RADIUS_NAS_IPV6_ADDRESS:
			if (!(n->flags & E_NAS6) && a->len == 16) {
				memcpy(n->nas6, tw_radius_value(req, a), 16);
				n->flags |= E_NAS6;
			}
			break;
		case TW_RADIUS_NAS_IDENTIFIER:
			if (!(n->flags & E_NASID) && a->len > 0 && a->len <= NAS_ID_MAX) {
				memcpy(n->nas_id, tw_radius_value(req, a), a->len);
				n->nas_id_len = a->len;
				n->flags |= E_NASID;
			}
			break;
		default:
			break;
		}
	}
	pend.n++;
}

/* The entry of token tok, copied; false when none. */
static bool find_tok(struct tw_srv_dynauth *d, const uint8_t tok[TW_SRV_CLASS_TOKEN_LEN],
		     struct authz *out)
{
	struct set *s = set_of(d, tok);
	bool found = false;

	set_lock(s);
	for (unsigned i = 0; i < WAYS && !found; i++)
		if (s->e[i].used && memcmp(s->e[i].tok, tok, TW_SRV_CLASS_TOKEN_LEN) == 0) {
			*out = s->e[i];
			found = true;
		}
	set_unlock(s);
	return found;
}

static void forget_tok(struct tw_srv_dynauth *d, const uint8_t tok[TW_SRV_CLASS_TOKEN_LEN])
{
	struct set *s = set_of(d, tok);

	set_lock(s);
	for (unsigned i = 0; i < WAYS; i++)
		if (s->e[i].used && memcmp(s->e[i].tok, tok, TW_SRV_CLASS_TOKEN_LEN) == 0) {
			s->e[i].used = false;
			s->when[i] = 0;
		}
	set_unlock(s);
}

/* The entries of imsi, newest first, at most max. */
static size_t find_imsi(struct tw_srv_dynauth *d, const char *imsi, struct authz *out,
			size_t max)
{
	size_t n = 0;

	for (uint32_t k = 0; k < d->nsets; k++) {
		struct set *s = &d->sets[k];

		set_lock(s);
		for (unsigned i = 0; i < WAYS; i++) {
			if (!s->e[i].used || strcmp(s->e[i].imsi, imsi) != 0)
				continue;
			if (n < max) {
				out[n++] = s->e[i];
			} else {
				/* full: the oldest kept gives way */
				size_t old = 0;

				for (size_t j = 1; j < n; j++)
					if (out[j].when_ms < out[old].when_ms)
						old = j;
				if (out[old].when_ms < s->e[i].when_ms)
					out[old] = s->e[i];
			}
		}
		set_unlock(s);
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && out[j].when_ms > out[j - 1].when_ms; j--) {
			struct authz t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Class "twag:" + 16 hex digits -> its token. */
static bool tok_of_class(const uint8_t *cls, size_t len, uint8_t tok[TW_SRV_CLASS_TOKEN_LEN])
{
	return len == 5 + 2 * TW_SRV_CLASS_TOKEN_LEN && memcmp(cls, "twag:", 5) == 0 &&
	       tw_hex_decode(tok, TW_SRV_CLASS_TOKEN_LEN, NULL, (const char *)cls + 5,
			     2 * TW_SRV_CLASS_TOKEN_LEN) == TW_OK;
}

static void class_of_tok(const uint8_t tok[TW_SRV_CLASS_TOKEN_LEN], uint8_t cls[21])
{
	char hex[2 * TW_SRV_CLASS_TOKEN_LEN + 1];

	tw_hex_encode(hex, tok, TW_SRV_CLASS_TOKEN_LEN);
	memcpy(cls, "twag:", 5);
	memcpy(cls + 5, hex, 2 * TW_SRV_CLASS_TOKEN_LEN);
}

/* ---- start and stop ---------------------------------------------------------------- */

int tw_srv_dynauth_open(struct tw_srv *srv, char *err, size_t err_len)
{
	struct tw_srv_dynauth *d = calloc(1, sizeof(*d));
	uint32_t want = (srv->cfg.dynauth_max_sessions + WAYS - 1) / WAYS, n = 1;

	srv->dynauth = d;
	if (d == NULL) {
		snprintf(err, err_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	d->fd4 = d->fd6 = -1;
	while (n < want)
		n <<= 1;
	d->nsets = n;
	/* huge pages where the kernel gives them (tw_table_alloc): each
	 * accept touches a random set, and with 4 KiB pages nearly every one
	 * missed the TLB; committed now, so the bound holds from the start */
	d->sets = tw_table_alloc(n, sizeof(*d->sets));
	if (d->sets == NULL || tw_table_populate(d->sets, n, sizeof(*d->sets)) != TW_OK) {
		snprintf(err, err_len, "dynauth table: out of memory (--dynauth-max-sessions)");
		return TW_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		atomic_flag_clear(&d->sets[i].lock);
	/* unbound: the kernel picks the source address towards each NAS */
	d->fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	d->fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->fd4 < 0 && d->fd6 < 0) {
		snprintf(err, err_len, "dynauth socket: %s", strerror(errno));
		return TW_ERR_IO;
	}
	if (getrandom(&d->next_id, 1, 0) != 1)
		d->next_id = 0;
	d->next_check_ms = tw_srv_mono_ms() + (uint64_t)srv->cfg.dynauth_check_interval * 1000;
	return TW_OK;
}

void tw_srv_dynauth_close(struct tw_srv *srv)
{
	struct tw_srv_dynauth *d = srv->dynauth;

	if (d == NULL)
		return;
	if (d->fd4 >= 0)
		close(d->fd4);
	if (d->fd6 >= 0)
		close(d->fd6);
	if (d->sets != NULL) {
		tw_wipe(d->sets, (size_t)d->nsets * sizeof(*d->sets));
		tw_table_free(d->sets, d->nsets, sizeof(*d->sets));
	}
	for (unsigned i = 0; i < TW_SRV_DYNAUTH_BATCH; i++)
		tw_radius_secret_wipe(&d->reqs[i].secret);
	free(d);
	srv->dynauth = NULL;
}

bool tw_srv_dynauth_moved_on(struct tw_srv *srv, uint64_t epoch)
{
	return srv->dynauth == NULL || srv->control == NULL ||
	       atomic_load(&srv->dynauth->epoch_seen) >= epoch;
}

/* ---- building a request ---------------------------------------------------------- */

/* What identifies one session to its NAS. */
struct target {
	struct tw_srv_addr client;
	const struct authz *az;               /* NULL: accounting only */
	const struct tw_acct_session *as;     /* NULL: authorization only */
};

/* The CoA's new attributes. */
struct coa_attrs {
	unsigned n;
	uint8_t type[TW_SRV_COA_MAX_ATTRS];
	uint8_t len[TW_SRV_COA_MAX_ATTRS];
	uint8_t val[TW_SRV_COA_MAX_ATTRS][253];
};

/* The request for t into the next slot, or false (the batch is full, no
 * client for the address, it does not fit). */
static bool add_request(struct tw_srv *srv, enum kind kind, const struct target *t,
			const struct coa_attrs *ca, char *why, size_t why_len)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	const struct tw_srv_client *cl;
	struct tw_radius_builder b;
	struct req *q;
	uint8_t zero[16] = { 0 };
	int rc;

	if (d->nreq >= TW_SRV_DYNAUTH_BATCH) {
		snprintf(why, why_len, "more than %d sessions", TW_SRV_DYNAUTH_BATCH);
		return false;
	}
	q = &d->reqs[d->nreq];
	memset(q->session, 0, sizeof(q->session));
	q->has_tok = false;
	q->imsi[0] = 0;
	q->kind = kind;
	q->outcome = O_PENDING;
	memset(&q->reply, 0, sizeof(q->reply));
	q->sent = 0;
	/* the client table of now (the epoch tells a reload it is in use) */
	atomic_store(&d->epoch_seen, atomic_load(&srv->epoch));
	cl = tw_srv_clients_find(atomic_load(&srv->clients), &t->client);
	tw_srv_addr_text(&t->client, q->client, sizeof(q->client));
	if (cl == NULL) {
		snprintf(why, why_len, "%s is no longer a client", q->client);
		return false;
	}
	q->secret = cl->key;
	memset(&q->to, 0, sizeof(q->to));
	if (t->client.family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&q->to;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, t->client.a, 4);
		s4->sin_port = htons((uint16_t)srv->cfg.dynauth_port);
		q->to_len = sizeof(*s4);
		q->fd = d->fd4;
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&q->to;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, t->client.a, 16);
		s6->sin6_port = htons((uint16_t)srv->cfg.dynauth_port);
		q->to_len = sizeof(*s6);
		q->fd = d->fd6;
	}
	if (q->fd < 0) {
		snprintf(why, why_len, "no socket of that address family");
		tw_radius_secret_wipe(&q->secret);
		return false;
	}
	q->id = d->next_id++;
	tw_radius_build_init(&b, q->pkt, sizeof(q->pkt),
			     kind == K_COA ? TW_RADIUS_COA_REQUEST : TW_RADIUS_DISCONNECT_REQUEST,
			     q->id, zero, true);
	/* RFC 5176 §3: the session identification attributes */
	if (t->az != NULL && (t->az->flags & E_USER))
		tw_radius_add(&b, TW_RADIUS_USER_NAME, t->az->user, t->az->user_len);
	if (t->as != NULL && t->as->r.key.id_len > 0) {
		tw_radius_add(&b, TW_RADIUS_ACCT_SESSION_ID, t->as->r.key.id, t->as->r.key.id_len);
		memcpy(q->session, t->as->r.key.id, t->as->r.key.id_len);
	}
	if (t->as != NULL && (t->as->r.flags & TW_ACCT_F_CALLING))
		tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, t->as->r.calling,
			      t->as->r.calling_len);
	else if (t->az != NULL && (t->az->flags & E_CALLING))
		tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, t->az->calling, t->az->calling_len);
	/* the NAS identification as the NAS sent it: the Access-Request's
	 * (all it had), else what names the accounting session */
	if (t->az != NULL) {
		if (t->az->flags & E_NAS4)
			tw_radius_add(&b, TW_RADIUS_NAS_IP_ADDRESS, t->az->nas4, 4);
		if (t->az->flags & E_NAS6)
			tw_radius_add(&b, TW_RADIUS_NAS_IPV6_ADDRESS, t->az->nas6, 16);
		if (t->az->flags & E_NASID)
			tw_radius_add(&b, TW_RADIUS_NAS_IDENTIFIER, t->az->nas_id,
				      t->az->nas_id_len);
		memcpy(q->imsi, t->az->imsi, sizeof(q->imsi));
		memcpy(q->tok, t->az->tok, sizeof(q->tok));
		q->has_tok = true;
	} else if (t->as != NULL) {
		const struct tw_acct_key *k = &t->as->r.key;

		if (k->nas_kind == TW_ACCT_NAS_IPV4)
			tw_radius_add(&b, TW_RADIUS_NAS_IP_ADDRESS, k->nas, 4);
		else if (k->nas_kind == TW_ACCT_NAS_IPV6)
			tw_radius_add(&b, TW_RADIUS_NAS_IPV6_ADDRESS, k->nas, 16);
		else if (k->nas_kind == TW_ACCT_NAS_IDENT)
			tw_radius_add(&b, TW_RADIUS_NAS_IDENTIFIER, k->nas, k->nas_len);
	}
	for (unsigned i = 0; ca != NULL && i < ca->n; i++)
		tw_radius_add(&b, ca->type[i], ca->val[i], ca->len[i]);
	rc = tw_radius_finish_dynauth_request_ctx(&b, &q->secret, &q->len);
	if (rc != TW_OK) {
		snprintf(why, why_len, "the request does not fit: %s", tw_strerror(rc));
		tw_radius_secret_wipe(&q->secret);
		return false;
	}
	memcpy(q->auth, q->pkt + 4, 16);
	d->nreq++;
	return true;
}

static void put_val(struct out *o, const char *key, const char *v);

/* add_request, or a result line saying why it could not be made. */
static void request_or_say(struct tw_srv *srv, struct out *o, enum kind kind,
			   const struct target *t, const struct coa_attrs *ca)
{
	char why[160] = "";

	if (!add_request(srv, kind, t, ca, why, sizeof(why))) {
		put(o, "result kind=%s outcome=error", kind_names[kind]);
		put_val(o, "why", why);
		put(o, "\n");
	}
}

/* ---- the exchange ----------------------------------------------------------------- */

static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	struct tw_srv_addr x, y;
	uint16_t px = 0, py = 0;

	return tw_srv_addr_from_sockaddr(&x, &px, (const struct sockaddr *)a) == TW_OK &&
	       tw_srv_addr_from_sockaddr(&y, &py, (const struct sockaddr *)b) == TW_OK &&
	       px == py && tw_srv_addr_eq(&x, &y);
}

/* A datagram on fd: the request it answers gets its outcome, anything
 * else is counted and ignored. */
static void take_reply(struct tw_srv_dynauth *d, int fd)
{
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, d->rx, sizeof(d->rx), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	bool addr_seen = false, id_seen = false;

	if (n < 0)
		return;
	if (n > TW_RADIUS_MAX_LEN || tw_radius_decode(&d->pkt, d->rx, (size_t)n) != TW_OK) {
		add1(&d->ignored[I_MALFORMED]);
		return;
	}
	for (unsigned i = 0; i < d->nreq; i++) {
		struct req *q = &d->reqs[i];
		int rc;

		if (q->fd != fd || !same_peer(&q->to, &from))
			continue;
		addr_seen = true;
		if (q->id != d->pkt.id)
			continue;
		id_seen = true;
		if (q->outcome != O_PENDING)
			continue; /* a late duplicate of an answer taken */
		rc = tw_radius_dynauth_reply_check(&d->pkt, q->pkt[0], q->id, q->auth, &q->secret,
						   &q->reply);
		if (rc == TW_OK) {
			q->outcome = q->reply.ack ? O_ACK : O_NAK;
			return;
		}
		add1(&d->ignored[rc == TW_ERR_AUTH ? I_AUTHENTICATOR
			       : rc == TW_ERR_NOTFOUND ? I_IDENTIFIER : I_MALFORMED]);
		return;
	}
	if (!addr_seen)
		add1(&d->ignored[I_ADDRESS]);
	else if (!id_seen)
		add1(&d->ignored[I_IDENTIFIER]);
}

/* Sends the batch and waits for its answers: each request sent again
 * unchanged every timeout, 1 + retries times in all. */
static void exchange(struct tw_srv *srv)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	uint64_t timeout = srv->cfg.dynauth_timeout_ms;

	for (;;) {
		uint64_t now = tw_srv_mono_ms(), wake = UINT64_MAX;
		struct pollfd pf[2] = { { d->fd4, POLLIN, 0 }, { d->fd6, POLLIN, 0 } };
		bool pending = false;

		for (unsigned i = 0; i < d->nreq; i++) {
			struct req *q = &d->reqs[i];

			if (q->outcome != O_PENDING)
				continue;
			if (q->sent > 0 && now >= q->next_ms &&
			    q->sent > srv->cfg.dynauth_retries) {
				q->outcome = O_TIMEOUT;
				continue;
			}
			if (q->sent == 0 || now >= q->next_ms) {
				ssize_t w = sendto(q->fd, q->pkt, q->len, MSG_DONTWAIT,
						   (struct sockaddr *)&q->to, q->to_len);

				if (w != (ssize_t)q->len && q->sent == 0 && errno != EAGAIN &&
				    errno != ENOBUFS) {
					q->outcome = O_ERROR;
					continue;
				}
				q->sent++;
				q->next_ms = now + timeout;
			}
			pending = true;
			if (q->next_ms < wake)
				wake = q->next_ms;
		}
		if (!pending || atomic_load(&srv->stop))
			break;
		if (poll(pf, 2, (int)(wake > now ? wake - now : 0)) > 0) {
			if (pf[0].revents & POLLIN)
				take_reply(d, d->fd4);
			if (pf[1].revents & POLLIN)
				take_reply(d, d->fd6);
		}
	}
	for (unsigned i = 0; i < d->nreq; i++)
		if (d->reqs[i].outcome == O_PENDING)
			d->reqs[i].outcome = O_TIMEOUT;
}

/* A value of a result line: percent-encoded as the protocol says. */
static void put_val(struct out *o, const char *key, const char *v)
{
	put(o, " %s=", key);
	if (*v == 0) {
		put(o, "-");
		return;
	}
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c <= 0x20 || c >= 0x7f || c == '%' || c == '=')
			put(o, "%%%02X", c);
		else
			put(o, "%c", c);
	}
}

/* The batch's results (one line each, logged, counted), the summary
 * line; forget: the entries of requests the NAS acknowledged (or whose
 * session it did not know) leave the table. */
static void report(struct tw_srv *srv, struct out *o, const char *why)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	unsigned cnt[N_OUTCOME] = { 0 };

	for (unsigned i = 0; i < d->nreq; i++) {
		struct req *q = &d->reqs[i];
		char imsi[TW_NAI_MASK_MAX] = "-", nas[80], sq[TW_ACCT_ID_MAX + 8], ec[96] = "";
		const char *ecn = q->reply.has_error_cause
					  ? tw_radius_error_cause_name(q->reply.error_cause)
					  : NULL;

		if (q->imsi[0] && tw_nai_mask_imsi(imsi, sizeof(imsi), q->imsi, strlen(q->imsi)) !=
				  TW_OK)
			snprintf(imsi, sizeof(imsi), "-");
		tw_srv_sockaddr_text(&q->to, nas, sizeof(nas));
		cnt[q->outcome]++;
		add1(&d->sent[q->kind][q->outcome]);
		put(o, "result kind=%s", kind_names[q->kind]);
		put_val(o, "session", q->session);
		put(o, " imsi=%s client=%s nas=%s outcome=%s", imsi, q->client, nas,
		    outcome_names[q->outcome]);
		if (q->reply.has_error_cause) {
			put(o, " error_cause=%u", q->reply.error_cause);
			put_val(o, "error_cause_name", ecn != NULL ? ecn : "unknown");
			snprintf(ec, sizeof(ec), " error_cause=%u(%s)", q->reply.error_cause,
				 ecn != NULL ? ecn : "unknown");
		}
		put(o, "\n");
		tw_log_quote(sq, sizeof(sq), q->session[0] ? q->session : "-");
		tw_log_always(NULL, q->outcome == O_ACK ? TW_LOG_INFO : TW_LOG_WARN, "dynauth",
			      "kind=%s outcome=%s imsi=%s session=%s nas=%s tries=%u%s why=%s",
			      kind_names[q->kind], outcome_names[q->outcome], imsi, sq, nas, q->sent,
			      ec, why);
		if (q->has_tok && (q->outcome == O_ACK ||
				   (q->outcome == O_NAK && q->reply.has_error_cause &&
				    q->reply.error_cause == TW_RADIUS_EC_SESSION_CONTEXT_NOT_FOUND)) &&
		    q->kind == K_DISCONNECT)
			forget_tok(d, q->tok);
		tw_radius_secret_wipe(&q->secret);
	}
	put(o, "ok sent=%u ack=%u nak=%u timeout=%u error=%u\n", d->nreq, cnt[O_ACK], cnt[O_NAK],
	    cnt[O_TIMEOUT], cnt[O_ERROR]);
	d->nreq = 0;
}

/* ---- finding the sessions ---------------------------------------------------------- */

static bool imsi_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 5 && n <= IMSI_MAX && strspn(s, "0123456789") == n;
}

/* The requests for the accounting sessions of Acct-Session-Id id. */
static int by_session(struct tw_srv *srv, struct out *o, enum kind kind, const char *id,
		      const struct coa_attrs *ca)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	size_t n;

	if (srv->acct == NULL) {
		put(o, "error accounting is off: sessions are known by IMSI only\n");
		return TW_ERR_STATE;
	}
	n = tw_srv_acct_find(srv, (const uint8_t *)id, strlen(id), d->acct, TW_SRV_DYNAUTH_BATCH);
	if (n == 0) {
		put(o, "error no such session\n");
		return TW_ERR_NOTFOUND;
	}
	for (size_t i = 0; i < n; i++) {
		struct target t = { d->acct[i].r.key.client, NULL, &d->acct[i] };
		uint8_t tok[TW_SRV_CLASS_TOKEN_LEN];

		if ((d->acct[i].r.flags & TW_ACCT_F_CLASS) &&
		    tok_of_class(d->acct[i].r.cls, d->acct[i].r.class_len, tok) &&
		    find_tok(d, tok, &d->found[i]) &&
		    tw_srv_addr_eq(&d->found[i].client, &d->acct[i].r.key.client))
			t.az = &d->found[i];
		request_or_say(srv, o, kind, &t, ca);
	}
	return TW_OK;
}

/* The requests for every session of imsi: its accounting sessions (found
 * by the Class of each authorization), and the authorizations that have
 * none, one per client and station (the newest). */
static int by_imsi(struct tw_srv *srv, struct out *o, enum kind kind, const char *imsi,
		   const struct coa_attrs *ca)
{
	static struct tw_acct_session as[PER_TARGET_ACCT];
	struct tw_srv_dynauth *d = srv->dynauth;
	size_t n = find_imsi(d, imsi, d->found, TW_SRV_DYNAUTH_BATCH), na = 0;

	if (n == 0) {
		put(o, "error no authorized session of that IMSI\n");
		return TW_ERR_NOTFOUND;
	}
	for (size_t i = 0; i < n; i++) {
		const struct authz *az = &d->found[i];
		uint8_t cls[21];
		size_t k;
		bool dup = false;

		class_of_tok(az->tok, cls);
		k = tw_srv_acct_find_class(srv, cls, sizeof(cls), as, PER_TARGET_ACCT);
		for (size_t j = 0; j < k && na < TW_SRV_DYNAUTH_BATCH; j++)
			if (tw_srv_addr_eq(&as[j].r.key.client, &az->client))
				d->acct[na++] = as[j];
		if (k > 0)
			continue;
		/* no accounting: an older authorization of the same station
		 * (a re-authentication) is the same session */
		for (size_t j = 0; j < i && !dup; j++)
			dup = tw_srv_addr_eq(&d->found[j].client, &az->client) &&
			      d->found[j].calling_len == az->calling_len &&
			      memcmp(d->found[j].calling, az->calling, az->calling_len) == 0;
		if (dup)
			continue;
		{
			struct target t = { az->client, az, NULL };

			request_or_say(srv, o, kind, &t, ca);
		}
	}
	for (size_t j = 0; j < na; j++) {
		struct target t = { d->acct[j].r.key.client, NULL, &d->acct[j] };
		uint8_t tok[TW_SRV_CLASS_TOKEN_LEN];

		/* the authorization of that Class, for User-Name and NAS ids */
		for (size_t i = 0; i < n; i++)
			if (tok_of_class(d->acct[j].r.cls, d->acct[j].r.class_len, tok) &&
			    memcmp(tok, d->found[i].tok, sizeof(tok)) == 0)
				t.az = &d->found[i];
		request_or_say(srv, o, kind, &t, ca);
	}
	return TW_OK;
}

static void run(struct tw_srv *srv, struct out *o, enum kind kind, const char *what,
		const char *arg, const struct coa_attrs *ca, const char *why)
{
	int rc;

	if (strcmp(what, "session") == 0) {
		rc = by_session(srv, o, kind, arg, ca);
	} else if (strcmp(what, "imsi") == 0) {
		if (!imsi_ok(arg)) {
			put(o, "error the IMSI must be 5 to 15 decimal digits\n");
			return;
		}
		rc = by_imsi(srv, o, kind, arg, ca);
	} else {
		put(o, "error expected session ID or imsi IMSI\n");
		return;
	}
	if (rc != TW_OK)
		return;
	exchange(srv);
	report(srv, o, why);
}

void tw_srv_dynauth_cmd_disconnect(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	(void)argc;
	run(srv, o, K_DISCONNECT, argv[0], argv[1], NULL, "admin");
}

void tw_srv_dynauth_cmd_coa(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	static struct coa_attrs ca; /* the control thread's */
	char err[160];

	memset(&ca, 0, sizeof(ca));
	for (int i = 2; i < argc; i++) {
		size_t len = 0;

		if (tw_srv_dynauth_parse_attr(argv[i], &ca.type[ca.n], ca.val[ca.n], &len, err,
					      sizeof(err)) != TW_OK) {
			put(o, "error %s\n", err);
			return;
		}
		ca.len[ca.n++] = (uint8_t)len;
	}
	run(srv, o, K_COA, argv[0], argv[1], &ca, "admin");
}

void tw_srv_dynauth_cmd_sessions(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	char imsi[TW_NAI_MASK_MAX];
	size_t n;

	(void)argc;
	if (strcmp(argv[0], "imsi") != 0 || !imsi_ok(argv[1])) {
		put(o, "error usage: sessions imsi IMSI (5 to 15 decimal digits)\n");
		return;
	}
	n = find_imsi(d, argv[1], d->found, TW_SRV_DYNAUTH_BATCH);
	if (tw_nai_mask_imsi(imsi, sizeof(imsi), argv[1], strlen(argv[1])) != TW_OK)
		snprintf(imsi, sizeof(imsi), "-");
	for (size_t i = 0; i < n; i++) {
		char cl[48], calling[STATION_MAX + 1], cls[21 + 1];
		uint64_t age = (tw_srv_now_ms() - d->found[i].when_ms) / 1000;

		tw_srv_addr_text(&d->found[i].client, cl, sizeof(cl));
		memcpy(calling, d->found[i].calling, d->found[i].calling_len);
		calling[d->found[i].calling_len] = 0;
		class_of_tok(d->found[i].tok, (uint8_t *)cls);
		cls[21] = 0;
		put(o, "result imsi=%s client=%s", imsi, cl);
		put_val(o, "calling_station_id", calling);
		put(o, " class=%s age=%llu\n", cls, (unsigned long long)age);
	}
	put(o, "ok sessions=%zu\n", n);
}

/* ---- the store check ------------------------------------------------------------------ */

void tw_srv_dynauth_tick(struct tw_srv *srv, uint64_t now_ms)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	char gone[CHECK_IMSIS][IMSI_MAX + 1];
	bool disabled[CHECK_IMSIS];
	unsigned ngone = 0, interval = srv->cfg.dynauth_check_interval;
	uint32_t nsets;

	if (d == NULL)
		return;
	atomic_store(&d->epoch_seen, atomic_load(&srv->epoch));
	if (interval == 0 || srv->store == NULL || now_ms < d->next_check_ms)
		return;
	/* a pass over the table in about interval s of 200 ms turns */
	nsets = (uint32_t)((uint64_t)d->nsets * 200 / ((uint64_t)interval * 1000)) + 1;
	if (nsets > CHECK_SETS_MAX)
		nsets = CHECK_SETS_MAX;
	for (uint32_t k = 0; k < nsets && ngone < CHECK_IMSIS; k++) {
		struct set *s = &d->sets[d->check_cursor];
		char imsis[WAYS][IMSI_MAX + 1];
		unsigned m = 0;

		set_lock(s);
		for (unsigned i = 0; i < WAYS; i++)
			if (s->e[i].used)
				memcpy(imsis[m++], s->e[i].imsi, IMSI_MAX + 1);
		set_unlock(s);
		/* the store outside the set's lock */
		for (unsigned i = 0; i < m && ngone < CHECK_IMSIS; i++) {
			struct tw_store_sub_info info;
			int rc = tw_store_sub_info(srv->store, imsis[i], &info);
			bool known = false;

			add1(&d->checks);
			if (rc != TW_OK && rc != TW_ERR_NOTFOUND)
				continue; /* cannot tell now: the next pass will */
			if (rc == TW_OK && !info.disabled)
				continue;
			for (unsigned j = 0; j < ngone && !known; j++)
				known = strcmp(gone[j], imsis[i]) == 0;
			if (known)
				continue;
			memcpy(gone[ngone], imsis[i], IMSI_MAX + 1);
			disabled[ngone++] = rc == TW_OK;
		}
		d->check_cursor = (d->check_cursor + 1) & (d->nsets - 1);
		if (d->check_cursor == 0) {
			/* a pass ended: the next begins interval s after it began */
			d->next_check_ms = now_ms + (uint64_t)interval * 1000;
			break;
		}
	}
	for (unsigned i = 0; i < ngone; i++) {
		char scratch[2048];
		struct out o = { scratch, sizeof(scratch), 0, false };
		struct authz *f = d->found;
		size_t n;

		add1(disabled[i] ? &d->check_disabled : &d->check_gone);
		run(srv, &o, K_DISCONNECT, "imsi", gone[i], NULL,
		    disabled[i] ? "subscriber-disabled" : "subscriber-removed");
		/* whatever the NAS said: asked once, not at every pass */
		n = find_imsi(d, gone[i], f, TW_SRV_DYNAUTH_BATCH);
		for (size_t j = 0; j < n; j++)
			forget_tok(d, f[j].tok);
	}
}

/* ---- metrics ------------------------------------------------------------------------- */

size_t tw_srv_dynauth_metrics(struct tw_srv *srv, char *buf, size_t max)
{
	struct tw_srv_dynauth *d = srv->dynauth;
	struct out o = { buf, max, 0, false };
	uint64_t live = 0;

	if (d == NULL || buf == NULL || max == 0)
		return 0;
	head(&o, "twag_dynauth_requests_total", "counter",
	     "Disconnect-Requests and CoA-Requests sent (RFC 5176), by kind and outcome");
	for (unsigned k = 0; k < N_KIND; k++)
		for (unsigned r = 0; r < N_OUTCOME; r++)
			put(&o, "twag_dynauth_requests_total{kind=\"%s\",result=\"%s\"} %llu\n",
			    kind_names[k], outcome_names[r],
			    (unsigned long long)atomic_load(&d->sent[k][r]));
	head(&o, "twag_dynauth_replies_ignored_total", "counter",
	     "Datagrams on the dynamic authorization sockets that answered no request, by reason");
	for (unsigned i = 0; i < N_IGNORED; i++)
		put(&o, "twag_dynauth_replies_ignored_total{reason=\"%s\"} %llu\n", ignored_names[i],
		    (unsigned long long)atomic_load(&d->ignored[i]));
	for (uint32_t k = 0; k < d->nsets; k++)
		for (unsigned i = 0; i < WAYS; i++)
			live += d->sets[k].e[i].used; /* a gauge: a racy read is fine */
	{
		const struct {
			const char *name, *type, *help;
			uint64_t v;
		} ms[] = {
			{ "twag_dynauth_sessions", "gauge",
			  "Authorized sessions kept for dynamic authorization", live },
			{ "twag_dynauth_sessions_max", "gauge",
			  "Their table's capacity (--dynauth-max-sessions, rounded up)",
			  (uint64_t)d->nsets * WAYS },
			{ "twag_dynauth_sessions_noted_total", "counter",
			  "Access-Accepts whose session was kept", atomic_load(&d->noted) },
			{ "twag_dynauth_sessions_evicted_total", "counter",
			  "Authorized sessions evicted (the oldest of a full set)",
			  atomic_load(&d->evicted) },
			{ "twag_dynauth_store_checks_total", "counter",
			  "Authorized sessions checked against the store", atomic_load(&d->checks) },
			{ "twag_dynauth_subscribers_removed_total", "counter",
			  "Subscribers found gone from the store by the check",
			  atomic_load(&d->check_gone) },
			{ "twag_dynauth_subscribers_disabled_total", "counter",
			  "Subscribers found disabled by the check", atomic_load(&d->check_disabled) },
		};

		for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
			head(&o, ms[i].name, ms[i].type, ms[i].help);
			put(&o, "%s %llu\n", ms[i].name, (unsigned long long)ms[i].v);
		}
	}
	return o.overflow ? 0 : o.len;
}

/* ---- CoA attributes ---------------------------------------------------------------------- */

int tw_srv_dynauth_parse_attr(const char *text, uint8_t *type, uint8_t val[253], size_t *len,
			      char *err, size_t err_len)
{
	static const struct {
		const char *name;
		uint8_t type;
		bool text;
	} named[] = {
		{ "Session-Timeout", TW_RADIUS_SESSION_TIMEOUT, false },
		{ "Idle-Timeout", TW_RADIUS_IDLE_TIMEOUT, false },
		{ "Acct-Interim-Interval", TW_RADIUS_ACCT_INTERIM_INTERVAL, false },
		{ "Filter-Id", TW_RADIUS_FILTER_ID, true },
	};
	const char *eq = strchr(text, '=');
	const char *v;
	size_t nl;

	*len = 0;
	*type = 0;
	if (eq == NULL || eq == text) {
		snprintf(err, err_len, "attribute must be NAME=VALUE or TYPE=HEX");
		return TW_ERR_INVAL;
	}
	nl = (size_t)(eq - text);
	v = eq + 1;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		unsigned n;

		if (strlen(named[i].name) != nl || strncasecmp(text, named[i].name, nl) != 0)
			continue;
		*type = named[i].type;
		if (named[i].text) {
			size_t l = strlen(v);

			if (l == 0 || l > 253) {
				snprintf(err, err_len, "%s must be 1..253 octets", named[i].name);
				return TW_ERR_INVAL;
			}
			memcpy(val, v, l);
			*len = l;
			return TW_OK;
		}
		if (!uint_of(v, 0, 0xffffffffUL, &n)) {
			snprintf(err, err_len, "%s must be an integer in 0..4294967295",
				 named[i].name);
			return TW_ERR_INVAL;
		}
		tw_store_be32(val, n);
		*len = 4;
		return TW_OK;
	}
	{
		unsigned t;
		char tn[8];
		size_t hl = strlen(v);

		if (nl >= sizeof(tn)) {
			snprintf(err, err_len, "unknown attribute (Session-Timeout, Idle-Timeout, "
					       "Acct-Interim-Interval, Filter-Id or TYPE=HEX)");
			return TW_ERR_INVAL;
		}
		memcpy(tn, text, nl);
		tn[nl] = 0;
		if (!uint_of(tn, 1, 255, &t)) {
			snprintf(err, err_len, "unknown attribute (Session-Timeout, Idle-Timeout, "
					       "Acct-Interim-Interval, Filter-Id or TYPE=HEX)");
			return TW_ERR_INVAL;
		}
		/* the ones twagd sets itself, and what a CoA must not carry */
		if (t == TW_RADIUS_EAP_MESSAGE || t == TW_RADIUS_MESSAGE_AUTHENTICATOR ||
		    t == TW_RADIUS_USER_NAME || t == TW_RADIUS_ACCT_SESSION_ID ||
		    t == TW_RADIUS_CALLING_STATION_ID || t == TW_RADIUS_NAS_IP_ADDRESS ||
		    t == TW_RADIUS_NAS_IPV6_ADDRESS || t == TW_RADIUS_NAS_IDENTIFIER) {
			snprintf(err, err_len, "attribute %u is set by twagd or not allowed in a CoA",
				 t);
			return TW_ERR_INVAL;
		}
		if (hl % 2 != 0 || hl / 2 > 253 ||
		    (hl > 0 && tw_hex_decode(val, 253, len, v, hl) != TW_OK)) {
			snprintf(err, err_len, "attribute %u: the value must be 0..253 octets of hex",
				 t);
			*len = 0;
			return TW_ERR_INVAL;
		}
		*type = (uint8_t)t;
		return TW_OK;
	}
}
