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

#include "fuzz_simaka_shared.h"
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
