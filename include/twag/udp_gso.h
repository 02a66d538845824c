/*
 * twag — sending a batch of UDP datagrams with segmentation offload.
 *
 * A batch of datagrams often holds several of one length to one address
 * (a RADIUS server's replies to one NAS, a load generator's requests to
 * one server). Sent one by one (sendmmsg), every datagram pays for the
 * whole stack: route look-up, IP output, the device, and on loopback the
 * delivery into the receiver's socket. UDP GSO (Linux 4.18, the
 * UDP_SEGMENT control message) sends such a group as one buffer that the
 * kernel, or the network card, cuts into datagrams of that length at the
 * bottom of the stack; the receiver gets the same datagrams either way.
 * On the development VM, 8 datagrams of 200 octets to a loopback socket
 * took 0.8 µs of the sender's CPU each instead of 2.1.
 *
 * Only what sees packets on the sending host before the cut (tcpdump on
 * lo, netfilter OUTPUT rules, cgroup egress programs) sees a group as one
 * packet.
 *
 * struct mmsghdr needs _GNU_SOURCE defined before the first system header.
 */
#ifndef TWAG_UDP_GSO_H
#define TWAG_UDP_GSO_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* linux/udp.h's socket options, for C libraries older than them */
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* Linux 4.18 */
#endif
#ifndef UDP_GRO
#define UDP_GRO 104 /* Linux 5.0 */
#endif

enum {
	TW_UDP_GSO_MAX_MSGS = 64,    /* datagrams per tw_udp_gso_send */
	/* the longest datagram sent in a group: a segment fits the IPv6
	 * minimum MTU (1280 - 40 - 8), as any IPv6 path and common IPv4 ones
	 * take it (a smaller path MTU: the kernel refuses the group, which is
	 * then sent datagram by datagram) */
	TW_UDP_GSO_SEG_MAX = 1232,
	TW_UDP_GSO_CMSG_MAX = 64,    /* a datagram's own control messages */
};

/*
 * A sender's state and scratch, caller-owned (one per socket or per
 * thread; not shared between threads). on: UDP_SEGMENT is used; it turns
 * off by itself when the kernel refuses a group and the same datagrams
 * then go out one by one (the refusal was GSO's, not the path's).
 */
struct tw_udp_gso {
	bool on;
	int off_errno;                /* why it turned off (0: it did not) */
	/* counters since init */
	uint64_t sends;               /* GSO sends (two or more datagrams each) */
	uint64_t segs;                /* datagrams in them */
	uint64_t fallbacks;           /* GSO sends refused, resent one by one */
	uint64_t lost;                /* datagrams the kernel refused */
	int last_errno;               /* the last refusal's errno */
	/* one call's send list: message g carries tx[ord[first[g] ..
	 * first[g] + n[g])] */
	struct mmsghdr msg[TW_UDP_GSO_MAX_MSGS];
	struct iovec iov[TW_UDP_GSO_MAX_MSGS];
	int first[TW_UDP_GSO_MAX_MSGS], n[TW_UDP_GSO_MAX_MSGS], ord[TW_UDP_GSO_MAX_MSGS];
	uint8_t cmsg[TW_UDP_GSO_MAX_MSGS][TW_UDP_GSO_CMSG_MAX + 24] __attribute__((aligned(8)));
};

/* True when the kernel takes UDP_SEGMENT on fd (Linux 4.18 and later: an
 * older one would ignore the control message and send one datagram). */
bool tw_udp_gso_supported(int fd);

/* g for socket fd: on when want and the kernel supports it. */
void tw_udp_gso_init(struct tw_udp_gso *g, int fd, bool want);

/*
 * Sends tx[0..m) (m <= TW_UDP_GSO_MAX_MSGS; one iovec each, msg_name for
 * an unconnected socket, control messages of at most TW_UDP_GSO_CMSG_MAX
 * octets) on fd with sendmmsg flags: datagrams of one length (1 to
 * TW_UDP_GSO_SEG_MAX octets) to one address with the same control
 * messages go as one GSO send when g->on. A datagram the kernel refuses is
 * lost, as on the wire (g->lost, g->last_errno); a refused GSO send is made
 * again datagram by datagram; EINTR and a connected socket's stale
 * ECONNREFUSED (twice at most) are retried; EAGAIN stops the call (the
 * rest is lost). Returns the number of datagrams sent.
 */
unsigned tw_udp_gso_send(struct tw_udp_gso *g, int fd, struct mmsghdr *tx, unsigned m,
			 int flags);

#endif
