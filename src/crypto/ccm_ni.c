/*
 * twag — AES-CCM kernels on x86-64 AES-NI (NIST SP 800-38C, 2004 with
 * 2007 errata).
 *
 * One frame: CCM's cost is the CBC-MAC, a serial chain Y_i =
 * CIPH_K(Y_{i-1} ^ B_i) (§6.1 step 4), one AES latency per block. The
 * CTR blocks are independent, so each loop step issues the MAC block and
 * one CTR block round by round side by side: the CTR work hides in the
 * MAC's latency shadow and the frame costs (1 + h + m) AES latencies, the
 * serial bound. The round keys stay in registers (nr is a compile-time
 * constant in each copy); nothing is called or saved per block.
 *
 * Batch: four frames (four keys) in lock step, each lane one MAC and one
 * CTR block per step: eight independent AES chains fill the AESENC
 * pipeline. The scheduler in ccm.c decides what each lane's blocks are.
 */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/ccm.h"

#define TW_AESNI __attribute__((target("aes,sse4.1")))
#define NI_INLINE static inline __attribute__((always_inline, target("aes,sse4.1")))

/* Counters are kept byte-reversed so the low 64 bits add as an integer. */
#define BSWAP128 _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/* Two independent blocks through the same key, round by round. */
NI_INLINE void enc2(const __m128i *k, const unsigned nr, __m128i *a, __m128i *b)
{
	__m128i x = _mm_xor_si128(*a, k[0]), y = _mm_xor_si128(*b, k[0]);

	_Pragma("GCC unroll 14")
	for (unsigned r = 1; r < nr; r++) {
		x = _mm_aesenc_si128(x, k[r]);
		y = _mm_aesenc_si128(y, k[r]);
	}
	*a = _mm_aesenclast_si128(x, k[nr]);
	*b = _mm_aesenclast_si128(y, k[nr]);
}

NI_INLINE __m128i enc1(const __m128i *k, const unsigned nr, __m128i a)
{
	a = _mm_xor_si128(a, k[0]);
	_Pragma("GCC unroll 14")
	for (unsigned r = 1; r < nr; r++)
		a = _mm_aesenc_si128(a, k[r]);
	return _mm_aesenclast_si128(a, k[nr]);
}

NI_INLINE __m128i load_part(const uint8_t *p, size_t n)
{
	uint8_t b[16] = { 0 };

	memcpy(b, p, n);
	__m128i v = _mm_loadu_si128((const __m128i *)b);
	tw_wipe(b, sizeof(b));
	return v;
}

/*
 * pre: the caller made B_0, Ctr_0 and the two encoded-aad blocks in
 * registers (b0v, a0v, p1, p2; aad unused): no block of the chain's start
 * then goes through memory just written, whose load would wait for the
 * previous frame's instructions to retire (a store-forwarding miss), so
 * one frame's head overlaps the previous frame's tail.
 */
NI_INLINE void one_impl(const struct tw_aes_ctx *aes, __m128i b0v, __m128i a0v,
			int pre, __m128i p1, __m128i p2, const uint8_t *aad, size_t aad_len,
			const uint8_t *in, uint8_t *out, size_t len, int dec,
			uint8_t mac[16], uint8_t s0_out[16], const unsigned nr)
{
	const __m128i bswap = BSWAP128, one = _mm_set_epi64x(0, 1);
	__m128i k[15];
	size_t h = pre ? 2 : tw_ccm_aad_blocks(aad_len), full = len / 16, rem = len % 16;
	uint8_t blk[16];

	for (unsigned r = 0; r <= nr; r++)
		k[r] = _mm_load_si128((const __m128i *)aes->rk.ni[0][r]);
	__m128i y = b0v;
	__m128i s0 = a0v;
	__m128i ctr = _mm_shuffle_epi8(s0, bswap); /* Ctr_0, byte-reversed */
	__m128i ks = _mm_setzero_si128();

	/* Step 0: Y_0 = CIPH_K(B_0) beside S_0 = CIPH_K(Ctr_0). */
	enc2(k, nr, &y, &s0);
	/* Encoded aad blocks. Decrypting, the last one (or step 0 with no
	 * aad) also makes S_1, so P_1 is ready when the MAC reaches it. */
	if (dec && h == 0 && len > 0) {
		ctr = _mm_add_epi64(ctr, one);
		ks = enc1(k, nr, _mm_shuffle_epi8(ctr, bswap));
	}
	for (size_t i = 0; i < h; i++) {
		if (pre) {
			y = _mm_xor_si128(y, i == 0 ? p1 : p2);
		} else {
			tw_ccm_aad_block(blk, aad, aad_len, i);
			y = _mm_xor_si128(y, _mm_loadu_si128((const __m128i *)blk));
		}
		if (dec && i + 1 == h && len > 0) {
			ctr = _mm_add_epi64(ctr, one);
			ks = _mm_shuffle_epi8(ctr, bswap);
			enc2(k, nr, &y, &ks);
		} else {
			y = enc1(k, nr, y);
		}
	}
	if (!dec) {
		/*
		 * §6.1: Y_i = CIPH_K(Y_{i-1} ^ P_i) beside S_i = CIPH_K(Ctr_i).
		 * AESENCLAST ends with "^ round key", so the next block's input
		 * Y_i ^ P_{i+1} ^ K_0 comes out of the last round keyed with
		 * K_nr ^ K_0 ^ P_{i+1} (made off the chain): the MAC chain is
		 * exactly nr AES rounds per block, no XOR between blocks.
		 */
		if (full > 0) {
			const __m128i kx = _mm_xor_si128(k[0], k[nr]);
			__m128i x = _mm_xor_si128(_mm_xor_si128(y, k[0]),
						  _mm_loadu_si128((const __m128i *)in));

			for (size_t j = 0; j < full; j++, in += 16, out += 16) {
				__m128i p = _mm_loadu_si128((const __m128i *)in);
				__m128i kl = k[nr];

				if (j + 1 < full)
					kl = _mm_xor_si128(kx, _mm_loadu_si128((const __m128i *)(in + 16)));
				ctr = _mm_add_epi64(ctr, one);
				ks = _mm_xor_si128(_mm_shuffle_epi8(ctr, bswap), k[0]);
				_Pragma("GCC unroll 14")
				for (unsigned r = 1; r < nr; r++) {
					x = _mm_aesenc_si128(x, k[r]);
					ks = _mm_aesenc_si128(ks, k[r]);
				}
				x = _mm_aesenclast_si128(x, kl);
				ks = _mm_aesenclast_si128(ks, k[nr]);
				_mm_storeu_si128((__m128i *)out, _mm_xor_si128(p, ks));
			}
			y = x; /* the last block used K_nr alone: Y_full */
		}
		if (rem > 0) {
			__m128i p = load_part(in, rem);

			ctr = _mm_add_epi64(ctr, one);
			ks = _mm_shuffle_epi8(ctr, bswap);
			y = _mm_xor_si128(y, p);
			enc2(k, nr, &y, &ks);
			_mm_storeu_si128((__m128i *)blk, _mm_xor_si128(p, ks));
			memcpy(out, blk, rem);
		}
	} else {
		/* §6.2: P_j = C_j ^ S_j (S_j made one step earlier), then
		 * Y = CIPH_K(Y ^ P_j) beside S_{j+1}. */
		for (size_t j = 0; j < full; j++, in += 16, out += 16) {
			__m128i p = _mm_xor_si128(_mm_loadu_si128((const __m128i *)in), ks);

			_mm_storeu_si128((__m128i *)out, p);
			ctr = _mm_add_epi64(ctr, one);
			ks = _mm_shuffle_epi8(ctr, bswap);
			y = _mm_xor_si128(y, p);
			enc2(k, nr, &y, &ks);
		}
		if (rem > 0) {
			/* The MAC pads P_m with zeros, not with key stream. */
			_mm_storeu_si128((__m128i *)blk,
					 _mm_xor_si128(load_part(in, rem), ks));
			memset(blk + rem, 0, 16 - rem);
			memcpy(out, blk, rem);
			y = enc1(k, nr, _mm_xor_si128(y, _mm_loadu_si128((const __m128i *)blk)));
		}
	}
	_mm_storeu_si128((__m128i *)mac, y);
	_mm_storeu_si128((__m128i *)s0_out, s0);
	tw_wipe(blk, sizeof(blk));
	tw_wipe(k, sizeof(k));
}

TW_AESNI void tw_ccm_ni_one(const struct tw_aes_ctx *aes, const uint8_t b0[16],
			    const uint8_t a0[16], const uint8_t *aad, size_t aad_len,
			    const uint8_t *in, uint8_t *out, size_t len, int dec,
			    uint8_t mac[16], uint8_t s0[16])
{
	__m128i b = _mm_loadu_si128((const __m128i *)b0), a = _mm_loadu_si128((const __m128i *)a0);
	__m128i z = _mm_setzero_si128();

	if (aes->nr == 10)
		one_impl(aes, b, a, 0, z, z, aad, aad_len, in, out, len, dec, mac, s0, 10);
	else
		one_impl(aes, b, a, 0, z, z, aad, aad_len, in, out, len, dec, mac, s0, 14);
}

TW_AESNI void tw_ccm_ni_one_pre(const struct tw_aes_ctx *aes, __m128i b0, __m128i a0,
				__m128i h1, __m128i h2, const uint8_t *in, uint8_t *out,
				size_t len, int dec, uint8_t mac[16], uint8_t s0[16])
{
	if (aes->nr == 10)
		one_impl(aes, b0, a0, 1, h1, h2, NULL, 0, in, out, len, dec, mac, s0, 10);
	else
		one_impl(aes, b0, a0, 1, h1, h2, NULL, 0, in, out, len, dec, mac, s0, 14);
}

/* ---- four lanes ---- */

NI_INLINE void steps4_impl(struct tw_ccm_lanes *L, size_t n, const unsigned nr)
{
	const __m128i bswap = BSWAP128, one = _mm_set_epi64x(0, 1);
	const __m128i(*rk)[TW_CCM_MAX_LANES] = (const __m128i(*)[TW_CCM_MAX_LANES])L->rk;
	__m128i y[4], c[4];
	const uint8_t *ms[4], *ci[4];
	uint8_t *co[4];

	for (int l = 0; l < 4; l++) {
		y[l] = _mm_load_si128((const __m128i *)L->mac[l]);
		c[l] = _mm_shuffle_epi8(_mm_load_si128((const __m128i *)L->ctr[l]), bswap);
		ms[l] = L->mac_src[l];
		ci[l] = L->ctr_in[l];
		co[l] = L->ctr_out[l];
	}
	for (; n > 0; n--) {
		__m128i m[4], b[4], d[4];

		for (int l = 0; l < 4; l++) {
			m[l] = _mm_xor_si128(y[l], _mm_loadu_si128((const __m128i *)ms[l]));
			m[l] = _mm_xor_si128(m[l], rk[0][l]);
			b[l] = _mm_xor_si128(_mm_shuffle_epi8(c[l], bswap), rk[0][l]);
			c[l] = _mm_add_epi64(c[l], one);
		}
		_Pragma("GCC unroll 14")
		for (unsigned r = 1; r < nr; r++) {
			_Pragma("GCC unroll 4")
			for (int l = 0; l < 4; l++) {
				m[l] = _mm_aesenc_si128(m[l], rk[r][l]);
				b[l] = _mm_aesenc_si128(b[l], rk[r][l]);
			}
		}
		/* Every lane loads before any lane stores: an idle lane
		 * repeats a busy one in place. */
		for (int l = 0; l < 4; l++) {
			y[l] = _mm_aesenclast_si128(m[l], rk[nr][l]);
			b[l] = _mm_aesenclast_si128(b[l], rk[nr][l]);
			d[l] = _mm_loadu_si128((const __m128i *)ci[l]);
		}
		for (int l = 0; l < 4; l++) {
			_mm_storeu_si128((__m128i *)co[l], _mm_xor_si128(d[l], b[l]));
			ms[l] += 16;
			ci[l] += 16;
			co[l] += 16;
		}
	}
	for (int l = 0; l < 4; l++) {
		_mm_store_si128((__m128i *)L->mac[l], y[l]);
		_mm_store_si128((__m128i *)L->ctr[l], _mm_shuffle_epi8(c[l], bswap));
		L->mac_src[l] = ms[l];
		L->ctr_in[l] = ci[l];
		L->ctr_out[l] = co[l];
	}
}

TW_AESNI void tw_ccm_ni_steps4(struct tw_ccm_lanes *l, size_t k)
{
	if (l->nr == 10)
		steps4_impl(l, k, 10);
	else
		steps4_impl(l, k, 14);
}

#endif /* __x86_64__ */
