/*
 * twag — EAP Re-authentication Protocol (RFC 6696, July 2012): the key
 * hierarchy under the EMSK (RFC 5295, August 2008, §3), the EAP-Initiate /
 * EAP-Finish Re-auth codec, and the server and peer state.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/erp.h"
#include "twag/hmac.h"
#include "twag/kdf.h"

/* RFC 6696 §4.1, §4.3, §4.6 and RFC 5295 §3.2 key labels (8-bit ASCII,
 * without the terminating NUL, which the KDF appends as "\0"). */
static const char rrk_label[] = "EAP Re-authentication Root Key@ietf.org";
static const char rik_label[] = "Re-authentication Integrity Key@ietf.org";
static const char rmsk_label[] = "Re-authentication Master Session Key@ietf.org";
static const char emsk_label[] = "EMSK";

int tw_erp_kdf(uint8_t *out, size_t out_len, const uint8_t *key,
	       size_t key_len, const char *label, const uint8_t *opt,
	       size_t opt_len)
{
	static const uint8_t nul = 0;
	uint8_t length[2];

	if (out == NULL || label == NULL || (key == NULL && key_len != 0) ||
	    (opt == NULL && opt_len != 0))
		return TW_ERR_INVAL;
	/* RFC 5295 §3.1.2: length is a 2-octet count of output octets; the
	 * PRF+ block counter is one octet (at most 255 blocks). */
	if (out_len == 0 || out_len > TW_PRF_PRIME_MAX_LEN)
		return TW_ERR_LENGTH;
	tw_store_be16(length, (uint16_t)out_len);
	/* RFC 5295 §3.1.2: S = key label | "\0" | optional data | length;
	 * PRF+(K, S) = T1 | T2 | ..., T1 = prf(K, S | 0x01),
	 * Tn = prf(K, Tn-1 | S | n) -- the RFC 9048 PRF' construction. */
	const struct tw_kdf_param s[4] = {
		{ (const uint8_t *)label, strlen(label) },
		{ &nul, 1 },
		{ opt, opt_len },
		{ length, 2 },
	};
	return tw_prf_prime(out, out_len, key, key_len, s, 4);
}

int tw_erp_emsk_name(uint8_t name[static 8], const uint8_t *session_id,
		     size_t sid_len)
{
	if (session_id == NULL || sid_len == 0)
		return TW_ERR_LENGTH;
	/* RFC 5295 §3.2: EMSKname = KDF(EAP Session-ID, "EMSK" | "\0" |
	 * length), length = 8 octets */
	return tw_erp_kdf(name, TW_ERP_EMSK_NAME_LEN, session_id, sid_len,
			  emsk_label, NULL, 0);
}

int tw_erp_rrk(uint8_t rrk[static 64], const uint8_t emsk[static 64])
{
	/* RFC 6696 §4.1: rRK = KDF(K, S), K = EMSK, S = rRK Label | "\0" |
	 * length; the rRK is as long as the EMSK. */
	return tw_erp_kdf(rrk, TW_ERP_RRK_LEN, emsk, TW_ERP_EMSK_LEN, rrk_label,
			  NULL, 0);
}

size_t tw_erp_tag_len(uint8_t cryptosuite)
{
	/* §5.3.2: 1 = HMAC-SHA256-64, 2 = HMAC-SHA256-128, 3 = HMAC-SHA256-256 */
	switch (cryptosuite) {
	case TW_ERP_CS_HMAC_SHA256_64:
		return 8;
	case TW_ERP_CS_HMAC_SHA256_128:
		return 16;
	case TW_ERP_CS_HMAC_SHA256_256:
		return 32;
	default:
		return 0;
	}
}

int tw_erp_rik(uint8_t rik[static 64], const uint8_t rrk[static 64],
	       uint8_t cryptosuite)
{
	if (tw_erp_tag_len(cryptosuite) == 0) {
		memset(rik, 0, TW_ERP_RIK_LEN);
		return TW_ERR_UNSUPPORTED;
	}
	/* §4.3: rIK = KDF(K, S), K = rRK, S = rIK Label | "\0" |
	 * cryptosuite | length; the rIK is as long as the rRK. */
	return tw_erp_kdf(rik, TW_ERP_RIK_LEN, rrk, TW_ERP_RRK_LEN, rik_label,
			  &cryptosuite, 1);
}

int tw_erp_rmsk(uint8_t rmsk[static 64], const uint8_t rrk[static 64],
		uint16_t seq)
{
	uint8_t s[2];

	/* §4.6: rMSK = KDF(K, S), K = rRK, S = rMSK Label | "\0" | SEQ |
	 * length; SEQ is the 16-bit sequence number of the Re-auth. */
	tw_store_be16(s, seq);
	return tw_erp_kdf(rmsk, TW_ERP_RMSK_LEN, rrk, TW_ERP_RRK_LEN,
			  rmsk_label, s, 2);
}

void tw_erp_key_wipe(struct tw_erp_key_ctx *k)
{
	if (k != NULL)
		tw_wipe(k, sizeof(*k));
}

int tw_erp_key_init(struct tw_erp_key_ctx *k, const uint8_t emsk[static 64],
		    const uint8_t *session_id, size_t sid_len,
		    const char *realm, size_t realm_len, uint8_t cryptosuite)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t name[TW_ERP_EMSK_NAME_LEN], rik[TW_ERP_RIK_LEN];
	int err;

	if (k == NULL)
		return TW_ERR_INVAL;
	memset(k, 0, sizeof(*k));
	if (realm == NULL || realm_len == 0 ||
	    2 * TW_ERP_EMSK_NAME_LEN + 1 + realm_len > TW_ERP_NAI_MAX) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	err = tw_erp_emsk_name(name, session_id, sid_len);
	if (err != TW_OK)
		goto out;
	/* §5.3.2 keyName-NAI: the username is the EMSKname in hexadecimal,
	 * the realm that of the ER server. */
	for (size_t i = 0; i < TW_ERP_EMSK_NAME_LEN; i++) {
		k->keyname_nai[2 * i] = (uint8_t)hex[name[i] >> 4];
		k->keyname_nai[2 * i + 1] = (uint8_t)hex[name[i] & 15];
	}
	k->keyname_nai[16] = '@';
	memcpy(k->keyname_nai + 17, realm, realm_len);
	k->keyname_nai_len = (uint8_t)(17 + realm_len);

	err = tw_erp_rrk(k->rrk, emsk);
	if (err != TW_OK)
		goto out;
	err = tw_erp_rik(rik, k->rrk, cryptosuite);
	if (err != TW_OK)
		goto out;
	/* The rIK is only ever used as an HMAC key: keep its keyed state. */
	tw_hmac_sha256_init(&k->rik, rik, sizeof(rik));
	k->cryptosuite = cryptosuite;
	k->next_seq = 0;
out:
	if (err != TW_OK)
		tw_wipe(k, sizeof(*k));
	tw_wipe(rik, sizeof(rik));
	tw_wipe(name, sizeof(name));
	return err;
}

/* §5.3.4: parses the TVs/TLVs of p[0..n) into m; every octet must belong
 * to an attribute. */
static int parse_attrs(struct tw_erp_msg *m, const uint8_t *p, size_t n)
{
	while (n != 0) {
		uint8_t t = p[0];

		if (t == TW_ERP_TV_RRK_LIFETIME || t == TW_ERP_TV_RMSK_LIFETIME) {
			/* TV: Type, 4-octet Value */
			if (n < 5)
				return TW_ERR_DECODE;
			bool *has = t == TW_ERP_TV_RRK_LIFETIME ?
					    &m->has_rrk_lifetime :
					    &m->has_rmsk_lifetime;
			if (*has)
				return TW_ERR_DECODE;
			*has = true;
			if (t == TW_ERP_TV_RRK_LIFETIME)
				m->rrk_lifetime = tw_load_be32(p + 1);
			else
				m->rmsk_lifetime = tw_load_be32(p + 1);
			p += 5;
			n -= 5;
			continue;
		}
		/* TLV: Type, Length (one octet), Value; the length is checked
		 * against what is left before anything is subtracted. */
		if (n < 2)
			return TW_ERR_DECODE;
		size_t l = p[1];
		if (l > n - 2)
			return TW_ERR_DECODE;
		const uint8_t *v = p + 2;
		const uint8_t **slot = NULL;
		size_t *slot_len = NULL;

		switch (t) {
		case TW_ERP_TLV_KEYNAME_NAI:
			if (l == 0 || l > TW_ERP_NAI_MAX)
				return TW_ERR_DECODE;
			slot = &m->keyname_nai;
			slot_len = &m->keyname_nai_len;
			break;
		case TW_ERP_TLV_DOMAIN_NAME:
			slot = &m->domain;
			slot_len = &m->domain_len;
			break;
		case TW_ERP_TLV_CRYPTOSUITES:
			slot = &m->cryptosuites;
			slot_len = &m->cryptosuites_len;
			break;
		case TW_ERP_TLV_AUTH_INDICATION:
			slot = &m->auth_ind;
			slot_len = &m->auth_ind_len;
			break;
		default:
			/* 128..191 are non-critical TLVs: skipped. Anything
			 * else unknown cannot be understood (a critical TLV,
			 * or a type whose TV/TLV form is unknown). */
			if (t < 128 || t > 191)
				return TW_ERR_DECODE;
			break;
		}
		if (slot != NULL) {
			if (l == 0 || *slot != NULL)
				return TW_ERR_DECODE; /* empty or duplicated */
			*slot = v;
			*slot_len = l;
		}
		p += 2 + l;
		n -= 2 + l;
	}
	return TW_OK;
}

/* The cryptosuites the generic decode tries from the end, the mandatory
 * default first. */
static const uint8_t any_suite[3] = { TW_ERP_CS_HMAC_SHA256_128, TW_ERP_CS_HMAC_SHA256_256,
				      TW_ERP_CS_HMAC_SHA256_64 };

static int decode_suites(struct tw_erp_msg *m, const uint8_t *pkt, size_t pkt_len,
			 const uint8_t *order, size_t norder);

int tw_erp_decode(struct tw_erp_msg *m, const uint8_t *pkt, size_t pkt_len)
{
	return decode_suites(m, pkt, pkt_len, any_suite, sizeof(any_suite));
}

int tw_erp_decode_suite(struct tw_erp_msg *m, const uint8_t *pkt, size_t pkt_len,
			uint8_t cryptosuite)
{
	if (tw_erp_tag_len(cryptosuite) == 0) {
		if (m != NULL)
			memset(m, 0, sizeof(*m));
		return TW_ERR_INVAL;
	}
	return decode_suites(m, pkt, pkt_len, &cryptosuite, 1);
}

static int decode_suites(struct tw_erp_msg *m, const uint8_t *pkt, size_t pkt_len,
			 const uint8_t *order, size_t norder)
{
	struct tw_eap_view v;
	int err;

	if (m == NULL)
		return TW_ERR_INVAL;
	memset(m, 0, sizeof(*m));
	err = tw_eap_decode(&v, pkt, pkt_len);
	if (err != TW_OK)
		return err;
	if (v.code != TW_EAP_INITIATE && v.code != TW_EAP_FINISH)
		return TW_ERR_DECODE;

	struct tw_erp_msg base = { .code = v.code, .id = v.id, .type = v.type };

	if (v.type == TW_ERP_TYPE_REAUTH_START) {
		/* §5.3.1: only as EAP-Initiate; Reserved octet (ignored on
		 * receipt), then optional TVs/TLVs, no tag. */
		if (v.code != TW_EAP_INITIATE || v.data_len < 1)
			return TW_ERR_DECODE;
		*m = base;
		err = parse_attrs(m, v.data + 1, v.data_len - 1);
		if (err == TW_OK && m->keyname_nai != NULL)
			err = TW_ERR_DECODE;
		if (err != TW_OK)
			memset(m, 0, sizeof(*m));
		return err;
	}
	if (v.type != TW_ERP_TYPE_REAUTH)
		return TW_ERR_DECODE;
	/* §5.3.2/§5.3.3: Flags, SEQ (2), TVs/TLVs, Cryptosuite, Tag */
	if (v.data_len < 3)
		return TW_ERR_DECODE;
	base.flags = v.data[0];
	base.seq = tw_load_be16(v.data + 1);

	const uint8_t *attrs = v.data + 3;
	size_t n = v.data_len - 3;
	/* The tag length depends on the cryptosuite octet that precedes it:
	 * try each suite of order from the end. More than one may fit (a tag
	 * octet that reads as another suite with attributes that happen to
	 * tile): who knows the key's suite decodes with it alone. */
	for (size_t i = 0; i < norder; i++) {
		size_t tl = tw_erp_tag_len(order[i]);

		if (n < 1 + tl || attrs[n - tl - 1] != order[i])
			continue;
		*m = base;
		if (parse_attrs(m, attrs, n - tl - 1) != TW_OK ||
		    m->keyname_nai == NULL)
			continue;
		m->cryptosuite = order[i];
		m->tag = attrs + n - tl;
		m->tag_len = tl;
		m->signed_len = (size_t)(m->tag - pkt);
		return TW_OK;
	}
	/* A failure Finish may come without a tag when the server could not
	 * find the key (§5.3.3); it is reported, never trusted. */
	if (v.code == TW_EAP_FINISH && (base.flags & TW_ERP_FLAG_R)) {
		*m = base;
		if (parse_attrs(m, attrs, n) == TW_OK && m->keyname_nai != NULL)
			return TW_OK;
	}
	memset(m, 0, sizeof(*m));
	return TW_ERR_DECODE;
}

static void compute_tag(uint8_t tag[static 32], const struct tw_erp_key_ctx *k,
			const uint8_t *signed_part, size_t len)
{
	struct tw_hmac_sha256_ctx h = k->rik;

	/* §5.3.2: the tag is computed over the whole EAP packet from Code
	 * through Cryptosuite, under the rIK. */
	tw_hmac_sha256_update(&h, signed_part, len);
	tw_hmac_sha256_final(&h, tag);
	tw_hmac_sha256_wipe(&h);
}

static size_t put_tlv(uint8_t *p, uint8_t type, const uint8_t *v, size_t l)
{
	p[0] = type;
	p[1] = (uint8_t)l;
	memcpy(p + 2, v, l);
	return 2 + l;
}

int tw_erp_encode(uint8_t *buf, size_t max, size_t *len,
		  const struct tw_erp_msg *m, const struct tw_erp_key_ctx *k)
{
	const struct {
		uint8_t type;
		const uint8_t *v;
		size_t l;
	} tlv[4] = {
		{ TW_ERP_TLV_KEYNAME_NAI, m ? m->keyname_nai : NULL, m ? m->keyname_nai_len : 0 },
		{ TW_ERP_TLV_DOMAIN_NAME, m ? m->domain : NULL, m ? m->domain_len : 0 },
		{ TW_ERP_TLV_CRYPTOSUITES, m ? m->cryptosuites : NULL, m ? m->cryptosuites_len : 0 },
		{ TW_ERP_TLV_AUTH_INDICATION, m ? m->auth_ind : NULL, m ? m->auth_ind_len : 0 },
	};
	size_t body, tl = 0;
	bool reauth;

	if (buf == NULL || len == NULL || m == NULL)
		return TW_ERR_INVAL;
	*len = 0;
	if (m->code != TW_EAP_INITIATE && m->code != TW_EAP_FINISH)
		return TW_ERR_INVAL;
	if (m->type == TW_ERP_TYPE_REAUTH_START) {
		if (m->code != TW_EAP_INITIATE || m->keyname_nai != NULL)
			return TW_ERR_INVAL;
		reauth = false;
		body = 1;
	} else if (m->type == TW_ERP_TYPE_REAUTH) {
		/* §5.3.2/§5.3.3: keyName-NAI is mandatory */
		if (m->keyname_nai == NULL || m->keyname_nai_len == 0 ||
		    m->keyname_nai_len > TW_ERP_NAI_MAX)
			return TW_ERR_INVAL;
		if (k != NULL)
			tl = tw_erp_tag_len(k->cryptosuite);
		else if (!(m->code == TW_EAP_FINISH && (m->flags & TW_ERP_FLAG_R)))
			return TW_ERR_INVAL; /* only a failure Finish goes untagged */
		if (k != NULL && tl == 0)
			return TW_ERR_INVAL;
		reauth = true;
		body = 3 + (tl ? 1 + tl : 0);
	} else {
		return TW_ERR_INVAL;
	}
	for (size_t i = 0; i < 4; i++) {
		if (tlv[i].v == NULL && tlv[i].l != 0)
			return TW_ERR_INVAL;
		if (tlv[i].l > TW_ERP_TLV_MAX)
			return TW_ERR_LENGTH;
		if (tlv[i].v != NULL && tlv[i].l == 0)
			return TW_ERR_INVAL;
		body += tlv[i].v ? 2 + tlv[i].l : 0;
	}
	body += (m->has_rrk_lifetime ? 5 : 0) + (m->has_rmsk_lifetime ? 5 : 0);
	if (max < 5 || body > max - 5)
		return TW_ERR_OVERFLOW;

	/* Body in place at buf + 5; tw_eap_encode() then adds the header. */
	uint8_t *p = buf + 5;
	if (reauth) {
		p[0] = m->flags;
		tw_store_be16(p + 1, m->seq);
		p += 3;
	} else {
		*p++ = 0; /* §5.3.1 Reserved: zero on transmission */
	}
	for (size_t i = 0; i < 4; i++)
		if (tlv[i].v != NULL)
			p += put_tlv(p, tlv[i].type, tlv[i].v, tlv[i].l);
	if (m->has_rrk_lifetime) {
		*p++ = TW_ERP_TV_RRK_LIFETIME;
		tw_store_be32(p, m->rrk_lifetime);
		p += 4;
	}
	if (m->has_rmsk_lifetime) {
		*p++ = TW_ERP_TV_RMSK_LIFETIME;
		tw_store_be32(p, m->rmsk_lifetime);
		p += 4;
	}
	if (tl != 0)
		*p++ = k->cryptosuite;
	int err = tw_eap_encode(buf, max, len, m->code, m->id, m->type, buf + 5,
				body);
	if (err != TW_OK)
		return err;
	if (tl != 0) {
		uint8_t tag[32];

		compute_tag(tag, k, buf, *len - tl);
		memcpy(buf + *len - tl, tag, tl);
		tw_wipe(tag, sizeof(tag));
	}
	return TW_OK;
}

int tw_erp_build_reauth_start(uint8_t *buf, size_t max, size_t *len,
			      uint8_t id, const uint8_t *domain,
			      size_t domain_len)
{
	const struct tw_erp_msg m = {
		.code = TW_EAP_INITIATE,
		.id = id,
		.type = TW_ERP_TYPE_REAUTH_START,
		.domain = domain_len ? domain : NULL,
		.domain_len = domain_len,
	};
	if (domain == NULL && domain_len != 0)
		return TW_ERR_INVAL;
	return tw_erp_encode(buf, max, len, &m, NULL);
}

int tw_erp_verify_tag(const struct tw_erp_key_ctx *k, const uint8_t *pkt,
		      const struct tw_erp_msg *m)
{
	uint8_t tag[32];
	bool ok;

	if (k == NULL || pkt == NULL || m == NULL)
		return TW_ERR_INVAL;
	if (m->tag == NULL || m->cryptosuite != k->cryptosuite ||
	    m->tag_len != tw_erp_tag_len(k->cryptosuite))
		return TW_ERR_AUTH;
	compute_tag(tag, k, pkt, m->signed_len);
	ok = tw_ct_eq(tag, m->tag, m->tag_len);
	tw_wipe(tag, sizeof(tag));
	return ok ? TW_OK : TW_ERR_AUTH;
}

int tw_erp_build_finish_failure(uint8_t *buf, size_t max, size_t *len,
				uint8_t id, uint16_t seq, const uint8_t *nai,
				size_t nai_len, const struct tw_erp_key_ctx *k)
{
	const struct tw_erp_msg m = {
		.code = TW_EAP_FINISH,
		.id = id,
		.type = TW_ERP_TYPE_REAUTH,
		.flags = TW_ERP_FLAG_R, /* §5.3.3: R = 1, failure */
		.seq = seq,
		.keyname_nai = nai,
		.keyname_nai_len = nai_len,
	};
	return tw_erp_encode(buf, max, len, &m, k);
}

int tw_erp_server_reauth(tw_erp_lookup_fn lookup, void *arg,
			 const uint8_t *pkt, size_t pkt_len, uint8_t *out,
			 size_t out_max, size_t *out_len,
			 uint8_t rmsk[static 64], struct tw_erp_key_ctx **key_out)
{
	struct tw_erp_key_ctx *k = NULL;
	struct tw_erp_msg m;
	uint8_t key[TW_ERP_RMSK_LEN];
	int err;

	memset(rmsk, 0, TW_ERP_RMSK_LEN);
	if (key_out != NULL)
		*key_out = NULL;
	if (lookup == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	*out_len = 0;
	err = tw_erp_decode(&m, pkt, pkt_len);
	if (err != TW_OK)
		return err;
	if (m.code != TW_EAP_INITIATE || m.type != TW_ERP_TYPE_REAUTH)
		return TW_ERR_DECODE;
	if (lookup(arg, m.keyname_nai, m.keyname_nai_len, &k) != TW_OK || k == NULL)
		return TW_ERR_NOTFOUND;
	if (key_out != NULL)
		*key_out = k;
	/* §5.3.2: a cryptosuite the server does not use for this key is
	 * answered with a failure (and the Cryptosuite List). The guess from
	 * the end may have split the packet for another suite than the one
	 * it carries: split again with the key's before refusing. */
	if (m.cryptosuite != k->cryptosuite) {
		struct tw_erp_msg again;

		if (tw_erp_decode_suite(&again, pkt, pkt_len, k->cryptosuite) != TW_OK ||
		    again.code != TW_EAP_INITIATE || again.type != TW_ERP_TYPE_REAUTH ||
		    again.keyname_nai_len != m.keyname_nai_len ||
		    memcmp(again.keyname_nai, m.keyname_nai, m.keyname_nai_len) != 0)
			return TW_ERR_UNSUPPORTED;
		m = again;
	}
	/* §5.3.2: integrity first, in constant time; nothing in the packet
	 * is acted on before it verifies. */
	err = tw_erp_verify_tag(k, pkt, &m);
	if (err != TW_OK)
		return err;
	/* §5.3.2 replay protection: only a SEQ above the last accepted one */
	if (k->seq_seen && m.seq <= k->last_seq)
		return TW_ERR_REPLAY;
	err = tw_erp_rmsk(key, k->rrk, m.seq);
	if (err != TW_OK)
		goto out;

	const struct tw_erp_msg f = {
		.code = TW_EAP_FINISH,
		.id = m.id,
		.type = TW_ERP_TYPE_REAUTH,
		.flags = 0, /* R = 0: success */
		.seq = m.seq,
		.keyname_nai = k->keyname_nai,
		.keyname_nai_len = k->keyname_nai_len,
	};
	err = tw_erp_encode(out, out_max, out_len, &f, k);
	if (err != TW_OK) {
		*out_len = 0;
		goto out;
	}
	/* Commit only now: the tag verified and the answer exists. */
	k->seq_seen = true;
	k->last_seq = m.seq;
	memcpy(rmsk, key, TW_ERP_RMSK_LEN);
out:
	tw_wipe(key, sizeof(key));
	return err;
}

int tw_erp_peer_build_reauth(struct tw_erp_key_ctx *k, uint8_t *buf,
			     size_t max, size_t *len, uint8_t id, uint8_t flags)
{
	if (k == NULL)
		return TW_ERR_INVAL;
	/* SEQ is 16 bits and never reused under one rRK */
	if (k->next_seq > 0xffff)
		return TW_ERR_RANGE;
	const struct tw_erp_msg m = {
		.code = TW_EAP_INITIATE,
		.id = id,
		.type = TW_ERP_TYPE_REAUTH,
		.flags = (uint8_t)(flags & (TW_ERP_FLAG_B | TW_ERP_FLAG_L)),
		.seq = (uint16_t)k->next_seq,
		.keyname_nai = k->keyname_nai,
		.keyname_nai_len = k->keyname_nai_len,
	};
	int err = tw_erp_encode(buf, max, len, &m, k);

	if (err != TW_OK)
		return err;
	k->pending = true;
	k->pending_seq = m.seq;
	k->next_seq++;
	return TW_OK;
}

int tw_erp_peer_finish(struct tw_erp_key_ctx *k, const uint8_t *pkt,
		       size_t pkt_len, uint8_t rmsk[static 64])
{
	struct tw_erp_msg m;
	int err;

	memset(rmsk, 0, TW_ERP_RMSK_LEN);
	if (k == NULL)
		return TW_ERR_INVAL;
	if (!k->pending)
		return TW_ERR_STATE;
	/* the peer knows its key's cryptosuite: the tag is split with it */
	err = tw_erp_decode_suite(&m, pkt, pkt_len, k->cryptosuite);
	if (err != TW_OK)
		return err;
	if (m.code != TW_EAP_FINISH || m.type != TW_ERP_TYPE_REAUTH)
		return TW_ERR_DECODE;
	if (m.keyname_nai_len != k->keyname_nai_len ||
	    memcmp(m.keyname_nai, k->keyname_nai, m.keyname_nai_len) != 0)
		return TW_ERR_STATE; /* not about our key */
	/* An untagged or badly tagged Finish proves nothing: the exchange
	 * stays open for the genuine answer. */
	err = tw_erp_verify_tag(k, pkt, &m);
	if (err != TW_OK)
		return err;
	if (m.seq != k->pending_seq)
		return TW_ERR_STATE;
	k->pending = false;
	if (m.flags & TW_ERP_FLAG_R)
		return TW_ERR_AUTH; /* §5.3.3: R = 1, the server refused */
	return tw_erp_rmsk(rmsk, k->rrk, m.seq);
}
