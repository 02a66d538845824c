/* Sending batches with UDP GSO (src/server/udp_gso.c) over real loopback
 * sockets, and twagd's use of it for its replies (src/server/send.c):
 *  - datagrams of one length to one address leave as one UDP GSO send and
 *    arrive as the separate datagrams they were, each once, byte for byte;
 *    different lengths, addresses and source control messages are never
 *    merged; datagrams longer than a GSO segment go alone; a group stays
 *    within one send's 65507 octets; a connected socket (no address);
 *  - a GSO send the kernel refuses (SO_NO_CHECK makes it EINVAL) is made
 *    again datagram by datagram, nothing lost, and GSO is off from then on;
 *  - a send buffer that fills up (EAGAIN; made here by wrapping
 *    sendmmsg, as loopback frees a datagram's buffer space at once): what
 *    went before it arrives, the rest is counted lost, GSO stays on;
 *  - GSO off (--no-udp-gso): one datagram per send;
 *  - the worker's counters and gauge follow the sender's.
 * The cutting of GRO receives is in test_server_rx.c.
 * On a kernel without UDP_SEGMENT (before Linux 4.18) only the last two
 * cases can run, and a note says so. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "twag/udp_gso.h"

#include "../../src/server/srv.h"

enum { N_RX = 2 };

enum { N_TX = TW_UDP_GSO_MAX_MSGS, LEN_MAX = TW_UDP_GSO_SEG_MAX + 400 };

static struct tw_srv_worker *w;
static struct tw_udp_gso g;
static int tx_fd;
static uint8_t tx_buf[N_TX][LEN_MAX];
static int rx_fd[N_RX];
static struct sockaddr_in rx_addr[N_RX];

/* the replies of one test: destination, length, content */
static struct mmsghdr tx[N_TX];
static struct iovec tx_iov[N_TX];
static uint8_t tx_cm[N_TX][TW_UDP_GSO_CMSG_MAX] __attribute__((aligned(8)));
static int dest[N_TX];

static uint64_t ctr(enum tw_srv_ctr c)
{
	return atomic_load(&w->ctr.v[c]);
}

static unsigned send_all(unsigned m)
{
	return tw_udp_gso_send(&g, tx_fd, tx, m, 0);
}

static int udp_socket(struct sockaddr_in *a)
{
	socklen_t l = sizeof(*a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &l) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reply i: len octets to receiver d; octets 0..1 its index, the rest a
 * pattern of it, so a datagram cut or merged wrongly is seen. With
 * pktinfo k > 0: an IP_PKTINFO control message naming 127.0.0.k as the
 * source. */
static void reply(int i, int d, size_t len, int pktinfo)
{
	uint8_t *b = tx_buf[i];

	for (size_t k = 0; k < len; k++)
		b[k] = (uint8_t)(i * 7 + k);
	b[0] = (uint8_t)i;
	b[1] = (uint8_t)~i;
	dest[i] = d;
	tx_iov[i].iov_base = b;
	tx_iov[i].iov_len = len;
	memset(&tx[i], 0, sizeof(tx[i]));
	tx[i].msg_hdr.msg_iov = &tx_iov[i];
	tx[i].msg_hdr.msg_iovlen = 1;
	tx[i].msg_hdr.msg_name = &rx_addr[d];
	tx[i].msg_hdr.msg_namelen = sizeof(rx_addr[d]);
	if (pktinfo) {
		struct msghdr m = { .msg_control = tx_cm[i], .msg_controllen = sizeof(tx_cm[i]) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		struct in_pktinfo pi;

		memset(tx_cm[i], 0, sizeof(tx_cm[i]));
		memset(&pi, 0, sizeof(pi));
		pi.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK - 1 + (unsigned)pktinfo);
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		tx[i].msg_hdr.msg_control = tx_cm[i];
		tx[i].msg_hdr.msg_controllen = CMSG_SPACE(sizeof(pi));
	}
}

/* Every reply of tx[lo..hi) arrived once, whole, at its receiver, and
 * nothing else did (no other reply of tx[0..m), nothing stray). */
static bool arrived(int m, int lo, int hi)
{
	int seen[N_TX] = { 0 }, got = 0, stray = 0;
	uint8_t buf[TW_RADIUS_MAX_LEN + 1];

	for (int d = 0; d < N_RX; d++) {
		struct pollfd p = { .fd = rx_fd[d], .events = POLLIN };

		while (poll(&p, 1, 200) == 1) {
			ssize_t n = recv(rx_fd[d], buf, sizeof(buf), MSG_DONTWAIT);
			int i = n >= 2 ? buf[0] : -1;

			if (n < 0)
				break;
			if (i >= 0 && i < m && buf[1] == (uint8_t)~i && dest[i] == d &&
			    (size_t)n == tx_iov[i].iov_len &&
			    memcmp(buf, tx_buf[i], (size_t)n) == 0) {
				seen[i]++;
				got++;
			} else {
				stray++;
			}
		}
	}
	for (int i = 0; i < m; i++)
		if (seen[i] != (i >= lo && i < hi))
			return false;
	return got == hi - lo && stray == 0;
}

static bool all_arrived(int m)
{
	return arrived(m, 0, m);
}

/*
 * sendmmsg as the code under test calls it (linked with
 * -Wl,--wrap=sendmmsg, Makefile): the real one, unless full_after >= 0:
 * then the send buffer is full after that many more messages, as when a
 * kernel cannot queue more (the call that reaches the limit sends up to
 * it, every later one fails with EAGAIN).
 */
int __real_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags);
int __wrap_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags);
static int full_after = -1;
static unsigned refused_seen; /* calls the kernel answered ECONNREFUSED */

int __wrap_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	int k;

	if (full_after < 0) {
		k = __real_sendmmsg(fd, v, n, flags);
		if (k < 0 && errno == ECONNREFUSED)
			refused_seen++;
		return k;
	}
	if (full_after == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (n > (unsigned)full_after)
		n = (unsigned)full_after;
	k = __real_sendmmsg(fd, v, n, flags);
	if (k > 0)
		full_after -= k;
	return k;
}

/* 20 replies: 10 of 100 octets and 5 of 300 to receiver 0, 3 of 100 to
 * receiver 1, 2 of 1500 (longer than a segment) to receiver 0, mixed. */
static int mixed_batch(void)
{
	static const struct {
		int d;
		size_t len;
	} plan[] = {
		{ 0, 100 }, { 0, 300 }, { 1, 100 }, { 0, 100 }, { 0, 1500 }, { 0, 100 }, { 0, 300 },
		{ 1, 100 }, { 0, 100 }, { 0, 100 }, { 0, 300 }, { 0, 100 }, { 0, 1500 }, { 1, 100 },
		{ 0, 300 }, { 0, 100 }, { 0, 100 }, { 0, 300 }, { 0, 100 }, { 0, 100 },
	};
	int m = (int)(sizeof(plan) / sizeof(plan[0]));

	for (int i = 0; i < m; i++)
		reply(i, plan[i].d, plan[i].len, false);
	return m;
}

static void test_grouped(void)
{
	uint64_t s0 = g.sends, r0 = g.segs;
	int m = mixed_batch();

	CHECK(send_all((unsigned)m) == (unsigned)m);
	CHECK(all_arrived(m));
	/* groups: 10 x 100 and 5 x 300 to receiver 0, 3 x 100 to receiver 1 */
	CHECK(g.sends - s0 == 3);
	CHECK(g.segs - r0 == 18);
	CHECK(g.fallbacks == 0 && g.lost == 0);

	/* the same source control message groups; another source address,
	 * or none, not: 4 from 127.0.0.1, 3 from 127.0.0.2, 2 without */
	s0 = g.sends;
	r0 = g.segs;
	for (int i = 0; i < 9; i++)
		reply(i, 0, 120, i < 4 ? 1 : i < 7 ? 2 : 0);
	CHECK(send_all(9) == 9);
	CHECK(all_arrived(9));
	CHECK(g.sends - s0 == 3);
	CHECK(g.segs - r0 == 9);

	/* empty datagrams are never grouped (a segment size of 0 would make
	 * the kernel send one datagram for all) */
	s0 = g.sends;
	for (int i = 0; i < 3; i++)
		reply(i, 1, 0, 0);
	CHECK(send_all(3) == 3);
	CHECK(g.sends == s0);
	{
		uint8_t b[8];
		int got = 0;
		struct pollfd p = { .fd = rx_fd[1], .events = POLLIN };

		while (poll(&p, 1, 200) == 1 && recv(rx_fd[1], b, sizeof(b), MSG_DONTWAIT) == 0)
			got++;
		CHECK(got == 3);
	}

	/* one datagram alone; a full call of equal longest segments: 64 x
	 * 1232 octets exceed one send (65507), so two groups */
	s0 = g.sends;
	r0 = g.segs;
	reply(0, 1, 64, 0);
	CHECK(send_all(1) == 1);
	CHECK(all_arrived(1));
	CHECK(g.sends == s0);
	for (int i = 0; i < N_TX; i++)
		reply(i, 0, TW_UDP_GSO_SEG_MAX, 0);
	CHECK(send_all(N_TX) == N_TX);
	CHECK(all_arrived(N_TX));
	CHECK(g.sends == s0 + 2 && g.segs == r0 + N_TX);
}

/* A connected socket (twag-load's): no address in the messages. */
static void test_connected(void)
{
	struct sockaddr_in self;
	int fd = udp_socket(&self);
	uint64_t s0 = g.sends;

	if (!CHECK(fd >= 0) ||
	    !CHECK(connect(fd, (struct sockaddr *)&rx_addr[1], sizeof(rx_addr[1])) == 0)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (int i = 0; i < 12; i++) {
		reply(i, 1, i % 2 ? 200 : 210, 0);
		tx[i].msg_hdr.msg_name = NULL;
		tx[i].msg_hdr.msg_namelen = 0;
	}
	CHECK(tw_udp_gso_send(&g, fd, tx, 12, MSG_DONTWAIT) == 12);
	CHECK(all_arrived(12));
	CHECK(g.sends == s0 + 2);
	close(fd);
}

/* 15 replies in three groups (6 of 100 octets and 4 of 200 to receiver
 * 0, 5 of 100 to receiver 1); the send buffer full after the first group,
 * then at once: the datagrams sent arrive, the others are lost (counted,
 * EAGAIN), GSO stays on, and with room again everything goes. */
static void test_full_buffer(void)
{
	struct tw_udp_gso s;

	tw_udp_gso_init(&s, tx_fd, true);
	for (int i = 0; i < 15; i++)
		reply(i, i < 10 ? 0 : 1, i < 6 || i >= 10 ? 100 : 200, 0);
	full_after = 1;
	CHECK(tw_udp_gso_send(&s, tx_fd, tx, 15, MSG_DONTWAIT) == 6);
	full_after = -1;
	CHECK(arrived(15, 0, 6));
	CHECK(s.lost == 9 && s.last_errno == EAGAIN);
	CHECK(s.on && s.fallbacks == 0 && s.sends == 1 && s.segs == 6);
	full_after = 0;
	CHECK(tw_udp_gso_send(&s, tx_fd, tx, 15, MSG_DONTWAIT) == 0);
	full_after = -1;
	CHECK(arrived(15, 0, 0));
	CHECK(s.lost == 24 && s.on);
	CHECK(tw_udp_gso_send(&s, tx_fd, tx, 15, MSG_DONTWAIT) == 15);
	CHECK(all_arrived(15));
	CHECK(s.lost == 24 && s.sends == 4);
}

static void test_refused(void)
{
	int one = 1;
	uint64_t s0 = g.sends;
	int m;

	/* a socket without UDP checksums cannot segment: EINVAL */
	if (!CHECK(setsockopt(tx_fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0))
		return;
	m = mixed_batch();
	CHECK(send_all((unsigned)m) == (unsigned)m);
	CHECK(all_arrived(m));
	CHECK(g.sends == s0);
	CHECK(g.fallbacks == 1 && g.lost == 0);
	CHECK(!g.on && g.off_errno == EINVAL);
	/* and no GSO attempt after that */
	m = mixed_batch();
	CHECK(send_all((unsigned)m) == (unsigned)m);
	CHECK(all_arrived(m));
	CHECK(g.fallbacks == 1);
	one = 0;
	CHECK(setsockopt(tx_fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0);
}

static void test_off(void)
{
	struct tw_udp_gso off;
	int m = mixed_batch();

	tw_udp_gso_init(&off, tx_fd, false);
	CHECK(!off.on);
	CHECK(tw_udp_gso_send(&off, tx_fd, tx, (unsigned)m, 0) == (unsigned)m);
	CHECK(all_arrived(m));
	CHECK(off.sends == 0 && off.fallbacks == 0);
}

/* A connected socket whose peer is gone reports the ICMP port
 * unreachable of an earlier datagram once, as ECONNREFUSED on the next
 * send, which did not go out: it is retried, nothing is lost. */
static void test_refused_port(void)
{
	struct sockaddr_in self, gone;
	int fd = udp_socket(&self), peer = udp_socket(&gone);
	uint8_t b[1] = { 0 };
	struct tw_udp_gso s;

	if (!CHECK(fd >= 0 && peer >= 0) ||
	    !CHECK(connect(fd, (struct sockaddr *)&gone, sizeof(gone)) == 0)) {
		if (fd >= 0)
			close(fd);
		if (peer >= 0)
			close(peer);
		return;
	}
	close(peer); /* the port is closed now */
	CHECK(send(fd, b, 1, 0) == 1);
	/* the ICMP error arrives at once on loopback; wait for it */
	bool err_seen = false;

	for (int i = 0; i < 100 && !err_seen; i++) {
		struct pollfd p = { .fd = fd, .events = POLLERR };

		err_seen = poll(&p, 1, 10) == 1;
	}
	CHECK(err_seen);
	refused_seen = 0;
	for (int i = 0; i < 4; i++) {
		reply(i, 0, 100, 0);
		tx[i].msg_hdr.msg_name = NULL;
		tx[i].msg_hdr.msg_namelen = 0;
	}
	tw_udp_gso_init(&s, fd, true);
	CHECK(tw_udp_gso_send(&s, fd, tx, 4, MSG_DONTWAIT) == 4);
	CHECK(s.lost == 0);
	CHECK(refused_seen == 1); /* the kernel did refuse once: the retry ran */
	close(fd);
}

/* twagd's worker: its counters and gauge follow its sender. */
static void test_worker(void)
{
	void *mem = NULL;
	int m;

	/* the worker's counters are cache-line aligned */
	if (!CHECK(posix_memalign(&mem, 64, sizeof(*w)) == 0))
		return;
	w = memset(mem, 0, sizeof(*w));
	w->fd = tx_fd;
	tw_udp_gso_init(&w->txg, tx_fd, true);
	atomic_store(&w->ctr.v[TW_C_UDP_GSO_ON], w->txg.on ? 1 : 0);
	m = mixed_batch();
	tw_srv_send_replies(w, tx, m > TW_SRV_BATCH ? TW_SRV_BATCH : m);
	CHECK(all_arrived(m));
	if (w->txg.on) {
		int one = 1;

		CHECK(ctr(TW_C_TX_GSO_SENDS) == 3 && ctr(TW_C_TX_GSO_REPLIES) == 18);
		CHECK(ctr(TW_C_UDP_GSO_ON) == 1);
		CHECK(setsockopt(tx_fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0);
		m = mixed_batch();
		tw_srv_send_replies(w, tx, m);
		CHECK(all_arrived(m));
		CHECK(ctr(TW_C_TX_GSO_FALLBACKS) == 1 && ctr(TW_C_UDP_GSO_ON) == 0);
	} else {
		CHECK(ctr(TW_C_TX_GSO_SENDS) == 0 && ctr(TW_C_UDP_GSO_ON) == 0);
	}
	free(w);
}

void test_main(void)
{
	struct sockaddr_in self;

	for (int d = 0; d < N_RX; d++)
		rx_fd[d] = udp_socket(&rx_addr[d]);
	tx_fd = udp_socket(&self);
	if (!CHECK(rx_fd[0] >= 0 && rx_fd[1] >= 0 && tx_fd >= 0))
		goto out;
	tw_udp_gso_init(&g, tx_fd, true);
	if (g.on) {
		test_grouped();
		test_connected();
		test_full_buffer();
		test_refused();
	} else {
		tw_note("UDP_SEGMENT not supported by this kernel: GSO cases not run");
	}
	test_off();
	test_refused_port();
	test_worker();
out:
	for (int d = 0; d < N_RX; d++)
		if (rx_fd[d] >= 0)
			close(rx_fd[d]);
	if (tx_fd >= 0)
		close(tx_fd);
}
