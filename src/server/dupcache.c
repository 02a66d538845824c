/*
 * twag — twagd's RADIUS duplicate detection cache (RFC 5080 §2.2.2).
 *
 * "a RADIUS server SHOULD use the source IP address, source port,
 * Identifier and Request Authenticator to determine whether a request is a
 * duplicate" and, when it is, "the server SHOULD respond with the same
 * response it sent to the original" (a retransmission must not run the
 * EAP step again: it would consume a second authentication vector).
 * A duplicate of a request still being processed is discarded.
 *
 * Fixed memory: a ring of compact entries (the oldest is reused first)
 * with a hash index, and a ring of reply octets written at a growing
 * absolute position: a reply is intact while fewer than ring_len octets
 * were written after it, so old replies are invalidated lazily, without a
 * walk. An entry also expires --dup-expiry seconds after its reply. The
 * window a retransmission is caught in is thus min(expiry, n requests,
 * ring_len reply octets). One cache per worker thread: no locks.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/server.h"

#include "srv_hash.h"

enum {
	NIL = UINT32_MAX,
	E_FREE = 0,
	E_PENDING = 1,
	E_DONE = 2,
};

int tw_srv_dup_init(struct tw_srv_dup *d, uint32_t n, unsigned expiry_s,
		    const uint8_t seed[static 16])
{
	uint32_t nb = 16;

	memset(d, 0, sizeof(*d));
	if (n < 16 || n > (1u << 24) || expiry_s == 0)
		return TW_ERR_INVAL;
	while (nb < 2 * n)
		nb <<= 1;
	d->ring_len = (size_t)n * TW_SRV_DUP_AVG_REPLY;
	if (d->ring_len < 4 * TW_SRV_DUP_REPLY_MAX)
		d->ring_len = 4 * TW_SRV_DUP_REPLY_MAX;
	/* calloc: the rings are touched only as they first go round */
	d->e = tw_table_alloc(n, sizeof(*d->e));
	d->ring = tw_table_alloc(d->ring_len, 1);
	d->buckets = tw_table_alloc(nb, sizeof(*d->buckets));
	if (d->e == NULL || d->ring == NULL || d->buckets == NULL) {
		tw_table_free(d->e, n, sizeof(*d->e));
		tw_table_free(d->ring, d->ring_len, 1);
		tw_table_free(d->buckets, nb, sizeof(*d->buckets));
		memset(d, 0, sizeof(*d));
		return TW_ERR_NOMEM;
	}
	memset(d->buckets, 0xff, (size_t)nb * sizeof(*d->buckets));
	d->nbuckets = nb;
	d->n = n;
	d->key[0] = tw_load_le64(seed);
	d->key[1] = tw_load_le64(seed + 8);
	d->expiry_ms = (uint64_t)expiry_s * 1000;
	return TW_OK;
}

void tw_srv_dup_free(struct tw_srv_dup *d)
{
	tw_table_free(d->e, d->n, sizeof(*d->e));
	tw_table_free(d->ring, d->ring_len, 1);
	tw_table_free(d->buckets, d->nbuckets, sizeof(*d->buckets));
	memset(d, 0, sizeof(*d));
}

static uint32_t bucket_of(const struct tw_srv_dup *d, const struct tw_srv_addr *addr,
			  uint16_t port, uint8_t id, const uint8_t auth[16])
{
	uint8_t k[1 + 16 + 2 + 1 + 16];

	k[0] = addr->family;
	memcpy(k + 1, addr->a, 16);
	tw_store_be16(k + 17, port);
	k[19] = id;
	memcpy(k + 20, auth, 16);
	return (uint32_t)tw_srv_siphash(d->key, k, sizeof(k)) & (d->nbuckets - 1);
}

static void unlink_entry(struct tw_srv_dup *d, uint32_t i)
{
	struct tw_srv_dup_entry *e = &d->e[i];
	uint32_t *p = &d->buckets[e->bucket];

	while (*p != NIL && *p != i)
		p = &d->e[*p].hnext;
	if (*p == i)
		*p = e->hnext;
	e->hnext = NIL;
	e->state = E_FREE;
}

/* The reply octets are still in the ring (not overwritten since). */
static bool reply_intact(const struct tw_srv_dup *d, const struct tw_srv_dup_entry *e)
{
	return e->reply_off + d->ring_len >= d->wpos;
}

enum tw_srv_dup_result tw_srv_dup_lookup(struct tw_srv_dup *d,
					 const struct tw_srv_addr *addr, uint16_t port,
					 uint8_t id, const uint8_t auth[static 16],
					 uint64_t now_ms, struct tw_srv_dup_entry **out)
{
	uint32_t b = bucket_of(d, addr, port, id, auth), i;
	struct tw_srv_dup_entry *e;

	for (i = d->buckets[b]; i != NIL; i = d->e[i].hnext) {
		e = &d->e[i];
		if (e->id != id || e->port != port || !tw_srv_addr_eq(&e->addr, addr) ||
		    memcmp(e->auth, auth, 16) != 0)
			continue;
		if (e->state == E_PENDING) {
			*out = e;
			return TW_SRV_DUP_PENDING;
		}
		if (now_ms < e->expires_ms && reply_intact(d, e)) {
			*out = e;
			return TW_SRV_DUP_REPLAY;
		}
		/* expired or overwritten: the same key is a new request now */
		unlink_entry(d, i);
		break;
	}
	/* the oldest entry of the ring is reused, never one still waiting for
	 * its reply (a worker signs and caches a batch's replies at its end:
	 * worker.c): with every entry waiting, this request is not cached */
	for (uint32_t k = 0;; k++) {
		i = d->next;
		d->next = (d->next + 1) % d->n;
		if (d->e[i].state != E_PENDING)
			break;
		if (k + 1 == d->n) {
			*out = NULL;
			return TW_SRV_DUP_NEW;
		}
	}
	if (d->e[i].state != E_FREE)
		unlink_entry(d, i);
	e = &d->e[i];
	e->state = E_PENDING;
	e->id = id;
	e->port = port;
	e->addr = *addr;
	memcpy(e->auth, auth, 16);
	e->reply_len = 0;
	e->reply_off = 0;
	e->expires_ms = 0;
	e->bucket = b;
	e->hnext = d->buckets[b];
	d->buckets[b] = i;
	*out = e;
	return TW_SRV_DUP_NEW;
}

void tw_srv_dup_prefetch(const struct tw_srv_dup *d, const struct tw_srv_addr *addr,
			 uint16_t port, uint8_t id, const uint8_t auth[static 16], uint32_t k)
{
	const struct tw_srv_dup_entry *r;

	if (d->n == 0)
		return;
	__builtin_prefetch(&d->buckets[bucket_of(d, addr, port, id, auth)], 0, 3);
	r = &d->e[(d->next + k) % d->n]; /* reused unless pending: then a later one */
	if (r->state != E_FREE)
		__builtin_prefetch(&d->buckets[r->bucket], 1, 3);
}

const uint8_t *tw_srv_dup_reply(const struct tw_srv_dup *d, const struct tw_srv_dup_entry *e)
{
	return d->ring + e->reply_off % d->ring_len;
}

void tw_srv_dup_done(struct tw_srv_dup *d, struct tw_srv_dup_entry *e,
		     const uint8_t *reply, size_t len, uint64_t now_ms)
{
	size_t pos;

	if (e == NULL || e->state != E_PENDING)
		return;
	if (len == 0 || len > TW_SRV_DUP_REPLY_MAX) {
		tw_srv_dup_forget(d, e);
		return;
	}
	/* a reply is stored contiguously: one that would wrap starts the
	 * next lap of the ring instead */
	pos = d->wpos % d->ring_len;
	if (pos + len > d->ring_len)
		d->wpos += d->ring_len - pos;
	memcpy(d->ring + d->wpos % d->ring_len, reply, len);
	e->reply_off = d->wpos;
	e->reply_len = (uint16_t)len;
	d->wpos += len;
	e->expires_ms = now_ms + d->expiry_ms;
	e->state = E_DONE;
}

void tw_srv_dup_forget(struct tw_srv_dup *d, struct tw_srv_dup_entry *e)
{
	if (e != NULL && e->state != E_FREE)
		unlink_entry(d, (uint32_t)(e - d->e));
}
