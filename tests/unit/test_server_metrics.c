/* twagd's metrics endpoint (tw_srv_metrics_serve, one HTTP/1.0 exchange)
 * against well-behaved and hostile clients over a socketpair:
 *  - GET /metrics gets 200 and the Prometheus text (Content-Length right),
 *    a request split over several writes too;
 *  - any other path, binary garbage, an empty request: 404, no crash;
 *  - a client that trickles its request one octet at a time for far
 *    longer than the deadline, and one that never reads the answer, are
 *    cut off at the deadline: the exchange ends within it (plus slack for
 *    a loaded machine), not after the client decides to stop. The old
 *    endpoint had a per-read timeout only, so a trickle held it for as
 *    long as the client liked (4096 octets x 1 s).
 * No wall-clock performance is asserted: only that a bound holds that the
 * unbounded server exceeds by seconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tw_test.h"

#include "../../src/server/srv.h"

enum { TIMEOUT_MS = 300, BODY = 64 * 1024 };

static struct tw_srv srv;
static char body[BODY];

static uint64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reads what the server wrote until it closed its end (bounded). */
static size_t read_answer(int fd, char *out, size_t max)
{
	size_t got = 0;

	while (got + 1 < max) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 2000) <= 0)
			break;
		n = recv(fd, out + got, max - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = 0;
	return got;
}

struct server_run {
	int fd;
	uint64_t ms;
};

static void *serve_thread(void *arg)
{
	struct server_run *s = arg;
	uint64_t t0 = ms();

	tw_srv_metrics_serve(&srv, s->fd, body, sizeof(body), TIMEOUT_MS);
	s->ms = ms() - t0;
	shutdown(s->fd, SHUT_RDWR);
	return NULL;
}

/* Runs one exchange: the client writes the parts (with pause_ms between
 * them), then reads the answer into out. Returns the server's time. */
static uint64_t exchange(const char *const *parts, size_t n_parts, const size_t *lens,
			 unsigned pause_ms, char *out, size_t max)
{
	struct server_run s;
	pthread_t th;
	int sv[2];

	if (!CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0))
		return 0;
	s.fd = sv[0];
	s.ms = 0;
	if (!CHECK(pthread_create(&th, NULL, serve_thread, &s) == 0)) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	for (size_t i = 0; i < n_parts; i++) {
		if (i > 0 && pause_ms > 0)
			usleep(pause_ms * 1000);
		if (send(sv[1], parts[i], lens[i], MSG_NOSIGNAL) < 0)
			break; /* the server hung up: stop */
	}
	read_answer(sv[1], out, max);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	return s.ms;
}

static uint64_t exchange1(const char *req, size_t len, char *out, size_t max)
{
	const char *parts[1] = { req };
	size_t lens[1] = { len };

	return exchange(parts, 1, lens, 0, out, max);
}

static void test_well_behaved(void)
{
	static char out[BODY + 512];
	const char *p;
	size_t clen = 0;

	exchange1("GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n", 34, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 200 OK\r\n", 17) == 0);
	CHECK(strstr(out, "\ntwag_sessions_max 16\n") != NULL);
	p = strstr(out, "Content-Length: ");
	if (CHECK(p != NULL))
		clen = strtoul(p + 16, NULL, 10);
	p = strstr(out, "\r\n\r\n");
	if (CHECK(p != NULL))
		CHECK(strlen(p + 4) == clen && clen > 1000);
	/* a request in pieces */
	{
		const char *parts[3] = { "GET /met", "rics HTTP/1.0\r\n", "\r\n" };
		size_t lens[3] = { 8, 15, 2 };

		exchange(parts, 3, lens, 20, out, sizeof(out));
		CHECK(strncmp(out, "HTTP/1.0 200 OK\r\n", 17) == 0);
	}
	/* curl's form with a query string */
	exchange1("GET /metrics?x=1 HTTP/1.1\r\n\r\n", 29, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 200 OK\r\n", 17) == 0);
}

static void test_garbage(void)
{
	static char out[4096];
	uint8_t junk[3000];

	exchange1("GET / HTTP/1.0\r\n\r\n", 18, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 404 Not Found\r\n", 24) == 0);
	exchange1("POST /metrics HTTP/1.0\r\n\r\n", 26, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 404", 12) == 0);
	exchange1("GET /metricsX HTTP/1.0\r\n\r\n", 26, out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 404", 12) == 0);
	/* binary, NULs included, more than the request buffer */
	tw_test_random(junk, sizeof(junk));
	exchange1((const char *)junk, sizeof(junk), out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.0 404", 12) == 0);
	/* nothing at all, then EOF: at once, 404 */
	{
		int sv[2];

		if (CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0)) {
			uint64_t t0 = ms();

			shutdown(sv[1], SHUT_WR);
			tw_srv_metrics_serve(&srv, sv[0], body, sizeof(body), 5000);
			CHECK(ms() - t0 < 2000);
			close(sv[0]);
			read_answer(sv[1], out, sizeof(out));
			CHECK(strncmp(out, "HTTP/1.0 404", 12) == 0);
			close(sv[1]);
		}
	}
}

/* Slowloris: one octet every 50 ms, 100 of them (5 s), never a blank
 * line. The exchange must end at the 300 ms deadline; 2 s is slack for a
 * loaded machine, still far below the 5 s the trickle lasts. */
static void test_trickle(void)
{
	static const char *parts[100];
	static size_t lens[100];
	static char out[4096];
	uint64_t t;

	for (int i = 0; i < 100; i++) {
		parts[i] = "X";
		lens[i] = 1;
	}
	t = exchange(parts, 100, lens, 50, out, sizeof(out));
	CHECK(t < 2000);
	if (t >= 2000)
		tw_note("trickling client held the endpoint %llu ms", (unsigned long long)t);
	CHECK(strncmp(out, "HTTP/1.0 404", 12) == 0);
}

/* A client that asks and never reads, with a send buffer smaller than the
 * answer: the server gives up at the deadline. */
static void test_no_reader(void)
{
	int sv[2], small = 1;
	uint64_t t0;

	if (!CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0))
		return;
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	(void)setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	CHECK(send(sv[1], "GET /metrics HTTP/1.0\r\n\r\n", 25, MSG_NOSIGNAL) == 25);
	t0 = ms();
	tw_srv_metrics_serve(&srv, sv[0], body, sizeof(body), TIMEOUT_MS);
	CHECK(ms() - t0 < 2000);
	close(sv[0]);
	close(sv[1]);
}

void test_main(void)
{
	uint8_t seed[16] = { 0 };

	if (!CHECK_OK(tw_srv_sessions_init(&srv.sessions, 16, 60, seed)))
		return;
	test_well_behaved();
	test_garbage();
	test_trickle();
	test_no_reader();
	tw_srv_sessions_free(&srv.sessions);
}
