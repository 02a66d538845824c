/*
 * twag — GSM conversion functions for a GSM context from UMTS AKA outputs
 * (3GPP TS 33.102 V17.0.0 §6.8.1.2): c2 (RES -> SRES) and c3 (CK, IK -> Kc).
 */
#ifndef TWAG_GSM_H
#define TWAG_GSM_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum { TW_GSM_SRES_LEN = 4, TW_GSM_KC_LEN = 8 };

/*
 * c2 (TS 33.102 §6.8.1.2): SRES = XRES*1 ^ XRES*2 ^ XRES*3 ^ XRES*4, the
 * 32-bit words of RES zero-padded to 128 bits. res_len must be 4..16
 * octets, else TW_ERR_LENGTH (and TW_ERR_INVAL for NULL pointers).
 */
TW_MUST_CHECK int tw_gsm_c2(uint8_t sres[static 4], const uint8_t *res, size_t res_len);

/* c3 (TS 33.102 §6.8.1.2): Kc = CK1 ^ CK2 ^ IK1 ^ IK2, the 64-bit halves. */
void tw_gsm_c3(uint8_t kc[static 8], const uint8_t ck[static 16], const uint8_t ik[static 16]);

#endif
