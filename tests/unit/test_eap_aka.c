/* Tests of the EAP-AKA / EAP-AKA' server and peer engines (RFC 4187,
 * RFC 9048): RFC 5448 App. C keys and the AOSP AKA' packets through the
 * server, peer<->server runs for random subscribers, bad input. */
#include <stdio.h>

#include "tw_test.h"
#include "../../src/crypto/sha_internal.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/nai.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

/* ---- an in-memory identity store -------------------------------------- */

enum { STORE_N = 32 };
struct mem_store {
	struct { uint8_t id[TW_EAP_ID_MAX]; size_t len; char imsi[16]; size_t imsi_len; } ps[STORE_N];
	struct { uint8_t id[TW_EAP_ID_MAX]; size_t len; struct tw_eap_reauth_state st; } ra[STORE_N];
	int n_ps, n_ra;
};

static int m_ps_lookup(void *arg, const uint8_t *p, size_t len, char imsi[16],
		       size_t *imsi_len)
{
	struct mem_store *s = arg;
	for (int i = 0; i < s->n_ps; i++)
		if (s->ps[i].len == len && memcmp(s->ps[i].id, p, len) == 0) {
			memcpy(imsi, s->ps[i].imsi, 16);
			*imsi_len = s->ps[i].imsi_len;
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int m_ps_store(void *arg, const uint8_t *p, size_t len, const char *imsi,
		      size_t imsi_len)
{
	struct mem_store *s = arg;
	if (s->n_ps == STORE_N || len > TW_EAP_ID_MAX)
		return TW_ERR_NOMEM;
	memcpy(s->ps[s->n_ps].id, p, len);
	s->ps[s->n_ps].len = len;
	memcpy(s->ps[s->n_ps].imsi, imsi, imsi_len);
	s->ps[s->n_ps].imsi[imsi_len] = 0;
	s->ps[s->n_ps].imsi_len = imsi_len;
	s->n_ps++;
	return TW_OK;
}

static int m_ra_lookup(void *arg, const uint8_t *id, size_t len,
		       struct tw_eap_reauth_state *st)
{
	struct mem_store *s = arg;
	for (int i = 0; i < s->n_ra; i++)
		if (s->ra[i].len == len && memcmp(s->ra[i].id, id, len) == 0) {
			*st = s->ra[i].st;
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int m_ra_store(void *arg, const uint8_t *id, size_t len,
		      const struct tw_eap_reauth_state *st)
{
	struct mem_store *s = arg;
	if (s->n_ra == STORE_N)
		return TW_ERR_NOMEM;
	memcpy(s->ra[s->n_ra].id, id, len);
	s->ra[s->n_ra].len = len;
	s->ra[s->n_ra].st = *st;
	s->n_ra++;
	return TW_OK;
}

static int m_ra_remove(void *arg, const uint8_t *id, size_t len)
{
	struct mem_store *s = arg;
	for (int i = 0; i < s->n_ra; i++)
		if (s->ra[i].len == len && memcmp(s->ra[i].id, id, len) == 0) {
			s->ra[i] = s->ra[--s->n_ra];
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int m_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	tw_test_random(out, len);
	return TW_OK;
}

static struct mem_store store;
static const struct tw_eap_identity_ops ops = {
	.arg = &store, .pseudonym_lookup = m_ps_lookup,
	.pseudonym_store = m_ps_store, .reauth_lookup = m_ra_lookup,
	.reauth_store = m_ra_store, .reauth_remove = m_ra_remove,
	.random = m_random,
};

static void base_cfg(struct tw_eap_server_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->network_name = (const uint8_t *)"WLAN";
	cfg->network_name_len = 4;
	cfg->enable_aka_prime = cfg->enable_aka = true;
	cfg->pseudonyms = cfg->fast_reauth = true;
	cfg->reauth_limit = 4;
	cfg->realm = "wlan.mnc001.mcc001.3gppnetwork.org";
	cfg->realm_len = strlen(cfg->realm);
	cfg->ops = &ops;
}

/* ---- RFC 5448 Appendix C keys through the engine ---------------------- */

static int cur_method;

/* Feeds EAP-Response/Identity, the vector, then a peer response built
 * here with the K_aut of the vector file; checks MSK/EMSK. */
static void engine_keys_case(const struct tv_case *c)
{
	struct tw_eap_server_cfg cfg;
	struct tw_aka_server_ctx s;
	struct tw_eap_aka_vec v;
	struct tw_simaka_msg m;
	struct tw_simaka_builder b;
	struct tw_simaka_mac_ctx mac;
	struct tw_eap_keys k;
	uint8_t pkt[600], out[1024], k_aut[32], net[64];
	size_t len, out_len, k_aut_len, net_len;
	const char *idt = tv_str(c, "identity");

	base_cfg(&cfg);
	cfg.ops = NULL;
	cfg.pseudonyms = cfg.fast_reauth = false;
	if (tv_has(c, "network_name")) {
		const char *nn = tv_str(c, "network_name");
		net_len = strlen(nn);
		memcpy(net, nn, net_len);
		cfg.network_name = net;
		cfg.network_name_len = net_len;
	}
	memset(&v, 0, sizeof(v));
	tv_hex(c, "rand", v.rand_, 16);
	tv_hex(c, "autn", v.autn, 16);
	tv_hex(c, "ck", v.ck, 16);
	tv_hex(c, "ik", v.ik, 16);
	v.xres_len = tv_hex(c, "res", v.xres, 16);
	k_aut_len = tv_hex(c, "k_aut", k_aut, 32);

	CHECK_OK(tw_aka_server_init(&s, &cfg, (uint8_t)cur_method, 0));
	CHECK_OK(tw_eap_encode(pkt, sizeof(pkt), &len, TW_EAP_RESPONSE, 0x10,
			       TW_EAP_TYPE_IDENTITY, (const uint8_t *)idt,
			       strlen(idt)));
	CHECK(tw_aka_server_input(&s, pkt, len, out, sizeof(out), &out_len) ==
	      TW_EAP_NEED_VECTOR);
	CHECK(tw_aka_server_vec_request(&s) != NULL &&
	      strcmp(tw_aka_server_vec_request(&s)->imsi, idt + 1) == 0);
	CHECK(tw_aka_server_vector(&s, &v, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND);
	/* the challenge verifies under the published K_aut */
	CHECK_OK(tw_simaka_decode(&m, out, out_len));
	CHECK_OK(tw_simaka_mac_init(&mac, (uint8_t)cur_method, k_aut, k_aut_len));
	CHECK_OK(tw_simaka_mac_verify(&mac, &m, NULL, 0));
	CHECK(m.id == 0x11 && m.subtype == TW_SIMAKA_CHALLENGE);
	tw_simaka_build_init(&b, pkt, sizeof(pkt), TW_EAP_RESPONSE, 0x11,
			     (uint8_t)cur_method, TW_SIMAKA_CHALLENGE);
	tw_simaka_put_res(&b, v.xres, (uint16_t)(v.xres_len * 8));
	tw_simaka_put_mac(&b);
	CHECK_OK(tw_simaka_finish_mac(&b, &mac, NULL, 0, &len));
	CHECK(tw_aka_server_input(&s, pkt, len, out, sizeof(out), &out_len) ==
	      TW_EAP_ACCEPT);
	CHECK(out_len == 4 && out[0] == TW_EAP_SUCCESS && out[1] == 0x11);
	CHECK_OK(tw_aka_server_keys(&s, &k));
	TV_EXPECT(c, "msk", k.msk, 64);
	TV_EXPECT(c, "emsk", k.emsk, 64);
	CHECK(k.session_id_len == 33 && k.session_id[0] == cur_method &&
	      memcmp(k.session_id + 1, v.rand_, 16) == 0 &&
	      memcmp(k.session_id + 17, v.autn, 16) == 0);
	tw_aka_server_wipe(&s);
}

/* The AOSP EAP-AKA' packets carrying RFC 5448 TC1: our challenge must be
 * byte for byte the published one, and the published response accepted. */
static uint8_t aosp_req[256], aosp_resp[256], tc1_msk[64];
static size_t aosp_req_len, aosp_resp_len;
static void grab_packets(const struct tv_case *c)
{
	const char *id = tv_str(c, "id");
	if (strcmp(id, "AKA' challenge request, RFC 5448 TC1") == 0)
		aosp_req_len = tv_hex(c, "packet", aosp_req, sizeof(aosp_req));
	else if (strcmp(id, "AKA' challenge response, RFC 5448 TC1") == 0)
		aosp_resp_len = tv_hex(c, "packet", aosp_resp, sizeof(aosp_resp));
}

static bool have_tc1;
static void grab_tc1(const struct tv_case *c)
{
	if (!have_tc1 && strcmp(tv_str(c, "id"), "RFC 5448 test case 1") == 0)
		have_tc1 = tv_hex(c, "msk", tc1_msk, 64) == 64;
}

/* A server at TC1's challenge: EAP-Response/Identity id 0xcd given. */
static void tc1_server(struct tw_aka_server_ctx *s, struct tw_eap_server_cfg *cfg,
		       uint8_t *out, size_t *out_len)
{
	struct tw_eap_aka_vec v;
	uint8_t pkt[64];
	size_t len;
	static const char idt[] = "0555444333222111";

	base_cfg(cfg);
	cfg->ops = NULL;
	cfg->pseudonyms = cfg->fast_reauth = false;
	memset(&v, 0, sizeof(v));
	tw_test_hex(v.rand_, 16, "81e92b6c0ee0e12ebceba8d92a99dfa5");
	tw_test_hex(v.autn, 16, "bb52e91c747ac3ab2a5c23d15ee351d5");
	tw_test_hex(v.ik, 16, "9744871ad32bf9bbd1dd5ce54e3e2e5a");
	tw_test_hex(v.ck, 16, "5349fbe098649f948f5d2e973a81c00f");
	v.xres_len = tw_test_hex(v.xres, 16, "28d7b0f2a2ec3de5");
	CHECK_OK(tw_aka_server_init(s, cfg, TW_EAP_TYPE_AKA_PRIME, 0));
	CHECK_OK(tw_eap_encode(pkt, sizeof(pkt), &len, TW_EAP_RESPONSE, 0xcd,
			       TW_EAP_TYPE_IDENTITY, (const uint8_t *)idt,
			       strlen(idt)));
	CHECK(tw_aka_server_input(s, pkt, len, out, 1024, out_len) ==
	      TW_EAP_NEED_VECTOR);
	CHECK(tw_aka_server_vector(s, &v, out, 1024, out_len) == TW_EAP_SEND);
}

static bool is_notif_failure(const uint8_t *out, size_t len)
{
	struct tw_simaka_msg m;
	return tw_simaka_decode(&m, out, len) == TW_OK &&
	       m.subtype == TW_SIMAKA_NOTIFICATION &&
	       tw_simaka_has(&m.notification) &&
	       m.notification_code == TW_SIMAKA_NOTIF_GENERAL_FAILURE &&
	       !tw_simaka_has(&m.mac);
}

/* After a failure notification, any response gets EAP-Failure. */
static void finish_failure(struct tw_aka_server_ctx *s, const uint8_t *notif)
{
	uint8_t pkt[16], out[1024];
	size_t out_len;
	pkt[0] = TW_EAP_RESPONSE;
	pkt[1] = notif[1];
	tw_store_be16(pkt + 2, 8);
	pkt[4] = TW_EAP_TYPE_AKA_PRIME;
	pkt[5] = TW_SIMAKA_NOTIFICATION;
	pkt[6] = pkt[7] = 0;
	CHECK(tw_aka_server_input(s, pkt, 8, out, sizeof(out), &out_len) ==
	      TW_EAP_REJECT);
	CHECK(out_len == 4 && out[0] == TW_EAP_FAILURE && out[1] == notif[1]);
}

static void test_aosp_packets(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_aka_server_ctx s;
	struct tw_eap_keys k;
	uint8_t out[1024], want[256], resp[256], bad[256];
	size_t out_len, want_len, resp_len;

	tv_run_file("eap_aka_packets.vec", grab_packets);
	CHECK(aosp_req_len > 0 && aosp_resp_len > 0 && have_tc1);
	if (!aosp_req_len || !aosp_resp_len || !have_tc1)
		return;
	want_len = aosp_req_len;
	memcpy(want, aosp_req, want_len);
	resp_len = aosp_resp_len;
	memcpy(resp, aosp_resp, resp_len);
	tc1_server(&s, &cfg, out, &out_len);
	CHECK(out_len == want_len && memcmp(out, want, want_len) == 0);
	/* wrong identifier: silently discarded, state unchanged */
	memcpy(bad, resp, resp_len);
	bad[1] ^= 1;
	CHECK(tw_aka_server_input(&s, bad, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_DISCARD);
	/* an EAP-Request is not a response: discarded */
	memcpy(bad, resp, resp_len);
	bad[0] = TW_EAP_REQUEST;
	CHECK(tw_aka_server_input(&s, bad, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_DISCARD);
	CHECK(tw_aka_server_keys(&s, &k) == TW_ERR_STATE);
	CHECK(tw_aka_server_input(&s, resp, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_ACCEPT);
	CHECK_OK(tw_aka_server_keys(&s, &k));
	CHECK_MEM(k.msk, tc1_msk, 64);
	/* finished: anything more is discarded */
	CHECK(tw_aka_server_input(&s, resp, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_DISCARD);
	tw_aka_server_wipe(&s);

	/* every single bit of AT_MAC flipped: failure notification, then
	 * EAP-Failure; never accepted */
	bool all = true;
	for (unsigned bit = 0; bit < 128; bit++) {
		tc1_server(&s, &cfg, out, &out_len);
		memcpy(bad, resp, resp_len);
		bad[resp_len - 16 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int a = tw_aka_server_input(&s, bad, resp_len, out, sizeof(out),
					    &out_len);
		all &= a == TW_EAP_SEND && is_notif_failure(out, out_len);
		all &= tw_aka_server_keys(&s, &k) == TW_ERR_STATE;
	}
	CHECK(all);
	finish_failure(&s, out);

	/* a flipped RES bit (MAC recomputed would be needed: the MAC check
	 * fails first, which is the point of the ordering) */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, resp_len);
	bad[12] ^= 0x80;
	CHECK(tw_aka_server_input(&s, bad, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND && is_notif_failure(out, out_len));

	/* AT_MAC missing: the response without its last attribute */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, resp_len);
	tw_store_be16(bad + 2, (uint16_t)(resp_len - 20));
	CHECK(tw_aka_server_input(&s, bad, resp_len - 20, out, sizeof(out),
				  &out_len) == TW_EAP_SEND &&
	      is_notif_failure(out, out_len));

	/* AT_MAC truncated: its length field says 4 (16 octets) but the
	 * packet ends 4 octets early */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, resp_len);
	tw_store_be16(bad + 2, (uint16_t)(resp_len - 4));
	CHECK(tw_aka_server_input(&s, bad, resp_len - 4, out, sizeof(out),
				  &out_len) == TW_EAP_SEND &&
	      is_notif_failure(out, out_len));

	/* a zero-length attribute */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, resp_len);
	bad[9] = 0;
	CHECK(tw_aka_server_input(&s, bad, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND && is_notif_failure(out, out_len));

	/* AT_RES duplicated (the RFC allows one) */
	tc1_server(&s, &cfg, out, &out_len);
	{
		size_t n = 8 + 12; /* header + AT_RES (3 * 4) */
		memcpy(bad, resp, n);
		memcpy(bad + n, resp + 8, 12);
		memcpy(bad + n + 12, resp + n, resp_len - n);
		tw_store_be16(bad + 2, (uint16_t)(resp_len + 12));
		CHECK(tw_aka_server_input(&s, bad, resp_len + 12, out, sizeof(out),
					  &out_len) == TW_EAP_SEND &&
		      is_notif_failure(out, out_len));
	}

	/* an unknown non-skippable attribute (type 99) */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, 8);
	bad[8] = 99, bad[9] = 1, bad[10] = bad[11] = 0;
	memcpy(bad + 12, resp + 8, resp_len - 8);
	tw_store_be16(bad + 2, (uint16_t)(resp_len + 4));
	CHECK(tw_aka_server_input(&s, bad, resp_len + 4, out, sizeof(out),
				  &out_len) == TW_EAP_SEND &&
	      is_notif_failure(out, out_len));

	/* a subtype the state does not expect (AKA-Identity) */
	tc1_server(&s, &cfg, out, &out_len);
	memcpy(bad, resp, resp_len);
	bad[5] = TW_SIMAKA_IDENTITY;
	CHECK(tw_aka_server_input(&s, bad, resp_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND && is_notif_failure(out, out_len));

	/* AKA-Authentication-Reject and AKA-Client-Error: EAP-Failure */
	tc1_server(&s, &cfg, out, &out_len);
	{
		uint8_t rej[8] = { 2, 0xce, 0, 8, 50, TW_SIMAKA_AUTH_REJECT, 0, 0 };
		CHECK(tw_aka_server_input(&s, rej, 8, out, sizeof(out), &out_len) ==
		      TW_EAP_REJECT && out[0] == TW_EAP_FAILURE && out[1] == 0xce);
	}
	tc1_server(&s, &cfg, out, &out_len);
	{
		uint8_t ce[12] = { 2, 0xce, 0, 12, 50, TW_SIMAKA_CLIENT_ERROR, 0, 0,
				   TW_AT_CLIENT_ERROR_CODE, 1, 0, 0 };
		CHECK(tw_aka_server_input(&s, ce, 12, out, sizeof(out), &out_len) ==
		      TW_EAP_REJECT);
	}
	/* AT_KDF proposal of another KDF: failure notification */
	tc1_server(&s, &cfg, out, &out_len);
	{
		uint8_t kp[12] = { 2, 0xce, 0, 12, 50, TW_SIMAKA_CHALLENGE, 0, 0,
				   TW_AT_KDF, 1, 0, 2 };
		CHECK(tw_aka_server_input(&s, kp, 12, out, sizeof(out), &out_len) ==
		      TW_EAP_SEND && is_notif_failure(out, out_len));
	}
	/* synchronisation failure: one resync, the second ends it */
	tc1_server(&s, &cfg, out, &out_len);
	{
		uint8_t sf[24] = { 2, 0xce, 0, 24, 50, TW_SIMAKA_SYNC_FAILURE, 0, 0,
				   TW_AT_AUTS, 4 };
		const struct tw_eap_vec_request *rq;
		struct tw_eap_aka_vec v;

		CHECK(tw_aka_server_input(&s, sf, 24, out, sizeof(out), &out_len) ==
		      TW_EAP_NEED_VECTOR);
		rq = tw_aka_server_vec_request(&s);
		CHECK(rq != NULL && rq->resync && rq->rand_[0] == 0x81);
		/* no vector (bad MAC-S at the HSS): EAP-Failure */
		CHECK(tw_aka_server_vector(&s, NULL, out, sizeof(out), &out_len) ==
		      TW_EAP_REJECT);
		(void)v;
	}
	tw_aka_server_wipe(&s);
}

/* ---- peer <-> server runs --------------------------------------------- */

struct run_result {
	int server_action, peer_action, rounds, vectors, resyncs;
	bool saw_reauth, saw_identity_req, saw_notif;
	struct tw_eap_keys sk, pk;
	int resync_rc;
};

static void run(struct tw_aka_server_ctx *s, const struct tw_eap_server_cfg *cfg,
		uint8_t method, struct tw_aka_peer_ctx *p, struct tw_subscriber *sub,
		struct run_result *r)
{
	uint8_t a[1024], b[1024];
	size_t a_len, b_len;
	int sa, pa;

	memset(r, 0, sizeof(*r));
	if (tw_aka_server_init(s, cfg, method, (uint8_t)tw_test_random_u32()) != TW_OK) {
		r->server_action = -1;
		return;
	}
	sa = tw_aka_server_start(s, a, sizeof(a), &a_len);
	for (r->rounds = 0; r->rounds < 20; r->rounds++) {
		while (sa == TW_EAP_NEED_VECTOR) {
			const struct tw_eap_vec_request *rq = tw_aka_server_vec_request(s);
			struct tw_eap_aka_vec v;
			int rc = TW_OK;
			if (rq->resync) {
				r->resyncs++;
				rc = tw_vecsrc_resync(sub, rq->rand_, rq->auts);
				r->resync_rc = rc;
			}
			uint8_t rnd[16];
			tw_test_random(rnd, sizeof(rnd)); /* a fresh RAND each time */
			if (rc == TW_OK)
				rc = method == TW_EAP_TYPE_AKA_PRIME
					     ? tw_vecsrc_aka_prime(sub, rnd, &v)
					     : tw_vecsrc_aka(sub, rnd, &v);
			r->vectors++;
			sa = tw_aka_server_vector(s, rc == TW_OK ? &v : NULL, a,
						  sizeof(a), &a_len);
		}
		if (sa != TW_EAP_SEND)
			break;
		{
			struct tw_simaka_msg m;
			if (tw_simaka_decode(&m, a, a_len) == TW_OK) {
				r->saw_reauth |= m.subtype == TW_SIMAKA_REAUTH;
				r->saw_identity_req |= m.subtype == TW_SIMAKA_IDENTITY;
				r->saw_notif |= m.subtype == TW_SIMAKA_NOTIFICATION;
			}
		}
		pa = tw_aka_peer_input(p, a, a_len, b, sizeof(b), &b_len);
		if (pa != TW_EAP_SEND) {
			r->peer_action = pa;
			r->server_action = -2;
			return;
		}
		sa = tw_aka_server_input(s, b, b_len, a, sizeof(a), &a_len);
	}
	r->server_action = sa;
	if (sa == TW_EAP_ACCEPT || sa == TW_EAP_REJECT)
		r->peer_action = tw_aka_peer_input(p, a, a_len, b, sizeof(b), &b_len);
	if (sa == TW_EAP_ACCEPT && tw_aka_server_keys(s, &r->sk) != TW_OK)
		r->server_action = -3;
	if (r->peer_action == TW_EAP_ACCEPT && tw_aka_peer_keys(p, &r->pk) != TW_OK)
		r->peer_action = -3;
}

static bool keys_agree(const struct run_result *r)
{
	return r->server_action == TW_EAP_ACCEPT && r->peer_action == TW_EAP_ACCEPT &&
	       memcmp(r->sk.msk, r->pk.msk, 64) == 0 &&
	       memcmp(r->sk.emsk, r->pk.emsk, 64) == 0 &&
	       r->sk.session_id_len == r->pk.session_id_len &&
	       memcmp(r->sk.session_id, r->pk.session_id, r->sk.session_id_len) == 0 &&
	       !tw_ct_is_zero(r->sk.msk, 64);
}

static void test_runs(void)
{
	enum { N = 2000 };
	int ok_full = 0, ok_reauth = 0, ok_pseudo = 0, ok_resync = 0,
	    ok_reject = 0, ok_rounds = 0, ok_bidding = 0, ok_limit = 0,
	    ok_notif = 0, ok_toosmall = 0, ok_perm = 0;
	static struct tw_aka_server_ctx s;
	static struct tw_aka_peer_ctx p;

	for (int i = 0; i < N; i++) {
		struct tw_eap_server_cfg cfg;
		struct tw_eap_peer_cfg pc;
		struct tw_eap_peer_ids ids;
		struct tw_subscriber sub;
		struct tw_sub_keys keys;
		struct tw_usim usim;
		struct tw_sqn_he he0;
		struct run_result r;
		uint8_t k[16], opc[16], amf[2] = { 0x80, 0x00 };
		char imsi[16];
		uint8_t method = (i & 1) ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;

		snprintf(imsi, sizeof(imsi), "00101%010u", tw_test_random_u32() % 1000000000u);
		tw_test_random(k, 16);
		tw_test_random(opc, 16);
		if (tw_sub_keys_milenage(&keys, k, opc, NULL) != TW_OK ||
		    tw_subscriber_init(&sub, imsi, &keys, amf) != TW_OK ||
		    tw_usim_init_from_subscriber(&usim, &sub) != TW_OK) {
			CHECK(0);
			return;
		}
		memset(&store, 0, sizeof(store));
		base_cfg(&cfg);
		cfg.result_ind = (i / 2) % 2;
		cfg.id_policy = (i % 7 == 0) ? TW_EAP_ID_ALWAYS_ANY : TW_EAP_ID_TRUST_EAP_IDENTITY;
		memset(&pc, 0, sizeof(pc));
		pc.imsi = imsi;
		pc.imsi_len = strlen(imsi);
		pc.realm = cfg.realm;
		pc.realm_len = cfg.realm_len;
		pc.support_aka_prime = method == TW_EAP_TYPE_AKA_PRIME;
		pc.result_ind = true;
		pc.use_pseudonym = pc.use_reauth = true;
		pc.network_name = cfg.network_name;
		pc.network_name_len = cfg.network_name_len;
		pc.random = m_random;
		memset(&ids, 0, sizeof(ids));
		he0 = sub.sqn;

		/* 1: full authentication with the permanent identity */
		if (tw_aka_peer_init(&p, &pc, &usim, &ids) != TW_OK) {
			CHECK(0);
			return;
		}
		run(&s, &cfg, method, &p, &sub, &r);
		ok_full += keys_agree(&r) && r.vectors == 1;
		ok_rounds += (cfg.id_policy == TW_EAP_ID_ALWAYS_ANY) == r.saw_identity_req;
		ok_notif += cfg.result_ind == r.saw_notif;
		ok_pseudo += ids.pseudonym_len > 0 && ids.reauth_id_len > 0 &&
			     ids.pseudonym[0] == (method == TW_EAP_TYPE_AKA ? '2' : '7') &&
			     ids.reauth_id[0] == (method == TW_EAP_TYPE_AKA ? '4' : '8');

		/* 2: fast re-authentication with the re-auth id */
		CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
		run(&s, &cfg, method, &p, &sub, &r);
		ok_reauth += keys_agree(&r) && r.saw_reauth && r.vectors == 0 &&
			     ids.reauth.counter == 2;

		/* 3: pseudonym (no re-auth): full authentication */
		pc.use_reauth = false;
		CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
		run(&s, &cfg, method, &p, &sub, &r);
		ok_pseudo += keys_agree(&r) && !r.saw_reauth && r.vectors == 1;
		pc.use_reauth = true;

		/* 4: the re-auth counter limit: 4 per full authentication */
		cfg.id_policy = TW_EAP_ID_TRUST_EAP_IDENTITY;
		{
			int reauths = 0, fulls = 0;
			for (int j = 0; j < 5; j++) {
				CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
				run(&s, &cfg, method, &p, &sub, &r);
				if (!keys_agree(&r))
					break;
				reauths += r.saw_reauth;
				fulls += r.vectors == 1;
			}
			/* counters 2, 3, 4, then full (counter 1), then 2 */
			ok_limit += reauths == 4 && fulls == 1;
		}

		if (i % 10 == 0) {
			/* 5: HE behind the USIM: AUTS, resync, new challenge */
			sub.sqn = he0;
			pc.use_reauth = pc.use_pseudonym = false;
			CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
			run(&s, &cfg, method, &p, &sub, &r);
			ok_resync += keys_agree(&r) && r.resyncs == 1 && r.vectors == 2;

			/* 6: re-auth counter not above the peer's: peer says
			 * AT_COUNTER_TOO_SMALL, the server runs a full auth */
			pc.use_reauth = true;
			CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
			run(&s, &cfg, method, &p, &sub, &r);
			if (ids.reauth_id_len) {
				ids.reauth.counter = 60000;
				CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
				run(&s, &cfg, method, &p, &sub, &r);
				ok_toosmall += keys_agree(&r) && r.saw_reauth &&
					       r.vectors == 1 && r.saw_identity_req;
			}

			/* 7: the permanent id only policy */
			cfg.id_policy = TW_EAP_ID_ALWAYS_PERMANENT;
			CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &ids));
			run(&s, &cfg, method, &p, &sub, &r);
			ok_perm += keys_agree(&r) && r.saw_identity_req;
			cfg.id_policy = TW_EAP_ID_TRUST_EAP_IDENTITY;

			/* 8: wrong K on the USIM: Authentication-Reject */
			{
				struct tw_usim bad = usim;
				bad.keys.aka.u.milenage.k[0] ^= 1;
				struct tw_eap_peer_ids none;
				memset(&none, 0, sizeof(none));
				CHECK_OK(tw_aka_peer_init(&p, &pc, &bad, &none));
				run(&s, &cfg, method, &p, &sub, &r);
				ok_reject += r.server_action == TW_EAP_REJECT &&
					     r.peer_action == TW_EAP_REJECT;
				tw_wipe(&bad, sizeof(bad));
			}

			/* 9: bidding down: EAP-AKA with the D bit to a peer that
			 * supports AKA' -> Client-Error -> failure; a peer without
			 * AKA' accepts */
			if (method == TW_EAP_TYPE_AKA) {
				struct tw_eap_peer_ids none;
				memset(&none, 0, sizeof(none));
				pc.support_aka_prime = true;
				CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &none));
				/* the peer answers Identity for AKA'; the AKA
				 * server takes the "6" permanent id as well */
				run(&s, &cfg, TW_EAP_TYPE_AKA, &p, &sub, &r);
				ok_bidding += r.server_action == TW_EAP_REJECT;
				pc.support_aka_prime = false;
				memset(&none, 0, sizeof(none));
				cfg.enable_aka_prime = true;
				CHECK_OK(tw_aka_peer_init(&p, &pc, &usim, &none));
				run(&s, &cfg, TW_EAP_TYPE_AKA, &p, &sub, &r);
				ok_bidding += keys_agree(&r);
			} else {
				ok_bidding += 2;
			}
		}
		tw_wipe(&sub, sizeof(sub));
		tw_wipe(&usim, sizeof(usim));
		tw_wipe(&ids, sizeof(ids));
	}
	tw_note("runs: full %d reauth %d pseudo %d/%d limit %d resync %d toosmall %d perm %d reject %d bidding %d rounds %d notif %d",
		ok_full, ok_reauth, ok_pseudo, 2 * N, ok_limit, ok_resync, ok_toosmall,
		ok_perm, ok_reject, ok_bidding, ok_rounds, ok_notif);
	CHECK(ok_full == N);
	CHECK(ok_reauth == N);
	CHECK(ok_pseudo == 2 * N);
	CHECK(ok_limit == N);
	CHECK(ok_resync == N / 10);
	CHECK(ok_toosmall == N / 10);
	CHECK(ok_perm == N / 10);
	CHECK(ok_reject == N / 10);
	CHECK(ok_bidding == 2 * (N / 10));
	CHECK(ok_rounds == N);
	CHECK(ok_notif == N);
}

/* AUTS with a bad MAC-S: the HE SQN is untouched (vecsrc side). */
static void test_bad_auts(void)
{
	struct tw_subscriber sub;
	struct tw_sub_keys keys;
	struct tw_eap_aka_vec v;
	uint8_t k[16], opc[16], amf[2] = { 0x80, 0 }, rand_[16], auts[14];
	struct tw_sqn_he before;

	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	tw_test_random(rand_, 16);
	tw_test_random(auts, 14);
	CHECK_OK(tw_sub_keys_milenage(&keys, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&sub, "001010000000001", &keys, amf));
	CHECK_OK(tw_vecsrc_aka(&sub, rand_, &v));
	before = sub.sqn;
	CHECK_ERR(tw_vecsrc_resync(&sub, rand_, auts), TW_ERR_AUTH);
	CHECK(memcmp(&before, &sub.sqn, sizeof(before)) == 0);
}

/* The identity rounds helper on its own (RFC 4187 §4.1.5/§4.1.6). */
static void test_id_rounds(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_eap_id_state st;
	const char *perm = "0001010123456789@realm";
	const char *ps = "2abcdef@realm";
	const char *ra = "4abcdef@realm";

	base_cfg(&cfg);
	memset(&store, 0, sizeof(store));
	memset(&st, 0, sizeof(st));
	st.method = TW_EAP_TYPE_AKA;
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)perm, strlen(perm)) ==
	      TW_EAP_ID_PERMANENT && strcmp(st.imsi, "001010123456789") == 0);
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)ps, strlen(ps)) ==
	      TW_EAP_ID_ASK_PERMANENT);
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)ra, strlen(ra)) ==
	      TW_EAP_ID_ASK_FULLAUTH);
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)"anonymous@realm", 15) ==
	      TW_EAP_ID_ASK_ANY);
	st.asked = TW_AT_FULLAUTH_ID_REQ;
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)ra, strlen(ra)) ==
	      TW_EAP_ID_FAIL);
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)"anonymous@realm", 15) ==
	      TW_EAP_ID_FAIL);
	st.asked = TW_AT_PERMANENT_ID_REQ;
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)ps, strlen(ps)) ==
	      TW_EAP_ID_FAIL);
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)perm, strlen(perm)) ==
	      TW_EAP_ID_PERMANENT);
	CHECK_OK(m_ps_store(&store, (const uint8_t *)"2abcdef", 7, "001010123456789", 15));
	st.asked = TW_AT_ANY_ID_REQ;
	CHECK(tw_eap_id_process(&st, &cfg, (const uint8_t *)ps, strlen(ps)) ==
	      TW_EAP_ID_PSEUDONYM);
}

/* ---- tw_aka_server_vector_many ----------------------------------------- */

enum { VM = 40 };

struct vm_sess {
	struct tw_aka_server_ctx a, b; /* the batch's, the single call's */
	struct tw_aka_peer_ctx p;
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids ids;
	struct tw_subscriber sub;
	struct tw_usim usim;
	struct tw_eap_aka_vec v;
	uint8_t out_a[1024], out_b[1024];
	char imsi[16];
};

/* Session i up to TW_EAP_NEED_VECTOR and its vector; b is a copy of a. */
static bool vm_prepare(struct vm_sess *x, const struct tw_eap_server_cfg *cfg, uint8_t method)
{
	uint8_t k[16], opc[16], amf[2] = { 0x80, 0x00 }, rnd[16], a[1024], b[1024];
	struct tw_sub_keys keys;
	size_t a_len, b_len;

	memset(x, 0, sizeof(*x));
	snprintf(x->imsi, sizeof(x->imsi), "00101%010u", tw_test_random_u32() % 1000000000u);
	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	tw_test_random(rnd, 16);
	x->pc.imsi = x->imsi;
	x->pc.imsi_len = 15;
	x->pc.realm = cfg->realm;
	x->pc.realm_len = cfg->realm_len;
	x->pc.support_aka_prime = method == TW_EAP_TYPE_AKA_PRIME;
	x->pc.use_pseudonym = x->pc.use_reauth = true;
	x->pc.network_name = cfg->network_name;
	x->pc.network_name_len = cfg->network_name_len;
	x->pc.random = m_random;
	if (tw_sub_keys_milenage(&keys, k, opc, NULL) != TW_OK ||
	    tw_subscriber_init(&x->sub, x->imsi, &keys, amf) != TW_OK ||
	    tw_usim_init_from_subscriber(&x->usim, &x->sub) != TW_OK ||
	    tw_aka_peer_init(&x->p, &x->pc, &x->usim, &x->ids) != TW_OK ||
	    tw_aka_server_init(&x->a, cfg, method, (uint8_t)tw_test_random_u32()) != TW_OK ||
	    tw_aka_server_start(&x->a, a, sizeof(a), &a_len) != TW_EAP_SEND ||
	    tw_aka_peer_input(&x->p, a, a_len, b, sizeof(b), &b_len) != TW_EAP_SEND ||
	    tw_aka_server_input(&x->a, b, b_len, a, sizeof(a), &a_len) != TW_EAP_NEED_VECTOR)
		return false;
	if ((method == TW_EAP_TYPE_AKA_PRIME ? tw_vecsrc_aka_prime(&x->sub, rnd, &x->v)
					     : tw_vecsrc_aka(&x->sub, rnd, &x->v)) != TW_OK)
		return false;
	x->b = x->a;
	return true;
}

/* The peer answers session x's challenge (in out, len) and the server s
 * must accept with the keys the peer derives; the response is kept in
 * resp (a USIM takes each AUTN once: a copy of s is given the same
 * response). */
static bool vm_finish(struct vm_sess *x, struct tw_aka_server_ctx *s, const uint8_t *out,
		      size_t len, struct tw_eap_keys *sk, uint8_t resp[1024], size_t *resp_len)
{
	uint8_t a[1024], b[1024];
	size_t a_len, b_len;
	struct tw_eap_keys pk;

	return tw_aka_peer_input(&x->p, out, len, resp, 1024, resp_len) == TW_EAP_SEND &&
	       tw_aka_server_input(s, resp, *resp_len, a, sizeof(a), &a_len) == TW_EAP_ACCEPT &&
	       tw_aka_peer_input(&x->p, a, a_len, b, sizeof(b), &b_len) == TW_EAP_ACCEPT &&
	       tw_aka_server_keys(s, sk) == TW_OK && tw_aka_peer_keys(&x->p, &pk) == TW_OK &&
	       memcmp(sk->msk, pk.msk, 64) == 0 && memcmp(sk->emsk, pk.emsk, 64) == 0 &&
	       !tw_ct_is_zero(sk->msk, 64);
}

/*
 * A batch of VM sessions and one extra job against the single call on a
 * copy of each session: mostly EAP-AKA' (a full group of sixteen lanes,
 * then smaller ones), EAP-AKA ones among them, a second network name
 * (sessions 30 and 31: the group before is cut), a missing vector, a
 * vector with a RES too short, and two sessions named twice while their
 * group is still open (one of them with no vector). Without identity privacy
 * nothing random goes into the challenges, so both sides must be byte for
 * byte the same; with it, every peer must accept and agree on the keys.
 */
static void vector_many_pass(bool privacy, uint32_t level, const char *level_name)
{
	static struct vm_sess x[VM];
	struct tw_aka_server_vec_job jobs[VM + 2];
	struct tw_eap_server_cfg cfg1, cfg2;
	int bad = 0;

	tw_cpu_restrict(level);
	memset(&store, 0, sizeof(store));
	base_cfg(&cfg1);
	cfg1.pseudonyms = cfg1.fast_reauth = privacy;
	cfg2 = cfg1;
	cfg2.network_name = (const uint8_t *)"OTHER-NET";
	cfg2.network_name_len = 9;
	for (int i = 0; i < VM; i++) {
		uint8_t method = i % 9 == 4 ? TW_EAP_TYPE_AKA : TW_EAP_TYPE_AKA_PRIME;

		if (!vm_prepare(&x[i], i == 30 || i == 31 ? &cfg2 : &cfg1, method)) {
			CHECK(0);
			return;
		}
		if (i == 19)
			x[i].v.xres_len = 2;
		jobs[i] = (struct tw_aka_server_vec_job){
			.s = &x[i].a, .v = i == 11 ? NULL : &x[i].v,
			.out = x[i].out_a, .max = sizeof(x[i].out_a),
		};
	}
	/* the same session again while its group is still open: once with
	 * no vector (a job the lanes cannot take), once as a lane job */
	jobs[VM] = jobs[VM - 2];
	jobs[VM].v = NULL;
	jobs[VM].out = x[VM - 2].out_b;
	jobs[VM + 1] = jobs[VM - 3];
	jobs[VM + 1].out = x[VM - 1].out_b;
	tw_aka_server_vector_many(jobs, VM + 2);
	bad += jobs[VM].rc != TW_ERR_STATE;
	bad += jobs[VM + 1].rc != TW_ERR_STATE;
	/* with the lanes (AVX-512), the first sixteen EAP-AKA' sessions went
	 * through them, and the singles did not */
	if (tw_sha256_x16_worth(16))
		bad += !jobs[0].batched || !jobs[1].batched || jobs[4].batched ||
		       jobs[11].batched || jobs[19].batched;
	for (int i = 0; i < VM; i++) {
		struct tw_eap_keys ka, kb;
		uint8_t resp[1024];
		size_t len_b = 0, resp_len = 0;
		int rc_b = tw_aka_server_vector(&x[i].b, i == 11 ? NULL : &x[i].v, x[i].out_b,
						sizeof(x[i].out_b), &len_b);
		bool same = jobs[i].rc == rc_b && jobs[i].out_len == len_b;

		if (i == 11 || i == 19) {
			bad += !same || rc_b != TW_EAP_REJECT;
			continue;
		}
		if (!privacy)
			same &= memcmp(x[i].out_a, x[i].out_b, len_b) == 0;
		same &= rc_b == TW_EAP_SEND;
		same &= vm_finish(&x[i], &x[i].a, x[i].out_a, jobs[i].out_len, &ka, resp,
				  &resp_len);
		if (!privacy)
			same &= tw_aka_server_input(&x[i].b, resp, resp_len, x[i].out_b,
						    sizeof(x[i].out_b), &len_b) == TW_EAP_ACCEPT &&
				tw_aka_server_keys(&x[i].b, &kb) == TW_OK &&
				memcmp(&ka, &kb, sizeof(ka)) == 0;
		bad += !same;
	}
	tw_cpu_restrict(UINT32_MAX);
	if (!CHECK(bad == 0))
		tw_note("vector_many (%s, %s): %d sessions differ", privacy ? "privacy" : "plain",
			level_name, bad);
}

static void test_vector_many(void)
{
	vector_many_pass(false, UINT32_MAX, "all");
	vector_many_pass(true, UINT32_MAX, "all");
	vector_many_pass(false, UINT32_MAX & ~(uint32_t)TW_CPU_AVX512, "no AVX-512");
	vector_many_pass(true, 0, "portable");
}

void test_main(void)
{
	int n;

	tv_run_file("eap_aka_prime.vec", grab_tc1);
	cur_method = TW_EAP_TYPE_AKA_PRIME;
	n = tv_run_file("eap_aka_prime.vec", engine_keys_case);
	tw_note("eap_aka_prime.vec: %d cases", n);
	CHECK(n >= 4);
	cur_method = TW_EAP_TYPE_AKA;
	n = tv_run_file("eap_aka.vec", engine_keys_case);
	CHECK(n >= 1);
	test_aosp_packets();
	test_id_rounds();
	test_bad_auts();
	test_runs();
	test_vector_many();
}
