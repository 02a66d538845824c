/*
 * Fuzz target: the EAPOL-Key frame decoder (tw_eapol_key_decode) and the
 * Key MIC check built on it (tw_wlan_eapol_mic_verify), IEEE 802.11-2020
 * §12.7.2. Input: one selector octet, then the frame. Selector bits 0-1
 * pick the MIC length (16, 24, 0, 16), bits 2-3 the AKM (2, 5, 8, 6) whose
 * MIC algorithm checks the frame under a fixed KCK (00 01 .. 0f).
 * Invariants: no crash or overread; a decoded frame's views lie inside its
 * PDU and add up to it; a frame that verifies carries the MIC bit and the
 * MIC that tw_wlan_eapol_mic() recomputes; tw_wlan_eapol_mic_set writes
 * that MIC and nothing else, and the frame then verifies exactly when it
 * claims a MIC.
 *
 * The key hierarchy of the same file (§12.7.1), on the input's octets:
 * the PTK of the AKM and cipher the selector's high bits and the frame's
 * first octet pick (check_keys), the PRF-SHA-1 and KDF-SHA-256 of a
 * length and key the input gives (check_prf), and the PMK from an MSK,
 * each against the definition in wlan_keys.h computed here with OpenSSL's
 * HMAC (an independent implementation), with the lengths and suites the
 * header allows and no others.
 */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/wlan_keys.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* HMAC through OpenSSL (the MAC and digest fetched once: a fetch per
 * call would dominate the run). */
static void hmac(bool sha256, const uint8_t *k, size_t klen, const uint8_t *in, size_t n,
		 uint8_t *out)
{
	static EVP_MAC *mac;
	static EVP_MAC_CTX *tmpl[2];
	EVP_MAC_CTX *c;
	size_t outl = 0;

	if (mac == NULL) {
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		for (int i = 0; i < 2 && mac != NULL; i++) {
			OSSL_PARAM p[2] = {
				OSSL_PARAM_construct_utf8_string("digest",
								 i ? "SHA256" : "SHA1", 0),
				OSSL_PARAM_construct_end(),
			};

			tmpl[i] = EVP_MAC_CTX_new(mac);
			if (tmpl[i] == NULL || !EVP_MAC_CTX_set_params(tmpl[i], p))
				abort();
		}
		if (mac == NULL)
			abort();
	}
	c = EVP_MAC_CTX_dup(tmpl[sha256]);
	if (c == NULL || !EVP_MAC_init(c, k, klen, NULL) || !EVP_MAC_update(c, in, n) ||
	    !EVP_MAC_final(c, out, &outl, 32))
		abort();
	EVP_MAC_CTX_free(c);
}

/* §12.7.1.2 PRF with HMAC-SHA-1, restated over OpenSSL's HMAC:
 * H(K, A, B, i) = HMAC-SHA-1(K, A || 0 || B || i), concatenated. */
static void prf_sha1(uint8_t *out, size_t len, const uint8_t *k, size_t klen,
		     const char *label, const uint8_t *b, size_t blen)
{
	uint8_t in[64 + 1 + 256 + 1], h[20];
	size_t al = strlen(label), off = 0;

	memcpy(in, label, al);
	in[al] = 0;
	memcpy(in + al + 1, b, blen);
	for (unsigned i = 0; off < len; i++) {
		in[al + 1 + blen] = (uint8_t)i;
		hmac(false, k, klen, in, al + 2 + blen, h);
		memcpy(out + off, h, len - off < 20 ? len - off : 20);
		off += 20;
	}
}

static void le16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* §12.7.1.7.2 KDF-SHA-256: T_i = HMAC-SHA-256(K, i || label || context ||
 * Length), i and Length (bits) 16-bit little-endian. */
static void kdf_sha256(uint8_t *out, size_t len, const uint8_t *k, size_t klen,
		       const char *label, const uint8_t *c, size_t clen)
{
	uint8_t in[2 + 64 + 256 + 2], h[32];
	size_t al = strlen(label), off = 0;

	memcpy(in + 2, label, al);
	memcpy(in + 2 + al, c, clen);
	le16(in + 2 + al + clen, (unsigned)(8 * len));
	for (unsigned i = 1; off < len; i++) {
		le16(in, i);
		hmac(true, k, klen, in, 4 + al + clen, h);
		memcpy(out + off, h, len - off < 32 ? len - off : 32);
		off += 32;
	}
}

/*
 * The key hierarchy of §12.7.1.3 from the input's octets (PMK, AA, SPA,
 * ANonce, SNonce, taken in turn and repeated as needed), for the AKM and
 * cipher sel picks from short lists that include unsupported ones:
 * accepted exactly for the suites wlan_keys.h lists, equal to the PRF or
 * KDF computed here over Min/Max of the addresses and nonces, the same
 * with the two sides swapped, and split KCK 16 | KEK 16 | TK.
 */
static void check_keys(unsigned sel, const uint8_t *d, size_t n)
{
	static const unsigned akms[8] = { 1, 2, 5, 6, 8, 3, 0, 7 },
			      ciphers[8] = { 4, 8, 9, 10, 2, 0, 4, 10 };
	uint8_t m[32 + 6 + 6 + 32 + 32], ctx[6 + 6 + 32 + 32], want[64];
	const uint8_t *pmk = m, *aa = m + 32, *spa = m + 38, *an = m + 44, *sn = m + 76;
	unsigned akm = akms[sel & 7], cipher = ciphers[(sel >> 3) & 7];
	struct tw_wlan_ptk ptk, ptk2;
	bool ok = akm == 1 || akm == 2 || akm == 5 || akm == 6 || akm == 8;
	size_t tk = cipher == 4 || cipher == 8 ? 16 : cipher == 9 || cipher == 10 ? 32 : 0;
	int rc;

	if (tw_wlan_akm_is_supported(akm) != ok || tw_wlan_tk_len(cipher) != tk)
		abort();
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = n ? d[i % n] : (uint8_t)i;
	/* the frame's MIC under this AKM and a KCK of 16 octets or one
	 * short: only a supported AKM and 16 octets can give one */
	{
		uint8_t mic[16], kck[16] = { 0 };
		size_t kl = sel & 64 ? 15 : 16;

		if (tw_wlan_eapol_mic(mic, akm, kck, kl, d, n) == TW_OK && (!ok || kl != 16))
			abort();
	}
	/* the raw expansion, of a length the input picks */
	{
		static uint8_t raw[TW_WLAN_KDF_MAX + 1], want_raw[TW_WLAN_KDF_MAX + 1];
		size_t max = akm <= 2 ? TW_WLAN_PRF_MAX : TW_WLAN_KDF_MAX;
		size_t len = n > 1 ? (sel & 128 ? (d[1] << 5 | d[0]) % (max + 2) : d[1] % 100) : 0;
		uint8_t c2[6 + 6 + 32 + 32];
		bool lo_a = memcmp(aa, spa, 6) < 0, lo_n = memcmp(an, sn, 32) < 0;

		rc = tw_wlan_ptk_expand(raw, len, akm, pmk, aa, spa, an, sn);
		if ((rc == TW_OK) != (ok && len >= 16 && len <= max))
			abort();
		if (rc == TW_OK) {
			memcpy(c2, lo_a ? aa : spa, 6);
			memcpy(c2 + 6, lo_a ? spa : aa, 6);
			memcpy(c2 + 12, lo_n ? an : sn, 32);
			memcpy(c2 + 44, lo_n ? sn : an, 32);
			if (akm <= 2)
				prf_sha1(want_raw, len, pmk, 32, "Pairwise key expansion", c2,
					 sizeof(c2));
			else
				kdf_sha256(want_raw, len, pmk, 32, "Pairwise key expansion", c2,
					   sizeof(c2));
			if (memcmp(raw, want_raw, len) != 0)
				abort();
		}
	}
	rc = tw_wlan_ptk_derive(&ptk, akm, cipher, pmk, aa, spa, an, sn);
	if ((rc == TW_OK) != (ok && tk != 0))
		abort();
	if (rc != TW_OK)
		return;
	if (tw_wlan_ptk_derive(&ptk2, akm, cipher, pmk, spa, aa, sn, an) != TW_OK ||
	    memcmp(&ptk, &ptk2, sizeof(ptk)) != 0)
		abort();
	bool a_first = memcmp(aa, spa, 6) < 0, n_first = memcmp(an, sn, 32) < 0;
	memcpy(ctx, a_first ? aa : spa, 6);
	memcpy(ctx + 6, a_first ? spa : aa, 6);
	memcpy(ctx + 12, n_first ? an : sn, 32);
	memcpy(ctx + 44, n_first ? sn : an, 32);
	if (akm <= 2)
		prf_sha1(want, 32 + tk, pmk, 32, "Pairwise key expansion", ctx, sizeof(ctx));
	else
		kdf_sha256(want, 32 + tk, pmk, 32, "Pairwise key expansion", ctx, sizeof(ctx));
	if (ptk.kck_len != 16 || ptk.kek_len != 16 || ptk.tk_len != tk || ptk.akm != akm ||
	    ptk.cipher != cipher || memcmp(ptk.kck, want, 16) != 0 ||
	    memcmp(ptk.kek, want + 16, 16) != 0 || memcmp(ptk.tk, want + 32, tk) != 0)
		abort();
	tw_wlan_ptk_wipe(&ptk);
	tw_wlan_ptk_wipe(&ptk2);
}

/* The PRF and KDF themselves, of an output length and key from the input,
 * against the ones above; lengths outside their ranges refused. */
static void check_prf(const uint8_t *d, size_t n)
{
	static uint8_t got[TW_WLAN_KDF_MAX + 64], want[TW_WLAN_KDF_MAX + 64];
	size_t len, klen, klen_kdf;

	if (n < 3)
		return;
	/* the whole length range only when d[2] asks: long outputs are slow */
	len = tw_load_be16(d) % (d[2] & 0x80 ? TW_WLAN_PRF_MAX + 2 : 81);
	klen_kdf = tw_load_be16(d) % (d[2] & 0x80 ? TW_WLAN_KDF_MAX + 2 : 81);
	klen = (d[2] & 0x7f) % 65;
	d += 3;
	n -= 3;
	if (klen > n)
		klen = n;
	if ((tw_wlan_prf_sha1(got, len, d, klen, "fuzz label", d + klen, n - klen > 200 ? 200 : n - klen) ==
	     TW_OK) != (len >= 1 && len <= TW_WLAN_PRF_MAX))
		abort();
	if (len >= 1 && len <= TW_WLAN_PRF_MAX) {
		prf_sha1(want, len, d, klen, "fuzz label", d + klen, n - klen > 200 ? 200 : n - klen);
		if (memcmp(got, want, len) != 0)
			abort();
	}
	len = klen_kdf;
	if ((tw_wlan_kdf_sha256(got, len, d, klen, "fuzz label", d + klen,
				n - klen > 200 ? 200 : n - klen) == TW_OK) !=
	    (len >= 1 && len <= TW_WLAN_KDF_MAX))
		abort();
	if (len >= 1 && len <= TW_WLAN_KDF_MAX) {
		kdf_sha256(want, len, d, klen, "fuzz label", d + klen, n - klen > 200 ? 200 : n - klen);
		if (memcmp(got, want, len) != 0)
			abort();
	}
	/* PMK = L(MSK, 0, 256), an MSK of at least 64 octets */
	if ((tw_wlan_pmk_from_msk(got, d, n) == TW_OK) != (n >= TW_WLAN_MSK_MIN_LEN) ||
	    (n >= TW_WLAN_MSK_MIN_LEN && memcmp(got, d, 32) != 0))
		abort();
}

/* NULL where a call takes a pointer, without the compiler seeing it */
static void *volatile nul;

/* The argument contract of wlan_keys.h, once: NULL pointers (not the
 * [static N] arrays, where NULL is undefined) are TW_ERR_INVAL, a MIC
 * length outside Table 12-11 TW_ERR_LENGTH, a PMK from no MSK zero. */
static void check_contract(void)
{
	static const uint8_t z[64];
	uint8_t out[64], pmk[32], frame[128] = { 2, 3, 0, 95 };
	const uint8_t *np = nul;
	struct tw_wlan_ptk ptk;
	struct tw_eapol_key k;

	memset(pmk, 1, sizeof(pmk));
	if (tw_wlan_pmk_from_msk(pmk, np, 64) != TW_ERR_INVAL || memcmp(pmk, z, 32) != 0)
		abort();
	if (tw_wlan_prf_sha1(nul, 16, z, 16, "l", z, 4) != TW_ERR_INVAL ||
	    tw_wlan_prf_sha1(out, 16, z, 16, nul, z, 4) != TW_ERR_INVAL ||
	    tw_wlan_prf_sha1(out, 16, np, 16, "l", z, 4) != TW_ERR_INVAL ||
	    tw_wlan_prf_sha1(out, 16, z, 16, "l", np, 4) != TW_ERR_INVAL ||
	    tw_wlan_prf_sha1(out, 16, np, 0, "l", np, 0) != TW_OK ||
	    tw_wlan_kdf_sha256(nul, 16, z, 16, "l", z, 4) != TW_ERR_INVAL ||
	    tw_wlan_kdf_sha256(out, 16, z, 16, nul, z, 4) != TW_ERR_INVAL ||
	    tw_wlan_kdf_sha256(out, 16, np, 16, "l", z, 4) != TW_ERR_INVAL ||
	    tw_wlan_kdf_sha256(out, 16, z, 16, "l", np, 4) != TW_ERR_INVAL ||
	    tw_wlan_kdf_sha256(out, 16, np, 0, "l", np, 0) != TW_OK)
		abort();
	if (tw_wlan_ptk_expand(nul, 48, TW_WLAN_AKM_8021X, z, z, z, z, z) != TW_ERR_INVAL ||
	    tw_wlan_ptk_derive(nul, TW_WLAN_AKM_8021X, TW_WLAN_CIPHER_CCMP_128, z, z, z, z, z) !=
		    TW_ERR_INVAL)
		abort();
	(void)ptk;
	if (tw_eapol_key_decode(nul, frame, sizeof(frame), 16) != TW_ERR_INVAL ||
	    tw_eapol_key_decode(&k, np, 10, 16) != TW_ERR_INVAL ||
	    tw_eapol_key_decode(&k, frame, sizeof(frame), 8) != TW_ERR_LENGTH ||
	    tw_eapol_key_decode(&k, frame, sizeof(frame), 32) != TW_ERR_LENGTH)
		abort();
	if (tw_wlan_eapol_mic(out, TW_WLAN_AKM_8021X, np, 16, frame, sizeof(frame)) !=
		    TW_ERR_INVAL ||
	    tw_wlan_eapol_mic(out, TW_WLAN_AKM_8021X, z, 16, np, sizeof(frame)) != TW_ERR_INVAL ||
	    tw_wlan_eapol_mic_set(TW_WLAN_AKM_8021X, np, 16, frame, sizeof(frame)) !=
		    TW_ERR_INVAL ||
	    tw_wlan_eapol_mic_verify(TW_WLAN_AKM_8021X, z, 16, np, sizeof(frame)) == TW_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const size_t mic_lens[4] = { 16, 24, 0, 16 };
	static const unsigned akms[4] = { 2, 5, 8, 6 };
	uint8_t kck[16], mic[16];
	struct tw_eapol_key k;
	static bool contract_done;

	if (!contract_done) {
		check_contract();
		contract_done = true;
	}
	if (size < 1)
		return 0;
	size_t mic_len = mic_lens[data[0] & 3];
	unsigned akm = akms[(data[0] >> 2) & 3];
	const uint8_t *frame = data + 1;
	size_t len = size - 1;

	if (tw_eapol_key_decode(&k, frame, len, mic_len) == TW_OK) {
		if (k.pdu_len > len || k.pdu_len < TW_EAPOL_KEY_MIC_OFF + mic_len + 2 ||
		    k.mic != frame + TW_EAPOL_KEY_MIC_OFF || k.mic_len != mic_len ||
		    k.key_data != frame + TW_EAPOL_KEY_MIC_OFF + mic_len + 2 ||
		    k.key_data + k.key_data_len != frame + k.pdu_len ||
		    k.nonce != frame + TW_EAPOL_KEY_NONCE_OFF ||
		    k.key_info != tw_load_be16(frame + 5) || frame[1] != TW_EAPOL_TYPE_KEY ||
		    k.desc_type != TW_EAPOL_KEY_DESC_RSN)
			abort();
	}
	for (int i = 0; i < 16; i++)
		kck[i] = (uint8_t)i;
	if (tw_wlan_eapol_mic_verify(akm, kck, 16, frame, len) == TW_OK) {
		if (tw_wlan_eapol_mic(mic, akm, kck, 16, frame, len) != TW_OK ||
		    memcmp(mic, frame + TW_EAPOL_KEY_MIC_OFF, 16) != 0 ||
		    (tw_load_be16(frame + 5) & TW_EAPOL_KEY_INFO_MIC) == 0)
			abort();
	}
	/* a MIC written into the frame: that MIC there, nothing else moved,
	 * and it verifies exactly when the frame claims a MIC */
	if (tw_wlan_eapol_mic(mic, akm, kck, 16, frame, len) == TW_OK) {
		static uint8_t copy[65536];

		if (len > sizeof(copy))
			return 0;
		memcpy(copy, frame, len);
		if (tw_wlan_eapol_mic_set(akm, kck, 16, copy, len) != TW_OK ||
		    memcmp(copy + TW_EAPOL_KEY_MIC_OFF, mic, 16) != 0 ||
		    memcmp(copy, frame, TW_EAPOL_KEY_MIC_OFF) != 0 ||
		    memcmp(copy + TW_EAPOL_KEY_MIC_OFF + 16, frame + TW_EAPOL_KEY_MIC_OFF + 16,
			   len - TW_EAPOL_KEY_MIC_OFF - 16) != 0)
			abort();
		if ((tw_wlan_eapol_mic_verify(akm, kck, 16, copy, len) == TW_OK) !=
		    ((tw_load_be16(copy + 5) & TW_EAPOL_KEY_INFO_MIC) != 0))
			abort();
	}
	check_keys(data[0] >> 4 | (len ? (unsigned)frame[0] << 4 : 0), frame, len);
	check_prf(frame, len);
	return 0;
}
