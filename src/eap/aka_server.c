/*
 * twag — EAP-AKA (RFC 4187, January 2006) and EAP-AKA' (RFC 9048, October
 * 2021) server engine: identity rounds, full authentication, AT_KDF /
 * AT_KDF_INPUT / AT_BIDDING, result indications, resynchronisation, fast
 * re-authentication, pseudonym and re-auth id rotation.
 */
#include <stdbool.h>
#include <string.h>

#include "../crypto/sha_internal.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/kdf.h"
#include "twag/nai.h"
#include "twag/vecsrc.h"

enum {
	S_INIT = 0,
	S_WAIT_EAP_ID,    /* EAP-Request/Identity sent */
	S_WAIT_ID,        /* AKA-Identity sent */
	S_WAIT_VECTOR,
	S_WAIT_CHALLENGE, /* AKA-Challenge sent */
	S_WAIT_REAUTH,    /* AKA-Reauthentication sent */
	S_WAIT_NOTIF_OK,  /* success notification sent (result indication) */
	S_WAIT_NOTIF_FAIL,/* failure notification sent */
	S_DONE_OK,
	S_DONE_FAIL,
};

static uint16_t reauth_limit(const struct tw_eap_server_cfg *cfg)
{
	return cfg->reauth_limit ? cfg->reauth_limit : TW_EAP_DEFAULT_REAUTH_LIMIT;
}

int tw_aka_server_init(struct tw_aka_server_ctx *s,
		       const struct tw_eap_server_cfg *cfg, uint8_t method,
		       uint8_t first_id)
{
	if (s == NULL || cfg == NULL)
		return TW_ERR_INVAL;
	if (!((method == TW_EAP_TYPE_AKA && cfg->enable_aka) ||
	      (method == TW_EAP_TYPE_AKA_PRIME && cfg->enable_aka_prime)))
		return TW_ERR_INVAL;
	/* RFC 9048 §3.1: AT_KDF_INPUT carries a non-empty network name */
	if (method == TW_EAP_TYPE_AKA_PRIME &&
	    (cfg->network_name == NULL || cfg->network_name_len == 0 ||
	     cfg->network_name_len > 255 * 4 - 4))
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->method = method;
	s->eap_id = first_id;
	s->ids.method = method;
	return tw_simaka_checkcode_init(&s->checkcode, method);
}

/* EAP-Failure answers the outstanding request's Identifier (RFC 3748 §4.2). */
static int fail_now(struct tw_aka_server_ctx *s, uint8_t *out, size_t max,
		    size_t *out_len)
{
	int rc = tw_eap_result(out, max, TW_EAP_FAILURE, s->eap_id, out_len);

	s->state = S_DONE_FAIL;
	tw_wipe(&s->keys, sizeof(s->keys));
	return rc == TW_OK ? TW_EAP_REJECT : rc;
}

static int success_now(struct tw_aka_server_ctx *s, uint8_t *out, size_t max,
		       size_t *out_len)
{
	int rc = tw_eap_result(out, max, TW_EAP_SUCCESS, s->eap_id, out_len);

	if (rc != TW_OK)
		return rc;
	s->state = S_DONE_OK;
	return TW_EAP_ACCEPT;
}

/* RFC 4187 §6.3.2 / §6.1: an error in a response is answered with
 * EAP-Request/AKA-Notification "General failure" (16384: S = 0, P = 1, so
 * no AT_MAC), and the response to it with EAP-Failure. */
static int notify_fail(struct tw_aka_server_ctx *s, uint8_t *out, size_t max,
		       size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	s->eap_id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->eap_id, s->method,
			     TW_SIMAKA_NOTIFICATION);
	tw_simaka_put_fixed(&b, TW_AT_NOTIFICATION,
			    TW_SIMAKA_NOTIF_GENERAL_FAILURE, NULL, 0);
	rc = tw_simaka_finish(&b, out_len);
	if (rc != TW_OK)
		return rc;
	s->state = S_WAIT_NOTIF_FAIL;
	tw_wipe(&s->keys, sizeof(s->keys));
	return TW_EAP_SEND;
}

/* RFC 4187 §9.2: EAP-Request/AKA-Identity with one AT_*_ID_REQ. */
static int ask_identity(struct tw_aka_server_ctx *s, uint8_t attr, uint8_t *out,
			size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	s->eap_id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->eap_id, s->method,
			     TW_SIMAKA_IDENTITY);
	tw_simaka_put_fixed(&b, attr, 0, NULL, 0);
	rc = tw_simaka_finish(&b, out_len);
	if (rc != TW_OK)
		return rc;
	/* RFC 4187 §10.13 / RFC 9048: AT_CHECKCODE covers every
	 * AKA-Identity request and response */
	tw_simaka_checkcode_add(&s->checkcode, out, *out_len);
	s->ids.asked = attr;
	s->state = S_WAIT_ID;
	return TW_EAP_SEND;
}

static int mint(struct tw_aka_server_ctx *s, uint8_t kind, bool with_realm,
		uint8_t *id, size_t max, size_t *len)
{
	return tw_eap_mint_id(s->cfg, s->method, kind, with_realm, s->ids.imsi,
			      s->ids.imsi_len, id, max, len);
}

/* RFC 4187 §5.4, RFC 9048 §3.3: EAP-Request/AKA-Reauthentication with
 * AT_IV, AT_ENCR_DATA{AT_COUNTER, AT_NONCE_S, AT_NEXT_REAUTH_ID}, AT_MAC. */
static int build_reauth(struct tw_aka_server_ctx *s, uint8_t *out, size_t max,
			size_t *out_len)
{
	const struct tw_eap_identity_ops *ops = s->cfg->ops;
	struct tw_eap_reauth_state *st = &s->ids.reauth;
	struct tw_simaka_builder b;
	uint8_t iv[16];
	int rc;

	rc = tw_simaka_mac_init(&s->mac, s->method, st->k_aut, st->k_aut_len);
	if (rc != TW_OK)
		goto out;
	s->counter = (uint16_t)(st->counter + 1);
	rc = ops->random(ops->arg, s->nonce_s, sizeof(s->nonce_s));
	if (rc == TW_OK)
		rc = ops->random(ops->arg, iv, sizeof(iv));
	if (rc != TW_OK)
		goto out;
	/* RFC 4187 §7 / RFC 9048 §3.3: MSK, EMSK from the re-auth Identity,
	 * counter and NONCE_S under MK (AKA) or K_re (AKA') */
	if (s->method == TW_EAP_TYPE_AKA_PRIME)
		rc = tw_eap_aka_prime_reauth(s->keys.msk, s->keys.emsk, st->k_re,
					     s->identity, s->identity_len,
					     s->counter, s->nonce_s);
	else
		rc = tw_eap_sim_reauth(s->keys.msk, s->keys.emsk, st->mk,
				       s->identity, s->identity_len, s->counter,
				       s->nonce_s);
	if (rc != TW_OK)
		goto out;
	/* another re-auth id only while the limit allows one more round */
	s->have_next_reauth = false;
	if (s->counter < reauth_limit(s->cfg) && ops->reauth_store != NULL &&
	    mint(s, TW_NAI_REAUTH, true, s->next_reauth, sizeof(s->next_reauth),
		 &s->next_reauth_len) == TW_OK) {
		s->have_next_reauth = true;
		s->next_state = *st;
		s->next_state.counter = s->counter;
	}

	s->eap_id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->eap_id, s->method,
			     TW_SIMAKA_REAUTH);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, s->counter, NULL, 0);
	tw_simaka_put_fixed(&b, TW_AT_NONCE_S, 0, s->nonce_s, 16);
	if (s->have_next_reauth)
		tw_simaka_put_var(&b, TW_AT_NEXT_REAUTH_ID, s->next_reauth,
				  s->next_reauth_len);
	tw_simaka_end_encr(&b, st->k_encr);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &s->mac, NULL, 0, out_len);
	if (rc != TW_OK)
		goto out;
	/* RFC 8940 §2: Session-Id = Type | NONCE_S | MAC of this request */
	rc = tw_eap_session_id(&s->keys, s->method, s->nonce_s, 16,
			       out + b.mac_val_off, TW_SIMAKA_MAC_LEN);
	if (rc != TW_OK)
		goto out;
	s->reauth = true;
	s->state = S_WAIT_REAUTH;
	rc = TW_EAP_SEND;
out:
	tw_wipe(iv, sizeof(iv));
	if (rc < 0)
		tw_wipe(&s->keys, sizeof(s->keys));
	return rc;
}

/* An identity arrived (EAP-Response/Identity or AT_IDENTITY). */
static int on_identity(struct tw_aka_server_ctx *s, const uint8_t *id,
		       size_t id_len, uint8_t *out, size_t max, size_t *out_len)
{
	int r;

	if (id_len == 0 || id_len > sizeof(s->identity))
		return notify_fail(s, out, max, out_len);
	/* RFC 4187 §7: "Identity" is the last AT_IDENTITY, or the
	 * EAP-Response/Identity when no AT_IDENTITY was exchanged */
	memcpy(s->identity, id, id_len);
	s->identity_len = id_len;
	r = tw_eap_id_process(&s->ids, s->cfg, id, id_len);
	if (r < 0)
		return fail_now(s, out, max, out_len);
	switch (r) {
	case TW_EAP_ID_ASK_ANY:
		return ask_identity(s, TW_AT_ANY_ID_REQ, out, max, out_len);
	case TW_EAP_ID_ASK_FULLAUTH:
		return ask_identity(s, TW_AT_FULLAUTH_ID_REQ, out, max, out_len);
	case TW_EAP_ID_ASK_PERMANENT:
		return ask_identity(s, TW_AT_PERMANENT_ID_REQ, out, max, out_len);
	case TW_EAP_ID_REAUTH:
		if (s->cfg->ops == NULL || s->cfg->ops->random == NULL)
			return fail_now(s, out, max, out_len);
		r = build_reauth(s, out, max, out_len);
		return r < 0 ? fail_now(s, out, max, out_len) : r;
	case TW_EAP_ID_PERMANENT:
	case TW_EAP_ID_PSEUDONYM:
		memset(&s->req, 0, sizeof(s->req));
		s->req.method = s->method;
		memcpy(s->req.imsi, s->ids.imsi, s->ids.imsi_len);
		s->req.imsi[s->ids.imsi_len] = 0;
		s->req.imsi_len = s->ids.imsi_len;
		s->req.count = 1;
		s->state = S_WAIT_VECTOR;
		*out_len = 0;
		return TW_EAP_NEED_VECTOR;
	default:
		/* RFC 4187 §4.1.5: no usable identity after the rounds */
		return notify_fail(s, out, max, out_len);
	}
}

int tw_aka_server_start(struct tw_aka_server_ctx *s, uint8_t *out, size_t max,
			size_t *out_len)
{
	int rc;

	if (s == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (s->state != S_INIT)
		return TW_ERR_STATE;
	rc = tw_eap_request_identity(out, max, s->eap_id, out_len);
	if (rc != TW_OK)
		return rc;
	s->state = S_WAIT_EAP_ID;
	return TW_EAP_SEND;
}

const struct tw_eap_vec_request *
tw_aka_server_vec_request(const struct tw_aka_server_ctx *s)
{
	return (s != NULL && s->state == S_WAIT_VECTOR) ? &s->req : NULL;
}

/* What a challenge built for a batch leaves to be done with the batch:
 * AT_ENCR_DATA's encryption (if encr), then AT_MAC at mac_off. */
struct chal_later {
	bool encr;
	struct tw_simaka_encr_later e;
	size_t mac_off;
};

/* Keys of a full authentication (RFC 4187 §7, RFC 9048 §3.3) and the
 * AKA-Challenge (RFC 4187 §9.3). pre: the EAP-AKA' keys already derived
 * (tw_aka_server_vector_many), else NULL. lt: leave the encryption and
 * AT_MAC to the batch (see struct chal_later), else NULL. */
static int build_challenge(struct tw_aka_server_ctx *s,
			   const struct tw_eap_aka_vec *v,
			   const struct tw_eap_aka_prime_job *pre, uint8_t *out,
			   size_t max, size_t *out_len, struct chal_later *lt)
{
	const struct tw_eap_server_cfg *cfg = s->cfg;
	const struct tw_eap_identity_ops *ops = cfg->ops;
	struct tw_eap_reauth_state *ns = &s->next_state;
	struct tw_eap_aka_prime_keys pk;
	struct tw_eap_sim_keys sk;
	struct tw_simaka_builder b;
	uint8_t ck_p[16], ik_p[16], iv[16], cc[32];
	size_t cc_len;
	int rc;

	memset(ns, 0, sizeof(*ns));
	ns->method = s->method;
	memcpy(ns->imsi, s->ids.imsi, sizeof(ns->imsi));
	ns->imsi_len = s->ids.imsi_len;
	ns->counter = 1; /* RFC 4187 §5.1: full authentication sets it to 1 */
	if (s->method == TW_EAP_TYPE_AKA_PRIME) {
		/* TS 33.402 Annex A.2: CK' | IK' = KDF(CK | IK, 0x20, network
		 * name, SQN ^ AK = AUTN[0..5]) */
		if (pre != NULL) {
			pk = pre->keys;
			tw_simaka_mac_init_keyed(&s->mac, &pre->k_aut);
			rc = TW_OK;
		} else {
			rc = tw_kdf_ck_ik_prime(ck_p, ik_p, v->ck, v->ik,
						cfg->network_name,
						cfg->network_name_len, v->autn);
			if (rc == TW_OK)
				rc = tw_eap_aka_prime_derive(&pk, ik_p, ck_p,
							     s->identity,
							     s->identity_len);
			if (rc != TW_OK)
				goto out;
			rc = tw_simaka_mac_init(&s->mac, s->method, pk.k_aut, 32);
		}
		memcpy(s->keys.msk, pk.msk, 64);
		memcpy(s->keys.emsk, pk.emsk, 64);
		memcpy(ns->k_encr, pk.k_encr, 16);
		memcpy(ns->k_aut, pk.k_aut, 32);
		ns->k_aut_len = 32;
		memcpy(ns->k_re, pk.k_re, 32);
	} else {
		rc = tw_eap_aka_derive(&sk, s->identity, s->identity_len, v->ik,
				       v->ck);
		if (rc != TW_OK)
			goto out;
		rc = tw_simaka_mac_init(&s->mac, s->method, sk.k_aut, 16);
		memcpy(s->keys.msk, sk.msk, 64);
		memcpy(s->keys.emsk, sk.emsk, 64);
		memcpy(ns->k_encr, sk.k_encr, 16);
		memcpy(ns->k_aut, sk.k_aut, 16);
		ns->k_aut_len = 16;
		memcpy(ns->mk, sk.mk, 20);
	}
	if (rc != TW_OK)
		goto out;
	/* RFC 5247 Appendix A: Session-Id = Type | RAND | AUTN */
	rc = tw_eap_session_id(&s->keys, s->method, v->rand_, 16, v->autn, 16);
	if (rc != TW_OK)
		goto out;

	/* RFC 4187 §4.1.1.7: a fresh pseudonym and re-auth id on every full
	 * authentication, only ever inside AT_ENCR_DATA */
	s->have_next_pseudonym = s->have_next_reauth = false;
	if (ops != NULL && ops->random != NULL) {
		if (cfg->pseudonyms && ops->pseudonym_store != NULL &&
		    mint(s, TW_NAI_PSEUDONYM, false, s->next_pseudonym,
			 sizeof(s->next_pseudonym), &s->next_pseudonym_len) == TW_OK)
			s->have_next_pseudonym = true;
		if (cfg->fast_reauth && ops->reauth_store != NULL &&
		    reauth_limit(cfg) > 1 &&
		    mint(s, TW_NAI_REAUTH, true, s->next_reauth,
			 sizeof(s->next_reauth), &s->next_reauth_len) == TW_OK)
			s->have_next_reauth = true;
	}
	if (s->have_next_pseudonym || s->have_next_reauth) {
		rc = ops->random(ops->arg, iv, sizeof(iv));
		if (rc != TW_OK)
			goto out;
	}

	s->eap_id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->eap_id, s->method,
			     TW_SIMAKA_CHALLENGE);
	tw_simaka_put_fixed(&b, TW_AT_RAND, 0, v->rand_, 16);
	tw_simaka_put_fixed(&b, TW_AT_AUTN, 0, v->autn, 16);
	if (s->method == TW_EAP_TYPE_AKA_PRIME) {
		/* RFC 9048 §3.1 AT_KDF_INPUT, §3.2 AT_KDF: only KDF 1 */
		tw_simaka_put_var(&b, TW_AT_KDF_INPUT, cfg->network_name,
				  cfg->network_name_len);
		tw_simaka_put_fixed(&b, TW_AT_KDF, TW_SIMAKA_KDF_PRIME, NULL, 0);
	} else if (cfg->enable_aka_prime) {
		/* RFC 9048 §4: the D bit tells the peer AKA' was possible */
		tw_simaka_put_fixed(&b, TW_AT_BIDDING, TW_SIMAKA_BIDDING_D, NULL, 0);
	}
	s->sent_result_ind = cfg->result_ind;
	if (cfg->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	cc_len = tw_simaka_checkcode_value(&s->checkcode, cc);
	if (cc_len)
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, cc, cc_len);
	if (s->have_next_pseudonym || s->have_next_reauth) {
		tw_simaka_begin_encr(&b, iv);
		if (s->have_next_pseudonym)
			tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM,
					  s->next_pseudonym, s->next_pseudonym_len);
		if (s->have_next_reauth)
			tw_simaka_put_var(&b, TW_AT_NEXT_REAUTH_ID, s->next_reauth,
					  s->next_reauth_len);
		if (lt != NULL)
			tw_simaka_end_encr_later(&b, &lt->e);
		else
			tw_simaka_end_encr(&b, ns->k_encr);
	}
	tw_simaka_put_mac(&b);
	if (lt != NULL) {
		lt->encr = s->have_next_pseudonym || s->have_next_reauth;
		rc = tw_simaka_finish_mac_later(&b, out_len, &lt->mac_off);
	} else
		rc = tw_simaka_finish_mac(&b, &s->mac, NULL, 0, out_len);
	if (rc != TW_OK)
		goto out;
	memcpy(s->rand_, v->rand_, 16);
	memcpy(s->autn, v->autn, 16);
	memcpy(s->xres, v->xres, v->xres_len);
	s->xres_len = v->xres_len;
	s->state = S_WAIT_CHALLENGE;
	rc = TW_EAP_SEND;
out:
	tw_wipe(&pk, sizeof(pk));
	tw_wipe(&sk, sizeof(sk));
	tw_wipe(ck_p, sizeof(ck_p));
	tw_wipe(ik_p, sizeof(ik_p));
	tw_wipe(iv, sizeof(iv));
	if (rc < 0)
		tw_wipe(&s->keys, sizeof(s->keys));
	return rc;
}

int tw_aka_server_vector(struct tw_aka_server_ctx *s,
			 const struct tw_eap_aka_vec *v, uint8_t *out,
			 size_t max, size_t *out_len)
{
	int rc;

	if (s == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (s->state != S_WAIT_VECTOR)
		return TW_ERR_STATE;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	/* no vector (unknown subscriber, HSS error, AUTS with a bad MAC-S):
	 * the authentication fails (RFC 4187 §6.3.2) */
	if (v == NULL || v->xres_len < TW_RES_MIN_LEN || v->xres_len > TW_RES_MAX_LEN)
		return fail_now(s, out, max, out_len);
	rc = build_challenge(s, v, NULL, out, max, out_len, NULL);
	return rc < 0 ? fail_now(s, out, max, out_len) : rc;
}

/* A job the lanes can take: what tw_aka_server_vector() would answer with
 * a challenge, for EAP-AKA'. */
static bool lane_job(const struct tw_aka_server_vec_job *j)
{
	const struct tw_eap_aka_vec *v = j->v;

	return j->s != NULL && j->out != NULL && j->s->state == S_WAIT_VECTOR &&
	       j->max >= TW_EAP_OUT_MIN && j->s->method == TW_EAP_TYPE_AKA_PRIME &&
	       v != NULL && v->xres_len >= TW_RES_MIN_LEN && v->xres_len <= TW_RES_MAX_LEN;
}

static bool same_network(const struct tw_eap_server_cfg *a, const struct tw_eap_server_cfg *b)
{
	return a == b || (a->network_name_len == b->network_name_len &&
			  memcmp(a->network_name, b->network_name, a->network_name_len) == 0);
}

/* Up to sixteen EAP-AKA' sessions of one network name: their keys and
 * their challenges' AT_MACs in lockstep lanes, the rest as one session. */
static void vector_lanes(struct tw_aka_server_vec_job *const *lane, unsigned n)
{
	struct tw_eap_aka_prime_job kd[TW_SHA256_LANES];
	struct tw_simaka_mac_ctx *mc[TW_SHA256_LANES];
	struct chal_later lt[TW_SHA256_LANES];
	struct tw_simaka_encr_later ee[TW_SHA256_LANES];
	const uint8_t *ek[TW_SHA256_LANES];
	uint8_t *pkt[TW_SHA256_LANES], *ep[TW_SHA256_LANES];
	size_t len[TW_SHA256_LANES], off[TW_SHA256_LANES];
	int mrc[TW_SHA256_LANES];
	unsigned at[TW_SHA256_LANES], m = 0, ne = 0;
	const struct tw_eap_server_cfg *cfg = lane[0]->s->cfg;

	for (unsigned j = 0; j < n; j++) {
		kd[j].ck = lane[j]->v->ck;
		kd[j].ik = lane[j]->v->ik;
		kd[j].sqn_xor_ak = lane[j]->v->autn; /* AUTN = SQN ^ AK | AMF | MAC */
		kd[j].identity = lane[j]->s->identity;
		kd[j].identity_len = lane[j]->s->identity_len;
	}
	tw_eap_aka_prime_derive_many(kd, n, cfg->network_name, cfg->network_name_len);
	for (unsigned j = 0; j < n; j++) {
		struct tw_aka_server_vec_job *J = lane[j];
		int rc = kd[j].rc;

		J->batched = rc == TW_OK;
		if (rc == TW_OK)
			rc = build_challenge(J->s, J->v, &kd[j], J->out, J->max, &J->out_len,
					     &lt[m]);
		if (rc != TW_EAP_SEND) {
			if (rc < 0) {
				/* nothing of a half-built challenge (identities in
				 * the clear) stays behind the EAP-Failure */
				tw_wipe(J->out, J->max);
				rc = fail_now(J->s, J->out, J->max, &J->out_len);
			}
			J->rc = rc;
			continue;
		}
		if (lt[m].encr) {
			ep[ne] = J->out;
			ee[ne] = lt[m].e;
			ek[ne++] = J->s->next_state.k_encr;
		}
		mc[m] = &J->s->mac;
		pkt[m] = J->out;
		len[m] = J->out_len;
		off[m] = lt[m].mac_off;
		at[m++] = j;
	}
	/* RFC 4187 §10.12 then §10.15: AT_MAC covers the ciphertext */
	tw_simaka_encrypt_many(ep, ee, ek, ne);
	tw_simaka_mac_fill_many(mc, pkt, len, off, mrc, m);
	for (unsigned i = 0; i < m; i++) {
		struct tw_aka_server_vec_job *J = lane[at[i]];

		J->rc = TW_EAP_SEND;
		if (mrc[i] != TW_OK) {
			tw_wipe(J->out, J->out_len);
			J->rc = fail_now(J->s, J->out, J->max, &J->out_len);
		}
	}
	tw_wipe(kd, n * sizeof(kd[0]));
}

/* A group of EAP-AKA' sessions of one network name: in lanes when there
 * are enough of them (tw_sha256_x16_worth), else one by one. */
static void vector_group(struct tw_aka_server_vec_job *const *lane, unsigned n)
{
	if (tw_sha256_x16_worth(n)) {
		vector_lanes(lane, n);
		return;
	}
	for (unsigned j = 0; j < n; j++)
		lane[j]->rc = tw_aka_server_vector(lane[j]->s, lane[j]->v, lane[j]->out,
						   lane[j]->max, &lane[j]->out_len);
}

void tw_aka_server_vector_many(struct tw_aka_server_vec_job *jobs, size_t n)
{
	struct tw_aka_server_vec_job *lane[TW_SHA256_LANES];
	unsigned used = 0;

	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		struct tw_aka_server_vec_job *J = &jobs[i];
		bool ok = lane_job(J), again = false;

		J->out_len = 0;
		J->batched = false;
		for (unsigned k = 0; k < used; k++)
			again |= lane[k]->s == J->s;
		/* a session named twice (whether the lanes could take the
		 * second job or not), or another network name: the lanes
		 * taken so far go first, so each session sees its jobs in
		 * order */
		if (used > 0 && (again || (ok && !same_network(lane[0]->s->cfg, J->s->cfg)))) {
			vector_group(lane, used);
			used = 0;
		}
		if (!ok || again) {
			J->rc = tw_aka_server_vector(J->s, J->v, J->out, J->max, &J->out_len);
			continue;
		}
		lane[used++] = J;
		if (used == TW_SHA256_LANES) {
			vector_group(lane, used);
			used = 0;
		}
	}
	if (used > 0)
		vector_group(lane, used);
}

/* Remembers the identities sent in AT_ENCR_DATA once the peer proved it
 * holds the keys (RFC 4187 §4.1.1.7). A store that fails only costs the
 * peer an identity round later (§4.1.5): the authentication stands. */
static void commit_identities(struct tw_aka_server_ctx *s)
{
	const struct tw_eap_identity_ops *ops = s->cfg->ops;

	if (ops == NULL)
		return;
	if (s->reauth && ops->reauth_remove != NULL)
		(void)ops->reauth_remove(ops->arg, s->identity, s->identity_len);
	if (s->have_next_pseudonym)
		(void)ops->pseudonym_store(ops->arg, s->next_pseudonym,
					   s->next_pseudonym_len, s->ids.imsi,
					   s->ids.imsi_len);
	if (s->have_next_reauth)
		(void)ops->reauth_store(ops->arg, s->next_reauth,
					s->next_reauth_len, &s->next_state);
	tw_wipe(&s->next_state, sizeof(s->next_state));
}

/* RFC 4187 §6.2: with result indications, success is an AKA-Notification
 * "Success" (32768: S = 1, P = 0, so protected by AT_MAC) first. */
static int notify_success(struct tw_aka_server_ctx *s, uint8_t *out,
			  size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	s->eap_id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->eap_id, s->method,
			     TW_SIMAKA_NOTIFICATION);
	tw_simaka_put_fixed(&b, TW_AT_NOTIFICATION, TW_SIMAKA_NOTIF_SUCCESS,
			    NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &s->mac, NULL, 0, out_len);
	if (rc != TW_OK)
		return rc;
	s->state = S_WAIT_NOTIF_OK;
	return TW_EAP_SEND;
}

static int on_challenge(struct tw_aka_server_ctx *s,
			const struct tw_simaka_msg *m, uint8_t *out,
			size_t max, size_t *out_len)
{
	switch (m->subtype) {
	case TW_SIMAKA_AUTH_REJECT: /* RFC 4187 §6.3.3 / §9.5 */
	case TW_SIMAKA_CLIENT_ERROR: /* RFC 4187 §6.3.2 / §9.14 */
		return fail_now(s, out, max, out_len);
	case TW_SIMAKA_SYNC_FAILURE:
		/* RFC 4187 §6.3.1 / §9.6: AUTS -> resynchronise the HE once,
		 * then a fresh challenge; a second failure ends it */
		if (s->resynced || !tw_simaka_has(&m->auts))
			return fail_now(s, out, max, out_len);
		s->resynced = true;
		s->req.resync = true;
		memcpy(s->req.rand_, s->rand_, 16);
		memcpy(s->req.auts, m->auts.val, 14);
		s->state = S_WAIT_VECTOR;
		*out_len = 0;
		return TW_EAP_NEED_VECTOR;
	case TW_SIMAKA_CHALLENGE:
		break;
	default:
		return notify_fail(s, out, max, out_len);
	}
	/* RFC 9048 §3.2: a peer that proposes another KDF; only KDF 1 is
	 * supported and it was offered first, so there is nothing to agree
	 * on: the exchange fails */
	if (s->method == TW_EAP_TYPE_AKA_PRIME && tw_simaka_has(&m->kdf))
		return notify_fail(s, out, max, out_len);
	/* AT_MAC before anything else is acted on (RFC 4187 §9.4), in
	 * constant time */
	if (tw_simaka_mac_verify(&s->mac, m, NULL, 0) != TW_OK)
		return notify_fail(s, out, max, out_len);
	/* RFC 4187 §10.8: RES length in bits, compared in constant time */
	if (!tw_simaka_has(&m->res) || m->res_bits != s->xres_len * 8 ||
	    m->res.len != s->xres_len ||
	    !tw_ct_eq(m->res.val, s->xres, s->xres_len))
		return notify_fail(s, out, max, out_len);
	/* RFC 4187 §10.13: the identity rounds were not tampered with */
	if (tw_simaka_checkcode_verify(&s->checkcode, m) != TW_OK)
		return notify_fail(s, out, max, out_len);
	commit_identities(s);
	if (s->sent_result_ind && tw_simaka_has(&m->result_ind))
		return notify_success(s, out, max, out_len);
	return success_now(s, out, max, out_len);
}

static int on_reauth(struct tw_aka_server_ctx *s, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_msg in;
	uint8_t plain[TW_SIMAKA_ATTR_MAX];
	int rc;

	if (m->subtype == TW_SIMAKA_CLIENT_ERROR)
		return fail_now(s, out, max, out_len);
	if (m->subtype != TW_SIMAKA_REAUTH)
		return notify_fail(s, out, max, out_len);
	/* RFC 4187 §9.8: MAC over the packet | NONCE_S */
	if (tw_simaka_mac_verify(&s->mac, m, s->nonce_s, 16) != TW_OK)
		return notify_fail(s, out, max, out_len);
	if (!tw_simaka_has(&m->encr_data) ||
	    tw_simaka_decrypt(&in, plain, sizeof(plain), m,
			      s->ids.reauth.k_encr) != TW_OK) {
		rc = notify_fail(s, out, max, out_len);
		goto out;
	}
	if (!tw_simaka_has(&in.counter) || in.counter_value != s->counter) {
		rc = notify_fail(s, out, max, out_len);
		goto out;
	}
	if (tw_simaka_has(&in.counter_too_small)) {
		/* RFC 4187 §5.2: the peer refused the counter; forget the
		 * re-auth id and run a full authentication */
		const struct tw_eap_identity_ops *ops = s->cfg->ops;

		if (ops->reauth_remove != NULL)
			(void)ops->reauth_remove(ops->arg, s->identity,
						 s->identity_len);
		s->reauth = false;
		s->have_next_reauth = false;
		tw_wipe(&s->ids.reauth, sizeof(s->ids.reauth));
		tw_wipe(&s->keys, sizeof(s->keys));
		tw_simaka_mac_wipe(&s->mac);
		rc = ask_identity(s, TW_AT_FULLAUTH_ID_REQ, out, max, out_len);
		goto out;
	}
	commit_identities(s);
	rc = success_now(s, out, max, out_len);
out:
	tw_wipe(plain, sizeof(plain));
	return rc;
}

int tw_aka_server_input(struct tw_aka_server_ctx *s, const uint8_t *pkt,
			size_t len, uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_eap_view v;
	struct tw_simaka_msg m;

	if (s == NULL || pkt == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	*out_len = 0;
	switch (s->state) {
	case S_INIT:
	case S_WAIT_EAP_ID:
	case S_WAIT_ID:
	case S_WAIT_CHALLENGE:
	case S_WAIT_REAUTH:
	case S_WAIT_NOTIF_OK:
	case S_WAIT_NOTIF_FAIL:
		break;
	case S_WAIT_VECTOR:
		return TW_ERR_STATE;
	default:
		return TW_EAP_DISCARD; /* finished */
	}
	/* RFC 3748 §4.1 / §2.1: only a Response with the Identifier of the
	 * outstanding request is processed; anything else is dropped */
	if (tw_eap_decode(&v, pkt, len) != TW_OK || v.code != TW_EAP_RESPONSE)
		return TW_EAP_DISCARD;
	if (s->state == S_INIT) {
		if (v.type != TW_EAP_TYPE_IDENTITY)
			return TW_EAP_DISCARD;
		s->eap_id = v.id; /* the NAS's Identity exchange */
	} else if (v.id != s->eap_id) {
		return TW_EAP_DISCARD;
	}
	if (s->state == S_INIT || s->state == S_WAIT_EAP_ID) {
		if (v.type != TW_EAP_TYPE_IDENTITY)
			return TW_EAP_DISCARD;
		return on_identity(s, v.data, v.data_len, out, max, out_len);
	}
	if (v.type == TW_EAP_TYPE_NAK) {
		/* RFC 3748 §5.3.1: the peer wants another method; this engine
		 * runs one, the caller may start another one */
		return fail_now(s, out, max, out_len);
	}
	if (v.type != s->method)
		return TW_EAP_DISCARD;
	if (s->state == S_WAIT_NOTIF_FAIL)
		return fail_now(s, out, max, out_len); /* RFC 4187 §6.1 */
	if (tw_simaka_decode(&m, pkt, len) != TW_OK)
		return notify_fail(s, out, max, out_len); /* RFC 4187 §8.1 */

	switch (s->state) {
	case S_WAIT_ID:
		/* RFC 4187 §9.3 EAP-Response/AKA-Identity with AT_IDENTITY */
		if (m.subtype == TW_SIMAKA_CLIENT_ERROR)
			return fail_now(s, out, max, out_len);
		if (m.subtype != TW_SIMAKA_IDENTITY ||
		    !tw_simaka_has(&m.identity))
			return notify_fail(s, out, max, out_len);
		tw_simaka_checkcode_add(&s->checkcode, m.pkt, m.pkt_len);
		return on_identity(s, m.identity.val, m.identity.len, out, max,
				   out_len);
	case S_WAIT_CHALLENGE:
		return on_challenge(s, &m, out, max, out_len);
	case S_WAIT_REAUTH:
		return on_reauth(s, &m, out, max, out_len);
	case S_WAIT_NOTIF_OK:
		/* RFC 4187 §9.11: the response to a P = 0 notification
		 * carries AT_MAC */
		if (m.subtype != TW_SIMAKA_NOTIFICATION ||
		    tw_simaka_mac_verify(&s->mac, &m, NULL, 0) != TW_OK)
			return fail_now(s, out, max, out_len);
		return success_now(s, out, max, out_len);
	default:
		return TW_ERR_STATE;
	}
}

int tw_aka_server_keys(const struct tw_aka_server_ctx *s, struct tw_eap_keys *k)
{
	if (s == NULL || k == NULL)
		return TW_ERR_INVAL;
	if (s->state != S_DONE_OK)
		return TW_ERR_STATE;
	*k = s->keys;
	return TW_OK;
}

void tw_aka_server_wipe(struct tw_aka_server_ctx *s)
{
	if (s == NULL)
		return;
	tw_simaka_mac_wipe(&s->mac);
	tw_wipe(s, sizeof(*s));
}
