/* twag milenage — TS 35.206 f1, f1*, f2..f5, f5* and AUTN from K, OP/OPc. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/milenage.h"

int cmd_milenage(int argc, char **argv)
{
	static const char *const valued[] = {
		"k", "op", "opc", "rand", "sqn", "amf", "c1", "c2", "c3", "c4",
		"c5", "r1", "r2", "r3", "r4", "r5", NULL
	};
	struct cli c;
	uint8_t k[16], op[16], opc[16], rand_[16], sqn[6], amf[2], autn[16];
	struct tw_milenage_consts consts = tw_milenage_default_consts;
	struct tw_milenage_out out;
	int err;

	cli_parse(&c, "milenage", argc, argv, valued, NULL);
	cli_hex(&c, "k", k, sizeof(k));
	if (cli_get(&c, "op") != NULL && cli_get(&c, "opc") != NULL)
		cli_usage_error(&c, "op", "give either --op or --opc, not both");
	if (cli_get(&c, "op") == NULL && cli_get(&c, "opc") == NULL)
		cli_usage_error(&c, "opc", "missing (required: --op or --opc)");
	cli_hex(&c, "rand", rand_, sizeof(rand_));
	cli_hex(&c, "sqn", sqn, sizeof(sqn));
	cli_hex(&c, "amf", amf, sizeof(amf));
	for (int i = 0; i < 5; i++) {
		char cn[3] = { 'c', (char)('1' + i), 0 };
		char rn[3] = { 'r', (char)('1' + i), 0 };

		if (cli_get(&c, cn) != NULL)
			cli_hex(&c, cn, consts.c[i], 16);
		consts.r[i] = (uint8_t)cli_uint(&c, rn, 0, 127, consts.r[i]);
	}
	if (cli_get(&c, "op") != NULL) {
		cli_hex(&c, "op", op, sizeof(op));
		err = tw_milenage_opc(opc, k, op);
		if (err != TW_OK)
			cli_fail(&c, "OPc", err);
	} else {
		cli_hex(&c, "opc", opc, sizeof(opc));
	}
	err = tw_milenage_all(k, opc, rand_, sqn, amf, &consts, &out);
	if (err != TW_OK)
		cli_fail(&c, "milenage", err);
	err = tw_aka_autn_build(autn, sqn, out.ak, amf, out.mac_a);
	if (err != TW_OK)
		cli_fail(&c, "AUTN", err);
	cli_print_hex("opc", opc, sizeof(opc));
	cli_print_hex("mac_a", out.mac_a, sizeof(out.mac_a));
	cli_print_hex("mac_s", out.mac_s, sizeof(out.mac_s));
	cli_print_hex("res", out.res, sizeof(out.res));
	cli_print_hex("ck", out.ck, sizeof(out.ck));
	cli_print_hex("ik", out.ik, sizeof(out.ik));
	cli_print_hex("ak", out.ak, sizeof(out.ak));
	cli_print_hex("ak_star", out.ak_star, sizeof(out.ak_star));
	cli_print_hex("autn", autn, sizeof(autn));
	tw_wipe(k, sizeof(k));
	tw_wipe(op, sizeof(op));
	tw_wipe(opc, sizeof(opc));
	tw_wipe(&out, sizeof(out));
	return 0;
}
