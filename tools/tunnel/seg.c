/*
 * twag-tunnel — TCP segmentation offload done here, and its inverse.
 *
 * The TUN device is opened with IFF_VNET_HDR and offers checksum and TSO
 * offload (TUNSETOFFLOAD), so the stack hands over up to 64 KiB of one TCP
 * stream per read with a virtio-net header saying how to cut it (virtio
 * 1.1 §5.1.6.2: gso_type, gso_size, and csum_start/csum_offset of a
 * checksum still to complete). Each segment gets a copy of the IP and TCP
 * headers with its own length, IPv4 identification and header checksum,
 * sequence number, flags (FIN and PSH on the last only, CWR on the first
 * only, as the kernel's tcp_gso_segment does) and a complete TCP checksum
 * (RFC 9293 §3.1, RFC 8200 §8.1 for IPv6).
 *
 * The other way, decapsulated segments of one TCP stream are joined back
 * into one packet for one writev() with a GSO header: same addresses,
 * ports, acknowledgment, window, options, IP fields; contiguous sequence
 * numbers; only the last may be shorter or carry PSH. The joined packet
 * is marked CHECKSUM_PARTIAL (NEEDS_CSUM with the pseudo-header sum in
 * the checksum field), as a NIC's receive offload would hand it up.
 *
 * Checksums are summed in host order (RFC 1071 §2(B): the one's
 * complement sum does not depend on byte order) and stored as summed.
 */
#define _GNU_SOURCE
#include <linux/virtio_net.h>
#include <string.h>

#include "tunnel.h"
#include "twag/bytes.h"

uint64_t tun_csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
	while (len >= 32) {
		uint64_t a, b, c, d;

		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&c, p + 16, 8);
		memcpy(&d, p + 24, 8);
		sum += (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) +
		       (c & 0xffffffffu) + (c >> 32) + (d & 0xffffffffu) + (d >> 32);
		p += 32;
		len -= 32;
	}
	while (len >= 4) {
		uint32_t a;

		memcpy(&a, p, 4);
		sum += a;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t a;

		memcpy(&a, p, 2);
		sum += a;
		p += 2;
		len -= 2;
	}
	if (len == 1) {
		uint8_t w[2] = { p[0], 0 };
		uint16_t a;

		memcpy(&a, w, 2);
		sum += a;
	}
	return sum;
}

uint16_t tun_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void put16(uint8_t *p, uint16_t v) /* a host-order checksum */
{
	memcpy(p, &v, 2);
}

/* Pseudo-header sum: addresses, protocol, upper-layer length. */
static uint64_t pseudo(const uint8_t *ip, bool v6, uint8_t proto, size_t len)
{
	uint8_t tail[8] = { 0 };
	uint64_t s;

	if (v6) {
		s = tun_csum_add(0, ip + 8, 32);
		tw_store_be32(tail, (uint32_t)len);
		tail[7] = proto;
		return tun_csum_add(s, tail, 8);
	}
	s = tun_csum_add(0, ip + 12, 8);
	tail[1] = proto;
	tw_store_be16(tail + 2, (uint16_t)len);
	return tun_csum_add(s, tail, 4);
}

static void ip4_csum(uint8_t *ip, size_t ihl)
{
	ip[10] = ip[11] = 0;
	put16(ip + 10, (uint16_t)~tun_csum_fold(tun_csum_add(0, ip, ihl)));
}

int tun_segment(const uint8_t *vh, const uint8_t *pkt, size_t len, uint8_t *slots,
		size_t max_segs, size_t *lens)
{
	struct virtio_net_hdr h;
	size_t iphl, hdr, payload, mss, n;
	uint32_t seq0;
	uint16_t id0 = 0;
	bool v6;

	memcpy(&h, vh, sizeof(h));
	if (len < 20 || len > 65535 + 40)
		return -1;
	v6 = (pkt[0] >> 4) == 6;
	if (!v6 && (pkt[0] >> 4) != 4)
		return -1;
	if ((h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_NONE) {
		uint8_t *s = slots + TUN_SLOT_HEAD;

		if (len > TUN_SLOT - TUN_SLOT_HEAD - 64)
			return -1;
		memcpy(s, pkt, len);
		if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
			size_t at = (size_t)h.csum_start + h.csum_offset;
			uint16_t c;

			if (h.csum_start >= len || at + 2 > len)
				return -1;
			c = (uint16_t)~tun_csum_fold(tun_csum_add(0, s + h.csum_start,
								  len - h.csum_start));
			put16(s + at, c == 0 ? 0xffff : c); /* RFC 768: 0 means none */
		}
		lens[0] = len;
		return 1;
	}
	/* TCP segmentation: TCPV4 / TCPV6 only (the offloads offered) */
	if (v6) {
		if (len < 40 || pkt[6] != 6 ||
		    (h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_TCPV6)
			return -1;
		iphl = 40;
	} else {
		iphl = (size_t)(pkt[0] & 15) * 4;
		if (iphl < 20 || len < iphl || pkt[9] != 6 ||
		    (h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_TCPV4)
			return -1;
		id0 = tw_load_be16(pkt + 4);
	}
	if (len < iphl + 20)
		return -1;
	hdr = iphl + (size_t)(pkt[iphl + 12] >> 4) * 4;
	mss = h.gso_size;
	if (hdr < iphl + 20 || hdr > len || mss == 0 ||
	    hdr + mss > TUN_SLOT - TUN_SLOT_HEAD - 64)
		return -1;
	payload = len - hdr;
	n = payload == 0 ? 1 : (payload + mss - 1) / mss;
	if (n > max_segs)
		return -1;
	seq0 = tw_load_be32(pkt + iphl + 4);
	for (size_t i = 0; i < n; i++) {
		uint8_t *s = slots + i * TUN_SLOT + TUN_SLOT_HEAD, *tcp = s + iphl;
		size_t off = i * mss, chunk = payload - off < mss ? payload - off : mss;
		size_t tl = hdr - iphl + chunk;

		memcpy(s, pkt, hdr);
		memcpy(s + hdr, pkt + hdr + off, chunk);
		if (v6) {
			tw_store_be16(s + 4, (uint16_t)tl);
		} else {
			tw_store_be16(s + 2, (uint16_t)(hdr + chunk));
			tw_store_be16(s + 4, (uint16_t)(id0 + i));
			ip4_csum(s, iphl);
		}
		tw_store_be32(tcp + 4, seq0 + (uint32_t)off);
		if (i + 1 < n)
			tcp[13] &= (uint8_t)~0x09; /* FIN, PSH: last segment only */
		if (i > 0)
			tcp[13] &= (uint8_t)~0x80; /* CWR: first only */
		tcp[16] = tcp[17] = 0;
		put16(tcp + 16, (uint16_t)~tun_csum_fold(
					tun_csum_add(pseudo(s, v6, 6, tl), tcp, tl)));
		lens[i] = hdr + chunk;
	}
	return (int)n;
}

/* ---- joining ---- */

/* TCP header offset of a joinable packet (IPv4 without options or IPv6
 * without extension headers, TCP with ACK and at most PSH besides, and a
 * payload), else 0. */
static size_t joinable(const uint8_t *p, size_t len, bool *v6, size_t *hdr)
{
	size_t iphl;

	if (len < 40)
		return 0;
	if ((p[0] >> 4) == 4) {
		if (p[0] != 0x45 || p[9] != 6 || tw_load_be16(p + 2) != len ||
		    (tw_load_be16(p + 6) & 0x3fff) != 0) /* MF or an offset */
			return 0;
		iphl = 20;
		*v6 = false;
	} else if ((p[0] >> 4) == 6) {
		if (len < 60 || p[6] != 6 || tw_load_be16(p + 4) + 40u != len)
			return 0;
		iphl = 40;
		*v6 = true;
	} else {
		return 0;
	}
	*hdr = iphl + (size_t)(p[iphl + 12] >> 4) * 4;
	if (*hdr < iphl + 20 || *hdr >= len)
		return 0;
	if ((p[iphl + 13] & ~0x08) != 0x10) /* ACK, maybe PSH; nothing else */
		return 0;
	return iphl;
}

/* Same flow and same fields but the length, id, checksums, sequence. */
static bool same_stream(const uint8_t *a, const uint8_t *b, size_t iphl, size_t hdr, bool v6)
{
	const uint8_t *ta = a + iphl, *tb = b + iphl;

	if (v6) {
		if (memcmp(a, b, 4) != 0 || a[7] != b[7] || memcmp(a + 8, b + 8, 32) != 0)
			return false;
	} else {
		if (a[1] != b[1] || a[6] != b[6] || a[8] != b[8] ||
		    memcmp(a + 12, b + 12, 8) != 0)
			return false;
	}
	/* ports, ack, data offset; window; urgent pointer; options */
	return memcmp(ta, tb, 4) == 0 && memcmp(ta + 8, tb + 8, 5) == 0 &&
	       memcmp(ta + 14, tb + 14, 2) == 0 && memcmp(ta + 18, tb + 18, hdr - iphl - 18) == 0;
}

bool tun_join_add(struct tun_join *j, uint8_t *pkt, size_t len)
{
	size_t iphl, hdr, plen;
	bool v6 = false;

	iphl = joinable(pkt, len, &v6, &hdr);
	if (j->count == 0) {
		j->iov[0].iov_base = j->vh;
		j->iov[0].iov_len = sizeof(j->vh);
		j->iov[1].iov_base = pkt;
		j->iov[1].iov_len = len;
		j->niov = 2;
		j->first = pkt;
		j->count = 1;
		j->total = len;
		j->v6 = v6;
		/* a packet that cannot be joined is written as it is, alone */
		j->open = iphl != 0 && !(pkt[iphl + 13] & 0x08); /* PSH ends it */
		j->hdr_len = iphl != 0 ? hdr : 0;
		j->seg_len = iphl != 0 ? len - hdr : 0;
		if (iphl != 0)
			j->next_seq = tw_load_be32(pkt + iphl + 4) + (uint32_t)j->seg_len;
		return true;
	}
	if (!j->open)
		return false;
	if (iphl == 0 || v6 != j->v6 || hdr != j->hdr_len ||
	    j->niov >= TUN_BATCH + 1 || tw_load_be32(pkt + iphl + 4) != j->next_seq)
		return false;
	plen = len - hdr;
	if (plen > j->seg_len || j->total + plen > 65535 ||
	    !same_stream(j->first, pkt, iphl, hdr, v6))
		return false;
	j->iov[j->niov].iov_base = pkt + hdr;
	j->iov[j->niov].iov_len = plen;
	j->niov++;
	j->count++;
	j->total += plen;
	j->next_seq += (uint32_t)plen;
	if (pkt[iphl + 13] & 0x08) {
		j->first[iphl + 13] |= 0x08;
		j->open = false;
	}
	if (plen < j->seg_len)
		j->open = false;
	return true;
}

void tun_join_finish(struct tun_join *j)
{
	struct virtio_net_hdr h;
	size_t iphl = j->v6 ? 40 : 20;
	uint8_t *p = j->first;

	memset(&h, 0, sizeof(h));
	if (j->count > 1) {
		if (j->v6) {
			tw_store_be16(p + 4, (uint16_t)(j->total - 40));
		} else {
			tw_store_be16(p + 2, (uint16_t)j->total);
			ip4_csum(p, 20);
		}
		p[iphl + 16] = p[iphl + 17] = 0;
		put16(p + iphl + 16, tun_csum_fold(pseudo(p, j->v6, 6, j->total - iphl)));
		h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h.gso_type = j->v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
		h.hdr_len = (uint16_t)j->hdr_len;
		h.gso_size = (uint16_t)j->seg_len;
		h.csum_start = (uint16_t)iphl;
		h.csum_offset = 16;
	}
	memcpy(j->vh, &h, sizeof(h));
}
