/* twag tuak — TS 35.231 f1, f1*, f2..f5, f5* from K and TOP/TOPc. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/tuak.h"

static uint16_t bits_opt(const struct cli *c, const char *name,
			 const unsigned *allowed, unsigned def)
{
	const char *v = cli_get(c, name);

	if (v == NULL)
		return (uint16_t)def;
	unsigned long x = cli_uint(c, name, 1, 256, def);
	for (const unsigned *a = allowed; *a != 0; a++)
		if (x == *a)
			return (uint16_t)x;
	cli_usage_error(c, name, "not a size TS 35.231 allows");
}

int cmd_tuak(int argc, char **argv)
{
	static const char *const valued[] = {
		"k", "top", "topc", "rand", "sqn", "amf", "mac-bits", "res-bits",
		"ck-bits", "ik-bits", "iterations", NULL
	};
	static const unsigned mac_sizes[] = { 64, 128, 256, 0 };
	static const unsigned res_sizes[] = { 32, 64, 128, 256, 0 };
	static const unsigned key_sizes[] = { 128, 256, 0 };
	static const size_t k_lens[] = { 16, 32, 0 };
	struct cli c;
	struct tw_tuak_params p;
	uint8_t top[32], rand_[16], sqn[6], amf[2];
	uint8_t mac_a[32], mac_s[32], res[32], ck[32], ik[32], ak[6], ak_star[6];
	int err;

	memset(&p, 0, sizeof(p));
	cli_parse(&c, "tuak", argc, argv, valued, NULL);
	p.k_len = (uint8_t)cli_hex_oneof(&c, "k", p.k, k_lens);
	if (cli_get(&c, "top") != NULL && cli_get(&c, "topc") != NULL)
		cli_usage_error(&c, "top", "give either --top or --topc, not both");
	if (cli_get(&c, "top") == NULL && cli_get(&c, "topc") == NULL)
		cli_usage_error(&c, "topc", "missing (required: --top or --topc)");
	cli_hex(&c, "rand", rand_, sizeof(rand_));
	cli_hex(&c, "sqn", sqn, sizeof(sqn));
	cli_hex(&c, "amf", amf, sizeof(amf));
	p.mac_bits = bits_opt(&c, "mac-bits", mac_sizes, 64);
	p.res_bits = bits_opt(&c, "res-bits", res_sizes, 64);
	p.ck_bits = bits_opt(&c, "ck-bits", key_sizes, 128);
	p.ik_bits = bits_opt(&c, "ik-bits", key_sizes, 128);
	p.iterations = (uint16_t)cli_uint(&c, "iterations", 1, 65535, 1);
	if (cli_get(&c, "top") != NULL) {
		cli_hex(&c, "top", top, sizeof(top));
		err = tw_tuak_topc(p.topc, top, p.k, p.k_len, p.iterations);
		if (err != TW_OK)
			cli_fail(&c, "TOPc", err);
	} else {
		cli_hex(&c, "topc", p.topc, sizeof(p.topc));
	}
	err = tw_tuak_f1(&p, rand_, sqn, amf, mac_a);
	if (err == TW_OK)
		err = tw_tuak_f1star(&p, rand_, sqn, amf, mac_s);
	if (err == TW_OK)
		err = tw_tuak_f2345(&p, rand_, res, ck, ik, ak);
	if (err == TW_OK)
		err = tw_tuak_f5star(&p, rand_, ak_star);
	if (err != TW_OK)
		cli_fail(&c, "tuak", err);
	cli_print_hex("topc", p.topc, sizeof(p.topc));
	cli_print_hex("mac_a", mac_a, p.mac_bits / 8u);
	cli_print_hex("mac_s", mac_s, p.mac_bits / 8u);
	cli_print_hex("res", res, p.res_bits / 8u);
	cli_print_hex("ck", ck, p.ck_bits / 8u);
	cli_print_hex("ik", ik, p.ik_bits / 8u);
	cli_print_hex("ak", ak, sizeof(ak));
	cli_print_hex("ak_star", ak_star, sizeof(ak_star));
	tw_wipe(&p, sizeof(p));
	tw_wipe(top, sizeof(top));
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	return 0;
}
