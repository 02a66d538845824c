/*
 * twag-bench — TUAK (3GPP TS 35.231 V17.0.0): one authentication vector,
 * f1 (MAC-A) plus f2-f5 (RES, CK, IK, AK), K of 128 bits, 64-bit MAC and
 * RES, 128-bit CK and IK, one Keccak iteration: two Keccak-f[1600]
 * permutations per vector.
 *
 * No library we link offers TUAK (libosmocore 1.7 has none), so the row
 * beside it is a cost reference, not the same function: OpenSSL EVP
 * SHA3-256 of a 200-octet message (rate 136 octets: two permutations,
 * as many as one TUAK vector), one EVP_Digest call per vector. Its output
 * cannot be compared with TUAK's; it is not cross-checked.
 */
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/tuak.h"

enum { NSUB = 64 };

struct tuak_state {
	struct tw_tuak_params p[NSUB];
	uint8_t rand_[NSUB][16], sqn[NSUB][6], amf[2];
	uint8_t mac_a[8], res[8], ck[16], ik[16], ak[6];
	uint8_t msg[200], md[32];
	unsigned next;
};

static int tuak_params(struct tw_tuak_params *p, const uint8_t k[16], const uint8_t top[32])
{
	memset(p, 0, sizeof(*p));
	memcpy(p->k, k, 16);
	p->k_len = 16;
	p->mac_bits = 64;
	p->res_bits = 64;
	p->ck_bits = 128;
	p->ik_bits = 128;
	p->iterations = 1;
	return tw_tuak_topc(p->topc, top, k, 16, 1);
}

static int tuak_setup(void *p, const struct bench_thread *t)
{
	struct tuak_state *s = p;
	uint64_t seed = t->seed;
	uint8_t k[16], top[32];

	for (unsigned i = 0; i < NSUB; i++) {
		bench_fill(&seed, k, sizeof(k));
		bench_fill(&seed, top, sizeof(top));
		if (tuak_params(&s->p[i], k, top) != TW_OK)
			return -1;
	}
	bench_fill(&seed, s->rand_, sizeof(s->rand_));
	bench_fill(&seed, s->sqn, sizeof(s->sqn));
	bench_fill(&seed, s->msg, sizeof(s->msg));
	tw_wipe(k, sizeof(k));
	return 0;
}

static void tuak_teardown(void *p)
{
	tw_wipe(p, sizeof(struct tuak_state));
}

static int tuak_run(void *p, uint64_t n)
{
	struct tuak_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (tw_tuak_f1(&s->p[j], s->rand_[j], s->sqn[j], s->amf, s->mac_a) != TW_OK ||
		    tw_tuak_f2345(&s->p[j], s->rand_[j], s->res, s->ck, s->ik, s->ak) != TW_OK)
			return -1;
	}
	return 0;
}

static const struct bench_scenario sc_tuak = {
	.name = "tuak",
	.impl = "twag",
	.what = "f1 + f2-f5, K 128, MAC/RES 64, CK/IK 128, 1 iteration",
	.refs = "tuak.sha3",
	.state_size = sizeof(struct tuak_state),
	.setup = tuak_setup, .run = tuak_run, .teardown = tuak_teardown,
};
BENCH_REGISTER(sc_tuak)

static int sha3_run(void *p, uint64_t n)
{
	struct tuak_state *s = p;
	const EVP_MD *md = EVP_sha3_256();

	for (uint64_t i = 0; i < n; i++) {
		s->msg[s->next++ % sizeof(s->msg)]++;
		if (!EVP_Digest(s->msg, sizeof(s->msg), s->md, NULL, md, NULL))
			return -1;
	}
	return 0;
}

static const struct bench_scenario sc_tuak_sha3 = {
	.name = "tuak.sha3",
	.impl = "openssl-evp",
	.what = "EVP_Digest SHA3-256 of 200 octets (2 Keccak-f, as a TUAK vector)",
	.cost_only = true,
	.state_size = sizeof(struct tuak_state),
	.setup = tuak_setup, .run = sha3_run, .teardown = tuak_teardown,
};
BENCH_REGISTER(sc_tuak_sha3)
