/*
 * Tests of the key derivation functions: EAP-AKA' (RFC 5448 Appendix C /
 * RFC 9048), EAP-AKA (RFC 4187), EAP-SIM (RFC 4186 Appendix A), 5G
 * (TS 33.501 Annex A), ANSI X9.63 (NIST CAVP). Values no spec publishes
 * are cross-checked on random inputs against code written here on top of
 * OpenSSL: HMAC() over S strings built separately, EVP_KDF "X963KDF",
 * SHA1_Transform + BIGNUM for the FIPS 186-2 PRF.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA1_Transform: the raw G function */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/sha.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/sha.h"

/* ---------- independent reference code (OpenSSL based) ---------- */

/* TS 33.220 B.2.0 S = FC | P0 | L0 | ..., built byte by byte here. */
static size_t ref_s(uint8_t *s, uint8_t fc, const uint8_t *const *p,
		    const size_t *l, size_t n)
{
	size_t o = 0;

	s[o++] = fc;
	for (size_t i = 0; i < n; i++) {
		memcpy(s + o, p[i], l[i]);
		o += l[i];
		s[o++] = (uint8_t)(l[i] >> 8);
		s[o++] = (uint8_t)l[i];
	}
	return o;
}

static void ref_kdf(uint8_t out[32], const uint8_t *key, size_t kl, uint8_t fc,
		    const uint8_t *const *p, const size_t *l, size_t n)
{
	static uint8_t s[4 * 400 + 16];
	unsigned int ol = 0;
	size_t sl = ref_s(s, fc, p, l, n);

	HMAC(EVP_sha256(), key, (int)kl, s, sl, out, &ol);
	CHECK(ol == 32);
}

/* RFC 9048 §3.4 PRF' as a plain loop over OpenSSL HMAC(). */
static void ref_prf_prime(uint8_t *out, size_t out_len, const uint8_t *key,
			  size_t kl, const uint8_t *s, size_t sl)
{
	static uint8_t buf[32 + 2048 + 1];
	uint8_t t[32];
	size_t tl = 0;

	for (unsigned n = 1; out_len; n++) {
		memcpy(buf, t, tl);
		memcpy(buf + tl, s, sl);
		buf[tl + sl] = (uint8_t)n;
		HMAC(EVP_sha256(), key, (int)kl, buf, tl + sl + 1, t, NULL);
		tl = 32;
		size_t take = out_len < 32 ? out_len : 32;
		memcpy(out, t, take);
		out += take;
		out_len -= take;
	}
}

/* FIPS 186-2 change notice 1 PRF: G via SHA1_Transform, the mod 2^160
 * arithmetic with BIGNUM. */
static void ref_fips_prf(uint8_t *out, size_t out_len, const uint8_t xkey_in[20])
{
	BIGNUM *xkey = BN_bin2bn(xkey_in, 20, NULL), *w = BN_new();
	uint8_t blk[64], wb[20];

	while (out_len) {
		SHA_CTX c;

		memset(blk, 0, sizeof(blk));
		BN_bn2binpad(xkey, blk, 20);
		SHA1_Init(&c);
		SHA1_Transform(&c, blk);
		uint32_t hv[5] = { c.h0, c.h1, c.h2, c.h3, c.h4 };
		for (int i = 0; i < 5; i++)
			tw_store_be32(wb + 4 * i, hv[i]);
		BN_bin2bn(wb, 20, w);
		BN_add(xkey, xkey, w);
		BN_add_word(xkey, 1);
		BN_mask_bits(xkey, 160);
		size_t take = out_len < 20 ? out_len : 20;
		memcpy(out, wb, take);
		out += take;
		out_len -= take;
	}
	BN_free(xkey);
	BN_free(w);
}

static void ref_sha1(uint8_t out[20], const uint8_t *m, size_t n)
{
	CHECK(EVP_Digest(m, n, out, NULL, EVP_sha1(), NULL) == 1);
}

static int ref_x963(uint8_t *out, size_t out_len, const uint8_t *z, size_t zl,
		    const uint8_t *info, size_t il)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "X963KDF", NULL);
	EVP_KDF_CTX *kctx;
	OSSL_PARAM params[4], *p = params;
	int ok;

	if (kdf == NULL)
		return -1;
	kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)z, zl);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, il);
	*p = OSSL_PARAM_construct_end();
	ok = EVP_KDF_derive(kctx, out, out_len, params);
	EVP_KDF_CTX_free(kctx);
	return ok == 1 ? 0 : -1;
}

/* The value under key must differ from got (negative tests). */
static void expect_differs(const struct tv_case *c, const char *key,
			   const uint8_t *got, size_t len)
{
	uint8_t exp[256];
	size_t n = tv_hex(c, key, exp, sizeof(exp));

	CHECK(n != len || memcmp(exp, got, len) != 0);
}

static size_t tv_text(const struct tv_case *c, const char *key, const uint8_t **out)
{
	const char *t = tv_str(c, key);

	*out = (const uint8_t *)(t ? t : "");
	return t ? strlen(t) : 0;
}

/* ---------- vector files ---------- */

static void aka_prime_case(const struct tv_case *c)
{
	uint8_t ck[16], ik[16], autn[16], ckp[16], ikp[16], ref[32];
	const uint8_t *id, *net;
	size_t idl = tv_text(c, "identity", &id), netl = tv_text(c, "network_name", &net);
	struct tw_eap_aka_prime_keys k;

	if (!CHECK(tv_hex(c, "ck", ck, 16) == 16 && tv_hex(c, "ik", ik, 16) == 16 &&
		   tv_hex(c, "autn", autn, 16) == 16))
		return;
	/* AUTN = SQN ^ AK | AMF | MAC (TS 33.102 §6.3.2) */
	CHECK_OK(tw_kdf_ck_ik_prime(ckp, ikp, ck, ik, net, netl, autn));
	TV_EXPECT(c, "ck_prime", ckp, 16);
	TV_EXPECT(c, "ik_prime", ikp, 16);
	/* Pin the RFC labels: CK' is the FIRST half of HMAC(CK|IK, S), as
	 * computed here with OpenSSL from an S built separately. */
	uint8_t key[32];
	const uint8_t *p[2] = { net, autn };
	size_t l[2] = { netl, 6 };

	memcpy(key, ck, 16);
	memcpy(key + 16, ik, 16);
	ref_kdf(ref, key, 32, 0x20, p, l, 2);
	CHECK_MEM(ckp, ref, 16);
	CHECK_MEM(ikp, ref + 16, 16);

	CHECK_OK(tw_eap_aka_prime_derive(&k, ikp, ckp, id, idl));
	TV_EXPECT(c, "k_encr", k.k_encr, 16);
	TV_EXPECT(c, "k_aut", k.k_aut, 32);
	TV_EXPECT(c, "k_re", k.k_re, 32);
	TV_EXPECT(c, "msk", k.msk, 64);
	TV_EXPECT(c, "emsk", k.emsk, 64);

	/* The same vector as lane 3 of a batch of five (the other lanes carry
	 * random inputs): the batched chain gives the published keys. */
	struct tw_eap_aka_prime_job jobs[5];
	uint8_t other[5][48];

	memset(jobs, 0, sizeof(jobs));
	tw_test_random(other, sizeof(other));
	for (int i = 0; i < 5; i++) {
		jobs[i].ck = i == 3 ? ck : other[i];
		jobs[i].ik = i == 3 ? ik : other[i] + 16;
		jobs[i].sqn_xor_ak = i == 3 ? autn : other[i] + 32;
		jobs[i].identity = i == 3 ? id : other[i];
		jobs[i].identity_len = i == 3 ? idl : (size_t)i * 9;
	}
	tw_eap_aka_prime_derive_many(jobs, 5, net, netl);
	CHECK_OK(jobs[3].rc);
	TV_EXPECT(c, "k_encr", jobs[3].keys.k_encr, 16);
	TV_EXPECT(c, "k_aut", jobs[3].keys.k_aut, 32);
	TV_EXPECT(c, "k_re", jobs[3].keys.k_re, 32);
	TV_EXPECT(c, "msk", jobs[3].keys.msk, 64);
	TV_EXPECT(c, "emsk", jobs[3].keys.emsk, 64);

	/* Negative: swapped CK'/IK' (the well-known server's labelling) gives
	 * other keys; so does one flipped SQN^AK bit. */
	CHECK_OK(tw_eap_aka_prime_derive(&k, ckp, ikp, id, idl));
	expect_differs(c, "msk", k.msk, 64);
	autn[5] ^= 0x01;
	CHECK_OK(tw_kdf_ck_ik_prime(ckp, ikp, ck, ik, net, netl, autn));
	expect_differs(c, "ck_prime", ckp, 16);
	expect_differs(c, "ik_prime", ikp, 16);
}

static void aka_case(const struct tv_case *c)
{
	uint8_t ck[16], ik[16];
	const uint8_t *id;
	size_t idl = tv_text(c, "identity", &id);
	struct tw_eap_sim_keys k;

	if (!CHECK(tv_hex(c, "ck", ck, 16) == 16 && tv_hex(c, "ik", ik, 16) == 16))
		return;
	CHECK_OK(tw_eap_aka_derive(&k, id, idl, ik, ck));
	TV_EXPECT(c, "mk", k.mk, 20);
	TV_EXPECT(c, "k_encr", k.k_encr, 16);
	TV_EXPECT(c, "k_aut", k.k_aut, 16);
	TV_EXPECT(c, "msk", k.msk, 64);
	TV_EXPECT(c, "emsk", k.emsk, 64);
	/* Negative: IK and CK in the wrong order. */
	CHECK_OK(tw_eap_aka_derive(&k, id, idl, ck, ik));
	expect_differs(c, "mk", k.mk, 20);
	expect_differs(c, "msk", k.msk, 64);
}

static void sim_case(const struct tv_case *c)
{
	uint8_t kc[3][8], nonce[16], vl[32], sv[2];
	const uint8_t *id;
	size_t idl = tv_text(c, "identity", &id);
	size_t n_kc = tv_has(c, "kc3") ? 3 : 2;
	struct tw_eap_sim_keys k;

	tv_hex(c, "kc1", kc[0], 8);
	tv_hex(c, "kc2", kc[1], 8);
	if (n_kc == 3)
		tv_hex(c, "kc3", kc[2], 8);
	size_t vll = tv_hex(c, "version_list", vl, sizeof(vl));
	if (!CHECK(tv_hex(c, "nonce_mt", nonce, 16) == 16 &&
		   tv_hex(c, "selected_version", sv, 2) == 2))
		return;
	CHECK_OK(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, n_kc,
				   nonce, vl, vll, tw_load_be16(sv)));
	TV_EXPECT(c, "mk", k.mk, 20);
	TV_EXPECT(c, "k_encr", k.k_encr, 16);
	TV_EXPECT(c, "k_aut", k.k_aut, 16);
	TV_EXPECT(c, "msk", k.msk, 64);
	TV_EXPECT(c, "emsk", k.emsk, 64);
	/* Negative: one flipped NONCE_MT bit; and bad lengths. */
	nonce[0] ^= 0x01;
	CHECK_OK(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, n_kc,
				   nonce, vl, vll, tw_load_be16(sv)));
	expect_differs(c, "mk", k.mk, 20);
	CHECK_ERR(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, 1,
				    nonce, vl, vll, 1), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(&k, sizeof(k)));
	CHECK_ERR(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, 4,
				    nonce, vl, vll, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, n_kc,
				    nonce, vl, 3, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_eap_sim_derive(&k, id, idl, (const uint8_t(*)[8])kc, n_kc,
				    nonce, vl, 0, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_eap_sim_derive(&k, NULL, 5, (const uint8_t(*)[8])kc, n_kc,
				    nonce, vl, vll, 1), TW_ERR_INVAL);
}

static void g5_case(const struct tv_case *c)
{
	uint8_t ck[16], ik[16], autn[16], rand_[16], res[16], out[32], rs[16];
	const uint8_t *snn;
	size_t snnl = tv_text(c, "serving_network_name", &snn);
	size_t resl = tv_hex(c, "res", res, sizeof(res));

	if (!CHECK(tv_hex(c, "ck", ck, 16) == 16 && tv_hex(c, "ik", ik, 16) == 16 &&
		   tv_hex(c, "autn", autn, 16) == 16 &&
		   tv_hex(c, "rand", rand_, 16) == 16))
		return;
	CHECK_OK(tw_kdf_kausf(out, ck, ik, snn, snnl, autn));
	TV_EXPECT(c, "kausf", out, 32);
	CHECK_OK(tw_kdf_res_star(rs, ck, ik, snn, snnl, rand_, res, resl));
	TV_EXPECT(c, "res_star", rs, 16);
	if (tv_has(c, "hres_star")) {
		uint8_t h[16];

		tw_kdf_hres_star(h, rand_, rs);
		TV_EXPECT(c, "hres_star", h, 16);
	}
	if (tv_has(c, "kseaf")) {
		uint8_t kausf[32], kseaf[32];

		tv_hex(c, "kausf", kausf, 32);
		CHECK_OK(tw_kdf_kseaf(kseaf, kausf, snn, snnl));
		TV_EXPECT(c, "kseaf", kseaf, 32);
	}
	/* Negative: RES one octet shorter (or longer) changes RES*; a flipped
	 * RAND bit too. */
	CHECK_OK(tw_kdf_res_star(rs, ck, ik, snn, snnl, rand_, res,
				 resl > TW_RES_MIN_LEN ? resl - 1 : resl + 1));
	expect_differs(c, "res_star", rs, 16);
	rand_[15] ^= 0x80;
	CHECK_OK(tw_kdf_res_star(rs, ck, ik, snn, snnl, rand_, res, resl));
	expect_differs(c, "res_star", rs, 16);
}

static void x963_case(const struct tv_case *c)
{
	uint8_t z[128], info[128], out[256];
	size_t zl = tv_hex(c, "z", z, sizeof(z));
	size_t il = tv_hex(c, "shared_info", info, sizeof(info));
	uint8_t exp[256];
	size_t ol = tv_hex(c, "out", exp, sizeof(exp));

	if (!CHECK(ol > 0))
		return;
	CHECK_OK(tw_x963_kdf_sha256(out, ol, z, zl, info, il));
	TV_EXPECT(c, "out", out, ol);
	/* A shorter request is a prefix of the longer one (SEC 1 §3.6.1). */
	memset(out, 0, sizeof(out));
	CHECK_OK(tw_x963_kdf_sha256(out, ol - 1, z, zl, info, il));
	CHECK_MEM(out, exp, ol - 1);
	CHECK(out[ol - 1] == 0);
	/* Negative: one flipped Z bit. */
	z[0] ^= 0x04;
	CHECK_OK(tw_x963_kdf_sha256(out, ol, z, zl, info, il));
	expect_differs(c, "out", out, ol);
}

/* ---------- random cross-checks ---------- */

static uint8_t rnd_buf[4][400];

static void cross_generic_kdf(void)
{
	bool ok = true;

	for (int it = 0; it < 300; it++) {
		uint8_t key[80], a[32], b[32];
		size_t kl = tw_test_random_u32() % sizeof(key);
		size_t n = tw_test_random_u32() % 5;
		uint8_t fc = (uint8_t)tw_test_random_u32();
		const uint8_t *p[4];
		size_t l[4];
		struct tw_kdf_param prm[4];

		tw_test_random(key, sizeof(key));
		for (size_t i = 0; i < n; i++) {
			l[i] = tw_test_random_u32() % 400;
			tw_test_random(rnd_buf[i], l[i]);
			p[i] = rnd_buf[i];
			prm[i].p = rnd_buf[i];
			prm[i].len = l[i];
		}
		ref_kdf(a, key, kl, fc, p, l, n);
		ok &= tw_kdf_3gpp(b, key, kl, fc, prm, n) == TW_OK;
		ok &= memcmp(a, b, 32) == 0;
		/* The keyed form, twice on one context. */
		struct tw_hmac_sha256_ctx kc;

		tw_hmac_sha256_init(&kc, key, kl);
		for (int r = 0; r < 2; r++) {
			memset(b, 0, 32);
			ok &= tw_kdf_3gpp_keyed(b, &kc, fc, prm, n) == TW_OK;
			ok &= memcmp(a, b, 32) == 0;
		}
		tw_hmac_sha256_wipe(&kc);
	}
	CHECK(ok);
}

static void cross_5g(void)
{
	bool ok = true;

	for (int it = 0; it < 200; it++) {
		uint8_t ck[16], ik[16], key[32], sqn_ak[6], rand_[16], res[16];
		uint8_t snn[64], supi[40], abba[4], a[32], b[32], c2[16], d2[16];
		size_t snnl = 1 + tw_test_random_u32() % sizeof(snn);
		size_t resl = 4 + tw_test_random_u32() % 13;
		size_t supil = 1 + tw_test_random_u32() % sizeof(supi);
		size_t abbal = 2 + tw_test_random_u32() % 3;

		tw_test_random(ck, 16);
		tw_test_random(ik, 16);
		tw_test_random(sqn_ak, 6);
		tw_test_random(rand_, 16);
		tw_test_random(res, 16);
		tw_test_random(snn, sizeof(snn));
		tw_test_random(supi, sizeof(supi));
		tw_test_random(abba, sizeof(abba));
		memcpy(key, ck, 16);
		memcpy(key + 16, ik, 16);

		/* CK'/IK' (TS 33.402 A.2 / TS 33.501 A.3) */
		const uint8_t *p2[2] = { snn, sqn_ak };
		size_t l2[2] = { snnl, 6 };
		ref_kdf(a, key, 32, 0x20, p2, l2, 2);
		ok &= tw_kdf_ck_ik_prime(c2, d2, ck, ik, snn, snnl, sqn_ak) == TW_OK;
		ok &= memcmp(c2, a, 16) == 0 && memcmp(d2, a + 16, 16) == 0;
		/* KAUSF (A.2) */
		ref_kdf(a, key, 32, 0x6a, p2, l2, 2);
		ok &= tw_kdf_kausf(b, ck, ik, snn, snnl, sqn_ak) == TW_OK;
		ok &= memcmp(a, b, 32) == 0;
		/* KSEAF (A.6) keyed with that KAUSF */
		uint8_t kausf[32];
		memcpy(kausf, a, 32);
		const uint8_t *p1[1] = { snn };
		size_t l1[1] = { snnl };
		ref_kdf(a, kausf, 32, 0x6c, p1, l1, 1);
		ok &= tw_kdf_kseaf(b, kausf, snn, snnl) == TW_OK;
		ok &= memcmp(a, b, 32) == 0;
		/* KAMF (A.7) */
		uint8_t kseaf[32];
		memcpy(kseaf, a, 32);
		const uint8_t *pk[2] = { supi, abba };
		size_t lk[2] = { supil, abbal };
		ref_kdf(a, kseaf, 32, 0x6d, pk, lk, 2);
		ok &= tw_kdf_kamf(b, kseaf, supi, supil, abba, abbal) == TW_OK;
		ok &= memcmp(a, b, 32) == 0;
		/* RES* (A.4): the 128 least significant bits */
		const uint8_t *p3[3] = { snn, rand_, res };
		size_t l3[3] = { snnl, 16, resl };
		ref_kdf(a, key, 32, 0x6b, p3, l3, 3);
		ok &= tw_kdf_res_star(c2, ck, ik, snn, snnl, rand_, res, resl) == TW_OK;
		ok &= memcmp(c2, a + 16, 16) == 0;
		/* HRES* (A.5) */
		uint8_t m[32], h[32];
		memcpy(m, rand_, 16);
		memcpy(m + 16, c2, 16);
		CHECK(EVP_Digest(m, 32, h, NULL, EVP_sha256(), NULL) == 1);
		tw_kdf_hres_star(d2, rand_, c2);
		ok &= memcmp(d2, h + 16, 16) == 0;
	}
	CHECK(ok);

	/* KAMF for an IMSI SUPI: P0 is the digit string. */
	uint8_t kseaf[32], a[32], b[32], abba[2] = { 0x00, 0x00 };
	const char *imsi = "001010123456789";
	const uint8_t *pk[2] = { (const uint8_t *)imsi, abba };
	size_t lk[2] = { 15, 2 };

	tw_test_random(kseaf, 32);
	ref_kdf(a, kseaf, 32, 0x6d, pk, lk, 2);
	CHECK_OK(tw_kdf_kamf_imsi(b, kseaf, imsi, 15, abba, 2));
	CHECK_MEM(a, b, 32);
	CHECK_ERR(tw_kdf_kamf_imsi(b, kseaf, "00101012345678a", 15, abba, 2), TW_ERR_DECODE);
	CHECK(tw_ct_is_zero(b, 32));
	CHECK_ERR(tw_kdf_kamf_imsi(b, kseaf, "0010101234567890", 16, abba, 2), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kamf_imsi(b, kseaf, "00101", 5, abba, 2), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kamf_imsi(b, kseaf, NULL, 15, abba, 2), TW_ERR_INVAL);
}

static void cross_prf_prime(void)
{
	static uint8_t a[TW_PRF_PRIME_MAX_LEN], b[TW_PRF_PRIME_MAX_LEN];
	bool ok = true;

	for (int it = 0; it < 60; it++) {
		uint8_t key[100], s1[300], s2[300], s[600];
		size_t kl = tw_test_random_u32() % sizeof(key);
		size_t l1 = tw_test_random_u32() % sizeof(s1);
		size_t l2 = tw_test_random_u32() % sizeof(s2);
		size_t ol = it == 0 ? TW_PRF_PRIME_MAX_LEN
			    : 1 + tw_test_random_u32() % 600;

		tw_test_random(key, sizeof(key));
		tw_test_random(s1, sizeof(s1));
		tw_test_random(s2, sizeof(s2));
		memcpy(s, s1, l1);
		memcpy(s + l1, s2, l2);
		ref_prf_prime(a, ol, key, kl, s, l1 + l2);
		const struct tw_kdf_param sp[2] = { { s1, l1 }, { s2, l2 } };
		ok &= tw_prf_prime(b, ol, key, kl, sp, 2) == TW_OK;
		ok &= memcmp(a, b, ol) == 0;
	}
	CHECK(ok);

	/* EAP-AKA' key expansion for every identity length 0..300 (the fast
	 * path pre-pads short seeds, long ones fall back): MK = PRF'(IK'|CK',
	 * "EAP-AKA'"|Identity), K_encr|K_aut|K_re|MSK|EMSK = MK[0..207]. */
	bool all = true;
	for (size_t idlen = 0; idlen <= 300; idlen++) {
		uint8_t ikck[32], ident[300], seed[8 + 300], ref[208];
		struct tw_eap_aka_prime_keys kk;

		tw_test_random(ikck, sizeof(ikck));
		tw_test_random(ident, idlen);
		memcpy(seed, "EAP-AKA'", 8);
		memcpy(seed + 8, ident, idlen);
		ref_prf_prime(ref, sizeof(ref), ikck, 32, seed, 8 + idlen);
		all &= tw_eap_aka_prime_derive(&kk, ikck, ikck + 16, idlen ? ident : NULL,
					       idlen) == TW_OK;
		all &= memcmp(kk.k_encr, ref, 16) == 0 && memcmp(kk.k_aut, ref + 16, 32) == 0 &&
		       memcmp(kk.k_re, ref + 48, 32) == 0 && memcmp(kk.msk, ref + 80, 64) == 0 &&
		       memcmp(kk.emsk, ref + 144, 64) == 0;
	}
	CHECK(all);

	/* AKA' re-auth: MK = PRF'(K_re, "EAP-AKA' re-auth"|Identity|counter|NONCE_S) */
	uint8_t k_re[32], nonce[16], msk[64], emsk[64], s[16 + 40 + 2 + 16], mk[128];
	const char *id = "4555444333222111@wlan.mnc001.mcc001.3gppnetwork.org";
	size_t idl = 40;

	tw_test_random(k_re, 32);
	tw_test_random(nonce, 16);
	memcpy(s, "EAP-AKA' re-auth", 16);
	memcpy(s + 16, id, idl);
	s[16 + idl] = 0x12;
	s[17 + idl] = 0x34;
	memcpy(s + 18 + idl, nonce, 16);
	ref_prf_prime(mk, 128, k_re, 32, s, sizeof(s));
	CHECK_OK(tw_eap_aka_prime_reauth(msk, emsk, k_re, (const uint8_t *)id, idl,
					 0x1234, nonce));
	CHECK_MEM(msk, mk, 64);
	CHECK_MEM(emsk, mk + 64, 64);
	CHECK_OK(tw_eap_aka_prime_reauth(msk, emsk, k_re, (const uint8_t *)id, idl,
					 0x1235, nonce));
	CHECK(memcmp(msk, mk, 64) != 0);
}

static void cross_fips_prf(void)
{
	bool ok = true;

	for (int it = 0; it < 100; it++) {
		uint8_t xkey[20], a[200], b[200];
		size_t ol = 1 + tw_test_random_u32() % sizeof(a);

		tw_test_random(xkey, 20);
		/* Force the mod 2^160 carry-out path now and then. */
		if (it < 3)
			memset(xkey, 0xff, 20);
		ref_fips_prf(a, ol, xkey);
		tw_fips186_2_prf(b, ol, xkey);
		ok &= memcmp(a, b, ol) == 0;
	}
	CHECK(ok);

	/* EAP-SIM/AKA fast re-auth: XKEY' = SHA1(Identity|counter|NONCE_S|MK) */
	uint8_t mk[20], nonce[16], msk[64], emsk[64], buf[200], xk[20], x[128];
	const char *id = "reauth-id@example.org";
	size_t idl = strlen(id), o = 0;

	tw_test_random(mk, 20);
	tw_test_random(nonce, 16);
	memcpy(buf, id, idl);
	o = idl;
	buf[o++] = 0x00;
	buf[o++] = 0x07;
	memcpy(buf + o, nonce, 16);
	o += 16;
	memcpy(buf + o, mk, 20);
	o += 20;
	ref_sha1(xk, buf, o);
	ref_fips_prf(x, 128, xk);
	CHECK_OK(tw_eap_sim_reauth(msk, emsk, mk, (const uint8_t *)id, idl, 7, nonce));
	CHECK_MEM(msk, x, 64);
	CHECK_MEM(emsk, x + 64, 64);
	CHECK_ERR(tw_eap_sim_reauth(msk, emsk, mk, NULL, 3, 7, nonce), TW_ERR_INVAL);
	CHECK(tw_ct_is_zero(msk, 64) && tw_ct_is_zero(emsk, 64));
}

static void cross_x963(void)
{
	bool ok = true, have = true;

	for (int it = 0; it < 200 && have; it++) {
		uint8_t z[100], info[100], a[300], b[300];
		size_t zl = 1 + tw_test_random_u32() % sizeof(z);
		size_t il = tw_test_random_u32() % sizeof(info);
		size_t ol = 1 + tw_test_random_u32() % sizeof(a);

		tw_test_random(z, sizeof(z));
		tw_test_random(info, sizeof(info));
		if (ref_x963(a, ol, z, zl, info, il) != 0) {
			have = false;
			break;
		}
		ok &= tw_x963_kdf_sha256(b, ol, z, zl, info, il) == TW_OK;
		ok &= memcmp(a, b, ol) == 0;
	}
	/* OpenSSL 3 is a stated dependency: its absence is a failure. */
	CHECK(have);
	CHECK(ok);
}

/* ---------- negative cases: lengths and arguments ---------- */

static uint8_t huge[TW_KDF_PARAM_MAX + 1];

static void negative(void)
{
	uint8_t out[32], ck[16] = { 1 }, ik[16] = { 2 }, sqn[6] = { 0 }, r[16] = { 0 };
	uint8_t res[17] = { 0 }, abba[2] = { 0 }, rs[16];
	struct tw_kdf_param p[2] = { { huge, TW_KDF_PARAM_MAX + 1 }, { NULL, 0 } };

	/* Li is two octets: 65535 is the largest parameter. */
	CHECK_ERR(tw_kdf_3gpp(out, ck, 16, 0x6a, p, 1), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(out, 32));
	p[0].len = TW_KDF_PARAM_MAX;
	CHECK_OK(tw_kdf_3gpp(out, ck, 16, 0x6a, p, 2));
	p[0].p = NULL;
	CHECK_ERR(tw_kdf_3gpp(out, ck, 16, 0x6a, p, 1), TW_ERR_INVAL);
	CHECK_ERR(tw_kdf_3gpp(out, ck, 16, 0x6a, NULL, 1), TW_ERR_INVAL);
	CHECK_ERR(tw_kdf_3gpp(out, NULL, 16, 0x6a, NULL, 0), TW_ERR_INVAL);
	CHECK_OK(tw_kdf_3gpp(out, ck, 16, 0x6a, NULL, 0));

	/* RES is 4..16 octets (TS 33.102 §6.3.2) */
	CHECK_ERR(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, res, 3), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(rs, 16));
	CHECK_ERR(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, res, 17), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, res, 0), TW_ERR_LENGTH);
	CHECK_OK(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, res, 4));
	CHECK_OK(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, res, 16));
	CHECK_ERR(tw_kdf_res_star(rs, ck, ik, (const uint8_t *)"5G:x", 4, r, NULL, 8), TW_ERR_INVAL);

	/* Names must be present and fit Li. */
	CHECK_ERR(tw_kdf_kausf(out, ck, ik, (const uint8_t *)"", 0, sqn), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kausf(out, ck, ik, huge, sizeof(huge), sqn), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kseaf(out, out, (const uint8_t *)"", 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_res_star(rs, ck, ik, NULL, 0, r, res, 8), TW_ERR_LENGTH);
	uint8_t ckp[16], ikp[16];
	CHECK_ERR(tw_kdf_ck_ik_prime(ckp, ikp, ck, ik, (const uint8_t *)"", 0, sqn), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(ckp, 16) && tw_ct_is_zero(ikp, 16));
	CHECK_ERR(tw_kdf_ck_ik_prime(ckp, ikp, ck, ik, NULL, 4, sqn), TW_ERR_INVAL);
	CHECK_ERR(tw_kdf_kamf(out, out, (const uint8_t *)"imsi", 4, abba, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kamf(out, out, (const uint8_t *)"", 0, abba, 2), TW_ERR_LENGTH);
	CHECK_ERR(tw_kdf_kamf(out, out, (const uint8_t *)"imsi", 4, NULL, 2), TW_ERR_INVAL);

	/* PRF' output is at most 255 blocks. */
	static uint8_t big[TW_PRF_PRIME_MAX_LEN + 1];
	const struct tw_kdf_param s[1] = { { (const uint8_t *)"x", 1 } };
	CHECK_ERR(tw_prf_prime(big, sizeof(big), ck, 16, s, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_prf_prime(big, 0, ck, 16, s, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_prf_prime(big, 32, ck, 16, NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_prf_prime(big, TW_PRF_PRIME_MAX_LEN, ck, 16, s, 1));

	/* X9.63: keydatalen < hashlen * (2^32 - 1), and not empty. */
	uint8_t z[24] = { 7 };
	CHECK_ERR(tw_x963_kdf_sha256(out, 0, z, 24, NULL, 0), TW_ERR_LENGTH);
	if (sizeof(size_t) > 4)
		CHECK_ERR(tw_x963_kdf_sha256(out, (size_t)32 * 0xffffffffull, z, 24, NULL, 0),
			  TW_ERR_LENGTH);
	CHECK_ERR(tw_x963_kdf_sha256(out, SIZE_MAX, z, 24, NULL, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_x963_kdf_sha256(out, 32, NULL, 24, NULL, 0), TW_ERR_INVAL);
	CHECK_ERR(tw_x963_kdf_sha256(out, 32, z, 24, NULL, 5), TW_ERR_INVAL);
	CHECK_ERR(tw_x963_kdf_sha256(NULL, 32, z, 24, NULL, 0), TW_ERR_INVAL);

	/* Identities: NULL with a length is an argument error. */
	struct tw_eap_aka_prime_keys kp;
	struct tw_eap_sim_keys ks;
	uint8_t msk[64], emsk[64];
	CHECK_ERR(tw_eap_aka_prime_derive(&kp, ik, ck, NULL, 3), TW_ERR_INVAL);
	CHECK(tw_ct_is_zero(&kp, sizeof(kp)));
	CHECK_ERR(tw_eap_aka_derive(&ks, NULL, 3, ik, ck), TW_ERR_INVAL);
	CHECK_ERR(tw_eap_aka_prime_reauth(msk, emsk, out, NULL, 3, 1, r), TW_ERR_INVAL);
	/* An empty identity is allowed (it is what the RFC hashes). */
	CHECK_OK(tw_eap_aka_derive(&ks, NULL, 0, ik, ck));
	CHECK_OK(tw_eap_aka_prime_derive(&kp, ik, ck, NULL, 0));
}

/* Portable vs SHA-NI in one process on whole derivations. */
static void portable_vs_shani(void)
{
	if (!tw_cpu_has(TW_CPU_SHANI)) {
		tw_note("SHA-NI not enabled (%s): in-process comparison skipped",
			tw_cpu_level_name());
		return;
	}
	bool same = true;

	for (int it = 0; it < 50; it++) {
		uint8_t ck[16], ik[16], id[40], kc[3][8], nonce[16], vl[2] = { 0, 1 };
		struct tw_eap_aka_prime_keys p1, p2;
		struct tw_eap_sim_keys s1, s2, a1, a2;
		size_t idl = tw_test_random_u32() % sizeof(id);

		tw_test_random(ck, 16);
		tw_test_random(ik, 16);
		tw_test_random(id, sizeof(id));
		tw_test_random(kc, sizeof(kc));
		tw_test_random(nonce, 16);
		tw_cpu_restrict(0);
		same &= tw_eap_aka_prime_derive(&p1, ik, ck, id, idl) == TW_OK;
		same &= tw_eap_sim_derive(&s1, id, idl, (const uint8_t(*)[8])kc, 3,
					  nonce, vl, 2, 1) == TW_OK;
		same &= tw_eap_aka_derive(&a1, id, idl, ik, ck) == TW_OK;
		tw_cpu_restrict(UINT32_MAX);
		same &= tw_eap_aka_prime_derive(&p2, ik, ck, id, idl) == TW_OK;
		same &= tw_eap_sim_derive(&s2, id, idl, (const uint8_t(*)[8])kc, 3,
					  nonce, vl, 2, 1) == TW_OK;
		same &= tw_eap_aka_derive(&a2, id, idl, ik, ck) == TW_OK;
		same &= memcmp(&p1, &p2, sizeof(p1)) == 0;
		same &= memcmp(&s1, &s2, sizeof(s1)) == 0;
		same &= memcmp(&a1, &a2, sizeof(a1)) == 0;
	}
	CHECK(same);
}

/*
 * tw_eap_aka_prime_derive_many() against OpenSSL on random inputs: CK'|IK'
 * = HMAC(CK|IK, S), MK = PRF'(IK'|CK', "EAP-AKA'"|Identity), and the
 * returned K_aut state MACs like HMAC(K_aut, .). Batches of every size
 * around the sixteen lanes, identities of mixed lengths (long ones leave
 * the lanes), a failed job among good ones; on every CPU level here.
 */
static void derive_many_check(uint32_t level, const char *level_name)
{
	static struct tw_eap_aka_prime_job jobs[40];
	static uint8_t in[40][16 + 16 + 6 + 300];
	static const size_t sizes[] = { 0, 1, 2, 7, 15, 16, 17, 31, 33, 40 };
	const uint8_t net[] = "WLAN";
	bool ok = true;

	tw_cpu_restrict(level);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];

		memset(jobs, 0, sizeof(jobs));
		tw_test_random(in, sizeof(in));
		for (size_t i = 0; i < n; i++) {
			jobs[i].ck = in[i];
			jobs[i].ik = in[i] + 16;
			jobs[i].sqn_xor_ak = in[i] + 32;
			jobs[i].identity = in[i] + 38;
			/* mostly NAI-sized, now and then past the lanes' buffers */
			jobs[i].identity_len = i % 11 == 10 ? 271 + tw_test_random_u32() % 30
							    : tw_test_random_u32() % 120;
		}
		if (n > 5)
			jobs[4].ik = NULL; /* refused, the others unaffected */
		tw_eap_aka_prime_derive_many(jobs, n, net, 4);
		for (size_t i = 0; i < n; i++) {
			uint8_t key[32], ref[32], seed[8 + 300], mk[208], mac[32], m[77];
			unsigned int ml = 0;
			const uint8_t *p[2] = { net, jobs[i].sqn_xor_ak };
			size_t l[2] = { 4, 6 };
			static const uint8_t zero[sizeof(jobs[0].keys)];

			if (jobs[i].ik == NULL) {
				ok &= jobs[i].rc == TW_ERR_INVAL &&
				      memcmp(&jobs[i].keys, zero, sizeof(zero)) == 0;
				continue;
			}
			memcpy(key, jobs[i].ck, 16);
			memcpy(key + 16, jobs[i].ik, 16);
			ref_kdf(ref, key, 32, 0x20, p, l, 2);
			memcpy(key, ref + 16, 16); /* IK' | CK' */
			memcpy(key + 16, ref, 16);
			memcpy(seed, "EAP-AKA'", 8);
			memcpy(seed + 8, jobs[i].identity, jobs[i].identity_len);
			ref_prf_prime(mk, sizeof(mk), key, 32, seed, 8 + jobs[i].identity_len);
			ok &= jobs[i].rc == TW_OK;
			ok &= memcmp(jobs[i].keys.k_encr, mk, 16) == 0 &&
			      memcmp(jobs[i].keys.k_aut, mk + 16, 32) == 0 &&
			      memcmp(jobs[i].keys.k_re, mk + 48, 32) == 0 &&
			      memcmp(jobs[i].keys.msk, mk + 80, 64) == 0 &&
			      memcmp(jobs[i].keys.emsk, mk + 144, 64) == 0;
			tw_test_random(m, sizeof(m));
			HMAC(EVP_sha256(), mk + 16, 32, m, sizeof(m), ref, &ml);
			tw_hmac_sha256_update(&jobs[i].k_aut, m, sizeof(m));
			tw_hmac_sha256_final(&jobs[i].k_aut, mac);
			ok &= ml == 32 && memcmp(mac, ref, 32) == 0;
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	if (!CHECK(ok))
		tw_note("tw_eap_aka_prime_derive_many differs from OpenSSL at level %s",
			level_name);
}

/* tw_eap_aka_prime_derive_many leaves none of the keys it derived on the
 * stack (tw_test_stack_copies): sixteen jobs in lanes, the MSK, K_aut and
 * CK'|IK'-keyed chain values looked for after the call. */
static struct tw_eap_aka_prime_job resid_jobs[16];
static uint8_t resid_msk[16], resid_kaut[16];

static __attribute__((noinline)) void derive_many_secret_call(void)
{
	static const uint8_t ck[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const uint8_t ik[16] = { 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28 };
	static const uint8_t sqn[6] = { 0, 0, 0, 0, 1, 0x20 };
	static const char id[] = "6555444333222111@wlan.mnc555.mcc444.3gppnetwork.org";

	for (int j = 0; j < 16; j++)
		resid_jobs[j] = (struct tw_eap_aka_prime_job){
			.ck = ck, .ik = ik, .sqn_xor_ak = sqn,
			.identity = (const uint8_t *)id, .identity_len = sizeof(id) - 1,
		};
	tw_eap_aka_prime_derive_many(resid_jobs, 16, (const uint8_t *)"WLAN", 4);
	memcpy(resid_msk, resid_jobs[0].keys.msk, 16);
	memcpy(resid_kaut, resid_jobs[0].keys.k_aut, 16);
	tw_wipe(resid_jobs, sizeof(resid_jobs));
}

static void derive_many_no_residue(void)
{
	int hits;

	derive_many_secret_call();
	hits = tw_test_stack_copies(resid_msk, sizeof(resid_msk));
	derive_many_secret_call();
	hits += tw_test_stack_copies(resid_kaut, sizeof(resid_kaut));
	if (!CHECK(hits == 0))
		tw_note("tw_eap_aka_prime_derive_many: %d key copies left on the stack", hits);
}

static void derive_many(void)
{
	derive_many_check(UINT32_MAX, "all");
	derive_many_check(UINT32_MAX & ~(uint32_t)TW_CPU_AVX512, "no AVX-512");
	derive_many_check(0, "portable");
	derive_many_no_residue();
}

void test_main(void)
{
	CHECK(tv_run_file("eap_aka_prime.vec", aka_prime_case) >= 4);
	CHECK(tv_run_file("eap_aka.vec", aka_case) >= 1);
	CHECK(tv_run_file("eap_sim.vec", sim_case) >= 1);
	CHECK(tv_run_file("kdf_5g.vec", g5_case) >= 1);
	CHECK(tv_run_file("kdf_generic.vec", x963_case) >= 4);
	cross_generic_kdf();
	cross_5g();
	cross_prf_prime();
	cross_fips_prf();
	cross_x963();
	negative();
	portable_vs_shani();
	derive_many();
}
