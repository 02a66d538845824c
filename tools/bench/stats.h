/*
 * twag-bench — the harness's pure arithmetic: latency samples, percentiles,
 * request-limited claiming, merging results of threads and instances, and
 * parsing of a scenario selection ("name:threads=N,keys=shared").
 *
 * No I/O, no allocation, no libm: tests/unit/test_bench_stats.c includes
 * stats.c directly (tools/ are not in libtwag.a).
 */
#ifndef TW_BENCH_STATS_H
#define TW_BENCH_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
	/* Latency samples kept per result (per thread, then merged). */
	BENCH_SAMPLES = 4096,
	BENCH_NAME_MAX = 48,
	BENCH_WHY_MAX = 160,   /* reason text of an unavailable scenario */
};

/*
 * A fixed-size uniform sample of per-op latencies (ns): reservoir sampling
 * (Vitter's algorithm R) keeps every value seen with equal probability, so
 * the median and p99 of the reservoir estimate those of the whole run.
 */
struct bench_reservoir {
	double v[BENCH_SAMPLES];
	uint32_t n;      /* values held, <= BENCH_SAMPLES */
	uint64_t seen;   /* values offered */
	uint64_t rng;    /* xorshift64 state, never 0 */
};

void bench_reservoir_init(struct bench_reservoir *r, uint64_t seed);
void bench_reservoir_add(struct bench_reservoir *r, double v);

/* Sorts v[0..n) ascending. */
void bench_sort(double *v, size_t n);

/*
 * Nearest-rank percentile of a sorted array: the smallest value such that
 * at least p_10000 / 10000 of the values are <= it (p_10000 = 5000 is the
 * lower median, 9900 is p99, 10000 is the maximum). 0 when n is 0.
 */
double bench_percentile(const double *sorted, size_t n, unsigned p_10000);

/*
 * One scenario's measurement: POD with no pointers, so an instance can send
 * it to its parent through a pipe as raw bytes.
 */
struct bench_result {
	char name[BENCH_NAME_MAX];
	uint64_t ops;          /* operations completed in the measured phase */
	uint64_t wall_ns;      /* measured phase, longest thread/instance */
	uint64_t busy_ns;      /* sum over threads of time inside timed batches */
	uint64_t cpu_ns;       /* sum of RUSAGE_THREAD user+sys CPU time */
	uint64_t heap_bytes;   /* bytes requested from malloc/calloc/realloc */
	uint64_t heap_allocs;  /* number of those calls */
	uint64_t batches;      /* timed batches */
	uint32_t threads;      /* threads summed (all instances) */
	uint32_t instances;
	uint32_t batch;        /* ops per timed batch (largest seen) */
	uint32_t errors;       /* a run() call failed */
	uint32_t flags;        /* BENCH_F_* */
	uint32_t size;         /* size-swept rows: payload bytes per op; else 0 */
	double max_ns;         /* worst per-op latency of any batch */
	char why[BENCH_WHY_MAX]; /* BENCH_F_UNAVAILABLE: the reason */
	uint32_t nsamples;
	double samples[BENCH_SAMPLES]; /* per-op latencies (ns), a sample */
};

enum {
	BENCH_F_INTERRUPTED = 1u << 0, /* Ctrl-C during the measured phase */
	BENCH_F_MISMATCH = 1u << 1,    /* reference disagreed with twag */
	BENCH_F_SETUP_FAILED = 1u << 2,
	BENCH_F_NO_CHECK = 1u << 3,    /* cost reference: not the same function */
	BENCH_F_UNAVAILABLE = 1u << 4, /* not offered here (e.g. no AF_ALG) */
};

/* Zeroes r and names it. */
void bench_result_init(struct bench_result *r, const char *name);

/* The result of one worker thread from its counters and its reservoir. */
void bench_result_from_thread(struct bench_result *r,
			      const struct bench_reservoir *lat);

/*
 * Adds src (another thread, or another instance, that ran at the same
 * time) into dst: counts and CPU add up, wall time is the longest, the
 * maximum is the maximum, and the latency samples are merged in proportion
 * to each side's batch count so neither side is over-represented.
 */
void bench_result_merge(struct bench_result *dst, const struct bench_result *src);

/* Figures derived from a result (0 where undefined). */
struct bench_summary {
	double ops_per_s;        /* aggregate: ops / wall */
	double ops_per_s_thread; /* ops_per_s / threads */
	double ops_per_cpu_s;    /* ops / CPU seconds: the honest per-core rate */
	double ns_per_op;        /* mean latency: busy time / ops */
	double median_ns, p99_ns, max_ns;
	double heap_bytes_per_op, heap_allocs_per_op;
	double cpu_s;
	/* Size-swept rows only (r->size > 0), else 0. */
	double bytes_per_op;     /* payload bytes per op (= size) */
	double gbit_per_s;       /* ops_per_s * size * 8 / 10^9 */
	double mbyte_per_s;      /* ops_per_s * size / 10^6 */
	double us_cpu_per_kb;    /* service demand: CPU µs per 1024 payload bytes */
};

/* Sorts r->samples in place and fills s. */
void bench_summarize(struct bench_result *r, struct bench_summary *s);

/*
 * Request-limited runs: threads claim work in chunks of up to want ops from
 * a shared counter so that exactly limit ops are done in total. Returns the
 * number granted (0 once the limit is reached).
 */
uint64_t bench_claim(_Atomic uint64_t *issued, uint64_t limit, uint64_t want);

/* A scenario selection from the command line. */
struct bench_sel {
	char pattern[BENCH_NAME_MAX]; /* name or fnmatch(3) glob */
	unsigned threads;             /* >= 1 */
	bool shared_keys;             /* keys=shared: one key set for all */
};

/*
 * Parses "pattern[:opt=val[,opt=val...]]" with threads=1..1024 and
 * keys=shared|private. Returns 0, or -1 for a malformed selection.
 */
int bench_parse_sel(const char *arg, struct bench_sel *sel);

/*
 * Parses a size list "1500,4096" into out[0..max) and a terminating 0:
 * sizes 1..1048576 bytes, at most max - 1 of them, no empty item.
 * Returns the count, or -1 for a malformed list.
 */
int bench_parse_sizes(const char *arg, unsigned *out, size_t max);

/*
 * Per-size reference matching: the size of the reference row a row of
 * size `size` is compared with. ref_sizes is the reference's effective
 * size list (0-terminated) or NULL when the reference is not swept (its
 * one row, size 0, serves every size). Returns BENCH_NO_MATCH when the
 * reference has no row at that size.
 */
#define BENCH_NO_MATCH 0xffffffffu
unsigned bench_match_size(const unsigned *ref_sizes, unsigned size);

/*
 * --plot data files (gnuplot's plain data format; names quoted).
 * Bars: one line per (twag row, reference) pair: "label" ours ref, in ops
 * per CPU-second. Lines: one block per series (first-appearance order),
 * "# series" then "size value" lines, blocks separated by two blank lines
 * (gnuplot's `index`). Both return the number of lines/blocks written.
 */
struct bench_plot_bar {
	const char *label;
	double ours, ref;
};
struct bench_plot_point {
	const char *series;
	unsigned size;
	double value;
};
size_t bench_plot_bars(FILE *f, const struct bench_plot_bar *b, size_t n);
size_t bench_plot_lines(FILE *f, const struct bench_plot_point *p, size_t n);

/* Formats v with 3-4 significant digits and a k/M/G suffix into buf. */
void bench_fmt_si(char *buf, size_t len, double v);

#endif
