/*
 * twag-bench — the scenario interface.
 *
 * A scenario is one operation through one implementation ("twag",
 * "openssl-evp", "libosmocore", "kernel-afalg"). It is registered from its
 * own file with BENCH_REGISTER and needs four functions:
 *
 *   setup(st, t)   per worker thread: build keys and inputs in st (a zeroed
 *                  block of state_size bytes owned by the harness). Returns
 *                  0, BENCH_UNAVAILABLE (see below) or any other value for
 *                  a failure;
 *   run(st, n)     do n operations, varying the input between them;
 *   once(st, in, out, &len)  one operation on inputs derived from the 64
 *                  bytes in, writing its outputs: the harness compares a
 *                  twag scenario's once() with each reference's on random
 *                  inputs before anything is timed. On entry *len is the
 *                  room at out: at least BENCH_OUT_MAX, and for a
 *                  size-swept scenario at least t->size + BENCH_OUT_MAX,
 *                  so a whole packet fits;
 *   teardown(st)   optional: free what setup allocated, wipe keys. It is
 *                  called after every setup() call, whatever setup()
 *                  returned, so it must cope with a half-built state.
 *
 * A twag scenario names its references in refs (space-separated scenario
 * names); selecting it selects them too, and its row reports the ratio
 * twag / reference in ops per CPU-second.
 *
 * Size sweeps (data plane). A scenario that sets `sizes` (a 0-terminated
 * list of payload sizes in bytes; bench_default_sizes is 128, 256, 512,
 * 1024, 1500, 4096, 8192, 16384, 32768) becomes one row per size, named
 * "name@SIZE"; setup() finds the size in t->size (0 for other scenarios)
 * and one op must process one packet of t->size payload bytes (a batched
 * scenario counts every packet as an op). `--sizes 1500,4096` replaces
 * every list. Such rows also report bytes per op, throughput (Gbit/s and
 * MB/s, MB = 10^6 bytes) and service demand: µs of CPU (getrusage) per KB
 * (1024 bytes) of payload. A reference is matched at the same size: the
 * ratio on "ccmp@1500" is against "ccmp.evp@1500". Cross-checks run at
 * every size. Size-swept rows are measured for a tenth of --time by
 * default (--size-time S changes it): see bench/README.md.
 *
 *   static const struct bench_scenario sc_ccmp = {
 *       .name = "ccmp", .impl = "twag", .refs = "ccmp.evp ccmp.afalg",
 *       .sizes = bench_default_sizes, ...
 *   };
 *
 * Unavailable references. A reference the machine cannot offer (no AF_ALG
 * in this kernel, an algorithm the kernel lacks) returns BENCH_UNAVAILABLE
 * from setup() after writing the reason into t->why (BENCH_WHY_MAX bytes,
 * e.g. with bench_unavailable()). Its rows are then not measured and the
 * table prints ONE row for the scenario whose note is that reason, e.g.
 * "kernel AF_ALG: not available on this kernel (socket: Address family not
 * supported by protocol)". It is not an error and not a mismatch.
 *
 * The Linux kernel crypto API reference (afalg.h): bench_afalg_open()
 * returns BENCH_UNAVAILABLE with the text above filled in when
 * socket(AF_ALG, ...) fails; see afalg.h for the calls.
 *
 * Shared objects. A scenario may set shared_size and shared_setup (and
 * shared_teardown): the harness then builds the scenario's key object
 * (schedules, contexts, tables) with shared_setup and passes it in
 * t->shared. With keys=shared ONE such object is built per scenario and
 * process and every thread reads the same memory; with keys=private
 * (the default) each thread builds its own copy. Without shared_setup,
 * keys=shared only makes every thread derive the same key values.
 */
#ifndef TW_BENCH_H
#define TW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

enum {
	BENCH_IN_LEN = 64,    /* input of once() */
	BENCH_OUT_MAX = 512,  /* room for once()'s outputs (plus t->size) */
	BENCH_MAX_SCENARIOS = 512,
	BENCH_MAX_SIZES = 32, /* entries of a size list, without the 0 */
	/* setup() status: this implementation is not offered here. */
	BENCH_UNAVAILABLE = 0x7562, /* positive: never a tw_err */
};

/* 128, 256, 512, 1024, 1500, 4096, 8192, 16384, 32768, 0 */
extern const unsigned bench_default_sizes[];

/* What a worker thread knows about itself when it sets up. */
struct bench_thread {
	unsigned thread;   /* 0 .. nthreads-1 within the scenario */
	unsigned nthreads;
	unsigned instance; /* --instances: 0 .. N-1 */
	bool shared_keys;  /* keys=shared: every thread derives the same keys */
	uint64_t seed;     /* derive keys and inputs from this */
	size_t size;       /* size-swept scenarios: payload bytes per op */
	void *shared;      /* shared_size bytes built by shared_setup, or NULL */
	char *why;         /* BENCH_WHY_MAX bytes: reason for BENCH_UNAVAILABLE */
};

struct bench_scenario {
	const char *name;  /* selection name: "milenage", "milenage.osmo" */
	const char *impl;  /* "twag", "openssl-evp", "libosmocore", "kernel-afalg" */
	const char *what;  /* one line: the operation, as the row's note */
	const char *refs;  /* twag rows: names of their reference scenarios */
	bool cost_only;    /* a reference of cost, not of output: no check */
	unsigned granule;  /* run() is most efficient with multiples of it */
	const unsigned *sizes; /* size sweep, 0-terminated; NULL: not swept */
	size_t state_size;
	int (*setup)(void *st, const struct bench_thread *t);
	int (*run)(void *st, uint64_t n);
	int (*once)(void *st, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
		    size_t *out_len);
	void (*teardown)(void *st);
	/* Optional shared key object (see above). */
	size_t shared_size;
	int (*shared_setup)(void *obj, const struct bench_thread *t);
	void (*shared_teardown)(void *obj);
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

/* Writes the printf-style reason into t->why; returns BENCH_UNAVAILABLE. */
int bench_unavailable(const struct bench_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Heap use of the calling thread since it started (alloc.c). */
uint64_t bench_heap_bytes(void);
uint64_t bench_heap_allocs(void);
/* False when the counting hook is compiled out (sanitizer builds). */
bool bench_heap_counting(void);

#endif
