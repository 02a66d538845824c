/*
 * twag — EAP-SIM/AKA/AKA' attribute decoder and message builder
 * (RFC 4186, January 2006; RFC 4187, January 2006; RFC 9048, October 2021).
 *
 * One table describes every attribute: its wire format, which methods
 * define it, and whether it lives outside or only inside AT_ENCR_DATA. The
 * decoder walks the attributes once; every length is checked against the
 * remaining input before anything is subtracted from it (the classic bug is
 * Length = 0 underflowing 4*L - 4).
 */
#include <stddef.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"

enum fmt {
	F_FIXED16,   /* Reserved(2) | 16 octets: AUTN, NONCE_MT/S, IV, MAC */
	F_FIELD,     /* L = 1, a 2-octet value */
	F_FLAG,      /* L = 1, Reserved(2) */
	F_ACTUAL,    /* Actual Length(2) | octets | zero padding */
	F_VERSIONS,  /* F_ACTUAL with an even, non-zero length */
	F_RAND,      /* Reserved(2) | n * 16 */
	F_RES,       /* RES Length in bits(2) | RES | padding */
	F_AUTS,      /* 14 octets, no Reserved */
	F_PADDING,   /* L = 1..3, all zero */
	F_ENCR,      /* Reserved(2) | n * 16, n >= 1 */
	F_CHECKCODE, /* Reserved(2) | 0, 20 (AKA) or 32 (AKA') octets */
	F_KDF,       /* F_FIELD, may repeat (RFC 9048 §3.2) */
};

enum { M_SIM = 1, M_AKA = 2, M_AKAP = 4, M_ALL = 7, M_AKAS = M_AKA | M_AKAP };
enum { W_OUTER = 1, W_INNER = 2 };

struct at_desc {
	uint8_t fmt;
	uint8_t methods;
	uint8_t where;
	uint16_t field; /* offsetof the struct tw_simaka_attr in the message */
};

#define AT(t, f, m, w, name) [t] = { f, m, w, offsetof(struct tw_simaka_msg, name) }

/* RFC 4186 §10, RFC 4187 §10, RFC 9048 §3.1, §3.2, §4. AT_PADDING,
 * AT_NEXT_PSEUDONYM, AT_NEXT_REAUTH_ID, AT_COUNTER, AT_COUNTER_TOO_SMALL and
 * AT_NONCE_S are only ever sent encrypted (RFC 4187 §10.12, §10.11, §10.17,
 * §10.16, §10.18, §10.19 and their RFC 4186 twins). AT_BIDDING is an
 * EAP-AKA attribute (RFC 9048 §4); elsewhere it is skippable and ignored. */
static const struct at_desc desc[256] = {
	AT(TW_AT_RAND, F_RAND, M_ALL, W_OUTER, rand_),
	AT(TW_AT_AUTN, F_FIXED16, M_AKAS, W_OUTER, autn),
	AT(TW_AT_RES, F_RES, M_AKAS, W_OUTER, res),
	AT(TW_AT_AUTS, F_AUTS, M_AKAS, W_OUTER, auts),
	AT(TW_AT_PADDING, F_PADDING, M_ALL, W_INNER, padding),
	AT(TW_AT_NONCE_MT, F_FIXED16, M_SIM, W_OUTER, nonce_mt),
	AT(TW_AT_PERMANENT_ID_REQ, F_FLAG, M_ALL, W_OUTER, permanent_id_req),
	AT(TW_AT_MAC, F_FIXED16, M_ALL, W_OUTER, mac),
	AT(TW_AT_NOTIFICATION, F_FIELD, M_ALL, W_OUTER, notification),
	AT(TW_AT_ANY_ID_REQ, F_FLAG, M_ALL, W_OUTER, any_id_req),
	AT(TW_AT_IDENTITY, F_ACTUAL, M_ALL, W_OUTER, identity),
	AT(TW_AT_VERSION_LIST, F_VERSIONS, M_SIM, W_OUTER, version_list),
	AT(TW_AT_SELECTED_VERSION, F_FIELD, M_SIM, W_OUTER, selected_version),
	AT(TW_AT_FULLAUTH_ID_REQ, F_FLAG, M_ALL, W_OUTER, fullauth_id_req),
	AT(TW_AT_COUNTER, F_FIELD, M_ALL, W_INNER, counter),
	AT(TW_AT_COUNTER_TOO_SMALL, F_FLAG, M_ALL, W_INNER, counter_too_small),
	AT(TW_AT_NONCE_S, F_FIXED16, M_ALL, W_INNER, nonce_s),
	AT(TW_AT_CLIENT_ERROR_CODE, F_FIELD, M_ALL, W_OUTER, client_error_code),
	AT(TW_AT_KDF_INPUT, F_ACTUAL, M_AKAP, W_OUTER, kdf_input),
	AT(TW_AT_KDF, F_KDF, M_AKAP, W_OUTER, kdf),
	AT(TW_AT_IV, F_FIXED16, M_ALL, W_OUTER, iv),
	AT(TW_AT_ENCR_DATA, F_ENCR, M_ALL, W_OUTER, encr_data),
	AT(TW_AT_NEXT_PSEUDONYM, F_ACTUAL, M_ALL, W_INNER, next_pseudonym),
	AT(TW_AT_NEXT_REAUTH_ID, F_ACTUAL, M_ALL, W_INNER, next_reauth_id),
	AT(TW_AT_CHECKCODE, F_CHECKCODE, M_AKAS, W_OUTER, checkcode),
	AT(TW_AT_RESULT_IND, F_FLAG, M_ALL, W_OUTER, result_ind),
	AT(TW_AT_BIDDING, F_FIELD, M_AKA, W_OUTER, bidding),
};

static unsigned method_bit(uint8_t method)
{
	switch (method) {
	case TW_EAP_TYPE_SIM:
		return M_SIM;
	case TW_EAP_TYPE_AKA:
		return M_AKA;
	case TW_EAP_TYPE_AKA_PRIME:
		return M_AKAP;
	default:
		return 0;
	}
}

static size_t round4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/*
 * Checks one attribute a[0..alen) (alen = 4 * Length >= 4, within the
 * input) against its format and returns the value view in val and vlen.
 */
static int check_format(struct tw_simaka_msg *m, uint8_t fmt, const uint8_t *a,
			size_t alen, const uint8_t **val, size_t *vlen)
{
	size_t n;

	switch (fmt) {
	case F_FIXED16:
		if (alen != 4 + 16)
			return TW_ERR_DECODE;
		*val = a + 4;
		*vlen = 16;
		return TW_OK;
	case F_FIELD:
	case F_KDF:
		if (alen != 4)
			return TW_ERR_DECODE;
		*val = a + 2;
		*vlen = 2;
		return TW_OK;
	case F_FLAG:
		/* RFC 4187 §10.2 etc.: Reserved is ignored on reception. */
		if (alen != 4)
			return TW_ERR_DECODE;
		*val = a + 2;
		*vlen = 0;
		return TW_OK;
	case F_ACTUAL:
	case F_VERSIONS:
		/* RFC 4187 §10.5: Actual Identity Length, then the identity
		 * padded with zeros to a multiple of 4 octets. The actual
		 * length must fit its container and the container must be
		 * exactly that, padded. */
		n = tw_load_be16(a + 2);
		if (n > alen - 4 || round4(4 + n) != alen)
			return TW_ERR_DECODE;
		/* RFC 4186 §10.2: a list of 2-octet versions. */
		if (fmt == F_VERSIONS && (n == 0 || n % 2 != 0))
			return TW_ERR_DECODE;
		*val = a + 4;
		*vlen = n;
		return TW_OK;
	case F_RAND:
		/* RFC 4187 §10.6: exactly one RAND; RFC 4186 §10.9: two or
		 * three (one is accepted here so the method can answer with
		 * Client-Error "insufficient number of challenges"). */
		if (alen < 4 + 16 || (alen - 4) % 16 != 0)
			return TW_ERR_DECODE;
		n = (alen - 4) / 16;
		if (m->method == TW_EAP_TYPE_SIM ? n > 3 : n != 1)
			return TW_ERR_DECODE;
		m->n_rand = (uint8_t)n;
		*val = a + 4;
		*vlen = alen - 4;
		return TW_OK;
	case F_RES: {
		/* RFC 4187 §10.8: RES Length in bits, 32..128. */
		uint16_t bits = tw_load_be16(a + 2);

		if (bits < TW_SIMAKA_RES_MIN_BITS || bits > TW_SIMAKA_RES_MAX_BITS)
			return TW_ERR_DECODE;
		n = ((size_t)bits + 7) / 8;
		if (round4(4 + n) != alen)
			return TW_ERR_DECODE;
		m->res_bits = bits;
		*val = a + 4;
		*vlen = n;
		return TW_OK;
	}
	case F_AUTS:
		/* RFC 4187 §10.9: L = 4, AUTS right after Type/Length. */
		if (alen != 16)
			return TW_ERR_DECODE;
		*val = a + 2;
		*vlen = TW_SIMAKA_AUTS_LEN;
		return TW_OK;
	case F_PADDING:
		/* RFC 4187 §10.12: 4, 8 or 12 octets, all zero. */
		if (alen > 12 || !tw_ct_is_zero(a + 2, alen - 2))
			return TW_ERR_DECODE;
		*val = a + 2;
		*vlen = alen - 2;
		return TW_OK;
	case F_ENCR:
		/* RFC 4187 §10.12: a non-empty multiple of 16 octets. */
		if (alen < 4 + 16 || (alen - 4) % 16 != 0)
			return TW_ERR_DECODE;
		*val = a + 4;
		*vlen = alen - 4;
		return TW_OK;
	case F_CHECKCODE:
		/* RFC 4187 §10.13 (SHA-1, 20) / RFC 9048 §3.4.2 (SHA-256, 32);
		 * an empty checkcode means no AKA-Identity round. */
		n = alen - 4;
		if (n != 0 && n != (m->method == TW_EAP_TYPE_AKA_PRIME ?
					    TW_SIMAKA_CHECKCODE_SHA256_LEN :
					    TW_SIMAKA_CHECKCODE_SHA1_LEN))
			return TW_ERR_DECODE;
		*val = a + 4;
		*vlen = n;
		return TW_OK;
	default:
		return TW_ERR_DECODE;
	}
}

static int decode_one(struct tw_simaka_msg *m, const uint8_t *a, size_t alen,
		      size_t off, unsigned where)
{
	uint8_t type = a[0];
	const struct at_desc *d = &desc[type];
	const uint8_t *val = NULL;
	size_t vlen = 0;
	int err;

	/* RFC 4187 §8.1: an unrecognized attribute 0..127 is fatal, one in
	 * 128..255 is skipped. "Unrecognized" includes an attribute another
	 * of the three methods defines (e.g. AT_AUTN in EAP-SIM). */
	if (d->methods == 0 || (d->methods & method_bit(m->method)) == 0) {
		if (type < 128)
			return TW_ERR_DECODE;
		m->n_skipped++;
		return TW_OK;
	}
	if ((d->where & where) == 0)
		return TW_ERR_DECODE;

	struct tw_simaka_attr *slot =
		(struct tw_simaka_attr *)(void *)((uint8_t *)m + d->field);

	if (slot->val != NULL && d->fmt != F_KDF)
		return TW_ERR_DECODE; /* a duplicate where one is allowed */
	err = check_format(m, d->fmt, a, alen, &val, &vlen);
	if (err != TW_OK)
		return err;

	uint16_t field = tw_load_be16(a + 2);

	switch (type) {
	case TW_AT_NOTIFICATION:
		m->notification_code = field;
		break;
	case TW_AT_SELECTED_VERSION:
		m->selected_ver = field;
		break;
	case TW_AT_COUNTER:
		m->counter_value = field;
		break;
	case TW_AT_CLIENT_ERROR_CODE:
		m->client_error = field;
		break;
	case TW_AT_BIDDING:
		m->bidding_value = field;
		break;
	case TW_AT_KDF:
		/* RFC 9048 §3.2: an ordered list, most preferred first. */
		if (m->n_kdf >= TW_SIMAKA_KDF_MAX)
			return TW_ERR_DECODE;
		m->kdf_list[m->n_kdf++] = field;
		if (slot->val != NULL)
			return TW_OK; /* the view stays on the first one */
		break;
	default:
		break;
	}
	slot->val = val;
	slot->len = (uint16_t)vlen;
	slot->off = (uint16_t)off;
	return TW_OK;
}

/* Walks the attributes of buf[start..end), once. */
static int decode_attrs(struct tw_simaka_msg *m, const uint8_t *buf,
			size_t start, size_t end, unsigned where)
{
	size_t pos = start;

	while (pos < end) {
		if (end - pos < 4)
			return TW_ERR_DECODE; /* no room for even L = 1 */
		size_t l = buf[pos + 1];
		/* RFC 4187 §8.1: Length counts 4-octet words; 0 is invalid
		 * and is rejected before anything is derived from it. */
		if (l == 0 || l * 4 > end - pos)
			return TW_ERR_DECODE;
		int err = decode_one(m, buf + pos, l * 4, pos, where);
		if (err != TW_OK)
			return err;
		pos += l * 4;
	}
	return TW_OK;
}

int tw_simaka_decode(struct tw_simaka_msg *m, const uint8_t *pkt, size_t pkt_len)
{
	struct tw_eap_view v;
	int err;

	if (m == NULL || pkt == NULL)
		return TW_ERR_INVAL;
	memset(m, 0, sizeof(*m));
	err = tw_eap_decode(&v, pkt, pkt_len);
	if (err != TW_OK)
		return err;
	if (v.code != TW_EAP_REQUEST && v.code != TW_EAP_RESPONSE)
		return TW_ERR_UNSUPPORTED;
	if (method_bit(v.type) == 0)
		return TW_ERR_UNSUPPORTED;
	/* RFC 4187 §8.1: Subtype and two Reserved octets follow the Type. */
	if (v.data_len < 3)
		return TW_ERR_DECODE;
	m->code = v.code;
	m->id = v.id;
	m->method = v.type;
	m->subtype = v.data[0];
	m->reserved = tw_load_be16(v.data + 1);
	m->pkt = pkt;
	m->pkt_len = v.length;
	err = decode_attrs(m, pkt, TW_SIMAKA_HDR_LEN, v.length, W_OUTER);
	/* RFC 4187 §10.12: AT_IV and AT_ENCR_DATA go together. */
	if (err == TW_OK && tw_simaka_has(&m->iv) != tw_simaka_has(&m->encr_data))
		err = TW_ERR_DECODE;
	if (err != TW_OK) {
		memset(m, 0, sizeof(*m));
		return err;
	}
	return TW_OK;
}

int tw_simaka_decode_inner(struct tw_simaka_msg *inner, uint8_t method,
			   const uint8_t *plain, size_t len)
{
	int err;

	if (inner == NULL || (plain == NULL && len != 0))
		return TW_ERR_INVAL;
	memset(inner, 0, sizeof(*inner));
	if (method_bit(method) == 0)
		return TW_ERR_INVAL;
	if (len % 16 != 0 || len > TW_SIMAKA_ATTR_MAX)
		return TW_ERR_DECODE;
	inner->method = method;
	inner->pkt = plain;
	inner->pkt_len = len;
	err = decode_attrs(inner, plain, 0, len, W_INNER);
	if (err != TW_OK) {
		memset(inner, 0, sizeof(*inner));
		inner->method = method;
		return err;
	}
	return TW_OK;
}

/* ---- Builder ----------------------------------------------------------- */

static uint8_t *reserve(struct tw_simaka_builder *b, size_t n)
{
	if (b->err != TW_OK)
		return NULL;
	if (n > b->max - b->len) {
		b->err = TW_ERR_OVERFLOW;
		return NULL;
	}
	uint8_t *p = b->buf + b->len;
	b->len += n;
	return p;
}

void tw_simaka_build_init(struct tw_simaka_builder *b, uint8_t *buf, size_t max,
			  uint8_t code, uint8_t id, uint8_t method,
			  uint8_t subtype)
{
	memset(b, 0, sizeof(*b));
	b->buf = buf;
	b->max = buf == NULL ? 0 : max;
	b->method = method;
	if (method_bit(method) == 0 ||
	    (code != TW_EAP_REQUEST && code != TW_EAP_RESPONSE)) {
		b->err = TW_ERR_INVAL;
		return;
	}
	uint8_t *p = reserve(b, TW_SIMAKA_HDR_LEN);
	if (p == NULL)
		return;
	p[0] = code;
	p[1] = id;
	tw_store_be16(p + 2, 0);
	p[4] = method;
	p[5] = subtype;
	p[6] = 0;
	p[7] = 0;
}

void tw_simaka_put_fixed(struct tw_simaka_builder *b, uint8_t type,
			 uint16_t field, const uint8_t *val, size_t len)
{
	if (b->err != TW_OK)
		return;
	if (len % 4 != 0 || len > TW_SIMAKA_ATTR_MAX - 4 ||
	    (val == NULL && len != 0)) {
		b->err = TW_ERR_LENGTH;
		return;
	}
	uint8_t *p = reserve(b, 4 + len);
	if (p == NULL)
		return;
	p[0] = type;
	p[1] = (uint8_t)((4 + len) / 4);
	tw_store_be16(p + 2, field);
	if (len != 0)
		memcpy(p + 4, val, len);
}

void tw_simaka_put_var(struct tw_simaka_builder *b, uint8_t type,
		       const uint8_t *val, size_t len)
{
	if (b->err != TW_OK)
		return;
	size_t total = round4(4 + len);
	if (total > TW_SIMAKA_ATTR_MAX || (val == NULL && len != 0)) {
		b->err = TW_ERR_LENGTH;
		return;
	}
	uint8_t *p = reserve(b, total);
	if (p == NULL)
		return;
	p[0] = type;
	p[1] = (uint8_t)(total / 4);
	tw_store_be16(p + 2, (uint16_t)len);
	if (len != 0)
		memcpy(p + 4, val, len);
	memset(p + 4 + len, 0, total - 4 - len);
}

void tw_simaka_put_res(struct tw_simaka_builder *b, const uint8_t *res,
		       uint16_t res_bits)
{
	if (b->err != TW_OK)
		return;
	if (res == NULL || res_bits < TW_SIMAKA_RES_MIN_BITS ||
	    res_bits > TW_SIMAKA_RES_MAX_BITS) {
		b->err = TW_ERR_LENGTH;
		return;
	}
	size_t n = ((size_t)res_bits + 7) / 8;
	size_t total = round4(4 + n);
	uint8_t *p = reserve(b, total);
	if (p == NULL)
		return;
	p[0] = TW_AT_RES;
	p[1] = (uint8_t)(total / 4);
	tw_store_be16(p + 2, res_bits);
	memcpy(p + 4, res, n);
	memset(p + 4 + n, 0, total - 4 - n);
}

void tw_simaka_put_auts(struct tw_simaka_builder *b,
			const uint8_t auts[static 14])
{
	uint8_t *p = reserve(b, 16);

	if (p == NULL)
		return;
	p[0] = TW_AT_AUTS;
	p[1] = 4;
	memcpy(p + 2, auts, TW_SIMAKA_AUTS_LEN);
}

void tw_simaka_put_mac(struct tw_simaka_builder *b)
{
	static const uint8_t zero[TW_SIMAKA_MAC_LEN];

	if (b->err != TW_OK)
		return;
	if (b->mac_val_off != 0 || b->encr_off != 0) {
		b->err = TW_ERR_STATE;
		return;
	}
	tw_simaka_put_fixed(b, TW_AT_MAC, 0, zero, sizeof(zero));
	if (b->err == TW_OK)
		b->mac_val_off = b->len - TW_SIMAKA_MAC_LEN;
}

void tw_simaka_begin_encr(struct tw_simaka_builder *b,
			  const uint8_t iv[static 16])
{
	if (b->err != TW_OK)
		return;
	if (b->encr_off != 0) {
		b->err = TW_ERR_STATE;
		return;
	}
	tw_simaka_put_fixed(b, TW_AT_IV, 0, iv, TW_SIMAKA_IV_LEN);
	size_t iv_val_off = b->len - TW_SIMAKA_IV_LEN;
	uint8_t *p = reserve(b, 4);
	if (p == NULL)
		return;
	p[0] = TW_AT_ENCR_DATA;
	p[1] = 0; /* set by tw_simaka_end_encr() */
	p[2] = 0;
	p[3] = 0;
	b->iv_val_off = iv_val_off;
	b->encr_off = (size_t)(p - b->buf);
}

int tw_simaka_finish(struct tw_simaka_builder *b, size_t *len)
{
	int err = b->err;

	if (len == NULL)
		return TW_ERR_INVAL;
	*len = 0;
	if (err == TW_OK && (b->encr_off != 0 || b->mac_val_off != 0))
		err = TW_ERR_STATE; /* an open AT_ENCR_DATA or an unfilled AT_MAC */
	if (err == TW_OK)
		err = tw_eap_set_length(b->buf, b->len);
	if (err != TW_OK) {
		/* Never leave half-built plaintext (identities) behind. */
		if (b->buf != NULL)
			tw_wipe(b->buf, b->len);
		b->err = err;
		return err;
	}
	*len = b->len;
	return TW_OK;
}
