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
 * Two SUPI types (TS 23.003 §2.2B 1)): 0, an IMSI ("imsi-<digits>"), and 1,
 * a network specific identifier, an NAI ("nai-<username>@<realm>",
 * TS 23.003 §28.7.2, TS 29.571 Supi). Two SUCI forms: the TS 29.571 text
 * "suci-<type>-..." and the TS 23.003 §28.7.3 NAI "type<t>.rid<ri>.schid<s>
 * ...@<realm>" that a UE sends as its EAP identity (TS 24.502). GCI and GLI
 * SUPIs (types 2, 3) are refused as TW_ERR_UNSUPPORTED.
 *
 * Public keys received (the home network key a UE conceals to, the
 * ephemeral key in a scheme output) are validated before any key use:
 * X25519 u-coordinates must be canonical (bit 255 clear, u < 2^255 - 19)
 * and not one of the points of small order; P-256 points must be on the
 * curve, with coordinates below p, in compressed (33 octets, 02/03) or, for
 * a home network key, uncompressed (65 octets, 04) SEC1 form; the point at
 * infinity (the one octet 00) and the hybrid forms (06/07) are refused.
 * tw_suci_check_public() says why a key is refused.
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
	TW_SUCI_SCHEME_PROFILE_B = 2, /* secp256r1 */
};

enum {
	TW_SUCI_PRIV_LEN = 32,         /* X25519 key or P-256 scalar */
	TW_SUCI_PROFILE_A_PUB_LEN = 32, /* raw X25519 u-coordinate */
	TW_SUCI_PROFILE_B_PUB_LEN = 33, /* compressed SEC1 point */
	TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN = 65, /* 04 | x | y */
	TW_SUCI_PUB_MAX = 33,          /* a public key we write */
	TW_SUCI_PEER_PUB_MAX = 65,     /* a public key we take */
	TW_SUCI_SHARED_KEY_LEN = 32,   /* Z */
	TW_SUCI_ENC_KEY_LEN = 16,      /* AES-128 */
	TW_SUCI_ICB_LEN = 16,
	TW_SUCI_MAC_KEY_LEN = 32,      /* HMAC-SHA-256 */
	TW_SUCI_MAC_TAG_LEN = 8,       /* HMAC-SHA-256/64 */
	TW_SUCI_MSIN_MAX_DIGITS = 10,  /* 15-digit IMSI, 2-digit MNC */
	TW_SUCI_MSIN_BCD_MAX = 5,
	/* RFC 7542 §2.3: an NAI of up to 253 octets; the shortest realm is
	 * "a.b", so a username has at most 253 - 4 octets and a realm at
	 * most 253 - 2. */
	TW_SUCI_NAI_MAX = 253,
	TW_SUCI_USERNAME_MAX = TW_SUCI_NAI_MAX - 4,
	TW_SUCI_REALM_MAX = TW_SUCI_NAI_MAX - 2,
	/* Longest scheme input: an NAI username (an IMSI's is 5 octets). */
	TW_SUCI_INPUT_MAX = TW_SUCI_USERNAME_MAX,
	TW_SUCI_ECIES_OUTPUT_MAX = TW_SUCI_PUB_MAX + TW_SUCI_INPUT_MAX +
				   TW_SUCI_MAC_TAG_LEN,
	/* Longest text form: "suci-1-" realm, routing (4), scheme (2), key
	 * id (3), four dashes, the hex output, NUL. */
	TW_SUCI_TEXT_MAX = 7 + TW_SUCI_REALM_MAX + 4 + 4 + 2 + 3 +
			   2 * TW_SUCI_ECIES_OUTPUT_MAX + 1,
	/* Longest NAI form: "type1.rid" 4 ".schid" 2 ".hnkey" 3 ".ecckey"
	 * 2*33 ".cip" 2*input ".mac" 2*8 "@" realm NUL. */
	TW_SUCI_NAI_FORM_MAX = 9 + 4 + 6 + 2 + 6 + 3 + 7 + 2 * TW_SUCI_PUB_MAX + 4 +
			       2 * TW_SUCI_INPUT_MAX + 4 + 2 * TW_SUCI_MAC_TAG_LEN +
			       1 + TW_SUCI_REALM_MAX + 1,
	TW_SUCI_STR_MAX = TW_SUCI_TEXT_MAX > TW_SUCI_NAI_FORM_MAX ? TW_SUCI_TEXT_MAX
								  : TW_SUCI_NAI_FORM_MAX,
	/* "nai-" + an NAI + NUL (an "imsi-" SUPI is 21 at most). */
	TW_SUCI_SUPI_STR_MAX = 4 + TW_SUCI_NAI_MAX + 1,
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
 * Why a received public key is refused: TW_OK for a good key, else
 * TW_ERR_DECODE with *why (if why is not NULL) a static English phrase
 * ("a point of small order", "not a point on P-256", ...), or
 * TW_ERR_UNSUPPORTED for another scheme. Profile B takes the 33-octet
 * compressed and the 65-octet uncompressed SEC1 forms. No key is used.
 */
TW_MUST_CHECK int tw_suci_check_public(enum tw_suci_scheme scheme,
				       const uint8_t *pub, size_t len,
				       const char **why);

/*
 * ECDH of TS 33.501 C.3.4: Profile A: Z = X25519(priv, peer_pub) (32-octet
 * peer); Profile B: Z = x-coordinate of priv*peer_pub (a 33- or 65-octet
 * SEC1 peer). The peer key is checked first as tw_suci_check_public()
 * does (TW_ERR_DECODE), and an all-zero Z is refused too.
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
 * eph_priv: 32 octets, or NULL for a fresh random ephemeral key. hn_pub as
 * tw_suci_ecdh() takes it; the ephemeral key is written compressed for
 * Profile B (C.3.4.2: point compression).
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
 * UE side: builds the SUCI text of a SUPI (TS 33.501 §6.12.2, TS 23.003
 * §2.2B, TS 29.571 SupiOrSuci):
 *   imsi-<digits>:       suci-0-<mcc>-<mnc>-<routing>-<scheme>-<key_id>-<out>
 *   nai-<user>@<realm>:  suci-1-<realm>-<routing>-<scheme>-<key_id>-<out>
 * The output is the MSIN digits or the username itself for the null scheme
 * (key_id must be 0, hn_pub is ignored) and the ECIES scheme output in
 * lowercase hex otherwise. The scheme input is the MSIN in BCD (C.3.4 note)
 * or the username's octets (§6.12.2: TS 33.220 B.2.1.2, UTF-8).
 * mnc_digits: 2 or 3 for an IMSI (ignored for an NAI). routing: 1-4 digits,
 * NULL means "0". eph_priv: 32 octets or NULL for a fresh random key.
 * An IMSI has 6..15 digits (MCC, MNC and at least one MSIN digit); an NAI
 * is RFC 7542 §2.2's username@realm (a realm with at least one dot, labels
 * of letters, digits and inner hyphens; UTF-8 beyond ASCII), 253 octets at
 * most.
 * Returns TW_ERR_INVAL/TW_ERR_DECODE/TW_ERR_LENGTH for a bad argument,
 * TW_ERR_UNSUPPORTED for an unknown scheme or SUPI type, or for a
 * null-scheme NAI whose text form would read back as another SUPI (a
 * username such as "x-0-1-27-ab" after a realm: the NAI form carries it),
 * TW_ERR_OVERFLOW if suci_max is too small (TW_SUCI_STR_MAX always fits).
 */
TW_MUST_CHECK int tw_suci_conceal(enum tw_suci_scheme scheme,
				  const uint8_t *hn_pub, size_t hn_pub_len,
				  uint8_t key_id, const char *supi,
				  unsigned mnc_digits, const char *routing,
				  const uint8_t *eph_priv, char *suci,
				  size_t suci_max);

/*
 * As tw_suci_conceal, in the NAI form of TS 23.003 §28.7.3:
 *   type<t>.rid<routing>.schid0.userid<MSIN or username>@<realm>
 *   type<t>.rid<routing>.schid<s>.hnkey<key_id>.ecckey<hex>.cip<hex>
 *     .mac<hex>@<realm>
 * with the realm of the NAI SUPI, or for an IMSI
 * "5gc.mnc<MNC, 3 digits>.mcc<MCC>.3gppnetwork.org" (§28.2).
 */
TW_MUST_CHECK int tw_suci_conceal_nai(enum tw_suci_scheme scheme,
				      const uint8_t *hn_pub, size_t hn_pub_len,
				      uint8_t key_id, const char *supi,
				      unsigned mnc_digits, const char *routing,
				      const uint8_t *eph_priv, char *suci,
				      size_t suci_max);

/*
 * What a SUCI in either form names, without any key: the SUPI type (0 or
 * 1), the protection scheme (0..15) and the home network public key id
 * (0..255), so a caller can pick the key. TW_OK, or TW_ERR_DECODE /
 * TW_ERR_UNSUPPORTED / TW_ERR_LENGTH as tw_suci_deconceal() would say of
 * the string's form. Any pointer may be NULL.
 */
TW_MUST_CHECK int tw_suci_peek(const char *suci, unsigned *supi_type,
			       unsigned *scheme, unsigned *key_id);

/*
 * Home network side (SIDF): parses a SUCI in either form above, finds the
 * key among keys[0..nkeys) whose id and scheme match the SUCI's, and
 * writes "imsi-<mcc><mnc><msin>" or "nai-<username>@<realm>" into
 * supi[supi_max].
 * Well-formed means: SUPI type 0 or 1; MCC exactly 3 digits; MNC 2 or 3
 * digits; an RFC 7542 realm; routing indicator 1-4 digits; scheme and key
 * id decimal without leading zeros, key id <= 255; null scheme: key id 0
 * and 1..10 MSIN digits or an RFC 7542 username; ECIES: an even number of
 * hex digits (either case); the IMSI at most 15 digits, the NAI at most 253
 * octets; the decrypted username an RFC 7542 username.
 * A text-form SUCI of type 1 with the null scheme is split at the first
 * place where a realm is followed by "-<routing>-0-0-" (the username may
 * hold dashes; a realm with a label "<1-4 digits>" followed by "-0-0-"
 * cannot be told apart there).
 * The NAI form of an IMSI SUCI writes the MNC as 3 digits: it is taken as a
 * 2-digit MNC when it begins with 0 (tw_suci_deconceal_mnc() says which).
 * Returns TW_ERR_DECODE for a malformed string, a bad ephemeral key or a
 * decrypted scheme input that is not an MSIN or username,
 * TW_ERR_UNSUPPORTED for SUPI type > 1 or an unknown scheme,
 * TW_ERR_NOTFOUND if no key matches, TW_ERR_LENGTH for a scheme output of
 * the wrong size, TW_ERR_AUTH if the MAC tag does not verify,
 * TW_ERR_OVERFLOW if supi_max is too small (TW_SUCI_SUPI_STR_MAX fits).
 */
TW_MUST_CHECK int tw_suci_deconceal(const struct tw_suci_hn_key *keys,
				    size_t nkeys, const char *suci,
				    char *supi, size_t supi_max);

/* As tw_suci_deconceal, with the MNC length of the home network (2 or 3,
 * or 0 for the rule above) for NAI-form IMSI SUCIs. */
TW_MUST_CHECK int tw_suci_deconceal_mnc(const struct tw_suci_hn_key *keys,
					size_t nkeys, const char *suci,
					unsigned mnc_digits, char *supi,
					size_t supi_max);

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
