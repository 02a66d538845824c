/*
 * twag-bench — COMP128 v1, v2, v3 (GSM A3/A8; the algorithm descriptions
 * cited in include/twag/comp128.h) beside libosmocore's osmo_auth_gen_vec
 * with OSMO_AUTH_ALG_COMP128v1/2/3, the same (Ki, RAND) -> (SRES, Kc);
 * and v1's three triplets of one EAP-SIM authentication (one Ki, three
 * RANDs: tw_comp128_many, whose vector paths run them side by side).
 */
#include <string.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/comp128.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

enum { NSUB = 64 };

struct c128_state {
	uint8_t ki[NSUB][16];
	uint8_t rand_[NSUB][16];
	uint8_t sres[4], kc[8];
	unsigned next;
#if defined(TW_HAVE_OSMO)
	struct osmo_sub_auth_data aud[NSUB];
#endif
};

static int c128_setup_v(void *p, const struct bench_thread *t, unsigned version)
{
	struct c128_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->ki, sizeof(s->ki));
	bench_fill(&seed, s->rand_, sizeof(s->rand_));
#if defined(TW_HAVE_OSMO)
	static const enum osmo_auth_algo alg[4] = {
		OSMO_AUTH_ALG_NONE, OSMO_AUTH_ALG_COMP128v1, OSMO_AUTH_ALG_COMP128v2,
		OSMO_AUTH_ALG_COMP128v3,
	};
	for (unsigned i = 0; i < NSUB; i++) {
		s->aud[i].type = OSMO_AUTH_TYPE_GSM;
		s->aud[i].algo = alg[version];
		memcpy(s->aud[i].u.gsm.ki, s->ki[i], 16);
	}
#else
	(void)version;
#endif
	return 0;
}

static void c128_teardown(void *p)
{
	tw_wipe(p, sizeof(struct c128_state));
}

static int c128_run_v(void *p, uint64_t n, unsigned version)
{
	struct c128_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (tw_comp128(version, s->ki[j], s->rand_[j], s->sres, s->kc) != TW_OK)
			return -1;
	}
	return 0;
}

/* Input: Ki | RAND; output SRES | Kc. */
static int c128_once_v(const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len,
		       unsigned version)
{
	if (tw_comp128(version, in, in + 16, out, out + 4) != TW_OK)
		return -1;
	*len = 12;
	return 0;
}

#if defined(TW_HAVE_OSMO)
static int osmo_run(void *p, uint64_t n)
{
	struct c128_state *s = p;
	struct osmo_auth_vector vec;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (osmo_auth_gen_vec(&vec, &s->aud[j], s->rand_[j]) != 0)
			return -1;
	}
	tw_wipe(&vec, sizeof(vec));
	return 0;
}

static int osmo_once_v(const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len,
		       enum osmo_auth_algo alg)
{
	struct osmo_sub_auth_data aud;
	struct osmo_auth_vector vec;
	int rc = -1;

	memset(&aud, 0, sizeof(aud));
	aud.type = OSMO_AUTH_TYPE_GSM;
	aud.algo = alg;
	memcpy(aud.u.gsm.ki, in, 16);
	if (osmo_auth_gen_vec(&vec, &aud, in + 16) == 0) {
		memcpy(out, vec.sres, 4);
		memcpy(out + 4, vec.kc, 8);
		*len = 12;
		rc = 0;
	}
	tw_wipe(&aud, sizeof(aud));
	tw_wipe(&vec, sizeof(vec));
	return rc;
}
#define OSMO_REF(v) "comp128v" #v ".osmo"
#else
#define OSMO_REF(v) "" /* TODO: no libosmocore-dev at build time, no reference */
#endif

/* One twag scenario and its libosmocore reference per version. */
#define C128_SCENARIOS(v)                                                            \
	static int c128_setup_##v(void *p, const struct bench_thread *t)             \
	{                                                                            \
		return c128_setup_v(p, t, v);                                        \
	}                                                                            \
	static int c128_run_##v(void *p, uint64_t n)                                 \
	{                                                                            \
		return c128_run_v(p, n, v);                                          \
	}                                                                            \
	static int c128_once_##v(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *o, \
				 size_t *l)                                          \
	{                                                                            \
		(void)p;                                                             \
		return c128_once_v(in, o, l, v);                                     \
	}                                                                            \
	static const struct bench_scenario sc_comp128_##v = {                        \
		.name = "comp128v" #v,                                               \
		.impl = "twag",                                                      \
		.what = "COMP128 v" #v ": Ki, RAND -> SRES, Kc",                     \
		.refs = OSMO_REF(v),                                                 \
		.state_size = sizeof(struct c128_state),                             \
		.setup = c128_setup_##v, .run = c128_run_##v, .once = c128_once_##v, \
		.teardown = c128_teardown,                                           \
	};                                                                           \
	BENCH_REGISTER(sc_comp128_##v)

#if defined(TW_HAVE_OSMO)
#define C128_OSMO(v)                                                                 \
	static int c128_osmo_once_##v(void *p, const uint8_t in[BENCH_IN_LEN],       \
				      uint8_t *o, size_t *l)                         \
	{                                                                            \
		(void)p;                                                             \
		return osmo_once_v(in, o, l, OSMO_AUTH_ALG_COMP128v##v);             \
	}                                                                            \
	static const struct bench_scenario sc_comp128_osmo_##v = {                   \
		.name = "comp128v" #v ".osmo",                                       \
		.impl = "libosmocore",                                               \
		.what = "osmo_auth_gen_vec(COMP128v" #v ")",                         \
		.state_size = sizeof(struct c128_state),                             \
		.setup = c128_setup_##v, .run = osmo_run,                            \
		.once = c128_osmo_once_##v, .teardown = c128_teardown,               \
	};                                                                           \
	BENCH_REGISTER(sc_comp128_osmo_##v)
#else
#define C128_OSMO(v)
#endif

C128_SCENARIOS(1)
C128_OSMO(1)
C128_SCENARIOS(2)
C128_OSMO(2)
C128_SCENARIOS(3)
C128_OSMO(3)

/* ---- three v1 triplets per operation (one EAP-SIM authentication) ---- */

/* The next op's subscriber j and its three RANDs (the subscriber's RAND,
 * advanced, with its first octet xored with 0, 1, 2), for both rows. */
static unsigned trip_next(struct c128_state *s, uint8_t rands[3][16])
{
	unsigned j = s->next++ % NSUB;

	s->rand_[j][15]++;
	for (unsigned k = 0; k < 3; k++) {
		memcpy(rands[k], s->rand_[j], 16);
		rands[k][0] ^= (uint8_t)k;
	}
	return j;
}

static int trip_run(void *p, uint64_t n)
{
	struct c128_state *s = p;
	uint8_t rands[3][16], sres[3][4], kc[3][8];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = trip_next(s, rands);

		if (tw_comp128_many(1, s->ki[j], 3, (const uint8_t(*)[16])rands, sres, kc) != TW_OK)
			return -1;
	}
	tw_wipe(sres, sizeof(sres));
	tw_wipe(kc, sizeof(kc));
	return 0;
}

/* Input: Ki | RAND1 | RAND2 | RAND3; output (SRES | Kc) x 3. */
static int trip_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	uint8_t sres[3][4], kc[3][8];

	(void)p;
	if (tw_comp128_many(1, in, 3, (const uint8_t(*)[16])(in + 16), sres, kc) != TW_OK)
		return -1;
	for (unsigned k = 0; k < 3; k++) {
		memcpy(out + 12 * k, sres[k], 4);
		memcpy(out + 12 * k + 4, kc[k], 8);
	}
	*len = 36;
	return 0;
}

static const struct bench_scenario sc_comp128_trip = {
	.name = "comp128v1-triplets",
	.impl = "twag",
	.what = "COMP128 v1, 3 RANDs of one Ki (an EAP-SIM authentication's triplets)",
#if defined(TW_HAVE_OSMO)
	.refs = "comp128v1-triplets.osmo",
#else
	.refs = "",
#endif
	.state_size = sizeof(struct c128_state),
	.setup = c128_setup_1, .run = trip_run, .once = trip_once,
	.teardown = c128_teardown,
};
BENCH_REGISTER(sc_comp128_trip)

#if defined(TW_HAVE_OSMO)
static int trip_osmo_run(void *p, uint64_t n)
{
	struct c128_state *s = p;
	struct osmo_auth_vector vec;
	uint8_t rands[3][16];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = trip_next(s, rands);

		for (unsigned k = 0; k < 3; k++)
			if (osmo_auth_gen_vec(&vec, &s->aud[j], rands[k]) != 0)
				return -1;
	}
	tw_wipe(&vec, sizeof(vec));
	return 0;
}

static int trip_osmo_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	size_t l;

	(void)p;
	for (unsigned k = 0; k < 3; k++) {
		uint8_t ki_rand[BENCH_IN_LEN] = { 0 };
		int rc;

		memcpy(ki_rand, in, 16);
		memcpy(ki_rand + 16, in + 16 + 16 * k, 16);
		rc = osmo_once_v(ki_rand, out + 12 * k, &l, OSMO_AUTH_ALG_COMP128v1);
		tw_wipe(ki_rand, sizeof(ki_rand));
		if (rc != 0)
			return -1;
	}
	*len = 36;
	return 0;
}

static const struct bench_scenario sc_comp128_trip_osmo = {
	.name = "comp128v1-triplets.osmo",
	.impl = "libosmocore",
	.what = "osmo_auth_gen_vec(COMP128v1) x 3",
	.state_size = sizeof(struct c128_state),
	.setup = c128_setup_1, .run = trip_osmo_run, .once = trip_osmo_once,
	.teardown = c128_teardown,
};
BENCH_REGISTER(sc_comp128_trip_osmo)
#endif
