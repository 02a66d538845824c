/*
 * twag — twagd's logs: one line per event, key=value fields, UTC
 * timestamps with milliseconds. Callers never pass secrets, and IMSIs only
 * masked (tw_nai_mask_imsi); see worker.c.
 *
 * The log file is reopened on SIGHUP by opening the path again and
 * dup2()-ing the new descriptor over the old one, so writers in other
 * threads never see a closed descriptor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "twag/server.h"

enum {
	LINE_MAX_LEN = 1024,
	/* the JSON form of a line: every octet of the text at most doubled
	 * (an escaped '\\' or '"'; control characters never reach a line,
	 * tw_log_quote replaces them), plus the quotes, commas and braces */
	JSON_MAX_LEN = 3 * LINE_MAX_LEN,
};

static atomic_int log_fd = 2;
static atomic_int log_level = TW_LOG_INFO;
static atomic_int log_format = TW_LOG_TEXT;
static char log_path[TW_SRV_PATH_MAX];

static const char *const level_names[] = { "error", "warn", "info", "debug" };

const char *tw_log_level_name(enum tw_log_level l)
{
	return (unsigned)l < sizeof(level_names) / sizeof(level_names[0]) ? level_names[l] : "?";
}

int tw_log_open(const char *path)
{
	int fd;

	if (path == NULL || path[0] == 0) {
		log_path[0] = 0;
		atomic_store(&log_fd, 2);
		return TW_OK;
	}
	if (strlen(path) >= sizeof(log_path))
		return TW_ERR_IO;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return TW_ERR_IO;
	memcpy(log_path, path, strlen(path) + 1);
	atomic_store(&log_fd, fd);
	return TW_OK;
}

int tw_log_reopen(void)
{
	int fd, cur = atomic_load(&log_fd);

	if (log_path[0] == 0)
		return TW_OK;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return TW_ERR_IO;
	/* dup2 replaces the descriptor atomically under concurrent writers */
	if (dup3(fd, cur, O_CLOEXEC) < 0) {
		close(fd);
		return TW_ERR_IO;
	}
	close(fd);
	return TW_OK;
}

void tw_log_close(void)
{
	int fd = atomic_exchange(&log_fd, 2);

	if (fd > 2)
		close(fd);
}

void tw_log_set_level(enum tw_log_level l)
{
	atomic_store(&log_level, (int)l);
}

void tw_log_set_format(enum tw_log_format f)
{
	atomic_store(&log_format, (int)f);
}

enum tw_log_format tw_log_get_format(void)
{
	return (enum tw_log_format)atomic_load_explicit(&log_format, memory_order_relaxed);
}

bool tw_log_enabled(enum tw_log_level l)
{
	return (int)l <= atomic_load_explicit(&log_level, memory_order_relaxed);
}

static void write_all(const char *p, size_t len)
{
	int fd = atomic_load_explicit(&log_fd, memory_order_relaxed);

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* a log that cannot be written must not stop service */
		p += n;
		len -= (size_t)n;
	}
}

/* "ts=YYYY-MM-DDTHH:MM:SS." of one second, kept per thread: the date is
 * converted (gmtime_r, which takes glibc's time zone lock) and formatted
 * once a second, not for every line. */
struct ts_cache {
	time_t sec;
	bool valid;
	char text[32];
	size_t len;
};

static _Thread_local struct ts_cache ts_cache;

static size_t put_str(char *out, size_t n, const char *s)
{
	size_t k = strlen(s);

	if (n >= LINE_MAX_LEN - 2)
		return n;
	if (k > LINE_MAX_LEN - 2 - n)
		k = LINE_MAX_LEN - 2 - n;
	memcpy(out + n, s, k);
	return n + k;
}

/* Formats one line into out (LINE_MAX_LEN), newline included. */
static size_t format_line(char *out, enum tw_log_level l, const char *event,
			  const char *fmt, va_list ap)
{
	struct ts_cache *c = &ts_cache;
	struct timespec ts;
	unsigned ms;
	size_t n;
	int k;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (!c->valid || c->sec != ts.tv_sec) {
		struct tm tm;

		gmtime_r(&ts.tv_sec, &tm);
		k = snprintf(c->text, sizeof(c->text), "ts=%04d-%02d-%02dT%02d:%02d:%02d.",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			     tm.tm_min, tm.tm_sec);
		c->len = k < 0 ? 0 : (size_t)k < sizeof(c->text) ? (size_t)k : sizeof(c->text) - 1;
		c->sec = ts.tv_sec;
		c->valid = true;
	}
	memcpy(out, c->text, c->len);
	n = c->len;
	ms = (unsigned)(ts.tv_nsec / 1000000);
	out[n++] = (char)('0' + ms / 100);
	out[n++] = (char)('0' + ms / 10 % 10);
	out[n++] = (char)('0' + ms % 10);
	n = put_str(out, n, "Z level=");
	n = put_str(out, n, level_names[l]);
	n = put_str(out, n, " event=");
	n = put_str(out, n, event);
	if (fmt != NULL && fmt[0] != 0 && n < LINE_MAX_LEN - 2) {
		out[n++] = ' ';
		k = vsnprintf(out + n, LINE_MAX_LEN - n, fmt, ap);
		if (k > 0)
			n += (size_t)k < LINE_MAX_LEN - n ? (size_t)k : LINE_MAX_LEN - n - 1;
	}
	if (n > LINE_MAX_LEN - 1)
		n = LINE_MAX_LEN - 1;
	out[n++] = '\n';
	return n;
}

/* A value of the text form that is a JSON number as it stands: an
 * integer or decimal without leading zeros (counts, durations; an IMSI,
 * masked or not, or a hex string stays a string). */
static bool json_number(const char *v, size_t n)
{
	size_t i = 0, digits;

	if (i < n && v[i] == '-')
		i++;
	digits = i;
	while (i < n && v[i] >= '0' && v[i] <= '9')
		i++;
	digits = i - digits;
	if (digits == 0 || digits > 15 || (digits > 1 && v[i - digits] == '0'))
		return false;
	if (i < n && v[i] == '.') {
		size_t f = ++i;

		while (i < n && v[i] >= '0' && v[i] <= '9')
			i++;
		if (i == f)
			return false;
	}
	return i == n;
}

static size_t json_put(char *out, size_t o, size_t max, const char *s, size_t n, bool esc)
{
	for (size_t i = 0; i < n && o + 2 < max; i++) {
		char c = s[i];

		if (esc && (c == '"' || c == '\\')) {
			out[o++] = '\\';
			out[o++] = c;
		} else if (esc && (unsigned char)c < 0x20) {
			out[o++] = '?'; /* never reaches a line (tw_log_quote) */
		} else {
			out[o++] = c;
		}
	}
	return o;
}

size_t tw_log_text_to_json(char *out, size_t max, const char *text, size_t len)
{
	size_t o = 0, i = 0;
	bool first = true;

	if (max < 4)
		return 0;
	if (len > 0 && text[len - 1] == '\n')
		len--;
	out[o++] = '{';
	while (i < len) {
		size_t k0, k1, v0, v1;

		while (i < len && text[i] == ' ')
			i++;
		if (i >= len)
			break;
		k0 = i;
		while (i < len && text[i] != '=' && text[i] != ' ')
			i++;
		k1 = i;
		if (i < len && text[i] == '=') {
			i++;
			if (i < len && text[i] == '"') {
				/* tw_log_quote: no '"' inside a quoted value */
				v0 = ++i;
				while (i < len && text[i] != '"')
					i++;
				v1 = i;
				if (i < len)
					i++;
			} else {
				v0 = i;
				while (i < len && text[i] != ' ')
					i++;
				v1 = i;
			}
		} else {
			/* a bare word: its own value under "text" */
			v0 = k0;
			v1 = k1;
			k0 = k1 = 0;
		}
		/* room for ',' "key":"value" (each octet escaped at worst;
		 * an empty key is written "text") and the closing "}\n" */
		if (o + 8 + (k1 > k0 ? 2 * (k1 - k0) : 4) + 2 * (v1 - v0) > max - 2)
			break; /* cut as the text form is: whole fields only */
		if (!first)
			out[o++] = ',';
		first = false;
		out[o++] = '"';
		if (k1 > k0)
			o = json_put(out, o, max, text + k0, k1 - k0, true);
		else
			o = json_put(out, o, max, "text", 4, false);
		out[o++] = '"';
		out[o++] = ':';
		if (json_number(text + v0, v1 - v0)) {
			o = json_put(out, o, max, text + v0, v1 - v0, false);
		} else {
			out[o++] = '"';
			o = json_put(out, o, max, text + v0, v1 - v0, true);
			out[o++] = '"';
		}
	}
	out[o++] = '}';
	out[o++] = '\n';
	return o;
}

static void vlog(struct tw_log_buf *b, enum tw_log_level l, const char *event,
		 const char *fmt, va_list ap)
{
	char text[LINE_MAX_LEN], json[JSON_MAX_LEN];
	const char *line = text;
	size_t n = format_line(text, l, event, fmt, ap);

	if (tw_log_get_format() == TW_LOG_JSON) {
		n = tw_log_text_to_json(json, sizeof(json), text, n);
		line = json;
	}

	if (b == NULL) {
		write_all(line, n);
		return;
	}
	if (b->len + n > sizeof(b->buf))
		tw_log_flush(b);
	memcpy(b->buf + b->len, line, n);
	b->len += n;
}

void tw_logf(struct tw_log_buf *b, enum tw_log_level l, const char *event,
	     const char *fmt, ...)
{
	va_list ap;

	if (!tw_log_enabled(l))
		return;
	va_start(ap, fmt);
	vlog(b, l, event, fmt, ap);
	va_end(ap);
}

void tw_log_always(struct tw_log_buf *b, enum tw_log_level l, const char *event,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(b, l, event, fmt, ap);
	va_end(ap);
}

void tw_log_flush(struct tw_log_buf *b)
{
	size_t off = 0;

	/* whole lines, at most PIPE_BUF octets per write: a write of that
	 * size to a pipe is atomic, so threads' lines never interleave */
	while (off < b->len) {
		size_t n = b->len - off;

		if (n > PIPE_BUF) {
			n = PIPE_BUF;
			while (n > 0 && b->buf[off + n - 1] != '\n')
				n--;
			if (n == 0)
				n = PIPE_BUF;
		}
		write_all(b->buf + off, n);
		off += n;
	}
	b->len = 0;
}

void tw_log_quote(char *out, size_t out_max, const char *text)
{
	size_t o = 0;
	bool q = strpbrk(text, " \"=") != NULL || text[0] == 0;

	if (out_max < 3) {
		if (out_max)
			out[0] = 0;
		return;
	}
	if (q)
		out[o++] = '"';
	for (const char *p = text; *p && o + 2 < out_max; p++) {
		unsigned char c = (unsigned char)*p;

		out[o++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\\') ? '?' : (char)c;
	}
	if (q)
		out[o++] = '"';
	out[o] = 0;
}
