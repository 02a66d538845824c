/*
 * twag-bench — the EAP-AKA' key chain of one authentication: CK'/IK' from
 * CK/IK (3GPP TS 33.402 V17 Annex A.2, FC = 0x20, P0 = "WLAN", P1 = SQN ^
 * AK), then RFC 9048 §3.3 key expansion MK = PRF'(IK' | CK', "EAP-AKA'" |
 * Identity) into K_encr, K_aut, K_re, MSK and EMSK (208 octets: seven
 * HMAC-SHA-256 blocks). Reference: the same chain on OpenSSL's one-shot
 * HMAC() per block, as ordinary code would write it.
 *
 * Further down: the TS 33.220 generic KDF, the 5G KAUSF -> KSEAF -> KAMF
 * chain (TS 33.501 V17 Annex A), and the EAP-AKA / EAP-SIM keys (RFC 4187
 * §7, RFC 4186 §7, FIPS 186-2 PRF), each beside the same on OpenSSL.
 */
#include <string.h>

/* SHA1_Transform for the FIPS 186-2 PRF reference (see below). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

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

/* ==== TS 33.220 generic KDF, the 5G chain, EAP-AKA/SIM keys ==== */

/* TS 33.220 Annex B.2.0 on OpenSSL's one-shot HMAC(): S = FC | P0 | L0 |
 * ... | Pn | Ln, key = HMAC-SHA-256(Key, S). */
static int evp_kdf(uint8_t out[32], const uint8_t *key, size_t key_len, uint8_t fc,
		   const struct tw_kdf_param *pp, size_t n)
{
	uint8_t s[256];
	size_t len = 0;
	unsigned md_len;

	s[len++] = fc;
	for (size_t i = 0; i < n; i++) {
		if (len + pp[i].len + 2 > sizeof(s))
			return -1;
		memcpy(s + len, pp[i].p, pp[i].len);
		len += pp[i].len;
		s[len++] = (uint8_t)(pp[i].len >> 8);
		s[len++] = (uint8_t)pp[i].len;
	}
	return HMAC(EVP_sha256(), key, (int)key_len, s, len, out, &md_len) ? 0 : -1;
}

static const char snn[] = "5G:mnc093.mcc208.3gppnetwork.org"; /* TS 24.501 9.12.1 */
static const uint8_t abba[2] = {0x00, 0x00};                     /* TS 33.501 A.7.1 */

/* Generic KDF: 32-octet key, FC = 0x6a, P0 = 32 octets, P1 = 6 octets. */
static int gen_once_common(const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len, bool evp)
{
	struct tw_kdf_param pp[2] = {{in + 32, 26}, {in + 58, 6}};

	*len = 32;
	if (evp)
		return evp_kdf(out, in, 32, 0x6a, pp, 2);
	return tw_kdf_3gpp(out, in, 32, 0x6a, pp, 2) == TW_OK ? 0 : -1;
}

static int gen_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	return gen_once_common(in, out, len, false);
}

static int gen_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	return gen_once_common(in, out, len, true);
}

static int gen_run_common(void *p, uint64_t n, bool evp)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		struct tw_kdf_param pp[2] = {{(const uint8_t *)snn, sizeof(snn) - 1},
					     {s->sqn_ak[j], 6}};
		s->sqn_ak[j][5]++;
		int rc = evp ? evp_kdf(s->out, s->ck[j], 32, 0x6a, pp, 2)
			     : (tw_kdf_3gpp(s->out, s->ck[j], 32, 0x6a, pp, 2) == TW_OK ? 0 : -1);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int gen_run(void *p, uint64_t n)
{
	return gen_run_common(p, n, false);
}

static int gen_evp_run(void *p, uint64_t n)
{
	return gen_run_common(p, n, true);
}

static const struct bench_scenario sc_gen = {
	.name = "kdf-3gpp",
	.impl = "twag",
	.what = "TS 33.220 B.2 generic KDF: 256-bit key, FC + 2 parameters (tw_kdf_3gpp)",
	.refs = "kdf-3gpp.evp",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = gen_run, .once = gen_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_gen)

static const struct bench_scenario sc_gen_evp = {
	.name = "kdf-3gpp.evp",
	.impl = "openssl-evp",
	.what = "the same S on OpenSSL one-shot HMAC(EVP_sha256())",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = gen_evp_run, .once = gen_evp_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_gen_evp)

/* 5G: KAUSF (A.2) -> KSEAF (A.6) -> KAMF (A.7, IMSI SUPI, ABBA 0x0000).
 * out = KAUSF | KSEAF | KAMF (96 octets). */
static int twag_5g(uint8_t out[96], const uint8_t ck[16], const uint8_t ik[16],
		   const uint8_t sqn_ak[6], const char *imsi)
{
	if (tw_kdf_kausf(out, ck, ik, (const uint8_t *)snn, sizeof(snn) - 1, sqn_ak) != TW_OK ||
	    tw_kdf_kseaf(out + 32, out, (const uint8_t *)snn, sizeof(snn) - 1) != TW_OK ||
	    tw_kdf_kamf_imsi(out + 64, out + 32, imsi, strlen(imsi), abba, 2) != TW_OK)
		return -1;
	return 0;
}

static int evp_5g(uint8_t out[96], const uint8_t ck[16], const uint8_t ik[16],
		  const uint8_t sqn_ak[6], const char *imsi)
{
	uint8_t key[32];
	struct tw_kdf_param p_ausf[2] = {{(const uint8_t *)snn, sizeof(snn) - 1}, {sqn_ak, 6}};
	struct tw_kdf_param p_seaf[1] = {{(const uint8_t *)snn, sizeof(snn) - 1}};
	struct tw_kdf_param p_amf[2] = {{(const uint8_t *)imsi, strlen(imsi)}, {abba, 2}};
	int rc;

	memcpy(key, ck, 16);
	memcpy(key + 16, ik, 16);
	rc = evp_kdf(out, key, 32, 0x6a, p_ausf, 2) || evp_kdf(out + 32, out, 32, 0x6c, p_seaf, 1) ||
	     evp_kdf(out + 64, out + 32, 32, 0x6d, p_amf, 2) ? -1 : 0;
	tw_wipe(key, sizeof(key));
	return rc;
}

static const char bench_imsi[] = "208930000000001";

static int g5_run_common(void *p, uint64_t n, bool evp)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->sqn_ak[j][5]++;
		int rc = evp ? evp_5g(s->out, s->ck[j], s->ik[j], s->sqn_ak[j], bench_imsi)
			     : twag_5g(s->out, s->ck[j], s->ik[j], s->sqn_ak[j], bench_imsi);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int g5_run(void *p, uint64_t n)
{
	return g5_run_common(p, n, false);
}

static int g5_evp_run(void *p, uint64_t n)
{
	return g5_run_common(p, n, true);
}

/* Input: CK | IK | SQN^AK | IMSI digits from in[38..52] */
static void in_imsi(const uint8_t in[BENCH_IN_LEN], char imsi[16])
{
	for (int i = 0; i < 15; i++)
		imsi[i] = (char)('0' + in[38 + i] % 10);
	imsi[15] = 0;
}

static int g5_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	char imsi[16];

	(void)p;
	in_imsi(in, imsi);
	*len = 96;
	return twag_5g(out, in, in + 16, in + 32, imsi);
}

static int g5_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	char imsi[16];

	(void)p;
	in_imsi(in, imsi);
	*len = 96;
	return evp_5g(out, in, in + 16, in + 32, imsi);
}

static const struct bench_scenario sc_5g = {
	.name = "5g-keys",
	.impl = "twag",
	.what = "TS 33.501 A.2/A.6/A.7: KAUSF -> KSEAF -> KAMF (IMSI SUPI)",
	.refs = "5g-keys.evp",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = g5_run, .once = g5_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_5g)

static const struct bench_scenario sc_5g_evp = {
	.name = "5g-keys.evp",
	.impl = "openssl-evp",
	.what = "the same chain, OpenSSL one-shot HMAC() per key (3 calls)",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = g5_evp_run, .once = g5_evp_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_5g_evp)

/*
 * EAP-AKA (RFC 4187 §7) and EAP-SIM (RFC 4186 §7) keys: MK = SHA1(...),
 * then the FIPS 186-2 change-notice-1 PRF. OpenSSL has no such PRF; the
 * ordinary way to write it on OpenSSL is SHA1_Transform for G (the SHA-1
 * compression of XKEY zero-padded to 512 bits), a deprecated low-level
 * call, so its deprecation warning is silenced for this reference only.
 */
static void evp_fips186_2(uint8_t out[160], const uint8_t mk[20])
{
	uint8_t xkey[20], block[64];
	SHA_CTX c;

	memcpy(xkey, mk, 20);
	for (int j = 0; j < 4; j++) {
		for (int i = 0; i < 2; i++) {
			uint8_t *w = out + j * 40 + i * 20;
			memset(block, 0, sizeof(block));
			memcpy(block, xkey, 20);
			SHA1_Init(&c);
			SHA1_Transform(&c, block);
			tw_store_be32(w, c.h0);
			tw_store_be32(w + 4, c.h1);
			tw_store_be32(w + 8, c.h2);
			tw_store_be32(w + 12, c.h3);
			tw_store_be32(w + 16, c.h4);
			/* XKEY = (1 + XKEY + w_i) mod 2^160 */
			unsigned carry = 1;
			for (int b = 19; b >= 0; b--) {
				carry += (unsigned)xkey[b] + w[b];
				xkey[b] = (uint8_t)carry;
				carry >>= 8;
			}
		}
	}
	tw_wipe(xkey, sizeof(xkey));
	tw_wipe(block, sizeof(block));
	tw_wipe(&c, sizeof(c));
}

/* out = MK | K_encr | K_aut | MSK | EMSK (180 octets) */
static void join_sim_keys(const struct tw_eap_sim_keys *k, uint8_t *out)
{
	memcpy(out, k->mk, 20);
	memcpy(out + 20, k->k_encr, 16);
	memcpy(out + 36, k->k_aut, 16);
	memcpy(out + 52, k->msk, 64);
	memcpy(out + 116, k->emsk, 64);
}

static int twag_aka_keys(uint8_t out[180], const uint8_t *id, size_t id_len,
			 const uint8_t ik[16], const uint8_t ck[16])
{
	struct tw_eap_sim_keys k;
	int rc = tw_eap_aka_derive(&k, id, id_len, ik, ck) == TW_OK ? 0 : -1;

	if (rc == 0)
		join_sim_keys(&k, out);
	tw_wipe(&k, sizeof(k));
	return rc;
}

static int evp_aka_keys(uint8_t out[180], const uint8_t *id, size_t id_len,
			const uint8_t ik[16], const uint8_t ck[16])
{
	uint8_t buf[256 + 32];

	if (id_len > 256)
		return -1;
	/* RFC 4187 §7: MK = SHA1(Identity | IK | CK) */
	memcpy(buf, id, id_len);
	memcpy(buf + id_len, ik, 16);
	memcpy(buf + id_len + 16, ck, 16);
	if (!EVP_Digest(buf, id_len + 32, out, NULL, EVP_sha1(), NULL))
		return -1;
	evp_fips186_2(out + 20, out);
	tw_wipe(buf, sizeof(buf));
	return 0;
}

static int akak_run_common(void *p, uint64_t n, bool evp)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->ck[j][15]++;
		int rc = evp ? evp_aka_keys(s->out, s->identity, ID_LEN, s->ik[j], s->ck[j])
			     : twag_aka_keys(s->out, s->identity, ID_LEN, s->ik[j], s->ck[j]);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int akak_run(void *p, uint64_t n)
{
	return akak_run_common(p, n, false);
}

static int akak_evp_run(void *p, uint64_t n)
{
	return akak_run_common(p, n, true);
}

/* Input: CK | IK | identity (1..32 octets from in[32..]) */
static int akak_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 180;
	return twag_aka_keys(out, in + 32, 1 + in[63] % 31, in + 16, in);
}

static int akak_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 180;
	return evp_aka_keys(out, in + 32, 1 + in[63] % 31, in + 16, in);
}

static const struct bench_scenario sc_akak = {
	.name = "aka-keys",
	.impl = "twag",
	.what = "EAP-AKA keys (RFC 4187 §7): MK = SHA1(Id|IK|CK), FIPS 186-2 PRF to EMSK",
	.refs = "aka-keys.evp",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = akak_run, .once = akak_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_akak)

static const struct bench_scenario sc_akak_evp = {
	.name = "aka-keys.evp",
	.impl = "openssl-evp",
	.what = "EVP_Digest(SHA-1) for MK + PRF on SHA1_Transform (OpenSSL has no FIPS 186-2 PRF)",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = akak_evp_run, .once = akak_evp_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_akak_evp)

static const uint8_t version_list[2] = {0x00, 0x01}; /* RFC 4186 §10.2: version 1 */

static int twag_sim_keys(uint8_t out[180], const uint8_t *id, size_t id_len,
			 const uint8_t kc[3][8], const uint8_t nonce_mt[16])
{
	struct tw_eap_sim_keys k;
	int rc = tw_eap_sim_derive(&k, id, id_len, kc, 3, nonce_mt, version_list, 2, 1) == TW_OK
			 ? 0 : -1;

	if (rc == 0)
		join_sim_keys(&k, out);
	tw_wipe(&k, sizeof(k));
	return rc;
}

static int evp_sim_keys(uint8_t out[180], const uint8_t *id, size_t id_len,
			const uint8_t kc[3][8], const uint8_t nonce_mt[16])
{
	uint8_t buf[256 + 24 + 16 + 4];
	size_t len = id_len;

	if (id_len > 256)
		return -1;
	/* RFC 4186 §7: MK = SHA1(Identity | n*Kc | NONCE_MT | Version List |
	 * Selected Version) */
	memcpy(buf, id, id_len);
	memcpy(buf + len, kc, 24);
	len += 24;
	memcpy(buf + len, nonce_mt, 16);
	len += 16;
	memcpy(buf + len, version_list, 2);
	buf[len + 2] = 0;
	buf[len + 3] = 1;
	len += 4;
	if (!EVP_Digest(buf, len, out, NULL, EVP_sha1(), NULL))
		return -1;
	evp_fips186_2(out + 20, out);
	tw_wipe(buf, sizeof(buf));
	return 0;
}

static int simk_run_common(void *p, uint64_t n, bool evp)
{
	struct kdf_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		const uint8_t(*kc)[8] = (const uint8_t(*)[8])s->ck[j]; /* 16 + 16 octets: 3 Kc */
		s->ck[j][15]++;
		int rc = evp ? evp_sim_keys(s->out, s->identity, ID_LEN, kc, s->ik[(j + 1) % NSUB])
			     : twag_sim_keys(s->out, s->identity, ID_LEN, kc, s->ik[(j + 1) % NSUB]);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int simk_run(void *p, uint64_t n)
{
	return simk_run_common(p, n, false);
}

static int simk_evp_run(void *p, uint64_t n)
{
	return simk_run_common(p, n, true);
}

/* Input: 3 Kc (24) | NONCE_MT (16) | identity (1..24 octets) */
static int simk_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 180;
	return twag_sim_keys(out, in + 40, 1 + in[63] % 23, (const uint8_t(*)[8])in, in + 24);
}

static int simk_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 180;
	return evp_sim_keys(out, in + 40, 1 + in[63] % 23, (const uint8_t(*)[8])in, in + 24);
}

static const struct bench_scenario sc_simk = {
	.name = "sim-keys",
	.impl = "twag",
	.what = "EAP-SIM keys (RFC 4186 §7), 3 triplets: MK = SHA1(...), FIPS 186-2 PRF",
	.refs = "sim-keys.evp",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = simk_run, .once = simk_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_simk)

static const struct bench_scenario sc_simk_evp = {
	.name = "sim-keys.evp",
	.impl = "openssl-evp",
	.what = "EVP_Digest(SHA-1) for MK + PRF on SHA1_Transform",
	.state_size = sizeof(struct kdf_state),
	.setup = kdf_setup, .run = simk_evp_run, .once = simk_evp_once, .teardown = kdf_teardown,
};
BENCH_REGISTER(sc_simk_evp)
