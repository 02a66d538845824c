/*
 * twag-bench — the EAP-AKA' key chain of one authentication: CK'/IK' from
 * CK/IK (3GPP TS 33.402 V17 Annex A.2, FC = 0x20, P0 = "WLAN", P1 = SQN ^
 * AK), then RFC 9048 §3.3 key expansion MK = PRF'(IK' | CK', "EAP-AKA'" |
 * Identity) into K_encr, K_aut, K_re, MSK and EMSK (208 octets: seven
 * HMAC-SHA-256 blocks). Reference: the same chain on OpenSSL's one-shot
 * HMAC() per block, as ordinary code would write it.
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/kdf.h"

enum { NSUB = 64, ID_LEN = 52 };

static const char net_name[] = "WLAN";

struct kdf_state {
	uint8_t ck[NSUB][16], ik[NSUB][16], sqn_ak[NSUB][6];
	uint8_t identity[ID_LEN];
	uint8_t out[32 + 208];
	unsigned next;
};

static int kdf_setup(void *p, const struct bench_thread *t)
{
	struct kdf_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->ck, sizeof(s->ck));
	bench_fill(&seed, s->ik, sizeof(s->ik));
	bench_fill(&seed, s->sqn_ak, sizeof(s->sqn_ak));
	/* An RFC 9048-style permanent identity: '6' + IMSI @ realm. */
	memcpy(s->identity, "6555444333222111@wlan.mnc093.mcc555.3gppnetwork.org", ID_LEN - 1);
	s->identity[ID_LEN - 1] = 'x';
	return 0;
}

static void kdf_teardown(void *p)
{
	tw_wipe(p, sizeof(struct kdf_state));
}

/* out = CK' | IK' | K_encr | K_aut | K_re | MSK | EMSK (240 octets). */
static int twag_chain(uint8_t out[240], const uint8_t ck[16], const uint8_t ik[16],
		      const uint8_t sqn_ak[6], const uint8_t *id, size_t id_len)
{
	struct tw_eap_aka_prime_keys keys;
	int rc = -1;

	if (tw_kdf_ck_ik_prime(out, out + 16, ck, ik, (const uint8_t *)net_name,
			       sizeof(net_name) - 1, sqn_ak) != TW_OK ||
	    tw_eap_aka_prime_derive(&keys, out + 16, out, id, id_len) != TW_OK)
		goto out;
	memcpy(out + 32, keys.k_encr, 16);
	memcpy(out + 48, keys.k_aut, 32);
	memcpy(out + 80, keys.k_re, 32);
	memcpy(out + 112, keys.msk, 64);
	memcpy(out + 176, keys.emsk, 64);
	rc = 0;
out:
	tw_wipe(&keys, sizeof(keys));
	return rc;
}

static int evp_chain(uint8_t out[240], const uint8_t ck[16], const uint8_t ik[16],
		     const uint8_t sqn_ak[6], const uint8_t *id, size_t id_len)
{
	uint8_t key[32], s[1 + 4 + 2 + 6 + 2], t[32 + 8 + 256 + 1], mk[7 * 32];
	unsigned md_len;
	size_t tlen = 0, slen = 8 + id_len;
	int rc = -1;

	if (id_len > 256)
		return -1;
	/* TS 33.220 B.2 / TS 33.402 A.2: S = FC | P0 | L0 | P1 | L1,
	 * CK' | IK' = HMAC-SHA-256(CK | IK, S). */
	memcpy(key, ck, 16);
	memcpy(key + 16, ik, 16);
	s[0] = 0x20;
	memcpy(s + 1, net_name, 4);
	s[5] = 0;
	s[6] = 4;
	memcpy(s + 7, sqn_ak, 6);
	s[13] = 0;
	s[14] = 6;
	if (!HMAC(EVP_sha256(), key, 32, s, sizeof(s), out, &md_len))
		goto out;
	/* RFC 9048 §3.4: PRF'(K = IK' | CK', S = "EAP-AKA'" | Identity):
	 * T1 = HMAC(K, S | 1), Tn = HMAC(K, Tn-1 | S | n). */
	memcpy(key, out + 16, 16);
	memcpy(key + 16, out, 16);
	for (unsigned n = 1; n <= 7; n++) {
		tlen = 0;
		if (n > 1) {
			memcpy(t, mk + (n - 2) * 32, 32);
			tlen = 32;
		}
		memcpy(t + tlen, "EAP-AKA'", 8);
		memcpy(t + tlen + 8, id, id_len);
		t[tlen + slen] = (uint8_t)n;
		if (!HMAC(EVP_sha256(), key, 32, t, tlen + slen + 1, mk + (n - 1) * 32, &md_len))
			goto out;
	}
	memcpy(out + 32, mk, 208);
	rc = 0;
out:
	tw_wipe(key, sizeof(key));
	tw_wipe(t, sizeof(t));
	tw_wipe(mk, sizeof(mk));
	return rc;
}

static int kdf_run(void *p, uint64_t n)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->sqn_ak[j][5]++;
		if (twag_chain(s->out, s->ck[j], s->ik[j], s->sqn_ak[j], s->identity, ID_LEN) != 0)
			return -1;
	}
	return 0;
}

static int kdf_evp_run(void *p, uint64_t n)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->sqn_ak[j][5]++;
		if (evp_chain(s->out, s->ck[j], s->ik[j], s->sqn_ak[j], s->identity, ID_LEN) != 0)
			return -1;
	}
	return 0;
}

/* Input: CK | IK | SQN^AK | identity (the remaining 26 octets; its length
 * varies with in[63] so both sides see different lengths too). */
static int kdf_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	if (twag_chain(out, in, in + 16, in + 32, in + 38, 1 + in[63] % 25) != 0)
		return -1;
	*len = 240;
	return 0;
}

static int kdf_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	if (evp_chain(out, in, in + 16, in + 32, in + 38, 1 + in[63] % 25) != 0)
		return -1;
	*len = 240;
	return 0;
}

static const struct bench_scenario sc_kdf = {
	.name = "aka-prime-keys",
	.impl = "twag",
	.what = "CK'/IK' (TS 33.402 A.2) + RFC 9048 PRF' to K_encr..EMSK",
	.refs = "aka-prime-keys.evp",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = kdf_run, .once = kdf_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_kdf)

static const struct bench_scenario sc_kdf_evp = {
	.name = "aka-prime-keys.evp",
	.impl = "openssl-evp",
	.what = "the same chain, OpenSSL HMAC() one-shot per block (8 calls)",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = kdf_evp_run, .once = kdf_evp_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_kdf_evp)
