/*
 * twag — EAP framing (RFC 3748, June 2004, §4) and the ERP codes 5/6
 * (RFC 6696, July 2012, §5.3).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"

/* RFC 3748 §4 and RFC 6696 §5.3: which codes carry a Type octet. */
static int code_has_type(uint8_t code)
{
	switch (code) {
	case TW_EAP_REQUEST:
	case TW_EAP_RESPONSE:
	case TW_EAP_INITIATE:
	case TW_EAP_FINISH:
		return 1;
	case TW_EAP_SUCCESS:
	case TW_EAP_FAILURE:
		return 0;
	default:
		return -1;
	}
}

int tw_eap_decode(struct tw_eap_view *v, const uint8_t *pkt, size_t pkt_len)
{
	if (v == NULL || (pkt == NULL && pkt_len != 0))
		return TW_ERR_INVAL;
	memset(v, 0, sizeof(*v));
	if (pkt_len < TW_EAP_HDR_LEN)
		return TW_ERR_DECODE;

	int typed = code_has_type(pkt[0]);
	uint16_t length = tw_load_be16(pkt + 2);

	if (typed < 0)
		return TW_ERR_DECODE; /* §4: unknown Code, silently discarded */
	/* §4.1: Length counts Code..Data; a Length above the received octets
	 * means a truncated packet; octets beyond it are link-layer padding. */
	if (length > pkt_len)
		return TW_ERR_DECODE;
	if (typed ? length < TW_EAP_HDR_LEN + 1 : length != TW_EAP_HDR_LEN)
		return TW_ERR_DECODE;

	v->code = pkt[0];
	v->id = pkt[1];
	v->length = length;
	if (typed) {
		v->type = pkt[4];
		v->data_len = (size_t)length - 5;
		v->data = pkt + 5;
	}
	return TW_OK;
}

int tw_eap_set_length(uint8_t *buf, size_t len)
{
	if (buf == NULL)
		return TW_ERR_INVAL;
	if (len < TW_EAP_HDR_LEN || len > TW_EAP_MAX_LEN)
		return TW_ERR_LENGTH;
	tw_store_be16(buf + 2, (uint16_t)len);
	return TW_OK;
}

int tw_eap_encode(uint8_t *buf, size_t max, size_t *len, uint8_t code,
		  uint8_t id, uint8_t type, const uint8_t *data, size_t data_len)
{
	int typed = code_has_type(code);
	size_t total;

	if (buf == NULL || len == NULL || typed < 0)
		return TW_ERR_INVAL;
	if (typed && data == NULL && data_len != 0)
		return TW_ERR_INVAL;
	*len = 0;
	if (!typed)
		total = TW_EAP_HDR_LEN;
	else if (data_len > TW_EAP_MAX_LEN - 5)
		return TW_ERR_LENGTH;
	else
		total = 5 + data_len;
	if (total > max)
		return TW_ERR_OVERFLOW;
	if (typed && data_len != 0)
		memmove(buf + 5, data, data_len);
	buf[0] = code;
	buf[1] = id;
	tw_store_be16(buf + 2, (uint16_t)total);
	if (typed)
		buf[4] = type;
	*len = total;
	return TW_OK;
}
