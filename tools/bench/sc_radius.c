/*
 * twag-bench — RADIUS reply authenticators, what twagd computes for every
 * reply it sends: the Message-Authenticator (HMAC-MD5, RFC 3579 §3.2) and
 * then the Response Authenticator (MD5 over the packet and the secret, RFC
 * 2865 §3), over an Access-Challenge of 200 octets (an EAP-AKA' challenge
 * with State). One op = one reply signed:
 *   radius-sign       the replies of a batch of 16 signed together
 *                     (tw_radius_finish_responses_ctx: the MD5 work of the
 *                     16 in parallel lanes with AVX-512, two groups of 8
 *                     with AVX2, else one by one);
 *   radius-sign.one   the same replies one call each
 *                     (tw_radius_finish_response_ctx, prepared secret);
 *   radius-sign.evp   OpenSSL: HMAC(EVP_md5()) and EVP MD5 per reply.
 * Each op also copies its 200-octet template into the send buffer (the
 * three do the same).
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bench.h"
#include "bench_ref.h"
#include "twag/bytes.h"
#include "twag/radius.h"

enum { BATCH = 16, PKT = 200, SECRET = 16 };

struct rs_state {
	struct tw_radius_secret ks;
	uint8_t secret[SECRET];
	uint8_t tmpl[BATCH][PKT];   /* built, not finished: header, MA zeroed */
	uint8_t buf[BATCH][PKT];
	struct tw_radius_builder b[BATCH];
	struct tw_radius_finish_job jobs[BATCH];
};

/* Template i from seed material m (64 octets): Access-Challenge, id i,
 * Request Authenticator, Message-Authenticator first, EAP-Message and
 * State filling 200 octets. */
static int make_tmpl(struct rs_state *s, unsigned i, const uint8_t m[64])
{
	struct tw_radius_builder b;
	uint8_t eap[142], state[16];
	size_t len;

	memset(eap, 0, sizeof(eap));
	for (size_t k = 0; k < sizeof(eap); k++)
		eap[k] = (uint8_t)(m[k % 64] + k + i);
	eap[0] = 1;
	tw_store_be16(eap + 2, sizeof(eap));
	memcpy(state, m + 16, 16);
	state[0] ^= (uint8_t)i;
	tw_radius_build_init(&b, s->tmpl[i], PKT, TW_RADIUS_ACCESS_CHALLENGE, (uint8_t)i, m,
			     true);
	tw_radius_add_eap(&b, eap, sizeof(eap));
	tw_radius_add(&b, TW_RADIUS_STATE, state, sizeof(state));
	len = b.len;
	return b.err == TW_OK && len == PKT ? 0 : -1;
}

/* Fresh builders over the send buffers, from the templates. */
static void load(struct rs_state *s)
{
	for (unsigned i = 0; i < BATCH; i++) {
		memcpy(s->buf[i], s->tmpl[i], PKT);
		s->b[i] = (struct tw_radius_builder){ .buf = s->buf[i], .max = PKT, .len = PKT,
						      .err = TW_OK, .msg_auth_off = 22 };
		s->jobs[i].b = &s->b[i];
		s->jobs[i].s = &s->ks;
	}
}

static int setup_from(struct rs_state *s, const uint8_t m[64])
{
	memcpy(s->secret, m + 32, SECRET);
	if (tw_radius_secret_init(&s->ks, s->secret, SECRET) != TW_OK)
		return -1;
	for (unsigned i = 0; i < BATCH; i++)
		if (make_tmpl(s, i, m) != 0)
			return -1;
	return 0;
}

static int rs_setup(void *p, const struct bench_thread *t)
{
	uint64_t seed = t->seed;
	uint8_t m[64];

	bench_fill(&seed, m, sizeof(m));
	return setup_from(p, m);
}

static void rs_teardown(void *p)
{
	struct rs_state *s = p;

	tw_radius_secret_wipe(&s->ks);
	tw_wipe(s, sizeof(*s));
}

static int sign_batch(struct rs_state *s)
{
	load(s);
	tw_radius_finish_responses_ctx(s->jobs, BATCH);
	for (unsigned i = 0; i < BATCH; i++)
		if (s->jobs[i].rc != TW_OK)
			return -1;
	return 0;
}

static int sign_one(struct rs_state *s)
{
	size_t len;

	load(s);
	for (unsigned i = 0; i < BATCH; i++)
		if (tw_radius_finish_response_ctx(&s->b[i], &s->ks, &len) != TW_OK)
			return -1;
	return 0;
}

static int sign_evp(struct rs_state *s)
{
	for (unsigned i = 0; i < BATCH; i++) {
		uint8_t *b = s->buf[i], mac[16];
		unsigned ml = 0, dl = 0;
		EVP_MD_CTX *c;
		int ok;

		memcpy(b, s->tmpl[i], PKT);
		tw_store_be16(b + 2, PKT); /* Length: set by finishing */
		if (HMAC(EVP_md5(), s->secret, SECRET, b, PKT, mac, &ml) == NULL || ml != 16)
			return -1;
		memcpy(b + 22, mac, 16);
		c = EVP_MD_CTX_new();
		ok = c != NULL && EVP_DigestInit_ex(c, EVP_md5(), NULL) == 1 &&
		     EVP_DigestUpdate(c, b, PKT) == 1 && EVP_DigestUpdate(c, s->secret, SECRET) == 1 &&
		     EVP_DigestFinal_ex(c, b + 4, &dl) == 1 && dl == 16;
		EVP_MD_CTX_free(c);
		if (!ok)
			return -1;
	}
	return 0;
}

#define RUNNER(fn)                                                                     \
	static int fn##_run(void *p, uint64_t n)                                       \
	{                                                                              \
		for (uint64_t i = 0; i < n; i += BATCH)                                \
			if (fn(p) != 0)                                                \
				return -1;                                             \
		return 0;                                                              \
	}                                                                              \
	/* the input is the template material: reply 5 of the batch out */     \
	static int fn##_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out,    \
			     size_t *len)                                              \
	{                                                                              \
		struct rs_state *s = p;                                                \
		if (setup_from(s, in) != 0 || fn(s) != 0)                              \
			return -1;                                                     \
		memcpy(out, s->buf[5], PKT);                                           \
		*len = PKT;                                                            \
		return 0;                                                              \
	}

RUNNER(sign_batch)
RUNNER(sign_one)
RUNNER(sign_evp)

static const struct bench_scenario sc_sign = {
	.name = "radius-sign",
	.impl = "twag",
	.what = "RADIUS reply authenticators (MA + Response Auth.), 16 replies signed together",
	.refs = "radius-sign.one radius-sign.evp",
	.granule = BATCH,
	.state_size = sizeof(struct rs_state),
	.setup = rs_setup, .run = sign_batch_run, .once = sign_batch_once, .teardown = rs_teardown,
};
BENCH_REGISTER(sc_sign)

static const struct bench_scenario sc_sign_one = {
	.name = "radius-sign.one",
	.impl = "twag",
	.what = "RADIUS reply authenticators, one call per reply (prepared secret)",
	.granule = BATCH,
	.state_size = sizeof(struct rs_state),
	.setup = rs_setup, .run = sign_one_run, .once = sign_one_once, .teardown = rs_teardown,
};
BENCH_REGISTER(sc_sign_one)

static const struct bench_scenario sc_sign_evp = {
	.name = "radius-sign.evp",
	.impl = "openssl-evp",
	.what = "HMAC(EVP_md5()) and EVP MD5 per reply",
	.granule = BATCH,
	.state_size = sizeof(struct rs_state),
	.setup = rs_setup, .run = sign_evp_run, .once = sign_evp_once, .teardown = rs_teardown,
};
BENCH_REGISTER(sc_sign_evp)
