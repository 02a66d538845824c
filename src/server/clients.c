/*
 * twag — twagd's RADIUS client table (RFC 2865 §3: a server accepts
 * requests only from configured clients, each with its shared secret; a
 * request from any other address is silently discarded, RFC 4669
 * radiusAuthServInvalidRequests).
 *
 * Clients are networks (IP/PREFIX, IPv4 or IPv6) and the most specific one
 * wins. The table is built at start-up and on SIGHUP (a new table is
 * swapped in: see server.c); lookups only read it. A deployment may name
 * every access point (tens of thousands of /32s): look-ups go through an
 * index (struct tw_srv_clients), two per datagram, never a scan.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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

/* ---- the index ------------------------------------------------------------ */

#define HOST_EMPTY UINT32_MAX /* an empty slot of the host index */

static bool is_host(const struct tw_srv_client *c)
{
	return c->prefix == (c->net.family == 4 ? 32u : 128u);
}

/* A seeded mix of the address (the seed is random per table: the slots an
 * address probes cannot be worked out from outside). */
static size_t host_hash(const struct tw_srv_clients *t, const struct tw_srv_addr *a)
{
	/* the octets tw_srv_addr_eq compares: 4 for IPv4 */
	uint64_t lo = a->family == 4 ? tw_load_le32(a->a) : tw_load_le64(a->a);
	uint64_t hi = a->family == 4 ? 0 : tw_load_le64(a->a + 8);
	uint64_t h = (lo ^ t->seed[0]) * 0x9e3779b97f4a7c15ULL;

	h ^= (hi ^ t->seed[1] ^ a->family) * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ (h >> 32));
}

/* The slot of host address a: its entry's, or the empty one ending its
 * probe sequence. */
static size_t host_slot(const struct tw_srv_clients *t, const struct tw_srv_addr *a)
{
	size_t mask = t->nhost - 1, i = host_hash(t, a) & mask;

	while (t->host[i] != HOST_EMPTY && !tw_srv_addr_eq(&t->v[t->host[i]].net, a))
		i = (i + 1) & mask;
	return i;
}

/* Room for one more host entry (load at most 1/2). */
static int host_room(struct tw_srv_clients *t)
{
	size_t n = t->nhost ? t->nhost : 16;
	uint32_t *old = t->host;
	size_t nold = t->nhost;

	if (t->host != NULL && 2 * (t->hosts + 1) <= t->nhost)
		return TW_OK;
	while (2 * (t->hosts + 1) > n)
		n *= 2;
	if (t->host == NULL &&
	    getrandom(t->seed, sizeof(t->seed), GRND_NONBLOCK) != (ssize_t)sizeof(t->seed)) {
		/* the pool not ready yet (early boot): the table works the
		 * same, its probes are just predictable */
		t->seed[0] = (uint64_t)(uintptr_t)t ^ 0x243f6a8885a308d3ULL;
		t->seed[1] = (uint64_t)(uintptr_t)&n ^ 0x13198a2e03707344ULL;
	}
	t->host = malloc(n * sizeof(*t->host));
	if (t->host == NULL) {
		t->host = old;
		return TW_ERR_NOMEM;
	}
	memset(t->host, 0xff, n * sizeof(*t->host));
	t->nhost = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i] != HOST_EMPTY)
			t->host[host_slot(t, &t->v[old[i]].net)] = old[i];
	free(old);
	return TW_OK;
}

/* Indexes v[i] (just appended). */
static int index_add(struct tw_srv_clients *t, uint32_t i)
{
	const struct tw_srv_client *c = &t->v[i];
	size_t k;

	if (is_host(c)) {
		int rc = host_room(t);

		if (rc != TW_OK)
			return rc;
		t->host[host_slot(t, &c->net)] = i;
		t->hosts++;
		return TW_OK;
	}
	if (t->nnets == t->nets_cap) {
		size_t ncap = t->nets_cap ? 2 * t->nets_cap : 8;
		uint32_t *nv = realloc(t->nets, ncap * sizeof(*nv));

		if (nv == NULL)
			return TW_ERR_NOMEM;
		t->nets = nv;
		t->nets_cap = ncap;
	}
	/* longest prefix first: the first that holds an address is the one */
	for (k = t->nnets; k > 0 && t->v[t->nets[k - 1]].prefix < c->prefix; k--)
		t->nets[k] = t->nets[k - 1];
	t->nets[k] = i;
	t->nnets++;
	return TW_OK;
}

/* The entry of exactly this network, or NULL. */
static struct tw_srv_client *same_net(struct tw_srv_clients *t, const struct tw_srv_client *c)
{
	if (is_host(c)) {
		size_t i;

		if (t->host == NULL)
			return NULL;
		i = host_slot(t, &c->net);
		return t->host[i] == HOST_EMPTY ? NULL : &t->v[t->host[i]];
	}
	for (size_t k = 0; k < t->nnets; k++) {
		struct tw_srv_client *o = &t->v[t->nets[k]];

		if (o->prefix == c->prefix && tw_srv_addr_eq(&o->net, &c->net))
			return o;
	}
	return NULL;
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

	slot = same_net(t, &c);
	if (slot == NULL && t->n >= HOST_EMPTY) {
		tw_wipe(&c, sizeof(c));
		snprintf(err, err_len, "too many clients");
		return TW_ERR_NOMEM;
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
		slot = &t->v[t->n];
		*slot = c;
		tw_wipe(&c, sizeof(c));
		rc = index_add(t, (uint32_t)t->n);
		if (rc != TW_OK) {
			tw_wipe(slot, sizeof(*slot));
			snprintf(err, err_len, "out of memory");
			return rc;
		}
		t->n++;
		return TW_OK;
	}
	*slot = c; /* the same network again: the later one */
	tw_wipe(&c, sizeof(c));
	return TW_OK;
}

const struct tw_srv_client *tw_srv_clients_find(const struct tw_srv_clients *t,
						const struct tw_srv_addr *addr)
{
	if (t == NULL || (addr->family != 4 && addr->family != 6))
		return NULL;
	/* a host entry is the most specific network there is */
	if (t->host != NULL) {
		uint32_t i = t->host[host_slot(t, addr)];

		if (i != HOST_EMPTY)
			return &t->v[i];
	}
	for (size_t k = 0; k < t->nnets; k++)
		if (in_net(&t->v[t->nets[k]], addr))
			return &t->v[t->nets[k]];
	return NULL;
}

void tw_srv_clients_free(struct tw_srv_clients *t)
{
	if (t == NULL)
		return;
	if (t->v != NULL)
		tw_wipe(t->v, t->cap * sizeof(*t->v));
	free(t->v);
	free(t->host);
	free(t->nets);
	tw_wipe(t, sizeof(*t));
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
