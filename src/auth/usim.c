/*
 * twag — the simulated USIM/SIM (3GPP TS 33.102 V17.0.0 §6.3.3 with the
 * Annex C.2 SQN array; §6.8.1.2 for GSM contexts).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/sqn.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

static bool usim_keys_are_aka(const struct tw_sub_keys *kk)
{
	return (kk->alg == TW_SUB_MILENAGE && kk->aka.alg == TW_AKA_MILENAGE) ||
	       (kk->alg == TW_SUB_TUAK && kk->aka.alg == TW_AKA_TUAK);
}

static bool usim_keys_are_sim(const struct tw_sub_keys *kk)
{
	return kk->alg == TW_SUB_COMP128V1 || kk->alg == TW_SUB_COMP128V2 ||
	       kk->alg == TW_SUB_COMP128V3;
}

int tw_usim_init(struct tw_usim *u, const char *imsi, const struct tw_sub_keys *keys)
{
	size_t n = 0;
	int rc;

	if (u == NULL || imsi == NULL || keys == NULL)
		return TW_ERR_INVAL;
	if (!usim_keys_are_aka(keys) && !usim_keys_are_sim(keys))
		return TW_ERR_INVAL;
	/* TS 23.003 §2.2: 15 digits at most (5 as a sanity floor). */
	while (n <= TW_IMSI_MAX_LEN && imsi[n] != '\0') {
		if (imsi[n] < '0' || imsi[n] > '9')
			return TW_ERR_INVAL;
		n++;
	}
	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN)
		return TW_ERR_INVAL;
	memset(u, 0, sizeof(*u));
	memcpy(u->imsi, imsi, n);
	u->imsi_len = n;
	u->keys = *keys;
	rc = tw_sqn_ms_init(&u->sqn, TW_SQN_IND_BITS_DEFAULT, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE);
	if (rc != TW_OK)
		tw_wipe(u, sizeof(*u));
	return rc;
}

int tw_usim_init_from_subscriber(struct tw_usim *u, const struct tw_subscriber *s)
{
	int rc;

	if (u == NULL || s == NULL)
		return TW_ERR_INVAL;
	rc = tw_usim_init(u, s->imsi, &s->keys);
	if (rc != TW_OK)
		return rc;
	/* Both ends must split SQN into SEQ || IND the same way (C.1.1). */
	rc = tw_sqn_ms_init(&u->sqn, s->sqn.ind_bits, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE);
	if (rc != TW_OK)
		tw_wipe(u, sizeof(*u));
	return rc;
}

int tw_usim_authenticate(struct tw_usim *u, const uint8_t rand_[static 16],
			 const uint8_t autn[static 16], uint8_t res[static 16], size_t *res_len,
			 uint8_t ck[static 16], uint8_t ik[static 16], uint8_t auts[static 14])
{
	uint8_t sqn[6], sqn_ms[6], xres[TW_AKA_RES_MAX], xck[16], xik[16];
	size_t xres_len = 0;
	int rc;

	if (res == NULL || res_len == NULL || ck == NULL || ik == NULL || auts == NULL)
		return TW_ERR_INVAL;
	memset(res, 0, 16);
	*res_len = 0;
	memset(ck, 0, 16);
	memset(ik, 0, 16);
	memset(auts, 0, 14);
	if (u == NULL || rand_ == NULL || autn == NULL)
		return TW_ERR_INVAL;
	if (!usim_keys_are_aka(&u->keys))
		return usim_keys_are_sim(&u->keys) ? TW_ERR_UNSUPPORTED : TW_ERR_INVAL;

	/* §6.3.3: AK = f5(RAND), SQN = (SQN ^ AK) ^ AK, XMAC-A = f1(SQN, RAND,
	 * AMF) == MAC-A (constant time in aka.c). The MAC comes first: an
	 * unauthenticated SQN must not select the AUTS answer. */
	rc = tw_aka_autn_verify(&u->keys.aka, rand_, autn, sqn, xres, &xres_len, xck, xik);
	if (rc != TW_OK)
		goto out;
	if (xres_len < 4 || xres_len > 16) {
		rc = TW_ERR_UNSUPPORTED;
		goto out;
	}

	/* §6.3.3 then Annex C.2: is SQN in the correct range? If not, AUTS =
	 * SQN_MS ^ AK* || MAC-S with SQN_MS the highest accepted (C.2), and
	 * the array stays as it was. */
	rc = tw_sqn_ms_check(&u->sqn, sqn);
	if (rc == TW_ERR_SYNC) {
		tw_sqn_ms_get(&u->sqn, sqn_ms);
		rc = tw_aka_auts_build(&u->keys.aka, rand_, sqn_ms, auts);
		if (rc == TW_OK)
			rc = TW_ERR_SYNC;
		else
			memset(auts, 0, 14);
		goto out;
	}
	if (rc != TW_OK)
		goto out;
	rc = tw_sqn_ms_accept(&u->sqn, sqn);
	if (rc != TW_OK)
		goto out;
	memcpy(res, xres, xres_len);
	*res_len = xres_len;
	memcpy(ck, xck, 16);
	memcpy(ik, xik, 16);
out:
	tw_wipe(xres, sizeof(xres));
	tw_wipe(xck, sizeof(xck));
	tw_wipe(xik, sizeof(xik));
	tw_wipe(sqn, sizeof(sqn));
	tw_wipe(sqn_ms, sizeof(sqn_ms));
	return rc;
}

int tw_usim_gsm(struct tw_usim *u, const uint8_t rand_[static 16], uint8_t sres[static 4],
		uint8_t kc[static 8])
{
	int rc;

	if (u == NULL || rand_ == NULL || sres == NULL || kc == NULL)
		return TW_ERR_INVAL;
	/* A SIM: A3/A8 (COMP128); a USIM in a GSM context: c2/c3 (§6.8.1.2). */
	rc = tw_sub_keys_gsm(&u->keys, rand_, sres, kc);
	if (rc != TW_OK) {
		memset(sres, 0, 4);
		memset(kc, 0, 8);
	}
	return rc;
}
