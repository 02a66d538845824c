/*
 * twag — SUCI text and NAI forms: conceal (UE side) and deconceal (SIDF).
 *
 * Specs: 3GPP TS 33.501 V17.9.0 §6.12.2 (SUCI construction, the scheme
 * input of an NAI SUPI), TS 23.003 §2.2B (SUCI fields and ranges), §28.2
 * (home network domain), §28.7.2-3 (NAI SUPI, NAI form of the SUCI),
 * TS 29.571 §5.3.2 (SupiOrSuci: "suci-<type>-<home network id>-<routing>-
 * <scheme>-<key id>-<scheme output>", Supi "imsi-..." / "nai-..."),
 * RFC 7542 §2.2-2.3 (NAI syntax and length).
 * The scheme output is the MSIN digits or the NAI username for the null
 * scheme and the ECIES scheme output (eph public | ciphertext | tag) in hex
 * otherwise.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/suci.h"

/* TS 23.003 §2.1: an IMSI has at most 15 digits. RFC 1035 §2.3.4: a
 * label has at most 63 octets. */
enum { IMSI_MAX_DIGITS = 15, LABEL_MAX = 63 };

/* A bounded view of a part of a string. */
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
static int small_decimal(const char *p, size_t len)
{
	int v = 0;

	if (len == 0 || len > 3 || !all_digits(p, len) || (len > 1 && p[0] == '0'))
		return -1;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (p[i] - '0');
	return v;
}

static bool is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

static bool is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * The length of the well-formed UTF-8 sequence of two to four octets at s
 * (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF),
 * 0 if there is none: RFC 7542's UTF8-xtra-char.
 */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * RFC 7542 §2.2 utf8-username: dot-separated non-empty strings of
 * utf8-atext (letters, digits, "!#$%&'*+-/=?^_`{|}~" and UTF-8 beyond
 * ASCII).
 */
static bool valid_username(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	bool prev_dot = true; /* no leading dot */

	if (len == 0 || len > TW_SUCI_USERNAME_MAX)
		return false;
	for (size_t i = 0; i < len;) {
		size_t n = 1;

		if (u[i] == '.') {
			if (prev_dot)
				return false;
			prev_dot = true;
			i++;
			continue;
		}
		if (u[i] >= 0x80) {
			n = utf8_seq(u + i, len - i);
			if (n == 0)
				return false;
		} else if (!is_alnum(u[i]) && strchr("!#$%&'*+-/=?^_`{|}~", u[i]) == NULL) {
			return false;
		} else if (u[i] == '\0') {
			return false;
		}
		prev_dot = false;
		i += n;
	}
	return !prev_dot; /* no trailing dot */
}

/*
 * RFC 7542 §2.2 utf8-realm: at least two labels separated by dots; a label
 * is utf8-rtext (letters, digits, UTF-8 beyond ASCII) with inner hyphens,
 * 1..63 octets.
 */
static bool valid_realm(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t labels = 0, label_len = 0;
	bool prev_hyphen = false;

	if (len == 0 || len > TW_SUCI_REALM_MAX)
		return false;
	for (size_t i = 0; i <= len;) {
		if (i == len || u[i] == '.') {
			if (label_len == 0 || prev_hyphen)
				return false;
			labels++;
			label_len = 0;
			i++;
			continue;
		}
		size_t n = 1;

		if (u[i] == '-') {
			if (label_len == 0)
				return false;
			prev_hyphen = true;
		} else {
			if (u[i] >= 0x80) {
				n = utf8_seq(u + i, len - i);
				if (n == 0)
					return false;
			} else if (!is_alnum(u[i])) {
				return false;
			}
			prev_hyphen = false;
		}
		label_len += n;
		if (label_len > LABEL_MAX)
			return false;
		i += n;
	}
	return labels >= 2;
}

/* ---- parsing ------------------------------------------------------------- */

/* A SUCI taken apart; the views point into the caller's string. */
struct parsed {
	unsigned type;          /* SUPI type: 0 IMSI, 1 NAI */
	struct field mcc, mnc;  /* type 0 */
	struct field realm;     /* type 1 (NAI form of type 0: the 3GPP realm) */
	struct field ri;
	int scheme, key_id;
	/* null scheme: the MSIN or username; ECIES text form: the whole
	 * output in hex; NAI form: its three parts in hex */
	struct field out, eph, cip, mac;
	bool nai_form;
};

static bool valid_ri(const struct field *f)
{
	return f->len >= 1 && f->len <= 4 && all_digits(f->p, f->len);
}

/* "<ri>-<scheme>-<key id>-<out>" with nothing else; the output may not be
 * empty and holds no dash unless the scheme is null. */
static bool parse_tail(const char *s, size_t len, struct parsed *p)
{
	const char *d1, *d2, *d3, *end = s + len;

	d1 = memchr(s, '-', len);
	if (d1 == NULL)
		return false;
	d2 = memchr(d1 + 1, '-', (size_t)(end - d1 - 1));
	if (d2 == NULL)
		return false;
	d3 = memchr(d2 + 1, '-', (size_t)(end - d2 - 1));
	if (d3 == NULL)
		return false;
	p->ri = (struct field){ s, (size_t)(d1 - s) };
	p->scheme = small_decimal(d1 + 1, (size_t)(d2 - d1 - 1));
	p->key_id = small_decimal(d2 + 1, (size_t)(d3 - d2 - 1));
	p->out = (struct field){ d3 + 1, (size_t)(end - d3 - 1) };
	return valid_ri(&p->ri) && p->scheme >= 0 && p->key_id >= 0 && p->out.len > 0 &&
	       (p->scheme == TW_SUCI_SCHEME_NULL || memchr(p->out.p, '-', p->out.len) == NULL);
}

/* The last n dashes of s[0..len): their positions in d[0..n), left first. */
static bool last_dashes(const char *s, size_t len, const char **d, int n)
{
	for (size_t i = len; i > 0 && n > 0; i--)
		if (s[i - 1] == '-')
			d[--n] = s + i - 1;
	return n == 0;
}

/* TS 29.571 text form, after "suci-". */
static int parse_text(const char *s, size_t len, struct parsed *p)
{
	/* TS 23.003 §2.2B 1): SUPI type 0 = IMSI, 1 = network specific
	 * identifier, 2 = GCI, 3 = GLI, 4..7 spare. */
	if (len < 2 || s[0] < '0' || s[0] > '7' || s[1] != '-')
		return TW_ERR_DECODE;
	p->type = (unsigned)(s[0] - '0');
	s += 2;
	len -= 2;
	if (p->type == 0) {
		/* "<mcc>-<mnc>-" then the tail: MCC 3 digits, MNC 2 or 3. */
		const char *d = memchr(s, '-', len), *e;

		if (d == NULL)
			return TW_ERR_DECODE;
		e = memchr(d + 1, '-', len - (size_t)(d + 1 - s));
		if (e == NULL)
			return TW_ERR_DECODE;
		p->mcc = (struct field){ s, (size_t)(d - s) };
		p->mnc = (struct field){ d + 1, (size_t)(e - d - 1) };
		if (p->mcc.len != 3 || !all_digits(p->mcc.p, 3) || p->mnc.len < 2 ||
		    p->mnc.len > 3 || !all_digits(p->mnc.p, p->mnc.len))
			return TW_ERR_DECODE;
		if (!parse_tail(e + 1, len - (size_t)(e + 1 - s), p))
			return TW_ERR_DECODE;
		/* the MSIN holds no dash either */
		if (memchr(p->out.p, '-', p->out.len) != NULL)
			return TW_ERR_DECODE;
		return TW_OK;
	}
	if (p->type != 1)
		return TW_ERR_UNSUPPORTED;
	/* The realm may hold dashes. An ECIES output holds none: the last
	 * four dashes end the realm. */
	const char *d[4];

	if (last_dashes(s, len, d, 4) && valid_realm(s, (size_t)(d[0] - s)) &&
	    parse_tail(d[0] + 1, len - (size_t)(d[0] + 1 - s), p) &&
	    p->scheme != TW_SUCI_SCHEME_NULL && is_hex(p->out.p, p->out.len)) {
		p->realm = (struct field){ s, (size_t)(d[0] - s) };
		return TW_OK;
	}
	/* Null scheme: the username may hold dashes; the first split that
	 * gives a realm and "<ri>-0-0-<username>" is the one. */
	for (size_t i = 1; i < len; i++) {
		if (s[i] != '-' || !valid_realm(s, i))
			continue;
		if (parse_tail(s + i + 1, len - i - 1, p) && p->scheme == TW_SUCI_SCHEME_NULL) {
			p->realm = (struct field){ s, i };
			return TW_OK;
		}
	}
	return TW_ERR_DECODE;
}

/* "<tag><value>" at *s up to the next '.' (or the end if last). */
static bool nai_part(const char **s, const char *end, const char *tag, bool last,
		     struct field *v)
{
	size_t t = strlen(tag);
	const char *q;

	if ((size_t)(end - *s) < t || memcmp(*s, tag, t) != 0)
		return false;
	*s += t;
	q = last ? end : memchr(*s, '.', (size_t)(end - *s));
	if (q == NULL)
		return false;
	v->p = *s;
	v->len = (size_t)(q - *s);
	*s = last ? end : q + 1;
	return v->len > 0;
}

static bool ascii_ieq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i], y = b[i];

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

/*
 * TS 23.003 §28.2 "5gc.mnc<MNC>.mcc<MCC>.3gppnetwork.org" (domain names
 * compare without case); the MNC is written with 3 digits.
 */
static bool parse_3gpp_realm(const struct field *r, struct field *mcc, struct field *mnc3)
{
	static const char tail[] = ".3gppnetwork.org";
	const size_t tl = sizeof(tail) - 1;

	if (r->len != 4 + 6 + 1 + 6 + tl || !ascii_ieq(r->p, "5gc.mnc", 7) ||
	    !ascii_ieq(r->p + 10, ".mcc", 4) || !ascii_ieq(r->p + 17, tail, tl))
		return false;
	mnc3->p = r->p + 7;
	mnc3->len = 3;
	mcc->p = r->p + 14;
	mcc->len = 3;
	return all_digits(mnc3->p, 3) && all_digits(mcc->p, 3);
}

/* TS 23.003 §28.7.3 NAI form. */
static int parse_nai(const char *s, size_t len, unsigned mnc_digits, struct parsed *p)
{
	const char *at = memchr(s, '@', len), *end;
	struct field type, schid, hnkey;

	if (at == NULL)
		return TW_ERR_DECODE;
	end = at;
	p->nai_form = true;
	p->realm = (struct field){ at + 1, len - (size_t)(at + 1 - s) };
	if (!nai_part(&s, end, "type", false, &type) || type.len != 1 || type.p[0] < '0' ||
	    type.p[0] > '7')
		return TW_ERR_DECODE;
	p->type = (unsigned)(type.p[0] - '0');
	if (!nai_part(&s, end, "rid", false, &p->ri) || !valid_ri(&p->ri) ||
	    !nai_part(&s, end, "schid", false, &schid))
		return TW_ERR_DECODE;
	p->scheme = small_decimal(schid.p, schid.len);
	if (p->scheme < 0)
		return TW_ERR_DECODE;
	if (p->scheme == TW_SUCI_SCHEME_NULL) {
		p->key_id = 0;
		if (!nai_part(&s, end, "userid", true, &p->out))
			return TW_ERR_DECODE;
	} else {
		if (!nai_part(&s, end, "hnkey", false, &hnkey) ||
		    (p->key_id = small_decimal(hnkey.p, hnkey.len)) < 0 ||
		    !nai_part(&s, end, "ecckey", false, &p->eph) ||
		    !nai_part(&s, end, "cip", false, &p->cip) ||
		    !nai_part(&s, end, "mac", true, &p->mac))
			return TW_ERR_DECODE;
	}
	if (p->type > 1)
		return TW_ERR_UNSUPPORTED;
	if (p->type == 1)
		return valid_realm(p->realm.p, p->realm.len) ? TW_OK : TW_ERR_DECODE;
	struct field mnc3;

	/* an SNPN's realm with its NID (§28.2) is not handled */
	if (!parse_3gpp_realm(&p->realm, &p->mcc, &mnc3))
		return p->realm.len > 7 && ascii_ieq(p->realm.p, "5gc.nid", 7) &&
				       valid_realm(p->realm.p, p->realm.len)
			       ? TW_ERR_UNSUPPORTED
			       : TW_ERR_DECODE;
	if (mnc_digits == 0)
		mnc_digits = mnc3.p[0] == '0' ? 2 : 3;
	if (mnc_digits == 2 && mnc3.p[0] != '0')
		return TW_ERR_DECODE; /* "mnc123" cannot be a 2-digit MNC */
	p->mnc.p = mnc3.p + 3 - mnc_digits;
	p->mnc.len = mnc_digits;
	return TW_OK;
}

static int parse(const char *suci, unsigned mnc_digits, struct parsed *p)
{
	size_t len;
	int rc;

	memset(p, 0, sizeof(*p));
	p->scheme = -1;
	p->key_id = -1;
	if (mnc_digits != 0 && mnc_digits != 2 && mnc_digits != 3)
		return TW_ERR_INVAL;
	len = strnlen(suci, TW_SUCI_STR_MAX + 1);
	if (len > TW_SUCI_STR_MAX)
		return TW_ERR_LENGTH;
	if (len >= 5 && memcmp(suci, "suci-", 5) == 0)
		rc = parse_text(suci + 5, len - 5, p);
	else if (len >= 4 && memcmp(suci, "type", 4) == 0)
		rc = parse_nai(suci, len, mnc_digits, p);
	else
		rc = TW_ERR_DECODE;
	if (rc != TW_OK)
		return rc;
	/* TS 23.003 §2.2B 4) scheme 0..15, 5) key id 0..255, 0 for the
	 * null scheme. */
	if (p->scheme > 15 || p->key_id > 255 ||
	    (p->scheme == TW_SUCI_SCHEME_NULL && p->key_id != 0))
		return TW_ERR_DECODE;
	if (p->scheme == TW_SUCI_SCHEME_NULL) {
		if (p->type == 0 && !all_digits(p->out.p, p->out.len))
			return TW_ERR_DECODE;
		if (p->type == 0 && p->out.len > TW_SUCI_MSIN_MAX_DIGITS)
			return TW_ERR_LENGTH;
		if (p->type == 1 && !valid_username(p->out.p, p->out.len))
			return p->out.len > TW_SUCI_USERNAME_MAX ? TW_ERR_LENGTH
								 : TW_ERR_DECODE;
		return TW_OK;
	}
	if (p->scheme != TW_SUCI_SCHEME_PROFILE_A && p->scheme != TW_SUCI_SCHEME_PROFILE_B)
		return TW_ERR_UNSUPPORTED;
	if (p->nai_form) {
		if (!is_hex(p->eph.p, p->eph.len) || !is_hex(p->cip.p, p->cip.len) ||
		    !is_hex(p->mac.p, p->mac.len) || p->eph.len % 2 || p->cip.len % 2 ||
		    p->mac.len % 2)
			return TW_ERR_DECODE;
	} else if (!is_hex(p->out.p, p->out.len) || p->out.len % 2) {
		return TW_ERR_DECODE;
	}
	return TW_OK;
}

int tw_suci_peek(const char *suci, unsigned *supi_type, unsigned *scheme, unsigned *key_id)
{
	struct parsed p;
	int rc;

	if (suci == NULL)
		return TW_ERR_INVAL;
	rc = parse(suci, 0, &p);
	if (rc == TW_OK) {
		if (supi_type != NULL)
			*supi_type = p.type;
		if (scheme != NULL)
			*scheme = (unsigned)p.scheme;
		if (key_id != NULL)
			*key_id = (unsigned)p.key_id;
	}
	return rc;
}

/* ---- deconceal ----------------------------------------------------------- */

/* Appends len octets to a bounded buffer; false once it would overflow. */
struct out {
	char *p;
	size_t len, max;
	bool over;
};

static void put(struct out *o, const char *s, size_t len)
{
	if (o->over || len >= o->max - o->len) {
		o->over = true;
		return;
	}
	memcpy(o->p + o->len, s, len);
	o->len += len;
	o->p[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static int write_imsi(char *supi, size_t supi_max, const struct parsed *p, const char *msin,
		      size_t nmsin)
{
	struct out o = { supi, 0, supi_max, supi_max == 0 };

	if (p->mcc.len + p->mnc.len + nmsin > IMSI_MAX_DIGITS)
		return TW_ERR_LENGTH;
	puts_(&o, "imsi-");
	put(&o, p->mcc.p, p->mcc.len);
	put(&o, p->mnc.p, p->mnc.len);
	put(&o, msin, nmsin);
	return o.over ? TW_ERR_OVERFLOW : TW_OK;
}

static int write_nai(char *supi, size_t supi_max, const struct parsed *p, const char *user,
		     size_t nuser)
{
	struct out o = { supi, 0, supi_max, supi_max == 0 };

	if (nuser + 1 + p->realm.len > TW_SUCI_NAI_MAX)
		return TW_ERR_LENGTH;
	puts_(&o, "nai-");
	put(&o, user, nuser);
	put(&o, "@", 1);
	put(&o, p->realm.p, p->realm.len);
	return o.over ? TW_ERR_OVERFLOW : TW_OK;
}

/* Hex views into one scheme output buffer (eph | cip | mac for the NAI
 * form); lengths are checked by the caller. */
static int decode_output(const struct parsed *p, uint8_t *out, size_t max, size_t *n)
{
	size_t a, b, c;
	int rc;

	if (!p->nai_form) {
		if (p->out.len / 2 > max)
			return TW_ERR_LENGTH;
		return tw_hex_decode(out, max, n, p->out.p, p->out.len);
	}
	if ((p->eph.len + p->cip.len + p->mac.len) / 2 > max)
		return TW_ERR_LENGTH;
	rc = tw_hex_decode(out, max, &a, p->eph.p, p->eph.len);
	if (rc == TW_OK)
		rc = tw_hex_decode(out + a, max - a, &b, p->cip.p, p->cip.len);
	if (rc == TW_OK)
		rc = tw_hex_decode(out + a + b, max - a - b, &c, p->mac.p, p->mac.len);
	if (rc == TW_OK)
		*n = a + b + c;
	return rc;
}

/*
 * One deconcealer for both key forms: exactly one of keys/ctxs is
 * non-NULL. A raw key is prepared for this call only.
 */
static int deconceal(const struct tw_suci_hn_key *keys, const struct tw_suci_hn_ctx *ctxs,
		     size_t nkeys, const char *suci, unsigned mnc_digits, char *supi,
		     size_t supi_max)
{
	uint8_t output[TW_SUCI_ECIES_OUTPUT_MAX];
	uint8_t input[TW_SUCI_INPUT_MAX];
	char msin[2 * TW_SUCI_MSIN_BCD_MAX + 1];
	const struct tw_suci_hn_key *key = NULL;
	const struct tw_suci_hn_ctx *ctx = NULL;
	struct parsed p;
	size_t out_len = 0, in_len = 0, nmsin, pub_len, in_max;
	int rc;

	memset(msin, 0, sizeof(msin));
	memset(input, 0, sizeof(input));
	if (supi == NULL)
		supi_max = 0; /* nothing to write to (and TW_ERR_INVAL below) */
	if (supi_max > 0)
		supi[0] = '\0';
	if (suci == NULL || supi == NULL) {
		rc = TW_ERR_INVAL;
		goto out;
	}
	rc = parse(suci, mnc_digits, &p);
	if (rc != TW_OK)
		goto out;
	if (p.scheme == TW_SUCI_SCHEME_NULL) {
		/* C.2: the scheme output is the scheme input itself. */
		rc = p.type == 0 ? write_imsi(supi, supi_max, &p, p.out.p, p.out.len)
				 : write_nai(supi, supi_max, &p, p.out.p, p.out.len);
		goto out;
	}
	/* ECIES: decode before the key lookup so that a malformed string is
	 * a decode error whatever keys we hold. */
	rc = decode_output(&p, output, sizeof(output), &out_len);
	if (rc != TW_OK)
		goto out;
	for (size_t i = 0; i < nkeys && key == NULL && ctx == NULL; i++) {
		if (keys != NULL && keys[i].id == p.key_id && (int)keys[i].scheme == p.scheme)
			key = &keys[i];
		if (ctxs != NULL && ctxs[i].id == p.key_id && (int)ctxs[i].scheme == p.scheme)
			ctx = &ctxs[i];
	}
	if (key == NULL && ctx == NULL) {
		rc = TW_ERR_NOTFOUND;
		goto out;
	}
	pub_len = p.scheme == TW_SUCI_SCHEME_PROFILE_A ? TW_SUCI_PROFILE_A_PUB_LEN
						       : TW_SUCI_PROFILE_B_PUB_LEN;
	/* An IMSI scheme input is 1..5 BCD octets (C.3.4 note), a username
	 * 1..TW_SUCI_USERNAME_MAX octets; the NAI form names each part. */
	in_max = p.type == 0 ? TW_SUCI_MSIN_BCD_MAX : TW_SUCI_USERNAME_MAX;
	if (out_len < pub_len + 1 + TW_SUCI_MAC_TAG_LEN ||
	    out_len > pub_len + in_max + TW_SUCI_MAC_TAG_LEN ||
	    (p.nai_form && (p.eph.len != 2 * pub_len || p.mac.len != 2 * TW_SUCI_MAC_TAG_LEN))) {
		rc = TW_ERR_LENGTH;
		goto out;
	}
	rc = ctx != NULL ? tw_suci_ecies_decrypt_ctx(ctx, output, out_len, input, sizeof(input),
						    &in_len)
			 : tw_suci_ecies_decrypt(key, output, out_len, input, sizeof(input),
						&in_len);
	if (rc != TW_OK)
		goto out;
	if (p.type == 0) {
		rc = tw_suci_bcd_to_msin(input, in_len, msin, sizeof(msin), &nmsin);
		if (rc == TW_OK)
			rc = write_imsi(supi, supi_max, &p, msin, nmsin);
	} else if (!valid_username((const char *)input, in_len)) {
		rc = TW_ERR_DECODE;
	} else {
		rc = write_nai(supi, supi_max, &p, (const char *)input, in_len);
	}
out:
	/* The SUPI is the secret that the SUCI exists to hide. */
	tw_wipe(msin, sizeof(msin));
	tw_wipe(input, sizeof(input));
	if (rc != TW_OK && supi_max > 0)
		tw_wipe(supi, supi_max);
	return rc;
}

int tw_suci_deconceal(const struct tw_suci_hn_key *keys, size_t nkeys, const char *suci,
		      char *supi, size_t supi_max)
{
	return deconceal(keys, NULL, nkeys, suci, 0, supi, supi_max);
}

int tw_suci_deconceal_mnc(const struct tw_suci_hn_key *keys, size_t nkeys, const char *suci,
			  unsigned mnc_digits, char *supi, size_t supi_max)
{
	return deconceal(keys, NULL, nkeys, suci, mnc_digits, supi, supi_max);
}

int tw_suci_deconceal_ctx(const struct tw_suci_hn_ctx *keys, size_t nkeys, const char *suci,
			  char *supi, size_t supi_max)
{
	return deconceal(NULL, keys, nkeys, suci, 0, supi, supi_max);
}

/* ---- conceal ------------------------------------------------------------- */

/* A SUPI taken apart: an IMSI's MCC, MNC and MSIN or an NAI's parts. */
struct supi {
	unsigned type;
	struct field mcc, mnc, msin; /* type 0 */
	struct field user, realm;    /* type 1 */
};

static int parse_supi(const char *s, unsigned mnc_digits, struct supi *u)
{
	memset(u, 0, sizeof(*u));
	if (strncmp(s, "imsi-", 5) == 0) {
		const char *imsi = s + 5;
		size_t n = strnlen(imsi, IMSI_MAX_DIGITS + 1);

		if (mnc_digits < 2 || mnc_digits > 3)
			return TW_ERR_INVAL;
		if (!all_digits(imsi, n))
			return TW_ERR_DECODE;
		/* MCC (3) + MNC + at least one MSIN digit, 15 at most. */
		if (n > IMSI_MAX_DIGITS || n < 3 + mnc_digits + 1)
			return TW_ERR_LENGTH;
		u->mcc = (struct field){ imsi, 3 };
		u->mnc = (struct field){ imsi + 3, mnc_digits };
		u->msin = (struct field){ imsi + 3 + mnc_digits, n - 3 - mnc_digits };
		return TW_OK;
	}
	if (strncmp(s, "nai-", 4) == 0) {
		const char *nai = s + 4, *at;
		size_t n = strnlen(nai, TW_SUCI_NAI_MAX + 1);

		if (n > TW_SUCI_NAI_MAX)
			return TW_ERR_LENGTH;
		at = memchr(nai, '@', n);
		if (at == NULL)
			return TW_ERR_DECODE;
		u->type = 1;
		u->user = (struct field){ nai, (size_t)(at - nai) };
		u->realm = (struct field){ at + 1, n - (size_t)(at + 1 - nai) };
		if (!valid_username(u->user.p, u->user.len) ||
		    !valid_realm(u->realm.p, u->realm.len))
			return TW_ERR_DECODE;
		return TW_OK;
	}
	/* TS 29.571: "gci-" and "gli-" SUPIs take the null scheme only and
	 * are not handled here. */
	if (strncmp(s, "gci-", 4) == 0 || strncmp(s, "gli-", 4) == 0)
		return TW_ERR_UNSUPPORTED;
	return TW_ERR_DECODE;
}

static void put_hex(struct out *o, const uint8_t *b, size_t n)
{
	char h[3];

	for (size_t i = 0; i < n && !o->over; i++) {
		tw_hex_encode(h, b + i, 1);
		put(o, h, 2);
	}
}

static void put_uint(struct out *o, unsigned v)
{
	char d[12];
	int n = snprintf(d, sizeof(d), "%u", v);

	put(o, d, (size_t)n);
}

static int conceal(bool nai_form, enum tw_suci_scheme scheme, const uint8_t *hn_pub,
		   size_t hn_pub_len, uint8_t key_id, const char *supi_str,
		   unsigned mnc_digits, const char *routing, const uint8_t *eph_priv,
		   char *suci, size_t suci_max)
{
	uint8_t input[TW_SUCI_INPUT_MAX];
	uint8_t output[TW_SUCI_ECIES_OUTPUT_MAX];
	char buf[TW_SUCI_STR_MAX];
	struct out o = { buf, 0, sizeof(buf), false };
	struct supi u;
	size_t nri, in_len = 0, out_len = 0, pub_len;
	int rc;

	memset(input, 0, sizeof(input));
	buf[0] = '\0';
	if (suci_max > 0 && suci != NULL)
		suci[0] = '\0';
	if (supi_str == NULL || suci == NULL)
		return TW_ERR_INVAL;
	if (scheme != TW_SUCI_SCHEME_NULL && scheme != TW_SUCI_SCHEME_PROFILE_A &&
	    scheme != TW_SUCI_SCHEME_PROFILE_B)
		return TW_ERR_UNSUPPORTED;
	/* TS 23.003 §2.2B 5): key id 0 if and only if null scheme. Only the
	 * "only if" half is enforced, so a key provisioned as id 0 still
	 * works with ECIES. */
	if (scheme == TW_SUCI_SCHEME_NULL && key_id != 0)
		return TW_ERR_INVAL;
	if (routing == NULL)
		routing = "0";
	nri = strnlen(routing, 5);
	if (nri < 1 || nri > 4 || !all_digits(routing, nri))
		return TW_ERR_INVAL;
	rc = parse_supi(supi_str, mnc_digits, &u);
	if (rc != TW_OK)
		return rc;

	if (scheme != TW_SUCI_SCHEME_NULL) {
		if (u.type == 0) {
			rc = tw_suci_msin_to_bcd(u.msin.p, u.msin.len, input, sizeof(input),
						 &in_len);
		} else {
			/* §6.12.2: the username's octets (TS 33.220 B.2.1.2) */
			memcpy(input, u.user.p, u.user.len);
			in_len = u.user.len;
		}
		if (rc == TW_OK)
			rc = tw_suci_ecies_encrypt(scheme, hn_pub, hn_pub_len, eph_priv, input,
						   in_len, output, sizeof(output), &out_len);
		if (rc != TW_OK)
			goto out;
	}
	const struct field *clear = u.type == 0 ? &u.msin : &u.user;

	if (!nai_form) {
		/* suci-<type>-<home network id>-<ri>-<scheme>-<key id>-<out> */
		puts_(&o, u.type == 0 ? "suci-0-" : "suci-1-");
		if (u.type == 0) {
			put(&o, u.mcc.p, 3);
			put(&o, "-", 1);
			put(&o, u.mnc.p, u.mnc.len);
		} else {
			put(&o, u.realm.p, u.realm.len);
		}
		put(&o, "-", 1);
		put(&o, routing, nri);
		put(&o, "-", 1);
		put_uint(&o, (unsigned)scheme);
		put(&o, "-", 1);
		put_uint(&o, key_id);
		put(&o, "-", 1);
		if (scheme == TW_SUCI_SCHEME_NULL)
			put(&o, clear->p, clear->len);
		else
			put_hex(&o, output, out_len);
	} else {
		/* TS 23.003 §28.7.3 */
		puts_(&o, u.type == 0 ? "type0.rid" : "type1.rid");
		put(&o, routing, nri);
		puts_(&o, ".schid");
		put_uint(&o, (unsigned)scheme);
		if (scheme == TW_SUCI_SCHEME_NULL) {
			puts_(&o, ".userid");
			put(&o, clear->p, clear->len);
		} else {
			pub_len = scheme == TW_SUCI_SCHEME_PROFILE_A ? TW_SUCI_PROFILE_A_PUB_LEN
								     : TW_SUCI_PROFILE_B_PUB_LEN;
			puts_(&o, ".hnkey");
			put_uint(&o, key_id);
			puts_(&o, ".ecckey");
			put_hex(&o, output, pub_len);
			puts_(&o, ".cip");
			put_hex(&o, output + pub_len, in_len);
			puts_(&o, ".mac");
			put_hex(&o, output + pub_len + in_len, TW_SUCI_MAC_TAG_LEN);
		}
		put(&o, "@", 1);
		if (u.type == 0) {
			/* §28.2: a 2-digit MNC gets a leading 0 */
			puts_(&o, "5gc.mnc");
			if (u.mnc.len == 2)
				put(&o, "0", 1);
			put(&o, u.mnc.p, u.mnc.len);
			puts_(&o, ".mcc");
			put(&o, u.mcc.p, 3);
			puts_(&o, ".3gppnetwork.org");
		} else {
			put(&o, u.realm.p, u.realm.len);
		}
	}
	if (o.over) {
		rc = TW_ERR_OVERFLOW; /* cannot happen: buf is TW_SUCI_STR_MAX */
		goto out;
	}
	/* The text form of a null-scheme NAI is split where a realm is
	 * followed by "-<ri>-0-0-" and an ECIES-like tail is tried first: a
	 * username or realm that reads another way there is refused rather
	 * than written (the NAI form carries it). */
	if (!nai_form && scheme == TW_SUCI_SCHEME_NULL && u.type == 1) {
		char back[TW_SUCI_SUPI_STR_MAX];

		rc = deconceal(NULL, NULL, 0, buf, 0, back, sizeof(back));
		if (rc != TW_OK || strcmp(back, supi_str) != 0)
			rc = TW_ERR_UNSUPPORTED;
		tw_wipe(back, sizeof(back));
		if (rc != TW_OK)
			goto out;
	}
	if (o.len >= suci_max) {
		rc = TW_ERR_OVERFLOW;
		goto out;
	}
	memcpy(suci, buf, o.len + 1);
	rc = TW_OK;
out:
	/* buf holds the MSIN or username in clear for the null scheme. */
	tw_wipe(buf, sizeof(buf));
	tw_wipe(input, sizeof(input));
	return rc;
}

int tw_suci_conceal(enum tw_suci_scheme scheme, const uint8_t *hn_pub, size_t hn_pub_len,
		    uint8_t key_id, const char *supi, unsigned mnc_digits, const char *routing,
		    const uint8_t *eph_priv, char *suci, size_t suci_max)
{
	return conceal(false, scheme, hn_pub, hn_pub_len, key_id, supi, mnc_digits, routing,
		       eph_priv, suci, suci_max);
}

int tw_suci_conceal_nai(enum tw_suci_scheme scheme, const uint8_t *hn_pub, size_t hn_pub_len,
			uint8_t key_id, const char *supi, unsigned mnc_digits,
			const char *routing, const uint8_t *eph_priv, char *suci,
			size_t suci_max)
{
	return conceal(true, scheme, hn_pub, hn_pub_len, key_id, supi, mnc_digits, routing,
		       eph_priv, suci, suci_max);
}
