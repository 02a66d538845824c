/*
 * twag kdf — the key derivations: CK'/IK' (TS 33.402 A.2), EAP-AKA' keys
 * (RFC 9048 §3.3), EAP-AKA keys (RFC 4187 §7), EAP-SIM keys (RFC 4186 §7),
 * and the 5G chain KAUSF, KSEAF, RES*, HRES*, KAMF (TS 33.501 Annex A).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/kdf.h"

/* A TEXT option's bytes, exactly as given (TS 33.220 B.2 encodes strings
 * as their octets, without a terminator). Empty text is an error. */
static const uint8_t *text_opt(const struct cli *c, const char *name, size_t *len)
{
	const char *v = cli_need(c, name);

	*len = strlen(v);
	if (*len == 0)
		cli_usage_error(c, name, "must not be empty");
	if (*len > 65535)
		cli_usage_error(c, name, "longer than 65535 octets");
	return (const uint8_t *)v;
}

static int kdf_ck_ik_prime(int argc, char **argv)
{
	static const char *const valued[] = { "ck", "ik", "network-name", "sqn-xor-ak", NULL };
	struct cli c;
	uint8_t ck[16], ik[16], sqn_ak[6], ck_p[16], ik_p[16];
	size_t nn_len;

	cli_parse(&c, "kdf ck-ik-prime", argc, argv, valued, NULL);
	cli_hex(&c, "ck", ck, sizeof(ck));
	cli_hex(&c, "ik", ik, sizeof(ik));
	const uint8_t *nn = text_opt(&c, "network-name", &nn_len);
	cli_hex(&c, "sqn-xor-ak", sqn_ak, sizeof(sqn_ak));
	int err = tw_kdf_ck_ik_prime(ck_p, ik_p, ck, ik, nn, nn_len, sqn_ak);
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	if (err != TW_OK)
		cli_fail(&c, "CK'/IK'", err);
	cli_print_hex("ck_prime", ck_p, sizeof(ck_p));
	cli_print_hex("ik_prime", ik_p, sizeof(ik_p));
	tw_wipe(ck_p, sizeof(ck_p));
	tw_wipe(ik_p, sizeof(ik_p));
	return 0;
}

static int kdf_aka_prime(int argc, char **argv)
{
	static const char *const valued[] = { "ck-prime", "ik-prime", "identity", NULL };
	struct cli c;
	uint8_t ck_p[16], ik_p[16];
	struct tw_eap_aka_prime_keys keys;
	size_t id_len;

	cli_parse(&c, "kdf aka-prime", argc, argv, valued, NULL);
	cli_hex(&c, "ck-prime", ck_p, sizeof(ck_p));
	cli_hex(&c, "ik-prime", ik_p, sizeof(ik_p));
	const uint8_t *id = text_opt(&c, "identity", &id_len);
	/* RFC 9048 §3.3: the PRF' key is IK' | CK'. */
	int err = tw_eap_aka_prime_derive(&keys, ik_p, ck_p, id, id_len);
	tw_wipe(ck_p, sizeof(ck_p));
	tw_wipe(ik_p, sizeof(ik_p));
	if (err != TW_OK)
		cli_fail(&c, "EAP-AKA' keys", err);
	cli_print_hex("k_encr", keys.k_encr, sizeof(keys.k_encr));
	cli_print_hex("k_aut", keys.k_aut, sizeof(keys.k_aut));
	cli_print_hex("k_re", keys.k_re, sizeof(keys.k_re));
	cli_print_hex("msk", keys.msk, sizeof(keys.msk));
	cli_print_hex("emsk", keys.emsk, sizeof(keys.emsk));
	tw_wipe(&keys, sizeof(keys));
	return 0;
}

static void print_sim_keys(struct tw_eap_sim_keys *keys)
{
	cli_print_hex("mk", keys->mk, sizeof(keys->mk));
	cli_print_hex("k_encr", keys->k_encr, sizeof(keys->k_encr));
	cli_print_hex("k_aut", keys->k_aut, sizeof(keys->k_aut));
	cli_print_hex("msk", keys->msk, sizeof(keys->msk));
	cli_print_hex("emsk", keys->emsk, sizeof(keys->emsk));
	tw_wipe(keys, sizeof(*keys));
}

static int kdf_aka(int argc, char **argv)
{
	static const char *const valued[] = { "ck", "ik", "identity", NULL };
	struct cli c;
	uint8_t ck[16], ik[16];
	struct tw_eap_sim_keys keys;
	size_t id_len;

	cli_parse(&c, "kdf aka", argc, argv, valued, NULL);
	cli_hex(&c, "ck", ck, sizeof(ck));
	cli_hex(&c, "ik", ik, sizeof(ik));
	const uint8_t *id = text_opt(&c, "identity", &id_len);
	int err = tw_eap_aka_derive(&keys, id, id_len, ik, ck);
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	if (err != TW_OK)
		cli_fail(&c, "EAP-AKA keys", err);
	print_sim_keys(&keys);
	return 0;
}

static int kdf_sim(int argc, char **argv)
{
	static const char *const valued[] = { "identity", "kc", "nonce-mt", "version-list",
					      "selected-version", NULL };
	struct cli c;
	uint8_t kc[3][8], nonce_mt[16], vlist[256], sel[2];
	struct tw_eap_sim_keys keys;
	size_t id_len;

	cli_parse(&c, "kdf sim", argc, argv, valued, NULL);
	const uint8_t *id = text_opt(&c, "identity", &id_len);
	/* RFC 4186 §9.3: two or three triplets (n*Kc, 8 octets each). */
	size_t kc_len = cli_hex_range(&c, "kc", &kc[0][0], 16, 24, 8);
	cli_hex(&c, "nonce-mt", nonce_mt, sizeof(nonce_mt));
	/* RFC 4186 §10.2: the version list is a sequence of 2-octet versions. */
	size_t vl_len = cli_hex_range(&c, "version-list", vlist, 2, sizeof(vlist), 2);
	cli_hex(&c, "selected-version", sel, sizeof(sel));
	int err = tw_eap_sim_derive(&keys, id, id_len, (const uint8_t(*)[8])kc,
				    kc_len / 8, nonce_mt, vlist, vl_len,
				    tw_load_be16(sel));
	tw_wipe(kc, sizeof(kc));
	if (err != TW_OK)
		cli_fail(&c, "EAP-SIM keys", err);
	print_sim_keys(&keys);
	return 0;
}

static int kdf_5g(int argc, char **argv)
{
	static const char *const valued[] = { "ck", "ik", "serving-network-name", "sqn-xor-ak",
					      "rand", "res", "supi", "abba", NULL };
	struct cli c;
	uint8_t ck[16], ik[16], sqn_ak[6], rand_[16], res[16], abba[64];
	uint8_t kausf[32], kseaf[32], res_star[16], hres_star[16], kamf[32];
	size_t snn_len, supi_len;
	int err;

	cli_parse(&c, "kdf 5g", argc, argv, valued, NULL);
	cli_hex(&c, "ck", ck, sizeof(ck));
	cli_hex(&c, "ik", ik, sizeof(ik));
	const uint8_t *snn = text_opt(&c, "serving-network-name", &snn_len);
	cli_hex(&c, "sqn-xor-ak", sqn_ak, sizeof(sqn_ak));
	cli_hex(&c, "rand", rand_, sizeof(rand_));
	/* TS 33.102 §6.3: RES is 4..16 octets. */
	size_t res_len = cli_hex_range(&c, "res", res, 4, 16, 1);
	const uint8_t *supi = text_opt(&c, "supi", &supi_len);
	/* TS 33.501 A.7.1: ABBA is at least 2 octets. */
	size_t abba_len = cli_hex_range(&c, "abba", abba, 2, sizeof(abba), 1);

	err = tw_kdf_kausf(kausf, ck, ik, snn, snn_len, sqn_ak);
	if (err == TW_OK)
		err = tw_kdf_res_star(res_star, ck, ik, snn, snn_len, rand_, res, res_len);
	if (err == TW_OK)
		err = tw_kdf_kseaf(kseaf, kausf, snn, snn_len);
	/* TS 33.501 A.7.1: for an IMSI-type SUPI, P0 is the IMSI digits;
	 * "imsi-DIGITS" (the TS 23.003 §28.7.2 SUPI form) is reduced to them.
	 * Any other text is used as P0 octet for octet. */
	if (err == TW_OK && supi_len > 5 && memcmp(supi, "imsi-", 5) == 0) {
		err = tw_kdf_kamf_imsi(kamf, kseaf, (const char *)supi + 5,
				       supi_len - 5, abba, abba_len);
		if (err == TW_ERR_DECODE || err == TW_ERR_LENGTH)
			cli_usage_error(&c, "supi", "imsi- must be followed by 6..15 digits");
	} else if (err == TW_OK) {
		err = tw_kdf_kamf(kamf, kseaf, supi, supi_len, abba, abba_len);
	}
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	if (err != TW_OK)
		cli_fail(&c, "5G keys", err);
	tw_kdf_hres_star(hres_star, rand_, res_star);
	cli_print_hex("kausf", kausf, sizeof(kausf));
	cli_print_hex("kseaf", kseaf, sizeof(kseaf));
	cli_print_hex("res_star", res_star, sizeof(res_star));
	cli_print_hex("hres_star", hres_star, sizeof(hres_star));
	cli_print_hex("kamf", kamf, sizeof(kamf));
	tw_wipe(kausf, sizeof(kausf));
	tw_wipe(kseaf, sizeof(kseaf));
	tw_wipe(kamf, sizeof(kamf));
	return 0;
}

int cmd_kdf(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} subs[] = {
		{ "ck-ik-prime", kdf_ck_ik_prime }, { "aka-prime", kdf_aka_prime },
		{ "aka", kdf_aka }, { "sim", kdf_sim }, { "5g", kdf_5g },
	};

	if (argc >= 1)
		for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
			if (strcmp(argv[0], subs[i].name) == 0)
				return subs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "twag kdf: expected ck-ik-prime, aka-prime, aka, sim or 5g\n");
	return CLI_EXIT_USAGE;
}
