/*
 * Tests of the local vector source (3GPP TS 33.102 V17.0.0 §6.3.2, §6.3.5,
 * Annex C, §6.8.1.2): AUTN/XRES/CK/IK for the TS 35.208 and TS 35.233 SQNs,
 * triplets against COMP128 and TS 55.205 vectors, and libosmocore as an
 * independent AuC (osmo_auth_gen_vec / osmo_auth_gen_vec_auts with its
 * ind/ind_bitlen SQN scheme) on random subscribers.
 */
#include <stdio.h>

#include "tw_test.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/sqn.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

static const uint8_t amf0[2] = { 0x80, 0x00 };

static void random_imsi(char imsi[16])
{
	uint8_t r[15];

	tw_test_random(r, sizeof(r));
	for (int i = 0; i < 15; i++)
		imsi[i] = (char)('0' + r[i] % 10);
	imsi[15] = '\0';
}

static void random_milenage(struct tw_subscriber *s, const uint8_t amf[2])
{
	struct tw_sub_keys kk;
	uint8_t k[16], opc[16];
	char imsi[16];

	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	random_imsi(imsi);
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(s, imsi, &kk, amf));
}

/* TS 35.208 §4.3: with IND of 0 bits and SEQ_HE = SQN - 1, the vector
 * source must issue exactly the test set's SQN, so AUTN = SQN ^ AK || AMF
 * || MAC-A, XRES, CK, IK are the published values. */
static void milenage_case(const struct tv_case *c)
{
	uint8_t k[16], opc[16], rand_[16], sqn[6], amf[2], ak[6], mac_a[8], autn[16];
	struct tw_sub_keys kk;
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;
	struct tw_eap_sim_triplet t;

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16 || tv_hex(c, "sqn", sqn, 6) != 6 ||
	    tv_hex(c, "amf", amf, 2) != 2 || tv_hex(c, "ak", ak, 6) != 6 ||
	    tv_hex(c, "mac_a", mac_a, 8) != 8)
		return;
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&s, "001010123456789", &kk, amf));
	CHECK_OK(tw_sqn_he_init(&s.sqn, 0, 0, 1, tw_load_be48(sqn) - 1));
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	tw_xor(autn, sqn, ak, 6);
	memcpy(autn + 6, amf, 2);
	memcpy(autn + 8, mac_a, 8);
	CHECK_MEM(v.autn, autn, 16);
	CHECK_MEM(v.rand_, rand_, 16);
	CHECK(v.xres_len == 8);
	TV_EXPECT(c, "res", v.xres, v.xres_len);
	TV_EXPECT(c, "ck", v.ck, 16);
	TV_EXPECT(c, "ik", v.ik, 16);
	CHECK(s.sqn.seq_he == tw_load_be48(sqn));
	/* The triplet of a USIM subscriber uses no SQN. */
	CHECK_OK(tw_vecsrc_sim(&s, rand_, &t));
	CHECK(s.sqn.seq_he == tw_load_be48(sqn));
}

/* TS 35.233: TUAK subscribers with AKA-compatible sizes (MAC 64, CK/IK
 * 128 bits); the other sets must be refused (TW_ERR_UNSUPPORTED). */
static void tuak_case(const struct tv_case *c)
{
	struct tw_tuak_params p;
	uint8_t rand_[16], sqn[6], amf[2], ak[6], mac_a[32], res[32], ck[32], ik[32], autn[16];
	size_t mac_len, res_len, ck_len, ik_len, k_len;
	struct tw_sub_keys kk;
	struct tw_subscriber s;
	struct tw_eap_aka_vec v;

	memset(&p, 0, sizeof(p));
	k_len = tv_hex(c, "k", p.k, 32);
	if (tv_hex(c, "topc", p.topc, 32) != 32 || tv_hex(c, "rand", rand_, 16) != 16 ||
	    tv_hex(c, "sqn", sqn, 6) != 6 || tv_hex(c, "amf", amf, 2) != 2 ||
	    tv_hex(c, "ak", ak, 6) != 6)
		return;
	mac_len = tv_hex(c, "mac_a", mac_a, 32);
	res_len = tv_hex(c, "res", res, 32);
	ck_len = tv_hex(c, "ck", ck, 32);
	ik_len = tv_hex(c, "ik", ik, 32);
	p.k_len = (uint8_t)k_len;
	p.mac_bits = (uint16_t)(mac_len * 8);
	p.res_bits = (uint16_t)(res_len * 8);
	p.ck_bits = (uint16_t)(ck_len * 8);
	p.ik_bits = (uint16_t)(ik_len * 8);
	p.iterations = (uint16_t)tv_int(c, "iterations", 1);
	if (mac_len != 8 || ck_len != 16 || ik_len != 16 || res_len > 16) {
		CHECK_ERR(tw_sub_keys_tuak(&kk, &p), TW_ERR_UNSUPPORTED);
		return;
	}
	CHECK_OK(tw_sub_keys_tuak(&kk, &p));
	CHECK_OK(tw_subscriber_init(&s, "001010123456789", &kk, amf));
	CHECK_OK(tw_sqn_he_init(&s.sqn, 0, 0, 1, tw_load_be48(sqn) - 1));
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	tw_xor(autn, sqn, ak, 6);
	memcpy(autn + 6, amf, 2);
	memcpy(autn + 8, mac_a, 8);
	CHECK_MEM(v.autn, autn, 16);
	CHECK(v.xres_len == res_len);
	TV_EXPECT(c, "res", v.xres, v.xres_len);
	TV_EXPECT(c, "ck", v.ck, 16);
	TV_EXPECT(c, "ik", v.ik, 16);
}

static void comp128_case(const struct tv_case *c, unsigned version)
{
	uint8_t ki[16], rand_[16];
	struct tw_sub_keys kk;
	struct tw_subscriber s;
	struct tw_eap_sim_triplet t;
	struct tw_eap_aka_vec v;

	if (tv_hex(c, "ki", ki, 16) != 16 || tv_hex(c, "rand", rand_, 16) != 16)
		return;
	CHECK_OK(tw_sub_keys_comp128(&kk, version, ki));
	CHECK_OK(tw_subscriber_init(&s, "001010000000001", &kk, amf0));
	CHECK_OK(tw_vecsrc_sim(&s, rand_, &t));
	CHECK_MEM(t.rand_, rand_, 16);
	TV_EXPECT(c, "sres", t.sres, 4);
	TV_EXPECT(c, "kc", t.kc, 8);
	/* A SIM-only subscriber has no AKA. */
	CHECK_ERR(tw_vecsrc_aka(&s, rand_, &v), TW_ERR_UNSUPPORTED);
	CHECK(tw_ct_is_zero(&v, sizeof(v)));
}

static void comp128v1_case(const struct tv_case *c) { comp128_case(c, 1); }
static void comp128v2_case(const struct tv_case *c) { comp128_case(c, 2); }
static void comp128v3_case(const struct tv_case *c) { comp128_case(c, 3); }

/* TS 55.205: SRES/Kc of a Milenage USIM in a GSM context. */
static void gsm_conv_case(const struct tv_case *c)
{
	uint8_t k[16], opc[16], rand_[16];
	struct tw_sub_keys kk;
	struct tw_subscriber s;
	struct tw_eap_sim_triplet t;

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16)
		return;
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&s, "001010123456789", &kk, amf0));
	CHECK_OK(tw_vecsrc_sim(&s, rand_, &t));
	TV_EXPECT(c, "sres", t.sres, 4);
	TV_EXPECT(c, "kc", t.kc, 8);
}

static void test_setup_errors(void)
{
	struct tw_sub_keys kk;
	struct tw_subscriber s;
	struct tw_tuak_params p;
	struct tw_milenage_consts bad = tw_milenage_default_consts;
	uint8_t k[16] = { 1 }, opc[16] = { 2 };

	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&s, "00101", &kk, amf0));
	CHECK(s.imsi_len == 5 && strcmp(s.imsi, "00101") == 0);
	CHECK_ERR(tw_subscriber_init(&s, "0010", &kk, amf0), TW_ERR_INVAL);
	CHECK_ERR(tw_subscriber_init(&s, "0010101234567890", &kk, amf0), TW_ERR_INVAL);
	CHECK_ERR(tw_subscriber_init(&s, "00101a", &kk, amf0), TW_ERR_INVAL);
	CHECK_ERR(tw_subscriber_init(&s, NULL, &kk, amf0), TW_ERR_INVAL);
	bad.r[2] = 128;
	CHECK_ERR(tw_sub_keys_milenage(&kk, k, opc, &bad), TW_ERR_RANGE);
	CHECK_ERR(tw_sub_keys_comp128(&kk, 4, k), TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_sub_keys_comp128(&kk, 0, k), TW_ERR_UNSUPPORTED);
	/* A key set whose two algorithm fields disagree is refused. */
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	kk.alg = TW_SUB_TUAK;
	CHECK_ERR(tw_subscriber_init(&s, "00101", &kk, amf0), TW_ERR_INVAL);

	memset(&p, 0, sizeof(p));
	p.k_len = 16;
	p.mac_bits = 64;
	p.res_bits = 256; /* TS 35.231 allows it, AKA cannot carry it */
	p.ck_bits = 128;
	p.ik_bits = 128;
	p.iterations = 1;
	CHECK_ERR(tw_sub_keys_tuak(&kk, &p), TW_ERR_UNSUPPORTED);
	p.res_bits = 64;
	p.mac_bits = 128;
	CHECK_ERR(tw_sub_keys_tuak(&kk, &p), TW_ERR_UNSUPPORTED);
	p.mac_bits = 64;
	p.ck_bits = 256;
	CHECK_ERR(tw_sub_keys_tuak(&kk, &p), TW_ERR_UNSUPPORTED);
	p.ck_bits = 128;
	p.iterations = 0;
	CHECK_ERR(tw_sub_keys_tuak(&kk, &p), TW_ERR_RANGE);
	p.iterations = 1;
	CHECK_OK(tw_sub_keys_tuak(&kk, &p));
}

/* A SEQ that would pass its maximum is an error; nothing changes. */
static void test_exhaustion(void)
{
	struct tw_subscriber s, before;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16];

	tw_test_random(rand_, 16);
	random_milenage(&s, amf0);
	CHECK_OK(tw_sqn_he_init(&s.sqn, 5, 0, 1, ((uint64_t)1 << 43) - 2));
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	CHECK(s.sqn.seq_he == ((uint64_t)1 << 43) - 1);
	before = s;
	CHECK_ERR(tw_vecsrc_aka(&s, rand_, &v), TW_ERR_RANGE);
	CHECK(tw_ct_is_zero(&v, sizeof(v)));
	CHECK_MEM(&s, &before, sizeof(s));
	CHECK_ERR(tw_vecsrc_aka_prime(&s, rand_, &v), TW_ERR_RANGE);
	CHECK_MEM(&s, &before, sizeof(s));
}

/* tw_vecsrc_aka_prime sets the separation bit, tw_vecsrc_aka keeps the
 * configured AMF; both verify at the USIM (the bit is inside MAC-A). */
static void test_separation_bit(void)
{
	static const uint8_t amf_plain[2] = { 0x12, 0x34 };
	struct tw_subscriber s;
	struct tw_usim u;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16], res[16], ck[16], ik[16], auts[14];
	size_t res_len;

	random_milenage(&s, amf_plain);
	CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
	tw_test_random(rand_, 16);
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	CHECK(v.autn[6] == 0x12 && v.autn[7] == 0x34);
	CHECK(!tw_usim_autn_separation_bit(v.autn));
	CHECK_OK(tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik, auts));
	CHECK_OK(tw_vecsrc_aka_prime(&s, rand_, &v));
	CHECK(v.autn[6] == 0x92 && v.autn[7] == 0x34);
	CHECK(tw_usim_autn_separation_bit(v.autn));
	CHECK_OK(tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik, auts));
	CHECK(res_len == 8 && tw_ct_eq(res, v.xres, 8));
}

/* A wrong MAC-S leaves SEQ_HE untouched (§6.3.5). */
static void test_resync_bad_mac(void)
{
	struct tw_subscriber s, before;
	struct tw_usim u;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16], res[16], ck[16], ik[16], auts[14];
	size_t res_len;
	bool all = true;

	random_milenage(&s, amf0);
	CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
	tw_test_random(rand_, 16);
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	CHECK_OK(tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik, auts));
	/* Replay: the USIM answers with AUTS. */
	CHECK_ERR(tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik, auts),
		  TW_ERR_SYNC);
	before = s;
	for (unsigned i = 0; i < 14 * 8; i++) {
		auts[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
		all &= tw_vecsrc_resync(&s, v.rand_, auts) == TW_ERR_AUTH;
		all &= memcmp(&s, &before, sizeof(s)) == 0;
		auts[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
	}
	CHECK(all);
	/* The wrong RAND is a wrong MAC-S too. */
	rand_[15] ^= 1;
	CHECK_ERR(tw_vecsrc_resync(&s, rand_, auts), TW_ERR_AUTH);
	CHECK_MEM(&s, &before, sizeof(s));
	CHECK_OK(tw_vecsrc_resync(&s, v.rand_, auts));
}

#if defined(TW_HAVE_OSMO)
static void osmo_milenage(struct osmo_sub_auth_data *aud, const struct tw_subscriber *s,
			  unsigned ind_bitlen, unsigned ind, uint64_t prev_sqn)
{
	memset(aud, 0, sizeof(*aud));
	aud->type = OSMO_AUTH_TYPE_UMTS;
	aud->algo = OSMO_AUTH_ALG_MILENAGE;
	memcpy(aud->u.umts.k, s->keys.aka.u.milenage.k, 16);
	memcpy(aud->u.umts.opc, s->keys.aka.u.milenage.opc, 16);
	memcpy(aud->u.umts.amf, s->amf, 2);
	aud->u.umts.opc_is_op = 0;
	aud->u.umts.sqn = prev_sqn;
	aud->u.umts.ind_bitlen = ind_bitlen;
	aud->u.umts.ind = ind;
}

/*
 * libosmocore as an independent AuC: for random subscribers, SEQ_HE and IND
 * slots, osmo_auth_gen_vec must issue the same AUTN, RES, CK, IK and SRES/Kc
 * (c2/c3); after a USIM of ours answers a replay with AUTS,
 * osmo_auth_gen_vec_auts (its own MAC-S check, SQN_MS recovery and reset)
 * must land on the same next SQN as tw_vecsrc_resync + tw_vecsrc_aka.
 */
static void test_osmo_aka(void)
{
	bool all = true;
	int n = 0;

	for (int i = 0; i < 300; i++) {
		struct tw_subscriber s;
		struct tw_usim u;
		struct tw_eap_aka_vec v, v2;
		struct tw_eap_sim_triplet t;
		struct osmo_sub_auth_data aud;
		struct osmo_auth_vector ov;
		uint8_t rand_[16], rand2[16], res[16], ck[16], ik[16], auts[14], amf[2], sqn_ms[6];
		size_t res_len;
		uint32_t r = tw_test_random_u32();
		unsigned ind_bits = r % 7, slots = 1u << ind_bits;
		unsigned first = (r >> 3) % slots, count = 1 + (r >> 9) % (slots - first);
		uint64_t seq = tw_test_random_u32() % 100000;

		tw_test_random(amf, 2);
		random_milenage(&s, amf);
		CHECK_OK(tw_sqn_he_init(&s.sqn, ind_bits, first, count, seq));
		CHECK_OK(tw_usim_init_from_subscriber(&u, &s));

		for (unsigned j = 0; j < count + 1; j++) {
			unsigned ind = first + (j % count);

			tw_test_random(rand_, 16);
			/* osmo's "previous SQN": SEQ_HE in any slot. */
			osmo_milenage(&aud, &s, ind_bits, ind, s.sqn.seq_he << ind_bits);
			all &= osmo_auth_gen_vec(&ov, &aud, rand_) == 0;
			all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
			all &= memcmp(ov.autn, v.autn, 16) == 0 && ov.res_len == v.xres_len &&
			       memcmp(ov.res, v.xres, v.xres_len) == 0 &&
			       memcmp(ov.ck, v.ck, 16) == 0 && memcmp(ov.ik, v.ik, 16) == 0;
			all &= aud.u.umts.sqn == (s.sqn.seq_he << ind_bits | ind);
			all &= tw_vecsrc_sim(&s, rand_, &t) == TW_OK &&
			       memcmp(t.sres, ov.sres, 4) == 0 && memcmp(t.kc, ov.kc, 8) == 0;
			all &= tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik,
						    auts) == TW_OK;
			n++;
		}
		/* Replay the last vector: AUTS from our USIM. */
		all &= tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik, auts) ==
		       TW_ERR_SYNC;
		tw_sqn_ms_get(&u.sqn, sqn_ms);
		tw_test_random(rand2, 16);
		osmo_milenage(&aud, &s, ind_bits, first + s.sqn.ind_next, tw_test_random_u32());
		all &= osmo_auth_gen_vec_auts(&ov, &aud, auts, v.rand_, rand2) == 0;
		all &= aud.u.umts.sqn_ms == tw_load_be48(sqn_ms);
		all &= tw_vecsrc_resync(&s, v.rand_, auts) == TW_OK;
		all &= tw_vecsrc_aka(&s, rand2, &v2) == TW_OK;
		all &= memcmp(ov.autn, v2.autn, 16) == 0;
		all &= aud.u.umts.sqn == (s.sqn.seq_he << ind_bits | (aud.u.umts.ind));
		/* A flipped MAC-S bit: libosmocore refuses it too. */
		auts[13] ^= 1;
		osmo_milenage(&aud, &s, ind_bits, first, 0);
		all &= osmo_auth_gen_vec_auts(&ov, &aud, auts, v.rand_, rand2) != 0;
		all &= tw_vecsrc_resync(&s, v.rand_, auts) == TW_ERR_AUTH;
		/* The new vector is fresh at the USIM. */
		all &= tw_usim_authenticate(&u, v2.rand_, v2.autn, res, &res_len, ck, ik, auts) ==
		       TW_OK;
		all &= res_len == v2.xres_len && memcmp(res, v2.xres, res_len) == 0;
	}
	CHECK(all);
	CHECK(n > 300);
}

/* COMP128 v1/v2/v3 triplets against libosmocore on random Ki/RAND. */
static void test_osmo_comp128(void)
{
	static const enum osmo_auth_algo algs[3] = { OSMO_AUTH_ALG_COMP128v1,
						     OSMO_AUTH_ALG_COMP128v2,
						     OSMO_AUTH_ALG_COMP128v3 };
	bool all = true;

	for (int i = 0; i < 600; i++) {
		unsigned ver = 1 + (unsigned)i % 3;
		struct osmo_sub_auth_data aud;
		struct osmo_auth_vector ov;
		struct tw_sub_keys kk;
		struct tw_subscriber s;
		struct tw_eap_sim_triplet t;
		uint8_t ki[16], rand_[16];

		tw_test_random(ki, 16);
		tw_test_random(rand_, 16);
		memset(&aud, 0, sizeof(aud));
		aud.type = OSMO_AUTH_TYPE_GSM;
		aud.algo = algs[ver - 1];
		memcpy(aud.u.gsm.ki, ki, 16);
		all &= osmo_auth_gen_vec(&ov, &aud, rand_) == 0;
		all &= tw_sub_keys_comp128(&kk, ver, ki) == TW_OK;
		all &= tw_subscriber_init(&s, "262420000000001", &kk, amf0) == TW_OK;
		all &= tw_vecsrc_sim(&s, rand_, &t) == TW_OK;
		all &= memcmp(t.sres, ov.sres, 4) == 0 && memcmp(t.kc, ov.kc, 8) == 0;

		/* the n triplets of one authentication at once (COMP128 v1
		 * side by side with AVX-512 VBMI), each against libosmocore */
		uint8_t rands[3][16];
		struct tw_eap_sim_triplet tm[3];
		unsigned n = 1 + (unsigned)(i / 3) % 3;

		tw_test_random(rands, sizeof(rands));
		all &= tw_vecsrc_sim_many(&s, (const uint8_t(*)[16])rands, n, tm) == TW_OK;
		for (unsigned k = 0; k < n; k++) {
			all &= osmo_auth_gen_vec(&ov, &aud, rands[k]) == 0;
			all &= memcmp(tm[k].rand_, rands[k], 16) == 0 &&
			       memcmp(tm[k].sres, ov.sres, 4) == 0 && memcmp(tm[k].kc, ov.kc, 8) == 0;
		}
	}
	CHECK(all);
}
#endif

/* tw_vecsrc_sim_many: as tw_vecsrc_sim per RAND for USIM (c2/c3) and
 * COMP128 v1/v2/v3 subscribers, 1..3 RANDs; and its argument checks. */
static void test_sim_many(void)
{
	struct tw_subscriber s;
	struct tw_sub_keys kk;
	struct tw_eap_sim_triplet t, tm[4];
	uint8_t rands[4][16], ki[16], amf[2] = { 0x80, 0x00 };
	bool same = true;

	for (unsigned alg = 0; alg <= 3; alg++) {
		for (unsigned n = 1; n <= 3; n++) {
			if (alg == 0) {
				random_milenage(&s, amf);
			} else {
				tw_test_random(ki, sizeof(ki));
				CHECK_OK(tw_sub_keys_comp128(&kk, alg, ki));
				CHECK_OK(tw_subscriber_init(&s, "262420000000001", &kk, amf));
			}
			tw_test_random(rands, sizeof(rands));
			memset(tm, 0x5a, sizeof(tm));
			CHECK_OK(tw_vecsrc_sim_many(&s, (const uint8_t(*)[16])rands, n, tm));
			for (unsigned k = 0; k < n; k++) {
				CHECK_OK(tw_vecsrc_sim(&s, rands[k], &t));
				same &= memcmp(&t, &tm[k], sizeof(t)) == 0;
			}
			same &= tm[n].sres[0] == 0x5a; /* nothing past n */
		}
	}
	CHECK(same);
	CHECK_ERR(tw_vecsrc_sim_many(&s, (const uint8_t(*)[16])rands, 0, tm), TW_ERR_INVAL);
	CHECK_ERR(tw_vecsrc_sim_many(&s, (const uint8_t(*)[16])rands, 4, tm), TW_ERR_INVAL);
	CHECK_ERR(tw_vecsrc_sim_many(NULL, (const uint8_t(*)[16])rands, 2, tm), TW_ERR_INVAL);
	CHECK(tm[0].sres[0] == 0 && tm[1].kc[7] == 0); /* zeroed */
	CHECK_ERR(tw_vecsrc_sim_many(&s, NULL, 2, tm), TW_ERR_INVAL);
	CHECK_ERR(tw_vecsrc_sim_many(&s, (const uint8_t(*)[16])rands, 2, NULL), TW_ERR_INVAL);
}

void test_main(void)
{
	CHECK(tv_run_file("milenage.vec", milenage_case) >= 20);
	CHECK(tv_run_file("tuak.vec", tuak_case) >= 6);
	CHECK(tv_run_file("comp128v1.vec", comp128v1_case) > 0);
	CHECK(tv_run_file("comp128v2.vec", comp128v2_case) > 0);
	CHECK(tv_run_file("comp128v3.vec", comp128v3_case) > 0);
	CHECK(tv_run_file("gsm_conv.vec", gsm_conv_case) > 0);
	test_setup_errors();
	test_exhaustion();
	test_separation_bit();
	test_resync_bad_mac();
	test_sim_many();
#if defined(TW_HAVE_OSMO)
	test_osmo_aka();
	test_osmo_comp128();
#else
	tw_note("libosmocore not available: AuC/COMP128 cross-checks skipped");
#endif
}
