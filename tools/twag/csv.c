/* twag subscriber import — the CSV of subscribers (csv.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "sub_text.h"
#include "twag/bytes.h"

enum { COL_IMSI, COL_ALGO, COL_KI, COL_OPC, COL_OP, COL_AMF, COL_SQN, NCOL };
static const char *const col_names[NCOL] = { "imsi", "algo", "ki", "opc", "op", "amf", "sqn" };

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
			 s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

/* Splits line at commas into at most max fields (trimmed); returns the
 * count, or max + 1 when there are more. */
static int split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *comma = strchr(p, ',');

		if (n == max)
			return max + 1;
		if (comma != NULL)
			*comma = '\0';
		f[n++] = trim(p);
		if (comma == NULL)
			return n;
		p = comma + 1;
	}
}

/* Room for one more record. The records move by copy, not realloc: the
 * old array holds keys and is wiped before it is freed. */
static int grow(struct csv_import *im)
{
	size_t nc = im->cap ? 2 * im->cap : 64;
	struct tw_subscriber *subs;
	int *lines;

	if (im->n < im->cap)
		return TW_OK;
	subs = malloc(nc * sizeof(*subs));
	lines = malloc(nc * sizeof(*lines));
	if (subs == NULL || lines == NULL) {
		free(subs);
		free(lines);
		return TW_ERR_NOMEM;
	}
	size_t n = im->n;

	if (n != 0) {
		memcpy(subs, im->subs, n * sizeof(*subs));
		memcpy(lines, im->lines, n * sizeof(*lines));
	}
	csv_import_free(im);
	im->subs = subs;
	im->lines = lines;
	im->n = n;
	im->cap = nc;
	return TW_OK;
}

#define BAD(...)                                     \
	do {                                         \
		snprintf(err, err_len, __VA_ARGS__); \
		rc = TW_ERR_INVAL;                   \
		goto out;                            \
	} while (0)

int csv_import_read(struct csv_import *im, FILE *f, char *err, size_t err_len)
{
	int map[NCOL], ncols = 0, lineno = 0, rc = TW_OK;
	bool header = false;

	memset(im, 0, sizeof(*im));
	for (int i = 0; i < NCOL; i++)
		map[i] = -1;
	while (fgets(im->line, sizeof(im->line), f) != NULL) {
		char *fld[NCOL + 1], *s;
		int nf;

		lineno++;
		if (strlen(im->line) > CSV_LINE_MAX)
			BAD("line %d: longer than %d characters", lineno, CSV_LINE_MAX);
		s = trim(im->line);
		if (*s == '\0' || *s == '#')
			continue;
		nf = split(s, fld, NCOL);
		if (!header) {
			/* the header names the columns, in any order */
			if (nf > NCOL)
				BAD("line %d: too many columns", lineno);
			for (int i = 0; i < nf; i++) {
				int k = -1;

				for (int j = 0; j < NCOL; j++)
					if (strcmp(fld[i], col_names[j]) == 0)
						k = j;
				if (k < 0)
					BAD("line %d: unknown column '%s' (header: %s)", lineno,
					    fld[i], "imsi,algo,ki,opc,op,amf,sqn");
				if (map[k] >= 0)
					BAD("line %d: column '%s' twice", lineno, fld[i]);
				map[k] = i;
			}
			for (int j = 0; j <= COL_KI; j++)
				if (map[j] < 0)
					BAD("line %d: no '%s' column", lineno, col_names[j]);
			ncols = nf;
			header = true;
			continue;
		}
		if (nf != ncols)
			BAD("line %d: %d fields, the header has %d", lineno,
			    nf > NCOL ? NCOL + 1 : nf, ncols);
		{
			struct sub_text t;
			const char *v[NCOL], *bad = NULL;
			char msg[160];

			for (int j = 0; j < NCOL; j++)
				v[j] = map[j] >= 0 && fld[map[j]][0] != '\0' ? fld[map[j]] : NULL;
			memset(&t, 0, sizeof(t));
			t.imsi = v[COL_IMSI];
			t.algo = v[COL_ALGO];
			t.ki = v[COL_KI];
			t.amf = v[COL_AMF];
			t.sqn = v[COL_SQN];
			/* TUAK uses the opc / op columns for TOPc / TOP */
			if (t.algo != NULL && strcmp(t.algo, "tuak") == 0) {
				t.topc = v[COL_OPC];
				t.top = v[COL_OP];
			} else {
				t.opc = v[COL_OPC];
				t.op = v[COL_OP];
			}
			if (grow(im) != TW_OK) {
				snprintf(err, err_len, "out of memory");
				rc = TW_ERR_NOMEM;
				goto out;
			}
			if (sub_from_text(&t, &im->subs[im->n], &bad, msg, sizeof(msg)) != TW_OK) {
				const char *col = bad;

				if (strcmp(bad, "topc") == 0)
					col = "opc";
				else if (strcmp(bad, "top") == 0)
					col = "op";
				BAD("line %d: %s: %s", lineno, col, msg);
			}
			im->lines[im->n++] = lineno;
		}
	}
	/* fgets ends the loop on a read error as at the end: a file cut
	 * short is not what it says, and import is all or nothing */
	if (ferror(f))
		BAD("line %d: read error", lineno + 1);
	if (!header)
		BAD("no header line (imsi,algo,ki,opc,op,amf,sqn)");
out:
	tw_wipe(im->line, sizeof(im->line));
	if (rc != TW_OK)
		csv_import_free(im);
	return rc;
}

#undef BAD

void csv_import_free(struct csv_import *im)
{
	if (im->subs != NULL)
		tw_wipe(im->subs, im->cap * sizeof(*im->subs));
	free(im->subs);
	free(im->lines);
	im->subs = NULL;
	im->lines = NULL;
	im->n = im->cap = 0;
}
