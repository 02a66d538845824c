/*
 * twag — twagd: a worker's replies out, with UDP segmentation offload.
 *
 * A batch's replies often go to one client address with the same length
 * (a NAS, or a RADIUS proxy, sending many requests of one kind). Sent as
 * one datagram each, every reply pays for the whole stack: route look-up,
 * IP output, the device, and on loopback the delivery into the receiver's
 * socket. UDP GSO (Linux 4.18, the UDP_SEGMENT control message) sends them
 * as one buffer that the kernel, or the network card, cuts into datagrams
 * of that length at the bottom of the stack: on this machine sending 8
 * datagrams of 200 octets to a loopback socket took 0.8 µs of the sender's
 * CPU each instead of 2.1. The receiver gets the same datagrams either
 * way; only what sees the packets on the sending host before the cut
 * (tcpdump on lo, netfilter OUTPUT rules, cgroup egress programs) sees
 * the group as one packet (--no-udp-gso for such set-ups).
 *
 * Replies are grouped by (length, destination, source control message);
 * a group of one is sent as before. A group whose send fails is sent
 * again one reply at a time, so GSO never loses a reply; when the cause
 * says GSO is refused on this socket or path (see unpack_send) GSO is
 * turned off for the worker and logged once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>

#include "srv.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h, Linux 4.18 */
#endif

/* Linux before 5.x takes at most 64 segments in one send (UDP_MAX_SEGMENTS),
 * and a send is one UDP datagram before the cut: at most 65507 octets. */
_Static_assert(TW_SRV_BATCH <= 64 && TW_SRV_BATCH * TW_SRV_GSO_SEG_MAX <= 65507,
	       "a GSO group of a whole batch fits one send");

bool tw_srv_udp_gso_ok(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	/* the option is known from the kernel that honours the control
	 * message on: an older one would ignore the message and send the
	 * whole buffer as one datagram */
	return getsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &v, &l) == 0;
}

static bool same_path(const struct msghdr *a, const struct msghdr *b)
{
	return a->msg_namelen == b->msg_namelen &&
	       memcmp(a->msg_name, b->msg_name, a->msg_namelen) == 0 &&
	       a->msg_controllen == b->msg_controllen &&
	       (a->msg_controllen == 0 ||
		memcmp(a->msg_control, b->msg_control, a->msg_controllen) == 0);
}

/* The send list for tx[0..m): a group of replies of one length to one
 * path as one message with a UDP_SEGMENT control message, the rest as
 * they are. Returns the number of messages. */
static int pack(struct tw_srv_tx *t, struct mmsghdr *tx, int m)
{
	bool taken[TW_SRV_BATCH] = { false };
	int g = 0, o = 0;

	for (int i = 0; i < m; i++) {
		const struct msghdr *h = &tx[i].msg_hdr;
		size_t len = h->msg_iov[0].iov_len;
		struct msghdr *out = &t->msg[g].msg_hdr;
		int n = 1;

		if (taken[i])
			continue;
		t->first[g] = o;
		t->ord[o++] = i;
		if (t->gso && len > 0 && len <= TW_SRV_GSO_SEG_MAX &&
		    h->msg_controllen <= TW_SRV_CMSG_LEN)
			for (int j = i + 1; j < m; j++)
				if (!taken[j] && tx[j].msg_hdr.msg_iov[0].iov_len == len &&
				    same_path(h, &tx[j].msg_hdr)) {
					taken[j] = true;
					t->ord[o++] = j;
					n++;
				}
		t->n[g] = n;
		if (n == 1) {
			*out = *h;
		} else {
			struct cmsghdr *c;

			for (int k = 0; k < n; k++)
				t->iov[t->first[g] + k] = tx[t->ord[t->first[g] + k]].msg_hdr.msg_iov[0];
			memset(out, 0, sizeof(*out));
			out->msg_name = h->msg_name;
			out->msg_namelen = h->msg_namelen;
			out->msg_iov = &t->iov[t->first[g]];
			out->msg_iovlen = (size_t)n;
			/* the reply's own control message (the source address
			 * of a wildcard listener) first, then the segment size */
			size_t cl = CMSG_ALIGN(h->msg_controllen);

			memset(t->cmsg[g], 0, sizeof(t->cmsg[g]));
			if (h->msg_controllen > 0)
				memcpy(t->cmsg[g], h->msg_control, h->msg_controllen);
			out->msg_control = t->cmsg[g];
			out->msg_controllen = cl + CMSG_SPACE(sizeof(uint16_t));
			c = (struct cmsghdr *)(void *)(t->cmsg[g] + cl);
			c->cmsg_level = IPPROTO_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			uint16_t seg = (uint16_t)len;

			memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		}
		g++;
	}
	return g;
}

/*
 * Group g one reply at a time, after its GSO send failed with err. When
 * the replies then go out, GSO itself was refused for a reason of the
 * socket or the path (EINVAL, EMSGSIZE: a path MTU below the segment;
 * EIO: no checksum offload, an IPsec policy): GSO is turned off for the
 * worker, since one refusal means one more system call per batch from
 * then on. (A path-specific cause, one client behind a small MTU, thus
 * turns it off for all; the cost is the saving, never a reply.)
 */
static void unpack_send(struct tw_srv_worker *w, struct mmsghdr *tx, int g, int err)
{
	struct tw_srv_tx *t = &w->txg;
	int sent = 0;

	tw_srv_count(&w->ctr, TW_C_TX_GSO_FALLBACKS, 1);
	for (int k = 0; k < t->n[g]; k++) {
		const struct msghdr *h = &tx[t->ord[t->first[g] + k]].msg_hdr;
		ssize_t r;

		do
			r = sendmsg(w->fd, h, 0);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			tw_logf(&w->log, TW_LOG_DEBUG, "socket-error", "op=sendmsg errno=%d", errno);
		else
			sent++;
	}
	if (sent > 0 && (err == EINVAL || err == EMSGSIZE || err == EIO || err == EOPNOTSUPP ||
			 err == ENOPROTOOPT)) {
		t->gso = false;
		atomic_store_explicit(&w->ctr.v[TW_C_UDP_GSO_ON], 0, memory_order_relaxed);
		tw_logf(&w->log, TW_LOG_INFO, "udp-gso-off", "worker=%u errno=%d", w->idx, err);
	}
}

void tw_srv_send_replies(struct tw_srv_worker *w, struct mmsghdr *tx, int m)
{
	struct tw_srv_tx *t = &w->txg;
	int g = pack(t, tx, m);

	for (int off = 0; off < g;) {
		int k = sendmmsg(w->fd, t->msg + off, (unsigned)(g - off), 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = errno;

			if (t->n[off] > 1) {
				unpack_send(w, tx, off, err);
				if (!t->gso && off + 1 < g) {
					/* the groups after it would be refused
					 * too: their replies sent as singles */
					int r = 0;

					for (int j = t->first[off + 1]; j < m; j++)
						t->rest[r++] = tx[t->ord[j]];
					tw_srv_send_replies(w, t->rest, r);
					return;
				}
			} else {
				/* UDP: a reply that cannot be sent is lost, as
				 * on the wire; the NAS retransmits and gets it
				 * from the duplicate cache */
				tw_logf(&w->log, TW_LOG_DEBUG, "socket-error", "op=sendmmsg errno=%d",
					err);
			}
			off++;
			continue;
		}
		for (int j = off; j < off + k; j++)
			if (t->n[j] > 1) {
				tw_srv_count(&w->ctr, TW_C_TX_GSO_SENDS, 1);
				tw_srv_count(&w->ctr, TW_C_TX_GSO_REPLIES, (uint64_t)t->n[j]);
			}
		off += k;
	}
}
