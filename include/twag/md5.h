/*
 * twag — MD5 (RFC 1321, April 1992) and HMAC-MD5 (RFC 2104; test vectors
 * RFC 2202 §2), for the legacy AH transform HMAC-MD5-96 (RFC 2403) only.
 *
 * MD5 is broken as a hash (collisions are practical, RFC 6151); HMAC-MD5
 * is not known to be broken as a MAC, and is kept here so the benchmark can
 * compare the legacy IPsec transforms. Never a default.
 *
 * Contexts are caller-owned and hold no pointers; copying a context forks
 * it. The HMAC context follows twag/hmac.h: _init() once per key, then any
 * number of _update()/_final() rounds.
 */
#ifndef TWAG_MD5_H
#define TWAG_MD5_H

#include <stddef.h>
#include <stdint.h>

enum {
	TW_MD5_LEN = 16,
	TW_MD5_BLOCK_LEN = 64,
};

struct tw_md5_ctx {
	uint32_t h[4];   /* chaining value A, B, C, D (RFC 1321 §3.3) */
	uint64_t len;    /* message octets so far */
	uint8_t buf[64]; /* partial block, len % 64 octets used */
};

struct tw_hmac_md5_ctx {
	struct tw_md5_ctx inner; /* running H((K0 ^ ipad) | m...) */
	uint32_t istate[4];      /* chaining value after K0 ^ ipad */
	uint32_t ostate[4];      /* chaining value after K0 ^ opad */
};

/* RFC 1321 §3.3: sets A, B, C, D to their initial values. */
void tw_md5_init(struct tw_md5_ctx *ctx);
/* Absorbs len octets (msg may be NULL when len is 0). */
void tw_md5_update(struct tw_md5_ctx *ctx, const void *msg, size_t len);
/* RFC 1321 §3.1-3.2 padding and length, §3.5 output: writes the 16-octet
 * digest and wipes the context. */
void tw_md5_final(struct tw_md5_ctx *ctx, uint8_t out[static 16]);
/* One-shot MD5 of msg. */
void tw_md5(uint8_t out[static 16], const void *msg, size_t len);

/* RFC 2104 §2: keys longer than 64 octets are hashed first. key may be NULL
 * when key_len is 0. */
void tw_hmac_md5_init(struct tw_hmac_md5_ctx *ctx, const uint8_t *key,
		      size_t key_len);
void tw_hmac_md5_update(struct tw_hmac_md5_ctx *ctx, const void *msg,
			size_t len);
/* Writes the 16-octet MAC and re-arms the context for the next message. */
void tw_hmac_md5_final(struct tw_hmac_md5_ctx *ctx, uint8_t out[static 16]);
/* Discards a partial message: keyed and empty again. */
void tw_hmac_md5_reset(struct tw_hmac_md5_ctx *ctx);
void tw_hmac_md5_wipe(struct tw_hmac_md5_ctx *ctx);
/* One-shot HMAC-MD5(key, msg). */
void tw_hmac_md5(uint8_t out[static 16], const uint8_t *key, size_t key_len,
		 const uint8_t *msg, size_t len);

/*
 * Multi-buffer MD5 (src/crypto/md5_mb.c): n independent jobs, each
 * absorbing whole 64-octet blocks into its own chaining value h (A, B, C,
 * D of RFC 1321 §3.3), from up to TW_MD5_MB_SEGS segments one after the
 * other (seg[i] holds nblk[i] blocks; unused segments have 0). Padding is
 * the caller's: a job is a compression run, not a whole hash. With AVX-512
 * sixteen jobs advance at once, one block each per step (MD5 is a chain of
 * dependent additions: one message cannot use the width, many can); with
 * AVX2 alone, the same as two interleaved halves of eight (from four jobs
 * up); else one job after another with the scalar code. Same results
 * either way.
 */
enum { TW_MD5_MB_SEGS = 4 };

struct tw_md5_job {
	uint32_t h[4];
	const uint8_t *seg[TW_MD5_MB_SEGS];
	size_t nblk[TW_MD5_MB_SEGS];
};

void tw_md5_mb(struct tw_md5_job *jobs, size_t n);

/* RFC 1321 §3.4 on n consecutive blocks from h (the scalar code). */
void tw_md5_compress(uint32_t h[4], const uint8_t *p, size_t n);

#endif
