/*
 * twag — CPU feature detection (Intel SDM vol. 2A, CPUID leaves 1 and 7;
 * XGETBV XCR0 for the OS-enabled register state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static uint32_t detect(void)
{
	uint32_t a, b, c, d, f = 0;
	uint64_t xcr0 = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	bool osxsave = (c >> 27) & 1;
	if ((c >> 25) & 1)
		f |= TW_CPU_AESNI;
	if ((c >> 1) & 1)
		f |= TW_CPU_PCLMUL;
	if (((c >> 9) & 1) && ((c >> 19) & 1))
		f |= TW_CPU_SSE41;
	bool avx = (c >> 28) & 1;
	if (osxsave)
		xcr0 = xgetbv0();
	bool ymm_os = (xcr0 & 0x6) == 0x6;
	bool zmm_os = (xcr0 & 0xe6) == 0xe6;

	if (__get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		if ((b >> 29) & 1)
			f |= TW_CPU_SHANI;
		if (avx && ymm_os && ((b >> 5) & 1))
			f |= TW_CPU_AVX2;
		if ((f & TW_CPU_AVX2) && ((c >> 9) & 1) && ((c >> 10) & 1))
			f |= TW_CPU_VAES;
		/* AVX-512 F (b16), BW (b30), VL (b31) */
		if ((f & TW_CPU_AVX2) && zmm_os && ((b >> 16) & 1) &&
		    ((b >> 30) & 1) && ((b >> 31) & 1))
			f |= TW_CPU_AVX512;
		/* AVX-512 VBMI (c1) */
		if ((f & TW_CPU_AVX512) && ((c >> 1) & 1))
			f |= TW_CPU_VBMI;
	}
	/* Our accelerated kernels assume SSE4.1 alongside AES-NI/SHA-NI. */
	if (!(f & TW_CPU_SSE41))
		f &= ~(uint32_t)(TW_CPU_AESNI | TW_CPU_SHANI | TW_CPU_PCLMUL);
	return f;
}
#else
static uint32_t detect(void)
{
	return 0;
}
#endif

#define LEVEL_AESNI (TW_CPU_AESNI | TW_CPU_PCLMUL | TW_CPU_SHANI | TW_CPU_SSE41)
#define LEVEL_AVX2 (LEVEL_AESNI | TW_CPU_AVX2)
#define LEVEL_VAES (LEVEL_AVX2 | TW_CPU_VAES)

static uint32_t env_cap(void)
{
	const char *e = getenv("TWAG_CPU");

	if (e == NULL || *e == '\0' || strcmp(e, "avx512") == 0 ||
	    strcmp(e, "native") == 0)
		return UINT32_MAX;
	if (strcmp(e, "portable") == 0)
		return 0;
	if (strcmp(e, "aesni") == 0)
		return LEVEL_AESNI;
	if (strcmp(e, "avx2") == 0)
		return LEVEL_AVX2;
	if (strcmp(e, "vaes") == 0)
		return LEVEL_VAES;
	/* An unknown value must not silently enable more than asked: be safe. */
	return 0;
}

static uint32_t hw_features;
static uint32_t cap_features;
static uint32_t enabled;
static int initialised;

static void init(void)
{
	if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE))
		return;
	uint32_t hw = detect();
	uint32_t cap = hw & env_cap();

	hw_features = hw;
	cap_features = cap;
	enabled = cap;
	__atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
}

uint32_t tw_cpu_features(void)
{
	init();
	return enabled;
}

uint32_t tw_cpu_features_hw(void)
{
	init();
	return hw_features;
}

void tw_cpu_restrict(uint32_t mask)
{
	init();
	enabled = cap_features & mask;
}

const char *tw_cpu_level_name(void)
{
	uint32_t f = tw_cpu_features();

	if (f & TW_CPU_AVX512)
		return "avx512";
	if (f & TW_CPU_VAES)
		return "vaes";
	if (f & TW_CPU_AVX2)
		return "avx2";
	if (f & TW_CPU_AESNI)
		return "aesni";
	return "portable";
}

void tw_cpu_describe(char *buf, unsigned len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ TW_CPU_AESNI, "aesni" }, { TW_CPU_PCLMUL, "pclmul" },
		{ TW_CPU_SHANI, "sha-ni" }, { TW_CPU_SSE41, "sse4.1" },
		{ TW_CPU_AVX2, "avx2" }, { TW_CPU_VAES, "vaes" },
		{ TW_CPU_AVX512, "avx512" }, { TW_CPU_VBMI, "avx512vbmi" },
	};
	uint32_t f = tw_cpu_features();
	unsigned used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s",
				 used ? "," : "", names[i].name);
		if (n < 0 || (unsigned)n >= len - used)
			break;
		used += (unsigned)n;
	}
	if (used == 0)
		snprintf(buf, len, "portable");
}
