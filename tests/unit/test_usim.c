/*
 * Tests of the simulated USIM/SIM (3GPP TS 33.102 V17.0.0 §6.3.3, Annex
 * C.2, §6.8.1.2): TS 35.208/35.233 vectors accepted once and answered with
 * an AUTS carrying the published AK* on replay; every flipped AUTN bit
 * refused with nothing changed; HE<->USIM runs for thousands of random
 * Milenage and TUAK subscribers (fresh, replay, out of order within the IND
 * slots, Δ violation, resync, success); libosmocore as an independent AuC
 * checking our AUTS and our GSM-context SRES/Kc.
 */
#include <stdio.h>

#include "tw_test.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/sqn.h"
#include "twag/tuak.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif


/* A published vector at a USIM that last accepted SEQ = SQN - 1 (IND of 0
 * bits): accepted with the published RES/CK/IK, then refused on replay
 * with AUTS = SQN_MS ^ AK* || MAC-S where SQN_MS = SQN and AK* is the
 * published f5*. */
static void check_published(const struct tv_case *c, const struct tw_sub_keys *kk,
			    const uint8_t rand_[16], const uint8_t sqn[6], const uint8_t amf[2],
			    const uint8_t ak[6], const uint8_t mac_a[8], size_t res_want)
{
	struct tw_usim u, before;
	uint8_t autn[16], res[16], ck[16], ik[16], auts[14], ak_star[6], got[6];
	size_t res_len = 99;

	CHECK_OK(tw_usim_init(&u, "001010123456789", kk));
	CHECK_OK(tw_sqn_ms_init(&u.sqn, 0, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE));
	u.sqn.seq_ms[0] = tw_load_be48(sqn) - 1;
	tw_xor(autn, sqn, ak, 6);
	memcpy(autn + 6, amf, 2);
	memcpy(autn + 8, mac_a, 8);
	CHECK_OK(tw_usim_authenticate(&u, rand_, autn, res, &res_len, ck, ik, auts));
	CHECK(res_len == res_want);
	TV_EXPECT(c, "res", res, res_len);
	TV_EXPECT(c, "ck", ck, 16);
	TV_EXPECT(c, "ik", ik, 16);
	CHECK(u.sqn.seq_ms[0] == tw_load_be48(sqn));
	before = u;
	CHECK_ERR(tw_usim_authenticate(&u, rand_, autn, res, &res_len, ck, ik, auts), TW_ERR_SYNC);
	CHECK_MEM(&u, &before, sizeof(u));
	CHECK(res_len == 0 && tw_ct_is_zero(res, 16) && tw_ct_is_zero(ck, 16));
	if (tv_hex(c, "ak_star", ak_star, 6) == 6) {
		tw_xor(got, auts, ak_star, 6);
		CHECK_MEM(got, sqn, 6);
	}
}

static void milenage_case(const struct tv_case *c)
{
	uint8_t k[16], opc[16], rand_[16], sqn[6], amf[2], ak[6], mac_a[8];
	struct tw_sub_keys kk;

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16 || tv_hex(c, "sqn", sqn, 6) != 6 ||
	    tv_hex(c, "amf", amf, 2) != 2 || tv_hex(c, "ak", ak, 6) != 6 ||
	    tv_hex(c, "mac_a", mac_a, 8) != 8)
		return;
	CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	check_published(c, &kk, rand_, sqn, amf, ak, mac_a, 8);
}

static void tuak_case(const struct tv_case *c)
{
	struct tw_tuak_params p;
	uint8_t rand_[16], sqn[6], amf[2], ak[6], buf[32];
	uint8_t mac_a[32];
	size_t mac_len, res_len, ck_len, ik_len;
	struct tw_sub_keys kk;

	memset(&p, 0, sizeof(p));
	p.k_len = (uint8_t)tv_hex(c, "k", p.k, 32);
	if (tv_hex(c, "topc", p.topc, 32) != 32 || tv_hex(c, "rand", rand_, 16) != 16 ||
	    tv_hex(c, "sqn", sqn, 6) != 6 || tv_hex(c, "amf", amf, 2) != 2 ||
	    tv_hex(c, "ak", ak, 6) != 6)
		return;
	mac_len = tv_hex(c, "mac_a", mac_a, 32);
	res_len = tv_hex(c, "res", buf, 32);
	ck_len = tv_hex(c, "ck", buf, 32);
	ik_len = tv_hex(c, "ik", buf, 32);
	if (mac_len != 8 || ck_len != 16 || ik_len != 16 || res_len > 16)
		return; /* not AKA-sized: test_vecsrc checks the refusal */
	p.mac_bits = 64;
	p.res_bits = (uint16_t)(res_len * 8);
	p.ck_bits = 128;
	p.ik_bits = 128;
	p.iterations = (uint16_t)tv_int(c, "iterations", 1);
	CHECK_OK(tw_sub_keys_tuak(&kk, &p));
	check_published(c, &kk, rand_, sqn, amf, ak, mac_a, res_len);
}

static void random_sub(struct tw_subscriber *s, bool tuak)
{
	struct tw_sub_keys kk;
	uint8_t k[16], opc[16], amf[2];
	char imsi[16];
	uint8_t r[15];

	tw_test_random(r, sizeof(r));
	for (int i = 0; i < 15; i++)
		imsi[i] = (char)('0' + r[i] % 10);
	imsi[15] = '\0';
	tw_test_random(amf, 2);
	if (tuak) {
		struct tw_tuak_params p;

		memset(&p, 0, sizeof(p));
		p.k_len = (tw_test_random_u32() & 1) ? 32 : 16;
		tw_test_random(p.k, p.k_len);
		tw_test_random(p.topc, 32);
		p.mac_bits = 64;
		p.res_bits = (uint16_t)(32u << (tw_test_random_u32() % 3)); /* 32, 64, 128 */
		p.ck_bits = 128;
		p.ik_bits = 128;
		p.iterations = 1;
		CHECK_OK(tw_sub_keys_tuak(&kk, &p));
	} else {
		tw_test_random(k, 16);
		tw_test_random(opc, 16);
		CHECK_OK(tw_sub_keys_milenage(&kk, k, opc, NULL));
	}
	CHECK_OK(tw_subscriber_init(s, imsi, &kk, amf));
}

static int run(struct tw_usim *u, const struct tw_eap_aka_vec *v, uint8_t auts[14])
{
	uint8_t res[16], ck[16], ik[16];
	size_t res_len;
	int rc;

	rc = tw_usim_authenticate(u, v->rand_, v->autn, res, &res_len, ck, ik, auts);
	if (rc == TW_OK && (res_len != v->xres_len || memcmp(res, v->xres, res_len) != 0 ||
			    memcmp(ck, v->ck, 16) != 0 || memcmp(ik, v->ik, 16) != 0))
		return TW_ERR_CRYPTO; /* accepted, but the keys disagree */
	return rc;
}

/*
 * The HE<->USIM interplay for random subscribers: a batch of vectors (one
 * per IND slot of the node) is accepted in any order, each exactly once; a
 * replay yields AUTS, the HE resyncs, the next vector passes; an HE that
 * jumped beyond Δ is pulled back by one resync.
 */
static void test_interplay(void)
{
	bool all = true;
	int subs = 0;

	for (int i = 0; i < 2000; i++) {
		struct tw_subscriber s;
		struct tw_usim u;
		struct tw_eap_aka_vec batch[TW_SQN_MS_SLOTS_MAX], v;
		uint8_t rand_[16], auts[14];
		uint32_t r = tw_test_random_u32();
		unsigned ind_bits = 1 + r % 6, slots = 1u << ind_bits;
		unsigned first = (r >> 3) % slots, count = 1 + (r >> 9) % (slots - first);

		if (count > 8)
			count = 8; /* keeps TUAK runs short; slots still vary */
		random_sub(&s, i % 8 == 0);
		all &= tw_sqn_he_init(&s.sqn, ind_bits, first, count, 0) == TW_OK;
		all &= tw_usim_init_from_subscriber(&u, &s) == TW_OK;

		for (unsigned j = 0; j < count; j++) {
			tw_test_random(rand_, 16);
			all &= tw_vecsrc_aka(&s, rand_, &batch[j]) == TW_OK;
		}
		/* Out of order within the slots: reverse order. */
		for (unsigned j = count; j-- > 0;)
			all &= run(&u, &batch[j], auts) == TW_OK;
		/* Each exactly once: every replay is a sync failure whose AUTS
		 * the HE accepts. */
		for (unsigned j = 0; j < count; j++) {
			struct tw_subscriber saved = s;

			all &= run(&u, &batch[j], auts) == TW_ERR_SYNC;
			all &= tw_vecsrc_resync(&s, batch[j].rand_, auts) == TW_OK;
			all &= s.sqn.seq_he == count; /* SEQ_MSmax */
			s = saved;
		}
		/* Resync, then success. */
		all &= tw_vecsrc_resync(&s, batch[count - 1].rand_, auts) == TW_OK;
		tw_test_random(rand_, 16);
		all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
		all &= run(&u, &v, auts) == TW_OK;

		/* Δ violation (C.2.2): the HE jumps ahead by more than Δ. */
		s.sqn.seq_he += TW_SQN_DELTA_DEFAULT; /* next SEQ = SEQ_MSmax + Δ + 1 */
		tw_test_random(rand_, 16);
		all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
		all &= run(&u, &v, auts) == TW_ERR_SYNC;
		all &= tw_vecsrc_resync(&s, v.rand_, auts) == TW_OK;
		all &= s.sqn.seq_he == count + 1;
		tw_test_random(rand_, 16);
		all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
		all &= run(&u, &v, auts) == TW_OK;
		/* Within Δ it would have passed: jump by exactly Δ - 1 (the
		 * next vector adds one more). */
		s.sqn.seq_he += TW_SQN_DELTA_DEFAULT - 1;
		all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
		all &= run(&u, &v, auts) == TW_OK;
		if (!all) {
			tw_note("interplay %d: ind_bits %u slots %u+%u tuak %d", i, ind_bits, first,
				count, i % 8 == 0);
			break;
		}
		subs++;
	}
	CHECK(all);
	CHECK(subs == 2000);
}

/* C.2.3: with L set, a vector older than SEQ_MSmax - L in another slot is
 * refused with AUTS; resync recovers. */
static void test_age_limit(void)
{
	struct tw_subscriber s;
	struct tw_usim u;
	struct tw_eap_aka_vec old, v;
	uint8_t rand_[16], auts[14];

	random_sub(&s, false);
	CHECK_OK(tw_sqn_he_init(&s.sqn, 5, 0, 2, 0));
	CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
	CHECK_OK(tw_sqn_ms_init(&u.sqn, 5, TW_SQN_DELTA_DEFAULT, 3));
	tw_test_random(rand_, 16);
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &old)); /* SEQ 1, slot 0 */
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));   /* SEQ 2, slot 1 */
	CHECK_OK(run(&u, &v, auts));
	s.sqn.seq_he = 4;
	s.sqn.ind_next = 1;
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));   /* SEQ 5, slot 1 */
	CHECK_OK(run(&u, &v, auts));
	CHECK_ERR(run(&u, &old, auts), TW_ERR_SYNC); /* 5 - 1 > L = 3 */
	CHECK_OK(tw_vecsrc_resync(&s, old.rand_, auts));
	CHECK(s.sqn.seq_he == 5);
	CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
	CHECK_OK(run(&u, &v, auts));
}

/* §6.3.3: any flipped AUTN bit is a MAC failure (Authentication-Reject):
 * outputs zeroed, SQN_MS array untouched. */
static void test_flipped_autn(void)
{
	struct tw_subscriber s;
	struct tw_usim u, before;
	struct tw_eap_aka_vec v;
	uint8_t rand_[16], res[16], ck[16], ik[16], auts[14];
	size_t res_len;
	bool all = true;

	for (int t = 0; t < 2; t++) {
		random_sub(&s, t == 1);
		CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
		tw_test_random(rand_, 16);
		CHECK_OK(tw_vecsrc_aka(&s, rand_, &v));
		before = u;
		for (unsigned i = 0; i < 128; i++) {
			v.autn[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
			memset(res, 0xaa, 16);
			memset(auts, 0xaa, 14);
			all &= tw_usim_authenticate(&u, v.rand_, v.autn, res, &res_len, ck, ik,
						    auts) == TW_ERR_AUTH;
			all &= memcmp(&u, &before, sizeof(u)) == 0;
			all &= res_len == 0 && tw_ct_is_zero(res, 16) && tw_ct_is_zero(ck, 16) &&
			       tw_ct_is_zero(ik, 16) && tw_ct_is_zero(auts, 14);
			v.autn[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
		}
		/* A different RAND is a MAC failure too. */
		rand_[0] ^= 1;
		all &= tw_usim_authenticate(&u, rand_, v.autn, res, &res_len, ck, ik, auts) ==
		       TW_ERR_AUTH;
		CHECK_OK(run(&u, &v, auts));
	}
	CHECK(all);
}

static void test_sim_card(void)
{
	struct tw_sub_keys kk;
	struct tw_usim u;
	uint8_t ki[16], rand_[16], autn[16] = { 0 }, res[16], ck[16], ik[16], auts[14];
	uint8_t sres[4], kc[8];
	size_t res_len;

	tw_test_random(ki, 16);
	tw_test_random(rand_, 16);
	CHECK_OK(tw_sub_keys_comp128(&kk, 2, ki));
	CHECK_OK(tw_usim_init(&u, "262420000000002", &kk));
	CHECK_ERR(tw_usim_authenticate(&u, rand_, autn, res, &res_len, ck, ik, auts),
		  TW_ERR_UNSUPPORTED);
	CHECK_OK(tw_usim_gsm(&u, rand_, sres, kc));
	CHECK_ERR(tw_usim_init(&u, "26242x", &kk), TW_ERR_INVAL);
	CHECK_ERR(tw_usim_init(&u, "2624", &kk), TW_ERR_INVAL);
	kk.alg = (enum tw_sub_alg)9;
	CHECK_ERR(tw_usim_init(&u, "262420000000002", &kk), TW_ERR_INVAL);
}

#if defined(TW_HAVE_OSMO)
/*
 * libosmocore as an independent AuC for our USIM: it must accept our AUTS
 * (its own f1* and f5*) and recover the SQN_MS we meant (the highest accepted);
 * the vector it then generates must pass at our USIM. Our GSM-context
 * SRES/Kc must equal what it computes for the same RAND.
 */
static void test_osmo(void)
{
	bool all = true;

	for (int i = 0; i < 500; i++) {
		struct tw_subscriber s;
		struct tw_usim u;
		struct tw_eap_aka_vec v;
		struct osmo_sub_auth_data aud;
		struct osmo_auth_vector ov;
		uint8_t rand_[16], rand2[16], auts[14], sqn_ms[6], sres[4], kc[8], res[16], ck[16], ik[16];
		size_t res_len;
		unsigned n = 1 + tw_test_random_u32() % 5;

		random_sub(&s, false);
		CHECK_OK(tw_sqn_he_init(&s.sqn, 5, 0, 4, tw_test_random_u32() % 1000000));
		CHECK_OK(tw_usim_init_from_subscriber(&u, &s));
		u.sqn.seq_ms[0] = s.sqn.seq_he;
		for (unsigned j = 0; j < n; j++) {
			tw_test_random(rand_, 16);
			all &= tw_vecsrc_aka(&s, rand_, &v) == TW_OK;
			all &= run(&u, &v, auts) == TW_OK;
		}
		all &= run(&u, &v, auts) == TW_ERR_SYNC;
		tw_sqn_ms_get(&u.sqn, sqn_ms);
		all &= tw_load_be48(sqn_ms) >> 5 == s.sqn.seq_he;

		memset(&aud, 0, sizeof(aud));
		aud.type = OSMO_AUTH_TYPE_UMTS;
		aud.algo = OSMO_AUTH_ALG_MILENAGE;
		memcpy(aud.u.umts.k, s.keys.aka.u.milenage.k, 16);
		memcpy(aud.u.umts.opc, s.keys.aka.u.milenage.opc, 16);
		memcpy(aud.u.umts.amf, s.amf, 2);
		aud.u.umts.ind_bitlen = 5;
		aud.u.umts.ind = tw_test_random_u32() % 32;
		tw_test_random(rand2, 16);
		all &= osmo_auth_gen_vec_auts(&ov, &aud, auts, v.rand_, rand2) == 0;
		all &= aud.u.umts.sqn_ms == tw_load_be48(sqn_ms);
		all &= tw_usim_authenticate(&u, rand2, ov.autn, res, &res_len, ck, ik, auts) ==
		       TW_OK;
		all &= res_len == ov.res_len && memcmp(res, ov.res, res_len) == 0 &&
		       memcmp(ck, ov.ck, 16) == 0 && memcmp(ik, ov.ik, 16) == 0;
		all &= tw_usim_gsm(&u, rand2, sres, kc) == TW_OK;
		all &= memcmp(sres, ov.sres, 4) == 0 && memcmp(kc, ov.kc, 8) == 0;

		/* A SIM card (COMP128v1..3) against osmo's A3/A8. */
		{
			static const enum osmo_auth_algo algs[3] = { OSMO_AUTH_ALG_COMP128v1,
								     OSMO_AUTH_ALG_COMP128v2,
								     OSMO_AUTH_ALG_COMP128v3 };
			struct tw_sub_keys kk;
			uint8_t ki[16];
			unsigned ver = 1 + (unsigned)i % 3;

			tw_test_random(ki, 16);
			memset(&aud, 0, sizeof(aud));
			aud.type = OSMO_AUTH_TYPE_GSM;
			aud.algo = algs[ver - 1];
			memcpy(aud.u.gsm.ki, ki, 16);
			all &= osmo_auth_gen_vec(&ov, &aud, rand2) == 0;
			all &= tw_sub_keys_comp128(&kk, ver, ki) == TW_OK;
			all &= tw_usim_init(&u, "262420000000003", &kk) == TW_OK;
			all &= tw_usim_gsm(&u, rand2, sres, kc) == TW_OK;
			all &= memcmp(sres, ov.sres, 4) == 0 && memcmp(kc, ov.kc, 8) == 0;
		}
	}
	CHECK(all);
}
#endif

void test_main(void)
{
	CHECK(tv_run_file("milenage.vec", milenage_case) >= 20);
	CHECK(tv_run_file("tuak.vec", tuak_case) >= 6);
	test_interplay();
	test_age_limit();
	test_flipped_autn();
	test_sim_card();
#if defined(TW_HAVE_OSMO)
	test_osmo();
#else
	tw_note("libosmocore not available: AUTS/GSM cross-checks skipped");
#endif
}
