/*
 * Fuzz target: EAP framing (tw_eap_decode) and, for EAP-Response/Identity,
 * the NAI parser. Invariants: no crash or overread; a decoded view lies
 * inside the input and re-encodes to the same Length octets.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/eap.h"
#include "twag/nai.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_eap_view v;
	uint8_t out[65536 + 8];
	size_t n = 0;

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
