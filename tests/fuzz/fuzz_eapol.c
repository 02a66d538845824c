/*
 * Fuzz target: the EAPOL-Key frame decoder (tw_eapol_key_decode) and the
 * Key MIC check built on it (tw_wlan_eapol_mic_verify), IEEE 802.11-2020
 * §12.7.2. Input: one selector octet, then the frame. Selector bits 0-1
 * pick the MIC length (16, 24, 0, 16), bits 2-3 the AKM (2, 5, 8, 6) whose
 * MIC algorithm checks the frame under a fixed KCK (00 01 .. 0f).
 * Invariants: no crash or overread; a decoded frame's views lie inside its
 * PDU and add up to it; a frame that verifies carries the MIC bit and the
 * MIC that tw_wlan_eapol_mic() recomputes.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/wlan_keys.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const size_t mic_lens[4] = { 16, 24, 0, 16 };
	static const unsigned akms[4] = { 2, 5, 8, 6 };
	uint8_t kck[16], mic[16];
	struct tw_eapol_key k;

	if (size < 1)
		return 0;
	size_t mic_len = mic_lens[data[0] & 3];
	unsigned akm = akms[(data[0] >> 2) & 3];
	const uint8_t *frame = data + 1;
	size_t len = size - 1;

	if (tw_eapol_key_decode(&k, frame, len, mic_len) == TW_OK) {
		if (k.pdu_len > len || k.pdu_len < TW_EAPOL_KEY_MIC_OFF + mic_len + 2 ||
		    k.mic != frame + TW_EAPOL_KEY_MIC_OFF || k.mic_len != mic_len ||
		    k.key_data != frame + TW_EAPOL_KEY_MIC_OFF + mic_len + 2 ||
		    k.key_data + k.key_data_len != frame + k.pdu_len ||
		    k.nonce != frame + TW_EAPOL_KEY_NONCE_OFF ||
		    k.key_info != tw_load_be16(frame + 5) || frame[1] != TW_EAPOL_TYPE_KEY ||
		    k.desc_type != TW_EAPOL_KEY_DESC_RSN)
			abort();
	}
	for (int i = 0; i < 16; i++)
		kck[i] = (uint8_t)i;
	if (tw_wlan_eapol_mic_verify(akm, kck, 16, frame, len) == TW_OK) {
		if (tw_wlan_eapol_mic(mic, akm, kck, 16, frame, len) != TW_OK ||
		    memcmp(mic, frame + TW_EAPOL_KEY_MIC_OFF, 16) != 0 ||
		    (tw_load_be16(frame + 5) & TW_EAPOL_KEY_INFO_MIC) == 0)
			abort();
	}
	return 0;
}
