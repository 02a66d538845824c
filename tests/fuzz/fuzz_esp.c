/*
 * Fuzz target: the ESP (RFC 4303) and AH (RFC 4302) decoders. The first
 * input octet picks an SA (transform, ESN, mode) with fixed keys; the rest
 * is the packet handed to tw_esp_decap / tw_ah_decap. Invariants: no
 * crash or overread, a success describes a payload inside the packet, a
 * failure before the ICV verified leaves the window where it was; and, as an encoder check, the
 * same octets encapsulated as a payload must decapsulate back to
 * themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/esp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char *const names[] = {
	"aes-gcm-128", "aes-cbc-128-hmac-sha1", "3des-cbc-hmac-sha1",
	"null-hmac-md5", "aes-cbc-256-hmac-sha256", "null",
};

static void sa_make(struct tw_esp_sa *sa, unsigned sel)
{
	static const uint8_t key[64] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
		0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
		0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20,
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	};
	struct tw_esp_config c;

	memset(&c, 0, sizeof(c));
	if (tw_esp_transform(names[sel % 6], &c) != TW_OK)
		abort();
	c.spi = 0x1000 + sel % 6;
	c.enc_key = key;
	c.auth_key = key + 8;
	c.esn = (sel / 6) & 1;
	c.mode = (sel / 12) & 1 ? TW_ESP_TUNNEL : TW_ESP_TRANSPORT;
	if (tw_esp_sa_init(sa, &c) != TW_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static uint8_t pkt[4096], out[4096 + 128];
	struct tw_esp_sa sa, tx;
	struct tw_esp_view v;
	size_t n;

	if (size < 1 || size - 1 > sizeof(pkt))
		return 0;
	unsigned sel = data[0];
	size_t len = size - 1;

	if (sel & 0x80) {
		/* AH over IPv4 */
		static const uint8_t akey[20] = { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
						  7, 7, 7, 7, 7, 7, 7, 7, 7, 7 };
		struct tw_esp_config c;
		struct tw_ah_sa ah;
		uint64_t seq;

		memset(&c, 0, sizeof(c));
		c.spi = 0x2000;
		c.integ = (sel & 1) ? TW_ESP_AUTH_HMAC_MD5_96 : TW_ESP_AUTH_HMAC_SHA1_96;
		c.auth_key = akey;
		c.auth_key_len = (sel & 1) ? 16 : 20;
		c.esn = (sel >> 1) & 1;
		if (tw_ah_sa_init(&ah, &c) != TW_OK)
			abort();
		memcpy(pkt, data + 1, len);
		if (tw_ah_decap(&ah, pkt, len, &n, &seq) == TW_OK) {
			if (n + tw_ah_len(&ah) != len || ah.replay.top != seq)
				abort();
		} else if (memcmp(pkt, data + 1, len) != 0 || ah.replay.top != 0) {
			abort(); /* a failure changes nothing */
		}
		/* encoder: the input as an IPv4 packet (if it is one) */
		if (tw_ah_encap(&ah, data + 1, len, out, sizeof(out), &n) == TW_OK) {
			uint64_t s2;
			struct tw_ah_sa rx = ah;
			rx.replay.top = 0;
			memset(rx.replay.bitmap, 0, sizeof(rx.replay.bitmap));
			rx.replay.bitmap[0] = 1;
			if (tw_ah_decap(&rx, out, n, &n, &s2) != TW_OK || n != len)
				abort();
		}
		tw_ah_sa_wipe(&ah);
		return 0;
	}

	sa_make(&sa, sel);
	memcpy(pkt, data + 1, len);
	int derr = tw_esp_decap(&sa, pkt, len, &v);
	if (derr == TW_OK) {
		if (v.off + v.len > len || v.off != tw_esp_hdr_len(&sa) || v.seq == 0 ||
		    sa.replay.top != v.seq)
			abort();
	} else if (sa.replay.top != 0 && derr != TW_ERR_DECODE &&
		   derr != TW_ERR_UNSUPPORTED) {
		/* Only a packet whose ICV verified (a bad trailer after it)
		 * may have moved the window (RFC 4303 §3.4.3). */
		abort();
	}
	tw_esp_sa_wipe(&sa);

	/* Encoder round trip with the same SA parameters. */
	sa_make(&tx, sel);
	sa_make(&sa, sel);
	uint8_t nh = len ? data[1] : 6;
	int err = tw_esp_encap(&tx, sa.mode == TW_ESP_TUNNEL ? 0 : nh, data + 1, len,
			       out, sizeof(out), &n);
	if (err == TW_OK) {
		if (tw_esp_decap(&sa, out, n, &v) != TW_OK || v.len != len ||
		    memcmp(out + v.off, data + 1, len) != 0)
			abort();
	} else if (sa.mode != TW_ESP_TUNNEL) {
		abort(); /* transport mode takes any payload that fits */
	}
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&sa);
	return 0;
}
