/*
 * Fuzz target: the WLCP decoder (TS 24.244). Invariants: no crash, no
 * overread; a decoded message's views lie inside the input; a decoded
 * message re-encodes (when its IEs are encodable) to bytes that decode to
 * the same message type and PTI.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/wlcp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_wlcp_msg m, m2;
	uint8_t out[1024];
	size_t len;

	if (tw_wlcp_decode(&m, data, size) != TW_OK)
		return 0;
	if ((m.has_apn && (m.apn < data || m.apn + m.apn_len > data + size)) ||
	    (m.has_pco && (m.pco < data || m.pco + m.pco_len > data + size)) ||
	    (m.has_nbifom && (m.nbifom < data || m.nbifom + m.nbifom_len > data + size)))
		abort();
	if (tw_wlcp_encode(out, sizeof(out), &len, &m) == TW_OK) {
		if (tw_wlcp_decode(&m2, out, len) != TW_OK || m2.type != m.type ||
		    m2.pti != m.pti || len > size)
			abort();
	}
	return 0;
}
