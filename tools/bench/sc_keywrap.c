/*
 * twag-bench — keys wrapped at rest (AES key wrap, RFC 3394 §2.2.2 unwrap
 * with the §2.2.3 integrity check):
 *   keywrap-unwrap  unwrap one 128-bit key (24 wrapped octets) under a
 *                   raw AES-128 KEK: key schedule + 6 x 2 AES decryptions
 *                   (tw_keywrap_unwrap);
 *   milenage-eopc   the network-HSM case: each request carries the OPc
 *                   wrapped under a KEK ("eOPc"); it is unwrapped with the
 *                   loaded KEK (tw_keywrap_unwrap_ctx) and then f1-f5 run
 *                   (TS 35.206 §4.1). Compare with "milenage" (OPc
 *                   pre-loaded) for the cost of carrying keys wrapped.
 * The KEK is the scenario's shared object: with keys=shared ONE expanded
 * KEK context sits in memory for every thread (as in an HSM), with
 * keys=private each thread has its own copy.
 * References: OpenSSL EVP aes-128-wrap (a new context per unwrap, as
 * ordinary code would write it) and, for eOPc, Milenage on EVP too.
 */
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"
#include "bench_ref.h"
#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/keywrap.h"
#include "twag/milenage.h"

enum { NSUB = 64 };

/* The shared object: the KEK, raw (for EVP) and expanded (for twag). */
struct kek_obj {
	uint8_t kek[16];
	struct tw_aes_ctx ctx;
};

static int kek_setup(void *obj, const struct bench_thread *t)
{
	struct kek_obj *o = obj;
	uint64_t seed = t->seed ^ 0x6b656bull;

	bench_fill(&seed, o->kek, sizeof(o->kek));
	return tw_aes_init(&o->ctx, o->kek, 16) == TW_OK ? 0 : -1;
}

static void kek_teardown(void *obj)
{
	struct kek_obj *o = obj;

	tw_aes_wipe(&o->ctx);
	tw_wipe(o, sizeof(*o));
}

struct kw_state {
	const struct kek_obj *kek;
	uint8_t k[NSUB][16], rand_[NSUB][16], sqn[NSUB][6], amf[2];
	uint8_t wrapped[NSUB][24]; /* eOPc, or a wrapped key */
	struct tw_milenage_vec v;
	uint8_t key[16];
	unsigned next;
};

static int kw_setup(void *p, const struct bench_thread *t)
{
	struct kw_state *s = p;
	uint64_t seed = t->seed;
	uint8_t opc[16];
	size_t len;

	s->kek = t->shared;
	bench_fill(&seed, s->k, sizeof(s->k));
	bench_fill(&seed, s->rand_, sizeof(s->rand_));
	bench_fill(&seed, s->sqn, sizeof(s->sqn));
	bench_fill(&seed, s->amf, sizeof(s->amf));
	for (unsigned i = 0; i < NSUB; i++) {
		bench_fill(&seed, opc, sizeof(opc));
		if (tw_keywrap_wrap_ctx(&s->kek->ctx, s->wrapped[i], 24, &len, opc, 16) != TW_OK ||
		    len != 24)
			return -1;
	}
	tw_wipe(opc, sizeof(opc));
	return 0;
}

static void kw_teardown(void *p)
{
	tw_wipe(p, sizeof(struct kw_state));
}

/* RFC 3394 unwrap on EVP: EVP_aes_128_wrap, a new context per call. */
static int evp_unwrap(uint8_t out[16], const uint8_t kek[16], const uint8_t wrapped[24])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0, rc = -1;

	if (!c)
		return -1;
	EVP_CIPHER_CTX_set_flags(c, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (EVP_DecryptInit_ex(c, EVP_aes_128_wrap(), NULL, kek, NULL) &&
	    EVP_DecryptUpdate(c, out, &l1, wrapped, 24) > 0 &&
	    EVP_DecryptFinal_ex(c, out + l1, &l2) > 0 && l1 + l2 == 16)
		rc = 0;
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/*
 * Cross-check input: KEK | key | a flip selector. Both sides unwrap the
 * same wrapped key (made by tw_keywrap_wrap); in[63] & 1 flips one bit of
 * it, and then both must reject it (output: one octet 0xff).
 */
static void kw_in(const uint8_t in[BENCH_IN_LEN], uint8_t wrapped[24])
{
	size_t len;

	if (tw_keywrap_wrap(wrapped, 24, &len, in, 16, in + 16, 16) != TW_OK)
		memset(wrapped, 0, 24);
	if (in[63] & 1)
		wrapped[in[62] % 24] ^= (uint8_t)(1u << (in[61] % 8));
}

static int unwrap_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	uint8_t wrapped[24];

	(void)p;
	kw_in(in, wrapped);
	if (tw_keywrap_unwrap(out, 16, len, in, 16, wrapped, 24) != TW_OK || *len != 16) {
		out[0] = 0xff;
		*len = 1;
	}
	return 0;
}

static int unwrap_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	uint8_t wrapped[24];

	(void)p;
	kw_in(in, wrapped);
	*len = 16;
	if (evp_unwrap(out, in, wrapped) != 0) {
		out[0] = 0xff;
		*len = 1;
	}
	return 0;
}

static int unwrap_run(void *p, uint64_t n)
{
	struct kw_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++)
		if (tw_keywrap_unwrap(s->key, 16, &len, s->kek->kek, 16,
				      s->wrapped[s->next++ % NSUB], 24) != TW_OK)
			return -1;
	return 0;
}

static int unwrap_evp_run(void *p, uint64_t n)
{
	struct kw_state *s = p;

	for (uint64_t i = 0; i < n; i++)
		if (evp_unwrap(s->key, s->kek->kek, s->wrapped[s->next++ % NSUB]) != 0)
			return -1;
	return 0;
}

static const struct bench_scenario sc_unwrap = {
	.name = "keywrap-unwrap",
	.impl = "twag",
	.what = "RFC 3394 unwrap of a 128-bit key, raw KEK (tw_keywrap_unwrap)",
	.refs = "keywrap-unwrap.evp",
	.state_size = sizeof(struct kw_state),
	.setup = kw_setup, .run = unwrap_run, .once = unwrap_once, .teardown = kw_teardown,
	.shared_size = sizeof(struct kek_obj),
	.shared_setup = kek_setup, .shared_teardown = kek_teardown,
};
BENCH_REGISTER(sc_unwrap)

static const struct bench_scenario sc_unwrap_evp = {
	.name = "keywrap-unwrap.evp",
	.impl = "openssl-evp",
	.what = "EVP aes-128-wrap decrypt, new context per key",
	.state_size = sizeof(struct kw_state),
	.setup = kw_setup, .run = unwrap_evp_run, .once = unwrap_evp_once,
	.teardown = kw_teardown,
	.shared_size = sizeof(struct kek_obj),
	.shared_setup = kek_setup, .shared_teardown = kek_teardown,
};
BENCH_REGISTER(sc_unwrap_evp)

/* ---- eOPc: unwrap per request, then f1-f5 ---- */

static int eopc_run(void *p, uint64_t n)
{
	struct kw_state *s = p;
	uint8_t opc[16];
	size_t len;
	int rc = 0;

	for (uint64_t i = 0; i < n && rc == 0; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (tw_keywrap_unwrap_ctx(&s->kek->ctx, opc, 16, &len, s->wrapped[j], 24) != TW_OK ||
		    tw_milenage_generate(s->k[j], opc, s->rand_[j], s->sqn[j], s->amf, NULL,
					 &s->v) != TW_OK)
			rc = -1;
	}
	tw_wipe(opc, sizeof(opc));
	return rc;
}

static int evp_eopc(const uint8_t kek[16], const uint8_t k[16], const uint8_t eopc[24],
		    const uint8_t rand_[16], const uint8_t sqn[6], const uint8_t amf[2],
		    uint8_t outs[5][16])
{
	uint8_t opc[16];
	int rc = -1;

	if (evp_unwrap(opc, kek, eopc) == 0 &&
	    bench_evp_milenage_outs(k, opc, rand_, sqn, amf, 4, outs) == 0)
		rc = 0;
	tw_wipe(opc, sizeof(opc));
	return rc;
}

static int eopc_evp_run(void *p, uint64_t n)
{
	struct kw_state *s = p;
	uint8_t outs[5][16];

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->rand_[j][15]++;
		if (evp_eopc(s->kek->kek, s->k[j], s->wrapped[j], s->rand_[j], s->sqn[j], s->amf,
			     outs) != 0)
			return -1;
	}
	return 0;
}

/* Input: K | OPc | RAND | SQN | AMF, wrapped under the state's KEK.
 * Output: MAC-A | RES | CK | IK | AK (54 octets). */
static int eopc_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct kw_state *s = p;
	uint8_t eopc[24], opc[16];
	struct tw_milenage_vec v;
	size_t l;
	int rc = -1;

	if (tw_keywrap_wrap(eopc, 24, &l, s->kek->kek, 16, in + 16, 16) != TW_OK ||
	    tw_keywrap_unwrap_ctx(&s->kek->ctx, opc, 16, &l, eopc, 24) != TW_OK ||
	    tw_milenage_generate(in, opc, in + 32, in + 48, in + 54, NULL, &v) != TW_OK)
		goto out;
	memcpy(out, v.mac_a, 8);
	memcpy(out + 8, v.res, 8);
	memcpy(out + 16, v.ck, 16);
	memcpy(out + 32, v.ik, 16);
	memcpy(out + 48, v.ak, 6);
	*len = 54;
	rc = 0;
out:
	tw_wipe(opc, sizeof(opc));
	tw_wipe(&v, sizeof(v));
	return rc;
}

static int eopc_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct kw_state *s = p;
	uint8_t eopc[24], outs[5][16];
	size_t l;

	if (tw_keywrap_wrap(eopc, 24, &l, s->kek->kek, 16, in + 16, 16) != TW_OK ||
	    evp_eopc(s->kek->kek, in, eopc, in + 32, in + 48, in + 54, outs) != 0)
		return -1;
	memcpy(out, outs[0], 8);
	memcpy(out + 8, outs[1] + 8, 8);
	memcpy(out + 16, outs[2], 16);
	memcpy(out + 32, outs[3], 16);
	memcpy(out + 48, outs[1], 6);
	*len = 54;
	tw_wipe(outs, sizeof(outs));
	return 0;
}

static const struct bench_scenario sc_eopc = {
	.name = "milenage-eopc",
	.impl = "twag",
	.what = "eOPc per request: RFC 3394 unwrap (KEK loaded) + f1-f5; vs milenage = OPc pre-loaded",
	.refs = "milenage-eopc.evp",
	.state_size = sizeof(struct kw_state),
	.setup = kw_setup, .run = eopc_run, .once = eopc_once, .teardown = kw_teardown,
	.shared_size = sizeof(struct kek_obj),
	.shared_setup = kek_setup, .shared_teardown = kek_teardown,
};
BENCH_REGISTER(sc_eopc)

static const struct bench_scenario sc_eopc_evp = {
	.name = "milenage-eopc.evp",
	.impl = "openssl-evp",
	.what = "EVP aes-128-wrap unwrap + Milenage on EVP aes-128-ecb, new contexts per request",
	.state_size = sizeof(struct kw_state),
	.setup = kw_setup, .run = eopc_evp_run, .once = eopc_evp_once, .teardown = kw_teardown,
	.shared_size = sizeof(struct kek_obj),
	.shared_setup = kek_setup, .shared_teardown = kek_teardown,
};
BENCH_REGISTER(sc_eopc_evp)
