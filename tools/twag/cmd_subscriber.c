/*
 * twag subscriber add|del|show|list|import — provisioning of the subscriber
 * store (include/twag/store.h) without SQL. Keys are wrapped under the KEK
 * on the way in and printed only with `show --keys`.
 *
 * SQN on the command line (--sqn, the CSV sqn column) is the 48-bit SQN
 * last used, SEQ || IND (3GPP TS 33.102 V17.0.0 Annex C.1.1, IND of 5
 * bits): the store keeps SEQ_HE = SQN >> 5 and the next vector uses
 * SEQ_HE + 1. `show` prints sqn = SEQ_HE << 5 (IND 0).
 *
 * KEK: --kek-file F, else TWAG_KEK (64 hex), else "<db>.kek" (created by
 * add/import on first use, mode 0600). Exit status: 0 ok, 1 the operation
 * failed (not found, exists, I/O, KEK), 2 bad usage (one line naming the
 * option).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/milenage.h"
#include "twag/sqn.h"
#include "twag/store.h"
#include "twag/tuak.h"
#include "twag/vecsrc.h"

enum {
	CLI_BUSY_MS = 5000,     /* beside a running twagd: wait for its commits */
	CSV_LINE_MAX = 1024,
};

/* A subscriber as text, from options or CSV fields (NULL: absent). */
struct sub_text {
	const char *imsi, *algo, *ki, *opc, *op, *topc, *top, *amf, *sqn;
	const char *mac_bits, *res_bits, *iterations;
};

static const struct {
	const char *name;
	enum tw_sub_alg alg;
} algs[] = {
	{ "milenage", TW_SUB_MILENAGE },   { "tuak", TW_SUB_TUAK },
	{ "comp128v1", TW_SUB_COMP128V1 }, { "comp128v2", TW_SUB_COMP128V2 },
	{ "comp128v3", TW_SUB_COMP128V3 },
};

static const char *alg_name(enum tw_sub_alg a)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == a)
			return algs[i].name;
	return "unknown";
}

/* Exactly len octets of hex. */
static bool hex_exact(const char *v, uint8_t *out, size_t len)
{
	size_t got = 0;

	return strlen(v) == 2 * len && tw_hex_decode(out, len, &got, v, 2 * len) == TW_OK &&
	       got == len;
}

static bool dec(const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end = NULL;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoul(v, &end, 10);
	return errno == 0 && *end == '\0' && *out >= min && *out <= max;
}

#define BAD(field, ...)                                   \
	do {                                              \
		*bad = (field);                           \
		snprintf(err, err_len, __VA_ARGS__);      \
		rc = TW_ERR_INVAL;                        \
		goto out;                                 \
	} while (0)

/*
 * Builds s from t. On bad input returns TW_ERR_INVAL with *bad = the option
 * at fault (its long name) and a message in err.
 */
static int make_sub(const struct sub_text *t, struct tw_subscriber *s, const char **bad,
		    char *err, size_t err_len)
{
	struct tw_sub_keys kk;
	struct tw_tuak_params p;
	enum tw_sub_alg alg = 0;
	uint8_t k[32], opc[16], op[16], top[32], amf[2] = { 0, 0 }, sqn[6] = { 0 };
	unsigned long x;
	int rc = TW_OK;

	memset(&kk, 0, sizeof(kk));
	memset(&p, 0, sizeof(p));
	*bad = NULL;
	if (t->imsi == NULL)
		BAD("imsi", "missing (required)");
	{
		size_t n = strlen(t->imsi);

		if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN ||
		    strspn(t->imsi, "0123456789") != n)
			BAD("imsi", "expected 5 to 15 decimal digits");
	}
	if (t->algo == NULL)
		BAD("algo", "missing (required: milenage, tuak, comp128v1, comp128v2, comp128v3)");
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strcmp(t->algo, algs[i].name) == 0)
			alg = algs[i].alg;
	if (alg == 0)
		BAD("algo", "'%s' is not milenage, tuak, comp128v1, comp128v2 or comp128v3",
		    t->algo);
	if (t->ki == NULL)
		BAD("ki", "missing (required)");

	/* options another algorithm's keys would need are mistakes here */
	{
		const struct {
			const char *name, *val;
			bool milenage, tuak;
		} extra[] = {
			{ "opc", t->opc, true, false },      { "op", t->op, true, false },
			{ "topc", t->topc, false, true },    { "top", t->top, false, true },
			{ "amf", t->amf, true, true },       { "sqn", t->sqn, true, true },
			{ "mac-bits", t->mac_bits, false, true },
			{ "res-bits", t->res_bits, false, true },
			{ "iterations", t->iterations, false, true },
		};

		for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
			bool ok = alg == TW_SUB_MILENAGE ? extra[i].milenage
				  : alg == TW_SUB_TUAK   ? extra[i].tuak
							 : false;

			if (extra[i].val != NULL && !ok)
				BAD(extra[i].name, "not used with --algo %s", t->algo);
		}
	}
	if (alg == TW_SUB_MILENAGE || alg == TW_SUB_TUAK) {
		if (t->amf == NULL)
			BAD("amf", "missing (required)");
		if (!hex_exact(t->amf, amf, 2))
			BAD("amf", "expected 4 hex digits");
		if (t->sqn == NULL)
			BAD("sqn", "missing (required)");
		if (!hex_exact(t->sqn, sqn, 6))
			BAD("sqn", "expected 12 hex digits");
	}
	switch (alg) {
	case TW_SUB_MILENAGE:
		if (!hex_exact(t->ki, k, 16))
			BAD("ki", "expected 32 hex digits");
		if (t->opc != NULL && t->op != NULL)
			BAD("op", "give either --op or --opc, not both");
		if (t->opc == NULL && t->op == NULL)
			BAD("opc", "missing (required: --op or --opc)");
		if (t->opc != NULL) {
			if (!hex_exact(t->opc, opc, 16))
				BAD("opc", "expected 32 hex digits");
		} else {
			if (!hex_exact(t->op, op, 16))
				BAD("op", "expected 32 hex digits");
			/* TS 35.206 §4.1: OPc = OP ^ E_K(OP) */
			rc = tw_milenage_opc(opc, k, op);
			if (rc != TW_OK)
				BAD("op", "cannot derive OPc");
		}
		rc = tw_sub_keys_milenage(&kk, k, opc, NULL);
		break;
	case TW_SUB_TUAK:
		if (hex_exact(t->ki, p.k, 16))
			p.k_len = 16;
		else if (hex_exact(t->ki, p.k, 32))
			p.k_len = 32;
		else
			BAD("ki", "expected 32 or 64 hex digits");
		p.mac_bits = 64;
		p.res_bits = 64;
		p.ck_bits = 128;
		p.ik_bits = 128;
		p.iterations = 1;
		/* TS 33.102 §6.3.7: AKA carries a 64-bit MAC and RES <= 128 bits */
		if (t->mac_bits != NULL && (!dec(t->mac_bits, 64, 64, &x)))
			BAD("mac-bits", "AKA needs 64");
		if (t->res_bits != NULL) {
			if (!dec(t->res_bits, 32, 128, &x) || (x != 32 && x != 64 && x != 128))
				BAD("res-bits", "expected 32, 64 or 128");
			p.res_bits = (uint16_t)x;
		}
		if (t->iterations != NULL) {
			if (!dec(t->iterations, 1, 65535, &x))
				BAD("iterations", "expected 1..65535");
			p.iterations = (uint16_t)x;
		}
		if (t->topc != NULL && t->top != NULL)
			BAD("top", "give either --top or --topc, not both");
		if (t->topc == NULL && t->top == NULL)
			BAD("topc", "missing (required: --top or --topc)");
		if (t->topc != NULL) {
			if (!hex_exact(t->topc, p.topc, 32))
				BAD("topc", "expected 64 hex digits");
		} else {
			if (!hex_exact(t->top, top, 32))
				BAD("top", "expected 64 hex digits");
			/* TS 35.231 §6.1: TOPc from TOP and K */
			rc = tw_tuak_topc(p.topc, top, p.k, p.k_len, p.iterations);
			if (rc != TW_OK)
				BAD("top", "cannot derive TOPc");
		}
		rc = tw_sub_keys_tuak(&kk, &p);
		break;
	default:
		if (!hex_exact(t->ki, k, 16))
			BAD("ki", "expected 32 hex digits");
		rc = tw_sub_keys_comp128(&kk, (unsigned)(alg - TW_SUB_COMP128V1 + 1), k);
		break;
	}
	if (rc != TW_OK)
		BAD("ki", "keys refused: %s", tw_strerror(rc));
	rc = tw_subscriber_init(s, t->imsi, &kk, amf);
	if (rc != TW_OK)
		BAD("imsi", "refused: %s", tw_strerror(rc));
	/* Annex C.1.1: SQN = SEQ || IND (5 bits); SEQ_HE is the last SEQ used */
	rc = tw_sqn_he_init(&s->sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1,
			    tw_load_be48(sqn) >> TW_SQN_IND_BITS_DEFAULT);
	if (rc != TW_OK)
		BAD("sqn", "out of range");
out:
	tw_wipe(&kk, sizeof(kk));
	tw_wipe(&p, sizeof(p));
	tw_wipe(k, sizeof(k));
	tw_wipe(opc, sizeof(opc));
	tw_wipe(op, sizeof(op));
	tw_wipe(top, sizeof(top));
	if (rc != TW_OK)
		tw_wipe(s, sizeof(*s));
	return rc;
}

#undef BAD

/* Opens the store named by --db with the KEK rules above. */
static struct tw_store *store_open(const struct cli *c, bool create, bool read_only)
{
	struct tw_store_opts o;
	struct tw_store *st = NULL;
	uint8_t kek[TW_STORE_KEK_LEN];
	char err[512];
	int rc;

	memset(&o, 0, sizeof(o));
	o.path = cli_need(c, "db");
	rc = tw_store_kek_load(cli_get(c, "kek-file"), o.path, create, kek, err, sizeof(err));
	if (rc != TW_OK) {
		fprintf(stderr, "twag %s: KEK: %s\n", c->cmd, err[0] ? err : tw_strerror(rc));
		exit(CLI_EXIT_FAIL);
	}
	o.kek = kek;
	o.read_only = read_only;
	o.busy_timeout_ms = CLI_BUSY_MS;
	o.ident_cache = 16; /* the CLI touches no identities */
	rc = tw_store_open(&st, &o, err, sizeof(err));
	tw_wipe(kek, sizeof(kek));
	if (rc != TW_OK) {
		fprintf(stderr, "twag %s: %s: %s\n", c->cmd, o.path,
			err[0] ? err : tw_strerror(rc));
		exit(CLI_EXIT_FAIL);
	}
	return st;
}

static void need_imsi(const struct cli *c)
{
	const char *v = cli_need(c, "imsi");
	size_t n = strlen(v);

	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN || strspn(v, "0123456789") != n)
		cli_usage_error(c, "imsi", "expected 5 to 15 decimal digits");
}

static int sub_add(int argc, char **argv)
{
	static const char *const valued[] = {
		"db", "imsi", "algo", "ki", "opc", "op", "topc", "top", "amf", "sqn",
		"mac-bits", "res-bits", "iterations", "kek-file", NULL
	};
	static const char *const flags[] = { "replace", NULL };
	struct cli c;
	struct sub_text t;
	struct tw_subscriber s;
	struct tw_store *st;
	const char *bad = NULL;
	char err[160];
	int rc;

	cli_parse(&c, "subscriber add", argc, argv, valued, flags);
	(void)cli_need(&c, "db");
	t.imsi = cli_get(&c, "imsi");
	t.algo = cli_get(&c, "algo");
	t.ki = cli_get(&c, "ki");
	t.opc = cli_get(&c, "opc");
	t.op = cli_get(&c, "op");
	t.topc = cli_get(&c, "topc");
	t.top = cli_get(&c, "top");
	t.amf = cli_get(&c, "amf");
	t.sqn = cli_get(&c, "sqn");
	t.mac_bits = cli_get(&c, "mac-bits");
	t.res_bits = cli_get(&c, "res-bits");
	t.iterations = cli_get(&c, "iterations");
	if (make_sub(&t, &s, &bad, err, sizeof(err)) != TW_OK)
		cli_usage_error(&c, bad, "%s", err);
	st = store_open(&c, true, false);
	rc = tw_store_sub_put(st, &s, cli_flag(&c, "replace"));
	tw_wipe(&s, sizeof(s));
	tw_store_close(st);
	if (rc == TW_ERR_STATE) {
		fprintf(stderr, "twag subscriber add: imsi %s exists (use --replace)\n", t.imsi);
		return CLI_EXIT_FAIL;
	}
	if (rc != TW_OK)
		cli_fail(&c, "add", rc);
	return 0;
}

static int sub_del(int argc, char **argv)
{
	static const char *const valued[] = { "db", "imsi", "kek-file", NULL };
	struct cli c;
	struct tw_store *st;
	int rc;

	cli_parse(&c, "subscriber del", argc, argv, valued, NULL);
	(void)cli_need(&c, "db");
	need_imsi(&c);
	st = store_open(&c, false, false);
	rc = tw_store_sub_del(st, cli_get(&c, "imsi"));
	tw_store_close(st);
	if (rc == TW_ERR_NOTFOUND) {
		fprintf(stderr, "twag subscriber del: imsi %s not found\n", cli_get(&c, "imsi"));
		return CLI_EXIT_FAIL;
	}
	if (rc != TW_OK)
		cli_fail(&c, "del", rc);
	return 0;
}

/* SQN = SEQ_HE || IND 0 (Annex C.1.1), as 12 hex digits. */
static void sqn_hex(char out[13], uint64_t seq_he, unsigned ind_bits)
{
	uint8_t b[6];

	tw_store_be48(b, seq_he << ind_bits);
	tw_hex_encode(out, b, 6);
}

static int sub_show(int argc, char **argv)
{
	static const char *const valued[] = { "db", "imsi", "kek-file", NULL };
	static const char *const flags[] = { "keys", NULL };
	struct cli c;
	struct tw_store *st;
	struct tw_store_sub_info i;
	struct tw_subscriber s;
	char sqn[13];
	int rc;

	cli_parse(&c, "subscriber show", argc, argv, valued, flags);
	(void)cli_need(&c, "db");
	need_imsi(&c);
	st = store_open(&c, false, true);
	rc = tw_store_sub_info(st, cli_get(&c, "imsi"), &i);
	if (rc == TW_OK && cli_flag(&c, "keys"))
		rc = tw_store_sub_get(st, cli_get(&c, "imsi"), &s);
	tw_store_close(st);
	if (rc == TW_ERR_NOTFOUND) {
		fprintf(stderr, "twag subscriber show: imsi %s not found\n", cli_get(&c, "imsi"));
		return CLI_EXIT_FAIL;
	}
	if (rc != TW_OK)
		cli_fail(&c, "show", rc);
	printf("imsi=%s\n", i.imsi);
	printf("algo=%s\n", alg_name(i.alg));
	/* the same lines for every algorithm (COMP128: AMF and SQN unused, 0) */
	cli_print_hex("amf", i.amf, 2);
	sqn_hex(sqn, i.seq_he, i.ind_bits);
	printf("sqn=%s\n", sqn);
	printf("seq_he=%llu\n", (unsigned long long)i.seq_he);
	printf("sqn_reserved=%llu\n", (unsigned long long)i.sqn_reserved);
	printf("ind_bits=%u\n", i.ind_bits);
	if (!cli_flag(&c, "keys"))
		return 0;
	if (s.keys.alg == TW_SUB_MILENAGE) {
		cli_print_hex("ki", s.keys.aka.u.milenage.k, 16);
		cli_print_hex("opc", s.keys.aka.u.milenage.opc, 16);
	} else if (s.keys.alg == TW_SUB_TUAK) {
		const struct tw_tuak_params *p = &s.keys.aka.u.tuak;

		cli_print_hex("ki", p->k, p->k_len);
		cli_print_hex("topc", p->topc, 32);
		printf("mac_bits=%u\nres_bits=%u\niterations=%u\n", p->mac_bits, p->res_bits,
		       p->iterations);
	} else {
		cli_print_hex("ki", s.keys.ki, 16);
	}
	tw_wipe(&s, sizeof(s));
	return 0;
}

static int list_one(void *arg, const struct tw_store_sub_info *i)
{
	char amf[5], sqn[13];

	(void)arg;
	tw_hex_encode(amf, i->amf, 2);
	sqn_hex(sqn, i->seq_he, i->ind_bits);
	printf("%s %s %s %s\n", i->imsi, alg_name(i->alg), amf, sqn);
	return 0;
}

static int sub_list(int argc, char **argv)
{
	static const char *const valued[] = { "db", "kek-file", NULL };
	struct cli c;
	struct tw_store *st;
	int rc;

	cli_parse(&c, "subscriber list", argc, argv, valued, NULL);
	st = store_open(&c, false, true);
	rc = tw_store_sub_list(st, list_one, NULL);
	tw_store_close(st);
	if (rc != TW_OK)
		cli_fail(&c, "list", rc);
	return 0;
}

/* ---- import -------------------------------------------------------------- */

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

static int sub_import(int argc, char **argv)
{
	static const char *const valued[] = { "db", "csv", "kek-file", NULL };
	static const char *const flags[] = { "replace", NULL };
	struct cli c;
	struct tw_subscriber *subs = NULL;
	int *lines = NULL;
	size_t n = 0, cap = 0, bad_i = 0;
	int map[NCOL], ncols = 0, lineno = 0, rc;
	char line[CSV_LINE_MAX + 2];
	struct tw_store *st;
	bool header = false;
	FILE *f;

	cli_parse(&c, "subscriber import", argc, argv, valued, flags);
	(void)cli_need(&c, "db");
	f = fopen(cli_need(&c, "csv"), "r");
	if (f == NULL)
		cli_usage_error(&c, "csv", "cannot open %s: %s", cli_get(&c, "csv"),
				strerror(errno));
	for (int i = 0; i < NCOL; i++)
		map[i] = -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *fld[NCOL + 1], *s;
		int nf;

		lineno++;
		if (strlen(line) > CSV_LINE_MAX)
			cli_usage_error(&c, "csv", "line %d: longer than %d characters", lineno,
					CSV_LINE_MAX);
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		nf = split(s, fld, NCOL);
		if (!header) {
			/* the header names the columns, in any order */
			if (nf > NCOL)
				cli_usage_error(&c, "csv", "line %d: too many columns", lineno);
			for (int i = 0; i < nf; i++) {
				int k = -1;

				for (int j = 0; j < NCOL; j++)
					if (strcmp(fld[i], col_names[j]) == 0)
						k = j;
				if (k < 0)
					cli_usage_error(&c, "csv",
							"line %d: unknown column '%s' (header: %s)",
							lineno, fld[i], "imsi,algo,ki,opc,op,amf,sqn");
				if (map[k] >= 0)
					cli_usage_error(&c, "csv", "line %d: column '%s' twice",
							lineno, fld[i]);
				map[k] = i;
			}
			for (int j = 0; j <= COL_KI; j++)
				if (map[j] < 0)
					cli_usage_error(&c, "csv", "line %d: no '%s' column", lineno,
							col_names[j]);
			ncols = nf;
			header = true;
			continue;
		}
		if (nf != ncols)
			cli_usage_error(&c, "csv", "line %d: %d fields, the header has %d", lineno,
					nf > NCOL ? NCOL + 1 : nf, ncols);
		{
			struct sub_text t;
			const char *v[NCOL], *bad = NULL;
			char err[160];

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
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				void *p1 = realloc(subs, nc * sizeof(*subs));

				if (p1 == NULL)
					cli_usage_error(&c, "csv", "out of memory");
				subs = p1;
				p1 = realloc(lines, nc * sizeof(*lines));
				if (p1 == NULL)
					cli_usage_error(&c, "csv", "out of memory");
				lines = p1;
				cap = nc;
			}
			if (make_sub(&t, &subs[n], &bad, err, sizeof(err)) != TW_OK) {
				const char *col = bad;

				if (strcmp(bad, "topc") == 0)
					col = "opc";
				else if (strcmp(bad, "top") == 0)
					col = "op";
				cli_usage_error(&c, "csv", "line %d: %s: %s", lineno, col, err);
			}
			lines[n++] = lineno;
		}
	}
	fclose(f);
	tw_wipe(line, sizeof(line));
	if (!header)
		cli_usage_error(&c, "csv", "no header line (imsi,algo,ki,opc,op,amf,sqn)");

	st = store_open(&c, true, false);
	rc = tw_store_sub_put_many(st, subs, n, cli_flag(&c, "replace"), &bad_i);
	tw_store_close(st);
	if (subs != NULL)
		tw_wipe(subs, cap * sizeof(*subs));
	free(subs);
	if (rc == TW_ERR_STATE && bad_i < n) {
		fprintf(stderr,
			"twag subscriber import: line %d: imsi exists (use --replace); nothing "
			"imported\n",
			lines[bad_i]);
		free(lines);
		return CLI_EXIT_FAIL;
	}
	free(lines);
	if (rc != TW_OK)
		cli_fail(&c, "import (nothing imported)", rc);
	printf("imported=%zu\n", n);
	return 0;
}

int cmd_subscriber(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} verbs[] = {
		{ "add", sub_add },   { "del", sub_del },       { "show", sub_show },
		{ "list", sub_list }, { "import", sub_import },
	};

	if (argc >= 1)
		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			if (strcmp(argv[0], verbs[i].name) == 0)
				return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "twag subscriber: expected add, del, show, list or import%s%s\n",
		argc >= 1 ? ", not " : "", argc >= 1 ? argv[0] : "");
	return CLI_EXIT_USAGE;
}

static void check_say(void *arg, const char *text)
{
	(void)arg;
	printf("problem=%s\n", text);
}

/* twag store check --db PATH [--kek-file F]: tw_store_check, read-only.
 * Exit 0 when the store is sound, 1 with one problem= line each. */
static int store_check(int argc, char **argv)
{
	static const char *const valued[] = { "db", "kek-file", NULL };
	struct cli c;
	struct tw_store *st;
	unsigned problems = 0, subs = 0, idents = 0;
	int rc;

	cli_parse(&c, "store check", argc, argv, valued, NULL);
	if (access(cli_need(&c, "db"), F_OK) != 0)
		cli_usage_error(&c, "db", "%s: %s", cli_get(&c, "db"), strerror(errno));
	st = store_open(&c, false, true);
	rc = tw_store_check(st, check_say, NULL, &problems, &subs, &idents);
	tw_store_close(st);
	printf("subscribers=%u\nidentity_rows=%u\nproblems=%u\n", subs, idents, problems);
	if (rc != TW_OK)
		cli_fail(&c, "check", rc);
	return problems == 0 ? 0 : CLI_EXIT_FAIL;
}

int cmd_store(int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "check") == 0)
		return store_check(argc - 1, argv + 1);
	fprintf(stderr, "twag store: expected check%s%s\n", argc >= 1 ? ", not " : "",
		argc >= 1 ? argv[0] : "");
	return CLI_EXIT_USAGE;
}
