/*
 * twag — twagd's accounting session table (RFC 2866, June 2000, §5.1
 * Acct-Status-Type; RFC 2869, June 2000, §5.1-§5.3).
 *
 * Fixed memory: cap slots allocated at start-up, a free list, a hash index
 * (chains through the slots, keyed SipHash over the whole key, so a
 * client cannot aim sessions at one chain) and one age list, least
 * recently updated first: a new session in a full table evicts its head.
 * Accounting-On/-Off walk the table once (a NAS restarting is rare; the
 * walk is cap slots under the lock).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/acct.h"
#include "twag/bytes.h"
#include "twag/mem.h"
#include "twag/nai.h"

#include "srv_hash.h"

#define NIL UINT32_MAX

const char *tw_acct_status_name(uint32_t status)
{
	switch (status) {
	case TW_RADIUS_ACCT_START:
		return "start";
	case TW_RADIUS_ACCT_STOP:
		return "stop";
	case TW_RADIUS_ACCT_INTERIM_UPDATE:
		return "interim-update";
	case TW_RADIUS_ACCT_ON:
		return "accounting-on";
	case TW_RADIUS_ACCT_OFF:
		return "accounting-off";
	default:
		return "other";
	}
}

/* ---- the masked user name ------------------------------------------------ */

static char printable(uint8_t c)
{
	return c < 0x20 || c >= 0x7f ? '?' : (char)c;
}

void tw_acct_mask_user(char *out, size_t out_max, const uint8_t *user, size_t len)
{
	size_t at = 0, k = 0, n;
	char imsi[16], masked[TW_NAI_MASK_MAX];
	bool digits = true;

	if (out_max == 0)
		return;
	out[0] = 0;
	if (user == NULL || len == 0 || out_max < TW_ACCT_USER_MAX)
		return;
	while (at < len && user[at] != '@')
		at++;
	for (size_t i = 0; i < at; i++)
		digits &= user[i] >= '0' && user[i] <= '9';
	/* a permanent identity (TS 23.003 §19.3.2: digit | IMSI) or a bare
	 * IMSI: masked as the logs mask IMSIs (MCC+MNC and the last four) */
	/* (fifteen digits are read as an IMSI: IMSIs of 3GPP networks have
	 * fifteen digits) */
	if (digits && at >= 1 + TW_NAI_IMSI_MIN && at <= 1 + TW_NAI_IMSI_MAX &&
	    at != TW_NAI_IMSI_MAX && (user[0] == '0' || user[0] == '1' || user[0] == '6')) {
		memcpy(imsi, user + 1, at - 1);
		if (tw_nai_mask_imsi(masked, sizeof(masked), imsi, at - 1) == TW_OK) {
			out[k++] = (char)user[0];
			n = strlen(masked);
			memcpy(out + k, masked, n);
			k += n;
			goto realm;
		}
	}
	if (digits && at >= TW_NAI_IMSI_MIN && at <= TW_NAI_IMSI_MAX) {
		memcpy(imsi, user, at);
		if (tw_nai_mask_imsi(masked, sizeof(masked), imsi, at) == TW_OK) {
			n = strlen(masked);
			memcpy(out, masked, n);
			k = n;
			goto realm;
		}
	}
	/* anything else (pseudonym, re-authentication id, a name): its
	 * first character only */
	if (at > 0)
		out[k++] = printable(user[0]);
	for (size_t i = 1; i < at && i <= 32; i++)
		out[k++] = '*';
realm:
	/* the realm (RFC 7542 §2.2) names the operator, not the subscriber */
	for (size_t i = at; i < len && k + 1 < out_max; i++)
		out[k++] = printable(user[i]);
	out[k] = 0;
}

/* ---- reading a request ---------------------------------------------------- */

static bool u32_of(const struct tw_radius_pkt *p, const struct tw_radius_attr *a, uint32_t *v)
{
	if (a->len != 4)
		return false;
	*v = tw_load_be32(tw_radius_value(p, a));
	return true;
}

int tw_acct_record_parse(struct tw_acct_record *r, const struct tw_radius_pkt *p,
			 const struct tw_srv_addr *client, uint64_t now)
{
	const struct tw_radius_attr *nas4 = NULL, *nas6 = NULL, *nasid = NULL, *sid = NULL;
	uint32_t in_gw = 0, out_gw = 0, delay = 0, ts = 0, v = 0;
	bool has_status = false, has_ts = false;

	memset(r, 0, sizeof(*r));
	r->key.client = *client;
	for (unsigned i = 0; i < p->n_attrs; i++) {
		const struct tw_radius_attr *a = &p->attrs[i];
		const uint8_t *val = tw_radius_value(p, a);
		bool ok = true;

		/* the first of each counts (RFC 2866 §5.13: at most one) */
		switch (a->type) {
		case TW_RADIUS_ACCT_STATUS_TYPE:
			if (!has_status)
				ok = has_status = u32_of(p, a, &r->status);
			break;
		case TW_RADIUS_ACCT_SESSION_ID:
			if (sid == NULL)
				sid = a;
			break;
		case TW_RADIUS_NAS_IP_ADDRESS:
			ok = a->len == 4;
			if (nas4 == NULL)
				nas4 = a;
			break;
		case TW_RADIUS_NAS_IPV6_ADDRESS:
			ok = a->len == 16;
			if (nas6 == NULL)
				nas6 = a;
			break;
		case TW_RADIUS_NAS_IDENTIFIER:
			if (nasid == NULL)
				nasid = a;
			break;
		case TW_RADIUS_USER_NAME:
			if (!(r->flags & TW_ACCT_F_USER)) {
				tw_acct_mask_user(r->user, sizeof(r->user), val, a->len);
				r->flags |= TW_ACCT_F_USER;
			}
			break;
		case TW_RADIUS_CALLING_STATION_ID:
			if (!(r->flags & TW_ACCT_F_CALLING)) {
				r->calling_len = a->len < TW_ACCT_STATION_MAX ? a->len
									: TW_ACCT_STATION_MAX;
				memcpy(r->calling, val, r->calling_len);
				r->flags |= TW_ACCT_F_CALLING;
			}
			break;
		case TW_RADIUS_CLASS:
			/* the first one: twagd's Access-Accept sends one */
			if (!(r->flags & TW_ACCT_F_CLASS) && a->len <= TW_ACCT_CLASS_MAX) {
				r->class_len = a->len;
				memcpy(r->cls, val, a->len);
				r->flags |= TW_ACCT_F_CLASS;
			}
			break;
		case TW_RADIUS_CALLED_STATION_ID:
			if (!(r->flags & TW_ACCT_F_CALLED)) {
				r->called_len = a->len < TW_ACCT_STATION_MAX ? a->len
									 : TW_ACCT_STATION_MAX;
				memcpy(r->called, val, r->called_len);
				r->flags |= TW_ACCT_F_CALLED;
			}
			break;
		case TW_RADIUS_NAS_PORT:
			ok = u32_of(p, a, &r->nas_port);
			r->flags |= TW_ACCT_F_NAS_PORT;
			break;
		case TW_RADIUS_FRAMED_IP_ADDRESS:
			ok = a->len == 4;
			if (ok)
				memcpy(r->framed_ip, val, 4);
			r->flags |= TW_ACCT_F_FRAMED_IP;
			break;
		case TW_RADIUS_ACCT_SESSION_TIME:
			ok = u32_of(p, a, &r->session_time);
			r->flags |= TW_ACCT_F_SESSION_TIME;
			break;
		case TW_RADIUS_ACCT_TERMINATE_CAUSE:
			ok = u32_of(p, a, &r->terminate_cause);
			r->flags |= TW_ACCT_F_TERMINATE;
			break;
		case TW_RADIUS_ACCT_INPUT_OCTETS:
			ok = u32_of(p, a, &v);
			r->in_octets = (r->in_octets & ~0xffffffffull) | v;
			r->flags |= TW_ACCT_F_IN_OCTETS;
			break;
		case TW_RADIUS_ACCT_OUTPUT_OCTETS:
			ok = u32_of(p, a, &v);
			r->out_octets = (r->out_octets & ~0xffffffffull) | v;
			r->flags |= TW_ACCT_F_OUT_OCTETS;
			break;
		case TW_RADIUS_ACCT_INPUT_GIGAWORDS:
			ok = u32_of(p, a, &in_gw);
			break;
		case TW_RADIUS_ACCT_OUTPUT_GIGAWORDS:
			ok = u32_of(p, a, &out_gw);
			break;
		case TW_RADIUS_ACCT_INPUT_PACKETS:
			ok = u32_of(p, a, &r->in_packets);
			r->flags |= TW_ACCT_F_IN_PACKETS;
			break;
		case TW_RADIUS_ACCT_OUTPUT_PACKETS:
			ok = u32_of(p, a, &r->out_packets);
			r->flags |= TW_ACCT_F_OUT_PACKETS;
			break;
		case TW_RADIUS_ACCT_DELAY_TIME:
			ok = u32_of(p, a, &delay);
			break;
		case TW_RADIUS_EVENT_TIMESTAMP:
			ok = has_ts = u32_of(p, a, &ts);
			break;
		default:
			break;
		}
		if (!ok)
			return TW_ERR_DECODE;
	}
	if (!has_status)
		return TW_ERR_NOTFOUND;
	/* RFC 2869 §5.1-§5.2: how many times the 32-bit counter wrapped */
	r->in_octets |= (uint64_t)in_gw << 32;
	r->out_octets |= (uint64_t)out_gw << 32;
	/* RFC 2869 §5.3: when the event happened, by the NAS's clock; RFC
	 * 2866 §5.2: Acct-Delay-Time says how long ago it was, by ours */
	r->event_time = has_ts ? ts : (delay < now ? now - delay : 0);
	if (sid != NULL) {
		if (sid->len == 0)
			return TW_ERR_DECODE;
		if (sid->len > TW_ACCT_ID_MAX)
			return TW_ERR_LENGTH;
		r->key.id_len = sid->len;
		memcpy(r->key.id, tw_radius_value(p, sid), sid->len);
	} else if (r->status == TW_RADIUS_ACCT_START || r->status == TW_RADIUS_ACCT_STOP ||
		   r->status == TW_RADIUS_ACCT_INTERIM_UPDATE) {
		return TW_ERR_NOTFOUND; /* RFC 2866 §5.5 */
	}
	if (nas4 != NULL) {
		r->key.nas_kind = TW_ACCT_NAS_IPV4;
		r->key.nas_len = 4;
		memcpy(r->key.nas, tw_radius_value(p, nas4), 4);
	} else if (nas6 != NULL) {
		r->key.nas_kind = TW_ACCT_NAS_IPV6;
		r->key.nas_len = 16;
		memcpy(r->key.nas, tw_radius_value(p, nas6), 16);
	} else if (nasid != NULL) {
		if (nasid->len > TW_ACCT_NAS_ID_MAX)
			return TW_ERR_LENGTH;
		r->key.nas_kind = TW_ACCT_NAS_IDENT;
		r->key.nas_len = nasid->len;
		memcpy(r->key.nas, tw_radius_value(p, nasid), nasid->len);
	}
	return TW_OK;
}

/* ---- the table ------------------------------------------------------------ */

int tw_acct_table_init(struct tw_acct_table *t, uint32_t cap, const uint8_t seed[static 16])
{
	uint32_t nb = 16;

	memset(t, 0, sizeof(*t));
	if (cap < TW_ACCT_MIN_SESSIONS || cap > TW_ACCT_MAX_SESSIONS)
		return TW_ERR_INVAL;
	while (nb < cap)
		nb <<= 1;
	t->s = tw_table_alloc(cap, sizeof(*t->s));
	t->buckets = malloc((size_t)nb * sizeof(*t->buckets));
	if (t->s == NULL || t->buckets == NULL) {
		tw_table_free(t->s, cap, sizeof(*t->s));
		free(t->buckets);
		memset(t, 0, sizeof(*t));
		return TW_ERR_NOMEM;
	}
	if (pthread_mutex_init(&t->lock, NULL) != 0) {
		tw_table_free(t->s, cap, sizeof(*t->s));
		free(t->buckets);
		memset(t, 0, sizeof(*t));
		return TW_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < nb; i++)
		t->buckets[i] = NIL;
	t->nbuckets = nb;
	t->cap = cap;
	t->free_head = NIL;
	t->head = t->tail = NIL;
	t->hash_key[0] = tw_load_le64(seed);
	t->hash_key[1] = tw_load_le64(seed + 8);
	t->st.max = cap;
	return TW_OK;
}

void tw_acct_table_free(struct tw_acct_table *t)
{
	if (t->s == NULL)
		return;
	pthread_mutex_destroy(&t->lock);
	tw_table_free(t->s, t->cap, sizeof(*t->s));
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

static uint64_t key_hash(const struct tw_acct_table *t, const struct tw_acct_key *k)
{
	uint8_t buf[1 + 16 + 2 + TW_ACCT_NAS_ID_MAX + 1 + TW_ACCT_ID_MAX];
	size_t n = 0;

	buf[n++] = k->client.family;
	memcpy(buf + n, k->client.a, 16);
	n += 16;
	buf[n++] = k->nas_kind;
	buf[n++] = k->nas_len;
	memcpy(buf + n, k->nas, k->nas_len);
	n += k->nas_len;
	buf[n++] = k->id_len;
	memcpy(buf + n, k->id, k->id_len);
	n += k->id_len;
	return tw_srv_siphash(t->hash_key, buf, n);
}

static bool same_nas(const struct tw_acct_key *a, const struct tw_acct_key *b)
{
	return tw_srv_addr_eq(&a->client, &b->client) && a->nas_kind == b->nas_kind &&
	       a->nas_len == b->nas_len && memcmp(a->nas, b->nas, a->nas_len) == 0;
}

static bool same_key(const struct tw_acct_key *a, const struct tw_acct_key *b)
{
	return same_nas(a, b) && a->id_len == b->id_len && memcmp(a->id, b->id, a->id_len) == 0;
}

static void age_unlink(struct tw_acct_table *t, uint32_t i)
{
	struct tw_acct_session *s = &t->s[i];

	if (s->prev != NIL)
		t->s[s->prev].next = s->next;
	else
		t->head = s->next;
	if (s->next != NIL)
		t->s[s->next].prev = s->prev;
	else
		t->tail = s->prev;
	s->prev = s->next = NIL;
}

static void age_append(struct tw_acct_table *t, uint32_t i)
{
	struct tw_acct_session *s = &t->s[i];

	s->prev = t->tail;
	s->next = NIL;
	if (t->tail != NIL)
		t->s[t->tail].next = i;
	else
		t->head = i;
	t->tail = i;
}

/* Into the age list by last_update: after the youngest that is not
 * younger (from the tail: sessions restored oldest first cost one step). */
static void age_insert(struct tw_acct_table *t, uint32_t i)
{
	struct tw_acct_session *s = &t->s[i];
	uint32_t after = t->tail;

	while (after != NIL && t->s[after].last_update > s->last_update)
		after = t->s[after].prev;
	if (after == t->tail) {
		age_append(t, i);
		return;
	}
	s->prev = after;
	if (after == NIL) {
		s->next = t->head;
		t->head = i;
	} else {
		s->next = t->s[after].next;
		t->s[after].next = i;
	}
	t->s[s->next].prev = i;
}

static uint32_t find(const struct tw_acct_table *t, const struct tw_acct_key *k, uint64_t h)
{
	for (uint32_t i = t->buckets[h & (t->nbuckets - 1)]; i != NIL; i = t->s[i].hnext)
		if (t->s[i].hash == h && same_key(&t->s[i].r.key, k))
			return i;
	return NIL;
}

/* Takes slot i out of the index and the age list, onto the free list. */
static void release(struct tw_acct_table *t, uint32_t i)
{
	struct tw_acct_session *s = &t->s[i];
	uint32_t *pp = &t->buckets[s->hash & (t->nbuckets - 1)];

	while (*pp != NIL && *pp != i)
		pp = &t->s[*pp].hnext;
	if (*pp == i)
		*pp = s->hnext;
	age_unlink(t, i);
	memset(s, 0, sizeof(*s));
	s->hnext = t->free_head;
	t->free_head = i;
	t->st.active--;
}

/* A slot for a new session: a free one, never used, or the oldest. */
static uint32_t take_slot(struct tw_acct_table *t, struct tw_acct_change *ch)
{
	uint32_t i;

	if (t->free_head == NIL && t->used == t->cap) {
		/* full: the session updated longest ago goes (the NAS that
		 * owns it has been silent longest) */
		if (ch != NULL) {
			ch->evicted = true;
			ch->evicted_key = t->s[t->head].r.key;
		}
		release(t, t->head);
		t->st.evicted++;
	}
	if (t->free_head != NIL) {
		i = t->free_head;
		t->free_head = t->s[i].hnext;
	} else {
		i = t->used++;
	}
	return i;
}

/* What a later report brings overwrites what an earlier one said; a
 * field the later one lacks keeps its value. */
static void merge(struct tw_acct_record *d, const struct tw_acct_record *r)
{
	d->status = r->status;
	d->event_time = r->event_time;
	if (r->flags & TW_ACCT_F_USER)
		memcpy(d->user, r->user, sizeof(d->user));
	if (r->flags & TW_ACCT_F_CALLING) {
		d->calling_len = r->calling_len;
		memcpy(d->calling, r->calling, r->calling_len);
	}
	if (r->flags & TW_ACCT_F_CALLED) {
		d->called_len = r->called_len;
		memcpy(d->called, r->called, r->called_len);
	}
	if (r->flags & TW_ACCT_F_CLASS) {
		d->class_len = r->class_len;
		memcpy(d->cls, r->cls, r->class_len);
	}
	if (r->flags & TW_ACCT_F_NAS_PORT)
		d->nas_port = r->nas_port;
	if (r->flags & TW_ACCT_F_FRAMED_IP)
		memcpy(d->framed_ip, r->framed_ip, 4);
	if (r->flags & TW_ACCT_F_SESSION_TIME)
		d->session_time = r->session_time;
	if (r->flags & TW_ACCT_F_TERMINATE)
		d->terminate_cause = r->terminate_cause;
	if (r->flags & TW_ACCT_F_IN_OCTETS)
		d->in_octets = r->in_octets;
	if (r->flags & TW_ACCT_F_OUT_OCTETS)
		d->out_octets = r->out_octets;
	if (r->flags & TW_ACCT_F_IN_PACKETS)
		d->in_packets = r->in_packets;
	if (r->flags & TW_ACCT_F_OUT_PACKETS)
		d->out_packets = r->out_packets;
	d->flags |= r->flags;
}

enum tw_acct_result tw_acct_table_apply(struct tw_acct_table *t, const struct tw_acct_record *r,
					uint64_t now, unsigned *ended)
{
	return tw_acct_table_apply_ex(t, r, now, ended, NULL);
}

enum tw_acct_result tw_acct_table_apply_ex(struct tw_acct_table *t,
					   const struct tw_acct_record *r, uint64_t now,
					   unsigned *ended, struct tw_acct_change *ch)
{
	enum tw_acct_result res;
	uint64_t h;
	uint32_t i;

	*ended = 0;
	if (ch != NULL) {
		ch->have = false;
		ch->evicted = false;
	}
	pthread_mutex_lock(&t->lock);
	if (r->status == TW_RADIUS_ACCT_ON || r->status == TW_RADIUS_ACCT_OFF) {
		/* RFC 2866 §5.1: the NAS (re)started or is going down: none
		 * of its sessions is live any more */
		for (uint32_t k = 0; k < t->used; k++)
			if (t->s[k].used && same_nas(&t->s[k].r.key, &r->key)) {
				release(t, k);
				(*ended)++;
			}
		t->st.ended_by_nas += *ended;
		res = TW_ACCT_NAS_RESET;
		goto out;
	}
	if (r->status != TW_RADIUS_ACCT_START && r->status != TW_RADIUS_ACCT_STOP &&
	    r->status != TW_RADIUS_ACCT_INTERIM_UPDATE) {
		res = TW_ACCT_IGNORED;
		goto out;
	}
	h = key_hash(t, &r->key);
	i = find(t, &r->key, h);
	if (r->status == TW_RADIUS_ACCT_STOP) {
		if (i == NIL) {
			t->st.stops_unknown++;
			res = TW_ACCT_STOP_UNKNOWN;
		} else {
			if (ch != NULL) {
				/* what the session ends as: the Stop merged in */
				ch->s = t->s[i];
				merge(&ch->s.r, r);
				ch->s.last_update = now;
				ch->s.updates++;
				ch->s.last_status = r->status;
				ch->have = true;
			}
			release(t, i);
			t->st.stopped++;
			res = TW_ACCT_STOPPED;
		}
		goto out;
	}
	if (i != NIL) {
		struct tw_acct_session *s = &t->s[i];

		merge(&s->r, r);
		s->last_update = now;
		s->updates++;
		s->last_status = r->status;
		age_unlink(t, i);
		age_append(t, i);
		res = r->status == TW_RADIUS_ACCT_START ? TW_ACCT_RESTARTED : TW_ACCT_UPDATED;
		goto out_copy;
	}
	i = take_slot(t, ch);
	{
		struct tw_acct_session *s = &t->s[i];
		uint32_t b = (uint32_t)(h & (t->nbuckets - 1));

		memset(s, 0, sizeof(*s));
		s->r = *r;
		s->hash = h;
		s->used = true;
		s->last_update = now;
		s->updates = 1;
		s->last_status = r->status;
		/* an Interim-Update first (its Start lost, or sent before we
		 * ran): the session began Acct-Session-Time before the event */
		s->start_time = r->status == TW_RADIUS_ACCT_START ? r->event_time
			      : r->event_time > r->session_time ? r->event_time - r->session_time
								: 0;
		s->hnext = t->buckets[b];
		t->buckets[b] = i;
		age_append(t, i);
		t->st.active++;
		if (r->status == TW_RADIUS_ACCT_START) {
			t->st.started++;
			res = TW_ACCT_STARTED;
		} else {
			t->st.created_by_update++;
			res = TW_ACCT_CREATED;
		}
	}
out_copy:
	if (ch != NULL) {
		ch->s = t->s[i];
		ch->have = true;
	}
out:
	pthread_mutex_unlock(&t->lock);
	return res;
}

int tw_acct_table_restore(struct tw_acct_table *t, const struct tw_acct_session *in)
{
	uint64_t h;
	uint32_t i, b;
	int rc = TW_OK;

	pthread_mutex_lock(&t->lock);
	h = key_hash(t, &in->r.key);
	if (find(t, &in->r.key, h) != NIL) {
		rc = TW_ERR_STATE;
		goto out;
	}
	if (t->free_head == NIL && t->used == t->cap) {
		rc = TW_ERR_OVERFLOW;
		goto out;
	}
	i = take_slot(t, NULL);
	b = (uint32_t)(h & (t->nbuckets - 1));
	t->s[i] = *in;
	t->s[i].hash = h;
	t->s[i].used = true;
	t->s[i].hnext = t->buckets[b];
	t->buckets[b] = i;
	age_insert(t, i);
	t->st.active++;
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void tw_acct_table_stats(struct tw_acct_table *t, struct tw_acct_stats *out)
{
	pthread_mutex_lock(&t->lock);
	*out = t->st;
	pthread_mutex_unlock(&t->lock);
}

size_t tw_acct_table_list(struct tw_acct_table *t, uint32_t *cursor,
			  struct tw_acct_session *out, size_t max)
{
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&t->lock);
	for (i = *cursor; i < t->used && n < max; i++)
		if (t->s[i].used)
			out[n++] = t->s[i];
	*cursor = i;
	pthread_mutex_unlock(&t->lock);
	return n;
}

size_t tw_acct_table_find(struct tw_acct_table *t, const uint8_t *id, size_t id_len,
			  struct tw_acct_session *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->used && n < max; i++)
		if (t->s[i].used && t->s[i].r.key.id_len == id_len &&
		    memcmp(t->s[i].r.key.id, id, id_len) == 0)
			out[n++] = t->s[i];
	pthread_mutex_unlock(&t->lock);
	return n;
}
