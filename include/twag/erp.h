/*
 * twag — the EAP Re-authentication Protocol, ERP (RFC 6696, which obsoletes
 * RFC 5296), with the EMSK key hierarchy of RFC 5295.
 *
 * Keys (RFC 6696 §4, RFC 5295 §3):
 *   EMSKname = KDF(EAP Session-ID, "EMSK" | 0x00 | 0x00 0x08)   (8 octets)
 *   keyName-NAI = hex(EMSKname) "@" realm                       (§5.3.2)
 *   rRK  = KDF(EMSK, "EAP Re-authentication Root Key@ietf.org" | 0x00 | len)
 *   rIK  = KDF(rRK, "Re-authentication Integrity Key@ietf.org" | 0x00 |
 *              cryptosuite | len)
 *   rMSK = KDF(rRK, "Re-authentication Master Session Key@ietf.org" | 0x00 |
 *              SEQ | len)
 * where KDF is the RFC 5295 §3.1.2 default PRF+ over HMAC-SHA-256 and each
 * key is as long as its parent (64 octets, the EMSK of every method here).
 * The DSRK / DS-rRK (local ER server, RFC 6696 §4.2) variant is not
 * implemented: twag is always the home ER server.
 *
 * Messages (§5.3): EAP-Initiate/Re-auth-Start, EAP-Initiate/Re-auth and
 * EAP-Finish/Re-auth, decoded strictly into views of the caller's buffer
 * and encoded into caller buffers. The server verifies the authentication
 * tag in constant time before it looks at SEQ, and commits a new SEQ only
 * after the tag verified and the Finish was built; a replay or a bad tag
 * leaves the key state untouched. Nothing here allocates or does I/O.
 */
#ifndef TWAG_ERP_H
#define TWAG_ERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/hmac.h"

enum {
	TW_ERP_EMSK_LEN = 64,
	TW_ERP_EMSK_NAME_LEN = 8, /* RFC 5295 §3.2: 64-bit EMSKname */
	TW_ERP_RRK_LEN = 64,      /* RFC 6696 §4.1: length of the EMSK */
	TW_ERP_RIK_LEN = 64,      /* §4.3: length of the rRK */
	TW_ERP_RMSK_LEN = 64,     /* §4.6: length of the rRK */
	TW_ERP_TLV_MAX = 255,     /* TLV length is one octet */
	TW_ERP_NAI_MAX = 253,     /* RFC 7542 §2.2: an NAI is at most 253 octets */
	TW_ERP_TAG_MAX = 32,

	/* §5.3.2 / IANA "EAP Initiate and Finish Types" */
	TW_ERP_TYPE_REAUTH_START = 1,
	TW_ERP_TYPE_REAUTH = 2,

	/* §5.3.2 flags octet of Re-auth / Finish */
	TW_ERP_FLAG_R = 0x80, /* Finish: 1 = failure; Initiate: reserved */
	TW_ERP_FLAG_B = 0x40, /* bootstrap */
	TW_ERP_FLAG_L = 0x20, /* lifetime */

	/* §5.3.2 cryptosuites: HMAC-SHA256 truncated to 64/128/256 bits;
	 * HMAC-SHA256-128 is the mandatory and default one */
	TW_ERP_CS_HMAC_SHA256_64 = 1,
	TW_ERP_CS_HMAC_SHA256_128 = 2,
	TW_ERP_CS_HMAC_SHA256_256 = 3,

	/* §5.3.4 TV and TLV attribute types */
	TW_ERP_TLV_KEYNAME_NAI = 1,
	TW_ERP_TV_RRK_LIFETIME = 2,  /* 4-octet value */
	TW_ERP_TV_RMSK_LIFETIME = 3, /* 4-octet value */
	TW_ERP_TLV_DOMAIN_NAME = 4,
	TW_ERP_TLV_CRYPTOSUITES = 5,
	TW_ERP_TLV_AUTH_INDICATION = 6,
	/* 128..191: non-critical TLVs (128..132 are the RADIUS NAS/station
	 * attributes); skipped when not understood. 192..255: critical. */
};

/* The RFC 5295 §3.1.2 KDF: PRF+ with HMAC-SHA-256 over
 * S = label | 0x00 | optional data | length (2 octets, = out_len):
 * T1 = HMAC(K, S | 0x01), Tn = HMAC(K, Tn-1 | S | n). TW_ERR_LENGTH if
 * out_len is 0 or above 255 * 32; TW_ERR_INVAL for NULL with a length. */
TW_MUST_CHECK int tw_erp_kdf(uint8_t *out, size_t out_len, const uint8_t *key,
			     size_t key_len, const char *label,
			     const uint8_t *opt, size_t opt_len);

/* RFC 5295 §3.2: EMSKname = KDF(EAP Session-ID, "EMSK", 8): the Session-ID
 * (RFC 5247 Appendix A) is the key. TW_ERR_LENGTH for an empty Session-ID. */
TW_MUST_CHECK int tw_erp_emsk_name(uint8_t name[static 8],
				   const uint8_t *session_id, size_t sid_len);

/* RFC 6696 §4.1: rRK = KDF(EMSK, rRK label, 64). */
TW_MUST_CHECK int tw_erp_rrk(uint8_t rrk[static 64], const uint8_t emsk[static 64]);
/* §4.3: rIK = KDF(rRK, rIK label | cryptosuite, 64). TW_ERR_UNSUPPORTED
 * for a cryptosuite other than 1..3. */
TW_MUST_CHECK int tw_erp_rik(uint8_t rik[static 64], const uint8_t rrk[static 64],
			     uint8_t cryptosuite);
/* §4.6: rMSK = KDF(rRK, rMSK label | SEQ, 64), SEQ as two octets. */
TW_MUST_CHECK int tw_erp_rmsk(uint8_t rmsk[static 64], const uint8_t rrk[static 64],
			      uint16_t seq);

/* Authentication tag length of a cryptosuite (8, 16 or 32), 0 if unknown. */
size_t tw_erp_tag_len(uint8_t cryptosuite);

/*
 * One ERP key (rRK/rIK and the keyName-NAI that names it), shared by both
 * sides: the server keeps the last SEQ it accepted, the peer the next SEQ
 * it will send. Caller-owned; wipe it with tw_erp_key_wipe().
 */
struct tw_erp_key_ctx {
	uint8_t rrk[TW_ERP_RRK_LEN];
	struct tw_hmac_sha256_ctx rik; /* HMAC keyed with rIK, built once */
	uint8_t keyname_nai[TW_ERP_NAI_MAX];
	uint8_t keyname_nai_len;
	uint8_t cryptosuite;
	bool seq_seen;     /* server: a SEQ was accepted with this key */
	uint16_t last_seq; /* server: last accepted SEQ */
	uint32_t next_seq; /* peer: SEQ of the next Re-auth (65536 = spent) */
	bool pending;      /* peer: a Re-auth is outstanding */
	uint16_t pending_seq;
};

/*
 * Builds a key from the EMSK and the EAP Session-ID of a full
 * authentication (RFC 6696 §4.1, §4.3): EMSKname, keyName-NAI =
 * 16 lower-case hex digits "@" realm, rRK, rIK for the cryptosuite, and
 * SEQ state (server: none seen; peer: starts at 0). TW_ERR_LENGTH if the
 * NAI would exceed 253 octets or realm is empty, TW_ERR_UNSUPPORTED for an
 * unknown cryptosuite. The context is wiped on failure.
 */
TW_MUST_CHECK int tw_erp_key_init(struct tw_erp_key_ctx *k,
				  const uint8_t emsk[static 64],
				  const uint8_t *session_id, size_t sid_len,
				  const char *realm, size_t realm_len,
				  uint8_t cryptosuite);
void tw_erp_key_wipe(struct tw_erp_key_ctx *k);

/* A decoded ERP packet: views into the caller's buffer. */
struct tw_erp_msg {
	uint8_t code; /* TW_EAP_INITIATE or TW_EAP_FINISH */
	uint8_t id;
	uint8_t type; /* TW_ERP_TYPE_* */
	uint8_t flags;
	uint16_t seq;
	const uint8_t *keyname_nai;
	size_t keyname_nai_len;
	const uint8_t *domain;
	size_t domain_len;
	const uint8_t *cryptosuites; /* Cryptosuite List TLV */
	size_t cryptosuites_len;
	const uint8_t *auth_ind;     /* Authorization Indication TLV */
	size_t auth_ind_len;
	bool has_rrk_lifetime, has_rmsk_lifetime;
	uint32_t rrk_lifetime, rmsk_lifetime;
	uint8_t cryptosuite; /* 0: no tag (only an R=1 Finish may lack it) */
	const uint8_t *tag;
	size_t tag_len;
	size_t signed_len; /* octets the tag covers: Code .. Cryptosuite */
};

/*
 * Decodes an ERP packet (RFC 6696 §5.3) strictly: EAP framing by
 * tw_eap_decode() (octets past the EAP Length are link-layer padding and
 * ignored, RFC 3748 §4.1), Re-auth-Start only as EAP-Initiate, TVs/TLVs must tile the
 * packet exactly, a known TV has its fixed length, an unknown TLV in
 * 128..191 is skipped, any other unknown type is an error, keyName-NAI
 * (1..253 octets) appears exactly once in Re-auth and Finish and not in
 * Re-auth-Start, no attribute is duplicated. The cryptosuite and tag are
 * located from the end (tag length follows from the cryptosuite; 2, then
 * 3, then 1 are tried), so a valid packet of the default cryptosuite is
 * always split correctly. Returns TW_ERR_DECODE / TW_ERR_LENGTH.
 * The tag is NOT verified here.
 */
TW_MUST_CHECK int tw_erp_decode(struct tw_erp_msg *m, const uint8_t *pkt,
				size_t pkt_len);

/* tw_erp_decode() with the cryptosuite known (the key's): only that suite
 * is tried at the end. Where a tag octet reads as another suite and the
 * rest happens to tile as attributes, the guess above may split a valid
 * packet wrongly; with the suite known it cannot. TW_ERR_INVAL for a
 * suite that is not one of RFC 6696's. */
TW_MUST_CHECK int tw_erp_decode_suite(struct tw_erp_msg *m, const uint8_t *pkt,
				      size_t pkt_len, uint8_t cryptosuite);

/*
 * Encodes m (code, id, type, flags, seq and the attributes present; the
 * tag and signed_len fields are ignored) into buf. For type 2 the
 * cryptosuite and tag are appended: the tag is HMAC-SHA-256 under k's rIK,
 * truncated per k's cryptosuite, over Code .. Cryptosuite (§5.3.2). k may
 * be NULL only for Re-auth-Start and for an untagged R=1 Finish.
 * TW_ERR_OVERFLOW if buf is too small, TW_ERR_LENGTH for an attribute
 * above 255 octets, TW_ERR_INVAL for a bad combination.
 */
TW_MUST_CHECK int tw_erp_encode(uint8_t *buf, size_t max, size_t *len,
				const struct tw_erp_msg *m,
				const struct tw_erp_key_ctx *k);

/* EAP-Initiate/Re-auth-Start (§5.3.1) with an optional Domain-Name TLV
 * (domain may be NULL). */
TW_MUST_CHECK int tw_erp_build_reauth_start(uint8_t *buf, size_t max,
					    size_t *len, uint8_t id,
					    const uint8_t *domain,
					    size_t domain_len);

/* Verifies m's tag under k in constant time (the tag length is public).
 * TW_ERR_AUTH for a wrong tag or a cryptosuite other than k's. */
TW_MUST_CHECK int tw_erp_verify_tag(const struct tw_erp_key_ctx *k,
				    const uint8_t *pkt,
				    const struct tw_erp_msg *m);

/* Finds the key named by a keyName-NAI; returns TW_OK and sets *k, or
 * TW_ERR_NOTFOUND. The server layer owns the table (and its locking). */
typedef int (*tw_erp_lookup_fn)(void *arg, const uint8_t *nai, size_t nai_len,
				struct tw_erp_key_ctx **k);

/*
 * Server (RFC 6696 §5.3.2, §5.3.3): processes an EAP-Initiate/Re-auth.
 * Order: strict decode; key lookup by keyName-NAI (TW_ERR_NOTFOUND);
 * cryptosuite must be the key's (TW_ERR_UNSUPPORTED); tag verified in
 * constant time (TW_ERR_AUTH); then SEQ must be greater than the last
 * accepted one (TW_ERR_REPLAY); then rMSK for that SEQ is derived and a
 * successful EAP-Finish/Re-auth (same Identifier, SEQ, keyName-NAI, tag
 * under rIK) is written to out. Only then is SEQ committed. On any error
 * the key state and rmsk are left untouched/zero and nothing is written
 * as a success; the caller may answer with tw_erp_build_finish_failure().
 * *key_out (may be NULL) names the key used.
 */
TW_MUST_CHECK int tw_erp_server_reauth(tw_erp_lookup_fn lookup, void *arg,
				       const uint8_t *pkt, size_t pkt_len,
				       uint8_t *out, size_t out_max,
				       size_t *out_len,
				       uint8_t rmsk[static 64],
				       struct tw_erp_key_ctx **key_out);

/* A failure EAP-Finish/Re-auth (R = 1) for a Re-auth that could not be
 * accepted: tagged under k when the key is known, untagged otherwise. */
TW_MUST_CHECK int tw_erp_build_finish_failure(uint8_t *buf, size_t max,
					      size_t *len, uint8_t id,
					      uint16_t seq, const uint8_t *nai,
					      size_t nai_len,
					      const struct tw_erp_key_ctx *k);

/* Peer: builds an EAP-Initiate/Re-auth with the next SEQ (consumed even if
 * the exchange fails, so a SEQ is never sent twice) and the B/L flags
 * given. TW_ERR_RANGE once all 65536 SEQ values are spent (a full EAP
 * authentication is needed). */
TW_MUST_CHECK int tw_erp_peer_build_reauth(struct tw_erp_key_ctx *k,
					   uint8_t *buf, size_t max,
					   size_t *len, uint8_t id,
					   uint8_t flags);

/*
 * Peer: processes the EAP-Finish/Re-auth answering the outstanding
 * Re-auth. Decode, keyName-NAI and SEQ must match the request
 * (TW_ERR_DECODE / TW_ERR_STATE), the tag must verify (TW_ERR_AUTH, and an
 * untagged Finish is never trusted), R = 1 is a rejection (TW_ERR_AUTH).
 * On success rMSK for the SEQ is written and the exchange is closed.
 */
TW_MUST_CHECK int tw_erp_peer_finish(struct tw_erp_key_ctx *k,
				     const uint8_t *pkt, size_t pkt_len,
				     uint8_t rmsk[static 64]);

#endif
