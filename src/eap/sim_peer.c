/*
 * twag — EAP-SIM peer engine (RFC 4186, January 2006; Session-Id per
 * RFC 5247 Appendix A and RFC 8940, October 2020; framing RFC 3748): the
 * phone side the tests and the load generator play, over a simulated
 * SIM/USIM (usim.h).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"
#include "twag/nai.h"

enum {
	PS_IDLE = 0,    /* nothing answered yet, or an identity round */
	PS_FULL,        /* answered SIM/Start for a full authentication */
	PS_REAUTH_ID,   /* answered with a fast re-auth identity */
	PS_AUTHED,      /* answered Challenge / Re-authentication */
	PS_FAILED,      /* Client-Error sent or failure notified */
	PS_SUCCESS,
};

int tw_eap_sim_peer_init(struct tw_eap_sim_peer *p,
			 const struct tw_eap_peer_cfg *cfg,
			 struct tw_eap_peer_ids *mem, struct tw_usim *usim,
			 tw_eap_random_fn random, void *random_arg)
{
	if (p == NULL || cfg == NULL || mem == NULL || usim == NULL ||
	    random == NULL)
		return TW_ERR_INVAL;
	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->mem = mem;
	p->usim = usim;
	p->random = random;
	p->random_arg = random_arg;
	p->state = PS_IDLE;
	return TW_OK;
}

void tw_eap_sim_peer_wipe(struct tw_eap_sim_peer *p)
{
	if (p != NULL)
		tw_wipe(p, sizeof(*p));
}

const struct tw_eap_keys *tw_eap_sim_peer_keys(const struct tw_eap_sim_peer *p)
{
	return (p != NULL && p->state == PS_SUCCESS) ? &p->out : NULL;
}

static void drop_secrets(struct tw_eap_sim_peer *p)
{
	tw_wipe(&p->keys, sizeof(p->keys));
	tw_simaka_mac_wipe(&p->mac);
	tw_wipe(&p->out, sizeof(p->out));
	tw_wipe(p->next_reauth_id, sizeof(p->next_reauth_id));
	p->next_reauth_id_len = 0;
	p->next_pseudonym_len = 0;
}

/* RFC 4186 §6.3.1, §9.10: an error in a request is answered with
 * EAP-Response/SIM/Client-Error; the server then ends with EAP-Failure. */
static int client_error(struct tw_eap_sim_peer *p, uint8_t id, uint16_t code,
			uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;

	drop_secrets(p);
	p->state = PS_FAILED;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, id, TW_EAP_TYPE_SIM,
			     TW_SIMAKA_CLIENT_ERROR);
	tw_simaka_put_fixed(&b, TW_AT_CLIENT_ERROR_CODE, code, NULL, 0);
	int rc = tw_simaka_finish(&b, out_len);
	return rc != TW_OK ? rc : TW_EAP_SEND;
}

static int on_start(struct tw_eap_sim_peer *p, const struct tw_simaka_msg *m,
		    uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	uint8_t req = 0, kind;
	unsigned n_req = 0;
	bool v1 = false;
	int rc;

	if (p->state == PS_AUTHED || p->state == PS_FAILED ||
	    ++p->start_rounds > 3)
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS,
				    out, max, out_len);
	/* §10.2: the peer must support one of the listed versions */
	if (!tw_simaka_has(&m->version_list) || m->version_list.len == 0 ||
	    m->version_list.len % 2 != 0 ||
	    m->version_list.len > sizeof(p->version_list))
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS,
				    out, max, out_len);
	for (size_t i = 0; i < m->version_list.len; i += 2)
		if (tw_load_be16(m->version_list.val + i) == TW_SIMAKA_VERSION_1)
			v1 = true;
	if (!v1)
		return client_error(p, m->id, TW_SIMAKA_ERR_UNSUPPORTED_VERSION,
				    out, max, out_len);
	memcpy(p->version_list, m->version_list.val, m->version_list.len);
	p->version_list_len = m->version_list.len;

	/* §4.2.5/§9.1: at most one identity request, and each round only
	 * narrows the previous one (ANY, then FULLAUTH, then PERMANENT) */
	if (tw_simaka_has(&m->any_id_req)) {
		req = TW_AT_ANY_ID_REQ;
		n_req++;
	}
	if (tw_simaka_has(&m->fullauth_id_req)) {
		req = TW_AT_FULLAUTH_ID_REQ;
		n_req++;
	}
	if (tw_simaka_has(&m->permanent_id_req)) {
		req = TW_AT_PERMANENT_ID_REQ;
		n_req++;
	}
	if (n_req > 1 ||
	    (req != 0 && p->asked != 0 &&
	     (p->asked == TW_AT_PERMANENT_ID_REQ ||
	      (p->asked == TW_AT_FULLAUTH_ID_REQ && req != TW_AT_PERMANENT_ID_REQ) ||
	      (p->asked == TW_AT_ANY_ID_REQ && req == TW_AT_ANY_ID_REQ))))
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS,
				    out, max, out_len);
	if (req != 0) {
		rc = tw_eap_peer_identity(p->cfg, p->mem, TW_EAP_TYPE_SIM,
					  req == TW_AT_ANY_ID_REQ,
					  req != TW_AT_PERMANENT_ID_REQ,
					  p->identity, sizeof(p->identity),
					  &p->identity_len, &kind);
		if (rc != TW_OK)
			return rc;
		p->identity_kind = kind;
		p->asked = req;
	} else {
		/* §7: without AT_IDENTITY the MK uses the identity of the
		 * EAP-Response/Identity */
		if (p->eap_identity_len == 0)
			return client_error(p, m->id,
					    TW_SIMAKA_ERR_UNABLE_TO_PROCESS, out,
					    max, out_len);
		memcpy(p->identity, p->eap_identity, p->eap_identity_len);
		p->identity_len = p->eap_identity_len;
	}

	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
	if (req == TW_AT_ANY_ID_REQ && p->identity_kind == TW_NAI_REAUTH) {
		/* §9.2: a fast re-auth identity goes without AT_NONCE_MT and
		 * AT_SELECTED_VERSION; the server answers with
		 * SIM/Re-authentication (or another Start) */
		tw_simaka_put_var(&b, TW_AT_IDENTITY, p->identity, p->identity_len);
		p->state = PS_REAUTH_ID;
	} else {
		rc = p->random(p->random_arg, p->nonce_mt, sizeof(p->nonce_mt));
		if (rc != TW_OK)
			return rc;
		tw_simaka_put_fixed(&b, TW_AT_NONCE_MT, 0, p->nonce_mt,
				    sizeof(p->nonce_mt));
		tw_simaka_put_fixed(&b, TW_AT_SELECTED_VERSION,
				    TW_SIMAKA_VERSION_1, NULL, 0);
		if (req != 0)
			tw_simaka_put_var(&b, TW_AT_IDENTITY, p->identity,
					  p->identity_len);
		p->state = PS_FULL;
	}
	rc = tw_simaka_finish(&b, out_len);
	return rc != TW_OK ? rc : TW_EAP_SEND;
}

/* Keeps AT_NEXT_PSEUDONYM / AT_NEXT_REAUTH_ID until EAP-Success. */
static int take_next_ids(struct tw_eap_sim_peer *p, const struct tw_simaka_msg *in)
{
	return tw_eap_take_next_ids(in, p->next_pseudonym, sizeof(p->next_pseudonym),
				    &p->next_pseudonym_len, p->next_reauth_id,
				    sizeof(p->next_reauth_id), &p->next_reauth_id_len);
}

static int on_challenge(struct tw_eap_sim_peer *p, const struct tw_simaka_msg *m,
			uint8_t *out, size_t max, size_t *out_len)
{
	uint8_t kc[TW_EAP_SIM_MAX_TRIPLETS][8];
	uint8_t sres[TW_EAP_SIM_MAX_TRIPLETS * 4];
	uint8_t plain[TW_SIMAKA_ATTR_MAX];
	struct tw_simaka_msg in;
	struct tw_simaka_builder b;
	uint16_t code = TW_SIMAKA_ERR_UNABLE_TO_PROCESS;
	bool err = true;
	int rc = TW_OK;
	size_t n;

	if (p->state != PS_FULL)
		goto out;
	/* §9.3: at least two RANDs ("insufficient number of challenges"),
	 * all distinct ("RANDs are not fresh"), checked before the SIM runs */
	if (!tw_simaka_has(&m->rand_) || m->n_rand < TW_EAP_SIM_MIN_TRIPLETS) {
		code = TW_SIMAKA_ERR_INSUFFICIENT_CHALLENGES;
		goto out;
	}
	n = m->n_rand;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (memcmp(m->rand_.val + 16 * i, m->rand_.val + 16 * j,
				   16) == 0) {
				code = TW_SIMAKA_ERR_RANDS_NOT_FRESH;
				goto out;
			}
	if (!tw_simaka_has(&m->mac))
		goto out;
	for (size_t i = 0; i < n; i++) {
		memcpy(p->rand_[i], m->rand_.val + 16 * i, 16);
		rc = tw_usim_gsm(p->usim, p->rand_[i], sres + 4 * i, kc[i]);
		if (rc != TW_OK)
			goto out;
	}
	p->n_rand = (uint8_t)n;
	/* §7 key derivation, then AT_MAC over packet | NONCE_MT (§9.3):
	 * this authenticates the network */
	rc = tw_eap_sim_derive(&p->keys, p->identity, p->identity_len,
			       (const uint8_t (*)[8])kc, n, p->nonce_mt,
			       p->version_list, p->version_list_len,
			       TW_SIMAKA_VERSION_1);
	if (rc == TW_OK)
		rc = tw_simaka_mac_init(&p->mac, TW_EAP_TYPE_SIM, p->keys.k_aut,
					TW_EAP_SIM_K_AUT_LEN);
	if (rc != TW_OK)
		goto out;
	rc = TW_OK;
	if (tw_simaka_mac_verify(&p->mac, m, p->nonce_mt, sizeof(p->nonce_mt)) != TW_OK)
		goto out;
	if (tw_simaka_has(&m->encr_data)) {
		if (tw_simaka_decrypt(&in, plain, sizeof(plain), m,
				      p->keys.k_encr) != TW_OK ||
		    take_next_ids(p, &in) != TW_OK)
			goto out;
	}
	p->result_ind = tw_simaka_has(&m->result_ind) && p->cfg->result_ind;
	/* §9.4: AT_MAC over packet | n*SRES */
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_CHALLENGE);
	if (p->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &p->mac, sres, n * 4, out_len);
	if (rc != TW_OK)
		goto out;
	memcpy(p->out.msk, p->keys.msk, 64);
	memcpy(p->out.emsk, p->keys.emsk, 64);
	/* RFC 5247 Appendix A / RFC 8940 §2.1: 0x12 | RAND | NONCE_MT */
	rc = tw_eap_session_id(&p->out, TW_EAP_TYPE_SIM, &p->rand_[0][0], n * 16,
			       p->nonce_mt, 16);
	if (rc != TW_OK)
		goto out;
	p->counter = 0;
	p->state = PS_AUTHED;
	err = false;
out:
	tw_wipe(kc, sizeof(kc));
	tw_wipe(sres, sizeof(sres));
	tw_wipe(plain, sizeof(plain));
	if (rc == TW_ERR_OVERFLOW || rc == TW_ERR_INVAL)
		return rc;
	if (err)
		return client_error(p, m->id, code, out, max, out_len);
	return TW_EAP_SEND;
}

static int on_reauth(struct tw_eap_sim_peer *p, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len)
{
	const struct tw_eap_reauth_state *st = &p->mem->reauth;
	uint8_t plain[TW_SIMAKA_ATTR_MAX];
	struct tw_simaka_msg in;
	struct tw_simaka_builder b;
	uint8_t iv[16];
	bool too_small, err = true;
	int rc = TW_OK;

	if (p->state != PS_REAUTH_ID || p->mem->reauth_id_len == 0 ||
	    st->method != TW_EAP_TYPE_SIM || st->k_aut_len != 16)
		goto out;
	memcpy(p->keys.mk, st->mk, sizeof(p->keys.mk));
	memcpy(p->keys.k_encr, st->k_encr, 16);
	memcpy(p->keys.k_aut, st->k_aut, 16);
	rc = tw_simaka_mac_init(&p->mac, TW_EAP_TYPE_SIM, p->keys.k_aut, 16);
	if (rc != TW_OK)
		goto out;
	/* §9.7: AT_MAC over the packet alone, verified before decryption */
	if (tw_simaka_mac_verify(&p->mac, m, NULL, 0) != TW_OK ||
	    !tw_simaka_has(&m->encr_data) ||
	    tw_simaka_decrypt(&in, plain, sizeof(plain), m, p->keys.k_encr) != TW_OK ||
	    !tw_simaka_has(&in.counter) || !tw_simaka_has(&in.nonce_s) ||
	    take_next_ids(p, &in) != TW_OK)
		goto out;
	memcpy(p->nonce_s, in.nonce_s.val, 16);
	p->counter = in.counter_value;
	/* §5.5: the counter must be greater than the last one accepted */
	too_small = p->counter <= st->counter;
	rc = p->random(p->random_arg, iv, sizeof(iv));
	if (rc != TW_OK)
		goto out;
	/* §9.8: AT_IV, AT_ENCR_DATA{AT_COUNTER [, AT_COUNTER_TOO_SMALL]},
	 * AT_RESULT_IND, AT_MAC over packet | NONCE_S */
	p->result_ind = !too_small && tw_simaka_has(&m->result_ind) &&
			p->cfg->result_ind;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_REAUTH);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, p->counter, NULL, 0);
	if (too_small)
		tw_simaka_put_fixed(&b, TW_AT_COUNTER_TOO_SMALL, 0, NULL, 0);
	tw_simaka_end_encr(&b, p->keys.k_encr);
	if (p->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &p->mac, p->nonce_s, 16, out_len);
	if (rc != TW_OK)
		goto out;
	err = false;
	if (too_small) {
		/* the server now runs a full authentication (§5.5) */
		drop_secrets(p);
		p->state = PS_IDLE;
		goto out;
	}
	/* §7: XKEY' = SHA1(Identity | counter | NONCE_S | MK) with the re-auth
	 * identity used; RFC 8940 §2.1: Session-Id = 0x12 | NONCE_S | MAC */
	rc = tw_eap_sim_reauth(p->out.msk, p->out.emsk, p->keys.mk, p->identity,
			       p->identity_len, p->counter, p->nonce_s);
	if (rc == TW_OK)
		rc = tw_eap_session_id(&p->out, TW_EAP_TYPE_SIM, p->nonce_s, 16,
				       m->mac.val, 16);
	if (rc != TW_OK) {
		err = true;
		goto out;
	}
	p->state = PS_AUTHED;
	p->reauth_done = true;
out:
	tw_wipe(plain, sizeof(plain));
	tw_wipe(iv, sizeof(iv));
	if (rc == TW_ERR_OVERFLOW || rc == TW_ERR_INVAL)
		return rc;
	if (err)
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS, out,
				    max, out_len);
	return TW_EAP_SEND;
}

/*
 * RFC 4186 §6.1, §9.8/§9.9: one notification round. P = 0 (after the
 * challenge) needs a valid AT_MAC and is answered with AT_MAC (and, in a
 * re-authentication, the encrypted counter); P = 1 only before it.
 */
static int on_notification(struct tw_eap_sim_peer *p, const struct tw_simaka_msg *m,
			   uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	bool after, success;
	uint8_t iv[16];
	int rc;

	if (p->notified || !tw_simaka_has(&m->notification))
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS,
				    out, max, out_len);
	after = (m->notification_code & TW_SIMAKA_NOTIF_P) == 0;
	success = (m->notification_code & TW_SIMAKA_NOTIF_S) != 0;
	if (after != (p->state == PS_AUTHED) || (success && !after) ||
	    (after && tw_simaka_mac_verify(&p->mac, m, NULL, 0) != TW_OK))
		return client_error(p, m->id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS,
				    out, max, out_len);
	p->notified = true;
	tw_simaka_build_init(&b, out, max, TW_EAP_RESPONSE, m->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_NOTIFICATION);
	if (after) {
		if (p->reauth_done) {
			rc = p->random(p->random_arg, iv, sizeof(iv));
			if (rc != TW_OK)
				return rc;
			tw_simaka_begin_encr(&b, iv);
			tw_simaka_put_fixed(&b, TW_AT_COUNTER, p->counter, NULL, 0);
			tw_simaka_end_encr(&b, p->keys.k_encr);
		}
		tw_simaka_put_mac(&b);
		rc = tw_simaka_finish_mac(&b, &p->mac, NULL, 0, out_len);
	} else {
		rc = tw_simaka_finish(&b, out_len);
	}
	if (rc != TW_OK)
		return rc;
	if (!success) {
		drop_secrets(p);
		p->state = PS_FAILED;
	}
	return TW_EAP_SEND;
}

/* EAP-Success after our Challenge/Re-authentication response: keep what
 * the server gave (§4.2.1.7: the new pseudonym and re-auth id replace the
 * old ones; §5: a re-auth id is used once). */
static void commit(struct tw_eap_sim_peer *p)
{
	struct tw_eap_peer_ids *mem = p->mem;

	if (!p->reauth_done && p->next_pseudonym_len) {
		memcpy(mem->pseudonym, p->next_pseudonym, p->next_pseudonym_len);
		mem->pseudonym_len = p->next_pseudonym_len;
		mem->pseudonym_method = TW_EAP_TYPE_SIM;
	}
	if (p->next_reauth_id_len) {
		memcpy(mem->reauth_id, p->next_reauth_id, p->next_reauth_id_len);
		mem->reauth_id_len = p->next_reauth_id_len;
		if (!p->reauth_done) {
			tw_eap_reauth_state_wipe(&mem->reauth);
			mem->reauth.method = TW_EAP_TYPE_SIM;
			memcpy(mem->reauth.imsi, p->cfg->imsi,
			       p->cfg->imsi_len < 15 ? p->cfg->imsi_len : 15);
			mem->reauth.imsi_len = p->cfg->imsi_len < 15 ? p->cfg->imsi_len : 15;
			memcpy(mem->reauth.k_encr, p->keys.k_encr, 16);
			memcpy(mem->reauth.k_aut, p->keys.k_aut, 16);
			mem->reauth.k_aut_len = 16;
			memcpy(mem->reauth.mk, p->keys.mk, 20);
			/* RFC 4187 §5.1 / RFC 4186 §5: 1 after full auth */
			mem->reauth.counter = 1;
		} else {
			mem->reauth.counter = p->counter;
		}
	} else {
		tw_wipe(mem->reauth_id, sizeof(mem->reauth_id));
		mem->reauth_id_len = 0;
		tw_eap_reauth_state_wipe(&mem->reauth);
	}
}

int tw_eap_sim_peer_input(struct tw_eap_sim_peer *p, const uint8_t *pkt,
			  size_t len, uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_eap_view v;
	struct tw_simaka_msg m;
	uint8_t kind;
	int rc;

	if (p == NULL || pkt == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	*out_len = 0;
	if (p->state == PS_SUCCESS)
		return TW_ERR_STATE;
	if (tw_eap_decode(&v, pkt, len) != TW_OK)
		return TW_EAP_DISCARD;
	switch (v.code) {
	case TW_EAP_SUCCESS:
		/* §6.2: with result indications on both sides, success only
		 * after the "Success" notification */
		if (p->state != PS_AUTHED || (p->result_ind && !p->notified))
			return TW_EAP_DISCARD;
		commit(p);
		tw_wipe(&p->keys, sizeof(p->keys));
		tw_simaka_mac_wipe(&p->mac);
		p->state = PS_SUCCESS;
		return TW_EAP_ACCEPT;
	case TW_EAP_FAILURE:
		drop_secrets(p);
		p->state = PS_FAILED;
		return TW_EAP_REJECT;
	case TW_EAP_REQUEST:
		break;
	default:
		return TW_EAP_DISCARD;
	}
	if (v.type == TW_EAP_TYPE_IDENTITY) {
		/* RFC 3748 §5.1; the identity: re-auth id, pseudonym or
		 * permanent (RFC 4186 §4.2.1) */
		if (p->state != PS_IDLE)
			return TW_EAP_DISCARD;
		rc = tw_eap_peer_identity(p->cfg, p->mem, TW_EAP_TYPE_SIM, true,
					  true, p->eap_identity,
					  sizeof(p->eap_identity),
					  &p->eap_identity_len, &kind);
		if (rc != TW_OK)
			return rc;
		memcpy(p->identity, p->eap_identity, p->eap_identity_len);
		p->identity_len = p->eap_identity_len;
		p->identity_kind = kind;
		if (kind == TW_NAI_REAUTH)
			p->state = PS_REAUTH_ID;
		rc = tw_eap_encode(out, max, out_len, TW_EAP_RESPONSE, v.id,
				   TW_EAP_TYPE_IDENTITY, p->eap_identity,
				   p->eap_identity_len);
		return rc != TW_OK ? rc : TW_EAP_SEND;
	}
	if (v.type == TW_EAP_TYPE_NOTIFICATION) {
		/* RFC 3748 §5.2: always answered, empty */
		rc = tw_eap_encode(out, max, out_len, TW_EAP_RESPONSE, v.id,
				   TW_EAP_TYPE_NOTIFICATION, NULL, 0);
		return rc != TW_OK ? rc : TW_EAP_SEND;
	}
	if (v.type != TW_EAP_TYPE_SIM) {
		/* RFC 3748 §5.3.1: Nak, proposing EAP-SIM */
		static const uint8_t sim = TW_EAP_TYPE_SIM;

		rc = tw_eap_encode(out, max, out_len, TW_EAP_RESPONSE, v.id,
				   TW_EAP_TYPE_NAK, &sim, 1);
		return rc != TW_OK ? rc : TW_EAP_SEND;
	}
	if (p->state == PS_FAILED)
		return TW_EAP_DISCARD;
	/* RFC 4186 §8.1, §6.3.1: a malformed request (an unknown
	 * non-skippable attribute, bad lengths...) is answered with
	 * Client-Error "unable to process packet" */
	if (tw_simaka_decode(&m, pkt, len) != TW_OK)
		return client_error(p, v.id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS, out,
				    max, out_len);
	switch (m.subtype) {
	case TW_SIMAKA_SIM_START:
		if (p->state == PS_REAUTH_ID && p->asked == 0)
			p->state = PS_IDLE; /* the server wants full auth */
		return on_start(p, &m, out, max, out_len);
	case TW_SIMAKA_SIM_CHALLENGE:
		return on_challenge(p, &m, out, max, out_len);
	case TW_SIMAKA_REAUTH:
		return on_reauth(p, &m, out, max, out_len);
	case TW_SIMAKA_NOTIFICATION:
		return on_notification(p, &m, out, max, out_len);
	default:
		return client_error(p, m.id, TW_SIMAKA_ERR_UNABLE_TO_PROCESS, out,
				    max, out_len);
	}
}
