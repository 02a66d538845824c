/*
 * twag session list|show|disconnect|coa — the live RADIUS accounting sessions of a
 * running twagd, read from its metrics listener (GET /sessions,
 * /sessions/ID; docs/twagd.md "Accounting"): the endpoint is already
 * there, bounded (one connection at a time, a deadline per exchange) and
 * read-only, so the CLI needs no other socket, file permission or option
 * on the daemon.
 *
 *   twag session list [--metrics HOST:PORT] [--json]
 *   twag session show ID [--metrics HOST:PORT] [--json]
 *
 * Output: a table for list, name=value lines for show (every field; one
 * block per NAS when several NASes use that Acct-Session-Id), twagd's
 * JSON with --json. No such session, no server, no accounting: one line
 * on stderr, exit 2. A listing cut short (the endpoint ends an exchange
 * after 2 s): exit 1.
 *
 *   twag session disconnect ID [--control PATH] [--json]
 *   twag session disconnect --imsi IMSI [--control PATH] [--json]
 *   twag session coa ID ATTR=VALUE... [--control PATH] [--json]
 *   twag session coa --imsi IMSI ATTR=VALUE... [--control PATH] [--json]
 *
 * ask twagd over its control socket (--control, default
 * /run/twagd/control; src/server/control.c) to send an RFC 5176
 * Disconnect-Request / CoA-Request to the NAS of that session, or of
 * every session of IMSI, and print the outcome of each (ack, nak with
 * its Error-Cause, timeout). ATTR: Session-Timeout=S, Idle-Timeout=S,
 * Acct-Interim-Interval=S, Filter-Id=TEXT or TYPE=HEX. Exit 0 when every
 * request was acknowledged, 1 when one was not (NAK, timeout), 2 for bad
 * usage, no such session or no twagd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "twag/server.h"

enum {
	CONNECT_MS = 3000,
	EXCHANGE_MS = 15000,
	HEAD_MAX = 4096,
	TAIL_LEN = 64,
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static _Noreturn void fail2(const char *cmd, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "twag %s: ", cmd);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(CLI_EXIT_USAGE);
}

/* Waits for fd until the deadline; false when it passed. */
static bool wait_fd(int fd, short ev, long long deadline)
{
	for (;;) {
		struct pollfd pf = { fd, ev, 0 };
		long long now = mono_ms();
		int n;

		if (now >= deadline)
			return false;
		n = poll(&pf, 1, (int)(deadline - now));
		if (n < 0 && errno == EINTR)
			continue;
		return n > 0;
	}
}

/* Percent-encodes a path segment (RFC 3986 §2.1: all but unreserved). */
static void pct_encode(char *out, size_t max, const char *s)
{
	static const char hx[] = "0123456789ABCDEF";
	size_t k = 0;

	for (; *s && k + 4 < max; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hx[c >> 4];
			out[k++] = hx[c & 15];
		}
	}
	out[k] = 0;
}

/* GET path from server; the body goes to stdout on 200. Returns the HTTP
 * status (the body of another status in err). */
/* The last TAIL_LEN octets of the body (a NUL-terminated window). */
static void keep_tail(char tail[static TAIL_LEN + 1], const char *p, size_t n)
{
	size_t have = strlen(tail);

	if (n >= TAIL_LEN) {
		memcpy(tail, p + n - TAIL_LEN, TAIL_LEN);
		tail[TAIL_LEN] = 0;
		return;
	}
	if (have + n > TAIL_LEN) {
		memmove(tail, tail + (have + n - TAIL_LEN), TAIL_LEN - n);
		have = TAIL_LEN - n;
	}
	memcpy(tail + have, p, n);
	tail[have + n] = 0;
}

static int http_get(const char *cmd, const char *server, const char *path, char *err,
		    size_t err_len, char tail[static TAIL_LEN + 1])
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char req[1100], head[HEAD_MAX + 1], buf[16384];
	long long deadline = mono_ms() + CONNECT_MS;
	size_t hl = 0;
	int fd, status = 0, so = 0;
	socklen_t sol = sizeof(so);
	char *body = NULL;

	if (tw_srv_sockaddr_parse(&ss, &sl, server, 9812) != TW_OK)
		fail2(cmd, "--metrics: %s%s: not IP:PORT or [IPv6]:PORT", server, "");
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		fail2(cmd, "socket: %s%s", strerror(errno), "");
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		fail2(cmd, "cannot connect to %s: %s (is twagd running with --metrics?)", server,
		      strerror(e));
	}
	if (!wait_fd(fd, POLLOUT, deadline) ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sol) != 0 || so != 0) {
		close(fd);
		fail2(cmd, "cannot connect to %s: %s (is twagd running with --metrics?)", server,
		      so ? strerror(so) : "timed out");
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: twagd\r\n\r\n", path);
	deadline = mono_ms() + EXCHANGE_MS;
	for (size_t off = 0, len = strlen(req); off < len;) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_fd(fd, POLLOUT, deadline))
				break;
			continue;
		}
		if (n <= 0) {
			close(fd);
			fail2(cmd, "%s: send failed: %s", server, strerror(errno));
		}
		off += (size_t)n;
	}
	/* the status line and headers */
	while (hl < HEAD_MAX) {
		ssize_t n = recv(fd, head + hl, HEAD_MAX - hl, 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_fd(fd, POLLIN, deadline))
				break;
			continue;
		}
		if (n <= 0)
			break;
		hl += (size_t)n;
		head[hl] = 0;
		if ((body = strstr(head, "\r\n\r\n")) != NULL)
			break;
	}
	head[hl] = 0;
	if (body == NULL || sscanf(head, "HTTP/1.%*d %d", &status) != 1) {
		close(fd);
		fail2(cmd, "%s: not an answer from twagd's metrics listener%s", server, "");
	}
	body += 4;
	if (status != 200) {
		size_t k = 0, boff = (size_t)(body - head);

		/* the rest of a short error body */
		while (hl < HEAD_MAX && wait_fd(fd, POLLIN, deadline)) {
			ssize_t n = recv(fd, head + hl, HEAD_MAX - hl, 0);

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0)
				break;
			hl += (size_t)n;
		}
		head[hl] = 0;
		body = head + boff;

		/* the error text of the body, one line */
		for (const char *p = body; *p && *p != '\n' && k + 1 < err_len; p++)
			err[k++] = *p;
		err[k] = 0;
		close(fd);
		return status;
	}
	fwrite(body, 1, hl - (size_t)(body - head), stdout);
	keep_tail(tail, body, hl - (size_t)(body - head));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_fd(fd, POLLIN, deadline)) {
				close(fd);
				fail2(cmd, "%s: timed out reading the answer%s", server, "");
			}
			continue;
		}
		if (n < 0) {
			close(fd);
			fail2(cmd, "%s: %s", server, strerror(errno));
		}
		if (n == 0)
			break;
		fwrite(buf, 1, (size_t)n, stdout);
		keep_tail(tail, buf, (size_t)n);
	}
	close(fd);
	return status;
}

enum { CTL_TIMEOUT_MS = 120000, CTL_ANSWER_MAX = 65536 };

/* twag session disconnect|coa (see the file header). */
static int dynauth(const char *sub, int argc, char **argv)
{
	static const char *const valued[] = { "control", "imsi", NULL };
	static const char *const flags[] = { "json", NULL };
	char cmd[32], line[1100] = "", why[300], *ans;
	const char *path, *imsi, *id = NULL;
	char *opts[64];
	int nopt = 0, nattr = 0;
	const char *attrs[64];
	unsigned acks = 0, others = 0;
	enum ctl_status st;
	struct cli c;
	bool coa = strcmp(sub, "coa") == 0;

	snprintf(cmd, sizeof(cmd), "session %s", sub);
	/* positional words (ID, ATTR=VALUE) apart from the options */
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) == 0) {
			if (nopt >= 62)
				break;
			opts[nopt++] = argv[i];
			if (strchr(argv[i], '=') == NULL && strcmp(argv[i], "--json") != 0 &&
			    i + 1 < argc)
				opts[nopt++] = argv[++i];
		} else if (id == NULL && strchr(argv[i], '=') == NULL) {
			id = argv[i];
		} else if (nattr < 64) {
			attrs[nattr++] = argv[i];
		}
	}
	cli_parse(&c, cmd, nopt, opts, valued, flags);
	path = cli_get(&c, "control");
	if (path == NULL)
		path = CTL_DEFAULT_PATH;
	imsi = cli_get(&c, "imsi");
	if ((id == NULL) == (imsi == NULL)) {
		fprintf(stderr, "twag %s: give a session ID or --imsi IMSI (one of them)\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (id != NULL && (id[0] == 0 || strlen(id) > 253)) {
		fprintf(stderr, "twag %s: the session id must be 1..253 octets\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (coa && nattr == 0) {
		fprintf(stderr, "twag %s: no attribute to change (ATTR=VALUE...)\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (!coa && nattr > 0) {
		fprintf(stderr, "twag %s: a Disconnect-Request takes no ATTR=VALUE\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (nattr > 16) {
		fprintf(stderr, "twag %s: at most 16 attributes\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (!ctl_word(line, sizeof(line), sub) ||
	    !ctl_word(line, sizeof(line), id != NULL ? "session" : "imsi") ||
	    !ctl_word(line, sizeof(line), id != NULL ? id : imsi)) {
		fprintf(stderr, "twag %s: the request is too long\n", cmd);
		return CLI_EXIT_USAGE;
	}
	for (int i = 0; i < nattr; i++)
		if (!ctl_word(line, sizeof(line), attrs[i])) {
			fprintf(stderr, "twag %s: the request is too long (1024 octets)\n", cmd);
			return CLI_EXIT_USAGE;
		}
	if (strlen(line) > 1024) {
		fprintf(stderr, "twag %s: the request is too long (1024 octets)\n", cmd);
		return CLI_EXIT_USAGE;
	}
	ans = malloc(CTL_ANSWER_MAX);
	if (ans == NULL)
		return CLI_EXIT_FAIL;
	st = ctl_request(path, line, ans, CTL_ANSWER_MAX, CTL_TIMEOUT_MS, why, sizeof(why));
	if (st == CTL_NO_DAEMON || st == CTL_FAILED) {
		fprintf(stderr, "twag %s: %s%s\n", cmd, why,
			st == CTL_NO_DAEMON ? " (is twagd running with --control-socket?)" : "");
		free(ans);
		return CLI_EXIT_USAGE;
	}
	ctl_print(ans, cli_flag(&c, "json"), &acks, &others);
	free(ans);
	if (st == CTL_ERROR)
		return CLI_EXIT_USAGE;
	return acks > 0 && others == 0 ? 0 : CLI_EXIT_FAIL;
}

int cmd_session(int argc, char **argv)
{
	static const char *const valued[] = { "metrics", NULL };
	static const char *const flags[] = { "json", NULL };
	const char *sub = argc > 0 ? argv[0] : "", *server, *id = NULL;
	char path[1024], enc[3 * 256 + 1], err[256] = "", cmd[32], tail[TAIL_LEN + 1] = "";
	struct cli c;
	int status, skip = 1;

	if (strcmp(sub, "disconnect") == 0 || strcmp(sub, "coa") == 0)
		return dynauth(sub, argc - 1, argv + 1);
	if (strcmp(sub, "list") != 0 && strcmp(sub, "show") != 0) {
		fprintf(stderr, "twag session: list, show ID, disconnect ID or coa ID ATTR=VALUE... (try twag --help)\n");
		return CLI_EXIT_USAGE;
	}
	snprintf(cmd, sizeof(cmd), "session %s", sub);
	if (strcmp(sub, "show") == 0) {
		if (argc < 2 || strncmp(argv[1], "--", 2) == 0 || argv[1][0] == 0) {
			fprintf(stderr, "twag session show: the session id is missing\n");
			return CLI_EXIT_USAGE;
		}
		id = argv[1];
		if (strlen(id) > 253) {
			fprintf(stderr, "twag session show: the session id is longer than 253 octets\n");
			return CLI_EXIT_USAGE;
		}
		skip = 2;
	}
	cli_parse(&c, cmd, argc - skip, argv + skip, valued, flags);
	server = cli_get(&c, "metrics");
	if (server == NULL)
		server = "127.0.0.1:9812";
	if (id != NULL) {
		pct_encode(enc, sizeof(enc), id);
		snprintf(path, sizeof(path), "/sessions/%s%s", enc,
			 cli_flag(&c, "json") ? "" : "?format=text");
	} else {
		snprintf(path, sizeof(path), "/sessions%s", cli_flag(&c, "json") ? "" : "?format=text");
	}
	status = http_get(cmd, server, path, err, sizeof(err), tail);
	if (status == 200) {
		size_t tl = strlen(tail);
		bool whole = tl > 0 && tail[tl - 1] == '\n';

		/* a listing cut short (the endpoint's deadline) does not end
		 * with its last line: "}" for JSON, "# N sessions" for text */
		if (whole && id == NULL && !cli_flag(&c, "json")) {
			const char *last = tl >= 2 ? tail + tl - 2 : tail;

			while (last > tail && last[-1] != '\n')
				last--;
			whole = last[0] == '#';
		} else if (whole) {
			whole = tl >= 2 && tail[tl - 2] == '}';
		}
		if (!whole && id == NULL) {
			fprintf(stderr, "twag %s: %s: the listing was cut short\n", cmd, server);
			return CLI_EXIT_FAIL;
		}
		return 0;
	}
	if (status == 404 && strstr(err, "no such session") != NULL)
		fprintf(stderr, "twag %s: no such session: %s\n", cmd, id);
	else if (status == 404 && strstr(err, "accounting is off") != NULL)
		fprintf(stderr, "twag %s: accounting is off in that twagd (--acct-listen off, or its port was taken)\n",
			cmd);
	else if (status == 404)
		fprintf(stderr, "twag %s: %s has no /sessions (not a twagd with accounting)\n", cmd,
			server);
	else
		fprintf(stderr, "twag %s: %s answered HTTP %d%s%s\n", cmd, server, status,
			err[0] ? ": " : "", err);
	return CLI_EXIT_USAGE;
}
