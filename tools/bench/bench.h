/*
 * twag-bench — the scenario interface.
 *
 * A scenario is one operation through one implementation ("twag",
 * "openssl-evp", "libosmocore"). It is registered from its own file with
 * BENCH_REGISTER and needs four functions:
 *
 *   setup(st, t)   per worker thread: build keys and inputs in st (a zeroed
 *                  block of state_size bytes owned by the harness);
 *   run(st, n)     do n operations, varying the input between them;
 *   once(st, in, out, &len)  one operation on inputs derived from the 64
 *                  bytes in, writing its outputs: the harness compares a
 *                  twag scenario's once() with each reference's on random
 *                  inputs before anything is timed;
 *   teardown(st)   optional: free what setup allocated, wipe keys.
 *
 * A twag scenario names its references in refs (space-separated scenario
 * names); selecting it selects them too, and its row reports the ratio
 * twag / reference in ops per CPU-second.
 */
#ifndef TW_BENCH_H
#define TW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

enum {
	BENCH_IN_LEN = 64,    /* input of once() */
	BENCH_OUT_MAX = 512,  /* room for once()'s outputs */
	BENCH_MAX_SCENARIOS = 128,
};

/* What a worker thread knows about itself when it sets up. */
struct bench_thread {
	unsigned thread;   /* 0 .. nthreads-1 within the scenario */
	unsigned nthreads;
	unsigned instance; /* --instances: 0 .. N-1 */
	bool shared_keys;  /* keys=shared: every thread derives the same keys */
	uint64_t seed;     /* derive keys and inputs from this */
};

struct bench_scenario {
	const char *name;  /* selection name: "milenage", "milenage.osmo" */
	const char *impl;  /* "twag", "openssl-evp", "libosmocore" */
	const char *what;  /* one line: the operation, as the row's note */
	const char *refs;  /* twag rows: names of their reference scenarios */
	bool cost_only;    /* a reference of cost, not of output: no check */
	unsigned granule;  /* run() is most efficient with multiples of it */
	size_t state_size;
	int (*setup)(void *st, const struct bench_thread *t);
	int (*run)(void *st, uint64_t n);
	int (*once)(void *st, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
		    size_t *out_len);
	void (*teardown)(void *st);
};

void bench_register(const struct bench_scenario *s);

/* Registers a scenario defined in the same file at program start-up. */
#define BENCH_REGISTER(sc)                                                    \
	static void __attribute__((constructor)) bench_reg_##sc(void)         \
	{                                                                     \
		bench_register(&(sc));                                        \
	}

/* Deterministic bytes for keys and inputs (splitmix64 of *state). */
void bench_fill(uint64_t *state, void *buf, size_t len);

/* Heap use of the calling thread since it started (alloc.c). */
uint64_t bench_heap_bytes(void);
uint64_t bench_heap_allocs(void);
/* False when the counting hook is compiled out (sanitizer builds). */
bool bench_heap_counting(void);

#endif
