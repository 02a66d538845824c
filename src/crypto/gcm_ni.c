/*
 * twag — AES-GCM (NIST SP 800-38D, November 2007) with AES-NI and
 * PCLMULQDQ: eight counter blocks per iteration, their AES rounds
 * interleaved with the GHASH of eight ciphertext blocks, and one GF(2^128)
 * reduction per eight blocks (aggregated reduction: Y' = (Y ^ X1)*H^8 ^
 * X2*H^7 ^ ... ^ X8*H, summing the unreduced 256-bit products).
 *
 * Field representation and reduction are those of gcm.c (blocks byte-
 * reversed, the context's powers pre-multiplied by x^-1). The instructions
 * take the same time for any data, so this path is constant time. Only
 * compiled on x86-64; gcm.c calls it when the CPU has AES-NI, PCLMULQDQ
 * and SSE4.1 and the context's AES schedule is the AES-NI one.
 */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/gcm.h"

#define NI_ATTR "aes,pclmul,sse4.1"
#define NI __attribute__((target(NI_ATTR)))
#define NI_INLINE static inline __attribute__((always_inline, target(NI_ATTR)))

NI_INLINE __m128i bswap(__m128i x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
						10, 11, 12, 13, 14, 15));
}

/* The 256-bit carry-less product, as lo (W1:W0), hi (W3:W2) and the
 * not yet split middle term. */
struct acc {
	__m128i lo, hi, mid;
};

NI_INLINE void acc_mul(struct acc *a, __m128i x, __m128i h)
{
	a->lo = _mm_xor_si128(a->lo, _mm_clmulepi64_si128(x, h, 0x00));
	a->hi = _mm_xor_si128(a->hi, _mm_clmulepi64_si128(x, h, 0x11));
	a->mid = _mm_xor_si128(a->mid, _mm_clmulepi64_si128(x, h, 0x01));
	a->mid = _mm_xor_si128(a->mid, _mm_clmulepi64_si128(x, h, 0x10));
}

/* gcm.c's two folds: W0 then W1 times x^128 = 1 + x(x^6 + x + 1). */
NI_INLINE __m128i reduce(struct acc *a)
{
	const __m128i k = _mm_set_epi64x((long long)0xc200000000000000ull, 0);
	__m128i lo = _mm_xor_si128(a->lo, _mm_slli_si128(a->mid, 8));
	__m128i hi = _mm_xor_si128(a->hi, _mm_srli_si128(a->mid, 8));
	__m128i t;

	t = _mm_clmulepi64_si128(lo, k, 0x10);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	t = _mm_clmulepi64_si128(lo, k, 0x10);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	return _mm_xor_si128(lo, hi);
}

/* Y = (Y ^ X_1)*H^n ^ X_2*H^(n-1) ^ ... ^ X_n*H for n <= 8 blocks x[]
 * already byte-reversed. */
NI_INLINE __m128i ghash_n(const struct tw_gcm_ctx *ctx, __m128i y,
			  const __m128i *x, unsigned n)
{
	const __m128i *hp = (const __m128i *)ctx->hpow[TW_GCM_NPOW - n];
	struct acc a = { _mm_setzero_si128(), _mm_setzero_si128(),
			 _mm_setzero_si128() };

	acc_mul(&a, _mm_xor_si128(y, x[0]), hp[0]);
	for (unsigned j = 1; j < n; j++)
		acc_mul(&a, x[j], hp[j]);
	return reduce(&a);
}

/* GHASH of len bytes (the last block zero-padded), 8 blocks at a time. */
NI_INLINE __m128i ghash_bytes(const struct tw_gcm_ctx *ctx, __m128i y,
			      const uint8_t *p, size_t len)
{
	__m128i x[8];

	while (len >= 16) {
		unsigned n = len >= 128 ? 8 : (unsigned)(len / 16);

		for (unsigned j = 0; j < n; j++)
			x[j] = bswap(_mm_loadu_si128((const __m128i *)(p + 16 * j)));
		y = ghash_n(ctx, y, x, n);
		p += 16 * n;
		len -= 16 * n;
	}
	if (len > 0) {
		uint8_t last[16] = { 0 };

		memcpy(last, p, len);
		x[0] = bswap(_mm_loadu_si128((const __m128i *)last));
		y = ghash_n(ctx, y, x, 1);
	}
	return y;
}

NI_INLINE __m128i aes1(const __m128i *rk, unsigned nr, __m128i b)
{
	b = _mm_xor_si128(b, rk[0]);
	for (unsigned r = 1; r < nr; r++)
		b = _mm_aesenc_si128(b, rk[r]);
	return _mm_aesenclast_si128(b, rk[nr]);
}

/*
 * Eight counter blocks: returns their AES encryptions in b[] and advances
 * the (byte-reversed) counter; with hash set, folds the eight blocks x[]
 * into *y meanwhile, one multiply after each of the first eight rounds.
 * The two chains are independent, so the CPU overlaps AESENC and
 * PCLMULQDQ latencies. Written out so the blocks stay in registers.
 */
NI_INLINE void aes8_ghash8(const struct tw_gcm_ctx *ctx, __m128i *ctr,
			   __m128i b[8], const __m128i *x, __m128i *y,
			   int hash)
{
	const __m128i *rk = (const __m128i *)ctx->aes.rk.ni[0];
	const __m128i *hp = (const __m128i *)ctx->hpow[TW_GCM_NPOW - 8];
	const __m128i one = _mm_set_epi32(0, 0, 0, 1);
	unsigned nr = ctx->aes.nr;
	__m128i b0, b1, b2, b3, b4, b5, b6, b7, c = *ctr;
	struct acc a = { _mm_setzero_si128(), _mm_setzero_si128(),
			 _mm_setzero_si128() };

#define AES8(op, k)                                                           \
	do {                                                                  \
		__m128i k_ = (k);                                             \
		b0 = op(b0, k_);                                              \
		b1 = op(b1, k_);                                              \
		b2 = op(b2, k_);                                              \
		b3 = op(b3, k_);                                              \
		b4 = op(b4, k_);                                              \
		b5 = op(b5, k_);                                              \
		b6 = op(b6, k_);                                              \
		b7 = op(b7, k_);                                              \
	} while (0)
#define ROUND_H(r)                                                            \
	do {                                                                  \
		AES8(_mm_aesenc_si128, rk[r]);                                \
		if (hash)                                                     \
			acc_mul(&a, r == 1 ? _mm_xor_si128(*y, x[0]) : x[r - 1], \
				hp[r - 1]);                                   \
	} while (0)
	/* inc32 (§6.2): the low 32 bits of the reversed block. */
	b0 = bswap(c);
	c = _mm_add_epi32(c, one);
	b1 = bswap(c);
	c = _mm_add_epi32(c, one);
	b2 = bswap(c);
	c = _mm_add_epi32(c, one);
	b3 = bswap(c);
	c = _mm_add_epi32(c, one);
	b4 = bswap(c);
	c = _mm_add_epi32(c, one);
	b5 = bswap(c);
	c = _mm_add_epi32(c, one);
	b6 = bswap(c);
	c = _mm_add_epi32(c, one);
	b7 = bswap(c);
	*ctr = _mm_add_epi32(c, one);
	AES8(_mm_xor_si128, rk[0]);
	ROUND_H(1);
	ROUND_H(2);
	ROUND_H(3);
	ROUND_H(4);
	ROUND_H(5);
	ROUND_H(6);
	ROUND_H(7);
	ROUND_H(8);
	AES8(_mm_aesenc_si128, rk[9]);
	for (unsigned r = 10; r < nr; r++)
		AES8(_mm_aesenc_si128, rk[r]);
	AES8(_mm_aesenclast_si128, rk[nr]);
#undef ROUND_H
#undef AES8
	b[0] = b0;
	b[1] = b1;
	b[2] = b2;
	b[3] = b3;
	b[4] = b4;
	b[5] = b5;
	b[6] = b6;
	b[7] = b7;
	if (hash)
		*y = reduce(&a);
}

NI void tw_gcm_clmul_crypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[12],
			   const uint8_t *aad, size_t aad_len,
			   const uint8_t *in, uint8_t *out, size_t len,
			   uint8_t tag[16], int enc)
{
	const __m128i *rk = (const __m128i *)ctx->aes.rk.ni[0];
	unsigned nr = ctx->aes.nr;
	uint8_t j0[16];
	__m128i y, ctr, ek_j0, lenb, b[8], x[8], pend[8];
	size_t total = len;
	bool have_pend = false;

	/* §7.1 step 2: J0 = IV || 0^31 || 1; the data starts at inc32(J0). */
	memcpy(j0, iv, 12);
	tw_store_be32(j0 + 12, 1);
	ctr = bswap(_mm_loadu_si128((const __m128i *)j0));
	ek_j0 = aes1(rk, nr, bswap(ctr));
	ctr = _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, 1));

	y = ghash_bytes(ctx, _mm_setzero_si128(), aad, aad_len);

	/* Eight blocks per pass. Encryption hashes the previous pass's
	 * ciphertext while computing this pass's keystream; decryption
	 * hashes this pass's own (input) ciphertext. */
	for (; len >= 128; len -= 128, in += 128, out += 128) {
		if (!enc) {
			_Pragma("GCC unroll 8")
			for (int j = 0; j < 8; j++)
				x[j] = bswap(_mm_loadu_si128((const __m128i *)(in + 16 * j)));
			aes8_ghash8(ctx, &ctr, b, x, &y, 1);
		} else {
			if (have_pend)
				aes8_ghash8(ctx, &ctr, b, pend, &y, 1);
			else
				aes8_ghash8(ctx, &ctr, b, pend, &y, 0);
		}
		_Pragma("GCC unroll 8")
		for (int j = 0; j < 8; j++) {
			__m128i c = _mm_xor_si128(
				b[j], _mm_loadu_si128((const __m128i *)(in + 16 * j)));

			_mm_storeu_si128((__m128i *)(out + 16 * j), c);
			pend[j] = bswap(c);
		}
		have_pend = enc != 0;
	}
	if (have_pend)
		y = ghash_n(ctx, y, pend, 8);

	/* §7.1 step 5: [len(A)]_64 || [len(C)]_64, in the reversed form. */
	lenb = _mm_set_epi64x((long long)((uint64_t)aad_len << 3),
			      (long long)((uint64_t)total << 3));

	/* The last 0..127 bytes: keystream for all of them at once; the
	 * length block joins their aggregate when there is room. */
	if (len > 0) {
		uint8_t buf[128];
		unsigned nb = (unsigned)((len + 15) / 16);

		memset(buf, 0, sizeof(buf));
		memcpy(buf, in, len);
		aes8_ghash8(ctx, &ctr, b, pend, &y, 0);
		for (unsigned j = 0; j < nb; j++) {
			__m128i v = _mm_loadu_si128((const __m128i *)(buf + 16 * j));

			x[j] = bswap(v); /* decryption: C, zero-padded */
			_mm_storeu_si128((__m128i *)(buf + 16 * j),
					 _mm_xor_si128(v, b[j]));
		}
		memcpy(out, buf, len);
		if (enc) {
			/* §7.1 step 4: C is hashed zero-padded (0^u). */
			memset(buf + len, 0, sizeof(buf) - len);
			for (unsigned j = 0; j < nb; j++)
				x[j] = bswap(_mm_loadu_si128((const __m128i *)(buf + 16 * j)));
		}
		if (nb < 8) {
			x[nb] = lenb;
			y = ghash_n(ctx, y, x, nb + 1);
		} else {
			y = ghash_n(ctx, y, x, nb);
			y = ghash_n(ctx, y, &lenb, 1);
		}
		tw_wipe(buf, sizeof(buf));
	} else {
		y = ghash_n(ctx, y, &lenb, 1);
	}
	/* §7.1 step 6: T = GCTR_K(J0, S). */
	_mm_storeu_si128((__m128i *)tag, _mm_xor_si128(bswap(y), ek_j0));
	tw_wipe(j0, sizeof(j0));
}

#endif
