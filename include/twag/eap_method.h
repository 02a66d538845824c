/*
 * twag — what the EAP-SIM, EAP-AKA and EAP-AKA' method engines share
 * (RFC 4186, January 2006; RFC 4187, January 2006; RFC 9048, October 2021;
 * Session-Id per RFC 5247, August 2008, Appendix A as updated by
 * RFC 8940, October 2020; RFC 3748 framing).
 *
 * The engines are state machines over caller-owned contexts: they never do
 * I/O, never allocate and never block. Every engine call takes the input
 * packet (or the vector the engine asked for) and a caller buffer for the
 * packet to send, and returns an action (enum tw_eap_action, > 0) or a
 * negative enum tw_err for a caller mistake (NULL, a buffer too small, a
 * call the state does not allow). Bad *input* is never an error: the
 * engine takes the RFC's action (TW_EAP_DISCARD, or an EAP-Failure /
 * Notification packet in out) and says which.
 *
 * Vectors: a server session that needs authentication vectors returns
 * TW_EAP_NEED_VECTOR and publishes a struct tw_eap_vec_request; the caller
 * computes them (vecsrc.h, local mode) or asks an HSS and resumes the
 * session whenever the answer arrives by calling the engine's _vector()
 * function. Nothing waits in between.
 *
 * Pseudonyms and fast re-authentication identities live in the caller's
 * subscriber store, reached through struct tw_eap_identity_ops. The engines
 * mint the identities themselves (leading digit, random part from
 * ops->random, realm from the config) and only ask the store to remember
 * and to look them up. They are sent to the peer only inside AT_ENCR_DATA
 * (RFC 4187 §10.11/§10.12) and a fresh pair is issued on every full
 * authentication (RFC 4187 §4.1.1.7: pseudonyms are one-time).
 */
#ifndef TWAG_EAP_METHOD_H
#define TWAG_EAP_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

struct tw_simaka_msg;

/* What the caller does with the engine's output. */
enum tw_eap_action {
	TW_EAP_SEND = 1,    /* send out[0..out_len) and wait for the next input */
	TW_EAP_NEED_VECTOR, /* fetch what the session's vector request says, then
			     * call the engine's _vector() function to continue */
	TW_EAP_ACCEPT,      /* send out (EAP-Success); the keys are valid */
	TW_EAP_REJECT,      /* send out (EAP-Failure) */
	TW_EAP_DISCARD,     /* silently discard the input (state unchanged) */
};

enum {
	TW_EAP_ID_MAX = 253,         /* RFC 7542 §2.3: an NAI, as in nai.h */
	TW_EAP_REALM_MAX = 200,
	TW_EAP_PSEUDONYM_MAX = 253,  /* any NAI: RFC 4186 A.5 sends 70 octets */
	TW_EAP_SESSION_ID_MAX = 65,  /* 0x12 | 3 * RAND | NONCE_MT */
	TW_EAP_GEN_ID_RANDOM = 16,   /* characters of randomness in a minted id */
	TW_EAP_GEN_ID_BODY_MAX = 64, /* characters of ops->mint_body */
	TW_EAP_DEFAULT_REAUTH_LIMIT = 16,
	/* A sound packet of these methods is far below this; engines reject a
	 * caller buffer smaller than it with TW_ERR_OVERFLOW up front. */
	TW_EAP_OUT_MIN = 512,
};

/* Keys out of a successful authentication: MSK and EMSK (RFC 3748 §7.10,
 * RFC 5247 §1.4), and the Session-Id (RFC 5247 Appendix A, RFC 8940 §2):
 *   EAP-SIM full:    0x12 | RAND1 | ... | RANDn | NONCE_MT
 *   EAP-AKA full:    0x17 | RAND | AUTN     (AKA': 0x32 | RAND | AUTN,
 *                                            RFC 9048)
 *   fast re-auth:    Type | NONCE_S | MAC   (AT_MAC of the server's
 *                                            EAP-Request/Re-authentication) */
struct tw_eap_keys {
	uint8_t msk[64], emsk[64];
	uint8_t session_id[65];
	size_t session_id_len;
};

/* What a server session needs from the vector source. */
struct tw_eap_vec_request {
	uint8_t method;   /* 18 (SIM: triplets), 23 or 50 (AKA quintets) */
	char imsi[16];    /* NUL terminated */
	size_t imsi_len;
	unsigned count;   /* SIM: triplets wanted, 2..3; AKA: 1 */
	bool resync;      /* AKA: resynchronise first (tw_vecsrc_resync with
			   * rand_ and auts below), then one fresh vector */
	uint8_t rand_[16];
	uint8_t auts[14];
};

/* A fast re-authentication context, kept by the store under a re-auth id
 * (RFC 4187 §5, RFC 4186 §5, RFC 9048 §3.3). Secret: the store must keep
 * it as it keeps keys. */
struct tw_eap_reauth_state {
	uint8_t method;      /* 18, 23 or 50: a re-auth id serves one method */
	char imsi[16];
	size_t imsi_len;
	uint16_t counter;    /* the last AT_COUNTER value used successfully */
	uint8_t k_encr[16];  /* from the full authentication */
	uint8_t k_aut[32];
	size_t k_aut_len;    /* 16 (SIM, AKA) or 32 (AKA') */
	uint8_t mk[20];      /* SIM, AKA: MK for XKEY' (RFC 4187 §7) */
	uint8_t k_re[32];    /* AKA': K_re (RFC 9048 §3.3) */
};

/*
 * The subscriber store's side of identity privacy, implemented by the
 * caller (an in-memory table in the tests). Every callback returns TW_OK,
 * TW_ERR_NOTFOUND for an unknown identity, or another negative error (the
 * engine then fails the authentication cleanly). Identities are passed
 * as the exact octets; pseudonyms are user names without a realm
 * (AT_NEXT_PSEUDONYM, RFC 4187 §10.11), re-auth ids are whole NAIs with
 * the realm (AT_NEXT_REAUTH_ID).
 */
struct tw_eap_identity_ops {
	void *arg;
	/* pseudonym -> IMSI (imsi gets the digits and a NUL) */
	int (*pseudonym_lookup)(void *arg, const uint8_t *pseudonym, size_t len,
				char imsi[16], size_t *imsi_len);
	/* remember a freshly minted pseudonym for imsi (the previous one may be
	 * forgotten once the new one was used: RFC 4187 §4.1.1.7) */
	int (*pseudonym_store)(void *arg, const uint8_t *pseudonym, size_t len,
			       const char *imsi, size_t imsi_len);
	/* re-auth id -> its state */
	int (*reauth_lookup)(void *arg, const uint8_t *id, size_t len,
			     struct tw_eap_reauth_state *st);
	/* remember a freshly minted re-auth id with its state */
	int (*reauth_store)(void *arg, const uint8_t *id, size_t len,
			    const struct tw_eap_reauth_state *st);
	/* forget a re-auth id (used once, rotated, or refused by the peer) */
	int (*reauth_remove)(void *arg, const uint8_t *id, size_t len);
	/* len cryptographically random octets (NONCE_S, IV, minted ids) */
	int (*random)(void *arg, uint8_t *out, size_t len);
	/* optional: the characters of an id minted for imsi, between its
	 * leading digit (digit: tw_eap_id_digit, '2'..'8') and its realm (at
	 * most TW_EAP_GEN_ID_BODY_MAX, from [0-9a-z]); NULL:
	 * TW_EAP_GEN_ID_RANDOM random ones. The subscriber store makes them
	 * carry the IMSI and the digit encrypted, so that it finds the id's
	 * row by IMSI (store.h) and an id's body does not pass under another
	 * digit (a re-auth id's as a pseudonym). */
	int (*mint_body)(void *arg, char digit, const char *imsi, size_t imsi_len, uint8_t *out,
			 size_t max, size_t *out_len);
};

/* Identity policy of a server (RFC 4187 §4.1.6, RFC 4186 §4.2.6). */
enum tw_eap_id_policy {
	/* use the EAP-Response/Identity when it is a usable identity of the
	 * method (permanent, known pseudonym, known re-auth id), and run
	 * AKA-Identity / SIM-Start rounds only for what is missing */
	TW_EAP_ID_TRUST_EAP_IDENTITY = 0,
	/* always start with AT_ANY_ID_REQ: the EAP-Response/Identity may have
	 * been changed by the path (RFC 4187 §4.1.2) */
	TW_EAP_ID_ALWAYS_ANY = 1,
	/* always ask for the permanent identity (no privacy; testing) */
	TW_EAP_ID_ALWAYS_PERMANENT = 2,
};

/* A server's configuration, shared by every session of an access network
 * (the engines keep a pointer: it must outlive them). */
struct tw_eap_server_cfg {
	/* RFC 9048 §3.1 AT_KDF_INPUT: the access network name, e.g. "WLAN"
	 * (TS 24.302 §8.1.1 for trusted WLAN access) */
	const uint8_t *network_name;
	size_t network_name_len;
	bool enable_aka_prime, enable_aka, enable_sim;
	bool result_ind;         /* offer AT_RESULT_IND (RFC 4187 §6.2) */
	bool pseudonyms;         /* issue AT_NEXT_PSEUDONYM */
	bool fast_reauth;        /* issue AT_NEXT_REAUTH_ID, accept re-auth */
	uint16_t reauth_limit;   /* highest AT_COUNTER value allowed; the full
				  * authentication counts as 1 (RFC 4187 §5.1),
				  * so this allows reauth_limit - 1
				  * re-authentications per full one; 1: none
				  * (0: TW_EAP_DEFAULT_REAUTH_LIMIT) */
	enum tw_eap_id_policy id_policy;
	const char *realm;       /* realm of minted re-auth ids (NULL: none) */
	size_t realm_len;
	const struct tw_eap_identity_ops *ops; /* NULL: no privacy, no re-auth */
};

/* The peer's identity memory (RFC 4187 §4.1.1.7, §5): what the last
 * successful authentication gave it. Caller-owned, kept across sessions;
 * secret (it holds re-auth keys). Zero it for a fresh phone. */
struct tw_eap_peer_ids {
	uint8_t pseudonym[TW_EAP_PSEUDONYM_MAX];
	size_t pseudonym_len;        /* 0: none */
	uint8_t pseudonym_method;
	uint8_t reauth_id[TW_EAP_ID_MAX];
	size_t reauth_id_len;        /* 0: none */
	struct tw_eap_reauth_state reauth; /* keys and counter for reauth_id */
};

/* A peer's configuration (the phone): its permanent identity comes from the
 * IMSI and the realm, decorated with the method's leading digit. */
struct tw_eap_peer_cfg {
	const char *imsi;
	size_t imsi_len;
	const char *realm;           /* NULL: identities without a realm */
	size_t realm_len;
	bool support_aka_prime;      /* drives AT_BIDDING checks (RFC 9048 §4) */
	bool result_ind;             /* answer AT_RESULT_IND with AT_RESULT_IND */
	bool use_pseudonym, use_reauth;
	/* RFC 9048 §3.1: the network name the peer expects in AT_KDF_INPUT;
	 * NULL accepts any non-empty name */
	const uint8_t *network_name;
	size_t network_name_len;
	/* random octets for AT_IV / AT_NONCE_MT (the phone's RNG) */
	int (*random)(void *arg, uint8_t *out, size_t len);
	void *random_arg;
};

/* ---- shared helpers (src/eap/eap_method.c) ---------------------------- */

/* Leading digits (RFC 4187 §4.1.1.3-§4.1.1.7, RFC 4186 §4.2.1, TS 23.003
 * §19.3): kind is enum tw_nai_kind. Returns 0 for an unknown method. */
char tw_eap_id_digit(uint8_t method, uint8_t kind);

/* Session-Id = type | a | b (RFC 5247 Appendix A). TW_ERR_LENGTH above 65. */
TW_MUST_CHECK int tw_eap_session_id(struct tw_eap_keys *k, uint8_t type,
				    const uint8_t *a, size_t a_len,
				    const uint8_t *b, size_t b_len);

/*
 * Mints an identity for imsi: the method's leading digit for kind, then
 * ops->mint_body's characters when the ops have it (else
 * TW_EAP_GEN_ID_RANDOM characters [0-9a-v] from ops->random), then
 * "@realm" when with_realm and a realm is set. Returns TW_OK,
 * TW_ERR_OVERFLOW, TW_ERR_INVAL, or the random callback's error.
 */
TW_MUST_CHECK int tw_eap_mint_id(const struct tw_eap_server_cfg *cfg,
				 uint8_t method, uint8_t kind, bool with_realm,
				 const char *imsi, size_t imsi_len,
				 uint8_t *out, size_t max, size_t *out_len);

/* The peer's identity for a method: re-auth id if allow_reauth and one is
 * kept for this method, else pseudonym ("@realm" added) if allowed and the
 * result is an NAI of at most TW_EAP_ID_MAX octets, else the permanent
 * identity digit | IMSI [@realm]. *kind says which. */
TW_MUST_CHECK int tw_eap_peer_identity(const struct tw_eap_peer_cfg *cfg,
				       const struct tw_eap_peer_ids *ids,
				       uint8_t method, bool allow_reauth,
				       bool allow_pseudonym, uint8_t *out,
				       size_t max, size_t *out_len,
				       uint8_t *kind);

/* Identity rounds on the server (RFC 4187 §4.1.5/§4.1.6, RFC 4186 §4.2.5/
 * §4.2.6): what an identity received in a state leads to. */
enum tw_eap_id_result {
	TW_EAP_ID_FAIL = 0,          /* no usable identity: EAP-Failure */
	TW_EAP_ID_PERMANENT,         /* full auth; imsi set */
	TW_EAP_ID_PSEUDONYM,         /* full auth; imsi set from the store */
	TW_EAP_ID_REAUTH,            /* fast re-auth; reauth set */
	TW_EAP_ID_ASK_ANY,           /* send AT_ANY_ID_REQ */
	TW_EAP_ID_ASK_FULLAUTH,      /* send AT_FULLAUTH_ID_REQ */
	TW_EAP_ID_ASK_PERMANENT,     /* send AT_PERMANENT_ID_REQ */
};

struct tw_eap_id_state {
	uint8_t method;
	uint8_t asked;    /* last request sent: 0, or TW_AT_ANY_ID_REQ,
			   * TW_AT_FULLAUTH_ID_REQ, TW_AT_PERMANENT_ID_REQ */
	char imsi[16];
	size_t imsi_len;
	struct tw_eap_reauth_state reauth;
};

/*
 * Classifies an identity (from EAP-Response/Identity when st->asked is 0,
 * else from AT_IDENTITY answering st->asked) under cfg's policy:
 * re-auth ids are accepted only when fast re-auth is on, the store knows
 * them for this method and the counter limit is not reached (else the
 * full-auth id is asked, §4.1.6); unknown pseudonyms lead to the permanent
 * id request (§4.1.5); a request is never repeated nor followed by a
 * broader one (ANY > FULLAUTH > PERMANENT: at most three rounds), and an
 * identity the request did not allow fails. Returns a tw_eap_id_result
 * (>= 0) or a negative store error. The caller sets st->asked when it
 * sends the request.
 */
TW_MUST_CHECK int tw_eap_id_process(struct tw_eap_id_state *st,
				    const struct tw_eap_server_cfg *cfg,
				    const uint8_t *identity, size_t len);

/* Builds EAP-Request/Identity (RFC 3748 §5.1) with an empty prompt. */
TW_MUST_CHECK int tw_eap_request_identity(uint8_t *out, size_t max, uint8_t id,
					  size_t *out_len);

/* Builds EAP-Success / EAP-Failure (RFC 3748 §4.2) with identifier id. */
TW_MUST_CHECK int tw_eap_result(uint8_t *out, size_t max, uint8_t code,
				uint8_t id, size_t *out_len);

/* Wipes a reauth state / the peer's identity memory. */
void tw_eap_reauth_state_wipe(struct tw_eap_reauth_state *st);

/*
 * Peer side, after AT_ENCR_DATA has been decrypted and decoded into in:
 * copies AT_NEXT_PSEUDONYM and AT_NEXT_REAUTH_ID (RFC 4186 §10.11/§10.12,
 * RFC 4187 §10.11/§10.12) into the caller's buffers. An absent attribute
 * leaves its buffer and length untouched; an empty or oversize one is
 * TW_ERR_DECODE. Shared by the EAP-SIM and EAP-AKA(') peers.
 */
TW_MUST_CHECK int tw_eap_take_next_ids(const struct tw_simaka_msg *in,
				       uint8_t *pseudonym, size_t pseudonym_max,
				       size_t *pseudonym_len, uint8_t *reauth_id,
				       size_t reauth_id_max, size_t *reauth_id_len);

#endif
