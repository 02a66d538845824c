/*
 * Fuzz target: the RADIUS/TLS stream framer (src/server/radsec_frame.c;
 * RFC 6614 §2.5, RFC 6613 §2.6.4).
 *
 * The input's first octet picks how the stream is cut into reads (piece
 * sizes from a small generator seeded by it); the rest is the stream. The
 * packets that come out must be exactly those a plain walk over the stream
 * finds (each Length in 20..4096, back to back, in order, with the same
 * octets), the error must come exactly where that walk meets a Length out
 * of range, a stream in error must stay so, and the framer must always
 * have room while no packet is whole (never stuck, never overrun).
 *
 * Seeds (tests/fuzz/corpus/radsec_frame/): several packets back to back,
 * a 4096-octet packet, Length 19 and 4097 after a good packet, a partial
 * packet at the end, an empty stream.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/bytes.h"
#include "../../src/server/radsec.h"
#include "fuzz_must.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct tw_radsec_rx rx;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const uint8_t *s;
	size_t n, pos = 0, walk = 0, outs = 0;
	uint32_t g;
	bool walk_bad = false;

	if (size < 1)
		return 0;
	g = data[0] * 2654435761u + 1;
	s = data + 1;
	n = size - 1;
	tw_radsec_rx_init(&rx);
	for (;;) {
		const uint8_t *pkt;
		size_t len, room, k;
		uint8_t *space;
		int rc = tw_radsec_rx_next(&rx, &pkt, &len);

		/* the model: the next packet from walk, if whole */
		size_t mlen = 0;
		bool mbad = false;

		if (!walk_bad && pos - walk >= 4) {
			mlen = tw_load_be16(s + walk + 2);
			if (mlen < 20 || mlen > 4096)
				mbad = true;
			else if (pos - walk < mlen)
				mlen = 0;
		}
		if (walk_bad) {
			MUST(rc == TW_ERR_DECODE);
			break;
		}
		if (mbad) {
			MUST(rc == TW_ERR_DECODE && len == 0);
			walk_bad = true;
			/* stays in error */
			MUST(tw_radsec_rx_next(&rx, &pkt, &len) == TW_ERR_DECODE);
			(void)tw_radsec_rx_space(&rx, &room);
			MUST(room == 0);
			break;
		}
		MUST(rc == TW_OK);
		MUST(len == mlen);
		if (len > 0) {
			MUST(pkt != NULL && memcmp(pkt, s + walk, len) == 0);
			walk += len;
			outs++;
			continue;
		}
		MUST(tw_radsec_rx_pending(&rx) == pos - walk);
		if (pos == n)
			break;
		space = tw_radsec_rx_space(&rx, &room);
		MUST(room > 0 && room <= TW_RADIUS_MAX_LEN);
		g = g * 1103515245u + 12345u;
		k = 1 + (g >> 16) % (g & 0x100 ? 4200 : 40);
		if (k > room)
			k = room;
		if (k > n - pos)
			k = n - pos;
		memcpy(space, s + pos, k);
		tw_radsec_rx_got(&rx, k);
		pos += k;
	}
	(void)outs;
	return 0;
}
