/*
 * twag — SUCI text form: conceal (UE side) and deconceal (SIDF side).
 *
 * Specs: 3GPP TS 33.501 V17.9.0 §6.12.2 (SUCI construction), TS 23.003
 * §2.2B (SUCI fields and ranges), TS 29.571 §5.3.2 (SupiOrSuci:
 * "suci-<type>-<mcc>-<mnc>-<routing>-<scheme>-<key id>-<scheme output>").
 * The scheme output is the MSIN digits for the null scheme and the ECIES
 * scheme output (eph public | ciphertext | tag) in hex otherwise.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/suci.h"

/* TS 23.003 §2.1: an IMSI has at most 15 digits. */
enum { IMSI_MAX_DIGITS = 15 };

/* A bounded view of one '-'-separated field of the SUCI string. */
struct field {
	const char *p;
	size_t len;
};

static bool all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * A decimal number of 1..3 digits without leading zeros ("0" itself is
 * fine), so that every value has one spelling. Returns -1 if malformed.
 */
static int small_decimal(const struct field *f)
{
	int v = 0;

	if (f->len == 0 || f->len > 3 || !all_digits(f->p, f->len) ||
	    (f->len > 1 && f->p[0] == '0'))
		return -1;
	for (size_t i = 0; i < f->len; i++)
		v = v * 10 + (f->p[i] - '0');
	return v;
}

/*
 * Splits s into exactly n fields at '-'. The last field runs to the NUL;
 * the ECIES hex output holds no '-', so more dashes mean a malformed SUCI.
 */
static bool split(const char *s, size_t len, struct field *f, size_t n)
{
	size_t k = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '-')
			continue;
		if (k == n)
			return false;
		f[k].p = s + start;
		f[k].len = i - start;
		k++;
		start = i + 1;
	}
	return k == n;
}

static int write_supi(char *supi, size_t supi_max, const struct field *mcc,
		      const struct field *mnc, const char *msin, size_t nmsin)
{
	size_t need = 5 + mcc->len + mnc->len + nmsin + 1;
	char *p = supi;

	if (mcc->len + mnc->len + nmsin > IMSI_MAX_DIGITS)
		return TW_ERR_LENGTH;
	if (supi_max < need)
		return TW_ERR_OVERFLOW;
	memcpy(p, "imsi-", 5);
	p += 5;
	memcpy(p, mcc->p, mcc->len);
	p += mcc->len;
	memcpy(p, mnc->p, mnc->len);
	p += mnc->len;
	memcpy(p, msin, nmsin);
	p[nmsin] = '\0';
	return TW_OK;
}

/*
 * One parser for both key forms: exactly one of keys/ctxs is non-NULL.
 * A raw key is prepared for this call only.
 */
static int deconceal(const struct tw_suci_hn_key *keys,
		     const struct tw_suci_hn_ctx *ctxs, size_t nkeys,
		     const char *suci, char *supi, size_t supi_max)
{
	enum { F_SUCI, F_TYPE, F_MCC, F_MNC, F_RI, F_SCHEME, F_KEYID, F_OUT, F_N };
	struct field f[F_N];
	uint8_t output[TW_SUCI_ECIES_OUTPUT_MAX];
	uint8_t bcd[TW_SUCI_MSIN_BCD_MAX];
	char msin[2 * TW_SUCI_MSIN_BCD_MAX + 1];
	const struct tw_suci_hn_key *key = NULL;
	const struct tw_suci_hn_ctx *ctx = NULL;
	size_t len, out_len, bcd_len, nmsin;
	int scheme, key_id, rc;

	memset(msin, 0, sizeof(msin));
	memset(bcd, 0, sizeof(bcd));
	if (supi_max > 0)
		supi[0] = '\0';
	len = strnlen(suci, TW_SUCI_STR_MAX + 1);
	if (len > TW_SUCI_STR_MAX) {
		rc = TW_ERR_LENGTH;
		goto out;
	}
	if (!split(suci, len, f, F_N) || f[F_SUCI].len != 4 ||
	    memcmp(f[F_SUCI].p, "suci", 4) != 0) {
		rc = TW_ERR_DECODE;
		goto out;
	}
	/* TS 23.003 §2.2B 1): SUPI type 0 = IMSI; 1..7 other types/spare. */
	if (f[F_TYPE].len != 1 || f[F_TYPE].p[0] < '0' || f[F_TYPE].p[0] > '7') {
		rc = TW_ERR_DECODE;
		goto out;
	}
	if (f[F_TYPE].p[0] != '0') {
		rc = TW_ERR_UNSUPPORTED;
		goto out;
	}
	/* 2) MCC: 3 digits, MNC: 2 or 3 digits; 3) routing indicator 1-4. */
	if (f[F_MCC].len != 3 || !all_digits(f[F_MCC].p, 3) ||
	    f[F_MNC].len < 2 || f[F_MNC].len > 3 ||
	    !all_digits(f[F_MNC].p, f[F_MNC].len) || f[F_RI].len < 1 ||
	    f[F_RI].len > 4 || !all_digits(f[F_RI].p, f[F_RI].len)) {
		rc = TW_ERR_DECODE;
		goto out;
	}
	/* 4) protection scheme 0..15; 5) key identifier 0..255. */
	scheme = small_decimal(&f[F_SCHEME]);
	key_id = small_decimal(&f[F_KEYID]);
	if (scheme < 0 || scheme > 15 || key_id < 0 || key_id > 255 ||
	    f[F_OUT].len == 0) {
		rc = TW_ERR_DECODE;
		goto out;
	}

	if (scheme == TW_SUCI_SCHEME_NULL) {
		/* 5) the key identifier is 0 iff the null scheme is used;
		 * 6) the scheme output is the MSIN itself. */
		if (key_id != 0 || !all_digits(f[F_OUT].p, f[F_OUT].len)) {
			rc = TW_ERR_DECODE;
			goto out;
		}
		if (f[F_OUT].len > TW_SUCI_MSIN_MAX_DIGITS) {
			rc = TW_ERR_LENGTH;
			goto out;
		}
		rc = write_supi(supi, supi_max, &f[F_MCC], &f[F_MNC],
				f[F_OUT].p, f[F_OUT].len);
		goto out;
	}
	if (scheme != TW_SUCI_SCHEME_PROFILE_A &&
	    scheme != TW_SUCI_SCHEME_PROFILE_B) {
		rc = TW_ERR_UNSUPPORTED;
		goto out;
	}

	/* ECIES: 6) the scheme output is hex; decode before the key lookup so
	 * that a malformed string is a decode error whatever keys we hold. */
	if (f[F_OUT].len % 2 != 0) {
		rc = TW_ERR_DECODE;
		goto out;
	}
	if (f[F_OUT].len / 2 > sizeof(output)) {
		rc = TW_ERR_LENGTH;
		goto out;
	}
	rc = tw_hex_decode(output, sizeof(output), &out_len, f[F_OUT].p,
			   f[F_OUT].len);
	if (rc != TW_OK)
		goto out;
	for (size_t i = 0; i < nkeys && key == NULL && ctx == NULL; i++) {
		if (keys != NULL && keys[i].id == key_id && (int)keys[i].scheme == scheme)
			key = &keys[i];
		if (ctxs != NULL && ctxs[i].id == key_id && (int)ctxs[i].scheme == scheme)
			ctx = &ctxs[i];
	}
	if (key == NULL && ctx == NULL) {
		rc = TW_ERR_NOTFOUND;
		goto out;
	}
	{
		size_t pub_len = scheme == TW_SUCI_SCHEME_PROFILE_A
					 ? TW_SUCI_PROFILE_A_PUB_LEN
					 : TW_SUCI_PROFILE_B_PUB_LEN;

		/* An IMSI scheme input is 1..5 BCD octets (C.3.4 note). */
		if (out_len < pub_len + 1 + TW_SUCI_MAC_TAG_LEN ||
		    out_len > pub_len + TW_SUCI_MSIN_BCD_MAX + TW_SUCI_MAC_TAG_LEN) {
			rc = TW_ERR_LENGTH;
			goto out;
		}
	}
	rc = ctx != NULL ? tw_suci_ecies_decrypt_ctx(ctx, output, out_len, bcd,
						    sizeof(bcd), &bcd_len)
			 : tw_suci_ecies_decrypt(key, output, out_len, bcd,
						sizeof(bcd), &bcd_len);
	if (rc != TW_OK)
		goto out;
	rc = tw_suci_bcd_to_msin(bcd, bcd_len, msin, sizeof(msin), &nmsin);
	if (rc != TW_OK)
		goto out;
	rc = write_supi(supi, supi_max, &f[F_MCC], &f[F_MNC], msin, nmsin);
out:
	/* The SUPI is the secret that the SUCI exists to hide. */
	tw_wipe(msin, sizeof(msin));
	tw_wipe(bcd, sizeof(bcd));
	if (rc != TW_OK && supi_max > 0)
		tw_wipe(supi, supi_max);
	return rc;
}

int tw_suci_deconceal(const struct tw_suci_hn_key *keys, size_t nkeys,
		      const char *suci, char *supi, size_t supi_max)
{
	return deconceal(keys, NULL, nkeys, suci, supi, supi_max);
}

int tw_suci_deconceal_ctx(const struct tw_suci_hn_ctx *keys, size_t nkeys,
			  const char *suci, char *supi, size_t supi_max)
{
	return deconceal(NULL, keys, nkeys, suci, supi, supi_max);
}

int tw_suci_conceal(enum tw_suci_scheme scheme, const uint8_t *hn_pub,
		    size_t hn_pub_len, uint8_t key_id, const char *supi,
		    unsigned mnc_digits, const char *routing,
		    const uint8_t *eph_priv, char *suci, size_t suci_max)
{
	uint8_t bcd[TW_SUCI_MSIN_BCD_MAX];
	uint8_t output[TW_SUCI_ECIES_OUTPUT_MAX];
	char hex[2 * TW_SUCI_ECIES_OUTPUT_MAX + 1];
	char buf[TW_SUCI_STR_MAX];
	const char *imsi, *msin;
	size_t ndigits, nmsin, nri, bcd_len, out_len;
	int n, rc;

	memset(bcd, 0, sizeof(bcd));
	memset(hex, 0, sizeof(hex));
	memset(buf, 0, sizeof(buf));
	if (suci_max > 0)
		suci[0] = '\0';
	if (scheme != TW_SUCI_SCHEME_NULL && scheme != TW_SUCI_SCHEME_PROFILE_A &&
	    scheme != TW_SUCI_SCHEME_PROFILE_B)
		return TW_ERR_UNSUPPORTED;
	/* TS 23.003 §2.2B 5): key id 0 if and only if null scheme. Only the
	 * "only if" half is enforced, so a key provisioned as id 0 still
	 * works with ECIES. */
	if (mnc_digits < 2 || mnc_digits > 3 ||
	    (scheme == TW_SUCI_SCHEME_NULL && key_id != 0))
		return TW_ERR_INVAL;
	if (routing == NULL)
		routing = "0";
	nri = strnlen(routing, 5);
	if (nri < 1 || nri > 4 || !all_digits(routing, nri))
		return TW_ERR_INVAL;
	if (strncmp(supi, "imsi-", 5) != 0)
		return TW_ERR_DECODE;
	imsi = supi + 5;
	ndigits = strnlen(imsi, IMSI_MAX_DIGITS + 1);
	if (!all_digits(imsi, ndigits))
		return TW_ERR_DECODE;
	/* MCC (3) + MNC + at least one MSIN digit, at most 15 in all. */
	if (ndigits > IMSI_MAX_DIGITS || ndigits < 3 + mnc_digits + 1)
		return TW_ERR_LENGTH;
	msin = imsi + 3 + mnc_digits;
	nmsin = ndigits - 3 - mnc_digits;

	if (scheme == TW_SUCI_SCHEME_NULL) {
		/* C.2: the null scheme output is the scheme input, unchanged. */
		n = snprintf(buf, sizeof(buf), "suci-0-%.3s-%.*s-%s-0-0-%.*s",
			     imsi, (int)mnc_digits, imsi + 3, routing,
			     (int)nmsin, msin);
	} else {
		rc = tw_suci_msin_to_bcd(msin, nmsin, bcd, sizeof(bcd),
					 &bcd_len);
		if (rc != TW_OK)
			goto out;
		rc = tw_suci_ecies_encrypt(scheme, hn_pub, hn_pub_len, eph_priv,
					   bcd, bcd_len, output, sizeof(output),
					   &out_len);
		if (rc != TW_OK)
			goto out;
		tw_hex_encode(hex, output, out_len);
		n = snprintf(buf, sizeof(buf), "suci-0-%.3s-%.*s-%s-%d-%u-%s",
			     imsi, (int)mnc_digits, imsi + 3, routing,
			     (int)scheme, (unsigned)key_id, hex);
	}
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		rc = TW_ERR_OVERFLOW; /* cannot happen: buf is TW_SUCI_STR_MAX */
		goto out;
	}
	if ((size_t)n >= suci_max) {
		rc = TW_ERR_OVERFLOW;
		goto out;
	}
	memcpy(suci, buf, (size_t)n + 1);
	rc = TW_OK;
out:
	/* buf holds the MSIN in clear for the null scheme. */
	tw_wipe(buf, sizeof(buf));
	tw_wipe(bcd, sizeof(bcd));
	return rc;
}
