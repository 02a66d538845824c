/*
 * twag-load — command line, the run, the report. See docs/twag-load.md.
 *
 * Output: "name=value" lines (or one JSON object with --json); exit 0 when
 * every attach succeeded, 1 when any failed, 2 for a bad command line (one
 * line on stderr naming the option).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "load.h"
#include "twag/bytes.h"
#include "twag/version.h"

static const char usage[] =
	"usage: twag-load --server HOST:PORT --secret S --method aka-prime|aka|sim\n"
	"                 --subscribers FILE.csv (--time S | --attaches N)\n"
	"                 [--concurrency C] [--threads T] [--server-pid PID]\n"
	"                 [--usim-state FILE] [--realm R] [--network-name NAME]\n"
	"                 [--drain S] [--no-udp-gso] [--json]\n"
	"       twag-load --gen N --gen-csv OUT.csv [--gen-algo milenage|comp128v1|comp128v2|comp128v3]\n"
	"                 [--imsi-base DIGITS]\n"
	"       twag-load --help | --version\n"
	"\n"
	"Plays phones (EAP-AKA' RFC 9048, EAP-AKA RFC 4187, EAP-SIM RFC 4186) over RADIUS\n"
	"(RFC 2865/3579) against a server. The CSV is the one `twag subscriber import`\n"
	"reads, so the same file provisions the server:\n"
	"    twag subscriber import --db STORE.db --csv FILE.csv\n"
	"Reports attaches/s, latency of whole attaches, failures by cause, and with\n"
	"--server-pid the server's CPU time per attach (/proc/PID/stat). Requests of\n"
	"one length leave as one UDP GSO send (--no-udp-gso: one send each).\n";

/* SIGINT/SIGTERM: no new attaches; the run drains, reports and saves the
 * USIM state (a lock-free atomic store is async-signal-safe). */
static _Atomic bool *stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_flag)
		atomic_store(stop_flag, true);
}

static int bad(const char *opt, const char *why)
{
	fprintf(stderr, "twag-load: %s: %s\n", opt, why);
	return LOAD_EXIT_USAGE;
}

static bool parse_u64(const char *s, uint64_t *v, uint64_t max)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return false;
	*v = x;
	return true;
}

/* "127.0.0.1:1812", "[::1]:1812" */
static bool parse_server(const char *s, struct load_cfg *cfg)
{
	char host[64];
	const char *colon;
	uint64_t port;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = 0;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return false;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = 0;
	}
	if (!parse_u64(colon + 1, &port, 65535) || port == 0)
		return false;
	memset(&cfg->server, 0, sizeof(cfg->server));
	struct sockaddr_in *a4 = (struct sockaddr_in *)&cfg->server;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&cfg->server;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		cfg->server_len = sizeof(*a4);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		cfg->server_len = sizeof(*a6);
	} else {
		return false;
	}
	return true;
}

/* utime + stime of a process in clock ticks (proc(5): fields 14 and 15,
 * counted after the parenthesised comm, which may contain spaces). */
static int proc_cpu_ticks(long pid, uint64_t *ticks)
{
	char path[64], buf[1024];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	unsigned long long ut, st;
	/* after comm: state(3) ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime(14) stime(15) */
	if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	*ticks = ut + st;
	return 0;
}

static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static const char *method_name(enum load_method m)
{
	return m == LOAD_AKA_PRIME ? "aka-prime" : m == LOAD_AKA ? "aka" : "sim";
}

struct report {
	struct load_counters c;
	uint64_t failed, wall_ns, self_cpu_ns;
	bool have_server;
	double server_cpu_s;
};

static void print_report(const struct load_cfg *cfg, const struct report *r, bool json)
{
	const struct load_counters *c = &r->c;
	double wall = (double)r->wall_ns / 1e9;
	double rate = wall > 0 ? (double)c->ok / wall : 0;
	double p50 = (double)load_hist_percentile(&c->latency, 5000) / 1e3;
	double p99 = (double)load_hist_percentile(&c->latency, 9900) / 1e3;
	double mx = (double)c->latency.max / 1e3;
	double mean = c->latency.count ? (double)c->latency.sum / (double)c->latency.count / 1e3 : 0;
	uint64_t done = c->ok + r->failed;
	double self_us = done ? (double)r->self_cpu_ns / 1e3 / (double)done : 0;
	double srv_us = c->ok ? r->server_cpu_s * 1e6 / (double)c->ok : 0;

	if (json) {
		printf("{\"method\":\"%s\",\"threads\":%u,\"concurrency\":%u,\"subscribers\":%zu,"
		       "\"attaches\":%llu,\"ok\":%llu,\"failed\":%llu,\"unfinished\":%llu,"
		       "\"elapsed_s\":%.3f,\"attaches_per_s\":%.1f,",
		       method_name(cfg->method), cfg->threads, cfg->concurrency, cfg->n_phones,
		       (unsigned long long)done, (unsigned long long)c->ok,
		       (unsigned long long)r->failed, (unsigned long long)c->unfinished, wall,
		       rate);
		printf("\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"mean\":%.1f},",
		       p50, p99, mx, mean);
		printf("\"failures\":{");
		for (int i = 0; i < CAUSE_COUNT; i++)
			printf("%s\"%s\":%llu", i ? "," : "", load_cause_names[i],
			       (unsigned long long)c->fail[i]);
		printf("},\"sync_events\":%llu,\"sent\":%llu,\"retransmits\":%llu,"
		       "\"received\":%llu,\"stray_replies\":%llu,\"malformed_replies\":%llu,"
		       "\"client_cpu_us_per_attach\":%.2f",
		       (unsigned long long)c->sync_events, (unsigned long long)c->sent,
		       (unsigned long long)c->retransmits, (unsigned long long)c->received,
		       (unsigned long long)c->stray, (unsigned long long)c->malformed, self_us);
		if (r->have_server)
			printf(",\"server_cpu_s\":%.3f,\"server_cpu_us_per_attach\":%.2f",
			       r->server_cpu_s, srv_us);
		printf("}\n");
		return;
	}
	printf("method=%s\nthreads=%u\nconcurrency=%u\nsubscribers=%zu\n", method_name(cfg->method),
	       cfg->threads, cfg->concurrency, cfg->n_phones);
	printf("attaches=%llu\nok=%llu\nfailed=%llu\nunfinished=%llu\n", (unsigned long long)done,
	       (unsigned long long)c->ok, (unsigned long long)r->failed,
	       (unsigned long long)c->unfinished);
	for (int i = 0; i < CAUSE_COUNT; i++)
		printf("fail_%s=%llu\n", load_cause_names[i], (unsigned long long)c->fail[i]);
	printf("sync_events=%llu\n", (unsigned long long)c->sync_events);
	printf("elapsed_s=%.3f\nattaches_per_s=%.1f\n", wall, rate);
	printf("latency_p50_us=%.1f\nlatency_p99_us=%.1f\nlatency_max_us=%.1f\nlatency_mean_us=%.1f\n",
	       p50, p99, mx, mean);
	printf("sent=%llu\nretransmits=%llu\nreceived=%llu\nstray_replies=%llu\nmalformed_replies=%llu\n",
	       (unsigned long long)c->sent, (unsigned long long)c->retransmits,
	       (unsigned long long)c->received, (unsigned long long)c->stray,
	       (unsigned long long)c->malformed);
	printf("client_cpu_us_per_attach=%.2f\n", self_us);
	if (r->have_server)
		printf("server_cpu_s=%.3f\nserver_cpu_us_per_attach=%.2f\n", r->server_cpu_s, srv_us);
}

int main(int argc, char **argv)
{
	static struct load_cfg cfg;
	const char *subs = NULL, *gen_csv = NULL, *gen_algo = NULL, *usim_state = NULL;
	const char *net_name = NULL;
	uint64_t gen_n = 0, imsi_base = 1019000000000ull, v;
	long server_pid = 0;
	bool json = false, have_secret = false, have_server = false;
	struct load_worker *w = NULL;
	pthread_t *tids = NULL;
	struct load_phone **share = NULL;
	int rc = LOAD_EXIT_FAIL;

	cfg.threads = 1;
	cfg.concurrency = 64;
	cfg.drain_ns = 5ull * 1000 * 1000 * 1000;
	strcpy(cfg.realm, "wlan.mnc001.mcc001.3gppnetwork.org");
	cfg.realm_len = strlen(cfg.realm);
	cfg.udp_gso = true;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *a = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(o, "--version") == 0) {
			printf("twag-load %s\n", tw_version());
			return 0;
		}
		if (strcmp(o, "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(o, "--no-udp-gso") == 0) {
			cfg.udp_gso = false;
			continue;
		}
		if (a == NULL)
			return bad(o, "missing value (or unknown option; see --help)");
		i++;
		if (strcmp(o, "--server") == 0) {
			if (!parse_server(a, &cfg))
				return bad(o, "want HOST:PORT with a numeric address");
			have_server = true;
		} else if (strcmp(o, "--secret") == 0) {
			size_t l = strlen(a);
			if (l == 0 || l > LOAD_SECRET_MAX)
				return bad(o, "1..128 characters");
			if (tw_radius_secret_init(&cfg.key, (const uint8_t *)a, l) != TW_OK)
				return bad(o, "1..128 characters");
			have_secret = true;
		} else if (strcmp(o, "--method") == 0) {
			if (strcmp(a, "aka-prime") == 0 || strcmp(a, "aka'") == 0)
				cfg.method = LOAD_AKA_PRIME;
			else if (strcmp(a, "aka") == 0)
				cfg.method = LOAD_AKA;
			else if (strcmp(a, "sim") == 0)
				cfg.method = LOAD_SIM;
			else
				return bad(o, "aka-prime, aka or sim");
		} else if (strcmp(o, "--subscribers") == 0) {
			subs = a;
		} else if (strcmp(o, "--gen") == 0) {
			if (!parse_u64(a, &gen_n, 100000000) || gen_n == 0)
				return bad(o, "a count 1..100000000");
		} else if (strcmp(o, "--gen-csv") == 0) {
			gen_csv = a;
		} else if (strcmp(o, "--gen-algo") == 0) {
			if (strcmp(a, "milenage") && strcmp(a, "comp128v1") &&
			    strcmp(a, "comp128v2") && strcmp(a, "comp128v3"))
				return bad(o, "milenage, comp128v1, comp128v2 or comp128v3");
			gen_algo = a;
		} else if (strcmp(o, "--imsi-base") == 0) {
			if (strlen(a) != 15 || !parse_u64(a, &imsi_base, 999999999999999ull))
				return bad(o, "15 digits");
		} else if (strcmp(o, "--concurrency") == 0) {
			if (!parse_u64(a, &v, LOAD_MAX_CONCURRENCY) || v == 0)
				return bad(o, "1..65536");
			cfg.concurrency = (unsigned)v;
		} else if (strcmp(o, "--threads") == 0) {
			if (!parse_u64(a, &v, LOAD_MAX_THREADS) || v == 0)
				return bad(o, "1..64");
			cfg.threads = (unsigned)v;
		} else if (strcmp(o, "--time") == 0) {
			char *end;
			cfg.time_s = strtod(a, &end);
			if (*end || !(cfg.time_s > 0 && cfg.time_s < 1e6))
				return bad(o, "seconds > 0");
		} else if (strcmp(o, "--attaches") == 0) {
			if (!parse_u64(a, &cfg.attaches, UINT64_MAX / 2) || cfg.attaches == 0)
				return bad(o, "a count > 0");
		} else if (strcmp(o, "--drain") == 0) {
			char *end;
			double d = strtod(a, &end);
			if (*end || !(d >= 0 && d < 1e5))
				return bad(o, "seconds >= 0");
			cfg.drain_ns = (uint64_t)(d * 1e9);
		} else if (strcmp(o, "--server-pid") == 0) {
			if (!parse_u64(a, &v, 1u << 30) || v == 0)
				return bad(o, "a process id");
			server_pid = (long)v;
		} else if (strcmp(o, "--usim-state") == 0) {
			usim_state = a;
		} else if (strcmp(o, "--realm") == 0) {
			if (strlen(a) > LOAD_REALM_MAX)
				return bad(o, "at most 200 characters");
			strcpy(cfg.realm, a);
			cfg.realm_len = strlen(a);
		} else if (strcmp(o, "--network-name") == 0) {
			if (strlen(a) == 0 || strlen(a) > 255)
				return bad(o, "1..255 characters");
			net_name = a;
		} else {
			return bad(o, "unknown option (see --help)");
		}
	}

	if (gen_n || gen_csv) {
		if (!gen_n || !gen_csv)
			return bad("--gen", "needs --gen N and --gen-csv FILE");
		if (imsi_base + gen_n - 1 > 999999999999999ull)
			return bad("--imsi-base", "the IMSIs would pass 15 digits");
		if (!gen_algo)
			gen_algo = cfg.method == LOAD_SIM ? "comp128v1" : "milenage";
		if (load_gen_csv(gen_csv, (size_t)gen_n, gen_algo, imsi_base) != 0)
			return LOAD_EXIT_FAIL;
		printf("generated=%llu\ncsv=%s\nalgo=%s\n", (unsigned long long)gen_n, gen_csv,
		       gen_algo);
		return 0;
	}
	if (!have_server)
		return bad("--server", "required");
	if (!have_secret)
		return bad("--secret", "required");
	if (!cfg.method)
		return bad("--method", "required");
	if (!subs)
		return bad("--subscribers", "required (or --gen N --gen-csv FILE)");
	if ((cfg.time_s > 0) == (cfg.attaches > 0))
		return bad("--time", "give exactly one of --time S and --attaches N");
	if (net_name) {
		cfg.network_name = (const uint8_t *)net_name;
		cfg.network_name_len = strlen(net_name);
	}

	if (load_read_csv(subs, &cfg.phones, &cfg.n_phones) != 0)
		return LOAD_EXIT_FAIL;
	if (usim_state && load_usim_state_read(usim_state, cfg.phones, cfg.n_phones) != 0)
		goto out;
	if (cfg.threads > cfg.n_phones)
		cfg.threads = (unsigned)cfg.n_phones;
	/* one attach per phone at a time (see load.h) */
	if (cfg.concurrency > cfg.n_phones) {
		fprintf(stderr, "twag-load: note: --concurrency %u capped at %zu subscribers\n",
			cfg.concurrency, cfg.n_phones);
		cfg.concurrency = (unsigned)cfg.n_phones;
	}
	if (cfg.concurrency < cfg.threads)
		cfg.threads = cfg.concurrency;

	w = calloc(cfg.threads, sizeof(*w));
	tids = calloc(cfg.threads, sizeof(*tids));
	share = calloc(cfg.n_phones, sizeof(*share));
	if (!w || !tids || !share) {
		fprintf(stderr, "twag-load: out of memory\n");
		goto out;
	}
	/* thread t plays phones t, t+T, t+2T ... and C/T of the concurrency */
	size_t pos = 0;
	for (unsigned t = 0; t < cfg.threads; t++) {
		w[t].cfg = &cfg;
		w[t].index = t;
		w[t].phones = share + pos;
		for (size_t i = t; i < cfg.n_phones; i += cfg.threads)
			share[pos++] = &cfg.phones[i];
		w[t].n_phones = (size_t)(share + pos - w[t].phones);
		w[t].concurrency = cfg.concurrency / cfg.threads +
				   (t < cfg.concurrency % cfg.threads ? 1 : 0);
		if (w[t].concurrency > w[t].n_phones)
			w[t].concurrency = (unsigned)w[t].n_phones;
	}

	struct report r;
	uint64_t srv0 = 0, srv1 = 0, self0;
	memset(&r, 0, sizeof(r));
	if (server_pid && proc_cpu_ticks(server_pid, &srv0) != 0) {
		fprintf(stderr, "twag-load: --server-pid: cannot read /proc/%ld/stat\n", server_pid);
		goto out;
	}
	stop_flag = &cfg.stop;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	self0 = self_cpu_ns();
	cfg.t_start = load_now_ns();
	cfg.t_end = cfg.t_start + (uint64_t)(cfg.time_s * 1e9);
	unsigned started = 0;
	for (unsigned t = 0; t < cfg.threads; t++) {
		if (pthread_create(&tids[t], NULL, load_worker_run, &w[t]) != 0) {
			fprintf(stderr, "twag-load: cannot start thread %u\n", t);
			atomic_store(&cfg.stop, true);
			break;
		}
		started++;
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	r.wall_ns = load_now_ns() - cfg.t_start;
	r.self_cpu_ns = self_cpu_ns() - self0;
	if (server_pid && proc_cpu_ticks(server_pid, &srv1) == 0) {
		r.have_server = true;
		r.server_cpu_s = (double)(srv1 - srv0) / (double)sysconf(_SC_CLK_TCK);
	} else if (server_pid) {
		fprintf(stderr, "twag-load: note: server %ld gone: no server CPU time\n", server_pid);
	}
	bool setup_failed = started < cfg.threads;
	for (unsigned t = 0; t < started; t++) {
		const struct load_counters *c = &w[t].c;
		if (w[t].err)
			setup_failed = true;
		r.c.ok += c->ok;
		for (int i = 0; i < CAUSE_COUNT; i++)
			r.c.fail[i] += c->fail[i];
		r.c.sync_events += c->sync_events;
		r.c.sent += c->sent;
		r.c.retransmits += c->retransmits;
		r.c.received += c->received;
		r.c.stray += c->stray;
		r.c.malformed += c->malformed;
		r.c.unfinished += c->unfinished;
		load_hist_merge(&r.c.latency, &c->latency);
	}
	for (int i = 0; i < CAUSE_COUNT; i++)
		r.failed += r.c.fail[i];
	print_report(&cfg, &r, json);
	fflush(stdout);
	rc = (r.failed == 0 && r.c.unfinished == 0 && r.c.ok > 0 && !setup_failed)
		     ? 0 : LOAD_EXIT_FAIL;
	if (usim_state && load_usim_state_write(usim_state, cfg.phones, cfg.n_phones) != 0)
		rc = LOAD_EXIT_FAIL;
out:
	if (cfg.phones) {
		tw_wipe(cfg.phones, cfg.n_phones * sizeof(*cfg.phones));
		free(cfg.phones);
	}
	tw_radius_secret_wipe(&cfg.key);
	free(w);
	free(tids);
	free(share);
	return rc;
}
