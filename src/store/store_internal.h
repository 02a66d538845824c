/*
 * twag — the subscriber store's internals, shared by store.c (open/close,
 * subscribers, vectors), kek.c (key-encryption key) and ident.c
 * (pseudonyms and re-auth state). Not a public header.
 *
 * Locks, always taken in this order (never the other way round):
 *   rec->lock  ->  st->db_lock  ->  st->id.lock  ->  a stripe / st->all_lock
 * A stripe lock and all_lock are leaves: nothing is taken while they are
 * held. rec->lock guards one subscriber's SQN state and keys; db_lock
 * serialises the one SQLite connection and its prepared statements.
 */
#ifndef TWAG_STORE_INTERNAL_H
#define TWAG_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/eap_method.h"
#include "twag/store.h"
#include "twag/vecsrc.h"

enum {
	STORE_SCHEMA_VERSION = 1,
	STORE_STRIPES = 64,           /* mutexes over the subscriber buckets */
	STORE_WRAP_MAX = 40,          /* RFC 3394 wrap of a 32-octet key */
	STORE_BUSY_MS_DEFAULT = 200,  /* "a short busy timeout" */
	STORE_FLUSH_MS = 100,         /* identity write-behind period */
	STORE_IDENT_CACHE_DEFAULT = 16384,
	STORE_REAUTH_TTL_DEFAULT = 86400,
	/* re-auth state: fixed serialisation (ident.c), RFC 5649-wrapped */
	STORE_REAUTH_SER_LEN = 129,
	STORE_REAUTH_WRAP_LEN = 144,  /* 8 + 129 rounded up to 8 */
	STORE_PSEUDONYMS_KEPT = 2,    /* per IMSI: the newest and the one before */
};

/* One subscriber in memory. Keys stay wrapped here; they are unwrapped per
 * vector into a stack struct that is wiped before returning. */
struct sub_rec {
	struct sub_rec *next;      /* bucket chain, under the stripe lock */
	struct sub_rec *all_next;  /* every record made, freed at close (all_lock) */
	pthread_mutex_t lock;
	/* ---- under lock ---- */
	bool dead;                 /* deleted or replaced: look up again */
	bool linked;               /* still in its bucket chain */
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t imsi_len;
	enum tw_sub_alg alg;
	uint8_t k_w[STORE_WRAP_MAX];   /* K / Ki, RFC 3394-wrapped */
	size_t k_w_len;
	uint8_t opc_w[STORE_WRAP_MAX]; /* OPc / TOPc, RFC 3394-wrapped (0: none) */
	size_t opc_w_len;
	uint16_t mac_bits, res_bits, ck_bits, ik_bits, iterations; /* TUAK */
	uint8_t amf[2];
	struct tw_sqn_he sqn;      /* SEQ_HE as issued */
	uint64_t reserved;         /* the durable high-water mark (SEQ) */
	int64_t gen;               /* row generation: a replace changes it */
	int64_t resync_start;      /* rate-limit window start (monotonic s) */
	unsigned resync_count;
	uint64_t epoch;            /* st->epoch when last known to match its row */
};

/* One pseudonym or re-auth id in the bounded identity table (ident.c). */
struct ident_ent {
	int32_t next;              /* bucket chain / free list (-1: end) */
	uint8_t kind;              /* 0 free, IDENT_PSEUDONYM, IDENT_REAUTH */
	uint8_t dirty;             /* not yet written to the database */
	uint8_t tomb;              /* removed: delete the row, then free */
	uint8_t key_len;
	uint32_t ver;              /* bumped on every change (flush matching) */
	int64_t created;           /* wall clock s */
	uint8_t key[TW_EAP_ID_MAX];
	union {
		struct {
			char imsi[TW_IMSI_MAX_LEN + 1];
			uint8_t imsi_len;
		} p;
		uint8_t wrapped[STORE_REAUTH_WRAP_LEN];
	} v;
};

enum { IDENT_PSEUDONYM = 1, IDENT_REAUTH = 2 };

struct ident_flushed {
	int32_t idx;
	uint32_t ver;
};

struct ident_table {
	pthread_mutex_t lock;
	struct ident_ent *ent;     /* cap entries, allocated at open */
	int32_t *bucket;           /* nbucket heads */
	struct ident_flushed *flushed; /* cap: what one flush wrote */
	uint32_t cap, nbucket;     /* nbucket a power of 2 */
	int32_t free_head;
	uint32_t used, ndirty, hand;
	/* the write-behind thread */
	pthread_t thread;
	bool thread_started, stop;
	pthread_cond_t cond;       /* with lock: wakes the thread */
	int64_t last_expiry;       /* wall s of the last DB expiry sweep */
};

struct tw_store {
	sqlite3 *db;
	pthread_mutex_t db_lock;
	struct tw_aes_ctx kek;     /* expanded once; wiped at close */
	uint64_t hash_seed;

	unsigned sqn_block, resync_max, resync_window;
	unsigned ind_bits, ind_first, ind_count;
	unsigned reauth_ttl;
	bool read_only;

	/* subscriber cache */
	struct sub_rec **bucket;
	size_t nbucket;            /* power of 2 */
	pthread_mutex_t stripe[STORE_STRIPES];
	struct sub_rec *all;
	pthread_mutex_t all_lock;

	/* prepared statements (under db_lock) */
	sqlite3_stmt *q_load, *q_resv_sel, *q_resv_upd, *q_close_upd;
	sqlite3_stmt *q_begin, *q_commit, *q_rollback;
	sqlite3_stmt *q_data_version;
	/* commits by other connections (store_poll_changes): data_version as
	 * last seen (db_lock), and an epoch bumped on every change seen or
	 * made by a put/del here; a cached record whose epoch differs checks
	 * its row's gen before it is used again */
	sqlite3_int64 data_version;
	_Atomic uint64_t epoch;

	struct ident_table id;
	struct {
		sqlite3_stmt *p_get, *p_put, *p_del, *p_prune;
		sqlite3_stmt *r_get, *r_put, *r_del, *r_expire;
	} id_q;                    /* ident.c's statements (under db_lock) */
	struct tw_eap_identity_ops ops;

	_Atomic uint64_t n_vectors, n_triplets, n_resyncs, n_resyncs_refused,
		n_resyncs_bad_mac, n_reservations, n_io_errors, n_lat_ns, n_lat_count,
		n_loaded;
};

/* SQLite result -> TW_ERR_* (busy, locked, read-only, full, I/O: TW_ERR_IO). */
int store_sqlite_err(int rc);

/* The transaction helpers (db_lock held). BEGIN IMMEDIATE takes the write
 * lock up front, so a locked database fails here, before any change. */
TW_MUST_CHECK int store_begin(struct tw_store *st);
TW_MUST_CHECK int store_commit(struct tw_store *st);
void store_rollback(struct tw_store *st);

/* Counts an I/O error (stats) and returns err. */
int store_io(struct tw_store *st, int err);

/* FNV-1a over data, keyed by the store's random seed. */
uint64_t store_hash(const struct tw_store *st, uint8_t tag, const void *data, size_t len);

/* ident.c: set up / tear down the identity table and its thread. */
TW_MUST_CHECK int store_ident_init(struct tw_store *st, unsigned cap, char *errbuf,
				   size_t errbuf_len);
void store_ident_stop(struct tw_store *st);     /* stops the thread, final flush */
void store_ident_free(struct tw_store *st);
/* One write-behind round now (also used when the table is full of dirty
 * entries). Returns TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int store_ident_flush(struct tw_store *st);

/* Drops the pseudonyms of a deleted subscriber from memory (its rows are
 * deleted with it; re-auth ids are refused by reauth_lookup). */
void store_ident_forget_imsi(struct tw_store *st, const char *imsi, size_t imsi_len);

/* Notices commits of other connections (PRAGMA data_version): called by
 * the write-behind thread every STORE_FLUSH_MS. Takes db_lock. */
void store_poll_changes(struct tw_store *st);

/* The generation of imsi's row (changed by every replace): re-auth state
 * is bound to it (ident.c). TW_OK, TW_ERR_NOTFOUND, TW_ERR_IO, TW_ERR_INVAL. */
TW_MUST_CHECK int store_sub_gen(struct tw_store *st, const char *imsi, int64_t *gen);

/* getrandom(2), all of len. TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int store_random(void *out, size_t len);

#endif
