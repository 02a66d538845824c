/*
 * twag CLI — the client side of twagd's control socket (ctl.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ctl_word(char *line, size_t max, const char *w)
{
	size_t k = strlen(line);

	if (k > 0) {
		if (k + 1 >= max)
			return false;
		line[k++] = ' ';
	}
	for (; *w; w++) {
		unsigned char c = (unsigned char)*w;

		if (c <= 0x20 || c >= 0x7f || c == '%') {
			if (k + 3 >= max)
				return false;
			snprintf(line + k, 4, "%%%02X", c);
			k += 3;
		} else {
			if (k + 1 >= max)
				return false;
			line[k++] = (char)c;
		}
	}
	line[k] = 0;
	return true;
}

enum ctl_status ctl_request(const char *path, const char *line, char *ans, size_t max,
			    unsigned timeout_ms, char *why, size_t why_len)
{
	struct sockaddr_un sa;
	long long deadline = mono_ms() + timeout_ms;
	size_t got = 0, len = strlen(line);
	int fd;

	ans[0] = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, why_len, "%s: path too long", path);
		return CTL_FAILED;
	}
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, why_len, "socket: %s", strerror(errno));
		return CTL_FAILED;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		snprintf(why, why_len, "%s: %s", path, strerror(e));
		return e == ENOENT || e == ECONNREFUSED ? CTL_NO_DAEMON : CTL_FAILED;
	}
	if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		snprintf(why, why_len, "%s: send: %s", path, strerror(errno));
		close(fd);
		return CTL_FAILED;
	}
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		long long now = mono_ms();
		ssize_t n;

		if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0) {
			snprintf(why, why_len, "%s: no answer within %u ms", path, timeout_ms);
			close(fd);
			return CTL_FAILED;
		}
		if (got + 1 >= max) {
			snprintf(why, why_len, "%s: answer too long", path);
			close(fd);
			return CTL_FAILED;
		}
		n = recv(fd, ans + got, max - 1 - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	ans[got] = 0;
	{
		/* the last line says how it ended */
		const char *last = ans + got;

		if (got == 0 || ans[got - 1] != '\n') {
			snprintf(why, why_len, "%s: the answer was cut short", path);
			return CTL_FAILED;
		}
		last--;
		while (last > ans && last[-1] != '\n')
			last--;
		if (strncmp(last, "ok", 2) == 0)
			return CTL_OK;
		if (strncmp(last, "error", 5) == 0)
			return CTL_ERROR;
		snprintf(why, why_len, "%s: not a twagd control answer", path);
		return CTL_FAILED;
	}
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
						: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A JSON string of the percent-decoded v[0..n). */
static void json_val(const char *v, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)v[i];

		if (c == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
			c = hexval(v[i + 1]) << 4 | hexval(v[i + 2]);
			i += 2;
		}
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* key=value words of p[0..n) as JSON members. */
static void json_fields(const char *p, size_t n)
{
	size_t i = 0;
	bool first = true;

	putchar('{');
	while (i < n) {
		size_t w = i, eq;

		while (i < n && p[i] != ' ')
			i++;
		for (eq = w; eq < i && p[eq] != '='; eq++)
			;
		if (eq < i) {
			printf("%s", first ? "" : ",");
			json_val(p + w, eq - w);
			putchar(':');
			json_val(p + eq + 1, i - eq - 1);
			first = false;
		}
		while (i < n && p[i] == ' ')
			i++;
	}
	putchar('}');
}

void ctl_print(const char *ans, bool json, unsigned *acks, unsigned *others)
{
	const char *p = ans;
	bool first = true;

	*acks = *others = 0;
	if (json)
		printf("{\"results\":[");
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n >= 7 && strncmp(p, "result ", 7) == 0) {
			if (memmem(p, n, " outcome=", 9) != NULL) {
				if (memmem(p, n, " outcome=ack", 12) != NULL)
					(*acks)++;
				else
					(*others)++;
			}
			if (json) {
				printf("%s", first ? "" : ",");
				json_fields(p + 7, n - 7);
				first = false;
			} else {
				printf("%.*s\n", (int)(n - 7), p + 7);
			}
		} else if (n >= 2 && strncmp(p, "ok", 2) == 0) {
			if (json) {
				printf("],\"ok\":");
				json_fields(p + 2, n - 2);
				printf("}\n");
				return;
			}
			printf("%.*s\n", (int)n, p);
		} else if (n >= 5 && strncmp(p, "error", 5) == 0) {
			if (json) {
				printf("],\"error\":");
				json_val(p + (n > 6 ? 6 : n), n > 6 ? n - 6 : 0);
				printf("}\n");
				return;
			}
			fprintf(stderr, "%.*s\n", (int)n, p);
		}
		p += n + (e != NULL);
	}
	if (json)
		printf("]}\n");
}
