/*
 * twag — MILENAGE batch (3GPP TS 35.206 V17.0.0 §4.1) on VAES with
 * AVX-512: four subscribers per zmm register (one per 128-bit lane, each
 * with its own key schedule), four zmm groups per pass of sixteen
 * subscribers, passes software-pipelined (see pipe_pass below).
 *
 * VAES has no AESKEYGENASSIST, so the AES-128 key schedule (FIPS 197 §5.2)
 * uses AESENCLAST: with every column of a lane equal to RotWord(w3),
 * ShiftRows is the identity and AESENCLAST(x, Rcon) = SubWord(RotWord(w3))
 * ^ Rcon in every column. The formulas and the OPc folding are those of
 * milenage_ni.c. Selected only when tw_cpu_has(TW_CPU_VAES|TW_CPU_AVX512).
 */
#include <stddef.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/milenage.h"
#include "milenage_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "../common/vec_scrub.h"

#define V_ATTR "aes,sse4.1,avx2,vaes,avx512f,avx512vl,avx512bw"
#define V_TARGET __attribute__((target(V_ATTR)))
#define V_INLINE static inline __attribute__((always_inline, target(V_ATTR)))

#define GROUPS 4
#define PER_PASS (4 * GROUPS)

/* FIPS 197 §5.2 AES-128 round-key step on four independent keys. */
V_INLINE __m512i kexp(__m512i k, int rcon)
{
	const __m512i rotw = _mm512_broadcast_i32x4(
		_mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12));
	__m512i t = _mm512_shuffle_epi8(k, rotw);

	t = _mm512_aesenclast_epi128(t, _mm512_set1_epi32(rcon));
	k = _mm512_xor_si512(k, _mm512_bslli_epi128(k, 4));
	return _mm512_ternarylogic_epi64(k, _mm512_bslli_epi128(k, 8), t, 0x96);
}

/* rot(x, r_i) ^ c_i of TS 35.206 §4.1, per 128-bit lane (see milenage_ni.c). */
struct v_prep {
	__m512i c[5], sa[5], sb[5], mhi[5], mlo[5];
	__m128i cnt_l[5], cnt_r[5];
	int s[5];
	int dflt;
};

V_INLINE void prep_consts(struct v_prep *p, const struct tw_milenage_consts *c)
{
	p->dflt = c == &tw_milenage_default_consts;
	for (int i = 0; i < 5; i++) {
		int n = c->r[i] / 8, s = c->r[i] % 8;
		uint8_t a[16], b[16];

		for (int j = 0; j < 16; j++) {
			a[j] = (uint8_t)((j + n) & 15);
			b[j] = (uint8_t)((j + n + 1) & 15);
		}
		p->c[i] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)c->c[i]));
		p->sa[i] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)a));
		p->sb[i] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b));
		p->s[i] = s;
		p->mhi[i] = _mm512_set1_epi8((char)(0xff << s));
		p->mlo[i] = _mm512_set1_epi8((char)(0xff >> (8 - s)));
		p->cnt_l[i] = _mm_cvtsi32_si128(s);
		p->cnt_r[i] = _mm_cvtsi32_si128(8 - s);
	}
}

V_INLINE __m512i rot_c(__m512i x, const struct v_prep *p, int i)
{
	if (p->dflt) {
		__m512i c = _mm512_broadcast_i32x4(
			_mm_loadu_si128((const __m128i *)tw_milenage_default_consts.c[i]));
		switch (i) {
		case 0: /* r1 = 64 */
		case 3: /* r4 = 64 */
			x = _mm512_shuffle_epi32(x, (_MM_PERM_ENUM)0x4e);
			break;
		case 2: /* r3 = 32 */
			x = _mm512_shuffle_epi32(x, (_MM_PERM_ENUM)0x39);
			break;
		case 4: /* r5 = 96 */
			x = _mm512_shuffle_epi32(x, (_MM_PERM_ENUM)0x93);
			break;
		default: /* r2 = 0 */
			break;
		}
		return _mm512_xor_si512(x, c);
	}
	__m512i a = _mm512_shuffle_epi8(x, p->sa[i]);
	if (p->s[i] != 0) {
		__m512i b = _mm512_shuffle_epi8(x, p->sb[i]);
		a = _mm512_and_si512(_mm512_sll_epi16(a, p->cnt_l[i]), p->mhi[i]);
		b = _mm512_and_si512(_mm512_srl_epi16(b, p->cnt_r[i]), p->mlo[i]);
		a = _mm512_or_si512(a, b);
	}
	return _mm512_xor_si512(a, p->c[i]);
}

/* Lanes 0..3 from four subscribers' fields at byte offset off. */
V_INLINE __m512i load4(const struct tw_milenage_batch_in *in, size_t off)
{
	const uint8_t *b = (const uint8_t *)in + off;
	const size_t st = sizeof(*in);
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)b));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + st)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + 2 * st)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(b + 3 * st)), 3);
}

/* IN1 = SQN || AMF || SQN || AMF per lane (TS 35.206 §4.1): the 16 bytes
 * ending at amf are RAND[8..15] || SQN || AMF; keep the high half twice. */
V_INLINE __m512i load_in1(const struct tw_milenage_batch_in *in)
{
	__m512i v = load4(in, offsetof(struct tw_milenage_batch_in, amf) + 2 - 16);

	return _mm512_unpackhi_epi64(v, v);
}

/*
 * Four subscribers' vectors from lanes 0..3 of OUT1..OUT4. Per lane the
 * 54-byte struct is MAC-A = OUT1[0..7] || RES = OUT2[8..15] (one 64-bit
 * blend), CK = OUT3, IK = OUT4, then IK[14..15] || AK = OUT2[0..5] (one
 * byte alignment) ending exactly at the end of ak (TS 35.206 §4.1).
 */
V_INLINE void store4(struct tw_milenage_vec *v, __m512i o1, __m512i o2, __m512i o3,
		     __m512i o4)
{
	__m512i mr = _mm512_mask_blend_epi64(0xaa, o1, o2);
	__m512i ak = _mm512_alignr_epi8(o2, o4, 14);

	_mm_storeu_si128((__m128i *)v[0].mac_a, _mm512_castsi512_si128(mr));
	_mm_storeu_si128((__m128i *)v[0].ck, _mm512_castsi512_si128(o3));
	_mm_storeu_si128((__m128i *)v[0].ik, _mm512_castsi512_si128(o4));
	_mm_storel_epi64((__m128i *)(v[0].ik + 14), _mm512_castsi512_si128(ak));
#define ST_LANE(j)                                                                    \
	do {                                                                          \
		_mm_storeu_si128((__m128i *)v[j].mac_a, _mm512_extracti32x4_epi32(mr, j)); \
		_mm_storeu_si128((__m128i *)v[j].ck, _mm512_extracti32x4_epi32(o3, j));    \
		_mm_storeu_si128((__m128i *)v[j].ik, _mm512_extracti32x4_epi32(o4, j));    \
		_mm_storel_epi64((__m128i *)(v[j].ik + 14),                             \
				 _mm512_extracti32x4_epi32(ak, j));                     \
	} while (0)
	ST_LANE(1);
	ST_LANE(2);
	ST_LANE(3);
#undef ST_LANE
}

/*
 * Software pipeline over passes of 4 * GROUPS subscribers. Stage 1 of a
 * pass runs the GROUPS key schedule chains (each a shuffle, an AESENCLAST
 * and XORs deep per round) beside the first nine rounds of TEMP = E_K(RAND
 * ^ OPc), writing the round keys (round 10 with OPc folded in) and OPc to
 * a key buffer. Stage 2 encrypts the four OUT blocks of every subscriber
 * with round keys read from memory, in two halves of eight blocks. Stage 1
 * of the next pass is interleaved with stage 2 of this one, so the
 * schedule's shuffles and the blocks' AES rounds share the cycles.
 */
struct v_keys {
	__m512i rk[11][GROUPS], opc[GROUPS];
};

/* Stage 1, before round 1: loads, round key 0, x = RAND ^ OPc ^ K. */
V_INLINE void s1_load(const struct tw_milenage_batch_in *in, struct v_keys *kb,
		      __m512i k[GROUPS], __m512i x[GROUPS])
{
#pragma GCC unroll 4
	for (int g = 0; g < GROUPS; g++) {
		const struct tw_milenage_batch_in *b = in + 4 * g;
		__m512i op_c = load4(b, offsetof(struct tw_milenage_batch_in, opc));

		k[g] = load4(b, offsetof(struct tw_milenage_batch_in, k));
		kb->opc[g] = op_c;
		kb->rk[0][g] = k[g];
		x[g] = _mm512_ternarylogic_epi64(
			load4(b, offsetof(struct tw_milenage_batch_in, rand_)), op_c, k[g], 0x96);
	}
}

/* Stage 1, round r = 1..10 (FIPS 197 §5.1, §5.2); x is left before its
 * last round, which stage 2 does with round key 10 ^ OPc. */
V_INLINE void s1_round(int r, struct v_keys *kb, __m512i k[GROUPS], __m512i x[GROUPS])
{
	static const int rcon[10] = { 0x01, 0x02, 0x04, 0x08, 0x10,
				      0x20, 0x40, 0x80, 0x1b, 0x36 };

#pragma GCC unroll 4
	for (int g = 0; g < GROUPS; g++) {
		k[g] = kexp(k[g], rcon[r - 1]);
		if (r < 10) {
			kb->rk[r][g] = k[g];
			x[g] = _mm512_aesenc_epi128(x[g], k[g]);
		} else {
			/* Round key 10 ^ OPc ends every E_K(...) ^ OPc. */
			kb->rk[10][g] = _mm512_xor_si512(k[g], kb->opc[g]);
		}
	}
}

/* Stage 2, half h (groups 2h, 2h+1): t = TEMP ^ OPc, then the inputs of
 * OUT1..OUT4 with round key 0 added. */
V_INLINE void s2_init(int h, const struct tw_milenage_batch_in *in, const struct v_keys *kb,
		      const struct v_prep *p, const __m512i x[GROUPS], __m512i y[2][4])
{
#pragma GCC unroll 2
	for (int i = 0; i < 2; i++) {
		int g = 2 * h + i;
		__m512i op_c = kb->opc[g], k0 = kb->rk[0][g];
		__m512i t = _mm512_aesenclast_epi128(x[g], kb->rk[10][g]);
		__m512i in1 = _mm512_xor_si512(load_in1(in + 4 * g), op_c);

		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc */
		y[i][0] = _mm512_ternarylogic_epi64(_mm512_xor_si512(t, op_c),
						    rot_c(in1, p, 0), k0, 0x96);
		/* OUT2..OUT4 = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc */
		y[i][1] = _mm512_xor_si512(rot_c(t, p, 1), k0);
		y[i][2] = _mm512_xor_si512(rot_c(t, p, 2), k0);
		y[i][3] = _mm512_xor_si512(rot_c(t, p, 3), k0);
	}
}

V_INLINE void s2_round(int h, int r, const struct v_keys *kb, __m512i y[2][4])
{
#pragma GCC unroll 2
	for (int i = 0; i < 2; i++) {
		__m512i kr = kb->rk[r][2 * h + i];
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[i][j] = _mm512_aesenc_epi128(y[i][j], kr);
	}
}

V_INLINE void s2_final(int h, const struct v_keys *kb, __m512i y[2][4],
		       struct tw_milenage_vec *out)
{
#pragma GCC unroll 2
	for (int i = 0; i < 2; i++) {
		__m512i kr = kb->rk[10][2 * h + i];
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[i][j] = _mm512_aesenclast_epi128(y[i][j], kr);
		store4(out + 4 * (2 * h + i), y[i][0], y[i][1], y[i][2], y[i][3]);
	}
}

/*
 * Stage 2 of the pass at in/out (its stage 1 done: x, kb[cur]); with
 * next != NULL, stage 1 of the pass at next alongside into kb[!cur], nk, nx.
 * Ten steps: stage 1 round s + 1, and two rounds of one stage-2 half.
 */
V_INLINE void pipe_pass(const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out,
			const struct tw_milenage_batch_in *next, const struct v_prep *p,
			const struct v_keys *kc, struct v_keys *kn, const __m512i x[GROUPS],
			__m512i nx[GROUPS])
{
	__m512i y[2][4], nk[GROUPS];

	if (next)
		s1_load(next, kn, nk, nx);
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
		s2_init(h, in, kc, p, x, y);
#pragma GCC unroll 5
		for (int s = 0; s < 5; s++) {
			if (next)
				s1_round(5 * h + s + 1, kn, nk, nx);
			s2_round(h, 2 * s + 1, kc, y);
			if (s < 4)
				s2_round(h, 2 * s + 2, kc, y);
		}
		s2_final(h, kc, y, out);
	}
}

V_INLINE void run(const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out,
		  size_t n, const struct v_prep *p, struct v_keys kb[2])
{
	__m512i x[GROUPS], k[GROUPS];
	int cur = 0;

	s1_load(in, &kb[0], k, x);
#pragma GCC unroll 10
	for (int r = 1; r <= 10; r++)
		s1_round(r, &kb[0], k, x);
	for (size_t i = 0; i + PER_PASS < n; i += PER_PASS) {
		__m512i nx[GROUPS];

		pipe_pass(in + i, out + i, in + i + PER_PASS, p, &kb[cur], &kb[!cur], x, nx);
		memcpy(x, nx, sizeof(x));
		cur = !cur;
	}
	pipe_pass(in + n - PER_PASS, out + n - PER_PASS, NULL, p, &kb[cur], NULL, x, NULL);
}

V_TARGET __attribute__((noinline)) static void run_default(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	struct v_keys kb[2])
{
	struct v_prep p = { .dflt = 1 };

	run(in, out, n, &p, kb);
	TW_CLEAR_ZMM();
}

V_TARGET __attribute__((noinline)) static void run_custom(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	const struct tw_milenage_consts *c, struct v_keys kb[2])
{
	struct v_prep p;

	prep_consts(&p, c);
	p.dflt = 0;
	run(in, out, n, &p, kb);
	TW_CLEAR_ZMM();
}

void tw_milenage_vaes_batch(const struct tw_milenage_batch_in *in,
			    struct tw_milenage_vec *out, size_t n,
			    const struct tw_milenage_consts *c)
{
	_Alignas(64) struct v_keys rk[2];
	size_t full = n - n % PER_PASS;

	if (full) {
		if (c == &tw_milenage_default_consts)
			run_default(in, out, full, rk);
		else
			run_custom(in, out, full, c, rk);
		tw_wipe(rk, sizeof(rk));
		/* the frame the noinline kernels above used for spills */
		tw_vec_scrub_stack(TW_VEC_SCRUB_MAX);
	}
	/* Fewer than sixteen left: the AES-NI lanes and single kernel. */
	if (n > full)
		tw_milenage_ni_batch(in + full, out + full, n - full, c);
}

#else /* !__x86_64__: never selected. */

void tw_milenage_vaes_batch(const struct tw_milenage_batch_in *in,
			    struct tw_milenage_vec *out, size_t n,
			    const struct tw_milenage_consts *c)
{
	(void)in; (void)out; (void)n; (void)c;
}

#endif
