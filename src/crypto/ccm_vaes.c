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
#include <stdbool.h>
#include <string.h>

#include "twag/bytes.h"
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


/* ---- one group of up to sixteen frames, encryption, built in place ---- */

/* Head steps: B_0 and up to three encoded-aad blocks. */
#define group tw_ccm_group

/* n <= 16 octets at p as a block, zeros after: a masked load reads (and
 * can fault on) no octet past p + n. */
V_INLINE __m128i load_n(const uint8_t *p, size_t n)
{
	return _mm_maskz_loadu_epi8((__mmask16)((1u << n) - 1), p);
}

/*
 * SP 800-38C A.2.1 B_0, A.3 Ctr_0 and A.2.2 encode(a) || A || pad of one
 * checked op (aad_len <= TW_CCM_GROUP_AAD_MAX), written straight into the
 * lane's head and counter slots: a few masked loads and ORs, no
 * byte loops or libc calls.
 */
V_INLINE void lane_prep(struct group *G, unsigned l, const struct tw_ccm_op *op,
			const unsigned nr)
{
	size_t n = op->nonce_len, q = 15 - n, a = op->aad_len;
	/* N in octets 1..n. */
	__m128i nn = _mm_bslli_si128(load_n(op->nonce, n), 1);
	/* Q as [len]_8q: its big-endian form in octets 8..15 has zeros
	 * above the q-octet field since len < 2^(8q) (checked). */
	__m128i qq = _mm_set_epi64x((long long)__builtin_bswap64((uint64_t)op->len), 0);
	unsigned flags = (a > 0 ? 0x40u : 0) | (unsigned)((op->tag_len - 2) / 2) << 3 |
			 (unsigned)(q - 1);

	_mm_store_si128((__m128i *)G->head[0][l],
			_mm_or_si128(_mm_or_si128(nn, qq), _mm_cvtsi32_si128((int)flags)));
	_mm_store_si128((__m128i *)G->a0[l], _mm_or_si128(nn, _mm_cvtsi32_si128((int)(q - 1))));
	G->nh[l] = 1;
	if (a > 0) {
		/* Block 1: [a]_16 || A_0..A_13; block k: A_{16k-2}.. . */
		size_t n0 = a < 14 ? a : 14;
		__m128i b = _mm_bslli_si128(load_n(op->aad, n0), 2);

		b = _mm_or_si128(b, _mm_cvtsi32_si128((int)__builtin_bswap16((uint16_t)a)));
		_mm_store_si128((__m128i *)G->head[1][l], b);
		G->nh[l] = (uint32_t)(1 + (a + 2 + 15) / 16);
		for (size_t k = 1; 16 * k - 2 < a; k++) {
			size_t o = 16 * k - 2, c = a - o < 16 ? a - o : 16;

			_mm_store_si128((__m128i *)G->head[k + 1][l], load_n(op->aad + o, c));
		}
	}
	for (unsigned r = 0; r <= nr; r++)
		_mm_store_si128((__m128i *)G->rk[r][l],
				_mm_load_si128((const __m128i *)op->aes->rk.ni[0][r]));
	G->len[l] = (uint32_t)op->len;
	G->in[l] = op->in;
	G->out[l] = op->out;
}

/* Lanes 4g..4g+3's 128-bit masks of a 16-bit lane mask. */
V_INLINE __mmask8 qmask(uint32_t m16, int g)
{
	uint32_t m = (m16 >> (4 * g)) & 0xf;

	return (__mmask8)((m & 1) * 3 | (m & 2) * 6 | (m & 4) * 12 | (m & 8) * 24);
}

/*
 * sw: the counters are kept byte-reversed and swapped back per block
 * (any length). Without sw (every lane's m < 256, so the counter's last
 * octet never carries) Ctr_j is kept as stored and incremented by adding
 * 1 to octet 15, i.e. 2^56 to the block's high 64-bit half: one shuffle
 * less per block on the port the AES rounds do not use.
 */
V_INLINE void group_impl(struct group *G, const unsigned nr, const int sw)
{
	const __m512i bswap = _mm512_broadcast_i32x4(
		_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	const __m512i one = sw ? _mm512_set_epi64(0, 1, 0, 1, 0, 1, 0, 1)
			       : _mm512_set_epi64(1ll << 56, 0, 1ll << 56, 0, 1ll << 56, 0,
						  1ll << 56, 0);
	const __m512i(*rk)[4] = (const __m512i(*)[4])G->rk;
	/* Round keys are read as VAESENC memory operands; this hides their
	 * invariance from GCC, which would otherwise copy all 44 (60)
	 * of them to the stack and reload them as separate uops. */
#define OPAQUE(p) __asm__("" : "+r"(p))
	const __m512i nh = _mm512_load_si512((const void *)G->nh);
	const __m512i lens = _mm512_load_si512((const void *)G->len);
	const uint8_t *const *in = G->in;
	uint8_t *const *out = G->out;
	__m512i y[4], c[4], m[4], b[4];
	uint32_t hmax = 1, full = UINT32_MAX, mmax = 0;

	for (int l = 0; l < 16; l++) {
		uint32_t f = G->len[l] / 16, mb = (G->len[l] + 15) / 16;

		hmax = G->nh[l] > hmax ? G->nh[l] : hmax;
		full = f < full ? f : full;
		mmax = mb > mmax ? mb : mmax;
	}
	/* Step 0: Y_0 = CIPH_K(B_0) beside S_0 = CIPH_K(Ctr_0). */
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		__m512i a0 = _mm512_load_si512((const void *)G->a0[4 * g]);

		c[g] = sw ? _mm512_shuffle_epi8(a0, bswap) : a0;
		b[g] = _mm512_xor_si512(a0, rk[0][g]);
		m[g] = _mm512_xor_si512(_mm512_load_si512((const void *)G->head[0][4 * g]),
					rk[0][g]);
	}
	_Pragma("GCC unroll 14")
	for (unsigned r = 1; r < nr; r++) {
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			m[g] = _mm512_aesenc_epi128(m[g], rk[r][g]);
			b[g] = _mm512_aesenc_epi128(b[g], rk[r][g]);
		}
	}
	__m512i s0[4];
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++) {
		y[g] = _mm512_aesenclast_epi128(m[g], rk[nr][g]);
		s0[g] = _mm512_aesenclast_epi128(b[g], rk[nr][g]);
	}
	/* The encoded aad: lanes with fewer blocks keep Y. */
	for (uint32_t s = 1; s < hmax; s++) {
		uint32_t act = _mm512_cmpgt_epu32_mask(nh, _mm512_set1_epi32((int)s));

		OPAQUE(rk);
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++)
			m[g] = _mm512_ternarylogic_epi32(
				y[g], _mm512_load_si512((const void *)G->head[s][4 * g]),
				rk[0][g], 0x96);
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int g = 0; g < 4; g++)
				m[g] = _mm512_aesenc_epi128(m[g], rk[r][g]);
		}
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++)
			y[g] = _mm512_mask_mov_epi64(y[g], qmask(act, g),
						     _mm512_aesenclast_epi128(m[g], rk[nr][g]));
	}
	/* Full blocks every lane has: Y = CIPH_K(Y ^ P_j) beside
	 * C_j = P_j ^ CIPH_K(Ctr_j), one offset for all 48 streams. */
	size_t off = 0;
	for (uint32_t j = 0; j < full; j++, off += 16) {
		__m512i p[4];

		OPAQUE(rk);
		/* Every lane loads before any lane stores (a short group's
		 * spare lanes repeat lane 0 in place). P stays in registers
		 * for the CTR XOR: one gather per block, and the ciphertext
		 * leaves through extracting stores (no shuffle port). */
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			__m512i k0 = rk[0][g];

			__asm__("" : "+v"(k0));
			p[g] = gather4(in + 4 * g, off);
			c[g] = _mm512_add_epi64(c[g], one);
			m[g] = _mm512_ternarylogic_epi32(y[g], p[g], k0, 0x96);
			b[g] = _mm512_xor_si512(sw ? _mm512_shuffle_epi8(c[g], bswap) : c[g], k0);
		}
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int g = 0; g < 4; g++) {
				/* One load for both chains: as two memory operands
				 * the round keys alone would take most of the two
				 * load ports. */
				__m512i k = rk[r][g];

				__asm__("" : "+v"(k));
				m[g] = _mm512_aesenc_epi128(m[g], k);
				b[g] = _mm512_aesenc_epi128(b[g], k);
			}
		}
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			__m512i kl = rk[nr][g];

			__asm__("" : "+v"(kl));
			y[g] = _mm512_aesenclast_epi128(m[g], kl);
			b[g] = _mm512_xor_si512(_mm512_aesenclast_epi128(b[g], kl), p[g]);
			_mm_storeu_si128((__m128i *)(out[4 * g] + off), _mm512_castsi512_si128(b[g]));
			_mm_storeu_si128((__m128i *)(out[4 * g + 1] + off),
					 _mm512_extracti32x4_epi32(b[g], 1));
			_mm_storeu_si128((__m128i *)(out[4 * g + 2] + off),
					 _mm512_extracti32x4_epi32(b[g], 2));
			_mm_storeu_si128((__m128i *)(out[4 * g + 3] + off),
					 _mm512_extracti32x4_epi32(b[g], 3));
		}
	}
	/*
	 * The rest: longer lanes' further full blocks and every lane's
	 * partial P_m (A.2.3: zero-padded for the MAC; C_m = P_m ^
	 * MSB_len(S_m)) through byte-masked loads and stores, which touch
	 * no octet past a frame's end; a lane past its end keeps Y and
	 * stores nothing.
	 */
	for (uint32_t j = full; j < mmax; j++, off += 16) {
		__m512i left = _mm512_sub_epi32(lens, _mm512_set1_epi32((int)off));
		uint32_t act = _mm512_cmpgt_epi32_mask(left, _mm512_setzero_si512());
		_Alignas(64) uint32_t lf[16];
		__mmask16 bm[16];
		__m512i p[4];

		OPAQUE(rk);
		left = _mm512_max_epi32(_mm512_min_epi32(left, _mm512_set1_epi32(16)),
					_mm512_setzero_si512());
		_mm512_store_si512((void *)lf, left);
		for (int l = 0; l < 16; l++)
			bm[l] = (__mmask16)((1u << lf[l]) - 1);
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			p[g] = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(bm[4 * g], in[4 * g] + off));
			p[g] = _mm512_inserti32x4(p[g], _mm_maskz_loadu_epi8(bm[4 * g + 1],
									   in[4 * g + 1] + off), 1);
			p[g] = _mm512_inserti32x4(p[g], _mm_maskz_loadu_epi8(bm[4 * g + 2],
									   in[4 * g + 2] + off), 2);
			p[g] = _mm512_inserti32x4(p[g], _mm_maskz_loadu_epi8(bm[4 * g + 3],
									   in[4 * g + 3] + off), 3);
			c[g] = _mm512_add_epi64(c[g], one);
			m[g] = _mm512_ternarylogic_epi32(y[g], p[g], rk[0][g], 0x96);
			b[g] = _mm512_xor_si512(sw ? _mm512_shuffle_epi8(c[g], bswap) : c[g],
						rk[0][g]);
		}
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int g = 0; g < 4; g++) {
				/* One load for both chains: as two memory operands
				 * the round keys alone would take most of the two
				 * load ports. */
				__m512i k = rk[r][g];

				__asm__("" : "+v"(k));
				m[g] = _mm512_aesenc_epi128(m[g], k);
				b[g] = _mm512_aesenc_epi128(b[g], k);
			}
		}
		_Pragma("GCC unroll 4")
		for (int g = 0; g < 4; g++) {
			y[g] = _mm512_mask_mov_epi64(y[g], qmask(act, g),
						     _mm512_aesenclast_epi128(m[g], rk[nr][g]));
			b[g] = _mm512_xor_si512(_mm512_aesenclast_epi128(b[g], rk[nr][g]), p[g]);
			_mm_mask_storeu_epi8(out[4 * g] + off, bm[4 * g], _mm512_castsi512_si128(b[g]));
			_mm_mask_storeu_epi8(out[4 * g + 1] + off, bm[4 * g + 1],
					     _mm512_extracti32x4_epi32(b[g], 1));
			_mm_mask_storeu_epi8(out[4 * g + 2] + off, bm[4 * g + 2],
					     _mm512_extracti32x4_epi32(b[g], 2));
			_mm_mask_storeu_epi8(out[4 * g + 3] + off, bm[4 * g + 3],
					     _mm512_extracti32x4_epi32(b[g], 3));
		}
	}
	/* §6.1 step 9, before MSB_Tlen: T ^ S_0. */
	_Pragma("GCC unroll 4")
	for (int g = 0; g < 4; g++)
		_mm512_store_si512((void *)G->t[4 * g], _mm512_xor_si512(y[g], s0[g]));
#undef OPAQUE
}

/* Out of line: the lanes' state is reached through one pointer, which
 * keeps GCC from spilling the gathered blocks through the stack. */
static __attribute__((noinline)) V_TARGET void group10(struct group *G)
{
	group_impl(G, 10, 1);
}

static __attribute__((noinline)) V_TARGET void group14(struct group *G)
{
	group_impl(G, 14, 1);
}

static __attribute__((noinline)) V_TARGET void group10_short(struct group *G)
{
	group_impl(G, 10, 0);
}

static __attribute__((noinline)) V_TARGET void group14_short(struct group *G)
{
	group_impl(G, 14, 0);
}

V_TARGET void tw_ccm_vaes_group(struct tw_ccm_group *G, unsigned nr)
{
	uint32_t lmax = 0;

	for (int l = 0; l < 16; l++)
		lmax = G->len[l] > lmax ? G->len[l] : lmax;
	/* m = ceil(len / 16) <= 255: Ctr_m's last octet does not carry. */
	bool short_ = lmax <= 255 * 16;

	if (nr == 10)
		(short_ ? group10_short : group10)(G);
	else
		(short_ ? group14_short : group14)(G);
}

V_TARGET void tw_ccm_vaes_enc16(struct tw_ccm_op *const *ops, unsigned n, unsigned nr)
{
	struct group G;

	for (unsigned l = 0; l < 16; l++)
		lane_prep(&G, l, ops[l < n ? l : 0], nr);
	tw_ccm_vaes_group(&G, nr);
	for (unsigned l = 0; l < n; l++) {
		struct tw_ccm_op *op = ops[l];

		_mm_mask_storeu_epi8(op->tag, (__mmask16)((1u << op->tag_len) - 1),
				     _mm_load_si128((const __m128i *)G.t[l]));
		op->status = TW_OK;
	}
	tw_wipe(&G, sizeof(G));
}

#endif /* __x86_64__ */
