/*
 * twag — SUCI: Subscription Concealed Identifier.
 *
 * 3GPP TS 33.501 V17.9.0 §6.12.2 and Annex C (null scheme, ECIES Profile A
 * and Profile B), TS 23.003 §2.2B (SUCI fields), TS 24.501 §9.11.3.4 (MSIN
 * BCD coding of the scheme input), TS 29.571 §5.3.2 (the SupiOrSuci text
 * form "suci-0-<mcc>-<mnc>-<routing indicator>-<scheme>-<key id>-<output>").
 *
 * Two layers:
 *   - binary: MSIN <-> BCD scheme input, ECDH, the ECIES key derivation and
 *     ECIES encrypt/decrypt of a scheme input, for the NAS/EAP layers;
 *   - text: tw_suci_conceal() / tw_suci_deconceal() on the SUCI string.
 * Only IMSI-based SUPIs (SUPI type 0) are handled; NAI-based SUPIs (type 1)
 * are not, and a "suci-1-..." string is rejected as TW_ERR_UNSUPPORTED.
 *
 * ALLOCATION: this module is the one exception to "library code does not
 * allocate". Curve arithmetic (X25519, P-256) is done by OpenSSL 3, whose
 * EVP_PKEY/EC_POINT objects are heap-allocated inside libcrypto; writing
 * and validating our own constant-time curve code is not worth the risk.
 * Every OpenSSL object is freed and every copy of a secret we hold (private
 * scalars, shared key Z, derived keys) is wiped on every exit path. An
 * OpenSSL allocation failure is reported as TW_ERR_NOMEM or TW_ERR_CRYPTO.
 * Randomness for a fresh ephemeral key comes from OpenSSL's RAND_priv_bytes.
 */
#ifndef TWAG_SUCI_H
#define TWAG_SUCI_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

/* TS 33.501 Annex C.1 / TS 24.501 Table 9.11.3.4.1: protection scheme id. */
enum tw_suci_scheme {
	TW_SUCI_SCHEME_NULL = 0,
	TW_SUCI_SCHEME_PROFILE_A = 1, /* Curve25519 (X25519) */
	TW_SUCI_SCHEME_PROFILE_B = 2, /* secp256r1, compressed points */
};

enum {
	TW_SUCI_PRIV_LEN = 32,         /* X25519 key or P-256 scalar */
	TW_SUCI_PROFILE_A_PUB_LEN = 32, /* raw X25519 u-coordinate */
	TW_SUCI_PROFILE_B_PUB_LEN = 33, /* compressed SEC1 point */
	TW_SUCI_PUB_MAX = 33,
	TW_SUCI_SHARED_KEY_LEN = 32,   /* Z */
	TW_SUCI_ENC_KEY_LEN = 16,      /* AES-128 */
	TW_SUCI_ICB_LEN = 16,
	TW_SUCI_MAC_KEY_LEN = 32,      /* HMAC-SHA-256 */
	TW_SUCI_MAC_TAG_LEN = 8,       /* HMAC-SHA-256/64 */
	TW_SUCI_MSIN_MAX_DIGITS = 10,  /* 15-digit IMSI, 2-digit MNC */
	TW_SUCI_MSIN_BCD_MAX = 5,
	/* Longest ECIES scheme output for an IMSI: 33 + 5 + 8. */
	TW_SUCI_ECIES_OUTPUT_MAX = TW_SUCI_PUB_MAX + TW_SUCI_MSIN_BCD_MAX +
				   TW_SUCI_MAC_TAG_LEN,
	/* Longest SUCI text: "suci-0-" 3-3-4-2-3 digits, 6 dashes, hex, NUL. */
	TW_SUCI_STR_MAX = 7 + 3 + 1 + 3 + 1 + 4 + 1 + 2 + 1 + 3 + 1 +
			  2 * TW_SUCI_ECIES_OUTPUT_MAX + 1,
	/* "imsi-" + 15 digits + NUL. */
	TW_SUCI_SUPI_STR_MAX = 5 + 15 + 1,
};

/*
 * A home network key pair as the UDM/SIDF holds it: the home network public
 * key identifier (TS 23.003 §2.2B, 0..255), the scheme the key is for, and
 * the private key (Profile A: raw X25519 key; Profile B: big-endian scalar
 * in [1, n-1]). The caller owns it and wipes it.
 */
struct tw_suci_hn_key {
	uint8_t id;
	enum tw_suci_scheme scheme;
	uint8_t priv[TW_SUCI_PRIV_LEN];
};

/*
 * A home-network private key prepared once for many deconcealments (the
 * SIDF keeps one per key id): the OpenSSL key object is built at init, so a
 * deconceal costs one ECDH, not an import plus an ECDH. Created with
 * tw_suci_hn_ctx_init (allocates inside OpenSSL), released with
 * tw_suci_hn_ctx_free. Read-only after init: threads may share it.
 */
struct tw_suci_hn_ctx {
	uint8_t id;
	enum tw_suci_scheme scheme;
	void *pkey; /* EVP_PKEY *, owned */
};

/* TW_ERR_UNSUPPORTED for the null scheme or an unknown one, TW_ERR_RANGE
 * for an invalid P-256 scalar, TW_ERR_NOMEM/TW_ERR_CRYPTO from OpenSSL. */
TW_MUST_CHECK int tw_suci_hn_ctx_init(struct tw_suci_hn_ctx *c,
				      const struct tw_suci_hn_key *k);
void tw_suci_hn_ctx_free(struct tw_suci_hn_ctx *c);

/* The ECIES key material of TS 33.501 C.3.2 (one K split three ways). */
struct tw_suci_ecies_keys {
	uint8_t enc_key[TW_SUCI_ENC_KEY_LEN];
	uint8_t icb[TW_SUCI_ICB_LEN];
	uint8_t mac_key[TW_SUCI_MAC_KEY_LEN];
};

/*
 * Public key of a private key for an ECIES profile (TS 33.501 C.3.4.1/2):
 * Profile A: 32 octets (RFC 7748 X25519(priv, 9)); Profile B: the 33-octet
 * compressed point priv*G. Used for home network keys and ephemeral keys.
 * Returns TW_ERR_UNSUPPORTED for another scheme, TW_ERR_RANGE for a P-256
 * scalar of 0 or >= n, TW_ERR_OVERFLOW if pub_max is too small.
 */
TW_MUST_CHECK int tw_suci_ecc_public(enum tw_suci_scheme scheme,
				     const uint8_t priv[static 32],
				     uint8_t *pub, size_t pub_max,
				     size_t *pub_len);

/* tw_suci_ecc_public() of a home network key. */
TW_MUST_CHECK int tw_suci_public_key(const struct tw_suci_hn_key *k,
				     uint8_t *pub, size_t pub_max,
				     size_t *pub_len);

/*
 * ECDH of TS 33.501 C.3.4: Profile A: Z = X25519(priv, peer_pub) (32-octet
 * peer); Profile B: Z = x-coordinate of priv*peer_pub (33-octet compressed
 * peer). The peer key is validated: TW_ERR_DECODE for a bad length or
 * prefix, a P-256 point not on the curve or x >= p, or an X25519 peer key
 * that gives the all-zero shared secret (a low-order point).
 */
TW_MUST_CHECK int tw_suci_ecdh(enum tw_suci_scheme scheme,
			       const uint8_t priv[static 32],
			       const uint8_t *peer_pub, size_t peer_pub_len,
			       uint8_t z[static 32]);

/*
 * TS 33.501 C.3.2: K = ANSI-X9.63-KDF(SHA-256, Z, SharedInfo1 = the
 * ephemeral public key as sent), enc key | ICB | MAC key = K[0..15] |
 * K[16..31] | K[32..63].
 */
TW_MUST_CHECK int tw_suci_ecies_derive(const uint8_t z[static 32],
				       const uint8_t *eph_pub,
				       size_t eph_pub_len,
				       struct tw_suci_ecies_keys *keys);

/*
 * ECIES encryption on the UE side (TS 33.501 C.3.2, C.3.4):
 * out = eph_pub | AES-128-CTR(enc key, ICB, plaintext) |
 *       HMAC-SHA-256(mac key, ciphertext)[0..7].
 * eph_priv: 32 octets, or NULL for a fresh random ephemeral key.
 * Returns TW_ERR_LENGTH for an empty plaintext, TW_ERR_OVERFLOW if out_max
 * < pub length + len + 8, else as tw_suci_ecdh()/tw_suci_ecc_public().
 */
TW_MUST_CHECK int tw_suci_ecies_encrypt(enum tw_suci_scheme scheme,
					const uint8_t *hn_pub,
					size_t hn_pub_len,
					const uint8_t *eph_priv,
					const uint8_t *plaintext, size_t len,
					uint8_t *out, size_t out_max,
					size_t *out_len);

/*
 * ECIES decryption on the home network side (TS 33.501 C.3.3): splits the
 * scheme output into eph_pub | ciphertext | tag, checks the tag in constant
 * time before decrypting anything (TW_ERR_AUTH on mismatch), then writes
 * the plaintext. TW_ERR_LENGTH if the output is too short to hold a key, at
 * least one ciphertext octet and a tag; TW_ERR_OVERFLOW if pt_max is too
 * small; TW_ERR_DECODE for an invalid ephemeral key.
 */
TW_MUST_CHECK int tw_suci_ecies_decrypt(const struct tw_suci_hn_key *k,
					const uint8_t *scheme_output,
					size_t len, uint8_t *plaintext,
					size_t pt_max, size_t *pt_len);

/*
 * MSIN digits -> ECIES scheme input (TS 33.501 C.3.4 note, TS 24.501
 * Figure 9.11.3.4.3a): BCD, first digit in the low nibble of each octet,
 * an odd last digit followed by the filler 0xF in the high nibble.
 * 1..TW_SUCI_MSIN_MAX_DIGITS decimal digits (TW_ERR_LENGTH otherwise,
 * TW_ERR_DECODE on a non-digit).
 */
TW_MUST_CHECK int tw_suci_msin_to_bcd(const char *msin, size_t ndigits,
				      uint8_t *out, size_t out_max,
				      size_t *out_len);

/*
 * The inverse: writes the digits and a NUL into msin[msin_max]. Rejects
 * (TW_ERR_DECODE) a nibble > 9, a filler anywhere but the last high nibble,
 * or a low-nibble filler; TW_ERR_LENGTH for 0 or more than
 * TW_SUCI_MSIN_BCD_MAX octets; TW_ERR_OVERFLOW if msin_max is too small.
 */
TW_MUST_CHECK int tw_suci_bcd_to_msin(const uint8_t *bcd, size_t len,
				      char *msin, size_t msin_max,
				      size_t *ndigits);

/*
 * UE side: builds the SUCI text for an IMSI-based SUPI "imsi-DIGITS"
 * (TS 33.501 §6.12.2, TS 23.003 §2.2B, TS 29.571 SupiOrSuci):
 *   suci-0-<mcc>-<mnc>-<routing>-<scheme>-<key_id>-<scheme output>
 * with the MSIN as decimal digits for the null scheme (key_id must be 0,
 * hn_pub is ignored) and the ECIES scheme output in lowercase hex.
 * mnc_digits: 2 or 3. routing: 1-4 digits, NULL means "0". eph_priv: 32
 * octets or NULL for a fresh random key. The IMSI must have 6..15 digits
 * (MCC, MNC and at least one MSIN digit).
 * Returns TW_ERR_INVAL/TW_ERR_DECODE/TW_ERR_LENGTH for a bad argument,
 * TW_ERR_UNSUPPORTED for an unknown scheme, TW_ERR_OVERFLOW if suci_max is
 * too small (TW_SUCI_STR_MAX always fits).
 */
TW_MUST_CHECK int tw_suci_conceal(enum tw_suci_scheme scheme,
				  const uint8_t *hn_pub, size_t hn_pub_len,
				  uint8_t key_id, const char *supi,
				  unsigned mnc_digits, const char *routing,
				  const uint8_t *eph_priv, char *suci,
				  size_t suci_max);

/*
 * Home network side (SIDF): parses a SUCI in the text form above, finds
 * the key among keys[0..nkeys) whose id and scheme match the SUCI's, and
 * writes "imsi-<mcc><mnc><msin>" into supi[supi_max].
 * Well-formed means: SUPI type 0; MCC exactly 3 digits; MNC 2 or 3 digits;
 * routing indicator 1-4 digits; scheme and key id decimal without leading
 * zeros, key id <= 255; null scheme: key id 0 and 1..10 MSIN digits;
 * ECIES: an even number of hex digits; the IMSI at most 15 digits.
 * Returns TW_ERR_DECODE for a malformed string or a bad ephemeral key,
 * TW_ERR_UNSUPPORTED for SUPI type != 0 or an unknown scheme,
 * TW_ERR_NOTFOUND if no key matches, TW_ERR_LENGTH for a scheme output of
 * the wrong size, TW_ERR_AUTH if the MAC tag does not verify,
 * TW_ERR_OVERFLOW if supi_max is too small (TW_SUCI_SUPI_STR_MAX fits).
 */
TW_MUST_CHECK int tw_suci_deconceal(const struct tw_suci_hn_key *keys,
				    size_t nkeys, const char *suci,
				    char *supi, size_t supi_max);

/* As tw_suci_deconceal, with prepared keys (the fast path of a SIDF). */
TW_MUST_CHECK int tw_suci_deconceal_ctx(const struct tw_suci_hn_ctx *keys,
					size_t nkeys, const char *suci,
					char *supi, size_t supi_max);

/* As tw_suci_ecies_decrypt, with a prepared key. */
TW_MUST_CHECK int tw_suci_ecies_decrypt_ctx(const struct tw_suci_hn_ctx *k,
					    const uint8_t *scheme_output,
					    size_t len, uint8_t *plaintext,
					    size_t pt_max, size_t *pt_len);

#endif
