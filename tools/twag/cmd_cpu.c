/* twag cpu — which implementation paths this machine and TWAG_CPU enable. */
#include <stdio.h>

#include "cli.h"
#include "twag/cpu.h"

int cmd_cpu(int argc, char **argv)
{
	struct cli c;
	char buf[128];

	cli_parse(&c, "cpu", argc, argv, NULL, NULL);
	printf("level=%s\n", tw_cpu_level_name());
	tw_cpu_describe(buf, sizeof(buf));
	printf("features=%s\n", buf);
	return 0;
}
