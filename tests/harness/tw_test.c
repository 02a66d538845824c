/* twag test harness: vector-file reader, assertion counting, test PRNG. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw_test.h"
#include "twag/cpu.h"
#include "twag/hex.h"

#ifndef TW_VEC_DIR
#define TW_VEC_DIR "tests/vectors"
#endif

static unsigned long n_pass, n_fail;
static const struct tv_case *cur_case;
static const char *prog = "test";

static void report_position(void)
{
	if (cur_case != NULL)
		fprintf(stderr, "  vector %s/%s:%d (%s)\n", TW_VEC_DIR,
			cur_case->path, cur_case->line,
			cur_case->source ? cur_case->source : "no source");
}

bool tw_check(bool ok, const char *file, int line, const char *expr)
{
	if (ok) {
		n_pass++;
		return true;
	}
	n_fail++;
	fprintf(stderr, "FAIL %s:%d: %s [cpu %s]\n", file, line, expr,
		tw_cpu_level_name());
	report_position();
	return false;
}

void tw_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "note: %s: ", prog);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

static const struct tv_kv *find(const struct tv_case *c, const char *key)
{
	for (int i = 0; i < c->nkv; i++)
		if (strcmp(c->kv[i].key, key) == 0)
			return &c->kv[i];
	return NULL;
}

bool tv_has(const struct tv_case *c, const char *key)
{
	return find(c, key) != NULL;
}

const char *tv_str(const struct tv_case *c, const char *key)
{
	const struct tv_kv *kv = find(c, key);

	if (kv == NULL) {
		char msg[160];

		snprintf(msg, sizeof(msg), "vector field '%s' present", key);
		tw_check(false, c->path, c->line, msg);
		return NULL;
	}
	return kv->val;
}

size_t tv_hex(const struct tv_case *c, const char *key, uint8_t *out,
	      size_t max)
{
	const struct tv_kv *kv = find(c, key);
	size_t len = 0;
	char msg[160];

	if (kv == NULL) {
		snprintf(msg, sizeof(msg), "vector field '%s' present", key);
		tw_check(false, c->path, c->line, msg);
		return 0;
	}
	if (tw_hex_decode(out, max, &len, kv->val, strlen(kv->val)) != 0) {
		snprintf(msg, sizeof(msg), "vector field '%s' is hex of at most %zu bytes",
			 key, max);
		tw_check(false, c->path, kv->line, msg);
		return 0;
	}
	return len;
}

size_t tv_bytes(const struct tv_case *c, const char *key, uint8_t *out,
		size_t max)
{
	const struct tv_kv *kv = find(c, key);
	char msg[160];
	size_t n;

	if (kv == NULL || !kv->quoted)
		return tv_hex(c, key, out, max);
	n = strlen(kv->val);
	snprintf(msg, sizeof(msg), "vector field '%s' is at most %zu bytes", key, max);
	if (!tw_check(n <= max, c->path, kv->line, msg))
		return 0;
	memcpy(out, kv->val, n);
	return n;
}

long tv_int(const struct tv_case *c, const char *key, long def)
{
	const struct tv_kv *kv = find(c, key);

	return kv ? strtol(kv->val, NULL, 10) : def;
}

bool tv_expect(const struct tv_case *c, const char *key, const uint8_t *got,
	       size_t len, const char *file, int line)
{
	uint8_t exp[1024];
	size_t n = tv_hex(c, key, exp, sizeof(exp));
	char msg[200];

	if (n == 0 && len != 0)
		return false;
	if (n == len && memcmp(exp, got, len) == 0)
		return tw_check(true, file, line, key);
	char hex[2 * 1024 + 1];

	tw_hex_encode(hex, got, len < 1024 ? len : 1024);
	snprintf(msg, sizeof(msg), "%s matches vector (got %.120s)", key, hex);
	return tw_check(false, file, line, msg);
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
			 e[-1] == '\n'))
		*--e = '\0';
	return s;
}

int tv_run_file(const char *name, tv_fn fn)
{
	char path[512];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, ncases = 0;
	/* Storage for one case: the strings live until the case has run. */
	static char store[256 * 1024];
	size_t used = 0;
	struct tv_case c;
	const char *pending_source = NULL;

	snprintf(path, sizeof(path), "%s/%s", TW_VEC_DIR, name);
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		tw_check(false, __FILE__, __LINE__, "vector file readable");
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.path = name;
	for (;;) {
		ssize_t r = getline(&line, &cap, f);
		lineno++;
		char *t = r < 0 ? NULL : trim(line);

		if (t == NULL || *t == '\0') {
			if (c.nkv > 0) {
				if (c.source == NULL) {
					cur_case = &c;
					tw_check(false, __FILE__, __LINE__,
						 "case has a '# source:' line");
				} else {
					cur_case = &c;
					fn(&c);
				}
				cur_case = NULL;
				ncases++;
			}
			memset(&c, 0, sizeof(c));
			c.path = name;
			used = 0;
			pending_source = NULL;
			if (t == NULL)
				break;
			continue;
		}
		size_t need = strlen(t) + 1;
		if (used + need > sizeof(store)) {
			tw_check(false, __FILE__, __LINE__, "vector case fits the reader");
			break;
		}
		char *s = memcpy(store + used, t, need);
		used += need;
		if (c.nkv == 0 && c.line == 0)
			c.line = lineno;
		if (s[0] == '#') {
			if (strncmp(s, "# source:", 9) == 0) {
				pending_source = trim(s + 9);
				c.source = pending_source;
			}
			continue;
		}
		char *eq = strchr(s, '=');
		if (eq == NULL || c.nkv == TV_MAX_KV) {
			fprintf(stderr, "%s:%d: malformed line\n", path, lineno);
			tw_check(false, __FILE__, __LINE__, "vector line is key = value");
			continue;
		}
		*eq = '\0';
		struct tv_kv *kv = &c.kv[c.nkv++];
		kv->key = trim(s);
		kv->line = lineno;
		char *v = trim(eq + 1);
		size_t vl = strlen(v);
		if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
			v[vl - 1] = '\0';
			v++;
			kv->quoted = true;
		}
		kv->val = v;
	}
	free(line);
	fclose(f);
	if (ncases == 0)
		tw_check(false, __FILE__, __LINE__, "vector file has cases");
	return ncases;
}

static uint64_t rng_state;

static void rng_seed(void)
{
	const char *e = getenv("TWAG_TEST_SEED");
	uint64_t s = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();

	if (s == 0)
		s = 0x9e3779b97f4a7c15ull;
	rng_state = s;
	printf("note: %s: TWAG_TEST_SEED=%llu\n", prog, (unsigned long long)s);
}

uint32_t tw_test_random_u32(void)
{
	/* splitmix64: a test input generator, not a cryptographic RNG. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

void tw_test_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)tw_test_random_u32();
}

size_t tw_test_hex(uint8_t *out, size_t max, const char *hex)
{
	size_t n = 0;

	if (tw_hex_decode(out, max, &n, hex, strlen(hex)) != 0) {
		fprintf(stderr, "bad hex literal in test: %s\n", hex);
		abort();
	}
	return n;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *slash = strrchr(argv[0], '/');

	prog = slash ? slash + 1 : argv[0];
	rng_seed();
	test_main();
	printf("%s [cpu %s]: %lu passed, %lu failed\n", prog,
	       tw_cpu_level_name(), n_pass, n_fail);
	return n_fail == 0 && n_pass > 0 ? 0 : 1;
}

void tw_test_md_padded(uint8_t *msg, size_t len, int big_endian, uint8_t *spread,
		       const uint8_t *seg[4], size_t nblk[4])
{
	size_t padded = (len + 9 + 63) / 64 * 64, blocks = padded / 64, at = 0, to = 0;
	uint64_t bits = (uint64_t)len * 8;
	size_t from[4];

	tw_test_random(msg, len);
	msg[len] = 0x80;
	memset(msg + len + 1, 0, padded - len - 1);
	for (int k = 0; k < 8; k++)
		msg[padded - 8 + k] = (uint8_t)(bits >> (8 * (big_endian ? 7 - k : k)));
	for (int g = 0; g < 4; g++) {
		size_t take = g == 3 ? blocks - at : tw_test_random_u32() % (blocks - at + 1);

		from[g] = at;
		nblk[g] = take;
		at += take;
	}
	/* the segments apart, last first, each followed by a block of
	 * other octets: a lane that reads on past a segment's end, or takes
	 * the next segment to follow in memory, gets a wrong digest */
	for (int g = 3; g >= 0; g--) {
		memcpy(spread + to, msg + 64 * from[g], 64 * nblk[g]);
		seg[g] = spread + to;
		to += 64 * nblk[g];
		memset(spread + to, 0xa5 ^ g, 64);
		to += 64;
	}
}

__attribute__((noinline)) int tw_test_stack_copies(const uint8_t *pat, size_t len)
{
	uint8_t raw[TW_TEST_STACK_SCAN], swapped[256];
	volatile uint8_t *buf = raw;
	int hits = 0;

	if (len == 0 || len > sizeof(swapped))
		return 0;
	/* the compiler is not to know what raw holds (nor to warn) */
	__asm__ volatile("" : "+r"(buf) : : "memory");
	for (size_t i = 0; i < len; i++)
		swapped[i] = (i | 3) < len ? pat[(i & ~(size_t)3) + 3 - (i & 3)] : pat[i];
	for (size_t i = 0; i + len <= TW_TEST_STACK_SCAN; i++) {
		bool a = true, b = true;

		for (size_t j = 0; j < len && (a || b); j++) {
			a = a && buf[i + j] == pat[j];
			b = b && buf[i + j] == swapped[j];
		}
		hits += a || b;
	}
	return hits;
}

#if defined(__x86_64__)
__attribute__((noinline, target("avx512f"))) static void vec_regs_512(uint8_t regs[32][64])
{
	__asm__ volatile(
#define Z(i) "vmovdqu64 %%zmm" #i ", " #i "*64(%0)\n\t"
		Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9) Z(10) Z(11) Z(12) Z(13) Z(14) Z(15)
		Z(16) Z(17) Z(18) Z(19) Z(20) Z(21) Z(22) Z(23) Z(24) Z(25) Z(26) Z(27) Z(28) Z(29)
		Z(30) Z(31)
#undef Z
		: : "r"(regs) : "memory");
}

__attribute__((noinline, target("avx"))) static void vec_regs_256(uint8_t regs[32][64])
{
	__asm__ volatile(
#define Y(i) "vmovdqu %%ymm" #i ", " #i "*64(%0)\n\t"
		Y(0) Y(1) Y(2) Y(3) Y(4) Y(5) Y(6) Y(7) Y(8) Y(9) Y(10) Y(11) Y(12) Y(13) Y(14) Y(15)
#undef Y
		: : "r"(regs) : "memory");
}
#endif

__attribute__((noinline)) int tw_test_vec_regs(uint8_t regs[32][64])
{
	/* copied first: libc's memset may itself use vector registers. The
	 * hardware's features decide, not TWAG_CPU's choice (a forced lower
	 * level still leaves what libc's string functions put in the upper
	 * registers). */
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		vec_regs_512(regs);
		return 32;
	}
	if (__builtin_cpu_supports("avx")) {
		vec_regs_256(regs);
		for (int r = 0; r < 16; r++)
			memset(regs[r] + 32, 0, 32);
		memset(regs[16], 0, 16 * 64);
		return 16;
	}
#endif
	memset(regs, 0, 32 * 64);
	return 0;
}

int tw_test_regs_words(const uint8_t regs[32][64], const uint32_t *w, size_t n)
{
	int hits = 0;

	for (int r = 0; r < 32; r++)
		for (int k = 0; k < 16; k++) {
			uint32_t v;

			memcpy(&v, regs[r] + 4 * k, 4);
			for (size_t i = 0; i < n; i++)
				hits += v == w[i] || v == __builtin_bswap32(w[i]);
		}
	return hits;
}
