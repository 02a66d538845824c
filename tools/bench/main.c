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

/* ---- options and plan ---- */

struct opts {
	double time_s;
	double warmup_s;
	uint64_t requests;
	unsigned instances;
	unsigned checks;
	bool concurrent;
	bool no_refs;
	bool json, csv;
	bool quiet;
};

static struct opts g_opt = {
	.time_s = 1.0, .warmup_s = 0.2, .instances = 1, .checks = 64,
};

struct entry {
	const struct bench_scenario *sc;
	unsigned threads;
	bool shared_keys;
	bool ran;
	_Atomic uint64_t issued; /* request-limited runs */
	struct bench_result res;
	struct bench_summary sum;
};

static struct entry *g_plan[BENCH_MAX_SCENARIOS];
static size_t g_nplan;

static struct entry *plan_find(const struct bench_scenario *s)
{
	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->sc == s)
			return g_plan[i];
	return NULL;
}

static struct entry *plan_add(const struct bench_scenario *s, const struct bench_sel *sel)
{
	struct entry *e = plan_find(s);

	if (e) {
		if (sel) { /* an explicit selection wins over an implied one */
			e->threads = sel->threads;
			e->shared_keys = sel->shared_keys;
		}
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		perror("twag-bench");
		exit(2);
	}
	e->sc = s;
	e->threads = sel ? sel->threads : 1;
	e->shared_keys = sel ? sel->shared_keys : false;
	bench_result_init(&e->res, s->name);
	g_plan[g_nplan++] = e;
	return e;
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
		else if (!plan_find(r))
			plan_add(r, sel)->shared_keys = sel ? sel->shared_keys : false;
		p += len;
		p += strspn(p, " ");
	}
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
			plan_add(g_reg[j], &sel);
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
			plan_add(g_reg[j], NULL);
			if (!g_opt.no_refs)
				plan_add_refs(g_reg[j], NULL);
		}
	}
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

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct bench_scenario *sc = w->e->sc;
	struct bench_result *r = &w->res;
	void *st = calloc(1, sc->state_size ? sc->state_size : 1);
	struct bench_thread t = {
		.thread = w->idx,
		.nthreads = w->e->threads,
		.instance = w->instance,
		.shared_keys = w->e->shared_keys,
	};
	uint64_t b = sc->granule ? sc->granule : 1;
	int rc = -1;

	/* Private keys: every thread (and instance) its own; shared: one set. */
	t.seed = 0x7477616762656e63ull; /* "twagbenc" */
	if (!t.shared_keys)
		t.seed += (uint64_t)(w->instance * 1024u + w->idx + 1) * 0x9e3779b97f4a7c15ull;
	bench_reservoir_init(&w->lat, t.seed | 1);
	r->threads = 1;
	if (st)
		rc = sc->setup(st, &t);
	if (rc != 0) {
		r->flags |= BENCH_F_SETUP_FAILED;
		fprintf(stderr, "twag-bench: %s: setup failed (%d)\n", sc->name, rc);
	}
	pthread_barrier_wait(&g_bar_setup);

	/* Warm-up, not measured: caches, branch predictors, lazy library
	 * initialisation; and the batch size grows until a batch lasts
	 * BATCH_TARGET_NS. */
	if (rc == 0) {
		uint64_t t0 = now_ns(), warm = (uint64_t)(g_opt.warmup_s * 1e9);
		for (;;) {
			uint64_t a = now_ns();
			if (sc->run(st, b) != 0) {
				r->errors++;
				rc = -1;
				fprintf(stderr, "twag-bench: %s: run failed in warm-up\n", sc->name);
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
		uint64_t dur = (uint64_t)(g_opt.time_s * 1e9);
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
	if (st && sc->teardown)
		sc->teardown(st);
	free(st);
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
		atomic_store(&es[i]->issued, 0);
		for (unsigned j = 0; j < es[i]->threads; j++, k++) {
			w[k].e = es[i];
			w[k].idx = j;
			w[k].instance = instance;
			bench_result_init(&w[k].res, es[i]->sc->name);
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
	snprintf(label, sizeof(label), "[%zu/%zu] %s%s", pos + 1, total, es[0]->sc->name,
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
		bench_result_init(r, es[i]->sc->name);
		r->flags = flags;
		for (unsigned j = 0; j < es[i]->threads; j++, k++) {
			pthread_join(w[k].tid, NULL);
			bench_result_merge(r, &w[k].res);
		}
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

/* Returns true if a and b agree on g_opt.checks random inputs. */
static bool cross_check(const struct bench_scenario *a, const struct bench_scenario *b)
{
	void *sa = calloc(1, a->state_size ? a->state_size : 1);
	void *sb = calloc(1, b->state_size ? b->state_size : 1);
	struct bench_thread t = {.nthreads = 1, .seed = 0x636865636bull};
	uint64_t rs = 0x5eed;
	bool ok = false;
	int rca = -1, rcb = -1;

	if (!sa || !sb)
		goto out;
	rca = a->setup(sa, &t);
	rcb = b->setup(sb, &t);
	if (rca || rcb) {
		fprintf(stderr, "twag-bench: CROSS-CHECK %s vs %s: setup failed (%d, %d)\n",
			a->name, b->name, rca, rcb);
		goto out;
	}
	ok = true;
	for (unsigned i = 0; i < g_opt.checks && ok; i++) {
		uint8_t in[BENCH_IN_LEN], oa[BENCH_OUT_MAX], ob[BENCH_OUT_MAX];
		size_t la = sizeof(oa), lb = sizeof(ob);
		bench_fill(&rs, in, sizeof(in));
		int ea = a->once(sa, in, oa, &la);
		int eb = b->once(sb, in, ob, &lb);
		if (ea || eb || la != lb || memcmp(oa, ob, la) != 0) {
			fprintf(stderr, "twag-bench: CROSS-CHECK FAILED: %s and %s differ on "
				"check %u (status %d/%d)\n  input: ", a->name, b->name, i, ea, eb);
			hexdump(stderr, in, sizeof(in));
			fprintf(stderr, "\n  %-14s ", a->name);
			hexdump(stderr, oa, ea ? 0 : la);
			fprintf(stderr, "\n  %-14s ", b->name);
			hexdump(stderr, ob, eb ? 0 : lb);
			fprintf(stderr, "\n");
			ok = false;
		}
	}
out:
	if (sa && rca == 0 && a->teardown)
		a->teardown(sa);
	if (sb && rcb == 0 && b->teardown)
		b->teardown(sb);
	free(sa);
	free(sb);
	return ok;
}

/* Checks every (twag, reference) pair with a side in the plan; marks the
 * reference rows that disagree. Returns the number of failures. */
static int run_cross_checks(void)
{
	int failed = 0, done = 0;

	for (size_t i = 0; i < g_nreg; i++) {
		const struct bench_scenario *s = g_reg[i];
		const char *p = s->refs;
		if (!is_twag(s) || !s->once)
			continue;
		while (p && *p) {
			size_t len = strcspn(p, " ");
			const struct bench_scenario *r = find_scenario(p, len);
			struct entry *es = plan_find(s), *er = r ? plan_find(r) : NULL;
			p += len;
			p += strspn(p, " ");
			if (!r || (!es && !er))
				continue;
			if (r->cost_only || !r->once) {
				if (er)
					er->res.flags |= BENCH_F_NO_CHECK;
				continue;
			}
			done++;
			if (!cross_check(s, r)) {
				failed++;
				if (er)
					er->res.flags |= BENCH_F_MISMATCH;
				if (es)
					es->res.flags |= BENCH_F_MISMATCH;
			}
		}
	}
	if (!g_opt.quiet)
		fprintf(stderr, "twag-bench: cross-checks: %d pairs x %u random inputs, %d failed\n",
			done, g_opt.checks, failed);
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

/* ours / ref in ops per CPU-second; 0 if either is missing. */
static double ratio(const struct entry *ours, const struct entry *ref)
{
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

/* The ratio cell: for a twag row, one ratio per reference; for a reference
 * row, the ratio of the first twag row that names it. */
static void ratio_cell(char *buf, size_t len, const struct entry *e, char sep)
{
	size_t used = 0;

	buf[0] = 0;
	if (is_twag(e->sc)) {
		const char *p = e->sc->refs;
		while (p && *p) {
			size_t n = strcspn(p, " ");
			const struct bench_scenario *r = find_scenario(p, n);
			const struct entry *er = r ? plan_find(r) : NULL;
			p += n;
			p += strspn(p, " ");
			if (!er || !er->ran)
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
		if (!is_twag(o->sc) || !o->sc->refs)
			continue;
		const char *p = o->sc->refs;
		while (*p) {
			size_t n = strcspn(p, " ");
			if (n == strlen(e->sc->name) && memcmp(p, e->sc->name, n) == 0) {
				char rb[32];
				fmt_ratio(rb, sizeof(rb), ratio(o, e));
				if (e->res.flags & BENCH_F_MISMATCH)
					snprintf(buf, len, "MISMATCH");
				else
					snprintf(buf, len, "%s%s", rb, e->sc->cost_only ? " (cost)" : "");
				return;
			}
			p += n;
			p += strspn(p, " ");
		}
	}
	snprintf(buf, len, "-");
}

static void note_cell(char *buf, size_t len, const struct entry *e)
{
	const struct bench_result *r = &e->res;

	snprintf(buf, len, "%s%s%s%s%s%s", e->sc->what ? e->sc->what : "",
		 r->flags & BENCH_F_MISMATCH ? " **OUTPUT MISMATCH: not comparable**" : "",
		 r->flags & BENCH_F_NO_CHECK ? " (cost reference, not the same function)" : "",
		 r->flags & BENCH_F_INTERRUPTED ? " (interrupted)" : "",
		 r->flags & BENCH_F_SETUP_FAILED ? " **SETUP FAILED**" : "",
		 r->errors ? " **RUN ERRORS**" : "");
}

/* The machine line and the run line; pre starts each line ("# " in CSV). */
static void print_settings(FILE *f, const struct machine *m, const char *pre, const char *gap)
{
	char mode[160];

	if (g_opt.requests)
		snprintf(mode, sizeof(mode), "--requests %llu per scenario",
			 (unsigned long long)g_opt.requests);
	else
		snprintf(mode, sizeof(mode), "--time %.3g s per scenario", g_opt.time_s);
	fprintf(f, "%smachine: %s, %.2f GHz measured (dependent adds), %ld cores, "
		"compiler %s, commit %s, twag paths: %s (%s)\n",
		pre, m->cpu, m->ghz, m->cores, __VERSION__, m->commit, m->level, m->features);
	fprintf(f, "%s%srun: %s, warm-up %.3g s excluded, %s, %u instance%s, heap %s\n", gap,
		pre, mode, g_opt.warmup_s,
		g_opt.concurrent ? "scenarios concurrently" : "scenarios one after another",
		g_opt.instances, g_opt.instances == 1 ? "" : "s",
		bench_heap_counting() ? "counted (malloc hook)" : "not counted (sanitizer build)");
}

static void print_markdown(FILE *f, const struct machine *m)
{
	print_settings(f, m, "", "\n");
	fprintf(f, "\n| scenario | impl | thr | ops | ops/s | ops/s/thr | ops/CPU-s | ns/op "
		"| median | p99 | max | heap B/op | batch | twag / ref | note |\n");
	fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char ops[24], ps[24], pt[24], pc[24], mean[24], med[24], p99[24], mx[24];
		char heap[32], rc[256], note[320];
		if (!e->ran)
			continue;
		bench_fmt_si(ops, sizeof(ops), (double)e->res.ops);
		bench_fmt_si(ps, sizeof(ps), s->ops_per_s);
		bench_fmt_si(pt, sizeof(pt), s->ops_per_s_thread);
		bench_fmt_si(pc, sizeof(pc), s->ops_per_cpu_s);
		fmt_dur(mean, sizeof(mean), s->ns_per_op);
		fmt_dur(med, sizeof(med), s->median_ns);
		fmt_dur(p99, sizeof(p99), s->p99_ns);
		fmt_dur(mx, sizeof(mx), s->max_ns);
		if (bench_heap_counting())
			snprintf(heap, sizeof(heap), "%.0f", s->heap_bytes_per_op);
		else
			snprintf(heap, sizeof(heap), "n/a");
		ratio_cell(rc, sizeof(rc), e, ';');
		note_cell(note, sizeof(note), e);
		fprintf(f, "| %s | %s | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s | %u | %s | %s |\n",
			e->sc->name, e->sc->impl, e->res.threads, ops, ps, pt, pc, mean, med, p99,
			mx, heap, e->res.batch, rc, note);
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
	fprintf(f, "},\n  \"settings\": {\"time_s\": %g, \"requests\": %llu, \"warmup_s\": %g, "
		"\"instances\": %u, \"concurrent\": %s, \"heap_counted\": %s},\n  \"results\": [",
		g_opt.requests ? 0 : g_opt.time_s, (unsigned long long)g_opt.requests,
		g_opt.warmup_s, g_opt.instances, g_opt.concurrent ? "true" : "false",
		bench_heap_counting() ? "true" : "false");
	bool first = true;
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char rc[256], note[320];
		if (!e->ran)
			continue;
		ratio_cell(rc, sizeof(rc), e, ';');
		note_cell(note, sizeof(note), e);
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		first = false;
		json_str(f, e->sc->name);
		fprintf(f, ", \"impl\": ");
		json_str(f, e->sc->impl);
		fprintf(f, ", \"threads\": %u, \"instances\": %u, \"ops\": %llu, \"wall_s\": %.6f, "
			"\"cpu_s\": %.6f, \"ops_per_s\": %.1f, \"ops_per_s_thread\": %.1f, "
			"\"ops_per_cpu_s\": %.1f, \"ns_per_op\": %.3f, \"median_ns\": %.3f, "
			"\"p99_ns\": %.3f, \"max_ns\": %.3f, \"heap_bytes_per_op\": %.3f, "
			"\"heap_allocs_per_op\": %.3f, \"batch\": %u, \"errors\": %u, "
			"\"interrupted\": %s, \"mismatch\": %s, \"ratios\": ",
			e->res.threads, e->res.instances, (unsigned long long)e->res.ops,
			(double)e->res.wall_ns / 1e9, s->cpu_s, s->ops_per_s, s->ops_per_s_thread,
			s->ops_per_cpu_s, s->ns_per_op, s->median_ns, s->p99_ns, s->max_ns,
			s->heap_bytes_per_op, s->heap_allocs_per_op, e->res.batch, e->res.errors,
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
	fprintf(f, "scenario,impl,threads,instances,ops,wall_s,cpu_s,ops_per_s,ops_per_s_thread,"
		"ops_per_cpu_s,ns_per_op,median_ns,p99_ns,max_ns,heap_bytes_per_op,"
		"heap_allocs_per_op,batch,errors,ratios,note\n");
	for (size_t i = 0; i < g_nplan; i++) {
		const struct entry *e = g_plan[i];
		const struct bench_summary *s = &e->sum;
		char rc[256], note[320];
		if (!e->ran)
			continue;
		ratio_cell(rc, sizeof(rc), e, ';');
		note_cell(note, sizeof(note), e);
		fprintf(f, "%s,%s,%u,%u,%llu,%.6f,%.6f,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
			"%u,%u,", e->sc->name, e->sc->impl, e->res.threads, e->res.instances,
			(unsigned long long)e->res.ops, (double)e->res.wall_ns / 1e9, s->cpu_s,
			s->ops_per_s, s->ops_per_s_thread, s->ops_per_cpu_s, s->ns_per_op,
			s->median_ns, s->p99_ns, s->max_ns, s->heap_bytes_per_op,
			s->heap_allocs_per_op, e->res.batch, e->res.errors);
		csv_str(f, rc);
		fputc(',', f);
		csv_str(f, note);
		fputc('\n', f);
	}
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
		bench_result_init(&g_plan[k]->res, g_plan[k]->sc->name);
		g_plan[k]->res.flags = 0;
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
		"  --time S        measure each scenario for S seconds (default 1)\n"
		"  --requests N    instead, exactly N operations per scenario\n"
		"  --warmup S      unmeasured warm-up per scenario (default 0.2)\n"
		"  --concurrent    run the selected scenarios at the same time\n"
		"  --instances N   fork N processes running the same plan; sum them\n"
		"  --no-refs       do not add references to twag scenarios\n"
		"  --checks N      random inputs per cross-check (default 64)\n"
		"  --json | --csv  output format (default: a Markdown table)\n"
		"  --quiet         no progress on stderr\n"
		"  --list          list the scenarios\n");
}

static void list_scenarios(void)
{
	for (size_t i = 0; i < g_nreg; i++)
		printf("%-18s %-12s %s%s%s%s\n", g_reg[i]->name, g_reg[i]->impl,
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

	int errors = 0;
	for (size_t i = 0; i < g_nplan; i++)
		if (g_plan[i]->res.errors || (g_plan[i]->res.flags & BENCH_F_SETUP_FAILED))
			errors++;
	if (failed)
		fprintf(stderr, "twag-bench: %d cross-check(s) FAILED: rows marked MISMATCH "
			"compare different answers\n", failed);
	return failed || errors ? 1 : 0;
}
