/*
 * twag — multi-buffer SHA-256 (FIPS 180-4 §6.2.2) for many independent
 * messages: the HMAC chains of many EAP sessions at once. One SHA-256
 * compression is 64 dependent rounds, so one message keeps a core's
 * SHA-NI unit at its throughput; sixteen messages side by side in the
 * 32-bit lanes of AVX-512 registers share every instruction (Ch, Maj and
 * the sigma functions are one vpternlogd each). The lanes are scheduled
 * by mb_lanes.c; below a batch that fills enough lanes to beat SHA-NI the
 * jobs run one after another on tw_sha256_blocks.
 */
#include <string.h>

#include "../common/vec_scrub.h"
#include "mb_lanes.h"
#include "sha_internal.h"
#include "twag/cpu.h"
#include "twag/hmac.h"
#include "twag/sha.h"

_Static_assert((int)TW_SHA256_MB_SEGS == (int)TW_MB_SEGS, "one segment count");

#if defined(__x86_64__)
#include <immintrin.h>

#define S_TARGET __attribute__((target("avx2,avx512f,avx512vl,avx512bw")))

/* W[0..nw) of all lanes: lane j's word k is the 4 octets at p[j] + 4k
 * (§3.1: big-endian, so a byte swap within each word). */
S_TARGET static inline void sha16_load(__m512i *w, const uint8_t *const p[TW_MB_LANES], int nw)
{
	const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
	__m512i plo = _mm512_loadu_si512((const void *)p);
	__m512i phi = _mm512_loadu_si512((const void *)(p + 8));

	for (int k = 0; k < nw; k++) {
		__m512i off = _mm512_set1_epi64(4 * k);
		__m256i lo = _mm512_i64gather_epi32(_mm512_add_epi64(plo, off), NULL, 1);
		__m256i hi = _mm512_i64gather_epi32(_mm512_add_epi64(phi, off), NULL, 1);

		w[k] = _mm512_shuffle_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
					   bswap);
	}
}

/* §6.2.2 steps 1-4 on the message words w (w[k] = word k of every lane)
 * for the lanes in live; the other lanes' chaining values stay as they
 * are. Lane j's chaining value is column j of st. What it leaves in
 * registers and spills (message words, chaining values: keys pass here)
 * is cleared once per call of the public functions below (SHA16_CLEAN),
 * not after every block. */
S_TARGET static inline void sha16_core(uint32_t st[][TW_MB_LANES], __m512i w[16], __mmask16 live)
{
	__m512i s0[8];
	__m512i a, b, c, d, e, f, g, h;

	for (int i = 0; i < 8; i++)
		s0[i] = _mm512_loadu_si512(st[i]);
	a = s0[0], b = s0[1], c = s0[2], d = s0[3], e = s0[4], f = s0[5], g = s0[6], h = s0[7];
	for (int t = 0; t < 64; t++) {
		__m512i wt, s1e, ch, t1, s0a, maj;

		if (t < 16) {
			wt = w[t];
		} else {
			/* §6.2.2 step 1: W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16],
			 * σ0 = ROTR7 ^ ROTR18 ^ SHR3, σ1 = ROTR17 ^ ROTR19 ^ SHR10 */
			__m512i w2 = w[(t - 2) & 15], w15 = w[(t - 15) & 15];
			__m512i sg1 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(w2, 17),
								_mm512_ror_epi32(w2, 19),
								_mm512_srli_epi32(w2, 10), 0x96);
			__m512i sg0 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(w15, 7),
								_mm512_ror_epi32(w15, 18),
								_mm512_srli_epi32(w15, 3), 0x96);

			wt = _mm512_add_epi32(_mm512_add_epi32(sg1, w[(t - 7) & 15]),
					      _mm512_add_epi32(sg0, w[t & 15]));
			w[t & 15] = wt;
		}
		/* step 3: T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t],
		 * T2 = Σ0(a) + Maj(a, b, c); Ch = e ? f : g (0xca),
		 * Maj (0xe8), Σ as three rotations XORed (0x96) */
		s1e = _mm512_ternarylogic_epi32(_mm512_ror_epi32(e, 6), _mm512_ror_epi32(e, 11),
						_mm512_ror_epi32(e, 25), 0x96);
		ch = _mm512_ternarylogic_epi32(e, f, g, 0xca);
		t1 = _mm512_add_epi32(_mm512_add_epi32(h, s1e),
				      _mm512_add_epi32(ch, _mm512_add_epi32(
								   wt, _mm512_set1_epi32(
									       (int)tw_sha256_k[t]))));
		s0a = _mm512_ternarylogic_epi32(_mm512_ror_epi32(a, 2), _mm512_ror_epi32(a, 13),
						_mm512_ror_epi32(a, 22), 0x96);
		maj = _mm512_ternarylogic_epi32(a, b, c, 0xe8);
		h = g;
		g = f;
		f = e;
		e = _mm512_add_epi32(d, t1);
		d = c;
		c = b;
		b = a;
		a = _mm512_add_epi32(t1, _mm512_add_epi32(s0a, maj));
	}
	/* step 4, in the live lanes only */
#define STEP4(i, v) _mm512_storeu_si512(st[i], _mm512_mask_add_epi32(s0[i], live, v, s0[i]))
	STEP4(0, a);
	STEP4(1, b);
	STEP4(2, c);
	STEP4(3, d);
	STEP4(4, e);
	STEP4(5, f);
	STEP4(6, g);
	STEP4(7, h);
#undef STEP4
}

/* Every vector register, after the kernels below have run */
S_TARGET __attribute__((noinline)) static void sha16_zero(void)
{
	TW_CLEAR_ZMM();
}

/*
 * At the end of each public function that ran a kernel of this file: the
 * vector registers, then the kernel's frame below the caller's (each
 * kernel is a separate function called straight from the public one: not
 * inlined across the target change) and the sha16_core it calls. Frames
 * by objdump, GCC 12 -O2: x16_outer_avx512 0xa40 octets below its
 * 64-aligned stack pointer, then sha16_core's 0x240, about 3.4 KiB with
 * the saved registers; the others less. The scrub area covers them (and
 * ASan's larger frames in sanitizer builds).
 */
#define SHA16_CLEAN()                                                          \
	do {                                                                   \
		sha16_zero();                                                  \
		tw_vec_scrub_stack(TW_VEC_SCRUB_MAX);                          \
	} while (0)

/* One block of each of the 16 lanes (mb_lanes.h): lane j's chaining value
 * is column j of st, its block p[j]. */
S_TARGET static void sha16_block(uint32_t st[][TW_MB_LANES], const uint8_t *const p[TW_MB_LANES])
{
	__m512i w[16];

	sha16_load(w, p, 16);
	sha16_core(st, w, 0xffff);
}

static struct tw_mb_view sha256_view(void *jobs, size_t i)
{
	struct tw_sha256_job *j = (struct tw_sha256_job *)jobs + i;

	return (struct tw_mb_view){ j->h, j->seg, j->nblk };
}
#endif

void tw_sha256_mb(struct tw_sha256_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
#if defined(__x86_64__)
	/* a 16-lane step costs about 9 SHA-NI blocks, 3 portable ones */
	if (tw_cpu_has(TW_CPU_AVX512) &&
	    n >= (tw_cpu_has(TW_CPU_SHANI | TW_CPU_SSE41) ? 9u : 3u)) {
		tw_mb_run(jobs, n, sha256_view, 8, sha16_block);
		SHA16_CLEAN();
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		for (unsigned s = 0; s < TW_SHA256_MB_SEGS; s++)
			if (jobs[i].nblk[s] > 0)
				tw_sha256_blocks(jobs[i].h, jobs[i].seg[s], jobs[i].nblk[s]);
}

/* ---- sixteen lanes in lockstep (sha_internal.h) ------------------------- */

int tw_sha256_x16_worth(size_t n)
{
#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_AVX512))
		return n >= (tw_cpu_has(TW_CPU_SHANI | TW_CPU_SSE41) ? 8u : 3u);
#endif
	(void)n;
	return 0;
}

static void column_get(uint32_t h[8], uint32_t st[8][TW_SHA256_X16], unsigned j)
{
	for (int i = 0; i < 8; i++)
		h[i] = st[i][j];
}

static void column_put(uint32_t st[8][TW_SHA256_X16], unsigned j, const uint32_t h[8])
{
	for (int i = 0; i < 8; i++)
		st[i][j] = h[i];
}

/* Lane j alone: one block through tw_sha256_blocks (SHA-NI or portable). */
static void one_lane(uint32_t st[8][TW_SHA256_X16], unsigned j, const uint8_t *blk)
{
	uint32_t h[8];

	column_get(h, st, j);
	tw_sha256_blocks(h, blk, 1);
	column_put(st, j, h);
	tw_wipe(h, sizeof(h));
}

#if defined(__x86_64__)
static const uint8_t zero_block[64]; /* what idle lanes read */

S_TARGET static void x16_blocks_avx512(uint32_t st[8][TW_SHA256_X16],
				       const uint8_t *const p[TW_SHA256_X16], uint16_t live)
{
	__m512i w[16];

	sha16_load(w, p, 16);
	sha16_core(st, w, live);
}

S_TARGET static void x16_words_avx512(uint32_t st[8][TW_SHA256_X16],
				      const uint32_t words[16][TW_SHA256_X16], uint16_t live)
{
	__m512i w[16];

	for (int k = 0; k < 16; k++)
		w[k] = _mm512_loadu_si512(words[k]);
	sha16_core(st, w, live);
}

/* RFC 2104 §2 steps (1)-(2) for 32-octet keys, in registers: K0 ^ ipad
 * is the key's eight words (gathered from the lanes, byte-swapped) and
 * eight words of 0x36363636; K0 ^ opad the same with 0x5c. */
S_TARGET static void x16_key32_avx512(uint32_t ist[8][TW_SHA256_X16],
				      uint32_t ost[8][TW_SHA256_X16],
				      const uint8_t *const key[TW_SHA256_X16], uint16_t live)
{
	const __m512i ipad = _mm512_set1_epi32(0x36363636), flip = _mm512_set1_epi32(0x36363636 ^ 0x5c5c5c5c);
	const uint8_t *q[TW_SHA256_X16];
	__m512i kw[8], w[16];

	for (unsigned j = 0; j < TW_SHA256_X16; j++)
		q[j] = (live >> j) & 1 ? key[j] : zero_block;
	sha16_load(kw, q, 8);
	for (int k = 0; k < 8; k++)
		kw[k] = _mm512_xor_si512(kw[k], ipad);
	for (int k = 0; k < 16; k++)
		w[k] = k < 8 ? kw[k] : ipad;
	sha16_core(ist, w, live);
	for (int k = 0; k < 16; k++)
		w[k] = _mm512_xor_si512(k < 8 ? kw[k] : ipad, flip);
	sha16_core(ost, w, live);
}

/*
 * RFC 2104 §2 steps (5)-(7) in registers: the outer block's words are the
 * inner chaining values (W0..W7), 0x80000000, zeros and the bit length of
 * 64 + 32 octets (FIPS 180-4 §5.1.1); then each live lane's digest
 * written big-endian to out[j]: the 8 x 16 state transposed to sixteen
 * 32-octet rows in registers (two rounds of unpacks, then 128-bit parts).
 */
S_TARGET static void x16_outer_avx512(uint32_t st[8][TW_SHA256_X16],
				      const uint32_t inner[8][TW_SHA256_X16],
				      uint8_t *const out[TW_SHA256_X16], uint16_t live)
{
	const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
	__m512i w[16], r[8], t[8], u[8];

	for (int k = 0; k < 8; k++)
		w[k] = _mm512_loadu_si512(inner[k]);
	w[8] = _mm512_set1_epi32((int)0x80000000u);
	for (int k = 9; k < 15; k++)
		w[k] = _mm512_setzero_si512();
	w[15] = _mm512_set1_epi32((64 + 32) * 8);
	sha16_core(st, w, live);
	for (int i = 0; i < 8; i++)
		r[i] = _mm512_shuffle_epi8(_mm512_loadu_si512(st[i]), bswap);
	/* in each 128-bit part q (lanes 4q..4q+3): t[2i] = words 2i, 2i+1 of
	 * lanes 4q, 4q+1; t[2i+1] the same of lanes 4q+2, 4q+3 */
	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	/* u[m] (m = 0..3): words 0..3 of lane 4q+m; u[4+m]: words 4..7 */
	for (int h = 0; h < 2; h++) {
		u[4 * h + 0] = _mm512_unpacklo_epi64(t[4 * h + 0], t[4 * h + 2]);
		u[4 * h + 1] = _mm512_unpackhi_epi64(t[4 * h + 0], t[4 * h + 2]);
		u[4 * h + 2] = _mm512_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
		u[4 * h + 3] = _mm512_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
	}
#define OUT_PART(q)                                                                   \
	for (int m = 0; m < 4; m++)                                                   \
		if ((live >> (4 * (q) + m)) & 1) {                                    \
			_mm_storeu_si128((__m128i *)out[4 * (q) + m],                 \
					 _mm512_extracti32x4_epi32(u[m], q));         \
			_mm_storeu_si128((__m128i *)(out[4 * (q) + m] + 16),          \
					 _mm512_extracti32x4_epi32(u[4 + m], q));     \
		}
	OUT_PART(0)
	OUT_PART(1)
	OUT_PART(2)
	OUT_PART(3)
#undef OUT_PART
}
#endif

void tw_sha256_x16_blocks(uint32_t st[8][TW_SHA256_X16], const uint8_t *const p[TW_SHA256_X16],
			  uint16_t live)
{
#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_AVX512)) {
		const uint8_t *q[TW_SHA256_X16];

		/* the idle lanes read zeros: their results are not kept */
		for (unsigned j = 0; j < TW_SHA256_X16; j++)
			q[j] = (live >> j) & 1 ? p[j] : zero_block;
		x16_blocks_avx512(st, q, live);
		SHA16_CLEAN();
		return;
	}
#endif
	for (unsigned j = 0; j < TW_SHA256_X16; j++)
		if ((live >> j) & 1)
			one_lane(st, j, p[j]);
}

void tw_sha256_x16_words(uint32_t st[8][TW_SHA256_X16],
			 const uint32_t w[16][TW_SHA256_X16], uint16_t live)
{
	uint8_t blk[64];

#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_AVX512)) {
		x16_words_avx512(st, w, live);
		SHA16_CLEAN();
		return;
	}
#endif
	for (unsigned j = 0; j < TW_SHA256_X16; j++) {
		if (!((live >> j) & 1))
			continue;
		for (int k = 0; k < 16; k++)
			tw_store_be32(blk + 4 * k, w[k][j]);
		one_lane(st, j, blk);
	}
	tw_wipe(blk, sizeof(blk));
}

void tw_hmac_sha256_x16_init(struct tw_hmac_sha256_x16 *k,
			     const uint8_t *const key[TW_SHA256_X16], size_t key_len,
			     uint16_t live)
{
	uint32_t w[16][TW_SHA256_X16];
	uint8_t kb[64];

	/* RFC 2104 §2 steps (1)-(2) as tw_hmac_sha256_init(), keys of at most
	 * one block (the callers' are 32 octets): the K0 ^ ipad block laid
	 * out directly as the lanes' message words */
	if (key_len > 64)
		key_len = 64;
#if defined(__x86_64__)
	if (key_len == 32 && tw_cpu_has(TW_CPU_AVX512)) {
		for (int i = 0; i < 8; i++)
			for (unsigned j = 0; j < TW_SHA256_X16; j++)
				k->ist[i][j] = k->ost[i][j] = tw_sha256_iv[i];
		x16_key32_avx512(k->ist, k->ost, key, live);
		SHA16_CLEAN();
		return;
	}
#endif
	memset(kb, 0, sizeof(kb));
	for (unsigned j = 0; j < TW_SHA256_X16; j++) {
		if ((live >> j) & 1)
			memcpy(kb, key[j], key_len);
		for (int i = 0; i < 16; i++)
			w[i][j] = tw_load_be32(kb + 4 * i) ^ 0x36363636u;
	}
	for (int i = 0; i < 8; i++)
		for (unsigned j = 0; j < TW_SHA256_X16; j++)
			k->ist[i][j] = k->ost[i][j] = tw_sha256_iv[i];
	tw_sha256_x16_words(k->ist, (const uint32_t(*)[TW_SHA256_X16])w, live);
	for (int i = 0; i < 16; i++)
		for (unsigned j = 0; j < TW_SHA256_X16; j++)
			w[i][j] ^= 0x36363636u ^ 0x5c5c5c5cu;
	tw_sha256_x16_words(k->ost, (const uint32_t(*)[TW_SHA256_X16])w, live);
	tw_wipe(w, sizeof(w));
	tw_wipe(kb, sizeof(kb));
}

void tw_hmac_sha256_x16_padded(const struct tw_hmac_sha256_x16 *k,
			       const uint8_t *const blocks[TW_SHA256_X16],
			       const size_t nblk[TW_SHA256_X16],
			       uint8_t *const out[TW_SHA256_X16], uint16_t live)
{
	uint32_t st[8][TW_SHA256_X16], w[16][TW_SHA256_X16];
	const uint8_t *p[TW_SHA256_X16], *idle = NULL;
	size_t most = 0;
	bool vec = false; /* the AVX-512 kernels, called here directly */

#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_AVX512)) {
		vec = true;
		idle = zero_block;
	}
#endif
	for (unsigned j = 0; j < TW_SHA256_X16; j++)
		if ((live >> j) & 1 && nblk[j] > most)
			most = nblk[j];
	/* RFC 2104 §2 steps (3)-(4): the inner hash from the keyed state;
	 * a lane whose message has ended waits for the longest (on AVX-512
	 * its lane reads zeros meanwhile and keeps its chaining value) */
	memcpy(st, k->ist, sizeof(st));
	for (size_t b = 0; b < most; b++) {
		uint16_t m = 0;

		for (unsigned j = 0; j < TW_SHA256_X16; j++) {
			p[j] = idle;
			if ((live >> j) & 1 && nblk[j] > b) {
				p[j] = blocks[j] + 64 * b;
				m |= (uint16_t)(1u << j);
			}
		}
#if defined(__x86_64__)
		if (vec) {
			x16_blocks_avx512(st, p, m); /* cleaned up below */
			continue;
		}
#endif
		tw_sha256_x16_blocks(st, p, m);
	}
#if defined(__x86_64__)
	if (vec) {
		memcpy(w, k->ost, sizeof(k->ost));
		x16_outer_avx512((uint32_t(*)[TW_SHA256_X16])w, (const uint32_t(*)[TW_SHA256_X16])st,
				 out, live);
		SHA16_CLEAN();
		tw_wipe(st, sizeof(st));
		tw_wipe(w, 8 * sizeof(w[0]));
		return;
	}
#endif
	/* steps (5)-(7): the outer block is the inner digest (its words are
	 * the chaining value as it stands), 0x80 and the bit length of
	 * 64 + 32 octets (FIPS 180-4 §5.1.1) */
	memcpy(w, st, sizeof(st));
	for (unsigned j = 0; j < TW_SHA256_X16; j++) {
		w[8][j] = 0x80000000u;
		for (int i = 9; i < 15; i++)
			w[i][j] = 0;
		w[15][j] = (64 + 32) * 8;
	}
	memcpy(st, k->ost, sizeof(st));
	tw_sha256_x16_words(st, (const uint32_t(*)[TW_SHA256_X16])w, live);
	for (unsigned j = 0; j < TW_SHA256_X16; j++)
		if ((live >> j) & 1)
			for (int i = 0; i < 8; i++)
				tw_store_be32(out[j] + 4 * i, st[i][j]);
	tw_wipe(st, sizeof(st));
	tw_wipe(w, sizeof(w));
}

void tw_hmac_sha256_x16_ctx(const struct tw_hmac_sha256_x16 *k, unsigned j,
			    struct tw_hmac_sha256_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	for (int i = 0; i < 8; i++) {
		ctx->istate[i] = k->ist[i][j];
		ctx->ostate[i] = k->ost[i][j];
	}
	tw_hmac_sha256_reset(ctx);
}
