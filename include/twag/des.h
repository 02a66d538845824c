/*
 * twag — DES and Triple DES (FIPS 46-3, 1999; NIST SP 800-67 Rev. 2, 2017)
 * in ECB and CBC (SP 800-38A §6.2), for the legacy ESP transform
 * 3DES-CBC (RFC 2451) only.
 *
 * 3DES is deprecated (SP 800-131A Rev. 2: disallowed for encryption after
 * 2023) and has a 64-bit block (Sweet32: rekey long before 2^32 blocks).
 * It exists so the benchmark can show what the legacy transform costs;
 * it is never a default.
 *
 * Constant time: the S-box lookups are the classic DES timing leak (a
 * secret-indexed table); there is none here, and no secret-dependent
 * branch, key schedule included. Two kernels:
 *   - one block at a time (tw_des3_encrypt/decrypt, CBC encryption of a
 *     single chain, CBC decryption of one block): each S-box output bit is
 *     a 64-bit truth table, stored rotated so that rotating it by the
 *     secret 6-bit input drops the bit where P sends it (a rotation by a
 *     variable count is constant time on every x86-64 and ARMv8 core).
 *     CBC encryption is serial, so a single chain runs here, a few times
 *     slower than OpenSSL's table DES (an S-box costs 4 rotations and
 *     ANDs instead of one load, and a chain leaves nothing to overlap);
 *   - bitsliced (Biham), many blocks under one key per pass: 64 on any CPU,
 *     256 with AVX2, 512 with AVX-512. CBC decryption of two blocks or more
 *     (all blocks independent) and tw_des3_cbc_encrypt_multi (independent
 *     chains side by side, as tw_esp_encap_batch uses it) run here, several
 *     times faster than OpenSSL.
 */
#ifndef TWAG_DES_H
#define TWAG_DES_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_DES_BLOCK_LEN = 8,
	TW_DES3_KEY_LEN = 24, /* K1 | K2 | K3, parity bits ignored */
};

/* Three DES key schedules: 16 round keys of 48 bits each, stored as eight
 * 6-bit groups (FIPS 46-3: the inputs of S1..S8), and again one octet (0
 * or 1) per bit for the bitsliced kernel. */
struct tw_des3_ctx {
	uint8_t ks[3][16][8];
	uint8_t bsk[3][16][48];
};

/*
 * SP 800-67 §3.2 keying: key = K1 | K2 | K3 (24 octets). The parity bits
 * (the low bit of each octet) are ignored, as FIPS 46-3 allows. K1 = K2 =
 * K3 gives single DES (used by the SP 800-20 known-answer tests).
 * Returns TW_ERR_LENGTH unless key_len is 24, TW_ERR_INVAL on NULL.
 */
TW_MUST_CHECK int tw_des3_init(struct tw_des3_ctx *ctx, const uint8_t *key,
			       size_t key_len);

/* SP 800-67 §3.1: C = E_K3(D_K2(E_K1(P))) on one 8-octet block; out may
 * equal in. */
void tw_des3_encrypt(const struct tw_des3_ctx *ctx, uint8_t out[static 8],
		     const uint8_t in[static 8]);
/* P = D_K1(E_K2(D_K3(C))). */
void tw_des3_decrypt(const struct tw_des3_ctx *ctx, uint8_t out[static 8],
		     const uint8_t in[static 8]);

/*
 * CBC (SP 800-38A §6.2) over len octets, a multiple of 8. iv is the IV on
 * entry and the last ciphertext block on return (so calls chain). out may
 * equal in. Returns TW_ERR_LENGTH if len % 8 != 0.
 */
TW_MUST_CHECK int tw_des3_cbc_encrypt(const struct tw_des3_ctx *ctx,
				      uint8_t iv[static 8], uint8_t *out,
				      const uint8_t *in, size_t len);
TW_MUST_CHECK int tw_des3_cbc_decrypt(const struct tw_des3_ctx *ctx,
				      uint8_t iv[static 8], uint8_t *out,
				      const uint8_t *in, size_t len);

/* One CBC chain of tw_des3_cbc_encrypt_multi: len octets (a multiple of
 * 8) from in to out (out may equal in); iv as in tw_des3_cbc_encrypt. */
struct tw_des3_cbc_chain {
	uint8_t *iv;
	uint8_t *out;
	const uint8_t *in;
	size_t len;
};

/*
 * CBC encryption (SP 800-38A §6.2) of n independent chains under one key,
 * each exactly as tw_des3_cbc_encrypt would do it: the chains advance side
 * by side, one block of each per pass of the bitsliced kernel, so n chains
 * cost about what one does (up to 64 lanes on any CPU, 256 with AVX2, 512
 * with AVX-512). Chains must not overlap one another. Returns
 * TW_ERR_LENGTH if a len is not a multiple of 8, TW_ERR_INVAL on NULL
 * pointers (both before anything is written), else TW_OK.
 */
TW_MUST_CHECK int tw_des3_cbc_encrypt_multi(const struct tw_des3_ctx *ctx,
					    struct tw_des3_cbc_chain *chains,
					    size_t n);

void tw_des3_wipe(struct tw_des3_ctx *ctx);

#endif
