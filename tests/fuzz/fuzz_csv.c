/*
 * Fuzz target: the CSV reader of `twag subscriber import`
 * (tools/twag/csv.c, and sub_from_text under it), over arbitrary text.
 *
 * Input: one octet (bit 0: the stream fails with a read error after the
 * text instead of ending; bit 1: the text is not a CSV file but the values
 * of the options of `twag subscriber add`, which sub_from_text reads
 * too), then the text, NULs and all.
 *
 * The reader is checked against a model written here from csv.h: the text
 * cut as fgets cuts it (a line, or CSV_LINE_MAX + 1 characters of one),
 * each piece trimmed and skipped when blank or a '#' comment, the first
 * piece left the header. An accepted file gives one record for each piece
 * after the header, from that line, in order, and each is a valid
 * subscriber: an IMSI of 5..15 digits that is in its line, an algorithm
 * the format has, a Ki whose hex is in its line, TUAK sizes AKA can carry
 * (K of 16 or 32 octets, 64-bit MAC, 32/64/128-bit RES, 128-bit CK and
 * IK, one iteration), no AMF or SQN for COMP128, SQN state with a 5-bit
 * IND. A refused file gives no record and one message that names a line
 * the model says holds something (for a read error: the one past the
 * last, or the last when fgets dropped it), no later than a line too
 * long, or else says there is no header.
 * A file that cannot be read to its end is never accepted. Whatever the
 * outcome, the line buffer is wiped (it held keys) and, freed, nothing
 * leaks.
 *
 * Seeds (tests/fuzz/corpus/csv/) were written by hand: every algorithm
 * with OPc and with OP, TUAK with both key lengths, columns in another
 * order and some left out, comments, blank lines and CRLF, and one of
 * each refusal (unknown, repeated and missing columns, too many, a wrong
 * field count, bad hex, IMSI lengths, a line too long, a NUL, no header,
 * a read error).
 */
#define _GNU_SOURCE /* fopencookie */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/hex.h"

#include "../../tools/twag/csv.h"
#include "../../tools/twag/sub_text.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

struct failing {
	const uint8_t *data;
	size_t size, off;
};

static ssize_t failing_read(void *arg, char *buf, size_t len)
{
	struct failing *s = arg;
	size_t n = s->size - s->off < len ? s->size - s->off : len;

	if (n == 0) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, s->data + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

/* One piece of the text as fgets reads it into a CSV_LINE_MAX + 2 buffer. */
struct piece {
	size_t off, len;  /* in the input */
	size_t str_len;   /* up to the first NUL */
	bool skipped;     /* blank or a comment, after trimming */
};

enum { MAX_PIECES = 4096 };
static struct piece pieces[MAX_PIECES];

static size_t cut(const uint8_t *d, size_t size)
{
	size_t n = 0;

	for (size_t off = 0; off < size && n < MAX_PIECES; n++) {
		size_t len = 0, s = 0;

		while (off + len < size && len < CSV_LINE_MAX + 1) {
			if (d[off + len++] == '\n')
				break;
		}
		while (s < len && d[off + s] != '\0')
			s++;
		pieces[n].off = off;
		pieces[n].len = len;
		pieces[n].str_len = s;
		{
			size_t a = 0, b = s;

			while (a < b && (d[off + a] == ' ' || d[off + a] == '\t'))
				a++;
			while (b > a && (d[off + b - 1] == ' ' || d[off + b - 1] == '\t' ||
					 d[off + b - 1] == '\r' || d[off + b - 1] == '\n'))
				b--;
			pieces[n].skipped = a == b || d[off + a] == '#';
		}
		off += len;
	}
	return n;
}

/* needle (NUL-terminated) occurs in piece p, ignoring case. */
static bool in_piece(const uint8_t *d, const struct piece *p, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= p->str_len; i++) {
		size_t j = 0;

		while (j < k && tolower(d[p->off + i + j]) == tolower((unsigned char)needle[j]))
			j++;
		if (j == k)
			return true;
	}
	return false;
}

static void check_record(const struct tw_subscriber *s, const uint8_t *d,
			 const struct piece *p, bool any_iterations)
{
	char hex[65];
	size_t n = strlen(s->imsi);

	if (n != s->imsi_len || n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN ||
	    strspn(s->imsi, "0123456789") != n || !in_piece(d, p, s->imsi))
		abort();
	switch (s->keys.alg) {
	case TW_SUB_MILENAGE:
		tw_hex_encode(hex, s->keys.aka.u.milenage.k, 16);
		break;
	case TW_SUB_TUAK: {
		const struct tw_tuak_params *t = &s->keys.aka.u.tuak;

		if ((t->k_len != 16 && t->k_len != 32) || t->mac_bits != 64 ||
		    (t->res_bits != 32 && t->res_bits != 64 && t->res_bits != 128) ||
		    t->ck_bits != 128 || t->ik_bits != 128 ||
		    (t->iterations != 1 && !any_iterations) || t->iterations == 0)
			abort();
		tw_hex_encode(hex, t->k, t->k_len);
		break;
	}
	case TW_SUB_COMP128V1:
	case TW_SUB_COMP128V2:
	case TW_SUB_COMP128V3:
		if (s->amf[0] != 0 || s->amf[1] != 0 || s->sqn.seq_he != 0)
			abort();
		tw_hex_encode(hex, s->keys.ki, 16);
		break;
	default:
		abort();
	}
	if (!in_piece(d, p, hex) || !in_piece(d, p, sub_alg_name(s->keys.alg)))
		abort();
	/* TS 33.102 C.1.1: SEQ_HE is the 48-bit SQN without its 5-bit IND */
	if (s->sqn.ind_bits != 5 || s->sqn.ind_count != 1 || s->sqn.seq_he >> 43 != 0)
		abort();
}

/*
 * `twag subscriber add`: the text as the options' values, one a line in
 * the order of struct sub_text (an empty line: the option absent). An
 * accepted record is valid as above, with the sizes the options ask for;
 * a refusal names one of the options given, or a missing required one.
 */
static void check_options(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "imsi", "algo", "ki", "opc", "op", "topc",
					     "top", "amf", "sqn", "mac-bits", "res-bits",
					     "iterations" };
	enum { N = sizeof(names) / sizeof(names[0]) };
	static char text[4096];
	const char *v[N] = { NULL };
	struct tw_subscriber s;
	struct sub_text t;
	const char *bad = NULL;
	char err[160], *p = text;
	int rc;

	if (size >= sizeof(text) || strcmp(sub_alg_name(0), "unknown") != 0)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int i = 0; i < N && p != NULL; i++) {
		char *nl = strchr(p, '\n');

		if (nl != NULL)
			*nl = '\0';
		v[i] = *p != '\0' ? p : NULL;
		p = nl != NULL ? nl + 1 : NULL;
	}
	t = (struct sub_text){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
			       v[10], v[11] };
	err[0] = '\0';
	rc = sub_from_text(&t, &s, &bad, err, sizeof(err));
	if (rc != TW_OK) {
		int i = 0;

		if (rc != TW_ERR_INVAL || bad == NULL || err[0] == '\0')
			abort();
		while (i < N && strcmp(names[i], bad) != 0)
			i++;
		if (i == N)
			abort();
		/* wiped: nothing of a refused record is left */
		for (size_t j = 0; j < sizeof(s); j++)
			if (((const uint8_t *)&s)[j] != 0)
				abort();
		return;
	}
	if (t.imsi == NULL || t.algo == NULL || t.ki == NULL ||
	    strcmp(sub_alg_name(s.keys.alg), t.algo) != 0 || strcmp(s.imsi, t.imsi) != 0)
		abort();
	{
		struct piece all = { 0, size, size, false };
		const struct tw_tuak_params *tp = &s.keys.aka.u.tuak;

		/* the fields are NUL-separated now; the model looks at the input */
		check_record(&s, data, &all, t.iterations != NULL);
		if (s.keys.alg == TW_SUB_TUAK &&
		    (tp->res_bits != (t.res_bits != NULL ? strtoul(t.res_bits, NULL, 10) : 64) ||
		     tp->iterations != (t.iterations != NULL ? strtoul(t.iterations, NULL, 10) : 1)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const cookie_io_functions_t io = { .read = failing_read };
	static struct csv_import im;
	char err[CSV_ERR_MAX];
	struct failing fs;
	size_t np, header = 0, too_long = 0, k = 0;
	bool fail, has_header = false;
	FILE *f;
	int rc;

	if (size == 0)
		return 0;
	fail = data[0] & 1;
	if (data[0] & 2) {
		check_options(data + 1, size - 1);
		return 0;
	}
	data++;
	size--;
	np = cut(data, size);
	if (np == MAX_PIECES)
		return 0;
	for (size_t i = np; i-- > 0;)
		if (pieces[i].str_len > CSV_LINE_MAX)
			too_long = i + 1;
	for (size_t i = 0; i < np && !has_header; i++)
		if (!pieces[i].skipped) {
			has_header = true;
			header = i;
		}

	fs = (struct failing){ data, size, 0 };
	f = fail ? fopencookie(&fs, "r", io) : fmemopen((void *)data, size, "r");
	if (f == NULL)
		abort();
	err[0] = '\0';
	rc = csv_import_read(&im, f, err, sizeof(err));
	fclose(f);

	for (size_t i = 0; i < sizeof(im.line); i++)
		if (im.line[i] != 0)
			abort();
	if (rc == TW_OK) {
		if (fail || too_long != 0 || !has_header)
			abort();
		for (size_t i = header + 1; i < np; i++) {
			if (pieces[i].skipped)
				continue;
			if (k >= im.n || im.lines[k] != (int)i + 1)
				abort();
			check_record(&im.subs[k], data, &pieces[i], false);
			k++;
		}
		if (k != im.n || im.n > im.cap)
			abort();
		csv_import_free(&im);
		if (im.subs != NULL || im.lines != NULL || im.n != 0)
			abort();
		return 0;
	}

	if (rc != TW_ERR_INVAL && rc != TW_ERR_NOMEM)
		abort();
	if (im.subs != NULL || im.lines != NULL || im.n != 0 || err[0] == '\0' ||
	    strlen(err) >= sizeof(err) - 1)
		abort();
	if (rc == TW_ERR_NOMEM) {
		if (strcmp(err, "out of memory") != 0)
			abort();
		return 0;
	}
	if (strncmp(err, "line ", 5) == 0) {
		char *end;
		unsigned long line = strtoul(err + 5, &end, 10);
		/* the line a read error is reported at: the one past the
		 * last, but fgets drops a last line without its newline when
		 * the read after it fails, and that line is then the one */
		size_t read_err_line = np + 1;

		if (np > 0 && data[size - 1] != '\n' && pieces[np - 1].len < CSV_LINE_MAX + 1)
			read_err_line = np;
		if (end == err + 5 || strncmp(end, ": ", 2) != 0 || line == 0)
			abort();
		if (too_long != 0 && line > too_long)
			abort();
		if (strcmp(end, ": read error") == 0) {
			if (!fail || line != read_err_line)
				abort();
		} else if (line > np || (pieces[line - 1].skipped &&
					 pieces[line - 1].str_len <= CSV_LINE_MAX)) {
			/* any other fault is in a line with something in it
			 * (or one too long, comment or not) */
			abort();
		}
		return 0;
	}
	if (has_header || too_long != 0 || fail ||
	    strcmp(err, "no header line (imsi,algo,ki,opc,op,amf,sqn)") != 0)
		abort();
	return 0;
}
