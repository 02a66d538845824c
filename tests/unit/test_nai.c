/* Tests of NAI parsing (RFC 7542), the EAP-SIM/AKA/AKA' leading digits
 * (RFC 4186, RFC 4187, TS 23.003 §19.3) and IMSI masking. */
#include <stdio.h>

#include "tw_test.h"
#include "twag/eap.h"
#include "twag/nai.h"

static int parse(struct tw_nai *n, const char *s)
{
	return tw_nai_parse(n, (const uint8_t *)s, strlen(s));
}

static bool view_is(const uint8_t *p, size_t len, const char *s)
{
	return p != NULL && len == strlen(s) && memcmp(p, s, len) == 0;
}

static void test_parse(void)
{
	struct tw_nai n;
	char imsi[16];
	size_t il = 0;

	/* RFC 4186 Appendix A identity: EAP-SIM permanent. */
	CHECK_OK(parse(&n, "1244070100000001@eapsim.foo"));
	CHECK(n.kind == TW_NAI_PERMANENT && n.method == TW_EAP_TYPE_SIM);
	CHECK(view_is(n.realm, n.realm_len, "eapsim.foo"));
	CHECK_OK(tw_nai_imsi(&n, imsi, &il));
	CHECK(il == 15 && strcmp(imsi, "244070100000001") == 0);
	/* RFC 5448 Appendix C identity (no realm): EAP-AKA permanent. */
	CHECK_OK(parse(&n, "0555444333222111"));
	CHECK(n.kind == TW_NAI_PERMANENT && n.method == TW_EAP_TYPE_AKA &&
	      n.realm == NULL);
	CHECK_OK(tw_nai_imsi(&n, imsi, &il));
	CHECK(strcmp(imsi, "555444333222111") == 0);
	/* TS 23.003 §19.3.2 example realm, AKA' permanent (digit 6). */
	CHECK_OK(parse(&n, "6234150999999999@wlan.mnc015.mcc234.3gppnetwork.org"));
	CHECK(n.kind == TW_NAI_PERMANENT && n.method == TW_EAP_TYPE_AKA_PRIME);
	/* Pseudonyms 2/3/7 and re-auth ids 4/5/8. */
	static const struct { const char *id; uint8_t kind, method; } d[] = {
		{ "2abc@r.example", TW_NAI_PSEUDONYM, TW_EAP_TYPE_AKA },
		{ "3abc@r.example", TW_NAI_PSEUDONYM, TW_EAP_TYPE_SIM },
		{ "7abc@r.example", TW_NAI_PSEUDONYM, TW_EAP_TYPE_AKA_PRIME },
		{ "4abc@r.example", TW_NAI_REAUTH, TW_EAP_TYPE_AKA },
		{ "5abc@r.example", TW_NAI_REAUTH, TW_EAP_TYPE_SIM },
		{ "8abc@r.example", TW_NAI_REAUTH, TW_EAP_TYPE_AKA_PRIME },
		{ "9abc@r.example", TW_NAI_OTHER, 0 },
		{ "anonymous@r.example", TW_NAI_OTHER, 0 },
		{ "@r.example", TW_NAI_OTHER, 0 },
	};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		CHECK_OK(parse(&n, d[i].id));
		CHECK(n.kind == d[i].kind && n.method == d[i].method);
		CHECK_ERR(tw_nai_imsi(&n, imsi, &il), TW_ERR_STATE);
	}
	/* RFC 4186 A.5 re-auth identity: no digit convention (kind other). */
	CHECK_OK(parse(&n, "Y24fNSrz8BP274jOJaF17WfxI8YO7QX00pMXk9XMMVOw7broaNhTczuFq53aEpOkk3L0dm@eapsim.foo"));
	CHECK(n.kind == TW_NAI_OTHER);
	/* RFC 7542 §3.3.2 decorated NAI. */
	CHECK_OK(parse(&n, "homerealm.example.org!0001010123456789@otherrealm.example.net"));
	CHECK(view_is(n.home_realm, n.home_realm_len, "homerealm.example.org"));
	CHECK(view_is(n.user, n.user_len, "0001010123456789"));
	CHECK(view_is(n.realm, n.realm_len, "otherrealm.example.net"));
	CHECK(n.kind == TW_NAI_PERMANENT && n.method == TW_EAP_TYPE_AKA);
	CHECK_OK(tw_nai_imsi(&n, imsi, &il));
	CHECK(strcmp(imsi, "001010123456789") == 0);
	/* '!' without a realm is just a username character. */
	CHECK_OK(parse(&n, "a!b"));
	CHECK(n.home_realm == NULL && n.user_len == 3);

	/* Bad syntax. */
	static const char *bad[] = {
		"a..b@x.org", ".ab@x.org", "ab.@x.org", "a b@x.org", "a@",
		"a@x..org", "a@-x.org", "a@x-.org", "a@x.org.", "a@b@c.org",
		"a@x_y.org", "!user@realm.org", "bad_realm!u@realm.org",
		"a\tb", "a\"b@x.org",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_ERR(parse(&n, bad[i]), TW_ERR_DECODE);
	CHECK_ERR(tw_nai_parse(&n, (const uint8_t *)"", 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_nai_parse(&n, (const uint8_t *)"a\0b", 3), TW_ERR_DECODE);
	uint8_t lng[300];
	memset(lng, 'a', sizeof(lng));
	CHECK_ERR(tw_nai_parse(&n, lng, 254), TW_ERR_LENGTH);
	CHECK_OK(tw_nai_parse(&n, lng, 253));
	CHECK_ERR(tw_nai_parse(NULL, lng, 3), TW_ERR_INVAL);

	/* IMSI extraction: digits only, 6..15 of them. */
	CHECK_OK(parse(&n, "012345@x.org"));
	CHECK_ERR(tw_nai_imsi(&n, imsi, &il), TW_ERR_DECODE);
	CHECK_OK(parse(&n, "0123456@x.org"));
	CHECK_OK(tw_nai_imsi(&n, imsi, &il));
	CHECK(il == 6);
	CHECK_OK(parse(&n, "01234567890123456@x.org"));
	CHECK_ERR(tw_nai_imsi(&n, imsi, &il), TW_ERR_DECODE);
	CHECK_OK(parse(&n, "0123a56789@x.org"));
	CHECK_ERR(tw_nai_imsi(&n, imsi, &il), TW_ERR_DECODE);
}

static void test_mask(void)
{
	char out[16];

	CHECK_OK(tw_nai_mask_imsi(out, sizeof(out), "001010123456789", 15));
	CHECK(strcmp(out, "001010*****6789") == 0);
	CHECK_OK(tw_nai_mask_imsi(out, sizeof(out), "00101012345", 11));
	CHECK(strcmp(out, "001010*2345") == 0);
	CHECK_OK(tw_nai_mask_imsi(out, sizeof(out), "0010101234", 10));
	CHECK(strcmp(out, "00101*****") == 0);
	CHECK_ERR(tw_nai_mask_imsi(out, sizeof(out), "00101", 5), TW_ERR_DECODE);
	CHECK_ERR(tw_nai_mask_imsi(out, sizeof(out), "0010101234567890", 16), TW_ERR_DECODE);
	CHECK_ERR(tw_nai_mask_imsi(out, sizeof(out), "00101x123456789", 15), TW_ERR_DECODE);
	CHECK_ERR(tw_nai_mask_imsi(out, 15, "001010123456789", 15), TW_ERR_OVERFLOW);
}

/*
 * Every octet in a one-octet username ("X@a.b") and in a realm label
 * ("u@aXa"), against RFC 7542 §2.2's classes written out here:
 * utf8-atext = ALPHA / DIGIT / "!" / "#" / "$" / "%" / "&" / "'" / "*" /
 * "+" / "-" / "/" / "=" / "?" / "^" / "_" / "`" / "{" / "|" / "}" / "~" /
 * UTF8-xtra-char (here: any octet >= 0x80); a realm label's inside is
 * ALPHA / DIGIT / "-" / UTF8-xtra-char ("." separates labels, and "@" in
 * a realm is not allowed).
 */
static void test_octet_classes(void)
{
	unsigned bad = 0;

	for (unsigned c = 0; c < 256; c++) {
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c >= 0x80;
		bool atext = alnum || (c != 0 && strchr("!#$%&'*+-/=?^_`{|}~", (int)c) != NULL);
		bool ldh = alnum || c == '-';
		uint8_t user[5] = { (uint8_t)c, '@', 'a', '.', 'b' };
		uint8_t realm[5] = { 'u', '@', 'a', (uint8_t)c, 'a' };
		struct tw_nai n;
		int ru = tw_nai_parse(&n, user, sizeof(user));
		int rr = tw_nai_parse(&n, realm, sizeof(realm));

		/* "@": the username is empty and the realm "@a.b" is bad;
		 * ".": a username of one dot is bad, a realm "a.a" is good;
		 * "!": decoration (§3.3.2) with an empty home realm, bad */
		if (c == '@' || c == '!')
			bad += ru == TW_OK || rr == TW_OK;
		else if (c == '.')
			bad += ru == TW_OK || rr != TW_OK;
		else
			bad += (ru == TW_OK) != atext || (rr == TW_OK) != ldh;
		if (bad != 0) {
			fprintf(stderr, "octet 0x%02x: username %d realm %d\n", c, ru, rr);
			break;
		}
	}
	CHECK(bad == 0);
}

/*
 * Every realm of 1..6 octets over "a", "0", "-", "." (5460 of them), in
 * "u@REALM" and as the home realm of "REALM!u@x.org", against RFC 7542
 * §2.2's grammar written out here: realm = label *("." label), label =
 * let-dig *(ldh-str), ldh-str = *(ALPHA / DIGIT / "-") let-dig: labels
 * not empty, starting and ending with a letter or digit.
 */
static bool grammar_realm(const char *r)
{
	size_t n = strlen(r), start = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && r[i] != '.')
			continue;
		/* label r[start..i) */
		if (i == start || r[start] == '-' || r[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

static void test_realm_grammar(void)
{
	static const char alpha[4] = { 'a', '0', '-', '.' };
	unsigned bad = 0, tried = 0, good = 0;

	for (size_t len = 1; len <= 6; len++) {
		size_t total = 1;

		for (size_t k = 0; k < len; k++)
			total *= 4;
		for (size_t code = 0; code < total; code++) {
			char realm[8], id[32];
			struct tw_nai n;
			size_t c = code;
			bool want;

			for (size_t k = 0; k < len; k++, c /= 4)
				realm[k] = alpha[c % 4];
			realm[len] = 0;
			want = grammar_realm(realm);
			snprintf(id, sizeof(id), "u@%s", realm);
			bad += (parse(&n, id) == TW_OK) != want;
			snprintf(id, sizeof(id), "%s!u@x.org", realm);
			bad += (parse(&n, id) == TW_OK) != want;
			tried++;
			good += want;
		}
	}
	CHECK(tried == 5460 && good > 100 && good < tried / 2);
	CHECK(bad == 0);
}

void test_main(void)
{
	test_octet_classes();
	test_realm_grammar();
	test_parse();
	test_mask();
}
