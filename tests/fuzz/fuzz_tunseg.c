/*
 * Fuzz target: twag-tunnel's TCP segmentation and joining (tools/tunnel/
 * seg.c), which see what the local stack hands the TUN device and what an
 * authenticated peer put inside its ESP packets.
 *
 * First octet even: the rest is a virtio-net header (10 octets) and a
 * packet for tun_segment. Invariants: no crash or overread; a segment fits
 * its slot; for a TCP GSO packet the segments carry the payload in order
 * and whole, each with a valid IPv4 header checksum (IPv4) and a valid TCP
 * checksum, both recomputed here by a plain big-endian RFC 1071 sum.
 *
 * First octet odd: the rest is a sequence of packets (two length octets,
 * then the packet) fed to tun_join_add with the flush protocol of dp.c.
 * Invariants: each write's octets add up to its total; a joined write (two
 * or more packets) is the first packet's headers followed by the others'
 * payloads in order, its IP length field equals the total, and its GSO
 * header names the first payload's length as the segment size.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../tools/tunnel/tunnel.h"
#include "fuzz_must.h"
#include "twag/bytes.h"

static uint8_t slots[TUN_BATCH * TUN_SLOT];
static size_t lens[TUN_BATCH];

static uint32_t be_sum(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void check_segments(const uint8_t *vh, const uint8_t *pkt, size_t len, int n)
{
	bool v6 = (pkt[0] >> 4) == 6;
	size_t iphl = v6 ? 40 : (size_t)(pkt[0] & 15) * 4;
	size_t hdr = iphl + (size_t)(pkt[iphl + 12] >> 4) * 4, off = 0;

	(void)vh;
	for (int i = 0; i < n; i++) {
		const uint8_t *s = slots + (size_t)i * TUN_SLOT + TUN_SLOT_HEAD;
		size_t l = lens[i], tl = l - iphl;
		uint32_t ps;

		MUST(l >= hdr && l <= TUN_SLOT - TUN_SLOT_HEAD);
		MUST(memcmp(s + hdr, pkt + hdr + off, l - hdr) == 0);
		off += l - hdr;
		if (!v6) {
			MUST(tw_load_be16(s + 2) == l);
			MUST(fold(be_sum(0, s, iphl)) == 0xffff);
			ps = be_sum(0, s + 12, 8) + 6 + (uint32_t)tl;
		} else {
			MUST(tw_load_be16(s + 4) == tl);
			ps = be_sum(0, s + 8, 32) + 6 + (uint32_t)(tl >> 16) + (uint32_t)(tl & 0xffff);
		}
		MUST(fold(be_sum(ps, s + iphl, tl)) == 0xffff);
		MUST(tw_load_be32(s + iphl + 4) == tw_load_be32(pkt + iphl + 4) + (uint32_t)(off - (l - hdr)));
	}
	MUST(off == len - hdr);
}

static void segment(const uint8_t *d, size_t n)
{
	uint8_t buf[65536 + 64];
	int segs;

	if (n < TUN_VNET_HDR || n - TUN_VNET_HDR > sizeof(buf))
		return;
	memcpy(buf, d + TUN_VNET_HDR, n - TUN_VNET_HDR);
	segs = tun_segment(d, buf, n - TUN_VNET_HDR, slots, TUN_BATCH, lens);
	MUST(segs <= TUN_BATCH);
	if (segs <= 0)
		return;
	if ((d[1] & 0x7f) == 0) { /* no GSO: one copy */
		MUST(segs == 1 && lens[0] == n - TUN_VNET_HDR);
		return;
	}
	check_segments(d, buf, n - TUN_VNET_HDR, segs);
}

static void check_write(struct tun_join *j)
{
	size_t total = 0;

	tun_join_finish(j);
	for (unsigned i = 1; i < j->niov; i++)
		total += j->iov[i].iov_len;
	MUST(total == j->total);
	MUST(j->iov[0].iov_len == TUN_VNET_HDR);
	if (j->count > 1) {
		const uint8_t *p = j->first;
		uint16_t gso_size;

		MUST(j->niov == j->count + 1);
		MUST(j->iov[1].iov_len == j->hdr_len + j->seg_len);
		if (j->v6)
			MUST(tw_load_be16(p + 4) + 40u == total);
		else
			MUST(tw_load_be16(p + 2) == total && fold(be_sum(0, p, 20)) == 0xffff);
		memcpy(&gso_size, j->vh + 4, 2);
		MUST(gso_size == j->seg_len);
		for (unsigned i = 2; i < j->niov; i++)
			MUST(j->iov[i].iov_len <= j->seg_len && j->iov[i].iov_len > 0);
	}
	j->count = 0;
}

static void join(const uint8_t *d, size_t n)
{
	static uint8_t pkts[TUN_BATCH][2048];
	struct tun_join j;
	unsigned k = 0;

	memset(&j, 0, sizeof(j));
	while (n >= 2 && k < TUN_BATCH) {
		size_t l = (size_t)(d[0] << 8 | d[1]) % 2048;

		d += 2;
		n -= 2;
		if (l > n)
			l = n;
		memcpy(pkts[k], d, l);
		if (!tun_join_add(&j, pkts[k], l)) {
			check_write(&j);
			MUST(tun_join_add(&j, pkts[k], l));
		}
		d += l;
		n -= l;
		k++;
	}
	if (j.count > 0)
		check_write(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1)
		return 0;
	if (d[0] & 1)
		join(d + 1, n - 1);
	else
		segment(d + 1, n - 1);
	return 0;
}
