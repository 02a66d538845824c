/*
 * twag — AES-128/AES-256 block cipher (FIPS 197, 2001; updated 2023), AES-192
 * through tw_aes_init_any() (for key-encryption keys), and AES-CTR (NIST
 * SP 800-38A, 2001, §6.5).
 *
 * Two implementations, chosen once per context by tw_aes_init():
 *   - AES-NI (x86-64 with AES-NI and SSE4.1), 8 blocks interleaved for
 *     tw_aes_encrypt_blocks() and tw_aes_ctr(); with VAES and AVX-512 also
 *     enabled, those two run 16 blocks at a time in 512-bit registers
 *     (same key schedule, impl stays TW_AES_IMPL_AESNI);
 *   - portable: bitsliced on 64-bit words, 4 blocks per pass, S-box as a
 *     boolean circuit (GF(2^8) inversion in a tower field), so there are
 *     no secret-indexed table lookups and no secret-dependent branches,
 *     key expansion included.
 * Both produce identical results; TWAG_CPU=portable forces the portable one.
 *
 * Contexts are caller-owned, fixed size and hold no pointers: copy one to
 * share a key schedule, wipe it with tw_aes_wipe() when done.
 */
#ifndef TWAG_AES_H
#define TWAG_AES_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_AES_BLOCK_LEN = 16,
	TW_AES_128_KEY_LEN = 16,
	TW_AES_192_KEY_LEN = 24,
	TW_AES_256_KEY_LEN = 32,
	TW_AES_MAX_ROUNDS = 14,
};

/* Which kernel a context uses (tw_aes_impl_name() gives a short name). */
enum tw_aes_impl {
	TW_AES_IMPL_CT64 = 0,  /* portable bitsliced */
	TW_AES_IMPL_AESNI = 1, /* x86-64 AES-NI */
};

struct tw_aes_ctx {
	union {
		/* AES-NI: [0] = FIPS 197 round keys w[0..Nr]; [1] = the
		 * equivalent inverse cipher's keys (FIPS 197 §5.3.5), i.e.
		 * w[Nr], InvMixColumns(w[Nr-1]) .. InvMixColumns(w[1]), w[0]. */
		_Alignas(16) uint8_t ni[2][TW_AES_MAX_ROUNDS + 1][16];
		/* Portable: each round key bitsliced into 8 words, replicated
		 * for the 4 block slots; used by encryption and decryption. */
		uint64_t ct64[TW_AES_MAX_ROUNDS + 1][8];
	} rk;
	uint32_t nr;      /* rounds: 10, 12 or 14 (AES-128/192/256) */
	uint32_t impl;    /* enum tw_aes_impl */
	uint32_t has_dec; /* AES-NI decryption keys present */
	uint32_t vaes;    /* AES-NI context whose bulk ECB/CTR use VAES */
};

/*
 * Expands a 16- or 32-byte key (FIPS 197 §5.2) for encryption and
 * decryption. Picks AES-NI if tw_cpu_has(TW_CPU_AESNI), else portable.
 * Returns TW_OK, or TW_ERR_LENGTH for any other key length (AES-192 is not
 * offered) or TW_ERR_INVAL for NULL pointers.
 */
TW_MUST_CHECK int tw_aes_init(struct tw_aes_ctx *ctx, const uint8_t *key,
			      size_t key_len);

/*
 * As tw_aes_init(), but skips the AES-NI decryption key schedule: for
 * callers that only encrypt (Milenage, CTR, CCM, GCM, key wrapping).
 * tw_aes_decrypt() still works on such a context, but derives the inverse
 * round keys on every call, so use tw_aes_init() when decrypting often.
 */
TW_MUST_CHECK int tw_aes_init_enc(struct tw_aes_ctx *ctx, const uint8_t *key,
				  size_t key_len);

/*
 * As tw_aes_init(), but also accepts 24-byte AES-192 keys (Nr = 12). FIPS
 * 197 defines all three sizes; key-encryption keys (RFC 3394 / RFC 5649
 * and their test vectors) come in 192 bits too. Returns TW_ERR_LENGTH for
 * lengths other than 16, 24 or 32.
 */
TW_MUST_CHECK int tw_aes_init_any(struct tw_aes_ctx *ctx, const uint8_t *key,
				  size_t key_len);

/* FIPS 197 §5.1 Cipher: one block. out may equal in. */
void tw_aes_encrypt(const struct tw_aes_ctx *ctx, uint8_t out[static 16],
		    const uint8_t in[static 16]);

/* FIPS 197 §5.3 InvCipher: one block. out may equal in. */
void tw_aes_decrypt(const struct tw_aes_ctx *ctx, uint8_t out[static 16],
		    const uint8_t in[static 16]);

/*
 * ECB encryption of nblocks consecutive blocks (SP 800-38A §6.1), several
 * in parallel. out may equal in (not partially overlap).
 */
void tw_aes_encrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			   const uint8_t *in, size_t nblocks);

/* ECB decryption of nblocks consecutive blocks. out may equal in. */
void tw_aes_decrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			   const uint8_t *in, size_t nblocks);

/*
 * CTR mode (SP 800-38A §6.5): out = in ^ E_K(T_1) || E_K(T_2) || ...,
 * T_1 = icb and T_{j+1} = T_j + 1 mod 2^128 (the whole block is the
 * big-endian counter, SP 800-38A B.1 with m = 128). Any len; the last
 * partial block uses the most significant bytes of its keystream block.
 * out may equal in (not partially overlap). Encryption and decryption are
 * the same operation.
 */
void tw_aes_ctr(const struct tw_aes_ctx *ctx, const uint8_t icb[static 16],
		uint8_t *out, const uint8_t *in, size_t len);

/*
 * CBC encryption (SP 800-38A §6.2) in place: C_j = E_K(P_j ^ C_{j-1}),
 * C_0 = iv; len a multiple of 16 (a shorter tail is left as it is).
 */
void tw_aes_cbc_encrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[static 16],
			uint8_t *buf, size_t len);

/* tw_aes_cbc_encrypt(ctx[i], iv[i], buf[i], len[i]) for n independent
 * messages. CBC encryption is serial within a message; with AES-NI eight
 * messages advance side by side, so their rounds overlap. */
void tw_aes_cbc_encrypt_many(const struct tw_aes_ctx *const *ctx,
			     const uint8_t *const *iv, uint8_t *const *buf,
			     const size_t *len, size_t n);

/* Wipes the key schedule. */
void tw_aes_wipe(struct tw_aes_ctx *ctx);

/* "vaes", "aesni" or "ct64": the kernel a context uses for bulk ECB/CTR
 * (for tests and benchmarks). */
const char *tw_aes_impl_name(const struct tw_aes_ctx *ctx);

/*
 * Kernels behind the dispatch above; tw_aes_* calls them. Exposed for tests
 * and benchmarks that compare implementations; other code should use the
 * dispatching API. The AES-NI ones exist only on x86-64 and may only be
 * called when tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41).
 */
void tw_aes_ct64_init(struct tw_aes_ctx *ctx, const uint8_t *key,
		      size_t key_len);
void tw_aes_ct64_encrypt4(const struct tw_aes_ctx *ctx, uint8_t *out,
			  const uint8_t *in, size_t nblocks);
void tw_aes_ct64_decrypt4(const struct tw_aes_ctx *ctx, uint8_t *out,
			  const uint8_t *in, size_t nblocks);
#if defined(__x86_64__)
void tw_aes_ni_init(struct tw_aes_ctx *ctx, const uint8_t *key,
		    size_t key_len, int with_dec);
void tw_aes_ni_encrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			      const uint8_t *in, size_t nblocks);
void tw_aes_ni_decrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
			      const uint8_t *in, size_t nblocks);
void tw_aes_ni_ctr(const struct tw_aes_ctx *ctx, const uint8_t icb[16],
		   uint8_t *out, const uint8_t *in, size_t len);
/* RFC 3394 unwrap steps (keywrap.c) of 1 or 2 keys of n semiblocks under
 * one KEK with its decryption keys (has_dec), interleaved: a[w] the
 * 8-octet A, r[w] the n semiblocks, both updated in place. */
void tw_aes_ni_kw_unwrap(const struct tw_aes_ctx *ctx, uint8_t *const *a,
			 uint8_t *const *r, size_t n, unsigned ways);
/* Up to eight CBC encryptions interleaved; every ctx AES-NI, one nr. */
void tw_aes_ni_cbc_encrypt_many(const struct tw_aes_ctx *const *ctx,
				const uint8_t *const *iv, uint8_t *const *buf,
				const size_t *len, unsigned n);
/* Only when tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512) as well. */
void tw_aes_vaes_encrypt_blocks(const struct tw_aes_ctx *ctx, uint8_t *out,
				const uint8_t *in, size_t nblocks);
void tw_aes_vaes_ctr(const struct tw_aes_ctx *ctx, const uint8_t icb[16],
		     uint8_t *out, const uint8_t *in, size_t len);
#endif

#endif
