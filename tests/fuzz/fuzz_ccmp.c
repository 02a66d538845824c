/*
 * Fuzz target: 802.11 CCMP/GCMP decapsulation (tw_ccmp_decap, and the
 * batch path on the same input). Input: one octet choosing the cipher
 * (low 2 bits: CCMP-128, CCMP-256, GCMP-128, GCMP-256), then the MPDU.
 * The keys are fixed (the IEEE 802.11 CCMP test MPDU 1 TK, doubled for
 * 256-bit ciphers) so seeds can be valid frames. Invariants: no crash or
 * overread; a success yields header || body of size - 8 - MIC octets and
 * moves the replay counter to the PN; the batch path agrees with the
 * single call; a failure leaves the counter alone.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/ccmp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t tk[32] = {
	0xc9, 0x7c, 0x1f, 0x67, 0xce, 0x37, 0x11, 0x85, 0x51, 0x4a, 0x8a, 0x19, 0xf2, 0xbd, 0xd5, 0x2f,
	0xc9, 0x7c, 0x1f, 0x67, 0xce, 0x37, 0x11, 0x85, 0x51, 0x4a, 0x8a, 0x19, 0xf2, 0xbd, 0xd5, 0x2f,
};

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const enum tw_ccmp_cipher ciphers[4] = { TW_CCMP_128, TW_CCMP_256, TW_GCMP_128,
							TW_GCMP_256 };
	static uint8_t out[2048], out2[2048];
	struct tw_ccmp_key key;
	struct tw_ccmp_rx rx, rx2;
	struct tw_ccmp_mpdu m;
	size_t ol = 0;
	uint64_t pn = 0;

	if (size < 1 || size > sizeof(out))
		return 0;
	enum tw_ccmp_cipher c = ciphers[data[0] & 3];
	if (tw_ccmp_key_init(&key, c, tk, c == TW_CCMP_128 || c == TW_GCMP_128 ? 16 : 32, 0) != TW_OK)
		abort();
	tw_ccmp_rx_init(&rx);
	tw_ccmp_rx_init(&rx2);
	int err = tw_ccmp_decap(&key, &rx, data + 1, size - 1, out, sizeof(out), &ol, &pn);
	if (err == TW_OK) {
		size_t used = 0;

		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			used += rx.pn[i] == pn;
		if (ol != size - 1 - 8 - tw_ccmp_mic_len(&key) || used != 1 || pn == 0)
			abort();
	} else {
		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			if (rx.pn[i] != 0)
				abort();
	}
	memset(&m, 0, sizeof(m));
	m.key = &key;
	m.rx = &rx2;
	m.in = data + 1;
	m.in_len = size - 1;
	m.out = out2;
	m.out_cap = sizeof(out2);
	if (tw_ccmp_decap_batch(&m, 1) != err || m.status != err ||
	    (err == TW_OK && (m.out_len != ol || memcmp(out, out2, ol) != 0)))
		abort();
	tw_ccmp_key_wipe(&key);
	return 0;
}
