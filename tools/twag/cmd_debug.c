/*
 * twag debug — the per-request debug of a running twagd (like radiusd -X
 * for chosen conversations only; docs/twagd.md "Per-request debug"),
 * switched on and off at run time over its control socket (--control,
 * default /run/twagd/control; src/server/control.c, "debug"):
 *
 *   twag debug [show] [--control PATH] [--json]
 *   twag debug client add|del IP[/PREFIX] [--control PATH] [--json]
 *   twag debug imsi add|del IMSI [--control PATH] [--json]
 *   twag debug clear [--control PATH] [--json]
 *
 * Prints the conditions in force after the change (IMSIs masked): one
 * "client=NET/P" or "imsi=MASKED" line each, then "ok clients=N
 * imsis=N". Exit 0; 2 for bad usage, a condition refused (the reason on
 * stderr) or no twagd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"

enum { DEBUG_TIMEOUT_MS = 10000, DEBUG_ANSWER_MAX = 16384 };

int cmd_debug(int argc, char **argv)
{
	static const char *const valued[] = { "control", NULL };
	static const char *const flags[] = { "json", NULL };
	const char *words[3], *path;
	char *opts[16], line[600] = "", why[300], *ans;
	int nw = 0, nopt = 0;
	unsigned acks, others;
	enum ctl_status st;
	struct cli c;

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) == 0) {
			if (nopt >= 14)
				break;
			opts[nopt++] = argv[i];
			if (strchr(argv[i], '=') == NULL && strcmp(argv[i], "--json") != 0 &&
			    i + 1 < argc)
				opts[nopt++] = argv[++i];
		} else if (nw < 3) {
			words[nw++] = argv[i];
		} else {
			fprintf(stderr, "twag debug: too many words (try twag --help)\n");
			return CLI_EXIT_USAGE;
		}
	}
	cli_parse(&c, "debug", nopt, opts, valued, flags);
	if (!(nw == 0 || (nw == 1 && (strcmp(words[0], "show") == 0 || strcmp(words[0], "clear") == 0)) ||
	      (nw == 3 && (strcmp(words[0], "client") == 0 || strcmp(words[0], "imsi") == 0) &&
	       (strcmp(words[1], "add") == 0 || strcmp(words[1], "del") == 0)))) {
		fprintf(stderr, "twag debug: show, clear, client add|del IP[/PREFIX] or imsi add|del IMSI\n");
		return CLI_EXIT_USAGE;
	}
	path = cli_get(&c, "control");
	if (path == NULL)
		path = CTL_DEFAULT_PATH;
	if (!ctl_word(line, sizeof(line), "debug"))
		return CLI_EXIT_USAGE;
	for (int i = 0; i < nw; i++)
		if (!ctl_word(line, sizeof(line), words[i])) {
			fprintf(stderr, "twag debug: the request is too long\n");
			return CLI_EXIT_USAGE;
		}
	ans = malloc(DEBUG_ANSWER_MAX);
	if (ans == NULL)
		return CLI_EXIT_FAIL;
	st = ctl_request(path, line, ans, DEBUG_ANSWER_MAX, DEBUG_TIMEOUT_MS, why, sizeof(why));
	if (st == CTL_NO_DAEMON || st == CTL_FAILED) {
		fprintf(stderr, "twag debug: %s%s\n", why,
			st == CTL_NO_DAEMON ? " (is twagd running with --control-socket?)" : "");
		free(ans);
		return CLI_EXIT_USAGE;
	}
	ctl_print(ans, cli_flag(&c, "json"), &acks, &others);
	free(ans);
	return st == CTL_OK ? 0 : CLI_EXIT_USAGE;
}
