/*
 * twag — the local vector source: authentication vectors (3GPP TS 33.102
 * V17.0.0 §6.3.2), resynchronisation (§6.3.5, Annex C) and GSM triplets
 * (COMP128, or a USIM subscriber via c2/c3, §6.8.1.2) computed from a
 * subscriber's keys, as the HSS/AuC would.
 *
 * The EAP method engines never call these directly: a server session
 * returns TW_EAP_NEED_VECTOR and its caller either calls these (local mode)
 * or asks an HSS and resumes later. struct tw_subscriber is caller-owned,
 * fixed-size, and holds secrets (wipe it with tw_wipe when done).
 *
 * AMF: the subscriber's AMF goes into AUTN as configured. Its separation bit
 * (AMF bit 0, the most significant bit of the first octet; TS 33.102
 * Annex F) must be 1 in vectors for EAP-AKA' (TS 33.402 §6.2, RFC 9048
 * §3): tw_vecsrc_aka_prime() sets it, tw_vecsrc_aka() leaves the AMF as
 * configured (EAP-AKA, RFC 4187, has no such rule).
 */
#ifndef TWAG_VECSRC_H
#define TWAG_VECSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/aka.h"
#include "twag/err.h"
#include "twag/sqn.h"

enum {
	TW_IMSI_MAX_LEN = 15, /* TS 23.003 §2.2: at most 15 digits */
	TW_IMSI_MIN_LEN = 5,  /* MCC + a 2-digit MNC, no MSIN: sanity floor */
};

/* The subscriber's algorithm. */
enum tw_sub_alg {
	TW_SUB_MILENAGE = 1, /* USIM, TS 35.206 (keys in aka.u.milenage) */
	TW_SUB_TUAK = 2,     /* USIM, TS 35.231 (keys in aka.u.tuak; AKA-compatible sizes) */
	TW_SUB_COMP128V1 = 3, /* SIM only (ki): EAP-SIM, no AKA */
	TW_SUB_COMP128V2 = 4,
	TW_SUB_COMP128V3 = 5,
};

/* The long-term keys a subscriber and its (U)SIM share. */
struct tw_sub_keys {
	enum tw_sub_alg alg;
	struct tw_aka_subscriber aka; /* MILENAGE/TUAK; aka.alg matches alg */
	uint8_t ki[16];               /* COMP128 v1..v3 */
};

/* One HSS record: IMSI, keys, AMF, and the HE SQN state. */
struct tw_subscriber {
	char imsi[TW_IMSI_MAX_LEN + 1]; /* NUL-terminated digits */
	size_t imsi_len;
	struct tw_sub_keys keys;
	uint8_t amf[2];
	struct tw_sqn_he sqn;
};

/* EAP-AKA/AKA' vector: RAND, AUTN, XRES (xres_len octets, 4..16), CK, IK. */
struct tw_eap_aka_vec {
	uint8_t rand_[16], autn[16], xres[16];
	size_t xres_len;
	uint8_t ck[16], ik[16];
};

/* EAP-SIM / GSM triplet. */
struct tw_eap_sim_triplet {
	uint8_t rand_[16], sres[4], kc[8];
};

/* Key setup helpers (all return TW_OK, TW_ERR_INVAL for NULL, or the
 * errors named). */

/* Milenage keys: K, OPc, optional operator constants (NULL = TS 35.206
 * defaults; the pointer is kept, the caller keeps them alive).
 * TW_ERR_RANGE for bad constants. */
TW_MUST_CHECK int tw_sub_keys_milenage(struct tw_sub_keys *kk, const uint8_t k[static 16],
				       const uint8_t opc[static 16],
				       const struct tw_milenage_consts *consts);

/* TUAK keys (K, TOPc, sizes, iterations). TW_ERR_LENGTH/TW_ERR_RANGE for
 * parameters TS 35.231 does not allow; TW_ERR_UNSUPPORTED for sizes AKA
 * cannot carry (MAC != 64, CK/IK != 128, RES > 128 bits). */
TW_MUST_CHECK int tw_sub_keys_tuak(struct tw_sub_keys *kk, const struct tw_tuak_params *p);

/* COMP128 v1, v2 or v3 Ki. TW_ERR_UNSUPPORTED for another version. */
TW_MUST_CHECK int tw_sub_keys_comp128(struct tw_sub_keys *kk, unsigned version,
				      const uint8_t ki[static 16]);

/*
 * GSM authentication from a key set (what both the HE and the (U)SIM
 * compute): COMP128 v1/v2/v3 for a SIM; for a USIM, SRES = c2(RES) and
 * Kc = c3(CK, IK) (§6.8.1.2; f2..f4 use no SQN). Returns TW_OK,
 * TW_ERR_INVAL or TW_ERR_UNSUPPORTED (TUAK sizes c2/c3 cannot take).
 */
TW_MUST_CHECK int tw_sub_keys_gsm(const struct tw_sub_keys *kk, const uint8_t rand_[static 16],
				  uint8_t sres[static 4], uint8_t kc[static 8]);

/*
 * Fills s: imsi (5..15 decimal digits, NUL-terminated, else TW_ERR_INVAL),
 * keys (copied), amf, and the default HE SQN record: IND 5 bits, this node
 * slot 0 only, SEQ_HE = 0. Use tw_sqn_he_init(&s->sqn, ...) for other
 * slots or a stored SEQ_HE.
 */
TW_MUST_CHECK int tw_subscriber_init(struct tw_subscriber *s, const char *imsi,
				     const struct tw_sub_keys *keys, const uint8_t amf[static 2]);

/*
 * HE (§6.3.2, Annex C.1): takes the next SQN from s->sqn (s is updated: the
 * caller persists s before the vector leaves), then AUTN = SQN ^ AK || AMF
 * || MAC-A, XRES, CK, IK for RAND. Returns TW_OK; TW_ERR_UNSUPPORTED for a
 * COMP128 subscriber; TW_ERR_RANGE when SEQ is exhausted; TW_ERR_INVAL for
 * NULL or a bad record. On error s->sqn is unchanged and out zeroed.
 */
TW_MUST_CHECK int tw_vecsrc_aka(struct tw_subscriber *s, const uint8_t rand_[static 16],
				struct tw_eap_aka_vec *out);

/* As tw_vecsrc_aka() with the AMF separation bit set to 1 (TS 33.402 §6.2:
 * vectors for EAP-AKA'). CK/IK are returned as is: CK'/IK' are the EAP-AKA'
 * engine's (tw_kdf_ck_ik_prime). */
TW_MUST_CHECK int tw_vecsrc_aka_prime(struct tw_subscriber *s, const uint8_t rand_[static 16],
				      struct tw_eap_aka_vec *out);

/*
 * HE (§6.3.5, Annex C.3): recovers SQN_MS from AUTS (AK* = f5*(RAND)),
 * verifies MAC-S = f1*(SQN_MS, RAND, AMF* = 0) in constant time, then
 * resets SEQ_HE to SEQ_MS (s updated; the caller persists it). RAND is the
 * one of the challenge the peer rejected. Returns TW_OK; TW_ERR_AUTH (MAC-S
 * wrong: s untouched); TW_ERR_UNSUPPORTED (COMP128 subscriber);
 * TW_ERR_INVAL. Rate-limiting is the caller's (the subscriber store).
 */
TW_MUST_CHECK int tw_vecsrc_resync(struct tw_subscriber *s, const uint8_t rand_[static 16],
				   const uint8_t auts[static 14]);

/*
 * A GSM triplet for RAND: COMP128 v1/v2/v3 for a SIM subscriber; for a
 * USIM subscriber, SRES = c2(XRES) and Kc = c3(CK, IK) (§6.8.1.2), which
 * use no SQN (s is not changed). Returns TW_OK or TW_ERR_INVAL /
 * TW_ERR_UNSUPPORTED; out is zeroed on error.
 */
TW_MUST_CHECK int tw_vecsrc_sim(struct tw_subscriber *s, const uint8_t rand_[static 16],
				struct tw_eap_sim_triplet *out);

/*
 * n (1..3) triplets, one per rands[i], as n calls of tw_vecsrc_sim; a
 * COMP128 subscriber's are computed together (tw_comp128_many: v1 runs
 * them side by side with AVX-512 VBMI or AVX2). TW_OK, or as tw_vecsrc_sim (and
 * TW_ERR_INVAL for n outside 1..3); all of out is zeroed on error.
 */
TW_MUST_CHECK int tw_vecsrc_sim_many(struct tw_subscriber *s, const uint8_t rands[][16],
				     unsigned n, struct tw_eap_sim_triplet *out);

#endif
