/*
 * twag — HMAC-SHA-1 and HMAC-SHA-256 (RFC 2104; test vectors RFC 2202 and
 * RFC 4231).
 *
 *   HMAC(K, m) = H((K0 ^ opad) | H((K0 ^ ipad) | m))
 *
 * A keyed context holds the chaining values after the (K0 ^ ipad) and
 * (K0 ^ opad) blocks, so one key serves many messages for the cost of the
 * message blocks plus one outer block: _init() once, then any number of
 * _update()/_final() rounds (each _final() leaves the context keyed and
 * ready for the next message). Copying a keyed context is allowed and is
 * how the KDFs fork it. Wipe it with _wipe() when the key is done.
 */
#ifndef TWAG_HMAC_H
#define TWAG_HMAC_H

#include <stddef.h>
#include <stdint.h>

#include "twag/sha.h"

struct tw_hmac_sha256_ctx {
	struct tw_sha256_ctx inner; /* running H((K0 ^ ipad) | m...) */
	uint32_t istate[8];         /* chaining value after K0 ^ ipad */
	uint32_t ostate[8];         /* chaining value after K0 ^ opad */
};

struct tw_hmac_sha1_ctx {
	struct tw_sha1_ctx inner;
	uint32_t istate[5];
	uint32_t ostate[5];
};

/* RFC 2104 §2: keys longer than the 64-octet block are hashed first, shorter
 * ones zero-padded. key may be NULL when key_len is 0. */
void tw_hmac_sha256_init(struct tw_hmac_sha256_ctx *ctx, const uint8_t *key,
			 size_t key_len);
/* Absorbs len octets of the message (msg may be NULL when len is 0). */
void tw_hmac_sha256_update(struct tw_hmac_sha256_ctx *ctx, const void *msg,
			   size_t len);
/* Writes the 32-octet MAC and re-arms the context for a new message under
 * the same key. */
void tw_hmac_sha256_final(struct tw_hmac_sha256_ctx *ctx, uint8_t out[static 32]);
/* Discards a partial message: the context is keyed and empty again. */
void tw_hmac_sha256_reset(struct tw_hmac_sha256_ctx *ctx);
/* Wipes the key material held by the context. */
void tw_hmac_sha256_wipe(struct tw_hmac_sha256_ctx *ctx);
/* One-shot HMAC-SHA-256(key, msg). */
void tw_hmac_sha256(uint8_t out[static 32], const uint8_t *key, size_t key_len,
		    const uint8_t *msg, size_t len);

/* The same for HMAC-SHA-1 (20-octet MAC; EAP-SIM/AKA AT_MAC sends its first
 * 16 octets, RFC 4186 §10.14 / RFC 4187 §10.15). */
void tw_hmac_sha1_init(struct tw_hmac_sha1_ctx *ctx, const uint8_t *key,
		       size_t key_len);
void tw_hmac_sha1_update(struct tw_hmac_sha1_ctx *ctx, const void *msg,
			 size_t len);
void tw_hmac_sha1_final(struct tw_hmac_sha1_ctx *ctx, uint8_t out[static 20]);
void tw_hmac_sha1_reset(struct tw_hmac_sha1_ctx *ctx);
void tw_hmac_sha1_wipe(struct tw_hmac_sha1_ctx *ctx);
void tw_hmac_sha1(uint8_t out[static 20], const uint8_t *key, size_t key_len,
		  const uint8_t *msg, size_t len);

#endif
