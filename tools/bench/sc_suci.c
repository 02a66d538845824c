/*
 * twag-bench — SUCI de-concealment at the home network (3GPP TS 33.501
 * V17.9.0 §6.12.2, Annex C.3: ECIES Profile A on X25519, Profile B on
 * P-256 with compressed points), from the SUCI text form to "imsi-...".
 *
 * Reference: the same ECIES written on OpenSSL alone, the ordinary way:
 * the home network key loaded once as an EVP_PKEY; per request an
 * EVP_PKEY for the ephemeral key, EVP_PKEY_derive, the X9.63 KDF through
 * EVP_KDF (fetched per call), EVP aes-128-ctr and one-shot HMAC().
 * Both sides de-conceal the same SUCI strings, made by tw_suci_conceal.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/suci.h"

enum { NSUCI = 16, KEY_ID = 7 };

struct suci_state {
	struct tw_suci_hn_key key;
	uint8_t pub[TW_SUCI_PUB_MAX];
	size_t pub_len;
	char suci[NSUCI][TW_SUCI_STR_MAX];
	char supi[TW_SUCI_SUPI_STR_MAX];
	unsigned next;
	struct tw_suci_hn_ctx hctx; /* twag: the key prepared once, as a SIDF does */
	bool have_hctx;
	EVP_PKEY *hn; /* reference only: likewise prepared once */
};

/* A P-256 scalar below n (top bit clear) and never 0; fine for X25519. */
static void make_priv(uint64_t *seed, uint8_t priv[32])
{
	bench_fill(seed, priv, 32);
	priv[0] &= 0x7f;
	priv[31] |= 1;
}

/* One SUCI for an IMSI 00101 + 10 digits taken from in, ephemeral key
 * from in too. */
static int make_suci(const struct suci_state *s, const uint8_t *in, char *out)
{
	char supi[TW_SUCI_SUPI_STR_MAX];
	uint8_t eph[32];
	uint64_t seed = tw_load_be64(in);

	memcpy(supi, "imsi-00101", 10);
	for (int i = 0; i < 10; i++)
		supi[10 + i] = (char)('0' + in[8 + i] % 10);
	supi[20] = 0;
	make_priv(&seed, eph);
	int rc = tw_suci_conceal(s->key.scheme, s->pub, s->pub_len, KEY_ID, supi, 2, "0", eph,
				 out, TW_SUCI_STR_MAX);
	tw_wipe(eph, sizeof(eph));
	return rc;
}

static EVP_PKEY *evp_hn_key(const struct tw_suci_hn_key *k)
{
	if (k->scheme == TW_SUCI_SCHEME_PROFILE_A)
		return EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, k->priv, 32);

	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	BIGNUM *d = BN_bin2bn(k->priv, 32, NULL);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;

	if (ctx && d && bld &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) > 0)
		if (EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEYPAIR, params) <= 0)
			pkey = NULL;
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_clear_free(d);
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

static int suci_setup_scheme(void *p, const struct bench_thread *t, enum tw_suci_scheme scheme,
			     bool with_evp)
{
	struct suci_state *s = p;
	uint64_t seed = t->seed;

	s->key.id = KEY_ID;
	s->key.scheme = scheme;
	make_priv(&seed, s->key.priv);
	if (tw_suci_public_key(&s->key, s->pub, sizeof(s->pub), &s->pub_len) != TW_OK)
		return -1;
	for (unsigned i = 0; i < NSUCI; i++) {
		uint8_t in[32];
		bench_fill(&seed, in, sizeof(in));
		if (make_suci(s, in, s->suci[i]) != TW_OK)
			return -1;
	}
	if (with_evp && !(s->hn = evp_hn_key(&s->key)))
		return -1;
	if (!with_evp) {
		if (tw_suci_hn_ctx_init(&s->hctx, &s->key) != TW_OK)
			return -1;
		s->have_hctx = true;
	}
	return 0;
}

static void suci_teardown(void *p)
{
	struct suci_state *s = p;

	EVP_PKEY_free(s->hn);
	if (s->have_hctx)
		tw_suci_hn_ctx_free(&s->hctx);
	tw_wipe(s, sizeof(*s));
}

/* ---- the OpenSSL-only de-concealment ---- */

static EVP_PKEY *evp_peer(enum tw_suci_scheme scheme, const uint8_t *pub, size_t len)
{
	if (scheme == TW_SUCI_SCHEME_PROFILE_A)
		return EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub, len);

	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0),
		OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pub, len),
		OSSL_PARAM_END,
	};
	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

static int evp_deconceal(const struct suci_state *s, const char *suci, char *supi, size_t max)
{
	const char *f[8];
	size_t flen[8];
	const char *p = suci;
	uint8_t buf[TW_SUCI_ECIES_OUTPUT_MAX], z[32], k[64], tag[32], bcd[8];
	size_t n, zlen = sizeof(z), pub_len;
	unsigned tag_len;
	int rc = -1, outl;
	EVP_PKEY *peer = NULL;
	EVP_PKEY_CTX *dctx = NULL;
	EVP_KDF *kdf = NULL;
	EVP_KDF_CTX *kctx = NULL;
	EVP_CIPHER_CTX *cctx = NULL;

	/* suci-0-<mcc>-<mnc>-<routing>-<scheme>-<key id>-<scheme output> */
	for (int i = 0; i < 8; i++) {
		f[i] = p;
		flen[i] = strcspn(p, "-");
		p += flen[i];
		if (i < 7) {
			if (*p != '-')
				return -1;
			p++;
		}
	}
	if (*p || flen[0] != 4 || memcmp(f[0], "suci", 4) || flen[1] != 1 || f[1][0] != '0' ||
	    flen[2] != 3 || flen[3] < 2 || flen[3] > 3 || flen[5] != 1 ||
	    f[5][0] != '0' + (int)s->key.scheme || (size_t)(flen[7] / 2) > sizeof(buf))
		return -1;
	char hex[2 * TW_SUCI_ECIES_OUTPUT_MAX + 1];
	memcpy(hex, f[7], flen[7]);
	hex[flen[7]] = 0;
	if (!OPENSSL_hexstr2buf_ex(buf, sizeof(buf), &n, hex, '\0'))
		return -1;
	pub_len = s->key.scheme == TW_SUCI_SCHEME_PROFILE_A ? 32 : 33;
	if (n < pub_len + 1 + 8 || n - pub_len - 8 > sizeof(bcd))
		return -1;
	size_t ct_len = n - pub_len - 8;

	/* C.3.3: Z = ECDH(hn priv, eph pub) */
	peer = evp_peer(s->key.scheme, buf, pub_len);
	dctx = EVP_PKEY_CTX_new(s->hn, NULL);
	if (!peer || !dctx || EVP_PKEY_derive_init(dctx) <= 0 ||
	    EVP_PKEY_derive_set_peer(dctx, peer) <= 0 || EVP_PKEY_derive(dctx, z, &zlen) <= 0 ||
	    zlen != 32)
		goto out;
	/* C.3.2: K = X9.63-KDF-SHA256(Z, SharedInfo1 = eph pub) */
	kdf = EVP_KDF_fetch(NULL, "X963KDF", NULL);
	kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM kp[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, z, 32),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, buf, pub_len),
		OSSL_PARAM_END,
	};
	if (!kctx || EVP_KDF_derive(kctx, k, sizeof(k), kp) <= 0)
		goto out;
	/* MAC tag = HMAC-SHA-256(K[32..63], ciphertext)[0..7], checked first */
	if (!HMAC(EVP_sha256(), k + 32, 32, buf + pub_len, ct_len, tag, &tag_len) ||
	    CRYPTO_memcmp(tag, buf + pub_len + ct_len, 8) != 0)
		goto out;
	/* plaintext = AES-128-CTR(K[0..15], ICB = K[16..31], ciphertext) */
	cctx = EVP_CIPHER_CTX_new();
	if (!cctx || !EVP_DecryptInit_ex(cctx, EVP_aes_128_ctr(), NULL, k, k + 16) ||
	    !EVP_DecryptUpdate(cctx, bcd, &outl, buf + pub_len, (int)ct_len))
		goto out;
	/* TS 24.501 9.11.3.4: BCD, low nibble first, 0xF filler */
	int w = snprintf(supi, max, "imsi-%.3s%.*s", f[2], (int)flen[3], f[3]);
	if (w < 0 || (size_t)w >= max)
		goto out;
	size_t pos = (size_t)w;
	for (size_t i = 0; i < ct_len * 2; i++) {
		unsigned d = i & 1 ? bcd[i / 2] >> 4 : bcd[i / 2] & 15;
		if (d == 15 && i == ct_len * 2 - 1)
			break;
		if (d > 9 || pos + 1 >= max)
			goto out;
		supi[pos++] = (char)('0' + d);
	}
	supi[pos] = 0;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cctx);
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	EVP_PKEY_CTX_free(dctx);
	EVP_PKEY_free(peer);
	OPENSSL_cleanse(z, sizeof(z));
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(bcd, sizeof(bcd));
	return rc;
}

/* ---- scenarios ---- */

static int suci_run(void *p, uint64_t n)
{
	struct suci_state *s = p;

	for (uint64_t i = 0; i < n; i++)
		if (tw_suci_deconceal_ctx(&s->hctx, 1, s->suci[s->next++ % NSUCI], s->supi,
					  sizeof(s->supi)) != TW_OK)
			return -1;
	return 0;
}

static int evp_run(void *p, uint64_t n)
{
	struct suci_state *s = p;

	for (uint64_t i = 0; i < n; i++)
		if (evp_deconceal(s, s->suci[s->next++ % NSUCI], s->supi, sizeof(s->supi)) != 0)
			return -1;
	return 0;
}

static int suci_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct suci_state *s = p;
	char suci[TW_SUCI_STR_MAX];

	if (make_suci(s, in, suci) != TW_OK ||
	    tw_suci_deconceal_ctx(&s->hctx, 1, suci, (char *)out, TW_SUCI_SUPI_STR_MAX) != TW_OK)
		return -1;
	*len = strlen((char *)out);
	return 0;
}

static int evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct suci_state *s = p;
	char suci[TW_SUCI_STR_MAX];

	if (make_suci(s, in, suci) != TW_OK ||
	    evp_deconceal(s, suci, (char *)out, TW_SUCI_SUPI_STR_MAX) != 0)
		return -1;
	*len = strlen((char *)out);
	return 0;
}

static int setup_a(void *p, const struct bench_thread *t)
{
	return suci_setup_scheme(p, t, TW_SUCI_SCHEME_PROFILE_A, false);
}

static int setup_b(void *p, const struct bench_thread *t)
{
	return suci_setup_scheme(p, t, TW_SUCI_SCHEME_PROFILE_B, false);
}

static int setup_a_evp(void *p, const struct bench_thread *t)
{
	return suci_setup_scheme(p, t, TW_SUCI_SCHEME_PROFILE_A, true);
}

static int setup_b_evp(void *p, const struct bench_thread *t)
{
	return suci_setup_scheme(p, t, TW_SUCI_SCHEME_PROFILE_B, true);
}

static const struct bench_scenario sc_suci_a = {
	.name = "suci-a",
	.impl = "twag",
	.what = "SUCI de-conceal, ECIES Profile A (X25519), text to SUPI, prepared key",
	.refs = "suci-a.evp",
	.state_size = sizeof(struct suci_state),
	.setup = setup_a, .run = suci_run, .once = suci_once, .teardown = suci_teardown,
};
BENCH_REGISTER(sc_suci_a)

static const struct bench_scenario sc_suci_a_evp = {
	.name = "suci-a.evp",
	.impl = "openssl-evp",
	.what = "the same ECIES on EVP_PKEY_derive, EVP_KDF X963KDF, aes-128-ctr, HMAC()",
	.state_size = sizeof(struct suci_state),
	.setup = setup_a_evp, .run = evp_run, .once = evp_once, .teardown = suci_teardown,
};
BENCH_REGISTER(sc_suci_a_evp)

static const struct bench_scenario sc_suci_b = {
	.name = "suci-b",
	.impl = "twag",
	.what = "SUCI de-conceal, ECIES Profile B (P-256, compressed), text to SUPI, prepared key",
	.refs = "suci-b.evp",
	.state_size = sizeof(struct suci_state),
	.setup = setup_b, .run = suci_run, .once = suci_once, .teardown = suci_teardown,
};
BENCH_REGISTER(sc_suci_b)

static const struct bench_scenario sc_suci_b_evp = {
	.name = "suci-b.evp",
	.impl = "openssl-evp",
	.what = "the same ECIES on EVP_PKEY_derive, EVP_KDF X963KDF, aes-128-ctr, HMAC()",
	.state_size = sizeof(struct suci_state),
	.setup = setup_b_evp, .run = evp_run, .once = evp_once, .teardown = suci_teardown,
};
BENCH_REGISTER(sc_suci_b_evp)
