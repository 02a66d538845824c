/*
 * twag — the MILENAGE algorithm set (3GPP TS 35.206 V17.0.0 §4.1): the
 * portable implementation on tw_aes, and the dispatch to the AES-NI and
 * VAES kernels (src/auth/milenage_ni.c, milenage_vaes.c).
 *
 *   OPc   = OP ^ E_K(OP)
 *   TEMP  = E_K(RAND ^ OPc)
 *   IN1   = SQN || AMF || SQN || AMF
 *   OUT1  = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc
 *   OUT_i = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc       for i = 2..5
 *   f1 = OUT1[0..63], f1* = OUT1[64..127], f5 = OUT2[0..47],
 *   f2 = OUT2[64..127], f3 = OUT3, f4 = OUT4, f5* = OUT5[0..47].
 */
#include <string.h>

#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/milenage.h"
#include "milenage_internal.h"

/* TS 35.206 §4.1 default constants. */
const struct tw_milenage_consts tw_milenage_default_consts = {
	.c = {
		{ 0 },
		{ [15] = 0x01 },
		{ [15] = 0x02 },
		{ [15] = 0x04 },
		{ [15] = 0x08 },
	},
	.r = { 64, 0, 32, 64, 96 },
};

int tw_milenage_consts_check(const struct tw_milenage_consts *c)
{
	if (c == NULL)
		return TW_ERR_INVAL;
	for (int i = 0; i < 5; i++)
		if (c->r[i] > 127)
			return TW_ERR_RANGE;
	return TW_OK;
}

/* NULL -> the defaults; then the range check. */
static int pick_consts(const struct tw_milenage_consts **c)
{
	if (*c == NULL)
		*c = &tw_milenage_default_consts;
	return tw_milenage_consts_check(*c);
}

#define MIL_NI (TW_CPU_AESNI | TW_CPU_SSE41)
#define MIL_VAES1 (TW_CPU_VAES | TW_CPU_AVX2 | TW_CPU_AESNI | TW_CPU_SSE41)

static bool use_ni(void)
{
	return tw_cpu_has(MIL_NI);
}

/* rot(x, r) of TS 35.206 §4.1: x cyclically rotated by r bits towards the
 * most significant bit (byte 0 is the most significant). r is public. */
static void rot128(uint8_t out[16], const uint8_t x[16], unsigned r)
{
	unsigned n = r / 8, s = r % 8;

	for (unsigned j = 0; j < 16; j++) {
		unsigned hi = x[(j + n) & 15], lo = x[(j + n + 1) & 15];

		out[j] = s ? (uint8_t)((hi << s) | (lo >> (8 - s))) : (uint8_t)hi;
	}
}

/* Portable OUT_i for the bits of mask, into out[i-1]. */
static int portable_outs(uint8_t out[5][16], unsigned mask, const uint8_t *k,
			 const uint8_t *opc, const uint8_t *rand_, const uint8_t *sqn,
			 const uint8_t *amf, const struct tw_milenage_consts *c)
{
	struct tw_aes_ctx aes;
	uint8_t temp[16], t[16], in1[16], blk[5][16];
	unsigned idx[5], nb = 0;
	int err;

	err = tw_aes_init_enc(&aes, k, 16);
	if (err != TW_OK)
		goto out;
	/* TEMP = E_K(RAND ^ OPc) */
	tw_xor(t, rand_, opc, 16);
	tw_aes_encrypt(&aes, temp, t);
	/* t = TEMP ^ OPc, rotated for OUT2..OUT5 */
	tw_xor(t, temp, opc, 16);
	if (mask & TW_MILENAGE_OUT1) {
		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc */
		memcpy(in1, sqn, 6);
		memcpy(in1 + 6, amf, 2);
		memcpy(in1 + 8, in1, 8);
		tw_xor(in1, in1, opc, 16);
		rot128(blk[nb], in1, c->r[0]);
		tw_xor(blk[nb], blk[nb], temp, 16);
		tw_xor(blk[nb], blk[nb], c->c[0], 16);
		idx[nb++] = 0;
	}
	for (unsigned i = 1; i < 5; i++) {
		if (!(mask & (1u << i)))
			continue;
		/* OUT_i = E_K(rot(TEMP ^ OPc, r_i) ^ c_i) ^ OPc */
		rot128(blk[nb], t, c->r[i]);
		tw_xor(blk[nb], blk[nb], c->c[i], 16);
		idx[nb++] = i;
	}
	tw_aes_encrypt_blocks(&aes, blk[0], blk[0], nb);
	for (unsigned j = 0; j < nb; j++)
		tw_xor(out[idx[j]], blk[j], opc, 16);
	err = TW_OK;
out:
	tw_aes_wipe(&aes);
	tw_wipe(temp, sizeof(temp));
	tw_wipe(t, sizeof(t));
	tw_wipe(in1, sizeof(in1));
	tw_wipe(blk, sizeof(blk));
	return err;
}

/* OUT_i for the bits of mask on the fastest implementation allowed. */
static int outs(uint8_t out[5][16], unsigned mask, const uint8_t *k,
		const uint8_t *opc, const uint8_t *rand_, const uint8_t *sqn,
		const uint8_t *amf, const struct tw_milenage_consts *c)
{
	if (use_ni()) {
		tw_milenage_ni_outs(out, mask, k, opc, rand_, sqn, amf, c);
		return TW_OK;
	}
	return portable_outs(out, mask, k, opc, rand_, sqn, amf, c);
}

int tw_milenage_opc(uint8_t opc[static 16], const uint8_t k[static 16],
		    const uint8_t op[static 16])
{
	struct tw_aes_ctx aes;
	uint8_t e[16];
	int err;

	if (use_ni()) {
		tw_milenage_ni_opc(opc, k, op);
		return TW_OK;
	}
	err = tw_aes_init_enc(&aes, k, 16);
	if (err != TW_OK)
		goto out;
	/* TS 35.206 §4.1: OPc = OP ^ E_K(OP) */
	tw_aes_encrypt(&aes, e, op);
	tw_xor(opc, e, op, 16);
out:
	tw_aes_wipe(&aes);
	tw_wipe(e, sizeof(e));
	return err;
}

int tw_milenage_all(const uint8_t k[static 16], const uint8_t opc[static 16],
		    const uint8_t rand_[static 16], const uint8_t sqn[static 6],
		    const uint8_t amf[static 2], const struct tw_milenage_consts *consts,
		    struct tw_milenage_out *out)
{
	uint8_t o[5][16];
	int err;

	err = pick_consts(&consts);
	if (err != TW_OK)
		goto out;
	err = outs(o, 0x1f, k, opc, rand_, sqn, amf, consts);
	if (err != TW_OK)
		goto out;
	/* f1 = OUT1[0..63], f1* = OUT1[64..127] */
	memcpy(out->mac_a, o[0], 8);
	memcpy(out->mac_s, o[0] + 8, 8);
	/* f5 = OUT2[0..47], f2 = OUT2[64..127] */
	memcpy(out->ak, o[1], 6);
	memcpy(out->res, o[1] + 8, 8);
	memcpy(out->ck, o[2], 16);
	memcpy(out->ik, o[3], 16);
	/* f5* = OUT5[0..47] */
	memcpy(out->ak_star, o[4], 6);
out:
	tw_wipe(o, sizeof(o));
	return err;
}

/* f1 (half 0) or f1* (half 1) of OUT1. */
static int f1_half(const uint8_t *k, const uint8_t *opc, const uint8_t *rand_,
		   const uint8_t *sqn, const uint8_t *amf,
		   const struct tw_milenage_consts *consts, uint8_t mac[8], int half)
{
	uint8_t o[5][16];
	int err;

	err = pick_consts(&consts);
	if (err != TW_OK)
		goto out;
	err = outs(o, TW_MILENAGE_OUT1, k, opc, rand_, sqn, amf, consts);
	if (err != TW_OK)
		goto out;
	memcpy(mac, o[0] + 8 * half, 8);
out:
	tw_wipe(o, sizeof(o));
	return err;
}

int tw_milenage_f1(const uint8_t k[static 16], const uint8_t opc[static 16],
		   const uint8_t rand_[static 16], const uint8_t sqn[static 6],
		   const uint8_t amf[static 2], const struct tw_milenage_consts *consts,
		   uint8_t mac_a[static 8])
{
	/* TS 35.206 §4.1: f1 = OUT1[0..63] */
	return f1_half(k, opc, rand_, sqn, amf, consts, mac_a, 0);
}

int tw_milenage_f1star(const uint8_t k[static 16], const uint8_t opc[static 16],
		       const uint8_t rand_[static 16], const uint8_t sqn[static 6],
		       const uint8_t amf[static 2], const struct tw_milenage_consts *consts,
		       uint8_t mac_s[static 8])
{
	/* TS 35.206 §4.1: f1* = OUT1[64..127] */
	return f1_half(k, opc, rand_, sqn, amf, consts, mac_s, 1);
}

int tw_milenage_f2345(const uint8_t k[static 16], const uint8_t opc[static 16],
		      const uint8_t rand_[static 16], const struct tw_milenage_consts *consts,
		      uint8_t res[static 8], uint8_t ck[static 16], uint8_t ik[static 16],
		      uint8_t ak[static 6])
{
	uint8_t o[5][16];
	int err;

	err = pick_consts(&consts);
	if (err != TW_OK)
		goto out;
	err = outs(o, TW_MILENAGE_OUT2 | TW_MILENAGE_OUT3 | TW_MILENAGE_OUT4, k, opc,
		   rand_, NULL, NULL, consts);
	if (err != TW_OK)
		goto out;
	/* f2 = OUT2[64..127], f3 = OUT3, f4 = OUT4, f5 = OUT2[0..47] */
	memcpy(res, o[1] + 8, 8);
	memcpy(ck, o[2], 16);
	memcpy(ik, o[3], 16);
	memcpy(ak, o[1], 6);
out:
	tw_wipe(o, sizeof(o));
	return err;
}

int tw_milenage_f5star(const uint8_t k[static 16], const uint8_t opc[static 16],
		       const uint8_t rand_[static 16], const struct tw_milenage_consts *consts,
		       uint8_t ak_star[static 6])
{
	uint8_t o[5][16];
	int err;

	err = pick_consts(&consts);
	if (err != TW_OK)
		goto out;
	err = outs(o, TW_MILENAGE_OUT5, k, opc, rand_, NULL, NULL, consts);
	if (err != TW_OK)
		goto out;
	/* f5* = OUT5[0..47] */
	memcpy(ak_star, o[4], 6);
out:
	tw_wipe(o, sizeof(o));
	return err;
}

static int portable_generate(struct tw_milenage_vec *v, const uint8_t *k,
			     const uint8_t *opc, const uint8_t *rand_,
			     const uint8_t *sqn, const uint8_t *amf,
			     const struct tw_milenage_consts *c)
{
	uint8_t o[5][16];
	int err;

	err = portable_outs(o, 0x0f, k, opc, rand_, sqn, amf, c);
	if (err != TW_OK)
		goto out;
	memcpy(v->mac_a, o[0], 8);
	memcpy(v->res, o[1] + 8, 8);
	memcpy(v->ck, o[2], 16);
	memcpy(v->ik, o[3], 16);
	memcpy(v->ak, o[1], 6);
out:
	tw_wipe(o, sizeof(o));
	return err;
}

int tw_milenage_generate(const uint8_t k[static 16], const uint8_t opc[static 16],
			 const uint8_t rand_[static 16], const uint8_t sqn[static 6],
			 const uint8_t amf[static 2], const struct tw_milenage_consts *consts,
			 struct tw_milenage_vec *out)
{
	int err;

	/* The hot path: the default constants need no check, and one read of
	 * the features picks the kernel (tw_cpu_restrict may change them
	 * between calls, so they are read each time). */
	if (consts == NULL || consts == &tw_milenage_default_consts) {
		uint32_t f = tw_cpu_features();

		if ((f & MIL_VAES1) == MIL_VAES1) {
			tw_milenage_vaes1_generate(out, k, opc, rand_, sqn, amf);
			return TW_OK;
		}
		consts = &tw_milenage_default_consts;
		if ((f & MIL_NI) == MIL_NI) {
			tw_milenage_ni_generate(out, k, opc, rand_, sqn, amf, consts);
			return TW_OK;
		}
		return portable_generate(out, k, opc, rand_, sqn, amf, consts);
	}
	err = tw_milenage_consts_check(consts);
	if (err != TW_OK)
		return err;
	if (use_ni()) {
		tw_milenage_ni_generate(out, k, opc, rand_, sqn, amf, consts);
		return TW_OK;
	}
	return portable_generate(out, k, opc, rand_, sqn, amf, consts);
}

int tw_milenage_generate_batch(const struct tw_milenage_batch_in *in,
			       struct tw_milenage_vec *out, size_t n,
			       const struct tw_milenage_consts *consts)
{
	int err = pick_consts(&consts);

	if (err != TW_OK)
		return err;
	if (n == 0)
		return TW_OK;
	if (in == NULL || out == NULL)
		return TW_ERR_INVAL;
	if (tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512 | TW_CPU_AESNI | TW_CPU_SSE41)) {
		tw_milenage_vaes_batch(in, out, n, consts);
		return TW_OK;
	}
	if (use_ni()) {
		tw_milenage_ni_batch(in, out, n, consts);
		return TW_OK;
	}
	for (size_t i = 0; i < n; i++) {
		err = portable_generate(&out[i], in[i].k, in[i].opc, in[i].rand_,
					in[i].sqn, in[i].amf, consts);
		if (err != TW_OK)
			return err;
	}
	return TW_OK;
}
