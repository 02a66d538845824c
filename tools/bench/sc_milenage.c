/*
 * twag-bench — Milenage (3GPP TS 35.206 V17.0.0 §4.1) scenarios: one
 * authentication vector (f1, f2, f3, f4, f5 with OPc), the same with OP
 * (OPc derived per request), and the multi-subscriber batch; beside
 * libosmocore's osmo_auth_gen_vec and a straightforward Milenage on OpenSSL
 * EVP (a new cipher context per vector, as ordinary code would write it).
 */
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"
#include "bench_ref.h"
#include "twag/bytes.h"
#include "twag/milenage.h"

#if defined(TW_HAVE_OSMO)
#include <osmocom/crypt/auth.h>
#endif

enum { NSUB = 256, BATCH = 256 };

#if defined(TW_HAVE_OSMO)
#define OSMO_REF(name) name ".osmo "
#else
#define OSMO_REF(name) "" /* TODO: libosmocore-dev missing at build time */
#endif

/* 256 subscribers; each op takes the next one and a fresh RAND. */
struct mil_state {
	struct tw_milenage_batch_in in[NSUB];
	uint8_t op[NSUB][16];
	struct tw_milenage_vec out[BATCH];
	unsigned next;
#if defined(TW_HAVE_OSMO)
	struct osmo_sub_auth_data aud[NSUB];
#endif
};

static int mil_setup(void *p, const struct bench_thread *t)
{
	struct mil_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->in, sizeof(s->in));
	bench_fill(&seed, s->op, sizeof(s->op));
	for (unsigned i = 0; i < NSUB; i++) {
		/* Every implementation sees the same OPc = f(K, OP). */
		if (tw_milenage_opc(s->in[i].opc, s->in[i].k, s->op[i]) != TW_OK)
			return -1;
#if defined(TW_HAVE_OSMO)
		s->aud[i].type = OSMO_AUTH_TYPE_UMTS;
		s->aud[i].algo = OSMO_AUTH_ALG_MILENAGE;
		memcpy(s->aud[i].u.umts.k, s->in[i].k, 16);
		memcpy(s->aud[i].u.umts.opc, s->in[i].opc, 16);
		memcpy(s->aud[i].u.umts.amf, s->in[i].amf, 2);
		s->aud[i].u.umts.sqn = tw_load_be48(s->in[i].sqn);
#endif
	}
	return 0;
}

static void mil_teardown(void *p)
{
	tw_wipe(p, sizeof(struct mil_state));
}

/*
 * The next subscriber; every vector still gets a RAND and SQN never used
 * before. The byte increments go to the entry half a ring ahead, not the
 * one about to be read: a one-byte store followed at once by a 16-byte
 * load of the same RAND stalls store forwarding for ~15 cycles, a cost of
 * this loop, not of Milenage (an AuC's RNG writes RANDs whole, ahead of
 * use).
 */
static struct tw_milenage_batch_in *next_sub(struct mil_state *s)
{
	struct tw_milenage_batch_in *b = &s->in[s->next % NSUB];
	struct tw_milenage_batch_in *ahead = &s->in[(s->next + NSUB / 2) % NSUB];

	s->next++;
	ahead->rand_[15]++;
	ahead->sqn[5]++;
	return b;
}

/* The 64 input bytes of a cross-check: K | OPc | RAND | SQN | AMF. */
static void split_in(const uint8_t in[BENCH_IN_LEN], struct tw_milenage_batch_in *b)
{
	memcpy(b->k, in, 16);
	memcpy(b->opc, in + 16, 16);
	memcpy(b->rand_, in + 32, 16);
	memcpy(b->sqn, in + 48, 6);
	memcpy(b->amf, in + 54, 2);
}

/* Canonical outputs: MAC-A | RES | CK | IK | AK (54 octets). */
static void join_out(const struct tw_milenage_vec *v, uint8_t *out, size_t *len)
{
	memcpy(out, v->mac_a, 8);
	memcpy(out + 8, v->res, 8);
	memcpy(out + 16, v->ck, 16);
	memcpy(out + 32, v->ik, 16);
	memcpy(out + 48, v->ak, 6);
	*len = 54;
}

/* ---- twag: one vector ---- */

static int mil_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		struct tw_milenage_batch_in *b = next_sub(s);
		if (tw_milenage_generate(b->k, b->opc, b->rand_, b->sqn, b->amf, NULL,
					 &s->out[0]) != TW_OK)
			return -1;
	}
	return 0;
}

static int mil_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_milenage_batch_in b;
	struct tw_milenage_vec v;

	(void)p;
	split_in(in, &b);
	if (tw_milenage_generate(b.k, b.opc, b.rand_, b.sqn, b.amf, NULL, &v) != TW_OK)
		return -1;
	join_out(&v, out, len);
	return 0;
}

static const struct bench_scenario sc_milenage = {
	.name = "milenage",
	.impl = "twag",
	.what = "f1-f5 with OPc: one vector (tw_milenage_generate)",
	.refs = OSMO_REF("milenage") "milenage.evp",
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = mil_run, .once = mil_once, .teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage)

/* ---- twag: OP instead of OPc (OPc = OP ^ E_K(OP) per request) ---- */

static int mil_op_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next % NSUB;
		struct tw_milenage_batch_in *b = next_sub(s);
		uint8_t opc[16];
		if (tw_milenage_opc(opc, b->k, s->op[j]) != TW_OK ||
		    tw_milenage_generate(b->k, opc, b->rand_, b->sqn, b->amf, NULL,
					 &s->out[0]) != TW_OK)
			return -1;
	}
	return 0;
}

/* Input: K | OP | RAND | SQN | AMF. */
static int mil_op_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_milenage_batch_in b;
	struct tw_milenage_vec v;

	(void)p;
	split_in(in, &b);
	if (tw_milenage_opc(b.opc, b.k, in + 16) != TW_OK ||
	    tw_milenage_generate(b.k, b.opc, b.rand_, b.sqn, b.amf, NULL, &v) != TW_OK)
		return -1;
	join_out(&v, out, len);
	return 0;
}

static const struct bench_scenario sc_milenage_op = {
	.name = "milenage-op",
	.impl = "twag",
	.what = "f1-f5 with OP: OPc derived per vector",
	.refs = OSMO_REF("milenage-op") "milenage-op.evp",
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = mil_op_run, .once = mil_op_once, .teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_op)

/* ---- twag: batch of 256 subscribers per call (larger batches amortise the
 * lane set-up; 64 and 256 measured the same per CPU-second here) ---- */

static int mil_batch_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	while (n) {
		size_t m = n < BATCH ? (size_t)n : BATCH;
		for (size_t i = 0; i < m; i++) {
			s->in[i].rand_[15]++;
			s->in[i].sqn[5]++;
		}
		if (tw_milenage_generate_batch(s->in, s->out, m, NULL) != TW_OK)
			return -1;
		n -= m;
	}
	return 0;
}

/*
 * The vector under test sits at a position chosen by the input among 13
 * others (an odd count reaches the tail code of every lane width).
 */
static int mil_batch_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_milenage_batch_in b[13];
	struct tw_milenage_vec v[13];
	uint64_t seed = tw_load_be64(in) ^ 0xba7c4ull;
	unsigned pos = in[63] % 13;

	(void)p;
	bench_fill(&seed, b, sizeof(b));
	split_in(in, &b[pos]);
	if (tw_milenage_generate_batch(b, v, 13, NULL) != TW_OK)
		return -1;
	join_out(&v[pos], out, len);
	return 0;
}

static const struct bench_scenario sc_milenage_batch = {
	.name = "milenage-batch",
	.impl = "twag",
	.what = "f1-f5 with OPc: batches of 256 subscribers (ops = vectors)",
	.refs = OSMO_REF("milenage") "milenage.evp",
	.granule = BATCH,
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = mil_batch_run, .once = mil_batch_once,
	.teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_batch)

/* ---- reference: OpenSSL EVP, a new context per vector ---- */

/* rot(x, r): x rotated r bits towards the most significant bit (r % 8 == 0
 * for the default constants; any r handled). */
static void rot128(uint8_t out[16], const uint8_t x[16], unsigned r)
{
	unsigned bytes = (r / 8) % 16, bits = r % 8;

	for (unsigned i = 0; i < 16; i++) {
		uint8_t a = x[(i + bytes) % 16], b = x[(i + bytes + 1) % 16];
		out[i] = bits ? (uint8_t)(a << bits | b >> (8 - bits)) : a;
	}
}

int bench_evp_milenage_outs(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
			    const uint8_t sqn[6], const uint8_t amf[2], unsigned n_outs,
			    uint8_t outs[5][16])
{
	static const uint8_t r[5] = {64, 0, 32, 64, 96};
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t temp[16], x[16], y[16], in1[16];
	int len, rc = -1;

	if (n_outs > 5 || !c || !EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(c, 0))
		goto out;
	/* TS 35.206 §4.1: TEMP = E_K(RAND ^ OPc) */
	for (int i = 0; i < 16; i++)
		x[i] = rand_[i] ^ opc[i];
	if (!EVP_EncryptUpdate(c, temp, &len, x, 16))
		goto out;
	/* IN1 = SQN || AMF || SQN || AMF */
	memcpy(in1, sqn, 6);
	memcpy(in1 + 6, amf, 2);
	memcpy(in1 + 8, in1, 8);
	for (unsigned o = 0; o < n_outs; o++) {
		/* OUT1 = E_K(TEMP ^ rot(IN1 ^ OPc, r1) ^ c1) ^ OPc;
		 * OUTi = E_K(rot(TEMP ^ OPc, ri) ^ ci) ^ OPc, i = 2..5 */
		for (int i = 0; i < 16; i++)
			y[i] = (o == 0 ? in1[i] : temp[i]) ^ opc[i];
		rot128(x, y, r[o]);
		if (o == 0)
			for (int i = 0; i < 16; i++)
				x[i] ^= temp[i];
		if (o > 0)
			x[15] ^= (uint8_t)(1u << (o - 1)); /* c2..c5 = 1, 2, 4, 8 */
		if (!EVP_EncryptUpdate(c, outs[o], &len, x, 16))
			goto out;
		for (int i = 0; i < 16; i++)
			outs[o][i] ^= opc[i];
	}
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	tw_wipe(temp, sizeof(temp));
	tw_wipe(x, sizeof(x));
	tw_wipe(y, sizeof(y));
	return rc;
}

static int evp_milenage(const uint8_t k[16], const uint8_t opc[16], const uint8_t rand_[16],
			const uint8_t sqn[6], const uint8_t amf[2], struct tw_milenage_vec *v)
{
	uint8_t outs[5][16];

	if (bench_evp_milenage_outs(k, opc, rand_, sqn, amf, 4, outs) != 0)
		return -1;
	memcpy(v->mac_a, outs[0], 8);
	memcpy(v->res, outs[1] + 8, 8);
	memcpy(v->ak, outs[1], 6);
	memcpy(v->ck, outs[2], 16);
	memcpy(v->ik, outs[3], 16);
	tw_wipe(outs, sizeof(outs));
	return 0;
}

/* OPc = OP ^ E_K(OP), its own context as the ordinary code would. */
static int evp_opc(uint8_t opc[16], const uint8_t k[16], const uint8_t op[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len, rc = -1;

	if (c && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k, NULL) &&
	    EVP_CIPHER_CTX_set_padding(c, 0) && EVP_EncryptUpdate(c, opc, &len, op, 16)) {
		for (int i = 0; i < 16; i++)
			opc[i] ^= op[i];
		rc = 0;
	}
	EVP_CIPHER_CTX_free(c);
	return rc;
}

static int evp_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		struct tw_milenage_batch_in *b = next_sub(s);
		if (evp_milenage(b->k, b->opc, b->rand_, b->sqn, b->amf, &s->out[0]) != 0)
			return -1;
	}
	return 0;
}

static int evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_milenage_batch_in b;
	struct tw_milenage_vec v;

	(void)p;
	split_in(in, &b);
	if (evp_milenage(b.k, b.opc, b.rand_, b.sqn, b.amf, &v) != 0)
		return -1;
	join_out(&v, out, len);
	return 0;
}

static const struct bench_scenario sc_milenage_evp = {
	.name = "milenage.evp",
	.impl = "openssl-evp",
	.what = "TS 35.206 formulas on EVP aes-128-ecb, new EVP_CIPHER_CTX per vector",
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = evp_run, .once = evp_once, .teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_evp)

static int evp_op_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next % NSUB;
		struct tw_milenage_batch_in *b = next_sub(s);
		uint8_t opc[16];
		if (evp_opc(opc, b->k, s->op[j]) != 0 ||
		    evp_milenage(b->k, opc, b->rand_, b->sqn, b->amf, &s->out[0]) != 0)
			return -1;
	}
	return 0;
}

static int evp_op_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_milenage_batch_in b;
	struct tw_milenage_vec v;

	(void)p;
	split_in(in, &b);
	if (evp_opc(b.opc, b.k, in + 16) != 0 ||
	    evp_milenage(b.k, b.opc, b.rand_, b.sqn, b.amf, &v) != 0)
		return -1;
	join_out(&v, out, len);
	return 0;
}

static const struct bench_scenario sc_milenage_op_evp = {
	.name = "milenage-op.evp",
	.impl = "openssl-evp",
	.what = "OPc then f1-f5 on EVP aes-128-ecb, new context per call",
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = evp_op_run, .once = evp_op_once, .teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_op_evp)

/* ---- reference: libosmocore osmo_auth_gen_vec ---- */

#if defined(TW_HAVE_OSMO)
/*
 * osmo_auth_gen_vec picks the SQN itself: the stored SQN + 1 (IND bit
 * length 0), which it writes back. So the stored value is set one below
 * the SQN wanted. It also derives the GSM SRES/Kc (TS 33.102 c2/c3) from
 * a second f2-f5 pass: that is the cost of the call as libosmocore offers it.
 * AUTN = SQN ^ AK || AMF || MAC-A gives AK and MAC-A back.
 */
static int osmo_vec(struct osmo_sub_auth_data *aud, const uint8_t rand_[16],
		    struct tw_milenage_vec *v)
{
	struct osmo_auth_vector vec;

	if (osmo_auth_gen_vec(&vec, aud, rand_) != 0 || vec.res_len != 8)
		return -1;
	uint8_t sqn[6];
	tw_store_be48(sqn, aud->u.umts.sqn);
	memcpy(v->mac_a, vec.autn + 8, 8);
	memcpy(v->res, vec.res, 8);
	memcpy(v->ck, vec.ck, 16);
	memcpy(v->ik, vec.ik, 16);
	for (int i = 0; i < 6; i++)
		v->ak[i] = vec.autn[i] ^ sqn[i];
	tw_wipe(&vec, sizeof(vec));
	return 0;
}

static int osmo_run(void *p, uint64_t n)
{
	struct mil_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next % NSUB;
		struct tw_milenage_batch_in *b = next_sub(s);
		if (osmo_vec(&s->aud[j], b->rand_, &s->out[0]) != 0)
			return -1;
	}
	return 0;
}

static int osmo_once_common(const uint8_t in[BENCH_IN_LEN], bool with_op, uint8_t *out,
			    size_t *len)
{
	struct osmo_sub_auth_data aud;
	struct tw_milenage_vec v;

	memset(&aud, 0, sizeof(aud));
	aud.type = OSMO_AUTH_TYPE_UMTS;
	aud.algo = OSMO_AUTH_ALG_MILENAGE;
	memcpy(aud.u.umts.k, in, 16);
	memcpy(aud.u.umts.opc, in + 16, 16);
	aud.u.umts.opc_is_op = with_op;
	memcpy(aud.u.umts.amf, in + 54, 2);
	aud.u.umts.sqn = (tw_load_be48(in + 48) - 1) & 0xffffffffffffull;
	int rc = osmo_vec(&aud, in + 32, &v);
	if (rc == 0)
		join_out(&v, out, len);
	tw_wipe(&aud, sizeof(aud));
	return rc;
}

static int osmo_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	return osmo_once_common(in, false, out, len);
}

static const struct bench_scenario sc_milenage_osmo = {
	.name = "milenage.osmo",
	.impl = "libosmocore",
	.what = "osmo_auth_gen_vec(MILENAGE), OPc (also derives SRES/Kc)",
	.state_size = sizeof(struct mil_state),
	.setup = mil_setup, .run = osmo_run, .once = osmo_once, .teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_osmo)

static int osmo_op_setup(void *p, const struct bench_thread *t)
{
	struct mil_state *s = p;

	if (mil_setup(p, t) != 0)
		return -1;
	for (unsigned i = 0; i < NSUB; i++) {
		memcpy(s->aud[i].u.umts.opc, s->op[i], 16);
		s->aud[i].u.umts.opc_is_op = 1;
	}
	return 0;
}

static int osmo_op_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	return osmo_once_common(in, true, out, len);
}

static const struct bench_scenario sc_milenage_op_osmo = {
	.name = "milenage-op.osmo",
	.impl = "libosmocore",
	.what = "osmo_auth_gen_vec(MILENAGE), OP (opc_is_op = 1)",
	.state_size = sizeof(struct mil_state),
	.setup = osmo_op_setup, .run = osmo_run, .once = osmo_op_once,
	.teardown = mil_teardown,
};
BENCH_REGISTER(sc_milenage_op_osmo)
#endif
