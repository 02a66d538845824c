/* The RADIUS/TLS stream framer (src/server/radsec_frame.c; RFC 6614 §2.5,
 * RFC 6613 §2.6.4): packets back to back, split at every octet and
 * arriving whole, several in one read, Length 20 and 4096 exactly, Length
 * 19, 0 and 4097 (the stream in error, for good), and the room the
 * framer gives never letting a packet overrun its buffer. */
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "twag/bytes.h"
#include "../../src/server/radsec.h"

static struct tw_radsec_rx rx;

/* A packet of len octets (len >= 4): Code, Identifier id, Length, then
 * octets that tell packets apart. */
static void packet(uint8_t *p, size_t len, uint8_t id)
{
	p[0] = 1;
	p[1] = id;
	tw_store_be16(p + 2, (uint16_t)len);
	for (size_t i = 4; i < len; i++)
		p[i] = (uint8_t)(id * 31 + i);
}

/* Feeds s[0..n) in pieces of `step` octets (0: as much as there is room
 * for), taking out every whole packet; returns how many came out, each
 * checked against the stream; *err is the last error. */
static int feed(const uint8_t *s, size_t n, size_t step, int *err)
{
	size_t pos = 0, out = 0;
	int got = 0;

	*err = TW_OK;
	tw_radsec_rx_init(&rx);
	for (;;) {
		const uint8_t *pkt;
		size_t len, room;
		uint8_t *space;
		int rc = tw_radsec_rx_next(&rx, &pkt, &len);

		if (rc != TW_OK) {
			*err = rc;
			return got;
		}
		if (len > 0) {
			CHECK(out + len <= n && memcmp(pkt, s + out, len) == 0);
			out += len;
			got++;
			continue;
		}
		if (pos == n)
			break;
		space = tw_radsec_rx_space(&rx, &room);
		if (room == 0) {
			CHECK(room > 0); /* never stuck without room */
			break;
		}
		size_t k = step == 0 || step > room ? room : step;

		if (k > n - pos)
			k = n - pos;
		memcpy(space, s + pos, k);
		tw_radsec_rx_got(&rx, k);
		pos += k;
	}
	CHECK(tw_radsec_rx_pending(&rx) == n - out);
	return got;
}

void test_main(void)
{
	static uint8_t s[5 * TW_RADIUS_MAX_LEN];
	size_t lens[] = { 20, 4096, 38, 21, 4095, 20, 300 }, n = 0;
	int err;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		packet(s + n, lens[i], (uint8_t)i);
		n += lens[i];
	}
	/* every piece size from 1 to 50, then a few large ones */
	for (size_t step = 1; step <= 50; step++)
		CHECK(feed(s, n, step, &err) == 7 && err == TW_OK);
	CHECK(feed(s, n, 0, &err) == 7 && err == TW_OK);
	CHECK(feed(s, n, 4095, &err) == 7 && err == TW_OK);
	CHECK(feed(s, n, 4097, &err) == 7 && err == TW_OK);

	/* a partial packet at the end stays pending, not returned */
	CHECK(feed(s, 20 + 4096 + 10, 7, &err) == 2 && err == TW_OK);
	CHECK(feed(s, 3, 1, &err) == 0 && err == TW_OK);

	/* Length out of range, after a good packet: the good one comes out,
	 * then the error, and it stays */
	for (unsigned bad = 0; bad < 4; bad++) {
		static const uint16_t blen[4] = { 19, 0, 4097, 0xffff };
		const uint8_t *pkt;
		size_t len, room;

		packet(s, 20, 1);
		s[20] = 1;
		s[21] = 2;
		tw_store_be16(s + 22, blen[bad]);
		memset(s + 24, 0, 100);
		CHECK(feed(s, 124, 5, &err) == 1 && err == TW_ERR_DECODE);
		CHECK(tw_radsec_rx_next(&rx, &pkt, &len) == TW_ERR_DECODE && len == 0);
		(void)tw_radsec_rx_space(&rx, &room);
		CHECK(room == 0);
	}
	/* the Length is judged as soon as its 4 octets are in: one octet of
	 * a header is not an error yet */
	{
		const uint8_t *pkt;
		size_t len, room;
		uint8_t *sp;

		tw_radsec_rx_init(&rx);
		sp = tw_radsec_rx_space(&rx, &room);
		CHECK(room == TW_RADIUS_MAX_LEN);
		sp[0] = 1;
		sp[1] = 1;
		sp[2] = 0;
		tw_radsec_rx_got(&rx, 3);
		CHECK(tw_radsec_rx_next(&rx, &pkt, &len) == TW_OK && len == 0);
		sp = tw_radsec_rx_space(&rx, &room);
		sp[0] = 10;
		tw_radsec_rx_got(&rx, 1);
		CHECK(tw_radsec_rx_next(&rx, &pkt, &len) == TW_ERR_DECODE);
	}
}
