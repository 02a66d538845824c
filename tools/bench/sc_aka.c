/*
 * twag-bench — AKA authentication-token handling with Milenage (3GPP TS
 * 33.102 V17.0.0 §6.3.3, §6.3.5; TS 35.206 §4.1):
 *   milenage-autn  the AuC builds a vector with AUTN = SQN ^ AK || AMF ||
 *                  MAC-A (tw_aka_generate) and the USIM side verifies it
 *                  (tw_aka_autn_verify: AK, SQN, XMAC, RES, CK, IK);
 *   milenage-auts  the AuC checks a resynchronisation token AUTS =
 *                  SQN_MS ^ AK* || MAC-S (tw_aka_auts_verify: f5*, f1*).
 * References: the same formulas on OpenSSL EVP (a new cipher context per
 * Milenage call, as ordinary code would write it) and, for AUTS,
 * libosmocore's osmo_auth_gen_vec_auts.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "bench.h"
#include "bench_ref.h"
#include "twag/aka.h"
#include "twag/bytes.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#define OSMO_AUTS " milenage-auts.osmo"
#else
#define OSMO_AUTS ""
#endif

enum { NSUB = 64 };

static const uint8_t amf_star[2]; /* TS 33.102 §6.3.3: AMF* = 0x0000 for f1* */

struct aka_state {
	struct tw_aka_subscriber sub[NSUB];
	uint8_t rand_[NSUB][16], sqn[NSUB][6], amf[2];
	uint8_t auts[NSUB][14];
	uint8_t out[128];
	unsigned next;
};

static int aka_setup(void *p, const struct bench_thread *t)
{
	struct aka_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->rand_, sizeof(s->rand_));
	bench_fill(&seed, s->sqn, sizeof(s->sqn));
	bench_fill(&seed, s->amf, sizeof(s->amf));
	for (unsigned i = 0; i < NSUB; i++) {
		s->sub[i].alg = TW_AKA_MILENAGE;
		bench_fill(&seed, s->sub[i].u.milenage.k, 16);
		bench_fill(&seed, s->sub[i].u.milenage.opc, 16);
		s->sub[i].u.milenage.consts = NULL;
		/* the USIM's resync token for this subscriber */
		if (tw_aka_auts_build(&s->sub[i], s->rand_[i], s->sqn[i], s->auts[i]) != TW_OK)
			return -1;
	}
	return 0;
}

static void aka_teardown(void *p)
{
	tw_wipe(p, sizeof(struct aka_state));
}

static void in_sub(const uint8_t in[BENCH_IN_LEN], struct tw_aka_subscriber *sub)
{
	memset(sub, 0, sizeof(*sub));
	sub->alg = TW_AKA_MILENAGE;
	memcpy(sub->u.milenage.k, in, 16);
	memcpy(sub->u.milenage.opc, in + 16, 16);
}

/* ---- AUTN build + verify ---- */

/* out = AUTN | XRES | CK | IK | SQN (USIM) | RES (USIM): 70 octets */
static int twag_autn(const struct tw_aka_subscriber *sub, const uint8_t rand_[16],
		     const uint8_t sqn[6], const uint8_t amf[2], uint8_t *out)
{
	struct tw_aka_vector v;
	uint8_t res[TW_AKA_RES_MAX], ck[16], ik[16];
	size_t res_len;
	int rc = -1;

	if (tw_aka_generate(sub, rand_, sqn, amf, &v) != TW_OK || v.xres_len != 8 ||
	    tw_aka_autn_verify(sub, rand_, v.autn, out + 64, res, &res_len, ck, ik) != TW_OK ||
	    res_len != 8)
		goto out;
	memcpy(out, v.autn, 16);
	memcpy(out + 16, v.xres, 8);
	memcpy(out + 24, v.ck, 16);
	memcpy(out + 40, v.ik, 16);
	memcpy(out + 56, res, 8);
	/* reorder to the documented layout: ... SQN | RES */
	uint8_t sqn_ms[6];
	memcpy(sqn_ms, out + 64, 6);
	memcpy(out + 56, sqn_ms, 6);
	memcpy(out + 62, res, 8);
	rc = 0;
out:
	tw_wipe(&v, sizeof(v));
	tw_wipe(res, sizeof(res));
	tw_wipe(ck, sizeof(ck));
	tw_wipe(ik, sizeof(ik));
	return rc;
}

static int evp_autn(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
		    const uint8_t sqn[6], const uint8_t amf[2], uint8_t *out)
{
	uint8_t outs[5][16], v[5][16], autn[16], sqn_ue[6];
	static const uint8_t zero[6];
	int rc = -1;

	/* AuC: f1..f4 and f5; AUTN = SQN ^ AK || AMF || MAC-A */
	if (bench_evp_milenage_outs(k, opc, rand_, sqn, amf, 4, outs) != 0)
		goto out;
	for (int i = 0; i < 6; i++)
		autn[i] = sqn[i] ^ outs[1][i];
	memcpy(autn + 6, amf, 2);
	memcpy(autn + 8, outs[0], 8);
	/* USIM: f5 -> AK -> SQN; f1 -> XMAC = MAC-A?; f2, f3, f4 */
	if (bench_evp_milenage_outs(k, opc, rand_, zero, autn + 6, 4, v) != 0)
		goto out;
	for (int i = 0; i < 6; i++)
		sqn_ue[i] = autn[i] ^ v[1][i];
	if (bench_evp_milenage_outs(k, opc, rand_, sqn_ue, autn + 6, 1, v) != 0 ||
	    CRYPTO_memcmp(v[0], autn + 8, 8) != 0)
		goto out;
	memcpy(out, autn, 16);
	memcpy(out + 16, outs[1] + 8, 8);
	memcpy(out + 24, outs[2], 16);
	memcpy(out + 40, outs[3], 16);
	memcpy(out + 56, sqn_ue, 6);
	memcpy(out + 62, v[1] + 8, 8);
	rc = 0;
out:
	tw_wipe(outs, sizeof(outs));
	tw_wipe(v, sizeof(v));
	return rc;
}

static int autn_run(void *p, uint64_t n)
{
	struct aka_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (twag_autn(&s->sub[j], s->rand_[j], s->sqn[j], s->amf, s->out) != 0)
			return -1;
	}
	return 0;
}

static int autn_evp_run(void *p, uint64_t n)
{
	struct aka_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (evp_autn(s->sub[j].u.milenage.k, s->sub[j].u.milenage.opc, s->rand_[j],
			     s->sqn[j], s->amf, s->out) != 0)
			return -1;
	}
	return 0;
}

/* Input: K | OPc | RAND | SQN | AMF */
static int autn_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_aka_subscriber sub;

	(void)p;
	in_sub(in, &sub);
	int rc = twag_autn(&sub, in + 32, in + 48, in + 54, out);
	tw_wipe(&sub, sizeof(sub));
	*len = 70;
	return rc;
}

static int autn_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 70;
	return evp_autn(in, in + 16, in + 32, in + 48, in + 54, out);
}

static const struct bench_scenario sc_autn = {
	.name = "milenage-autn",
	.impl = "twag",
	.what = "AuC builds AUTN (tw_aka_generate) + USIM verifies it (tw_aka_autn_verify)",
	.refs = "milenage-autn.evp",
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = autn_run, .once = autn_once, .teardown = aka_teardown,
};
BENCH_REGISTER(sc_autn)

static const struct bench_scenario sc_autn_evp = {
	.name = "milenage-autn.evp",
	.impl = "openssl-evp",
	.what = "the same on EVP aes-128-ecb: AuC f1-f5, USIM f5 then f1 (3 contexts)",
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = autn_evp_run, .once = autn_evp_once, .teardown = aka_teardown,
};
BENCH_REGISTER(sc_autn_evp)

/* ---- AUTS resynchronisation at the AuC ---- */

/*
 * Output: SQN_MS (6 octets) when the AUTS verifies, one octet 0xff when it
 * is rejected: in[63] & 1 flips a MAC-S bit, so both sides must also agree
 * on rejecting a forged token.
 */
static void auts_in(const uint8_t in[BENCH_IN_LEN], struct tw_aka_subscriber *sub,
		    uint8_t auts[14])
{
	in_sub(in, sub);
	/* the USIM's token (twag builds it for both sides; what is compared
	 * is how each side checks it) */
	if (tw_aka_auts_build(sub, in + 32, in + 48, auts) != TW_OK)
		memset(auts, 0, 14);
	if (in[63] & 1)
		auts[6 + in[62] % 8] ^= (uint8_t)(1u << (in[61] % 8));
}

static int evp_auts(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
		    const uint8_t auts[14], uint8_t sqn_ms[6])
{
	static const uint8_t zero[6];
	uint8_t outs[5][16];
	int rc = -1;

	/* TS 33.102 §6.3.5: AK* = f5*(RAND) (OUT5), SQN_MS = AUTS[0..5] ^ AK*;
	 * XMAC-S = f1*(SQN_MS, RAND, AMF* = 0) (OUT1, second half) */
	if (bench_evp_milenage_outs(k, opc, rand_, zero, amf_star, 5, outs) != 0)
		goto out;
	for (int i = 0; i < 6; i++)
		sqn_ms[i] = auts[i] ^ outs[4][i];
	if (bench_evp_milenage_outs(k, opc, rand_, sqn_ms, amf_star, 1, outs) != 0 ||
	    CRYPTO_memcmp(outs[0] + 8, auts + 6, 8) != 0)
		goto out;
	rc = 0;
out:
	tw_wipe(outs, sizeof(outs));
	return rc;
}

static int auts_run(void *p, uint64_t n)
{
	struct aka_state *s = p;
	uint8_t sqn_ms[6];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		if (tw_aka_auts_verify(&s->sub[j], s->rand_[j], s->auts[j], sqn_ms) != TW_OK)
			return -1;
	}
	return 0;
}

static int auts_evp_run(void *p, uint64_t n)
{
	struct aka_state *s = p;
	uint8_t sqn_ms[6];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		if (evp_auts(s->sub[j].u.milenage.k, s->sub[j].u.milenage.opc, s->rand_[j],
			     s->auts[j], sqn_ms) != 0)
			return -1;
	}
	return 0;
}

static int auts_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_aka_subscriber sub;
	uint8_t auts[14];

	(void)p;
	auts_in(in, &sub, auts);
	if (tw_aka_auts_verify(&sub, in + 32, auts, out) == TW_OK) {
		*len = 6;
	} else {
		out[0] = 0xff;
		*len = 1;
	}
	tw_wipe(&sub, sizeof(sub));
	return 0;
}

static int auts_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_aka_subscriber sub;
	uint8_t auts[14];

	(void)p;
	auts_in(in, &sub, auts);
	if (evp_auts(in, in + 16, in + 32, auts, out) == 0) {
		*len = 6;
	} else {
		out[0] = 0xff;
		*len = 1;
	}
	tw_wipe(&sub, sizeof(sub));
	return 0;
}

static const struct bench_scenario sc_auts = {
	.name = "milenage-auts",
	.impl = "twag",
	.what = "AuC checks AUTS, recovers SQN_MS (tw_aka_auts_verify: f5*, f1*)",
	.refs = "milenage-auts.evp" OSMO_AUTS,
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = auts_run, .once = auts_once, .teardown = aka_teardown,
};
BENCH_REGISTER(sc_auts)

static const struct bench_scenario sc_auts_evp = {
	.name = "milenage-auts.evp",
	.impl = "openssl-evp",
	.what = "the same on EVP aes-128-ecb: f5* then f1* (2 contexts)",
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = auts_evp_run, .once = auts_evp_once, .teardown = aka_teardown,
};
BENCH_REGISTER(sc_auts_evp)

#if defined(TW_HAVE_OSMO)
/*
 * osmo_auth_gen_vec_auts checks AUTS (f5*, f1*), stores SQN_MS in
 * aud->u.umts.sqn_ms and then, as its API does, generates the next vector
 * (f1-f5 once more): that is the cost of a resync with libosmocore.
 */
static int osmo_auts(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
		     const uint8_t auts[14], uint8_t sqn_ms[6])
{
	struct osmo_sub_auth_data aud;
	struct osmo_auth_vector vec;
	int rc = -1;

	memset(&aud, 0, sizeof(aud));
	aud.type = OSMO_AUTH_TYPE_UMTS;
	aud.algo = OSMO_AUTH_ALG_MILENAGE;
	memcpy(aud.u.umts.k, k, 16);
	memcpy(aud.u.umts.opc, opc, 16);
	if (osmo_auth_gen_vec_auts(&vec, &aud, auts, rand_, rand_) == 0) {
		tw_store_be48(sqn_ms, aud.u.umts.sqn_ms);
		rc = 0;
	}
	tw_wipe(&aud, sizeof(aud));
	tw_wipe(&vec, sizeof(vec));
	return rc;
}

static int auts_osmo_run(void *p, uint64_t n)
{
	struct aka_state *s = p;
	uint8_t sqn_ms[6];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		if (osmo_auts(s->sub[j].u.milenage.k, s->sub[j].u.milenage.opc, s->rand_[j],
			      s->auts[j], sqn_ms) != 0)
			return -1;
	}
	return 0;
}

static int auts_osmo_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_aka_subscriber sub;
	uint8_t auts[14];

	(void)p;
	auts_in(in, &sub, auts);
	if (osmo_auts(in, in + 16, in + 32, auts, out) == 0) {
		*len = 6;
	} else {
		out[0] = 0xff;
		*len = 1;
	}
	tw_wipe(&sub, sizeof(sub));
	return 0;
}

static const struct bench_scenario sc_auts_osmo = {
	.name = "milenage-auts.osmo",
	.impl = "libosmocore",
	.what = "osmo_auth_gen_vec_auts (checks AUTS, then also generates the next vector)",
	.state_size = sizeof(struct aka_state),
	.setup = aka_setup, .run = auts_osmo_run, .once = auts_osmo_once,
	.teardown = aka_teardown,
};
BENCH_REGISTER(sc_auts_osmo)
#endif
