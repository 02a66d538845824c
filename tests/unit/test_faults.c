/*
 * Fault injection, as hostapd's test builds do it: one workload over the
 * subscriber store (create, a provisioning transaction, EAP-AKA' vectors
 * with small SQN blocks so that reservations are made all along, a
 * resynchronisation, GSM triplets, identity state written behind, close)
 * run again and again with one fault at the n-th point, n swept:
 *   - the n-th memory allocation fails: the library's own (malloc, calloc,
 *     realloc, posix_memalign, wrapped at link time), SQLite's (its
 *     allocator set with SQLITE_CONFIG_MALLOC) and OpenSSL's (the DRBG,
 *     CRYPTO_set_mem_functions) share one count;
 *   - the n-th write of the database files fails with SQLITE_FULL and so
 *     does every write after it (a disk that filled up);
 *   - the n-th sync fails (once).
 * Each run must end in clean errors (the workload goes on after one),
 * never a crash; no vector may be handed out whose SQN the USIM has seen;
 * and with the fault gone the store must open, pass tw_store_check, hold
 * the provisioning batch whole or not at all, and give every subscriber a
 * vector its USIM takes as fresh (no SQN issued twice across the fault).
 * SQLite's memory must be back to zero after each run (nothing leaked by
 * the store: statements finalised, connections closed) and the library's
 * allocations balanced by frees.
 *
 * twagd's configuration (a file of 40 clients, then the SIGHUP re-read of
 * its clients) is swept over every one of its allocations: each fails with
 * a message or works, and frees what it took. twagd's packet path (RADIUS,
 * the EAP-AKA'/AKA/SIM server, the store behind it; in-process) is swept
 * over the allocations of four attaches (its own code allocates nothing:
 * sessions and caches are tables made at start; the store's SQLite does):
 * every reply stays a valid RADIUS answer, every phone attaches afterwards
 * without a resynchronisation, nothing leaks.
 *
 * The fault-free run counts the points; CI sweeps a sample of each kind
 * per CPU level (every point where there are few), a different sample at
 * each level; TWAG_FAULT_ALL=1 sweeps every point.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_vfs.h"
#include "srv_flow.h"
#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/server.h"
#include "twag/store.h"
#include "twag/usim.h"

/* ---- allocation faults ---------------------------------------------------- */

static _Atomic long alloc_n, alloc_fail_at, live_blocks;
static _Atomic bool alloc_counting;

static bool alloc_fails(void)
{
	if (!atomic_load(&alloc_counting))
		return false;
	long n = atomic_fetch_add(&alloc_n, 1) + 1;

	return n == atomic_load(&alloc_fail_at);
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n)
{
	void *p = alloc_fails() ? NULL : __real_malloc(n);

	if (p != NULL)
		atomic_fetch_add(&live_blocks, 1);
	return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
	void *p = alloc_fails() ? NULL : __real_calloc(k, n);

	if (p != NULL)
		atomic_fetch_add(&live_blocks, 1);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q;

	if (alloc_fails())
		return NULL;
	q = __real_realloc(p, n);
	if (p == NULL && q != NULL)
		atomic_fetch_add(&live_blocks, 1);
	return q;
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
	int rc;

	if (alloc_fails())
		return ENOMEM;
	rc = __real_posix_memalign(p, a, n);
	if (rc == 0)
		atomic_fetch_add(&live_blocks, 1);
	return rc;
}

void __wrap_free(void *p)
{
	if (p != NULL)
		atomic_fetch_sub(&live_blocks, 1);
	__real_free(p);
}

/* SQLite's allocator: the size in a header before each block. */
enum { SQ_HDR = 16 };

static void *sq_malloc(int n)
{
	uint8_t *p;

	if (n <= 0 || alloc_fails())
		return NULL;
	p = __real_malloc((size_t)n + SQ_HDR);
	if (p == NULL)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + SQ_HDR;
}

static void sq_free(void *p)
{
	if (p != NULL)
		__real_free((uint8_t *)p - SQ_HDR);
}

static int sq_size(void *p)
{
	int n = 0;

	if (p != NULL)
		memcpy(&n, (uint8_t *)p - SQ_HDR, sizeof(n));
	return n;
}

static void *sq_realloc(void *p, int n)
{
	uint8_t *q;

	if (n <= 0 || alloc_fails())
		return NULL;
	q = __real_realloc((uint8_t *)p - SQ_HDR, (size_t)n + SQ_HDR);
	if (q == NULL)
		return NULL;
	memcpy(q, &n, sizeof(n));
	return q + SQ_HDR;
}

static int sq_roundup(int n)
{
	return (n + 7) & ~7;
}

static int sq_init(void *x)
{
	(void)x;
	return SQLITE_OK;
}

static void sq_shutdown(void *x)
{
	(void)x;
}

static void *ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return alloc_fails() ? NULL : __real_malloc(n);
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

static void ossl_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	__real_free(p);
}

/* ---- the workload ----------------------------------------------------------- */

enum { NSUB = 4, NAKA = 3, ROUNDS = 5 };

static char dir[96], db[160];
static uint8_t kek[32];
static struct tw_subscriber subs[NSUB];
static struct tw_usim usims[NAKA];

static void db_remove(void)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char p[192];

	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
		unlink(p);
	}
}

static void make_subs(void)
{
	static const uint8_t amf[2] = { 0x80, 0x00 };
	struct tw_sub_keys kk;
	uint8_t k[16], opc[16];

	for (int i = 0; i < NSUB; i++) {
		char imsi[16];

		snprintf(imsi, sizeof(imsi), "0010155%08u", 1000u + (unsigned)i);
		tw_test_random(k, 16);
		tw_test_random(opc, 16);
		if (i < NAKA)
			CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
		else
			CHECK_OK(tw_sub_keys_comp128(&kk, 1, k));
		CHECK_OK(tw_subscriber_init(&subs[i], imsi, &kk, amf));
		CHECK_OK(tw_sqn_he_init(&subs[i].sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1, 0));
	}
	tw_wipe(k, sizeof(k));
	tw_wipe(opc, sizeof(opc));
}

static bool clean_err(int rc)
{
	return rc == TW_ERR_IO || rc == TW_ERR_NOMEM || rc == TW_ERR_CRYPTO ||
	       rc == TW_ERR_NOTFOUND || rc == TW_ERR_RANGE || rc == TW_ERR_STATE;
}

struct outcome {
	int bad;       /* unclean results, stale vectors */
	int vectors;   /* vectors handed out */
	int failures;  /* clean errors seen */
};

/* One vector for subscriber i, fed to its USIM: it must be fresh. */
static void one_vector(struct tw_store *st, int i, struct outcome *o, const char *when)
{
	struct tw_eap_aka_vec v;
	uint8_t rand_[16], res[16], ck[16], ik[16], auts[14];
	size_t res_len = 0;
	int rc;

	tw_test_random(rand_, sizeof(rand_));
	rc = tw_store_aka_vector(st, subs[i].imsi, true, rand_, &v);
	if (rc != TW_OK) {
		o->failures++;
		if (!clean_err(rc) || !tw_ct_is_zero(&v, sizeof(v))) {
			o->bad++;
			tw_note("%s: vector: %s, or output left", when, tw_strerror(rc));
		}
		return;
	}
	o->vectors++;
	rc = tw_usim_authenticate(&usims[i], v.rand_, v.autn, res, &res_len, ck, ik, auts);
	if (rc != TW_OK) {
		o->bad++;
		tw_note("%s: the USIM refused a vector (%s): an SQN issued twice?", when,
			tw_strerror(rc));
	}
	tw_wipe(&v, sizeof(v));
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
}

/* The workload; store errors are counted, never fatal. */
static struct outcome workload(void)
{
	struct tw_store_opts opts;
	struct tw_store *st = NULL;
	struct outcome o = { 0, 0, 0 };
	char err[256];
	size_t bad = 0;
	int rc;

	memset(&opts, 0, sizeof(opts));
	opts.path = db;
	opts.kek = kek;
	opts.sqn_block = 2;
	opts.ident_cache = 64;
	rc = tw_store_open(&st, &opts, err, sizeof(err));
	if (rc != TW_OK) {
		o.failures++;
		if (!clean_err(rc) && rc != TW_ERR_AUTH && rc != TW_ERR_INVAL)
			o.bad++;
		if (st != NULL)
			o.bad++;
		return o;
	}
	rc = tw_store_sub_put_many(st, subs, NSUB, true, &bad);
	if (rc != TW_OK) {
		o.failures++;
		o.bad += !clean_err(rc);
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NAKA; i++)
			one_vector(st, i, &o, "faulted run");
	/* an AUTS from the USIM of subscriber 0: a replayed vector */
	{
		struct tw_eap_aka_vec v;
		uint8_t rand_[16], res[16], ck[16], ik[16], auts[14];
		size_t res_len = 0;

		tw_test_random(rand_, sizeof(rand_));
		if (tw_store_aka_vector(st, subs[0].imsi, true, rand_, &v) == TW_OK) {
			o.vectors++;
			if (tw_usim_authenticate(&usims[0], v.rand_, v.autn, res, &res_len, ck, ik,
						 auts) != TW_OK)
				o.bad++;
			if (tw_usim_authenticate(&usims[0], v.rand_, v.autn, res, &res_len, ck,
						 ik, auts) == TW_ERR_SYNC) {
				rc = tw_store_resync(st, subs[0].imsi, v.rand_, auts);
				if (rc != TW_OK) {
					o.failures++;
					o.bad += !clean_err(rc) && rc != TW_ERR_AUTH;
				}
			} else {
				o.bad++;
			}
			tw_wipe(&v, sizeof(v));
		} else {
			o.failures++;
		}
	}
	/* GSM triplets of the COMP128 subscriber */
	{
		uint8_t rands[2][16];
		struct tw_eap_sim_triplet t[2];

		tw_test_random(rands, sizeof(rands));
		rc = tw_store_sim_triplets(st, subs[NAKA].imsi, (const uint8_t(*)[16])rands, 2, t);
		if (rc != TW_OK) {
			o.failures++;
			o.bad += !clean_err(rc);
		}
		tw_wipe(t, sizeof(t));
	}
	/* identity state, written behind at close */
	{
		const struct tw_eap_identity_ops *ops = tw_store_identity_ops(st);
		uint8_t id[1 + TW_EAP_GEN_ID_BODY_MAX];
		size_t n = 0;

		id[0] = '2';
		rc = ops->mint_body(ops->arg, '2', subs[1].imsi, subs[1].imsi_len, id + 1,
				    sizeof(id) - 1, &n);
		if (rc == TW_OK)
			rc = ops->pseudonym_store(ops->arg, id, 1 + n, subs[1].imsi,
						  subs[1].imsi_len);
		if (rc != TW_OK) {
			o.failures++;
			o.bad += !clean_err(rc);
		}
	}
	tw_store_close(st);
	return o;
}

static void check_text(void *arg, const char *text)
{
	(void)arg;
	tw_note("store check: %s", text);
}

/* With the fault gone: the store opens and is sound, the batch is whole
 * or absent, and every AKA subscriber's next vector is fresh. */
static int verify(const char *what, long n)
{
	struct tw_store_opts opts;
	struct tw_store *st = NULL;
	struct tw_store_sub_info info;
	struct outcome o = { 0, 0, 0 };
	unsigned problems = 0, nsub = 0, nident = 0;
	char err[256], when[64];
	int present = 0, rc, bad = 0;

	snprintf(when, sizeof(when), "after the %s fault at %ld", what, n);
	memset(&opts, 0, sizeof(opts));
	opts.path = db;
	opts.kek = kek;
	rc = tw_store_open(&st, &opts, err, sizeof(err));
	if (rc != TW_OK) {
		tw_note("%s: the store does not open: %s (%s)", when, err, tw_strerror(rc));
		return 1;
	}
	rc = tw_store_check(st, check_text, NULL, &problems, &nsub, &nident);
	if (rc != TW_OK || problems != 0) {
		tw_note("%s: tw_store_check: %s, %u problems", when, tw_strerror(rc), problems);
		bad++;
	}
	for (int i = 0; i < NSUB; i++)
		present += tw_store_sub_info(st, subs[i].imsi, &info) == TW_OK;
	if (present != 0 && present != NSUB) {
		tw_note("%s: %d of %d subscribers of one transaction", when, present, NSUB);
		bad++;
	}
	if (present == NSUB)
		for (int i = 0; i < NAKA; i++)
			one_vector(st, i, &o, when);
	tw_store_close(st);
	if (present == NSUB && o.vectors != NAKA)
		bad++;
	return bad + o.bad;
}

static long runs_failing; /* runs where the fault surfaced as an error */

/* One run with the fault armed by arm(n); 0 if everything held. */
static int run_one(const char *what, long n, void (*arm)(long))
{
	long live0, live1;
	struct outcome o;
	int bad;

	db_remove();
	for (int i = 0; i < NAKA; i++)
		CHECK_OK(tw_usim_init_from_subscriber(&usims[i], &subs[i]));
	live0 = atomic_load(&live_blocks);
	arm(n);
	o = workload();
	arm(0);
	live1 = atomic_load(&live_blocks);
	bad = o.bad;
	runs_failing += o.failures > 0;
	if (sqlite3_memory_used() != 0) {
		tw_note("%s fault at %ld: SQLite holds %lld octets after close", what, n,
			(long long)sqlite3_memory_used());
		bad++;
	}
	if (live1 != live0) {
		tw_note("%s fault at %ld: %ld library blocks not freed", what, n, live1 - live0);
		bad++;
	}
	bad += verify(what, n);
	return bad;
}

static void arm_alloc(long n)
{
	atomic_store(&alloc_n, 0);
	atomic_store(&alloc_fail_at, n);
	atomic_store(&alloc_counting, n != 0 || atomic_load(&alloc_counting));
	if (n == 0)
		atomic_store(&alloc_counting, false);
}

static void arm_write(long n)
{
	atomic_store(&fault_writes, 0);
	atomic_store(&fault_write_from, n);
}

static void arm_sync(long n)
{
	atomic_store(&fault_syncs, 0);
	atomic_store(&fault_sync_at, n);
}

/* ---- twagd's configuration: the allocations of the RADIUS front end ------ */

static char conf[192];

/* Loads a config file with clients, re-reads its clients (SIGHUP), frees;
 * 0 when every step either worked or failed with a message. */
static int config_workload(void)
{
	struct tw_srv_config c;
	struct tw_srv_clients t;
	char err[256] = "", *argv[] = { (char *)"twagd", (char *)"--config", conf, NULL };
	int bad = 0, rc;

	tw_srv_config_defaults(&c);
	rc = tw_srv_config_load(&c, 3, argv, err, sizeof(err));
	if (rc != TW_OK) {
		bad += err[0] == '\0';
		if (bad)
			tw_note("config load failed (%s) without a message", tw_strerror(rc));
		tw_srv_config_free(&c);
		return bad;
	}
	memset(&t, 0, sizeof(t));
	err[0] = '\0';
	rc = tw_srv_config_reload_clients(&c, &t, err, sizeof(err));
	if (rc != TW_OK && err[0] == '\0') {
		tw_note("client reload failed (%s) without a message", tw_strerror(rc));
		bad++;
	}
	if (rc == TW_OK && t.n != 40) {
		tw_note("client reload: %zu clients, not 40", t.n);
		bad++;
	}
	tw_srv_clients_free(&t);
	tw_srv_config_free(&c);
	return bad;
}

static int config_run(const char *what, long n, void (*arm)(long))
{
	long live0 = atomic_load(&live_blocks);
	int bad;

	(void)what;
	arm(n);
	bad = config_workload();
	arm(0);
	if (atomic_load(&live_blocks) != live0) {
		tw_note("config, allocation fault at %ld: %ld blocks not freed", n,
			atomic_load(&live_blocks) - live0);
		bad++;
	}
	return bad;
}

static void config_sweep(void)
{
	FILE *f = fopen(conf, "w");
	long total, failed = 0;

	if (!CHECK(f != NULL))
		return;
	fprintf(f, "store = sqlite:/nonexistent/x.db\nnetwork-name = WLAN\n");
	for (int i = 0; i < 40; i++)
		fprintf(f, "client = 10.%d.0.0/16 secret-%d\n", i, i);
	fclose(f);
	atomic_store(&alloc_n, 0);
	atomic_store(&alloc_fail_at, 0);
	atomic_store(&alloc_counting, true);
	CHECK(config_workload() == 0);
	atomic_store(&alloc_counting, false);
	total = atomic_load(&alloc_n);
	for (long n = 1; n <= total; n++) {
		int bad = config_run("config", n, arm_alloc);

		failed += bad != 0;
		CHECK(bad == 0);
	}
	printf("note: test_faults: twagd configuration: %ld allocations, each failed once: "
	       "%ld not clean\n", total, failed);
	CHECK(total > 0);
	unlink(conf);
}

/* Sweeps points 1..total of one kind: all of them when few (or with
 * TWAG_FAULT_ALL), else about max of them, from an offset that differs
 * per CPU level. */
static void sweep(const char *what, long total, long max, void (*arm)(long))
{
	long step = 1, runs = 0, failed = 0;

	runs_failing = 0;
	if (total > max && getenv("TWAG_FAULT_ALL") == NULL)
		step = (total + max - 1) / max;
	/* the level's name picks the offset: each level another sample */
	unsigned h = tw_test_random_u32();

	for (const char *c = tw_cpu_level_name(); *c; c++)
		h = h * 31u + (unsigned char)*c;
	long start = 1 + (long)(h % (unsigned long)step);

	for (long n = start; n <= total; n += step) {
		int bad = run_one(what, n, arm);

		runs++;
		if (bad != 0) {
			failed++;
			if (failed <= 5)
				tw_note("%s fault at %ld of %ld: %d problems", what, n, total, bad);
		}
		CHECK(bad == 0);
	}
	printf("note: test_faults: %s: %ld points, %ld runs (every %ld), %ld saw an error, "
	       "%ld not clean\n", what, total, runs, step, runs_failing, failed);
	/* the faults reach the store (others are absorbed: SQLite retries,
	 * a look-aside buffer, a lazily built OpenSSL object built later) */
	CHECK(runs_failing > 0);
}

/* ---- the packet path: RADIUS, the EAP server and the store together ------ */

/*
 * twagd's packet path in-process (tests/harness/srv_flow.c): a fresh
 * server over a fresh store with three phones (EAP-AKA', EAP-AKA, EAP-SIM)
 * each run; with the fault armed, the three attach and the AKA' phone
 * attaches again (fast re-authentication). Every reply must be a valid
 * RADIUS answer (the harness checks each); with the fault gone every phone
 * attaches with the MSK its peer derived and no USIM sees a stale SQN (no
 * resynchronisation); nothing leaks.
 */
static struct phone fl_ph[3];

static void flow_attaches(unsigned *accepts, unsigned *failures)
{
	struct attach_result r;
	struct nas n;
	static const int order[] = { 0, 1, 2, 0 };

	nas_init(&n, "127.0.0.1", 40000, "02-00-00-00-00-01");
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		attach(&fl_ph[order[i]], &n, &r, NULL);
		if (r.code == TW_RADIUS_ACCESS_ACCEPT && r.peer_ok && r.keys_ok)
			(*accepts)++;
		else
			(*failures)++;
	}
}

static bool flow_begin(void)
{
	if (!flow_setup())
		return false;
	tw_log_set_level(TW_LOG_ERROR);
	provision(&fl_ph[0], TW_EAP_TYPE_AKA_PRIME, "001010000000001", false);
	provision(&fl_ph[1], TW_EAP_TYPE_AKA, "001010000000002", false);
	provision(&fl_ph[2], TW_EAP_TYPE_SIM, "001010000000101", false);
	return true;
}

/* One faulted run; 0 if everything held. */
static int flow_run(const char *what, long n, void (*arm)(long))
{
	unsigned acc = 0, fail = 0, acc2 = 0, fail2 = 0;
	long live0 = atomic_load(&live_blocks);
	int bad = 0;

	(void)what;
	if (!flow_begin())
		return 1;
	arm(n);
	flow_attaches(&acc, &fail);
	arm(0);
	runs_failing += fail > 0;
	flow_attaches(&acc2, &fail2);
	if (fail2 != 0 || ctr(TW_C_RESYNCS) != 0) {
		tw_note("packet path, fault at %ld: afterwards %u attaches failed, %llu "
			"resynchronisations", n, fail2, (unsigned long long)ctr(TW_C_RESYNCS));
		bad++;
	}
	flow_teardown();
	if (sqlite3_memory_used() != 0) {
		tw_note("packet path, fault at %ld: SQLite holds %lld octets", n,
			(long long)sqlite3_memory_used());
		bad++;
	}
	if (atomic_load(&live_blocks) != live0) {
		tw_note("packet path, fault at %ld: %ld blocks not freed", n,
			atomic_load(&live_blocks) - live0);
		bad++;
	}
	return bad;
}

/* Sweeps the n-th allocation, the n-th write on (disk full) and the n-th
 * sync of the packet path, every point (there are few). */
static void flow_sweep(void)
{
	static const struct {
		const char *what;
		void (*arm)(long);
	} kinds[] = {
		{ "allocation", arm_alloc },
		{ "write (disk full from there on)", arm_write },
		{ "sync", arm_sync },
	};
	unsigned acc = 0, fail = 0;
	long total[3];

	if (!CHECK(flow_begin()))
		return;
	atomic_store(&alloc_n, 0);
	atomic_store(&alloc_fail_at, 0);
	atomic_store(&alloc_counting, true);
	fault_vfs_reset();
	flow_attaches(&acc, &fail);
	atomic_store(&alloc_counting, false);
	total[0] = atomic_load(&alloc_n);
	total[1] = atomic_load(&fault_writes);
	total[2] = atomic_load(&fault_syncs);
	CHECK(acc == 4 && fail == 0);
	flow_teardown();
	printf("note: test_faults: the packet path (4 attaches) makes %ld allocations, %ld "
	       "writes, %ld syncs\n", total[0], total[1], total[2]);
	for (int k = 0; k < 3; k++) {
		long failed = 0;

		runs_failing = 0;
		for (long n = 1; n <= total[k]; n++) {
			int bad = flow_run(kinds[k].what, n, kinds[k].arm);

			failed += bad != 0;
			CHECK(bad == 0);
		}
		printf("note: test_faults: packet path, %s: %ld points, %ld saw an error, %ld "
		       "not clean\n", kinds[k].what, total[k], runs_failing, failed);
		/* the store's SQLite reads, reservations and commits */
		CHECK(total[k] > 0 && runs_failing > 0);
	}
}

void test_main(void)
{
	struct outcome o;
	long allocs, writes, syncs;

	snprintf(dir, sizeof(dir), "%s/twag-faults.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(db, sizeof(db), "%s/store.db", dir);
	tw_test_random(kek, sizeof(kek));
	make_subs();
	if (!CHECK(fault_vfs_on()))
		return;

	/* the fault-free run: it counts the points, and must be clean */
	db_remove();
	for (int i = 0; i < NAKA; i++)
		CHECK_OK(tw_usim_init_from_subscriber(&usims[i], &subs[i]));
	atomic_store(&alloc_n, 0);
	atomic_store(&alloc_fail_at, 0);
	atomic_store(&alloc_counting, true);
	fault_vfs_reset();
	o = workload();
	atomic_store(&alloc_counting, false);
	allocs = atomic_load(&alloc_n);
	writes = atomic_load(&fault_writes);
	syncs = atomic_load(&fault_syncs);
	CHECK(o.bad == 0 && o.failures == 0 && o.vectors == NAKA * ROUNDS + 1);
	CHECK(verify("no", 0) == 0);
	CHECK(allocs > 10 && writes > 5 && syncs > 2);
	printf("note: test_faults: the workload makes %ld allocations, %ld writes, %ld syncs\n",
	       allocs, writes, syncs);

	sweep("allocation", allocs, 600, arm_alloc);
	sweep("write (disk full from there on)", writes, 60, arm_write);
	sweep("sync", syncs, 40, arm_sync);

	snprintf(conf, sizeof(conf), "%s/twagd.conf", dir);
	config_sweep();
	flow_sweep();

	fault_vfs_off();
	db_remove();
	rmdir(dir);
	for (int i = 0; i < NSUB; i++)
		tw_wipe(&subs[i], sizeof(subs[i]));
	tw_wipe(kek, sizeof(kek));
}

/* The allocators go in before anything else runs. */
__attribute__((constructor)) static void faults_setup(void)
{
	static const sqlite3_mem_methods m = {
		sq_malloc, sq_free, sq_realloc, sq_size, sq_roundup, sq_init, sq_shutdown, NULL,
	};

	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
		fprintf(stderr, "test_faults: SQLITE_CONFIG_MALLOC refused\n");
	if (CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free) != 1)
		fprintf(stderr, "test_faults: CRYPTO_set_mem_functions refused\n");
}
