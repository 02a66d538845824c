/*
 * Fuzz target: the EAP-SIM/AKA/AKA' attribute decoder (tw_simaka_decode),
 * AT_MAC verification with a fixed K_aut, and a decode -> re-encode check of
 * the fixed-format fields. Invariants: no crash or overread, every view
 * inside the packet, a random packet never carries a valid MAC. The
 * builder rebuilds every decoded message to the same attributes, with an
 * AT_MAC that verifies under the key and no other, the same when MACed in
 * a batch (rebuild); AT_CHECKCODE over the input agrees with OpenSSL's
 * SHA-1 / SHA-256 and verifies as RFC 4187 §10.13 says (check_checkcode).
 * A decoded message with AT_MAC gets a MAC computed by OpenSSL and must
 * then verify, its AT_ENCR_DATA decrypting as OpenSSL does (macked); the
 * raw input also goes through the nested decoder (raw_inner); and once
 * per process the APIs' documented refusals are checked (contract).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void in_bounds(const struct tw_simaka_msg *m, const struct tw_simaka_attr *a)
{
	if (a->val == NULL)
		return;
	if (a->val < m->pkt || a->val + a->len > m->pkt + m->pkt_len ||
	    a->off + 4u > m->pkt_len)
		abort();
}

static const uint8_t k32[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
				 12, 13, 14, 15, 16, 17, 18, 19, 20 };

static size_t k_aut_len(uint8_t method)
{
	return method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16;
}

static bool same(const struct tw_simaka_attr *a, const struct tw_simaka_attr *b)
{
	return (a->val == NULL) == (b->val == NULL) &&
	       (a->val == NULL || (a->len == b->len && memcmp(a->val, b->val, a->len) == 0));
}

/*
 * The builder against the decoder: every attribute of m put again (all but
 * AT_IV/AT_ENCR_DATA, whose plaintext is not here), with AT_MAC filled
 * under the fixed K_aut when m had one; the message must build, decode to
 * the same attributes and fields, and verify under that key and no other;
 * several copies MACed at once (tw_simaka_mac_fill_many, lanes for AKA')
 * must get the same MAC.
 */
static void rebuild(const struct tw_simaka_msg *m)
{
	static uint8_t out[1100], copies[17][1100];
	static const uint8_t other[32] = { 9 };
	struct tw_simaka_builder b;
	struct tw_simaka_msg m2;
	struct tw_simaka_mac_ctx mac, bad;
	size_t len = 0, moff = 0;
	bool has_mac = m->mac.val != NULL;
	int rc;

	if (tw_simaka_mac_init(&mac, m->method, k32, k_aut_len(m->method)) != TW_OK ||
	    tw_simaka_mac_init(&bad, m->method, other, k_aut_len(m->method)) != TW_OK)
		abort();
	tw_simaka_build_init(&b, out, sizeof(out), m->code, m->id, m->method, m->subtype);
	if (m->rand_.val)
		tw_simaka_put_fixed(&b, TW_AT_RAND, 0, m->rand_.val, m->rand_.len);
	if (m->autn.val)
		tw_simaka_put_fixed(&b, TW_AT_AUTN, 0, m->autn.val, m->autn.len);
	if (m->res.val)
		tw_simaka_put_res(&b, m->res.val, m->res_bits);
	if (m->auts.val)
		tw_simaka_put_auts(&b, m->auts.val);
	if (m->nonce_mt.val)
		tw_simaka_put_fixed(&b, TW_AT_NONCE_MT, 0, m->nonce_mt.val, m->nonce_mt.len);
	if (m->permanent_id_req.val)
		tw_simaka_put_fixed(&b, TW_AT_PERMANENT_ID_REQ, 0, NULL, 0);
	if (m->any_id_req.val)
		tw_simaka_put_fixed(&b, TW_AT_ANY_ID_REQ, 0, NULL, 0);
	if (m->fullauth_id_req.val)
		tw_simaka_put_fixed(&b, TW_AT_FULLAUTH_ID_REQ, 0, NULL, 0);
	if (m->result_ind.val)
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	if (m->notification.val)
		tw_simaka_put_fixed(&b, TW_AT_NOTIFICATION, m->notification_code, NULL, 0);
	if (m->selected_version.val)
		tw_simaka_put_fixed(&b, TW_AT_SELECTED_VERSION, m->selected_ver, NULL, 0);
	if (m->client_error_code.val)
		tw_simaka_put_fixed(&b, TW_AT_CLIENT_ERROR_CODE, m->client_error, NULL, 0);
	if (m->bidding.val)
		tw_simaka_put_fixed(&b, TW_AT_BIDDING, m->bidding_value, NULL, 0);
	for (unsigned i = 0; i < m->n_kdf; i++)
		tw_simaka_put_fixed(&b, TW_AT_KDF, m->kdf_list[i], NULL, 0);
	if (m->identity.val)
		tw_simaka_put_var(&b, TW_AT_IDENTITY, m->identity.val, m->identity.len);
	if (m->version_list.val)
		tw_simaka_put_var(&b, TW_AT_VERSION_LIST, m->version_list.val, m->version_list.len);
	if (m->kdf_input.val)
		tw_simaka_put_var(&b, TW_AT_KDF_INPUT, m->kdf_input.val, m->kdf_input.len);
	if (m->checkcode.val)
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, m->checkcode.val, m->checkcode.len);
	if (has_mac)
		tw_simaka_put_mac(&b);
	rc = has_mac ? tw_simaka_finish_mac(&b, &mac, NULL, 0, &len) : tw_simaka_finish(&b, &len);
	if (rc != TW_OK || tw_simaka_decode(&m2, out, len) != TW_OK)
		abort();
	if (m2.code != m->code || m2.id != m->id || m2.method != m->method ||
	    m2.subtype != m->subtype || m2.n_skipped != 0 || m2.n_rand != m->n_rand ||
	    m2.n_kdf != m->n_kdf ||
	    memcmp(m2.kdf_list, m->kdf_list, m->n_kdf * sizeof(m->kdf_list[0])) != 0 ||
	    (m->res.val && m2.res_bits != m->res_bits) ||
	    (m->notification.val && m2.notification_code != m->notification_code) ||
	    (m->selected_version.val && m2.selected_ver != m->selected_ver) ||
	    (m->client_error_code.val && m2.client_error != m->client_error) ||
	    (m->bidding.val && m2.bidding_value != m->bidding_value))
		abort();
	const struct tw_simaka_attr *a1[] = {
		&m->rand_, &m->autn, &m->res, &m->auts, &m->nonce_mt, &m->permanent_id_req,
		&m->notification, &m->any_id_req, &m->identity, &m->version_list,
		&m->selected_version, &m->fullauth_id_req, &m->client_error_code,
		&m->kdf_input, &m->kdf, &m->checkcode, &m->result_ind, &m->bidding,
	}, *a2[] = {
		&m2.rand_, &m2.autn, &m2.res, &m2.auts, &m2.nonce_mt, &m2.permanent_id_req,
		&m2.notification, &m2.any_id_req, &m2.identity, &m2.version_list,
		&m2.selected_version, &m2.fullauth_id_req, &m2.client_error_code,
		&m2.kdf_input, &m2.kdf, &m2.checkcode, &m2.result_ind, &m2.bidding,
	};
	for (size_t i = 0; i < sizeof(a1) / sizeof(a1[0]); i++)
		if (!same(a1[i], a2[i]))
			abort();
	if ((m2.mac.val != NULL) != has_mac ||
	    tw_simaka_mac_verify(&mac, &m2, NULL, 0) != (has_mac ? TW_OK : TW_ERR_AUTH) ||
	    tw_simaka_mac_verify(&bad, &m2, NULL, 0) != TW_ERR_AUTH)
		abort();
	if (has_mac) {
		struct tw_simaka_mac_ctx *ctx[17];
		uint8_t *pkts[17];
		size_t lens[17], offs[17];
		int rcs[17];
		unsigned n = 1 + m->id % 17;

		moff = m2.mac.off + 4;
		for (unsigned i = 0; i < n; i++) {
			memcpy(copies[i], out, len);
			memset(copies[i] + moff, 0, 16);
			ctx[i] = i % 2 ? &bad : &mac;
			pkts[i] = copies[i];
			lens[i] = len;
			offs[i] = moff;
			rcs[i] = -1;
		}
		tw_simaka_mac_fill_many(ctx, pkts, lens, offs, rcs, n);
		for (unsigned i = 0; i < n; i++) {
			uint8_t want[16];

			if (rcs[i] != TW_OK ||
			    tw_simaka_mac_compute(ctx[i], want, copies[i], len, moff, NULL, 0) !=
				    TW_OK ||
			    memcmp(copies[i] + moff, want, 16) != 0 ||
			    (i % 2 == 0 && memcmp(copies[i], out, len) != 0))
				abort();
		}
	}
	tw_simaka_mac_wipe(&mac);
	tw_simaka_mac_wipe(&bad);
}

/*
 * AT_CHECKCODE (RFC 4187 §10.13, RFC 9048 §3.4.2): the hash of the input
 * fed as two identity messages equals SHA-1 / SHA-256 of them computed by
 * OpenSSL, and a message carrying it verifies, one with a bit flipped or
 * without it does not; with no identity message an absent or empty one is
 * accepted. EAP-SIM has no checkcode.
 */
static void check_checkcode(uint8_t method, const uint8_t *d, size_t n)
{
	struct tw_simaka_checkcode_ctx cc, none;
	struct tw_simaka_builder b;
	struct tw_simaka_msg m;
	uint8_t val[32], want[32], pkt[64];
	size_t vl, len = 0;
	unsigned int wl = 0;
	EVP_MD_CTX *x;

	if (method == TW_EAP_TYPE_SIM) {
		if (tw_simaka_checkcode_init(&cc, method) != TW_ERR_INVAL)
			abort();
		return;
	}
	if (tw_simaka_checkcode_init(&cc, method) != TW_OK ||
	    tw_simaka_checkcode_init(&none, method) != TW_OK)
		abort();
	tw_simaka_checkcode_add(&cc, d, n);
	tw_simaka_checkcode_add(&cc, d, n);
	vl = tw_simaka_checkcode_value(&cc, val);
	x = EVP_MD_CTX_new();
	if (x == NULL ||
	    EVP_DigestInit_ex(x, method == TW_EAP_TYPE_AKA_PRIME ? EVP_sha256() : EVP_sha1(),
			      NULL) != 1 ||
	    EVP_DigestUpdate(x, d, n) != 1 || EVP_DigestUpdate(x, d, n) != 1 ||
	    EVP_DigestFinal_ex(x, want, &wl) != 1)
		abort();
	EVP_MD_CTX_free(x);
	if (vl != wl || memcmp(val, want, vl) != 0 || tw_simaka_checkcode_value(&none, want) != 0)
		abort();
	for (int flip = 0; flip < 3; flip++) {
		tw_simaka_build_init(&b, pkt, sizeof(pkt), TW_EAP_RESPONSE, 1, method,
				     TW_SIMAKA_CHALLENGE);
		if (flip < 2) {
			val[0] ^= (uint8_t)flip;
			tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, val, vl);
			val[0] ^= (uint8_t)flip;
		}
		if (tw_simaka_finish(&b, &len) != TW_OK || tw_simaka_decode(&m, pkt, len) != TW_OK)
			abort();
		if (tw_simaka_checkcode_verify(&cc, &m) != (flip == 0 ? TW_OK : TW_ERR_AUTH) ||
		    tw_simaka_checkcode_verify(&none, &m) != (flip == 2 ? TW_OK : TW_ERR_AUTH))
			abort();
	}
}

/* ---- shared with the other EAP-SIM/AKA target ------------------------- */

/* HMAC-SHA1-128 / HMAC-SHA-256-128 of AT_MAC (RFC 4187 §10.15, RFC 9048
 * §3.4.1) through OpenSSL: the packet with its MAC value zero, then extra. */
static void ref_mac(uint8_t method, const uint8_t *key, const uint8_t *pkt, size_t len,
		    size_t mac_val_off, const uint8_t *extra, size_t extra_len,
		    uint8_t mac[16])
{
	static uint8_t buf[70000];
	uint8_t full[32];
	unsigned int fl = 0;

	if (len + extra_len > sizeof(buf) || mac_val_off + 16 > len)
		abort();
	memcpy(buf, pkt, len);
	memset(buf + mac_val_off, 0, 16);
	if (extra_len != 0)
		memcpy(buf + len, extra, extra_len);
	if (HMAC(method == TW_EAP_TYPE_AKA_PRIME ? EVP_sha256() : EVP_sha1(), key,
		 method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16, buf, len + extra_len, full,
		 &fl) == NULL)
		abort();
	memcpy(mac, full, 16);
}

/* AES-128-CBC decryption of AT_ENCR_DATA through OpenSSL. */
static void ref_decrypt(const uint8_t key[16], const uint8_t iv_[16], const uint8_t *in,
			size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ol = 0;

	if (x == NULL || EVP_DecryptInit_ex(x, EVP_aes_128_cbc(), NULL, key, iv_) != 1 ||
	    EVP_CIPHER_CTX_set_padding(x, 0) != 1 ||
	    EVP_DecryptUpdate(x, out, &ol, in, (int)n) != 1 || (size_t)ol != n)
		abort();
	EVP_CIPHER_CTX_free(x);
}

static void want_rc(int got, int want)
{
	if (got != want)
		abort();
}

/*
 * The documented answers of the codec's APIs to arguments they refuse
 * (simaka.h): NULL pointers, lengths an attribute cannot carry, a buffer
 * too small, misuse of the builder (two AT_MACs, AT_MAC inside
 * AT_ENCR_DATA, an empty or oversized AT_ENCR_DATA, an unfilled AT_MAC),
 * keys of the wrong length, a context of the wrong method. Once per
 * process: the answers do not depend on the input.
 */
static void contract(void)
{
	static bool done;
	static uint8_t big[1100], buf[1200];
	static const uint8_t key[32] = { 7 }, iv16[16] = { 3 };
	struct tw_simaka_msg m, in;
	struct tw_simaka_mac_ctx mc, sha1, none;
	struct tw_simaka_checkcode_ctx cc;
	struct tw_simaka_builder b;
	struct tw_simaka_encr_later e;
	uint8_t mac[16], val[32], pkt[64];
	size_t len = 1, off = 1;

	if (done)
		return;
	done = true;
	memset(pkt, 0, sizeof(pkt));
	/* decoders */
	want_rc(tw_simaka_decode(NULL, pkt, 8), TW_ERR_INVAL);
	want_rc(tw_simaka_decode(&m, NULL, 8), TW_ERR_INVAL);
	want_rc(tw_simaka_decode_inner(NULL, TW_EAP_TYPE_AKA, big, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_decode_inner(&in, TW_EAP_TYPE_AKA, NULL, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_decode_inner(&in, 1, big, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_decode_inner(&in, TW_EAP_TYPE_AKA, big, 15), TW_ERR_DECODE);
	want_rc(tw_simaka_decode_inner(&in, TW_EAP_TYPE_AKA, big, 1024), TW_ERR_DECODE);
	want_rc(tw_simaka_decode_inner(&in, TW_EAP_TYPE_SIM, NULL, 0), TW_OK);
	/* MAC contexts: K_aut 16 octets for SIM/AKA, 32 for AKA' */
	want_rc(tw_simaka_mac_init(NULL, TW_EAP_TYPE_AKA, key, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_init(&mc, TW_EAP_TYPE_AKA, NULL, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_init(&mc, TW_EAP_TYPE_SIM, key, 32), TW_ERR_LENGTH);
	want_rc(tw_simaka_mac_init(&mc, TW_EAP_TYPE_AKA_PRIME, key, 16), TW_ERR_LENGTH);
	want_rc(tw_simaka_mac_init(&none, 1, key, 16), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_init(&sha1, TW_EAP_TYPE_AKA, key, 16), TW_OK);
	want_rc(tw_simaka_mac_compute(NULL, mac, pkt, 32, 8, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_compute(&sha1, mac, NULL, 32, 8, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_compute(&sha1, mac, pkt, 32, 8, NULL, 1), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_compute(&sha1, mac, pkt, 32, 33, NULL, 0), TW_ERR_RANGE);
	want_rc(tw_simaka_mac_compute(&sha1, mac, pkt, 32, 17, NULL, 0), TW_ERR_RANGE);
	/* a context whose keying failed is of no method */
	want_rc(tw_simaka_mac_compute(&none, mac, pkt, 32, 8, NULL, 0), TW_ERR_INVAL);
	/* an AKA' MAC over more than the one-pass buffer, against OpenSSL */
	want_rc(tw_simaka_mac_init(&mc, TW_EAP_TYPE_AKA_PRIME, key, 32), TW_OK);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31);
	want_rc(tw_simaka_mac_compute(&mc, mac, big, 400, 100, big + 500, 16), TW_OK);
	ref_mac(TW_EAP_TYPE_AKA_PRIME, key, big, 400, 100, big + 500, 16, val);
	if (memcmp(mac, val, 16) != 0)
		abort();
	/* verify: NULL, the wrong method's context, no AT_MAC */
	tw_simaka_build_init(&b, pkt, sizeof(pkt), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA,
			     TW_SIMAKA_CHALLENGE);
	want_rc(tw_simaka_finish(&b, &len), TW_OK);
	want_rc(tw_simaka_decode(&m, pkt, len), TW_OK);
	want_rc(tw_simaka_mac_verify(NULL, &m, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_verify(&sha1, NULL, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_verify(&mc, &m, NULL, 0), TW_ERR_INVAL);
	want_rc(tw_simaka_mac_verify(&sha1, &m, NULL, 0), TW_ERR_AUTH);
	/* a batch: what it cannot MAC is refused one by one, the packet
	 * untouched; without a result array nothing is written */
	{
		struct tw_simaka_mac_ctx *ctx[4] = { NULL, &mc, &mc, &sha1 };
		uint8_t *pk[4] = { big, NULL, big, big };
		size_t ln[4] = { 64, 64, 64, 24 }, of[4] = { 8, 8, 60, 8 };
		int rc[4] = { 1, 1, 1, 1 };

		memset(big, 0, 64);
		tw_simaka_mac_fill_many(ctx, pk, ln, of, NULL, 4);
		if (!tw_ct_is_zero(big, 64))
			abort();
		tw_simaka_mac_fill_many(ctx, pk, ln, of, rc, 4);
		if (rc[0] != TW_ERR_INVAL || rc[1] != TW_ERR_INVAL || rc[2] != TW_ERR_RANGE ||
		    rc[3] != TW_OK || !tw_ct_is_zero(big, 8) || !tw_ct_is_zero(big + 24, 40))
			abort();
		ref_mac(TW_EAP_TYPE_AKA, key, big, 24, 8, NULL, 0, val);
		if (memcmp(big + 8, val, 16) != 0)
			abort();
	}
	/* decrypt: NULL, no AT_ENCR_DATA, no room, overlapping buffers */
	want_rc(tw_simaka_decrypt(NULL, buf, sizeof(buf), &m, key), TW_ERR_INVAL);
	want_rc(tw_simaka_decrypt(&in, NULL, sizeof(buf), &m, key), TW_ERR_INVAL);
	want_rc(tw_simaka_decrypt(&in, buf, sizeof(buf), NULL, key), TW_ERR_INVAL);
	want_rc(tw_simaka_decrypt(&in, buf, sizeof(buf), &m, key), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 2, TW_EAP_TYPE_SIM,
			     TW_SIMAKA_REAUTH);
	tw_simaka_begin_encr(&b, iv16);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, 5, NULL, 0);
	tw_simaka_end_encr(&b, key);
	want_rc(tw_simaka_finish(&b, &len), TW_OK);
	want_rc(tw_simaka_decode(&m, buf, len), TW_OK);
	want_rc(tw_simaka_decrypt(&in, big, 15, &m, key), TW_ERR_OVERFLOW);
	want_rc(tw_simaka_decrypt(&in, (uint8_t *)m.encr_data.val, 16, &m, key), TW_ERR_INVAL);
	want_rc(tw_simaka_decrypt(&in, big, 16, &m, key), TW_OK);
	if (!tw_simaka_has(&in.counter) || in.counter_value != 5 || !tw_simaka_has(&in.padding))
		abort();
	/* the builder's refusals, each sticky and reported by _finish */
	tw_simaka_build_init(&b, buf, sizeof(buf), 3, 1, TW_EAP_TYPE_AKA, 1);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_INVAL);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, 1, 1);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_INVAL);
	tw_simaka_build_init(&b, NULL, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_OVERFLOW);
	for (int k = 0; k < 16; k++) {
		size_t max = k == 9 ? 8 + 16 + 4 + 2 : k == 15 ? 20 : sizeof(buf);
		int want = TW_ERR_LENGTH;

		memset(buf, 0xee, sizeof(buf));
		tw_simaka_build_init(&b, buf, max, TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
		switch (k) {
		case 0:
			tw_simaka_put_fixed(&b, TW_AT_RAND, 0, big, 6);
			break;
		case 1:
			tw_simaka_put_fixed(&b, TW_AT_RAND, 0, big, 1020);
			break;
		case 2:
			tw_simaka_put_fixed(&b, TW_AT_RAND, 0, NULL, 16);
			break;
		case 3:
			tw_simaka_put_var(&b, TW_AT_IDENTITY, big, 1017);
			break;
		case 4:
			tw_simaka_put_var(&b, TW_AT_IDENTITY, NULL, 1);
			break;
		case 5:
			tw_simaka_put_res(&b, NULL, 64);
			break;
		case 6:
			tw_simaka_put_res(&b, big, 31);
			break;
		case 7:
			tw_simaka_put_res(&b, big, 129);
			break;
		case 8:
			/* two AT_MACs */
			tw_simaka_put_mac(&b);
			tw_simaka_put_mac(&b);
			want = TW_ERR_STATE;
			break;
		case 9:
			/* no room for AT_ENCR_DATA after AT_IV; then every
			 * later put is a no-op */
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_put_auts(&b, big);
			tw_simaka_put_var(&b, TW_AT_IDENTITY, big, 4);
			tw_simaka_put_res(&b, big, 64);
			tw_simaka_put_mac(&b);
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_end_encr(&b, key);
			tw_simaka_end_encr_later(&b, &e);
			want = TW_ERR_OVERFLOW;
			break;
		case 10:
			/* AT_MAC inside AT_ENCR_DATA, then a second AT_IV */
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_put_mac(&b);
			want = TW_ERR_STATE;
			break;
		case 11:
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_begin_encr(&b, iv16);
			want = TW_ERR_STATE;
			break;
		case 12:
			/* nothing to encrypt; or nowhere to say where */
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_end_encr(&b, key);
			want = TW_ERR_INVAL;
			break;
		case 13:
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_put_fixed(&b, TW_AT_COUNTER, 1, NULL, 0);
			tw_simaka_end_encr_later(&b, NULL);
			want = TW_ERR_INVAL;
			break;
		case 14:
			/* plaintext past the 1020 octets of one attribute */
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, big, 600);
			tw_simaka_put_var(&b, TW_AT_NEXT_REAUTH_ID, big, 420);
			tw_simaka_end_encr(&b, key);
			break;
		case 15:
			/* no room for AT_AUTS, nor then for AT_PADDING */
			tw_simaka_put_auts(&b, big);
			want = TW_ERR_OVERFLOW;
			break;
		}
		want_rc(tw_simaka_finish(&b, &len), want);
		/* a refused message is wiped */
		if (len != 0 || !tw_ct_is_zero(buf, max < 8 ? max : 8))
			abort();
	}
	/* closing AT_ENCR_DATA that was never opened; AT_PADDING without room */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_end_encr(&b, key);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, 8 + 20 + 4 + 4, TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_begin_encr(&b, iv16);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, 1, NULL, 0);
	tw_simaka_end_encr(&b, key);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_OVERFLOW);
	/* an open AT_ENCR_DATA or an unfilled AT_MAC cannot be finished */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_begin_encr(&b, iv16);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_STATE);
	want_rc(tw_simaka_finish(&b, NULL), TW_ERR_INVAL);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_mac(&b);
	want_rc(tw_simaka_finish(&b, &len), TW_ERR_STATE);
	want_rc(tw_simaka_finish_mac_later(NULL, &len, &off), TW_ERR_INVAL);
	want_rc(tw_simaka_finish_mac_later(&b, NULL, &off), TW_ERR_INVAL);
	want_rc(tw_simaka_finish_mac_later(&b, &len, NULL), TW_ERR_INVAL);
	want_rc(tw_simaka_finish_mac(NULL, &sha1, NULL, 0, &len), TW_ERR_INVAL);
	want_rc(tw_simaka_finish_mac(&b, NULL, NULL, 0, &len), TW_ERR_INVAL);
	want_rc(tw_simaka_finish_mac(&b, &sha1, NULL, 0, NULL), TW_ERR_INVAL);
	/* a K_aut of another method */
	want_rc(tw_simaka_finish_mac(&b, &mc, NULL, 0, &len), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	want_rc(tw_simaka_finish_mac_later(&b, &len, &off), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	want_rc(tw_simaka_finish_mac(&b, &sha1, NULL, 0, &len), TW_ERR_STATE);
	/* a MAC reserved, filled later: the same as OpenSSL's */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_mac(&b);
	want_rc(tw_simaka_finish_mac_later(&b, &len, &off), TW_OK);
	want_rc(tw_simaka_mac_compute(&sha1, mac, buf, len, off, NULL, 0), TW_OK);
	ref_mac(TW_EAP_TYPE_AKA, key, buf, len, off, NULL, 0, val);
	if (off != 12 || len != 28 || memcmp(mac, val, 16) != 0)
		abort();
	/* AT_CHECKCODE: no context, no method, EAP-SIM has none */
	want_rc(tw_simaka_checkcode_init(NULL, TW_EAP_TYPE_AKA), TW_ERR_INVAL);
	want_rc(tw_simaka_checkcode_init(&cc, TW_EAP_TYPE_SIM), TW_ERR_INVAL);
	tw_simaka_checkcode_add(&cc, pkt, 8);
	if (tw_simaka_checkcode_value(&cc, val) != 0)
		abort();
	want_rc(tw_simaka_checkcode_verify(NULL, &m), TW_ERR_INVAL);
	want_rc(tw_simaka_checkcode_verify(&cc, NULL), TW_ERR_INVAL);
	/* a checkcode of the right length from the other method's message */
	want_rc(tw_simaka_checkcode_init(&cc, TW_EAP_TYPE_AKA), TW_OK);
	tw_simaka_checkcode_add(&cc, pkt, 8);
	if (tw_simaka_checkcode_value(&cc, val) != 20)
		abort();
	memset(&m, 0, sizeof(m));
	m.method = TW_EAP_TYPE_AKA_PRIME;
	m.checkcode.val = val;
	m.checkcode.len = 20;
	want_rc(tw_simaka_checkcode_verify(&cc, &m), TW_ERR_AUTH);
	m.method = TW_EAP_TYPE_AKA;
	want_rc(tw_simaka_checkcode_verify(&cc, &m), TW_OK);
	/* sticky errors: nothing is put after the first, even what fits */
	for (int k = 0; k < 4; k++) {
		tw_simaka_build_init(&b, buf, 8 + 4 * k + 2, TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
		for (int j = 0; j < k; j++)
			tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
		switch (k) {
		case 0:
			tw_simaka_put_var(&b, TW_AT_IDENTITY, NULL, 0);
			break;
		case 1:
			tw_simaka_put_res(&b, big, 32);
			break;
		case 2:
			tw_simaka_put_mac(&b);
			break;
		default:
			tw_simaka_put_fixed(&b, TW_AT_RAND, 0, big, 16);
			break;
		}
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
		want_rc(tw_simaka_finish(&b, &len), TW_ERR_OVERFLOW);
	}
	/* a K_aut of another method, on a builder still sound */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_mac(&b);
	want_rc(tw_simaka_finish_mac(&b, &mc, NULL, 0, &len), TW_ERR_STATE);
	/* closed later and encrypted in a batch: the octets of _end_encr */
	{
		static uint8_t one[3][200];
		struct tw_simaka_encr_later el[3];
		uint8_t *bufs[3] = { one[1], one[2], one[0] };
		const uint8_t *keys[3] = { key, key, key };
		size_t l2 = 0;

		for (int k = 0; k < 3; k++) {
			tw_simaka_build_init(&b, one[k], sizeof(one[k]), TW_EAP_REQUEST, 4,
					     TW_EAP_TYPE_AKA, TW_SIMAKA_REAUTH);
			tw_simaka_begin_encr(&b, iv16);
			tw_simaka_put_fixed(&b, TW_AT_NONCE_S, 0, big, 16);
			if (k == 0)
				tw_simaka_end_encr(&b, key);
			else
				tw_simaka_end_encr_later(&b, &el[k - 1]);
			want_rc(tw_simaka_finish(&b, k == 0 ? &len : &l2), TW_OK);
		}
		el[2] = el[0];
		tw_simaka_encrypt_many(bufs, el, keys, 2);
		tw_simaka_encrypt_many(bufs, el, keys, 0);
		if (l2 != len || memcmp(one[1], one[0], len) != 0 || memcmp(one[2], one[0], len) != 0)
			abort();
		ref_decrypt(key, iv16, one[0] + 32, 32, big);
		if (big[0] != TW_AT_NONCE_S || big[1] != 5)
			abort();
	}
	/* decoded views the decoder never makes: AT_ENCR_DATA without AT_IV
	 * or not a multiple of 16, an AT_MAC short or past the packet */
	memset(&m, 0, sizeof(m));
	m.method = TW_EAP_TYPE_AKA;
	m.pkt = big;
	m.pkt_len = 40;
	m.encr_data.val = big + 8;
	m.encr_data.len = 16;
	want_rc(tw_simaka_decrypt(&in, buf, sizeof(buf), &m, key), TW_ERR_STATE);
	m.iv.val = big + 24;
	m.iv.len = 16;
	m.encr_data.len = 0;
	want_rc(tw_simaka_decrypt(&in, buf, sizeof(buf), &m, key), TW_ERR_DECODE);
	m.encr_data.len = 20;
	want_rc(tw_simaka_decrypt(&in, buf, sizeof(buf), &m, key), TW_ERR_DECODE);
	m.mac.val = big + 30;
	m.mac.len = 12;
	want_rc(tw_simaka_mac_verify(&sha1, &m, NULL, 0), TW_ERR_AUTH);
	m.mac.len = 16;
	want_rc(tw_simaka_mac_verify(&sha1, &m, NULL, 0), TW_ERR_RANGE);
	/* fill_many with no array: nothing written */
	{
		struct tw_simaka_mac_ctx *ctx[1] = { &sha1 };
		uint8_t *pk[1] = { big };
		size_t ln[1] = { 24 }, of[1] = { 8 };
		int rc[1] = { 1 };

		memset(big, 0, 24);
		tw_simaka_mac_fill_many(NULL, pk, ln, of, rc, 1);
		tw_simaka_mac_fill_many(ctx, NULL, ln, of, rc, 1);
		tw_simaka_mac_fill_many(ctx, pk, NULL, of, rc, 1);
		tw_simaka_mac_fill_many(ctx, pk, ln, NULL, rc, 1);
		if (rc[0] != 1 || !tw_ct_is_zero(big, 24))
			abort();
		/* AKA' entries the lanes cannot take: off past len, too long */
		struct tw_simaka_mac_ctx *c2[2] = { &mc, &mc };
		uint8_t *p2[2] = { big, big + 400 };
		size_t l2[2] = { 24, 400 }, o2[2] = { 30, 8 };
		int r2[2] = { 1, 1 };

		tw_simaka_mac_fill_many(c2, p2, l2, o2, r2, 2);
		ref_mac(TW_EAP_TYPE_AKA_PRIME, key, big + 400, 400, 8, NULL, 0, val);
		if (r2[0] != TW_ERR_RANGE || r2[1] != TW_OK || memcmp(big + 408, val, 16) != 0)
			abort();
	}
	/* an empty AT_CHECKCODE, none expected; one of the wrong length */
	{
		struct tw_simaka_checkcode_ctx fresh;

		want_rc(tw_simaka_checkcode_init(&fresh, TW_EAP_TYPE_AKA_PRIME), TW_OK);
		m.checkcode.val = val;
		m.checkcode.len = 0;
		want_rc(tw_simaka_checkcode_verify(&fresh, &m), TW_OK);
		m.checkcode.len = 32;
		want_rc(tw_simaka_checkcode_verify(&fresh, &m), TW_ERR_AUTH);
		m.checkcode.len = 0;
		want_rc(tw_simaka_checkcode_verify(&cc, &m), TW_ERR_AUTH);
	}
	/* seventeen EAP-AKA' messages at once (the lanes, then one left
	 * over): each MAC as OpenSSL computes it */
	{
		static uint8_t many[17][80];
		struct tw_simaka_mac_ctx *ctx[17];
		uint8_t *pk[17];
		size_t ln[17], of[17];
		int rc[17];

		for (int i = 0; i < 17; i++) {
			memset(many[i], i, sizeof(many[i]));
			ctx[i] = &mc;
			pk[i] = many[i];
			ln[i] = 40 + (size_t)i * 2;
			of[i] = 8 + (size_t)i;
		}
		tw_simaka_mac_fill_many(ctx, pk, ln, of, rc, 17);
		for (int i = 0; i < 17; i++) {
			memset(big, i, sizeof(many[i]));
			ref_mac(TW_EAP_TYPE_AKA_PRIME, key, big, ln[i], of[i], NULL, 0, val);
			if (rc[i] != TW_OK || memcmp(many[i] + of[i], val, 16) != 0)
				abort();
		}
	}
	/* an EAP-AKA' re-authentication MAC over the message | NONCE_S
	 * (RFC 4187 §9.7, RFC 9048 §3.4.1): OpenSSL's, verifying with that
	 * NONCE_S only */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 9, TW_EAP_TYPE_AKA_PRIME,
			     TW_SIMAKA_REAUTH);
	tw_simaka_put_mac(&b);
	want_rc(tw_simaka_finish_mac(&b, &mc, iv16, 16, &len), TW_OK);
	ref_mac(TW_EAP_TYPE_AKA_PRIME, key, buf, len, 12, iv16, 16, val);
	want_rc(tw_simaka_decode(&m, buf, len), TW_OK);
	if (memcmp(buf + 12, val, 16) != 0)
		abort();
	want_rc(tw_simaka_mac_verify(&mc, &m, iv16, 16), TW_OK);
	want_rc(tw_simaka_mac_verify(&mc, &m, key, 16), TW_ERR_AUTH);
	want_rc(tw_simaka_mac_verify(&mc, &m, NULL, 0), TW_ERR_AUTH);
	tw_simaka_mac_wipe(&mc);
	tw_simaka_mac_wipe(&sha1);
}

static const uint8_t k_encr[16] = { 0x53, 0x6e, 0x5e, 0xbc, 0x44, 0x65, 0x58,
				    0x2a, 0xa6, 0xa8, 0xec, 0x99, 0x86, 0xeb,
				    0xb6, 0x20 };

/*
 * The input with an AT_MAC made valid by OpenSSL under the fixed K_aut
 * (with message-specific data when its Identifier is odd, as the
 * re-authentication and EAP-SIM MACs have): it must verify, with the
 * extra data changed or missing it must not. Its AT_ENCR_DATA, now the
 * MAC's to vouch for, decrypts as OpenSSL's AES-128-CBC under K_encr
 * does and decodes with tw_simaka_decode_inner's verdict.
 */
static void macked(const struct tw_simaka_msg *m)
{
	static uint8_t copy[70000], plain[1100], want[1100];
	static const uint8_t extra[17] = { 0xa5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0 };
	struct tw_simaka_msg c, in, ref;
	struct tw_simaka_mac_ctx mac;
	size_t off = (size_t)(m->mac.val - m->pkt), el = m->id & 1 ? 16 : 0;

	if (m->pkt_len > sizeof(copy))
		return;
	memcpy(copy, m->pkt, m->pkt_len);
	ref_mac(m->method, k32, copy, m->pkt_len, off, extra, el, copy + off);
	if (tw_simaka_decode(&c, copy, m->pkt_len) != TW_OK ||
	    tw_simaka_mac_init(&mac, m->method, k32, k_aut_len(m->method)) != TW_OK ||
	    tw_simaka_mac_verify(&mac, &c, el ? extra : NULL, el) != TW_OK ||
	    tw_simaka_mac_verify(&mac, &c, extra + 1, el) != (el ? TW_ERR_AUTH : TW_OK) ||
	    tw_simaka_mac_verify(&mac, &c, extra, el ^ 16) != TW_ERR_AUTH)
		abort();
	tw_simaka_mac_wipe(&mac);
	if (!tw_simaka_has(&c.encr_data))
		return;
	int err = tw_simaka_decrypt(&in, plain, sizeof(plain), &c, k_encr);
	ref_decrypt(k_encr, c.iv.val, c.encr_data.val, c.encr_data.len, want);
	int derr = tw_simaka_decode_inner(&ref, c.method, want, c.encr_data.len);
	if ((err == TW_OK) != (derr == TW_OK) ||
	    (err == TW_OK && (memcmp(plain, want, c.encr_data.len) != 0 ||
			      in.counter_value != ref.counter_value ||
			      (in.padding.val == NULL) != (ref.padding.val == NULL))) ||
	    (err != TW_OK && (err != TW_ERR_DECODE || !tw_ct_is_zero(plain, c.encr_data.len))))
		abort();
}

/* The nested decoder on the raw input as if it were decrypted: views
 * inside it, only nested attributes, the method kept on a refusal. */
static void raw_inner(const uint8_t *d, size_t n)
{
	static const uint8_t methods[3] = { TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					    TW_EAP_TYPE_AKA_PRIME };
	struct tw_simaka_msg in;

	n &= ~(size_t)15;
	if (n > 1008)
		n = 1008;
	for (int i = 0; i < 3; i++) {
		int err = tw_simaka_decode_inner(&in, methods[i], d, n);

		if (in.method != methods[i] || (err != TW_OK && err != TW_ERR_DECODE))
			abort();
		if (err != TW_OK)
			continue;
		if (in.mac.val || in.rand_.val || in.identity.val || in.encr_data.val ||
		    (in.padding.val &&
		     (in.padding.len > 10 || !tw_ct_is_zero(in.padding.val, in.padding.len))))
			abort();
		const struct tw_simaka_attr *a[] = { &in.padding, &in.counter,
						     &in.counter_too_small, &in.nonce_s,
						     &in.next_pseudonym, &in.next_reauth_id };
		for (size_t j = 0; j < sizeof(a) / sizeof(a[0]); j++)
			if (a[j]->val != NULL && (a[j]->val < d || a[j]->val + a[j]->len > d + n))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_simaka_msg m;
	struct tw_simaka_mac_ctx mac;

	contract();
	raw_inner(data, size);
	if (size > 0)
		check_checkcode((uint8_t[]){ TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					     TW_EAP_TYPE_AKA_PRIME }[data[size - 1] % 3],
				data, size);
	if (tw_simaka_decode(&m, data, size) != TW_OK)
		return 0;
	const struct tw_simaka_attr *all[] = {
		&m.rand_, &m.autn, &m.res, &m.auts, &m.padding, &m.nonce_mt,
		&m.permanent_id_req, &m.mac, &m.notification, &m.any_id_req,
		&m.identity, &m.version_list, &m.selected_version,
		&m.fullauth_id_req, &m.counter, &m.counter_too_small,
		&m.nonce_s, &m.client_error_code, &m.kdf_input, &m.kdf, &m.iv,
		&m.encr_data, &m.next_pseudonym, &m.next_reauth_id,
		&m.checkcode, &m.result_ind, &m.bidding,
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		in_bounds(&m, all[i]);
	/* Encrypted-only attributes never decode in the clear. */
	if (m.padding.val || m.counter.val || m.nonce_s.val ||
	    m.next_pseudonym.val || m.next_reauth_id.val || m.counter_too_small.val)
		abort();
	if ((m.iv.val == NULL) != (m.encr_data.val == NULL))
		abort();
	if (m.n_kdf > TW_SIMAKA_KDF_MAX)
		abort();
	if (tw_simaka_mac_init(&mac, m.method, k32,
			       m.method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16) != TW_OK)
		abort();
	/* A fuzzer could only reach TW_OK by forging HMAC: treat as a bug. */
	if (tw_simaka_mac_verify(&mac, &m, NULL, 0) != TW_ERR_AUTH)
		abort();
	tw_simaka_mac_wipe(&mac);
	if (tw_simaka_has(&m.mac))
		macked(&m);
	rebuild(&m);
	return 0;
}
