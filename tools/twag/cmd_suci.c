/*
 * twag suci — SUCI conceal/deconceal (TS 33.501 Annex C, TS 23.003 §2.2B,
 * §28.7): null scheme, ECIES Profile A (X25519) and Profile B (P-256), IMSI
 * and NAI SUPIs, the text and the NAI forms.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/suci.h"

static enum tw_suci_scheme profile_opt(const struct cli *c)
{
	const char *p = cli_need(c, "profile");

	if (strcmp(p, "A") == 0 || strcmp(p, "a") == 0)
		return TW_SUCI_SCHEME_PROFILE_A;
	if (strcmp(p, "B") == 0 || strcmp(p, "b") == 0)
		return TW_SUCI_SCHEME_PROFILE_B;
	if (strcmp(p, "null") == 0)
		return TW_SUCI_SCHEME_NULL;
	cli_usage_error(c, "profile", "unknown profile '%s' (A, B or null)", p);
}

static int suci_decrypt(int argc, char **argv)
{
	static const char *const valued[] = { "hn-private", "suci", "mnc-digits", NULL };
	struct cli c;
	struct tw_suci_hn_key key;
	char supi[TW_SUCI_SUPI_STR_MAX];
	unsigned type = 0, scheme = 0, key_id = 0;

	memset(&key, 0, sizeof(key));
	cli_parse(&c, "suci decrypt", argc, argv, valued, NULL);
	const char *suci = cli_need(&c, "suci");
	if (strlen(suci) >= TW_SUCI_STR_MAX)
		cli_usage_error(&c, "suci", "longer than any valid SUCI (%d characters)",
				TW_SUCI_STR_MAX - 1);
	/* the MNC length of an IMSI SUCI in NAI form (its realm writes 3) */
	unsigned mnc_digits = (unsigned)cli_uint(&c, "mnc-digits", 2, 3, 0);
	/* The scheme and key id the SUCI names pick the key to build from
	 * --hn-private; a string too malformed to name them is refused. */
	int err = tw_suci_peek(suci, &type, &scheme, &key_id);
	if (err != TW_OK)
		cli_usage_error(&c, "suci", "%s (expected suci-0-MCC-MNC-..., suci-1-REALM-... "
				"or the NAI form type<N>.rid<N>.schid<N>...@REALM)",
				tw_strerror(err));
	/* The null scheme needs no key (TS 33.501 C.2). */
	if (scheme != TW_SUCI_SCHEME_NULL || cli_get(&c, "hn-private") != NULL)
		cli_hex(&c, "hn-private", key.priv, sizeof(key.priv));
	key.id = (uint8_t)key_id;
	key.scheme = scheme == TW_SUCI_SCHEME_PROFILE_B ? TW_SUCI_SCHEME_PROFILE_B
							: TW_SUCI_SCHEME_PROFILE_A;
	err = tw_suci_deconceal_mnc(&key, 1, suci, mnc_digits, supi, sizeof(supi));
	tw_wipe(&key, sizeof(key));
	if (err == TW_ERR_DECODE || err == TW_ERR_UNSUPPORTED || err == TW_ERR_LENGTH)
		cli_usage_error(&c, "suci", "%s", tw_strerror(err));
	if (err == TW_ERR_RANGE)
		cli_usage_error(&c, "hn-private", "not a valid private key");
	if (err != TW_OK)
		cli_fail(&c, "deconceal", err);
	printf("supi=%s\n", supi);
	return 0;
}

static int suci_encrypt(int argc, char **argv)
{
	static const char *const valued[] = { "hn-public", "profile", "key-id", "supi",
					      "mnc-digits", "routing", "form",
					      "ephemeral-private", NULL };
	static const size_t pub_a[] = { TW_SUCI_PROFILE_A_PUB_LEN, 0 };
	static const size_t pub_b[] = { TW_SUCI_PROFILE_B_PUB_LEN,
					TW_SUCI_PROFILE_B_PUB_UNCOMPRESSED_LEN, 0 };
	struct cli c;
	uint8_t pub[TW_SUCI_PEER_PUB_MAX], eph[32];
	size_t pub_len = 0;
	char suci[TW_SUCI_STR_MAX];
	const char *why = NULL;

	cli_parse(&c, "suci encrypt", argc, argv, valued, NULL);
	enum tw_suci_scheme scheme = profile_opt(&c);
	if (scheme != TW_SUCI_SCHEME_NULL) {
		pub_len = cli_hex_oneof(&c, "hn-public", pub,
					scheme == TW_SUCI_SCHEME_PROFILE_A ? pub_a : pub_b);
		if (tw_suci_check_public(scheme, pub, pub_len, &why) != TW_OK)
			cli_usage_error(&c, "hn-public", "%s (%s)", why,
					scheme == TW_SUCI_SCHEME_PROFILE_A
						? "Profile A: a canonical X25519 u-coordinate, "
						  "32 octets"
						: "Profile B: a P-256 point, compressed (33 "
						  "octets, 02/03) or uncompressed (65, 04)");
	}
	if (cli_get(&c, "key-id") == NULL)
		cli_usage_error(&c, "key-id", "missing (required)");
	unsigned long key_id = cli_uint(&c, "key-id", 0, 255, 0);
	if (scheme == TW_SUCI_SCHEME_NULL && key_id != 0)
		cli_usage_error(&c, "key-id", "must be 0 with the null scheme (TS 23.003 2.2B)");
	const char *supi = cli_need(&c, "supi");
	size_t n = strlen(supi);
	bool imsi = strncmp(supi, "imsi-", 5) == 0;
	if (imsi && (n < 5 + 6 || n > 5 + 15 || strspn(supi + 5, "0123456789") != n - 5))
		cli_usage_error(&c, "supi", "expected imsi- and 6..15 digits");
	if (!imsi && strncmp(supi, "nai-", 4) != 0)
		cli_usage_error(&c, "supi", "expected imsi-DIGITS or nai-USER@REALM");
	if (!imsi && cli_get(&c, "mnc-digits") != NULL)
		cli_usage_error(&c, "mnc-digits", "only for an IMSI");
	unsigned mnc_digits = (unsigned)cli_uint(&c, "mnc-digits", 2, 3, 2);
	const char *routing = cli_get(&c, "routing");
	if (routing != NULL && (strlen(routing) < 1 || strlen(routing) > 4 ||
				strspn(routing, "0123456789") != strlen(routing)))
		cli_usage_error(&c, "routing", "expected 1..4 digits");
	const char *form = cli_get(&c, "form");
	if (form != NULL && strcmp(form, "text") != 0 && strcmp(form, "nai") != 0)
		cli_usage_error(&c, "form", "expected text (suci-...) or nai (type...@realm)");
	bool nai_form = form != NULL && strcmp(form, "nai") == 0;
	const uint8_t *eph_priv = NULL;
	if (cli_get(&c, "ephemeral-private") != NULL) {
		cli_hex(&c, "ephemeral-private", eph, sizeof(eph));
		eph_priv = eph;
	}
	int err = (nai_form ? tw_suci_conceal_nai : tw_suci_conceal)(
		scheme, pub, pub_len, (uint8_t)key_id, supi, mnc_digits, routing, eph_priv, suci,
		sizeof(suci));
	tw_wipe(eph, sizeof(eph));
	if (err == TW_ERR_UNSUPPORTED && !imsi && !nai_form)
		cli_usage_error(&c, "supi", "the text form cannot carry this NAI with the null "
				"scheme (it would read back as another); use --form nai");
	if ((err == TW_ERR_DECODE || err == TW_ERR_LENGTH) && !imsi)
		cli_usage_error(&c, "supi", "not an NAI of RFC 7542 (username@realm, a realm "
				"with a dot, %d octets at most)", TW_SUCI_NAI_MAX);
	if (err == TW_ERR_DECODE && scheme != TW_SUCI_SCHEME_NULL)
		cli_usage_error(&c, "hn-public", "not a valid public key");
	if (err == TW_ERR_RANGE)
		cli_usage_error(&c, "ephemeral-private", "not a valid private key");
	if (err != TW_OK)
		cli_fail(&c, "conceal", err);
	printf("suci=%s\n", suci);
	return 0;
}

static int suci_public_key(int argc, char **argv)
{
	static const char *const valued[] = { "hn-private", "profile", NULL };
	struct cli c;
	struct tw_suci_hn_key key;
	uint8_t pub[TW_SUCI_PUB_MAX];
	size_t pub_len = 0;

	memset(&key, 0, sizeof(key));
	cli_parse(&c, "suci public-key", argc, argv, valued, NULL);
	key.scheme = profile_opt(&c);
	if (key.scheme == TW_SUCI_SCHEME_NULL)
		cli_usage_error(&c, "profile", "the null scheme has no key");
	cli_hex(&c, "hn-private", key.priv, sizeof(key.priv));
	int err = tw_suci_public_key(&key, pub, sizeof(pub), &pub_len);
	tw_wipe(&key, sizeof(key));
	if (err == TW_ERR_RANGE)
		cli_usage_error(&c, "hn-private", "not a valid private key");
	if (err != TW_OK)
		cli_fail(&c, "public key", err);
	cli_print_hex("hn_public", pub, pub_len);
	return 0;
}

int cmd_suci(int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "decrypt") == 0)
		return suci_decrypt(argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "encrypt") == 0)
		return suci_encrypt(argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "public-key") == 0)
		return suci_public_key(argc - 1, argv + 1);
	fprintf(stderr, "twag suci: expected decrypt, encrypt or public-key\n");
	return CLI_EXIT_USAGE;
}
