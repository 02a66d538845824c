/*
 * twag — AES key wrap: RFC 3394 (September 2002; default IV A6A6A6A6A6A6A6A6)
 * and AES key wrap with padding, RFC 5649 (August 2009; AIV A65959A6 || MLI).
 * The same algorithms are NIST SP 800-38F KW and KWP.
 *
 * The store keeps subscriber keys (Ki, OPc) wrapped under a key-encryption
 * key (KEK) of 16, 24 or 32 bytes (AES-128/192/256); an "eOPc" in a request
 * is unwrapped per request.
 *
 * Common rules: out receives the result and *out_len its length, both valid
 * only when TW_OK is returned (*out_len is 0 otherwise). out may be the same
 * buffer as the input. A buffer of out_max bytes too small for the result
 * gives TW_ERR_OVERFLOW before anything is computed. Unwrapping checks the
 * integrity value in constant time and, on failure, returns TW_ERR_AUTH and
 * zeroes every byte it wrote to out. Wrong lengths give TW_ERR_LENGTH, NULL
 * pointers TW_ERR_INVAL.
 */
#ifndef TWAG_KEYWRAP_H
#define TWAG_KEYWRAP_H

#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/err.h"

enum {
	TW_KEYWRAP_SEMIBLOCK = 8, /* RFC 3394 §2.1: 64-bit blocks */
	TW_KEYWRAP_OVERHEAD = 8,  /* wrapped = key + one semiblock (A) */
};

/*
 * RFC 3394 §2.2.1 key wrap with the §2.2.3.1 default IV. key_len must be a
 * multiple of 8 and at least 16; writes key_len + 8 bytes
 * (out_max >= key_len + 8).
 */
TW_MUST_CHECK int tw_keywrap_wrap(uint8_t *out, size_t out_max,
				  size_t *out_len, const uint8_t *kek,
				  size_t kek_len, const uint8_t *key,
				  size_t key_len);

/*
 * RFC 3394 §2.2.2 key unwrap and §2.2.3 integrity check. wrapped_len must
 * be a multiple of 8 and at least 24; writes wrapped_len - 8 bytes
 * (out_max >= wrapped_len - 8). TW_ERR_AUTH if the IV does not match.
 */
TW_MUST_CHECK int tw_keywrap_unwrap(uint8_t *out, size_t out_max,
				    size_t *out_len, const uint8_t *kek,
				    size_t kek_len, const uint8_t *wrapped,
				    size_t wrapped_len);

/*
 * RFC 5649 §4.1 wrap with padding: any key_len from 1 to 2^32 - 1. Writes
 * 8 + key_len rounded up to a multiple of 8 bytes (at least 16).
 */
TW_MUST_CHECK int tw_keywrap_wrap_pad(uint8_t *out, size_t out_max,
				      size_t *out_len, const uint8_t *kek,
				      size_t kek_len, const uint8_t *key,
				      size_t key_len);

/*
 * RFC 5649 §4.2 unwrap with padding and the §3 checks: the AIV's constant
 * part, 8*(n-1) < MLI <= 8*n, and zero padding, all in constant time; any
 * failure is TW_ERR_AUTH. wrapped_len must be a multiple of 8 and at least
 * 16. The padded key is written first, so out_max must be at least
 * wrapped_len - 8 even though *out_len (= MLI) may be up to 7 less.
 */
TW_MUST_CHECK int tw_keywrap_unwrap_pad(uint8_t *out, size_t out_max,
					size_t *out_len, const uint8_t *kek,
					size_t kek_len, const uint8_t *wrapped,
					size_t wrapped_len);

/*
 * The same four operations with an already expanded KEK (from tw_aes_init()
 * or tw_aes_init_any()), so a long-lived KEK is expanded once. Unwrapping
 * needs decryption: a context from tw_aes_init_enc() works but is slower.
 */
TW_MUST_CHECK int tw_keywrap_wrap_ctx(const struct tw_aes_ctx *kek,
				      uint8_t *out, size_t out_max,
				      size_t *out_len, const uint8_t *key,
				      size_t key_len);
TW_MUST_CHECK int tw_keywrap_unwrap_ctx(const struct tw_aes_ctx *kek,
					uint8_t *out, size_t out_max,
					size_t *out_len, const uint8_t *wrapped,
					size_t wrapped_len);
/* Two tw_keywrap_unwrap_ctx() calls under one KEK (a subscriber's K and
 * OPc): returns the first's result, *rc2 the second's. With AES-NI and two
 * wraps of one length their chains run interleaved. */
TW_MUST_CHECK int tw_keywrap_unwrap2_ctx(const struct tw_aes_ctx *kek, uint8_t *out1,
					 size_t max1, size_t *len1, const uint8_t *w1,
					 size_t wl1, uint8_t *out2, size_t max2, size_t *len2,
					 const uint8_t *w2, size_t wl2, int *rc2);
TW_MUST_CHECK int tw_keywrap_wrap_pad_ctx(const struct tw_aes_ctx *kek,
					  uint8_t *out, size_t out_max,
					  size_t *out_len, const uint8_t *key,
					  size_t key_len);
TW_MUST_CHECK int tw_keywrap_unwrap_pad_ctx(const struct tw_aes_ctx *kek,
					    uint8_t *out, size_t out_max,
					    size_t *out_len,
					    const uint8_t *wrapped,
					    size_t wrapped_len);

#endif
