/*
 * twag — SHA-1 (FIPS 180-4, August 2015): a portable compression function
 * and a SHA-NI kernel (SHA1RNDS4/SHA1NEXTE/SHA1MSG1/SHA1MSG2), selected per
 * call with tw_cpu_has(TW_CPU_SHANI).
 *
 * SHA-1 is kept for what the protocols still require: EAP-SIM/AKA MK and
 * the FIPS 186-2 PRF (RFC 4186/4187), HMAC-SHA1-128 AT_MAC, HMAC-SHA1-96.
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

const uint32_t tw_sha1_iv[5] = {
	0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0,
};

static inline uint32_t rotl(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void blocks_portable(uint32_t h[5], const uint8_t *p, size_t n)
{
	uint32_t w[16];

	while (n--) {
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

		for (int t = 0; t < 80; t++) {
			uint32_t wt, f, k;

			/* §6.1.2 step 1: W_t = ROTL1(W_t-3 ^ W_t-8 ^ W_t-14 ^ W_t-16) */
			if (t < 16) {
				wt = w[t] = tw_load_be32(p + 4 * t);
			} else {
				wt = rotl(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^
					  w[(t - 14) & 15] ^ w[t & 15], 1);
				w[t & 15] = wt;
			}
			/* §4.1.1 f_t and §4.2.1 K_t */
			if (t < 20) {
				f = (b & c) | (~b & d);
				k = 0x5a827999;
			} else if (t < 40) {
				f = b ^ c ^ d;
				k = 0x6ed9eba1;
			} else if (t < 60) {
				f = (b & c) | (b & d) | (c & d);
				k = 0x8f1bbcdc;
			} else {
				f = b ^ c ^ d;
				k = 0xca62c1d6;
			}
			/* §6.1.2 step 3: T = ROTL5(a) + f_t(b,c,d) + e + K_t + W_t */
			uint32_t tt = rotl(a, 5) + f + e + k + wt;

			e = d;
			d = c;
			c = rotl(b, 30);
			b = a;
			a = tt;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
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
 * SHA-NI: SHA1RNDS4 does four rounds on ABCD (function/constant chosen by
 * the immediate, one per 20 rounds); SHA1NEXTE derives the next E from the
 * ABCD of four rounds before and adds it to the next message words.
 * m[g & 3] holds W[4g..4g+3]; e[] alternates between the two E values.
 * Group g schedules ahead: MSG2 finishes W for group g+1, XOR prepares
 * g+2 and MSG1 starts g+3 (only while those groups exist).
 */
#define GROUP(g)                                                              \
	do {                                                                  \
		if ((g) == 0)                                                 \
			e[0] = _mm_add_epi32(e[0], m[0]);                     \
		else                                                          \
			e[(g) & 1] = _mm_sha1nexte_epu32(e[(g) & 1], m[(g) & 3]); \
		e[((g) + 1) & 1] = abcd;                                      \
		if ((g) >= 3 && (g) + 1 < 20)                                 \
			m[((g) + 1) & 3] = _mm_sha1msg2_epu32(m[((g) + 1) & 3], m[(g) & 3]); \
		abcd = _mm_sha1rnds4_epu32(abcd, e[(g) & 1], (g) / 5);        \
		if ((g) >= 1 && (g) + 3 < 20)                                 \
			m[((g) + 3) & 3] = _mm_sha1msg1_epu32(m[((g) + 3) & 3], m[(g) & 3]); \
		if ((g) >= 2 && (g) + 2 < 20)                                 \
			m[((g) + 2) & 3] = _mm_xor_si128(m[((g) + 2) & 3], m[(g) & 3]); \
	} while (0)

__attribute__((target("sha,sse4.1"))) static void
blocks_shani(uint32_t h[5], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0001020304050607ll,
					     0x08090a0b0c0d0e0fll);
	__m128i abcd, e0, m[4], e[2];

	abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1b);
	e0 = _mm_set_epi32((int)h[4], 0, 0, 0);

	while (n--) {
		__m128i abcd_save = abcd, e_save = e0;

		for (int i = 0; i < 4; i++)
			m[i] = _mm_shuffle_epi8(
				_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
		e[0] = e0;
		e[1] = _mm_setzero_si128();
		GROUP(0);  GROUP(1);  GROUP(2);  GROUP(3);  GROUP(4);
		GROUP(5);  GROUP(6);  GROUP(7);  GROUP(8);  GROUP(9);
		GROUP(10); GROUP(11); GROUP(12); GROUP(13); GROUP(14);
		GROUP(15); GROUP(16); GROUP(17); GROUP(18); GROUP(19);
		/* After group 19, e[0] holds ABCD of rounds 72-75: its E. */
		e0 = _mm_sha1nexte_epu32(e[0], e_save);
		abcd = _mm_add_epi32(abcd, abcd_save);
		p += 64;
	}
	abcd = _mm_shuffle_epi32(abcd, 0x1b);
	_mm_storeu_si128((__m128i *)h, abcd);
	h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
	/* message words and chaining values (key-derived in HMAC and the
	 * FIPS 186 PRF): none left in registers, nor in the schedule kept
	 * in the frame */
	tw_wipe(m, sizeof(m));
	tw_wipe(e, sizeof(e));
	TW_CLEAR_XMM();
}
#undef GROUP
#endif

void tw_sha1_blocks(uint32_t h[5], const uint8_t *blocks, size_t nblocks)
{
#if defined(__x86_64__)
	if (tw_cpu_has(TW_CPU_SHANI | TW_CPU_SSE41)) {
		blocks_shani(h, blocks, nblocks);
		return;
	}
#endif
	blocks_portable(h, blocks, nblocks);
}

void tw_sha1_init(struct tw_sha1_ctx *ctx)
{
	memcpy(ctx->h, tw_sha1_iv, sizeof(ctx->h));
	ctx->len = 0;
}

void tw_sha1_update(struct tw_sha1_ctx *ctx, const void *msg, size_t len)
{
	tw_md_update(ctx->h, ctx->buf, &ctx->len, tw_sha1_blocks, msg, len);
}

void tw_sha1_final(struct tw_sha1_ctx *ctx, uint8_t out[static 20])
{
	/* FIPS 180-4 §5.1.1 padding, then H0..H4 big-endian */
	tw_md_pad(ctx->h, ctx->buf, ctx->len, tw_sha1_blocks);
	for (int i = 0; i < 5; i++)
		tw_store_be32(out + 4 * i, ctx->h[i]);
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_sha1(uint8_t out[static 20], const void *msg, size_t len)
{
	struct tw_sha1_ctx ctx;

	tw_sha1_init(&ctx);
	tw_sha1_update(&ctx, msg, len);
	tw_sha1_final(&ctx, out);
}
