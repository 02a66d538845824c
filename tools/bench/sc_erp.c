/*
 * twag-bench — ERP (RFC 6696, with the RFC 5295 key hierarchy): rMSK from
 * rRK for one SEQ, the whole EMSK -> rRK -> rIK -> rMSK chain, and one
 * re-authentication exchange (peer builds EAP-Initiate/Re-auth, server
 * verifies the tag, checks SEQ, derives rMSK and builds the tagged
 * EAP-Finish/Re-auth). References: the same on OpenSSL's one-shot HMAC()
 * per PRF+ block / per tag, as ordinary code would write it, cross-checked
 * on random inputs before timing.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bench.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/erp.h"

enum { NSUB = 64, CS = TW_ERP_CS_HMAC_SHA256_128, TAG_LEN = 16 };

static const char rrk_label[] = "EAP Re-authentication Root Key@ietf.org";
static const char rik_label[] = "Re-authentication Integrity Key@ietf.org";
static const char rmsk_label[] = "Re-authentication Master Session Key@ietf.org";
static const char realm[] = "wlan.mnc093.mcc555.3gppnetwork.org";
static const uint8_t session_id[] = "\x32" "0123456789abcdef0123456789abcdef";

/* RFC 5295 §3.1.2 PRF+ on OpenSSL HMAC(): S = label | 0x00 | opt | len16,
 * T1 = HMAC(K, S | 1), Tn = HMAC(K, Tn-1 | S | n). */
static int evp_kdf(uint8_t *out, size_t out_len, const uint8_t *key, size_t key_len,
		   const char *label, const uint8_t *opt, size_t opt_len)
{
	uint8_t t[32 + 128], blk[32];
	size_t ll = strlen(label), slen = ll + 1 + opt_len + 2, done = 0;
	unsigned md_len;
	int rc = -1;

	if (slen + 33 > sizeof(t))
		return -1;
	for (unsigned n = 1; done < out_len; n++) {
		size_t off = n > 1 ? 32 : 0;
		if (n > 1)
			memcpy(t, blk, 32);
		memcpy(t + off, label, ll);
		t[off + ll] = 0;
		memcpy(t + off + ll + 1, opt, opt_len);
		t[off + ll + 1 + opt_len] = (uint8_t)(out_len >> 8);
		t[off + ll + 2 + opt_len] = (uint8_t)out_len;
		t[off + slen] = (uint8_t)n;
		if (!HMAC(EVP_sha256(), key, (int)key_len, t, off + slen + 1, blk, &md_len))
			goto out;
		size_t c = out_len - done < 32 ? out_len - done : 32;
		memcpy(out + done, blk, c);
		done += c;
	}
	rc = 0;
out:
	tw_wipe(t, sizeof(t));
	tw_wipe(blk, sizeof(blk));
	return rc;
}

static int evp_rmsk(uint8_t rmsk[64], const uint8_t rrk[64], uint16_t seq)
{
	uint8_t s[2] = {(uint8_t)(seq >> 8), (uint8_t)seq};

	return evp_kdf(rmsk, 64, rrk, 64, rmsk_label, s, 2);
}

/* ==== erp-rmsk and erp-chain ==== */

struct key_state {
	uint8_t key[NSUB][64]; /* rRK (erp-rmsk) or EMSK (erp-chain) */
	uint8_t out[3 * 64];
	unsigned next;
	uint16_t seq;
};

static int key_setup(void *p, const struct bench_thread *t)
{
	struct key_state *s = p;
	uint64_t seed = t->seed;

	bench_fill(&seed, s->key, sizeof(s->key));
	return 0;
}

static void key_teardown(void *p)
{
	tw_wipe(p, sizeof(struct key_state));
}

static int rmsk_twag(uint8_t *out, const uint8_t rrk[64], uint16_t seq)
{
	return tw_erp_rmsk(out, rrk, seq) == TW_OK ? 0 : -1;
}

/* out = rRK | rIK | rMSK */
static int chain_twag(uint8_t out[192], const uint8_t emsk[64], uint16_t seq)
{
	if (tw_erp_rrk(out, emsk) != TW_OK || tw_erp_rik(out + 64, out, CS) != TW_OK ||
	    tw_erp_rmsk(out + 128, out, seq) != TW_OK)
		return -1;
	return 0;
}

static int chain_evp(uint8_t out[192], const uint8_t emsk[64], uint16_t seq)
{
	const uint8_t cs = CS;

	if (evp_kdf(out, 64, emsk, 64, rrk_label, NULL, 0) != 0 ||
	    evp_kdf(out + 64, 64, out, 64, rik_label, &cs, 1) != 0 ||
	    evp_rmsk(out + 128, out, seq) != 0)
		return -1;
	return 0;
}

static int rmsk_run_common(void *p, uint64_t n, bool evp)
{
	struct key_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		int rc = evp ? evp_rmsk(s->out, s->key[j], s->seq) : rmsk_twag(s->out, s->key[j], s->seq);
		s->seq++;
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int rmsk_run(void *p, uint64_t n) { return rmsk_run_common(p, n, false); }
static int rmsk_evp_run(void *p, uint64_t n) { return rmsk_run_common(p, n, true); }

/* Input: rRK = in[0..63], SEQ from in[0..1]. */
static int rmsk_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 64;
	return rmsk_twag(out, in, tw_load_be16(in));
}

static int rmsk_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 64;
	return evp_rmsk(out, in, tw_load_be16(in));
}

static int chain_run_common(void *p, uint64_t n, bool evp)
{
	struct key_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		unsigned j = s->next++ % NSUB;
		int rc = evp ? chain_evp(s->out, s->key[j], s->seq) : chain_twag(s->out, s->key[j], s->seq);
		s->seq++;
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int chain_run(void *p, uint64_t n) { return chain_run_common(p, n, false); }
static int chain_evp_run(void *p, uint64_t n) { return chain_run_common(p, n, true); }

/* Input: EMSK = in[0..63], SEQ from in[62..63]. */
static int chain_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 192;
	return chain_twag(out, in, tw_load_be16(in + 62));
}

static int chain_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	(void)p;
	*len = 192;
	return chain_evp(out, in, tw_load_be16(in + 62));
}

static const struct bench_scenario sc_erp_rmsk = {
	.name = "erp-rmsk", .impl = "twag",
	.what = "ERP rMSK = KDF(rRK, label, SEQ) (RFC 6696 4.6), 64 octets",
	.refs = "erp-rmsk.evp",
	.state_size = sizeof(struct key_state),
	.setup = key_setup, .run = rmsk_run, .once = rmsk_once, .teardown = key_teardown,
};
BENCH_REGISTER(sc_erp_rmsk)

static const struct bench_scenario sc_erp_rmsk_evp = {
	.name = "erp-rmsk.evp", .impl = "openssl-evp",
	.what = "the same, OpenSSL HMAC() one-shot per PRF+ block (2 calls)",
	.state_size = sizeof(struct key_state),
	.setup = key_setup, .run = rmsk_evp_run, .once = rmsk_evp_once, .teardown = key_teardown,
};
BENCH_REGISTER(sc_erp_rmsk_evp)

static const struct bench_scenario sc_erp_chain = {
	.name = "erp-chain", .impl = "twag",
	.what = "ERP EMSK -> rRK -> rIK -> rMSK (RFC 6696 4.1, 4.3, 4.6)",
	.refs = "erp-chain.evp",
	.state_size = sizeof(struct key_state),
	.setup = key_setup, .run = chain_run, .once = chain_once, .teardown = key_teardown,
};
BENCH_REGISTER(sc_erp_chain)

static const struct bench_scenario sc_erp_chain_evp = {
	.name = "erp-chain.evp", .impl = "openssl-evp",
	.what = "the same, OpenSSL HMAC() one-shot per PRF+ block (6 calls)",
	.state_size = sizeof(struct key_state),
	.setup = key_setup, .run = chain_evp_run, .once = chain_evp_once, .teardown = key_teardown,
};
BENCH_REGISTER(sc_erp_chain_evp)

/* ==== erp-reauth: one Re-auth / Finish exchange ==== */

struct reauth_state {
	struct tw_erp_key_ctx peer, server;
	/* the reference's copy of the same key: rRK, rIK, keyName-NAI */
	uint8_t rrk[64], rik[64], nai[TW_ERP_NAI_MAX];
	size_t nai_len;
	uint8_t req[512], fin[512], rmsk[64];
	uint32_t seq; /* reference: next SEQ of the peer / last of the server */
	uint8_t id;
};

static int lookup(void *arg, const uint8_t *nai, size_t nai_len, struct tw_erp_key_ctx **k)
{
	struct reauth_state *s = arg;

	if (nai_len != s->server.keyname_nai_len || memcmp(nai, s->server.keyname_nai, nai_len) != 0)
		return TW_ERR_NOTFOUND;
	*k = &s->server;
	return TW_OK;
}

/* Builds both sides' key and the reference's copy from one EMSK. */
static int reauth_keys(struct reauth_state *s, const uint8_t emsk[64])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t name[8];
	const uint8_t cs = CS;

	if (tw_erp_key_init(&s->peer, emsk, session_id, sizeof(session_id) - 1, realm,
			    sizeof(realm) - 1, CS) != TW_OK ||
	    tw_erp_key_init(&s->server, emsk, session_id, sizeof(session_id) - 1, realm,
			    sizeof(realm) - 1, CS) != TW_OK)
		return -1;
	/* RFC 5295 §3.2 EMSKname, RFC 6696 §5.3.2 keyName-NAI = hex @ realm */
	if (evp_kdf(name, 8, session_id, sizeof(session_id) - 1, "EMSK", NULL, 0) != 0 ||
	    evp_kdf(s->rrk, 64, emsk, 64, rrk_label, NULL, 0) != 0 ||
	    evp_kdf(s->rik, 64, s->rrk, 64, rik_label, &cs, 1) != 0)
		return -1;
	for (size_t i = 0; i < 8; i++) {
		s->nai[2 * i] = (uint8_t)hex[name[i] >> 4];
		s->nai[2 * i + 1] = (uint8_t)hex[name[i] & 15];
	}
	s->nai[16] = '@';
	memcpy(s->nai + 17, realm, sizeof(realm) - 1);
	s->nai_len = 17 + sizeof(realm) - 1;
	s->seq = 0;
	return 0;
}

static int reauth_setup(void *p, const struct bench_thread *t)
{
	struct reauth_state *s = p;
	uint64_t seed = t->seed;
	uint8_t emsk[64];
	int rc;

	bench_fill(&seed, emsk, sizeof(emsk));
	rc = reauth_keys(s, emsk);
	tw_wipe(emsk, sizeof(emsk));
	return rc;
}

static void reauth_teardown(void *p)
{
	struct reauth_state *s = p;

	tw_erp_key_wipe(&s->peer);
	tw_erp_key_wipe(&s->server);
	tw_wipe(s, sizeof(*s));
}

/* Twag: peer Re-auth, server processes it into rMSK and a Finish. */
static int reauth_twag(struct reauth_state *s, size_t *fin_len)
{
	size_t req_len;
	struct tw_erp_key_ctx *k;

	if (s->peer.next_seq > 0xffff) {
		/* all SEQs spent: start the key's SEQ space again (bench only) */
		s->peer.next_seq = 0;
		s->server.seq_seen = false;
	}
	if (tw_erp_peer_build_reauth(&s->peer, s->req, sizeof(s->req), &req_len, s->id, 0) != TW_OK)
		return -1;
	if (tw_erp_server_reauth(lookup, s, s->req, req_len, s->fin, sizeof(s->fin), fin_len,
				 s->rmsk, &k) != TW_OK)
		return -1;
	s->id++;
	return 0;
}

/* RFC 6696 §5.3.2 packet: Code | Id | Length | Type 2 | Flags | SEQ |
 * keyName-NAI TLV | Cryptosuite | tag = HMAC-SHA-256(rIK, all before)[0..15]. */
static int evp_packet(uint8_t *buf, size_t *len, const struct reauth_state *s, uint8_t code,
		      uint8_t id, uint16_t seq)
{
	uint8_t mac[32];
	unsigned md_len;
	size_t n = 0;

	buf[n++] = code;
	buf[n++] = id;
	n += 2;
	buf[n++] = TW_ERP_TYPE_REAUTH;
	buf[n++] = 0;
	buf[n++] = (uint8_t)(seq >> 8);
	buf[n++] = (uint8_t)seq;
	buf[n++] = TW_ERP_TLV_KEYNAME_NAI;
	buf[n++] = (uint8_t)s->nai_len;
	memcpy(buf + n, s->nai, s->nai_len);
	n += s->nai_len;
	buf[n++] = CS;
	buf[2] = (uint8_t)((n + TAG_LEN) >> 8);
	buf[3] = (uint8_t)(n + TAG_LEN);
	if (!HMAC(EVP_sha256(), s->rik, 64, buf, n, mac, &md_len))
		return -1;
	memcpy(buf + n, mac, TAG_LEN);
	*len = n + TAG_LEN;
	return 0;
}

static int reauth_evp(struct reauth_state *s, size_t *fin_len)
{
	uint8_t mac[32];
	unsigned md_len;
	size_t req_len;

	if (s->seq > 0xffff)
		s->seq = 0;
	uint16_t seq = (uint16_t)s->seq++;
	if (evp_packet(s->req, &req_len, s, TW_EAP_INITIATE, s->id, seq) != 0)
		return -1;
	/* server: locate NAI, check the tag in constant time, then SEQ */
	size_t signed_len = req_len - TAG_LEN;
	if (s->req[9] != s->nai_len || memcmp(s->req + 10, s->nai, s->nai_len) != 0 ||
	    s->req[signed_len - 1] != CS)
		return -1;
	if (!HMAC(EVP_sha256(), s->rik, 64, s->req, signed_len, mac, &md_len) ||
	    CRYPTO_memcmp(mac, s->req + signed_len, TAG_LEN) != 0)
		return -1;
	uint16_t rseq = (uint16_t)(s->req[6] << 8 | s->req[7]);
	if (evp_rmsk(s->rmsk, s->rrk, rseq) != 0 ||
	    evp_packet(s->fin, fin_len, s, TW_EAP_FINISH, s->req[1], rseq) != 0)
		return -1;
	s->id++;
	return 0;
}

static int reauth_run_common(void *p, uint64_t n, bool evp)
{
	struct reauth_state *s = p;
	size_t fin_len;

	for (uint64_t i = 0; i < n; i++)
		if ((evp ? reauth_evp(s, &fin_len) : reauth_twag(s, &fin_len)) != 0)
			return -1;
	return 0;
}

static int reauth_run(void *p, uint64_t n) { return reauth_run_common(p, n, false); }
static int reauth_evp_run(void *p, uint64_t n) { return reauth_run_common(p, n, true); }

/* Input: EMSK = in[0..63], SEQ from in[0..1], Identifier in[2].
 * Output: rMSK | EAP-Finish/Re-auth. */
static int reauth_once_common(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out,
			      size_t *len, bool evp)
{
	struct reauth_state *s = p;
	size_t fin_len = 0;
	uint16_t seq = tw_load_be16(in);

	if (reauth_keys(s, in) != 0)
		return -1;
	s->peer.next_seq = seq;
	s->seq = seq;
	s->id = in[2];
	if ((evp ? reauth_evp(s, &fin_len) : reauth_twag(s, &fin_len)) != 0 ||
	    64 + fin_len > *len)
		return -1;
	memcpy(out, s->rmsk, 64);
	memcpy(out + 64, s->fin, fin_len);
	*len = 64 + fin_len;
	return 0;
}

static int reauth_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return reauth_once_common(p, in, out, len, false);
}

static int reauth_evp_once(void *p, const uint8_t in[BENCH_IN_LEN], uint8_t *out, size_t *len)
{
	return reauth_once_common(p, in, out, len, true);
}

static const struct bench_scenario sc_erp_reauth = {
	.name = "erp-reauth", .impl = "twag",
	.what = "ERP Re-auth build (peer) + tag/SEQ check, rMSK, Finish (server)",
	.refs = "erp-reauth.evp",
	.state_size = sizeof(struct reauth_state),
	.setup = reauth_setup, .run = reauth_run, .once = reauth_once,
	.teardown = reauth_teardown,
};
BENCH_REGISTER(sc_erp_reauth)

static const struct bench_scenario sc_erp_reauth_evp = {
	.name = "erp-reauth.evp", .impl = "openssl-evp",
	.what = "the same, OpenSSL HMAC() per tag and PRF+ block (5 calls)",
	.state_size = sizeof(struct reauth_state),
	.setup = reauth_setup, .run = reauth_evp_run, .once = reauth_evp_once,
	.teardown = reauth_teardown,
};
BENCH_REGISTER(sc_erp_reauth_evp)
