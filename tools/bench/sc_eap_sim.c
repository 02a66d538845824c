/*
 * twag-bench — a full EAP-SIM attach, server side (RFC 4186, January
 * 2006): EAP-Response/Identity decode and identity check -> SIM/Start ->
 * SIM/Start response decode -> triplets handed in (as from an HSS: three
 * per subscriber, precomputed) -> MK and the FIPS 186-2 PRF (§7) ->
 * SIM/Challenge with AT_MAC over packet | NONCE_MT -> response decode and
 * AT_MAC over packet | n*SRES verified -> EAP-Success with MSK/EMSK and
 * Session-Id, as one op. The peer's packets are prepared once per
 * subscriber by the twag peer engine.
 *
 * Reference: the same server-side computations written naively on OpenSSL
 * (EVP_Digest SHA-1 for MK, SHA1_Transform for the PRF's G, one-shot HMAC()
 * per AT_MAC, CRYPTO_memcmp), the packets copied from templates; outputs
 * cross-checked on MSK for random Ki, NONCE_MT and RANDs.
 */
#include <string.h>

/* SHA1_Transform for the FIPS 186-2 PRF reference (see sc_kdf.c). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/comp128.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"

enum { NSUB = 16, PKT_MAX = 128 };

static const char realm[] = "wlan.mnc001.mcc001.3gppnetwork.org";

struct sim_sub {
	char imsi[16];
	struct tw_eap_sim_triplet t[3];
	uint8_t nonce_mt[16];
	uint8_t id_resp[96], start_resp[PKT_MAX], chal_resp[PKT_MAX];
	size_t id_resp_len, start_resp_len, chal_resp_len;
	uint8_t msk[64];
};

struct sim_state {
	struct tw_eap_server_cfg cfg;
	struct sim_sub sub[NSUB];
	struct tw_eap_sim_server s;
	uint8_t out[TW_EAP_OUT_MIN];
	unsigned next;
};

/* The peer's random octets: NONCE_MT from the caller. */
static int fixed_random(void *arg, uint8_t *out, size_t len)
{
	const uint8_t *nonce = arg;

	memset(out, 0, len);
	memcpy(out, nonce, len < 16 ? len : 16);
	return TW_OK;
}

/* One attach through the twag server; feeds the prepared peer packets. */
static int server_attach(struct tw_eap_sim_server *s, const struct tw_eap_server_cfg *cfg,
			 const struct sim_sub *u, uint8_t *out, uint8_t msk[64])
{
	size_t len;
	int rc = -1;

	if (tw_eap_sim_server_init(s, cfg, NULL) != TW_OK ||
	    tw_eap_sim_server_input(s, u->id_resp, u->id_resp_len, out,
				    TW_EAP_OUT_MIN, &len) != TW_EAP_SEND ||
	    tw_eap_sim_server_input(s, u->start_resp, u->start_resp_len, out,
				    TW_EAP_OUT_MIN, &len) != TW_EAP_NEED_VECTOR ||
	    tw_eap_sim_server_vector(s, u->t, 3, out, TW_EAP_OUT_MIN, &len) !=
		    TW_EAP_SEND ||
	    tw_eap_sim_server_input(s, u->chal_resp, u->chal_resp_len, out,
				    TW_EAP_OUT_MIN, &len) != TW_EAP_ACCEPT)
		goto out;
	memcpy(msk, tw_eap_sim_server_keys(s)->msk, 64);
	rc = 0;
out:
	tw_eap_sim_server_wipe(s);
	return rc;
}

/*
 * Prepares subscriber u from Ki, NONCE_MT and three RANDs: triplets with
 * COMP128-1, then a peer <-> server exchange that records the peer's
 * packets (Identity, Start, Challenge responses) and checks both sides
 * agree on the MSK.
 */
static int prepare(struct sim_sub *u, const struct tw_eap_server_cfg *cfg,
		   const uint8_t ki[16], const uint8_t nonce_mt[16],
		   const uint8_t rands[3][16], const char *imsi)
{
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids mem;
	struct tw_eap_sim_peer p;
	struct tw_eap_sim_server s;
	struct tw_sub_keys kk;
	struct tw_usim usim;
	uint8_t a[TW_EAP_OUT_MIN], b[TW_EAP_OUT_MIN];
	size_t a_len, b_len;
	int rc = -1;

	memset(u, 0, sizeof(*u));
	memcpy(u->imsi, imsi, 15);
	memcpy(u->nonce_mt, nonce_mt, 16);
	if (tw_sub_keys_comp128(&kk, 1, ki) != TW_OK ||
	    tw_usim_init(&usim, imsi, &kk) != TW_OK)
		goto out;
	for (int i = 0; i < 3; i++) {
		memcpy(u->t[i].rand_, rands[i], 16);
		if (tw_comp128(1, ki, rands[i], u->t[i].sres, u->t[i].kc) != TW_OK)
			goto out;
	}
	memset(&pc, 0, sizeof(pc));
	memset(&mem, 0, sizeof(mem));
	pc.imsi = u->imsi;
	pc.imsi_len = 15;
	pc.realm = realm;
	pc.realm_len = sizeof(realm) - 1;
	if (tw_eap_sim_peer_init(&p, &pc, &mem, &usim, fixed_random, u->nonce_mt) != TW_OK ||
	    tw_eap_sim_server_init(&s, cfg, NULL) != TW_OK ||
	    tw_eap_request_identity(a, sizeof(a), 0, &a_len) != TW_OK)
		goto out;
	/* Identity */
	if (tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    b_len > sizeof(u->id_resp))
		goto out;
	memcpy(u->id_resp, b, b_len);
	u->id_resp_len = b_len;
	/* Start */
	if (tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len) != TW_EAP_SEND ||
	    tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    b_len > PKT_MAX)
		goto out;
	memcpy(u->start_resp, b, b_len);
	u->start_resp_len = b_len;
	/* Challenge */
	if (tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len) !=
		    TW_EAP_NEED_VECTOR ||
	    tw_eap_sim_server_vector(&s, u->t, 3, a, sizeof(a), &a_len) != TW_EAP_SEND ||
	    tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    b_len > PKT_MAX)
		goto out;
	memcpy(u->chal_resp, b, b_len);
	u->chal_resp_len = b_len;
	if (tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len) != TW_EAP_ACCEPT ||
	    tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_ACCEPT ||
	    memcmp(tw_eap_sim_server_keys(&s)->msk, tw_eap_sim_peer_keys(&p)->msk, 64) != 0)
		goto out;
	memcpy(u->msk, tw_eap_sim_server_keys(&s)->msk, 64);
	rc = 0;
out:
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);
	tw_wipe(&kk, sizeof(kk));
	tw_wipe(&usim, sizeof(usim));
	return rc;
}

static void cfg_init(struct tw_eap_server_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->enable_sim = true; /* no store: no pseudonyms, no re-auth */
}

static void imsi_of(char imsi[16], const uint8_t *x)
{
	for (int i = 0; i < 15; i++)
		imsi[i] = (char)('0' + x[i] % 10);
	imsi[15] = 0;
}

static int sim_setup(void *p, const struct bench_thread *t)
{
	struct sim_state *st = p;
	uint64_t seed = t->seed;

	cfg_init(&st->cfg);
	for (unsigned i = 0; i < NSUB; i++) {
		uint8_t ki[16], nonce[16], rands[3][16], x[15];
		char imsi[16];

		bench_fill(&seed, ki, 16);
		bench_fill(&seed, nonce, 16);
		bench_fill(&seed, rands, sizeof(rands));
		bench_fill(&seed, x, sizeof(x));
		imsi_of(imsi, x);
		if (prepare(&st->sub[i], &st->cfg, ki, nonce,
			    (const uint8_t (*)[16])rands, imsi) != 0)
			return -1;
		tw_wipe(ki, 16);
	}
	return 0;
}

static void sim_teardown(void *p)
{
	tw_wipe(p, sizeof(struct sim_state));
}

static int sim_run(void *p, uint64_t n)
{
	struct sim_state *st = p;
	uint8_t msk[64];

	for (uint64_t i = 0; i < n; i++) {
		const struct sim_sub *u = &st->sub[st->next++ % NSUB];
		if (server_attach(&st->s, &st->cfg, u, st->out, msk) != 0)
			return -1;
	}
	tw_wipe(msk, sizeof(msk));
	return 0;
}

/* in = Ki | NONCE_MT | RAND1 | RAND2 (RAND3 = RAND1 ^ RAND2 ^ 0x5c); out = MSK */
static void once_inputs(const uint8_t in[BENCH_IN_LEN], uint8_t rands[3][16], char imsi[16])
{
	memcpy(rands[0], in + 32, 16);
	memcpy(rands[1], in + 48, 16);
	for (int i = 0; i < 16; i++)
		rands[2][i] = (uint8_t)(in[32 + i] ^ in[48 + i] ^ 0x5c);
	imsi_of(imsi, in);
}

static int sim_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct sim_state *st = p;
	uint8_t rands[3][16];
	char imsi[16];
	struct sim_sub u;
	int rc;

	once_inputs(in, rands, imsi);
	rc = prepare(&u, &st->cfg, in, in + 16, (const uint8_t (*)[16])rands, imsi);
	if (rc == 0)
		rc = server_attach(&st->s, &st->cfg, &u, st->out, out);
	*len = 64;
	tw_wipe(&u, sizeof(u));
	return rc;
}

static const struct bench_scenario sc_eap_sim = {
	.name = "eap-sim-attach",
	.impl = "twag",
	.what = "EAP-SIM full attach, server side: Identity, Start, 3 triplets, MK/PRF, Challenge MAC, response MAC verify",
	.refs = "eap-sim-attach.evp",
	.state_size = sizeof(struct sim_state),
	.setup = sim_setup, .run = sim_run, .once = sim_once,
	.teardown = sim_teardown,
};
BENCH_REGISTER(sc_eap_sim)

/* ---- naive OpenSSL reference ------------------------------------------- */

/* FIPS 186-2 change notice 1 PRF (RFC 4186 Appendix B) on SHA1_Transform. */
static void evp_prf(uint8_t out[160], const uint8_t mk[20])
{
	uint8_t xkey[20], block[64];
	SHA_CTX c;

	memcpy(xkey, mk, 20);
	for (int j = 0; j < 4; j++) {
		for (int i = 0; i < 2; i++) {
			uint8_t *w = out + j * 40 + i * 20;
			memset(block, 0, sizeof(block));
			memcpy(block, xkey, 20);
			SHA1_Init(&c);
			SHA1_Transform(&c, block);
			tw_store_be32(w, c.h0);
			tw_store_be32(w + 4, c.h1);
			tw_store_be32(w + 8, c.h2);
			tw_store_be32(w + 12, c.h3);
			tw_store_be32(w + 16, c.h4);
			unsigned carry = 1; /* XKEY = (1 + XKEY + w_i) mod 2^160 */
			for (int b = 19; b >= 0; b--) {
				carry += (unsigned)xkey[b] + w[b];
				xkey[b] = (uint8_t)carry;
				carry >>= 8;
			}
		}
	}
	tw_wipe(xkey, sizeof(xkey));
	tw_wipe(&c, sizeof(c));
}

/* The server's work for one attach, naively: MK, PRF, the Challenge from a
 * template with HMAC() over packet | NONCE_MT, the response's AT_MAC
 * recomputed with HMAC() over packet | SRES and compared. */
static int evp_attach(const struct sim_sub *u, uint8_t msk[64])
{
	static const uint8_t vl_sv[4] = { 0x00, 0x01, 0x00, 0x01 };
	uint8_t mk[20], keys[160], chal[96 + 16], resp[PKT_MAX + 12], md[20];
	const uint8_t *id = u->id_resp + 5;
	size_t id_len = u->id_resp_len - 5, n;
	unsigned md_len;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int rc = -1;

	/* RFC 4186 §7: MK = SHA1(Identity | n*Kc | NONCE_MT | Version List |
	 * Selected Version) */
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, id, id_len) != 1)
		goto out;
	for (int i = 0; i < 3; i++)
		if (EVP_DigestUpdate(ctx, u->t[i].kc, 8) != 1)
			goto out;
	if (EVP_DigestUpdate(ctx, u->start_resp + 12, 16) != 1 || /* NONCE_MT */
	    EVP_DigestUpdate(ctx, vl_sv, 4) != 1 ||
	    EVP_DigestFinal_ex(ctx, mk, NULL) != 1)
		goto out;
	evp_prf(keys, mk);
	/* SIM/Challenge: header, AT_RAND (3), AT_MAC; MAC over it | NONCE_MT */
	n = 8 + 52 + 20;
	memset(chal, 0, sizeof(chal));
	chal[0] = 1, chal[1] = 2, chal[2] = 0, chal[3] = (uint8_t)n;
	chal[4] = 18, chal[5] = 11;
	chal[8] = 1, chal[9] = 13;
	for (int i = 0; i < 3; i++)
		memcpy(chal + 12 + 16 * i, u->t[i].rand_, 16);
	chal[60] = 11, chal[61] = 5;
	memcpy(chal + n, u->start_resp + 12, 16);
	if (HMAC(EVP_sha1(), keys + 16, 16, chal, n + 16, md, &md_len) == NULL)
		goto out;
	memcpy(chal + 64, md, 16);
	/* the response: AT_MAC over packet (MAC zeroed) | SRES1..3 */
	n = u->chal_resp_len;
	memcpy(resp, u->chal_resp, n);
	memset(resp + n - 16, 0, 16);
	for (int i = 0; i < 3; i++)
		memcpy(resp + n + 4 * i, u->t[i].sres, 4);
	if (HMAC(EVP_sha1(), keys + 16, 16, resp, n + 12, md, &md_len) == NULL ||
	    CRYPTO_memcmp(md, u->chal_resp + n - 16, 16) != 0)
		goto out;
	memcpy(msk, keys + 32, 64);
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	OPENSSL_cleanse(mk, sizeof(mk));
	OPENSSL_cleanse(keys, sizeof(keys));
	return rc;
}

static int evp_run(void *p, uint64_t n)
{
	struct sim_state *st = p;
	uint8_t msk[64];

	for (uint64_t i = 0; i < n; i++)
		if (evp_attach(&st->sub[st->next++ % NSUB], msk) != 0)
			return -1;
	tw_wipe(msk, sizeof(msk));
	return 0;
}

static int evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct sim_state *st = p;
	uint8_t rands[3][16];
	char imsi[16];
	struct sim_sub u;
	int rc;

	/* the peer's packets come from the twag peer; the server-side work
	 * (keys, both MACs) is OpenSSL's */
	once_inputs(in, rands, imsi);
	rc = prepare(&u, &st->cfg, in, in + 16, (const uint8_t (*)[16])rands, imsi);
	if (rc == 0)
		rc = evp_attach(&u, out);
	*len = 64;
	tw_wipe(&u, sizeof(u));
	return rc;
}

static const struct bench_scenario sc_eap_sim_evp = {
	.name = "eap-sim-attach.evp",
	.impl = "openssl-evp",
	.what = "EVP SHA-1 MK, PRF on SHA1_Transform, one-shot HMAC() per AT_MAC",
	.state_size = sizeof(struct sim_state),
	.setup = sim_setup, .run = evp_run, .once = evp_once,
	.teardown = sim_teardown,
};
BENCH_REGISTER(sc_eap_sim_evp)
