/*
 * twag-bench — statistics and other pure helpers of the harness (see
 * stats.h). Included directly by tests/unit/test_bench_stats.c.
 */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

void bench_reservoir_init(struct bench_reservoir *r, uint64_t seed)
{
	r->n = 0;
	r->seen = 0;
	r->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

void bench_reservoir_add(struct bench_reservoir *r, double v)
{
	r->seen++;
	if (r->n < BENCH_SAMPLES) {
		r->v[r->n++] = v;
		return;
	}
	/* Algorithm R: the k-th value replaces a random slot with
	 * probability BENCH_SAMPLES / k. */
	uint64_t j = xorshift64(&r->rng) % r->seen;
	if (j < BENCH_SAMPLES)
		r->v[j] = v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double bench_percentile(const double *sorted, size_t n, unsigned p_10000)
{
	if (n == 0)
		return 0;
	if (p_10000 > 10000)
		p_10000 = 10000;
	/* Nearest rank: rank = ceil(p * n), at least 1. */
	uint64_t rank = ((uint64_t)p_10000 * n + 9999) / 10000;
	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

void bench_result_init(struct bench_result *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	if (name)
		snprintf(r->name, sizeof(r->name), "%s", name);
}

void bench_result_from_thread(struct bench_result *r,
			      const struct bench_reservoir *lat)
{
	r->nsamples = lat->n;
	memcpy(r->samples, lat->v, lat->n * sizeof(lat->v[0]));
}

/* Keeps k of the n values in v (k <= n), evenly spaced, at the front. */
static void thin(double *v, uint32_t n, uint32_t k)
{
	/* Index i*n/k >= i, so copying forwards never overwrites a value
	 * that is still to be read. */
	for (uint32_t i = 0; i < k; i++)
		v[i] = v[(uint64_t)i * n / k];
}

void bench_result_merge(struct bench_result *dst, const struct bench_result *src)
{
	uint64_t wd = dst->batches ? dst->batches : dst->nsamples;
	uint64_t ws = src->batches ? src->batches : src->nsamples;
	uint32_t kd = dst->nsamples, ks = src->nsamples;

	if ((uint64_t)kd + ks > BENCH_SAMPLES && wd + ws) {
		/* Keep the two sides in proportion to the batches each one
		 * timed: the largest total T <= BENCH_SAMPLES for which
		 * neither side is asked for more samples than it holds. */
		uint64_t w = wd + ws, t = BENCH_SAMPLES;
		if (wd && (uint64_t)kd * w / wd < t)
			t = (uint64_t)kd * w / wd;
		if (ws && (uint64_t)ks * w / ws < t)
			t = (uint64_t)ks * w / ws;
		uint64_t want_d = (t * wd + w / 2) / w;
		if (want_d > kd)
			want_d = kd;
		if (t - want_d > ks)
			want_d = t - ks;
		kd = (uint32_t)want_d;
		ks = (uint32_t)(t - want_d);
	} else if ((uint64_t)kd + ks > BENCH_SAMPLES) {
		kd = kd < BENCH_SAMPLES / 2 ? kd : BENCH_SAMPLES / 2;
		ks = BENCH_SAMPLES - kd < ks ? BENCH_SAMPLES - kd : ks;
	}
	thin(dst->samples, dst->nsamples, kd);
	for (uint32_t i = 0; i < ks; i++)
		dst->samples[kd + i] = src->samples[(uint64_t)i * src->nsamples / ks];
	dst->nsamples = kd + ks;

	dst->ops += src->ops;
	dst->busy_ns += src->busy_ns;
	dst->cpu_ns += src->cpu_ns;
	dst->heap_bytes += src->heap_bytes;
	dst->heap_allocs += src->heap_allocs;
	dst->batches += src->batches;
	dst->threads += src->threads;
	dst->errors += src->errors;
	dst->flags |= src->flags;
	if (!dst->size)
		dst->size = src->size;
	if (!dst->why[0] && src->why[0])
		memcpy(dst->why, src->why, sizeof(dst->why));
	if (src->wall_ns > dst->wall_ns)
		dst->wall_ns = src->wall_ns;
	if (src->batch > dst->batch)
		dst->batch = src->batch;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
}

void bench_summarize(struct bench_result *r, struct bench_summary *s)
{
	memset(s, 0, sizeof(*s));
	bench_sort(r->samples, r->nsamples);
	s->cpu_s = (double)r->cpu_ns / 1e9;
	if (r->wall_ns)
		s->ops_per_s = (double)r->ops * 1e9 / (double)r->wall_ns;
	if (r->threads)
		s->ops_per_s_thread = s->ops_per_s / r->threads;
	if (r->cpu_ns)
		s->ops_per_cpu_s = (double)r->ops * 1e9 / (double)r->cpu_ns;
	if (r->ops) {
		s->ns_per_op = (double)r->busy_ns / (double)r->ops;
		s->heap_bytes_per_op = (double)r->heap_bytes / (double)r->ops;
		s->heap_allocs_per_op = (double)r->heap_allocs / (double)r->ops;
	}
	s->median_ns = bench_percentile(r->samples, r->nsamples, 5000);
	s->p99_ns = bench_percentile(r->samples, r->nsamples, 9900);
	s->max_ns = r->max_ns;
	if (r->size) {
		double bytes = (double)r->ops * r->size;
		s->bytes_per_op = r->size;
		s->gbit_per_s = s->ops_per_s * r->size * 8 / 1e9;
		s->mbyte_per_s = s->ops_per_s * r->size / 1e6;
		/* Service demand: CPU µs per KB moved = cpu_ns / 1000 / (bytes / 1024). */
		if (bytes > 0)
			s->us_cpu_per_kb = (double)r->cpu_ns / 1e3 / (bytes / 1024);
	}
}

uint64_t bench_claim(_Atomic uint64_t *issued, uint64_t limit, uint64_t want)
{
	uint64_t cur = atomic_load_explicit(issued, memory_order_relaxed);

	for (;;) {
		if (cur >= limit)
			return 0;
		uint64_t got = limit - cur < want ? limit - cur : want;
		if (atomic_compare_exchange_weak_explicit(issued, &cur, cur + got,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return got;
	}
}

int bench_parse_sel(const char *arg, struct bench_sel *sel)
{
	const char *colon = strchr(arg, ':');
	size_t plen = colon ? (size_t)(colon - arg) : strlen(arg);

	memset(sel, 0, sizeof(*sel));
	sel->threads = 1;
	if (plen == 0 || plen >= sizeof(sel->pattern))
		return -1;
	memcpy(sel->pattern, arg, plen);
	if (!colon)
		return 0;
	if (!colon[1])
		return -1; /* "name:" with no option */

	const char *p = colon + 1;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char opt[64];

		if (len == 0 || len >= sizeof(opt))
			return -1;
		memcpy(opt, p, len);
		opt[len] = 0;
		if (strncmp(opt, "threads=", 8) == 0) {
			char *e;
			unsigned long t = strtoul(opt + 8, &e, 10);
			if (e == opt + 8 || *e || t < 1 || t > 1024)
				return -1;
			sel->threads = (unsigned)t;
		} else if (strcmp(opt, "keys=shared") == 0) {
			sel->shared_keys = true;
		} else if (strcmp(opt, "keys=private") == 0) {
			sel->shared_keys = false;
		} else {
			return -1;
		}
		if (!end)
			break;
		p = end + 1;
		if (!*p)
			return -1; /* trailing comma */
	}
	return 0;
}

int bench_parse_sizes(const char *arg, unsigned *out, size_t max)
{
	const char *p = arg;
	size_t n = 0;

	if (max < 2 || !*p)
		return -1;
	for (;;) {
		char *e;
		if (*p < '0' || *p > '9')
			return -1; /* no sign, no space, no empty item */
		unsigned long v = strtoul(p, &e, 10);
		if (e == p || v < 1 || v > 1048576 || n + 1 >= max)
			return -1;
		out[n++] = (unsigned)v;
		if (*e == 0)
			break;
		if (*e != ',')
			return -1;
		p = e + 1;
	}
	out[n] = 0;
	return (int)n;
}

void bench_fmt_si(char *buf, size_t len, double v)
{
	static const char suffix[] = " kMGT";
	unsigned i = 0;
	double a = v < 0 ? -v : v;

	while (a >= 999.5 && i < sizeof(suffix) - 2) {
		v /= 1000;
		a /= 1000;
		i++;
	}
	int prec = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
	if (i == 0 && a == (double)(uint64_t)a)
		prec = 0;
	if (i == 0)
		snprintf(buf, len, "%.*f", prec, v);
	else
		snprintf(buf, len, "%.*f%c", prec, v, suffix[i]);
}

unsigned bench_match_size(const unsigned *ref_sizes, unsigned size)
{
	if (!ref_sizes)
		return 0;
	for (; *ref_sizes; ref_sizes++)
		if (*ref_sizes == size)
			return size;
	return BENCH_NO_MATCH;
}

/* A name as a gnuplot string: double quotes, no quote or backslash inside. */
static void plot_label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' || *s == '\\' ? '\'' : *s, f);
	fputc('"', f);
}

size_t bench_plot_bars(FILE *f, const struct bench_plot_bar *b, size_t n)
{
	fprintf(f, "# label ours_ops_per_cpu_s ref_ops_per_cpu_s\n");
	for (size_t i = 0; i < n; i++) {
		plot_label(f, b[i].label);
		fprintf(f, " %.6g %.6g\n", b[i].ours, b[i].ref);
	}
	return n;
}

size_t bench_plot_lines(FILE *f, const struct bench_plot_point *p, size_t n)
{
	size_t blocks = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(p[j].series, p[i].series) == 0;
		if (seen)
			continue;
		/* a new series: all its points, in the order given */
		fprintf(f, "%s# ", blocks ? "\n\n" : "");
		plot_label(f, p[i].series);
		fputc('\n', f);
		for (size_t j = i; j < n; j++)
			if (strcmp(p[j].series, p[i].series) == 0)
				fprintf(f, "%u %.6g\n", p[j].size, p[j].value);
		blocks++;
	}
	return blocks;
}
