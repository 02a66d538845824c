/*
 * twag — twagd's EAP session table: one slot per live EAP conversation
 * (RFC 3579 §2.1: Access-Challenge carries State, the NAS echoes it in the
 * next Access-Request), all allocated at start-up.
 *
 * State = (slot index ^ a random mask) | 12 random octets, so a lookup is
 * one array access and a constant-time token comparison; a stale or forged
 * State finds nothing.
 *
 * Bounded against floods of half-finished EAP starts:
 *   - one live conversation per Calling-Station-Id of a client: a new
 *     start from the same station through the same client ends the
 *     previous one (a client cannot end another client's conversations,
 *     as it cannot continue them: see the State binding below);
 *   - sessions sit on two lists in last-packet order: HALF-OPEN (the peer
 *     has not answered any request of ours yet) and ESTABLISHED (it has:
 *     a live phone);
 *   - when the table is full, expired sessions go first, then the least
 *     recently used half-open one; established ones are never evicted
 *     before their timeout. A flood of starts only ever evicts the oldest
 *     unanswered starts: a phone's fresh session survives as long as the
 *     flood brings fewer than --max-sessions starts per round trip (65536
 *     by default: over a million starts/s for a 50 ms round trip), and
 *     once the phone has answered it cannot be evicted at all.
 *     Deliberately, a session whose challenge is out (a vector spent) is
 *     NOT protected before the peer answers: starts with a known IMSI get
 *     challenges too, and protecting those would let a flood of them lock
 *     every slot and refuse all new attaches for the protected time;
 *   - every slot expires --session-timeout seconds after its last packet.
 *
 * One mutex guards the lists and indexes; it is held for a few pointer
 * updates per packet (and for at most a bounded number of slot wipes by
 * the expiry sweep). A State is bound to the client address that started
 * the conversation (checked under the lock, before anything changes). The engine context of a session is used by the one
 * worker that holds it "busy", outside the lock.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/server.h"

#include "srv_hash.h"

enum {
	NIL = UINT32_MAX,
	L_HALF = 0,
	L_EST = 1,
	L_FREE = 2,
};

static void unlink_list(struct tw_srv_sessions *t, struct tw_srv_session *s)
{
	uint8_t l = s->list;

	if (s->prev != NIL)
		t->slots[s->prev].next = s->next;
	else
		t->head[l] = s->next;
	if (s->next != NIL)
		t->slots[s->next].prev = s->prev;
	else
		t->tail[l] = s->prev;
	s->prev = s->next = NIL;
}

static void push_tail(struct tw_srv_sessions *t, struct tw_srv_session *s, uint8_t l)
{
	s->list = l;
	s->next = NIL;
	s->prev = t->tail[l];
	if (t->tail[l] != NIL)
		t->slots[t->tail[l]].next = s->idx;
	else
		t->head[l] = s->idx;
	t->tail[l] = s->idx;
}

static void station_unlink(struct tw_srv_sessions *t, struct tw_srv_session *s)
{
	uint32_t *p;

	if (!s->has_station)
		return;
	p = &t->buckets[s->station_hash & (t->nbuckets - 1)];
	while (*p != NIL && *p != s->idx)
		p = &t->slots[*p].hnext;
	if (*p == s->idx)
		*p = s->hnext;
	s->hnext = NIL;
	s->has_station = false;
}

/* Ends a session: the engine context (keys, RES, Kc) is wiped. */
static void slot_free(struct tw_srv_sessions *t, struct tw_srv_session *s)
{
	unlink_list(t, s);
	station_unlink(t, s);
	tw_wipe(&s->eng, sizeof(s->eng));
	tw_wipe(s->token, sizeof(s->token));
	tw_wipe(s->idpkt, sizeof(s->idpkt));
	s->idpkt_len = 0;
	s->busy = s->doomed = s->established = false;
	s->list = L_FREE;
	s->next = t->free_head;
	t->free_head = s->idx;
	t->st.active--;
}

static bool expired(const struct tw_srv_sessions *t, const struct tw_srv_session *s,
		    uint64_t now_ms)
{
	return now_ms >= s->last_ms + t->timeout_ms;
}

int tw_srv_sessions_init(struct tw_srv_sessions *t, uint32_t cap, unsigned timeout_s,
			 const uint8_t seed[static 16])
{
	uint32_t nb = 16;

	memset(t, 0, sizeof(*t));
	if (cap < TW_SRV_MIN_SESSIONS || cap > TW_SRV_MAX_SESSIONS || timeout_s == 0)
		return TW_ERR_INVAL;
	while (nb < cap)
		nb <<= 1;
	t->slots = tw_table_alloc(cap, sizeof(*t->slots));
	t->buckets = tw_table_alloc(nb, sizeof(*t->buckets));
	if (t->slots == NULL || t->buckets == NULL) {
		tw_table_free(t->slots, cap, sizeof(*t->slots));
		tw_table_free(t->buckets, nb, sizeof(*t->buckets));
		memset(t, 0, sizeof(*t));
		return TW_ERR_NOMEM;
	}
	if (pthread_mutex_init(&t->lock, NULL) != 0) {
		tw_table_free(t->slots, cap, sizeof(*t->slots));
		tw_table_free(t->buckets, nb, sizeof(*t->buckets));
		memset(t, 0, sizeof(*t));
		return TW_ERR_NOMEM;
	}
	memset(t->buckets, 0xff, (size_t)nb * sizeof(*t->buckets));
	t->nbuckets = nb;
	t->cap = cap;
	t->free_head = NIL;
	for (unsigned l = 0; l < 2; l++)
		t->head[l] = t->tail[l] = NIL;
	t->mask = tw_load_be32(seed);
	t->hash_key[0] = tw_load_le64(seed);
	t->hash_key[1] = tw_load_le64(seed + 8);
	t->timeout_ms = (uint64_t)timeout_s * 1000;
	return TW_OK;
}

void tw_srv_sessions_free(struct tw_srv_sessions *t)
{
	if (t->slots != NULL) {
		tw_wipe(t->slots, (size_t)t->used * sizeof(*t->slots));
		tw_table_free(t->slots, t->cap, sizeof(*t->slots));
		tw_table_free(t->buckets, t->nbuckets, sizeof(*t->buckets));
		pthread_mutex_destroy(&t->lock);
	}
	memset(t, 0, sizeof(*t));
}

/* Recycled slots first; never-used ones are handed out from a high-water
 * mark, so memory is touched only as the table fills (65536 slots are
 * ~150 MB of address space). */
static uint32_t take_free(struct tw_srv_sessions *t)
{
	uint32_t i = t->free_head;

	if (i != NIL) {
		t->free_head = t->slots[i].next;
		return i;
	}
	if (t->used < t->cap) {
		i = t->used++;
		t->slots[i].idx = i;
		return i;
	}
	return NIL;
}

/* Frees an expired session or evicts the oldest half-open one; NIL when
 * every slot is a live established or busy conversation. The walks are
 * bounded: the lists are in last-packet order, so expired ones are at the
 * heads and busy ones (just touched) near the tails. */
static uint32_t reclaim(struct tw_srv_sessions *t, uint64_t now_ms)
{
	uint32_t i;
	unsigned n;

	for (uint8_t l = L_HALF; l <= L_EST; l++) {
		for (i = t->head[l], n = 0; i != NIL && n < 16; n++) {
			struct tw_srv_session *s = &t->slots[i];

			if (!expired(t, s, now_ms))
				break;
			if (!s->busy) {
				slot_free(t, s);
				t->st.expired++;
				return take_free(t);
			}
			i = s->next;
		}
	}
	for (i = t->head[L_HALF], n = 0; i != NIL && n < 64; n++) {
		struct tw_srv_session *s = &t->slots[i];

		if (!s->busy) {
			slot_free(t, s);
			t->st.evicted++;
			return take_free(t);
		}
		i = s->next;
	}
	return NIL;
}

/* The station index key: the client and its Calling-Station-Id (of any
 * length, hashed whole; the hash is keyed, so no client can aim many
 * stations at one chain). */
static uint64_t station_key(const struct tw_srv_sessions *t, const struct tw_srv_addr *nas,
			    const uint8_t *station, size_t station_len)
{
	uint8_t k[1 + 16 + 8];

	k[0] = nas->family;
	memcpy(k + 1, nas->a, 16);
	tw_store_le64(k + 17, tw_srv_siphash(t->hash_key, station, station_len));
	return tw_srv_siphash(t->hash_key, k, sizeof(k));
}

struct tw_srv_session *tw_srv_sessions_start(struct tw_srv_sessions *t,
					     const struct tw_srv_addr *nas,
					     const uint8_t *station, size_t station_len,
					     const uint8_t token[static TW_SRV_TOKEN_LEN],
					     uint64_t now_ms)
{
	struct tw_srv_session *s;
	uint64_t h = 0;
	uint32_t i, *bucket = NULL;

	if (station_len == 0)
		station = NULL;
	if (station != NULL)
		h = station_key(t, nas, station, station_len);
	pthread_mutex_lock(&t->lock);
	if (station != NULL) {
		/* one live conversation per Calling-Station-Id of a client */
		bucket = &t->buckets[h & (t->nbuckets - 1)];
		for (i = *bucket; i != NIL; i = t->slots[i].hnext) {
			struct tw_srv_session *old = &t->slots[i];
			size_t kept = station_len < TW_SRV_STATION_MAX ? station_len :
									 TW_SRV_STATION_MAX;

			if (old->station_hash != h || old->station_len != kept ||
			    !tw_srv_addr_eq(&old->nas, nas) ||
			    memcmp(old->station, station, kept) != 0)
				continue;
			station_unlink(t, old);
			t->st.replaced++;
			if (old->busy)
				old->doomed = true;
			else
				slot_free(t, old);
			break;
		}
	}
	i = take_free(t);
	if (i == NIL)
		i = reclaim(t, now_ms);
	if (i == NIL) {
		t->st.refused++;
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	s = &t->slots[i];
	s->busy = true;
	s->doomed = false;
	s->established = false;
	s->debug = false;
	s->last_ms = now_ms;
	memcpy(s->token, token, TW_SRV_TOKEN_LEN);
	/* under the lock: _acquire compares it for any thread */
	s->nas = *nas;
	s->hnext = NIL;
	s->has_station = false;
	s->station_len = 0;
	if (station != NULL) {
		size_t kept = station_len < TW_SRV_STATION_MAX ? station_len : TW_SRV_STATION_MAX;

		memcpy(s->station, station, kept);
		s->station_len = (uint8_t)kept;
		s->station_hash = h;
		s->has_station = true;
		s->hnext = *bucket;
		*bucket = i;
	}
	push_tail(t, s, L_HALF);
	t->st.active++;
	pthread_mutex_unlock(&t->lock);
	/* the worker-owned part starts clean */
	s->method = 0;
	s->tried = 0;
	s->last_req_id = 0;
	s->idpkt_len = 0;
	return s;
}

int tw_srv_sessions_acquire(struct tw_srv_sessions *t, const struct tw_srv_addr *nas,
			    const uint8_t *state, size_t state_len, uint64_t now_ms,
			    struct tw_srv_session **out)
{
	struct tw_srv_session *s;
	uint32_t i;
	int rc = TW_OK;

	*out = NULL;
	if (state == NULL || state_len != TW_SRV_STATE_LEN)
		return TW_ERR_NOTFOUND;
	i = tw_load_be32(state) ^ t->mask;
	if (i >= t->cap)
		return TW_ERR_NOTFOUND;
	pthread_mutex_lock(&t->lock);
	s = &t->slots[i];
	if (i >= t->used || s->list == L_FREE || s->doomed ||
	    !tw_ct_eq(s->token, state + 4, TW_SRV_TOKEN_LEN)) {
		rc = TW_ERR_NOTFOUND;
	} else if (!tw_srv_addr_eq(&s->nas, nas)) {
		/* another client's conversation: no side effect at all */
		rc = TW_ERR_AUTH;
	} else if (s->busy) {
		rc = TW_ERR_STATE;
	} else if (expired(t, s, now_ms)) {
		slot_free(t, s);
		t->st.expired++;
		rc = TW_ERR_NOTFOUND;
	} else {
		s->busy = true;
		s->last_ms = now_ms;
		unlink_list(t, s);
		push_tail(t, s, s->list);
		*out = s;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void tw_srv_session_state(const struct tw_srv_sessions *t, const struct tw_srv_session *s,
			  uint8_t out[static TW_SRV_STATE_LEN])
{
	tw_store_be32(out, s->idx ^ t->mask);
	memcpy(out + 4, s->token, TW_SRV_TOKEN_LEN);
}

void tw_srv_sessions_release(struct tw_srv_sessions *t, struct tw_srv_session *s,
			     bool ended, uint64_t now_ms)
{
	pthread_mutex_lock(&t->lock);
	s->busy = false;
	if (ended || s->doomed) {
		slot_free(t, s);
	} else {
		s->last_ms = now_ms;
		unlink_list(t, s);
		push_tail(t, s, s->established ? L_EST : L_HALF);
	}
	pthread_mutex_unlock(&t->lock);
}

unsigned tw_srv_sessions_expire(struct tw_srv_sessions *t, uint64_t now_ms, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&t->lock);
	for (uint8_t l = L_HALF; l <= L_EST; l++) {
		uint32_t i = t->head[l];

		while (i != NIL && n < max) {
			struct tw_srv_session *s = &t->slots[i];
			uint32_t next = s->next;

			if (!expired(t, s, now_ms))
				break;
			if (!s->busy) {
				slot_free(t, s);
				t->st.expired++;
				n++;
			}
			i = next;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

void tw_srv_sessions_stats(struct tw_srv_sessions *t, struct tw_srv_sessions_stats *out)
{
	pthread_mutex_lock(&t->lock);
	*out = t->st;
	out->max = t->cap;
	pthread_mutex_unlock(&t->lock);
}
