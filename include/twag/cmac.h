/*
 * twag — AES-CMAC, RFC 4493 (June 2006) / NIST SP 800-38B (May 2005,
 * updated October 2016).
 *
 *   Subkeys (RFC 4493 §2.3): L = AES-K(0^128); K1 = L << 1, XORed with
 *   Rb = 0^120 || 10000111 when MSB(L) = 1; K2 likewise from K1.
 *   MAC (§2.4): CBC-MAC over M_1 .. M_n with the last block XORed with K1
 *   (complete) or padded with 10^i and XORed with K2 (incomplete or empty).
 *
 * The subkey doubling is branch-free (a mask from the top bit), so nothing
 * depends on the secret L. A context is keyed once and then serves any
 * number of messages: _init() once, then _update()/_final() rounds, each
 * _final() leaving the context keyed and empty. Contexts are caller-owned,
 * hold no pointers and may be copied; wipe them with tw_cmac_wipe().
 */
#ifndef TWAG_CMAC_H
#define TWAG_CMAC_H

#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/err.h"

enum {
	TW_CMAC_LEN = 16,     /* Tlen = 128 bits (RFC 4493) */
	TW_CMAC_MIN_LEN = 8,  /* SP 800-38B §5.4 / Appendix A: Tlen >= 64 */
};

struct tw_cmac_ctx {
	struct tw_aes_ctx aes;
	uint8_t k1[16];  /* RFC 4493 §2.3 subkeys */
	uint8_t k2[16];
	uint8_t x[16];   /* CBC-MAC chaining value X */
	uint8_t buf[16]; /* pending block: never processed until more input
			  * arrives, since the last block is treated apart */
	uint32_t nbuf;   /* bytes in buf, 0..16 */
};

/*
 * Keys the context with a 16-, 24- or 32-byte AES key and derives K1, K2
 * (RFC 4493 §2.3; SP 800-38B §6.1 for AES-192/256). Returns TW_OK,
 * TW_ERR_LENGTH for another key length, TW_ERR_INVAL for NULL pointers.
 */
TW_MUST_CHECK int tw_cmac_init(struct tw_cmac_ctx *ctx, const uint8_t *key,
			       size_t key_len);

/* Absorbs len octets (msg may be NULL when len is 0). */
void tw_cmac_update(struct tw_cmac_ctx *ctx, const void *msg, size_t len);

/* RFC 4493 §2.4 steps 3-7: writes the 16-octet tag T and re-arms the context
 * for a new message under the same key. */
void tw_cmac_final(struct tw_cmac_ctx *ctx, uint8_t tag[static 16]);

/* Discards a partial message: the context is keyed and empty again. */
void tw_cmac_reset(struct tw_cmac_ctx *ctx);

/* Wipes the key schedule, the subkeys and any buffered input. */
void tw_cmac_wipe(struct tw_cmac_ctx *ctx);

/* One-shot AES-CMAC(key, msg) into tag[16]. Errors as tw_cmac_init(); tag
 * is zeroed on failure. */
TW_MUST_CHECK int tw_cmac(uint8_t tag[static 16], const uint8_t *key,
			  size_t key_len, const uint8_t *msg, size_t len);

/*
 * RFC 4493 §2.5 Verify_MAC with a keyed context: recomputes the tag of msg
 * and compares its first tag_len octets with tag in constant time (tag_len
 * 8..16, SP 800-38B §5.4 truncation). Returns TW_OK, TW_ERR_AUTH on a
 * mismatch, TW_ERR_LENGTH for a tag_len outside 8..16, TW_ERR_INVAL for
 * NULL pointers. The context is left keyed and empty.
 */
TW_MUST_CHECK int tw_cmac_verify(struct tw_cmac_ctx *ctx, const uint8_t *tag,
				 size_t tag_len, const uint8_t *msg, size_t len);

#endif
