/* twag comp128 — GSM A3/A8 (COMP128 v1, v2, v3): SRES and Kc. */
#include <stdio.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/comp128.h"

int cmd_comp128(int argc, char **argv)
{
	static const char *const valued[] = { "version", "ki", "rand", NULL };
	struct cli c;
	uint8_t ki[16], rand_[16], sres[4], kc[8];

	cli_parse(&c, "comp128", argc, argv, valued, NULL);
	unsigned long version = cli_uint(&c, "version", 1, 3, 0);
	if (cli_get(&c, "version") == NULL)
		cli_usage_error(&c, "version", "missing (required: 1, 2 or 3)");
	cli_hex(&c, "ki", ki, sizeof(ki));
	cli_hex(&c, "rand", rand_, sizeof(rand_));
	int err = tw_comp128((unsigned)version, ki, rand_, sres, kc);
	tw_wipe(ki, sizeof(ki));
	if (err != TW_OK)
		cli_fail(&c, "comp128", err);
	cli_print_hex("sres", sres, sizeof(sres));
	cli_print_hex("kc", kc, sizeof(kc));
	tw_wipe(kc, sizeof(kc));
	return 0;
}
