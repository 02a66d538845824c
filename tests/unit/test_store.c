/*
 * Tests of the subscriber store (include/twag/store.h): SQLite rows with
 * keys wrapped under the KEK (RFC 3394 / RFC 5649, checked by unwrapping
 * the raw rows here), vectors equal to those of the verified local vector
 * source (tw_vecsrc_aka / _aka_prime, 3GPP TS 33.102 V17.0.0 §6.3.2) on a
 * copy of the subscriber, the Annex C.1 rule that no SQN is issued twice
 * (kill -9 at random points, a locked database, two stores on one file,
 * threads), AUTS resynchronisation (§6.3.5, C.3) with AUTS from the
 * simulated USIM, the KEK rules, and the identity-privacy callbacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fault_vfs.h"
#include "tw_test.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/hex.h"
#include "twag/keywrap.h"
#include "twag/sqn.h"
#include "twag/store.h"
#include "twag/tuak.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"
#include "../../src/store/store_internal.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif
#include <openssl/evp.h>
#include <openssl/hmac.h>

static char dir[64];
static char db[128];
static uint8_t kek[32];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static void rm_rf(const char *d)
{
	(void)nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void db_remove(void)
{
	char p[160];
	static const char *const sfx[] = { "", "-wal", "-shm", ".kek" };

	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
		unlink(p);
	}
}

static struct tw_store_opts opts_default(void)
{
	struct tw_store_opts o;

	memset(&o, 0, sizeof(o));
	o.path = db;
	o.kek = kek;
	return o;
}

static struct tw_store *open_with(const struct tw_store_opts *o)
{
	struct tw_store *st = NULL;
	char err[256];
	int rc = tw_store_open(&st, o, err, sizeof(err));

	if (!CHECK(rc == TW_OK))
		fprintf(stderr, "  open: %s (%s)\n", err, tw_strerror(rc));
	return st;
}

static struct tw_store *open_db(void)
{
	struct tw_store_opts o = opts_default();

	return open_with(&o);
}

static void random_imsi(char imsi[16])
{
	uint8_t r[15];

	tw_test_random(r, sizeof(r));
	memcpy(imsi, "00101", 5);
	for (int i = 5; i < 15; i++)
		imsi[i] = (char)('0' + r[i] % 10);
	imsi[15] = '\0';
}

static void make_milenage(struct tw_subscriber *s, const char *imsi, const uint8_t amf[2],
			  uint64_t seq_he)
{
	struct tw_sub_keys kk;
	uint8_t k[16], opc[16];

	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(s, imsi, &kk, amf));
	CHECK_OK(tw_sqn_he_init(&s->sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1, seq_he));
}

static void make_tuak(struct tw_subscriber *s, const char *imsi, size_t k_len,
		      unsigned res_bits, unsigned iterations)
{
	struct tw_tuak_params p;
	struct tw_sub_keys kk;
	static const uint8_t amf[2] = { 0x90, 0x01 };

	memset(&p, 0, sizeof(p));
	tw_test_random(p.k, k_len);
	p.k_len = (uint8_t)k_len;
	tw_test_random(p.topc, 32);
	p.mac_bits = 64;
	p.res_bits = (uint16_t)res_bits;
	p.ck_bits = 128;
	p.ik_bits = 128;
	p.iterations = (uint16_t)iterations;
	CHECK_OK(tw_sub_keys_tuak(&kk, &p));
	CHECK_OK(tw_subscriber_init(s, imsi, &kk, amf));
	CHECK_OK(tw_sqn_he_init(&s->sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1, 7));
}

static void make_comp128(struct tw_subscriber *s, const char *imsi, unsigned version)
{
	struct tw_sub_keys kk;
	uint8_t ki[16];
	static const uint8_t amf0[2] = { 0, 0 };

	tw_test_random(ki, 16);
	CHECK_OK(tw_sub_keys_comp128(&kk, version, ki));
	CHECK_OK(tw_subscriber_init(s, imsi, &kk, amf0));
}

/* SQN from AUTN, as the USIM recovers it (§6.3.3); 0 on a MAC failure. */
static uint64_t sqn_of(const struct tw_subscriber *s, const uint8_t rand_[16],
		       const uint8_t autn[16])
{
	uint8_t sqn[6], res[16], ck[16], ik[16];
	size_t res_len = 0;

	if (tw_aka_autn_verify(&s->keys.aka, rand_, autn, sqn, res, &res_len, ck, ik) != TW_OK)
		return 0;
	return tw_load_be48(sqn);
}

/* Whole file contents (for "the plain key is nowhere on disk"). */
static size_t slurp(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 0;
	uint8_t *b = NULL;

	*out = NULL;
	if (f == NULL)
		return 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			b = realloc(b, cap);
			if (b == NULL)
				abort();
		}
		size_t r = fread(b + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	*out = b;
	return n;
}

static bool on_disk(const void *needle, size_t len)
{
	static const char *const sfx[] = { "", "-wal" };
	bool found = false;

	for (size_t i = 0; i < 2 && !found; i++) {
		char p[160];
		uint8_t *b;
		size_t n;

		snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
		n = slurp(p, &b);
		found = n > 0 && memmem(b, n, needle, len) != NULL;
		free(b);
	}
	return found;
}

/*
 * Table ident (schema 4) seen with schema 3's columns, for the checks below
 * that read or change rows directly: a temporary view ident3v (k, imsi,
 * p0, p1, r0, r0_state, r0_t, r1, r1_state, r1_t) whose UPDATE rewrites
 * the row. The value's layout is decoded and encoded here from its
 * description in ident.c (format octet 1; per pseudonym slot a length and
 * the id; per re-auth slot a length, the id and, when not empty, the
 * 177-octet sealed state and the time as be64), the key from store.h's
 * (the IMSI's length times 10^15 plus its value).
 */
enum { R4_STATE = 16 + 129 + 32 };

struct row4 {
	const uint8_t *id[4]; /* p0, p1, r0, r1 */
	size_t len[4];
	const uint8_t *state[2];
	int64_t t[2];
};

static bool row4_dec(const uint8_t *b, size_t n, struct row4 *r)
{
	size_t o = 1;

	memset(r, 0, sizeof(*r));
	if (b == NULL || n < 1 || b[0] != 1)
		return false;
	for (int i = 0; i < 4; i++) {
		if (o >= n || n - o - 1 < b[o])
			return false;
		r->len[i] = b[o];
		r->id[i] = b + o + 1;
		o += 1 + b[o];
		if (i >= 2 && r->len[i] > 0) {
			if (n - o < R4_STATE + 8)
				return false;
			r->state[i - 2] = b + o;
			r->t[i - 2] = (int64_t)tw_load_be64(b + o + R4_STATE);
			o += R4_STATE + 8;
		}
	}
	return o == n;
}

/* ident_col(v, c): column c (0 p0, 1 p1, 2 r0, 3 r0_state, 4 r0_t, 5 r1,
 * 6 r1_state, 7 r1_t) of a schema 4 value; NULL for an empty slot */
static void fn_ident_col(sqlite3_context *c, int argc, sqlite3_value **v)
{
	static const int slot[8] = { 0, 1, 2, 2, 2, 3, 3, 3 };
	struct row4 r;
	int col = sqlite3_value_int(v[1]), i;

	(void)argc;
	if (col < 0 || col > 7 ||
	    !row4_dec(sqlite3_value_blob(v[0]), (size_t)sqlite3_value_bytes(v[0]), &r) ||
	    r.len[i = slot[col]] == 0) {
		sqlite3_result_null(c);
		return;
	}
	if (col == 0 || col == 1 || col == 2 || col == 5)
		sqlite3_result_blob(c, r.id[i], (int)r.len[i], SQLITE_TRANSIENT);
	else if (col == 3 || col == 6)
		sqlite3_result_blob(c, r.state[i - 2], R4_STATE, SQLITE_TRANSIENT);
	else
		sqlite3_result_int64(c, r.t[i - 2]);
}

/* ident_enc(p0, p1, r0, r0_state, r0_t, r1, r1_state, r1_t): a value */
static void fn_ident_enc(sqlite3_context *c, int argc, sqlite3_value **v)
{
	static const int id_arg[4] = { 0, 1, 2, 5 };
	uint8_t b[1 + 4 * 256 + 2 * (R4_STATE + 8)];
	size_t o = 0;

	(void)argc;
	b[o++] = 1;
	for (int i = 0; i < 4; i++) {
		sqlite3_value *id = v[id_arg[i]];
		size_t n = sqlite3_value_type(id) == SQLITE_NULL ? 0 : (size_t)sqlite3_value_bytes(id);

		if (n > 255 || (i >= 2 && n > 0 && sqlite3_value_bytes(v[id_arg[i] + 1]) != R4_STATE)) {
			sqlite3_result_error(c, "ident_enc: bad slot", -1);
			return;
		}
		b[o++] = (uint8_t)n;
		if (n > 0)
			memcpy(b + o, sqlite3_value_blob(id), n);
		o += n;
		if (i >= 2 && n > 0) {
			memcpy(b + o, sqlite3_value_blob(v[id_arg[i] + 1]), R4_STATE);
			tw_store_be64(b + o + R4_STATE, (uint64_t)sqlite3_value_int64(v[id_arg[i] + 2]));
			o += R4_STATE + 8;
		}
	}
	sqlite3_result_blob(c, b, (int)o, SQLITE_TRANSIENT);
}

/* The view and its functions on h (no-op where there is no schema 4 table). */
static void raw_view(sqlite3 *h)
{
	sqlite3_stmt *q = NULL;
	bool v4 = sqlite3_prepare_v2(h, "SELECT k, v FROM main.ident", -1, &q, NULL) == SQLITE_OK;

	sqlite3_finalize(q);
	if (!v4)
		return;
	sqlite3_create_function(h, "ident_col", 2, SQLITE_UTF8, NULL, fn_ident_col, NULL, NULL);
	sqlite3_create_function(h, "ident_enc", 8, SQLITE_UTF8, NULL, fn_ident_enc, NULL, NULL);
	(void)sqlite3_exec(h,
		"CREATE TEMP VIEW ident3v AS SELECT k,"
		" printf('%0*d', k / 1000000000000000, k % 1000000000000000) AS imsi,"
		" ident_col(v, 0) AS p0, ident_col(v, 1) AS p1, ident_col(v, 2) AS r0,"
		" ident_col(v, 3) AS r0_state, ident_col(v, 4) AS r0_t, ident_col(v, 5) AS r1,"
		" ident_col(v, 6) AS r1_state, ident_col(v, 7) AS r1_t FROM main.ident;"
		"CREATE TEMP TRIGGER ident3v_upd INSTEAD OF UPDATE ON ident3v BEGIN"
		" UPDATE ident SET v = ident_enc(NEW.p0, NEW.p1, NEW.r0, NEW.r0_state,"
		" NEW.r0_t, NEW.r1, NEW.r1_state, NEW.r1_t) WHERE k = OLD.k; END;",
		NULL, NULL, NULL);
}

/* A raw blob column of one row, through SQLite itself. */
static size_t raw_blob(const char *sql, const void *key, size_t key_len, uint8_t *out,
		       size_t max)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *q = NULL;
	size_t n = 0;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    (raw_view(h), sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK)) {
		sqlite3_bind_blob(q, 1, key, (int)key_len, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_BLOB) {
			n = (size_t)sqlite3_column_bytes(q, 0);
			if (n <= max)
				memcpy(out, sqlite3_column_blob(q, 0), n);
			else
				n = 0;
		}
	}
	sqlite3_finalize(q);
	sqlite3_close(h);
	return n;
}

static int64_t raw_int(const char *sql, const char *imsi)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *q = NULL;
	int64_t v = -1;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    (raw_view(h), sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK)) {
		sqlite3_bind_text(q, 1, imsi, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			v = sqlite3_column_int64(q, 0);
	}
	sqlite3_finalize(q);
	sqlite3_close(h);
	return v;
}

/* SQL run on the file by another connection (what an older version or
 * someone with write access left there); true when it ran. */
static bool raw_exec(const char *sql)
{
	sqlite3 *h = NULL;
	bool ok = sqlite3_open(db, &h) == SQLITE_OK &&
		  (raw_view(h), sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);

	sqlite3_close(h);
	return ok;
}

/* The KEK: file (0600 only), TWAG_KEK, <db>.kek created 0600. */
static void test_kek(void)
{
	char f[160], hex[65], err[256];
	uint8_t k1[32], got[32];
	struct stat sb;
	int fd;

	tw_test_random(k1, 32);
	tw_hex_encode(hex, k1, 32);
	snprintf(f, sizeof(f), "%s/k1", dir);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, hex, 64) == 64 && write(fd, "\n", 1) == 1);
	close(fd);
	CHECK_OK(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)));
	CHECK_MEM(got, k1, 32);

	CHECK_OK(chmod(f, 0644));
	CHECK_ERR(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)), TW_ERR_INVAL);
	CHECK(strstr(err, "group/others") != NULL);
	CHECK_OK(chmod(f, 0640));
	CHECK_ERR(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)), TW_ERR_INVAL);
	CHECK_OK(chmod(f, 0600));

	fd = open(f, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, hex, 63) == 63);
	close(fd);
	CHECK_ERR(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)), TW_ERR_DECODE);
	fd = open(f, O_WRONLY | O_TRUNC);
	hex[10] = 'x';
	CHECK(fd >= 0 && write(fd, hex, 64) == 64);
	close(fd);
	CHECK_ERR(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)), TW_ERR_DECODE);
	tw_hex_encode(hex, k1, 32);
	snprintf(f, sizeof(f), "%s/missing", dir);
	CHECK_ERR(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)), TW_ERR_IO);

	/* the environment when no file is given */
	CHECK_OK(setenv("TWAG_KEK", hex, 1));
	memset(got, 0, 32);
	CHECK_OK(tw_store_kek_load(NULL, db, true, got, err, sizeof(err)));
	CHECK_MEM(got, k1, 32);
	CHECK_OK(setenv("TWAG_KEK", "00", 1));
	CHECK_ERR(tw_store_kek_load(NULL, db, true, got, err, sizeof(err)), TW_ERR_DECODE);
	CHECK_OK(unsetenv("TWAG_KEK"));

	/* <db>.kek: absent and not to be created -> error; created 0600 */
	snprintf(f, sizeof(f), "%s.kek", db);
	unlink(f);
	CHECK_ERR(tw_store_kek_load(NULL, db, false, got, err, sizeof(err)), TW_ERR_IO);
	CHECK_OK(tw_store_kek_load(NULL, db, true, got, err, sizeof(err)));
	CHECK(stat(f, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	memcpy(k1, got, 32);
	CHECK(!tw_ct_is_zero(k1, 32));
	CHECK_OK(tw_store_kek_load(NULL, db, true, got, err, sizeof(err)));
	CHECK_MEM(got, k1, 32);
	CHECK_OK(tw_store_kek_load(f, NULL, false, got, err, sizeof(err)));
	CHECK_MEM(got, k1, 32);
	unlink(f);

	/* the database exists but its <db>.kek is gone: no new KEK (it would
	 * not open the stored keys, and would stand where the real one goes) */
	{
		FILE *d = fopen(db, "wx");

		if (CHECK(d != NULL))
			fclose(d);
		CHECK_ERR(tw_store_kek_load(NULL, db, true, got, err, sizeof(err)), TW_ERR_IO);
		CHECK(strstr(err, "missing, and the database exists") != NULL);
		CHECK(access(f, F_OK) != 0);
		unlink(db);
	}
}

/*
 * Starters racing to create <db>.kek (twagd and the CLI at first use): each
 * one gets the same complete KEK, none sees a half-written file, and no
 * temporary file is left beside it.
 */
static void test_kek_race(void)
{
	enum { KIDS = 6, ROUNDS = 40, RES = 33 };
	char f[160];
	int failed = 0, differ = 0;

	snprintf(f, sizeof(f), "%s.kek", db);
	for (int round = 0; round < ROUNDS; round++) {
		uint8_t res[KIDS][RES], k0[32];
		int go[2], out[2];
		size_t got = 0;

		unlink(f);
		if (!CHECK(pipe(go) == 0 && pipe(out) == 0))
			return;
		fflush(NULL);
		for (int i = 0; i < KIDS; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				uint8_t rec[RES];
				char ch;

				alarm(10);
				close(go[1]);
				/* all start at once: when the parent closes go */
				(void)!read(go[0], &ch, 1);
				memset(rec, 0, sizeof(rec));
				rec[0] = tw_store_kek_load(NULL, db, true, rec + 1, NULL, 0) == TW_OK
						 ? 1 : 0;
				(void)!write(out[1], rec, RES);
				_exit(0);
			}
		}
		close(go[0]);
		close(out[1]);
		close(go[1]);
		while (got < sizeof(res)) {
			ssize_t r = read(out[0], (uint8_t *)res + got, sizeof(res) - got);

			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(out[0]);
		while (wait(NULL) > 0)
			;
		if (!CHECK(got == sizeof(res)))
			break;
		CHECK_OK(tw_store_kek_load(f, NULL, false, k0, NULL, 0));
		for (int i = 0; i < KIDS; i++) {
			failed += res[i][0] != 1;
			differ += memcmp(res[i] + 1, k0, 32) != 0;
		}
	}
	CHECK(failed == 0 && differ == 0);
	if (failed != 0 || differ != 0)
		fprintf(stderr, "  %d of %d starters failed, %d got another KEK\n", failed,
			KIDS * ROUNDS, differ);
	unlink(f);
	/* nothing else beside the database */
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "ls -A %s | grep -q kek", dir);
		CHECK(system(cmd) != 0);
	}
}

/* A database created under one KEK is refused under another. */
static void test_open(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_store *st;
	uint8_t other[32];
	char err[256];

	db_remove();
	o.read_only = true;
	CHECK_ERR(tw_store_open(&st, &o, err, sizeof(err)), TW_ERR_IO);
	CHECK(st == NULL);
	o.read_only = false;
	st = open_with(&o);
	tw_store_close(st);
	CHECK(access(db, F_OK) == 0);
	memcpy(other, kek, 32);
	other[31] ^= 1;
	o.kek = other;
	CHECK_ERR(tw_store_open(&st, &o, err, sizeof(err)), TW_ERR_AUTH);
	CHECK(st == NULL && strstr(err, "another KEK") != NULL);
	o.read_only = true;
	CHECK_ERR(tw_store_open(&st, &o, err, sizeof(err)), TW_ERR_AUTH);
	o.kek = kek;
	st = open_with(&o);
	tw_store_close(st);
	/* slots outside the IND */
	o = opts_default();
	o.ind_bits = 2;
	o.ind_first = 3;
	o.ind_count = 2;
	CHECK_ERR(tw_store_open(&st, &o, err, sizeof(err)), TW_ERR_INVAL);
	tw_store_close(NULL);
}

static int count_cb(void *arg, const struct tw_store_sub_info *i)
{
	char (*seen)[16] = arg;
	int n = 0;

	while (seen[n][0] != '\0')
		n++;
	memcpy(seen[n], i->imsi, 16);
	return 0;
}

static int stop_cb(void *arg, const struct tw_store_sub_info *i)
{
	(void)arg;
	(void)i;
	return 7;
}

static bool keys_equal(const struct tw_subscriber *a, const struct tw_subscriber *b)
{
	if (a->keys.alg != b->keys.alg)
		return false;
	switch (a->keys.alg) {
	case TW_SUB_MILENAGE:
		return memcmp(a->keys.aka.u.milenage.k, b->keys.aka.u.milenage.k, 16) == 0 &&
		       memcmp(a->keys.aka.u.milenage.opc, b->keys.aka.u.milenage.opc, 16) == 0;
	case TW_SUB_TUAK: {
		const struct tw_tuak_params *p = &a->keys.aka.u.tuak, *q = &b->keys.aka.u.tuak;

		return p->k_len == q->k_len && memcmp(p->k, q->k, p->k_len) == 0 &&
		       memcmp(p->topc, q->topc, 32) == 0 && p->mac_bits == q->mac_bits &&
		       p->res_bits == q->res_bits && p->ck_bits == q->ck_bits &&
		       p->ik_bits == q->ik_bits && p->iterations == q->iterations;
	}
	default:
		return memcmp(a->keys.ki, b->keys.ki, 16) == 0;
	}
}

/* The raw k / opc columns are RFC 3394 wraps: the plain key is nowhere in
 * the files, and unwrapping under the KEK gives it back. */
static void check_wrapped(const char *imsi, const uint8_t *k, size_t k_len, const uint8_t *opc,
			  size_t opc_len)
{
	uint8_t w[64], plain[64];
	size_t n, plen = 0;

	CHECK(!on_disk(k, k_len));
	n = raw_blob("SELECT k FROM subscriber WHERE imsi = CAST(?1 AS TEXT)", imsi, strlen(imsi), w, sizeof(w));
	CHECK(n == k_len + 8);
	CHECK(memmem(w, n, k, k_len) == NULL);
	CHECK_OK(tw_keywrap_unwrap(plain, sizeof(plain), &plen, kek, 32, w, n));
	CHECK(plen == k_len && memcmp(plain, k, k_len) == 0);
	if (opc == NULL)
		return;
	CHECK(!on_disk(opc, opc_len));
	n = raw_blob("SELECT opc FROM subscriber WHERE imsi = CAST(?1 AS TEXT)", imsi, strlen(imsi), w,
		     sizeof(w));
	CHECK(n == opc_len + 8);
	CHECK_OK(tw_keywrap_unwrap(plain, sizeof(plain), &plen, kek, 32, w, n));
	CHECK(plen == opc_len && memcmp(plain, opc, opc_len) == 0);
}

/* add / info / get / list / replace / del for every algorithm. */
static void test_provisioning(void)
{
	struct tw_subscriber subs[6], got, tmp;
	struct tw_store_sub_info info;
	char imsis[6][16], seen[8][16];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store *st;
	size_t bad = 99;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	for (int i = 0; i < 6; i++) {
		random_imsi(imsis[i]);
		imsis[i][5] = (char)('0' + i); /* distinct, and in this order */
	}
	make_milenage(&subs[0], imsis[0], amf, 41);
	make_tuak(&subs[1], imsis[1], 32, 128, 1);
	make_tuak(&subs[2], imsis[2], 16, 64, 3);
	make_comp128(&subs[3], imsis[3], 1);
	make_comp128(&subs[4], imsis[4], 2);
	make_comp128(&subs[5], imsis[5], 3);
	for (int i = 0; i < 6; i++)
		CHECK_OK(tw_store_sub_put(st, &subs[i], false));
	for (int i = 0; i < 6; i++) {
		CHECK_OK(tw_store_sub_info(st, imsis[i], &info));
		CHECK(strcmp(info.imsi, imsis[i]) == 0);
		CHECK(info.alg == subs[i].keys.alg);
		CHECK_MEM(info.amf, subs[i].amf, 2);
		CHECK(info.seq_he == subs[i].sqn.seq_he && info.sqn_reserved == subs[i].sqn.seq_he);
		CHECK_OK(tw_store_sub_get(st, imsis[i], &got));
		CHECK(keys_equal(&got, &subs[i]));
		CHECK(strcmp(got.imsi, imsis[i]) == 0 && got.sqn.seq_he == subs[i].sqn.seq_he);
		CHECK_MEM(got.amf, subs[i].amf, 2);
		tw_wipe(&got, sizeof(got));
	}
	check_wrapped(imsis[0], subs[0].keys.aka.u.milenage.k, 16,
		      subs[0].keys.aka.u.milenage.opc, 16);
	check_wrapped(imsis[1], subs[1].keys.aka.u.tuak.k, 32, subs[1].keys.aka.u.tuak.topc, 32);
	check_wrapped(imsis[2], subs[2].keys.aka.u.tuak.k, 16, subs[2].keys.aka.u.tuak.topc, 32);
	check_wrapped(imsis[4], subs[4].keys.ki, 16, NULL, 0);

	memset(seen, 0, sizeof(seen));
	CHECK_OK(tw_store_sub_list(st, count_cb, seen));
	for (int i = 0; i < 6; i++)
		CHECK(strcmp(seen[i], imsis[i]) == 0);
	CHECK(seen[6][0] == '\0');
	CHECK(tw_store_sub_list(st, stop_cb, NULL) == 7);

	/* exists: refused without replace; replace changes the keys, but not
	 * the SQN below the old row's 41 (test_replace_sqn) */
	CHECK_ERR(tw_store_sub_put(st, &subs[0], false), TW_ERR_STATE);
	make_milenage(&tmp, imsis[0], amf, 5);
	CHECK_OK(tw_store_sub_put(st, &tmp, true));
	CHECK_OK(tw_store_sub_get(st, imsis[0], &got));
	CHECK(keys_equal(&got, &tmp) && got.sqn.seq_he == 41);
	make_milenage(&tmp, imsis[0], amf, 77);
	CHECK_OK(tw_store_sub_put(st, &tmp, true));
	CHECK_OK(tw_store_sub_get(st, imsis[0], &got));
	CHECK(keys_equal(&got, &tmp) && got.sqn.seq_he == 77);

	/* put_many: all or nothing, the culprit named */
	{
		struct tw_subscriber many[3];
		char a[16], b[16];

		random_imsi(a);
		a[5] = '7';
		random_imsi(b);
		b[5] = '8';
		make_milenage(&many[0], a, amf, 0);
		many[1] = subs[3]; /* exists */
		make_milenage(&many[2], b, amf, 0);
		CHECK_ERR(tw_store_sub_put_many(st, many, 3, false, &bad), TW_ERR_STATE);
		CHECK(bad == 1);
		CHECK_ERR(tw_store_sub_info(st, a, &info), TW_ERR_NOTFOUND);
		CHECK_OK(tw_store_sub_put_many(st, many, 3, true, &bad));
		CHECK_OK(tw_store_sub_info(st, b, &info));
		CHECK_OK(tw_store_sub_del(st, a));
		CHECK_OK(tw_store_sub_del(st, b));
		tw_wipe(many, sizeof(many));
	}
	/* bad records */
	tmp = subs[0];
	tmp.imsi[3] = 'x';
	CHECK_ERR(tw_store_sub_put(st, &tmp, true), TW_ERR_INVAL);
	tmp = subs[0];
	tmp.keys.alg = (enum tw_sub_alg)9;
	CHECK_ERR(tw_store_sub_put(st, &tmp, true), TW_ERR_INVAL);
	CHECK_ERR(tw_store_sub_info(st, "12", &info), TW_ERR_INVAL);

	for (int i = 0; i < 6; i++)
		CHECK_OK(tw_store_sub_del(st, imsis[i]));
	CHECK_ERR(tw_store_sub_del(st, imsis[0]), TW_ERR_NOTFOUND);
	CHECK_ERR(tw_store_sub_info(st, imsis[0], &info), TW_ERR_NOTFOUND);
	CHECK_ERR(tw_store_sub_get(st, imsis[0], &got), TW_ERR_NOTFOUND);
	memset(seen, 0, sizeof(seen));
	CHECK_OK(tw_store_sub_list(st, count_cb, seen));
	CHECK(seen[0][0] == '\0');
	tw_store_close(st);

	/* read-only: reads work, writes do not */
	{
		struct tw_store_opts o = opts_default();

		o.read_only = true;
		st = open_with(&o);
		if (st != NULL) {
			CHECK_ERR(tw_store_sub_put(st, &subs[0], false), TW_ERR_IO);
			CHECK_ERR(tw_store_sub_info(st, imsis[0], &info), TW_ERR_NOTFOUND);
			tw_store_close(st);
		}
	}
	tw_wipe(subs, sizeof(subs));
	tw_wipe(&got, sizeof(got));
	tw_wipe(&tmp, sizeof(tmp));
}

/* Store vectors equal the vector source's on a copy of the subscriber; the
 * SQN inside AUTN strictly increases; AKA' sets the separation bit. */
static void test_vectors(void)
{
	struct tw_subscriber m, t, c, mcopy, tcopy;
	struct tw_eap_aka_vec v, w;
	struct tw_store_sub_info info;
	struct tw_eap_sim_triplet tr[3], tw3[3];
	uint8_t rands[3][16], rand_[16];
	static const uint8_t amf0[2] = { 0x00, 0x00 };
	char im[16], it[16], ic[16];
	uint64_t last = 0;
	struct tw_store *st;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	random_imsi(im);
	random_imsi(it);
	random_imsi(ic);
	make_milenage(&m, im, amf0, 100);
	make_tuak(&t, it, 32, 128, 1);
	make_comp128(&c, ic, 2);
	CHECK_OK(tw_store_sub_put(st, &m, false));
	CHECK_OK(tw_store_sub_put(st, &t, false));
	CHECK_OK(tw_store_sub_put(st, &c, false));
	mcopy = m;
	tcopy = t;
	for (int i = 0; i < 12; i++) {
		bool prime = i % 3 == 1;
		uint64_t sqn;

		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(st, im, prime, rand_, &v));
		CHECK_OK(prime ? tw_vecsrc_aka_prime(&mcopy, rand_, &w)
			       : tw_vecsrc_aka(&mcopy, rand_, &w));
		CHECK_MEM(v.rand_, rand_, 16);
		CHECK_MEM(v.autn, w.autn, 16);
		CHECK(v.xres_len == w.xres_len && memcmp(v.xres, w.xres, w.xres_len) == 0);
		CHECK_MEM(v.ck, w.ck, 16);
		CHECK_MEM(v.ik, w.ik, 16);
		/* TS 33.102 Annex F / TS 33.402 §6.2: separation bit for AKA' only */
		CHECK(((v.autn[6] & 0x80) != 0) == prime);
		sqn = sqn_of(&m, rand_, v.autn);
		CHECK(sqn > last);
		CHECK(sqn >> 5 == 101 + (uint64_t)i);
		last = sqn;
#if defined(TW_HAVE_OSMO)
		/* libosmocore as an independent AuC for the EAP-AKA vectors:
		 * "previous SQN" SEQ_HE || IND 0, 5 IND bits, slot 0 */
		if (!prime) {
			struct osmo_sub_auth_data aud;
			struct osmo_auth_vector ov;

			memset(&aud, 0, sizeof(aud));
			aud.type = OSMO_AUTH_TYPE_UMTS;
			aud.algo = OSMO_AUTH_ALG_MILENAGE;
			memcpy(aud.u.umts.k, m.keys.aka.u.milenage.k, 16);
			memcpy(aud.u.umts.opc, m.keys.aka.u.milenage.opc, 16);
			memcpy(aud.u.umts.amf, m.amf, 2);
			aud.u.umts.sqn = (uint64_t)(100 + i) << 5;
			aud.u.umts.ind_bitlen = 5;
			aud.u.umts.ind = 0;
			CHECK(osmo_auth_gen_vec(&ov, &aud, rand_) == 0);
			CHECK_MEM(ov.autn, v.autn, 16);
			CHECK(ov.res_len == v.xres_len && memcmp(ov.res, v.xres, v.xres_len) == 0);
			CHECK_MEM(ov.ck, v.ck, 16);
			CHECK_MEM(ov.ik, v.ik, 16);
		}
#endif

		CHECK_OK(tw_store_aka_vector(st, it, prime, rand_, &v));
		CHECK_OK(prime ? tw_vecsrc_aka_prime(&tcopy, rand_, &w)
			       : tw_vecsrc_aka(&tcopy, rand_, &w));
		CHECK_MEM(v.autn, w.autn, 16);
		CHECK(v.xres_len == 16 && w.xres_len == 16 && memcmp(v.xres, w.xres, 16) == 0);
		CHECK_MEM(v.ck, w.ck, 16);
	}
	/* the loaded record is current; the row holds the durable mark */
	CHECK_OK(tw_store_sub_info(st, im, &info));
	CHECK(info.seq_he == 112 && info.sqn_reserved == 100 + TW_STORE_SQN_BLOCK_DEFAULT);
	CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", im) ==
	      100 + TW_STORE_SQN_BLOCK_DEFAULT);

	/* COMP128: no AKA; triplets as tw_vecsrc_sim; a USIM's via c2/c3 */
	CHECK_ERR(tw_store_aka_vector(st, ic, false, rand_, &v), TW_ERR_UNSUPPORTED);
	CHECK(tw_ct_is_zero(&v, sizeof(v)));
	tw_test_random(rands, sizeof(rands));
	CHECK_OK(tw_store_sim_triplets(st, ic, (const uint8_t(*)[16])rands, 3, tr));
	for (int i = 0; i < 3; i++) {
		CHECK_OK(tw_vecsrc_sim(&c, rands[i], &tw3[i]));
		CHECK_MEM(&tr[i], &tw3[i], sizeof(tr[i]));
	}
	CHECK_OK(tw_store_sim_triplets(st, im, (const uint8_t(*)[16])rands, 2, tr));
	CHECK_OK(tw_vecsrc_sim(&m, rands[1], &tw3[1]));
	CHECK_MEM(&tr[1], &tw3[1], sizeof(tr[1]));
	CHECK_ERR(tw_store_sim_triplets(st, im, (const uint8_t(*)[16])rands, 4, tr), TW_ERR_INVAL);
	CHECK_ERR(tw_store_sim_triplets(st, im, (const uint8_t(*)[16])rands, 0, tr), TW_ERR_INVAL);

	/* unknown and bad IMSIs */
	{
		char u[16];

		random_imsi(u);
		u[5] = u[5] == '9' ? '8' : (char)(u[5] + 1);
		CHECK_ERR(tw_store_aka_vector(st, u, false, rand_, &v), TW_ERR_NOTFOUND);
		CHECK_ERR(tw_store_sim_triplets(st, u, (const uint8_t(*)[16])rands, 2, tr),
			  TW_ERR_NOTFOUND);
		CHECK_ERR(tw_store_aka_vector(st, "0010a", false, rand_, &v), TW_ERR_INVAL);
	}

	/* clean close: SEQ_HE written back exactly, the mark lowered to it;
	 * the next vector continues at SEQ_HE + 1 (nothing skipped) */
	tw_store_close(st);
	CHECK(raw_int("SELECT seq_he FROM subscriber WHERE imsi = ?1", im) == 112);
	CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", im) == 112);
	st = open_db();
	if (st == NULL)
		return;
	CHECK_OK(tw_store_sub_info(st, im, &info));
	CHECK(info.seq_he == 112 && info.sqn_reserved == 112);
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, im, false, rand_, &v));
	CHECK(sqn_of(&m, rand_, v.autn) >> 5 == 113);

	/* replace while loaded: the new keys and SQN are used at once */
	{
		struct tw_subscriber n2, ncopy;

		make_milenage(&n2, im, amf0, 3000);
		CHECK_OK(tw_store_sub_put(st, &n2, true));
		ncopy = n2;
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(st, im, false, rand_, &v));
		CHECK_OK(tw_vecsrc_aka(&ncopy, rand_, &w));
		CHECK_MEM(v.autn, w.autn, 16);
		CHECK(sqn_of(&n2, rand_, v.autn) >> 5 == 3001);
		/* deleted while loaded: gone at once */
		CHECK_OK(tw_store_sub_del(st, im));
		CHECK_ERR(tw_store_aka_vector(st, im, false, rand_, &v), TW_ERR_NOTFOUND);
		tw_wipe(&n2, sizeof(n2));
		tw_wipe(&ncopy, sizeof(ncopy));
	}
	{
		struct tw_store_stats s;

		tw_store_get_stats(st, &s);
		CHECK(s.vectors == 1 + 1 && s.reservations == 2 && s.io_errors == 0);
	}
	tw_store_close(st);

	/* this gateway's IND slots (C.1.2): 3 and 4, in turn */
	{
		struct tw_store_opts o = opts_default();

		o.ind_bits = 5;
		o.ind_first = 3;
		o.ind_count = 2;
		st = open_with(&o);
		if (st != NULL) {
			random_imsi(im);
			make_milenage(&m, im, amf0, 0);
			CHECK_OK(tw_store_sub_put(st, &m, false));
			for (int i = 0; i < 4; i++) {
				tw_test_random(rand_, 16);
				CHECK_OK(tw_store_aka_vector(st, im, false, rand_, &v));
				uint64_t sqn = sqn_of(&m, rand_, v.autn);
				CHECK((sqn & 31) == (uint64_t)(3 + i % 2) &&
				      sqn >> 5 == (uint64_t)i + 1);
			}
			tw_store_close(st);
		}
	}
	tw_wipe(&m, sizeof(m));
	tw_wipe(&t, sizeof(t));
	tw_wipe(&c, sizeof(c));
	tw_wipe(&mcopy, sizeof(mcopy));
	tw_wipe(&tcopy, sizeof(tcopy));
}

/* ---- kill -9 ------------------------------------------------------------- */

enum { REC = 32 };

/* The child: opens the store and issues vectors as fast as it can,
 * writing RAND || AUTN of each to the pipe (atomic: < PIPE_BUF), until
 * killed. Never returns. */
static _Noreturn void vector_child(int fd, const char *imsi, unsigned block)
{
	struct tw_store_opts o = opts_default();
	struct tw_store *st = NULL;
	struct tw_eap_aka_vec v;
	uint8_t rec[REC];
	unsigned n = 0;

	alarm(30); /* never outlive a failed parent */
	o.sqn_block = block;
	if (tw_store_open(&st, &o, NULL, 0) != TW_OK)
		_exit(3);
	for (;;) {
		tw_test_random(rec, 16);
		if (tw_store_aka_vector(st, imsi, (n++ & 1) != 0, rec, &v) != TW_OK) {
			memset(rec, 0xff, REC);
			(void)!write(fd, rec, REC);
			_exit(4);
		}
		memcpy(rec + 16, v.autn, 16);
		if (write(fd, rec, REC) != REC)
			_exit(5);
	}
}

static size_t read_records(int fd, uint8_t *buf, size_t max_rec, size_t want)
{
	size_t got = 0, n = 0;

	while (n < want && n < max_rec) {
		ssize_t r = read(fd, buf + got, (n + 1) * REC - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		n = got / REC;
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Children killed with SIGKILL at random points, several times, with
 * blocks of 3 (so kills land inside and across reservations): every SQN
 * seen is above every SQN seen before it (one child after another), hence
 * none repeats; a clean reopen continues above them all.
 */
static void test_kill9(void)
{
	enum { ROUNDS = 6, MAXREC = 4096 };
	struct tw_subscriber s;
	struct tw_store *st;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint64_t *all = malloc(MAXREC * ROUNDS * sizeof(uint64_t) + 64);
	uint8_t *buf = malloc(MAXREC * REC);
	size_t nall = 0;
	char imsi[16];
	bool order_ok = true, bad_rec = false;

	if (all == NULL || buf == NULL)
		abort();
	db_remove();
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 10);
	st = open_db();
	if (st == NULL)
		goto out;
	CHECK_OK(tw_store_sub_put(st, &s, false));
	tw_store_close(st);

	for (int round = 0; round < ROUNDS; round++) {
		int p[2];
		pid_t pid;
		size_t n, want = 1 + tw_test_random_u32() % 120;
		unsigned block = round == ROUNDS - 1 ? 1 : 3;

		if (!CHECK(pipe(p) == 0))
			break;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			vector_child(p[1], imsi, block);
		}
		close(p[1]);
		if (!CHECK(pid > 0)) {
			close(p[0]);
			break;
		}
		n = read_records(p[0], buf, MAXREC, want);
		/* a random extra moment: somewhere inside a reservation */
		if (tw_test_random_u32() % 2)
			usleep(tw_test_random_u32() % 3000);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		/* whatever the child wrote before dying was issued too */
		n += read_records(p[0], buf + n * REC, MAXREC - n, MAXREC);
		close(p[0]);
		CHECK(n >= want);
		for (size_t i = 0; i < n; i++) {
			uint64_t sqn;

			static const uint8_t ff[REC] = {
				0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			};

			if (memcmp(buf + i * REC, ff, REC) == 0) /* the child failed */
				bad_rec = true;
			sqn = sqn_of(&s, buf + i * REC, buf + i * REC + 16);
			if (nall > 0 && sqn <= all[nall - 1])
				order_ok = false;
			all[nall++] = sqn;
		}
	}
	CHECK(!bad_rec);
	CHECK(order_ok);
	CHECK(nall > ROUNDS);
	/* a clean run afterwards: still above everything */
	st = open_db();
	if (st != NULL && nall > 0) {
		struct tw_eap_aka_vec v;
		uint8_t rand_[16];

		for (int i = 0; i < 5; i++) {
			tw_test_random(rand_, 16);
			CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
			all[nall] = sqn_of(&s, rand_, v.autn);
			CHECK(all[nall] > all[nall - 1]);
			nall++;
		}
	}
	tw_store_close(st);
	/* and, sorted, no two equal */
	qsort(all, nall, sizeof(all[0]), cmp_u64);
	{
		bool dup = false;

		for (size_t i = 1; i < nall; i++)
			dup |= all[i] == all[i - 1];
		CHECK(!dup);
	}
	tw_note("kill -9: %zu vectors checked over %d killed children", nall - 5,
		ROUNDS);
out:
	tw_wipe(&s, sizeof(s));
	free(all);
	free(buf);
}

/* Another connection holds the write lock: the vector that needs a
 * reservation gets TW_ERR_IO and nothing; after the lock is gone the next
 * SQN is still above every one issued. A read-only store issues none. */
static void test_locked(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;
	struct tw_store_sub_info info;
	struct tw_store_stats stats;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16];
	uint64_t last = 0, sqn;
	struct tw_store *st;
	sqlite3 *h = NULL;
	char imsi[16];

	db_remove();
	o.sqn_block = 3;
	o.busy_timeout_ms = 50;
	st = open_with(&o);
	if (st == NULL)
		return;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	for (int i = 0; i < 2; i++) { /* reserves 1..3, uses 1, 2 */
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
		sqn = sqn_of(&s, rand_, v.autn);
		CHECK(sqn > last);
		last = sqn;
	}
	CHECK(sqlite3_open(db, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v)); /* 3: in the block */
	sqn = sqn_of(&s, rand_, v.autn);
	CHECK(sqn > last);
	last = sqn;
	for (int i = 0; i < 2; i++) {
		memset(&v, 0x5a, sizeof(v));
		CHECK_ERR(tw_store_aka_vector(st, imsi, true, rand_, &v), TW_ERR_IO);
		CHECK(tw_ct_is_zero(&v, sizeof(v)));
	}
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == 3 && info.sqn_reserved == 3);
	tw_store_get_stats(st, &stats);
	CHECK(stats.io_errors >= 2 && stats.vectors == 3);
	CHECK(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	for (int i = 0; i < 4; i++) {
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
		sqn = sqn_of(&s, rand_, v.autn);
		CHECK(sqn > last && sqn >> 5 == 4 + (uint64_t)i);
		last = sqn;
	}
	tw_store_close(st);

	o.read_only = true;
	st = open_with(&o);
	if (st != NULL) {
		CHECK_ERR(tw_store_aka_vector(st, imsi, false, rand_, &v), TW_ERR_IO);
		CHECK_OK(tw_store_sub_info(st, imsi, &info));
		CHECK(info.seq_he == 7);
		tw_store_close(st);
	}
	tw_wipe(&s, sizeof(s));
}

/*
 * Reserve-ahead: once 3/4 of a block is used, the write-behind thread
 * makes the next block durable, so the vector path does not wait for that
 * fsync. Given the time to land, a subscriber issues three blocks' worth
 * with only its first reservation made on the issuing thread; every SEQ is
 * consecutive and at or below the mark an independent connection reads.
 */
static void test_reserve_ahead(void)
{
	enum { BLOCK = 64, N = 3 * BLOCK };
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;
	struct tw_store_sub_info info;
	struct tw_store_stats stats;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16];
	struct tw_store *st;
	char imsi[16];
	bool ok = true;

	db_remove();
	o.sqn_block = BLOCK;
	st = open_with(&o);
	if (st == NULL)
		return;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	for (int i = 1; i <= N; i++) {
		uint64_t seq;

		tw_test_random(rand_, 16);
		if (tw_store_aka_vector(st, imsi, false, rand_, &v) != TW_OK) {
			ok = false;
			break;
		}
		seq = sqn_of(&s, rand_, v.autn) >> 5;
		ok &= seq == (uint64_t)i;
		ok &= raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", imsi) >=
		      (int64_t)seq;
		if (i == 1) {
			tw_store_get_stats(st, &stats);
			CHECK(stats.reservations_sync == 1 && stats.reservations == 1);
		}
		/* the background's time: until the block has headroom again */
		for (int k = 0; k < 400; k++) {
			ok &= tw_store_sub_info(st, imsi, &info) == TW_OK;
			if ((info.sqn_reserved - info.seq_he) * 4 > BLOCK)
				break;
			usleep(5000);
		}
	}
	CHECK(ok);
	tw_store_get_stats(st, &stats);
	CHECK(stats.vectors == N);
	CHECK(stats.reservations_sync == 1);
	CHECK(stats.reservations_ahead >= N / BLOCK && stats.reservations_waited == 0);
	CHECK(stats.reservations == stats.reservations_sync + stats.reservations_ahead);
	tw_store_close(st);
	/* a clean close still writes back the exact SEQ_HE */
	CHECK(raw_int("SELECT seq_he FROM subscriber WHERE imsi = ?1", imsi) == N);
	CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", imsi) == N);
	tw_wipe(&s, sizeof(s));
}

/* Two stores on one file (two processes, or the CLI beside twagd): each
 * reservation starts above the other's, so no SQN is issued by both. */
static void test_two_stores(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store *a, *b;
	uint64_t seen[64];
	uint8_t rand_[16];
	size_t n = 0;
	char imsi[16];
	bool dup = false;

	db_remove();
	o.sqn_block = 3;
	a = open_with(&o);
	b = open_with(&o);
	if (a == NULL || b == NULL)
		goto out;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(a, &s, false));
	for (int i = 0; i < 20; i++) {
		struct tw_store *x = (tw_test_random_u32() & 1) ? a : b;

		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(x, imsi, false, rand_, &v));
		seen[n++] = sqn_of(&s, rand_, v.autn);
	}
	/* closing both (in either order) never lowers the mark below what the
	 * other reserved */
	tw_store_close(a);
	a = NULL;
	tw_store_close(b);
	b = NULL;
	a = open_with(&o);
	if (a == NULL)
		goto out;
	for (int i = 0; i < 4; i++) {
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(a, imsi, false, rand_, &v));
		seen[n++] = sqn_of(&s, rand_, v.autn);
	}
	qsort(seen, n, sizeof(seen[0]), cmp_u64);
	for (size_t i = 1; i < n; i++)
		dup |= seen[i] == seen[i - 1];
	CHECK(!dup);
out:
	tw_store_close(a);
	tw_store_close(b);
	tw_wipe(&s, sizeof(s));
}

/* ---- resync ------------------------------------------------------------- */

static void test_resync(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s, c;
	struct tw_usim u;
	struct tw_eap_aka_vec v;
	struct tw_store_sub_info info;
	struct tw_store_stats stats;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16], res[16], ck[16], ik[16], auts[14], sqn_ms[6], rand0[16], auts0[14];
	size_t res_len;
	struct tw_store *st;
	char imsi[16], ic[16];
	uint64_t before;

	db_remove();
	o.resync_max = 3;
	st = open_with(&o);
	if (st == NULL)
		return;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 100);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	/* a USIM that has seen SEQ 5000 already (another AuC, a restored
	 * backup): our SEQ 101 is stale, it answers with AUTS */
	CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
	tw_store_be48(sqn_ms, (uint64_t)5000 << 5); /* IND 0, the slot we use */
	CHECK_OK(tw_sqn_ms_accept(&u.sqn, sqn_ms));
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
	CHECK_ERR(tw_usim_authenticate(&u, rand_, v.autn, res, &res_len, ck, ik, auts),
		  TW_ERR_SYNC);
	/* bad MAC-S: refused, nothing moves */
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	before = info.seq_he;
	auts[13] ^= 0x01;
	CHECK_ERR(tw_store_resync(st, imsi, rand_, auts), TW_ERR_AUTH);
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == before);
	auts[13] ^= 0x01;
	/* a different RAND than the challenge's: AK* differs, MAC-S fails */
	{
		uint8_t r2[16];

		memcpy(r2, rand_, 16);
		r2[0] ^= 0x80;
		CHECK_ERR(tw_store_resync(st, imsi, r2, auts), TW_ERR_AUTH);
	}
	memcpy(rand0, rand_, 16);
	memcpy(auts0, auts, 14);
	CHECK_OK(tw_store_resync(st, imsi, rand_, auts));
	/* C.3: the next vector carries SEQ_MS + 1, and the USIM takes it */
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
	CHECK(sqn_of(&s, rand_, v.autn) >> 5 == 5001);
	CHECK_OK(tw_usim_authenticate(&u, rand_, v.autn, res, &res_len, ck, ik, auts));
	/* durable: the row's mark is past SEQ_MS already */
	CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", imsi) >= 5001);
	/* the same AUTS again (a replay): verified, but SEQ_MS is not ahead any
	 * more: nothing moves, and it is not a genuine resync's budget */
	CHECK_OK(tw_store_resync(st, imsi, rand0, auts0));
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == 5001);
	tw_store_get_stats(st, &stats);
	CHECK(stats.resyncs == 2 && stats.resyncs_stale == 1 && stats.resyncs_refused == 0 &&
	      stats.resyncs_bad_mac == 2);
	/* the genuine budget (3) counts only resyncs that moved SEQ_HE: two
	 * more move it, the third is over the limit */
	for (int i = 0; i < 3; i++) {
		tw_test_random(rand_, 16);
		tw_store_be48(sqn_ms, (uint64_t)(6000 + 1000 * i) << 5);
		CHECK_OK(tw_aka_auts_build(&s.keys.aka, rand_, sqn_ms, auts));
		CHECK_ERR(tw_store_resync(st, imsi, rand_, auts), i < 2 ? TW_OK : TW_ERR_RANGE);
	}
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == 7000);
	tw_store_get_stats(st, &stats);
	CHECK(stats.resyncs == 4 && stats.resyncs_refused == 1 && stats.resyncs_bad_mac == 2);
	tw_store_close(st);

	/* bad MAC-S attempts (anyone who claims the IMSI can send them) have a
	 * budget of their own: they cannot block a genuine resync */
	o.resync_max = 1;
	o.resync_bad_max = 4;
	st = open_with(&o);
	if (st == NULL)
		return;
	tw_test_random(rand_, 16);
	tw_store_be48(sqn_ms, (uint64_t)20000 << 5);
	CHECK_OK(tw_aka_auts_build(&s.keys.aka, rand_, sqn_ms, auts));
	auts[0] ^= 0x40; /* SQN_MS ^ AK* changes: MAC-S fails */
	for (int i = 0; i < 20; i++)
		CHECK_ERR(tw_store_resync(st, imsi, rand_, auts), i < 4 ? TW_ERR_AUTH : TW_ERR_RANGE);
	auts[0] ^= 0x40;
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	before = info.seq_he;
	CHECK(before < 20000);
	CHECK_OK(tw_store_resync(st, imsi, rand_, auts)); /* the genuine one */
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == 20000);
	CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", imsi) >= 20000);
	tw_store_get_stats(st, &stats);
	CHECK(stats.resyncs == 1 && stats.resyncs_bad_mac == 20 && stats.resyncs_refused == 16);
	/* both budgets used up: refused unchecked */
	CHECK_ERR(tw_store_resync(st, imsi, rand_, auts), TW_ERR_RANGE);
	tw_store_get_stats(st, &stats);
	CHECK(stats.resyncs_bad_mac == 20 && stats.resyncs_refused == 17);
	tw_store_close(st);
	o.resync_bad_max = 0;

	/* never backwards: a valid AUTS with an old SQN_MS leaves SEQ_HE */
	o.resync_max = 2;
	st = open_with(&o);
	if (st == NULL)
		return;
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, imsi, false, rand_, &v));
	before = sqn_of(&s, rand_, v.autn) >> 5;
	CHECK(before >= 5002);
	tw_store_be48(sqn_ms, (uint64_t)10 << 5);
	CHECK_OK(tw_aka_auts_build(&s.keys.aka, rand_, sqn_ms, auts));
	CHECK_OK(tw_store_resync(st, imsi, rand_, auts));
	{
		uint8_t r2[16];

		tw_test_random(r2, 16);
		CHECK_OK(tw_store_aka_vector(st, imsi, false, r2, &v));
		CHECK(sqn_of(&s, r2, v.autn) >> 5 == before + 1);
	}
	/* valid, moving SEQ_HE, but over the limit (2 per window): refused */
	for (int i = 0; i < 3; i++) {
		tw_test_random(rand_, 16);
		tw_store_be48(sqn_ms, (uint64_t)(before + 100 + 100 * i) << 5);
		CHECK_OK(tw_aka_auts_build(&s.keys.aka, rand_, sqn_ms, auts));
		CHECK_ERR(tw_store_resync(st, imsi, rand_, auts), i < 2 ? TW_OK : TW_ERR_RANGE);
	}
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.seq_he == before + 200);
	/* a COMP128 subscriber has no AUTS */
	random_imsi(ic);
	make_comp128(&c, ic, 1);
	CHECK_OK(tw_store_sub_put(st, &c, false));
	CHECK_ERR(tw_store_resync(st, ic, rand_, auts), TW_ERR_UNSUPPORTED);
	ic[5] = ic[5] == '9' ? '8' : (char)(ic[5] + 1);
	CHECK_ERR(tw_store_resync(st, ic, rand_, auts), TW_ERR_NOTFOUND);
	tw_store_close(st);
	tw_wipe(&s, sizeof(s));
	tw_wipe(&c, sizeof(c));
	tw_wipe(&u, sizeof(u));
}

/* ---- identity ops --------------------------------------------------------- */

static void random_state(struct tw_eap_reauth_state *r, const char *imsi, uint8_t method)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	memcpy(r->imsi, imsi, 15);
	r->imsi_len = 15;
	r->counter = (uint16_t)tw_test_random_u32();
	tw_test_random(r->k_encr, 16);
	r->k_aut_len = method == 50 ? 32 : 16;
	tw_test_random(r->k_aut, r->k_aut_len);
	if (method == 50)
		tw_test_random(r->k_re, 32);
	else
		tw_test_random(r->mk, 20);
}

static bool state_eq(const struct tw_eap_reauth_state *a, const struct tw_eap_reauth_state *b)
{
	return a->method == b->method && a->imsi_len == b->imsi_len &&
	       memcmp(a->imsi, b->imsi, a->imsi_len) == 0 && a->counter == b->counter &&
	       memcmp(a->k_encr, b->k_encr, 16) == 0 && a->k_aut_len == b->k_aut_len &&
	       memcmp(a->k_aut, b->k_aut, 32) == 0 && memcmp(a->mk, b->mk, 20) == 0 &&
	       memcmp(a->k_re, b->k_re, 32) == 0;
}

#define ID(s) (const uint8_t *)(s), strlen(s)

/*
 * The ids of these tests are minted by the store (schema 3: an id carries
 * its IMSI, encrypted, and names that IMSI's row; the store takes no
 * other): mid(ops, "2pseudo-one", imsi, 15) is the id minted for imsi
 * under that name, the same on every use in this run (one KEK), with the
 * name's leading digit and "@realm". Without an IMSI: the id minted
 * before under that name (or one of an IMSI no test has). A name the
 * store cannot mint for (a bad IMSI) is used as it is. One thread only.
 */
static struct {
	char name[48], imsi[16];
	char id[TW_EAP_ID_MAX + 1];
} minted[1024];
static size_t nminted;

static void mint_into(const struct tw_eap_identity_ops *ops, const char *name, const char *imsi,
		      size_t imsi_len, char *out, size_t max)
{
	const char *at = strchr(name, '@');
	uint8_t body[TW_EAP_GEN_ID_BODY_MAX];
	size_t n = 0;

	if (ops->mint_body(ops->arg, name[0], imsi, imsi_len, body, sizeof(body), &n) != TW_OK)
		snprintf(out, max, "%s", name);
	else
		snprintf(out, max, "%c%.*s%s", name[0], (int)n, (const char *)body, at ? at : "");
}

static const char *mid(const struct tw_eap_identity_ops *ops, const char *name, const char *imsi,
		       size_t imsi_len)
{
	for (size_t i = 0; i < nminted; i++)
		if (strcmp(minted[i].name, name) == 0 &&
		    (imsi == NULL || (strlen(minted[i].imsi) == imsi_len &&
				      memcmp(minted[i].imsi, imsi, imsi_len) == 0)))
			return minted[i].id;
	if (!CHECK(nminted < sizeof(minted) / sizeof(minted[0])))
		return name;
	if (imsi == NULL) {
		imsi = "999990000000000";
		imsi_len = 15;
	}
	snprintf(minted[nminted].name, sizeof(minted[nminted].name), "%s", name);
	snprintf(minted[nminted].imsi, sizeof(minted[nminted].imsi), "%.*s", (int)imsi_len, imsi);
	mint_into(ops, name, imsi, imsi_len, minted[nminted].id, sizeof(minted[nminted].id));
	return minted[nminted++].id;
}

#define MID(name) ID(mid(ops, (name), NULL, 0))
#define MIDP(name, imsi) ID(mid(ops, (name), (imsi), 15))
#define MIDR(name, r) ID(mid(ops, (name), (r).imsi, (r).imsi_len))

/* An IMSI's pseudonyms and re-auth ids in its row of table ident */
#define P_COUNT "SELECT coalesce((SELECT (p0 IS NOT NULL) + (p1 IS NOT NULL)" \
		" FROM ident3v WHERE imsi = ?1), 0)"
#define R_COUNT "SELECT coalesce((SELECT (r0 IS NOT NULL) + (r1 IS NOT NULL)" \
		" FROM ident3v WHERE imsi = ?1), 0)"
/* the sealed state of a re-auth id */
#define R_STATE "SELECT r0_state FROM ident3v WHERE r0 = ?1" \
		" UNION ALL SELECT r1_state FROM ident3v WHERE r1 = ?1"


/* ---- schema 3 at rest, recomputed with OpenSSL from its description ---- */

static const char label_id[] = "twag store: key of minted identities (schema 3)";
static const char label_state[] = "twag store: key of re-auth state (schema 3)";
static const char label_state_mac[] = "twag store: MAC key of re-auth state (schema 3)";

static void ossl_key(const char *label, uint8_t out[32])
{
	unsigned n = 0;

	CHECK(HMAC(EVP_sha256(), kek, 32, (const uint8_t *)label, strlen(label), out, &n) != NULL &&
	      n == 32);
}

/* An id as twagd minted it before the leading digit was bound into the
 * block (octet 9 zero), made with OpenSSL: lead, the 26 characters of
 * AES-128-ECB(len | BCD IMSI | 0 | 6 random) under HMAC-SHA-256(KEK,
 * label_id) cut to 16 (5 bits each, most significant first), suffix. */
/* An id as mint_body lays it out, made with OpenSSL here: octet 9 = oct9,
 * then with minute >= 0 the mint minute in octets 10..12 and 3 random
 * octets, else 6 random octets. */
static void ossl_id(char lead, const char *imsi, uint8_t oct9, int32_t minute, const char *suffix,
		    char *out, size_t max);

static void ossl_legacy_id(char lead, const char *imsi, const char *suffix, char *out, size_t max)
{
	ossl_id(lead, imsi, 0, -1, suffix, out, max);
}

static void ossl_id(char lead, const char *imsi, uint8_t oct9, int32_t minute, const char *suffix,
		    char *out, size_t max)
{
	static const char a32[] = "0123456789abcdefghijklmnopqrstuv";
	uint8_t k[32], b[16], c[32];
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	size_t n = strlen(imsi), o = 0;
	int cl = 0;
	char body[27];

	memset(b, 0xff, 9);
	b[0] = (uint8_t)n;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(imsi[i] - '0');

		b[1 + i / 2] = (uint8_t)(i % 2 ? (b[1 + i / 2] & 0xf0) | d : d << 4 | 0x0f);
	}
	b[9] = oct9;
	tw_test_random(b + 10, 6);
	if (minute >= 0) {
		b[10] = (uint8_t)(minute >> 16);
		b[11] = (uint8_t)(minute >> 8);
		b[12] = (uint8_t)minute;
	}
	ossl_key(label_id, k);
	CHECK(x != NULL && EVP_EncryptInit_ex(x, EVP_aes_128_ecb(), NULL, k, NULL) == 1 &&
	      EVP_CIPHER_CTX_set_padding(x, 0) == 1 && EVP_EncryptUpdate(x, c, &cl, b, 16) == 1 &&
	      cl == 16);
	EVP_CIPHER_CTX_free(x);
	for (size_t bit = 0; bit < 130; bit += 5, o++) {
		unsigned v = 0;

		for (size_t j = bit; j < bit + 5; j++)
			v = v << 1 | (j < 128 ? (c[j / 8] >> (7 - j % 8)) & 1u : 0u);
		body[o] = a32[v];
	}
	body[26] = '\0';
	snprintf(out, max, "%c%s%s", lead, body, suffix);
	tw_wipe(k, sizeof(k));
}

/* A sealed re-auth state (IV 16 | ciphertext 129 | tag 32) opened: the
 * tag HMAC-SHA-256 under HMAC-SHA-256(KEK, label_state_mac) over
 * len(id) | id | IV | ciphertext, then AES-256-CTR under
 * HMAC-SHA-256(KEK, label_state) from the IV as the counter block. */
static bool ossl_open_state(const uint8_t *w, size_t wl, const char *id, uint8_t plain[129])
{
	uint8_t k[32], km[32], mac[32], msg[1 + TW_EAP_ID_MAX + 16 + 129];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	size_t idl = strlen(id);
	unsigned mn = 0;
	int n = 0;
	bool ok = wl == 16 + 129 + 32;

	ossl_key(label_state, k);
	ossl_key(label_state_mac, km);
	if (ok) {
		msg[0] = (uint8_t)idl;
		memcpy(msg + 1, id, idl);
		memcpy(msg + 1 + idl, w, 16 + 129);
		ok = HMAC(EVP_sha256(), km, 32, msg, 1 + idl + 16 + 129, mac, &mn) != NULL &&
		     memcmp(mac, w + 16 + 129, 32) == 0;
	}
	ok = ok && c != NULL && EVP_DecryptInit_ex(c, EVP_aes_256_ctr(), NULL, k, w) == 1 &&
	     EVP_DecryptUpdate(c, plain, &n, w + 16, 129) == 1 && n == 129;
	EVP_CIPHER_CTX_free(c);
	tw_wipe(k, sizeof(k));
	tw_wipe(km, sizeof(km));
	tw_wipe(msg, sizeof(msg));
	return ok;
}

/* The IMSI inside a minted id's body, decrypted with OpenSSL (AES-128-ECB
 * under HMAC-SHA-256(KEK, label_id) cut to 16): the layout of ident.c,
 * 0 length | 1..8 BCD digits, high nibble first, 0xf fill | 9 the id's
 * leading digit | 10..15 random. Returns the digits ("" when the layout
 * does not hold). */
static void ossl_id_imsi(const char *id, char imsi[16], uint8_t rnd[6])
{
	static const char a32[] = "0123456789abcdefghijklmnopqrstuv";
	uint8_t k[32], c[16] = { 0 }, b[32];
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	unsigned acc = 0, bits = 0, o = 0;
	int n = 0;
	bool ok = strlen(id) >= 27;

	imsi[0] = '\0';
	for (int i = 0; ok && i < 26; i++) {
		const char *p = strchr(a32, id[1 + i]);

		ok = p != NULL && *p != '\0';
		acc = (acc << 5 | (unsigned)(ok ? p - a32 : 0)) & 0x1fff;
		bits += 5;
		if (bits >= 8 && o < 16) {
			bits -= 8;
			c[o++] = (uint8_t)(acc >> bits);
		}
	}
	ossl_key(label_id, k);
	ok = ok && x != NULL && EVP_DecryptInit_ex(x, EVP_aes_128_ecb(), NULL, k, NULL) == 1 &&
	     EVP_CIPHER_CTX_set_padding(x, 0) == 1 && EVP_DecryptUpdate(x, b, &n, c, 16) == 1 &&
	     n == 16;
	EVP_CIPHER_CTX_free(x);
	/* octet 9: the leading digit with the mint-time flag */
	ok = ok && b[0] >= 5 && b[0] <= 15 && b[9] == ((uint8_t)id[0] | 0x80);
	for (int i = 0; ok && i < 16; i++) {
		unsigned d = i % 2 ? b[1 + i / 2] & 15 : b[1 + i / 2] >> 4;

		ok = i < b[0] ? d <= 9 : d == 15;
		imsi[i] = (char)('0' + d);
	}
	if (ok) {
		imsi[b[0]] = '\0';
		memcpy(rnd, b + 10, 6);
	} else {
		imsi[0] = '\0';
	}
	tw_wipe(k, sizeof(k));
}

/* A new store under o with one Milenage subscriber (imsi, provisioned as
 * *s) and another IMSI it does not have (other). NULL if it did not open. */
static struct tw_store *ident_open(struct tw_store_opts *o, char imsi[16], char other[16],
				   struct tw_subscriber *s)
{
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store *st;

	db_remove();
	st = open_with(o);
	if (st == NULL)
		return NULL;
	random_imsi(imsi);
	random_imsi(other);
	make_milenage(s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, s, false));
	return st;
}

/*
 * opts.ident_flush_ms: identity rows are written behind once per period
 * (or when a quarter of the table waits), not at the write-behind
 * thread's 100 ms wake-ups, nor at the expiry sweeps (rounds of their
 * own). A period of 4 s with a sweep due at every wake-up: a pseudonym
 * stored is not in the database 2 s later, and is there within 4 s more. Then the
 * default period (1 s): not there 0.5 s after the open, there within 3 s.
 * A close writes what waits.
 */
static void test_ident_flush_period(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_subscriber s;
	char imsi[16], other[16], p[64];
	struct tw_store *st;
	int i;

	o.ident_flush_ms = 4000;
	o.sweep_ms = 100; /* a sweep due at every wake-up: not a round of rows */
	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	usleep(200000); /* a round of the subscriber's own writes, if any */
	ops = tw_store_identity_ops(st);
	mint_into(ops, "2", imsi, 15, p, sizeof(p));
	CHECK_OK(ops->pseudonym_store(ops->arg, ID(p), imsi, 15));
	usleep(2000000);
	CHECK(raw_int(P_COUNT, imsi) == 0);
	for (i = 0; i < 80 && raw_int(P_COUNT, imsi) != 1; i++)
		usleep(50000);
	CHECK(raw_int(P_COUNT, imsi) == 1);
	mint_into(ops, "7", other, 15, p, sizeof(p));
	CHECK_OK(ops->pseudonym_store(ops->arg, ID(p), other, 15));
	tw_store_close(st);
	CHECK(raw_int(P_COUNT, other) == 1);

	o.ident_flush_ms = 0;
	o.sweep_ms = 0;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	mint_into(ops, "2", imsi, 15, p, sizeof(p));
	CHECK_OK(ops->pseudonym_store(ops->arg, ID(p), imsi, 15));
	usleep(500000);
	CHECK(raw_int(P_COUNT, imsi) == 1); /* not at every 100 ms wake-up */
	for (i = 0; i < 60 && raw_int(P_COUNT, imsi) != 2; i++)
		usleep(50000);
	CHECK(raw_int(P_COUNT, imsi) == 2);
	tw_store_close(st);
}

/*
 * One write-behind round sorts its batch by row (one read and write per
 * IMSI, the rows in key order) and must keep each IMSI's entries in the
 * order they came: 40 IMSIs, five pseudonyms and five re-auth ids each,
 * stored round-robin (every IMSI's entries spread over the whole batch),
 * written in one round (the first, 5 s after the open) as one row write
 * per IMSI; then exactly the newest two of each kind resolve per IMSI,
 * both in the store that wrote them (the ids the round pushed out of the
 * rows leave memory after its commit: 600 of them, more than the first
 * allocation of the list that holds them) and after a reopen. A sort that
 * is not stable keeps others.
 */
enum { RO_NI = 100, RO_NE = 5 };

/* test_ident_round_order: the newest two of each kind resolve, the
 * others not */
static void round_order_check(const struct tw_eap_identity_ops *ops, const char *when,
			      char ps[RO_NI][RO_NE][64], char ra[RO_NI][RO_NE][96],
			      char imsi[RO_NI][16])
{
	struct tw_eap_reauth_state got;
	unsigned ok = 0, gone = 0;
	char out[16];
	size_t n = 0;

	for (int i = 0; i < RO_NI; i++) {
		for (int k = 0; k < RO_NE; k++) {
			bool newest = k >= RO_NE - 2;
			int rp = ops->pseudonym_lookup(ops->arg, ID(ps[i][k]), out, &n);
			int rr = ops->reauth_lookup(ops->arg, ID(ra[i][k]), &got);

			if (newest && rp == TW_OK && n == 15 && memcmp(out, imsi[i], 15) == 0 &&
			    rr == TW_OK && got.counter == k)
				ok++;
			if (!newest && rp == TW_ERR_NOTFOUND && rr == TW_ERR_NOTFOUND)
				gone++;
		}
	}
	if (!CHECK(ok == RO_NI * 2 && gone == RO_NI * (RO_NE - 2)))
		tw_note("round order (%s): %u of %d newest found, %u of %d older gone", when, ok,
			RO_NI * 2, gone, RO_NI * (RO_NE - 2));
	tw_wipe(&got, sizeof(got));
}

/* Resident set of this process in octets (/proc/self/statm), 0 unknown. */
static size_t rss_octets(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * tw_store_populate commits the identity table (about 500 octets per
 * --identity-cache entry and its index) before any traffic: the resident
 * set grows by at least the entries' share, and the table works as
 * before (stored ids resolve, written behind as usual). Both the
 * persistent and the volatile table.
 */
static void test_populate(void)
{
	enum { CAP = 32768 };
	struct tw_store_opts o = opts_default();

	CHECK_ERR(tw_store_populate(NULL), TW_ERR_INVAL);
	for (int vol = 0; vol < 2; vol++) {
		const struct tw_eap_identity_ops *ops;
		struct tw_store *st;
		char imsi[16], out[16], ps[64];
		size_t before, after, n = 0;
		static const uint8_t amf[2] = { 0x80, 0x00 };
		struct tw_subscriber s;

		o.ident_cache = CAP;
		o.ident_volatile = vol != 0;
		o.ident_flush_ms = 100;
		st = open_with(&o);
		if (st == NULL)
			return;
		before = rss_octets();
		CHECK_OK(tw_store_populate(st));
		after = rss_octets();
		if (!CHECK(before > 0 && after >= before + (size_t)CAP * 450))
			tw_note("populate (%s): resident %zu -> %zu octets for %d entries",
				vol ? "volatile" : "persistent", before, after, CAP);
		ops = tw_store_identity_ops(st);
		random_imsi(imsi);
		make_milenage(&s, imsi, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s, false));
		tw_wipe(&s, sizeof(s));
		mint_into(ops, "2", imsi, 15, ps, sizeof(ps));
		CHECK_OK(ops->pseudonym_store(ops->arg, ID(ps), imsi, 15));
		CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(ps), out, &n));
		CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
		CHECK_OK(store_ident_flush(st));
		tw_store_close(st);
	}
}

static void test_ident_round_order(void)
{
	enum { NI = RO_NI, NE = RO_NE };
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_subscriber s;
	static char ps[NI][NE][64], ra[NI][NE][96];
	static char imsi[NI][16];
	char other[16];
	struct tw_eap_reauth_state r;
	struct tw_store_stats before, after;
	struct tw_store *st;

	o.ident_flush_ms = 5000; /* the first round after all the stores */
	o.ident_cache = 4096;    /* a round at 1024 pending: not reached */
	st = ident_open(&o, imsi[0], other, &s);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	memset(&r, 0, sizeof(r));
	r.method = 18;
	r.imsi_len = 15;
	r.k_aut_len = 16;
	for (int i = 1; i < NI; i++) {
		static const uint8_t amf[2] = { 0x80, 0x00 };

		random_imsi(imsi[i]);
		make_milenage(&s, imsi[i], amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s, false));
	}
	for (int k = 0; k < NE; k++) {
		for (int i = 0; i < NI; i++) {
			mint_into(ops, "2", imsi[i], 15, ps[i][k], sizeof(ps[i][k]));
			mint_into(ops, "4@wlan.example", imsi[i], 15, ra[i][k], sizeof(ra[i][k]));
			CHECK_OK(ops->pseudonym_store(ops->arg, ID(ps[i][k]), imsi[i], 15));
			memcpy(r.imsi, imsi[i], 16);
			r.counter = (uint16_t)k;
			tw_test_random(r.k_encr, sizeof(r.k_encr));
			CHECK_OK(ops->reauth_store(ops->arg, ID(ra[i][k]), &r));
		}
	}
	CHECK(raw_int(P_COUNT, imsi[0]) == 0); /* nothing written yet */
	tw_store_get_stats(st, &before);
	CHECK(before.ident_written == 0 && before.ident_row_writes == 0);
	/* the round at the period's end takes all 400 entries at once */
	for (int i = 0; i < 200; i++) {
		tw_store_get_stats(st, &after);
		if (after.ident_written > 0)
			break;
		usleep(50000);
	}
	/* 400 entries, one write per IMSI */
	CHECK(after.ident_written == NI * NE * 2);
	if (!CHECK(after.ident_row_writes == NI))
		tw_note("round order: %llu row writes for %d IMSIs",
			(unsigned long long)after.ident_row_writes, NI);
	round_order_check(ops, "in memory", ps, ra, imsi);
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	round_order_check(ops, "reopened", ps, ra, imsi);
	tw_wipe(&r, sizeof(r));
	tw_store_close(st);
}

/*
 * Identities in memory only (opts.ident_volatile): a pseudonym is not
 * stored but resolved by decrypting it (its IMSI is in it), so it still
 * resolves after a reopen; fast re-authentication contexts live in the
 * bounded table only (the oldest dropped when it is full) and are gone
 * after a reopen; nothing reaches the database.
 */
static void test_identity_volatile(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r[40], got;
	struct tw_subscriber s;
	static struct tw_subscriber many[40];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	char imsi[16], other[16], out[16], name[32];
	uint8_t junk[1 + 26];
	size_t n = 0;
	unsigned found = 0, first_found = 40;
	struct tw_store *st;

	o.ident_volatile = true;
	o.ident_cache = 16;
	o.ident_flush_ms = 100; /* rounds run (and find nothing) in the waits */
	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);

	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2vol-pseudo", imsi), imsi, 15));
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MIDP("2vol-pseudo", imsi), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0 && out[15] == '\0');
	/* one of another IMSI is refused; one not minted here is unknown */
	CHECK_ERR(ops->pseudonym_store(ops->arg, MIDP("2vol-pseudo", imsi), other, 15),
		  TW_ERR_INVAL);
	junk[0] = '2';
	for (size_t i = 1; i < sizeof(junk); i++)
		junk[i] = (uint8_t)('a' + (i * 7) % 22);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, junk, sizeof(junk), out, &n), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, (const uint8_t *)"", 0, out, &n),
		  TW_ERR_NOTFOUND);
	/* an id's body under another leading digit does not pass: a re-auth
	 * id seen on the air as a pseudonym, an EAP-AKA pseudonym as an
	 * EAP-AKA' one; nor does an id minted before the digit was bound
	 * (no row holds the exact id here) */
	{
		char alt[96], legacy[96];

		snprintf(alt, sizeof(alt), "%s", mid(ops, "8vol-seen@wlan.example", imsi, 15));
		alt[0] = '7';
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(alt), out, &n), TW_ERR_NOTFOUND);
		snprintf(alt, sizeof(alt), "%s", mid(ops, "2vol-pseudo", imsi, 15));
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(alt), out, &n), TW_OK);
		alt[0] = '7';
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(alt), out, &n), TW_ERR_NOTFOUND);
		ossl_legacy_id('2', imsi, "", legacy, sizeof(legacy));
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(legacy), out, &n), TW_ERR_NOTFOUND);
	}

	/* re-auth contexts: stored, found, removed */
	random_state(&r[0], imsi, 50);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("8vol-reauth@wlan.example", r[0]), &r[0]));
	CHECK_OK(ops->reauth_lookup(ops->arg, MIDR("8vol-reauth@wlan.example", r[0]), &got));
	CHECK(state_eq(&got, &r[0]));
	CHECK_OK(ops->reauth_remove(ops->arg, MIDR("8vol-reauth@wlan.example", r[0])));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MIDR("8vol-reauth@wlan.example", r[0]), &got),
		  TW_ERR_NOTFOUND);
	/* 40 subscribers' contexts through a table of 16: the newest stay,
	 * the oldest went */
	for (unsigned i = 0; i < 40; i++) {
		char mi[16];

		random_imsi(mi);
		make_milenage(&many[i], mi, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &many[i], false));
		random_state(&r[i], many[i].imsi, i % 3 == 0 ? 18 : i % 3 == 1 ? 23 : 50);
		snprintf(name, sizeof(name), "4vol-%u@wlan.example", i);
		CHECK_OK(ops->reauth_store(ops->arg, MIDR(name, r[i]), &r[i]));
	}
	for (unsigned i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "4vol-%u@wlan.example", i);
		if (ops->reauth_lookup(ops->arg, MIDR(name, r[i]), &got) == TW_OK) {
			found++;
			CHECK(state_eq(&got, &r[i]));
			if (i < first_found)
				first_found = i;
		}
	}
	CHECK(found == 16 && first_found == 24);
	/* one subscriber's full authentications: its newest two contexts
	 * stay (the peer may have missed the newest), older ones go at once,
	 * as in the written-behind row; others' are untouched */
	for (unsigned i = 0; i < 5; i++) {
		random_state(&r[i], imsi, 23);
		snprintf(name, sizeof(name), "4vol-full-%u@wlan.example", i);
		CHECK_OK(ops->reauth_store(ops->arg, MIDR(name, r[i]), &r[i]));
	}
	for (unsigned i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "4vol-full-%u@wlan.example", i);
		CHECK_ERR(ops->reauth_lookup(ops->arg, MIDR(name, r[i]), &got),
			  i >= 3 ? TW_OK : TW_ERR_NOTFOUND);
	}
	CHECK(store_ident_index_sound(st));
	found = 0;
	for (unsigned i = 27; i < 40; i++) {
		snprintf(name, sizeof(name), "4vol-%u@wlan.example", i);
		found += ops->reauth_lookup(ops->arg, MIDR(name, r[i]), &got) == TW_OK;
	}
	CHECK(found == 13); /* 16 - the 3 the table dropped for the 5 above (2 left) */
	/* a replaced subscriber (a new card): its contexts no longer open */
	CHECK_OK(tw_store_sub_put(st, &s, true));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MIDR("4vol-full-4@wlan.example", r[4]), &got),
		  TW_ERR_NOTFOUND);
	random_state(&r[0], imsi, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("8vol-again@wlan.example", r[0]), &r[0]));
	usleep(300000); /* write-behind rounds ran: nothing for them */
	CHECK(raw_int("SELECT count(*) FROM ident WHERE ?1 IS NOT NULL", imsi) == 0);
	tw_store_close(st);

	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MIDP("2vol-pseudo", imsi), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	CHECK_ERR(ops->reauth_lookup(ops->arg, MIDR("8vol-again@wlan.example", r[0]), &got),
		  TW_ERR_NOTFOUND);
	CHECK(raw_int("SELECT count(*) FROM ident WHERE ?1 IS NOT NULL", imsi) == 0);
	tw_store_close(st);
	for (unsigned i = 0; i < 40; i++)
		tw_eap_reauth_state_wipe(&r[i]);
	tw_wipe(&s, sizeof(s));
	tw_wipe(many, sizeof(many));
}

/*
 * Volatile pseudonyms have a lifetime: each carries the minute it was
 * minted (octets 10..12 of its block, flag 0x80 on octet 9), and resolves
 * for pseudonym_ttl after it, or up to 10 minutes before (a clock set
 * back); one without a mint time does not resolve. Ids built here with
 * OpenSSL at chosen ages, and a minted one opened here.
 */
static void test_pseudonym_ttl(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_subscriber s;
	char imsi[16], other[16], out[16], dec[16], id[96];
	uint8_t b[6];
	size_t n = 0;
	struct tw_store *st;
	static const struct {
		int age_min; /* negative: ahead of the clock */
		int want;
	} ages[] = {
		{ 0, TW_OK }, { 59, TW_OK }, { 60, TW_OK }, { 62, TW_ERR_NOTFOUND },
		{ 100000, TW_ERR_NOTFOUND }, { -5, TW_OK }, { -9, TW_OK },
		{ -11, TW_ERR_NOTFOUND }, { -1000, TW_ERR_NOTFOUND },
	};

	o.ident_volatile = true;
	o.pseudonym_ttl = 3600;
	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	int32_t now = (int32_t)((time(NULL) / 60) & 0xffffff);

	snprintf(id, sizeof(id), "%s", mid(ops, "2ttl-minted", imsi, 15));
	ossl_id_imsi(id, dec, b); /* octets 10..15 */
	CHECK(strcmp(dec, imsi) == 0);
	int32_t mint_min = (int32_t)((uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2]);
	CHECK(mint_min >= now - 1 && mint_min <= now + 1);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(id), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
		int32_t m = (int32_t)((uint32_t)(now - ages[i].age_min) & 0xffffff);

		/* a minute boundary between here and the look-up: skip the edges */
		if (ages[i].age_min == 60 || ages[i].age_min == -9)
			if (time(NULL) % 60 >= 58)
				continue;
		ossl_id('2', imsi, '2' | 0x80, m, "@wlan.example", id, sizeof(id));
		n = 0;
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(id), out, &n), ages[i].want);
		CHECK(ages[i].want != TW_OK || (n == 15 && memcmp(out, imsi, 15) == 0));
	}
	/* no mint time (an earlier version's id): never expired, not taken */
	ossl_id('2', imsi, '2', -1, "", id, sizeof(id));
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(id), out, &n), TW_ERR_NOTFOUND);
	/* the flag without the right digit under it is no better */
	ossl_id('2', imsi, '7' | 0x80, now, "", id, sizeof(id));
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(id), out, &n), TW_ERR_NOTFOUND);
	tw_store_close(st);

	/* persistent identities: the row decides, not the clock; an old
	 * untimed id of a row is still found (test_identity), and a timed
	 * id with no row is unknown whatever its age */
	o = opts_default();
	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	ossl_id('2', imsi, '2' | 0x80, now, "", id, sizeof(id));
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(id), out, &n), TW_ERR_NOTFOUND);
	CHECK_OK(ops->pseudonym_store(ops->arg, ID(id), imsi, 15));
	CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(id), out, &n));
	tw_store_close(st);
}

/*
 * tw_store_check (`twag store check`): a sound store has no problem; each
 * kind of damage made here with SQLite behind the store's back is
 * reported, one line each, and the check reads on past it.
 */
struct check_log {
	unsigned n;
	char all[1024];
};

static void check_say(void *arg, const char *text)
{
	struct check_log *l = arg;
	size_t u = strlen(l->all);

	l->n++;
	snprintf(l->all + u, sizeof(l->all) - u, "%s; ", text);
}

static unsigned store_problems(const char *want)
{
	struct tw_store_opts o = opts_default();
	struct check_log l = { 0 };
	unsigned problems = 99, subs = 0, idents = 0;
	struct tw_store *st;

	o.read_only = true;
	st = open_with(&o);
	if (st == NULL)
		return 99;
	CHECK_OK(tw_store_check(st, check_say, &l, &problems, &subs, &idents));
	tw_store_close(st);
	CHECK(l.n == problems && subs >= 2);
	if (want != NULL && !CHECK(strstr(l.all, want) != NULL))
		printf("note: test_store: check said '%s', expected '%s'\n", l.all, want);
	return problems;
}

static void damage(const char *sql)
{
	sqlite3 *h = NULL;

	CHECK(sqlite3_open(db, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
}

/* The one identity row's value through fn(value, &len), written back. */
static void damage_ident(void (*fn)(uint8_t *v, size_t *len))
{
	sqlite3 *h = NULL;
	sqlite3_stmt *q = NULL;
	uint8_t v[4096];
	size_t n = 0;
	int64_t k = 0;

	CHECK(sqlite3_open(db, &h) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(h, "SELECT k, v FROM ident", -1, &q, NULL) == SQLITE_OK);
	if (CHECK(sqlite3_step(q) == SQLITE_ROW)) {
		k = sqlite3_column_int64(q, 0);
		n = (size_t)sqlite3_column_bytes(q, 1);
		if (CHECK(n <= sizeof(v)))
			memcpy(v, sqlite3_column_blob(q, 1), n);
	}
	sqlite3_finalize(q);
	fn(v, &n);
	CHECK(sqlite3_prepare_v2(h, "UPDATE ident SET v = ?1 WHERE k = ?2", -1, &q, NULL) ==
	      SQLITE_OK);
	sqlite3_bind_blob(q, 1, v, (int)n, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 2, k);
	CHECK(sqlite3_step(q) == SQLITE_DONE);
	sqlite3_finalize(q);
	sqlite3_close(h);
}

static void grow(uint8_t *v, size_t *n) { v[(*n)++] = 0; }
static void shrink(uint8_t *v, size_t *n) { (void)v; (*n)--; }
/* the row ends with the newest re-auth slot, sealed state (.. | tag 32) |
 * stamp 8, then the second slot's length 0 */
static void flip_stamp(uint8_t *v, size_t *n) { v[*n - 2] ^= 1; }
static void flip_tag(uint8_t *v, size_t *n) { v[*n - 10] ^= 1; }

static void test_store_check(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r;
	struct tw_subscriber s, s2;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	char imsi[16], other[16], sql[256];
	struct tw_store *st;

	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	make_milenage(&s2, other, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s2, false));
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2chk-pseudo", imsi), imsi, 15));
	random_state(&r, imsi, 50);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("8chk-reauth@wlan.example", r), &r));
	tw_store_close(st); /* written behind at close */
	CHECK(store_problems(NULL) == 0);

	/* SEQ_HE above the durable mark */
	snprintf(sql, sizeof(sql), "UPDATE subscriber SET seq_he = sqn_reserved + 3 WHERE imsi = '%s'",
		 imsi);
	damage(sql);
	CHECK(store_problems("above the durable mark") == 1);
	/* and a key wrap that does not unwrap, on the other row: two */
	snprintf(sql, sizeof(sql), "UPDATE subscriber SET k = zeroblob(24) WHERE imsi = '%s'", other);
	damage(sql);
	CHECK(store_problems("do not unwrap") == 2);
	snprintf(sql, sizeof(sql), "UPDATE subscriber SET seq_he = 0 WHERE imsi = '%s'", imsi);
	damage(sql);
	snprintf(sql, sizeof(sql), "UPDATE subscriber SET alg = 77 WHERE imsi = '%s'", other);
	damage(sql);
	CHECK(store_problems("bad columns") == 1);
	snprintf(sql, sizeof(sql), "DELETE FROM subscriber WHERE imsi = '%s'", other);
	damage(sql);
	CHECK_OK(tw_store_sub_put(st = open_db(), &s2, false));
	tw_store_close(st);
	CHECK(store_problems(NULL) == 0);

	/* identity rows: an octet too many, back; the stamp changed (not
	 * sealed: no problem); the sealed state's tag changed; a row under a
	 * key that names no IMSI; the row moved to another IMSI */
	damage_ident(grow);
	CHECK(store_problems("does not decode") == 1);
	damage_ident(shrink);
	CHECK(store_problems(NULL) == 0);
	damage_ident(flip_stamp);
	CHECK(store_problems(NULL) == 0);
	damage_ident(flip_tag);
	CHECK(store_problems("does not open") == 1);
	damage_ident(flip_tag);
	damage("INSERT INTO ident (k, v) VALUES (3, x'01')");
	CHECK(store_problems("names no IMSI") == 1);
	damage("DELETE FROM ident WHERE k = 3");
	snprintf(sql, sizeof(sql), "UPDATE ident SET k = %lld",
		 (long long)store_ident_row_key(other, 15));
	damage(sql);
	CHECK(store_problems("not minted") == 1);
	tw_wipe(&s, sizeof(s));
	tw_wipe(&s2, sizeof(s2));
}

static void test_identity(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, r2, got;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	char imsi[16], other[16], out[16];
	uint8_t a[32], b[32];
	size_t n = 0;
	struct tw_store *st;

	o.ident_flush_ms = 100; /* the rounds the waits below are for */
	st = ident_open(&o, imsi, other, &s);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);

	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2pseudo-one", imsi), imsi, 15));
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2pseudo-one"), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0 && out[15] == '\0');
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID("2pseudo-two"), out, &n), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, (const uint8_t *)"", 0, out, &n),
		  TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_store(ops->arg, MID("2bad"), "12a45", 5), TW_ERR_INVAL);
	/* an id minted before the leading digit was bound (octet 9 zero, as
	 * in rows an older twagd wrote) still works where a row holds it;
	 * one of ours under another digit is not of this IMSI's */
	{
		char legacy[96], alt[96];

		ossl_legacy_id('3', other, "", legacy, sizeof(legacy));
		CHECK_OK(ops->pseudonym_store(ops->arg, ID(legacy), other, 15));
		CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(legacy), out, &n));
		CHECK(n == 15 && memcmp(out, other, 15) == 0);
		snprintf(alt, sizeof(alt), "%s", mid(ops, "2pseudo-one", NULL, 0));
		alt[0] = '7';
		CHECK_ERR(ops->pseudonym_store(ops->arg, ID(alt), imsi, 15), TW_ERR_INVAL);
	}

	random_state(&r1, imsi, 50);
	random_state(&r2, imsi, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("8reauth-1@wlan.example", r1), &r1));
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reauth-2@wlan.example", r2), &r2));
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("8reauth-1@wlan.example"), &got));
	CHECK(state_eq(&got, &r1));
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("4reauth-2@wlan.example"), &got));
	CHECK(state_eq(&got, &r2));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("8reauth-3@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	CHECK(tw_ct_is_zero(&got, sizeof(got)));
	CHECK_OK(ops->reauth_remove(ops->arg, MID("4reauth-2@wlan.example")));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-2@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	/* a state of a subscriber the store does not have is not accepted
	 * back (deleted since: no fast re-authentication) */
	random_state(&r2, other, 18);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("5reauth-4@wlan.example", r2), &r2));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("5reauth-4@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	r2.k_aut_len = 20;
	CHECK_ERR(ops->reauth_store(ops->arg, MIDR("5bad@x", r2), &r2), TW_ERR_INVAL);

	/* random */
	CHECK_OK(ops->random(ops->arg, a, sizeof(a)));
	CHECK_OK(ops->random(ops->arg, b, sizeof(b)));
	CHECK(memcmp(a, b, sizeof(a)) != 0);

	/* written behind within a round (a second by default), without a
	 * close */
	{
		uint8_t w[200], plain[200];
		size_t wl, pl = 0;

		for (int i = 0; i < 100 && raw_blob(R_STATE, MID("8reauth-1@wlan.example"), w,
						    sizeof(w)) == 0; i++)
			usleep(50000);
		wl = raw_blob(R_STATE, MID("8reauth-1@wlan.example"), w, sizeof(w));
		CHECK(wl == 16 + 129 + 32);
		/* sealed under a key from the KEK (opened here with OpenSSL):
		 * the serialisation with K_encr at 20, K_aut at 37 */
		CHECK(ossl_open_state(w, wl, mid(ops, "8reauth-1@wlan.example", NULL, 0), plain));
		pl = 129;
		CHECK(pl == 129 && memcmp(plain + 20, r1.k_encr, 16) == 0 &&
		      memcmp(plain + 37, r1.k_aut, 32) == 0);
		CHECK(raw_blob(R_STATE,
			       MID("4reauth-2@wlan.example"), w, sizeof(w)) == 0);
		CHECK(raw_int(P_COUNT, imsi) == 1);
		tw_wipe(plain, sizeof(plain));
	}
	CHECK(!on_disk(r1.k_encr, 16));
	CHECK(!on_disk(r1.k_aut, 32));
	CHECK(!on_disk(r1.k_re, 32));

	/* persistence across close / reopen (lookups from the database) */
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2pseudo-one"), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("8reauth-1@wlan.example"), &got));
	CHECK(state_eq(&got, &r1));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-2@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	/* removed after a reload, then reopened: stays removed */
	CHECK_OK(ops->reauth_remove(ops->arg, MID("8reauth-1@wlan.example")));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("8reauth-1@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	/* one-time pseudonyms: the newest two per IMSI are kept */
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2pseudo-b", imsi), imsi, 15));
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2pseudo-c", imsi), imsi, 15));
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2pseudo-d", imsi), imsi, 15));
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("8reauth-1@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID("2pseudo-one"), out, &n), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID("2pseudo-b"), out, &n), TW_ERR_NOTFOUND);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2pseudo-c"), out, &n));
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2pseudo-d"), out, &n));
	/* a replaced subscriber (a new card: new keys) keeps no fast
	 * re-authentication of the old one, in memory or after a reopen */
	random_state(&r2, imsi, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reauth-6@wlan.example", r2), &r2));
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reauth-7@wlan.example", r2), &r2));
	usleep(300000); /* -7 written behind: looked up from its row below */
	{
		struct tw_subscriber s2;

		make_milenage(&s2, imsi, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s2, true));
		tw_wipe(&s2, sizeof(s2));
	}
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-6@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-7@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	/* deleting the subscriber removes its pseudonyms and re-auth ids */
	random_state(&r2, imsi, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reauth-5@wlan.example", r2), &r2));
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("4reauth-5@wlan.example"), &got));
	CHECK_OK(tw_store_sub_del(st, imsi));
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-5@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID("2pseudo-d"), out, &n), TW_ERR_NOTFOUND);
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID("2pseudo-d"), out, &n), TW_ERR_NOTFOUND);
	tw_store_close(st);
	/* and its row stays gone: the write-behind of what was forgotten
	 * (tombstones) makes no row */
	CHECK(raw_int("SELECT count(*) FROM ident3v WHERE imsi = ?1", imsi) == 0);

	/* a tiny table (16 entries): stores beyond it flush and evict; all
	 * still found (memory or database) */
	o.ident_cache = 16;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	{
		bool ok = true;
		char id[32];

		for (int i = 0; i < 60; i++) {
			snprintf(id, sizeof(id), "7p%d", i);
			ok &= ops->pseudonym_store(ops->arg, MIDP(id, (i % 2 ? imsi : other)), i % 2 ? imsi : other, 15) ==
			      TW_OK;
			snprintf(id, sizeof(id), "8r%d@x", i);
			random_state(&r2, imsi, 50);
			ok &= ops->reauth_store(ops->arg, MIDR(id, r2), &r2) == TW_OK;
		}
		CHECK(ok);
		/* re-auth ids: the newest two per IMSI are kept (a fresh one per
		 * full authentication would otherwise pile up for the TTL); older
		 * ones go with the next write-behind round, memory and row */
		for (int i = 58; i < 60; i++) {
			snprintf(id, sizeof(id), "8r%d@x", i);
			ok &= ops->reauth_lookup(ops->arg, MID(id), &got) == TW_OK;
		}
		CHECK(ok);
		/* the rows go at a round's commit, memory right after it */
		for (int i = 0; i < 300 && (raw_int(R_COUNT,
						    imsi) > 2 ||
					    ops->reauth_lookup(ops->arg, MID("8r57@x"), &got) == TW_OK);
		     i++)
			usleep(10000);
		CHECK(raw_int(R_COUNT, imsi) == 2);
		for (int i = 0; i < 60; i++) {
			snprintf(id, sizeof(id), "8r%d@x", i);
			ok &= ops->reauth_lookup(ops->arg, MID(id), &got) ==
			      (i >= 58 ? TW_OK : TW_ERR_NOTFOUND);
		}
		CHECK(ok);
		/* and so after a reopen (the rows, not memory) */
		tw_store_close(st);
		st = open_with(&o);
		if (st == NULL)
			return;
		ops = tw_store_identity_ops(st);
		CHECK(raw_int(R_COUNT, imsi) == 2);
		for (int i = 0; i < 60; i++) {
			snprintf(id, sizeof(id), "8r%d@x", i);
			ok &= ops->reauth_lookup(ops->arg, MID(id), &got) ==
			      (i >= 58 ? TW_OK : TW_ERR_NOTFOUND);
		}
		CHECK(ok);
		/* the pseudonyms of the other IMSI: only its newest two remain */
		snprintf(id, sizeof(id), "7p%d", 58);
		CHECK_OK(ops->pseudonym_lookup(ops->arg, MID(id), out, &n));
		CHECK(memcmp(out, other, 15) == 0);
		snprintf(id, sizeof(id), "7p%d", 59);
		CHECK_OK(ops->pseudonym_lookup(ops->arg, MID(id), out, &n));
		CHECK(memcmp(out, imsi, 15) == 0);
		snprintf(id, sizeof(id), "7p%d", 0);
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, MID(id), out, &n), TW_ERR_NOTFOUND);
	}
	tw_store_close(st);

	/* re-auth ids expire (TTL 1 s) */
	o.ident_cache = 0;
	o.reauth_ttl = 1;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	random_state(&r2, imsi, 50);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("8old@x", r2), &r2));
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("8old@x"), &got));
	usleep(1100000);
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("8old@x"), &got), TW_ERR_NOTFOUND);
	tw_store_close(st);

	/* read-only: lookups only */
	o.read_only = true;
	st = open_with(&o);
	if (st != NULL) {
		char id[16];

		ops = tw_store_identity_ops(st);
		CHECK_ERR(ops->pseudonym_store(ops->arg, MIDP("2ro", imsi), imsi, 15), TW_ERR_STATE);
		snprintf(id, sizeof(id), "7p%d", 59);
		CHECK_OK(ops->pseudonym_lookup(ops->arg, MID(id), out, &n));
		tw_store_close(st);
	}
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&r2);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/*
 * Four threads store, store again and remove identities (each thread its
 * own ids and IMSI) against a 64-entry table while the write-behind runs:
 * copies of entries that are being written, rounds run by a store that
 * found the table full, evictions, look-ups falling back to the database.
 * After a reopen (the database only) every id is as its thread left it:
 * re-auth ids removed or holding their last state, and of each IMSI's
 * pseudonyms exactly the newest two.
 */
enum { IT_THREADS = 4, IT_IDS = 32, IT_ROUNDS = 10 };

struct it_arg {
	struct tw_store *st;
	char imsi[16];
	int t, errors;
	uint16_t counter[IT_IDS];  /* last state stored (0: removed) */
	char rimsi[IT_IDS][16];    /* the re-auth ids' IMSIs: one each (two
				    * per IMSI are kept) */
	/* minted before the threads start (mid() is for one thread) */
	char rid[IT_IDS][TW_EAP_ID_MAX + 1];
	char pid[IT_ROUNDS * IT_IDS][TW_EAP_ID_MAX + 1];
};

static void it_state(struct tw_eap_reauth_state *r, const char *imsi, uint16_t counter)
{
	memset(r, 0, sizeof(*r));
	r->method = 50;
	memcpy(r->imsi, imsi, 15);
	r->imsi_len = 15;
	r->counter = counter;
	memset(r->k_encr, counter & 0xff, 16);
	r->k_aut_len = 32;
	memset(r->k_aut, counter >> 8, 32);
}

/*
 * The identity table's index (open addressing, backward-shift deletion)
 * under a random mix of stores, removals and look-ups in a table of 32
 * entries (64 slots: runs wrap, entries are evicted, rows read back from
 * the database enter it again), its write-behind thread running: after
 * every step each entry in the index is reachable from its home slot and
 * named by exactly one slot (store_ident_index_sound). The newest
 * pseudonym of an IMSI is found at once, and a removed re-auth id is not.
 */
static void test_ident_index(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r, got;
	char imsi[8][16], ps[64][80], ra[64][80], out[16];
	size_t nps = 0, nra = 0, n = 0;
	struct tw_store *st;
	bool sound = true;

	db_remove();
	o.ident_cache = 32;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int i = 0; i < 8; i++)
		random_imsi(imsi[i]);
	for (int step = 0; step < 3000 && sound; step++) {
		uint32_t x = tw_test_random_u32(), what = x % 100;
		const char *im = imsi[(x >> 8) % 8];

		if (what < 35) {
			char *id = ps[nps % 64];

			mint_into(ops, "2", im, 15, id, sizeof(ps[0]));
			CHECK_OK(ops->pseudonym_store(ops->arg, ID(id), im, 15));
			CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(id), out, &n));
			CHECK(n == 15 && memcmp(out, im, 15) == 0);
			nps++;
		} else if (what < 65) {
			char *id = ra[nra % 64];

			mint_into(ops, "4@wlan.example", im, 15, id, sizeof(ra[0]));
			random_state(&r, im, 18);
			CHECK_OK(ops->reauth_store(ops->arg, ID(id), &r));
			nra++;
		} else if (what < 80 && nra > 0) {
			const char *id = ra[(x >> 16) % (nra < 64 ? nra : 64)];

			CHECK_OK(ops->reauth_remove(ops->arg, ID(id)));
			CHECK_ERR(ops->reauth_lookup(ops->arg, ID(id), &got), TW_ERR_NOTFOUND);
		} else if (nps > 0 && nra > 0) {
			/* found or not (pruned, evicted then read back), but no
			 * error and the index kept */
			int rc = (x >> 16) % 2
					 ? ops->pseudonym_lookup(ops->arg,
								 ID(ps[(x >> 17) % (nps < 64 ? nps : 64)]),
								 out, &n)
					 : ops->reauth_lookup(ops->arg,
							      ID(ra[(x >> 17) % (nra < 64 ? nra : 64)]),
							      &got);

			CHECK(rc == TW_OK || rc == TW_ERR_NOTFOUND);
		}
		sound = store_ident_index_sound(st);
	}
	CHECK(sound);
	tw_store_close(st);
	tw_wipe(&r, sizeof(r));
	tw_wipe(&got, sizeof(got));
}

/* ---- I/O errors at commit: a VFS that fails writes on demand ------------ */

/* Vectors for imsi until one fails or max of them: those that succeed
 * must have SQNs above *last, increasing (*last follows them). Returns
 * how many succeeded, or -1 when one failed other than with TW_ERR_IO or
 * left something in its output. */
static int vectors_until_error(struct tw_store *st, const struct tw_subscriber *s,
			       const char *imsi, int max, uint64_t *last)
{
	struct tw_eap_aka_vec v;
	uint8_t rand_[16];
	int ok = 0;

	for (int i = 0; i < max; i++) {
		int rc;

		tw_test_random(rand_, 16);
		memset(&v, 0x5a, sizeof(v));
		rc = tw_store_aka_vector(st, imsi, false, rand_, &v);
		if (rc != TW_OK)
			return rc == TW_ERR_IO && tw_ct_is_zero(&v, sizeof(v)) ? ok : -1;
		if (!CHECK(sqn_of(s, rand_, v.autn) > *last))
			return -1;
		*last = sqn_of(s, rand_, v.autn);
		ok++;
	}
	return ok;
}

/*
 * The commit of an SQN reservation fails (a WAL write, then a sync): the
 * vector that needed it gets TW_ERR_IO and nothing, the block is not used,
 * and once the device works again the next SQN is above every one issued,
 * in this process and after a restart. A write-behind round of identities
 * whose commit fails writes nothing and is written whole by a later round.
 */
static void test_commit_fails(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_store_stats before, after;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint64_t last = 0;
	char imsi[16], out[16];
	size_t n = 0;
	struct tw_store *st;
	int got, waited = 0;

	db_remove();
	if (!CHECK(fault_vfs_on()))
		return;
	o.sqn_block = 3;
	st = open_with(&o);
	if (st == NULL) {
		fault_vfs_off();
		return;
	}
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	CHECK(vectors_until_error(st, &s, imsi, 2, &last) == 2);

	for (int mode = 0; mode < 2; mode++) {
		/* the rest of the block (reserve-ahead may have added one)
		 * goes out; the vector that needs a new reservation fails */
		atomic_store(mode == 0 ? &fault_wal_write : &fault_sync, 1);
		tw_store_get_stats(st, &before);
		got = vectors_until_error(st, &s, imsi, 8, &last);
		CHECK(got >= 0 && got < 8);
		CHECK(vectors_until_error(st, &s, imsi, 1, &last) == 0); /* still nothing */
		tw_store_get_stats(st, &after);
		CHECK(after.io_errors >= before.io_errors + 2);
		atomic_store(mode == 0 ? &fault_wal_write : &fault_sync, 0);
		CHECK(vectors_until_error(st, &s, imsi, 4, &last) == 4);
	}

	/* identities: nothing of a failing round lands, all of a later one */
	ops = tw_store_identity_ops(st);
	atomic_store(&fault_wal_write, 1);
	tw_store_get_stats(st, &before);
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("3fault-one", imsi), imsi, 15));
	/* a round runs (within a second) and fails */
	do {
		usleep(100000);
		tw_store_get_stats(st, &after);
	} while (after.io_errors == before.io_errors && ++waited < 100);
	CHECK(after.io_errors > before.io_errors);
	CHECK(raw_int(P_COUNT, imsi) == 0);
	atomic_store(&fault_wal_write, 0);
	for (int i = 0; i < 50 && raw_int(P_COUNT, imsi) != 1; i++)
		usleep(100000);
	CHECK(raw_int(P_COUNT, imsi) == 1);
	tw_store_close(st);
	fault_vfs_off();

	/* after a restart: no SQN again, the pseudonym found */
	st = open_with(&o);
	if (st == NULL)
		return;
	CHECK(vectors_until_error(st, &s, imsi, 4, &last) == 4);
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("3fault-one"), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	tw_store_close(st);
	tw_wipe(&s, sizeof(s));
}

/*
 * tw_store_aka_vectors: what one by one gives (each vector verifies at the
 * USIM, SEQ_HE + 1 for a subscriber's first, a duplicate IMSI in the batch
 * gets the next SEQ, an unknown IMSI and a COMP128 subscriber their
 * errors with nothing in out), and the reservations the batch needs
 * (every first vector since open) in ONE commit, durable before the
 * vectors return; a second batch needs none. With the WAL write failing,
 * the subscribers needing one get TW_ERR_IO and no vector (one failed
 * commit, not one per request); once the device works again, and after a
 * restart, every SEQ is above all issued.
 */
enum { AB_N = 24, AB_Q = AB_N + 4 };

static void ab_requests(struct tw_store_aka_req q[AB_Q], struct tw_eap_aka_vec v[AB_Q],
			uint8_t rands[AB_Q][16], const char (*imsi)[16], const char *ic,
			const char *unknown, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *im = i < AB_N ? imsi[i] : i == AB_N ? imsi[0] : i == AB_N + 1 ? ic :
						    i == AB_N + 2			 ? unknown :
												   imsi[1];

		tw_test_random(rands[i], 16);
		memset(&v[i], 0x5a, sizeof(v[i]));
		q[i] = (struct tw_store_aka_req){
			.imsi = im, .aka_prime = i % 2 == 1, .rand_ = rands[i], .out = &v[i],
			.rc = 12345,
		};
	}
}

/* More first vectors in one batch than one commit takes (64): the first
 * 64 share it, the rest reserve one by one, all vectors good. */
enum { ABM_N = 70 };

static void test_aka_batch_many(const struct tw_store_opts *o)
{
	static struct tw_subscriber subs[ABM_N];
	static struct tw_eap_aka_vec v[ABM_N];
	static char imsi[ABM_N][16];
	static uint8_t rands[ABM_N][16];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store_aka_req q[ABM_N];
	struct tw_store_stats b0, b1;
	struct tw_store *st;
	size_t bad = 0;
	bool ok = true;

	st = open_with(o);
	if (st == NULL)
		return;
	for (int i = 0; i < ABM_N; i++) {
		snprintf(imsi[i], sizeof(imsi[i]), "0010194%08d", i);
		make_milenage(&subs[i], imsi[i], amf, 40);
	}
	CHECK_OK(tw_store_sub_put_many(st, subs, ABM_N, false, &bad));
	tw_store_close(st);
	st = open_with(o);
	if (st == NULL)
		return;
	for (int i = 0; i < ABM_N; i++) {
		tw_test_random(rands[i], 16);
		q[i] = (struct tw_store_aka_req){ .imsi = imsi[i], .rand_ = rands[i], .out = &v[i] };
	}
	tw_store_get_stats(st, &b0);
	tw_store_aka_vectors(st, q, ABM_N);
	tw_store_get_stats(st, &b1);
	for (int i = 0; i < ABM_N; i++)
		ok &= q[i].rc == TW_OK && sqn_of(&subs[i], rands[i], v[i].autn) >> 5 == 41;
	CHECK(ok);
	CHECK(b1.reservation_batch_commits == b0.reservation_batch_commits + 1 &&
	      b1.reservations_batched == b0.reservations_batched + 64 &&
	      b1.reservations_sync == b0.reservations_sync + ABM_N - 64);
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
	tw_wipe(v, sizeof(v));
}

static void test_aka_batch(void)
{
	struct tw_store_opts o = opts_default();
	static struct tw_subscriber subs[AB_N];
	static struct tw_eap_aka_vec v[AB_Q];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store_aka_req q[AB_Q];
	struct tw_store_stats b0, b1, b2;
	struct tw_subscriber c;
	uint8_t rands[AB_Q][16];
	uint64_t last[AB_N];
	static char imsi[AB_N][16];
	char ic[16], unknown[16];
	size_t bad = 0;
	struct tw_store *st;
	bool ok;

	db_remove();
	if (!CHECK(fault_vfs_on()))
		return;
	o.sqn_block = 10;
	st = open_with(&o);
	if (st == NULL) {
		fault_vfs_off();
		return;
	}
	for (int i = 0; i < AB_N; i++) {
		snprintf(imsi[i], sizeof(imsi[i]), "0010190%08d", i);
		make_milenage(&subs[i], imsi[i], amf, 5 + (uint64_t)i);
	}
	snprintf(ic, sizeof(ic), "001019100000000");
	snprintf(unknown, sizeof(unknown), "001019200000000");
	make_comp128(&c, ic, 1);
	CHECK_OK(tw_store_sub_put_many(st, subs, AB_N, false, &bad));
	CHECK_OK(tw_store_sub_put(st, &c, false));
	tw_store_close(st);
	st = open_with(&o); /* nothing loaded: every first vector reserves */
	if (st == NULL)
		goto out;

	ab_requests(q, v, rands, (const char(*)[16])imsi, ic, unknown, AB_Q);
	tw_store_get_stats(st, &b0);
	tw_store_aka_vectors(st, q, AB_Q);
	tw_store_get_stats(st, &b1);
	for (int i = 0; i < AB_N; i++) {
		last[i] = sqn_of(&subs[i], rands[i], v[i].autn) >> 5;
		CHECK(q[i].rc == TW_OK && last[i] == 6 + (uint64_t)i);
		/* durable before it was returned */
		CHECK(raw_int("SELECT sqn_reserved FROM subscriber WHERE imsi = ?1", imsi[i]) >=
		      (int64_t)last[i]);
	}
	/* the duplicates: the next SEQ; the errors: nothing */
	CHECK(q[AB_N].rc == TW_OK && sqn_of(&subs[0], rands[AB_N], v[AB_N].autn) >> 5 == 7);
	CHECK(q[AB_N + 3].rc == TW_OK &&
	      sqn_of(&subs[1], rands[AB_N + 3], v[AB_N + 3].autn) >> 5 == 8);
	last[0] = 7;
	last[1] = 8;
	CHECK(q[AB_N + 1].rc == TW_ERR_UNSUPPORTED && tw_ct_is_zero(&v[AB_N + 1], sizeof(v[0])));
	CHECK(q[AB_N + 2].rc == TW_ERR_NOTFOUND && tw_ct_is_zero(&v[AB_N + 2], sizeof(v[0])));
	CHECK(b1.reservation_batch_commits == b0.reservation_batch_commits + 1);
	CHECK(b1.reservations_batched == b0.reservations_batched + AB_N);
	CHECK(b1.reservations_sync == b0.reservations_sync);

	/* the blocks cover a second batch: no commit */
	ab_requests(q, v, rands, (const char(*)[16])imsi, ic, unknown, AB_N);
	tw_store_aka_vectors(st, q, AB_N);
	tw_store_get_stats(st, &b2);
	for (int i = 0; i < AB_N; i++) {
		uint64_t seq = sqn_of(&subs[i], rands[i], v[i].autn) >> 5;

		CHECK(q[i].rc == TW_OK && seq == last[i] + 1);
		last[i] = seq;
	}
	CHECK(b2.reservation_batch_commits == b1.reservation_batch_commits &&
	      b2.reservations_sync == b1.reservations_sync);
	tw_store_close(st);

	/* the commit fails: no vector for those that needed it */
	st = open_with(&o);
	if (st == NULL)
		goto out;
	atomic_store(&fault_wal_write, 1);
	ab_requests(q, v, rands, (const char(*)[16])imsi, ic, unknown, AB_N);
	tw_store_get_stats(st, &b0);
	tw_store_aka_vectors(st, q, AB_N);
	tw_store_get_stats(st, &b1);
	atomic_store(&fault_wal_write, 0);
	ok = true;
	for (int i = 0; i < AB_N; i++)
		ok &= q[i].rc == TW_ERR_IO && tw_ct_is_zero(&v[i], sizeof(v[i]));
	/* one failed commit, not tried again one by one */
	CHECK(ok && b1.io_errors == b0.io_errors + 1);
	CHECK(b1.reservations_batched == b0.reservations_batched);
	for (int round = 0; round < 2; round++) {
		ab_requests(q, v, rands, (const char(*)[16])imsi, ic, unknown, AB_N);
		tw_store_aka_vectors(st, q, AB_N);
		ok = true;
		for (int i = 0; i < AB_N; i++) {
			uint64_t seq = sqn_of(&subs[i], rands[i], v[i].autn) >> 5;

			ok &= q[i].rc == TW_OK && seq > last[i];
			last[i] = seq;
		}
		CHECK(ok);
		tw_store_close(st); /* and after a restart */
		st = open_with(&o);
		if (st == NULL)
			goto out;
	}
	tw_store_close(st);
	test_aka_batch_many(&o);
out:
	fault_vfs_off();
	tw_wipe(subs, sizeof(subs));
	tw_wipe(&c, sizeof(c));
	tw_wipe(v, sizeof(v));
}

/*
 * tw_store_aka_vectors on three threads at once, over four subscribers
 * (each several times per batch) with 3-SEQ blocks: batches claim
 * reservations while other threads' batches, one-by-one vectors and the
 * write-behind's reserve-ahead want the same records. Every vector
 * verifies at the USIM and no SEQ is issued twice.
 */
enum { BT_TH = 3, BT_ROUNDS = 30, BT_Q = 6, BT_SUBS = 4 };

struct bt_arg {
	struct tw_store *st;
	const struct tw_subscriber *subs;
	int t, errors;
	uint64_t seq[BT_ROUNDS * (BT_Q + 1)];
	int sub[BT_ROUNDS * (BT_Q + 1)];
	size_t n;
};

static void *bt_main(void *p)
{
	struct bt_arg *a = p;
	struct tw_store_aka_req q[BT_Q];
	struct tw_eap_aka_vec v[BT_Q], one;
	uint8_t rands[BT_Q][16], r1[16];
	int w[BT_Q];

	for (int round = 0; round < BT_ROUNDS; round++) {
		for (int i = 0; i < BT_Q; i++) {
			w[i] = (round + i * (a->t + 1)) % BT_SUBS;
			memset(rands[i], 0, 16);
			tw_store_be32(rands[i], (uint32_t)(round * BT_Q + i));
			rands[i][15] = (uint8_t)a->t;
			q[i] = (struct tw_store_aka_req){ .imsi = a->subs[w[i]].imsi,
							  .aka_prime = (i & 1) != 0,
							  .rand_ = rands[i], .out = &v[i] };
		}
		tw_store_aka_vectors(a->st, q, BT_Q);
		for (int i = 0; i < BT_Q; i++) {
			if (q[i].rc != TW_OK) {
				a->errors++;
				continue;
			}
			a->seq[a->n] = sqn_of(&a->subs[w[i]], rands[i], v[i].autn);
			a->sub[a->n++] = w[i];
		}
		/* and one by one meanwhile */
		memset(r1, 0xa5, 16);
		tw_store_be32(r1, (uint32_t)round);
		r1[15] = (uint8_t)a->t;
		if (tw_store_aka_vector(a->st, a->subs[round % BT_SUBS].imsi, false, r1, &one) !=
		    TW_OK) {
			a->errors++;
			continue;
		}
		a->seq[a->n] = sqn_of(&a->subs[round % BT_SUBS], r1, one.autn);
		a->sub[a->n++] = round % BT_SUBS;
	}
	tw_wipe(v, sizeof(v));
	tw_wipe(&one, sizeof(one));
	return NULL;
}

static void test_aka_batch_threads(void)
{
	struct tw_store_opts o = opts_default();
	static struct tw_subscriber subs[BT_SUBS];
	static struct bt_arg args[BT_TH];
	static uint64_t all[BT_SUBS][BT_TH * BT_ROUNDS * (BT_Q + 1)];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	size_t na[BT_SUBS] = { 0 };
	pthread_t th[BT_TH];
	struct tw_store *st;
	bool dup = false, zero = false, run = true;
	int errors = 0, started = 0;

	db_remove();
	o.sqn_block = 3;
	st = open_with(&o);
	if (st == NULL)
		return;
	for (int i = 0; i < BT_SUBS; i++) {
		char im[16];

		snprintf(im, sizeof(im), "0010193%08d", i);
		make_milenage(&subs[i], im, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &subs[i], false));
	}
	for (int t = 0; t < BT_TH && run; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].st = st;
		args[t].subs = subs;
		args[t].t = t;
		run = CHECK(pthread_create(&th[t], NULL, bt_main, &args[t]) == 0);
		started += run;
	}
	for (int t = 0; t < started; t++) {
		pthread_join(th[t], NULL);
		errors += args[t].errors;
		for (size_t j = 0; j < args[t].n; j++) {
			zero |= args[t].seq[j] == 0;
			all[args[t].sub[j]][na[args[t].sub[j]]++] = args[t].seq[j] >> 5;
		}
	}
	CHECK(errors == 0 && !zero);
	for (int w = 0; w < BT_SUBS; w++) {
		qsort(all[w], na[w], sizeof(all[w][0]), cmp_u64);
		for (size_t i = 1; i < na[w]; i++)
			dup |= all[w][i] == all[w][i - 1];
	}
	CHECK(!dup);
	CHECK(na[0] + na[1] + na[2] + na[3] == (size_t)started * BT_ROUNDS * (BT_Q + 1));
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
}

/* A full table is a clean TW_ERR_NOMEM when other threads refill it
 * between the round a store ran and its retry: try again. */
static int it_retry(int rc, int *tries)
{
	if (rc == TW_ERR_NOMEM && ++*tries < 1000) {
		usleep(1000);
		return 1;
	}
	return 0;
}

static void *it_main(void *p)
{
	struct it_arg *a = p;
	const struct tw_eap_identity_ops *ops = tw_store_identity_ops(a->st);
	struct tw_eap_reauth_state rs, got;
	const char *id;
	int rc, tries;

	for (int r = 0; r < IT_ROUNDS; r++) {
		for (int i = 0; i < IT_IDS; i++) {
			id = a->rid[i];
			/* the same id several times in a row: likely to meet
			 * its own earlier change being written */
			for (int k = 0; k < 3; k++) {
				uint16_t c = (uint16_t)(1 + (r * IT_IDS + i) * 3 + k);

				tries = 0;
				if ((i + r + k) % 4 == 3) {
					do
						rc = ops->reauth_remove(ops->arg, ID(id));
					while (it_retry(rc, &tries));
					if (rc == TW_OK)
						a->counter[i] = 0;
				} else {
					it_state(&rs, a->rimsi[i], c);
					do
						rc = ops->reauth_store(ops->arg, ID(id), &rs);
					while (it_retry(rc, &tries));
					if (rc == TW_OK)
						a->counter[i] = c;
				}
				a->errors += rc != TW_OK;
			}
			/* a look-up now and then (memory or database) */
			if (i % 5 == 0) {
				rc = ops->reauth_lookup(ops->arg, ID(id), &got);
				if (a->counter[i] == 0)
					a->errors += rc != TW_ERR_NOTFOUND;
				else
					a->errors += rc != TW_OK || got.counter != a->counter[i];
			}
			id = a->pid[r * IT_IDS + i];
			tries = 0;
			do
				rc = ops->pseudonym_store(ops->arg, ID(id), a->imsi, 15);
			while (it_retry(rc, &tries));
			a->errors += rc != TW_OK;
		}
	}
	tw_eap_reauth_state_wipe(&rs);
	tw_eap_reauth_state_wipe(&got);
	return NULL;
}

/*
 * --volatile-identities under threads: four threads store re-auth
 * contexts for the same eight IMSIs at once (the per-IMSI tracking and
 * its unlocked prefetch of the tracking slot race on purpose; TSan
 * builds look at them). Afterwards every IMSI keeps one or two contexts
 * (the newest two it was given, whichever thread gave them), and the one
 * each thread stored last for it is found unless two newer ones of
 * other threads came after it.
 */
enum { VT_THREADS = 4, VT_IMSIS = 8, VT_ROUNDS = 40 };

struct vt_arg {
	const struct tw_eap_identity_ops *ops;
	char (*imsi)[16];
	char (*ids)[VT_IMSIS][VT_ROUNDS][TW_EAP_ID_MAX + 1]; /* [thread][imsi][round] */
	int t;
	int fails;
};

static void *vt_run(void *p)
{
	struct vt_arg *a = p;
	struct tw_eap_reauth_state r;

	for (int k = 0; k < VT_ROUNDS; k++)
		for (int i = 0; i < VT_IMSIS; i++) {
			const char *id = a->ids[a->t][i][k];

			/* not random_state: the harness's generator is one
			 * thread's */
			memset(&r, 0, sizeof(r));
			r.method = 18;
			memcpy(r.imsi, a->imsi[i], 15);
			r.imsi_len = 15;
			r.counter = (uint16_t)k;
			memset(r.k_encr, a->t * 16 + i, sizeof(r.k_encr));
			r.k_aut_len = 16;
			memset(r.k_aut, k, 16);
			if (a->ops->reauth_store(a->ops->arg, ID(id), &r) != TW_OK)
				a->fails++;
		}
	tw_wipe(&r, sizeof(r));
	return NULL;
}

static void test_ident_volatile_threads(void)
{
	struct tw_store_opts o = opts_default();
	static char imsi[VT_IMSIS][16];
	static char ids[VT_THREADS][VT_IMSIS][VT_ROUNDS][TW_EAP_ID_MAX + 1];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct vt_arg args[VT_THREADS];
	pthread_t th[VT_THREADS];
	bool run[VT_THREADS];
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state got;
	struct tw_subscriber s;
	struct tw_store *st;
	int fails = 0, bad_count = 0;

	db_remove();
	o.ident_volatile = true;
	/* the tracking array has twice as many slots: two of the eight
	 * IMSIs on one slot (one then tracks nothing, and keeps more than
	 * two contexts) about once in 19,000 runs */
	o.ident_cache = 1u << 18;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int i = 0; i < VT_IMSIS; i++) {
		random_imsi(imsi[i]);
		imsi[i][14] = (char)('0' + i); /* distinct */
		make_milenage(&s, imsi[i], amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s, false));
		for (int t = 0; t < VT_THREADS; t++)
			for (int k = 0; k < VT_ROUNDS; k++)
				mint_into(ops, "4@x", imsi[i], 15, ids[t][i][k], sizeof(ids[t][i][k]));
	}
	for (int t = 0; t < VT_THREADS; t++) {
		args[t] = (struct vt_arg){ ops, imsi, ids, t, 0 };
		run[t] = CHECK(pthread_create(&th[t], NULL, vt_run, &args[t]) == 0);
	}
	for (int t = 0; t < VT_THREADS; t++) {
		if (run[t])
			pthread_join(th[t], NULL);
		fails += args[t].fails;
	}
	CHECK(fails == 0);
	for (int i = 0; i < VT_IMSIS; i++) {
		int found = 0, last_found = 0;

		for (int t = 0; t < VT_THREADS; t++)
			for (int k = 0; k < VT_ROUNDS; k++)
				if (ops->reauth_lookup(ops->arg, ID(ids[t][i][k]), &got) == TW_OK) {
					found++;
					last_found += k == VT_ROUNDS - 1;
				}
		/* the newest two per IMSI: two threads' last ones at least
		 * are among all the last ones */
		bad_count += found < 1 || found > 2 || last_found < 1;
	}
	if (!CHECK(bad_count == 0))
		tw_note("volatile threads: %d of %d IMSIs keep not 1-2 contexts with a last one",
			bad_count, VT_IMSIS);
	tw_wipe(&got, sizeof(got));
	tw_store_close(st);
}

static void test_ident_threads(void)
{
	struct tw_store_opts o = opts_default();
	static struct it_arg args[IT_THREADS];
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state got;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	pthread_t th[IT_THREADS];
	struct tw_store *st;
	char out[16];
	size_t n = 0;
	bool ok = true;

	db_remove();
	o.ident_cache = 64;
	st = open_with(&o);
	if (st == NULL)
		return;
	for (int t = 0; t < IT_THREADS; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].st = st;
		args[t].t = t;
		random_imsi(args[t].imsi);
		args[t].imsi[14] = (char)('0' + t); /* distinct */
		make_milenage(&s, args[t].imsi, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s, false));
		for (int i = 0; i < IT_IDS; i++) {
			random_imsi(args[t].rimsi[i]);
			snprintf(args[t].rimsi[i] + 11, 5, "9%d%02d", t, i);
			make_milenage(&s, args[t].rimsi[i], amf, 0);
			CHECK_OK(tw_store_sub_put(st, &s, false));
		}
		ops = tw_store_identity_ops(st);
		for (int i = 0; i < IT_IDS; i++)
			mint_into(ops, "8@x", args[t].rimsi[i], 15, args[t].rid[i],
				  sizeof(args[t].rid[i]));
		for (int k = 0; k < IT_ROUNDS * IT_IDS; k++)
			mint_into(ops, "2", args[t].imsi, 15, args[t].pid[k], sizeof(args[t].pid[k]));
	}
	for (int t = 0; t < IT_THREADS; t++)
		CHECK(pthread_create(&th[t], NULL, it_main, &args[t]) == 0);
	for (int t = 0; t < IT_THREADS; t++) {
		pthread_join(th[t], NULL);
		CHECK(args[t].errors == 0);
	}
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int t = 0; t < IT_THREADS; t++) {
		for (int i = 0; i < IT_IDS; i++) {
			int rc;

			rc = ops->reauth_lookup(ops->arg, ID(args[t].rid[i]), &got);
			if (args[t].counter[i] == 0)
				ok &= rc == TW_ERR_NOTFOUND;
			else
				ok &= rc == TW_OK && got.counter == args[t].counter[i] &&
				      got.k_encr[0] == (args[t].counter[i] & 0xff);
		}
		for (int k = 0; k < IT_ROUNDS * IT_IDS; k++) {
			int rc;

			rc = ops->pseudonym_lookup(ops->arg, ID(args[t].pid[k]), out, &n);
			if (k >= IT_ROUNDS * IT_IDS - 2)
				ok &= rc == TW_OK && n == 15 && memcmp(out, args[t].imsi, 15) == 0;
			else
				ok &= rc == TW_ERR_NOTFOUND;
		}
		ok &= raw_int(P_COUNT, args[t].imsi) == 2;
	}
	CHECK(ok);
	tw_store_close(st);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/*
 * The packet path does not wait for a write-behind round: with another
 * connection holding the write lock, the round is stuck in BEGIN (busy
 * timeout 5 s) holding the writing connection, and meanwhile look-ups that
 * fall back to the database (reading connection), stores (memory) and a
 * vector inside the reserved block all answer; the round has neither
 * finished nor failed by then. A new file gets 16 KiB pages.
 */
static void test_ident_reader(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, got;
	struct tw_store_stats s0, s1;
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16];
	char imsi[16], out[16];
	size_t n = 0;
	struct tw_store *st;
	sqlite3 *h = NULL;

	db_remove();
	o.busy_timeout_ms = 5000;
	o.ident_flush_ms = 100; /* a round begins within the 300 ms below */
	st = open_with(&o);
	if (st == NULL)
		return;
	CHECK(raw_int("PRAGMA page_size", "") == 16384);
	ops = tw_store_identity_ops(st);
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2reader-1", imsi), imsi, 15));
	random_state(&r1, imsi, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reader-1@x", r1), &r1));
	tw_store_close(st);

	st = open_with(&o); /* the ids are in the database only now */
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(st, imsi, true, rand_, &v)); /* reserves */
	CHECK(sqlite3_open(db, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2reader-2", imsi), imsi, 15));
	usleep(300000); /* a round has begun and waits for the lock */
	tw_store_get_stats(st, &s0);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2reader-1"), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("4reader-1@x"), &got));
	CHECK(state_eq(&got, &r1));
	CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2reader-2"), out, &n));
	CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2reader-3", imsi), imsi, 15));
	CHECK_OK(tw_store_aka_vector(st, imsi, true, rand_, &v));
	tw_store_get_stats(st, &s1);
	CHECK(s1.ident_rounds == s0.ident_rounds && s1.io_errors == s0.io_errors);
	CHECK(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	for (int i = 0; i < 100 && s1.ident_rounds == s0.ident_rounds; i++) {
		usleep(50000);
		tw_store_get_stats(st, &s1);
	}
	CHECK(s1.ident_rounds > s0.ident_rounds && s1.io_errors == s0.io_errors);
	CHECK(raw_int(P_COUNT, imsi) == 2);
	tw_store_close(st);
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/* ops->random hands out buffered DRBG octets: a fork child does
 * not hand out what its parent does next. */
static void test_ident_random_fork(void)
{
	const struct tw_eap_identity_ops *ops;
	uint8_t a[16], b[16], c[16];
	struct tw_store *st;
	int fd[2], status = 0;
	pid_t pid;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->random(ops->arg, a, sizeof(a))); /* the buffer is filled */
	if (!CHECK(pipe(fd) == 0))
		goto out;
	pid = fork();
	if (pid == 0) {
		uint8_t x[16];
		int ok = ops->random(ops->arg, x, sizeof(x)) == TW_OK &&
			 write(fd[1], x, sizeof(x)) == (ssize_t)sizeof(x);

		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_OK(ops->random(ops->arg, b, sizeof(b)));
	CHECK(read(fd[0], c, sizeof(c)) == (ssize_t)sizeof(c));
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(memcmp(b, c, sizeof(b)) != 0 && memcmp(a, b, sizeof(a)) != 0);
	close(fd[0]);
	close(fd[1]);
out:
	tw_store_close(st);
}

/*
 * The DRBG octets a thread buffered but did not use do not outlive it: the
 * thread runs on a stack given here (glibc puts its static TLS, and so the
 * buffer, in that block), notes where its unused octets are and what they
 * are, and ends; after the join they must be gone. And tw_store_close
 * wipes the closing thread's own buffer (exit() runs no TLS destructor).
 */
struct rnd_probe {
	const struct tw_eap_identity_ops *ops;
	const uint8_t *where;
	uint8_t copy[4096];
	size_t len;
	bool ok;
};

static void *rnd_probe_run(void *p)
{
	struct rnd_probe *r = p;
	uint8_t x[16];

	r->ok = r->ops->random(r->ops->arg, x, sizeof(x)) == TW_OK;
	r->where = store_ident_random_unused(&r->len);
	if (r->len > sizeof(r->copy))
		r->len = sizeof(r->copy);
	memcpy(r->copy, r->where, r->len);
	return NULL;
}

static bool still_there(const uint8_t *where, const uint8_t *copy, size_t len)
{
	size_t same = 0;

	for (size_t i = 0; i < len; i++)
		same += where[i] == copy[i] && copy[i] != 0;
	return same > len / 8; /* random octets: about 1 in 256 match by chance */
}

static void test_ident_random_wiped(void)
{
	enum { STACK = 1 << 20 };
	static struct rnd_probe r;
	pthread_attr_t attr;
	pthread_t t;
	struct tw_store *st;
	uint8_t *stack;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	r.ops = tw_store_identity_ops(st);
	stack = aligned_alloc(4096, STACK);
	if (!CHECK(stack != NULL))
		goto out;
	memset(stack, 0, STACK);
	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setstack(&attr, stack, STACK) == 0);
	if (CHECK(pthread_create(&t, &attr, rnd_probe_run, &r) == 0))
		CHECK(pthread_join(t, NULL) == 0);
	pthread_attr_destroy(&attr);
	CHECK(r.ok && r.len >= 4096 - 16 - 64);
	if (CHECK(r.where >= stack && r.where + r.len <= stack + STACK)) {
		CHECK(!still_there(r.where, r.copy, r.len));
		/* the probe itself can see octets: its copy holds them */
		CHECK(still_there(r.copy, r.copy, r.len));
	}
	free(stack);

	/* this thread: the octets stay until the store closes */
	uint8_t x[16];
	const uint8_t *where;
	size_t len;

	CHECK_OK(r.ops->random(r.ops->arg, x, sizeof(x)));
	where = store_ident_random_unused(&len);
	if (len > sizeof(r.copy))
		len = sizeof(r.copy);
	memcpy(r.copy, where, len);
	CHECK(len > 0 && still_there(where, r.copy, len));
	tw_store_close(st);
	st = NULL;
	CHECK(!still_there(where, r.copy, len));
	tw_wipe(r.copy, sizeof(r.copy));
out:
	tw_store_close(st);
}

/*
 * Another process (the CLI beside twagd) deletes or replaces subscribers
 * this store has loaded: within a poll period (~100 ms) the change is seen.
 * A deleted subscriber gets no vector, no triplet and no fast
 * re-authentication any more (before: until the SQN block ran out, and for
 * COMP128 until restart); a replaced one is served with its new keys.
 */
static void test_other_process(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber m, m2, d, c;
	struct tw_eap_aka_vec v;
	struct tw_eap_sim_triplet tr[2];
	struct tw_eap_reauth_state rs, got;
	const struct tw_eap_identity_ops *ops;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16], rands[2][16];
	char im[16], id[16], ic[16];
	struct tw_store *a = NULL, *b = NULL;

	db_remove();
	a = open_with(&o);
	b = open_with(&o);
	if (a == NULL || b == NULL)
		goto out;
	random_imsi(im);
	random_imsi(id);
	random_imsi(ic);
	id[5] = im[5] == '9' ? '8' : (char)(im[5] + 1);
	ic[5] = id[5] == '9' ? '7' : (char)(id[5] + 1);
	make_milenage(&m, im, amf, 10);
	make_milenage(&d, id, amf, 10);
	make_comp128(&c, ic, 1);
	CHECK_OK(tw_store_sub_put(b, &m, false));
	CHECK_OK(tw_store_sub_put(b, &d, false));
	CHECK_OK(tw_store_sub_put(b, &c, false));
	/* loaded in a, a re-auth context for d */
	tw_test_random(rand_, 16);
	tw_test_random(rands, sizeof(rands));
	CHECK_OK(tw_store_aka_vector(a, im, false, rand_, &v));
	CHECK(sqn_of(&m, rand_, v.autn) >> 5 == 11);
	CHECK_OK(tw_store_aka_vector(a, id, false, rand_, &v));
	CHECK_OK(tw_store_sim_triplets(a, ic, (const uint8_t(*)[16])rands, 2, tr));
	ops = tw_store_identity_ops(a);
	random_state(&rs, id, 23);
	CHECK_OK(ops->reauth_store(ops->arg, MIDR("4reauth-x@wlan.example", rs), &rs));
	CHECK_OK(ops->reauth_lookup(ops->arg, MID("4reauth-x@wlan.example"), &got));

	/* the other process: d and c deleted, m replaced with new keys */
	CHECK_OK(tw_store_sub_del(b, id));
	CHECK_OK(tw_store_sub_del(b, ic));
	make_milenage(&m2, im, amf, 4000);
	CHECK_OK(tw_store_sub_put(b, &m2, true));
	usleep(400000);

	CHECK_ERR(tw_store_sim_triplets(a, ic, (const uint8_t(*)[16])rands, 2, tr),
		  TW_ERR_NOTFOUND);
	CHECK_ERR(tw_store_aka_vector(a, id, false, rand_, &v), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->reauth_lookup(ops->arg, MID("4reauth-x@wlan.example"), &got),
		  TW_ERR_NOTFOUND);
	tw_test_random(rand_, 16);
	CHECK_OK(tw_store_aka_vector(a, im, false, rand_, &v));
	CHECK(sqn_of(&m, rand_, v.autn) == 0);          /* not the old keys ... */
	CHECK(sqn_of(&m2, rand_, v.autn) >> 5 == 4001); /* ... the new ones */
out:
	tw_store_close(a);
	tw_store_close(b);
	tw_wipe(&m, sizeof(m));
	tw_wipe(&m2, sizeof(m2));
	tw_wipe(&d, sizeof(d));
	tw_wipe(&c, sizeof(c));
	tw_eap_reauth_state_wipe(&rs);
	tw_eap_reauth_state_wipe(&got);
}

/*
 * A replace (same keys: a changed AMF, an import run again, or `--sqn`
 * copied from `twag subscriber show` while twagd runs) never takes the SQN
 * back below what the old row may have issued (C.1: never twice): in this
 * process, from another one, and with a different IND length.
 */
static void test_replace_sqn(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s, r;
	struct tw_eap_aka_vec v;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16];
	uint64_t last = 0, sqn;
	struct tw_store *a = NULL, *b = NULL;
	char imsi[16];

	db_remove();
	o.sqn_block = 4;
	a = open_with(&o);
	b = open_with(&o);
	if (a == NULL || b == NULL)
		goto out;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 100);
	CHECK_OK(tw_store_sub_put(a, &s, false));
	for (int round = 0; round < 3; round++) {
		struct tw_store *via = round == 1 ? b : a;

		for (int i = 0; i < 6; i++) {
			tw_test_random(rand_, 16);
			CHECK_OK(tw_store_aka_vector(a, imsi, i & 1, rand_, &v));
			sqn = sqn_of(&s, rand_, v.autn);
			CHECK(sqn > last);
			last = sqn;
		}
		/* the same keys, an SQN from the past; round 2: IND of 0 bits */
		r = s;
		CHECK_OK(tw_sqn_he_init(&r.sqn, round == 2 ? 0 : TW_SQN_IND_BITS_DEFAULT, 0, 1,
					round == 2 ? 7 : 50));
		CHECK_OK(tw_store_sub_put(via, &r, true));
		if (via == b)
			usleep(400000);
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(a, imsi, false, rand_, &v));
		sqn = sqn_of(&s, rand_, v.autn);
		CHECK(sqn > last);
		last = sqn;
	}
	/* a new subscriber (nothing replaced) still starts where it is told */
	{
		char other[16];

		random_imsi(other);
		other[5] = imsi[5] == '9' ? '8' : (char)(imsi[5] + 1);
		r = s;
		memcpy(r.imsi, other, 16);
		CHECK_OK(tw_sqn_he_init(&r.sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1, 3));
		CHECK_OK(tw_store_sub_put(a, &r, true));
		tw_test_random(rand_, 16);
		CHECK_OK(tw_store_aka_vector(a, other, false, rand_, &v));
		CHECK(sqn_of(&s, rand_, v.autn) >> 5 == 4);
	}
out:
	tw_store_close(a);
	tw_store_close(b);
	tw_wipe(&s, sizeof(s));
	tw_wipe(&r, sizeof(r));
}

/* ---- threads ----------------------------------------------------------- */

enum { TH = 4, PER = 150 };

struct th_arg {
	struct tw_store *st;
	const struct tw_subscriber *a, *b;
	int which; /* 0: a, 1: b, 2: both */
	uint64_t sqn[PER];
	int sub[PER];
	int errors;
};

static void *th_main(void *p)
{
	struct th_arg *t = p;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16];

	for (int i = 0; i < PER; i++) {
		int w = t->which == 2 ? i & 1 : t->which;
		const struct tw_subscriber *s = w ? t->b : t->a;

		/* tw_test_random is not thread-safe: RAND need not be random */
		memset(rand_, 0, 16);
		tw_store_be32(rand_, (uint32_t)i);
		rand_[15] = (uint8_t)t->which;
		if (tw_store_aka_vector(t->st, s->imsi, i % 3 == 0, rand_, &v) != TW_OK) {
			t->errors++;
			continue;
		}
		t->sqn[i] = sqn_of(s, rand_, v.autn);
		t->sub[i] = w;
	}
	return NULL;
}

static void test_threads(void)
{
	struct tw_store_opts o = opts_default();
	static struct th_arg args[TH];
	struct tw_subscriber a, b;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	pthread_t th[TH];
	static uint64_t sa[TH * PER], sb[TH * PER];
	size_t na = 0, nb = 0;
	struct tw_store *st;
	char ia[16], ib[16];
	bool dup = false, zero = false;
	int errors = 0;

	db_remove();
	o.sqn_block = 7;
	st = open_with(&o);
	if (st == NULL)
		return;
	random_imsi(ia);
	random_imsi(ib);
	ib[5] = ia[5] == '9' ? '8' : (char)(ia[5] + 1);
	make_milenage(&a, ia, amf, 0);
	make_milenage(&b, ib, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &a, false));
	CHECK_OK(tw_store_sub_put(st, &b, false));
	for (int i = 0; i < TH; i++) {
		memset(&args[i], 0, sizeof(args[i]));
		args[i].st = st;
		args[i].a = &a;
		args[i].b = &b;
		args[i].which = i < 2 ? 0 : i - 1; /* a, a, b, both */
		CHECK(pthread_create(&th[i], NULL, th_main, &args[i]) == 0);
	}
	for (int i = 0; i < TH; i++) {
		pthread_join(th[i], NULL);
		errors += args[i].errors;
		for (int j = 0; j < PER; j++) {
			zero |= args[i].sqn[j] == 0;
			if (args[i].sub[j])
				sb[nb++] = args[i].sqn[j];
			else
				sa[na++] = args[i].sqn[j];
		}
	}
	CHECK(errors == 0 && !zero);
	CHECK(na == 2 * PER + PER / 2 && nb == PER + PER / 2);
	qsort(sa, na, sizeof(sa[0]), cmp_u64);
	qsort(sb, nb, sizeof(sb[0]), cmp_u64);
	for (size_t i = 1; i < na; i++)
		dup |= sa[i] == sa[i - 1];
	for (size_t i = 1; i < nb; i++)
		dup |= sb[i] == sb[i - 1];
	CHECK(!dup);
	/* one SEQ per vector, none skipped within a run */
	CHECK(sa[na - 1] >> 5 == na && sb[nb - 1] >> 5 == nb);
	tw_store_close(st);
	tw_wipe(&a, sizeof(a));
	tw_wipe(&b, sizeof(b));
}

/*
 * The subscriber cache grows with what it holds: a store opened empty
 * (1024 buckets) and provisioned afterwards, as a running twagd is by
 * `twag subscriber import`, looks its records up in short chains. Four
 * threads load 3000 COMP128 records in different orders, so the buckets
 * grow while records are linked and found; each triplet must be its own
 * subscriber's, and vectors of four Milenage subscribers requested
 * meanwhile from every thread must never repeat a SEQ (a record linked
 * twice would). store_rec_index_sound: each record in its hash's bucket,
 * none twice, the count right; also after half are deleted.
 */
enum { RG_COMP = 3000, RG_MIL = 4, RG_TH = 4, RG_EVERY = 25, RG_AKA = RG_COMP / RG_EVERY + 1 };

struct rg_arg {
	struct tw_store *st;
	const char (*imsi)[16];
	const struct tw_eap_sim_triplet *want;
	const struct tw_subscriber *mil;
	int t, errors, wrong;
	uint64_t sqn[RG_AKA];
	int which[RG_AKA];
	int n_aka;
};

static void rg_rand(uint8_t r[16], unsigned i)
{
	memset(r, 0x5a, 16);
	tw_store_be32(r, i);
}

static void *rg_main(void *p)
{
	struct rg_arg *a = p;
	struct tw_eap_sim_triplet tr;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16];

	for (unsigned k = 0; k < RG_COMP; k++) {
		unsigned i = (k * 7919u + (unsigned)a->t * 1013u) % RG_COMP;

		rg_rand(rand_, i);
		if (tw_store_sim_triplets(a->st, a->imsi[i], (const uint8_t(*)[16])rand_, 1, &tr) !=
		    TW_OK)
			a->errors++;
		else if (memcmp(&tr, &a->want[i], sizeof(tr)) != 0)
			a->wrong++;
		if (k % RG_EVERY == 0) {
			int w = (int)((k / RG_EVERY + (unsigned)a->t) % RG_MIL);

			memset(rand_, 0, 16);
			tw_store_be32(rand_, k);
			rand_[15] = (uint8_t)a->t;
			if (tw_store_aka_vector(a->st, a->mil[w].imsi, false, rand_, &v) != TW_OK) {
				a->errors++;
				continue;
			}
			a->sqn[a->n_aka] = sqn_of(&a->mil[w], rand_, v.autn);
			a->which[a->n_aka++] = w;
		}
	}
	tw_wipe(&tr, sizeof(tr));
	tw_wipe(&v, sizeof(v));
	return NULL;
}

static void test_rec_grow(void)
{
	static char imsi[RG_COMP][16];
	static struct tw_subscriber subs[RG_COMP], mil[RG_MIL];
	static struct tw_eap_sim_triplet want[RG_COMP];
	static struct rg_arg args[RG_TH];
	static uint64_t seqs[RG_MIL][RG_TH * RG_AKA];
	static const uint8_t amf[2] = { 0x80, 0x00 };
	size_t nseq[RG_MIL] = { 0 }, nb = 0, bad = 0;
	pthread_t th[RG_TH];
	struct tw_store *st;
	uint8_t rand_[16];
	bool sound, dup = false, zero = false, run = true;
	int errors = 0, wrong = 0, started = 0;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	sound = store_rec_index_sound(st, &nb);
	CHECK(sound && nb == 1024);
	for (unsigned i = 0; i < RG_COMP; i++) {
		snprintf(imsi[i], sizeof(imsi[i]), "0010170%08u", i);
		make_comp128(&subs[i], imsi[i], 1 + i % 3);
		rg_rand(rand_, i);
		CHECK_OK(tw_vecsrc_sim(&subs[i], rand_, &want[i]));
	}
	for (unsigned i = 0; i < RG_MIL; i++) {
		char im[16];

		snprintf(im, sizeof(im), "0010180%08u", i);
		make_milenage(&mil[i], im, amf, 0);
		CHECK_OK(tw_store_sub_put(st, &mil[i], false));
	}
	CHECK_OK(tw_store_sub_put_many(st, subs, RG_COMP, false, &bad));
	for (int t = 0; t < RG_TH && run; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].st = st;
		args[t].imsi = (const char(*)[16])imsi;
		args[t].want = want;
		args[t].mil = mil;
		args[t].t = t;
		run = CHECK(pthread_create(&th[t], NULL, rg_main, &args[t]) == 0);
		started += run;
	}
	for (int t = 0; t < started; t++) {
		pthread_join(th[t], NULL);
		errors += args[t].errors;
		wrong += args[t].wrong;
		for (int j = 0; j < args[t].n_aka; j++) {
			int w = args[t].which[j];

			zero |= args[t].sqn[j] == 0;
			seqs[w][nseq[w]++] = args[t].sqn[j] >> 5;
		}
	}
	CHECK(errors == 0 && wrong == 0 && !zero);
	for (int w = 0; w < RG_MIL; w++) {
		qsort(seqs[w], nseq[w], sizeof(seqs[w][0]), cmp_u64);
		for (size_t i = 1; i < nseq[w]; i++)
			dup |= seqs[w][i] == seqs[w][i - 1];
		/* one SEQ per vector, none skipped */
		CHECK(nseq[w] > 0 && seqs[w][nseq[w] - 1] == nseq[w]);
	}
	CHECK(!dup);
	sound = store_rec_index_sound(st, &nb);
	CHECK(sound && nb >= RG_COMP + RG_MIL && nb <= 4 * (RG_COMP + RG_MIL));
	/* deleted records leave their chains */
	for (unsigned i = 0; i < RG_COMP; i += 2)
		CHECK_OK(tw_store_sub_del(st, imsi[i]));
	sound = store_rec_index_sound(st, NULL);
	CHECK(sound);
	for (unsigned i = 0; i < RG_COMP; i += 7) {
		struct tw_eap_sim_triplet tr;

		rg_rand(rand_, i);
		if (i % 2 == 0) {
			CHECK_ERR(tw_store_sim_triplets(st, imsi[i], (const uint8_t(*)[16])rand_, 1,
							&tr),
				  TW_ERR_NOTFOUND);
		} else {
			CHECK_OK(tw_store_sim_triplets(st, imsi[i], (const uint8_t(*)[16])rand_, 1,
						       &tr));
			CHECK_MEM(&tr, &want[i], sizeof(tr));
		}
	}
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
	tw_wipe(mil, sizeof(mil));
	tw_wipe(want, sizeof(want));
}

/*
 * Dead records are reused: replacing every subscriber (as a nightly
 * `twag subscriber import --replace` does) drops every loaded record, and
 * so does deleting one; their next use loads a record again. Ten rounds
 * of that over 300 subscribers must not take ten times their records,
 * and every vector is still its own subscriber's (it verifies with its
 * keys, a record reused for another IMSI would not), with SEQ going up
 * across the replaces (the row's SEQ is kept: replace_floor).
 */
/* n Milenage subscribers "PREFIX%08u" (prefix of 7 digits), AMF 8000,
 * SEQ 0, provisioned in one transaction. */
static void provision_milenage(struct tw_store *st, struct tw_subscriber *subs, unsigned n,
			       const char *prefix)
{
	static const uint8_t amf[2] = { 0x80, 0x00 };
	size_t bad = 0;

	for (unsigned i = 0; i < n; i++) {
		char im[16];

		snprintf(im, sizeof(im), "%.7s%08u", prefix, i);
		make_milenage(&subs[i], im, amf, 0);
	}
	CHECK_OK(tw_store_sub_put_many(st, subs, n, false, &bad));
}

enum { RC_SUBS = 300, RC_ROUNDS = 10 };

static bool rc_vector(struct tw_store *st, const struct tw_subscriber *s, unsigned round,
		      uint64_t *last)
{
	struct tw_eap_aka_vec v;
	uint8_t rand_[16];
	uint64_t sqn;
	bool ok;

	memset(rand_, 0x3c, 16);
	tw_store_be32(rand_, round);
	if (tw_store_aka_vector(st, s->imsi, (round & 1) != 0, rand_, &v) != TW_OK)
		return false;
	sqn = sqn_of(s, rand_, v.autn);
	ok = sqn != 0 && sqn >> 5 > *last;
	*last = sqn >> 5;
	tw_wipe(&v, sizeof(v));
	return ok;
}

static void test_rec_recycle(void)
{
	static struct tw_subscriber subs[RC_SUBS];
	static uint64_t last[RC_SUBS];
	struct tw_store_stats stats;
	struct tw_store *st;
	size_t made = 0, graves = 0, bad = 0, fails = 0, kills = 0;
	bool sound;

	db_remove();
	st = open_db();
	if (st == NULL)
		return;
	memset(last, 0, sizeof(last));
	provision_milenage(st, subs, RC_SUBS, "0010194");
	for (unsigned round = 0; round < RC_ROUNDS; round++) {
		for (unsigned i = 0; i < RC_SUBS; i++)
			fails += !rc_vector(st, &subs[i], round, &last[i]);
		if (round % 3 == 2) {
			/* a tenth deleted and provisioned again (its SQN starts
			 * over from the row given: above the last one issued) */
			for (unsigned i = round; i < RC_SUBS; i += 10) {
				CHECK_OK(tw_store_sub_del(st, subs[i].imsi));
				CHECK_OK(tw_sqn_he_init(&subs[i].sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1,
							last[i] + 1000));
				CHECK_OK(tw_store_sub_put(st, &subs[i], false));
				kills++;
			}
		} else {
			CHECK_OK(tw_store_sub_put_many(st, subs, RC_SUBS, true, &bad));
			kills += RC_SUBS;
		}
	}
	for (unsigned i = 0; i < RC_SUBS; i++)
		fails += !rc_vector(st, &subs[i], RC_ROUNDS, &last[i]);
	CHECK(fails == 0);
	store_rec_counts(st, &made, &graves);
	tw_store_get_stats(st, &stats);
	/* without reuse: RC_ROUNDS * RC_SUBS records */
	CHECK(made <= RC_SUBS + RC_SUBS / 4);
	/* each record dropped was used again by a later load */
	CHECK(stats.recycled == kills && graves == 0);
	CHECK(stats.loaded == RC_SUBS && stats.evicted == 0);
	sound = store_rec_index_sound(st, NULL);
	CHECK(sound);
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
}

/*
 * The bounded cache: with room for 40 subscribers, 400 of them each get a
 * vector, three rounds over, one by one and in batches: at most about 40
 * are in memory (and about as many records made), the dropped ones load
 * again, and each SEQ is still above the subscriber's last (a dropped
 * record restarts from its mark, skipping the rest of its block). A
 * subscriber looked up often stays (its record is used when the hand
 * comes by): one requested before every other vector is never dropped.
 */
enum { RCAP_SUBS = 400, RCAP_CACHE = 40, RCAP_ROUNDS = 3 };

static void test_rec_cap(void)
{
	struct tw_store_opts o = opts_default();
	static struct tw_subscriber subs[RCAP_SUBS];
	static uint64_t last[RCAP_SUBS];
	struct tw_store_stats stats;
	struct tw_store *st;
	size_t made = 0, graves = 0, fails = 0, most = 0, loads;
	bool sound;

	db_remove();
	o.sub_cache = RCAP_CACHE;
	o.sqn_block = 8;
	st = open_with(&o);
	if (st == NULL)
		return;
	memset(last, 0, sizeof(last));
	provision_milenage(st, subs, RCAP_SUBS, "0010195");
	for (unsigned round = 0; round < RCAP_ROUNDS; round++) {
		for (unsigned i = 1; i < RCAP_SUBS; i++) {
			fails += !rc_vector(st, &subs[0], round * RCAP_SUBS + i, &last[0]);
			if (i % 2 == 0) {
				fails += !rc_vector(st, &subs[i], round, &last[i]);
			} else {
				struct tw_store_aka_req q;
				struct tw_eap_aka_vec v;
				uint8_t rand_[16];
				uint64_t sqn;

				memset(rand_, 0x6b, 16);
				tw_store_be32(rand_, round);
				q = (struct tw_store_aka_req){ .imsi = subs[i].imsi, .aka_prime = true,
							       .rand_ = rand_, .out = &v };
				tw_store_aka_vectors(st, &q, 1);
				sqn = q.rc == TW_OK ? sqn_of(&subs[i], rand_, v.autn) : 0;
				fails += sqn == 0 || sqn >> 5 <= last[i];
				last[i] = sqn >> 5;
				tw_wipe(&v, sizeof(v));
			}
			tw_store_get_stats(st, &stats);
			if (stats.loaded > most)
				most = stats.loaded;
		}
	}
	CHECK(fails == 0);
	store_rec_counts(st, &made, &graves);
	tw_store_get_stats(st, &stats);
	loads = stats.evicted + stats.loaded;
	CHECK(most <= RCAP_CACHE + 1);
	CHECK(made <= RCAP_CACHE + 8);
	CHECK(loads >= RCAP_ROUNDS * (RCAP_SUBS - 1) && stats.recycled + made >= loads);
	/* the hot subscriber was never dropped: one SEQ per vector, none
	 * skipped (a reload would restart at its mark) */
	CHECK(last[0] == (uint64_t)RCAP_ROUNDS * (RCAP_SUBS - 1));
	sound = store_rec_index_sound(st, NULL);
	CHECK(sound);
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
}

/*
 * The AUTS budgets live in the subscriber's record: one dropped from the
 * bounded cache while its window is open leaves them for its next load,
 * or loading enough other subscribers would give it a fresh budget (a way
 * round the rate limit). Subscriber 0 spends its 3 bad-AUTS attempts
 * (the 4th refused: budget spent), 150 others load through a cache of 16
 * twice over (subscriber 0 dropped with them), then a 5th bad AUTS is
 * still refused; the cache stays within its bound.
 */
enum { RRS_SUBS = 151, RRS_CACHE = 16 };

static void test_rec_resync_kept(void)
{
	struct tw_store_opts o = opts_default();
	static struct tw_subscriber subs[RRS_SUBS];
	static uint64_t last[RRS_SUBS];
	struct tw_store_stats stats;
	struct tw_store *st;
	uint8_t rand_[16], sqn_ms[6], auts[14];
	size_t fails = 0, most = 0;

	db_remove();
	o.sub_cache = RRS_CACHE;
	o.resync_max = 1;
	o.resync_bad_max = 3;
	st = open_with(&o);
	if (st == NULL)
		return;
	memset(last, 0, sizeof(last));
	provision_milenage(st, subs, RRS_SUBS, "0010196");
	fails += !rc_vector(st, &subs[0], 0, &last[0]);
	tw_test_random(rand_, 16);
	tw_store_be48(sqn_ms, (uint64_t)90000 << 5);
	CHECK_OK(tw_aka_auts_build(&subs[0].keys.aka, rand_, sqn_ms, auts));
	auts[0] ^= 0x40; /* MAC-S fails */
	for (int i = 0; i < 4; i++)
		CHECK_ERR(tw_store_resync(st, subs[0].imsi, rand_, auts),
			  i < 3 ? TW_ERR_AUTH : TW_ERR_RANGE);
	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 1; i < RRS_SUBS; i++) {
			fails += !rc_vector(st, &subs[i], round, &last[i]);
			tw_store_get_stats(st, &stats);
			if (stats.loaded > most)
				most = stats.loaded;
		}
	tw_store_get_stats(st, &stats);
	CHECK(fails == 0);
	CHECK(stats.evicted >= 2 * (RRS_SUBS - 1) - RRS_CACHE);
	CHECK(most <= RRS_CACHE + 1);
	/* the bad-AUTS budget is still spent: refused */
	CHECK_ERR(tw_store_resync(st, subs[0].imsi, rand_, auts), TW_ERR_RANGE);
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
}

/*
 * Reuse under threads: three threads take vectors (one by one and in
 * batches, 2-SEQ blocks so that reservations are under way often) over 60
 * subscribers in a cache of 12, while a fourth replaces subscribers the
 * whole time. Every record dropped is reused while other threads look
 * subscribers up, wait for a record's lock or for its reservation: a
 * record reused under a thread that still held it would give that thread
 * another subscriber's keys (its vector would not verify) or SEQ state
 * (a SEQ twice). Every vector verifies and no SEQ repeats.
 */
enum { RT_TH = 3, RT_SUBS = 60, RT_CACHE = 8, RT_N = 1500 };

struct rt_arg {
	struct tw_store *st;
	const struct tw_subscriber *subs;
	_Atomic bool *stop;
	int t, errors;
	uint64_t seq[RT_N * 2];
	int sub[RT_N * 2];
	size_t n;
};

static void *rt_main(void *p)
{
	struct rt_arg *a = p;
	struct tw_eap_aka_vec v[2];
	uint8_t rands[2][16];

	for (unsigned k = 0; k < RT_N; k++) {
		int w0 = (int)((k * 7 + (unsigned)a->t * 13) % RT_SUBS);
		int w1 = (int)((k * 3 + (unsigned)a->t * 5 + 1) % RT_SUBS);

		for (int j = 0; j < 2; j++) {
			memset(rands[j], 0x11 * (a->t + 1), 16);
			tw_store_be32(rands[j], k);
			rands[j][4] = (uint8_t)j;
		}
		if (k % 2 == 0) {
			struct tw_store_aka_req q[2] = {
				{ .imsi = a->subs[w0].imsi, .aka_prime = true, .rand_ = rands[0],
				  .out = &v[0] },
				{ .imsi = a->subs[w1].imsi, .aka_prime = false, .rand_ = rands[1],
				  .out = &v[1] },
			};

			tw_store_aka_vectors(a->st, q, 2);
			for (int j = 0; j < 2; j++) {
				int w = j == 0 ? w0 : w1;

				if (q[j].rc != TW_OK) {
					a->errors++;
					continue;
				}
				a->seq[a->n] = sqn_of(&a->subs[w], rands[j], v[j].autn);
				a->sub[a->n++] = w;
			}
		} else if (tw_store_aka_vector(a->st, a->subs[w0].imsi, false, rands[0], &v[0]) ==
			   TW_OK) {
			a->seq[a->n] = sqn_of(&a->subs[w0], rands[0], v[0].autn);
			a->sub[a->n++] = w0;
		} else {
			a->errors++;
		}
	}
	tw_wipe(v, sizeof(v));
	return NULL;
}

struct rt_rep {
	struct tw_store *st;
	const struct tw_subscriber *subs;
	_Atomic bool *stop;
	int errors, replaces;
};

static void *rt_replacer(void *p)
{
	struct rt_rep *a = p;
	size_t bad;

	for (unsigned k = 0; !atomic_load(a->stop); k++) {
		/* the same keys: only the record is dropped; the row's SEQ
		 * is kept (replace_floor) */
		if (tw_store_sub_put_many(a->st, &a->subs[(k * 11) % (RT_SUBS - 4)], 4, true,
					  &bad) != TW_OK)
			a->errors++;
		a->replaces++;
		usleep(50);
	}
	return NULL;
}

static void test_rec_reuse_threads(void)
{
	struct tw_store_opts o = opts_default();
	static struct tw_subscriber subs[RT_SUBS];
	static struct rt_arg args[RT_TH];
	static uint64_t all[RT_SUBS][RT_TH * RT_N * 2];
	_Atomic bool stop = false;
	struct rt_rep rep;
	struct tw_store_stats stats;
	size_t na[RT_SUBS] = { 0 }, total = 0, made = 0, graves = 0;
	pthread_t th[RT_TH], rth;
	struct tw_store *st;
	bool dup = false, zero = false, run = true, rep_run;
	int errors = 0, started = 0;

	db_remove();
	o.sqn_block = 2;
	o.sub_cache = RT_CACHE;
	st = open_with(&o);
	if (st == NULL)
		return;
	provision_milenage(st, subs, RT_SUBS, "0010196");
	rep = (struct rt_rep){ .st = st, .subs = subs, .stop = &stop };
	rep_run = CHECK(pthread_create(&rth, NULL, rt_replacer, &rep) == 0);
	for (int t = 0; t < RT_TH && run; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].st = st;
		args[t].subs = subs;
		args[t].stop = &stop;
		args[t].t = t;
		run = CHECK(pthread_create(&th[t], NULL, rt_main, &args[t]) == 0);
		started += run;
	}
	for (int t = 0; t < started; t++) {
		pthread_join(th[t], NULL);
		errors += args[t].errors;
		for (size_t j = 0; j < args[t].n; j++) {
			zero |= args[t].seq[j] == 0;
			all[args[t].sub[j]][na[args[t].sub[j]]++] = args[t].seq[j] >> 5;
		}
	}
	atomic_store(&stop, true);
	if (rep_run)
		pthread_join(rth, NULL);
	CHECK(errors == 0 && !zero && rep.errors == 0 && rep.replaces > 0);
	for (int w = 0; w < RT_SUBS; w++) {
		qsort(all[w], na[w], sizeof(all[w][0]), cmp_u64);
		for (size_t i = 1; i < na[w]; i++)
			dup |= all[w][i] == all[w][i - 1];
		total += na[w];
	}
	CHECK(!dup);
	CHECK(total == (size_t)started * RT_N * 3 / 2);
	tw_store_get_stats(st, &stats);
	store_rec_counts(st, &made, &graves);
	CHECK(stats.evicted > 0 && stats.recycled > 0);
	CHECK(made <= 4 * RT_CACHE);
	CHECK(store_rec_index_sound(st, NULL));
	tw_store_close(st);
	tw_wipe(subs, sizeof(subs));
}

/*
 * Versions 1 and 2 (a row per id, random ids): refused read-only with a
 * clear message; opened for writing, migrated to version 4 in one
 * transaction: the old tables go (their ids cannot name a row: those
 * peers authenticate fully once), subscribers and SQN state stay.
 * Version 3 (a row per IMSI in eight columns under a text key) likewise,
 * and its rows are carried over: its pseudonyms and re-auth ids are still
 * found after the migration.
 */
/*
 * twag subscriber disable: a disabled subscriber gets no vector, triplet
 * or resync (TW_ERR_DISABLED) in this process at once and in another
 * process on the file within its poll of changes; info says so; a
 * replace keeps the flag; enable gives vectors again; an unknown IMSI is
 * TW_ERR_NOTFOUND.
 */
static void test_disable(void)
{
	struct tw_store_opts o = opts_default();
	struct tw_subscriber s;
	struct tw_store_sub_info info;
	struct tw_eap_aka_vec v;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	uint8_t rand_[16] = { 1 };
	struct tw_store *st, *other;
	char imsi[16];
	int rc = TW_OK;

	db_remove();
	st = open_with(&o);
	other = open_with(&o);
	if (st == NULL || other == NULL)
		return;
	random_imsi(imsi);
	make_milenage(&s, imsi, amf, 0x10);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	CHECK_OK(tw_store_aka_vector(st, imsi, true, rand_, &v));
	CHECK_OK(tw_store_aka_vector(other, imsi, true, rand_, &v));
	CHECK_OK(tw_store_sub_set_disabled(st, imsi, true));
	CHECK_ERR(tw_store_aka_vector(st, imsi, true, rand_, &v), TW_ERR_DISABLED);
	CHECK(tw_ct_is_zero(&v, sizeof(v)));
	/* the other process: within its poll of the file's changes */
	for (int i = 0; i < 100; i++) {
		rc = tw_store_aka_vector(other, imsi, true, rand_, &v);
		if (rc == TW_ERR_DISABLED)
			break;
		usleep(20 * 1000);
	}
	CHECK_ERR(rc, TW_ERR_DISABLED);
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(info.disabled);
	CHECK_OK(tw_store_sub_put(st, &s, true));
	CHECK_ERR(tw_store_aka_vector(st, imsi, false, rand_, &v), TW_ERR_DISABLED);
	CHECK_OK(tw_store_sub_set_disabled(st, imsi, false));
	CHECK_OK(tw_store_aka_vector(st, imsi, true, rand_, &v));
	CHECK_OK(tw_store_sub_info(st, imsi, &info));
	CHECK(!info.disabled);
	CHECK_ERR(tw_store_sub_set_disabled(st, "001019999999999", true), TW_ERR_NOTFOUND);
	CHECK_ERR(tw_store_sub_set_disabled(st, "12", true), TW_ERR_INVAL);
	tw_store_close(other);
	tw_store_close(st);
	tw_wipe(&s, sizeof(s));
	tw_wipe(&v, sizeof(v));
}

static void test_schema_migration(void)
{
	static const char *const v2_sql =
		"DROP TABLE ident;"
		"CREATE TABLE pseudonym (id BLOB PRIMARY KEY, imsi TEXT NOT NULL,"
		" created INTEGER NOT NULL);"
		"CREATE INDEX pseudonym_imsi ON pseudonym (imsi, created);"
		"CREATE TABLE reauth (id BLOB PRIMARY KEY, state BLOB NOT NULL,"
		" created INTEGER NOT NULL, imsi TEXT);"
		"CREATE INDEX reauth_created ON reauth (created);"
		"CREATE INDEX reauth_imsi ON reauth (imsi, created);"
		"INSERT INTO pseudonym VALUES (x'32616263', '001010000000001', 1);"
		"INSERT INTO reauth VALUES (x'34616263', x'00', 1, '001010000000001');"
		"UPDATE meta SET value = 2 WHERE name = 'schema_version'";
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, got;
	struct tw_subscriber s;
	struct tw_store_sub_info info;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store *st;
	char imsi[16], err[200];
	int rc;

	static const char *const v3_sql =
		"DROP TABLE ident;"
		"CREATE TABLE ident (imsi TEXT PRIMARY KEY, p0 BLOB, p1 BLOB,"
		" r0 BLOB, r0_state BLOB, r0_t INTEGER, r1 BLOB, r1_state BLOB, r1_t INTEGER)"
		" WITHOUT ROWID;"
		"INSERT INTO ident SELECT * FROM ident_old;"
		"DROP TABLE ident_old;"
		"UPDATE meta SET value = 3 WHERE name = 'schema_version'";
	struct tw_eap_reauth_state r3;
	char p3[16];
	size_t p3_len;

	for (int version = 1; version <= 4; version++) {
		db_remove();
		st = open_with(&o);
		if (st == NULL)
			return;
		random_imsi(imsi);
		make_milenage(&s, imsi, amf, 0x123);
		CHECK_OK(tw_store_sub_put(st, &s, false));
		if (version == 3) {
			/* ids stored by this version, then its rows put back
			 * in version 3's layout */
			ops = tw_store_identity_ops(st);
			random_state(&r3, imsi, 23);
			CHECK_OK(ops->pseudonym_store(ops->arg, MIDP("2before-migration@x", imsi),
						      imsi, 15));
			CHECK_OK(ops->reauth_store(ops->arg, MIDR("4before-migration@x", r3),
						   &r3));
		}
		tw_store_close(st);
		if (version == 3) {
			CHECK(raw_exec("CREATE TABLE ident_old AS SELECT imsi, p0, p1, r0,"
				       " r0_state, r0_t, r1, r1_state, r1_t FROM ident3v"));
			CHECK(raw_int("SELECT count(*) FROM ident_old WHERE imsi = ?1"
				      " AND p0 IS NOT NULL AND r0_state IS NOT NULL", imsi) == 1);
			CHECK(raw_exec(v3_sql));
		}
		/* what a version 2 (or 1: reauth without imsi) file looked like */
		if (version <= 2)
			CHECK(raw_exec(v2_sql));
		if (version == 1)
			CHECK(raw_exec("DROP INDEX reauth_imsi;"
				       " ALTER TABLE reauth DROP COLUMN imsi;"
				       "UPDATE meta SET value = 1 WHERE name = 'schema_version'"));
		/* versions 1 to 4 had no disabled flag */
		CHECK(raw_exec("ALTER TABLE subscriber DROP COLUMN disabled"));
		if (version == 4)
			CHECK(raw_exec("UPDATE meta SET value = 4 WHERE name = 'schema_version'"));

		o.read_only = true;
		st = NULL;
		rc = tw_store_open(&st, &(struct tw_store_opts){ .path = db, .kek = kek,
								 .read_only = true },
				   err, sizeof(err));
		CHECK(rc != TW_OK && st == NULL);
		CHECK(strstr(err, "open it for writing once to migrate it") != NULL);
		tw_store_close(st);
		CHECK(raw_int("SELECT value FROM meta WHERE name = 'schema_version'"
			      " AND ?1 IS NOT NULL", imsi) == version);

		o.read_only = false;
		st = open_with(&o);
		if (st == NULL)
			return;
		CHECK(raw_int("SELECT value FROM meta WHERE name = 'schema_version'"
			      " AND ?1 IS NOT NULL", imsi) == 5);
		CHECK(raw_int("SELECT count(*) FROM subscriber WHERE imsi = ?1 AND disabled = 0",
			      imsi) == 1);
		CHECK(raw_int("SELECT count(*) FROM sqlite_master WHERE name IN"
			      " ('pseudonym', 'reauth', 'reauth_imsi', 'ident_3', 'ident_old')"
			      " AND ?1 IS NOT NULL", imsi) == 0);
		ops = tw_store_identity_ops(st);
		if (version == 3) {
			/* carried over */
			CHECK_OK(ops->pseudonym_lookup(ops->arg, MID("2before-migration@x"), p3,
						       &p3_len));
			CHECK(p3_len == 15 && memcmp(p3, imsi, 15) == 0);
			CHECK_OK(ops->reauth_lookup(ops->arg, MID("4before-migration@x"), &got));
			CHECK(state_eq(&got, &r3));
		}
		/* the subscriber and its SQN state are as they were */
		CHECK_OK(tw_store_sub_info(st, imsi, &info));
		CHECK(info.seq_he == 0x123);
		random_state(&r1, imsi, 50);
		CHECK_OK(ops->reauth_store(ops->arg, MIDR("8after-migration@x", r1), &r1));
		tw_store_close(st);
		st = open_with(&o);
		if (st == NULL)
			return;
		ops = tw_store_identity_ops(st);
		CHECK_OK(ops->reauth_lookup(ops->arg, MID("8after-migration@x"), &got));
		CHECK(state_eq(&got, &r1));
		tw_store_close(st);
		nminted = 0; /* the next round mints anew */
	}
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&r3);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/*
 * One row per IMSI: each re-auth id stored goes to slot 0 and the one
 * before to slot 1, the older one leaves (memory and row), whether the
 * two come in one round or each in its own (each close ends a round).
 * The newest two are found after a reopen, the rest are not; the newest
 * stored again changes its slot in place.
 */
static void test_reauth_in_place(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, got;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_store *st;
	char imsi[16], id[32];
	uint8_t b[TW_EAP_ID_MAX];
	bool ok = true;

	db_remove();
	random_imsi(imsi);
	random_state(&r1, imsi, 50);
	for (int i = 0; i < 6; i++) {
		st = open_with(&o);
		if (st == NULL)
			return;
		ops = tw_store_identity_ops(st);
		if (i == 0) {
			make_milenage(&s, imsi, amf, 0);
			CHECK_OK(tw_store_sub_put(st, &s, false));
		}
		snprintf(id, sizeof(id), "8ip%d@x", i);
		r1.counter = (uint16_t)i;
		ok &= ops->reauth_store(ops->arg, MIDR(id, r1), &r1) == TW_OK;
		tw_store_close(st);
		ok &= raw_int("SELECT count(*) FROM ident3v WHERE imsi = ?1", imsi) == 1;
		ok &= raw_int(R_COUNT, imsi) == (i == 0 ? 1 : 2);
		ok &= raw_blob("SELECT r0 FROM ident3v WHERE r0 = ?1", MID(id), b, sizeof(b)) ==
		      strlen(mid(ops, id, NULL, 0));
		if (i > 0) {
			snprintf(id, sizeof(id), "8ip%d@x", i - 1);
			ok &= raw_blob("SELECT r1 FROM ident3v WHERE r1 = ?1", MID(id), b,
				       sizeof(b)) > 0;
		}
	}
	CHECK(ok);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	/* and two more in one round */
	for (int i = 6; i < 8; i++) {
		snprintf(id, sizeof(id), "8ip%d@x", i);
		r1.counter = (uint16_t)i;
		ok &= ops->reauth_store(ops->arg, MIDR(id, r1), &r1) == TW_OK;
	}
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "8ip%d@x", i);
		if (i >= 6)
			ok &= ops->reauth_lookup(ops->arg, MID(id), &got) == TW_OK && got.counter == i;
		else
			ok &= ops->reauth_lookup(ops->arg, MID(id), &got) == TW_ERR_NOTFOUND;
	}
	CHECK(ok);
	/* the newest id stored again changes its own slot: both stay */
	r1.counter = 77;
	CHECK_OK(ops->reauth_store(ops->arg, MID("8ip7@x"), &r1));
	tw_store_close(st);
	CHECK(raw_int(R_COUNT, imsi) == 2);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK(ops->reauth_lookup(ops->arg, MID("8ip7@x"), &got) == TW_OK && got.counter == 77);
	CHECK(ops->reauth_lookup(ops->arg, MID("8ip6@x"), &got) == TW_OK && got.counter == 6);
	tw_store_close(st);
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/*
 * Minted ids (schema 3): the leading digit, 26 characters [0-9a-v], the
 * realm; the body decrypts (OpenSSL, from the layout's description) to
 * the IMSI it was minted for, and every id of an IMSI differs. The store
 * takes only ids minted for the IMSI given; a look-up of anything else,
 * or of a stored id with one character changed, finds nothing (from the
 * database too); a sealed state changed on disk, or moved to another id,
 * does not open; expired re-auth state leaves the database in a sweep.
 */
static void test_minted_ids(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, got;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	static char seen[1000][32];
	struct tw_store *st;
	char imsi[16], other[16], dec[16], out[16], p[64], r[80], bad[80], q[80];
	uint8_t rnd[6], b[TW_EAP_ID_MAX];
	size_t n = 0;
	bool ok = true;

	db_remove();
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	random_imsi(imsi);
	random_imsi(other);
	other[3] = imsi[3] == '9' ? '0' : (char)(imsi[3] + 1);
	make_milenage(&s, imsi, amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));

	for (int i = 0; i < 1000; i++) {
		mint_into(ops, "7", imsi, 15, seen[i], sizeof(seen[i]));
		ok &= strlen(seen[i]) == 27 && seen[i][0] == '7' &&
		      strspn(seen[i] + 1, "0123456789abcdefghijklmnopqrstuv") == 26;
		ossl_id_imsi(seen[i], dec, rnd);
		ok &= strcmp(dec, imsi) == 0;
		for (int j = 0; j < i && ok; j++)
			ok &= strcmp(seen[i], seen[j]) != 0;
	}
	CHECK(ok);
	/* a forked child mints ids unlike its parent's, in the same minute */
	{
		char kid[8][32], mine[8][32];
		int fd[2];
		pid_t pid;

		if (CHECK(pipe(fd) == 0)) {
			pid = fork();
			if (pid == 0) {
				for (int i = 0; i < 8; i++)
					mint_into(ops, "7", imsi, 15, kid[i], sizeof(kid[i]));
				_exit(write(fd[1], kid, sizeof(kid)) == (ssize_t)sizeof(kid) ? 0 : 1);
			}
			for (int i = 0; i < 8; i++)
				mint_into(ops, "7", imsi, 15, mine[i], sizeof(mine[i]));
			close(fd[1]);
			CHECK(pid > 0 && read(fd[0], kid, sizeof(kid)) == (ssize_t)sizeof(kid));
			close(fd[0]);
			if (pid > 0)
				(void)waitpid(pid, NULL, 0);
			for (int i = 0; i < 8; i++)
				for (int j = 0; j < 8; j++)
					ok &= strcmp(kid[i], mine[j]) != 0 &&
					      strlen(kid[i]) == 27;
			CHECK(ok);
		}
	}
	/* IMSIs of 5..15 digits */
	mint_into(ops, "2", "00101", 5, p, sizeof(p));
	ossl_id_imsi(p, dec, rnd);
	CHECK(strcmp(dec, "00101") == 0);
	CHECK_ERR(ops->mint_body(ops->arg, '2', "1234", 4, b, sizeof(b), &n), TW_ERR_INVAL);
	CHECK_ERR(ops->mint_body(ops->arg, '2', "00101000000000x", 15, b, sizeof(b), &n),
		  TW_ERR_INVAL);
	CHECK_ERR(ops->mint_body(ops->arg, '2', imsi, 15, b, 25, &n), TW_ERR_OVERFLOW);
	CHECK_ERR(ops->mint_body(ops->arg, 'x', imsi, 15, b, sizeof(b), &n), TW_ERR_INVAL);

	/* only ids minted for the IMSI given */
	mint_into(ops, "2", imsi, 15, p, sizeof(p));
	mint_into(ops, "4@wlan.example", imsi, 15, r, sizeof(r));
	mint_into(ops, "2", other, 15, q, sizeof(q));
	CHECK_ERR(ops->pseudonym_store(ops->arg, ID(q), imsi, 15), TW_ERR_INVAL);
	CHECK_ERR(ops->pseudonym_store(ops->arg, ID("2abcdefghijklmnopqrstuvwxyz"), imsi, 15),
		  TW_ERR_INVAL);
	random_state(&r1, other, 23);
	CHECK_ERR(ops->reauth_store(ops->arg, ID(r), &r1), TW_ERR_INVAL);
	random_state(&r1, imsi, 23);
	CHECK_OK(ops->pseudonym_store(ops->arg, ID(p), imsi, 15));
	CHECK_OK(ops->reauth_store(ops->arg, ID(r), &r1));
	tw_store_close(st);

	st = open_with(&o); /* from the database now */
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(p), out, &n));
	CHECK(n == 15 && memcmp(out, imsi, 15) == 0);
	CHECK_OK(ops->reauth_lookup(ops->arg, ID(r), &got));
	CHECK(state_eq(&got, &r1));
	/* every character of the body changed, in turn */
	for (size_t i = 1; i <= 26; i++) {
		snprintf(bad, sizeof(bad), "%s", p);
		bad[i] = bad[i] == 'a' ? 'b' : 'a';
		ok &= ops->pseudonym_lookup(ops->arg, ID(bad), out, &n) == TW_ERR_NOTFOUND;
		snprintf(bad, sizeof(bad), "%s", r);
		bad[i] = bad[i] == 'v' ? '0' : 'v';
		ok &= ops->reauth_lookup(ops->arg, ID(bad), &got) == TW_ERR_NOTFOUND;
	}
	CHECK(ok);
	/* another spelling of the same block (one of the 2 spare bits of the
	 * last character set) is not an id of ours: refused, not found; so
	 * are a character outside the alphabet, an id cut short, a realm
	 * without "@" */
	snprintf(bad, sizeof(bad), "%s", p);
	{
		static const char a32[] = "0123456789abcdefghijklmnopqrstuv";
		int v = (int)(strchr(a32, p[26]) - a32);

		CHECK((v & 3) == 0);
		bad[26] = a32[v ^ 1];
		CHECK_ERR(ops->pseudonym_store(ops->arg, ID(bad), imsi, 15), TW_ERR_INVAL);
		CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(bad), out, &n), TW_ERR_NOTFOUND);
		bad[26] = a32[v ^ 2];
		CHECK_ERR(ops->pseudonym_store(ops->arg, ID(bad), imsi, 15), TW_ERR_INVAL);
	}
	/* every octet outside the alphabet, at every position: refused */
	{
		static const uint8_t outside[] = { 'w', 'z', 'A', 'V', 'W', '/', ':', '`', '{',
						   '@', ' ', 0x80, 0xb0, 0xe1, 0xff };

		ok = true;
		for (size_t i = 1; i <= 26; i++)
			for (size_t j = 0; j < sizeof(outside); j++) {
				snprintf(bad, sizeof(bad), "%s", p);
				bad[i] = (char)outside[j];
				ok &= ops->pseudonym_store(ops->arg, ID(bad), imsi, 15) ==
				      TW_ERR_INVAL;
			}
		CHECK(ok);
		snprintf(bad, sizeof(bad), "%s", p);
	}
	bad[26] = 'w';
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(bad), out, &n), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, (const uint8_t *)p, 26, out, &n),
		  TW_ERR_NOTFOUND);
	snprintf(bad, sizeof(bad), "%s", r);
	bad[27] = '.';
	CHECK_ERR(ops->reauth_lookup(ops->arg, ID(bad), &got), TW_ERR_NOTFOUND);
	/* the pseudonym is not a re-auth id, nor the other way round */
	CHECK_ERR(ops->reauth_lookup(ops->arg, ID(p), &got), TW_ERR_NOTFOUND);
	CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(r), out, &n), TW_ERR_NOTFOUND);
	tw_store_close(st);

	/* a sealed state changed on disk, then moved to another id */
	/* one statement: two (to 00 where not 00, then to 01 where 00) put
	 * an octet that was 01 back as it was, once in 256 runs */
	CHECK(raw_exec("UPDATE ident3v SET r0_state = substr(r0_state, 1, 40) ||"
		       " CASE WHEN substr(r0_state, 41, 1) = x'00' THEN x'01' ELSE x'00' END ||"
		       " substr(r0_state, 42) WHERE r0 IS NOT NULL"));
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK(ops->reauth_lookup(ops->arg, ID(r), &got) != TW_OK);
	CHECK(tw_ct_is_zero(&got, sizeof(got)));
	{
		char r2[80];

		mint_into(ops, "4@wlan.example", imsi, 15, r2, sizeof(r2));
		CHECK_OK(ops->reauth_store(ops->arg, ID(r2), &r1));
		tw_store_close(st);
		/* r2's sealed state (slot 0) into r's slot (slot 1) */
		CHECK(raw_exec("UPDATE ident3v SET r1_state = r0_state"
			       " WHERE r0 IS NOT NULL AND r1 IS NOT NULL"));
		st = open_with(&o);
		if (st == NULL)
			return;
		ops = tw_store_identity_ops(st);
		CHECK_OK(ops->reauth_lookup(ops->arg, ID(r2), &got));
		CHECK(state_eq(&got, &r1));
		CHECK(ops->reauth_lookup(ops->arg, ID(r), &got) != TW_OK);
		tw_store_close(st);
		/* a row value cut short, or of another format: none of its
		 * ids is found (no crash, no read past it), and the next id
		 * stored for the IMSI makes a good row again */
		for (int k = 0; k < 4; k++) {
			/* even k: the row spoilt, then the ids stored again;
			 * odd k: after a reopen, found */
			if (k % 2 == 0)
				CHECK(raw_exec(k == 0
					? "UPDATE ident SET v = substr(v, 1, length(v) - 3)"
					: "UPDATE ident SET v = x'02' || substr(v, 2)"));
			st = open_with(&o);
			if (st == NULL)
				return;
			ops = tw_store_identity_ops(st);
			if (k % 2 == 0) {
				CHECK_ERR(ops->reauth_lookup(ops->arg, ID(r2), &got),
					  TW_ERR_NOTFOUND);
				CHECK(tw_ct_is_zero(&got, sizeof(got)));
				CHECK_ERR(ops->pseudonym_lookup(ops->arg, ID(p), out, &n),
					  TW_ERR_NOTFOUND);
				CHECK_OK(ops->reauth_store(ops->arg, ID(r2), &r1));
				CHECK_OK(ops->pseudonym_store(ops->arg, ID(p), imsi, 15));
			} else {
				CHECK_OK(ops->reauth_lookup(ops->arg, ID(r2), &got));
				CHECK(state_eq(&got, &r1));
				CHECK_OK(ops->pseudonym_lookup(ops->arg, ID(p), out, &n));
			}
			tw_store_close(st);
		}
		st = NULL;
	}
	tw_store_close(st);

	/* expired re-auth state leaves the database (TTL 1 s, a sweep every
	 * 100 ms); the pseudonym stays */
	o.reauth_ttl = 1;
	o.sweep_ms = 100;
	o.ident_flush_ms = 100;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	mint_into(ops, "4@x", imsi, 15, r, sizeof(r));
	CHECK_OK(ops->reauth_store(ops->arg, ID(r), &r1));
	for (int i = 0; i < 100 && raw_blob("SELECT r0 FROM ident3v WHERE r0 = ?1", ID(r), b,
					    sizeof(b)) == 0; i++)
		usleep(20000);
	CHECK(raw_blob("SELECT r0 FROM ident3v WHERE r0 = ?1", ID(r), b, sizeof(b)) == strlen(r));
	for (int i = 0; i < 200 && raw_int(R_COUNT, imsi) != 0; i++)
		usleep(20000);
	CHECK(raw_int(R_COUNT, imsi) == 0);
	CHECK(raw_int(P_COUNT, imsi) == 1);
	CHECK_ERR(ops->reauth_lookup(ops->arg, ID(r), &got), TW_ERR_NOTFOUND);
	/* a row whose only id was removed is left empty by the write-behind,
	 * then deleted by the sweep */
	random_state(&r1, other, 50);
	mint_into(ops, "4@y", other, 15, q, sizeof(q));
	CHECK_OK(ops->reauth_store(ops->arg, ID(q), &r1));
	for (int i = 0; i < 100 && raw_int(R_COUNT, other) != 1; i++)
		usleep(20000);
	CHECK(raw_int(R_COUNT, other) == 1);
	CHECK_OK(ops->reauth_remove(ops->arg, ID(q)));
	for (int i = 0; i < 200 && raw_int("SELECT count(*) FROM ident3v WHERE imsi = ?1", other) != 0;
	     i++)
		usleep(20000);
	CHECK(raw_int("SELECT count(*) FROM ident3v WHERE imsi = ?1", other) == 0);
	CHECK(raw_int(P_COUNT, imsi) == 1);
	tw_store_close(st);
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

/*
 * The re-auth flow removes the id a peer used, then stores the next one:
 * the removed id's empty slot is filled and the one before stays (two
 * valid ids, as with schema 2). Then the write-behind under pressure: a
 * 128-entry table (stores run partial rounds themselves), SQN reservations
 * from another thread (rounds split to let them in), and every attach's
 * pseudonym, re-auth id and removal of the previous re-auth id for one
 * IMSI one after the other (coalesced into one row): after a reopen each
 * IMSI has exactly its newest two pseudonyms and its newest re-auth id.
 */
enum { CO_IMSIS = 8, CO_ROUNDS = 150 };

struct co_vec {
	struct tw_store *st;
	char imsi[16];
	_Atomic int stop;
	int errors, n;
};

static void *co_vectors(void *p)
{
	struct co_vec *c = p;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16] = { 0 };

	while (!atomic_load(&c->stop)) {
		c->errors += tw_store_aka_vector(c->st, c->imsi, true, rand_, &v) != TW_OK;
		c->n++;
	}
	tw_wipe(&v, sizeof(v));
	return NULL;
}

static void test_ident_slots(void)
{
	struct tw_store_opts o = opts_default();
	const struct tw_eap_identity_ops *ops;
	struct tw_eap_reauth_state r1, got;
	struct tw_subscriber s;
	static const uint8_t amf[2] = { 0x80, 0x00 };
	static char pid[CO_IMSIS][CO_ROUNDS][TW_EAP_ID_MAX + 1];
	static char rid[CO_IMSIS][CO_ROUNDS][TW_EAP_ID_MAX + 1];
	char imsis[CO_IMSIS][16], a[80], b[80], c[80], out[16];
	struct co_vec cv;
	pthread_t th;
	struct tw_store *st;
	size_t n = 0;
	bool ok = true;

	db_remove();
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	random_imsi(imsis[0]);
	make_milenage(&s, imsis[0], amf, 0);
	CHECK_OK(tw_store_sub_put(st, &s, false));
	random_state(&r1, imsis[0], 50);
	mint_into(ops, "8@x", imsis[0], 15, a, sizeof(a));
	mint_into(ops, "8@x", imsis[0], 15, b, sizeof(b));
	mint_into(ops, "8@x", imsis[0], 15, c, sizeof(c));
	CHECK_OK(ops->reauth_store(ops->arg, ID(a), &r1));
	CHECK_OK(ops->reauth_store(ops->arg, ID(b), &r1));
	CHECK_OK(ops->reauth_remove(ops->arg, ID(b)));
	CHECK_OK(ops->reauth_store(ops->arg, ID(c), &r1));
	tw_store_close(st);
	CHECK(raw_int(R_COUNT, imsis[0]) == 2);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	CHECK_OK(ops->reauth_lookup(ops->arg, ID(a), &got));
	CHECK_ERR(ops->reauth_lookup(ops->arg, ID(b), &got), TW_ERR_NOTFOUND);
	CHECK_OK(ops->reauth_lookup(ops->arg, ID(c), &got));
	tw_store_close(st);

	db_remove();
	o.ident_cache = 128; /* more than a partial round (64) takes */
	o.sqn_block = 2;
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int i = 0; i < CO_IMSIS; i++) {
		random_imsi(imsis[i]);
		imsis[i][14] = (char)('0' + i);
		make_milenage(&s, imsis[i], amf, 0);
		CHECK_OK(tw_store_sub_put(st, &s, false));
		for (int j = 0; j < CO_ROUNDS; j++) {
			mint_into(ops, "2", imsis[i], 15, pid[i][j], sizeof(pid[i][j]));
			mint_into(ops, "4@x", imsis[i], 15, rid[i][j], sizeof(rid[i][j]));
		}
	}
	memset(&cv, 0, sizeof(cv));
	cv.st = st;
	memcpy(cv.imsi, imsis[0], 16);
	CHECK(pthread_create(&th, NULL, co_vectors, &cv) == 0);
	for (int j = 0; j < CO_ROUNDS; j++) {
		for (int i = 0; i < CO_IMSIS; i++) {
			int rc, tries = 0;

			random_state(&r1, imsis[i], 50);
			r1.counter = (uint16_t)(j + 1);
			do
				rc = ops->pseudonym_store(ops->arg, ID(pid[i][j]), imsis[i], 15);
			while (it_retry(rc, &tries));
			ok &= rc == TW_OK;
			tries = 0;
			do
				rc = ops->reauth_store(ops->arg, ID(rid[i][j]), &r1);
			while (it_retry(rc, &tries));
			ok &= rc == TW_OK;
			if (j > 0) {
				tries = 0;
				do
					rc = ops->reauth_remove(ops->arg, ID(rid[i][j - 1]));
				while (it_retry(rc, &tries));
				ok &= rc == TW_OK;
			}
		}
	}
	atomic_store(&cv.stop, 1);
	pthread_join(th, NULL);
	CHECK(ok && cv.errors == 0 && cv.n > 0);
	tw_store_close(st);
	st = open_with(&o);
	if (st == NULL)
		return;
	ops = tw_store_identity_ops(st);
	for (int i = 0; i < CO_IMSIS; i++) {
		ok &= raw_int(P_COUNT, imsis[i]) == 2 && raw_int(R_COUNT, imsis[i]) == 1;
		for (int j = 0; j < CO_ROUNDS; j++) {
			int want_p = j >= CO_ROUNDS - 2 ? TW_OK : TW_ERR_NOTFOUND;
			int want_r = j == CO_ROUNDS - 1 ? TW_OK : TW_ERR_NOTFOUND;

			ok &= ops->pseudonym_lookup(ops->arg, ID(pid[i][j]), out, &n) == want_p;
			ok &= ops->reauth_lookup(ops->arg, ID(rid[i][j]), &got) == want_r;
			if (want_r == TW_OK)
				ok &= got.counter == CO_ROUNDS;
		}
	}
	CHECK(ok);
	tw_store_close(st);
	tw_eap_reauth_state_wipe(&r1);
	tw_eap_reauth_state_wipe(&got);
	tw_wipe(&s, sizeof(s));
}

void test_main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/twag-test-store-XXXXXX");
	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(db, sizeof(db), "%s/subs.db", dir);
	tw_test_random(kek, sizeof(kek));

	test_kek();
	test_kek_race();
	test_open();
	test_provisioning();
	test_vectors();
	test_locked();
	test_commit_fails();
	test_aka_batch();
	test_aka_batch_threads();
	test_ident_index();
	test_reserve_ahead();
	test_two_stores();
	test_resync();
	test_identity();
	test_ident_flush_period();
	test_ident_round_order();
	test_populate();
	test_identity_volatile();
	test_schema_migration();
	test_disable();
	test_reauth_in_place();
	test_minted_ids();
	test_ident_slots();
	test_ident_threads();
	test_ident_volatile_threads();
	test_ident_reader();
	test_ident_random_fork();
	test_ident_random_wiped();
	test_pseudonym_ttl();
	test_store_check();
	test_other_process();
	test_replace_sqn();
	test_threads();
	test_rec_grow();
	test_rec_recycle();
	test_rec_cap();
	test_rec_resync_kept();
	test_rec_reuse_threads();
	test_kill9();

	rm_rf(dir);
}
