/*
 * twag — twagd's notifications to its service manager (the sd_notify(3)
 * protocol of systemd, spoken without libsystemd).
 *
 * With NOTIFY_SOCKET set (a path, or "@name" in the abstract namespace),
 * twagd sends one datagram of "KEY=value" lines per state change:
 *   READY=1      the sockets are bound, the store is open, workers run;
 *   RELOADING=1  SIGHUP taken (with MONOTONIC_USEC, as systemd 253 wants
 *                for Type=notify-reload), then READY=1 once reloaded;
 *   STOPPING=1   SIGTERM/SIGINT taken;
 *   WATCHDOG=1   every WATCHDOG_USEC/2 (when WATCHDOG_PID is unset or is
 *                this process), but only while every worker thread keeps
 *                finishing turns of its loop: an idle worker still turns
 *                every 200 ms (its receive timeout), so one that has not
 *                for the whole watchdog period (at least a second) is
 *                stuck, the pings stop and the manager restarts twagd.
 * Without NOTIFY_SOCKET every call here does nothing.
 *
 * The socket is connected when it is opened, before the privilege drop:
 * a connected datagram socket is not checked against the path's
 * permissions again at each send.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "srv.h"

/* A decimal without sign or junk, as systemd writes WATCHDOG_USEC/PID. */
static bool env_u64(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (v == NULL || *v < '0' || *v > '9')
		return false;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != 0)
		return false;
	*out = n;
	return true;
}

int tw_srv_notify_open(struct tw_srv_notify *n, char *err, size_t err_len)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t sl;
	size_t len;
	uint64_t usec, pid;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (path == NULL || path[0] == 0)
		return TW_OK;
	len = strlen(path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		snprintf(err, err_len, "NOTIFY_SOCKET: not a socket path or @name");
		return TW_ERR_INVAL;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = 0; /* abstract: no terminating NUL in the name */
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0) {
		snprintf(err, err_len, "NOTIFY_SOCKET: socket: %s", strerror(errno));
		return TW_ERR_IO;
	}
	if (connect(n->fd, (const struct sockaddr *)&sa, sl) != 0) {
		snprintf(err, err_len, "NOTIFY_SOCKET: connect: %s", strerror(errno));
		close(n->fd);
		n->fd = -1;
		return TW_ERR_IO;
	}
	/* sd_watchdog_enabled(3): WATCHDOG_PID, when set, names the process
	 * the watchdog is for */
	if (env_u64("WATCHDOG_USEC", &usec) && usec > 0 &&
	    (getenv("WATCHDOG_PID") == NULL ||
	     (env_u64("WATCHDOG_PID", &pid) && pid == (uint64_t)getpid()))) {
		n->period_ms = usec / 2000 > 0 ? usec / 2000 : 1;
		n->stuck_ms = usec / 1000 > 1000 ? usec / 1000 : 1000;
	}
	return TW_OK;
}

void tw_srv_notify(struct tw_srv_notify *n, const char *msg)
{
	ssize_t r;

	if (n->fd < 0)
		return;
	do
		r = send(n->fd, msg, strlen(msg), MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	/* a manager that went away is no reason to stop serving; said once */
	if (r < 0 && !n->send_failed) {
		n->send_failed = true;
		tw_log_always(NULL, TW_LOG_WARN, "notify-failed", "errno=%d", errno);
	}
}

void tw_srv_notify_reloading(struct tw_srv_notify *n)
{
	struct timespec ts;
	char msg[64];
	unsigned long long usec;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	usec = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu", usec);
	tw_srv_notify(n, msg);
}

/* One watchdog period: a ping when every worker finished a turn within
 * stuck_ms. */
static void watchdog_turn(struct tw_srv *srv, struct tw_srv_notify *n, uint64_t now)
{
	bool all = true;

	for (unsigned i = 0; i < srv->n_workers && i < TW_SRV_MAX_THREADS; i++) {
		uint64_t b = atomic_load_explicit(&srv->workers[i]->beats, memory_order_relaxed);

		if (!n->armed || b != n->beats[i]) {
			n->beats[i] = b;
			n->beat_ms[i] = now;
		} else if (now - n->beat_ms[i] >= n->stuck_ms) {
			if (!n->stuck_logged)
				tw_log_always(NULL, TW_LOG_ERROR, "watchdog-stuck",
					      "worker=%u ms=%llu", i,
					      (unsigned long long)(now - n->beat_ms[i]));
			n->stuck_logged = true;
			all = false;
		}
	}
	n->armed = true;
	if (all)
		tw_srv_notify(n, "WATCHDOG=1");
}

int tw_srv_notify_sigwait(struct tw_srv *srv, struct tw_srv_notify *n, const sigset_t *sigs,
			  siginfo_t *si)
{
	if (n->fd < 0 || n->period_ms == 0)
		return sigwaitinfo(sigs, si);
	for (;;) {
		uint64_t now = tw_srv_mono_ms(), left;
		struct timespec ts;
		int sig;

		if (now >= n->next_ms) {
			watchdog_turn(srv, n, now);
			n->next_ms = now + n->period_ms;
		}
		left = n->next_ms - now;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000;
		sig = sigtimedwait(sigs, si, &ts);
		if (sig >= 0)
			return sig;
		if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
}

void tw_srv_notify_close(struct tw_srv_notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
