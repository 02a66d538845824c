/*
 * Tests of Keccak-f[1600] (src/crypto/keccak.c) and TUAK (src/auth/tuak.c):
 * TS 35.232 Keccak test sets, an OpenSSL SHA-3 cross-check of the
 * permutation on random messages, all TS 35.233 TUAK test sets through every
 * function, and negative cases.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/keccak.h"
#include "twag/tuak.h"

/* ---- Keccak-f[1600] ---------------------------------------------------- */

static void bytes_to_lanes(uint64_t st[25], const uint8_t b[200])
{
	for (unsigned i = 0; i < 25; i++)
		st[i] = tw_load_le64(b + 8 * i);
}

static void lanes_to_bytes(uint8_t b[200], const uint64_t st[25])
{
	for (unsigned i = 0; i < 25; i++)
		tw_store_le64(b + 8 * i, st[i]);
}

static void keccak_case(const struct tv_case *c)
{
	uint8_t in[200], out[200], exp[200];
	uint64_t st[25];

	CHECK(tv_hex(c, "in", in, sizeof(in)) == 200);
	CHECK(tv_hex(c, "out", exp, sizeof(exp)) == 200);
	bytes_to_lanes(st, in);
	tw_keccak_f1600(st);
	lanes_to_bytes(out, st);
	TV_EXPECT(c, "out", out, sizeof(out));

	/* Negative: one flipped input bit must give a different output. */
	in[tw_test_random_u32() % 200] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
	bytes_to_lanes(st, in);
	tw_keccak_f1600(st);
	lanes_to_bytes(out, st);
	CHECK(memcmp(out, exp, sizeof(out)) != 0);
}

/*
 * A small SHA-3 sponge on our permutation (FIPS 202 §4, §5.1 pad10*1, §6.1
 * SHA3-d = KECCAK[2d](M || 01, d)), compared with OpenSSL's EVP digest.
 */
static void sha3_on_ours(uint8_t *md, size_t d_len, const uint8_t *msg, size_t len)
{
	size_t rate = 200 - 2 * d_len;
	uint64_t st[25] = { 0 };
	uint8_t block[200];

	for (;;) {
		size_t take = len < rate ? len : rate;

		memset(block, 0, sizeof(block));
		memcpy(block, msg, take);
		if (take < rate) {
			/* Last block: domain bits 01 then pad10*1. */
			block[take] ^= 0x06;
			block[rate - 1] ^= 0x80;
		}
		for (size_t i = 0; i < rate / 8; i++)
			st[i] ^= tw_load_le64(block + 8 * i);
		tw_keccak_f1600(st);
		if (take < rate)
			break;
		msg += take;
		len -= take;
	}
	lanes_to_bytes(block, st);
	memcpy(md, block, d_len);
}

static void test_sha3_cross(void)
{
	static const struct { const char *name; size_t d_len; } algs[] = {
		{ "SHA3-256", 32 }, { "SHA3-512", 64 }, { "SHA3-224", 28 },
	};
	uint8_t msg[700], ours[64], ref[64];
	bool all = true;
	int n = 0;

	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		const EVP_MD *md = EVP_get_digestbyname(algs[a].name);

		CHECK(md != NULL);
		if (md == NULL)
			continue;
		for (int i = 0; i < 300; i++) {
			/* Lengths around every block boundary, then random. */
			size_t len = i < 150 ? (size_t)i * 3 % 300 : tw_test_random_u32() % sizeof(msg);
			unsigned int rl = 0;

			tw_test_random(msg, len);
			sha3_on_ours(ours, algs[a].d_len, msg, len);
			if (EVP_Digest(msg, len, ref, &rl, md, NULL) != 1 ||
			    rl != algs[a].d_len)
				all = false;
			all &= memcmp(ours, ref, algs[a].d_len) == 0;
			n++;
		}
	}
	CHECK(all);
	CHECK(n == 900);

	/* Exact block-size messages (136 and 272 octets for SHA3-256) and the
	 * empty message, explicitly. */
	const EVP_MD *md = EVP_get_digestbyname("SHA3-256");
	static const size_t lens[] = { 0, 135, 136, 137, 271, 272, 273 };
	for (unsigned i = 0; md && i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned int rl = 0;

		tw_test_random(msg, lens[i]);
		sha3_on_ours(ours, 32, msg, lens[i]);
		CHECK(EVP_Digest(msg, lens[i], ref, &rl, md, NULL) == 1);
		CHECK_MEM(ours, ref, 32);
	}
}

/* ---- TUAK ---------------------------------------------------------------- */

static int cases_seen;

static void tuak_case(const struct tv_case *c)
{
	struct tw_tuak_params p;
	uint8_t top[32], rand_[16], sqn[6], amf[2], topc[32];
	uint8_t mac[32], res[32], ck[32], ik[32], ak[6], ak_star[6];
	uint8_t exp[32];
	size_t n;

	memset(&p, 0, sizeof(p));
	n = tv_hex(c, "k", p.k, sizeof(p.k));
	CHECK(n == 16 || n == 32);
	p.k_len = (uint8_t)n;
	CHECK(tv_hex(c, "top", top, sizeof(top)) == 32);
	CHECK(tv_hex(c, "rand", rand_, sizeof(rand_)) == 16);
	CHECK(tv_hex(c, "sqn", sqn, sizeof(sqn)) == 6);
	CHECK(tv_hex(c, "amf", amf, sizeof(amf)) == 2);
	p.iterations = (uint16_t)tv_int(c, "iterations", 0);
	CHECK(p.iterations >= 1);
	p.mac_bits = (uint16_t)(8 * tv_hex(c, "mac_a", exp, sizeof(exp)));
	p.res_bits = (uint16_t)(8 * tv_hex(c, "res", exp, sizeof(exp)));
	p.ck_bits = (uint16_t)(8 * tv_hex(c, "ck", exp, sizeof(exp)));
	p.ik_bits = (uint16_t)(8 * tv_hex(c, "ik", exp, sizeof(exp)));
	CHECK_OK(tw_tuak_params_check(&p));

	/* §6.1 TOP -> TOPc. */
	CHECK_OK(tw_tuak_topc(topc, top, p.k, p.k_len, p.iterations));
	TV_EXPECT(c, "topc", topc, 32);
	/* The functions below use the published TOPc, not ours. */
	CHECK(tv_hex(c, "topc", p.topc, sizeof(p.topc)) == 32);

	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac));
	TV_EXPECT(c, "mac_a", mac, p.mac_bits / 8u);
	CHECK_OK(tw_tuak_f1star(&p, rand_, sqn, amf, mac));
	TV_EXPECT(c, "mac_s", mac, p.mac_bits / 8u);

	CHECK_OK(tw_tuak_f2345(&p, rand_, res, ck, ik, ak));
	TV_EXPECT(c, "res", res, p.res_bits / 8u);
	TV_EXPECT(c, "ck", ck, p.ck_bits / 8u);
	TV_EXPECT(c, "ik", ik, p.ik_bits / 8u);
	TV_EXPECT(c, "ak", ak, 6);
	/* Outputs not wanted may be NULL; AK is unchanged. */
	memset(ak, 0, sizeof(ak));
	CHECK_OK(tw_tuak_f2345(&p, rand_, NULL, NULL, NULL, ak));
	TV_EXPECT(c, "ak", ak, 6);

	CHECK_OK(tw_tuak_f5star(&p, rand_, ak_star));
	TV_EXPECT(c, "ak_star", ak_star, 6);

	/* Negative: a flipped bit in each input changes the MAC-A. */
	uint8_t mac0[32], mac1[32];
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac0));
	sqn[5] ^= 1;
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
	CHECK(memcmp(mac0, mac1, p.mac_bits / 8u) != 0);
	sqn[5] ^= 1;
	amf[0] ^= 0x80;
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
	CHECK(memcmp(mac0, mac1, p.mac_bits / 8u) != 0);
	amf[0] ^= 0x80;
	p.k[p.k_len - 1] ^= 1;
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
	CHECK(memcmp(mac0, mac1, p.mac_bits / 8u) != 0);
	p.k[p.k_len - 1] ^= 1;
	p.topc[0] ^= 0x80;
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
	CHECK(memcmp(mac0, mac1, p.mac_bits / 8u) != 0);
	p.topc[0] ^= 0x80;
	/* The iteration count is part of the function. */
	p.iterations++;
	CHECK_OK(tw_tuak_f5star(&p, rand_, ak));
	CHECK(memcmp(ak, ak_star, 6) != 0);
	p.iterations--;
	/* A 128-bit K ignores the unused octets of p.k. */
	if (p.k_len == 16) {
		p.k[20] ^= 0xff;
		CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
		CHECK_MEM(mac0, mac1, p.mac_bits / 8u);
		p.k[20] ^= 0xff;
	}
	/* INSTANCE separates output sizes: a different RES size gives a
	 * different AK (TS 35.231 §6.4), a different MAC size a different
	 * MAC prefix (§6.2). */
	uint16_t saved = p.res_bits;
	p.res_bits = p.res_bits == 32 ? 64 : 32;
	CHECK_OK(tw_tuak_f2345(&p, rand_, res, ck, ik, ak));
	CHECK(memcmp(ak, ak_star, 6) != 0);
	uint8_t ak_vec[6];
	CHECK(tv_hex(c, "ak", ak_vec, sizeof(ak_vec)) == 6);
	CHECK(memcmp(ak, ak_vec, 6) != 0);
	p.res_bits = saved;
	saved = p.mac_bits;
	p.mac_bits = p.mac_bits == 64 ? 128 : 64;
	CHECK_OK(tw_tuak_f1(&p, rand_, sqn, amf, mac1));
	CHECK(memcmp(mac0, mac1, 8) != 0);
	p.mac_bits = saved;

	tw_wipe(&p, sizeof(p));
	cases_seen++;
}

static void test_params(void)
{
	struct tw_tuak_params p, q;
	uint8_t rand_[16] = { 0 }, sqn[6] = { 0 }, amf[2] = { 0 };
	uint8_t out[32], ak[6], top[32] = { 0 }, topc[32];

	memset(&p, 0, sizeof(p));
	p.k_len = 16;
	p.mac_bits = 64;
	p.res_bits = 32;
	p.ck_bits = 128;
	p.ik_bits = 256;
	p.iterations = 1;
	CHECK_OK(tw_tuak_params_check(&p));
	CHECK_ERR(tw_tuak_params_check(NULL), TW_ERR_INVAL);

	static const uint8_t bad_k[] = { 0, 8, 15, 17, 24, 31, 33, 255 };
	for (unsigned i = 0; i < sizeof(bad_k); i++) {
		q = p;
		q.k_len = bad_k[i];
		CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_LENGTH);
	}
	static const uint16_t bad_mac[] = { 0, 32, 63, 96, 192, 512 };
	for (unsigned i = 0; i < sizeof(bad_mac) / 2; i++) {
		q = p;
		q.mac_bits = bad_mac[i];
		CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_LENGTH);
	}
	static const uint16_t bad_res[] = { 0, 16, 48, 96, 512 };
	for (unsigned i = 0; i < sizeof(bad_res) / 2; i++) {
		q = p;
		q.res_bits = bad_res[i];
		CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_LENGTH);
	}
	static const uint16_t bad_key[] = { 0, 64, 192, 512 };
	for (unsigned i = 0; i < sizeof(bad_key) / 2; i++) {
		q = p;
		q.ck_bits = bad_key[i];
		CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_LENGTH);
		q = p;
		q.ik_bits = bad_key[i];
		CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_LENGTH);
	}
	static const uint16_t good_res[] = { 32, 64, 128, 256 };
	for (unsigned i = 0; i < 4; i++) {
		q = p;
		q.res_bits = good_res[i];
		CHECK_OK(tw_tuak_params_check(&q));
	}

	/* Iterations 0: every function refuses and leaves outputs alone. */
	q = p;
	q.iterations = 0;
	CHECK_ERR(tw_tuak_params_check(&q), TW_ERR_RANGE);
	memset(out, 0xa5, sizeof(out));
	memset(ak, 0xa5, sizeof(ak));
	CHECK_ERR(tw_tuak_f1(&q, rand_, sqn, amf, out), TW_ERR_RANGE);
	CHECK_ERR(tw_tuak_f1star(&q, rand_, sqn, amf, out), TW_ERR_RANGE);
	CHECK_ERR(tw_tuak_f2345(&q, rand_, out, out, out, ak), TW_ERR_RANGE);
	CHECK_ERR(tw_tuak_f5star(&q, rand_, ak), TW_ERR_RANGE);
	CHECK(out[0] == 0xa5 && out[31] == 0xa5 && ak[0] == 0xa5 && ak[5] == 0xa5);
	q = p;
	q.mac_bits = 100;
	CHECK_ERR(tw_tuak_f1(&q, rand_, sqn, amf, out), TW_ERR_LENGTH);
	q = p;
	q.k_len = 20;
	CHECK_ERR(tw_tuak_f2345(&q, rand_, out, out, out, ak), TW_ERR_LENGTH);
	CHECK_ERR(tw_tuak_f5star(&q, rand_, ak), TW_ERR_LENGTH);
	CHECK(out[0] == 0xa5 && ak[0] == 0xa5);
	CHECK_ERR(tw_tuak_f1(&p, rand_, sqn, amf, NULL), TW_ERR_INVAL);
	CHECK_ERR(tw_tuak_f1(NULL, rand_, sqn, amf, out), TW_ERR_INVAL);

	/* TOPc argument checks. */
	memset(topc, 0x5a, sizeof(topc));
	CHECK_ERR(tw_tuak_topc(topc, top, p.k, 20, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_tuak_topc(topc, top, p.k, 0, 1), TW_ERR_LENGTH);
	CHECK_ERR(tw_tuak_topc(topc, top, p.k, 16, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_tuak_topc(topc, top, p.k, 16, 65536), TW_ERR_RANGE);
	CHECK_ERR(tw_tuak_topc(topc, top, NULL, 16, 1), TW_ERR_INVAL);
	CHECK(topc[0] == 0x5a && topc[31] == 0x5a);
	CHECK_OK(tw_tuak_topc(topc, top, p.k, 16, 1));
	uint8_t topc32[32];
	/* K of 128 bits and the same bits zero-extended to 256 differ
	 * (INSTANCE[7]). */
	CHECK_OK(tw_tuak_topc(topc32, top, p.k, 32, 1));
	CHECK(memcmp(topc, topc32, 32) != 0);
}

void test_main(void)
{
	CHECK(tv_run_file("keccak.vec", keccak_case) == 6);
	test_sha3_cross();
	CHECK(tv_run_file("tuak.vec", tuak_case) == 6);
	CHECK(cases_seen == 6);
	test_params();
}
