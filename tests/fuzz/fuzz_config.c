/*
 * Fuzz target: twagd's configuration (src/server/config.c and the client
 * table of src/server/clients.c it fills): tw_srv_config_load over a
 * configuration file that is the input (in a memfd, opened by its
 * /proc/self/fd path as "--config"), and with it some command-line
 * options; then, on success, tw_srv_config_reload_clients (SIGHUP) of the
 * same file.
 *
 * Input: one octet, then the text. Bit 0: after the file's text, up to
 * its first NUL, come command-line arguments, NUL-separated. Bits 1-2:
 * where --config points: the memfd; nowhere (no --config, the text is
 * all arguments); a file that does not exist; a directory. Bit 3: before
 * the reload the file is cut to its first half (edited before SIGHUP). An
 * input whose arguments give --config a value that would be opened is
 * skipped (it would read another file).
 *
 * Invariants (include/twag/server.h, docs/twagd.md): every accepted
 * configuration keeps each value within its documented bounds (the
 * integers in their ranges, 0 meaning "the store's default" where the
 * option is optional; paths and names NUL-terminated inside their arrays;
 * listen and metrics addresses that parse; a realm without '@'; one to
 * three distinct methods; a store path), and a client table of at least
 * one client whose networks are distinct, have no host bits, secrets of
 * 1..TW_SRV_SECRET_MAX octets, and are found again by tw_srv_clients_find
 * (the most specific network holding it) as a linear scan finds it, for
 * each network, the addresses next to it and a few fixed ones. Only the
 * memfd, or no --config, gives a configuration. The reload of the same
 * file succeeds with the same clients and secrets; of the cut file, it
 * keeps the command line's clients, or fails with a message and no
 * table. A refusal has a message of one line, with no control character
 * of the input in it; it names an unknown key by its first word only (at
 * most 40 octets), and a client line's message does not change when the
 * secret on that line does (config.c keeps secrets out of messages, which
 * SIGHUP logs). Everything is freed: ASan's leak check is on.
 *
 * Seeds (tests/fuzz/corpus/config/) were written by hand from
 * docs/twagd.conf.example: a full file, every key with a value at and
 * past its bounds, flags with and without yes/no, IPv4 and IPv6 clients
 * with prefixes (the same network twice, host bits set), secrets of 1 and
 * 129 octets, a line too long, unknown keys, the client line without '=',
 * command lines that override the file or stand alone, each place
 * --config may point to, and reloads of a cut file.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "twag/server.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

enum { MAX_ARGS = 32, ERR_MAX = 512 };

static int fd = -1;
static char path[64];

static void put_file(const uint8_t *text, size_t len)
{
	if (fd < 0) {
		fd = memfd_create("twagd.conf", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (len != 0 && pwrite(fd, text, len, 0) != (ssize_t)len))
		abort();
}

static bool bounded(const char *s, size_t max)
{
	return memchr(s, '\0', max) != NULL;
}

static bool in(unsigned v, unsigned min, unsigned max)
{
	return v >= min && v <= max;
}

/* An optional setting: 0 (the default elsewhere) or in [min, max]. */
static bool opt_in(unsigned v, unsigned min, unsigned max)
{
	return v == 0 || in(v, min, max);
}

/* The first bits of a and b agree. */
static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned n = bits / 8, r = bits % 8;

	if (memcmp(a, b, n) != 0)
		return false;
	return r == 0 || ((a[n] ^ b[n]) & (uint8_t)(0xff << (8 - r))) == 0;
}

/* The client a linear scan finds for addr: the longest prefix holding it. */
static const struct tw_srv_client *scan(const struct tw_srv_clients *t,
					const struct tw_srv_addr *addr)
{
	const struct tw_srv_client *best = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct tw_srv_client *c = &t->v[i];

		if (c->net.family == addr->family && prefix_eq(c->net.a, addr->a, c->prefix) &&
		    (best == NULL || c->prefix > best->prefix))
			best = c;
	}
	return best;
}

/* tw_srv_clients_find agrees with the scan for addr. */
static void probe(const struct tw_srv_clients *t, const struct tw_srv_addr *addr)
{
	if (tw_srv_clients_find(t, addr) != scan(t, addr))
		abort();
}

/*
 * A client's network address as the socket gives it (sockaddr_in,
 * sockaddr_in6, and an IPv4 one also as ::ffff:a.b.c.d on a dual-stack
 * socket) is the same address, with the port, and finds the same entry;
 * its text form reads back as itself, and a buffer too small for it gets
 * an empty string.
 */
static void sockaddr_forms(const struct tw_srv_clients *t, const struct tw_srv_client *c)
{
	struct sockaddr_storage ss;
	struct tw_srv_addr a, b;
	char text[INET6_ADDRSTRLEN], tiny[2] = "x";
	uint16_t port = 0;
	unsigned prefix;

	for (int form = 0; form < (c->net.family == 4 ? 2 : 1); form++) {
		memset(&ss, 0, sizeof(ss));
		if (c->net.family == 4 && form == 0) {
			struct sockaddr_in *in = (struct sockaddr_in *)&ss;

			in->sin_family = AF_INET;
			in->sin_port = htons(1812);
			memcpy(&in->sin_addr, c->net.a, 4);
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
			uint8_t *b6 = (uint8_t *)&in6->sin6_addr;

			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(1812);
			if (c->net.family == 4) {
				b6[10] = b6[11] = 0xff;
				memcpy(b6 + 12, c->net.a, 4);
			} else {
				memcpy(b6, c->net.a, 16);
			}
		}
		/* the port asked for or not, by the prefix's last bit */
		bool want = (c->prefix & 1) != (unsigned)form;

		port = 0;
		if (tw_srv_addr_from_sockaddr(&a, want ? &port : NULL, (struct sockaddr *)&ss) !=
			    TW_OK ||
		    !tw_srv_addr_eq(&a, &c->net) || (want && port != 1812) ||
		    tw_srv_clients_find(t, &a) != tw_srv_clients_find(t, &c->net))
			abort();
	}
	tw_srv_addr_text(&c->net, text, sizeof(text));
	if (tw_srv_addr_parse(&b, &prefix, text) != TW_OK || !tw_srv_addr_eq(&b, &c->net) ||
	    prefix != (c->net.family == 4 ? 32u : 128u))
		abort();
	tw_srv_addr_text(&c->net, tiny, sizeof(tiny));
	if (tiny[0] != '\0')
		abort();
	tiny[0] = 'y';
	tw_srv_addr_text(&c->net, tiny, 0);
	if (tiny[0] != 'y')
		abort();
}

/* The API contract, once per process. */
static void contract(void)
{
	static void *volatile nul;
	struct sockaddr_storage ss;
	struct tw_srv_addr a = { 4, { 127, 0, 0, 1 } };
	unsigned prefix;

	if (tw_srv_addr_parse(nul, &prefix, "127.0.0.1") != TW_ERR_INVAL ||
	    tw_srv_addr_parse(&a, nul, "127.0.0.1") != TW_ERR_INVAL ||
	    tw_srv_addr_parse(&a, &prefix, nul) != TW_ERR_INVAL)
		abort();
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	if (tw_srv_addr_from_sockaddr(&a, NULL, (struct sockaddr *)&ss) != TW_ERR_UNSUPPORTED)
		abort();
	a.family = 4;
	if (tw_srv_clients_find(nul, &a) != NULL)
		abort();
	tw_srv_clients_free(nul);
}

static void check_clients(const struct tw_srv_clients *t)
{
	static const struct tw_srv_addr fixed[] = {
		{ 4, { 0 } }, { 6, { 0 } }, { 0, { 0 } },
		{ 4, { 255, 255, 255, 255 } },
		{ 6, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		       0xff, 0xff, 0xff, 0xff } },
		{ 4, { 127, 0, 0, 1 } }, { 4, { 10, 20, 30, 40 } },
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		probe(t, &fixed[i]);
	if (t->n == 0 || t->n > t->cap)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		const struct tw_srv_client *c = &t->v[i];
		unsigned max = c->net.family == 4 ? 32 : 128;
		uint8_t zero[16] = { 0 };

		if ((c->net.family != 4 && c->net.family != 6) || c->prefix > max ||
		    c->key.len == 0 || c->key.len > TW_SRV_SECRET_MAX ||
		    !bounded(c->name, sizeof(c->name)) || c->name[0] == '\0')
			abort();
		/* no host bits: the address masked to the prefix is itself */
		{
			uint8_t masked[16] = { 0 };

			memcpy(masked, c->net.a, c->prefix / 8);
			if (c->prefix % 8)
				masked[c->prefix / 8] =
					c->net.a[c->prefix / 8] & (uint8_t)(0xff << (8 - c->prefix % 8));
			if (memcmp(masked, c->net.a, 16) != 0)
				abort();
		}
		if (c->net.family == 4 && memcmp(c->net.a + 4, zero, 12) != 0)
			abort();
		for (size_t j = 0; j < i; j++)
			if (t->v[j].net.family == c->net.family && t->v[j].prefix == c->prefix &&
			    memcmp(t->v[j].net.a, c->net.a, 16) == 0)
				abort();
		const struct tw_srv_client *d = tw_srv_clients_find(t, &c->net);
		if (d == NULL || d->net.family != c->net.family || d->prefix < c->prefix ||
		    !prefix_eq(d->net.a, c->net.a, d->prefix))
			abort();
		sockaddr_forms(t, c);
		/* the exact look-up finds the entry itself, and no entry for
		 * its network with a prefix no entry has */
		if (tw_srv_clients_get(t, c) != c)
			abort();
		{
			struct tw_srv_client x = *c;
			unsigned max_p = c->net.family == 4 ? 32 : 128;
			bool other = false;

			x.prefix = c->prefix == max_p ? 0 : max_p;
			memset(x.net.a, 0, sizeof(x.net.a));
			if (x.prefix == max_p)
				memcpy(x.net.a, c->net.a, 16);
			for (size_t j = 0; j < t->n; j++)
				other |= t->v[j].net.family == x.net.family &&
					 t->v[j].prefix == x.prefix &&
					 memcmp(t->v[j].net.a, x.net.a, 16) == 0;
			if (!other && tw_srv_clients_get(t, &x) != NULL)
				abort();
		}
		/* its network, and next to it: the last bit of the prefix
		 * and the last bit of the address flipped */
		probe(t, &c->net);
		{
			struct tw_srv_addr a = c->net;
			unsigned bits = c->net.family == 4 ? 32 : 128;

			if (c->prefix > 0) {
				a.a[(c->prefix - 1) / 8] ^= (uint8_t)(0x80 >> ((c->prefix - 1) % 8));
				probe(t, &a);
			}
			a = c->net;
			a.a[(bits - 1) / 8] ^= 1;
			probe(t, &a);
		}
	}
}

static void check_config(const struct tw_srv_config *c, const char *config_file)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t seen = 0;

	if (!in(c->threads, 1, TW_SRV_MAX_THREADS) || c->log_level > TW_LOG_DEBUG ||
	    !in(c->max_sessions, TW_SRV_MIN_SESSIONS, TW_SRV_MAX_SESSIONS) ||
	    !in(c->session_timeout, 1, 86400) || c->reply_session_timeout > 0x7fffffff ||
	    c->reauth_limit > 65534 || !in(c->dup_entries, 16, 1u << 24) ||
	    !in(c->dup_expiry, 1, 600) || c->rx_coalesce_us > TW_SRV_MAX_RX_COALESCE_US ||
	    !opt_in(c->sqn_block, 1, 1000000) || !opt_in(c->resync_max, 1, 1000) ||
	    !opt_in(c->resync_window, 1, 86400) || !opt_in(c->resync_bad_max, 1, 1000) ||
	    !opt_in(c->reauth_ttl, 1, 30 * 86400) ||
	    !opt_in(c->pseudonym_ttl, 60, 365 * 86400) ||
	    !opt_in(c->identity_cache, 16, 1u << 24) ||
	    !opt_in(c->identity_flush_ms, 100, 60000) ||
	    !opt_in(c->subscriber_cache, 16, 1u << 26))
		abort();
	if (!bounded(c->listen, sizeof(c->listen)) || !bounded(c->store, sizeof(c->store)) ||
	    !bounded(c->kek_file, sizeof(c->kek_file)) ||
	    !bounded(c->config_file, sizeof(c->config_file)) ||
	    !bounded(c->log_file, sizeof(c->log_file)) ||
	    !bounded(c->pid_file, sizeof(c->pid_file)) ||
	    !bounded(c->metrics, sizeof(c->metrics)) ||
	    !bounded(c->network_name, sizeof(c->network_name)) ||
	    !bounded(c->realm, sizeof(c->realm)))
		abort();
	if (c->store[0] == '\0' || c->network_name[0] == '\0' ||
	    strlen(c->realm) > TW_EAP_REALM_MAX || strchr(c->realm, '@') != NULL ||
	    strcmp(c->config_file, config_file) != 0)
		abort();
	if (tw_srv_sockaddr_parse(&ss, &sl, c->listen, TW_SRV_DEFAULT_PORT) != TW_OK ||
	    (c->metrics[0] != '\0' && tw_srv_sockaddr_parse(&ss, &sl, c->metrics, 9812) != TW_OK))
		abort();
	if (c->id_policy != TW_EAP_ID_TRUST_EAP_IDENTITY && c->id_policy != TW_EAP_ID_ALWAYS_ANY &&
	    c->id_policy != TW_EAP_ID_ALWAYS_PERMANENT)
		abort();
	if (c->n_methods < 1 || c->n_methods > TW_SRV_N_METHODS)
		abort();
	for (unsigned i = 0; i < c->n_methods; i++) {
		if (c->methods[i] >= TW_SRV_N_METHODS || (seen & (1u << c->methods[i])))
			abort();
		seen |= (uint8_t)(1u << c->methods[i]);
	}
	check_clients(&c->clients);
}

/* The command-line clients of a are in b with their secrets. */
static void check_cmdline_kept(const struct tw_srv_clients *a, const struct tw_srv_clients *b)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct tw_srv_client *c = &a->v[i], *d = NULL;

		if (!c->from_cmdline)
			continue;
		for (size_t j = 0; j < b->n && d == NULL; j++)
			if (tw_srv_addr_eq(&b->v[j].net, &c->net) && b->v[j].prefix == c->prefix)
				d = &b->v[j];
		if (d == NULL || !d->from_cmdline || d->key.len != c->key.len ||
		    memcmp(d->key.secret, c->key.secret, c->key.len) != 0)
			abort();
	}
}

/* The reloaded table has the same networks with the same secrets. */
static void check_reload(const struct tw_srv_clients *a, const struct tw_srv_clients *b)
{
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const struct tw_srv_client *c = &a->v[i], *d = tw_srv_clients_find(b, &c->net);

		/* the most specific network of b holding c's is c's (b has
		 * exactly a's networks) */
		if (d == NULL || tw_srv_clients_find(a, &c->net) == NULL)
			abort();
		d = NULL;
		for (size_t j = 0; j < b->n && d == NULL; j++)
			if (tw_srv_addr_eq(&b->v[j].net, &c->net) && b->v[j].prefix == c->prefix)
				d = &b->v[j];
		if (d == NULL || d->key.len != c->key.len ||
		    memcmp(d->key.secret, c->key.secret, c->key.len) != 0 ||
		    d->from_cmdline != c->from_cmdline)
			abort();
	}
}

static bool is_control(char ch)
{
	return (unsigned char)ch < 0x20 || ch == 0x7f;
}

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Line n (1-based) of text, as read_file sees it, in line[]; false when
 * there is none or it is too long for read_file (it says so). */
static bool get_line(const uint8_t *text, size_t len, unsigned long n, char *line,
		     size_t max, size_t *off, size_t *line_len)
{
	size_t o = 0;

	for (unsigned long k = 1; k < n; k++) {
		const uint8_t *nl = memchr(text + o, '\n', len - o);

		if (nl == NULL)
			return false;
		o = (size_t)(nl - text) + 1;
	}
	const uint8_t *nl = memchr(text + o, '\n', len - o);
	size_t l = nl != NULL ? (size_t)(nl - text) - o : len - o;

	if (o > len || l + 1 >= max || memchr(text + o, '\0', l) != NULL)
		return false;
	memcpy(line, text + o, l);
	line[l] = '\0';
	*off = o;
	*line_len = l;
	return true;
}

/* Checks what a refusal's message says of the line it names. */
static void check_refusal(const uint8_t *text, size_t len, const char *err)
{
	static char line[4096], copy[8192];
	size_t plen = strlen(path), off = 0, llen = 0;
	unsigned long n;
	char *end, *key, *eq, *val;

	if (strncmp(err, path, plen) != 0 || err[plen] != ':')
		return;
	n = strtoul(err + plen + 1, &end, 10);
	if (end == err + plen + 1 || *end != ':' ||
	    !get_line(text, len, n, line, sizeof(line), &off, &llen))
		return;
	key = trim(line);
	eq = strchr(key, '=');
	val = NULL;
	if (eq != NULL) {
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
	}
	if (strncmp(end, ": unknown key '", 15) == 0) {
		/* only the first word of the key, at most 40 octets */
		size_t kl = strcspn(key, " \t"), ql;
		const char *q = end + 15, *close = strrchr(q, '\'');

		if (close == NULL)
			abort();
		ql = (size_t)(close - q);
		if (ql != (kl < 40 ? kl : 40))
			abort();
		for (size_t i = 0; i < ql; i++)
			if (q[i] != (is_control(key[i]) ? '?' : key[i]))
				abort();
		return;
	}
	if (strcmp(key, "client") != 0 || val == NULL || len > sizeof(copy))
		return;
	/* the secret of "client = IP[/PREFIX] SECRET": replaced by as many
	 * other octets, the message must not change */
	{
		const char *sep = strpbrk(val, " \t="), *secret;
		char err2[ERR_MAX];
		struct tw_srv_config c;
		char *argv[] = { "twagd", "--config", path, NULL };
		size_t s_off, s_len;

		if (sep == NULL || sep == val)
			return;
		secret = sep + 1;
		while (*secret == ' ' || *secret == '\t')
			secret++;
		s_len = strlen(secret);
		if (s_len == 0)
			return;
		s_off = off + (size_t)(secret - line);
		memcpy(copy, text, len);
		for (size_t i = 0; i < s_len; i++)
			copy[s_off + i] = copy[s_off + i] == 'Q' ? 'R' : 'Q';
		put_file((const uint8_t *)copy, len);
		tw_srv_config_defaults(&c);
		err2[0] = '\0';
		if (tw_srv_config_load(&c, 3, argv, err2, sizeof(err2)) == TW_OK)
			abort();
		tw_srv_config_free(&c);
		if (strcmp(err, err2) != 0)
			abort();
	}
}

/* A --config value the harness lets through: one that is refused before
 * anything is opened (empty, or too long for a path). */
/* What tw_srv_config_check_load said. */
struct said {
	unsigned n;
	bool found;
	const char *want;
};

static void say_problem(void *arg, const char *problem)
{
	struct said *s = arg;

	s->n++;
	if (problem == NULL || problem[0] == '\0')
		abort();
	for (const char *q = problem; *q; q++)
		if (is_control(*q))
			abort();
	if (s->want != NULL && strcmp(problem, s->want) == 0)
		s->found = true;
}

static void no_change(void *arg, const char *key)
{
	(void)arg, (void)key;
	abort();
}

/*
 * The checking load (--check-config, SIGHUP) against the plain one on the
 * same input: no problem exactly when the plain load succeeds; the plain
 * load's one message among the problems said; the same configuration
 * (tw_srv_config_changes names nothing, the same number of clients).
 */
static void check_load_agrees(int argc, char **argv, int rc, const char *err,
			      const struct tw_srv_config *c)
{
	static struct tw_srv_config c2;
	struct said s = { 0, false, rc == TW_OK ? NULL : err };

	tw_srv_config_defaults(&c2);
	unsigned n = tw_srv_config_check_load(&c2, argc, argv, say_problem, &s);

	/* --help and --version stop either load early, problems or not */
	if (c2.help || c2.version || c->help || c->version) {
		tw_srv_config_free(&c2);
		return;
	}
	if (n != s.n || (rc == TW_OK) != (n == 0 || c2.help || c2.version))
		abort();
	if (rc != TW_OK && !c2.help && !c2.version && !s.found)
		abort();
	if (rc == TW_OK && n == 0 && !c->help && !c->version) {
		tw_srv_config_changes(c, &c2, no_change, NULL);
		if (c2.clients.n != c->clients.n)
			abort();
	}
	tw_srv_config_free(&c2);
}

static bool harmless_config(const char *v)
{
	return v != NULL && (v[0] == '\0' || strlen(v) >= TW_SRV_PATH_MAX);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static char args[4096];
	char *argv[3 + MAX_ARGS + 1] = { "twagd", "--config", NULL };
	struct tw_srv_config c;
	struct tw_srv_clients re;
	char err[ERR_MAX];
	int argc = 3, first, rc;
	size_t text_len;
	unsigned where;
	bool cut;
	static bool contract_done;

	if (!contract_done) {
		contract_done = true;
		contract();
	}
	if (size == 0)
		return 0;
	where = data[0] >> 1 & 3;
	cut = data[0] & 8;
	text_len = size - 1;
	first = where == 1 ? 1 : 3;
	argc = first;
	if ((data[0] & 1) || where == 1) {
		/* with no --config, the arguments start at once */
		const uint8_t *nul = where == 1 ? data : memchr(data + 1, '\0', size - 1);

		if (nul != NULL) {
			size_t alen = size - (size_t)(nul - data) - 1;
			char *p = args;

			text_len = where == 1 ? 0 : (size_t)(nul - (data + 1));
			if (alen >= sizeof(args))
				return 0;
			memcpy(args, nul + 1, alen);
			args[alen] = '\0';
			while (p <= args + alen && argc < 3 + MAX_ARGS) {
				argv[argc++] = p;
				p += strlen(p) + 1;
			}
			if (alen == 0)
				argc = first;
		}
	}
	/* no other file is opened: a --config of the input's must be refused
	 * before (the value of another option may look like one; skipped too) */
	for (int i = first; i < argc; i++) {
		if (strncmp(argv[i], "--config=", 9) == 0 && !harmless_config(argv[i] + 9))
			return 0;
		if (strcmp(argv[i], "--config") == 0 &&
		    !harmless_config(i + 1 < argc ? argv[i + 1] : ""))
			return 0;
		/* --check-config [FILE] takes the next word unless it is an option */
		if (strncmp(argv[i], "--check-config=", 15) == 0 && !harmless_config(argv[i] + 15))
			return 0;
		if (strcmp(argv[i], "--check-config") == 0 && i + 1 < argc &&
		    argv[i + 1][0] != '-' && !harmless_config(argv[i + 1]))
			return 0;
	}
	put_file(data + 1, text_len);
	/* where: 0 the memfd, 1 no --config, 2 a file that does not exist,
	 * 3 a directory (it opens, but cannot be read) */
	if (where != 1)
		argv[2] = where == 2 ? "/nonexistent/twagd.conf" : where == 3 ? "/" : path;
	argv[argc] = NULL;

	tw_srv_config_defaults(&c);
	err[0] = '\0';
	rc = tw_srv_config_load(&c, argc, argv, err, sizeof(err));
	check_load_agrees(argc, argv, rc, err, &c);
	if (rc != TW_OK) {
		if (rc != TW_ERR_INVAL || err[0] == '\0' || strlen(err) >= sizeof(err) - 1)
			abort();
		for (const char *p = err; *p != '\0'; p++)
			if (is_control(*p))
				abort();
		tw_srv_config_free(&c);
		if (argc == 3 && where == 0)
			check_refusal(data + 1, text_len, err);
		return 0;
	}
	if (c.help || c.version) { /* both stop before the file and the checks */
		tw_srv_config_free(&c);
		return 0;
	}
	if (where >= 2)
		abort(); /* a file that cannot be read is never a configuration */
	check_config(&c, where == 0 ? path : "");
	/* SIGHUP: the same file, or (cut) the file edited to its first half */
	if (cut)
		put_file(data + 1, text_len / 2);
	err[0] = '\0';
	rc = tw_srv_config_reload_clients(&c, &re, err, sizeof(err));
	if (rc == TW_OK) {
		if (!cut)
			check_reload(&c.clients, &re);
		check_cmdline_kept(&c.clients, &re);
		check_clients(&re);
		tw_srv_clients_free(&re);
	} else if (!cut || rc != TW_ERR_INVAL || err[0] == '\0' || re.n != 0 ||
		   re.v != NULL) {
		abort();
	}
	tw_srv_config_free(&c);
	return 0;
}
