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

#include "mb_lanes.h"
#include "sha_internal.h"
#include "twag/cpu.h"
#include "twag/sha.h"

_Static_assert((int)TW_SHA256_MB_SEGS == (int)TW_MB_SEGS, "one segment count");

#if defined(__x86_64__)
#include <immintrin.h>

#define S_TARGET __attribute__((target("avx2,avx512f,avx512vl,avx512bw")))

/* One block of each of the 16 lanes (mb_lanes.h): lane j's chaining value
 * is column j of st, its block p[j]. */
S_TARGET static void sha16_block(uint32_t st[][TW_MB_LANES], const uint8_t *const p[TW_MB_LANES])
{
	/* §3.1: the words are big-endian: a byte swap within each word */
	const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
	__m512i plo = _mm512_loadu_si512((const void *)p);
	__m512i phi = _mm512_loadu_si512((const void *)(p + 8));
	__m512i w[16], s0[8];
	__m512i a, b, c, d, e, f, g, h;

	for (int i = 0; i < 8; i++)
		s0[i] = _mm512_loadu_si512(st[i]);
	a = s0[0], b = s0[1], c = s0[2], d = s0[3], e = s0[4], f = s0[5], g = s0[6], h = s0[7];
	/* W[0..15] of all lanes: lane j's word k is the 4 octets at p[j] + 4k */
	for (int k = 0; k < 16; k++) {
		__m512i off = _mm512_set1_epi64(4 * k);
		__m256i lo = _mm512_i64gather_epi32(_mm512_add_epi64(plo, off), NULL, 1);
		__m256i hi = _mm512_i64gather_epi32(_mm512_add_epi64(phi, off), NULL, 1);

		w[k] = _mm512_shuffle_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
					   bswap);
	}
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
	/* step 4 */
	_mm512_storeu_si512(st[0], _mm512_add_epi32(a, s0[0]));
	_mm512_storeu_si512(st[1], _mm512_add_epi32(b, s0[1]));
	_mm512_storeu_si512(st[2], _mm512_add_epi32(c, s0[2]));
	_mm512_storeu_si512(st[3], _mm512_add_epi32(d, s0[3]));
	_mm512_storeu_si512(st[4], _mm512_add_epi32(e, s0[4]));
	_mm512_storeu_si512(st[5], _mm512_add_epi32(f, s0[5]));
	_mm512_storeu_si512(st[6], _mm512_add_epi32(g, s0[6]));
	_mm512_storeu_si512(st[7], _mm512_add_epi32(h, s0[7]));
	/* message words and states may have been spilled: keys pass here */
	tw_wipe(w, sizeof(w));
	tw_wipe(s0, sizeof(s0));
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
		return;
	}
#endif
	for (size_t i = 0; i < n; i++)
		for (unsigned s = 0; s < TW_SHA256_MB_SEGS; s++)
			if (jobs[i].nblk[s] > 0)
				tw_sha256_blocks(jobs[i].h, jobs[i].seg[s], jobs[i].nblk[s]);
}
