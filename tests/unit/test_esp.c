/*
 * Tests of IPsec ESP (RFC 4303) and AH (RFC 4302): RFC 3602 / SP 800-38A
 * AES-CBC known answers and the RFC 4106-layout GCM vectors; whole ESP and
 * AH packets of every transform compared byte for byte with an independent
 * construction from the RFC layouts using OpenSSL (EVP ciphers, HMAC) on
 * random payloads, sizes, modes, ESN on and off; the CBC IV checked
 * against E_K(nonce) computed by OpenSSL; every inbound failure (truncated,
 * wrong SPI, bad ICV in each region, replay, too old, bad padding, pad
 * length, next header, forged high sequence number), sequence number
 * exhaustion, batches against single calls, portable against accelerated
 * paths in-process.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/esp.h"
#include "../../src/dataplane/esp_internal.h"

enum { BUF = 4096 };

/* ---- known answers ---- */


static void cbc_case(const struct tv_case *c)
{
	uint8_t key[32], iv[16], pt[128], buf[128];
	size_t kn = tv_hex(c, "key", key, sizeof(key));
	size_t n = tv_bytes(c, "plaintext", pt, sizeof(pt));
	struct tw_aes_ctx aes;

	CHECK(tv_hex(c, "iv", iv, 16) == 16);
	if (!CHECK(n % 16 == 0 && tw_aes_init(&aes, key, kn) == TW_OK))
		return;
	memcpy(buf, pt, n);
	tw_esp_cbc_encrypt(&aes, iv, buf, n);
	TV_EXPECT(c, "ciphertext", buf, n);
	tw_esp_cbc_decrypt(&aes, iv, buf, n);
	CHECK_MEM(buf, pt, n);
	/* A different IV changes the first block (and so all of them). */
	iv[15] ^= 1;
	memcpy(buf, pt, n);
	tw_esp_cbc_encrypt(&aes, iv, buf, n);
	uint8_t ct[128];
	CHECK(tv_hex(c, "ciphertext", ct, sizeof(ct)) == n && memcmp(ct, buf, 16) != 0);
	tw_aes_wipe(&aes);
}

/* AES-CBC without padding (RFC 3602 §2.4: ESP pads, the cipher does not)
 * through OpenSSL, as the independent implementation. */
static bool evp_cbc(bool enc, const uint8_t *key, size_t key_len,
		    const uint8_t iv[16], const uint8_t *in, size_t len,
		    uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *ci = key_len == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
	int l = 0, l2 = 0;
	bool ok = x && EVP_CipherInit_ex(x, ci, NULL, key, iv, enc ? 1 : 0) == 1 &&
		  EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
		  EVP_CipherUpdate(x, out, &l, in, (int)len) == 1 &&
		  EVP_CipherFinal_ex(x, out + l, &l2) == 1 &&
		  (size_t)(l + l2) == len;

	EVP_CIPHER_CTX_free(x);
	return ok;
}

/*
 * RFC 3602 §4 cases #5..#8: whole ESP packets, AES-128-CBC with no
 * integrity. The "Pre-encryption Data" is payload | padding | pad length |
 * next header (RFC 4303 §2.4-2.6: padding 1, 2, 3, ...); the test checks
 * that trailer from the vector itself, decrypts the RFC ciphertext with
 * OpenSSL and with tw_esp_cbc_decrypt (both must give that plaintext), then
 * rebuilds the packet with tw_esp_encap_iv (byte for byte SPI | Seq | IV |
 * ciphertext) and opens the RFC packet with tw_esp_decap.
 */
static void esp_packet_case(const struct tv_case *c)
{
	uint8_t key[32], spi[4], seq_b[4], iv[16], payload[128], padding[32];
	uint8_t pad_length[1], next_header[1], ct[160], pt[160], got[160];
	uint8_t rfc_pkt[200], pkt[200];
	size_t kn = tv_hex(c, "key", key, sizeof(key));
	size_t len = tv_hex(c, "payload", payload, sizeof(payload));
	size_t pn = tv_hex(c, "padding", padding, sizeof(padding));
	size_t cn = tv_hex(c, "ciphertext", ct, sizeof(ct));
	const char *mode = tv_str(c, "mode");
	struct tw_esp_config cfg;
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct tw_aes_ctx aes;
	size_t n = 0;

	if (!CHECK(tv_hex(c, "spi", spi, 4) == 4 && tv_hex(c, "seq", seq_b, 4) == 4 &&
		   tv_hex(c, "iv", iv, 16) == 16 &&
		   tv_hex(c, "pad_length", pad_length, 1) == 1 &&
		   tv_hex(c, "next_header", next_header, 1) == 1 && mode != NULL))
		return;
	/* RFC 4303 §2.4: padding 1, 2, 3, ... and its length; the whole
	 * plaintext a multiple of the 16-octet block (RFC 3602 §2.4). */
	bool pad_ok = pn == pad_length[0];
	for (size_t i = 0; i < pn; i++)
		pad_ok = pad_ok && padding[i] == i + 1;
	CHECK(pad_ok);
	if (!CHECK(len + pn + 2 == cn && cn % 16 == 0 && cn > 0))
		return;
	memcpy(pt, payload, len);
	memcpy(pt + len, padding, pn);
	pt[len + pn] = pad_length[0];
	pt[len + pn + 1] = next_header[0];

	/* OpenSSL: the RFC ciphertext decrypts to the RFC plaintext and back. */
	CHECK(evp_cbc(false, key, kn, iv, ct, cn, got) && memcmp(got, pt, cn) == 0);
	CHECK(evp_cbc(true, key, kn, iv, pt, cn, got) && memcmp(got, ct, cn) == 0);

	/* Our AES-CBC, at the CPU level the harness selected. */
	if (!CHECK_OK(tw_aes_init(&aes, key, kn)))
		return;
	memcpy(got, ct, cn);
	tw_esp_cbc_decrypt(&aes, iv, got, cn);
	CHECK_MEM(got, pt, cn);
	tw_esp_cbc_encrypt(&aes, iv, got, cn);
	CHECK_MEM(got, ct, cn);
	tw_aes_wipe(&aes);

	/* The packet on the wire: SPI | Seq | IV | ciphertext (RFC 4303 §2,
	 * RFC 3602 §3), no ICV. */
	memcpy(rfc_pkt, spi, 4);
	memcpy(rfc_pkt + 4, seq_b, 4);
	memcpy(rfc_pkt + 8, iv, 16);
	memcpy(rfc_pkt + 24, ct, cn);
	size_t plen = 24 + cn;
	uint32_t seq = tw_load_be32(seq_b);

	memset(&cfg, 0, sizeof(cfg));
	cfg.spi = tw_load_be32(spi);
	cfg.cipher = TW_ESP_ENC_AES_CBC;
	cfg.integ = TW_ESP_AUTH_NONE;
	cfg.mode = strcmp(mode, "tunnel") == 0 ? TW_ESP_TUNNEL : TW_ESP_TRANSPORT;
	CHECK(cfg.mode == TW_ESP_TUNNEL || strcmp(mode, "transport") == 0);
	cfg.enc_key = key;
	cfg.enc_key_len = kn;
	if (!CHECK_OK(tw_esp_sa_init(&tx, &cfg)))
		return;
	CHECK(tw_esp_encap_len(&tx, len) == plen);
	tx.seq_out = seq - 1;
	if (CHECK_OK(tw_esp_encap_iv(&tx, next_header[0], iv, payload, len, pkt,
				     sizeof(pkt), &n)))
		CHECK(n == plen && memcmp(pkt, rfc_pkt, plen) == 0);
	tw_esp_sa_wipe(&tx);

	/* Inbound: the RFC packet opens to the RFC payload. */
	if (!CHECK_OK(tw_esp_sa_init(&rx, &cfg)))
		return;
	memcpy(pkt, rfc_pkt, plen);
	if (CHECK_OK(tw_esp_decap(&rx, pkt, plen, &v)))
		CHECK(v.off == 24 && v.len == len && v.next_header == next_header[0] &&
		      v.seq == seq && memcmp(pkt + v.off, payload, len) == 0);
	memcpy(pkt, rfc_pkt, plen);
	CHECK_ERR(tw_esp_decap(&rx, pkt, plen, &v), TW_ERR_REPLAY);
	tw_esp_sa_wipe(&rx);

	/* CBC malleability (no ICV here): flipping a bit of the block before
	 * the last flips the same bit of the pad length, which the padding
	 * check must catch (RFC 4303 §2.4), wiping what it decrypted. */
	CHECK_OK(tw_esp_sa_init(&rx, &cfg));
	memcpy(pkt, rfc_pkt, plen);
	pkt[plen - 2 - 16] ^= 0x01;
	CHECK_ERR(tw_esp_decap(&rx, pkt, plen, &v), TW_ERR_DECODE);
	CHECK(rx.stats.bad_padding == 1 && tw_ct_is_zero(pkt + 24, cn));
	tw_esp_sa_wipe(&rx);
	/* And a wrong SPI is not this SA's packet. */
	CHECK_OK(tw_esp_sa_init(&rx, &cfg));
	memcpy(pkt, rfc_pkt, plen);
	pkt[3] ^= 0x01;
	CHECK_ERR(tw_esp_decap(&rx, pkt, plen, &v), TW_ERR_NOTFOUND);
	tw_esp_sa_wipe(&rx);
}

/* esp_cbc.vec holds bare AES-CBC cases and whole ESP packets (with spi). */
static void esp_cbc_vec_case(const struct tv_case *c)
{
	if (tv_has(c, "spi"))
		esp_packet_case(c);
	else
		cbc_case(c);
}

/* RFC 4106 §4: nonce = salt | explicit IV; the ICV is the leading
 * octets of the GCM tag. */
static void gcm4106_case(const struct tv_case *c)
{
	uint8_t key[36], iv[8], aad[64], pt[128], ct[160], out[160], nonce[12];
	size_t kn = tv_hex(c, "key", key, sizeof(key));
	size_t an = tv_has(c, "aad") ? tv_bytes(c, "aad", aad, sizeof(aad)) : 0;
	size_t pn = tv_has(c, "plaintext") ? tv_bytes(c, "plaintext", pt, sizeof(pt)) : 0;
	size_t cn = tv_hex(c, "ciphertext", ct, sizeof(ct));
	size_t icv = cn - pn;
	struct tw_gcm_ctx g;

	CHECK(tv_hex(c, "iv", iv, 8) == 8);
	if (!CHECK((kn == 20 || kn == 36) && (icv == 8 || icv == 12 || icv == 16)))
		return;
	memcpy(nonce, key + kn - 4, 4);
	memcpy(nonce + 4, iv, 8);
	if (!CHECK_OK(tw_gcm_init(&g, key, kn - 4)))
		return;
	CHECK_OK(tw_gcm_encrypt(&g, nonce, aad, an, pt, out, pn, out + pn, icv));
	TV_EXPECT(c, "ciphertext", out, cn);
	CHECK_OK(tw_gcm_decrypt(&g, nonce, aad, an, ct, out, pn, ct + pn, icv));
	CHECK_MEM(out, pt, pn);
	ct[pn] ^= 0x01; /* flipped ICV bit */
	CHECK_ERR(tw_gcm_decrypt(&g, nonce, aad, an, ct, out, pn, ct + pn, icv),
		  TW_ERR_AUTH);
	tw_gcm_wipe(&g);
}

/* ---- independent construction with OpenSSL ---- */

struct ref {
	const char *name;
	struct tw_esp_config cfg;
	uint8_t ekey[40], akey[32];
};

static const char *const names[] = {
	"aes-gcm-128", "aes-gcm-256", "aes-cbc-128-hmac-sha1",
	"aes-cbc-256-hmac-sha1", "aes-cbc-128-hmac-sha256",
	"aes-cbc-256-hmac-sha256", "aes-cbc-128-hmac-md5",
	"3des-cbc-hmac-sha1", "null-hmac-sha1", "null-hmac-md5", "null",
};
enum { NNAMES = sizeof(names) / sizeof(names[0]) };

static void ref_make(struct ref *r, const char *name, bool esn, uint32_t mode)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	if (!CHECK_OK(tw_esp_transform(name, &r->cfg)))
		return;
	tw_test_random(r->ekey, sizeof(r->ekey));
	tw_test_random(r->akey, sizeof(r->akey));
	r->cfg.enc_key = r->ekey;
	r->cfg.auth_key = r->akey;
	r->cfg.spi = 0x100 + (tw_test_random_u32() & 0xffff);
	r->cfg.esn = esn;
	r->cfg.mode = mode;
}

static const EVP_CIPHER *ref_cipher(const struct ref *r)
{
	switch (r->cfg.cipher) {
	case TW_ESP_ENC_AES_CBC:
		return r->cfg.enc_key_len == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
	case TW_ESP_ENC_3DES_CBC:
		return EVP_des_ede3_cbc();
	case TW_ESP_ENC_AES_GCM:
		return r->cfg.enc_key_len == 20 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
	default:
		return NULL;
	}
}

static const EVP_MD *ref_md(const struct ref *r, size_t *icv)
{
	switch (r->cfg.integ) {
	case TW_ESP_AUTH_HMAC_SHA1_96: *icv = 12; return EVP_sha1();
	case TW_ESP_AUTH_HMAC_SHA256_128: *icv = 16; return EVP_sha256();
	case TW_ESP_AUTH_HMAC_MD5_96: *icv = 12; return EVP_md5();
	default: *icv = 0; return NULL;
	}
}

/*
 * RFC 4303 §2 packet built from the RFC text alone: SPI | Seq(low) | IV |
 * C | ICV, C = E(payload | 1, 2, .. | pad length | next header), padding to
 * the block (CBC) or 4 octets, ICV over SPI..C (| Seq high with ESN) or,
 * for GCM, the tag with AAD SPI | [Seq high |] Seq low (RFC 4106 §5).
 * pad_delta / padbyte_delta corrupt the trailer for the negative tests.
 */
static size_t ref_esp(const struct ref *r, uint64_t seq, const uint8_t *iv,
		      const uint8_t *payload, size_t len, uint8_t nh, uint8_t *out,
		      int pad_len_delta, int pad_byte_delta)
{
	size_t blk = r->cfg.cipher == TW_ESP_ENC_AES_CBC ? 16
		     : r->cfg.cipher == TW_ESP_ENC_3DES_CBC ? 8 : 4;
	size_t ivl = r->cfg.cipher == TW_ESP_ENC_AES_CBC ? 16
		     : r->cfg.cipher == TW_ESP_ENC_NULL ? 0 : 8;
	size_t pad = (blk - (len + 2) % blk) % blk, ctl = len + pad + 2, icv = 0;
	const EVP_MD *md = ref_md(r, &icv);
	const EVP_CIPHER *ci = ref_cipher(r);
	uint8_t *ct = out + 8 + ivl;
	int l = 0, l2 = 0;

	tw_store_be32(out, r->cfg.spi);
	tw_store_be32(out + 4, (uint32_t)seq);
	memcpy(out + 8, iv, ivl);
	memcpy(ct, payload, len);
	for (size_t i = 0; i < pad; i++)
		ct[len + i] = (uint8_t)(i + 1 + (i == 0 ? pad_byte_delta : 0));
	ct[len + pad] = (uint8_t)(pad + pad_len_delta);
	ct[len + pad + 1] = nh;
	if (r->cfg.cipher == TW_ESP_ENC_AES_GCM) {
		uint8_t nonce[12], aad[12];
		size_t al = r->cfg.esn ? 12 : 8;
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

		memcpy(nonce, r->ekey + r->cfg.enc_key_len - 4, 4);
		memcpy(nonce + 4, iv, 8);
		tw_store_be32(aad, r->cfg.spi);
		if (r->cfg.esn) {
			tw_store_be32(aad + 4, (uint32_t)(seq >> 32));
			tw_store_be32(aad + 8, (uint32_t)seq);
		} else {
			tw_store_be32(aad + 4, (uint32_t)seq);
		}
		icv = r->cfg.icv_len ? r->cfg.icv_len : 16;
		bool ok = x && EVP_EncryptInit_ex(x, ci, NULL, r->ekey, nonce) == 1 &&
			  EVP_EncryptUpdate(x, NULL, &l, aad, (int)al) == 1 &&
			  EVP_EncryptUpdate(x, ct, &l, ct, (int)ctl) == 1 &&
			  EVP_EncryptFinal_ex(x, ct + l, &l2) == 1 &&
			  EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, (int)icv, ct + ctl) == 1;
		EVP_CIPHER_CTX_free(x);
		CHECK(ok);
		return 8 + ivl + ctl + icv;
	}
	if (ci != NULL) {
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		bool ok = x && EVP_EncryptInit_ex(x, ci, NULL, r->ekey, iv) == 1 &&
			  EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
			  EVP_EncryptUpdate(x, ct, &l, ct, (int)ctl) == 1 &&
			  EVP_EncryptFinal_ex(x, ct + l, &l2) == 1;
		EVP_CIPHER_CTX_free(x);
		CHECK(ok);
	}
	if (md != NULL) {
		uint8_t mac[EVP_MAX_MD_SIZE], tmp[BUF + 64];
		unsigned ml = 0;
		size_t n = 8 + ivl + ctl;

		memcpy(tmp, out, n);
		if (r->cfg.esn) {
			tw_store_be32(tmp + n, (uint32_t)(seq >> 32));
			n += 4;
		}
		CHECK(HMAC(md, r->akey, (int)r->cfg.auth_key_len, tmp, n, mac, &ml) != NULL);
		memcpy(ct + ctl, mac, icv);
	}
	return 8 + ivl + ctl + icv;
}

/* SP 800-38A Appendix C IV as esp.c derives it, recomputed with OpenSSL. */
static void ref_cbc_iv(const struct ref *r, uint64_t seq, uint8_t iv[16])
{
	uint8_t n[16] = { 0 };
	int l = 0;
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *ci;

	if (r->cfg.cipher == TW_ESP_ENC_AES_CBC) {
		tw_store_be32(n, r->cfg.spi);
		tw_store_be64(n + 8, seq);
		ci = r->cfg.enc_key_len == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
	} else {
		tw_store_be64(n, seq);
		ci = EVP_des_ede3_ecb();
	}
	CHECK(x && EVP_EncryptInit_ex(x, ci, NULL, r->ekey, NULL) == 1 &&
	      EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
	      EVP_EncryptUpdate(x, iv, &l, n, EVP_CIPHER_block_size(ci)) == 1);
	EVP_CIPHER_CTX_free(x);
}

/* A random payload; in tunnel mode an inner IPv4 or IPv6 packet. */
static size_t make_payload(uint8_t *p, size_t max, uint32_t mode, uint8_t *nh)
{
	size_t len = tw_test_random_u32() % max;

	tw_test_random(p, len);
	*nh = (uint8_t)(tw_test_random_u32() % 250 + 1);
	if (mode == TW_ESP_TUNNEL) {
		if (len < 40)
			len = 40;
		bool v6 = tw_test_random_u32() & 1;
		p[0] = (uint8_t)((v6 ? 0x60 : 0x45) | (p[0] & 0x0f & (v6 ? 0x0f : 0)));
		*nh = v6 ? TW_ESP_NH_IPV6 : TW_ESP_NH_IPV4;
	}
	return len;
}

static void cross_check(void)
{
	static uint8_t payload[BUF], pkt[BUF + 128], exp[BUF + 128];
	unsigned bad = 0, runs = 0;

	for (int it = 0; it < 400; it++) {
		const char *name = names[it % NNAMES];
		bool esn = (it / NNAMES) & 1;
		uint32_t mode = (it / (2 * NNAMES)) & 1;
		struct ref r;
		struct tw_esp_sa tx, rx;
		struct tw_esp_view v;
		uint8_t nh, ivb[16];
		size_t n = 0;

		ref_make(&r, name, esn, mode);
		if (r.cfg.cipher == TW_ESP_ENC_AES_GCM && (it % 3) != 0)
			r.cfg.icv_len = (it % 3) == 1 ? 8 : 12;
		if (tw_esp_sa_init(&tx, &r.cfg) != TW_OK || tw_esp_sa_init(&rx, &r.cfg) != TW_OK) {
			bad++;
			continue;
		}
		/* Near the 2^32 boundary now and then: ESN carries into the high
		 * half (only in the ICV/AAD), 32-bit stays below it. */
		uint64_t start = (it % 4 == 3) ? (esn ? 0xfffffff0ull + it % 32
						      : 0xffffff00ull)
					       : tw_test_random_u32() % 1000;
		tx.seq_out = start;
		rx.replay.top = start; /* receiver in step with the sender */
		for (int k = 0; k < 3; k++, runs++) {
			size_t len = make_payload(payload, 1600, mode, &nh);
			uint64_t seq = tx.seq_out + 1;
			int err = tw_esp_encap(&tx, mode == TW_ESP_TUNNEL ? 0 : nh,
					       payload, len, pkt, sizeof(pkt), &n);

			if (err != TW_OK || n != tw_esp_encap_len(&tx, len)) {
				bad++;
				continue;
			}
			/* The IV the sender chose: GCM the sequence number,
			 * CBC E_K(nonce). */
			size_t ivl = tx.iv_len;
			if (r.cfg.cipher == TW_ESP_ENC_AES_GCM) {
				tw_store_be64(ivb, seq);
				bad += memcmp(ivb, pkt + 8, 8) != 0;
			} else if (ivl != 0) {
				ref_cbc_iv(&r, seq, ivb);
				bad += memcmp(ivb, pkt + 8, ivl) != 0;
			}
			size_t m = ref_esp(&r, seq, pkt + 8, payload, len, nh, exp, 0, 0);
			bad += m != n || memcmp(exp, pkt, n) != 0;
			/* The receiver opens OpenSSL's packet. */
			err = tw_esp_decap(&rx, exp, m, &v);
			bad += err != TW_OK || v.len != len || v.seq != seq ||
			       v.next_header != nh || memcmp(exp + v.off, payload, len) != 0;
		}
		bad += rx.stats.in_ok != 3 || tx.stats.out_ok != 3;
		tw_esp_sa_wipe(&tx);
		tw_esp_sa_wipe(&rx);
	}
	CHECK(runs == 1200);
	CHECK(bad == 0);
}

/* ---- inbound failures ---- */

static void pair(struct tw_esp_sa *tx, struct tw_esp_sa *rx, struct ref *r,
		 const char *name, bool esn, uint32_t mode)
{
	ref_make(r, name, esn, mode);
	CHECK_OK(tw_esp_sa_init(tx, &r->cfg));
	CHECK_OK(tw_esp_sa_init(rx, &r->cfg));
}

static void negative(const char *name)
{
	static uint8_t payload[600], pkt[800], copy[800];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct ref r;
	size_t n, len = 100 + tw_test_random_u32() % 400;
	uint8_t nh = 17;

	pair(&tx, &rx, &r, name, false, TW_ESP_TRANSPORT);
	tw_test_random(payload, len);
	CHECK_OK(tw_esp_encap(&tx, nh, payload, len, pkt, sizeof(pkt), &n));
	memcpy(copy, pkt, n);

	/* Truncated: every length below the minimum, and one short. */
	size_t min = tw_esp_hdr_len(&rx) + 2 + rx.icv_len;
	for (size_t l = 0; l < min; l++)
		CHECK_ERR(tw_esp_decap(&rx, pkt, l, &v), TW_ERR_LENGTH);
	if (rx.cipher == TW_ESP_ENC_AES_CBC || rx.cipher == TW_ESP_ENC_3DES_CBC)
		CHECK_ERR(tw_esp_decap(&rx, pkt, n - 1, &v), TW_ERR_LENGTH);
	else if (rx.integ != TW_ESP_AUTH_NONE || rx.cipher == TW_ESP_ENC_AES_GCM)
		CHECK_ERR(tw_esp_decap(&rx, pkt, n - 1, &v), TW_ERR_AUTH);
	/* Wrong SPI. */
	pkt[3] ^= 1;
	CHECK_ERR(tw_esp_decap(&rx, pkt, n, &v), TW_ERR_NOTFOUND);
	pkt[3] ^= 1;
	bool has_icv = rx.icv_len != 0;
	if (has_icv) {
		/* One flipped bit anywhere after the SPI: sequence number, IV,
		 * ciphertext, ICV. Nothing decrypted is released. */
		size_t where[] = { 7, 8, tw_esp_hdr_len(&rx), n / 2, n - rx.icv_len - 1,
				   n - rx.icv_len, n - 1 };
		for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
			memcpy(pkt, copy, n);
			pkt[where[i]] ^= 0x20;
			int err = tw_esp_decap(&rx, pkt, n, &v);
			CHECK(err == TW_ERR_AUTH);
			/* CBC: untouched ciphertext; GCM: wiped */
			if (rx.cipher == TW_ESP_ENC_AES_GCM)
				CHECK(tw_ct_is_zero(pkt + tw_esp_hdr_len(&rx),
						    n - tw_esp_hdr_len(&rx) - rx.icv_len));
			else
				CHECK(memcmp(pkt + tw_esp_hdr_len(&rx), copy + tw_esp_hdr_len(&rx),
					     n - tw_esp_hdr_len(&rx) - rx.icv_len - 1) == 0 ||
				      where[i] >= tw_esp_hdr_len(&rx));
		}
		CHECK(rx.stats.bad_icv >= 7);
		CHECK(rx.replay.top == 0); /* no failed packet moved the window */
	}
	/* The genuine packet, then its replay. */
	memcpy(pkt, copy, n);
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	CHECK(v.len == len && memcmp(pkt + v.off, payload, len) == 0 && v.next_header == nh);
	memcpy(pkt, copy, n);
	CHECK_ERR(tw_esp_decap(&rx, pkt, n, &v), TW_ERR_REPLAY);
	CHECK(rx.stats.replayed == 1);

	/* Too old: 64 newer packets push seq 1 out of the window. */
	for (int i = 0; i < 64; i++) {
		CHECK_OK(tw_esp_encap(&tx, nh, payload, 16, pkt, sizeof(pkt), &n));
		CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	}
	memcpy(pkt, copy, n);
	CHECK_ERR(tw_esp_decap(&rx, pkt, tw_esp_encap_len(&rx, len), &v), TW_ERR_RANGE);
	CHECK(rx.stats.too_old == 1);

	/* Bad padding contents and an impossible pad length, with a valid
	 * ICV (built by the reference, so only the trailer is wrong): the
	 * decrypted octets are wiped. */
	for (int kind = 0; kind < 2; kind++) {
		uint64_t seq = tx.seq_out + 1 + (uint64_t)kind;
		size_t l = 21; /* 23 octets: at least one pad octet at any alignment */
		uint8_t iv[16];

		tw_test_random(iv, sizeof(iv));
		size_t m = ref_esp(&r, seq, iv, payload, l, nh, pkt, kind ? 250 : 0,
				   kind ? 0 : 7);
		int err = tw_esp_decap(&rx, pkt, m, &v);
		CHECK_ERR(err, TW_ERR_DECODE);
		CHECK(tw_ct_is_zero(pkt + tw_esp_hdr_len(&rx), m - tw_esp_hdr_len(&rx) - rx.icv_len));
	}
	CHECK(rx.stats.bad_padding == 2);
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);
}

/* A forged packet with a huge sequence number and a bad ICV never moves
 * the window; an honest one then still gets in. */
static void forged_high_seq(void)
{
	static uint8_t payload[64], pkt[256];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct ref r;
	size_t n;

	pair(&tx, &rx, &r, "aes-cbc-128-hmac-sha1", false, TW_ESP_TRANSPORT);
	tw_test_random(payload, sizeof(payload));
	CHECK_OK(tw_esp_encap(&tx, 6, payload, 40, pkt, sizeof(pkt), &n));
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	tx.seq_out = 0x7ffffff0;
	CHECK_OK(tw_esp_encap(&tx, 6, payload, 40, pkt, sizeof(pkt), &n));
	pkt[n - 1] ^= 1;
	CHECK_ERR(tw_esp_decap(&rx, pkt, n, &v), TW_ERR_AUTH);
	CHECK(rx.replay.top == 1);
	tx.seq_out = 1;
	CHECK_OK(tw_esp_encap(&tx, 6, payload, 40, pkt, sizeof(pkt), &n));
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	CHECK(v.seq == 2 && rx.replay.top == 2);
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);
}

/* §3.3.3: without ESN the sender stops at 2^32 - 1; with ESN it goes on
 * and the receiver infers the high half. */
static void seq_exhaustion(void)
{
	static uint8_t payload[64], pkt[256];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct ref r;
	size_t n;

	pair(&tx, &rx, &r, "aes-gcm-128", false, TW_ESP_TRANSPORT);
	tx.seq_out = 0xfffffffeu;
	CHECK_OK(tw_esp_encap(&tx, 6, payload, 10, pkt, sizeof(pkt), &n));
	CHECK(tw_load_be32(pkt + 4) == 0xffffffffu);
	CHECK_ERR(tw_esp_encap(&tx, 6, payload, 10, pkt, sizeof(pkt), &n), TW_ERR_STATE);
	CHECK_ERR(tw_esp_encap(&tx, 6, payload, 10, pkt, sizeof(pkt), &n), TW_ERR_STATE);
	CHECK(tx.stats.seq_exhausted == 2 && tx.seq_out == 0xffffffffu);
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);

	pair(&tx, &rx, &r, "aes-cbc-128-hmac-sha256", true, TW_ESP_TRANSPORT);
	tx.seq_out = 0xfffffff0u;
	rx.replay.top = 0xfffffff0u;
	for (int i = 0; i < 40; i++) {
		CHECK_OK(tw_esp_encap(&tx, 6, payload, 10, pkt, sizeof(pkt), &n));
		CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	}
	CHECK(v.seq == 0x100000018ull && rx.replay.top == 0x100000018ull);
	/* Only the low half is on the wire. */
	CHECK(tw_load_be32(pkt + 4) == 0x18);
	tx.seq_out = UINT64_MAX;
	CHECK_ERR(tw_esp_encap(&tx, 6, payload, 10, pkt, sizeof(pkt), &n), TW_ERR_STATE);
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&rx);
}

static void tunnel_mode(void)
{
	static uint8_t inner[200], pkt[400], bad_inner[64];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct ref r;
	size_t n;

	pair(&tx, &rx, &r, "aes-gcm-256", false, TW_ESP_TUNNEL);
	tw_test_random(inner, sizeof(inner));
	inner[0] = 0x45;
	CHECK_OK(tw_esp_encap(&tx, 0, inner, sizeof(inner), pkt, sizeof(pkt), &n));
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	CHECK(v.next_header == TW_ESP_NH_IPV4 && v.len == sizeof(inner));
	inner[0] = 0x60;
	CHECK_OK(tw_esp_encap(&tx, TW_ESP_NH_IPV6, inner, sizeof(inner), pkt, sizeof(pkt), &n));
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	CHECK(v.next_header == TW_ESP_NH_IPV6);
	/* nh contradicting the inner version, or no IP at all. */
	CHECK_ERR(tw_esp_encap(&tx, TW_ESP_NH_IPV4, inner, sizeof(inner), pkt,
			       sizeof(pkt), &n), TW_ERR_INVAL);
	bad_inner[0] = 0x12;
	CHECK_ERR(tw_esp_encap(&tx, 0, bad_inner, sizeof(bad_inner), pkt, sizeof(pkt), &n),
		  TW_ERR_INVAL);
	CHECK_ERR(tw_esp_encap(&tx, 0, bad_inner, 0, pkt, sizeof(pkt), &n), TW_ERR_INVAL);
	/* Receiver in tunnel mode: a transport packet (nh 6) is refused
	 * after it verified, and wiped. */
	struct tw_esp_config c2 = r.cfg;
	struct tw_esp_sa tx2;
	c2.mode = TW_ESP_TRANSPORT;
	CHECK_OK(tw_esp_sa_init(&tx2, &c2));
	tx2.seq_out = 100;
	CHECK_OK(tw_esp_encap(&tx2, 6, inner, 50, pkt, sizeof(pkt), &n));
	CHECK_ERR(tw_esp_decap(&rx, pkt, n, &v), TW_ERR_UNSUPPORTED);
	CHECK(tw_ct_is_zero(pkt + 16, n - 16 - 16));
	CHECK(rx.stats.bad_next_header == 1);
	/* A dummy packet (nh 59) is handed back for the caller to drop. */
	CHECK_OK(tw_esp_encap(&tx2, TW_ESP_NH_NONE, inner, 7, pkt, sizeof(pkt), &n));
	CHECK_OK(tw_esp_decap(&rx, pkt, n, &v));
	CHECK(v.next_header == TW_ESP_NH_NONE);
	tw_esp_sa_wipe(&tx);
	tw_esp_sa_wipe(&tx2);
	tw_esp_sa_wipe(&rx);
}

static void config_errors(void)
{
	struct tw_esp_config c;
	struct tw_esp_sa sa;
	uint8_t k[64] = { 1 };

	memset(&c, 0, sizeof(c));
	CHECK_ERR(tw_esp_transform("aes-ccm-128", &c), TW_ERR_NOTFOUND);
	CHECK_OK(tw_esp_transform("aes-cbc-128-hmac-sha1", &c));
	c.enc_key = k;
	c.auth_key = k;
	c.spi = 0;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_INVAL); /* SPI 0 reserved */
	c.spi = 1000;
	CHECK_OK(tw_esp_sa_init(&sa, &c));
	c.enc_key_len = 15;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_LENGTH);
	c.enc_key_len = 16;
	c.auth_key_len = 16;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_LENGTH);
	c.auth_key_len = 20;
	c.replay_window = 8;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_RANGE);
	c.replay_window = 0;
	/* NULL + no integrity only when asked for by name. */
	CHECK_OK(tw_esp_transform("null", &c));
	c.allow_null_null = false;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_INVAL);
	c.allow_null_null = true;
	CHECK_OK(tw_esp_sa_init(&sa, &c));
	/* ESN needs an ICV to confirm the inferred high half (§2.2.1). */
	c.esn = true;
	CHECK_OK(tw_esp_transform("aes-cbc-128-hmac-sha1", &c));
	CHECK_OK(tw_esp_sa_init(&sa, &c));
	c.integ = TW_ESP_AUTH_NONE;
	c.auth_key_len = 0;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_INVAL);
	c.esn = false;
	CHECK_OK(tw_esp_sa_init(&sa, &c));
	/* GCM takes no separate integrity transform, and only 8/12/16 ICVs. */
	CHECK_OK(tw_esp_transform("aes-gcm-128", &c));
	c.integ = TW_ESP_AUTH_HMAC_SHA1_96;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_INVAL);
	c.integ = TW_ESP_AUTH_NONE;
	c.icv_len = 10;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_LENGTH);
	c.icv_len = 0;
	c.enc_key_len = 16;
	CHECK_ERR(tw_esp_sa_init(&sa, &c), TW_ERR_LENGTH); /* salt missing */
	c.enc_key_len = 20;
	CHECK_OK(tw_esp_sa_init(&sa, &c));
	/* Output too small. */
	uint8_t out[64];
	size_t n;
	CHECK_ERR(tw_esp_encap(&sa, 6, k, 40, out, sizeof(out), &n), TW_ERR_OVERFLOW);
	CHECK(sa.seq_out == 0); /* no number spent */
	CHECK_OK(tw_esp_encap(&sa, 6, k, 20, out, sizeof(out), &n));
	tw_esp_sa_wipe(&sa);
}

/* In place: the payload already sits at out + header. */
static void in_place(void)
{
	static uint8_t buf[2048], payload[1500];
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct ref r;
	size_t n;

	for (unsigned i = 0; i < NNAMES; i++) {
		pair(&tx, &rx, &r, names[i], false, TW_ESP_TRANSPORT);
		tw_test_random(payload, sizeof(payload));
		memcpy(buf + tw_esp_hdr_len(&tx), payload, 1400);
		CHECK_OK(tw_esp_encap(&tx, 17, buf + tw_esp_hdr_len(&tx), 1400, buf,
				      sizeof(buf), &n));
		CHECK_OK(tw_esp_decap(&rx, buf, n, &v));
		CHECK(v.len == 1400 && memcmp(buf + v.off, payload, 1400) == 0);
		/* Payload overlapping the header the other way. */
		memcpy(buf, payload, 1400);
		CHECK_OK(tw_esp_encap(&tx, 17, buf, 1400, buf, sizeof(buf), &n));
		CHECK_OK(tw_esp_decap(&rx, buf, n, &v));
		CHECK(v.len == 1400 && memcmp(buf + v.off, payload, 1400) == 0);
		tw_esp_sa_wipe(&tx);
		tw_esp_sa_wipe(&rx);
	}
}

/* Batches: the same packets as one-by-one calls on twin SAs, the SAs'
 * transforms named by xf (NSA of them). */
static void batch(const char *const *xf)
{
	enum { NSA = 6, NPKT = 70 };
	static uint8_t bufs[NPKT][1700], single[NPKT][1700], payload[NPKT][1500];
	static struct tw_esp_sa tx[NSA], tx1[NSA], rx[NSA], rx1[NSA];
	struct tw_esp_pkt p[NPKT];
	struct ref r[NSA];
	size_t lens[NPKT], n1[NPKT];
	uint8_t nhs[NPKT];
	unsigned bad = 0;

	for (int s = 0; s < NSA; s++) {
		ref_make(&r[s], xf[s], s >= 3, TW_ESP_TRANSPORT);
		bad += tw_esp_sa_init(&tx[s], &r[s].cfg) != TW_OK;
		bad += tw_esp_sa_init(&tx1[s], &r[s].cfg) != TW_OK;
		bad += tw_esp_sa_init(&rx[s], &r[s].cfg) != TW_OK;
		bad += tw_esp_sa_init(&rx1[s], &r[s].cfg) != TW_OK;
	}
	memset(p, 0, sizeof(p));
	for (int i = 0; i < NPKT; i++) {
		int s = (int)(tw_test_random_u32() % NSA);

		lens[i] = tw_test_random_u32() % 1500;
		nhs[i] = (uint8_t)(1 + tw_test_random_u32() % 200);
		tw_test_random(payload[i], lens[i]);
		p[i].sa = &tx[s];
		p[i].buf = bufs[i];
		p[i].cap = sizeof(bufs[i]);
		p[i].len = lens[i];
		p[i].next_header = nhs[i];
		memcpy(bufs[i] + tw_esp_hdr_len(&tx[s]), payload[i], lens[i]);
		bad += tw_esp_encap(&tx1[s], nhs[i], payload[i], lens[i], single[i],
				    sizeof(single[i]), &n1[i]) != TW_OK;
	}
	CHECK_OK(tw_esp_encap_batch(p, NPKT));
	for (int i = 0; i < NPKT; i++)
		bad += p[i].status != TW_OK || p[i].len != n1[i] ||
		       memcmp(bufs[i], single[i], n1[i]) != 0;
	CHECK(bad == 0);

	/* Decap: swap packets 5 and 6 (out of order is fine), duplicate 10
	 * as 11 on the same SA (the second is a replay), corrupt 20. */
	for (int i = 0; i < NPKT; i++)
		p[i].sa = &rx[p[i].sa - tx];
	memcpy(bufs[11], bufs[10], p[10].len);
	p[11].len = p[10].len;
	p[11].sa = p[10].sa;
	bufs[20][p[20].len - 1] ^= 0x40;
	int err = tw_esp_decap_batch(p, NPKT);
	CHECK(err == TW_ERR_REPLAY);
	for (int i = 0; i < NPKT; i++) {
		int want = i == 11 ? TW_ERR_REPLAY : i == 20 ? TW_ERR_AUTH : TW_OK;

		if (p[i].status != want) {
			bad++;
			continue;
		}
		if (want == TW_OK)
			bad += p[i].view.len != lens[i] || p[i].next_header != nhs[i] ||
			       memcmp(bufs[i] + p[i].view.off, payload[i], lens[i]) != 0;
	}
	CHECK(bad == 0);
	/* Argument checks. */
	CHECK_ERR(tw_esp_encap_batch(NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_esp_decap_batch(NULL, 0));
	p[0].sa = NULL;
	CHECK_ERR(tw_esp_decap_batch(p, 1), TW_ERR_INVAL);
	for (int s = 0; s < NSA; s++) {
		tw_esp_sa_wipe(&tx[s]);
		tw_esp_sa_wipe(&tx1[s]);
		tw_esp_sa_wipe(&rx[s]);
		tw_esp_sa_wipe(&rx1[s]);
	}
}

/* Portable and accelerated SAs produce the same packets (in-process). */
static void paths(void)
{
	static uint8_t payload[3000], a[3200], b[3200];
	unsigned bad = 0;

	for (unsigned i = 0; i < NNAMES; i++) {
		struct ref r;
		struct tw_esp_sa sp, sf, rp;
		struct tw_esp_view v;
		size_t na, nb, len = 1 + tw_test_random_u32() % sizeof(payload);

		ref_make(&r, names[i], i & 1, TW_ESP_TRANSPORT);
		tw_test_random(payload, len);
		tw_cpu_restrict(0);
		bad += tw_esp_sa_init(&sp, &r.cfg) != TW_OK;
		bad += tw_esp_sa_init(&rp, &r.cfg) != TW_OK;
		bad += tw_esp_encap(&sp, 17, payload, len, a, sizeof(a), &na) != TW_OK;
		tw_cpu_restrict(UINT32_MAX);
		bad += tw_esp_sa_init(&sf, &r.cfg) != TW_OK;
		bad += tw_esp_encap(&sf, 17, payload, len, b, sizeof(b), &nb) != TW_OK;
		bad += na != nb || memcmp(a, b, na) != 0;
		/* A packet from the accelerated sender opened by the portable
		 * receiver. */
		tw_cpu_restrict(0);
		bad += tw_esp_decap(&rp, b, nb, &v) != TW_OK || v.len != len ||
		       memcmp(b + v.off, payload, len) != 0;
		tw_cpu_restrict(UINT32_MAX);
		tw_esp_sa_wipe(&sp);
		tw_esp_sa_wipe(&sf);
		tw_esp_sa_wipe(&rp);
	}
	CHECK(bad == 0);
}

/* ---- AH ---- */

static uint16_t ref_cksum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static size_t make_ipv4(uint8_t *p, size_t payload_len, uint8_t proto)
{
	size_t len = 20 + payload_len;

	tw_test_random(p, len);
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	p[6] = 0x40; /* DF */
	p[7] = 0;
	p[9] = proto;
	p[10] = p[11] = 0;
	uint16_t c = ref_cksum(p);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return len;
}

static void ah_tests(void)
{
	static uint8_t ip[1600], pkt[1700], exp[1700], orig[1600];
	static const struct { uint32_t integ; size_t klen, icv; const char *md; } t[] = {
		{ TW_ESP_AUTH_HMAC_SHA1_96, 20, 12, "sha1" },
		{ TW_ESP_AUTH_HMAC_MD5_96, 16, 12, "md5" },
		{ TW_ESP_AUTH_HMAC_SHA256_128, 32, 16, "sha256" },
	};
	unsigned bad = 0;

	for (int it = 0; it < 60; it++) {
		struct tw_esp_config c;
		struct tw_ah_sa tx, rx;
		uint8_t key[32];
		bool esn = it & 1;
		int ti = (it / 2) % 3;
		size_t n, m, plen = tw_test_random_u32() % 1400;
		uint64_t seq;

		memset(&c, 0, sizeof(c));
		tw_test_random(key, sizeof(key));
		c.spi = 0x4321;
		c.integ = t[ti].integ;
		c.auth_key = key;
		c.auth_key_len = t[ti].klen;
		c.esn = esn;
		bad += tw_ah_sa_init(&tx, &c) != TW_OK || tw_ah_sa_init(&rx, &c) != TW_OK;
		if (esn) {
			tx.seq_out = 0x1fffffffeull;
			rx.replay.top = 0x1fffffff0ull;
		}
		size_t len = make_ipv4(ip, plen, 17);
		memcpy(orig, ip, len);
		bad += tw_ah_encap(&tx, ip, len, pkt, sizeof(pkt), &n) != TW_OK;
		bad += n != len + 12 + t[ti].icv;
		uint64_t s = tx.seq_out;

		/* Reference: RFC 4302 §2 layout, ICV by OpenSSL over the packet
		 * with TOS, flags/offset, TTL, checksum and ICV zeroed. */
		memcpy(exp, orig, 20);
		exp[9] = 51;
		exp[2] = (uint8_t)(n >> 8);
		exp[3] = (uint8_t)n;
		uint8_t *ah = exp + 20;
		ah[0] = 17;
		ah[1] = (uint8_t)((12 + t[ti].icv) / 4 - 2);
		ah[2] = ah[3] = 0;
		tw_store_be32(ah + 4, 0x4321);
		tw_store_be32(ah + 8, (uint32_t)s);
		memcpy(ah + 12 + t[ti].icv, orig + 20, plen);
		uint8_t mut[1700], mac[64];
		unsigned ml;
		memcpy(mut, exp, n);
		mut[1] = 0;
		mut[6] = mut[7] = 0;
		mut[8] = 0;
		mut[10] = mut[11] = 0;
		memset(mut + 32, 0, t[ti].icv);
		size_t mn = n;
		if (esn) {
			tw_store_be32(mut + n, (uint32_t)(s >> 32));
			mn += 4;
		}
		HMAC(EVP_get_digestbyname(t[ti].md), key, (int)t[ti].klen, mut, mn, mac, &ml);
		memcpy(ah + 12, mac, t[ti].icv);
		exp[10] = exp[11] = 0;
		uint16_t ck = ref_cksum(exp);
		exp[10] = (uint8_t)(ck >> 8);
		exp[11] = (uint8_t)ck;
		bad += memcmp(exp, pkt, n) != 0;

		/* Routers change mutable fields: still verifies. */
		pkt[8] = (uint8_t)(pkt[8] - 3);
		pkt[1] ^= 0xfc;
		memcpy(exp, pkt, n);
		bad += tw_ah_decap(&rx, pkt, n, &m, &seq) != TW_OK || seq != s || m != len;
		/* The original packet comes back (but the mutable fields). */
		orig[8] = (uint8_t)(orig[8] - 3);
		orig[1] ^= 0xfc;
		orig[10] = orig[11] = 0;
		ck = ref_cksum(orig);
		orig[10] = (uint8_t)(ck >> 8);
		orig[11] = (uint8_t)ck;
		bad += memcmp(pkt, orig, len) != 0;
		/* Replay, then an immutable field changed (source address). */
		memcpy(pkt, exp, n);
		bad += tw_ah_decap(&rx, pkt, n, &m, &seq) != TW_ERR_REPLAY;
		bad += tw_ah_encap(&tx, ip, len, pkt, sizeof(pkt), &n) != TW_OK;
		pkt[13] ^= 1;
		memcpy(exp, pkt, n);
		bad += tw_ah_decap(&rx, pkt, n, &m, &seq) != TW_ERR_AUTH;
		bad += memcmp(exp, pkt, n) != 0; /* left unchanged */
		bad += rx.stats.bad_icv != 1 || rx.stats.replayed != 1;
		tw_ah_sa_wipe(&tx);
		tw_ah_sa_wipe(&rx);
	}
	CHECK(bad == 0);

	/* Malformed input. */
	struct tw_esp_config c;
	struct tw_ah_sa sa;
	uint8_t key[20] = { 0 };
	size_t n, m;
	uint64_t seq;

	memset(&c, 0, sizeof(c));
	c.spi = 9;
	c.integ = TW_ESP_AUTH_HMAC_SHA1_96;
	c.auth_key = key;
	c.auth_key_len = 20;
	CHECK_OK(tw_ah_sa_init(&sa, &c));
	size_t len = make_ipv4(ip, 30, 6);
	CHECK_ERR(tw_ah_encap(&sa, ip, len - 1, pkt, sizeof(pkt), &n), TW_ERR_DECODE);
	CHECK_ERR(tw_ah_encap(&sa, ip, len, pkt, len + 10, &n), TW_ERR_OVERFLOW);
	ip[0] = 0x46;
	CHECK_ERR(tw_ah_encap(&sa, ip, len, pkt, sizeof(pkt), &n), TW_ERR_UNSUPPORTED);
	ip[0] = 0x65;
	CHECK_ERR(tw_ah_encap(&sa, ip, len, pkt, sizeof(pkt), &n), TW_ERR_DECODE);
	ip[0] = 0x45;
	ip[6] = 0x20; /* MF: a fragment */
	CHECK_ERR(tw_ah_encap(&sa, ip, len, pkt, sizeof(pkt), &n), TW_ERR_UNSUPPORTED);
	ip[6] = 0;
	/* In place. */
	memcpy(pkt, ip, len);
	CHECK_OK(tw_ah_encap(&sa, pkt, len, pkt, sizeof(pkt), &n));
	for (size_t l = 0; l < 44; l++)
		CHECK(tw_ah_decap(&sa, pkt, l, &m, &seq) != TW_OK);
	pkt[21] = 5; /* AH length field */
	CHECK_ERR(tw_ah_decap(&sa, pkt, n, &m, &seq), TW_ERR_DECODE);
	pkt[21] = 4;
	pkt[27] ^= 1; /* SPI */
	CHECK_ERR(tw_ah_decap(&sa, pkt, n, &m, &seq), TW_ERR_NOTFOUND);
	pkt[27] ^= 1;
	CHECK_OK(tw_ah_decap(&sa, pkt, n, &m, &seq));
	CHECK(m == len && memcmp(pkt, ip, 8) == 0 && memcmp(pkt + 12, ip + 12, len - 12) == 0);
	sa.seq_out = UINT32_MAX;
	CHECK_ERR(tw_ah_encap(&sa, ip, len, pkt, sizeof(pkt), &n), TW_ERR_STATE);
	c.integ = TW_ESP_AUTH_NONE;
	CHECK_ERR(tw_ah_sa_init(&sa, &c), TW_ERR_INVAL);
	tw_ah_sa_wipe(&sa);
}

void test_main(void)
{
	CHECK(tv_run_file("esp_cbc.vec", esp_cbc_vec_case) == 10);
	CHECK(tv_run_file("gcm_rfc4106.vec", gcm4106_case) >= 5);
	cross_check();
	for (unsigned i = 0; i < NNAMES; i++)
		negative(names[i]);
	forged_high_seq();
	seq_exhaustion();
	tunnel_mode();
	config_errors();
	in_place();
	batch(names);
	/* 3DES packets of several SAs run as CBC chains side by side; other
	 * transforms interleaved */
	static const char *const des_mix[] = {
		"3des-cbc-hmac-sha1", "aes-gcm-128", "3des-cbc-hmac-sha1",
		"3des-cbc-hmac-sha1", "null-hmac-sha1", "3des-cbc-hmac-sha1",
	};
	batch(des_mix);
	paths();
	ah_tests();
}
