/*
 * twag-bench — the subscriber store's record cache on the triplet path of
 * a full EAP-SIM authentication (tw_store_sim_triplets, one triplet: the
 * record looked up, Ki unwrapped, COMP128-1). The store is the real one:
 * an SQLite file in a temporary directory.
 *
 *   store-sim-cached    4,096 subscribers, all in the cache (a hit: the
 *                       stripe, the record's lock, the unwrap, COMP128);
 *   store-sim-evicting  65,536 subscribers taken in turn through a cache
 *                       of 4,096 (--subscriber-cache): every op misses,
 *                       reads its row, and drops the least recently used
 *                       record, whose memory the load reuses.
 *
 * The difference of the two rows is what a subscriber costs that is not
 * in the cache when it attaches.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/store.h"
#include "twag/vecsrc.h"

enum { SC_HOT = 4096, SC_COLD = 65536, SC_CACHE = 4096 };

struct subcache_state {
	char dir[64], path[96];
	struct tw_store *st;
	char (*imsi)[16];
	unsigned nsub, next;
	uint8_t rand_[1][16];
};

static void subcache_teardown(void *p)
{
	struct subcache_state *s = p;
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char f[128];

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
}

static int subcache_setup(void *p, const struct bench_thread *t, unsigned nsub, unsigned cache)
{
	struct subcache_state *s = p;
	struct tw_store_opts o;
	struct tw_subscriber *subs;
	struct tw_eap_sim_triplet tr;
	uint8_t kek[TW_STORE_KEK_LEN], ki[16];
	uint64_t seed = t->seed;
	char err[256];
	int rc = -1;

	snprintf(s->dir, sizeof(s->dir), "/tmp/twag-bench-subcache-XXXXXX");
	if (mkdtemp(s->dir) == NULL) {
		s->dir[0] = '\0';
		return bench_unavailable(t, "no temporary directory");
	}
	snprintf(s->path, sizeof(s->path), "%s/sub.db", s->dir);
	bench_fill(&seed, kek, sizeof(kek));
	memset(&o, 0, sizeof(o));
	o.path = s->path;
	o.kek = kek;
	o.sub_cache = cache;
	if (tw_store_open(&s->st, &o, err, sizeof(err)) != TW_OK) {
		tw_wipe(kek, sizeof(kek));
		return bench_unavailable(t, "store: %s", err);
	}
	tw_wipe(kek, sizeof(kek));
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
	/* one pass first: the cache as a running gateway has it */
	bench_fill(&seed, s->rand_[0], sizeof(s->rand_[0]));
	for (unsigned i = 0; i < nsub; i++)
		if (tw_store_sim_triplets(s->st, s->imsi[i], (const uint8_t(*)[16])s->rand_, 1,
					  &tr) != TW_OK)
			goto out;
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

static int subcache_setup_hot(void *p, const struct bench_thread *t)
{
	return subcache_setup(p, t, SC_HOT, 0);
}

static int subcache_setup_cold(void *p, const struct bench_thread *t)
{
	return subcache_setup(p, t, SC_COLD, SC_CACHE);
}

static int subcache_run(void *p, uint64_t n)
{
	struct subcache_state *s = p;
	struct tw_eap_sim_triplet tr;
	int rc = 0;

	for (uint64_t i = 0; i < n && rc == 0; i++) {
		s->rand_[0][0] = (uint8_t)i;
		if (tw_store_sim_triplets(s->st, s->imsi[s->next++ % s->nsub],
					  (const uint8_t(*)[16])s->rand_, 1, &tr) != TW_OK)
			rc = -1;
	}
	tw_wipe(&tr, sizeof(tr));
	return rc;
}

static const struct bench_scenario sc_store_sim_cached = {
	.name = "store-sim-cached",
	.impl = "twag",
	.what = "subscriber store: one EAP-SIM triplet (record look-up, Ki unwrap, COMP128-1), "
		"4096 subscribers all in the record cache",
	.granule = 64,
	.state_size = sizeof(struct subcache_state),
	.setup = subcache_setup_hot,
	.run = subcache_run,
	.teardown = subcache_teardown,
};
BENCH_REGISTER(sc_store_sim_cached)

static const struct bench_scenario sc_store_sim_evicting = {
	.name = "store-sim-evicting",
	.impl = "twag",
	.what = "as store-sim-cached, 65536 subscribers in turn through a cache of 4096: every "
		"op reads its row and drops (and reuses) the least recently used record",
	.granule = 64,
	.state_size = sizeof(struct subcache_state),
	.setup = subcache_setup_cold,
	.run = subcache_run,
	.teardown = subcache_teardown,
};
BENCH_REGISTER(sc_store_sim_evicting)
