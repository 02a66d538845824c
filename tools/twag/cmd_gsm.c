/* twag gsm — TS 33.102 §6.8.1.2 conversion functions c2 (RES -> SRES) and
 * c3 (CK, IK -> Kc), so a USIM subscriber can answer EAP-SIM. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/gsm.h"

int cmd_gsm(int argc, char **argv)
{
	struct cli c;

	if (argc >= 1 && strcmp(argv[0], "c2") == 0) {
		static const char *const valued[] = { "res", NULL };
		uint8_t res[16], sres[4];

		cli_parse(&c, "gsm c2", argc - 1, argv + 1, valued, NULL);
		size_t n = cli_hex_range(&c, "res", res, 4, 16, 1);
		int err = tw_gsm_c2(sres, res, n);
		if (err != TW_OK)
			cli_fail(&c, "c2", err);
		cli_print_hex("sres", sres, sizeof(sres));
		return 0;
	}
	if (argc >= 1 && strcmp(argv[0], "c3") == 0) {
		static const char *const valued[] = { "ck", "ik", NULL };
		uint8_t ck[16], ik[16], kc[8];

		cli_parse(&c, "gsm c3", argc - 1, argv + 1, valued, NULL);
		cli_hex(&c, "ck", ck, sizeof(ck));
		cli_hex(&c, "ik", ik, sizeof(ik));
		tw_gsm_c3(kc, ck, ik);
		cli_print_hex("kc", kc, sizeof(kc));
		tw_wipe(ck, sizeof(ck));
		tw_wipe(ik, sizeof(ik));
		tw_wipe(kc, sizeof(kc));
		return 0;
	}
	fprintf(stderr, "twag gsm: expected 'c2' or 'c3'\n");
	return CLI_EXIT_USAGE;
}
