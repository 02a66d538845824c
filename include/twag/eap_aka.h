/*
 * twag — EAP-AKA (RFC 4187, January 2006) and EAP-AKA' (RFC 9048, October
 * 2021) method engines: the server (what twagd runs) and the peer (what a
 * phone runs; the load generator and tests play phones with it).
 *
 * Both are state machines over caller-owned contexts with no I/O, no
 * allocation and no blocking (see eap_method.h for the action protocol).
 * Each call returns an enum tw_eap_action (> 0) or a negative enum tw_err
 * for a caller mistake; bad input is answered as the RFC says:
 *   - wrong EAP Code, Type or Identifier: TW_EAP_DISCARD (RFC 3748 §4.1,
 *     §2.1: a response not matching the outstanding request is dropped);
 *   - a malformed or unauthenticated EAP-AKA response (bad AT_MAC, bad RES,
 *     unexpected subtype, unknown non-skippable attribute, AT_KDF proposal
 *     the server does not support): EAP-Request/AKA-Notification "General
 *     failure" (16384) and then EAP-Failure (RFC 4187 §6.3.2 and §6.1: one
 *     notification round, then EAP-Failure);
 *   - AKA-Authentication-Reject, AKA-Client-Error, a second
 *     AKA-Synchronization-Failure: EAP-Failure at once (RFC 4187 §6.3.2,
 *     §6.3.3).
 */
#ifndef TWAG_EAP_AKA_H
#define TWAG_EAP_AKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/eap_method.h"
#include "twag/err.h"
#include "twag/simaka.h"

struct tw_eap_aka_vec; /* vecsrc.h */
struct tw_usim;        /* usim.h */

/* ---- server ------------------------------------------------------------ */

struct tw_aka_server_ctx {
	const struct tw_eap_server_cfg *cfg;
	uint8_t method;       /* TW_EAP_TYPE_AKA or TW_EAP_TYPE_AKA_PRIME */
	uint8_t state;        /* internal */
	uint8_t eap_id;       /* Identifier of the outstanding request */
	bool resynced;        /* one resynchronisation per challenge */
	bool sent_result_ind;
	bool reauth;          /* this session is a fast re-authentication */
	bool have_next_pseudonym, have_next_reauth;
	uint16_t counter;     /* re-auth: AT_COUNTER sent */
	struct tw_eap_id_state ids;
	uint8_t identity[TW_EAP_ID_MAX]; /* RFC 4187 §7 "Identity" */
	size_t identity_len;
	struct tw_simaka_checkcode_ctx checkcode;
	struct tw_eap_vec_request req;
	uint8_t rand_[16], autn[16], xres[16];
	size_t xres_len;
	uint8_t nonce_s[16];
	struct tw_simaka_mac_ctx mac;
	uint8_t next_pseudonym[TW_EAP_PSEUDONYM_MAX];
	size_t next_pseudonym_len;
	uint8_t next_reauth[TW_EAP_ID_MAX];
	size_t next_reauth_len;
	struct tw_eap_reauth_state next_state; /* stored with next_reauth */
	struct tw_eap_keys keys;
};

/*
 * Starts a server session for method (TW_EAP_TYPE_AKA or
 * TW_EAP_TYPE_AKA_PRIME; it must be enabled in cfg). first_id is the EAP
 * Identifier of the first request. Returns TW_OK or TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_aka_server_init(struct tw_aka_server_ctx *s,
				     const struct tw_eap_server_cfg *cfg,
				     uint8_t method, uint8_t first_id);

/* Builds the EAP-Request/Identity (RFC 3748 §5.1) that opens a session
 * when no EAP-Response/Identity is known yet. Returns TW_EAP_SEND. */
TW_MUST_CHECK int tw_aka_server_start(struct tw_aka_server_ctx *s, uint8_t *out,
				      size_t max, size_t *out_len);

/*
 * Feeds one EAP-Response (the whole packet): EAP-Response/Identity (after
 * _start, or as the first input when the caller already has it, the usual
 * RADIUS case), AKA-Identity, AKA-Challenge, AKA-Synchronization-Failure,
 * AKA-Authentication-Reject, AKA-Client-Error, AKA-Reauthentication or
 * AKA-Notification. Returns the action; out holds the packet to send for
 * TW_EAP_SEND, TW_EAP_ACCEPT and TW_EAP_REJECT. max must be at least
 * TW_EAP_OUT_MIN.
 */
TW_MUST_CHECK int tw_aka_server_input(struct tw_aka_server_ctx *s,
				      const uint8_t *pkt, size_t len,
				      uint8_t *out, size_t max, size_t *out_len);

/* The vectors the session waits for (valid after TW_EAP_NEED_VECTOR). For
 * EAP-AKA' fetch them with the AMF separation bit set (tw_vecsrc_aka_prime,
 * TS 33.402 §6.2); with resync, call tw_vecsrc_resync first. */
const struct tw_eap_vec_request *
tw_aka_server_vec_request(const struct tw_aka_server_ctx *s);

/*
 * Resumes a session waiting in TW_EAP_NEED_VECTOR with the vector, and
 * builds the AKA-Challenge (RFC 4187 §9.3, RFC 9048 §3.1/§3.2/§4).
 * v == NULL means the vector source failed (unknown subscriber, resync
 * with a bad MAC-S, HSS error): EAP-Failure (RFC 4187 §6.3.2).
 * Returns TW_EAP_SEND, TW_EAP_REJECT, or a negative error.
 */
TW_MUST_CHECK int tw_aka_server_vector(struct tw_aka_server_ctx *s,
				       const struct tw_eap_aka_vec *v,
				       uint8_t *out, size_t max,
				       size_t *out_len);

/* One session of tw_aka_server_vector_many(). */
struct tw_aka_server_vec_job {
	struct tw_aka_server_ctx *s;
	const struct tw_eap_aka_vec *v;
	uint8_t *out;
	size_t max;
	size_t out_len; /* out */
	int rc;         /* out: what tw_aka_server_vector() returns */
	bool batched;   /* out: keys and AT_MAC computed in lanes with others */
};

/*
 * tw_aka_server_vector() for n sessions at once, with the same packets,
 * keys and states as n single calls. EAP-AKA' sessions of one network
 * name go sixteen at a time through lockstep lanes: CK'/IK', PRF' and the
 * challenges' AT_MACs run every HMAC of the chain for all of them at once
 * (AVX-512, from enough sessions for the lanes to pay: see
 * tw_sha256_x16_worth in src/crypto/sha_internal.h; else one after
 * another). A session named twice is answered by the single call for the
 * second (TW_ERR_STATE).
 */
enum { TW_SHA256_LANES = 16 };
void tw_aka_server_vector_many(struct tw_aka_server_vec_job *jobs, size_t n);

/* The keys after TW_EAP_ACCEPT. Returns TW_ERR_STATE before. */
TW_MUST_CHECK int tw_aka_server_keys(const struct tw_aka_server_ctx *s,
				     struct tw_eap_keys *k);

/* Wipes every secret of the session. */
void tw_aka_server_wipe(struct tw_aka_server_ctx *s);

/* ---- peer -------------------------------------------------------------- */

struct tw_aka_peer_ctx {
	const struct tw_eap_peer_cfg *cfg;
	struct tw_usim *usim;
	struct tw_eap_peer_ids *ids;
	uint8_t method;        /* the method of the current exchange, or 0 */
	uint8_t state;         /* internal */
	uint8_t id_rounds;     /* AKA-Identity requests answered */
	bool result_ind;       /* both sides asked for result indications */
	bool reauth;
	bool sent_auts;
	uint16_t counter;
	uint8_t identity[TW_EAP_ID_MAX];
	size_t identity_len;
	uint8_t identity_kind; /* enum tw_nai_kind of identity */
	uint8_t last_rand[16];
	struct tw_simaka_checkcode_ctx checkcode;
	struct tw_simaka_mac_ctx mac;
	uint8_t nonce_s[16];
	struct tw_eap_reauth_state next_state;
	uint8_t next_pseudonym[TW_EAP_PSEUDONYM_MAX];
	size_t next_pseudonym_len;
	uint8_t next_reauth[TW_EAP_ID_MAX];
	size_t next_reauth_len;
	struct tw_eap_keys keys;
	bool keys_ok;          /* the exchange succeeded on our side */
	bool have_keys;        /* K_aut of this exchange is in mac */
};

/*
 * Starts a peer session with its USIM and identity memory (both outlive
 * the session; ids is updated after EAP-Success: new pseudonym, new
 * re-auth id and its keys, RFC 4187 §4.1.1.7 and §5). Returns TW_OK or
 * TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_aka_peer_init(struct tw_aka_peer_ctx *p,
				   const struct tw_eap_peer_cfg *cfg,
				   struct tw_usim *usim,
				   struct tw_eap_peer_ids *ids);

/*
 * Feeds one EAP packet from the server: EAP-Request/Identity, an EAP-AKA or
 * EAP-AKA' request, EAP-Success or EAP-Failure. Returns TW_EAP_SEND (out
 * holds the response: also AKA-Authentication-Reject, AKA-Client-Error,
 * AKA-Synchronization-Failure or a Nak when the peer refuses, RFC 4187
 * §6.3.1), TW_EAP_ACCEPT (EAP-Success after a successful exchange: keys
 * valid, identity memory updated, out_len 0), TW_EAP_REJECT (EAP-Failure,
 * out_len 0), or TW_EAP_DISCARD (EAP-Success before the exchange
 * succeeded, RFC 3748 §4.2, or a packet of another method).
 */
TW_MUST_CHECK int tw_aka_peer_input(struct tw_aka_peer_ctx *p,
				    const uint8_t *pkt, size_t len,
				    uint8_t *out, size_t max, size_t *out_len);

/* Keys after TW_EAP_ACCEPT. TW_ERR_STATE before. */
TW_MUST_CHECK int tw_aka_peer_keys(const struct tw_aka_peer_ctx *p,
				   struct tw_eap_keys *k);

void tw_aka_peer_wipe(struct tw_aka_peer_ctx *p);

#endif
