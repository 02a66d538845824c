/*
 * twag — NAI parsing (RFC 7542, May 2015) and the EAP-SIM/AKA/AKA'
 * identity conventions (RFC 4186, RFC 4187, TS 23.003 V17 §19.3).
 */
#include <string.h>

#include "twag/eap.h"
#include "twag/nai.h"

/* RFC 7542 §2.2: utf8-atext = ALPHA / DIGIT / "!" / "#" / "$" / "%" / "&" /
 * "'" / "*" / "+" / "-" / "/" / "=" / "?" / "^" / "_" / "`" / "{" / "|" /
 * "}" / "~" / UTF8-xtra-char; §2.2 realm labels: ALPHA / DIGIT / "-" /
 * UTF8-xtra-char (ldh). One table lookup per octet (a NAI is parsed for
 * each EAP identity twagd sees). */
enum { C_ATEXT = 1, C_LDH = 2, C_DOT = 4, C_HYPHEN = 8 };

#define C_ALNUM(c)                                                                     \
	(((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') ||                  \
	 ((c) >= '0' && (c) <= '9') || (c) >= 0x80)
#define C_SPECIAL(c)                                                                   \
	((c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' ||          \
	 (c) == '\'' || (c) == '*' || (c) == '+' || (c) == '/' || (c) == '=' ||        \
	 (c) == '?' || (c) == '^' || (c) == '_' || (c) == '`' || (c) == '{' ||          \
	 (c) == '|' || (c) == '}' || (c) == '~')
#define C_OF(c)                                                                        \
	(C_ALNUM(c)    ? C_ATEXT | C_LDH                                               \
	 : (c) == '-'  ? C_ATEXT | C_LDH | C_HYPHEN                                    \
	 : (c) == '.'  ? C_DOT                                                         \
	 : C_SPECIAL(c) ? C_ATEXT : 0)
#define C_4(c) C_OF(c), C_OF((c) + 1), C_OF((c) + 2), C_OF((c) + 3)
#define C_16(c) C_4(c), C_4((c) + 4), C_4((c) + 8), C_4((c) + 12)
#define C_64(c) C_16(c), C_16((c) + 16), C_16((c) + 32), C_16((c) + 48)

static const uint8_t nai_class[256] = { C_64(0), C_64(64), C_64(128), C_64(192) };

static int is_atext(uint8_t c)
{
	return nai_class[c] & C_ATEXT;
}

/* utf8-username = dot-string: atext runs separated by single dots. An empty
 * username is allowed (RFC 7542 §2.4, "@realm"). */
static int username_ok(const uint8_t *p, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++) {
		if (p[i] == '.') {
			if (run == 0)
				return 0;
			run = 0;
		} else if (is_atext(p[i])) {
			run++;
		} else {
			return 0;
		}
	}
	return len == 0 || run != 0;
}

/* realm = label *("." label); label = let-dig *(ldh-str), i.e. no '-' at
 * either end: every octet ldh or '.', neither '.' nor '-' first or last,
 * and no ".." ".-" "-." (an empty label, a label starting or ending with
 * '-'). Without a branch per octet. */
static int realm_ok(const uint8_t *p, size_t len)
{
	unsigned bad, prev = C_DOT; /* as after a '.': a first '.' or '-' is bad */

	if (len == 0)
		return 0;
	bad = nai_class[p[len - 1]] & (C_DOT | C_HYPHEN);
	for (size_t i = 0; i < len; i++) {
		unsigned c = nai_class[p[i]];

		bad |= !(c & (C_LDH | C_DOT));
		bad |= (prev & C_DOT) && (c & (C_DOT | C_HYPHEN));
		bad |= (prev & C_HYPHEN) && (c & C_DOT);
		prev = c;
	}
	return bad == 0;
}

int tw_nai_parse(struct tw_nai *n, const uint8_t *id, size_t len)
{
	if (n == NULL || (id == NULL && len != 0))
		return TW_ERR_INVAL;
	memset(n, 0, sizeof(*n));
	if (len == 0 || len > TW_NAI_MAX_LEN)
		return TW_ERR_LENGTH;

	const uint8_t *at = memchr(id, '@', len);
	size_t ulen = at != NULL ? (size_t)(at - id) : len;

	if (!username_ok(id, ulen))
		return TW_ERR_DECODE;
	n->user = id;
	n->user_len = ulen;
	if (at != NULL) {
		n->realm = at + 1;
		n->realm_len = len - ulen - 1;
		if (!realm_ok(n->realm, n->realm_len))
			return TW_ERR_DECODE;
		/* RFC 7542 §3.3.2: "homerealm.example.org!user@otherrealm". */
		const uint8_t *bang = memchr(id, '!', ulen);
		if (bang != NULL) {
			n->home_realm = id;
			n->home_realm_len = (size_t)(bang - id);
			if (!realm_ok(n->home_realm, n->home_realm_len))
				goto bad;
			n->user = bang + 1;
			n->user_len = ulen - n->home_realm_len - 1;
		}
	}

	/* RFC 4186 §4.2.1.3-5, RFC 4187 §4.1.1.3-7, TS 23.003 §19.3.2-6. */
	static const uint8_t kind[9] = {
		TW_NAI_PERMANENT, TW_NAI_PERMANENT, TW_NAI_PSEUDONYM,
		TW_NAI_PSEUDONYM, TW_NAI_REAUTH, TW_NAI_REAUTH,
		TW_NAI_PERMANENT, TW_NAI_PSEUDONYM, TW_NAI_REAUTH,
	};
	static const uint8_t method[9] = {
		TW_EAP_TYPE_AKA, TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
		TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA, TW_EAP_TYPE_SIM,
		TW_EAP_TYPE_AKA_PRIME, TW_EAP_TYPE_AKA_PRIME, TW_EAP_TYPE_AKA_PRIME,
	};
	if (n->user_len != 0 && n->user[0] >= '0' && n->user[0] <= '8') {
		n->kind = kind[n->user[0] - '0'];
		n->method = method[n->user[0] - '0'];
	}
	return TW_OK;
bad:
	memset(n, 0, sizeof(*n));
	return TW_ERR_DECODE;
}

static int digits_ok(const char *s, size_t len)
{
	if (len < TW_NAI_IMSI_MIN || len > TW_NAI_IMSI_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

int tw_nai_imsi(const struct tw_nai *n, char imsi[static 16], size_t *imsi_len)
{
	if (n == NULL || imsi_len == NULL)
		return TW_ERR_INVAL;
	*imsi_len = 0;
	imsi[0] = '\0';
	if (n->kind != TW_NAI_PERMANENT)
		return TW_ERR_STATE;
	const char *d = (const char *)n->user + 1;
	size_t len = n->user_len - 1;
	if (!digits_ok(d, len))
		return TW_ERR_DECODE;
	memcpy(imsi, d, len);
	imsi[len] = '\0';
	*imsi_len = len;
	return TW_OK;
}

int tw_nai_mask_imsi(char *out, size_t out_max, const char *imsi,
		     size_t imsi_len)
{
	if (out == NULL || imsi == NULL)
		return TW_ERR_INVAL;
	if (!digits_ok(imsi, imsi_len))
		return TW_ERR_DECODE;
	if (out_max < imsi_len + 1)
		return TW_ERR_OVERFLOW;
	/* Keep MCC+MNC (TS 23.003 §2.2) and, where the IMSI is long enough
	 * to leave at least one digit hidden, the last four. */
	size_t head = imsi_len >= 11 ? 6 : 5;
	size_t tail = imsi_len >= 11 ? 4 : 0;
	for (size_t i = 0; i < imsi_len; i++)
		out[i] = (i < head || i >= imsi_len - tail) ? imsi[i] : '*';
	out[imsi_len] = '\0';
	return TW_OK;
}
