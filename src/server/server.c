/*
 * twag — twagd start-up, threads, signals and the metrics endpoint.
 *
 * Start-up allocates everything the packet path uses (session table,
 * per-worker duplicate caches and buffers), opens the subscriber store,
 * binds one SO_REUSEPORT UDP socket per worker, then logs "event=ready".
 * The main thread then only waits for signals (sigwaitinfo):
 *   SIGTERM, SIGINT  stop: workers finish their batch, the store is closed
 *                    (SEQ_HE written back), exit 0;
 *   SIGHUP           reopen the log file; read the configuration again and,
 *                    only if it has no problem, apply its clients and log
 *                    level, naming what changed and what needs a restart.
 * The sockets are bound before the store is opened, so that with --user
 * they are bound as root and the store is opened as that user
 * (privdrop.c); the service manager hears of each step (notify.c).
 * The metrics thread serves GET /metrics (Prometheus text 0.0.4) over
 * HTTP/1.0, one connection at a time, each bounded by one deadline for the
 * whole exchange (a client that trickles its request or reads slowly gets
 * cut off, it cannot hold the endpoint); it shares nothing with the
 * workers but atomic counters and one short lock of the session table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "twag/bytes.h"
#include "twag/version.h"

#include "acct_srv.h"
#include "radsec.h"
#include "dynauth_srv.h"
#include "srv.h"

enum {
	METRICS_BUF = 64 * 1024,
	METRICS_REQ_MAX = 4096,
	METRICS_DEADLINE_MS = 2000, /* one HTTP exchange, start to end */
};

static const char usage_text[] =
	"usage: twagd --store sqlite:PATH --client IP[/PREFIX]=SECRET [options]\n"
	"  --listen IP:PORT          RADIUS address (default 127.0.0.1:1812; [IPv6]:PORT)\n"
	"  --store sqlite:PATH       subscriber store (created if missing)\n"
	"  --client IP[/PREFIX]=SECRET  a RADIUS client and its shared secret (repeat)\n"
	"  --network-name NAME       EAP-AKA' access network name (default WLAN)\n"
	"  --threads N               worker threads (default: online CPUs)\n"
	"  --metrics IP:PORT         Prometheus endpoint (GET /metrics)\n"
	"  --kek-file F              key-encryption key (else TWAG_KEK, else PATH.kek)\n"
	"  --config FILE             key = value file (see docs/twagd.conf.example)\n"
	"  --check-config [FILE]     check the configuration (FILE: as --config), the\n"
	"                            KEK and the store, print each problem, exit 0 or 1\n"
	"  --realm REALM             realm of minted re-authentication identities\n"
	"  --log-file F              log here instead of stderr (reopened on SIGHUP)\n"
	"  --log-level L             error, warn, info (default) or debug\n"
	"  --log-format F            text (key=value, default) or json (one object a line)\n"
	"  --debug-client IP[/P]     log every attribute of this client's conversations\n"
	"                            (secrets elided; repeat it; reloaded on SIGHUP)\n"
	"  --debug-imsi IMSI         the same for one subscriber's conversations\n"
	"  --max-sessions N          EAP session table size (default 65536)\n"
	"  --session-timeout S       EAP session expiry after its last packet (default 60)\n"
	"  --reply-session-timeout S Session-Timeout in Access-Accept (default 3600, 0: none)\n"
	"  --reauth-limit N          fast re-authentications per full one (default 16)\n"
	"  --no-fast-reauth --no-pseudonyms --no-result-ind\n"
	"  --id-policy trust|any|permanent  identity requests (default trust)\n"
	"  --methods LIST            enabled methods in order (default aka-prime,aka,sim)\n"
	"  --sim-fullauth-id-req     ask AT_FULLAUTH_ID_REQ in the first SIM/Start\n"
	"  --dup-cache N             duplicate cache entries per worker (default 32768)\n"
	"  --dup-expiry S            duplicate cache lifetime (default 10)\n"
	"  --rx-coalesce-us N        under load, wait N µs before a receive (default 1000, 0: off)\n"
	"  --no-udp-gso              one send per reply (default: UDP GSO for equal replies)\n"
	"  --no-udp-gro              one datagram per receive (default: UDP GRO coalescing)\n"
	"  --volatile-identities     pseudonyms resolved by decryption, re-auth contexts in\n"
	"                            memory only: no database write per authentication\n"
	"  --spread-by-identifier    spread requests over workers by RADIUS Identifier\n"
	"                            (default: by source address and port, one NAS one worker)\n"
	"  --sqn-block N             SEQ values reserved per durable write (default 1000)\n"
	"  --resync-max N            AUTS resyncs per subscriber per window (default 3)\n"
	"  --resync-window S         the resync window (default 60)\n"
	"  --resync-bad-max N        bad or stale AUTS per subscriber per window (default 10)\n"
	"  --reauth-ttl S            an unused fast re-auth identity lives (default 86400)\n"
	"  --pseudonym-ttl S         with --volatile-identities: a pseudonym resolves this\n"
	"                            long after it was minted (default 2592000, 30 days)\n"
	"  --identity-cache N        pseudonym/re-auth entries kept in memory (default 65536)\n"
	"  --identity-flush-ms MS    identity rows written behind this often (default 1000)\n"
	"  --subscriber-cache N      subscribers kept in memory (default 4194304)\n"
	"  --pid-file F              write the process id here\n"
	"  --user NAME               started as root: bind, then run as NAME (docs/twagd.md)\n"
	"  --group NAME              with --user: this group instead of NAME's own\n"
	"  --version                 print the version and exit\n"
	"  --acct-listen IP:PORT|off RADIUS accounting address (default: the --listen\n"
	"                            address, port 1813)\n"
	"  --acct-max-sessions N     accounting sessions kept (default 65536)\n"
	"  --acct-db FILE|off        accounting records on disk, SQLite (default: the\n"
	"                            store's path with .acct.db; off: memory only)\n"
	"  --acct-history-days N     ended sessions kept in it (default 90, 0: none)\n"
	"  --acct-interim-interval S Acct-Interim-Interval in Access-Accepts (60..86400;\n"
	"                            default 0: none, the NAS's own setting)\n"
	"  --radsec-listen IP:PORT   RADIUS over TLS (RFC 6614) address, e.g. 0.0.0.0:2083\n"
	"                            or [::1]:2083 (repeat for more; default off)\n"
	"  --tls-cert F              RadSec server certificate chain (PEM)\n"
	"  --tls-key F               RadSec server private key (PEM)\n"
	"  --radsec-client PREFIX,ca=F[,name=N]  a RadSec client network, the CA its\n"
	"                            certificate must verify against and the name it must\n"
	"                            carry (subjectAltName DNS or CN) (repeat)\n"
	"  --radsec-idle-timeout S   close a RadSec connection idle this long (default 60)\n"
	"  --radsec-max-connections N  RadSec connections open at once (default 256)\n"
	"  --radsec-alpn forbid|allow|require  RADIUS/1.1 (RFC 9765, ALPN radius/1.1 over\n"
	"                            TLS 1.3: no MD5) when the client asks (default allow)\n"
	"  --control-socket PATH     control socket for twag session disconnect|coa and\n"
	"                            twag subscriber del|disable (default: none)\n"
	"  --dynauth-port N          the NAS's Disconnect/CoA port (default 3799, RFC 5176)\n"
	"  --dynauth-timeout-ms MS   a Disconnect/CoA-Request is sent again after (default 1000)\n"
	"  --dynauth-retries N       times it is sent again (default 2)\n"
	"  --dynauth-check-interval S  disconnect sessions of subscribers removed from the\n"
	"                            store or disabled, checked this often (default 30, 0: off)\n"
	"  --dynauth-max-sessions N  authorized sessions kept for that (default 65536)\n";

void tw_srv_sockaddr_text(const struct sockaddr_storage *ss, char *out, size_t max)
{
	struct tw_srv_addr a;
	uint16_t port = 0;
	char ip[48];

	if (tw_srv_addr_from_sockaddr(&a, &port, (const struct sockaddr *)ss) != TW_OK) {
		snprintf(out, max, "?");
		return;
	}
	tw_srv_addr_text(&a, ip, sizeof(ip));
	if (ss->ss_family == AF_INET6 && a.family == 6)
		snprintf(out, max, "[%s]:%u", ip, port);
	else
		snprintf(out, max, "%s:%u", ip, port);
}

static bool is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	return tw_ct_is_zero(&((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

/*
 * The workers' sockets form one SO_REUSEPORT group. By default the kernel
 * picks a socket by a hash of the source address and port, so all the
 * requests of one NAS (a WLAN controller sends from one port) would reach
 * one worker and the others would idle. A classic BPF program attached to
 * the group picks socket (RADIUS Identifier mod workers) instead: its data
 * starts at the UDP payload, octet 1 is the Identifier. A retransmission
 * keeps its Identifier, so it reaches the worker whose duplicate cache
 * holds the original; the rounds of one EAP conversation may reach
 * different workers (the session table is shared). UDP GRO is then off
 * (worker.c): a coalesced packet is steered as one, by its first
 * Identifier. A client that sends with UDP GSO still reaches one worker
 * per GSO send (loopback delivers it whole to the lookup). A packet shorter than
 * two octets makes the program return 0 (worker 0, which drops it).
 * Socket i of the group is worker i's: they join it in that order. False
 * when the kernel refuses (before Linux 4.5): the hash then stays.
 */
static bool steer_by_identifier(int fd, unsigned n)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) == 0;
}

/* One UDP socket of the SO_REUSEPORT group. */
static int open_udp(struct tw_srv *srv, char *err, size_t err_len)
{
	struct timeval tv = { 0, 200 * 1000 };
	int one = 1, buf = 4 << 20;
	int fd = socket(srv->listen_addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(err, err_len, "socket: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		snprintf(err, err_len, "setsockopt: %s", strerror(errno));
		close(fd);
		return -1;
	}
	/* best effort: bursts of requests wait in the kernel, not dropped */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (srv->pktinfo) {
		if (srv->listen_addr.ss_family == AF_INET6)
			(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		(void)setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)&srv->listen_addr, srv->listen_len) != 0) {
		snprintf(err, err_len, "bind %s: %s", srv->cfg.listen, strerror(errno));
		close(fd);
		return -1;
	}
	/* port 0: the kernel chose one; the other sockets join it */
	if (getsockname(fd, (struct sockaddr *)&srv->listen_addr, &srv->listen_len) != 0) {
		snprintf(err, err_len, "getsockname: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int open_metrics(struct tw_srv *srv, char *addr_text, size_t text_len, char *err,
			size_t err_len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fd;

	if (tw_srv_sockaddr_parse(&ss, &sl, srv->cfg.metrics, 9812) != TW_OK) {
		snprintf(err, err_len, "--metrics: bad address");
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, err_len, "metrics socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, err_len, "metrics bind %s: %s", srv->cfg.metrics, strerror(errno));
		close(fd);
		return -1;
	}
	tw_srv_sockaddr_text(&ss, addr_text, text_len);
	return fd;
}

static void metrics_snapshot(struct tw_srv *srv, struct tw_srv_metrics *m)
{
	struct tw_srv_counters *c[TW_SRV_MAX_THREADS];
	struct tw_store_stats ss;

	memset(m, 0, sizeof(*m));
	unsigned n = 0;

	for (unsigned i = 0; i < srv->n_workers; i++)
		c[n++] = &srv->workers[i]->ctr;
	/* the RadSec thread's packet path counts with the workers' */
	if (srv->radsec != NULL && n < TW_SRV_MAX_THREADS)
		c[n++] = tw_srv_radsec_counters(srv);
	tw_srv_metrics_sum(m, c, n);
	tw_srv_sessions_stats(&srv->sessions, &m->sessions);
	memset(&ss, 0, sizeof(ss));
	tw_store_get_stats(srv->store, &ss);
	m->store_reservations = ss.reservations;
	m->store_loaded = ss.loaded;
	m->store_reservations_sync = ss.reservations_sync;
	m->store_reservations_ahead = ss.reservations_ahead;
	m->store_reservations_batched = ss.reservations_batched;
	m->store_reservation_batch_commits = ss.reservation_batch_commits;
	m->store_evicted = ss.evicted;
	m->store_recycled = ss.recycled;
	m->store_ident_written = ss.ident_written;
	m->store_ident_full = ss.ident_full;
	m->store_ident_row_writes = ss.ident_row_writes;
	m->store_ident_rounds = ss.ident_rounds;
	m->store_ident_yields = ss.ident_yields;
	m->store_ident_write_ns = ss.ident_write_ns;
	m->store_ident_write_max_ns = ss.ident_write_max_ns;
	m->store_checkpoint_ns = ss.checkpoint_ns;
	m->threads = srv->n_workers;
}

uint64_t tw_srv_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits for fd to become ready for events until deadline; false when the
 * deadline passed or the peer is gone. */
static bool wait_ready(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pf = { fd, events, 0 };
		uint64_t now = tw_srv_mono_ms();
		int n;

		if (now >= deadline)
			return false;
		n = poll(&pf, 1, (int)(deadline - now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		return (pf.revents & events) != 0 || (pf.revents & POLLHUP) != 0;
	}
}

bool tw_srv_send_all(int fd, const char *p, size_t len, uint64_t deadline)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_ready(fd, POLLOUT, deadline))
				return false;
			continue;
		}
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

void tw_srv_metrics_serve(struct tw_srv *srv, int c, char *body, size_t body_max,
			  unsigned timeout_ms)
{
	char req[METRICS_REQ_MAX + 1], hdr[256];
	struct tw_srv_metrics m;
	size_t got = 0, blen = 0;
	uint64_t deadline = tw_srv_mono_ms() + timeout_ms;

	/* the request: until a blank line, METRICS_REQ_MAX octets, EOF or the
	 * deadline, whichever comes first (never a per-read timeout: a client
	 * trickling one octet at a time must not hold the thread) */
	while (got < METRICS_REQ_MAX) {
		ssize_t n = recv(c, req + got, METRICS_REQ_MAX - got, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_ready(c, POLLIN, deadline))
				break;
			continue;
		}
		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n") != NULL || strstr(req, "\n\n") != NULL)
			break;
	}
	req[got] = 0;
	if ((strncmp(req, "GET /metrics ", 13) == 0 || strncmp(req, "GET /metrics?", 13) == 0 ||
	     strncmp(req, "GET /metrics\r", 13) == 0)) {
		metrics_snapshot(srv, &m);
		if (tw_srv_metrics_format(&m, body, body_max, &blen) != TW_OK)
			blen = 0;
		blen += tw_srv_acct_metrics(srv, body + blen, body_max - blen);
		blen += tw_srv_radsec_metrics(srv, body + blen, body_max - blen);
		blen += tw_srv_dynauth_metrics(srv, body + blen, body_max - blen);
		snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
			 "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 blen);
		(void)tw_srv_send_all(c, hdr, strlen(hdr), deadline);
		(void)tw_srv_send_all(c, body, blen, deadline);
	} else if (tw_srv_acct_http(srv, req, c, deadline)) {
		/* GET /sessions, /sessions/ID: acct.c */
	} else {
		static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 10\r\nConnection: close\r\n\r\nnot found\n";

		(void)tw_srv_send_all(c, nf, sizeof(nf) - 1, deadline);
	}
}

static void *metrics_run(void *arg)
{
	struct tw_srv *srv = arg;
	char *body = malloc(METRICS_BUF);

	if (body == NULL) {
		tw_logf(NULL, TW_LOG_ERROR, "metrics-error", "what=no-memory");
		return NULL;
	}
	while (!atomic_load(&srv->stop)) {
		struct pollfd pf = { srv->metrics_fd, POLLIN, 0 };
		int c;

		if (poll(&pf, 1, 200) <= 0)
			continue;
		c = accept4(srv->metrics_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		tw_srv_metrics_serve(srv, c, body, METRICS_BUF, METRICS_DEADLINE_MS);
		close(c);
	}
	free(body);
	return NULL;
}

/* Publishes a new client table; the old one is freed once every worker
 * has moved on. */
static void publish_clients(struct tw_srv *srv, struct tw_srv_clients *nt)
{
	struct tw_srv_clients *old = atomic_exchange(&srv->clients, nt);
	uint64_t epoch = atomic_fetch_add(&srv->epoch, 1) + 1;

	for (int tries = 0; tries < 500; tries++) {
		unsigned done = 0;

		for (unsigned i = 0; i < srv->n_workers; i++)
			if (atomic_load(&srv->workers[i]->epoch_seen) >= epoch)
				done++;
		if (done == srv->n_workers && tw_srv_acct_moved_on(srv, epoch) &&
		    tw_srv_dynauth_moved_on(srv, epoch))
			break;
		usleep(10 * 1000);
	}
	/* a worker that did not move on within 5 s is stuck: better to keep
	 * the old table allocated than to free it under it */
	if (!tw_srv_acct_moved_on(srv, epoch) || !tw_srv_dynauth_moved_on(srv, epoch))
		return;
	for (unsigned i = 0; i < srv->n_workers; i++)
		if (atomic_load(&srv->workers[i]->epoch_seen) < epoch)
			return;
	tw_srv_clients_free(old);
	free(old);
}

/* A list of names for one log field: "a,b,c", cut with "..." when long. */
struct name_list {
	char text[256];
	size_t len;
	unsigned n;
};

static void name_add(struct name_list *l, const char *name)
{
	size_t room = sizeof(l->text) - l->len;
	int w;

	l->n++;
	if (room < 5)
		return;
	w = snprintf(l->text + l->len, room, "%s%s", l->len ? "," : "", name);
	if (w < 0 || (size_t)w >= room - 4) {
		snprintf(l->text + l->len, room, "%s...", l->len ? "," : "");
		l->len = sizeof(l->text) - 1;
		return;
	}
	l->len += (size_t)w;
}

static void reload_problem(void *arg, const char *problem)
{
	char msg[600];

	(void)arg;
	tw_log_quote(msg, sizeof(msg), problem);
	tw_log_always(NULL, TW_LOG_WARN, "reload-problem", "msg=%s", msg);
}

static void changed_key(void *arg, const char *key)
{
	/* applied at once: the log level and format (and the clients and
	 * debug conditions, apart) */
	if (strcmp(key, "log-level") != 0 && strcmp(key, "log-format") != 0)
		name_add(arg, key);
}

/*
 * SIGHUP: the configuration (--config and the command line) read again
 * and checked whole. With a problem nothing changes and each problem is
 * logged; else the clients and the log level are applied, and the log
 * names the clients added, removed or given another secret, and the
 * options that changed but take effect only at the next start.
 */
static void reload(struct tw_srv *srv)
{
	struct tw_srv_config nc;
	struct tw_srv_clients *nt, *cur = atomic_load(&srv->clients);
	struct name_list added = { "", 0, 0 }, removed = { "", 0, 0 }, rekeyed = { "", 0, 0 },
			 pending = { "", 0, 0 };
	unsigned problems;

	tw_srv_config_defaults(&nc);
	problems = tw_srv_config_check_load(&nc, srv->argc, srv->argv, reload_problem, NULL);
	if (problems > 0) {
		tw_log_always(NULL, TW_LOG_WARN, "reload-refused",
			      "problems=%u msg=\"the running configuration is kept\"", problems);
		tw_srv_config_free(&nc);
		return;
	}
	nt = calloc(1, sizeof(*nt));
	if (nt == NULL) {
		tw_log_always(NULL, TW_LOG_WARN, "reload-refused", "msg=\"out of memory\"");
		tw_srv_config_free(&nc);
		return;
	}
	/* each side looked up in the other's index: one probe per client
	 * (tens of thousands of access points reload as fast as a few) */
	for (size_t i = 0; i < nc.clients.n; i++) {
		const struct tw_srv_client *c = &nc.clients.v[i],
					   *o = tw_srv_clients_get(cur, c);

		if (o == NULL)
			name_add(&added, c->name);
		else if (o->key.len != c->key.len || !tw_ct_eq(o->key.secret, c->key.secret, c->key.len))
			name_add(&rekeyed, c->name);
	}
	for (size_t j = 0; j < cur->n; j++)
		if (tw_srv_clients_get(&nc.clients, &cur->v[j]) == NULL)
			name_add(&removed, cur->v[j].name);
	tw_srv_config_changes(&srv->cfg, &nc, changed_key, &pending);
	if (nc.log_level != srv->cfg.log_level) {
		tw_log_set_level(nc.log_level);
		srv->cfg.log_level = nc.log_level;
	}
	if (nc.log_format != srv->cfg.log_format) {
		tw_log_set_format((enum tw_log_format)nc.log_format);
		srv->cfg.log_format = nc.log_format;
	}
	if (!tw_srv_debug_set_eq(&nc.debug, &srv->cfg.debug)) {
		char dtext[1024];

		srv->cfg.debug = nc.debug;
		tw_srv_debug_publish(&srv->debug, &nc.debug);
		tw_srv_debug_text(&nc.debug, dtext, sizeof(dtext));
		tw_log_always(NULL, TW_LOG_INFO, "debug-conditions", "%s",
			      dtext[0] ? dtext : "conditions=none");
	}
	*nt = nc.clients;
	memset(&nc.clients, 0, sizeof(nc.clients));
	publish_clients(srv, nt);
	{
		/* RadSec: certificate, key, clients and CA files read again for
		 * new connections; if one cannot be read, the running ones stay */
		char err[512];

		if (tw_srv_radsec_reload(srv, &nc, err, sizeof(err)) != TW_OK)
			reload_problem(NULL, err);
	}
	tw_log_always(NULL, TW_LOG_INFO, "reload",
		      "clients=%zu added=%s removed=%s secret-changed=%s log_level=%s", nt->n,
		      added.n ? added.text : "-", removed.n ? removed.text : "-",
		      rekeyed.n ? rekeyed.text : "-", tw_log_level_name(srv->cfg.log_level));
	if (pending.n > 0)
		tw_log_always(NULL, TW_LOG_WARN, "reload-pending",
			      "keys=%s msg=\"changed, applied at the next start\"", pending.text);
	tw_srv_config_free(&nc);
}

static int write_pid(const char *path)
{
	char buf[32];
	/* O_NOFOLLOW: a symlink planted where the pid file goes (a shared
	 * run directory) must not make a privileged twagd truncate its
	 * target */
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);

	errno = fd < 0 ? errno : 0;
	if (fd < 0)
		return TW_ERR_IO;
	if (write(fd, buf, (size_t)n) != n) {
		/* errno as the write left it (a short write: ENOSPC), for the
		 * caller's message: close must not change it */
		int e = errno != 0 ? errno : ENOSPC;

		close(fd);
		errno = e;
		return TW_ERR_IO;
	}
	if (close(fd) != 0)
		return TW_ERR_IO;
	return TW_OK;
}

void tw_srv_eap_setup(struct tw_srv *srv)
{
	memset(&srv->eap, 0, sizeof(srv->eap));
	memset(&srv->sim_opts, 0, sizeof(srv->sim_opts));
	srv->eap.network_name = (const uint8_t *)srv->cfg.network_name;
	srv->eap.network_name_len = strlen(srv->cfg.network_name);
	for (unsigned i = 0; i < srv->cfg.n_methods; i++) {
		if (srv->cfg.methods[i] == TW_SRV_M_AKA_PRIME)
			srv->eap.enable_aka_prime = true;
		else if (srv->cfg.methods[i] == TW_SRV_M_AKA)
			srv->eap.enable_aka = true;
		else
			srv->eap.enable_sim = true;
	}
	srv->eap.result_ind = srv->cfg.result_ind;
	srv->eap.pseudonyms = srv->cfg.pseudonyms;
	srv->eap.fast_reauth = srv->cfg.fast_reauth;
	/* the engines' reauth_limit bounds AT_COUNTER, which a full
	 * authentication sets to 1 (RFC 4187 §5.1): N re-authentications per
	 * full one is a counter limit of N + 1 (1: no re-auth id issued) */
	srv->eap.reauth_limit = (uint16_t)(srv->cfg.reauth_limit + 1);
	srv->eap.id_policy = srv->cfg.id_policy;
	if (srv->cfg.realm[0]) {
		srv->eap.realm = srv->cfg.realm;
		srv->eap.realm_len = strlen(srv->cfg.realm);
	}
	srv->eap.ops = tw_store_identity_ops(srv->store);
	srv->sim_opts.n_triplets = TW_EAP_SIM_MAX_TRIPLETS;
	srv->sim_opts.fullauth_id_req_first = srv->cfg.sim_fullauth_id_req;
}

/* The problems of a configuration, as tw_srv_config_check_load says them. */
struct problems {
	char text[32][512];
	unsigned n;
};

static void keep_problem(void *arg, const char *problem)
{
	struct problems *pl = arg;

	if (pl->n < sizeof(pl->text) / sizeof(pl->text[0]))
		snprintf(pl->text[pl->n], sizeof(pl->text[0]), "%s", problem);
	pl->n++;
}

/* The directory of path can take a new file (path itself need not exist). */
static bool dir_writable(const char *path)
{
	char dir[TW_SRV_PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return access(".", W_OK | X_OK) == 0;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return access(dir, W_OK | X_OK) == 0;
}

/*
 * twagd --check-config [FILE]: the configuration read whole (every
 * problem of the file and the command line, each with FILE:LINE or the
 * option), then what start-up would meet first: the log and pid files
 * writable, the KEK (present, 64 hex digits, mode 0600) and the store
 * (opened read-only: its schema, and the check value that says the KEK
 * is the store's). No store, KEK or row is created or changed (SQLite
 * may leave the store's -shm/-wal files of a read), no socket is bound.
 * Problems go to stderr, one line each; the verdict to stdout. Returns
 * the exit status: 0 with no problem, 1 otherwise.
 */
static int check_config(struct tw_srv *srv, const struct problems *pl)
{
	const struct tw_srv_config *c = &srv->cfg;
	unsigned n = pl->n;
	char err[512];
	struct stat st;

	for (unsigned i = 0; i < pl->n && i < sizeof(pl->text) / sizeof(pl->text[0]); i++)
		fprintf(stderr, "twagd: %s\n", pl->text[i]);
	if (pl->n > sizeof(pl->text) / sizeof(pl->text[0]))
		fprintf(stderr, "twagd: (%u more problems not shown)\n",
			pl->n - (unsigned)(sizeof(pl->text) / sizeof(pl->text[0])));
	if (c->log_file[0] &&
	    (stat(c->log_file, &st) == 0 ? access(c->log_file, W_OK) != 0
					 : !dir_writable(c->log_file))) {
		fprintf(stderr, "twagd: --log-file: %s cannot be written: %s\n", c->log_file,
			strerror(errno));
		n++;
	}
	if (c->user[0] && getpwnam(c->user) == NULL) {
		fprintf(stderr, "twagd: --user: no user '%s'\n", c->user);
		n++;
	}
	if (c->group[0] && getgrnam(c->group) == NULL) {
		fprintf(stderr, "twagd: --group: no group '%s'\n", c->group);
		n++;
	}
	if (c->control_socket[0]) {
		/* start-up creates the socket, not its directory */
		char dir[TW_SRV_PATH_MAX];
		const char *slash = strrchr(c->control_socket, '/');

		snprintf(dir, sizeof(dir), "%.*s",
			 slash == NULL ? 1 : slash == c->control_socket ? 1
									: (int)(slash - c->control_socket),
			 slash == NULL ? "." : c->control_socket);
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "twagd: --control-socket: the directory %s does not exist\n",
				dir);
			n++;
		}
	}
	if (c->pid_file[0] && !dir_writable(c->pid_file)) {
		fprintf(stderr, "twagd: --pid-file: %s cannot be created: %s\n", c->pid_file,
			strerror(errno));
		n++;
	}
	/* the RadSec certificate, key and CA files, as start-up reads them */
	n += tw_srv_radsec_check_files(c);
	if (c->store[0] && stat(c->store, &st) != 0) {
		/* start-up creates the store, and its KEK file when none is
		 * named: only a named KEK must be there already */
		if (errno != ENOENT) {
			fprintf(stderr, "twagd: --store: %s: %s\n", c->store, strerror(errno));
			n++;
		} else if (!dir_writable(c->store)) {
			fprintf(stderr, "twagd: --store: %s does not exist and cannot be created: %s\n",
				c->store, strerror(errno));
			n++;
		} else {
			printf("twagd: note: the store %s does not exist yet: start-up creates it\n",
			       c->store);
		}
	} else if (c->store[0]) {
		uint8_t kek[TW_STORE_KEK_LEN];
		struct tw_store_opts so;
		struct tw_store *store = NULL;
		int rc;

		err[0] = 0;
		rc = tw_store_kek_load(c->kek_file[0] ? c->kek_file : NULL, c->store, false, kek,
				       err, sizeof(err));
		if (rc != TW_OK) {
			fprintf(stderr, "twagd: kek: %s\n", err[0] ? err : tw_strerror(rc));
			n++;
		} else {
			memset(&so, 0, sizeof(so));
			so.path = c->store;
			so.kek = kek;
			so.read_only = true;
			err[0] = 0;
			rc = tw_store_open(&store, &so, err, sizeof(err));
			if (rc == TW_ERR_AUTH) {
				fprintf(stderr, "twagd: kek: not the key of the store %s\n", c->store);
				n++;
			} else if (rc != TW_OK) {
				fprintf(stderr, "twagd: --store: %s: %s\n", c->store,
					err[0] ? err : tw_strerror(rc));
				n++;
			} else {
				tw_store_close(store);
			}
		}
		tw_wipe(kek, sizeof(kek));
	}
	if (n > 0) {
		printf("twagd: %u problem%s in the configuration%s%s\n", n, n == 1 ? "" : "s",
		       c->config_file[0] ? " of " : "", c->config_file);
		return 1;
	}
	printf("twagd: configuration OK%s%s: listen %s, %zu client%s, store %s, methods %s%s%s%s%s\n",
	       c->config_file[0] ? " in " : "", c->config_file, c->listen, c->clients.n,
	       c->clients.n == 1 ? "" : "s", c->store, tw_srv_method_name(c->methods[0]),
	       c->n_methods > 1 ? "," : "", c->n_methods > 1 ? tw_srv_method_name(c->methods[1]) : "",
	       c->n_methods > 2 ? "," : "", c->n_methods > 2 ? tw_srv_method_name(c->methods[2]) : "");
	return 0;
}

static void start_failed(const char *what, const char *err)
{
	char msg[300];

	tw_log_quote(msg, sizeof(msg), err);
	tw_log_always(NULL, TW_LOG_ERROR, "start-failed", "what=%s msg=%s", what, msg);
}

int tw_srv_main(int argc, char **argv)
{
	static struct tw_srv srv_storage;
	struct tw_srv *srv = &srv_storage;
	struct tw_store_opts so;
	struct tw_srv_clients *ct = NULL;
	uint8_t kek[TW_STORE_KEK_LEN], seed[16];
	char err[512], listen_text[80], metrics_text[80] = "";
	int fds[TW_SRV_MAX_THREADS];
	sigset_t sigs;
	int rc, status = 1;
	bool pid_written = false, dropped = false;

	memset(srv, 0, sizeof(*srv));
	srv->metrics_fd = -1;
	srv->argc = argc;
	srv->argv = argv;
	srv->notify.fd = -1;
	for (unsigned i = 0; i < TW_SRV_MAX_THREADS; i++)
		fds[i] = -1;
	tw_srv_config_defaults(&srv->cfg);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--check-config") == 0 ||
		    strncmp(argv[i], "--check-config=", 15) == 0) {
			/* every problem, not only the first */
			static struct problems pl;

			(void)tw_srv_config_check_load(&srv->cfg, argc, argv, keep_problem, &pl);
			status = srv->cfg.help ? (fputs(usage_text, stdout), 0)
					       : check_config(srv, &pl);
			tw_srv_config_free(&srv->cfg);
			return status;
		}
	if (tw_srv_config_load(&srv->cfg, argc, argv, err, sizeof(err)) != TW_OK) {
		fprintf(stderr, "twagd: %s\n", err);
		tw_srv_config_free(&srv->cfg);
		return 2;
	}
	if (srv->cfg.help) {
		fputs(usage_text, stdout);
		tw_srv_config_free(&srv->cfg);
		return 0;
	}
	if (srv->cfg.version) {
		printf("twagd %s\n", tw_version());
		tw_srv_config_free(&srv->cfg);
		return 0;
	}
	if (tw_log_open(srv->cfg.log_file) != TW_OK) {
		fprintf(stderr, "twagd: --log-file: cannot open %s: %s\n", srv->cfg.log_file,
			strerror(errno));
		tw_srv_config_free(&srv->cfg);
		return 1;
	}
	tw_log_set_level(srv->cfg.log_level);
	tw_log_set_format((enum tw_log_format)srv->cfg.log_format);
	tw_srv_debug_init(&srv->debug);
	tw_srv_debug_publish(&srv->debug, &srv->cfg.debug);
	if (srv->cfg.debug.n_net + srv->cfg.debug.n_imsi > 0) {
		char dtext[1024];

		tw_srv_debug_text(&srv->cfg.debug, dtext, sizeof(dtext));
		tw_log_always(NULL, TW_LOG_INFO, "debug-conditions", "%s", dtext);
	}

	/* signals are taken by sigwaitinfo in this thread only */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* opened and connected while still root (notify.c) */
	if (tw_srv_notify_open(&srv->notify, err, sizeof(err)) != TW_OK) {
		char msg[300];

		tw_log_quote(msg, sizeof(msg), err);
		tw_log_always(NULL, TW_LOG_WARN, "notify-off", "msg=%s", msg);
	}

	/* the sockets: bound before the privilege drop (a port below 1024
	 * needs root), one SO_REUSEPORT socket per worker */
	if (tw_srv_sockaddr_parse(&srv->listen_addr, &srv->listen_len, srv->cfg.listen,
				  TW_SRV_DEFAULT_PORT) != TW_OK) {
		start_failed("listen", "bad address");
		goto out;
	}
	srv->pktinfo = is_wildcard(&srv->listen_addr);
	for (unsigned i = 0; i < srv->cfg.threads; i++) {
		fds[i] = open_udp(srv, err, sizeof(err));
		if (fds[i] < 0) {
			start_failed("listen", err);
			goto out;
		}
	}
	if (srv->cfg.metrics[0]) {
		srv->metrics_fd = open_metrics(srv, metrics_text, sizeof(metrics_text), err,
					       sizeof(err));
		if (srv->metrics_fd < 0) {
			start_failed("metrics", err);
			goto out;
		}
	}
	/* accounting's socket too, before the privileges go */
	if (tw_srv_acct_open(srv, err, sizeof(err)) != TW_OK) {
		start_failed("acct-listen", err);
		goto out;
	}
	/* RadSec's listeners, certificates and keys too */
	if (tw_srv_radsec_open(srv, err, sizeof(err)) != TW_OK) {
		start_failed("radsec", err);
		goto out;
	}
	/* the control socket too: created as root, given to --user/--group */
	if (tw_srv_dynauth_open(srv, err, sizeof(err)) != TW_OK) {
		start_failed("dynauth", err);
		goto out;
	}
	if (tw_srv_control_open(srv, err, sizeof(err)) != TW_OK) {
		start_failed("control-socket", err);
		goto out;
	}
	if (tw_srv_privdrop(&srv->cfg, &dropped, err, sizeof(err)) != TW_OK) {
		start_failed("user", err);
		goto out;
	}
	if (tw_srv_store_access(srv->cfg.store, err, sizeof(err)) != TW_OK) {
		start_failed("store", err);
		goto out;
	}

	/* the store: KEK from --kek-file / TWAG_KEK / PATH.kek, never logged */
	rc = tw_store_kek_load(srv->cfg.kek_file[0] ? srv->cfg.kek_file : NULL, srv->cfg.store,
			       true, kek, err, sizeof(err));
	if (rc != TW_OK) {
		start_failed("kek", err);
		goto out;
	}
	memset(&so, 0, sizeof(so));
	so.path = srv->cfg.store;
	so.kek = kek;
	so.sqn_block = srv->cfg.sqn_block;
	so.resync_max = srv->cfg.resync_max;
	so.resync_window = srv->cfg.resync_window;
	so.resync_bad_max = srv->cfg.resync_bad_max;
	so.reauth_ttl = srv->cfg.reauth_ttl;
	so.pseudonym_ttl = srv->cfg.pseudonym_ttl;
	so.ident_cache = srv->cfg.identity_cache;
	so.ident_flush_ms = srv->cfg.identity_flush_ms;
	so.ident_volatile = srv->cfg.volatile_ids;
	so.sub_cache = srv->cfg.subscriber_cache;
	rc = tw_store_open(&srv->store, &so, err, sizeof(err));
	tw_wipe(kek, sizeof(kek));
	if (rc != TW_OK) {
		start_failed("store", err[0] ? err : tw_strerror(rc));
		goto out;
	}
	/* the accounting records next to it, once the store opened (its
	 * problems named first) */
	if (tw_srv_acct_db_open(srv, err, sizeof(err)) != TW_OK) {
		start_failed("acct-db", err);
		goto out;
	}
	/* the identity table committed now, not page by page amid traffic */
	rc = tw_store_populate(srv->store);
	if (rc != TW_OK) {
		start_failed("store", "identity table: cannot commit its memory (--identity-cache)");
		goto out;
	}

	tw_srv_eap_setup(srv);

	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
		start_failed("random", "getrandom failed");
		goto out;
	}
	rc = tw_srv_sessions_init(&srv->sessions, srv->cfg.max_sessions,
				  srv->cfg.session_timeout, seed);
	tw_wipe(seed, sizeof(seed));
	if (rc != TW_OK) {
		start_failed("sessions", tw_strerror(rc));
		goto out;
	}

	/* the client table in use; cfg.clients keeps the --client flags */
	ct = calloc(1, sizeof(*ct));
	if (ct == NULL) {
		start_failed("clients", "out of memory");
		goto out;
	}
	*ct = srv->cfg.clients;
	memset(&srv->cfg.clients, 0, sizeof(srv->cfg.clients));
	if (tw_srv_clients_copy_cmdline(&srv->cfg.clients, ct) != TW_OK) {
		start_failed("clients", "out of memory");
		goto out;
	}
	atomic_store(&srv->clients, ct);
	ct = NULL;

	/* workers, each owning its socket from here on */
	srv->workers = calloc(srv->cfg.threads, sizeof(*srv->workers));
	if (srv->workers == NULL) {
		start_failed("workers", "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < srv->cfg.threads; i++) {
		int fd = fds[i];

		if (posix_memalign((void **)&srv->workers[i], 64, sizeof(struct tw_srv_worker)) !=
		    0) {
			start_failed("workers", "out of memory");
			goto out;
		}
		fds[i] = -1;
		srv->n_workers = i + 1;
		if (tw_srv_worker_init(srv->workers[i], srv, i, fd) != TW_OK) {
			start_failed("workers", "set-up failed (tables or random source)");
			goto out;
		}
	}
	if (srv->n_workers > 1 && srv->cfg.spread_by_id &&
	    !steer_by_identifier(srv->workers[0]->fd, srv->n_workers))
		tw_log_always(NULL, TW_LOG_WARN, "steering-off",
			      "errno=%d msg=\"requests spread over workers by source address and port\"",
			      errno);
	tw_srv_sockaddr_text(&srv->listen_addr, listen_text, sizeof(listen_text));
	if (srv->cfg.pid_file[0]) {
		if (write_pid(srv->cfg.pid_file) != TW_OK) {
			start_failed("pid-file", strerror(errno));
			goto out;
		}
		pid_written = true;
	}
	for (unsigned i = 0; i < srv->n_workers; i++) {
		if (pthread_create(&srv->workers[i]->thread, NULL, tw_srv_worker_run,
				   srv->workers[i]) != 0) {
			start_failed("threads", "pthread_create");
			atomic_store(&srv->stop, true);
			goto out;
		}
		srv->workers[i]->started = true;
		{
			/* named for top -H, perf and gdb (at most 15 octets) */
			char name[16];

			snprintf(name, sizeof(name), "twagd-w%u", i % 1000u);
			(void)pthread_setname_np(srv->workers[i]->thread, name);
		}
	}
	if (srv->metrics_fd >= 0) {
		if (pthread_create(&srv->metrics_thread, NULL, metrics_run, srv) != 0) {
			start_failed("threads", "pthread_create");
			atomic_store(&srv->stop, true);
			goto out;
		}
		srv->metrics_started = true;
		(void)pthread_setname_np(srv->metrics_thread, "twagd-metrics");
	}
	if (tw_srv_acct_start(srv) != TW_OK || tw_srv_radsec_start(srv) != TW_OK ||
	    tw_srv_control_start(srv) != TW_OK) {
		start_failed("threads", "pthread_create");
		atomic_store(&srv->stop, true);
		goto out;
	}
	{
		char store_q[TW_SRV_PATH_MAX + 8];

		tw_log_quote(store_q, sizeof(store_q), srv->cfg.store);
		tw_log_always(NULL, TW_LOG_INFO, "ready",
			"listen=%s threads=%u metrics=%s store=%s clients=%zu max_sessions=%u "
			"methods=%s%s%s%s%s%s%s",
			listen_text, srv->n_workers, metrics_text[0] ? metrics_text : "-", store_q,
			atomic_load(&srv->clients)->n, srv->cfg.max_sessions,
			tw_srv_method_name(srv->cfg.methods[0]),
			srv->cfg.n_methods > 1 ? "," : "",
			srv->cfg.n_methods > 1 ? tw_srv_method_name(srv->cfg.methods[1]) : "",
			srv->cfg.n_methods > 2 ? "," : "",
			srv->cfg.n_methods > 2 ? tw_srv_method_name(srv->cfg.methods[2]) : "",
			dropped ? " user=" : "", dropped ? srv->cfg.user : "");
	}
	{
		char msg[160];

		snprintf(msg, sizeof(msg), "READY=1\nSTATUS=RADIUS on %s, %u workers", listen_text,
			 srv->n_workers);
		tw_srv_notify(&srv->notify, msg);
	}

	for (;;) {
		siginfo_t si;
		int sig = tw_srv_notify_sigwait(srv, &srv->notify, &sigs, &si);

		if (sig < 0)
			continue;
		if (sig == SIGHUP) {
			tw_srv_notify_reloading(&srv->notify);
			if (tw_log_reopen() != TW_OK)
				tw_log_always(NULL, TW_LOG_WARN, "reload-failed", "what=log-file");
			reload(srv);
			tw_srv_notify(&srv->notify, "READY=1");
			continue;
		}
		tw_srv_notify(&srv->notify, "STOPPING=1");
		tw_log_always(NULL, TW_LOG_INFO, "stopping", "signal=%s",
			sig == SIGTERM ? "TERM" : "INT");
		break;
	}
	status = 0;
out:
	tw_wipe(kek, sizeof(kek));
	atomic_store(&srv->stop, true);
	for (unsigned i = 0; i < srv->n_workers; i++)
		if (srv->workers[i]->started)
			pthread_join(srv->workers[i]->thread, NULL);
	if (srv->metrics_started)
		pthread_join(srv->metrics_thread, NULL);
	tw_srv_control_stop(srv);
	/* RadSec before accounting, which it hands Accounting-Requests to */
	tw_srv_radsec_stop(srv);
	tw_srv_acct_stop(srv);
	tw_srv_dynauth_close(srv);
	if (status == 0) {
		struct tw_srv_metrics m;

		metrics_snapshot(srv, &m);
		tw_log_always(NULL, TW_LOG_INFO, "stop",
			"requests=%llu accepts=%llu rejects=%llu challenges=%llu dropped=%llu",
			(unsigned long long)m.v[TW_C_REQUESTS],
			(unsigned long long)m.v[TW_C_ACCEPTS],
			(unsigned long long)m.v[TW_C_REJECTS],
			(unsigned long long)m.v[TW_C_CHALLENGES],
			(unsigned long long)m.v[TW_C_DROPPED]);
	}
	/* writes SEQ_HE back and flushes identity state */
	tw_store_close(srv->store);
	for (unsigned i = 0; i < srv->n_workers; i++) {
		close(srv->workers[i]->fd);
		tw_srv_worker_free(srv->workers[i]);
		free(srv->workers[i]);
	}
	free(srv->workers);
	for (unsigned i = 0; i < TW_SRV_MAX_THREADS; i++)
		if (fds[i] >= 0) /* bound, no worker yet */
			close(fds[i]);
	if (srv->metrics_fd >= 0)
		close(srv->metrics_fd);
	tw_srv_notify_close(&srv->notify);
	if (srv->sessions.slots != NULL)
		tw_srv_sessions_free(&srv->sessions);
	if (ct != NULL) { /* not yet published */
		tw_srv_clients_free(ct);
		free(ct);
	}
	ct = atomic_load(&srv->clients);
	if (ct != NULL) {
		tw_srv_clients_free(ct);
		free(ct);
	}
	tw_srv_config_free(&srv->cfg);
	if (pid_written)
		unlink(srv->cfg.pid_file);
	tw_srv_debug_destroy(&srv->debug);
	tw_log_close();
	return status;
}
