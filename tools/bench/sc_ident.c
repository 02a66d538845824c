/*
 * twag-bench — the subscriber store's side of identity privacy, as twagd's
 * worker runs it once per full authentication with pseudonyms and fast
 * re-authentication on (its default): a pseudonym and a re-auth id minted
 * (ops->mint_body), the pseudonym stored, the re-auth state sealed and
 * stored (ops->pseudonym_store, ops->reauth_store). The store is the real
 * one: an SQLite file in a temporary directory, its in-memory identity
 * table at the default size, its write-behind thread writing the rows.
 *
 * One op is one authentication's worth, over NSUB (ident-store) or
 * NSUB_BIG (ident-store-256k) COMP128-1 subscribers, provisioned after the
 * store opened, taken in a scattered order (loaded into the store's record cache at setup, as
 * the triplets of a full authentication load them), so the table fills,
 * then evicts what the write-behind made clean, as in a running gateway.
 * The row is thread CPU time: the write-behind thread's own CPU is not in
 * it (bench/gateway.sh measures the whole process); at the end of the row
 * that thread's CPU per op (from /proc, by its name) is printed on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/store.h"
#include "twag/vecsrc.h"

/* PACE_NS of wall time per op at least: the write-behind thread (about
 * 3 µs of CPU per row) keeps up, as it does in a gateway, instead of the
 * table filling with rows waiting to be written and this thread writing
 * them itself */
enum { NSUB = 4096, NSUB_BIG = 262144, ID_MAX = 96, PACE_NS = 10000, PACE_OPS = 256 };
_Static_assert((NSUB & (NSUB - 1)) == 0 && (NSUB_BIG & (NSUB_BIG - 1)) == 0,
	       "powers of two: the scattered order is a permutation");

static const char realm[] = "@wlan.mnc001.mcc001.3gppnetwork.org";

struct ident_state {
	char dir[64], path[96];
	struct tw_store *st;
	const struct tw_eap_identity_ops *ops;
	char (*imsi)[16];
	unsigned nsub;
	struct tw_eap_reauth_state rs;
	unsigned next;
	int64_t due_ns; /* CLOCK_MONOTONIC: when the next PACE_OPS ops may start */
	int64_t wb_ns0; /* the write-behind thread's CPU at the first op, or -1 */
	uint64_t n_ops;  /* ops run */
};

/* CPU time (ns, /proc/self/task/TID/schedstat) of this process's thread
 * named twag-store-wb (the store's write-behind), or -1. */
static int64_t wb_cpu_ns(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int64_t ns = -1;

	if (d == NULL)
		return -1;
	while (ns < 0 && (e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		long long v;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "twag-store-wb", 13) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		f = fopen(path, "r");
		if (f != NULL && fscanf(f, "%lld", &v) == 1)
			ns = v;
		if (f != NULL)
			fclose(f);
	}
	closedir(d);
	return ns;
}

static void ident_teardown(void *p)
{
	struct ident_state *s = p;
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char f[128];
	int64_t wb = s->st != NULL && s->wb_ns0 >= 0 ? wb_cpu_ns() : -1;

	if (wb >= 0 && s->n_ops > 0)
		fprintf(stderr, "%s: write-behind thread %.2f µs CPU per op (%llu ops, %u subscribers)\n",
			s->nsub == NSUB ? "ident-store" : "ident-store-256k",
			(double)(wb - s->wb_ns0) / 1e3 / (double)s->n_ops, (unsigned long long)s->n_ops,
			s->nsub);
	tw_store_close(s->st);
	s->st = NULL;
	free(s->imsi);
	s->imsi = NULL;
	if (s->dir[0] != '\0') {
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			snprintf(f, sizeof(f), "%s%s", s->path, sfx[i]);
			unlink(f);
		}
		rmdir(s->dir);
	}
	tw_wipe(&s->rs, sizeof(s->rs));
}

static int ident_setup(void *p, const struct bench_thread *t, unsigned nsub)
{
	struct ident_state *s = p;
	struct tw_store_opts o;
	struct tw_subscriber *subs;
	uint8_t kek[TW_STORE_KEK_LEN], ki[16], rands[1][16];
	struct tw_eap_sim_triplet tr;
	uint64_t seed = t->seed;
	char err[256];
	int rc = -1;

	snprintf(s->dir, sizeof(s->dir), "/tmp/twag-bench-ident-XXXXXX");
	if (mkdtemp(s->dir) == NULL) {
		s->dir[0] = '\0';
		return bench_unavailable(t, "no temporary directory");
	}
	snprintf(s->path, sizeof(s->path), "%s/ident.db", s->dir);
	bench_fill(&seed, kek, sizeof(kek));
	memset(&o, 0, sizeof(o));
	o.path = s->path;
	o.kek = kek;
	if (tw_store_open(&s->st, &o, err, sizeof(err)) != TW_OK) {
		tw_wipe(kek, sizeof(kek));
		return bench_unavailable(t, "store: %s", err);
	}
	tw_wipe(kek, sizeof(kek));
	s->ops = tw_store_identity_ops(s->st);
	s->nsub = nsub;
	s->imsi = calloc(nsub, sizeof(*s->imsi));
	subs = calloc(nsub, sizeof(*subs));
	if (s->imsi == NULL || subs == NULL)
		goto out;
	for (unsigned i = 0; i < nsub; i++) {
		snprintf(s->imsi[i], sizeof(s->imsi[i]), "00101%010u", t->thread * nsub + i);
		memcpy(subs[i].imsi, s->imsi[i], 16);
		subs[i].imsi_len = 15;
		bench_fill(&seed, ki, sizeof(ki));
		if (tw_sub_keys_comp128(&subs[i].keys, 1, ki) != TW_OK)
			goto out;
	}
	if (tw_store_sub_put_many(s->st, subs, nsub, false, NULL) != TW_OK)
		goto out;
	/* loaded as a full authentication's triplets load them */
	for (unsigned i = 0; i < nsub; i++) {
		bench_fill(&seed, rands[0], sizeof(rands[0]));
		if (tw_store_sim_triplets(s->st, s->imsi[i], rands, 1, &tr) != TW_OK)
			goto out;
	}
	s->wb_ns0 = -1;
	s->rs.method = 18; /* EAP-SIM */
	s->rs.imsi_len = 15;
	s->rs.k_aut_len = 16;
	bench_fill(&seed, s->rs.k_encr, sizeof(s->rs.k_encr));
	bench_fill(&seed, s->rs.k_aut, 16);
	bench_fill(&seed, s->rs.mk, sizeof(s->rs.mk));
	rc = 0;
out:
	tw_wipe(ki, sizeof(ki));
	tw_wipe(&tr, sizeof(tr));
	if (subs != NULL) {
		tw_wipe(subs, nsub * sizeof(*subs));
		free(subs);
	}
	return rc;
}

static int ident_setup_4k(void *p, const struct bench_thread *t)
{
	return ident_setup(p, t, NSUB);
}

static int ident_setup_256k(void *p, const struct bench_thread *t)
{
	return ident_setup(p, t, NSUB_BIG);
}

/* An id as the EAP server makes it: leading digit, minted body, realm. */
static int ident_mint(struct ident_state *s, const char *imsi, char lead, bool with_realm,
		      uint8_t id[ID_MAX], size_t *len)
{
	size_t n = 0;

	if (s->ops->mint_body(s->ops->arg, lead, imsi, 15, id + 1, ID_MAX - 1 - sizeof(realm), &n) !=
	    TW_OK)
		return -1;
	id[0] = (uint8_t)lead;
	*len = 1 + n;
	if (with_realm) {
		memcpy(id + *len, realm, sizeof(realm) - 1);
		*len += sizeof(realm) - 1;
	}
	return 0;
}

static int ident_run(void *p, uint64_t n)
{
	struct ident_state *s = p;
	uint8_t ps[ID_MAX], ra[ID_MAX];
	size_t pl, rl;

	if (s->n_ops == 0)
		s->wb_ns0 = wb_cpu_ns();
	s->n_ops += n;
	for (uint64_t i = 0; i < n; i++) {
		/* the subscribers in a scattered order (an odd multiplier
		 * permutes 0..nsub-1, nsub a power of two), as attaches come:
		 * in IMSI order, consecutive rows would share their B-tree
		 * pages, which at 256k subscribers made the write-behind's
		 * work per row several times smaller than it is */
		const char *imsi = s->imsi[(uint32_t)(s->next++ * 2654435761u) % s->nsub];

		if (s->next % PACE_OPS == 0) {
			struct timespec now;
			int64_t ahead;

			clock_gettime(CLOCK_MONOTONIC, &now);
			ahead = s->due_ns - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
			if (ahead > 0) {
				struct timespec d = { (time_t)(ahead / 1000000000),
						      (long)(ahead % 1000000000) };

				nanosleep(&d, NULL);
			} else if (ahead < -1000000) {
				s->due_ns -= ahead; /* behind by over 1 ms: no burst */
			}
			s->due_ns += PACE_OPS * (int64_t)PACE_NS;
		}

		memcpy(s->rs.imsi, imsi, 16);
		s->rs.counter = (uint16_t)i;
		if (ident_mint(s, imsi, '3', false, ps, &pl) != 0 ||
		    ident_mint(s, imsi, '5', true, ra, &rl) != 0 ||
		    s->ops->pseudonym_store(s->ops->arg, ps, pl, imsi, 15) != TW_OK ||
		    s->ops->reauth_store(s->ops->arg, ra, rl, &s->rs) != TW_OK)
			return -1;
	}
	return 0;
}

static const struct bench_scenario sc_ident_store = {
	.name = "ident-store",
	.impl = "twag",
	.what = "identity privacy per full authentication: pseudonym and re-auth id minted and "
		"stored (SQLite store; paced at 100k/s, so ns/op is the pace: read ops/CPU-s; "
		"the write-behind thread not counted)",
	.granule = 64,
	.state_size = sizeof(struct ident_state),
	.setup = ident_setup_4k,
	.run = ident_run,
	.teardown = ident_teardown,
};
BENCH_REGISTER(sc_ident_store)

static const struct bench_scenario sc_ident_store_256k = {
	.name = "ident-store-256k",
	.impl = "twag",
	.what = "as ident-store, over 262144 subscribers provisioned after the store opened "
		"(its record cache grows; each round's rows spread over more pages)",
	.granule = 64,
	.state_size = sizeof(struct ident_state),
	.setup = ident_setup_256k,
	.run = ident_run,
	.teardown = ident_teardown,
};
BENCH_REGISTER(sc_ident_store_256k)
