/* Tests of the EAP-SIM/AKA/AKA' codec: RFC 4186 Appendix A packets and the
 * published EAP-AKA/AKA' packets decoded, MAC-verified, decrypted and
 * re-encoded byte for byte; bad input (zero-length and overrunning
 * attributes, EAP Length against the octets received, actual lengths
 * against their containers, AT_RES bit counts, ...); AT_MAC, CBC and
 * checkcode cross-checked against OpenSSL on random inputs. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"

static const struct tw_simaka_attr *slot(const struct tw_simaka_msg *m,
					 uint8_t type)
{
	switch (type) {
	case TW_AT_RAND: return &m->rand_;
	case TW_AT_AUTN: return &m->autn;
	case TW_AT_RES: return &m->res;
	case TW_AT_AUTS: return &m->auts;
	case TW_AT_PADDING: return &m->padding;
	case TW_AT_NONCE_MT: return &m->nonce_mt;
	case TW_AT_PERMANENT_ID_REQ: return &m->permanent_id_req;
	case TW_AT_MAC: return &m->mac;
	case TW_AT_NOTIFICATION: return &m->notification;
	case TW_AT_ANY_ID_REQ: return &m->any_id_req;
	case TW_AT_IDENTITY: return &m->identity;
	case TW_AT_VERSION_LIST: return &m->version_list;
	case TW_AT_SELECTED_VERSION: return &m->selected_version;
	case TW_AT_FULLAUTH_ID_REQ: return &m->fullauth_id_req;
	case TW_AT_COUNTER: return &m->counter;
	case TW_AT_COUNTER_TOO_SMALL: return &m->counter_too_small;
	case TW_AT_NONCE_S: return &m->nonce_s;
	case TW_AT_CLIENT_ERROR_CODE: return &m->client_error_code;
	case TW_AT_KDF_INPUT: return &m->kdf_input;
	case TW_AT_KDF: return &m->kdf;
	case TW_AT_IV: return &m->iv;
	case TW_AT_ENCR_DATA: return &m->encr_data;
	case TW_AT_NEXT_PSEUDONYM: return &m->next_pseudonym;
	case TW_AT_NEXT_REAUTH_ID: return &m->next_reauth_id;
	case TW_AT_CHECKCODE: return &m->checkcode;
	case TW_AT_RESULT_IND: return &m->result_ind;
	case TW_AT_BIDDING: return &m->bidding;
	default: return NULL;
	}
}

/* Re-encodes the attributes of buf[start..end) (already decoded into m) in
 * wire order with the builder. AT_IV is written by begin_encr, AT_PADDING
 * by end_encr. */
static void reencode(struct tw_simaka_builder *b, const struct tw_simaka_msg *m,
		     const uint8_t *buf, size_t start, size_t end,
		     const struct tw_simaka_msg *inner, const uint8_t *k_encr)
{
	unsigned kdf_i = 0;

	for (size_t pos = start; pos < end; pos += buf[pos + 1] * 4u) {
		uint8_t type = buf[pos];
		const struct tw_simaka_attr *a = slot(m, type);

		switch (type) {
		case TW_AT_RAND: case TW_AT_AUTN: case TW_AT_NONCE_MT:
		case TW_AT_NONCE_S: case TW_AT_CHECKCODE:
			tw_simaka_put_fixed(b, type, 0, a->val, a->len);
			break;
		case TW_AT_PERMANENT_ID_REQ: case TW_AT_ANY_ID_REQ:
		case TW_AT_FULLAUTH_ID_REQ: case TW_AT_COUNTER_TOO_SMALL:
		case TW_AT_RESULT_IND:
			tw_simaka_put_fixed(b, type, 0, NULL, 0);
			break;
		case TW_AT_NOTIFICATION: case TW_AT_SELECTED_VERSION:
		case TW_AT_COUNTER: case TW_AT_CLIENT_ERROR_CODE:
		case TW_AT_BIDDING:
			tw_simaka_put_fixed(b, type, tw_load_be16(a->val), NULL, 0);
			break;
		case TW_AT_KDF:
			tw_simaka_put_fixed(b, type, m->kdf_list[kdf_i++], NULL, 0);
			break;
		case TW_AT_IDENTITY: case TW_AT_VERSION_LIST:
		case TW_AT_NEXT_PSEUDONYM: case TW_AT_NEXT_REAUTH_ID:
		case TW_AT_KDF_INPUT:
			tw_simaka_put_var(b, type, a->val, a->len);
			break;
		case TW_AT_RES:
			tw_simaka_put_res(b, a->val, m->res_bits);
			break;
		case TW_AT_AUTS:
			tw_simaka_put_auts(b, a->val);
			break;
		case TW_AT_MAC:
			tw_simaka_put_mac(b);
			break;
		case TW_AT_IV: case TW_AT_PADDING:
			break;
		case TW_AT_ENCR_DATA:
			tw_simaka_begin_encr(b, m->iv.val);
			reencode(b, inner, inner->pkt, 0, inner->pkt_len, NULL, NULL);
			tw_simaka_end_encr(b, k_encr);
			break;
		default:
			CHECK(!"unexpected attribute in a vector");
		}
	}
}

static void text_expect(const struct tv_case *c, const char *key,
			const struct tw_simaka_attr *a)
{
	const char *s = tv_str(c, key);

	CHECK(s != NULL && tw_simaka_has(a) && a->len == strlen(s) &&
	      memcmp(a->val, s, a->len) == 0);
}

static void hex_expect(const struct tv_case *c, const char *key,
		       const struct tw_simaka_attr *a)
{
	CHECK(tw_simaka_has(a));
	if (tw_simaka_has(a))
		TV_EXPECT(c, key, a->val, a->len);
}

static void packet_case(const struct tv_case *c)
{
	uint8_t pkt[1024], copy[1024], k_aut[32], k_encr[16], extra[64];
	uint8_t plain[1024], out[1024];
	struct tw_simaka_msg m, inner;
	struct tw_simaka_mac_ctx mac;
	size_t n = tv_hex(c, "packet", pkt, sizeof(pkt));
	size_t extra_len = 0, out_len = 0;
	bool encr = tv_has(c, "k_encr");

	memset(&inner, 0, sizeof(inner));
	memset(extra, 0, sizeof(extra));
	CHECK_OK(tw_simaka_decode(&m, pkt, n));
	CHECK(m.subtype == tv_int(c, "subtype", -1));
	CHECK(m.pkt_len == n && m.n_skipped == 0);
	if (tv_has(c, "rand")) hex_expect(c, "rand", &m.rand_);
	if (tv_has(c, "autn")) hex_expect(c, "autn", &m.autn);
	if (tv_has(c, "auts")) hex_expect(c, "auts", &m.auts);
	if (tv_has(c, "iv")) hex_expect(c, "iv", &m.iv);
	if (tv_has(c, "nonce_mt")) hex_expect(c, "nonce_mt", &m.nonce_mt);
	if (tv_has(c, "version_list")) hex_expect(c, "version_list", &m.version_list);
	if (tv_has(c, "mac")) hex_expect(c, "mac", &m.mac);
	if (tv_has(c, "res")) {
		hex_expect(c, "res", &m.res);
		CHECK(m.res_bits == tv_int(c, "res_bits", -1));
	}
	if (tv_has(c, "identity")) text_expect(c, "identity", &m.identity);
	if (tv_has(c, "kdf_input")) text_expect(c, "kdf_input", &m.kdf_input);
	if (tv_has(c, "kdf"))
		CHECK(m.n_kdf == 1 && m.kdf_list[0] == tv_int(c, "kdf", -1));
	if (tv_has(c, "selected_version"))
		CHECK(tw_simaka_has(&m.selected_version) &&
		      m.selected_ver == tv_int(c, "selected_version", -1));
	if (tv_has(c, "any_id_req"))
		CHECK(tw_simaka_has(&m.any_id_req));
	if (tv_has(c, "mac_extra"))
		extra_len = tv_hex(c, "mac_extra", extra, sizeof(extra));

	if (tv_has(c, "k_aut")) {
		size_t kl = tv_hex(c, "k_aut", k_aut, sizeof(k_aut));

		CHECK_OK(tw_simaka_mac_init(&mac, m.method, k_aut, kl));
		CHECK_OK(tw_simaka_mac_verify(&mac, &m, extra, extra_len));
		/* Wrong extra data (e.g. a different NONCE_MT) must fail. */
		extra[0] ^= 1;
		CHECK_ERR(tw_simaka_mac_verify(&mac, &m, extra,
					       extra_len ? extra_len : 1),
			  TW_ERR_AUTH);
		extra[0] ^= 1;
		/* Every single-bit flip anywhere after the header, in the MAC
		 * or elsewhere, must fail (or not decode at all). */
		bool all = true;
		for (size_t bit = 0; bit < n * 8; bit++) {
			struct tw_simaka_msg m2;

			memcpy(copy, pkt, n);
			copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (tw_simaka_decode(&m2, copy, n) != TW_OK ||
			    m2.method != m.method)
				continue;
			if (tw_simaka_mac_verify(&mac, &m2, extra, extra_len) !=
			    TW_ERR_AUTH)
				all = false;
		}
		CHECK(all);
	}

	if (encr) {
		tv_hex(c, "k_encr", k_encr, sizeof(k_encr));
		CHECK_ERR(tw_simaka_decrypt(&inner, plain, m.encr_data.len - 1,
					    &m, k_encr), TW_ERR_OVERFLOW);
		CHECK_OK(tw_simaka_decrypt(&inner, plain, sizeof(plain), &m,
					   k_encr));
		TV_EXPECT(c, "plaintext", plain, m.encr_data.len);
		text_expect(c, "next_pseudonym", &inner.next_pseudonym);
		text_expect(c, "next_reauth_id", &inner.next_reauth_id);
		CHECK(tw_simaka_has(&inner.padding) &&
		      inner.padding.len + 2 == tv_int(c, "padding_len", -1));
		/* A wrong K_encr yields garbage that the strict decoder
		 * rejects (and the plaintext buffer is wiped). */
		k_encr[0] ^= 0x80;
		CHECK(tw_simaka_decrypt(&inner, plain, sizeof(plain), &m,
					k_encr) != TW_OK);
		CHECK(tw_ct_is_zero(plain, m.encr_data.len));
		k_encr[0] ^= 0x80;
		CHECK_OK(tw_simaka_decrypt(&inner, plain, sizeof(plain), &m,
					   k_encr));
	}

	/* Re-encode byte for byte (same IV, same padding, MAC recomputed). */
	struct tw_simaka_builder b;
	tw_simaka_build_init(&b, out, sizeof(out), m.code, m.id, m.method,
			     m.subtype);
	reencode(&b, &m, pkt, TW_SIMAKA_HDR_LEN, n, &inner, k_encr);
	if (tw_simaka_has(&m.mac))
		CHECK_OK(tw_simaka_finish_mac(&b, &mac, extra, extra_len, &out_len));
	else
		CHECK_OK(tw_simaka_finish(&b, &out_len));
	CHECK(out_len == n);
	CHECK_MEM(out, pkt, n);

	/* Truncating the packet anywhere inside the attributes (Length field
	 * adjusted) never decodes to the same thing silently. */
	bool trunc_ok = true;
	for (size_t t = TW_SIMAKA_HDR_LEN + 1; t < n; t++) {
		struct tw_simaka_msg m3;

		memcpy(copy, pkt, t);
		tw_store_be16(copy + 2, (uint16_t)t);
		int err = tw_simaka_decode(&m3, copy, t);
		/* Only a cut at an attribute boundary may decode. */
		if (err == TW_OK && tw_simaka_has(&m.mac) && tw_simaka_has(&m3.mac))
			trunc_ok &= tw_simaka_mac_verify(&mac, &m3, extra, extra_len) == TW_ERR_AUTH;
	}
	CHECK(trunc_ok);
	if (tv_has(c, "k_aut"))
		tw_simaka_mac_wipe(&mac);
}

/* ---- bad input -------------------------------------------------------- */

/* tw_test_hex() with spaces allowed, for readable attribute boundaries. */
static size_t hx(uint8_t *out, size_t max, const char *spaced)
{
	char tight[1200];
	size_t j = 0;

	for (size_t i = 0; spaced[i] != '\0' && j + 1 < sizeof(tight); i++)
		if (spaced[i] != ' ')
			tight[j++] = spaced[i];
	tight[j] = '\0';
	return tw_test_hex(out, max, tight);
}

static int dec(const char *hex)
{
	uint8_t p[512];
	struct tw_simaka_msg m;
	size_t n = hx(p, sizeof(p), hex);

	return tw_simaka_decode(&m, p, n);
}

static int dec_inner(uint8_t method, const char *hex)
{
	uint8_t p[512];
	struct tw_simaka_msg m;
	size_t n = hx(p, sizeof(p), hex);

	return tw_simaka_decode_inner(&m, method, p, n);
}

static void test_bad_input(void)
{
	/* Baselines that are valid, so each negative differs by one thing. */
	CHECK_OK(dec("0101000c170500000d010000"));
	CHECK_OK(dec("01010008170500 00"));
	/* Zero-length attribute (the 4*L-4 underflow). */
	CHECK_ERR(dec("0101000c170500000d000000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101000c1705000086000000"), TW_ERR_DECODE);
	/* Attribute overrunning the packet (L = 2 in 4 octets). */
	CHECK_ERR(dec("0101000c170500000d020000"), TW_ERR_DECODE);
	/* A 1..3 octet tail that cannot hold an attribute header. */
	CHECK_ERR(dec("0101000a170500000d01"), TW_ERR_DECODE);
	/* EAP Length above the octets received; EAP Length below header. */
	CHECK_ERR(dec("0101000d170500000d010000"), TW_ERR_DECODE);
	CHECK_ERR(dec("010100071705 00"), TW_ERR_DECODE);
	/* Link padding after Length is ignored. */
	CHECK_OK(dec("0101000c170500000d010000ffffff"));
	/* Actual length larger than its container (AT_IDENTITY 5 in 4). */
	CHECK_ERR(dec("0101001017050000 0e02000561626364"), TW_ERR_DECODE);
	CHECK_OK(dec("0101001017050000 0e02000461626364"));
	/* ... or a container with an extra padding word. */
	CHECK_ERR(dec("0101001417050000 0e030004616263640000 0000"), TW_ERR_DECODE);
	/* AT_RES: bits above 128, below 32, or more than the container. */
	CHECK_OK(dec("0101001017010000 0302002001020304"));
	CHECK_ERR(dec("0101001017010000 0302001f01020304"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001017010000 0302002101020304"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001817010000 0304008801020304050607080910111213141516"), TW_ERR_DECODE);
	/* AT_VERSION_LIST with an odd actual length. */
	CHECK_ERR(dec("01010010120a0000 0f02000300010000"), TW_ERR_DECODE);
	/* Unknown non-skippable attribute (5, 127), and one another method
	 * defines (AT_AUTN in EAP-SIM); unknown skippable ones (137, 255)
	 * are ignored. */
	CHECK_ERR(dec("0101000c17050000 05010000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101000c17050000 7f010000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001c120b0000 02050000000102030405060708090a0b0c0d0e0f"), TW_ERR_DECODE);
	CHECK_OK(dec("0101001017050000 89010000 ff010000"));
	/* AT_KDF only in AKA'; AT_BIDDING only in AKA (skipped elsewhere). */
	CHECK_ERR(dec("0101000c17010000 18010001"), TW_ERR_DECODE);
	CHECK_OK(dec("0101000c32010000 18010001"));
	{
		uint8_t p[16];
		struct tw_simaka_msg m;
		size_t n = hx(p, sizeof(p), "0101000c32010000 88018000");

		CHECK_OK(tw_simaka_decode(&m, p, n));
		CHECK(!tw_simaka_has(&m.bidding) && m.n_skipped == 1);
		n = hx(p, sizeof(p), "0101000c17010000 88018000");
		CHECK_OK(tw_simaka_decode(&m, p, n));
		CHECK(tw_simaka_has(&m.bidding) && m.bidding_value == TW_SIMAKA_BIDDING_D);
	}
	/* AT_KDF repeats in order; other attributes must not repeat. */
	{
		uint8_t p[32];
		struct tw_simaka_msg m;
		size_t n = hx(p, sizeof(p), "0101001432010000 18010002 18010001 18010003");

		CHECK_OK(tw_simaka_decode(&m, p, n));
		CHECK(m.n_kdf == 3 && m.kdf_list[0] == 2 && m.kdf_list[1] == 1 &&
		      m.kdf_list[2] == 3);
	}
	CHECK_ERR(dec("0101001017050000 0d010000 0d010000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001017050000 87010000 87010000"), TW_ERR_DECODE);
	/* AT_PADDING outside AT_ENCR_DATA. */
	CHECK_ERR(dec("0101000c17010000 06010000"), TW_ERR_DECODE);
	/* Encrypted-only attributes in the clear. */
	CHECK_ERR(dec("0101000c170d0000 13010001"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001017050000 8402000161000000"), TW_ERR_DECODE);
	/* AT_ENCR_DATA not a multiple of 16, empty, or without AT_IV; AT_IV
	 * without AT_ENCR_DATA. */
	CHECK_OK(dec("01010030170d0000 81050000000102030405060708090a0b0c0d0e0f 8205000000000000000000000000000000000000"));
	CHECK_ERR(dec("01010020170d0000 8206000000000000000000000000000000000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001c170d0000 82040000000000000000000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101000c170d0000 82010000"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001c170d0000 81050000000102030405060708090a0b0c0d0e0f"), TW_ERR_DECODE);
	/* Inside: AT_PADDING of 4, 8, 12 zero octets is fine; non-zero, or
	 * over 12 octets, or an outer attribute, or nested AT_ENCR_DATA is not. */
	CHECK_OK(dec_inner(TW_EAP_TYPE_AKA, "13010005 060300000000000000000000"));
	CHECK_OK(dec_inner(TW_EAP_TYPE_AKA, "13010005 14010000 0602000000000000"));
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "13010005 0603000000000000000000000001"), TW_ERR_DECODE);
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "0604000000000000000000000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "13010005 0d010000 0602000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "13010005 0b030000 0000000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "13010005 13010006 0602000000000000"), TW_ERR_DECODE);
	CHECK_ERR(dec_inner(TW_EAP_TYPE_AKA, "1301000513010006"), TW_ERR_DECODE);
	/* AT_RAND: SIM holds 1..3 RANDs (the method answers 1 with a Client-
	 * Error), AKA exactly one. */
	CHECK_ERR(dec("0101001017010000 0102000000000000"), TW_ERR_DECODE);
	CHECK_OK(dec("0101001c17010000 01050000000102030405060708090a0b0c0d0e0f"));
	CHECK_ERR(dec("0101002c17010000 01090000000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"), TW_ERR_DECODE);
	/* AT_CHECKCODE: 0 or 20 octets in AKA, 0 or 32 in AKA'. */
	CHECK_OK(dec("0101000c17010000 86010000"));
	CHECK_ERR(dec("0101002c17010000 86090000 0000000000000000000000000000000000000000000000000000000000000000"), TW_ERR_DECODE);
	CHECK_OK(dec("0101002c32010000 86090000 0000000000000000000000000000000000000000000000000000000000000000"));
	/* Fixed-length attributes of the wrong length. */
	CHECK_ERR(dec("0101001817010000 0b040000000102030405060708090a0b"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001817040000 0405 0102030405060708090a0b0c0d0e0f1011"), TW_ERR_DECODE);
	CHECK_ERR(dec("0101001017010000 0d020000 00000000"), TW_ERR_DECODE);
	/* Not a SIM/AKA packet. */
	CHECK_ERR(dec("0101000c190500000d010000"), TW_ERR_UNSUPPORTED);
	CHECK_ERR(dec("03010004"), TW_ERR_UNSUPPORTED);
	CHECK_ERR(dec("0101000717050000"), TW_ERR_DECODE);
}

/* AT_MAC missing / truncated / flipped: rejected by verify. */
static void test_mac_rejects(void)
{
	uint8_t k_aut[16], pkt[64], buf[128];
	struct tw_simaka_mac_ctx mac;
	struct tw_simaka_msg m;
	struct tw_simaka_builder b;
	size_t n;

	tw_test_random(k_aut, sizeof(k_aut));
	CHECK_OK(tw_simaka_mac_init(&mac, TW_EAP_TYPE_AKA, k_aut, 16));
	CHECK_ERR(tw_simaka_mac_init(&mac, TW_EAP_TYPE_AKA_PRIME, k_aut, 16), TW_ERR_LENGTH);
	CHECK_ERR(tw_simaka_mac_init(&mac, TW_EAP_TYPE_IDENTITY, k_aut, 16), TW_ERR_INVAL);
	CHECK_OK(tw_simaka_mac_init(&mac, TW_EAP_TYPE_AKA, k_aut, 16));

	/* Missing AT_MAC. */
	n = hx(pkt, sizeof(pkt), "0201000c17020000 87010000");
	CHECK_OK(tw_simaka_decode(&m, pkt, n));
	CHECK_ERR(tw_simaka_mac_verify(&mac, &m, NULL, 0), TW_ERR_AUTH);

	/* A correct one, then truncated (AT_MAC L = 4: rejected by decode). */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 7,
			     TW_EAP_TYPE_AKA, TW_SIMAKA_CHALLENGE);
	tw_simaka_put_res(&b, k_aut, 64);
	tw_simaka_put_mac(&b);
	CHECK_OK(tw_simaka_finish_mac(&b, &mac, NULL, 0, &n));
	CHECK_OK(tw_simaka_decode(&m, buf, n));
	CHECK_OK(tw_simaka_mac_verify(&mac, &m, NULL, 0));
	memcpy(pkt, buf, n);
	pkt[n - 20 + 1] = 4;
	tw_store_be16(pkt + 2, (uint16_t)(n - 4));
	CHECK_ERR(tw_simaka_decode(&m, pkt, n - 4), TW_ERR_DECODE);
	/* One flipped bit in each MAC position. */
	bool all = true;
	for (unsigned bit = 0; bit < 128; bit++) {
		memcpy(pkt, buf, n);
		pkt[n - 16 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		CHECK_OK(tw_simaka_decode(&m, pkt, n));
		all &= tw_simaka_mac_verify(&mac, &m, NULL, 0) == TW_ERR_AUTH;
	}
	CHECK(all);
	/* A context keyed for another method is refused. */
	uint8_t k32[32] = { 0 };
	struct tw_simaka_mac_ctx mac2;
	CHECK_OK(tw_simaka_mac_init(&mac2, TW_EAP_TYPE_AKA_PRIME, k32, 32));
	CHECK_OK(tw_simaka_decode(&m, buf, n));
	CHECK_ERR(tw_simaka_mac_verify(&mac2, &m, NULL, 0), TW_ERR_INVAL);
	CHECK_ERR(tw_simaka_mac_compute(&mac, k32, buf, n, n - 15, NULL, 0), TW_ERR_RANGE);
	tw_simaka_mac_wipe(&mac);
	tw_simaka_mac_wipe(&mac2);
}

/* ---- cross-checks against OpenSSL ---------------------------------------- */

static void test_mac_openssl(void)
{
	static const uint8_t methods[3] = { TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					    TW_EAP_TYPE_AKA_PRIME };
	bool all = true;

	for (int iter = 0; iter < 300; iter++) {
		uint8_t method = methods[iter % 3];
		uint8_t k_aut[32], pkt[600], extra[48], z[700], ref[32], got[16];
		size_t kl = method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16;
		size_t n = 20 + tw_test_random_u32() % 560;
		size_t off = tw_test_random_u32() % (n - 15);
		size_t el = tw_test_random_u32() % sizeof(extra);
		unsigned int rl = 0;
		struct tw_simaka_mac_ctx mac;

		tw_test_random(k_aut, kl);
		tw_test_random(pkt, n);
		tw_test_random(extra, el);
		memcpy(z, pkt, n);
		memset(z + off, 0, 16);
		memcpy(z + n, extra, el);
		HMAC(kl == 32 ? EVP_sha256() : EVP_sha1(), k_aut, (int)kl, z,
		     n + el, ref, &rl);
		if (tw_simaka_mac_init(&mac, method, k_aut, kl) != TW_OK ||
		    tw_simaka_mac_compute(&mac, got, pkt, n, off, extra, el) != TW_OK)
			all = false;
		all &= memcmp(got, ref, 16) == 0;
		/* The keyed context is reusable: same result twice. */
		if (tw_simaka_mac_compute(&mac, got, pkt, n, off, extra, el) != TW_OK)
			all = false;
		all &= memcmp(got, ref, 16) == 0;
		tw_simaka_mac_wipe(&mac);
	}
	CHECK(all);

	/* AKA' lays short messages out padded in one buffer (up to 5 blocks)
	 * and streams longer ones: every length around the switch, with and
	 * without extra, one keyed context alternating between the paths. */
	uint8_t k_aut[32], pkt[400], extra[16], z[420], ref[32], got[16];
	struct tw_simaka_mac_ctx mac;
	unsigned int rl = 0;

	all = true;
	tw_test_random(k_aut, sizeof(k_aut));
	tw_test_random(pkt, sizeof(pkt));
	tw_test_random(extra, sizeof(extra));
	if (tw_simaka_mac_init(&mac, TW_EAP_TYPE_AKA_PRIME, k_aut, 32) != TW_OK)
		all = false;
	for (size_t n = 280; n < 330; n++) {
		for (size_t el = 0; el <= 16; el += 16) {
			size_t off = n / 3;

			memcpy(z, pkt, n);
			memset(z + off, 0, 16);
			memcpy(z + n, extra, el);
			HMAC(EVP_sha256(), k_aut, 32, z, n + el, ref, &rl);
			if (tw_simaka_mac_compute(&mac, got, pkt, n, off, extra,
						  el) != TW_OK)
				all = false;
			all &= memcmp(got, ref, 16) == 0;
		}
	}
	tw_simaka_mac_wipe(&mac);
	CHECK(all);
}

/* Random nested attributes through the builder's AT_ENCR_DATA, decrypted
 * by OpenSSL AES-128-CBC and by tw_simaka_decrypt. */
static void test_encr_openssl(void)
{
	bool all = true;

	for (int iter = 0; iter < 200; iter++) {
		uint8_t k_encr[16], iv[16], id1[120], id2[120], nonce_s[16];
		uint8_t buf[1024], ossl[1024], plain[1024];
		size_t l1 = tw_test_random_u32() % sizeof(id1);
		size_t l2 = tw_test_random_u32() % sizeof(id2);
		uint16_t counter = (uint16_t)tw_test_random_u32();
		struct tw_simaka_builder b;
		struct tw_simaka_msg m, inner;
		size_t n = 0;
		int ol = 0, fl = 0;

		tw_test_random(k_encr, 16);
		tw_test_random(iv, 16);
		tw_test_random(id1, l1);
		tw_test_random(id2, l2);
		tw_test_random(nonce_s, 16);
		tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 1,
				     TW_EAP_TYPE_AKA, TW_SIMAKA_REAUTH);
		tw_simaka_begin_encr(&b, iv);
		tw_simaka_put_fixed(&b, TW_AT_COUNTER, counter, NULL, 0);
		tw_simaka_put_fixed(&b, TW_AT_NONCE_S, 0, nonce_s, 16);
		if (iter & 1)
			tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, id1, l1);
		tw_simaka_put_var(&b, TW_AT_NEXT_REAUTH_ID, id2, l2);
		tw_simaka_end_encr(&b, k_encr);
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
		if (tw_simaka_finish(&b, &n) != TW_OK ||
		    tw_simaka_decode(&m, buf, n) != TW_OK) {
			all = false;
			continue;
		}
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		EVP_DecryptInit_ex(x, EVP_aes_128_cbc(), NULL, k_encr, m.iv.val);
		EVP_CIPHER_CTX_set_padding(x, 0);
		EVP_DecryptUpdate(x, ossl, &ol, m.encr_data.val, (int)m.encr_data.len);
		EVP_DecryptFinal_ex(x, ossl + ol, &fl);
		EVP_CIPHER_CTX_free(x);
		all &= m.encr_data.len % 16 == 0 && (size_t)(ol + fl) == m.encr_data.len;
		if (tw_simaka_decrypt(&inner, plain, sizeof(plain), &m, k_encr) != TW_OK) {
			all = false;
			continue;
		}
		all &= memcmp(plain, ossl, m.encr_data.len) == 0;
		all &= inner.counter_value == counter &&
		       memcmp(inner.nonce_s.val, nonce_s, 16) == 0 &&
		       inner.next_reauth_id.len == l2 &&
		       memcmp(inner.next_reauth_id.val, id2, l2) == 0 &&
		       tw_simaka_has(&inner.next_pseudonym) == (bool)(iter & 1);
		all &= tw_simaka_has(&m.result_ind);
	}
	CHECK(all);
}

static void test_checkcode(void)
{
	struct tw_simaka_checkcode_ctx cc;
	uint8_t id_req[12], id_rsp[40], want[32], got[32], buf[128];
	struct tw_simaka_builder b;
	struct tw_simaka_msg m;
	size_t n;

	CHECK_ERR(tw_simaka_checkcode_init(&cc, TW_EAP_TYPE_SIM), TW_ERR_INVAL);
	for (int alg = 0; alg < 2; alg++) {
		uint8_t method = alg ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;
		size_t hl = alg ? 32 : 20;

		tw_test_random(id_req, sizeof(id_req));
		tw_test_random(id_rsp, sizeof(id_rsp));
		CHECK_OK(tw_simaka_checkcode_init(&cc, method));
		CHECK(tw_simaka_checkcode_value(&cc, got) == 0);
		/* No identity round: empty or absent accepted. */
		tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, method, 1);
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, NULL, 0);
		CHECK_OK(tw_simaka_finish(&b, &n));
		CHECK_OK(tw_simaka_decode(&m, buf, n));
		CHECK_OK(tw_simaka_checkcode_verify(&cc, &m));

		tw_simaka_checkcode_add(&cc, id_req, sizeof(id_req));
		tw_simaka_checkcode_add(&cc, id_rsp, sizeof(id_rsp));
		uint8_t cat[52];
		memcpy(cat, id_req, sizeof(id_req));
		memcpy(cat + sizeof(id_req), id_rsp, sizeof(id_rsp));
		if (alg)
			SHA256(cat, sizeof(cat), want);
		else
			SHA1(cat, sizeof(cat), want);
		CHECK(tw_simaka_checkcode_value(&cc, got) == hl);
		CHECK_MEM(got, want, hl);
		/* _value() does not disturb the running hash. */
		CHECK(tw_simaka_checkcode_value(&cc, got) == hl);
		CHECK_MEM(got, want, hl);
		/* Empty now mismatches; the right value verifies; a flipped
		 * bit does not. */
		CHECK_ERR(tw_simaka_checkcode_verify(&cc, &m), TW_ERR_AUTH);
		tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, method, 1);
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, want, hl);
		CHECK_OK(tw_simaka_finish(&b, &n));
		CHECK_OK(tw_simaka_decode(&m, buf, n));
		CHECK_OK(tw_simaka_checkcode_verify(&cc, &m));
		buf[n - 1] ^= 1;
		CHECK_OK(tw_simaka_decode(&m, buf, n));
		CHECK_ERR(tw_simaka_checkcode_verify(&cc, &m), TW_ERR_AUTH);
	}
}

/* ---- builder ----------------------------------------------------------- */

static void test_builder(void)
{
	uint8_t buf[256], k_aut[32], rand_[16], autn[16], iv[16], k_encr[16];
	struct tw_simaka_builder b;
	struct tw_simaka_mac_ctx mac;
	struct tw_simaka_msg m;
	size_t n = 1, full = 0;

	tw_test_random(k_aut, 32);
	tw_test_random(rand_, 16);
	tw_test_random(autn, 16);
	tw_test_random(iv, 16);
	tw_test_random(k_encr, 16);
	CHECK_OK(tw_simaka_mac_init(&mac, TW_EAP_TYPE_AKA_PRIME, k_aut, 32));

	/* An AKA' challenge with every server-side attribute. */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_REQUEST, 9,
			     TW_EAP_TYPE_AKA_PRIME, TW_SIMAKA_CHALLENGE);
	tw_simaka_put_fixed(&b, TW_AT_RAND, 0, rand_, 16);
	tw_simaka_put_fixed(&b, TW_AT_AUTN, 0, autn, 16);
	tw_simaka_put_var(&b, TW_AT_KDF_INPUT, (const uint8_t *)"WLAN", 4);
	tw_simaka_put_fixed(&b, TW_AT_KDF, TW_SIMAKA_KDF_PRIME, NULL, 0);
	tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
	tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, NULL, 0);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, (const uint8_t *)"7abc", 4);
	tw_simaka_end_encr(&b, k_encr);
	tw_simaka_put_mac(&b);
	CHECK_OK(tw_simaka_finish_mac(&b, &mac, NULL, 0, &full));
	CHECK_OK(tw_simaka_decode(&m, buf, full));
	CHECK(m.code == TW_EAP_REQUEST && m.id == 9 && m.subtype == 1);
	CHECK(m.n_kdf == 1 && m.kdf_list[0] == 1 && m.kdf_input.len == 4);
	CHECK(tw_simaka_has(&m.result_ind) && tw_simaka_has(&m.checkcode));
	CHECK(m.encr_data.len == 16);
	CHECK_OK(tw_simaka_mac_verify(&mac, &m, NULL, 0));

	/* Every too-small buffer reports TW_ERR_OVERFLOW and wipes. */
	bool all = true;
	for (size_t max = 0; max < full; max++) {
		uint8_t small[256];

		memset(small, 0xee, sizeof(small));
		tw_simaka_build_init(&b, small, max, TW_EAP_REQUEST, 9,
				     TW_EAP_TYPE_AKA_PRIME, TW_SIMAKA_CHALLENGE);
		tw_simaka_put_fixed(&b, TW_AT_RAND, 0, rand_, 16);
		tw_simaka_put_fixed(&b, TW_AT_AUTN, 0, autn, 16);
		tw_simaka_put_var(&b, TW_AT_KDF_INPUT, (const uint8_t *)"WLAN", 4);
		tw_simaka_put_fixed(&b, TW_AT_KDF, 1, NULL, 0);
		tw_simaka_put_fixed(&b, TW_AT_RESULT_IND, 0, NULL, 0);
		tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, NULL, 0);
		tw_simaka_begin_encr(&b, iv);
		tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, (const uint8_t *)"7abc", 4);
		tw_simaka_end_encr(&b, k_encr);
		tw_simaka_put_mac(&b);
		all &= tw_simaka_finish_mac(&b, &mac, NULL, 0, &n) == TW_ERR_OVERFLOW;
		all &= n == 0 && small[max] == 0xee;
		all &= tw_ct_is_zero(small, b.len);
	}
	CHECK(all);

	/* Misuse: unfilled AT_MAC, open AT_ENCR_DATA, two AT_MACs, a MAC
	 * context of another method, bad lengths. */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA_PRIME, 1);
	tw_simaka_put_mac(&b);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA_PRIME, 1);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_put_fixed(&b, TW_AT_COUNTER, 1, NULL, 0);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA_PRIME, 1);
	tw_simaka_put_mac(&b);
	tw_simaka_put_mac(&b);
	CHECK_ERR(tw_simaka_finish_mac(&b, &mac, NULL, 0, &n), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_mac(&b);
	CHECK_ERR(tw_simaka_finish_mac(&b, &mac, NULL, 0, &n), TW_ERR_STATE);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_begin_encr(&b, iv);
	tw_simaka_end_encr(&b, k_encr);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_INVAL);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_fixed(&b, TW_AT_RAND, 0, rand_, 15);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_LENGTH);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_res(&b, rand_, 129);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_LENGTH);
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_SUCCESS, 1, TW_EAP_TYPE_AKA, 1);
	CHECK_ERR(tw_simaka_finish(&b, &n), TW_ERR_INVAL);
	tw_simaka_mac_wipe(&mac);

	/* AT_RES of a non-multiple-of-8 bit length round-trips. */
	tw_simaka_build_init(&b, buf, sizeof(buf), TW_EAP_RESPONSE, 1, TW_EAP_TYPE_AKA, 1);
	tw_simaka_put_res(&b, rand_, 33);
	CHECK_OK(tw_simaka_finish(&b, &n));
	CHECK_OK(tw_simaka_decode(&m, buf, n));
	CHECK(m.res_bits == 33 && m.res.len == 5 && n == 8 + 12);
}

void test_main(void)
{
	CHECK(tv_run_file("eap_sim_packets.vec", packet_case) == 4);
	CHECK(tv_run_file("eap_aka_packets.vec", packet_case) == 14);
	test_bad_input();
	test_mac_rejects();
	test_mac_openssl();
	test_encr_openssl();
	test_checkcode();
	test_builder();
}
