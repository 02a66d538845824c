/*
 * twag — the MILENAGE algorithm set (3GPP TS 35.205 / TS 35.206 V17.0.0):
 * OP -> OPc, f1, f1*, f2, f3, f4, f5, f5*, with operator-configurable
 * constants c1..c5 / r1..r5, plus the AuC hot path (f1 + f2..f5 sharing the
 * key schedule and TEMP) and a multi-subscriber batch.
 *
 * Implementations: portable (on tw_aes), AES-NI (one subscriber, and a
 * multi-lane batch), VAES/AVX-512 (batch, four subscribers per zmm). The
 * fastest one tw_cpu_has() allows is used on every call; all give identical
 * results. Nothing here allocates; every secret temporary is wiped.
 */
#ifndef TWAG_MILENAGE_H
#define TWAG_MILENAGE_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_MILENAGE_K_LEN = 16,
	TW_MILENAGE_OP_LEN = 16,
	TW_MILENAGE_RAND_LEN = 16,
	TW_MILENAGE_SQN_LEN = 6,
	TW_MILENAGE_AMF_LEN = 2,
	TW_MILENAGE_MAC_LEN = 8,
	TW_MILENAGE_RES_LEN = 8,
	TW_MILENAGE_CK_LEN = 16,
	TW_MILENAGE_IK_LEN = 16,
	TW_MILENAGE_AK_LEN = 6,
};

/*
 * TS 35.206 §4.1: the 128-bit constants c1..c5 (c[i-1], big-endian bytes)
 * and the rotations r1..r5 (r[i-1], in bits, 0..127) towards the most
 * significant bit.
 */
struct tw_milenage_consts {
	uint8_t c[5][16];
	uint8_t r[5];
};

/* The spec's defaults: c1 = 0, c2 = ..01, c3 = ..02, c4 = ..04, c5 = ..08;
 * r1 = 64, r2 = 0, r3 = 32, r4 = 64, r5 = 96. */
extern const struct tw_milenage_consts tw_milenage_default_consts;

/* Checks operator constants: every r_i <= 127 (TS 35.206 §4.1), else
 * TW_ERR_RANGE; NULL is TW_ERR_INVAL. Every function below checks too. */
TW_MUST_CHECK int tw_milenage_consts_check(const struct tw_milenage_consts *c);

/* TS 35.206 §4.1: OPc = OP ^ E_K(OP). Returns TW_OK. */
TW_MUST_CHECK int tw_milenage_opc(uint8_t opc[static 16], const uint8_t k[static 16],
				  const uint8_t op[static 16]);

/* Every output of the set for one (K, OPc, RAND, SQN, AMF). */
struct tw_milenage_out {
	uint8_t mac_a[8], mac_s[8], res[8], ck[16], ik[16], ak[6], ak_star[6];
};

/*
 * In every function below, consts == NULL means tw_milenage_default_consts;
 * constants with some r_i > 127 give TW_ERR_RANGE and leave the outputs
 * untouched. Otherwise they return TW_OK.
 */

/* TS 35.206 §4.1: f1, f1*, f2, f3, f4, f5 and f5* at once. */
TW_MUST_CHECK int tw_milenage_all(const uint8_t k[static 16], const uint8_t opc[static 16],
				  const uint8_t rand_[static 16], const uint8_t sqn[static 6],
				  const uint8_t amf[static 2],
				  const struct tw_milenage_consts *consts,
				  struct tw_milenage_out *out);

/* TS 35.206 §4.1: MAC-A = f1 = OUT1[0..63]. */
TW_MUST_CHECK int tw_milenage_f1(const uint8_t k[static 16], const uint8_t opc[static 16],
				 const uint8_t rand_[static 16], const uint8_t sqn[static 6],
				 const uint8_t amf[static 2],
				 const struct tw_milenage_consts *consts,
				 uint8_t mac_a[static 8]);

/* TS 35.206 §4.1: MAC-S = f1* = OUT1[64..127] (resynchronisation). */
TW_MUST_CHECK int tw_milenage_f1star(const uint8_t k[static 16], const uint8_t opc[static 16],
				     const uint8_t rand_[static 16], const uint8_t sqn[static 6],
				     const uint8_t amf[static 2],
				     const struct tw_milenage_consts *consts,
				     uint8_t mac_s[static 8]);

/* TS 35.206 §4.1: RES = f2 = OUT2[64..127], CK = f3 = OUT3, IK = f4 = OUT4,
 * AK = f5 = OUT2[0..47]. */
TW_MUST_CHECK int tw_milenage_f2345(const uint8_t k[static 16], const uint8_t opc[static 16],
				    const uint8_t rand_[static 16],
				    const struct tw_milenage_consts *consts,
				    uint8_t res[static 8], uint8_t ck[static 16],
				    uint8_t ik[static 16], uint8_t ak[static 6]);

/* TS 35.206 §4.1: AK* = f5* = OUT5[0..47] (resynchronisation). */
TW_MUST_CHECK int tw_milenage_f5star(const uint8_t k[static 16], const uint8_t opc[static 16],
				     const uint8_t rand_[static 16],
				     const struct tw_milenage_consts *consts,
				     uint8_t ak_star[static 6]);

/* What the AuC needs for one authentication vector (TS 33.102 §6.3.2). */
struct tw_milenage_vec {
	uint8_t mac_a[8], res[8], ck[16], ik[16], ak[6];
};

/* The AuC hot path: f1, f2, f3, f4, f5 with one key schedule and one TEMP. */
TW_MUST_CHECK int tw_milenage_generate(const uint8_t k[static 16], const uint8_t opc[static 16],
				       const uint8_t rand_[static 16], const uint8_t sqn[static 6],
				       const uint8_t amf[static 2],
				       const struct tw_milenage_consts *consts,
				       struct tw_milenage_vec *out);

/* One subscriber's inputs for tw_milenage_generate_batch. */
struct tw_milenage_batch_in {
	uint8_t k[16], opc[16], rand_[16], sqn[6], amf[2];
};

/*
 * out[i] = tw_milenage_generate(in[i]...) for i < n, several subscribers per
 * pass on AES-NI / VAES (any n, including 0). in and out must not overlap.
 * Returns TW_ERR_INVAL if n > 0 and in or out is NULL.
 */
TW_MUST_CHECK int tw_milenage_generate_batch(const struct tw_milenage_batch_in *in,
					     struct tw_milenage_vec *out, size_t n,
					     const struct tw_milenage_consts *consts);

#endif
