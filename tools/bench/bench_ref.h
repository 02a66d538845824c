/*
 * twag-bench — reference helpers shared between scenario files (OpenSSL
 * EVP used the ordinary way: a new context per call).
 */
#ifndef TW_BENCH_REF_H
#define TW_BENCH_REF_H

#include <stdint.h>

/*
 * Milenage (3GPP TS 35.206 V17.0.0 §4.1) on EVP aes-128-ecb with a new
 * EVP_CIPHER_CTX per call: TEMP, then OUT1..OUTn_outs (n_outs <= 5) into
 * outs[0..n_outs). OUT1 = MAC-A | MAC-S, OUT2 = AK | RES, OUT3 = CK,
 * OUT4 = IK, OUT5 = AK* (first 6 octets). Returns 0 or -1.
 */
int bench_evp_milenage_outs(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
			    const uint8_t sqn[6], const uint8_t amf[2], unsigned n_outs,
			    uint8_t outs[5][16]);

#endif
