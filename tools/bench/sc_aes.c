/*
 * twag-bench — AES-128 (FIPS 197): one block under a loaded key, and a key
 * schedule plus six blocks, the AES work of one Milenage vector (TS 35.206
 * §4.1: TEMP and OUT1..OUT4 are five blocks; OUT5 for f5* a sixth). These
 * rows are the bound the Milenage rows should be compared with. Beside
 * them: OpenSSL EVP aes-128-ecb, one EVP_EncryptUpdate per block on a
 * context made once (the cheapest way EVP offers a single block).
 */
#include <string.h>

#include <openssl/evp.h>

#include "bench.h"
#include "twag/aes.h"
#include "twag/bytes.h"

enum { NBLK = 16, NKEY = 64 };

struct aes_state {
	struct tw_aes_ctx ctx;
	uint8_t key[NKEY][16];
	uint8_t blk[NBLK][16];
	unsigned next;
	EVP_CIPHER_CTX *evp;
};

static int aes_setup(void *p, const struct bench_thread *t)
{
	struct aes_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->key, sizeof(s->key));
	bench_fill(&seed, s->blk, sizeof(s->blk));
	return tw_aes_init_enc(&s->ctx, s->key[0], 16) == TW_OK ? 0 : -1;
}

static int evp_setup(void *p, const struct bench_thread *t)
{
	struct aes_state *s = p;

	if (aes_setup(p, t) != 0)
		return -1;
	s->evp = EVP_CIPHER_CTX_new();
	if (!s->evp || !EVP_EncryptInit_ex(s->evp, EVP_aes_128_ecb(), NULL, s->key[0], NULL) ||
	    !EVP_CIPHER_CTX_set_padding(s->evp, 0))
		return -1;
	return 0;
}

static void aes_teardown(void *p)
{
	struct aes_state *s = p;

	EVP_CIPHER_CTX_free(s->evp);
	tw_wipe(s, sizeof(*s));
}

/* Input: key | block; output: the ciphertext block. */
static int aes_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct tw_aes_ctx ctx;

	(void)p;
	if (tw_aes_init_enc(&ctx, in, 16) != TW_OK)
		return -1;
	tw_aes_encrypt(&ctx, out, in + 16);
	tw_aes_wipe(&ctx);
	*len = 16;
	return 0;
}

static int evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l, rc = -1;

	(void)p;
	if (c && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, in, NULL) &&
	    EVP_CIPHER_CTX_set_padding(c, 0) && EVP_EncryptUpdate(c, out, &l, in + 16, 16)) {
		*len = 16;
		rc = 0;
	}
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* Independent blocks (a throughput, not a latency chain). */
static int aes_run(void *p, uint64_t n)
{
	struct aes_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		uint8_t *b = s->blk[s->next++ % NBLK];
		tw_aes_encrypt(&s->ctx, b, b);
	}
	return 0;
}

static int evp_run(void *p, uint64_t n)
{
	struct aes_state *s = p;
	int l;

	for (uint64_t i = 0; i < n; i++) {
		uint8_t *b = s->blk[s->next++ % NBLK];
		if (!EVP_EncryptUpdate(s->evp, b, &l, b, 16))
			return -1;
	}
	return 0;
}

static const struct bench_scenario sc_aes = {
	.name = "aes",
	.impl = "twag",
	.what = "AES-128 one block, key loaded (tw_aes_encrypt)",
	.refs = "aes.evp",
	.state_size = sizeof(struct aes_state),
	.setup = aes_setup, .run = aes_run, .once = aes_once, .teardown = aes_teardown,
};
BENCH_REGISTER(sc_aes)

static const struct bench_scenario sc_aes_evp = {
	.name = "aes.evp",
	.impl = "openssl-evp",
	.what = "EVP aes-128-ecb, one EVP_EncryptUpdate per block",
	.state_size = sizeof(struct aes_state),
	.setup = evp_setup, .run = evp_run, .once = evp_once, .teardown = aes_teardown,
};
BENCH_REGISTER(sc_aes_evp)

/* Key schedule + 6 blocks: the AES cost floor of a Milenage vector. */
static int ks6_run(void *p, uint64_t n)
{
	struct aes_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++;
		if (tw_aes_init_enc(&s->ctx, s->key[j % NKEY], 16) != TW_OK)
			return -1;
		for (unsigned b = 0; b < 6; b++)
			tw_aes_encrypt(&s->ctx, s->blk[b], s->blk[b]);
	}
	return 0;
}

static int ks6_evp_run(void *p, uint64_t n)
{
	struct aes_state *s = p;
	int l;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++;
		if (!EVP_EncryptInit_ex(s->evp, NULL, NULL, s->key[j % NKEY], NULL))
			return -1;
		for (unsigned b = 0; b < 6; b++)
			if (!EVP_EncryptUpdate(s->evp, s->blk[b], &l, s->blk[b], 16))
				return -1;
	}
	return 0;
}

static const struct bench_scenario sc_aes_ks6 = {
	.name = "aes-ks6",
	.impl = "twag",
	.what = "AES-128 key schedule + 6 blocks: Milenage's AES bound",
	.refs = "aes-ks6.evp",
	.state_size = sizeof(struct aes_state),
	.setup = aes_setup, .run = ks6_run, .once = aes_once, .teardown = aes_teardown,
};
BENCH_REGISTER(sc_aes_ks6)

static const struct bench_scenario sc_aes_ks6_evp = {
	.name = "aes-ks6.evp",
	.impl = "openssl-evp",
	.what = "EVP re-keyed per vector (EVP_EncryptInit_ex on one context) + 6 updates",
	.state_size = sizeof(struct aes_state),
	.setup = evp_setup, .run = ks6_evp_run, .once = evp_once, .teardown = aes_teardown,
};
BENCH_REGISTER(sc_aes_ks6_evp)
