/*
 * twag — twagd's RADIUS accounting (RFC 2866, June 2000; RFC 2869, June
 * 2000, §5.1-§5.3 Gigawords and Event-Timestamp; RFC 5080, December 2007,
 * §2.2.2 duplicates): the session table the accounting thread keeps and
 * the parts of it that are unit-tested on their own (reading a request's
 * attributes into a record, the table, the masked user name).
 *
 * The table is bounded (allocated once at start-up, --acct-max-sessions
 * slots): a new session when it is full evicts the one updated longest
 * ago, counted. One writer (the accounting thread) and readers (the
 * metrics thread's /sessions) share it under one mutex, each hold short:
 * a reader copies a bounded chunk of sessions per hold.
 */
#ifndef TWAG_ACCT_H
#define TWAG_ACCT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/radius.h"
#include "twag/server.h"

enum {
	TW_ACCT_DEFAULT_PORT = 1813,          /* RFC 2866 §3 */
	TW_ACCT_DEFAULT_MAX_SESSIONS = 65536,
	TW_ACCT_MIN_SESSIONS = 16,
	TW_ACCT_MAX_SESSIONS = 1 << 22,
	TW_ACCT_DEFAULT_HISTORY_DAYS = 90,    /* ended sessions kept on disk */
	TW_ACCT_MAX_HISTORY_DAYS = 36500,
	TW_ACCT_ID_MAX = 128,                 /* Acct-Session-Id octets accepted */
	TW_ACCT_NAS_ID_MAX = 64,              /* NAS-Identifier octets accepted */
	TW_ACCT_STATION_MAX = 64,             /* Calling/Called-Station-Id kept */
	TW_ACCT_USER_MAX = 96,                /* masked User-Name text, NUL included */
	TW_ACCT_CLASS_MAX = 64,               /* Class octets kept (longer: not kept) */
};

/* What names the NAS of a session (RFC 2866 §5.13: NAS-IP-Address,
 * NAS-IPv6-Address or NAS-Identifier; the first present, in that order;
 * none: the client's address alone). */
enum tw_acct_nas_kind {
	TW_ACCT_NAS_CLIENT = 0,
	TW_ACCT_NAS_IPV4 = 1,
	TW_ACCT_NAS_IPV6 = 2,
	TW_ACCT_NAS_IDENT = 3,
};

/* A session's key: the client that reported it (its source address: a
 * client can never touch another's sessions), the NAS, the
 * Acct-Session-Id (RFC 2866 §5.5). */
struct tw_acct_key {
	struct tw_srv_addr client;
	uint8_t nas_kind;                 /* enum tw_acct_nas_kind */
	uint8_t nas_len;
	uint8_t nas[TW_ACCT_NAS_ID_MAX];
	uint8_t id_len;                   /* 0 only for Accounting-On/Off */
	uint8_t id[TW_ACCT_ID_MAX];
};

/* Which optional fields a record carries. */
enum {
	TW_ACCT_F_NAS_PORT = 1u << 0,
	TW_ACCT_F_FRAMED_IP = 1u << 1,
	TW_ACCT_F_SESSION_TIME = 1u << 2,
	TW_ACCT_F_TERMINATE = 1u << 3,
	TW_ACCT_F_IN_OCTETS = 1u << 4,
	TW_ACCT_F_OUT_OCTETS = 1u << 5,
	TW_ACCT_F_IN_PACKETS = 1u << 6,
	TW_ACCT_F_OUT_PACKETS = 1u << 7,
	TW_ACCT_F_USER = 1u << 8,
	TW_ACCT_F_CALLING = 1u << 9,
	TW_ACCT_F_CALLED = 1u << 10,
	TW_ACCT_F_CLASS = 1u << 11,
};

/* What one Accounting-Request reports (and what a session keeps). */
struct tw_acct_record {
	struct tw_acct_key key;
	uint32_t status;                  /* Acct-Status-Type (RFC 2866 §5.1) */
	uint32_t flags;                   /* TW_ACCT_F_* */
	char user[TW_ACCT_USER_MAX];      /* User-Name, masked (tw_acct_mask_user) */
	uint8_t calling_len, called_len;
	uint8_t calling[TW_ACCT_STATION_MAX], called[TW_ACCT_STATION_MAX];
	/* Class (RFC 2865 §5.25: the NAS echoes the Access-Accept's; twagd's
	 * links the session to its authentication, dynauth.c), when at most
	 * TW_ACCT_CLASS_MAX octets */
	uint8_t class_len;
	uint8_t cls[TW_ACCT_CLASS_MAX];
	uint32_t nas_port, session_time, terminate_cause;
	uint8_t framed_ip[4];
	/* RFC 2869 §5.1-§5.2: octets = Gigawords * 2^32 + Octets */
	uint64_t in_octets, out_octets;
	uint32_t in_packets, out_packets;
	uint64_t event_time;              /* Unix s: Event-Timestamp (RFC 2869
					   * §5.3), else now - Acct-Delay-Time */
};

/* A session in the table. */
struct tw_acct_session {
	struct tw_acct_record r;          /* the last report merged in */
	uint64_t start_time;              /* Unix s */
	uint64_t last_update;             /* Unix s (server clock) */
	uint32_t updates;                 /* requests merged in */
	uint32_t last_status;
	/* owned by the table */
	uint64_t hash;
	uint32_t hnext, prev, next;       /* hash chain; age list (least
					   * recently updated first) */
	bool used;
};

struct tw_acct_stats {
	uint64_t active, max, evicted, started, stopped, stops_unknown;
	uint64_t created_by_update;       /* Interim-Update/Stop before Start */
	uint64_t ended_by_nas;            /* ended by Accounting-On/-Off */
};

struct tw_acct_table {
	pthread_mutex_t lock;
	struct tw_acct_session *s;
	uint32_t cap, used;
	uint32_t free_head;
	uint32_t head, tail;              /* age list */
	uint32_t *buckets;
	uint32_t nbuckets;
	uint64_t hash_key[2];
	struct tw_acct_stats st;
};

/* What tw_acct_table_apply did. */
enum tw_acct_result {
	TW_ACCT_STARTED = 0,    /* a new session (Start) */
	TW_ACCT_RESTARTED,      /* Start of a session already live: merged */
	TW_ACCT_UPDATED,        /* Interim-Update of a live session */
	TW_ACCT_CREATED,        /* Interim-Update of an unknown session: created */
	TW_ACCT_STOPPED,        /* Stop: the session removed */
	TW_ACCT_STOP_UNKNOWN,   /* Stop of no live session: nothing kept */
	TW_ACCT_NAS_RESET,      /* Accounting-On/-Off: the NAS's sessions ended */
	TW_ACCT_IGNORED,        /* another Acct-Status-Type: acknowledged only */
};

/* Allocates cap (16..TW_ACCT_MAX_SESSIONS) sessions; seed: 16 random
 * octets (hash key). TW_OK, TW_ERR_INVAL, TW_ERR_NOMEM. */
TW_MUST_CHECK int tw_acct_table_init(struct tw_acct_table *t, uint32_t cap,
				     const uint8_t seed[static 16]);
void tw_acct_table_free(struct tw_acct_table *t);

/*
 * Reads an authenticated Accounting-Request into r: client is its source
 * address, now the Unix time. Every attribute used must have its RFC
 * length (4 octets for integers, 16 for NAS-IPv6-Address), Acct-Status-Type
 * is required, and Acct-Session-Id (1..TW_ACCT_ID_MAX octets) for Start,
 * Stop and Interim-Update; a NAS-Identifier is at most TW_ACCT_NAS_ID_MAX
 * octets. Returns TW_OK, TW_ERR_NOTFOUND (a required attribute missing),
 * TW_ERR_DECODE (a bad length) or TW_ERR_LENGTH (over a limit): each a
 * silent discard.
 */
TW_MUST_CHECK int tw_acct_record_parse(struct tw_acct_record *r, const struct tw_radius_pkt *p,
				       const struct tw_srv_addr *client, uint64_t now);

/* Applies a record (RFC 2866 §5.1): Start creates (or merges into) the
 * session, Interim-Update updates or creates it, Stop removes it,
 * Accounting-On/-Off end every session of that client and NAS. A new
 * session in a full table evicts the least recently updated one
 * (counted). *ended: sessions ended by On/Off. */
enum tw_acct_result tw_acct_table_apply(struct tw_acct_table *t, const struct tw_acct_record *r,
					uint64_t now, unsigned *ended);

/* What one apply changed, for a copy kept elsewhere (acct_db.c). */
struct tw_acct_change {
	bool have;                        /* s: the session as the request left
					   * it (Start, Interim-Update; for a
					   * Stop, merged, as it ended) */
	struct tw_acct_session s;
	bool evicted;                     /* a session went to make room */
	struct tw_acct_key evicted_key;
};

/* tw_acct_table_apply, telling ch (NULL: nothing) what changed. */
enum tw_acct_result tw_acct_table_apply_ex(struct tw_acct_table *t,
					   const struct tw_acct_record *r, uint64_t now,
					   unsigned *ended, struct tw_acct_change *ch);

/* Puts a session back as it was (its times, counters and last report;
 * the table's own fields are ignored), in the age order of its
 * last_update (restoring oldest first costs O(1) each). TW_OK, TW_ERR_STATE (its key is
 * live already) or TW_ERR_OVERFLOW (the table is full: nothing evicted). */
TW_MUST_CHECK int tw_acct_table_restore(struct tw_acct_table *t,
					const struct tw_acct_session *s);

void tw_acct_table_stats(struct tw_acct_table *t, struct tw_acct_stats *out);

/* Copies up to max live sessions from slot *cursor on into out, and
 * moves *cursor past them (a listing is several such calls, each one
 * short lock hold; sessions that change meanwhile may show as they were).
 * Returns how many; 0 once past the end. */
size_t tw_acct_table_list(struct tw_acct_table *t, uint32_t *cursor,
			  struct tw_acct_session *out, size_t max);

/* Copies up to max live sessions whose Acct-Session-Id is id (of any
 * client and NAS). Returns how many. */
size_t tw_acct_table_find(struct tw_acct_table *t, const uint8_t *id, size_t id_len,
			  struct tw_acct_session *out, size_t max);

/*
 * A User-Name as shown and kept (STYLE: never an IMSI in clear): a
 * permanent EAP identity keeps its leading digit and gets its IMSI
 * masked as twagd's logs mask it ("0001010*****0001@realm"); a bare IMSI
 * (6..15 digits) is masked the same way; any other user name keeps its
 * first character, the rest become '*' (at most 32); the realm is kept.
 * Control characters become '?'. out_max >= TW_ACCT_USER_MAX.
 */
void tw_acct_mask_user(char *out, size_t out_max, const uint8_t *user, size_t len);

/* "start", "stop", "interim-update", "accounting-on", "accounting-off",
 * or "other". */
const char *tw_acct_status_name(uint32_t status);

#endif
