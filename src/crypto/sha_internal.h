/*
 * twag — internal SHA-1/SHA-256 entry points shared by src/crypto and
 * src/auth (not a public header).
 *
 * The raw compression functions are exposed because HMAC precomputes the
 * keyed inner/outer states and the FIPS 186-2 PRF of RFC 4186/4187 calls
 * the SHA-1 compression G(t, c) on an unpadded 64-octet block.
 */
#ifndef TWAG_SHA_INTERNAL_H
#define TWAG_SHA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/bytes.h"

/* FIPS 180-4 §6.1.2 / §6.2.2 steps 1-4 on nblocks consecutive 64-octet
 * blocks, updating the chaining value h in place. No padding. Dispatches
 * to SHA-NI when tw_cpu_has(TW_CPU_SHANI), else the portable code. */
void tw_sha1_blocks(uint32_t h[5], const uint8_t *blocks, size_t nblocks);
void tw_sha256_blocks(uint32_t h[8], const uint8_t *blocks, size_t nblocks);

/* FIPS 180-4 §4.2.2: the 64 SHA-256 constants K. */
extern const uint32_t tw_sha256_k[64];

/*
 * The end of an HMAC-SHA-256 (RFC 2104 §2 steps (4)-(7)): continues the
 * inner hash from h_in over nblocks already padded blocks, then the one
 * outer block from ostate; out = the 32-octet MAC. On SHA-NI the inner
 * digest stays in registers.
 */
void tw_sha256_hmac_blocks(const uint32_t h_in[8], const uint32_t ostate[8],
			   const uint8_t *blocks, size_t nblocks,
			   uint8_t out[32]);

struct tw_hmac_sha256_ctx;

/*
 * HMAC-SHA-256 under a keyed context of a message already padded as the
 * continuation of the key block: blocks is nblocks * 64 octets ending in
 * the FIPS 180-4 §5.1.1 padding for a (64 + len)-octet message (see
 * tw_sha256_pad_after_key). ctx is not modified. For the KDF hot paths.
 */
void tw_hmac_sha256_padded(const struct tw_hmac_sha256_ctx *ctx,
			   const uint8_t *blocks, size_t nblocks,
			   uint8_t out[32]);

/* Pads buf[0..len) in place for tw_hmac_sha256_padded (0x80, zeros, bit
 * length (64 + len) * 8). Returns the block count, or 0 when more than
 * max octets would be needed. */
size_t tw_sha256_pad_after_key(uint8_t *buf, size_t len, size_t max);

/*
 * Sixteen SHA-256 computations in lockstep (sha256_mb.c), for callers
 * whose messages all go through the same steps (the HMAC chains of a
 * batch of EAP-AKA' attaches): st[i][j] is chaining-value word i of lane
 * j. Lanes not in live (bit j) are left untouched and their inputs are
 * not read. AVX-512 runs the sixteen lanes at once; without it each lane
 * is compressed on its own (SHA-NI or portable), with the same results.
 */
enum { TW_SHA256_X16 = 16 };

/* Whether n jobs (of the same steps) are worth the lanes: with AVX-512,
 * a 16-lane step costs about what 7 SHA-NI blocks or 2 portable ones do,
 * so from 8 jobs with SHA-NI, 3 without; never without AVX-512 (the
 * lanes then run one after another: no gain). */
int tw_sha256_x16_worth(size_t n);

/* One 64-octet block p[j] into lane j. */
void tw_sha256_x16_blocks(uint32_t st[8][TW_SHA256_X16],
			  const uint8_t *const p[TW_SHA256_X16], uint16_t live);
/* The same with the block given as its words: w[k][j] = word k (FIPS
 * 180-4 §3.1, big-endian) of lane j's block. Every column of w is read
 * (an idle lane's is not used). */
void tw_sha256_x16_words(uint32_t st[8][TW_SHA256_X16],
			 const uint32_t w[16][TW_SHA256_X16], uint16_t live);

/* Keyed HMAC-SHA-256 states of sixteen lanes (RFC 2104 §2). */
struct tw_hmac_sha256_x16 {
	uint32_t ist[8][TW_SHA256_X16]; /* after K0 ^ ipad */
	uint32_t ost[8][TW_SHA256_X16]; /* after K0 ^ opad */
};

/* Keys lane j with key[j] (key_len octets, at most 64: a longer key is
 * cut, not hashed as RFC 2104 would; the same length in every lane). */
void tw_hmac_sha256_x16_init(struct tw_hmac_sha256_x16 *k,
			     const uint8_t *const key[TW_SHA256_X16], size_t key_len,
			     uint16_t live);
/* out[j] = HMAC of lane j's message, given padded after the key as for
 * tw_hmac_sha256_padded(): nblk[j] >= 1 blocks at blocks[j]. */
void tw_hmac_sha256_x16_padded(const struct tw_hmac_sha256_x16 *k,
			       const uint8_t *const blocks[TW_SHA256_X16],
			       const size_t nblk[TW_SHA256_X16],
			       uint8_t *const out[TW_SHA256_X16], uint16_t live);
/* Lane j's keyed states as a ready context (as after tw_hmac_sha256_init). */
void tw_hmac_sha256_x16_ctx(const struct tw_hmac_sha256_x16 *k, unsigned j,
			    struct tw_hmac_sha256_ctx *ctx);

/* FIPS 180-4 §5.3.1 / §5.3.3 initial hash values. */
extern const uint32_t tw_sha1_iv[5];
extern const uint32_t tw_sha256_iv[8];

/*
 * The Merkle-Damgard buffering and padding shared by SHA-1 and SHA-256
 * (FIPS 180-4 §5.1.1: a 1 bit, zeros to 448 mod 512, the 64-bit big-endian
 * bit length). Inline so that each caller's blocks function is a direct
 * call. total counts message octets; buf holds total % 64 of them.
 */
typedef void (*tw_md_blocks_fn)(uint32_t *h, const uint8_t *blocks, size_t nblocks);

static inline void tw_md_update(uint32_t *h, uint8_t buf[64], uint64_t *total,
				tw_md_blocks_fn blocks, const void *msg, size_t len)
{
	const uint8_t *p = msg;
	size_t used = (size_t)(*total & 63);

	if (len == 0)
		return;
	*total += len;
	if (used != 0) {
		size_t take = 64 - used < len ? 64 - used : len;

		memcpy(buf + used, p, take);
		p += take;
		len -= take;
		if (used + take < 64)
			return;
		blocks(h, buf, 1);
	}
	if (len >= 64) {
		blocks(h, p, len / 64);
		p += len & ~(size_t)63;
		len &= 63;
	}
	if (len != 0)
		memcpy(buf, p, len);
}

static inline void tw_md_pad(uint32_t *h, uint8_t buf[64], uint64_t total,
			     tw_md_blocks_fn blocks)
{
	size_t used = (size_t)(total & 63);

	buf[used++] = 0x80;
	if (used > 56) {
		memset(buf + used, 0, 64 - used);
		blocks(h, buf, 1);
		used = 0;
	}
	memset(buf + used, 0, 56 - used);
	tw_store_be64(buf + 56, total << 3);
	blocks(h, buf, 1);
}

#endif
