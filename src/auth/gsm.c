/*
 * twag — GSM conversion functions c2 and c3 (3GPP TS 33.102 V17.0.0
 * §6.8.1.2), used when a USIM/AuC serves a GSM (or EAP-SIM) context.
 */
#include "twag/bytes.h"
#include "twag/gsm.h"

int tw_gsm_c2(uint8_t sres[static 4], const uint8_t *res, size_t res_len)
{
	if (res == NULL)
		return TW_ERR_INVAL;
	if (res_len < 4 || res_len > 16)
		return TW_ERR_LENGTH;
	/* SRES = XRES*1 ^ XRES*2 ^ XRES*3 ^ XRES*4, XRES* = RES || 0..0 (128
	 * bits): the zero padding contributes nothing to the XOR. */
	uint8_t s[4] = { 0, 0, 0, 0 };

	for (size_t i = 0; i < res_len; i++)
		s[i % 4] ^= res[i];
	for (int i = 0; i < 4; i++)
		sres[i] = s[i];
	tw_wipe(s, sizeof(s));
	return TW_OK;
}

void tw_gsm_c3(uint8_t kc[static 8], const uint8_t ck[static 16], const uint8_t ik[static 16])
{
	/* Kc = CK1 ^ CK2 ^ IK1 ^ IK2, CK = CK1 || CK2, IK = IK1 || IK2 */
	for (int i = 0; i < 8; i++)
		kc[i] = (uint8_t)(ck[i] ^ ck[i + 8] ^ ik[i] ^ ik[i + 8]);
}
