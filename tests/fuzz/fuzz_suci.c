/*
 * Fuzz target: the SUCI decoder (tw_suci_deconceal: the TS 29.571 text and
 * the TS 23.003 §28.7.3 NAI forms, IMSI and NAI SUPIs), the public-key
 * check and the MSIN BCD decoder, with home-network keys for both ECIES
 * profiles loaded (the TS 33.501 C.4.3 and C.4.4 test keys). Invariants:
 * no crash, no overread; a success always yields "imsi-" and 6..15 digits
 * or "nai-<user>@<realm>" of at most 253 octets, tw_suci_peek takes the
 * same string, and the SUPI concealed again (both forms, both profiles,
 * a fixed ephemeral key) deconceals to itself; a refused key always has a
 * reason. The same string also goes through tw_suci_deconceal_ctx with
 * the keys prepared (the same answer and SUPI as the plain keys), through
 * tw_suci_deconceal_mnc with MNC lengths 0..4, and with every output size
 * up to what the SUPI needs (TW_ERR_OVERFLOW below it, never a write past
 * it, and an empty output on any failure); the input read as a SUPI is
 * concealed with routing indicators, MNC lengths and output sizes that a
 * few input octets pick, and each SUCI that comes out deconceals to it.
 * Once per process, a contract block: missing arguments and the
 * documented argument errors of tw_suci_conceal and tw_suci_deconceal.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/hex.h"
#include "twag/suci.h"

#include "fuzz_must.h"

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


/* The argument errors the header documents, once per process. */
static void contract(const struct tw_suci_hn_key keys[2])
{
	static const uint8_t eph[32] = { 0x11, 0x22, 0x33, 0x44 };
	uint8_t pub[TW_SUCI_PUB_MAX];
	char suci[TW_SUCI_STR_MAX], supi[TW_SUCI_SUPI_STR_MAX];
	unsigned t = 9, sc = 9, kid = 9;
	size_t n;

	MUST(tw_suci_public_key(&keys[1], pub, sizeof(pub), &n) == TW_OK);
	/* conceal: no SUPI, no output, an unknown scheme, a key id with
	 * the null scheme, routing indicators of 0 or 5 digits or not
	 * digits, MNC lengths other than 2 and 3 */
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, nul, 2, "0", NULL, suci,
			     sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789", 2, "0",
			     NULL, nul, sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal((enum tw_suci_scheme)7, pub, n, 1, "imsi-001010123456789", 2,
			     "0", eph, suci, sizeof(suci)) == TW_ERR_UNSUPPORTED);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 3, "imsi-001010123456789", 2, "0",
			     NULL, suci, sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789", 2, "",
			     NULL, suci, sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789", 2,
			     "12345", NULL, suci, sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789", 2, "1a",
			     NULL, suci, sizeof(suci)) == TW_ERR_INVAL);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789", 2, NULL,
			     NULL, suci, sizeof(suci)) == TW_OK);
	MUST(strncmp(suci, "suci-0-001-01-0-0-0-", 20) == 0);
	for (unsigned m = 0; m < 5; m++) {
		int rc = tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "imsi-001010123456789",
					 m, "0", NULL, suci, sizeof(suci));

		MUST((rc == TW_OK) == (m == 2 || m == 3));
	}
	/* SUPI types with no SUCI here (TS 23.003 §2.2B: GCI, GLI) */
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "gci-0a1b@operator.com", 2, "0",
			     NULL, suci, sizeof(suci)) == TW_ERR_UNSUPPORTED);
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_NULL, NULL, 0, 0, "gli-0a1b@operator.com", 2, "0",
			     NULL, suci, sizeof(suci)) == TW_ERR_UNSUPPORTED);
	/* peek with any output left out, and no string */
	MUST(tw_suci_conceal(TW_SUCI_SCHEME_PROFILE_B, pub, n, 27, "imsi-001010123456789", 2,
			     "0", eph, suci, sizeof(suci)) == TW_OK);
	MUST(tw_suci_peek(suci, NULL, NULL, NULL) == TW_OK);
	MUST(tw_suci_peek(suci, &t, &sc, &kid) == TW_OK);
	MUST(t == 0 && sc == TW_SUCI_SCHEME_PROFILE_B && kid == 27);
	MUST(tw_suci_peek(nul, &t, &sc, &kid) == TW_ERR_INVAL);
	/* deconceal: no string, no output (with a size), no keys */
	MUST(tw_suci_deconceal(keys, 2, nul, supi, sizeof(supi)) == TW_ERR_INVAL);
	MUST(tw_suci_deconceal(keys, 2, suci, nul, sizeof(supi)) == TW_ERR_INVAL);
	MUST(tw_suci_deconceal(keys, 2, suci, supi, 0) == TW_ERR_OVERFLOW);
	MUST(tw_suci_deconceal(nul, 2, suci, supi, sizeof(supi)) == TW_ERR_NOTFOUND);
	MUST(tw_suci_deconceal(keys, 0, suci, supi, sizeof(supi)) == TW_ERR_NOTFOUND);
	MUST(tw_suci_deconceal_ctx(nul, 2, suci, supi, sizeof(supi)) == TW_ERR_NOTFOUND);
	MUST(tw_suci_deconceal(keys, 2, suci, supi, sizeof(supi)) == TW_OK);
	MUST(strcmp(supi, "imsi-001010123456789") == 0);
}

/* The input read as a SUPI, concealed as a few of its octets pick and
 * deconcealed again. */
static void conceal_input(const struct tw_suci_hn_key keys[2], const uint8_t *data,
			  size_t size, const char *text)
{
	static const uint8_t eph[32] = { 0x55, 0x66 };
	static const char *const routing[] = { NULL, "0", "1", "12", "123", "9999" };
	uint8_t pub[TW_SUCI_PUB_MAX], h = 0;
	char suci[TW_SUCI_STR_MAX], back[TW_SUCI_SUPI_STR_MAX];
	size_t n = 0;

	for (size_t i = 0; i < size; i++)
		h = (uint8_t)(h * 31 + data[i]);
	enum tw_suci_scheme sc = (enum tw_suci_scheme)(h % 3);
	const struct tw_suci_hn_key *k = sc == TW_SUCI_SCHEME_NULL ? NULL : &keys[sc - 1];
	unsigned mnc = 2 + (h >> 2) % 2;
	const char *rid = routing[(h >> 3) % 6];
	size_t max = (h & 0x80) ? (size_t)(h % 97) : sizeof(suci);

	if (k != NULL && tw_suci_public_key(k, pub, sizeof(pub), &n) != TW_OK)
		abort();
	for (int form = 0; form < 2; form++) {
		int rc = (form ? tw_suci_conceal_nai : tw_suci_conceal)(
			sc, pub, n, k != NULL ? k->id : 0, text, mnc, rid, eph, suci, max);

		if (rc == TW_ERR_OVERFLOW && max < sizeof(suci))
			continue;
		if (rc != TW_OK)
			continue;
		if (strlen(suci) >= max)
			abort();
		rc = tw_suci_deconceal_mnc(keys, 2, suci, mnc, back, sizeof(back));
		if (rc != TW_OK)
			abort();
		/* an IMSI comes back whole; an NAI as it went in */
		if (strcmp(back, text) != 0)
			abort();
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

	static bool contract_done;
	static struct tw_suci_hn_ctx ctx[2];

	if (!contract_done) {
		contract_done = true;
		contract(keys);
		if (tw_suci_hn_ctx_init(&ctx[0], &keys[0]) != TW_OK ||
		    tw_suci_hn_ctx_init(&ctx[1], &keys[1]) != TW_OK)
			abort();
	}
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, n);
	text[n] = '\0';
	int drc = tw_suci_deconceal(keys, 2, text, supi, sizeof(supi));
	{
		/* the prepared keys give the same answer */
		char s2[TW_SUCI_SUPI_STR_MAX];
		int rc2 = tw_suci_deconceal_ctx(ctx, 2, text, s2, sizeof(s2));

		if (rc2 != drc || (drc == TW_OK && strcmp(s2, supi) != 0) ||
		    (drc != TW_OK && s2[0] != '\0'))
			abort();
		/* each output size below the SUPI's is refused, with the
		 * output wiped (the SUPI is what the SUCI hides) and nothing
		 * written past it */
		if (drc == TW_OK)
			for (size_t m = 1; m <= strlen(supi); m++) {
				memset(s2, 'x', sizeof(s2));
				if (tw_suci_deconceal(keys, 2, text, s2, m) != TW_ERR_OVERFLOW ||
				    s2[m] != 'x')
					abort();
				for (size_t j = 0; j < m; j++)
					if (s2[j] != '\0')
						abort();
			}
		for (unsigned m = 0; m < 5; m++) {
			int rc = tw_suci_deconceal_mnc(keys, 2, text, m, s2, sizeof(s2));

			if (rc == TW_OK && strncmp(s2, "imsi-", 5) != 0 && strncmp(s2, "nai-", 4) != 0)
				abort();
		}
	}
	conceal_input(keys, data, size, text);
	if (drc == TW_OK) {
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
