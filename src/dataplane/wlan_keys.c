/*
 * twag — IEEE 802.11 pairwise key hierarchy (PMK, PTK: KCK/KEK/TK) and
 * EAPOL-Key MICs, IEEE Std 802.11-2020 §12.7.1-§12.7.2 (EAPOL header:
 * IEEE Std 802.1X-2010 §11.3).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/cmac.h"
#include "twag/hmac.h"
#include "twag/wlan_keys.h"

static const char ptk_label[] = "Pairwise key expansion";

bool tw_wlan_akm_is_supported(unsigned akm)
{
	return akm == TW_WLAN_AKM_8021X || akm == TW_WLAN_AKM_PSK ||
	       akm == TW_WLAN_AKM_8021X_SHA256 ||
	       akm == TW_WLAN_AKM_PSK_SHA256 || akm == TW_WLAN_AKM_SAE;
}

/* §12.7.1.3: AKMs 1 and 2 use the HMAC-SHA-1 PRF; the SHA-256 AKMs (5, 6)
 * and SAE (8) use KDF-SHA-256 (§12.7.1.7.2). */
static bool akm_uses_sha256(unsigned akm)
{
	return akm == TW_WLAN_AKM_8021X_SHA256 ||
	       akm == TW_WLAN_AKM_PSK_SHA256 || akm == TW_WLAN_AKM_SAE;
}

size_t tw_wlan_tk_len(unsigned cipher)
{
	/* §12.7.1.3 / cipher suite key lengths: 128-bit TK for CCMP-128 and
	 * GCMP-128, 256-bit for CCMP-256 and GCMP-256. */
	switch (cipher) {
	case TW_WLAN_CIPHER_CCMP_128:
	case TW_WLAN_CIPHER_GCMP_128:
		return 16;
	case TW_WLAN_CIPHER_CCMP_256:
	case TW_WLAN_CIPHER_GCMP_256:
		return 32;
	default:
		return 0;
	}
}

int tw_wlan_pmk_from_msk(uint8_t pmk[static 32], const uint8_t *msk,
			 size_t msk_len)
{
	if (msk == NULL) {
		memset(pmk, 0, TW_WLAN_PMK_LEN);
		return TW_ERR_INVAL;
	}
	if (msk_len < TW_WLAN_MSK_MIN_LEN) {
		memset(pmk, 0, TW_WLAN_PMK_LEN);
		return TW_ERR_LENGTH;
	}
	/* §12.7.1.3: PMK = L(MSK, 0, PMK_bits), PMK_bits = 256 */
	memcpy(pmk, msk, TW_WLAN_PMK_LEN);
	return TW_OK;
}

int tw_wlan_prf_sha1(uint8_t *out, size_t out_len, const uint8_t *key,
		     size_t key_len, const char *label, const uint8_t *data,
		     size_t data_len)
{
	struct tw_hmac_sha1_ctx prefix, blk;
	uint8_t h[20];
	static const uint8_t y = 0;
	int err;

	if (out == NULL || label == NULL || (key == NULL && key_len != 0) ||
	    (data == NULL && data_len != 0))
		return TW_ERR_INVAL;
	if (out_len == 0 || out_len > TW_WLAN_PRF_MAX) {
		memset(out, 0, out_len > TW_WLAN_PRF_MAX ? 0 : out_len);
		return TW_ERR_LENGTH;
	}
	/* §12.7.1.2: H-SHA-1(K, A, B, X) = HMAC-SHA-1(K, A || Y || B || X),
	 * Y a single zero octet, X the block counter i = 0, 1, ... The
	 * common prefix A || Y || B is absorbed once and the keyed state
	 * forked per block. */
	tw_hmac_sha1_init(&prefix, key, key_len);
	tw_hmac_sha1_update(&prefix, label, strlen(label));
	tw_hmac_sha1_update(&prefix, &y, 1);
	tw_hmac_sha1_update(&prefix, data, data_len);
	for (size_t i = 0, off = 0; off < out_len; i++, off += 20) {
		uint8_t x = (uint8_t)i;
		size_t n = out_len - off < 20 ? out_len - off : 20;

		blk = prefix;
		tw_hmac_sha1_update(&blk, &x, 1);
		tw_hmac_sha1_final(&blk, h);
		/* R = R || H(...); the result is L(R, 0, Len) */
		memcpy(out + off, h, n);
	}
	err = TW_OK;
	tw_hmac_sha1_wipe(&prefix);
	tw_hmac_sha1_wipe(&blk);
	tw_wipe(h, sizeof(h));
	return err;
}

int tw_wlan_kdf_sha256(uint8_t *out, size_t out_len, const uint8_t *key,
		       size_t key_len, const char *label,
		       const uint8_t *context, size_t context_len)
{
	struct tw_hmac_sha256_ctx keyed;
	uint8_t h[32], le[2];
	size_t label_len;

	if (out == NULL || label == NULL || (key == NULL && key_len != 0) ||
	    (context == NULL && context_len != 0))
		return TW_ERR_INVAL;
	if (out_len == 0 || out_len > TW_WLAN_KDF_MAX) {
		memset(out, 0, out_len > TW_WLAN_KDF_MAX ? 0 : out_len);
		return TW_ERR_LENGTH;
	}
	label_len = strlen(label);
	tw_hmac_sha256_init(&keyed, key, key_len);
	/* §12.7.1.7.2: for i = 1 .. ceil(Length / 256):
	 *   result = result || HMAC-SHA-256(K, i || label || Context || Length)
	 * with i and Length (in bits) as 16-bit little-endian integers. */
	for (size_t i = 1, off = 0; off < out_len; i++, off += 32) {
		size_t n = out_len - off < 32 ? out_len - off : 32;

		le[0] = (uint8_t)i;
		le[1] = (uint8_t)(i >> 8);
		tw_hmac_sha256_update(&keyed, le, 2);
		tw_hmac_sha256_update(&keyed, label, label_len);
		tw_hmac_sha256_update(&keyed, context, context_len);
		le[0] = (uint8_t)(out_len * 8);
		le[1] = (uint8_t)((out_len * 8) >> 8);
		tw_hmac_sha256_update(&keyed, le, 2);
		tw_hmac_sha256_final(&keyed, h);
		memcpy(out + off, h, n);
	}
	tw_hmac_sha256_wipe(&keyed);
	tw_wipe(h, sizeof(h));
	return TW_OK;
}

int tw_wlan_ptk_expand(uint8_t *ptk, size_t ptk_len, unsigned akm,
		       const uint8_t pmk[static 32], const uint8_t aa[static 6],
		       const uint8_t spa[static 6],
		       const uint8_t anonce[static 32],
		       const uint8_t snonce[static 32])
{
	uint8_t data[2 * TW_WLAN_ADDR_LEN + 2 * TW_WLAN_NONCE_LEN];
	int err;

	if (ptk == NULL || pmk == NULL || aa == NULL || spa == NULL ||
	    anonce == NULL || snonce == NULL)
		return TW_ERR_INVAL;
	if (!tw_wlan_akm_is_supported(akm)) {
		err = TW_ERR_UNSUPPORTED;
		goto fail;
	}
	if (ptk_len < 16 ||
	    ptk_len > (akm_uses_sha256(akm) ? TW_WLAN_KDF_MAX : TW_WLAN_PRF_MAX)) {
		err = TW_ERR_LENGTH;
		goto fail;
	}
	/* §12.7.1.3: Min(AA,SPA) || Max(AA,SPA) || Min(ANonce,SNonce) ||
	 * Max(ANonce,SNonce), comparing as unsigned big-endian integers.
	 * Addresses and nonces are public (sent in clear), so memcmp's
	 * early exit leaks nothing. */
	bool a_first = memcmp(aa, spa, TW_WLAN_ADDR_LEN) < 0;
	bool an_first = memcmp(anonce, snonce, TW_WLAN_NONCE_LEN) < 0;

	memcpy(data, a_first ? aa : spa, TW_WLAN_ADDR_LEN);
	memcpy(data + 6, a_first ? spa : aa, TW_WLAN_ADDR_LEN);
	memcpy(data + 12, an_first ? anonce : snonce, TW_WLAN_NONCE_LEN);
	memcpy(data + 44, an_first ? snonce : anonce, TW_WLAN_NONCE_LEN);
	if (akm_uses_sha256(akm))
		err = tw_wlan_kdf_sha256(ptk, ptk_len, pmk, TW_WLAN_PMK_LEN,
					 ptk_label, data, sizeof(data));
	else
		err = tw_wlan_prf_sha1(ptk, ptk_len, pmk, TW_WLAN_PMK_LEN,
				       ptk_label, data, sizeof(data));
	if (err == TW_OK)
		return TW_OK;
fail:
	memset(ptk, 0, ptk_len <= TW_WLAN_PRF_MAX ? ptk_len : 0);
	return err;
}

int tw_wlan_ptk_derive(struct tw_wlan_ptk *ptk, unsigned akm, unsigned cipher,
		       const uint8_t pmk[static 32], const uint8_t aa[static 6],
		       const uint8_t spa[static 6],
		       const uint8_t anonce[static 32],
		       const uint8_t snonce[static 32])
{
	uint8_t raw[TW_WLAN_PTK_MAX];
	size_t tk_len = tw_wlan_tk_len(cipher);
	int err;

	if (ptk == NULL)
		return TW_ERR_INVAL;
	memset(ptk, 0, sizeof(*ptk));
	if (tk_len == 0 || !tw_wlan_akm_is_supported(akm)) {
		err = TW_ERR_UNSUPPORTED;
		goto out;
	}
	/* PTK length = KCK_bits + KEK_bits + TK_bits: 384 or 512 bits */
	err = tw_wlan_ptk_expand(raw, TW_WLAN_KCK_LEN + TW_WLAN_KEK_LEN + tk_len,
				 akm, pmk, aa, spa, anonce, snonce);
	if (err != TW_OK)
		goto out;
	/* KCK = L(PTK, 0, KCK_bits); KEK = L(PTK, KCK_bits, KEK_bits);
	 * TK = L(PTK, KCK_bits + KEK_bits, TK_bits) */
	memcpy(ptk->kck, raw, TW_WLAN_KCK_LEN);
	memcpy(ptk->kek, raw + TW_WLAN_KCK_LEN, TW_WLAN_KEK_LEN);
	memcpy(ptk->tk, raw + TW_WLAN_KCK_LEN + TW_WLAN_KEK_LEN, tk_len);
	ptk->kck_len = TW_WLAN_KCK_LEN;
	ptk->kek_len = TW_WLAN_KEK_LEN;
	ptk->tk_len = (uint32_t)tk_len;
	ptk->akm = akm;
	ptk->cipher = cipher;
out:
	if (err != TW_OK)
		tw_wipe(ptk, sizeof(*ptk));
	tw_wipe(raw, sizeof(raw));
	return err;
}

void tw_wlan_ptk_wipe(struct tw_wlan_ptk *ptk)
{
	tw_wipe(ptk, sizeof(*ptk));
}

int tw_eapol_key_decode(struct tw_eapol_key *key, const uint8_t *frame,
			size_t len, size_t mic_len)
{
	size_t body_len, fixed, kd_off;

	if (key == NULL || (frame == NULL && len != 0))
		return TW_ERR_INVAL;
	memset(key, 0, sizeof(*key));
	/* MIC lengths of Table 12-11: 0 (FILS), 16, 24 (SHA-384 suites) */
	if (mic_len != 0 && mic_len != 16 && mic_len != 24)
		return TW_ERR_LENGTH;
	/* 802.1X-2010 §11.3: Protocol Version, Packet Type, Body Length */
	if (len < TW_EAPOL_HDR_LEN)
		return TW_ERR_DECODE;
	if (frame[0] < 1 || frame[0] > 3 || frame[1] != TW_EAPOL_TYPE_KEY)
		return TW_ERR_DECODE;
	body_len = tw_load_be16(frame + 2);
	if (body_len > len - TW_EAPOL_HDR_LEN)
		return TW_ERR_DECODE;
	/* §12.7.2 Figure 12-32: Descriptor Type (1), Key Information (2),
	 * Key Length (2), Key Replay Counter (8), Key Nonce (32), EAPOL-Key
	 * IV (16), Key RSC (8), Reserved (8), Key MIC (mic_len), Key Data
	 * Length (2), Key Data. The length is checked before subtracting. */
	fixed = (TW_EAPOL_KEY_MIC_OFF - TW_EAPOL_HDR_LEN) + mic_len + 2;
	if (body_len < 1)
		return TW_ERR_DECODE;
	if (frame[4] == TW_EAPOL_KEY_DESC_WPA)
		return TW_ERR_UNSUPPORTED;
	if (frame[4] != TW_EAPOL_KEY_DESC_RSN || body_len < fixed)
		return TW_ERR_DECODE;
	kd_off = TW_EAPOL_KEY_MIC_OFF + mic_len;
	key->key_data_len = tw_load_be16(frame + kd_off);
	/* Key Data must fill the rest of the body exactly: a shorter value
	 * would leave unauthenticated-looking trailing octets whose meaning
	 * differs between implementations, a longer one overruns. */
	if (key->key_data_len != body_len - fixed) {
		memset(key, 0, sizeof(*key));
		return TW_ERR_DECODE;
	}
	key->version = frame[0];
	key->desc_type = frame[4];
	key->key_info = tw_load_be16(frame + 5);
	key->key_len = tw_load_be16(frame + 7);
	key->replay_counter = tw_load_be64(frame + 9);
	key->nonce = frame + TW_EAPOL_KEY_NONCE_OFF;
	key->iv = key->nonce + 32;
	key->rsc = key->iv + 16;
	key->mic_off = TW_EAPOL_KEY_MIC_OFF;
	key->mic_len = mic_len;
	key->mic = frame + TW_EAPOL_KEY_MIC_OFF;
	key->key_data = frame + kd_off + 2;
	key->pdu_len = TW_EAPOL_HDR_LEN + body_len;
	return TW_OK;
}

/* §12.7.2 b.1 Key Descriptor Version, and the MIC algorithm of Table 12-11:
 * AKM 1/2 with a CCMP/GCMP pairwise cipher use version 2 (HMAC-SHA1-128);
 * AKM 5/6 version 3 (AES-128-CMAC); AKMs with version 0 (SAE) take the
 * algorithm from the AKM (AES-128-CMAC for SAE). */
static int mic_version(unsigned akm)
{
	switch (akm) {
	case TW_WLAN_AKM_8021X:
	case TW_WLAN_AKM_PSK:
		return 2;
	case TW_WLAN_AKM_8021X_SHA256:
	case TW_WLAN_AKM_PSK_SHA256:
		return 3;
	case TW_WLAN_AKM_SAE:
		return 0;
	default:
		return -1;
	}
}

int tw_wlan_eapol_mic(uint8_t mic[static 16], unsigned akm, const uint8_t *kck,
		      size_t kck_len, const uint8_t *frame, size_t len)
{
	static const uint8_t zero_mic[TW_WLAN_MIC_LEN];
	struct tw_eapol_key key;
	union {
		struct tw_hmac_sha1_ctx sha1;
		struct tw_cmac_ctx cmac;
	} u;
	uint8_t h[20];
	int want = mic_version(akm), ver, err;

	memset(mic, 0, TW_WLAN_MIC_LEN);
	if (kck == NULL || frame == NULL)
		return TW_ERR_INVAL;
	if (want < 0)
		return TW_ERR_UNSUPPORTED;
	if (kck_len != TW_WLAN_KCK_LEN)
		return TW_ERR_LENGTH;
	err = tw_eapol_key_decode(&key, frame, len, TW_WLAN_MIC_LEN);
	if (err != TW_OK)
		return err;
	ver = key.key_info & TW_EAPOL_KEY_INFO_VERSION;
	/* Version 1 is HMAC-MD5 with TKIP (not offered); any other mismatch
	 * between the frame and the negotiated AKM is a malformed frame. */
	if (ver == 1 && want == 2)
		return TW_ERR_UNSUPPORTED;
	if (ver != want)
		return TW_ERR_DECODE;
	/* §12.7.2 Key MIC: computed over the whole EAPOL PDU, from the
	 * protocol version field on, with the Key MIC field set to zero. */
	const uint8_t *tail = frame + key.mic_off + TW_WLAN_MIC_LEN;
	size_t tail_len = key.pdu_len - key.mic_off - TW_WLAN_MIC_LEN;

	if (want == 2) {
		/* HMAC-SHA1-128: the first 128 bits of HMAC-SHA-1(KCK, PDU) */
		tw_hmac_sha1_init(&u.sha1, kck, kck_len);
		tw_hmac_sha1_update(&u.sha1, frame, key.mic_off);
		tw_hmac_sha1_update(&u.sha1, zero_mic, TW_WLAN_MIC_LEN);
		tw_hmac_sha1_update(&u.sha1, tail, tail_len);
		tw_hmac_sha1_final(&u.sha1, h);
		memcpy(mic, h, TW_WLAN_MIC_LEN);
		tw_hmac_sha1_wipe(&u.sha1);
	} else {
		/* AES-128-CMAC(KCK, PDU), RFC 4493 */
		err = tw_cmac_init(&u.cmac, kck, kck_len);
		if (err != TW_OK)
			goto out;
		tw_cmac_update(&u.cmac, frame, key.mic_off);
		tw_cmac_update(&u.cmac, zero_mic, TW_WLAN_MIC_LEN);
		tw_cmac_update(&u.cmac, tail, tail_len);
		tw_cmac_final(&u.cmac, mic);
	}
	err = TW_OK;
out:
	tw_wipe(&u, sizeof(u));
	tw_wipe(h, sizeof(h));
	return err;
}

int tw_wlan_eapol_mic_set(unsigned akm, const uint8_t *kck, size_t kck_len,
			  uint8_t *frame, size_t len)
{
	uint8_t mic[TW_WLAN_MIC_LEN];
	int err = tw_wlan_eapol_mic(mic, akm, kck, kck_len, frame, len);

	if (err == TW_OK)
		memcpy(frame + TW_EAPOL_KEY_MIC_OFF, mic, TW_WLAN_MIC_LEN);
	tw_wipe(mic, sizeof(mic));
	return err;
}

int tw_wlan_eapol_mic_verify(unsigned akm, const uint8_t *kck, size_t kck_len,
			     const uint8_t *frame, size_t len)
{
	uint8_t mic[TW_WLAN_MIC_LEN];
	int err = tw_wlan_eapol_mic(mic, akm, kck, kck_len, frame, len);

	if (err != TW_OK)
		goto out;
	/* The decode inside tw_wlan_eapol_mic() proved the MIC field lies in
	 * the frame. Compare in constant time; a frame with the Key MIC bit
	 * clear carries no MIC and is never accepted as authentic. */
	bool ok = tw_ct_eq(mic, frame + TW_EAPOL_KEY_MIC_OFF, TW_WLAN_MIC_LEN);
	bool has_mic = (tw_load_be16(frame + 5) & TW_EAPOL_KEY_INFO_MIC) != 0;

	err = ok && has_mic ? TW_OK : TW_ERR_AUTH;
out:
	tw_wipe(mic, sizeof(mic));
	return err;
}
