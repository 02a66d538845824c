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
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

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
 * server's packet in flight (16 * conversation + round). Invariants: an
 * untouched conversation ends with both sides accepting and holding the
 * same MSK, EMSK and Session-Id; an altered one never leaves the two sides
 * accepting with different keys, nor the peer accepting after the server
 * rejected.
 */
static void exchange(uint8_t method, const uint8_t *d, size_t n)
{
	static const struct tw_eap_identity_ops xops = {
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

	memset(&db, 0, sizeof(db));
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
	cfg.ops = &xops;
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
		bool touched = false;
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
				if (rq->resync)
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
			act = tw_aka_server_input(&s, b, b_len, a, sizeof(a), &a_len);
		}
		struct tw_eap_keys sk, pk;
		bool s_ok = tw_aka_server_keys(&s, &sk) == TW_OK,
		     p_ok = tw_aka_peer_keys(&p, &pk) == TW_OK;

		if (!touched && (s_final != TW_EAP_ACCEPT || p_final != TW_EAP_ACCEPT))
			abort();
		if (s_ok && p_ok &&
		    (memcmp(sk.msk, pk.msk, 64) != 0 || memcmp(sk.emsk, pk.emsk, 64) != 0 ||
		     sk.session_id_len != pk.session_id_len ||
		     memcmp(sk.session_id, pk.session_id, sk.session_id_len) != 0))
			abort();
		if (s_final == TW_EAP_REJECT && p_final == TW_EAP_ACCEPT)
			abort();
		tw_aka_server_wipe(&s);
		tw_aka_peer_wipe(&p);
	}
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
