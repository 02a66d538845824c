/*
 * twag — RADIUS codec for EAP (RFC 2865, June 2000; RFC 2869, June 2000;
 * RFC 3579, September 2003; RFC 2548, March 1999; RFC 5080, December 2007;
 * RFC 5997, August 2010).
 *
 * No I/O, no allocation: the decoder returns bounded views into the
 * caller's datagram, the builder writes into a caller buffer. Both sides
 * are here: the server (twagd) and the client (twag-load, tests).
 *
 * Blast-RADIUS mitigations (RFC 3579 §3.2 as tightened since): every
 * packet we build carries Message-Authenticator as its FIRST attribute;
 * the server requires a valid one on every Access-Request that carries
 * EAP-Message (tw_radius_verify_request).
 */
#ifndef TWAG_RADIUS_H
#define TWAG_RADIUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/md5.h"

enum {
	TW_RADIUS_HDR_LEN = 20,      /* Code, Identifier, Length, Authenticator */
	TW_RADIUS_MIN_LEN = 20,      /* RFC 2865 §3 */
	TW_RADIUS_MAX_LEN = 4096,    /* RFC 2865 §3 */
	TW_RADIUS_AUTH_LEN = 16,
	TW_RADIUS_MAX_ATTRS = 128,   /* more is "too many": dropped */
	TW_RADIUS_ATTR_MAX_VALUE = 253,
	TW_RADIUS_EAP_MAX = 4096 - 20, /* joined EAP-Message bound */
	TW_RADIUS_MSG_AUTH_LEN = 16,
	TW_RADIUS_SECRET_MAX = 128,  /* octets a prepared secret holds */
};

/* Codes (RFC 2865 §3, RFC 2866, RFC 5997). */
enum tw_radius_code {
	TW_RADIUS_ACCESS_REQUEST = 1,
	TW_RADIUS_ACCESS_ACCEPT = 2,
	TW_RADIUS_ACCESS_REJECT = 3,
	TW_RADIUS_ACCOUNTING_REQUEST = 4,
	TW_RADIUS_ACCOUNTING_RESPONSE = 5,
	TW_RADIUS_ACCESS_CHALLENGE = 11,
	TW_RADIUS_STATUS_SERVER = 12,
	/* RFC 5176 §2.1, §2.2 (dynamic authorization, server -> NAS) */
	TW_RADIUS_DISCONNECT_REQUEST = 40,
	TW_RADIUS_DISCONNECT_ACK = 41,
	TW_RADIUS_DISCONNECT_NAK = 42,
	TW_RADIUS_COA_REQUEST = 43,
	TW_RADIUS_COA_ACK = 44,
	TW_RADIUS_COA_NAK = 45,
};

/* Attribute types used here (RFC 2865 §5, RFC 2869 §5, RFC 3579 §3). */
enum tw_radius_attr_type {
	TW_RADIUS_USER_NAME = 1,
	TW_RADIUS_NAS_IP_ADDRESS = 4,
	TW_RADIUS_NAS_PORT = 5,
	TW_RADIUS_SERVICE_TYPE = 6,
	TW_RADIUS_FRAMED_MTU = 12,
	TW_RADIUS_REPLY_MESSAGE = 18,
	TW_RADIUS_STATE = 24,
	TW_RADIUS_FILTER_ID = 11,
	TW_RADIUS_CLASS = 25,
	TW_RADIUS_VENDOR_SPECIFIC = 26,
	TW_RADIUS_SESSION_TIMEOUT = 27,
	TW_RADIUS_IDLE_TIMEOUT = 28,
	TW_RADIUS_CALLED_STATION_ID = 30,
	TW_RADIUS_CALLING_STATION_ID = 31,
	TW_RADIUS_NAS_IDENTIFIER = 32,
	TW_RADIUS_NAS_PORT_TYPE = 61,
	TW_RADIUS_CONNECT_INFO = 77,
	TW_RADIUS_EAP_MESSAGE = 79,
	TW_RADIUS_MESSAGE_AUTHENTICATOR = 80,
	TW_RADIUS_NAS_IPV6_ADDRESS = 95,
	TW_RADIUS_ERROR_CAUSE = 101,       /* RFC 5176 §3.5 */
};

/* RFC 2548 §2.4.2/§2.4.3: Microsoft vendor id and the MPPE key types. */
enum {
	TW_RADIUS_VENDOR_MICROSOFT = 311,
	TW_RADIUS_MS_MPPE_SEND_KEY = 16,
	TW_RADIUS_MS_MPPE_RECV_KEY = 17,
	TW_RADIUS_MPPE_KEY_LEN = 32,
	/* salt (2) + encrypted (1 length octet + 32 key + 15 padding) */
	TW_RADIUS_MPPE_ATTR_LEN = 2 + 48,
};

/* One attribute as a view into the datagram. */
struct tw_radius_attr {
	uint8_t type;
	uint8_t len;            /* value length (attribute length - 2) */
	uint16_t off;           /* offset of the value in the datagram */
};

/* A decoded packet: views into buf, which must stay alive and unchanged. */
struct tw_radius_pkt {
	const uint8_t *buf;
	size_t len;             /* the Length field (trailing octets ignored) */
	uint8_t code, id;
	const uint8_t *authenticator; /* buf + 4 */
	unsigned n_attrs;
	struct tw_radius_attr attrs[TW_RADIUS_MAX_ATTRS];
	int msg_auth;           /* index of Message-Authenticator, -1: none */
	unsigned n_eap;         /* EAP-Message attributes (in order) */
	size_t eap_len;         /* their joined length */
};

/*
 * Strict decode of one datagram (RFC 2865 §3, §5): Length < 20, Length >
 * datagram or > 4096, an attribute of length 0 or 1, an attribute running
 * past Length, type 0, more than TW_RADIUS_MAX_ATTRS attributes, a second
 * Message-Authenticator or one whose length is not 18: TW_ERR_DECODE
 * (the caller drops and counts it). Octets after Length are padding and
 * ignored (§3). EAP-Message attributes must be consecutive (RFC 3579
 * §3.1) else TW_ERR_DECODE. Returns TW_OK or TW_ERR_DECODE / TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_radius_decode(struct tw_radius_pkt *p, const uint8_t *buf,
				   size_t len);

/* The first attribute of type, or NULL. */
const struct tw_radius_attr *tw_radius_find(const struct tw_radius_pkt *p,
					    uint8_t type);

/* A pointer to an attribute's value. */
static inline const uint8_t *tw_radius_value(const struct tw_radius_pkt *p,
					     const struct tw_radius_attr *a)
{
	return p->buf + a->off;
}

/*
 * Joins the EAP-Message attributes into out (RFC 3579 §3.1) and checks the
 * EAP Length field equals the joined length. A single empty EAP-Message
 * (EAP-Start, RFC 3579 §2.1) joins to TW_OK with *out_len 0. Returns TW_OK,
 * TW_ERR_NOTFOUND (no EAP-Message), TW_ERR_OVERFLOW, TW_ERR_DECODE.
 */
TW_MUST_CHECK int tw_radius_eap_join(const struct tw_radius_pkt *p, uint8_t *out,
				     size_t max, size_t *out_len);

/*
 * Server side: checks an Access-Request or Status-Server. Message-
 * Authenticator (RFC 3579 §3.2, RFC 2869 §5.14) = HMAC-MD5(secret, packet
 * with its value zeroed), compared in constant time. A request that carries
 * EAP-Message without Message-Authenticator, or a Status-Server without one
 * (RFC 5997 §3), is TW_ERR_AUTH; so is a wrong one, and any other Code.
 * An Access-Request with neither EAP-Message nor Message-Authenticator is
 * TW_OK (nothing to check). Returns TW_OK, TW_ERR_AUTH, or TW_ERR_INVAL
 * (secret NULL with secret_len > 0).
 */
TW_MUST_CHECK int tw_radius_verify_request(const struct tw_radius_pkt *p,
					   const uint8_t *secret, size_t secret_len);

/*
 * Client side: checks a response to the request whose authenticator was
 * req_auth: Response Authenticator = MD5(Code | ID | Length | RequestAuth |
 * Attributes | Secret) (RFC 2865 §3) and, when present or when
 * require_msg_auth, the Message-Authenticator computed over the packet
 * with RequestAuth in place of the Response Authenticator (RFC 3579 §3.2).
 * A response carrying EAP-Message must carry Message-Authenticator even
 * when !require_msg_auth (RFC 3579 §3.2). Returns TW_OK or TW_ERR_AUTH.
 */
TW_MUST_CHECK int tw_radius_verify_response(const struct tw_radius_pkt *p,
					    const uint8_t req_auth[static 16],
					    const uint8_t *secret, size_t secret_len,
					    bool require_msg_auth);

/* ---- prepared shared secrets -------------------------------------------- */

/*
 * A shared secret made ready for the per-packet work, once (at start-up,
 * on a configuration reload), instead of for every packet:
 *  - hmac: HMAC-MD5 keyed with the secret, i.e. the MD5 chaining values
 *    after the blocks K0 ^ ipad and K0 ^ opad (RFC 2104 §4, "the
 *    intermediate results ... may be precomputed"): every
 *    Message-Authenticator (RFC 3579 §3.2) then costs two MD5 blocks less;
 *  - md5: MD5 having absorbed the secret, the common prefix of every
 *    MS-MPPE key stream block b(i) = MD5(S | ...) (RFC 2548 §2.4.2): a
 *    whole block less per b(i) for secrets of 64 octets or more;
 *  - the secret itself, for the Response Authenticator MD5(... | S)
 *    (RFC 2865 §3), where it comes last and nothing can be precomputed.
 * Caller-owned, no pointers (copying it copies the key); secret material:
 * wipe it with tw_radius_secret_wipe. Read-only once initialised, so one
 * prepared secret may be used by many threads at once.
 */
struct tw_radius_secret {
	uint8_t secret[TW_RADIUS_SECRET_MAX];
	size_t len;
	struct tw_hmac_md5_ctx hmac;  /* keyed, never updated in place */
	struct tw_md5_ctx md5;        /* MD5 after S, never updated in place */
};

/* Prepares secret (0..TW_RADIUS_SECRET_MAX octets; NULL only with 0).
 * Returns TW_OK, TW_ERR_LENGTH (too long) or TW_ERR_INVAL; on error s is
 * left wiped. */
TW_MUST_CHECK int tw_radius_secret_init(struct tw_radius_secret *s,
					const uint8_t *secret, size_t len);

/* Wipes a prepared secret. */
void tw_radius_secret_wipe(struct tw_radius_secret *s);

/* tw_radius_verify_request with a prepared secret (same rules, same
 * results). */
TW_MUST_CHECK int tw_radius_verify_request_ctx(const struct tw_radius_pkt *p,
					       const struct tw_radius_secret *s);

/* tw_radius_verify_response with a prepared secret. */
TW_MUST_CHECK int tw_radius_verify_response_ctx(const struct tw_radius_pkt *p,
						const uint8_t req_auth[static 16],
						const struct tw_radius_secret *s,
						bool require_msg_auth);

/* ---- building ---------------------------------------------------------- */

/* A packet under construction in a caller buffer. Errors are sticky: the
 * first one is kept in err and returned by _finish. After a successful
 * _finish the builder is spent (err = TW_ERR_STATE). Errors: TW_ERR_OVERFLOW
 * (does not fit in max), TW_ERR_LENGTH (value > 253), TW_ERR_INVAL (type 0,
 * Message-Authenticator through _add, NULL value with a length). */
struct tw_radius_builder {
	uint8_t *buf;
	size_t max, len;
	int err;
	size_t msg_auth_off;   /* value offset of Message-Authenticator, 0: none */
	/* MS-MPPE keys put by tw_radius_add_mppe_keys_later, still in the
	 * clear: the offsets of their Salt fields (the finish calls encrypt
	 * them before anything else) */
	size_t mppe_off[2];
	unsigned mppe_n;
};

/*
 * Starts a packet: header with code and id; authenticator is copied into
 * the header (the request authenticator for requests; for responses the
 * REQUEST's authenticator, replaced by _finish_response). When
 * with_msg_auth, a zeroed Message-Authenticator is added as the FIRST
 * attribute. max is capped at TW_RADIUS_MAX_LEN.
 */
void tw_radius_build_init(struct tw_radius_builder *b, uint8_t *buf, size_t max,
			  uint8_t code, uint8_t id,
			  const uint8_t authenticator[static 16], bool with_msg_auth);

/* Adds one attribute (len 0..253; longer is TW_ERR_LENGTH in b->err). */
void tw_radius_add(struct tw_radius_builder *b, uint8_t type, const void *val,
		   size_t len);

/* Adds a 32-bit integer attribute (e.g. Session-Timeout). */
void tw_radius_add_u32(struct tw_radius_builder *b, uint8_t type, uint32_t v);

/* Splits eap into EAP-Message attributes of at most 253 octets (RFC 3579
 * §3.1), consecutive. */
void tw_radius_add_eap(struct tw_radius_builder *b, const uint8_t *eap, size_t len);

/*
 * Finishes a reply for a RADIUS/1.1 connection (RFC 9765: RADIUS over TLS
 * with ALPN "radius/1.1", no MD5 and no shared secret): Length set; the
 * Message-Authenticator (if _init put one) left out; MS-MPPE keys put by
 * tw_radius_add_mppe_keys_later sent as plain strings of their 32 octets
 * (no Salt, no length octet, no padding: the TLS connection protects
 * them); the Authenticator field = the request's 4-octet Token, then 12
 * zero octets (Reserved-2). The Identifier stays what _init was given
 * (the request's). Keys added already encrypted cannot be turned back:
 * use _later. TW_OK with *out_len, or the builder's error (keys wiped).
 */
TW_MUST_CHECK int tw_radius_finish_v11(struct tw_radius_builder *b,
				       const uint8_t token[static 4], size_t *out_len);

/*
 * Adds MS-MPPE-Recv-Key = msk[0..31] and MS-MPPE-Send-Key = msk[32..63]
 * (RFC 3748/RFC 5247 convention used by APs and eapol_test) as
 * Vendor-Specific attributes, each salt-encrypted per RFC 2548 §2.4.2/
 * §2.4.3 with the request authenticator req_auth:
 *   b(1) = MD5(secret | req_auth | salt), c(1) = p(1) ^ b(1),
 *   b(i) = MD5(secret | c(i-1)),          c(i) = p(i) ^ b(i),
 * where p = key length octet (32) | key | zero padding to 48. salt is two
 * octets whose top bit is set; the two keys get different salts
 * (salt_seed supplies the random part; the Recv key uses
 * salt_seed | 0x8000, the Send key (salt_seed + 1) | 0x8000 with the top
 * bit forced, and they differ in the low bit). Secrets on the stack are
 * wiped.
 */
void tw_radius_add_mppe_keys(struct tw_radius_builder *b, const uint8_t *secret,
			     size_t secret_len, const uint8_t req_auth[static 16],
			     const uint8_t msk[static 64], uint16_t salt_seed);

/* tw_radius_add_mppe_keys with a prepared secret (same octets). */
void tw_radius_add_mppe_keys_ctx(struct tw_radius_builder *b,
				 const struct tw_radius_secret *s,
				 const uint8_t req_auth[static 16],
				 const uint8_t msk[static 64], uint16_t salt_seed);

/*
 * The same attributes with their encryption left to the finish call
 * (tw_radius_finish_response(_ctx) or, for a batch of replies,
 * tw_radius_finish_responses_ctx, where every key's three chained MD5s
 * run side by side with the others'): the octets sent are the same as
 * tw_radius_add_mppe_keys_ctx's with the header's (request)
 * authenticator. Until then the keys are in the clear in the buffer: a
 * builder given up must still go through a finish call (any of them,
 * request finishes included), which on a builder in error wipes them.
 * Once per reply.
 */
void tw_radius_add_mppe_keys_later(struct tw_radius_builder *b,
				   const uint8_t msk[static 64], uint16_t salt_seed);

/*
 * Client side: decrypts one MS-MPPE-*-Key value (salt | ciphertext, as
 * found inside the Vendor-Specific attribute after vendor id, type and
 * length) into key (32 octets). Returns TW_OK, TW_ERR_DECODE (bad length,
 * salt without the top bit, length octet not 32 or beyond the data).
 */
TW_MUST_CHECK int tw_radius_mppe_decrypt(const uint8_t *val, size_t len,
					 const uint8_t *secret, size_t secret_len,
					 const uint8_t req_auth[static 16],
					 uint8_t key[static 32]);

/* tw_radius_mppe_decrypt with a prepared secret. */
TW_MUST_CHECK int tw_radius_mppe_decrypt_ctx(const uint8_t *val, size_t len,
					     const struct tw_radius_secret *s,
					     const uint8_t req_auth[static 16],
					     uint8_t key[static 32]);

/*
 * Client side: finds and decrypts both MPPE keys of an Access-Accept into
 * msk (Recv-Key -> msk[0..31], Send-Key -> msk[32..63]). Returns TW_OK,
 * TW_ERR_NOTFOUND, TW_ERR_DECODE.
 */
TW_MUST_CHECK int tw_radius_get_mppe_keys(const struct tw_radius_pkt *p,
					  const uint8_t *secret, size_t secret_len,
					  const uint8_t req_auth[static 16],
					  uint8_t msk[static 64]);

/* tw_radius_get_mppe_keys with a prepared secret. */
TW_MUST_CHECK int tw_radius_get_mppe_keys_ctx(const struct tw_radius_pkt *p,
					      const struct tw_radius_secret *s,
					      const uint8_t req_auth[static 16],
					      uint8_t msk[static 64]);

/*
 * Finishes a response (Access-Accept/-Reject/-Challenge, Status-Server
 * answers): writes Length, computes Message-Authenticator (over the packet
 * with the request authenticator still in the header, RFC 3579 §3.2), then
 * replaces the header authenticator with the Response Authenticator
 * MD5(Code | ID | Length | RequestAuth | Attributes | Secret) (RFC 2865 §3).
 * Returns TW_OK with *out_len, or the builder's sticky error.
 */
TW_MUST_CHECK int tw_radius_finish_response(struct tw_radius_builder *b,
					    const uint8_t *secret, size_t secret_len,
					    size_t *out_len);

/* Finishes a request (Access-Request, Status-Server): Length, then the
 * Message-Authenticator over the packet with the request authenticator
 * given at init. Returns TW_OK with *out_len or the sticky error. */
TW_MUST_CHECK int tw_radius_finish_request(struct tw_radius_builder *b,
					   const uint8_t *secret, size_t secret_len,
					   size_t *out_len);

/* tw_radius_finish_response / tw_radius_finish_request with a prepared
 * secret (the same octets). */
TW_MUST_CHECK int tw_radius_finish_response_ctx(struct tw_radius_builder *b,
						const struct tw_radius_secret *s,
						size_t *out_len);
TW_MUST_CHECK int tw_radius_finish_request_ctx(struct tw_radius_builder *b,
					       const struct tw_radius_secret *s,
					       size_t *out_len);

/*
 * tw_radius_finish_response_ctx for n responses at once (a server's send
 * batch): the same octets and results, with the MD5 work of all of them
 * in parallel (tw_md5_mb): every Message-Authenticator inner hash, then
 * every outer one, then every Response Authenticator. Each job's rc and
 * len are what the single call would return and set (len 0 on error).
 */
struct tw_radius_finish_job {
	struct tw_radius_builder *b;
	const struct tw_radius_secret *s;
	int rc;
	size_t len;
};

void tw_radius_finish_responses_ctx(struct tw_radius_finish_job *jobs, size_t n);

/*
 * tw_radius_verify_request_ctx for n decoded requests at once (a server's
 * receive batch): each job's rc is what the single call returns, with the
 * HMAC-MD5 work of all of them in parallel (inner hashes, then outer).
 */
struct tw_radius_verify_job {
	const struct tw_radius_pkt *p;
	const struct tw_radius_secret *s;
	int rc;
};

void tw_radius_verify_requests_ctx(struct tw_radius_verify_job *jobs, size_t n);

/*
 * tw_radius_verify_response_ctx for n decoded responses at once (a
 * client's receive batch), each with the Request Authenticator of the
 * request it answers; rc as the single call's. A response whose
 * Message-Authenticator sits past its first 256 octets is checked with the
 * single call.
 */
struct tw_radius_verify_resp_job {
	const struct tw_radius_pkt *p;
	const uint8_t *req_auth;       /* 16 octets */
	const struct tw_radius_secret *s;
	bool require_msg_auth;
	int rc;
};

void tw_radius_verify_responses_ctx(struct tw_radius_verify_resp_job *jobs, size_t n);

/* tw_radius_finish_request_ctx for n requests at once (the same octets);
 * each job's rc and len as the single call's. */
void tw_radius_finish_requests_ctx(struct tw_radius_finish_job *jobs, size_t n);

/* ---- accounting (RFC 2866) ------------------------------------------------ */

/* Accounting attributes (RFC 2866 §5, RFC 2869 §5.1-§5.3, §5.19). */
enum tw_radius_acct_attr_type {
	TW_RADIUS_FRAMED_IP_ADDRESS = 8,
	TW_RADIUS_ACCT_STATUS_TYPE = 40,
	TW_RADIUS_ACCT_DELAY_TIME = 41,
	TW_RADIUS_ACCT_INPUT_OCTETS = 42,
	TW_RADIUS_ACCT_OUTPUT_OCTETS = 43,
	TW_RADIUS_ACCT_SESSION_ID = 44,
	TW_RADIUS_ACCT_AUTHENTIC = 45,
	TW_RADIUS_ACCT_SESSION_TIME = 46,
	TW_RADIUS_ACCT_INPUT_PACKETS = 47,
	TW_RADIUS_ACCT_OUTPUT_PACKETS = 48,
	TW_RADIUS_ACCT_TERMINATE_CAUSE = 49,
	TW_RADIUS_ACCT_MULTI_SESSION_ID = 50,
	TW_RADIUS_ACCT_INPUT_GIGAWORDS = 52,
	TW_RADIUS_ACCT_OUTPUT_GIGAWORDS = 53,
	TW_RADIUS_EVENT_TIMESTAMP = 55,
	TW_RADIUS_ACCT_INTERIM_INTERVAL = 85,
};

/* Acct-Status-Type values (RFC 2866 §5.1). */
enum tw_radius_acct_status {
	TW_RADIUS_ACCT_START = 1,
	TW_RADIUS_ACCT_STOP = 2,
	TW_RADIUS_ACCT_INTERIM_UPDATE = 3,
	TW_RADIUS_ACCT_ON = 7,
	TW_RADIUS_ACCT_OFF = 8,
};

/*
 * Server side, RFC 2866 §3: the Request Authenticator of an
 * Accounting-Request is MD5(Code | Identifier | Length | 16 zero octets |
 * Attributes | Secret); compared in constant time. False for another Code.
 */
bool tw_radius_acct_authenticator_ok(const struct tw_radius_pkt *p,
				     const struct tw_radius_secret *s);

/*
 * The Message-Authenticator of an Accounting-Request, when present:
 * HMAC-MD5(secret, packet) with the Authenticator field and the
 * attribute's value taken as 16 zero octets each (the Request
 * Authenticator covers the Message-Authenticator, so it cannot be inside
 * it; RFC 5176 §3.3 defines the same for CoA/Disconnect; FreeRADIUS and
 * hostapd compute it so). True when there is none (RFC 2866 does not
 * require one).
 */
bool tw_radius_acct_msg_auth_ok(const struct tw_radius_pkt *p,
				const struct tw_radius_secret *s);

/* Both checks (each computed, whichever fails). TW_OK, TW_ERR_AUTH, or
 * TW_ERR_INVAL (NULL). */
TW_MUST_CHECK int tw_radius_verify_acct_request_ctx(const struct tw_radius_pkt *p,
						    const struct tw_radius_secret *s);

/*
 * Client side: finishes an Accounting-Request (RFC 2866 §3) started with
 * tw_radius_build_init (the authenticator given there is ignored): the
 * Length, the Message-Authenticator when the builder has one (computed
 * with a zero Authenticator field, as above), then the Request
 * Authenticator into the header. TW_OK with *out_len, or the builder's
 * sticky error.
 *
 * The Accounting-Response needs nothing new: its Response Authenticator
 * (RFC 2866 §3) is MD5(Code | Identifier | Length | RequestAuth |
 * Attributes | Secret), what tw_radius_finish_response(_ctx) computes for
 * a builder started with the request's authenticator.
 */
TW_MUST_CHECK int tw_radius_finish_acct_request_ctx(struct tw_radius_builder *b,
						    const struct tw_radius_secret *s,
						    size_t *out_len);

/* ---- dynamic authorization (RFC 5176, January 2008) ------------------------ */

enum {
	TW_RADIUS_DYNAUTH_PORT = 3799,     /* RFC 5176 §3 (the NAS listens) */
};

/* Error-Cause values (RFC 5176 §3.5). */
enum tw_radius_error_cause {
	TW_RADIUS_EC_RESIDUAL_SESSION_CONTEXT_REMOVED = 201,
	TW_RADIUS_EC_INVALID_EAP_PACKET = 202,
	TW_RADIUS_EC_UNSUPPORTED_ATTRIBUTE = 401,
	TW_RADIUS_EC_MISSING_ATTRIBUTE = 402,
	TW_RADIUS_EC_NAS_IDENTIFICATION_MISMATCH = 403,
	TW_RADIUS_EC_INVALID_REQUEST = 404,
	TW_RADIUS_EC_UNSUPPORTED_SERVICE = 405,
	TW_RADIUS_EC_UNSUPPORTED_EXTENSION = 406,
	TW_RADIUS_EC_INVALID_ATTRIBUTE_VALUE = 407,
	TW_RADIUS_EC_ADMINISTRATIVELY_PROHIBITED = 501,
	TW_RADIUS_EC_REQUEST_NOT_ROUTABLE = 502,
	TW_RADIUS_EC_SESSION_CONTEXT_NOT_FOUND = 503,
	TW_RADIUS_EC_SESSION_CONTEXT_NOT_REMOVABLE = 504,
	TW_RADIUS_EC_OTHER_PROXY_PROCESSING_ERROR = 505,
	TW_RADIUS_EC_RESOURCES_UNAVAILABLE = 506,
	TW_RADIUS_EC_REQUEST_INITIATED = 507,
	TW_RADIUS_EC_MULTIPLE_SESSION_SELECTION_UNSUPPORTED = 508,
};

/* The RFC 5176 §3.5 name of an Error-Cause value ("Session-Context-Not-Found",
 * as FreeRADIUS's dictionary spells them), or NULL for another value. */
const char *tw_radius_error_cause_name(uint32_t v);

/*
 * Finishes a Disconnect-Request or CoA-Request (RFC 5176 §2.3: its
 * Request Authenticator is computed as for an Accounting-Request, RFC
 * 2866 §3: MD5(Code | Identifier | Length | 16 zero octets | Attributes |
 * Secret)) started with tw_radius_build_init (the authenticator given
 * there is ignored): the Length, the Message-Authenticator when the
 * builder has one (§3.3: HMAC-MD5 over the packet with a zero
 * Authenticator field), then the Request Authenticator. TW_OK with
 * *out_len; TW_ERR_INVAL for another Code; else the builder's sticky error.
 */
TW_MUST_CHECK int tw_radius_finish_dynauth_request_ctx(struct tw_radius_builder *b,
						       const struct tw_radius_secret *s,
						       size_t *out_len);

/*
 * NAS side (tests, fuzzing): a Disconnect-Request or CoA-Request's Request
 * Authenticator (RFC 5176 §2.3) and, when present, its
 * Message-Authenticator (§3.3), both computed and compared in constant
 * time. False for another Code.
 */
bool tw_radius_dynauth_request_ok(const struct tw_radius_pkt *p,
				  const struct tw_radius_secret *s);

/* What an authenticated Disconnect/CoA-ACK or -NAK said. */
struct tw_radius_dynauth_reply {
	bool ack;                  /* -ACK (else -NAK) */
	bool has_error_cause;
	uint32_t error_cause;      /* the first Error-Cause (RFC 5176 §3.5) */
};

/*
 * Client side (the server that sent the request): checks that the decoded
 * p answers the request req_code / req_id / req_auth (RFC 5176 §2.3,
 * §3.3): Code is req_code + 1 (ACK) or + 2 (NAK), the Identifier is
 * req_id, Response Authenticator = MD5(Code | ID | Length | RequestAuth |
 * Attributes | Secret) and a Message-Authenticator, when present, over the
 * packet with RequestAuth in the header (both in constant time); every
 * Error-Cause is 4 octets. Returns TW_OK with *out; TW_ERR_INVAL (bad
 * arguments, req_code not 40 or 43); TW_ERR_NOTFOUND (another Identifier
 * or Code: not this request's answer); TW_ERR_AUTH; TW_ERR_DECODE (an
 * Error-Cause of another length). out is zeroed unless TW_OK.
 */
TW_MUST_CHECK int tw_radius_dynauth_reply_check(const struct tw_radius_pkt *p, uint8_t req_code,
						uint8_t req_id,
						const uint8_t req_auth[static 16],
						const struct tw_radius_secret *s,
						struct tw_radius_dynauth_reply *out);

#endif
