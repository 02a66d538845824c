/*
 * twag — WLCP message codec (3GPP TS 24.244 Rel-12..15 §7, §8; IE formats
 * and the handling of unknown IEs per TS 24.007 Rel-15 §11.2.4, §8.6, §8.7).
 *
 * Every message is described by one row of msgs[]: its mandatory IEs in
 * order (V / LV, no IEI) and the optional IEs it may carry (TV / TLV with
 * their IEIs). The decoder and the encoder both walk the same row, so a
 * correction to a table is a one-line change.
 *
 * NOTE on sources: the message type values (table 8.2.1: 0x81..0x86) and
 * the PDN CONNECTIVITY REQUEST row (table 7.1.1.1: request type V 1/2, PDN
 * type V 1/2, 28 APN TLV 3-102, 27 PCO TLV 3-253, 33 NBIFOM TLV 3-257,
 * A- UE N3G capability TV 1) were checked again against the Rel-17 text
 * (itecspec.com, TS 24.244 clauses 7 and 8). The other rows follow
 * §7.2-§7.6 as recalled (with the IEI values of the corresponding ESM IEs
 * of TS 24.301 §9.9.4: APN 0x28, PCO 0x27, timer 0x37, re-attempt
 * indicator 0x6B, cause 0x58) and are NOT confirmed: the stored copies of
 * TS 24.244 (itecspec clause 7, pdfslide.us V12.2.0, vdocuments.mx
 * V12.0.0/V15.2.0, docslib V12.2.0) could only be read up to table
 * 7.1.1.1. No PDN DISCONNECT REJECT is defined in table 8.2.1, so there is
 * no row for it. Re-check the other rows against the release deployed.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/wlcp.h"

enum ie_kind {
	IE_REQ_PDN, /* request type (bits 1-4) + PDN type (bits 5-8) */
	IE_APN,
	IE_PDN_ADDR,
	IE_TWAG_MAC,
	IE_CAUSE,
	IE_PCO,
	IE_NBIFOM,
	IE_N3G_CAP,
	IE_TW1,
	IE_REATTEMPT,
};

enum ie_fmt {
	F_V,   /* value only, fixed length (mandatory) */
	F_LV,  /* length octet + value (mandatory) */
	F_TV1, /* type 1: IEI in bits 8..5, value in bits 4..1 */
	F_TV,  /* IEI + fixed-length value */
	F_TLV, /* IEI + length octet + value */
};

struct ie_desc {
	uint8_t kind, fmt, iei;
	uint8_t min, max; /* value length bounds (octets) */
};

struct msg_desc {
	uint8_t type;
	uint8_t n_mand, n_opt;
	struct ie_desc mand[3];
	struct ie_desc opt[5];
};

#define PCO_IE { IE_PCO, F_TLV, TW_WLCP_IEI_PCO, 1, TW_WLCP_PCO_MAX }
#define NBIFOM_IE { IE_NBIFOM, F_TLV, TW_WLCP_IEI_NBIFOM, 1, TW_WLCP_NBIFOM_MAX }
#define MAC_LV { IE_TWAG_MAC, F_LV, 0, TW_WLCP_MAC_LEN, TW_WLCP_MAC_LEN }

static const struct msg_desc msgs[] = {
	/* §7.1, table 7.1.1.1 */
	{ TW_WLCP_PDN_CONN_REQUEST, 1, 4,
	  { { IE_REQ_PDN, F_V, 0, 1, 1 } },
	  { { IE_APN, F_TLV, TW_WLCP_IEI_APN, 1, TW_WLCP_APN_MAX },
	    PCO_IE, NBIFOM_IE,
	    { IE_N3G_CAP, F_TV1, TW_WLCP_IEI_UE_N3G_CAP, 1, 1 } } },
	/* §7.2 */
	{ TW_WLCP_PDN_CONN_ACCEPT, 3, 2,
	  { { IE_APN, F_LV, 0, 1, TW_WLCP_APN_MAX },
	    { IE_PDN_ADDR, F_LV, 0, 5, 13 },
	    MAC_LV },
	  { PCO_IE, NBIFOM_IE } },
	/* §7.3 */
	{ TW_WLCP_PDN_CONN_REJECT, 1, 4,
	  { { IE_CAUSE, F_V, 0, 1, 1 } },
	  { PCO_IE,
	    { IE_TW1, F_TLV, TW_WLCP_IEI_TW1, 1, 1 },
	    { IE_REATTEMPT, F_TLV, TW_WLCP_IEI_REATTEMPT, 1, 1 },
	    NBIFOM_IE } },
	/* §7.4 */
	{ TW_WLCP_PDN_CONN_COMPLETE, 0, 0, { { 0 } }, { { 0 } } },
	/* §7.5 */
	{ TW_WLCP_PDN_DISC_REQUEST, 1, 2,
	  { MAC_LV },
	  { { IE_CAUSE, F_TV, TW_WLCP_IEI_CAUSE, 1, 1 }, PCO_IE } },
	/* §7.6 */
	{ TW_WLCP_PDN_DISC_ACCEPT, 1, 1, { MAC_LV }, { PCO_IE } },
};

static const struct msg_desc *find_msg(uint8_t type)
{
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (msgs[i].type == type)
			return &msgs[i];
	return NULL;
}

/* TS 23.003 §9.1: an APN is a sequence of labels, each a length octet
 * (1..63) and that many octets, exactly filling the value. */
static bool apn_ok(const uint8_t *v, size_t l)
{
	if (l == 0 || l > TW_WLCP_APN_MAX)
		return false;
	while (l != 0) {
		size_t n = v[0];

		if (n == 0 || n > 63 || n > l - 1)
			return false;
		v += 1 + n;
		l -= 1 + n;
	}
	return true;
}

static bool *present(struct tw_wlcp_msg *m, uint8_t kind)
{
	switch (kind) {
	case IE_REQ_PDN: return NULL;
	case IE_APN: return &m->has_apn;
	case IE_PDN_ADDR: return &m->has_pdn_address;
	case IE_TWAG_MAC: return &m->has_twag_mac;
	case IE_CAUSE: return &m->has_cause;
	case IE_PCO: return &m->has_pco;
	case IE_NBIFOM: return &m->has_nbifom;
	case IE_N3G_CAP: return &m->has_ue_n3g_cap;
	case IE_TW1: return &m->has_tw1;
	case IE_REATTEMPT: return &m->has_reattempt;
	default: return NULL;
	}
}

static bool is_present(const struct tw_wlcp_msg *m, uint8_t kind)
{
	struct tw_wlcp_msg c = *m;
	bool *p = present(&c, kind);

	return p != NULL && *p;
}

/* Validates and stores one IE value; false if its contents are invalid. */
static bool store(struct tw_wlcp_msg *m, uint8_t kind, const uint8_t *v,
		  size_t l)
{
	switch (kind) {
	case IE_REQ_PDN: {
		/* §8.4 request type in bits 3..1 (bit 4 spare), §8.5 PDN
		 * type in bits 7..5 (bit 8 spare) */
		uint8_t rt = v[0] & 7, pt = (v[0] >> 4) & 7;
		if ((rt != TW_WLCP_REQ_INITIAL && rt != TW_WLCP_REQ_HANDOVER) ||
		    pt < TW_WLCP_PDN_IPV4 || pt > TW_WLCP_PDN_IPV4V6)
			return false;
		m->request_type = rt;
		m->pdn_type = pt;
		return true;
	}
	case IE_APN:
		if (!apn_ok(v, l))
			return false;
		m->apn = v;
		m->apn_len = l;
		break;
	case IE_PDN_ADDR: {
		/* PDN address value: octet 1 bits 3..1 PDN type, then the
		 * IPv4 address (4), the IPv6 interface identifier (8), or
		 * both (IID first), per TS 24.301 §9.9.4.9 coding. */
		uint8_t t = v[0] & 7;
		if ((t == TW_WLCP_PDN_IPV4 && l != 5) ||
		    (t == TW_WLCP_PDN_IPV6 && l != 9) ||
		    (t == TW_WLCP_PDN_IPV4V6 && l != 13) ||
		    t < TW_WLCP_PDN_IPV4 || t > TW_WLCP_PDN_IPV4V6)
			return false;
		m->pdn_addr_type = t;
		if (t == TW_WLCP_PDN_IPV4)
			memcpy(m->ipv4, v + 1, 4);
		if (t != TW_WLCP_PDN_IPV4)
			memcpy(m->ipv6_iid, v + 1, 8);
		if (t == TW_WLCP_PDN_IPV4V6)
			memcpy(m->ipv4, v + 9, 4);
		break;
	}
	case IE_TWAG_MAC:
		memcpy(m->twag_mac, v, TW_WLCP_MAC_LEN);
		break;
	case IE_CAUSE:
		m->cause = v[0];
		break;
	case IE_PCO:
		m->pco = v;
		m->pco_len = l;
		break;
	case IE_NBIFOM:
		m->nbifom = v;
		m->nbifom_len = l;
		break;
	case IE_N3G_CAP:
		m->ue_n3g_cap = v[0] & 15;
		break;
	case IE_TW1:
		m->tw1 = v[0];
		break;
	case IE_REATTEMPT:
		m->reattempt = v[0];
		break;
	default:
		return false;
	}
	*present(m, kind) = true;
	return true;
}

int tw_wlcp_decode(struct tw_wlcp_msg *m, const uint8_t *buf, size_t len)
{
	const struct msg_desc *d;
	size_t pos = TW_WLCP_HDR_LEN;
	int err = TW_ERR_DECODE;

	if (m == NULL || (buf == NULL && len != 0))
		return TW_ERR_INVAL;
	memset(m, 0, sizeof(*m));
	/* §8.1: message type and PTI are always present */
	if (len < TW_WLCP_HDR_LEN)
		return TW_ERR_DECODE;
	d = find_msg(buf[0]);
	if (d == NULL)
		return TW_ERR_UNSUPPORTED; /* §6: unknown message type */
	/* §8.3: PTI values 0 (none) and 255 (reserved) are not valid */
	if (buf[1] == 0 || buf[1] == 255)
		goto out;
	m->type = buf[0];
	m->pti = buf[1];

	/* Imperative part: mandatory IEs in table order. */
	for (size_t i = 0; i < d->n_mand; i++) {
		const struct ie_desc *ie = &d->mand[i];
		size_t l = ie->min;

		if (ie->fmt == F_LV) {
			if (pos >= len)
				goto out;
			l = buf[pos++];
			if (l < ie->min || l > ie->max)
				goto out;
		}
		if (l > len - pos)
			goto out; /* truncated mandatory IE */
		if (!store(m, ie->kind, buf + pos, l))
			goto out; /* invalid mandatory information */
		pos += l;
	}

	/* Non-imperative part (TS 24.007 §11.2.4). */
	while (pos < len) {
		uint8_t iei = buf[pos];
		const struct ie_desc *ie = NULL;

		if (iei & 0x80) {
			/* type 1 (4-bit IEI + 4-bit value) or type 2 */
			for (size_t i = 0; i < d->n_opt; i++)
				if (d->opt[i].fmt == F_TV1 && d->opt[i].iei == iei >> 4)
					ie = &d->opt[i];
			if (ie != NULL && !*present(m, ie->kind)) {
				uint8_t v = iei & 15;
				(void)store(m, ie->kind, &v, 1);
			}
			pos++;
			continue;
		}
		for (size_t i = 0; i < d->n_opt; i++)
			if (d->opt[i].fmt != F_TV1 && d->opt[i].iei == iei)
				ie = &d->opt[i];
		if (ie == NULL) {
			/* §11.2.4: an unknown IEI with bits 8..5 = 0000 is
			 * comprehension required. */
			if ((iei & 0xf0) == 0)
				goto out;
			size_t l;
			if ((iei & 0xf0) == 0x70) { /* type 6, TLV-E */
				if (len - pos < 3)
					goto out;
				l = tw_load_be16(buf + pos + 1);
				if (l > len - pos - 3)
					goto out;
				pos += 3 + l;
			} else { /* type 4, TLV */
				if (len - pos < 2)
					goto out;
				l = buf[pos + 1];
				if (l > len - pos - 2)
					goto out;
				pos += 2 + l;
			}
			continue;
		}
		size_t l = ie->min, hdr = 1;
		if (ie->fmt == F_TLV) {
			if (len - pos < 2)
				goto out;
			l = buf[pos + 1];
			hdr = 2;
		}
		if (l > len - pos - hdr)
			goto out; /* IE overruns the message */
		/* §8.6.3: only the first occurrence counts; §8.7.2: an
		 * optional IE with invalid contents is treated as absent. */
		if (!*present(m, ie->kind) && l >= ie->min && l <= ie->max)
			(void)store(m, ie->kind, buf + pos + hdr, l);
		pos += hdr + l;
	}
	err = TW_OK;
out:
	if (err != TW_OK)
		memset(m, 0, sizeof(*m));
	return err;
}

/* The value octets of one IE of m, into tmp; returns its length. */
static size_t value_of(const struct tw_wlcp_msg *m, uint8_t kind,
		       uint8_t tmp[static 16], const uint8_t **v)
{
	*v = tmp;
	switch (kind) {
	case IE_REQ_PDN:
		tmp[0] = (uint8_t)((m->pdn_type & 7) << 4 | (m->request_type & 7));
		return 1;
	case IE_APN:
		*v = m->apn;
		return m->apn_len;
	case IE_PDN_ADDR:
		tmp[0] = m->pdn_addr_type & 7;
		if (m->pdn_addr_type == TW_WLCP_PDN_IPV4) {
			memcpy(tmp + 1, m->ipv4, 4);
			return 5;
		}
		memcpy(tmp + 1, m->ipv6_iid, 8);
		if (m->pdn_addr_type == TW_WLCP_PDN_IPV6)
			return 9;
		memcpy(tmp + 9, m->ipv4, 4);
		return 13;
	case IE_TWAG_MAC:
		memcpy(tmp, m->twag_mac, TW_WLCP_MAC_LEN);
		return TW_WLCP_MAC_LEN;
	case IE_CAUSE:
		tmp[0] = m->cause;
		return 1;
	case IE_PCO:
		*v = m->pco;
		return m->pco_len;
	case IE_NBIFOM:
		*v = m->nbifom;
		return m->nbifom_len;
	case IE_N3G_CAP:
		tmp[0] = m->ue_n3g_cap;
		return 1;
	case IE_TW1:
		tmp[0] = m->tw1;
		return 1;
	case IE_REATTEMPT:
		tmp[0] = m->reattempt;
		return 1;
	default:
		return 0;
	}
}

int tw_wlcp_encode(uint8_t *buf, size_t max, size_t *len,
		   const struct tw_wlcp_msg *m)
{
	const struct msg_desc *d;
	size_t pos = 0;

	if (buf == NULL || len == NULL || m == NULL)
		return TW_ERR_INVAL;
	*len = 0;
	d = find_msg(m->type);
	if (d == NULL)
		return TW_ERR_UNSUPPORTED;
	if (m->pti == 0 || m->pti == 255)
		return TW_ERR_INVAL;
	/* Every IE flagged present must be one this message carries. */
	for (uint8_t k = IE_APN; k <= IE_REATTEMPT; k++) {
		bool allowed = false;

		for (size_t i = 0; i < d->n_mand; i++)
			allowed |= d->mand[i].kind == k;
		for (size_t i = 0; i < d->n_opt; i++)
			allowed |= d->opt[i].kind == k;
		if (is_present(m, k) && !allowed)
			return TW_ERR_INVAL;
	}

	if (max < TW_WLCP_HDR_LEN)
		return TW_ERR_OVERFLOW;
	buf[pos++] = m->type;
	buf[pos++] = m->pti;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t n = pass ? d->n_opt : d->n_mand;

		for (size_t i = 0; i < n; i++) {
			const struct ie_desc *ie = pass ? &d->opt[i] : &d->mand[i];
			uint8_t tmp[16];
			const uint8_t *v;

			if (ie->kind != IE_REQ_PDN && !is_present(m, ie->kind)) {
				if (!pass)
					return TW_ERR_INVAL; /* mandatory missing */
				continue;
			}
			size_t l = value_of(m, ie->kind, tmp, &v);
			if (l < ie->min || l > ie->max || (v == NULL && l != 0))
				return TW_ERR_LENGTH;
			if (ie->kind == IE_APN && !apn_ok(v, l))
				return TW_ERR_INVAL;
			if (ie->kind == IE_N3G_CAP && v[0] > 15)
				return TW_ERR_RANGE;
			/* the encoder never emits what its decoder rejects */
			{
				struct tw_wlcp_msg scratch;
				memset(&scratch, 0, sizeof(scratch));
				if (ie->kind != IE_APN && ie->kind != IE_PCO &&
				    ie->kind != IE_NBIFOM && !store(&scratch, ie->kind, v, l))
					return TW_ERR_INVAL;
			}
			size_t need = (ie->fmt == F_V || ie->fmt == F_TV1) ? 0 : 1;
			need += (ie->fmt == F_TLV || ie->fmt == F_LV) ? 1 : 0;
			need += ie->fmt == F_TV1 ? 1 : l;
			if (need > max - pos)
				return TW_ERR_OVERFLOW;
			switch (ie->fmt) {
			case F_TV1:
				buf[pos++] = (uint8_t)(ie->iei << 4 | (v[0] & 15));
				continue;
			case F_TV:
				buf[pos++] = ie->iei;
				break;
			case F_TLV:
				buf[pos++] = ie->iei;
				buf[pos++] = (uint8_t)l;
				break;
			case F_LV:
				buf[pos++] = (uint8_t)l;
				break;
			default:
				break;
			}
			memcpy(buf + pos, v, l);
			pos += l;
		}
	}
	*len = pos;
	return TW_OK;
}

int tw_wlcp_apn_encode(uint8_t *out, size_t max, size_t *len,
		       const char *dotted, size_t dotted_len)
{
	size_t pos = 0, start = 0;

	if (out == NULL || len == NULL || (dotted == NULL && dotted_len != 0))
		return TW_ERR_INVAL;
	*len = 0;
	if (dotted_len == 0 || dotted_len + 1 > TW_WLCP_APN_MAX)
		return TW_ERR_LENGTH;
	if (dotted_len + 1 > max)
		return TW_ERR_OVERFLOW;
	/* TS 23.003 §9.1: each dot-separated label becomes length | label */
	for (size_t i = 0; i <= dotted_len; i++) {
		if (i < dotted_len && dotted[i] != '.')
			continue;
		size_t n = i - start;
		if (n == 0 || n > 63)
			return TW_ERR_LENGTH;
		out[pos++] = (uint8_t)n;
		memcpy(out + pos, dotted + start, n);
		pos += n;
		start = i + 1;
	}
	*len = pos;
	return TW_OK;
}
