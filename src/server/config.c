/*
 * twag — twagd's configuration: defaults, a "key = value" file and the
 * command line (which overrides the file). The options and their meaning
 * are documented in docs/twagd.md and docs/twagd.conf.example.
 *
 * Errors name the option ("--threads: ...") or the file position
 * ("FILE:LINE: ..."), in one line, and the daemon exits 2.
 */
#include <errno.h>
#include <stddef.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/server.h"

#include "acct_srv.h"
#include "radsec.h"
#include "dynauth_srv.h"

enum opt_kind { K_STR, K_UINT, K_FLAG, K_CLIENT, K_SPECIAL };

struct opt {
	const char *name;
	enum opt_kind kind;
	unsigned long min, max; /* K_UINT range */
	/* the field the option sets, for what a reload changes (size 0: an
	 * option with no field of its own: client, config, help) */
	size_t off, size;
};

#define F(field) offsetof(struct tw_srv_config, field), sizeof(((struct tw_srv_config *)0)->field)

static const struct opt opts[] = {
	{ "listen", K_SPECIAL, 0, 0, F(listen) },
	{ "store", K_SPECIAL, 0, 0, F(store) },
	{ "client", K_CLIENT, 0, 0, 0, 0 },
	{ "network-name", K_SPECIAL, 0, 0, F(network_name) },
	{ "threads", K_UINT, 1, TW_SRV_MAX_THREADS, F(threads) },
	{ "metrics", K_SPECIAL, 0, 0, F(metrics) },
	{ "kek-file", K_STR, 0, 0, F(kek_file) },
	{ "config", K_STR, 0, 0, 0, 0 },
	{ "check-config", K_SPECIAL, 0, 0, 0, 0 },
	{ "realm", K_SPECIAL, 0, 0, F(realm) },
	{ "log-file", K_STR, 0, 0, F(log_file) },
	{ "log-level", K_SPECIAL, 0, 0, F(log_level) },
	{ "log-format", K_SPECIAL, 0, 0, F(log_format) },
	/* applied at once on SIGHUP (server.c reload), compared there */
	{ "debug-client", K_SPECIAL, 0, 0, 0, 0 },
	{ "debug-imsi", K_SPECIAL, 0, 0, 0, 0 },
	{ "max-sessions", K_UINT, TW_SRV_MIN_SESSIONS, TW_SRV_MAX_SESSIONS, F(max_sessions) },
	{ "session-timeout", K_UINT, 1, 86400, F(session_timeout) },
	{ "reply-session-timeout", K_UINT, 0, 0x7fffffff, F(reply_session_timeout) },
	{ "reauth-limit", K_UINT, 0, 65534, F(reauth_limit) },
	{ "no-fast-reauth", K_FLAG, 0, 0, F(fast_reauth) },
	{ "no-pseudonyms", K_FLAG, 0, 0, F(pseudonyms) },
	{ "no-udp-gso", K_FLAG, 0, 0, F(udp_gso) },
	{ "no-udp-gro", K_FLAG, 0, 0, F(udp_gro) },
	{ "spread-by-identifier", K_FLAG, 0, 0, F(spread_by_id) },
	{ "volatile-identities", K_FLAG, 0, 0, F(volatile_ids) },
	{ "no-result-ind", K_FLAG, 0, 0, F(result_ind) },
	{ "id-policy", K_SPECIAL, 0, 0, F(id_policy) },
	{ "methods", K_SPECIAL, 0, 0, F(methods) },
	{ "sim-fullauth-id-req", K_FLAG, 0, 0, F(sim_fullauth_id_req) },
	{ "pid-file", K_STR, 0, 0, F(pid_file) },
	{ "dup-cache", K_UINT, 16, 1 << 24, F(dup_entries) },
	{ "dup-expiry", K_UINT, 1, 600, F(dup_expiry) },
	{ "rx-coalesce-us", K_UINT, 0, TW_SRV_MAX_RX_COALESCE_US, F(rx_coalesce_us) },
	{ "sqn-block", K_UINT, 1, 1000000, F(sqn_block) },
	{ "resync-max", K_UINT, 1, 1000, F(resync_max) },
	{ "resync-window", K_UINT, 1, 86400, F(resync_window) },
	{ "resync-bad-max", K_UINT, 1, 1000, F(resync_bad_max) },
	{ "reauth-ttl", K_UINT, 1, 30 * 86400, F(reauth_ttl) },
	{ "pseudonym-ttl", K_UINT, 60, 365 * 86400, F(pseudonym_ttl) },
	{ "identity-cache", K_UINT, 16, 1 << 24, F(identity_cache) },
	{ "identity-flush-ms", K_UINT, 100, 60000, F(identity_flush_ms) },
	{ "subscriber-cache", K_UINT, 16, 1 << 26, F(subscriber_cache) },
	{ "help", K_FLAG, 0, 0, 0, 0 },
	/* operating: privilege drop, version (server.c, privdrop.c) */
	{ "user", K_SPECIAL, 0, 0, F(user) },
	{ "group", K_SPECIAL, 0, 0, F(group) },
	{ "version", K_FLAG, 0, 0, 0, 0 },
	/* RADIUS accounting: acct.c reads them (tw_srv_acct_config) */
	{ "acct-listen", K_SPECIAL, 0, 0, F(acct_listen) },
	{ "acct-max-sessions", K_SPECIAL, 0, 0, F(acct_max_sessions) },
	{ "acct-db", K_SPECIAL, 0, 0, F(acct_db) },
	{ "acct-history-days", K_SPECIAL, 0, 0, F(acct_history_days) },
	{ "acct-interim-interval", K_SPECIAL, 0, 0, F(acct_interim_interval) },
	/* RADIUS over TLS: radsec.c reads them (tw_srv_radsec_config). The
	 * certificate, key and clients are applied on SIGHUP (no field: not
	 * "pending"); the listeners and the connection table at a start. */
	{ "radsec-listen", K_SPECIAL, 0, 0, F(radsec_listen) },
	{ "radsec-client", K_SPECIAL, 0, 0, 0, 0 },
	{ "tls-cert", K_SPECIAL, 0, 0, 0, 0 },
	{ "tls-key", K_SPECIAL, 0, 0, 0, 0 },
	{ "radsec-idle-timeout", K_SPECIAL, 0, 0, F(radsec_idle_timeout) },
	{ "radsec-max-connections", K_SPECIAL, 0, 0, F(radsec_max_conns) },
	{ "radsec-alpn", K_SPECIAL, 0, 0, 0, 0 },
	/* dynamic authorization: dynauth.c reads them (tw_srv_dynauth_config) */
	{ "control-socket", K_SPECIAL, 0, 0, F(control_socket) },
	{ "dynauth-port", K_SPECIAL, 0, 0, F(dynauth_port) },
	{ "dynauth-timeout-ms", K_SPECIAL, 0, 0, F(dynauth_timeout_ms) },
	{ "dynauth-retries", K_SPECIAL, 0, 0, F(dynauth_retries) },
	{ "dynauth-check-interval", K_SPECIAL, 0, 0, F(dynauth_check_interval) },
	{ "dynauth-max-sessions", K_SPECIAL, 0, 0, F(dynauth_max_sessions) },
};

static const char *const method_names[TW_SRV_N_METHODS] = { "aka-prime", "aka", "sim" };

const char *tw_srv_method_name(unsigned m)
{
	return m < TW_SRV_N_METHODS ? method_names[m] : "none";
}

void tw_srv_config_defaults(struct tw_srv_config *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:%d", TW_SRV_DEFAULT_PORT);
	/* TS 24.302 §8.1.1: the access network identity of trusted WLAN */
	snprintf(c->network_name, sizeof(c->network_name), "WLAN");
	c->threads = n < 1 ? 1 : n > TW_SRV_MAX_THREADS ? TW_SRV_MAX_THREADS : (unsigned)n;
	c->log_level = TW_LOG_INFO;
	c->max_sessions = TW_SRV_DEFAULT_MAX_SESSIONS;
	c->session_timeout = TW_SRV_DEFAULT_SESSION_TIMEOUT;
	c->reply_session_timeout = TW_SRV_DEFAULT_REPLY_SESSION_TIMEOUT;
	c->dup_entries = TW_SRV_DEFAULT_DUP_ENTRIES;
	c->dup_expiry = TW_SRV_DEFAULT_DUP_EXPIRY;
	c->rx_coalesce_us = TW_SRV_DEFAULT_RX_COALESCE_US;
	c->reauth_limit = TW_SRV_DEFAULT_REAUTH_LIMIT;
	c->fast_reauth = c->pseudonyms = c->result_ind = c->udp_gso = c->udp_gro = true;
	c->id_policy = TW_EAP_ID_TRUST_EAP_IDENTITY;
	c->methods[0] = TW_SRV_M_AKA_PRIME;
	c->methods[1] = TW_SRV_M_AKA;
	c->methods[2] = TW_SRV_M_SIM;
	c->n_methods = 3;
	c->acct_max_sessions = TW_ACCT_DEFAULT_MAX_SESSIONS;
	c->acct_history_days = TW_ACCT_DEFAULT_HISTORY_DAYS;
	c->radsec_idle_timeout = TW_SRV_RADSEC_DEFAULT_IDLE;
	c->radsec_max_conns = TW_SRV_RADSEC_DEFAULT_MAX_CONNS;
	c->radsec_alpn = TW_SRV_RADSEC_ALPN_ALLOW;
	c->dynauth_port = TW_RADIUS_DYNAUTH_PORT;
	c->dynauth_timeout_ms = TW_SRV_DYNAUTH_DEFAULT_TIMEOUT_MS;
	c->dynauth_retries = TW_SRV_DYNAUTH_DEFAULT_RETRIES;
	c->dynauth_check_interval = TW_SRV_DYNAUTH_DEFAULT_CHECK;
	c->dynauth_max_sessions = TW_SRV_DYNAUTH_DEFAULT_MAX;
}

int tw_srv_sockaddr_parse(struct sockaddr_storage *ss, socklen_t *len,
			  const char *text, uint16_t default_port)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port_text = NULL, *h = text;
	size_t hlen;
	unsigned long port = default_port;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *end = strchr(text, ']');

		if (end == NULL)
			return TW_ERR_DECODE;
		h = text + 1;
		hlen = (size_t)(end - h);
		if (end[1] == ':')
			port_text = end + 2;
		else if (end[1] != 0)
			return TW_ERR_DECODE;
	} else {
		const char *colon = strrchr(text, ':');

		/* more than one ':' without brackets: a bare IPv6 address */
		if (colon != NULL && strchr(text, ':') == colon) {
			hlen = (size_t)(colon - text);
			port_text = colon + 1;
		} else {
			hlen = strlen(text);
		}
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return TW_ERR_DECODE;
	memcpy(host, h, hlen);
	host[hlen] = 0;
	if (port_text != NULL) {
		char *end;

		if (*port_text == 0)
			return TW_ERR_DECODE;
		errno = 0;
		port = strtoul(port_text, &end, 10);
		if (errno != 0 || *end != 0 || port > 65535 || port_text[0] == '-' ||
		    port_text[0] == '+')
			return TW_ERR_DECODE;
	}
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	{
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
			in->sin_family = AF_INET;
			in->sin_port = htons((uint16_t)port);
			*len = sizeof(*in);
			return TW_OK;
		}
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*in6);
			return TW_OK;
		}
	}
	return TW_ERR_DECODE;
}

static bool copy_str(char *dst, size_t max, const char *v)
{
	size_t n = strlen(v);

	if (n >= max)
		return false;
	memcpy(dst, v, n + 1);
	return true;
}

static int flag_value(const char *v, bool *out)
{
	if (v == NULL || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 ||
	    strcmp(v, "1") == 0 || strcmp(v, "on") == 0) {
		*out = true;
		return TW_OK;
	}
	if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0 ||
	    strcmp(v, "off") == 0) {
		*out = false;
		return TW_OK;
	}
	return TW_ERR_DECODE;
}

static int parse_methods(struct tw_srv_config *c, const char *v)
{
	uint8_t seen = 0;
	unsigned n = 0;
	const char *p = v;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		unsigned m;

		for (m = 0; m < TW_SRV_N_METHODS; m++)
			if (strlen(method_names[m]) == len &&
			    memcmp(method_names[m], p, len) == 0)
				break;
		if (m == TW_SRV_N_METHODS || (seen & (1u << m)))
			return TW_ERR_DECODE;
		seen |= (uint8_t)(1u << m);
		c->methods[n++] = (uint8_t)m;
		if (comma == NULL)
			break;
		p = comma + 1;
		if (*p == 0)
			return TW_ERR_DECODE;
	}
	if (n == 0)
		return TW_ERR_DECODE;
	c->n_methods = n;
	return TW_OK;
}

/* Applies one option. where names it in messages ("--x" or "FILE:LINE"). */
static int set_opt(struct tw_srv_config *c, const struct opt *o, const char *v,
		   bool cmdline, const char *where, char *err, size_t err_len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	bool b;

	switch (o->kind) {
	case K_FLAG:
		if (flag_value(v, &b) != TW_OK) {
			snprintf(err, err_len, "%s: %s takes yes or no", where, o->name);
			return TW_ERR_INVAL;
		}
		if (strcmp(o->name, "no-fast-reauth") == 0)
			c->fast_reauth = !b;
		else if (strcmp(o->name, "no-pseudonyms") == 0)
			c->pseudonyms = !b;
		else if (strcmp(o->name, "no-udp-gso") == 0)
			c->udp_gso = !b;
		else if (strcmp(o->name, "no-udp-gro") == 0)
			c->udp_gro = !b;
		else if (strcmp(o->name, "spread-by-identifier") == 0)
			c->spread_by_id = b;
		else if (strcmp(o->name, "volatile-identities") == 0)
			c->volatile_ids = b;
		else if (strcmp(o->name, "no-result-ind") == 0)
			c->result_ind = !b;
		else if (strcmp(o->name, "sim-fullauth-id-req") == 0)
			c->sim_fullauth_id_req = b;
		else if (strcmp(o->name, "help") == 0)
			c->help = b;
		else if (strcmp(o->name, "version") == 0)
			c->version = b;
		return TW_OK;
	case K_UINT: {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (*v == 0 || *v == '-' || *v == '+' || *end != 0 || errno != 0 ||
		    n < o->min || n > o->max) {
			snprintf(err, err_len, "%s: %s must be an integer in %lu..%lu",
				 where, o->name, o->min, o->max);
			return TW_ERR_INVAL;
		}
		if (strcmp(o->name, "threads") == 0)
			c->threads = (unsigned)n;
		else if (strcmp(o->name, "max-sessions") == 0)
			c->max_sessions = (unsigned)n;
		else if (strcmp(o->name, "session-timeout") == 0)
			c->session_timeout = (unsigned)n;
		else if (strcmp(o->name, "reply-session-timeout") == 0)
			c->reply_session_timeout = (unsigned)n;
		else if (strcmp(o->name, "reauth-limit") == 0)
			c->reauth_limit = (unsigned)n;
		else if (strcmp(o->name, "dup-cache") == 0)
			c->dup_entries = (unsigned)n;
		else if (strcmp(o->name, "dup-expiry") == 0)
			c->dup_expiry = (unsigned)n;
		else if (strcmp(o->name, "rx-coalesce-us") == 0)
			c->rx_coalesce_us = (unsigned)n;
		else if (strcmp(o->name, "sqn-block") == 0)
			c->sqn_block = (unsigned)n;
		else if (strcmp(o->name, "resync-max") == 0)
			c->resync_max = (unsigned)n;
		else if (strcmp(o->name, "resync-window") == 0)
			c->resync_window = (unsigned)n;
		else if (strcmp(o->name, "resync-bad-max") == 0)
			c->resync_bad_max = (unsigned)n;
		else if (strcmp(o->name, "reauth-ttl") == 0)
			c->reauth_ttl = (unsigned)n;
		else if (strcmp(o->name, "pseudonym-ttl") == 0)
			c->pseudonym_ttl = (unsigned)n;
		else if (strcmp(o->name, "identity-cache") == 0)
			c->identity_cache = (unsigned)n;
		else if (strcmp(o->name, "identity-flush-ms") == 0)
			c->identity_flush_ms = (unsigned)n;
		else if (strcmp(o->name, "subscriber-cache") == 0)
			c->subscriber_cache = (unsigned)n;
		return TW_OK;
	}
	case K_CLIENT: {
		/* command line "IP[/PREFIX]=SECRET"; file "IP[/PREFIX] SECRET"
		 * (the secret is the rest of the line) or the '=' form */
		char spec[80];
		const char *sep = cmdline ? strchr(v, '=') : strpbrk(v, " \t=");
		const char *secret;
		size_t slen;
		int rc;

		if (sep == NULL || sep == v || (size_t)(sep - v) >= sizeof(spec)) {
			snprintf(err, err_len, "%s: client must be %s", where,
				 cmdline ? "IP[/PREFIX]=SECRET" : "IP[/PREFIX] SECRET");
			return TW_ERR_INVAL;
		}
		memcpy(spec, v, (size_t)(sep - v));
		spec[sep - v] = 0;
		secret = sep + 1;
		if (!cmdline)
			while (*secret == ' ' || *secret == '\t')
				secret++;
		slen = strlen(secret);
		rc = tw_srv_clients_add(&c->clients, spec, (const uint8_t *)secret, slen,
					cmdline, err, err_len);
		if (rc != TW_OK) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%s", err);
			snprintf(err, err_len, "%s: %s", where, msg);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	case K_STR:
		if (!copy_str(strcmp(o->name, "kek-file") == 0 ? c->kek_file :
			      strcmp(o->name, "config") == 0 ? c->config_file :
			      strcmp(o->name, "log-file") == 0 ? c->log_file : c->pid_file,
			      TW_SRV_PATH_MAX, v) || *v == 0) {
			snprintf(err, err_len, "%s: %s must be a path", where, o->name);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	case K_SPECIAL:
		break;
	}
	if (strncmp(o->name, "acct-", 5) == 0)
		return tw_srv_acct_config(c, o->name, v, where, err, err_len);
	if (strncmp(o->name, "radsec-", 7) == 0 || strncmp(o->name, "tls-", 4) == 0)
		return tw_srv_radsec_config(c, o->name, v, cmdline, where, err, err_len);
	if (strncmp(o->name, "dynauth-", 8) == 0 || strcmp(o->name, "control-socket") == 0)
		return tw_srv_dynauth_config(c, o->name, v, where, err, err_len);
	if (strcmp(o->name, "listen") == 0 || strcmp(o->name, "metrics") == 0) {
		bool listen = o->name[0] == 'l';

		if (tw_srv_sockaddr_parse(&ss, &sl, v, listen ? TW_SRV_DEFAULT_PORT : 9812) !=
			    TW_OK ||
		    !copy_str(listen ? c->listen : c->metrics, sizeof(c->listen), v)) {
			snprintf(err, err_len, "%s: %s must be IP:PORT or [IPv6]:PORT",
				 where, o->name);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "store") == 0) {
		const char *path = v;

		size_t scheme = strspn(v, "abcdefghijklmnopqrstuvwxyz");

		if (strncmp(v, "sqlite:", 7) == 0) {
			path = v + 7;
		} else if (scheme > 1 && v[scheme] == ':') {
			snprintf(err, err_len, "%s: store: only sqlite:PATH is supported", where);
			return TW_ERR_INVAL;
		}
		if (*path == 0 || !copy_str(c->store, sizeof(c->store), path)) {
			snprintf(err, err_len, "%s: store must be sqlite:PATH", where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "network-name") == 0) {
		if (*v == 0 || !copy_str(c->network_name, sizeof(c->network_name), v)) {
			snprintf(err, err_len, "%s: network-name must be 1..255 octets", where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "realm") == 0) {
		if (!copy_str(c->realm, sizeof(c->realm), v) || strchr(v, '@') != NULL) {
			snprintf(err, err_len, "%s: realm must be at most %d octets, no '@'",
				 where, TW_EAP_REALM_MAX);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "log-level") == 0) {
		static const char *const lv[] = { "error", "warn", "info", "debug" };

		for (unsigned i = 0; i < 4; i++)
			if (strcmp(v, lv[i]) == 0) {
				c->log_level = (enum tw_log_level)i;
				return TW_OK;
			}
		snprintf(err, err_len, "%s: log-level must be error, warn, info or debug", where);
		return TW_ERR_INVAL;
	}
	if (strcmp(o->name, "log-format") == 0) {
		if (strcmp(v, "text") == 0)
			c->log_format = TW_LOG_TEXT;
		else if (strcmp(v, "json") == 0)
			c->log_format = TW_LOG_JSON;
		else {
			snprintf(err, err_len, "%s: log-format must be text or json", where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "debug-client") == 0 || strcmp(o->name, "debug-imsi") == 0) {
		char why[96];

		if (tw_srv_debug_add(&c->debug, o->name[6] == 'i', v, why, sizeof(why)) != TW_OK) {
			snprintf(err, err_len, "%s: %s", where, why);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "id-policy") == 0) {
		if (strcmp(v, "trust") == 0)
			c->id_policy = TW_EAP_ID_TRUST_EAP_IDENTITY;
		else if (strcmp(v, "any") == 0)
			c->id_policy = TW_EAP_ID_ALWAYS_ANY;
		else if (strcmp(v, "permanent") == 0)
			c->id_policy = TW_EAP_ID_ALWAYS_PERMANENT;
		else {
			snprintf(err, err_len, "%s: id-policy must be trust, any or permanent", where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "methods") == 0) {
		if (parse_methods(c, v) != TW_OK) {
			snprintf(err, err_len,
				 "%s: methods must be a comma list of aka-prime, aka, sim", where);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	if (strcmp(o->name, "user") == 0 || strcmp(o->name, "group") == 0) {
		bool user = o->name[0] == 'u';

		/* a name as passwd(5) and group(5) hold it: one line, no ':' */
		if (*v == 0 || strpbrk(v, ": \t\n") != NULL ||
		    !copy_str(user ? c->user : c->group, sizeof(c->user), v)) {
			snprintf(err, err_len,
				 "%s: %s must be a name (at most %zu octets, no ':' or blank)",
				 where, o->name, sizeof(c->user) - 1);
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	snprintf(err, err_len, "%s: unhandled option %s", where, o->name);
	return TW_ERR_INVAL;
}

/* At most 40 octets of s[0..n) for a message, which must stay one line
 * (twagd's stderr, the log on SIGHUP): a control character (an argument's
 * newline) becomes '?'. out holds 41. */
static const char *word_of(char out[static 41], const char *s, size_t n)
{
	size_t k;

	for (k = 0; k < n && k < 40 && s[k] != 0; k++)
		out[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
	out[k] = 0;
	return out;
}

static const struct opt *find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strlen(opts[i].name) == len && memcmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/*
 * Where the problems of a checking load go (tw_srv_config_check_load):
 * each one is said and the load goes on to the next line or argument;
 * without a checker the first one ends the load.
 */
struct tw_srv_check {
	void (*say)(void *arg, const char *problem);
	void *arg;
	unsigned n;
};

/* A problem (in err): said when checking (true: go on), else false. */
static bool noted(struct tw_srv_check *ck, const char *err)
{
	if (ck == NULL)
		return false;
	ck->n++;
	if (ck->say != NULL)
		ck->say(ck->arg, err);
	return true;
}

/* Reads a config file; with clients_only, every other key is skipped (but
 * still checked to be a known key). */
static int read_file(struct tw_srv_config *c, const char *path, bool clients_only,
		     struct tw_srv_check *ck, char *err, size_t err_len)
{
	char line[2048];
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = TW_OK;

	if (f == NULL) {
		snprintf(err, err_len, "--config: cannot open %s: %s", path, strerror(errno));
		noted(ck, err);
		return TW_ERR_INVAL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char where[TW_SRV_PATH_MAX + 16], *key, *val = NULL, *eq;
		const struct opt *o;

		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (strchr(line, '\n') == NULL && !feof(f)) {
			/* the rest of the file is not read: what follows may
			 * be no text at all (a device, a binary file) */
			snprintf(err, err_len, "%s: line too long (the rest of the file is not read)",
				 where);
			rc = TW_ERR_INVAL;
			noted(ck, err);
			break;
		}
		key = trim(line);
		if (*key == 0 || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (eq != NULL) {
			*eq = 0;
			val = trim(eq + 1);
			key = trim(key);
		}
		o = find_opt(key, strlen(key));
		if (o == NULL || strcmp(key, "config") == 0 || strcmp(key, "help") == 0 ||
		    strcmp(key, "check-config") == 0 ||
		    strcmp(key, "version") == 0) {
			/* only the first word: a line like "client 10.0.0.1
			 * SECRET" (no '=') must not put the secret into the
			 * message, which SIGHUP writes to the log */
			size_t kl = strcspn(key, " \t");
			char word[41];

			snprintf(err, err_len, "%s: unknown key '%s'%s", where,
				 word_of(word, key, kl), key[kl] != 0 ? " (key = value)" : "");
			rc = TW_ERR_INVAL;
			if (noted(ck, err))
				continue;
			break;
		}
		if (o->kind != K_FLAG && (val == NULL || *val == 0)) {
			snprintf(err, err_len, "%s: %s needs a value (key = value)", where, key);
			rc = TW_ERR_INVAL;
			if (noted(ck, err))
				continue;
			break;
		}
		if (clients_only && o->kind != K_CLIENT)
			continue;
		if (set_opt(c, o, val, false, where, err, err_len) != TW_OK) {
			rc = TW_ERR_INVAL;
			if (noted(ck, err))
				continue;
			break;
		}
	}
	if ((rc == TW_OK || ck != NULL) && ferror(f)) {
		snprintf(err, err_len, "--config: error reading %s", path);
		rc = TW_ERR_INVAL;
		noted(ck, err);
	}
	tw_wipe(line, sizeof(line)); /* it held secrets */
	fclose(f);
	return rc;
}

/* Walks argv: pass 0 only finds --config, --check-config and --help,
 * pass 1 applies the rest (and, checking, says the problems). */
static int walk_args(struct tw_srv_config *c, int argc, char **argv, int pass,
		     struct tw_srv_check *ck, char *err, size_t err_len)
{
	/* a problem of the command line: said once, in pass 1, and the
	 * walk goes on with the next argument (a block, not do-while: its
	 * continue is the loop's) */
#define ARG_PROBLEM()                                                       \
	{                                                                   \
		rc = TW_ERR_INVAL;                                          \
		if (ck == NULL)                                             \
			return TW_ERR_INVAL;                                \
		if (pass == 1)                                              \
			noted(ck, err);                                     \
		continue;                                                   \
	}
	int rc = TW_OK;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *val = NULL, *eq;
		char where[64], word[41];
		const struct opt *o;
		size_t nlen;

		if (strncmp(a, "--", 2) != 0 || a[2] == 0) {
			/* a stray word may be a secret ("--client=IP SECRET"):
			 * named by position, echoed only if it looks like a
			 * mistyped option */
			if (a[0] == '-')
				snprintf(err, err_len, "unexpected argument '%s' (see --help)",
					 word_of(word, a, 40));
			else
				snprintf(err, err_len,
					 "unexpected argument %d: not an --option (see --help)", i);
			ARG_PROBLEM();
		}
		name = a + 2;
		eq = strchr(name, '=');
		nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
		o = find_opt(name, nlen);
		snprintf(where, sizeof(where), "--%s", word_of(word, name, nlen));
		if (o == NULL) {
			snprintf(err, err_len, "%s: unknown option (see --help)", where);
			ARG_PROBLEM();
		}
		if (strcmp(o->name, "check-config") == 0) {
			/* --check-config [FILE]: the file is the next argument
			 * unless that is an option */
			if (eq != NULL)
				val = eq + 1;
			else if (i + 1 < argc && argv[i + 1][0] != '-')
				val = argv[++i];
			if (pass == 0) {
				c->check_config = true;
				if (val != NULL &&
				    !copy_str(c->config_file, sizeof(c->config_file), val)) {
					snprintf(err, err_len, "--check-config: path too long");
					if (ck == NULL)
						return TW_ERR_INVAL;
					noted(ck, err);
					rc = TW_ERR_INVAL;
				}
			}
			continue;
		}
		if (o->kind == K_FLAG) {
			if (eq != NULL) {
				snprintf(err, err_len, "%s: takes no value", where);
				ARG_PROBLEM();
			}
		} else if (eq != NULL) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			snprintf(err, err_len, "%s: needs a value", where);
			ARG_PROBLEM();
		}
		if (pass == 0) {
			if (strcmp(o->name, "help") == 0)
				c->help = true;
			else if (strcmp(o->name, "version") == 0)
				c->version = true;
			else if (strcmp(o->name, "config") == 0 &&
				 set_opt(c, o, val, true, where, err, err_len) != TW_OK) {
				if (ck == NULL)
					return TW_ERR_INVAL;
				noted(ck, err);
				rc = TW_ERR_INVAL;
			}
			continue;
		}
		if (strcmp(o->name, "config") == 0)
			continue;
		if (set_opt(c, o, val, true, where, err, err_len) != TW_OK)
			ARG_PROBLEM();
	}
#undef ARG_PROBLEM
	return rc;
}

/* The problems of tw_srv_radsec_config_check: each one noted when
 * checking, else the first kept in err. */
struct radsec_say {
	struct tw_srv_check *ck;
	char *err;
	size_t err_len;
	unsigned n;
};

static void radsec_said(void *arg, const char *problem)
{
	struct radsec_say *rs = arg;

	if (rs->n++ == 0 || rs->ck != NULL)
		snprintf(rs->err, rs->err_len, "%s", problem);
	noted(rs->ck, problem);
}

static int load(struct tw_srv_config *c, int argc, char **argv, struct tw_srv_check *ck,
		char *err, size_t err_len)
{
	int rc, bad = TW_OK;

	err[0] = 0;
	rc = walk_args(c, argc, argv, 0, ck, err, err_len);
	if ((rc != TW_OK && ck == NULL) || c->help || c->version)
		return rc;
	bad = rc;
	if (c->config_file[0] != 0) {
		rc = read_file(c, c->config_file, false, ck, err, err_len);
		if (rc != TW_OK && ck == NULL)
			return rc;
		bad = bad != TW_OK ? bad : rc;
	}
	rc = walk_args(c, argc, argv, 1, ck, err, err_len);
	if ((rc != TW_OK && ck == NULL) || c->help)
		return rc;
	bad = bad != TW_OK ? bad : rc;
	if (c->store[0] == 0) {
		snprintf(err, err_len, "--store: missing (sqlite:PATH)");
		if (!noted(ck, err))
			return TW_ERR_INVAL;
		bad = TW_ERR_INVAL;
	}
	if (c->clients.n == 0 && c->radsec_clients.n == 0) {
		snprintf(err, err_len, "--client: at least one IP[/PREFIX]=SECRET is needed");
		if (!noted(ck, err))
			return TW_ERR_INVAL;
		bad = TW_ERR_INVAL;
	}
	{
		/* --radsec-listen without what it needs */
		struct radsec_say rs = { ck, err, err_len, 0 };

		if (tw_srv_radsec_config_check(c, radsec_said, &rs) > 0) {
			if (ck == NULL)
				return TW_ERR_INVAL;
			bad = TW_ERR_INVAL;
		}
	}
	return bad;
}

int tw_srv_config_load(struct tw_srv_config *c, int argc, char **argv, char *err,
		       size_t err_len)
{
	return load(c, argc, argv, NULL, err, err_len);
}

unsigned tw_srv_config_check_load(struct tw_srv_config *c, int argc, char **argv,
				  void (*say)(void *arg, const char *problem), void *arg)
{
	struct tw_srv_check ck = { say, arg, 0 };
	char err[512];

	if (load(c, argc, argv, &ck, err, sizeof(err)) != TW_OK && ck.n == 0) {
		/* (a failure with nothing said cannot happen; count it) */
		ck.n = 1;
		if (say != NULL)
			say(arg, err[0] ? err : "configuration refused");
	}
	return ck.n;
}

void tw_srv_config_changes(const struct tw_srv_config *a, const struct tw_srv_config *b,
			   void (*say)(void *arg, const char *key), void *arg)
{
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct opt *o = &opts[i];
		bool differ;

		if (o->size == 0)
			continue;
		/* the text fields (paths, addresses, names) up to their NUL:
		 * a longer value overridden by a shorter one leaves octets
		 * behind it */
		if (o->size >= 16)
			differ = strncmp((const char *)a + o->off, (const char *)b + o->off,
					 o->size) != 0;
		else
			differ = memcmp((const char *)a + o->off, (const char *)b + o->off,
					o->size) != 0;
		if (strcmp(o->name, "methods") == 0)
			differ = a->n_methods != b->n_methods ||
				 memcmp(a->methods, b->methods, a->n_methods) != 0;
		if (differ)
			say(arg, o->name);
	}
}

int tw_srv_config_reload_clients(const struct tw_srv_config *c,
				 struct tw_srv_clients *out, char *err, size_t err_len)
{
	struct tw_srv_config tmp;
	int rc = TW_OK;

	memset(out, 0, sizeof(*out));
	tw_srv_config_defaults(&tmp);
	if (c->config_file[0] != 0)
		rc = read_file(&tmp, c->config_file, true, NULL, err, err_len);
	/* command-line clients win over the file's, as at start-up */
	if (rc == TW_OK)
		rc = tw_srv_clients_copy_cmdline(&tmp.clients, &c->clients);
	if (rc == TW_OK && tmp.clients.n == 0) {
		snprintf(err, err_len, "%s: no client left", c->config_file);
		rc = TW_ERR_INVAL;
	}
	if (rc != TW_OK) {
		tw_srv_clients_free(&tmp.clients);
		return TW_ERR_INVAL;
	}
	*out = tmp.clients;
	tw_wipe(&tmp, sizeof(tmp));
	return TW_OK;
}

void tw_srv_config_free(struct tw_srv_config *c)
{
	tw_srv_clients_free(&c->clients);
	tw_srv_radsec_config_free(c);
}
