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

/* Lanes 4g..4g+3 of a step: block off of each lane's stream p[4g + i]. */
V_INLINE __m512i gather4(const uint8_t *const *p, size_t off)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p[0] + off)));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[1] + off)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[2] + off)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[3] + off)), 3);
}

/*
 * The lanes' streams stay where the scheduler put them; every lane moves
 * 16 octets per step, so one offset register addresses all 48 streams
 * (no per-lane pointer updates). The CBC-MAC input is gathered into the
 * four zmm groups (the only shuffle work on the MAC side); the CTR side
 * instead splits the key stream into 128-bit lanes and XORs each with a
 * plain xmm load, which costs three extracts per group rather than three
 * inserts plus three extracts. The round keys are read from L->rk in its
 * [round][lane] layout: one aligned 64-octet load per round and group,
 * folded into VAESENC as a memory operand, no broadcasts or transposes.
 */
V_INLINE void steps16_impl(struct tw_ccm_lanes *L, size_t n, const unsigned nr)
{
	const __m512i bswap = _mm512_broadcast_i32x4(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	const __m512i one = _mm512_set_epi64(0, 1, 0, 1, 0, 1, 0, 1);
	const __m512i(*rk)[4] = (const __m512i(*)[4])L->rk;
	const uint8_t *const *ms = L->mac_src, *const *ci = L->ctr_in;
	uint8_t *const *co = L->ctr_out;
	__m512i y[4], c[4];
	size_t off = 0;

	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		y[g] = _mm512_load_si512((const void *)L->mac[4 * g]);
		c[g] = _mm512_shuffle_epi8(_mm512_load_si512((const void *)L->ctr[4 * g]), bswap);
	}
	for (; n > 0; n--, off += 16) {
		__m512i m[4], b[4];
		__m128i d[16];

		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			/* Y ^ B ^ K_0 in one ternary op. */
			m[g] = _mm512_ternarylogic_epi32(y[g], gather4(ms + 4 * g, off),
							 rk[0][g], 0x96);
			b[g] = _mm512_xor_si512(_mm512_shuffle_epi8(c[g], bswap), rk[0][g]);
			c[g] = _mm512_add_epi64(c[g], one);
		}
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int g = 0; g < 4; g++) {
				m[g] = _mm512_aesenc_epi128(m[g], rk[r][g]);
				b[g] = _mm512_aesenc_epi128(b[g], rk[r][g]);
			}
		}
		/* Every lane loads before any lane stores (idle lanes repeat
		 * busy ones in place). */
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			y[g] = _mm512_aesenclast_epi128(m[g], rk[nr][g]);
			b[g] = _mm512_aesenclast_epi128(b[g], rk[nr][g]);
			d[4 * g] = _mm_xor_si128(_mm512_castsi512_si128(b[g]),
						 _mm_loadu_si128((const __m128i *)(ci[4 * g] + off)));
			d[4 * g + 1] = _mm_xor_si128(_mm512_extracti32x4_epi32(b[g], 1),
						     _mm_loadu_si128((const __m128i *)(ci[4 * g + 1] + off)));
			d[4 * g + 2] = _mm_xor_si128(_mm512_extracti32x4_epi32(b[g], 2),
						     _mm_loadu_si128((const __m128i *)(ci[4 * g + 2] + off)));
			d[4 * g + 3] = _mm_xor_si128(_mm512_extracti32x4_epi32(b[g], 3),
						     _mm_loadu_si128((const __m128i *)(ci[4 * g + 3] + off)));
		}
		_Pragma("GCC unroll 16")
		for (int l = 0; l < 16; l++)
			_mm_storeu_si128((__m128i *)(co[l] + off), d[l]);
	}
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		_mm512_store_si512((void *)L->mac[4 * g], y[g]);
		_mm512_store_si512((void *)L->ctr[4 * g], _mm512_shuffle_epi8(c[g], bswap));
	}
	for (int l = 0; l < 16; l++) {
		L->mac_src[l] += off;
		L->ctr_in[l] += off;
		L->ctr_out[l] += off;
	}
}

V_TARGET void tw_ccm_vaes_steps16(struct tw_ccm_lanes *l, size_t k)
{
	if (l->nr == 10)
		steps16_impl(l, k, 10);
	else
		steps16_impl(l, k, 14);
}

#endif /* __x86_64__ */
