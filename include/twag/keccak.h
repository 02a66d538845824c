/*
 * twag — Keccak-f[1600], the permutation under SHA-3 and TUAK.
 *
 * Spec: NIST FIPS 202 (August 2015) §3.3 and §3.4; the same permutation is
 * restated as "Π" in 3GPP TS 35.231 V17.0.0 Annex C.
 */
#ifndef TWAG_KECCAK_H
#define TWAG_KECCAK_H

#include <stdint.h>

enum {
	TW_KECCAK_LANES = 25,   /* 5 x 5 lanes of 64 bits */
	TW_KECCAK_STATE_LEN = 200, /* octets in the 1600-bit state */
};

/*
 * Applies Keccak-f[1600] (24 rounds of θ ρ π χ ι, FIPS 202 §3.3) in place.
 *
 * st[x + 5*y] is lane A[x, y]. Bit z of a lane is bit z of the uint64_t,
 * i.e. FIPS 202's byte string maps to lanes little-endian: octet 8*i+j of
 * the state is bits 8j..8j+7 of st[i] (load it with tw_load_le64).
 *
 * The permutation wipes its own temporaries; the caller owns (and wipes) st.
 * It cannot fail.
 */
void tw_keccak_f1600(uint64_t st[static 25]);

#endif
