/*
 * twag — EAP identities: Network Access Identifiers (RFC 7542, May 2015,
 * §2.2 syntax, §3.3.2 decorated NAIs "homerealm!user@otherrealm") and the
 * EAP-SIM/AKA/AKA' leading-digit convention (RFC 4186 §4.2.1.3-§4.2.1.5,
 * RFC 4187 §4.1.1.3-§4.1.1.7, TS 23.003 V17 §19.3.2-§19.3.6):
 *
 *   0 EAP-AKA permanent   2 EAP-AKA pseudonym   4 EAP-AKA fast re-auth
 *   1 EAP-SIM permanent   3 EAP-SIM pseudonym   5 EAP-SIM fast re-auth
 *   6 EAP-AKA' permanent  7 EAP-AKA' pseudonym  8 EAP-AKA' fast re-auth
 *
 * A permanent identity is the digit, then the IMSI (TS 23.003 §2.2: 6..15
 * decimal digits), e.g. "0234150999999999@wlan.mnc015.mcc234.3gppnetwork.org".
 * Parsing returns views into the caller's buffer and allocates nothing.
 */
#ifndef TWAG_NAI_H
#define TWAG_NAI_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum tw_nai_kind {
	TW_NAI_OTHER = 0,     /* no recognised leading digit (e.g. anonymous) */
	TW_NAI_PERMANENT = 1,
	TW_NAI_PSEUDONYM = 2,
	TW_NAI_REAUTH = 3,
};

enum {
	TW_NAI_MAX_LEN = 253,  /* RFC 7542 §2.3 (a RADIUS User-Name) */
	TW_NAI_IMSI_MIN = 6,
	TW_NAI_IMSI_MAX = 15,
	TW_NAI_MASK_MAX = 16,  /* masked IMSI text, NUL included */
};

struct tw_nai {
	const uint8_t *user;      /* username, decoration removed (may be empty) */
	size_t user_len;
	const uint8_t *realm;     /* after '@' (NULL when there is none) */
	size_t realm_len;
	const uint8_t *home_realm; /* decorated NAI: before the first '!' */
	size_t home_realm_len;
	uint8_t kind;             /* enum tw_nai_kind, from user[0] */
	uint8_t method;           /* enum tw_eap_type the digit names, or 0 */
};

/*
 * Parses an EAP identity (the octets of EAP-Response/Identity or
 * AT_IDENTITY) as an RFC 7542 NAI: utf8-username ["@" realm], where the
 * username is dot-separated atext (no empty label, no '@', no control
 * characters or spaces; octets >= 0x80 accepted as UTF-8 tails) and the
 * realm is dot-separated labels of letters, digits and '-' (not at a label's
 * ends; octets >= 0x80 accepted for internationalised labels). When a realm
 * is present and the username contains '!', the part before the first '!'
 * is the home realm of a decorated NAI (RFC 7542 §3.3.2) and must itself be
 * a valid realm. Then classifies the user name by its leading digit.
 * Returns TW_OK, TW_ERR_LENGTH for an empty or over-long identity,
 * TW_ERR_DECODE for bad syntax, TW_ERR_INVAL for NULL.
 */
TW_MUST_CHECK int tw_nai_parse(struct tw_nai *n, const uint8_t *id, size_t len);

/*
 * The IMSI of a permanent identity: the user name after the leading digit,
 * which must be 6..15 decimal digits. Writes the digits and a NUL into
 * imsi[16], *imsi_len the digit count. Returns TW_ERR_STATE for a pseudonym,
 * re-auth or other identity, TW_ERR_DECODE for non-digits or a bad length.
 */
TW_MUST_CHECK int tw_nai_imsi(const struct tw_nai *n, char imsi[static 16],
			      size_t *imsi_len);

/*
 * Masks an IMSI for logs (STYLE: never log a SUPI in clear): the first 6
 * digits (MCC + MNC) and the last 4 stay, every digit between is '*', e.g.
 * "001010123456789" -> "001010*****6789". IMSIs shorter than 11 digits keep
 * only the first 5. out gets the text and a NUL (16 octets suffice).
 * Returns TW_ERR_DECODE for non-digits or a length outside 6..15,
 * TW_ERR_OVERFLOW if out_max is too small.
 */
TW_MUST_CHECK int tw_nai_mask_imsi(char *out, size_t out_max, const char *imsi,
				   size_t imsi_len);

#endif
