/*
 * twag-bench — the 802.11 4-way handshake crypto of one station (IEEE Std
 * 802.11-2020 §12.7.1.3, §12.7.2):
 *   ptk          PTK = PRF-384(PMK, "Pairwise key expansion", Min/Max(AA,
 *                SPA) || Min/Max(ANonce, SNonce)), AKM 2, CCMP-128
 *                (three HMAC-SHA-1 blocks)
 *   ptk-sha256   the same with KDF-SHA-256 (AKM 5: two HMAC-SHA-256 blocks)
 *   eapol-mic    the Key MIC of a 4-way message 2 (121 octets, RSN element
 *                as key data) under a per-station KCK: HMAC-SHA1-128 (AKM 2)
 *   eapol-mic-cmac  the same with AES-128-CMAC (AKM 5)
 * References: the same work written the ordinary way on OpenSSL: HMAC()
 * one-shot per PRF block; for the MIC, a copy of the frame with the MIC
 * zeroed, then HMAC() or an EVP_MAC "CMAC" context made once and re-keyed
 * per frame (EVP_MAC_init with the station's KCK).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/wlan_keys.h"

enum { NSTA = 64, FRAME_LEN = 121, KD_OFF = 99 };

static const char label[] = "Pairwise key expansion";

/* A 4-way message 2 as a supplicant sends it (key info: version 2 or 3,
 * pairwise, MIC), key data = an RSN element for CCMP/PSK. */
static const uint8_t msg2_head[KD_OFF] = {
	0x01, 0x03, 0x00, 0x75, 0x02, 0x01, 0x0a, 0x00, 0x10,
	0, 0, 0, 0, 0, 0, 0, 1,
};
static const uint8_t rsn_ie[22] = {
	0x30, 0x14, 0x01, 0x00, 0x00, 0x0f, 0xac, 0x04, 0x01, 0x00, 0x00,
	0x0f, 0xac, 0x04, 0x01, 0x00, 0x00, 0x0f, 0xac, 0x02, 0x00, 0x00,
};

struct wlan_state {
	unsigned akm;
	unsigned next;
	uint8_t pmk[NSTA][32], aa[6], spa[NSTA][6], anonce[32], snonce[NSTA][32];
	uint8_t kck[NSTA][16];
	uint8_t frame[NSTA][FRAME_LEN];
	uint8_t out[64];
	EVP_MAC *mac;
	EVP_MAC_CTX *cmac;
};

static void make_frame(uint8_t f[FRAME_LEN], unsigned akm, const uint8_t snonce[32])
{
	memcpy(f, msg2_head, KD_OFF);
	f[6] = akm <= 2 ? 0x0a : 0x0b; /* descriptor version 2 or 3 */
	memcpy(f + TW_EAPOL_KEY_NONCE_OFF, snonce, 32);
	f[KD_OFF - 1] = sizeof(rsn_ie);
	memcpy(f + KD_OFF, rsn_ie, sizeof(rsn_ie));
}

static int setup_akm(void *p, const struct bench_thread *t, unsigned akm)
{
	struct wlan_state *s = p;
	uint64_t seed = t->seed;

	s->akm = akm;
	bench_fill(&seed, s->pmk, sizeof(s->pmk));
	bench_fill(&seed, s->aa, sizeof(s->aa));
	bench_fill(&seed, s->spa, sizeof(s->spa));
	bench_fill(&seed, s->anonce, sizeof(s->anonce));
	bench_fill(&seed, s->snonce, sizeof(s->snonce));
	bench_fill(&seed, s->kck, sizeof(s->kck));
	for (unsigned i = 0; i < NSTA; i++)
		make_frame(s->frame[i], akm, s->snonce[i]);
	return 0;
}

static int setup_sha1(void *p, const struct bench_thread *t)
{
	return setup_akm(p, t, TW_WLAN_AKM_PSK);
}

static int setup_sha256(void *p, const struct bench_thread *t)
{
	return setup_akm(p, t, TW_WLAN_AKM_8021X_SHA256);
}

static int setup_cmac_evp(void *p, const struct bench_thread *t)
{
	struct wlan_state *s = p;

	setup_akm(p, t, TW_WLAN_AKM_8021X_SHA256);
	s->mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	s->cmac = s->mac != NULL ? EVP_MAC_CTX_new(s->mac) : NULL;
	return s->cmac != NULL ? 0 : -1;
}

static void wlan_teardown(void *p)
{
	struct wlan_state *s = p;

	EVP_MAC_CTX_free(s->cmac);
	EVP_MAC_free(s->mac);
	tw_wipe(s, sizeof(*s));
}

/* ---- PTK ---- */

static int twag_ptk(uint8_t out[48], unsigned akm, const uint8_t *pmk,
		    const uint8_t *aa, const uint8_t *spa, const uint8_t *an,
		    const uint8_t *sn)
{
	struct tw_wlan_ptk ptk;
	int rc = tw_wlan_ptk_derive(&ptk, akm, TW_WLAN_CIPHER_CCMP_128, pmk, aa,
				    spa, an, sn) == TW_OK ? 0 : -1;

	memcpy(out, ptk.kck, 16);
	memcpy(out + 16, ptk.kek, 16);
	memcpy(out + 32, ptk.tk, 16);
	tw_wlan_ptk_wipe(&ptk);
	return rc;
}

/* The ordinary way: build A || 0 || B || i and call HMAC() per block
 * (PRF, §12.7.1.2) or i || label || B || Length (KDF, §12.7.1.7.2). */
static int evp_ptk(uint8_t out[48], unsigned akm, const uint8_t *pmk,
		   const uint8_t *aa, const uint8_t *spa, const uint8_t *an,
		   const uint8_t *sn)
{
	uint8_t b[76], msg[2 + sizeof(label) + 76 + 2], h[3 * 20];
	int a1 = memcmp(aa, spa, 6) < 0, n1 = memcmp(an, sn, 32) < 0;
	unsigned hl;
	size_t ll = sizeof(label) - 1;

	memcpy(b, a1 ? aa : spa, 6);
	memcpy(b + 6, a1 ? spa : aa, 6);
	memcpy(b + 12, n1 ? an : sn, 32);
	memcpy(b + 44, n1 ? sn : an, 32);
	if (akm <= 2) {
		memcpy(msg, label, ll);
		msg[ll] = 0;
		memcpy(msg + ll + 1, b, 76);
		for (unsigned i = 0; i < 3; i++) {
			msg[ll + 77] = (uint8_t)i;
			if (!HMAC(EVP_sha1(), pmk, 32, msg, ll + 78, h + 20 * i, &hl))
				return -1;
		}
		memcpy(out, h, 48);
	} else {
		memcpy(msg + 2, label, ll);
		memcpy(msg + 2 + ll, b, 76);
		msg[2 + ll + 76] = (uint8_t)(384 & 0xff);
		msg[3 + ll + 76] = (uint8_t)(384 >> 8);
		for (unsigned i = 1; i <= 2; i++) {
			msg[0] = (uint8_t)i;
			msg[1] = 0;
			if (!HMAC(EVP_sha256(), pmk, 32, msg, ll + 80, h, &hl))
				return -1;
			memcpy(out + 32 * (i - 1), h, i == 1 ? 32 : 16);
		}
	}
	return 0;
}

typedef int (*ptk_fn)(uint8_t *, unsigned, const uint8_t *, const uint8_t *,
		      const uint8_t *, const uint8_t *, const uint8_t *);

static int ptk_run_with(struct wlan_state *s, uint64_t n, ptk_fn fn)
{
	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSTA;

		s->anonce[31]++; /* a fresh ANonce per handshake */
		if (fn(s->out, s->akm, s->pmk[j], s->aa, s->spa[j], s->anonce,
		       s->snonce[j]) != 0)
			return -1;
	}
	return 0;
}

static int ptk_run(void *p, uint64_t n)
{
	return ptk_run_with(p, n, twag_ptk);
}

static int ptk_evp_run(void *p, uint64_t n)
{
	return ptk_run_with(p, n, evp_ptk);
}

/* Input: PMK | AA | SPA | 20 octets; ANonce = in[32..63], SNonce =
 * in[0..31] with its last octet flipped (so both orders occur). */
static int ptk_once_with(struct wlan_state *s, const uint8_t in[BENCH_IN_LEN],
			 uint8_t *out, size_t *len, ptk_fn fn)
{
	uint8_t sn[32];

	memcpy(sn, in, 32);
	sn[0] ^= in[63];
	if (fn(out, s->akm, in, in + 32, in + 38, in + 32, sn) != 0)
		return -1;
	*len = 48;
	return 0;
}

static int ptk_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return ptk_once_with(p, in, out, len, twag_ptk);
}

static int ptk_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return ptk_once_with(p, in, out, len, evp_ptk);
}

/* ---- EAPOL-Key MIC ---- */

static int twag_mic(struct wlan_state *s, uint8_t out[16], const uint8_t kck[16],
		    const uint8_t *frame)
{
	return tw_wlan_eapol_mic(out, s->akm, kck, 16, frame, FRAME_LEN) == TW_OK ? 0 : -1;
}

static int evp_mic(struct wlan_state *s, uint8_t out[16], const uint8_t kck[16],
		   const uint8_t *frame)
{
	uint8_t copy[FRAME_LEN], h[20];
	unsigned hl;
	size_t ol = 0;

	memcpy(copy, frame, FRAME_LEN);
	memset(copy + TW_EAPOL_KEY_MIC_OFF, 0, 16);
	if (s->akm <= 2) {
		if (!HMAC(EVP_sha1(), kck, 16, copy, FRAME_LEN, h, &hl))
			return -1;
		memcpy(out, h, 16);
		return 0;
	}
	OSSL_PARAM params[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)"AES-128-CBC", 0),
		OSSL_PARAM_construct_end(),
	};
	if (EVP_MAC_init(s->cmac, kck, 16, params) != 1 ||
	    EVP_MAC_update(s->cmac, copy, FRAME_LEN) != 1 ||
	    EVP_MAC_final(s->cmac, out, &ol, 16) != 1 || ol != 16)
		return -1;
	return 0;
}

typedef int (*mic_fn)(struct wlan_state *, uint8_t *, const uint8_t *, const uint8_t *);

static int mic_run_with(struct wlan_state *s, uint64_t n, mic_fn fn)
{
	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSTA;

		s->frame[j][16]++; /* the replay counter moves per message */
		if (fn(s, s->out, s->kck[j], s->frame[j]) != 0)
			return -1;
	}
	return 0;
}

static int mic_run(void *p, uint64_t n)
{
	return mic_run_with(p, n, twag_mic);
}

static int mic_evp_run(void *p, uint64_t n)
{
	return mic_run_with(p, n, evp_mic);
}

/* Input: KCK | SNonce | replay counter | 8 octets XORed into the MIC field
 * (which must not matter). */
static int mic_once_with(struct wlan_state *s, const uint8_t in[BENCH_IN_LEN],
			 uint8_t *out, size_t *len, mic_fn fn)
{
	uint8_t f[FRAME_LEN];

	make_frame(f, s->akm, in + 16);
	memcpy(f + 9, in + 48, 8);
	tw_xor(f + TW_EAPOL_KEY_MIC_OFF, f + TW_EAPOL_KEY_MIC_OFF, in + 56, 8);
	if (fn(s, out, in, f) != 0)
		return -1;
	*len = 16;
	return 0;
}

static int mic_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return mic_once_with(p, in, out, len, twag_mic);
}

static int mic_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return mic_once_with(p, in, out, len, evp_mic);
}

/* ---- registrations ---- */

static const struct bench_scenario sc_ptk = {
	.name = "ptk", .impl = "twag",
	.what = "802.11 PTK: PRF-384 (HMAC-SHA-1), AKM 2, CCMP-128",
	.refs = "ptk.evp", .state_size = sizeof(struct wlan_state),
	.setup = setup_sha1, .run = ptk_run, .once = ptk_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_ptk)

static const struct bench_scenario sc_ptk_evp = {
	.name = "ptk.evp", .impl = "openssl-evp",
	.what = "the same PRF, OpenSSL HMAC() one-shot per block (3 calls)",
	.state_size = sizeof(struct wlan_state),
	.setup = setup_sha1, .run = ptk_evp_run, .once = ptk_evp_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_ptk_evp)

static const struct bench_scenario sc_ptk256 = {
	.name = "ptk-sha256", .impl = "twag",
	.what = "802.11 PTK: KDF-SHA-256-384, AKM 5, CCMP-128",
	.refs = "ptk-sha256.evp", .state_size = sizeof(struct wlan_state),
	.setup = setup_sha256, .run = ptk_run, .once = ptk_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_ptk256)

static const struct bench_scenario sc_ptk256_evp = {
	.name = "ptk-sha256.evp", .impl = "openssl-evp",
	.what = "the same KDF, OpenSSL HMAC() one-shot per block (2 calls)",
	.state_size = sizeof(struct wlan_state),
	.setup = setup_sha256, .run = ptk_evp_run, .once = ptk_evp_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_ptk256_evp)

static const struct bench_scenario sc_mic = {
	.name = "eapol-mic", .impl = "twag",
	.what = "EAPOL-Key MIC of a 121-octet message 2: HMAC-SHA1-128 (AKM 2)",
	.refs = "eapol-mic.evp", .state_size = sizeof(struct wlan_state),
	.setup = setup_sha1, .run = mic_run, .once = mic_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_mic)

static const struct bench_scenario sc_mic_evp = {
	.name = "eapol-mic.evp", .impl = "openssl-evp",
	.what = "the same MIC: frame copy with MIC zeroed, OpenSSL HMAC()",
	.state_size = sizeof(struct wlan_state),
	.setup = setup_sha1, .run = mic_evp_run, .once = mic_evp_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_mic_evp)

static const struct bench_scenario sc_mic_cmac = {
	.name = "eapol-mic-cmac", .impl = "twag",
	.what = "EAPOL-Key MIC of a 121-octet message 2: AES-128-CMAC (AKM 5)",
	.refs = "eapol-mic-cmac.evp", .state_size = sizeof(struct wlan_state),
	.setup = setup_sha256, .run = mic_run, .once = mic_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_mic_cmac)

static const struct bench_scenario sc_mic_cmac_evp = {
	.name = "eapol-mic-cmac.evp", .impl = "openssl-evp",
	.what = "the same MIC: frame copy, EVP_MAC CMAC context re-keyed per frame",
	.state_size = sizeof(struct wlan_state),
	.setup = setup_cmac_evp, .run = mic_evp_run, .once = mic_evp_once, .teardown = wlan_teardown,
};
BENCH_REGISTER(sc_mic_cmac_evp)
