/*
 * Fuzz target: the SUCI text decoder (tw_suci_deconceal) and the MSIN BCD
 * decoder, with home-network keys for both ECIES profiles loaded (the
 * TS 33.501 C.4.3.1 and C.4.4.1 test keys). Invariants: no crash, no
 * overread, and a success always yields "imsi-" and 6..15 digits.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/hex.h"
#include "twag/suci.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void hex_key(uint8_t out[32], const char *hex)
{
	if (tw_hex_decode(out, 32, NULL, hex, 64) != TW_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_suci_hn_key keys[2];
	char text[512], supi[TW_SUCI_SUPI_STR_MAX], msin[16];
	size_t nd = 0;

	memset(keys, 0, sizeof(keys));
	keys[0].id = 27;
	keys[0].scheme = TW_SUCI_SCHEME_PROFILE_A;
	hex_key(keys[0].priv, "c53c22208b61860b06c62e5406a7b330c2b577aa5558981510d128247d38bd1d");
	keys[1].id = 27;
	keys[1].scheme = TW_SUCI_SCHEME_PROFILE_B;
	hex_key(keys[1].priv, "f1ab1074477ebcc7f554ea1c5fc368b1616730155e0041ac447d6301975fecda");

	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	if (tw_suci_deconceal(keys, 2, text, supi, sizeof(supi)) == TW_OK) {
		size_t len = strlen(supi);

		if (len < 11 || len > 20 || strncmp(supi, "imsi-", 5) != 0 ||
		    strspn(supi + 5, "0123456789") != len - 5)
			abort();
	}
	if (tw_suci_bcd_to_msin(data, size, msin, sizeof(msin), &nd) == TW_OK) {
		if (nd == 0 || nd > TW_SUCI_MSIN_MAX_DIGITS || strlen(msin) != nd)
			abort();
	}
	return 0;
}
