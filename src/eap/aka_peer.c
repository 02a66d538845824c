/*
 * twag — EAP-AKA (RFC 4187, January 2006) and EAP-AKA' (RFC 9048, October
 * 2021) peer engine: the phone side, with a simulated USIM (usim.h).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/kdf.h"
#include "twag/nai.h"
#include "twag/usim.h"

enum { P_RUN = 0, P_DONE };

int tw_aka_peer_init(struct tw_aka_peer_ctx *p, const struct tw_eap_peer_cfg *cfg,
		     struct tw_usim *usim, struct tw_eap_peer_ids *ids)
{
	if (p == NULL || cfg == NULL || usim == NULL || ids == NULL ||
	    cfg->imsi == NULL || cfg->random == NULL)
		return TW_ERR_INVAL;
	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->usim = usim;
	p->ids = ids;
	return TW_OK;
}

/* RFC 4187 §6.3.1 / §9.14: EAP-Response/AKA-Client-Error, code 0 "unable
 * to process packet". */
static int client_error(struct tw_aka_peer_ctx *p, uint8_t id, uint8_t method,
			uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;

	p->keys_ok = false;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, id, method,
			     TW_SIMAKA_CLIENT_ERROR);
	tw_simaka_put_fixed(&b, TW_AT_CLIENT_ERROR_CODE,
			    TW_SIMAKA_ERR_UNABLE_TO_PROCESS, NULL, 0);
	int rc = tw_simaka_finish(&b, out_len);
	return rc == TW_OK ? TW_EAP_SEND : rc;
}

/* RFC 4187 §9.5: EAP-Response/AKA-Authentication-Reject (no attributes). */
static int auth_reject(struct tw_aka_peer_ctx *p, uint8_t id, uint8_t method,
		       uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;

	p->keys_ok = false;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, id, method,
			     TW_SIMAKA_AUTH_REJECT);
	int rc = tw_simaka_finish(&b, out_len);
	return rc == TW_OK ? TW_EAP_SEND : rc;
}

static uint8_t preferred_method(const struct tw_aka_peer_ctx *p)
{
	if (p->method)
		return p->method;
	return p->cfg->support_aka_prime ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;
}

/* RFC 4187 §9.2/§9.3 and §4.1.6: answer AT_ANY_ID_REQ with any identity,
 * AT_FULLAUTH_ID_REQ with a pseudonym or the permanent id, and
 * AT_PERMANENT_ID_REQ with the permanent id. */
static int on_identity(struct tw_aka_peer_ctx *p, const struct tw_simaka_msg *m,
		       uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	bool any = tw_simaka_has(&m->any_id_req);
	bool full = tw_simaka_has(&m->fullauth_id_req);
	bool perm = tw_simaka_has(&m->permanent_id_req);
	int rc;

	/* RFC 4187 §4.1.5: at most three rounds, one request attribute */
	if (++p->id_rounds > 3 || (int)any + (int)full + (int)perm != 1)
		return client_error(p, m->id, p->method, out, max, out_len);
	rc = tw_eap_peer_identity(p->cfg, p->ids, p->method, any, any || full,
				  p->identity, sizeof(p->identity),
				  &p->identity_len, &p->identity_kind);
	if (rc != TW_OK)
		return client_error(p, m->id, p->method, out, max, out_len);
	tw_simaka_checkcode_add(&p->checkcode, m->pkt, m->pkt_len);
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id, p->method,
			     TW_SIMAKA_IDENTITY);
	tw_simaka_put_var(&b, TW_AT_IDENTITY, p->identity, p->identity_len);
	rc = tw_simaka_finish(&b, out_len);
	if (rc != TW_OK)
		return rc;
	tw_simaka_checkcode_add(&p->checkcode, out, *out_len);
	return TW_EAP_SEND;
}

/* Takes AT_NEXT_PSEUDONYM / AT_NEXT_REAUTH_ID out of AT_ENCR_DATA. */
static int take_next_ids(struct tw_aka_peer_ctx *p, const struct tw_simaka_msg *m,
			 const uint8_t k_encr[static 16], struct tw_simaka_msg *in,
			 uint8_t *plain, size_t plain_max)
{
	int rc = tw_simaka_decrypt(in, plain, plain_max, m, k_encr);

	if (rc != TW_OK)
		return rc;
	return tw_eap_take_next_ids(in, p->next_pseudonym, sizeof(p->next_pseudonym),
				    &p->next_pseudonym_len, p->next_reauth,
				    sizeof(p->next_reauth), &p->next_reauth_len);
}

static int on_challenge(struct tw_aka_peer_ctx *p, const struct tw_simaka_msg *m,
			uint8_t *out, size_t max, size_t *out_len)
{
	const struct tw_eap_peer_cfg *cfg = p->cfg;
	struct tw_eap_reauth_state *ns = &p->next_state;
	struct tw_eap_aka_prime_keys pk;
	struct tw_eap_sim_keys sk;
	struct tw_simaka_builder b;
	struct tw_simaka_msg in;
	uint8_t plain[TW_SIMAKA_ATTR_MAX];
	uint8_t res[16], ck[16], ik[16], auts[14], ck_p[16], ik_p[16], cc[32];
	size_t res_len = 0, cc_len;
	bool kdf_ok = false;
	int rc;

	memset(&pk, 0, sizeof(pk));
	memset(&sk, 0, sizeof(sk));
	p->keys_ok = false;
	p->reauth = false;
	p->next_pseudonym_len = p->next_reauth_len = 0;
	if (!tw_simaka_has(&m->rand_) || !tw_simaka_has(&m->autn)) {
		rc = client_error(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	if (p->method == TW_EAP_TYPE_AKA_PRIME) {
		/* RFC 9048 §3.2: use the first KDF offered if supported; else
		 * propose KDF 1 if it is in the list; else reject */
		if (!tw_simaka_has(&m->kdf) || !tw_simaka_has(&m->kdf_input) ||
		    m->kdf_input.len == 0) {
			rc = client_error(p, m->id, p->method, out, max, out_len);
			goto out;
		}
		if (m->kdf_list[0] != TW_SIMAKA_KDF_PRIME) {
			for (unsigned i = 1; i < m->n_kdf; i++)
				kdf_ok |= m->kdf_list[i] == TW_SIMAKA_KDF_PRIME;
			if (!kdf_ok) {
				rc = auth_reject(p, m->id, p->method, out, max,
						 out_len);
				goto out;
			}
			tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
					     p->method, TW_SIMAKA_CHALLENGE);
			tw_simaka_put_fixed(&b, TW_AT_KDF, TW_SIMAKA_KDF_PRIME,
					    NULL, 0);
			rc = tw_simaka_finish(&b, out_len);
			if (rc == TW_OK)
				rc = TW_EAP_SEND;
			goto out;
		}
		/* RFC 9048 §3.1: the peer checks the network name when it
		 * knows what to expect */
		if (cfg->network_name != NULL &&
		    (m->kdf_input.len != cfg->network_name_len ||
		     memcmp(m->kdf_input.val, cfg->network_name,
			    cfg->network_name_len) != 0)) {
			rc = auth_reject(p, m->id, p->method, out, max, out_len);
			goto out;
		}
	}

	rc = tw_usim_authenticate(p->usim, m->rand_.val, m->autn.val, res,
				  &res_len, ck, ik, auts);
	if (rc == TW_ERR_SYNC) {
		/* RFC 4187 §6.3.1 / §9.6: AKA-Synchronization-Failure + AUTS */
		tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
				     p->method, TW_SIMAKA_SYNC_FAILURE);
		tw_simaka_put_auts(&b, auts);
		rc = tw_simaka_finish(&b, out_len);
		if (rc == TW_OK)
			rc = TW_EAP_SEND;
		p->sent_auts = true;
		goto out;
	}
	if (rc != TW_OK) {
		/* RFC 4187 §6.3.1: AUTN does not verify */
		rc = auth_reject(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	if (p->method == TW_EAP_TYPE_AKA_PRIME) {
		/* TS 33.402 §6.2, RFC 9048 §3: AKA' vectors have the AMF
		 * separation bit set */
		if (!tw_usim_autn_separation_bit(m->autn.val)) {
			rc = auth_reject(p, m->id, p->method, out, max, out_len);
			goto out;
		}
		rc = tw_kdf_ck_ik_prime(ck_p, ik_p, ck, ik, m->kdf_input.val,
					m->kdf_input.len, m->autn.val);
		if (rc == TW_OK)
			rc = tw_eap_aka_prime_derive(&pk, ik_p, ck_p, p->identity,
						     p->identity_len);
		if (rc == TW_OK)
			rc = tw_simaka_mac_init(&p->mac, p->method, pk.k_aut, 32);
		memcpy(ns->k_encr, pk.k_encr, 16);
		memcpy(ns->k_aut, pk.k_aut, 32);
		ns->k_aut_len = 32;
		memcpy(ns->k_re, pk.k_re, 32);
		memcpy(p->keys.msk, pk.msk, 64);
		memcpy(p->keys.emsk, pk.emsk, 64);
	} else {
		rc = tw_eap_aka_derive(&sk, p->identity, p->identity_len, ik, ck);
		if (rc == TW_OK)
			rc = tw_simaka_mac_init(&p->mac, p->method, sk.k_aut, 16);
		memcpy(ns->k_encr, sk.k_encr, 16);
		memcpy(ns->k_aut, sk.k_aut, 16);
		ns->k_aut_len = 16;
		memcpy(ns->mk, sk.mk, 20);
		memcpy(p->keys.msk, sk.msk, 64);
		memcpy(p->keys.emsk, sk.emsk, 64);
	}
	if (rc != TW_OK)
		goto out;
	/* RFC 4187 §9.3: AT_MAC verifies before anything else is used */
	if (tw_simaka_mac_verify(&p->mac, m, NULL, 0) != TW_OK ||
	    (tw_simaka_has(&m->checkcode) &&
	     tw_simaka_checkcode_verify(&p->checkcode, m) != TW_OK)) {
		rc = client_error(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	/* RFC 9048 §4: an EAP-AKA challenge that says AKA' was available to
	 * a peer that supports AKA' is a bidding-down attack */
	if (p->method == TW_EAP_TYPE_AKA && cfg->support_aka_prime &&
	    tw_simaka_has(&m->bidding) &&
	    (m->bidding_value & TW_SIMAKA_BIDDING_D)) {
		rc = client_error(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	if (tw_simaka_has(&m->encr_data) &&
	    take_next_ids(p, m, ns->k_encr, &in, plain, sizeof(plain)) != TW_OK) {
		rc = client_error(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	rc = tw_eap_session_id(&p->keys, p->method, m->rand_.val, 16,
			       m->autn.val, 16);
	if (rc != TW_OK)
		goto out;
	ns->method = p->method;
	memcpy(ns->imsi, cfg->imsi, cfg->imsi_len < 15 ? cfg->imsi_len : 15);
	ns->imsi_len = cfg->imsi_len < 15 ? cfg->imsi_len : 15;
	ns->counter = 1; /* RFC 4187 §5.1 */

	p->result_ind = cfg->result_ind && tw_simaka_has(&m->result_ind);
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id, p->method,
			     TW_SIMAKA_CHALLENGE);
	tw_simaka_put_res(&b, res, (uint16_t)(res_len * 8));
	if (tw_simaka_has(&m->checkcode)) {
		cc_len = tw_simaka_checkcode_value(&p->checkcode, cc);
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, cc, cc_len);
	}
	if (p->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &p->mac, NULL, 0, out_len);
	if (rc != TW_OK)
		goto out;
	/* RFC 4187 §6.2: with result indications, success is the
	 * notification; otherwise EAP-Success */
	p->keys_ok = !p->result_ind;
	p->have_keys = true;
	rc = TW_EAP_SEND;
out:
	tw_wipe(&pk, sizeof(pk));
	tw_wipe(&sk, sizeof(sk));
	tw_wipe(plain, sizeof(plain));
	tw_wipe(res, sizeof(res));
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	tw_wipe(ck_p, sizeof(ck_p));
	tw_wipe(ik_p, sizeof(ik_p));
	return rc;
}

/* RFC 4187 §5.4 / §9.7-§9.8, RFC 9048 §3.3: fast re-authentication. */
static int on_reauth(struct tw_aka_peer_ctx *p, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_eap_peer_ids *ids = p->ids;
	struct tw_simaka_builder b;
	struct tw_simaka_msg in;
	uint8_t plain[TW_SIMAKA_ATTR_MAX], iv[16];
	bool too_small;
	int rc;

	p->keys_ok = false;
	p->next_pseudonym_len = p->next_reauth_len = 0;
	if (p->identity_kind != TW_NAI_REAUTH || ids->reauth_id_len == 0 ||
	    ids->reauth.method != p->method ||
	    tw_simaka_mac_init(&p->mac, p->method, ids->reauth.k_aut,
			       ids->reauth.k_aut_len) != TW_OK)
		return client_error(p, m->id, p->method, out, max, out_len);
	if (tw_simaka_mac_verify(&p->mac, m, NULL, 0) != TW_OK ||
	    !tw_simaka_has(&m->encr_data) ||
	    take_next_ids(p, m, ids->reauth.k_encr, &in, plain,
			  sizeof(plain)) != TW_OK ||
	    !tw_simaka_has(&in.counter) || !tw_simaka_has(&in.nonce_s)) {
		rc = client_error(p, m->id, p->method, out, max, out_len);
		goto out;
	}
	memcpy(p->nonce_s, in.nonce_s.val, 16);
	p->counter = in.counter_value;
	/* RFC 4187 §5.4: a counter not above the stored one is refused with
	 * AT_COUNTER_TOO_SMALL, and no keys come out of the exchange */
	too_small = p->counter <= ids->reauth.counter;
	if (!too_small) {
		if (p->method == TW_EAP_TYPE_AKA_PRIME)
			rc = tw_eap_aka_prime_reauth(p->keys.msk, p->keys.emsk,
						     ids->reauth.k_re, p->identity,
						     p->identity_len, p->counter,
						     p->nonce_s);
		else
			rc = tw_eap_sim_reauth(p->keys.msk, p->keys.emsk,
					       ids->reauth.mk, p->identity,
					       p->identity_len, p->counter,
					       p->nonce_s);
		if (rc == TW_OK)
			rc = tw_eap_session_id(&p->keys, p->method, p->nonce_s,
					       16, m->mac.val, 16);
		if (rc != TW_OK)
			goto out;
	}
	rc = p->cfg->random(p->cfg->random_arg, iv, sizeof(iv));
	if (rc != TW_OK)
		goto out;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id, p->method,
			     TW_SIMAKA_REAUTH);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, p->counter, NULL, 0);
	if (too_small)
		tw_simaka_put_fixed(&b, TW_AT_COUNTER_TOO_SMALL, 0, NULL, 0);
	tw_simaka_end_encr(&b, ids->reauth.k_encr);
	tw_simaka_put_mac(&b);
	/* RFC 4187 §9.8: MAC over the packet | NONCE_S */
	rc = tw_simaka_finish_mac(&b, &p->mac, p->nonce_s, 16, out_len);
	if (rc != TW_OK)
		goto out;
	if (!too_small) {
		p->next_state = ids->reauth;
		p->next_state.counter = p->counter;
		p->reauth = true;
		p->keys_ok = true;
		p->have_keys = true;
	} else {
		/* the server falls back to full authentication */
		ids->reauth_id_len = 0;
		tw_eap_reauth_state_wipe(&ids->reauth);
		p->next_reauth_len = 0;
		p->have_keys = false;
	}
	rc = TW_EAP_SEND;
out:
	tw_wipe(plain, sizeof(plain));
	tw_wipe(iv, sizeof(iv));
	return rc;
}

/* RFC 4187 §6.1/§9.10-§9.11: answer every notification; a P = 0 one is
 * only accepted with a valid AT_MAC and answered with one. */
static int on_notification(struct tw_aka_peer_ctx *p,
			   const struct tw_simaka_msg *m, uint8_t *out,
			   size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	bool protected_;

	if (!tw_simaka_has(&m->notification))
		return client_error(p, m->id, p->method, out, max, out_len);
	protected_ = !(m->notification_code & TW_SIMAKA_NOTIF_P);
	if (protected_ && (!p->have_keys || p->reauth ||
			   tw_simaka_mac_verify(&p->mac, m, NULL, 0) != TW_OK))
		return client_error(p, m->id, p->method, out, max, out_len);
	/* S bit: success (only meaningful after the challenge, P = 0) */
	p->keys_ok = protected_ && (m->notification_code & TW_SIMAKA_NOTIF_S);
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id, p->method,
			     TW_SIMAKA_NOTIFICATION);
	if (protected_) {
		tw_simaka_put_mac(&b);
		int rc = tw_simaka_finish_mac(&b, &p->mac, NULL, 0, out_len);
		return rc == TW_OK ? TW_EAP_SEND : rc;
	}
	int rc = tw_simaka_finish(&b, out_len);
	return rc == TW_OK ? TW_EAP_SEND : rc;
}

/* EAP-Success: remember what the server issued (RFC 4187 §4.1.1.7, §5). */
static void commit(struct tw_aka_peer_ctx *p)
{
	struct tw_eap_peer_ids *ids = p->ids;

	if (p->next_pseudonym_len) {
		memcpy(ids->pseudonym, p->next_pseudonym, p->next_pseudonym_len);
		ids->pseudonym_len = p->next_pseudonym_len;
		ids->pseudonym_method = p->method;
	}
	if (p->next_reauth_len) {
		memcpy(ids->reauth_id, p->next_reauth, p->next_reauth_len);
		ids->reauth_id_len = p->next_reauth_len;
		ids->reauth = p->next_state;
	} else {
		/* no new re-auth id: the next time is a full authentication */
		ids->reauth_id_len = 0;
		tw_eap_reauth_state_wipe(&ids->reauth);
	}
	tw_wipe(&p->next_state, sizeof(p->next_state));
}

int tw_aka_peer_input(struct tw_aka_peer_ctx *p, const uint8_t *pkt, size_t len,
		      uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_eap_view v;
	struct tw_simaka_msg m;
	uint8_t nak;
	int rc;

	if (p == NULL || pkt == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	*out_len = 0;
	if (p->state == P_DONE || tw_eap_decode(&v, pkt, len) != TW_OK)
		return TW_EAP_DISCARD;
	switch (v.code) {
	case TW_EAP_SUCCESS:
		/* RFC 3748 §4.2 / RFC 4187 §6.2: only after our side is done */
		if (!p->keys_ok)
			return TW_EAP_DISCARD;
		commit(p);
		p->state = P_DONE;
		return TW_EAP_ACCEPT;
	case TW_EAP_FAILURE:
		p->keys_ok = false;
		p->state = P_DONE;
		tw_wipe(&p->keys, sizeof(p->keys));
		return TW_EAP_REJECT;
	case TW_EAP_REQUEST:
		break;
	default:
		return TW_EAP_DISCARD;
	}
	if (v.type == TW_EAP_TYPE_IDENTITY) {
		/* RFC 4187 §4.1.1.8: the EAP-Response/Identity may carry the
		 * re-auth id, a pseudonym or the permanent id */
		rc = tw_eap_peer_identity(p->cfg, p->ids, preferred_method(p),
					  true, true, p->identity,
					  sizeof(p->identity), &p->identity_len,
					  &p->identity_kind);
		if (rc != TW_OK)
			return rc;
		rc = tw_eap_encode(out, max, out_len, TW_EAP_RESPONSE, v.id,
				   TW_EAP_TYPE_IDENTITY, p->identity,
				   p->identity_len);
		return rc == TW_OK ? TW_EAP_SEND : rc;
	}
	if (v.type == TW_EAP_TYPE_AKA_PRIME && !p->cfg->support_aka_prime) {
		/* RFC 3748 §5.3.1: Nak, proposing EAP-AKA */
		nak = TW_EAP_TYPE_AKA;
		rc = tw_eap_encode(out, max, out_len, TW_EAP_RESPONSE, v.id,
				   TW_EAP_TYPE_NAK, &nak, 1);
		return rc == TW_OK ? TW_EAP_SEND : rc;
	}
	if (v.type != TW_EAP_TYPE_AKA && v.type != TW_EAP_TYPE_AKA_PRIME)
		return TW_EAP_DISCARD;
	if (p->method == 0) {
		p->method = v.type;
		rc = tw_simaka_checkcode_init(&p->checkcode, p->method);
		if (rc != TW_OK)
			return rc;
	} else if (v.type != p->method) {
		return TW_EAP_DISCARD;
	}
	/* RFC 4187 §6.3.1 / §8.1: a malformed request -> Client-Error */
	if (tw_simaka_decode(&m, pkt, len) != TW_OK)
		return client_error(p, v.id, p->method, out, max, out_len);
	switch (m.subtype) {
	case TW_SIMAKA_IDENTITY:
		return on_identity(p, &m, out, max, out_len);
	case TW_SIMAKA_CHALLENGE:
		return on_challenge(p, &m, out, max, out_len);
	case TW_SIMAKA_REAUTH:
		return on_reauth(p, &m, out, max, out_len);
	case TW_SIMAKA_NOTIFICATION:
		return on_notification(p, &m, out, max, out_len);
	default:
		return client_error(p, m.id, p->method, out, max, out_len);
	}
}

int tw_aka_peer_keys(const struct tw_aka_peer_ctx *p, struct tw_eap_keys *k)
{
	if (p == NULL || k == NULL)
		return TW_ERR_INVAL;
	if (p->state != P_DONE || !p->keys_ok)
		return TW_ERR_STATE;
	*k = p->keys;
	return TW_OK;
}

void tw_aka_peer_wipe(struct tw_aka_peer_ctx *p)
{
	if (p == NULL)
		return;
	tw_simaka_mac_wipe(&p->mac);
	tw_wipe(p, sizeof(*p));
}
