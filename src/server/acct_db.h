/*
 * twag — twagd internal: the accounting records on disk (acct_db.c).
 */
#ifndef TWAG_ACCT_DB_H
#define TWAG_ACCT_DB_H

#include <stdint.h>

#include "twag/acct.h"

struct tw_acct_db;

/* Opens (creating) the SQLite file at path and its tables. TW_OK, or
 * TW_ERR_IO / TW_ERR_NOMEM with the reason in err. */
TW_MUST_CHECK int tw_acct_db_open(struct tw_acct_db **d, const char *path, char *err,
				  size_t err_len);
void tw_acct_db_close(struct tw_acct_db *d);

/* Puts the live sessions on disk back into t (the newest cap of them).
 * Rows of another layout, or that t refuses, are counted in *skipped. */
TW_MUST_CHECK int tw_acct_db_load(struct tw_acct_db *d, struct tw_acct_table *t, uint32_t cap,
				  uint64_t *loaded, uint64_t *skipped);

/* Records what request r did to the table (res, ch from
 * tw_acct_table_apply_ex) in one committed transaction: the live row
 * written or removed, the ended session appended to the history (when
 * history_days > 0), an evicted session's row removed. now: Unix s.
 * TW_OK, or TW_ERR_IO (nothing written: the request must not be
 * answered). */
TW_MUST_CHECK int tw_acct_db_record(struct tw_acct_db *d, const struct tw_acct_record *r,
				    enum tw_acct_result res, const struct tw_acct_change *ch,
				    uint64_t now, unsigned history_days);

#endif
