/*
 * twag — the subscriber store on SQLite 3 (WAL, one file): subscribers with
 * their keys wrapped under the KEK (RFC 3394), the HE SQN state of 3GPP
 * TS 33.102 V17.0.0 Annex C made durable in blocks before any vector
 * leaves, AUTS resynchronisation (§6.3.5, C.3) rate-limited per subscriber,
 * and GSM triplets (§6.8.1.2). Pseudonyms and re-auth state: ident.c.
 *
 * The SQN rule this file exists for (C.1: an SQN is never used twice): the
 * row's sqn_reserved is a durable high-water mark. Vectors take SEQ values
 * up to it from memory; the vector that would pass it first raises it by a
 * block in a synchronous=FULL commit, and only then is computed. A
 * process that dies (kill -9) restarts from the mark (at load SEQ_HE :=
 * sqn_reserved), so at most a block is skipped, nothing repeated. A clean
 * close writes the exact SEQ_HE back and lowers the mark to it.
 *
 * Reserve-ahead: that commit syncs (1-2 ms), and the vector path should
 * not wait for it. Once a loaded subscriber has used 3/4 of its block, the
 * vector queues it for the write-behind thread (ident.c), which raises the
 * mark by the next block in the same kind of commit, without the record's
 * lock held meanwhile, and only then lets memory use it. A vector that
 * finds the block used up before that landed reserves synchronously as
 * before; the SEQ a vector carries is never above a committed mark.
 *
 * Other processes may use the same file (the CLI while twagd runs, or two
 * daemons): a reservation reads the mark inside its write transaction and
 * starts above whatever anybody reserved; a row replaced or deleted under
 * us is noticed by its generation number (gen) and reloaded: at the next
 * reservation, and, for every use, within a poll period of the other
 * connection's commit (store_poll_changes), so a subscriber deleted with
 * the CLI stops authenticating at once, not when its block runs out. A
 * replace never takes SEQ_HE below what the old row may have issued.
 *
 * Connections (store_internal.h): one writes (reservations, provisioning,
 * the identity write-behind of ident.c), one reads for the packet path's
 * look-ups (WAL: a reader neither waits for nor blocks the writer), and
 * ident.c's thread checkpoints on a third.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/keywrap.h"
#include "twag/mem.h"
#include "twag/milenage.h"
#include "twag/sqn.h"
#include "twag/tuak.h"

/* Wrapped under the KEK into the meta table: a database opened with
 * another KEK fails the RFC 3394 integrity check on it. */
static const uint8_t kek_check_plain[32] = {
	't', 'w', 'a', 'g', ' ', 's', 't', 'o', 'r', 'e', ' ', 'K', 'E', 'K', ' ', 'c',
	'h', 'e', 'c', 'k', ' ', 'v', 'a', 'l', 'u', 'e', ' ', '#', '0', '0', '0', '1',
};

#define IDENT_TABLE_SQL "CREATE TABLE ident (k INTEGER PRIMARY KEY, v BLOB NOT NULL)"

static const char schema_sql[] =
	"CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);"
	/* k / opc: RFC 3394 wraps under the KEK of K (Ki) and OPc (TOPc);
	 * seq_he / sqn_reserved count SEQ (SQN without IND, Annex C.1.2). */
	"CREATE TABLE subscriber ("
	" imsi TEXT PRIMARY KEY,"
	" alg INTEGER NOT NULL,"
	" k BLOB NOT NULL,"
	" opc BLOB,"
	" amf BLOB NOT NULL,"
	" mac_bits INTEGER NOT NULL DEFAULT 0,"
	" res_bits INTEGER NOT NULL DEFAULT 0,"
	" ck_bits INTEGER NOT NULL DEFAULT 0,"
	" ik_bits INTEGER NOT NULL DEFAULT 0,"
	" iterations INTEGER NOT NULL DEFAULT 0,"
	" ind_bits INTEGER NOT NULL,"
	" seq_he INTEGER NOT NULL,"
	" sqn_reserved INTEGER NOT NULL,"
	" gen INTEGER NOT NULL,"
	/* schema 5: refused at authentication (twag subscriber disable) */
	" disabled INTEGER NOT NULL DEFAULT 0);"
	/* one row per IMSI (ident.c), keyed by an integer made from it
	 * (store_ident_row_key): the newest two pseudonyms and the newest two
	 * re-auth ids, each with its state (sealed under a key from the KEK:
	 * ident.c seal_state) and when it was stored (wall µs), in one blob
	 * (ident.c row_enc); found by the IMSI every minted id carries, so
	 * no other index */
	IDENT_TABLE_SQL;

/* Schema 1 or 2 -> 4 (store_internal.h), inside open's write transaction:
 * the ids of the old tables were random and cannot name their row, so
 * they are not carried over (their peers authenticate fully once). */
static const char migrate_12_sql[] =
	"DROP TABLE IF EXISTS pseudonym;"
	"DROP TABLE IF EXISTS reauth;"
	IDENT_TABLE_SQL ";";
/* Schema 1 to 4 -> 5: the disabled flag, every subscriber enabled. */
static const char migrate_4_sql[] =
	"ALTER TABLE subscriber ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;";
/* Schema 3 -> 4: the rows are carried over (store_ident_migrate_3). */
static const char migrate_3_sql[] =
	"ALTER TABLE ident RENAME TO ident_3;"
	IDENT_TABLE_SQL ";";

static const char cols[] =
	"alg, k, opc, amf, mac_bits, res_bits, ck_bits, ik_bits, iterations, ind_bits,"
	" seq_he, sqn_reserved, gen, disabled";

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Annex C.1.1: SQN = SEQ || IND, so SEQ has 48 - ind_bits bits. */
static uint64_t seq_limit(unsigned ind_bits)
{
	return ((uint64_t)1 << (48 - ind_bits)) - 1;
}

int store_sqlite_err(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return TW_OK;
	case SQLITE_NOMEM:
		return TW_ERR_NOMEM;
	case SQLITE_CONSTRAINT:
		return TW_ERR_STATE;
	default: /* BUSY, LOCKED, READONLY, FULL, IOERR, CORRUPT, CANTOPEN ... */
		return TW_ERR_IO;
	}
}

void store_db_lock_writer(struct tw_store *st)
{
	atomic_fetch_add(&st->db_waiters, 1);
	pthread_mutex_lock(&st->db_lock);
	atomic_fetch_sub(&st->db_waiters, 1);
}

int store_io(struct tw_store *st, int err)
{
	if (err == TW_ERR_IO)
		atomic_fetch_add(&st->n_io_errors, 1);
	return err;
}

static int step_done(sqlite3_stmt *q)
{
	int rc = sqlite3_step(q);

	return rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
}

static int run(sqlite3_stmt *q)
{
	int rc = step_done(q);

	sqlite3_reset(q);
	return rc;
}

int store_begin(struct tw_store *st)
{
	return run(st->q_begin);
}

int store_commit(struct tw_store *st)
{
	int rc = run(st->q_commit);

	/* a failed COMMIT may leave the transaction open (SQLITE_BUSY): end it
	 * so the connection is usable again; nothing of it became durable
	 * that the caller will rely on */
	if (rc != TW_OK && !sqlite3_get_autocommit(st->db))
		store_rollback(st);
	return rc;
}

void store_rollback(struct tw_store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		(void)run(st->q_rollback);
}

#define SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND(v0, v1, v2, v3)                                                    \
	do {                                                                         \
		v0 += v1; v1 = SIP_ROTL(v1, 13); v1 ^= v0; v0 = SIP_ROTL(v0, 32);    \
		v2 += v3; v3 = SIP_ROTL(v3, 16); v3 ^= v2;                           \
		v0 += v3; v3 = SIP_ROTL(v3, 21); v3 ^= v0;                           \
		v2 += v1; v1 = SIP_ROTL(v1, 17); v1 ^= v2; v2 = SIP_ROTL(v2, 32);    \
	} while (0)

uint64_t store_hash(const struct tw_store *st, uint8_t tag, const void *data, size_t len)
{
	/* SipHash-1-3 (Aumasson and Bernstein; the variant hash tables use:
	 * one compression round per word, three at the end), the tag folded
	 * into the key. Eight octets per round instead of FNV's one. */
	const uint8_t *in = data;
	uint64_t k0 = st->hash_key[0] ^ tag, k1 = st->hash_key[1];
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		m = tw_load_le64(in + i);
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* TS 23.003 §2.2: 5..15 decimal digits (see vecsrc.h). */
static bool imsi_ok(const char *imsi, size_t *len)
{
	size_t n = 0;

	if (imsi == NULL)
		return false;
	while (n <= TW_IMSI_MAX_LEN && imsi[n] != '\0') {
		if (imsi[n] < '0' || imsi[n] > '9')
			return false;
		n++;
	}
	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN)
		return false;
	if (len != NULL)
		*len = n;
	return true;
}

static bool alg_is_aka(enum tw_sub_alg a)
{
	return a == TW_SUB_MILENAGE || a == TW_SUB_TUAK;
}

static bool alg_is_comp128(enum tw_sub_alg a)
{
	return a == TW_SUB_COMP128V1 || a == TW_SUB_COMP128V2 || a == TW_SUB_COMP128V3;
}

/* ---- rows <-> records ---------------------------------------------------- */

/* Fills r (keys still wrapped) from a row of "SELECT <cols>". */
static int row_to_rec(sqlite3_stmt *q, struct sub_rec *r)
{
	const void *k = sqlite3_column_blob(q, 1);
	size_t k_len = (size_t)sqlite3_column_bytes(q, 1);
	const void *opc = sqlite3_column_blob(q, 2);
	size_t opc_len = (size_t)sqlite3_column_bytes(q, 2);
	const void *amf = sqlite3_column_blob(q, 3);
	size_t amf_len = (size_t)sqlite3_column_bytes(q, 3);
	sqlite3_int64 seq_he = sqlite3_column_int64(q, 10);
	sqlite3_int64 reserved = sqlite3_column_int64(q, 11);
	int ind_bits = sqlite3_column_int(q, 9);

	r->alg = (enum tw_sub_alg)sqlite3_column_int(q, 0);
	if (!alg_is_aka(r->alg) && !alg_is_comp128(r->alg))
		return TW_ERR_DECODE;
	if (k == NULL || (k_len != 24 && k_len != 40) || amf == NULL || amf_len != 2)
		return TW_ERR_DECODE;
	if (alg_is_aka(r->alg) && (opc == NULL || (opc_len != 24 && opc_len != 40)))
		return TW_ERR_DECODE;
	if (ind_bits < 0 || ind_bits > TW_SQN_IND_BITS_MAX || seq_he < 0 || reserved < 0 ||
	    (uint64_t)seq_he > seq_limit((unsigned)ind_bits) ||
	    (uint64_t)reserved > seq_limit((unsigned)ind_bits))
		return TW_ERR_DECODE;
	memcpy(r->k_w, k, k_len);
	r->k_w_len = k_len;
	r->opc_w_len = 0;
	if (alg_is_aka(r->alg)) {
		memcpy(r->opc_w, opc, opc_len);
		r->opc_w_len = opc_len;
	}
	memcpy(r->amf, amf, 2);
	r->mac_bits = (uint16_t)sqlite3_column_int(q, 4);
	r->res_bits = (uint16_t)sqlite3_column_int(q, 5);
	r->ck_bits = (uint16_t)sqlite3_column_int(q, 6);
	r->ik_bits = (uint16_t)sqlite3_column_int(q, 7);
	r->iterations = (uint16_t)sqlite3_column_int(q, 8);
	r->sqn.ind_bits = (uint8_t)ind_bits;
	r->sqn.seq_he = (uint64_t)seq_he;
	r->reserved = (uint64_t)reserved;
	r->gen = sqlite3_column_int64(q, 12);
	r->disabled = sqlite3_column_int(q, 13) != 0;
	return TW_OK;
}

/* Reads imsi's row into r (db_lock held). TW_OK, TW_ERR_NOTFOUND, TW_ERR_IO,
 * TW_ERR_DECODE (a row this code did not write). */
static int row_read(struct tw_store *st, sqlite3_stmt *q, const char *imsi, size_t imsi_len,
		    struct sub_rec *r)
{
	int rc;

	sqlite3_bind_text(q, 1, imsi, (int)imsi_len, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		rc = row_to_rec(q, r);
		memcpy(r->imsi, imsi, imsi_len);
		r->imsi[imsi_len] = '\0';
		r->imsi_len = imsi_len;
	} else if (rc == SQLITE_DONE) {
		rc = TW_ERR_NOTFOUND;
	} else {
		rc = store_io(st, store_sqlite_err(rc));
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc;
}

/* Unwraps r's keys into a subscriber on the caller's stack (wipe it). */
static int rec_unwrap(const struct tw_store *st, const struct sub_rec *r,
		      struct tw_subscriber *s)
{
	struct tw_sub_keys kk;
	uint8_t k[32], opc[32];
	size_t k_len = 0, opc_len = 0;
	int rc;

	memset(&kk, 0, sizeof(kk));
	if (r->opc_w_len != 0) {
		/* K and OPc (TOPc) under the KEK, the two unwraps side by side */
		int rc2 = TW_ERR_INVAL;

		rc = tw_keywrap_unwrap2_ctx(&st->kek, k, sizeof(k), &k_len, r->k_w, r->k_w_len,
					    opc, sizeof(opc), &opc_len, r->opc_w, r->opc_w_len,
					    &rc2);
		if (rc == TW_OK)
			rc = rc2;
		if (rc != TW_OK)
			goto out;
	} else {
		rc = tw_keywrap_unwrap_ctx(&st->kek, k, sizeof(k), &k_len, r->k_w, r->k_w_len);
		if (rc != TW_OK)
			goto out;
	}
	rc = TW_ERR_DECODE;
	if (r->alg == TW_SUB_MILENAGE) {
		if (k_len != 16 || opc_len != 16)
			goto out;
		rc = tw_sub_keys_milenage(&kk, k, opc, NULL);
	} else if (r->alg == TW_SUB_TUAK) {
		struct tw_tuak_params p;

		if ((k_len != 16 && k_len != 32) || opc_len != 32)
			goto out;
		memset(&p, 0, sizeof(p));
		memcpy(p.k, k, k_len);
		p.k_len = (uint8_t)k_len;
		memcpy(p.topc, opc, 32);
		p.mac_bits = r->mac_bits;
		p.res_bits = r->res_bits;
		p.ck_bits = r->ck_bits;
		p.ik_bits = r->ik_bits;
		p.iterations = r->iterations;
		rc = tw_sub_keys_tuak(&kk, &p);
		tw_wipe(&p, sizeof(p));
	} else {
		if (k_len != 16)
			goto out;
		rc = tw_sub_keys_comp128(&kk, (unsigned)(r->alg - TW_SUB_COMP128V1 + 1), k);
	}
	if (rc != TW_OK)
		goto out;
	rc = tw_subscriber_init(s, r->imsi, &kk, r->amf);
	if (rc != TW_OK)
		goto out;
	s->sqn = r->sqn;
out:
	tw_wipe(k, sizeof(k));
	tw_wipe(opc, sizeof(opc));
	tw_wipe(&kk, sizeof(kk));
	if (rc != TW_OK)
		tw_wipe(s, sizeof(*s));
	return rc;
}

/* ---- the subscriber cache ------------------------------------------------- */

static size_t pow2_at_least(size_t n)
{
	size_t p = 1024;

	while (p < n && p < STORE_BUCKETS_MAX)
		p <<= 1;
	return p;
}

static uint64_t rec_hash(const struct tw_store *st, const char *imsi, size_t len)
{
	return store_hash(st, 's', imsi, len);
}

/* The stripe of a hash: its low bits, the same for every bucket count (a
 * power of two, a multiple of STORE_STRIPES), so that rec_grow, holding
 * every stripe, moves a record only between buckets of its own stripe. */
static pthread_mutex_t *stripe_of(struct tw_store *st, uint64_t h)
{
	return &st->stripe[h % STORE_STRIPES];
}

/* The head of h's chain; its stripe held. */
static struct sub_rec **chain_of(struct tw_store *st, uint64_t h)
{
	return &st->bucket[h & (st->nbucket - 1)];
}

static struct sub_rec *chain_find(struct tw_store *st, uint64_t h, const char *imsi, size_t len)
{
	for (struct sub_rec *r = *chain_of(st, h); r != NULL; r = r->next)
		if (r->hash == h && r->imsi_len == len && memcmp(r->imsi, imsi, len) == 0)
			return r;
	return NULL;
}

_Static_assert(STORE_STRIPES <= 1024 && (STORE_STRIPES & (STORE_STRIPES - 1)) == 0,
	       "a stripe must be the same for every bucket count");

/*
 * More buckets once more records are linked than there are buckets (the
 * count at open sized them for the subscribers there were then: a store
 * opened empty and provisioned while running would otherwise search
 * chains of hundreds). The new array is made before the stripes are
 * taken; with all of them held (in order, nothing else holds two), every
 * chain is moved, so a look-up sees the old array or the new one whole.
 * One thread at a time grows it (st->growing); the others go on. Like a
 * new chunk of records (rec_alloc), this allocates on the packet path:
 * once per doubling, on the thread whose record crossed the mark. An
 * allocation that fails leaves the old buckets (longer chains, still
 * correct) and the next try for twice as many records. The rehash holds
 * every look-up up: at 4 million records, some tens of ms, once.
 */
static void rec_grow(struct tw_store *st)
{
	size_t n_old, n_new, want = atomic_load(&st->n_loaded);
	struct sub_rec **nb, **old;
	bool idle = false;

	/* one thread grows it; the others go on with the old buckets */
	if (!atomic_compare_exchange_strong(&st->growing, &idle, true))
		return;
	pthread_mutex_lock(stripe_of(st, 0));
	n_old = st->nbucket;
	pthread_mutex_unlock(stripe_of(st, 0));
	if (n_old >= STORE_BUCKETS_MAX || want <= n_old) {
		atomic_store(&st->growing, false);
		return; /* grown meanwhile, or at the cap */
	}
	n_new = 2 * n_old;
	while (n_new < want && n_new < STORE_BUCKETS_MAX)
		n_new *= 2;
	nb = tw_table_alloc(n_new, sizeof(*nb));
	if (nb == NULL) {
		atomic_store(&st->grow_at, 2 * want);
		atomic_store(&st->growing, false);
		return;
	}
	for (size_t i = 0; i < STORE_STRIPES; i++)
		pthread_mutex_lock(&st->stripe[i]);
	old = st->bucket; /* as read above: only this thread changes it */
	for (size_t b = 0; b < n_old; b++) {
		for (struct sub_rec *r = old[b], *next; r != NULL; r = next) {
			size_t to = r->hash & (n_new - 1);

			next = r->next;
			r->next = nb[to];
			nb[to] = r;
		}
	}
	st->bucket = nb;
	st->nbucket = n_new;
	atomic_store(&st->grow_at, n_new < STORE_BUCKETS_MAX ? n_new : SIZE_MAX);
	for (size_t i = STORE_STRIPES; i-- > 0;)
		pthread_mutex_unlock(&st->stripe[i]);
	atomic_store(&st->growing, false);
	tw_table_free(old, n_old, sizeof(*old));
}

bool store_rec_index_sound(struct tw_store *st, size_t *nbucket)
{
	size_t linked = 0;
	bool ok = true;

	for (size_t i = 0; i < STORE_STRIPES; i++)
		pthread_mutex_lock(&st->stripe[i]);
	for (size_t b = 0; b < st->nbucket; b++) {
		for (struct sub_rec *r = st->bucket[b]; r != NULL; r = r->next) {
			linked++;
			ok &= r->linked && !r->dead &&
			      r->hash == rec_hash(st, r->imsi, r->imsi_len) &&
			      (r->hash & (st->nbucket - 1)) == b;
			for (struct sub_rec *q = r->next; q != NULL; q = q->next)
				ok &= q->imsi_len != r->imsi_len ||
				      memcmp(q->imsi, r->imsi, r->imsi_len) != 0;
		}
	}
	ok &= linked == atomic_load(&st->n_loaded);
	if (nbucket != NULL)
		*nbucket = st->nbucket;
	for (size_t i = STORE_STRIPES; i-- > 0;)
		pthread_mutex_unlock(&st->stripe[i]);
	return ok;
}

void store_rec_counts(struct tw_store *st, size_t *made, size_t *graves)
{
	pthread_mutex_lock(&st->all_lock);
	*made = st->n_made;
	*graves = st->n_graves;
	pthread_mutex_unlock(&st->all_lock);
}

static void rec_kill(struct tw_store *st, struct sub_rec *r);

/* The gen of imsi's row, through the reading connection: a write-behind
 * transaction does not make the packet path wait. TW_OK, TW_ERR_NOTFOUND,
 * TW_ERR_IO. */
static int row_gen(struct tw_store *st, const char *imsi, size_t len, int64_t *gen)
{
	sqlite3_stmt *q = st->rq_gen;
	int rc;

	pthread_mutex_lock(&st->rd_lock);
	sqlite3_bind_text(q, 1, imsi, (int)len, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*gen = sqlite3_column_int64(q, 0);
		rc = TW_OK;
	} else {
		rc = rc == SQLITE_DONE ? TW_ERR_NOTFOUND : store_io(st, TW_ERR_IO);
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	pthread_mutex_unlock(&st->rd_lock);
	return rc;
}

/* Is r (locked) still its row? TW_OK; TW_ERR_STATE (deleted or replaced,
 * e.g. by another process); TW_ERR_IO (cannot tell now: r is used as it
 * is and checked again at its next use). */
static int rec_check(struct tw_store *st, struct sub_rec *r)
{
	int64_t gen = -1;
	int rc = row_gen(st, r->imsi, r->imsi_len, &gen);

	if (rc == TW_OK)
		return gen == r->gen ? TW_OK : TW_ERR_STATE;
	return rc == TW_ERR_NOTFOUND ? TW_ERR_STATE : rc;
}

/* The cached record of imsi, locked, alive and (as of the last change
 * seen) still its row, or NULL. */
static struct sub_rec *rec_cached(struct tw_store *st, const char *imsi, size_t len)
{
	uint64_t h = rec_hash(st, imsi, len);
	uint64_t e = atomic_load(&st->epoch);

	for (;;) {
		struct sub_rec *r;
		int rc;

		bool locked = false;

		pthread_mutex_lock(stripe_of(st, h));
		r = chain_find(st, h, imsi, len);
		/* its lock taken while it is in the chain, or the record pinned
		 * until it is: either way it is not reused meanwhile */
		if (r != NULL) {
			locked = pthread_mutex_trylock(&r->lock) == 0;
			if (!locked)
				atomic_fetch_add(&r->pins, 1);
		}
		pthread_mutex_unlock(stripe_of(st, h));
		if (r == NULL)
			return NULL;
		if (!locked) {
			pthread_mutex_lock(&r->lock);
			atomic_fetch_sub(&r->pins, 1);
		}
		r->used = true;
		if (r->dead) {
			/* killed between the two locks: it is unlinked by now */
			pthread_mutex_unlock(&r->lock);
			continue;
		}
		if (r->epoch >= e) /* checked since the last change seen */
			return r;
		/* the database changed since r was last checked */
		rc = rec_check(st, r);
		if (rc == TW_OK)
			r->epoch = e;
		if (rc != TW_ERR_STATE)
			return r;
		rec_kill(st, r); /* the caller loads the row (or finds none) */
		pthread_mutex_unlock(&r->lock);
		return NULL;
	}
}

/* g (dead, its lock initialised) to the back of the graves. */
static void grave_push(struct tw_store *st, struct sub_rec *g)
{
	pthread_mutex_lock(&st->all_lock);
	g->grave_next = NULL;
	if (st->grave_tail != NULL)
		st->grave_tail->grave_next = g;
	else
		st->grave_head = g;
	st->grave_tail = g;
	st->n_graves++;
	pthread_mutex_unlock(&st->all_lock);
}

/* r (locked, just taken out of its chain) is dead: a later lookup loads
 * the row again. The record goes to the graves, reused by rec_recycle
 * once no thread holds it (another may have found it in its chain and
 * wait for its lock: pinned). */
static void rec_bury(struct tw_store *st, struct sub_rec *r)
{
	r->dead = true;
	/* the keys are no longer needed: only the wrapped form was here, but
	 * the record may wait a while before it is reused */
	tw_wipe(r->k_w, sizeof(r->k_w));
	tw_wipe(r->opc_w, sizeof(r->opc_w));
	atomic_fetch_sub(&st->n_loaded, 1);
	grave_push(st, r);
}

/* Drops r from the cache (r->lock held): a later lookup reloads the row. */
static void rec_kill(struct tw_store *st, struct sub_rec *r)
{
	if (r->dead)
		return;
	pthread_mutex_lock(stripe_of(st, r->hash));
	if (r->linked) {
		struct sub_rec **pp = chain_of(st, r->hash);

		while (*pp != NULL && *pp != r)
			pp = &(*pp)->next;
		if (*pp == r)
			*pp = r->next;
		r->linked = false;
	}
	pthread_mutex_unlock(stripe_of(st, r->hash));
	rec_bury(st, r);
}

/*
 * The bounded cache (st->sub_cache): a record not looked up since the hand
 * last passed it is dropped (CLOCK: a lookup sets r->used, the hand clears
 * it). The hand walks the buckets, each under its stripe (the same for
 * every bucket count: rec_grow), and only tries a record's lock: one that
 * is held is in use. A record some thread waits for (pinned), or whose
 * reservation is under way, is passed over; one whose AUTS budgets are
 * partly spent in an open window (rec_resync_live) leaves them behind for
 * its next load (auts_save). Drops records until the cache is within its
 * bound, or the hand has passed every bucket once, or STORE_EVICT_STEPS
 * buckets. Once, not twice: a second pass in the same call would drop a
 * record whose mark this call cleared, one looked up just before it
 * (found dropping a subscriber looked up before every load, under TSan's
 * timing, when the other records were busy with reservations); a call
 * that finds nothing leaves the cache over its bound by one, and the next
 * load's call finds what this one cleared. When a large cache first
 * fills, every record was used since it loaded, and the pass that
 * clears them is spread over the loads that follow (which go over the
 * bound by one each meanwhile: at 4 million records, about 2,000 loads)
 * instead of holding one request for a pass over millions of buckets.
 * In the steady state a load over the bound drops one, and the hand moves
 * about (nbucket + records) / records buckets per drop: a few (the
 * buckets are sized for the records, at most two per record the cache
 * holds). A dropped AKA record loads again from its row at its mark (the
 * rest of its block skipped, never reused).
 */
enum { STORE_EVICT_STEPS = 4096 };

/* Whether r has spent some of its AUTS budgets in a window still open:
 * they are kept when it is dropped (auts_save), or its next load would
 * start them afresh, a way round the rate limit for one who can make
 * others load meanwhile. */
static bool rec_resync_live(const struct tw_store *st, const struct sub_rec *r, int64_t now)
{
	return (r->resync_count > 0 || r->resync_bad > 0) &&
	       now - r->resync_start < (int64_t)st->resync_window;
}

/* The slot of st->auts_keep for a record of hash h. */
static struct auts_keep *auts_slot(struct tw_store *st, uint64_t h)
{
	return &st->auts_keep[(h >> 17) & (st->n_auts_keep - 1)];
}

/* r's AUTS budgets kept for its next load (r->lock held). */
static void auts_save(struct tw_store *st, const struct sub_rec *r)
{
	struct auts_keep *k;

	if (st->auts_keep == NULL || r->hash == 0)
		return;
	k = auts_slot(st, r->hash);
	pthread_mutex_lock(&st->auts_lock);
	*k = (struct auts_keep){ r->hash, r->resync_start, r->resync_count, r->resync_bad };
	pthread_mutex_unlock(&st->auts_lock);
}

/* A record being loaded (not linked yet) takes back the AUTS budgets kept
 * when it was dropped, if its window is still open. */
static void auts_restore(struct tw_store *st, struct sub_rec *r)
{
	struct auts_keep *k;

	if (st->auts_keep == NULL || r->hash == 0)
		return;
	k = auts_slot(st, r->hash);
	pthread_mutex_lock(&st->auts_lock);
	if (k->hash == r->hash) {
		if (mono_ns() / 1000000000 - k->start < (int64_t)st->resync_window) {
			r->resync_start = k->start;
			r->resync_count = k->count;
			r->resync_bad = k->bad;
		}
		k->hash = 0;
	}
	pthread_mutex_unlock(&st->auts_lock);
}

static void rec_evict(struct tw_store *st)
{
	size_t steps = 0, budget = SIZE_MAX;

	while (steps++ < budget && atomic_load(&st->n_loaded) > st->sub_cache) {
		size_t b = atomic_fetch_add(&st->evict_hand, 1);
		pthread_mutex_t *m = &st->stripe[b % STORE_STRIPES];
		struct sub_rec *victim = NULL;

		pthread_mutex_lock(m);
		if (budget == SIZE_MAX)
			budget = st->nbucket < STORE_EVICT_STEPS ? st->nbucket
								 : STORE_EVICT_STEPS;
		/* bucket b's stripe is b % STORE_STRIPES: nbucket is a multiple */
		for (struct sub_rec **pp = &st->bucket[b & (st->nbucket - 1)]; *pp != NULL;
		     pp = &(*pp)->next) {
			struct sub_rec *r = *pp;

			if (pthread_mutex_trylock(&r->lock) != 0)
				continue;
			if (r->used || r->ahead_queued || r->ahead_busy ||
			    atomic_load(&r->pins) != 0) {
				r->used = false;
				pthread_mutex_unlock(&r->lock);
				continue;
			}
			*pp = r->next;
			r->linked = false;
			victim = r;
			break;
		}
		pthread_mutex_unlock(m);
		if (victim != NULL) {
			if (rec_resync_live(st, victim, mono_ns() / 1000000000))
				auts_save(st, victim);
			rec_bury(st, victim);
			atomic_fetch_add(&st->n_evicted, 1);
			pthread_mutex_unlock(&victim->lock);
		}
	}
}

/* Records are made in chunks, never freed one by one: a dead one (rec_kill,
 * rec_evict) is reused (rec_recycle), and one that never reached the
 * cache goes back to rec_spare. */
enum { STORE_REC_CHUNK = 4096 };

struct rec_chunk {
	struct rec_chunk *next;
	struct sub_rec *recs;      /* STORE_REC_CHUNK */
};

/*
 * A dead record that no thread holds any more, zeroed, or NULL. The oldest
 * graves are tried; one still held (locked by the thread that killed it,
 * pinned, or its reservation under way: that thread looks at it once more
 * when the commit ends) goes to the back. Nothing can find a dead record
 * again: it left its chain under its stripe, where the only ways to hold
 * it without its lock start (rec_cached's pin), or it was held locked
 * (vector_locked's pin, the busy flags); a thread that held it unlocks it
 * last, and pthread mutexes may be destroyed once unlocked.
 */
static struct sub_rec *rec_recycle(struct tw_store *st)
{
	for (int tries = 0; tries < 2; tries++) {
		struct sub_rec *g;
		bool unheld;

		pthread_mutex_lock(&st->all_lock);
		g = st->grave_head;
		if (g != NULL) {
			st->grave_head = g->grave_next;
			if (st->grave_head == NULL)
				st->grave_tail = NULL;
			st->n_graves--;
		}
		pthread_mutex_unlock(&st->all_lock);
		if (g == NULL)
			return NULL;
		unheld = pthread_mutex_trylock(&g->lock) == 0;
		if (unheld) {
			unheld = atomic_load(&g->pins) == 0 && !g->ahead_queued && !g->ahead_busy;
			pthread_mutex_unlock(&g->lock);
		}
		if (!unheld) {
			grave_push(st, g);
			continue;
		}
		pthread_cond_destroy(&g->ahead_done);
		pthread_mutex_destroy(&g->lock);
		tw_wipe(g, sizeof(*g));
		atomic_fetch_add(&st->n_recycled, 1);
		return g;
	}
	return NULL;
}

/* A zeroed record, or NULL. */
static struct sub_rec *rec_alloc(struct tw_store *st)
{
	struct sub_rec *r = rec_recycle(st);

	if (r != NULL)
		return r;
	pthread_mutex_lock(&st->all_lock);
	if (st->rec_spare != NULL) {
		r = st->rec_spare;
		st->rec_spare = r->next;
		r->next = NULL;
	} else if (st->chunks != NULL && st->chunk_used < STORE_REC_CHUNK) {
		r = &st->chunks->recs[st->chunk_used++];
		st->n_made++;
	} else {
		struct rec_chunk *c = calloc(1, sizeof(*c));

		if (c != NULL)
			c->recs = tw_table_alloc(STORE_REC_CHUNK, sizeof(*c->recs));
		if (c != NULL && c->recs != NULL) {
			c->next = st->chunks;
			st->chunks = c;
			st->chunk_used = 1;
			st->n_made++;
			r = &c->recs[0];
		} else {
			free(c);
		}
	}
	pthread_mutex_unlock(&st->all_lock);
	return r;
}

/* r (from rec_alloc, never linked, no lock or cond initialised) back. */
static void rec_spare(struct tw_store *st, struct sub_rec *r)
{
	tw_wipe(r, sizeof(*r));
	pthread_mutex_lock(&st->all_lock);
	r->next = st->rec_spare;
	st->rec_spare = r;
	pthread_mutex_unlock(&st->all_lock);
}

/*
 * The record of imsi, locked: from the cache, or loaded from the database
 * on first use. Annex C / store.h: a loaded record starts at SEQ_HE :=
 * sqn_reserved, since SEQ values up to the mark may have been issued by a
 * process that died before writing SEQ_HE back.
 */
static int rec_get(struct tw_store *st, const char *imsi, struct sub_rec **out)
{
	struct sub_rec *r, *other;
	size_t len, loaded = 0;
	uint64_t seq, epoch;
	int rc;

	*out = NULL;
	if (!imsi_ok(imsi, &len))
		return TW_ERR_INVAL;
	r = rec_cached(st, imsi, len);
	if (r != NULL) {
		*out = r;
		return TW_OK;
	}
	r = rec_alloc(st);
	if (r == NULL)
		return TW_ERR_NOMEM;
	/* read before the row: a change committed after it bumps the epoch,
	 * so this record is checked again at its next use */
	epoch = atomic_load(&st->epoch);
	r->epoch = epoch;
	pthread_mutex_lock(&st->rd_lock);
	rc = row_read(st, st->rq_load, imsi, len, r);
	pthread_mutex_unlock(&st->rd_lock);
	if (rc != TW_OK)
		goto fail;
	seq = r->reserved > r->sqn.seq_he ? r->reserved : r->sqn.seq_he;
	if (alg_is_aka(r->alg)) {
		/* this gateway's IND slots (C.1.2) within the subscriber's IND */
		rc = tw_sqn_he_init(&r->sqn, r->sqn.ind_bits, st->ind_first, st->ind_count, seq);
		if (rc != TW_OK)
			goto fail;
	} else {
		rc = tw_sqn_he_init(&r->sqn, 0, 0, 1, 0);
		if (rc != TW_OK)
			goto fail;
	}
	r->reserved = seq;
	r->resync_start = mono_ns() / 1000000000;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		rc = TW_ERR_NOMEM;
		goto fail;
	}
	if (pthread_cond_init(&r->ahead_done, NULL) != 0) {
		pthread_mutex_destroy(&r->lock);
		rc = TW_ERR_NOMEM;
		goto fail;
	}

	r->hash = rec_hash(st, imsi, len);
	auts_restore(st, r);
	/* pinned until locked below: once linked it can be killed or evicted
	 * by another thread, and must not be reused meanwhile */
	r->used = true;
	atomic_store(&r->pins, 1);
	pthread_mutex_lock(stripe_of(st, r->hash));
	other = chain_find(st, r->hash, imsi, len);
	if (other == NULL) {
		struct sub_rec **head = chain_of(st, r->hash);

		r->linked = true;
		r->next = *head;
		*head = r;
		/* counted while linking: a kill (rec_bury) cannot come first */
		loaded = atomic_fetch_add(&st->n_loaded, 1) + 1;
	}
	pthread_mutex_unlock(stripe_of(st, r->hash));
	if (other != NULL) {
		/* another thread loaded it meanwhile: use that one */
		pthread_cond_destroy(&r->ahead_done);
		pthread_mutex_destroy(&r->lock);
		rec_spare(st, r);
		return rec_get(st, imsi, out);
	}
	if (loaded > atomic_load(&st->grow_at))
		rec_grow(st);
	if (loaded > st->sub_cache)
		rec_evict(st);

	pthread_mutex_lock(&r->lock);
	atomic_fetch_sub(&r->pins, 1);
	if (r->dead) { /* deleted, replaced or evicted in the instant since */
		pthread_mutex_unlock(&r->lock);
		return rec_get(st, imsi, out);
	}
	*out = r;
	return TW_OK;
fail:
	rec_spare(st, r);
	if (rc == TW_ERR_DECODE || rc == TW_ERR_RANGE)
		rc = store_io(st, TW_ERR_IO); /* a row we cannot use: the store is bad */
	return rc;
}

/* rec_get for the authentication path: a disabled subscriber's record is
 * not handed out (TW_ERR_DISABLED, nothing locked). */
static int rec_get_enabled(struct tw_store *st, const char *imsi, struct sub_rec **out)
{
	int rc = rec_get(st, imsi, out);

	if (rc == TW_OK && (*out)->disabled) {
		pthread_mutex_unlock(&(*out)->lock);
		*out = NULL;
		return TW_ERR_DISABLED;
	}
	return rc;
}

/*
 * The durable part of a reservation for the row (imsi, gen), db_lock
 * taken here: in ONE write transaction, read the row's mark, start at
 * max(base, mark) (another process may have reserved meanwhile), write
 * mark = start + block, and commit with synchronous=FULL. Only after the
 * commit returned does the caller use (*start, *next]. Returns TW_OK;
 * TW_ERR_IO (not durable: nothing may be used); TW_ERR_RANGE (SEQ
 * exhausted, C.1.1: never wrap); TW_ERR_STATE (the row was deleted or
 * replaced).
 */
/*
 * One row's part of a reservation, inside the caller's write transaction
 * (db_lock held): read the row's mark, start at max(base, mark) (another
 * process may have reserved meanwhile), write mark = start + block.
 * TW_OK with (*start, *next]; TW_ERR_RANGE (SEQ exhausted, C.1.1: never
 * wrap); TW_ERR_STATE (the row was deleted or replaced); TW_ERR_IO or an
 * SQLite error: the transaction must be rolled back.
 */
static int reserve_row(struct tw_store *st, const char *imsi, size_t imsi_len, int64_t gen,
		       unsigned ind_bits, uint64_t base, uint64_t *start, uint64_t *next)
{
	uint64_t limit = seq_limit(ind_bits), mark, n;
	int rc;

	sqlite3_bind_text(st->q_resv_sel, 1, imsi, (int)imsi_len, SQLITE_STATIC);
	rc = sqlite3_step(st->q_resv_sel);
	if (rc == SQLITE_ROW) {
		sqlite3_int64 m = sqlite3_column_int64(st->q_resv_sel, 0);

		mark = m < 0 ? 0 : (uint64_t)m;
		rc = sqlite3_column_int64(st->q_resv_sel, 1) == gen ? TW_OK : TW_ERR_STATE;
	} else {
		mark = 0;
		rc = rc == SQLITE_DONE ? TW_ERR_STATE : store_sqlite_err(rc);
	}
	sqlite3_reset(st->q_resv_sel);
	sqlite3_clear_bindings(st->q_resv_sel);
	if (rc != TW_OK)
		return rc;
	if (mark > base)
		base = mark;
	if (base >= limit)
		return TW_ERR_RANGE;
	n = limit - base < st->sqn_block ? limit : base + st->sqn_block;
	sqlite3_bind_text(st->q_resv_upd, 1, imsi, (int)imsi_len, SQLITE_STATIC);
	sqlite3_bind_int64(st->q_resv_upd, 2, (sqlite3_int64)n);
	sqlite3_bind_int64(st->q_resv_upd, 3, (sqlite3_int64)base);
	sqlite3_bind_int64(st->q_resv_upd, 4, gen);
	rc = run(st->q_resv_upd);
	sqlite3_clear_bindings(st->q_resv_upd);
	if (rc == TW_OK && sqlite3_changes(st->db) != 1)
		return TW_ERR_STATE; /* nothing written: the transaction may go on */
	if (rc != TW_OK)
		return rc;
	*start = base;
	*next = n;
	return TW_OK;
}

/* db_lock taken (writer: before the write-behind's next round) and the
 * connection at synchronous = FULL: the write-behind switches to NORMAL
 * for its own transactions and back (ident.c); should switching back
 * have failed, this commit still syncs. TW_OK, or TW_ERR_IO with db_lock
 * released. */
static int reserve_lock(struct tw_store *st, bool writer)
{
	if (writer)
		store_db_lock_writer(st);
	else
		pthread_mutex_lock(&st->db_lock);
	if (!st->sync_full) {
		if (sqlite3_exec(st->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) !=
		    SQLITE_OK) {
			pthread_mutex_unlock(&st->db_lock);
			return TW_ERR_IO;
		}
		st->sync_full = true;
	}
	return TW_OK;
}

/*
 * The durable part of a reservation for the row (imsi, gen), db_lock
 * taken here: reserve_row in ONE write transaction committed with
 * synchronous=FULL. Only after the commit returned does the caller use
 * (*start, *next]. Returns TW_OK; TW_ERR_IO (not durable: nothing may be
 * used); TW_ERR_RANGE; TW_ERR_STATE (as reserve_row).
 */
static int reserve_tx(struct tw_store *st, const char *imsi, size_t imsi_len, int64_t gen,
		      unsigned ind_bits, uint64_t base, bool writer, uint64_t *start,
		      uint64_t *next)
{
	uint64_t a = 0, b = 0;
	int rc;

	if (st->read_only)
		return TW_ERR_IO;
	rc = reserve_lock(st, writer);
	if (rc != TW_OK)
		return store_io(st, rc);
	rc = store_begin(st);
	if (rc == TW_OK)
		rc = reserve_row(st, imsi, imsi_len, gen, ind_bits, base, &a, &b);
	if (rc == TW_OK)
		rc = store_commit(st);
	if (rc == TW_OK) {
		*start = a;
		*next = b;
		atomic_fetch_add(&st->n_reservations, 1);
	} else {
		store_rollback(st);
	}
	pthread_mutex_unlock(&st->db_lock);
	return store_io(st, rc);
}

/*
 * Raises r's durable high-water mark on the caller's thread (r->lock held;
 * the vector path when reserve-ahead has not landed, a resync beyond the
 * mark): SEQ_HE = the start, reserved = the new mark, once durable. A
 * block reserved ahead but not used yet is below the new one: dropped.
 * Returns as reserve_tx.
 */
static int reserve(struct tw_store *st, struct sub_rec *r, uint64_t base)
{
	uint64_t start = 0, next = 0;
	int rc = reserve_tx(st, r->imsi, r->imsi_len, r->gen, r->sqn.ind_bits, base, true,
			    &start, &next);

	if (rc != TW_OK)
		return rc;
	r->sqn.seq_he = start;
	r->reserved = next;
	r->ahead_mark = 0;
	atomic_fetch_add(&st->n_resv_sync, 1);
	return TW_OK;
}

/* ---- reserve-ahead ------------------------------------------------------- */

/* r (locked) has used 3/4 of its block and nothing is under way for it
 * (ahead_busy: a batch's claim, tw_store_aka_vectors, is one). */
static bool ahead_wanted(const struct tw_store *st, const struct sub_rec *r)
{
	uint64_t left = r->reserved > r->sqn.seq_he ? r->reserved - r->sqn.seq_he : 0;

	return !r->dead && !r->ahead_queued && !r->ahead_busy && r->ahead_mark == 0 &&
	       left * 4 <= st->sqn_block && r->reserved < seq_limit(r->sqn.ind_bits);
}

/* Queues r (locked) for the write-behind thread; a full queue drops the
 * request (the vector path then reserves itself). */
static void ahead_queue(struct tw_store *st, struct sub_rec *r)
{
	struct ident_table *t = &st->id;

	if (st->read_only || !t->thread_started || !ahead_wanted(st, r))
		return;
	pthread_mutex_lock(&t->lock);
	if (st->ahead_n < STORE_AHEAD_QUEUE) {
		st->ahead_q[(st->ahead_head + st->ahead_n) % STORE_AHEAD_QUEUE] = r;
		st->ahead_n++;
		r->ahead_queued = true;
		pthread_cond_signal(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
}

bool store_ahead_pending(const struct tw_store *st)
{
	return st->ahead_n > 0;
}

/*
 * The write-behind thread's side (no lock held): for each queued record,
 * a snapshot under its lock, the durable commit with that lock released
 * (the vector path goes on with the block it has), then, under the lock
 * again, the new block is taken only if nothing reserved for the record
 * meanwhile: contiguous (start == the old mark) it just raises reserved;
 * otherwise (another process reserved in between) it waits in
 * ahead_base/ahead_mark until the current block is used up. A dropped
 * block is skipped SEQs, never reused ones.
 */
void store_ahead_run(struct tw_store *st)
{
	struct ident_table *t = &st->id;

	for (;;) {
		struct sub_rec *r;
		char imsi[TW_IMSI_MAX_LEN + 1];
		size_t imsi_len;
		int64_t gen;
		unsigned ind_bits;
		uint64_t snap, start = 0, next = 0;
		int rc;

		pthread_mutex_lock(&t->lock);
		if (st->ahead_n == 0) {
			pthread_mutex_unlock(&t->lock);
			return;
		}
		r = st->ahead_q[st->ahead_head];
		st->ahead_head = (st->ahead_head + 1) % STORE_AHEAD_QUEUE;
		st->ahead_n--;
		pthread_mutex_unlock(&t->lock);

		pthread_mutex_lock(&r->lock);
		r->ahead_queued = false;
		if (!ahead_wanted(st, r)) {
			pthread_mutex_unlock(&r->lock);
			continue;
		}
		memcpy(imsi, r->imsi, r->imsi_len + 1);
		imsi_len = r->imsi_len;
		gen = r->gen;
		ind_bits = r->sqn.ind_bits;
		snap = r->reserved;
		/* no second request for r while this one is under way, and a
		 * vector that runs out meanwhile waits for it (ahead_done) */
		r->ahead_queued = true;
		r->ahead_busy = true;
		pthread_mutex_unlock(&r->lock);

		rc = reserve_tx(st, imsi, imsi_len, gen, ind_bits, snap, false, &start, &next);

		pthread_mutex_lock(&r->lock);
		r->ahead_queued = false;
		r->ahead_busy = false;
		pthread_cond_broadcast(&r->ahead_done);
		if (rc == TW_OK) {
			atomic_fetch_add(&st->n_resv_ahead, 1);
			if (!r->dead && r->gen == gen && r->reserved == snap && next > snap) {
				if (start == snap) {
					r->reserved = next;
				} else {
					r->ahead_base = start;
					r->ahead_mark = next;
				}
			}
		}
		pthread_mutex_unlock(&r->lock);
	}
}

/* See store_internal.h: another connection's commit bumps st->epoch. An
 * unreadable data_version counts as a change (records then check their
 * rows, and keep being used when that fails too). */
void store_poll_changes(struct tw_store *st)
{
	int rc;

	if (st->q_data_version == NULL)
		return;
	pthread_mutex_lock(&st->db_lock);
	rc = sqlite3_step(st->q_data_version);
	if (rc != SQLITE_ROW) {
		atomic_fetch_add(&st->epoch, 1);
	} else if (sqlite3_column_int64(st->q_data_version, 0) != st->data_version) {
		st->data_version = sqlite3_column_int64(st->q_data_version, 0);
		atomic_fetch_add(&st->epoch, 1);
	}
	sqlite3_reset(st->q_data_version);
	pthread_mutex_unlock(&st->db_lock);
}

/* ---- open / close -------------------------------------------------------- */

static int exec(struct tw_store *st, const char *sql, char *errbuf, size_t errbuf_len)
{
	char *msg = NULL;
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		store_say(errbuf, errbuf_len, "%s: %s", st->read_only ? "open" : "database",
		    msg != NULL ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return store_sqlite_err(rc) == TW_OK ? TW_ERR_IO : store_sqlite_err(rc);
	}
	return TW_OK;
}

int store_prepare(sqlite3 *c, sqlite3_stmt **q, const char *sql, char *errbuf,
		  size_t errbuf_len)
{
	int rc = sqlite3_prepare_v3(c, sql, -1, SQLITE_PREPARE_PERSISTENT, q, NULL);

	if (rc != SQLITE_OK) {
		store_say(errbuf, errbuf_len, "prepare: %s", sqlite3_errmsg(c));
		return TW_ERR_IO;
	}
	return TW_OK;
}

static int prepare(struct tw_store *st, sqlite3_stmt **q, const char *sql, char *errbuf,
		   size_t errbuf_len)
{
	return store_prepare(st->db, q, sql, errbuf, errbuf_len);
}

/* WAL size after each commit of the writing connection; installing it
 * also turns SQLite's auto-checkpoint off on that connection (ident.c
 * checkpoints from the write-behind thread instead). */
static int wal_hook(void *arg, sqlite3 *c, const char *name, int frames)
{
	struct tw_store *st = arg;

	(void)c;
	(void)name;
	atomic_store(&st->wal_frames, frames);
	return SQLITE_OK;
}

/*
 * The reading connection (store_internal.h): the same file, read-only by
 * pragma, for the packet path's look-ups (subscriber rows, generations,
 * pseudonyms and re-auth rows). In WAL mode a reader neither waits for
 * nor blocks the writer. A read-only store reads on its one connection.
 */
static int open_reader(struct tw_store *st, const char *path, unsigned busy_ms, char *errbuf,
		       size_t errbuf_len)
{
	int rc;

	if (st->read_only) {
		st->rd = st->db;
	} else {
		rc = sqlite3_open_v2(path, &st->rd, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
				     NULL);
		if (rc != SQLITE_OK) {
			store_say(errbuf, errbuf_len, "%s: %s", path,
			    st->rd != NULL ? sqlite3_errmsg(st->rd) : sqlite3_errstr(rc));
			return TW_ERR_IO;
		}
		sqlite3_busy_timeout(st->rd, (int)busy_ms);
		if (sqlite3_exec(st->rd, "PRAGMA query_only = 1", NULL, NULL, NULL) != SQLITE_OK) {
			store_say(errbuf, errbuf_len, "database: %s", sqlite3_errmsg(st->rd));
			return TW_ERR_IO;
		}
	}
	{
		char sql[512];

		snprintf(sql, sizeof(sql), "SELECT %s FROM subscriber WHERE imsi = ?1", cols);
		rc = store_prepare(st->rd, &st->rq_load, sql, errbuf, errbuf_len);
	}
	if (rc == TW_OK)
		rc = store_prepare(st->rd, &st->rq_gen,
				   "SELECT gen FROM subscriber WHERE imsi = ?1", errbuf, errbuf_len);
	return rc;
}

/* Creates the schema on first use; checks its version and the KEK. */
static int schema(struct tw_store *st, char *errbuf, size_t errbuf_len)
{
	sqlite3_stmt *q = NULL;
	uint8_t wrapped[40], plain[32];
	size_t wlen = 0, plen = 0;
	bool have = false;
	int rc, version;

	if (!st->read_only) {
		rc = exec(st, "BEGIN IMMEDIATE", errbuf, errbuf_len);
		if (rc != TW_OK)
			return rc;
	}
	rc = sqlite3_prepare_v2(st->db,
				"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
				-1, &q, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(q);
		have = rc == SQLITE_ROW;
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(q);
	q = NULL;
	if (rc != SQLITE_OK) {
		store_say(errbuf, errbuf_len, "database: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
		goto out;
	}
	if (!have) {
		if (st->read_only) {
			store_say(errbuf, errbuf_len, "not a twag store (no meta table)");
			rc = TW_ERR_IO;
			goto out;
		}
		rc = exec(st, schema_sql, errbuf, errbuf_len);
		if (rc != TW_OK)
			goto out;
		rc = tw_keywrap_wrap_ctx(&st->kek, wrapped, sizeof(wrapped), &wlen,
					 kek_check_plain, sizeof(kek_check_plain));
		if (rc != TW_OK)
			goto out;
		rc = sqlite3_prepare_v2(st->db,
					"INSERT INTO meta (name, value) VALUES ('schema_version', ?1),"
					" ('kek_check', ?2)", -1, &q, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_int(q, 1, STORE_SCHEMA_VERSION);
			sqlite3_bind_blob(q, 2, wrapped, (int)wlen, SQLITE_STATIC);
			rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		}
		sqlite3_finalize(q);
		q = NULL;
		if (rc != SQLITE_OK) {
			store_say(errbuf, errbuf_len, "database: %s", sqlite3_errmsg(st->db));
			rc = TW_ERR_IO;
			goto out;
		}
	}
	rc = sqlite3_prepare_v2(st->db,
				"SELECT (SELECT value FROM meta WHERE name = 'schema_version'),"
				" (SELECT value FROM meta WHERE name = 'kek_check')",
				-1, &q, NULL);
	if (rc != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW) {
		store_say(errbuf, errbuf_len, "database: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
		goto out;
	}
	version = sqlite3_column_int(q, 0);
	/* versions 1 to 3 differ in the identity tables: migrated below, in
	 * this transaction, when opened for writing */
	if (version != STORE_SCHEMA_VERSION && (version < 1 || version > 4 || st->read_only)) {
		store_say(errbuf, errbuf_len, "schema version %d not supported (this is %d)%s",
		    version, STORE_SCHEMA_VERSION,
		    version >= 1 && version <= 4 ? ": open it for writing once to migrate it" : "");
		rc = TW_ERR_INVAL;
		goto out;
	}
	wlen = (size_t)sqlite3_column_bytes(q, 1);
	if (wlen != sizeof(wrapped) || sqlite3_column_blob(q, 1) == NULL) {
		store_say(errbuf, errbuf_len, "database: bad KEK check value");
		rc = TW_ERR_IO;
		goto out;
	}
	memcpy(wrapped, sqlite3_column_blob(q, 1), wlen);
	/* RFC 3394 §2.2.3: the integrity check fails under any other KEK */
	rc = tw_keywrap_unwrap_ctx(&st->kek, plain, sizeof(plain), &plen, wrapped, wlen);
	if (rc != TW_OK || plen != sizeof(plain) ||
	    !tw_ct_eq(plain, kek_check_plain, sizeof(plain))) {
		store_say(errbuf, errbuf_len, "the database was created under another KEK");
		rc = TW_ERR_AUTH;
		goto out;
	}
	rc = TW_OK;
	if (version != STORE_SCHEMA_VERSION) {
		sqlite3_finalize(q);
		q = NULL;
		if (version == 3) {
			rc = exec(st, migrate_3_sql, errbuf, errbuf_len);
			if (rc == TW_OK)
				rc = store_ident_migrate_3(st, errbuf, errbuf_len);
		} else if (version < 3) {
			rc = exec(st, migrate_12_sql, errbuf, errbuf_len);
		}
		if (rc == TW_OK)
			rc = exec(st, migrate_4_sql, errbuf, errbuf_len);
		if (rc == TW_OK)
			rc = exec(st, "UPDATE meta SET value = 5 WHERE name = 'schema_version'",
				  errbuf, errbuf_len);
	}
out:
	sqlite3_finalize(q);
	if (!st->read_only) {
		if (rc == TW_OK)
			rc = exec(st, "COMMIT", errbuf, errbuf_len);
		if (rc != TW_OK && !sqlite3_get_autocommit(st->db))
			(void)exec(st, "ROLLBACK", NULL, 0);
	}
	tw_wipe(plain, sizeof(plain));
	return rc;
}

/* A store opened for writing that failed: when the database file or its
 * directory (where the WAL and shared-memory files go) cannot be written,
 * say so in front of SQLite's words, which name no cause ("unable to open
 * database file"). */
static void say_why_not_writable(const char *path, char *errbuf, size_t errbuf_len)
{
	char dir[4096], *slash, prev[512];
	const char *what = NULL;
	int e = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
		e = errno;
		what = "the database file";
	} else if (access(dir, W_OK) != 0) {
		e = errno;
		what = "its directory (the WAL and -shm files go there)";
	}
	if (what == NULL)
		return;
	snprintf(prev, sizeof(prev), "%s", errbuf);
	store_say(errbuf, errbuf_len, "%s: %s is not writable (%s)%s%s", path, what,
		  e == EROFS ? "read-only file system" : strerror(e), prev[0] ? ": " : "", prev);
}

static int journal_wal(struct tw_store *st, char *errbuf, size_t errbuf_len)
{
	sqlite3_stmt *q = NULL;
	bool wal = false;
	int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &q, NULL);

	if (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
		const unsigned char *m = sqlite3_column_text(q, 0);

		wal = m != NULL && strcmp((const char *)m, "wal") == 0;
	}
	sqlite3_finalize(q);
	if (!wal) {
		store_say(errbuf, errbuf_len, "cannot switch to WAL mode: %s", sqlite3_errmsg(st->db));
		return TW_ERR_IO;
	}
	/* the commit of a reservation is the promise that no SQN repeats:
	 * FULL syncs the WAL on every commit */
	return exec(st, "PRAGMA synchronous = FULL", errbuf, errbuf_len);
}


/*
 * Process-wide SQLite settings, before its first use: no memory
 * statistics, which SQLite keeps under a global mutex taken on every one
 * of its allocations (a statement step makes several) and which twag never
 * reads. Refused (SQLITE_MISUSE, ignored) when something in the process
 * used SQLite first.
 */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;

static void sqlite_setup(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int tw_store_open(struct tw_store **out, const struct tw_store_opts *o, char *errbuf,
		  size_t errbuf_len)
{
	struct tw_store *st = NULL;
	struct stat sb;
	bool existed;
	sqlite3_int64 nsub = 0;
	unsigned busy_ms = 0;
	char pragma[64];
	int rc, flags;

	if (errbuf != NULL && errbuf_len > 0)
		errbuf[0] = '\0';
	if (out == NULL)
		return TW_ERR_INVAL;
	*out = NULL;
	if (o == NULL || o->path == NULL || o->kek == NULL) {
		store_say(errbuf, errbuf_len, "no database path or KEK");
		return TW_ERR_INVAL;
	}
	/* a store for writing must be able to write (SQLite may still open a
	 * WAL database on a read-only file system, and fail at the first
	 * commit: an SQN reservation) */
	if (!o->read_only) {
		char why[600] = "";

		say_why_not_writable(o->path, why, sizeof(why));
		if (why[0] != '\0') {
			store_say(errbuf, errbuf_len, "%s", why);
			return TW_ERR_IO;
		}
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return TW_ERR_NOMEM;
	st->read_only = o->read_only;
	st->ident_volatile = o->ident_volatile;
	st->sqn_block = o->sqn_block ? o->sqn_block : TW_STORE_SQN_BLOCK_DEFAULT;
	st->resync_max = o->resync_max ? o->resync_max : TW_STORE_RESYNC_MAX_DEFAULT;
	st->resync_window = o->resync_window ? o->resync_window : TW_STORE_RESYNC_WINDOW_DEFAULT;
	st->resync_bad_max = o->resync_bad_max ? o->resync_bad_max : STORE_RESYNC_BAD_MAX_DEFAULT;
	st->reauth_ttl = o->reauth_ttl ? o->reauth_ttl : STORE_REAUTH_TTL_DEFAULT;
	st->pseudonym_ttl = o->pseudonym_ttl ? o->pseudonym_ttl : STORE_PSEUDONYM_TTL_DEFAULT;
	st->sweep_ms = o->sweep_ms ? o->sweep_ms : EXPIRY_SWEEP_MS_DEFAULT;
	st->ident_flush_ms = o->ident_flush_ms ? o->ident_flush_ms : STORE_IDENT_FLUSH_MS_DEFAULT;
	st->sub_cache = o->sub_cache ? o->sub_cache : STORE_SUB_CACHE_DEFAULT;
	/* a slot per cached record, up to 65536 (1.5 MiB) */
	st->n_auts_keep = 16;
	while (st->n_auts_keep < st->sub_cache && st->n_auts_keep < 65536)
		st->n_auts_keep <<= 1;
	if (o->ind_bits == 0 && o->ind_first == 0 && o->ind_count == 0) {
		st->ind_bits = TW_SQN_IND_BITS_DEFAULT;
		st->ind_first = 0;
		st->ind_count = 1;
	} else {
		st->ind_bits = o->ind_bits;
		st->ind_first = o->ind_first;
		st->ind_count = o->ind_count;
	}
	/* C.1.2: this node's slots must exist in an IND of ind_bits bits */
	if (st->ind_bits > TW_SQN_IND_BITS_MAX || st->ind_count == 0 ||
	    st->ind_first + st->ind_count > (1u << st->ind_bits)) {
		store_say(errbuf, errbuf_len, "IND slots %u..%u do not fit %u IND bits", st->ind_first,
		    st->ind_first + st->ind_count - 1, st->ind_bits);
		free(st);
		return TW_ERR_INVAL;
	}
	pthread_mutex_init(&st->db_lock, NULL);
	pthread_mutex_init(&st->rd_lock, NULL);
	pthread_mutex_init(&st->all_lock, NULL);
	pthread_mutex_init(&st->auts_lock, NULL);
	for (int i = 0; i < STORE_STRIPES; i++)
		pthread_mutex_init(&st->stripe[i], NULL);
	rc = tw_aes_init(&st->kek, o->kek, TW_STORE_KEK_LEN);
	if (rc == TW_OK)
		rc = store_ident_key(st, o->kek, TW_STORE_KEK_LEN);
	if (rc != TW_OK)
		goto fail;
	rc = store_random(st->hash_key, sizeof(st->hash_key));
	if (rc != TW_OK) {
		store_say(errbuf, errbuf_len, "getrandom failed");
		goto fail;
	}
	st->auts_keep = calloc(st->n_auts_keep, sizeof(*st->auts_keep));
	if (st->auts_keep == NULL) {
		rc = TW_ERR_NOMEM;
		store_say(errbuf, errbuf_len, "out of memory");
		goto fail;
	}

	existed = stat(o->path, &sb) == 0;
	pthread_once(&sqlite_once, sqlite_setup);
	/* every use of a read-write store's connections is under db_lock or
	 * rd_lock (store_internal.h): SQLite's own per-call mutex would only
	 * add cost; a read-only store reads on db under both locks */
	flags = (st->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
		(st->read_only ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX);
	rc = sqlite3_open_v2(o->path, &st->db, flags, NULL);
	if (rc != SQLITE_OK) {
		int en = st->db != NULL ? sqlite3_system_errno(st->db) : 0;

		store_say(errbuf, errbuf_len, "%s: %s%s%s", o->path,
		    st->db != NULL ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc),
		    en != 0 ? ": " : "", en != 0 ? strerror(en) : "");
		rc = rc == SQLITE_NOMEM ? TW_ERR_NOMEM : TW_ERR_IO;
		goto fail;
	}
	/* wrapped keys only, but pseudonyms and the rest are nobody's business
	 * either; SQLite gives the -wal/-shm files the database's mode */
	if (!existed && !st->read_only)
		(void)chmod(o->path, 0600);
	busy_ms = o->busy_timeout_ms ? o->busy_timeout_ms : STORE_BUSY_MS_DEFAULT;
	sqlite3_busy_timeout(st->db, (int)busy_ms);
	if (!st->read_only) {
		/* a new file only (no effect once it has a table): the
		 * identity tables are B-trees over random ids, each insert
		 * dirties a page, and a commit writes every dirty page to the
		 * WAL in its own write(2) calls; 16 KiB pages make a few times
		 * fewer of them (measured: the write-behind's commit cost per
		 * entry drops ~2.4x against 4 KiB) */
		rc = exec(st, "PRAGMA page_size = 16384", errbuf, errbuf_len);
		if (rc != TW_OK)
			goto fail;
		rc = journal_wal(st, errbuf, errbuf_len);
		if (rc != TW_OK)
			goto fail;
		st->sync_full = true;
		/* the write-behind's indexes stay cached (random keys: a page
		 * per insert otherwise read back from the file) */
		snprintf(pragma, sizeof(pragma), "PRAGMA cache_size = -%d", STORE_CACHE_KIB);
		rc = exec(st, pragma, errbuf, errbuf_len);
		if (rc != TW_OK)
			goto fail;
		sqlite3_wal_hook(st->db, wal_hook, st);
	}
	rc = schema(st, errbuf, errbuf_len);
	if (rc != TW_OK)
		goto fail;

	rc = prepare(st, &st->q_begin, "BEGIN IMMEDIATE", errbuf, errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_commit, "COMMIT", errbuf, errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_rollback, "ROLLBACK", errbuf, errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_resv_sel,
			     "SELECT sqn_reserved, gen FROM subscriber WHERE imsi = ?1", errbuf,
			     errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_resv_upd,
			     "UPDATE subscriber SET sqn_reserved = ?2, seq_he = ?3"
			     " WHERE imsi = ?1 AND gen = ?4", errbuf, errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_close_upd,
			     "UPDATE subscriber SET seq_he = ?2, sqn_reserved = ?2"
			     " WHERE imsi = ?1 AND gen = ?3 AND sqn_reserved = ?4", errbuf,
			     errbuf_len);
	if (rc == TW_OK)
		rc = prepare(st, &st->q_data_version, "PRAGMA data_version", errbuf, errbuf_len);
	if (rc == TW_OK) {
		if (sqlite3_step(st->q_data_version) == SQLITE_ROW)
			st->data_version = sqlite3_column_int64(st->q_data_version, 0);
		sqlite3_reset(st->q_data_version);
	}
	if (rc == TW_OK)
		rc = open_reader(st, o->path, busy_ms, errbuf, errbuf_len);
	if (rc != TW_OK)
		goto fail;

	/* buckets for about twice the subscribers there are now */
	{
		sqlite3_stmt *q = NULL;

		if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM subscriber", -1, &q, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(q) == SQLITE_ROW)
			nsub = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	/* two buckets per subscriber, or per record the cache may hold */
	if (nsub > 0 && (size_t)nsub > st->sub_cache)
		nsub = (sqlite3_int64)st->sub_cache;
	st->nbucket = pow2_at_least(nsub > 0 ? 2 * (size_t)nsub : 0);
	st->bucket = tw_table_alloc(st->nbucket, sizeof(*st->bucket));
	atomic_store(&st->grow_at, st->nbucket < STORE_BUCKETS_MAX ? st->nbucket : SIZE_MAX);
	if (st->bucket == NULL) {
		rc = TW_ERR_NOMEM;
		goto fail;
	}
	rc = store_ident_init(st, o->ident_cache ? o->ident_cache : STORE_IDENT_CACHE_DEFAULT,
			      errbuf, errbuf_len);
	if (rc != TW_OK)
		goto fail;
	*out = st;
	return TW_OK;
fail:
	if (errbuf != NULL && errbuf_len > 0 && errbuf[0] == '\0')
		store_say(errbuf, errbuf_len, "%s", tw_strerror(rc));
	if (!o->read_only && errbuf != NULL && errbuf_len > 0)
		say_why_not_writable(o->path, errbuf, errbuf_len);
	if (errbuf != NULL && errbuf_len > 0 && strstr(errbuf, "database is locked") != NULL) {
		char prev[512];

		snprintf(prev, sizeof(prev), "%s", errbuf);
		store_say(errbuf, errbuf_len, "%s: another process holds the database's lock "
			  "(waited %u ms): %s", o->path, busy_ms, prev);
	}
	tw_store_close(st);
	return rc;
}

/* Clean close (store.h): the exact SEQ_HE of every loaded subscriber is
 * written back and the mark lowered to it, in one transaction, only where
 * the row is still ours (same gen, nobody raised the mark since). */
static void write_back(struct tw_store *st)
{
	int rc;

	if (st->read_only || st->db == NULL || st->q_close_upd == NULL)
		return;
	pthread_mutex_lock(&st->db_lock);
	rc = store_begin(st);
	for (size_t b = 0; b < st->nbucket; b++)
	for (struct sub_rec *r = st->bucket[b]; rc == TW_OK && r != NULL; r = r->next) {
		if (r->dead || !alg_is_aka(r->alg))
			continue;
		sqlite3_bind_text(st->q_close_upd, 1, r->imsi, (int)r->imsi_len, SQLITE_STATIC);
		sqlite3_bind_int64(st->q_close_upd, 2, (sqlite3_int64)r->sqn.seq_he);
		sqlite3_bind_int64(st->q_close_upd, 3, r->gen);
		sqlite3_bind_int64(st->q_close_upd, 4, (sqlite3_int64)r->reserved);
		rc = run(st->q_close_upd);
		sqlite3_clear_bindings(st->q_close_upd);
	}
	if (rc == TW_OK)
		rc = store_commit(st);
	if (rc != TW_OK) {
		/* the marks stay: safe, a block per subscriber is skipped */
		store_rollback(st);
		(void)store_io(st, rc);
	}
	pthread_mutex_unlock(&st->db_lock);
}

int tw_store_populate(struct tw_store *st)
{
	if (st == NULL)
		return TW_ERR_INVAL;
	return store_ident_populate(st);
}

void tw_store_close(struct tw_store *st)
{
	if (st == NULL)
		return;

	sqlite3_stmt **qs[] = { &st->q_resv_sel, &st->q_resv_upd, &st->q_close_upd,
				&st->q_begin, &st->q_commit, &st->q_rollback,
				&st->q_data_version, &st->rq_load, &st->rq_gen };

	store_ident_stop(st);
	write_back(st);
	store_ident_free(st);
	store_ident_random_wipe(); /* this thread's; the others' at their exit */
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		sqlite3_finalize(*qs[i]);
		*qs[i] = NULL;
	}
	if (st->rd != NULL && st->rd != st->db)
		sqlite3_close_v2(st->rd);
	st->rd = NULL;
	if (st->db != NULL)
		sqlite3_close_v2(st->db); /* the last one: checkpoints, removes the WAL */
	/* every record with its lock initialised is in a chain or a grave */
	for (size_t b = 0; st->bucket != NULL && b < st->nbucket; b++) {
		while (st->bucket[b] != NULL) {
			struct sub_rec *r = st->bucket[b];

			st->bucket[b] = r->next;
			pthread_cond_destroy(&r->ahead_done);
			pthread_mutex_destroy(&r->lock);
			tw_wipe(r, sizeof(*r));
		}
	}
	while (st->grave_head != NULL) {
		struct sub_rec *r = st->grave_head;

		st->grave_head = r->grave_next;
		pthread_cond_destroy(&r->ahead_done);
		pthread_mutex_destroy(&r->lock);
		tw_wipe(r, sizeof(*r));
	}
	st->grave_tail = NULL;
	st->rec_spare = NULL; /* wiped when they went back */
	while (st->chunks != NULL) {
		struct rec_chunk *c = st->chunks;

		st->chunks = c->next;
		tw_table_free(c->recs, STORE_REC_CHUNK, sizeof(*c->recs));
		free(c);
	}
	tw_table_free(st->bucket, st->nbucket, sizeof(*st->bucket));
	pthread_mutex_destroy(&st->db_lock);
	pthread_mutex_destroy(&st->rd_lock);
	pthread_mutex_destroy(&st->all_lock);
	pthread_mutex_destroy(&st->auts_lock);
	free(st->auts_keep);
	st->auts_keep = NULL;
	for (int i = 0; i < STORE_STRIPES; i++)
		pthread_mutex_destroy(&st->stripe[i]);
	tw_aes_wipe(&st->kek);
	tw_aes_wipe(&st->id_key);
	tw_aes_wipe(&st->state_key);
	tw_hmac_sha256_wipe(&st->state_mac_key);
	tw_wipe(st, sizeof(*st));
	free(st);
}

/* ---- provisioning -------------------------------------------------------- */

/* The columns of a subscriber row: keys wrapped (RFC 3394) under the KEK. */
struct row {
	int alg;
	uint8_t k_w[STORE_WRAP_MAX], opc_w[STORE_WRAP_MAX];
	size_t k_w_len, opc_w_len;
	int mac_bits, res_bits, ck_bits, ik_bits, iterations;
	int ind_bits;
	sqlite3_int64 seq_he, gen;
};

static int sub_to_row(struct tw_store *st, const struct tw_subscriber *s, struct row *w)
{
	const struct tw_sub_keys *kk = &s->keys;
	const uint8_t *k, *opc = NULL;
	size_t k_len, opc_len = 0;
	int rc;

	memset(w, 0, sizeof(*w));
	if (!imsi_ok(s->imsi, NULL) || s->sqn.ind_bits > TW_SQN_IND_BITS_MAX ||
	    s->sqn.seq_he > seq_limit(s->sqn.ind_bits))
		return TW_ERR_INVAL;
	switch (kk->alg) {
	case TW_SUB_MILENAGE:
		/* only the TS 35.206 default constants have columns */
		if (kk->aka.alg != TW_AKA_MILENAGE ||
		    (kk->aka.u.milenage.consts != NULL &&
		     memcmp(kk->aka.u.milenage.consts, &tw_milenage_default_consts,
			    sizeof(tw_milenage_default_consts)) != 0))
			return TW_ERR_INVAL;
		k = kk->aka.u.milenage.k;
		k_len = 16;
		opc = kk->aka.u.milenage.opc;
		opc_len = 16;
		break;
	case TW_SUB_TUAK: {
		struct tw_sub_keys chk;
		const struct tw_tuak_params *p = &kk->aka.u.tuak;

		/* sizes AKA can carry (vecsrc.h) */
		rc = kk->aka.alg == TW_AKA_TUAK ? tw_sub_keys_tuak(&chk, p) : TW_ERR_INVAL;
		tw_wipe(&chk, sizeof(chk));
		if (rc != TW_OK)
			return TW_ERR_INVAL;
		k = p->k;
		k_len = p->k_len;
		opc = p->topc;
		opc_len = 32;
		w->mac_bits = p->mac_bits;
		w->res_bits = p->res_bits;
		w->ck_bits = p->ck_bits;
		w->ik_bits = p->ik_bits;
		w->iterations = p->iterations;
		break;
	}
	case TW_SUB_COMP128V1:
	case TW_SUB_COMP128V2:
	case TW_SUB_COMP128V3:
		k = kk->ki;
		k_len = 16;
		break;
	default:
		return TW_ERR_INVAL;
	}
	w->alg = kk->alg;
	w->ind_bits = s->sqn.ind_bits;
	w->seq_he = (sqlite3_int64)s->sqn.seq_he;
	rc = tw_keywrap_wrap_ctx(&st->kek, w->k_w, sizeof(w->k_w), &w->k_w_len, k, k_len);
	if (rc == TW_OK && opc != NULL)
		rc = tw_keywrap_wrap_ctx(&st->kek, w->opc_w, sizeof(w->opc_w), &w->opc_w_len, opc,
					 opc_len);
	if (rc == TW_OK) {
		uint64_t g;

		rc = store_random(&g, sizeof(g));
		w->gen = (sqlite3_int64)(g >> 1);
	}
	return rc;
}

/*
 * A replace keeps C.1 (no SQN twice) with the keys it may keep: the old
 * row (SEQ up to max(seq_he, sqn_reserved) with an IND of ob bits, so
 * every SQN it issued is below (hi + 1) << ob) sets a floor under the new
 * SEQ_HE (IND of nb bits): the next SQN, (SEQ_HE + 1) << nb, must be at
 * least that bound. Raising SEQ_HE is harmless to a new card too (C.2.2
 * accepts any SEQ within Δ of what it has seen). TW_OK with *seq_he
 * raised if needed; TW_ERR_IO. A row this code cannot read sets no floor
 * (a replace is how an operator repairs it).
 */
static int replace_floor(sqlite3_stmt *q, const char *imsi,
			 unsigned nb, sqlite3_int64 *seq_he)
{
	int rc;

	sqlite3_bind_text(q, 1, imsi, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		sqlite3_int64 a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
		int ob = sqlite3_column_int(q, 2);
		uint64_t hi = (uint64_t)(a > b ? a : b), bound, need;

		if (a >= 0 && b >= 0 && ob >= 0 && ob <= TW_SQN_IND_BITS_MAX &&
		    hi <= seq_limit((unsigned)ob)) {
			bound = (hi + 1) << ob; /* <= 2^48 */
			need = ((bound + ((uint64_t)1 << nb) - 1) >> nb) - 1;
			if (need > seq_limit(nb))
				need = seq_limit(nb); /* exhausted: TW_ERR_RANGE, no reuse */
			if ((uint64_t)*seq_he < need)
				*seq_he = (sqlite3_int64)need;
		}
		rc = TW_OK;
	} else {
		rc = rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc;
}

static void sub_invalidate(struct tw_store *st, const char *imsi)
{
	size_t len;
	struct sub_rec *r;

	if (!imsi_ok(imsi, &len))
		return;
	r = rec_cached(st, imsi, len);
	if (r != NULL) {
		rec_kill(st, r);
		pthread_mutex_unlock(&r->lock);
	}
}

int tw_store_sub_put_many(struct tw_store *st, const struct tw_subscriber *s, size_t n,
			  bool replace, size_t *bad)
{
	sqlite3_stmt *q = NULL, *q_old = NULL;
	struct row w;
	size_t i = 0;
	int rc;

	if (bad != NULL)
		*bad = 0;
	if (st == NULL || (s == NULL && n > 0))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_IO;
	store_db_lock_writer(st);
	rc = sqlite3_prepare_v2(st->db,
				/* a replace keeps the disabled flag (new keys do not
				 * re-enable a subscriber) */
				replace ? "INSERT OR REPLACE INTO subscriber (imsi, alg, k, opc, amf,"
					  " mac_bits, res_bits, ck_bits, ik_bits, iterations,"
					  " ind_bits, seq_he, sqn_reserved, gen, disabled) VALUES"
					  " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13,"
					  " COALESCE((SELECT disabled FROM subscriber WHERE imsi = ?1), 0))"
					: "INSERT INTO subscriber (imsi, alg, k, opc, amf,"
					  " mac_bits, res_bits, ck_bits, ik_bits, iterations,"
					  " ind_bits, seq_he, sqn_reserved, gen) VALUES"
					  " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13)",
				-1, &q, NULL);
	if (rc == SQLITE_OK && replace)
		rc = sqlite3_prepare_v2(st->db,
					"SELECT seq_he, sqn_reserved, ind_bits FROM subscriber"
					" WHERE imsi = ?1", -1, &q_old, NULL);
	rc = rc == SQLITE_OK ? store_begin(st) : TW_ERR_IO;
	for (i = 0; rc == TW_OK && i < n; i++) {
		rc = sub_to_row(st, &s[i], &w);
		if (rc == TW_OK && replace)
			rc = replace_floor(q_old, s[i].imsi, (unsigned)w.ind_bits, &w.seq_he);
		if (rc != TW_OK)
			break;
		/* every bind is checked: a text or blob bind that fails (out of
		 * memory) leaves the parameter NULL, and a row with a NULL IMSI
		 * would be inserted; SQLITE_STATIC: the values outlive the step */
		const struct {
			int col;
			int64_t v;
		} num[] = { { 2, w.alg },       { 6, w.mac_bits },   { 7, w.res_bits },
			    { 8, w.ck_bits },   { 9, w.ik_bits },    { 10, w.iterations },
			    { 11, w.ind_bits }, { 12, w.seq_he },    { 13, w.gen } };
		int b = sqlite3_bind_text(q, 1, s[i].imsi, -1, SQLITE_STATIC);

		if (b == SQLITE_OK)
			b = sqlite3_bind_blob(q, 3, w.k_w, (int)w.k_w_len, SQLITE_STATIC);
		if (b == SQLITE_OK)
			b = w.opc_w_len != 0 ? sqlite3_bind_blob(q, 4, w.opc_w, (int)w.opc_w_len,
								 SQLITE_STATIC)
					     : sqlite3_bind_null(q, 4);
		if (b == SQLITE_OK)
			b = sqlite3_bind_blob(q, 5, s[i].amf, 2, SQLITE_STATIC);
		for (size_t k = 0; b == SQLITE_OK && k < sizeof(num) / sizeof(num[0]); k++)
			b = sqlite3_bind_int64(q, num[k].col, num[k].v);
		if (b != SQLITE_OK) {
			sqlite3_clear_bindings(q);
			rc = store_sqlite_err(b);
			break;
		}
		rc = run(q);
		sqlite3_clear_bindings(q);
		if (rc != TW_OK)
			break;
	}
	if (rc == TW_OK) {
		i = n;
		rc = store_commit(st);
	}
	if (rc != TW_OK)
		store_rollback(st);
	sqlite3_finalize(q);
	sqlite3_finalize(q_old);
	pthread_mutex_unlock(&st->db_lock);
	tw_wipe(&w, sizeof(w));
	if (rc != TW_OK) {
		if (bad != NULL)
			*bad = i;
		return store_io(st, rc);
	}
	/* a loaded record still has the old keys and SQN: drop it; one loaded
	 * from the old row concurrently is checked again (epoch) */
	atomic_fetch_add(&st->epoch, 1);
	for (i = 0; i < n; i++)
		sub_invalidate(st, s[i].imsi);
	return TW_OK;
}

int tw_store_sub_put(struct tw_store *st, const struct tw_subscriber *s, bool replace)
{
	if (s == NULL)
		return TW_ERR_INVAL;
	return tw_store_sub_put_many(st, s, 1, replace, NULL);
}

int tw_store_sub_del(struct tw_store *st, const char *imsi)
{
	sqlite3_stmt *q = NULL;
	struct sub_rec *r;
	size_t len;
	int rc;

	if (st == NULL || !imsi_ok(imsi, &len))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_IO;
	r = rec_cached(st, imsi, len); /* locked: no vector meanwhile */
	/* no write-behind round between the rows' deletion and forgetting the
	 * pseudonyms in memory (it would write them back) */
	pthread_mutex_lock(&st->id.flush_lock);
	store_db_lock_writer(st);
	rc = store_begin(st);
	if (rc == TW_OK) {
		rc = sqlite3_prepare_v2(st->db, "DELETE FROM subscriber WHERE imsi = ?1", -1, &q,
					NULL) == SQLITE_OK ? TW_OK : TW_ERR_IO;
		if (rc == TW_OK) {
			sqlite3_bind_text(q, 1, imsi, (int)len, SQLITE_STATIC);
			rc = step_done(q);
			if (rc == TW_OK && sqlite3_changes(st->db) == 0)
				rc = TW_ERR_NOTFOUND;
		}
		sqlite3_finalize(q);
		q = NULL;
	}
	/* its pseudonyms and re-auth ids go too */
	if (rc == TW_OK) {
		rc = sqlite3_prepare_v2(st->db, "DELETE FROM ident WHERE k = ?1", -1, &q,
					NULL) == SQLITE_OK ? TW_OK : TW_ERR_IO;
		if (rc == TW_OK) {
			sqlite3_bind_int64(q, 1, store_ident_row_key(imsi, len));
			rc = step_done(q);
		}
		sqlite3_finalize(q);
	}
	if (rc == TW_OK)
		rc = store_commit(st);
	if (rc != TW_OK)
		store_rollback(st);
	if (rc == TW_OK)
		atomic_fetch_add(&st->epoch, 1); /* a concurrent load rechecks */
	pthread_mutex_unlock(&st->db_lock);
	if (rc == TW_OK)
		store_ident_forget_imsi(st, imsi, len);
	pthread_mutex_unlock(&st->id.flush_lock);
	if (r != NULL) {
		if (rc == TW_OK)
			rec_kill(st, r);
		pthread_mutex_unlock(&r->lock);
	}
	return store_io(st, rc);
}

int tw_store_sub_set_disabled(struct tw_store *st, const char *imsi, bool disabled)
{
	sqlite3_stmt *q = NULL;
	struct sub_rec *r;
	uint64_t g = 0;
	size_t len;
	int rc;

	if (st == NULL || !imsi_ok(imsi, &len))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_IO;
	rc = store_random(&g, sizeof(g));
	if (rc != TW_OK)
		return rc;
	r = rec_cached(st, imsi, len); /* locked: no vector meanwhile */
	store_db_lock_writer(st);
	rc = store_begin(st);
	if (rc == TW_OK) {
		/* a new generation: every process's copy of the row is stale
		 * (rec_check) and loaded again, with the flag */
		rc = sqlite3_prepare_v2(st->db,
					"UPDATE subscriber SET disabled = ?2, gen = ?3 WHERE imsi = ?1",
					-1, &q, NULL) == SQLITE_OK ? TW_OK : TW_ERR_IO;
		if (rc == TW_OK) {
			sqlite3_bind_text(q, 1, imsi, (int)len, SQLITE_STATIC);
			sqlite3_bind_int(q, 2, disabled ? 1 : 0);
			sqlite3_bind_int64(q, 3, (sqlite3_int64)(g >> 1));
			rc = step_done(q);
			if (rc == TW_OK && sqlite3_changes(st->db) == 0)
				rc = TW_ERR_NOTFOUND;
		}
		sqlite3_finalize(q);
	}
	if (rc == TW_OK)
		rc = store_commit(st);
	if (rc != TW_OK)
		store_rollback(st);
	if (rc == TW_OK)
		atomic_fetch_add(&st->epoch, 1); /* a concurrent load rechecks */
	pthread_mutex_unlock(&st->db_lock);
	if (r != NULL) {
		if (rc == TW_OK)
			rec_kill(st, r); /* loaded again at its next use */
		pthread_mutex_unlock(&r->lock);
	}
	return store_io(st, rc);
}

static void rec_info(const struct sub_rec *r, struct tw_store_sub_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->imsi, r->imsi, r->imsi_len + 1);
	info->alg = r->alg;
	memcpy(info->amf, r->amf, 2);
	info->seq_he = r->sqn.seq_he;
	info->sqn_reserved = r->reserved;
	info->ind_bits = r->sqn.ind_bits;
	info->disabled = r->disabled;
}

_Static_assert(offsetof(struct sub_rec, hash) > offsetof(struct sub_rec, lock) &&
		       offsetof(struct sub_rec, hash) > offsetof(struct sub_rec, pins) &&
		       offsetof(struct sub_rec, hash) > offsetof(struct sub_rec, next) &&
		       offsetof(struct sub_rec, hash) > offsetof(struct sub_rec, grave_next) &&
		       offsetof(struct sub_rec, hash) > offsetof(struct sub_rec, ahead_done),
	       "the fields under a record's lock start at hash (rec_snapshot)");

/* A subscriber as this process knows it: the loaded record when there is
 * one (its SEQ_HE is current), else the row. */
static int rec_snapshot(struct tw_store *st, const char *imsi, struct sub_rec *out)
{
	struct sub_rec *r;
	size_t len;
	int rc;

	if (st == NULL || !imsi_ok(imsi, &len))
		return TW_ERR_INVAL;
	r = rec_cached(st, imsi, len);
	if (r != NULL) {
		/* the fields under r's lock only: the chain links and pins
		 * before them belong to other locks (and atomics) */
		const size_t off = offsetof(struct sub_rec, hash);

		memset(out, 0, off);
		memcpy((char *)out + off, (const char *)r + off, sizeof(*out) - off);
		pthread_mutex_unlock(&r->lock);
		return TW_OK;
	}
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&st->rd_lock);
	rc = row_read(st, st->rq_load, imsi, len, out);
	pthread_mutex_unlock(&st->rd_lock);
	if (rc == TW_ERR_DECODE)
		rc = store_io(st, TW_ERR_IO);
	if (rc == TW_OK) {
		/* the slots do not matter for showing; keep the record valid */
		out->sqn.ind_first = 0;
		out->sqn.ind_count = 1;
		out->sqn.ind_next = 0;
	}
	return rc;
}

int store_sub_gen(struct tw_store *st, const char *imsi, int64_t *gen)
{
	struct sub_rec *r;
	size_t len;
	int rc;

	*gen = -1;
	if (st == NULL || !imsi_ok(imsi, &len))
		return TW_ERR_INVAL;
	r = rec_cached(st, imsi, len);
	if (r != NULL) {
		*gen = r->gen;
		pthread_mutex_unlock(&r->lock);
		return TW_OK;
	}
	rc = row_gen(st, imsi, len, gen);
	if (rc != TW_OK)
		*gen = -1;
	return rc;
}

int tw_store_sub_info(struct tw_store *st, const char *imsi, struct tw_store_sub_info *info)
{
	struct sub_rec r;
	int rc;

	if (info == NULL)
		return TW_ERR_INVAL;
	memset(info, 0, sizeof(*info));
	rc = rec_snapshot(st, imsi, &r);
	if (rc == TW_OK)
		rec_info(&r, info);
	tw_wipe(&r, sizeof(r));
	return rc;
}

int tw_store_sub_get(struct tw_store *st, const char *imsi, struct tw_subscriber *s)
{
	struct sub_rec r;
	int rc;

	if (s == NULL)
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	rc = rec_snapshot(st, imsi, &r);
	if (rc == TW_OK) {
		rc = rec_unwrap(st, &r, s);
		if (rc == TW_ERR_DECODE)
			rc = TW_ERR_AUTH; /* unwrapped to nonsense: not our KEK's */
	}
	tw_wipe(&r, sizeof(r));
	return rc;
}

int tw_store_sub_list(struct tw_store *st,
		      int (*cb)(void *arg, const struct tw_store_sub_info *i), void *arg)
{
	sqlite3_stmt *q = NULL;
	struct tw_store_sub_info info;
	struct sub_rec r;
	int rc;

	if (st == NULL || cb == NULL)
		return TW_ERR_INVAL;
	pthread_mutex_lock(&st->db_lock);
	{
		char sql[512];

		snprintf(sql, sizeof(sql), "SELECT %s, imsi FROM subscriber ORDER BY imsi", cols);
		rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
	}
	if (rc != SQLITE_OK) {
		rc = TW_ERR_IO;
		goto out;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const unsigned char *imsi = sqlite3_column_text(q, 14);
		size_t len = 0;

		memset(&r, 0, sizeof(r));
		if (!imsi_ok((const char *)imsi, &len) || row_to_rec(q, &r) != TW_OK) {
			rc = TW_ERR_IO;
			goto out;
		}
		memcpy(r.imsi, imsi, len);
		r.imsi_len = len;
		rec_info(&r, &info);
		rc = cb(arg, &info);
		if (rc != 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? TW_OK : TW_ERR_IO;
out:
	sqlite3_finalize(q);
	pthread_mutex_unlock(&st->db_lock);
	tw_wipe(&r, sizeof(r));
	return rc == TW_ERR_IO ? store_io(st, rc) : rc;
}

int tw_store_check(struct tw_store *st, void (*say)(void *arg, const char *text), void *arg,
		   unsigned *problems, unsigned *subscribers, unsigned *ident_rows)
{
	sqlite3_stmt *q = NULL;
	struct tw_subscriber s;
	struct sub_rec r;
	char sql[512], msg[256];
	unsigned nprob = 0, nsub = 0, nident = 0;
	int rc;

	if (st == NULL || say == NULL || problems == NULL)
		return TW_ERR_INVAL;
#define PROBLEM(...)                                          \
	do {                                                  \
		snprintf(msg, sizeof(msg), __VA_ARGS__);      \
		say(arg, msg);                                \
		nprob++;                                      \
	} while (0)
	pthread_mutex_lock(&st->db_lock);
	rc = sqlite3_prepare_v2(st->db, "PRAGMA integrity_check", -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);

		if (t == NULL || strcmp(t, "ok") != 0)
			PROBLEM("sqlite: %s", t != NULL ? t : "(null)");
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE) {
		PROBLEM("sqlite: integrity check did not run: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
		goto out;
	}
	sqlite3_finalize(q);
	q = NULL;
	rc = sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE name = 'schema_version'",
				-1, &q, NULL);
	if (rc != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW ||
	    sqlite3_column_int(q, 0) != STORE_SCHEMA_VERSION)
		PROBLEM("meta: schema version is not %d", STORE_SCHEMA_VERSION);
	sqlite3_finalize(q);
	q = NULL;

	snprintf(sql, sizeof(sql), "SELECT %s, imsi FROM subscriber ORDER BY imsi", cols);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *imsi = (const char *)sqlite3_column_text(q, 14);
		size_t len = 0;
		int e;

		nsub++;
		rc = SQLITE_OK;
		memset(&r, 0, sizeof(r));
		if (!imsi_ok(imsi, &len)) {
			PROBLEM("subscriber row %u: the IMSI is not 5..15 digits", nsub);
			continue;
		}
		if (row_to_rec(q, &r) != TW_OK) {
			PROBLEM("subscriber %.5s...: bad columns (algorithm, key lengths, AMF, IND "
				"length or SEQ out of range)", imsi);
			continue;
		}
		memcpy(r.imsi, imsi, len);
		r.imsi_len = len;
		if (r.sqn.seq_he > r.reserved)
			PROBLEM("subscriber %.5s...: SEQ_HE %llu above the durable mark %llu", imsi,
				(unsigned long long)r.sqn.seq_he, (unsigned long long)r.reserved);
		e = rec_unwrap(st, &r, &s);
		tw_wipe(&s, sizeof(s));
		if (e != TW_OK)
			PROBLEM("subscriber %.5s...: keys do not unwrap under this KEK (%s)", imsi,
				tw_strerror(e));
	}
	tw_wipe(&r, sizeof(r));
	if (rc != SQLITE_DONE) {
		PROBLEM("subscriber table not readable: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
		goto out;
	}
	sqlite3_finalize(q);
	q = NULL;

	rc = sqlite3_prepare_v2(st->db, "SELECT k, v FROM ident ORDER BY k", -1, &q, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		char why[160];
		const uint8_t *b = sqlite3_column_blob(q, 1);

		nident++;
		rc = SQLITE_OK;
		if (sqlite3_column_type(q, 0) != SQLITE_INTEGER ||
		    store_ident_check_row(st, sqlite3_column_int64(q, 0), b,
					  (size_t)sqlite3_column_bytes(q, 1), why, sizeof(why)) != TW_OK)
			PROBLEM("%s", why[0] ? why : "identity row with a key that is not an integer");
	}
	if (rc != SQLITE_DONE) {
		PROBLEM("identity table not readable: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
		goto out;
	}
	rc = TW_OK;
out:
#undef PROBLEM
	sqlite3_finalize(q);
	pthread_mutex_unlock(&st->db_lock);
	*problems = nprob;
	if (subscribers != NULL)
		*subscribers = nsub;
	if (ident_rows != NULL)
		*ident_rows = nident;
	return rc;
}

/* ---- the authentication path -------------------------------------------- */

/* One vector from the locked record r. TW_ERR_STATE: the row changed under
 * us (caller reloads). */
static int vector_locked(struct tw_store *st, struct sub_rec *r, bool aka_prime,
			 const uint8_t rand_[static 16], struct tw_eap_aka_vec *out)
{
	struct tw_subscriber s;
	int rc;

	if (alg_is_comp128(r->alg))
		return TW_ERR_UNSUPPORTED;
	/* SEQ_HE + 1 must be at or below the durable mark before it is used:
	 * the block the write-behind thread is making durable right now
	 * (waited for: reserving here too would skip that block), a block it
	 * made durable ahead (not contiguous with this one, so kept aside),
	 * else a reservation here */
	if (r->sqn.seq_he >= r->reserved && r->ahead_busy) {
		atomic_fetch_add(&st->n_ahead_waits, 1);
		/* held while its lock is released in the wait: not reused */
		atomic_fetch_add(&r->pins, 1);
		while (r->ahead_busy && !r->dead)
			pthread_cond_wait(&r->ahead_done, &r->lock);
		atomic_fetch_sub(&r->pins, 1);
		if (r->dead)
			return TW_ERR_STATE;
	}
	if (r->sqn.seq_he >= r->reserved && r->ahead_mark > r->reserved) {
		if (r->sqn.seq_he < r->ahead_base)
			r->sqn.seq_he = r->ahead_base;
		r->reserved = r->ahead_mark;
		r->ahead_mark = 0;
	}
	if (r->sqn.seq_he >= r->reserved) {
		rc = reserve(st, r, r->sqn.seq_he);
		if (rc != TW_OK)
			return rc;
	}
	rc = rec_unwrap(st, r, &s);
	if (rc != TW_OK)
		return store_io(st, TW_ERR_IO); /* rows whose keys do not unwrap */
	/* §6.3.2 through the verified local vector source; s->sqn advances */
	rc = aka_prime ? tw_vecsrc_aka_prime(&s, rand_, out) : tw_vecsrc_aka(&s, rand_, out);
	if (rc == TW_OK) {
		if (s.sqn.seq_he > r->reserved) { /* cannot happen: checked above */
			tw_wipe(out, sizeof(*out));
			rc = TW_ERR_STATE;
		} else {
			r->sqn = s.sqn;
			atomic_fetch_add(&st->n_vectors, 1);
			ahead_queue(st, r); /* 3/4 used: the next block, in the background */
		}
	}
	tw_wipe(&s, sizeof(s));
	return rc;
}

/* Tries of a vector or resync whose record turned out stale (TW_ERR_STATE:
 * its row was replaced or deleted meanwhile, by `twag subscriber` or
 * another process): each loads the row again. Only a row changed again
 * within each try exhausts them (then TW_ERR_IO). */
enum { STORE_STATE_TRIES = 4 };

int tw_store_aka_vector(struct tw_store *st, const char *imsi, bool aka_prime,
			const uint8_t rand_[static 16], struct tw_eap_aka_vec *out)
{
	struct sub_rec *r;
	int rc = TW_ERR_STATE;

	if (out == NULL)
		return TW_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	if (st == NULL || imsi == NULL || rand_ == NULL)
		return TW_ERR_INVAL;
	for (int attempt = 0; attempt < STORE_STATE_TRIES && rc == TW_ERR_STATE; attempt++) {
		rc = rec_get_enabled(st, imsi, &r);
		if (rc != TW_OK)
			break;
		rc = vector_locked(st, r, aka_prime, rand_, out);
		if (rc == TW_ERR_STATE)
			rec_kill(st, r);
		pthread_mutex_unlock(&r->lock);
	}
	if (rc == TW_ERR_STATE)
		rc = store_io(st, TW_ERR_IO);
	if (rc != TW_OK)
		tw_wipe(out, sizeof(*out));
	return rc;
}

/* ---- vectors in a batch: one commit for the reservations they need ------ */

enum {
	STORE_CLAIMS = 64, /* reservations per batch commit */
	STORE_AGAIN = 1,   /* internal: the request waits for the second pass */
	STORE_CLAIMED = 2, /* internal: ... and its reservation is claimed */
};

struct resv_claim {
	struct sub_rec *r;
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t imsi_len;
	int64_t gen;
	unsigned ind_bits;
	uint64_t snap;             /* r->reserved when claimed */
	uint64_t base;             /* SEQ_HE then: the block starts at or above */
	uint64_t start, next;
	size_t req;                /* the request that claimed it */
	int rc;
};

/*
 * The first pass over one request, r locked: the vector when r's block
 * covers it (or a block reserved ahead does). When it needs a reservation
 * first: STORE_CLAIMED, the reservation claimed into *c as the
 * write-behind's reserve-ahead claims one (ahead_busy: a vector for r on
 * another thread waits for it instead of reserving too); STORE_AGAIN,
 * left to the second pass, when c is NULL or one is under way for r.
 */
static int vector_or_claim(struct tw_store *st, struct sub_rec *r, bool aka_prime,
			   const uint8_t rand_[static 16], struct tw_eap_aka_vec *out,
			   struct resv_claim *c)
{
	if (alg_is_comp128(r->alg))
		return TW_ERR_UNSUPPORTED;
	if (r->sqn.seq_he >= r->reserved && r->ahead_busy)
		return STORE_AGAIN; /* not waited for here: it may be this batch's */
	if (r->sqn.seq_he >= r->reserved && r->ahead_mark > r->reserved)
		return vector_locked(st, r, aka_prime, rand_, out); /* takes it */
	if (r->sqn.seq_he < r->reserved)
		return vector_locked(st, r, aka_prime, rand_, out);
	if (c == NULL || r->dead || st->read_only)
		return STORE_AGAIN;
	c->r = r;
	memcpy(c->imsi, r->imsi, r->imsi_len + 1);
	c->imsi_len = r->imsi_len;
	c->gen = r->gen;
	c->ind_bits = r->sqn.ind_bits;
	c->snap = r->reserved;
	c->base = r->sqn.seq_he;
	c->rc = TW_ERR_IO;
	/* busy only: ahead_queued means "in st->ahead_q", where r may still
	 * be (queued, not reached yet), and the write-behind thread will
	 * look at it there: it must stay set until that thread clears it,
	 * or r could be reused under it (rec_recycle) */
	r->ahead_busy = true;
	return STORE_CLAIMED;
}

/* The claims' reservations in one write transaction, one commit (FULL):
 * each c->rc as reserve_row's; all TW_ERR_IO if the commit fails (their
 * requests then fail: no vector without a durable SQN). */
static void reserve_claims(struct tw_store *st, struct resv_claim *c, size_t n)
{
	size_t done = 0;
	int rc = reserve_lock(st, true);

	if (rc == TW_OK) {
		rc = store_begin(st);
		for (size_t i = 0; i < n && rc == TW_OK; i++) {
			c[i].rc = reserve_row(st, c[i].imsi, c[i].imsi_len, c[i].gen, c[i].ind_bits,
					      c[i].base, &c[i].start, &c[i].next);
			if (c[i].rc == TW_OK)
				done++;
			else if (c[i].rc != TW_ERR_STATE && c[i].rc != TW_ERR_RANGE)
				rc = c[i].rc;
		}
		if (rc == TW_OK)
			rc = store_commit(st);
		if (rc != TW_OK)
			store_rollback(st);
		pthread_mutex_unlock(&st->db_lock);
	}
	if (rc != TW_OK) {
		for (size_t i = 0; i < n; i++)
			c[i].rc = TW_ERR_IO;
		(void)store_io(st, TW_ERR_IO);
		return;
	}
	atomic_fetch_add(&st->n_reservations, done);
	atomic_fetch_add(&st->n_resv_batched, done);
	atomic_fetch_add(&st->n_resv_commits, 1);
}

void tw_store_aka_vectors(struct tw_store *st, struct tw_store_aka_req *req, size_t n)
{
	struct resv_claim c[STORE_CLAIMS];
	size_t nc = 0;

	for (size_t i = 0; i < n; i++) {
		struct tw_store_aka_req *q = &req[i];
		struct sub_rec *r;

		if (q->out == NULL) {
			q->rc = TW_ERR_INVAL;
			continue;
		}
		memset(q->out, 0, sizeof(*q->out));
		if (st == NULL || q->imsi == NULL || q->rand_ == NULL) {
			q->rc = TW_ERR_INVAL;
			continue;
		}
		q->rc = rec_get_enabled(st, q->imsi, &r);
		if (q->rc != TW_OK)
			continue;
		q->rc = vector_or_claim(st, r, q->aka_prime, q->rand_, q->out,
				       nc < STORE_CLAIMS ? &c[nc] : NULL);
		if (q->rc == STORE_CLAIMED) {
			q->rc = STORE_AGAIN;
			c[nc++].req = i;
		}
		if (q->rc == TW_ERR_STATE) {
			rec_kill(st, r);
			q->rc = STORE_AGAIN; /* again from the start, one by one */
		}
		pthread_mutex_unlock(&r->lock);
	}
	if (nc > 0)
		reserve_claims(st, c, nc);
	/* a block made durable here is taken as one reserved ahead is: by
	 * the record's next vector once its own block is used up, and only
	 * if nothing reserved for it meanwhile (else skipped SEQs, never
	 * reused ones) */
	for (size_t k = 0; k < nc; k++) {
		struct sub_rec *r = c[k].r;

		/* a commit that failed is not tried again one by one (as one
		 * vector's reservation is tried once) */
		if (c[k].rc == TW_ERR_IO)
			req[c[k].req].rc = TW_ERR_IO;
		pthread_mutex_lock(&r->lock);
		r->ahead_busy = false;
		pthread_cond_broadcast(&r->ahead_done);
		if (c[k].rc == TW_OK && !r->dead && r->gen == c[k].gen && r->reserved == c[k].snap &&
		    c[k].next > r->reserved) {
			r->ahead_base = c[k].start;
			r->ahead_mark = c[k].next;
		}
		pthread_mutex_unlock(&r->lock);
		tw_wipe(&c[k], sizeof(c[k]));
	}
	for (size_t i = 0; i < n; i++) {
		struct tw_store_aka_req *q = &req[i];

		if (q->rc == STORE_AGAIN)
			q->rc = tw_store_aka_vector(st, q->imsi, q->aka_prime, q->rand_, q->out);
		else if (q->rc != TW_OK && q->out != NULL)
			tw_wipe(q->out, sizeof(*q->out));
	}
}

/*
 * Two budgets per window (store.h), so that an AUTS anyone can send with
 * the IMSI (a bad MAC-S, or a captured genuine AUTS replayed: MAC-S has no
 * freshness of its own) cannot use up the one a genuine resync needs:
 * resync_count counts only resyncs that verified and moved SEQ_HE,
 * resync_bad the attempts that moved nothing. MAC-S is checked before the
 * budget is chosen (the cost of a vector); only when both are used up is
 * an AUTS refused unchecked.
 */
static int resync_locked(struct tw_store *st, struct sub_rec *r, const uint8_t rand_[static 16],
			 const uint8_t auts[static 14])
{
	struct tw_subscriber s;
	uint8_t sqn_ms[6];
	uint64_t seq_ms;
	int64_t now = mono_ns() / 1000000000;
	int rc;

	if (alg_is_comp128(r->alg))
		return TW_ERR_UNSUPPORTED;
	if (now - r->resync_start >= (int64_t)st->resync_window) {
		r->resync_start = now;
		r->resync_count = 0;
		r->resync_bad = 0;
	}
	if (r->resync_count >= st->resync_max && r->resync_bad >= st->resync_bad_max) {
		atomic_fetch_add(&st->n_resyncs_refused, 1);
		return TW_ERR_RANGE;
	}
	rc = rec_unwrap(st, r, &s);
	if (rc != TW_OK)
		return store_io(st, TW_ERR_IO);
	/* §6.3.5: SQN_MS = (SQN_MS ^ AK*) ^ f5*(RAND), MAC-S = f1*(SQN_MS,
	 * RAND, AMF* = 0) checked in constant time (aka.c) */
	rc = tw_aka_auts_verify(&s.keys.aka, rand_, auts, sqn_ms);
	if (rc != TW_OK) {
		if (rc != TW_ERR_AUTH)
			goto out;
		atomic_fetch_add(&st->n_resyncs_bad_mac, 1);
		if (r->resync_bad >= st->resync_bad_max) {
			atomic_fetch_add(&st->n_resyncs_refused, 1);
			rc = TW_ERR_RANGE;
		} else {
			r->resync_bad++;
		}
		goto out;
	}
	/* C.3 resets SEQ_HE to SEQ_MS; here never backwards (max), since going
	 * back would reissue SQNs already sent in vectors */
	seq_ms = tw_load_be48(sqn_ms) >> r->sqn.ind_bits;
	if (seq_ms > r->sqn.seq_he) {
		if (r->resync_count >= st->resync_max) {
			atomic_fetch_add(&st->n_resyncs_refused, 1);
			rc = TW_ERR_RANGE;
			goto out;
		}
		if (seq_ms >= r->reserved) /* beyond the mark: durable first */
			rc = reserve(st, r, seq_ms);
		else /* at or below the durable mark: a restart is past it already */
			r->sqn.seq_he = seq_ms;
		if (rc == TW_OK)
			r->resync_count++;
	} else {
		/* verified, but SEQ_MS is not ahead (stale or replayed): nothing
		 * to do, and the genuine budget is not touched */
		if (r->resync_bad >= st->resync_bad_max) {
			atomic_fetch_add(&st->n_resyncs_refused, 1);
			rc = TW_ERR_RANGE;
			goto out;
		}
		r->resync_bad++;
		atomic_fetch_add(&st->n_resyncs_stale, 1);
	}
	if (rc == TW_OK)
		atomic_fetch_add(&st->n_resyncs, 1);
out:
	tw_wipe(&s, sizeof(s));
	tw_wipe(sqn_ms, sizeof(sqn_ms));
	return rc;
}

int tw_store_resync(struct tw_store *st, const char *imsi, const uint8_t rand_[static 16],
		    const uint8_t auts[static 14])
{
	struct sub_rec *r;
	int rc = TW_ERR_STATE;

	if (st == NULL || imsi == NULL || rand_ == NULL || auts == NULL)
		return TW_ERR_INVAL;
	for (int attempt = 0; attempt < STORE_STATE_TRIES && rc == TW_ERR_STATE; attempt++) {
		rc = rec_get_enabled(st, imsi, &r);
		if (rc != TW_OK)
			break;
		rc = resync_locked(st, r, rand_, auts);
		if (rc == TW_ERR_STATE)
			rec_kill(st, r);
		pthread_mutex_unlock(&r->lock);
	}
	if (rc == TW_ERR_STATE)
		rc = store_io(st, TW_ERR_IO);
	return rc;
}

int tw_store_sim_triplets(struct tw_store *st, const char *imsi, const uint8_t rands[][16],
			  unsigned n, struct tw_eap_sim_triplet *out)
{
	struct tw_subscriber s;
	struct sub_rec *r;
	int rc;

	if (out == NULL || n < 1 || n > 3)
		return TW_ERR_INVAL;
	memset(out, 0, n * sizeof(*out));
	if (st == NULL || imsi == NULL || rands == NULL)
		return TW_ERR_INVAL;
	rc = rec_get_enabled(st, imsi, &r);
	if (rc != TW_OK)
		goto out;
	rc = rec_unwrap(st, r, &s);
	pthread_mutex_unlock(&r->lock);
	if (rc != TW_OK) {
		rc = store_io(st, TW_ERR_IO);
		goto out;
	}
	/* COMP128, or c2/c3 for a USIM subscriber (§6.8.1.2): no SQN used */
	rc = tw_vecsrc_sim_many(&s, rands, n, out); /* out zeroed on error */
	tw_wipe(&s, sizeof(s));
	if (rc == TW_OK)
		atomic_fetch_add(&st->n_triplets, n);
out:
	return rc;
}

void tw_store_get_stats(struct tw_store *st, struct tw_store_stats *o)
{
	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	if (st == NULL)
		return;
	o->vectors = atomic_load(&st->n_vectors);
	o->triplets = atomic_load(&st->n_triplets);
	o->resyncs = atomic_load(&st->n_resyncs);
	o->resyncs_refused = atomic_load(&st->n_resyncs_refused);
	o->resyncs_bad_mac = atomic_load(&st->n_resyncs_bad_mac);
	o->reservations = atomic_load(&st->n_reservations);
	o->io_errors = atomic_load(&st->n_io_errors);
	o->loaded = atomic_load(&st->n_loaded);
	o->ident_rounds = atomic_load(&st->id.n_rounds);
	o->ident_written = atomic_load(&st->id.n_written);
	o->ident_write_ns = atomic_load(&st->id.n_ns);
	o->ident_write_max_ns = atomic_load(&st->id.n_max_ns);
	o->checkpoint_ns = atomic_load(&st->id.n_ckpt_ns);
	o->ident_yields = atomic_load(&st->id.n_yields);
	o->ident_full = atomic_load(&st->id.n_full);
	o->ident_row_writes = atomic_load(&st->id.n_row_writes);
	o->reservations_sync = atomic_load(&st->n_resv_sync);
	o->reservations_ahead = atomic_load(&st->n_resv_ahead);
	o->reservations_batched = atomic_load(&st->n_resv_batched);
	o->reservation_batch_commits = atomic_load(&st->n_resv_commits);
	o->reservations_waited = atomic_load(&st->n_ahead_waits);
	o->resyncs_stale = atomic_load(&st->n_resyncs_stale);
	o->evicted = atomic_load(&st->n_evicted);
	o->recycled = atomic_load(&st->n_recycled);
}

const struct tw_eap_identity_ops *tw_store_identity_ops(struct tw_store *st)
{
	return st != NULL ? &st->ops : NULL;
}
