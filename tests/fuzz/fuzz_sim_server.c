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
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_sim.h"

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

static int x_ra_remove(void *arg, const uint8_t *id, size_t len)
{
	(void)arg;
	if (len == db.ra_len && memcmp(id, db.ra, len) == 0)
		db.ra_len = 0;
	return TW_OK;
}

/*
 * Conversations between twag's EAP-SIM peer and server (RFC 4186), up to
 * three in a row with the phone's identity memory and the store kept, so
 * pseudonyms and fast re-authentication are used; triplets from the same
 * COMP128 key as the card (mode bits 4-5 pick the version, bit 1 result
 * indications, bit 3 AT_FULLAUTH_ID_REQ first, bit 7 identities the store
 * mints itself). The plan (after the mode octet): one octet of settings
 * (conversations, privacy and re-authentication on either side, two or
 * three triplets), then (round, offset, xor) triples that alter the
 * server's packet in flight at that round (16 * conversation + round). Invariants: an untouched conversation ends with both sides
 * accepting and holding the same MSK, EMSK and Session-Id; whatever is
 * altered, when both sides accept they hold the same keys, and no side
 * accepts after the other rejected.
 */
static void exchange(uint8_t mode, const uint8_t *d, size_t n)
{
	static const struct tw_eap_identity_ops ops = {
		.pseudonym_lookup = x_ps_lookup, .pseudonym_store = x_ps_store,
		.reauth_lookup = x_ra_lookup, .reauth_store = x_ra_store,
		.reauth_remove = x_ra_remove, .random = x_random,
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
	unsigned convs = 1 + set % 3;

	memset(&db, 0, sizeof(db));
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
	cfg.ops = &ops;
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
		bool touched = false, s_done = false, p_done = false;
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
			act = tw_eap_sim_server_input(&s, b, b_len, a, sizeof(a), &a_len);
			if (act == TW_EAP_NEED_VECTOR) {
				const struct tw_eap_vec_request *vr = tw_eap_sim_server_vec_request(&s);
				struct tw_eap_sim_triplet t[3];

				if (vr == NULL || vr->count != opts.n_triplets)
					abort();
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
		if (sk != NULL && pk != NULL &&
		    (memcmp(sk->msk, pk->msk, 64) != 0 || memcmp(sk->emsk, pk->emsk, 64) != 0 ||
		     sk->session_id_len != pk->session_id_len ||
		     memcmp(sk->session_id, pk->session_id, sk->session_id_len) != 0))
			abort();
		if ((s_final == TW_EAP_REJECT && p_final == TW_EAP_ACCEPT))
			abort();
		tw_eap_sim_server_wipe(&s);
		tw_eap_sim_peer_wipe(&p);
	}
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
