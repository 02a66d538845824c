/*
 * Tests of SUCI (3GPP TS 33.501 V17.9.0 Annex C, TS 23.003 §2.2B, §28.7):
 * the Annex C.4 vectors (IMSI and network specific identifier SUPIs) in
 * both directions with every intermediate value, both text forms,
 * public-key edge cases in the spirit of Wycheproof (X25519 points of
 * small order and non-canonical encodings, P-256 points off the curve, at
 * infinity, of the wrong length or form), NAI syntax,
 * the null scheme, round trips with several home network keys, a
 * cross-check against an ECIES built here from OpenSSL EVP calls only, and
 * negative cases (tags, ciphertexts, points, strings, random mutations).
 */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/hex.h"
#include "twag/suci.h"

/* ---- helpers -------------------------------------------------------- */

static size_t pub_len_of(enum tw_suci_scheme s)
{
	return s == TW_SUCI_SCHEME_PROFILE_A ? 32 : 33;
}

/* Flips bit `bit` of the hex digit string s at octet `octet` (in place). */
static void flip_hex_bit(char *hex, size_t octet, unsigned bit)
{
	uint8_t b;
	char two[3];

	CHECK_OK(tw_hex_decode(&b, 1, NULL, hex + 2 * octet, 2));
	b ^= (uint8_t)(1u << bit);
	tw_hex_encode(two, &b, 1);
	hex[2 * octet] = two[0];
	hex[2 * octet + 1] = two[1];
}

/* ---- TS 33.501 C.4.3.1 / C.4.4.1 vectors ------------------------------ */

static enum tw_suci_scheme vec_scheme;

static void run_ecies_vector(const struct tv_case *c)
{
	enum tw_suci_scheme s = vec_scheme;
	size_t pl = pub_len_of(s);
	struct tw_suci_hn_key key = { .id = 27, .scheme = s };
	uint8_t eph_priv[32], hn_pub[33], eph_pub[33], pub[33], z[32];
	uint8_t pt[16], out[TW_SUCI_ECIES_OUTPUT_MAX], dec[16];
	struct tw_suci_ecies_keys k;
	size_t n, pt_len, out_len, dec_len;
	const char *msin = tv_str(c, "imsi_msin");
	const char *mccmnc = tv_str(c, "imsi_mcc_mnc");
	char supi[TW_SUCI_SUPI_STR_MAX], expect_suci[TW_SUCI_STR_MAX];
	char suci[TW_SUCI_STR_MAX], hex[2 * TW_SUCI_ECIES_OUTPUT_MAX + 1];

	if (msin == NULL || mccmnc == NULL)
		return;
	CHECK(tv_hex(c, "hn_private", key.priv, 32) == 32);
	CHECK(tv_hex(c, "eph_private", eph_priv, 32) == 32);
	CHECK(tv_hex(c, "hn_public", hn_pub, sizeof(hn_pub)) == pl);
	CHECK(tv_hex(c, "eph_public", eph_pub, sizeof(eph_pub)) == pl);

	/* Public keys from private keys (C.3.4.1 / C.3.4.2). */
	CHECK_OK(tw_suci_public_key(&key, pub, sizeof(pub), &n));
	CHECK(n == pl);
	TV_EXPECT(c, "hn_public", pub, n);
	CHECK_OK(tw_suci_ecc_public(s, eph_priv, pub, sizeof(pub), &n));
	TV_EXPECT(c, "eph_public", pub, n);
	CHECK_ERR(tw_suci_ecc_public(s, eph_priv, pub, pl - 1, &n),
		  TW_ERR_OVERFLOW);

	/* Shared key Z from both sides. */
	CHECK_OK(tw_suci_ecdh(s, eph_priv, hn_pub, pl, z));
	TV_EXPECT(c, "shared_key", z, 32);
	memset(z, 0, sizeof(z));
	CHECK_OK(tw_suci_ecdh(s, key.priv, eph_pub, pl, z));
	TV_EXPECT(c, "shared_key", z, 32);

	/* C.3.2 key split. */
	CHECK_OK(tw_suci_ecies_derive(z, eph_pub, pl, &k));
	TV_EXPECT(c, "eph_enc_key", k.enc_key, 16);
	TV_EXPECT(c, "icb", k.icb, 16);
	TV_EXPECT(c, "eph_mac_key", k.mac_key, 32);

	/* Scheme input: BCD MSIN. */
	CHECK_OK(tw_suci_msin_to_bcd(msin, strlen(msin), pt, sizeof(pt), &pt_len));
	TV_EXPECT(c, "plaintext", pt, pt_len);

	/* UE side with the spec's ephemeral key reproduces the output. */
	CHECK_OK(tw_suci_ecies_encrypt(s, hn_pub, pl, eph_priv, pt, pt_len, out,
				       sizeof(out), &out_len));
	TV_EXPECT(c, "scheme_output", out, out_len);
	TV_EXPECT(c, "ciphertext", out + pl, pt_len);
	TV_EXPECT(c, "mac_tag", out + pl + pt_len, 8);
	CHECK_ERR(tw_suci_ecies_encrypt(s, hn_pub, pl, eph_priv, pt, pt_len, out,
					out_len - 1, &n),
		  TW_ERR_OVERFLOW);

	/* Home network side. */
	CHECK(tv_hex(c, "scheme_output", out, sizeof(out)) == out_len);
	CHECK_OK(tw_suci_ecies_decrypt(&key, out, out_len, dec, sizeof(dec),
				       &dec_len));
	TV_EXPECT(c, "plaintext", dec, dec_len);
	CHECK_ERR(tw_suci_ecies_decrypt(&key, out, out_len, dec, dec_len - 1,
					&dec_len),
		  TW_ERR_OVERFLOW);

	/* Every single-bit flip of the tag and of the ciphertext -> AUTH. */
	bool all = true;
	for (size_t i = pl; i < out_len; i++) {
		for (unsigned b = 0; b < 8; b++) {
			out[i] ^= (uint8_t)(1u << b);
			all &= tw_suci_ecies_decrypt(&key, out, out_len, dec,
						     sizeof(dec), &dec_len) ==
			       TW_ERR_AUTH;
			out[i] ^= (uint8_t)(1u << b);
		}
	}
	CHECK(all);
	/* A flipped ephemeral-key bit: another key (AUTH) or no point. */
	all = true;
	for (size_t i = 0; i < pl; i++) {
		out[i] ^= 0x10;
		int rc = tw_suci_ecies_decrypt(&key, out, out_len, dec,
					       sizeof(dec), &dec_len);
		all &= rc == TW_ERR_AUTH || rc == TW_ERR_DECODE;
		out[i] ^= 0x10;
	}
	CHECK(all);
	/* Truncations. */
	CHECK_ERR(tw_suci_ecies_decrypt(&key, out, pl + 8, dec, sizeof(dec),
					&dec_len),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_ecies_decrypt(&key, out, out_len - 1, dec,
					sizeof(dec), &dec_len),
		  TW_ERR_AUTH);

	/* Text form: C.4 gives MCC|MNC = 274012 and MSIN 001002086 apart, so
	 * the MNC is "012" (3 digits); routing "0", key id 27 chosen here;
	 * the scheme output is the vector's. */
	char imsi[32];
	unsigned mnc_digits = (unsigned)strlen(mccmnc) - 3;
	CHECK(mnc_digits == 3);
	snprintf(imsi, sizeof(imsi), "imsi-%s%s", mccmnc, msin);
	tw_hex_encode(hex, out, out_len);
	snprintf(expect_suci, sizeof(expect_suci), "suci-0-%.3s-%s-0-%d-27-%s",
		 mccmnc, mccmnc + 3, (int)s, hex);
	CHECK_OK(tw_suci_conceal(s, hn_pub, pl, 27, imsi, mnc_digits, NULL,
				 eph_priv, suci, sizeof(suci)));
	CHECK(strcmp(suci, expect_suci) == 0);
	CHECK_ERR(tw_suci_conceal(s, hn_pub, pl, 27, imsi, mnc_digits, NULL,
				  eph_priv, suci, strlen(expect_suci)),
		  TW_ERR_OVERFLOW);
	CHECK_OK(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)));
	CHECK(strcmp(supi, imsi) == 0);
	CHECK_ERR(tw_suci_deconceal(&key, 1, expect_suci, supi, strlen(imsi)),
		  TW_ERR_OVERFLOW);
	/* NAI form (TS 23.003 §28.7.3; realm of §28.2 with the 3-digit MNC):
	 * the same output in three parts. "mnc012" reads as the 2-digit MNC
	 * 12 unless the home network says 3. */
	{
		char want[2 * TW_SUCI_STR_MAX];
		int h2 = 2 * (int)pl, c2 = 2 * (int)pt_len;

		snprintf(want, sizeof(want),
			 "type0.rid0.schid%d.hnkey27.ecckey%.*s.cip%.*s.mac%s"
			 "@5gc.mnc%s.mcc%.3s.3gppnetwork.org",
			 (int)s, h2, hex, c2, hex + h2, hex + h2 + c2, mccmnc + 3, mccmnc);
		CHECK_OK(tw_suci_conceal_nai(s, hn_pub, pl, 27, imsi, mnc_digits, NULL,
					     eph_priv, suci, sizeof(suci)));
		if (!CHECK(strcmp(suci, want) == 0))
			fprintf(stderr, "  got  %s\n  want %s\n", suci, want);
		CHECK_OK(tw_suci_deconceal_mnc(&key, 1, want, 3, supi, sizeof(supi)));
		CHECK(strcmp(supi, imsi) == 0);
		CHECK_OK(tw_suci_deconceal(&key, 1, want, supi, sizeof(supi)));
		CHECK(strncmp(supi, "imsi-27412", 10) == 0 && strcmp(supi, imsi) != 0);
		CHECK_ERR(tw_suci_deconceal_mnc(&key, 1, want, 4, supi, sizeof(supi)),
			  TW_ERR_INVAL);
		/* realms compare without case */
		for (char *q = strchr(want, '@'); *q; q++)
			if (*q >= 'a' && *q <= 'z')
				*q = (char)(*q - 'a' + 'A');
		CHECK_OK(tw_suci_deconceal_mnc(&key, 1, want, 3, supi, sizeof(supi)));
		CHECK(strcmp(supi, imsi) == 0);
		if (s == TW_SUCI_SCHEME_PROFILE_B && tv_has(c, "hn_public_uncompressed")) {
			uint8_t unc[65];

			CHECK(tv_hex(c, "hn_public_uncompressed", unc, sizeof(unc)) == 65);
			CHECK_OK(tw_suci_conceal(s, unc, 65, 27, imsi, mnc_digits, NULL,
						 eph_priv, suci, sizeof(suci)));
			CHECK(strcmp(suci, expect_suci) == 0);
			CHECK_OK(tw_suci_ecdh(s, eph_priv, unc, 65, z));
			TV_EXPECT(c, "shared_key", z, 32);
		}
	}
	/* The prepared-key path (a SIDF's) gives the same answer. */
	struct tw_suci_hn_ctx hctx;
	if (CHECK_OK(tw_suci_hn_ctx_init(&hctx, &key))) {
		memset(supi, 'x', sizeof(supi));
		CHECK_OK(tw_suci_deconceal_ctx(&hctx, 1, expect_suci, supi, sizeof(supi)));
		CHECK(strcmp(supi, imsi) == 0);
		char bad_suci[TW_SUCI_STR_MAX];
		snprintf(bad_suci, sizeof(bad_suci), "%s", expect_suci);
		flip_hex_bit(bad_suci + strlen(bad_suci) - 2 * out_len, out_len - 1, 3);
		CHECK_ERR(tw_suci_deconceal_ctx(&hctx, 1, bad_suci, supi, sizeof(supi)),
			  TW_ERR_AUTH);
		CHECK(supi[0] == '\0');
		hctx.id = 28;
		CHECK_ERR(tw_suci_deconceal_ctx(&hctx, 1, expect_suci, supi, sizeof(supi)),
			  TW_ERR_NOTFOUND);
		tw_suci_hn_ctx_free(&hctx);
		CHECK(hctx.pkey == NULL);
	}
	/* Upper-case hex is accepted on input. */
	for (char *p = expect_suci + strlen(expect_suci) - 2 * out_len; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	CHECK_OK(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)));
	CHECK(strcmp(supi, imsi) == 0);
	/* Flipped tag bit / ciphertext bit in the string -> AUTH. */
	char *h = expect_suci + strlen(expect_suci) - 2 * out_len;
	flip_hex_bit(h, out_len - 1, 0);
	CHECK_ERR(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_AUTH);
	CHECK(supi[0] == '\0');
	flip_hex_bit(h, out_len - 1, 0);
	flip_hex_bit(h, pl, 7);
	CHECK_ERR(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_AUTH);
	flip_hex_bit(h, pl, 7);
	/* Right id, other scheme / other id -> NOTFOUND. */
	struct tw_suci_hn_key other = key;
	other.scheme = s == TW_SUCI_SCHEME_PROFILE_A ? TW_SUCI_SCHEME_PROFILE_B
						     : TW_SUCI_SCHEME_PROFILE_A;
	CHECK_ERR(tw_suci_deconceal(&other, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_NOTFOUND);
	other = key;
	other.id = 28;
	CHECK_ERR(tw_suci_deconceal(&other, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_NOTFOUND);
	/* Truncated scheme output in the string (drop the last octet). */
	expect_suci[strlen(expect_suci) - 2] = '\0';
	CHECK_ERR(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_AUTH);
	h[2 * (pl + 8)] = '\0'; /* no ciphertext at all */
	CHECK_ERR(tw_suci_deconceal(&key, 1, expect_suci, supi, sizeof(supi)),
		  TW_ERR_LENGTH);
	tw_wipe(&k, sizeof(k));
}

/* Profile B: the uncompressed forms printed in C.4.4.1, recomputed here by
 * OpenSSL from the compressed ones (checks our compressed outputs denote
 * the spec's points). */
static void check_uncompressed(const struct tv_case *c, const char *comp_key,
			       const char *unc_key)
{
	uint8_t comp[33], unc[65];
	EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	EC_POINT *p = g ? EC_POINT_new(g) : NULL;

	CHECK(p != NULL);
	if (p == NULL)
		goto out;
	CHECK(tv_hex(c, comp_key, comp, sizeof(comp)) == 33);
	CHECK(EC_POINT_oct2point(g, p, comp, 33, NULL) == 1);
	CHECK(EC_POINT_point2oct(g, p, POINT_CONVERSION_UNCOMPRESSED, unc, 65,
				 NULL) == 65);
	TV_EXPECT(c, unc_key, unc, 65);
out:
	EC_POINT_free(p);
	EC_GROUP_free(g);
}

static void run_profile_b_vector(const struct tv_case *c)
{
	run_ecies_vector(c);
	check_uncompressed(c, "hn_public", "hn_public_uncompressed");
	if (tv_has(c, "eph_public_uncompressed"))
		check_uncompressed(c, "eph_public", "eph_public_uncompressed");
}

/*
 * C.4.3.2 / C.4.4.2: a network specific identifier SUPI. The scheme input
 * is the username's octets; the vector's scheme output is reproduced in
 * both SUCI forms, the NAI part as the spec prints it (upper-case hex) is
 * taken on input, and for Profile B the uncompressed home network key
 * gives the same output as the compressed one.
 */
static void run_nai_vector(const struct tv_case *c)
{
	enum tw_suci_scheme s = vec_scheme;
	size_t pl = pub_len_of(s);
	struct tw_suci_hn_key key = { .id = 27, .scheme = s };
	uint8_t eph_priv[32], hn_pub[65], eph_pub[33], z[32], out[TW_SUCI_ECIES_OUTPUT_MAX];
	uint8_t dec[TW_SUCI_INPUT_MAX];
	struct tw_suci_ecies_keys k;
	const char *supi_in = tv_str(c, "supi"), *text = tv_str(c, "scheme_output_text");
	char suci[TW_SUCI_STR_MAX], want[2 * TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX];
	char hex[2 * TW_SUCI_ECIES_OUTPUT_MAX + 1], lower[TW_SUCI_STR_MAX];
	size_t out_len, dec_len, hn_len;

	if (!CHECK(supi_in != NULL && text != NULL && strncmp(supi_in, "nai-", 4) == 0))
		return;
	const char *user = supi_in + 4, *at = strchr(user, '@');
	size_t ulen = (size_t)(at - user);

	CHECK(tv_hex(c, "hn_private", key.priv, 32) == 32);
	CHECK(tv_hex(c, "eph_private", eph_priv, 32) == 32);
	CHECK(tv_hex(c, "hn_public", hn_pub, sizeof(hn_pub)) == pl);
	CHECK(tv_hex(c, "eph_public", eph_pub, sizeof(eph_pub)) == pl);
	CHECK_OK(tw_suci_ecdh(s, eph_priv, hn_pub, pl, z));
	TV_EXPECT(c, "shared_key", z, 32);
	CHECK_OK(tw_suci_ecies_derive(z, eph_pub, pl, &k));
	TV_EXPECT(c, "eph_enc_key", k.enc_key, 16);
	TV_EXPECT(c, "icb", k.icb, 16);
	TV_EXPECT(c, "eph_mac_key", k.mac_key, 32);
	/* the scheme input: the username's octets (§6.12.2) */
	TV_EXPECT(c, "plaintext", (const uint8_t *)user, ulen);
	CHECK_OK(tw_suci_ecies_encrypt(s, hn_pub, pl, eph_priv, (const uint8_t *)user, ulen,
				       out, sizeof(out), &out_len));
	TV_EXPECT(c, "scheme_output", out, out_len);
	CHECK_OK(tw_suci_ecies_decrypt(&key, out, out_len, dec, sizeof(dec), &dec_len));
	CHECK(dec_len == ulen && memcmp(dec, user, ulen) == 0);

	/* TS 29.571 text form: the realm as home network identifier. */
	tw_hex_encode(hex, out, out_len);
	snprintf(want, sizeof(want), "suci-1-%s-0-%d-27-%s", at + 1, (int)s, hex);
	CHECK_OK(tw_suci_conceal(s, hn_pub, pl, 27, supi_in, 0, NULL, eph_priv, suci,
				 sizeof(suci)));
	CHECK(strcmp(suci, want) == 0);
	CHECK_OK(tw_suci_deconceal(&key, 1, want, supi, sizeof(supi)));
	CHECK(strcmp(supi, supi_in) == 0);

	/* TS 23.003 §28.7.3 NAI form: the spec's printed part, lowered. */
	size_t i;
	for (i = 0; text[i] != '\0' && i + 1 < sizeof(lower); i++)
		lower[i] = (char)(text[i] >= 'A' && text[i] <= 'F' ? text[i] - 'A' + 'a' : text[i]);
	lower[i] = '\0';
	/* "ecckey" and "cip"/"mac" keep their letters: only hex was raised */
	snprintf(want, sizeof(want), "type1.rid0.schid%d.hnkey27.%s@%s", (int)s, lower, at + 1);
	CHECK_OK(tw_suci_conceal_nai(s, hn_pub, pl, 27, supi_in, 0, NULL, eph_priv, suci,
				     sizeof(suci)));
	if (!CHECK(strcmp(suci, want) == 0))
		fprintf(stderr, "  got  %s\n  want %s\n", suci, want);
	memset(supi, 0, sizeof(supi));
	CHECK_OK(tw_suci_deconceal(&key, 1, want, supi, sizeof(supi)));
	CHECK(strcmp(supi, supi_in) == 0);
	snprintf(want, sizeof(want), "type1.rid0.schid%d.hnkey27.%s@%s", (int)s, text, at + 1);
	memset(supi, 0, sizeof(supi));
	CHECK_OK(tw_suci_deconceal(&key, 1, want, supi, sizeof(supi)));
	CHECK(strcmp(supi, supi_in) == 0);
	/* a flipped tag bit in the NAI form -> AUTH, nothing written */
	want[strlen(want) - strlen(at) - 1] ^= 0x01;
	CHECK_ERR(tw_suci_deconceal(&key, 1, want, supi, sizeof(supi)), TW_ERR_AUTH);
	CHECK(supi[0] == '\0');

	/* Profile B: the uncompressed home network key (C.4.4.2 prints it
	 * first) gives the same output. */
	if (s == TW_SUCI_SCHEME_PROFILE_B) {
		hn_len = tv_hex(c, "hn_public_uncompressed", hn_pub, sizeof(hn_pub));
		CHECK(hn_len == 65);
		CHECK_OK(tw_suci_conceal(s, hn_pub, hn_len, 27, supi_in, 0, NULL, eph_priv,
					 suci, sizeof(suci)));
		snprintf(want, sizeof(want), "suci-1-%s-0-2-27-%s", at + 1, hex);
		CHECK(strcmp(suci, want) == 0);
	}
	tw_wipe(&k, sizeof(k));
	tw_wipe(&key, sizeof(key));
}

static void run_vector(const struct tv_case *c)
{
	const char *t = tv_str(c, "supi_type");

	if (t != NULL && strcmp(t, "NAI") == 0)
		run_nai_vector(c);
	else if (vec_scheme == TW_SUCI_SCHEME_PROFILE_B)
		run_profile_b_vector(c);
	else
		run_ecies_vector(c);
}

static void test_vectors(void)
{
	vec_scheme = TW_SUCI_SCHEME_PROFILE_A;
	CHECK(tv_run_file("suci_profile_a.vec", run_vector) >= 2);
	vec_scheme = TW_SUCI_SCHEME_PROFILE_B;
	CHECK(tv_run_file("suci_profile_b.vec", run_vector) >= 2);
}

/* ---- null scheme ------------------------------------------------------ */

static void run_null_vector(const struct tv_case *c)
{
	const char *supi_in = tv_str(c, "supi");
	const char *routing = tv_str(c, "routing");
	const char *expect = tv_str(c, "suci");
	unsigned mnc = (unsigned)tv_int(c, "mnc_digits", 0);
	char suci[TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX];
	uint8_t bcd[8];
	char msin[16];
	size_t n, nd;

	if (supi_in == NULL || routing == NULL || expect == NULL)
		return;
	CHECK_OK(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, supi_in, mnc,
				 routing, NULL, suci, sizeof(suci)));
	CHECK(strcmp(suci, expect) == 0);
	CHECK_OK(tw_suci_deconceal(NULL, 0, expect, supi, sizeof(supi)));
	CHECK(strcmp(supi, supi_in) == 0);
	if (tv_has(c, "nai_form")) {
		const char *nf = tv_str(c, "nai_form");

		CHECK_OK(tw_suci_conceal_nai(TW_SUCI_SCHEME_NULL, NULL, 0, 0, supi_in, mnc,
					     routing, NULL, suci, sizeof(suci)));
		CHECK(nf != NULL && strcmp(suci, nf) == 0);
		memset(supi, 0, sizeof(supi));
		CHECK_OK(tw_suci_deconceal_mnc(NULL, 0, nf, mnc, supi, sizeof(supi)));
		CHECK(strcmp(supi, supi_in) == 0);
	}
	if (strncmp(supi_in, "nai-", 4) == 0) {
		/* the scheme input the ECIES profiles would encrypt */
		TV_EXPECT(c, "scheme_input", (const uint8_t *)supi_in + 4,
			  (size_t)(strchr(supi_in, '@') - supi_in - 4));
		return;
	}
	/* The BCD scheme input the ECIES profiles would encrypt. */
	const char *m = supi_in + 5 + 3 + mnc;
	CHECK_OK(tw_suci_msin_to_bcd(m, strlen(m), bcd, sizeof(bcd), &n));
	TV_EXPECT(c, "msin_bcd", bcd, n);
	CHECK_OK(tw_suci_bcd_to_msin(bcd, n, msin, sizeof(msin), &nd));
	CHECK(nd == strlen(m) && strcmp(msin, m) == 0);
	/* Null scheme with a key id other than 0 is refused both ways. */
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 1, supi_in, mnc,
				  routing, NULL, suci, sizeof(suci)),
		  TW_ERR_INVAL);
}

static void test_null(void)
{
	char suci[TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX];

	CHECK(tv_run_file("suci_null.vec", run_null_vector) >= 3);
	/* Shortest and longest MSINs (1 and 10 digits). */
	CHECK_OK(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0,
				 "imsi-001011", 2, "1", NULL, suci, sizeof(suci)));
	CHECK(strcmp(suci, "suci-0-001-01-1-0-0-1") == 0);
	CHECK_OK(tw_suci_deconceal(NULL, 0, suci, supi, sizeof(supi)));
	CHECK(strcmp(supi, "imsi-001011") == 0);
	CHECK_OK(tw_suci_deconceal(NULL, 0, "suci-0-001-01-1-0-0-0123456789",
				   supi, sizeof(supi)));
	CHECK(strcmp(supi, "imsi-001010123456789") == 0);
	/* 11-digit MSIN; 10 digits with a 3-digit MNC = 16-digit IMSI. */
	CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-0-001-01-1-0-0-01234567890",
				    supi, sizeof(supi)),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-0-001-001-1-0-0-0123456789",
				    supi, sizeof(supi)),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-0-001-01-1-0-5-0123456789",
				    supi, sizeof(supi)),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-0-001-01-1-0-0-012345678a",
				    supi, sizeof(supi)),
		  TW_ERR_DECODE);
	/* No output (with a size given) is an argument error, not a write
	 * through NULL; no SUCI wipes the output. */
	{
		char *volatile none = NULL;

		CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-0-001-01-1-0-0-0123456789", none,
					    sizeof(supi)),
			  TW_ERR_INVAL);
		memset(supi, 'x', sizeof(supi));
		CHECK_ERR(tw_suci_deconceal(NULL, 0, none, supi, sizeof(supi)), TW_ERR_INVAL);
		CHECK(supi[0] == '\0' && supi[sizeof(supi) - 1] == '\0');
	}
}

/* ---- BCD -------------------------------------------------------------- */

static void test_bcd(void)
{
	uint8_t b[8];
	char m[16];
	size_t n;

	CHECK_OK(tw_suci_msin_to_bcd("7", 1, b, sizeof(b), &n));
	CHECK(n == 1 && b[0] == 0xf7);
	CHECK_OK(tw_suci_msin_to_bcd("12", 2, b, sizeof(b), &n));
	CHECK(n == 1 && b[0] == 0x21);
	CHECK_ERR(tw_suci_msin_to_bcd("", 0, b, sizeof(b), &n), TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_msin_to_bcd("01234567890", 11, b, sizeof(b), &n),
		  TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_msin_to_bcd("12a", 3, b, sizeof(b), &n), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_msin_to_bcd("12345", 5, b, 2, &n), TW_ERR_OVERFLOW);

	static const uint8_t bad_lo[] = { 0x2a };
	static const uint8_t bad_hi[] = { 0xa2, 0x11 };
	static const uint8_t mid_fill[] = { 0xf1, 0x32 };
	static const uint8_t low_fill[] = { 0x1f };
	static const uint8_t six[] = { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11 };
	static const uint8_t ok[] = { 0x10, 0xf2 };
	CHECK_ERR(tw_suci_bcd_to_msin(bad_lo, 1, m, sizeof(m), &n), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_bcd_to_msin(bad_hi, 2, m, sizeof(m), &n), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_bcd_to_msin(mid_fill, 2, m, sizeof(m), &n),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_bcd_to_msin(low_fill, 1, m, sizeof(m), &n),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_bcd_to_msin(six, 6, m, sizeof(m), &n), TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_bcd_to_msin(ok, 0, m, sizeof(m), &n), TW_ERR_LENGTH);
	CHECK_OK(tw_suci_bcd_to_msin(ok, 2, m, sizeof(m), &n));
	CHECK(n == 3 && strcmp(m, "012") == 0);
	CHECK_ERR(tw_suci_bcd_to_msin(ok, 2, m, 4, &n), TW_ERR_OVERFLOW);
}

/* ---- independent ECIES with OpenSSL EVP only -------------------------- */

/* A fresh key pair from OpenSSL's own key generation: raw private key /
 * scalar (32 octets) and the public key in the profile's encoding. */
static EVP_PKEY *ossl_keygen(enum tw_suci_scheme s, uint8_t priv[32],
			     uint8_t pub[33])
{
	EVP_PKEY *pk;
	size_t n = 32;

	if (s == TW_SUCI_SCHEME_PROFILE_A) {
		pk = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
		if (pk == NULL ||
		    EVP_PKEY_get_raw_private_key(pk, priv, &n) != 1 || n != 32 ||
		    EVP_PKEY_get_raw_public_key(pk, pub, &n) != 1 || n != 32)
			goto fail;
		return pk;
	}
	BIGNUM *d = NULL;
	uint8_t unc[65];
	pk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (pk == NULL ||
	    EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_PRIV_KEY, &d) != 1 ||
	    BN_bn2binpad(d, priv, 32) != 32 ||
	    EVP_PKEY_get_octet_string_param(pk, OSSL_PKEY_PARAM_PUB_KEY, unc,
					    sizeof(unc), &n) != 1 ||
	    n != 65 || unc[0] != 0x04) {
		BN_clear_free(d);
		goto fail;
	}
	BN_clear_free(d);
	/* SEC 1 §2.3.3 point compression, done here by hand: 02|x for an
	 * even y, 03|x for an odd y. */
	pub[0] = (uint8_t)(0x02 | (unc[64] & 1));
	memcpy(pub + 1, unc + 1, 32);
	return pk;
fail:
	EVP_PKEY_free(pk);
	return NULL;
}

/* out = eph_pub | AES-128-CTR | HMAC-SHA-256/64, all by OpenSSL. */
static bool ossl_ecies(EVP_PKEY *eph, const uint8_t *eph_pub, size_t pl,
		       EVP_PKEY *hn, const uint8_t *pt, size_t len, uint8_t *out)
{
	uint8_t z[32], k[64], mac[32];
	size_t zl = sizeof(z);
	unsigned ml = sizeof(mac);
	int outl = 0, fin = 0;
	bool ok = false;
	EVP_PKEY_CTX *dctx = EVP_PKEY_CTX_new(eph, NULL);
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "X963KDF", NULL);
	EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	EVP_CIPHER_CTX *cctx = EVP_CIPHER_CTX_new();
	char digest[] = "SHA256";
	OSSL_PARAM p[4];

	if (dctx == NULL || kctx == NULL || cctx == NULL)
		goto out;
	if (EVP_PKEY_derive_init(dctx) != 1 ||
	    EVP_PKEY_derive_set_peer(dctx, hn) != 1 ||
	    EVP_PKEY_derive(dctx, z, &zl) != 1 || zl != 32)
		goto out;
	p[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
	p[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, z, 32);
	p[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						 (void *)eph_pub, pl);
	p[3] = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, k, sizeof(k), p) != 1)
		goto out;
	memcpy(out, eph_pub, pl);
	if (EVP_EncryptInit_ex(cctx, EVP_aes_128_ctr(), NULL, k, k + 16) != 1 ||
	    EVP_EncryptUpdate(cctx, out + pl, &outl, pt, (int)len) != 1 ||
	    EVP_EncryptFinal_ex(cctx, out + pl + outl, &fin) != 1 ||
	    (size_t)(outl + fin) != len)
		goto out;
	if (HMAC(EVP_sha256(), k + 32, 32, out + pl, len, mac, &ml) == NULL)
		goto out;
	memcpy(out + pl + len, mac, 8);
	ok = true;
out:
	EVP_PKEY_CTX_free(dctx);
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	EVP_CIPHER_CTX_free(cctx);
	return ok;
}

static void cross_check(enum tw_suci_scheme s, int rounds)
{
	size_t pl = pub_len_of(s);
	bool all_ok = true;

	for (int r = 0; r < rounds; r++) {
		uint8_t hn_priv[32], hn_pub[33], eph_priv[32], eph_pub[33];
		uint8_t pub[33], pt[80], ref[33 + 80 + 8], out[33 + 80 + 8];
		uint8_t dec[80];
		size_t n = 0, out_len = 0, dec_len = 0;
		/* Mostly MSIN-sized inputs, some longer (NAI usernames). */
		size_t len = 1 + tw_test_random_u32() % (r % 4 == 0 ? 80 : 5);
		EVP_PKEY *hn = ossl_keygen(s, hn_priv, hn_pub);
		EVP_PKEY *eph = ossl_keygen(s, eph_priv, eph_pub);
		struct tw_suci_hn_key key = { .id = (uint8_t)r, .scheme = s };

		if (hn == NULL || eph == NULL) {
			CHECK(!"OpenSSL key generation");
			EVP_PKEY_free(hn);
			EVP_PKEY_free(eph);
			return;
		}
		memcpy(key.priv, hn_priv, 32);
		tw_test_random(pt, len);
		all_ok &= ossl_ecies(eph, eph_pub, pl, hn, pt, len, ref);
		all_ok &= tw_suci_public_key(&key, pub, sizeof(pub), &n) == TW_OK &&
			  n == pl && memcmp(pub, hn_pub, pl) == 0;
		all_ok &= tw_suci_ecies_encrypt(s, hn_pub, pl, eph_priv, pt, len,
						out, sizeof(out), &out_len) == TW_OK &&
			  out_len == pl + len + 8 &&
			  memcmp(out, ref, out_len) == 0;
		/* Decrypt OpenSSL's output. */
		all_ok &= tw_suci_ecies_decrypt(&key, ref, pl + len + 8, dec,
						sizeof(dec), &dec_len) == TW_OK &&
			  dec_len == len && memcmp(dec, pt, len) == 0;
		/* Fresh random ephemeral key: decrypts, differs each time. */
		uint8_t out2[33 + 80 + 8];
		all_ok &= tw_suci_ecies_encrypt(s, hn_pub, pl, NULL, pt, len, out,
						sizeof(out), &out_len) == TW_OK;
		all_ok &= tw_suci_ecies_encrypt(s, hn_pub, pl, NULL, pt, len, out2,
						sizeof(out2), &out_len) == TW_OK;
		all_ok &= memcmp(out, out2, pl) != 0;
		all_ok &= tw_suci_ecies_decrypt(&key, out2, out_len, dec,
						sizeof(dec), &dec_len) == TW_OK &&
			  dec_len == len && memcmp(dec, pt, len) == 0;
		EVP_PKEY_free(hn);
		EVP_PKEY_free(eph);
		if (!all_ok)
			break;
	}
	CHECK(all_ok);
}

/* ---- round trips with several keys ------------------------------------ */

static void test_round_trips(void)
{
	struct tw_suci_hn_key keys[6];
	uint8_t pubs[6][33];
	static const uint8_t ids[6] = { 1, 1, 7, 200, 255, 0 };
	static const enum tw_suci_scheme schemes[6] = {
		TW_SUCI_SCHEME_PROFILE_A, TW_SUCI_SCHEME_PROFILE_B,
		TW_SUCI_SCHEME_PROFILE_A, TW_SUCI_SCHEME_PROFILE_B,
		TW_SUCI_SCHEME_PROFILE_A, TW_SUCI_SCHEME_PROFILE_B,
	};
	static const char *routings[] = { NULL, "0", "1", "12", "012", "9999" };
	char suci[TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX], imsi[32];
	bool all = true;

	for (int i = 0; i < 6; i++) {
		size_t n;

		keys[i].id = ids[i];
		keys[i].scheme = schemes[i];
		do /* a P-256 scalar from random bytes is < n w.p. 1-2^-32 */
			tw_test_random(keys[i].priv, 32);
		while (tw_suci_public_key(&keys[i], pubs[i], 33, &n) != TW_OK);
	}
	struct tw_suci_hn_ctx ctxs[6];
	for (int i = 0; i < 6; i++)
		CHECK_OK(tw_suci_hn_ctx_init(&ctxs[i], &keys[i]));
	for (int r = 0; r < 60; r++) {
		int i = r % 6;
		unsigned mnc = 2 + (unsigned)(r / 6) % 2;
		size_t nmsin = 1 + tw_test_random_u32() % (mnc == 2 ? 10 : 9);
		const char *ri = routings[(r / 12) % 6];
		char expect_ri[32];
		int p = snprintf(imsi, sizeof(imsi), "imsi-");

		for (size_t d = 0; d < 3 + mnc + nmsin; d++)
			imsi[p++] = (char)('0' + tw_test_random_u32() % 10);
		imsi[p] = '\0';
		all &= tw_suci_conceal(schemes[i], pubs[i],
				       pub_len_of(schemes[i]), ids[i], imsi, mnc,
				       ri, NULL, suci, sizeof(suci)) == TW_OK;
		/* The visible fields are in clear and in place. */
		snprintf(expect_ri, sizeof(expect_ri), "-%s-%d-%u-",
			 ri ? ri : "0", (int)schemes[i], ids[i]);
		all &= strncmp(suci + 7, imsi + 5, 3) == 0 &&
		       strncmp(suci + 11, imsi + 8, mnc) == 0 &&
		       strncmp(suci + 11 + mnc, expect_ri, strlen(expect_ri)) == 0;
		/* Deconceal picks the key by (id, scheme) among all six,
		 * raw and prepared. */
		all &= tw_suci_deconceal(keys, 6, suci, supi, sizeof(supi)) ==
			       TW_OK &&
		       strcmp(supi, imsi) == 0;
		memset(supi, 0, sizeof(supi));
		all &= tw_suci_deconceal_ctx(ctxs, 6, suci, supi, sizeof(supi)) ==
			       TW_OK &&
		       strcmp(supi, imsi) == 0;
		/* Without the right key: NOTFOUND; other keys with the same id
		 * but the other profile do not match. */
		struct tw_suci_hn_key rest[5];
		for (int j = 0, k = 0; j < 6; j++)
			if (j != i)
				rest[k++] = keys[j];
		all &= tw_suci_deconceal(rest, 5, suci, supi, sizeof(supi)) ==
		       TW_ERR_NOTFOUND;
		/* Right id and scheme, wrong private key: AUTH. */
		struct tw_suci_hn_key wrong = keys[i];
		wrong.priv[15] ^= 0x01; /* not a clamped X25519 bit */
		all &= tw_suci_deconceal(&wrong, 1, suci, supi, sizeof(supi)) ==
		       TW_ERR_AUTH;
		if (!all) {
			fprintf(stderr, "round trip %d: %s\n", r, suci);
			break;
		}
	}
	CHECK(all);
	CHECK_ERR(tw_suci_deconceal(keys, 0, "suci-0-001-01-0-1-1-00", supi,
				    sizeof(supi)),
		  TW_ERR_NOTFOUND);
	for (int i = 0; i < 6; i++) {
		tw_suci_hn_ctx_free(&ctxs[i]);
		tw_wipe(keys[i].priv, 32);
	}
	/* Preparing an invalid key fails cleanly. */
	struct tw_suci_hn_key badk = { .id = 1, .scheme = TW_SUCI_SCHEME_PROFILE_B };
	struct tw_suci_hn_ctx badc;
	CHECK_ERR(tw_suci_hn_ctx_init(&badc, &badk), TW_ERR_RANGE); /* scalar 0 */
	badk.scheme = TW_SUCI_SCHEME_NULL;
	CHECK_ERR(tw_suci_hn_ctx_init(&badc, &badk), TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_suci_hn_ctx_init(NULL, &badk), TW_ERR_INVAL);
}

/* ---- invalid keys and points ------------------------------------------ */

static void test_bad_points(void)
{
	uint8_t priv[32], pub[33], z[32], out[64];
	size_t n;

	tw_test_random(priv, 32);
	priv[0] = 0x7f; /* below n */

	/* X25519 low-order points give Z = 0: u = 0 and u = 1. */
	memset(pub, 0, sizeof(pub));
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_A, priv, pub, 32, z),
		  TW_ERR_DECODE);
	pub[0] = 1;
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_A, priv, pub, 32, z),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_A, priv, pub, 33, z),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_ecies_encrypt(TW_SUCI_SCHEME_PROFILE_A, pub, 32, NULL,
					priv, 5, out, sizeof(out), &n),
		  TW_ERR_DECODE);

	/* P-256: find x with x^3 - 3x + b a non-residue mod p (Euler's
	 * criterion computed here with BN), i.e. no point has that x. */
	BN_CTX *bc = BN_CTX_new();
	BIGNUM *p = NULL, *b = NULL, *x = BN_new(), *t = BN_new(),
	       *e = BN_new(), *three = BN_new();
	BN_hex2bn(&p, "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
	BN_hex2bn(&b, "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b");
	bool found = false;
	CHECK(bc && p && b && x && t && e && three);
	if (bc && p && b && x && t && e && three) {
		BN_set_word(three, 3);
		BN_sub(e, p, BN_value_one());
		BN_rshift1(e, e);
		for (unsigned long xv = 0; xv < 100 && !found; xv++) {
			BN_set_word(x, xv);
			BN_mod_exp(t, x, three, p, bc);     /* x^3 */
			BN_mod_sub(t, t, x, p, bc);         /* - x */
			BN_mod_sub(t, t, x, p, bc);
			BN_mod_sub(t, t, x, p, bc);         /* - 3x */
			BN_mod_add(t, t, b, p, bc);         /* + b */
			BN_mod_exp(t, t, e, p, bc);         /* ^((p-1)/2) */
			if (!BN_is_one(t) && !BN_is_zero(t)) {
				found = true;
				pub[0] = 0x02;
				BN_bn2binpad(x, pub + 1, 32);
			}
		}
	}
	CHECK(found);
	if (found) {
		CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 33, z),
			  TW_ERR_DECODE);
		pub[0] = 0x03;
		CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 33, z),
			  TW_ERR_DECODE);
		/* As a received ephemeral key in a scheme output. */
		struct tw_suci_hn_key k = { .id = 3,
					    .scheme = TW_SUCI_SCHEME_PROFILE_B };
		memcpy(k.priv, priv, 32);
		memcpy(out, pub, 33);
		memset(out + 33, 0x5a, 5 + 8);
		CHECK_ERR(tw_suci_ecies_decrypt(&k, out, 33 + 5 + 8, z, sizeof(z),
						&n),
			  TW_ERR_DECODE);
		char hex[2 * 46 + 1], s[160];
		tw_hex_encode(hex, out, 46);
		snprintf(s, sizeof(s), "suci-0-001-01-0-2-3-%s", hex);
		char supi[32];
		CHECK_ERR(tw_suci_deconceal(&k, 1, s, supi, sizeof(supi)),
			  TW_ERR_DECODE);
	}
	/* x = p (not reduced), and x = p + 3 when 3 is on the curve or not:
	 * any x >= p is an invalid encoding. */
	if (p) {
		pub[0] = 0x02;
		BN_bn2binpad(p, pub + 1, 32);
		CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 33, z),
			  TW_ERR_DECODE);
		memset(pub + 1, 0xff, 32);
		CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 33, z),
			  TW_ERR_DECODE);
	}
	/* Valid point, wrong prefix / uncompressed / infinity. */
	uint8_t good[33];
	CHECK_OK(tw_suci_ecc_public(TW_SUCI_SCHEME_PROFILE_B, priv, good, 33, &n));
	CHECK_OK(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, good, 33, z));
	memcpy(pub, good, 33);
	pub[0] = 0x04;
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 33, z),
		  TW_ERR_DECODE);
	pub[0] = 0x00;
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, pub, 1, z),
		  TW_ERR_DECODE);
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, priv, good, 32, z),
		  TW_ERR_DECODE);

	/* Private scalar range for P-256: 0 and n are refused, n-1 is fine. */
	uint8_t d[32];
	memset(d, 0, 32);
	CHECK_ERR(tw_suci_ecc_public(TW_SUCI_SCHEME_PROFILE_B, d, pub, 33, &n),
		  TW_ERR_RANGE);
	CHECK_ERR(tw_suci_ecdh(TW_SUCI_SCHEME_PROFILE_B, d, good, 33, z),
		  TW_ERR_RANGE);
	tw_test_hex(d, 32, "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
	CHECK_ERR(tw_suci_ecc_public(TW_SUCI_SCHEME_PROFILE_B, d, pub, 33, &n),
		  TW_ERR_RANGE);
	d[31] = 0x50; /* n - 1: public key -G: x = Gx, y = p - Gy (even) */
	CHECK_OK(tw_suci_ecc_public(TW_SUCI_SCHEME_PROFILE_B, d, pub, 33, &n));
	uint8_t gx[32];
	tw_test_hex(gx, 32, "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296");
	CHECK(pub[0] == 0x02 && memcmp(pub + 1, gx, 32) == 0);

	/* Unknown schemes. */
	CHECK_ERR(tw_suci_ecc_public(TW_SUCI_SCHEME_NULL, priv, pub, 33, &n),
		  TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_suci_ecdh((enum tw_suci_scheme)3, priv, good, 33, z),
		  TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_suci_ecies_encrypt((enum tw_suci_scheme)3, good, 33, NULL,
					priv, 5, out, sizeof(out), &n),
		  TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_suci_ecies_encrypt(TW_SUCI_SCHEME_PROFILE_B, good, 33, NULL,
					priv, 0, out, sizeof(out), &n),
		  TW_ERR_LENGTH);
	struct tw_suci_hn_key nk = { .id = 0, .scheme = TW_SUCI_SCHEME_NULL };
	CHECK_ERR(tw_suci_ecies_decrypt(&nk, out, sizeof(out), z, sizeof(z), &n),
		  TW_ERR_UNSUPPORTED);

	BN_free(p);
	BN_free(b);
	BN_free(x);
	BN_free(t);
	BN_free(e);
	BN_free(three);
	BN_CTX_free(bc);
}

/* ---- public keys received: edge cases -------------------------------- */

/* OpenSSL's own X25519 with a random private key and u as the peer: 1 if
 * it yields a shared secret (OpenSSL refuses an all-zero one). */
static int ossl_x25519_ok(const uint8_t u[32])
{
	uint8_t priv[32], z[32];
	size_t zl = 32;
	EVP_PKEY *a, *b;
	EVP_PKEY_CTX *cx;
	int ok = 0;

	tw_test_random(priv, 32);
	a = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
	b = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, u, 32);
	cx = a ? EVP_PKEY_CTX_new(a, NULL) : NULL;
	if (cx != NULL && b != NULL && EVP_PKEY_derive_init(cx) == 1 &&
	    EVP_PKEY_derive_set_peer(cx, b) == 1)
		ok = EVP_PKEY_derive(cx, z, &zl) == 1;
	EVP_PKEY_CTX_free(cx);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
	return ok;
}

/* The key is refused with a reason containing `why`, by every entry
 * point: the check, ECDH, ECIES encryption (nothing written) and
 * conceal; as an ephemeral key in a scheme output, by decryption. */
static bool refused(enum tw_suci_scheme s, const uint8_t *pub, size_t len, const char *why,
		    const struct tw_suci_hn_key *hn)
{
	uint8_t priv[32], z[32], out[128], pt[5] = { 0x21, 0x43, 0x65, 0x87, 0xf9 };
	const char *r = NULL;
	char suci[TW_SUCI_STR_MAX];
	size_t n = 0;
	bool ok = true;

	memset(priv, 0x11, sizeof(priv));
	ok &= tw_suci_check_public(s, pub, len, &r) == TW_ERR_DECODE && r != NULL &&
	      strstr(r, why) != NULL;
	if (!ok)
		fprintf(stderr, "  check: %s (want '%s')\n", r ? r : "accepted", why);
	ok &= tw_suci_ecdh(s, priv, pub, len, z) == TW_ERR_DECODE && tw_ct_is_zero(z, 32);
	memset(out, 0x5a, sizeof(out));
	ok &= tw_suci_ecies_encrypt(s, pub, len, NULL, pt, sizeof(pt), out, sizeof(out), &n) ==
	      TW_ERR_DECODE;
	ok &= tw_suci_conceal(s, pub, len, 1, "imsi-001010123456789", 2, NULL, NULL, suci,
			      sizeof(suci)) == TW_ERR_DECODE && suci[0] == '\0';
	if (len == pub_len_of(s) && hn != NULL) {
		/* eph | 5 octets | tag */
		memcpy(out, pub, len);
		memset(out + len, 0x33, 13);
		ok &= tw_suci_ecies_decrypt(hn, out, len + 13, pt, sizeof(pt), &n) ==
		      TW_ERR_DECODE;
	}
	return ok;
}

static void test_public_keys(void)
{
	struct tw_suci_hn_key ka = { .id = 1, .scheme = TW_SUCI_SCHEME_PROFILE_A };
	struct tw_suci_hn_key kb = { .id = 2, .scheme = TW_SUCI_SCHEME_PROFILE_B };
	const enum tw_suci_scheme A = TW_SUCI_SCHEME_PROFILE_A, B = TW_SUCI_SCHEME_PROFILE_B;
	uint8_t u[32], g33[33], g65[65], bad[66], priv[32], z1[32], z2[32];
	const char *why = NULL;
	size_t n;

	tw_test_random(ka.priv, 32);
	memset(kb.priv, 0x22, 32);

	/* X25519 points of small order (RFC 7748 §6.1, §7; the list of
	 * canonical u-coordinates of order 1, 2, 4 and 8 as published by
	 * Bernstein, "How do I validate Curve25519 public keys?"): OpenSSL
	 * gives no shared secret for any of them, and neither do we. */
	static const char *const small[] = {
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0100000000000000000000000000000000000000000000000000000000000000",
		"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
		"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	};
	for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
		tw_test_hex(u, 32, small[i]);
		CHECK(ossl_x25519_ok(u) == 0);
		if (!CHECK(refused(A, u, 32, "small order", &ka)))
			fprintf(stderr, "  small-order point %zu\n", i);
	}
	/* Non-canonical encodings: u >= p (p, p + 1, p + 9, 2^255 - 1) and
	 * bit 255 set on a good key. RFC 7748 would reduce them; a SUCI has
	 * no use for them. */
	static const char *const noncanon[] = {
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	};
	for (size_t i = 0; i < sizeof(noncanon) / sizeof(noncanon[0]); i++) {
		tw_test_hex(u, 32, noncanon[i]);
		CHECK(refused(A, u, 32, "not canonical", &ka));
	}
	CHECK_OK(tw_suci_public_key(&ka, u, sizeof(u), &n));
	CHECK_OK(tw_suci_check_public(A, u, 32, &why));
	CHECK(why == NULL);
	u[31] |= 0x80;
	CHECK(refused(A, u, 32, "bit 255", &ka));
	u[31] &= 0x7f;
	/* The base point u = 9 and the largest canonical u, p - 2, are fine. */
	tw_test_hex(u, 32, "0900000000000000000000000000000000000000000000000000000000000000");
	CHECK_OK(tw_suci_check_public(A, u, 32, NULL));
	tw_test_hex(u, 32, "ebffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
	CHECK_OK(tw_suci_check_public(A, u, 32, NULL));
	CHECK(ossl_x25519_ok(u) == 1);
	for (size_t len = 0; len < 66; len += (len == 30 ? 1 : len == 33 ? 30 : 3))
		if (len != 32)
			CHECK(refused(A, u, len, "32 octets", NULL));

	/* P-256: the generator G (SEC 2 §2.4.2) in both forms. */
	tw_test_hex(g65, 65, "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
			     "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5");
	memcpy(g33, g65, 33);
	g33[0] = 0x02 | (g65[64] & 1);
	CHECK_OK(tw_suci_check_public(B, g33, 33, NULL));
	CHECK_OK(tw_suci_check_public(B, g65, 65, NULL));
	/* ECDH with either form of a key is the same Z. */
	memset(priv, 0x07, sizeof(priv));
	CHECK_OK(tw_suci_ecdh(B, priv, g33, 33, z1));
	CHECK_OK(tw_suci_ecdh(B, priv, g65, 65, z2));
	CHECK(memcmp(z1, z2, 32) == 0);
	/* Off the curve: y + 1, (0, 0), G's x with the y of 2G's... */
	memcpy(bad, g65, 65);
	bad[64] ^= 0x01;
	CHECK(refused(B, bad, 65, "not a point on P-256", NULL));
	memset(bad, 0, 65);
	bad[0] = 0x04;
	CHECK(refused(B, bad, 65, "not a point on P-256", NULL));
	/* Coordinates at or above p. */
	tw_test_hex(bad + 1, 32, "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
	memcpy(bad + 33, g65 + 33, 32);
	CHECK(refused(B, bad, 65, "not below the field prime", NULL));
	bad[0] = 0x02;
	CHECK(refused(B, bad, 33, "not below the field prime", &kb));
	memcpy(bad, g65, 65);
	tw_test_hex(bad + 33, 32, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	CHECK(refused(B, bad, 65, "not below the field prime", NULL));
	/* The point at infinity (SEC 1 §2.3.3: the single octet 00). */
	bad[0] = 0x00;
	CHECK(refused(B, bad, 1, "infinity", NULL));
	/* The hybrid form (SEC 1 §2.3.3, 06/07 | x | y), which OpenSSL's
	 * decoder would take, and wrong prefixes for the length. */
	memcpy(bad, g65, 65);
	bad[0] = (uint8_t)(0x06 | (g65[64] & 1));
	CHECK(refused(B, bad, 65, "hybrid", NULL));
	bad[0] = 0x02;
	CHECK(refused(B, bad, 65, "begin with 04", NULL));
	memcpy(bad, g33, 33);
	bad[0] = 0x04;
	CHECK(refused(B, bad, 33, "begin with 02 or 03", &kb));
	bad[0] = 0x00;
	CHECK(refused(B, bad, 33, "begin with 02 or 03", &kb));
	/* Wrong lengths. */
	static const size_t lens[] = { 0, 2, 32, 34, 64, 66 };
	memcpy(bad, g65, 65);
	bad[65] = 0;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		CHECK(refused(B, bad, lens[i], "octets", NULL));
	/* Random uncompressed points: ours agrees with OpenSSL's decoder
	 * (which checks the curve equation) on which are points. */
	{
		EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
		EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
		int agree = 0, points = 0;

		CHECK(pt != NULL);
		for (int i = 0; pt != NULL && i < 200; i++) {
			memcpy(bad, g65, 65);
			if (i % 2) /* a point: a multiple of G */
				bad[1 + tw_test_random_u32() % 64] ^= 0;
			else
				bad[1 + tw_test_random_u32() % 64] ^= (uint8_t)(1u << (i % 8));
			int ossl = EC_POINT_oct2point(g, pt, bad, 65, NULL) == 1;
			int ours = tw_suci_check_public(B, bad, 65, NULL) == TW_OK;

			points += ossl;
			agree += ossl == ours;
		}
		CHECK(agree == 200 && points >= 100);
		EC_POINT_free(pt);
		EC_GROUP_free(g);
	}
	CHECK_ERR(tw_suci_check_public(TW_SUCI_SCHEME_NULL, g33, 33, NULL), TW_ERR_UNSUPPORTED);
	tw_wipe(&ka, sizeof(ka));
	tw_wipe(&kb, sizeof(kb));
}

/* ---- NAI SUPIs (TS 23.003 §28.7, RFC 7542) ---------------------------- */

static void test_nai(void)
{
	struct tw_suci_hn_key keys[2] = {
		{ .id = 3, .scheme = TW_SUCI_SCHEME_PROFILE_A },
		{ .id = 4, .scheme = TW_SUCI_SCHEME_PROFILE_B },
	};
	uint8_t pubs[2][33];
	char suci[TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX], in[2 * TW_SUCI_SUPI_STR_MAX];
	size_t n;
	bool all = true;

	tw_test_random(keys[0].priv, 32);
	memset(keys[1].priv, 0x31, 32);
	CHECK_OK(tw_suci_public_key(&keys[0], pubs[0], 33, &n));
	CHECK_OK(tw_suci_public_key(&keys[1], pubs[1], 33, &n));

	/* Usernames and realms RFC 7542 allows, the awkward ones included:
	 * dashes (the text form's separator), dots, UTF-8, every atext
	 * punctuation, the longest (253 octets in all). */
	char longuser[TW_SUCI_USERNAME_MAX + 1], longrealm[TW_SUCI_REALM_MAX + 1];
	memset(longuser, 'u', TW_SUCI_USERNAME_MAX);
	longuser[TW_SUCI_USERNAME_MAX] = '\0';
	for (size_t i = 0; i < TW_SUCI_REALM_MAX; i++) /* labels of 49 + dots */
		longrealm[i] = i % 50 == 49 ? '.' : 'r';
	longrealm[TW_SUCI_REALM_MAX] = '\0';
	static const char *const users[] = { "a", "verylongusername1", "joe-smith", "a.b.c",
					     "x--1-0-0-y", "!#$%&'*+-/=?^_`{|}~",
					     "\xc3\xa9l\xc3\xa8ve", "\xf0\x9f\x93\xb1", "0-0-0" };
	static const char *const realms[] = { "3gpp.com", "my-operator.example.net",
					      "a.b", "xn--bcher-kva.example", "\xc3\xa9.fr",
					      "nid0123.mnc01.mcc001.example" };
	for (size_t r = 0; r < 3 * 11 * 6; r++) {
		size_t ui = (r / 3) % 11, ri = r % 6;
		int k = (int)(r % 3) - 1; /* -1 null, 0 A, 1 B */
		enum tw_suci_scheme sch = k < 0 ? TW_SUCI_SCHEME_NULL : keys[k].scheme;
		const char *user = ui < 9 ? users[ui] : longuser;
		const char *realm = ui == 10 ? "a.b" : realms[ri];

		if (ui == 9)
			realm = "a.b", user = longuser;
		if (ui == 10)
			user = "u", realm = longrealm;
		snprintf(in, sizeof(in), "nai-%s@%s", user, realm);
		for (int form = 0; form < 2; form++) {
			int rc = (form ? tw_suci_conceal_nai : tw_suci_conceal)(
				sch, k < 0 ? NULL : pubs[k], k < 0 ? 0 : pub_len_of(sch),
				k < 0 ? 0 : keys[k].id, in, 0, "42", NULL, suci, sizeof(suci));
			unsigned t = 9, sc = 99, kid = 999;

			all &= rc == TW_OK;
			all &= tw_suci_peek(suci, &t, &sc, &kid) == TW_OK && t == 1 &&
			       sc == (unsigned)sch && kid == (k < 0 ? 0u : keys[k].id);
			memset(supi, 0, sizeof(supi));
			rc = tw_suci_deconceal(keys, 2, suci, supi, sizeof(supi));
			all &= rc == TW_OK && strcmp(supi, in) == 0;
			/* the username is hidden unless the scheme is null */
			if (k >= 0 && strlen(user) > 3)
				all &= strstr(suci, user) == NULL;
			if (!all) {
				fprintf(stderr, "  NAI round trip: %s -> %s (%d)\n", in, suci, rc);
				break;
			}
		}
		if (!all)
			break;
	}
	CHECK(all);

	/* SUPIs refused by conceal. */
	static const struct {
		const char *supi;
		int err;
	} bad_supis[] = {
		{ "nai-user", TW_ERR_DECODE },             /* no realm */
		{ "nai-@3gpp.com", TW_ERR_DECODE },        /* empty username */
		{ "nai-user@", TW_ERR_DECODE },
		{ "nai-user@com", TW_ERR_DECODE },         /* one label */
		{ "nai-.user@3gpp.com", TW_ERR_DECODE },
		{ "nai-user.@3gpp.com", TW_ERR_DECODE },
		{ "nai-us..er@3gpp.com", TW_ERR_DECODE },
		{ "nai-us er@3gpp.com", TW_ERR_DECODE },
		{ "nai-us\"er@3gpp.com", TW_ERR_DECODE },
		{ "nai-a@b@3gpp.com", TW_ERR_DECODE },
		{ "nai-user@-3gpp.com", TW_ERR_DECODE },
		{ "nai-user@3gpp-.com", TW_ERR_DECODE },
		{ "nai-user@3gpp..com", TW_ERR_DECODE },
		{ "nai-user@3gpp.com.", TW_ERR_DECODE },
		{ "nai-user@3g_pp.com", TW_ERR_DECODE },
		{ "nai-\xc0\x80@3gpp.com", TW_ERR_DECODE },  /* overlong NUL */
		{ "nai-\xed\xa0\x80@3gpp.com", TW_ERR_DECODE }, /* surrogate */
		{ "nai-\xf4\x90\x80\x80@3gpp.com", TW_ERR_DECODE }, /* > U+10FFFF */
		{ "nai-\xc3@3gpp.com", TW_ERR_DECODE },      /* cut sequence */
		{ "gci-abc@3gpp.com", TW_ERR_UNSUPPORTED },
		{ "gli-abc@3gpp.com", TW_ERR_UNSUPPORTED },
		{ "NAI-user@3gpp.com", TW_ERR_DECODE },
	};
	for (size_t i = 0; i < sizeof(bad_supis) / sizeof(bad_supis[0]); i++) {
		int rc = tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, bad_supis[i].supi, 0,
					 NULL, NULL, suci, sizeof(suci));
		if (!CHECK(rc == bad_supis[i].err))
			fprintf(stderr, "  conceal \"%s\": %d\n", bad_supis[i].supi, rc);
	}
	/* A label of 64 octets; an NAI of 254 octets. */
	snprintf(in, sizeof(in), "nai-u@%.64s.com", longuser);
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, in, 0, NULL, NULL, suci,
				  sizeof(suci)), TW_ERR_DECODE);
	snprintf(in, sizeof(in), "nai-%s@ab.c", longuser);
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, in, 0, NULL, NULL, suci,
				  sizeof(suci)), TW_ERR_LENGTH);

	/* SUCIs refused by deconceal. */
	static const struct {
		const char *s;
		int err;
	} bad[] = {
		{ "suci-1-3gpp.com-0-0-0-", TW_ERR_DECODE },
		{ "suci-1-3gpp.com-0-0-1-user", TW_ERR_DECODE },     /* null, key id 1 */
		{ "suci-1-3gpp.com-0-0-0-us er", TW_ERR_DECODE },
		{ "suci-1-com-0-0-0-user", TW_ERR_DECODE },
		{ "suci-1-3gpp.com-00000-0-0-user", TW_ERR_DECODE },
		{ "suci-1-3gpp.com-0-3-1-00", TW_ERR_UNSUPPORTED },
		{ "suci-2-3gpp.com-0-0-0-user", TW_ERR_UNSUPPORTED }, /* GCI */
		{ "suci-1-3gpp.com-0-1-1-0g", TW_ERR_DECODE },
		{ "suci-1-3gpp.com-0-1-3-00", TW_ERR_LENGTH },
		{ "type1.rid0.schid0.useridjoe@3gpp.com", TW_OK },
		{ "type1.rid0.schid0.userid@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid0.useridjoe", TW_ERR_DECODE },
		{ "type1.rid0.schid0.useridjoe@com", TW_ERR_DECODE },
		{ "type1.rid0.schid0.userjoe@3gpp.com", TW_ERR_DECODE },
		{ "type1.schid0.rid0.useridjoe@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid.schid0.useridjoe@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid12345.schid0.useridjoe@3gpp.com", TW_ERR_DECODE },
		{ "type12.rid0.schid0.useridjoe@3gpp.com", TW_ERR_DECODE },
		{ "type3.rid0.schid0.useridjoe@3gpp.com", TW_ERR_UNSUPPORTED },
		{ "type1.rid0.schid16.hnkey1.ecckey00.cip00.mac00@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey1.ecckey00.cip00@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey256.ecckey00.cip00.mac00@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey1.ecckey0.cip00.mac00@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey1.ecckeyzz.cip00.mac00@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey1.ecckey00.cip00.mac00.x@3gpp.com", TW_ERR_DECODE },
		{ "type1.rid0.schid1.hnkey3.ecckey00.cip00.mac00@3gpp.com", TW_ERR_LENGTH },
		{ "type0.rid0.schid0.userid123@5gc.mnc01.mcc001.3gppnetwork.org", TW_ERR_DECODE },
		{ "type0.rid0.schid0.userid12a@5gc.mnc001.mcc001.3gppnetwork.org", TW_ERR_DECODE },
		{ "type0.rid0.schid0.userid123@5gc.mnc001.mcc001.3gppnetwork.com", TW_ERR_DECODE },
		{ "type0.rid0.schid0.userid123@5gc.nid0a.mnc001.mcc001.3gppnetwork.org",
		  TW_ERR_UNSUPPORTED },
		{ "type0.rid0.schid0.userid123@5gc.mnc001.mcc001.3gppnetwork.org", TW_OK },
		{ "type0.rid0.schid0.userid12345678901@5gc.mnc001.mcc001.3gppnetwork.org",
		  TW_ERR_LENGTH },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = tw_suci_deconceal(keys, 2, bad[i].s, supi, sizeof(supi));

		if (!CHECK(rc == bad[i].err))
			fprintf(stderr, "  \"%s\": got %d want %d\n", bad[i].s, rc, bad[i].err);
		if (rc != TW_OK)
			CHECK(supi[0] == '\0');
	}
	/* A null-scheme NAI SUCI names its MNC; the hint decides. */
	CHECK_OK(tw_suci_deconceal(NULL, 0, "type0.rid0.schid0.userid123@5gc.mnc001.mcc001."
				   "3gppnetwork.org", supi, sizeof(supi)));
	CHECK(strcmp(supi, "imsi-00101123") == 0);
	CHECK_OK(tw_suci_deconceal_mnc(NULL, 0, "type0.rid0.schid0.userid123@5gc.mnc001.mcc001."
				       "3gppnetwork.org", 3, supi, sizeof(supi)));
	CHECK(strcmp(supi, "imsi-001001123") == 0);
	CHECK_ERR(tw_suci_deconceal_mnc(NULL, 0, "type0.rid0.schid0.userid123@5gc.mnc101."
					"mcc001.3gppnetwork.org", 2, supi, sizeof(supi)),
		  TW_ERR_DECODE);
	/* An ECIES NAI output that decrypts to something not a username is
	 * refused after the tag verifies: encrypt a space. */
	{
		uint8_t out[64];
		char h[129], s2[TW_SUCI_STR_MAX];
		size_t ol;

		CHECK_OK(tw_suci_ecies_encrypt(keys[0].scheme, pubs[0], 32, NULL,
					       (const uint8_t *)"a b", 3, out, sizeof(out), &ol));
		tw_hex_encode(h, out, ol);
		snprintf(s2, sizeof(s2), "suci-1-3gpp.com-0-1-3-%s", h);
		CHECK_ERR(tw_suci_deconceal(keys, 2, s2, supi, sizeof(supi)), TW_ERR_DECODE);
		/* an IMSI SUCI whose plaintext is 6 octets: too long */
		CHECK_OK(tw_suci_ecies_encrypt(keys[0].scheme, pubs[0], 32, NULL,
					       (const uint8_t *)"\x21\x43\x65\x87\x09\x21", 6,
					       out, sizeof(out), &ol));
		tw_hex_encode(h, out, ol);
		snprintf(s2, sizeof(s2), "suci-0-001-01-0-1-3-%s", h);
		CHECK_ERR(tw_suci_deconceal(keys, 2, s2, supi, sizeof(supi)), TW_ERR_LENGTH);
	}
	/* The text form of a null-scheme NAI cannot carry a username that
	 * reads as an ECIES tail after a realm with a dash: refused there,
	 * carried by the NAI form; an ECIES SUCI of the same NAI is fine. */
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "nai-x-0-1-27-abcd@a.b", 0,
				  "17", NULL, suci, sizeof(suci)), TW_ERR_UNSUPPORTED);
	CHECK(suci[0] == '\0');
	CHECK_OK(tw_suci_conceal_nai(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "nai-x-0-1-27-abcd@a.b",
				     0, "17", NULL, suci, sizeof(suci)));
	CHECK_OK(tw_suci_deconceal(NULL, 0, suci, supi, sizeof(supi)));
	CHECK(strcmp(supi, "nai-x-0-1-27-abcd@a.b") == 0);
	CHECK_OK(tw_suci_conceal(keys[0].scheme, pubs[0], 32, keys[0].id,
				 "nai-x-0-1-27-abcd@a.b", 0, "17", NULL, suci, sizeof(suci)));
	CHECK_OK(tw_suci_deconceal(keys, 2, suci, supi, sizeof(supi)));
	CHECK(strcmp(supi, "nai-x-0-1-27-abcd@a.b") == 0);
	/* the text form whose tail is not hex is the null scheme's */
	CHECK_OK(tw_suci_deconceal(NULL, 0, "suci-1-a.b-17-0-0-x-0-1-27-zz", supi, sizeof(supi)));
	CHECK(strcmp(supi, "nai-x-0-1-27-zz@a.b") == 0);
	/* A buffer too small for the SUPI. */
	CHECK_ERR(tw_suci_deconceal(NULL, 0, "suci-1-3gpp.com-0-0-0-joe", supi, 12),
		  TW_ERR_OVERFLOW);
	CHECK_OK(tw_suci_deconceal(NULL, 0, "suci-1-3gpp.com-0-0-0-joe", supi, 17));
	CHECK(strcmp(supi, "nai-joe@3gpp.com") == 0);
	tw_wipe(keys, sizeof(keys));
}

/* ---- malformed strings and conceal arguments -------------------------- */

static void test_malformed(void)
{
	struct tw_suci_hn_key k = { .id = 1, .scheme = TW_SUCI_SCHEME_PROFILE_A };
	char supi[TW_SUCI_SUPI_STR_MAX], suci[TW_SUCI_STR_MAX];
	uint8_t pub[33];
	size_t n;
	static const struct {
		const char *s;
		int err;
	} cases[] = {
		{ "", TW_ERR_DECODE },
		{ "suci", TW_ERR_DECODE },
		{ "suci-0-234-15-678-0-0", TW_ERR_DECODE },          /* 7 fields */
		{ "suci-0-234-15-678-0-0-", TW_ERR_DECODE },         /* empty output */
		{ "suci-0-234-15-678-0-0-0999-9", TW_ERR_DECODE },   /* 9 fields */
		{ "SUCI-0-234-15-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-15-678-0-0-0999999999 ", TW_ERR_DECODE },
		{ "suci--234-15-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-00-234-15-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-8-234-15-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-1-234-15-678-0-0-0999999999", TW_ERR_DECODE }, /* realm "234-15" */
		{ "suci-0-23-15-678-0-0-0999999999", TW_ERR_DECODE },  /* MCC 2 */
		{ "suci-0-2345-15-678-0-0-0999999999", TW_ERR_DECODE },/* MCC 4 */
		{ "suci-0-23a-15-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-1-678-0-0-0999999999", TW_ERR_DECODE },  /* MNC 1 */
		{ "suci-0-234-1534-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-1x-678-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-15--0-0-0999999999", TW_ERR_DECODE },    /* RI empty */
		{ "suci-0-234-15-67890-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-15-6+8-0-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-15-678-00-0-0999999999", TW_ERR_DECODE },
		{ "suci-0-234-15-678-16-1-00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-3-1-00", TW_ERR_UNSUPPORTED },
		{ "suci-0-234-15-678-15-1-00", TW_ERR_UNSUPPORTED },
		{ "suci-0-234-15-678-a-1-00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-256-00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-01-00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-1000-00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1--00", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-1-0", TW_ERR_DECODE },          /* odd hex */
		{ "suci-0-234-15-678-1-1-zz", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-1-0g", TW_ERR_DECODE },
		{ "suci-0-234-15-678-1-1-00", TW_ERR_LENGTH },         /* short */
		{ "suci-0-234-15-678-0-0-09999999999", TW_ERR_LENGTH },/* MSIN 11 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = tw_suci_deconceal(&k, 1, cases[i].s, supi, sizeof(supi));

		if (!CHECK(rc == cases[i].err))
			fprintf(stderr, "  \"%s\": got %d want %d\n", cases[i].s,
				rc, cases[i].err);
	}
	/* A scheme output longer than any IMSI's. */
	char longs[200] = "suci-0-001-01-0-1-1-";
	memset(longs + strlen(longs), 'a', 2 * 47);
	CHECK_ERR(tw_suci_deconceal(&k, 1, longs, supi, sizeof(supi)),
		  TW_ERR_LENGTH);
	/* A very long string is refused by length, not read to the end. */
	static char huge[4096];
	memset(huge, '1', sizeof(huge) - 1);
	memcpy(huge, "suci-0-001-01-0-1-1-", 20);
	CHECK_ERR(tw_suci_deconceal(&k, 1, huge, supi, sizeof(supi)),
		  TW_ERR_LENGTH);

	/* Conceal arguments. */
	tw_test_random(k.priv, 32);
	CHECK_OK(tw_suci_public_key(&k, pub, sizeof(pub), &n));
	const enum tw_suci_scheme A = TW_SUCI_SCHEME_PROFILE_A;
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-00101", 2, NULL, NULL,
				  suci, sizeof(suci)), TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010", 3, NULL, NULL,
				  suci, sizeof(suci)), TW_ERR_LENGTH);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-0010101234567890", 2,
				  NULL, NULL, suci, sizeof(suci)), TW_ERR_LENGTH);
	CHECK_OK(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 3,
				 NULL, NULL, suci, sizeof(suci)));
	CHECK(strncmp(suci, "suci-0-001-010-0-1-1-", 21) == 0);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-00101012345678x", 2,
				  NULL, NULL, suci, sizeof(suci)), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "nai-001010123456789", 2, NULL,
				  NULL, suci, sizeof(suci)), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 4,
				  NULL, NULL, suci, sizeof(suci)), TW_ERR_INVAL);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 1,
				  NULL, NULL, suci, sizeof(suci)), TW_ERR_INVAL);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 2,
				  "12345", NULL, suci, sizeof(suci)), TW_ERR_INVAL);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 2, "",
				  NULL, suci, sizeof(suci)), TW_ERR_INVAL);
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 2,
				  "1-2", NULL, suci, sizeof(suci)), TW_ERR_INVAL);
	CHECK_ERR(tw_suci_conceal((enum tw_suci_scheme)3, pub, 32, 1,
				  "imsi-001010123456789", 2, NULL, NULL, suci,
				  sizeof(suci)), TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_suci_conceal(A, pub, 31, 1, "imsi-001010123456789", 2, NULL,
				  NULL, suci, sizeof(suci)), TW_ERR_DECODE);
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_PROFILE_B, pub, 32, 1,
				  "imsi-001010123456789", 2, NULL, NULL, suci,
				  sizeof(suci)), TW_ERR_DECODE);
	CHECK(suci[0] == '\0');
	CHECK_ERR(tw_suci_conceal(A, pub, 32, 1, "imsi-001010123456789", 2, NULL,
				  NULL, suci, 20), TW_ERR_OVERFLOW);
	CHECK_ERR(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0,
				  "imsi-001010123456789", 2, NULL, NULL, suci,
				  strlen("suci-0-001-01-0-0-0-0123456789")),
		  TW_ERR_OVERFLOW);
	tw_wipe(k.priv, 32);
}

/* ---- random mutations of valid strings -------------------------------- */

static int atoi_n(const char *s, size_t n)
{
	int v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/* The grammar of tw_suci_deconceal's doc, written out a second way. */
static bool ref_well_formed(const char *s, size_t out_min_hex,
			    size_t out_max_hex)
{
	const char *f[9];
	size_t l[9], nf = 0;
	const char *st = s;

	for (const char *p = s;; p++) {
		if (*p == '-' || *p == '\0') {
			if (nf == 9)
				return false;
			f[nf] = st;
			l[nf++] = (size_t)(p - st);
			st = p + 1;
			if (*p == '\0')
				break;
		}
	}
	if (nf != 8 || l[0] != 4 || memcmp(f[0], "suci", 4) != 0 ||
	    l[1] != 1 || f[1][0] != '0' || l[2] != 3 || !digits(f[2], 3) ||
	    l[3] < 2 || l[3] > 3 || !digits(f[3], l[3]) || l[4] < 1 ||
	    l[4] > 4 || !digits(f[4], l[4]) || l[5] != 1 ||
	    (f[5][0] != '0' && f[5][0] != '1' && f[5][0] != '2') ||
	    !digits(f[6], l[6]) || l[6] > 3 || (l[6] > 1 && f[6][0] == '0') ||
	    atoi_n(f[6], l[6]) > 255)
		return false;
	if (f[5][0] == '0')
		return l[6] == 1 && f[6][0] == '0' && digits(f[7], l[7]) &&
		       l[7] <= 10 && 3 + l[3] + l[7] <= 15;
	if (l[7] % 2 != 0 || l[7] < out_min_hex || l[7] > out_max_hex)
		return false;
	for (size_t i = 0; i < l[7]; i++) {
		char c = f[7][i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

static void mutate(char *s, size_t max)
{
	static const char alphabet[] = "0123456789abcdefABCDEF-suciSUCIxyz +\x01\x80";
	size_t len = strlen(s);
	unsigned op = tw_test_random_u32() % 6;
	size_t pos = len ? tw_test_random_u32() % len : 0;
	char c = alphabet[tw_test_random_u32() % (sizeof(alphabet) - 1)];

	switch (op) {
	case 0: /* replace */
		if (len)
			s[pos] = c;
		break;
	case 1: /* delete */
		if (len)
			memmove(s + pos, s + pos + 1, len - pos);
		break;
	case 2: /* insert */
		if (len + 2 < max) {
			memmove(s + pos + 1, s + pos, len - pos + 1);
			s[pos] = c;
		}
		break;
	case 3: /* truncate */
		s[pos] = '\0';
		break;
	case 4: /* duplicate a run */
		if (len && len + 8 < max) {
			size_t run = 1 + tw_test_random_u32() % 8;
			if (pos + run > len)
				run = len - pos;
			memmove(s + pos + run, s + pos, len - pos + 1);
		}
		break;
	default: /* flip a low bit of a character (digit <-> digit, etc.) */
		if (len)
			s[pos] = (char)(s[pos] ^ (1 << (tw_test_random_u32() % 3)));
		if (len && s[pos] == '\0')
			s[pos] = '0';
		break;
	}
}

static void fuzz_one(const struct tw_suci_hn_key *keys, size_t nkeys,
		     const char *valid, const char *supi_valid, int rounds)
{
	char s[TW_SUCI_STR_MAX + 16], supi[TW_SUCI_SUPI_STR_MAX];
	bool all = true;
	int n_ok = 0;

	for (int r = 0; r < rounds && all; r++) {
		snprintf(s, sizeof(s), "%s", valid);
		int nm = 1 + (int)(tw_test_random_u32() % 3);
		for (int m = 0; m < nm; m++)
			mutate(s, sizeof(s));
		int rc = tw_suci_deconceal(keys, nkeys, s, supi, sizeof(supi));
		bool ok_rc = rc == TW_OK || rc == TW_ERR_DECODE ||
			     rc == TW_ERR_LENGTH || rc == TW_ERR_AUTH ||
			     rc == TW_ERR_NOTFOUND || rc == TW_ERR_UNSUPPORTED;
		if (rc == TW_OK) {
			n_ok++;
			/* Accepted strings are well-formed, and an ECIES one
			 * still carries the original scheme output (else its
			 * tag would have failed), so the MSIN is unchanged. */
			ok_rc &= ref_well_formed(s, 2 * (32 + 1 + 8),
						 2 * (33 + 5 + 8));
			ok_rc &= strncmp(supi, "imsi-", 5) == 0;
			const char *msin_valid = supi_valid + strlen(supi_valid);
			const char *msin_got = supi + strlen(supi);
			if (strstr(valid, "-0-0-") == NULL)
				ok_rc &= strcmp(msin_valid - 4, msin_got - 4) == 0;
		} else {
			ok_rc &= supi[0] == '\0';
		}
		if (!ok_rc) {
			fprintf(stderr, "mutation \"%s\" -> %d (%s)\n", s, rc,
				rc == TW_OK ? supi : "");
			all = false;
		}
	}
	CHECK(all);
	/* Some mutations (a routing digit, hex case) are still valid. */
	CHECK(n_ok > 0);
}

static void test_fuzz(void)
{
	struct tw_suci_hn_key keys[2] = {
		{ .id = 5, .scheme = TW_SUCI_SCHEME_PROFILE_A },
		{ .id = 9, .scheme = TW_SUCI_SCHEME_PROFILE_B },
	};
	uint8_t pub[33];
	char suci[TW_SUCI_STR_MAX];
	size_t n;

	tw_test_random(keys[0].priv, 32);
	keys[1].priv[0] = 0x11;
	tw_test_random(keys[1].priv + 1, 31);
	fuzz_one(keys, 2, "suci-0-234-15-678-0-0-0999999999",
		 "imsi-234150999999999", 3000);
	CHECK_OK(tw_suci_public_key(&keys[0], pub, sizeof(pub), &n));
	CHECK_OK(tw_suci_conceal(TW_SUCI_SCHEME_PROFILE_A, pub, n, 5,
				 "imsi-234150999999999", 2, "678", NULL, suci,
				 sizeof(suci)));
	fuzz_one(keys, 2, suci, "imsi-234150999999999", 2000);
	CHECK_OK(tw_suci_public_key(&keys[1], pub, sizeof(pub), &n));
	CHECK_OK(tw_suci_conceal(TW_SUCI_SCHEME_PROFILE_B, pub, n, 9,
				 "imsi-310410123456789", 3, "1", NULL, suci,
				 sizeof(suci)));
	fuzz_one(keys, 2, suci, "imsi-310410123456789", 2000);
	tw_wipe(keys, sizeof(keys));
}

void test_main(void)
{
	test_vectors();
	test_null();
	test_bcd();
	test_round_trips();
	test_bad_points();
	test_public_keys();
	test_nai();
	test_malformed();
	cross_check(TW_SUCI_SCHEME_PROFILE_A, 40);
	cross_check(TW_SUCI_SCHEME_PROFILE_B, 40);
	test_fuzz();
}
