/*
 * twag — a simulated USIM/SIM, the phone side of AKA and GSM
 * authentication (3GPP TS 33.102 V17.0.0 §6.3.3, Annex C.2; §6.8.1.2 for a
 * USIM in a GSM context), for the EAP peers that the load generator and the
 * tests run.
 *
 * struct tw_usim is caller-owned and fixed-size; it holds the long-term
 * keys (wipe it with tw_wipe when done) and the SQN_MS array. It is not
 * thread-safe: one phone, one thread at a time.
 */
#ifndef TWAG_USIM_H
#define TWAG_USIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/sqn.h"
#include "twag/vecsrc.h" /* struct tw_sub_keys, enum tw_sub_alg */

struct tw_usim {
	char imsi[TW_IMSI_MAX_LEN + 1]; /* NUL-terminated digits */
	size_t imsi_len;
	struct tw_sub_keys keys;
	struct tw_sqn_ms sqn;
};

/*
 * Fills u: imsi (5..15 digits, else TW_ERR_INVAL), keys (copied), and an
 * SQN_MS array with nothing accepted yet: IND 5 bits, Δ = 2^28, no L check.
 * Use tw_sqn_ms_init(&u->sqn, ...) for other settings. Returns TW_OK or
 * TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_usim_init(struct tw_usim *u, const char *imsi,
			       const struct tw_sub_keys *keys);

/* The phone matching an HSS record: same IMSI and keys, default SQN_MS
 * array with s's IND length. */
TW_MUST_CHECK int tw_usim_init_from_subscriber(struct tw_usim *u, const struct tw_subscriber *s);

/*
 * USIM AUTHENTICATE (§6.3.3): AK = f5(RAND), SQN = (SQN ^ AK) ^ AK,
 * XMAC-A = f1(SQN, RAND, AMF) compared with MAC-A in constant time; then
 * the Annex C.2 freshness checks on SQN; only if both pass is SEQ_MS(IND)
 * updated and RES (*res_len octets), CK, IK written.
 * Returns:
 *   TW_OK            — send RES (AT_RES); ck/ik valid.
 *   TW_ERR_AUTH      — MAC-A wrong: the peer sends Authentication-Reject
 *                      (RFC 4187 §6.3.1). Nothing changes.
 *   TW_ERR_SYNC      — SQN not fresh: auts = SQN_MS ^ AK* || MAC-S is
 *                      filled (§6.3.3), the peer sends
 *                      Synchronization-Failure with AT_AUTS. SQN_MS array
 *                      unchanged.
 *   TW_ERR_UNSUPPORTED — a SIM-only (COMP128) card.
 *   TW_ERR_INVAL     — NULL.
 * Outputs other than the ones named are zeroed.
 * The AMF separation bit (needed by EAP-AKA') is NOT checked here: the
 * EAP-AKA' peer checks it with tw_usim_autn_separation_bit() (RFC 9048
 * §3: as if AUTN were incorrect when it is 0).
 */
TW_MUST_CHECK int tw_usim_authenticate(struct tw_usim *u, const uint8_t rand_[static 16],
				       const uint8_t autn[static 16], uint8_t res[static 16],
				       size_t *res_len, uint8_t ck[static 16],
				       uint8_t ik[static 16], uint8_t auts[static 14]);

/*
 * GSM authentication: a SIM runs COMP128 v1/v2/v3 (A3/A8); a USIM in a
 * GSM context computes RES, CK, IK and returns SRES = c2(RES), Kc =
 * c3(CK, IK) (§6.8.1.2; no SQN, no AUTN). Returns TW_OK, TW_ERR_INVAL, or
 * TW_ERR_UNSUPPORTED (TUAK sizes c2/c3 cannot take); sres/kc zeroed on error.
 */
TW_MUST_CHECK int tw_usim_gsm(struct tw_usim *u, const uint8_t rand_[static 16],
			      uint8_t sres[static 4], uint8_t kc[static 8]);

/* The AMF separation bit of AUTN (TS 33.102 Annex F: AMF bit 0, the most
 * significant bit of AUTN octet 6). */
static inline bool tw_usim_autn_separation_bit(const uint8_t autn[static 16])
{
	return (autn[6] & 0x80) != 0;
}

#endif
