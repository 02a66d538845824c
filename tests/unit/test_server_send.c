/* twagd's reply sending (src/server/send.c) over real loopback sockets:
 *  - replies of one length to one address leave as one UDP GSO send and
 *    arrive as the separate datagrams they were, each once, byte for byte;
 *    different lengths, addresses and source control messages are never
 *    merged; replies longer than a GSO segment go alone;
 *  - a GSO send the kernel refuses (SO_NO_CHECK makes it EINVAL) is made
 *    again reply by reply, nothing lost, and GSO is off from then on;
 *  - --no-udp-gso (txg.gso false): one datagram per reply.
 * On a kernel without UDP_SEGMENT (before Linux 4.18) only the last case
 * can run, and a note says so. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "../../src/server/srv.h"

enum { N_RX = 2 };

static struct tw_srv_worker *w;
static int rx_fd[N_RX];
static struct sockaddr_in rx_addr[N_RX];

/* the replies of one test: destination, length, content */
static struct mmsghdr tx[TW_SRV_BATCH];
static struct iovec tx_iov[TW_SRV_BATCH];
static uint8_t tx_cm[TW_SRV_BATCH][TW_SRV_CMSG_LEN] __attribute__((aligned(8)));
static int dest[TW_SRV_BATCH];

static uint64_t ctr(enum tw_srv_ctr c)
{
	return atomic_load(&w->ctr.v[c]);
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
	uint8_t *b = w->tx_buf[i];

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

/* Every reply of tx[0..m) arrived once, whole, at its receiver, and
 * nothing else did. */
static bool all_arrived(int m)
{
	int seen[TW_SRV_BATCH] = { 0 }, got = 0, stray = 0;
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
			    memcmp(buf, w->tx_buf[i], (size_t)n) == 0) {
				seen[i]++;
				got++;
			} else {
				stray++;
			}
		}
	}
	for (int i = 0; i < m; i++)
		if (seen[i] != 1)
			return false;
	return got == m && stray == 0;
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
	uint64_t s0 = ctr(TW_C_TX_GSO_SENDS), r0 = ctr(TW_C_TX_GSO_REPLIES);
	int m = mixed_batch();

	tw_srv_send_replies(w, tx, m);
	CHECK(all_arrived(m));
	/* groups: 10 x 100 and 5 x 300 to receiver 0, 3 x 100 to receiver 1 */
	CHECK(ctr(TW_C_TX_GSO_SENDS) - s0 == 3);
	CHECK(ctr(TW_C_TX_GSO_REPLIES) - r0 == 18);
	CHECK(ctr(TW_C_TX_GSO_FALLBACKS) == 0);

	/* the same source control message groups; another source address,
	 * or none, not: 4 from 127.0.0.1, 3 from 127.0.0.2, 2 without */
	s0 = ctr(TW_C_TX_GSO_SENDS);
	r0 = ctr(TW_C_TX_GSO_REPLIES);
	for (int i = 0; i < 9; i++)
		reply(i, 0, 120, i < 4 ? 1 : i < 7 ? 2 : 0);
	tw_srv_send_replies(w, tx, 9);
	CHECK(all_arrived(9));
	CHECK(ctr(TW_C_TX_GSO_SENDS) - s0 == 3);
	CHECK(ctr(TW_C_TX_GSO_REPLIES) - r0 == 9);

	/* empty replies are never grouped (a segment size of 0 would make
	 * the kernel send one datagram for all) */
	s0 = ctr(TW_C_TX_GSO_SENDS);
	for (int i = 0; i < 3; i++)
		reply(i, 1, 0, 0);
	tw_srv_send_replies(w, tx, 3);
	CHECK(ctr(TW_C_TX_GSO_SENDS) == s0);
	{
		uint8_t b[8];
		int got = 0;
		struct pollfd p = { .fd = rx_fd[1], .events = POLLIN };

		while (poll(&p, 1, 200) == 1 && recv(rx_fd[1], b, sizeof(b), MSG_DONTWAIT) == 0)
			got++;
		CHECK(got == 3);
	}

	/* one reply, and a full batch of equal ones */
	s0 = ctr(TW_C_TX_GSO_SENDS);
	reply(0, 1, 64, false);
	tw_srv_send_replies(w, tx, 1);
	CHECK(all_arrived(1));
	CHECK(ctr(TW_C_TX_GSO_SENDS) == s0);
	for (int i = 0; i < TW_SRV_BATCH; i++)
		reply(i, 0, TW_SRV_GSO_SEG_MAX, false);
	tw_srv_send_replies(w, tx, TW_SRV_BATCH);
	CHECK(all_arrived(TW_SRV_BATCH));
	CHECK(ctr(TW_C_TX_GSO_SENDS) == s0 + 1);
}

static void test_refused(void)
{
	int one = 1;
	uint64_t s0 = ctr(TW_C_TX_GSO_SENDS);
	int m;

	/* a socket without UDP checksums cannot segment: EINVAL */
	if (!CHECK(setsockopt(w->fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0))
		return;
	m = mixed_batch();
	tw_srv_send_replies(w, tx, m);
	CHECK(all_arrived(m));
	CHECK(ctr(TW_C_TX_GSO_SENDS) == s0);
	CHECK(ctr(TW_C_TX_GSO_FALLBACKS) == 1);
	CHECK(!w->txg.gso);
	CHECK(ctr(TW_C_UDP_GSO_ON) == 0);
	/* and no GSO attempt after that */
	m = mixed_batch();
	tw_srv_send_replies(w, tx, m);
	CHECK(all_arrived(m));
	CHECK(ctr(TW_C_TX_GSO_FALLBACKS) == 1);
}

static void test_off(void)
{
	uint64_t s0 = ctr(TW_C_TX_GSO_SENDS);
	int m = mixed_batch();

	w->txg.gso = false;
	tw_srv_send_replies(w, tx, m);
	CHECK(all_arrived(m));
	CHECK(ctr(TW_C_TX_GSO_SENDS) == s0);
}

void test_main(void)
{
	struct sockaddr_in self;

	void *mem = NULL;

	/* the worker's counters are cache-line aligned */
	if (!CHECK(posix_memalign(&mem, 64, sizeof(*w)) == 0))
		return;
	w = memset(mem, 0, sizeof(*w));
	for (int d = 0; d < N_RX; d++)
		rx_fd[d] = udp_socket(&rx_addr[d]);
	w->fd = udp_socket(&self);
	if (!CHECK(rx_fd[0] >= 0 && rx_fd[1] >= 0 && w->fd >= 0))
		goto out;
	w->txg.gso = tw_srv_udp_gso_ok(w->fd);
	atomic_store(&w->ctr.v[TW_C_UDP_GSO_ON], w->txg.gso ? 1 : 0);
	if (w->txg.gso) {
		test_grouped();
		test_refused();
	} else {
		tw_note("UDP_SEGMENT not supported by this kernel: GSO cases not run");
	}
	test_off();
out:
	for (int d = 0; d < N_RX; d++)
		if (rx_fd[d] >= 0)
			close(rx_fd[d]);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}
