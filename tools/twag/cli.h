/*
 * twag CLI — option parsing shared by the commands.
 *
 * Interface contract (scripts depend on it): options are "--name value" (or
 * "--name=value"); a hex option may be given as "@FILE" (its contents, white
 * space around them ignored; "@-" is standard input) for values longer than
 * one argument may be; hex is accepted in either case and printed lowercase with
 * no separators; results are "name=value" lines on stdout and exit 0; any bad
 * input prints exactly one line on stderr naming the option and exits 2.
 */
#ifndef TWAG_CLI_H
#define TWAG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CLI_MAX_OPTS = 48, CLI_EXIT_USAGE = 2, CLI_EXIT_FAIL = 1 };

struct cli_opt {
	const char *name; /* without the leading "--"; name_len octets (a
			   * "--name=value" argument is not cut) */
	size_t name_len;
	const char *val;  /* NULL for a flag */
};

struct cli {
	const char *cmd; /* "milenage", "kdf aka-prime", ... for messages */
	int nopt;
	struct cli_opt opt[CLI_MAX_OPTS];
};

/*
 * Parses argv[0..argc) as options. valued[] lists the options that take a
 * value, flags[] those that do not (both NULL-terminated; flags may be NULL).
 * Unknown, repeated or value-less options end the program with status 2.
 */
void cli_parse(struct cli *c, const char *cmd, int argc, char **argv,
	       const char *const *valued, const char *const *flags);

/* The value of --name, or NULL if absent. */
const char *cli_get(const struct cli *c, const char *name);
bool cli_flag(const struct cli *c, const char *name);
/* The value of --name; a missing option ends the program with status 2. */
const char *cli_need(const struct cli *c, const char *name);

/* Exactly len bytes of hex from --name (required). */
void cli_hex(const struct cli *c, const char *name, uint8_t *out, size_t len);
/* Hex of any length in [min, max] bytes from --name (required); returns it.
 * If step > 1, the length must be a multiple of step. */
size_t cli_hex_range(const struct cli *c, const char *name, uint8_t *out,
		     size_t min, size_t max, size_t step);
/* Hex whose length is one of lens[] (0-terminated); returns it. */
size_t cli_hex_oneof(const struct cli *c, const char *name, uint8_t *out,
		     const size_t *lens);
/* Decimal integer in [min, max]; def if absent. */
unsigned long cli_uint(const struct cli *c, const char *name,
		       unsigned long min, unsigned long max, unsigned long def);

/* One line to stderr: "twag <cmd>: --<opt>: <msg>", then exit 2. */
_Noreturn void cli_usage_error(const struct cli *c, const char *opt,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One line to stderr: "twag <cmd>: <what>: <error text>", then exit 1. */
_Noreturn void cli_fail(const struct cli *c, const char *what, int err);

/* Prints "name=<lowercase hex>", every octet. */
void cli_print_hex(const char *name, const uint8_t *v, size_t len);
/* Flushes stdout: status if everything was written, else one line on
 * stderr and CLI_EXIT_FAIL (a truncated result must not exit 0). */
int cli_finish(int status);

/* Commands: each returns the process exit status. */
int cmd_milenage(int argc, char **argv);
int cmd_tuak(int argc, char **argv);
int cmd_comp128(int argc, char **argv);
int cmd_kdf(int argc, char **argv);
int cmd_suci(int argc, char **argv);
int cmd_keywrap(int argc, char **argv);
int cmd_gsm(int argc, char **argv);
int cmd_cpu(int argc, char **argv);
int cmd_wlan(int argc, char **argv);
int cmd_ccmp(int argc, char **argv);
int cmd_esp(int argc, char **argv);
int cmd_subscriber(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_debug(int argc, char **argv);

#endif
