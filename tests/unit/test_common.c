/* Tests of src/common: byte order, constant-time compare, hex. */
#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/hex.h"
#include "twag/mem.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_bytes(void)
{
	uint8_t b[8];

	tw_store_be48(b, 0x0123456789abull);
	CHECK(b[0] == 0x01 && b[5] == 0xab);
	CHECK(tw_load_be48(b) == 0x0123456789abull);
	tw_store_be64(b, 0x0102030405060708ull);
	CHECK(tw_load_be64(b) == 0x0102030405060708ull);
	CHECK(tw_load_le64(b) == 0x0807060504030201ull);
	tw_store_le32(b, 0xdeadbeef);
	CHECK(b[0] == 0xef && tw_load_le32(b) == 0xdeadbeef);
	CHECK(tw_load_be16(b) == 0xefbe);
}

static void test_ct(void)
{
	uint8_t a[32], b[32];

	tw_test_random(a, sizeof(a));
	memcpy(b, a, sizeof(a));
	CHECK(tw_ct_eq(a, b, sizeof(a)));
	CHECK(tw_ct_eq(a, b, 0));
	/* Every single-bit difference, in every position, must be seen. */
	bool all = true;
	for (unsigned i = 0; i < sizeof(a) * 8; i++) {
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
		all &= !tw_ct_eq(a, b, sizeof(a));
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(all);
	memset(a, 0, sizeof(a));
	CHECK(tw_ct_is_zero(a, sizeof(a)));
	a[31] = 0x80;
	CHECK(!tw_ct_is_zero(a, sizeof(a)));
	tw_wipe(b, sizeof(b));
	CHECK(tw_ct_is_zero(b, sizeof(b)));
}

static void test_hex(void)
{
	uint8_t out[4];
	size_t n = 99;
	char enc[9];

	CHECK_OK(tw_hex_decode(out, sizeof(out), &n, "00aBfF10", 8));
	CHECK(n == 4 && out[1] == 0xab && out[2] == 0xff && out[3] == 0x10);
	tw_hex_encode(enc, out, 4);
	CHECK(strcmp(enc, "00abff10") == 0);
	CHECK_ERR(tw_hex_decode(out, sizeof(out), &n, "abc", 3), TW_ERR_LENGTH);
	CHECK_ERR(tw_hex_decode(out, sizeof(out), &n, "0011223344", 10), TW_ERR_LENGTH);
	CHECK_ERR(tw_hex_decode(out, sizeof(out), &n, "zz", 2), TW_ERR_DECODE);
	CHECK_ERR(tw_hex_decode(out, sizeof(out), &n, "0 ", 2), TW_ERR_DECODE);
}

static void test_cpu(void)
{
	uint32_t hw = tw_cpu_features_hw();

	/* The enabled set never exceeds what the hardware has. */
	CHECK((tw_cpu_features() & ~hw) == 0);
	tw_cpu_restrict(0);
	CHECK(tw_cpu_features() == 0);
	CHECK(strcmp(tw_cpu_level_name(), "portable") == 0);
	tw_cpu_restrict(UINT32_MAX);
	CHECK((tw_cpu_features() & ~hw) == 0);
	CHECK(strcmp(tw_strerror(TW_ERR_AUTH), "authentication failed") == 0);
}

/* The table allocator: zeroed, writable to the last octet, tables of
 * 1 MiB and more aligned to 2 MiB (what lets the kernel back them with
 * huge pages), overflow and empty requests refused. */
static void test_table_alloc(void)
{
	static const size_t sizes[][2] = {
		{ 1, 1 }, { 100, 24 }, { 4096, 1 }, { 1u << 20, 1 }, { 3u << 20, 1 }, { 70000, 456 },
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i][0] * sizes[i][1];
		uint8_t *p = tw_table_alloc(sizes[i][0], sizes[i][1]);
		bool zero = true;

		CHECK(p != NULL);
		if (p == NULL)
			continue;
		for (size_t j = 0; j < n; j += 997)
			zero = zero && p[j] == 0;
		CHECK(zero && p[n - 1] == 0);
		memset(p, 0xa5, n);
		CHECK(p[0] == 0xa5 && p[n - 1] == 0xa5);
		if (n >= (1u << 20))
			CHECK((uintptr_t)p % (2u << 20) == 0);
		tw_table_free(p, sizes[i][0], sizes[i][1]);
	}
	CHECK(tw_table_alloc(0, 16) == NULL);
	CHECK(tw_table_alloc(16, 0) == NULL);
	CHECK(tw_table_alloc(SIZE_MAX / 2, 3) == NULL);
	CHECK(tw_table_alloc(1, SIZE_MAX - 4096) == NULL);
	tw_table_free(NULL, 1, 1);
}

/* Every page of [p, p + n) resident (mincore). */
static bool resident(const void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), np = (n + page - 1) / page;
	unsigned char vec[2048];
	bool all = np <= sizeof(vec) && mincore((void *)(uintptr_t)p, n, vec) == 0;

	for (size_t i = 0; all && i < np; i++)
		all = (vec[i] & 1) != 0;
	return all;
}

/* the filter reads the advice as the low 32 bits of the argument: where
 * they come first (little-endian x86-64 and AArch64) */
#if defined(MADV_POPULATE_WRITE) && (defined(__x86_64__) || defined(__aarch64__)) && \
	defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TEST_POPULATE_REFUSED 1
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
/*
 * In a child: madvise(MADV_POPULATE_WRITE) made to fail with err by a
 * seccomp filter (as a sandbox or an older kernel would), then a 3 MiB
 * table populated. Exit status: 0 when tw_table_populate returned want
 * and, when that is TW_OK, the table is resident and still zero (the
 * page-by-page fallback wrote each page back); 2 when no seccomp filter
 * can be installed here (a sandbox without it); else which check failed.
 */
static int populate_refused(int err, int want)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };
	size_t n = 3u << 20;
	uint8_t *p;
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 100;
	if (pid == 0) {
		bool zero = true;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			_exit(2);
		/* the filter answers as asked */
		p = tw_table_alloc(n, 1);
		if (p == NULL)
			_exit(3);
		errno = 0;
		if (madvise(p, n, MADV_POPULATE_WRITE) == 0 || errno != err)
			_exit(4);
		if (tw_table_populate(p, n, 1) != want)
			_exit(5);
		if (want != TW_OK)
			_exit(0);
		/* before any read here could map pages */
		if (!resident(p, n))
			_exit(6);
		for (size_t j = 0; j < n; j += 4093)
			zero = zero && p[j] == 0;
		_exit(zero ? 0 : 7);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 101;
	return WEXITSTATUS(status);
}
#endif

/* Populating commits the whole table (MADV_POPULATE_WRITE, or each page
 * touched where the advice is refused); a refusal that is a lack of
 * memory is an error, not a fallback. */
static void test_table_populate(void)
{
	size_t n = 3u << 20;
	uint8_t *p = tw_table_alloc(n, 1);

	CHECK(p != NULL);
	if (p != NULL) {
		CHECK(!resident(p, n)); /* nothing committed yet */
		CHECK(tw_table_populate(p, n, 1) == TW_OK);
		CHECK(resident(p, n));
		CHECK(p[0] == 0 && p[n - 1] == 0);
		CHECK(tw_table_populate(p, 0, 1) == TW_ERR_INVAL);
		tw_table_free(p, n, 1);
	}
	CHECK(tw_table_populate(NULL, 1, 1) == TW_ERR_INVAL);
#if defined(TEST_POPULATE_REFUSED)
	if (populate_refused(EPERM, TW_OK) == 2) {
		tw_note("table populate: no seccomp filter here, its fallback not run");
		return;
	}
	CHECK(populate_refused(EPERM, TW_OK) == 0);  /* a sandbox's filter */
	CHECK(populate_refused(ENOSYS, TW_OK) == 0);
	CHECK(populate_refused(EINVAL, TW_OK) == 0); /* before Linux 5.14 */
	CHECK(populate_refused(ENOMEM, TW_ERR_NOMEM) == 0);
	CHECK(populate_refused(EFAULT, TW_ERR_NOMEM) == 0);
#else
	tw_note("table populate: fallback test not built for this target");
#endif
}

void test_main(void)
{
	test_bytes();
	test_ct();
	test_hex();
	test_cpu();
	test_table_alloc();
	test_table_populate();
}
