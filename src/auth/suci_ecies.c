/*
 * twag — SUCI binary layer: MSIN BCD coding, ECDH on Curve25519 and
 * secp256r1, and the ECIES protection scheme of 3GPP TS 33.501 V17.9.0
 * Annex C.3 (Profile A and Profile B).
 *
 * Curve arithmetic is OpenSSL 3's (EVP_PKEY for ECDH, EC_POINT for the
 * P-256 public key); it allocates internally, which makes this file the one
 * allocating part of the library (see include/twag/suci.h). Everything else
 * (X9.63 KDF, AES-128-CTR, HMAC-SHA-256) is twag's own code.
 */
#include <stdbool.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/suci.h"

/* secp256r1 group order n (SEC 2 §2.4.2), big-endian. */
static const uint8_t p256_n[32] = {
	0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84,
	0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
};

static size_t pub_len_of(enum tw_suci_scheme scheme)
{
	switch (scheme) {
	case TW_SUCI_SCHEME_PROFILE_A:
		return TW_SUCI_PROFILE_A_PUB_LEN;
	case TW_SUCI_SCHEME_PROFILE_B:
		return TW_SUCI_PROFILE_B_PUB_LEN;
	default:
		return 0;
	}
}

/*
 * 1 <= d < n, without a data-dependent branch: the borrow out of d - n is 1
 * exactly when d < n. A private scalar is secret, so no early exit.
 */
static bool p256_scalar_ok(const uint8_t d[32])
{
	unsigned borrow = 0;

	for (int i = 31; i >= 0; i--) {
		unsigned diff = (unsigned)d[i] - p256_n[i] - borrow;
		borrow = (diff >> 8) & 1u;
	}
	return borrow == 1 && !tw_ct_is_zero(d, 32);
}

/*
 * An EVP_PKEY holding the P-256 private scalar d. OSSL_PARAM integers are
 * native-endian, so d is passed through a native-order copy that is wiped.
 */
static int p256_priv_pkey(const uint8_t d[32], EVP_PKEY **pkey)
{
	static const uint16_t one = 1;
	bool little = *(const uint8_t *)&one == 1;
	char group[] = SN_X9_62_prime256v1;
	uint8_t native[32];
	OSSL_PARAM params[3];
	EVP_PKEY_CTX *pctx = NULL;
	int rc;

	*pkey = NULL;
	for (size_t i = 0; i < 32; i++)
		native[i] = little ? d[31 - i] : d[i];
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     group, 0);
	params[1] = OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, native,
					    sizeof(native));
	params[2] = OSSL_PARAM_construct_end();
	pctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (pctx == NULL) {
		rc = TW_ERR_NOMEM;
		goto out;
	}
	if (EVP_PKEY_fromdata_init(pctx) <= 0 ||
	    EVP_PKEY_fromdata(pctx, pkey, EVP_PKEY_KEYPAIR, params) <= 0) {
		rc = TW_ERR_CRYPTO;
		goto out;
	}
	rc = TW_OK;
out:
	EVP_PKEY_CTX_free(pctx);
	tw_wipe(native, sizeof(native));
	return rc;
}

/* secp256r1 field prime p (SEC 2 §2.4.2), big-endian. */
static const uint8_t p256_p[32] = {
	0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/*
 * The X25519 u-coordinates of the points of small order (1, 2, 4, 8) in
 * canonical form, little-endian: 0, 1, the two of order 8, and p - 1
 * (order 2). Any of them as a peer key gives Z = 0 whatever the private
 * key (RFC 7748 §6.1, §7); the non-canonical aliases (p, p + 1, ...) are
 * refused before this list is read.
 */
static const uint8_t x25519_small_order[5][32] = {
	{ 0 },
	{ 1 },
	{ 0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
	  0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
	  0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00 },
	{ 0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1,
	  0x55, 0x9c, 0x83, 0xef, 0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c,
	  0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f, 0x11, 0x57 },
	{ 0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f },
};

/*
 * A received X25519 public key. RFC 7748 §5 has receivers mask bit 255
 * and reduce u mod p; a SUCI has no reason to carry such an encoding, so
 * here it is refused, as are the small-order points (which would make Z
 * zero and the ECIES keys known to anyone).
 */
static int x25519_peer_ok(const uint8_t *pub, size_t len, const char **why)
{
	if (len != TW_SUCI_PROFILE_A_PUB_LEN) {
		*why = "not 32 octets (an X25519 key is 32)";
		return TW_ERR_DECODE;
	}
	if (pub[31] & 0x80) {
		*why = "bit 255 set: not a canonical X25519 u-coordinate";
		return TW_ERR_DECODE;
	}
	/* u >= p = 2^255 - 19: octets 1..30 all ff, octet 31 7f, octet 0 >= ed */
	bool high = pub[31] == 0x7f && pub[0] >= 0xed;

	for (int i = 1; i < 31 && high; i++)
		high = pub[i] == 0xff;
	if (high) {
		*why = "u-coordinate not below 2^255 - 19: not canonical";
		return TW_ERR_DECODE;
	}
	for (size_t i = 0; i < sizeof(x25519_small_order) / 32; i++)
		if (memcmp(pub, x25519_small_order[i], 32) == 0) {
			*why = "a point of small order (the shared secret would be zero)";
			return TW_ERR_DECODE;
		}
	return TW_OK;
}

/* Big-endian a < b over 32 octets (public values: plain comparison). */
static bool be32_below(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 32) < 0;
}

/*
 * A received P-256 public key as an OpenSSL object: the compressed SEC1
 * form (33 octets, 02/03) of TS 33.501 C.3.4.2, and the uncompressed form
 * (65 octets, 04) when uncompressed_ok (a home network key as key tools
 * print it). Coordinates must be below p; OpenSSL's decoder then refuses a
 * point not on the curve (an x with no square root, or y^2 != x^3 - 3x + b).
 */
static int p256_peer_pkey(const uint8_t *pub, size_t len, bool uncompressed_ok,
			  EVP_PKEY **pkey, const char **why)
{
	char group[] = SN_X9_62_prime256v1;
	uint8_t copy[TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN];
	OSSL_PARAM params[3];
	EVP_PKEY_CTX *pctx = NULL;
	int rc;

	*pkey = NULL;
	if (len == 1 && pub[0] == 0x00) {
		*why = "the point at infinity";
		return TW_ERR_DECODE;
	}
	if (len == TW_SUCI_PROFILE_B_PUB_LEN && pub[0] != 0x02 && pub[0] != 0x03) {
		*why = "a 33-octet key must begin with 02 or 03 (compressed SEC1)";
		return TW_ERR_DECODE;
	}
	if (len == TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN && !uncompressed_ok) {
		*why = "not the compressed form (C.3.4.2: point compression)";
		return TW_ERR_DECODE;
	}
	if (len == TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN && pub[0] != 0x04) {
		*why = pub[0] == 0x06 || pub[0] == 0x07
			       ? "the hybrid SEC1 form (06/07) is not accepted"
			       : "a 65-octet key must begin with 04 (uncompressed SEC1)";
		return TW_ERR_DECODE;
	}
	if (len != TW_SUCI_PROFILE_B_PUB_LEN &&
	    len != TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN) {
		*why = uncompressed_ok
			       ? "not 33 (compressed) or 65 (uncompressed) octets"
			       : "not 33 octets (a compressed P-256 point)";
		return TW_ERR_DECODE;
	}
	if (!be32_below(pub + 1, p256_p) ||
	    (len == TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN && !be32_below(pub + 33, p256_p))) {
		*why = "a coordinate not below the field prime p";
		return TW_ERR_DECODE;
	}
	memcpy(copy, pub, len); /* OSSL_PARAM takes a non-const pointer */
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
						      copy, len);
	params[2] = OSSL_PARAM_construct_end();
	pctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (pctx == NULL) {
		rc = TW_ERR_NOMEM;
		goto out;
	}
	if (EVP_PKEY_fromdata_init(pctx) <= 0) {
		rc = TW_ERR_CRYPTO;
		goto out;
	}
	if (EVP_PKEY_fromdata(pctx, pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		*why = "not a point on P-256";
		rc = TW_ERR_DECODE;
		goto out;
	}
	rc = TW_OK;
out:
	EVP_PKEY_CTX_free(pctx);
	return rc;
}

int tw_suci_check_public(enum tw_suci_scheme scheme, const uint8_t *pub, size_t len,
			 const char **why)
{
	const char *dummy = NULL;
	EVP_PKEY *pkey = NULL;
	int rc;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	if (pub == NULL && len != 0)
		return TW_ERR_INVAL;
	if (scheme == TW_SUCI_SCHEME_PROFILE_A)
		return x25519_peer_ok(pub, len, why);
	if (scheme != TW_SUCI_SCHEME_PROFILE_B)
		return TW_ERR_UNSUPPORTED;
	rc = p256_peer_pkey(pub, len, true, &pkey, why);
	EVP_PKEY_free(pkey);
	ERR_clear_error();
	return rc;
}

/* Profile B public key: the compressed SEC1 encoding of d*G. */
static int p256_public(const uint8_t d[32], uint8_t pub[33])
{
	EC_GROUP *group = NULL;
	EC_POINT *point = NULL;
	BIGNUM *bn = NULL;
	BN_CTX *bnctx = NULL;
	int rc;

	group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	bn = BN_secure_new();
	bnctx = BN_CTX_secure_new();
	if (group == NULL || bn == NULL || bnctx == NULL ||
	    (point = EC_POINT_new(group)) == NULL) {
		rc = TW_ERR_NOMEM;
		goto out;
	}
	BN_set_flags(bn, BN_FLG_CONSTTIME);
	if (BN_bin2bn(d, 32, bn) == NULL ||
	    EC_POINT_mul(group, point, bn, NULL, NULL, bnctx) != 1 ||
	    EC_POINT_point2oct(group, point, POINT_CONVERSION_COMPRESSED, pub,
			       TW_SUCI_PROFILE_B_PUB_LEN, bnctx) !=
		    TW_SUCI_PROFILE_B_PUB_LEN) {
		rc = TW_ERR_CRYPTO;
		goto out;
	}
	rc = TW_OK;
out:
	EC_POINT_free(point);
	BN_clear_free(bn);
	BN_CTX_free(bnctx);
	EC_GROUP_free(group);
	return rc;
}

int tw_suci_ecc_public(enum tw_suci_scheme scheme, const uint8_t priv[static 32],
		       uint8_t *pub, size_t pub_max, size_t *pub_len)
{
	size_t need = pub_len_of(scheme);
	EVP_PKEY *pkey = NULL;
	int rc;

	if (need == 0)
		return TW_ERR_UNSUPPORTED;
	if (pub_max < need)
		return TW_ERR_OVERFLOW;
	if (scheme == TW_SUCI_SCHEME_PROFILE_A) {
		/* RFC 7748 §6.1: public = X25519(priv, 9). */
		size_t n = need;

		pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv,
						    TW_SUCI_PRIV_LEN);
		if (pkey == NULL) {
			rc = TW_ERR_NOMEM;
			goto out;
		}
		if (EVP_PKEY_get_raw_public_key(pkey, pub, &n) != 1 ||
		    n != need) {
			rc = TW_ERR_CRYPTO;
			goto out;
		}
	} else {
		if (!p256_scalar_ok(priv)) {
			rc = TW_ERR_RANGE;
			goto out;
		}
		rc = p256_public(priv, pub);
		if (rc != TW_OK)
			goto out;
	}
	if (pub_len != NULL)
		*pub_len = need;
	rc = TW_OK;
out:
	EVP_PKEY_free(pkey);
	if (rc != TW_OK)
		ERR_clear_error();
	return rc;
}

int tw_suci_public_key(const struct tw_suci_hn_key *k, uint8_t *pub,
		       size_t pub_max, size_t *pub_len)
{
	return tw_suci_ecc_public(k->scheme, k->priv, pub, pub_max, pub_len);
}

/* The home network's private key as an OpenSSL object (allocates). */
static int own_pkey(enum tw_suci_scheme scheme, const uint8_t priv[static 32],
		    EVP_PKEY **own)
{
	*own = NULL;
	if (scheme == TW_SUCI_SCHEME_PROFILE_A) {
		*own = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv,
						    TW_SUCI_PRIV_LEN);
		return *own != NULL ? TW_OK : TW_ERR_NOMEM;
	}
	if (scheme == TW_SUCI_SCHEME_PROFILE_B) {
		if (!p256_scalar_ok(priv))
			return TW_ERR_RANGE;
		return p256_priv_pkey(priv, own);
	}
	return TW_ERR_UNSUPPORTED;
}

/* Z from a prepared private key and a received public key, checked before
 * the private key is used. */
static int ecdh_with(enum tw_suci_scheme scheme, EVP_PKEY *own,
		     const uint8_t *peer_pub, size_t peer_pub_len,
		     bool uncompressed_ok, uint8_t z[static 32])
{
	EVP_PKEY *peer = NULL;
	EVP_PKEY_CTX *dctx = NULL;
	size_t zlen = TW_SUCI_SHARED_KEY_LEN;
	const char *why = NULL;
	int rc;

	if (scheme == TW_SUCI_SCHEME_PROFILE_A) {
		rc = x25519_peer_ok(peer_pub, peer_pub_len, &why);
		if (rc != TW_OK)
			goto out;
		peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL,
						   peer_pub, peer_pub_len);
		if (peer == NULL) {
			rc = TW_ERR_NOMEM;
			goto out;
		}
	} else if (scheme == TW_SUCI_SCHEME_PROFILE_B) {
		rc = p256_peer_pkey(peer_pub, peer_pub_len, uncompressed_ok, &peer, &why);
		if (rc != TW_OK)
			goto out;
	} else {
		return TW_ERR_UNSUPPORTED;
	}
	dctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
	if (dctx == NULL) {
		rc = TW_ERR_NOMEM;
		goto out;
	}
	if (EVP_PKEY_derive_init(dctx) <= 0) {
		rc = TW_ERR_CRYPTO;
		goto out;
	}
	/* Validates the peer key (P-256: on the curve, not the identity). */
	if (EVP_PKEY_derive_set_peer(dctx, peer) <= 0) {
		rc = TW_ERR_DECODE;
		goto out;
	}
	/*
	 * TS 33.501 C.3.4.1: Z = X25519(priv, peer); OpenSSL refuses the
	 * all-zero result of a low-order peer point (RFC 7748 §6.1), which is
	 * a property of the received key, so it is a decode error.
	 * C.3.4.2: Z = x-coordinate of priv * peer (SEC 1 §3.3.1).
	 */
	if (EVP_PKEY_derive(dctx, z, &zlen) <= 0) {
		rc = scheme == TW_SUCI_SCHEME_PROFILE_A ? TW_ERR_DECODE
							: TW_ERR_CRYPTO;
		goto out;
	}
	if (zlen != TW_SUCI_SHARED_KEY_LEN) {
		rc = TW_ERR_CRYPTO;
		goto out;
	}
	/* RFC 7748 §6.1: check for the all-zero value (also done above). */
	if (tw_ct_is_zero(z, TW_SUCI_SHARED_KEY_LEN)) {
		rc = TW_ERR_DECODE;
		goto out;
	}
	rc = TW_OK;
out:
	EVP_PKEY_CTX_free(dctx);
	EVP_PKEY_free(peer);
	if (rc != TW_OK) {
		tw_wipe(z, TW_SUCI_SHARED_KEY_LEN);
		ERR_clear_error();
	}
	return rc;
}

int tw_suci_ecdh(enum tw_suci_scheme scheme, const uint8_t priv[static 32],
		 const uint8_t *peer_pub, size_t peer_pub_len,
		 uint8_t z[static 32])
{
	EVP_PKEY *own = NULL;
	int rc;

	/* A bad received key is reported before our own key is touched; z
	 * is zero on every error. */
	if (scheme != TW_SUCI_SCHEME_PROFILE_A && scheme != TW_SUCI_SCHEME_PROFILE_B)
		rc = TW_ERR_UNSUPPORTED;
	else if (scheme == TW_SUCI_SCHEME_PROFILE_A)
		rc = tw_suci_check_public(scheme, peer_pub, peer_pub_len, NULL);
	else
		rc = TW_OK;
	if (rc == TW_OK)
		rc = own_pkey(scheme, priv, &own);
	if (rc == TW_OK)
		rc = ecdh_with(scheme, own, peer_pub, peer_pub_len, true, z);
	EVP_PKEY_free(own);
	if (rc != TW_OK) {
		tw_wipe(z, TW_SUCI_SHARED_KEY_LEN);
		ERR_clear_error();
	}
	return rc;
}

int tw_suci_hn_ctx_init(struct tw_suci_hn_ctx *c, const struct tw_suci_hn_key *k)
{
	EVP_PKEY *own = NULL;
	int rc;

	if (c == NULL || k == NULL)
		return TW_ERR_INVAL;
	memset(c, 0, sizeof(*c));
	rc = own_pkey(k->scheme, k->priv, &own);
	if (rc != TW_OK) {
		ERR_clear_error();
		return rc;
	}
	c->id = k->id;
	c->scheme = k->scheme;
	c->pkey = own;
	return TW_OK;
}

void tw_suci_hn_ctx_free(struct tw_suci_hn_ctx *c)
{
	if (c == NULL)
		return;
	/* EVP_PKEY_free clears the key material it owns. */
	EVP_PKEY_free(c->pkey);
	memset(c, 0, sizeof(*c));
}

int tw_suci_ecies_derive(const uint8_t z[static 32], const uint8_t *eph_pub,
			 size_t eph_pub_len, struct tw_suci_ecies_keys *keys)
{
	uint8_t k[TW_SUCI_ENC_KEY_LEN + TW_SUCI_ICB_LEN + TW_SUCI_MAC_KEY_LEN];
	int rc;

	/*
	 * TS 33.501 C.3.2 / C.3.4: K = X9.63-KDF(SHA-256, Z, SharedInfo1 =
	 * ephemeral public key), enckeylen = 16, icblen = 16, mackeylen = 32;
	 * EK = leftmost 16 octets, ICB = middle 16, MK = rightmost 32.
	 */
	rc = tw_x963_kdf_sha256(k, sizeof(k), z, TW_SUCI_SHARED_KEY_LEN,
				eph_pub, eph_pub_len);
	if (rc != TW_OK)
		goto out;
	memcpy(keys->enc_key, k, TW_SUCI_ENC_KEY_LEN);
	memcpy(keys->icb, k + TW_SUCI_ENC_KEY_LEN, TW_SUCI_ICB_LEN);
	memcpy(keys->mac_key, k + TW_SUCI_ENC_KEY_LEN + TW_SUCI_ICB_LEN,
	       TW_SUCI_MAC_KEY_LEN);
out:
	tw_wipe(k, sizeof(k));
	return rc;
}

/* A fresh ephemeral private key; P-256 scalars are drawn until 1 <= d < n. */
static int fresh_eph(enum tw_suci_scheme scheme, uint8_t eph[32])
{
	/* P(d >= n) < 2^-32 per draw: 8 draws failing means a broken RNG. */
	for (int tries = 0; tries < 8; tries++) {
		if (RAND_priv_bytes(eph, TW_SUCI_PRIV_LEN) != 1) {
			ERR_clear_error();
			return TW_ERR_CRYPTO;
		}
		if (scheme != TW_SUCI_SCHEME_PROFILE_B || p256_scalar_ok(eph))
			return TW_OK;
	}
	return TW_ERR_CRYPTO;
}

int tw_suci_ecies_encrypt(enum tw_suci_scheme scheme, const uint8_t *hn_pub,
			  size_t hn_pub_len, const uint8_t *eph_priv,
			  const uint8_t *plaintext, size_t len, uint8_t *out,
			  size_t out_max, size_t *out_len)
{
	size_t pub_len = pub_len_of(scheme);
	uint8_t eph[TW_SUCI_PRIV_LEN];
	uint8_t z[TW_SUCI_SHARED_KEY_LEN];
	uint8_t mac[32];
	struct tw_suci_ecies_keys keys;
	struct tw_aes_ctx aes;
	bool aes_set = false;
	int rc;

	memset(&keys, 0, sizeof(keys));
	memset(z, 0, sizeof(z));
	memset(mac, 0, sizeof(mac));
	memset(eph, 0, sizeof(eph));
	if (pub_len == 0)
		return TW_ERR_UNSUPPORTED;
	if (len == 0)
		return TW_ERR_LENGTH;
	if (out_max < pub_len + TW_SUCI_MAC_TAG_LEN ||
	    len > out_max - pub_len - TW_SUCI_MAC_TAG_LEN)
		return TW_ERR_OVERFLOW;
	/* An X25519 key is checked before any key is drawn or used (a P-256
	 * key is checked by the ECDH, before the derivation). */
	if (scheme == TW_SUCI_SCHEME_PROFILE_A &&
	    (rc = tw_suci_check_public(scheme, hn_pub, hn_pub_len, NULL)) != TW_OK)
		return rc;
	if (eph_priv != NULL)
		memcpy(eph, eph_priv, sizeof(eph));
	else if ((rc = fresh_eph(scheme, eph)) != TW_OK)
		goto out;

	/* C.3.2 UE side: ephemeral key pair, Z with the HN public key, K. */
	rc = tw_suci_ecc_public(scheme, eph, out, pub_len, NULL);
	if (rc != TW_OK)
		goto out;
	rc = tw_suci_ecdh(scheme, eph, hn_pub, hn_pub_len, z);
	if (rc != TW_OK)
		goto out;
	rc = tw_suci_ecies_derive(z, out, pub_len, &keys);
	if (rc != TW_OK)
		goto out;

	/* C.3.4: ciphertext = AES-128-CTR(EK, ICB, scheme input). */
	rc = tw_aes_init_enc(&aes, keys.enc_key, TW_SUCI_ENC_KEY_LEN);
	if (rc != TW_OK)
		goto out;
	aes_set = true;
	tw_aes_ctr(&aes, keys.icb, out + pub_len, plaintext, len);

	/* C.3.4: MAC tag = HMAC-SHA-256(MK, ciphertext), first 8 octets. */
	tw_hmac_sha256(mac, keys.mac_key, TW_SUCI_MAC_KEY_LEN, out + pub_len,
		       len);
	memcpy(out + pub_len + len, mac, TW_SUCI_MAC_TAG_LEN);
	if (out_len != NULL)
		*out_len = pub_len + len + TW_SUCI_MAC_TAG_LEN;
	rc = TW_OK;
out:
	if (aes_set)
		tw_aes_wipe(&aes);
	tw_wipe(eph, sizeof(eph));
	tw_wipe(z, sizeof(z));
	tw_wipe(&keys, sizeof(keys));
	tw_wipe(mac, sizeof(mac));
	if (rc != TW_OK)
		tw_wipe(out, out_max < pub_len + len + TW_SUCI_MAC_TAG_LEN
				     ? out_max
				     : pub_len + len + TW_SUCI_MAC_TAG_LEN);
	return rc;
}

int tw_suci_ecies_decrypt_ctx(const struct tw_suci_hn_ctx *k,
			      const uint8_t *scheme_output, size_t len,
			      uint8_t *plaintext, size_t pt_max, size_t *pt_len)
{
	size_t pub_len = k != NULL ? pub_len_of(k->scheme) : 0;
	uint8_t z[TW_SUCI_SHARED_KEY_LEN];
	uint8_t mac[32];
	struct tw_suci_ecies_keys keys;
	struct tw_aes_ctx aes;
	bool aes_set = false;
	const uint8_t *ct, *tag;
	size_t ct_len;
	int rc;

	memset(&keys, 0, sizeof(keys));
	memset(z, 0, sizeof(z));
	memset(mac, 0, sizeof(mac));
	if (pub_len == 0)
		return TW_ERR_UNSUPPORTED;
	/* C.3.3: scheme output = eph public key | ciphertext | MAC tag. */
	if (len < pub_len + 1 + TW_SUCI_MAC_TAG_LEN)
		return TW_ERR_LENGTH;
	ct = scheme_output + pub_len;
	ct_len = len - pub_len - TW_SUCI_MAC_TAG_LEN;
	tag = ct + ct_len;
	if (pt_max < ct_len)
		return TW_ERR_OVERFLOW;

	rc = ecdh_with(k->scheme, k->pkey, scheme_output, pub_len, false, z);
	if (rc != TW_OK)
		goto out;
	rc = tw_suci_ecies_derive(z, scheme_output, pub_len, &keys);
	if (rc != TW_OK)
		goto out;
	/* C.3.3: verify the tag (constant time) before decrypting. */
	tw_hmac_sha256(mac, keys.mac_key, TW_SUCI_MAC_KEY_LEN, ct, ct_len);
	if (!tw_ct_eq(mac, tag, TW_SUCI_MAC_TAG_LEN)) {
		rc = TW_ERR_AUTH;
		goto out;
	}
	rc = tw_aes_init_enc(&aes, keys.enc_key, TW_SUCI_ENC_KEY_LEN);
	if (rc != TW_OK)
		goto out;
	aes_set = true;
	tw_aes_ctr(&aes, keys.icb, plaintext, ct, ct_len);
	if (pt_len != NULL)
		*pt_len = ct_len;
	rc = TW_OK;
out:
	if (aes_set)
		tw_aes_wipe(&aes);
	tw_wipe(z, sizeof(z));
	tw_wipe(&keys, sizeof(keys));
	tw_wipe(mac, sizeof(mac));
	return rc;
}

int tw_suci_ecies_decrypt(const struct tw_suci_hn_key *k,
			  const uint8_t *scheme_output, size_t len,
			  uint8_t *plaintext, size_t pt_max, size_t *pt_len)
{
	struct tw_suci_hn_ctx c;
	size_t pub_len = pub_len_of(k->scheme);
	int rc;

	if (pub_len == 0)
		return TW_ERR_UNSUPPORTED;
	/* Length errors first, as before, so no key is imported for them. */
	if (len < pub_len + 1 + TW_SUCI_MAC_TAG_LEN)
		return TW_ERR_LENGTH;
	if (pt_max < len - pub_len - TW_SUCI_MAC_TAG_LEN)
		return TW_ERR_OVERFLOW;
	rc = tw_suci_hn_ctx_init(&c, k);
	if (rc != TW_OK)
		return rc;
	rc = tw_suci_ecies_decrypt_ctx(&c, scheme_output, len, plaintext, pt_max,
				       pt_len);
	tw_suci_hn_ctx_free(&c);
	return rc;
}

int tw_suci_msin_to_bcd(const char *msin, size_t ndigits, uint8_t *out,
			size_t out_max, size_t *out_len)
{
	size_t n = (ndigits + 1) / 2;

	if (ndigits == 0 || ndigits > TW_SUCI_MSIN_MAX_DIGITS)
		return TW_ERR_LENGTH;
	for (size_t i = 0; i < ndigits; i++)
		if (msin[i] < '0' || msin[i] > '9')
			return TW_ERR_DECODE;
	if (out_max < n)
		return TW_ERR_OVERFLOW;
	/*
	 * TS 33.501 C.3.4 note / TS 24.501 Figure 9.11.3.4.3a: digit 2i in
	 * bits 1-4 and digit 2i+1 in bits 5-8 of octet i; "1111" fills
	 * bits 5-8 of the last octet for an odd number of digits.
	 */
	for (size_t i = 0; i < n; i++) {
		unsigned lo = (unsigned)(msin[2 * i] - '0');
		unsigned hi = 2 * i + 1 < ndigits
				      ? (unsigned)(msin[2 * i + 1] - '0')
				      : 0xfu;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	if (out_len != NULL)
		*out_len = n;
	return TW_OK;
}

int tw_suci_bcd_to_msin(const uint8_t *bcd, size_t len, char *msin,
			size_t msin_max, size_t *ndigits)
{
	size_t n = 0;

	if (len == 0 || len > TW_SUCI_MSIN_BCD_MAX)
		return TW_ERR_LENGTH;
	for (size_t i = 0; i < len; i++) {
		unsigned lo = bcd[i] & 0xfu, hi = bcd[i] >> 4;

		if (lo > 9)
			return TW_ERR_DECODE;
		/* Only the last octet's high nibble may be the filler. */
		if (hi > 9 && !(hi == 0xf && i == len - 1))
			return TW_ERR_DECODE;
	}
	if (msin_max < 2 * len + 1)
		return TW_ERR_OVERFLOW;
	for (size_t i = 0; i < len; i++) {
		msin[n++] = (char)('0' + (bcd[i] & 0xf));
		if ((bcd[i] >> 4) != 0xf)
			msin[n++] = (char)('0' + (bcd[i] >> 4));
	}
	msin[n] = '\0';
	if (ndigits != NULL)
		*ndigits = n;
	return TW_OK;
}
