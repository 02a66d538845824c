/*
 * twag-bench — multi-buffer SHA-256 (tw_sha256_mb), the building block of
 * batched EAP-AKA' key derivation (CK'/IK', PRF', AT_MAC are HMAC-SHA-256
 * chains, independent between sessions). One op = one 64-octet block
 * compressed:
 *   sha256-mb       16 jobs of 4 blocks in one call (16 AVX-512 lanes;
 *                   SHA-NI one job after another without AVX-512)
 *   sha256-mb.one   the same jobs, one call each (SHA-NI where present)
 */
#include <string.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/sha.h"

enum { JOBS = 16, BLOCKS = 4 };

struct shm_state {
	uint8_t msg[JOBS][BLOCKS * 64];
	struct tw_sha256_job jobs[JOBS];
};

static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

static void arm(struct shm_state *s)
{
	for (unsigned i = 0; i < JOBS; i++) {
		memcpy(s->jobs[i].h, iv, sizeof(iv));
		s->jobs[i].seg[0] = s->msg[i];
		s->jobs[i].nblk[0] = BLOCKS;
		s->jobs[i].nblk[1] = s->jobs[i].nblk[2] = s->jobs[i].nblk[3] = 0;
	}
}

static int shm_setup(void *p, const struct bench_thread *t)
{
	struct shm_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->msg, sizeof(s->msg));
	return 0;
}

static void shm_teardown(void *p)
{
	tw_wipe(p, sizeof(struct shm_state));
}

static void all(struct shm_state *s)
{
	arm(s);
	tw_sha256_mb(s->jobs, JOBS);
}

static void one(struct shm_state *s)
{
	arm(s);
	for (unsigned i = 0; i < JOBS; i++)
		tw_sha256_mb(&s->jobs[i], 1);
}

#define SHM_RUNNER(fn)                                                                 \
	static int fn##_run(void *p, uint64_t n)                                       \
	{                                                                              \
		for (uint64_t i = 0; i < n; i += JOBS * BLOCKS)                        \
			fn(p);                                                         \
		return 0;                                                              \
	}                                                                              \
	/* the input seeds the 16 messages; out: job 5's chaining value */      \
	static int fn##_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out,    \
			     size_t *len)                                              \
	{                                                                              \
		struct shm_state *s = p;                                               \
		for (unsigned i = 0; i < JOBS; i++)                                    \
			for (unsigned k = 0; k < sizeof(s->msg[i]); k++)               \
				s->msg[i][k] = (uint8_t)(in[k % BENCH_IN_LEN] + i * 7 + k / 64); \
		fn(s);                                                                 \
		for (unsigned w = 0; w < 8; w++)                                       \
			tw_store_be32(out + 4 * w, s->jobs[5].h[w]);                   \
		*len = 32;                                                             \
		return 0;                                                              \
	}

SHM_RUNNER(all)
SHM_RUNNER(one)

static const struct bench_scenario sc_shm = {
	.name = "sha256-mb",
	.impl = "twag",
	.what = "SHA-256 compression, 16 jobs x 4 blocks in one call (AVX-512 lanes)",
	.refs = "sha256-mb.one",
	.granule = JOBS * BLOCKS,
	.state_size = sizeof(struct shm_state),
	.setup = shm_setup, .run = all_run, .once = all_once, .teardown = shm_teardown,
};
BENCH_REGISTER(sc_shm)

static const struct bench_scenario sc_shm_one = {
	.name = "sha256-mb.one",
	.impl = "twag",
	.what = "the same jobs one call each (SHA-NI where present)",
	.granule = JOBS * BLOCKS,
	.state_size = sizeof(struct shm_state),
	.setup = shm_setup, .run = one_run, .once = one_once, .teardown = shm_teardown,
};
BENCH_REGISTER(sc_shm_one)
