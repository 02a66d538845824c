/*
 * Fuzz target: the SUCI decoder (tw_suci_deconceal: the TS 29.571 text and
 * the TS 23.003 §28.7.3 NAI forms, IMSI and NAI SUPIs), the public-key
 * check and the MSIN BCD decoder, with home-network keys for both ECIES
 * profiles loaded (the TS 33.501 C.4.3 and C.4.4 test keys). Invariants:
 * no crash, no overread; a success always yields "imsi-" and 6..15 digits
 * or "nai-<user>@<realm>" of at most 253 octets, tw_suci_peek takes the
 * same string, and the SUPI concealed again (both forms, both profiles,
 * a fixed ephemeral key) deconceals to itself; a refused key always has a
 * reason.
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

/* The SUPI concealed in both forms with both profiles and the null
 * scheme deconceals to itself. An IMSI's MNC is taken as 2 digits (the
 * SUCI it came from may have said 3: the digits are the same). */
static void round_trip(const struct tw_suci_hn_key keys[2], const char *supi)
{
	static const uint8_t eph[32] = { 0x11, 0x22, 0x33, 0x44 };
	uint8_t pub[TW_SUCI_PUB_MAX];
	char suci[TW_SUCI_STR_MAX], back[TW_SUCI_SUPI_STR_MAX];
	size_t n;

	for (int s = TW_SUCI_SCHEME_NULL; s <= TW_SUCI_SCHEME_PROFILE_B; s++) {
		const struct tw_suci_hn_key *k = s == TW_SUCI_SCHEME_NULL ? NULL : &keys[s - 1];

		if (k != NULL && tw_suci_public_key(k, pub, sizeof(pub), &n) != TW_OK)
			abort();
		for (int form = 0; form < 2; form++) {
			int rc = (form ? tw_suci_conceal_nai : tw_suci_conceal)(
				(enum tw_suci_scheme)s, pub, k != NULL ? n : 0,
				k != NULL ? k->id : 0, supi, 2, "17", eph, suci, sizeof(suci));

			/* a null-scheme NAI the text form cannot carry */
			if (rc == TW_ERR_UNSUPPORTED && s == TW_SUCI_SCHEME_NULL && !form &&
			    strncmp(supi, "nai-", 4) == 0)
				continue;
			if (rc != TW_OK)
				abort();
			rc = tw_suci_deconceal_mnc(keys, 2, suci, 2, back, sizeof(back));
			if (rc != TW_OK || strcmp(back, supi) != 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_suci_hn_key keys[2];
	char text[1024], supi[TW_SUCI_SUPI_STR_MAX], msin[16];
	const char *why = NULL;
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
		const char *at = strchr(supi, '@');

		if (strncmp(supi, "imsi-", 5) == 0) {
			if (len < 11 || len > 20 || strspn(supi + 5, "0123456789") != len - 5)
				abort();
		} else if (strncmp(supi, "nai-", 4) != 0 || at == NULL || at == supi + 4 ||
			   at[1] == '\0' || len > 4 + TW_SUCI_NAI_MAX ||
			   strchr(at + 1, '@') != NULL) {
			abort();
		}
		if (tw_suci_peek(text, NULL, NULL, NULL) != TW_OK)
			abort();
		round_trip(keys, supi);
	}
	for (int s = TW_SUCI_SCHEME_PROFILE_A; s <= TW_SUCI_SCHEME_PROFILE_B; s++) {
		why = NULL;
		int rc = tw_suci_check_public((enum tw_suci_scheme)s, data, size, &why);

		if ((rc == TW_OK) != (why == NULL) || (rc != TW_OK && rc != TW_ERR_DECODE))
			abort();
	}
	if (tw_suci_bcd_to_msin(data, size, msin, sizeof(msin), &nd) == TW_OK) {
		if (nd == 0 || nd > TW_SUCI_MSIN_MAX_DIGITS || strlen(msin) != nd)
			abort();
	}
	return 0;
}
