/*
 * twag — WLCP protection key from the EMSK (3GPP TS 33.402 Rel-12+, with
 * the TS 33.220 Rel-17 Annex B.2 KDF). See include/twag/wlcp_key.h for why
 * FC and the parameters are the caller's.
 */
#include <string.h>

#include "twag/kdf.h"
#include "twag/wlcp_key.h"

int tw_wlcp_key(uint8_t key[static 32], const uint8_t *emsk, size_t emsk_len,
		uint8_t fc, const struct tw_kdf_param *params, size_t n_params)
{
	memset(key, 0, TW_WLCP_KEY_LEN);
	if (emsk == NULL)
		return TW_ERR_INVAL;
	/* RFC 3748 / RFC 5247: the EMSK is 64 octets for EAP-AKA' */
	if (emsk_len == 0 || emsk_len > 64)
		return TW_ERR_LENGTH;
	/* TS 33.220 B.2.0: derived key = HMAC-SHA-256(Key, S) */
	return tw_kdf_3gpp(key, emsk, emsk_len, fc, params, n_params);
}
