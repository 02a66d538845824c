/* twag CLI — parsing of option text, without I/O other than the stream
 * it is handed and without exiting (cli_text.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_text.h"
#include "twag/hex.h"

static bool listed(const char *const *list, const char *name, size_t len)
{
	for (; list != NULL && *list != NULL; list++)
		if (strlen(*list) == len && strncmp(*list, name, len) == 0)
			return true;
	return false;
}

static bool same_name(const struct cli_opt *o, const char *name, size_t len)
{
	return o->name_len == len && strncmp(o->name, name, len) == 0;
}

#define BAD(...)                                     \
	do {                                         \
		snprintf(err, err_len, __VA_ARGS__); \
		return TW_ERR_INVAL;                 \
	} while (0)

int cli_text_args(struct cli *c, const char *cmd, int argc, char **argv,
		  const char *const *valued, const char *const *flags, char *err,
		  size_t err_len)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			BAD("unexpected argument '%s'", a);
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
				BAD("--%s: needs a value", name);
		} else if (listed(flags, name, nlen)) {
			if (eq != NULL)
				BAD("--%.*s takes no value", (int)nlen, name);
		} else {
			BAD("unknown option --%.*s", (int)nlen, name);
		}
		for (int j = 0; j < c->nopt; j++)
			if (same_name(&c->opt[j], name, nlen))
				BAD("--%.*s given twice", (int)nlen, name);
		if (c->nopt == CLI_MAX_OPTS)
			BAD("too many options");
		/* "--name=value": the name is the part before '=', by length */
		c->opt[c->nopt].name = name;
		c->opt[c->nopt].name_len = nlen;
		c->opt[c->nopt].val = val;
		c->nopt++;
	}
	return TW_OK;
}

const char *cli_get(const struct cli *c, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < c->nopt; i++)
		if (same_name(&c->opt[i], name, len))
			return c->opt[i].val;
	return NULL;
}

bool cli_flag(const struct cli *c, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < c->nopt; i++)
		if (same_name(&c->opt[i], name, len))
			return true;
	return false;
}

static bool is_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

int cli_text_hex_read(FILE *f, char *buf, size_t cap, size_t *len, char *err,
		      size_t err_len)
{
	size_t n = 0;
	int ch;

	if (cap < 2)
		return TW_ERR_INVAL;
	while ((ch = getc(f)) != EOF && is_space(ch))
		;
	while (ch != EOF && !is_space(ch) && n < cap - 1) {
		buf[n++] = (char)ch;
		ch = getc(f);
	}
	while (ch != EOF && is_space(ch))
		ch = getc(f);
	buf[n] = '\0';
	*len = n;
	if (ferror(f)) {
		snprintf(err, err_len, "read error");
		return TW_ERR_IO;
	}
	/* a full buffer is "too long", which the length check says */
	if (ch != EOF && n < cap - 1) {
		snprintf(err, err_len, "more than one hex value");
		return TW_ERR_DECODE;
	}
	return TW_OK;
}

/* v[0..n) as at most max octets into out; *out_len their count. */
static int hex_any(const char *v, size_t n, uint8_t *out, size_t max, size_t *out_len,
		   char *err, size_t err_len)
{
	if (n % 2 != 0)
		BAD("odd number of hex digits (%zu)", n);
	if (n / 2 > max)
		BAD("too long: %s%zu hex digits, at most %zu",
		    n > 2 * max + 1 ? "more than " : "", n > 2 * max + 1 ? 2 * max + 1 : n,
		    2 * max);
	if (tw_hex_decode(out, max, out_len, v, n) != TW_OK)
		BAD("not hexadecimal");
	return TW_OK;
}

int cli_text_hex_exact(const char *v, size_t n, uint8_t *out, size_t len, char *err,
		       size_t err_len)
{
	size_t got;

	if (n != 2 * len)
		BAD("expected %zu hex digits, got %zu%s", 2 * len, n,
		    n > 2 * len ? " or more" : "");
	return hex_any(v, n, out, len, &got, err, err_len);
}

int cli_text_hex_range(const char *v, size_t n, uint8_t *out, size_t min, size_t max,
		       size_t step, size_t *out_len, char *err, size_t err_len)
{
	if (n % 2 == 0 && (n / 2 < min || n / 2 > max || (step > 1 && (n / 2) % step != 0)))
		BAD("expected %zu..%zu bytes%s%s of hex, got %zu%s", min, max,
		    step > 1 ? " in steps of " : "", step > 1 ? (step == 8 ? "8" : "n") : "",
		    n / 2, n > 2 * max ? " or more" : "");
	return hex_any(v, n, out, max, out_len, err, err_len);
}

int cli_text_hex_oneof(const char *v, size_t n, uint8_t *out, const size_t *lens,
		       size_t *out_len, char *err, size_t err_len)
{
	size_t max = 0;
	char allowed[128] = "";
	size_t used = 0;

	for (const size_t *l = lens; *l != 0; l++)
		if (*l > max)
			max = *l;
	for (const size_t *l = lens; *l != 0; l++) {
		if (n == 2 * *l)
			return hex_any(v, n, out, *l, out_len, err, err_len);
		int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%zu",
				 used ? " or " : "", 2 * *l);
		if (w > 0 && (size_t)w < sizeof(allowed) - used)
			used += (size_t)w;
	}
	BAD("expected %s hex digits, got %zu%s", allowed, n, n > 2 * max ? " or more" : "");
}

int cli_text_uint(const char *v, unsigned long min, unsigned long max, unsigned long *out,
		  char *err, size_t err_len)
{
	char *end = NULL;
	unsigned long x;

	if (*v < '0' || *v > '9')
		BAD("expected a decimal number");
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0')
		BAD("expected a decimal number");
	if (x < min || x > max)
		BAD("must be between %lu and %lu", min, max);
	*out = x;
	return TW_OK;
}

#undef BAD

void cli_text_oneline(char *msg)
{
	for (; *msg != '\0'; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}
