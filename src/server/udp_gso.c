/*
 * twag — a batch of UDP datagrams out with segmentation offload (see
 * twag/udp_gso.h): grouping, the UDP_SEGMENT control message, and the
 * way back to one datagram per send when the kernel refuses a group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>

#include "twag/udp_gso.h"

/* Linux before 6.10 takes at most 64 segments in one send (UDP_MAX_SEGMENTS);
 * a send is one UDP datagram before the cut: at most 65507 octets. */
enum { GSO_SEGS_MAX = 64, GSO_BYTES_MAX = 65507 };

_Static_assert((int)TW_UDP_GSO_MAX_MSGS <= (int)GSO_SEGS_MAX, "a whole call's group fits one send");
_Static_assert(sizeof(((struct tw_udp_gso *)0)->cmsg[0]) >=
		       TW_UDP_GSO_CMSG_MAX + CMSG_SPACE(sizeof(uint16_t)),
	       "room for the datagram's control messages and UDP_SEGMENT");

bool tw_udp_gso_supported(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	/* the option came with the control message (4.18); an older kernel
	 * answers ENOPROTOOPT */
	return getsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &v, &l) == 0;
}

void tw_udp_gso_init(struct tw_udp_gso *g, int fd, bool want)
{
	memset(g, 0, sizeof(*g));
	g->on = want && tw_udp_gso_supported(fd);
}

static bool same_path(const struct msghdr *a, const struct msghdr *b)
{
	return a->msg_namelen == b->msg_namelen &&
	       (a->msg_namelen == 0 || memcmp(a->msg_name, b->msg_name, a->msg_namelen) == 0) &&
	       a->msg_controllen == b->msg_controllen &&
	       (a->msg_controllen == 0 ||
		memcmp(a->msg_control, b->msg_control, a->msg_controllen) == 0);
}

/* The send list for tx[0..m): a group of datagrams of one length to one
 * path as one message with a UDP_SEGMENT control message, the rest as
 * they are. Returns the number of messages. */
static unsigned pack(struct tw_udp_gso *g, struct mmsghdr *tx, unsigned m)
{
	bool taken[TW_UDP_GSO_MAX_MSGS] = { false };
	unsigned ng = 0, o = 0;

	for (unsigned i = 0; i < m; i++) {
		const struct msghdr *h = &tx[i].msg_hdr;
		size_t len = h->msg_iov[0].iov_len;
		struct msghdr *out = &g->msg[ng].msg_hdr;
		int n = 1;

		if (taken[i])
			continue;
		g->first[ng] = (int)o;
		g->ord[o++] = (int)i;
		if (g->on && len > 0 && len <= TW_UDP_GSO_SEG_MAX &&
		    h->msg_controllen <= TW_UDP_GSO_CMSG_MAX)
			for (unsigned j = i + 1; j < m && (size_t)(n + 1) * len <= GSO_BYTES_MAX;
			     j++)
				if (!taken[j] && tx[j].msg_hdr.msg_iov[0].iov_len == len &&
				    same_path(h, &tx[j].msg_hdr)) {
					taken[j] = true;
					g->ord[o++] = (int)j;
					n++;
				}
		g->n[ng] = n;
		if (n == 1) {
			*out = *h;
		} else {
			size_t cl = CMSG_ALIGN(h->msg_controllen);
			struct cmsghdr *c;
			uint16_t seg = (uint16_t)len;

			for (int k = 0; k < n; k++)
				g->iov[g->first[ng] + k] = tx[g->ord[g->first[ng] + k]].msg_hdr.msg_iov[0];
			memset(out, 0, sizeof(*out));
			out->msg_name = h->msg_name;
			out->msg_namelen = h->msg_namelen;
			out->msg_iov = &g->iov[g->first[ng]];
			out->msg_iovlen = (size_t)n;
			/* the datagram's own control messages (e.g. the source
			 * address of a wildcard listener) first, then the
			 * segment size */
			memset(g->cmsg[ng], 0, sizeof(g->cmsg[ng]));
			if (h->msg_controllen > 0)
				memcpy(g->cmsg[ng], h->msg_control, h->msg_controllen);
			out->msg_control = g->cmsg[ng];
			out->msg_controllen = cl + CMSG_SPACE(sizeof(uint16_t));
			c = (struct cmsghdr *)(void *)(g->cmsg[ng] + cl);
			c->cmsg_level = IPPROTO_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		}
		ng++;
	}
	return ng;
}

/* A refusal that says GSO itself cannot go this way (the socket or the
 * path): EINVAL or EMSGSIZE (a path MTU below the segment), EIO (no
 * checksum offload, an IPsec policy). */
static bool gso_refusal(int err)
{
	return err == EINVAL || err == EMSGSIZE || err == EIO || err == EOPNOTSUPP ||
	       err == ENOPROTOOPT;
}

/* One datagram, retrying EINTR: 1 when sent, else 0 (g->lost). */
static unsigned send_one(struct tw_udp_gso *g, int fd, const struct msghdr *h, int flags)
{
	ssize_t r;

	do
		r = sendmsg(fd, h, flags);
	while (r < 0 && errno == EINTR);
	if (r >= 0)
		return 1;
	g->lost++;
	g->last_errno = errno;
	return 0;
}

unsigned tw_udp_gso_send(struct tw_udp_gso *g, int fd, struct mmsghdr *tx, unsigned m,
			 int flags)
{
	unsigned ng, sent = 0;
	int refused = 0;

	if (m > TW_UDP_GSO_MAX_MSGS)
		m = TW_UDP_GSO_MAX_MSGS;
	ng = pack(g, tx, m);
	for (unsigned off = 0; off < ng;) {
		int k = sendmmsg(fd, g->msg + off, ng - off, flags);
		int err = errno;

		if (k > 0) {
			for (unsigned j = off; j < off + (unsigned)k; j++) {
				sent += (unsigned)g->n[j];
				if (g->n[j] > 1) {
					g->sends++;
					g->segs += (uint64_t)g->n[j];
				}
			}
			off += (unsigned)k;
			continue;
		}
		if (k < 0 && err == EINTR)
			continue;
		/* a connected socket reports an earlier ICMP port
		 * unreachable once: this message was not sent */
		if (k < 0 && err == ECONNREFUSED && refused++ < 2)
			continue;
		if (k < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			/* the socket buffer is full: the rest is lost */
			for (unsigned j = off; j < ng; j++)
				g->lost += (uint64_t)g->n[j];
			g->last_errno = err;
			break;
		}
		if (g->n[off] > 1 && gso_refusal(err)) {
			unsigned ok = 0;

			g->fallbacks++;
			for (int j = 0; j < g->n[off]; j++)
				ok += send_one(g, fd, &tx[g->ord[g->first[off] + j]].msg_hdr, flags);
			sent += ok;
			if (ok > 0) {
				/* the datagrams went out alone: GSO was the
				 * cause, and the groups after this one would be
				 * refused too: the rest goes one by one, the
				 * send list rewritten in place */
				unsigned from = (unsigned)g->first[off] + (unsigned)g->n[off], r = 0;

				g->on = false;
				g->off_errno = err;
				for (unsigned j = from; j < m; j++) {
					g->msg[r].msg_hdr = tx[g->ord[j]].msg_hdr;
					g->n[r++] = 1;
				}
				ng = r;
				off = 0;
				refused = 0;
				continue;
			}
		} else {
			g->lost += (uint64_t)g->n[off];
			g->last_errno = err;
		}
		off++;
	}
	return sent;
}
