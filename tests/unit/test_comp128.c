/*
 * Tests of COMP128 v1/v2/v3 (src/auth/comp128.c): the community vector sets
 * (tests/vectors/comp128v{1,2,3}.vec), a cross-check against libosmocore's
 * independent implementation on random Ki/RAND, and negative cases.
 */
#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/comp128.h"
#include "twag/cpu.h"
#include "twag/err.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

static unsigned cur_version;

static void comp128_case(const struct tv_case *c)
{
	uint8_t ki[16], rand_[16], sres[4], kc[8], kc_vec[8];

	CHECK(tv_hex(c, "ki", ki, sizeof(ki)) == 16);
	CHECK(tv_hex(c, "rand", rand_, sizeof(rand_)) == 16);
	CHECK_OK(tw_comp128(cur_version, ki, rand_, sres, kc));
	TV_EXPECT(c, "sres", sres, 4);
	TV_EXPECT(c, "kc", kc, 8);

	/* Negative: one flipped bit of Ki, then of RAND, changes SRES/Kc. */
	uint8_t sres2[4], kc2[8];
	ki[tw_test_random_u32() % 16] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
	CHECK_OK(tw_comp128(cur_version, ki, rand_, sres2, kc2));
	CHECK(memcmp(sres, sres2, 4) != 0 || memcmp(kc, kc2, 8) != 0);
	CHECK(tv_hex(c, "ki", ki, sizeof(ki)) == 16);
	rand_[tw_test_random_u32() % 16] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
	CHECK_OK(tw_comp128(cur_version, ki, rand_, sres2, kc2));
	CHECK(memcmp(sres, sres2, 4) != 0 || memcmp(kc, kc2, 8) != 0);

	/* The vector itself obeys the Kc shape of its version. */
	CHECK(tv_hex(c, "kc", kc_vec, sizeof(kc_vec)) == 8);
	if (cur_version != 3)
		CHECK(kc_vec[7] == 0 && (kc_vec[6] & 3) == 0);
}

static void run_file(unsigned version, const char *name)
{
	cur_version = version;
	CHECK(tv_run_file(name, comp128_case) == 32);
}

/* v1 and v2 Kc has 54 effective bits; v3 uses all 64 (seen over many
 * random inputs: the low bits are not always zero). */
static void test_kc_shape(void)
{
	uint8_t ki[16], rand_[16], sres[4], kc[8];
	bool v12_zero = true;
	uint8_t v3_low = 0;

	for (int i = 0; i < 200; i++) {
		tw_test_random(ki, sizeof(ki));
		tw_test_random(rand_, sizeof(rand_));
		for (unsigned v = 1; v <= 2; v++) {
			CHECK_OK(tw_comp128(v, ki, rand_, sres, kc));
			v12_zero &= kc[7] == 0 && (kc[6] & 3) == 0;
		}
		CHECK_OK(tw_comp128(3, ki, rand_, sres, kc));
		v3_low |= kc[7];
	}
	CHECK(v12_zero);
	CHECK(v3_low != 0);
}

static void test_negative(void)
{
	uint8_t ki[16] = { 0 }, rand_[16] = { 0 }, sres[4], kc[8];
	static const unsigned bad[] = { 0, 4, 5, 128, 0xffffffffu };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(sres, 0x5a, sizeof(sres));
		memset(kc, 0x5a, sizeof(kc));
		CHECK_ERR(tw_comp128(bad[i], ki, rand_, sres, kc), TW_ERR_UNSUPPORTED);
		CHECK(sres[0] == 0x5a && sres[3] == 0x5a && kc[0] == 0x5a && kc[7] == 0x5a);
	}
	/* The three versions are different functions. */
	uint8_t s1[4], s2[4], s3[4], k1[8], k2[8], k3[8];
	tw_test_random(ki, sizeof(ki));
	tw_test_random(rand_, sizeof(rand_));
	CHECK_OK(tw_comp128(1, ki, rand_, s1, k1));
	CHECK_OK(tw_comp128(2, ki, rand_, s2, k2));
	CHECK_OK(tw_comp128(3, ki, rand_, s3, k3));
	CHECK(memcmp(s1, s3, 4) != 0);
	/* v2 is v3 with the 10 low Kc bits cleared. */
	CHECK_MEM(s2, s3, 4);
	CHECK_MEM(k2, k3, 6);
	CHECK(k2[6] == (k3[6] & 0xfc) && k2[7] == 0);
}

static void test_osmo_cross(void)
{
#if defined(TW_HAVE_OSMO)
	static const enum osmo_auth_algo algs[4] = {
		OSMO_AUTH_ALG_NONE, OSMO_AUTH_ALG_COMP128v1,
		OSMO_AUTH_ALG_COMP128v2, OSMO_AUTH_ALG_COMP128v3,
	};

	for (unsigned v = 1; v <= 3; v++) {
		bool all = true;
		int n = 0;

		for (int i = 0; i < 400; i++) {
			struct osmo_sub_auth_data aud;
			struct osmo_auth_vector vec;
			uint8_t ki[16], rand_[16], sres[4], kc[8];

			/* Mix in edge values: all-zero and all-ones inputs. */
			tw_test_random(ki, sizeof(ki));
			tw_test_random(rand_, sizeof(rand_));
			if (i == 0) { memset(ki, 0, 16); memset(rand_, 0, 16); }
			if (i == 1) { memset(ki, 0xff, 16); memset(rand_, 0xff, 16); }
			/* All-ones on one side: the largest first-level table
			 * indices (x[m] + 2 x[n] = 765 for v1). */
			if (i == 2) memset(ki, 0xff, 16);
			if (i == 3) memset(rand_, 0xff, 16);

			memset(&aud, 0, sizeof(aud));
			memset(&vec, 0, sizeof(vec));
			aud.type = OSMO_AUTH_TYPE_GSM;
			aud.algo = algs[v];
			memcpy(aud.u.gsm.ki, ki, 16);
			if (osmo_auth_gen_vec(&vec, &aud, rand_) != 0) {
				all = false;
				continue;
			}
			if (tw_comp128(v, ki, rand_, sres, kc) != TW_OK) {
				all = false;
				continue;
			}
			all &= memcmp(sres, vec.sres, 4) == 0;
			all &= memcmp(kc, vec.kc, 8) == 0;
			n++;
		}
		CHECK(all);
		CHECK(n == 400);
	}
#else
	tw_note("libosmogsm not available: COMP128 cross-check skipped");
#endif
}

/*
 * tw_comp128_many against tw_comp128 one RAND at a time on the table code
 * (VBMI and AVX2 disabled): 1..9 RANDs per call (v1 with VBMI: four per
 * pass, with AVX2: three; the last pass partly filled), the table-index
 * extremes among them, for every version, once on each v1 path the CPU
 * has (VBMI, AVX2). This is the cross-check of the v1 implementations
 * with each other (the vector files and libosmocore pin the default path
 * on its own as well).
 */
static void test_many(void)
{
	static const struct {
		uint32_t mask; /* tw_cpu_restrict */
		uint32_t need; /* the path exists when the CPU has these */
		const char *name;
	} paths[] = {
		{ UINT32_MAX, TW_CPU_AVX512 | TW_CPU_VBMI, "AVX-512 VBMI" },
		{ ~(uint32_t)TW_CPU_VBMI, TW_CPU_AVX2, "AVX2" },
		{ ~(uint32_t)(TW_CPU_VBMI | TW_CPU_AVX2), 0, "table code" },
	};
	const uint32_t table = ~(uint32_t)(TW_CPU_VBMI | TW_CPU_AVX2);
	uint8_t ki[16], rands[9][16], sres[9][4], kc[9][8], s1[4], k1[8];

	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		if (!tw_cpu_has(paths[p].need)) {
			tw_note("CPU without the COMP128 v1 %s path: not checked", paths[p].name);
			continue;
		}
		for (unsigned v = 1; v <= 3; v++) {
			for (unsigned n = 0; n <= 9; n++) {
				bool same = true;

				for (int rep = 0; rep < 20; rep++) {
					tw_test_random(ki, sizeof(ki));
					tw_test_random(rands, sizeof(rands));
					if (rep == 0)
						memset(ki, 0xff, 16);
					if (rep == 1 && n > 0)
						memset(rands[n - 1], 0xff, 16);
					if (rep == 2) {
						memset(ki, 0, 16);
						memset(rands, 0, sizeof(rands));
					}
					memset(sres, 0x5a, sizeof(sres));
					memset(kc, 0x5a, sizeof(kc));
					tw_cpu_restrict(paths[p].mask);
					CHECK_OK(tw_comp128_many(v, ki, n, (const uint8_t(*)[16])rands,
								 sres, kc));
					tw_cpu_restrict(table);
					for (unsigned i = 0; i < n; i++) {
						CHECK_OK(tw_comp128(v, ki, rands[i], s1, k1));
						same &= memcmp(s1, sres[i], 4) == 0 &&
							memcmp(k1, kc[i], 8) == 0;
					}
					tw_cpu_restrict(UINT32_MAX);
					/* nothing written past the n asked for */
					for (unsigned i = n; i < 9; i++)
						same &= sres[i][0] == 0x5a && kc[i][7] == 0x5a;
				}
				if (!CHECK(same))
					tw_note("COMP128 v%u, %u RANDs, %s: tw_comp128_many differs", v,
						n, paths[p].name);
			}
		}
	}
	memset(sres, 0x5a, sizeof(sres));
	CHECK_ERR(tw_comp128_many(4, ki, 1, (const uint8_t(*)[16])rands, sres, kc),
		  TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_comp128_many(0, ki, 1, (const uint8_t(*)[16])rands, sres, kc),
		  TW_ERR_UNSUPPORTED);
	CHECK_ERR(tw_comp128_many(1, ki, 1, NULL, sres, kc), TW_ERR_INVAL);
	CHECK_ERR(tw_comp128_many(1, ki, 1, (const uint8_t(*)[16])rands, NULL, kc), TW_ERR_INVAL);
	CHECK_ERR(tw_comp128_many(1, ki, 1, (const uint8_t(*)[16])rands, sres, NULL), TW_ERR_INVAL);
	CHECK(sres[0][0] == 0x5a);
	CHECK_OK(tw_comp128_many(1, ki, 0, NULL, NULL, NULL));
}

void test_main(void)
{
	run_file(1, "comp128v1.vec");
	run_file(2, "comp128v2.vec");
	run_file(3, "comp128v3.vec");
	test_kc_shape();
	test_negative();
	test_osmo_cross();
	test_many();
}
