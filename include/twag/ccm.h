/*
 * twag — AES-CCM (NIST SP 800-38C, 2004 with 2007 errata; RFC 3610, 2003):
 * CBC-MAC authentication and CTR encryption under one AES key.
 *
 * Implementations, chosen on every call from the AES context and
 * tw_cpu_has():
 *   - portable: CBC-MAC and CTR on tw_aes (constant time on any CPU);
 *   - AES-NI, one frame: ONE loop whose every step runs the CBC-MAC block
 *     and the CTR block of that step as two independent AES chains, so the
 *     serial CBC-MAC chain is the only bound (no per-block calls, no
 *     state saved between blocks);
 *   - AES-NI, batch: four frames side by side (four CBC-MAC chains plus
 *     their CTR blocks in flight), each frame with its own key;
 *   - VAES + AVX-512, batch: sixteen frames side by side (four per zmm).
 * All produce identical results. Nothing allocates; secrets are wiped.
 */
#ifndef TWAG_CCM_H
#define TWAG_CCM_H

#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/err.h"

enum {
	TW_CCM_NONCE_MIN = 7,  /* SP 800-38C A.1: n in 7..13 octets */
	TW_CCM_NONCE_MAX = 13,
	TW_CCM_TAG_MIN = 4,    /* t in {4, 6, 8, 10, 12, 14, 16} */
	TW_CCM_TAG_MAX = 16,
};

/*
 * SP 800-38C §6.1 Generation-Encryption: out = P ^ MSB_len(S_1||S_2||..),
 * tag = MSB_t(T) ^ MSB_t(S_0), T the CBC-MAC of B_0 || encoded aad || P
 * (Appendix A.2). aes: a key from tw_aes_init*() (AES-128 or AES-256);
 * nonce_len 7..13 (the length field is q = 15 - nonce_len octets, and
 * len must be < 2^(8q)); tag_len 4, 6, .., 16. out may equal in.
 * Returns TW_OK, TW_ERR_INVAL (NULL pointer) or TW_ERR_LENGTH.
 */
TW_MUST_CHECK int tw_ccm_encrypt(const struct tw_aes_ctx *aes,
				 const uint8_t *nonce, size_t nonce_len,
				 const uint8_t *aad, size_t aad_len,
				 const uint8_t *in, uint8_t *out, size_t len,
				 uint8_t *tag, size_t tag_len);

/*
 * SP 800-38C §6.2 Decryption-Verification: decrypts in into out and checks
 * tag in constant time. On TW_ERR_AUTH nothing of the plaintext is
 * released: out is wiped. out may equal in. Other returns as above.
 */
TW_MUST_CHECK int tw_ccm_decrypt(const struct tw_aes_ctx *aes,
				 const uint8_t *nonce, size_t nonce_len,
				 const uint8_t *aad, size_t aad_len,
				 const uint8_t *in, uint8_t *out, size_t len,
				 const uint8_t *tag, size_t tag_len);

/* One frame of a batch: the arguments of tw_ccm_encrypt/decrypt. */
struct tw_ccm_op {
	const struct tw_aes_ctx *aes;
	const uint8_t *nonce;
	size_t nonce_len;
	const uint8_t *aad;
	size_t aad_len;
	const uint8_t *in;
	uint8_t *out;
	size_t len;
	uint8_t *tag; /* written by encrypt, only read by decrypt */
	size_t tag_len;
	int status;   /* set by the batch call: this frame's result */
};

/*
 * Encrypts / decrypts ops[0..n) (any n, each with its own key, nonce and
 * lengths; frames must not overlap one another, out may equal in within a
 * frame). Several independent frames run side by side on AES-NI (4) and
 * VAES/AVX-512 (16). Each op's status is set as the single-frame call
 * would return it (a failed decryption wipes that op's out only). Returns
 * TW_OK if every op succeeded, else the first failing op's status;
 * TW_ERR_INVAL if n > 0 and ops is NULL.
 */
TW_MUST_CHECK int tw_ccm_encrypt_batch(struct tw_ccm_op *ops, size_t n);
TW_MUST_CHECK int tw_ccm_decrypt_batch(struct tw_ccm_op *ops, size_t n);

/*
 * ---- Implementation kernels: internal to src/crypto/ccm*.c. ----
 * Called only with checked arguments and when tw_cpu_has() allows.
 */
enum { TW_CCM_MAX_LANES = 16 };

/*
 * Lane state of the multi-frame kernels. Each lane runs, per step,
 *   mac = E_k(mac ^ *mac_src);  *ctr_out = *ctr_in ^ E_k(ctr);  ctr += 1
 * (ctr a big-endian counter block, incremented in its low 64 bits), then
 * advances mac_src, ctr_in and ctr_out by 16. rk[r][l] is lane l's round
 * key r (all lanes of one call share nr).
 */
struct tw_ccm_lanes {
	_Alignas(64) uint8_t rk[TW_AES_MAX_ROUNDS + 1][TW_CCM_MAX_LANES][16];
	_Alignas(64) uint8_t mac[TW_CCM_MAX_LANES][16];
	_Alignas(64) uint8_t ctr[TW_CCM_MAX_LANES][16];
	const uint8_t *mac_src[TW_CCM_MAX_LANES];
	const uint8_t *ctr_in[TW_CCM_MAX_LANES];
	uint8_t *ctr_out[TW_CCM_MAX_LANES];
	unsigned nr;
};

/* Block k (0-based) of the encoded associated data (SP 800-38C A.2.2:
 * encoding of aad_len, then aad, zero-padded to a multiple of 16). */
void tw_ccm_aad_block(uint8_t out[16], const uint8_t *aad, size_t aad_len,
		      size_t k);
/* Number of blocks tw_ccm_aad_block() yields (0 when aad_len == 0). */
size_t tw_ccm_aad_blocks(size_t aad_len);

#if defined(__x86_64__)
#include <emmintrin.h>

/* One frame on AES-NI; b0 and a0 are SP 800-38C B_0 and Ctr_0; mac gets
 * the unmasked T. dec selects Decryption-Verification ordering. */
void tw_ccm_ni_one(const struct tw_aes_ctx *aes, const uint8_t b0[16],
		   const uint8_t a0[16], const uint8_t *aad, size_t aad_len,
		   const uint8_t *in, uint8_t *out, size_t len, int dec,
		   uint8_t mac[16], uint8_t s0[16]);
/* The same with B_0, Ctr_0 and exactly two encoded-aad blocks (A.2.2)
 * made by the caller in registers (CCMP: 22..30 octets of AAD). */
void tw_ccm_ni_one_pre(const struct tw_aes_ctx *aes, __m128i b0, __m128i a0,
		       __m128i h1, __m128i h2, const uint8_t *in, uint8_t *out,
		       size_t len, int dec, uint8_t mac[16], uint8_t s0[16]);
/* k steps of lanes 0..3 (AES-NI) / 0..15 (VAES + AVX-512). */
void tw_ccm_ni_steps4(struct tw_ccm_lanes *l, size_t k);
void tw_ccm_vaes_steps16(struct tw_ccm_lanes *l, size_t k);
/*
 * Encrypts ops[0..n), 1 <= n <= 16, checked, all with AES-NI keys of nr
 * rounds, aad_len <= TW_CCM_GROUP_AAD_MAX and len <= TW_CCM_GROUP_LEN_MAX,
 * as one group of sixteen VAES lanes (spare lanes repeat ops[0]): B_0,
 * Ctr_0 and the encoded aad are built straight into the lanes, then one
 * pass runs every frame's CBC-MAC and CTR side by side; sets each status.
 */
enum { TW_CCM_GROUP_AAD_MAX = 46, TW_CCM_GROUP_LEN_MAX = 1 << 24 };
void tw_ccm_vaes_enc16(struct tw_ccm_op *const *ops, unsigned n, unsigned nr);

/*
 * The sixteen lanes of one encryption group, filled by the caller (ccm.c
 * from tw_ccm_op, ccmp.c straight from 802.11 headers): lane l's round
 * key r in rk[r][l]; head[s][l] the MAC input of step s (B_0, then the
 * encoded aad blocks, nh[l] steps in all, 1 <= nh[l] <= TW_CCM_GROUP_HEAD);
 * a0[l] its Ctr_0; len[l] <= TW_CCM_GROUP_LEN_MAX octets of P at in[l],
 * C written to out[l] (in[l] == out[l] allowed, lanes otherwise disjoint
 * or exact repeats of another lane). Every lane is used: spare lanes
 * repeat a busy one.
 */
enum { TW_CCM_GROUP_HEAD = 4 };
struct tw_ccm_group {
	_Alignas(64) uint8_t rk[TW_AES_MAX_ROUNDS + 1][TW_CCM_MAX_LANES][16];
	_Alignas(64) uint8_t head[TW_CCM_GROUP_HEAD][TW_CCM_MAX_LANES][16]; /* [step][lane] */
	_Alignas(64) uint8_t a0[TW_CCM_MAX_LANES][16];
	_Alignas(64) uint8_t t[TW_CCM_MAX_LANES][16]; /* out: T ^ S_0 (§6.1 step 9) */
	_Alignas(64) uint32_t nh[TW_CCM_MAX_LANES];
	_Alignas(64) uint32_t len[TW_CCM_MAX_LANES];
	const uint8_t *in[TW_CCM_MAX_LANES];
	uint8_t *out[TW_CCM_MAX_LANES];
};

/* Runs a filled group with nr (10 or 14) rounds: every lane's CBC-MAC and
 * CTR side by side; writes C and t. Touches no octet past a lane's end. */
void tw_ccm_vaes_group(struct tw_ccm_group *g, unsigned nr);
#endif

#endif
