/* Tests of src/common: byte order, constant-time compare, hex. */
#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/hex.h"
#include "twag/mem.h"

#include <stdint.h>

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

void test_main(void)
{
	test_bytes();
	test_ct();
	test_hex();
	test_cpu();
	test_table_alloc();
}
