/*
 * twag — MILENAGE (3GPP TS 35.206 V17.0.0 §4.1) on AES-NI: one subscriber
 * with the key schedule and every block in xmm registers, and a multi-lane
 * batch that interleaves several subscribers' independent AES chains.
 *
 * The AES-128 key schedule (FIPS 197 §5.2) is computed round by round while
 * TEMP is encrypted with it, then OUT1..OUT5 (independent once TEMP exists)
 * run as interleaved chains. Two identities save work:
 *   E_K(x) ^ OPc is AESENCLAST with round key 10 ^ OPc, and
 *   TEMP ^ OPc (what OUT2..OUT5 rotate) is E_K(RAND ^ OPc) ^ OPc,
 * so TEMP itself is never materialised; OUT1's input is
 *   TEMP ^ rot(IN1 ^ OPc, r1) ^ c1 = (TEMP ^ OPc) ^ OPc ^ rot(IN1 ^ OPc, r1) ^ c1.
 * The kernels clear the vector registers they used before returning.
 */
#include <stddef.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/milenage.h"
#include "milenage_internal.h"
#include "../common/vec_scrub.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define NI_TARGET __attribute__((target("aes,sse4.1")))
#define NI_INLINE static inline __attribute__((always_inline, target("aes,sse4.1")))

/*
 * Round-key expansion step of FIPS 197 §5.2 for AES-128: w[i] ^= w[i-1]
 * prefix, then ^ SubWord(RotWord(w3)) ^ Rcon. AESKEYGENASSIST is slow on
 * recent Intel cores (several uops, low throughput), so SubWord is done by
 * AESENCLAST instead: with every column equal to RotWord(w3), ShiftRows is
 * the identity and AESENCLAST(x, Rcon) = SubWord(RotWord(w3)) ^ Rcon.
 */
NI_INLINE __m128i kexp(__m128i key, int rcon)
{
	const __m128i rotw = _mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12,
					   13, 14, 15, 12, 13, 14, 15, 12);
	__m128i t = _mm_aesenclast_si128(_mm_shuffle_epi8(key, rotw), _mm_set1_epi32(rcon));

	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 8));
	return _mm_xor_si128(key, t);
}
#define KEXP(k, rcon) kexp((k), (rcon))

/*
 * Operator constants prepared for the kernel: c_i, and rot(x, r_i) (TS
 * 35.206 §4.1: rotate the 128-bit x by r_i bits towards the MSB) as a byte
 * rotation by n = r/8 (PSHUFB control, byte j <- x[j + n]) and, if s = r%8
 * is not 0, a merge of the next byte's top bits. r is public: branching on
 * it is fine.
 */
struct ni_prep {
	__m128i c[5], sa[5], sb[5], mhi[5], mlo[5], cnt_l[5], cnt_r[5];
	int s[5];
	int dflt;
};

NI_INLINE void prep_consts(struct ni_prep *p, const struct tw_milenage_consts *c)
{
	p->dflt = c == &tw_milenage_default_consts;
	for (int i = 0; i < 5; i++) {
		int n = c->r[i] / 8, s = c->r[i] % 8;
		uint8_t a[16], b[16];

		for (int j = 0; j < 16; j++) {
			a[j] = (uint8_t)((j + n) & 15);
			b[j] = (uint8_t)((j + n + 1) & 15);
		}
		p->c[i] = _mm_loadu_si128((const __m128i *)c->c[i]);
		p->sa[i] = _mm_loadu_si128((const __m128i *)a);
		p->sb[i] = _mm_loadu_si128((const __m128i *)b);
		p->s[i] = s;
		p->mhi[i] = _mm_set1_epi8((char)(0xff << s));
		p->mlo[i] = _mm_set1_epi8((char)(0xff >> (8 - s)));
		p->cnt_l[i] = _mm_cvtsi32_si128(s);
		p->cnt_r[i] = _mm_cvtsi32_si128(8 - s);
	}
}

/* rot(x, r_i) ^ c_i. With the default constants (r = 64, 0, 32, 64, 96 and
 * i a compile-time constant) this is at most one PSHUFD and one XOR. The
 * defaults are spelled out here as vector constants (c_i = 1 << (i - 2) in
 * the last byte, TS 35.206 §4.1) so they need no unaligned loads. */
NI_INLINE __m128i rot_c(__m128i x, const struct ni_prep *p, int i)
{
	if (p->dflt) {
		switch (i) {
		case 0: /* r1 = 64, c1 = 0 */
			return _mm_shuffle_epi32(x, 0x4e);
		case 1: /* r2 = 0, c2 = 0..01 */
			return _mm_xor_si128(x, _mm_set_epi32(0x01000000, 0, 0, 0));
		case 2: /* r3 = 32 (byte j <- byte j + 4), c3 = 0..02 */
			return _mm_xor_si128(_mm_shuffle_epi32(x, 0x39),
					     _mm_set_epi32(0x02000000, 0, 0, 0));
		case 3: /* r4 = 64, c4 = 0..04 */
			return _mm_xor_si128(_mm_shuffle_epi32(x, 0x4e),
					     _mm_set_epi32(0x04000000, 0, 0, 0));
		default: /* r5 = 96 (byte j <- byte j + 12), c5 = 0..08 */
			return _mm_xor_si128(_mm_shuffle_epi32(x, 0x93),
					     _mm_set_epi32(0x08000000, 0, 0, 0));
		}
	}
	__m128i a = _mm_shuffle_epi8(x, p->sa[i]);
	if (p->s[i] != 0) {
		__m128i b = _mm_shuffle_epi8(x, p->sb[i]);
		a = _mm_and_si128(_mm_sll_epi16(a, p->cnt_l[i]), p->mhi[i]);
		b = _mm_and_si128(_mm_srl_epi16(b, p->cnt_r[i]), p->mlo[i]);
		a = _mm_or_si128(a, b);
	}
	return _mm_xor_si128(a, p->c[i]);
}

/* IN1 = SQN || AMF || SQN || AMF (TS 35.206 §4.1), assembled in a general
 * register so that no copy of it lands on the stack. */
NI_INLINE __m128i load_in1(const uint8_t *sqn, const uint8_t *amf)
{
	uint32_t s03;
	uint16_t s45, a01;

	memcpy(&s03, sqn, 4);
	memcpy(&s45, sqn + 4, 2);
	memcpy(&a01, amf, 2);
	return _mm_set1_epi64x((long long)((uint64_t)s03 | (uint64_t)s45 << 32 |
					   (uint64_t)a01 << 48));
}

/*
 * Loads 16 bytes again from an input buffer. The empty asm hides that the
 * pointer is the one loaded from before, so the compiler reads the caller's
 * buffer instead of keeping the first load alive in a register for the
 * whole kernel (which would push round keys out to the stack).
 */
NI_INLINE __m128i reload(const uint8_t *p)
{
	__asm__("" : "+r"(p));
	return _mm_loadu_si128((const __m128i *)p);
}

/*
 * AES-128 key schedule (FIPS 197 §5.2) with a 3-cycle loop-carried chain.
 * With w0..w3 the words of round key i and b = SubWord(RotWord(w3)) ^ Rcon,
 * round key i+1 is (w0^b, w0^w1^b, w0^w1^w2^b, w0^w1^w2^w3^b); only its w3
 * feeds the next S-box. Carry V_i = every column RotWord^m_i(w3 of key i),
 * m_i = -i mod 4:
 *  - every column equal, so ShiftRows is the identity and SubBytes commutes
 *    with RotWord: AESENCLAST(V_i, X) = every column RotWord^m_(i+1)(b ^ Rcon)
 *    ^ X. X = Rcon (rotated) ^ the rotated broadcast of w0^w1^w2^w3 then
 *    yields V_(i+1) in one instruction;
 *  - that word sum of key i equals w3 of key i-3 (the b terms cancel in
 *    fours), so for i >= 3 it is V_(i-3) itself (rotation -4 = 0): the
 *    AESENCLAST key is ready three rounds ahead, off the chain.
 * The round keys come off the chain: key i = broadcast(w3_i) ^ Q(key i-1)
 * with Q(w) = (w1^w2^w3, w2^w3, w3, 0), Q(broadcast x) = (x, 0, x, 0) and
 * Q(Q(w)) = (w2, w3, 0, 0), so each is two shuffles of V and a byte shift
 * of an older key.
 */
#define BCB(c, m, j) ((char)(4 * (c) + (((j) + (m)) & 3)))
/* PSHUFB control: every column = RotWord^m(word c). */
#define BCAST(c, m)                                                            \
	_mm_setr_epi8(BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3),  \
		      BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3),  \
		      BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3),  \
		      BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3))
/* The same in columns 0 and 2, zero in columns 1 and 3. */
#define QBCAST(c, m)                                                           \
	_mm_setr_epi8(BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3),  \
		      -128, -128, -128, -128,                                  \
		      BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3),  \
		      -128, -128, -128, -128)
/* Rcon of step i -> i+1 at byte -m_(i+1) = (i+1) mod 4 of every column. */
#define RCON(i, rc) _mm_set1_epi32((int)((uint32_t)(rc) << (8 * (((i) + 1) & 3))))

/*
 * Round keys 0..9 into rk, and round key 10 as bk10 ^ q10 (bk10 the last
 * product of the chain, so callers fold their constants into q10 first);
 * *x9 = the state after round 9 of E_K(x), x the plaintext.
 */
NI_INLINE void sched_enc9(__m128i rk[10], __m128i *bk10, __m128i *q10,
			  __m128i *x9, const uint8_t *k, __m128i x)
{
	__m128i k0 = _mm_loadu_si128((const __m128i *)k);
	/* Word sums of key 0 for the first three steps (later ones are V_(i-3)). */
	__m128i s = _mm_xor_si128(k0, _mm_srli_si128(k0, 4));
	__m128i s2 = _mm_xor_si128(s, _mm_srli_si128(s, 8));
	__m128i a = _mm_xor_si128(k0, _mm_srli_si128(k0, 8));
	/* v = V_i, kk[j] = the AESENCLAST key of step j, qz = Q(broadcast(w3_i)) */
	__m128i v0, v, vn, kk[10], qz;
	static const int rcon[10] = { 0x01, 0x02, 0x04, 0x08, 0x10,
				      0x20, 0x40, 0x80, 0x1b, 0x36 };

	rk[0] = k0;
	x = _mm_xor_si128(x, k0);
	v0 = _mm_shuffle_epi32(k0, 0xff);
	v = _mm_xor_si128(_mm_aesenclast_si128(v0, RCON(0, rcon[0])),
			  _mm_shuffle_epi8(s2, BCAST(0, 3)));
	kk[1] = _mm_xor_si128(RCON(1, rcon[1]), _mm_shuffle_epi8(a, BCAST(1, 2)));
	kk[2] = _mm_xor_si128(RCON(2, rcon[2]), _mm_shuffle_epi8(s2, BCAST(2, 1)));
	kk[3] = _mm_xor_si128(RCON(3, rcon[3]), v0);
	/* Step 1 -> 2, then key 1 = broadcast(w3_1) ^ Q(key 0). */
	vn = _mm_aesenclast_si128(v, kk[1]);
	kk[4] = _mm_xor_si128(RCON(4, rcon[4]), v);
	rk[1] = _mm_xor_si128(_mm_shuffle_epi8(v, BCAST(0, 1)), _mm_srli_si128(s2, 4));
	qz = _mm_shuffle_epi8(v, QBCAST(0, 1));
	x = _mm_aesenc_si128(x, rk[1]);
	v = vn;
	/* Step i -> i+1; key i = broadcast(w3_i) ^ Q(broadcast(w3_(i-1))) ^
	 * Q(Q(key i-2)); V_i is rotated by m_i = -i. Every column of V_i is the
	 * same, so the shuffles read a column chosen (COL) so that no control is
	 * used twice (the three above included): the compiler then keeps them
	 * as memory operands instead of holding them in registers the round
	 * keys need. */
#define COL(i) ((i) / 4 + ((i) % 4 == 3 || ((i) % 4 == 1 && (i) >= 9) ||     \
			   ((i) % 4 == 2 && (i) >= 6)))
#define STEP(i)                                                                \
	do {                                                                   \
		if ((i) < 10)                                                  \
			vn = _mm_aesenclast_si128(v, kk[(i) < 10 ? (i) : 0]);  \
		if ((i) + 3 < 10)                                              \
			kk[(i) + 3 < 10 ? (i) + 3 : 0] = _mm_xor_si128(        \
				RCON((i) + 3, rcon[(i) + 3 < 10 ? (i) + 3 : 0]), v); \
		rk[i] = _mm_xor_si128(_mm_shuffle_epi8(v, BCAST(COL(i), (i) & 3)), \
				      _mm_xor_si128(qz, _mm_srli_si128(rk[(i) - 2], 8))); \
		qz = _mm_shuffle_epi8(v, QBCAST((i) / 4, (i) & 3));            \
		x = _mm_aesenc_si128(x, rk[i]);                                \
		v = vn;                                                        \
	} while (0)
	STEP(2);
	STEP(3);
	STEP(4);
	STEP(5);
	STEP(6);
	STEP(7);
	STEP(8);
	STEP(9);
#undef STEP
	*q10 = _mm_xor_si128(qz, _mm_srli_si128(rk[8], 8));
	*bk10 = _mm_shuffle_epi8(v, BCAST(COL(10), 2));
	*x9 = x;
#undef COL
}

/*
 * One subscriber: the outputs OUT_i for the bits of mask (a compile-time
 * constant at every call site, so unused chains vanish).
 *
 * With the default constants (every r_i a multiple of 32) TEMP's last round
 * and each OUT_i's key-0 whitening merge into one AESENCLAST: rotating the
 * columns commutes with ShiftRows and SubBytes, so
 *   rot(TEMP ^ OPc, r) ^ c ^ K0 = AESENCLAST(rot(S9, r), rot(K10 ^ OPc, r) ^ c ^ K0)
 * with S9 the state before TEMP's last round; the key operand is
 * broadcast(w3 of K10) (unchanged by rot) ^ a part known early.
 */
NI_INLINE void core1(__m128i o[5], unsigned mask, const uint8_t *k,
		     const uint8_t *opc, const uint8_t *rand_, const uint8_t *sqn,
		     const uint8_t *amf, const struct ni_prep *p)
{
	__m128i rk[10], bk10, q10, x9, rk10;
	__m128i op_c = _mm_loadu_si128((const __m128i *)opc);
	__m128i y1 = op_c, y2 = op_c, y3 = op_c, y4 = op_c, y5 = op_c;

	/* TEMP = E_K(RAND ^ OPc), the key schedule computed alongside. */
	sched_enc9(rk, &bk10, &q10, &x9, k,
		   _mm_xor_si128(_mm_loadu_si128((const __m128i *)rand_), op_c));
	if (p->dflt) {
		/* OPc and round key 0 (K) are read again from the caller's
		 * buffers at each use rather than held in registers across the
		 * whole kernel, which would push blocks out to the stack. */
		/* OUT1: TEMP ^ rot(IN1 ^ OPc, 64) ^ K0 (c1 = 0), with TEMP =
		 * AESENCLAST(S9, round key 10). */
		if (mask & TW_MILENAGE_OUT1) {
			__m128i in1 = _mm_xor_si128(load_in1(sqn, amf), reload(opc));

			y1 = _mm_aesenclast_si128(x9, _mm_xor_si128(bk10, _mm_xor_si128(
				q10, _mm_xor_si128(reload(k), _mm_shuffle_epi32(in1, 0x4e)))));
		}
		/* From here on q10 ^ OPc: the rest use TEMP ^ OPc. */
		q10 = _mm_xor_si128(q10, reload(opc));
		/* OUT2: rot(TEMP ^ OPc, 0) ^ c2 ^ K0 */
		if (mask & TW_MILENAGE_OUT2)
			y2 = _mm_aesenclast_si128(x9, _mm_xor_si128(bk10, _mm_xor_si128(
				q10, _mm_xor_si128(reload(k), _mm_set_epi32(0x01000000, 0, 0, 0)))));
		/* OUT3: r3 = 32 (byte j <- byte j + 4), c3 = 0..02 */
		if (mask & TW_MILENAGE_OUT3)
			y3 = _mm_aesenclast_si128(_mm_shuffle_epi32(x9, 0x39), _mm_xor_si128(
				bk10, _mm_xor_si128(_mm_shuffle_epi32(q10, 0x39), _mm_xor_si128(
				reload(k), _mm_set_epi32(0x02000000, 0, 0, 0)))));
		/* OUT4: r4 = 64, c4 = 0..04 */
		if (mask & TW_MILENAGE_OUT4)
			y4 = _mm_aesenclast_si128(_mm_shuffle_epi32(x9, 0x4e), _mm_xor_si128(
				bk10, _mm_xor_si128(_mm_shuffle_epi32(q10, 0x4e), _mm_xor_si128(
				reload(k), _mm_set_epi32(0x04000000, 0, 0, 0)))));
		/* OUT5: r5 = 96 (byte j <- byte j + 12), c5 = 0..08 */
		if (mask & TW_MILENAGE_OUT5)
			y5 = _mm_aesenclast_si128(_mm_shuffle_epi32(x9, 0x93), _mm_xor_si128(
				bk10, _mm_xor_si128(_mm_shuffle_epi32(q10, 0x93), _mm_xor_si128(
				reload(k), _mm_set_epi32(0x08000000, 0, 0, 0)))));
		/* Round key 10 ^ OPc: every OUT_i = E_K(...) ^ OPc ends with
		 * it. Formed last, so that bk10 and q10 die here. */
		rk10 = _mm_xor_si128(bk10, q10);
	} else {
		op_c = reload(opc);
		rk[0] = reload(k);
		rk10 = _mm_xor_si128(bk10, _mm_xor_si128(q10, op_c));
		/* t = TEMP ^ OPc */
		__m128i t = _mm_aesenclast_si128(x9, rk10);

		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc */
		if (mask & TW_MILENAGE_OUT1)
			y1 = _mm_xor_si128(_mm_xor_si128(t, op_c), rot_c(_mm_xor_si128(
				load_in1(sqn, amf), op_c), p, 0));
		/* OUT2..OUT5 = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc */
		if (mask & TW_MILENAGE_OUT2)
			y2 = rot_c(t, p, 1);
		if (mask & TW_MILENAGE_OUT3)
			y3 = rot_c(t, p, 2);
		if (mask & TW_MILENAGE_OUT4)
			y4 = rot_c(t, p, 3);
		if (mask & TW_MILENAGE_OUT5)
			y5 = rot_c(t, p, 4);
#define R5X(key)                                                               \
	do {                                                                   \
		if (mask & TW_MILENAGE_OUT1) y1 = _mm_xor_si128(y1, key);      \
		if (mask & TW_MILENAGE_OUT2) y2 = _mm_xor_si128(y2, key);      \
		if (mask & TW_MILENAGE_OUT3) y3 = _mm_xor_si128(y3, key);      \
		if (mask & TW_MILENAGE_OUT4) y4 = _mm_xor_si128(y4, key);      \
		if (mask & TW_MILENAGE_OUT5) y5 = _mm_xor_si128(y5, key);      \
	} while (0)
		R5X(rk[0]);
#undef R5X
	}

#define R5(op, key)                                                            \
	do {                                                                   \
		if (mask & TW_MILENAGE_OUT1) y1 = op(y1, key);                 \
		if (mask & TW_MILENAGE_OUT2) y2 = op(y2, key);                 \
		if (mask & TW_MILENAGE_OUT3) y3 = op(y3, key);                 \
		if (mask & TW_MILENAGE_OUT4) y4 = op(y4, key);                 \
		if (mask & TW_MILENAGE_OUT5) y5 = op(y5, key);                 \
	} while (0)
	R5(_mm_aesenc_si128, rk[1]);
	R5(_mm_aesenc_si128, rk[2]);
	R5(_mm_aesenc_si128, rk[3]);
	R5(_mm_aesenc_si128, rk[4]);
	R5(_mm_aesenc_si128, rk[5]);
	R5(_mm_aesenc_si128, rk[6]);
	R5(_mm_aesenc_si128, rk[7]);
	R5(_mm_aesenc_si128, rk[8]);
	R5(_mm_aesenc_si128, rk[9]);
	R5(_mm_aesenclast_si128, rk10);
#undef R5
	o[0] = y1;
	o[1] = y2;
	o[2] = y3;
	o[3] = y4;
	o[4] = y5;
}

NI_INLINE void store_outs(uint8_t out[5][16], unsigned mask, const __m128i o[5])
{
	for (int i = 0; i < 5; i++)
		if (mask & (1u << i))
			_mm_storeu_si128((__m128i *)out[i], o[i]);
}

/* Writes MAC-A = OUT1[0..63], RES = OUT2[64..127], CK = OUT3, IK = OUT4,
 * AK = OUT2[0..47] (TS 35.206 §4.1). */
NI_INLINE void store_vec(struct tw_milenage_vec *v, __m128i o1, __m128i o2,
			 __m128i o3, __m128i o4)
{
	_mm_storel_epi64((__m128i *)v->mac_a, o1);
	_mm_storel_epi64((__m128i *)v->res, _mm_unpackhi_epi64(o2, o2));
	_mm_storeu_si128((__m128i *)v->ck, o3);
	_mm_storeu_si128((__m128i *)v->ik, o4);
	/* ak is the struct's last 6 bytes: one 8-byte store of IK[14..15] ||
	 * OUT2[0..5] ends exactly there (no temporary on the stack). */
	_Static_assert(offsetof(struct tw_milenage_vec, ak) ==
		       offsetof(struct tw_milenage_vec, ik) + 16, "vec layout");
	_mm_storel_epi64((__m128i *)(v->ik + 14), _mm_alignr_epi8(o2, o4, 14));
}

#define OUTS_CASE(m)                                                           \
	case (m): {                                                            \
		__m128i o[5];                                                  \
		core1(o, (m), k, opc, rand_, sqn, amf, &p);                    \
		store_outs(out, (m), o);                                       \
		break;                                                         \
	}

NI_TARGET __attribute__((noinline)) static void outs_default(
	uint8_t out[5][16], unsigned mask, const uint8_t *k, const uint8_t *opc,
	const uint8_t *rand_, const uint8_t *sqn, const uint8_t *amf)
{
	struct ni_prep p = { .dflt = 1 };

	switch (mask) {
		OUTS_CASE(TW_MILENAGE_OUT1)
		OUTS_CASE(TW_MILENAGE_OUT2 | TW_MILENAGE_OUT3 | TW_MILENAGE_OUT4)
		OUTS_CASE(TW_MILENAGE_OUT5)
	default:
		OUTS_CASE(0x1f)
	}
	TW_CLEAR_XMM();
}

NI_TARGET __attribute__((noinline)) static void outs_custom(
	uint8_t out[5][16], unsigned mask, const uint8_t *k, const uint8_t *opc,
	const uint8_t *rand_, const uint8_t *sqn, const uint8_t *amf,
	const struct tw_milenage_consts *c)
{
	struct ni_prep p;
	__m128i o[5];

	prep_consts(&p, c);
	p.dflt = 0;
	core1(o, mask & 0x1f, k, opc, rand_, sqn, amf, &p);
	store_outs(out, mask, o);
	TW_CLEAR_XMM();
}

/*
 * generate_default() is a leaf without a frame: what the compiler could not
 * keep in the 16 xmm registers (two blocks for a few cycles, with GCC 12)
 * it spills to the 128-byte red zone below %rsp. Zeroing the whole red zone
 * (after TW_CLEAR_XMM, so xmm0 is 0) erases them for 8 stores, far cheaper
 * than tw_vec_scrub_stack(); checked with objdump that the function has no frame.
 */
#define CLEAR_RED_ZONE()                                                       \
	__asm__ volatile("movups %%xmm0, -16(%%rsp)\n\tmovups %%xmm0, -32(%%rsp)\n\t" \
			 "movups %%xmm0, -48(%%rsp)\n\tmovups %%xmm0, -64(%%rsp)\n\t" \
			 "movups %%xmm0, -80(%%rsp)\n\tmovups %%xmm0, -96(%%rsp)\n\t" \
			 "movups %%xmm0, -112(%%rsp)\n\tmovups %%xmm0, -128(%%rsp)" \
			 ::: "memory")

/*
 * Where a kernel could not keep everything in registers, the compiler
 * spilled intermediate blocks to its stack frame. The kernels are noinline
 * leaves called from the functions below, so the stack the next call from
 * the same caller lands on covers theirs: tw_vec_scrub_stack(n) wipes n
 * octets there, n covering the kernel's frame. (The hot path
 * generate_default() spills nothing secret and skips this: its spills stay
 * in its red zone, which CLEAR_RED_ZONE wipes.)
 */
enum { SCRUB_BYTES = 2048 };

NI_TARGET void tw_milenage_ni_outs(uint8_t out[5][16], unsigned mask,
				   const uint8_t k[16], const uint8_t opc[16],
				   const uint8_t rand_[16], const uint8_t *sqn,
				   const uint8_t *amf, const struct tw_milenage_consts *c)
{
	if (c == &tw_milenage_default_consts) {
		outs_default(out, mask, k, opc, rand_, sqn, amf);
		tw_vec_scrub_stack(384); /* frame 0xb8 + saved registers */
	} else {
		outs_custom(out, mask, k, opc, rand_, sqn, amf, c);
		tw_vec_scrub_stack(1024); /* frame 0x2f8 + saved registers */
	}
}

NI_TARGET void tw_milenage_ni_opc(uint8_t opc[16], const uint8_t k[16],
				  const uint8_t op[16])
{
	__m128i rk = _mm_loadu_si128((const __m128i *)k);
	__m128i o = _mm_loadu_si128((const __m128i *)op);
	/* TS 35.206 §4.1: OPc = OP ^ E_K(OP) */
	__m128i x = _mm_xor_si128(o, rk);

	rk = KEXP(rk, 0x01); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x02); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x04); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x08); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x10); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x20); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x40); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x80); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x1b); x = _mm_aesenc_si128(x, rk);
	rk = KEXP(rk, 0x36);
	x = _mm_aesenclast_si128(x, _mm_xor_si128(rk, o));
	_mm_storeu_si128((__m128i *)opc, x);
	TW_CLEAR_XMM();
}

NI_TARGET __attribute__((noinline)) static void generate_default(
	struct tw_milenage_vec *v, const uint8_t *k, const uint8_t *opc,
	const uint8_t *rand_, const uint8_t *sqn, const uint8_t *amf)
{
	struct ni_prep p = { .dflt = 1 };
	__m128i o[5];

	core1(o, 0x0f, k, opc, rand_, sqn, amf, &p);
	store_vec(v, o[0], o[1], o[2], o[3]);
	TW_CLEAR_XMM();
	CLEAR_RED_ZONE();
}

NI_TARGET __attribute__((noinline)) static void generate_custom(
	struct tw_milenage_vec *v, const uint8_t *k, const uint8_t *opc,
	const uint8_t *rand_, const uint8_t *sqn, const uint8_t *amf,
	const struct tw_milenage_consts *c)
{
	struct ni_prep p;
	__m128i o[5];

	prep_consts(&p, c);
	p.dflt = 0;
	core1(o, 0x0f, k, opc, rand_, sqn, amf, &p);
	store_vec(v, o[0], o[1], o[2], o[3]);
	TW_CLEAR_XMM();
}

NI_TARGET void tw_milenage_ni_generate(struct tw_milenage_vec *v, const uint8_t k[16],
				       const uint8_t opc[16], const uint8_t rand_[16],
				       const uint8_t sqn[6], const uint8_t amf[2],
				       const struct tw_milenage_consts *c)
{
	if (c == &tw_milenage_default_consts) {
		generate_default(v, k, opc, rand_, sqn, amf);
		return;
	}
	generate_custom(v, k, opc, rand_, sqn, amf, c);
	tw_vec_scrub_stack(1024); /* frame 0x2b8 + saved registers */
}

/*
 * The batch: L subscribers per pass. Their key schedules are independent
 * chains, as are their TEMPs and then their 4*L OUT blocks, so the AES unit
 * stays busy instead of waiting on one chain's latency. The L key
 * schedules live in a stack array that is wiped before returning.
 */
#define LANES 4

NI_INLINE void batch_core(const struct tw_milenage_batch_in *in,
			  struct tw_milenage_vec *out, const struct ni_prep *p,
			  __m128i rk[LANES][11])
{
	__m128i x[LANES], op_c[LANES], y[LANES][4];

#pragma GCC unroll 8
	for (int l = 0; l < LANES; l++) {
		op_c[l] = _mm_loadu_si128((const __m128i *)in[l].opc);
		rk[l][0] = _mm_loadu_si128((const __m128i *)in[l].k);
		x[l] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)in[l].rand_), op_c[l]);
		x[l] = _mm_xor_si128(x[l], rk[l][0]);
	}
	/* TEMP = E_K(RAND ^ OPc) per lane, key schedules alongside. */
#define KROUND(r, rcon)                                                        \
	_Pragma("GCC unroll 8") for (int l = 0; l < LANES; l++) {              \
		rk[l][r] = KEXP(rk[l][r - 1], rcon);                           \
		x[l] = _mm_aesenc_si128(x[l], rk[l][r]);                       \
	}
	KROUND(1, 0x01)
	KROUND(2, 0x02)
	KROUND(3, 0x04)
	KROUND(4, 0x08)
	KROUND(5, 0x10)
	KROUND(6, 0x20)
	KROUND(7, 0x40)
	KROUND(8, 0x80)
	KROUND(9, 0x1b)
#undef KROUND
#pragma GCC unroll 8
	for (int l = 0; l < LANES; l++) {
		rk[l][10] = _mm_xor_si128(KEXP(rk[l][9], 0x36), op_c[l]);
		/* t = TEMP ^ OPc */
		__m128i t = _mm_aesenclast_si128(x[l], rk[l][10]);
		__m128i in1 = _mm_xor_si128(load_in1(in[l].sqn, in[l].amf), op_c[l]);

		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc */
		y[l][0] = _mm_xor_si128(_mm_xor_si128(t, op_c[l]), rot_c(in1, p, 0));
		/* OUT2..OUT4 = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc */
		y[l][1] = rot_c(t, p, 1);
		y[l][2] = rot_c(t, p, 2);
		y[l][3] = rot_c(t, p, 3);
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[l][j] = _mm_xor_si128(y[l][j], rk[l][0]);
	}
#pragma GCC unroll 9
	for (int r = 1; r < 10; r++) {
#pragma GCC unroll 8
		for (int l = 0; l < LANES; l++) {
#pragma GCC unroll 4
			for (int j = 0; j < 4; j++)
				y[l][j] = _mm_aesenc_si128(y[l][j], rk[l][r]);
		}
	}
#pragma GCC unroll 8
	for (int l = 0; l < LANES; l++) {
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			y[l][j] = _mm_aesenclast_si128(y[l][j], rk[l][10]);
		store_vec(&out[l], y[l][0], y[l][1], y[l][2], y[l][3]);
	}
}

NI_TARGET __attribute__((noinline)) static void batch_default(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	__m128i rk[LANES][11])
{
	struct ni_prep p = { .dflt = 1 };

	for (size_t i = 0; i < n; i += LANES)
		batch_core(in + i, out + i, &p, rk);
	TW_CLEAR_XMM();
}

NI_TARGET __attribute__((noinline)) static void batch_custom(
	const struct tw_milenage_batch_in *in, struct tw_milenage_vec *out, size_t n,
	const struct tw_milenage_consts *c, __m128i rk[LANES][11])
{
	struct ni_prep p;

	prep_consts(&p, c);
	p.dflt = 0;
	for (size_t i = 0; i < n; i += LANES)
		batch_core(in + i, out + i, &p, rk);
	TW_CLEAR_XMM();
}

NI_TARGET void tw_milenage_ni_batch(const struct tw_milenage_batch_in *in,
				    struct tw_milenage_vec *out, size_t n,
				    const struct tw_milenage_consts *c)
{
	__m128i rk[LANES][11];
	size_t full = n - n % LANES;

	if (full) {
		if (c == &tw_milenage_default_consts)
			batch_default(in, out, full, rk);
		else
			batch_custom(in, out, full, c, rk);
		tw_wipe(rk, sizeof(rk));
		tw_vec_scrub_stack(SCRUB_BYTES); /* frames up to 0x5b0 */
	}
	/* The remainder, one subscriber at a time. */
	for (size_t i = full; i < n; i++)
		tw_milenage_ni_generate(&out[i], in[i].k, in[i].opc, in[i].rand_,
					in[i].sqn, in[i].amf, c);
}

/*
 * One subscriber on 256-bit VAES (default constants only): the same
 * computation as generate_default(), with every block doubled across the
 * two 128-bit lanes. The key schedule and TEMP run with both lanes equal,
 * which costs the same instructions as on xmm and yields round keys that
 * are already broadcast; OUT1 || OUT2 and OUT3 || OUT4 then take two
 * chains of ten AES rounds instead of four, so the call holds fewer
 * waiting instructions and the next one overlaps it sooner. Both lanes'
 * rotations are per-lane PSHUFB controls (VPSHUFB does not cross lanes).
 */
#define VAES_TARGET "vaes,avx2,aes,sse4.1"
#define V_INLINE static inline __attribute__((always_inline, target(VAES_TARGET)))

#define ROW4(c, m) BCB(c, m, 0), BCB(c, m, 1), BCB(c, m, 2), BCB(c, m, 3)
#define BCAST2(c, m)                                                           \
	_mm256_setr_epi8(ROW4(c, m), ROW4(c, m), ROW4(c, m), ROW4(c, m),       \
			 ROW4(c, m), ROW4(c, m), ROW4(c, m), ROW4(c, m))
#define QBCAST2(c, m)                                                          \
	_mm256_setr_epi8(ROW4(c, m), -128, -128, -128, -128, ROW4(c, m),       \
			 -128, -128, -128, -128, ROW4(c, m), -128, -128, -128, \
			 -128, ROW4(c, m), -128, -128, -128, -128)
/* RCON() on both lanes, read from a table through a pointer the compiler
 * cannot see through (rcon2 in sched_enc9_2): GCC otherwise builds the
 * constants from immediates with a broadcast each (shuffle-port work). */
#define RCW(i, rc) ((uint32_t)(rc) << (8 * (((i) + 1) & 3)))
#define RCROW(i, rc) { RCW(i, rc), RCW(i, rc), RCW(i, rc), RCW(i, rc),         \
		       RCW(i, rc), RCW(i, rc), RCW(i, rc), RCW(i, rc) }
static const uint32_t rcon2_tab[10][8] __attribute__((aligned(32))) = {
	RCROW(0, 0x01), RCROW(1, 0x02), RCROW(2, 0x04), RCROW(3, 0x08),
	RCROW(4, 0x10), RCROW(5, 0x20), RCROW(6, 0x40), RCROW(7, 0x80),
	RCROW(8, 0x1b), RCROW(9, 0x36),
};
#define RCON2(i) _mm256_load_si256((const __m256i *)rcon2[i])

/* 16 bytes into both lanes, read again as in reload(). */
V_INLINE __m256i bload2(const uint8_t *p)
{
	__asm__ volatile("" : "+r"(p));
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

/* sched_enc9() on both lanes: see there for the derivation. */
V_INLINE void sched_enc9_2(__m256i rk[10], __m256i *bk10, __m256i *q10,
			   __m256i *x9, __m256i k0, __m256i x)
{
	__m256i s = _mm256_xor_si256(k0, _mm256_bsrli_epi128(k0, 4));
	__m256i s2 = _mm256_xor_si256(s, _mm256_bsrli_epi128(s, 8));
	__m256i a = _mm256_xor_si256(k0, _mm256_bsrli_epi128(k0, 8));
	__m256i v0, v, vn, kk[10], qz;
	const uint32_t(*rcon2)[8] = rcon2_tab;

	__asm__("" : "+r"(rcon2));
	rk[0] = k0;
	x = _mm256_xor_si256(x, k0);
	v0 = _mm256_shuffle_epi32(k0, 0xff);
	v = _mm256_xor_si256(_mm256_aesenclast_epi128(v0, RCON2(0)),
			     _mm256_shuffle_epi8(s2, BCAST2(0, 3)));
	kk[1] = _mm256_xor_si256(RCON2(1), _mm256_shuffle_epi8(a, BCAST2(1, 2)));
	kk[2] = _mm256_xor_si256(RCON2(2), _mm256_shuffle_epi8(s2, BCAST2(2, 1)));
	kk[3] = _mm256_xor_si256(RCON2(3), v0);
	vn = _mm256_aesenclast_epi128(v, kk[1]);
	kk[4] = _mm256_xor_si256(RCON2(4), v);
	rk[1] = _mm256_xor_si256(_mm256_shuffle_epi8(v, BCAST2(0, 1)),
				 _mm256_bsrli_epi128(s2, 4));
	qz = _mm256_shuffle_epi8(v, QBCAST2(0, 1));
	x = _mm256_aesenc_epi128(x, rk[1]);
	v = vn;
#define COL(i) ((i) / 4 + ((i) % 4 == 3 || ((i) % 4 == 1 && (i) >= 9) ||     \
			   ((i) % 4 == 2 && (i) >= 6)))
#define STEP2(i)                                                               \
	do {                                                                   \
		if ((i) < 10)                                                  \
			vn = _mm256_aesenclast_epi128(v, kk[(i) < 10 ? (i) : 0]); \
		if ((i) + 3 < 10)                                              \
			kk[(i) + 3 < 10 ? (i) + 3 : 0] = _mm256_xor_si256(     \
				RCON2((i) + 3), v); \
		rk[i] = _mm256_xor_si256(                                      \
			_mm256_shuffle_epi8(v, BCAST2(COL(i), (i) & 3)),       \
			_mm256_xor_si256(qz, _mm256_bsrli_epi128(rk[(i) - 2], 8))); \
		qz = _mm256_shuffle_epi8(v, QBCAST2((i) / 4, (i) & 3));        \
		x = _mm256_aesenc_epi128(x, rk[i]);                            \
		v = vn;                                                        \
	} while (0)
	STEP2(2);
	STEP2(3);
	STEP2(4);
	STEP2(5);
	STEP2(6);
	STEP2(7);
	STEP2(8);
	STEP2(9);
#undef STEP2
	*q10 = _mm256_xor_si256(qz, _mm256_bsrli_epi128(rk[8], 8));
	*bk10 = _mm256_shuffle_epi8(v, BCAST2(COL(10), 2));
	*x9 = x;
#undef COL
}

__attribute__((target(VAES_TARGET))) void tw_milenage_vaes1_generate(
	struct tw_milenage_vec *v, const uint8_t k[16], const uint8_t opc[16],
	const uint8_t rand_[16], const uint8_t sqn[6], const uint8_t amf[2])
{
	/* Per-lane PSHUFB controls: SHUF_A = (rot 64 | identity) for OUT1 |
	 * OUT2, SHUF_B = (rot 32 | rot 64) for OUT3 | OUT4 (TS 35.206 §4.1
	 * r1..r4 = 64, 0, 32, 64; byte j <- byte j + r/8). */
	const __m256i shuf_a = _mm256_setr_epi8(8, 9, 10, 11, 12, 13, 14, 15,
						0, 1, 2, 3, 4, 5, 6, 7,
						0, 1, 2, 3, 4, 5, 6, 7,
						8, 9, 10, 11, 12, 13, 14, 15);
	const __m256i shuf_b = _mm256_setr_epi8(4, 5, 6, 7, 8, 9, 10, 11,
						12, 13, 14, 15, 0, 1, 2, 3,
						8, 9, 10, 11, 12, 13, 14, 15,
						0, 1, 2, 3, 4, 5, 6, 7);
	/* c2 in OUT2's lane (c1 = 0 in OUT1's); c3 | c4 */
	const __m256i c12 = _mm256_set_epi32(0x01000000, 0, 0, 0, 0, 0, 0, 0);
	const __m256i c34 = _mm256_set_epi32(0x04000000, 0, 0, 0, 0x02000000, 0, 0, 0);
	__m256i rk[10], bk10, q10, x9, ka, kb, y12, y34;
	__m256i op_c = bload2(opc);

	/* TEMP = E_K(RAND ^ OPc), the key schedule computed alongside. */
	sched_enc9_2(rk, &bk10, &q10, &x9, bload2(k),
		     _mm256_xor_si256(bload2(rand_), op_c));
	/*
	 * As in core1(): TEMP's last round and each OUT_i's key-0 whitening
	 * merge into one AESENCLAST on rot(S9, r_i). OUT1's whitened input
	 * is TEMP ^ rot(IN1 ^ OPc, 64) ^ K0, with rot(IN1, 64) = IN1 (its two
	 * halves are equal); OUT2's is TEMP ^ OPc ^ c2 ^ K0.
	 */
	ka = _mm256_xor_si256(_mm256_xor_si256(q10, bload2(k)), _mm256_xor_si256(
		_mm256_zextsi128_si256(load_in1(sqn, amf)),
		_mm256_xor_si256(_mm256_shuffle_epi8(bload2(opc), shuf_a), c12)));
	y12 = _mm256_aesenclast_epi128(x9, _mm256_xor_si256(bk10, ka));
	/* From here on q10 ^ OPc: OUT3, OUT4 use rot(TEMP ^ OPc, r_i). */
	q10 = _mm256_xor_si256(q10, bload2(opc));
	kb = _mm256_xor_si256(_mm256_shuffle_epi8(q10, shuf_b),
			      _mm256_xor_si256(bload2(k), c34));
	y34 = _mm256_aesenclast_epi128(_mm256_shuffle_epi8(x9, shuf_b),
				       _mm256_xor_si256(bk10, kb));
	/* Round key 10 ^ OPc: every OUT_i = E_K(...) ^ OPc ends with it. */
	q10 = _mm256_xor_si256(bk10, q10);
#pragma GCC unroll 9
	for (int r = 1; r < 10; r++) {
		y12 = _mm256_aesenc_epi128(y12, rk[r]);
		y34 = _mm256_aesenc_epi128(y34, rk[r]);
	}
	y12 = _mm256_aesenclast_epi128(y12, q10);
	y34 = _mm256_aesenclast_epi128(y34, q10);
	store_vec(v, _mm256_castsi256_si128(y12), _mm256_extracti128_si256(y12, 1),
		  _mm256_castsi256_si128(y34), _mm256_extracti128_si256(y34, 1));
	/* Everything fits in the 16 ymm registers (checked with objdump: no
	 * frame, no %rsp access), so clearing them leaves nothing behind. */
	TW_CLEAR_YMM();
}

#else /* !__x86_64__: never selected (tw_cpu_has(TW_CPU_AESNI) is false). */

void tw_milenage_ni_outs(uint8_t out[5][16], unsigned mask, const uint8_t k[16],
			 const uint8_t opc[16], const uint8_t rand_[16],
			 const uint8_t *sqn, const uint8_t *amf,
			 const struct tw_milenage_consts *c)
{
	(void)out; (void)mask; (void)k; (void)opc; (void)rand_; (void)sqn;
	(void)amf; (void)c;
}

void tw_milenage_ni_opc(uint8_t opc[16], const uint8_t k[16], const uint8_t op[16])
{
	(void)opc; (void)k; (void)op;
}

void tw_milenage_ni_generate(struct tw_milenage_vec *v, const uint8_t k[16],
			     const uint8_t opc[16], const uint8_t rand_[16],
			     const uint8_t sqn[6], const uint8_t amf[2],
			     const struct tw_milenage_consts *c)
{
	(void)v; (void)k; (void)opc; (void)rand_; (void)sqn; (void)amf; (void)c;
}

void tw_milenage_ni_batch(const struct tw_milenage_batch_in *in,
			  struct tw_milenage_vec *out, size_t n,
			  const struct tw_milenage_consts *c)
{
	(void)in; (void)out; (void)n; (void)c;
}

void tw_milenage_vaes1_generate(struct tw_milenage_vec *v, const uint8_t k[16],
				const uint8_t opc[16], const uint8_t rand_[16],
				const uint8_t sqn[6], const uint8_t amf[2])
{
	(void)v; (void)k; (void)opc; (void)rand_; (void)sqn; (void)amf;
}

#endif
