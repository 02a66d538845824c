/*
 * twag — twagd's RADIUS accounting server (RFC 2866, June 2000; RFC 2869,
 * June 2000, §5.1-§5.3; RFC 5080, December 2007, §2.2.2; RFC 3579,
 * September 2003, §3.2) on its own UDP socket and thread.
 *
 * Order of checks for each datagram, as on the authentication port:
 *   1. source address not a configured client: drop, count;
 *   2. strict decode (tw_radius_decode): drop, count malformed;
 *   3. Code not Accounting-Request: drop, count;
 *   4. Request Authenticator (RFC 2866 §3: "silently discarded" when it
 *      does not verify) and the Message-Authenticator when present, both
 *      in constant time: drop, count; a forged request creates no state;
 *   5. duplicate cache (RFC 5080 §2.2.2): a retransmission gets the same
 *      Accounting-Response octet for octet and is not counted again;
 *   6. the record (Acct-Status-Type required) is kept in the session
 *      table, and only then answered (RFC 2866 §2: "upon receipt ... the
 *      server will generate an Accounting-Response if it has successfully
 *      recorded the accounting packet").
 * The Accounting-Response carries no attribute (RFC 2866 §4.2) and no
 * Message-Authenticator: FreeRADIUS computes one over a zero
 * Authenticator field, hostapd over the request's, so either client would
 * drop ours; the Response Authenticator authenticates the reply.
 *
 * One thread: accounting is a few requests per session per
 * Acct-Interim-Interval, far below the authentication rate. The table is
 * shared with the metrics thread (/sessions), under its mutex.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/hex.h"

#include "acct_db.h"
#include "acct_srv.h"
#include "srv.h"
#include "textout.h"

enum {
	C_REQ = 0,            /* + status index: ACCT_N_STATUS counters */
	C_RESPONSES = 6,
	C_DUPLICATES,
	C_DROP_UNKNOWN_CLIENT,
	C_DROP_MALFORMED,
	C_DROP_UNKNOWN_CODE,
	C_DROP_BAD_AUTH,
	C_DROP_BAD_MSG_AUTH,
	C_DROP_MISSING,
	C_DROP_TOO_LONG,
	C_DROP_STORE,
	C_COUNT,
	ACCT_N_STATUS = 6,
	LIST_CHUNK = 64,      /* sessions copied per table lock hold */
	SHOW_MAX = 16,        /* sessions one /sessions/ID shows */
	HTTP_BUF = 32 * 1024,
};

static const char *const status_names[ACCT_N_STATUS] = {
	"start", "stop", "interim-update", "accounting-on", "accounting-off", "other",
};

static const struct {
	unsigned c;
	const char *reason;
} drop_reasons[] = {
	{ C_DROP_UNKNOWN_CLIENT, "unknown-client" },
	{ C_DROP_MALFORMED, "malformed" },
	{ C_DROP_UNKNOWN_CODE, "unknown-code" },
	{ C_DROP_BAD_AUTH, "bad-authenticator" },
	{ C_DROP_BAD_MSG_AUTH, "bad-message-authenticator" },
	{ C_DROP_MISSING, "missing-attribute" },
	{ C_DROP_TOO_LONG, "too-long" },
	{ C_DROP_STORE, "not-recorded" },
};

struct tw_srv_acct {
	struct tw_srv *srv;
	int fd;
	bool pktinfo;
	pthread_t thread;
	bool started;
	_Atomic uint64_t epoch_seen;
	struct tw_acct_table table;
	struct tw_srv_dup dup;
	_Atomic uint64_t ctr[C_COUNT];
	char addr_text[80];
	struct tw_log_buf log;
	struct tw_radius_pkt pkt;
	struct tw_acct_record rec;
	struct tw_acct_db *db;          /* --acct-db (acct_db.c), NULL: memory only */
	pthread_mutex_t db_lock;        /* record(): the table step and db in turn */
	uint64_t last_db_log_ms;        /* rate limit of event=acct-db-error */
	uint8_t rx[TW_RADIUS_MAX_LEN + 1];
	uint8_t tx[TW_RADIUS_MAX_LEN];
	uint8_t cmsg[128] __attribute__((aligned(8)));
	uint8_t tx_cmsg[128] __attribute__((aligned(8)));
};

static void count(struct tw_srv_acct *a, unsigned c)
{
	/* two writers (this thread and RadSec's, tw_srv_acct_stream): an
	 * atomic add, a few per session per interim interval */
	atomic_fetch_add_explicit(&a->ctr[c], 1, memory_order_relaxed);
}

static unsigned status_index(uint32_t st)
{
	switch (st) {
	case TW_RADIUS_ACCT_START:
		return 0;
	case TW_RADIUS_ACCT_STOP:
		return 1;
	case TW_RADIUS_ACCT_INTERIM_UPDATE:
		return 2;
	case TW_RADIUS_ACCT_ON:
		return 3;
	case TW_RADIUS_ACCT_OFF:
		return 4;
	default:
		return 5;
	}
}

static uint64_t unix_now(void)
{
	return (uint64_t)time(NULL);
}

/* ---- configuration -------------------------------------------------------- */

int tw_srv_acct_config(struct tw_srv_config *c, const char *name, const char *v,
		       const char *where, char *err, size_t err_len)
{
	if (strcmp(name, "acct-listen") == 0) {
		struct sockaddr_storage ss;
		socklen_t sl;

		if (strcmp(v, "off") != 0 &&
		    (tw_srv_sockaddr_parse(&ss, &sl, v, TW_ACCT_DEFAULT_PORT) != TW_OK ||
		     strlen(v) >= sizeof(c->acct_listen))) {
			snprintf(err, err_len, "%s: acct-listen must be IP:PORT, [IPv6]:PORT or off",
				 where);
			return TW_ERR_INVAL;
		}
		snprintf(c->acct_listen, sizeof(c->acct_listen), "%s", v);
		return TW_OK;
	}
	if (strcmp(name, "acct-db") == 0) {
		if (*v == 0 || strlen(v) >= sizeof(c->acct_db)) {
			snprintf(err, err_len, "%s: acct-db must be a file path or off", where);
			return TW_ERR_INVAL;
		}
		snprintf(c->acct_db, sizeof(c->acct_db), "%s", v);
		return TW_OK;
	}
	if (strcmp(name, "acct-interim-interval") == 0) {
		/* RFC 2869 §5.16: SHOULD NOT be under 60 s; 0 sends none */
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 ||
		    (n != 0 && (n < 60 || n > 86400))) {
			snprintf(err, err_len,
				 "%s: acct-interim-interval must be 0 or 60..86400 (RFC 2869 §5.16)",
				 where);
			return TW_ERR_INVAL;
		}
		c->acct_interim_interval = (unsigned)n;
		return TW_OK;
	}
	if (strcmp(name, "acct-max-sessions") == 0 || strcmp(name, "acct-history-days") == 0) {
		bool days = name[5] == 'h';
		unsigned long lo = days ? 0 : TW_ACCT_MIN_SESSIONS,
			      hi = days ? TW_ACCT_MAX_HISTORY_DAYS : TW_ACCT_MAX_SESSIONS;
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 || n < lo ||
		    n > hi) {
			snprintf(err, err_len, "%s: %s must be an integer in %lu..%lu", where, name,
				 lo, hi);
			return TW_ERR_INVAL;
		}
		if (days)
			c->acct_history_days = (unsigned)n;
		else
			c->acct_max_sessions = (unsigned)n;
		return TW_OK;
	}
	if (strcmp(name, "acct-max-sessions") == 0) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 ||
		    n < TW_ACCT_MIN_SESSIONS || n > TW_ACCT_MAX_SESSIONS) {
			snprintf(err, err_len, "%s: acct-max-sessions must be an integer in %d..%d",
				 where, TW_ACCT_MIN_SESSIONS, TW_ACCT_MAX_SESSIONS);
			return TW_ERR_INVAL;
		}
		c->acct_max_sessions = (unsigned)n;
		return TW_OK;
	}
	snprintf(err, err_len, "%s: unhandled option %s", where, name);
	return TW_ERR_INVAL;
}

/* ---- start and stop --------------------------------------------------------- */

static void acct_free(struct tw_srv_acct *a)
{
	if (a == NULL)
		return;
	if (a->fd >= 0)
		close(a->fd);
	tw_acct_db_close(a->db);
	pthread_mutex_destroy(&a->db_lock);
	tw_acct_table_free(&a->table);
	tw_srv_dup_free(&a->dup);
	free(a);
}

int tw_srv_acct_open(struct tw_srv *srv, char *err, size_t err_len)
{
	const struct tw_srv_config *c = &srv->cfg;
	struct sockaddr_storage ss;
	socklen_t sl;
	struct timeval tv = { 0, 200 * 1000 };
	bool dflt = c->acct_listen[0] == 0;
	struct tw_srv_acct *a;
	uint8_t seed[32];
	int rc, one = 1;

	srv->acct = NULL;
	if (strcmp(c->acct_listen, "off") == 0)
		return TW_OK;
	if (dflt) {
		/* the RADIUS address, port 1813 (RFC 2866 §3); a kernel-chosen
		 * port stays kernel-chosen */
		struct sockaddr_storage want;
		socklen_t wl;
		bool port0;

		ss = srv->listen_addr;
		sl = srv->listen_len;
		port0 = tw_srv_sockaddr_parse(&want, &wl, c->listen, TW_SRV_DEFAULT_PORT) == TW_OK &&
			(want.ss_family == AF_INET ? ((struct sockaddr_in *)&want)->sin_port
						   : ((struct sockaddr_in6 *)&want)->sin6_port) == 0;
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = port0 ? 0 : htons(TW_ACCT_DEFAULT_PORT);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port =
				port0 ? 0 : htons(TW_ACCT_DEFAULT_PORT);
	} else if (tw_srv_sockaddr_parse(&ss, &sl, c->acct_listen, TW_ACCT_DEFAULT_PORT) != TW_OK) {
		snprintf(err, err_len, "--acct-listen: bad address");
		return TW_ERR_INVAL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, err_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	a->srv = srv;
	pthread_mutex_init(&a->db_lock, NULL);
	a->fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		snprintf(err, err_len, "socket: %s", strerror(errno));
		acct_free(a);
		return TW_ERR_IO;
	}
	/* no SO_REUSEPORT: another process must not share this port */
	(void)setsockopt(a->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (ss.ss_family == AF_INET)
		a->pktinfo = ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	else
		a->pktinfo = tw_ct_is_zero(&((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	if (a->pktinfo) {
		if (ss.ss_family == AF_INET6)
			(void)setsockopt(a->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		(void)setsockopt(a->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	if (bind(a->fd, (struct sockaddr *)&ss, sl) != 0 ||
	    getsockname(a->fd, (struct sockaddr *)&ss, &sl) != 0) {
		char where[80];

		tw_srv_sockaddr_text(&ss, where, sizeof(where));
		snprintf(err, err_len, "bind %s: %s", where, strerror(errno));
		acct_free(a);
		if (dflt) {
			char msg[300];

			tw_log_quote(msg, sizeof(msg), err);
			tw_log_always(NULL, TW_LOG_WARN, "acct-off",
				      "msg=%s hint=\"set --acct-listen IP:PORT or off\"", msg);
			return TW_OK;
		}
		return TW_ERR_IO;
	}
	tw_srv_sockaddr_text(&ss, a->addr_text, sizeof(a->addr_text));
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
		snprintf(err, err_len, "getrandom failed");
		acct_free(a);
		return TW_ERR_IO;
	}
	rc = tw_acct_table_init(&a->table, c->acct_max_sessions, seed);
	if (rc == TW_OK)
		rc = tw_srv_dup_init(&a->dup, c->dup_entries, c->dup_expiry, seed + 16);
	tw_wipe(seed, sizeof(seed));
	if (rc != TW_OK) {
		snprintf(err, err_len, "accounting tables: %s", tw_strerror(rc));
		acct_free(a);
		return rc;
	}
	srv->acct = a;
	return TW_OK;
}

/* ---- one request -------------------------------------------------------------- */

#define LOGA(a, lvl, ...)                                                     \
	do {                                                                  \
		if (tw_log_enabled(lvl))                                      \
			tw_logf(&(a)->log, (lvl), __VA_ARGS__);               \
	} while (0)

static void drop(struct tw_srv_acct *a, unsigned c, const char *reason,
		 const struct tw_srv_addr *from)
{
	char ip[48];

	count(a, c);
	if (tw_log_enabled(TW_LOG_DEBUG)) {
		tw_srv_addr_text(from, ip, sizeof(ip));
		tw_logf(&a->log, TW_LOG_DEBUG, "drop", "port=acct reason=%s client=%s", reason, ip);
	}
}

/* The session id as a log value (quoted, control characters replaced). */
static void id_text(char *out, size_t max, const struct tw_acct_key *k)
{
	char raw[TW_ACCT_ID_MAX + 1];

	memcpy(raw, k->id, k->id_len);
	raw[k->id_len] = 0;
	for (size_t i = 0; i < k->id_len; i++)
		if (raw[i] == 0)
			raw[i] = '?';
	tw_log_quote(out, max, raw);
}

/* The Accounting-Response (RFC 2866 §4.2), or 0. */
/*
 * A parsed request into the table and (--acct-db) onto disk, in one
 * transaction: false when it could not be recorded (RFC 2866 §2: then it
 * is not answered; the NAS retransmits). The accounting thread and the
 * RadSec thread both record: the file's connection is taken in turn.
 */
static bool record(struct tw_srv_acct *a, const struct tw_acct_record *r, unsigned *ended,
		   struct tw_log_buf *log, uint64_t now_ms)
{
	struct tw_acct_change ch;
	enum tw_acct_result res;
	bool ok = true;

	pthread_mutex_lock(&a->db_lock);
	res = tw_acct_table_apply_ex(&a->table, r, unix_now(), ended, &ch);
	if (a->db != NULL && tw_acct_db_record(a->db, r, res, &ch, unix_now(),
					       a->srv->cfg.acct_history_days) != TW_OK) {
		ok = false;
		count(a, C_DROP_STORE);
		if (now_ms - a->last_db_log_ms >= 1000 || a->last_db_log_ms == 0) {
			a->last_db_log_ms = now_ms;
			tw_logf(log, TW_LOG_ERROR, "acct-db-error",
				"msg=\"request not recorded, not answered (the NAS retransmits)\"");
		}
	}
	pthread_mutex_unlock(&a->db_lock);
	tw_wipe(&ch, sizeof(ch));
	return ok;
}

static size_t handle(struct tw_srv_acct *a, size_t len, const struct sockaddr *from,
		     uint64_t now_ms)
{
	struct tw_srv_addr addr;
	const struct tw_srv_client *client;
	struct tw_radius_pkt *p = &a->pkt;
	struct tw_srv_dup_entry *e = NULL;
	struct tw_radius_builder b;
	bool ra_ok, ma_ok;
	uint16_t port;
	uint64_t h;
	size_t n = 0;
	unsigned ended = 0;
	int rc;

	if (tw_srv_addr_from_sockaddr(&addr, &port, from) != TW_OK)
		return 0;
	client = tw_srv_clients_find(atomic_load(&a->srv->clients), &addr);
	if (client == NULL) {
		drop(a, C_DROP_UNKNOWN_CLIENT, "unknown-client", &addr);
		return 0;
	}
	if (len > TW_RADIUS_MAX_LEN || tw_radius_decode(p, a->rx, len) != TW_OK) {
		drop(a, C_DROP_MALFORMED, "malformed", &addr);
		return 0;
	}
	if (p->code != TW_RADIUS_ACCOUNTING_REQUEST) {
		drop(a, C_DROP_UNKNOWN_CODE, "unknown-code", &addr);
		return 0;
	}
	/* both computed whatever the first says */
	ra_ok = tw_radius_acct_authenticator_ok(p, &client->key);
	ma_ok = tw_radius_acct_msg_auth_ok(p, &client->key);
	if (!ra_ok) {
		drop(a, C_DROP_BAD_AUTH, "bad-authenticator", &addr);
		return 0;
	}
	if (!ma_ok) {
		drop(a, C_DROP_BAD_MSG_AUTH, "bad-message-authenticator", &addr);
		return 0;
	}
	h = tw_srv_dup_hash(&a->dup, &addr, port, p->id, p->authenticator);
	switch (tw_srv_dup_lookup(&a->dup, h, &addr, port, p->id, p->authenticator, now_ms, &e)) {
	case TW_SRV_DUP_REPLAY:
		count(a, C_DUPLICATES);
		memcpy(a->tx, tw_srv_dup_reply(&a->dup, e), e->reply_len);
		LOGA(a, TW_LOG_DEBUG, "duplicate", "port=acct id=%u", p->id);
		return e->reply_len;
	case TW_SRV_DUP_PENDING: /* one thread: not reached */
		count(a, C_DUPLICATES);
		return 0;
	case TW_SRV_DUP_NEW:
		break;
	}
	rc = tw_acct_record_parse(&a->rec, p, &addr, unix_now());
	if (rc != TW_OK) {
		tw_srv_dup_forget(&a->dup, e);
		if (rc == TW_ERR_NOTFOUND)
			drop(a, C_DROP_MISSING, "missing-attribute", &addr);
		else if (rc == TW_ERR_LENGTH)
			drop(a, C_DROP_TOO_LONG, "too-long", &addr);
		else
			drop(a, C_DROP_MALFORMED, "malformed", &addr);
		return 0;
	}
	count(a, C_REQ + status_index(a->rec.status));
	if (!record(a, &a->rec, &ended, &a->log, now_ms)) {
		tw_srv_dup_forget(&a->dup, e);
		return 0;
	}
	if (tw_log_enabled(TW_LOG_DEBUG)) {
		char ip[48], id[TW_ACCT_ID_MAX + 8];

		tw_srv_addr_text(&addr, ip, sizeof(ip));
		id_text(id, sizeof(id), &a->rec.key);
		tw_logf(&a->log, TW_LOG_DEBUG, "acct", "status=%s session=%s user=%s ended=%u client=%s",
			tw_acct_status_name(a->rec.status), a->rec.key.id_len ? id : "-",
			a->rec.user[0] ? a->rec.user : "-", ended, ip);
	}
	/* RFC 2866 §3: Response Authenticator = MD5(Code | ID | Length |
	 * RequestAuth | Attributes | Secret) */
	tw_radius_build_init(&b, a->tx, sizeof(a->tx), TW_RADIUS_ACCOUNTING_RESPONSE, p->id,
			     p->authenticator, false);
	if (tw_radius_finish_response_ctx(&b, &client->key, &n) != TW_OK) {
		tw_srv_dup_forget(&a->dup, e);
		LOGA(a, TW_LOG_ERROR, "internal-error", "what=build-acct-response");
		return 0;
	}
	tw_srv_dup_done(&a->dup, e, a->tx, n, now_ms);
	return n;
}

/* --debug-client: the request from a debug client and its response (n
 * octets, 0: discarded) in the log, as for authentication (debug.c). */
static void debug_exchange(struct tw_srv_acct *a, size_t got, const struct sockaddr *from,
			   size_t n)
{
	struct tw_srv_addr addr;
	char ip[INET6_ADDRSTRLEN];

	if (atomic_load_explicit(&a->srv->debug.on, memory_order_relaxed) == 0 ||
	    tw_srv_addr_from_sockaddr(&addr, NULL, from) != TW_OK ||
	    !tw_srv_debug_match(&a->srv->debug, &addr, NULL, 0))
		return;
	tw_srv_addr_text(&addr, ip, sizeof(ip));
	tw_srv_debug_dump(&a->log, "in", ip, a->rx, got);
	if (n > 0)
		tw_srv_debug_dump(&a->log, "out", ip, a->tx, n);
	else
		tw_log_always(&a->log, TW_LOG_DEBUG, "debug-packet",
			      "dir=out client=%s msg=\"no reply (silently discarded)\"", ip);
}

size_t tw_srv_acct_stream(struct tw_srv *srv, const struct tw_srv_client *client,
			  const struct tw_srv_addr *from, const uint8_t *in, size_t len, bool v11,
			  uint8_t out[static TW_RADIUS_MAX_LEN])
{
	struct tw_srv_acct *a = srv->acct;
	struct tw_radius_pkt p;
	struct tw_acct_record rec;
	struct tw_radius_builder b;
	unsigned ended = 0;
	size_t n = 0;
	int rc;

	/* steps 2-4 and 6 of the datagram path (the header comment); no
	 * duplicate cache: a stream has no retransmissions (RFC 6613 §2.6.1) */
	if (a == NULL || client == NULL)
		return 0;
	if (len > TW_RADIUS_MAX_LEN || tw_radius_decode(&p, in, len) != TW_OK ||
	    p.code != TW_RADIUS_ACCOUNTING_REQUEST) {
		count(a, C_DROP_MALFORMED);
		return 0;
	}
	/* RADIUS/1.1 (RFC 9765 §4): the Authenticator field is a Token, TLS
	 * authenticates the packet, a Message-Authenticator is ignored */
	if (!v11 && !tw_radius_acct_authenticator_ok(&p, &client->key)) {
		count(a, C_DROP_BAD_AUTH);
		return 0;
	}
	if (!v11 && !tw_radius_acct_msg_auth_ok(&p, &client->key)) {
		count(a, C_DROP_BAD_MSG_AUTH);
		return 0;
	}
	rc = tw_acct_record_parse(&rec, &p, from, unix_now());
	if (rc != TW_OK) {
		count(a, rc == TW_ERR_NOTFOUND ? C_DROP_MISSING
			 : rc == TW_ERR_LENGTH ? C_DROP_TOO_LONG : C_DROP_MALFORMED);
		return 0;
	}
	count(a, C_REQ + status_index(rec.status));
	if (!record(a, &rec, &ended, NULL, tw_srv_now_ms()))
		return 0;
	tw_radius_build_init(&b, out, TW_RADIUS_MAX_LEN, TW_RADIUS_ACCOUNTING_RESPONSE, p.id,
			     p.authenticator, false);
	if ((v11 ? tw_radius_finish_v11(&b, p.authenticator, &n)
		 : tw_radius_finish_response_ctx(&b, &client->key, &n)) != TW_OK)
		return 0;
	count(a, C_RESPONSES);
	return n;
}

static void *acct_run(void *arg)
{
	struct tw_srv_acct *a = arg;
	struct tw_srv *srv = a->srv;

	while (!atomic_load_explicit(&srv->stop, memory_order_relaxed)) {
		struct sockaddr_storage from;
		struct iovec iov = { a->rx, sizeof(a->rx) };
		struct msghdr m;
		ssize_t got;
		size_t n;

		/* the client table of this datagram; the epoch tells a
		 * SIGHUP reload that the previous one is no longer used */
		atomic_store(&a->epoch_seen, atomic_load(&srv->epoch));
		memset(&m, 0, sizeof(m));
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = a->cmsg;
		m.msg_controllen = sizeof(a->cmsg);
		got = recvmsg(a->fd, &m, 0);
		if (got < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				tw_logf(NULL, TW_LOG_ERROR, "socket-error", "op=recvmsg port=acct errno=%d",
					errno);
			continue;
		}
		if ((m.msg_flags & MSG_TRUNC) != 0) {
			count(a, C_DROP_MALFORMED);
			continue;
		}
		n = handle(a, (size_t)got, (const struct sockaddr *)&from, tw_srv_now_ms());
		debug_exchange(a, (size_t)got, (const struct sockaddr *)&from, n);
		if (n > 0) {
			struct iovec out = { a->tx, n };
			struct msghdr r;

			memset(&r, 0, sizeof(r));
			r.msg_name = &from;
			r.msg_namelen = m.msg_namelen;
			r.msg_iov = &out;
			r.msg_iovlen = 1;
			if (a->pktinfo) {
				size_t cl = tw_srv_reply_cmsg(&m, a->tx_cmsg, sizeof(a->tx_cmsg));

				if (cl > 0) {
					r.msg_control = a->tx_cmsg;
					r.msg_controllen = cl;
				}
			}
			if (sendmsg(a->fd, &r, MSG_DONTWAIT) == (ssize_t)n)
				count(a, C_RESPONSES);
		}
		tw_log_flush(&a->log);
	}
	tw_log_flush(&a->log);
	return NULL;
}

/* --acct-db: "" the store's path with ".db" replaced by ".acct.db" (or
 * ".acct.db" added), "off" none. */
static void db_path(const struct tw_srv_config *c, char *out, size_t max)
{
	size_t n = strlen(c->store);

	if (c->acct_db[0] != 0) {
		snprintf(out, max, "%s", c->acct_db);
		return;
	}
	if (n > 3 && strcmp(c->store + n - 3, ".db") == 0)
		n -= 3;
	snprintf(out, max, "%.*s.acct.db", (int)n, c->store);
}

int tw_srv_acct_db_open(struct tw_srv *srv, char *err, size_t err_len)
{
	struct tw_srv_acct *a = srv->acct;
	char path[TW_SRV_PATH_MAX + 16];
	uint64_t loaded, skipped;
	int rc;

	if (a == NULL || strcmp(srv->cfg.acct_db, "off") == 0)
		return TW_OK;
	db_path(&srv->cfg, path, sizeof(path));
	rc = tw_acct_db_open(&a->db, path, err, err_len);
	if (rc != TW_OK)
		return rc;
	if (tw_acct_db_load(a->db, &a->table, srv->cfg.acct_max_sessions, &loaded, &skipped) !=
	    TW_OK) {
		snprintf(err, err_len, "%s: cannot read the live sessions", path);
		return TW_ERR_IO;
	}
	{
		char q[TW_SRV_PATH_MAX + 24];

		tw_log_quote(q, sizeof(q), path);
		tw_log_always(NULL, TW_LOG_INFO, "acct-db", "file=%s restored=%llu skipped=%llu "
			      "history_days=%u", q, (unsigned long long)loaded,
			      (unsigned long long)skipped, srv->cfg.acct_history_days);
	}
	return TW_OK;
}

int tw_srv_acct_start(struct tw_srv *srv)
{
	struct tw_srv_acct *a = srv->acct;

	if (a == NULL)
		return TW_OK;
	atomic_store(&a->epoch_seen, atomic_load(&srv->epoch));
	if (pthread_create(&a->thread, NULL, acct_run, a) != 0)
		return TW_ERR_NOMEM;
	a->started = true;
	(void)pthread_setname_np(a->thread, "twagd-acct");
	tw_log_always(NULL, TW_LOG_INFO, "acct-ready", "listen=%s max_sessions=%u", a->addr_text,
		      srv->cfg.acct_max_sessions);
	return TW_OK;
}

void tw_srv_acct_stop(struct tw_srv *srv)
{
	struct tw_srv_acct *a = srv->acct;

	if (a == NULL)
		return;
	if (a->started)
		pthread_join(a->thread, NULL);
	srv->acct = NULL;
	acct_free(a);
}

bool tw_srv_acct_moved_on(struct tw_srv *srv, uint64_t epoch)
{
	return srv->acct == NULL || !srv->acct->started ||
	       atomic_load(&srv->acct->epoch_seen) >= epoch;
}

/* ---- metrics ------------------------------------------------------------------ */

static uint64_t ctr(struct tw_srv_acct *a, unsigned c)
{
	return atomic_load_explicit(&a->ctr[c], memory_order_relaxed);
}

size_t tw_srv_acct_metrics(struct tw_srv *srv, char *buf, size_t max)
{
	struct tw_srv_acct *a = srv->acct;
	struct out o = { buf, max, 0, false };
	struct tw_acct_stats st;

	if (a == NULL || buf == NULL || max == 0)
		return 0;
	tw_acct_table_stats(&a->table, &st);
	head(&o, "twag_acct_requests_total", "counter",
	     "Accounting-Requests recorded, by Acct-Status-Type (RFC 2866 section 5.1; duplicates not included)");
	for (unsigned i = 0; i < ACCT_N_STATUS; i++)
		put(&o, "twag_acct_requests_total{status=\"%s\"} %llu\n", status_names[i],
		    (unsigned long long)ctr(a, C_REQ + i));
	head(&o, "twag_acct_responses_total", "counter", "Accounting-Responses sent");
	put(&o, "twag_acct_responses_total %llu\n", (unsigned long long)ctr(a, C_RESPONSES));
	head(&o, "twag_acct_duplicate_requests_total", "counter",
	     "Retransmitted Accounting-Requests answered from the duplicate cache (RFC 5080 section 2.2.2)");
	put(&o, "twag_acct_duplicate_requests_total %llu\n", (unsigned long long)ctr(a, C_DUPLICATES));
	head(&o, "twag_acct_dropped_total", "counter",
	     "Accounting packets silently discarded, by reason");
	for (size_t i = 0; i < sizeof(drop_reasons) / sizeof(drop_reasons[0]); i++)
		put(&o, "twag_acct_dropped_total{reason=\"%s\"} %llu\n", drop_reasons[i].reason,
		    (unsigned long long)ctr(a, drop_reasons[i].c));
	{
		const struct {
			const char *name, *type, *help;
			uint64_t v;
		} ms[] = {
			{ "twag_acct_sessions_active", "gauge", "Live accounting sessions",
			  st.active },
			{ "twag_acct_sessions_max", "gauge",
			  "Accounting session table capacity (--acct-max-sessions)", st.max },
			{ "twag_acct_sessions_started_total", "counter",
			  "Accounting sessions begun by a Start", st.started },
			{ "twag_acct_sessions_created_by_update_total", "counter",
			  "Accounting sessions first seen in an Interim-Update (their Start missed)",
			  st.created_by_update },
			{ "twag_acct_sessions_stopped_total", "counter",
			  "Accounting sessions ended by a Stop", st.stopped },
			{ "twag_acct_stops_unknown_total", "counter",
			  "Stops for no live session", st.stops_unknown },
			{ "twag_acct_sessions_ended_by_nas_total", "counter",
			  "Accounting sessions ended by the NAS's Accounting-On or -Off",
			  st.ended_by_nas },
			{ "twag_acct_sessions_evicted_total", "counter",
			  "Accounting sessions evicted (least recently updated) because the table was full",
			  st.evicted },
		};

		for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
			head(&o, ms[i].name, ms[i].type, ms[i].help);
			put(&o, "%s %llu\n", ms[i].name, (unsigned long long)ms[i].v);
		}
	}
	return o.overflow ? 0 : o.len;
}

/* ---- /sessions ------------------------------------------------------------------ */

/* A JSON string of octets: '"', '\\' and everything outside printable
 * ASCII escaped (\u00XX: an octet >= 0x80 shows as that code point). */
static void json_str(struct out *o, const uint8_t *v, size_t n)
{
	put(o, "\"");
	for (size_t i = 0; i < n; i++) {
		uint8_t c = v[i];

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

/* Text of one field for the table: control characters and octets >=
 * 0x80 as '?', at most max - 1 characters, "-" when empty. */
static void text_of(char *out, size_t max, const uint8_t *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < max; i++)
		out[k++] = v[i] < 0x21 || v[i] >= 0x7f ? '?' : (char)v[i];
	if (k == 0 && max > 1)
		out[k++] = '-';
	out[k] = 0;
}

static void nas_text(char *out, size_t max, const struct tw_acct_key *k)
{
	struct tw_srv_addr x;

	memset(&x, 0, sizeof(x));
	switch (k->nas_kind) {
	case TW_ACCT_NAS_IPV4:
		x.family = 4;
		memcpy(x.a, k->nas, 4);
		tw_srv_addr_text(&x, out, max);
		return;
	case TW_ACCT_NAS_IPV6:
		x.family = 6;
		memcpy(x.a, k->nas, 16);
		tw_srv_addr_text(&x, out, max);
		return;
	case TW_ACCT_NAS_IDENT:
		text_of(out, max, k->nas, k->nas_len);
		return;
	default:
		tw_srv_addr_text(&k->client, out, max);
		return;
	}
}

static void iso_time(char *out, size_t max, uint64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t == 0 || gmtime_r(&tt, &tm) == NULL) {
		snprintf(out, max, "-");
		return;
	}
	strftime(out, max, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static uint64_t duration_of(const struct tw_acct_session *s, uint64_t now)
{
	if (s->r.flags & TW_ACCT_F_SESSION_TIME)
		return s->r.session_time;
	return now > s->start_time && s->start_time != 0 ? now - s->start_time : 0;
}

static const char *const nas_kinds[] = { "client", "nas-ip-address", "nas-ipv6-address",
					 "nas-identifier" };

static void session_json(struct out *o, const struct tw_acct_session *s, uint64_t now)
{
	const struct tw_acct_record *r = &s->r;
	char t[64], start[32], last[32];

	iso_time(start, sizeof(start), s->start_time);
	iso_time(last, sizeof(last), s->last_update);
	put(o, "{\"session_id\":");
	json_str(o, r->key.id, r->key.id_len);
	tw_srv_addr_text(&r->key.client, t, sizeof(t));
	put(o, ",\"client\":\"%s\",\"nas\":", t);
	nas_text(t, sizeof(t), &r->key);
	json_str(o, (const uint8_t *)t, strlen(t));
	put(o, ",\"nas_kind\":\"%s\",\"user\":", nas_kinds[r->key.nas_kind & 3]);
	json_str(o, (const uint8_t *)r->user, strlen(r->user));
	put(o, ",\"calling_station_id\":");
	json_str(o, r->calling, r->calling_len);
	put(o, ",\"called_station_id\":");
	json_str(o, r->called, r->called_len);
	if (r->flags & TW_ACCT_F_NAS_PORT)
		put(o, ",\"nas_port\":%u", r->nas_port);
	else
		put(o, ",\"nas_port\":null");
	if (r->flags & TW_ACCT_F_FRAMED_IP)
		put(o, ",\"framed_ip_address\":\"%u.%u.%u.%u\"", r->framed_ip[0], r->framed_ip[1],
		    r->framed_ip[2], r->framed_ip[3]);
	else
		put(o, ",\"framed_ip_address\":null");
	put(o,
	    ",\"status\":\"%s\",\"start_time\":%llu,\"start\":\"%s\",\"last_update\":%llu,"
	    "\"last_update_iso\":\"%s\",\"duration\":%llu",
	    tw_acct_status_name(s->last_status), (unsigned long long)s->start_time, start,
	    (unsigned long long)s->last_update, last, (unsigned long long)duration_of(s, now));
	if (r->flags & TW_ACCT_F_SESSION_TIME)
		put(o, ",\"session_time\":%u", r->session_time);
	else
		put(o, ",\"session_time\":null");
	put(o,
	    ",\"input_octets\":%llu,\"output_octets\":%llu,\"input_packets\":%u,"
	    "\"output_packets\":%u,\"updates\":%u}",
	    (unsigned long long)r->in_octets, (unsigned long long)r->out_octets, r->in_packets,
	    r->out_packets, s->updates);
}

static void session_row(struct out *o, const struct tw_acct_session *s, uint64_t now)
{
	char id[48], nas[48], cs[40], start[32];

	text_of(id, sizeof(id), s->r.key.id, s->r.key.id_len);
	nas_text(nas, sizeof(nas), &s->r.key);
	text_of(cs, sizeof(cs), s->r.calling, s->r.calling_len);
	iso_time(start, sizeof(start), s->start_time);
	put(o, "%-24s %-24s %-16s %-20s %-20s %8llu %14llu %14llu\n", id,
	    s->r.user[0] ? s->r.user : "-", nas, cs, start,
	    (unsigned long long)duration_of(s, now), (unsigned long long)s->r.in_octets,
	    (unsigned long long)s->r.out_octets);
}

static void session_fields(struct out *o, const struct tw_acct_session *s, uint64_t now)
{
	const struct tw_acct_record *r = &s->r;
	char t[TW_ACCT_ID_MAX + 1], start[32], last[32];

	iso_time(start, sizeof(start), s->start_time);
	iso_time(last, sizeof(last), s->last_update);
	text_of(t, sizeof(t), r->key.id, r->key.id_len);
	put(o, "session_id=%s\n", t);
	tw_srv_addr_text(&r->key.client, t, sizeof(t));
	put(o, "client=%s\n", t);
	nas_text(t, sizeof(t), &r->key);
	put(o, "nas=%s\nnas_kind=%s\n", t, nas_kinds[r->key.nas_kind & 3]);
	put(o, "user=%s\n", r->user[0] ? r->user : "-");
	text_of(t, sizeof(t), r->calling, r->calling_len);
	put(o, "calling_station_id=%s\n", t);
	text_of(t, sizeof(t), r->called, r->called_len);
	put(o, "called_station_id=%s\n", t);
	if (r->flags & TW_ACCT_F_NAS_PORT)
		put(o, "nas_port=%u\n", r->nas_port);
	else
		put(o, "nas_port=-\n");
	if (r->flags & TW_ACCT_F_FRAMED_IP)
		put(o, "framed_ip_address=%u.%u.%u.%u\n", r->framed_ip[0], r->framed_ip[1],
		    r->framed_ip[2], r->framed_ip[3]);
	else
		put(o, "framed_ip_address=-\n");
	put(o, "status=%s\nstart=%s\nstart_time=%llu\nlast_update=%s\nduration=%llu\n",
	    tw_acct_status_name(s->last_status), start, (unsigned long long)s->start_time, last,
	    (unsigned long long)duration_of(s, now));
	if (r->flags & TW_ACCT_F_SESSION_TIME)
		put(o, "session_time=%u\n", r->session_time);
	else
		put(o, "session_time=-\n");
	put(o,
	    "input_octets=%llu\noutput_octets=%llu\ninput_packets=%u\noutput_packets=%u\n"
	    "updates=%u\n",
	    (unsigned long long)r->in_octets, (unsigned long long)r->out_octets, r->in_packets,
	    r->out_packets, s->updates);
}

/* The percent-decoded path segment p[0..n) into out (max octets);
 * -1 when it does not decode or is too long. */
static int pct_decode(uint8_t *out, size_t max, const char *p, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)p[i];

		if (c == '%') {
			uint8_t b;

			if (i + 2 >= n || tw_hex_decode(&b, 1, NULL, p + i + 1, 2) != TW_OK)
				return -1;
			c = b;
			i += 2;
		}
		if (k >= max)
			return -1;
		out[k++] = (uint8_t)c;
	}
	return (int)k;
}

static void answer_simple(int fd, int code, const char *status, const char *type,
			  const char *body, uint64_t deadline)
{
	char hdr[256];

	snprintf(hdr, sizeof(hdr),
		 "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 code, status, type, strlen(body));
	if (tw_srv_send_all(fd, hdr, strlen(hdr), deadline))
		(void)tw_srv_send_all(fd, body, strlen(body), deadline);
}

bool tw_srv_acct_http(struct tw_srv *srv, const char *req, int fd, uint64_t deadline)
{
	struct tw_srv_acct *a = srv->acct;
	const char *path, *end, *q;
	bool json = true, one;
	char *buf = NULL;
	struct tw_acct_session *chunk = NULL;
	uint8_t id[TW_ACCT_ID_MAX];
	int id_len = 0;
	uint64_t now = unix_now();

	if (strncmp(req, "GET /sessions", 13) != 0 ||
	    (req[13] != ' ' && req[13] != '/' && req[13] != '?' && req[13] != '\r'))
		return false;
	path = req + 4;
	end = path + strcspn(path, " \r\n");
	q = memchr(path, '?', (size_t)(end - path));
	if (q != NULL && (size_t)(end - q) >= 12 && strncmp(q, "?format=text", 12) == 0)
		json = false;
	if (q == NULL)
		q = end;
	one = path[9] == '/';
	if (a == NULL) {
		answer_simple(fd, 404, "Not Found", json ? "application/json" : "text/plain",
			      json ? "{\"error\":\"accounting is off\"}\n" : "accounting is off\n",
			      deadline);
		return true;
	}
	if (one) {
		id_len = pct_decode(id, sizeof(id), path + 10, (size_t)(q - (path + 10)));
		if (id_len <= 0) {
			answer_simple(fd, 400, "Bad Request", json ? "application/json" : "text/plain",
				      json ? "{\"error\":\"bad session id\"}\n" : "bad session id\n",
				      deadline);
			return true;
		}
	}
	buf = malloc(HTTP_BUF);
	chunk = malloc(LIST_CHUNK * sizeof(*chunk));
	if (buf == NULL || chunk == NULL) {
		answer_simple(fd, 503, "Service Unavailable", "text/plain", "no memory\n", deadline);
		goto out;
	}
	if (one) {
		size_t n = tw_acct_table_find(&a->table, id, (size_t)id_len, chunk,
					      SHOW_MAX < LIST_CHUNK ? SHOW_MAX : LIST_CHUNK);
		struct out o = { buf, HTTP_BUF, 0, false };

		if (n == 0) {
			answer_simple(fd, 404, "Not Found", json ? "application/json" : "text/plain",
				      json ? "{\"error\":\"no such session\"}\n" : "no such session\n",
				      deadline);
			goto out;
		}
		if (json) {
			put(&o, "{\"sessions\":[");
			for (size_t i = 0; i < n; i++) {
				if (i)
					put(&o, ",");
				session_json(&o, &chunk[i], now);
			}
			put(&o, "]}\n");
		} else {
			for (size_t i = 0; i < n; i++) {
				if (i)
					put(&o, "\n");
				session_fields(&o, &chunk[i], now);
			}
		}
		if (o.overflow) {
			answer_simple(fd, 500, "Internal Server Error", "text/plain", "too long\n",
				      deadline);
			goto out;
		}
		buf[o.len] = 0;
		answer_simple(fd, 200, "OK", json ? "application/json" : "text/plain", buf, deadline);
		goto out;
	}
	/* the list: streamed, LIST_CHUNK sessions per table lock hold, the
	 * end of the body is the end of the connection (HTTP/1.0) */
	{
		static const char hdr_json[] = "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
					       "Connection: close\r\n\r\n{\"sessions\":[";
		static const char hdr_text[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
					       "Connection: close\r\n\r\n";
		uint32_t cursor = 0;
		size_t n, total = 0;
		struct out o = { buf, HTTP_BUF, 0, false };

		if (json)
			put(&o, "%s", hdr_json);
		else
			put(&o, "%s%-24s %-24s %-16s %-20s %-20s %8s %14s %14s\n", hdr_text,
			    "SESSION-ID", "USER", "NAS", "CALLING-STATION", "START", "DURATION",
			    "INPUT-OCTETS", "OUTPUT-OCTETS");
		while ((n = tw_acct_table_list(&a->table, &cursor, chunk, LIST_CHUNK)) > 0) {
			for (size_t i = 0; i < n; i++) {
				size_t mark = o.len;

				if (json && total > 0)
					put(&o, ",");
				if (json)
					session_json(&o, &chunk[i], now);
				else
					session_row(&o, &chunk[i], now);
				if (o.overflow) { /* flush, then this one again */
					o.overflow = false;
					o.len = mark;
					if (!tw_srv_send_all(fd, buf, o.len, deadline))
						goto out;
					o.len = 0;
					if (json && total > 0)
						put(&o, ",");
					if (json)
						session_json(&o, &chunk[i], now);
					else
						session_row(&o, &chunk[i], now);
					if (o.overflow)
						goto out;
				}
				total++;
			}
			if (o.len > HTTP_BUF / 2) {
				if (!tw_srv_send_all(fd, buf, o.len, deadline))
					goto out;
				o.len = 0;
			}
		}
		/* the last line says the listing is whole (the endpoint's
		 * deadline may cut a long one: the CLI checks for it) */
		if (json)
			put(&o, "],\"count\":%zu}\n", total);
		else
			put(&o, "# %zu sessions\n", total);
		if (!o.overflow)
			(void)tw_srv_send_all(fd, buf, o.len, deadline);
	}
out:
	free(chunk);
	free(buf);
	return true;
}

/* ---- look-ups for dynamic authorization (dynauth.c) ------------------------------ */

size_t tw_srv_acct_find(struct tw_srv *srv, const uint8_t *id, size_t id_len,
			struct tw_acct_session *out, size_t max)
{
	if (srv->acct == NULL || id_len == 0 || id_len > TW_ACCT_ID_MAX)
		return 0;
	return tw_acct_table_find(&srv->acct->table, id, id_len, out, max);
}

size_t tw_srv_acct_find_class(struct tw_srv *srv, const uint8_t *cls, size_t len,
			      struct tw_acct_session *out, size_t max)
{
	struct tw_acct_session *chunk;
	uint32_t cursor = 0;
	size_t n, found = 0;

	if (srv->acct == NULL || len == 0 || len > TW_ACCT_CLASS_MAX || max == 0)
		return 0;
	chunk = malloc(LIST_CHUNK * sizeof(*chunk));
	if (chunk == NULL)
		return 0;
	while (found < max && (n = tw_acct_table_list(&srv->acct->table, &cursor, chunk,
						       LIST_CHUNK)) > 0)
		for (size_t i = 0; i < n && found < max; i++)
			if ((chunk[i].r.flags & TW_ACCT_F_CLASS) && chunk[i].r.class_len == len &&
			    memcmp(chunk[i].r.cls, cls, len) == 0)
				out[found++] = chunk[i];
	free(chunk);
	return found;
}
