/*
 * Tests of the IEEE 802.11 key hierarchy and EAPOL-Key MICs:
 *   - vectors (wlan_keys.vec): 802.11 Annex J.3 PRF, J.7 PTK (CCMP and a
 *     512-bit PTK), J.13 KDF-SHA-256 PTK with KDK, aircrack-ng's PTK/MIC
 *     and a real captured 4-way message 2 whose on-air MIC must verify
 *     from the passphrase; on every SHA/AES implementation;
 *   - properties: AA/SPA and ANonce/SNonce order does not matter, AKMs
 *     sharing a PRF agree, PRF output prefixes agree;
 *   - OpenSSL cross-checks on random inputs: PRF-SHA1 and KDF-SHA-256 built
 *     from HMAC(), PTKs of every AKM x cipher, EAPOL MICs (HMAC-SHA1-128 and
 *     EVP_MAC CMAC) over random frames;
 *   - bad input: every bit flip of an authentic frame is rejected, every
 *     truncation, bad lengths and types, version/AKM mismatches, a cleared
 *     MIC bit, a wrong KCK, unsupported AKMs and ciphers, short MSKs.
 */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/wlan_keys.h"

static uint32_t impl_mask[2];
static int n_impl;

static const unsigned akms[] = { 1, 2, 5, 6, 8 };
static const unsigned ciphers[] = { 4, 8, 9, 10 };
#define N_AKMS (sizeof(akms) / sizeof(akms[0]))
#define N_CIPHERS (sizeof(ciphers) / sizeof(ciphers[0]))


static int mic_version(unsigned akm)
{
	return akm <= 2 ? 2 : akm == 8 ? 0 : 3;
}

/* ---- independent references on OpenSSL HMAC() / EVP_MAC ---- */

static void ref_prf_sha1(uint8_t *out, size_t len, const uint8_t *k, size_t kl,
			 const char *label, const uint8_t *b, size_t bl)
{
	uint8_t msg[600], h[20];
	size_t al = strlen(label);
	unsigned hl;

	memcpy(msg, label, al);
	msg[al] = 0;
	memcpy(msg + al + 1, b, bl);
	for (size_t i = 0, off = 0; off < len; i++, off += 20) {
		msg[al + 1 + bl] = (uint8_t)i;
		HMAC(EVP_sha1(), k, (int)kl, msg, al + bl + 2, h, &hl);
		memcpy(out + off, h, len - off < 20 ? len - off : 20);
	}
}

static void ref_kdf_sha256(uint8_t *out, size_t len, const uint8_t *k, size_t kl,
			   const char *label, const uint8_t *ctx, size_t cl)
{
	uint8_t msg[600], h[32];
	size_t al = strlen(label);
	unsigned hl;

	memcpy(msg + 2, label, al);
	memcpy(msg + 2 + al, ctx, cl);
	msg[2 + al + cl] = (uint8_t)(len * 8);
	msg[3 + al + cl] = (uint8_t)((len * 8) >> 8);
	for (size_t i = 1, off = 0; off < len; i++, off += 32) {
		msg[0] = (uint8_t)i;
		msg[1] = (uint8_t)(i >> 8);
		HMAC(EVP_sha256(), k, (int)kl, msg, al + cl + 4, h, &hl);
		memcpy(out + off, h, len - off < 32 ? len - off : 32);
	}
}

static void ref_ptk(uint8_t *out, size_t len, unsigned akm, const uint8_t *pmk,
		    const uint8_t *aa, const uint8_t *spa, const uint8_t *an,
		    const uint8_t *sn)
{
	uint8_t b[76];
	int c1 = memcmp(aa, spa, 6) < 0, c2 = memcmp(an, sn, 32) < 0;

	memcpy(b, c1 ? aa : spa, 6);
	memcpy(b + 6, c1 ? spa : aa, 6);
	memcpy(b + 12, c2 ? an : sn, 32);
	memcpy(b + 44, c2 ? sn : an, 32);
	if (akm <= 2)
		ref_prf_sha1(out, len, pmk, 32, "Pairwise key expansion", b, 76);
	else
		ref_kdf_sha256(out, len, pmk, 32, "Pairwise key expansion", b, 76);
}

static int ref_cmac(uint8_t out[16], const uint8_t key[16], const uint8_t *msg,
		    size_t len)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *x = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2];
	size_t ol = 0;
	int rc = -1;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						     (char *)"AES-128-CBC", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (x != NULL && EVP_MAC_init(x, key, 16, params) == 1 &&
	    EVP_MAC_update(x, msg, len) == 1 &&
	    EVP_MAC_final(x, out, &ol, 16) == 1 && ol == 16)
		rc = 0;
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(mac);
	return rc;
}

/* MIC of the PDU with its MIC field zeroed, the ordinary way. */
static int ref_mic(uint8_t mic[16], unsigned akm, const uint8_t kck[16],
		   const uint8_t *frame, size_t pdu_len)
{
	uint8_t copy[1024], h[20];
	unsigned hl;

	memcpy(copy, frame, pdu_len);
	memset(copy + TW_EAPOL_KEY_MIC_OFF, 0, 16);
	if (mic_version(akm) == 2) {
		HMAC(EVP_sha1(), kck, 16, copy, pdu_len, h, &hl);
		memcpy(mic, h, 16);
		return 0;
	}
	return ref_cmac(mic, kck, copy, pdu_len);
}

/* A random well-formed EAPOL-Key frame (random nonce, RSC, MIC, key data)
 * with the given Key Information and mic_len; returns its length. */
static size_t make_frame(uint8_t *f, uint16_t key_info, size_t kd_len,
			 size_t mic_len)
{
	size_t body = 77 + mic_len + 2 + kd_len;

	tw_test_random(f, 4 + body);
	f[0] = 2;
	f[1] = TW_EAPOL_TYPE_KEY;
	tw_store_be16(f + 2, (uint16_t)body);
	f[4] = TW_EAPOL_KEY_DESC_RSN;
	tw_store_be16(f + 5, key_info);
	tw_store_be16(f + 7, 16);
	tw_store_be16(f + TW_EAPOL_KEY_MIC_OFF + mic_len, (uint16_t)kd_len);
	return 4 + body;
}

/* ---- vectors ---- */

static void run_vector(const struct tv_case *c)
{
	const char *type = tv_str(c, "type");
	uint8_t pmk[32], aa[6], spa[6], an[32], sn[32], exp[128], got[128];
	struct tw_wlan_ptk ptk;

	if (type == NULL)
		return;
	if (strcmp(type, "prf-sha1") == 0) {
		uint8_t key[64], data[128];
		size_t kl = tv_bytes(c, "key", key, sizeof(key));
		size_t dl = tv_bytes(c, "data", data, sizeof(data));
		size_t ol = tv_hex(c, "out", exp, sizeof(exp));
		const char *label = tv_str(c, "label");

		for (int m = 0; m < n_impl; m++) {
			tw_cpu_restrict(impl_mask[m]);
			CHECK_OK(tw_wlan_prf_sha1(got, ol, key, kl, label, data, dl));
			TV_EXPECT(c, "out", got, ol);
			/* PRF-n output is L(R, 0, n): every prefix agrees. */
			static const size_t lens[] = { 1, 16, 20, 21, 40, 48 };
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				memset(got, 0, sizeof(got));
				CHECK_OK(tw_wlan_prf_sha1(got, lens[i], key, kl, label, data, dl));
				CHECK_MEM(got, exp, lens[i]);
				CHECK(got[lens[i]] == 0);
			}
		}
		return;
	}
	tv_hex(c, "aa", aa, 6);
	tv_hex(c, "spa", spa, 6);
	tv_hex(c, "anonce", an, 32);
	tv_hex(c, "snonce", sn, 32);
	unsigned akm = (unsigned)tv_int(c, "akm", 0);
	/* AKMs that share a PRF must agree: 1 ~ 2 (PRF-SHA1), 5 ~ 6 ~ 8
	 * (KDF-SHA-256). */
	unsigned sibling = akm == 1 ? 2 : akm == 2 ? 1 : akm == 8 ? 5 : 8;

	if (tv_has(c, "passphrase")) {
		const char *pw = tv_str(c, "passphrase"), *ssid = tv_str(c, "ssid");

		if (!CHECK(PKCS5_PBKDF2_HMAC_SHA1(pw, (int)strlen(pw),
						  (const unsigned char *)ssid,
						  (int)strlen(ssid), 4096, 32, pmk) == 1))
			return;
	} else {
		tv_hex(c, "pmk", pmk, 32);
	}
	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		uint8_t kck[16];

		if (strcmp(type, "ptk") == 0) {
			unsigned cipher = (unsigned)tv_int(c, "cipher", 0);
			size_t tl = tv_hex(c, "tk", exp, sizeof(exp));

			CHECK_OK(tw_wlan_ptk_derive(&ptk, akm, cipher, pmk, aa, spa, an, sn));
			CHECK(ptk.kck_len == 16 && ptk.kek_len == 16 && ptk.tk_len == tl);
			CHECK(ptk.akm == akm && ptk.cipher == cipher);
			TV_EXPECT(c, "kck", ptk.kck, 16);
			TV_EXPECT(c, "kek", ptk.kek, 16);
			TV_EXPECT(c, "tk", ptk.tk, ptk.tk_len);
			/* The supplicant computes it with the roles swapped in
			 * its own terms; Min/Max make the result the same. */
			CHECK_OK(tw_wlan_ptk_derive(&ptk, akm, cipher, pmk, spa, aa, sn, an));
			TV_EXPECT(c, "tk", ptk.tk, ptk.tk_len);
			CHECK_OK(tw_wlan_ptk_derive(&ptk, sibling, cipher, pmk, aa, spa, an, sn));
			TV_EXPECT(c, "kck", ptk.kck, 16);
			TV_EXPECT(c, "tk", ptk.tk, ptk.tk_len);
			/* A one-bit change of any input changes the TK. */
			an[31] ^= 1;
			CHECK_OK(tw_wlan_ptk_derive(&ptk, akm, cipher, pmk, aa, spa, an, sn));
			CHECK(memcmp(ptk.tk, exp, tl) != 0);
			an[31] ^= 1;
			tw_wlan_ptk_wipe(&ptk);
			CHECK(tw_ct_is_zero(&ptk, sizeof(ptk)));
			continue;
		}
		if (strcmp(type, "ptk-raw") == 0) {
			size_t pl = tv_hex(c, "ptk", exp, sizeof(exp));

			CHECK_OK(tw_wlan_ptk_expand(got, pl, akm, pmk, aa, spa, an, sn));
			TV_EXPECT(c, "ptk", got, pl);
			CHECK_OK(tw_wlan_ptk_expand(got, pl, sibling, pmk, spa, aa, sn, an));
			TV_EXPECT(c, "ptk", got, pl);
			/* KDF-SHA-256 binds Length: a shorter PTK is not a
			 * prefix of the longer one (unlike the SHA-1 PRF). */
			CHECK_OK(tw_wlan_ptk_expand(got, 48, akm, pmk, aa, spa, an, sn));
			CHECK(memcmp(got, exp, 16) != 0);
			continue;
		}
		if (strcmp(type, "eapol-mic") != 0) {
			CHECK(!"unknown type");
			return;
		}
		uint8_t frame[512], mic[16], f2[512];
		size_t fl = tv_hex(c, "frame", frame, sizeof(frame));

		if (tv_has(c, "ptk")) {
			size_t pl = tv_hex(c, "ptk", exp, sizeof(exp));

			CHECK_OK(tw_wlan_ptk_expand(got, pl, akm, pmk, aa, spa, an, sn));
			TV_EXPECT(c, "ptk", got, pl);
			memcpy(kck, got, 16);
		} else {
			CHECK_OK(tw_wlan_ptk_derive(&ptk, akm, (unsigned)tv_int(c, "cipher", 0),
						    pmk, aa, spa, an, sn));
			memcpy(kck, ptk.kck, 16);
			tw_wlan_ptk_wipe(&ptk);
		}
		CHECK_OK(tw_wlan_eapol_mic(mic, akm, kck, 16, frame, fl));
		TV_EXPECT(c, "mic", mic, 16);
		/* The MIC field's contents do not matter to the computation. */
		memcpy(f2, frame, fl);
		tw_test_random(f2 + TW_EAPOL_KEY_MIC_OFF, 16);
		CHECK_OK(tw_wlan_eapol_mic(mic, akm, kck, 16, f2, fl));
		TV_EXPECT(c, "mic", mic, 16);
		/* The frame as sent: its MIC in place verifies. */
		tv_hex(c, "mic", f2 + TW_EAPOL_KEY_MIC_OFF, 16);
		CHECK_OK(tw_wlan_eapol_mic_verify(akm, kck, 16, f2, fl));
		CHECK_OK(tw_wlan_eapol_mic_set(akm, kck, 16, frame, fl));
		CHECK_MEM(frame, f2, fl);
		/* Every single-bit flip anywhere in the PDU is rejected. */
		bool none_ok = true;
		for (size_t bit = 0; bit < 8 * fl; bit++) {
			f2[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			none_ok &= tw_wlan_eapol_mic_verify(akm, kck, 16, f2, fl) != TW_OK;
			f2[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		CHECK(none_ok);
		kck[5] ^= 0x20;
		CHECK_ERR(tw_wlan_eapol_mic_verify(akm, kck, 16, f2, fl), TW_ERR_AUTH);
		/* Under the sibling AKM the same frame is the wrong descriptor
		 * version (the MIC algorithm is the AKM's, not the frame's). */
		if (akm <= 2)
			CHECK_ERR(tw_wlan_eapol_mic_verify(5, kck, 16, f2, fl), TW_ERR_DECODE);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- properties and cross-checks on random inputs ---- */

static void test_prf_kdf_random(void)
{
	uint8_t key[80], data[200], ref[300], got[300];
	static const char *labels[] = { "", "prefix", "Pairwise key expansion",
					"Group key expansion" };
	bool all_ok = true, all_eq = true;

	for (int iter = 0; iter < 200; iter++) {
		size_t kl = tw_test_random_u32() % sizeof(key);
		size_t dl = tw_test_random_u32() % sizeof(data);
		size_t ol = 1 + tw_test_random_u32() % sizeof(ref);
		const char *label = labels[iter % 4];

		tw_test_random(key, kl);
		tw_test_random(data, dl);
		for (int m = 0; m < n_impl; m++) {
			tw_cpu_restrict(impl_mask[m]);
			ref_prf_sha1(ref, ol, key, kl, label, data, dl);
			all_ok &= tw_wlan_prf_sha1(got, ol, key, kl, label, data, dl) == TW_OK;
			all_eq &= memcmp(ref, got, ol) == 0;
			ref_kdf_sha256(ref, ol, key, kl, label, data, dl);
			all_ok &= tw_wlan_kdf_sha256(got, ol, key, kl, label, data, dl) == TW_OK;
			all_eq &= memcmp(ref, got, ol) == 0;
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);
	CHECK(all_eq);

	/* Output length limits: the counters are one octet (PRF) and the
	 * Length field 16 bits (KDF). */
	static uint8_t big[8200];
	CHECK_ERR(tw_wlan_prf_sha1(big, 0, key, 16, "x", data, 4), TW_ERR_LENGTH);
	CHECK_OK(tw_wlan_prf_sha1(big, TW_WLAN_PRF_MAX, key, 16, "x", data, 4));
	CHECK_ERR(tw_wlan_prf_sha1(big, TW_WLAN_PRF_MAX + 1, key, 16, "x", data, 4),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_kdf_sha256(big, 0, key, 16, "x", data, 4), TW_ERR_LENGTH);
	CHECK_OK(tw_wlan_kdf_sha256(big, TW_WLAN_KDF_MAX, key, 16, "x", data, 4));
	ref_kdf_sha256(ref, 32, key, 16, "x", data, 4);
	CHECK(memcmp(ref, big, 32) != 0); /* Length = 65528 bits, not 256 */
	CHECK_ERR(tw_wlan_kdf_sha256(big, TW_WLAN_KDF_MAX + 1, key, 16, "x", data, 4),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_prf_sha1(NULL, 16, key, 16, "x", data, 4), TW_ERR_INVAL);
	CHECK_ERR(tw_wlan_prf_sha1(big, 16, key, 16, NULL, data, 4), TW_ERR_INVAL);
	CHECK_ERR(tw_wlan_kdf_sha256(big, 16, NULL, 16, "x", data, 4), TW_ERR_INVAL);
	CHECK_ERR(tw_wlan_kdf_sha256(big, 16, key, 16, "x", NULL, 4), TW_ERR_INVAL);
}

static void test_ptk_random(void)
{
	uint8_t pmk[32], aa[6], spa[6], an[32], sn[32], ref[64];
	struct tw_wlan_ptk ptk;
	bool all_ok = true, all_eq = true;

	for (int iter = 0; iter < 100; iter++) {
		tw_test_random(pmk, 32);
		tw_test_random(aa, 6);
		tw_test_random(spa, 6);
		tw_test_random(an, 32);
		tw_test_random(sn, 32);
		/* Equal prefixes exercise the Min/Max comparison past byte 0. */
		if (iter % 5 == 0) {
			memcpy(spa, aa, 5);
			memcpy(sn, an, 31);
		}
		for (size_t a = 0; a < N_AKMS; a++) {
			for (size_t ci = 0; ci < N_CIPHERS; ci++) {
				size_t tl = tw_wlan_tk_len(ciphers[ci]);

				ref_ptk(ref, 32 + tl, akms[a], pmk, aa, spa, an, sn);
				for (int m = 0; m < n_impl; m++) {
					tw_cpu_restrict(impl_mask[m]);
					all_ok &= tw_wlan_ptk_derive(&ptk, akms[a], ciphers[ci], pmk,
								     aa, spa, an, sn) == TW_OK;
					all_eq &= ptk.tk_len == tl &&
						  memcmp(ptk.kck, ref, 16) == 0 &&
						  memcmp(ptk.kek, ref + 16, 16) == 0 &&
						  memcmp(ptk.tk, ref + 32, tl) == 0;
				}
			}
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);
	CHECK(all_eq);
	CHECK(tw_wlan_tk_len(TW_WLAN_CIPHER_CCMP_128) == 16);
	CHECK(tw_wlan_tk_len(TW_WLAN_CIPHER_GCMP_256) == 32);
}

static void test_ptk_errors(void)
{
	uint8_t pmk[32] = { 1 }, aa[6] = { 2 }, spa[6] = { 3 }, an[32] = { 4 },
		sn[32] = { 5 }, raw[64];
	struct tw_wlan_ptk ptk;
	static const unsigned bad_akms[] = { 0, 3, 4, 7, 9, 12, 18, 255 };
	static const unsigned bad_ciphers[] = { 0, 1, 2, 5, 6, 7, 11, 12, 13 };

	for (size_t i = 0; i < sizeof(bad_akms) / sizeof(bad_akms[0]); i++) {
		memset(&ptk, 0xaa, sizeof(ptk));
		CHECK_ERR(tw_wlan_ptk_derive(&ptk, bad_akms[i], 4, pmk, aa, spa, an, sn),
			  TW_ERR_UNSUPPORTED);
		CHECK(tw_ct_is_zero(&ptk, sizeof(ptk)));
		memset(raw, 0xaa, sizeof(raw));
		CHECK_ERR(tw_wlan_ptk_expand(raw, 48, bad_akms[i], pmk, aa, spa, an, sn),
			  TW_ERR_UNSUPPORTED);
		CHECK(tw_ct_is_zero(raw, 48));
		CHECK(!tw_wlan_akm_is_supported(bad_akms[i]));
	}
	for (size_t i = 0; i < sizeof(bad_ciphers) / sizeof(bad_ciphers[0]); i++) {
		memset(&ptk, 0xaa, sizeof(ptk));
		CHECK_ERR(tw_wlan_ptk_derive(&ptk, 1, bad_ciphers[i], pmk, aa, spa, an, sn),
			  TW_ERR_UNSUPPORTED);
		CHECK(tw_ct_is_zero(&ptk, sizeof(ptk)));
		CHECK(tw_wlan_tk_len(bad_ciphers[i]) == 0);
	}
	CHECK_ERR(tw_wlan_ptk_expand(raw, 15, 2, pmk, aa, spa, an, sn), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_ptk_derive(NULL, 1, 4, pmk, aa, spa, an, sn), TW_ERR_INVAL);

	/* PMK = L(MSK, 0, 256); an MSK shorter than RFC 3748's 64 octets is
	 * refused and the PMK zeroed. */
	uint8_t msk[64], out[32];
	tw_test_random(msk, sizeof(msk));
	CHECK_OK(tw_wlan_pmk_from_msk(out, msk, 64));
	CHECK_MEM(out, msk, 32);
	CHECK_ERR(tw_wlan_pmk_from_msk(out, msk, 63), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(out, 32));
	CHECK_ERR(tw_wlan_pmk_from_msk(out, msk, 32), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_pmk_from_msk(out, NULL, 64), TW_ERR_INVAL);
}

static void test_mic_random(void)
{
	uint8_t f[600], kck[16], ref[16], mic[16];
	bool all_ok = true, all_eq = true, all_rej = true;

	for (int iter = 0; iter < 200; iter++) {
		unsigned akm = akms[iter % N_AKMS];
		uint16_t info = (uint16_t)((tw_test_random_u32() & 0xfff8) |
					   (unsigned)mic_version(akm) |
					   TW_EAPOL_KEY_INFO_MIC);
		size_t kd = tw_test_random_u32() % 300;
		size_t pad = iter % 3 == 0 ? tw_test_random_u32() % 40 : 0;
		size_t fl = make_frame(f, info, kd, 16);

		tw_test_random(kck, 16);
		tw_test_random(f + fl, pad); /* link-layer padding */
		if (ref_mic(ref, akm, kck, f, fl) != 0) {
			CHECK(!"OpenSSL MIC failed");
			return;
		}
		for (int m = 0; m < n_impl; m++) {
			tw_cpu_restrict(impl_mask[m]);
			all_ok &= tw_wlan_eapol_mic(mic, akm, kck, 16, f, fl + pad) == TW_OK;
			all_eq &= memcmp(mic, ref, 16) == 0;
			all_rej &= tw_wlan_eapol_mic_verify(akm, kck, 16, f, fl + pad) == TW_ERR_AUTH;
			all_ok &= tw_wlan_eapol_mic_set(akm, kck, 16, f, fl + pad) == TW_OK;
			all_eq &= memcmp(f + TW_EAPOL_KEY_MIC_OFF, ref, 16) == 0;
			all_ok &= tw_wlan_eapol_mic_verify(akm, kck, 16, f, fl + pad) == TW_OK;
			/* Padding after the PDU is outside the MIC. */
			if (pad > 0) {
				f[fl] ^= 0xff;
				all_ok &= tw_wlan_eapol_mic_verify(akm, kck, 16, f, fl + pad) == TW_OK;
			}
			/* A nonce or key data octet changed: rejected. */
			size_t at = kd > 0 ? fl - 1 : TW_EAPOL_KEY_NONCE_OFF + 5;

			f[at] ^= 0x01;
			all_rej &= tw_wlan_eapol_mic_verify(akm, kck, 16, f, fl + pad) == TW_ERR_AUTH;
			f[at] ^= 0x01;
			tw_test_random(f + TW_EAPOL_KEY_MIC_OFF, 16);
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);
	CHECK(all_eq);
	CHECK(all_rej);
}

static void test_mic_errors(void)
{
	uint8_t f[300], kck[16], mic[16];
	size_t fl;

	tw_test_random(kck, 16);
	/* AKM 2 requires descriptor version 2, AKM 5 version 3, SAE 0. */
	for (unsigned v = 0; v < 8; v++) {
		fl = make_frame(f, (uint16_t)(0x0108 | v), 22, 16);
		memset(mic, 0xaa, sizeof(mic));
		int e2 = tw_wlan_eapol_mic(mic, 2, kck, 16, f, fl);

		CHECK(e2 == (v == 2 ? TW_OK : v == 1 ? TW_ERR_UNSUPPORTED : TW_ERR_DECODE));
		CHECK(tw_ct_is_zero(mic, 16) == (e2 != TW_OK));
		CHECK_ERR(tw_wlan_eapol_mic(mic, 5, kck, 16, f, fl),
			  v == 3 ? TW_OK : TW_ERR_DECODE);
		CHECK_ERR(tw_wlan_eapol_mic(mic, 6, kck, 16, f, fl),
			  v == 3 ? TW_OK : TW_ERR_DECODE);
		CHECK_ERR(tw_wlan_eapol_mic(mic, 8, kck, 16, f, fl),
			  v == 0 ? TW_OK : TW_ERR_DECODE);
		CHECK_ERR(tw_wlan_eapol_mic(mic, 1, kck, 16, f, fl),
			  v == 2 ? TW_OK : v == 1 ? TW_ERR_UNSUPPORTED : TW_ERR_DECODE);
	}
	fl = make_frame(f, 0x010a, 22, 16);
	CHECK_ERR(tw_wlan_eapol_mic(mic, 3, kck, 16, f, fl), TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_wlan_eapol_mic(mic, 2, kck, 15, f, fl), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_eapol_mic(mic, 2, kck, 24, f, fl), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlan_eapol_mic(mic, 2, NULL, 16, f, fl), TW_ERR_INVAL);
	CHECK_ERR(tw_wlan_eapol_mic(mic, 2, kck, 16, NULL, fl), TW_ERR_INVAL);
	/* A correct MIC on a frame whose Key MIC bit is clear (message 1
	 * style) is not accepted as authentic. */
	fl = make_frame(f, 0x008a, 0, 16);
	CHECK_OK(tw_wlan_eapol_mic_set(2, kck, 16, f, fl));
	CHECK_ERR(tw_wlan_eapol_mic_verify(2, kck, 16, f, fl), TW_ERR_AUTH);
	/* Every truncation of a valid frame fails to decode, never verifies. */
	fl = make_frame(f, 0x010b, 40, 16);
	CHECK_OK(tw_wlan_eapol_mic_set(5, kck, 16, f, fl));
	CHECK_OK(tw_wlan_eapol_mic_verify(5, kck, 16, f, fl));
	bool all_dec = true;
	for (size_t n = 0; n < fl; n++)
		all_dec &= tw_wlan_eapol_mic_verify(5, kck, 16, f, n) == TW_ERR_DECODE;
	CHECK(all_dec);
}

static void test_decode(void)
{
	uint8_t f[400];
	struct tw_eapol_key k;
	size_t fl = make_frame(f, 0x13ca, 56, 16);

	CHECK_OK(tw_eapol_key_decode(&k, f, fl, 16));
	CHECK(k.version == 2 && k.desc_type == 2 && k.key_info == 0x13ca);
	CHECK(k.key_len == 16 && k.key_data_len == 56 && k.pdu_len == fl);
	CHECK(k.replay_counter == tw_load_be64(f + 9));
	CHECK(k.nonce == f + 17 && k.iv == f + 49 && k.rsc == f + 65);
	CHECK(k.mic == f + 81 && k.mic_off == 81 && k.mic_len == 16);
	CHECK(k.key_data == f + 99 && k.key_data + k.key_data_len == f + fl);
	/* Trailing padding is not part of the PDU. */
	CHECK_OK(tw_eapol_key_decode(&k, f, fl + 20, 16));
	CHECK(k.pdu_len == fl);
	/* Body length beyond the buffer: truncated. */
	CHECK_ERR(tw_eapol_key_decode(&k, f, fl - 1, 16), TW_ERR_DECODE);
	CHECK(k.nonce == NULL && k.key_data == NULL);
	CHECK_ERR(tw_eapol_key_decode(&k, f, 3, 16), TW_ERR_DECODE);
	CHECK_ERR(tw_eapol_key_decode(&k, f, 0, 16), TW_ERR_DECODE);
	/* The same frame parsed with a 24-octet MIC does not add up. */
	CHECK_ERR(tw_eapol_key_decode(&k, f, fl, 24), TW_ERR_DECODE);
	CHECK_ERR(tw_eapol_key_decode(&k, f, fl, 7), TW_ERR_LENGTH);
	CHECK_ERR(tw_eapol_key_decode(NULL, f, fl, 16), TW_ERR_INVAL);
	/* 24-octet MIC and no MIC (FILS) layouts. */
	size_t f24 = make_frame(f, 0x0100, 10, 24);
	CHECK_OK(tw_eapol_key_decode(&k, f, f24, 24));
	CHECK(k.mic_len == 24 && k.key_data == f + 81 + 24 + 2 && k.key_data_len == 10);
	size_t f0 = make_frame(f, 0x1000, 0, 0);
	CHECK_OK(tw_eapol_key_decode(&k, f, f0, 0));
	CHECK(k.key_data_len == 0 && k.pdu_len == 81 + 2);

	/* Header fields. */
	fl = make_frame(f, 0x010a, 22, 16);
	uint8_t g[400];
	struct {
		size_t off;
		uint8_t val;
		int err;
	} bad[] = {
		{ 0, 0, TW_ERR_DECODE },   /* 802.1X version 0 */
		{ 0, 4, TW_ERR_DECODE },   /* version 4 */
		{ 1, 0, TW_ERR_DECODE },   /* EAP-Packet, not EAPOL-Key */
		{ 1, 1, TW_ERR_DECODE },   /* EAPOL-Start */
		{ 4, 254, TW_ERR_UNSUPPORTED }, /* WPA1 descriptor */
		{ 4, 1, TW_ERR_DECODE },   /* RC4 descriptor */
		{ 4, 0, TW_ERR_DECODE },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(g, f, fl);
		g[bad[i].off] = bad[i].val;
		CHECK_ERR(tw_eapol_key_decode(&k, g, fl, 16), bad[i].err);
	}
	memcpy(g, f, fl);
	g[0] = 1;
	CHECK_OK(tw_eapol_key_decode(&k, g, fl, 16));
	g[0] = 3;
	CHECK_OK(tw_eapol_key_decode(&k, g, fl, 16));
	/* Key Data Length one more or one less than the body holds. */
	memcpy(g, f, fl);
	tw_store_be16(g + 97, 23);
	CHECK_ERR(tw_eapol_key_decode(&k, g, fl, 16), TW_ERR_DECODE);
	tw_store_be16(g + 97, 21);
	CHECK_ERR(tw_eapol_key_decode(&k, g, fl, 16), TW_ERR_DECODE);
	tw_store_be16(g + 97, 0xffff);
	CHECK_ERR(tw_eapol_key_decode(&k, g, fl, 16), TW_ERR_DECODE);
	/* Body lengths too short for the fixed fields, including 0 and 1,
	 * with plenty of bytes present (no subtraction may underflow). */
	for (unsigned bl = 0; bl < 95; bl++) {
		memcpy(g, f, fl);
		tw_store_be16(g + 2, (uint16_t)bl);
		tw_store_be16(g + 97, 0);
		CHECK_ERR(tw_eapol_key_decode(&k, g, fl, 16), TW_ERR_DECODE);
	}
	memcpy(g, f, fl);
	tw_store_be16(g + 2, 95);
	tw_store_be16(g + 97, 0);
	CHECK_OK(tw_eapol_key_decode(&k, g, fl, 16));
	CHECK(k.key_data_len == 0 && k.pdu_len == 99);
}

void test_main(void)
{
	impl_mask[0] = 0;
	n_impl = 1;
	if (tw_cpu_features() != 0)
		impl_mask[n_impl++] = UINT32_MAX;
	CHECK(tv_run_file("wlan_keys.vec", run_vector) == 8);
	test_prf_kdf_random();
	test_ptk_random();
	test_ptk_errors();
	test_mic_random();
	test_mic_errors();
	test_decode();
}
