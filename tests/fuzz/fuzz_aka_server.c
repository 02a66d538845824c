/*
 * Fuzz target: the EAP-AKA / EAP-AKA' server engine (RFC 4187, RFC 9048)
 * fed arbitrary EAP responses in each state. Input: one mode octet (bit 0:
 * AKA or AKA'; bits 1-2: the state to reach first: initial, after
 * EAP-Request/Identity, at the challenge, at an AKA-Identity round; bits
 * 3, 4, 5: no pseudonyms, no fast re-authentication, no result
 * indications; bit 6: a store that knows every pseudonym and re-auth id;
 * bit 7: a re-auth limit of 3 and no store at all), then packets, each
 * as a 2-octet length and its octets. With bits 6 and 7 both set, the
 * rest is instead a plan for conversations between twag's own peer and
 * server (exchange below), which reach the success, re-authentication,
 * resynchronisation and identity paths that forged packets cannot. A vector request is
 * answered with a fixed vector. Invariants: no crash or overread, outputs
 * within the buffer, and never TW_EAP_ACCEPT (random input cannot carry
 * a valid AT_MAC and RES).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/kdf.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

#include "fuzz_must.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int f_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	memset(out, 0x5a, len);
	return TW_OK;
}

static int f_notfound(void *arg, const uint8_t *p, size_t len, char imsi[16],
		      size_t *imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_ERR_NOTFOUND;
}

static int f_ra_notfound(void *arg, const uint8_t *id, size_t len,
			 struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_ERR_NOTFOUND;
}

static int f_store_ps(void *arg, const uint8_t *p, size_t len, const char *imsi,
		      size_t imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_OK;
}

static int f_store_ra(void *arg, const uint8_t *id, size_t len,
		      const struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_OK;
}

static const struct tw_eap_identity_ops ops = {
	.pseudonym_lookup = f_notfound, .pseudonym_store = f_store_ps,
	.reauth_lookup = f_ra_notfound, .reauth_store = f_store_ra,
	.random = f_random,
};

/* A store that knows every identity: any pseudonym is one IMSI's, any
 * re-auth id has a state for the method the server runs (fixed keys,
 * the counter from the id's last octet). */
static uint8_t ra_method;

static int f_found(void *arg, const uint8_t *p, size_t len, char imsi[16], size_t *imsi_len)
{
	(void)arg, (void)p, (void)len;
	memcpy(imsi, "001010123456789", 16);
	*imsi_len = 15;
	return TW_OK;
}

static int f_ra_found(void *arg, const uint8_t *id, size_t len, struct tw_eap_reauth_state *st)
{
	(void)arg;
	memset(st, 0, sizeof(*st));
	st->method = ra_method;
	memcpy(st->imsi, "001010123456789", 16);
	st->imsi_len = 15;
	st->counter = len ? id[len - 1] % 20 : 1;
	memset(st->k_encr, 0x21, sizeof(st->k_encr));
	memset(st->k_aut, 0x22, sizeof(st->k_aut));
	st->k_aut_len = ra_method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16;
	memset(st->mk, 0x23, sizeof(st->mk));
	memset(st->k_re, 0x24, sizeof(st->k_re));
	return TW_OK;
}

static const struct tw_eap_identity_ops ops_found = {
	.pseudonym_lookup = f_found, .pseudonym_store = f_store_ps,
	.reauth_lookup = f_ra_found, .reauth_store = f_store_ra,
	.random = f_random,
};

/* ---- twag's peer against twag's server ---------------------------------- */

/* The one-entry identity store of the exchanges below. */
#define FUZZ_STORE1_IMSI "001010123456789"
#include "fuzz_store1.h"

/*
 * Conversations between twag's EAP-AKA / EAP-AKA' peer and server (RFC
 * 4187, RFC 9048), up to three in a row with the phone's identity memory
 * and the store kept (pseudonyms, fast re-authentication), vectors from
 * the same Milenage subscriber as the USIM (a resynchronisation when the
 * card asks for one; the plan can set the card's SQN ahead; every other
 * conversation gets its vector through tw_aka_server_vector_many). The plan: one
 * octet of settings, then (round, offset, xor) triples that alter the
 * server's packet in flight (round = 16 * conversation + round; with 64
 * added, signed again with the server's K_aut) or, with
 * 128 added to the round, the peer's answer, which is then signed again
 * (fuzz_remac) so that the checks behind AT_MAC see it: a wrong RES or
 * RES length, a proposed KDF, a counter that does not match, a second
 * AUTS. A triple (255, k, x) instead sets the exchange up: k % 8 = 0
 * the x-th random draw fails, 1 the store keeps the first re-auth
 * counter (AT_COUNTER_TOO_SMALL follows), 2 the HE ignores AUTS (the
 * card asks again), 3 a re-auth limit of x % 4 (with x & 4 no identity
 * store at all, with x & 8 one that cannot remove a used re-auth id), 4
 * store writes fail (db.fail_store = x). Invariants: an
 * untouched conversation ends with both sides accepting and holding the
 * same MSK, EMSK and Session-Id; an altered one never leaves the two
 * sides accepting with different keys, nor the peer accepting after the
 * server rejected; a server that accepted a full authentication got the
 * card's RES (an altered AT_RES is never accepted).
 */
/* The plan's alterations of the peer's answer at round code rc; the
 * answer is signed again (signed_edit). res_altered: an octet of AT_RES's value (or
 * its RES Length) changed in an AKA-Challenge response. */
static void peer_edits(struct tw_aka_peer_ctx *p, const uint8_t *d, size_t n, unsigned rc,
		       uint8_t *b, size_t b_len, bool *touched, bool *signed_edit,
		       bool *res_altered)
{
	struct tw_simaka_msg m;
	size_t res_lo = 0, res_hi = 0;
	bool any = false;

	if (tw_simaka_decode(&m, b, b_len) == TW_OK && m.subtype == TW_SIMAKA_CHALLENGE &&
	    tw_simaka_has(&m.res)) {
		res_lo = m.res.off + 2; /* RES Length, then RES */
		res_hi = (size_t)(m.res.val - b) + m.res.len;
	}
	uint8_t was[1024];

	if (b_len > sizeof(was))
		abort();
	memcpy(was, b, b_len);
	for (size_t q = 1; q + 2 < n; q += 3)
		if (d[q] == rc && d[q + 2] != 0 && d[q + 1] < b_len) {
			b[d[q + 1]] ^= d[q + 2];
			any = true;
		}
	if (!any)
		return;
	/* (the same alteration twice is none) */
	if (res_hi > res_lo && memcmp(was + res_lo, b + res_lo, res_hi - res_lo) != 0)
		*res_altered = true;
	*touched = *signed_edit = true;
	/* RFC 4187 §9.8: a re-authentication response is signed over the
	 * packet | NONCE_S; the others over the packet alone */
	bool ra = b_len > 5 && b[5] == TW_SIMAKA_REAUTH;

	fuzz_remac(&p->mac, b, b_len, ra ? p->nonce_s : NULL, ra ? 16 : 0);
}

static void exchange(uint8_t method, const uint8_t *d, size_t n)
{
	static const struct tw_eap_identity_ops xops = {
		.pseudonym_lookup = x_ps_lookup, .pseudonym_store = x_ps_store,
		.reauth_lookup = x_ra_lookup, .reauth_store = x_ra_store,
		.reauth_remove = x_ra_remove, .random = x_random,
	};
	static const struct tw_eap_identity_ops xops_keep = {
		.pseudonym_lookup = x_ps_lookup, .pseudonym_store = x_ps_store,
		.reauth_lookup = x_ra_lookup, .reauth_store = x_ra_store,
		.random = x_random,
	};
	static struct tw_aka_server_ctx s;
	static struct tw_aka_peer_ctx p;
	static struct tw_usim u;
	static struct tw_subscriber sub;
	static struct tw_eap_peer_ids mem;
	static uint8_t a[1024], b[1024];
	static const uint8_t k[16] = { 0x46, 0x5b, 0x5c, 0xe8, 0xb1, 0x99, 0xb4, 0x9f },
			     opc[16] = { 0xcd, 0x63, 0xcb, 0x71, 0x95, 0x4a, 0x9f, 0x4e },
			     amf[2] = { 0x80, 0x00 };
	struct tw_sub_keys kk;
	struct tw_eap_server_cfg cfg;
	struct tw_eap_peer_cfg pc;
	uint8_t set = n > 0 ? d[0] : 0;
	unsigned convs = 1 + set % 3;
	bool no_resync = false, faulty = false, no_ops = false, no_remove = false,
	     tainted = false;
	uint16_t limit = 0;

	memset(&db, 0, sizeof(db));
	for (size_t q = 1; q + 2 < n; q += 3) {
		if (d[q] != 255)
			continue;
		switch (d[q + 1] % 8) {
		case 0:
			db.fail_at = d[q + 2];
			faulty |= d[q + 2] != 0;
			break;
		case 1:
			db.freeze = true;
			break;
		case 2:
			/* the card asks again, and the second AUTS ends it */
			no_resync = faulty = true;
			break;
		case 4:
			/* store writes fail: the authentication stands, the
			 * peer only loses the new identities (RFC 4187 §4.1.5) */
			db.fail_store = d[q + 2];
			break;
		case 3:
			/* x % 4: the re-auth limit; x & 4: the server without
			 * an identity store; x & 8: a store that cannot
			 * remove a used re-auth id */
			limit = d[q + 2] % 4;
			no_ops = d[q + 2] & 4;
			no_remove = d[q + 2] & 8;
		}
	}
	memset(&mem, 0, sizeof(mem));
	if (tw_sub_keys_milenage(&kk, k, opc, NULL) != TW_OK ||
	    tw_subscriber_init(&sub, "001010123456789", &kk, amf) != TW_OK ||
	    tw_usim_init_from_subscriber(&u, &sub) != TW_OK)
		abort();
	/* the card has seen a higher SQN: the first challenge is out of
	 * sync and the peer answers with AUTS (TS 33.102 §6.3.5) */
	if (set & 128) {
		struct tw_subscriber ahead = sub;
		struct tw_eap_aka_vec v;
		uint8_t rnd[16] = { 0x77 }, res[16], ck[16], ik[16], auts[14];
		size_t rl = 0;

		ahead.sqn.seq_he = 40;
		if (tw_vecsrc_aka(&ahead, rnd, &v) != TW_OK ||
		    tw_usim_authenticate(&u, v.rand_, v.autn, res, &rl, ck, ik, auts) != TW_OK)
			abort();
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.network_name = (const uint8_t *)"WLAN";
	cfg.network_name_len = 4;
	cfg.enable_aka = cfg.enable_aka_prime = true;
	cfg.pseudonyms = !(set & 4);
	cfg.fast_reauth = !(set & 8);
	cfg.result_ind = set & 64;
	cfg.realm = "wlan.example";
	cfg.realm_len = 12;
	cfg.reauth_limit = limit;
	cfg.ops = no_ops ? NULL : no_remove ? &xops_keep : &xops;
	memset(&pc, 0, sizeof(pc));
	pc.imsi = "001010123456789";
	pc.imsi_len = 15;
	pc.realm = "wlan.example";
	pc.realm_len = 12;
	pc.support_aka_prime = method == TW_EAP_TYPE_AKA_PRIME;
	pc.use_pseudonym = !(set & 16);
	pc.use_reauth = !(set & 32);
	pc.result_ind = set & 64;
	pc.random = x_random;

	for (unsigned c = 0; c < convs; c++) {
		size_t a_len = 0, b_len = 0;
		int act, pact;
		bool touched = faulty || tainted, res_altered = false, resigned = false,
		     peer_signed = false;
		int s_final = 0, p_final = 0;

		if (tw_aka_server_init(&s, &cfg, method, (uint8_t)(c + 1)) != TW_OK ||
		    tw_aka_peer_init(&p, &pc, &u, &mem) != TW_OK)
			abort();
		act = tw_aka_server_start(&s, a, sizeof(a), &a_len);
		for (unsigned r = 0; r < 16; r++) {
			while (act == TW_EAP_NEED_VECTOR) {
				const struct tw_eap_vec_request *rq = tw_aka_server_vec_request(&s);
				struct tw_eap_aka_vec v;
				uint8_t rnd[16];
				int rc = TW_OK;

				for (int j = 0; j < 16; j++)
					rnd[j] = (uint8_t)(c * 64 + r * 16 + j);
				if (rq->resync && !no_resync)
					rc = tw_vecsrc_resync(&sub, rq->rand_, rq->auts);
				if (rc == TW_OK)
					rc = method == TW_EAP_TYPE_AKA_PRIME
						     ? tw_vecsrc_aka_prime(&sub, rnd, &v)
						     : tw_vecsrc_aka(&sub, rnd, &v);
				/* every other conversation through the batch call, one job */
				if (c % 2 == 0) {
					act = tw_aka_server_vector(&s, rc == TW_OK ? &v : NULL, a,
								   sizeof(a), &a_len);
				} else {
					struct tw_aka_server_vec_job j = {
						.s = &s, .v = rc == TW_OK ? &v : NULL, .out = a,
						.max = sizeof(a),
					};

					tw_aka_server_vector_many(&j, 1);
					act = j.rc;
					a_len = j.out_len;
				}
			}
			for (size_t q = 1; q + 2 < n; q += 3)
				if (d[q] == c * 16 + r && d[q + 2] != 0 && d[q + 1] < a_len) {
					a[d[q + 1]] ^= d[q + 2];
					touched = true;
				}
			/* with 64 added, signed again as the server: the
			 * peer's checks behind AT_MAC see it */
			bool resign = false;

			for (size_t q = 1; q + 2 < n; q += 3)
				if (d[q] == 64 + c * 16 + r && d[q + 2] != 0 && d[q + 1] < a_len) {
					a[d[q + 1]] ^= d[q + 2];
					resign = touched = resigned = true;
				}
			if (resign && act == TW_EAP_SEND)
				fuzz_remac(&s.mac, a, a_len, NULL, 0);
			if (act != TW_EAP_SEND) {
				s_final = act;
				if (act == TW_EAP_ACCEPT || act == TW_EAP_REJECT)
					p_final = tw_aka_peer_input(&p, a, a_len, b, sizeof(b),
								    &b_len);
				break;
			}
			pact = tw_aka_peer_input(&p, a, a_len, b, sizeof(b), &b_len);
			if (pact != TW_EAP_SEND) {
				p_final = pact;
				break;
			}
			peer_edits(&p, d, n, 128 + c * 16 + r, b, b_len, &touched, &peer_signed,
				   &res_altered);
			act = tw_aka_server_input(&s, b, b_len, a, sizeof(a), &a_len);
		}
		struct tw_eap_keys sk, pk;
		bool s_ok = tw_aka_server_keys(&s, &sk) == TW_OK,
		     p_ok = tw_aka_peer_keys(&p, &pk) == TW_OK;

		if (!touched && (s_final != TW_EAP_ACCEPT || p_final != TW_EAP_ACCEPT))
			abort();
		/* (a re-authentication request signed again by the plan has
		 * another AT_MAC, which the peer's Session-Id takes) */
		if (s_ok && p_ok &&
		    (memcmp(sk.msk, pk.msk, 64) != 0 || memcmp(sk.emsk, pk.emsk, 64) != 0 ||
		     (!resigned && (sk.session_id_len != pk.session_id_len ||
				    memcmp(sk.session_id, pk.session_id,
					   sk.session_id_len) != 0))))
			abort();
		/* what a signed alteration left in the store or the phone's
		 * memory (an identity garbled inside AT_ENCR_DATA) may fail
		 * the conversations after it */
		tainted |= resigned || peer_signed;
		if (s_final == TW_EAP_REJECT && p_final == TW_EAP_ACCEPT)
			abort();
		if (res_altered && s_final == TW_EAP_ACCEPT && !s.reauth)
			abort();
		tw_aka_server_wipe(&s);
		tw_aka_peer_wipe(&p);
	}
}

/* ---- tw_aka_server_vector_many against tw_aka_server_vector ------------- */

/* A random source that refuses 16-octet draws (a challenge's AT_IV). */
static int f_random_noiv(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	if (len == 16)
		return TW_ERR_CRYPTO;
	memset(out, 0x5a, len);
	return TW_OK;
}

enum { NJ = 40 };

/*
 * Up to NJ sessions (the first octet % NJ, plus one), each with a job
 * octet: bits 0-1 its configuration's network name (one shared by
 * pointer, a copy of it, a name of the same length that differs, one of
 * another length), bit 2 EAP-AKA instead of AKA', bit 3 the previous
 * job's session again, bit 4 a vector that cannot be used (RES of 3 or
 * 17 octets, or none with bit 5), bit 5 (without bit 4) an output below
 * TW_EAP_OUT_MIN, bits 6-7 the identity privacy: pseudonyms and re-auth
 * ids, pseudonyms only, re-auth ids only, or both with a random source
 * that refuses the challenge's IV. The first octet / NJ adds jobs at the
 * end: bit 0 one with no session, bit 1 one with no output, bit 2 the
 * first session again. Every session is driven twice, by the batch
 * call and by the single call one job after another, from the same
 * identity and vector (the random source is constant). Invariants: the
 * same rc, lengths and octets for every job, batched only for an EAP-AKA'
 * job; then each challenge is answered with the single session's keys
 * (AT_RES, AT_CHECKCODE, AT_MAC): both sessions accept, with the same MSK,
 * EMSK and Session-Id.
 */
static void batch_check(const uint8_t *d, size_t n)
{
	static struct tw_aka_server_ctx sb[NJ], ss[NJ];
	static struct tw_aka_server_vec_job job[NJ + 3];
	static struct tw_eap_aka_vec v[NJ];
	static uint8_t ob[NJ][1024], os[NJ][1024];
	static struct tw_eap_server_cfg cfg[4 * 4];
	static const uint8_t *names[4] = { (const uint8_t *)"WLAN", (const uint8_t *)"WLAN",
					   (const uint8_t *)"WLAM", (const uint8_t *)"WLAN:x" };
	size_t nj = n == 0 ? 0 : 1 + d[0] % NJ;
	uint8_t idp[40], eap[64], rsp[256];
	size_t len;

	static const struct tw_eap_identity_ops ops_noiv = {
		.pseudonym_lookup = f_notfound, .pseudonym_store = f_store_ps,
		.reauth_lookup = f_ra_notfound, .reauth_store = f_store_ra,
		.random = f_random_noiv,
	};
	size_t extra = n == 0 ? 0 : d[0] / NJ, nt;

	for (unsigned c = 0; c < 16; c++) {
		memset(&cfg[c], 0, sizeof(cfg[c]));
		cfg[c].network_name = names[c % 4];
		cfg[c].network_name_len = strlen((const char *)names[c % 4]);
		cfg[c].enable_aka = cfg[c].enable_aka_prime = true;
		cfg[c].pseudonyms = c / 4 != 2;
		cfg[c].fast_reauth = c / 4 != 1;
		cfg[c].realm = "wlan.example";
		cfg[c].realm_len = 12;
		cfg[c].ops = c / 4 == 3 ? &ops_noiv : &ops;
	}
	for (size_t i = 0; i < nj; i++) {
		uint8_t o = 1 + i < n ? d[1 + i] : (uint8_t)(i * 37);
		uint8_t method = (o & 4) ? TW_EAP_TYPE_AKA : TW_EAP_TYPE_AKA_PRIME;
		const struct tw_eap_server_cfg *c = &cfg[(o & 3) + 4 * (o >> 6)];
		size_t ol;

		job[i].s = &sb[i];
		job[i].max = (o & 0x30) == 0x20 ? TW_EAP_OUT_MIN - 1 : sizeof(ob[i]);
		job[i].out = ob[i];
		job[i].v = (o & 0x30) == 0x30 ? NULL : &v[i];
		memset(&v[i], 0x11 + (int)i, sizeof(v[i]));
		v[i].autn[6] = 0x80;
		v[i].xres_len = (o & 0x30) == 0x10 ? (i % 2 ? 3 : TW_RES_MAX_LEN + 1)
						   : 8 + (i % 3) * 4;
		if ((o & 8) && i > 0) {
			job[i].s = job[i - 1].s;
			continue;
		}
		/* the permanent identity's leading digit names the method
		 * (RFC 4187 §4.1.1.6, RFC 9048 §3) */
		len = (size_t)snprintf((char *)idp, sizeof(idp), "%c0010101234567%02u@wlan.example",
				       method == TW_EAP_TYPE_AKA ? '0' : '6', (unsigned)(i % 100));
		if (tw_eap_encode(eap, sizeof(eap), &ol, TW_EAP_RESPONSE, 3, TW_EAP_TYPE_IDENTITY,
				  idp, len) != TW_OK)
			abort();
		if (tw_aka_server_init(&sb[i], c, method, 3) != TW_OK ||
		    tw_aka_server_init(&ss[i], c, method, 3) != TW_OK ||
		    tw_aka_server_input(&sb[i], eap, ol, ob[i], sizeof(ob[i]), &len) !=
			    TW_EAP_NEED_VECTOR ||
		    tw_aka_server_input(&ss[i], eap, ol, os[i], sizeof(os[i]), &len) !=
			    TW_EAP_NEED_VECTOR)
			abort();
	}
	/* the jobs at the end */
	nt = nj;
	if (extra & 1)
		job[nt++] = (struct tw_aka_server_vec_job){ .s = NULL, .v = &v[0], .out = ob[0],
							    .max = sizeof(ob[0]) };
	if (nj > 0 && (extra & 2))
		job[nt++] = (struct tw_aka_server_vec_job){ .s = &sb[0], .v = &v[0], .out = NULL,
							    .max = sizeof(ob[0]) };
	if (nj > 0 && (extra & 4))
		job[nt++] = (struct tw_aka_server_vec_job){ .s = &sb[0], .v = &v[0], .out = ob[0],
							    .max = sizeof(ob[0]) };
	tw_aka_server_vector_many(job, nt);
	for (size_t i = 0; i < nt; i++) {
		struct tw_aka_server_ctx *t = job[i].s == NULL ? NULL : &ss[job[i].s - sb];
		uint8_t *o = i < nj ? os[i] : os[0];
		size_t ol = 0;
		int rc = tw_aka_server_vector(t, job[i].v, job[i].out == NULL ? NULL : o,
					      job[i].max, &ol);

		if (rc != job[i].rc || (rc >= 0 && (ol != job[i].out_len ||
						    memcmp(o, job[i].out, ol) != 0)))
			abort();
		if (job[i].batched && job[i].s->method != TW_EAP_TYPE_AKA_PRIME)
			abort();
	}
	/* the challenges answered with the single sessions' keys */
	for (size_t i = 0; i < nj; i++) {
		struct tw_aka_server_ctx *S = job[i].s, *t = &ss[S - sb];
		struct tw_simaka_builder b;
		struct tw_eap_keys kb, ks;
		uint8_t cc[32], out[1024];
		size_t cl, rl, ol;

		/* (a session gets one challenge, from whichever of its jobs) */
		if (job[i].rc != TW_EAP_SEND)
			continue;
		tw_simaka_build_init(&b, rsp, sizeof(rsp), TW_EAP_RESPONSE, t->eap_id, t->method,
				     TW_SIMAKA_CHALLENGE);
		tw_simaka_put_res(&b, job[i].v->xres, (uint16_t)(job[i].v->xres_len * 8));
		cl = tw_simaka_checkcode_value(&t->checkcode, cc);
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, cc, cl);
		tw_simaka_put_mac(&b);
		if (tw_simaka_finish_mac(&b, &t->mac, NULL, 0, &rl) != TW_OK)
			abort();
		if (tw_aka_server_input(S, rsp, rl, out, sizeof(out), &ol) != TW_EAP_ACCEPT ||
		    tw_aka_server_input(t, rsp, rl, out, sizeof(out), &ol) != TW_EAP_ACCEPT ||
		    tw_aka_server_keys(S, &kb) != TW_OK || tw_aka_server_keys(t, &ks) != TW_OK ||
		    memcmp(kb.msk, ks.msk, 64) != 0 || memcmp(kb.emsk, ks.emsk, 64) != 0 ||
		    kb.session_id_len != ks.session_id_len ||
		    memcmp(kb.session_id, ks.session_id, kb.session_id_len) != 0)
			abort();
	}
	for (size_t i = 0; i < nj; i++) {
		tw_aka_server_wipe(&sb[i]);
		tw_aka_server_wipe(&ss[i]);
	}
}

/* ---- the API contract, once per process ---------------------------------- */


/* A random source that fails at its fail_n-th call (every call with 0). */
static unsigned fail_n, fail_calls;

static int f_random_fail(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	if (fail_n == 0 || ++fail_calls == fail_n)
		return TW_ERR_CRYPTO;
	memset(out, 0x5a, len);
	return TW_OK;
}

static void contract(void)
{
	static const struct tw_eap_identity_ops ops_norand = {
		.pseudonym_lookup = f_found, .pseudonym_store = f_store_ps,
		.reauth_lookup = f_ra_found, .reauth_store = f_store_ra,
	};
	static const struct tw_eap_identity_ops ops_badrand = {
		.pseudonym_lookup = f_found, .pseudonym_store = f_store_ps,
		.reauth_lookup = f_ra_found, .reauth_store = f_store_ra,
		.random = f_random_fail,
	};
	static const char ra_id[] = "5reauth-id-one@wlan.example";
	static const char perm[] = "6001010123456789@wlan.example";
	struct tw_eap_server_cfg cfg, bad;
	struct tw_aka_server_ctx s;
	struct tw_eap_aka_vec v;
	struct tw_eap_keys k;
	uint8_t out[1024], pkt[64];
	size_t len = 0, pl;

	memset(&cfg, 0, sizeof(cfg));
	cfg.network_name = (const uint8_t *)"WLAN";
	cfg.network_name_len = 4;
	cfg.enable_aka = cfg.enable_aka_prime = true;
	cfg.pseudonyms = cfg.fast_reauth = true;
	cfg.realm = "wlan.example";
	cfg.realm_len = 12;
	cfg.ops = &ops;
	memset(&v, 0x11, sizeof(v));
	v.xres_len = 8;

	/* init: no context, no configuration, a method not enabled, an
	 * EAP-AKA' network name absent, empty or too long (RFC 9048 §3.1) */
	MUST(tw_aka_server_init(nul, &cfg, TW_EAP_TYPE_AKA, 1) == TW_ERR_INVAL);
	MUST(tw_aka_server_init(&s, nul, TW_EAP_TYPE_AKA, 1) == TW_ERR_INVAL);
	MUST(tw_aka_server_init(&s, &cfg, TW_EAP_TYPE_SIM, 1) == TW_ERR_INVAL);
	bad = cfg;
	bad.enable_aka = bad.enable_aka_prime = false;
	MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA, 1) == TW_ERR_INVAL);
	MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA_PRIME, 1) == TW_ERR_INVAL);
	bad = cfg;
	bad.network_name = NULL;
	MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA_PRIME, 1) == TW_ERR_INVAL);
	bad.network_name = (const uint8_t *)"WLAN";
	bad.network_name_len = 0;
	MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA_PRIME, 1) == TW_ERR_INVAL);
	bad.network_name_len = 255 * 4 - 3;
	MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA_PRIME, 1) == TW_ERR_INVAL);

	/* each call with a missing argument, in the wrong state, or with an
	 * output below TW_EAP_OUT_MIN */
	MUST(tw_aka_server_init(&s, &cfg, TW_EAP_TYPE_AKA_PRIME, 1) == TW_OK);
	MUST(tw_aka_server_start(nul, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_start(&s, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_start(&s, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_aka_server_vec_request(nul) == NULL);
	MUST(tw_aka_server_vec_request(&s) == NULL);
	MUST(tw_aka_server_vector(&s, &v, out, sizeof(out), &len) == TW_ERR_STATE);
	MUST(tw_aka_server_keys(&s, &k) == TW_ERR_STATE);
	MUST(tw_aka_server_keys(nul, &k) == TW_ERR_INVAL);
	MUST(tw_aka_server_keys(&s, nul) == TW_ERR_INVAL);
	MUST(tw_aka_server_start(&s, out, sizeof(out), &len) == TW_EAP_SEND);
	MUST(tw_aka_server_start(&s, out, sizeof(out), &len) == TW_ERR_STATE);
	MUST(tw_eap_encode(pkt, sizeof(pkt), &pl, TW_EAP_RESPONSE, 1, TW_EAP_TYPE_IDENTITY,
			   (const uint8_t *)perm, strlen(perm)) == TW_OK);
	MUST(tw_aka_server_input(nul, pkt, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_input(&s, nul, pl, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_input(&s, pkt, pl, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_input(&s, pkt, pl, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_aka_server_input(&s, pkt, pl, out, TW_EAP_OUT_MIN - 1, &len) ==
	     TW_ERR_OVERFLOW);
	MUST(tw_aka_server_input(&s, pkt, pl, out, sizeof(out), &len) ==
	     TW_EAP_NEED_VECTOR);
	MUST(tw_aka_server_vec_request(&s) != NULL);
	/* a response while the vector is awaited is out of order */
	MUST(tw_aka_server_input(&s, pkt, pl, out, sizeof(out), &len) == TW_ERR_STATE);
	MUST(tw_aka_server_vector(nul, &v, out, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_vector(&s, &v, nul, sizeof(out), &len) == TW_ERR_INVAL);
	MUST(tw_aka_server_vector(&s, &v, out, sizeof(out), nul) == TW_ERR_INVAL);
	MUST(tw_aka_server_vector(&s, &v, out, TW_EAP_OUT_MIN - 1, &len) ==
	     TW_ERR_OVERFLOW);
	/* RES longer than TS 33.102 allows: EAP-Failure */
	v.xres_len = TW_RES_MAX_LEN + 1;
	MUST(tw_aka_server_vector(&s, &v, out, sizeof(out), &len) == TW_EAP_REJECT);
	v.xres_len = 8;
	tw_aka_server_wipe(&s);
	tw_aka_server_wipe(nul);
	tw_aka_server_vector_many(nul, 3);

	/* a random source that fails or is missing: a full authentication
	 * fails when the challenge needs an IV, a re-authentication at once */
	for (int m = 0; m < 2; m++) {
		for (int which = 0; which < 3; which++) {
			bad = cfg;
			bad.ops = which == 0 ? &ops_badrand : which == 1 ? &ops_norand : NULL;
			ra_method = m ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;
			MUST(tw_aka_server_init(&s, &bad, ra_method, 1) == TW_OK);
			MUST(tw_eap_encode(pkt, sizeof(pkt), &pl, TW_EAP_RESPONSE, 1,
					   TW_EAP_TYPE_IDENTITY, (const uint8_t *)ra_id,
					   strlen(ra_id)) == TW_OK);
			int a = tw_aka_server_input(&s, pkt, pl, out, sizeof(out), &len);

			MUST(which == 2 || a == TW_EAP_REJECT);
			tw_aka_server_wipe(&s);
		}
	}
	/* the n-th draw of a challenge failing: the challenge goes out
	 * without the identity it could not mint, or (the IV) not at all */
	unsigned rejects = 0;

	bad = cfg;
	bad.ops = &ops_badrand;
	for (fail_n = 1; fail_n <= 6; fail_n++) {
		fail_calls = 0;
		MUST(tw_aka_server_init(&s, &bad, TW_EAP_TYPE_AKA_PRIME, 1) == TW_OK);
		MUST(tw_eap_encode(pkt, sizeof(pkt), &pl, TW_EAP_RESPONSE, 1,
				   TW_EAP_TYPE_IDENTITY, (const uint8_t *)perm,
				   strlen(perm)) == TW_OK);
		MUST(tw_aka_server_input(&s, pkt, pl, out, sizeof(out), &len) ==
		     TW_EAP_NEED_VECTOR);
		int a = tw_aka_server_vector(&s, &v, out, sizeof(out), &len);

		MUST(a == TW_EAP_SEND || a == TW_EAP_REJECT);
		rejects += a == TW_EAP_REJECT;
		tw_aka_server_wipe(&s);
	}
	MUST(rejects > 0);
	fail_n = 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const char ident[] = "6001010123456789@wlan.example";
	struct tw_eap_server_cfg cfg;
	struct tw_aka_server_ctx s;
	struct tw_eap_aka_vec v;
	uint8_t out[1024], pkt[64];
	size_t out_len, len;
	int a;

	if (size < 1)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.network_name = (const uint8_t *)"WLAN";
	cfg.network_name_len = 4;
	cfg.enable_aka = cfg.enable_aka_prime = true;
	cfg.pseudonyms = cfg.fast_reauth = cfg.result_ind = true;
	cfg.realm = "wlan.example";
	cfg.realm_len = 12;
	cfg.ops = &ops;
	uint8_t mode = data[0];
	uint8_t method = (mode & 1) ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;
	static bool contract_done;

	if (!contract_done) {
		contract_done = true;
		contract();
	}
	if ((mode & 0xfe) == 0xfe) {
		batch_check(data + 1, size - 1);
		return 0;
	}
	if ((mode & 0xc0) == 0xc0) {
		exchange(method, data + 1, size - 1);
		return 0;
	}
	unsigned st = (mode >> 1) & 3;
	if (st == 3)
		cfg.id_policy = TW_EAP_ID_ALWAYS_ANY;
	/* bits 3-7: the server's settings and what its store knows */
	cfg.pseudonyms = !(mode & 8);
	cfg.fast_reauth = !(mode & 16);
	cfg.result_ind = !(mode & 32);
	ra_method = method;
	if (mode & 64)
		cfg.ops = &ops_found;
	if (mode & 128) {
		cfg.reauth_limit = 3;
		cfg.ops = NULL;
	}
	memset(&v, 0x11, sizeof(v));
	v.autn[6] = 0x80;
	v.xres_len = 8;
	if (tw_aka_server_init(&s, &cfg, method, 7) != TW_OK)
		abort();
	a = TW_EAP_SEND;
	if (st == 1 && tw_aka_server_start(&s, out, sizeof(out), &out_len) != TW_EAP_SEND)
		abort();
	if (st >= 2) {
		if (tw_eap_encode(pkt, sizeof(pkt), &len, TW_EAP_RESPONSE, 7,
				  TW_EAP_TYPE_IDENTITY, (const uint8_t *)ident,
				  strlen(ident)) != TW_OK)
			abort();
		a = tw_aka_server_input(&s, pkt, len, out, sizeof(out), &out_len);
	}
	data++, size--;
	for (int round = 0; round < 6; round++) {
		if (a == TW_EAP_NEED_VECTOR) {
			a = tw_aka_server_vector(&s, &v, out, sizeof(out), &out_len);
			continue;
		}
		if (size < 2)
			break;
		size_t n = tw_load_be16(data);
		data += 2, size -= 2;
		if (n > size)
			n = size;
		a = tw_aka_server_input(&s, data, n, out, sizeof(out), &out_len);
		data += n, size -= n;
		if (a == TW_EAP_ACCEPT || out_len > sizeof(out))
			abort();
		if (a < 0 && a != TW_ERR_STATE)
			abort();
	}
	tw_aka_server_wipe(&s);
	return 0;
}
