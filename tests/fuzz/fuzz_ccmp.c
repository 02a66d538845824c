/*
 * Fuzz target: 802.11 CCMP/GCMP decapsulation (tw_ccmp_decap, and the
 * batch path on the same input). Input: one octet choosing the cipher
 * (low 2 bits: CCMP-128, CCMP-256, GCMP-128, GCMP-256), then the MPDU.
 * The keys are fixed (the IEEE 802.11 CCMP test MPDU 1 TK, doubled for
 * 256-bit ciphers) so seeds can be valid frames. Invariants: no crash or
 * overread; a success yields header || body of size - 8 - MIC octets and
 * moves the replay counter to the PN; the batch path agrees with the
 * single call; a failure leaves the counter alone. The same octets are
 * also an MPDU to encapsulate (check_encap; the selector's bit 2 starts
 * the PN at 2^48 - 2, bit 3 sets SPP A-MSDU, bits 4-7 are a small PN
 * start otherwise).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/ccmp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t tk[32] = {
	0xc9, 0x7c, 0x1f, 0x67, 0xce, 0x37, 0x11, 0x85, 0x51, 0x4a, 0x8a, 0x19, 0xf2, 0xbd, 0xd5, 0x2f,
	0xc9, 0x7c, 0x1f, 0x67, 0xce, 0x37, 0x11, 0x85, 0x51, 0x4a, 0x8a, 0x19, 0xf2, 0xbd, 0xd5, 0x2f,
};

/* d is frame (len >= 2) again with the Protected bit (FC bit 14) set */
static bool is_frame(const uint8_t *d, const uint8_t *frame, size_t len)
{
	return (d[1] & 0x40) != 0 && d[0] == frame[0] && (d[1] & ~0x40) == (frame[1] & ~0x40) &&
	       memcmp(d + 2, frame + 2, len - 2) == 0;
}

/*
 * The encapsulation side on the input as an MPDU (header || body): with a
 * key whose SPP A-MSDU flag and a PN start the selector picks, a frame
 * that encapsulates decapsulates back to itself with the Protected bit
 * set, once (then TW_ERR_REPLAY), not under another Key ID
 * (TW_ERR_NOTFOUND), nor with a bit of its body or MIC flipped
 * (TW_ERR_AUTH, with nothing of the plaintext left in out); the PN space
 * ends at 2^48 - 1 (TW_ERR_RANGE); and a batch of copies, each with its
 * own PN state, encapsulates to the same octets and decapsulates through
 * one receiver as the single calls do in turn (one accepted, the rest
 * replays).
 */
static void check_encap(unsigned sel, const struct tw_ccmp_key *key0, const uint8_t *frame,
			size_t len)
{
	static uint8_t enc[2100], dec[2100], bad[2100], many[9][2100], opened[9][2100];
	struct tw_ccmp_key key = *key0, other = *key0;
	struct tw_ccmp_tx tx, txs[9];
	struct tw_ccmp_rx rx, rx1;
	struct tw_ccmp_mpdu m[9];
	size_t el = 0, dl = 0, bl;
	unsigned n = 1 + (len ? frame[len - 1] : 0) % 9;
	uint64_t pn = 0, start = sel & 4 ? TW_CCMP_PN_MAX - 1 : sel >> 4;
	int rc;

	key.spp_amsdu = sel & 8;
	other.key_id = 3;
	tx.pn = start;
	rc = tw_ccmp_encap(&key, &tx, frame, len, enc, sizeof(enc), &el);
	/* the same through the batch, n copies each with its own PN state */
	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < n; i++) {
		txs[i].pn = start;
		m[i].key = &key;
		m[i].tx = &txs[i];
		m[i].in = frame;
		m[i].in_len = len;
		m[i].out = many[i];
		m[i].out_cap = sizeof(many[i]);
	}
	if (tw_ccmp_encap_batch(m, n) != rc)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (m[i].status != rc || (rc == TW_OK && (m[i].out_len != el || m[i].pn != tx.pn ||
							  memcmp(many[i], enc, el) != 0)))
			abort();
	if (rc != TW_OK)
		return;
	if (tx.pn != start + 1 || el != len + 8 + tw_ccmp_mic_len(&key))
		abort();
	tw_ccmp_rx_init(&rx);
	if (tw_ccmp_decap(&other, &rx, enc, el, dec, sizeof(dec), &dl, &pn) != TW_ERR_NOTFOUND ||
	    tw_ccmp_decap(&key, &rx, enc, el, dec, sizeof(dec), &dl, &pn) != TW_OK ||
	    pn != start + 1 || dl != len)
		abort();
	/* header || body again, with the Protected bit (FC bit 14) set */
	if ((dec[1] & 0x40) == 0 || dec[0] != frame[0] || (dec[1] & ~0x40) != (frame[1] & ~0x40) ||
	    memcmp(dec + 2, frame + 2, len - 2) != 0)
		abort();
	if (tw_ccmp_decap(&key, &rx, enc, el, dec, sizeof(dec), &dl, &pn) != TW_ERR_REPLAY)
		abort();
	/* the copies through one receiver: the first opens, the rest are
	 * replays of its PN */
	tw_ccmp_rx_init(&rx1);
	for (unsigned i = 0; i < n; i++) {
		m[i].rx = &rx1;
		m[i].in = many[i];
		m[i].in_len = el;
		m[i].out = opened[i];
		m[i].status = -1;
	}
	if (tw_ccmp_decap_batch(m, n) != (n > 1 ? TW_ERR_REPLAY : TW_OK))
		abort();
	for (unsigned i = 0; i < n; i++)
		if (m[i].status != (i == 0 ? TW_OK : TW_ERR_REPLAY) ||
		    (i == 0 && (m[i].out_len != len || memcmp(opened[0], dec, len) != 0)))
			abort();
	/* a flipped bit in the MIC's last octet or the body's last octet:
	 * refused, the counter unmoved, the body's place in out zero (the
	 * header's length from the batch call above) */
	size_t hdr = m[0].hdr_len, body = m[0].body_len;

	if (hdr + body != len)
		abort();
	for (int k = 0; k < 2; k++) {
		size_t at = k ? el - 1 : el - tw_ccmp_mic_len(&key) - 1;

		if (k == 0 && body == 0)
			continue;
		memcpy(bad, enc, el);
		bad[at] ^= 1;
		tw_ccmp_rx_init(&rx1);
		memset(dec, 0xa5, sizeof(dec));
		if (tw_ccmp_decap(&key, &rx1, bad, el, dec, sizeof(dec), &bl, NULL) != TW_ERR_AUTH ||
		    rx1.mic_failures != 1)
			abort();
		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			if (rx1.pn[i] != 0)
				abort();
		for (size_t i = hdr; i < len; i++)
			if (dec[i] != 0)
				abort();
	}
	/* in place (out = the frame's own buffer), and into an output that
	 * lies below the input: the same octets both ways; without a
	 * receiver (rx NULL) no replay check */
	{
		static uint8_t place[2][4200];
		struct tw_ccmp_tx t2 = { start };
		size_t l2 = 0;

		memcpy(place[0], frame, len);
		if (tw_ccmp_encap(&key, &t2, place[0], len, place[0], sizeof(place[0]), &l2) !=
			    TW_OK ||
		    l2 != el || memcmp(place[0], enc, el) != 0)
			abort();
		if (tw_ccmp_decap(&key, NULL, place[0], el, place[0], sizeof(place[0]), &l2,
				  NULL) != TW_OK ||
		    l2 != len || !is_frame(place[0], frame, len))
			abort();
		memcpy(place[1] + 2100, frame, len);
		t2.pn = start;
		if (tw_ccmp_encap(&key, &t2, place[1] + 2100, len, place[1], 2100, &l2) != TW_OK ||
		    l2 != el || memcmp(place[1], enc, el) != 0)
			abort();
		memcpy(place[1] + 2100, enc, el);
		if (tw_ccmp_decap(&key, NULL, place[1] + 2100, el, place[1], 2100, &l2, NULL) !=
			    TW_OK ||
		    l2 != len || !is_frame(place[1], frame, len) ||
		    tw_ccmp_decap(&other, NULL, enc, el, dec, sizeof(dec), &l2, NULL) !=
			    TW_ERR_NOTFOUND ||
		    tw_ccmp_decap(&key, NULL, enc, 10, dec, sizeof(dec), &l2, NULL) !=
			    TW_ERR_DECODE)
			abort();
		/* an output one octet short of header || body (or of the
		 * encapsulated frame) */
		t2.pn = start;
		if (tw_ccmp_decap(&key, NULL, enc, el, dec, len - 1, &l2, NULL) != TW_ERR_OVERFLOW ||
		    tw_ccmp_encap(&key, &t2, frame, len, place[0], el - 1, &l2) != TW_ERR_OVERFLOW ||
		    t2.pn != start)
			abort();
	}
	/* the end of the PN space: no frame after 2^48 - 1 */
	if (start == TW_CCMP_PN_MAX - 1 &&
	    tw_ccmp_encap(&key, &tx, frame, len, enc, sizeof(enc), &el) != TW_ERR_RANGE)
		abort();
}

/* NULL where a call takes a pointer, without the compiler seeing it */
static void *volatile nul;

/* The argument contract of ccmp.h, once: NULL pointers are TW_ERR_INVAL,
 * in the single calls and per MPDU of a batch (the others answered). */
static void check_contract(const struct tw_ccmp_key *key)
{
	static const uint8_t f[40] = { 0x08, 0x01, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				       13, 14, 15, 16, 17, 18, 0, 0, 0xaa, 0xaa, 3, 0, 0, 0 };
	static uint8_t o[2][128];
	const uint8_t *np = nul;
	struct tw_ccmp_key k;
	struct tw_ccmp_tx tx = { 0 };
	struct tw_ccmp_rx rx;
	struct tw_ccmp_mpdu m[2];
	size_t n = 0;

	if (tw_ccmp_key_init(nul, TW_CCMP_128, tk, 16, 0) != TW_ERR_INVAL ||
	    tw_ccmp_key_init(&k, TW_CCMP_128, np, 16, 0) != TW_ERR_INVAL)
		abort();
	tw_ccmp_rx_init(&rx);
	if (tw_ccmp_encap(nul, &tx, f, sizeof(f), o[0], sizeof(o[0]), &n) != TW_ERR_INVAL ||
	    tw_ccmp_encap(key, nul, f, sizeof(f), o[0], sizeof(o[0]), &n) != TW_ERR_INVAL ||
	    tw_ccmp_encap(key, &tx, np, sizeof(f), o[0], sizeof(o[0]), &n) != TW_ERR_INVAL ||
	    tw_ccmp_encap(key, &tx, f, sizeof(f), nul, sizeof(o[0]), &n) != TW_ERR_INVAL ||
	    tw_ccmp_encap(key, &tx, f, sizeof(f), o[0], sizeof(o[0]), nul) != TW_ERR_INVAL ||
	    tw_ccmp_decap(nul, &rx, f, sizeof(f), o[0], sizeof(o[0]), &n, NULL) != TW_ERR_INVAL ||
	    tw_ccmp_decap(key, &rx, np, sizeof(f), o[0], sizeof(o[0]), &n, NULL) != TW_ERR_INVAL ||
	    tw_ccmp_decap(key, &rx, f, sizeof(f), nul, sizeof(o[0]), &n, NULL) != TW_ERR_INVAL ||
	    tw_ccmp_decap(key, &rx, f, sizeof(f), o[0], sizeof(o[0]), nul, NULL) != TW_ERR_INVAL ||
	    tx.pn != 0)
		abort();
	if (tw_ccmp_encap_batch(nul, 1) != TW_ERR_INVAL || tw_ccmp_decap_batch(nul, 1) != TW_ERR_INVAL ||
	    tw_ccmp_encap_batch(nul, 0) != TW_OK || tw_ccmp_decap_batch(nul, 0) != TW_OK)
		abort();
	memset(m, 0, sizeof(m));
	m[0] = (struct tw_ccmp_mpdu){ .key = key, .tx = nul, .in = f, .in_len = sizeof(f),
				      .out = o[0], .out_cap = sizeof(o[0]) };
	m[1] = (struct tw_ccmp_mpdu){ .key = key, .tx = &tx, .in = f, .in_len = sizeof(f),
				      .out = o[1], .out_cap = sizeof(o[1]) };
	if (tw_ccmp_encap_batch(m, 2) != TW_ERR_INVAL || m[0].status != TW_ERR_INVAL ||
	    m[1].status != TW_OK || tx.pn != 1)
		abort();
	m[0] = (struct tw_ccmp_mpdu){ .key = nul, .rx = &rx, .in = o[1], .in_len = m[1].out_len,
				      .out = o[0], .out_cap = sizeof(o[0]) };
	m[1] = (struct tw_ccmp_mpdu){ .key = key, .rx = &rx, .in = o[1], .in_len = m[1].out_len,
				      .out = o[1], .out_cap = sizeof(o[1]) };
	if (tw_ccmp_decap_batch(m, 2) != TW_ERR_INVAL || m[0].status != TW_ERR_INVAL ||
	    m[1].status != TW_OK || m[1].out_len != sizeof(f) || memcmp(o[1] + 2, f + 2, 38) != 0 ||
	    o[1][1] != (f[1] | 0x40))
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const enum tw_ccmp_cipher ciphers[4] = { TW_CCMP_128, TW_CCMP_256, TW_GCMP_128,
							TW_GCMP_256 };
	static uint8_t out[2048], out2[2048];
	struct tw_ccmp_key key;
	struct tw_ccmp_rx rx, rx2;
	struct tw_ccmp_mpdu m;
	size_t ol = 0;
	uint64_t pn = 0;

	if (size < 1 || size > sizeof(out))
		return 0;
	enum tw_ccmp_cipher c = ciphers[data[0] & 3];
	if (tw_ccmp_key_init(&key, c, tk, c == TW_CCMP_128 || c == TW_GCMP_128 ? 16 : 32, 0) != TW_OK)
		abort();
	static bool contract_done;
	if (!contract_done) {
		check_contract(&key);
		contract_done = true;
	}
	tw_ccmp_rx_init(&rx);
	tw_ccmp_rx_init(&rx2);
	int err = tw_ccmp_decap(&key, &rx, data + 1, size - 1, out, sizeof(out), &ol, &pn);
	if (err == TW_OK) {
		size_t used = 0;

		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			used += rx.pn[i] == pn;
		if (ol != size - 1 - 8 - tw_ccmp_mic_len(&key) || used != 1 || pn == 0)
			abort();
	} else {
		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			if (rx.pn[i] != 0)
				abort();
	}
	memset(&m, 0, sizeof(m));
	m.key = &key;
	m.rx = &rx2;
	m.in = data + 1;
	m.in_len = size - 1;
	m.out = out2;
	m.out_cap = sizeof(out2);
	if (tw_ccmp_decap_batch(&m, 1) != err || m.status != err ||
	    (err == TW_OK && (m.out_len != ol || memcmp(out, out2, ol) != 0)))
		abort();
	check_encap(data[0], &key, data + 1, size - 1);
	/* tw_ccmp_key_init of a cipher, TK length and Key ID from the last
	 * octets: exactly the suites, lengths and IDs ccmp.h names */
	if (size >= 3) {
		static const size_t lens[4] = { 16, 32, 24, 0 };
		struct tw_ccmp_key k2;
		unsigned cipher = data[size - 1] % 6, id = data[size - 2] % 5;
		size_t tl = lens[(data[size - 1] >> 4) & 3];
		bool ok = cipher >= 1 && cipher <= 4 && id <= 3 &&
			  tl == (cipher == TW_CCMP_128 || cipher == TW_GCMP_128 ? 16 : 32);

		if ((tw_ccmp_key_init(&k2, (enum tw_ccmp_cipher)cipher, tk, tl, id) == TW_OK) != ok ||
		    (ok && (k2.cipher != cipher || k2.key_id != id ||
			    tw_ccmp_mic_len(&k2) != (cipher == TW_CCMP_128 ? 8 : 16))))
			abort();
		if (ok)
			tw_ccmp_key_wipe(&k2);
	}
	tw_ccmp_key_wipe(&key);
	return 0;
}
