/* twag CLI — option parsing and output helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

static size_t hex_any(const struct cli *c, const char *name, uint8_t *out,
		      size_t max)
{
	const char *v = cli_need(c, name);
	size_t n = strlen(v), len = 0;

	if (n % 2 != 0)
		cli_usage_error(c, name, "odd number of hex digits (%zu)", n);
	if (n / 2 > max)
		cli_usage_error(c, name, "too long: %zu hex digits, at most %zu",
				n, 2 * max);
	if (tw_hex_decode(out, max, &len, v, n) != TW_OK)
		cli_usage_error(c, name, "not hexadecimal");
	return len;
}

void cli_hex(const struct cli *c, const char *name, uint8_t *out, size_t len)
{
	const char *v = cli_need(c, name);

	if (strlen(v) != 2 * len)
		cli_usage_error(c, name, "expected %zu hex digits, got %zu",
				2 * len, strlen(v));
	(void)hex_any(c, name, out, len);
}

size_t cli_hex_range(const struct cli *c, const char *name, uint8_t *out,
		     size_t min, size_t max, size_t step)
{
	const char *v = cli_need(c, name);
	size_t n = strlen(v);

	if (n % 2 == 0 && (n / 2 < min || n / 2 > max ||
			   (step > 1 && (n / 2) % step != 0)))
		cli_usage_error(c, name,
				"expected %zu..%zu bytes%s%s of hex, got %zu",
				min, max, step > 1 ? " in steps of " : "",
				step > 1 ? (step == 8 ? "8" : "n") : "", n / 2);
	return hex_any(c, name, out, max);
}

size_t cli_hex_oneof(const struct cli *c, const char *name, uint8_t *out,
		     const size_t *lens)
{
	const char *v = cli_need(c, name);
	size_t n = strlen(v), max = 0;
	char allowed[128] = "";
	size_t used = 0;

	for (const size_t *l = lens; *l != 0; l++) {
		if (n == 2 * *l)
			return hex_any(c, name, out, *l);
		if (*l > max)
			max = *l;
		int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%zu",
				 used ? " or " : "", 2 * *l);
		if (w > 0 && (size_t)w < sizeof(allowed) - used)
			used += (size_t)w;
	}
	cli_usage_error(c, name, "expected %s hex digits, got %zu", allowed, n);
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
	char buf[2 * 512 + 1];

	if (len > 512)
		len = 512;
	tw_hex_encode(buf, v, len);
	printf("%s=%s\n", name, buf);
}
