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
#include "ctl.h"
#include "csv.h"
#include "sub_text.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/store.h"
#include "twag/tuak.h"
#include "twag/vecsrc.h"

enum {
	CLI_BUSY_MS = 5000,     /* beside a running twagd: wait for its commits */
};

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
	if (sub_from_text(&t, &s, &bad, err, sizeof(err)) != TW_OK)
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

/*
 * After del or disable: a running twagd (--control PATH, else the default
 * socket) is told to send Disconnect-Requests for the subscriber's
 * sessions. No twagd there is no error: it is said and the command
 * succeeds (the store changed; a twagd started later never authorizes
 * the subscriber, and its store check covers one that did not hear).
 */
static void tell_twagd(const struct cli *c, const char *imsi)
{
	const char *path = cli_get(c, "control");
	char line[64] = "", why[300], ans[16384];
	unsigned acks, others;
	enum ctl_status st;

	if (path == NULL)
		path = CTL_DEFAULT_PATH;
	if (!ctl_word(line, sizeof(line), "disconnect") || !ctl_word(line, sizeof(line), "imsi") ||
	    !ctl_word(line, sizeof(line), imsi))
		return;
	st = ctl_request(path, line, ans, sizeof(ans), 120000, why, sizeof(why));
	if (st == CTL_NO_DAEMON) {
		printf("twagd: not running at %s (no session to disconnect)\n", path);
		return;
	}
	if (st == CTL_FAILED) {
		fprintf(stderr, "twag %s: twagd: %s\n", c->cmd, why);
		return;
	}
	if (st == CTL_ERROR && strstr(ans, "no authorized session") != NULL) {
		printf("twagd: no session of that subscriber to disconnect\n");
		return;
	}
	ctl_print(ans, false, &acks, &others);
}

/* The IMSI of del/enable/disable: --imsi, or the first word when it is
 * not an option ("twag subscriber disable IMSI --db PATH"). */
static int imsi_word(int *argc, char ***argv, char **word)
{
	*word = NULL;
	if (*argc > 0 && strncmp((*argv)[0], "--", 2) != 0) {
		*word = (*argv)[0];
		(*argc)--;
		(*argv)++;
	}
	return 0;
}

static int sub_enable(int argc, char **argv, bool disable)
{
	static const char *const valued[] = { "db", "imsi", "kek-file", "control", NULL };
	const char *cmd = disable ? "subscriber disable" : "subscriber enable";
	struct cli c;
	struct tw_store *st;
	char *word;
	const char *imsi;
	int rc;

	(void)imsi_word(&argc, &argv, &word);
	cli_parse(&c, cmd, argc, argv, valued, NULL);
	(void)cli_need(&c, "db");
	imsi = word != NULL ? word : cli_need(&c, "imsi");
	if (strlen(imsi) < TW_IMSI_MIN_LEN || strlen(imsi) > TW_IMSI_MAX_LEN ||
	    strspn(imsi, "0123456789") != strlen(imsi))
		cli_usage_error(&c, "imsi", "expected 5 to 15 decimal digits");
	st = store_open(&c, false, false);
	rc = tw_store_sub_set_disabled(st, imsi, disable);
	tw_store_close(st);
	if (rc == TW_ERR_NOTFOUND) {
		fprintf(stderr, "twag %s: imsi %s not found\n", cmd, imsi);
		return CLI_EXIT_FAIL;
	}
	if (rc != TW_OK)
		cli_fail(&c, disable ? "disable" : "enable", rc);
	if (disable)
		tell_twagd(&c, imsi);
	return 0;
}

static int sub_disable(int argc, char **argv)
{
	return sub_enable(argc, argv, true);
}

static int sub_reenable(int argc, char **argv)
{
	return sub_enable(argc, argv, false);
}

static int sub_del(int argc, char **argv)
{
	static const char *const valued[] = { "db", "imsi", "kek-file", "control", NULL };
	struct cli c;
	struct tw_store *st;
	char *word;
	int rc;

	(void)imsi_word(&argc, &argv, &word);
	if (word != NULL) {
		/* the positional form: as if --imsi */
		static char *both[66];
		int n = 0;

		both[n++] = (char *)"--imsi";
		both[n++] = word;
		for (int i = 0; i < argc && n < 64; i++)
			both[n++] = argv[i];
		argc = n;
		argv = both;
	}
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
	tell_twagd(&c, cli_get(&c, "imsi"));
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
	printf("algo=%s\n", sub_alg_name(i.alg));
	/* the same lines for every algorithm (COMP128: AMF and SQN unused, 0) */
	cli_print_hex("amf", i.amf, 2);
	sqn_hex(sqn, i.seq_he, i.ind_bits);
	printf("sqn=%s\n", sqn);
	printf("seq_he=%llu\n", (unsigned long long)i.seq_he);
	printf("sqn_reserved=%llu\n", (unsigned long long)i.sqn_reserved);
	printf("ind_bits=%u\n", i.ind_bits);
	if (i.disabled) /* only then: scripts reading the lines above keep working */
		printf("disabled=yes\n");
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
	printf("%s %s %s %s\n", i->imsi, sub_alg_name(i->alg), amf, sqn);
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

static int sub_import(int argc, char **argv)
{
	static const char *const valued[] = { "db", "csv", "kek-file", NULL };
	static const char *const flags[] = { "replace", NULL };
	struct cli c;
	struct csv_import im;
	size_t bad_i = 0;
	char err[CSV_ERR_MAX];
	struct tw_store *st;
	FILE *f;
	int rc;

	cli_parse(&c, "subscriber import", argc, argv, valued, flags);
	(void)cli_need(&c, "db");
	f = fopen(cli_need(&c, "csv"), "r");
	if (f == NULL)
		cli_usage_error(&c, "csv", "cannot open %s: %s", cli_get(&c, "csv"),
				strerror(errno));
	rc = csv_import_read(&im, f, err, sizeof(err));
	fclose(f);
	if (rc != TW_OK)
		cli_usage_error(&c, "csv", "%s", err);

	st = store_open(&c, true, false);
	rc = tw_store_sub_put_many(st, im.subs, im.n, cli_flag(&c, "replace"), &bad_i);
	tw_store_close(st);
	if (rc == TW_ERR_STATE && bad_i < im.n) {
		fprintf(stderr,
			"twag subscriber import: line %d: imsi exists (use --replace); nothing "
			"imported\n",
			im.lines[bad_i]);
		csv_import_free(&im);
		return CLI_EXIT_FAIL;
	}
	size_t n = im.n;
	csv_import_free(&im);
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
		{ "disable", sub_disable }, { "enable", sub_reenable },
	};

	if (argc >= 1)
		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			if (strcmp(argv[0], verbs[i].name) == 0)
				return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "twag subscriber: expected add, del, show, list, import, disable or enable%s%s\n",
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
