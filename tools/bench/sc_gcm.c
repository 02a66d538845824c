/*
 * twag-bench — raw AES-GCM (NIST SP 800-38D) per packet size: one packet
 * = 12-byte IV, 8 bytes of AAD (the size of an ESP header, RFC 4106 §5),
 * t->size bytes of payload, a 16-byte tag. Rows:
 *   gcm128, gcm256          tw_gcm_encrypt, one packet per call, in place;
 *   gcm128-dec, gcm256-dec  tw_gcm_decrypt (verify + decrypt);
 *   gcm128-batch            tw_gcm_encrypt_batch, 16 packets per call;
 * beside OpenSSL EVP aes-128-gcm / aes-256-gcm used the ordinary way (one
 * context made once and reused: new IV, AAD update, data update, final,
 * tag ctrl per packet) and the kernel's gcm(aes) through AF_ALG.
 * Every op is one packet, so the harness's Gbit/s and µs/KB are per
 * payload byte.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "afalg.h"
#include "bench.h"
#include "twag/bytes.h"
#include "twag/gcm.h"

enum {
	NPKT = 16,   /* packets cycled through (and the batch size) */
	AAD_LEN = 8,
	TAG_LEN = 16,
};

struct gcm_state {
	struct tw_gcm_ctx ctx;
	size_t key_len, size;
	uint8_t key[32];
	uint8_t iv[NPKT][12];
	uint8_t aad[NPKT][AAD_LEN];
	uint8_t tag[NPKT][TAG_LEN];
	uint8_t *pkt[NPKT]; /* size bytes each */
	uint8_t *out;       /* size bytes: decryption target */
	uint64_t next;
	EVP_CIPHER_CTX *evp;
	struct bench_afalg alg;
	uint8_t *abuf;      /* AF_ALG request / reply: AAD | data | tag */
};

/* The payload of a once() packet: in[] stretched to len bytes. */
static void derive(uint8_t *p, size_t len, const uint8_t in[BENCH_IN_LEN])
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(in[i % BENCH_IN_LEN] ^ (i >> 6) ^ (i >> 14));
}

static int setup_common(struct gcm_state *s, const struct bench_thread *t,
			size_t key_len)
{
	uint64_t seed = t->seed;

	s->key_len = key_len;
	s->size = t->size;
	bench_fill(&seed, s->key, sizeof(s->key));
	bench_fill(&seed, s->iv, sizeof(s->iv));
	bench_fill(&seed, s->aad, sizeof(s->aad));
	for (int i = 0; i < NPKT; i++) {
		s->pkt[i] = malloc(s->size + 1);
		if (s->pkt[i] == NULL)
			return -1;
		bench_fill(&seed, s->pkt[i], s->size);
	}
	s->out = malloc(s->size + 1);
	if (s->out == NULL)
		return -1;
	if (tw_gcm_init(&s->ctx, s->key, key_len) != TW_OK)
		return -1;
	/* Valid packets for the decryption rows. */
	for (int i = 0; i < NPKT; i++)
		if (tw_gcm_encrypt(&s->ctx, s->iv[i], s->aad[i], AAD_LEN, s->pkt[i],
				   s->pkt[i], s->size, s->tag[i], TAG_LEN) != TW_OK)
			return -1;
	return 0;
}

static int setup128(void *p, const struct bench_thread *t)
{
	return setup_common(p, t, 16);
}

static int setup256(void *p, const struct bench_thread *t)
{
	return setup_common(p, t, 32);
}

static int evp_init(struct gcm_state *s)
{
	const EVP_CIPHER *c = s->key_len == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();

	s->evp = EVP_CIPHER_CTX_new();
	if (s->evp == NULL || !EVP_CipherInit_ex(s->evp, c, NULL, s->key, NULL, -1) ||
	    !EVP_CIPHER_CTX_ctrl(s->evp, EVP_CTRL_GCM_SET_IVLEN, 12, NULL))
		return -1;
	return 0;
}

static int evp_setup128(void *p, const struct bench_thread *t)
{
	return setup128(p, t) != 0 ? -1 : evp_init(p);
}

static int evp_setup256(void *p, const struct bench_thread *t)
{
	return setup256(p, t) != 0 ? -1 : evp_init(p);
}

static int afalg_setup(struct gcm_state *s, const struct bench_thread *t)
{
	int rc = bench_afalg_open(&s->alg, t, "aead", "gcm(aes)", s->key, s->key_len, TAG_LEN);

	if (rc != 0)
		return rc;
	s->abuf = malloc(AAD_LEN + s->size + TAG_LEN);
	return s->abuf == NULL ? -1 : 0;
}

static int afalg_setup128(void *p, const struct bench_thread *t)
{
	return setup128(p, t) != 0 ? -1 : afalg_setup(p, t);
}

static int afalg_setup256(void *p, const struct bench_thread *t)
{
	return setup256(p, t) != 0 ? -1 : afalg_setup(p, t);
}

static void gcm_teardown(void *p)
{
	struct gcm_state *s = p;

	for (int i = 0; i < NPKT; i++)
		free(s->pkt[i]);
	free(s->out);
	free(s->abuf);
	EVP_CIPHER_CTX_free(s->evp);
	bench_afalg_close(&s->alg);
	tw_gcm_wipe(&s->ctx);
	tw_wipe(s->key, sizeof(s->key));
}

/* ---- the operations ---- */

/* Each packet gets a fresh IV (its last 8 bytes count ops, as ESP's). */
static uint8_t *next_iv(struct gcm_state *s, unsigned j)
{
	tw_store_be64(s->iv[j] + 4, s->next);
	return s->iv[j];
}

static int tw_enc_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (tw_gcm_encrypt(&s->ctx, next_iv(s, j), s->aad[j], AAD_LEN, s->pkt[j],
				   s->pkt[j], s->size, s->tag[j], TAG_LEN) != TW_OK)
			return -1;
	}
	return 0;
}

static int tw_dec_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (tw_gcm_decrypt(&s->ctx, s->iv[j], s->aad[j], AAD_LEN, s->pkt[j], s->out,
				   s->size, s->tag[j], TAG_LEN) != TW_OK)
			return -1;
	}
	return 0;
}

static int tw_batch_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;
	struct tw_gcm_op op[NPKT];

	while (n > 0) {
		unsigned m = n < NPKT ? (unsigned)n : NPKT;

		for (unsigned j = 0; j < m; j++, s->next++)
			op[j] = (struct tw_gcm_op){
				.ctx = &s->ctx, .iv = next_iv(s, j), .aad = s->aad[j],
				.aad_len = AAD_LEN, .in = s->pkt[j], .out = s->pkt[j],
				.len = s->size, .tag = s->tag[j], .tag_len = TAG_LEN,
			};
		if (tw_gcm_encrypt_batch(op, m) != TW_OK)
			return -1;
		n -= m;
	}
	return 0;
}

static int evp_one(struct gcm_state *s, int enc, const uint8_t *iv, const uint8_t *aad,
		   const uint8_t *in, uint8_t *out, uint8_t *tag)
{
	int l;

	if (!EVP_CipherInit_ex(s->evp, NULL, NULL, NULL, iv, enc) ||
	    !EVP_CipherUpdate(s->evp, NULL, &l, aad, AAD_LEN) ||
	    (s->size > 0 && !EVP_CipherUpdate(s->evp, out, &l, in, (int)s->size)))
		return -1;
	if (!enc && !EVP_CIPHER_CTX_ctrl(s->evp, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag))
		return -1;
	if (!EVP_CipherFinal_ex(s->evp, out + s->size, &l))
		return -1;
	if (enc && !EVP_CIPHER_CTX_ctrl(s->evp, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag))
		return -1;
	return 0;
}

static int evp_enc_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (evp_one(s, 1, next_iv(s, j), s->aad[j], s->pkt[j], s->pkt[j], s->tag[j]))
			return -1;
	}
	return 0;
}

static int evp_dec_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (evp_one(s, 0, s->iv[j], s->aad[j], s->pkt[j], s->out, s->tag[j]))
			return -1;
	}
	return 0;
}

static int afalg_enc_one(struct gcm_state *s, const uint8_t *iv, const uint8_t *aad,
			 const uint8_t *pt, uint8_t *ct, uint8_t *tag)
{
	size_t n = AAD_LEN + s->size;

	memcpy(s->abuf, aad, AAD_LEN);
	memcpy(s->abuf + AAD_LEN, pt, s->size);
	if (bench_afalg_crypt(&s->alg, true, iv, 12, AAD_LEN, s->abuf, n, s->abuf,
			      n + TAG_LEN) != (long)(n + TAG_LEN))
		return -1;
	memcpy(ct, s->abuf + AAD_LEN, s->size);
	memcpy(tag, s->abuf + n, TAG_LEN);
	return 0;
}

static int afalg_enc_run(void *p, uint64_t n)
{
	struct gcm_state *s = p;

	for (uint64_t i = 0; i < n; i++, s->next++) {
		unsigned j = (unsigned)(s->next % NPKT);

		if (afalg_enc_one(s, next_iv(s, j), s->aad[j], s->pkt[j], s->pkt[j], s->tag[j]))
			return -1;
	}
	return 0;
}

/* ---- once(): key | IV | AAD from in[], payload derived from in[];
 * output ciphertext | tag (decryption rows: the packet encrypted, then
 * decrypted in place: plaintext | tag). ---- */

static int tw_once_enc(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct gcm_state *s = p;
	struct tw_gcm_ctx ctx;
	int rc = -1;

	if (*len < s->size + TAG_LEN || tw_gcm_init(&ctx, in, s->key_len) != TW_OK)
		return -1;
	derive(out, s->size, in);
	if (tw_gcm_encrypt(&ctx, in + 32, in + 44, AAD_LEN, out, out, s->size, out + s->size,
			   TAG_LEN) == TW_OK) {
		*len = s->size + TAG_LEN;
		rc = 0;
	}
	tw_gcm_wipe(&ctx);
	return rc;
}

static int tw_once_dec(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct gcm_state *s = p;
	struct tw_gcm_ctx ctx;
	int rc;

	if (tw_once_enc(p, in, out, len) != 0 || tw_gcm_init(&ctx, in, s->key_len) != TW_OK)
		return -1;
	rc = tw_gcm_decrypt(&ctx, in + 32, in + 44, AAD_LEN, out, out, s->size, out + s->size,
			    TAG_LEN);
	tw_gcm_wipe(&ctx);
	return rc == TW_OK ? 0 : -1;
}

static int evp_once_common(struct gcm_state *s, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
			   size_t *len, int dec)
{
	struct gcm_state t = *s; /* same size and key length, own context */
	int rc = -1;

	if (*len < s->size + TAG_LEN)
		return -1;
	memcpy(t.key, in, t.key_len);
	if (evp_init(&t) != 0)
		goto out;
	derive(out, s->size, in);
	if (evp_one(&t, 1, in + 32, in + 44, out, out, out + s->size) != 0)
		goto out;
	if (dec && evp_one(&t, 0, in + 32, in + 44, out, out, out + s->size) != 0)
		goto out;
	*len = s->size + TAG_LEN;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(t.evp);
	tw_wipe(t.key, sizeof(t.key));
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

/* A socket keyed with once()'s key, for this one packet. */
static int afalg_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct gcm_state *s = p;
	struct gcm_state t = *s; /* same size and buffer, own socket */
	char why[BENCH_WHY_MAX];
	struct bench_thread bt = {.nthreads = 1, .size = s->size, .why = why};
	int rc = -1;

	if (*len < s->size + TAG_LEN)
		return -1;
	if (bench_afalg_open(&t.alg, &bt, "aead", "gcm(aes)", in, s->key_len, TAG_LEN) != 0)
		goto out;
	derive(out, s->size, in);
	if (afalg_enc_one(&t, in + 32, in + 44, out, out, out + s->size) != 0)
		goto out;
	*len = s->size + TAG_LEN;
	rc = 0;
out:
	bench_afalg_close(&t.alg);
	return rc;
}

/* ---- registration ---- */

#define TW_ROW(nm, refs_, what_, setup_, run_, once_)                          \
	{                                                                     \
		.name = nm, .impl = "twag", .what = what_, .refs = refs_,     \
		.sizes = bench_default_sizes,                                 \
		.state_size = sizeof(struct gcm_state), .setup = setup_,      \
		.run = run_, .once = once_, .teardown = gcm_teardown,         \
	}
#define REF_ROW(nm, impl_, what_, setup_, run_, once_, cost)                  \
	{                                                                     \
		.name = nm, .impl = impl_, .what = what_, .cost_only = cost,  \
		.sizes = bench_default_sizes,                                 \
		.state_size = sizeof(struct gcm_state), .setup = setup_,      \
		.run = run_, .once = once_, .teardown = gcm_teardown,         \
	}

static const struct bench_scenario sc_gcm128 = TW_ROW(
	"gcm128", "gcm128.evp gcm128.afalg",
	"AES-128-GCM encrypt, 8 B AAD, 16 B tag, in place (tw_gcm_encrypt)",
	setup128, tw_enc_run, tw_once_enc);
BENCH_REGISTER(sc_gcm128)

static const struct bench_scenario sc_gcm128_evp = REF_ROW(
	"gcm128.evp", "openssl-evp",
	"EVP aes-128-gcm, context reused: IV init, AAD, update, final, get tag",
	evp_setup128, evp_enc_run, evp_once_enc, false);
BENCH_REGISTER(sc_gcm128_evp)

static const struct bench_scenario sc_gcm128_afalg = REF_ROW(
	"gcm128.afalg", "kernel-afalg",
	"kernel gcm(aes) via AF_ALG, one sendmsg + read per packet",
	afalg_setup128, afalg_enc_run, afalg_once, false);
BENCH_REGISTER(sc_gcm128_afalg)

static const struct bench_scenario sc_gcm128_dec = TW_ROW(
	"gcm128-dec", "gcm128-dec.evp",
	"AES-128-GCM verify + decrypt (tw_gcm_decrypt)",
	setup128, tw_dec_run, tw_once_dec);
BENCH_REGISTER(sc_gcm128_dec)

static const struct bench_scenario sc_gcm128_dec_evp = REF_ROW(
	"gcm128-dec.evp", "openssl-evp",
	"EVP aes-128-gcm decrypt, context reused, tag set before final",
	evp_setup128, evp_dec_run, evp_once_dec, false);
BENCH_REGISTER(sc_gcm128_dec_evp)

static const struct bench_scenario sc_gcm128_batch = {
	.name = "gcm128-batch", .impl = "twag", .refs = "gcm128.evp",
	.what = "AES-128-GCM encrypt, 16 packets per tw_gcm_encrypt_batch call",
	.granule = NPKT, .sizes = bench_default_sizes,
	.state_size = sizeof(struct gcm_state), .setup = setup128,
	.run = tw_batch_run, .once = tw_once_enc, .teardown = gcm_teardown,
};
BENCH_REGISTER(sc_gcm128_batch)

static const struct bench_scenario sc_gcm256 = TW_ROW(
	"gcm256", "gcm256.evp gcm256.afalg",
	"AES-256-GCM encrypt, 8 B AAD, 16 B tag, in place (tw_gcm_encrypt)",
	setup256, tw_enc_run, tw_once_enc);
BENCH_REGISTER(sc_gcm256)

static const struct bench_scenario sc_gcm256_evp = REF_ROW(
	"gcm256.evp", "openssl-evp",
	"EVP aes-256-gcm, context reused: IV init, AAD, update, final, get tag",
	evp_setup256, evp_enc_run, evp_once_enc, false);
BENCH_REGISTER(sc_gcm256_evp)

static const struct bench_scenario sc_gcm256_afalg = REF_ROW(
	"gcm256.afalg", "kernel-afalg",
	"kernel gcm(aes) via AF_ALG, one sendmsg + read per packet",
	afalg_setup256, afalg_enc_run, afalg_once, false);
BENCH_REGISTER(sc_gcm256_afalg)

static const struct bench_scenario sc_gcm256_dec = TW_ROW(
	"gcm256-dec", "gcm256-dec.evp",
	"AES-256-GCM verify + decrypt (tw_gcm_decrypt)",
	setup256, tw_dec_run, tw_once_dec);
BENCH_REGISTER(sc_gcm256_dec)

static const struct bench_scenario sc_gcm256_dec_evp = REF_ROW(
	"gcm256-dec.evp", "openssl-evp",
	"EVP aes-256-gcm decrypt, context reused, tag set before final",
	evp_setup256, evp_dec_run, evp_once_dec, false);
BENCH_REGISTER(sc_gcm256_dec_evp)
