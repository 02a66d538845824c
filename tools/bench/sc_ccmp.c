/*
 * twag-bench — 802.11 MPDU protection (IEEE 802.11-2020 §12.5.3 CCMP,
 * §12.5.5 GCMP) per payload size. One op = one QoS Data MPDU (26-octet
 * MAC header, TID 5) with t->size octets of body, 16 stations' keys
 * cycled. Rows:
 *   ccmp        CCMP-128 encapsulation, one MPDU per call (tw_ccmp_encap);
 *   ccmp-batch  the same MPDUs 16 per call, each with its own station's
 *               prepared key: the struct tw_ccmp_key made once per rekey
 *               by tw_ccmp_key_init (AES schedule expanded there, as an
 *               AP keeps it per station), not per call; the EVP rows
 *               likewise keep one keyed context per station
 *               (tw_ccmp_encap_batch: the VAES group lanes);
 *   ccmp-dec    CCMP-128 decapsulation + MIC check (tw_ccmp_decap);
 *   gcmp256     GCMP-256 encapsulation (tw_ccmp_encap);
 * beside OpenSSL EVP aes-128-ccm / aes-256-gcm used the ordinary way (a
 * context per key made once and reused: per MPDU the nonce, lengths, AAD,
 * data, final and tag calls) doing the same MPDUs, with the same AAD and
 * nonce construction, and the kernel's ccm(aes) through AF_ALG.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "afalg.h"
#include "bench.h"
#include "twag/bytes.h"
#include "twag/ccmp.h"

enum { NPKT = 16, HL = 26, OVH = TW_CCMP_OVERHEAD_MAX };

/* A QoS Data frame, ToDS, TID 5: FC, Duration, A1, A2, A3, SC, QC. */
static const uint8_t hdr_tmpl[HL] = {
	0x88, 0x41, 0x00, 0x00, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x02, 0xaa,
	0xbb, 0xcc, 0xdd, 0xee, 0x02, 0x11, 0x22, 0x33, 0x44, 0x66, 0x50, 0x12,
	0x05, 0x00,
};

struct ccmp_state {
	enum tw_ccmp_cipher cipher;
	size_t size, tk_len, mic;
	uint8_t tk[NPKT][32];
	struct tw_ccmp_key key[NPKT];
	struct tw_ccmp_tx tx[NPKT];
	uint8_t *frame[NPKT]; /* header || plaintext body */
	uint8_t *enc[NPKT];   /* encapsulated MPDUs (decryption rows) */
	size_t enc_len;
	uint8_t *out[NPKT];
	uint64_t next;
	EVP_CIPHER_CTX *evp[NPKT];
	struct bench_afalg alg;
	uint8_t *abuf, *abuf2;
};

/* §12.5.3.3.3 AAD and §12.5.3.3.4 nonce of hdr_tmpl, written out here
 * independently of src/dataplane/ccmp.c: FC with subtype b4..b6,
 * Retry/PwrMgt/MoreData and (QoS Data) Order cleared, Protected set;
 * SC -> fragment number only; QC -> TID only. */
static size_t ref_aad(uint8_t aad[TW_CCMP_AAD_MAX], const uint8_t *h)
{
	aad[0] = h[0] & 0x8f;
	aad[1] = (uint8_t)((h[1] & 0x07) | 0x40);
	memcpy(aad + 2, h + 4, 18);
	aad[20] = h[22] & 0x0f;
	aad[21] = 0;
	aad[22] = h[24] & 0x0f;
	aad[23] = 0;
	return 24;
}

static void ref_nonce(uint8_t nonce[13], const uint8_t *h, uint64_t pn)
{
	nonce[0] = h[24] & 0x0f;
	memcpy(nonce + 1, h + 10, 6);
	tw_store_be48(nonce + 7, pn);
}

static void ccmp_hdr(uint8_t *p, uint64_t pn, unsigned key_id)
{
	p[0] = (uint8_t)pn;
	p[1] = (uint8_t)(pn >> 8);
	p[2] = 0;
	p[3] = (uint8_t)(0x20 | key_id << 6);
	p[4] = (uint8_t)(pn >> 16);
	p[5] = (uint8_t)(pn >> 24);
	p[6] = (uint8_t)(pn >> 32);
	p[7] = (uint8_t)(pn >> 40);
}

static int setup_common(struct ccmp_state *s, const struct bench_thread *t,
			enum tw_ccmp_cipher c)
{
	uint64_t seed = t->seed;

	s->cipher = c;
	s->size = t->size;
	s->tk_len = c == TW_CCMP_128 || c == TW_GCMP_128 ? 16 : 32;
	s->mic = c == TW_CCMP_128 ? 8 : 16;
	bench_fill(&seed, s->tk, sizeof(s->tk));
	for (int i = 0; i < NPKT; i++) {
		s->frame[i] = malloc(HL + s->size);
		s->enc[i] = malloc(HL + s->size + OVH);
		s->out[i] = malloc(HL + s->size + OVH);
		if (s->frame[i] == NULL || s->enc[i] == NULL || s->out[i] == NULL)
			return -1;
		memcpy(s->frame[i], hdr_tmpl, HL);
		bench_fill(&seed, s->frame[i] + HL, s->size);
		if (tw_ccmp_key_init(&s->key[i], c, s->tk[i], s->tk_len, 0) != TW_OK)
			return -1;
		s->tx[i].pn = 1000;
		if (tw_ccmp_encap(&s->key[i], &s->tx[i], s->frame[i], HL + s->size, s->enc[i],
				  HL + s->size + OVH, &s->enc_len) != TW_OK)
			return -1;
	}
	return 0;
}

static int setup_ccmp(void *p, const struct bench_thread *t)
{
	return setup_common(p, t, TW_CCMP_128);
}

static int setup_gcmp(void *p, const struct bench_thread *t)
{
	return setup_common(p, t, TW_GCMP_256);
}

static int evp_init(struct ccmp_state *s, int enc)
{
	const EVP_CIPHER *ci = s->cipher == TW_CCMP_128 ? EVP_aes_128_ccm() : EVP_aes_256_gcm();

	for (int i = 0; i < NPKT; i++) {
		s->evp[i] = EVP_CIPHER_CTX_new();
		if (s->evp[i] == NULL || !EVP_CipherInit_ex(s->evp[i], ci, NULL, NULL, NULL, enc) ||
		    !EVP_CIPHER_CTX_ctrl(s->evp[i], EVP_CTRL_AEAD_SET_IVLEN,
					 s->cipher == TW_CCMP_128 ? 13 : 12, NULL) ||
		    (s->cipher == TW_CCMP_128 &&
		     !EVP_CIPHER_CTX_ctrl(s->evp[i], EVP_CTRL_AEAD_SET_TAG, (int)s->mic, NULL)) ||
		    !EVP_CipherInit_ex(s->evp[i], NULL, NULL, s->tk[i], NULL, enc))
			return -1;
	}
	return 0;
}

static int evp_setup_ccmp(void *p, const struct bench_thread *t)
{
	return setup_ccmp(p, t) != 0 ? -1 : evp_init(p, 1);
}

static int evp_setup_ccmp_dec(void *p, const struct bench_thread *t)
{
	return setup_ccmp(p, t) != 0 ? -1 : evp_init(p, 0);
}

static int evp_setup_gcmp(void *p, const struct bench_thread *t)
{
	return setup_gcmp(p, t) != 0 ? -1 : evp_init(p, 1);
}

static int afalg_setup_ccmp(void *p, const struct bench_thread *t)
{
	struct ccmp_state *s = p;

	if (setup_ccmp(p, t) != 0)
		return -1;
	int rc = bench_afalg_open(&s->alg, t, "aead", "ccm(aes)", s->tk[0], 16, 8);
	if (rc != 0)
		return rc;
	s->abuf = malloc(TW_CCMP_AAD_MAX + s->size + 16);
	s->abuf2 = malloc(TW_CCMP_AAD_MAX + s->size + 16);
	return s->abuf == NULL || s->abuf2 == NULL ? -1 : 0;
}

static void ccmp_teardown(void *p)
{
	struct ccmp_state *s = p;

	for (int i = 0; i < NPKT; i++) {
		free(s->frame[i]);
		free(s->enc[i]);
		free(s->out[i]);
		EVP_CIPHER_CTX_free(s->evp[i]);
		tw_ccmp_key_wipe(&s->key[i]);
	}
	free(s->abuf);
	free(s->abuf2);
	bench_afalg_close(&s->alg);
	tw_wipe(s->tk, sizeof(s->tk));
}

/* ---- twag ---- */

static int tw_enc_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;
	size_t ol;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = (unsigned)(s->next++ % NPKT);

		if (tw_ccmp_encap(&s->key[j], &s->tx[j], s->frame[j], HL + s->size, s->out[j],
				  HL + s->size + OVH, &ol) != TW_OK)
			return -1;
	}
	return 0;
}

static int tw_batch_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;
	struct tw_ccmp_mpdu m[NPKT];

	while (n > 0) {
		unsigned cnt = n < NPKT ? (unsigned)n : NPKT;

		for (unsigned j = 0; j < cnt; j++)
			m[j] = (struct tw_ccmp_mpdu){ .key = &s->key[j], .tx = &s->tx[j],
						      .in = s->frame[j], .in_len = HL + s->size,
						      .out = s->out[j],
						      .out_cap = HL + s->size + OVH };
		if (tw_ccmp_encap_batch(m, cnt) != TW_OK)
			return -1;
		n -= cnt;
	}
	return 0;
}

static int tw_dec_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;
	size_t ol;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = (unsigned)(s->next++ % NPKT);

		if (tw_ccmp_decap(&s->key[j], NULL, s->enc[j], s->enc_len, s->out[j],
				  HL + s->size + OVH, &ol, NULL) != TW_OK)
			return -1;
	}
	return 0;
}

/* ---- OpenSSL EVP, the same MPDUs ---- */

static int evp_enc_one(struct ccmp_state *s, EVP_CIPHER_CTX *c, uint64_t pn,
		       const uint8_t *frame, uint8_t *out)
{
	uint8_t aad[TW_CCMP_AAD_MAX], nonce[13];
	size_t al = ref_aad(aad, frame);
	int ol, ccm = s->cipher == TW_CCMP_128;

	ref_nonce(nonce, frame, pn);
	memcpy(out, frame, HL);
	out[1] |= 0x40;
	ccmp_hdr(out + HL, pn, 0);
	uint8_t *body = out + HL + 8;
	if (!EVP_EncryptInit_ex(c, NULL, NULL, NULL, ccm ? nonce : nonce + 1) ||
	    (ccm && !EVP_EncryptUpdate(c, NULL, &ol, NULL, (int)s->size)) ||
	    !EVP_EncryptUpdate(c, NULL, &ol, aad, (int)al) ||
	    !EVP_EncryptUpdate(c, body, &ol, frame + HL, (int)s->size) ||
	    !EVP_EncryptFinal_ex(c, body + s->size, &ol) ||
	    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)s->mic, body + s->size))
		return -1;
	return 0;
}

static int evp_enc_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = (unsigned)(s->next++ % NPKT);

		if (evp_enc_one(s, s->evp[j], ++s->tx[j].pn, s->frame[j], s->out[j]) != 0)
			return -1;
	}
	return 0;
}

static int evp_dec_one(struct ccmp_state *s, EVP_CIPHER_CTX *c, const uint8_t *enc,
		       uint8_t *out)
{
	uint8_t aad[TW_CCMP_AAD_MAX], nonce[13];
	size_t al = ref_aad(aad, enc);
	const uint8_t *h = enc + HL;
	uint64_t pn = (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[4] << 16 |
		      (uint64_t)h[5] << 24 | (uint64_t)h[6] << 32 | (uint64_t)h[7] << 40;
	int ol;

	ref_nonce(nonce, enc, pn);
	memcpy(out, enc, HL);
	if (!EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)s->mic,
				 (void *)(enc + HL + 8 + s->size)) ||
	    !EVP_DecryptInit_ex(c, NULL, NULL, NULL, nonce) ||
	    !EVP_DecryptUpdate(c, NULL, &ol, NULL, (int)s->size) ||
	    !EVP_DecryptUpdate(c, NULL, &ol, aad, (int)al) ||
	    EVP_DecryptUpdate(c, out + HL, &ol, enc + HL + 8, (int)s->size) <= 0)
		return -1;
	return 0;
}

static int evp_dec_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = (unsigned)(s->next++ % NPKT);

		if (evp_dec_one(s, s->evp[j], s->enc[j], s->out[j]) != 0)
			return -1;
	}
	return 0;
}

/* ---- kernel AF_ALG ccm(aes): IV = L' (q - 1 = 1) || nonce || 0 ---- */

static int afalg_enc_run(void *p, uint64_t n)
{
	struct ccmp_state *s = p;
	uint8_t iv[16] = { 1 };

	for (uint64_t i = 0; i < n; i++) {
		size_t al = ref_aad(s->abuf, s->frame[0]);

		ref_nonce(iv + 1, s->frame[0], ++s->tx[0].pn);
		memcpy(s->abuf + al, s->frame[0] + HL, s->size);
		if (bench_afalg_crypt(&s->alg, true, iv, 16, al, s->abuf, al + s->size, s->abuf2,
				      al + s->size + 8) < 0)
			return -1;
	}
	return 0;
}

/* ---- once(): TK = in[0..31], PN = in[32..37], body derived from in ---- */

static void derive(uint8_t *p, size_t len, const uint8_t in[BENCH_IN_LEN])
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(in[i % BENCH_IN_LEN] ^ (i >> 6) ^ (i >> 14));
}

static uint64_t once_pn(const uint8_t in[BENCH_IN_LEN])
{
	uint64_t pn = tw_load_be48(in + 32);

	return pn == 0 || pn == TW_CCMP_PN_MAX ? 1 : pn;
}

static int tw_once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len,
			  int batch, int dec)
{
	struct ccmp_state *s = p;
	struct tw_ccmp_key key;
	struct tw_ccmp_tx tx = { once_pn(in) - 1 };
	size_t ol = 0;
	int rc = -1;

	if (*len < HL + s->size + OVH || s->out[0] == NULL ||
	    tw_ccmp_key_init(&key, s->cipher, in, s->tk_len, 0) != TW_OK)
		return -1;
	memcpy(s->out[0], hdr_tmpl, HL);
	derive(s->out[0] + HL, s->size, in);
	if (batch) {
		struct tw_ccmp_mpdu m[NPKT];

		for (int j = 0; j < NPKT; j++) {
			struct tw_ccmp_tx *t = j == 0 ? &tx : &s->tx[j];

			m[j] = (struct tw_ccmp_mpdu){ .key = j == 0 ? &key : &s->key[j], .tx = t,
						      .in = j == 0 ? s->out[0] : s->frame[j],
						      .in_len = HL + s->size,
						      .out = j == 0 ? out : s->enc[j],
						      .out_cap = HL + s->size + OVH };
		}
		rc = tw_ccmp_encap_batch(m, NPKT) == TW_OK ? 0 : -1;
		ol = m[0].out_len;
	} else {
		rc = tw_ccmp_encap(&key, &tx, s->out[0], HL + s->size, out, *len, &ol) == TW_OK ? 0 : -1;
	}
	if (rc == 0 && dec)
		rc = tw_ccmp_decap(&key, NULL, out, ol, out, *len, &ol, NULL) == TW_OK ? 0 : -1;
	*len = ol;
	tw_ccmp_key_wipe(&key);
	return rc;
}

static int tw_once_enc(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return tw_once_common(p, in, out, len, 0, 0);
}

static int tw_once_batch(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return tw_once_common(p, in, out, len, 1, 0);
}

static int tw_once_dec(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return tw_once_common(p, in, out, len, 0, 1);
}

static int evp_once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len,
			   int dec)
{
	struct ccmp_state *s = p;
	const EVP_CIPHER *ci = s->cipher == TW_CCMP_128 ? EVP_aes_128_ccm() : EVP_aes_256_gcm();
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t *tmp = malloc(HL + s->size + OVH);
	int rc = -1;

	if (c == NULL || tmp == NULL || *len < HL + s->size + OVH || s->out[0] == NULL ||
	    !EVP_CipherInit_ex(c, ci, NULL, NULL, NULL, 1) ||
	    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, s->cipher == TW_CCMP_128 ? 13 : 12,
				 NULL) ||
	    (s->cipher == TW_CCMP_128 &&
	     !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)s->mic, NULL)) ||
	    !EVP_CipherInit_ex(c, NULL, NULL, in, NULL, 1))
		goto out;
	memcpy(s->out[0], hdr_tmpl, HL);
	derive(s->out[0] + HL, s->size, in);
	if (evp_enc_one(s, c, once_pn(in), s->out[0], out) != 0)
		goto out;
	*len = HL + 8 + s->size + s->mic;
	if (dec) {
		/* The decryption row outputs header || plaintext. */
		EVP_CIPHER_CTX_free(c);
		c = EVP_CIPHER_CTX_new();
		if (c == NULL || !EVP_CipherInit_ex(c, ci, NULL, NULL, NULL, 0) ||
		    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 13, NULL) ||
		    !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)s->mic, NULL) ||
		    !EVP_CipherInit_ex(c, NULL, NULL, in, NULL, 0))
			goto out;
		memcpy(tmp, out, *len);
		if (evp_dec_one(s, c, tmp, out) != 0)
			goto out;
		*len = HL + s->size;
	}
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	free(tmp);
	return rc;
}

static int evp_once_enc(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return evp_once_common(p, in, out, len, 0);
}

static int evp_once_dec(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return evp_once_common(p, in, out, len, 1);
}

/* AF_ALG: a socket keyed with once()'s TK for this one MPDU. */
static int afalg_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct ccmp_state *s = p;
	struct bench_afalg a = { -1, -1, 0 };
	struct bench_thread t = { .why = NULL };
	char why[256];
	uint8_t iv[16] = { 1 };
	uint64_t pn = once_pn(in);
	int rc = -1;

	t.why = why;
	if (*len < HL + s->size + OVH || s->abuf == NULL || bench_afalg_open(&a, &t, "aead", "ccm(aes)", in, 16, 8) != 0)
		goto out;
	memcpy(out, hdr_tmpl, HL);
	out[1] |= 0x40;
	ccmp_hdr(out + HL, pn, 0);
	size_t al = ref_aad(s->abuf, out);
	ref_nonce(iv + 1, out, pn);
	derive(s->abuf + al, s->size, in);
	if (bench_afalg_crypt(&a, true, iv, 16, al, s->abuf, al + s->size, s->abuf2,
			      al + s->size + 8) != (long)(al + s->size + 8))
		goto out;
	memcpy(out + HL + 8, s->abuf2 + al, s->size + 8);
	*len = HL + 8 + s->size + 8;
	rc = 0;
out:
	bench_afalg_close(&a);
	return rc;
}

#define ROW(nm, im, rf, wh, su, ru, on)                                                  \
	{ .name = nm, .impl = im, .refs = rf, .what = wh, .granule = NPKT,              \
	  .sizes = bench_default_sizes, .state_size = sizeof(struct ccmp_state),        \
	  .setup = su, .run = ru, .once = on, .teardown = ccmp_teardown }

static const struct bench_scenario sc_ccmp = ROW(
	"ccmp", "twag", "ccmp.evp ccmp.afalg",
	"CCMP-128 encapsulation of a QoS Data MPDU, one per call (tw_ccmp_encap)",
	setup_ccmp, tw_enc_run, tw_once_enc);
static const struct bench_scenario sc_ccmp_batch = ROW(
	"ccmp-batch", "twag", "ccmp.evp",
	"CCMP-128 encapsulation, 16 MPDUs per call, prepared per-station keys (tw_ccmp_encap_batch)",
	setup_ccmp, tw_batch_run, tw_once_batch);
static const struct bench_scenario sc_ccmp_dec = ROW(
	"ccmp-dec", "twag", "ccmp-dec.evp",
	"CCMP-128 decapsulation + MIC check (tw_ccmp_decap)",
	setup_ccmp, tw_dec_run, tw_once_dec);
static const struct bench_scenario sc_gcmp = ROW(
	"gcmp256", "twag", "gcmp256.evp",
	"GCMP-256 encapsulation of a QoS Data MPDU (tw_ccmp_encap)",
	setup_gcmp, tw_enc_run, tw_once_enc);
static const struct bench_scenario sc_ccmp_evp = ROW(
	"ccmp.evp", "openssl-evp", NULL,
	"EVP aes-128-ccm, context per key reused, one MPDU per call",
	evp_setup_ccmp, evp_enc_run, evp_once_enc);
static const struct bench_scenario sc_ccmp_dec_evp = ROW(
	"ccmp-dec.evp", "openssl-evp", NULL,
	"EVP aes-128-ccm decrypt + tag check, context per key reused",
	evp_setup_ccmp_dec, evp_dec_run, evp_once_dec);
static const struct bench_scenario sc_gcmp_evp = ROW(
	"gcmp256.evp", "openssl-evp", NULL,
	"EVP aes-256-gcm, context per key reused, one MPDU per call",
	evp_setup_gcmp, evp_enc_run, evp_once_enc);
static const struct bench_scenario sc_ccmp_afalg = ROW(
	"ccmp.afalg", "kernel-afalg", NULL,
	"kernel ccm(aes) via AF_ALG, one MPDU per sendmsg/read",
	afalg_setup_ccmp, afalg_enc_run, afalg_once);

BENCH_REGISTER(sc_ccmp)
BENCH_REGISTER(sc_ccmp_batch)
BENCH_REGISTER(sc_ccmp_dec)
BENCH_REGISTER(sc_gcmp)
BENCH_REGISTER(sc_ccmp_evp)
BENCH_REGISTER(sc_ccmp_dec_evp)
BENCH_REGISTER(sc_gcmp_evp)
BENCH_REGISTER(sc_ccmp_afalg)
