/*
 * twag-bench — WLCP (3GPP TS 24.244 Rel-12..15): encode, decode and round
 * trip of a PDN CONNECTIVITY ACCEPT (APN, PDN address IPv4v6, TWAG user
 * plane MAC address, PCO: the largest message the TWAG sends per PDN
 * connection), and the WLCP key from the EMSK.
 *
 * The codec rows have no reference: no library offers a WLCP codec (no
 * Wireshark dissector, nothing in libosmocore or OpenSSL), so they are
 * twag rows without refs and their ratio cell reads "-".
 *
 * wlcp-key: the TS 33.402 FC value and parameters could not be confirmed
 * (see include/twag/wlcp_key.h), so the row measures tw_wlcp_key() with a
 * placeholder S = FC | P0 | L0 (FC = 0x00, P0 = 4 octets) against the same
 * TS 33.220 B.2.0 KDF on OpenSSL HMAC(): the cost of any single-parameter
 * KDF call over the 64-octet EMSK, not the spec's exact input.
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/wlcp.h"
#include "twag/wlcp_key.h"

enum { NSUB = 64, MSG_MAX = 512, PLACEHOLDER_FC = 0x00 };

static const char apn_dotted[] = "internet.mnc093.mcc555.gprs";
/* PCO (TS 24.008 10.5.6.3): config protocol octet 0x80, then the DNS server
 * IPv4 container 0x000D with an address */
static const uint8_t pco[] = {0x80, 0x00, 0x0d, 0x04, 10, 0, 0, 53};

struct wlcp_state {
	uint8_t apn[TW_WLCP_APN_MAX];
	size_t apn_len;
	struct tw_wlcp_msg m[NSUB];
	uint8_t buf[NSUB][MSG_MAX];
	size_t len[NSUB];
	uint8_t emsk[NSUB][64];
	uint8_t out[MSG_MAX];
	struct tw_wlcp_msg dec;
	unsigned next;
};

static void fill_accept(struct tw_wlcp_msg *m, const struct wlcp_state *s, const uint8_t r[24])
{
	memset(m, 0, sizeof(*m));
	m->type = TW_WLCP_PDN_CONN_ACCEPT;
	m->pti = (uint8_t)(1 + r[0] % 254);
	m->has_apn = true;
	m->apn = s->apn;
	m->apn_len = s->apn_len;
	m->has_pdn_address = true;
	m->pdn_addr_type = TW_WLCP_PDN_IPV4V6;
	memcpy(m->ipv4, r + 1, 4);
	memcpy(m->ipv6_iid, r + 5, 8);
	m->has_twag_mac = true;
	memcpy(m->twag_mac, r + 13, 6);
	m->has_pco = true;
	m->pco = pco;
	m->pco_len = sizeof(pco);
}

static int wlcp_setup(void *p, const struct bench_thread *t)
{
	struct wlcp_state *s = p;
	uint64_t seed = t->seed;

	if (tw_wlcp_apn_encode(s->apn, sizeof(s->apn), &s->apn_len, apn_dotted,
			       sizeof(apn_dotted) - 1) != TW_OK)
		return -1;
	for (unsigned i = 0; i < NSUB; i++) {
		uint8_t r[24];
		bench_fill(&seed, r, sizeof(r));
		fill_accept(&s->m[i], s, r);
		if (tw_wlcp_encode(s->buf[i], MSG_MAX, &s->len[i], &s->m[i]) != TW_OK)
			return -1;
	}
	bench_fill(&seed, s->emsk, sizeof(s->emsk));
	return 0;
}

static void wlcp_teardown(void *p)
{
	tw_wipe(p, sizeof(struct wlcp_state));
}

static int enc_run(void *p, uint64_t n)
{
	struct wlcp_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->m[j].pti = (uint8_t)(1 + (s->m[j].pti % 254)); /* vary the input */
		if (tw_wlcp_encode(s->out, sizeof(s->out), &len, &s->m[j]) != TW_OK)
			return -1;
	}
	return 0;
}

static int dec_run(void *p, uint64_t n)
{
	struct wlcp_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		if (tw_wlcp_decode(&s->dec, s->buf[j], s->len[j]) != TW_OK)
			return -1;
	}
	return 0;
}

/* Encode, decode what was encoded, and check one field came back. */
static int rt_run(void *p, uint64_t n)
{
	struct wlcp_state *s = p;
	size_t len;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		if (tw_wlcp_encode(s->out, sizeof(s->out), &len, &s->m[j]) != TW_OK ||
		    tw_wlcp_decode(&s->dec, s->out, len) != TW_OK ||
		    s->dec.pti != s->m[j].pti)
			return -1;
	}
	return 0;
}

/* once(): the encoding of an ACCEPT built from in (the twag rows have no
 * reference to compare with; the harness only runs it for references). */
static int enc_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	struct wlcp_state *s = p;
	struct tw_wlcp_msg m;

	fill_accept(&m, s, in);
	return tw_wlcp_encode(out, *len, len, &m) == TW_OK ? 0 : -1;
}

static const struct bench_scenario sc_wlcp_enc = {
	.name = "wlcp-encode", .impl = "twag",
	.what = "WLCP PDN CONNECTIVITY ACCEPT encode (TS 24.244 7.2), no reference exists",
	.state_size = sizeof(struct wlcp_state),
	.setup = wlcp_setup, .run = enc_run, .once = enc_once, .teardown = wlcp_teardown,
};
BENCH_REGISTER(sc_wlcp_enc)

static const struct bench_scenario sc_wlcp_dec = {
	.name = "wlcp-decode", .impl = "twag",
	.what = "WLCP PDN CONNECTIVITY ACCEPT strict decode, no reference exists",
	.state_size = sizeof(struct wlcp_state),
	.setup = wlcp_setup, .run = dec_run, .teardown = wlcp_teardown,
};
BENCH_REGISTER(sc_wlcp_dec)

static const struct bench_scenario sc_wlcp_rt = {
	.name = "wlcp-roundtrip", .impl = "twag",
	.what = "WLCP ACCEPT encode + decode + field check, no reference exists",
	.state_size = sizeof(struct wlcp_state),
	.setup = wlcp_setup, .run = rt_run, .teardown = wlcp_teardown,
};
BENCH_REGISTER(sc_wlcp_rt)

/* ==== wlcp-key ==== */

static int key_twag(uint8_t out[32], const uint8_t emsk[64], const uint8_t p0[4])
{
	const struct tw_kdf_param pp = {p0, 4};

	return tw_wlcp_key(out, emsk, 64, PLACEHOLDER_FC, &pp, 1) == TW_OK ? 0 : -1;
}

/* TS 33.220 B.2.0: key = HMAC-SHA-256(EMSK, FC | P0 | L0). */
static int key_evp(uint8_t out[32], const uint8_t emsk[64], const uint8_t p0[4])
{
	uint8_t s[1 + 4 + 2] = {PLACEHOLDER_FC, p0[0], p0[1], p0[2], p0[3], 0x00, 0x04};
	unsigned md_len;

	return HMAC(EVP_sha256(), emsk, 64, s, sizeof(s), out, &md_len) ? 0 : -1;
}

static int key_run_common(void *p, uint64_t n, bool evp)
{
	struct wlcp_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		s->emsk[j][0]++;
		if ((evp ? key_evp(s->out, s->emsk[j], s->emsk[j] + 60)
			 : key_twag(s->out, s->emsk[j], s->emsk[j] + 60)) != 0)
			return -1;
	}
	return 0;
}

static int key_run(void *p, uint64_t n) { return key_run_common(p, n, false); }
static int key_evp_run(void *p, uint64_t n) { return key_run_common(p, n, true); }

/* Input: EMSK = in[0..63], P0 = in[60..63]. */
static int key_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 32;
	return key_twag(out, in, in + 60);
}

static int key_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 32;
	return key_evp(out, in, in + 60);
}

static const struct bench_scenario sc_wlcp_key = {
	.name = "wlcp-key", .impl = "twag",
	.what = "WLCP key = KDF(EMSK, S) (TS 33.220 B.2; placeholder FC/P0, see source)",
	.refs = "wlcp-key.evp",
	.state_size = sizeof(struct wlcp_state),
	.setup = wlcp_setup, .run = key_run, .once = key_once, .teardown = wlcp_teardown,
};
BENCH_REGISTER(sc_wlcp_key)

static const struct bench_scenario sc_wlcp_key_evp = {
	.name = "wlcp-key.evp", .impl = "openssl-evp",
	.what = "the same, OpenSSL HMAC() one-shot",
	.state_size = sizeof(struct wlcp_state),
	.setup = wlcp_setup, .run = key_evp_run, .once = key_evp_once, .teardown = wlcp_teardown,
};
BENCH_REGISTER(sc_wlcp_key_evp)
