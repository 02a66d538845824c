/*
 * twag-bench — IPsec ESP (RFC 4303) and AH (RFC 4302) per transform and
 * packet size: one op = one packet of t->size payload octets (for AH, an
 * IPv4 packet of 20 + size octets), encapsulated or verified+decapsulated.
 *
 * Rows: esp-gcm128 (AES-GCM-128, RFC 4106), esp-cbc-sha1 (AES-128-CBC +
 * HMAC-SHA1-96), esp-cbc-sha256 (AES-128-CBC + HMAC-SHA-256-128),
 * esp-3des-sha1 (3DES-CBC + HMAC-SHA1-96), ah-sha1, ah-md5 (HMAC-SHA1-96 /
 * HMAC-MD5-96 over IPv4), esp-null (NULL encryption, no ICV: the no-crypto
 * baseline, header + copy + trailer). Each with "-dec" (verify + decrypt)
 * and, for GCM, CBC-SHA1 and 3DES-SHA1, "-batch" (16 packets per
 * tw_esp_encap_batch; 3DES: the 16 CBC chains side by side).
 *
 * References, beside each in the same run: OpenSSL EVP building the same
 * packets the ordinary way (one EVP_CIPHER_CTX and one EVP_MAC_CTX keyed
 * once and reused, one packet per call, out of place from the payload);
 * the kernel's gcm(aes) through AF_ALG for the GCM row (reported as not
 * available where the kernel has no AF_ALG). The decryption rows of both
 * copy the pristine packet into a work buffer first (ESP decrypts in
 * place), so both pay the same copy. once() builds whole packets from the
 * 64 input octets, so twag and EVP are compared byte for byte (decrypt
 * rows: packet | recovered payload).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "afalg.h"
#include "bench.h"
#include "twag/bytes.h"
#include "twag/esp.h"

enum { NPKT = 16, ROOM = 160, NH = 17, SPI = 0x1000 };

struct esp_state {
	const char *xname;
	bool ah;
	size_t size, cap, in_len;
	struct tw_esp_config cfg;
	uint8_t key[64];
	size_t key_len, iv_len, icv_len, align;
	struct tw_esp_sa tx, rx;
	struct tw_ah_sa atx, arx;
	uint8_t *in[NPKT];   /* payload (ESP) or IPv4 packet (AH) */
	uint8_t *pkt[NPKT];  /* pristine protected packets */
	size_t pkt_len[NPKT];
	uint8_t *work;       /* cap octets */
	uint8_t *bwork[NPKT]; /* batch buffers */
	struct tw_esp_pkt batch[NPKT];
	uint64_t next, seq;
	EVP_CIPHER_CTX *evp, *evpd, *ecb; /* encrypt, decrypt, IV */
	EVP_MAC *mac;
	EVP_MAC_CTX *mctx;
	struct bench_afalg alg;
	uint8_t *abuf;
};

/* ---- transforms ---- */

static bool ah_name(const char *x, struct tw_esp_config *c)
{
	memset(c, 0, sizeof(*c));
	if (strcmp(x, "ah-hmac-sha1") == 0) {
		c->integ = TW_ESP_AUTH_HMAC_SHA1_96;
		c->auth_key_len = 20;
		return true;
	}
	if (strcmp(x, "ah-hmac-md5") == 0) {
		c->integ = TW_ESP_AUTH_HMAC_MD5_96;
		c->auth_key_len = 16;
		return true;
	}
	return false;
}

/* cfg, key lengths and layout for transform x. */
static int xf_init(struct esp_state *s, const char *x)
{
	s->xname = x;
	s->ah = ah_name(x, &s->cfg);
	if (!s->ah && tw_esp_transform(x, &s->cfg) != TW_OK)
		return -1;
	s->key_len = s->cfg.enc_key_len + s->cfg.auth_key_len;
	s->cfg.spi = SPI;
	s->cfg.enc_key = s->key;
	s->cfg.auth_key = s->key + s->cfg.enc_key_len;
	s->iv_len = s->cfg.cipher == TW_ESP_ENC_AES_CBC ? 16
		    : s->cfg.cipher == TW_ESP_ENC_NULL ? 0 : 8;
	s->align = s->cfg.cipher == TW_ESP_ENC_AES_CBC ? 16
		   : s->cfg.cipher == TW_ESP_ENC_3DES_CBC ? 8 : 4;
	s->icv_len = s->cfg.cipher == TW_ESP_ENC_AES_GCM ? 16
		     : s->cfg.integ == TW_ESP_AUTH_HMAC_SHA256_128 ? 16
		     : s->cfg.integ == TW_ESP_AUTH_NONE ? 0 : 12;
	return 0;
}

/* The payload (or the IPv4 packet around it) from 64 input octets. */
static void derive(uint8_t *p, size_t size, bool ah, const uint8_t in[BENCH_IN_LEN])
{
	size_t off = ah ? 20 : 0;

	for (size_t i = 0; i < size; i++)
		p[off + i] = (uint8_t)(in[i % BENCH_IN_LEN] ^ (i >> 6) ^ (i >> 14));
	if (ah) {
		size_t len = 20 + size;

		memset(p, 0, 20);
		p[0] = 0x45;
		tw_store_be16(p + 2, (uint16_t)len);
		p[6] = 0x40;
		p[8] = 64;
		p[9] = NH;
		memcpy(p + 12, in, 8);
	}
}

static int tw_keys(struct esp_state *s)
{
	if (s->ah)
		return tw_ah_sa_init(&s->atx, &s->cfg) == TW_OK &&
		       tw_ah_sa_init(&s->arx, &s->cfg) == TW_OK ? 0 : -1;
	return tw_esp_sa_init(&s->tx, &s->cfg) == TW_OK &&
	       tw_esp_sa_init(&s->rx, &s->cfg) == TW_OK ? 0 : -1;
}

static int tw_encap(struct esp_state *s, const uint8_t *in, uint8_t *out, size_t *len)
{
	if (s->ah)
		return tw_ah_encap(&s->atx, in, s->in_len, out, s->cap, len);
	return tw_esp_encap(&s->tx, NH, in, s->size, out, s->cap, len);
}

static int tw_decap(struct esp_state *s, uint8_t *pkt, size_t len, size_t *plen)
{
	struct tw_esp_view v;
	uint64_t seq;
	int err;

	if (s->ah)
		return tw_ah_decap(&s->arx, pkt, len, plen, &seq);
	err = tw_esp_decap(&s->rx, pkt, len, &v);
	if (err != TW_OK || v.off != tw_esp_hdr_len(&s->rx))
		return -1;
	*plen = v.len;
	return 0;
}

/* ---- OpenSSL EVP, the ordinary way ---- */

static int evp_keys(struct esp_state *s)
{
	static char sha1[] = "SHA1", sha256[] = "SHA256", md5[] = "MD5";
	const uint8_t *ek = s->key;
	const EVP_CIPHER *c = NULL, *e = NULL;

	switch (s->cfg.cipher) {
	case TW_ESP_ENC_AES_GCM:
		c = EVP_aes_128_gcm();
		break;
	case TW_ESP_ENC_AES_CBC:
		c = EVP_aes_128_cbc();
		e = EVP_aes_128_ecb();
		break;
	case TW_ESP_ENC_3DES_CBC:
		c = EVP_des_ede3_cbc();
		e = EVP_des_ede3_ecb();
		break;
	default:
		break;
	}
	if (c != NULL) {
		/* one context per direction: a CBC key schedule is per direction */
		s->evp = EVP_CIPHER_CTX_new();
		s->evpd = EVP_CIPHER_CTX_new();
		if (s->evp == NULL || s->evpd == NULL ||
		    !EVP_CipherInit_ex(s->evp, c, NULL, ek, NULL, 1) ||
		    !EVP_CipherInit_ex(s->evpd, c, NULL, ek, NULL, 0) ||
		    !EVP_CIPHER_CTX_set_padding(s->evp, 0) ||
		    !EVP_CIPHER_CTX_set_padding(s->evpd, 0))
			return -1;
	}
	if (e != NULL) {
		s->ecb = EVP_CIPHER_CTX_new();
		if (s->ecb == NULL || !EVP_EncryptInit_ex(s->ecb, e, NULL, ek, NULL) ||
		    !EVP_CIPHER_CTX_set_padding(s->ecb, 0))
			return -1;
	}
	if (s->cfg.integ != TW_ESP_AUTH_NONE) {
		char *d = s->cfg.integ == TW_ESP_AUTH_HMAC_SHA1_96 ? sha1
			  : s->cfg.integ == TW_ESP_AUTH_HMAC_SHA256_128 ? sha256 : md5;
		OSSL_PARAM prm[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, d, 0),
				     OSSL_PARAM_construct_end() };

		s->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		s->mctx = s->mac ? EVP_MAC_CTX_new(s->mac) : NULL;
		if (s->mctx == NULL ||
		    !EVP_MAC_init(s->mctx, s->cfg.auth_key, s->cfg.auth_key_len, prm))
			return -1;
	}
	return 0;
}

static void evp_free(struct esp_state *s)
{
	EVP_CIPHER_CTX_free(s->evp);
	EVP_CIPHER_CTX_free(s->evpd);
	EVP_CIPHER_CTX_free(s->ecb);
	EVP_MAC_CTX_free(s->mctx);
	EVP_MAC_free(s->mac);
	s->evp = s->evpd = s->ecb = NULL;
	s->mctx = NULL;
	s->mac = NULL;
}

/* HMAC of a | b | c with the keyed context re-initialised (same key). */
static int evp_hmac(struct esp_state *s, const uint8_t *a, size_t al, const uint8_t *b,
		    size_t bl, const uint8_t *c, size_t cl, uint8_t mac[64])
{
	size_t ml = 0;

	return EVP_MAC_init(s->mctx, NULL, 0, NULL) && EVP_MAC_update(s->mctx, a, al) &&
	       EVP_MAC_update(s->mctx, b, bl) && EVP_MAC_update(s->mctx, c, cl) &&
	       EVP_MAC_final(s->mctx, mac, &ml, 64) ? 0 : -1;
}

static uint16_t ip_cksum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += tw_load_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* RFC 4303 §3.3 with EVP: header, IV (the same rule as twag, so the
 * packets can be compared), cipher over payload | trailer, HMAC. */
static int evp_esp_encap(struct esp_state *s, const uint8_t *payload, uint64_t seq,
			 uint8_t *out, size_t *len)
{
	size_t pad = (s->align - (s->size + 2) % s->align) % s->align, ctl = s->size + pad + 2;
	uint8_t trailer[32], *ct = out + 8 + s->iv_len, mac[64];
	int l1 = 0, l2 = 0, l3 = 0;

	tw_store_be32(out, SPI);
	tw_store_be32(out + 4, (uint32_t)seq);
	for (size_t i = 0; i < pad; i++)
		trailer[i] = (uint8_t)(i + 1);
	trailer[pad] = (uint8_t)pad;
	trailer[pad + 1] = NH;
	if (s->cfg.cipher == TW_ESP_ENC_AES_GCM) {
		uint8_t nonce[12];

		tw_store_be64(out + 8, seq);
		memcpy(nonce, s->key + 16, 4);
		memcpy(nonce + 4, out + 8, 8);
		if (!EVP_EncryptInit_ex(s->evp, NULL, NULL, NULL, nonce) ||
		    !EVP_EncryptUpdate(s->evp, NULL, &l1, out, 8) ||
		    !EVP_EncryptUpdate(s->evp, ct, &l1, payload, (int)s->size) ||
		    !EVP_EncryptUpdate(s->evp, ct + l1, &l2, trailer, (int)(pad + 2)) ||
		    !EVP_EncryptFinal_ex(s->evp, ct + l1 + l2, &l3) ||
		    !EVP_CIPHER_CTX_ctrl(s->evp, EVP_CTRL_GCM_GET_TAG, 16, ct + ctl))
			return -1;
		*len = 16 + ctl + 16;
		return 0;
	}
	if (s->evp != NULL) {
		uint8_t n[16] = { 0 };
		int bl = (int)s->align;

		/* SP 800-38A App. C IV, as esp.c does */
		if (s->cfg.cipher == TW_ESP_ENC_AES_CBC) {
			tw_store_be32(n, SPI);
			tw_store_be64(n + 8, seq);
		} else {
			tw_store_be64(n, seq);
		}
		if (!EVP_EncryptUpdate(s->ecb, out + 8, &l1, n, bl) ||
		    !EVP_EncryptInit_ex(s->evp, NULL, NULL, NULL, out + 8) ||
		    !EVP_EncryptUpdate(s->evp, ct, &l1, payload, (int)s->size) ||
		    !EVP_EncryptUpdate(s->evp, ct + l1, &l2, trailer, (int)(pad + 2)) ||
		    !EVP_EncryptFinal_ex(s->evp, ct + l1 + l2, &l3))
			return -1;
	} else {
		memcpy(ct, payload, s->size);
		memcpy(ct + s->size, trailer, pad + 2);
	}
	if (s->icv_len != 0) {
		if (evp_hmac(s, out, 8 + s->iv_len + ctl, NULL, 0, NULL, 0, mac) != 0)
			return -1;
		memcpy(ct + ctl, mac, s->icv_len);
	}
	*len = 8 + s->iv_len + ctl + s->icv_len;
	return 0;
}

/* RFC 4303 §3.4 with EVP, in place: SPI, ICV (CRYPTO_memcmp) before
 * decrypting, decryption, padding check. Returns the payload length. */
static int evp_esp_decap(struct esp_state *s, uint8_t *p, size_t len, size_t *plen)
{
	size_t hdr = 8 + s->iv_len, ctl = len - hdr - s->icv_len;
	uint8_t mac[64], *ct = p + hdr;
	int l1 = 0, l2 = 0;

	if (len < hdr + 2 + s->icv_len || tw_load_be32(p) != SPI)
		return -1;
	if (s->cfg.cipher == TW_ESP_ENC_AES_GCM) {
		uint8_t nonce[12];

		memcpy(nonce, s->key + 16, 4);
		memcpy(nonce + 4, p + 8, 8);
		if (!EVP_DecryptInit_ex(s->evpd, NULL, NULL, NULL, nonce) ||
		    !EVP_DecryptUpdate(s->evpd, NULL, &l1, p, 8) ||
		    !EVP_DecryptUpdate(s->evpd, ct, &l1, ct, (int)ctl) ||
		    !EVP_CIPHER_CTX_ctrl(s->evpd, EVP_CTRL_GCM_SET_TAG, 16, ct + ctl) ||
		    EVP_DecryptFinal_ex(s->evpd, ct + l1, &l2) != 1)
			return -1;
	} else {
		if (s->icv_len != 0) {
			if (evp_hmac(s, p, hdr + ctl, NULL, 0, NULL, 0, mac) != 0 ||
			    CRYPTO_memcmp(mac, ct + ctl, s->icv_len) != 0)
				return -1;
		}
		if (s->evpd != NULL &&
		    (!EVP_DecryptInit_ex(s->evpd, NULL, NULL, NULL, p + 8) ||
		     !EVP_DecryptUpdate(s->evpd, ct, &l1, ct, (int)ctl) ||
		     !EVP_DecryptFinal_ex(s->evpd, ct + l1, &l2)))
			return -1;
	}
	size_t pad = ct[ctl - 2];
	if (pad + 2 > ctl)
		return -1;
	for (size_t i = 0; i < pad; i++)
		if (ct[ctl - 2 - pad + i] != (uint8_t)(i + 1))
			return -1;
	*plen = ctl - 2 - pad;
	return 0;
}

/* RFC 4302 §3.3 with EVP: IPv4 header, AH header, payload; the ICV over a
 * copy of the header with the mutable fields zeroed. */
static int evp_ah_encap(struct esp_state *s, const uint8_t *ip, uint64_t seq, uint8_t *out,
			size_t *len)
{
	size_t ahl = 12 + s->icv_len, total = s->in_len + ahl;
	uint8_t h[20], mac[64];

	memcpy(out, ip, 20);
	out[9] = 51;
	tw_store_be16(out + 2, (uint16_t)total);
	out[20] = ip[9];
	out[21] = (uint8_t)(ahl / 4 - 2);
	out[22] = out[23] = 0;
	tw_store_be32(out + 24, SPI);
	tw_store_be32(out + 28, (uint32_t)seq);
	memset(out + 32, 0, s->icv_len);
	memcpy(out + 20 + ahl, ip + 20, s->size);
	memcpy(h, out, 20);
	h[1] = h[6] = h[7] = h[8] = h[10] = h[11] = 0;
	if (evp_hmac(s, h, 20, out + 20, ahl, out + 20 + ahl, s->size, mac) != 0)
		return -1;
	memcpy(out + 32, mac, s->icv_len);
	out[10] = out[11] = 0;
	tw_store_be16(out + 10, ip_cksum(out));
	*len = total;
	return 0;
}

static int evp_ah_decap(struct esp_state *s, uint8_t *p, size_t len, size_t *plen)
{
	size_t ahl = 12 + s->icv_len;
	uint8_t h[20], icv[16], mac[64];

	if (len < 20 + ahl || p[9] != 51 || tw_load_be32(p + 24) != SPI)
		return -1;
	memcpy(h, p, 20);
	h[1] = h[6] = h[7] = h[8] = h[10] = h[11] = 0;
	memcpy(icv, p + 32, s->icv_len);
	memset(p + 32, 0, s->icv_len);
	if (evp_hmac(s, h, 20, p + 20, ahl, p + 20 + ahl, len - 20 - ahl, mac) != 0 ||
	    CRYPTO_memcmp(mac, icv, s->icv_len) != 0)
		return -1;
	p[9] = p[20];
	memmove(p + 20, p + 20 + ahl, len - 20 - ahl);
	tw_store_be16(p + 2, (uint16_t)(len - ahl));
	p[10] = p[11] = 0;
	tw_store_be16(p + 10, ip_cksum(p));
	*plen = len - ahl;
	return 0;
}

static int evp_encap(struct esp_state *s, const uint8_t *in, uint64_t seq, uint8_t *out,
		     size_t *len)
{
	return s->ah ? evp_ah_encap(s, in, seq, out, len) : evp_esp_encap(s, in, seq, out, len);
}

static int evp_decap(struct esp_state *s, uint8_t *p, size_t len, size_t *plen)
{
	return s->ah ? evp_ah_decap(s, p, len, plen) : evp_esp_decap(s, p, len, plen);
}

/* ---- setup / teardown ---- */

static int setup_common(struct esp_state *s, const struct bench_thread *t, const char *x,
			bool evp)
{
	uint64_t seed = t->seed;

	if (xf_init(s, x) != 0)
		return -1;
	s->size = t->size;
	s->in_len = s->size + (s->ah ? 20 : 0);
	s->cap = s->in_len + ROOM;
	bench_fill(&seed, s->key, sizeof(s->key));
	for (int i = 0; i < NPKT; i++) {
		uint8_t d[BENCH_IN_LEN];

		s->in[i] = malloc(s->cap);
		s->pkt[i] = malloc(s->cap);
		s->bwork[i] = malloc(s->cap);
		if (!s->in[i] || !s->pkt[i] || !s->bwork[i])
			return -1;
		bench_fill(&seed, d, sizeof(d));
		derive(s->in[i], s->size, s->ah, d);
	}
	s->work = malloc(s->cap);
	if (s->work == NULL || tw_keys(s) != 0)
		return -1;
	/* Pristine packets with sequence numbers 1..NPKT (decrypt rows). */
	for (int i = 0; i < NPKT; i++)
		if (tw_encap(s, s->in[i], s->pkt[i], &s->pkt_len[i]) != TW_OK)
			return -1;
	s->seq = NPKT;
	return evp ? evp_keys(s) : 0;
}

static void esp_teardown(void *p)
{
	struct esp_state *s = p;

	for (int i = 0; i < NPKT; i++) {
		free(s->in[i]);
		free(s->pkt[i]);
		free(s->bwork[i]);
	}
	free(s->work);
	free(s->abuf);
	evp_free(s);
	bench_afalg_close(&s->alg);
	tw_esp_sa_wipe(&s->tx);
	tw_esp_sa_wipe(&s->rx);
	tw_ah_sa_wipe(&s->atx);
	tw_ah_sa_wipe(&s->arx);
	tw_wipe(s->key, sizeof(s->key));
}

/* ---- run ---- */

/* The 32-bit counter must not run out during a long run. */
static void seq_guard(struct esp_state *s)
{
	if (s->tx.seq_out > 0x7fffffff)
		s->tx.seq_out = 0;
	if (s->atx.seq_out > 0x7fffffff)
		s->atx.seq_out = 0;
	if (s->seq > 0x7fffffff)
		s->seq = 0;
}

static int tw_enc_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		seq_guard(s);
		if (tw_encap(s, s->in[s->next % NPKT], s->work, &len) != TW_OK)
			return -1;
	}
	return 0;
}

static int evp_enc_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		seq_guard(s);
		if (evp_encap(s, s->in[s->next % NPKT], ++s->seq, s->work, &len) != 0)
			return -1;
	}
	return 0;
}

/* Packets 1..NPKT again and again: the window starts over each round. */
static int tw_dec_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t plen;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (j == 0 && tw_replay_init(s->ah ? &s->arx.replay : &s->rx.replay,
					     TW_REPLAY_WINDOW_DEFAULT) != TW_OK)
			return -1;
		memcpy(s->work, s->pkt[j], s->pkt_len[j]);
		if (tw_decap(s, s->work, s->pkt_len[j], &plen) != 0)
			return -1;
	}
	return 0;
}

static int evp_dec_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t plen;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		memcpy(s->work, s->pkt[j], s->pkt_len[j]);
		if (evp_decap(s, s->work, s->pkt_len[j], &plen) != 0)
			return -1;
	}
	return 0;
}

static int tw_batch_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t hdr = tw_esp_hdr_len(&s->tx);

	while (n > 0) {
		size_t k = n < NPKT ? (size_t)n : NPKT;

		seq_guard(s);
		for (size_t j = 0; j < k; j++) {
			memcpy(s->bwork[j] + hdr, s->in[j], s->size);
			s->batch[j] = (struct tw_esp_pkt){
				.sa = &s->tx, .buf = s->bwork[j], .len = s->size,
				.cap = s->cap, .next_header = NH,
			};
		}
		if (tw_esp_encap_batch(s->batch, k) != TW_OK)
			return -1;
		n -= k;
	}
	return 0;
}

/* ---- once: key | SPI-independent inputs from in[], whole packets ---- */

static int once_prepare(struct esp_state *t, const struct esp_state *s,
			const uint8_t in[BENCH_IN_LEN], uint64_t *seq)
{
	memset(t, 0, sizeof(*t));
	if (xf_init(t, s->xname) != 0)
		return -1;
	t->size = s->size;
	t->in_len = s->in_len;
	t->cap = s->cap;
	memcpy(t->key, in, 44);
	*seq = 1 + (tw_load_be32(in + 44) & 0x7fffffff);
	t->work = malloc(t->cap);
	t->in[0] = malloc(t->cap);
	if (t->work == NULL || t->in[0] == NULL)
		return -1;
	derive(t->in[0], t->size, t->ah, in);
	return 0;
}

static void once_free(struct esp_state *t)
{
	free(t->work);
	free(t->in[0]);
	t->work = t->in[0] = NULL;
	evp_free(t);
	tw_esp_sa_wipe(&t->tx);
	tw_esp_sa_wipe(&t->rx);
	tw_ah_sa_wipe(&t->atx);
	tw_ah_sa_wipe(&t->arx);
}

/* encrypt: the packet; decrypt: the recovered payload (or IPv4 packet),
 * then the packet's first 48 and last 16 octets (header, IV, ICV): both
 * fit the size + BENCH_OUT_MAX octets the harness offers. */
static int once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len,
		       bool evp, bool dec)
{
	struct esp_state t;
	uint64_t seq;
	size_t n = 0, plen = 0;
	uint8_t *pk = NULL;
	int rc = -1;

	if (once_prepare(&t, p, in, &seq) != 0 || *len < t.cap)
		goto out;
	pk = dec ? malloc(t.cap) : out;
	if (pk == NULL)
		goto out;
	if (evp) {
		if (evp_keys(&t) != 0 || evp_encap(&t, t.in[0], seq, pk, &n) != 0)
			goto out;
	} else {
		if (tw_keys(&t) != 0)
			goto out;
		t.tx.seq_out = t.atx.seq_out = seq - 1;
		if (tw_encap(&t, t.in[0], pk, &n) != TW_OK)
			goto out;
	}
	if (dec) {
		memcpy(t.work, pk, n);
		if (evp) {
			if (evp_decap(&t, t.work, n, &plen) != 0)
				goto out;
		} else {
			t.rx.replay.top = t.arx.replay.top = seq - 1;
			if (tw_decap(&t, t.work, n, &plen) != 0)
				goto out;
		}
		/* the payload (ESP: after header and IV; AH: the packet) */
		size_t off = t.ah ? 0 : 8 + t.iv_len;
		if (n < 64 || plen + 64 > *len)
			goto out;
		memcpy(out, t.work + off, plen);
		memcpy(out + plen, pk, 48);
		memcpy(out + plen + 48, pk + n - 16, 16);
		n = plen + 64;
	}
	*len = n;
	rc = 0;
out:
	if (dec)
		free(pk);
	once_free(&t);
	return rc;
}

static int tw_once_enc(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *o, size_t *l)
{
	return once_common(p, in, o, l, false, false);
}
static int tw_once_dec(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *o, size_t *l)
{
	return once_common(p, in, o, l, false, true);
}
static int evp_once_enc(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *o, size_t *l)
{
	return once_common(p, in, o, l, true, false);
}
static int evp_once_dec(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *o, size_t *l)
{
	return once_common(p, in, o, l, true, true);
}

/* ---- AF_ALG: the kernel's gcm(aes) on the same ESP packet ---- */

static int afalg_one(struct esp_state *s, const uint8_t *payload, uint64_t seq, uint8_t *out,
		     size_t *len)
{
	size_t pad = (4 - (s->size + 2) % 4) % 4, ctl = s->size + pad + 2;
	uint8_t nonce[12];

	/* RFC 4106: AAD = SPI | seq, nonce = salt | IV (IV = seq) */
	tw_store_be32(s->abuf, SPI);
	tw_store_be32(s->abuf + 4, (uint32_t)seq);
	memcpy(s->abuf + 8, payload, s->size);
	for (size_t i = 0; i < pad; i++)
		s->abuf[8 + s->size + i] = (uint8_t)(i + 1);
	s->abuf[8 + s->size + pad] = (uint8_t)pad;
	s->abuf[8 + s->size + pad + 1] = NH;
	memcpy(nonce, s->key + 16, 4);
	tw_store_be64(nonce + 4, seq);
	if (bench_afalg_crypt(&s->alg, true, nonce, 12, 8, s->abuf, 8 + ctl, s->abuf,
			      8 + ctl + 16) != (long)(8 + ctl + 16))
		return -1;
	memcpy(out, s->abuf, 8);
	memcpy(out + 8, nonce + 4, 8);
	memcpy(out + 16, s->abuf + 8, ctl + 16);
	*len = 16 + ctl + 16;
	return 0;
}

static int afalg_setup(void *p, const struct bench_thread *t)
{
	struct esp_state *s = p;
	int rc;

	if (setup_common(s, t, "aes-gcm-128", false) != 0)
		return -1;
	s->abuf = malloc(s->cap + 64);
	if (s->abuf == NULL)
		return -1;
	rc = bench_afalg_open(&s->alg, t, "aead", "gcm(aes)", s->key, 16, 16);
	return rc;
}

static int afalg_run(void *p, uint64_t n)
{
	struct esp_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		seq_guard(s);
		if (afalg_one(s, s->in[s->next % NPKT], ++s->seq, s->work, &len) != 0)
			return -1;
	}
	return 0;
}

static int afalg_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct esp_state t;
	char why[BENCH_WHY_MAX];
	struct bench_thread bt = { .nthreads = 1, .why = why };
	uint64_t seq;
	int rc = -1;

	if (once_prepare(&t, p, in, &seq) != 0 || *len < t.cap)
		goto out;
	t.abuf = malloc(t.cap + 64);
	if (t.abuf == NULL ||
	    bench_afalg_open(&t.alg, &bt, "aead", "gcm(aes)", t.key, 16, 16) != 0)
		goto out;
	rc = afalg_one(&t, t.in[0], seq, out, len);
out:
	free(t.abuf);
	bench_afalg_close(&t.alg);
	once_free(&t);
	return rc;
}

/* ---- registration ---- */

#define SETUPS(id, x)                                                          \
	static int setup_##id(void *p, const struct bench_thread *t)           \
	{                                                                      \
		return setup_common(p, t, x, false);                           \
	}                                                                      \
	static int evp_setup_##id(void *p, const struct bench_thread *t)       \
	{                                                                      \
		return setup_common(p, t, x, true);                            \
	}

#define ROW(var, nm, impl_, refs_, what_, setup_, run_, once_, gran)           \
	static const struct bench_scenario var = {                             \
		.name = nm, .impl = impl_, .what = what_, .refs = refs_,       \
		.granule = gran, .sizes = bench_default_sizes,                 \
		.state_size = sizeof(struct esp_state), .setup = setup_,       \
		.run = run_, .once = once_, .teardown = esp_teardown,          \
	};                                                                     \
	BENCH_REGISTER(var)

/* The four rows of a transform: twag and EVP, encapsulate and decapsulate. */
#define XFORM(id, nm, x, desc, extra_refs)                                     \
	SETUPS(id, x)                                                          \
	ROW(sc_##id, nm, "twag", nm ".evp" extra_refs, desc " encapsulate",    \
	    setup_##id, tw_enc_run, tw_once_enc, 0)                            \
	ROW(sc_##id##_evp, nm ".evp", "openssl-evp", NULL,                     \
	    "EVP, contexts reused, one packet per call: " desc,                \
	    evp_setup_##id, evp_enc_run, evp_once_enc, 0)                      \
	ROW(sc_##id##_dec, nm "-dec", "twag", nm "-dec.evp",                   \
	    desc " verify + decapsulate", setup_##id, tw_dec_run, tw_once_dec, 0) \
	ROW(sc_##id##_dec_evp, nm "-dec.evp", "openssl-evp", NULL,             \
	    "EVP, contexts reused: " desc " verify + decrypt",                 \
	    evp_setup_##id, evp_dec_run, evp_once_dec, 0)

XFORM(gcm128, "esp-gcm128", "aes-gcm-128", "ESP AES-GCM-128 (RFC 4106), 16 B ICV,",
      " esp-gcm128.afalg")
XFORM(cbc_sha1, "esp-cbc-sha1", "aes-cbc-128-hmac-sha1",
      "ESP AES-128-CBC + HMAC-SHA1-96,", "")
XFORM(cbc_sha256, "esp-cbc-sha256", "aes-cbc-128-hmac-sha256",
      "ESP AES-128-CBC + HMAC-SHA-256-128,", "")
XFORM(des3_sha1, "esp-3des-sha1", "3des-cbc-hmac-sha1", "ESP 3DES-CBC + HMAC-SHA1-96,", "")
XFORM(ah_sha1, "ah-sha1", "ah-hmac-sha1", "AH HMAC-SHA1-96 over IPv4,", "")
XFORM(ah_md5, "ah-md5", "ah-hmac-md5", "AH HMAC-MD5-96 over IPv4,", "")

static int setup_null(void *p, const struct bench_thread *t)
{
	return setup_common(p, t, "null", false);
}
ROW(sc_null, "esp-null", "twag", NULL,
    "ESP NULL, no ICV: header + copy + trailer, the no-crypto baseline", setup_null,
    tw_enc_run, tw_once_enc, 0)
ROW(sc_null_dec, "esp-null-dec", "twag", NULL,
    "ESP NULL, no ICV: header and trailer checks, the no-crypto baseline", setup_null,
    tw_dec_run, tw_once_dec, 0)

ROW(sc_gcm128_batch, "esp-gcm128-batch", "twag", "esp-gcm128.evp",
    "ESP AES-GCM-128, 16 packets per tw_esp_encap_batch", setup_gcm128, tw_batch_run,
    tw_once_enc, NPKT)
ROW(sc_cbc_sha1_batch, "esp-cbc-sha1-batch", "twag", "esp-cbc-sha1.evp",
    "ESP AES-128-CBC + HMAC-SHA1-96, 16 packets per tw_esp_encap_batch",
    setup_cbc_sha1, tw_batch_run, tw_once_enc, NPKT)
ROW(sc_des3_sha1_batch, "esp-3des-sha1-batch", "twag", "esp-3des-sha1.evp",
    "ESP 3DES-CBC + HMAC-SHA1-96, 16 packets per tw_esp_encap_batch (CBC chains side by side)",
    setup_des3_sha1, tw_batch_run, tw_once_enc, NPKT)
ROW(sc_gcm128_afalg, "esp-gcm128.afalg", "kernel-afalg", NULL,
    "kernel gcm(aes) via AF_ALG on the ESP packet, one sendmsg + read per packet",
    afalg_setup, afalg_run, afalg_once, 0)
