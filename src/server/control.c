/*
 * twag — twagd's control socket: a Unix-domain stream socket
 * (--control-socket PATH; the systemd unit passes /run/twagd/control) on
 * which the administrator's tools (`twag session disconnect`, `twag
 * subscriber del|disable`) ask the running daemon to act.
 *
 * Protocol (one request per connection):
 *   request   one line of at most TW_SRV_CONTROL_LINE_MAX octets, ended
 *             by "\n": words separated by spaces, each percent-encoded
 *             where it holds a space, '%', a control character or an
 *             octet >= 0x80 (RFC 3986 §2.1);
 *   answer    zero or more "result key=value ..." lines (values
 *             percent-encoded the same way), then one last line
 *             "ok key=value ..." or "error TEXT"; then the daemon closes.
 * Commands (the table below; `help` lists them):
 *   help                              the commands and their arguments
 *   ping                              "ok pong"
 *   disconnect session ID             Disconnect-Request(s) for the live
 *   disconnect imsi IMSI              accounting session ID, or for every
 *                                     session of IMSI (RFC 5176 §2.1)
 *   coa session ID ATTR=VALUE...      CoA-Request(s) with those attributes
 *   coa imsi IMSI ATTR=VALUE...       (§2.2; dynauth.c tw_srv_dynauth_parse_attr)
 *   sessions imsi IMSI                the authorized sessions of IMSI
 *   debug [show] | clear | client add|del IP[/PREFIX] | imsi add|del IMSI
 *                                     the per-request debug conditions
 *                                     (debug.c): "result client=NET/P",
 *                                     "result imsi=MASKED", ok clients=N imsis=N
 * A result line: result kind=disconnect|coa session=ID|- imsi=MASKED
 * client=IP nas=IP:PORT outcome=ack|nak|timeout|error [error_cause=N
 * error_cause_name=NAME]; the last line of a command that sent requests:
 * ok sent=N ack=N nak=N timeout=N error=N.
 * A new command is one line in the table: its name, its argument counts,
 * its usage and its function (void fn(srv, out, argc, argv), answering
 * into out, whose last line must be "ok" or "error").
 *
 * Bounds: one connection at a time (the listen backlog holds a few more),
 * a request read within CONTROL_READ_MS whatever the client does (a client
 * trickling octets cannot hold the thread), an answer written within
 * CONTROL_WRITE_MS; the requests a command sends are bounded by
 * --dynauth-retries and --dynauth-timeout-ms. The thread also runs the
 * periodic store check (dynauth.c tw_srv_dynauth_tick) between
 * connections. The socket's mode is 0660 and it is owned by --user and
 * --group: who may use it is who may write to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "dynauth_srv.h"
#include "twag/hex.h"
#include "srv.h"

enum {
	CONTROL_READ_MS = 2000,
	CONTROL_WRITE_MS = 2000,
	CONTROL_BACKLOG = 8,
	TURN_MS = 200,
};

struct tw_srv_control {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool bound;
	pthread_t thread;
	bool started;
	char *out;
};

/* ---- the request line ------------------------------------------------------- */

int tw_srv_control_split(char *line, size_t len, char **argv, int max, int *argc)
{
	size_t i = 0;
	int n = 0;

	*argc = 0;
	while (i < len) {
		char *w, *o;

		if (line[i] == ' ') {
			i++;
			continue;
		}
		if (n >= max)
			return TW_ERR_DECODE;
		w = o = line + i;
		while (i < len && line[i] != ' ') {
			unsigned char c = (unsigned char)line[i];

			if (c < 0x20 || c >= 0x7f)
				return TW_ERR_DECODE;
			if (c == '%') {
				int hi = i + 2 < len ? tw_hex_nibble(line[i + 1]) : -1;
				int lo = hi >= 0 ? tw_hex_nibble(line[i + 2]) : -1;

				/* a NUL would cut the word short unseen */
				if (lo < 0 || (hi == 0 && lo == 0))
					return TW_ERR_DECODE;
				*o++ = (char)(hi << 4 | lo);
				i += 3;
				continue;
			}
			*o++ = (char)c;
			i++;
		}
		/* o <= line + i: the word ends in place (the space, or len) */
		if (i < len)
			i++;
		*o = 0;
		argv[n++] = w;
	}
	*argc = n;
	return TW_OK;
}

/* ---- the command table ------------------------------------------------------ */

static void c_help(struct tw_srv *srv, struct out *o, int argc, char **argv);

static void c_ping(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	(void)srv;
	(void)argc;
	(void)argv;
	put(o, "ok pong\n");
}

static const struct {
	const char *name;
	int min_args, max_args;    /* after the name */
	const char *usage;
	void (*fn)(struct tw_srv *srv, struct out *o, int argc, char **argv);
} commands[] = {
	{ "help", 0, 0, "help", c_help },
	{ "ping", 0, 0, "ping", c_ping },
	{ "disconnect", 2, 2, "disconnect session ID | disconnect imsi IMSI",
	  tw_srv_dynauth_cmd_disconnect },
	{ "coa", 3, 2 + TW_SRV_COA_MAX_ATTRS,
	  "coa session ID ATTR=VALUE... | coa imsi IMSI ATTR=VALUE...", tw_srv_dynauth_cmd_coa },
	{ "sessions", 2, 2, "sessions imsi IMSI", tw_srv_dynauth_cmd_sessions },
	{ "debug", 0, 3,
	  "debug [show] | debug clear | debug client add|del IP[/PREFIX] | debug imsi add|del IMSI",
	  tw_srv_debug_cmd },
};

static void c_help(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	(void)srv;
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		put(o, "result usage=%s\n", commands[i].usage);
	put(o, "ok commands=%zu\n", sizeof(commands) / sizeof(commands[0]));
}

void tw_srv_control_dispatch(struct tw_srv *srv, struct out *o, int argc, char **argv)
{
	if (argc == 0) {
		put(o, "error empty request (try help)\n");
		return;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[0], commands[i].name) != 0)
			continue;
		if (argc - 1 < commands[i].min_args || argc - 1 > commands[i].max_args) {
			put(o, "error usage: %s\n", commands[i].usage);
			return;
		}
		commands[i].fn(srv, o, argc - 1, argv + 1);
		return;
	}
	put(o, "error unknown command (try help)\n");
}

/* ---- one connection ---------------------------------------------------------- */

/* Reads one request line by deadline; its length, or -1 (too long), -2
 * (no whole line in time or the peer left). */
static ssize_t read_line(int c, char *buf, size_t max, uint64_t deadline)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = recv(c, buf + got, max - got, MSG_DONTWAIT);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { c, POLLIN, 0 };
			uint64_t now = tw_srv_mono_ms();

			if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0)
				return -2;
			continue;
		}
		if (n <= 0)
			return -2;
		nl = memchr(buf + got, '\n', (size_t)n);
		got += (size_t)n;
		if (nl != NULL) {
			size_t len = (size_t)(nl - buf);

			if (len > 0 && buf[len - 1] == '\r')
				len--;
			return (ssize_t)len;
		}
	}
	return -1;
}

static void serve(struct tw_srv *srv, struct tw_srv_control *ctl, int c)
{
	char line[TW_SRV_CONTROL_LINE_MAX + 1];
	char *argv[TW_SRV_CONTROL_ARGS];
	struct out o = { ctl->out, TW_SRV_CONTROL_OUT, 0, false };
	ssize_t n = read_line(c, line, sizeof(line), tw_srv_mono_ms() + CONTROL_READ_MS);
	int argc = 0;

	if (n == -1) {
		put(&o, "error request longer than %d octets\n", TW_SRV_CONTROL_LINE_MAX);
	} else if (n == -2) {
		put(&o, "error no request line within %d ms\n", CONTROL_READ_MS);
	} else if (tw_srv_control_split(line, (size_t)n, argv, TW_SRV_CONTROL_ARGS, &argc) !=
		   TW_OK) {
		put(&o, "error malformed request (words of printable ASCII, %%XX escapes, at most %d)\n",
		    TW_SRV_CONTROL_ARGS);
	} else {
		tw_srv_control_dispatch(srv, &o, argc, argv);
	}
	if (o.overflow) {
		/* the last line must still say how it ended */
		static const char cut[] = "error answer too long\n";

		o.len = o.len > sizeof(cut) - 1 ? o.max - sizeof(cut) : 0;
		while (o.len > 0 && ctl->out[o.len - 1] != '\n')
			o.len--;
		memcpy(ctl->out + o.len, cut, sizeof(cut) - 1);
		o.len += sizeof(cut) - 1;
	}
	(void)tw_srv_send_all(c, ctl->out, o.len, tw_srv_mono_ms() + CONTROL_WRITE_MS);
	/* what the client sent past the line is read away (bounded): closing
	 * with unread octets would reset the connection before it reads us */
	for (int k = 0; k < 64 && recv(c, line, sizeof(line), MSG_DONTWAIT) > 0; k++)
		;
}

static void *control_run(void *arg)
{
	struct tw_srv *srv = arg;
	struct tw_srv_control *ctl = srv->control;

	while (!atomic_load(&srv->stop)) {
		struct pollfd pf = { ctl->fd, POLLIN, 0 };
		int c;

		tw_srv_dynauth_tick(srv, tw_srv_mono_ms());
		if (ctl->fd < 0) {
			usleep(TURN_MS * 1000);
			continue;
		}
		if (poll(&pf, 1, TURN_MS) <= 0)
			continue;
		c = accept4(ctl->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		serve(srv, ctl, c);
		close(c);
	}
	return NULL;
}

/* ---- start and stop ---------------------------------------------------------- */

/* A file at path that is a socket nobody answers on: left by a daemon
 * that died. Another kind of file, or a live socket, is not ours to take. */
static int clear_stale(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? TW_OK : (snprintf(err, err_len, "%s: %s", path,
							   strerror(errno)), TW_ERR_IO);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, err_len, "%s exists and is not a socket", path);
		return TW_ERR_IO;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_len, "socket: %s", strerror(errno));
		return TW_ERR_IO;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0) {
		snprintf(err, err_len, "%s is in use by a running twagd", path);
		return TW_ERR_STATE;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, err_len, "cannot remove the stale %s: %s", path, strerror(errno));
		return TW_ERR_IO;
	}
	return TW_OK;
}

int tw_srv_control_open(struct tw_srv *srv, char *err, size_t err_len)
{
	const struct tw_srv_config *c = &srv->cfg;
	struct tw_srv_control *ctl;
	struct sockaddr_un sa;
	int rc;

	srv->control = ctl = calloc(1, sizeof(*ctl));
	if (ctl == NULL || (ctl->out = malloc(TW_SRV_CONTROL_OUT)) == NULL) {
		snprintf(err, err_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	ctl->fd = -1;
	if (c->control_socket[0] == 0)
		return TW_OK;
	if (strlen(c->control_socket) >= sizeof(sa.sun_path)) {
		snprintf(err, err_len, "--control-socket: longer than %zu octets",
			 sizeof(sa.sun_path) - 1);
		return TW_ERR_INVAL;
	}
	snprintf(ctl->path, sizeof(ctl->path), "%s", c->control_socket);
	rc = clear_stale(ctl->path, err, err_len);
	if (rc != TW_OK)
		return rc;
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ctl->fd < 0) {
		snprintf(err, err_len, "socket: %s", strerror(errno));
		return TW_ERR_IO;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, ctl->path, strlen(ctl->path));
	if (bind(ctl->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, err_len, "bind %s: %s", ctl->path, strerror(errno));
		return TW_ERR_IO;
	}
	ctl->bound = true;
	/* 0660 whatever the umask: the daemon's user and the admin group */
	if (chmod(ctl->path, 0660) != 0) {
		snprintf(err, err_len, "chmod %s: %s", ctl->path, strerror(errno));
		return TW_ERR_IO;
	}
	if (c->user[0] && geteuid() == 0) {
		/* created as root before the drop: given to the user it runs as */
		const struct passwd *pw = getpwnam(c->user);
		const struct group *gr = c->group[0] ? getgrnam(c->group) : NULL;

		if (pw == NULL || (c->group[0] && gr == NULL) ||
		    chown(ctl->path, pw->pw_uid, gr != NULL ? gr->gr_gid : pw->pw_gid) != 0) {
			snprintf(err, err_len, "chown %s to --user/--group: %s", ctl->path,
				 pw == NULL || (c->group[0] && gr == NULL) ? "no such user or group"
									    : strerror(errno));
			return TW_ERR_IO;
		}
	}
	if (listen(ctl->fd, CONTROL_BACKLOG) != 0) {
		snprintf(err, err_len, "listen %s: %s", ctl->path, strerror(errno));
		return TW_ERR_IO;
	}
	return TW_OK;
}

int tw_srv_control_start(struct tw_srv *srv)
{
	struct tw_srv_control *ctl = srv->control;

	if (ctl == NULL)
		return TW_OK;
	if (pthread_create(&ctl->thread, NULL, control_run, srv) != 0)
		return TW_ERR_NOMEM;
	ctl->started = true;
	(void)pthread_setname_np(ctl->thread, "twagd-control");
	if (ctl->fd >= 0) {
		char q[TW_SRV_PATH_MAX + 8];

		tw_log_quote(q, sizeof(q), ctl->path);
		tw_log_always(NULL, TW_LOG_INFO, "control-ready", "socket=%s", q);
	}
	return TW_OK;
}

void tw_srv_control_stop(struct tw_srv *srv)
{
	struct tw_srv_control *ctl = srv->control;

	if (ctl == NULL)
		return;
	if (ctl->started)
		pthread_join(ctl->thread, NULL);
	if (ctl->fd >= 0)
		close(ctl->fd);
	/* best effort: after a privilege drop the directory must be the
	 * user's (RuntimeDirectory=twagd) */
	if (ctl->bound)
		(void)unlink(ctl->path);
	free(ctl->out);
	free(ctl);
	srv->control = NULL;
}
