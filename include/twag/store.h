/*
 * twag — the subscriber store: IMSI -> wrapped keys, algorithm, AMF, SQN
 * state (3GPP TS 33.102 V17.0.0 Annex C), pseudonyms and fast re-auth
 * state. Backend: SQLite 3 in WAL mode, one file, created on first open.
 *
 * This layer does I/O and allocates (at open, and when a subscriber is
 * first loaded); it is what the daemon and the `twag subscriber` CLI use.
 *
 * Keys at rest: Ki / OPc / TOPc (and the re-auth keys) are stored only
 * wrapped under a key-encryption key (RFC 3394 / RFC 5649 AES key wrap,
 * KEK of 256 bits). The KEK never goes into the database: it comes from a
 * file (--kek-file), the TWAG_KEK environment variable (64 hex digits), or
 * a file created beside the database on first use (PATH.kek, mode 0600).
 *
 * SQN durability (TS 33.102 C.1: SQNs are never reused): the database keeps
 * per subscriber a high-water mark sqn_reserved. The store issues SEQ
 * values only up to it; when it runs out it durably raises the mark by a
 * block (synchronous=FULL commit) BEFORE the vector leaves. After a crash,
 * SEQ_HE restarts from the mark, skipping at most one block per crash:
 * never an SQN issued twice, even after kill -9 at any point. A clean close
 * writes back the exact SEQ_HE. If the mark cannot be made durable (store
 * read-only, disk full, locked), no vector is issued: TW_ERR_IO.
 * Reserve-ahead: once a loaded subscriber has used 3/4 of its block, the
 * write-behind thread raises the mark by the next block in the background,
 * so the vector path normally never waits for that fsync; when it has
 * not landed in time the vector path reserves synchronously as before (a
 * SEQ above the durable mark is never issued). A subscriber's first
 * vector since open always waits for one; tw_store_aka_vectors makes
 * those of a batch of vectors in one commit.
 *
 * Thread safety: after open, every function may be called from several
 * threads at once (per-subscriber locking; one writer connection).
 *
 * Other processes on the same file (the CLI, a second daemon): a
 * subscriber they delete or replace stops being served from this store's
 * memory within about 100 ms of their commit (not for a read-only store).
 */
#ifndef TWAG_STORE_H
#define TWAG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/eap_method.h"
#include "twag/err.h"
#include "twag/vecsrc.h"

enum {
	TW_STORE_KEK_LEN = 32,
	TW_STORE_SQN_BLOCK_DEFAULT = 1000,  /* SEQs reserved per durable write */
	TW_STORE_RESYNC_MAX_DEFAULT = 3,    /* resyncs per subscriber ... */
	TW_STORE_RESYNC_WINDOW_DEFAULT = 60, /* ... per this many seconds */
};

struct tw_store;

struct tw_store_opts {
	const char *path;        /* database file (created if missing) */
	const uint8_t *kek;      /* TW_STORE_KEK_LEN octets (copied) */
	unsigned sqn_block;      /* 0: TW_STORE_SQN_BLOCK_DEFAULT */
	unsigned resync_max;     /* 0: default; per resync_window seconds */
	unsigned resync_window;  /* 0: default */
	/* this gateway's IND slots (Annex C.1.2): ind_bits 0..6, slots
	 * ind_first .. ind_first+ind_count-1; all 0: 5 bits, slot 0, 1 slot */
	unsigned ind_bits, ind_first, ind_count;
	bool read_only;          /* open for reading only (CLI show/list) */
	/* added by the store helper (0 = default for each): */
	unsigned busy_timeout_ms; /* wait for a locked database this long before
				   * TW_ERR_IO (0: 200 ms; the CLI uses more) */
	unsigned ident_cache;    /* pseudonym + re-auth entries in memory (0: 65536) */
	unsigned reauth_ttl;     /* s a re-auth id lives unused (0: 86400) */
	/* ident_volatile: s a pseudonym resolves after it was minted (0: 30
	 * days; minute resolution, at least 60) */
	unsigned pseudonym_ttl;
	unsigned sweep_ms;       /* ms between sweeps of expired re-auth
				  * state from the database (0: 60000) */
	/* ms between two write-behind rounds of identity rows (0: 1000;
	 * sooner when a quarter of ident_cache, at most 16384 entries, is
	 * pending; the thread wakes every 100 ms, so a period ends at the
	 * first wake-up after it). Longer rounds update each B-tree page for more rows
	 * at once; a power cut loses up to this much (those phones then
	 * authenticate fully once, with an identity round). */
	unsigned ident_flush_ms;
	/* AUTS that do not move SEQ_HE (bad MAC-S, or a valid but stale or
	 * replayed one) per resync_window s, a budget of their own (0: 10) */
	unsigned resync_bad_max;
	/* subscribers held in memory at most (0: 4194304, about 1.5 GB);
	 * beyond it the least recently used are dropped (and loaded again
	 * from their row when next needed: an AKA subscriber then restarts
	 * from its mark, as after a crash, skipping the rest of its block) */
	unsigned sub_cache;
	/* identity privacy state in memory only: pseudonyms are not stored
	 * (a pseudonym minted here is resolved by decrypting it: it carries
	 * its IMSI), fast re-authentication contexts live in the bounded
	 * table (ident_cache) and are never written to the database, so
	 * they are lost on restart or eviction (the peer then authenticates
	 * fully, with its pseudonym). No database write per authentication
	 * (a subscriber not in the record cache is still read). */
	bool ident_volatile;
};

/*
 * Loads the KEK: from kek_file when given; else from the TWAG_KEK
 * environment variable (64 hex digits); else from "<db_path>.kek", created
 * (32 random octets as 64 hex digits, mode 0600, O_EXCL) when missing and
 * create is true and the database does not exist yet (a missing KEK of an
 * existing database is TW_ERR_IO: a new one would not open its keys). A file must hold exactly 64 hex digits (a trailing
 * newline allowed) and must not be readable by group/others. Returns TW_OK,
 * TW_ERR_IO (cannot read/create; the message in errbuf), TW_ERR_DECODE
 * (bad contents), TW_ERR_INVAL (bad permissions).
 */
TW_MUST_CHECK int tw_store_kek_load(const char *kek_file, const char *db_path,
				    bool create, uint8_t kek[static 32],
				    char *errbuf, size_t errbuf_len);

/* Opens (creating the schema on first use, WAL mode). Returns TW_OK,
 * TW_ERR_IO (with a message in errbuf), TW_ERR_NOMEM, TW_ERR_INVAL. A
 * database created under another KEK is refused (TW_ERR_AUTH): a check
 * value wrapped under the KEK is kept in the meta table. */
TW_MUST_CHECK int tw_store_open(struct tw_store **st, const struct tw_store_opts *o,
				char *errbuf, size_t errbuf_len);

/*
 * Commits the memory of the identity table now (a server calls it once
 * after opening, before any traffic): the table fills as pseudonyms and re-auth ids are
 * stored, and a long-running server fills it whole (--identity-cache
 * entries of about 500 octets, and their index), so without this its
 * pages are faulted in, 2 MiB zeroed at a time with huge pages, on the
 * packet path during the first minutes. TW_OK, TW_ERR_NOMEM (the memory
 * could not be committed: a start-up error rather than a later kill) or
 * TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_store_populate(struct tw_store *st);

/* Writes back the exact SEQ_HE of every loaded subscriber, flushes pending
 * identity state, closes, wipes and frees. NULL is ignored. */
void tw_store_close(struct tw_store *st);

/* ---- provisioning ------------------------------------------------------ */

/* What can be shown without keys. */
struct tw_store_sub_info {
	char imsi[TW_IMSI_MAX_LEN + 1];
	enum tw_sub_alg alg;
	uint8_t amf[2];
	uint64_t seq_he;        /* last SEQ issued (as far as the store knows) */
	uint64_t sqn_reserved;  /* durable high-water mark */
	unsigned ind_bits;
	bool disabled;          /* tw_store_sub_set_disabled */
};

/* Adds (or with replace, replaces) a subscriber: keys wrapped under the
 * KEK; SQN state from s->sqn (seq_he; reserved = seq_he), except that a
 * replace never takes SEQ_HE below what the old row may have issued (C.1:
 * no SQN twice; the next SQN is above all of them, whatever the IND
 * lengths). Returns TW_OK, TW_ERR_STATE (exists and !replace), TW_ERR_IO,
 * TW_ERR_INVAL. */
TW_MUST_CHECK int tw_store_sub_put(struct tw_store *st, const struct tw_subscriber *s,
				   bool replace);

/* Added: tw_store_sub_put() for n subscribers in ONE transaction (all or
 * nothing; CSV import). On failure *bad (if not NULL) is the index of the
 * record at fault (or n when the commit itself failed). Same returns. */
TW_MUST_CHECK int tw_store_sub_put_many(struct tw_store *st, const struct tw_subscriber *s,
					size_t n, bool replace, size_t *bad);

/* TW_OK or TW_ERR_NOTFOUND / TW_ERR_IO. */
TW_MUST_CHECK int tw_store_sub_del(struct tw_store *st, const char *imsi);

/*
 * Disables (or enables again) a subscriber: a disabled one gets no vector,
 * triplet or resync (TW_ERR_DISABLED), in this process at once and in the
 * others that use the file within their poll of its changes (the row's
 * generation changes, as for a replace); its SQN state and keys stay.
 * Schema 5 (older stores gain the column when opened for writing). TW_OK,
 * TW_ERR_NOTFOUND, TW_ERR_IO, TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_store_sub_set_disabled(struct tw_store *st, const char *imsi,
					    bool disabled);

/* Info without keys. TW_OK or TW_ERR_NOTFOUND / TW_ERR_IO. */
TW_MUST_CHECK int tw_store_sub_info(struct tw_store *st, const char *imsi,
				    struct tw_store_sub_info *info);

/* The whole record with keys unwrapped (for `show --keys`; wipe s after).
 * TW_ERR_AUTH when the wrapped keys do not unwrap under this KEK. */
TW_MUST_CHECK int tw_store_sub_get(struct tw_store *st, const char *imsi,
				   struct tw_subscriber *s);

/* Calls cb for every subscriber in IMSI order; a non-zero cb return stops
 * and is returned. cb runs with the database lock held: it must not call
 * back into the store. The SQN values are the database's (a subscriber
 * loaded by this process may be further on: tw_store_sub_info has those). */
TW_MUST_CHECK int tw_store_sub_list(struct tw_store *st,
				    int (*cb)(void *arg, const struct tw_store_sub_info *i),
				    void *arg);

/*
 * An integrity check a user can run on a store (`twag store check`), also
 * after a crash: SQLite's own (PRAGMA integrity_check: pages, indexes,
 * free list), the schema version, then every subscriber row (a known
 * algorithm, key and OPc/TOPc wraps that unwrap under this KEK to the
 * right lengths, AMF, IND length, SEQ_HE and the durable mark in range
 * and SEQ_HE <= the mark) and every identity row (decodes, names an IMSI,
 * its ids minted for it, its re-auth states open under the KEK). say(arg,
 * text) gets one line per problem (IMSIs cut to 5 digits); *problems their
 * count, *subscribers and *ident_rows what was read. TW_OK (problems or
 * none), TW_ERR_IO when the database cannot be read at all.
 */
TW_MUST_CHECK int tw_store_check(struct tw_store *st, void (*say)(void *arg, const char *text),
				 void *arg, unsigned *problems, unsigned *subscribers,
				 unsigned *ident_rows);

/* ---- the authentication path ------------------------------------------ */

/*
 * One EAP-AKA (aka_prime false) or EAP-AKA' (true: AMF separation bit set)
 * vector for imsi with RAND rand_ (tw_vecsrc_aka / tw_vecsrc_aka_prime),
 * the SQN durable first (see above). Returns TW_OK; TW_ERR_NOTFOUND
 * (unknown IMSI); TW_ERR_UNSUPPORTED (a COMP128 subscriber); TW_ERR_IO (no
 * durable SQN: no vector); TW_ERR_RANGE (SEQ exhausted). out zeroed on
 * error.
 */
TW_MUST_CHECK int tw_store_aka_vector(struct tw_store *st, const char *imsi,
				      bool aka_prime, const uint8_t rand_[static 16],
				      struct tw_eap_aka_vec *out);

/* One request of tw_store_aka_vectors. */
struct tw_store_aka_req {
	const char *imsi;
	bool aka_prime;
	const uint8_t *rand_;          /* 16 octets */
	struct tw_eap_aka_vec *out;
	int rc;                        /* set: as tw_store_aka_vector's */
};

/*
 * n vectors, each as tw_store_aka_vector (the same results, in req->rc),
 * except that the reservations they need on the caller's thread (a
 * subscriber's first vector since the store opened, or a block used up
 * before the next was reserved ahead) are made in ONE durable commit for
 * the batch instead of one each: after a restart, a batch of first
 * attaches costs one fsync. Every vector's SQN is durable before it is
 * returned, as there.
 */
void tw_store_aka_vectors(struct tw_store *st, struct tw_store_aka_req *req, size_t n);

/*
 * AUTS resynchronisation (TS 33.102 §6.3.5, C.3) for the challenge with
 * RAND rand_: MAC-S verified (constant time), then SEQ_HE = max(SEQ_HE,
 * SEQ_MS) made durable (never backwards: no SQN is issued twice).
 * Rate-limited per subscriber, with two budgets per resync_window s so
 * that someone who only claims the IMSI cannot use up the genuine one:
 * resync_max resyncs that verified and moved SEQ_HE; resync_bad_max
 * attempts that did not (bad MAC-S; a verified AUTS whose SEQ_MS is not
 * ahead, e.g. a replay: TW_OK, nothing changes). Beyond either budget,
 * TW_ERR_RANGE and nothing changes. Returns TW_OK, TW_ERR_AUTH (bad MAC-S,
 * SQN untouched), TW_ERR_RANGE, TW_ERR_NOTFOUND, TW_ERR_IO.
 */
TW_MUST_CHECK int tw_store_resync(struct tw_store *st, const char *imsi,
				  const uint8_t rand_[static 16],
				  const uint8_t auts[static 14]);

/* n (1..3) GSM triplets for the RANDs given (tw_vecsrc_sim). TW_OK,
 * TW_ERR_NOTFOUND, TW_ERR_UNSUPPORTED, TW_ERR_INVAL. */
TW_MUST_CHECK int tw_store_sim_triplets(struct tw_store *st, const char *imsi,
					const uint8_t rands[][16], unsigned n,
					struct tw_eap_sim_triplet *out);

/*
 * The identity-privacy callbacks of the EAP engines (eap_method.h) over
 * this store: pseudonyms and re-auth state in a bounded in-memory table,
 * written behind to SQLite (re-auth keys wrapped under the KEK) and looked
 * up there on a miss; random octets from OpenSSL's per-thread DRBG,
 * buffered per thread. Per
 * IMSI the newest two pseudonyms and the newest two re-auth ids are kept
 * (older ones go with the write-behind round after). Valid until close.
 */
const struct tw_eap_identity_ops *tw_store_identity_ops(struct tw_store *st);

/* Counters for metrics. */
struct tw_store_stats {
	uint64_t vectors, triplets, resyncs, resyncs_refused, resyncs_bad_mac;
	uint64_t reservations;          /* durable high-water writes (both below) */
	uint64_t io_errors;
	uint64_t loaded;                /* subscribers in memory */
	/* added: the identity write-behind (one transaction per round) */
	uint64_t ident_rounds;          /* rounds committed */
	uint64_t ident_written;         /* entries they wrote */
	uint64_t ident_write_ns;        /* time in them (writing lock held) */
	uint64_t ident_write_max_ns;    /* the longest round */
	uint64_t checkpoint_ns;         /* WAL checkpoints (no lock held) */
	uint64_t ident_yields;          /* rounds split to let an SQN reservation in */
	uint64_t ident_full;            /* stores that found the table full and
					 * waited for a round (should stay 0) */
	uint64_t ident_row_writes;      /* row writes of those entries (a row's
					 * entries of one round are one write) */
	/* added: reserve-ahead and the resync budgets */
	uint64_t reservations_sync;     /* made on the vector path (waited for) */
	uint64_t reservations_ahead;    /* made by the write-behind thread */
	uint64_t reservations_waited;   /* vectors that waited for one of those
					 * already under way (instead of making
					 * their own and skipping its block) */
	uint64_t resyncs_stale;         /* verified AUTS that moved nothing (in resyncs) */
	/* added: tw_store_aka_vectors */
	uint64_t reservations_batched;  /* made for a batch of vectors (waited for) */
	uint64_t reservation_batch_commits; /* the commits (fsyncs) those took */
	/* added: the bounded subscriber cache */
	uint64_t evicted;               /* dropped to stay within sub_cache */
	uint64_t recycled;              /* records of dropped, deleted or
					 * replaced subscribers used again */
};
void tw_store_get_stats(struct tw_store *st, struct tw_store_stats *out);

#endif
