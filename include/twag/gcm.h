/*
 * twag — AES-GCM authenticated encryption (NIST SP 800-38D, November 2007),
 * with the 12-byte IVs and 8/12/16-byte tags of RFC 4106 (ESP) and IEEE
 * 802.11 GCMP.
 *
 * Three implementations of the same function, chosen once per context by
 * tw_gcm_init() from what the CPU offers:
 *   - portable: AES from aes.h (bitsliced) and a constant-time GHASH whose
 *     carry-less multiply is built from ordinary integer multiplies on
 *     masked bits (no table indexed by secret data);
 *   - clmul: AES-NI + PCLMULQDQ, 8 blocks per iteration, CTR interleaved
 *     with GHASH, one reduction per 8 blocks (aggregated reduction);
 *   - vaes: VAES + VPCLMULQDQ on 512-bit registers (AVX-512 F/BW/VL), 4
 *     blocks per register, 16 blocks per iteration (without AVX-512, e.g.
 *     TWAG_CPU=vaes, the clmul kernel is used).
 * All produce identical results; TWAG_CPU=portable|aesni|... caps the choice.
 *
 * Contexts are caller-owned, fixed size and hold no pointers: a context may
 * be copied, and used by several threads at once (it is read-only after
 * tw_gcm_init). Wipe it with tw_gcm_wipe() when done.
 */
#ifndef TWAG_GCM_H
#define TWAG_GCM_H

#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/err.h"

enum {
	TW_GCM_IV_LEN = 12,      /* SP 800-38D §8.2.1 deterministic IV */
	TW_GCM_TAG_LEN = 16,     /* full tag; 12 and 8 also accepted */
	TW_GCM_NPOW = 16,        /* powers of H kept in the context */
};

/* Which kernel a context uses. */
enum tw_gcm_impl {
	TW_GCM_IMPL_CT = 0,    /* portable, constant time */
	TW_GCM_IMPL_CLMUL = 1, /* AES-NI + PCLMULQDQ */
	TW_GCM_IMPL_VAES = 2,  /* VAES + VPCLMULQDQ, AVX-512 */
};

struct tw_gcm_ctx {
	struct tw_aes_ctx aes;
	/*
	 * hpow[i] = H^(TW_GCM_NPOW - i) * x^-1 in GF(2^128) (SP 800-38D §6.3),
	 * H = CIPH_K(0^128), in the "reflected" form: the block's bytes
	 * reversed and read as one little-endian 128-bit integer, so that
	 * integer bit 127 is the coefficient of x^0. hpow[i][0] is the low
	 * 64 bits, hpow[i][1] the high 64 bits. Highest power first, so the
	 * last n entries serve an n-block aggregated step.
	 */
	_Alignas(16) uint64_t hpow[TW_GCM_NPOW][2];
	uint32_t impl; /* enum tw_gcm_impl */
};

/*
 * Expands a 16- or 32-byte AES key and computes H = CIPH_K(0^128) and its
 * powers (SP 800-38D §6.4, §7.1 step 1).
 * Returns TW_OK, TW_ERR_LENGTH for another key length, TW_ERR_INVAL for
 * NULL pointers.
 */
TW_MUST_CHECK int tw_gcm_init(struct tw_gcm_ctx *ctx, const uint8_t *key,
			      size_t key_len);

/*
 * GCM-AE_K(IV, P, A) (SP 800-38D §7.1) with a 96-bit IV: out = GCTR_K(inc32(J0), in),
 * J0 = IV || 0^31 || 1, tag = MSB_t(GCTR_K(J0, S)), S = GHASH_H(A || 0^v ||
 * C || 0^u || [len(A)]_64 || [len(C)]_64).
 * Any aad_len and len (len up to 2^36 - 32 bytes, §5.2.1.1); out may equal
 * in (not partially overlap). tag_len is 16, 12 or 8 (RFC 4106 §3).
 * Returns TW_OK, TW_ERR_LENGTH for a bad tag_len or an over-long input,
 * TW_ERR_INVAL for NULL pointers (aad/in/out may be NULL when their length
 * is 0).
 */
TW_MUST_CHECK int tw_gcm_encrypt(const struct tw_gcm_ctx *ctx,
				 const uint8_t iv[static 12],
				 const uint8_t *aad, size_t aad_len,
				 const uint8_t *in, uint8_t *out, size_t len,
				 uint8_t *tag, size_t tag_len);

/*
 * GCM-AD_K(IV, C, A, T) (SP 800-38D §7.2). The tag is compared in constant
 * time. Returns TW_OK with the plaintext in out, TW_ERR_AUTH when the tag
 * does not verify (out[0..len) is then wiped: no plaintext is released),
 * or the errors of tw_gcm_encrypt(). out may equal in.
 */
TW_MUST_CHECK int tw_gcm_decrypt(const struct tw_gcm_ctx *ctx,
				 const uint8_t iv[static 12],
				 const uint8_t *aad, size_t aad_len,
				 const uint8_t *in, uint8_t *out, size_t len,
				 const uint8_t *tag, size_t tag_len);

/*
 * One packet of a batch: each has its own context, IV, AAD and lengths.
 * tag is written by tw_gcm_encrypt_batch() and read by
 * tw_gcm_decrypt_batch(). status receives the packet's own result.
 */
struct tw_gcm_op {
	const struct tw_gcm_ctx *ctx;
	const uint8_t *iv; /* TW_GCM_IV_LEN bytes */
	const uint8_t *aad;
	size_t aad_len;
	const uint8_t *in;
	uint8_t *out;
	size_t len;
	uint8_t *tag;
	size_t tag_len;
	int status;
};

/*
 * Encrypts / decrypts n independent packets in one call, with the result
 * of each in ops[i].status (as tw_gcm_encrypt / tw_gcm_decrypt would
 * return it; a packet that fails to verify has its out wiped). Returns
 * TW_OK when every packet succeeded, else the first failing packet's
 * status (the others are still processed); TW_ERR_INVAL if ops is NULL
 * and n > 0.
 */
TW_MUST_CHECK int tw_gcm_encrypt_batch(struct tw_gcm_op *ops, size_t n);
TW_MUST_CHECK int tw_gcm_decrypt_batch(struct tw_gcm_op *ops, size_t n);

/* Wipes the key schedule and the powers of H. */
void tw_gcm_wipe(struct tw_gcm_ctx *ctx);

/* "ct", "clmul" or "vaes": the kernel a context uses. */
const char *tw_gcm_impl_name(const struct tw_gcm_ctx *ctx);

/*
 * Kernels behind the dispatch, exposed for tests and benchmarks that
 * compare implementations; other code should use the API above. Each
 * computes the ciphertext/plaintext into out and the full 16-byte tag
 * (for decryption, the expected tag, which the caller compares) from
 * already-validated arguments. enc selects which of in/out is the
 * ciphertext hashed by GHASH. The x86 ones may only be called when the
 * context's impl is at least the kernel's level.
 */
void tw_gcm_ct_crypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[12],
		     const uint8_t *aad, size_t aad_len, const uint8_t *in,
		     uint8_t *out, size_t len, uint8_t tag[16], int enc);
#if defined(__x86_64__)
void tw_gcm_clmul_crypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[12],
			const uint8_t *aad, size_t aad_len, const uint8_t *in,
			uint8_t *out, size_t len, uint8_t tag[16], int enc);
void tw_gcm_vaes_crypt(const struct tw_gcm_ctx *ctx, const uint8_t iv[12],
		       const uint8_t *aad, size_t aad_len, const uint8_t *in,
		       uint8_t *out, size_t len, uint8_t tag[16], int enc);
#endif

#endif
