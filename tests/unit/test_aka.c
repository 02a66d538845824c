/*
 * Tests of AUTN/AUTS (3GPP TS 33.102 V17.0.0 §6.3) and the GSM conversion
 * functions c2/c3 (§6.8.1.2): TS 35.208 / TS 55.205 vectors, flipped bits,
 * and libosmocore as an independent USIM/AuC on random inputs.
 */
#include "tw_test.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/gsm.h"
#include "twag/milenage.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

static void sub_init(struct tw_aka_subscriber *s, const uint8_t k[16], const uint8_t opc[16])
{
	memset(s, 0, sizeof(*s));
	s->alg = TW_AKA_MILENAGE;
	memcpy(s->u.milenage.k, k, 16);
	memcpy(s->u.milenage.opc, opc, 16);
	s->u.milenage.consts = NULL;
}

static void aka_case(const struct tv_case *c)
{
	uint8_t k[16], opc[16], rand_[16], sqn[6], amf[2], mac_a[8], ak[6], ak_star[6];
	uint8_t res[8], ck[16], ik[16];
	struct tw_aka_subscriber s;
	struct tw_aka_vector v;
	uint8_t autn[16], want[16];

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16 || tv_hex(c, "sqn", sqn, 6) != 6 ||
	    tv_hex(c, "amf", amf, 2) != 2 || tv_hex(c, "mac_a", mac_a, 8) != 8 ||
	    tv_hex(c, "ak", ak, 6) != 6 || tv_hex(c, "ak_star", ak_star, 6) != 6 ||
	    tv_hex(c, "res", res, 8) != 8 || tv_hex(c, "ck", ck, 16) != 16 ||
	    tv_hex(c, "ik", ik, 16) != 16)
		return;
	sub_init(&s, k, opc);
	/* AUTN = SQN ^ AK || AMF || MAC-A, from the vector's own fields */
	for (int i = 0; i < 6; i++)
		want[i] = sqn[i] ^ ak[i];
	memcpy(want + 6, amf, 2);
	memcpy(want + 8, mac_a, 8);
	CHECK_OK(tw_aka_autn_build(autn, sqn, ak, amf, mac_a));
	CHECK_MEM(autn, want, 16);

	memset(&v, 0, sizeof(v));
	CHECK_OK(tw_aka_generate(&s, rand_, sqn, amf, &v));
	CHECK_MEM(v.autn, want, 16);
	CHECK(v.xres_len == 8);
	TV_EXPECT(c, "res", v.xres, 8);
	TV_EXPECT(c, "ck", v.ck, 16);
	TV_EXPECT(c, "ik", v.ik, 16);
	TV_EXPECT(c, "ak", v.ak, 6);
	TV_EXPECT(c, "rand", v.rand_, 16);

	/* USIM side: SQN recovered, RES/CK/IK returned. */
	uint8_t sqn_out[6], r[TW_AKA_RES_MAX], xck[16], xik[16];
	size_t rlen = 0;

	CHECK_OK(tw_aka_autn_verify(&s, rand_, want, sqn_out, r, &rlen, xck, xik));
	CHECK_MEM(sqn_out, sqn, 6);
	CHECK(rlen == 8);
	CHECK_MEM(r, res, 8);
	CHECK_MEM(xck, ck, 16);
	CHECK_MEM(xik, ik, 16);

	/* Every single-bit flip of AUTN is rejected, outputs zeroed. */
	bool all_rejected = true, all_zeroed = true;
	uint8_t zero[16] = { 0 };
	for (int bit = 0; bit < 128; bit++) {
		uint8_t bad[16];

		memcpy(bad, want, 16);
		bad[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
		memset(sqn_out, 0xee, 6);
		all_rejected &= tw_aka_autn_verify(&s, rand_, bad, sqn_out, r, &rlen, xck,
						   xik) == TW_ERR_AUTH;
		all_zeroed &= memcmp(sqn_out, zero, 6) == 0 && rlen == 0 &&
			      memcmp(xck, zero, 16) == 0 && memcmp(xik, zero, 16) == 0 &&
			      memcmp(r, zero, 16) == 0;
	}
	CHECK(all_rejected);
	CHECK(all_zeroed);
	/* A different RAND is rejected too. */
	uint8_t rand2[16];
	memcpy(rand2, rand_, 16);
	rand2[15] ^= 1;
	CHECK_ERR(tw_aka_autn_verify(&s, rand2, want, sqn_out, r, &rlen, xck, xik), TW_ERR_AUTH);

	/* AUTS with SQN_MS = the vector's SQN: the concealed part is SQN ^ AK*
	 * (AK* published); MAC-S with AMF* = 0 round-trips and is checked
	 * against libosmocore below. */
	uint8_t auts[14], sqn_ms[6];
	CHECK_OK(tw_aka_auts_build(&s, rand_, sqn, auts));
	for (int i = 0; i < 6; i++)
		want[i] = sqn[i] ^ ak_star[i];
	CHECK_MEM(auts, want, 6);
	uint8_t mac_s0[8], amf0[2] = { 0, 0 };
	CHECK_OK(tw_milenage_f1star(k, opc, rand_, sqn, amf0, NULL, mac_s0));
	CHECK_MEM(auts + 6, mac_s0, 8);
	if (memcmp(amf, amf0, 2) != 0 && tv_has(c, "mac_s")) {
		/* MAC-S uses AMF* = 0, not the vector's AMF. */
		uint8_t mac_s[8];
		if (tv_hex(c, "mac_s", mac_s, 8) == 8)
			CHECK(memcmp(auts + 6, mac_s, 8) != 0);
	}
	CHECK_OK(tw_aka_auts_verify(&s, rand_, auts, sqn_ms));
	CHECK_MEM(sqn_ms, sqn, 6);
	all_rejected = all_zeroed = true;
	for (int bit = 0; bit < 112; bit++) {
		uint8_t bad[14];

		memcpy(bad, auts, 14);
		bad[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
		memset(sqn_ms, 0xee, 6);
		all_rejected &= tw_aka_auts_verify(&s, rand_, bad, sqn_ms) == TW_ERR_AUTH;
		all_zeroed &= memcmp(sqn_ms, zero, 6) == 0;
	}
	CHECK(all_rejected);
	CHECK(all_zeroed);
	CHECK_ERR(tw_aka_auts_verify(&s, rand2, auts, sqn_ms), TW_ERR_AUTH);
}

/*
 * A published AUTS: hostap tests/test-milenage.c ("milenage_auts test",
 * copy in vanhoefm/krackattacks-scripts) resynchronises with TS 35.208
 * Test Set 20's K, OPc, RAND and AUTS = 4f2039392ddd || 4bb4316ed4a14688
 * and expects success; AK* = f5* = 4f2039392ddc, so SQN_MS = 000000000001.
 */
static void test_published_auts(void)
{
	uint8_t k[16], opc[16], rand_[16], auts[14], sqn_ms[6], want[6], built[14];
	struct tw_aka_subscriber s;

	tw_test_hex(k, 16, "90dca4eda45b53cf0f12d7c9c3bc6a89");
	tw_test_hex(opc, 16, "cb9cccc4b9258e6dca4760379fb82581");
	tw_test_hex(rand_, 16, "9fddc72092c6ad036b6e464789315b78");
	tw_test_hex(auts, 14, "4f2039392ddd4bb4316ed4a14688");
	tw_test_hex(want, 6, "000000000001");
	sub_init(&s, k, opc);
	CHECK_OK(tw_aka_auts_verify(&s, rand_, auts, sqn_ms));
	CHECK_MEM(sqn_ms, want, 6);
	CHECK_OK(tw_aka_auts_build(&s, rand_, want, built));
	CHECK_MEM(built, auts, 14);
	auts[13] ^= 0x01;
	CHECK_ERR(tw_aka_auts_verify(&s, rand_, auts, sqn_ms), TW_ERR_AUTH);
}

static void test_alg_dispatch(void)
{
	struct tw_aka_subscriber s;
	struct tw_aka_vector v;
	uint8_t z[16] = { 0 }, auts[14], sqn[6], r[16], ck[16], ik[16];
	size_t rl;

	sub_init(&s, z, z);
	/* TUAK with an empty parameter set (K length 0) is refused. */
	memset(&s, 0, sizeof(s));
	s.alg = TW_AKA_TUAK;
	CHECK_ERR(tw_aka_generate(&s, z, z, z, &v), TW_ERR_LENGTH);
	CHECK_ERR(tw_aka_auts_build(&s, z, z, auts), TW_ERR_LENGTH);
	sub_init(&s, z, z);
	s.alg = (enum tw_aka_alg)99;
	CHECK_ERR(tw_aka_generate(&s, z, z, z, &v), TW_ERR_INVAL);
	CHECK_ERR(tw_aka_autn_verify(&s, z, z, sqn, r, &rl, ck, ik), TW_ERR_INVAL);
	CHECK_ERR(tw_aka_auts_verify(&s, z, z, sqn), TW_ERR_INVAL);
	CHECK_ERR(tw_aka_generate(NULL, z, z, z, &v), TW_ERR_INVAL);
	s.alg = TW_AKA_MILENAGE;
	CHECK_ERR(tw_aka_generate(&s, z, z, z, NULL), TW_ERR_INVAL);
	CHECK_ERR(tw_aka_autn_verify(&s, z, z, sqn, r, NULL, ck, ik), TW_ERR_INVAL);
	/* Bad operator constants surface as TW_ERR_RANGE. */
	struct tw_milenage_consts bad = tw_milenage_default_consts;
	bad.r[0] = 200;
	s.u.milenage.consts = &bad;
	CHECK_ERR(tw_aka_generate(&s, z, z, z, &v), TW_ERR_RANGE);
	CHECK_ERR(tw_aka_auts_build(&s, z, z, auts), TW_ERR_RANGE);
}

/* ---- c2 / c3 ---- */

static void gsm_case(const struct tv_case *c)
{
	uint8_t k[16], opc[16], rand_[16], res[8], ck[16], ik[16], sres[4], kc[8];
	struct tw_milenage_vec v;
	uint8_t z[6] = { 0 };

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16 || tv_hex(c, "res", res, 8) != 8 ||
	    tv_hex(c, "ck", ck, 16) != 16 || tv_hex(c, "ik", ik, 16) != 16)
		return;
	CHECK_OK(tw_gsm_c2(sres, res, 8));
	TV_EXPECT(c, "sres", sres, 4);
	tw_gsm_c3(kc, ck, ik);
	TV_EXPECT(c, "kc", kc, 8);
	/* GSM-MILENAGE end to end: Milenage then c2/c3 (SQN/AMF unused). */
	CHECK_OK(tw_milenage_generate(k, opc, rand_, z, z, NULL, &v));
	CHECK_OK(tw_gsm_c2(sres, v.res, 8));
	TV_EXPECT(c, "sres", sres, 4);
	tw_gsm_c3(kc, v.ck, v.ik);
	TV_EXPECT(c, "kc", kc, 8);
}

static void test_gsm(void)
{
	CHECK(tv_run_file("gsm_conv.vec", gsm_case) == 19);

	uint8_t res[17], sres[4], want[4];
	tw_test_random(res, sizeof(res));
	CHECK_ERR(tw_gsm_c2(sres, res, 3), TW_ERR_LENGTH);
	CHECK_ERR(tw_gsm_c2(sres, res, 17), TW_ERR_LENGTH);
	CHECK_ERR(tw_gsm_c2(sres, res, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_gsm_c2(sres, NULL, 8), TW_ERR_INVAL);
	/* 32-bit RES: SRES = RES */
	CHECK_OK(tw_gsm_c2(sres, res, 4));
	CHECK_MEM(sres, res, 4);
	/* Every length 4..16 against the formula on a zero-padded 128-bit
	 * XRES*, written out word by word. */
	bool ok = true;
	for (size_t len = 4; len <= 16; len++) {
		uint8_t x[16] = { 0 };
		memcpy(x, res, len);
		uint32_t w = tw_load_be32(x) ^ tw_load_be32(x + 4) ^ tw_load_be32(x + 8) ^
			     tw_load_be32(x + 12);
		tw_store_be32(want, w);
		ok &= tw_gsm_c2(sres, res, len) == TW_OK && memcmp(sres, want, 4) == 0;
	}
	CHECK(ok);

#if defined(TW_HAVE_OSMO)
	/* c3 against libosmocore's osmo_auth_c3 on random CK/IK. */
	ok = true;
	for (int it = 0; it < 100; it++) {
		uint8_t ck[16], ik[16], kc[8], okc[8];
		tw_test_random(ck, 16);
		tw_test_random(ik, 16);
		tw_gsm_c3(kc, ck, ik);
		osmo_auth_c3(okc, ck, ik);
		ok &= memcmp(kc, okc, 8) == 0;
	}
	CHECK(ok);
#endif
}

/* ---- libosmocore as the other side, random subscribers ---- */

static void test_osmo(void)
{
#if defined(TW_HAVE_OSMO)
	bool ok = true;
	int done = 0;

	for (int it = 0; it < 200; it++) {
		uint8_t k[16], opc[16], rand_[16], rand2[16], sqn[6], amf[2], sqn_ms[6];
		struct osmo_sub_auth_data aud;
		struct osmo_auth_vector ov;
		struct tw_aka_subscriber s;

		tw_test_random(k, 16);
		tw_test_random(opc, 16);
		tw_test_random(rand_, 16);
		tw_test_random(rand2, 16);
		tw_test_random(sqn, 6);
		tw_test_random(sqn_ms, 6);
		tw_test_random(amf, 2);
		sub_init(&s, k, opc);
		memset(&aud, 0, sizeof(aud));
		aud.type = OSMO_AUTH_TYPE_UMTS;
		aud.algo = OSMO_AUTH_ALG_MILENAGE;
		memcpy(aud.u.umts.opc, opc, 16);
		memcpy(aud.u.umts.k, k, 16);
		memcpy(aud.u.umts.amf, amf, 2);
		aud.u.umts.sqn = tw_load_be48(sqn) - 1; /* it uses stored SQN + 1 */

		/* osmo as AuC, we as USIM. */
		memset(&ov, 0, sizeof(ov));
		if (osmo_auth_gen_vec(&ov, &aud, rand_) != 0) {
			ok = false;
			continue;
		}
		uint8_t sqn_out[6], r[16], ck[16], ik[16], sres[4], kc[8];
		size_t rl;
		ok &= tw_aka_autn_verify(&s, rand_, ov.autn, sqn_out, r, &rl, ck, ik) == TW_OK;
		ok &= memcmp(sqn_out, sqn, 6) == 0 && rl == ov.res_len &&
		      memcmp(r, ov.res, rl) == 0 && memcmp(ck, ov.ck, 16) == 0 &&
		      memcmp(ik, ov.ik, 16) == 0;
		/* its GSM triplet = c2/c3 of the UMTS outputs */
		ok &= tw_gsm_c2(sres, r, rl) == TW_OK && memcmp(sres, ov.sres, 4) == 0;
		tw_gsm_c3(kc, ck, ik);
		ok &= memcmp(kc, ov.kc, 8) == 0;

		/* We as USIM build AUTS; osmo as HE recovers SQN_MS from it. */
		uint8_t auts[14];
		ok &= tw_aka_auts_build(&s, rand2, sqn_ms, auts) == TW_OK;
		aud.u.umts.sqn_ms = 0;
		ok &= osmo_auth_gen_vec_auts(&ov, &aud, auts, rand2, rand_) == 0;
		ok &= aud.u.umts.sqn_ms == tw_load_be48(sqn_ms);
		/* ... and rejects it with MAC-S flipped. */
		auts[6 + it % 8] ^= (uint8_t)(1u << (it % 7));
		ok &= osmo_auth_gen_vec_auts(&ov, &aud, auts, rand2, rand_) != 0;
		done++;
	}
	CHECK(done == 200);
	CHECK(ok);
#else
	tw_note("libosmogsm not available: AKA cross-check skipped");
#endif
}

/*
 * TUAK subscribers through the same AUTN/AUTS code: TS 35.233 test sets.
 * Sets whose sizes AKA can carry (MAC-A 64, CK/IK 128, RES <= 128 bits)
 * must give AUTN = SQN^AK || AMF || MAC-A with the published f1/f5 and
 * verify back; the others must be refused with TW_ERR_UNSUPPORTED.
 */
static void tuak_case(const struct tv_case *c)
{
	struct tw_aka_subscriber s;
	struct tw_aka_vector v;
	uint8_t rand_[16], sqn[6], amf[2], exp_ak[6], exp_mac[32], autn[16];
	uint8_t res[TW_AKA_RES_MAX], ck[16], ik[16], sqn_out[6], auts[14], tmp[32];
	size_t res_len = 0;

	memset(&s, 0, sizeof(s));
	s.alg = TW_AKA_TUAK;
	s.u.tuak.k_len = (uint8_t)tv_hex(c, "k", s.u.tuak.k, sizeof(s.u.tuak.k));
	tv_hex(c, "topc", s.u.tuak.topc, sizeof(s.u.tuak.topc));
	tv_hex(c, "rand", rand_, sizeof(rand_));
	tv_hex(c, "sqn", sqn, sizeof(sqn));
	tv_hex(c, "amf", amf, sizeof(amf));
	tv_hex(c, "ak", exp_ak, sizeof(exp_ak));
	s.u.tuak.mac_bits = (uint16_t)(8 * tv_hex(c, "mac_a", exp_mac, sizeof(exp_mac)));
	s.u.tuak.res_bits = (uint16_t)(8 * tv_hex(c, "res", tmp, sizeof(tmp)));
	s.u.tuak.ck_bits = (uint16_t)(8 * tv_hex(c, "ck", tmp, sizeof(tmp)));
	s.u.tuak.ik_bits = (uint16_t)(8 * tv_hex(c, "ik", tmp, sizeof(tmp)));
	s.u.tuak.iterations = (uint16_t)tv_int(c, "iterations", 1);
	bool fits = s.u.tuak.mac_bits == 64 && s.u.tuak.ck_bits == 128 &&
		    s.u.tuak.ik_bits == 128 && s.u.tuak.res_bits <= 128;

	if (!fits) {
		CHECK_ERR(tw_aka_generate(&s, rand_, sqn, amf, &v), TW_ERR_UNSUPPORTED);
		CHECK_ERR(tw_aka_auts_build(&s, rand_, sqn, auts), TW_ERR_UNSUPPORTED);
		return;
	}
	if (!CHECK_OK(tw_aka_generate(&s, rand_, sqn, amf, &v)))
		return;
	CHECK_OK(tw_aka_autn_build(autn, sqn, exp_ak, amf, exp_mac));
	CHECK_MEM(v.autn, autn, 16);
	TV_EXPECT(c, "res", v.xres, v.xres_len);
	TV_EXPECT(c, "ck", v.ck, 16);
	TV_EXPECT(c, "ik", v.ik, 16);
	CHECK_OK(tw_aka_autn_verify(&s, rand_, v.autn, sqn_out, res, &res_len, ck, ik));
	CHECK_MEM(sqn_out, sqn, 6);
	TV_EXPECT(c, "res", res, res_len);
	v.autn[15] ^= 0x80;
	CHECK_ERR(tw_aka_autn_verify(&s, rand_, v.autn, sqn_out, res, &res_len, ck, ik),
		  TW_ERR_AUTH);
	/* AUTS = SQN_MS ^ AK* || MAC-S: the published AK* and a round trip. */
	CHECK_OK(tw_aka_auts_build(&s, rand_, sqn, auts));
	tw_xor(tmp, auts, sqn, 6);
	TV_EXPECT(c, "ak_star", tmp, 6);
	CHECK_OK(tw_aka_auts_verify(&s, rand_, auts, sqn_out));
	CHECK_MEM(sqn_out, sqn, 6);
	auts[7] ^= 0x04;
	CHECK_ERR(tw_aka_auts_verify(&s, rand_, auts, sqn_out), TW_ERR_AUTH);
}

void test_main(void)
{
	tv_run_file("tuak.vec", tuak_case);
	static const uint32_t lv[] = { 0, TW_CPU_AESNI | TW_CPU_SSE41, UINT32_MAX };

	for (size_t l = 0; l < sizeof(lv) / sizeof(lv[0]); l++) {
		tw_cpu_restrict(lv[l]);
		CHECK(tv_run_file("milenage.vec", aka_case) >= 20);
	}
	tw_cpu_restrict(UINT32_MAX);
	test_published_auts();
	test_alg_dispatch();
	test_gsm();
	test_osmo();
}
