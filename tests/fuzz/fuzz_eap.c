/*
 * Fuzz target: EAP framing (tw_eap_decode) and, for EAP-Response/Identity,
 * the NAI parser. Invariants: no crash or overread; a decoded view lies
 * inside the input and re-encodes to the same Length octets (and not into
 * a buffer one octet short); tw_eap_set_length writes the same Length
 * field and refuses lengths outside 4..65535; tw_nai_mask_imsi of the
 * input read as an IMSI agrees with a model of its header.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/eap.h"
#include "twag/nai.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/*
 * tw_nai_mask_imsi of the input read as an IMSI, against its header: 6..15
 * digits, else TW_ERR_DECODE; room for the text and a NUL, else
 * TW_ERR_OVERFLOW; then MCC+MNC (6 digits, 5 below 11) and the last 4
 * (none below 11) kept, '*' between.
 */
static void check_mask(const char *d, size_t n)
{
	char out[32];
	bool digits = n >= 6 && n <= 15;
	size_t head = n >= 11 ? 6 : 5, tail = n >= 11 ? 4 : 0;
	int rc;

	for (size_t i = 0; digits && i < n; i++)
		digits = d[i] >= '0' && d[i] <= '9';
	rc = tw_nai_mask_imsi(out, sizeof(out), d, n);
	if ((rc == TW_OK) != digits || (!digits && rc != TW_ERR_DECODE))
		abort();
	if (!digits)
		return;
	for (size_t i = 0; i < n; i++)
		if (out[i] != (i < head || i >= n - tail ? d[i] : '*'))
			abort();
	if (out[n] != '\0' || tw_nai_mask_imsi(out, n, d, n) != TW_ERR_OVERFLOW)
		abort();
}

/* NULL where a call takes a pointer, without the compiler seeing it */
static void *volatile nul;

/* The argument contract of eap.h and nai.h, once: a NULL object or
 * buffer, or NULL data with a length, is TW_ERR_INVAL. */
static void check_contract(void)
{
	static const uint8_t pkt[8] = { 2, 1, 0, 8, 1, 'a', 'b', 'c' };
	const uint8_t *np = nul;
	struct tw_eap_view v;
	struct tw_nai nai;
	uint8_t out[16];
	char imsi[16];
	size_t n = 0;

	if (tw_eap_decode(nul, pkt, sizeof(pkt)) != TW_ERR_INVAL ||
	    tw_eap_decode(&v, np, 8) != TW_ERR_INVAL || tw_eap_set_length(nul, 8) != TW_ERR_INVAL ||
	    tw_eap_encode(nul, 16, &n, 2, 1, 1, pkt, 3) != TW_ERR_INVAL ||
	    tw_eap_encode(out, 16, nul, 2, 1, 1, pkt, 3) != TW_ERR_INVAL ||
	    tw_eap_encode(out, 16, &n, 2, 1, 1, np, 3) != TW_ERR_INVAL ||
	    tw_eap_encode(out, 16, &n, 2, 1, 1, np, 0) != TW_OK || n != 5 ||
	    tw_eap_encode(out, 16, &n, 3, 1, 1, np, 3) != TW_OK || n != 4)
		abort();
	if (tw_nai_parse(nul, pkt + 5, 3) != TW_ERR_INVAL ||
	    tw_nai_parse(&nai, np, 3) != TW_ERR_INVAL ||
	    tw_nai_parse(&nai, (const uint8_t *)"1001010123456789", 16) != TW_OK ||
	    tw_nai_imsi(nul, imsi, &n) != TW_ERR_INVAL || tw_nai_imsi(&nai, imsi, nul) != TW_ERR_INVAL ||
	    tw_nai_mask_imsi(nul, 16, "001010123456789", 15) != TW_ERR_INVAL ||
	    tw_nai_mask_imsi(imsi, 16, nul, 15) != TW_ERR_INVAL)
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_eap_view v;
	uint8_t out[65536 + 8];
	size_t n = 0;
	static bool contract_done;

	if (!contract_done) {
		check_contract();
		contract_done = true;
	}
	check_mask((const char *)data, size);
	/* a code RFC 3748 §4 / RFC 6696 §5.3 does not define: not encoded */
	if (size > 0 && (data[0] == 0 || data[0] > TW_EAP_FINISH) &&
	    tw_eap_encode(out, sizeof(out), &n, data[0], 1, 1, NULL, 0) == TW_OK)
		abort();
	if (tw_eap_decode(&v, data, size) != TW_OK)
		return 0;
	if (v.length > size || v.length < 4)
		abort();
	if (v.data != NULL && (v.data < data || v.data + v.data_len > data + v.length))
		abort();
	if (tw_eap_encode(out, sizeof(out), &n, v.code, v.id, v.type, v.data,
			  v.data_len) != TW_OK || n != v.length ||
	    memcmp(out, data, n) != 0)
		abort();
	/* one octet short of the packet; a Type-Data longer than a packet */
	if (tw_eap_encode(out, n - 1, &n, v.code, v.id, v.type, v.data, v.data_len) == TW_OK ||
	    tw_eap_encode(out, sizeof(out), &n, TW_EAP_RESPONSE, v.id, TW_EAP_TYPE_IDENTITY,
			  out, TW_EAP_MAX_LEN - 4) == TW_OK)
		abort();
	/* the Length field set in place, as a packet built there is */
	memcpy(out, data, v.length);
	out[2] = out[3] = 0;
	if (tw_eap_set_length(out, v.length) != TW_OK || memcmp(out, data, 4) != 0 ||
	    tw_eap_set_length(out, TW_EAP_HDR_LEN - 1) == TW_OK ||
	    tw_eap_set_length(out, TW_EAP_MAX_LEN + 1) == TW_OK)
		abort();
	if (v.type == TW_EAP_TYPE_IDENTITY && v.code == TW_EAP_RESPONSE) {
		struct tw_nai nai;
		char imsi[16], masked[16];
		size_t il = 0;

		if (tw_nai_parse(&nai, v.data, v.data_len) == TW_OK &&
		    tw_nai_imsi(&nai, imsi, &il) == TW_OK) {
			if (il < 6 || il > 15 || strlen(imsi) != il)
				abort();
			if (tw_nai_mask_imsi(masked, sizeof(masked), imsi, il) != TW_OK)
				abort();
		}
	}
	return 0;
}
