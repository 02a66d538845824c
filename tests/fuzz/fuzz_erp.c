/*
 * Fuzz target: the ERP decoder (RFC 6696 §5.3) and the server/peer entry
 * points on arbitrary packets, with one known key whose keyName-NAI the
 * lookup answers. Invariants: no crash, no overread; a decoded message's
 * views lie inside the input and re-encode to a packet that decodes again;
 * the server never accepts (a forged tag cannot verify here) and never
 * changes the key's SEQ state on a rejection. With a second key made
 * from the input, a whole peer/server exchange (check_exchange): the KDF
 * against RFC 5295 computed with OpenSSL, one Re-auth accepted once and
 * never altered, both sides with the rMSK of RFC 6696 §4.6, failure
 * Finish, Re-auth-Start and SEQ exhaustion. The input re-tagged by OpenSSL
 * under the known key (signed_input) reaches what follows the tag check;
 * once per process the documented refusals of erp.h (contract).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/erp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct tw_erp_key_ctx key;
static int ready;

static int lookup(void *arg, const uint8_t *nai, size_t nai_len,
		  struct tw_erp_key_ctx **k)
{
	(void)arg;
	if (nai_len != key.keyname_nai_len || memcmp(nai, key.keyname_nai, nai_len) != 0)
		return TW_ERR_NOTFOUND;
	*k = &key;
	return TW_OK;
}

static int inside(const uint8_t *p, size_t n, const uint8_t *d, size_t size)
{
	return p == NULL ? n == 0 : (p >= d && n <= size && p + n <= d + size);
}

/* HMAC-SHA-256 through OpenSSL (fetched once). */
static void hmac256(const uint8_t *k, size_t klen, const uint8_t *in, size_t n, uint8_t out[32])
{
	static EVP_MAC_CTX *tmpl;
	EVP_MAC_CTX *c;
	size_t outl = 0;

	if (tmpl == NULL) {
		EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0),
				    OSSL_PARAM_construct_end() };

		tmpl = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
		if (tmpl == NULL || !EVP_MAC_CTX_set_params(tmpl, p))
			abort();
		EVP_MAC_free(mac);
	}
	c = EVP_MAC_CTX_dup(tmpl);
	if (c == NULL || !EVP_MAC_init(c, k, klen, NULL) || !EVP_MAC_update(c, in, n) ||
	    !EVP_MAC_final(c, out, &outl, 32))
		abort();
	EVP_MAC_CTX_free(c);
}

/* RFC 5295 §3.1.2 PRF+ over OpenSSL: S = label | 0 | opt | length (2),
 * T1 = HMAC(K, S | 1), Tn = HMAC(K, Tn-1 | S | n). */
static void kdf_ref(uint8_t *out, size_t len, const uint8_t *k, size_t klen, const char *label,
		    const uint8_t *opt, size_t opt_len)
{
	uint8_t in[32 + 64 + 1 + 256 + 2 + 1], t[32];
	size_t ll = strlen(label), sl = ll + 1 + opt_len + 2, off = 0;

	for (unsigned i = 1; off < len; i++) {
		size_t n = 0;

		if (i > 1) {
			memcpy(in, t, 32);
			n = 32;
		}
		memcpy(in + n, label, ll);
		in[n + ll] = 0;
		if (opt_len != 0)
			memcpy(in + n + ll + 1, opt, opt_len);
		in[n + sl - 2] = (uint8_t)(len >> 8);
		in[n + sl - 1] = (uint8_t)len;
		in[n + sl] = (uint8_t)i;
		hmac256(k, klen, in, n + sl + 1, t);
		memcpy(out + off, t, len - off < 32 ? len - off : 32);
		off += 32;
	}
}

static struct tw_erp_key_ctx srv_key;

static int lookup_srv(void *arg, const uint8_t *nai, size_t nai_len,
		      struct tw_erp_key_ctx **k)
{
	(void)arg;
	if (nai_len != srv_key.keyname_nai_len || memcmp(nai, srv_key.keyname_nai, nai_len) != 0)
		return TW_ERR_NOTFOUND;
	*k = &srv_key;
	return TW_OK;
}

/*
 * A whole exchange between the two sides of a key made from the input
 * (EMSK, Session-ID, realm, cryptosuite): key setup accepted exactly for
 * the suites and NAI lengths erp.h allows; the KDF equal to RFC 5295's
 * computed with OpenSSL; the peer's Re-auth accepted by the server once
 * (then TW_ERR_REPLAY) and never with its tag or keyName-NAI changed; the
 * server's Finish accepted by the peer, both with the rMSK of §4.6 for
 * that SEQ; a failure Finish refused; a Re-auth-Start that decodes to its
 * domain; and a peer that has spent every SEQ refusing to build more.
 */
static void check_exchange(const uint8_t *d, size_t n)
{
	static uint8_t pkt[600], reply[600], bad[600], tmp[600];
	struct tw_erp_key_ctx peer;
	struct tw_erp_msg m;
	uint8_t emsk[64], rmsk_s[64], rmsk_p[64], want[64], kdf[255 * 32 + 1], ref[255 * 32 + 1];
	size_t len = 0, rl = 0, kl, realm_len;
	uint8_t suite, flags;
	char realm[300];
	struct tw_erp_key_ctx *used = NULL;
	int rc;

	if (n < 4)
		return;
	suite = d[0] % 5;
	flags = d[1] & (TW_ERP_FLAG_B | TW_ERP_FLAG_L);
	realm_len = d[2] % 245;
	for (size_t i = 0; i < 64; i++)
		emsk[i] = d[i % n];
	for (size_t i = 0; i < realm_len; i++)
		realm[i] = (char)('a' + (d[(3 + i) % n] % 26));
	/* the KDF on its own, of a length from the input (0 and above
	 * 255 * 32 refused) */
	kl = (size_t)d[1] << 5 | d[3] % 32;
	kl %= sizeof(kdf) + 1;
	rc = tw_erp_kdf(kdf, kl, emsk, 64, "fuzz label", d, n > 200 ? 200 : n);
	if ((rc == TW_OK) != (kl >= 1 && kl <= 255 * 32))
		abort();
	if (rc == TW_OK) {
		kdf_ref(ref, kl, emsk, 64, "fuzz label", d, n > 200 ? 200 : n);
		if (memcmp(kdf, ref, kl) != 0)
			abort();
	}
	rc = tw_erp_key_init(&srv_key, emsk, d, n > 64 ? 64 : n, realm, realm_len, suite);
	if ((rc == TW_OK) != (suite >= 1 && suite <= 3 && realm_len >= 1 && 17 + realm_len <= 253))
		abort();
	if (rc != TW_OK)
		return;
	if (tw_erp_key_init(&peer, emsk, d, n > 64 ? 64 : n, realm, realm_len, suite) != TW_OK)
		abort();
	/* rRK = KDF(EMSK, "EAP Re-authentication Root Key@ietf.org", 64) */
	kdf_ref(want, 64, emsk, 64, "EAP Re-authentication Root Key@ietf.org", NULL, 0);
	if (memcmp(want, srv_key.rrk, 64) != 0)
		abort();

	/* the peer starts at a SEQ the input picks: near the end sometimes */
	peer.next_seq = d[1] & 0x80 ? 65535 : d[3];
	if (tw_erp_peer_build_reauth(&peer, pkt, sizeof(pkt), &len, d[2], flags) != TW_OK)
		abort();
	uint16_t seq = peer.pending_seq;
	if (tw_erp_decode_suite(&m, pkt, len, suite) != TW_OK || m.seq != seq ||
	    tw_erp_verify_tag(&srv_key, pkt, &m) != TW_OK)
		abort();
	size_t nai_off = (size_t)(m.keyname_nai - pkt);
	/* its tag or its keyName-NAI changed: refused, the key untouched */
	for (int k = 0; k < 2; k++) {
		struct tw_erp_key_ctx before = srv_key;

		memcpy(bad, pkt, len);
		bad[k ? nai_off : len - 1] ^= 1;
		if (tw_erp_server_reauth(lookup_srv, NULL, bad, len, reply, sizeof(reply), &rl,
					 rmsk_s, &used) == TW_OK ||
		    memcmp(&before, &srv_key, sizeof(before)) != 0)
			abort();
		if (k == 0 && (tw_erp_decode_suite(&m, bad, len, suite) != TW_OK ||
			       tw_erp_verify_tag(&srv_key, bad, &m) != TW_ERR_AUTH))
			abort();
	}
	if (tw_erp_server_reauth(lookup_srv, NULL, pkt, len, reply, sizeof(reply), &rl, rmsk_s,
				 &used) != TW_OK ||
	    used != &srv_key || !srv_key.seq_seen || srv_key.last_seq != seq)
		abort();
	if (tw_erp_server_reauth(lookup_srv, NULL, pkt, len, tmp, sizeof(tmp), &len, want,
				 &used) != TW_ERR_REPLAY)
		abort();
	if (tw_erp_peer_finish(&peer, reply, rl, rmsk_p) != TW_OK || peer.pending ||
	    memcmp(rmsk_s, rmsk_p, 64) != 0 || tw_erp_rmsk(want, srv_key.rrk, seq) != TW_OK ||
	    memcmp(want, rmsk_s, 64) != 0)
		abort();
	/* a failure Finish for the next Re-auth: refused by the peer */
	if (tw_erp_peer_build_reauth(&peer, pkt, sizeof(pkt), &len, 3, 0) == TW_OK) {
		seq = peer.pending_seq;
		if (tw_erp_build_finish_failure(reply, sizeof(reply), &rl, 3, seq,
						peer.keyname_nai, peer.keyname_nai_len,
						d[2] & 1 ? &srv_key : NULL) != TW_OK ||
		    tw_erp_decode(&m, reply, rl) != TW_OK || (m.flags & TW_ERP_FLAG_R) == 0 ||
		    tw_erp_peer_finish(&peer, reply, rl, rmsk_p) == TW_OK)
			abort();
	} else if (peer.next_seq != 65536) {
		abort();
	}
	/* every SEQ spent: no more Re-auth */
	peer.next_seq = 65536;
	if (tw_erp_peer_build_reauth(&peer, pkt, sizeof(pkt), &len, 4, 0) != TW_ERR_RANGE)
		abort();
	/* Re-auth-Start with the realm as its domain */
	if (tw_erp_build_reauth_start(pkt, sizeof(pkt), &len, d[2], (const uint8_t *)realm,
				      realm_len) != TW_OK ||
	    tw_erp_decode(&m, pkt, len) != TW_OK || m.type != TW_ERP_TYPE_REAUTH_START ||
	    m.code != TW_EAP_INITIATE || m.domain_len != realm_len ||
	    memcmp(m.domain, realm, realm_len) != 0)
		abort();
	tw_erp_key_wipe(&peer);
	tw_erp_key_wipe(&srv_key);
}

static void want_rc(int got, int want)
{
	if (got != want)
		abort();
}

/*
 * The documented refusals of erp.h, once per process: NULL pointers, an
 * empty Session-ID or realm, an unknown cryptosuite, messages the encoder
 * cannot make (a Re-auth-Start as Finish or with a keyName-NAI, a Re-auth
 * without one, an untagged success Finish, an attribute of no or too
 * many octets, no room), a peer without a Re-auth outstanding.
 */
static void contract(void)
{
	static bool done;
	static const uint8_t emsk[64] = { 9 }, sid[3] = { 1, 2, 3 }, nai[254] = { 'a' };
	struct tw_erp_key_ctx k;
	struct tw_erp_msg m;
	uint8_t out[600], rmsk[64], name[8];
	size_t len = 1;

	if (done)
		return;
	done = true;
	want_rc(tw_erp_kdf(NULL, 8, emsk, 64, "x", NULL, 0), TW_ERR_INVAL);
	want_rc(tw_erp_kdf(out, 8, emsk, 64, NULL, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_erp_kdf(out, 8, NULL, 1, "x", NULL, 0), TW_ERR_INVAL);
	want_rc(tw_erp_kdf(out, 8, emsk, 64, "x", NULL, 1), TW_ERR_INVAL);
	want_rc(tw_erp_emsk_name(name, NULL, 3), TW_ERR_LENGTH);
	want_rc(tw_erp_emsk_name(name, sid, 0), TW_ERR_LENGTH);
	want_rc(tw_erp_rik(out, emsk, 4), TW_ERR_UNSUPPORTED);
	if (tw_erp_tag_len(0) != 0 || tw_erp_tag_len(1) != 8 || tw_erp_tag_len(3) != 32)
		abort();
	want_rc(tw_erp_key_init(NULL, emsk, sid, 3, "r", 1, 2), TW_ERR_INVAL);
	want_rc(tw_erp_key_init(&k, emsk, sid, 3, NULL, 1, 2), TW_ERR_LENGTH);
	want_rc(tw_erp_key_init(&k, emsk, sid, 0, "r", 1, 2), TW_ERR_LENGTH);
	want_rc(tw_erp_key_init(&k, emsk, sid, 3, "r", 1, 0), TW_ERR_UNSUPPORTED);
	tw_erp_key_wipe(NULL);
	want_rc(tw_erp_decode(NULL, sid, 3), TW_ERR_INVAL);
	want_rc(tw_erp_decode_suite(NULL, sid, 3, 4), TW_ERR_INVAL);
	want_rc(tw_erp_decode_suite(&m, sid, 3, 4), TW_ERR_INVAL);
	want_rc(tw_erp_key_init(&k, emsk, sid, 3, "r", 1, 2), TW_OK);
	/* the encoder */
	memset(&m, 0, sizeof(m));
	m.code = TW_EAP_INITIATE;
	m.type = TW_ERP_TYPE_REAUTH;
	want_rc(tw_erp_encode(NULL, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	want_rc(tw_erp_encode(out, sizeof(out), NULL, &m, &k), TW_ERR_INVAL);
	want_rc(tw_erp_encode(out, sizeof(out), &len, NULL, &k), TW_ERR_INVAL);
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL); /* no NAI */
	m.keyname_nai = nai;
	m.keyname_nai_len = 254;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	m.keyname_nai_len = 20;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, NULL), TW_ERR_INVAL); /* untagged */
	m.code = TW_EAP_FINISH;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, NULL), TW_ERR_INVAL);
	m.flags = TW_ERP_FLAG_R;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, NULL), TW_OK);
	{
		struct tw_erp_key_ctx nosuite = k;

		nosuite.cryptosuite = 0;
		want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &nosuite), TW_ERR_INVAL);
	}
	want_rc(tw_erp_encode(out, 4, &len, &m, &k), TW_ERR_OVERFLOW);
	want_rc(tw_erp_encode(out, 30, &len, &m, &k), TW_ERR_OVERFLOW);
	m.domain_len = 3;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	m.domain = nai;
	m.domain_len = 256;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_LENGTH);
	m.domain_len = 0;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	m.domain = NULL;
	/* every attribute and both lifetimes: the decoder gives them back */
	m.cryptosuites = sid;
	m.cryptosuites_len = 3;
	m.auth_ind = nai;
	m.auth_ind_len = 5;
	m.has_rrk_lifetime = m.has_rmsk_lifetime = true;
	m.rrk_lifetime = 0x01020304;
	m.rmsk_lifetime = 7;
	{
		struct tw_erp_msg d;

		want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_OK);
		want_rc(tw_erp_decode_suite(&d, out, len, 2), TW_OK);
		if (d.cryptosuites_len != 3 || d.auth_ind_len != 5 || !d.has_rrk_lifetime ||
		    d.rrk_lifetime != 0x01020304 || d.rmsk_lifetime != 7 ||
		    tw_erp_verify_tag(&k, out, &d) != TW_OK)
			abort();
		want_rc(tw_erp_verify_tag(NULL, out, &d), TW_ERR_INVAL);
		want_rc(tw_erp_verify_tag(&k, NULL, &d), TW_ERR_INVAL);
		want_rc(tw_erp_verify_tag(&k, out, NULL), TW_ERR_INVAL);
		d.tag = NULL;
		want_rc(tw_erp_verify_tag(&k, out, &d), TW_ERR_AUTH);
	}
	m.type = 3;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	m.code = 1;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, &k), TW_ERR_INVAL);
	m.code = TW_EAP_FINISH;
	m.type = TW_ERP_TYPE_REAUTH_START;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, NULL), TW_ERR_INVAL);
	m.code = TW_EAP_INITIATE;
	want_rc(tw_erp_encode(out, sizeof(out), &len, &m, NULL), TW_ERR_INVAL); /* with a NAI */
	want_rc(tw_erp_build_reauth_start(out, sizeof(out), &len, 1, NULL, 3), TW_ERR_INVAL);
	want_rc(tw_erp_build_reauth_start(out, sizeof(out), &len, 1, NULL, 0), TW_OK);
	/* the two sides */
	want_rc(tw_erp_server_reauth(NULL, NULL, out, len, out, sizeof(out), &len, rmsk, NULL),
		TW_ERR_INVAL);
	want_rc(tw_erp_server_reauth(lookup, NULL, out, len, NULL, sizeof(out), &len, rmsk, NULL),
		TW_ERR_INVAL);
	want_rc(tw_erp_server_reauth(lookup, NULL, out, len, out, sizeof(out), NULL, rmsk, NULL),
		TW_ERR_INVAL);
	want_rc(tw_erp_peer_build_reauth(NULL, out, sizeof(out), &len, 1, 0), TW_ERR_INVAL);
	want_rc(tw_erp_peer_finish(NULL, out, len, rmsk), TW_ERR_INVAL);
	k.pending = false;
	want_rc(tw_erp_peer_finish(&k, out, len, rmsk), TW_ERR_STATE);
	want_rc(tw_erp_peer_build_reauth(&k, out, 20, &len, 1, 0), TW_ERR_OVERFLOW);
	tw_erp_key_wipe(&k);
}

/*
 * The input as an ERP Re-auth or Finish of the fixed key's suite, its tag
 * made valid by OpenSSL (HMAC-SHA-256-128 under rIK = KDF(rRK, rIK label |
 * cryptosuite), RFC 6696 §4.3, §5.3.2): the tag verifies; the server
 * accepts an EAP-Initiate naming the key (rMSK as §4.6 computes with
 * OpenSSL), then refuses the same SEQ as a replay; the peer, waiting for
 * that SEQ, accepts a Finish naming the key and refuses it when R = 1.
 */
static void signed_input(const uint8_t *d, size_t size)
{
	static uint8_t pkt[70000], out[1200];
	struct tw_erp_key_ctx before = key, *used = NULL;
	struct tw_erp_msg m;
	uint8_t rik[64], tag[32], rmsk[64], want[64], s[2];
	size_t len = 0;

	if (size > sizeof(pkt) || tw_erp_decode_suite(&m, d, size, key.cryptosuite) != TW_OK ||
	    m.tag == NULL)
		return;
	memcpy(pkt, d, size);
	kdf_ref(rik, 64, key.rrk, 64, "Re-authentication Integrity Key@ietf.org",
		&key.cryptosuite, 1);
	hmac256(rik, 64, pkt, m.signed_len, tag);
	memcpy(pkt + m.signed_len, tag, m.tag_len);
	if (tw_erp_decode_suite(&m, pkt, size, key.cryptosuite) != TW_OK ||
	    tw_erp_verify_tag(&key, pkt, &m) != TW_OK)
		abort();
	bool ours = m.keyname_nai_len == key.keyname_nai_len &&
		    memcmp(m.keyname_nai, key.keyname_nai, m.keyname_nai_len) == 0;
	tw_store_be16(s, m.seq);
	kdf_ref(want, 64, key.rrk, 64, "Re-authentication Master Session Key@ietf.org", s, 2);
	int rc = tw_erp_server_reauth(lookup, NULL, pkt, size, out, sizeof(out), &len, rmsk,
				      &used);
	if (m.code == TW_EAP_INITIATE && ours) {
		struct tw_erp_msg f;

		if (rc != TW_OK || used != &key || memcmp(rmsk, want, 64) != 0 ||
		    tw_erp_decode_suite(&f, out, len, key.cryptosuite) != TW_OK ||
		    f.code != TW_EAP_FINISH || f.seq != m.seq || f.id != m.id ||
		    tw_erp_server_reauth(lookup, NULL, pkt, size, out, sizeof(out), &len, rmsk,
					 &used) != TW_ERR_REPLAY)
			abort();
	} else if (rc == TW_OK) {
		abort();
	}
	key = before;
	key.pending = true;
	key.pending_seq = m.seq;
	rc = tw_erp_peer_finish(&key, pkt, size, rmsk);
	if (m.code == TW_EAP_FINISH && ours) {
		if (rc != (m.flags & TW_ERP_FLAG_R ? TW_ERR_AUTH : TW_OK) ||
		    (rc == TW_OK && (memcmp(rmsk, want, 64) != 0 || key.pending)))
			abort();
	} else if (rc == TW_OK) {
		abort();
	}
	key = before;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_erp_msg m, m2;
	uint8_t out[1200], rmsk[64];
	size_t len;

	if (!ready) {
		uint8_t emsk[64] = { 1, 2, 3 }, sid[4] = { 50, 1, 2, 3 };
		if (tw_erp_key_init(&key, emsk, sid, 4, "fuzz.example", 12, 2) != TW_OK)
			abort();
		ready = 1;
	}
	if (tw_erp_decode(&m, data, size) == TW_OK) {
		if (!inside(m.keyname_nai, m.keyname_nai_len, data, size) ||
		    !inside(m.domain, m.domain_len, data, size) ||
		    !inside(m.tag, m.tag_len, data, size) || m.signed_len > size)
			abort();
		const struct tw_erp_key_ctx *k =
			m.type == TW_ERP_TYPE_REAUTH && m.cryptosuite ? &key : NULL;
		if (tw_erp_encode(out, sizeof(out), &len, &m, k) != TW_OK ||
		    tw_erp_decode(&m2, out, len) != TW_OK || m2.seq != m.seq ||
		    m2.keyname_nai_len != m.keyname_nai_len)
			abort();
	}
	/* with the suite known: the same bounds, and a split the suite's */
	for (uint8_t cs = 1; cs <= 3; cs++)
		if (tw_erp_decode_suite(&m, data, size, cs) == TW_OK &&
		    (!inside(m.keyname_nai, m.keyname_nai_len, data, size) ||
		     !inside(m.tag, m.tag_len, data, size) || m.signed_len > size ||
		     (m.tag != NULL && (m.cryptosuite != cs || m.tag_len != tw_erp_tag_len(cs)))))
			abort();
	struct tw_erp_key_ctx before = key;
	struct tw_erp_key_ctx *used;
	if (tw_erp_server_reauth(lookup, NULL, data, size, out, sizeof(out), &len,
				 rmsk, &used) == TW_OK) {
		/* libFuzzer's comparison feedback can learn a valid tag (the
		 * target signs packets under this key itself): an accepted
		 * Re-auth must then name this key, by its keyName-NAI, with a
		 * whole tag of the key's cryptosuite; the key's SEQ state is
		 * put back for the inputs after it */
		if (used != &key || tw_erp_decode(&m, data, size) != TW_OK ||
		    m.type != TW_ERP_TYPE_REAUTH || m.keyname_nai_len != key.keyname_nai_len ||
		    memcmp(m.keyname_nai, key.keyname_nai, key.keyname_nai_len) != 0 ||
		    m.cryptosuite != key.cryptosuite || m.tag == NULL ||
		    m.tag_len != tw_erp_tag_len(key.cryptosuite))
			abort();
		key = before;
	}
	if (memcmp(&before, &key, sizeof(key)) != 0)
		abort();
	/* the peer side, with a Re-auth outstanding */
	key.pending = true;
	key.pending_seq = 0;
	if (tw_erp_peer_finish(&key, data, size, rmsk) == TW_OK)
		abort();
	key = before;
	contract();
	signed_input(data, size);
	check_exchange(data, size);
	return 0;
}
