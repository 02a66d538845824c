/*
 * twag — twagd's per-request debug (like radiusd -X, for chosen
 * conversations only): while a condition is set (--debug-client PREFIX,
 * --debug-imsi IMSI; SIGHUP reloads them), every packet of a
 * conversation from a client in one of the prefixes, or of a subscriber
 * named, is logged attribute by attribute whatever --log-level says.
 *
 * Elided, never written: User-Password, CHAP-Password, Tunnel-Password,
 * the MS-MPPE keys (and any other vendor attribute, whose contents this
 * code cannot judge), Message-Authenticator, and inside EAP-SIM/AKA/AKA'
 * AT_RES, AT_AUTS, AT_MAC, AT_NONCE_MT, AT_NONCE_S, AT_IV, AT_ENCR_DATA,
 * AT_CHECKCODE (their lengths are shown). IMSIs are masked, in User-Name
 * and AT_IDENTITY alike.
 *
 * The packet path pays one relaxed atomic load per request while no
 * condition is set; with one set, a lock held for the matching only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "srv.h"
#include "textout.h"
#include "twag/hex.h"
#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/nai.h"

int tw_srv_debug_add(struct tw_srv_debug_set *d, bool imsi, const char *text, char *err,
		     size_t err_len)
{
	if (imsi) {
		size_t n = strlen(text);

		if (n < 6 || n > 15 || strspn(text, "0123456789") != n) {
			snprintf(err, err_len, "debug-imsi must be an IMSI of 6 to 15 digits");
			return TW_ERR_INVAL;
		}
		for (unsigned i = 0; i < d->n_imsi; i++)
			if (strcmp(d->imsi[i], text) == 0)
				return TW_OK;
		if (d->n_imsi >= TW_SRV_DEBUG_MAX) {
			snprintf(err, err_len, "at most %d debug IMSIs", TW_SRV_DEBUG_MAX);
			return TW_ERR_RANGE;
		}
		memcpy(d->imsi[d->n_imsi++], text, n + 1);
		return TW_OK;
	}
	struct tw_srv_addr a;
	unsigned prefix;

	if (tw_srv_addr_parse(&a, &prefix, text) != TW_OK) {
		snprintf(err, err_len, "debug-client must be IP[/PREFIX] (IPv4 or IPv6)");
		return TW_ERR_INVAL;
	}
	for (unsigned i = 0; i < d->n_net; i++)
		if (d->prefix[i] == prefix && tw_srv_addr_eq(&d->net[i], &a))
			return TW_OK;
	if (d->n_net >= TW_SRV_DEBUG_MAX) {
		snprintf(err, err_len, "at most %d debug clients", TW_SRV_DEBUG_MAX);
		return TW_ERR_RANGE;
	}
	d->net[d->n_net] = a;
	d->prefix[d->n_net++] = prefix;
	return TW_OK;
}

int tw_srv_debug_del(struct tw_srv_debug_set *d, bool imsi, const char *text)
{
	if (imsi) {
		for (unsigned i = 0; i < d->n_imsi; i++)
			if (strcmp(d->imsi[i], text) == 0) {
				memmove(d->imsi[i], d->imsi[i + 1],
					(d->n_imsi - i - 1) * sizeof(d->imsi[0]));
				d->n_imsi--;
				return TW_OK;
			}
		return TW_ERR_NOTFOUND;
	}
	struct tw_srv_addr a;
	unsigned prefix;

	if (tw_srv_addr_parse(&a, &prefix, text) != TW_OK)
		return TW_ERR_INVAL;
	for (unsigned i = 0; i < d->n_net; i++)
		if (d->prefix[i] == prefix && tw_srv_addr_eq(&d->net[i], &a)) {
			memmove(&d->net[i], &d->net[i + 1], (d->n_net - i - 1) * sizeof(d->net[0]));
			memmove(&d->prefix[i], &d->prefix[i + 1],
				(d->n_net - i - 1) * sizeof(d->prefix[0]));
			d->n_net--;
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

bool tw_srv_debug_set_eq(const struct tw_srv_debug_set *x, const struct tw_srv_debug_set *y)
{
	if (x->n_net != y->n_net || x->n_imsi != y->n_imsi)
		return false;
	for (unsigned i = 0; i < x->n_net; i++)
		if (x->prefix[i] != y->prefix[i] || !tw_srv_addr_eq(&x->net[i], &y->net[i]))
			return false;
	for (unsigned i = 0; i < x->n_imsi; i++)
		if (strcmp(x->imsi[i], y->imsi[i]) != 0)
			return false;
	return true;
}

void tw_srv_debug_init(struct tw_srv_debug *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
}

void tw_srv_debug_destroy(struct tw_srv_debug *g)
{
	pthread_mutex_destroy(&g->lock);
}

void tw_srv_debug_publish(struct tw_srv_debug *g, const struct tw_srv_debug_set *d)
{
	pthread_mutex_lock(&g->lock);
	g->set = *d;
	atomic_store(&g->on, d->n_net + d->n_imsi);
	pthread_mutex_unlock(&g->lock);
}

void tw_srv_debug_get(struct tw_srv_debug *g, struct tw_srv_debug_set *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->set;
	pthread_mutex_unlock(&g->lock);
}

/* Whether a is in the network net/prefix (the same family). */
static bool in_net(const struct tw_srv_addr *a, const struct tw_srv_addr *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (a->family != net->family)
		return false;
	if (memcmp(a->a, net->a, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a->a[full] ^ net->a[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

bool tw_srv_debug_match(struct tw_srv_debug *g, const struct tw_srv_addr *client,
			const char *imsi, size_t imsi_len)
{
	bool hit = false;

	if (atomic_load_explicit(&g->on, memory_order_relaxed) == 0)
		return false;
	pthread_mutex_lock(&g->lock);
	for (unsigned i = 0; client != NULL && !hit && i < g->set.n_net; i++)
		hit = in_net(client, &g->set.net[i], g->set.prefix[i]);
	for (unsigned i = 0; imsi != NULL && !hit && i < g->set.n_imsi; i++)
		hit = strlen(g->set.imsi[i]) == imsi_len && memcmp(g->set.imsi[i], imsi, imsi_len) == 0;
	pthread_mutex_unlock(&g->lock);
	return hit;
}

size_t tw_srv_debug_text(const struct tw_srv_debug_set *d, char *out, size_t max)
{
	size_t o = 0;

	if (max == 0)
		return 0;
	out[0] = 0;
	for (unsigned i = 0; i < d->n_net && o < max; i++) {
		char a[INET6_ADDRSTRLEN];
		int k;

		tw_srv_addr_text(&d->net[i], a, sizeof(a));
		k = snprintf(out + o, max - o, "%sclient=%s/%u", o ? " " : "", a, d->prefix[i]);
		if (k < 0 || (size_t)k >= max - o)
			return o;
		o += (size_t)k;
	}
	for (unsigned i = 0; i < d->n_imsi && o < max; i++) {
		char m[TW_NAI_MASK_MAX];
		int k;

		if (tw_nai_mask_imsi(m, sizeof(m), d->imsi[i], strlen(d->imsi[i])) != TW_OK)
			snprintf(m, sizeof(m), "?");
		k = snprintf(out + o, max - o, "%simsi=%s", o ? " " : "", m);
		if (k < 0 || (size_t)k >= max - o)
			return o;
		o += (size_t)k;
	}
	return o;
}

/* ---- the control socket's "debug" command (control.c) ------------------- */

/*
 *   debug [show]                      the conditions in force
 *   debug client add|del IP[/PREFIX]  one client network more or less
 *   debug imsi add|del IMSI           one subscriber more or less
 *   debug clear                       none
 * Each change is made under the conditions' lock (two tools at once lose
 * nothing) and logged (event=debug-conditions). A SIGHUP that changes
 * debug-client or debug-imsi in the configuration replaces the set.
 */
void tw_srv_debug_cmd(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	struct tw_srv_debug *g = &srv->debug;
	struct tw_srv_debug_set now;
	char err[128], text[1024];
	int rc = TW_OK;

	if (argc >= 1 && strcmp(argv[0], "clear") == 0 && argc == 1) {
		pthread_mutex_lock(&g->lock);
		memset(&g->set, 0, sizeof(g->set));
		atomic_store(&g->on, 0);
		pthread_mutex_unlock(&g->lock);
	} else if (argc == 3 && (strcmp(argv[0], "client") == 0 || strcmp(argv[0], "imsi") == 0) &&
		   (strcmp(argv[1], "add") == 0 || strcmp(argv[1], "del") == 0)) {
		bool imsi = argv[0][0] == 'i', add = argv[1][0] == 'a';

		err[0] = 0;
		pthread_mutex_lock(&g->lock);
		rc = add ? tw_srv_debug_add(&g->set, imsi, argv[2], err, sizeof(err))
			 : tw_srv_debug_del(&g->set, imsi, argv[2]);
		atomic_store(&g->on, g->set.n_net + g->set.n_imsi);
		pthread_mutex_unlock(&g->lock);
		if (rc != TW_OK) {
			put(o, "error %s\n",
			    err[0] ? err
			    : rc == TW_ERR_NOTFOUND ? "no such condition"
						    : "not an IP[/PREFIX] or IMSI");
			return;
		}
	} else if (!(argc == 0 || (argc == 1 && strcmp(argv[0], "show") == 0))) {
		put(o, "error usage: debug [show] | debug clear | debug client add|del IP[/PREFIX] | "
		       "debug imsi add|del IMSI\n");
		return;
	}
	tw_srv_debug_get(g, &now);
	if (argc > 0 && strcmp(argv[0], "show") != 0) {
		tw_srv_debug_text(&now, text, sizeof(text));
		tw_log_always(NULL, TW_LOG_INFO, "debug-conditions", "%s%s", text[0] ? text : "conditions=none",
			      " by=control-socket");
	}
	for (unsigned i = 0; i < now.n_net; i++) {
		char a[INET6_ADDRSTRLEN];

		tw_srv_addr_text(&now.net[i], a, sizeof(a));
		put(o, "result client=%s/%u\n", a, now.prefix[i]);
	}
	for (unsigned i = 0; i < now.n_imsi; i++) {
		char m[TW_NAI_MASK_MAX];

		if (tw_nai_mask_imsi(m, sizeof(m), now.imsi[i], strlen(now.imsi[i])) != TW_OK)
			snprintf(m, sizeof(m), "?");
		put(o, "result imsi=%s\n", m);
	}
	put(o, "ok clients=%u imsis=%u\n", now.n_net, now.n_imsi);
}

/* ---- the dump ------------------------------------------------------------ */

static const char *code_name(unsigned c)
{
	switch (c) {
	case 1: return "Access-Request";
	case 2: return "Access-Accept";
	case 3: return "Access-Reject";
	case 4: return "Accounting-Request";
	case 5: return "Accounting-Response";
	case 11: return "Access-Challenge";
	case 12: return "Status-Server";
	case 40: return "Disconnect-Request";
	case 41: return "Disconnect-ACK";
	case 42: return "Disconnect-NAK";
	case 43: return "CoA-Request";
	case 44: return "CoA-ACK";
	case 45: return "CoA-NAK";
	default: return "?";
	}
}

enum kind { K_HEX, K_TEXT, K_USER, K_INT, K_IPV4, K_IPV6, K_SECRET, K_EAP, K_VSA };

static const struct {
	uint8_t type;
	uint8_t kind;
	const char *name;
} attr_names[] = {
	{ 1, K_USER, "User-Name" },
	{ 2, K_SECRET, "User-Password" },
	{ 3, K_SECRET, "CHAP-Password" },
	{ 4, K_IPV4, "NAS-IP-Address" },
	{ 5, K_INT, "NAS-Port" },
	{ 6, K_INT, "Service-Type" },
	{ 7, K_INT, "Framed-Protocol" },
	{ 8, K_IPV4, "Framed-IP-Address" },
	{ 11, K_TEXT, "Filter-Id" },
	{ 12, K_INT, "Framed-MTU" },
	{ 18, K_TEXT, "Reply-Message" },
	{ 24, K_HEX, "State" },
	{ 25, K_HEX, "Class" },
	{ 26, K_VSA, "Vendor-Specific" },
	{ 27, K_INT, "Session-Timeout" },
	{ 28, K_INT, "Idle-Timeout" },
	{ 30, K_TEXT, "Called-Station-Id" },
	{ 31, K_TEXT, "Calling-Station-Id" },
	{ 32, K_TEXT, "NAS-Identifier" },
	{ 40, K_INT, "Acct-Status-Type" },
	{ 41, K_INT, "Acct-Delay-Time" },
	{ 42, K_INT, "Acct-Input-Octets" },
	{ 43, K_INT, "Acct-Output-Octets" },
	{ 44, K_TEXT, "Acct-Session-Id" },
	{ 45, K_INT, "Acct-Authentic" },
	{ 46, K_INT, "Acct-Session-Time" },
	{ 47, K_INT, "Acct-Input-Packets" },
	{ 48, K_INT, "Acct-Output-Packets" },
	{ 49, K_INT, "Acct-Terminate-Cause" },
	{ 50, K_TEXT, "Acct-Multi-Session-Id" },
	{ 52, K_INT, "Acct-Input-Gigawords" },
	{ 53, K_INT, "Acct-Output-Gigawords" },
	{ 55, K_INT, "Event-Timestamp" },
	{ 61, K_INT, "NAS-Port-Type" },
	{ 69, K_SECRET, "Tunnel-Password" },
	{ 77, K_TEXT, "Connect-Info" },
	{ 79, K_EAP, "EAP-Message" },
	{ 80, K_SECRET, "Message-Authenticator" },
	{ 85, K_INT, "Acct-Interim-Interval" },
	{ 87, K_TEXT, "NAS-Port-Id" },
	{ 89, K_TEXT, "Chargeable-User-Identity" },
	{ 95, K_IPV6, "NAS-IPv6-Address" },
	{ 101, K_INT, "Error-Cause" },
};

/* Appends to a text line (max octets, always NUL-terminated). */
struct line {
	char *p;
	size_t n, max;
	bool raw; /* inside a value already: text never quoted itself */
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (l->n + 1 >= l->max)
		return;
	va_start(ap, fmt);
	k = vsnprintf(l->p + l->n, l->max - l->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		l->n += (size_t)k < l->max - l->n ? (size_t)k : l->max - l->n - 1;
}

static void add_hex(struct line *l, const uint8_t *v, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n && l->n + 3 < l->max; i++) {
		l->p[l->n++] = hx[v[i] >> 4];
		l->p[l->n++] = hx[v[i] & 15];
	}
	l->p[l->n] = 0;
}

/* A value as text: printable octets kept, quoted when it needs it (the
 * log's rule), any other octet '?'. */
static void add_text(struct line *l, const uint8_t *v, size_t n)
{
	char raw[256], q[260];

	if (n >= sizeof(raw))
		n = sizeof(raw) - 1;
	for (size_t i = 0; i < n; i++)
		raw[i] = v[i] > 0x20 && v[i] < 0x7f && v[i] != '"' && v[i] != '\\'
				 ? (char)v[i]
				 : (v[i] == ' ' && !l->raw ? ' ' : '?');
	raw[n] = 0;
	if (l->raw) {
		add(l, "%s", raw);
		return;
	}
	tw_log_quote(q, sizeof(q), raw);
	add(l, "%s", q);
}

/* An identity (User-Name, AT_IDENTITY): a permanent one ("0"/"1"/"6"/"7"
 * and the IMSI, or the IMSI alone, then maybe "@realm") has its IMSI
 * masked; pseudonyms and re-authentication identities are not IMSIs and
 * stay as they are. */
static void add_identity(struct line *l, const uint8_t *v, size_t n)
{
	size_t user = 0, lead;
	uint8_t buf[256];

	while (user < n && v[user] != '@')
		user++;
	lead = user > 0 && (v[0] < '0' || v[0] > '9' || user == 16) ? 1 : 0;
	if (user - lead >= 6 && user - lead <= 15 && n < sizeof(buf)) {
		size_t d = lead;
		char m[TW_NAI_MASK_MAX];

		while (d < user && v[d] >= '0' && v[d] <= '9')
			d++;
		if (d == user && tw_nai_mask_imsi(m, sizeof(m), (const char *)v + lead,
						  user - lead) == TW_OK) {
			size_t ml = strlen(m);

			memcpy(buf, v, lead);
			memcpy(buf + lead, m, ml);
			memcpy(buf + lead + ml, v + user, n - user);
			add_text(l, buf, lead + ml + n - user);
			return;
		}
	}
	add_text(l, v, n);
}

static const char *simaka_subtype(uint8_t type, uint8_t st)
{
	if (type == TW_EAP_TYPE_SIM) {
		switch (st) {
		case 10: return "Start";
		case 11: return "Challenge";
		case 12: return "Notification";
		case 13: return "Re-authentication";
		case 14: return "Client-Error";
		default: return "?";
		}
	}
	switch (st) {
	case 1: return "Challenge";
	case 2: return "Authentication-Reject";
	case 4: return "Synchronization-Failure";
	case 5: return "Identity";
	case 12: return "Notification";
	case 13: return "Re-authentication";
	case 14: return "Client-Error";
	default: return "?";
	}
}

/* RFC 4186 §11, RFC 4187 §11, RFC 5448 §6 (values: shown, elided:
 * length only, skipped: a flag without a value worth showing). */
enum { A_SHOW_HEX, A_SHOW_TEXT, A_SHOW_U16, A_IDENT, A_ELIDE, A_FLAG };

static const struct {
	uint8_t type, how;
	const char *name;
} at_names[] = {
	{ 1, A_SHOW_HEX, "AT_RAND" },           { 2, A_SHOW_HEX, "AT_AUTN" },
	{ 3, A_ELIDE, "AT_RES" },               { 4, A_ELIDE, "AT_AUTS" },
	{ 6, A_FLAG, "AT_PADDING" },            { 7, A_ELIDE, "AT_NONCE_MT" },
	{ 10, A_FLAG, "AT_PERMANENT_ID_REQ" },  { 11, A_ELIDE, "AT_MAC" },
	{ 12, A_SHOW_U16, "AT_NOTIFICATION" },  { 13, A_FLAG, "AT_ANY_ID_REQ" },
	{ 14, A_IDENT, "AT_IDENTITY" },         { 15, A_SHOW_HEX, "AT_VERSION_LIST" },
	{ 16, A_SHOW_U16, "AT_SELECTED_VERSION" }, { 17, A_FLAG, "AT_FULLAUTH_ID_REQ" },
	{ 19, A_SHOW_U16, "AT_COUNTER" },       { 20, A_FLAG, "AT_COUNTER_TOO_SMALL" },
	{ 21, A_ELIDE, "AT_NONCE_S" },          { 22, A_SHOW_U16, "AT_CLIENT_ERROR_CODE" },
	{ 23, A_SHOW_TEXT, "AT_KDF_INPUT" },    { 24, A_SHOW_U16, "AT_KDF" },
	{ 129, A_ELIDE, "AT_IV" },              { 130, A_ELIDE, "AT_ENCR_DATA" },
	{ 132, A_ELIDE, "AT_NEXT_PSEUDONYM" },  { 133, A_ELIDE, "AT_NEXT_REAUTH_ID" },
	{ 134, A_ELIDE, "AT_CHECKCODE" },       { 135, A_FLAG, "AT_RESULT_IND" },
	{ 136, A_SHOW_U16, "AT_BIDDING" },
};

/* The EAP packet e[0..n) in words: code, identifier, type, and for the
 * SIM/AKA family the subtype and each attribute. */
static void add_eap(struct line *l, const uint8_t *e, size_t n)
{
	static const char *const codes[] = { "?", "Request", "Response", "Success", "Failure" };
	size_t len, off;

	if (n < 4) {
		add(l, "malformed(%zu)", n);
		return;
	}
	len = (size_t)e[2] << 8 | e[3];
	add(l, "%s id=%u len=%zu", e[0] >= 1 && e[0] <= 4 ? codes[e[0]] : "?", e[1], len);
	if (len > n || len < 4) {
		add(l, " malformed");
		return;
	}
	if (len < 5 || (e[0] != 1 && e[0] != 2))
		return;
	switch (e[4]) {
	case TW_EAP_TYPE_IDENTITY:
		add(l, " type=Identity identity=");
		add_identity(l, e + 5, len - 5);
		return;
	case 3:
		add(l, " type=Nak wants=");
		add_hex(l, e + 5, len - 5);
		return;
	case TW_EAP_TYPE_SIM:
	case TW_EAP_TYPE_AKA:
	case TW_EAP_TYPE_AKA_PRIME:
		break;
	default:
		add(l, " type=%u", e[4]);
		return;
	}
	add(l, " type=%s", e[4] == TW_EAP_TYPE_SIM ? "SIM" : e[4] == TW_EAP_TYPE_AKA ? "AKA" : "AKA'");
	if (len < 8) {
		add(l, " malformed");
		return;
	}
	add(l, " subtype=%s", simaka_subtype(e[4], e[5]));
	for (off = 8; off + 2 <= len;) {
		uint8_t t = e[off];
		size_t al = (size_t)e[off + 1] * 4;
		const char *name = NULL;
		unsigned how = t >= 128 ? A_ELIDE : A_SHOW_HEX;

		if (al < 4 || off + al > len) {
			add(l, " malformed-attribute@%zu", off);
			return;
		}
		for (size_t i = 0; i < sizeof(at_names) / sizeof(at_names[0]); i++)
			if (at_names[i].type == t) {
				name = at_names[i].name;
				how = at_names[i].how;
			}
		if (name != NULL)
			add(l, " %s", name);
		else
			add(l, " AT_%u", t);
		switch (how) {
		case A_SHOW_HEX:
			/* after the 2 reserved (or actual-length) octets */
			add(l, "=");
			add_hex(l, e + off + 4, al - 4);
			break;
		case A_SHOW_U16:
			add(l, "=%u", (unsigned)e[off + 2] << 8 | e[off + 3]);
			break;
		case A_SHOW_TEXT:
		case A_IDENT: {
			size_t vl = (size_t)e[off + 2] << 8 | e[off + 3];

			if (vl > al - 4)
				vl = al - 4;
			add(l, "=");
			if (how == A_IDENT)
				add_identity(l, e + off + 4, vl);
			else
				add_text(l, e + off + 4, vl);
			break;
		}
		case A_ELIDE:
			add(l, "=<%zu octets elided>", al - 2);
			break;
		default:
			break;
		}
		off += al;
	}
}

void tw_srv_debug_dump(struct tw_log_buf *b, const char *dir, const char *client,
		       const uint8_t *pkt, size_t len)
{
	struct tw_radius_pkt p;
	uint8_t eap[TW_RADIUS_EAP_MAX];
	size_t eap_len = 0;
	bool eap_done = false;
	char q[80];

	tw_log_quote(q, sizeof(q), client);
	if (tw_radius_decode(&p, pkt, len) != TW_OK) {
		tw_log_always(b, TW_LOG_DEBUG, "debug-packet",
			      "dir=%s client=%s len=%zu msg=undecodable", dir, q, len);
		return;
	}
	tw_log_always(b, TW_LOG_DEBUG, "debug-packet", "dir=%s client=%s code=%s id=%u len=%zu attrs=%u",
		      dir, q, code_name(p.code), p.id, p.len, p.n_attrs);
	for (unsigned i = 0; i < p.n_attrs; i++) {
		const struct tw_radius_attr *a = &p.attrs[i];
		const uint8_t *v = tw_radius_value(&p, a);
		unsigned kind = K_HEX;
		const char *name = NULL;
		char text[900], num[24];
		struct line l = { text, 0, sizeof(text), false };

		text[0] = 0;
		for (size_t k = 0; k < sizeof(attr_names) / sizeof(attr_names[0]); k++)
			if (attr_names[k].type == a->type) {
				name = attr_names[k].name;
				kind = attr_names[k].kind;
			}
		if (name == NULL) {
			snprintf(num, sizeof(num), "Attr-%u", a->type);
			name = num;
		}
		switch (kind) {
		case K_USER:
			add_identity(&l, v, a->len);
			break;
		case K_TEXT:
			add_text(&l, v, a->len);
			break;
		case K_INT:
			if (a->len == 4)
				add(&l, "%u", (unsigned)v[0] << 24 | (unsigned)v[1] << 16 |
						      (unsigned)v[2] << 8 | v[3]);
			else
				add_hex(&l, v, a->len);
			break;
		case K_IPV4:
		case K_IPV6: {
			char ip[INET6_ADDRSTRLEN];

			if ((kind == K_IPV4 && a->len == 4) || (kind == K_IPV6 && a->len == 16))
				add(&l, "%s", inet_ntop(kind == K_IPV4 ? AF_INET : AF_INET6, v, ip,
							sizeof(ip)) != NULL ? ip : "?");
			else
				add_hex(&l, v, a->len);
			break;
		}
		case K_SECRET:
			add(&l, "\"<%u octets elided>\"", a->len);
			break;
		case K_VSA:
			if (a->len >= 6)
				add(&l, "\"vendor %u type %u: <%u octets elided>\"",
				    (unsigned)v[0] << 24 | (unsigned)v[1] << 16 | (unsigned)v[2] << 8 | v[3],
				    v[4], a->len - 6u);
			else
				add(&l, "\"<%u octets elided>\"", a->len);
			break;
		case K_EAP:
			/* the EAP packet, joined from its fragments, once */
			if (eap_done)
				continue;
			eap_done = true;
			if (tw_radius_eap_join(&p, eap, sizeof(eap), &eap_len) != TW_OK) {
				add(&l, "malformed");
			} else {
				char inner[800];
				struct line e = { inner, 0, sizeof(inner), true };

				inner[0] = 0;
				add_eap(&e, eap, eap_len);
				tw_log_quote(text, sizeof(text), inner);
				l.n = strlen(text);
			}
			tw_wipe(eap, eap_len);
			break;
		default:
			add_hex(&l, v, a->len);
			break;
		}
		tw_log_always(b, TW_LOG_DEBUG, "debug-attr", "dir=%s id=%u attr=%s value=%s", dir,
			      p.id, name, text);
	}
}
