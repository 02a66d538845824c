/*
 * twag — the RADIUS/TLS stream framer (RFC 6614, May 2012, §2.5; RFC
 * 6613, May 2012, §2.6.4; RFC 2865, June 2000, §3 Length). No I/O, no
 * allocation: the caller reads into the space it is given and takes
 * whole packets out.
 */
#include <string.h>

#include "twag/bytes.h"

#include "radsec.h"

void tw_radsec_rx_init(struct tw_radsec_rx *r)
{
	r->off = r->have = r->taken = 0;
	r->bad = false;
}

/* The packet last returned given up, and what follows it moved to the
 * front: a partial packet then always starts at buf[0] and, being
 * shorter than its Length (at most sizeof(buf)), leaves room. */
static void compact(struct tw_radsec_rx *r)
{
	r->off += r->taken;
	r->taken = 0;
	if (r->off == 0)
		return;
	memmove(r->buf, r->buf + r->off, r->have - r->off);
	r->have -= r->off;
	r->off = 0;
}

uint8_t *tw_radsec_rx_space(struct tw_radsec_rx *r, size_t *room)
{
	compact(r);
	*room = r->bad ? 0 : sizeof(r->buf) - r->have;
	return r->buf + r->have;
}

void tw_radsec_rx_got(struct tw_radsec_rx *r, size_t n)
{
	size_t room = sizeof(r->buf) - r->have;

	r->have += n <= room ? n : room;
}

int tw_radsec_rx_next(struct tw_radsec_rx *r, const uint8_t **pkt, size_t *len)
{
	size_t avail, plen;

	*len = 0;
	*pkt = NULL;
	if (r->bad)
		return TW_ERR_DECODE;
	r->off += r->taken;
	r->taken = 0;
	avail = r->have - r->off;
	/* RFC 2865 §3: Code, Identifier, then the 2-octet Length */
	if (avail < 4)
		return TW_OK;
	plen = tw_load_be16(r->buf + r->off + 2);
	/* checked before any use: the next packet starts plen octets on */
	if (plen < TW_RADIUS_MIN_LEN || plen > TW_RADIUS_MAX_LEN) {
		r->bad = true; /* nothing more comes out of this stream */
		return TW_ERR_DECODE;
	}
	if (avail < plen)
		return TW_OK;
	*pkt = r->buf + r->off;
	*len = plen;
	r->taken = plen;
	return TW_OK;
}

size_t tw_radsec_rx_pending(const struct tw_radsec_rx *r)
{
	return r->have - r->off - r->taken;
}
