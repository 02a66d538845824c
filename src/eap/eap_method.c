/*
 * twag — helpers shared by the EAP-SIM/AKA/AKA' engines: leading digits,
 * minted identities, identity rounds, Session-Id (RFC 4186 and RFC 4187,
 * January 2006; RFC 9048, October 2021; RFC 5247 Appendix A with RFC 8940).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_method.h"
#include "twag/nai.h"
#include "twag/simaka.h"

char tw_eap_id_digit(uint8_t method, uint8_t kind)
{
	/* RFC 4187 §4.1.1.3-§4.1.1.7 (0/2/4), RFC 4186 §4.2.1.3-§4.2.1.5
	 * (1/3/5), TS 23.003 §19.3.2 and RFC 9048 §3 (6/7/8 for AKA') */
	static const char digits[3][3] = {
		{ '0', '2', '4' }, { '1', '3', '5' }, { '6', '7', '8' } };
	int m;

	if (method == TW_EAP_TYPE_AKA)
		m = 0;
	else if (method == TW_EAP_TYPE_SIM)
		m = 1;
	else if (method == TW_EAP_TYPE_AKA_PRIME)
		m = 2;
	else
		return 0;
	if (kind < TW_NAI_PERMANENT || kind > TW_NAI_REAUTH)
		return 0;
	return digits[m][kind - 1];
}

int tw_eap_session_id(struct tw_eap_keys *k, uint8_t type, const uint8_t *a,
		      size_t a_len, const uint8_t *b, size_t b_len)
{
	if (k == NULL || (a == NULL && a_len) || (b == NULL && b_len))
		return TW_ERR_INVAL;
	if (1 + a_len + b_len > sizeof(k->session_id))
		return TW_ERR_LENGTH;
	k->session_id[0] = type;
	if (a_len)
		memcpy(k->session_id + 1, a, a_len);
	if (b_len)
		memcpy(k->session_id + 1 + a_len, b, b_len);
	k->session_id_len = 1 + a_len + b_len;
	return TW_OK;
}

int tw_eap_mint_id(const struct tw_eap_server_cfg *cfg, uint8_t method,
		   uint8_t kind, bool with_realm, const char *imsi,
		   size_t imsi_len, uint8_t *out, size_t max, size_t *out_len)
{
	/* 32 symbols: each random octet gives 5 unbiased bits */
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuv";
	uint8_t body[TW_EAP_GEN_ID_BODY_MAX];
	size_t len, body_len = 0;
	char digit = tw_eap_id_digit(method, kind);
	int rc;

	if (cfg == NULL || cfg->ops == NULL || cfg->ops->random == NULL ||
	    out == NULL || out_len == NULL || digit == 0 ||
	    (imsi == NULL && imsi_len))
		return TW_ERR_INVAL;
	if (cfg->ops->mint_body != NULL) {
		rc = cfg->ops->mint_body(cfg->ops->arg, digit, imsi, imsi_len, body,
					 sizeof(body), &body_len);
		if (rc == TW_OK && (body_len == 0 || body_len > sizeof(body)))
			rc = TW_ERR_INVAL;
	} else {
		body_len = TW_EAP_GEN_ID_RANDOM;
		rc = cfg->ops->random(cfg->ops->arg, body, body_len);
		for (size_t i = 0; rc == TW_OK && i < body_len; i++)
			body[i] = (uint8_t)alphabet[body[i] & 31];
	}
	if (rc != TW_OK)
		goto out;
	len = 1 + body_len;
	if (with_realm && cfg->realm != NULL && cfg->realm_len)
		len += 1 + cfg->realm_len;
	if (len > max || len > TW_EAP_ID_MAX) {
		rc = TW_ERR_OVERFLOW;
		goto out;
	}
	out[0] = (uint8_t)digit;
	memcpy(out + 1, body, body_len);
	if (len > 1 + body_len) {
		out[1 + body_len] = '@';
		memcpy(out + 2 + body_len, cfg->realm, cfg->realm_len);
	}
	*out_len = len;
out:
	tw_wipe(body, sizeof(body));
	return rc;
}

static int append(uint8_t *out, size_t max, size_t *len, const void *p,
		  size_t n)
{
	if (n > max - *len)
		return TW_ERR_OVERFLOW;
	memcpy(out + *len, p, n);
	*len += n;
	return TW_OK;
}

int tw_eap_peer_identity(const struct tw_eap_peer_cfg *cfg,
			 const struct tw_eap_peer_ids *ids, uint8_t method,
			 bool allow_reauth, bool allow_pseudonym, uint8_t *out,
			 size_t max, size_t *out_len, uint8_t *kind)
{
	size_t len = 0;
	char digit;
	int rc;

	if (cfg == NULL || out == NULL || out_len == NULL || kind == NULL)
		return TW_ERR_INVAL;
	/* RFC 4187 §4.1.1.8/§4.1.6: the re-auth id is used as is (it carries
	 * its realm); a pseudonym gets the realm of the permanent NAI */
	if (ids != NULL && allow_reauth && cfg->use_reauth &&
	    ids->reauth_id_len && ids->reauth.method == method) {
		if (ids->reauth_id_len > max)
			return TW_ERR_OVERFLOW;
		memcpy(out, ids->reauth_id, ids->reauth_id_len);
		*out_len = ids->reauth_id_len;
		*kind = TW_NAI_REAUTH;
		return TW_OK;
	}
	/* RFC 7542 §2.3: with its realm a pseudonym must still be an NAI of
	 * at most 253 octets; a longer one (the server's choice) is not used,
	 * the permanent identity is */
	if (ids != NULL && allow_pseudonym && cfg->use_pseudonym &&
	    ids->pseudonym_len && ids->pseudonym_method == method &&
	    ids->pseudonym_len + (cfg->realm != NULL && cfg->realm_len ? 1 + cfg->realm_len : 0) <=
		    TW_EAP_ID_MAX) {
		rc = append(out, max, &len, ids->pseudonym, ids->pseudonym_len);
		*kind = TW_NAI_PSEUDONYM;
	} else {
		digit = tw_eap_id_digit(method, TW_NAI_PERMANENT);
		if (digit == 0 || cfg->imsi == NULL)
			return TW_ERR_INVAL;
		rc = append(out, max, &len, &digit, 1);
		if (rc == TW_OK)
			rc = append(out, max, &len, cfg->imsi, cfg->imsi_len);
		*kind = TW_NAI_PERMANENT;
	}
	if (rc == TW_OK && cfg->realm != NULL && cfg->realm_len) {
		rc = append(out, max, &len, "@", 1);
		if (rc == TW_OK)
			rc = append(out, max, &len, cfg->realm, cfg->realm_len);
	}
	if (rc != TW_OK)
		return rc;
	*out_len = len;
	return TW_OK;
}

/* The next request after `asked` that may still be sent: requests only
 * narrow (RFC 4187 §4.1.5: ANY, then FULLAUTH, then PERMANENT). */
static int ask(uint8_t asked, int want)
{
	switch (want) {
	case TW_EAP_ID_ASK_ANY:
		return asked == 0 ? want : TW_EAP_ID_FAIL;
	case TW_EAP_ID_ASK_FULLAUTH:
		return (asked == 0 || asked == TW_AT_ANY_ID_REQ) ? want
								 : TW_EAP_ID_FAIL;
	case TW_EAP_ID_ASK_PERMANENT:
		return asked != TW_AT_PERMANENT_ID_REQ ? want : TW_EAP_ID_FAIL;
	}
	return TW_EAP_ID_FAIL;
}

int tw_eap_id_process(struct tw_eap_id_state *st,
		      const struct tw_eap_server_cfg *cfg,
		      const uint8_t *identity, size_t len)
{
	const struct tw_eap_identity_ops *ops;
	struct tw_nai n;
	uint16_t limit;
	int rc;

	if (st == NULL || cfg == NULL || (identity == NULL && len))
		return TW_ERR_INVAL;
	ops = cfg->ops;
	/* RFC 4187 §4.1.2: the EAP-Response/Identity is not protected and
	 * may have been changed on the way; a policy may ignore it. */
	if (st->asked == 0 && cfg->id_policy == TW_EAP_ID_ALWAYS_ANY)
		return TW_EAP_ID_ASK_ANY;
	if (tw_nai_parse(&n, identity, len) != TW_OK)
		return ask(st->asked, TW_EAP_ID_ASK_ANY);
	if (cfg->id_policy == TW_EAP_ID_ALWAYS_PERMANENT &&
	    n.kind != TW_NAI_PERMANENT)
		return ask(st->asked, TW_EAP_ID_ASK_PERMANENT);

	switch (n.kind) {
	case TW_NAI_REAUTH:
		/* RFC 4187 §4.1.5: a re-auth id answers only a request that
		 * allowed it (none, or AT_ANY_ID_REQ) */
		if (st->asked == TW_AT_FULLAUTH_ID_REQ ||
		    st->asked == TW_AT_PERMANENT_ID_REQ)
			return TW_EAP_ID_FAIL;
		if (!cfg->fast_reauth || ops == NULL || ops->reauth_lookup == NULL)
			return ask(st->asked, TW_EAP_ID_ASK_FULLAUTH);
		rc = ops->reauth_lookup(ops->arg, identity, len, &st->reauth);
		if (rc == TW_ERR_NOTFOUND)
			return ask(st->asked, TW_EAP_ID_ASK_FULLAUTH);
		if (rc != TW_OK)
			return rc;
		limit = cfg->reauth_limit ? cfg->reauth_limit
					  : TW_EAP_DEFAULT_REAUTH_LIMIT;
		/* RFC 4187 §5.1: the counter starts at 1 with the full
		 * authentication; a server may limit re-authentications and
		 * fall back to full authentication (§4.1.6) */
		if (st->reauth.method != st->method ||
		    st->reauth.counter >= limit || st->reauth.imsi_len == 0 ||
		    st->reauth.imsi_len > 15) {
			if (ops->reauth_remove != NULL &&
			    st->reauth.method == st->method)
				(void)!ops->reauth_remove(ops->arg, identity, len);
			tw_eap_reauth_state_wipe(&st->reauth);
			return ask(st->asked, TW_EAP_ID_ASK_FULLAUTH);
		}
		memcpy(st->imsi, st->reauth.imsi, st->reauth.imsi_len);
		st->imsi[st->reauth.imsi_len] = 0;
		st->imsi_len = st->reauth.imsi_len;
		return TW_EAP_ID_REAUTH;
	case TW_NAI_PSEUDONYM:
		if (st->asked == TW_AT_PERMANENT_ID_REQ)
			return TW_EAP_ID_FAIL;
		if (ops == NULL || ops->pseudonym_lookup == NULL)
			return ask(st->asked, TW_EAP_ID_ASK_PERMANENT);
		rc = ops->pseudonym_lookup(ops->arg, n.user, n.user_len,
					   st->imsi, &st->imsi_len);
		/* RFC 4187 §4.1.5: an unknown pseudonym: ask the permanent id */
		if (rc == TW_ERR_NOTFOUND)
			return ask(st->asked, TW_EAP_ID_ASK_PERMANENT);
		if (rc != TW_OK)
			return rc;
		if (st->imsi_len < TW_NAI_IMSI_MIN || st->imsi_len > TW_NAI_IMSI_MAX)
			return TW_ERR_INVAL;
		st->imsi[st->imsi_len] = 0;
		return TW_EAP_ID_PSEUDONYM;
	case TW_NAI_PERMANENT:
		if (tw_nai_imsi(&n, st->imsi, &st->imsi_len) == TW_OK)
			return TW_EAP_ID_PERMANENT;
		return ask(st->asked, TW_EAP_ID_ASK_ANY);
	default:
		/* e.g. "anonymous@realm": RFC 4187 §4.1.6, ask for an id */
		return ask(st->asked, TW_EAP_ID_ASK_ANY);
	}
}

int tw_eap_request_identity(uint8_t *out, size_t max, uint8_t id,
			    size_t *out_len)
{
	return tw_eap_encode(out, max, out_len, TW_EAP_REQUEST, id,
			     TW_EAP_TYPE_IDENTITY, NULL, 0);
}

int tw_eap_result(uint8_t *out, size_t max, uint8_t code, uint8_t id,
		  size_t *out_len)
{
	if (code != TW_EAP_SUCCESS && code != TW_EAP_FAILURE)
		return TW_ERR_INVAL;
	return tw_eap_encode(out, max, out_len, code, id, 0, NULL, 0);
}

void tw_eap_reauth_state_wipe(struct tw_eap_reauth_state *st)
{
	if (st != NULL)
		tw_wipe(st, sizeof(*st));
}

static int take_one(const struct tw_simaka_attr *a, uint8_t *buf, size_t max,
		    size_t *len)
{
	if (!tw_simaka_has(a))
		return TW_OK;
	if (a->len == 0 || a->len > max)
		return TW_ERR_DECODE;
	memcpy(buf, a->val, a->len);
	*len = a->len;
	return TW_OK;
}

int tw_eap_take_next_ids(const struct tw_simaka_msg *in, uint8_t *pseudonym,
			 size_t pseudonym_max, size_t *pseudonym_len,
			 uint8_t *reauth_id, size_t reauth_id_max,
			 size_t *reauth_id_len)
{
	int rc = take_one(&in->next_pseudonym, pseudonym, pseudonym_max,
			  pseudonym_len);

	if (rc == TW_OK)
		rc = take_one(&in->next_reauth_id, reauth_id, reauth_id_max,
			      reauth_id_len);
	return rc;
}
