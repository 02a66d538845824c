/*
 * twag — AES-GCM (NIST SP 800-38D, November 2007) with VAES and
 * VPCLMULQDQ on 512-bit registers (AVX-512 F/BW/VL): four blocks per zmm
 * register (one per 128-bit lane), sixteen blocks per iteration. The AES
 * rounds of sixteen counter blocks are interleaved with the GHASH of
 * sixteen ciphertext blocks, multiplied by H^16..H^1 lane-wise and
 * summed unreduced, then one reduction per sixteen blocks. The last 0..255
 * bytes are handled with AVX-512BW byte-masked loads and stores, so a
 * packet never needs a bounce buffer.
 *
 * Field representation and reduction are those of gcm.c and gcm_ni.c
 * (blocks byte-reversed per lane, powers of H pre-multiplied by x^-1,
 * hpow[] highest power first so a zmm load of hpow[4k..4k+3] gives the
 * powers for lanes in message order). Constant time: no data-dependent
 * branches or addresses beyond the public lengths. Selected by gcm.c
 * when tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512 | TW_CPU_AVX2).
 */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/gcm.h"

#define V_ATTR "aes,pclmul,sse4.1,avx2,vaes,vpclmulqdq,avx512f,avx512vl,avx512bw"
#define V_TARGET __attribute__((target(V_ATTR)))
#define V_INLINE static inline __attribute__((always_inline, target(V_ATTR)))

V_INLINE __m512i bswap_z(__m512i x)
{
	const __m512i m = _mm512_broadcast_i32x4(_mm_set_epi8(
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));

	return _mm512_shuffle_epi8(x, m);
}

V_INLINE __m128i bswap_x(__m128i x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
						10, 11, 12, 13, 14, 15));
}

/* Unreduced sums of the lane-wise 256-bit products. */
struct zacc {
	__m512i lo, hi, mid;
};

V_INLINE void zacc_init(struct zacc *a)
{
	a->lo = _mm512_setzero_si512();
	a->hi = _mm512_setzero_si512();
	a->mid = _mm512_setzero_si512();
}

V_INLINE void zacc_mul(struct zacc *a, __m512i x, __m512i h)
{
	a->lo = _mm512_xor_si512(a->lo, _mm512_clmulepi64_epi128(x, h, 0x00));
	a->hi = _mm512_xor_si512(a->hi, _mm512_clmulepi64_epi128(x, h, 0x11));
	a->mid = _mm512_ternarylogic_epi64(a->mid,
					   _mm512_clmulepi64_epi128(x, h, 0x01),
					   _mm512_clmulepi64_epi128(x, h, 0x10),
					   0x96);
}

V_INLINE __m128i fold_lanes(__m512i z)
{
	__m256i t = _mm256_xor_si256(_mm512_castsi512_si256(z),
				     _mm512_extracti64x4_epi64(z, 1));

	return _mm_xor_si128(_mm256_castsi256_si128(t),
			     _mm256_extracti128_si256(t, 1));
}

/* Sum the four lanes (the reduction is linear), then gcm.c's two folds. */
V_INLINE __m128i zacc_reduce(const struct zacc *a)
{
	const __m128i k = _mm_set_epi64x((long long)0xc200000000000000ull, 0);
	__m128i mid = fold_lanes(a->mid);
	__m128i lo = _mm_xor_si128(fold_lanes(a->lo), _mm_slli_si128(mid, 8));
	__m128i hi = _mm_xor_si128(fold_lanes(a->hi), _mm_srli_si128(mid, 8));
	__m128i t;

	t = _mm_clmulepi64_si128(lo, k, 0x10);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	t = _mm_clmulepi64_si128(lo, k, 0x10);
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
	return _mm_xor_si128(lo, hi);
}

/* The powers for block k*4 .. k*4+3 of an n-block (n <= 16) aggregate:
 * H^(n-4k) .. H^(n-4k-3), lanes past the n-th block zeroed. */
V_INLINE __m512i hpow_z(const struct tw_gcm_ctx *ctx, unsigned n, unsigned k)
{
	const uint64_t *p = ctx->hpow[TW_GCM_NPOW - n + 4 * k];
	unsigned lanes = n - 4 * k >= 4 ? 4 : n - 4 * k;

	if (lanes == 4)
		return _mm512_loadu_si512((const void *)p);
	return _mm512_maskz_loadu_epi64((__mmask8)((1u << (2 * lanes)) - 1), p);
}

/* Y = (Y ^ X_1)*H^n ^ ... ^ X_n*H for n (1..16) byte-reversed blocks in
 * d[0..3], four per register, zero past the n-th. */
V_INLINE __m128i ghash_z(const struct tw_gcm_ctx *ctx, __m128i y,
			 const __m512i d[4], unsigned n)
{
	struct zacc a;

	zacc_init(&a);
	zacc_mul(&a, _mm512_xor_si512(d[0], _mm512_inserti32x4(
						      _mm512_setzero_si512(), y, 0)),
		 hpow_z(ctx, n, 0));
	_Pragma("GCC unroll 4")
	for (unsigned k = 1; k < 4; k++)
		if (4 * k < n)
			zacc_mul(&a, d[k], hpow_z(ctx, n, k));
	return zacc_reduce(&a);
}

/* Byte mask of the part of [64k, 64k+64) below len. */
V_INLINE __mmask64 byte_mask(size_t len, unsigned k)
{
	if (len >= 64 * (size_t)(k + 1))
		return ~(__mmask64)0;
	if (len <= 64 * (size_t)k)
		return 0;
	return ((__mmask64)1 << (len - 64 * k)) - 1;
}

/* GHASH of len bytes (the last block zero-padded), 16 blocks at a time. */
V_INLINE __m128i ghash_bytes_z(const struct tw_gcm_ctx *ctx, __m128i y,
			       const uint8_t *p, size_t len)
{
	__m512i d[4];

	for (; len >= 256; len -= 256, p += 256) {
		_Pragma("GCC unroll 4")
		for (unsigned k = 0; k < 4; k++)
			d[k] = bswap_z(_mm512_loadu_si512((const void *)(p + 64 * k)));
		y = ghash_z(ctx, y, d, 16);
	}
	if (len > 0) {
		_Pragma("GCC unroll 4")
		for (unsigned k = 0; k < 4; k++)
			d[k] = bswap_z(_mm512_maskz_loadu_epi8(byte_mask(len, k),
							       p + 64 * k));
		y = ghash_z(ctx, y, d, (unsigned)((len + 15) / 16));
	}
	return y;
}

/* The AES rounds of nz (1..4) registers of counter blocks; the round keys
 * broadcast to every lane. */
V_INLINE void aes_z(const __m512i *rkz, unsigned nr, __m512i *b, unsigned nz)
{
	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < nz; k++)
		b[k] = _mm512_xor_si512(b[k], rkz[0]);
	for (unsigned r = 1; r < nr; r++) {
		_Pragma("GCC unroll 4")
		for (unsigned k = 0; k < nz; k++)
			b[k] = _mm512_aesenc_epi128(b[k], rkz[r]);
	}
	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < nz; k++)
		b[k] = _mm512_aesenclast_epi128(b[k], rkz[nr]);
}

/*
 * The last 1..255 bytes: keystream for nz = ceil(blocks/4) registers,
 * masked loads and stores, then the GHASH of the zero-padded ciphertext
 * followed by the length block lenb (§7.1 step 5), in the same aggregate
 * when there is room (fewer than 16 data blocks). nz is a constant at
 * each call site so the loops unroll into registers.
 */
V_INLINE __m128i tail_z(const struct tw_gcm_ctx *ctx, const __m512i *rkz,
			__m512i ctr, __m128i y, const uint8_t *in,
			uint8_t *out, size_t len, int enc, __m128i lenb,
			unsigned nz)
{
	const __m512i inc4 = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
	unsigned nblk = (unsigned)((len + 15) / 16);
	__m512i b[4], d[4];

	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < nz; k++) {
		b[k] = bswap_z(ctr);
		ctr = _mm512_add_epi32(ctr, inc4);
	}
	aes_z(rkz, ctx->aes.nr, b, nz);
	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < 4; k++)
		d[k] = _mm512_setzero_si512();
	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < nz; k++) {
		__mmask64 m = byte_mask(len, k);
		__m512i x = _mm512_maskz_loadu_epi8(m, in + 64 * k);
		/* Zero past len so the hashed ciphertext is padded (0^u). */
		__m512i c = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(x, b[k]));

		_mm512_mask_storeu_epi8(out + 64 * k, m, c);
		d[k] = bswap_z(enc ? c : x);
	}
	if (nblk == 16) {
		y = ghash_z(ctx, y, d, 16);
		d[0] = _mm512_inserti32x4(_mm512_setzero_si512(), lenb, 0);
		return ghash_z(ctx, y, d, 1);
	}
	/* The length block as block nblk: lane nblk % 4 of register nblk / 4. */
	_Pragma("GCC unroll 4")
	for (unsigned k = 0; k < 4; k++)
		if (nblk / 4 == k)
			d[k] = _mm512_mask_broadcast_i32x4(
				d[k], (__mmask16)(0xfu << (4 * (nblk % 4))), lenb);
	return ghash_z(ctx, y, d, nblk + 1);
}

/*
 * Sixteen counter blocks (four registers) through AES, returned in b[];
 * with hash set, the sixteen blocks g[] are folded into y meanwhile
 * (Y = (Y ^ G_1)*H^16 ^ ... ^ G_16*H), their multiplies placed between
 * the first AES rounds so both chains are in flight together.
 */
V_INLINE __m128i aes16_ghash16(const struct tw_gcm_ctx *ctx,
			       const __m512i *rkz, unsigned nr, __m512i *ctr,
			       __m512i b[4], const __m512i g[4], __m128i y,
			       int hash)
{
	const __m512i inc4 = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
	const __m512i *hz = (const __m512i *)ctx->hpow;
	__m512i b0, b1, b2, b3, c = *ctr;
	struct zacc a;

#define AES4(op, k)                                                           \
	do {                                                                  \
		b0 = op(b0, k);                                               \
		b1 = op(b1, k);                                               \
		b2 = op(b2, k);                                               \
		b3 = op(b3, k);                                               \
	} while (0)
	b0 = bswap_z(c);
	c = _mm512_add_epi32(c, inc4);
	b1 = bswap_z(c);
	c = _mm512_add_epi32(c, inc4);
	b2 = bswap_z(c);
	c = _mm512_add_epi32(c, inc4);
	b3 = bswap_z(c);
	*ctr = _mm512_add_epi32(c, inc4);
	AES4(_mm512_xor_si512, rkz[0]);
	zacc_init(&a);
	AES4(_mm512_aesenc_epi128, rkz[1]);
	if (hash)
		zacc_mul(&a, _mm512_xor_si512(g[0], _mm512_inserti32x4(
							    _mm512_setzero_si512(), y, 0)),
			 _mm512_loadu_si512((const void *)&hz[0]));
	AES4(_mm512_aesenc_epi128, rkz[2]);
	if (hash)
		zacc_mul(&a, g[1], _mm512_loadu_si512((const void *)&hz[1]));
	AES4(_mm512_aesenc_epi128, rkz[3]);
	if (hash)
		zacc_mul(&a, g[2], _mm512_loadu_si512((const void *)&hz[2]));
	AES4(_mm512_aesenc_epi128, rkz[4]);
	if (hash)
		zacc_mul(&a, g[3], _mm512_loadu_si512((const void *)&hz[3]));
	AES4(_mm512_aesenc_epi128, rkz[5]);
	AES4(_mm512_aesenc_epi128, rkz[6]);
	AES4(_mm512_aesenc_epi128, rkz[7]);
	AES4(_mm512_aesenc_epi128, rkz[8]);
	AES4(_mm512_aesenc_epi128, rkz[9]);
	if (nr > 10) {
		AES4(_mm512_aesenc_epi128, rkz[10]);
		AES4(_mm512_aesenc_epi128, rkz[11]);
		if (nr > 12) {
			AES4(_mm512_aesenc_epi128, rkz[12]);
			AES4(_mm512_aesenc_epi128, rkz[13]);
		}
	}
	AES4(_mm512_aesenclast_epi128, rkz[nr]);
#undef AES4
	b[0] = b0;
	b[1] = b1;
	b[2] = b2;
	b[3] = b3;
	return hash ? zacc_reduce(&a) : y;
}

V_TARGET void tw_gcm_vaes_crypt(const struct tw_gcm_ctx *ctx,
				const uint8_t iv[12], const uint8_t *aad,
				size_t aad_len, const uint8_t *in,
				uint8_t *out, size_t len, uint8_t tag[16],
				int enc)
{
	const __m128i *rk = (const __m128i *)ctx->aes.rk.ni[0];
	unsigned nr = ctx->aes.nr;
	size_t total = len;
	__m512i rkz[TW_AES_MAX_ROUNDS + 1], ctr, b[4], pend[4];
	__m128i y, j0, ek_j0, x, lenb;
	bool have_pend = false;
	uint8_t j0b[16];

	for (unsigned r = 0; r <= nr; r++)
		rkz[r] = _mm512_broadcast_i32x4(_mm_load_si128(&rk[r]));

	/* §7.1 step 2: J0 = IV || 0^31 || 1; block i of the data is
	 * encrypted under inc32^i(J0) (§6.5); counters are kept byte-
	 * reversed so inc32 is a 32-bit add in each lane. */
	memcpy(j0b, iv, 12);
	tw_store_be32(j0b + 12, 1);
	j0 = _mm_loadu_si128((const __m128i *)j0b);
	x = _mm_xor_si128(j0, rk[0]);
	for (unsigned r = 1; r < nr; r++)
		x = _mm_aesenc_si128(x, rk[r]);
	ek_j0 = _mm_aesenclast_si128(x, rk[nr]);
	ctr = _mm512_add_epi32(_mm512_broadcast_i32x4(bswap_x(j0)),
			       _mm512_set_epi32(0, 0, 0, 4, 0, 0, 0, 3,
						0, 0, 0, 2, 0, 0, 0, 1));

	y = ghash_bytes_z(ctx, _mm_setzero_si128(), aad, aad_len);

	/* Sixteen blocks per pass; encryption hashes the previous pass's
	 * ciphertext meanwhile, decryption this pass's input. */
	for (; len >= 256; len -= 256, in += 256, out += 256) {
		__m512i d[4];

		if (!enc) {
			_Pragma("GCC unroll 4")
			for (unsigned k = 0; k < 4; k++)
				d[k] = bswap_z(_mm512_loadu_si512((const void *)(in + 64 * k)));
			y = aes16_ghash16(ctx, rkz, nr, &ctr, b, d, y, 1);
		} else if (have_pend) {
			y = aes16_ghash16(ctx, rkz, nr, &ctr, b, pend, y, 1);
		} else {
			y = aes16_ghash16(ctx, rkz, nr, &ctr, b, pend, y, 0);
		}
		_Pragma("GCC unroll 4")
		for (unsigned k = 0; k < 4; k++) {
			__m512i c = _mm512_xor_si512(
				b[k], _mm512_loadu_si512((const void *)(in + 64 * k)));

			_mm512_storeu_si512((void *)(out + 64 * k), c);
			pend[k] = bswap_z(c);
		}
		have_pend = enc != 0;
	}
	if (have_pend)
		y = ghash_z(ctx, y, pend, 16);

	/* §7.1 step 5: [len(A)]_64 || [len(C)]_64, hashed with the tail. */
	lenb = _mm_set_epi64x((long long)((uint64_t)aad_len << 3),
			      (long long)((uint64_t)total << 3));
	switch ((len + 63) / 64) {
	case 1:
		y = tail_z(ctx, rkz, ctr, y, in, out, len, enc, lenb, 1);
		break;
	case 2:
		y = tail_z(ctx, rkz, ctr, y, in, out, len, enc, lenb, 2);
		break;
	case 3:
		y = tail_z(ctx, rkz, ctr, y, in, out, len, enc, lenb, 3);
		break;
	case 4:
		y = tail_z(ctx, rkz, ctr, y, in, out, len, enc, lenb, 4);
		break;
	default: {
		__m512i d[4];

		d[0] = _mm512_inserti32x4(_mm512_setzero_si512(), lenb, 0);
		y = ghash_z(ctx, y, d, 1);
		break;
	}
	}
	/* §7.1 step 6: T = GCTR_K(J0, S). */
	_mm_storeu_si128((__m128i *)tag, _mm_xor_si128(bswap_x(y), ek_j0));
	tw_wipe(j0b, sizeof(j0b));
}

#endif
