/*
 * twag — identity privacy state of the subscriber store: pseudonyms and
 * fast re-authentication contexts (RFC 4187 §4.1.1.7, §5; RFC 4186 §4.2,
 * §5; RFC 9048 §3.3), behind struct tw_eap_identity_ops (eap_method.h).
 *
 * A bounded table in memory (allocated at open; an exhausted table evicts
 * entries already written, never unwritten ones) is written behind to
 * SQLite by a thread every STORE_FLUSH_MS in one transaction, and on
 * close; a miss falls back to the database. A removed re-auth id is a
 * tombstone until its row is deleted, so a lookup never finds it again in
 * the database meanwhile.
 *
 * Re-auth contexts hold K_encr, K_aut, MK / K_re: in memory and on disk
 * they exist only wrapped under the KEK (RFC 5649, fixed serialisation
 * below); they are unwrapped per lookup into the caller's struct.
 *
 * Pseudonyms are one-time (§4.1.1.7): the newest two per IMSI are kept (the
 * peer may not have received the newest one), older ones are pruned.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"
#include "twag/bytes.h"
#include "twag/keywrap.h"

/*
 * Re-auth state serialisation (format 2, 129 octets, then RFC 5649-wrapped):
 *   0 format(2) | 1 method | 2 imsi_len | 3..17 imsi (zero-padded) |
 *   18..19 counter (be16) | 20..35 k_encr | 36 k_aut_len | 37..68 k_aut |
 *   69..88 mk | 89..120 k_re | 121..128 gen (be64)
 * gen is the subscriber row's generation when the state was stored: a
 * replace (a new card, new keys) changes it, and the old card's fast
 * re-authentication chain ends there (inside the wrap: not forgeable).
 */
enum { SER_FORMAT = 2, EXPIRY_SWEEP_US = 60 * 1000000 };

static int64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void ser(const struct tw_eap_reauth_state *s, int64_t gen,
		uint8_t b[static STORE_REAUTH_SER_LEN])
{
	memset(b, 0, STORE_REAUTH_SER_LEN);
	b[0] = SER_FORMAT;
	b[1] = s->method;
	b[2] = (uint8_t)s->imsi_len;
	memcpy(b + 3, s->imsi, s->imsi_len);
	tw_store_be16(b + 18, s->counter);
	memcpy(b + 20, s->k_encr, 16);
	b[36] = (uint8_t)s->k_aut_len;
	memcpy(b + 37, s->k_aut, 32);
	memcpy(b + 69, s->mk, 20);
	memcpy(b + 89, s->k_re, 32);
	tw_store_be64(b + 121, (uint64_t)gen);
}

static bool digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool state_ok(const struct tw_eap_reauth_state *s)
{
	return (s->method == 18 || s->method == 23 || s->method == 50) &&
	       s->imsi_len >= TW_IMSI_MIN_LEN && s->imsi_len <= TW_IMSI_MAX_LEN &&
	       digits(s->imsi, s->imsi_len) && (s->k_aut_len == 16 || s->k_aut_len == 32);
}

static int deser(const uint8_t b[static STORE_REAUTH_SER_LEN], struct tw_eap_reauth_state *s,
		 int64_t *gen)
{
	memset(s, 0, sizeof(*s));
	*gen = (int64_t)tw_load_be64(b + 121);
	if (b[0] != SER_FORMAT || b[2] > TW_IMSI_MAX_LEN)
		return TW_ERR_DECODE;
	s->method = b[1];
	s->imsi_len = b[2];
	memcpy(s->imsi, b + 3, s->imsi_len);
	s->counter = tw_load_be16(b + 18);
	memcpy(s->k_encr, b + 20, 16);
	s->k_aut_len = b[36];
	memcpy(s->k_aut, b + 37, 32);
	memcpy(s->mk, b + 69, 20);
	memcpy(s->k_re, b + 89, 32);
	if (!state_ok(s)) {
		tw_eap_reauth_state_wipe(s);
		return TW_ERR_DECODE;
	}
	return TW_OK;
}

/* ---- the table (t->lock held) ---------------------------------------------- */

static struct ident_table *tab(struct tw_store *st)
{
	return &st->id;
}

static uint32_t bucket_of(const struct tw_store *st, uint8_t kind, const uint8_t *key,
			  size_t len)
{
	return (uint32_t)store_hash(st, kind, key, len) & (st->id.nbucket - 1);
}

static int32_t find(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len)
{
	struct ident_table *t = tab(st);

	for (int32_t i = t->bucket[bucket_of(st, kind, key, len)]; i >= 0; i = t->ent[i].next) {
		const struct ident_ent *e = &t->ent[i];

		if (e->kind == kind && e->key_len == len && memcmp(e->key, key, len) == 0)
			return i;
	}
	return -1;
}

static void release(struct tw_store *st, int32_t idx)
{
	struct ident_table *t = tab(st);
	struct ident_ent *e = &t->ent[idx];
	int32_t *pp = &t->bucket[bucket_of(st, e->kind, e->key, e->key_len)];

	while (*pp >= 0 && *pp != idx)
		pp = &t->ent[*pp].next;
	if (*pp == idx)
		*pp = e->next;
	if (e->dirty)
		t->ndirty--;
	tw_wipe(e, sizeof(*e));
	e->next = t->free_head;
	t->free_head = idx;
	t->used--;
}

/* A free entry: from the free list, else the next entry already in the
 * database (clock hand). -1 when every entry is waiting to be written. */
static int32_t alloc_ent(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	int32_t idx;

	if (t->free_head < 0) {
		for (uint32_t n = 0; n < t->cap; n++) {
			uint32_t i = t->hand;

			t->hand = (t->hand + 1) % t->cap;
			if (t->ent[i].kind != 0 && !t->ent[i].dirty) {
				release(st, (int32_t)i);
				break;
			}
		}
		if (t->free_head < 0)
			return -1;
	}
	idx = t->free_head;
	t->free_head = t->ent[idx].next;
	memset(&t->ent[idx], 0, sizeof(t->ent[idx]));
	t->used++;
	return idx;
}

/* The entry for (kind, key), created if needed, linked. -1: table full. */
static int32_t upsert(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len)
{
	struct ident_table *t = tab(st);
	int32_t idx = find(st, kind, key, len);
	uint32_t b;

	if (idx >= 0)
		return idx;
	idx = alloc_ent(st);
	if (idx < 0)
		return -1;
	t->ent[idx].kind = kind;
	t->ent[idx].key_len = (uint8_t)len;
	memcpy(t->ent[idx].key, key, len);
	b = bucket_of(st, kind, key, len);
	t->ent[idx].next = t->bucket[b];
	t->bucket[b] = idx;
	return idx;
}

static void mark_dirty(struct ident_table *t, struct ident_ent *e)
{
	if (!e->dirty)
		t->ndirty++;
	e->dirty = 1;
	e->ver++;
}

/* Strictly increasing creation stamps (µs): ties would make "the newest two
 * pseudonyms" ambiguous. */
static int64_t stamp(void)
{
	static _Atomic int64_t last;
	int64_t now = wall_us(), prev = atomic_load(&last);

	for (;;) {
		int64_t want = now > prev ? now : prev + 1;

		if (atomic_compare_exchange_weak(&last, &prev, want))
			return want;
	}
}

/*
 * Runs fill on the entry for (kind, key) under the table lock, making it
 * dirty; when every entry is waiting to be written, flushes once and
 * retries. TW_OK, TW_ERR_NOMEM (still full), TW_ERR_IO.
 */
static int put(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len, bool tomb,
	       const void *val, size_t val_len)
{
	struct ident_table *t = tab(st);

	for (int attempt = 0; attempt < 2; attempt++) {
		int32_t idx;

		pthread_mutex_lock(&t->lock);
		idx = upsert(st, kind, key, len);
		if (idx >= 0) {
			struct ident_ent *e = &t->ent[idx];

			e->tomb = tomb ? 1 : 0;
			memset(&e->v, 0, sizeof(e->v));
			if (val_len > 0)
				memcpy(&e->v, val, val_len);
			e->created = stamp();
			mark_dirty(t, e);
			pthread_cond_signal(&t->cond);
			pthread_mutex_unlock(&t->lock);
			return TW_OK;
		}
		pthread_mutex_unlock(&t->lock);
		if (attempt == 0 && store_ident_flush(st) != TW_OK)
			return TW_ERR_IO;
	}
	return TW_ERR_NOMEM;
}

/* ---- the callbacks ---------------------------------------------------- */

static int pseudonym_store(void *arg, const uint8_t *pseudonym, size_t len, const char *imsi,
			   size_t imsi_len)
{
	struct tw_store *st = arg;
	struct {
		char imsi[TW_IMSI_MAX_LEN + 1];
		uint8_t imsi_len;
	} v;

	if (st == NULL || pseudonym == NULL || len == 0 || len > TW_EAP_ID_MAX || imsi == NULL ||
	    imsi_len < TW_IMSI_MIN_LEN || imsi_len > TW_IMSI_MAX_LEN || !digits(imsi, imsi_len))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	memset(&v, 0, sizeof(v));
	memcpy(v.imsi, imsi, imsi_len);
	v.imsi_len = (uint8_t)imsi_len;
	return put(st, IDENT_PSEUDONYM, pseudonym, len, false, &v, sizeof(v));
}

/*
 * Memory first; on a miss the row, read with db_lock held and then checked
 * against the table again under its lock (the write-behind thread holds
 * db_lock for its whole round, so a tombstone or a newer entry made
 * meanwhile is seen, and a row it just deleted is not read).
 */
static int lookup(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len,
		  struct ident_ent *copy)
{
	struct ident_table *t = tab(st);
	sqlite3_stmt *q = kind == IDENT_PSEUDONYM ? st->id_q.p_get : st->id_q.r_get;
	struct ident_ent row;
	bool have_row = false;
	int32_t idx;
	int rc;

	if (len == 0 || len > TW_EAP_ID_MAX)
		return TW_ERR_NOTFOUND;
	pthread_mutex_lock(&t->lock);
	idx = find(st, kind, key, len);
	if (idx >= 0) {
		*copy = t->ent[idx];
		pthread_mutex_unlock(&t->lock);
		return copy->tomb ? TW_ERR_NOTFOUND : TW_OK;
	}
	pthread_mutex_unlock(&t->lock);

	memset(&row, 0, sizeof(row));
	pthread_mutex_lock(&st->db_lock);
	sqlite3_bind_blob(q, 1, key, (int)len, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		row.kind = kind;
		row.key_len = (uint8_t)len;
		memcpy(row.key, key, len);
		row.created = sqlite3_column_int64(q, 1);
		if (kind == IDENT_PSEUDONYM) {
			const unsigned char *im = sqlite3_column_text(q, 0);
			size_t n = (size_t)sqlite3_column_bytes(q, 0);

			if (im != NULL && n >= TW_IMSI_MIN_LEN && n <= TW_IMSI_MAX_LEN &&
			    digits((const char *)im, n)) {
				memcpy(row.v.p.imsi, im, n);
				row.v.p.imsi_len = (uint8_t)n;
				have_row = true;
			}
		} else if (sqlite3_column_bytes(q, 0) == STORE_REAUTH_WRAP_LEN &&
			   sqlite3_column_blob(q, 0) != NULL) {
			memcpy(row.v.wrapped, sqlite3_column_blob(q, 0), STORE_REAUTH_WRAP_LEN);
			have_row = true;
		}
		rc = TW_OK;
	} else {
		rc = rc == SQLITE_DONE ? TW_OK : store_io(st, store_sqlite_err(rc));
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc == TW_OK) {
		pthread_mutex_lock(&t->lock);
		idx = find(st, kind, key, len);
		if (idx >= 0) {
			*copy = t->ent[idx];
			rc = copy->tomb ? TW_ERR_NOTFOUND : TW_OK;
		} else if (have_row) {
			idx = upsert(st, kind, key, len);
			if (idx >= 0) { /* in the database already: clean */
				memcpy(&t->ent[idx].v, &row.v, sizeof(row.v));
				t->ent[idx].created = row.created;
			}
			*copy = row;
		} else {
			rc = TW_ERR_NOTFOUND;
		}
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_unlock(&st->db_lock);
	tw_wipe(&row, sizeof(row));
	return rc;
}

static int pseudonym_lookup(void *arg, const uint8_t *pseudonym, size_t len, char imsi[16],
			    size_t *imsi_len)
{
	struct tw_store *st = arg;
	struct ident_ent e;
	int rc;

	if (st == NULL || pseudonym == NULL || imsi == NULL || imsi_len == NULL)
		return TW_ERR_INVAL;
	rc = lookup(st, IDENT_PSEUDONYM, pseudonym, len, &e);
	if (rc != TW_OK)
		return rc;
	memcpy(imsi, e.v.p.imsi, e.v.p.imsi_len);
	imsi[e.v.p.imsi_len] = '\0';
	*imsi_len = e.v.p.imsi_len;
	return TW_OK;
}

static int reauth_store(void *arg, const uint8_t *id, size_t len,
			const struct tw_eap_reauth_state *s)
{
	struct tw_store *st = arg;
	uint8_t plain[STORE_REAUTH_SER_LEN], wrapped[STORE_REAUTH_WRAP_LEN];
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t wlen = 0;
	int64_t gen;
	int rc;

	if (st == NULL || id == NULL || len == 0 || len > TW_EAP_ID_MAX || s == NULL ||
	    !state_ok(s))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	memcpy(imsi, s->imsi, s->imsi_len);
	imsi[s->imsi_len] = '\0';
	/* an unknown subscriber: stored, but never found again (gen -1) */
	rc = store_sub_gen(st, imsi, &gen);
	if (rc != TW_OK && rc != TW_ERR_NOTFOUND)
		return rc;
	ser(s, gen, plain);
	/* RFC 5649 §4.1: wrapped at once; the plain form lives only here */
	rc = tw_keywrap_wrap_pad_ctx(&st->kek, wrapped, sizeof(wrapped), &wlen, plain,
				     sizeof(plain));
	if (rc == TW_OK && wlen != sizeof(wrapped))
		rc = TW_ERR_CRYPTO;
	if (rc == TW_OK)
		rc = put(st, IDENT_REAUTH, id, len, false, wrapped, sizeof(wrapped));
	tw_wipe(plain, sizeof(plain));
	return rc;
}

static int reauth_remove(void *arg, const uint8_t *id, size_t len)
{
	struct tw_store *st = arg;

	if (st == NULL || id == NULL || len == 0 || len > TW_EAP_ID_MAX)
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	/* a tombstone, whether or not the id is in memory: the row (if any)
	 * is deleted by the next write-behind round */
	return put(st, IDENT_REAUTH, id, len, true, NULL, 0);
}

static int reauth_lookup(void *arg, const uint8_t *id, size_t len,
			 struct tw_eap_reauth_state *s)
{
	struct tw_store *st = arg;
	struct ident_ent e;
	uint8_t plain[STORE_REAUTH_WRAP_LEN];
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t plen = 0;
	int64_t gen = -1, now_gen = -1;
	int rc;

	if (st == NULL || id == NULL || s == NULL)
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	rc = lookup(st, IDENT_REAUTH, id, len, &e);
	if (rc != TW_OK)
		goto out;
	/* unused for longer than the TTL: forgotten */
	if (wall_us() - e.created > (int64_t)st->reauth_ttl * 1000000) {
		rc = TW_ERR_NOTFOUND;
		if (!st->read_only)
			(void)reauth_remove(st, id, len);
		goto out;
	}
	rc = tw_keywrap_unwrap_pad_ctx(&st->kek, plain, sizeof(plain), &plen, e.v.wrapped,
				       STORE_REAUTH_WRAP_LEN);
	if (rc == TW_OK && plen != STORE_REAUTH_SER_LEN)
		rc = TW_ERR_DECODE;
	if (rc == TW_OK)
		rc = deser(plain, s, &gen);
	if (rc != TW_OK) {
		rc = store_io(st, TW_ERR_IO); /* a row we did not write */
		goto out;
	}
	/* a subscriber deleted or replaced (a new card) since the full
	 * authentication gets no fast re-authentication either */
	memcpy(imsi, s->imsi, s->imsi_len);
	imsi[s->imsi_len] = '\0';
	rc = store_sub_gen(st, imsi, &now_gen);
	if (rc == TW_OK && now_gen != gen)
		rc = TW_ERR_NOTFOUND;
	if (rc == TW_ERR_NOTFOUND && !st->read_only)
		(void)reauth_remove(st, id, len);
out:
	tw_wipe(plain, sizeof(plain));
	tw_wipe(&e, sizeof(e));
	if (rc != TW_OK)
		tw_eap_reauth_state_wipe(s);
	return rc;
}

static int random_cb(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	if (out == NULL && len > 0)
		return TW_ERR_INVAL;
	return store_random(out, len);
}

/* ---- write-behind ---------------------------------------------------------- */

/* Deletes all but the newest STORE_PSEUDONYMS_KEPT pseudonyms of imsi and
 * collects the deleted ids into *gone (grown with realloc: this is the
 * write-behind thread, not the packet path). */
static int prune(struct tw_store *st, const char *imsi, size_t imsi_len, uint8_t (**gone)[256],
		 size_t *ngone, size_t *cap)
{
	sqlite3_stmt *q = st->id_q.p_prune;
	int rc;

	sqlite3_bind_text(q, 1, imsi, (int)imsi_len, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(q, 0);
		const void *b = sqlite3_column_blob(q, 0);

		if (b == NULL || n == 0 || n > TW_EAP_ID_MAX)
			continue;
		if (*ngone == *cap) {
			size_t nc = *cap ? 2 * *cap : 16;
			void *p = realloc(*gone, nc * sizeof(**gone));

			if (p == NULL)
				continue; /* only the memory copy lingers until evicted */
			*gone = p;
			*cap = nc;
		}
		(*gone)[*ngone][0] = (uint8_t)n;
		memcpy(&(*gone)[*ngone][1], b, n);
		(*ngone)++;
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
}

int store_ident_flush(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	uint8_t (*gone)[256] = NULL;
	size_t ngone = 0, gcap = 0;
	uint32_t nf = 0;
	int64_t now = wall_us();
	bool work, sweep;
	int rc;

	if (st->read_only || t->ent == NULL)
		return TW_OK;
	pthread_mutex_lock(&st->db_lock);
	pthread_mutex_lock(&t->lock);
	work = t->ndirty > 0;
	pthread_mutex_unlock(&t->lock);
	sweep = now - t->last_expiry >= EXPIRY_SWEEP_US;
	if (!work && !sweep) {
		pthread_mutex_unlock(&st->db_lock);
		return TW_OK;
	}
	rc = store_begin(st);
	if (rc != TW_OK)
		goto out;
	/* Statements only, no commit, under the table lock: fast (the write
	 * lock is ours since BEGIN IMMEDIATE). The slow part, the synced
	 * COMMIT, runs without it. */
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; rc == TW_OK && i < t->cap; i++) {
		struct ident_ent *e = &t->ent[i];
		sqlite3_stmt *q;

		if (e->kind == 0 || !e->dirty)
			continue;
		if (e->tomb) {
			q = e->kind == IDENT_PSEUDONYM ? st->id_q.p_del : st->id_q.r_del;
			sqlite3_bind_blob(q, 1, e->key, e->key_len, SQLITE_STATIC);
		} else if (e->kind == IDENT_PSEUDONYM) {
			q = st->id_q.p_put;
			sqlite3_bind_blob(q, 1, e->key, e->key_len, SQLITE_STATIC);
			sqlite3_bind_text(q, 2, e->v.p.imsi, e->v.p.imsi_len, SQLITE_STATIC);
			sqlite3_bind_int64(q, 3, e->created);
		} else {
			q = st->id_q.r_put;
			sqlite3_bind_blob(q, 1, e->key, e->key_len, SQLITE_STATIC);
			sqlite3_bind_blob(q, 2, e->v.wrapped, STORE_REAUTH_WRAP_LEN, SQLITE_STATIC);
			sqlite3_bind_int64(q, 3, e->created);
		}
		rc = sqlite3_step(q) == SQLITE_DONE ? TW_OK : TW_ERR_IO;
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		if (rc == TW_OK && e->kind == IDENT_PSEUDONYM && !e->tomb)
			rc = prune(st, e->v.p.imsi, e->v.p.imsi_len, &gone, &ngone, &gcap);
		if (rc == TW_OK) {
			t->flushed[nf].idx = (int32_t)i;
			t->flushed[nf].ver = e->ver;
			nf++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (rc == TW_OK && sweep) {
		sqlite3_bind_int64(st->id_q.r_expire, 1,
				   now - (int64_t)st->reauth_ttl * 1000000);
		rc = sqlite3_step(st->id_q.r_expire) == SQLITE_DONE ? TW_OK : TW_ERR_IO;
		sqlite3_reset(st->id_q.r_expire);
		sqlite3_clear_bindings(st->id_q.r_expire);
	}
	if (rc == TW_OK)
		rc = store_commit(st);
	if (rc != TW_OK) {
		store_rollback(st); /* entries stay dirty: the next round retries */
		goto out;
	}
	if (sweep)
		t->last_expiry = now;
	pthread_mutex_lock(&t->lock);
	for (uint32_t j = 0; j < nf; j++) {
		struct ident_ent *e = &t->ent[t->flushed[j].idx];

		/* changed again since it was written: stays dirty */
		if (e->kind == 0 || !e->dirty || e->ver != t->flushed[j].ver)
			continue;
		e->dirty = 0;
		t->ndirty--;
		if (e->tomb)
			release(st, t->flushed[j].idx);
	}
	for (size_t j = 0; j < ngone; j++) {
		int32_t idx = find(st, IDENT_PSEUDONYM, &gone[j][1], gone[j][0]);

		if (idx >= 0 && !t->ent[idx].dirty)
			release(st, idx);
	}
	pthread_mutex_unlock(&t->lock);
out:
	pthread_mutex_unlock(&st->db_lock);
	free(gone);
	return store_io(st, rc);
}

void store_ident_forget_imsi(struct tw_store *st, const char *imsi, size_t imsi_len)
{
	struct ident_table *t = tab(st);

	if (t->ent == NULL)
		return;
	/* a scan of the table: rare (a subscriber deleted), and bounded */
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->cap; i++) {
		struct ident_ent *e = &t->ent[i];

		if (e->kind == IDENT_PSEUDONYM && e->v.p.imsi_len == imsi_len &&
		    memcmp(e->v.p.imsi, imsi, imsi_len) == 0)
			release(st, (int32_t)i);
	}
	pthread_mutex_unlock(&t->lock);
}

static void *flusher(void *arg)
{
	struct tw_store *st = arg;
	struct ident_table *t = tab(st);

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += STORE_FLUSH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		/* a store signals, but the round still waits out the period:
		 * one transaction per ~100 ms however busy */
		while (!t->stop && pthread_cond_timedwait(&t->cond, &t->lock, &ts) != ETIMEDOUT)
			;
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		if (store_ident_flush(st) != TW_OK) {
			/* counted in io_errors; the entries stay dirty and the
			 * next round retries */
		}
		/* subscribers deleted/replaced by another process (store.c) */
		store_poll_changes(st);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int prep(struct tw_store *st, sqlite3_stmt **q, const char *sql, char *errbuf,
		size_t errbuf_len)
{
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, q, NULL) != SQLITE_OK) {
		if (errbuf != NULL && errbuf_len > 0)
			snprintf(errbuf, errbuf_len, "prepare: %s", sqlite3_errmsg(st->db));
		return TW_ERR_IO;
	}
	return TW_OK;
}

int store_ident_init(struct tw_store *st, unsigned cap, char *errbuf, size_t errbuf_len)
{
	struct ident_table *t = tab(st);
	pthread_condattr_t ca;
	int rc;

	if (cap < 16)
		cap = 16;
	if (cap > (1u << 24))
		cap = 1u << 24;
	t->cap = cap;
	t->nbucket = 16;
	while (t->nbucket < cap)
		t->nbucket <<= 1;
	t->ent = calloc(cap, sizeof(*t->ent));
	t->bucket = malloc(t->nbucket * sizeof(*t->bucket));
	t->flushed = calloc(cap, sizeof(*t->flushed));
	if (t->ent == NULL || t->bucket == NULL || t->flushed == NULL) {
		free(t->ent);
		free(t->bucket);
		free(t->flushed);
		t->ent = NULL;
		t->bucket = NULL;
		t->flushed = NULL;
		return TW_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < t->nbucket; i++)
		t->bucket[i] = -1;
	for (uint32_t i = 0; i < cap; i++)
		t->ent[i].next = i + 1 < cap ? (int32_t)(i + 1) : -1;
	t->free_head = 0;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	t->last_expiry = wall_us(); /* first sweep after a minute */

	st->ops.arg = st;
	st->ops.pseudonym_lookup = pseudonym_lookup;
	st->ops.pseudonym_store = pseudonym_store;
	st->ops.reauth_lookup = reauth_lookup;
	st->ops.reauth_store = reauth_store;
	st->ops.reauth_remove = reauth_remove;
	st->ops.random = random_cb;

	rc = prep(st, &st->id_q.p_get,
		  "SELECT imsi, created FROM pseudonym WHERE id = ?1", errbuf, errbuf_len);
	if (rc == TW_OK)
		rc = prep(st, &st->id_q.r_get, "SELECT state, created FROM reauth WHERE id = ?1",
			  errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.p_put,
			  "INSERT OR REPLACE INTO pseudonym (id, imsi, created) VALUES (?1, ?2, ?3)",
			  errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.p_del, "DELETE FROM pseudonym WHERE id = ?1", errbuf,
			  errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.p_prune,
			  "DELETE FROM pseudonym WHERE imsi = ?1 AND id NOT IN"
			  " (SELECT id FROM pseudonym WHERE imsi = ?1"
			  "  ORDER BY created DESC LIMIT 2) RETURNING id", /* PSEUDONYMS_KEPT */
			  errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.r_put,
			  "INSERT OR REPLACE INTO reauth (id, state, created) VALUES (?1, ?2, ?3)",
			  errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.r_del, "DELETE FROM reauth WHERE id = ?1", errbuf,
			  errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = prep(st, &st->id_q.r_expire, "DELETE FROM reauth WHERE created < ?1", errbuf,
			  errbuf_len);
	if (rc != TW_OK)
		return rc;
	if (!st->read_only) {
		if (pthread_create(&t->thread, NULL, flusher, st) != 0) {
			if (errbuf != NULL && errbuf_len > 0)
				snprintf(errbuf, errbuf_len, "cannot start the write-behind thread");
			return TW_ERR_NOMEM;
		}
		t->thread_started = true;
	}
	return TW_OK;
}

void store_ident_stop(struct tw_store *st)
{
	struct ident_table *t = tab(st);

	if (t->ent == NULL)
		return;
	if (t->thread_started) {
		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
		t->thread_started = false;
	}
	if (!st->read_only && st->db != NULL && store_ident_flush(st) != TW_OK) {
		/* counted; what was not written is lost like after a crash:
		 * pseudonyms and re-auth ids fall back to full authentication */
	}
}

void store_ident_free(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	sqlite3_stmt **qs[] = { &st->id_q.p_get, &st->id_q.r_get, &st->id_q.p_put,
				&st->id_q.p_del, &st->id_q.p_prune, &st->id_q.r_put,
				&st->id_q.r_del, &st->id_q.r_expire };

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		sqlite3_finalize(*qs[i]);
		*qs[i] = NULL;
	}
	if (t->ent == NULL)
		return;
	tw_wipe(t->ent, (size_t)t->cap * sizeof(*t->ent));
	free(t->ent);
	free(t->bucket);
	free(t->flushed);
	t->ent = NULL;
	t->bucket = NULL;
	t->flushed = NULL;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
}
