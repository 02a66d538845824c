/*
 * twag — WLCP, the Wireless LAN Control Plane protocol between the UE and
 * the TWAG in multi-connection mode (3GPP TS 24.244 Rel-12..15), message
 * codec with the information element rules of TS 24.007 §11.2.
 *
 * Message layout (§8.1): Message type (octet 1), Procedure transaction
 * identity (octet 2), then the mandatory IEs in table order (V / LV, no
 * IEI), then optional IEs (TV / TLV with an IEI) in any order.
 *
 * Message tables used here:
 *   PDN CONNECTIVITY REQUEST (0x81, table 7.1.1.1): Request type (V 1/2,
 *     bits 1-4) + PDN type (V 1/2, bits 5-8); 28 APN (TLV 3-102); 27 PCO
 *     (TLV 3-253); 33 NBIFOM container (TLV 3-257); A- UE N3G capability
 *     (TV 1).
 *   PDN CONNECTIVITY ACCEPT (0x82): APN (LV 2-101), PDN address (LV 6-14),
 *     TWAG user plane MAC address (LV 7); 27 PCO; 33 NBIFOM.
 *   PDN CONNECTIVITY REJECT (0x83): WLCP cause (V 1); 27 PCO; 37 Tw1 value
 *     (TLV 3); 6B Re-attempt indicator (TLV 3); 33 NBIFOM.
 *   PDN CONNECTIVITY COMPLETE (0x84): no IE beyond the header.
 *   PDN DISCONNECT REQUEST (0x85): TWAG user plane MAC address (LV 7);
 *     58 WLCP cause (TV 2); 27 PCO.
 *   PDN DISCONNECT ACCEPT (0x86): TWAG user plane MAC address (LV 7);
 *     27 PCO.
 * Table 7.1.1.1 and the message type values were checked against the
 * Rel-17 text; the other tables follow the same clause as best known and
 * live in one table in wlcp.c (see the note there).
 *
 * Decoding returns views into the caller's buffer; encoding writes into a
 * caller's buffer. No allocation, no I/O.
 */
#ifndef TWAG_WLCP_H
#define TWAG_WLCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum tw_wlcp_msg_type {
	/* TS 24.244 §8.2 table 8.2.1: bits 8..7 = "10" mark WLCP */
	TW_WLCP_PDN_CONN_REQUEST = 0x81,
	TW_WLCP_PDN_CONN_ACCEPT = 0x82,
	TW_WLCP_PDN_CONN_REJECT = 0x83,
	TW_WLCP_PDN_CONN_COMPLETE = 0x84,
	TW_WLCP_PDN_DISC_REQUEST = 0x85,
	TW_WLCP_PDN_DISC_ACCEPT = 0x86,
};

enum {
	/* §8.4 request type */
	TW_WLCP_REQ_INITIAL = 1,
	TW_WLCP_REQ_HANDOVER = 2,
	/* §8.5 PDN type (also the PDN address type) */
	TW_WLCP_PDN_IPV4 = 1,
	TW_WLCP_PDN_IPV6 = 2,
	TW_WLCP_PDN_IPV4V6 = 3,

	/* IEIs of the optional IEs */
	TW_WLCP_IEI_APN = 0x28,
	TW_WLCP_IEI_PCO = 0x27,
	TW_WLCP_IEI_NBIFOM = 0x33,
	TW_WLCP_IEI_UE_N3G_CAP = 0xA, /* type 1: IEI in bits 8..5 */
	TW_WLCP_IEI_TW1 = 0x37,
	TW_WLCP_IEI_REATTEMPT = 0x6B,
	TW_WLCP_IEI_CAUSE = 0x58,

	TW_WLCP_APN_MAX = 100, /* APN value octets (TS 23.003 §9.1) */
	TW_WLCP_PCO_MAX = 251,
	TW_WLCP_NBIFOM_MAX = 255,
	TW_WLCP_MAC_LEN = 6,
	TW_WLCP_HDR_LEN = 2,
};

/* A decoded (or to-be-encoded) WLCP message. Pointers are views into the
 * decoded buffer; each has_* says whether the IE is present. */
struct tw_wlcp_msg {
	uint8_t type; /* enum tw_wlcp_msg_type */
	uint8_t pti;  /* §8.3: 1..254 */

	uint8_t request_type; /* REQUEST */
	uint8_t pdn_type;     /* REQUEST */

	bool has_apn;
	const uint8_t *apn; /* label-encoded (TS 23.003 §9.1), 1..100 octets */
	size_t apn_len;

	bool has_pdn_address;  /* ACCEPT */
	uint8_t pdn_addr_type; /* TW_WLCP_PDN_* */
	uint8_t ipv4[4];
	uint8_t ipv6_iid[8];   /* IPv6 interface identifier */

	bool has_twag_mac;
	uint8_t twag_mac[TW_WLCP_MAC_LEN];

	bool has_cause;
	uint8_t cause;

	bool has_pco;
	const uint8_t *pco;
	size_t pco_len;

	bool has_nbifom;
	const uint8_t *nbifom;
	size_t nbifom_len;

	bool has_ue_n3g_cap;
	uint8_t ue_n3g_cap; /* 4 bits */

	bool has_tw1;
	uint8_t tw1; /* GPRS timer 3 value octet */

	bool has_reattempt;
	uint8_t reattempt;
};

/*
 * Decodes one WLCP message (TS 24.244 §6, §7, §8 with TS 24.007 §11.2.4):
 * unknown message type -> TW_ERR_UNSUPPORTED; PTI 0 or 255, a missing or
 * malformed mandatory IE, an IE overrunning the message, or an unknown
 * comprehension-required IEI (bits 8..5 = 0000) -> TW_ERR_DECODE. Unknown
 * other IEs are skipped (type 1/2 when bit 8 is set, TLV-E for 0x7X, TLV
 * otherwise); a known optional IE with a bad length is treated as absent
 * (TS 24.007 §8.7.2); a repeated IE: only the first is used (§8.6.3).
 */
TW_MUST_CHECK int tw_wlcp_decode(struct tw_wlcp_msg *m, const uint8_t *buf,
				 size_t len);

/*
 * Encodes m into buf: header, the mandatory IEs of m->type (all must be
 * present: TW_ERR_INVAL otherwise), then each optional IE present that the
 * message allows (others: TW_ERR_INVAL). TW_ERR_LENGTH for an IE value of
 * a length the spec forbids, TW_ERR_OVERFLOW if max is too small,
 * TW_ERR_UNSUPPORTED for an unknown message type.
 */
TW_MUST_CHECK int tw_wlcp_encode(uint8_t *buf, size_t max, size_t *len,
				 const struct tw_wlcp_msg *m);

/*
 * Converts a dotted APN ("internet.example") to the TS 23.003 §9.1 label
 * encoding (length-prefixed labels, no trailing root). TW_ERR_LENGTH for
 * an empty label, a label above 63 octets or a result above 100 octets.
 */
TW_MUST_CHECK int tw_wlcp_apn_encode(uint8_t *out, size_t max, size_t *len,
				     const char *dotted, size_t dotted_len);

#endif
