/*
 * twag — EAP packet framing (RFC 3748, June 2004, §4 and §5), with the
 * EAP-Initiate/EAP-Finish codes of ERP (RFC 6696, July 2012, §5.3).
 *
 *    0                   1                   2                   3
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |     Code      |  Identifier   |            Length             |
 *   +---------------+---------------+-------------------------------+
 *   |     Type      |  Type-Data ...  (Request, Response, 5, 6 only)
 *
 * Decoding returns a view into the caller's buffer; encoding writes into a
 * caller's buffer. Nothing here allocates or keeps state.
 */
#ifndef TWAG_EAP_H
#define TWAG_EAP_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum tw_eap_code {
	TW_EAP_REQUEST = 1,
	TW_EAP_RESPONSE = 2,
	TW_EAP_SUCCESS = 3,
	TW_EAP_FAILURE = 4,
	TW_EAP_INITIATE = 5, /* RFC 6696 §5.3.1 */
	TW_EAP_FINISH = 6,   /* RFC 6696 §5.3.2 */
};

enum tw_eap_type {
	TW_EAP_TYPE_IDENTITY = 1,
	TW_EAP_TYPE_NOTIFICATION = 2,
	TW_EAP_TYPE_NAK = 3,
	TW_EAP_TYPE_SIM = 18,       /* RFC 4186 */
	TW_EAP_TYPE_AKA = 23,       /* RFC 4187 */
	TW_EAP_TYPE_AKA_PRIME = 50, /* RFC 9048 */
};

enum {
	TW_EAP_HDR_LEN = 4,       /* Code, Identifier, Length */
	TW_EAP_MAX_LEN = 65535,   /* Length is two octets */
};

/* A decoded EAP packet: a view into the buffer given to tw_eap_decode(). */
struct tw_eap_view {
	uint8_t code, id;
	uint16_t length;     /* the Length field: octets that belong to the packet */
	uint8_t type;        /* 0 for Success/Failure */
	const uint8_t *data; /* bytes after the Type octet (NULL when none) */
	size_t data_len;
};

/*
 * Decodes the EAP header (RFC 3748 §4). The Length field must be at least 4,
 * at least 5 for the codes that carry a Type (Request, Response, Initiate,
 * Finish), exactly 4 for Success/Failure (§4.2), and not above pkt_len.
 * Octets beyond Length are padding of the lower layer and are ignored
 * (§4.1: "Octets outside the range of the Length field should be treated
 * as Data Link Layer padding and MUST be ignored upon reception").
 * An unknown Code is an error (§4: silently discarded by the caller).
 * Returns TW_OK, TW_ERR_INVAL for NULL arguments, TW_ERR_DECODE otherwise.
 */
TW_MUST_CHECK int tw_eap_decode(struct tw_eap_view *v, const uint8_t *pkt,
				size_t pkt_len);

/*
 * Encodes an EAP packet into buf[0..max): header, then for Request,
 * Response, Initiate and Finish the type octet and data_len octets of data
 * (data may be NULL when data_len is 0, and may point inside buf at offset
 * 5: it is moved, not copied blindly). Success/Failure are 4 octets and
 * ignore type and data. *len gets the packet length.
 * Returns TW_OK, TW_ERR_OVERFLOW if max is too small, TW_ERR_LENGTH if the
 * packet would exceed 65535 octets, TW_ERR_INVAL for an unknown code or
 * NULL pointers.
 */
TW_MUST_CHECK int tw_eap_encode(uint8_t *buf, size_t max, size_t *len,
				uint8_t code, uint8_t id, uint8_t type,
				const uint8_t *data, size_t data_len);

/* Sets the Length field of an EAP packet being built in place (buf holds at
 * least 4 octets). Returns TW_ERR_LENGTH above 65535 or below 4. */
TW_MUST_CHECK int tw_eap_set_length(uint8_t *buf, size_t len);

#endif
