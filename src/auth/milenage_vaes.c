/*
 * twag — MILENAGE batch (3GPP TS 35.206 V17.0.0 §4.1) on VAES with
 * AVX-512: four subscribers per zmm register (one per 128-bit lane, each
 * with its own key schedule), two zmm groups interleaved, so eight
 * subscribers' independent AES chains are in flight per pass.
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

#define V_ATTR "aes,sse4.1,avx2,vaes,avx512f,avx512vl,avx512bw"
#define V_TARGET __attribute__((target(V_ATTR)))
#define V_INLINE static inline __attribute__((always_inline, target(V_ATTR)))

#define GROUPS 2
#define PER_PASS (4 * GROUPS)

/* FIPS 197 §5.2 AES-128 round-key step on four independent keys. */
V_INLINE __m512i kexp(__m512i k, int rcon)
{
	const __m512i rotw = _mm512_broadcast_i32x4(
		_mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12));
	__m512i t = _mm512_shuffle_epi8(k, rotw);

	t = _mm512_aesenclast_epi128(t, _mm512_set1_epi32(rcon));
	k = _mm512_xor_si512(k, _mm512_bslli_epi128(k, 4));
	k = _mm512_xor_si512(k, _mm512_bslli_epi128(k, 8));
	return _mm512_xor_si512(k, t);
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

/* IN1 = SQN || AMF || SQN || AMF per lane (TS 35.206 §4.1). */
V_INLINE __m512i load_in1(const struct tw_milenage_batch_in *in)
{
	uint64_t v[4];

	for (int l = 0; l < 4; l++) {
		uint8_t b[8];

		memcpy(b, in[l].sqn, 6);
		memcpy(b + 6, in[l].amf, 2);
		memcpy(&v[l], b, 8);
	}
	return _mm512_set_epi64((long long)v[3], (long long)v[3], (long long)v[2],
				(long long)v[2], (long long)v[1], (long long)v[1],
				(long long)v[0], (long long)v[0]);
}

/* MAC-A = OUT1[0..63], RES = OUT2[64..127], CK = OUT3, IK = OUT4,
 * AK = OUT2[0..47] (TS 35.206 §4.1). */
V_INLINE void store_vec(struct tw_milenage_vec *v, __m128i o1, __m128i o2,
			__m128i o3, __m128i o4)
{
	_mm_storel_epi64((__m128i *)v->mac_a, o1);
	_mm_storel_epi64((__m128i *)v->res, _mm_unpackhi_epi64(o2, o2));
	_mm_storeu_si128((__m128i *)v->ck, o3);
	_mm_storeu_si128((__m128i *)v->ik, o4);
	/* IK[14..15] || OUT2[0..5]: ends exactly at the end of ak. */
	_mm_storel_epi64((__m128i *)(v->ik + 14), _mm_alignr_epi8(o2, o4, 14));
}

#define LANE(v, j) _mm512_extracti32x4_epi32((v), (j))

V_INLINE void pass(const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out,
		   const struct v_prep *p, __m512i rk[GROUPS][11])
{
	__m512i x[GROUPS], op_c[GROUPS], y[GROUPS][4];
	const int rcon[10] = { 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36 };

	for (int g = 0; g < GROUPS; g++) {
		const struct tw_milenage_batch_in *b = in + 4 * g;

		op_c[g] = load4(b, offsetof(struct tw_milenage_batch_in, opc));
		rk[g][0] = load4(b, offsetof(struct tw_milenage_batch_in, k));
		x[g] = load4(b, offsetof(struct tw_milenage_batch_in, rand_));
		/* TEMP = E_K(RAND ^ OPc), key schedules alongside */
		x[g] = _mm512_xor_si512(_mm512_xor_si512(x[g], op_c[g]), rk[g][0]);
	}
#pragma GCC unroll 9
	for (int r = 1; r < 10; r++) {
#pragma GCC unroll 4
		for (int g = 0; g < GROUPS; g++) {
			rk[g][r] = kexp(rk[g][r - 1], rcon[r - 1]);
			x[g] = _mm512_aesenc_epi128(x[g], rk[g][r]);
		}
	}
	for (int g = 0; g < GROUPS; g++) {
		/* Round key 10 ^ OPc ends every E_K(...) ^ OPc; t = TEMP ^ OPc. */
		rk[g][10] = _mm512_xor_si512(kexp(rk[g][9], 0x36), op_c[g]);
		__m512i t = _mm512_aesenclast_epi128(x[g], rk[g][10]);
		__m512i in1 = _mm512_xor_si512(load_in1(in + 4 * g), op_c[g]);

		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc */
		y[g][0] = _mm512_xor_si512(_mm512_xor_si512(t, op_c[g]), rot_c(in1, p, 0));
		/* OUT2..OUT4 = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc */
		y[g][1] = rot_c(t, p, 1);
		y[g][2] = rot_c(t, p, 2);
		y[g][3] = rot_c(t, p, 3);
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[g][j] = _mm512_xor_si512(y[g][j], rk[g][0]);
	}
#pragma GCC unroll 9
	for (int r = 1; r < 10; r++) {
#pragma GCC unroll 4
		for (int g = 0; g < GROUPS; g++) {
#pragma GCC unroll 4
			for (int j = 0; j < 4; j++)
				y[g][j] = _mm512_aesenc_epi128(y[g][j], rk[g][r]);
		}
	}
	for (int g = 0; g < GROUPS; g++) {
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[g][j] = _mm512_aesenclast_epi128(y[g][j], rk[g][10]);
		store_vec(&out[4 * g + 0], LANE(y[g][0], 0), LANE(y[g][1], 0),
			  LANE(y[g][2], 0), LANE(y[g][3], 0));
		store_vec(&out[4 * g + 1], LANE(y[g][0], 1), LANE(y[g][1], 1),
			  LANE(y[g][2], 1), LANE(y[g][3], 1));
		store_vec(&out[4 * g + 2], LANE(y[g][0], 2), LANE(y[g][1], 2),
			  LANE(y[g][2], 2), LANE(y[g][3], 2));
		store_vec(&out[4 * g + 3], LANE(y[g][0], 3), LANE(y[g][1], 3),
			  LANE(y[g][2], 3), LANE(y[g][3], 3));
	}
}

/* Zeroes every vector register (ymm0-15 by VZEROALL, zmm16-31 by hand). */
#define CLEAR_ZMM()                                                            \
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

V_TARGET __attribute__((noinline)) static void run_default(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	__m512i rk[GROUPS][11])
{
	struct v_prep p = { .dflt = 1 };

	for (size_t i = 0; i < n; i += PER_PASS)
		pass(in + i, out + i, &p, rk);
	CLEAR_ZMM();
}

V_TARGET __attribute__((noinline)) static void run_custom(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	const struct tw_milenage_consts *c, __m512i rk[GROUPS][11])
{
	struct v_prep p;

	prep_consts(&p, c);
	p.dflt = 0;
	for (size_t i = 0; i < n; i += PER_PASS)
		pass(in + i, out + i, &p, rk);
	CLEAR_ZMM();
}

/* Wipes the frame the noinline kernels above used for spills (the next
 * call from the same caller lands on the same stack): see milenage_ni.c. */
__attribute__((noinline)) static void scrub_stack(void)
{
	uint8_t buf[4096];

	tw_wipe(buf, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

void tw_milenage_vaes_batch(const struct tw_milenage_batch_in *in,
			    struct tw_milenage_vec *out, size_t n,
			    const struct tw_milenage_consts *c)
{
	_Alignas(64) __m512i rk[GROUPS][11];
	size_t full = n - n % PER_PASS;

	if (full) {
		if (c == &tw_milenage_default_consts)
			run_default(in, out, full, rk);
		else
			run_custom(in, out, full, c, rk);
		tw_wipe(rk, sizeof(rk));
		scrub_stack();
	}
	/* Fewer than eight left: the AES-NI lanes and single kernel. */
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
