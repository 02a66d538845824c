/*
 * twag-bench — a full EAP-AKA' / EAP-AKA attach, server side (RFC 9048,
 * October 2021; RFC 4187, January 2006), local mode, as one op:
 *
 *   tw_aka_server_init -> EAP-Response/Identity decode and identity check
 *   (permanent id "6<IMSI>@realm") -> vector: tw_vecsrc_aka_prime (SQN from
 *   the HE record, Milenage f1..f5) -> CK'/IK' (TS 33.402 A.2) -> PRF' to
 *   K_encr..EMSK -> AKA-Challenge with AT_RAND, AT_AUTN, AT_KDF_INPUT,
 *   AT_KDF, AT_IV, AT_ENCR_DATA {AT_NEXT_PSEUDONYM, AT_NEXT_REAUTH_ID,
 *   AT_PADDING} (AES-128-CBC), AT_MAC -> AKA-Challenge response decode ->
 *   AT_MAC verify -> RES check -> pseudonym and re-auth id handed to the
 *   store -> EAP-Success -> MSK/EMSK/Session-Id read -> session wiped.
 *
 * What is timed: exactly the list above, per op. What is not: the peer.
 * Its two packets (EAP-Response/Identity and the AKA-Challenge response)
 * are made once per subscriber in setup() by the twag peer engine against
 * the server. So that the recorded response stays valid, every op restores
 * the subscriber's HE SQN record (a 100-octet struct copy) before asking
 * for the vector: each op recomputes the same vector (same RAND, same SQN)
 * with the full Milenage cost. The identity store is a tiny ring in this
 * file (no lookups on this path, two stores per op), and the random
 * octets the engine asks for (AT_IV, two minted identities) come from a
 * splitmix64 generator standing in for the daemon's buffered DRBG.
 *
 *   eap-aka-prime-attach      the above
 *   eap-aka-prime-attach-hss  the same with the vector supplied (as from an
 *                             HSS over Diameter SWx): no Milenage, no SQN
 *   eap-aka-attach            EAP-AKA (RFC 4187): MK = SHA1(Identity|IK|CK),
 *                             FIPS 186-2 PRF, HMAC-SHA1-128 AT_MAC, with
 *                             AT_BIDDING (D bit) since AKA' is enabled
 *
 * Reference eap-aka-prime-attach.evp: the same server-side crypto written
 * naively on OpenSSL, one call per step: Milenage on EVP aes-128-ecb (a
 * new EVP_CIPHER_CTX per call, bench_ref.h), HMAC() one-shots for CK'/IK'
 * and the seven PRF' blocks, EVP aes-128-cbc for AT_ENCR_DATA, HMAC() for
 * both AT_MACs (challenge and response, HMAC-SHA-256-128), CRYPTO_memcmp;
 * packets from a template. Cross-checked on MSK for random K, OPc, RAND
 * and IMSI.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bench.h"
#include "bench_ref.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

enum { NSUB = 16, PKT_MAX = 256, RING = 8 };

static const char realm[] = "wlan.mnc001.mcc001.3gppnetwork.org";
static const uint8_t net_name[] = "WLAN"; /* TS 24.302 §8.1.1 */

/* ---- the identity store and the random source ------------------------ */

struct ring_store {
	struct {
		uint8_t id[TW_EAP_ID_MAX];
		size_t len;
	} ps[RING], ra[RING];
	struct tw_eap_reauth_state st[RING];
	unsigned n_ps, n_ra;
	uint64_t rng;
};

static int r_ps_lookup(void *arg, const uint8_t *p, size_t len, char imsi[16],
		       size_t *imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_ERR_NOTFOUND;
}

static int r_ps_store(void *arg, const uint8_t *p, size_t len, const char *imsi,
		      size_t imsi_len)
{
	struct ring_store *s = arg;
	unsigned i = s->n_ps++ % RING;

	(void)imsi, (void)imsi_len;
	if (len > TW_EAP_ID_MAX)
		return TW_ERR_LENGTH;
	memcpy(s->ps[i].id, p, len);
	s->ps[i].len = len;
	return TW_OK;
}

static int r_ra_lookup(void *arg, const uint8_t *id, size_t len,
		       struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_ERR_NOTFOUND;
}

static int r_ra_store(void *arg, const uint8_t *id, size_t len,
		      const struct tw_eap_reauth_state *st)
{
	struct ring_store *s = arg;
	unsigned i = s->n_ra++ % RING;

	if (len > TW_EAP_ID_MAX)
		return TW_ERR_LENGTH;
	memcpy(s->ra[i].id, id, len);
	s->ra[i].len = len;
	s->st[i] = *st;
	return TW_OK;
}

static int r_ra_remove(void *arg, const uint8_t *id, size_t len)
{
	(void)arg, (void)id, (void)len;
	return TW_ERR_NOTFOUND;
}

static int r_random(void *arg, uint8_t *out, size_t len)
{
	struct ring_store *s = arg;

	bench_fill(&s->rng, out, len);
	return TW_OK;
}

/* ---- state ------------------------------------------------------------- */

struct aka_sub {
	struct tw_subscriber hss;  /* HE record (SQN restored every op) */
	struct tw_sqn_he sqn0;
	uint8_t k[16], opc[16], amf[2], sqn[6];
	uint8_t rand_[16];
	struct tw_eap_aka_vec v;   /* the vector (for -hss) */
	uint8_t id_resp[PKT_MAX], chal_resp[PKT_MAX];
	size_t id_resp_len, chal_resp_len;
};

struct aka_state {
	struct tw_eap_server_cfg cfg;
	struct tw_eap_identity_ops ops;
	struct ring_store store;
	struct aka_sub sub[NSUB];
	struct tw_aka_server_ctx s;
	uint8_t method;
	uint8_t out[TW_EAP_OUT_MIN];
	unsigned next;
	/* the -lanes rows: a batch of sessions */
	struct tw_aka_server_ctx lane[TW_SHA256_LANES];
	uint8_t lane_out[TW_SHA256_LANES][TW_EAP_OUT_MIN];
};

static void cfg_init(struct aka_state *st, uint64_t seed)
{
	struct tw_eap_server_cfg *cfg = &st->cfg;

	st->store.rng = seed ^ 0x5eed;
	st->ops = (struct tw_eap_identity_ops){
		.arg = &st->store, .pseudonym_lookup = r_ps_lookup,
		.pseudonym_store = r_ps_store, .reauth_lookup = r_ra_lookup,
		.reauth_store = r_ra_store, .reauth_remove = r_ra_remove,
		.random = r_random,
	};
	memset(cfg, 0, sizeof(*cfg));
	cfg->network_name = net_name;
	cfg->network_name_len = sizeof(net_name) - 1;
	cfg->enable_aka_prime = cfg->enable_aka = true;
	cfg->pseudonyms = cfg->fast_reauth = true;
	cfg->realm = realm;
	cfg->realm_len = sizeof(realm) - 1;
	cfg->ops = &st->ops;
}

static int get_vector(uint8_t method, struct tw_subscriber *hss,
		      const uint8_t rand_[16], struct tw_eap_aka_vec *v)
{
	return method == TW_EAP_TYPE_AKA_PRIME ? tw_vecsrc_aka_prime(hss, rand_, v)
					       : tw_vecsrc_aka(hss, rand_, v);
}

/*
 * One attach through the twag server (the op). v == NULL: local mode
 * (restore the SQN record, run the vector source); else the vector given.
 */
static int server_attach(struct aka_state *st, struct aka_sub *u,
			 const struct tw_eap_aka_vec *v, uint8_t msk[64])
{
	struct tw_aka_server_ctx *s = &st->s;
	struct tw_eap_aka_vec lv;
	struct tw_eap_keys k;
	size_t len;
	int rc = -1;

	if (tw_aka_server_init(s, &st->cfg, st->method, 0) != TW_OK ||
	    tw_aka_server_input(s, u->id_resp, u->id_resp_len, st->out,
				sizeof(st->out), &len) != TW_EAP_NEED_VECTOR)
		goto out;
	if (v == NULL) {
		u->hss.sqn = u->sqn0;
		if (get_vector(st->method, &u->hss, u->rand_, &lv) != TW_OK)
			goto out;
		v = &lv;
	}
	if (tw_aka_server_vector(s, v, st->out, sizeof(st->out), &len) != TW_EAP_SEND ||
	    tw_aka_server_input(s, u->chal_resp, u->chal_resp_len, st->out,
				sizeof(st->out), &len) != TW_EAP_ACCEPT ||
	    tw_aka_server_keys(s, &k) != TW_OK)
		goto out;
	memcpy(msk, k.msk, 64);
	rc = 0;
out:
	tw_wipe(&lv, sizeof(lv));
	tw_wipe(&k, sizeof(k));
	tw_aka_server_wipe(s);
	return rc;
}

/*
 * k <= TW_SHA256_LANES attaches through the twag server with the vector
 * step batched (tw_aka_server_vector_many): what a gateway does with the
 * Identity responses of one receive batch. msk gets each one's MSK.
 */
static int server_attach_many(struct aka_state *st, struct aka_sub *const *u, unsigned k,
			      bool hss, uint8_t msk[][64])
{
	struct tw_aka_server_vec_job jobs[TW_SHA256_LANES];
	struct tw_eap_aka_vec lv[TW_SHA256_LANES];
	struct tw_eap_keys kk;
	size_t len;
	int rc = -1;

	for (unsigned j = 0; j < k; j++) {
		struct tw_aka_server_ctx *s = &st->lane[j];

		if (tw_aka_server_init(s, &st->cfg, st->method, 0) != TW_OK ||
		    tw_aka_server_input(s, u[j]->id_resp, u[j]->id_resp_len, st->lane_out[j],
					sizeof(st->lane_out[j]), &len) != TW_EAP_NEED_VECTOR)
			goto out;
		if (!hss) {
			u[j]->hss.sqn = u[j]->sqn0;
			if (get_vector(st->method, &u[j]->hss, u[j]->rand_, &lv[j]) != TW_OK)
				goto out;
		}
		jobs[j] = (struct tw_aka_server_vec_job){
			.s = s, .v = hss ? &u[j]->v : &lv[j],
			.out = st->lane_out[j], .max = sizeof(st->lane_out[j]),
		};
	}
	tw_aka_server_vector_many(jobs, k);
	for (unsigned j = 0; j < k; j++) {
		struct tw_aka_server_ctx *s = &st->lane[j];

		if (jobs[j].rc != TW_EAP_SEND ||
		    tw_aka_server_input(s, u[j]->chal_resp, u[j]->chal_resp_len, st->lane_out[j],
					sizeof(st->lane_out[j]), &len) != TW_EAP_ACCEPT ||
		    tw_aka_server_keys(s, &kk) != TW_OK)
			goto out;
		memcpy(msk[j], kk.msk, 64);
	}
	rc = 0;
out:
	tw_wipe(lv, sizeof(lv));
	tw_wipe(&kk, sizeof(kk));
	for (unsigned j = 0; j < k; j++)
		tw_aka_server_wipe(&st->lane[j]);
	return rc;
}

static void imsi_of(char imsi[16], const uint8_t *x)
{
	memcpy(imsi, "00101", 5);
	for (int i = 5; i < 15; i++)
		imsi[i] = (char)('0' + x[i] % 10);
	imsi[15] = 0;
}

static int peer_random(void *arg, uint8_t *out, size_t len)
{
	bench_fill(arg, out, len);
	return TW_OK;
}

/*
 * Prepares subscriber u from K, OPc, RAND and an IMSI: HE record, the
 * vector, and a peer <-> server exchange recording the peer's packets; both
 * sides must agree on the MSK. The SQN the vector used is kept for the
 * OpenSSL reference.
 */
static int prepare(struct aka_state *st, struct aka_sub *u, const uint8_t k[16],
		   const uint8_t opc[16], const uint8_t rand_[16], const char *imsi)
{
	static const uint8_t amf[2] = { 0x80, 0x00 };
	static const uint8_t zero[6];
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids ids;
	struct tw_aka_peer_ctx p;
	struct tw_aka_server_ctx *s = &st->s;
	struct tw_sub_keys kk;
	struct tw_usim usim;
	struct tw_eap_keys sk, pk;
	uint8_t a[TW_EAP_OUT_MIN], b[TW_EAP_OUT_MIN], outs[5][16];
	size_t a_len, b_len;
	uint64_t prng = 1;
	int rc = -1;

	memset(u, 0, sizeof(*u));
	memcpy(u->k, k, 16);
	memcpy(u->opc, opc, 16);
	memcpy(u->rand_, rand_, 16);
	memcpy(u->amf, amf, 2);
	memset(&p, 0, sizeof(p));
	if (tw_sub_keys_milenage(&kk, k, opc, NULL) != TW_OK ||
	    tw_subscriber_init(&u->hss, imsi, &kk, amf) != TW_OK ||
	    tw_usim_init_from_subscriber(&usim, &u->hss) != TW_OK)
		goto out;
	u->sqn0 = u->hss.sqn;
	memset(&pc, 0, sizeof(pc));
	memset(&ids, 0, sizeof(ids));
	pc.imsi = imsi;
	pc.imsi_len = 15;
	pc.realm = realm;
	pc.realm_len = sizeof(realm) - 1;
	pc.support_aka_prime = st->method == TW_EAP_TYPE_AKA_PRIME;
	pc.network_name = net_name;
	pc.network_name_len = sizeof(net_name) - 1;
	pc.random = peer_random;
	pc.random_arg = &prng;
	if (tw_aka_peer_init(&p, &pc, &usim, &ids) != TW_OK ||
	    tw_aka_server_init(s, &st->cfg, st->method, 0) != TW_OK ||
	    tw_eap_request_identity(a, sizeof(a), 0, &a_len) != TW_OK)
		goto out;
	if (tw_aka_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    b_len > PKT_MAX)
		goto out;
	memcpy(u->id_resp, b, b_len);
	u->id_resp_len = b_len;
	if (tw_aka_server_input(s, b, b_len, a, sizeof(a), &a_len) != TW_EAP_NEED_VECTOR ||
	    get_vector(st->method, &u->hss, rand_, &u->v) != TW_OK ||
	    tw_aka_server_vector(s, &u->v, a, sizeof(a), &a_len) != TW_EAP_SEND ||
	    tw_aka_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    b_len > PKT_MAX)
		goto out;
	memcpy(u->chal_resp, b, b_len);
	u->chal_resp_len = b_len;
	if (tw_aka_server_input(s, b, b_len, a, sizeof(a), &a_len) != TW_EAP_ACCEPT ||
	    tw_aka_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_ACCEPT ||
	    tw_aka_server_keys(s, &sk) != TW_OK || tw_aka_peer_keys(&p, &pk) != TW_OK ||
	    memcmp(sk.msk, pk.msk, 64) != 0)
		goto out;
	/* SQN of the vector = (SQN ^ AK) ^ AK, AK = f5(RAND) */
	if (bench_evp_milenage_outs(k, opc, rand_, zero, zero, 2, outs) != 0)
		goto out;
	for (int i = 0; i < 6; i++)
		u->sqn[i] = u->v.autn[i] ^ outs[1][i];
	rc = 0;
out:
	tw_aka_server_wipe(s);
	tw_aka_peer_wipe(&p);
	tw_wipe(&kk, sizeof(kk));
	tw_wipe(&usim, sizeof(usim));
	tw_wipe(&ids, sizeof(ids));
	tw_wipe(&sk, sizeof(sk));
	tw_wipe(&pk, sizeof(pk));
	tw_wipe(outs, sizeof(outs));
	return rc;
}

static int setup_method(void *p, const struct bench_thread *t, uint8_t method)
{
	struct aka_state *st = p;
	uint64_t seed = t->seed;

	st->method = method;
	cfg_init(st, seed);
	for (unsigned i = 0; i < NSUB; i++) {
		uint8_t k[16], opc[16], rand_[16], x[15];
		char imsi[16];

		bench_fill(&seed, k, 16);
		bench_fill(&seed, opc, 16);
		bench_fill(&seed, rand_, 16);
		bench_fill(&seed, x, sizeof(x));
		imsi_of(imsi, x);
		if (prepare(st, &st->sub[i], k, opc, rand_, imsi) != 0)
			return -1;
		tw_wipe(k, 16);
		tw_wipe(opc, 16);
	}
	return 0;
}

static int prime_setup(void *p, const struct bench_thread *t)
{
	return setup_method(p, t, TW_EAP_TYPE_AKA_PRIME);
}

static int aka_setup(void *p, const struct bench_thread *t)
{
	return setup_method(p, t, TW_EAP_TYPE_AKA);
}

static void aka_teardown(void *p)
{
	tw_wipe(p, sizeof(struct aka_state));
}

static int run_common(void *p, uint64_t n, bool hss)
{
	struct aka_state *st = p;
	uint8_t msk[64];

	for (uint64_t i = 0; i < n; i++) {
		struct aka_sub *u = &st->sub[st->next++ % NSUB];
		if (server_attach(st, u, hss ? &u->v : NULL, msk) != 0)
			return -1;
	}
	tw_wipe(msk, sizeof(msk));
	return 0;
}

static int local_run(void *p, uint64_t n)
{
	return run_common(p, n, false);
}

static int hss_run(void *p, uint64_t n)
{
	return run_common(p, n, true);
}

static int lanes_common(void *p, uint64_t n, bool hss)
{
	struct aka_state *st = p;
	struct aka_sub *u[TW_SHA256_LANES];
	uint8_t msk[TW_SHA256_LANES][64];

	while (n > 0) {
		unsigned k = n < TW_SHA256_LANES ? (unsigned)n : TW_SHA256_LANES;

		for (unsigned j = 0; j < k; j++)
			u[j] = &st->sub[st->next++ % NSUB];
		if (server_attach_many(st, u, k, hss, msk) != 0)
			return -1;
		n -= k;
	}
	tw_wipe(msk, sizeof(msk));
	return 0;
}

static int lanes_run(void *p, uint64_t n)
{
	return lanes_common(p, n, false);
}

static int lanes_hss_run(void *p, uint64_t n)
{
	return lanes_common(p, n, true);
}

/* in = K | OPc | RAND | IMSI digits (15 octets mod 10); out = MSK */
static int once_prepare(struct aka_state *st, struct aka_sub *u,
			const uint8_t in[BENCH_IN_LEN])
{
	char imsi[16];

	imsi_of(imsi, in + 48);
	return prepare(st, u, in, in + 16, in + 32, imsi);
}

static int once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
		       size_t *len, bool hss)
{
	struct aka_state *st = p;
	struct aka_sub u;
	int rc = once_prepare(st, &u, in);

	if (rc == 0)
		rc = server_attach(st, &u, hss ? &u.v : NULL, out);
	*len = 64;
	tw_wipe(&u, sizeof(u));
	return rc;
}

static int local_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return once_common(p, in, out, len, false);
}

static int hss_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return once_common(p, in, out, len, true);
}

/* The input's attach as every lane of a full batch: all sixteen MSKs
 * must be the same; out = that MSK (checked against the reference). */
static int lanes_once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
			     size_t *len, bool hss)
{
	struct aka_state *st = p;
	struct aka_sub u, *us[TW_SHA256_LANES];
	uint8_t msk[TW_SHA256_LANES][64];
	int rc = once_prepare(st, &u, in);

	for (unsigned j = 0; j < TW_SHA256_LANES; j++)
		us[j] = &u;
	if (rc == 0)
		rc = server_attach_many(st, us, TW_SHA256_LANES, hss, msk);
	for (unsigned j = 1; rc == 0 && j < TW_SHA256_LANES; j++)
		if (memcmp(msk[j], msk[0], 64) != 0)
			rc = -1;
	memcpy(out, msk[0], 64);
	*len = 64;
	tw_wipe(&u, sizeof(u));
	tw_wipe(msk, sizeof(msk));
	return rc;
}

static int lanes_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return lanes_once_common(p, in, out, len, false);
}

static int lanes_hss_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return lanes_once_common(p, in, out, len, true);
}

static const struct bench_scenario sc_prime = {
	.name = "eap-aka-prime-attach",
	.impl = "twag",
	.what = "EAP-AKA' full attach, server side, local mode: Identity, Milenage vector, CK'/IK', PRF', Challenge (ENCR_DATA, MAC), response MAC+RES",
	.refs = "eap-aka-prime-attach.evp",
	.state_size = sizeof(struct aka_state),
	.setup = prime_setup, .run = local_run, .once = local_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_prime)

static const struct bench_scenario sc_prime_hss = {
	.name = "eap-aka-prime-attach-hss",
	.impl = "twag",
	.what = "the same with the vector supplied by an HSS (no Milenage)",
	.refs = "eap-aka-prime-attach.evp",
	.state_size = sizeof(struct aka_state),
	.setup = prime_setup, .run = hss_run, .once = hss_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_prime_hss)

static const struct bench_scenario sc_prime_lanes = {
	.name = "eap-aka-prime-attach-lanes",
	.impl = "twag",
	.what = "eap-aka-prime-attach for 16 sessions at once: vector step batched (tw_aka_server_vector_many: CK'/IK', PRF', AT_MAC in 16 lanes)",
	.refs = "eap-aka-prime-attach.evp",
	.granule = TW_SHA256_LANES,
	.state_size = sizeof(struct aka_state),
	.setup = prime_setup, .run = lanes_run, .once = lanes_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_prime_lanes)

static const struct bench_scenario sc_prime_hss_lanes = {
	.name = "eap-aka-prime-attach-hss-lanes",
	.impl = "twag",
	.what = "the same with the vectors supplied by an HSS (no Milenage)",
	.refs = "eap-aka-prime-attach.evp",
	.granule = TW_SHA256_LANES,
	.state_size = sizeof(struct aka_state),
	.setup = prime_setup, .run = lanes_hss_run, .once = lanes_hss_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_prime_hss_lanes)

static const struct bench_scenario sc_aka = {
	.name = "eap-aka-attach",
	.impl = "twag",
	.what = "EAP-AKA full attach, server side, local mode: Milenage, MK/FIPS PRF, HMAC-SHA1 AT_MAC x2",
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = local_run, .once = local_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_aka)

/* ---- naive OpenSSL reference ------------------------------------------- */

static int evp_cbc(const uint8_t key[16], const uint8_t iv[16], uint8_t *buf, int len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, rc = -1;

	if (c != NULL && EVP_EncryptInit_ex(c, EVP_aes_128_cbc(), NULL, key, iv) == 1 &&
	    EVP_CIPHER_CTX_set_padding(c, 0) == 1 &&
	    EVP_EncryptUpdate(c, buf, &n, buf, len) == 1 && n == len)
		rc = 0;
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* Appends a Type | Length | Actual Length | value attribute, padded. */
static size_t put_var(uint8_t *p, uint8_t type, const uint8_t *v, size_t len)
{
	size_t total = (4 + len + 3) & ~(size_t)3;

	memset(p, 0, total);
	p[0] = type;
	p[1] = (uint8_t)(total / 4);
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + 4, v, len);
	return total;
}

/* A minted identity: leading digit, 16 characters [0-9a-z], optional realm. */
static size_t evp_mint(struct ring_store *rs, uint8_t *out, char digit, bool with_realm)
{
	uint8_t r[16];
	size_t n = 0;

	bench_fill(&rs->rng, r, sizeof(r));
	out[n++] = (uint8_t)digit;
	for (int i = 0; i < 16; i++)
		out[n++] = (uint8_t)"0123456789abcdefghijklmnopqrstuvwxyz"[r[i] % 36];
	if (with_realm) {
		out[n++] = '@';
		memcpy(out + n, realm, sizeof(realm) - 1);
		n += sizeof(realm) - 1;
	}
	return n;
}

/*
 * The server's work for one AKA' attach, naively: Milenage (EVP), AUTN,
 * CK'/IK' and PRF' (HMAC() per block), the challenge from a template with
 * AT_ENCR_DATA (EVP AES-CBC) and AT_MAC (HMAC()), then the response's
 * attributes walked, AT_MAC recomputed over a copy and compared, RES
 * compared. The identities go to the same ring store.
 */
static int evp_attach(struct aka_state *st, const struct aka_sub *u, uint8_t msk[64])
{
	uint8_t outs[5][16], autn[16], key[32], s[32], ckik[32], mk[7 * 32];
	uint8_t t[32 + 8 + TW_EAP_ID_MAX + 1], md[32], iv[16];
	uint8_t pkt[PKT_MAX + 256], resp[PKT_MAX], plain[160];
	uint8_t pseudo[32], reauth[32 + sizeof(realm)];
	const uint8_t *id = u->id_resp + 5, *mac = NULL, *res = NULL;
	size_t id_len = u->id_resp_len - 5, n, pl, ps_len, ra_len, res_len = 0;
	unsigned md_len;
	int rc = -1;

	if (u->id_resp[4] != TW_EAP_TYPE_IDENTITY || id_len == 0 ||
	    id_len > TW_EAP_ID_MAX || id[0] != '6')
		goto out;
	/* TS 33.102 §6.3.2: AUTN = SQN ^ AK || AMF (separation bit set) || MAC-A */
	if (bench_evp_milenage_outs(u->k, u->opc, u->rand_, u->sqn, u->amf, 4, outs) != 0)
		goto out;
	for (int i = 0; i < 6; i++)
		autn[i] = u->sqn[i] ^ outs[1][i];
	memcpy(autn + 6, u->amf, 2);
	memcpy(autn + 8, outs[0], 8);
	/* TS 33.402 A.2: CK' | IK' = HMAC-SHA-256(CK | IK, 0x20 | "WLAN" |
	 * 00 04 | SQN ^ AK | 00 06) */
	memcpy(key, outs[2], 16);
	memcpy(key + 16, outs[3], 16);
	s[0] = 0x20;
	memcpy(s + 1, net_name, 4);
	s[5] = 0, s[6] = 4;
	memcpy(s + 7, autn, 6);
	s[13] = 0, s[14] = 6;
	if (!HMAC(EVP_sha256(), key, 32, s, 15, ckik, &md_len))
		goto out;
	/* RFC 9048 §3.3/§3.4: MK = PRF'(IK' | CK', "EAP-AKA'" | Identity) */
	memcpy(key, ckik + 16, 16);
	memcpy(key + 16, ckik, 16);
	for (unsigned i = 1; i <= 7; i++) {
		size_t tl = 0;
		if (i > 1) {
			memcpy(t, mk + (i - 2) * 32, 32);
			tl = 32;
		}
		memcpy(t + tl, "EAP-AKA'", 8);
		memcpy(t + tl + 8, id, id_len);
		t[tl + 8 + id_len] = (uint8_t)i;
		if (!HMAC(EVP_sha256(), key, 32, t, tl + 8 + id_len + 1, mk + (i - 1) * 32, &md_len))
			goto out;
	}
	/* K_encr = mk[0..16), K_aut = mk[16..48), MSK = mk[80..144) */
	ps_len = evp_mint(&st->store, pseudo, '7', false);
	ra_len = evp_mint(&st->store, reauth, '8', true);
	bench_fill(&st->store.rng, iv, 16);

	/* RFC 4187 §9.3 / RFC 9048: EAP-Request/AKA-Challenge */
	n = 0;
	pkt[n++] = TW_EAP_REQUEST;
	pkt[n++] = (uint8_t)(u->id_resp[1] + 1);
	n += 2;
	pkt[n++] = TW_EAP_TYPE_AKA_PRIME;
	pkt[n++] = TW_SIMAKA_CHALLENGE;
	pkt[n++] = 0, pkt[n++] = 0;
	pkt[n++] = TW_AT_RAND, pkt[n++] = 5, pkt[n++] = 0, pkt[n++] = 0;
	memcpy(pkt + n, u->rand_, 16), n += 16;
	pkt[n++] = TW_AT_AUTN, pkt[n++] = 5, pkt[n++] = 0, pkt[n++] = 0;
	memcpy(pkt + n, autn, 16), n += 16;
	n += put_var(pkt + n, TW_AT_KDF_INPUT, net_name, 4);
	pkt[n++] = TW_AT_KDF, pkt[n++] = 1, pkt[n++] = 0, pkt[n++] = 1;
	pkt[n++] = TW_AT_IV, pkt[n++] = 5, pkt[n++] = 0, pkt[n++] = 0;
	memcpy(pkt + n, iv, 16), n += 16;
	pl = put_var(plain, TW_AT_NEXT_PSEUDONYM, pseudo, ps_len);
	pl += put_var(plain + pl, TW_AT_NEXT_REAUTH_ID, reauth, ra_len);
	if (pl % 16) { /* AT_PADDING */
		size_t pad = 16 - pl % 16;
		memset(plain + pl, 0, pad);
		plain[pl] = TW_AT_PADDING;
		plain[pl + 1] = (uint8_t)(pad / 4);
		pl += pad;
	}
	if (evp_cbc(mk, iv, plain, (int)pl) != 0)
		goto out;
	pkt[n++] = TW_AT_ENCR_DATA, pkt[n++] = (uint8_t)((pl + 4) / 4);
	pkt[n++] = 0, pkt[n++] = 0;
	memcpy(pkt + n, plain, pl), n += pl;
	pkt[n++] = TW_AT_MAC, pkt[n++] = 5, pkt[n++] = 0, pkt[n++] = 0;
	memset(pkt + n, 0, 16), n += 16;
	tw_store_be16(pkt + 2, (uint16_t)n);
	/* RFC 9048 §3.4.1: AT_MAC = HMAC-SHA-256-128(K_aut, packet) */
	if (!HMAC(EVP_sha256(), mk + 16, 32, pkt, n, md, &md_len))
		goto out;
	memcpy(pkt + n - 16, md, 16);

	/* the response: walk the attributes for AT_RES and AT_MAC */
	n = u->chal_resp_len;
	if (n < 8 || n > sizeof(resp) || tw_load_be16(u->chal_resp + 2) != n ||
	    u->chal_resp[0] != TW_EAP_RESPONSE || u->chal_resp[4] != TW_EAP_TYPE_AKA_PRIME ||
	    u->chal_resp[5] != TW_SIMAKA_CHALLENGE)
		goto out;
	memcpy(resp, u->chal_resp, n);
	for (size_t off = 8; off < n;) {
		size_t al = 4u * resp[off + 1];
		if (al == 0 || off + al > n)
			goto out;
		if (resp[off] == TW_AT_MAC && al == 20) {
			mac = u->chal_resp + off + 4;
			memset(resp + off + 4, 0, 16);
		} else if (resp[off] == TW_AT_RES) {
			res_len = tw_load_be16(resp + off + 2) / 8u;
			res = u->chal_resp + off + 4;
			if (res_len + 4 > al)
				goto out;
		}
		off += al;
	}
	if (mac == NULL || res == NULL ||
	    !HMAC(EVP_sha256(), mk + 16, 32, resp, n, md, &md_len) ||
	    CRYPTO_memcmp(md, mac, 16) != 0 || res_len != 8 ||
	    CRYPTO_memcmp(res, outs[1] + 8, 8) != 0)
		goto out;
	(void)r_ps_store(&st->store, pseudo, ps_len, NULL, 0);
	{
		struct tw_eap_reauth_state rs;
		memset(&rs, 0, sizeof(rs));
		memcpy(rs.k_encr, mk, 16);
		memcpy(rs.k_aut, mk + 16, 32);
		memcpy(rs.k_re, mk + 48, 32);
		(void)r_ra_store(&st->store, reauth, ra_len, &rs);
		OPENSSL_cleanse(&rs, sizeof(rs));
	}
	memcpy(msk, mk + 80, 64);
	rc = 0;
out:
	OPENSSL_cleanse(outs, sizeof(outs));
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(ckik, sizeof(ckik));
	OPENSSL_cleanse(mk, sizeof(mk));
	OPENSSL_cleanse(t, sizeof(t));
	OPENSSL_cleanse(md, sizeof(md));
	OPENSSL_cleanse(plain, sizeof(plain));
	return rc;
}

static int evp_run(void *p, uint64_t n)
{
	struct aka_state *st = p;
	uint8_t msk[64];

	for (uint64_t i = 0; i < n; i++)
		if (evp_attach(st, &st->sub[st->next++ % NSUB], msk) != 0)
			return -1;
	tw_wipe(msk, sizeof(msk));
	return 0;
}

static int evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct aka_state *st = p;
	struct aka_sub u;
	int rc;

	/* the peer's packets come from the twag peer; the server-side work
	 * (vector, keys, challenge, both MACs) is OpenSSL's */
	rc = once_prepare(st, &u, in);
	if (rc == 0)
		rc = evp_attach(st, &u, out);
	*len = 64;
	tw_wipe(&u, sizeof(u));
	return rc;
}

static const struct bench_scenario sc_prime_evp = {
	.name = "eap-aka-prime-attach.evp",
	.impl = "openssl-evp",
	.what = "EVP Milenage, HMAC() for CK'/IK', PRF' blocks and both AT_MACs, EVP AES-CBC ENCR_DATA",
	.state_size = sizeof(struct aka_state),
	.setup = prime_setup, .run = evp_run, .once = evp_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_prime_evp)
