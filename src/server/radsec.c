/*
 * twag — twagd's RADIUS over TLS (RFC 6614, May 2012, "TLS Encryption
 * for RADIUS"; the radext revision of it, RFC 6614bis, keeps what is used
 * here: TLS 1.2 or later, mutual certificate authentication, the framing
 * of RFC 6613, May 2012, §2.6, and the shared secret "radsec").
 *
 * One thread (twagd-radsec) runs every connection with poll() over
 * non-blocking sockets: a few access points or proxies (radsecproxy, a
 * WLAN controller) each keep one long-lived connection with many requests
 * in flight (§2.5), so connections are few and a thread per connection
 * would only add wake-ups. The thread owns a tw_srv_worker (no socket of
 * its own) and hands each Access-Request and Status-Server to
 * tw_srv_handle, the packet path of the UDP workers: the same EAP session
 * table, store and rules (Message-Authenticator required and checked
 * first, RFC 3579 §3.2; State bound to the client address). The client
 * of a request is the TCP peer address, found in a client table built
 * from the --radsec-client networks with the secret "radsec" (§2.3);
 * Accounting-Requests go to accounting (tw_srv_acct_stream).
 *
 * For each connection:
 *   1. the peer address must lie in a --radsec-client network, else the
 *      connection is closed before any TLS (counted rejected);
 *   2. the TLS handshake (TLS 1.2 or 1.3, no compression, no
 *      renegotiation, no session resumption) must end within the
 *      handshake timeout and the client's certificate must verify against
 *      that client's CA, and carry its name= when one is set (subjectAltName
 *      DNS, else the subject CN) (§2.3: mutual authentication) — else
 *      closed and counted as a handshake failure;
 *   3. then RADIUS packets, framed by their Length (radsec_frame.c); a
 *      Length below 20 or above 4096 cannot be skipped: closed (RFC 6613
 *      §2.6.4). A packet that is discarded (bad Message-Authenticator,
 *      unknown code) leaves the connection open: counted by the packet
 *      path like a datagram;
 *   4. no packet for --radsec-idle-timeout seconds: closed (§2.5 leaves
 *      idle handling to the peers; radsecproxy opens a new connection
 *      when it has a request, so closing an idle one costs one handshake).
 * A reply that TLS cannot take at once waits in the connection's buffer
 * and no further request of that connection is read until it has gone:
 * a client that does not read its replies stalls only itself, and is cut
 * at its idle deadline.
 *
 * RADIUS/1.1 (RFC 9765, ALPN "radius/1.1") is not offered: no ALPN is
 * negotiated, which a RADIUS/1.1 client that also allows RADIUS/TLS
 * takes as RADIUS/TLS (docs/twagd.md says why it is left out).
 *
 * The duplicate cache of the packet path keys requests by source port,
 * Identifier and Request Authenticator: on TCP each connection has its
 * own port, and a client does not retransmit on the same connection
 * (RFC 6613 §2.6.1), so an entry is only ever a first request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "twag/bytes.h"
#include "twag/mem.h"

#include "acct_srv.h"
#include "radsec.h"
#include "srv.h"
#include "textout.h"

/* RFC 6614 §2.3: "the shared secret ... MUST be 'radsec'" */
static const char radsec_secret[] = "radsec";

enum {
	TURN_MS = 200,          /* longest poll wait (the stop flag is read this often) */
	ACCEPT_PER_TURN = 64,
	PACKETS_PER_TURN = 32,  /* per connection: one busy peer cannot starve the rest */
};

enum conn_state { C_FREE = 0, C_HANDSHAKE, C_OPEN };

/* What /metrics shows (one writer: the RadSec thread). */
enum {
	R_ACCEPTED = 0,
	R_REJ_UNKNOWN,        /* peer address in no --radsec-client network */
	R_REJ_FULL,           /* --radsec-max-connections reached */
	R_HS_FAIL,            /* TLS handshake failed (not TLS, bad certificate...) */
	R_CL_PEER,            /* closed: the peer closed */
	R_CL_IDLE,            /* closed: idle timeout */
	R_CL_HS_TIMEOUT,      /* closed: handshake not done in time */
	R_CL_BAD_LENGTH,      /* closed: Length < 20 or > 4096 */
	R_CL_TLS_ERROR,       /* closed: a TLS or socket error after the handshake */
	R_CL_SHUTDOWN,        /* closed: twagd stopping */
	R_REQ_ACCESS,
	R_REQ_STATUS,
	R_REQ_ACCT,
	R_REQ_OTHER,          /* another Code: discarded */
	R_REPLIES,
	R_DISCARDED,          /* requests that got no reply */
	R_V11,                /* connections that negotiated RADIUS/1.1 */
	R_ALPN_REFUSED,       /* closed: no ALPN protocol in common (RFC 9765) */
	R_COUNT,
};

/* The TLS side of the configuration: one SSL_CTX per client (its CA is
 * its trust store) and the client table tw_srv_handle looks requests up
 * in. Built at start-up and on SIGHUP; the thread swaps it in between
 * connections (an SSL holds a reference to its SSL_CTX, so open
 * connections keep theirs). */
struct trust {
	struct tw_srv_clients clients;   /* secret "radsec" */
	SSL_CTX **ctx;                   /* [i]: clients.v[i]'s */
	char (*name)[256];               /* [i]: required certificate name, "" any */
	size_t n;
};

struct conn {
	int fd;
	enum conn_state state;
	SSL *ssl;
	bool want_write;          /* TLS needs the socket writable to go on */
	uint64_t deadline;        /* ms (tw_srv_mono_ms): handshake or idle */
	struct sockaddr_storage peer;
	size_t tx_len, tx_off;    /* a reply TLS did not take yet */
	bool v11;                 /* ALPN "radius/1.1" (RFC 9765): no MD5 */
	struct tw_radsec_rx rx;
	uint8_t tx[TW_RADIUS_MAX_LEN];
};

struct tw_srv_radsec {
	struct tw_srv *srv;
	int lfd[TW_SRV_RADSEC_MAX_LISTEN];
	char ltext[TW_SRV_RADSEC_MAX_LISTEN][80];
	unsigned nl;
	struct conn *conns;
	unsigned max_conns, n_open;
	struct pollfd *pfd;
	int *pfd_conn;             /* pfd[k] is conns[pfd_conn[k]] (-1: a listener) */
	uint64_t idle_ms, hs_ms;
	struct trust *trust;                 /* in use (the thread's) */
	_Atomic(struct trust *) next;        /* from a reload, not yet taken */
	struct tw_srv_worker *w;
	pthread_t thread;
	bool started;
	_Atomic uint64_t ctr[R_COUNT];
	uint8_t reply[TW_RADIUS_MAX_LEN];
};

static void count(struct tw_srv_radsec *rs, unsigned c)
{
	atomic_store_explicit(&rs->ctr[c], atomic_load_explicit(&rs->ctr[c], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* ---- configuration --------------------------------------------------------- */

static int parse_uint(const char *v, unsigned long min, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 || n < min || n > max)
		return TW_ERR_INVAL;
	*out = (unsigned)n;
	return TW_OK;
}

/*
 * "PREFIX,ca=FILE[,name=NAME]" (command line) or "PREFIX ca=FILE
 * [name=NAME]" (file): either separator is taken in both. A network given
 * again replaces the earlier entry, as with --client.
 */
static int add_client(struct tw_srv_config *c, const char *v, const char *where, char *err,
		      size_t err_len)
{
	char buf[TW_SRV_PATH_MAX + 400], *save = NULL, *tok, *spec;
	struct tw_srv_radsec_peer peer;
	const struct tw_srv_client *got;
	struct tw_srv_client probe;
	size_t idx;
	int rc;

	memset(&peer, 0, sizeof(peer));
	if (strlen(v) >= sizeof(buf)) {
		snprintf(err, err_len, "%s: radsec-client: too long", where);
		return TW_ERR_INVAL;
	}
	memcpy(buf, v, strlen(v) + 1);
	spec = strtok_r(buf, ", \t", &save);
	if (spec == NULL || strchr(spec, '=') != NULL) {
		snprintf(err, err_len, "%s: radsec-client must be PREFIX,ca=FILE[,name=NAME]", where);
		return TW_ERR_INVAL;
	}
	while ((tok = strtok_r(NULL, ", \t", &save)) != NULL) {
		if (strncmp(tok, "ca=", 3) == 0 && tok[3] != 0 &&
		    strlen(tok + 3) < sizeof(peer.ca)) {
			memcpy(peer.ca, tok + 3, strlen(tok + 3) + 1);
		} else if (strncmp(tok, "name=", 5) == 0 && tok[5] != 0 &&
			   strlen(tok + 5) < sizeof(peer.name)) {
			memcpy(peer.name, tok + 5, strlen(tok + 5) + 1);
		} else {
			snprintf(err, err_len, "%s: radsec-client: unknown or empty field '%.40s' "
				 "(ca=FILE, name=NAME)", where, tok);
			return TW_ERR_INVAL;
		}
	}
	if (peer.ca[0] == 0) {
		snprintf(err, err_len, "%s: radsec-client %.60s: ca=FILE is needed", where, spec);
		return TW_ERR_INVAL;
	}
	rc = tw_srv_clients_add(&c->radsec_clients, spec, (const uint8_t *)radsec_secret,
				sizeof(radsec_secret) - 1, false, err, err_len);
	if (rc != TW_OK) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, err_len, "%s: radsec-client: %s", where, msg);
		return TW_ERR_INVAL;
	}
	/* the entry's index: new ones are appended, a repeated network
	 * replaced in place */
	memset(&probe, 0, sizeof(probe));
	if (tw_srv_addr_parse(&probe.net, &probe.prefix, spec) != TW_OK ||
	    (got = tw_srv_clients_get(&c->radsec_clients, &probe)) == NULL) {
		snprintf(err, err_len, "%s: radsec-client: internal error", where);
		return TW_ERR_INVAL;
	}
	idx = (size_t)(got - c->radsec_clients.v);
	if (idx >= c->radsec_peers_cap) {
		size_t ncap = c->radsec_peers_cap ? c->radsec_peers_cap * 2 : 8;
		struct tw_srv_radsec_peer *nv;

		while (ncap <= idx)
			ncap *= 2;
		nv = realloc(c->radsec_peers, ncap * sizeof(*nv));
		if (nv == NULL) {
			snprintf(err, err_len, "%s: out of memory", where);
			return TW_ERR_NOMEM;
		}
		memset(nv + c->radsec_peers_cap, 0, (ncap - c->radsec_peers_cap) * sizeof(*nv));
		c->radsec_peers = nv;
		c->radsec_peers_cap = ncap;
	}
	c->radsec_peers[idx] = peer;
	return TW_OK;
}

int tw_srv_radsec_config(struct tw_srv_config *c, const char *name, const char *v,
			 bool cmdline, const char *where, char *err, size_t err_len)
{
	(void)cmdline;
	if (strcmp(name, "radsec-listen") == 0) {
		struct sockaddr_storage ss;
		socklen_t sl;
		size_t used = strlen(c->radsec_listen), n = 0;

		for (const char *p = c->radsec_listen; *p; p++)
			n += *p == ' ';
		if (tw_srv_sockaddr_parse(&ss, &sl, v, TW_SRV_RADSEC_PORT) != TW_OK ||
		    strchr(v, ' ') != NULL) {
			snprintf(err, err_len, "%s: radsec-listen must be IP:PORT or [IPv6]:PORT", where);
			return TW_ERR_INVAL;
		}
		if ((used > 0 && n + 1 >= TW_SRV_RADSEC_MAX_LISTEN) ||
		    used + strlen(v) + 2 > sizeof(c->radsec_listen)) {
			snprintf(err, err_len, "%s: radsec-listen: at most %d addresses", where,
				 TW_SRV_RADSEC_MAX_LISTEN);
			return TW_ERR_INVAL;
		}
		snprintf(c->radsec_listen + used, sizeof(c->radsec_listen) - used, "%s%s",
			 used ? " " : "", v);
		return TW_OK;
	}
	if (strcmp(name, "radsec-client") == 0)
		return add_client(c, v, where, err, err_len);
	if (strcmp(name, "tls-cert") == 0 || strcmp(name, "tls-key") == 0) {
		char *dst = name[4] == 'c' ? c->tls_cert : c->tls_key;

		if (*v == 0 || strlen(v) >= TW_SRV_PATH_MAX) {
			snprintf(err, err_len, "%s: %s must be a path", where, name);
			return TW_ERR_INVAL;
		}
		memcpy(dst, v, strlen(v) + 1);
		return TW_OK;
	}
	if (strcmp(name, "radsec-idle-timeout") == 0) {
		if (parse_uint(v, 1, 86400, &c->radsec_idle_timeout) != TW_OK) {
			snprintf(err, err_len, "%s: radsec-idle-timeout must be an integer in 1..86400",
				 where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(name, "radsec-alpn") == 0) {
		/* RFC 9765 §3.1's "RADIUS-1.1" flag */
		static const char *const modes[] = { "forbid", "allow", "require" };

		for (int i = 0; i < 3; i++)
			if (strcmp(v, modes[i]) == 0) {
				c->radsec_alpn = i;
				return TW_OK;
			}
		snprintf(err, err_len, "%s: radsec-alpn must be forbid, allow or require", where);
		return TW_ERR_INVAL;
	}
	if (strcmp(name, "radsec-max-connections") == 0) {
		if (parse_uint(v, 1, TW_SRV_RADSEC_MAX_CONNS, &c->radsec_max_conns) != TW_OK) {
			snprintf(err, err_len,
				 "%s: radsec-max-connections must be an integer in 1..%d", where,
				 TW_SRV_RADSEC_MAX_CONNS);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	snprintf(err, err_len, "%s: unhandled option %s", where, name);
	return TW_ERR_INVAL;
}

unsigned tw_srv_radsec_config_check(const struct tw_srv_config *c,
				    void (*say)(void *arg, const char *problem), void *arg)
{
	unsigned n = 0;

	if (c->radsec_listen[0] == 0)
		return 0;
	if (c->tls_cert[0] == 0) {
		say(arg, "--tls-cert: --radsec-listen needs the server certificate (PEM)");
		n++;
	}
	if (c->tls_key[0] == 0) {
		say(arg, "--tls-key: --radsec-listen needs the server key (PEM)");
		n++;
	}
	if (c->radsec_clients.n == 0) {
		say(arg, "--radsec-client: --radsec-listen needs at least one PREFIX,ca=FILE");
		n++;
	}
	return n;
}

void tw_srv_radsec_config_free(struct tw_srv_config *c)
{
	tw_srv_clients_free(&c->radsec_clients);
	free(c->radsec_peers);
	c->radsec_peers = NULL;
	c->radsec_peers_cap = 0;
}

/* ---- TLS --------------------------------------------------------------------- */

/* The first OpenSSL error as text (the queue emptied). */
static void ssl_err_text(char *out, size_t max)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(out, max, "%s", r != NULL ? r : e ? "unknown" : "none");
	ERR_clear_error();
}

static void trust_free(struct trust *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		SSL_CTX_free(t->ctx[i]);
	free(t->ctx);
	free(t->name);
	tw_srv_clients_free(&t->clients);
	free(t);
}

/*
 * ALPN (RFC 7301) for RADIUS/1.1 (RFC 9765 §3): the client's list of
 * protocols (in, inlen: length-prefixed names) against --radsec-alpn.
 * forbid: "radius/1.0" if offered; allow: "radius/1.1" if offered (on TLS
 * 1.3, which RADIUS/1.1 requires), else "radius/1.0"; require:
 * "radius/1.1" only. Nothing in common: the no_application_protocol
 * alert (120) and the handshake fails. A client that sends no ALPN at
 * all is not seen here: it speaks RADIUS/TLS, or is closed after the
 * handshake under require (handshake()).
 */
static const unsigned char alpn_10[] = "radius/1.0", alpn_11[] = "radius/1.1";

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	int mode = (int)(intptr_t)arg;
	bool has10 = false, has11 = false, tls13 = SSL_version(ssl) >= TLS1_3_VERSION;

	for (unsigned i = 0; i < inlen;) {
		unsigned n = in[i];

		if (n == 0 || i + 1 + n > inlen)
			break; /* OpenSSL checked the list; never reached */
		if (n == 10 && memcmp(in + i + 1, alpn_10, 10) == 0)
			has10 = true;
		if (n == 10 && memcmp(in + i + 1, alpn_11, 10) == 0)
			has11 = true;
		i += 1 + n;
	}
	if (mode != TW_SRV_RADSEC_ALPN_FORBID && has11 && tls13) {
		*out = alpn_11;
		*outlen = 10;
		return SSL_TLSEXT_ERR_OK;
	}
	if (mode != TW_SRV_RADSEC_ALPN_REQUIRE && has10) {
		*out = alpn_10;
		*outlen = 10;
		return SSL_TLSEXT_ERR_OK;
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
}

/*
 * One client's TLS context: the server certificate chain and key, TLS
 * 1.2..1.3 (RFC 6614bis: TLS 1.2 at least), the client's CA as the only
 * trust anchor, a client certificate required.
 */
static SSL_CTX *make_ctx(const struct tw_srv_config *c, const char *ca, char *err,
			 size_t err_len)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	STACK_OF(X509_NAME) *names;
	char why[160];

	if (ctx == NULL) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "TLS context: %s", why);
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    /* TLS 1.2: forward-secret AEAD suites only (TLS 1.3's are all so) */
	    SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:!aNULL") != 1) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "TLS settings: %s", why);
		goto fail;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
				 SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (SSL_CTX_use_certificate_chain_file(ctx, c->tls_cert) != 1) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "--tls-cert %s: %s", c->tls_cert, why);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, c->tls_key, SSL_FILETYPE_PEM) != 1) {
		bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;

		ssl_err_text(why, sizeof(why));
		if (mismatch)
			snprintf(err, err_len, "--tls-key %s: not the key of --tls-cert %s", c->tls_key,
				 c->tls_cert);
		else
			snprintf(err, err_len, "--tls-key %s: %s", c->tls_key, why);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "--tls-key %s: not the key of --tls-cert %s (%s)",
			 c->tls_key, c->tls_cert, why);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "radsec-client ca=%s: %s", ca, why);
		goto fail;
	}
	/* the CA names in the CertificateRequest, so that a client with
	 * several certificates picks the one this CA issued */
	names = SSL_load_client_CA_file(ca);
	if (names == NULL) {
		ssl_err_text(why, sizeof(why));
		snprintf(err, err_len, "radsec-client ca=%s: no CA certificate (%s)", ca, why);
		goto fail;
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	/* RFC 6614 §2.3: mutual authentication, the client's certificate
	 * required */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_verify_depth(ctx, 8);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, (void *)(intptr_t)c->radsec_alpn);
	/* the mode the connections of this context were accepted under
	 * (a reload makes new contexts for new connections) */
	SSL_CTX_set_app_data(ctx, (void *)(intptr_t)(c->radsec_alpn + 1));
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

static struct trust *trust_build(const struct tw_srv_config *c, char *err, size_t err_len)
{
	struct trust *t = calloc(1, sizeof(*t));
	size_t n = c->radsec_clients.n;

	if (t == NULL || (t->ctx = calloc(n ? n : 1, sizeof(*t->ctx))) == NULL ||
	    (t->name = calloc(n ? n : 1, sizeof(*t->name))) == NULL) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tw_srv_client *cl = &c->radsec_clients.v[i];

		/* the same order: t->clients.v[i] is cl */
		if (tw_srv_clients_add(&t->clients, cl->name, (const uint8_t *)radsec_secret,
				       sizeof(radsec_secret) - 1, false, err, err_len) != TW_OK)
			goto fail;
		t->ctx[i] = make_ctx(c, c->radsec_peers[i].ca, err, err_len);
		if (t->ctx[i] == NULL)
			goto fail;
		t->n = i + 1;
		memcpy(t->name[i], c->radsec_peers[i].name, sizeof(t->name[i]));
	}
	return t;
fail:
	trust_free(t);
	return NULL;
}

unsigned tw_srv_radsec_check_files(const struct tw_srv_config *c)
{
	unsigned n = 0;
	char err[512];

	if (c->radsec_listen[0] == 0 || c->tls_cert[0] == 0 || c->tls_key[0] == 0)
		return 0;
	/* each client's context on its own: every bad CA file named */
	for (size_t i = 0; i < c->radsec_clients.n; i++) {
		SSL_CTX *ctx = make_ctx(c, c->radsec_peers[i].ca, err, sizeof(err));

		if (ctx == NULL) {
			fprintf(stderr, "twagd: %s\n", err);
			n++;
			/* the certificate and key once, not once per client */
			if (strncmp(err, "--tls-", 6) == 0)
				break;
		}
		SSL_CTX_free(ctx);
	}
	return n;
}

/* ---- start and stop ------------------------------------------------------------- */

static int open_listener(const char *text, int *fd_out, char *addr_text, size_t text_len,
			 char *err, size_t err_len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fd;

	if (tw_srv_sockaddr_parse(&ss, &sl, text, TW_SRV_RADSEC_PORT) != TW_OK) {
		snprintf(err, err_len, "--radsec-listen %s: bad address", text);
		return TW_ERR_INVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, err_len, "radsec socket: %s", strerror(errno));
		return TW_ERR_IO;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::]:2083 and 0.0.0.0:2083 may both be given */
	if (ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, err_len, "radsec bind %s: %s", text, strerror(errno));
		close(fd);
		return TW_ERR_IO;
	}
	tw_srv_sockaddr_text(&ss, addr_text, text_len);
	*fd_out = fd;
	return TW_OK;
}

static void radsec_free(struct tw_srv_radsec *rs)
{
	if (rs == NULL)
		return;
	for (unsigned i = 0; i < rs->nl; i++)
		close(rs->lfd[i]);
	if (rs->conns != NULL) {
		tw_wipe(rs->conns, rs->max_conns * sizeof(*rs->conns));
		free(rs->conns);
	}
	free(rs->pfd);
	free(rs->pfd_conn);
	trust_free(rs->trust);
	trust_free(atomic_exchange(&rs->next, NULL));
	if (rs->w != NULL) {
		tw_srv_worker_free(rs->w);
		free(rs->w);
	}
	tw_wipe(rs->reply, sizeof(rs->reply));
	free(rs);
}

int tw_srv_radsec_open(struct tw_srv *srv, char *err, size_t err_len)
{
	const struct tw_srv_config *c = &srv->cfg;
	struct tw_srv_radsec *rs;
	char list[sizeof(c->radsec_listen)], *save = NULL, *a;
	unsigned slots;

	srv->radsec = NULL;
	if (c->radsec_listen[0] == 0)
		return TW_OK;
	rs = calloc(1, sizeof(*rs));
	if (rs == NULL) {
		snprintf(err, err_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	rs->srv = srv;
	memcpy(list, c->radsec_listen, sizeof(list));
	for (a = strtok_r(list, " ", &save); a != NULL && rs->nl < TW_SRV_RADSEC_MAX_LISTEN;
	     a = strtok_r(NULL, " ", &save)) {
		if (open_listener(a, &rs->lfd[rs->nl], rs->ltext[rs->nl], sizeof(rs->ltext[0]), err,
				  err_len) != TW_OK) {
			radsec_free(rs);
			return TW_ERR_IO;
		}
		rs->nl++;
	}
	/* certificates and keys read now, before the privilege drop: the
	 * key file may be readable by root only */
	rs->trust = trust_build(c, err, err_len);
	if (rs->trust == NULL) {
		radsec_free(rs);
		return TW_ERR_INVAL;
	}
	rs->max_conns = c->radsec_max_conns;
	rs->idle_ms = (uint64_t)c->radsec_idle_timeout * 1000;
	rs->hs_ms = (uint64_t)(c->radsec_idle_timeout < TW_SRV_RADSEC_HANDSHAKE_S
				       ? c->radsec_idle_timeout
				       : TW_SRV_RADSEC_HANDSHAKE_S) * 1000;
	slots = rs->max_conns + rs->nl;
	rs->conns = calloc(rs->max_conns, sizeof(*rs->conns));
	rs->pfd = calloc(slots, sizeof(*rs->pfd));
	rs->pfd_conn = calloc(slots, sizeof(*rs->pfd_conn));
	if (rs->conns == NULL || rs->pfd == NULL || rs->pfd_conn == NULL ||
	    posix_memalign((void **)&rs->w, 64, sizeof(*rs->w)) != 0) {
		rs->w = NULL;
		snprintf(err, err_len, "out of memory (--radsec-max-connections)");
		radsec_free(rs);
		return TW_ERR_NOMEM;
	}
	for (unsigned i = 0; i < rs->max_conns; i++)
		rs->conns[i].fd = -1;
	/* the packet path's worker, with no socket: tw_srv_handle only (the
	 * index after the UDP workers', so that it never sweeps sessions,
	 * which worker 0 does) */
	if (tw_srv_worker_init(rs->w, srv, c->threads, -1) != TW_OK) {
		tw_srv_worker_free(rs->w);
		free(rs->w);
		rs->w = NULL;
		snprintf(err, err_len, "radsec worker: set-up failed");
		radsec_free(rs);
		return TW_ERR_NOMEM;
	}
	srv->radsec = rs;
	return TW_OK;
}

int tw_srv_radsec_reload(struct tw_srv *srv, const struct tw_srv_config *nc, char *err,
			 size_t err_len)
{
	struct tw_srv_radsec *rs = srv->radsec;
	struct trust *t;

	if (rs == NULL)
		return TW_OK;
	t = trust_build(nc, err, err_len);
	if (t == NULL)
		return TW_ERR_INVAL;
	/* whoever takes a pointer out of next owns it */
	trust_free(atomic_exchange(&rs->next, t));
	return TW_OK;
}

/* ---- connections -------------------------------------------------------------- */

#define LOGC(rs, lvl, ...)                                                    \
	do {                                                                  \
		if (tw_log_enabled(lvl))                                      \
			tw_logf(&(rs)->w->log, (lvl), __VA_ARGS__);           \
	} while (0)

static void conn_close(struct tw_srv_radsec *rs, struct conn *k, unsigned why,
		       const char *reason)
{
	char peer[80];

	if (k->ssl != NULL) {
		/* close_notify, best effort: the socket is non-blocking */
		if (k->state == C_OPEN && why != R_CL_TLS_ERROR && why != R_CL_PEER)
			(void)SSL_shutdown(k->ssl);
		SSL_free(k->ssl);
		ERR_clear_error();
	}
	close(k->fd);
	count(rs, why);
	if (tw_log_enabled(TW_LOG_INFO)) {
		tw_srv_sockaddr_text(&k->peer, peer, sizeof(peer));
		tw_logf(&rs->w->log, why == R_CL_PEER || why == R_CL_SHUTDOWN ? TW_LOG_DEBUG
									  : TW_LOG_INFO,
			"radsec-close", "reason=%s client=%s", reason, peer);
	}
	/* the replies held MPPE keys under a public secret */
	tw_wipe(k, sizeof(*k));
	k->fd = -1;
	k->state = C_FREE;
	rs->n_open--;
}

/* One connection from lfd's queue accepted (or refused); false when the
 * queue is empty. */
static bool accept_one(struct tw_srv_radsec *rs, int lfd, uint64_t now)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const struct tw_srv_client *cl;
	struct tw_srv_addr addr;
	struct conn *k = NULL;
	char peer[80];
	uint16_t port;
	size_t ci;
	int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;

	if (fd < 0)
		return false;
	tw_srv_sockaddr_text(&ss, peer, sizeof(peer));
	/* 1. only configured clients get as far as TLS */
	if (tw_srv_addr_from_sockaddr(&addr, &port, (struct sockaddr *)&ss) != TW_OK ||
	    (cl = tw_srv_clients_find(&rs->trust->clients, &addr)) == NULL) {
		count(rs, R_REJ_UNKNOWN);
		LOGC(rs, TW_LOG_INFO, "radsec-reject", "reason=unknown-client client=%s", peer);
		close(fd);
		return true;
	}
	ci = (size_t)(cl - rs->trust->clients.v);
	if (rs->n_open < rs->max_conns)
		for (unsigned i = 0; i < rs->max_conns; i++)
			if (rs->conns[i].state == C_FREE) {
				k = &rs->conns[i];
				break;
			}
	if (k == NULL) {
		count(rs, R_REJ_FULL);
		LOGC(rs, TW_LOG_WARN, "radsec-reject", "reason=full max=%u client=%s", rs->max_conns,
		     peer);
		close(fd);
		return true;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(k, 0, sizeof(*k));
	k->ssl = SSL_new(rs->trust->ctx[ci]);
	if (k->ssl == NULL || SSL_set_fd(k->ssl, fd) != 1 ||
	    (rs->trust->name[ci][0] != 0 &&
	     /* RFC 6614 §2.3 (RFC 6125 rules): the name the client's
	      * certificate must carry, subjectAltName DNS, else CN */
	     SSL_set1_host(k->ssl, rs->trust->name[ci]) != 1)) {
		if (k->ssl != NULL)
			SSL_free(k->ssl);
		ERR_clear_error();
		memset(k, 0, sizeof(*k));
		k->fd = -1;
		count(rs, R_REJ_FULL);
		close(fd);
		return true;
	}
	k->fd = fd;
	k->state = C_HANDSHAKE;
	k->peer = ss;
	k->deadline = now + rs->hs_ms;
	tw_radsec_rx_init(&k->rx);
	SSL_set_accept_state(k->ssl);
	rs->n_open++;
	count(rs, R_ACCEPTED);
	LOGC(rs, TW_LOG_DEBUG, "radsec-accept", "client=%s network=%s", peer, cl->name);
	return true;
}

/* What a failed SSL call means for the connection: true when it only
 * waits (for the socket to become readable or writable). */
static bool ssl_waits(struct conn *k, int ret)
{
	int e = SSL_get_error(k->ssl, ret);

	if (e == SSL_ERROR_WANT_READ) {
		k->want_write = false;
		return true;
	}
	if (e == SSL_ERROR_WANT_WRITE) {
		k->want_write = true;
		return true;
	}
	return false;
}

static void handshake(struct tw_srv_radsec *rs, struct conn *k, uint64_t now)
{
	int ret = SSL_do_handshake(k->ssl);
	char why[160], peer[80];

	if (ret == 1) {
		const unsigned char *proto = NULL;
		unsigned proto_len = 0;

		SSL_get0_alpn_selected(k->ssl, &proto, &proto_len);
		k->v11 = proto_len == 10 && memcmp(proto, alpn_11, 10) == 0;
		/* RFC 9765 §3.1: with require, no ALPN (or another) is the end;
		 * RADIUS/1.1 only over TLS 1.3 (§3.4) */
		int mode = (int)(intptr_t)SSL_CTX_get_app_data(SSL_get_SSL_CTX(k->ssl)) - 1;

		if ((mode == TW_SRV_RADSEC_ALPN_REQUIRE && !k->v11) ||
		    (k->v11 && SSL_version(k->ssl) < TLS1_3_VERSION)) {
			tw_srv_sockaddr_text(&k->peer, peer, sizeof(peer));
			tw_logf(&rs->w->log, TW_LOG_WARN, "radsec-alpn-refused",
				"client=%s tls=%s msg=\"RADIUS/1.1 (ALPN radius/1.1 over TLS 1.3) "
				"required\"", peer, SSL_get_version(k->ssl));
			count(rs, R_ALPN_REFUSED);
			conn_close(rs, k, R_CL_TLS_ERROR, "alpn");
			return;
		}
		if (k->v11)
			count(rs, R_V11);
		k->state = C_OPEN;
		k->want_write = false;
		k->deadline = now + rs->idle_ms;
		if (tw_log_enabled(TW_LOG_INFO)) {
			tw_srv_sockaddr_text(&k->peer, peer, sizeof(peer));
			tw_logf(&rs->w->log, TW_LOG_INFO, "radsec-open",
				"client=%s tls=%s cipher=%s protocol=%s", peer,
				SSL_get_version(k->ssl), SSL_get_cipher_name(k->ssl),
				k->v11 ? "radius/1.1" : "radius/1.0");
		}
		return;
	}
	if (ssl_waits(k, ret))
		return;
	/* 2. not TLS, no certificate, another CA, the wrong name... */
	{
		long v = SSL_get_verify_result(k->ssl);

		bool alpn = ERR_GET_REASON(ERR_peek_error()) == SSL_R_NO_APPLICATION_PROTOCOL;

		ssl_err_text(why, sizeof(why));
		count(rs, R_HS_FAIL);
		if (alpn)
			count(rs, R_ALPN_REFUSED);
		if (tw_log_enabled(TW_LOG_INFO)) {
			tw_srv_sockaddr_text(&k->peer, peer, sizeof(peer));
			tw_logf(&rs->w->log, TW_LOG_INFO, "radsec-handshake-failed",
				"client=%s reason=\"%s\" verify=\"%s\"", peer, why,
				v == X509_V_OK ? "-" : X509_verify_cert_error_string(v));
		}
	}
	conn_close(rs, k, R_CL_TLS_ERROR, "handshake");
}

/* Sends what is left of the pending reply. False: the connection failed
 * (closed). */
static bool flush(struct tw_srv_radsec *rs, struct conn *k)
{
	while (k->tx_off < k->tx_len) {
		int ret = SSL_write(k->ssl, k->tx + k->tx_off, (int)(k->tx_len - k->tx_off));

		if (ret > 0) {
			k->tx_off += (size_t)ret;
			continue;
		}
		if (ssl_waits(k, ret))
			return true;
		ERR_clear_error();
		conn_close(rs, k, R_CL_TLS_ERROR, "write");
		return false;
	}
	tw_wipe(k->tx, k->tx_len);
	k->tx_len = k->tx_off = 0;
	return true;
}

/* One request of k (pkt: len octets): its reply, if any, queued. */
static void request(struct tw_srv_radsec *rs, struct conn *k, const uint8_t *pkt, size_t len)
{
	struct tw_srv_addr addr;
	uint16_t port;
	size_t n = 0;

	switch (pkt[0]) {
	case TW_RADIUS_ACCESS_REQUEST:
	case TW_RADIUS_STATUS_SERVER:
		count(rs, pkt[0] == TW_RADIUS_ACCESS_REQUEST ? R_REQ_ACCESS : R_REQ_STATUS);
		/* the client table of the packet path is the RadSec one: the
		 * client is the TCP peer, its secret "radsec" */
		rs->w->v11 = k->v11;
		n = tw_srv_handle(rs->w, pkt, len, (const struct sockaddr *)&k->peer, rs->reply,
				  tw_srv_now_ms());
		break;
	case TW_RADIUS_ACCOUNTING_REQUEST:
		count(rs, R_REQ_ACCT);
		if (tw_srv_addr_from_sockaddr(&addr, &port, (const struct sockaddr *)&k->peer) ==
		    TW_OK)
			n = tw_srv_acct_stream(rs->srv, tw_srv_clients_find(&rs->trust->clients, &addr),
					       &addr, pkt, len, k->v11, rs->reply);
		break;
	default:
		count(rs, R_REQ_OTHER);
		break;
	}
	if (n == 0 || n > sizeof(k->tx)) {
		count(rs, R_DISCARDED);
		return;
	}
	memcpy(k->tx, rs->reply, n);
	tw_wipe(rs->reply, n);
	k->tx_len = n;
	k->tx_off = 0;
	count(rs, R_REPLIES);
}

/* Reads and answers what k has, PACKETS_PER_TURN requests at most.
 * Returns true when k still holds input to handle without a new poll (its
 * turn ran out, or TLS has decrypted octets buffered). */
static bool serve(struct tw_srv_radsec *rs, struct conn *k, uint64_t now)
{
	unsigned done = 0;

	if (k->state == C_HANDSHAKE) {
		handshake(rs, k, now);
		if (k->state != C_OPEN)
			return false;
	}
	for (;;) {
		const uint8_t *pkt;
		size_t len, room;
		uint8_t *space;
		int ret, rc;

		/* a reply waiting goes first; none read meanwhile */
		if (k->tx_len > 0 && (!flush(rs, k) || k->tx_len > 0))
			return false;
		if (done >= PACKETS_PER_TURN)
			return true;
		rc = tw_radsec_rx_next(&k->rx, &pkt, &len);
		if (rc != TW_OK) {
			conn_close(rs, k, R_CL_BAD_LENGTH, "bad-length");
			return false;
		}
		if (len > 0) {
			k->deadline = now + rs->idle_ms;
			request(rs, k, pkt, len);
			done++;
			continue;
		}
		space = tw_radsec_rx_space(&k->rx, &room);
		ret = SSL_read(k->ssl, space, (int)room);
		if (ret > 0) {
			tw_radsec_rx_got(&k->rx, (size_t)ret);
			continue;
		}
		if (ssl_waits(k, ret))
			return false;
		if (SSL_get_error(k->ssl, ret) == SSL_ERROR_ZERO_RETURN ||
		    (SSL_get_error(k->ssl, ret) == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
			ERR_clear_error();
			conn_close(rs, k, R_CL_PEER, "peer");
		} else {
			char why[160];

			ssl_err_text(why, sizeof(why));
			LOGC(rs, TW_LOG_INFO, "radsec-tls-error", "reason=\"%s\"", why);
			conn_close(rs, k, R_CL_TLS_ERROR, "tls-error");
		}
		return false;
	}
}

static void take_trust(struct tw_srv_radsec *rs)
{
	struct trust *t = atomic_exchange(&rs->next, NULL);

	if (t == NULL)
		return;
	trust_free(rs->trust);
	rs->trust = t;
	rs->w->clients = &t->clients;
	tw_logf(&rs->w->log, TW_LOG_INFO, "radsec-reload", "clients=%zu", t->n);
}

static void *radsec_run(void *arg)
{
	struct tw_srv_radsec *rs = arg;
	struct tw_srv *srv = rs->srv;
	struct tw_srv_loop l;
	bool busy = false;

	tw_srv_worker_begin(rs->w, &l);
	/* one request at a time, each signed on its own (no batch) */
	rs->w->defer_sign = false;
	rs->w->park_ok = false;
	rs->w->clients = &rs->trust->clients;
	while (!atomic_load_explicit(&srv->stop, memory_order_relaxed)) {
		uint64_t now = tw_srv_mono_ms(), next = now + TURN_MS;
		unsigned np = 0;
		int n, wait;

		take_trust(rs);
		for (unsigned i = 0; i < rs->nl; i++) {
			rs->pfd[np] = (struct pollfd){ rs->lfd[i], POLLIN, 0 };
			rs->pfd_conn[np++] = -1;
		}
		for (unsigned i = 0; i < rs->max_conns; i++) {
			struct conn *k = &rs->conns[i];

			if (k->state == C_FREE)
				continue;
			rs->pfd[np] = (struct pollfd){ k->fd,
						       (short)(k->want_write || k->tx_len > 0 ? POLLOUT
											  : POLLIN),
						       0 };
			rs->pfd_conn[np++] = (int)i;
			if (k->deadline < next)
				next = k->deadline;
		}
		wait = busy ? 0 : next > now ? (int)(next - now) : 0;
		n = poll(rs->pfd, np, wait);
		if (n < 0 && errno != EINTR)
			tw_logf(&rs->w->log, TW_LOG_ERROR, "socket-error", "op=poll port=radsec errno=%d",
				errno);
		/* a reload during the wait: the connections accepted below are
		 * already the new configuration's */
		take_trust(rs);
		now = tw_srv_mono_ms();
		busy = false;
		for (unsigned p = 0; p < np; p++) {
			int ci = rs->pfd_conn[p];
			struct conn *k;

			if (ci < 0) {
				if (rs->pfd[p].revents & POLLIN)
					for (int a = 0; a < ACCEPT_PER_TURN; a++)
						if (!accept_one(rs, rs->pfd[p].fd, now))
							break;
				continue;
			}
			k = &rs->conns[ci];
			/* a connection accepted in this turn is not in pfd yet;
			 * one closed and reused in it is served next turn */
			if (k->state == C_FREE || k->fd != rs->pfd[p].fd)
				continue;
			if (rs->pfd[p].revents != 0 ||
			    (k->state == C_OPEN && (SSL_pending(k->ssl) > 0 ||
						    tw_radsec_rx_pending(&k->rx) >= 4)))
				busy |= serve(rs, k, now);
		}
		/* 4. deadlines: a handshake not done, a connection idle */
		for (unsigned i = 0; i < rs->max_conns; i++) {
			struct conn *k = &rs->conns[i];

			if (k->state != C_FREE && now >= k->deadline)
				conn_close(rs, k, k->state == C_HANDSHAKE ? R_CL_HS_TIMEOUT : R_CL_IDLE,
					   k->state == C_HANDSHAKE ? "handshake-timeout" : "idle");
		}
		tw_log_flush(&rs->w->log);
	}
	for (unsigned i = 0; i < rs->max_conns; i++)
		if (rs->conns[i].state != C_FREE)
			conn_close(rs, &rs->conns[i], R_CL_SHUTDOWN, "stopping");
	tw_log_flush(&rs->w->log);
	return NULL;
}

int tw_srv_radsec_start(struct tw_srv *srv)
{
	struct tw_srv_radsec *rs = srv->radsec;
	char list[TW_SRV_RADSEC_MAX_LISTEN * 82] = "";

	if (rs == NULL)
		return TW_OK;
	if (pthread_create(&rs->thread, NULL, radsec_run, rs) != 0)
		return TW_ERR_NOMEM;
	rs->started = true;
	(void)pthread_setname_np(rs->thread, "twagd-radsec");
	for (unsigned i = 0; i < rs->nl; i++) {
		size_t used = strlen(list);

		snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "", rs->ltext[i]);
	}
	tw_log_always(NULL, TW_LOG_INFO, "radsec-ready",
		      "listen=%s clients=%zu max_connections=%u idle_timeout=%llu", list,
		      rs->trust->n, rs->max_conns, (unsigned long long)(rs->idle_ms / 1000));
	return TW_OK;
}

void tw_srv_radsec_stop(struct tw_srv *srv)
{
	struct tw_srv_radsec *rs = srv->radsec;

	if (rs == NULL)
		return;
	if (rs->started)
		pthread_join(rs->thread, NULL);
	srv->radsec = NULL;
	radsec_free(rs);
}

/* ---- metrics -------------------------------------------------------------------- */

struct tw_srv_counters *tw_srv_radsec_counters(struct tw_srv *srv)
{
	return srv->radsec != NULL ? &srv->radsec->w->ctr : NULL;
}

static uint64_t ctr(struct tw_srv_radsec *rs, unsigned c)
{
	return atomic_load_explicit(&rs->ctr[c], memory_order_relaxed);
}

size_t tw_srv_radsec_metrics(struct tw_srv *srv, char *buf, size_t max)
{
	struct tw_srv_radsec *rs = srv->radsec;
	struct out o = { buf, max, 0, false };
	static const struct {
		unsigned c;
		const char *reason;
	} closed[] = {
		{ R_CL_PEER, "peer" },           { R_CL_IDLE, "idle" },
		{ R_CL_HS_TIMEOUT, "handshake-timeout" }, { R_CL_BAD_LENGTH, "bad-length" },
		{ R_CL_TLS_ERROR, "tls-error" }, { R_CL_SHUTDOWN, "stopping" },
	}, reqs[] = {
		{ R_REQ_ACCESS, "access-request" }, { R_REQ_STATUS, "status-server" },
		{ R_REQ_ACCT, "accounting-request" }, { R_REQ_OTHER, "other" },
	};
	uint64_t open = 0;

	if (rs == NULL || buf == NULL || max == 0)
		return 0;
	open = ctr(rs, R_ACCEPTED);
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++)
		open -= ctr(rs, closed[i].c);
	head(&o, "twag_radsec_connections_accepted_total", "counter",
	     "RADIUS/TLS connections accepted (RFC 6614), before the TLS handshake");
	put(&o, "twag_radsec_connections_accepted_total %llu\n",
	    (unsigned long long)ctr(rs, R_ACCEPTED));
	head(&o, "twag_radsec_connections_rejected_total", "counter",
	     "RADIUS/TLS connections refused at accept, by reason");
	put(&o, "twag_radsec_connections_rejected_total{reason=\"unknown-client\"} %llu\n",
	    (unsigned long long)ctr(rs, R_REJ_UNKNOWN));
	put(&o, "twag_radsec_connections_rejected_total{reason=\"full\"} %llu\n",
	    (unsigned long long)ctr(rs, R_REJ_FULL));
	head(&o, "twag_radsec_connections_closed_total", "counter",
	     "RADIUS/TLS connections closed, by reason");
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++)
		put(&o, "twag_radsec_connections_closed_total{reason=\"%s\"} %llu\n",
		    closed[i].reason, (unsigned long long)ctr(rs, closed[i].c));
	head(&o, "twag_radsec_connections_open", "gauge", "RADIUS/TLS connections open");
	put(&o, "twag_radsec_connections_open %llu\n", (unsigned long long)open);
	head(&o, "twag_radsec_tls_handshake_failures_total", "counter",
	     "TLS handshakes that failed (not TLS, no or a wrong client certificate, ...)");
	put(&o, "twag_radsec_tls_handshake_failures_total %llu\n",
	    (unsigned long long)ctr(rs, R_HS_FAIL));
	head(&o, "twag_radsec_requests_total", "counter", "RADIUS packets received over TLS, by Code");
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
		put(&o, "twag_radsec_requests_total{code=\"%s\"} %llu\n", reqs[i].reason,
		    (unsigned long long)ctr(rs, reqs[i].c));
	head(&o, "twag_radsec_replies_total", "counter", "RADIUS replies sent over TLS");
	put(&o, "twag_radsec_replies_total %llu\n", (unsigned long long)ctr(rs, R_REPLIES));
	head(&o, "twag_radsec_v11_connections_total", "counter",
	     "RADIUS/TLS connections that negotiated RADIUS/1.1 (ALPN radius/1.1, RFC 9765)");
	put(&o, "twag_radsec_v11_connections_total %llu\n", (unsigned long long)ctr(rs, R_V11));
	head(&o, "twag_radsec_alpn_refused_total", "counter",
	     "RADIUS/TLS handshakes ended for want of a common ALPN protocol (--radsec-alpn)");
	put(&o, "twag_radsec_alpn_refused_total %llu\n",
	    (unsigned long long)ctr(rs, R_ALPN_REFUSED));
	head(&o, "twag_radsec_discarded_total", "counter",
	     "RADIUS packets over TLS that got no reply (silently discarded)");
	put(&o, "twag_radsec_discarded_total %llu\n", (unsigned long long)ctr(rs, R_DISCARDED));
	return o.overflow ? 0 : o.len;
}
