/*
 * Fuzz target: the EAP-SIM server and peer engines (RFC 4186) fed a
 * sequence of packets. Input: one mode octet (even: server, odd: peer),
 * then records of a 2-octet big-endian length and that many octets, each
 * record one EAP packet from the other side. The server gets the RFC 4186
 * Appendix A triplets when it asks for a vector and a fixed "random"
 * stream, so the A.2/A.4/A.6 packets reach a success. Invariants: no crash
 * or overread, every action is one of enum tw_eap_action or a caller
 * error, out_len within the buffer and a sound EAP packet when sent, keys
 * present exactly after TW_EAP_ACCEPT. With mode bit 6 the input is
 * instead a plan for conversations between twag's own peer and server
 * (exchange below), which reach success, fast re-authentication and the
 * identity commits that forged packets cannot.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"
#include "twag/simaka.h"

#include "fuzz_must.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int fz_random(void *arg, uint8_t *out, size_t len)
{
	unsigned *ctr = arg;

	/* RFC 4186 A.5's IV first, then a counter pattern */
	static const uint8_t a5_iv[16] = { 0x9e, 0x18, 0xb0, 0xc2, 0x9a, 0x65,
					   0x22, 0x63, 0xc0, 0x6e, 0xfb, 0x54,
					   0xdd, 0x00, 0xa8, 0x95 };
	for (size_t i = 0; i < len; i++)
		out[i] = (*ctr == 0 && len == 16) ? a5_iv[i] : (uint8_t)(*ctr * 31 + i);
	(*ctr)++;
	return TW_OK;
}

static int fz_ps_lookup(void *arg, const uint8_t *p, size_t len, char imsi[16],
			size_t *imsi_len)
{
	(void)arg;
	if (len == 4 && memcmp(p, "3abc", 4) == 0) {
		memcpy(imsi, "244070100000001", 16);
		*imsi_len = 15;
		return TW_OK;
	}
	return TW_ERR_NOTFOUND;
}

static int fz_ps_store(void *arg, const uint8_t *p, size_t len, const char *imsi,
		       size_t imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_OK;
}

static int fz_ra_lookup(void *arg, const uint8_t *id, size_t len,
			struct tw_eap_reauth_state *st)
{
	(void)arg;
	if (len == 4 && memcmp(id, "5abc", 4) == 0) {
		memset(st, 0, sizeof(*st));
		st->method = TW_EAP_TYPE_SIM;
		memcpy(st->imsi, "244070100000001", 16);
		st->imsi_len = 15;
		st->counter = 1;
		st->k_aut_len = 16;
		return TW_OK;
	}
	return TW_ERR_NOTFOUND;
}

static int fz_ra_store(void *arg, const uint8_t *id, size_t len,
		       const struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_OK;
}

static int fz_ra_remove(void *arg, const uint8_t *id, size_t len)
{
	(void)arg, (void)id, (void)len;
	return TW_OK;
}

static void check_out(int act, const uint8_t *out, size_t out_len, size_t max)
{
	struct tw_eap_view v;

	if (act < 0)
		return;
	if (act < TW_EAP_SEND || act > TW_EAP_DISCARD || out_len > max)
		abort();
	if ((act == TW_EAP_SEND || act == TW_EAP_REJECT) && out_len &&
	    tw_eap_decode(&v, out, out_len) != TW_OK)
		abort();
}

/* ---- twag's peer against twag's server ---------------------------------- */

/* The one-entry identity store of the exchanges below. */
#define FUZZ_STORE1_IMSI "244070100000001"
#include "fuzz_store1.h"

/*
 * Conversations between twag's EAP-SIM peer and server (RFC 4186), up to
 * three in a row with the phone's identity memory and the store kept, so
 * pseudonyms and fast re-authentication are used; triplets from the same
 * COMP128 key as the card (mode bits 4-5 pick the version, bit 1 result
 * indications, bit 3 AT_FULLAUTH_ID_REQ first, bit 7 identities the store
 * mints itself). The plan (after the mode octet): one octet of settings
 * (conversations, privacy and re-authentication on either side, two or
 * three triplets), then (round, offset, xor) triples that alter the
 * server's packet in flight at that round (16 * conversation + round;
 * with 64 added, the packet is then signed again with the server's
 * K_aut) or, with 128 added to the round, the peer's answer, which is then
 * signed again (fuzz_remac: over the packet | n*SRES for a challenge
 * response, | NONCE_S for a re-authentication response) so that the
 * server's checks behind AT_MAC see it. A triple (255, k, x) sets the
 * exchange up instead: k % 8 = 0 the x-th random draw fails, 1 the store
 * keeps the first re-auth counter (AT_COUNTER_TOO_SMALL follows), 3 a
 * re-auth limit of x % 4 (x & 4: no identity store, x & 8: one that
 * cannot remove), 4 store writes fail (db.fail_store = x).
 * Invariants: an untouched conversation ends with both sides accepting
 * and holding the same MSK, EMSK and Session-Id; whatever is altered,
 * when both sides accept they hold the same keys, and no side accepts
 * after the other rejected.
 */
static void exchange(uint8_t mode, const uint8_t *d, size_t n)
{
	static const struct tw_eap_identity_ops ops = {
		.pseudonym_lookup = x_ps_lookup, .pseudonym_store = x_ps_store,
		.reauth_lookup = x_ra_lookup, .reauth_store = x_ra_store,
		.reauth_remove = x_ra_remove, .random = x_random,
	};
	static const struct tw_eap_identity_ops ops_keep = {
		.pseudonym_lookup = x_ps_lookup, .pseudonym_store = x_ps_store,
		.reauth_lookup = x_ra_lookup, .reauth_store = x_ra_store,
		.random = x_random,
	};
	static struct tw_eap_sim_server s;
	static struct tw_eap_sim_peer p;
	static struct tw_usim u;
	static struct tw_subscriber sub;
	static struct tw_eap_peer_ids mem;
	static uint8_t a[1024], b[1024];
	struct tw_eap_server_cfg cfg;
	struct tw_eap_peer_cfg pc;
	struct tw_eap_sim_server_opts opts;
	uint8_t set = n > 0 ? d[0] : 0;
	static const uint8_t ki[16] = { 0x6a, 0x61, 0x6e, 0x65 };
	static const uint8_t amf[2] = { 0, 0 };
	unsigned convs = 1 + set % 3, n_t = 0;
	struct tw_eap_sim_triplet t[3];
	bool faulty = false, no_ops = false, no_remove = false, tainted = false;
	uint16_t limit = 0;

	memset(&db, 0, sizeof(db));
	for (size_t k = 1; k + 2 < n; k += 3) {
		if (d[k] != 255)
			continue;
		switch (d[k + 1] % 8) {
		case 0:
			db.fail_at = d[k + 2];
			faulty |= d[k + 2] != 0;
			break;
		case 1:
			db.freeze = true;
			break;
		case 3:
			limit = d[k + 2] % 4;
			/* (with no store there is no random source either:
			 * identities handed in cannot be encrypted) */
			no_ops = d[k + 2] & 4;
			faulty |= no_ops && (mode & 128);
			no_remove = d[k + 2] & 8;
			break;
		case 4:
			/* the server does not accept what it could not
			 * remember (commit_ids) */
			db.fail_store = d[k + 2];
			faulty |= (d[k + 2] & 7) != 0;
			break;
		default:
			break;
		}
	}
	memset(&mem, 0, sizeof(mem));
	memset(&u, 0, sizeof(u));
	if (tw_sub_keys_comp128(&u.keys, 1 + (mode >> 4) % 3, ki) != TW_OK ||
	    tw_subscriber_init(&sub, "244070100000001", &u.keys, amf) != TW_OK)
		abort();
	memcpy(u.imsi, "244070100000001", 16);
	u.imsi_len = 15;
	memset(&cfg, 0, sizeof(cfg));
	cfg.enable_sim = true;
	cfg.pseudonyms = !(set & 4);
	cfg.fast_reauth = !(set & 8);
	cfg.result_ind = mode & 2;
	cfg.realm = "eapsim.foo";
	cfg.realm_len = 10;
	cfg.reauth_limit = limit;
	cfg.ops = no_ops ? NULL : no_remove ? &ops_keep : &ops;
	memset(&pc, 0, sizeof(pc));
	pc.imsi = "244070100000001";
	pc.imsi_len = 15;
	pc.realm = "eapsim.foo";
	pc.realm_len = 10;
	pc.use_pseudonym = !(set & 16);
	pc.use_reauth = !(set & 32);
	pc.result_ind = set & 64;
	memset(&opts, 0, sizeof(opts));
	opts.n_triplets = set & 128 ? 2 : 3;
	opts.fullauth_id_req_first = mode & 8;

	for (unsigned c = 0; c < convs; c++) {
		size_t a_len = 0, b_len = 0;
		int act, pact = TW_EAP_SEND;
		bool touched = faulty || tainted, s_done = false, p_done = false,
		     resigned = false, peer_signed = false;
		int s_final = 0, p_final = 0;

		if (tw_eap_sim_server_init(&s, &cfg, &opts) != TW_OK ||
		    tw_eap_sim_peer_init(&p, &pc, &mem, &u, x_random, NULL) != TW_OK)
			abort();
		/* mode bit 7: identities the store mints itself, of lengths the
		 * plan's last octet picks (too long is TW_ERR_LENGTH) */
		if (mode & 128) {
			static uint8_t ids[2 * TW_EAP_ID_MAX];
			size_t pl = 1 + (n ? d[n - 1] : 0) % (TW_EAP_PSEUDONYM_MAX + 2);
			size_t rl = 1 + (n ? d[n - 1] : 0) % (TW_EAP_ID_MAX + 2);
			int rc;

			memset(ids, 'q', sizeof(ids));
			ids[0] = '3';
			ids[TW_EAP_ID_MAX] = '5';
			rc = tw_eap_sim_server_set_next_ids(&s, ids, pl, ids + TW_EAP_ID_MAX, rl);
			if (rc != (pl <= TW_EAP_PSEUDONYM_MAX && rl <= TW_EAP_ID_MAX ? TW_OK
										   : TW_ERR_LENGTH))
				abort();
		}
		act = tw_eap_sim_server_start(&s, (uint8_t)(c + 1), a, sizeof(a), &a_len);
		for (unsigned r = 0; r < 12 && !(s_done && p_done); r++) {
			/* the plan's alterations of this conversation and round */
			for (size_t k = 1; k + 2 < n; k += 3)
				if (d[k] == c * 16 + r && d[k + 2] != 0 && d[k + 1] < a_len) {
					a[d[k + 1]] ^= d[k + 2];
					touched = true;
				}
			/* with 64 added, signed again as the server (AT_MAC of
			 * a challenge over the packet | NONCE_MT, RFC 4186
			 * §9.3): the peer's checks behind AT_MAC see it */
			bool resign = false;

			for (size_t k = 1; k + 2 < n; k += 3)
				if (d[k] == 64 + c * 16 + r && d[k + 2] != 0 && d[k + 1] < a_len) {
					a[d[k + 1]] ^= d[k + 2];
					resign = touched = resigned = true;
				}
			if (resign && act == TW_EAP_SEND) {
				bool ch = a_len > 5 && a[5] == TW_SIMAKA_SIM_CHALLENGE;

				fuzz_remac(&s.mac, a, a_len, ch ? s.nonce_mt : NULL, ch ? 16 : 0);
			}
			if (act == TW_EAP_ACCEPT || act == TW_EAP_REJECT) {
				s_done = true;
				s_final = act;
			} else if (act != TW_EAP_SEND) {
				s_done = true;
				s_final = act;
				break;
			}
			pact = tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len);
			if (pact == TW_EAP_ACCEPT || pact == TW_EAP_REJECT || pact != TW_EAP_SEND) {
				p_done = true;
				p_final = pact;
			}
			if (s_done || p_done)
				break;
			/* the plan's alterations of the peer's answer, signed again */
			bool edited = false;

			for (size_t k = 1; k + 2 < n; k += 3)
				if (d[k] == 128 + c * 16 + r && d[k + 2] != 0 && d[k + 1] < b_len) {
					b[d[k + 1]] ^= d[k + 2];
					edited = touched = peer_signed = true;
				}
			if (edited && b_len > 5 && b[5] == TW_SIMAKA_REAUTH) {
				fuzz_remac(&p.mac, b, b_len, p.nonce_s, 16);
			} else if (edited && b_len > 5 && b[5] == TW_SIMAKA_CHALLENGE) {
				uint8_t sres[3 * 4];

				for (unsigned i = 0; i < n_t; i++)
					memcpy(sres + 4 * i, t[i].sres, 4);
				fuzz_remac(&p.mac, b, b_len, sres, 4 * n_t);
			}
			act = tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len);
			if (act == TW_EAP_NEED_VECTOR) {
				const struct tw_eap_vec_request *vr = tw_eap_sim_server_vec_request(&s);

				if (vr == NULL || vr->count != opts.n_triplets)
					abort();
				n_t = vr->count;
				for (unsigned i = 0; i < vr->count; i++) {
					uint8_t rnd[16];

					for (int j = 0; j < 16; j++)
						rnd[j] = (uint8_t)(c * 64 + i * 16 + j);
					if (tw_vecsrc_sim(&sub, rnd, &t[i]) != TW_OK)
						abort();
				}
				act = tw_eap_sim_server_vector(&s, t, vr->count, a, sizeof(a), &a_len);
			}
		}
		const struct tw_eap_keys *sk = tw_eap_sim_server_keys(&s),
					 *pk = tw_eap_sim_peer_keys(&p);
		if (!touched && (s_final != TW_EAP_ACCEPT || p_final != TW_EAP_ACCEPT))
			abort();
		/* (a re-authentication request signed again by the plan has
		 * another AT_MAC, which the peer's Session-Id takes) */
		if (sk != NULL && pk != NULL &&
		    (memcmp(sk->msk, pk->msk, 64) != 0 || memcmp(sk->emsk, pk->emsk, 64) != 0 ||
		     (!resigned && (sk->session_id_len != pk->session_id_len ||
				    memcmp(sk->session_id, pk->session_id,
					   sk->session_id_len) != 0))))
			abort();
		/* once the peer accepted, a packet more is out of order */
		if (p_final == TW_EAP_ACCEPT &&
		    tw_eap_sim_peer_input(&p, a, a_len, b, sizeof(b), &b_len) != TW_ERR_STATE)
			abort();
		/* what a signed alteration left in the store or the phone's
		 * memory (an identity garbled inside AT_ENCR_DATA) may fail
		 * the conversations after it */
		tainted |= resigned || peer_signed;
		if ((s_final == TW_EAP_REJECT && p_final == TW_EAP_ACCEPT))
			abort();
		tw_eap_sim_server_wipe(&s);
		tw_eap_sim_peer_wipe(&p);
	}
}

/* ---- the API contract, once per process ---------------------------------- */


static int fz_random_fail(void *arg, uint8_t *out, size_t len)
{
	(void)arg, (void)out, (void)len;
	return TW_ERR_CRYPTO;
}

static void contract(void)
{
	static const struct tw_eap_identity_ops norand = {
		.pseudonym_lookup = fz_ps_lookup, .pseudonym_store = fz_ps_store,
		.reauth_lookup = fz_ra_lookup, .reauth_store = fz_ra_store,
	};
	static const struct tw_eap_identity_ops badrand = {
		.pseudonym_lookup = fz_ps_lookup, .pseudonym_store = fz_ps_store,
		.reauth_lookup = fz_ra_lookup, .reauth_store = fz_ra_store,
		.random = fz_random_fail,
	};
	static const char perm[] = "1244070100000001@eapsim.foo";
	struct tw_eap_sim_server_opts o = { .n_triplets = 2 };
	struct tw_eap_server_cfg cfg, off;
	struct tw_eap_sim_server s;
	struct tw_eap_sim_triplet t[3];
	uint8_t out[1024], pkt[64], ids[TW_EAP_ID_MAX + 1];
	size_t len = 0, pl;

	memset(&cfg, 0, sizeof(cfg));
	cfg.enable_sim = true;
	cfg.realm = "eapsim.foo";
	cfg.realm_len = 10;
	cfg.ops = &norand;
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 3; i++)
		t[i].rand_[0] = (uint8_t)(i + 1);
	memset(ids, 'q', sizeof(ids));

	/* init: missing arguments, EAP-SIM not enabled, triplet counts
	 * outside 2..3 (RFC 4186 §9.3); none given means three */
	MUST(tw_eap_sim_server_init(nul, &cfg, NULL) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_init(&s, nul, NULL) == TW_ERR_INVAL);
	off = cfg;
	off.enable_sim = false;
	MUST(tw_eap_sim_server_init(&s, &off, NULL) == TW_ERR_UNSUPPORTED);
	o.n_triplets = 1;
	MUST(tw_eap_sim_server_init(&s, &cfg, &o) == TW_ERR_INVAL);
	o.n_triplets = TW_EAP_SIM_MAX_TRIPLETS + 1;
	MUST(tw_eap_sim_server_init(&s, &cfg, &o) == TW_ERR_INVAL);
	o.n_triplets = 0;
	MUST(tw_eap_sim_server_init(&s, &cfg, &o) == TW_OK);
	MUST(tw_eap_sim_server_init(&s, &cfg, NULL) == TW_OK);

	/* identities handed in: missing, too long */
	MUST(tw_eap_sim_server_set_next_ids(nul, ids, 1, ids, 1) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_set_next_ids(&s, nul, 1, ids, 1) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_set_next_ids(&s, ids, 1, nul, 1) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_set_next_ids(&s, nul, 0, nul, 0) == TW_OK);
	MUST(tw_eap_sim_server_set_next_ids(&s, ids, TW_EAP_PSEUDONYM_MAX + 1, ids, 1) ==
	     TW_ERR_LENGTH);
	MUST(tw_eap_sim_server_set_next_ids(&s, ids, 1, ids, TW_EAP_ID_MAX + 1) ==
	     TW_ERR_LENGTH);

	/* each call with a missing argument, out of order, or with an
	 * output below TW_EAP_OUT_MIN */
	MUST(tw_eap_sim_server_init(&s, &cfg, NULL) == TW_OK);
	MUST(tw_eap_sim_server_vec_request(nul) == NULL);
	MUST(tw_eap_sim_server_vec_request(&s) == NULL);
	MUST(tw_eap_sim_server_keys(nul) == NULL);
	MUST(tw_eap_sim_server_keys(&s) == NULL);
	MUST(tw_eap_sim_server_start(nul, 1, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_start(&s, 1, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_start(&s, 1, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &len) == TW_ERR_STATE);
	MUST(tw_eap_sim_server_start(&s, 1, out, sizeof(out), &len) == TW_EAP_SEND);
	MUST(tw_eap_sim_server_start(&s, 1, out, sizeof(out), &len) == TW_ERR_STATE);
	MUST(tw_eap_encode(pkt, sizeof(pkt), &pl, TW_EAP_RESPONSE, 1, TW_EAP_TYPE_IDENTITY,
			   (const uint8_t *)perm, strlen(perm)) == TW_OK);
	MUST(tw_eap_sim_server_input(nul, pkt, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_input(&s, nul, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_input(&s, pkt, pl, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_input(&s, pkt, pl, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_eap_sim_server_input(&s, pkt, pl, out, TW_EAP_OUT_MIN - 1, &len) ==
	     TW_ERR_OVERFLOW);
	/* to the vector: the identity, then SIM/Start with NONCE_MT and
	 * the selected version (RFC 4186 §9.2) */
	MUST(tw_eap_sim_server_input(&s, pkt, pl, out, sizeof(out), &len) == TW_EAP_SEND);
	for (int round = 0; round < 5; round++) {
		struct tw_simaka_builder b;
		static const uint8_t nonce[16] = { 1, 2, 3, 4 };
		uint8_t rsp[128];
		size_t rl;

		/* the duplicate RANDs, the random source that is missing
		 * (no identities can be minted), a missing vector, an
		 * output too small, the wrong count: each on a fresh
		 * session at the vector */
		MUST(tw_eap_sim_server_init(&s, &cfg, NULL) == TW_OK);
		MUST(tw_eap_sim_server_start(&s, 1, out, sizeof(out), &len) == TW_EAP_SEND);
		MUST(tw_eap_sim_server_input(&s, pkt, pl, out, sizeof(out), &len) ==
		     TW_EAP_SEND);
		tw_simaka_build_init(&b, rsp, sizeof(rsp), TW_EAP_RESPONSE, s.id, TW_EAP_TYPE_SIM,
				     TW_SIMAKA_SIM_START);
		tw_simaka_put_fixed(&b, TW_AT_NONCE_MT, 0, nonce, 16);
		tw_simaka_put_fixed(&b, TW_AT_SELECTED_VERSION, TW_SIMAKA_VERSION_1, NULL, 0);
		MUST(tw_simaka_finish(&b, &rl) == TW_OK);
		MUST(tw_eap_sim_server_input(&s, rsp, rl, out, sizeof(out), &len) ==
		     TW_EAP_NEED_VECTOR);
		MUST(tw_eap_sim_server_input(&s, rsp, rl, out, sizeof(out), &len) ==
		     TW_ERR_STATE);
		switch (round) {
		case 0:
			t[2].rand_[0] = 1;
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &len) ==
			     TW_EAP_REJECT);
			t[2].rand_[0] = 3;
			break;
		case 1:
			/* identities to mint and no random source is the
			 * caller's configuration error; a random source that
			 * fails ends the session */
			cfg.pseudonyms = cfg.fast_reauth = true;
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &len) ==
			     TW_ERR_INVAL);
			cfg.ops = &badrand;
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &len) ==
			     TW_EAP_REJECT);
			cfg.ops = &norand;
			cfg.pseudonyms = cfg.fast_reauth = false;
			break;
		case 2:
			MUST(tw_eap_sim_server_vector(&s, nul, 3, out, sizeof(out), &len) ==
			     TW_ERR_INVAL);
			MUST(tw_eap_sim_server_vector(nul, t, 3, out, sizeof(out), &len) ==
			     TW_ERR_INVAL);
			MUST(tw_eap_sim_server_vector(&s, t, 3, nul, sizeof(out), &len) ==
			     TW_ERR_INVAL);
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), nul) ==
			     TW_ERR_INVAL);
			break;
		case 3:
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, TW_EAP_OUT_MIN - 1, &len) ==
			     TW_ERR_OVERFLOW);
			MUST(tw_eap_sim_server_vector(&s, t, 2, out, sizeof(out), &len) ==
			     TW_ERR_INVAL);
			break;
		default:
			MUST(tw_eap_sim_server_vector(&s, t, 3, out, sizeof(out), &len) ==
			     TW_EAP_SEND);
			MUST(tw_eap_sim_server_vec_request(&s) == NULL);
		}
		tw_eap_sim_server_wipe(&s);
	}
	tw_eap_sim_server_wipe(nul);
	MUST(tw_eap_sim_server_input(&s, pkt, pl, out, sizeof(out), &len) == TW_ERR_INVAL);

	/* the peer: missing arguments, an output below TW_EAP_OUT_MIN */
	static struct tw_eap_sim_peer p;
	static struct tw_usim u;
	static struct tw_eap_peer_ids mem;
	struct tw_eap_peer_cfg pc;
	unsigned ctr = 0;

	memset(&pc, 0, sizeof(pc));
	pc.imsi = "244070100000001";
	pc.imsi_len = 15;
	pc.realm = "eapsim.foo";
	pc.realm_len = 10;
	MUST(tw_eap_sim_peer_init(nul, &pc, &mem, &u, fz_random, &ctr) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_init(&p, nul, &mem, &u, fz_random, &ctr) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_init(&p, &pc, nul, &u, fz_random, &ctr) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_init(&p, &pc, &mem, nul, fz_random, &ctr) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_init(&p, &pc, &mem, &u, nul, &ctr) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_init(&p, &pc, &mem, &u, fz_random, &ctr) == TW_OK);
	MUST(tw_eap_request_identity(pkt, sizeof(pkt), 1, &pl) == TW_OK);
	MUST(tw_eap_sim_peer_input(nul, pkt, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_input(&p, nul, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_input(&p, pkt, pl, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_input(&p, pkt, pl, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_eap_sim_peer_input(&p, pkt, pl, out, TW_EAP_OUT_MIN - 1, &len) ==
	     TW_ERR_OVERFLOW);
	MUST(tw_eap_sim_peer_keys(nul) == NULL);
	MUST(tw_eap_sim_peer_keys(&p) == NULL);
	tw_eap_sim_peer_wipe(nul);
	tw_eap_sim_peer_wipe(&p);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const uint8_t a5_rand[3][16] = {
		{ 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
		  0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f },
		{ 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29,
		  0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f },
		{ 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39,
		  0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f } };
	unsigned ctr = 0;
	struct tw_eap_identity_ops ops = {
		.arg = &ctr, .pseudonym_lookup = fz_ps_lookup,
		.pseudonym_store = fz_ps_store, .reauth_lookup = fz_ra_lookup,
		.reauth_store = fz_ra_store, .reauth_remove = fz_ra_remove,
		.random = fz_random,
	};
	struct tw_eap_server_cfg cfg;
	static struct tw_eap_sim_server s;
	static struct tw_eap_sim_peer p;
	static struct tw_usim u;
	static struct tw_eap_peer_ids mem;
	struct tw_eap_peer_cfg pc;
	static uint8_t out[1024];
	size_t out_len = 0, off = 1;
	bool server;
	int act = 0;

	static bool contract_done;

	if (!contract_done) {
		contract_done = true;
		contract();
	}
	if (size < 1)
		return 0;
	if (data[0] & 64) {
		exchange(data[0], data + 1, size - 1);
		return 0;
	}
	server = (data[0] & 1) == 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.enable_sim = true;
	cfg.pseudonyms = cfg.fast_reauth = true;
	cfg.result_ind = (data[0] & 2) != 0;
	cfg.realm = "eapsim.foo";
	cfg.realm_len = 10;
	cfg.ops = &ops;
	memset(&pc, 0, sizeof(pc));
	pc.imsi = "244070100000001";
	pc.imsi_len = 15;
	pc.realm = "eapsim.foo";
	pc.realm_len = 10;
	pc.use_pseudonym = pc.use_reauth = true;
	pc.result_ind = (data[0] & 2) != 0;
	memset(&mem, 0, sizeof(mem));
	if (data[0] & 4) {
		/* a phone with a re-auth id and a pseudonym */
		memcpy(mem.reauth_id, "5abc", 4);
		mem.reauth_id_len = 4;
		mem.reauth.method = TW_EAP_TYPE_SIM;
		mem.reauth.k_aut_len = 16;
		memcpy(mem.pseudonym, "3abc", 4);
		mem.pseudonym_len = 4;
		mem.pseudonym_method = TW_EAP_TYPE_SIM;
	}
	memset(&u, 0, sizeof(u));
	if (tw_sub_keys_comp128(&u.keys, 1 + (data[0] >> 4) % 3, a5_rand[0]) != TW_OK)
		abort();
	memcpy(u.imsi, "244070100000001", 16);
	u.imsi_len = 15;
	if (server) {
		struct tw_eap_sim_server_opts opts = { .n_triplets = 3,
			.fullauth_id_req_first = (data[0] & 8) != 0 };
		if (tw_eap_sim_server_init(&s, &cfg, &opts) != TW_OK)
			abort();
	} else if (tw_eap_sim_peer_init(&p, &pc, &mem, &u, fz_random, &ctr) != TW_OK) {
		abort();
	}

	while (off + 2 <= size) {
		size_t n = tw_load_be16(data + off);
		off += 2;
		if (n > size - off)
			n = size - off;
		if (server) {
			act = tw_eap_sim_server_input(&s, data + off, n, out,
						      sizeof(out), &out_len);
			check_out(act, out, out_len, sizeof(out));
			if (act == TW_EAP_NEED_VECTOR) {
				struct tw_eap_sim_triplet t[3];
				const struct tw_eap_vec_request *vr =
					tw_eap_sim_server_vec_request(&s);
				if (vr == NULL || vr->count != 3)
					abort();
				for (int i = 0; i < 3; i++) {
					memcpy(t[i].rand_, a5_rand[i], 16);
					memset(t[i].sres, 0xd1 + 0x10 * i, 4);
					memset(t[i].kc, 0xa0 + 0x10 * i, 8);
				}
				act = tw_eap_sim_server_vector(&s, t, 3, out,
							       sizeof(out), &out_len);
				check_out(act, out, out_len, sizeof(out));
			}
			if ((tw_eap_sim_server_keys(&s) != NULL) != (act == TW_EAP_ACCEPT) &&
			    act != TW_ERR_STATE)
				abort();
		} else {
			act = tw_eap_sim_peer_input(&p, data + off, n, out,
						    sizeof(out), &out_len);
			check_out(act, out, out_len, sizeof(out));
			if ((tw_eap_sim_peer_keys(&p) != NULL) != (act == TW_EAP_ACCEPT) &&
			    act != TW_ERR_STATE)
				abort();
		}
		off += n;
	}
	tw_eap_sim_server_wipe(&s);
	tw_eap_sim_peer_wipe(&p);
	return 0;
}
