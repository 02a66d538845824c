/*
 * Fuzz target: the twag CLI's parsing of option text (tools/twag/cli_text.c,
 * what cli.c runs for every command): the argv walker, the hex value
 * checks with the lengths the commands really ask for, the reader of an
 * "@FILE" / "@-" value, and decimal options.
 *
 * Input: one octet picking the parser and a table row, then its text:
 *   sel % 4 == 0  the text (up to a NUL, as an argument is) as a hex option;
 *   sel % 4 == 1  the text as the contents of an "@FILE" (NULs and all),
 *                 read with the capacity the CLI gives that option, then
 *                 checked as a hex option; with an odd (sel / 4) / rows,
 *                 the stream fails with a read error after the text;
 *   sel % 4 == 2  the text (up to a NUL) as a decimal option;
 *   sel % 4 == 3  the text split at NULs as argv, against a list of valued
 *                 options and flags longer than CLI_MAX_OPTS (with an odd
 *                 sel / 4: no flags, as most commands have none).
 * (sel / 4) picks the row of the table (the command's length rule, or
 * number range).
 *
 * Every answer is checked against a model written here from the interface
 * contract in tools/twag/cli.h, not against the code: a hex value is
 * accepted exactly when its length fits and every character is a hex digit
 * (either case), and then decodes to what the digits say (re-encoded it is
 * the text, lowercased); the "@FILE" reader keeps the one word between
 * white space and refuses a second; a number is accepted exactly when it
 * is digits only, fits an unsigned long and lies in the range; argv is
 * accepted exactly when every argument is a known "--name" (a valued one
 * with "=value" or the next argument, a flag without '='), none twice, at
 * most CLI_MAX_OPTS, and then cli_get / cli_flag answer for each. Every
 * rejection has a message, never cut by its buffer, that is one line as
 * cli.c prints it (cli_text_oneline: an argument quoted in it may hold a
 * newline; a value parser's quotes nothing).
 *
 * Besides, for every input: its octets hex-encoded (in lowercase and in a
 * mixed case chosen by the octets) decode back to themselves, directly
 * and through the "@FILE" reader with white space around them.
 *
 * Seeds (tests/fuzz/corpus/hex/) were written by hand: each parser with
 * accepted values of each table row, wrong lengths by one, odd lengths,
 * non-hex characters, "@FILE" contents with white space, two words, NULs,
 * numbers at and past their bounds and past ULONG_MAX, argv with "=" forms,
 * repeats, unknown options, a flag given a value, a trailing valued option.
 */
#define _GNU_SOURCE /* fopencookie */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/hex.h"

#include "../../tools/twag/cli_text.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The length rules the commands give cli_hex (exact), cli_hex_range and
 * cli_hex_oneof (tools/twag/cmd_*.c). */
enum rule_kind { EXACT, RANGE, ONEOF };
static const size_t kek_lens[] = { 16, 24, 32, 0 }, k_lens[] = { 16, 32, 0 },
		    pub_a[] = { 32, 0 }, pub_b[] = { 33, 0 },
		    unordered[] = { 32, 16, 0 }; /* no order is asked for */
static const struct {
	enum rule_kind kind;
	size_t min, max, step; /* EXACT: max */
	const size_t *lens;
} rules[] = {
	{ EXACT, 0, 16, 0, NULL },     { EXACT, 0, 6, 0, NULL },
	{ EXACT, 0, 2, 0, NULL },      { EXACT, 0, 32, 0, NULL },
	{ RANGE, 4, 16, 1, NULL },     { RANGE, 16, 24, 8, NULL },
	{ RANGE, 2, 256, 2, NULL },    { RANGE, 2, 64, 1, NULL },
	{ RANGE, 1, 4096, 1, NULL },   { RANGE, 16, 4096, 8, NULL },
	{ RANGE, 24, 4104, 8, NULL },  { RANGE, 0, 65535, 1, NULL },
	{ RANGE, 1, 11454, 1, NULL },  { RANGE, 8, 8, 1, NULL },
	{ ONEOF, 0, 0, 0, kek_lens },  { ONEOF, 0, 0, 0, k_lens },
	{ ONEOF, 0, 0, 0, pub_a },     { ONEOF, 0, 0, 0, pub_b },
	{ ONEOF, 0, 0, 0, unordered },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

/* The ranges the commands give cli_uint. */
static const struct {
	unsigned long min, max;
} ranges[] = {
	{ 0, 3 }, { 1, 3 }, { 0, 127 }, { 1, 256 }, { 1, 65535 }, { 0, 255 },
	{ 2, 3 }, { 1, 0xffffffffUL }, { 1, ULONG_MAX }, { 0, (1ULL << 48) - 1 },
};
#define N_RANGES (sizeof(ranges) / sizeof(ranges[0]))

/* More names than CLI_MAX_OPTS, so "too many options" can be reached. */
static const char *const valued[] = {
	"k", "op", "opc", "rand", "sqn", "amf", "c1", "c2", "c3", "c4", "c5",
	"r1", "r2", "r3", "r4", "r5", "db", "imsi", "algo", "ki", "topc", "top",
	"mac-bits", "res-bits", "iterations", "kek-file", "csv", "kek", "key",
	"wrapped", "tk", "pn", "frame", "cipher", "key-id", "sa", "seq",
	"packet", "mode", "nh", "iv", "msk", "pmk", "aa", "spa", "anonce",
	"snonce", "akm", "kck", NULL,
};
static const char *const flags[] = { "replace", "keys", "pad", "verify", "esn", NULL };

static int nibble(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool is_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* A rejection's message: not empty, not cut, one line as printed (a
 * value parser's needs no help for that; argv's may quote an argument). */
static void check_message(int rc, char *err, size_t err_len)
{
	size_t n = strlen(err);

	if (rc == TW_OK)
		return;
	if (n == 0 || n >= err_len - 1)
		abort();
	cli_text_oneline(err);
	if (strlen(err) != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
			abort();
}

/* The same for a value parser, whose message quotes nothing. */
static void check_value_message(int rc, char *err, size_t err_len)
{
	if (rc == TW_OK)
		return;
	for (const char *p = err; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	check_message(rc, err, err_len);
}

static size_t rule_max(unsigned r)
{
	size_t max = rules[r].max;

	if (rules[r].kind == ONEOF)
		for (const size_t *l = rules[r].lens; *l != 0; l++)
			if (*l > max)
				max = *l;
	return max;
}

/* v[0..n) under rule r, checked against the model. */
static void check_hex(unsigned r, const char *v, size_t n)
{
	static uint8_t out[65536];
	char err[CLI_TEXT_ERR_MAX];
	size_t len = 0, octets = n / 2;
	bool fits = false, digits = true;
	int rc;

	err[0] = '\0';
	switch (rules[r].kind) {
	case EXACT:
		rc = cli_text_hex_exact(v, n, out, rules[r].max, err, sizeof(err));
		len = rules[r].max;
		fits = n == 2 * rules[r].max;
		break;
	case RANGE:
		rc = cli_text_hex_range(v, n, out, rules[r].min, rules[r].max, rules[r].step,
					&len, err, sizeof(err));
		fits = n % 2 == 0 && octets >= rules[r].min && octets <= rules[r].max &&
		       (rules[r].step <= 1 || octets % rules[r].step == 0);
		break;
	default:
		rc = cli_text_hex_oneof(v, n, out, rules[r].lens, &len, err, sizeof(err));
		for (const size_t *l = rules[r].lens; *l != 0; l++)
			fits |= n == 2 * *l;
		break;
	}
	for (size_t i = 0; i < n; i++)
		digits &= nibble((unsigned char)v[i]) >= 0;
	if ((rc == TW_OK) != (fits && digits))
		abort();
	/* the library decoder under it, with the rule's longest length */
	if ((tw_hex_decode(out, rule_max(r), NULL, v, n) == TW_OK) !=
	    (n % 2 == 0 && octets <= rule_max(r) && digits))
		abort();
	check_value_message(rc, err, sizeof(err));
	if (rc != TW_OK)
		return;
	if (len != octets || len > rule_max(r))
		abort();
	for (size_t i = 0; i < len; i++)
		if (out[i] != (nibble((unsigned char)v[2 * i]) << 4 |
			       nibble((unsigned char)v[2 * i + 1])))
			abort();
	/* re-encoded: the text in lowercase */
	{
		static char text[2 * 65536 + 1];

		tw_hex_encode(text, out, len);
		for (size_t i = 0; i < n; i++) {
			int ch = (unsigned char)v[i];

			if (text[i] != (ch >= 'A' && ch <= 'F' ? ch - 'A' + 'a' : ch))
				abort();
		}
	}
}

/* A stream of the input's octets that fails, instead of ending, after
 * them: a file that cannot be read to its end. */
struct failing {
	const uint8_t *data;
	size_t size, off;
};

static ssize_t failing_read(void *arg, char *buf, size_t len)
{
	struct failing *s = arg;
	size_t n = s->size - s->off < len ? s->size - s->off : len;

	if (n == 0)
		return -1;
	memcpy(buf, s->data + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

/* The "@FILE" reader over data, with the capacity cli.c gives rule r
 * (fail: the stream errs at its end). */
static void check_read(unsigned r, bool fail, const uint8_t *data, size_t size)
{
	static char buf[2 * 65536 + 2];
	static const cookie_io_functions_t io = { .read = failing_read };
	struct failing fs = { data, size, 0 };
	size_t cap = 2 * rule_max(r) + 2, n = 0, i = 0, word, rest, q;
	char err[CLI_TEXT_ERR_MAX];
	FILE *f = fail ? fopencookie(&fs, "r", io) : fmemopen((void *)data, size, "r");
	bool at_end;
	int rc;

	if (f == NULL)
		abort();
	err[0] = '\0';
	rc = cli_text_hex_read(f, buf, cap, &n, err, sizeof(err));
	fclose(f);
	/* the model: white space, a word, white space, nothing else; a word
	 * of cap - 1 characters or more stops the reading there, and the
	 * reader then goes on only over white space */
	while (i < size && is_space(data[i]))
		i++;
	word = i;
	while (i < size && !is_space(data[i]))
		i++;
	word = i - word;
	rest = i;
	while (rest < size && is_space(data[rest]))
		rest++;
	if (word >= cap - 1) {
		q = i - word + cap - 1;
		while (q < size && is_space(data[q]))
			q++;
		at_end = q == size;
		if (n != cap - 1)
			abort();
	} else {
		at_end = rest == size;
		if (n != word || (!at_end && rc != TW_ERR_DECODE))
			abort();
	}
	/* a read error is seen exactly when the reader reaches the end */
	if (at_end && (rc == TW_ERR_IO) != fail)
		abort();
	if (at_end && !fail && rc != TW_OK)
		abort();
	if (word >= cap - 1 && !(at_end && fail) && rc != TW_OK)
		abort();
	check_value_message(rc, err, sizeof(err));
	if (buf[n] != '\0' || memcmp(buf, data + (i - word), n) != 0)
		abort();
	if (rc == TW_OK)
		check_hex(r, buf, n);
}

static void check_uint(unsigned r, const char *v)
{
	char err[CLI_TEXT_ERR_MAX];
	unsigned long x = 0, model = 0;
	bool ok = v[0] != '\0';
	int rc;

	for (const char *p = v; *p != '\0' && ok; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (*p < '0' || *p > '9' || model > (ULONG_MAX - d) / 10)
			ok = false;
		else
			model = model * 10 + d;
	}
	ok = ok && model >= ranges[r].min && model <= ranges[r].max;
	err[0] = '\0';
	rc = cli_text_uint(v, ranges[r].min, ranges[r].max, &x, err, sizeof(err));
	if ((rc == TW_OK) != ok || (ok && x != model))
		abort();
	check_value_message(rc, err, sizeof(err));
}

static int find(const char *const *list, const char *name, size_t len)
{
	for (int i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
			return i;
	return -1;
}

static void check_args(const char *const *fl, const char *text, size_t size)
{
	static char copy[1024];
	char *argv[256];
	int argc = 0;
	struct cli c;
	char err[2048];
	int rc;

	if (size >= sizeof(copy))
		return;
	memcpy(copy, text, size);
	copy[size] = '\0';
	for (size_t i = 0; i <= size && argc < 256; i++)
		if (i == 0 || copy[i - 1] == '\0')
			argv[argc++] = copy + i;
	if (size == 0)
		argc = 0;
	err[0] = '\0';
	rc = cli_text_args(&c, "fuzz", argc, argv, valued, fl, err, sizeof(err));
	check_message(rc, err, sizeof(err));

	/* the model walks argv again */
	const char *seen[CLI_MAX_OPTS];
	size_t seen_len[CLI_MAX_OPTS];
	int k = 0;
	bool ok = true;
	for (int i = 0; i < argc && ok; i++) {
		const char *a = argv[i], *name = a + 2, *eq, *val = NULL;
		size_t nlen;

		if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
			ok = false;
			break;
		}
		eq = strchr(name, '=');
		nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
		if (find(valued, name, nlen) >= 0) {
			if (eq != NULL)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				ok = false;
		} else if (fl == NULL || find(fl, name, nlen) < 0 || eq != NULL) {
			ok = false;
		}
		for (int j = 0; ok && j < k; j++)
			if (seen_len[j] == nlen && memcmp(seen[j], name, nlen) == 0)
				ok = false;
		if (ok && k == CLI_MAX_OPTS)
			ok = false;
		if (!ok)
			break;
		/* what the parser recorded for this option */
		if (rc == TW_OK && (c.opt[k].name != name || c.opt[k].name_len != nlen ||
				    c.opt[k].val != val))
			abort();
		seen[k] = name;
		seen_len[k] = nlen;
		k++;
	}
	if ((rc == TW_OK) != ok)
		abort();
	if (rc != TW_OK)
		return;
	if (c.nopt != k || c.nopt > CLI_MAX_OPTS || strcmp(c.cmd, "fuzz") != 0)
		abort();
	for (int j = 0; j < c.nopt; j++) {
		char name[64];

		if (c.opt[j].name_len >= sizeof(name))
			abort();
		memcpy(name, c.opt[j].name, c.opt[j].name_len);
		name[c.opt[j].name_len] = '\0';
		if (cli_get(&c, name) != c.opt[j].val || !cli_flag(&c, name))
			abort();
		if ((c.opt[j].val == NULL) != (fl != NULL && find(fl, name, strlen(name)) >= 0))
			abort();
	}
	if (cli_get(&c, "no-such-option") != NULL || cli_flag(&c, "no-such-option"))
		abort();
}

/* decode(encode(x)) == x, directly and through the "@FILE" reader. */
static void round_trip(const uint8_t *x, size_t len)
{
	static char text[2 + 2 * 512 + 3], buf[2 * 512 + 2];
	uint8_t out[512];
	char err[CLI_TEXT_ERR_MAX];
	size_t n = 0, got = 0;
	FILE *f;

	if (len > 512)
		len = 512;
	tw_hex_encode(text + 2, x, len);
	for (int upper = 0; upper < 2; upper++) {
		char *h = text + 2;

		if (upper)
			for (size_t i = 0; i < 2 * len; i++)
				if (h[i] >= 'a' && h[i] <= 'f' && (x[i / 2] >> (i % 8)) & 1)
					h[i] = (char)(h[i] - 'a' + 'A');
		if (cli_text_hex_range(h, 2 * len, out, 0, 512, 1, &got, err, sizeof(err)) !=
			    TW_OK ||
		    got != len || memcmp(out, x, len) != 0)
			abort();
		text[0] = ' ';
		text[1] = '\t';
		memcpy(text + 2 + 2 * len, "\r\n", 3);
		f = fmemopen(text, 2 + 2 * len + 2, "r");
		if (f == NULL)
			abort();
		if (cli_text_hex_read(f, buf, sizeof(buf), &n, err, sizeof(err)) != TW_OK ||
		    n != 2 * len || memcmp(buf, h, n) != 0)
			abort();
		fclose(f);
		if (cli_text_hex_exact(buf, n, out, len, err, sizeof(err)) != TW_OK ||
		    memcmp(out, x, len) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static char text[1024];
	unsigned sel, row;
	size_t n;

	if (size == 0)
		return 0;
	sel = data[0];
	row = sel / 4;
	data++;
	size--;
	round_trip(data, size);
	n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	switch (sel % 4) {
	case 0:
		check_hex(row % N_RULES, text, strlen(text));
		break;
	case 1:
		check_read(row % N_RULES, row / N_RULES % 2 == 1, data, size);
		break;
	case 2:
		check_uint(row % N_RANGES, text);
		break;
	default:
		check_args(row % 2 ? NULL : flags, (const char *)data, size);
		break;
	}
	return 0;
}
