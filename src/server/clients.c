/*
 * twag — twagd's RADIUS client table (RFC 2865 §3: a server accepts
 * requests only from configured clients, each with its shared secret; a
 * request from any other address is silently discarded, RFC 4669
 * radiusAuthServInvalidRequests).
 *
 * Clients are networks (IP/PREFIX, IPv4 or IPv6) and the most specific one
 * wins. The table is built at start-up and on SIGHUP (a new table is
 * swapped in: see server.c); lookups only read it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/server.h"

int tw_srv_addr_parse(struct tw_srv_addr *a, unsigned *prefix, const char *text)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	size_t len;
	unsigned bits, max;

	if (a == NULL || prefix == NULL || text == NULL)
		return TW_ERR_INVAL;
	memset(a, 0, sizeof(*a));
	slash = strchr(text, '/');
	len = slash != NULL ? (size_t)(slash - text) : strlen(text);
	if (len == 0 || len >= sizeof(buf))
		return TW_ERR_DECODE;
	memcpy(buf, text, len);
	buf[len] = 0;
	if (inet_pton(AF_INET, buf, a->a) == 1) {
		a->family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, a->a) == 1) {
		a->family = 6;
		max = 128;
	} else {
		return TW_ERR_DECODE;
	}
	bits = max;
	if (slash != NULL) {
		const char *p = slash + 1;

		if (*p == 0 || strlen(p) > 3)
			return TW_ERR_DECODE;
		bits = 0;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return TW_ERR_DECODE;
			bits = bits * 10 + (unsigned)(*p - '0');
		}
		if (bits > max)
			return TW_ERR_DECODE;
	}
	/* clear the host bits so that equal networks compare equal */
	for (unsigned i = 0; i < 16; i++) {
		unsigned lo = i * 8;

		if (lo >= bits)
			a->a[i] = 0;
		else if (bits - lo < 8)
			a->a[i] &= (uint8_t)(0xff << (8 - (bits - lo)));
	}
	*prefix = bits;
	return TW_OK;
}

int tw_srv_addr_from_sockaddr(struct tw_srv_addr *a, uint16_t *port,
			      const struct sockaddr *sa)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		a->family = 4;
		memcpy(a->a, &in->sin_addr, 4);
		if (port != NULL)
			*port = ntohs(in->sin_port);
		return TW_OK;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		const uint8_t *b = (const uint8_t *)&in6->sin6_addr;

		if (memcmp(b, v4mapped, 12) == 0) {
			a->family = 4;
			memcpy(a->a, b + 12, 4);
		} else {
			a->family = 6;
			memcpy(a->a, b, 16);
		}
		if (port != NULL)
			*port = ntohs(in6->sin6_port);
		return TW_OK;
	}
	return TW_ERR_UNSUPPORTED;
}

void tw_srv_addr_text(const struct tw_srv_addr *a, char *out, size_t out_max)
{
	if (inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->a, out,
		      (socklen_t)out_max) == NULL && out_max > 0)
		out[0] = 0;
}

bool tw_srv_addr_eq(const struct tw_srv_addr *x, const struct tw_srv_addr *y)
{
	return x->family == y->family &&
	       memcmp(x->a, y->a, x->family == 4 ? 4 : 16) == 0;
}

/* (a & mask) == net over the 16 octets (an IPv4 address and its mask
 * are zero beyond octet 4): two 64-bit compares per entry on the packet
 * path. */
static bool in_net(const struct tw_srv_client *c, const struct tw_srv_addr *a)
{
	return c->net.family == a->family &&
	       ((tw_load_le64(a->a) & tw_load_le64(c->mask)) ^ tw_load_le64(c->net.a)) == 0 &&
	       ((tw_load_le64(a->a + 8) & tw_load_le64(c->mask + 8)) ^
		tw_load_le64(c->net.a + 8)) == 0;
}

static void prefix_mask(uint8_t mask[16], unsigned prefix)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned lo = i * 8;

		mask[i] = lo >= prefix ? 0 :
			  prefix - lo >= 8 ? 0xff : (uint8_t)(0xff << (8 - (prefix - lo)));
	}
}

int tw_srv_clients_add(struct tw_srv_clients *t, const char *spec,
		       const uint8_t *secret, size_t secret_len,
		       bool from_cmdline, char *err, size_t err_len)
{
	struct tw_srv_client c, *slot = NULL;
	char text[INET6_ADDRSTRLEN];
	int rc;

	memset(&c, 0, sizeof(c));
	rc = tw_srv_addr_parse(&c.net, &c.prefix, spec);
	if (rc != TW_OK) {
		/* echoed only when it looks like an address: "client =
		 * SECRET IP" (swapped) must not log the secret */
		if (spec[strspn(spec, "0123456789abcdefABCDEF.:/")] == 0)
			snprintf(err, err_len, "bad client address '%.60s' (IP or IP/PREFIX)",
				 spec);
		else
			snprintf(err, err_len, "bad client address (IP or IP/PREFIX)");
		return TW_ERR_DECODE;
	}
	/* RFC 2865 §3: the secret is at least one octet; we keep it bounded */
	if (secret_len == 0 || secret_len > TW_SRV_SECRET_MAX) {
		snprintf(err, err_len, "client %.60s: secret must be 1..%d octets",
			 spec, TW_SRV_SECRET_MAX);
		return TW_ERR_LENGTH;
	}
	/* the HMAC-MD5 key blocks (RFC 2104 §4) once, here, not per packet */
	if (tw_radius_secret_init(&c.key, secret, secret_len) != TW_OK) {
		tw_wipe(&c, sizeof(c));
		snprintf(err, err_len, "client %.60s: bad secret", spec);
		return TW_ERR_LENGTH;
	}
	prefix_mask(c.mask, c.prefix);
	c.from_cmdline = from_cmdline;
	tw_srv_addr_text(&c.net, text, sizeof(text));
	snprintf(c.name, sizeof(c.name), "%s/%u", text, c.prefix);

	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].prefix == c.prefix && tw_srv_addr_eq(&t->v[i].net, &c.net)) {
			slot = &t->v[i];
			break;
		}
	}
	if (slot == NULL) {
		if (t->n == t->cap) {
			size_t ncap = t->cap ? t->cap * 2 : 8;
			struct tw_srv_client *nv = calloc(ncap, sizeof(*nv));

			if (nv == NULL) {
				tw_wipe(&c, sizeof(c));
				snprintf(err, err_len, "out of memory");
				return TW_ERR_NOMEM;
			}
			if (t->n) {
				memcpy(nv, t->v, t->n * sizeof(*nv));
				tw_wipe(t->v, t->n * sizeof(*nv));
			}
			free(t->v);
			t->v = nv;
			t->cap = ncap;
		}
		slot = &t->v[t->n++];
	}
	*slot = c;
	tw_wipe(&c, sizeof(c));
	return TW_OK;
}

const struct tw_srv_client *tw_srv_clients_find(const struct tw_srv_clients *t,
						const struct tw_srv_addr *addr)
{
	const struct tw_srv_client *best = NULL;

	if (t == NULL)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tw_srv_client *c = &t->v[i];

		if (in_net(c, addr) && (best == NULL || c->prefix > best->prefix))
			best = c;
	}
	return best;
}

void tw_srv_clients_free(struct tw_srv_clients *t)
{
	if (t == NULL)
		return;
	if (t->v != NULL)
		tw_wipe(t->v, t->cap * sizeof(*t->v));
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int tw_srv_clients_copy_cmdline(struct tw_srv_clients *dst,
				const struct tw_srv_clients *src)
{
	char err[128];

	for (size_t i = 0; i < src->n; i++) {
		const struct tw_srv_client *c = &src->v[i];
		char spec[80];
		int rc;

		if (!c->from_cmdline)
			continue;
		snprintf(spec, sizeof(spec), "%s", c->name);
		rc = tw_srv_clients_add(dst, spec, c->key.secret, c->key.len, true,
					err, sizeof(err));
		if (rc != TW_OK)
			return rc;
	}
	return TW_OK;
}
