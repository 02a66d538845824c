/*
 * twag — the EAP-SIM method (RFC 4186, January 2006): server and peer
 * engines, with the Session-Id of RFC 5247 Appendix A / RFC 8940 §2.
 *
 * Both engines are state machines over caller-owned contexts: they never
 * do I/O, allocate or block (see eap_method.h). A server session asks for
 * GSM triplets with TW_EAP_NEED_VECTOR (count 2 or 3 in its vector
 * request) and continues when tw_eap_sim_server_vector() hands them over,
 * whenever they arrive.
 *
 * Server exchange (RFC 4186 §3, §4.2, §5, §6):
 *   EAP-Response/Identity -> SIM/Start (AT_VERSION_LIST = {1}, plus
 *   AT_ANY_ID_REQ / AT_FULLAUTH_ID_REQ / AT_PERMANENT_ID_REQ as the
 *   identity calls for, §4.2.5/§4.2.6) ... -> NEED_VECTOR ->
 *   SIM/Challenge (AT_RAND, AT_IV/AT_ENCR_DATA{AT_NEXT_PSEUDONYM,
 *   AT_NEXT_REAUTH_ID}, AT_RESULT_IND, AT_MAC over packet | NONCE_MT) ->
 *   response AT_MAC over packet | n*SRES -> EAP-Success (or, with result
 *   indications on both sides, SIM/Notification "Success" first, §6.2);
 *   or, for a known fast re-authentication identity, SIM/Re-authentication
 *   (AT_COUNTER, AT_NONCE_S, AT_NEXT_REAUTH_ID encrypted; AT_MAC over the
 *   packet) -> response AT_MAC over packet | NONCE_S (§5).
 * Errors in a response (malformed, bad or missing AT_MAC, wrong version...)
 * lead to SIM/Notification "General failure" (16384) and then EAP-Failure
 * (§6.3.2); a Client-Error leads to EAP-Failure; a response whose EAP
 * Identifier is not the outstanding request's is silently discarded
 * (RFC 3748 §4.1).
 */
#ifndef TWAG_EAP_SIM_H
#define TWAG_EAP_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/eap_method.h"
#include "twag/err.h"
#include "twag/kdf.h"
#include "twag/simaka.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

enum {
	TW_EAP_SIM_MIN_TRIPLETS = 2, /* RFC 4186 §9.3: two or three RANDs */
	TW_EAP_SIM_MAX_TRIPLETS = 3,
	TW_EAP_SIM_VERSION_LIST_MAX = 32, /* octets of AT_VERSION_LIST kept */
};

/* Server options specific to EAP-SIM (the rest is struct tw_eap_server_cfg). */
struct tw_eap_sim_server_opts {
	unsigned n_triplets;   /* 2 or 3 (0: 3) */
	/* Ask at least AT_FULLAUTH_ID_REQ in the first SIM/Start even for a
	 * usable EAP-Response/Identity (some clients, e.g. radeapclient,
	 * expect it; fast re-authentication then needs another session). */
	bool fullauth_id_req_first;
};

/* Server session state (opaque: use the functions below). */
struct tw_eap_sim_server {
	const struct tw_eap_server_cfg *cfg;
	struct tw_eap_sim_server_opts opts;
	uint8_t state;
	uint8_t id;                 /* Identifier of the outstanding request */
	bool result_ind_sent, result_ind_both, reauth;
	uint8_t reauth_id[TW_EAP_ID_MAX]; /* the re-auth id in use */
	size_t reauth_id_len;
	uint8_t id_result;          /* enum tw_eap_id_result of the identity */
	struct tw_eap_id_state ids;
	uint8_t identity[TW_EAP_ID_MAX]; /* the identity of the MK (§7) */
	size_t identity_len;
	uint8_t nonce_mt[16];
	uint16_t selected_version;
	uint8_t n_rand;
	uint8_t rand_[TW_EAP_SIM_MAX_TRIPLETS][16];
	uint8_t sres[TW_EAP_SIM_MAX_TRIPLETS][4];
	struct tw_eap_sim_keys keys;
	struct tw_simaka_mac_ctx mac;
	uint8_t nonce_s[16];
	uint8_t reauth_mac[16];     /* AT_MAC of the Re-authentication request */
	uint16_t counter;
	/* RFC 4186 A.5's pseudonym is 70 octets: room for any user name */
	uint8_t next_pseudonym[TW_EAP_ID_MAX];
	size_t next_pseudonym_len;
	uint8_t next_reauth_id[TW_EAP_ID_MAX];
	size_t next_reauth_id_len;
	bool given_ids;             /* set by tw_eap_sim_server_set_next_ids */
	struct tw_eap_vec_request vreq;
	struct tw_eap_keys out;
};

/*
 * Prepares a server session under cfg (kept by pointer: it must outlive
 * the session) and opts (copied; NULL for the defaults). Returns TW_OK,
 * TW_ERR_INVAL for NULL or bad options, TW_ERR_UNSUPPORTED if cfg does not
 * enable EAP-SIM.
 */
TW_MUST_CHECK int tw_eap_sim_server_init(struct tw_eap_sim_server *s,
					 const struct tw_eap_server_cfg *cfg,
					 const struct tw_eap_sim_server_opts *opts);

/*
 * Optional first step: builds EAP-Request/Identity (RFC 3748 §5.1) with
 * Identifier id. A session may instead start from the peer's
 * EAP-Response/Identity given to _input() (the RADIUS case).
 */
TW_MUST_CHECK int tw_eap_sim_server_start(struct tw_eap_sim_server *s, uint8_t id,
					  uint8_t *out, size_t max, size_t *out_len);

/*
 * Processes one EAP packet from the peer and writes the answer into
 * out[0..max) (max >= TW_EAP_OUT_MIN). Returns an enum tw_eap_action:
 * TW_EAP_SEND, TW_EAP_NEED_VECTOR (see tw_eap_sim_server_vec_request),
 * TW_EAP_ACCEPT (out = EAP-Success; keys from tw_eap_sim_server_keys),
 * TW_EAP_REJECT (out = EAP-Failure), TW_EAP_DISCARD; or a negative
 * tw_err for a caller error (TW_ERR_INVAL, TW_ERR_OVERFLOW, TW_ERR_STATE
 * when a vector is awaited or the session is over).
 */
TW_MUST_CHECK int tw_eap_sim_server_input(struct tw_eap_sim_server *s,
					  const uint8_t *pkt, size_t len,
					  uint8_t *out, size_t max,
					  size_t *out_len);

/* What the session waits for after TW_EAP_NEED_VECTOR (method 18, the
 * IMSI, count = 2 or 3 triplets). */
const struct tw_eap_vec_request *
tw_eap_sim_server_vec_request(const struct tw_eap_sim_server *s);

/*
 * Resumes a session that returned TW_EAP_NEED_VECTOR with n triplets
 * (n must be the count requested). The RANDs must be distinct (RFC 4186
 * §4.3, §9.3: a peer rejects repeated RANDs; the server never sends
 * them): duplicates end the session with EAP-Failure (TW_EAP_REJECT).
 * Otherwise builds SIM/Challenge and returns TW_EAP_SEND. A store error
 * while issuing identities also yields TW_EAP_REJECT.
 */
TW_MUST_CHECK int tw_eap_sim_server_vector(struct tw_eap_sim_server *s,
					   const struct tw_eap_sim_triplet *t,
					   size_t n, uint8_t *out, size_t max,
					   size_t *out_len);

/*
 * Uses the given pseudonym (a user name, 1..TW_EAP_PSEUDONYM_MAX octets)
 * and fast re-authentication identity (a whole NAI) in the next
 * SIM/Challenge instead of minting them (for a store that mints its own
 * format, and to reproduce RFC 4186 Appendix A.5). len 0 leaves that one
 * out. TW_ERR_LENGTH for an over-long identity.
 */
TW_MUST_CHECK int tw_eap_sim_server_set_next_ids(struct tw_eap_sim_server *s,
						 const uint8_t *pseudonym,
						 size_t pseudonym_len,
						 const uint8_t *reauth_id,
						 size_t reauth_id_len);

/* MSK, EMSK and Session-Id after TW_EAP_ACCEPT, else NULL. */
const struct tw_eap_keys *tw_eap_sim_server_keys(const struct tw_eap_sim_server *s);

/* Wipes the session (keys, Kc-derived state, SRES). */
void tw_eap_sim_server_wipe(struct tw_eap_sim_server *s);

/* ---- Peer -------------------------------------------------------------- */

/* Random octets for NONCE_MT and AT_IV (a tw_eap_identity_ops-style
 * callback: TW_OK or a negative error). */
typedef int (*tw_eap_random_fn)(void *arg, uint8_t *out, size_t len);

/* Peer session state (opaque: use the functions below). */
struct tw_eap_sim_peer {
	const struct tw_eap_peer_cfg *cfg;
	struct tw_eap_peer_ids *mem;  /* identity memory, kept across sessions */
	struct tw_usim *usim;
	tw_eap_random_fn random;
	void *random_arg;
	uint8_t state;
	uint8_t asked;              /* last identity request answered */
	uint8_t start_rounds;
	bool result_ind, notified, reauth_done;
	uint8_t eap_identity[TW_EAP_ID_MAX]; /* sent in EAP-Response/Identity */
	size_t eap_identity_len;
	uint8_t identity[TW_EAP_ID_MAX];     /* the identity of the MK */
	size_t identity_len;
	uint8_t identity_kind;
	uint8_t version_list[TW_EAP_SIM_VERSION_LIST_MAX];
	size_t version_list_len;
	uint8_t nonce_mt[16];
	uint8_t nonce_s[16];
	uint16_t counter;
	struct tw_eap_sim_keys keys;
	struct tw_simaka_mac_ctx mac;
	uint8_t n_rand;
	uint8_t rand_[TW_EAP_SIM_MAX_TRIPLETS][16];
	/* what the Challenge / Re-authentication gave, committed on success */
	uint8_t next_pseudonym[TW_EAP_PSEUDONYM_MAX];
	size_t next_pseudonym_len;
	uint8_t next_reauth_id[TW_EAP_ID_MAX];
	size_t next_reauth_id_len;
	struct tw_eap_keys out;
};

/*
 * Prepares a peer session: cfg (the phone's IMSI, realm, preferences; kept
 * by pointer), mem (its identity memory, updated on success; kept by
 * pointer; zeroed for a fresh phone), usim (the card; kept by pointer),
 * random (NONCE_MT, IV). Returns TW_OK or TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_eap_sim_peer_init(struct tw_eap_sim_peer *p,
				       const struct tw_eap_peer_cfg *cfg,
				       struct tw_eap_peer_ids *mem,
				       struct tw_usim *usim,
				       tw_eap_random_fn random, void *random_arg);

/*
 * Processes one EAP packet from the server (RFC 4186 §9, peer rules of
 * §6.3.1: an error in a request is answered with SIM/Client-Error, code 0
 * "unable to process packet", 1 "unsupported version", 2 "insufficient
 * number of challenges", 3 "RANDs are not fresh") and writes the answer
 * into out (max >= TW_EAP_OUT_MIN). Returns TW_EAP_SEND, TW_EAP_ACCEPT
 * (EAP-Success accepted: keys valid, identity memory updated; out_len 0),
 * TW_EAP_REJECT (EAP-Failure; out_len 0), TW_EAP_DISCARD, or a negative
 * tw_err for a caller error.
 */
TW_MUST_CHECK int tw_eap_sim_peer_input(struct tw_eap_sim_peer *p,
					const uint8_t *pkt, size_t len,
					uint8_t *out, size_t max, size_t *out_len);

/* MSK, EMSK and Session-Id after TW_EAP_ACCEPT, else NULL. */
const struct tw_eap_keys *tw_eap_sim_peer_keys(const struct tw_eap_sim_peer *p);

/* Wipes the session (not the identity memory). */
void tw_eap_sim_peer_wipe(struct tw_eap_sim_peer *p);

#endif
