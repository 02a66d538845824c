/* twag CLI — option parsing and output helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/hex.h"

_Noreturn void cli_usage_error(const struct cli *c, const char *opt,
			       const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "twag %s: ", c->cmd);
	if (opt != NULL)
		fprintf(stderr, "--%s: ", opt);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(CLI_EXIT_USAGE);
}

_Noreturn void cli_fail(const struct cli *c, const char *what, int err)
{
	fprintf(stderr, "twag %s: %s: %s\n", c->cmd, what, tw_strerror(err));
	exit(CLI_EXIT_FAIL);
}

static bool listed(const char *const *list, const char *name, size_t len)
{
	for (; list != NULL && *list != NULL; list++)
		if (strlen(*list) == len && strncmp(*list, name, len) == 0)
			return true;
	return false;
}

void cli_parse(struct cli *c, const char *cmd, int argc, char **argv,
	       const char *const *valued, const char *const *flags)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			cli_usage_error(c, NULL, "unexpected argument '%s'", a);
		const char *name = a + 2;
		const char *eq = strchr(name, '=');
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
		const char *val = NULL;

		if (listed(valued, name, nlen)) {
			if (eq != NULL)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				cli_usage_error(c, name, "needs a value");
		} else if (listed(flags, name, nlen)) {
			if (eq != NULL)
				cli_usage_error(c, NULL, "--%.*s takes no value",
						(int)nlen, name);
		} else {
			cli_usage_error(c, NULL, "unknown option --%.*s",
					(int)nlen, name);
		}
		for (int j = 0; j < c->nopt; j++)
			if (strlen(c->opt[j].name) == nlen &&
			    strncmp(c->opt[j].name, name, nlen) == 0)
				cli_usage_error(c, NULL, "--%.*s given twice",
						(int)nlen, name);
		if (c->nopt == CLI_MAX_OPTS)
			cli_usage_error(c, NULL, "too many options");
		/* Keep the name NUL-terminated: copy it when "--name=value". */
		if (eq != NULL) {
			char *n = strndup(name, nlen);

			if (n == NULL)
				cli_usage_error(c, NULL, "out of memory");
			name = n;
		}
		c->opt[c->nopt].name = name;
		c->opt[c->nopt].val = val;
		c->nopt++;
	}
}

const char *cli_get(const struct cli *c, const char *name)
{
	for (int i = 0; i < c->nopt; i++)
		if (strcmp(c->opt[i].name, name) == 0)
			return c->opt[i].val;
	return NULL;
}

bool cli_flag(const struct cli *c, const char *name)
{
	for (int i = 0; i < c->nopt; i++)
		if (strcmp(c->opt[i].name, name) == 0)
			return true;
	return false;
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

	if (v[0] != '@') {
		*n = strlen(v);
		return v;
	}
	FILE *f = strcmp(v + 1, "-") == 0 ? stdin : fopen(v + 1, "r");
	size_t len = 0, cap = max_digits + 2;
	int ch;

	if (f == NULL)
		cli_usage_error(c, name, "%s: %s", v + 1, strerror(errno));
	if (buf != NULL)
		tw_wipe(buf, buf_cap); /* a key may have been read from a file */
	free(buf);
	buf = malloc(cap);
	buf_cap = cap;
	if (buf == NULL)
		cli_usage_error(c, name, "out of memory");
	while ((ch = getc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'))
		;
	while (ch != EOF && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && len < cap - 1) {
		buf[len++] = (char)ch;
		ch = getc(f);
	}
	while (ch != EOF && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'))
		ch = getc(f);
	bool error = ferror(f) != 0;
	if (f != stdin)
		fclose(f);
	if (error)
		cli_usage_error(c, name, "%s: read error", v + 1);
	if (ch != EOF && len < cap - 1)
		cli_usage_error(c, name, "%s: more than one hex value", v + 1);
	buf[len] = '\0';
	*n = len;
	return buf;
}

static size_t hex_any(const struct cli *c, const char *name, const char *v, size_t n,
		      uint8_t *out, size_t max)
{
	size_t len = 0;

	if (n % 2 != 0)
		cli_usage_error(c, name, "odd number of hex digits (%zu)", n);
	if (n / 2 > max)
		cli_usage_error(c, name, "too long: %s%zu hex digits, at most %zu",
				n > 2 * max + 1 ? "more than " : "", n > 2 * max + 1 ? 2 * max + 1 : n,
				2 * max);
	if (tw_hex_decode(out, max, &len, v, n) != TW_OK)
		cli_usage_error(c, name, "not hexadecimal");
	return len;
}

void cli_hex(const struct cli *c, const char *name, uint8_t *out, size_t len)
{
	size_t n;
	const char *v = hex_text(c, name, 2 * len, &n);

	if (n != 2 * len)
		cli_usage_error(c, name, "expected %zu hex digits, got %zu%s", 2 * len,
				n, n > 2 * len ? " or more" : "");
	(void)hex_any(c, name, v, n, out, len);
}

size_t cli_hex_range(const struct cli *c, const char *name, uint8_t *out,
		     size_t min, size_t max, size_t step)
{
	size_t n;
	const char *v = hex_text(c, name, 2 * max, &n);

	if (n % 2 == 0 && (n / 2 < min || n / 2 > max ||
			   (step > 1 && (n / 2) % step != 0)))
		cli_usage_error(c, name,
				"expected %zu..%zu bytes%s%s of hex, got %zu%s",
				min, max, step > 1 ? " in steps of " : "",
				step > 1 ? (step == 8 ? "8" : "n") : "", n / 2,
				n > 2 * max ? " or more" : "");
	return hex_any(c, name, v, n, out, max);
}

size_t cli_hex_oneof(const struct cli *c, const char *name, uint8_t *out,
		     const size_t *lens)
{
	size_t n, max = 0;
	char allowed[128] = "";
	size_t used = 0;

	for (const size_t *l = lens; *l != 0; l++)
		if (*l > max)
			max = *l;
	const char *v = hex_text(c, name, 2 * max, &n);
	for (const size_t *l = lens; *l != 0; l++) {
		if (n == 2 * *l)
			return hex_any(c, name, v, n, out, *l);
		int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%zu",
				 used ? " or " : "", 2 * *l);
		if (w > 0 && (size_t)w < sizeof(allowed) - used)
			used += (size_t)w;
	}
	cli_usage_error(c, name, "expected %s hex digits, got %zu%s", allowed, n,
			n > 2 * max ? " or more" : "");
}

unsigned long cli_uint(const struct cli *c, const char *name,
		       unsigned long min, unsigned long max, unsigned long def)
{
	const char *v = cli_get(c, name);
	char *end = NULL;

	if (v == NULL)
		return def;
	if (*v < '0' || *v > '9')
		cli_usage_error(c, name, "expected a decimal number");
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0')
		cli_usage_error(c, name, "expected a decimal number");
	if (x < min || x > max)
		cli_usage_error(c, name, "must be between %lu and %lu", min, max);
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
