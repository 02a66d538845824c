/*
 * twag — the EAP-SIM / EAP-AKA / EAP-AKA' message and attribute codec
 * (RFC 4186, January 2006, §8-§11; RFC 4187, January 2006, §8-§11;
 * RFC 9048, October 2021, §3 (obsoletes RFC 5448)).
 *
 * Message after the EAP header (RFC 4187 §8.1):
 *   Type (18/23/50) | Subtype | Reserved (2) | attributes...
 * Attribute: Type (1) | Length (1, in units of 4 octets, incl. these two)
 *            | value (4*Length - 2 octets)
 *
 * Decoding is strict and single pass, in time linear in the input, and
 * allocates nothing: tw_simaka_decode() fills a struct tw_simaka_msg with
 * views into the caller's packet. Every attribute is checked against the
 * length its RFC defines, attributes a method does not define are
 * "unrecognized" (types 0..127 are an error, 128..255 are skipped, RFC 4187
 * §8.1), and an attribute may appear at most once, except AT_KDF (RFC 9048
 * §3.2: an ordered list). Attributes that the RFCs carry only encrypted
 * (AT_PADDING, AT_NEXT_PSEUDONYM, AT_NEXT_REAUTH_ID, AT_COUNTER,
 * AT_COUNTER_TOO_SMALL, AT_NONCE_S) are rejected outside AT_ENCR_DATA, and
 * only those are accepted inside it.
 *
 * Crypto on messages: AT_MAC (RFC 4186 §10.14, RFC 4187 §10.15, RFC 9048
 * §3.4.1), AT_ENCR_DATA / AT_IV / AT_PADDING (RFC 4187 §10.12-§10.14,
 * AES-128-CBC with K_encr), AT_CHECKCODE (RFC 4187 §10.13, RFC 9048 §3.4.2).
 *
 * Encoding: a builder appends attributes into a caller buffer with a sticky
 * error, reserves AT_MAC and fills it last, and encrypts AT_ENCR_DATA.
 */
#ifndef TWAG_SIMAKA_H
#define TWAG_SIMAKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/hmac.h"
#include "twag/sha.h"

/* Subtypes: RFC 4187 §11 (AKA, AKA') and RFC 4186 §11 (SIM). */
enum tw_simaka_subtype {
	TW_SIMAKA_CHALLENGE = 1,       /* AKA-Challenge */
	TW_SIMAKA_AUTH_REJECT = 2,     /* AKA-Authentication-Reject */
	TW_SIMAKA_SYNC_FAILURE = 4,    /* AKA-Synchronization-Failure */
	TW_SIMAKA_IDENTITY = 5,        /* AKA-Identity */
	TW_SIMAKA_SIM_START = 10,      /* SIM/Start */
	TW_SIMAKA_SIM_CHALLENGE = 11,  /* SIM/Challenge */
	TW_SIMAKA_NOTIFICATION = 12,   /* both */
	TW_SIMAKA_REAUTH = 13,         /* Re-authentication, both */
	TW_SIMAKA_CLIENT_ERROR = 14,   /* Client-Error, both */
};

/* Attribute types: RFC 4186 §11, RFC 4187 §11, RFC 9048 §3.1/§3.2/§4. */
enum tw_simaka_at {
	TW_AT_RAND = 1,
	TW_AT_AUTN = 2,
	TW_AT_RES = 3,
	TW_AT_AUTS = 4,
	TW_AT_PADDING = 6,
	TW_AT_NONCE_MT = 7,
	TW_AT_PERMANENT_ID_REQ = 10,
	TW_AT_MAC = 11,
	TW_AT_NOTIFICATION = 12,
	TW_AT_ANY_ID_REQ = 13,
	TW_AT_IDENTITY = 14,
	TW_AT_VERSION_LIST = 15,
	TW_AT_SELECTED_VERSION = 16,
	TW_AT_FULLAUTH_ID_REQ = 17,
	TW_AT_COUNTER = 19,
	TW_AT_COUNTER_TOO_SMALL = 20,
	TW_AT_NONCE_S = 21,
	TW_AT_CLIENT_ERROR_CODE = 22,
	TW_AT_KDF_INPUT = 23,
	TW_AT_KDF = 24,
	TW_AT_IV = 129,
	TW_AT_ENCR_DATA = 130,
	TW_AT_NEXT_PSEUDONYM = 132,
	TW_AT_NEXT_REAUTH_ID = 133,
	TW_AT_CHECKCODE = 134,
	TW_AT_RESULT_IND = 135,
	TW_AT_BIDDING = 136,
};

enum {
	TW_SIMAKA_HDR_LEN = 8,     /* EAP header 4 + Type + Subtype + Reserved 2 */
	TW_SIMAKA_RAND_LEN = 16,
	TW_SIMAKA_AUTN_LEN = 16,
	TW_SIMAKA_AUTS_LEN = 14,
	TW_SIMAKA_NONCE_LEN = 16,  /* NONCE_MT, NONCE_S */
	TW_SIMAKA_IV_LEN = 16,
	TW_SIMAKA_MAC_LEN = 16,    /* AT_MAC carries the first 128 bits */
	TW_SIMAKA_RES_MIN_BITS = 32, /* RFC 4187 §10.8 */
	TW_SIMAKA_RES_MAX_BITS = 128,
	TW_SIMAKA_SIM_K_AUT_LEN = 16,  /* RFC 4186 §7, RFC 4187 §7 */
	TW_SIMAKA_AKA_PRIME_K_AUT_LEN = 32, /* RFC 9048 §3.3 */
	TW_SIMAKA_K_ENCR_LEN = 16,
	TW_SIMAKA_CHECKCODE_SHA1_LEN = 20,   /* RFC 4187 §10.13 */
	TW_SIMAKA_CHECKCODE_SHA256_LEN = 32, /* RFC 9048 §3.4.2 */
	TW_SIMAKA_KDF_MAX = 16,    /* AT_KDF entries kept; more is an error */
	TW_SIMAKA_ATTR_MAX = 1020, /* 4 * 255: the longest attribute */
	TW_SIMAKA_KDF_PRIME = 1,   /* RFC 9048 §3.2: EAP-AKA' with CK'/IK' */
	TW_SIMAKA_VERSION_1 = 1,   /* RFC 4186 §10.2 */
	TW_SIMAKA_BIDDING_D = 0x8000, /* RFC 9048 §4: AKA' supported (D bit) */
	/* AT_NOTIFICATION (RFC 4187 §10.19): S bit 0x8000 = success, P bit
	 * 0x4000 = pre-challenge (set) or after the challenge (clear). */
	TW_SIMAKA_NOTIF_S = 0x8000,
	TW_SIMAKA_NOTIF_P = 0x4000,
	TW_SIMAKA_NOTIF_GENERAL_FAILURE_AFTER_AUTH = 0,
	TW_SIMAKA_NOTIF_USER_DENIED = 1026,
	TW_SIMAKA_NOTIF_NOT_SUBSCRIBED = 1031,
	TW_SIMAKA_NOTIF_GENERAL_FAILURE = 16384,
	TW_SIMAKA_NOTIF_SUCCESS = 32768,
	/* AT_CLIENT_ERROR_CODE (RFC 4186 §10.19, RFC 4187 §10.20) */
	TW_SIMAKA_ERR_UNABLE_TO_PROCESS = 0,
	TW_SIMAKA_ERR_UNSUPPORTED_VERSION = 1, /* SIM */
	TW_SIMAKA_ERR_INSUFFICIENT_CHALLENGES = 2, /* SIM */
	TW_SIMAKA_ERR_RANDS_NOT_FRESH = 3, /* SIM */
};

/*
 * One decoded attribute: val points at its value, after the fixed fields
 * (Reserved, Actual Length, RES Length...) and without padding; len is the
 * value's length; off is the offset of the attribute's Type octet from the
 * start of the decoded buffer (the EAP packet, or the decrypted
 * AT_ENCR_DATA plaintext). val == NULL means "absent".
 *
 *   AT_RAND: n * 16 (SIM: 2 or 3 RANDs; AKA/AKA': exactly 1)
 *   AT_AUTN 16, AT_AUTS 14, AT_NONCE_MT 16, AT_NONCE_S 16, AT_IV 16, AT_MAC 16
 *   AT_RES: ceil(res_bits / 8) octets (res_bits in the message)
 *   AT_IDENTITY, AT_NEXT_PSEUDONYM, AT_NEXT_REAUTH_ID, AT_KDF_INPUT,
 *   AT_VERSION_LIST: the "actual length" octets
 *   AT_ENCR_DATA: the ciphertext (a non-zero multiple of 16)
 *   AT_CHECKCODE: 0, 20 (AKA) or 32 (AKA') octets
 *   AT_PADDING: the padding octets after Type/Length (2, 6 or 10, zero)
 *   AT_NOTIFICATION, AT_SELECTED_VERSION, AT_COUNTER, AT_CLIENT_ERROR_CODE,
 *   AT_KDF (first one), AT_BIDDING: the 2-octet field (also decoded below)
 *   flags (AT_*_ID_REQ, AT_COUNTER_TOO_SMALL, AT_RESULT_IND): 0, val at the
 *   Reserved field
 */
struct tw_simaka_attr {
	const uint8_t *val;
	uint16_t len;
	uint16_t off;
};

static inline bool tw_simaka_has(const struct tw_simaka_attr *a)
{
	return a->val != NULL;
}

struct tw_simaka_msg {
	/* header: from the EAP packet (zero for a decrypted inner message) */
	uint8_t code, id;
	uint8_t method;   /* enum tw_eap_type: SIM, AKA or AKA_PRIME */
	uint8_t subtype;  /* enum tw_simaka_subtype (not checked here) */
	uint16_t reserved;
	const uint8_t *pkt; /* the decoded buffer (EAP Length octets) */
	size_t pkt_len;

	struct tw_simaka_attr rand_, autn, res, auts, padding, nonce_mt,
		permanent_id_req, mac, notification, any_id_req, identity,
		version_list, selected_version, fullauth_id_req, counter,
		counter_too_small, nonce_s, client_error_code, kdf_input, kdf,
		iv, encr_data, next_pseudonym, next_reauth_id, checkcode,
		result_ind, bidding;

	/* decoded numeric fields, valid when the attribute is present */
	uint16_t res_bits;
	uint16_t notification_code;
	uint16_t selected_ver;
	uint16_t counter_value;
	uint16_t client_error;
	uint16_t bidding_value;
	uint8_t n_rand;               /* AT_RAND: number of RANDs */
	uint8_t n_kdf;                /* AT_KDF: entries, in order */
	uint16_t kdf_list[TW_SIMAKA_KDF_MAX];
	uint32_t n_skipped;           /* skippable unknown attributes ignored */
};

/*
 * Decodes an EAP-Request or EAP-Response of type SIM, AKA or AKA' (the
 * EAP Type picks the method). pkt_len may exceed the EAP Length (link
 * padding is ignored, RFC 3748 §4.1). Also requires AT_IV and AT_ENCR_DATA
 * together (RFC 4187 §10.12). Views point into pkt.
 * Returns TW_OK, TW_ERR_DECODE for any malformed or disallowed content,
 * TW_ERR_UNSUPPORTED for another EAP type or code, TW_ERR_INVAL for NULL.
 */
TW_MUST_CHECK int tw_simaka_decode(struct tw_simaka_msg *m, const uint8_t *pkt,
				   size_t pkt_len);

/*
 * Decrypts AT_ENCR_DATA of a decoded message (AES-128-CBC, K_encr, IV from
 * AT_IV; RFC 4187 §10.12) into plain[0..plain_max) and decodes the nested
 * attributes into *inner (offsets relative to plain; method copied from
 * outer). Only AT_PADDING (4..12 octets, all zero), AT_NEXT_PSEUDONYM,
 * AT_NEXT_REAUTH_ID, AT_COUNTER, AT_COUNTER_TOO_SMALL, AT_NONCE_S and
 * skippable unknown attributes are accepted inside. The plaintext is left in
 * plain for the caller (it holds identities); on failure it is wiped.
 * Call it only once outer's AT_MAC verified: the plaintext is then the
 * receiver's to act on and is declassified (tw_ct_declassify) before it
 * is parsed.
 * Returns TW_OK, TW_ERR_STATE if outer has no AT_ENCR_DATA, TW_ERR_OVERFLOW
 * if plain_max is too small, TW_ERR_DECODE for bad nested content.
 */
TW_MUST_CHECK int tw_simaka_decrypt(struct tw_simaka_msg *inner, uint8_t *plain,
				    size_t plain_max,
				    const struct tw_simaka_msg *outer,
				    const uint8_t k_encr[static 16]);

/*
 * Decodes already decrypted AT_ENCR_DATA plaintext (len a multiple of 16)
 * with the nested-attribute rules of tw_simaka_decode() above. For
 * callers that decrypt themselves, and for fuzzing.
 */
TW_MUST_CHECK int tw_simaka_decode_inner(struct tw_simaka_msg *inner,
					 uint8_t method, const uint8_t *plain,
					 size_t len);

/* ---- AT_MAC ---------------------------------------------------------- */

/*
 * A keyed AT_MAC context: HMAC-SHA1-128 with a 16-octet K_aut for EAP-SIM
 * and EAP-AKA (RFC 4186 §10.14, RFC 4187 §10.15), HMAC-SHA-256-128 with a
 * 32-octet K_aut for EAP-AKA' (RFC 9048 §3.4.1). The HMAC key state is
 * computed once by _init() and reused for every MAC under that K_aut.
 */
struct tw_simaka_mac_ctx {
	uint8_t method;
	union {
		struct tw_hmac_sha1_ctx sha1;
		struct tw_hmac_sha256_ctx sha256;
	} h;
};

/* Keys a MAC context. Returns TW_ERR_LENGTH if k_aut_len is not 16
 * (SIM/AKA) or 32 (AKA'), TW_ERR_INVAL for another method. */
TW_MUST_CHECK int tw_simaka_mac_init(struct tw_simaka_mac_ctx *ctx,
				     uint8_t method, const uint8_t *k_aut,
				     size_t k_aut_len);
void tw_simaka_mac_wipe(struct tw_simaka_mac_ctx *ctx);
/* An EAP-AKA' MAC context from a keyed HMAC-SHA-256 state of K_aut (as
 * tw_eap_aka_prime_derive_many() returns it): the same context as
 * tw_simaka_mac_init(ctx, TW_EAP_TYPE_AKA_PRIME, k_aut, 32). */
void tw_simaka_mac_init_keyed(struct tw_simaka_mac_ctx *ctx,
			      const struct tw_hmac_sha256_ctx *k_aut);

/*
 * MAC = first 16 octets of HMAC(K_aut, packet with the 16 MAC octets at
 * mac_val_off taken as zero | extra). The packet is not modified. extra is
 * the message-specific data of RFC 4186 §9.3/§9.4/§9.7/§9.8 (NONCE_MT,
 * n*SRES, NONCE_S) or empty for EAP-AKA/AKA' full authentication (re-auth
 * responses use NONCE_S, RFC 4187 §9.8).
 * Returns TW_ERR_RANGE if mac_val_off + 16 > pkt_len.
 */
TW_MUST_CHECK int tw_simaka_mac_compute(struct tw_simaka_mac_ctx *ctx,
					uint8_t mac[static 16],
					const uint8_t *pkt, size_t pkt_len,
					size_t mac_val_off, const uint8_t *extra,
					size_t extra_len);

/*
 * Fills the AT_MAC of n finished messages, each with its MAC value zero at
 * mac_val_off[i] and no extra data (EAP-AKA/AKA' challenges): as
 * tw_simaka_mac_compute(ctx[i], pkt[i] + mac_val_off[i], pkt[i], len[i],
 * mac_val_off[i], NULL, 0) for each, with the EAP-AKA' ones sixteen at a
 * time in lockstep lanes (sha_internal.h). rc[i] gets each result.
 */
void tw_simaka_mac_fill_many(struct tw_simaka_mac_ctx *const *ctx, uint8_t *const *pkt,
			     const size_t *len, const size_t *mac_val_off, int *rc,
			     size_t n);

/*
 * Verifies the AT_MAC of a decoded message in constant time (tw_ct_eq)
 * over m->pkt[0..m->pkt_len) | extra. Returns TW_OK, or TW_ERR_AUTH when
 * AT_MAC is absent or does not match, TW_ERR_INVAL when the context's method
 * is not the message's.
 */
TW_MUST_CHECK int tw_simaka_mac_verify(struct tw_simaka_mac_ctx *ctx,
				       const struct tw_simaka_msg *m,
				       const uint8_t *extra, size_t extra_len);

/* ---- AT_CHECKCODE ---------------------------------------------------- */

/*
 * RFC 4187 §10.13 / RFC 9048 §3.4.2: a hash (SHA-1 for EAP-AKA, SHA-256 for
 * EAP-AKA') over every EAP-Request/AKA-Identity and EAP-Response/AKA-
 * Identity packet of the exchange, in order, each whole (EAP header to the
 * end of its last attribute). Feed each packet with _add().
 */
struct tw_simaka_checkcode_ctx {
	uint8_t method;
	uint32_t n_msgs;
	union {
		struct tw_sha1_ctx sha1;
		struct tw_sha256_ctx sha256;
	} h;
};

/* TW_ERR_INVAL unless method is AKA or AKA'. */
TW_MUST_CHECK int tw_simaka_checkcode_init(struct tw_simaka_checkcode_ctx *ctx,
					   uint8_t method);
void tw_simaka_checkcode_add(struct tw_simaka_checkcode_ctx *ctx,
			     const uint8_t *pkt, size_t len);
/* Writes the checkcode (20 or 32 octets; 0 when no identity message was
 * added: AT_CHECKCODE is then sent empty) without disturbing ctx. */
size_t tw_simaka_checkcode_value(const struct tw_simaka_checkcode_ctx *ctx,
				 uint8_t out[static 32]);
/*
 * Checks a received AT_CHECKCODE against ctx (constant time). With no
 * identity messages, an absent or empty AT_CHECKCODE is accepted; otherwise
 * it must be present and equal. (RFC 4187 lets an EAP-AKA peer omit the
 * attribute; whether an absent one is acceptable after an identity round is
 * the method's policy, decided before calling this.) Returns TW_OK or
 * TW_ERR_AUTH.
 */
TW_MUST_CHECK int tw_simaka_checkcode_verify(const struct tw_simaka_checkcode_ctx *ctx,
					     const struct tw_simaka_msg *m);

/* ---- Builder ----------------------------------------------------------- */

/*
 * Appends attributes into buf with a sticky error: put calls after an error
 * do nothing, and _finish() reports the first error (TW_ERR_OVERFLOW when
 * buf is too small, TW_ERR_LENGTH/TW_ERR_INVAL for a value the attribute
 * cannot carry, TW_ERR_STATE for a misuse such as two AT_MACs).
 */
struct tw_simaka_builder {
	uint8_t *buf;
	size_t max;
	size_t len;
	size_t mac_val_off;  /* 0: no AT_MAC reserved */
	size_t encr_off;     /* 0: not inside AT_ENCR_DATA; else its Type octet */
	size_t iv_val_off;   /* AT_IV value in buf while AT_ENCR_DATA is open */
	int err;
	uint8_t method;
};

/* Starts a message: EAP header (Length filled in by _finish), Type =
 * method, Subtype, Reserved = 0. */
void tw_simaka_build_init(struct tw_simaka_builder *b, uint8_t *buf, size_t max,
			  uint8_t code, uint8_t id, uint8_t method,
			  uint8_t subtype);

/* An attribute whose value is a 2-octet field then len octets (len a
 * multiple of 4): AT_RAND, AT_AUTN, AT_NONCE_MT, AT_NONCE_S, AT_IV(use
 * _begin_encr), AT_CHECKCODE (field Reserved = 0); AT_NOTIFICATION,
 * AT_SELECTED_VERSION, AT_COUNTER, AT_CLIENT_ERROR_CODE, AT_KDF,
 * AT_BIDDING (field = the value, len 0); the flags AT_PERMANENT_ID_REQ,
 * AT_ANY_ID_REQ, AT_FULLAUTH_ID_REQ, AT_COUNTER_TOO_SMALL, AT_RESULT_IND
 * (field 0, len 0). */
void tw_simaka_put_fixed(struct tw_simaka_builder *b, uint8_t type,
			 uint16_t field, const uint8_t *val, size_t len);
/* An attribute with an "actual length" field: AT_IDENTITY, AT_VERSION_LIST,
 * AT_NEXT_PSEUDONYM, AT_NEXT_REAUTH_ID, AT_KDF_INPUT; zero padded. */
void tw_simaka_put_var(struct tw_simaka_builder *b, uint8_t type,
		       const uint8_t *val, size_t len);
/* AT_RES with its RES Length in bits (RFC 4187 §10.8): 32..128 bits,
 * ceil(res_bits/8) octets of res. */
void tw_simaka_put_res(struct tw_simaka_builder *b, const uint8_t *res,
		       uint16_t res_bits);
/* AT_AUTS (RFC 4187 §10.9): 14 octets right after Type/Length. */
void tw_simaka_put_auts(struct tw_simaka_builder *b,
			const uint8_t auts[static 14]);
/* Reserves AT_MAC (zero MAC) to be filled by tw_simaka_finish_mac(). */
void tw_simaka_put_mac(struct tw_simaka_builder *b);
/* Writes AT_IV (iv) and opens AT_ENCR_DATA: the attributes put until
 * _end_encr() are the plaintext. */
void tw_simaka_begin_encr(struct tw_simaka_builder *b,
			  const uint8_t iv[static 16]);
/* Closes AT_ENCR_DATA: adds AT_PADDING (4, 8 or 12 octets, zero) so the
 * plaintext is a multiple of 16 (RFC 4187 §10.12), then encrypts it in
 * place with AES-128-CBC under k_encr. */
void tw_simaka_end_encr(struct tw_simaka_builder *b,
			const uint8_t k_encr[static 16]);
/* Where an AT_ENCR_DATA closed by _end_encr_later() waits for its
 * encryption: the AT_IV value and the padded plaintext in the buffer. */
struct tw_simaka_encr_later {
	size_t iv_off, off, len;
};
/* As _end_encr() without the encryption (for a batch: the messages'
 * AT_ENCR_DATA are then encrypted together by tw_simaka_encrypt_many(),
 * before their AT_MAC is computed). */
void tw_simaka_end_encr_later(struct tw_simaka_builder *b,
			      struct tw_simaka_encr_later *e);
/* Encrypts the AT_ENCR_DATA of n messages left by _end_encr_later(),
 * message i in buf[i] under k_encr[i]: AES-128-CBC, the messages side by
 * side (tw_aes_cbc_encrypt_many). */
void tw_simaka_encrypt_many(uint8_t *const *buf, const struct tw_simaka_encr_later *e,
			    const uint8_t *const *k_encr, size_t n);
/* Sets the EAP Length; *len gets the message length. Returns the sticky
 * error (TW_ERR_STATE with AT_MAC reserved or AT_ENCR_DATA open). */
TW_MUST_CHECK int tw_simaka_finish(struct tw_simaka_builder *b, size_t *len);
/* As _finish(), then fills AT_MAC = MAC(K_aut, message | extra).
 * TW_ERR_STATE if no AT_MAC was reserved. */
TW_MUST_CHECK int tw_simaka_finish_mac(struct tw_simaka_builder *b,
				       struct tw_simaka_mac_ctx *mac,
				       const uint8_t *extra, size_t extra_len,
				       size_t *len);
/* As _finish() with an AT_MAC reserved and left zero, its value's offset
 * in *mac_val_off: for tw_simaka_mac_fill_many() (a batch of messages
 * MACed together). TW_ERR_STATE if no AT_MAC was reserved. */
TW_MUST_CHECK int tw_simaka_finish_mac_later(struct tw_simaka_builder *b, size_t *len,
					     size_t *mac_val_off);

#endif
