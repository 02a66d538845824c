/*
 * twag — COMP128 v1, v2 and v3, the GSM A3/A8 example algorithms
 * (Ki, RAND -> SRES, Kc) used by SIMs and by EAP-SIM triplets.
 *
 * Spec: no public 3GPP/ETSI text exists. v1 follows the published
 * description (Briceno, Goldberg, Wagner 1998, from the leaked Racal
 * "GSM System Security Study" 10-1617-01 §20); v2/v3 follow the published
 * reverse engineering by T. Jos (2013). See src/auth/comp128.c.
 *
 * NOT constant-time: COMP128 indexes its tables with key-dependent values by
 * design (see src/auth/comp128.c for why that is accepted here). Only the
 * vector paths of v1 are not: AVX-512 VBMI (register-held tables, byte
 * permutes) and AVX2 (byte shuffles over every 16-entry piece of a table).
 */
#ifndef TWAG_COMP128_H
#define TWAG_COMP128_H

#include <stdint.h>

#include "twag/err.h"

enum {
	TW_COMP128_KI_LEN = 16,
	TW_COMP128_RAND_LEN = 16,
	TW_COMP128_SRES_LEN = 4,
	TW_COMP128_KC_LEN = 8,
};

/*
 * Runs COMP128 version 1, 2 or 3 (A3 and A8 together).
 * sres receives the 32-bit SRES, kc the 64-bit Kc. For v1 and v2 the 10 low
 * bits of Kc are zero (a 54-bit effective key), as real SIMs output it; v3
 * outputs a full 64-bit Kc.
 * Returns TW_OK, or TW_ERR_UNSUPPORTED for any other version (outputs are
 * then untouched).
 */
TW_MUST_CHECK int tw_comp128(unsigned version /* 1, 2, 3 */, const uint8_t ki[static 16],
			     const uint8_t rand_[static 16], uint8_t sres[static 4],
			     uint8_t kc[static 8]);

/*
 * tw_comp128 for n RANDs under one Ki (the n triplets of an EAP-SIM
 * authentication): (sres[i], kc[i]) from rand_[i]. With AVX-512 VBMI, v1
 * runs up to four at once in byte permutes over register-held tables,
 * with AVX2 up to three in byte shuffles (the time then does not depend
 * on Ki or RAND). TW_OK;
 * TW_ERR_UNSUPPORTED for another version; TW_ERR_INVAL for NULL arrays
 * with n > 0 (outputs untouched in both cases).
 */
TW_MUST_CHECK int tw_comp128_many(unsigned version /* 1, 2, 3 */, const uint8_t ki[static 16],
				  unsigned n, const uint8_t rand_[][16], uint8_t sres[][4],
				  uint8_t kc[][8]);

#endif
