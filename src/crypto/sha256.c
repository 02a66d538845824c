/*
 * twag — SHA-256 (FIPS 180-4, August 2015): a portable compression function
 * and a SHA-NI kernel (Intel SHA extensions: SHA256RNDS2/MSG1/MSG2),
 * selected per call with tw_cpu_has(TW_CPU_SHANI).
 */
#include <string.h>

#include "../common/vec_scrub.h"
#include "sha_internal.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/sha.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

const uint32_t tw_sha256_iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* FIPS 180-4 §4.2.2: the 64 constants K0..K63. */
const uint32_t tw_sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

/* FIPS 180-4 §4.1.2 functions. */
#define CH(x, y, z) (((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define BSIG0(x) (rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22))
#define BSIG1(x) (rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25))
#define SSIG0(x) (rotr(x, 7) ^ rotr(x, 18) ^ ((x) >> 3))
#define SSIG1(x) (rotr(x, 17) ^ rotr(x, 19) ^ ((x) >> 10))

static void blocks_portable(uint32_t h[8], const uint8_t *p, size_t n)
{
	uint32_t w[16];

	while (n--) {
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
		uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];

		/* §6.2.2 step 1: W_t = M_t (t < 16), else
		 * W_t = σ1(W_t-2) + W_t-7 + σ0(W_t-15) + W_t-16, kept in a
		 * 16-word ring. */
		for (int t = 0; t < 64; t++) {
			uint32_t wt;

			if (t < 16) {
				wt = w[t] = tw_load_be32(p + 4 * t);
			} else {
				wt = SSIG1(w[(t - 2) & 15]) + w[(t - 7) & 15] +
				     SSIG0(w[(t - 15) & 15]) + w[t & 15];
				w[t & 15] = wt;
			}
			/* §6.2.2 step 3 */
			uint32_t t1 = hh + BSIG1(e) + CH(e, f, g) + tw_sha256_k[t] + wt;
			uint32_t t2 = BSIG0(a) + MAJ(a, b, c);

			hh = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
		h[5] += f;
		h[6] += g;
		h[7] += hh;
		p += 64;
	}
	tw_wipe(w, sizeof(w));
#if defined(__x86_64__)
	/* the compiler may have used xmm registers for message words */
	TW_CLEAR_XMM();
#endif
}

#if defined(__x86_64__)
/*
 * SHA-NI: SHA256RNDS2 does two rounds on the state split as ABEF/CDGH;
 * SHA256MSG1/MSG2 compute the σ0/σ1 parts of the message schedule four
 * words at a time. W[g] holds message words 4g..4g+3 (in a ring of four).
 */
#define RNDS4(g)                                                              \
	do {                                                                  \
		__m128i m_ = _mm_add_epi32(w[(g) & 3],                        \
					   _mm_loadu_si128((const __m128i *)&tw_sha256_k[4 * (g)])); \
		st1 = _mm_sha256rnds2_epu32(st1, st0, m_);                    \
		m_ = _mm_shuffle_epi32(m_, 0x0e);                             \
		st0 = _mm_sha256rnds2_epu32(st0, st1, m_);                    \
	} while (0)

/* W[g] = σ1-part(σ0-part(W[g-4], W[g-3]) + W[g-1..g-2 shifted]) */
#define SCHED(g)                                                              \
	do {                                                                  \
		__m128i t_ = _mm_sha256msg1_epu32(w[(g) & 3], w[((g) + 1) & 3]); \
		t_ = _mm_add_epi32(t_, _mm_alignr_epi8(w[((g) + 3) & 3],        \
						       w[((g) + 2) & 3], 4));    \
		w[(g) & 3] = _mm_sha256msg2_epu32(t_, w[((g) + 3) & 3]);      \
	} while (0)

__attribute__((target("sha,sse4.1"))) static void
blocks_shani(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll,
					     0x0405060700010203ll);
	__m128i st0, st1, tmp, w[4];

	tmp = _mm_loadu_si128((const __m128i *)&h[0]);  /* d c b a */
	st1 = _mm_loadu_si128((const __m128i *)&h[4]);  /* h g f e */
	tmp = _mm_shuffle_epi32(tmp, 0xb1);             /* c d a b */
	st1 = _mm_shuffle_epi32(st1, 0x1b);             /* e f g h */
	st0 = _mm_alignr_epi8(tmp, st1, 8);             /* ABEF */
	st1 = _mm_blend_epi16(st1, tmp, 0xf0);          /* CDGH */

	while (n--) {
		__m128i s0 = st0, s1 = st1;

		for (int i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(
				_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
		RNDS4(0);
		RNDS4(1);
		RNDS4(2);
		RNDS4(3);
		SCHED(4);  RNDS4(4);
		SCHED(5);  RNDS4(5);
		SCHED(6);  RNDS4(6);
		SCHED(7);  RNDS4(7);
		SCHED(8);  RNDS4(8);
		SCHED(9);  RNDS4(9);
		SCHED(10); RNDS4(10);
		SCHED(11); RNDS4(11);
		SCHED(12); RNDS4(12);
		SCHED(13); RNDS4(13);
		SCHED(14); RNDS4(14);
		SCHED(15); RNDS4(15);
		st0 = _mm_add_epi32(st0, s0);
		st1 = _mm_add_epi32(st1, s1);
		p += 64;
	}

	tmp = _mm_shuffle_epi32(st0, 0x1b);             /* FEBA */
	st1 = _mm_shuffle_epi32(st1, 0xb1);             /* DCHG */
	st0 = _mm_blend_epi16(tmp, st1, 0xf0);          /* DCBA */
	st1 = _mm_alignr_epi8(st1, tmp, 8);             /* HGFE */
	_mm_storeu_si128((__m128i *)&h[0], st0);
	_mm_storeu_si128((__m128i *)&h[4], st1);
	/* the message words and chaining values are key-derived in HMAC
	 * (a keyed state is as good as the key): none left in registers,
	 * nor in the schedule kept in the frame (its last 16 words give
	 * the block back) */
	tw_wipe(w, sizeof(w));
	TW_CLEAR_XMM();
}

/*
 * HMAC's inner tail and outer block in one SHA-NI pass (RFC 2104 §2 steps
 * (4)-(7)): the inner chaining value never leaves the registers. After the
 * final inner block the state, put back in H0..H7 order, is exactly W0..W7
 * of the outer block (the inner digest is big-endian H0..H7 and the outer
 * block reads it back big-endian); W8 = 0x80000000 and W15 = (64 + 32) * 8
 * are the padding. This saves the store/reload round trip of the digest
 * through memory on every HMAC.
 */
__attribute__((target("sha,sse4.1"))) static void
hmac_shani(const uint32_t hin[8], const uint32_t ostate[8], const uint8_t *p,
	   size_t n, uint8_t out[32])
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll,
					     0x0405060700010203ll);
	__m128i st0, st1, tmp, w[4];
	uint32_t h[8];

	memcpy(h, hin, sizeof(h));
	blocks_shani(h, p, n);
	w[0] = _mm_loadu_si128((const __m128i *)&h[0]);
	w[1] = _mm_loadu_si128((const __m128i *)&h[4]);
	w[2] = _mm_set_epi32(0, 0, 0, (int)0x80000000u);
	w[3] = _mm_set_epi32((64 + 32) * 8, 0, 0, 0);

	tmp = _mm_loadu_si128((const __m128i *)&ostate[0]);
	st1 = _mm_loadu_si128((const __m128i *)&ostate[4]);
	tmp = _mm_shuffle_epi32(tmp, 0xb1);
	st1 = _mm_shuffle_epi32(st1, 0x1b);
	st0 = _mm_alignr_epi8(tmp, st1, 8);
	st1 = _mm_blend_epi16(st1, tmp, 0xf0);
	{
		__m128i s0 = st0, s1 = st1;

		RNDS4(0);
		RNDS4(1);
		RNDS4(2);
		RNDS4(3);
		SCHED(4);  RNDS4(4);
		SCHED(5);  RNDS4(5);
		SCHED(6);  RNDS4(6);
		SCHED(7);  RNDS4(7);
		SCHED(8);  RNDS4(8);
		SCHED(9);  RNDS4(9);
		SCHED(10); RNDS4(10);
		SCHED(11); RNDS4(11);
		SCHED(12); RNDS4(12);
		SCHED(13); RNDS4(13);
		SCHED(14); RNDS4(14);
		SCHED(15); RNDS4(15);
		st0 = _mm_add_epi32(st0, s0);
		st1 = _mm_add_epi32(st1, s1);
	}
	tmp = _mm_shuffle_epi32(st0, 0x1b);
	st1 = _mm_shuffle_epi32(st1, 0xb1);
	st0 = _mm_blend_epi16(tmp, st1, 0xf0);
	st1 = _mm_alignr_epi8(st1, tmp, 8);
	_mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(st0, bswap));
	_mm_storeu_si128((__m128i *)(out + 16), _mm_shuffle_epi8(st1, bswap));
	tw_wipe(w, sizeof(w));
	TW_CLEAR_XMM();
	tw_wipe(h, sizeof(h));
}
#undef RNDS4
#undef SCHED
#endif

void tw_sha256_hmac_blocks(const uint32_t h_in[8], const uint32_t ostate[8],
			   const uint8_t *blocks, size_t nblocks,
			   uint8_t out[32])
{
	uint8_t blk[64];
	uint32_t h[8];

#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_SHANI | TW_CPU_SSE41)) {
		hmac_shani(h_in, ostate, blocks, nblocks, out);
		return;
	}
#endif
	memcpy(h, h_in, sizeof(h));
	blocks_portable(h, blocks, nblocks);
	for (int i = 0; i < 8; i++)
		tw_store_be32(blk + 4 * i, h[i]);
	blk[32] = 0x80;
	memset(blk + 33, 0, 64 - 33 - 8);
	tw_store_be64(blk + 56, (64 + 32) * 8);
	memcpy(h, ostate, sizeof(h));
	blocks_portable(h, blk, 1);
	for (int i = 0; i < 8; i++)
		tw_store_be32(out + 4 * i, h[i]);
	tw_wipe(blk, sizeof(blk));
	tw_wipe(h, sizeof(h));
}

void tw_sha256_blocks(uint32_t h[8], const uint8_t *blocks, size_t nblocks)
{
#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_SHANI | TW_CPU_SSE41)) {
		blocks_shani(h, blocks, nblocks);
		return;
	}
#endif
	blocks_portable(h, blocks, nblocks);
}

void tw_sha256_init(struct tw_sha256_ctx *ctx)
{
	memcpy(ctx->h, tw_sha256_iv, sizeof(ctx->h));
	ctx->len = 0;
}

void tw_sha256_update(struct tw_sha256_ctx *ctx, const void *msg, size_t len)
{
	tw_md_update(ctx->h, ctx->buf, &ctx->len, tw_sha256_blocks, msg, len);
}

void tw_sha256_final(struct tw_sha256_ctx *ctx, uint8_t out[static 32])
{
	/* FIPS 180-4 §5.1.1 padding, then H0..H7 big-endian */
	tw_md_pad(ctx->h, ctx->buf, ctx->len, tw_sha256_blocks);
	for (int i = 0; i < 8; i++)
		tw_store_be32(out + 4 * i, ctx->h[i]);
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_sha256(uint8_t out[static 32], const void *msg, size_t len)
{
	struct tw_sha256_ctx ctx;

	tw_sha256_init(&ctx);
	tw_sha256_update(&ctx, msg, len);
	tw_sha256_final(&ctx, out);
}
