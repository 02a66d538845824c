/*
 * twag — TUAK, the second 3GPP example algorithm set for f1, f1*, f2, f3,
 * f4, f5 and f5*, built on Keccak-f[1600].
 *
 * Spec: 3GPP TS 35.231 V17.0.0 (Release 17), "Document 1: Algorithm
 * specification"; test data in TS 35.232 (Keccak) and TS 35.233 (TUAK).
 *
 * Every function is stateless: the caller owns the parameters (K and TOPc are
 * secrets: wipe struct tw_tuak_params with tw_wipe when done). Byte strings
 * are in 3GPP order (the first octet holds bits 0..7, bit 0 the most
 * significant), exactly as printed in TS 35.233. Outputs are valid only when
 * TW_OK is returned; on error they are left untouched.
 */
#ifndef TWAG_TUAK_H
#define TWAG_TUAK_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_TUAK_TOP_LEN = 32,  /* TOP and TOPc: 256 bits (TS 35.231 §5.1) */
	TW_TUAK_RAND_LEN = 16,
	TW_TUAK_SQN_LEN = 6,
	TW_TUAK_AMF_LEN = 2,
	TW_TUAK_AK_LEN = 6,
	TW_TUAK_MAX_OUT_LEN = 32, /* the longest MAC/RES/CK/IK: 256 bits */
};

/*
 * Operator/subscriber parameters (TS 35.231 §5.1). The sizes are fixed per
 * implementation in the spec; here they travel with the key so one server
 * can hold subscribers with different profiles.
 */
struct tw_tuak_params {
	uint8_t k[32]; uint8_t k_len;   /* K: 16 or 32 octets (128/256 bits) */
	uint8_t topc[32];               /* TOPc, from tw_tuak_topc() */
	uint16_t mac_bits;              /* MAC-A / MAC-S: 64, 128, 256 */
	uint16_t res_bits;              /* RES: 32, 64, 128, 256 */
	uint16_t ck_bits, ik_bits;      /* CK, IK: 128 or 256 */
	uint16_t iterations;            /* Keccak iterations, >= 1 (1 = spec default) */
};

/*
 * Checks that every size in p is one TS 35.231 §5.1 allows.
 * Returns TW_OK; TW_ERR_INVAL if p is NULL; TW_ERR_LENGTH for a bad K, MAC,
 * RES, CK or IK length; TW_ERR_RANGE if iterations is 0.
 */
TW_MUST_CHECK int tw_tuak_params_check(const struct tw_tuak_params *p);

/*
 * TS 35.231 §6.1: TOPc = Π^iterations(TOP || INSTANCE || ALGONAME || K ...).
 * k_len is 16 or 32; iterations >= 1.
 * Returns TW_OK; TW_ERR_INVAL (NULL k), TW_ERR_LENGTH (k_len),
 * TW_ERR_RANGE (iterations 0 or above 65535).
 */
TW_MUST_CHECK int tw_tuak_topc(uint8_t topc[static 32], const uint8_t top[static 32],
			       const uint8_t *k, size_t k_len, unsigned iterations);

/*
 * TS 35.231 §6.2: f1, the network authentication function.
 * Writes MAC-A, p->mac_bits / 8 octets, to mac_a.
 * Returns TW_OK or the error of tw_tuak_params_check (TW_ERR_INVAL for a
 * NULL output).
 */
TW_MUST_CHECK int tw_tuak_f1(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
			     const uint8_t sqn[static 6], const uint8_t amf[static 2],
			     uint8_t *mac_a /* mac_bits/8 octets */);

/*
 * TS 35.231 §6.3: f1*, the re-synchronisation message authentication
 * function. Writes MAC-S, p->mac_bits / 8 octets. Returns as tw_tuak_f1.
 */
TW_MUST_CHECK int tw_tuak_f1star(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
				 const uint8_t sqn[static 6], const uint8_t amf[static 2],
				 uint8_t *mac_s);

/*
 * TS 35.231 §6.4: f2 (RES), f3 (CK), f4 (IK) and f5 (AK) from one Keccak
 * evaluation. res receives p->res_bits / 8 octets, ck p->ck_bits / 8, ik
 * p->ik_bits / 8, ak 6. res, ck or ik may be NULL when not wanted (the
 * INSTANCE byte, and so every output, still depends on all three sizes).
 * Returns TW_OK or the error of tw_tuak_params_check (TW_ERR_INVAL for a
 * NULL ak).
 */
TW_MUST_CHECK int tw_tuak_f2345(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
				uint8_t *res /* res_bits/8 */, uint8_t *ck /* ck_bits/8 */,
				uint8_t *ik /* ik_bits/8 */, uint8_t ak[static 6]);

/*
 * TS 35.231 §6.5: f5*, the anonymity key for re-synchronisation.
 * Returns TW_OK or the error of tw_tuak_params_check.
 */
TW_MUST_CHECK int tw_tuak_f5star(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
				 uint8_t ak_star[static 6]);

#endif
