/*
 * twag — text built into a caller's buffer (the /metrics and /sessions
 * bodies): printf-style appends that stop, marking the overflow, at the
 * first one that does not fit; Prometheus HELP/TYPE lines.
 */
#ifndef TWAG_TEXTOUT_H
#define TWAG_TEXTOUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct out {
	char *buf;
	size_t max, len;
	bool overflow;
};

static inline void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->max - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->max - o->len) {
		o->overflow = true;
		return;
	}
	o->len += (size_t)n;
}

static inline void head(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#endif
