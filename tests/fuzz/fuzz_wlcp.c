/*
 * Fuzz target: the WLCP decoder (TS 24.244). Invariants: no crash, no
 * overread; a decoded message's views lie inside the input; a decoded
 * message re-encodes (when its IEs are encodable) to bytes that decode to
 * the same message type and PTI. The APN encoder (tw_wlcp_apn_encode)
 * is checked against a model of TS 23.003 §9.1 on the raw input as dotted
 * text, and must turn a decoded APN, written dotted, back into itself;
 * a decoded message altered one way at a time (reserved PTI, unknown
 * type, a buffer one octet short, a bad APN or capability value) is
 * refused by the encoder with the error wlcp.h names.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/wlcp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/*
 * tw_wlcp_apn_encode of the dotted text d[0..n) against TS 23.003 §9.1:
 * accepted exactly when every dot-separated label has 1..63 octets and
 * the result fits 100 octets (and the buffer, one octet more than the
 * text), and then it is each label behind its length.
 */
static void check_apn_encode(const char *d, size_t n)
{
	uint8_t out[TW_WLCP_APN_MAX + 1];
	size_t len = 0, start = 0, pos = 0;
	bool ok = n != 0 && n + 1 <= TW_WLCP_APN_MAX;
	int rc;

	for (size_t i = 0; ok && i <= n; i++) {
		if (i < n && d[i] != '.')
			continue;
		ok = i - start >= 1 && i - start <= 63;
		start = i + 1;
	}
	rc = tw_wlcp_apn_encode(out, sizeof(out), &len, d, n);
	if ((rc == TW_OK) != ok || (rc != TW_OK && len != 0))
		abort();
	if (rc == TW_OK) {
		if (len != n + 1)
			abort();
		start = 0;
		for (size_t i = 0; i <= n; i++) {
			if (i < n && d[i] != '.')
				continue;
			if (out[pos] != i - start || memcmp(out + pos + 1, d + start, i - start) != 0)
				abort();
			pos += 1 + i - start;
			start = i + 1;
		}
		/* one octet short of the result */
		if (tw_wlcp_apn_encode(out, n, &len, d, n) != TW_ERR_OVERFLOW)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_wlcp_msg m, m2;
	uint8_t out[1024];
	size_t len;

	check_apn_encode((const char *)data, size);
	if (tw_wlcp_decode(&m, data, size) != TW_OK)
		return 0;
	/* a decoded APN, written dotted, encodes back to itself (when no
	 * label holds a '.', which the dotted form cannot tell apart) */
	if (m.has_apn) {
		char dotted[TW_WLCP_APN_MAX];
		uint8_t again[TW_WLCP_APN_MAX];
		size_t pos = 0, n = 0, got = 0;
		bool dots = false;

		while (pos < m.apn_len) {
			size_t l = m.apn[pos];

			if (n != 0)
				dotted[n++] = '.';
			dots |= memchr(m.apn + pos + 1, '.', l) != NULL;
			memcpy(dotted + n, m.apn + pos + 1, l);
			n += l;
			pos += 1 + l;
		}
		if (!dots && (tw_wlcp_apn_encode(again, sizeof(again), &got, dotted, n) != TW_OK ||
			      got != m.apn_len || memcmp(again, m.apn, got) != 0))
			abort();
	}
	if ((m.has_apn && (m.apn < data || m.apn + m.apn_len > data + size)) ||
	    (m.has_pco && (m.pco < data || m.pco + m.pco_len > data + size)) ||
	    (m.has_nbifom && (m.nbifom < data || m.nbifom + m.nbifom_len > data + size)))
		abort();
	if (tw_wlcp_encode(out, sizeof(out), &len, &m) == TW_OK) {
		if (tw_wlcp_decode(&m2, out, len) != TW_OK || m2.type != m.type ||
		    m2.pti != m.pti || len > size)
			abort();
		/* the encoder's own checks (wlcp.h), on the message altered
		 * one way at a time: refused as the header says, or else
		 * bytes that decode */
		for (int k = 0; k < 8; k++) {
			static const uint8_t bad_apn[3] = { 5, 'a', 'b' };
			struct tw_wlcp_msg x = m;
			size_t max = sizeof(out), xl = 0;
			int want = TW_OK, rc;

			switch (k) {
			case 0: x.pti = 0; want = TW_ERR_INVAL; break;
			case 1: x.pti = 255; want = TW_ERR_INVAL; break;
			case 2: x.type = 0; want = TW_ERR_UNSUPPORTED; break;
			case 3: max = len - 1; want = TW_ERR_OVERFLOW; break;
			case 4: max = 1; want = TW_ERR_OVERFLOW; break;
			case 5: /* an APN whose labels do not tile it */
				if (!m.has_apn)
					continue;
				x.apn = bad_apn;
				x.apn_len = sizeof(bad_apn);
				want = -1;
				break;
			case 6:
				if (!m.has_ue_n3g_cap)
					continue;
				x.ue_n3g_cap = 16;
				want = -1;
				break;
			default:
				if (!m.has_apn)
					continue;
				x.apn_len = TW_WLCP_APN_MAX + 1;
				want = -1;
				break;
			}
			rc = tw_wlcp_encode(out, max, &xl, &x);
			if (want == -1 ? rc == TW_OK : rc != want)
				abort();
		}
	}
	return 0;
}
