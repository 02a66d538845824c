/*
 * twag — UMTS AKA vectors, AUTN and AUTS (3GPP TS 33.102 V17.0.0 §6.3),
 * on the subscriber's algorithm set: Milenage (TS 35.206) or TUAK
 * (TS 35.231). The f-functions are reached through the four helpers below,
 * so AUTN/AUTS logic is written once for both.
 */
#include <string.h>

#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/milenage.h"
#include "twag/tuak.h"

/* TS 33.102 §6.3.3: "the AMF used to calculate MAC-S assumes a dummy value
 * of all zeros". */
static const uint8_t amf_star[2] = { 0x00, 0x00 };

/*
 * TS 33.102 §6.3.2 fixes AUTN's MAC-A at 64 bits and CK/IK at 128 bits, and
 * allows RES of 32..128 bits; TUAK's wider outputs (TS 35.231 §6) have no
 * place in AKA, so such a parameter set is refused here.
 */
static int check_sub(const struct tw_aka_subscriber *s)
{
	if (s == NULL)
		return TW_ERR_INVAL;
	switch (s->alg) {
	case TW_AKA_MILENAGE:
		return TW_OK;
	case TW_AKA_TUAK: {
		const struct tw_tuak_params *p = &s->u.tuak;
		int err = tw_tuak_params_check(p);

		if (err != TW_OK)
			return err;
		if (p->mac_bits != 64 || p->ck_bits != 128 || p->ik_bits != 128 ||
		    p->res_bits > 128)
			return TW_ERR_UNSUPPORTED;
		return TW_OK;
	}
	default:
		return TW_ERR_INVAL;
	}
}

/* MAC-A = f1(K, SQN, RAND, AMF) */
static int f1(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
	      const uint8_t sqn[static 6], const uint8_t amf[static 2], uint8_t mac[static 8])
{
	if (s->alg == TW_AKA_TUAK)
		return tw_tuak_f1(&s->u.tuak, rand_, sqn, amf, mac);
	return tw_milenage_f1(s->u.milenage.k, s->u.milenage.opc, rand_, sqn, amf,
			      s->u.milenage.consts, mac);
}

/* MAC-S = f1*(K, SQN_MS, RAND, AMF*) */
static int f1star(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		  const uint8_t sqn[static 6], const uint8_t amf[static 2], uint8_t mac[static 8])
{
	if (s->alg == TW_AKA_TUAK)
		return tw_tuak_f1star(&s->u.tuak, rand_, sqn, amf, mac);
	return tw_milenage_f1star(s->u.milenage.k, s->u.milenage.opc, rand_, sqn, amf,
				  s->u.milenage.consts, mac);
}

/* RES = f2, CK = f3, IK = f4, AK = f5 (all from RAND) */
static int f2345(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		 uint8_t res[static TW_AKA_RES_MAX], size_t *res_len, uint8_t ck[static 16],
		 uint8_t ik[static 16], uint8_t ak[static 6])
{
	memset(res, 0, TW_AKA_RES_MAX);
	if (s->alg == TW_AKA_TUAK) {
		*res_len = s->u.tuak.res_bits / 8u;
		return tw_tuak_f2345(&s->u.tuak, rand_, res, ck, ik, ak);
	}
	*res_len = TW_MILENAGE_RES_LEN;
	return tw_milenage_f2345(s->u.milenage.k, s->u.milenage.opc, rand_,
				 s->u.milenage.consts, res, ck, ik, ak);
}

/* AK* = f5*(K, RAND) */
static int f5star(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		  uint8_t ak_star[static 6])
{
	if (s->alg == TW_AKA_TUAK)
		return tw_tuak_f5star(&s->u.tuak, rand_, ak_star);
	return tw_milenage_f5star(s->u.milenage.k, s->u.milenage.opc, rand_,
				  s->u.milenage.consts, ak_star);
}

int tw_aka_autn_build(uint8_t autn[static 16], const uint8_t sqn[static 6],
		      const uint8_t ak[static 6], const uint8_t amf[static 2],
		      const uint8_t mac_a[static 8])
{
	/* AUTN = SQN ^ AK || AMF || MAC-A */
	tw_xor(autn, sqn, ak, 6);
	memcpy(autn + 6, amf, 2);
	memcpy(autn + 8, mac_a, 8);
	return TW_OK;
}

int tw_aka_generate(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		    const uint8_t sqn[static 6], const uint8_t amf[static 2],
		    struct tw_aka_vector *v)
{
	struct tw_milenage_vec m;
	int err = check_sub(s);

	if (err != TW_OK)
		return err;
	if (v == NULL)
		return TW_ERR_INVAL;
	if (s->alg == TW_AKA_TUAK) {
		uint8_t mac_a[8];

		memcpy(v->rand_, rand_, 16);
		err = f2345(s, rand_, v->xres, &v->xres_len, v->ck, v->ik, v->ak);
		if (err == TW_OK)
			err = f1(s, rand_, sqn, amf, mac_a);
		if (err == TW_OK)
			err = tw_aka_autn_build(v->autn, sqn, v->ak, amf, mac_a);
		tw_wipe(mac_a, sizeof(mac_a));
		if (err != TW_OK)
			tw_wipe(v, sizeof(*v));
		return err;
	}
	/* Milenage: one fused call computes f1 and f2..f5 from one TEMP.
	 * MAC-A = f1, XRES = f2, CK = f3, IK = f4, AK = f5 */
	err = tw_milenage_generate(s->u.milenage.k, s->u.milenage.opc, rand_, sqn, amf,
				   s->u.milenage.consts, &m);
	if (err != TW_OK)
		goto out;
	memcpy(v->rand_, rand_, 16);
	memset(v->xres, 0, sizeof(v->xres));
	memcpy(v->xres, m.res, 8);
	v->xres_len = 8;
	memcpy(v->ck, m.ck, 16);
	memcpy(v->ik, m.ik, 16);
	memcpy(v->ak, m.ak, 6);
	err = tw_aka_autn_build(v->autn, sqn, m.ak, amf, m.mac_a);
out:
	tw_wipe(&m, sizeof(m));
	return err;
}

int tw_aka_autn_verify(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		       const uint8_t autn[static 16], uint8_t sqn_out[static 6],
		       uint8_t res[static TW_AKA_RES_MAX], size_t *res_len,
		       uint8_t ck[static 16], uint8_t ik[static 16])
{
	uint8_t ak[6], sqn[6], xmac_a[8], xres[TW_AKA_RES_MAX], xck[16], xik[16];
	size_t xres_len = 0;
	int err = check_sub(s);

	if (err != TW_OK)
		return err;
	if (res_len == NULL)
		return TW_ERR_INVAL;
	/* AK = f5(RAND) (with RES = f2, CK = f3, IK = f4 from the same TEMP) */
	err = f2345(s, rand_, xres, &xres_len, xck, xik, ak);
	if (err != TW_OK)
		goto out;
	/* SQN = (SQN ^ AK) ^ AK */
	tw_xor(sqn, autn, ak, 6);
	/* XMAC-A = f1(SQN, RAND, AMF), compared with MAC-A in constant time */
	err = f1(s, rand_, sqn, autn + 6, xmac_a);
	if (err != TW_OK)
		goto out;
	if (!tw_ct_eq(xmac_a, autn + 8, 8)) {
		err = TW_ERR_AUTH;
		goto out;
	}
	/* MAC-A verified: SQN is the network's authenticated counter, which
	 * the USIM now acts on (Annex C: RES or AUTS). */
	tw_ct_declassify(sqn, 6);
	memcpy(sqn_out, sqn, 6);
	memcpy(res, xres, TW_AKA_RES_MAX);
	*res_len = xres_len;
	memcpy(ck, xck, 16);
	memcpy(ik, xik, 16);
out:
	if (err != TW_OK) {
		/* Outputs are never partially valid. */
		memset(sqn_out, 0, 6);
		tw_wipe(res, TW_AKA_RES_MAX);
		*res_len = 0;
		tw_wipe(ck, 16);
		tw_wipe(ik, 16);
	}
	tw_wipe(ak, sizeof(ak));
	tw_wipe(sqn, sizeof(sqn));
	tw_wipe(xmac_a, sizeof(xmac_a));
	tw_wipe(xres, sizeof(xres));
	tw_wipe(xck, sizeof(xck));
	tw_wipe(xik, sizeof(xik));
	return err;
}

int tw_aka_auts_build(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		      const uint8_t sqn_ms[static 6], uint8_t auts[static 14])
{
	uint8_t ak_star[6], mac_s[8];
	int err = check_sub(s);

	if (err != TW_OK)
		return err;
	/* AK* = f5*(RAND) */
	err = f5star(s, rand_, ak_star);
	if (err != TW_OK)
		goto out;
	/* MAC-S = f1*(SQN_MS, RAND, AMF*) */
	err = f1star(s, rand_, sqn_ms, amf_star, mac_s);
	if (err != TW_OK)
		goto out;
	/* AUTS = SQN_MS ^ AK* || MAC-S */
	tw_xor(auts, sqn_ms, ak_star, 6);
	memcpy(auts + 6, mac_s, 8);
out:
	tw_wipe(ak_star, sizeof(ak_star));
	tw_wipe(mac_s, sizeof(mac_s));
	return err;
}

int tw_aka_auts_verify(const struct tw_aka_subscriber *s, const uint8_t rand_[static 16],
		       const uint8_t auts[static 14], uint8_t sqn_ms_out[static 6])
{
	uint8_t ak_star[6], sqn_ms[6], xmac_s[8];
	int err = check_sub(s);

	if (err != TW_OK)
		return err;
	/* SQN_MS = (SQN_MS ^ AK*) ^ f5*(RAND) */
	err = f5star(s, rand_, ak_star);
	if (err != TW_OK)
		goto out;
	tw_xor(sqn_ms, auts, ak_star, 6);
	/* XMAC-S = f1*(SQN_MS, RAND, AMF*), compared in constant time */
	err = f1star(s, rand_, sqn_ms, amf_star, xmac_s);
	if (err != TW_OK)
		goto out;
	if (!tw_ct_eq(xmac_s, auts + 6, 8)) {
		err = TW_ERR_AUTH;
		goto out;
	}
	memcpy(sqn_ms_out, sqn_ms, 6);
out:
	if (err != TW_OK)
		memset(sqn_ms_out, 0, 6);
	tw_wipe(ak_star, sizeof(ak_star));
	tw_wipe(sqn_ms, sizeof(sqn_ms));
	tw_wipe(xmac_s, sizeof(xmac_s));
	return err;
}
