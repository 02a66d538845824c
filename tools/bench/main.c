/*
 * twag-bench — the harness: scenario registry, selection, cross-checks,
 * worker threads, instances, the machine line and the report.
 *
 *   twag-bench [options] [SCENARIO[:threads=N,keys=shared|private] ...]
 *
 * With no scenario, every twag scenario runs with its references, one
 * after another, one thread each. See bench/README.md for the columns.
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "twag/cpu.h"
#include "twag/version.h"

/* Size-swept rows are many (transforms x sizes): each gets --time/20 by
 * default so that `make bench` stays well under three minutes. */
#define SIZE_TIME_DIV 20

#ifndef RUSAGE_THREAD
#define RUSAGE_THREAD 1 /* Linux; hidden by strict -std=c11 headers */
#endif

/* A timed batch lasts at least this long, so the two clock reads around
 * it cost under 0.2% even for a 10 ns operation. */
#define BATCH_TARGET_NS 20000u
#define BATCH_MAX (1u << 22)

/* ---- registry ---- */

static const struct bench_scenario *g_reg[BENCH_MAX_SCENARIOS];
static size_t g_nreg;

void bench_register(const struct bench_scenario *s)
{
	if (g_nreg < BENCH_MAX_SCENARIOS)
		g_reg[g_nreg++] = s;
	else
		fprintf(stderr, "twag-bench: too many scenarios, %s dropped\n", s->name);
}

static size_t reg_index(const struct bench_scenario *s)
{
	for (size_t i = 0; i < g_nreg; i++)
		if (g_reg[i] == s)
			return i;
	return g_nreg;
}

static const struct bench_scenario *find_scenario(const char *name, size_t len)
{
	for (size_t i = 0; i < g_nreg; i++)
		if (strlen(g_reg[i]->name) == len && memcmp(g_reg[i]->name, name, len) == 0)
			return g_reg[i];
	return NULL;
}

static bool is_twag(const struct bench_scenario *s)
{
	return strcmp(s->impl, "twag") == 0;
}

void bench_fill(uint64_t *state, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		for (int i = 0; i < 8 && len; i++, len--)
			*p++ = (uint8_t)(z >> (8 * i));
	}
}

int bench_unavailable(const struct bench_thread *t, const char *fmt, ...)
{
	va_list ap;

	if (t->why) {
		va_start(ap, fmt);
		vsnprintf(t->why, BENCH_WHY_MAX, fmt, ap);
		va_end(ap);
	}
	return BENCH_UNAVAILABLE;
}

const unsigned bench_default_sizes[] = {
	128, 256, 512, 1024, 1500, 4096, 8192, 16384, 32768, 0,
};

/* ---- options and plan ---- */

struct opts {
	double time_s;
	double warmup_s;
	double size_time_s; /* size-swept rows; < 0: time_s / SIZE_TIME_DIV */
	unsigned sizes[BENCH_MAX_SIZES + 1]; /* --sizes; sizes[0] == 0: none */
	const char *plot;
	uint64_t requests;
	unsigned instances;
	unsigned checks;
	bool concurrent;
	bool no_refs;
	bool json, csv;
	bool quiet;
};

static struct opts g_opt = {
	.time_s = 1.0, .warmup_s = 0.2, .size_time_s = -1, .instances = 1, .checks = 64,
};

struct entry {
	const struct bench_scenario *sc;
	char name[BENCH_NAME_MAX]; /* sc->name, or "name@SIZE" */
	unsigned size;             /* size-swept rows: payload bytes; else 0 */
	size_t order;              /* sort key: group, family, size, twag first */
	void *shared_obj;          /* keys=shared: the one shared object */
	unsigned threads;
	bool shared_keys;
	bool ran;
	_Atomic uint64_t issued; /* request-limited runs */
	struct bench_result res;
	struct bench_summary sum;
};

static struct entry *g_plan[BENCH_MAX_SCENARIOS * 4];
static size_t g_nplan;

static struct entry *plan_find(const struct bench_scenario *s, unsigned size)
{
	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->sc == s && g_plan[i]->size == size)
			return g_plan[i];
	return NULL;
}

/* The sizes a scenario runs at (0-terminated), or NULL if not swept. */
static const unsigned *eff_sizes(const struct bench_scenario *s)
{
	if (!s->sizes)
		return NULL;
	return g_opt.sizes[0] ? g_opt.sizes : s->sizes;
}

/*
 * Rows are reported (and run) by group in a fixed order: AES, Milenage,
 * TUAK, COMP128, KDFs, SUCI, key wrap, anything else, then size-swept
 * (data-plane) rows. Within a group, by registration order of the twag
 * scenario a row belongs to ("family": the one that pulled a reference
 * in), then size, then the twag row before its references.
 */
static const char *const g_groups[] = {
	"aes", "aes-*", "milenage", "milenage-op", "milenage-batch*", "milenage-eopc*",
	"milenage-*", "tuak*", "comp128*", "kdf*", "aka-prime*", "aka*", "sim*", "5g*",
	"suci*", "keywrap*",
};
enum { NGROUPS = sizeof(g_groups) / sizeof(g_groups[0]) };

static size_t group_rank(const struct bench_scenario *s)
{
	char base[BENCH_NAME_MAX];

	if (s->sizes)
		return NGROUPS + 1;
	/* a reference "x.evp" sorts with x */
	snprintf(base, sizeof(base), "%.*s", (int)strcspn(s->name, "."), s->name);
	for (size_t i = 0; i < NGROUPS; i++)
		if (fnmatch(g_groups[i], base, 0) == 0)
			return i;
	return NGROUPS;
}

static size_t order_key(const struct bench_scenario *family, const struct bench_scenario *s,
			unsigned size)
{
	/* group (5 bits) | family (8) | size (21) | twag? (1) | own index (8) */
	return (size_t)group_rank(family) << 38 | (size_t)reg_index(family) << 30 |
	       (size_t)size << 9 | (size_t)!is_twag(s) << 8 | reg_index(s);
}

static struct entry *plan_add_one(const struct bench_scenario *s, const struct bench_sel *sel,
				  const struct bench_scenario *family, unsigned size)
{
	struct entry *e = plan_find(s, size);

	if (e) {
		if (sel) { /* an explicit selection wins over an implied one */
			e->threads = sel->threads;
			e->shared_keys = sel->shared_keys;
		}
		return e;
	}
	if (g_nplan == BENCH_MAX_SCENARIOS * 4) {
		fprintf(stderr, "twag-bench: too many rows, %s@%u dropped\n", s->name, size);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		perror("twag-bench");
		exit(2);
	}
	e->sc = s;
	e->size = size;
	if (size)
		snprintf(e->name, sizeof(e->name), "%s@%u", s->name, size);
	else
		snprintf(e->name, sizeof(e->name), "%s", s->name);
	e->order = order_key(family, s, size);
	e->threads = sel ? sel->threads : 1;
	e->shared_keys = sel ? sel->shared_keys : false;
	bench_result_init(&e->res, e->name);
	g_plan[g_nplan++] = e;
	return e;
}

/* One row, or one per size of a size-swept scenario. */
static void plan_add(const struct bench_scenario *s, const struct bench_sel *sel,
		     const struct bench_scenario *family)
{
	const unsigned *sz = eff_sizes(s);

	if (!sz) {
		plan_add_one(s, sel, family, 0);
		return;
	}
	for (; *sz; sz++)
		plan_add_one(s, sel, family, *sz);
}

static bool plan_has(const struct bench_scenario *s)
{
	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->sc == s)
			return true;
	return false;
}

/* Adds the references a twag scenario names, with its thread count. */
static void plan_add_refs(const struct bench_scenario *s, const struct bench_sel *sel)
{
	const char *p = s->refs;

	while (p && *p) {
		size_t len = strcspn(p, " ");
		const struct bench_scenario *r = find_scenario(p, len);
		if (!r)
			fprintf(stderr, "twag-bench: %s names unknown reference %.*s\n",
				s->name, (int)len, p);
		else if (!plan_has(r))
			plan_add(r, sel, s);
		p += len;
		p += strspn(p, " ");
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a;
	const struct entry *y = *(const struct entry *const *)b;

	return (x->order > y->order) - (x->order < y->order);
}

static int build_plan(int nsel, char **sels)
{
	for (int i = 0; i < nsel; i++) {
		struct bench_sel sel;
		bool any = false;

		if (bench_parse_sel(sels[i], &sel) != 0) {
			fprintf(stderr, "twag-bench: bad scenario selection '%s' "
				"(want NAME[:threads=N,keys=shared|private])\n", sels[i]);
			return -1;
		}
		for (size_t j = 0; j < g_nreg; j++) {
			if (fnmatch(sel.pattern, g_reg[j]->name, 0) != 0)
				continue;
			any = true;
			plan_add(g_reg[j], &sel, g_reg[j]);
			if (is_twag(g_reg[j]) && !g_opt.no_refs)
				plan_add_refs(g_reg[j], &sel);
		}
		if (!any) {
			fprintf(stderr, "twag-bench: no scenario matches '%s' (see --list)\n",
				sel.pattern);
			return -1;
		}
	}
	if (nsel == 0) {
		for (size_t j = 0; j < g_nreg; j++) {
			if (!is_twag(g_reg[j]))
				continue;
			plan_add(g_reg[j], NULL, g_reg[j]);
			if (!g_opt.no_refs)
				plan_add_refs(g_reg[j], NULL);
		}
	}
	qsort(g_plan, g_nplan, sizeof(g_plan[0]), cmp_entry);
	return 0;
}

/* ---- clocks ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* ---- Ctrl-C ---- */

static atomic_int g_stop;

static void on_sigint(int sig)
{
	(void)sig;
	atomic_store(&g_stop, 1);
}

static void install_sigint(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C ends the program */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* ---- workers ---- */

struct worker {
	struct entry *e;
	unsigned idx;
	unsigned instance;
	pthread_t tid;
	_Atomic uint64_t progress;
	struct bench_result res;
	struct bench_reservoir lat;
};

static pthread_barrier_t g_bar_setup, g_bar_start;
static atomic_uint g_done;

/* Private keys: every thread (and instance) its own; shared: one set. */
static uint64_t thread_seed(bool shared, unsigned instance, unsigned idx)
{
	uint64_t seed = 0x7477616762656e63ull; /* "twagbenc" */

	if (!shared)
		seed += (uint64_t)(instance * 1024u + idx + 1) * 0x9e3779b97f4a7c15ull;
	return seed;
}

/* Measured time and warm-up of a row: size-swept rows get a tenth. */
static double row_time(const struct entry *e)
{
	if (!e->size)
		return g_opt.time_s;
	return g_opt.size_time_s >= 0 ? g_opt.size_time_s : g_opt.time_s / SIZE_TIME_DIV;
}

static double row_warmup(const struct entry *e)
{
	return e->size ? g_opt.warmup_s / 4 : g_opt.warmup_s;
}

/* Builds a scenario's shared object into a new block (NULL on failure). */
static void *shared_new(const struct bench_scenario *sc, const struct bench_thread *t)
{
	void *obj = calloc(1, sc->shared_size ? sc->shared_size : 1);

	if (obj && sc->shared_setup(obj, t) != 0) {
		free(obj);
		obj = NULL;
	}
	return obj;
}

static void shared_free(const struct bench_scenario *sc, void *obj)
{
	if (obj && sc->shared_teardown)
		sc->shared_teardown(obj);
	free(obj);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct entry *e = w->e;
	const struct bench_scenario *sc = e->sc;
	struct bench_result *r = &w->res;
	void *st = calloc(1, sc->state_size ? sc->state_size : 1);
	void *own = NULL; /* keys=private: this thread's shared object */
	struct bench_thread t = {
		.thread = w->idx,
		.nthreads = e->threads,
		.instance = w->instance,
		.shared_keys = e->shared_keys,
		.size = e->size,
		.why = r->why,
	};
	uint64_t b = sc->granule ? sc->granule : 1;
	int rc = -1;
	bool called_setup = false;

	t.seed = thread_seed(t.shared_keys, w->instance, w->idx);
	bench_reservoir_init(&w->lat, t.seed | 1);
	r->threads = 1;
	r->size = e->size;
	if (e->res.flags & BENCH_F_UNAVAILABLE) {
		/* Found out by the cross-check: nothing to set up. */
		rc = BENCH_UNAVAILABLE;
		memcpy(r->why, e->res.why, sizeof(r->why));
	} else if (st) {
		rc = 0;
		if (sc->shared_setup) {
			if (e->shared_keys) {
				t.shared = e->shared_obj;
			} else {
				t.shared = own = shared_new(sc, &t);
			}
			if (!t.shared)
				rc = -1;
		}
		if (rc == 0) {
			rc = sc->setup(st, &t);
			called_setup = true;
		}
	}
	if (rc == BENCH_UNAVAILABLE) {
		r->flags |= BENCH_F_UNAVAILABLE;
	} else if (rc != 0) {
		r->flags |= BENCH_F_SETUP_FAILED;
		fprintf(stderr, "twag-bench: %s: setup failed (%d)\n", e->name, rc);
	}
	pthread_barrier_wait(&g_bar_setup);

	/* Warm-up, not measured: caches, branch predictors, lazy library
	 * initialisation; and the batch size grows until a batch lasts
	 * BATCH_TARGET_NS. */
	if (rc == 0) {
		uint64_t t0 = now_ns(), warm = (uint64_t)(row_warmup(e) * 1e9);
		for (;;) {
			uint64_t a = now_ns();
			if (sc->run(st, b) != 0) {
				r->errors++;
				rc = -1;
				fprintf(stderr, "twag-bench: %s: run failed in warm-up\n", e->name);
				break;
			}
			uint64_t z = now_ns();
			if (z - a < BATCH_TARGET_NS && b < BATCH_MAX)
				b *= 2;
			if (z - t0 >= warm || atomic_load(&g_stop))
				break;
		}
	}
	r->batch = (uint32_t)b;
	pthread_barrier_wait(&g_bar_start);

	if (rc == 0) {
		uint64_t dur = (uint64_t)(row_time(e) * 1e9);
		uint64_t cpu0 = thread_cpu_ns();
		uint64_t h0 = bench_heap_bytes(), a0 = bench_heap_allocs();
		uint64_t start = now_ns(), last = start;

		for (;;) {
			uint64_t n = b;
			if (atomic_load_explicit(&g_stop, memory_order_relaxed)) {
				r->flags |= BENCH_F_INTERRUPTED;
				break;
			}
			if (g_opt.requests) {
				n = bench_claim(&w->e->issued, g_opt.requests, b);
				if (n == 0)
					break;
			}
			if (sc->run(st, n) != 0) {
				r->errors++;
				break;
			}
			uint64_t te = now_ns();
			double per_op = (double)(te - last) / (double)n;
			bench_reservoir_add(&w->lat, per_op);
			if (per_op > r->max_ns)
				r->max_ns = per_op;
			r->ops += n;
			r->batches++;
			last = te;
			atomic_store_explicit(&w->progress, r->ops, memory_order_relaxed);
			if (!g_opt.requests && te - start >= dur)
				break;
		}
		r->wall_ns = last - start;
		r->busy_ns = last - start;
		r->cpu_ns = thread_cpu_ns() - cpu0;
		r->heap_bytes = bench_heap_bytes() - h0;
		r->heap_allocs = bench_heap_allocs() - a0;
		bench_result_from_thread(r, &w->lat);
	}
	if (called_setup && sc->teardown)
		sc->teardown(st);
	free(st);
	shared_free(sc, own);
	atomic_fetch_add(&g_done, 1);
	return NULL;
}

static void fmt_dur(char *buf, size_t len, double ns);

/* Runs the entries es[0..ne) at the same time; merges each one's threads. */
static void run_group(struct entry **es, size_t ne, unsigned instance, size_t pos,
		      size_t total)
{
	unsigned nthr = 0;
	struct worker *w;
	sigset_t set, old;

	for (size_t i = 0; i < ne; i++)
		nthr += es[i]->threads;
	w = calloc(nthr, sizeof(*w));
	if (!w) {
		perror("twag-bench");
		exit(2);
	}
	pthread_barrier_init(&g_bar_setup, NULL, nthr);
	pthread_barrier_init(&g_bar_start, NULL, nthr);
	atomic_store(&g_done, 0);

	/* Workers never take SIGINT; the main thread turns it into g_stop. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	unsigned k = 0;
	for (size_t i = 0; i < ne; i++) {
		const struct bench_scenario *sc = es[i]->sc;
		atomic_store(&es[i]->issued, 0);
		/* keys=shared with a shared object: ONE object, built here,
		 * read by every thread of this process. */
		es[i]->shared_obj = NULL;
		if (sc->shared_setup && es[i]->shared_keys &&
		    !(es[i]->res.flags & BENCH_F_UNAVAILABLE)) {
			char why[BENCH_WHY_MAX] = "";
			struct bench_thread t = {
				.nthreads = es[i]->threads, .instance = instance,
				.shared_keys = true, .size = es[i]->size, .why = why,
				.seed = thread_seed(true, instance, 0),
			};
			es[i]->shared_obj = shared_new(sc, &t);
		}
		for (unsigned j = 0; j < es[i]->threads; j++, k++) {
			w[k].e = es[i];
			w[k].idx = j;
			w[k].instance = instance;
			bench_result_init(&w[k].res, es[i]->name);
			if (pthread_create(&w[k].tid, NULL, worker_main, &w[k]) != 0) {
				perror("twag-bench: pthread_create");
				exit(2);
			}
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* Progress on stderr while the workers run. */
	bool tty = isatty(2) && !g_opt.quiet;
	uint64_t t0 = now_ns();
	char label[160];
	snprintf(label, sizeof(label), "[%zu/%zu] %s%s", pos + 1, total, es[0]->name,
		 ne > 1 ? " +" : "");
	if (!g_opt.quiet && !tty && instance == 0)
		fprintf(stderr, "twag-bench: %s\n", label);
	while (atomic_load(&g_done) < nthr) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		if (tty && instance == 0) {
			uint64_t ops = 0;
			for (unsigned i = 0; i < nthr; i++)
				ops += atomic_load_explicit(&w[i].progress, memory_order_relaxed);
			char o[32];
			bench_fmt_si(o, sizeof(o), (double)ops);
			fprintf(stderr, "\r\033[K%s  %.1fs  %s ops", label,
				(double)(now_ns() - t0) / 1e9, o);
		}
	}
	if (tty && instance == 0)
		fprintf(stderr, "\r\033[K");

	k = 0;
	for (size_t i = 0; i < ne; i++) {
		struct bench_result *r = &es[i]->res;
		uint32_t flags = r->flags; /* from the cross-checks */
		char why[BENCH_WHY_MAX];
		memcpy(why, r->why, sizeof(why));
		bench_result_init(r, es[i]->name);
		r->flags = flags;
		memcpy(r->why, why, sizeof(why));
		for (unsigned j = 0; j < es[i]->threads; j++, k++) {
			pthread_join(w[k].tid, NULL);
			bench_result_merge(r, &w[k].res);
		}
		shared_free(es[i]->sc, es[i]->shared_obj);
		es[i]->shared_obj = NULL;
		r->instances = 1;
		es[i]->ran = true;
	}
	pthread_barrier_destroy(&g_bar_setup);
	pthread_barrier_destroy(&g_bar_start);
	free(w);
}

/* ---- cross-checks: every reference must agree with twag first ---- */

static void hexdump(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* Marks every row of s unavailable, with the reason. */
static void mark_unavailable(const struct bench_scenario *s, const char *why)
{
	for (size_t i = 0; i < g_nplan; i++) {
		if (g_plan[i]->sc != s)
			continue;
		g_plan[i]->res.flags |= BENCH_F_UNAVAILABLE;
		snprintf(g_plan[i]->res.why, sizeof(g_plan[i]->res.why), "%s", why);
	}
}

enum check { CHECK_SAME, CHECK_DIFFER, CHECK_UNAVAILABLE };

/* Sets up one side of a cross-check (with its own shared object). */
static int check_setup(const struct bench_scenario *s, void *st, void **obj,
		       struct bench_thread *t, bool *called)
{
	*obj = NULL;
	t->shared = NULL;
	if (s->shared_setup) {
		*obj = shared_new(s, t);
		if (!*obj)
			return -1;
		t->shared = *obj;
	}
	*called = true;
	return s->setup(st, t);
}

/* Do a and b agree on g_opt.checks random inputs at this size? */
static enum check cross_check(const struct bench_scenario *a, const struct bench_scenario *b,
			      unsigned size)
{
	size_t room = BENCH_OUT_MAX + size;
	void *sa = calloc(1, a->state_size ? a->state_size : 1);
	void *sb = calloc(1, b->state_size ? b->state_size : 1);
	uint8_t *oa = malloc(room), *ob = malloc(room);
	void *obja = NULL, *objb = NULL;
	char why[BENCH_WHY_MAX] = "";
	struct bench_thread t = {.nthreads = 1, .seed = 0x636865636bull, .size = size,
				 .why = why};
	uint64_t rs = 0x5eed;
	enum check res = CHECK_DIFFER;
	int rca = -1, rcb = -1;
	bool called_a = false, called_b = false;
	char an[BENCH_NAME_MAX + 12], bn[BENCH_NAME_MAX + 12];

	snprintf(an, sizeof(an), size ? "%s@%u" : "%s", a->name, size);
	snprintf(bn, sizeof(bn), size ? "%s@%u" : "%s", b->name, size);
	if (!sa || !sb || !oa || !ob)
		goto out;
	rca = check_setup(a, sa, &obja, &t, &called_a);
	if (rca == BENCH_UNAVAILABLE) {
		mark_unavailable(a, why);
		res = CHECK_UNAVAILABLE;
		goto out;
	}
	rcb = check_setup(b, sb, &objb, &t, &called_b);
	if (rcb == BENCH_UNAVAILABLE) {
		mark_unavailable(b, why);
		res = CHECK_UNAVAILABLE;
		goto out;
	}
	if (rca || rcb) {
		fprintf(stderr, "twag-bench: CROSS-CHECK %s vs %s: setup failed (%d, %d)\n",
			an, bn, rca, rcb);
		goto out;
	}
	res = CHECK_SAME;
	for (unsigned i = 0; i < g_opt.checks && res == CHECK_SAME; i++) {
		uint8_t in[BENCH_IN_LEN];
		size_t la = room, lb = room;
		bench_fill(&rs, in, sizeof(in));
		int ea = a->once(sa, in, oa, &la);
		int eb = b->once(sb, in, ob, &lb);
		if (ea || eb || la != lb || la > room || memcmp(oa, ob, la) != 0) {
			fprintf(stderr, "twag-bench: CROSS-CHECK FAILED: %s and %s differ on "
				"check %u (status %d/%d)\n  input: ", an, bn, i, ea, eb);
			hexdump(stderr, in, sizeof(in));
			fprintf(stderr, "\n  %-14s ", an);
			hexdump(stderr, oa, ea || la > room ? 0 : la);
			fprintf(stderr, "\n  %-14s ", bn);
			hexdump(stderr, ob, eb || lb > room ? 0 : lb);
			fprintf(stderr, "\n");
			res = CHECK_DIFFER;
		}
	}
out:
	if (called_a && a->teardown)
		a->teardown(sa);
	if (called_b && b->teardown)
		b->teardown(sb);
	shared_free(a, obja);
	shared_free(b, objb);
	free(sa);
	free(sb);
	free(oa);
	free(ob);
	return res;
}

/* Checks every (twag, reference) pair with a side in the plan, at every
 * size of the sweep; marks the rows that disagree (every size of both
 * scenarios: one wrong size makes the whole sweep suspect) and the rows
 * that are unavailable. Returns the number of failures. */
static int run_cross_checks(void)
{
	int failed = 0, done = 0;
	static const unsigned no_sizes[] = {0, 0};

	for (size_t i = 0; i < g_nreg; i++) {
		const struct bench_scenario *s = g_reg[i];
		const char *p = s->refs;
		if (!is_twag(s) || !s->once)
			continue;
		while (p && *p) {
			size_t len = strcspn(p, " ");
			const struct bench_scenario *r = find_scenario(p, len);
			bool hs = plan_has(s), hr = r && plan_has(r);
			p += len;
			p += strspn(p, " ");
			if (!r || (!hs && !hr))
				continue;
			if (r->cost_only || !r->once) {
				for (size_t k = 0; k < g_nplan; k++)
					if (g_plan[k]->sc == r)
						g_plan[k]->res.flags |= BENCH_F_NO_CHECK;
				continue;
			}
			const unsigned *sz = eff_sizes(s);
			if (!sz)
				sz = no_sizes;
			/* every size of a sweep; {0} for an op scenario */
			do {
				enum check c = cross_check(s, r, *sz);
				if (c == CHECK_UNAVAILABLE)
					break;
				done++;
				if (c == CHECK_SAME)
					continue;
				failed++;
				for (size_t k = 0; k < g_nplan; k++)
					if (g_plan[k]->sc == r || g_plan[k]->sc == s)
						g_plan[k]->res.flags |= BENCH_F_MISMATCH;
				break;
			} while (*++sz);
		}
	}
	if (!g_opt.quiet)
		fprintf(stderr, "twag-bench: cross-checks: %d pairs (x sizes) x %u random "
			"inputs, %d failed\n", done, g_opt.checks, failed);
	return failed;
}

/* ---- the machine line ---- */

struct machine {
	char cpu[128];
	double ghz;
	long cores;
	char commit[48];
	char level[32];
	char features[128];
};

/*
 * The clock actually delivered: a chain of dependent register adds retires
 * at one per cycle on every out-of-order x86 and ARM core, so N of them
 * take N cycles. The empty asm makes each add a separate instruction the
 * compiler cannot fold; the best of several runs drops interruptions.
 */
static double measure_ghz(void)
{
	uint64_t best = UINT64_MAX, x = 0, y = 1;
	const uint64_t iters = 500000;

	__asm__ volatile("" : "+r"(y));
	for (int rep = 0; rep < 9; rep++) {
		uint64_t t0 = now_ns();
		for (uint64_t i = 0; i < iters; i++) {
#define ADD1 x += y; __asm__ volatile("" : "+r"(x));
#define ADD8 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
			ADD8 ADD8 ADD8 ADD8
#undef ADD8
#undef ADD1
		}
		uint64_t dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	__asm__ volatile("" : : "r"(x));
	return best ? (double)(32 * iters) / (double)best : 0;
}

static void read_machine(struct machine *m)
{
	FILE *f;
	char line[512];

	memset(m, 0, sizeof(*m));
	snprintf(m->cpu, sizeof(m->cpu), "unknown CPU");
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
				char *v = strchr(line, ':');
				if (!v)
					continue;
				v += 1 + strspn(v + 1, " \t");
				v[strcspn(v, "\n")] = 0;
				snprintf(m->cpu, sizeof(m->cpu), "%.120s", v);
				break;
			}
		}
		fclose(f);
	}
	m->cores = sysconf(_SC_NPROCESSORS_ONLN);
	m->ghz = measure_ghz();

	snprintf(m->commit, sizeof(m->commit), "unknown");
	f = popen("git rev-parse --short=12 HEAD 2>/dev/null", "r");
	if (f) {
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (line[0])
				snprintf(m->commit, sizeof(m->commit), "%.40s", line);
		}
		pclose(f);
	}
	snprintf(m->level, sizeof(m->level), "%s", tw_cpu_level_name());
	tw_cpu_describe(m->features, sizeof(m->features));
}

/* ---- report ---- */

static void fmt_dur(char *buf, size_t len, double ns)
{
	if (ns <= 0)
		snprintf(buf, len, "-");
	else if (ns < 10)
		snprintf(buf, len, "%.2f ns", ns);
	else if (ns < 1000)
		snprintf(buf, len, "%.1f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.2f µs", ns / 1e3);
	else
		snprintf(buf, len, "%.2f ms", ns / 1e6);
}

/* ---- paired ratios ----
 *
 * A ratio of two rows measured seconds apart is at the mercy of the
 * machine: on a shared VM the clock moved between 2.6 and 2.9 GHz within
 * one run, and a neighbour's load comes and goes. So the ratio column is
 * measured on its own, after the rows: ours and the reference set up side
 * by side in one thread, then PAIR_ROUNDS rounds of one slice of each
 * (PAIR_SLICE_NS of work, order alternating between rounds), each slice
 * timed in thread CPU time (CLOCK_THREAD_CPUTIME_ID). A round's ratio
 * compares two slices a few milliseconds apart; the column shows the
 * median over the rounds. The ops/s columns stay those of the rows. */
#define PAIR_ROUNDS 11
#define PAIR_SLICE_NS 2000000u

struct pair {
	const struct entry *ours, *ref;
	double ratio; /* median of the rounds; 0: not measured */
};

static struct pair g_pairs[BENCH_MAX_SCENARIOS * 4];
static size_t g_npairs;

struct pair_side {
	const struct bench_scenario *sc;
	void *st, *own;
	bool set_up;
	uint64_t batch;
};

static uint64_t cpu_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pair_open(struct pair_side *p, const struct entry *e)
{
	char why[BENCH_WHY_MAX] = "";
	struct bench_thread t = {
		.nthreads = 1, .shared_keys = e->shared_keys, .size = e->size, .why = why,
		.seed = thread_seed(e->shared_keys, 0, 0),
	};

	memset(p, 0, sizeof(*p));
	p->sc = e->sc;
	p->batch = e->res.batch ? e->res.batch : 1;
	p->st = calloc(1, e->sc->state_size ? e->sc->state_size : 1);
	if (!p->st)
		return -1;
	if (e->sc->shared_setup) {
		t.shared = p->own = shared_new(e->sc, &t);
		if (!p->own)
			return -1;
	}
	if (e->sc->setup(p->st, &t) != 0)
		return -1;
	p->set_up = true;
	return 0;
}

static void pair_close(struct pair_side *p)
{
	if (p->set_up && p->sc->teardown)
		p->sc->teardown(p->st);
	free(p->st);
	if (p->sc)
		shared_free(p->sc, p->own);
}

/* One slice: batches until PAIR_SLICE_NS of CPU time; ops per CPU-ns. */
static double pair_slice(struct pair_side *p)
{
	uint64_t ops = 0, c0 = cpu_clock_ns(), c;

	do {
		if (p->sc->run(p->st, p->batch) != 0)
			return -1;
		ops += p->batch;
		c = cpu_clock_ns();
	} while (c - c0 < PAIR_SLICE_NS);
	return (double)ops / (double)(c - c0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pair_measure(const struct entry *ours, const struct entry *ref)
{
	struct pair_side a, b;
	double r[PAIR_ROUNDS], out = 0;
	unsigned n = 0;

	if (pair_open(&a, ours) != 0 || pair_open(&b, ref) != 0)
		goto done;
	/* one untimed slice each: caches and lazy initialisation */
	if (pair_slice(&a) < 0 || pair_slice(&b) < 0)
		goto done;
	for (unsigned i = 0; i < PAIR_ROUNDS && !atomic_load(&g_stop); i++) {
		double x, y;
		if (i & 1) {
			y = pair_slice(&b);
			x = pair_slice(&a);
		} else {
			x = pair_slice(&a);
			y = pair_slice(&b);
		}
		if (x <= 0 || y <= 0)
			goto done;
		r[n++] = x / y;
	}
	if (n) {
		qsort(r, n, sizeof(r[0]), cmp_double);
		out = r[n / 2];
	}
done:
	pair_close(&b);
	pair_close(&a);
	return out;
}

static bool row_usable(const struct entry *e)
{
	return e && e->ran && !(e->res.flags & (BENCH_F_UNAVAILABLE | BENCH_F_MISMATCH |
						  BENCH_F_SETUP_FAILED)) && !e->res.errors;
}

static const struct entry *ref_entry(const struct bench_scenario *r, const struct entry *e);

/* Every twag row against each of its references that ran. */
static void run_pairs(void)
{
	size_t total = 0, done = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < g_nplan && !atomic_load(&g_stop); i++) {
			const struct entry *e = g_plan[i];
			const char *p = e->sc->refs;
			if (!is_twag(e->sc) || !row_usable(e))
				continue;
			while (p && *p) {
				size_t n = strcspn(p, " ");
				const struct bench_scenario *r = find_scenario(p, n);
				const struct entry *er = r ? ref_entry(r, e) : NULL;
				p += n;
				p += strspn(p, " ");
				if (!row_usable(er))
					continue;
				if (pass == 0) {
					total++;
					continue;
				}
				if (!g_opt.quiet && isatty(2))
					fprintf(stderr, "\r\033[K[pairs %zu/%zu] %s / %s", ++done,
						total, e->name, er->name);
				if (g_npairs < sizeof(g_pairs) / sizeof(g_pairs[0]))
					g_pairs[g_npairs++] = (struct pair){e, er, pair_measure(e, er)};
			}
		}
	}
	if (!g_opt.quiet && isatty(2))
		fprintf(stderr, "\r\033[K");
	else if (!g_opt.quiet && total)
		fprintf(stderr, "twag-bench: %zu paired ratios measured\n", total);
}

/* ours / ref: the paired measurement when there is one, else the rows'
 * ops per CPU-second; 0 if either is missing. */
static double ratio(const struct entry *ours, const struct entry *ref)
{
	for (size_t i = 0; i < g_npairs; i++)
		if (g_pairs[i].ours == ours && g_pairs[i].ref == ref && g_pairs[i].ratio > 0)
			return g_pairs[i].ratio;
	if (!ours || !ref || !ours->ran || !ref->ran || ref->sum.ops_per_cpu_s <= 0)
		return 0;
	return ours->sum.ops_per_cpu_s / ref->sum.ops_per_cpu_s;
}

static void fmt_ratio(char *buf, size_t len, double r)
{
	if (r <= 0)
		snprintf(buf, len, "-");
	else if (r < 10)
		snprintf(buf, len, "%.2fx", r);
	else
		snprintf(buf, len, "%.1fx", r);
}

/* The row of reference r that matches e: the same size if r is swept. */
static const struct entry *ref_entry(const struct bench_scenario *r, const struct entry *e)
{
	unsigned size = bench_match_size(eff_sizes(r), e->size);

	return size == BENCH_NO_MATCH ? NULL : plan_find(r, size);
}

/* Does twag scenario o name scenario s among its references? */
static bool names_ref(const struct bench_scenario *o, const struct bench_scenario *s)
{
	const char *p = o->refs;
	size_t len = strlen(s->name);

	while (p && *p) {
		size_t n = strcspn(p, " ");
		if (n == len && memcmp(p, s->name, n) == 0)
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/* The ratio cell: for a twag row, one ratio per reference (at the same
 * size); for a reference row, the ratio of the first twag row that names
 * it (at the same size). */
static void ratio_cell(char *buf, size_t len, const struct entry *e, char sep)
{
	size_t used = 0;

	buf[0] = 0;
	if (e->res.flags & BENCH_F_UNAVAILABLE) {
		snprintf(buf, len, "-");
		return;
	}
	if (is_twag(e->sc)) {
		const char *p = e->sc->refs;
		while (p && *p) {
			size_t n = strcspn(p, " ");
			const struct bench_scenario *r = find_scenario(p, n);
			const struct entry *er = r ? ref_entry(r, e) : NULL;
			p += n;
			p += strspn(p, " ");
			if (!er || !er->ran || (er->res.flags & BENCH_F_UNAVAILABLE))
				continue;
			char rb[32];
			fmt_ratio(rb, sizeof(rb), ratio(e, er));
			if (er->res.flags & BENCH_F_MISMATCH)
				snprintf(rb, sizeof(rb), "MISMATCH");
			const char *shortname = strchr(r->name, '.');
			shortname = shortname && strncmp(r->name, e->sc->name,
							  (size_t)(shortname - r->name)) == 0
					    ? shortname + 1 : r->name;
			int w = snprintf(buf + used, len - used, "%s%s %s%s",
					 used ? (sep == ';' ? "; " : ", ") : "", shortname, rb,
					 r->cost_only ? " (cost)" : "");
			if (w < 0 || (size_t)w >= len - used)
				break;
			used += (size_t)w;
		}
		if (!used)
			snprintf(buf, len, "-");
		return;
	}
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *o = g_plan[i];
		if (!is_twag(o->sc) || !names_ref(o->sc, e->sc) || ref_entry(e->sc, o) != e)
			continue;
		char rb[32];
		fmt_ratio(rb, sizeof(rb), ratio(o, e));
		if (e->res.flags & BENCH_F_MISMATCH)
			snprintf(buf, len, "MISMATCH");
		else
			snprintf(buf, len, "%s%s", rb, e->sc->cost_only ? " (cost)" : "");
		return;
	}
	snprintf(buf, len, "-");
}

static void note_cell(char *buf, size_t len, const struct entry *e)
{
	const struct bench_result *r = &e->res;

	if (r->flags & BENCH_F_UNAVAILABLE) {
		snprintf(buf, len, "%s", r->why[0] ? r->why : "not available here");
		return;
	}
	snprintf(buf, len, "%s%s%s%s%s%s", e->sc->what ? e->sc->what : "",
		 r->flags & BENCH_F_MISMATCH ? " **OUTPUT MISMATCH: not comparable**" : "",
		 r->flags & BENCH_F_NO_CHECK ? " (cost reference, not the same function)" : "",
		 r->flags & BENCH_F_INTERRUPTED ? " (interrupted)" : "",
		 r->flags & BENCH_F_SETUP_FAILED ? " **SETUP FAILED**" : "",
		 r->errors ? " **RUN ERRORS**" : "");
}

/*
 * Rows printed: every row that ran, except that an unavailable scenario
 * gets one row (its first), named without a size, saying why.
 */
static bool row_shown(size_t i)
{
	const struct entry *e = g_plan[i];

	if (!e->ran)
		return false;
	if (!(e->res.flags & BENCH_F_UNAVAILABLE))
		return true;
	for (size_t j = 0; j < i; j++)
		if (g_plan[j]->sc == e->sc && g_plan[j]->ran &&
		    (g_plan[j]->res.flags & BENCH_F_UNAVAILABLE))
			return false;
	return true;
}

static const char *row_name(const struct entry *e)
{
	return e->res.flags & BENCH_F_UNAVAILABLE ? e->sc->name : e->name;
}

/* The machine line and the run line; pre starts each line ("# " in CSV). */
static void print_settings(FILE *f, const struct machine *m, const char *pre, const char *gap)
{
	char mode[200];
	double st = g_opt.size_time_s >= 0 ? g_opt.size_time_s : g_opt.time_s / SIZE_TIME_DIV;

	if (g_opt.requests)
		snprintf(mode, sizeof(mode), "--requests %llu per row",
			 (unsigned long long)g_opt.requests);
	else
		snprintf(mode, sizeof(mode), "--time %.3g s per row (size-swept rows %.3g s)",
			 g_opt.time_s, st);
	fprintf(f, "%smachine: %s, %.2f GHz measured (dependent adds), %ld cores, "
		"compiler %s, commit %s, twag paths: %s (%s)\n",
		pre, m->cpu, m->ghz, m->cores, __VERSION__, m->commit, m->level, m->features);
	fprintf(f, "%s%srun: %s, warm-up %.3g s excluded (size-swept rows %.3g s), %s, "
		"%u instance%s, heap %s\n", gap, pre, mode, g_opt.warmup_s, g_opt.warmup_s / 4,
		g_opt.concurrent ? "scenarios concurrently" : "scenarios one after another",
		g_opt.instances, g_opt.instances == 1 ? "" : "s",
		bench_heap_counting() ? "counted (malloc hook)" : "not counted (sanitizer build)");
	if (g_npairs)
		fprintf(f, "%s%sratios: median of %u interleaved pairs of %.0f ms slices "
			"(ours and reference alternating in one thread, thread CPU time), "
			"measured after the rows\n", gap, pre, PAIR_ROUNDS, PAIR_SLICE_NS / 1e6);
}

static void heap_cell(char *buf, size_t len, const struct entry *e)
{
	if (!bench_heap_counting())
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.0f", e->sum.heap_bytes_per_op);
}

static void print_markdown(FILE *f, const struct machine *m)
{
	bool any_op = false, any_sized = false;

	print_settings(f, m, "", "\n");
	for (size_t i = 0; i < g_nplan; i++) {
		if (!row_shown(i))
			continue;
		if (g_plan[i]->sc->sizes)
			any_sized = true;
		else
			any_op = true;
	}
	if (any_op) {
		fprintf(f, "\n| scenario | impl | thr | ops | ops/s | ops/s/thr | ops/CPU-s | ns/op "
			"| median | p99 | max | heap B/op | batch | twag / ref | note |\n");
		fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
	}
	for (size_t i = 0; any_op && i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char ops[24], ps[24], pt[24], pc[24], mean[24], med[24], p99[24], mx[24];
		char heap[32], rc[256], note[320];
		if (!row_shown(i) || e->sc->sizes)
			continue;
		note_cell(note, sizeof(note), e);
		if (e->res.flags & BENCH_F_UNAVAILABLE) {
			fprintf(f, "| %s | %s | - | - | - | - | - | - | - | - | - | - | - | - | %s |\n",
				row_name(e), e->sc->impl, note);
			continue;
		}
		bench_fmt_si(ops, sizeof(ops), (double)e->res.ops);
		bench_fmt_si(ps, sizeof(ps), s->ops_per_s);
		bench_fmt_si(pt, sizeof(pt), s->ops_per_s_thread);
		bench_fmt_si(pc, sizeof(pc), s->ops_per_cpu_s);
		fmt_dur(mean, sizeof(mean), s->ns_per_op);
		fmt_dur(med, sizeof(med), s->median_ns);
		fmt_dur(p99, sizeof(p99), s->p99_ns);
		fmt_dur(mx, sizeof(mx), s->max_ns);
		heap_cell(heap, sizeof(heap), e);
		ratio_cell(rc, sizeof(rc), e, ';');
		fprintf(f, "| %s | %s | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s | %u | %s | %s |\n",
			row_name(e), e->sc->impl, e->res.threads, ops, ps, pt, pc, mean, med, p99,
			mx, heap, e->res.batch, rc, note);
	}
	if (!any_sized)
		return;
	fprintf(f, "\n%sData plane: one op = one packet of the given payload size; "
		"µs CPU/KB is the service demand (CPU µs per 1024 payload bytes); "
		"twag / ref is at the same size.\n",
		any_op ? "" : "\n");
	fprintf(f, "\n| scenario | impl | bytes | thr | pkts | pkts/s | Gbit/s | MB/s "
		"| µs CPU/KB | pkts/CPU-s | ns/pkt | p99 | heap B/op | batch | twag / ref | note |\n");
	fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char ops[24], ps[24], pc[24], mean[24], p99[24], heap[32], rc[256], note[320];
		if (!row_shown(i) || !e->sc->sizes)
			continue;
		note_cell(note, sizeof(note), e);
		if (e->res.flags & BENCH_F_UNAVAILABLE) {
			fprintf(f, "| %s | %s | - | - | - | - | - | - | - | - | - | - | - | - | - "
				"| %s |\n", row_name(e), e->sc->impl, note);
			continue;
		}
		bench_fmt_si(ops, sizeof(ops), (double)e->res.ops);
		bench_fmt_si(ps, sizeof(ps), s->ops_per_s);
		bench_fmt_si(pc, sizeof(pc), s->ops_per_cpu_s);
		fmt_dur(mean, sizeof(mean), s->ns_per_op);
		fmt_dur(p99, sizeof(p99), s->p99_ns);
		heap_cell(heap, sizeof(heap), e);
		ratio_cell(rc, sizeof(rc), e, ';');
		fprintf(f, "| %s | %s | %u | %u | %s | %s | %.3f | %.1f | %.4f | %s | %s | %s | %s "
			"| %u | %s | %s |\n", row_name(e), e->sc->impl, e->size, e->res.threads,
			ops, ps, s->gbit_per_s, s->mbyte_per_s, s->us_cpu_per_kb, pc, mean, p99,
			heap, e->res.batch, rc, note);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_json(FILE *f, const struct machine *m)
{
	fprintf(f, "{\n  \"machine\": {\"cpu\": ");
	json_str(f, m->cpu);
	fprintf(f, ", \"ghz_measured\": %.3f, \"cores\": %ld, \"compiler\": ", m->ghz, m->cores);
	json_str(f, __VERSION__);
	fprintf(f, ", \"commit\": ");
	json_str(f, m->commit);
	fprintf(f, ", \"cpu_level\": ");
	json_str(f, m->level);
	fprintf(f, ", \"cpu_features\": ");
	json_str(f, m->features);
	fprintf(f, "},\n  \"settings\": {\"time_s\": %g, \"size_time_s\": %g, \"requests\": %llu, "
		"\"warmup_s\": %g, \"instances\": %u, \"concurrent\": %s, \"heap_counted\": %s},\n"
		"  \"results\": [",
		g_opt.requests ? 0 : g_opt.time_s,
		g_opt.requests ? 0 : g_opt.size_time_s >= 0 ? g_opt.size_time_s : g_opt.time_s / SIZE_TIME_DIV,
		(unsigned long long)g_opt.requests, g_opt.warmup_s, g_opt.instances,
		g_opt.concurrent ? "true" : "false", bench_heap_counting() ? "true" : "false");
	bool first = true;
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char rc[256], note[320];
		if (!row_shown(i))
			continue;
		ratio_cell(rc, sizeof(rc), e, ';');
		note_cell(note, sizeof(note), e);
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		first = false;
		json_str(f, row_name(e));
		fprintf(f, ", \"scenario\": ");
		json_str(f, e->sc->name);
		fprintf(f, ", \"impl\": ");
		json_str(f, e->sc->impl);
		fprintf(f, ", \"size\": %u, \"unavailable\": %s, \"threads\": %u, \"instances\": %u, "
			"\"ops\": %llu, \"wall_s\": %.6f, "
			"\"cpu_s\": %.6f, \"ops_per_s\": %.1f, \"ops_per_s_thread\": %.1f, "
			"\"ops_per_cpu_s\": %.1f, \"ns_per_op\": %.3f, \"median_ns\": %.3f, "
			"\"p99_ns\": %.3f, \"max_ns\": %.3f, \"heap_bytes_per_op\": %.3f, "
			"\"heap_allocs_per_op\": %.3f, \"batch\": %u, \"errors\": %u, "
			"\"bytes_per_op\": %.0f, \"gbit_per_s\": %.4f, \"mbyte_per_s\": %.3f, "
			"\"us_cpu_per_kb\": %.5f, "
			"\"interrupted\": %s, \"mismatch\": %s, \"ratios\": ",
			e->size, e->res.flags & BENCH_F_UNAVAILABLE ? "true" : "false",
			e->res.threads, e->res.instances, (unsigned long long)e->res.ops,
			(double)e->res.wall_ns / 1e9, s->cpu_s, s->ops_per_s, s->ops_per_s_thread,
			s->ops_per_cpu_s, s->ns_per_op, s->median_ns, s->p99_ns, s->max_ns,
			s->heap_bytes_per_op, s->heap_allocs_per_op, e->res.batch, e->res.errors,
			s->bytes_per_op, s->gbit_per_s, s->mbyte_per_s, s->us_cpu_per_kb,
			e->res.flags & BENCH_F_INTERRUPTED ? "true" : "false",
			e->res.flags & BENCH_F_MISMATCH ? "true" : "false");
		json_str(f, rc);
		fprintf(f, ", \"note\": ");
		json_str(f, note);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void print_csv(FILE *f, const struct machine *m)
{
	print_settings(f, m, "# ", "");
	fprintf(f, "scenario,impl,size,threads,instances,ops,wall_s,cpu_s,ops_per_s,"
		"ops_per_s_thread,ops_per_cpu_s,ns_per_op,median_ns,p99_ns,max_ns,"
		"heap_bytes_per_op,heap_allocs_per_op,batch,errors,gbit_per_s,mbyte_per_s,"
		"us_cpu_per_kb,ratios,note\n");
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char rc[256], note[320];
		if (!row_shown(i))
			continue;
		ratio_cell(rc, sizeof(rc), e, ';');
		note_cell(note, sizeof(note), e);
		fprintf(f, "%s,%s,%u,%u,%u,%llu,%.6f,%.6f,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,"
			"%.3f,%u,%u,%.4f,%.3f,%.5f,", row_name(e), e->sc->impl, e->size,
			e->res.threads, e->res.instances, (unsigned long long)e->res.ops,
			(double)e->res.wall_ns / 1e9, s->cpu_s, s->ops_per_s, s->ops_per_s_thread,
			s->ops_per_cpu_s, s->ns_per_op, s->median_ns, s->p99_ns, s->max_ns,
			s->heap_bytes_per_op, s->heap_allocs_per_op, e->res.batch, e->res.errors,
			s->gbit_per_s, s->mbyte_per_s, s->us_cpu_per_kb);
		csv_str(f, rc);
		fputc(',', f);
		csv_str(f, note);
		fputc('\n', f);
	}
}

/* ---- --plot: gnuplot charts ---- */

/* The short name of reference r beside twag scenario s ("evp", "osmo"). */
static const char *short_ref(const struct bench_scenario *s, const struct bench_scenario *r)
{
	const char *dot = strchr(r->name, '.');

	if (dot && strncmp(r->name, s->name, (size_t)(dot - r->name)) == 0)
		return dot + 1;
	return r->name;
}

static void plot_header(FILE *g, const char *out, unsigned w, unsigned h, const char *title,
			const struct machine *m)
{
	fprintf(g, "reset\nset terminal svg size %u,%u dynamic noenhanced font 'sans,11' "
		"background rgb 'white'\nset output '%s'\n", w, h, out);
	fprintf(g, "set title \"%s\\n%.60s, %.2f GHz, %ld cores, commit %s, paths %s\" "
		"font 'sans,12'\n", title, m->cpu, m->ghz, m->cores, m->commit, m->level);
	fprintf(g, "set grid ytics\nset border 3\nset tics nomirror\n");
}

/*
 * FILE.svg: ops per CPU-second, twag vs each reference (log scale), for
 * op scenarios; the size-swept rows go to FILE-dataplane.svg (or to
 * FILE.svg when there are no op rows): service demand vs size.
 */
static int write_plot(const char *path, const struct machine *m)
{
	size_t nb = 0, np = 0, cap = g_nplan * 4 + 1;
	struct bench_plot_bar *bars = calloc(cap, sizeof(*bars));
	struct bench_plot_point *pts = calloc(cap, sizeof(*pts));
	char (*labels)[BENCH_NAME_MAX * 2] = calloc(cap, sizeof(*labels));
	char base[512], dat_b[560], dat_l[560], gp[560], out_b[560], out_l[560];
	int rc = -1;

	if (!bars || !pts || !labels)
		goto out;
	size_t bl = strlen(path);
	if (bl > 4 && strcmp(path + bl - 4, ".svg") == 0)
		bl -= 4;
	snprintf(base, sizeof(base), "%.*s", (int)(bl < 500 ? bl : 500), path);
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		if (!row_shown(i) || (e->res.flags & (BENCH_F_UNAVAILABLE | BENCH_F_MISMATCH)))
			continue;
		if (e->sc->sizes) {
			pts[np++] = (struct bench_plot_point){e->sc->name, e->size,
							      e->sum.us_cpu_per_kb};
			continue;
		}
		if (!is_twag(e->sc))
			continue;
		const char *p = e->sc->refs;
		while (p && *p && nb < cap) {
			size_t n = strcspn(p, " ");
			const struct bench_scenario *r = find_scenario(p, n);
			const struct entry *er = r ? ref_entry(r, e) : NULL;
			p += n;
			p += strspn(p, " ");
			if (!er || !er->ran || (er->res.flags & (BENCH_F_UNAVAILABLE |
								   BENCH_F_MISMATCH)) ||
			    r->cost_only)
				continue;
			snprintf(labels[nb], sizeof(labels[nb]), "%s vs %s", e->sc->name,
				 short_ref(e->sc, r));
			bars[nb] = (struct bench_plot_bar){labels[nb], e->sum.ops_per_cpu_s,
							   er->sum.ops_per_cpu_s};
			nb++;
		}
	}
	snprintf(dat_b, sizeof(dat_b), "%s.ops.dat", base);
	snprintf(dat_l, sizeof(dat_l), "%s-dataplane.dat", base);
	snprintf(gp, sizeof(gp), "%s.gp", base);
	snprintf(out_b, sizeof(out_b), "%s.svg", base);
	snprintf(out_l, sizeof(out_l), "%s%s.svg", base, nb ? "-dataplane" : "");

	FILE *g = fopen(gp, "w");
	if (!g)
		goto out;
	if (nb) {
		FILE *d = fopen(dat_b, "w");
		if (!d) {
			fclose(g);
			goto out;
		}
		bench_plot_bars(d, bars, nb);
		fclose(d);
		plot_header(g, out_b, nb * 38 + 200 > 900 ? (unsigned)nb * 38 + 200 : 900, 640,
			    "twag-bench: operations per CPU-second, twag vs reference (log scale)", m);
		fprintf(g, "set style data histograms\nset style histogram clustered gap 1\n"
			"set style fill solid 0.85 border -1\nset logscale y\nset yrange [1000:*]\n"
			"set format y '%%.0s%%c'\nset ylabel 'operations per CPU-second'\n"
			"set xtics rotate by 45 right scale 0 font 'sans,9'\nset key top right\n"
			"set bmargin 9\nplot '%s' using 2:xtic(1) title 'twag' lc rgb '#1f77b4', "
			"'' using 3 title 'reference (named under the bar)' lc rgb '#ff7f0e'\n", dat_b);
	}
	if (np) {
		FILE *d = fopen(dat_l, "w");
		if (!d) {
			fclose(g);
			goto out;
		}
		size_t nblocks = bench_plot_lines(d, pts, np);
		fclose(d);
		plot_header(g, out_l, 1100, 680,
			    "twag-bench: service demand (CPU µs per KB of payload) vs packet size", m);
		fprintf(g, "set style data linespoints\nset logscale x 2\n"
			"set logscale y\nset xlabel 'payload bytes per packet'\n"
			"set ylabel 'CPU µs per KB (lower is better)'\nset xtics rotate by 0 "
			"font 'sans,10'\nset bmargin 4\nset key outside right font 'sans,9'\nplot ");
		/* one series per scenario, in the order of the data blocks */
		size_t blk = 0;
		for (size_t i = 0; i < np; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = strcmp(pts[j].series, pts[i].series) == 0;
			if (seen)
				continue;
			const struct bench_scenario *sc = find_scenario(pts[i].series,
									strlen(pts[i].series));
			fprintf(g, "%s'%s' index %zu using 1:2 title '%s' lw 2 dt %d", blk ? ", " : "",
				dat_l, blk, pts[i].series, sc && is_twag(sc) ? 1 : 2);
			blk++;
		}
		fprintf(g, "\n");
		(void)nblocks;
	}
	fclose(g);
	if (!nb && !np) {
		fprintf(stderr, "twag-bench: --plot: nothing to plot\n");
		goto out;
	}
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", gp);
	int st = system(cmd);
	if (st != 0) {
		fprintf(stderr, "twag-bench: --plot: gnuplot failed (status %d); install it with "
			"scripts/deps.sh bench. Data and script: %s\n", st, gp);
		goto out;
	}
	fprintf(stderr, "twag-bench: plot: %s%s%s (data: %s)\n", nb ? out_b : "",
		nb && np ? ", " : "", np ? out_l : "", gp);
	rc = 0;
out:
	free(bars);
	free(pts);
	free(labels);
	return rc;
}

/* ---- running the plan: in this process, or in N forked instances ---- */

/* Hook between groups: an instance reports ready and waits for "go". */
static int g_up = -1, g_down = -1;

static bool instance_sync(void)
{
	char c = 'R';

	if (g_up < 0)
		return true;
	if (write(g_up, &c, 1) != 1 || read(g_down, &c, 1) != 1)
		return false;
	return c == 'G';
}

static void run_plan(unsigned instance)
{
	if (g_opt.concurrent) {
		if (instance_sync())
			run_group(g_plan, g_nplan, instance, 0, 1);
		return;
	}
	for (size_t i = 0; i < g_nplan && !atomic_load(&g_stop); i++) {
		if (!instance_sync())
			break;
		run_group(&g_plan[i], 1, instance, i, g_nplan);
	}
}

static bool read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * --instances N: N processes run the same plan, meeting before each
 * scenario so they measure at the same time; each sends its results (POD
 * structs) back and the parent adds them up as one box's totals.
 */
static int run_instances(unsigned n)
{
	int up[64][2], down[64][2];
	pid_t pid[64];
	bool live[64];
	struct bench_result *tmp = malloc(sizeof(*tmp));

	if (!tmp)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (pipe(up[i]) || pipe(down[i])) {
			perror("twag-bench: pipe");
			return -1;
		}
		fflush(NULL);
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("twag-bench: fork");
			return -1;
		}
		if (pid[i] == 0) {
			g_up = up[i][1];
			g_down = down[i][0];
			run_plan(i);
			char c = 'D';
			bool ok = write_full(g_up, &c, 1);
			for (size_t k = 0; k < g_nplan && ok; k++) {
				uint8_t ran = g_plan[k]->ran;
				ok = write_full(g_up, &ran, 1) &&
				     write_full(g_up, &g_plan[k]->res, sizeof(g_plan[k]->res));
			}
			_exit(ok ? 0 : 3);
		}
		close(up[i][1]);
		close(down[i][0]);
		live[i] = true;
	}
	for (size_t k = 0; k < g_nplan; k++) {
		bench_result_init(&g_plan[k]->res, g_plan[k]->name);
	}
	/* Rounds: every live instance says R (ready) or D (done + results). */
	unsigned nlive = n;
	int rc = 0;
	while (nlive) {
		bool ready[64] = {false};
		for (unsigned i = 0; i < n; i++) {
			char c;
			if (!live[i])
				continue;
			if (!read_full(up[i][0], &c, 1)) {
				fprintf(stderr, "twag-bench: instance %u died\n", i);
				live[i] = false;
				nlive--;
				rc = -1;
				continue;
			}
			if (c == 'R') {
				ready[i] = true;
				continue;
			}
			for (size_t k = 0; k < g_nplan; k++) {
				uint8_t ran;
				if (!read_full(up[i][0], &ran, 1) ||
				    !read_full(up[i][0], tmp, sizeof(*tmp))) {
					fprintf(stderr, "twag-bench: instance %u: short result\n", i);
					rc = -1;
					break;
				}
				if (!ran)
					continue;
				uint32_t inst = g_plan[k]->res.instances;
				bench_result_merge(&g_plan[k]->res, tmp);
				g_plan[k]->res.instances = inst + 1;
				g_plan[k]->ran = true;
			}
			live[i] = false;
			nlive--;
		}
		for (unsigned i = 0; i < n; i++) {
			char g = 'G';
			if (ready[i] && !write_full(down[i][1], &g, 1))
				rc = -1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int status;
		close(up[i][0]);
		close(down[i][1]);
		waitpid(pid[i], &status, 0);
	}
	free(tmp);
	return rc;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: twag-bench [options] [SCENARIO[:threads=N,keys=shared|private] ...]\n"
		"  SCENARIO is a name or a glob (see --list); selecting a twag scenario\n"
		"  also selects its references. Default: every twag scenario.\n"
		"  --time S        measure each row for S seconds (default 1)\n"
		"  --size-time S   size-swept (data-plane) rows: S seconds (default --time/20)\n"
		"  --sizes LIST    payload sizes for size-swept scenarios, e.g. 1500,4096\n"
		"                  (default 128,256,512,1024,1500,4096,8192,16384,32768)\n"
		"  --requests N    instead, exactly N operations per row\n"
		"  --warmup S      unmeasured warm-up per row (default 0.2; size-swept /4)\n"
		"  --concurrent    run the selected scenarios at the same time\n"
		"  --instances N   fork N processes running the same plan; sum them\n"
		"  --no-refs       do not add references to twag scenarios\n"
		"  --checks N      random inputs per cross-check (default 64)\n"
		"  --json | --csv  output format (default: a Markdown table)\n"
		"  --plot FILE.svg also draw charts with gnuplot (FILE.svg: ops per\n"
		"                  CPU-second, twag vs reference; FILE-dataplane.svg:\n"
		"                  service demand vs size)\n"
		"  --quiet         no progress on stderr\n"
		"  --list          list the scenarios\n"
		"  --version       print the version\n");
}

static void list_scenarios(void)
{
	for (size_t i = 0; i < g_nreg; i++)
		printf("%-22s %-12s %s%s%s%s%s\n", g_reg[i]->name, g_reg[i]->impl,
		       g_reg[i]->sizes ? "[sizes] " : "",
		       g_reg[i]->what ? g_reg[i]->what : "", g_reg[i]->refs ? "  [refs: " : "",
		       g_reg[i]->refs ? g_reg[i]->refs : "", g_reg[i]->refs ? "]" : "");
}

static bool parse_double(const char *s, double *out, double lo, double hi)
{
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (errno || e == s || *e || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

static bool parse_u64(const char *s, uint64_t *out, uint64_t lo, uint64_t hi)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno || e == s || *e || s[0] == '-' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	char *sels[BENCH_MAX_SCENARIOS];
	int nsel = 0;
	struct machine m;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t u;
		if (strcmp(a, "--time") == 0 && v && parse_double(v, &g_opt.time_s, 0.001, 86400)) {
			i++;
		} else if (strcmp(a, "--warmup") == 0 && v &&
			   parse_double(v, &g_opt.warmup_s, 0, 3600)) {
			i++;
		} else if (strcmp(a, "--requests") == 0 && v && parse_u64(v, &u, 1, UINT64_MAX / 2)) {
			g_opt.requests = u;
			i++;
		} else if (strcmp(a, "--instances") == 0 && v && parse_u64(v, &u, 1, 64)) {
			g_opt.instances = (unsigned)u;
			i++;
		} else if (strcmp(a, "--checks") == 0 && v && parse_u64(v, &u, 1, 1u << 20)) {
			g_opt.checks = (unsigned)u;
			i++;
		} else if (strcmp(a, "--size-time") == 0 && v &&
			   parse_double(v, &g_opt.size_time_s, 0.001, 86400)) {
			i++;
		} else if (strcmp(a, "--sizes") == 0 && v &&
			   bench_parse_sizes(v, g_opt.sizes, BENCH_MAX_SIZES + 1) > 0) {
			i++;
		} else if (strcmp(a, "--plot") == 0 && v) {
			g_opt.plot = v;
			i++;
		} else if (strcmp(a, "--concurrent") == 0) {
			g_opt.concurrent = true;
		} else if (strcmp(a, "--no-refs") == 0) {
			g_opt.no_refs = true;
		} else if (strcmp(a, "--json") == 0) {
			g_opt.json = true;
		} else if (strcmp(a, "--csv") == 0) {
			g_opt.csv = true;
		} else if (strcmp(a, "--quiet") == 0) {
			g_opt.quiet = true;
		} else if (strcmp(a, "--list") == 0) {
			list_scenarios();
			return 0;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("twag-bench %s\n", tw_version());
			return 0;
		} else if (a[0] == '-') {
			fprintf(stderr, "twag-bench: bad option or value: %s%s%s\n", a,
				v ? " " : "", v ? v : "");
			usage(stderr);
			return 2;
		} else if (nsel < BENCH_MAX_SCENARIOS) {
			sels[nsel++] = argv[i];
		}
	}
	if (g_opt.json && g_opt.csv) {
		fprintf(stderr, "twag-bench: choose one of --json and --csv\n");
		return 2;
	}
	if (build_plan(nsel, sels) != 0)
		return 2;
	if (g_nplan == 0) {
		fprintf(stderr, "twag-bench: nothing to run\n");
		return 2;
	}

	read_machine(&m);
	install_sigint();
	int failed = run_cross_checks();

	if (g_opt.instances > 1) {
		if (run_instances(g_opt.instances) != 0)
			fprintf(stderr, "twag-bench: some instances failed; totals are partial\n");
	} else {
		run_plan(0);
		/* Ratios from interleaved pairs (above); not for request-limited
		 * or concurrent runs, whose point is the rows themselves. */
		if (!g_opt.requests && !g_opt.concurrent && !g_opt.no_refs)
			run_pairs();
	}
	if (atomic_load(&g_stop))
		fprintf(stderr, "twag-bench: interrupted; reporting what was measured\n");

	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->ran)
			bench_summarize(&g_plan[i]->res, &g_plan[i]->sum);
	if (g_opt.json)
		print_json(stdout, &m);
	else if (g_opt.csv)
		print_csv(stdout, &m);
	else
		print_markdown(stdout, &m);
	fflush(stdout);
	if (g_opt.plot && write_plot(g_opt.plot, &m) != 0)
		fprintf(stderr, "twag-bench: --plot %s failed\n", g_opt.plot);

	int errors = 0;
	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->res.errors || (g_plan[i]->res.flags & BENCH_F_SETUP_FAILED))
			errors++;
	if (failed)
		fprintf(stderr, "twag-bench: %d cross-check(s) FAILED: rows marked MISMATCH "
			"compare different answers\n", failed);
	return failed || errors ? 1 : 0;
}
