/*
 * twag — EAP-SIM server engine (RFC 4186, January 2006; Session-Id per
 * RFC 5247 Appendix A and RFC 8940, October 2020; framing RFC 3748).
 *
 * One session is a small state machine; it never allocates, blocks or does
 * I/O. Triplets come in through tw_eap_sim_server_vector() after the
 * session returned TW_EAP_NEED_VECTOR, so an HSS may answer later.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"
#include "twag/nai.h"

enum {
	SS_INIT = 0,     /* nothing sent: expects EAP-Response/Identity */
	SS_IDENTITY,     /* EAP-Request/Identity sent */
	SS_START,        /* SIM/Start sent */
	SS_VECTOR,       /* waiting for triplets */
	SS_CHALLENGE,    /* SIM/Challenge sent */
	SS_REAUTH,       /* SIM/Re-authentication sent */
	SS_NOTIF_OK,     /* success notification sent (§6.2) */
	SS_NOTIF_FAIL,   /* failure notification sent (§6.3.2) */
	SS_SUCCESS,
	SS_FAILURE,
};

/* RFC 4186 §10.2: the only version defined, as AT_VERSION_LIST carries it */
static const uint8_t version_list[2] = { 0x00, TW_SIMAKA_VERSION_1 };

int tw_eap_sim_server_init(struct tw_eap_sim_server *s,
			   const struct tw_eap_server_cfg *cfg,
			   const struct tw_eap_sim_server_opts *opts)
{
	if (s == NULL || cfg == NULL)
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	if (!cfg->enable_sim)
		return TW_ERR_UNSUPPORTED;
	s->cfg = cfg;
	if (opts != NULL)
		s->opts = *opts;
	if (s->opts.n_triplets == 0)
		s->opts.n_triplets = TW_EAP_SIM_MAX_TRIPLETS;
	if (s->opts.n_triplets < TW_EAP_SIM_MIN_TRIPLETS ||
	    s->opts.n_triplets > TW_EAP_SIM_MAX_TRIPLETS)
		return TW_ERR_INVAL;
	s->ids.method = TW_EAP_TYPE_SIM;
	s->state = SS_INIT;
	return TW_OK;
}

void tw_eap_sim_server_wipe(struct tw_eap_sim_server *s)
{
	if (s != NULL)
		tw_wipe(s, sizeof(*s));
}

const struct tw_eap_vec_request *
tw_eap_sim_server_vec_request(const struct tw_eap_sim_server *s)
{
	return (s != NULL && s->state == SS_VECTOR) ? &s->vreq : NULL;
}

const struct tw_eap_keys *tw_eap_sim_server_keys(const struct tw_eap_sim_server *s)
{
	return (s != NULL && s->state == SS_SUCCESS) ? &s->out : NULL;
}

int tw_eap_sim_server_set_next_ids(struct tw_eap_sim_server *s,
				   const uint8_t *pseudonym, size_t pseudonym_len,
				   const uint8_t *reauth_id, size_t reauth_id_len)
{
	if (s == NULL || (pseudonym == NULL && pseudonym_len) ||
	    (reauth_id == NULL && reauth_id_len))
		return TW_ERR_INVAL;
	if (pseudonym_len > sizeof(s->next_pseudonym) ||
	    reauth_id_len > sizeof(s->next_reauth_id))
		return TW_ERR_LENGTH;
	if (pseudonym_len)
		memcpy(s->next_pseudonym, pseudonym, pseudonym_len);
	if (reauth_id_len)
		memcpy(s->next_reauth_id, reauth_id, reauth_id_len);
	s->next_pseudonym_len = pseudonym_len;
	s->next_reauth_id_len = reauth_id_len;
	s->given_ids = true;
	return TW_OK;
}

int tw_eap_sim_server_start(struct tw_eap_sim_server *s, uint8_t id,
			    uint8_t *out, size_t max, size_t *out_len)
{
	int rc;

	if (s == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (s->state != SS_INIT)
		return TW_ERR_STATE;
	rc = tw_eap_request_identity(out, max, id, out_len);
	if (rc != TW_OK)
		return rc;
	s->id = id;
	s->state = SS_IDENTITY;
	return TW_EAP_SEND;
}

/* Ends the session with EAP-Failure; its Identifier is the one of the
 * response it answers (RFC 3748 §4.2). */
static int reject(struct tw_eap_sim_server *s, uint8_t *out, size_t max,
		  size_t *out_len)
{
	int rc = tw_eap_result(out, max, TW_EAP_FAILURE, s->id, out_len);

	tw_wipe(&s->keys, sizeof(s->keys));
	tw_simaka_mac_wipe(&s->mac);
	tw_wipe(s->sres, sizeof(s->sres));
	tw_wipe(&s->out, sizeof(s->out));
	tw_eap_reauth_state_wipe(&s->ids.reauth);
	s->state = SS_FAILURE;
	return rc != TW_OK ? rc : TW_EAP_REJECT;
}

/*
 * RFC 4186 §6.3.2: an error in a response is answered with
 * EAP-Request/SIM/Notification carrying a failure code, then EAP-Failure
 * after the peer's EAP-Response/SIM/Notification. The errors handled here
 * all occur before the peer is authenticated, so the code is "General
 * failure" (16384, P bit set: no AT_MAC, §10.18).
 */
static int fail_notify(struct tw_eap_sim_server *s, uint8_t *out, size_t max,
		       size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	s->id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_NOTIFICATION);
	tw_simaka_put_fixed(&b, TW_AT_NOTIFICATION,
			    TW_SIMAKA_NOTIF_GENERAL_FAILURE, NULL, 0);
	rc = tw_simaka_finish(&b, out_len);
	tw_wipe(&s->keys, sizeof(s->keys));
	tw_simaka_mac_wipe(&s->mac);
	tw_wipe(s->sres, sizeof(s->sres));
	tw_eap_reauth_state_wipe(&s->ids.reauth);
	if (rc != TW_OK)
		return rc;
	s->state = SS_NOTIF_FAIL;
	return TW_EAP_SEND;
}

/* EAP-Request/SIM/Start (RFC 4186 §9.1): AT_VERSION_LIST and at most one
 * identity request attribute. */
static int send_start(struct tw_eap_sim_server *s, uint8_t id_req, uint8_t *out,
		      size_t max, size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	s->id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
	tw_simaka_put_var(&b, TW_AT_VERSION_LIST, version_list,
			  sizeof(version_list));
	if (id_req != 0)
		tw_simaka_put_fixed(&b, id_req, 0, NULL, 0);
	rc = tw_simaka_finish(&b, out_len);
	if (rc != TW_OK)
		return rc;
	s->ids.asked = id_req;
	s->state = SS_START;
	return TW_EAP_SEND;
}

static int random_bytes(struct tw_eap_sim_server *s, uint8_t *buf, size_t len)
{
	const struct tw_eap_identity_ops *ops = s->cfg->ops;

	if (ops == NULL || ops->random == NULL)
		return TW_ERR_UNSUPPORTED;
	return ops->random(ops->arg, buf, len);
}

/* The identities to hand out in AT_ENCR_DATA: given ones, or minted (RFC
 * 4186 §4.2.1.7: a fresh pseudonym and re-auth id on every full auth). */
static int next_ids(struct tw_eap_sim_server *s, bool pseudonym)
{
	const struct tw_eap_server_cfg *cfg = s->cfg;
	int rc;

	if (s->given_ids)
		return TW_OK;
	s->next_pseudonym_len = 0;
	s->next_reauth_id_len = 0;
	if (cfg->ops == NULL)
		return TW_OK;
	if (pseudonym && cfg->pseudonyms && cfg->ops->pseudonym_store != NULL) {
		/* a pseudonym is a user name; the peer adds its realm
		 * (RFC 4186 §10.11) */
		rc = tw_eap_mint_id(cfg, TW_EAP_TYPE_SIM, TW_NAI_PSEUDONYM, false,
				    s->ids.imsi, s->ids.imsi_len, s->next_pseudonym, sizeof(s->next_pseudonym),
				    &s->next_pseudonym_len);
		if (rc != TW_OK)
			return rc;
	}
	if (cfg->fast_reauth && cfg->ops->reauth_store != NULL) {
		/* RFC 4186 §10.12: the whole NAI, realm included */
		rc = tw_eap_mint_id(cfg, TW_EAP_TYPE_SIM, TW_NAI_REAUTH, true,
				    s->ids.imsi, s->ids.imsi_len, s->next_reauth_id, sizeof(s->next_reauth_id),
				    &s->next_reauth_id_len);
		if (rc != TW_OK)
			return rc;
	}
	return TW_OK;
}

/* Puts AT_NEXT_PSEUDONYM / AT_NEXT_REAUTH_ID inside the open AT_ENCR_DATA. */
static void put_next_ids(struct tw_eap_sim_server *s, struct tw_simaka_builder *b)
{
	if (s->next_pseudonym_len)
		tw_simaka_put_var(b, TW_AT_NEXT_PSEUDONYM, s->next_pseudonym,
				  s->next_pseudonym_len);
	if (s->next_reauth_id_len)
		tw_simaka_put_var(b, TW_AT_NEXT_REAUTH_ID, s->next_reauth_id,
				  s->next_reauth_id_len);
}

/*
 * EAP-Request/SIM/Re-authentication (RFC 4186 §5, §9.7): AT_IV,
 * AT_ENCR_DATA{AT_COUNTER, AT_NONCE_S, AT_NEXT_REAUTH_ID}, AT_RESULT_IND,
 * AT_MAC over the packet alone. The counter is one more than the last one
 * used (§5.5: it must increase strictly; the store keeps the last value).
 */
static int send_reauth(struct tw_eap_sim_server *s, uint8_t *out, size_t max,
		       size_t *out_len)
{
	struct tw_eap_reauth_state *st = &s->ids.reauth;
	struct tw_simaka_builder b;
	uint8_t iv[16];
	size_t len;
	int rc;

	s->reauth = true;
	memcpy(s->keys.mk, st->mk, sizeof(s->keys.mk));
	memcpy(s->keys.k_encr, st->k_encr, sizeof(s->keys.k_encr));
	memcpy(s->keys.k_aut, st->k_aut, TW_EAP_SIM_K_AUT_LEN);
	rc = tw_simaka_mac_init(&s->mac, TW_EAP_TYPE_SIM, s->keys.k_aut,
				TW_EAP_SIM_K_AUT_LEN);
	if (rc != TW_OK)
		goto out;
	s->counter = (uint16_t)(st->counter + 1);
	rc = random_bytes(s, s->nonce_s, sizeof(s->nonce_s));
	if (rc == TW_OK)
		rc = random_bytes(s, iv, sizeof(iv));
	if (rc == TW_OK)
		rc = next_ids(s, false);
	if (rc != TW_OK)
		goto out;
	s->next_pseudonym_len = 0; /* §5.4: only AT_NEXT_REAUTH_ID here */
	s->id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_REAUTH);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, s->counter, NULL, 0);
	tw_simaka_put_fixed(&b, TW_AT_NONCE_S, 0, s->nonce_s, sizeof(s->nonce_s));
	put_next_ids(s, &b);
	tw_simaka_end_encr(&b, s->keys.k_encr);
	if (s->cfg->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &s->mac, NULL, 0, &len);
	if (rc != TW_OK)
		goto out;
	/* RFC 8940 §2.1: the fast re-auth Session-Id uses this AT_MAC */
	memcpy(s->reauth_mac, out + b.mac_val_off, sizeof(s->reauth_mac));
	s->result_ind_sent = s->cfg->result_ind;
	*out_len = len;
	s->state = SS_REAUTH;
out:
	tw_wipe(iv, sizeof(iv));
	if (rc != TW_OK)
		return reject(s, out, max, out_len);
	return TW_EAP_SEND;
}

/* Acts on what tw_eap_id_process() made of an identity. from_start: the
 * identity came in an EAP-Response/SIM/Start (so NONCE_MT etc. are at
 * hand in m). */
static int full_auth(struct tw_eap_sim_server *s, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len);

static int on_identity(struct tw_eap_sim_server *s, int res,
		       const struct tw_simaka_msg *m, uint8_t *out, size_t max,
		       size_t *out_len)
{
	bool first = (m == NULL);

	if (res < 0)
		return first ? reject(s, out, max, out_len)
			     : fail_notify(s, out, max, out_len);
	s->id_result = (uint8_t)res;
	switch (res) {
	case TW_EAP_ID_PERMANENT:
	case TW_EAP_ID_PSEUDONYM:
		if (first)
			/* §4.2.6: EAP-SIM needs a SIM/Start round anyway
			 * (NONCE_MT, version negotiation) */
			return send_start(s, s->opts.fullauth_id_req_first
						     ? TW_AT_FULLAUTH_ID_REQ : 0,
					  out, max, out_len);
		return full_auth(s, m, out, max, out_len);
	case TW_EAP_ID_REAUTH:
		if (first && s->opts.fullauth_id_req_first) {
			tw_eap_reauth_state_wipe(&s->ids.reauth);
			return send_start(s, TW_AT_FULLAUTH_ID_REQ, out, max,
					  out_len);
		}
		memcpy(s->reauth_id, s->identity, s->identity_len);
		s->reauth_id_len = s->identity_len;
		return send_reauth(s, out, max, out_len);
	case TW_EAP_ID_ASK_ANY:
		return send_start(s, TW_AT_ANY_ID_REQ, out, max, out_len);
	case TW_EAP_ID_ASK_FULLAUTH:
		return send_start(s, TW_AT_FULLAUTH_ID_REQ, out, max, out_len);
	case TW_EAP_ID_ASK_PERMANENT:
		return send_start(s, TW_AT_PERMANENT_ID_REQ, out, max, out_len);
	default:
		/* §4.2.5/§4.2.6: no usable identity after the allowed rounds */
		return first ? reject(s, out, max, out_len)
			     : fail_notify(s, out, max, out_len);
	}
}

/*
 * RFC 4186 §9.2: a full authentication needs AT_NONCE_MT and
 * AT_SELECTED_VERSION (one of the versions we listed) in the response to
 * the last SIM/Start; then ask the vector source for triplets.
 */
static int full_auth(struct tw_eap_sim_server *s, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len)
{
	if (!tw_simaka_has(&m->nonce_mt) || !tw_simaka_has(&m->selected_version) ||
	    m->selected_ver != TW_SIMAKA_VERSION_1)
		return fail_notify(s, out, max, out_len);
	memcpy(s->nonce_mt, m->nonce_mt.val, sizeof(s->nonce_mt));
	s->selected_version = m->selected_ver;
	memset(&s->vreq, 0, sizeof(s->vreq));
	s->vreq.method = TW_EAP_TYPE_SIM;
	memcpy(s->vreq.imsi, s->ids.imsi, s->ids.imsi_len);
	s->vreq.imsi[s->ids.imsi_len] = 0;
	s->vreq.imsi_len = s->ids.imsi_len;
	s->vreq.count = s->opts.n_triplets;
	*out_len = 0;
	s->state = SS_VECTOR;
	return TW_EAP_NEED_VECTOR;
}

int tw_eap_sim_server_vector(struct tw_eap_sim_server *s,
			     const struct tw_eap_sim_triplet *t, size_t n,
			     uint8_t *out, size_t max, size_t *out_len)
{
	uint8_t kc[TW_EAP_SIM_MAX_TRIPLETS][8];
	struct tw_simaka_builder b;
	uint8_t iv[16];
	int rc;

	if (s == NULL || t == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	if (s->state != SS_VECTOR)
		return TW_ERR_STATE;
	if (n != s->vreq.count)
		return TW_ERR_INVAL;
	/* RFC 4186 §9.3: the RANDs of a challenge are distinct (a peer
	 * refuses repeated ones with "RANDs are not fresh"): a source that
	 * hands out duplicates ends the session */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (memcmp(t[i].rand_, t[j].rand_, 16) == 0)
				return reject(s, out, max, out_len);
	s->n_rand = (uint8_t)n;
	for (size_t i = 0; i < n; i++) {
		memcpy(s->rand_[i], t[i].rand_, 16);
		memcpy(s->sres[i], t[i].sres, 4);
		memcpy(kc[i], t[i].kc, 8);
	}
	/* RFC 4186 §7: MK = SHA1(Identity | n*Kc | NONCE_MT | Version List |
	 * Selected Version); K_encr | K_aut | MSK | EMSK = PRF(MK) */
	rc = tw_eap_sim_derive(&s->keys, s->identity, s->identity_len,
			       (const uint8_t (*)[8])kc, n, s->nonce_mt,
			       version_list, sizeof(version_list),
			       s->selected_version);
	if (rc == TW_OK)
		rc = tw_simaka_mac_init(&s->mac, TW_EAP_TYPE_SIM, s->keys.k_aut,
					TW_EAP_SIM_K_AUT_LEN);
	if (rc == TW_OK)
		rc = next_ids(s, true);
	if (rc == TW_OK && (s->next_pseudonym_len || s->next_reauth_id_len))
		rc = random_bytes(s, iv, sizeof(iv));
	if (rc != TW_OK)
		goto out;

	/* RFC 4186 §9.3: AT_RAND, AT_IV/AT_ENCR_DATA (identities only ever
	 * encrypted, §4.2.1.7), AT_RESULT_IND, AT_MAC over packet | NONCE_MT */
	s->id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_CHALLENGE);
	tw_simaka_put_fixed(&b, TW_AT_RAND, 0, &s->rand_[0][0], n * 16);
	if (s->next_pseudonym_len || s->next_reauth_id_len) {
		tw_simaka_begin_encr(&b, iv);
		put_next_ids(s, &b);
		tw_simaka_end_encr(&b, s->keys.k_encr);
	}
	if (s->cfg->result_ind)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &s->mac, s->nonce_mt, sizeof(s->nonce_mt),
				  out_len);
	if (rc != TW_OK)
		goto out;
	s->result_ind_sent = s->cfg->result_ind;
	s->state = SS_CHALLENGE;
out:
	tw_wipe(kc, sizeof(kc));
	tw_wipe(iv, sizeof(iv));
	if (rc == TW_ERR_OVERFLOW || rc == TW_ERR_INVAL)
		return rc;
	if (rc != TW_OK)
		return reject(s, out, max, out_len);
	return TW_EAP_SEND;
}

/* Remembers what the peer was given, once it has authenticated: the
 * pseudonym (§4.2.1.7) and the re-auth id with the keys and counter of
 * this exchange (§5). A used re-auth id is forgotten (§5.4: one use). */
static int commit_ids(struct tw_eap_sim_server *s)
{
	const struct tw_eap_identity_ops *ops = s->cfg->ops;
	struct tw_eap_reauth_state st;
	int rc = TW_OK;

	if (ops == NULL)
		return TW_OK;
	memset(&st, 0, sizeof(st));
	if (s->reauth && ops->reauth_remove != NULL) {
		rc = ops->reauth_remove(ops->arg, s->reauth_id, s->reauth_id_len);
		if (rc == TW_ERR_NOTFOUND)
			rc = TW_OK;
		if (rc != TW_OK)
			goto out;
	}
	if (s->next_pseudonym_len && ops->pseudonym_store != NULL) {
		rc = ops->pseudonym_store(ops->arg, s->next_pseudonym,
					  s->next_pseudonym_len, s->ids.imsi,
					  s->ids.imsi_len);
		if (rc != TW_OK)
			goto out;
	}
	if (s->next_reauth_id_len && ops->reauth_store != NULL) {
		st.method = TW_EAP_TYPE_SIM;
		memcpy(st.imsi, s->ids.imsi, s->ids.imsi_len);
		st.imsi_len = s->ids.imsi_len;
		/* RFC 4187 §5.1 (same rule in RFC 4186 §5.1): the counter is
		 * 1 after a full authentication */
		st.counter = s->reauth ? s->counter : 1;
		memcpy(st.k_encr, s->keys.k_encr, 16);
		memcpy(st.k_aut, s->keys.k_aut, 16);
		st.k_aut_len = 16;
		memcpy(st.mk, s->keys.mk, sizeof(st.mk));
		rc = ops->reauth_store(ops->arg, s->next_reauth_id,
				       s->next_reauth_id_len, &st);
	}
out:
	tw_eap_reauth_state_wipe(&st);
	return rc;
}

/* The exchange is over: only MSK/EMSK/Session-Id stay (STYLE: secrets do
 * not outlive their use). */
static int accepted(struct tw_eap_sim_server *s)
{
	tw_wipe(&s->keys, sizeof(s->keys));
	tw_simaka_mac_wipe(&s->mac);
	tw_wipe(s->sres, sizeof(s->sres));
	tw_eap_reauth_state_wipe(&s->ids.reauth);
	s->state = SS_SUCCESS;
	return TW_EAP_ACCEPT;
}

/* Authentication succeeded: keys out, then EAP-Success, or first the
 * protected "Success" notification when both sides asked for result
 * indications (RFC 4186 §6.2, §9.8). */
static int succeed(struct tw_eap_sim_server *s, uint8_t *out, size_t max,
		   size_t *out_len)
{
	struct tw_simaka_builder b;
	int rc;

	rc = commit_ids(s);
	if (rc != TW_OK)
		return reject(s, out, max, out_len);
	if (s->reauth) {
		/* RFC 4186 §7: XKEY' = SHA1(Identity | counter | NONCE_S | MK) */
		rc = tw_eap_sim_reauth(s->out.msk, s->out.emsk, s->keys.mk,
				       s->reauth_id, s->reauth_id_len,
				       s->counter, s->nonce_s);
		/* RFC 8940 §2.1: 0x12 | NONCE_S | MAC */
		if (rc == TW_OK)
			rc = tw_eap_session_id(&s->out, TW_EAP_TYPE_SIM, s->nonce_s,
					       16, s->reauth_mac, 16);
	} else {
		memcpy(s->out.msk, s->keys.msk, 64);
		memcpy(s->out.emsk, s->keys.emsk, 64);
		/* RFC 5247 Appendix A, RFC 8940 §2.1: 0x12 | RAND | NONCE_MT */
		rc = tw_eap_session_id(&s->out, TW_EAP_TYPE_SIM, &s->rand_[0][0],
				       (size_t)s->n_rand * 16, s->nonce_mt, 16);
	}
	if (rc != TW_OK)
		return reject(s, out, max, out_len);
	if (!s->result_ind_both) {
		rc = tw_eap_result(out, max, TW_EAP_SUCCESS, s->id, out_len);
		if (rc != TW_OK)
			return rc;
		return accepted(s);
	}
	s->id++;
	tw_simaka_build_init(&b, out, max, TW_EAP_REQUEST, s->id,
			     TW_EAP_TYPE_SIM, TW_SIMAKA_NOTIFICATION);
	if (s->reauth) {
		/* §9.8: in fast re-authentication the notification carries
		 * the counter, encrypted */
		uint8_t iv[16];

		rc = random_bytes(s, iv, sizeof(iv));
		if (rc != TW_OK)
			return reject(s, out, max, out_len);
		tw_simaka_begin_encr(&b, iv);
		tw_simaka_put_fixed(&b, TW_AT_COUNTER, s->counter, NULL, 0);
		tw_simaka_end_encr(&b, s->keys.k_encr);
		tw_wipe(iv, sizeof(iv));
	}
	tw_simaka_put_fixed(&b, TW_AT_NOTIFICATION, TW_SIMAKA_NOTIF_SUCCESS, NULL, 0);
	tw_simaka_put_mac(&b);
	rc = tw_simaka_finish_mac(&b, &s->mac, NULL, 0, out_len);
	if (rc != TW_OK)
		return rc;
	s->state = SS_NOTIF_OK;
	return TW_EAP_SEND;
}

static int on_start(struct tw_eap_sim_server *s, const struct tw_simaka_msg *m,
		    uint8_t *out, size_t max, size_t *out_len)
{
	int res;

	/* RFC 4186 §9.2: AT_IDENTITY answers an identity request and is
	 * present exactly when one was sent */
	if (s->ids.asked == 0) {
		if (tw_simaka_has(&m->identity))
			return fail_notify(s, out, max, out_len);
		return on_identity(s, s->id_result, m, out, max, out_len);
	}
	if (!tw_simaka_has(&m->identity) || m->identity.len == 0 ||
	    m->identity.len > sizeof(s->identity))
		return fail_notify(s, out, max, out_len);
	/* §7: the MK's Identity is the last AT_IDENTITY the peer sent */
	memcpy(s->identity, m->identity.val, m->identity.len);
	s->identity_len = m->identity.len;
	res = tw_eap_id_process(&s->ids, s->cfg, s->identity, s->identity_len);
	return on_identity(s, res, m, out, max, out_len);
}

static int on_challenge(struct tw_eap_sim_server *s, const struct tw_simaka_msg *m,
			uint8_t *out, size_t max, size_t *out_len)
{
	uint8_t sres[TW_EAP_SIM_MAX_TRIPLETS * 4];
	int rc;

	if (m->subtype != TW_SIMAKA_SIM_CHALLENGE)
		return fail_notify(s, out, max, out_len);
	/* RFC 4186 §9.4: AT_MAC over the packet | n*SRES, compared in
	 * constant time, before anything else in the message is used */
	for (size_t i = 0; i < s->n_rand; i++)
		memcpy(sres + 4 * i, s->sres[i], 4);
	rc = tw_simaka_mac_verify(&s->mac, m, sres, (size_t)s->n_rand * 4);
	tw_wipe(sres, sizeof(sres));
	if (rc != TW_OK)
		return fail_notify(s, out, max, out_len);
	s->result_ind_both = s->result_ind_sent && tw_simaka_has(&m->result_ind);
	return succeed(s, out, max, out_len);
}

static int on_reauth(struct tw_eap_sim_server *s, const struct tw_simaka_msg *m,
		     uint8_t *out, size_t max, size_t *out_len)
{
	struct tw_simaka_msg in;
	uint8_t plain[TW_SIMAKA_ATTR_MAX];
	int rc, act;

	if (m->subtype != TW_SIMAKA_REAUTH)
		return fail_notify(s, out, max, out_len);
	/* RFC 4186 §9.8: AT_MAC over the packet | NONCE_S first */
	if (tw_simaka_mac_verify(&s->mac, m, s->nonce_s, sizeof(s->nonce_s)) != TW_OK ||
	    !tw_simaka_has(&m->encr_data))
		return fail_notify(s, out, max, out_len);
	rc = tw_simaka_decrypt(&in, plain, sizeof(plain), m, s->keys.k_encr);
	if (rc != TW_OK || !tw_simaka_has(&in.counter) ||
	    in.counter_value != s->counter) {
		act = fail_notify(s, out, max, out_len);
		goto out;
	}
	if (tw_simaka_has(&in.counter_too_small)) {
		/* §5.5: the peer refused the counter: fall back to full
		 * authentication, asking for the full-auth identity; the
		 * re-auth id is spent */
		const struct tw_eap_identity_ops *ops = s->cfg->ops;

		if (ops != NULL && ops->reauth_remove != NULL)
			(void)!ops->reauth_remove(ops->arg, s->reauth_id,
						  s->reauth_id_len);
		tw_eap_reauth_state_wipe(&s->ids.reauth);
		tw_wipe(&s->keys, sizeof(s->keys));
		tw_simaka_mac_wipe(&s->mac);
		s->reauth = false;
		s->given_ids = false;
		act = send_start(s, TW_AT_FULLAUTH_ID_REQ, out, max, out_len);
		goto out;
	}
	s->result_ind_both = s->result_ind_sent && tw_simaka_has(&m->result_ind);
	act = succeed(s, out, max, out_len);
out:
	tw_wipe(plain, sizeof(plain));
	return act;
}

static int on_notification(struct tw_eap_sim_server *s,
			   const struct tw_simaka_msg *m, uint8_t *out,
			   size_t max, size_t *out_len)
{
	int rc;

	if (s->state == SS_NOTIF_FAIL)
		/* §6.3.2: after the peer's response, EAP-Failure */
		return reject(s, out, max, out_len);
	/* §9.9: the response to a P = 0 notification carries AT_MAC over
	 * the packet (no extra data) */
	if (m->subtype != TW_SIMAKA_NOTIFICATION ||
	    tw_simaka_mac_verify(&s->mac, m, NULL, 0) != TW_OK)
		return reject(s, out, max, out_len);
	rc = tw_eap_result(out, max, TW_EAP_SUCCESS, s->id, out_len);
	if (rc != TW_OK)
		return rc;
	return accepted(s);
}

int tw_eap_sim_server_input(struct tw_eap_sim_server *s, const uint8_t *pkt,
			    size_t len, uint8_t *out, size_t max,
			    size_t *out_len)
{
	struct tw_eap_view v;
	struct tw_simaka_msg m;

	if (s == NULL || pkt == NULL || out == NULL || out_len == NULL ||
	    s->cfg == NULL)
		return TW_ERR_INVAL;
	if (max < TW_EAP_OUT_MIN)
		return TW_ERR_OVERFLOW;
	*out_len = 0;
	if (s->state == SS_VECTOR || s->state == SS_SUCCESS ||
	    s->state == SS_FAILURE)
		return TW_ERR_STATE;
	/* RFC 3748 §4.1: malformed, a non-response, or a response whose
	 * Identifier does not match the outstanding request: discard */
	if (tw_eap_decode(&v, pkt, len) != TW_OK || v.code != TW_EAP_RESPONSE)
		return TW_EAP_DISCARD;
	if (s->state != SS_INIT && v.id != s->id)
		return TW_EAP_DISCARD;

	if (s->state == SS_INIT || s->state == SS_IDENTITY) {
		if (v.type != TW_EAP_TYPE_IDENTITY)
			return TW_EAP_DISCARD;
		if (s->state == SS_INIT)
			s->id = v.id;
		if (v.data_len > sizeof(s->identity))
			return reject(s, out, max, out_len);
		/* §7: without AT_IDENTITY the MK uses this identity */
		if (v.data_len)
			memcpy(s->identity, v.data, v.data_len);
		s->identity_len = v.data_len;
		s->ids.asked = 0;
		return on_identity(s, tw_eap_id_process(&s->ids, s->cfg,
							 s->identity,
							 s->identity_len),
				   NULL, out, max, out_len);
	}
	/* RFC 3748 §5.3.1: a Nak means the peer will not do EAP-SIM */
	if (v.type == TW_EAP_TYPE_NAK)
		return reject(s, out, max, out_len);
	if (v.type != TW_EAP_TYPE_SIM)
		return TW_EAP_DISCARD;
	/* RFC 4186 §8.1, §6.3.2: a malformed EAP-SIM response (bad lengths,
	 * an unknown non-skippable attribute, duplicates...) is an error */
	if (tw_simaka_decode(&m, pkt, len) != TW_OK)
		return s->state == SS_NOTIF_FAIL ? reject(s, out, max, out_len)
						 : fail_notify(s, out, max, out_len);
	/* §6.3.2 / §9.10: after SIM/Client-Error, EAP-Failure */
	if (m.subtype == TW_SIMAKA_CLIENT_ERROR)
		return reject(s, out, max, out_len);

	switch (s->state) {
	case SS_START:
		if (m.subtype != TW_SIMAKA_SIM_START)
			return fail_notify(s, out, max, out_len);
		return on_start(s, &m, out, max, out_len);
	case SS_CHALLENGE:
		return on_challenge(s, &m, out, max, out_len);
	case SS_REAUTH:
		return on_reauth(s, &m, out, max, out_len);
	case SS_NOTIF_OK:
	case SS_NOTIF_FAIL:
		return on_notification(s, &m, out, max, out_len);
	}
	return TW_ERR_STATE;
}
