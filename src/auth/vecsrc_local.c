/*
 * twag — the local vector source (HSS/AuC role), 3GPP TS 33.102 V17.0.0
 * §6.3.2 (vectors), §6.3.5 + Annex C (resynchronisation), §6.8.1.2 (GSM
 * triplets of a USIM subscriber); COMP128 for SIM subscribers.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/comp128.h"
#include "twag/gsm.h"
#include "twag/milenage.h"
#include "twag/sqn.h"
#include "twag/tuak.h"
#include "twag/vecsrc.h"

/* A key set is usable for AKA if its algorithm and the aka member agree. */
static bool keys_are_aka(const struct tw_sub_keys *kk)
{
	return (kk->alg == TW_SUB_MILENAGE && kk->aka.alg == TW_AKA_MILENAGE) ||
	       (kk->alg == TW_SUB_TUAK && kk->aka.alg == TW_AKA_TUAK);
}

static int comp128_version(enum tw_sub_alg alg)
{
	switch (alg) {
	case TW_SUB_COMP128V1: return 1;
	case TW_SUB_COMP128V2: return 2;
	case TW_SUB_COMP128V3: return 3;
	default: return 0;
	}
}

int tw_sub_keys_milenage(struct tw_sub_keys *kk, const uint8_t k[static 16],
			 const uint8_t opc[static 16], const struct tw_milenage_consts *consts)
{
	if (kk == NULL || k == NULL || opc == NULL)
		return TW_ERR_INVAL;
	if (consts != NULL && tw_milenage_consts_check(consts) != TW_OK)
		return TW_ERR_RANGE;
	memset(kk, 0, sizeof(*kk));
	kk->alg = TW_SUB_MILENAGE;
	kk->aka.alg = TW_AKA_MILENAGE;
	memcpy(kk->aka.u.milenage.k, k, 16);
	memcpy(kk->aka.u.milenage.opc, opc, 16);
	kk->aka.u.milenage.consts = consts;
	return TW_OK;
}

int tw_sub_keys_tuak(struct tw_sub_keys *kk, const struct tw_tuak_params *p)
{
	int rc;

	if (kk == NULL || p == NULL)
		return TW_ERR_INVAL;
	rc = tw_tuak_params_check(p);
	if (rc != TW_OK)
		return rc;
	/* TS 33.102 §6.3.7 (lengths of the AKA parameters): MAC-A/MAC-S are
	 * 64 bits, CK and IK 128 bits, RES 32..128 bits. */
	if (p->mac_bits != 64 || p->ck_bits != 128 || p->ik_bits != 128 || p->res_bits > 128)
		return TW_ERR_UNSUPPORTED;
	memset(kk, 0, sizeof(*kk));
	kk->alg = TW_SUB_TUAK;
	kk->aka.alg = TW_AKA_TUAK;
	kk->aka.u.tuak = *p;
	return TW_OK;
}

int tw_sub_keys_comp128(struct tw_sub_keys *kk, unsigned version, const uint8_t ki[static 16])
{
	if (kk == NULL || ki == NULL)
		return TW_ERR_INVAL;
	if (version < 1 || version > 3)
		return TW_ERR_UNSUPPORTED;
	memset(kk, 0, sizeof(*kk));
	kk->alg = (enum tw_sub_alg)(TW_SUB_COMP128V1 + (int)version - 1);
	memcpy(kk->ki, ki, 16);
	return TW_OK;
}

/* TS 23.003 §2.2: IMSI = MCC || MNC || MSIN, at most 15 decimal digits. */
static bool imsi_ok(const char *imsi, size_t *len)
{
	size_t n = 0;

	if (imsi == NULL)
		return false;
	while (n <= TW_IMSI_MAX_LEN && imsi[n] != '\0') {
		if (imsi[n] < '0' || imsi[n] > '9')
			return false;
		n++;
	}
	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN)
		return false;
	*len = n;
	return true;
}

static bool keys_ok(const struct tw_sub_keys *kk)
{
	return keys_are_aka(kk) || comp128_version(kk->alg) != 0;
}

int tw_subscriber_init(struct tw_subscriber *s, const char *imsi,
		       const struct tw_sub_keys *keys, const uint8_t amf[static 2])
{
	size_t n;
	int rc;

	if (s == NULL || keys == NULL || amf == NULL || !imsi_ok(imsi, &n) || !keys_ok(keys))
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	memcpy(s->imsi, imsi, n);
	s->imsi_len = n;
	s->keys = *keys;
	memcpy(s->amf, amf, 2);
	rc = tw_sqn_he_init(&s->sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1, 0);
	if (rc != TW_OK)
		tw_wipe(s, sizeof(*s));
	return rc;
}

static int vec_aka(struct tw_subscriber *s, const uint8_t rand_[static 16], bool sep,
		   struct tw_eap_aka_vec *out)
{
	struct tw_aka_vector v;
	struct tw_sqn_he saved;
	uint8_t sqn[6], amf[2];
	int rc;

	if (out == NULL)
		return TW_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	if (s == NULL || rand_ == NULL)
		return TW_ERR_INVAL;
	if (!keys_are_aka(&s->keys))
		return comp128_version(s->keys.alg) != 0 ? TW_ERR_UNSUPPORTED : TW_ERR_INVAL;

	saved = s->sqn;
	rc = tw_sqn_he_next(&s->sqn, sqn);
	if (rc != TW_OK)
		return rc;
	memcpy(amf, s->amf, 2);
	/* TS 33.102 Annex F: the separation bit is AMF bit 0; TS 33.402 §6.2
	 * wants it set in vectors used for EAP-AKA'. */
	if (sep)
		amf[0] |= 0x80;
	/* §6.3.2: MAC-A = f1(SQN, RAND, AMF), XRES = f2, CK = f3, IK = f4,
	 * AK = f5; AUTN = SQN ^ AK || AMF || MAC-A. */
	rc = tw_aka_generate(&s->keys.aka, rand_, sqn, amf, &v);
	if (rc != TW_OK) {
		s->sqn = saved; /* no vector left: the SQN was not used */
		goto out;
	}
	if (v.xres_len < 4 || v.xres_len > sizeof(out->xres)) {
		s->sqn = saved;
		rc = TW_ERR_UNSUPPORTED;
		goto out;
	}
	memcpy(out->rand_, rand_, 16);
	memcpy(out->autn, v.autn, 16);
	memcpy(out->xres, v.xres, v.xres_len);
	out->xres_len = v.xres_len;
	memcpy(out->ck, v.ck, 16);
	memcpy(out->ik, v.ik, 16);
out:
	tw_wipe(&v, sizeof(v));
	if (rc != TW_OK)
		tw_wipe(out, sizeof(*out));
	return rc;
}

int tw_vecsrc_aka(struct tw_subscriber *s, const uint8_t rand_[static 16],
		  struct tw_eap_aka_vec *out)
{
	return vec_aka(s, rand_, false, out);
}

int tw_vecsrc_aka_prime(struct tw_subscriber *s, const uint8_t rand_[static 16],
			struct tw_eap_aka_vec *out)
{
	return vec_aka(s, rand_, true, out);
}

int tw_vecsrc_resync(struct tw_subscriber *s, const uint8_t rand_[static 16],
		     const uint8_t auts[static 14])
{
	uint8_t sqn_ms[6];
	int rc;

	if (s == NULL || rand_ == NULL || auts == NULL)
		return TW_ERR_INVAL;
	if (!keys_are_aka(&s->keys))
		return comp128_version(s->keys.alg) != 0 ? TW_ERR_UNSUPPORTED : TW_ERR_INVAL;
	/* §6.3.5: SQN_MS = (SQN_MS ^ AK*) ^ f5*(RAND); XMAC-S = f1*(SQN_MS,
	 * RAND, AMF* = 0) must equal MAC-S (constant time, in aka.c) before
	 * SQN_MS may touch SQN_HE. */
	rc = tw_aka_auts_verify(&s->keys.aka, rand_, auts, sqn_ms);
	if (rc != TW_OK)
		goto out;
	rc = tw_sqn_he_resync(&s->sqn, sqn_ms);
out:
	tw_wipe(sqn_ms, sizeof(sqn_ms));
	return rc;
}

int tw_sub_keys_gsm(const struct tw_sub_keys *kk, const uint8_t rand_[static 16],
		    uint8_t sres[static 4], uint8_t kc[static 8])
{
	uint8_t res[16], ck[16], ik[16], ak[6];
	size_t res_len = 0;
	int rc, ver;

	if (kk == NULL || rand_ == NULL || sres == NULL || kc == NULL)
		return TW_ERR_INVAL;
	ver = comp128_version(kk->alg);
	if (ver != 0)
		return tw_comp128((unsigned)ver, kk->ki, rand_, sres, kc);
	if (!keys_are_aka(kk))
		return TW_ERR_INVAL;

	/* §6.8.1.2: a USIM in a GSM context computes RES, CK, IK (f2, f3, f4
	 * depend on K and RAND only, so no SQN is consumed) and converts:
	 * SRES = c2(RES), Kc = c3(CK, IK). */
	if (kk->alg == TW_SUB_MILENAGE) {
		rc = tw_milenage_f2345(kk->aka.u.milenage.k, kk->aka.u.milenage.opc, rand_,
				       kk->aka.u.milenage.consts, res, ck, ik, ak);
		res_len = TW_MILENAGE_RES_LEN;
	} else {
		const struct tw_tuak_params *p = &kk->aka.u.tuak;

		if (p->res_bits > 128 || p->ck_bits != 128 || p->ik_bits != 128) {
			rc = TW_ERR_UNSUPPORTED;
			goto out;
		}
		rc = tw_tuak_f2345(p, rand_, res, ck, ik, ak);
		res_len = p->res_bits / 8u;
	}
	if (rc != TW_OK)
		goto out;
	rc = tw_gsm_c2(sres, res, res_len);
	if (rc != TW_OK)
		goto out;
	tw_gsm_c3(kc, ck, ik);
out:
	tw_wipe(res, sizeof(res));
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	tw_wipe(ak, sizeof(ak));
	return rc;
}

int tw_vecsrc_sim(struct tw_subscriber *s, const uint8_t rand_[static 16],
		  struct tw_eap_sim_triplet *out)
{
	int rc;

	if (out == NULL)
		return TW_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	if (s == NULL || rand_ == NULL)
		return TW_ERR_INVAL;
	rc = tw_sub_keys_gsm(&s->keys, rand_, out->sres, out->kc);
	if (rc != TW_OK) {
		tw_wipe(out, sizeof(*out));
		return rc;
	}
	memcpy(out->rand_, rand_, 16);
	return TW_OK;
}

int tw_vecsrc_sim_many(struct tw_subscriber *s, const uint8_t rands[][16], unsigned n,
		       struct tw_eap_sim_triplet *out)
{
	uint8_t sres[3][4], kc[3][8];
	int rc = TW_OK, ver;

	if (out == NULL || n < 1 || n > 3)
		return TW_ERR_INVAL;
	memset(out, 0, n * sizeof(*out));
	if (s == NULL || rands == NULL)
		return TW_ERR_INVAL;
	ver = comp128_version(s->keys.alg);
	if (ver == 0) {
		for (unsigned i = 0; rc == TW_OK && i < n; i++)
			rc = tw_vecsrc_sim(s, rands[i], &out[i]);
		goto out;
	}
	rc = tw_comp128_many((unsigned)ver, s->keys.ki, n, rands, sres, kc);
	for (unsigned i = 0; rc == TW_OK && i < n; i++) {
		memcpy(out[i].rand_, rands[i], 16);
		memcpy(out[i].sres, sres[i], 4);
		memcpy(out[i].kc, kc[i], 8);
	}
out:
	if (rc != TW_OK)
		tw_wipe(out, n * sizeof(*out));
	tw_wipe(sres, sizeof(sres));
	tw_wipe(kc, sizeof(kc));
	return rc;
}
