/*
 * twag — SHA-1 and SHA-256 (FIPS 180-4; the test vectors are those of
 * FIPS 180-2 Appendix A/B and the NIST examples).
 *
 * Portable code everywhere; on x86-64 with SHA-NI (tw_cpu_has(TW_CPU_SHANI))
 * the compression function runs on the SHA extensions. The choice is made
 * on every block batch, so tw_cpu_restrict() takes effect immediately.
 *
 * Contexts are caller-owned and hold no pointers: copying a context forks
 * the hash (HMAC and the KDFs rely on that). A context that held secret
 * input should be wiped with tw_wipe() when no longer needed.
 */
#ifndef TWAG_SHA_H
#define TWAG_SHA_H

#include <stddef.h>
#include <stdint.h>

enum {
	TW_SHA1_LEN = 20,
	TW_SHA256_LEN = 32,
	TW_SHA_BLOCK_LEN = 64, /* both hashes use 512-bit blocks */
};

struct tw_sha1_ctx {
	uint32_t h[5];   /* chaining value H0..H4 */
	uint64_t len;    /* message octets so far */
	uint8_t buf[64]; /* partial block, len % 64 octets used */
};

struct tw_sha256_ctx {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
};

/* FIPS 180-4 §5.3.1: sets H(0) for SHA-1. */
void tw_sha1_init(struct tw_sha1_ctx *ctx);
/* Absorbs len octets of msg (msg may be NULL when len is 0). */
void tw_sha1_update(struct tw_sha1_ctx *ctx, const void *msg, size_t len);
/* FIPS 180-4 §5.1.1 padding, writes the 20-octet digest. The context is
 * wiped afterwards; call tw_sha1_init() to reuse it. */
void tw_sha1_final(struct tw_sha1_ctx *ctx, uint8_t out[static 20]);
/* One-shot SHA-1 of msg. */
void tw_sha1(uint8_t out[static 20], const void *msg, size_t len);

/* FIPS 180-4 §5.3.3: sets H(0) for SHA-256. */
void tw_sha256_init(struct tw_sha256_ctx *ctx);
void tw_sha256_update(struct tw_sha256_ctx *ctx, const void *msg, size_t len);
/* Writes the 32-octet digest and wipes the context. */
void tw_sha256_final(struct tw_sha256_ctx *ctx, uint8_t out[static 32]);
void tw_sha256(uint8_t out[static 32], const void *msg, size_t len);

/*
 * Multi-buffer SHA-256 (src/crypto/sha256_mb.c): n independent jobs, each
 * compressing whole 64-octet blocks into its own chaining value h (FIPS
 * 180-4 §6.2.2), from up to TW_SHA256_MB_SEGS segments one after the
 * other (seg[i] holds nblk[i] blocks). Padding is the caller's. With
 * AVX-512 and enough jobs to fill the lanes (9 or more with SHA-NI, 3 or
 * more without), sixteen jobs advance at once; else one after another
 * (SHA-NI or portable). Same results either way.
 */
enum { TW_SHA256_MB_SEGS = 4 };

struct tw_sha256_job {
	uint32_t h[8];
	const uint8_t *seg[TW_SHA256_MB_SEGS];
	size_t nblk[TW_SHA256_MB_SEGS];
};

void tw_sha256_mb(struct tw_sha256_job *jobs, size_t n);

#endif
