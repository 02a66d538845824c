/*
 * twag test harness: plain-text vector files and checks that name the
 * vector file and line of every failure.
 *
 * A test program defines test_main(); the harness's main() runs it and
 * prints "<program> [<cpu level>]: N passed, N failed". Each CHECK counts as
 * one assertion. tests/run.sh runs every program once per CPU level the
 * machine offers (TWAG_CPU=portable, aesni, ... native) and adds the counts.
 *
 * Vector files (tests/vectors/<alg>.vec): "key = value" lines, a blank line
 * between cases, a mandatory "# source:" line in each case; values are hex,
 * "quoted text", or decimal numbers. Lines starting with '#' are comments.
 */
#ifndef TW_TEST_H
#define TW_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TV_MAX_KV 64

struct tv_kv {
	const char *key;
	const char *val; /* without the quotes when quoted */
	int line;
	bool quoted;
};

struct tv_case {
	const char *path;   /* file name as given to tv_run_file */
	int line;           /* first line of the case */
	const char *source; /* text after "# source:" */
	int nkv;
	struct tv_kv kv[TV_MAX_KV];
};

typedef void (*tv_fn)(const struct tv_case *c);

/* Runs fn on every case of tests/vectors/<name>; returns the case count.
 * A missing/unreadable file, a case without "# source:" or an empty file is
 * a failure. */
int tv_run_file(const char *name, tv_fn fn);

bool tv_has(const struct tv_case *c, const char *key);
/* The value's text, or NULL (and a failure) if absent. */
const char *tv_str(const struct tv_case *c, const char *key);
/* Decodes a hex value into out; returns its length, or 0 with a failure
 * recorded if absent, malformed or longer than max. */
size_t tv_hex(const struct tv_case *c, const char *key, uint8_t *out,
	      size_t max);
/* A value as bytes: "quoted text" verbatim, else hex (as tv_hex). Returns
 * its length, or 0 with a failure recorded (absent, malformed, over max). */
size_t tv_bytes(const struct tv_case *c, const char *key, uint8_t *out,
		size_t max);
/* Decimal value, or def if absent. */
long tv_int(const struct tv_case *c, const char *key, long def);
/* Compares got[0..len) to the hex under key; one assertion. */
bool tv_expect(const struct tv_case *c, const char *key, const uint8_t *got,
	       size_t len, const char *file, int line);
#define TV_EXPECT(c, key, got, len) tv_expect((c), (key), (got), (len), __FILE__, __LINE__)

/* One assertion; prints the vector position too when inside tv_run_file. */
bool tw_check(bool ok, const char *file, int line, const char *expr);
#define CHECK(cond) tw_check((cond) ? true : false, __FILE__, __LINE__, #cond)
#define CHECK_OK(expr) CHECK((expr) == 0)
#define CHECK_ERR(expr, err) CHECK((expr) == (err))
#define CHECK_MEM(a, b, len) CHECK(memcmp((a), (b), (len)) == 0)

/* Prints a note (e.g. a skipped cross-check and why). */
void tw_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Deterministic pseudo-random bytes for cross-checks; the seed is printed
 * and can be set with TWAG_TEST_SEED to replay a failure. */
void tw_test_random(void *buf, size_t len);
uint32_t tw_test_random_u32(void);

/* For the multi-buffer hash tests: len random octets in msg, then the
 * MD5 / SHA-256 padding (RFC 1321 §3.1-3.2, FIPS 180-4 §5.1.1: 0x80,
 * zeros, the bit length little- or big-endian); the padded length in
 * blocks is split into 4 segments at random block boundaries (some
 * empty): seg[i] / nblk[i], copied apart into spread, last first and
 * each followed by a block of other octets. msg holds len + 72 octets at
 * least, spread len + 72 + 4 * 64. */
void tw_test_md_padded(uint8_t *msg, size_t len, int big_endian, uint8_t *spread,
		       const uint8_t *seg[4], size_t nblk[4]);

/*
 * Secrets left on the stack: how many copies of pat (len octets; also
 * with each 32-bit word's octets reversed, as registers of words spill)
 * lie in the STACK_SCAN octets below the caller's frame, where the
 * functions it called just ran. Call it right after them, from the same
 * function. Reads indeterminate memory on purpose.
 */
enum { TW_TEST_STACK_SCAN = 32768 };
int tw_test_stack_copies(const uint8_t *pat, size_t len);

/*
 * Secrets left in the vector registers: tw_test_vec_regs copies them as
 * they are at the call (zmm0-31 when the CPU runs AVX-512, else ymm0-15
 * with the rest of each row zero; nothing, returning 0, off x86-64); call
 * it right after the function under test, before anything else can use
 * them. tw_test_regs_words counts the 32-bit words of such a copy equal
 * to one of the n words w (also with their octets reversed).
 */
int tw_test_vec_regs(uint8_t regs[32][64]);
int tw_test_regs_words(const uint8_t regs[32][64], const uint32_t *w, size_t n);

/* Hex helper for tests: decodes a string literal, aborting on bad input. */
size_t tw_test_hex(uint8_t *out, size_t max, const char *hex);

/* Defined by each test program. */
void test_main(void);

#endif
