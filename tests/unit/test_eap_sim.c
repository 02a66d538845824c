/*
 * Tests of the EAP-SIM server and peer engines (RFC 4186):
 *  - RFC 4186 Appendix A.2-A.6 reproduced by the server byte for byte (the
 *    engine's choices pinned: NONCE_MT from A.4, IV through the random
 *    callback, pseudonym/re-auth id as printed), A.6 accepted with the A.5
 *    keys; the peer's SIM/Start response equals A.4 with A.4's NONCE_MT;
 *  - peer <-> server in-process for random subscribers (COMP128 v1/v2/v3
 *    SIMs and Milenage USIMs via c2/c3; 2 and 3 triplets; permanent,
 *    pseudonym and re-auth identities; result indications; identity
 *    rounds), both sides agreeing on MSK/EMSK/Session-Id, with the
 *    SIM/Challenge AT_MAC and the Session-Id recomputed with OpenSSL;
 *  - negative cases: bad / missing AT_MAC, duplicate and too few RANDs,
 *    unsupported version, unknown non-skippable attribute, counter not
 *    increasing, wrong EAP Identifier, Client-Error, bad notification.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"
#include "twag/nai.h"

/* ---- an in-memory subscriber store (identity ops) --------------------- */

enum { NSLOT = 16 };

struct store {
	struct {
		uint8_t id[TW_EAP_ID_MAX];
		size_t len;
		char imsi[16];
		size_t imsi_len;
	} ps[NSLOT];
	struct {
		uint8_t id[TW_EAP_ID_MAX];
		size_t len;
		struct tw_eap_reauth_state st;
	} ra[NSLOT];
	/* scripted random output, used before tw_test_random */
	const uint8_t *script;
	size_t script_len;
};

static int st_random(void *arg, uint8_t *out, size_t len)
{
	struct store *s = arg;

	if (s->script_len >= len) {
		memcpy(out, s->script, len);
		s->script += len;
		s->script_len -= len;
		return TW_OK;
	}
	tw_test_random(out, len);
	return TW_OK;
}

static int ps_lookup(void *arg, const uint8_t *p, size_t len, char imsi[16],
		     size_t *imsi_len)
{
	struct store *s = arg;

	for (int i = 0; i < NSLOT; i++)
		if (s->ps[i].len == len && memcmp(s->ps[i].id, p, len) == 0) {
			memcpy(imsi, s->ps[i].imsi, 16);
			*imsi_len = s->ps[i].imsi_len;
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int ps_store(void *arg, const uint8_t *p, size_t len, const char *imsi,
		    size_t imsi_len)
{
	struct store *s = arg;

	for (int i = 0; i < NSLOT; i++)
		if (s->ps[i].len == 0) {
			memcpy(s->ps[i].id, p, len);
			s->ps[i].len = len;
			memset(s->ps[i].imsi, 0, 16);
			memcpy(s->ps[i].imsi, imsi, imsi_len);
			s->ps[i].imsi_len = imsi_len;
			return TW_OK;
		}
	return TW_ERR_NOMEM;
}

static int ra_lookup(void *arg, const uint8_t *id, size_t len,
		     struct tw_eap_reauth_state *st)
{
	struct store *s = arg;

	for (int i = 0; i < NSLOT; i++)
		if (s->ra[i].len == len && memcmp(s->ra[i].id, id, len) == 0) {
			*st = s->ra[i].st;
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int ra_store(void *arg, const uint8_t *id, size_t len,
		    const struct tw_eap_reauth_state *st)
{
	struct store *s = arg;

	for (int i = 0; i < NSLOT; i++)
		if (s->ra[i].len == 0) {
			memcpy(s->ra[i].id, id, len);
			s->ra[i].len = len;
			s->ra[i].st = *st;
			return TW_OK;
		}
	return TW_ERR_NOMEM;
}

static int ra_remove(void *arg, const uint8_t *id, size_t len)
{
	struct store *s = arg;

	for (int i = 0; i < NSLOT; i++)
		if (s->ra[i].len == len && memcmp(s->ra[i].id, id, len) == 0) {
			memset(&s->ra[i], 0, sizeof(s->ra[i]));
			return TW_OK;
		}
	return TW_ERR_NOTFOUND;
}

static int count_reauth(const struct store *s)
{
	int n = 0;

	for (int i = 0; i < NSLOT; i++)
		n += s->ra[i].len != 0;
	return n;
}

static struct store g_store;
static struct tw_eap_identity_ops g_ops = {
	.arg = &g_store,
	.pseudonym_lookup = ps_lookup,
	.pseudonym_store = ps_store,
	.reauth_lookup = ra_lookup,
	.reauth_store = ra_store,
	.reauth_remove = ra_remove,
	.random = st_random,
};

static void server_cfg(struct tw_eap_server_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->enable_sim = true;
	c->pseudonyms = true;
	c->fast_reauth = true;
	c->realm = "wlan.mnc001.mcc001.3gppnetwork.org";
	c->realm_len = strlen(c->realm);
	c->ops = &g_ops;
}

/* ---- RFC 4186 Appendix A ------------------------------------------------ */

static struct {
	uint8_t a3[64], a4[64], a5[400], a6[64];
	size_t a3_len, a4_len, a5_len, a6_len;
	uint8_t iv[16], nonce_mt[16];
	char pseudonym[128], reauth_id[128];
	uint8_t rand_[3][16], sres[3][4], kc[3][8];
	uint8_t msk[64], emsk[64], k_aut[16];
	char identity[64];
	int found;
} A;

static void load_packets(const struct tv_case *c)
{
	const char *id = tv_str(c, "id");

	if (id == NULL)
		return;
	if (strncmp(id, "A.3", 3) == 0) {
		A.a3_len = tv_hex(c, "packet", A.a3, sizeof(A.a3));
	} else if (strncmp(id, "A.4", 3) == 0) {
		A.a4_len = tv_hex(c, "packet", A.a4, sizeof(A.a4));
		tv_hex(c, "nonce_mt", A.nonce_mt, 16);
	} else if (strncmp(id, "A.5", 3) == 0) {
		A.a5_len = tv_hex(c, "packet", A.a5, sizeof(A.a5));
		tv_hex(c, "iv", A.iv, 16);
		snprintf(A.pseudonym, sizeof(A.pseudonym), "%s",
			 tv_str(c, "next_pseudonym"));
		snprintf(A.reauth_id, sizeof(A.reauth_id), "%s",
			 tv_str(c, "next_reauth_id"));
	} else if (strncmp(id, "A.6", 3) == 0) {
		A.a6_len = tv_hex(c, "packet", A.a6, sizeof(A.a6));
	} else {
		return;
	}
	A.found++;
}

static void load_keys(const struct tv_case *c)
{
	static const char *rk[3] = { "rand1", "rand2", "rand3" };
	static const char *sk[3] = { "sres1", "sres2", "sres3" };
	static const char *kk[3] = { "kc1", "kc2", "kc3" };

	if (!tv_has(c, "rand1"))
		return;
	for (int i = 0; i < 3; i++) {
		tv_hex(c, rk[i], A.rand_[i], 16);
		tv_hex(c, sk[i], A.sres[i], 4);
		tv_hex(c, kk[i], A.kc[i], 8);
	}
	tv_hex(c, "msk", A.msk, 64);
	tv_hex(c, "emsk", A.emsk, 64);
	tv_hex(c, "k_aut", A.k_aut, 16);
	snprintf(A.identity, sizeof(A.identity), "%s", tv_str(c, "identity"));
	A.found++;
}

static void test_rfc4186_appendix_a(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_eap_sim_server s;
	struct tw_eap_sim_triplet t[3];
	uint8_t in[300], out[1024];
	uint8_t script[32];
	size_t in_len, out_len;

	memset(&A, 0, sizeof(A));
	memset(&g_store, 0, sizeof(g_store));
	CHECK(tv_run_file("eap_sim_packets.vec", load_packets) >= 4);
	CHECK(tv_run_file("eap_sim.vec", load_keys) >= 1);
	CHECK(A.found >= 5);
	if (A.found < 5)
		return;
	server_cfg(&cfg);

	/* A.2 EAP-Response/Identity (Identifier 0): the permanent identity of
	 * A.5's key derivation. Policy: trust it, as the appendix does. */
	CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
	CHECK_OK(tw_eap_encode(in, sizeof(in), &in_len, TW_EAP_RESPONSE, 0,
			       TW_EAP_TYPE_IDENTITY, (const uint8_t *)A.identity,
			       strlen(A.identity)));
	CHECK(tw_eap_sim_server_input(&s, in, in_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND);
	CHECK(out_len == A.a3_len && memcmp(out, A.a3, A.a3_len) == 0);

	/* A.4 -> vector request for 3 triplets of IMSI 244070100000001 */
	CHECK(tw_eap_sim_server_input(&s, A.a4, A.a4_len, out, sizeof(out),
				      &out_len) == TW_EAP_NEED_VECTOR);
	const struct tw_eap_vec_request *vr = tw_eap_sim_server_vec_request(&s);
	CHECK(vr != NULL && vr->method == TW_EAP_TYPE_SIM && vr->count == 3 &&
	      strcmp(vr->imsi, "244070100000001") == 0);
	/* input while a vector is awaited is a caller error */
	CHECK_ERR(tw_eap_sim_server_input(&s, A.a4, A.a4_len, out, sizeof(out),
					  &out_len), TW_ERR_STATE);

	/* A.5: pseudonym and re-auth id as printed, IV via the random hook */
	CHECK_OK(tw_eap_sim_server_set_next_ids(
		&s, (const uint8_t *)A.pseudonym, strlen(A.pseudonym),
		(const uint8_t *)A.reauth_id, strlen(A.reauth_id)));
	for (int i = 0; i < 3; i++) {
		memcpy(t[i].rand_, A.rand_[i], 16);
		memcpy(t[i].sres, A.sres[i], 4);
		memcpy(t[i].kc, A.kc[i], 8);
	}
	memcpy(script, A.iv, 16);
	g_store.script = script;
	g_store.script_len = 16;
	CHECK_ERR(tw_eap_sim_server_vector(&s, t, 2, out, sizeof(out), &out_len),
		  TW_ERR_INVAL);
	CHECK(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND);
	CHECK(out_len == A.a5_len && memcmp(out, A.a5, A.a5_len) == 0);
	CHECK_MEM(s.keys.k_aut, A.k_aut, 16);

	/* A.6 with one flipped MAC bit first: a copy of the session rejects it */
	struct tw_eap_sim_server s2 = s;
	uint8_t bad[64];
	memcpy(bad, A.a6, A.a6_len);
	bad[A.a6_len - 1] ^= 0x01;
	CHECK(tw_eap_sim_server_input(&s2, bad, A.a6_len, out, sizeof(out),
				      &out_len) == TW_EAP_SEND);
	struct tw_simaka_msg m;
	CHECK_OK(tw_simaka_decode(&m, out, out_len));
	CHECK(m.subtype == TW_SIMAKA_NOTIFICATION &&
	      m.notification_code == TW_SIMAKA_NOTIF_GENERAL_FAILURE &&
	      !tw_simaka_has(&m.mac));
	CHECK(tw_eap_sim_server_keys(&s2) == NULL);
	tw_eap_sim_server_wipe(&s2);

	/* A.6 verifies: EAP-Success, keys of A.5 */
	CHECK(tw_eap_sim_server_input(&s, A.a6, A.a6_len, out, sizeof(out),
				      &out_len) == TW_EAP_ACCEPT);
	CHECK(out_len == 4 && out[0] == TW_EAP_SUCCESS && out[1] == 2);
	const struct tw_eap_keys *k = tw_eap_sim_server_keys(&s);
	CHECK(k != NULL);
	if (k != NULL) {
		CHECK_MEM(k->msk, A.msk, 64);
		CHECK_MEM(k->emsk, A.emsk, 64);
		/* RFC 5247 Appendix A / RFC 8940 §2.1: 0x12 | RAND | NONCE_MT */
		CHECK(k->session_id_len == 65 && k->session_id[0] == 0x12);
		CHECK_MEM(k->session_id + 1, A.rand_, 48);
		CHECK_MEM(k->session_id + 49, A.nonce_mt, 16);
	}
	/* the store got the A.5 identities */
	char imsi[16] = { 0 };
	size_t imsi_len = 0;
	CHECK_OK(ps_lookup(&g_store, (const uint8_t *)A.pseudonym,
			   strlen(A.pseudonym), imsi, &imsi_len));
	CHECK(imsi_len == 15 && memcmp(imsi, "244070100000001", 15) == 0);
	struct tw_eap_reauth_state st;
	memset(&st, 0, sizeof(st));
	CHECK_OK(ra_lookup(&g_store, (const uint8_t *)A.reauth_id,
			   strlen(A.reauth_id), &st));
	CHECK(st.counter == 1 && st.method == TW_EAP_TYPE_SIM);
	CHECK_MEM(st.k_aut, A.k_aut, 16);
	tw_eap_sim_server_wipe(&s);

	/* Peer: A.3 answered with A.4 exactly when NONCE_MT is A.4's. */
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids mem;
	struct tw_eap_sim_peer p;
	struct tw_usim u;
	memset(&pc, 0, sizeof(pc));
	memset(&mem, 0, sizeof(mem));
	memset(&u, 0, sizeof(u));
	pc.imsi = "244070100000001";
	pc.imsi_len = 15;
	pc.realm = "eapsim.foo";
	pc.realm_len = strlen(pc.realm);
	CHECK_OK(tw_eap_sim_peer_init(&p, &pc, &mem, &u, st_random, &g_store));
	CHECK_OK(tw_eap_request_identity(in, sizeof(in), 0, &in_len));
	CHECK(tw_eap_sim_peer_input(&p, in, in_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND);
	CHECK(out_len == 5 + strlen(A.identity) &&
	      memcmp(out + 5, A.identity, strlen(A.identity)) == 0);
	memcpy(script, A.nonce_mt, 16);
	g_store.script = script;
	g_store.script_len = 16;
	CHECK(tw_eap_sim_peer_input(&p, A.a3, A.a3_len, out, sizeof(out), &out_len) ==
	      TW_EAP_SEND);
	CHECK(out_len == A.a4_len && memcmp(out, A.a4, A.a4_len) == 0);
	tw_eap_sim_peer_wipe(&p);
	g_store.script_len = 0;
}

/* ---- in-process runs ---------------------------------------------------- */

struct phone {
	struct tw_subscriber sub;  /* the HSS record */
	struct tw_usim usim;       /* the card */
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids mem;
	char imsi[16];
};

static void make_phone(struct phone *ph, unsigned kind)
{
	struct tw_sub_keys kk;
	uint8_t k[16], opc[16], amf[2] = { 0x80, 0x00 };

	memset(ph, 0, sizeof(*ph));
	for (int i = 0; i < 15; i++)
		ph->imsi[i] = (char)('0' + tw_test_random_u32() % 10);
	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	if (kind < 3)
		CHECK_OK(tw_sub_keys_comp128(&kk, kind + 1, k));
	else
		CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&ph->sub, ph->imsi, &kk, amf));
	CHECK_OK(tw_usim_init_from_subscriber(&ph->usim, &ph->sub));
	ph->pc.imsi = ph->imsi;
	ph->pc.imsi_len = 15;
	ph->pc.realm = "wlan.mnc001.mcc001.3gppnetwork.org";
	ph->pc.realm_len = strlen(ph->pc.realm);
	ph->pc.use_pseudonym = true;
	ph->pc.use_reauth = true;
	tw_wipe(&kk, sizeof(kk));
}

/* Independent check with OpenSSL: AT_MAC of a SIM/Challenge =
 * HMAC-SHA1-128(K_aut, packet with MAC zero | NONCE_MT) (RFC 4186 §10.14). */
static bool openssl_mac_ok(const uint8_t *pkt, size_t len, const uint8_t k_aut[16],
			   const uint8_t nonce_mt[16])
{
	struct tw_simaka_msg m;
	uint8_t buf[1100], md[20];
	unsigned md_len = 0;

	if (tw_simaka_decode(&m, pkt, len) != TW_OK || !tw_simaka_has(&m.mac) ||
	    len + 16 > sizeof(buf))
		return false;
	memcpy(buf, pkt, len);
	memset(buf + (m.mac.val - pkt), 0, 16);
	memcpy(buf + len, nonce_mt, 16);
	if (HMAC(EVP_sha1(), k_aut, 16, buf, len + 16, md, &md_len) == NULL)
		return false;
	return memcmp(md, m.mac.val, 16) == 0;
}

struct run_result {
	int server_act, peer_act;
	unsigned rounds, starts;
	bool reauth, mac_checked, notif_ok;
};

/* Runs one EAP exchange to the end; the server starts with
 * EAP-Request/Identity. Vectors come from the local source. */
static struct run_result run(struct tw_eap_sim_server *s, struct tw_eap_sim_peer *p,
			     struct phone *ph)
{
	uint8_t a[1024], b[1024];
	size_t a_len = 0, b_len = 0;
	struct run_result r = { 0 };
	int act;

	act = tw_eap_sim_server_start(s, (uint8_t)tw_test_random_u32(), a,
				      sizeof(a), &a_len);
	for (r.rounds = 0; r.rounds < 12; r.rounds++) {
		if (act != TW_EAP_SEND && act != TW_EAP_ACCEPT &&
		    act != TW_EAP_REJECT) {
			r.server_act = act;
			return r;
		}
		if (a_len > 8 && a[0] == TW_EAP_REQUEST && a[4] == TW_EAP_TYPE_SIM) {
			if (a[5] == TW_SIMAKA_SIM_START)
				r.starts++;
			if (a[5] == TW_SIMAKA_REAUTH)
				r.reauth = true;
			if (a[5] == TW_SIMAKA_NOTIFICATION) {
				struct tw_simaka_msg nm;
				/* the "Success" result indication is MAC'd */
				CHECK(tw_simaka_decode(&nm, a, a_len) == TW_OK &&
				      nm.notification_code == TW_SIMAKA_NOTIF_SUCCESS &&
				      tw_simaka_has(&nm.mac));
				r.notif_ok = true;
			}
			if (a[5] == TW_SIMAKA_SIM_CHALLENGE) {
				CHECK(openssl_mac_ok(a, a_len, s->keys.k_aut,
						     s->nonce_mt));
				r.mac_checked = true;
			}
		}
		int pact = tw_eap_sim_peer_input(p, a, a_len, b, sizeof(b), &b_len);
		if (act == TW_EAP_ACCEPT || act == TW_EAP_REJECT) {
			r.server_act = act;
			r.peer_act = pact;
			return r;
		}
		if (pact != TW_EAP_SEND) {
			r.server_act = act;
			r.peer_act = pact;
			return r;
		}
		act = tw_eap_sim_server_input(s, b, b_len, a, sizeof(a), &a_len);
		if (act == TW_EAP_NEED_VECTOR) {
			const struct tw_eap_vec_request *vr =
				tw_eap_sim_server_vec_request(s);
			struct tw_eap_sim_triplet t[3];

			CHECK(vr != NULL && vr->imsi_len == 15 &&
			      memcmp(vr->imsi, ph->imsi, 15) == 0);
			for (unsigned i = 0; i < vr->count; i++) {
				uint8_t rnd[16];
				tw_test_random(rnd, 16);
				CHECK_OK(tw_vecsrc_sim(&ph->sub, rnd, &t[i]));
			}
			act = tw_eap_sim_server_vector(s, t, vr->count, a,
						       sizeof(a), &a_len);
		}
	}
	r.server_act = -100;
	return r;
}

static bool keys_agree(const struct tw_eap_sim_server *s,
		       const struct tw_eap_sim_peer *p)
{
	const struct tw_eap_keys *ks = tw_eap_sim_server_keys(s);
	const struct tw_eap_keys *kp = tw_eap_sim_peer_keys(p);

	return ks != NULL && kp != NULL &&
	       memcmp(ks->msk, kp->msk, 64) == 0 &&
	       memcmp(ks->emsk, kp->emsk, 64) == 0 &&
	       ks->session_id_len == kp->session_id_len &&
	       memcmp(ks->session_id, kp->session_id, ks->session_id_len) == 0 &&
	       ks->session_id[0] == TW_EAP_TYPE_SIM;
}

static void test_random_subscribers(void)
{
	unsigned n_full = 0, n_reauth = 0, n_pseudo = 0, n_ok = 0, n_runs = 0;
	unsigned n_notif = 0, n_notif_reauth = 0;
	const unsigned N = 2000;

	for (unsigned i = 0; i < N; i++) {
		struct phone ph;
		struct tw_eap_server_cfg cfg;
		struct tw_eap_sim_server_opts opts = { 0 };
		struct tw_eap_sim_server s;
		struct tw_eap_sim_peer p;
		struct run_result r;
		bool ok = true;

		memset(&g_store, 0, sizeof(g_store));
		make_phone(&ph, i % 4);
		server_cfg(&cfg);
		cfg.result_ind = (i & 4) != 0;
		ph.pc.result_ind = (i & 8) != 0;
		cfg.reauth_limit = 3;
		opts.n_triplets = 2 + (i & 1);
		if (i % 16 == 5)
			cfg.id_policy = TW_EAP_ID_ALWAYS_ANY;
		if (i % 16 == 9)
			opts.fullauth_id_req_first = true;

		/* 1: full authentication with the permanent identity */
		CHECK_OK(tw_eap_sim_server_init(&s, &cfg, &opts));
		CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim,
					      st_random, &g_store));
		r = run(&s, &p, &ph);
		ok &= r.server_act == TW_EAP_ACCEPT && r.peer_act == TW_EAP_ACCEPT &&
		      !r.reauth && r.mac_checked && keys_agree(&s, &p);
		ok &= ph.mem.pseudonym_len > 0 && ph.mem.reauth_id_len > 0;
		/* independent Session-Id: 0x12 | RAND1..n | NONCE_MT */
		if (tw_eap_sim_server_keys(&s) != NULL) {
			const struct tw_eap_keys *k = tw_eap_sim_server_keys(&s);
			ok &= k->session_id_len == 1 + 16 * opts.n_triplets + 16 &&
			      memcmp(k->session_id + 1, s.rand_, 16 * opts.n_triplets) == 0 &&
			      memcmp(k->session_id + 1 + 16 * opts.n_triplets,
				     s.nonce_mt, 16) == 0;
		}
		ok &= r.notif_ok == (cfg.result_ind && ph.pc.result_ind);
		n_notif += r.notif_ok;
		if (!ok) tw_note("step1 %d %d %d %d", r.server_act, r.peer_act, r.reauth, r.mac_checked);
		n_full++;
		n_runs++;
		tw_eap_sim_server_wipe(&s);
		tw_eap_sim_peer_wipe(&p);

		/* 2, 3: fast re-authentications (counter 2, then 3), unless
		 * the server asks for the full-auth id first */
		for (int j = 0; j < 2; j++) {
			CHECK_OK(tw_eap_sim_server_init(&s, &cfg, &opts));
			CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim,
						      st_random, &g_store));
			r = run(&s, &p, &ph);
			ok &= r.server_act == TW_EAP_ACCEPT &&
			      r.peer_act == TW_EAP_ACCEPT && keys_agree(&s, &p);
			ok &= r.notif_ok == (cfg.result_ind && ph.pc.result_ind);
			n_notif_reauth += r.notif_ok && r.reauth;
			if (!opts.fullauth_id_req_first) {
				ok &= r.reauth && ph.mem.reauth.counter == 2 + j;
				if (tw_eap_sim_server_keys(&s) != NULL)
					ok &= tw_eap_sim_server_keys(&s)->session_id_len == 33;
				n_reauth++;
			} else {
				ok &= !r.reauth && r.starts == 1;
				n_pseudo++;
			}
			/* one live re-auth id (a full-auth-first server cannot
			 * retire the unused old one) */
			ok &= opts.fullauth_id_req_first || count_reauth(&g_store) == 1;
			if (!ok) tw_note("step2.%d %d %d %d starts %u cnt %u nra %d", j, r.server_act, r.peer_act, r.reauth, r.starts, ph.mem.reauth.counter, count_reauth(&g_store));
			n_runs++;
			tw_eap_sim_server_wipe(&s);
			tw_eap_sim_peer_wipe(&p);
		}

		/* 4: the re-auth limit (3) is reached: the server asks for the
		 * full-auth id and the peer answers with its pseudonym */
		if (!opts.fullauth_id_req_first) {
			CHECK_OK(tw_eap_sim_server_init(&s, &cfg, &opts));
			CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim,
						      st_random, &g_store));
			r = run(&s, &p, &ph);
			ok &= r.server_act == TW_EAP_ACCEPT &&
			      r.peer_act == TW_EAP_ACCEPT && !r.reauth &&
			      keys_agree(&s, &p) && ph.mem.reauth.counter == 1;
			if (!ok) tw_note("step4 %d %d %d starts %u cnt %u", r.server_act, r.peer_act, r.reauth, r.starts, ph.mem.reauth.counter);
			n_pseudo++;
			n_runs++;
			tw_eap_sim_server_wipe(&s);
			tw_eap_sim_peer_wipe(&p);
		}

		/* 5: a phone that does not use re-auth: pseudonym full auth */
		ph.pc.use_reauth = false;
		CHECK_OK(tw_eap_sim_server_init(&s, &cfg, &opts));
		CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim,
					      st_random, &g_store));
		r = run(&s, &p, &ph);
		ok &= r.server_act == TW_EAP_ACCEPT && r.peer_act == TW_EAP_ACCEPT &&
		      !r.reauth && keys_agree(&s, &p);
		if (!ok) tw_note("step5 %d %d %d starts %u", r.server_act, r.peer_act, r.reauth, r.starts);
		n_pseudo++;
		n_runs++;
		tw_eap_sim_server_wipe(&s);
		tw_eap_sim_peer_wipe(&p);

		/* 6: the server forgot the pseudonym: AT_PERMANENT_ID_REQ */
		memset(g_store.ps, 0, sizeof(g_store.ps));
		CHECK_OK(tw_eap_sim_server_init(&s, &cfg, &opts));
		CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim,
					      st_random, &g_store));
		r = run(&s, &p, &ph);
		ok &= r.server_act == TW_EAP_ACCEPT && r.peer_act == TW_EAP_ACCEPT &&
		      keys_agree(&s, &p) && s.identity[0] == '1' &&
		      r.starts == (cfg.id_policy == TW_EAP_ID_ALWAYS_ANY ? 2u : 1u) &&
		      s.ids.asked == TW_AT_PERMANENT_ID_REQ;
		n_runs++;
		tw_eap_sim_server_wipe(&s);
		tw_eap_sim_peer_wipe(&p);

		if (!ok)
			tw_note("subscriber %u (kind %u) failed", i, i % 4);
		n_ok += ok;
		tw_wipe(&ph, sizeof(ph));
	}
	CHECK(n_ok == N);
	CHECK(n_notif > 0 && n_notif_reauth > 0);
	tw_note("%u subscribers, %u exchanges (%u full permanent, %u fast re-auth, "
		"%u pseudonym/full-auth-id; success notifications: %u full, %u re-auth)",
		N, n_runs, n_full, n_reauth, n_pseudo, n_notif, n_notif_reauth);
}

/* ---- negative cases ----------------------------------------------------- */

/* Drives a fresh server to the SIM/Challenge with a peer; leaves the
 * challenge in a[0..*a_len). */
static void to_challenge(struct tw_eap_sim_server *s, struct tw_eap_sim_peer *p,
			 struct phone *ph, struct tw_eap_server_cfg *cfg,
			 uint8_t *a, size_t *a_len)
{
	uint8_t b[1024];
	size_t b_len;
	int act;

	memset(&g_store, 0, sizeof(g_store));
	make_phone(ph, 0);
	server_cfg(cfg);
	CHECK_OK(tw_eap_sim_server_init(s, cfg, NULL));
	CHECK_OK(tw_eap_sim_peer_init(p, &ph->pc, &ph->mem, &ph->usim, st_random,
				      &g_store));
	CHECK(tw_eap_sim_server_start(s, 7, a, 1024, a_len) == TW_EAP_SEND);
	CHECK(tw_eap_sim_peer_input(p, a, *a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(tw_eap_sim_server_input(s, b, b_len, a, 1024, a_len) == TW_EAP_SEND);
	CHECK(tw_eap_sim_peer_input(p, a, *a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	act = tw_eap_sim_server_input(s, b, b_len, a, 1024, a_len);
	CHECK(act == TW_EAP_NEED_VECTOR);
	struct tw_eap_sim_triplet t[3];
	for (int i = 0; i < 3; i++) {
		uint8_t rnd[16];
		tw_test_random(rnd, 16);
		CHECK_OK(tw_vecsrc_sim(&ph->sub, rnd, &t[i]));
	}
	CHECK(tw_eap_sim_server_vector(s, t, 3, a, 1024, a_len) == TW_EAP_SEND);
}

static bool is_notification_failure(const uint8_t *pkt, size_t len)
{
	struct tw_simaka_msg m;

	return tw_simaka_decode(&m, pkt, len) == TW_OK && m.code == TW_EAP_REQUEST &&
	       m.subtype == TW_SIMAKA_NOTIFICATION &&
	       m.notification_code == TW_SIMAKA_NOTIF_GENERAL_FAILURE;
}

static uint16_t client_error_code(const uint8_t *pkt, size_t len)
{
	struct tw_simaka_msg m;

	if (tw_simaka_decode(&m, pkt, len) != TW_OK ||
	    m.subtype != TW_SIMAKA_CLIENT_ERROR ||
	    !tw_simaka_has(&m.client_error_code))
		return 0xffff;
	return m.client_error;
}

static void test_server_negative(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_eap_sim_server s, s2;
	struct tw_eap_sim_peer p;
	struct phone ph;
	uint8_t a[1024], b[1024], c[1024];
	size_t a_len, b_len, c_len;

	to_challenge(&s, &p, &ph, &cfg, a, &a_len);
	CHECK(tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);

	/* every single flipped bit of AT_MAC: failure notification, then
	 * EAP-Failure after the peer's notification response */
	bool all = true;
	for (unsigned bit = 0; bit < 128; bit++) {
		memcpy(c, b, b_len);
		c[b_len - 16 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		s2 = s;
		all &= tw_eap_sim_server_input(&s2, c, b_len, a, sizeof(a), &a_len) ==
			       TW_EAP_SEND &&
		       is_notification_failure(a, a_len);
	}
	CHECK(all);
	/* the peer answers the P=1 failure notification without AT_MAC */
	{
		struct tw_eap_sim_peer p2 = p;
		struct tw_simaka_msg m;

		/* (after its Challenge response a P=1 one is out of order:
		 * Client-Error "unable to process packet") */
		CHECK(tw_eap_sim_peer_input(&p2, a, a_len, c, sizeof(c), &c_len) ==
		      TW_EAP_SEND);
		CHECK(client_error_code(c, c_len) == TW_SIMAKA_ERR_UNABLE_TO_PROCESS);
		tw_eap_sim_peer_wipe(&p2);
		(void)m;
	}
	/* peer response to the failure notification -> EAP-Failure */
	{
		struct tw_simaka_builder bb;
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, a[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_NOTIFICATION);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		CHECK(tw_eap_sim_server_input(&s2, c, c_len, a, sizeof(a), &a_len) ==
		      TW_EAP_REJECT);
		CHECK(a_len == 4 && a[0] == TW_EAP_FAILURE);
		CHECK(tw_eap_sim_server_keys(&s2) == NULL);
	}

	/* truncated AT_MAC packet (length cut): malformed -> notification */
	memcpy(c, b, b_len);
	CHECK_OK(tw_eap_set_length(c, b_len - 4));
	s2 = s;
	CHECK(tw_eap_sim_server_input(&s2, c, b_len - 4, a, sizeof(a), &a_len) ==
	      TW_EAP_SEND && is_notification_failure(a, a_len));

	/* missing AT_MAC */
	{
		struct tw_simaka_builder bb;
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, b[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_CHALLENGE);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, c, c_len, a, sizeof(a), &a_len) ==
		      TW_EAP_SEND && is_notification_failure(a, a_len));
	}
	/* unknown non-skippable attribute (type 100) before AT_MAC */
	{
		uint8_t d[1024];
		memcpy(d, b, 8);
		d[8] = 100;
		d[9] = 1;
		d[10] = d[11] = 0;
		memcpy(d + 12, b + 8, b_len - 8);
		CHECK_OK(tw_eap_set_length(d, b_len + 4));
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, d, b_len + 4, a, sizeof(a),
					      &a_len) == TW_EAP_SEND &&
		      is_notification_failure(a, a_len));
		/* a skippable one (200) is ignored but breaks the MAC */
		d[8] = 200;
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, d, b_len + 4, a, sizeof(a),
					      &a_len) == TW_EAP_SEND &&
		      is_notification_failure(a, a_len));
	}
	/* wrong EAP Identifier: silently discarded, state unchanged */
	memcpy(c, b, b_len);
	c[1] ^= 0x55;
	CHECK(tw_eap_sim_server_input(&s, c, b_len, a, sizeof(a), &a_len) ==
	      TW_EAP_DISCARD && a_len == 0);
	/* an EAP-Request is discarded too */
	memcpy(c, b, b_len);
	c[0] = TW_EAP_REQUEST;
	CHECK(tw_eap_sim_server_input(&s, c, b_len, a, sizeof(a), &a_len) ==
	      TW_EAP_DISCARD);
	/* too small an output buffer is a caller error */
	CHECK_ERR(tw_eap_sim_server_input(&s, b, b_len, a, 100, &a_len),
		  TW_ERR_OVERFLOW);
	/* Client-Error -> EAP-Failure */
	{
		struct tw_simaka_builder bb;
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, b[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_CLIENT_ERROR);
		tw_simaka_put_fixed(&bb, TW_AT_CLIENT_ERROR_CODE, 0, NULL, 0);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, c, c_len, a, sizeof(a), &a_len) ==
		      TW_EAP_REJECT && a[0] == TW_EAP_FAILURE);
	}
	/* and the genuine response still succeeds */
	CHECK(tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len) ==
	      TW_EAP_ACCEPT);
	CHECK(tw_eap_sim_peer_input(&p, a, a_len, c, sizeof(c), &c_len) ==
	      TW_EAP_ACCEPT);
	CHECK(keys_agree(&s, &p));
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);

	/* duplicate RANDs from the vector source: EAP-Failure */
	{
		struct tw_eap_sim_triplet t[3];
		uint8_t in[300];
		size_t in_len;

		memset(&g_store, 0, sizeof(g_store));
		server_cfg(&cfg);
		CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
		CHECK_OK(tw_eap_encode(in, sizeof(in), &in_len, TW_EAP_RESPONSE, 3,
				       TW_EAP_TYPE_IDENTITY,
				       (const uint8_t *)"1001010123456789@x.org", 22));
		CHECK(tw_eap_sim_server_input(&s, in, in_len, a, sizeof(a), &a_len) ==
		      TW_EAP_SEND);
		/* a Start response selecting version 2: notification */
		struct tw_simaka_builder bb;
		uint8_t nonce[16] = { 1 };
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, a[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
		tw_simaka_put_fixed(&bb, TW_AT_NONCE_MT, 0, nonce, 16);
		tw_simaka_put_fixed(&bb, TW_AT_SELECTED_VERSION, 2, NULL, 0);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, c, c_len, b, sizeof(b), &b_len) ==
		      TW_EAP_SEND && is_notification_failure(b, b_len));
		/* an AT_IDENTITY that was not asked for: notification */
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, a[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
		tw_simaka_put_fixed(&bb, TW_AT_NONCE_MT, 0, nonce, 16);
		tw_simaka_put_fixed(&bb, TW_AT_SELECTED_VERSION, 1, NULL, 0);
		tw_simaka_put_var(&bb, TW_AT_IDENTITY, (const uint8_t *)"1001010123456789", 16);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		s2 = s;
		CHECK(tw_eap_sim_server_input(&s2, c, c_len, b, sizeof(b), &b_len) ==
		      TW_EAP_SEND && is_notification_failure(b, b_len));
		/* the proper one: vector request; duplicate RANDs rejected */
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_RESPONSE, a[1],
				     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
		tw_simaka_put_fixed(&bb, TW_AT_NONCE_MT, 0, nonce, 16);
		tw_simaka_put_fixed(&bb, TW_AT_SELECTED_VERSION, 1, NULL, 0);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		CHECK(tw_eap_sim_server_input(&s, c, c_len, b, sizeof(b), &b_len) ==
		      TW_EAP_NEED_VECTOR);
		CHECK(strcmp(tw_eap_sim_server_vec_request(&s)->imsi,
			     "001010123456789") == 0);
		tw_test_random(t, sizeof(t));
		memcpy(t[2].rand_, t[0].rand_, 16);
		CHECK(tw_eap_sim_server_vector(&s, t, 3, b, sizeof(b), &b_len) ==
		      TW_EAP_REJECT && b[0] == TW_EAP_FAILURE);
		CHECK(tw_eap_sim_server_keys(&s) == NULL);
		tw_eap_sim_server_wipe(&s);
	}
	/* Nak -> EAP-Failure */
	{
		uint8_t in[300];
		size_t in_len;
		uint8_t aka = TW_EAP_TYPE_AKA;

		CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
		CHECK(tw_eap_sim_server_start(&s, 1, a, sizeof(a), &a_len) == TW_EAP_SEND);
		CHECK_OK(tw_eap_encode(in, sizeof(in), &in_len, TW_EAP_RESPONSE, 1,
				       TW_EAP_TYPE_IDENTITY, (const uint8_t *)"anonymous@x.org", 15));
		CHECK(tw_eap_sim_server_input(&s, in, in_len, a, sizeof(a), &a_len) ==
		      TW_EAP_SEND);
		struct tw_simaka_msg m;
		CHECK_OK(tw_simaka_decode(&m, a, a_len));
		CHECK(tw_simaka_has(&m.any_id_req)); /* anonymous: AT_ANY_ID_REQ */
		CHECK_OK(tw_eap_encode(in, sizeof(in), &in_len, TW_EAP_RESPONSE, 2,
				       TW_EAP_TYPE_NAK, &aka, 1));
		CHECK(tw_eap_sim_server_input(&s, in, in_len, a, sizeof(a), &a_len) ==
		      TW_EAP_REJECT);
		tw_eap_sim_server_wipe(&s);
	}
	tw_wipe(&ph, sizeof(ph));
}

static void test_peer_negative(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_eap_sim_server s;
	struct tw_eap_sim_peer p, p2;
	struct phone ph;
	uint8_t a[1024], b[1024], c[1024];
	size_t a_len, b_len, c_len;
	struct tw_simaka_builder bb;
	struct tw_simaka_mac_ctx mac;
	uint8_t rnd[48], k[16];

	to_challenge(&s, &p, &ph, &cfg, a, &a_len);
	tw_test_random(rnd, sizeof(rnd));
	tw_test_random(k, sizeof(k));
	CHECK_OK(tw_simaka_mac_init(&mac, TW_EAP_TYPE_SIM, k, 16));

	/* one RAND: "insufficient number of challenges" (code 2) */
	tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_REQUEST, 9, TW_EAP_TYPE_SIM,
			     TW_SIMAKA_SIM_CHALLENGE);
	tw_simaka_put_fixed(&bb, TW_AT_RAND, 0, rnd, 16);
	tw_simaka_put_mac(&bb);
	CHECK_OK(tw_simaka_finish_mac(&bb, &mac, NULL, 0, &c_len));
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, c_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_INSUFFICIENT_CHALLENGES);
	CHECK(b[1] == 9);
	/* after a Client-Error, EAP-Failure ends it */
	uint8_t fail[4] = { TW_EAP_FAILURE, 9, 0, 4 };
	CHECK(tw_eap_sim_peer_input(&p2, fail, 4, b, sizeof(b), &b_len) == TW_EAP_REJECT);
	CHECK(tw_eap_sim_peer_keys(&p2) == NULL);

	/* duplicate RANDs: "RANDs are not fresh" (code 3) */
	memcpy(rnd + 32, rnd, 16);
	tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_REQUEST, 9, TW_EAP_TYPE_SIM,
			     TW_SIMAKA_SIM_CHALLENGE);
	tw_simaka_put_fixed(&bb, TW_AT_RAND, 0, rnd, 48);
	tw_simaka_put_mac(&bb);
	CHECK_OK(tw_simaka_finish_mac(&bb, &mac, NULL, 0, &c_len));
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, c_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_RANDS_NOT_FRESH);

	/* the server's challenge with a flipped AT_MAC bit: code 0 */
	memcpy(c, a, a_len);
	c[a_len - 3] ^= 0x10;
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_UNABLE_TO_PROCESS);
	/* ... and with a flipped RAND bit: the MAC fails too */
	memcpy(c, a, a_len);
	c[12] ^= 0x01;
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_UNABLE_TO_PROCESS);
	/* unknown non-skippable attribute in a request: code 0 */
	memcpy(c, a, 8);
	c[8] = 99;
	c[9] = 1;
	c[10] = c[11] = 0;
	memcpy(c + 12, a + 8, a_len - 8);
	CHECK_OK(tw_eap_set_length(c, a_len + 4));
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, a_len + 4, b, sizeof(b), &b_len) ==
	      TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_UNABLE_TO_PROCESS);
	/* EAP-Success before authenticating: discarded */
	uint8_t succ[4] = { TW_EAP_SUCCESS, 9, 0, 4 };
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, succ, 4, b, sizeof(b), &b_len) ==
	      TW_EAP_DISCARD);
	/* a P=0 notification before authentication: code 0 */
	tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_REQUEST, 9, TW_EAP_TYPE_SIM,
			     TW_SIMAKA_NOTIFICATION);
	tw_simaka_put_fixed(&bb, TW_AT_NOTIFICATION, TW_SIMAKA_NOTIF_SUCCESS, NULL, 0);
	tw_simaka_put_mac(&bb);
	CHECK_OK(tw_simaka_finish_mac(&bb, &mac, NULL, 0, &c_len));
	p2 = p;
	CHECK(tw_eap_sim_peer_input(&p2, c, c_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_UNABLE_TO_PROCESS);
	tw_simaka_mac_wipe(&mac);
	tw_eap_sim_peer_wipe(&p2);

	/* the genuine challenge still works */
	CHECK(tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) == TW_EAP_SEND);
	CHECK(tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len) ==
	      TW_EAP_ACCEPT);
	CHECK(tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) ==
	      TW_EAP_ACCEPT);
	CHECK(keys_agree(&s, &p));
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);

	/* unsupported version: SIM/Start listing only version 2 -> code 1 */
	{
		static const uint8_t v2[2] = { 0, 2 };
		struct tw_eap_peer_ids mem;
		memset(&mem, 0, sizeof(mem));
		CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &mem, &ph.usim, st_random,
					      &g_store));
		CHECK_OK(tw_eap_request_identity(c, sizeof(c), 1, &c_len));
		CHECK(tw_eap_sim_peer_input(&p, c, c_len, b, sizeof(b), &b_len) ==
		      TW_EAP_SEND);
		tw_simaka_build_init(&bb, c, sizeof(c), TW_EAP_REQUEST, 2,
				     TW_EAP_TYPE_SIM, TW_SIMAKA_SIM_START);
		tw_simaka_put_var(&bb, TW_AT_VERSION_LIST, v2, 2);
		CHECK_OK(tw_simaka_finish(&bb, &c_len));
		CHECK(tw_eap_sim_peer_input(&p, c, c_len, b, sizeof(b), &b_len) ==
		      TW_EAP_SEND);
		CHECK(client_error_code(b, b_len) == TW_SIMAKA_ERR_UNSUPPORTED_VERSION);
		tw_eap_sim_peer_wipe(&p);
	}
	tw_wipe(&ph, sizeof(ph));
}

/* Counter not increasing (RFC 4186 §5.5): the peer answers with
 * AT_COUNTER_TOO_SMALL, the server falls back to full authentication. And
 * a re-auth response whose counter differs from the request's fails. */
static void test_counter(void)
{
	struct tw_eap_server_cfg cfg;
	struct tw_eap_sim_server s;
	struct tw_eap_sim_peer p;
	struct phone ph;
	struct run_result r;

	memset(&g_store, 0, sizeof(g_store));
	make_phone(&ph, 3);
	server_cfg(&cfg);
	CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
	CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim, st_random,
				      &g_store));
	r = run(&s, &p, &ph);
	CHECK(r.server_act == TW_EAP_ACCEPT && r.peer_act == TW_EAP_ACCEPT);
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);

	/* the phone has seen counter 40 already */
	ph.mem.reauth.counter = 40;
	CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
	CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim, st_random,
				      &g_store));
	r = run(&s, &p, &ph);
	CHECK(r.reauth && r.starts == 1);
	CHECK(r.server_act == TW_EAP_ACCEPT && r.peer_act == TW_EAP_ACCEPT);
	CHECK(keys_agree(&s, &p));
	CHECK(ph.mem.reauth.counter == 1); /* a new full authentication */
	CHECK(count_reauth(&g_store) == 1);
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);

	/* a server whose re-auth request repeats the counter the phone has:
	 * counter 2 twice. Rewind the store's counter after a re-auth. */
	CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
	CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim, st_random,
				      &g_store));
	r = run(&s, &p, &ph);
	CHECK(r.reauth && r.server_act == TW_EAP_ACCEPT && ph.mem.reauth.counter == 2);
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);
	for (int i = 0; i < NSLOT; i++)
		if (g_store.ra[i].len)
			g_store.ra[i].st.counter = 1; /* replayed state */
	CHECK_OK(tw_eap_sim_server_init(&s, &cfg, NULL));
	CHECK_OK(tw_eap_sim_peer_init(&p, &ph.pc, &ph.mem, &ph.usim, st_random,
				      &g_store));
	r = run(&s, &p, &ph);
	CHECK(r.reauth && r.starts == 1 && r.server_act == TW_EAP_ACCEPT &&
	      ph.mem.reauth.counter == 1);
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);
	tw_wipe(&ph, sizeof(ph));
}

void test_main(void)
{
	test_rfc4186_appendix_a();
	test_random_subscribers();
	test_server_negative();
	test_peer_negative();
	test_counter();
}
