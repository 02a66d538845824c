/*
 * twag — the subscriber store's internals, shared by store.c (open/close,
 * subscribers, vectors), kek.c (key-encryption key) and ident.c
 * (pseudonyms and re-auth state). Not a public header.
 *
 * Locks, always taken in this order (never the other way round):
 *   rec->lock  ->  st->id.flush_lock  ->  st->db_lock  ->  st->id.lock
 *   ->  a stripe / st->all_lock / st->auts_lock
 * A stripe lock, all_lock, auts_lock and st->rd_lock are leaves: nothing is taken
 * while they are held, except that a stripe's holder may TRY a record's
 * lock (rec_cached, rec_evict: never waiting for it). rec->lock guards one subscriber's SQN state and
 * keys; db_lock serialises the writing SQLite connection (st->db) and its
 * prepared statements; rd_lock the reading connection (st->rd) that the
 * packet path's look-ups use, so that they never wait for a write-behind
 * transaction; flush_lock makes one write-behind round at a time.
 */
#ifndef TWAG_STORE_INTERNAL_H
#define TWAG_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>

/* sqlite3_bind_pointer (3.20), UPSERT (3.24), SQLITE_DIRECTONLY (3.30):
 * ident.c's write-behind; Debian 12 has 3.40 */
#if SQLITE_VERSION_NUMBER < 3030000
#error "twag's store needs SQLite 3.30 or later"
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/hmac.h"
#include "twag/eap_method.h"
#include "twag/store.h"
#include "twag/vecsrc.h"

enum {
	/* 3: pseudonyms and re-auth ids in one row per IMSI (table ident,
	 * no index but its key); the ids carry the IMSI encrypted (ident.c).
	 * 4: that row keyed by an integer made from the IMSI, its slots one
	 * blob (ident.c row_enc). A version 3 file is migrated when opened
	 * for writing, its rows carried over; a version 1 or 2 file too, its
	 * ids not (those peers authenticate fully once). An older version is
	 * refused when opened read-only */
	STORE_SCHEMA_VERSION = 5,
	STORE_ID_BODY_LEN = 26,       /* base32 characters of an encrypted id */
	STORE_STRIPES = 64,           /* mutexes over the subscriber buckets */
	STORE_BUCKETS_MAX = 1 << 24,  /* subscriber buckets at most */
	STORE_SUB_CACHE_DEFAULT = 1 << 22, /* subscribers in memory at most */
	STORE_WRAP_MAX = 40,          /* RFC 3394 wrap of a 32-octet key */
	STORE_BUSY_MS_DEFAULT = 200,  /* "a short busy timeout" */
	STORE_FLUSH_MS = 100,         /* the write-behind thread's period (SQN
				       * reserve-ahead, changes by others) */
	STORE_IDENT_FLUSH_MS_DEFAULT = 1000, /* identity rows: a round this
				       * often ... */
	STORE_FLUSH_BATCH = 16384,    /* ... or once this many entries (at most
				       * a quarter of the table) are pending */
	STORE_SWEEP_ROWS = 1024,      /* rows a sweep of expired re-auth state looks at */
	EXPIRY_SWEEP_MS_DEFAULT = 60000, /* between two such sweeps */
	STORE_CKPT_PAGES = 2048,      /* WAL frames that make the flusher checkpoint */
	STORE_CACHE_KIB = 16384,      /* page cache of the writing connection */
	/* ~440 octets each, touched as used: room for the write-behind to be
	 * more than a second behind at 20,000 attaches/s (2 entries each)
	 * before a store waits for it (ident.c put) */
	STORE_IDENT_CACHE_DEFAULT = 65536,
	STORE_REAUTH_TTL_DEFAULT = 86400,
	STORE_PSEUDONYM_TTL_DEFAULT = 30 * 86400,
	/* re-auth state: fixed serialisation (ident.c), sealed:
	 * IV (16) | AES-256-CTR ciphertext | HMAC-SHA-256 tag (32) */
	STORE_REAUTH_SER_LEN = 129,
	STORE_REAUTH_WRAP_LEN = 16 + 129 + 32,
	STORE_PSEUDONYMS_KEPT = 2,    /* per IMSI: the newest and the one before */
	STORE_REAUTH_KEPT = 2,        /* likewise for re-auth ids */
	STORE_AHEAD_QUEUE = 1024,     /* subscribers waiting for a reserve-ahead */
	STORE_RESYNC_BAD_MAX_DEFAULT = 10, /* unverified AUTS per resync window */
};

/* One subscriber in memory. Keys stay wrapped here; they are unwrapped per
 * vector into a stack struct that is wiped before returning. */
struct sub_rec {
	struct sub_rec *next;      /* bucket chain, under the stripe lock */
	struct sub_rec *grave_next; /* the dead ones waiting for reuse (all_lock) */
	/* threads that hold a pointer to the record without its lock: found
	 * in its chain and waiting for the lock (rec_cached), or waiting for
	 * a reservation under way (vector_locked). A dead record is reused
	 * only when none does (rec_recycle). */
	_Atomic unsigned pins;
	pthread_mutex_t lock;
	/* with lock: the reservation under way has ended (ahead_busy). Its
	 * own words change in waiters without the lock: not copied with the
	 * fields below (rec_snapshot) */
	pthread_cond_t ahead_done;
	/* ---- under lock ---- */
	uint64_t hash;             /* store_hash 's' of imsi (set before linking) */
	bool dead;                 /* deleted, replaced or evicted: look up again */
	bool linked;               /* still in its bucket chain */
	bool used;                 /* looked up since the eviction hand passed */
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
	bool disabled;             /* refused at authentication (schema 5) */
	int64_t resync_start;      /* rate-limit window start (monotonic s) */
	unsigned resync_count;     /* resyncs that moved SEQ_HE (MAC-S verified) */
	unsigned resync_bad;       /* attempts that did not: bad MAC-S, stale */
	/* reserve-ahead (store.c): queued for the write-behind thread; a
	 * block it made durable that does not continue this one (another
	 * process reserved in between) waits here until the current one runs
	 * out (ahead_mark 0: none) */
	bool ahead_queued;         /* queued, or under way (then ahead_busy) */
	bool ahead_busy;           /* its commit is under way: wait (ahead_done) */
	uint64_t ahead_base, ahead_mark;
	uint64_t epoch;            /* st->epoch when last known to match its row */
};

/*
 * One pseudonym or re-auth id in the bounded identity table (ident.c): a
 * fixed array allocated at open, chained by index. Every entry is on
 * exactly one list: free, clean (in the database; the eviction order),
 * pending (changed since the last write-behind round took its batch), or
 * the batch being written. Which of the last three follows from its batch
 * number, so that taking the pending list for writing is O(1):
 *   batch == t->seq                  pending: changed in place
 *   t->durable < batch < t->seq      being written: read by the flusher
 *                                    without the lock, so never changed; a
 *                                    new change goes to a copy
 *   batch <= t->durable              clean: evictable
 * Its list links and its index home are apart from it, in t->link[i]
 * (struct ident_link): 12 octets an entry, so that walking a list,
 * evicting and unindexing touch that dense array and not the entries
 * (about 500 octets each, tens of megabytes: a cache miss each).
 */
struct ident_link {
	int32_t lprev, lnext;      /* the list it is on (-1: end), under t->lock */
	uint32_t home;             /* its index slot's home + 1 (0: not indexed) */
};

struct ident_ent {
	uint8_t kind;              /* 0 free, IDENT_PSEUDONYM, IDENT_REAUTH */
	uint8_t tomb;              /* removed: the row is deleted, then freed */
	uint8_t linked;            /* in the index (0: superseded by a copy) */
	uint8_t key_len;
	uint64_t batch;            /* see above; 0: clean (read from the
				    * database, or written by a split round) */
	int64_t created;           /* wall clock µs */
	uint8_t key[TW_EAP_ID_MAX];
	union ident_val {
		struct {
			char imsi[TW_IMSI_MAX_LEN + 1];
			uint8_t imsi_len;
		} p;
		struct {
			uint8_t wrapped[STORE_REAUTH_WRAP_LEN];
			/* in the clear beside it, like a pseudonym's: the
			 * newest STORE_REAUTH_KEPT per IMSI are kept */
			char imsi[TW_IMSI_MAX_LEN + 1];
			uint8_t imsi_len;
		} r;
	} v;
};

enum { IDENT_PSEUDONYM = 1, IDENT_REAUTH = 2 };

struct ident_list {
	int32_t head, tail;        /* -1: empty */
	uint32_t n;
};

struct ident_table {
	pthread_mutex_t lock;
	struct ident_ent *ent;     /* cap entries, allocated at open */
	struct ident_link *link;   /* cap links, one per entry */
	/* the index (ident.c): open addressing over nslots (a power of 2, at
	 * least 2 cap) slots (src/common/oa_index.h) */
	uint64_t *slots;
	uint32_t cap, nslots;
	uint32_t fresh;            /* entries [fresh, cap) never used yet */
	uint32_t flush_at;         /* pending entries that wake the flusher early */
	struct ident_list free, clean, pending;
	struct ident_list batch;   /* being written (and a failed round's, kept) */
	/* cap row keys, one per entry: a round's batch sorted by them
	 * (flusher only; NULL: not sorted) */
	int64_t *rowkey;
	uint64_t seq, durable;     /* batch numbers, see struct ident_ent */
	/* bumped when an entry whose row was deleted leaves memory: a row read
	 * from the database before that must not be cached (ident.c lookup) */
	uint64_t gone;
	/* the write-behind thread and its state (under flush_lock) */
	pthread_mutex_t flush_lock;
	pthread_t thread;
	bool thread_started, stop;
	pthread_cond_t cond;       /* with lock: wakes the thread */
	/* stores waiting for room in a full table (ident.c put): a round in
	 * progress commits what it has written so far and wakes them (room,
	 * with lock) instead of making them wait for the whole round;
	 * rounds_ended (under lock) tells them a round ended, room or not */
	pthread_cond_t room;
	_Atomic int room_waiters;
	uint64_t rounds_ended;
	bool rest_left;            /* a partial round left entries taken (lock) */
	int64_t last_expiry;       /* wall µs of the last DB expiry sweep */
	int64_t sweep_after;       /* the sweep goes on after this key (0: the start) */
	bool sweep_more;           /* the last sweep hit its bound */
	/* the ids a round pruned, packed one after another as kind, len,
	 * id (the round reads them back in order, after its commit);
	 * npruned: octets used */
	uint8_t *pruned;
	size_t npruned, pruned_cap;
	sqlite3 *ck;               /* checkpoint connection (flusher only) */
	/* ident_volatile only (ident.c track_imsi): per IMSI hash, the newest
	 * two re-auth contexts (entry and its creation stamp, which tells a
	 * reference to an entry since dropped or reused), so a third drops
	 * the oldest; n_imsi_slot a power of 2, NULL when not volatile */
	struct ident_imsi_slot {
		int32_t i[2];
		int64_t stamp[2];
	} *imsi_slot;
	uint32_t n_imsi_slot;
	/* counters (atomic: read by tw_store_get_stats) */
	_Atomic uint64_t n_rounds, n_written, n_ns, n_max_ns, n_ckpt_ns, n_full, n_yields;
	_Atomic uint64_t n_row_writes;
};

struct tw_store {
	sqlite3 *db;
	pthread_mutex_t db_lock;
	/* the reading connection (the packet path's look-ups; == db when the
	 * store is read-only) and its statements, under rd_lock */
	sqlite3 *rd;
	pthread_mutex_t rd_lock;
	sqlite3_stmt *rq_load, *rq_gen, *rq_i_get;
	/* db runs synchronous=FULL except inside a write-behind transaction
	 * (db_lock): false while it may not be FULL */
	bool sync_full;
	_Atomic int wal_frames;    /* WAL size after the last commit (wal hook) */
	_Atomic int db_waiters;    /* writers waiting for db_lock (store_db_lock_writer) */
	struct tw_aes_ctx kek;     /* expanded once; wiped at close */
	/* from the KEK (ident.c, schema 3): AES-128 of minted ids, AES-256-CTR
	 * of re-auth state and the HMAC-SHA-256 key of its tags */
	struct tw_aes_ctx id_key;
	struct tw_aes_ctx state_key;
	struct tw_hmac_sha256_ctx state_mac_key;
	/* octets 13..15 of a minted id (ident.c): a counter from a random
	 * start, so no two ids of one IMSI minted in one minute are equal;
	 * mint_gen the fork generation it was seeded in */
	_Atomic uint32_t mint_ctr;
	_Atomic unsigned mint_gen;
	uint64_t hash_key[2];      /* SipHash key (random per open) */

	unsigned sqn_block, resync_max, resync_window, resync_bad_max;
	unsigned ind_bits, ind_first, ind_count;
	unsigned reauth_ttl, sweep_ms, ident_flush_ms;
	unsigned pseudonym_ttl;     /* s, ident_volatile: a pseudonym resolves */
	bool read_only;
	bool ident_volatile;       /* identities in memory only (ident.c) */

	/* subscriber cache: a record's stripe is its hash's low bits
	 * (STORE_STRIPES divides nbucket), whatever nbucket is; bucket and
	 * nbucket are read under a stripe and changed (rec_grow) under all */
	struct sub_rec **bucket;
	size_t nbucket;            /* power of 2, at least 1024 */
	_Atomic size_t grow_at;    /* more linked records than this: grow */
	_Atomic bool growing;      /* a thread is growing it (rec_grow) */
	pthread_mutex_t stripe[STORE_STRIPES];
	pthread_mutex_t all_lock;
	/* AUTS budgets of records dropped from the cache while their resync
	 * window was open (store.c auts_save, auts_restore), by record hash
	 * in a direct-mapped array of n_auts_keep (a power of 2) slots; hash
	 * 0: empty. A reload takes them back, so dropping a record is no way
	 * round the rate limit; a slot taken over by another record loses
	 * the older (it takes about n_auts_keep resyncing subscribers) */
	pthread_mutex_t auts_lock;
	struct auts_keep {
		uint64_t hash;
		int64_t start;
		unsigned count, bad;
	} *auts_keep;
	uint32_t n_auts_keep;
	/* records come from chunks of STORE_REC_CHUNK (store.c rec_alloc, on
	 * huge pages like the other look-up tables: twag/mem.h), under
	 * all_lock; one never linked goes back to rec_spare, a dead one
	 * (rec_kill) to the graves, reused once no thread holds it */
	struct rec_chunk *chunks;
	size_t chunk_used;         /* records taken from chunks (the newest) */
	size_t n_made;             /* records taken from chunks (all of them) */
	struct sub_rec *rec_spare;
	struct sub_rec *grave_head, *grave_tail;
	size_t n_graves;
	/* at most this many records linked (opts.sub_cache): beyond it the
	 * eviction hand (a bucket index) drops one not looked up since it
	 * last passed (rec_evict) */
	size_t sub_cache;
	_Atomic size_t evict_hand;

	/* prepared statements (under db_lock) */
	sqlite3_stmt *q_resv_sel, *q_resv_upd, *q_close_upd;
	sqlite3_stmt *q_begin, *q_commit, *q_rollback;
	sqlite3_stmt *q_data_version;
	/* commits by other connections (store_poll_changes): data_version as
	 * last seen (db_lock), and an epoch bumped on every change seen or
	 * made by a put/del here; a cached record whose epoch differs checks
	 * its row's gen before it is used again */
	sqlite3_int64 data_version;
	_Atomic uint64_t epoch;

	struct ident_table id;
	/* reserve-ahead requests for the write-behind thread (under id.lock;
	 * a queued record has ahead_queued set, so it is not reused while
	 * it waits here: rec_recycle) */
	struct sub_rec *ahead_q[STORE_AHEAD_QUEUE];
	unsigned ahead_head, ahead_n;
	struct {
		sqlite3_stmt *get, *put, *merge, *merge_upd, *del, *sweep_sel;
	} id_q;                    /* ident.c's write statements (under db_lock) */
	struct tw_eap_identity_ops ops;

	_Atomic uint64_t n_vectors, n_triplets, n_resyncs, n_resyncs_refused,
		n_resyncs_bad_mac, n_resyncs_stale, n_reservations, n_resv_sync,
		n_resv_ahead, n_ahead_waits, n_io_errors, n_loaded, n_resv_batched, n_resv_commits,
		n_evicted, n_recycled;
};

/* For the tests (ident.c): every entry in the identity index is reachable
 * from its home slot and named by exactly one slot, and every slot names
 * an entry in the index. */
bool store_ident_index_sound(struct tw_store *st);

/* For the tests (store.c): every linked subscriber record is in the
 * bucket of its hash, no IMSI is linked twice, and as many are linked as
 * counted; *nbucket (if not NULL) is the bucket count. */
bool store_rec_index_sound(struct tw_store *st, size_t *nbucket);
/* Records taken from chunks so far (each one once, however often it was
 * reused), and dead ones waiting to be reused (tests). */
void store_rec_counts(struct tw_store *st, size_t *made, size_t *graves);

/* SQLite result -> TW_ERR_* (busy, locked, read-only, full, I/O: TW_ERR_IO). */
int store_sqlite_err(int rc);

/* The transaction helpers (db_lock held). BEGIN IMMEDIATE takes the write
 * lock up front, so a locked database fails here, before any change. */
TW_MUST_CHECK int store_begin(struct tw_store *st);
TW_MUST_CHECK int store_commit(struct tw_store *st);
void store_rollback(struct tw_store *st);

/* Takes db_lock for a write other than the write-behind's (an SQN
 * reservation on the packet path, provisioning): announced in db_waiters,
 * so that a write-behind round in progress commits what it has written so
 * far and lets it in (ident.c) instead of making it wait for the round. */
void store_db_lock_writer(struct tw_store *st);

/* Counts an I/O error (stats) and returns err. */
int store_io(struct tw_store *st, int err);

/* SipHash-1-3 of tag || data under the store's random key: bucket choice
 * is not predictable from outside. */
uint64_t store_hash(const struct tw_store *st, uint8_t tag, const void *data, size_t len);

/* ident.c: set up / tear down the identity table and its thread. */
TW_MUST_CHECK int store_ident_init(struct tw_store *st, unsigned cap, char *errbuf,
				   size_t errbuf_len);
void store_ident_stop(struct tw_store *st);     /* stops the thread, final flush */
void store_ident_free(struct tw_store *st);
/* st->id_key from the KEK (before store_ident_init). */
TW_MUST_CHECK int store_ident_key(struct tw_store *st, const uint8_t *kek, size_t kek_len);
/* The key of imsi's row in table ident (schema 4): its length times 10^15
 * plus its value; -1 when it is not 5 to 15 digits. */
int64_t store_ident_row_key(const char *imsi, size_t n);
/* Schema 3 -> 4 (store.c schema, in its transaction, after renaming the
 * old table to ident_3 and creating the new one): every row of ident_3
 * into ident, then ident_3 dropped. TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int store_ident_migrate_3(struct tw_store *st, char *errbuf, size_t errbuf_len);
/* tw_store_populate: the identity table's arrays committed. */
TW_MUST_CHECK int store_ident_populate(struct tw_store *st);
/* One write-behind round now (also used when the table is full of dirty
 * entries). Returns TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int store_ident_flush(struct tw_store *st);

/* Drops the pseudonyms of a deleted subscriber from memory (its rows are
 * deleted with it; re-auth ids are refused by reauth_lookup). The caller
 * holds st->id.flush_lock across the deletion and this call, so that no
 * write-behind round writes them back in between. */
void store_ident_forget_imsi(struct tw_store *st, const char *imsi, size_t imsi_len);

/* Reserve-ahead (store.c), for the write-behind thread: whether requests
 * are queued (id.lock held), and the work on them (no lock held). */
bool store_ahead_pending(const struct tw_store *st);
void store_ahead_run(struct tw_store *st);

/* Notices commits of other connections (PRAGMA data_version): called by
 * the write-behind thread every STORE_FLUSH_MS. Takes db_lock. */
void store_poll_changes(struct tw_store *st);

/* The generation of imsi's row (changed by every replace): re-auth state
 * is bound to it (ident.c). From the loaded record, else from the reading
 * connection. TW_OK, TW_ERR_NOTFOUND, TW_ERR_IO, TW_ERR_INVAL. */
TW_MUST_CHECK int store_sub_gen(struct tw_store *st, const char *imsi, int64_t *gen);

/* Prepares sql on connection c (persistent). TW_OK or TW_ERR_IO with a
 * message in errbuf. */
TW_MUST_CHECK int store_prepare(sqlite3 *c, sqlite3_stmt **q, const char *sql, char *errbuf,
				size_t errbuf_len);

/* tw_store_check of one row of table ident: it decodes, its key names an
 * IMSI, its ids were minted for that IMSI and its re-auth states open under
 * the KEK. TW_OK, or TW_ERR_DECODE / TW_ERR_AUTH with the reason in why
 * (IMSI cut to 5 digits). */
TW_MUST_CHECK int store_ident_check_row(struct tw_store *st, int64_t key, const uint8_t *b,
					size_t n, char *why, size_t why_len);
/* The calling thread's buffer of DRBG octets (ops->random): wipes what is
 * left of it; and, for tests, where its unused octets are and how many. */
void store_ident_random_wipe(void);
const uint8_t *store_ident_random_unused(size_t *len);
/* getrandom(2), all of len. TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int store_random(void *out, size_t len);

/* Writes a printf-style message into errbuf (kek.c); NULL/0 is ignored. */
void store_say(char *errbuf, size_t errbuf_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
