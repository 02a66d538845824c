/*
 * twag-tunnel — the data path of one worker thread (see tunnel.h).
 *
 * Outbound (TUN -> peer), RFC 4303 §3.3 / RFC 3948 §2.2: inner packets
 * (segments of what the stack handed over) are laid out in slots with room
 * in front for the ESP header and IV, encapsulated in place as one batch
 * (tw_esp_encap_batch) under the out-SA's lock, and sent: over UDP, a run
 * of equal-length packets (plus one shorter at its end) as one UDP_SEGMENT
 * buffer straight from the slots (an iovec each, no copy); otherwise one
 * sendmmsg. AH (RFC 4302 tunnel mode, IP encapsulation only) puts an outer
 * IPv4 header in front and sends it with IP_HDRINCL.
 *
 * Inbound (peer -> TUN), RFC 4303 §3.4 / RFC 3948 §2.2: recvmmsg with UDP
 * GRO; each buffer is cut at the segment size the kernel reports; an
 * RFC 3948 keepalive (one octet 0xff) or a non-ESP marker (four zero octets:
 * IKE) is counted and dropped, as is a datagram that came in IP fragments
 * (IP_RECVFRAGSIZE) or longer than the peer's SA can produce. The batch is
 * verified and decrypted in place under the in-SA's lock; each inner packet
 * must be IPv4/IPv6 with the length its header states; then segments are
 * joined (seg.c) and written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tunnel.h"
#include "twag/bytes.h"
#include "twag/udp_gso.h"

#define ADD(w, f, n) __atomic_store_n(&(w)->c.f, (w)->c.f + (n), __ATOMIC_RELAXED)

/* ---- outbound ---- */

static void send_udp(struct tun_worker *w, struct tw_esp_pkt *pk, size_t n)
{
	struct iovec iov[64];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} cm;
	size_t i = 0;

	while (i < n) {
		size_t j = i, total = 0, seg;
		struct msghdr m;

		if (pk[i].status != TW_OK) {
			i++;
			continue;
		}
		seg = pk[i].len;
		/* a run of seg-long packets, and one shorter may end it */
		while (j < n && pk[j].status == TW_OK && j - i < 64 &&
		       total + pk[j].len <= 65000 && pk[j].len <= seg && w->gso_on) {
			iov[j - i].iov_base = pk[j].buf;
			iov[j - i].iov_len = pk[j].len;
			total += pk[j].len;
			j++;
			if (pk[j - 1].len < seg)
				break;
		}
		if (j == i) { /* GSO off: one packet */
			iov[0].iov_base = pk[i].buf;
			iov[0].iov_len = pk[i].len;
			total = pk[i].len;
			j = i + 1;
		}
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = j - i;
		if (j - i > 1) {
			struct cmsghdr *c;
			uint16_t s = (uint16_t)seg;

			memset(&cm, 0, sizeof(cm));
			m.msg_control = cm.buf;
			m.msg_controllen = sizeof(cm.buf);
			c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = IPPROTO_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(s));
			memcpy(CMSG_DATA(c), &s, sizeof(s));
		}
		if (sendmsg(w->net_fd, &m, 0) < 0) {
			if (j - i > 1 && (errno == EINVAL || errno == EIO || errno == EOPNOTSUPP)) {
				/* the kernel refused the group: GSO off, resend one by one */
				fprintf(stderr, "twag-tunnel: UDP GSO refused (%s): sending one by one\n",
					strerror(errno));
				w->gso_on = false;
				continue;
			}
			ADD(w, send_errors, j - i);
		} else {
			ADD(w, net_tx_pkts, j - i);
			ADD(w, net_tx_bytes, total);
		}
		i = j;
	}
}

static void send_each(struct tun_worker *w, struct tw_esp_pkt *pk, size_t n, int fd)
{
	struct mmsghdr mm[TUN_BATCH];
	struct iovec iov[TUN_BATCH];
	size_t k = 0, bytes = 0;

	for (size_t i = 0; i < n; i++) {
		if (pk[i].status != TW_OK)
			continue;
		iov[k].iov_base = pk[i].buf;
		iov[k].iov_len = pk[i].len;
		memset(&mm[k], 0, sizeof(mm[k]));
		mm[k].msg_hdr.msg_iov = &iov[k];
		mm[k].msg_hdr.msg_iovlen = 1;
		bytes += pk[i].len;
		k++;
	}
	for (size_t off = 0; off < k;) {
		int r = sendmmsg(fd, mm + off, (unsigned)(k - off), 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			ADD(w, send_errors, k - off);
			return;
		}
		off += (size_t)r;
	}
	ADD(w, net_tx_pkts, k);
	ADD(w, net_tx_bytes, bytes);
}

/* AH tunnel mode: outer IPv4 (protocol 4 or 41) in front, then AH inserted
 * after it by the library. IP_HDRINCL sends the header as built: the
 * identification and source address are set here, as the ICV covers them. */
static void ah_encap(struct tun_worker *w, size_t n)
{
	struct tun_ctx *x = w->ctx;
	const struct sockaddr_in *l = (const struct sockaddr_in *)&x->cfg.local;
	const struct sockaddr_in *r = (const struct sockaddr_in *)&x->cfg.remote;
	static __thread uint16_t ip_id;

	pthread_mutex_lock(&x->out.lock);
	for (size_t i = 0; i < n; i++) {
		struct tw_esp_pkt *p = &w->pk[i];
		uint8_t *inner = w->slots + i * TUN_SLOT + TUN_SLOT_HEAD;
		uint8_t *o = inner - 20;
		size_t len = w->seg_len[i], out_len;

		memset(o, 0, 20);
		o[0] = 0x45;
		tw_store_be16(o + 2, (uint16_t)(20 + len));
		tw_store_be16(o + 4, ++ip_id == 0 ? ++ip_id : ip_id);
		o[6] = 0x40; /* DF */
		o[8] = 64;
		o[9] = (inner[0] >> 4) == 6 ? 41 : 4;
		memcpy(o + 12, &l->sin_addr, 4);
		memcpy(o + 16, &r->sin_addr, 4);
		p->buf = o;
		p->status = tw_ah_encap(&x->out.ahsa, o, 20 + len, o, TUN_SLOT - TUN_SLOT_HEAD + 20,
					&out_len);
		p->len = out_len;
		if (p->status == TW_ERR_STATE)
			ADD(w, drop_seq_exhausted, 1);
		else if (p->status != TW_OK)
			ADD(w, drop_bad_inner, 1);
	}
	pthread_mutex_unlock(&x->out.lock);
}

static void flush_out(struct tun_worker *w, size_t n)
{
	struct tun_ctx *x = w->ctx;

	if (n == 0)
		return;
	if (x->out.ah) {
		ah_encap(w, n);
		send_each(w, w->pk, n, w->net_fd);
		return;
	}
	size_t hl = tw_esp_hdr_len(&x->out.esp);

	for (size_t i = 0; i < n; i++) {
		struct tw_esp_pkt *p = &w->pk[i];

		p->sa = &x->out.esp;
		p->buf = w->slots + i * TUN_SLOT + TUN_SLOT_HEAD - hl;
		p->len = w->seg_len[i];
		p->cap = TUN_SLOT - (TUN_SLOT_HEAD - hl);
		p->next_header = 0;
	}
	pthread_mutex_lock(&x->out.lock);
	if (tw_esp_encap_batch(w->pk, n) != TW_OK) {
		/* each packet's own status is looked at below */
	}
	pthread_mutex_unlock(&x->out.lock);
	for (size_t i = 0; i < n; i++) {
		if (w->pk[i].status == TW_ERR_STATE)
			ADD(w, drop_seq_exhausted, 1);
		else if (w->pk[i].status != TW_OK && w->seg_len[i] != 0)
			ADD(w, drop_bad_inner, 1); /* 0: counted as too_big already */
	}
	if (w->c.drop_seq_exhausted != 0 && !x->out.exhausted_logged) {
		x->out.exhausted_logged = true;
		fprintf(stderr, "twag-tunnel: out SA %08x: sequence numbers used up "
			"(RFC 4303 §3.3.3): packets dropped until it is rekeyed\n", x->out.spi);
	}
	if (x->cfg.encap == TUN_ENCAP_UDP)
		send_udp(w, w->pk, n);
	else
		send_each(w, w->pk, n, w->net_fd);
}

static void tx_path(struct tun_worker *w)
{
	size_t n = 0;

	for (int r = 0; r < 32; r++) {
		ssize_t got = read(w->tun_fd, w->rbuf, TUN_READ_MAX);
		int segs;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((size_t)got < TUN_VNET_HDR + 20) {
			ADD(w, drop_bad_inner, 1);
			continue;
		}
		if (n + 48 > TUN_BATCH) { /* room for a 64 KiB read at a common MSS */
			flush_out(w, n);
			n = 0;
		}
		segs = tun_segment(w->rbuf, w->rbuf + TUN_VNET_HDR, (size_t)got - TUN_VNET_HDR,
				   w->slots + n * TUN_SLOT, TUN_BATCH - n, w->seg_len + n);
		if (segs < 0 && n > 0) { /* perhaps only out of room */
			flush_out(w, n);
			n = 0;
			segs = tun_segment(w->rbuf, w->rbuf + TUN_VNET_HDR,
					   (size_t)got - TUN_VNET_HDR, w->slots, TUN_BATCH,
					   w->seg_len);
		}
		if (segs < 0) {
			ADD(w, drop_bad_inner, 1);
			continue;
		}
		for (int i = 0; i < segs; i++) {
			if (w->seg_len[n + (size_t)i] > w->ctx->mtu) {
				ADD(w, drop_too_big, 1);
				w->seg_len[n + (size_t)i] = 0; /* not IPv4/6: fails in encap */
			} else {
				ADD(w, tun_rx_bytes, w->seg_len[n + (size_t)i]);
			}
		}
		ADD(w, tun_rx_pkts, (uint64_t)segs);
		n += (size_t)segs;
	}
	flush_out(w, n);
}

/* ---- inbound ---- */

static void write_join(struct tun_worker *w)
{
	struct tun_join *j = &w->join;

	if (j->count == 0)
		return;
	tun_join_finish(j);
	if (writev(w->tun_fd, j->iov, (int)j->niov) < 0) {
		ADD(w, tun_write_errors, 1);
	} else {
		ADD(w, tun_tx_pkts, j->count);
		ADD(w, tun_tx_bytes, j->total);
		ADD(w, tun_tx_writes, 1);
	}
	j->count = 0;
}

/* The inner packet's own length must be what ESP carried. */
static bool inner_ok(const uint8_t *p, size_t len)
{
	if (len >= 20 && (p[0] >> 4) == 4)
		return (p[0] & 15) >= 5 && tw_load_be16(p + 2) == len;
	if (len >= 40 && (p[0] >> 4) == 6)
		return tw_load_be16(p + 4) + 40u == len;
	return false;
}

static void decap_flush(struct tun_worker *w, size_t n)
{
	struct tun_ctx *x = w->ctx;

	if (n == 0)
		return;
	if (x->in.ah) {
		pthread_mutex_lock(&x->in.lock);
		for (size_t i = 0; i < n; i++) {
			struct tw_esp_pkt *p = &w->rpk[i];
			size_t out_len = 0;
			uint64_t seq;

			p->status = tw_ah_decap(&x->in.ahsa, p->buf, p->len, &out_len, &seq);
			if (p->status == TW_OK) {
				uint8_t nh = p->buf[9];

				p->view.off = 20;
				p->view.len = out_len - 20;
				p->view.next_header = nh;
				if (nh != 4 && nh != 41)
					p->status = TW_ERR_UNSUPPORTED;
			}
		}
		pthread_mutex_unlock(&x->in.lock);
	} else {
		for (size_t i = 0; i < n; i++)
			w->rpk[i].sa = &x->in.esp;
		pthread_mutex_lock(&x->in.lock);
		if (tw_esp_decap_batch(w->rpk, n) != TW_OK) {
			/* each packet's own status is looked at below */
		}
		pthread_mutex_unlock(&x->in.lock);
	}
	for (size_t i = 0; i < n; i++) {
		struct tw_esp_pkt *p = &w->rpk[i];
		uint8_t *inner = p->buf + p->view.off;

		if (p->status != TW_OK)
			continue; /* counted in the SA's statistics */
		if (p->view.next_header == TW_ESP_NH_NONE) {
			ADD(w, drop_dummy, 1);
			continue;
		}
		if (!inner_ok(inner, p->view.len)) {
			ADD(w, drop_bad_inner, 1);
			continue;
		}
		if (!tun_join_add(&w->join, inner, p->view.len)) {
			write_join(w);
			(void)tun_join_add(&w->join, inner, p->view.len);
		}
	}
}

/* Queues one received ESP/AH packet; counts and skips what is not one. */
static void rx_one(struct tun_worker *w, uint8_t *p, size_t len, size_t *n)
{
	struct tun_ctx *x = w->ctx;

	ADD(w, net_rx_pkts, 1);
	ADD(w, net_rx_bytes, len);
	if (x->cfg.encap == TUN_ENCAP_UDP &&
	    (len < 8 || (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0))) {
		ADD(w, drop_non_esp, 1); /* keepalive 0xff, IKE marker, runt */
		return;
	}
	if (len > x->wire_max) {
		ADD(w, drop_oversized, 1);
		return;
	}
	if (*n == TUN_BATCH) {
		decap_flush(w, *n);
		*n = 0;
	}
	w->rpk[*n].buf = p;
	w->rpk[*n].len = len;
	w->rpk[*n].cap = len;
	(*n)++;
}

static int cmsg_int(struct msghdr *m, int level, int type, int *out)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == level && c->cmsg_type == type) {
			if (c->cmsg_len == CMSG_LEN(sizeof(uint16_t))) {
				uint16_t v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				*out = v;
			} else {
				memcpy(out, CMSG_DATA(c), sizeof(*out));
			}
			return 1;
		}
	}
	return 0;
}

static void rx_path(struct tun_worker *w, int fd)
{
	struct tun_ctx *x = w->ctx;
	struct mmsghdr mm[TUN_RECV_MSGS];
	struct iovec iov[TUN_RECV_MSGS];
	struct sockaddr_storage from[TUN_RECV_MSGS];
	union {
		char buf[CMSG_SPACE(sizeof(int)) * 3];
		struct cmsghdr align;
	} cm[TUN_RECV_MSGS];
	bool raw = x->cfg.encap == TUN_ENCAP_IP;
	size_t n = 0;

	for (int round = 0; round < 8; round++) {
		int got;

		for (unsigned i = 0; i < TUN_RECV_MSGS; i++) {
			iov[i].iov_base = w->rxbufs + (size_t)i * TUN_READ_MAX;
			iov[i].iov_len = TUN_READ_MAX;
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_name = &from[i];
			mm[i].msg_hdr.msg_namelen = sizeof(from[i]);
			mm[i].msg_hdr.msg_control = cm[i].buf;
			mm[i].msg_hdr.msg_controllen = sizeof(cm[i].buf);
		}
		/* the previous round's packets live in these buffers */
		decap_flush(w, n);
		n = 0;
		write_join(w);
		got = recvmmsg(fd, mm, TUN_RECV_MSGS, MSG_DONTWAIT, NULL);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			uint8_t *p = iov[i].iov_base;
			size_t len = mm[i].msg_len;
			int gso = 0, frag = 0;

			if (mm[i].msg_hdr.msg_flags & MSG_TRUNC) {
				ADD(w, drop_oversized, 1);
				continue;
			}
			if (cmsg_int(&mm[i].msg_hdr, x->cfg.family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
				     x->cfg.family == AF_INET6 ? IPV6_RECVFRAGSIZE : IP_RECVFRAGSIZE,
				     &frag) && frag > 0) {
				ADD(w, net_rx_pkts, 1);
				ADD(w, drop_fragmented, 1);
				continue;
			}
			if (raw && x->cfg.family == AF_INET) {
				/* IPv4 raw sockets deliver the IP header */
				const struct sockaddr_in *r = (const struct sockaddr_in *)&x->cfg.remote;
				size_t ihl;

				if (len < 20 || (p[0] >> 4) != 4 || (ihl = (size_t)(p[0] & 15) * 4) < 20 ||
				    ihl > len || memcmp(p + 12, &r->sin_addr, 4) != 0 ||
				    p[9] != x->raw_proto) {
					ADD(w, net_rx_pkts, 1);
					ADD(w, drop_bad_outer, 1);
					continue;
				}
				if (x->in.ah) { /* AH verifies the outer header too */
					if (ihl != 20) {
						ADD(w, net_rx_pkts, 1);
						ADD(w, drop_bad_outer, 1);
						continue;
					}
					rx_one(w, p, len, &n);
				} else {
					rx_one(w, p + ihl, len - ihl, &n);
				}
				continue;
			}
			if (raw) { /* IPv6 raw: the payload only; check the source */
				const struct sockaddr_in6 *r = (const struct sockaddr_in6 *)&x->cfg.remote;
				const struct sockaddr_in6 *f = (const struct sockaddr_in6 *)&from[i];

				if (memcmp(&f->sin6_addr, &r->sin6_addr, 16) != 0) {
					ADD(w, net_rx_pkts, 1);
					ADD(w, drop_bad_outer, 1);
					continue;
				}
				rx_one(w, p, len, &n);
				continue;
			}
			if (!cmsg_int(&mm[i].msg_hdr, IPPROTO_UDP, UDP_GRO, &gso) || gso <= 0)
				gso = (int)len;
			for (size_t off = 0; off < len; off += (size_t)gso) {
				size_t l = len - off < (size_t)gso ? len - off : (size_t)gso;

				rx_one(w, p + off, l, &n);
			}
		}
		decap_flush(w, n);
		n = 0;
		write_join(w);
		if (got < TUN_RECV_MSGS)
			break;
	}
	decap_flush(w, n);
	write_join(w);
}

void *tun_worker_main(void *arg)
{
	struct tun_worker *w = arg;
	struct tun_ctx *x = w->ctx;
	struct pollfd pf[3];
	nfds_t np = 0;
	int rx_fd = w->net_rx_fd >= 0 ? w->net_rx_fd : w->net_fd;

	pf[np++] = (struct pollfd){ .fd = w->tun_fd, .events = POLLIN };
	if (rx_fd >= 0 && (x->cfg.encap == TUN_ENCAP_UDP || w->net_rx_fd >= 0))
		pf[np++] = (struct pollfd){ .fd = rx_fd, .events = POLLIN };
	while (!__atomic_load_n(&x->stop, __ATOMIC_RELAXED)) {
		int r = poll(pf, np, 250);

		if (r <= 0)
			continue;
		if (pf[0].revents & POLLIN)
			tx_path(w);
		if (np > 1 && (pf[1].revents & POLLIN))
			rx_path(w, rx_fd);
	}
	return NULL;
}
