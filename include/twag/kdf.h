/*
 * twag — key derivation functions of 3GPP and the EAP SIM methods.
 *
 *   TS 33.220 (Rel-17) Annex B.2  generic KDF: HMAC-SHA-256(Key, FC|P0|L0|...)
 *   TS 33.402 (Rel-17) Annex A.2  CK'/IK' for EAP-AKA' (FC 0x20)
 *   TS 33.501 (Rel-17) Annex A    KAUSF, RES*, HRES*, KSEAF, KAMF
 *   RFC 9048 §3.3/§3.4 (was RFC 5448)  EAP-AKA' PRF' and key expansion
 *   RFC 4187 §7, RFC 4186 §7     EAP-AKA / EAP-SIM MK and the FIPS 186-2
 *                                (change notice 1) PRF; fast re-auth keys
 *   ANSI X9.63 / SEC 1 v2 §3.6.1 KDF with SHA-256 (SUCI ECIES)
 *
 * Callers own every buffer; outputs are valid only when TW_OK is returned
 * and are left zeroed on failure. Labels follow the RFCs: CK' is the FIRST
 * 16 octets of the A.2 KDF output and IK' the last 16, and the EAP-AKA'
 * PRF' key is IK' | CK' (RFC 9048 §3.3).
 */
#ifndef TWAG_KDF_H
#define TWAG_KDF_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/hmac.h"

enum {
	TW_KDF_OUT_LEN = 32,          /* TS 33.220 B.2: 256-bit derived key */
	TW_KDF_PARAM_MAX = 65535,     /* Li is a 2-octet length */
	TW_KDF_ACCESS_NET_MAX = 65535,

	/* TS 33.220 B.2 / TS 33.402 A / TS 33.501 A.1 FC values */
	TW_FC_CK_IK_PRIME = 0x20,
	TW_FC_KAUSF = 0x6a,
	TW_FC_RES_STAR = 0x6b,
	TW_FC_KSEAF = 0x6c,
	TW_FC_KAMF = 0x6d,

	TW_KAUSF_LEN = 32,
	TW_KSEAF_LEN = 32,
	TW_KAMF_LEN = 32,
	TW_RES_STAR_LEN = 16,
	TW_HRES_STAR_LEN = 16,
	TW_RES_MIN_LEN = 4,  /* TS 33.102 §6.3.2: RES is 32..128 bits */
	TW_RES_MAX_LEN = 16,
	TW_ABBA_MIN_LEN = 2, /* TS 24.501 §9.11.3.10: ABBA contents >= 2 octets */

	/* RFC 9048 §3.4: PRF' counter is one octet, at most 255 blocks */
	TW_PRF_PRIME_MAX_LEN = 255 * 32,

	TW_AKA_PRIME_K_ENCR_LEN = 16,
	TW_AKA_PRIME_K_AUT_LEN = 32,
	TW_AKA_PRIME_K_RE_LEN = 32,
	TW_EAP_MSK_LEN = 64,
	TW_EAP_EMSK_LEN = 64,

	TW_EAP_SIM_MK_LEN = 20,
	TW_EAP_SIM_K_ENCR_LEN = 16,
	TW_EAP_SIM_K_AUT_LEN = 16,
	TW_EAP_SIM_NONCE_LEN = 16, /* NONCE_MT and NONCE_S */
	TW_EAP_SIM_KC_LEN = 8,
};

/* One KDF input parameter Pi (its length Li is encoded by the KDF). */
struct tw_kdf_param {
	const uint8_t *p; /* may be NULL when len is 0 */
	size_t len;
};

/*
 * TS 33.220 Annex B.2.0: derived key = HMAC-SHA-256(key, S) with
 * S = FC || P0 || L0 || P1 || L1 || ... || Pn || Ln, Li = len(Pi) as two
 * octets. Returns TW_ERR_LENGTH if a parameter is longer than 65535 octets,
 * TW_ERR_INVAL for a NULL parameter pointer with a non-zero length.
 */
TW_MUST_CHECK int tw_kdf_3gpp(uint8_t out[static 32], const uint8_t *key,
			      size_t key_len, uint8_t fc,
			      const struct tw_kdf_param *params, size_t n_params);

/* The same with a key already loaded in a HMAC context (left keyed and
 * empty afterwards): one key, many derivations (e.g. CK||IK for KAUSF and
 * RES*) without re-keying. */
TW_MUST_CHECK int tw_kdf_3gpp_keyed(uint8_t out[static 32],
				    struct tw_hmac_sha256_ctx *key_ctx,
				    uint8_t fc,
				    const struct tw_kdf_param *params,
				    size_t n_params);

/*
 * TS 33.402 Annex A.2: CK' || IK' = KDF(CK || IK, FC = 0x20,
 * P0 = access network identity (e.g. "WLAN", or the 5G serving network
 * name, TS 33.501 Annex A.3), P1 = SQN ^ AK). ck_prime gets the first 16
 * octets, ik_prime the last 16 (RFC 9048 §3.3 labels).
 * Returns TW_ERR_LENGTH if net_name_len is 0 or above 65535.
 */
TW_MUST_CHECK int tw_kdf_ck_ik_prime(uint8_t ck_prime[static 16],
				     uint8_t ik_prime[static 16],
				     const uint8_t ck[static 16],
				     const uint8_t ik[static 16],
				     const uint8_t *net_name, size_t net_name_len,
				     const uint8_t sqn_xor_ak[static 6]);

/* TS 33.501 Annex A.2: KAUSF = KDF(CK || IK, FC = 0x6A, P0 = serving
 * network name, P1 = SQN ^ AK). TW_ERR_LENGTH for an empty or >65535 SNN. */
TW_MUST_CHECK int tw_kdf_kausf(uint8_t kausf[static 32],
			       const uint8_t ck[static 16],
			       const uint8_t ik[static 16],
			       const uint8_t *snn, size_t snn_len,
			       const uint8_t sqn_xor_ak[static 6]);

/* TS 33.501 Annex A.4: RES* / XRES* = the 128 least significant bits of
 * KDF(CK || IK, FC = 0x6B, P0 = SNN, P1 = RAND, P2 = RES or XRES).
 * TW_ERR_LENGTH unless 4 <= res_len <= 16, or for a bad SNN length. */
TW_MUST_CHECK int tw_kdf_res_star(uint8_t res_star[static 16],
				  const uint8_t ck[static 16],
				  const uint8_t ik[static 16],
				  const uint8_t *snn, size_t snn_len,
				  const uint8_t rand_[static 16],
				  const uint8_t *res, size_t res_len);

/* TS 33.501 Annex A.5: HRES* / HXRES* = the 128 least significant bits of
 * SHA-256(RAND || RES*). */
void tw_kdf_hres_star(uint8_t hres_star[static 16], const uint8_t rand_[static 16],
		      const uint8_t res_star[static 16]);

/* TS 33.501 Annex A.6: KSEAF = KDF(KAUSF, FC = 0x6C, P0 = SNN). */
TW_MUST_CHECK int tw_kdf_kseaf(uint8_t kseaf[static 32],
			       const uint8_t kausf[static 32],
			       const uint8_t *snn, size_t snn_len);

/* TS 33.501 Annex A.7: KAMF = KDF(KSEAF, FC = 0x6D, P0 = SUPI, P1 = ABBA).
 * supi is P0 exactly as A.7.0 encodes it. TW_ERR_LENGTH for an empty or
 * too long SUPI or an ABBA shorter than 2 octets. */
TW_MUST_CHECK int tw_kdf_kamf(uint8_t kamf[static 32],
			      const uint8_t kseaf[static 32],
			      const uint8_t *supi, size_t supi_len,
			      const uint8_t *abba, size_t abba_len);

/* KAMF for an IMSI-type SUPI: A.7.0/A.7.1 use the IMSI digits (MCC|MNC|
 * MSIN, TS 23.003 §2.2) as a character string. imsi must be 6..15 decimal
 * digits (TW_ERR_DECODE for a non-digit, TW_ERR_LENGTH otherwise). */
TW_MUST_CHECK int tw_kdf_kamf_imsi(uint8_t kamf[static 32],
				   const uint8_t kseaf[static 32],
				   const char *imsi, size_t imsi_len,
				   const uint8_t *abba, size_t abba_len);

/*
 * RFC 9048 §3.4 PRF': T1 = HMAC-SHA-256(K, S | 0x01),
 * Tn = HMAC-SHA-256(K, Tn-1 | S | n); output T1 | T2 | ... truncated to
 * out_len. S is the concatenation of the n_s pieces in s. Returns
 * TW_ERR_LENGTH if out_len is 0 or above 255 * 32 octets.
 */
TW_MUST_CHECK int tw_prf_prime(uint8_t *out, size_t out_len, const uint8_t *key,
			       size_t key_len, const struct tw_kdf_param *s,
			       size_t n_s);

/* EAP-AKA' keys (RFC 9048 §3.3). */
struct tw_eap_aka_prime_keys {
	uint8_t k_encr[16];
	uint8_t k_aut[32];
	uint8_t k_re[32];
	uint8_t msk[64];
	uint8_t emsk[64];
};

/*
 * RFC 9048 §3.3: MK = PRF'(IK' | CK', "EAP-AKA'" | Identity);
 * K_encr = MK[0..127], K_aut = MK[128..383], K_re = MK[384..639],
 * MSK = MK[640..1151], EMSK = MK[1152..1663] (bits). identity is the exact
 * octets of the identity the RFC names (AT_IDENTITY or EAP-Response/Identity).
 */
TW_MUST_CHECK int tw_eap_aka_prime_derive(struct tw_eap_aka_prime_keys *keys,
					const uint8_t ik_prime[static 16],
					const uint8_t ck_prime[static 16],
					const uint8_t *identity,
					size_t identity_len);

/* One attach's keys for tw_eap_aka_prime_derive_many(). */
struct tw_eap_aka_prime_job {
	const uint8_t *ck, *ik;        /* the vector's, 16 octets each */
	const uint8_t *sqn_xor_ak;     /* AUTN[0..5] */
	const uint8_t *identity;       /* as for tw_eap_aka_prime_derive() */
	size_t identity_len;
	struct tw_eap_aka_prime_keys keys;  /* out */
	struct tw_hmac_sha256_ctx k_aut;    /* out: keyed with keys.k_aut */
	int rc;                             /* out: TW_OK or as the scalar calls */
};

/*
 * The whole key hierarchy of n EAP-AKA' full authentications on one
 * access network: per job, CK'/IK' (tw_kdf_ck_ik_prime), the keys
 * (tw_eap_aka_prime_derive) and the AT_MAC key state
 * (tw_hmac_sha256_init of K_aut); same results as those calls. With
 * AVX-512, sixteen jobs run each HMAC of the chain at once (sha_internal.h
 * lockstep lanes); a failed job has its outputs zeroed.
 */
void tw_eap_aka_prime_derive_many(struct tw_eap_aka_prime_job *jobs, size_t n,
				  const uint8_t *net_name, size_t net_name_len);

/* RFC 9048 §3.3 fast re-authentication: MK = PRF'(K_re, "EAP-AKA' re-auth" |
 * Identity | counter | NONCE_S); MSK = MK[0..511], EMSK = MK[512..1023]. The
 * counter is the 16-bit AT_COUNTER value (network byte order in S). */
TW_MUST_CHECK int tw_eap_aka_prime_reauth(uint8_t msk[static 64],
					       uint8_t emsk[static 64],
					       const uint8_t k_re[static 32],
					       const uint8_t *identity,
					       size_t identity_len,
					       uint16_t counter,
					       const uint8_t nonce_s[static 16]);

/* EAP-SIM and EAP-AKA keys (RFC 4186 §7, RFC 4187 §7: same layout). */
struct tw_eap_sim_keys {
	uint8_t mk[20];
	uint8_t k_encr[16];
	uint8_t k_aut[16];
	uint8_t msk[64];
	uint8_t emsk[64];
};

/*
 * RFC 4186 Appendix B / RFC 4187 §7: the FIPS 186-2 change notice 1
 * general-purpose PRF with b = 160 and XSEED_j = 0:
 *   for each 40-octet block j: for i = 0, 1:
 *     w_i = G(t, XKEY) (SHA-1 compression of XKEY zero-padded to 512 bits);
 *     XKEY = (1 + XKEY + w_i) mod 2^160;
 *   x_j = w_0 | w_1.
 * Writes out_len octets of x_0 | x_1 | ... derived from the 20-octet XKEY.
 */
void tw_fips186_2_prf(uint8_t *out, size_t out_len, const uint8_t xkey[static 20]);

/* RFC 4187 §7: MK = SHA1(Identity | IK | CK); K_encr | K_aut | MSK | EMSK =
 * PRF(MK). TW_ERR_INVAL for a NULL identity with a non-zero length. */
TW_MUST_CHECK int tw_eap_aka_derive(struct tw_eap_sim_keys *keys,
				  const uint8_t *identity, size_t identity_len,
				  const uint8_t ik[static 16],
				  const uint8_t ck[static 16]);

/*
 * RFC 4186 §7: MK = SHA1(Identity | n*Kc | NONCE_MT | Version List |
 * Selected Version); then the same PRF as EAP-AKA. kc holds n_kc (2 or 3)
 * Kc values of 8 octets in the order of the RANDs; version_list is the
 * AT_VERSION_LIST contents (2 octets per version, without padding) and
 * selected_version the AT_SELECTED_VERSION value. TW_ERR_LENGTH for a bad
 * n_kc or an empty/odd version list.
 */
TW_MUST_CHECK int tw_eap_sim_derive(struct tw_eap_sim_keys *keys,
				  const uint8_t *identity, size_t identity_len,
				  const uint8_t (*kc)[8], size_t n_kc,
				  const uint8_t nonce_mt[static 16],
				  const uint8_t *version_list,
				  size_t version_list_len,
				  uint16_t selected_version);

/* RFC 4186 §7 / RFC 4187 §7 fast re-authentication: XKEY' = SHA1(Identity |
 * counter | NONCE_S | MK); MSK | EMSK = the first 128 octets of PRF(XKEY').
 * The counter is the 16-bit AT_COUNTER value. */
TW_MUST_CHECK int tw_eap_sim_reauth(uint8_t msk[static 64],
					 uint8_t emsk[static 64],
					 const uint8_t mk[static 20],
					 const uint8_t *identity,
					 size_t identity_len, uint16_t counter,
					 const uint8_t nonce_s[static 16]);

/*
 * ANSI X9.63 KDF with SHA-256 (SEC 1 v2 §3.6.1): K = K1 | K2 | ...,
 * Ki = SHA-256(Z | Counter_i | SharedInfo), Counter a 32-bit big-endian
 * count from 1. Used by SUCI ECIES (TS 33.501 Annex C.3.2). Returns
 * TW_ERR_LENGTH if out_len is 0 or needs more than 2^32 - 1 blocks,
 * TW_ERR_INVAL for NULL inputs with non-zero lengths.
 */
TW_MUST_CHECK int tw_x963_kdf_sha256(uint8_t *out, size_t out_len,
				     const uint8_t *z, size_t z_len,
				     const uint8_t *shared_info, size_t info_len);

#endif
