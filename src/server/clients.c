/*
 * twag — twagd's RADIUS client table (RFC 2865 §3: a server accepts
 * requests only from configured clients, each with its shared secret; a
 * request from any other address is silently discarded, RFC 4669
 * radiusAuthServInvalidRequests).
 *
 * Clients are networks (IP/PREFIX, IPv4 or IPv6) and the most specific one
 * wins. The table is built at start-up and on SIGHUP (a new table is
 * swapped in: see server.c); lookups only read it. A deployment may name
 * every access point (tens of thousands of /32s) or every AP subnet
 * (thousands of /24s or /28s): look-ups go through an index (struct
 * tw_srv_clients), a probe per distinct prefix length, never a scan.
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

/* The mask of the first `prefix` bits of 16 octets as two words in memory
 * order (the order tw_load_le64 reads). */
static void prefix_words(unsigned prefix, uint64_t m[2])
{
	uint8_t b[16];

	for (unsigned i = 0; i < 16; i++) {
		unsigned lo = i * 8;

		b[i] = lo >= prefix ? 0 :
		       prefix - lo >= 8 ? 0xff : (uint8_t)(0xff << (8 - (prefix - lo)));
	}
	m[0] = tw_load_le64(b);
	m[1] = tw_load_le64(b + 8);
}

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
	{
		uint64_t m[2];

		prefix_words(bits, m);
		tw_store_le64(a->a, tw_load_le64(a->a) & m[0]);
		tw_store_le64(a->a + 8, tw_load_le64(a->a + 8) & m[1]);
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

/* ---- the index ------------------------------------------------------------ */

/* A slot of the index: 0 empty, else the entry's hash bits above 32 and
 * its index in v + 1 below, so that a probe past another network's slot
 * compares those bits and does not read its entry (a cold line of a
 * table of thousands). */
#define SLOT_IDX(v) ((uint32_t)(v)-1)
#define SLOT_TAG(h) ((uint64_t)(h) & ~(uint64_t)UINT32_MAX)

static unsigned fam_ix(uint8_t family)
{
	return family == 4 ? 0 : 1;
}

/* A network as the index compares it: its 16 octets as two words (in
 * memory order; an IPv4 network's second word and tail are zero) and
 * (family, prefix). */
struct net_key {
	uint64_t w0, w1;
	unsigned fp; /* family << 8 | prefix */
};

static struct net_key key_of(const struct tw_srv_addr *net, unsigned prefix)
{
	return (struct net_key){ tw_load_le64(net->a), tw_load_le64(net->a + 8),
				 (unsigned)net->family << 8 | prefix };
}

/* A seeded mix of a network's key (the seed is random per table: the
 * slots an address probes cannot be worked out from outside). */
static uint64_t net_hash(const struct tw_srv_clients *t, const struct net_key *k)
{
	uint64_t h = (k->w0 ^ t->seed[0]) * 0x9e3779b97f4a7c15ULL;

	h ^= (k->w1 ^ t->seed[1] ^ k->fp) * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

/* Entry c is the network k: host bits are zero in both (tw_srv_addr_parse
 * clears them, a look-up masks them off), so the words compare. */
static bool is_net(const struct tw_srv_client *c, const struct net_key *k)
{
	return ((unsigned)c->net.family << 8 | c->prefix) == k->fp &&
	       tw_load_le64(c->net.a) == k->w0 && tw_load_le64(c->net.a + 8) == k->w1;
}

/* The slot of network k, whose hash is h: its entry's, or the empty one
 * ending its probe sequence. */
static size_t net_slot(const struct tw_srv_clients *t, const struct net_key *k, uint64_t h)
{
	size_t mask = t->nslot - 1, i = (size_t)h & mask;

	while (t->slot[i] != 0 && (SLOT_TAG(t->slot[i]) != SLOT_TAG(h) ||
				   !is_net(&t->v[SLOT_IDX(t->slot[i])], k)))
		i = (i + 1) & mask;
	return i;
}

/* The slot of entry c's network (its hash into *h when h is not NULL). */
static size_t entry_slot(const struct tw_srv_clients *t, const struct tw_srv_client *c,
			 uint64_t *h)
{
	struct net_key k = key_of(&c->net, c->prefix);
	uint64_t hk = net_hash(t, &k);

	if (h != NULL)
		*h = hk;
	return net_slot(t, &k, hk);
}

/* Room for one more entry (load at most 1/2). */
static int slot_room(struct tw_srv_clients *t, size_t entries)
{
	size_t n = t->nslot ? t->nslot : 16;
	uint64_t *old = t->slot;
	size_t nold = t->nslot;

	if (t->slot != NULL && 2 * (entries + 1) <= t->nslot)
		return TW_OK;
	while (2 * (entries + 1) > n)
		n *= 2;
	if (t->slot == NULL &&
	    getrandom(t->seed, sizeof(t->seed), GRND_NONBLOCK) != (ssize_t)sizeof(t->seed)) {
		/* the pool not ready yet (early boot): the table works the
		 * same, its probes are just predictable */
		t->seed[0] = (uint64_t)(uintptr_t)t ^ 0x243f6a8885a308d3ULL;
		t->seed[1] = (uint64_t)(uintptr_t)&n ^ 0x13198a2e03707344ULL;
	}
	t->slot = malloc(n * sizeof(*t->slot));
	if (t->slot == NULL) {
		t->slot = old;
		return TW_ERR_NOMEM;
	}
	memset(t->slot, 0, n * sizeof(*t->slot));
	t->nslot = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i] != 0)
			t->slot[entry_slot(t, &t->v[SLOT_IDX(old[i])], NULL)] = old[i];
	free(old);
	return TW_OK;
}

/* Indexes v[i] (just appended, a network not in the table yet). */
static int index_add(struct tw_srv_clients *t, uint32_t i)
{
	const struct tw_srv_client *c = &t->v[i];
	unsigned f = fam_ix(c->net.family), k;
	int rc = slot_room(t, i);
	uint64_t h;
	size_t s;

	if (rc != TW_OK)
		return rc;
	s = entry_slot(t, c, &h);
	t->slot[s] = SLOT_TAG(h) | ((uint64_t)i + 1);
	if (t->len_count[f][c->prefix]++ > 0)
		return TW_OK;
	/* a new prefix length: into the family's list, longest first */
	for (k = t->nlens[f]; k > 0 && t->lens[f][k - 1] < c->prefix; k--) {
		t->lens[f][k] = t->lens[f][k - 1];
		t->len_mask[f][k][0] = t->len_mask[f][k - 1][0];
		t->len_mask[f][k][1] = t->len_mask[f][k - 1][1];
	}
	t->lens[f][k] = (uint8_t)c->prefix;
	prefix_words(c->prefix, t->len_mask[f][k]);
	t->nlens[f]++;
	return TW_OK;
}

/* The entry of exactly this network, or NULL. */
static struct tw_srv_client *same_net(struct tw_srv_clients *t, const struct tw_srv_client *c)
{
	size_t i;

	if (t->slot == NULL)
		return NULL;
	i = entry_slot(t, c, NULL);
	return t->slot[i] == 0 ? NULL : &t->v[SLOT_IDX(t->slot[i])];
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
	c.from_cmdline = from_cmdline;
	tw_srv_addr_text(&c.net, text, sizeof(text));
	snprintf(c.name, sizeof(c.name), "%s/%u", text, c.prefix);

	slot = same_net(t, &c);
	if (slot == NULL && t->n >= UINT32_MAX - 1) {
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
	uint64_t w0, w1;
	unsigned f;

	if (t == NULL || t->slot == NULL || (addr->family != 4 && addr->family != 6))
		return NULL;
	f = fam_ix(addr->family);
	w0 = tw_load_le64(addr->a);
	w1 = tw_load_le64(addr->a + 8);
	/* longest prefix first: the first network that holds addr is the one */
	for (unsigned k = 0; k < t->nlens[f]; k++) {
		const struct net_key nk = { w0 & t->len_mask[f][k][0], w1 & t->len_mask[f][k][1],
					    (unsigned)addr->family << 8 | t->lens[f][k] };
		size_t i = net_slot(t, &nk, net_hash(t, &nk));

		if (t->slot[i] != 0)
			return &t->v[SLOT_IDX(t->slot[i])];
	}
	return NULL;
}

const struct tw_srv_client *tw_srv_clients_get(const struct tw_srv_clients *t,
					       const struct tw_srv_client *c)
{
	size_t i;

	if (t == NULL || t->slot == NULL || c == NULL)
		return NULL;
	i = entry_slot(t, c, NULL);
	return t->slot[i] != 0 ? &t->v[SLOT_IDX(t->slot[i])] : NULL;
}

void tw_srv_clients_free(struct tw_srv_clients *t)
{
	if (t == NULL)
		return;
	if (t->v != NULL)
		tw_wipe(t->v, t->cap * sizeof(*t->v));
	free(t->v);
	free(t->slot);
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
