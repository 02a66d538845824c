/*
 * twag subscriber import — the CSV of subscribers, read apart from the
 * store and the process (cmd_subscriber.c runs it; so does the fuzz target
 * tests/fuzz/fuzz_csv.c).
 *
 * Format: a header line naming the columns, in any order, from imsi,
 * algo, ki, opc, op, amf, sqn (imsi, algo and ki required); then one
 * subscriber a line, with as many fields as the header has columns. Lines
 * that are blank or start with '#' are skipped; fields are trimmed of
 * spaces and tabs, and an empty field is an absent one; a TUAK line gives
 * TOPc / TOP in the opc / op columns. Each record is what sub_from_text()
 * makes of its fields. A line is at most CSV_LINE_MAX characters.
 */
#ifndef TWAG_CSV_H
#define TWAG_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "twag/err.h"
#include "twag/vecsrc.h"

enum {
	CSV_LINE_MAX = 1024,
	/* a message may quote a field: room for a whole line and the text */
	CSV_ERR_MAX = CSV_LINE_MAX + 160,
};

/* The records read (caller-owned; csv_import_read fills it). */
struct csv_import {
	struct tw_subscriber *subs; /* n records (cap allocated), keys in them */
	int *lines;                 /* the line of the file each came from */
	size_t n, cap;
	/* the line being read: it holds keys, so it is wiped before
	 * csv_import_read returns */
	char line[CSV_LINE_MAX + 2];
};

/*
 * Reads the CSV text of f to its end into im, all or nothing. Returns
 * TW_OK; TW_ERR_INVAL with the message in err, "line N: ..." for a line at
 * fault (too long, a bad header, a field count that differs from the
 * header's, a bad record: "line N: COLUMN: ...", a read error) or "no
 * header line (...)"; TW_ERR_NOMEM ("out of memory"). On an error im holds no record
 * (what was read is wiped and freed). err_len >= CSV_ERR_MAX keeps every
 * message whole.
 */
TW_MUST_CHECK int csv_import_read(struct csv_import *im, FILE *f, char *err, size_t err_len);

/* Wipes and frees the records; im is then empty. */
void csv_import_free(struct csv_import *im);

#endif
