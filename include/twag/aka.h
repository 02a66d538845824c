/*
 * twag — UMTS AKA authentication vectors, AUTN and AUTS (3GPP TS 33.102
 * V17.0.0 §6.3), generic over the subscriber's algorithm set.
 *
 *   AUTN = SQN ^ AK || AMF || MAC-A                    (§6.3.2)
 *   AUTS = SQN_MS ^ AK* || MAC-S, MAC-S = f1*(SQN_MS, RAND, AMF = 0)  (§6.3.3)
 *
 * SQN freshness (TS 33.102 Annex C) is the caller's: these functions only
 * conceal, recover and authenticate sequence numbers.
 */
#ifndef TWAG_AKA_H
#define TWAG_AKA_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/milenage.h"
#include "twag/tuak.h"

enum {
	TW_AKA_RAND_LEN = 16,
	TW_AKA_AUTN_LEN = 16,
	TW_AKA_AUTS_LEN = 14,
	TW_AKA_SQN_LEN = 6,
	TW_AKA_AMF_LEN = 2,
	TW_AKA_RES_MAX = 16, /* TS 33.102 §6.3.2: RES is 32..128 bits */
};

/* The subscriber's authentication algorithm set. */
enum tw_aka_alg {
	TW_AKA_MILENAGE = 1, /* TS 35.205/35.206 */
	TW_AKA_TUAK = 2,     /* TS 35.231; AKA needs MAC 64, CK/IK 128, RES <= 128 bits */
};

/* What the AuC (or the USIM) holds for one subscriber. Caller-owned; the
 * member of u that alg names is the one in use. */
struct tw_aka_subscriber {
	enum tw_aka_alg alg;
	union {
		struct {
			uint8_t k[16];
			uint8_t opc[16];
			/* NULL: TS 35.206 default c1..c5 / r1..r5 */
			const struct tw_milenage_consts *consts;
		} milenage;
		/* TW_AKA_TUAK: K (128/256), TOPc, output sizes, iterations */
		struct tw_tuak_params tuak;
	} u;
};

/* An authentication vector (TS 33.102 §6.3.2): RAND, XRES, CK, IK, AUTN,
 * and AK (secret, like CK/IK) for callers that recover SQN from AUTN. */
struct tw_aka_vector {
	uint8_t rand_[16];
	uint8_t xres[TW_AKA_RES_MAX];
	size_t xres_len; /* 8 for Milenage; res_bits/8 for TUAK */
	uint8_t ck[16];
	uint8_t ik[16];
	uint8_t ak[6];
	uint8_t autn[16];
};

/* AUTN = SQN ^ AK || AMF || MAC-A (TS 33.102 §6.3.2). Returns TW_OK. */
TW_MUST_CHECK int tw_aka_autn_build(uint8_t autn[static 16], const uint8_t sqn[static 6],
				    const uint8_t ak[static 6], const uint8_t amf[static 2],
				    const uint8_t mac_a[static 8]);

/*
 * HE/AuC (TS 33.102 §6.3.2): computes MAC-A = f1, XRES = f2, CK = f3,
 * IK = f4, AK = f5 for (RAND, SQN, AMF) and fills v (rand_ copied in).
 * Returns TW_OK, TW_ERR_INVAL (NULL, or unknown alg), TW_ERR_UNSUPPORTED
 * (TUAK sizes AKA cannot carry: MAC != 64, CK/IK != 128 or RES > 128 bits),
 * TW_ERR_LENGTH/TW_ERR_RANGE (bad TUAK parameters), or TW_ERR_RANGE (bad
 * Milenage constants).
 */
TW_MUST_CHECK int tw_aka_generate(const struct tw_aka_subscriber *s,
				  const uint8_t rand_[static 16], const uint8_t sqn[static 6],
				  const uint8_t amf[static 2], struct tw_aka_vector *v);

/*
 * USIM (TS 33.102 §6.3.3): AK = f5(RAND), SQN = (SQN ^ AK) ^ AK, XMAC-A =
 * f1(SQN, RAND, AMF) compared with MAC-A in constant time. On success
 * writes SQN, RES (*res_len octets), CK and IK and returns TW_OK; the
 * caller then checks SQN's range (Annex C) and sends RES or AUTS, so the
 * verified SQN is declassified (tw_ct_declassify). On a MAC
 * mismatch returns TW_ERR_AUTH with every output zeroed. res_len may not be
 * NULL. Other errors as tw_aka_generate().
 */
TW_MUST_CHECK int tw_aka_autn_verify(const struct tw_aka_subscriber *s,
				     const uint8_t rand_[static 16],
				     const uint8_t autn[static 16], uint8_t sqn_out[static 6],
				     uint8_t res[static TW_AKA_RES_MAX], size_t *res_len,
				     uint8_t ck[static 16], uint8_t ik[static 16]);

/*
 * USIM (TS 33.102 §6.3.3): AUTS = SQN_MS ^ AK* || MAC-S with AK* =
 * f5*(RAND) and MAC-S = f1*(SQN_MS, RAND, AMF*), AMF* = 0x0000.
 */
TW_MUST_CHECK int tw_aka_auts_build(const struct tw_aka_subscriber *s,
				    const uint8_t rand_[static 16],
				    const uint8_t sqn_ms[static 6], uint8_t auts[static 14]);

/*
 * HE (TS 33.102 §6.3.5): SQN_MS = (SQN_MS ^ AK*) ^ f5*(RAND); XMAC-S =
 * f1*(SQN_MS, RAND, 0x0000) compared with MAC-S in constant time. Returns
 * TW_OK with SQN_MS in sqn_ms_out, or TW_ERR_AUTH with sqn_ms_out zeroed.
 */
TW_MUST_CHECK int tw_aka_auts_verify(const struct tw_aka_subscriber *s,
				     const uint8_t rand_[static 16],
				     const uint8_t auts[static 14],
				     uint8_t sqn_ms_out[static 6]);

#endif
