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

/* FIPS 180-4 §6.1.2 / §6.2.2 steps 1-4 on nblocks consecutive 64-octet
 * blocks, updating the chaining value h in place. No padding. Dispatches
 * to SHA-NI when tw_cpu_has(TW_CPU_SHANI), else the portable code. */
void tw_sha1_blocks(uint32_t h[5], const uint8_t *blocks, size_t nblocks);
void tw_sha256_blocks(uint32_t h[8], const uint8_t *blocks, size_t nblocks);

/* FIPS 180-4 §5.3.1 / §5.3.3 initial hash values. */
extern const uint32_t tw_sha1_iv[5];
extern const uint32_t tw_sha256_iv[8];

#endif
