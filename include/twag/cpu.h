/*
 * twag — CPU feature detection and implementation selection.
 *
 * Every accelerated kernel has a portable twin. The features in use are
 * detected once (CPUID/XGETBV) and may be capped by the environment variable
 * TWAG_CPU, read once at first use:
 *   TWAG_CPU=portable  no CPU-specific code at all
 *   TWAG_CPU=aesni     AES-NI, PCLMULQDQ, SHA-NI, SSSE3/SSE4.1
 *   TWAG_CPU=avx2      the above plus AVX2 (no VAES; runs under valgrind 3.19)
 *   TWAG_CPU=vaes      the above plus VAES/VPCLMULQDQ on 256-bit vectors
 *   TWAG_CPU=avx512    everything the CPU has (the default)
 * Tests and benchmarks may narrow the set further with tw_cpu_restrict().
 */
#ifndef TWAG_CPU_H
#define TWAG_CPU_H

#include <stdbool.h>
#include <stdint.h>

enum tw_cpu_feature {
	TW_CPU_AESNI = 1u << 0,
	TW_CPU_PCLMUL = 1u << 1,
	TW_CPU_SHANI = 1u << 2,
	TW_CPU_SSE41 = 1u << 3, /* SSSE3 and SSE4.1 */
	TW_CPU_AVX2 = 1u << 4,
	TW_CPU_VAES = 1u << 5,   /* VAES and VPCLMULQDQ (with AVX2) */
	TW_CPU_AVX512 = 1u << 6, /* AVX-512 F, BW, VL */
	TW_CPU_VBMI = 1u << 7,   /* AVX-512 VBMI (byte permutes), with AVX512 */
};

/* Features the CPU and OS support, capped by TWAG_CPU, then by restrict. */
uint32_t tw_cpu_features(void);

/* Features the hardware offers, ignoring TWAG_CPU and tw_cpu_restrict. */
uint32_t tw_cpu_features_hw(void);

/* True if every feature in mask is currently enabled. */
static inline bool tw_cpu_has(uint32_t mask)
{
	return (tw_cpu_features() & mask) == mask;
}

/*
 * Narrows the enabled features to (detected & mask) for tests and benchmarks
 * that compare implementations; tw_cpu_restrict(UINT32_MAX) restores the
 * TWAG_CPU setting. Not thread-safe: call it while no other thread computes.
 */
void tw_cpu_restrict(uint32_t mask);

/* A short name of the widest path enabled: "avx512", "vaes", "avx2",
 * "aesni" or "portable"; and a comma list of enabled features. */
const char *tw_cpu_level_name(void);
void tw_cpu_describe(char *buf, unsigned len);

#endif
