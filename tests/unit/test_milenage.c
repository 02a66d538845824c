/*
 * Tests of MILENAGE (3GPP TS 35.206 V17.0.0): TS 35.208 / 35.207 vectors on
 * every implementation the CPU offers, the batch against single calls,
 * operator constants against an independent reference written here on
 * OpenSSL's AES, and default constants against libosmocore.
 */
#include <openssl/evp.h>
#include <stdio.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/milenage.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

/* The implementation levels compared in-process (tw_cpu_restrict masks). */
static const struct {
	const char *name;
	uint32_t mask;
} levels[] = {
	{ "portable", 0 },
	{ "aesni", TW_CPU_AESNI | TW_CPU_SSE41 | TW_CPU_PCLMUL },
	{ "all", UINT32_MAX },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* ---- Reference MILENAGE: TS 35.206 §4.1 spelled out on OpenSSL AES. ---- */

static void ref_aes(uint8_t out[16], const uint8_t k[16], const uint8_t in[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len = 0;

	if (c == NULL || EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(c, 0) != 1 ||
	    EVP_EncryptUpdate(c, out, &len, in, 16) != 1 || len != 16) {
		fprintf(stderr, "OpenSSL AES failed\n");
		abort();
	}
	EVP_CIPHER_CTX_free(c);
}

/* rot(x, r): x rotated by r bits towards the MSB, bit by bit. */
static void ref_rot(uint8_t out[16], const uint8_t x[16], unsigned r)
{
	memset(out, 0, 16);
	for (unsigned i = 0; i < 128; i++) {
		unsigned src = (i + r) % 128; /* bit 0 = MSB of byte 0 */
		unsigned bit = (x[src / 8] >> (7 - src % 8)) & 1;

		out[i / 8] |= (uint8_t)(bit << (7 - i % 8));
	}
}

static void ref_milenage(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
			 const uint8_t sqn[6], const uint8_t amf[2],
			 const struct tw_milenage_consts *c, struct tw_milenage_out *o)
{
	uint8_t temp[16], x[16], y[16], in1[16], outv[5][16];

	for (int i = 0; i < 16; i++)
		x[i] = rand_[i] ^ opc[i];
	ref_aes(temp, k, x);
	memcpy(in1, sqn, 6);
	memcpy(in1 + 6, amf, 2);
	memcpy(in1 + 8, in1, 8);
	for (int i = 0; i < 16; i++)
		x[i] = in1[i] ^ opc[i];
	ref_rot(y, x, c->r[0]);
	for (int i = 0; i < 16; i++)
		x[i] = temp[i] ^ y[i] ^ c->c[0][i];
	ref_aes(outv[0], k, x);
	for (int j = 1; j < 5; j++) {
		for (int i = 0; i < 16; i++)
			x[i] = temp[i] ^ opc[i];
		ref_rot(y, x, c->r[j]);
		for (int i = 0; i < 16; i++)
			y[i] ^= c->c[j][i];
		ref_aes(outv[j], k, y);
	}
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 16; i++)
			outv[j][i] ^= opc[i];
	memcpy(o->mac_a, outv[0], 8);
	memcpy(o->mac_s, outv[0] + 8, 8);
	memcpy(o->res, outv[1] + 8, 8);
	memcpy(o->ak, outv[1], 6);
	memcpy(o->ck, outv[2], 16);
	memcpy(o->ik, outv[3], 16);
	memcpy(o->ak_star, outv[4], 6);
}

static bool out_eq(const struct tw_milenage_out *a, const struct tw_milenage_out *b)
{
	return memcmp(a->mac_a, b->mac_a, 8) == 0 && memcmp(a->mac_s, b->mac_s, 8) == 0 &&
	       memcmp(a->res, b->res, 8) == 0 && memcmp(a->ck, b->ck, 16) == 0 &&
	       memcmp(a->ik, b->ik, 16) == 0 && memcmp(a->ak, b->ak, 6) == 0 &&
	       memcmp(a->ak_star, b->ak_star, 6) == 0;
}

static bool vec_matches_out(const struct tw_milenage_vec *v, const struct tw_milenage_out *o)
{
	return memcmp(v->mac_a, o->mac_a, 8) == 0 && memcmp(v->res, o->res, 8) == 0 &&
	       memcmp(v->ck, o->ck, 16) == 0 && memcmp(v->ik, o->ik, 16) == 0 &&
	       memcmp(v->ak, o->ak, 6) == 0;
}

/* ---- TS 35.208 / 35.207 vectors ---- */

#define MAX_CASES 64
static struct tw_milenage_batch_in vec_in[MAX_CASES];
static struct tw_milenage_out vec_out[MAX_CASES];
static int nvec;

static void check_case(const struct tv_case *c, const uint8_t *k, const uint8_t *opc,
		       const uint8_t *rand_, const uint8_t *sqn, const uint8_t *amf)
{
	struct tw_milenage_out o;
	struct tw_milenage_vec v;
	uint8_t mac_a[8], mac_s[8], res[8], ck[16], ik[16], ak[6], ak_star[6];

	memset(&o, 0, sizeof(o));
	CHECK_OK(tw_milenage_all(k, opc, rand_, sqn, amf, NULL, &o));
	TV_EXPECT(c, "mac_a", o.mac_a, 8);
	TV_EXPECT(c, "mac_s", o.mac_s, 8);
	TV_EXPECT(c, "res", o.res, 8);
	TV_EXPECT(c, "ck", o.ck, 16);
	TV_EXPECT(c, "ik", o.ik, 16);
	TV_EXPECT(c, "ak", o.ak, 6);
	TV_EXPECT(c, "ak_star", o.ak_star, 6);

	/* The explicit default constants give the same as NULL. */
	memset(&o, 0, sizeof(o));
	CHECK_OK(tw_milenage_all(k, opc, rand_, sqn, amf, &tw_milenage_default_consts, &o));
	TV_EXPECT(c, "ck", o.ck, 16);

	CHECK_OK(tw_milenage_f1(k, opc, rand_, sqn, amf, NULL, mac_a));
	TV_EXPECT(c, "mac_a", mac_a, 8);
	CHECK_OK(tw_milenage_f1star(k, opc, rand_, sqn, amf, NULL, mac_s));
	TV_EXPECT(c, "mac_s", mac_s, 8);
	CHECK_OK(tw_milenage_f2345(k, opc, rand_, NULL, res, ck, ik, ak));
	TV_EXPECT(c, "res", res, 8);
	TV_EXPECT(c, "ck", ck, 16);
	TV_EXPECT(c, "ik", ik, 16);
	TV_EXPECT(c, "ak", ak, 6);
	CHECK_OK(tw_milenage_f5star(k, opc, rand_, NULL, ak_star));
	TV_EXPECT(c, "ak_star", ak_star, 6);

	memset(&v, 0, sizeof(v));
	CHECK_OK(tw_milenage_generate(k, opc, rand_, sqn, amf, NULL, &v));
	TV_EXPECT(c, "mac_a", v.mac_a, 8);
	TV_EXPECT(c, "res", v.res, 8);
	TV_EXPECT(c, "ck", v.ck, 16);
	TV_EXPECT(c, "ik", v.ik, 16);
	TV_EXPECT(c, "ak", v.ak, 6);

	/* A flipped bit of RAND must change every output. */
	uint8_t r2[16];
	struct tw_milenage_out o2;

	memcpy(r2, rand_, 16);
	r2[tw_test_random_u32() % 16] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
	CHECK_OK(tw_milenage_all(k, opc, r2, sqn, amf, NULL, &o2));
	CHECK(memcmp(o2.mac_a, o.mac_a, 8) != 0 && memcmp(o2.res, o.res, 8) != 0 &&
	      memcmp(o2.ck, o.ck, 16) != 0 && memcmp(o2.ak_star, o.ak_star, 6) != 0);
}

static void vec_case(const struct tv_case *c)
{
	uint8_t k[16], op[16], opc[16], opc2[16], rand_[16], sqn[6], amf[2];
	struct tw_milenage_out ref;

	if (tv_hex(c, "k", k, 16) != 16 || tv_hex(c, "opc", opc, 16) != 16 ||
	    tv_hex(c, "rand", rand_, 16) != 16 || tv_hex(c, "sqn", sqn, 6) != 6 ||
	    tv_hex(c, "amf", amf, 2) != 2)
		return;
	/* OPc = OP ^ E_K(OP) */
	if (tv_has(c, "op") && tv_hex(c, "op", op, 16) == 16) {
		CHECK_OK(tw_milenage_opc(opc2, k, op));
		TV_EXPECT(c, "opc", opc2, 16);
	}
	/* The OPc path, and the OP path through the computed OPc. */
	check_case(c, k, opc, rand_, sqn, amf);
	if (tv_has(c, "op"))
		check_case(c, k, opc2, rand_, sqn, amf);

	/* The test's own reference must pass the published vectors too. */
	ref_milenage(k, opc, rand_, sqn, amf, &tw_milenage_default_consts, &ref);
	TV_EXPECT(c, "mac_a", ref.mac_a, 8);
	TV_EXPECT(c, "ak_star", ref.ak_star, 6);
	TV_EXPECT(c, "ck", ref.ck, 16);

	if (nvec < MAX_CASES) {
		memcpy(vec_in[nvec].k, k, 16);
		memcpy(vec_in[nvec].opc, opc, 16);
		memcpy(vec_in[nvec].rand_, rand_, 16);
		memcpy(vec_in[nvec].sqn, sqn, 6);
		memcpy(vec_in[nvec].amf, amf, 2);
		vec_out[nvec] = ref;
		nvec++;
	}
}

static void test_vectors(void)
{
	for (size_t l = 0; l < NLEVELS; l++) {
		tw_cpu_restrict(levels[l].mask);
		nvec = 0;
		int n = tv_run_file("milenage.vec", vec_case);
		CHECK(n >= 20);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- Random inputs: implementations against each other and the reference ---- */

static void random_in(struct tw_milenage_batch_in *in)
{
	tw_test_random(in, sizeof(*in));
}

static void random_consts(struct tw_milenage_consts *c)
{
	tw_test_random(c->c, sizeof(c->c));
	for (int i = 0; i < 5; i++) {
		/* every residue mod 8 appears, and the edges 0 and 127 */
		uint32_t x = tw_test_random_u32();
		c->r[i] = (uint8_t)(x % 4 == 0 ? (x / 4 % 2 ? 127 : 0) : x / 4 % 128);
	}
}

static void test_custom_consts(void)
{
	bool all_ok = true;

	for (int it = 0; it < 200; it++) {
		struct tw_milenage_consts c;
		struct tw_milenage_batch_in in;
		struct tw_milenage_out ref, got;
		struct tw_milenage_vec v;

		random_consts(&c);
		if (it == 0)
			c = tw_milenage_default_consts; /* a copy, not the object */
		random_in(&in);
		ref_milenage(in.k, in.opc, in.rand_, in.sqn, in.amf, &c, &ref);
		for (size_t l = 0; l < NLEVELS; l++) {
			tw_cpu_restrict(levels[l].mask);
			memset(&got, 0, sizeof(got));
			bool ok = tw_milenage_all(in.k, in.opc, in.rand_, in.sqn, in.amf, &c,
						  &got) == TW_OK && out_eq(&got, &ref);
			ok &= tw_milenage_generate(in.k, in.opc, in.rand_, in.sqn, in.amf, &c,
						   &v) == TW_OK && vec_matches_out(&v, &ref);
			uint8_t m[8], a[6];
			ok &= tw_milenage_f1star(in.k, in.opc, in.rand_, in.sqn, in.amf, &c, m) ==
				      TW_OK && memcmp(m, ref.mac_s, 8) == 0;
			ok &= tw_milenage_f5star(in.k, in.opc, in.rand_, &c, a) == TW_OK &&
			      memcmp(a, ref.ak_star, 6) == 0;
			if (!ok) {
				tw_note("custom constants mismatch on %s, iteration %d",
					levels[l].name, it);
				all_ok = false;
			}
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);

	/* r_i > 127 is rejected and nothing is written. */
	struct tw_milenage_consts bad = tw_milenage_default_consts;
	struct tw_milenage_out o, zero;
	struct tw_milenage_vec v;
	uint8_t z[16] = { 0 }, m[8] = { 0 };

	memset(&o, 0, sizeof(o));
	memset(&zero, 0, sizeof(zero));
	CHECK_OK(tw_milenage_consts_check(&bad));
	bad.r[3] = 128;
	CHECK_ERR(tw_milenage_consts_check(&bad), TW_ERR_RANGE);
	CHECK_ERR(tw_milenage_consts_check(NULL), TW_ERR_INVAL);
	CHECK_ERR(tw_milenage_all(z, z, z, z, z, &bad, &o), TW_ERR_RANGE);
	CHECK(memcmp(&o, &zero, sizeof(o)) == 0);
	CHECK_ERR(tw_milenage_f1(z, z, z, z, z, &bad, m), TW_ERR_RANGE);
	CHECK_ERR(tw_milenage_f5star(z, z, z, &bad, m), TW_ERR_RANGE);
	CHECK_ERR(tw_milenage_generate(z, z, z, z, z, &bad, &v), TW_ERR_RANGE);
	struct tw_milenage_batch_in bi;
	memset(&bi, 0, sizeof(bi));
	CHECK_ERR(tw_milenage_generate_batch(&bi, &v, 1, &bad), TW_ERR_RANGE);
	bad.r[3] = 255;
	CHECK_ERR(tw_milenage_f2345(z, z, z, &bad, m, z, z, m), TW_ERR_RANGE);
	bad.r[3] = 127;
	CHECK_OK(tw_milenage_consts_check(&bad));
}

static void test_impls_agree(void)
{
	bool all_ok = true;

	for (int it = 0; it < 300; it++) {
		struct tw_milenage_batch_in in;
		struct tw_milenage_out o[NLEVELS];
		struct tw_milenage_vec v[NLEVELS];
		uint8_t opc[NLEVELS][16];

		random_in(&in);
		for (size_t l = 0; l < NLEVELS; l++) {
			tw_cpu_restrict(levels[l].mask);
			all_ok &= tw_milenage_all(in.k, in.opc, in.rand_, in.sqn, in.amf, NULL,
						  &o[l]) == TW_OK;
			all_ok &= tw_milenage_generate(in.k, in.opc, in.rand_, in.sqn, in.amf,
						       NULL, &v[l]) == TW_OK;
			all_ok &= tw_milenage_opc(opc[l], in.k, in.rand_) == TW_OK;
		}
		for (size_t l = 1; l < NLEVELS; l++) {
			all_ok &= out_eq(&o[0], &o[l]);
			all_ok &= memcmp(&v[0], &v[l], sizeof(v[0])) == 0;
			all_ok &= memcmp(opc[0], opc[l], 16) == 0;
		}
		all_ok &= vec_matches_out(&v[0], &o[0]);
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);
}

/* Batches of n = 1..50 (up to three 16-subscriber VAES passes, so both key
 * buffers of its pipeline are reused) mixing vector cases and random
 * subscribers, on every level, with default and custom constants, against
 * single calls. */
static void test_batch(void)
{
	enum { NMAX = 50 };
	static struct tw_milenage_batch_in in[NMAX];
	static struct tw_milenage_vec got[NMAX + 1], want[NMAX];
	struct tw_milenage_consts custom;
	bool all_ok = true;

	CHECK(nvec >= 20);
	random_consts(&custom);
	for (int pass = 0; pass < 2; pass++) {
		const struct tw_milenage_consts *c = pass ? &custom : NULL;

		for (size_t n = 1; n <= NMAX; n++) {
			for (size_t i = 0; i < n; i++) {
				if (nvec > 0 && tw_test_random_u32() % 2)
					in[i] = vec_in[tw_test_random_u32() % (uint32_t)nvec];
				else
					random_in(&in[i]);
			}
			tw_cpu_restrict(0);
			for (size_t i = 0; i < n; i++)
				all_ok &= tw_milenage_generate(in[i].k, in[i].opc, in[i].rand_,
							       in[i].sqn, in[i].amf, c,
							       &want[i]) == TW_OK;
			for (size_t l = 0; l < NLEVELS; l++) {
				tw_cpu_restrict(levels[l].mask);
				/* A canary after the last output must survive. */
				memset(got, 0xa5, sizeof(got));
				all_ok &= tw_milenage_generate_batch(in, got, n, c) == TW_OK;
				bool ok = memcmp(got, want, n * sizeof(got[0])) == 0;
				uint8_t canary[sizeof(got[0])];
				memset(canary, 0xa5, sizeof(canary));
				ok &= memcmp(&got[n], canary, sizeof(canary)) == 0;
				if (!ok)
					tw_note("batch mismatch: n=%zu level=%s consts=%s", n,
						levels[l].name, c ? "custom" : "default");
				all_ok &= ok;
			}
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(all_ok);

	/* The published vectors through the batch, in file order. */
	memset(got, 0, sizeof(got));
	CHECK_OK(tw_milenage_generate_batch(vec_in, got, (size_t)nvec, NULL));
	bool vok = true;
	for (int i = 0; i < nvec; i++)
		vok &= vec_matches_out(&got[i], &vec_out[i]);
	CHECK(vok);

	CHECK_OK(tw_milenage_generate_batch(NULL, NULL, 0, NULL));
	CHECK_ERR(tw_milenage_generate_batch(NULL, got, 3, NULL), TW_ERR_INVAL);
	CHECK_ERR(tw_milenage_generate_batch(in, NULL, 3, NULL), TW_ERR_INVAL);
}

/* ---- libosmocore as an independent oracle for the default constants ---- */

static void test_osmo(void)
{
#if defined(TW_HAVE_OSMO)
	bool all_ok = true;
	int n = 0;

	for (int it = 0; it < 200; it++) {
		struct tw_milenage_batch_in in;
		struct osmo_sub_auth_data aud;
		struct osmo_auth_vector ov;
		struct tw_milenage_out o;
		uint8_t op[16], opc[16];
		bool use_op = it % 2;

		random_in(&in);
		tw_test_random(op, sizeof(op));
		if (use_op)
			CHECK_OK(tw_milenage_opc(opc, in.k, op));
		else
			memcpy(opc, in.opc, 16);
		memset(&aud, 0, sizeof(aud));
		aud.type = OSMO_AUTH_TYPE_UMTS;
		aud.algo = OSMO_AUTH_ALG_MILENAGE;
		memcpy(aud.u.umts.opc, use_op ? op : opc, 16);
		aud.u.umts.opc_is_op = use_op;
		memcpy(aud.u.umts.k, in.k, 16);
		memcpy(aud.u.umts.amf, in.amf, 2);
		/* libosmocore uses SQN = stored SQN + 1 (ind_bitlen 0). */
		uint64_t sqn = tw_load_be48(in.sqn);
		aud.u.umts.sqn = sqn - 1;
		aud.u.umts.ind_bitlen = 0;
		memset(&ov, 0, sizeof(ov));
		if (osmo_auth_gen_vec(&ov, &aud, in.rand_) != 0) {
			all_ok = false;
			continue;
		}
		if (aud.u.umts.sqn != sqn) {
			all_ok = false;
			continue;
		}
		CHECK_OK(tw_milenage_all(in.k, opc, in.rand_, in.sqn, in.amf, NULL, &o));
		uint8_t autn[16];
		for (int i = 0; i < 6; i++)
			autn[i] = in.sqn[i] ^ o.ak[i];
		memcpy(autn + 6, in.amf, 2);
		memcpy(autn + 8, o.mac_a, 8);
		all_ok &= memcmp(ov.autn, autn, 16) == 0;
		all_ok &= ov.res_len == 8 && memcmp(ov.res, o.res, 8) == 0;
		all_ok &= memcmp(ov.ck, o.ck, 16) == 0 && memcmp(ov.ik, o.ik, 16) == 0;
		n++;
	}
	CHECK(n == 200);
	CHECK(all_ok);
#else
	tw_note("libosmogsm not available: Milenage cross-check skipped");
#endif
}

void test_main(void)
{
	test_vectors();
	test_custom_consts();
	test_impls_agree();
	test_batch();
	test_osmo();
}
