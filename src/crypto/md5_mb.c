/*
 * twag — multi-buffer MD5 (RFC 1321 §3.4) for many independent messages:
 * the RADIUS authenticators of a whole receive batch (RFC 2865 §3, RFC 3579
 * §3.2). One MD5 compression is a chain of 64 dependent steps, so a core
 * runs one message at a few cycles per octet whatever its width; sixteen
 * messages side by side in the 32-bit lanes of AVX-512 registers share
 * every instruction. Each lane has its own job (chaining value, segments);
 * a lane whose job ends takes the next one, so jobs of different lengths
 * keep the lanes busy. With AVX2 but not AVX-512 the same sixteen lanes run
 * as two halves of eight; without AVX2 (or with TWAG_CPU below it) the
 * jobs run one after another on the scalar code: same results.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/md5.h"
#include "mb_lanes.h"
#include "md5_tab.h"
#include "../common/vec_scrub.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define M_ATTR "avx2,avx512f,avx512vl,avx512bw"
#define M_TARGET __attribute__((target(M_ATTR)))

_Static_assert((int)TW_MD5_MB_SEGS == (int)TW_MB_SEGS, "one segment count");

/*
 * The 64 steps of RFC 1321 §3.4 for a kernel's STEP(f, a, b, c, d, k, i, s)
 * (f: the round's function as that kernel takes it; k: the message word,
 * i: the constant T[i + 1], s: the rotation), four at a time with (a, b,
 * c, d) renamed in turn; then MD5_64 the four rounds, f1..f4 being F, G,
 * H and I: X[i], X[(1 + 5i) mod 16], X[(5 + 3i) mod 16], X[7i mod 16].
 */
#define MD5_4(STEP, f, i0, k0, k1, k2, k3, s0, s1, s2, s3)                              \
	do {                                                                           \
		STEP(f, a, b, c, d, k0, (i0) + 0, s0);                                 \
		STEP(f, d, a, b, c, k1, (i0) + 1, s1);                                 \
		STEP(f, c, d, a, b, k2, (i0) + 2, s2);                                 \
		STEP(f, b, c, d, a, k3, (i0) + 3, s3);                                 \
	} while (0)

#define MD5_64(STEP, f1, f2, f3, f4)                                                   \
	MD5_4(STEP, f1, 0, 0, 1, 2, 3, 7, 12, 17, 22);                                 \
	MD5_4(STEP, f1, 4, 4, 5, 6, 7, 7, 12, 17, 22);                                 \
	MD5_4(STEP, f1, 8, 8, 9, 10, 11, 7, 12, 17, 22);                               \
	MD5_4(STEP, f1, 12, 12, 13, 14, 15, 7, 12, 17, 22);                            \
	MD5_4(STEP, f2, 16, 1, 6, 11, 0, 5, 9, 14, 20);                                \
	MD5_4(STEP, f2, 20, 5, 10, 15, 4, 5, 9, 14, 20);                               \
	MD5_4(STEP, f2, 24, 9, 14, 3, 8, 5, 9, 14, 20);                                \
	MD5_4(STEP, f2, 28, 13, 2, 7, 12, 5, 9, 14, 20);                               \
	MD5_4(STEP, f3, 32, 5, 8, 11, 14, 4, 11, 16, 23);                              \
	MD5_4(STEP, f3, 36, 1, 4, 7, 10, 4, 11, 16, 23);                               \
	MD5_4(STEP, f3, 40, 13, 0, 3, 6, 4, 11, 16, 23);                               \
	MD5_4(STEP, f3, 44, 9, 12, 15, 2, 4, 11, 16, 23);                              \
	MD5_4(STEP, f4, 48, 0, 7, 14, 5, 6, 10, 15, 21);                               \
	MD5_4(STEP, f4, 52, 12, 3, 10, 1, 6, 10, 15, 21);                              \
	MD5_4(STEP, f4, 56, 8, 15, 6, 13, 6, 10, 15, 21);                              \
	MD5_4(STEP, f4, 60, 4, 11, 2, 9, 6, 10, 15, 21)

/*
 * One step, a = b + ((a + fn(b, c, d) + X[k] + T[i]) <<< s), with fn as a
 * three-input truth table (vpternlogd, imm over bits b c d): F = b ? c : d
 * (0xca), G = d ? b : c (0xe4), H = b ^ c ^ d (0x96), I = c ^ (b | ~d)
 * (0x39). Then (a, b, c, d) = (d, a, b, c) by renaming in the caller.
 */
#define MB_STEP(imm, a, b, c, d, k, i, s)                                              \
	do {                                                                           \
		__m512i f_ = _mm512_ternarylogic_epi32((b), (c), (d), (imm));          \
		__m512i t_ = _mm512_add_epi32(_mm512_add_epi32((a), f_),               \
					      _mm512_add_epi32(x[(k)],                 \
							       _mm512_set1_epi32(      \
								       (int)tw_md5_tab[(i)]))); \
		(a) = _mm512_add_epi32((b), _mm512_rol_epi32(t_, (s)));                \
	} while (0)

/* One block of each of the 16 lanes: lane j's chaining value is column j
 * of st, its block p[j]. */
M_TARGET static void mb16_block(uint32_t st[][TW_MB_LANES], const uint8_t *const p[TW_MB_LANES])
{
	__m512i a = _mm512_loadu_si512(st[0]), b = _mm512_loadu_si512(st[1]);
	__m512i c = _mm512_loadu_si512(st[2]), d = _mm512_loadu_si512(st[3]);
	__m512i a0 = a, b0 = b, c0 = c, d0 = d;
	__m512i x[16], t[16];

	/*
	 * X[k] of all lanes (§2: little-endian words): row j = lane j's block
	 * loaded whole, then the 16x16 matrix of words transposed, so that
	 * x[k] holds word k of every lane: 32-bit then 64-bit interleaves
	 * within 128-bit lanes, then two exchanges of 128-bit lanes (64
	 * shuffles against 32 eight-word gathers).
	 */
	for (int j = 0; j < 16; j++)
		x[j] = _mm512_loadu_si512((const void *)p[j]);
	for (int j = 0; j < 16; j += 2) {
		t[j] = _mm512_unpacklo_epi32(x[j], x[j + 1]);
		t[j + 1] = _mm512_unpackhi_epi32(x[j], x[j + 1]);
	}
	for (int j = 0; j < 16; j += 4) {
		x[j] = _mm512_unpacklo_epi64(t[j], t[j + 2]);
		x[j + 1] = _mm512_unpackhi_epi64(t[j], t[j + 2]);
		x[j + 2] = _mm512_unpacklo_epi64(t[j + 1], t[j + 3]);
		x[j + 3] = _mm512_unpackhi_epi64(t[j + 1], t[j + 3]);
	}
	for (int j = 0; j < 4; j++) {
		t[j] = _mm512_shuffle_i32x4(x[j], x[j + 4], 0x88);
		t[j + 4] = _mm512_shuffle_i32x4(x[j], x[j + 4], 0xdd);
		t[j + 8] = _mm512_shuffle_i32x4(x[j + 8], x[j + 12], 0x88);
		t[j + 12] = _mm512_shuffle_i32x4(x[j + 8], x[j + 12], 0xdd);
	}
	for (int j = 0; j < 4; j++) {
		x[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
		x[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
		x[j + 4] = _mm512_shuffle_i32x4(t[j + 4], t[j + 12], 0x88);
		x[j + 12] = _mm512_shuffle_i32x4(t[j + 4], t[j + 12], 0xdd);
	}
	MD5_64(MB_STEP, 0xca, 0xe4, 0x96, 0x39);
	_mm512_storeu_si512(st[0], _mm512_add_epi32(a, a0));
	_mm512_storeu_si512(st[1], _mm512_add_epi32(b, b0));
	_mm512_storeu_si512(st[2], _mm512_add_epi32(c, c0));
	_mm512_storeu_si512(st[3], _mm512_add_epi32(d, d0));
	/* the message words (a secret, in a Response Authenticator's last
	 * block) may have been spilled to the stack */
	tw_wipe(x, sizeof(x));
	tw_wipe(t, sizeof(t));
}

/*
 * The same 16-lane kernel on AVX2 (no AVX-512: e.g. AMD Zen 2/3): two
 * halves of eight lanes, their steps interleaved (two independent chains
 * for the core to overlap); the functions take two or three instructions
 * each (F = d ^ (b & (c ^ d)), G = c ^ (d & (b ^ c)), I = c ^ (b | ~d))
 * and a rotation three. The upper half is skipped when all its lanes are
 * idle (up to eight jobs in flight).
 */
#define A2_TARGET __attribute__((target("avx2")))

#define A2_ROL(x, s) _mm256_or_si256(_mm256_slli_epi32((x), (s)), _mm256_srli_epi32((x), 32 - (s)))
#define A2_F(b, c, d) _mm256_xor_si256((d), _mm256_and_si256((b), _mm256_xor_si256((c), (d))))
#define A2_G(b, c, d) _mm256_xor_si256((c), _mm256_and_si256((d), _mm256_xor_si256((b), (c))))
#define A2_H(b, c, d) _mm256_xor_si256(_mm256_xor_si256((b), (c)), (d))
#define A2_I(b, c, d) _mm256_xor_si256((c), _mm256_or_si256((b), _mm256_xor_si256((d), ones)))

#define A2_STEP(fn, a, b, c, d, k, i, s)                                                 \
	do {                                                                             \
		_Pragma("GCC unroll 2") for (int h_ = 0; h_ < H; h_++)                   \
		{                                                                        \
			__m256i t_ = _mm256_add_epi32(                                   \
				_mm256_add_epi32((a)[h_], fn((b)[h_], (c)[h_], (d)[h_])), \
				_mm256_add_epi32(x[h_][(k)],                             \
						 _mm256_set1_epi32((int)tw_md5_tab[(i)]))); \
			(a)[h_] = _mm256_add_epi32((b)[h_], A2_ROL(t_, (s)));            \
		}                                                                        \
	} while (0)

/* Eight lanes' blocks (at p[0..7]) as x[k] = word k of every lane (§2:
 * little-endian words): two 8x8 transposes of 32-bit words. */
A2_TARGET static inline __attribute__((always_inline)) void a2_words(__m256i x[16],
									 const uint8_t *const p[8])
{
	for (int half = 0; half < 2; half++) {
		__m256i r[8], t[8], u[8];

		for (int j = 0; j < 8; j++)
			r[j] = _mm256_loadu_si256((const __m256i *)(const void *)(p[j] + 32 * half));
		for (int j = 0; j < 8; j += 2) {
			t[j] = _mm256_unpacklo_epi32(r[j], r[j + 1]);
			t[j + 1] = _mm256_unpackhi_epi32(r[j], r[j + 1]);
		}
		for (int j = 0; j < 8; j += 4) {
			u[j] = _mm256_unpacklo_epi64(t[j], t[j + 2]);     /* words 0|4 */
			u[j + 1] = _mm256_unpackhi_epi64(t[j], t[j + 2]); /* 1|5 */
			u[j + 2] = _mm256_unpacklo_epi64(t[j + 1], t[j + 3]); /* 2|6 */
			u[j + 3] = _mm256_unpackhi_epi64(t[j + 1], t[j + 3]); /* 3|7 */
		}
		for (int w = 0; w < 4; w++) {
			x[8 * half + w] = _mm256_permute2x128_si256(u[w], u[w + 4], 0x20);
			x[8 * half + w + 4] = _mm256_permute2x128_si256(u[w], u[w + 4], 0x31);
		}
	}
}

/* H (1 or 2) halves of eight lanes: lanes 8h..8h+7 for h < H. */
A2_TARGET static inline __attribute__((always_inline)) void
a2_block(uint32_t st[][TW_MB_LANES], const uint8_t *const p[TW_MB_LANES], const int H)
{
	const __m256i ones = _mm256_set1_epi32(-1);
	__m256i a[2], b[2], c[2], d[2], a0[2], b0[2], c0[2], d0[2];
	__m256i x[2][16];

	for (int h = 0; h < H; h++) {
		a[h] = a0[h] = _mm256_loadu_si256((const __m256i *)(const void *)(st[0] + 8 * h));
		b[h] = b0[h] = _mm256_loadu_si256((const __m256i *)(const void *)(st[1] + 8 * h));
		c[h] = c0[h] = _mm256_loadu_si256((const __m256i *)(const void *)(st[2] + 8 * h));
		d[h] = d0[h] = _mm256_loadu_si256((const __m256i *)(const void *)(st[3] + 8 * h));
		a2_words(x[h], p + 8 * h);
	}
	MD5_64(A2_STEP, A2_F, A2_G, A2_H, A2_I);
	for (int h = 0; h < H; h++) {
		_mm256_storeu_si256((__m256i *)(void *)(st[0] + 8 * h), _mm256_add_epi32(a[h], a0[h]));
		_mm256_storeu_si256((__m256i *)(void *)(st[1] + 8 * h), _mm256_add_epi32(b[h], b0[h]));
		_mm256_storeu_si256((__m256i *)(void *)(st[2] + 8 * h), _mm256_add_epi32(c[h], c0[h]));
		_mm256_storeu_si256((__m256i *)(void *)(st[3] + 8 * h), _mm256_add_epi32(d[h], d0[h]));
	}
	/* the message words (a secret, in a Response Authenticator's last
	 * block) left in registers and spills: wiped once per run by
	 * tw_md5_mb (a2_zero, tw_vec_scrub_stack), not after every block */
}

A2_TARGET __attribute__((noinline)) static void a2_block16(uint32_t st[][TW_MB_LANES],
							   const uint8_t *const p[TW_MB_LANES])
{
	bool upper = false; /* any of lanes 8..15 busy */

	for (int j = 8; j < TW_MB_LANES; j++)
		upper |= p[j] != tw_mb_idle_block;
	if (upper)
		a2_block(st, p, 2);
	else
		a2_block(st, p, 1);
}

/* After a run of mb16_block: every vector register */
M_TARGET __attribute__((noinline)) static void mb16_zero(void)
{
	TW_CLEAR_ZMM();
}

/* After a run of a2_block16: the vector registers (its frame is wiped
 * by tw_md5_mb) */
A2_TARGET __attribute__((noinline)) static void a2_zero(void)
{
	_mm256_zeroall();
}

static struct tw_mb_view md5_view(void *jobs, size_t i)
{
	struct tw_md5_job *j = (struct tw_md5_job *)jobs + i;

	return (struct tw_mb_view){ j->h, j->seg, j->nblk };
}
#endif

void tw_md5_mb(struct tw_md5_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
#if defined(__x86_64__)
	if (n >= 3 && tw_cpu_has(TW_CPU_AVX512)) { /* below 3, one at a time is faster */
		tw_mb_run(jobs, n, md5_view, 4, mb16_block);
		/* the zmm registers (chaining values, keyed HMAC states among
		 * them) and mb16_block's frame beyond the message words it
		 * wipes itself */
		mb16_zero();
		tw_vec_scrub_stack(TW_VEC_SCRUB_MAX);
		return;
	}
	if (n >= 4 && tw_cpu_has(TW_CPU_AVX2)) { /* one half runs at about the speed of three scalar jobs */
		tw_mb_run(jobs, n, md5_view, 4, a2_block16);
		a2_zero();
		/* a2_block16's frame (spilled message words and transposes:
		 * 0x960 octets below a 32-aligned %rsp with GCC 12 -O2, 0xa20
		 * with clang 14, 0x1aa0 with GCC and ASan, by objdump): the
		 * whole scrub area (larger in sanitizer builds); unoptimised
		 * builds have larger frames still and are not covered */
		tw_vec_scrub_stack(TW_VEC_SCRUB_MAX);
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		for (unsigned s = 0; s < TW_MD5_MB_SEGS; s++)
			if (jobs[i].nblk[s] > 0)
				tw_md5_compress(jobs[i].h, jobs[i].seg[s], jobs[i].nblk[s]);
}
