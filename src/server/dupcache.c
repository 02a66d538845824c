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
 * with an index, and a ring of reply octets written at a growing
 * absolute position: a reply is intact while fewer than ring_len octets
 * were written after it, so old replies are invalidated lazily, without a
 * walk. An entry also expires --dup-expiry seconds after its reply. The
 * window a retransmission is caught in is thus min(expiry, n requests,
 * ring_len reply octets). One cache per worker thread: no locks.
 *
 * The index is open addressing over at least 2n slots (oa_index.h): a
 * look-up compares the request's hash bits slot by slot and reads an
 * entry only when they match, so a new request (nearly every one) costs
 * the one or two cache lines of its slots, prefetched with the batch,
 * and no walk through entries scattered over megabytes.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/server.h"

#include "../common/oa_index.h"
#include "srv_hash.h"

enum {
	E_FREE = 0,
	E_PENDING = 1,
	E_DONE = 2,
};

_Static_assert(sizeof(struct tw_srv_dup_entry) == 64, "an entry is one cache line");

int tw_srv_dup_init(struct tw_srv_dup *d, uint32_t n, unsigned expiry_s,
		    const uint8_t seed[static 16])
{
	uint32_t ns = 16;

	memset(d, 0, sizeof(*d));
	if (n < 16 || n > (1u << 24) || expiry_s == 0)
		return TW_ERR_INVAL;
	while (ns < 2 * n)
		ns <<= 1;
	d->n = n;
	d->nslots = ns;
	d->ring_len = (size_t)n * TW_SRV_DUP_AVG_REPLY;
	if (d->ring_len < 4 * TW_SRV_DUP_REPLY_MAX)
		d->ring_len = 4 * TW_SRV_DUP_REPLY_MAX;
	/* all zero: entries free, slots empty, no entry indexed. Committed
	 * now: every entry and reply octet is written in turn as the rings go
	 * round, and the slots at random; the first lap's page faults (2 MiB
	 * zeroings) would fall on requests */
	d->e = tw_table_alloc(n, sizeof(*d->e));
	d->ring = tw_table_alloc(d->ring_len, 1);
	d->slots = tw_table_alloc(ns, sizeof(*d->slots));
	d->homes = tw_table_alloc(n, sizeof(*d->homes));
	if (d->e == NULL || d->ring == NULL || d->slots == NULL || d->homes == NULL ||
	    tw_table_populate(d->e, n, sizeof(*d->e)) != TW_OK ||
	    tw_table_populate(d->ring, d->ring_len, 1) != TW_OK ||
	    tw_table_populate(d->slots, ns, sizeof(*d->slots)) != TW_OK ||
	    tw_table_populate(d->homes, n, sizeof(*d->homes)) != TW_OK) {
		tw_srv_dup_free(d);
		return TW_ERR_NOMEM;
	}
	d->key[0] = tw_load_le64(seed);
	d->key[1] = tw_load_le64(seed + 8);
	d->expiry_ms = (uint64_t)expiry_s * 1000;
	return TW_OK;
}

void tw_srv_dup_free(struct tw_srv_dup *d)
{
	tw_table_free(d->e, d->n, sizeof(*d->e));
	tw_table_free(d->ring, d->ring_len, 1);
	tw_table_free(d->slots, d->nslots, sizeof(*d->slots));
	tw_table_free(d->homes, d->n, sizeof(*d->homes));
	memset(d, 0, sizeof(*d));
}

uint64_t tw_srv_dup_hash(const struct tw_srv_dup *d, const struct tw_srv_addr *addr,
			 uint16_t port, uint8_t id, const uint8_t auth[static 16])
{
	uint8_t k[1 + 16 + 2 + 1 + 16];

	k[0] = addr->family;
	memcpy(k + 1, addr->a, 16);
	tw_store_be16(k + 17, port);
	k[19] = id;
	memcpy(k + 20, auth, 16);
	return tw_srv_siphash(d->key, k, sizeof(k));
}

/* Takes entry i (in the index: state not free) out of the index. */
static void unlink_entry(struct tw_srv_dup *d, uint32_t i)
{
	d->e[i].state = E_FREE;
	/* homes[i] 0: not indexed (never: entries not free are) */
	if (d->homes[i] != 0)
		(void)tw_oa_del(d->slots, d->nslots - 1, d->homes[i] - 1, i);
	d->homes[i] = 0;
}

/* The reply octets are still in the ring (not overwritten since). */
static bool reply_intact(const struct tw_srv_dup *d, const struct tw_srv_dup_entry *e)
{
	return e->reply_off + d->ring_len >= d->wpos;
}

enum tw_srv_dup_result tw_srv_dup_lookup(struct tw_srv_dup *d, uint64_t h,
					 const struct tw_srv_addr *addr, uint16_t port,
					 uint8_t id, const uint8_t auth[static 16],
					 uint64_t now_ms, struct tw_srv_dup_entry **out)
{
	const uint32_t mask = d->nslots - 1;
	const uint64_t hb = tw_oa_tag(h);
	struct tw_srv_dup_entry *e;
	uint32_t s, i;
	uint64_t v;

	/* at most n of the 2n or more slots are used: the run ends */
	for (s = tw_oa_home(h, mask); (v = d->slots[s]) != 0; s = (s + 1) & mask) {
		if (tw_oa_tag(v) != hb)
			continue;
		e = &d->e[tw_oa_entry(v)];
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
		unlink_entry(d, tw_oa_entry(v));
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
	d->homes[i] = tw_oa_put(d->slots, mask, h, i) + 1;
	*out = e;
	return TW_SRV_DUP_NEW;
}

void tw_srv_dup_prefetch(const struct tw_srv_dup *d, uint64_t h, uint32_t k)
{
	uint32_t i, home;

	if (d->n == 0)
		return;
	__builtin_prefetch(&d->slots[tw_oa_home(h, d->nslots - 1)], 1, 3);
	i = (d->next + k) % d->n; /* reused unless pending: then a later one */
	__builtin_prefetch(&d->e[i], 1, 3);
	home = d->homes[i]; /* 4 octets of a small array, in sequence */
	if (home != 0)
		__builtin_prefetch(&d->slots[home - 1], 1, 3);
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
