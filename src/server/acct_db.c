/*
 * twag — twagd's accounting records on disk (SQLite, --acct-db): the live
 * sessions, so that a restart (or a crash) keeps them, and every session
 * that ended, as a record to bill from.
 *
 *   acct_live  one row per live session (the key is the session's key:
 *              client, NAS, Acct-Session-Id), written in the same
 *              transaction as each Accounting-Request that changes it;
 *   acct_stop  one row per session ended: by its Stop ("stop"), by a Stop
 *              for a session never seen ("stop-unknown": the NAS's own
 *              figures), or by Accounting-On/-Off ("nas-reset"); kept
 *              --acct-history-days days;
 *   acct_meta  the layout of the rows' state column (below).
 *
 * Each request is one transaction committed before the Accounting-Response
 * is sent (RFC 2866 §2: a response only for a request recorded); a failed
 * commit sends none and the NAS retransmits. WAL with synchronous=NORMAL:
 * a commit survives the process (kill -9), and the last ones may not
 * survive a power cut. Its own file, not the subscriber store's, so that
 * an accounting burst never holds the write lock an SQN reservation waits
 * for.
 *
 * The text columns are for people (sqlite3 FILE 'select * from
 * acct_stop'): User-Name masked as everywhere, Acct-Session-Id and station
 * ids with control characters replaced. The state column is the session
 * as the table holds it, read back at start-up when acct_meta's layout and
 * size are this build's; rows of another layout are left to expire.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acct_db.h"
#include "srv.h"

/* bump when struct tw_acct_session changes shape */
enum { LAYOUT = 1, KEY_MAX = 1 + 16 + 2 + TW_ACCT_NAS_ID_MAX + 1 + TW_ACCT_ID_MAX };

struct tw_acct_db {
	sqlite3 *db;
	sqlite3_stmt *begin, *commit, *rollback;
	sqlite3_stmt *put, *del, *stop, *reset_copy, *reset_del, *prune;
	uint64_t last_prune;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS acct_meta (layout INTEGER NOT NULL, size INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS acct_live ("
	" k BLOB PRIMARY KEY, nas_k BLOB NOT NULL, client TEXT, nas TEXT, session_id TEXT,"
	" user TEXT, calling TEXT, called TEXT, framed_ip TEXT, nas_port INTEGER,"
	" start_time INTEGER, last_update INTEGER, status TEXT, updates INTEGER,"
	" session_time INTEGER, in_octets INTEGER, out_octets INTEGER,"
	" in_packets INTEGER, out_packets INTEGER, state BLOB) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS acct_live_nas ON acct_live (nas_k);"
	"CREATE TABLE IF NOT EXISTS acct_stop ("
	" id INTEGER PRIMARY KEY, stop_time INTEGER NOT NULL, reason TEXT NOT NULL,"
	" terminate_cause INTEGER, client TEXT, nas TEXT, session_id TEXT, user TEXT,"
	" calling TEXT, called TEXT, framed_ip TEXT, nas_port INTEGER, start_time INTEGER,"
	" session_time INTEGER, in_octets INTEGER, out_octets INTEGER,"
	" in_packets INTEGER, out_packets INTEGER);"
	"CREATE INDEX IF NOT EXISTS acct_stop_time ON acct_stop (stop_time);";

/* The columns both tables share, in this order, bound from ?3 on. */
#define COMMON "client, nas, session_id, user, calling, called, framed_ip, nas_port, " \
	       "start_time, session_time, in_octets, out_octets, in_packets, out_packets"

static const char *const sql_text[] = {
	"BEGIN IMMEDIATE",
	"COMMIT",
	"ROLLBACK",
	"INSERT OR REPLACE INTO acct_live (k, nas_k, " COMMON
	", last_update, status, updates, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
	"?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	"DELETE FROM acct_live WHERE k = ?1",
	"INSERT INTO acct_stop (stop_time, reason, terminate_cause, " COMMON
	") VALUES (?1, ?2, ?17, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
	"INSERT INTO acct_stop (stop_time, reason, terminate_cause, " COMMON
	") SELECT ?1, 'nas-reset', NULL, " COMMON " FROM acct_live WHERE nas_k = ?2",
	"DELETE FROM acct_live WHERE nas_k = ?2",
	"DELETE FROM acct_stop WHERE stop_time < ?1",
};

/* The key as octets: client family and address, the NAS, then (full
 * key only) the Acct-Session-Id; lengths in front, so never ambiguous. */
static size_t key_octets(uint8_t *out, const struct tw_acct_key *k, bool with_id)
{
	size_t n = 0;

	out[n++] = k->client.family;
	memcpy(out + n, k->client.a, 16);
	n += 16;
	out[n++] = k->nas_kind;
	out[n++] = k->nas_len;
	memcpy(out + n, k->nas, k->nas_len);
	n += k->nas_len;
	if (with_id) {
		out[n++] = k->id_len;
		memcpy(out + n, k->id, k->id_len);
		n += k->id_len;
	}
	return n;
}

/* Printable text of octets (control characters and non-ASCII: '?'). */
static void text_of(char *out, size_t max, const uint8_t *v, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < max; i++)
		out[o++] = v[i] >= 0x20 && v[i] < 0x7f ? (char)v[i] : '?';
	out[o] = 0;
}

static void nas_text(char *out, size_t max, const struct tw_acct_key *k)
{
	switch (k->nas_kind) {
	case TW_ACCT_NAS_IPV4:
	case TW_ACCT_NAS_IPV6:
		if (inet_ntop(k->nas_kind == TW_ACCT_NAS_IPV4 ? AF_INET : AF_INET6, k->nas, out,
			      (socklen_t)max) == NULL)
			snprintf(out, max, "?");
		return;
	case TW_ACCT_NAS_IDENT:
		text_of(out, max, k->nas, k->nas_len);
		return;
	default:
		snprintf(out, max, "-");
		return;
	}
}

/* Binds the COMMON columns of session s (record r) from ?3 on. */
static void bind_common(sqlite3_stmt *q, const struct tw_acct_record *r, uint64_t start_time)
{
	char client[48], nas[TW_ACCT_NAS_ID_MAX + 1], id[TW_ACCT_ID_MAX + 1],
		calling[TW_ACCT_STATION_MAX + 1], called[TW_ACCT_STATION_MAX + 1], ip[16];

	tw_srv_addr_text(&r->key.client, client, sizeof(client));
	nas_text(nas, sizeof(nas), &r->key);
	text_of(id, sizeof(id), r->key.id, r->key.id_len);
	sqlite3_bind_text(q, 3, client, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 4, nas, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 5, id, -1, SQLITE_TRANSIENT);
	if (r->flags & TW_ACCT_F_USER)
		sqlite3_bind_text(q, 6, r->user, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(q, 6);
	text_of(calling, sizeof(calling), r->calling, r->calling_len);
	text_of(called, sizeof(called), r->called, r->called_len);
	if (r->flags & TW_ACCT_F_CALLING)
		sqlite3_bind_text(q, 7, calling, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(q, 7);
	if (r->flags & TW_ACCT_F_CALLED)
		sqlite3_bind_text(q, 8, called, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(q, 8);
	if (r->flags & TW_ACCT_F_FRAMED_IP) {
		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", r->framed_ip[0], r->framed_ip[1],
			 r->framed_ip[2], r->framed_ip[3]);
		sqlite3_bind_text(q, 9, ip, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(q, 9);
	}
	if (r->flags & TW_ACCT_F_NAS_PORT)
		sqlite3_bind_int64(q, 10, r->nas_port);
	else
		sqlite3_bind_null(q, 10);
	sqlite3_bind_int64(q, 11, (sqlite3_int64)start_time);
	sqlite3_bind_int64(q, 12, r->session_time);
	sqlite3_bind_int64(q, 13, (sqlite3_int64)r->in_octets);
	sqlite3_bind_int64(q, 14, (sqlite3_int64)r->out_octets);
	sqlite3_bind_int64(q, 15, r->in_packets);
	sqlite3_bind_int64(q, 16, r->out_packets);
}

static int step(sqlite3_stmt *q)
{
	int rc = sqlite3_step(q);

	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? TW_OK : TW_ERR_IO;
}

void tw_acct_db_close(struct tw_acct_db *d)
{
	if (d == NULL)
		return;
	sqlite3_finalize(d->begin);
	sqlite3_finalize(d->commit);
	sqlite3_finalize(d->rollback);
	sqlite3_finalize(d->put);
	sqlite3_finalize(d->del);
	sqlite3_finalize(d->stop);
	sqlite3_finalize(d->reset_copy);
	sqlite3_finalize(d->reset_del);
	sqlite3_finalize(d->prune);
	sqlite3_close(d->db);
	free(d);
}

int tw_acct_db_open(struct tw_acct_db **out, const char *path, char *err, size_t err_len)
{
	struct tw_acct_db *d = calloc(1, sizeof(*d));
	sqlite3_stmt **qs[] = { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	sqlite3_stmt *q = NULL;
	char *msg = NULL;
	bool meta_ok = false;

	*out = NULL;
	if (d == NULL) {
		snprintf(err, err_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	qs[0] = &d->begin;
	qs[1] = &d->commit;
	qs[2] = &d->rollback;
	qs[3] = &d->put;
	qs[4] = &d->del;
	qs[5] = &d->stop;
	qs[6] = &d->reset_copy;
	qs[7] = &d->reset_del;
	qs[8] = &d->prune;
	if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
					       SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(d->db, 2000);
	if (sqlite3_exec(d->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL,
			 NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(d->db, schema, NULL, NULL, &msg) != SQLITE_OK)
		goto fail;
	/* the layout row: written once; another one means another build */
	if (sqlite3_prepare_v2(d->db, "SELECT layout, size FROM acct_meta LIMIT 1", -1, &q, NULL) !=
	    SQLITE_OK)
		goto fail;
	if (sqlite3_step(q) == SQLITE_ROW)
		meta_ok = true;
	sqlite3_finalize(q);
	q = NULL;
	if (!meta_ok) {
		char ins[96];

		snprintf(ins, sizeof(ins), "INSERT INTO acct_meta VALUES (%d, %zu)", LAYOUT,
			 sizeof(struct tw_acct_session));
		if (sqlite3_exec(d->db, ins, NULL, NULL, &msg) != SQLITE_OK)
			goto fail;
	}
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		if (sqlite3_prepare_v3(d->db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, qs[i],
				       NULL) != SQLITE_OK)
			goto fail;
	*out = d;
	return TW_OK;
fail:
	snprintf(err, err_len, "%s: %s", path,
		 msg != NULL ? msg : d->db != NULL ? sqlite3_errmsg(d->db) : "cannot open");
	sqlite3_free(msg);
	tw_acct_db_close(d);
	return TW_ERR_IO;
}

int tw_acct_db_load(struct tw_acct_db *d, struct tw_acct_table *t, uint32_t cap,
		    uint64_t *loaded, uint64_t *skipped)
{
	sqlite3_stmt *q = NULL;
	int rc;

	*loaded = *skipped = 0;
	/* the newest cap (a smaller table keeps the sessions heard of
	 * last), restored oldest first (the table's age order) */
	rc = sqlite3_prepare_v2(d->db,
				"SELECT state, (SELECT layout = ?1 AND size = ?2 FROM acct_meta) FROM "
				"(SELECT state, last_update FROM acct_live ORDER BY last_update DESC "
				"LIMIT ?3) ORDER BY last_update ASC",
				-1, &q, NULL);
	if (rc != SQLITE_OK)
		return TW_ERR_IO;
	sqlite3_bind_int(q, 1, LAYOUT);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)sizeof(struct tw_acct_session));
	sqlite3_bind_int64(q, 3, cap);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct tw_acct_session s;
		const void *blob = sqlite3_column_blob(q, 0);

		if (sqlite3_column_int(q, 1) != 1 || blob == NULL ||
		    sqlite3_column_bytes(q, 0) != (int)sizeof(s)) {
			(*skipped)++;
			continue;
		}
		memcpy(&s, blob, sizeof(s));
		if (s.r.key.nas_len > TW_ACCT_NAS_ID_MAX || s.r.key.id_len > TW_ACCT_ID_MAX ||
		    s.r.calling_len > TW_ACCT_STATION_MAX || s.r.called_len > TW_ACCT_STATION_MAX ||
		    tw_acct_table_restore(t, &s) != TW_OK) {
			(*skipped)++;
			continue;
		}
		(*loaded)++;
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? TW_OK : TW_ERR_IO;
}

static int put_live(struct tw_acct_db *d, const struct tw_acct_session *in)
{
	struct tw_acct_session s = *in;
	uint8_t k[KEY_MAX], nk[KEY_MAX];
	size_t kl = key_octets(k, &s.r.key, true), nl = key_octets(nk, &s.r.key, false);

	/* the table's own fields mean nothing on disk */
	s.hash = 0;
	s.hnext = s.prev = s.next = 0;
	s.used = false;
	sqlite3_bind_blob(d->put, 1, k, (int)kl, SQLITE_TRANSIENT);
	sqlite3_bind_blob(d->put, 2, nk, (int)nl, SQLITE_TRANSIENT);
	bind_common(d->put, &s.r, s.start_time);
	sqlite3_bind_int64(d->put, 17, (sqlite3_int64)s.last_update);
	sqlite3_bind_text(d->put, 18, tw_acct_status_name(s.last_status), -1, SQLITE_STATIC);
	sqlite3_bind_int64(d->put, 19, s.updates);
	sqlite3_bind_blob(d->put, 20, &s, (int)sizeof(s), SQLITE_TRANSIENT);
	return step(d->put);
}

static int del_live(struct tw_acct_db *d, const struct tw_acct_key *key)
{
	uint8_t k[KEY_MAX];
	size_t kl = key_octets(k, key, true);

	sqlite3_bind_blob(d->del, 1, k, (int)kl, SQLITE_TRANSIENT);
	return step(d->del);
}

static int put_stop(struct tw_acct_db *d, const struct tw_acct_record *r, uint64_t start_time,
		    const char *reason, uint64_t now)
{
	sqlite3_bind_int64(d->stop, 1, (sqlite3_int64)now);
	sqlite3_bind_text(d->stop, 2, reason, -1, SQLITE_STATIC);
	bind_common(d->stop, r, start_time);
	if (r->flags & TW_ACCT_F_TERMINATE)
		sqlite3_bind_int64(d->stop, 17, r->terminate_cause);
	else
		sqlite3_bind_null(d->stop, 17);
	return step(d->stop);
}

int tw_acct_db_record(struct tw_acct_db *d, const struct tw_acct_record *r,
		      enum tw_acct_result res, const struct tw_acct_change *ch, uint64_t now,
		      unsigned history_days)
{
	int rc;

	if (res == TW_ACCT_IGNORED)
		return TW_OK;
	if (step(d->begin) != TW_OK)
		return TW_ERR_IO;
	rc = TW_OK;
	if (ch->evicted)
		rc = del_live(d, &ch->evicted_key);
	switch (res) {
	case TW_ACCT_STARTED:
	case TW_ACCT_RESTARTED:
	case TW_ACCT_UPDATED:
	case TW_ACCT_CREATED:
		if (rc == TW_OK && ch->have)
			rc = put_live(d, &ch->s);
		break;
	case TW_ACCT_STOPPED:
		if (rc == TW_OK)
			rc = del_live(d, &r->key);
		if (rc == TW_OK && ch->have && history_days > 0)
			rc = put_stop(d, &ch->s.r, ch->s.start_time, "stop", now);
		break;
	case TW_ACCT_STOP_UNKNOWN:
		/* the NAS's figures are all there is: kept as they came */
		if (rc == TW_OK && history_days > 0)
			rc = put_stop(d, r,
				      r->event_time > r->session_time ? r->event_time - r->session_time
								      : 0,
				      "stop-unknown", now);
		break;
	case TW_ACCT_NAS_RESET: {
		uint8_t nk[KEY_MAX];
		size_t nl = key_octets(nk, &r->key, false);

		if (rc == TW_OK && history_days > 0) {
			sqlite3_bind_int64(d->reset_copy, 1, (sqlite3_int64)now);
			sqlite3_bind_blob(d->reset_copy, 2, nk, (int)nl, SQLITE_TRANSIENT);
			rc = step(d->reset_copy);
		}
		if (rc == TW_OK) {
			sqlite3_bind_blob(d->reset_del, 2, nk, (int)nl, SQLITE_TRANSIENT);
			rc = step(d->reset_del);
		}
		break;
	}
	default:
		break;
	}
	/* the history kept --acct-history-days, pruned once an hour */
	if (rc == TW_OK && now >= d->last_prune + 3600) {
		d->last_prune = now;
		sqlite3_bind_int64(d->prune, 1,
				   (sqlite3_int64)(now - (uint64_t)history_days * 86400u));
		rc = step(d->prune);
	}
	if (rc == TW_OK && step(d->commit) == TW_OK)
		return TW_OK;
	(void)step(d->rollback);
	return TW_ERR_IO;
}
