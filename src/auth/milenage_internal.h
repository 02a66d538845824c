/*
 * twag — Milenage implementation kernels, internal to src/auth/milenage*.c
 * (TS 35.206). The public API is include/twag/milenage.h.
 */
#ifndef TWAG_MILENAGE_INTERNAL_H
#define TWAG_MILENAGE_INTERNAL_H

#include <stdint.h>

#include "twag/milenage.h"

/*
 * The kernels take checked constants (never NULL) and are called only when
 * tw_cpu_has() allows; everything else uses the public functions.
 */
enum {
	TW_MILENAGE_OUT1 = 1u << 0, TW_MILENAGE_OUT2 = 1u << 1,
	TW_MILENAGE_OUT3 = 1u << 2, TW_MILENAGE_OUT4 = 1u << 3,
	TW_MILENAGE_OUT5 = 1u << 4,
};
/* OUT_i (TS 35.206 §4.1) into out[i-1] for every bit i-1 set in mask;
 * sqn/amf are read only when OUT1 is asked for. */
void tw_milenage_ni_outs(uint8_t out[5][16], unsigned mask, const uint8_t k[16],
			 const uint8_t opc[16], const uint8_t rand_[16],
			 const uint8_t *sqn, const uint8_t *amf,
			 const struct tw_milenage_consts *c);
void tw_milenage_ni_opc(uint8_t opc[16], const uint8_t k[16], const uint8_t op[16]);
void tw_milenage_ni_generate(struct tw_milenage_vec *v, const uint8_t k[16],
			     const uint8_t opc[16], const uint8_t rand_[16],
			     const uint8_t sqn[6], const uint8_t amf[2],
			     const struct tw_milenage_consts *c);
/* tw_milenage_ni_generate() with the default constants on 256-bit VAES
 * (needs TW_CPU_VAES | TW_CPU_AVX2 | TW_CPU_AESNI | TW_CPU_SSE41). */
void tw_milenage_vaes1_generate(struct tw_milenage_vec *v, const uint8_t k[16],
				const uint8_t opc[16], const uint8_t rand_[16],
				const uint8_t sqn[6], const uint8_t amf[2]);
void tw_milenage_ni_batch(const struct tw_milenage_batch_in *in,
			  struct tw_milenage_vec *out, size_t n,
			  const struct tw_milenage_consts *c);
void tw_milenage_vaes_batch(const struct tw_milenage_batch_in *in,
			    struct tw_milenage_vec *out, size_t n,
			    const struct tw_milenage_consts *c);

#endif
