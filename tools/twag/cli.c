/* twag CLI — option handling that ends the process on bad input, and the
 * output helpers; the parsing itself is in cli_text.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_text.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/hex.h"

_Noreturn void cli_usage_error(const struct cli *c, const char *opt,
			       const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	/* formatted first: the message may quote an argument, which may
	 * hold a newline, and it must stay one line */
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0)
		msg = malloc((size_t)n + 1);
	if (msg != NULL) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "twag %s: ", c->cmd);
	if (opt != NULL)
		fprintf(stderr, "--%s: ", opt);
	if (msg != NULL) {
		cli_text_oneline(msg);
		fputs(msg, stderr);
	} else {
		fputs("(no memory for the message)", stderr);
	}
	fputc('\n', stderr);
	exit(CLI_EXIT_USAGE);
}

_Noreturn void cli_fail(const struct cli *c, const char *what, int err)
{
	fprintf(stderr, "twag %s: %s: %s\n", c->cmd, what, tw_strerror(err));
	exit(CLI_EXIT_FAIL);
}

/* A message may quote an argument whole: one is at most 128 KiB on Linux
 * (MAX_ARG_STRLEN), so this holds any with its message. */
static char arg_err[131072 + CLI_TEXT_ERR_MAX];

void cli_parse(struct cli *c, const char *cmd, int argc, char **argv,
	       const char *const *valued, const char *const *flags)
{
	if (cli_text_args(c, cmd, argc, argv, valued, flags, arg_err, sizeof(arg_err)) != TW_OK)
		cli_usage_error(c, NULL, "%s", arg_err);
}

const char *cli_need(const struct cli *c, const char *name)
{
	const char *v = cli_get(c, name);

	if (v == NULL)
		cli_usage_error(c, name, "missing (required)");
	return v;
}

/*
 * The hex text of --name: the value itself, or with "@FILE" the contents
 * of FILE ("@-": standard input), white space around it ignored; a hex
 * value may then be longer than one argument may be (128 KiB on Linux).
 * At most max_digits + 1 digits are read: enough to tell "too long".
 */
static const char *hex_text(const struct cli *c, const char *name, size_t max_digits,
			    size_t *n)
{
	static char *buf;
	static size_t buf_cap;
	const char *v = cli_need(c, name);
	char err[CLI_TEXT_ERR_MAX];
	int rc;

	if (v[0] != '@') {
		*n = strlen(v);
		return v;
	}
	FILE *f = strcmp(v + 1, "-") == 0 ? stdin : fopen(v + 1, "r");
	size_t cap = max_digits + 2;

	if (f == NULL)
		cli_usage_error(c, name, "%s: %s", v + 1, strerror(errno));
	if (buf != NULL)
		tw_wipe(buf, buf_cap); /* a key may have been read from a file */
	free(buf);
	buf = malloc(cap);
	buf_cap = cap;
	if (buf == NULL)
		cli_usage_error(c, name, "out of memory");
	rc = cli_text_hex_read(f, buf, cap, n, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (rc != TW_OK)
		cli_usage_error(c, name, "%s: %s", v + 1, err);
	return buf;
}

void cli_hex(const struct cli *c, const char *name, uint8_t *out, size_t len)
{
	char err[CLI_TEXT_ERR_MAX];
	size_t n;
	const char *v = hex_text(c, name, 2 * len, &n);

	if (cli_text_hex_exact(v, n, out, len, err, sizeof(err)) != TW_OK)
		cli_usage_error(c, name, "%s", err);
}

size_t cli_hex_range(const struct cli *c, const char *name, uint8_t *out,
		     size_t min, size_t max, size_t step)
{
	char err[CLI_TEXT_ERR_MAX];
	size_t n, len = 0;
	const char *v = hex_text(c, name, 2 * max, &n);

	if (cli_text_hex_range(v, n, out, min, max, step, &len, err, sizeof(err)) != TW_OK)
		cli_usage_error(c, name, "%s", err);
	return len;
}

size_t cli_hex_oneof(const struct cli *c, const char *name, uint8_t *out,
		     const size_t *lens)
{
	char err[CLI_TEXT_ERR_MAX];
	size_t n, max = 0, len = 0;

	for (const size_t *l = lens; *l != 0; l++)
		if (*l > max)
			max = *l;
	const char *v = hex_text(c, name, 2 * max, &n);
	if (cli_text_hex_oneof(v, n, out, lens, &len, err, sizeof(err)) != TW_OK)
		cli_usage_error(c, name, "%s", err);
	return len;
}

unsigned long cli_uint(const struct cli *c, const char *name,
		       unsigned long min, unsigned long max, unsigned long def)
{
	const char *v = cli_get(c, name);
	char err[CLI_TEXT_ERR_MAX];
	unsigned long x = 0;

	if (v == NULL)
		return def;
	if (cli_text_uint(v, min, max, &x, err, sizeof(err)) != TW_OK)
		cli_usage_error(c, name, "%s", err);
	return x;
}

void cli_print_hex(const char *name, const uint8_t *v, size_t len)
{
	char buf[2 * 256 + 1];

	/* Every octet, in pieces: the inputs the commands take (up to a
	 * 64 KiB ESP packet) are longer than one buffer. A write error is
	 * caught once, at exit (cli_finish). */
	fputs(name, stdout);
	putchar('=');
	for (size_t off = 0; off < len; off += 256) {
		size_t n = len - off < 256 ? len - off : 256;

		tw_hex_encode(buf, v + off, n);
		fwrite(buf, 1, 2 * n, stdout);
	}
	putchar('\n');
}

int cli_finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "twag: writing the output: %s\n",
			errno != 0 ? strerror(errno) : "I/O error");
		return CLI_EXIT_FAIL;
	}
	return status;
}
