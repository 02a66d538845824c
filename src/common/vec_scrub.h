/*
 * twag — wiping what the vector kernels (AES-NI, VAES, AVX2, AVX-512 in
 * src/auth and src/crypto) leave behind (not a public header): key-derived
 * values stay in the vector registers after a kernel returns, and what the
 * compiler could not keep in registers was spilled to the kernel's stack
 * frame.
 */
#ifndef TWAG_VEC_SCRUB_H
#define TWAG_VEC_SCRUB_H

#include <stddef.h>
#include <stdint.h>

#include "twag/bytes.h"

/* One instruction per register 0..15, and those registers as clobbers. */
#define TW_VEC_16_(M)                                                          \
	M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12)    \
	M(13) M(14) M(15)
#define TW_VEC_CLOBBERS_                                                       \
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",  \
	"xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#define TW_PXOR_(i) "pxor %%xmm" #i ", %%xmm" #i "\n\t"
#define TW_VPXOR_(i) "vpxor %%xmm" #i ", %%xmm" #i ", %%xmm" #i "\n\t"

/* Zeroes xmm0-15 (legacy SSE encoding: for functions compiled for SSE,
 * AES-NI or SHA-NI without AVX); the ymm upper halves are the caller's
 * (its VZEROUPPER before the call cleared them). */
#define TW_CLEAR_XMM() __asm__ volatile(TW_VEC_16_(TW_PXOR_)::: TW_VEC_CLOBBERS_)

/* Zeroes ymm0-15 (a VEX.128 write clears the upper lane): for functions
 * compiled for AVX (VAES), where legacy SSE writes would leave the upper
 * lanes. */
#define TW_CLEAR_YMM() __asm__ volatile(TW_VEC_16_(TW_VPXOR_)::: TW_VEC_CLOBBERS_)

/* Zeroes every vector register (ymm0-15 by VZEROALL, zmm16-31 by hand);
 * for use at the end of a function compiled for AVX-512. */
#define TW_CLEAR_ZMM()                                                         \
	do {                                                                   \
		_mm256_zeroall();                                              \
		__asm__ volatile(                                              \
			"vpxord %%zmm16, %%zmm16, %%zmm16\n\t"                 \
			"vpxord %%zmm17, %%zmm17, %%zmm17\n\t"                 \
			"vpxord %%zmm18, %%zmm18, %%zmm18\n\t"                 \
			"vpxord %%zmm19, %%zmm19, %%zmm19\n\t"                 \
			"vpxord %%zmm20, %%zmm20, %%zmm20\n\t"                 \
			"vpxord %%zmm21, %%zmm21, %%zmm21\n\t"                 \
			"vpxord %%zmm22, %%zmm22, %%zmm22\n\t"                 \
			"vpxord %%zmm23, %%zmm23, %%zmm23\n\t"                 \
			"vpxord %%zmm24, %%zmm24, %%zmm24\n\t"                 \
			"vpxord %%zmm25, %%zmm25, %%zmm25\n\t"                 \
			"vpxord %%zmm26, %%zmm26, %%zmm26\n\t"                 \
			"vpxord %%zmm27, %%zmm27, %%zmm27\n\t"                 \
			"vpxord %%zmm28, %%zmm28, %%zmm28\n\t"                 \
			"vpxord %%zmm29, %%zmm29, %%zmm29\n\t"                 \
			"vpxord %%zmm30, %%zmm30, %%zmm30\n\t"                 \
			"vpxord %%zmm31, %%zmm31, %%zmm31"                     \
			::: "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",       \
			"xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",  \
			"xmm27", "xmm28", "xmm29", "xmm30", "xmm31");          \
	} while (0)

/* sanitizer builds have larger frames (ASan's redzones) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TW_VEC_SCRUB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TW_VEC_SCRUB_SANITIZED 1
#endif
#endif
#ifdef TW_VEC_SCRUB_SANITIZED
enum { TW_VEC_SCRUB_MAX = 16384 };
#else
enum { TW_VEC_SCRUB_MAX = 4096 };
#endif

/*
 * Wipes the n (<= TW_VEC_SCRUB_MAX) octets of stack just below the
 * caller's frame, where a noinline kernel the caller has just called kept
 * its frame (the next call from the same caller lands on the same stack):
 * n must cover that kernel's frame and saved registers (see objdump).
 * Called through the macro below, never as a tail call: a call in tail
 * position becomes a jump made after the caller's frame is released, so
 * the wiped octets would start that frame's size higher up and miss the
 * bottom of the kernel's frame.
 */
__attribute__((noinline, unused)) static void tw_vec_scrub_stack_fn(size_t n)
{
	uint8_t buf[TW_VEC_SCRUB_MAX];

	if (n > sizeof(buf))
		n = sizeof(buf);
	tw_wipe(buf + sizeof(buf) - n, n);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* the empty statement after the call keeps it out of tail position */
#define tw_vec_scrub_stack(n)                                                  \
	do {                                                                   \
		tw_vec_scrub_stack_fn(n);                                      \
		__asm__ volatile("" ::: "memory");                             \
	} while (0)

#endif
