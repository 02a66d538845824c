/*
 * twag — the IEEE 802.11 pairwise key hierarchy and EAPOL-Key MICs
 * (IEEE Std 802.11-2020, §12.7.1 and §12.7.2; IEEE Std 802.1X-2010 §11.3
 * for the EAPOL header).
 *
 *   PMK = L(MSK, 0, 256)                                      §12.7.1.3
 *   PTK = PRF-Length(PMK, "Pairwise key expansion",
 *                    Min(AA,SPA) || Max(AA,SPA) ||
 *                    Min(ANonce,SNonce) || Max(ANonce,SNonce))
 *         PRF = the HMAC-SHA-1 PRF of §12.7.1.2 for AKM 1 and 2,
 *               KDF-SHA-256 of §12.7.1.7.2 for AKM 5, 6 and 8 (SAE)
 *   KCK = L(PTK, 0, 128), KEK = L(PTK, 128, 128), TK = the rest:
 *         128 bits for CCMP-128 / GCMP-128, 256 for CCMP-256 / GCMP-256
 *   EAPOL-Key MIC over the whole EAPOL PDU with the MIC field zeroed:
 *         HMAC-SHA1-128 (descriptor version 2: AKM 1/2),
 *         AES-128-CMAC (version 3: AKM 5/6; version 0: SAE, AKM 8)
 *
 * Descriptor version 1 (HMAC-MD5, TKIP) is not offered: TKIP is
 * deprecated (§12.1) and a TWAG protects with CCMP/GCMP only.
 *
 * No allocation, no I/O. Key outputs are valid only on TW_OK and are
 * zeroed on failure; callers wipe them with tw_wlan_ptk_wipe().
 */
#ifndef TWAG_WLAN_KEYS_H
#define TWAG_WLAN_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_WLAN_ADDR_LEN = 6,
	TW_WLAN_NONCE_LEN = 32,
	TW_WLAN_PMK_LEN = 32,     /* PMK_bits = 256 for the AKMs below */
	TW_WLAN_MSK_MIN_LEN = 64, /* RFC 3748 §7.10: MSK is >= 64 octets */
	TW_WLAN_KCK_LEN = 16,     /* KCK_bits = KEK_bits = 128 (Table 12-11) */
	TW_WLAN_KEK_LEN = 16,
	TW_WLAN_TK_MAX = 32,
	TW_WLAN_PTK_MAX = 16 + 16 + 32,
	TW_WLAN_MIC_LEN = 16,     /* MIC length for these AKMs */
	/* §12.7.1.2: the PRF's block counter i is one octet */
	TW_WLAN_PRF_MAX = 255 * 20,
	/* §12.7.1.7.2: Length is a 16-bit count of bits */
	TW_WLAN_KDF_MAX = 65535 / 8,

	/* AKM suite types, 00-0F-AC:n (§9.4.2.24.3, RSNE AKM suite selectors) */
	TW_WLAN_AKM_8021X = 1,
	TW_WLAN_AKM_PSK = 2,
	TW_WLAN_AKM_8021X_SHA256 = 5,
	TW_WLAN_AKM_PSK_SHA256 = 6,
	TW_WLAN_AKM_SAE = 8,

	/* Cipher suite types, 00-0F-AC:n (§9.4.2.24.2, cipher suite selectors) */
	TW_WLAN_CIPHER_CCMP_128 = 4,
	TW_WLAN_CIPHER_GCMP_128 = 8,
	TW_WLAN_CIPHER_GCMP_256 = 9,
	TW_WLAN_CIPHER_CCMP_256 = 10,

	/* EAPOL (IEEE 802.1X-2010 §11.3): version, type, body length */
	TW_EAPOL_HDR_LEN = 4,
	TW_EAPOL_TYPE_KEY = 3,
	TW_EAPOL_KEY_DESC_RSN = 2,  /* IEEE 802.11 key descriptor type */
	TW_EAPOL_KEY_DESC_WPA = 254,
	/* §12.7.2 Figure 12-32: descriptor type .. Reserved, before the MIC */
	TW_EAPOL_KEY_MIC_OFF = TW_EAPOL_HDR_LEN + 1 + 2 + 2 + 8 + 32 + 16 + 8 + 8,
	TW_EAPOL_KEY_NONCE_OFF = TW_EAPOL_HDR_LEN + 1 + 2 + 2 + 8,
	/* The shortest EAPOL-Key PDU with a 16-octet MIC and no key data */
	TW_EAPOL_KEY_MIN_LEN = TW_EAPOL_KEY_MIC_OFF + 16 + 2,

	/* Key Information bits (§12.7.2 Figure 12-33) */
	TW_EAPOL_KEY_INFO_VERSION = 0x0007,
	TW_EAPOL_KEY_INFO_PAIRWISE = 0x0008,
	TW_EAPOL_KEY_INFO_INSTALL = 0x0040,
	TW_EAPOL_KEY_INFO_ACK = 0x0080,
	TW_EAPOL_KEY_INFO_MIC = 0x0100,
	TW_EAPOL_KEY_INFO_SECURE = 0x0200,
	TW_EAPOL_KEY_INFO_ERROR = 0x0400,
	TW_EAPOL_KEY_INFO_REQUEST = 0x0800,
	TW_EAPOL_KEY_INFO_ENCR_DATA = 0x1000,
	TW_EAPOL_KEY_INFO_SMK = 0x2000,
};

/* A PTK split into its parts; lengths in octets. */
struct tw_wlan_ptk {
	uint8_t kck[TW_WLAN_KCK_LEN];
	uint8_t kek[TW_WLAN_KEK_LEN];
	uint8_t tk[TW_WLAN_TK_MAX];
	uint32_t kck_len, kek_len, tk_len;
	uint32_t akm, cipher;
};

/*
 * A decoded EAPOL-Key frame: views into the caller's buffer, valid while
 * it is. pdu_len = 4 + body length (link-layer padding after it is not
 * part of the frame and not covered by the MIC).
 */
struct tw_eapol_key {
	uint8_t version;       /* 802.1X protocol version, 1..3 */
	uint8_t desc_type;     /* 2: IEEE 802.11 (RSN) */
	uint16_t key_info;
	uint16_t key_len;
	uint64_t replay_counter;
	const uint8_t *nonce;  /* 32 octets */
	const uint8_t *iv;     /* 16 octets */
	const uint8_t *rsc;    /* 8 octets */
	const uint8_t *mic;    /* mic_len octets at offset mic_off */
	size_t mic_len, mic_off;
	const uint8_t *key_data;
	size_t key_data_len;
	size_t pdu_len;
};

/* Whether akm is one of the AKM suites above. */
bool tw_wlan_akm_is_supported(unsigned akm);

/* TK length in octets of a cipher suite (16 or 32), or 0 if unsupported. */
size_t tw_wlan_tk_len(unsigned cipher);

/*
 * §12.7.1.3: PMK = L(MSK, 0, 256), the first 32 octets of the MSK that the
 * AAA server delivers (RADIUS MS-MPPE-Recv-Key, RFC 2548). msk_len must be
 * at least 64 (RFC 3748 §7.10). Returns TW_OK, TW_ERR_LENGTH, TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_wlan_pmk_from_msk(uint8_t pmk[static 32],
				       const uint8_t *msk, size_t msk_len);

/*
 * §12.7.1.2 PRF-Len with HMAC-SHA-1: R = H(K, A, B, 0) || H(K, A, B, 1) ...,
 * H(K, A, B, i) = HMAC-SHA-1(K, A || 0x00 || B || i); out = L(R, 0, 8*len).
 * label is A as text without its terminating NUL. out_len 1..5100.
 */
TW_MUST_CHECK int tw_wlan_prf_sha1(uint8_t *out, size_t out_len,
				   const uint8_t *key, size_t key_len,
				   const char *label, const uint8_t *data,
				   size_t data_len);

/*
 * §12.7.1.7.2 KDF-SHA-256-Length: result = T_1 || T_2 ...,
 * T_i = HMAC-SHA-256(K, i || label || context || Length), i and Length
 * (= 8 * out_len bits) as 16-bit little-endian integers. out_len 1..8191.
 */
TW_MUST_CHECK int tw_wlan_kdf_sha256(uint8_t *out, size_t out_len,
				     const uint8_t *key, size_t key_len,
				     const char *label, const uint8_t *context,
				     size_t context_len);

/*
 * §12.7.1.3 pairwise key expansion into ptk_len raw octets with the PRF the
 * AKM names (PRF-SHA-1 for AKM 1/2, KDF-SHA-256 for 5/6/8). Exposed so
 * longer PTKs (e.g. with a KDK appended, §12.7.1.7.5) can be derived; most
 * callers want tw_wlan_ptk_derive(). ptk_len 16..TW_WLAN_PRF_MAX.
 * Returns TW_OK, TW_ERR_UNSUPPORTED (AKM), TW_ERR_LENGTH, TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_wlan_ptk_expand(uint8_t *ptk, size_t ptk_len, unsigned akm,
				     const uint8_t pmk[static 32],
				     const uint8_t aa[static 6],
				     const uint8_t spa[static 6],
				     const uint8_t anonce[static 32],
				     const uint8_t snonce[static 32]);

/*
 * §12.7.1.3: derives the PTK of an AKM and pairwise cipher and splits it
 * into KCK (16), KEK (16) and TK (16 or 32). aa is the authenticator's
 * (AP's) MAC address, spa the supplicant's. Returns TW_OK,
 * TW_ERR_UNSUPPORTED for another AKM or cipher, TW_ERR_INVAL for NULLs.
 */
TW_MUST_CHECK int tw_wlan_ptk_derive(struct tw_wlan_ptk *ptk, unsigned akm,
				     unsigned cipher,
				     const uint8_t pmk[static 32],
				     const uint8_t aa[static 6],
				     const uint8_t spa[static 6],
				     const uint8_t anonce[static 32],
				     const uint8_t snonce[static 32]);

/* Wipes a PTK. */
void tw_wlan_ptk_wipe(struct tw_wlan_ptk *ptk);

/*
 * Strict EAPOL-Key decoder (802.1X-2010 §11.3, 802.11-2020 §12.7.2): the
 * packet type is EAPOL-Key, the body length fits in len (bytes after the
 * PDU are link-layer padding and ignored), the descriptor type is 2 (RSN),
 * the body holds the fixed fields with a MIC of mic_len octets (0, 16 or
 * 24), and Key Data Length is exactly the rest of the body. Returns TW_OK,
 * TW_ERR_DECODE (malformed or truncated), TW_ERR_UNSUPPORTED (WPA1
 * descriptor 254), TW_ERR_LENGTH (mic_len), TW_ERR_INVAL (NULLs).
 */
TW_MUST_CHECK int tw_eapol_key_decode(struct tw_eapol_key *key,
				      const uint8_t *frame, size_t len,
				      size_t mic_len);

/*
 * §12.7.2: computes the 16-octet Key MIC of an EAPOL-Key frame as if its MIC
 * field were zero (the frame is not modified), with kck (16 octets) and the
 * algorithm of the AKM. The frame's Key Descriptor Version must be the one
 * the AKM requires (2 for AKM 1/2, 3 for 5/6, 0 for 8). Returns TW_OK,
 * TW_ERR_DECODE (frame, or a version the AKM does not use),
 * TW_ERR_UNSUPPORTED (AKM, or version 1 / HMAC-MD5), TW_ERR_LENGTH (kck),
 * TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_wlan_eapol_mic(uint8_t mic[static 16], unsigned akm,
				    const uint8_t *kck, size_t kck_len,
				    const uint8_t *frame, size_t len);

/* As tw_wlan_eapol_mic(), and writes the MIC into the frame's MIC field
 * (an authenticator or supplicant finishing a message). */
TW_MUST_CHECK int tw_wlan_eapol_mic_set(unsigned akm, const uint8_t *kck,
					size_t kck_len, uint8_t *frame,
					size_t len);

/*
 * Verifies a received EAPOL-Key frame's MIC in constant time. The Key MIC
 * bit must be set (a frame that claims no MIC is not authentic). Returns
 * TW_OK, TW_ERR_AUTH (bad MIC or MIC bit clear), or the errors of
 * tw_wlan_eapol_mic().
 */
TW_MUST_CHECK int tw_wlan_eapol_mic_verify(unsigned akm, const uint8_t *kck,
					   size_t kck_len, const uint8_t *frame,
					   size_t len);

#endif
