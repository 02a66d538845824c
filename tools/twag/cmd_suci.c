/*
 * twag suci — SUCI conceal/deconceal (TS 33.501 Annex C, TS 23.003 §2.2B):
 * null scheme, ECIES Profile A (X25519) and Profile B (P-256).
 */
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

/* The scheme and key id fields of "suci-0-mcc-mnc-routing-scheme-keyid-..."
 * pick which key to build from --hn-private; the library then checks the
 * whole string. A string too malformed to find them is reported by it. */
static void scheme_fields(const char *suci, long *scheme, long *key_id)
{
	const char *p = suci;

	*scheme = -1;
	*key_id = -1;
	for (int field = 0; field < 5 && p != NULL; field++) {
		p = strchr(p, '-');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		return;
	*scheme = strtol(p, NULL, 10);
	p = strchr(p, '-');
	if (p != NULL)
		*key_id = strtol(p + 1, NULL, 10);
}

static int suci_decrypt(int argc, char **argv)
{
	static const char *const valued[] = { "hn-private", "suci", NULL };
	struct cli c;
	struct tw_suci_hn_key key;
	char supi[TW_SUCI_SUPI_STR_MAX];
	long scheme, key_id;

	memset(&key, 0, sizeof(key));
	cli_parse(&c, "suci decrypt", argc, argv, valued, NULL);
	const char *suci = cli_need(&c, "suci");
	if (strlen(suci) >= TW_SUCI_STR_MAX)
		cli_usage_error(&c, "suci", "longer than any valid SUCI");
	scheme_fields(suci, &scheme, &key_id);
	/* The null scheme needs no key (TS 33.501 C.2). */
	if (scheme != TW_SUCI_SCHEME_NULL || cli_get(&c, "hn-private") != NULL)
		cli_hex(&c, "hn-private", key.priv, sizeof(key.priv));
	key.id = (uint8_t)(key_id >= 0 && key_id <= 255 ? key_id : 0);
	key.scheme = scheme == TW_SUCI_SCHEME_PROFILE_B ? TW_SUCI_SCHEME_PROFILE_B
							: TW_SUCI_SCHEME_PROFILE_A;
	int err = tw_suci_deconceal(&key, 1, suci, supi, sizeof(supi));
	tw_wipe(&key, sizeof(key));
	if (err == TW_ERR_DECODE || err == TW_ERR_UNSUPPORTED || err == TW_ERR_LENGTH)
		cli_usage_error(&c, "suci", "%s", tw_strerror(err));
	if (err != TW_OK)
		cli_fail(&c, "deconceal", err);
	printf("supi=%s\n", supi);
	return 0;
}

static int suci_encrypt(int argc, char **argv)
{
	static const char *const valued[] = { "hn-public", "profile", "key-id", "supi",
					      "mnc-digits", "routing",
					      "ephemeral-private", NULL };
	static const size_t pub_a[] = { TW_SUCI_PROFILE_A_PUB_LEN, 0 };
	static const size_t pub_b[] = { TW_SUCI_PROFILE_B_PUB_LEN, 0 };
	struct cli c;
	uint8_t pub[TW_SUCI_PUB_MAX], eph[32];
	size_t pub_len = 0;
	char suci[TW_SUCI_STR_MAX];

	cli_parse(&c, "suci encrypt", argc, argv, valued, NULL);
	enum tw_suci_scheme scheme = profile_opt(&c);
	if (scheme != TW_SUCI_SCHEME_NULL)
		pub_len = cli_hex_oneof(&c, "hn-public", pub,
					scheme == TW_SUCI_SCHEME_PROFILE_A ? pub_a : pub_b);
	if (cli_get(&c, "key-id") == NULL)
		cli_usage_error(&c, "key-id", "missing (required)");
	unsigned long key_id = cli_uint(&c, "key-id", 0, 255, 0);
	if (scheme == TW_SUCI_SCHEME_NULL && key_id != 0)
		cli_usage_error(&c, "key-id", "must be 0 with the null scheme (TS 23.003 2.2B)");
	const char *supi = cli_need(&c, "supi");
	size_t n = strlen(supi);
	if (n < 5 + 6 || n > 5 + 15 || strncmp(supi, "imsi-", 5) != 0 ||
	    strspn(supi + 5, "0123456789") != n - 5)
		cli_usage_error(&c, "supi", "expected imsi- and 6..15 digits");
	unsigned mnc_digits = (unsigned)cli_uint(&c, "mnc-digits", 2, 3, 2);
	const char *routing = cli_get(&c, "routing");
	if (routing != NULL && (strlen(routing) < 1 || strlen(routing) > 4 ||
				strspn(routing, "0123456789") != strlen(routing)))
		cli_usage_error(&c, "routing", "expected 1..4 digits");
	const uint8_t *eph_priv = NULL;
	if (cli_get(&c, "ephemeral-private") != NULL) {
		cli_hex(&c, "ephemeral-private", eph, sizeof(eph));
		eph_priv = eph;
	}
	int err = tw_suci_conceal(scheme, pub, pub_len, (uint8_t)key_id, supi,
				  mnc_digits, routing, eph_priv, suci, sizeof(suci));
	tw_wipe(eph, sizeof(eph));
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
