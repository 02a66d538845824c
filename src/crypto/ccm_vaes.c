/*
 * twag — AES-CCM multi-frame kernel on VAES with AVX-512 (NIST SP 800-38C,
 * 2004 with 2007 errata): sixteen frames side by side, four per zmm
 * register (one per 128-bit lane, each with its own round keys), four zmm
 * groups. Each step runs every lane's CBC-MAC block Y = CIPH_K(Y ^ B) and
 * one CTR block, so 32 independent AES blocks are in flight per round.
 * The scheduler in ccm.c decides each lane's blocks (see ccm_ni.c for the
 * same step on four lanes). Selected only when
 * tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512) and AES-NI.
 */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "twag/ccm.h"

#define V_ATTR "aes,sse4.1,avx2,vaes,avx512f,avx512vl,avx512bw"
#define V_TARGET __attribute__((target(V_ATTR)))
#define V_INLINE static inline __attribute__((always_inline, target(V_ATTR)))

/* Lanes 4g..4g+3 from four pointers. */
V_INLINE __m512i gather4(const uint8_t *const *p)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p[0]));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[1]), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[2]), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[3]), 3);
}

V_INLINE void scatter4(uint8_t *const *p, __m512i v)
{
	_mm_storeu_si128((__m128i *)p[0], _mm512_castsi512_si128(v));
	_mm_storeu_si128((__m128i *)p[1], _mm512_extracti32x4_epi32(v, 1));
	_mm_storeu_si128((__m128i *)p[2], _mm512_extracti32x4_epi32(v, 2));
	_mm_storeu_si128((__m128i *)p[3], _mm512_extracti32x4_epi32(v, 3));
}

V_INLINE void steps16_impl(struct tw_ccm_lanes *L, size_t n, const unsigned nr)
{
	const __m512i bswap = _mm512_broadcast_i32x4(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	const __m512i one = _mm512_set_epi64(0, 1, 0, 1, 0, 1, 0, 1);
	__m512i y[4], c[4];
	const uint8_t *ms[16], *ci[16];
	uint8_t *co[16];

	for (int g = 0; g < 4; g++) {
		y[g] = _mm512_load_si512((const void *)L->mac[4 * g]);
		c[g] = _mm512_shuffle_epi8(_mm512_load_si512((const void *)L->ctr[4 * g]), bswap);
	}
	memcpy(ms, L->mac_src, sizeof(ms));
	memcpy(ci, L->ctr_in, sizeof(ci));
	memcpy(co, L->ctr_out, sizeof(co));
	for (; n > 0; n--) {
		__m512i m[4], b[4], d[4];

		for (int g = 0; g < 4; g++) {
			__m512i k0 = _mm512_load_si512((const void *)L->rk[0][4 * g]);

			m[g] = _mm512_ternarylogic_epi32(y[g], gather4(ms + 4 * g), k0, 0x96);
			b[g] = _mm512_xor_si512(_mm512_shuffle_epi8(c[g], bswap), k0);
			c[g] = _mm512_add_epi64(c[g], one);
		}
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int g = 0; g < 4; g++) {
				__m512i kr = _mm512_load_si512((const void *)L->rk[r][4 * g]);

				m[g] = _mm512_aesenc_epi128(m[g], kr);
				b[g] = _mm512_aesenc_epi128(b[g], kr);
			}
		}
		/* Every lane loads before any lane stores (idle lanes repeat
		 * busy ones in place). */
		for (int g = 0; g < 4; g++) {
			__m512i kl = _mm512_load_si512((const void *)L->rk[nr][4 * g]);

			y[g] = _mm512_aesenclast_epi128(m[g], kl);
			b[g] = _mm512_aesenclast_epi128(b[g], kl);
			d[g] = gather4(ci + 4 * g);
		}
		for (int g = 0; g < 4; g++)
			scatter4(co + 4 * g, _mm512_xor_si512(d[g], b[g]));
		for (int l = 0; l < 16; l++) {
			ms[l] += 16;
			ci[l] += 16;
			co[l] += 16;
		}
	}
	for (int g = 0; g < 4; g++) {
		_mm512_store_si512((void *)L->mac[4 * g], y[g]);
		_mm512_store_si512((void *)L->ctr[4 * g], _mm512_shuffle_epi8(c[g], bswap));
	}
	memcpy(L->mac_src, ms, sizeof(ms));
	memcpy(L->ctr_in, ci, sizeof(ci));
	memcpy(L->ctr_out, co, sizeof(co));
}

V_TARGET void tw_ccm_vaes_steps16(struct tw_ccm_lanes *l, size_t k)
{
	if (l->nr == 10)
		steps16_impl(l, k, 10);
	else
		steps16_impl(l, k, 14);
}

#endif /* __x86_64__ */
