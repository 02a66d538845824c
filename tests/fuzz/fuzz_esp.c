/*
 * Fuzz target: the ESP (RFC 4303) and AH (RFC 4302) decoders. The first
 * input octet picks an SA (transform, ESN, mode) with fixed keys; the rest
 * is the packet handed to tw_esp_decap / tw_ah_decap. Invariants: no
 * crash or overread, a success describes a payload inside the packet, a
 * failure before the ICV verified leaves the window where it was; the
 * batch decoder, given the packet twice, answers as two single calls do
 * (statuses, views, window); and, as an encoder check, the same octets
 * encapsulated as a payload must decapsulate back to themselves.
 *
 * With the first octet's top bits 01, the next 7 octets make an SA
 * configuration instead (cipher, integrity, key and ICV lengths from short
 * lists around the allowed ones, mode, ESN, replay window): tw_esp_sa_init
 * must accept exactly what esp.h and RFCs 4303, 3602, 2451, 4106, 2404,
 * 4868 and 2403 allow, and an accepted SA must carry the rest of the input
 * there and back, alone and in batches, refuse a replayed packet, stop
 * when its counter would cycle (§3.3.3), and keep the anti-replay window
 * of §3.4.3 and Appendix A (check_replay) over sequence numbers the input
 * picks; the rest of the input is also looked up as a transform name.
 */
#include <stdbool.h>
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

static const uint8_t key[64] = {
	0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c,
	0x4d, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
	0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
	0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73,
	0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
};

/* What esp.h and the RFCs allow (sa_init's rules, restated). */
static bool config_ok(const struct tw_esp_config *c)
{
	size_t ek = c->enc_key_len, ak = c->auth_key_len;

	/* §2.2.1: the inferred ESN high half is confirmed only by an ICV */
	if (c->esn && c->integ == TW_ESP_AUTH_NONE &&
	    (c->cipher == TW_ESP_ENC_AES_CBC || c->cipher == TW_ESP_ENC_3DES_CBC))
		return false;
	if (c->spi == 0 || c->mode > TW_ESP_TUNNEL ||
	    (c->replay_window != 0 &&
	     (c->replay_window < TW_REPLAY_WINDOW_MIN || c->replay_window > TW_REPLAY_WINDOW_MAX)))
		return false;
	switch (c->cipher) {
	case TW_ESP_ENC_NULL: /* RFC 4303 §3.2: not with no integrity */
		if ((c->integ == TW_ESP_AUTH_NONE && !c->allow_null_null) || ek != 0)
			return false;
		break;
	case TW_ESP_ENC_AES_CBC: /* RFC 3602 */
		if (ek != 16 && ek != 32)
			return false;
		break;
	case TW_ESP_ENC_3DES_CBC: /* RFC 2451 */
		if (ek != 24)
			return false;
		break;
	case TW_ESP_ENC_AES_GCM: /* RFC 4106 §8.1, §6: ICV 8, 12 or 16 */
		return c->integ == TW_ESP_AUTH_NONE && (ek == 20 || ek == 36) &&
		       (c->icv_len == 0 || c->icv_len == 8 || c->icv_len == 12 ||
			c->icv_len == 16) &&
		       ak == 0;
	default:
		return false;
	}
	switch (c->integ) {
	case TW_ESP_AUTH_NONE:
		return ak == 0;
	case TW_ESP_AUTH_HMAC_SHA1_96: /* RFC 2404 */
		return ak == 20;
	case TW_ESP_AUTH_HMAC_SHA256_128: /* RFC 4868 */
		return ak == 32;
	case TW_ESP_AUTH_HMAC_MD5_96: /* RFC 2403 */
		return ak == 16;
	default:
		return false;
	}
}

/*
 * The anti-replay window (RFC 4303 §3.4.3, Appendix A): up to 8 packets
 * with sequence numbers from the input (a base, then offsets), sent in
 * that order by an SA whose counter is set before each, received by a
 * fresh one. A packet is accepted exactly when it is new (above the
 * highest yet, or inside the window and not seen) and, with ESN, its
 * upper 32 bits are the ones Appendix A infers: it lies in
 * [top - W + 1, top - W + 2^32]. Sequence number 0 is never sent.
 */
static void check_replay(const struct tw_esp_config *c, const uint8_t *d, size_t n)
{
	static const uint64_t bases[4] = { 0, 1000, 0xffffffffULL - 40, 0xffffffffULL - 300 };
	static const uint8_t ip4[28] = { 0x45, 0, 0, 28, 0, 0, 0x40, 0, 0x40, 17, 0, 0,
					 192, 0, 2, 1, 192, 0, 2, 2, 0, 53, 0, 53, 0, 8 };
	static uint8_t out[256];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	uint64_t seen[8], top = 0, base, w;
	unsigned n_seen = 0;
	size_t len;

	/* the NULL/NULL baseline with ESN has no ICV to confirm the
	 * inferred high half: not for the wire, no window to model */
	if (n < 2 || (c->esn && c->integ == TW_ESP_AUTH_NONE && c->cipher != TW_ESP_ENC_AES_GCM))
		return;
	if (tw_esp_sa_init(&tx, c) != TW_OK || tw_esp_sa_init(&rx, c) != TW_OK)
		abort();
	w = rx.replay.window;
	base = bases[d[0] % 4];
	for (size_t i = 1; i < n && i <= 8; i++) {
		uint64_t seq = base + 1 + (uint64_t)d[i] * (d[0] & 4 ? 16 : 1);
		bool fresh, ok;

		if (!c->esn && seq > 0xffffffffULL)
			continue; /* beyond a 32-bit counter */
		tx.seq_out = seq - 1;
		if (tw_esp_encap(&tx, c->mode == TW_ESP_TUNNEL ? 0 : 17, ip4, sizeof(ip4), out,
				 sizeof(out), &len) != TW_OK)
			abort();
		fresh = seq > top;
		if (!fresh && top - seq < w) {
			fresh = true;
			for (unsigned k = 0; k < n_seen; k++)
				fresh &= seen[k] != seq;
		}
		ok = fresh;
		if (c->esn)
			ok = ok && seq + w >= top + 1 && seq + w < top + 1 + (1ULL << 32);
		if ((tw_esp_decap(&rx, out, len, &v) == TW_OK) != ok || (ok && v.seq != seq))
			abort();
		if (ok) {
			seen[n_seen++] = seq;
			if (seq > top)
				top = seq;
			if (rx.replay.top != top)
				abort();
		}
	}
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);
}

/*
 * An SA from 7 octets of input (cipher, integrity, key and ICV lengths
 * from short lists around the allowed ones, mode, ESN, window), checked
 * against config_ok; an accepted one must carry the payload there and
 * back, alone and in batches, and refuse a replay the same way both ways.
 */
static void check_config(const uint8_t *d, size_t size)
{
	static const size_t ek[8] = { 0, 16, 20, 24, 32, 36, 8, 40 },
			    ak[8] = { 0, 16, 20, 32, 12, 64, 16, 20 };
	static const uint32_t icv[8] = { 0, 8, 12, 16, 0, 16, 4, 24 },
			      win[8] = { 0, 32, 64, 4096, 31, 4097, 1000, 100 };
	static uint8_t out[2][1024 + 128], again[1024 + 128];
	struct tw_esp_config c;
	struct tw_esp_sa tx, rx, tx2, rx2;
	struct tw_esp_pkt p[2];
	struct tw_esp_view v;
	size_t n = 0, plen;
	const uint8_t *payload;
	int rc;

	if (size < 7 || size - 7 > 1024)
		return;
	memset(&c, 0, sizeof(c));
	c.cipher = d[0] % 5;
	c.integ = d[1] % 5;
	c.enc_key = key;
	c.enc_key_len = ek[d[2] % 8];
	c.auth_key = key + 24;
	c.auth_key_len = ak[d[3] % 8];
	c.icv_len = icv[d[4] % 8];
	c.mode = d[5] & 1 ? TW_ESP_TUNNEL : TW_ESP_TRANSPORT;
	if (d[5] & 16)
		c.mode = 2;
	c.esn = d[5] & 2;
	c.allow_null_null = d[5] & 4;
	c.spi = d[5] & 8 ? 0 : 0x3000;
	c.replay_window = win[d[6] % 8];
	payload = d + 7;
	plen = size - 7;

	rc = tw_esp_sa_init(&tx, &c);
	if ((rc == TW_OK) != config_ok(&c))
		abort();
	if (rc != TW_OK)
		return;
	if (tw_esp_sa_init(&rx, &c) != TW_OK || tw_esp_sa_init(&tx2, &c) != TW_OK ||
	    tw_esp_sa_init(&rx2, &c) != TW_OK)
		abort();
	rc = tw_esp_encap(&tx, c.mode == TW_ESP_TUNNEL ? 0 : 17, payload, plen, out[0],
			  sizeof(out[0]), &n);
	if (rc != TW_OK) {
		if (c.mode != TW_ESP_TUNNEL)
			abort(); /* transport mode takes any payload that fits */
		goto out;
	}
	memcpy(again, out[0], n);
	if (tw_esp_decap(&rx, out[0], n, &v) != TW_OK || v.len != plen || v.seq != 1 ||
	    memcmp(out[0] + v.off, payload, plen) != 0)
		abort();
	/* the same packet again: a replay (RFC 4303 §3.4.3) */
	if (tw_esp_decap(&rx, again, n, &v) == TW_OK)
		abort();
	/* two payloads in one batch, then both packets and a replay */
	memset(p, 0, sizeof(p));
	for (int i = 0; i < 2; i++) {
		p[i].sa = &tx2;
		p[i].buf = out[i];
		p[i].cap = sizeof(out[i]);
		p[i].len = plen;
		p[i].next_header = c.mode == TW_ESP_TUNNEL ? 0 : 17;
		memcpy(out[i] + tw_esp_hdr_len(&tx2), payload, plen);
	}
	if (tw_esp_encap_batch(p, 2) != TW_OK)
		abort();
	for (int i = 0; i < 2; i++) {
		p[i].sa = &rx2;
		p[i].status = 0;
	}
	if (tw_esp_decap_batch(p, 2) != TW_OK)
		abort();
	for (int i = 0; i < 2; i++)
		if (p[i].view.seq != (uint64_t)i + 1 || p[i].view.len != plen ||
		    memcmp(out[i] + p[i].view.off, payload, plen) != 0)
			abort();
	/* RFC 4303 §3.3.3: a counter that would cycle stops the SA */
	tx.seq_out = c.esn ? UINT64_MAX : 0xffffffffULL;
	if (tw_esp_encap(&tx, c.mode == TW_ESP_TUNNEL ? 0 : 17, payload, plen, out[0],
			 sizeof(out[0]), &n) != TW_ERR_STATE)
		abort();
	check_replay(&c, payload, plen);
	/* the rest of the input as a transform name: found exactly when it
	 * is one of the names esp.h lists */
	{
		static const char *const all[] = {
			"aes-gcm-128", "aes-gcm-256", "aes-cbc-128-hmac-sha1",
			"aes-cbc-256-hmac-sha1", "aes-cbc-128-hmac-sha256",
			"aes-cbc-256-hmac-sha256", "3des-cbc-hmac-sha1", "aes-cbc-128-hmac-md5",
			"null-hmac-sha1", "null-hmac-md5", "null",
		};
		char name[32];
		struct tw_esp_config t;
		size_t k = plen < sizeof(name) - 1 ? plen : sizeof(name) - 1;
		bool known = false;

		memcpy(name, payload, k);
		name[k] = '\0';
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			known |= strcmp(name, all[i]) == 0;
		rc = tw_esp_transform(name, &t);
		if (rc != (known ? TW_OK : TW_ERR_NOTFOUND))
			abort();
	}
out:
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);
	tw_esp_sa_wipe(&tx2);
	tw_esp_sa_wipe(&rx2);
}

/* tw_esp_decap_batch of the packet, twice in one batch, gives what two
 * tw_esp_decap calls give: the same statuses, views and window. */
static void check_decap_batch(unsigned sel, const uint8_t *d, size_t len)
{
	static uint8_t one[2][4096], many[2][4096];
	struct tw_esp_sa a, b;
	struct tw_esp_pkt p[2];
	struct tw_esp_view v[2];
	int st[2];

	sa_make(&a, sel);
	sa_make(&b, sel);
	memset(p, 0, sizeof(p));
	for (int i = 0; i < 2; i++) {
		memcpy(one[i], d, len);
		memcpy(many[i], d, len);
		memset(&v[i], 0, sizeof(v[i]));
		st[i] = tw_esp_decap(&a, one[i], len, &v[i]);
		p[i].sa = &b;
		p[i].buf = many[i];
		p[i].len = len;
		p[i].cap = sizeof(many[i]);
	}
	/* TW_OK, or the status of the first that failed (esp.h) */
	if (tw_esp_decap_batch(p, 2) != (st[0] != TW_OK ? st[0] : st[1]))
		abort();
	for (int i = 0; i < 2; i++) {
		if (p[i].status != st[i])
			abort();
		if (st[i] == TW_OK && (p[i].view.off != v[i].off || p[i].view.len != v[i].len ||
				       p[i].view.seq != v[i].seq ||
				       p[i].view.next_header != v[i].next_header ||
				       memcmp(many[i], one[i], len) != 0))
			abort();
	}
	if (a.replay.top != b.replay.top ||
	    memcmp(a.replay.bitmap, b.replay.bitmap, sizeof(a.replay.bitmap)) != 0)
		abort();
	tw_esp_sa_wipe(&a);
	tw_esp_sa_wipe(&b);
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

	if ((sel & 0xc0) == 0x40) {
		check_config(data + 1, len);
		return 0;
	}

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
	check_decap_batch(sel, data + 1, len);

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
