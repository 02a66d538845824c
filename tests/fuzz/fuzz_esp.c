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
 *
 * With the top bits 110, the packet is built here with OpenSSL around a
 * plaintext the input chooses whole (payload, padding, Pad Length, Next
 * Header): NULL or AES-CBC with HMAC-SHA1-96, or AES-GCM (RFC 4106), so
 * the trailer checks behind the ICV see any input; the verdict must be the
 * one RFC 4303 §2.4-2.6 gives, alone and in a batch wider than one chunk
 * beside tampered copies. With 111, an AH packet (RFC 4302) is built here
 * with OpenSSL HMAC around an IPv4 header the input chooses, then
 * optionally changed in a mutable field (must still verify) or an
 * immutable one (must not); the verdict must be the IPv4 model's.
 * Once per process, the argument contract of esp.h is checked.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
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

/* ---- packets built with OpenSSL --------------------------------------- */

static const uint8_t oracle_iv[16] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
				       0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf };

/* HMAC (OpenSSL's one-shot call) of m, with ESN the high half 0 after it */
static void ossl_hmac(const EVP_MD *md, const uint8_t *k, size_t kl, const uint8_t *m,
		      size_t len, bool esn, uint8_t mac[32])
{
	static uint8_t buf[1300];
	unsigned ml = 0;

	if (md == NULL || len + 4 > sizeof(buf))
		abort();
	memcpy(buf, m, len);
	memset(buf + len, 0, 4);
	if (HMAC(md, k, (int)kl, buf, len + (esn ? 4 : 0), mac, &ml) == NULL || ml < 12)
		abort();
}

/* An SA of one of the three oracle transforms: keys from key[] as
 * oracle_packet uses them */
static void oracle_sa(struct tw_esp_sa *sa, unsigned kind, bool esn, bool tunnel)
{
	static const char *const t[3] = { "null-hmac-sha1", "aes-cbc-128-hmac-sha1",
					  "aes-gcm-128" };
	struct tw_esp_config c;

	memset(&c, 0, sizeof(c));
	if (tw_esp_transform(t[kind], &c) != TW_OK)
		abort();
	c.spi = 0x4000;
	c.enc_key = key;
	c.auth_key = key + 24;
	c.esn = esn;
	c.mode = tunnel ? TW_ESP_TUNNEL : TW_ESP_TRANSPORT;
	if (tw_esp_sa_init(sa, &c) != TW_OK)
		abort();
}

/* The ESP packet with sequence number 1 carrying plaintext pt (the whole
 * of payload, padding, Pad Length and Next Header, as given): RFC 4303
 * §2 with the ICV of RFC 2404 over SPI..ciphertext and, with ESN, the
 * high half (§2.2.1), or RFC 4106 (salt = key[16..19], explicit IV 8
 * octets, AAD SPI | [seq hi] | seq lo, 16-octet tag). */
static size_t oracle_packet(unsigned kind, bool esn, const uint8_t *pt, size_t len,
			    uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t mac[32], nonce[12], aad[12];
	size_t hdr = 8;
	int n = 0, ok = x != NULL;

	tw_store_be32(out, 0x4000);
	tw_store_be32(out + 4, 1);
	if (kind == 0) {
		memcpy(out + hdr, pt, len);
	} else if (kind == 1) {
		memcpy(out + hdr, oracle_iv, 16);
		hdr += 16;
		ok = ok && EVP_EncryptInit_ex(x, EVP_aes_128_cbc(), NULL, key, oracle_iv) == 1 &&
		     EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
		     EVP_EncryptUpdate(x, out + hdr, &n, pt, (int)len) == 1 && (size_t)n == len;
	} else {
		memcpy(out + hdr, oracle_iv, 8);
		hdr += 8;
		memcpy(nonce, key + 16, 4);
		memcpy(nonce + 4, oracle_iv, 8);
		memcpy(aad, out, 4);
		memset(aad + 4, 0, 4); /* the high half of 1 */
		memcpy(aad + (esn ? 8 : 4), out + 4, 4);
		ok = ok && EVP_EncryptInit_ex(x, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1 &&
		     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1 &&
		     EVP_EncryptInit_ex(x, NULL, NULL, key, nonce) == 1 &&
		     EVP_EncryptUpdate(x, NULL, &n, aad, esn ? 12 : 8) == 1 &&
		     (len == 0 || EVP_EncryptUpdate(x, out + hdr, &n, pt, (int)len) == 1) &&
		     EVP_EncryptFinal_ex(x, out + hdr + len, &n) == 1 &&
		     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, out + hdr + len) == 1;
		EVP_CIPHER_CTX_free(x);
		if (!ok)
			abort();
		return hdr + len + 16;
	}
	EVP_CIPHER_CTX_free(x);
	if (!ok)
		abort();
	ossl_hmac(EVP_sha1(), key + 24, 20, out, hdr + len, esn, mac);
	memcpy(out + hdr + len, mac, 12);
	return hdr + len + 12;
}

/* RFC 4303 on an authentic packet's plaintext: §2.4 Pad Length within
 * it and the default padding 1, 2, 3, ...; §2.5/§2.6 in tunnel mode the
 * inner version matches Next Header 4 or 41, unless 59 (a dummy). */
static int trailer_verdict(const uint8_t *pt, size_t len, bool tunnel, size_t *plen,
			   uint8_t *nh)
{
	size_t padl = pt[len - 2];

	*nh = pt[len - 1];
	if (padl + 2 > len)
		return TW_ERR_DECODE;
	*plen = len - 2 - padl;
	for (size_t i = 0; i < padl; i++)
		if (pt[*plen + i] != (uint8_t)(i + 1))
			return TW_ERR_DECODE;
	if (tunnel && *nh != TW_ESP_NH_NONE) {
		unsigned v = *plen > 0 ? pt[0] >> 4 : 0;

		if (!((*nh == TW_ESP_NH_IPV4 && v == 4) || (*nh == TW_ESP_NH_IPV6 && v == 6)))
			return TW_ERR_UNSUPPORTED;
	}
	return TW_OK;
}

enum { ORACLE_BATCH = 32 + 3 }; /* more than one chunk of the batch calls */

/* sel bits 0-1: transform (NULL, CBC, GCM), 2: tunnel, 3: ESN; d: the
 * plaintext (for CBC cut to whole blocks) */
static void check_oracle_esp(unsigned sel, const uint8_t *d, size_t len)
{
	static uint8_t pkt[ORACLE_BATCH][1200];
	static struct tw_esp_sa sa[ORACLE_BATCH];
	static struct tw_esp_pkt p[ORACLE_BATCH];
	unsigned kind = sel % 4 == 3 ? 2 : sel % 4;
	bool tunnel = sel & 4, esn = sel & 8;
	struct tw_esp_view v;
	size_t n, plen = 0, hdr;
	uint8_t nh = 0;
	int want, first = TW_OK;

	if (kind == 1)
		len -= len % 16;
	if (len < 2 || len > 1024)
		return;
	want = trailer_verdict(d, len, tunnel, &plen, &nh);
	n = oracle_packet(kind, esn, d, len, pkt[0]);
	oracle_sa(&sa[0], kind, esn, tunnel);
	hdr = tw_esp_hdr_len(&sa[0]);
	for (size_t i = 1; i < ORACLE_BATCH; i++)
		memcpy(pkt[i], pkt[0], n);
	if (tw_esp_decap(&sa[0], pkt[0], n, &v) != want ||
	    (want == TW_OK && (v.off != hdr || v.len != plen || v.next_header != nh ||
			       v.seq != 1 || memcmp(pkt[0] + hdr, d, plen) != 0)))
		abort();
	tw_esp_sa_wipe(&sa[0]);
	/* in a batch: the same packet on fresh SAs, every third with its
	 * last ICV octet changed (TW_ERR_AUTH), one without an SA */
	for (size_t i = 1; i < ORACLE_BATCH; i++) {
		oracle_sa(&sa[i], kind, esn, tunnel);
		if (i % 3 == 0)
			pkt[i][n - 1] ^= 1;
		p[i] = (struct tw_esp_pkt){ .sa = i == 7 ? NULL : &sa[i], .buf = pkt[i],
					    .len = n, .cap = sizeof(pkt[i]) };
	}
	if (tw_esp_decap_batch(p + 1, ORACLE_BATCH - 1) == TW_OK && want != TW_OK)
		abort();
	for (size_t i = 1; i < ORACLE_BATCH; i++) {
		int w = i == 7 ? TW_ERR_INVAL : i % 3 == 0 ? TW_ERR_AUTH : want;

		if (p[i].status != w ||
		    (w == TW_OK && (p[i].view.len != plen || p[i].next_header != nh ||
				    memcmp(pkt[i] + hdr, d, plen) != 0)))
			abort();
		if (first == TW_OK)
			first = w;
		tw_esp_sa_wipe(&sa[i]);
	}
	(void)first;
}

/* RFC 791 header checksum */
static uint16_t ip_sum(const uint8_t h[20])
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * sel bits 0-1: HMAC-SHA1-96, -MD5-96, -SHA-256-128; bit 2: ESN. d[0]
 * says what to fix in the input's IPv4 header d[1..20] (bit 0 version
 * and IHL 0x45, 1 Total Length, 2 no fragment bits, 3 Protocol 51, 4 the
 * AH Payload Len right) and what to change after signing (bit 5 TOS, TTL,
 * DF and checksum: mutable, still authentic; bit 6 the source address:
 * not); the rest is the payload.
 */
static void check_oracle_ah(unsigned sel, const uint8_t *d, size_t len)
{
	static const struct {
		unsigned integ;
		const char *md;
		size_t kl, icv;
	} t[3] = { { TW_ESP_AUTH_HMAC_SHA1_96, "SHA1", 20, 12 },
		   { TW_ESP_AUTH_HMAC_MD5_96, "MD5", 16, 12 },
		   { TW_ESP_AUTH_HMAC_SHA256_128, "SHA256", 32, 16 } };
	static uint8_t pkt[1200], ip[1200];
	unsigned k = sel % 4 == 3 ? 0 : sel % 4, f;
	bool esn = sel & 4;
	struct tw_esp_config c;
	struct tw_ah_sa ah;
	size_t ahl, total, pl, out_len = 0;
	uint64_t seq = 0;
	uint8_t mac[32];
	int want = TW_OK;

	if (len < 21 || len > 1024)
		return;
	f = d[0];
	memset(&c, 0, sizeof(c));
	c.spi = 0x2100;
	c.integ = t[k].integ;
	c.auth_key = key;
	c.auth_key_len = t[k].kl;
	c.esn = esn;
	if (tw_ah_sa_init(&ah, &c) != TW_OK)
		abort();
	ahl = tw_ah_len(&ah);
	if (ahl != TW_AH_HDR_LEN + t[k].icv)
		abort();
	pl = len - 21;
	total = 20 + ahl + pl;
	memcpy(pkt, d + 1, 20);
	if (f & 1)
		pkt[0] = 0x45;
	if (f & 2)
		tw_store_be16(pkt + 2, (uint16_t)total);
	if (f & 4)
		pkt[6] &= 0x40, pkt[7] = 0;
	if (f & 8)
		pkt[9] = TW_IPPROTO_AH;
	pkt[20] = d[len > 21 ? 21 : 0]; /* Next Header */
	pkt[21] = f & 16 ? (uint8_t)(ahl / 4 - 2) : d[1];
	pkt[22] = pkt[23] = 0;
	tw_store_be32(pkt + 24, 0x2100);
	tw_store_be32(pkt + 28, 1);
	memset(pkt + 32, 0, t[k].icv);
	memcpy(pkt + 20 + ahl, d + 21, pl);
	/* RFC 4302 §3.3.3.1.1.1: TOS, flags and offset, TTL, checksum zero */
	memcpy(ip, pkt, total);
	ip[1] = ip[6] = ip[7] = ip[8] = ip[10] = ip[11] = 0;
	ossl_hmac(EVP_get_digestbyname(t[k].md), key, t[k].kl, ip, total, esn, mac);
	memcpy(pkt + 32, mac, t[k].icv);
	if (f & 32) {
		pkt[1] ^= 0xfc;
		pkt[8] ^= 0x5a;
		pkt[6] ^= 0x40;
		pkt[10] ^= 0x11;
	}
	if (f & 64)
		pkt[12] ^= 0x80;
	/* the verdict of the IPv4 model, in the order of the checks */
	if (total < 20 + ahl)
		want = TW_ERR_LENGTH;
	else if (pkt[0] >> 4 != 4)
		want = TW_ERR_DECODE;
	else if ((pkt[0] & 15) != 5)
		want = TW_ERR_UNSUPPORTED;
	else if (tw_load_be16(pkt + 2) != total)
		want = TW_ERR_DECODE;
	else if ((tw_load_be16(pkt + 6) & 0x3fff) != 0)
		want = TW_ERR_UNSUPPORTED;
	else if (pkt[9] != TW_IPPROTO_AH || pkt[21] != ahl / 4 - 2)
		want = TW_ERR_DECODE;
	else if (f & 64)
		want = TW_ERR_AUTH;
	memcpy(ip, pkt, total);
	if (tw_ah_decap(&ah, ip, total, &out_len, &seq) != want)
		abort();
	if (want == TW_OK) {
		/* the inner packet: the header as received with Protocol =
		 * Next Header, its length and checksum redone; the payload */
		if (out_len != 20 + pl || seq != 1 || ip[9] != pkt[20] ||
		    tw_load_be16(ip + 2) != out_len || ip_sum(ip) != 0 ||
		    memcmp(ip + 12, pkt + 12, 8) != 0 || ip[1] != pkt[1] || ip[8] != pkt[8] ||
		    memcmp(ip + 20, pkt + 20 + ahl, pl) != 0)
			abort();
		/* the same packet again: a replay */
		memcpy(ip, pkt, total);
		if (tw_ah_decap(&ah, ip, total, &out_len, &seq) != TW_ERR_REPLAY)
			abort();
	}
	tw_ah_sa_wipe(&ah);
}

/* NULL where a call takes a pointer, without the compiler seeing it */
static void *volatile nul;

/*
 * The argument contract of esp.h, once: NULL objects are TW_ERR_INVAL
 * everywhere (batch jobs without an SA or buffer alone), AH SAs only with
 * integrity and no cipher, a too small output TW_ERR_OVERFLOW, the AH
 * counter stops before it cycles (RFC 4302 §3.3.2), and AH in place
 * gives the octets of AH into another buffer.
 */
static void check_contract(void)
{
	static const uint8_t ip4[28] = { 0x45, 0, 0, 28, 0, 0, 0x40, 0, 0x40, 17, 0, 0,
					 192, 0, 2, 1, 192, 0, 2, 2, 0, 53, 0, 53, 0, 8 };
	static uint8_t a[256], b[256];
	struct tw_esp_config c;
	struct tw_esp_sa sa;
	struct tw_ah_sa ah;
	struct tw_esp_view v;
	struct tw_esp_pkt p[2];
	const uint8_t *np = nul;
	size_t n = 0, m = 0;
	uint64_t seq;

	memset(&c, 0, sizeof(c));
	if (tw_esp_transform(nul, &c) != TW_ERR_INVAL ||
	    tw_esp_transform("null", nul) != TW_ERR_INVAL ||
	    tw_esp_transform("aes-cbc-128-hmac-sha1", &c) != TW_OK)
		abort();
	c.spi = 0x5000;
	c.enc_key = key;
	c.auth_key = key + 24;
	if (tw_esp_sa_init(nul, &c) != TW_ERR_INVAL || tw_esp_sa_init(&sa, nul) != TW_ERR_INVAL)
		abort();
	c.enc_key = np;
	if (tw_esp_sa_init(&sa, &c) != TW_ERR_INVAL)
		abort();
	c.enc_key = key;
	c.auth_key = np;
	if (tw_esp_sa_init(&sa, &c) != TW_ERR_INVAL)
		abort();
	c.auth_key = key + 24;
	if (tw_esp_sa_init(&sa, &c) != TW_OK)
		abort();
	if (tw_esp_encap(nul, 17, ip4, 8, a, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_esp_encap(&sa, 17, np, 8, a, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_esp_encap(&sa, 17, ip4, 8, nul, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_esp_encap(&sa, 17, ip4, 8, a, sizeof(a), nul) != TW_ERR_INVAL ||
	    tw_esp_encap(&sa, 17, ip4, 8, a, 20, &n) != TW_ERR_OVERFLOW ||
	    tw_esp_decap(nul, a, 60, &v) != TW_ERR_INVAL ||
	    tw_esp_decap(&sa, nul, 60, &v) != TW_ERR_INVAL ||
	    tw_esp_decap(&sa, a, 60, nul) != TW_ERR_INVAL)
		abort();
	if (tw_esp_encap_batch(nul, 2) != TW_ERR_INVAL || tw_esp_decap_batch(nul, 2) != TW_ERR_INVAL ||
	    tw_esp_encap_batch(nul, 0) != TW_OK || tw_esp_decap_batch(nul, 0) != TW_OK)
		abort();
	memset(p, 0, sizeof(p));
	p[0] = (struct tw_esp_pkt){ .sa = &sa, .buf = nul, .len = 8, .cap = sizeof(a) };
	p[1] = (struct tw_esp_pkt){ .sa = nul, .buf = b, .len = 8, .cap = sizeof(b) };
	if (tw_esp_encap_batch(p, 2) != TW_ERR_INVAL || p[0].status != TW_ERR_INVAL ||
	    p[1].status != TW_ERR_INVAL || tw_esp_decap_batch(p, 2) != TW_ERR_INVAL ||
	    p[0].status != TW_ERR_INVAL || p[1].status != TW_ERR_INVAL)
		abort();
	tw_esp_sa_wipe(&sa);

	/* AH: integrity only */
	memset(&c, 0, sizeof(c));
	c.spi = 0x5100;
	c.integ = TW_ESP_AUTH_HMAC_SHA1_96;
	c.auth_key = key;
	c.auth_key_len = 20;
	if (tw_ah_sa_init(nul, &c) != TW_ERR_INVAL || tw_ah_sa_init(&ah, nul) != TW_ERR_INVAL)
		abort();
	for (int k = 0; k < 5; k++) {
		struct tw_esp_config e = c;

		switch (k) {
		case 0: e.spi = 0; break;
		case 1: e.cipher = TW_ESP_ENC_AES_CBC; break;
		case 2: e.enc_key_len = 16; break;
		case 3: e.integ = TW_ESP_AUTH_NONE; break;
		default: e.auth_key = np; break;
		}
		if (tw_ah_sa_init(&ah, &e) != TW_ERR_INVAL)
			abort();
	}
	c.replay_window = 5; /* below the least window */
	if (tw_ah_sa_init(&ah, &c) == TW_OK)
		abort();
	c.replay_window = 128;
	if (tw_ah_sa_init(&ah, &c) != TW_OK)
		abort();
	if (tw_ah_encap(nul, ip4, 28, a, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_ah_encap(&ah, np, 28, a, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_ah_encap(&ah, ip4, 28, nul, sizeof(a), &n) != TW_ERR_INVAL ||
	    tw_ah_encap(&ah, ip4, 28, a, sizeof(a), nul) != TW_ERR_INVAL ||
	    tw_ah_encap(&ah, ip4, 28, a, 28 + tw_ah_len(&ah) - 1, &n) != TW_ERR_OVERFLOW ||
	    tw_ah_decap(nul, a, 60, &n, &seq) != TW_ERR_INVAL ||
	    tw_ah_decap(&ah, nul, 60, &n, &seq) != TW_ERR_INVAL ||
	    tw_ah_decap(&ah, a, 60, nul, &seq) != TW_ERR_INVAL ||
	    tw_ah_decap(&ah, a, 60, &n, nul) != TW_ERR_INVAL)
		abort();
	/* in place, after a copy into another buffer from the same counter */
	{
		struct tw_ah_sa twin = ah;

		memcpy(b, ip4, sizeof(ip4));
		if (tw_ah_encap(&ah, ip4, sizeof(ip4), a, sizeof(a), &n) != TW_OK ||
		    tw_ah_encap(&twin, b, sizeof(ip4), b, sizeof(b), &m) != TW_OK || n != m ||
		    memcmp(a, b, n) != 0)
			abort();
		tw_ah_sa_wipe(&twin);
	}
	ah.seq_out = 0xffffffffULL;
	if (tw_ah_encap(&ah, ip4, sizeof(ip4), a, sizeof(a), &n) != TW_ERR_STATE)
		abort();
	tw_ah_sa_wipe(&ah);
	c.esn = true;
	if (tw_ah_sa_init(&ah, &c) != TW_OK)
		abort();
	ah.seq_out = UINT64_MAX;
	if (tw_ah_encap(&ah, ip4, sizeof(ip4), a, sizeof(a), &n) != TW_ERR_STATE)
		abort();
	tw_ah_sa_wipe(&ah);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static uint8_t pkt[4096], out[4096 + 128];
	static bool contract_done;
	struct tw_esp_sa sa, tx;
	struct tw_esp_view v;
	size_t n;

	if (size < 1 || size - 1 > sizeof(pkt))
		return 0;
	unsigned sel = data[0];
	size_t len = size - 1;

	if (!contract_done) {
		check_contract();
		contract_done = true;
	}
	if ((sel & 0xc0) == 0x40) {
		check_config(data + 1, len);
		return 0;
	}
	if ((sel & 0xe0) == 0xc0) {
		check_oracle_esp(sel, data + 1, len);
		return 0;
	}
	if ((sel & 0xe0) == 0xe0) {
		check_oracle_ah(sel, data + 1, len);
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
