/*
 * Tests of twag-bench's own arithmetic (tools/bench/stats.c): percentiles,
 * the latency reservoir, request-limited claiming across threads, merging
 * threads and instances, the derived figures, the selection parser and
 * number formatting. The speed of anything is not tested here.
 */
#include <pthread.h>

#include "tw_test.h"

#include "../../tools/bench/stats.c"

static void test_percentile(void)
{
	double v[100];

	/* 100, 99, ..., 1: sorting must put them in order. */
	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;
	bench_sort(v, 100);
	bool sorted = true;
	for (int i = 0; i < 100; i++)
		sorted &= v[i] == i + 1;
	CHECK(sorted);
	/* Nearest rank: p50 of 1..100 is 50, p99 is 99, p100 the max. */
	CHECK(bench_percentile(v, 100, 5000) == 50);
	CHECK(bench_percentile(v, 100, 9900) == 99);
	CHECK(bench_percentile(v, 100, 9901) == 100);
	CHECK(bench_percentile(v, 100, 10000) == 100);
	CHECK(bench_percentile(v, 100, 20000) == 100); /* clamped */
	CHECK(bench_percentile(v, 100, 0) == 1);
	CHECK(bench_percentile(v, 100, 1) == 1);
	CHECK(bench_percentile(v, 0, 5000) == 0);
	/* Lower median of an even count, the middle of an odd one. */
	double w[5] = {3, 1, 2, 5, 4};
	bench_sort(w, 4);
	CHECK(bench_percentile(w, 4, 5000) == 2);
	bench_sort(w, 5);
	CHECK(bench_percentile(w, 5, 5000) == 3);
	CHECK(bench_percentile(w, 1, 9900) == 1);
	/* p99 of 1000 values: rank 990. */
	double *big = calloc(1000, sizeof(*big));
	CHECK(big != NULL);
	if (big) {
		for (int i = 0; i < 1000; i++)
			big[i] = i;
		CHECK(bench_percentile(big, 1000, 9900) == 989);
		free(big);
	}
}

static void test_reservoir(void)
{
	static struct bench_reservoir r;

	bench_reservoir_init(&r, 42);
	for (int i = 0; i < 1000; i++)
		bench_reservoir_add(&r, i);
	/* Under capacity: every value kept, in order. */
	CHECK(r.n == 1000 && r.seen == 1000);
	CHECK(r.v[0] == 0 && r.v[999] == 999);

	/* Over capacity: a uniform sample of 0..99999. */
	bench_reservoir_init(&r, 7);
	for (int i = 0; i < 100000; i++)
		bench_reservoir_add(&r, i);
	CHECK(r.n == BENCH_SAMPLES && r.seen == 100000);
	double *v = malloc(sizeof(r.v));
	CHECK(v != NULL);
	if (!v)
		return;
	memcpy(v, r.v, sizeof(r.v));
	bench_sort(v, r.n);
	double med = bench_percentile(v, r.n, 5000);
	/* The median of 4096 uniform samples is within ~800 of 50000 (one
	 * sigma); 5000 is six sigma. Keeping only the first values seen
	 * (a broken reservoir) would give a median near 2048. */
	CHECK(med > 45000 && med < 55000);
	CHECK(v[r.n - 1] > 95000);
	CHECK(v[0] < 5000);
	free(v);
	/* seed 0 is replaced (xorshift would stay at 0 forever) */
	bench_reservoir_init(&r, 0);
	CHECK(r.rng != 0);
}

static void test_claim_single(void)
{
	_Atomic uint64_t issued = 0;

	CHECK(bench_claim(&issued, 10, 4) == 4);
	CHECK(bench_claim(&issued, 10, 4) == 4);
	CHECK(bench_claim(&issued, 10, 4) == 2);
	CHECK(bench_claim(&issued, 10, 4) == 0);
	CHECK(bench_claim(&issued, 10, 4) == 0);
	CHECK(atomic_load(&issued) == 10);
	issued = 0;
	CHECK(bench_claim(&issued, 1, 1000) == 1);
	CHECK(bench_claim(&issued, 1, 1000) == 0);
}

enum { CLAIM_THREADS = 4 };
static _Atomic uint64_t g_issued;
static const uint64_t g_limit = 100003;

static void *claimer(void *arg)
{
	uint64_t *mine = arg, got;

	while ((got = bench_claim(&g_issued, g_limit, 7)) != 0) {
		if (got > 7)
			return NULL; /* counted as a failure by the total */
		*mine += got;
	}
	return NULL;
}

static void test_claim_threads(void)
{
	pthread_t t[CLAIM_THREADS];
	uint64_t done[CLAIM_THREADS] = {0}, total = 0;
	bool started = true;

	for (int i = 0; i < CLAIM_THREADS; i++)
		started &= pthread_create(&t[i], NULL, claimer, &done[i]) == 0;
	CHECK(started);
	if (!started)
		return;
	for (int i = 0; i < CLAIM_THREADS; i++) {
		pthread_join(t[i], NULL);
		total += done[i];
	}
	/* Request-limited runs do exactly the requested number of ops. */
	CHECK(total == g_limit);
	CHECK(atomic_load(&g_issued) == g_limit);
}

static void fill_result(struct bench_result *r, const char *name, uint64_t ops,
			uint64_t wall, uint64_t cpu, uint64_t batches, double sample,
			uint32_t nsamples)
{
	bench_result_init(r, name);
	r->ops = ops;
	r->wall_ns = wall;
	r->busy_ns = wall;
	r->cpu_ns = cpu;
	r->heap_bytes = ops * 10;
	r->heap_allocs = ops;
	r->batches = batches;
	r->threads = 1;
	r->batch = 4;
	r->max_ns = sample * 3;
	r->nsamples = nsamples;
	for (uint32_t i = 0; i < nsamples; i++)
		r->samples[i] = sample;
}

static unsigned count_eq(const struct bench_result *r, double v)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < r->nsamples; i++)
		n += r->samples[i] == v;
	return n;
}

static void test_merge(void)
{
	static struct bench_result a, b, c;
	struct bench_summary s;

	/* Two threads (or instances) that ran at the same time. */
	fill_result(&a, "x", 100, 1000000000, 900000000, 3000, 1.0, 3500);
	fill_result(&b, "x", 300, 2000000000, 2000000000, 1000, 2.0, 3000);
	b.batch = 8;
	b.flags = BENCH_F_INTERRUPTED;
	bench_result_merge(&a, &b);
	CHECK(a.ops == 400);
	CHECK(a.wall_ns == 2000000000); /* the longest, not the sum */
	CHECK(a.busy_ns == 3000000000);
	CHECK(a.cpu_ns == 2900000000);
	CHECK(a.threads == 2);
	CHECK(a.heap_bytes == 4000 && a.heap_allocs == 400);
	CHECK(a.batches == 4000);
	CHECK(a.batch == 8);
	CHECK(a.max_ns == 6.0);
	CHECK(a.flags == BENCH_F_INTERRUPTED);
	/* Samples: 4096 kept, shared 3:1 like the batches they stand for. */
	CHECK(a.nsamples == BENCH_SAMPLES);
	CHECK(count_eq(&a, 1.0) == 3072);
	CHECK(count_eq(&a, 2.0) == 1024);

	/* A side with too few samples for its share: the total shrinks so
	 * the 3:1 proportion still holds (3000 + 1000). */
	fill_result(&c, "x", 100, 1, 1, 3000, 1.0, 3000);
	fill_result(&b, "x", 100, 1, 1, 1000, 2.0, 3000);
	bench_result_merge(&c, &b);
	CHECK(c.nsamples == 4000 && count_eq(&c, 1.0) == 3000 && count_eq(&c, 2.0) == 1000);

	bench_summarize(&a, &s);
	CHECK(s.ops_per_s == 200.0);          /* 400 ops in 2 s */
	CHECK(s.ops_per_s_thread == 100.0);
	CHECK(s.ops_per_cpu_s > 137.9 && s.ops_per_cpu_s < 138.0); /* 400 / 2.9 */
	CHECK(s.ns_per_op == 7500000.0);      /* 3 s busy / 400 */
	CHECK(s.heap_bytes_per_op == 10.0 && s.heap_allocs_per_op == 1.0);
	CHECK(s.median_ns == 1.0);
	CHECK(s.p99_ns == 2.0);
	CHECK(s.max_ns == 6.0);

	/* Few samples: concatenated, nothing lost. */
	fill_result(&b, "x", 10, 5, 5, 10, 4.0, 10);
	fill_result(&c, "x", 20, 7, 7, 20, 5.0, 20);
	bench_result_merge(&b, &c);
	CHECK(b.nsamples == 30 && count_eq(&b, 4.0) == 10 && count_eq(&b, 5.0) == 20);
	CHECK(b.wall_ns == 7);

	/* Instance summing: four instances with the same result. */
	static struct bench_result sum, one;
	bench_result_init(&sum, "x");
	for (int i = 0; i < 4; i++) {
		fill_result(&one, "x", 1000, 1000000000, 1000000000, 250, 1.5, 250);
		bench_result_merge(&sum, &one);
	}
	bench_summarize(&sum, &s);
	CHECK(sum.ops == 4000 && sum.threads == 4 && sum.nsamples == 1000);
	CHECK(s.ops_per_s == 4000.0 && s.ops_per_s_thread == 1000.0);
	CHECK(s.ops_per_cpu_s == 1000.0);
	CHECK(s.median_ns == 1.5);

	/* An empty result: no division by zero. */
	bench_result_init(&c, "empty");
	bench_summarize(&c, &s);
	CHECK(s.ops_per_s == 0 && s.ns_per_op == 0 && s.median_ns == 0);
}

static void test_parse_sel(void)
{
	struct bench_sel s;

	CHECK_OK(bench_parse_sel("milenage", &s));
	CHECK(strcmp(s.pattern, "milenage") == 0 && s.threads == 1 && !s.shared_keys);
	CHECK_OK(bench_parse_sel("milenage:threads=2", &s));
	CHECK(strcmp(s.pattern, "milenage") == 0 && s.threads == 2);
	CHECK_OK(bench_parse_sel("suci-*:threads=3,keys=shared", &s));
	CHECK(strcmp(s.pattern, "suci-*") == 0 && s.threads == 3 && s.shared_keys);
	CHECK_OK(bench_parse_sel("x:keys=shared,keys=private", &s));
	CHECK(!s.shared_keys);
	CHECK_ERR(bench_parse_sel("x:threads=0", &s), -1);
	CHECK_ERR(bench_parse_sel("x:threads=1025", &s), -1);
	CHECK_ERR(bench_parse_sel("x:threads=2x", &s), -1);
	CHECK_ERR(bench_parse_sel("x:threads=", &s), -1);
	CHECK_ERR(bench_parse_sel("x:bogus=1", &s), -1);
	CHECK_ERR(bench_parse_sel("x:threads=2,", &s), -1);
	CHECK_ERR(bench_parse_sel("x:", &s), -1);
	CHECK_ERR(bench_parse_sel(":threads=2", &s), -1);
	CHECK_ERR(bench_parse_sel("", &s), -1);
	char longname[BENCH_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	CHECK_ERR(bench_parse_sel(longname, &s), -1);
}

static void test_fmt(void)
{
	char b[32];

	bench_fmt_si(b, sizeof(b), 12345678);
	CHECK(strcmp(b, "12.3M") == 0);
	bench_fmt_si(b, sizeof(b), 999);
	CHECK(strcmp(b, "999") == 0);
	bench_fmt_si(b, sizeof(b), 1000);
	CHECK(strcmp(b, "1.00k") == 0);
	bench_fmt_si(b, sizeof(b), 0.5);
	CHECK(strcmp(b, "0.50") == 0);
	bench_fmt_si(b, sizeof(b), 2.5e9);
	CHECK(strcmp(b, "2.50G") == 0);
	bench_fmt_si(b, sizeof(b), 0);
	CHECK(strcmp(b, "0") == 0);
}

static void test_sizes(void)
{
	unsigned v[8];

	/* --sizes expansion: the list, in order, 0-terminated */
	CHECK(bench_parse_sizes("1500,4096", v, 4) == 2);
	CHECK(v[0] == 1500 && v[1] == 4096 && v[2] == 0);
	CHECK(bench_parse_sizes("128", v, 4) == 1 && v[0] == 128 && v[1] == 0);
	CHECK(bench_parse_sizes("1,1048576", v, 4) == 2 && v[1] == 1048576);
	/* room for at most max - 1 sizes and the 0 */
	CHECK(bench_parse_sizes("1,2,3", v, 4) == 3);
	CHECK_ERR(bench_parse_sizes("1,2,3,4", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("0", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("1048577", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("1500,", v, 4), -1);
	CHECK_ERR(bench_parse_sizes(",1500", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("15x0", v, 4), -1);
	CHECK_ERR(bench_parse_sizes("-5", v, 4), -1);
	CHECK_ERR(bench_parse_sizes(" 5", v, 4), -1);
}

static void test_match_size(void)
{
	static const unsigned sweep[] = {128, 1500, 32768, 0};

	/* a swept reference: the row at the same size, and only that one */
	CHECK(bench_match_size(sweep, 1500) == 1500);
	CHECK(bench_match_size(sweep, 128) == 128);
	CHECK(bench_match_size(sweep, 32768) == 32768);
	CHECK(bench_match_size(sweep, 1024) == BENCH_NO_MATCH);
	CHECK(bench_match_size(sweep, 0) == BENCH_NO_MATCH);
	/* an op reference (not swept) has one row, size 0 */
	CHECK(bench_match_size(NULL, 0) == 0);
	CHECK(bench_match_size(NULL, 1500) == 0);
	static const unsigned empty[] = {0};
	CHECK(bench_match_size(empty, 1500) == BENCH_NO_MATCH);
}

static void test_service_demand(void)
{
	static struct bench_result r, a, b;
	struct bench_summary s;

	/* 1,000,000 packets of 1024 bytes in 2 s wall, 0.5 s CPU:
	 * 500k pkt/s = 512 MB/s = 4.096 Gbit/s; 1,000,000 KB moved with
	 * 500,000 µs of CPU = 0.5 µs per KB. */
	bench_result_init(&r, "x@1024");
	r.ops = 1000000;
	r.size = 1024;
	r.wall_ns = 2000000000;
	r.busy_ns = 2000000000;
	r.cpu_ns = 500000000;
	r.threads = 1;
	bench_summarize(&r, &s);
	CHECK(s.bytes_per_op == 1024);
	CHECK(s.ops_per_s == 500000.0);
	CHECK(s.mbyte_per_s > 511.99 && s.mbyte_per_s < 512.01);
	CHECK(s.gbit_per_s > 4.0959 && s.gbit_per_s < 4.0961);
	CHECK(s.us_cpu_per_kb > 0.49999 && s.us_cpu_per_kb < 0.50001);
	/* 1500-byte packets: KB is 1024 bytes of payload, not 1000 */
	r.size = 1500;
	bench_summarize(&r, &s);
	CHECK(s.us_cpu_per_kb > 0.341333 && s.us_cpu_per_kb < 0.341334); /* 0.5e6 / (1.5e9/1024) */
	/* an op row has no data-plane figures */
	r.size = 0;
	bench_summarize(&r, &s);
	CHECK(s.bytes_per_op == 0 && s.gbit_per_s == 0 && s.us_cpu_per_kb == 0);
	/* no ops: no division by zero */
	bench_result_init(&r, "y@64");
	r.size = 64;
	bench_summarize(&r, &s);
	CHECK(s.us_cpu_per_kb == 0 && s.gbit_per_s == 0);

	/* threads/instances of a size-swept row keep its size and the
	 * reason an unavailable row gives */
	bench_result_init(&a, "z@512");
	bench_result_init(&b, "z@512");
	b.size = 512;
	b.flags = BENCH_F_UNAVAILABLE;
	snprintf(b.why, sizeof(b.why), "kernel AF_ALG: not available");
	bench_result_merge(&a, &b);
	CHECK(a.size == 512 && (a.flags & BENCH_F_UNAVAILABLE));
	CHECK(strcmp(a.why, "kernel AF_ALG: not available") == 0);
}

static char *read_all(FILE *f)
{
	static char buf[4096];
	size_t n;

	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	return buf;
}

static void test_plot_data(void)
{
	FILE *f = tmpfile();

	CHECK(f != NULL);
	if (!f)
		return;
	struct bench_plot_bar bars[2] = {{"milenage vs osmo", 2.5e7, 1.0e6},
					 {"bad\"name", 10, 0.5}};
	CHECK(bench_plot_bars(f, bars, 2) == 2);
	CHECK(strcmp(read_all(f), "# label ours_ops_per_cpu_s ref_ops_per_cpu_s\n"
			       "\"milenage vs osmo\" 2.5e+07 1e+06\n"
			       "\"bad'name\" 10 0.5\n") == 0);
	fclose(f);

	/* per-size points of two series, interleaved as the plan runs them
	 * (twag@128, ref@128, twag@256, ...): one block per series */
	f = tmpfile();
	CHECK(f != NULL);
	if (!f)
		return;
	struct bench_plot_point pts[5] = {
		{"ccmp", 128, 0.5}, {"ccmp.evp", 128, 1.25}, {"ccmp", 256, 0.25},
		{"ccmp.evp", 256, 0.75}, {"ccmp", 1500, 0.125},
	};
	CHECK(bench_plot_lines(f, pts, 5) == 2);
	CHECK(strcmp(read_all(f), "# \"ccmp\"\n128 0.5\n256 0.25\n1500 0.125\n"
			       "\n\n# \"ccmp.evp\"\n128 1.25\n256 0.75\n") == 0);
	fclose(f);
}

void test_main(void)
{
	test_sizes();
	test_match_size();
	test_service_demand();
	test_plot_data();
	test_percentile();
	test_reservoir();
	test_claim_single();
	test_claim_threads();
	test_merge();
	test_parse_sel();
	test_fmt();
}
