/*
 * Tests of the WLCP codec (TS 24.244) and the WLCP key (TS 33.402 with the
 * TS 33.220 KDF).
 *
 * Hand-encoded messages from the spec tables (tests/vectors/wlcp.vec) with
 * their fields, decode -> encode reproducing them, random round trips of
 * every message type, every truncation, random bit flips (no crash, no
 * accept of garbage outside the rules), overflow, and the WLCP key
 * cross-checked on random EMSKs against OpenSSL HMAC() over an S string
 * built here.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/err.h"
#include "twag/wlcp.h"
#include "twag/wlcp_key.h"

static void vec_case(const struct tv_case *c)
{
	uint8_t pkt[512], enc[512], v[256];
	size_t pl = tv_hex(c, "pkt", pkt, sizeof(pkt)), el, vl;
	const char *result = tv_str(c, "result");
	struct tw_wlcp_msg m;
	int err = tw_wlcp_decode(&m, pkt, pl);

	if (result == NULL)
		return;
	if (strcmp(result, "decode") == 0) {
		CHECK_ERR(err, TW_ERR_DECODE);
		return;
	}
	if (strcmp(result, "unsupported") == 0) {
		CHECK_ERR(err, TW_ERR_UNSUPPORTED);
		return;
	}
	CHECK_OK(err);
	if (err != TW_OK)
		return;
	CHECK(m.type == pkt[0]);
	if (tv_has(c, "pti"))
		CHECK(m.pti == tv_int(c, "pti", -1));
	if (tv_has(c, "request_type"))
		CHECK(m.request_type == tv_int(c, "request_type", -1));
	if (tv_has(c, "pdn_type"))
		CHECK(m.pdn_type == tv_int(c, "pdn_type", -1));
	if (tv_has(c, "apn")) {
		vl = tv_hex(c, "apn", v, sizeof(v));
		CHECK(m.has_apn && m.apn_len == vl);
		TV_EXPECT(c, "apn", m.apn, m.apn_len);
	}
	if (tv_has(c, "pco")) {
		CHECK(m.has_pco);
		TV_EXPECT(c, "pco", m.pco, m.pco_len);
	}
	if (tv_has(c, "n3g"))
		CHECK(m.has_ue_n3g_cap && m.ue_n3g_cap == tv_int(c, "n3g", -1));
	if (tv_has(c, "pdn_addr_type"))
		CHECK(m.has_pdn_address && m.pdn_addr_type == tv_int(c, "pdn_addr_type", -1));
	if (tv_has(c, "ipv4"))
		TV_EXPECT(c, "ipv4", m.ipv4, 4);
	if (tv_has(c, "ipv6_iid"))
		TV_EXPECT(c, "ipv6_iid", m.ipv6_iid, 8);
	if (tv_has(c, "mac")) {
		CHECK(m.has_twag_mac);
		TV_EXPECT(c, "mac", m.twag_mac, 6);
	}
	if (tv_has(c, "cause"))
		CHECK(m.has_cause && m.cause == tv_int(c, "cause", -1));
	if (tv_has(c, "tw1"))
		CHECK(m.has_tw1 && m.tw1 == tv_int(c, "tw1", -1));
	if (tv_int(c, "reencode", 0) == 1) {
		CHECK_OK(tw_wlcp_encode(enc, sizeof(enc), &el, &m));
		CHECK(el == pl && memcmp(enc, pkt, pl) == 0);
		/* every smaller output buffer is an overflow */
		bool all = true;
		for (size_t n = 0; n < pl; n++)
			all &= tw_wlcp_encode(enc, n, &el, &m) == TW_ERR_OVERFLOW && el == 0;
		CHECK(all);
	}
}

static void random_msg(struct tw_wlcp_msg *m, uint8_t type, uint8_t *apn,
		       uint8_t *pco, uint8_t *nb)
{
	uint32_t r = tw_test_random_u32();

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->pti = (uint8_t)(1 + r % 254);
	m->request_type = (uint8_t)(1 + (r >> 8) % 2);
	m->pdn_type = (uint8_t)(1 + (r >> 9) % 3);
	/* an APN of random labels */
	size_t al = 0;
	size_t want = 2 + (r >> 12) % 98;
	while (al + 2 <= want) {
		size_t n = 1 + tw_test_random_u32() % 20;
		if (al + 1 + n > want)
			n = want - al - 1;
		apn[al] = (uint8_t)n;
		for (size_t i = 0; i < n; i++)
			apn[al + 1 + i] = (uint8_t)('a' + tw_test_random_u32() % 26);
		al += 1 + n;
	}
	m->apn = apn;
	m->apn_len = al;
	m->pdn_addr_type = (uint8_t)(1 + (r >> 20) % 3);
	tw_test_random(m->ipv4, 4);
	tw_test_random(m->ipv6_iid, 8);
	tw_test_random(m->twag_mac, 6);
	m->cause = (uint8_t)r;
	m->pco_len = 1 + tw_test_random_u32() % 251;
	tw_test_random(pco, m->pco_len);
	m->pco = pco;
	m->nbifom_len = 1 + tw_test_random_u32() % 255;
	tw_test_random(nb, m->nbifom_len);
	m->nbifom = nb;
	m->ue_n3g_cap = (uint8_t)(r >> 24) & 15;
	m->tw1 = (uint8_t)(r >> 3);
	m->reattempt = (uint8_t)(r >> 5);
	switch (type) {
	case TW_WLCP_PDN_CONN_REQUEST:
		m->has_apn = r & 1;
		m->has_pco = r & 2;
		m->has_nbifom = r & 4;
		m->has_ue_n3g_cap = r & 8;
		break;
	case TW_WLCP_PDN_CONN_ACCEPT:
		m->has_apn = m->has_pdn_address = m->has_twag_mac = true;
		m->has_pco = r & 2;
		m->has_nbifom = r & 4;
		break;
	case TW_WLCP_PDN_CONN_REJECT:
		m->has_cause = true;
		m->has_pco = r & 2;
		m->has_tw1 = r & 4;
		m->has_reattempt = r & 8;
		m->has_nbifom = r & 16;
		break;
	case TW_WLCP_PDN_DISC_REQUEST:
		m->has_twag_mac = true;
		m->has_cause = r & 2;
		m->has_pco = r & 4;
		break;
	case TW_WLCP_PDN_DISC_ACCEPT:
		m->has_twag_mac = true;
		m->has_pco = r & 2;
		break;
	default:
		break;
	}
}

static bool same(const struct tw_wlcp_msg *a, const struct tw_wlcp_msg *b)
{
	bool ok = a->type == b->type && a->pti == b->pti;

#define SAMEF(f) ok &= a->f == b->f
	SAMEF(has_apn); SAMEF(has_pdn_address); SAMEF(has_twag_mac); SAMEF(has_cause);
	SAMEF(has_pco); SAMEF(has_nbifom); SAMEF(has_ue_n3g_cap); SAMEF(has_tw1);
	SAMEF(has_reattempt);
	if (a->type == TW_WLCP_PDN_CONN_REQUEST) {
		SAMEF(request_type);
		SAMEF(pdn_type);
	}
	if (a->has_apn)
		ok &= a->apn_len == b->apn_len && memcmp(a->apn, b->apn, a->apn_len) == 0;
	if (a->has_pco)
		ok &= a->pco_len == b->pco_len && memcmp(a->pco, b->pco, a->pco_len) == 0;
	if (a->has_nbifom)
		ok &= a->nbifom_len == b->nbifom_len &&
		      memcmp(a->nbifom, b->nbifom, a->nbifom_len) == 0;
	if (a->has_pdn_address) {
		SAMEF(pdn_addr_type);
		if (a->pdn_addr_type != TW_WLCP_PDN_IPV6)
			ok &= memcmp(a->ipv4, b->ipv4, 4) == 0;
		if (a->pdn_addr_type != TW_WLCP_PDN_IPV4)
			ok &= memcmp(a->ipv6_iid, b->ipv6_iid, 8) == 0;
	}
	if (a->has_twag_mac)
		ok &= memcmp(a->twag_mac, b->twag_mac, 6) == 0;
	if (a->has_cause)
		SAMEF(cause);
	if (a->has_ue_n3g_cap)
		SAMEF(ue_n3g_cap);
	if (a->has_tw1)
		SAMEF(tw1);
	if (a->has_reattempt)
		SAMEF(reattempt);
#undef SAMEF
	return ok;
}

static void test_roundtrip(void)
{
	static const uint8_t types[] = { 0x81, 0x82, 0x83, 0x84, 0x85, 0x86 };
	bool ok = true, prefixes = true, flips = true;

	for (int i = 0; i < 3000; i++) {
		uint8_t apn[100], pco[251], nb[255], buf[1024], cut[1024];
		struct tw_wlcp_msg m, d;
		size_t len;

		random_msg(&m, types[i % 6], apn, pco, nb);
		if (tw_wlcp_encode(buf, sizeof(buf), &len, &m) != TW_OK ||
		    tw_wlcp_decode(&d, buf, len) != TW_OK) {
			ok = false;
			continue;
		}
		ok &= same(&m, &d);
		/* A strict prefix either fails, or (cut at an optional IE
		 * boundary) decodes with fewer IEs -- never with more. */
		for (size_t n = 0; n < len; n++) {
			memcpy(cut, buf, n);
			int e = tw_wlcp_decode(&d, cut, n);
			if (e == TW_OK)
				prefixes &= d.type == m.type &&
					    (!d.has_pco || m.has_pco) && (!d.has_nbifom || m.has_nbifom);
			else
				prefixes &= e == TW_ERR_DECODE;
		}
		/* random bit flips: any outcome but a crash, and a decoded
		 * message re-encodes and decodes to itself */
		memcpy(cut, buf, len);
		cut[tw_test_random_u32() % len] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
		if (tw_wlcp_decode(&d, cut, len) == TW_OK) {
			struct tw_wlcp_msg d2;
			uint8_t re[1024];
			size_t rl;
			if (tw_wlcp_encode(re, sizeof(re), &rl, &d) == TW_OK)
				flips &= tw_wlcp_decode(&d2, re, rl) == TW_OK && same(&d, &d2);
		}
	}
	CHECK(ok);
	CHECK(prefixes);
	CHECK(flips);
}

static void test_encoder_rules(void)
{
	uint8_t apn[100], pco[251], nb[255], buf[600];
	struct tw_wlcp_msg m;
	size_t len;

	random_msg(&m, TW_WLCP_PDN_CONN_ACCEPT, apn, pco, nb);
	m.has_twag_mac = false; /* mandatory IE missing */
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_INVAL);
	random_msg(&m, TW_WLCP_PDN_CONN_REQUEST, apn, pco, nb);
	m.has_tw1 = true; /* not an IE of this message */
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_INVAL);
	random_msg(&m, TW_WLCP_PDN_CONN_REQUEST, apn, pco, nb);
	m.request_type = 5;
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_INVAL);
	random_msg(&m, TW_WLCP_PDN_CONN_REQUEST, apn, pco, nb);
	m.pti = 0;
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_INVAL);
	random_msg(&m, TW_WLCP_PDN_CONN_REQUEST, apn, pco, nb);
	m.has_pco = true;
	m.pco_len = 252;
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_LENGTH);
	random_msg(&m, TW_WLCP_PDN_CONN_REQUEST, apn, pco, nb);
	m.has_apn = true;
	apn[0] = 70; /* label overruns the APN */
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_INVAL);
	m.type = 0x99;
	CHECK_ERR(tw_wlcp_encode(buf, sizeof(buf), &len, &m), TW_ERR_UNSUPPORTED);

	uint8_t a[100];
	CHECK_OK(tw_wlcp_apn_encode(a, sizeof(a), &len, "internet.mnc001.mcc001.gprs", 27));
	CHECK(len == 28 && a[0] == 8 && memcmp(a + 1, "internet", 8) == 0 && a[9] == 6);
	CHECK_ERR(tw_wlcp_apn_encode(a, sizeof(a), &len, "a..b", 4), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlcp_apn_encode(a, sizeof(a), &len, "", 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlcp_apn_encode(a, 3, &len, "abcd", 4), TW_ERR_OVERFLOW);
}

/* WLCP key: TS 33.220 B.2.0 S = FC | P0 | L0 | ... built here, under
 * OpenSSL HMAC-SHA-256 keyed with the EMSK. */
static void test_wlcp_key(void)
{
	bool ok = true;

	for (int i = 0; i < 500; i++) {
		uint8_t emsk[64], p0[40], p1[8], key[32], ref[32], s[64];
		size_t l0 = tw_test_random_u32() % sizeof(p0), n = 0;
		uint8_t fc = (uint8_t)tw_test_random_u32();
		unsigned ol;

		tw_test_random(emsk, sizeof(emsk));
		tw_test_random(p0, sizeof(p0));
		tw_test_random(p1, sizeof(p1));
		const struct tw_kdf_param prm[2] = { { p0, l0 }, { p1, 8 } };
		ok &= tw_wlcp_key(key, emsk, 64, fc, prm, 2) == TW_OK;
		s[n++] = fc;
		memcpy(s + n, p0, l0);
		n += l0;
		s[n++] = (uint8_t)(l0 >> 8);
		s[n++] = (uint8_t)l0;
		memcpy(s + n, p1, 8);
		n += 8;
		s[n++] = 0;
		s[n++] = 8;
		HMAC(EVP_sha256(), emsk, 64, s, n, ref, &ol);
		ok &= memcmp(key, ref, 32) == 0;
	}
	CHECK(ok);
	uint8_t emsk[64] = { 0 }, key[32];
	CHECK_ERR(tw_wlcp_key(key, emsk, 0, 1, NULL, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlcp_key(key, emsk, 65, 1, NULL, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_wlcp_key(key, NULL, 64, 1, NULL, 0), TW_ERR_INVAL);
}

void test_main(void)
{
	int n = tv_run_file("wlcp.vec", vec_case);

	CHECK(n >= 19);
	test_roundtrip();
	test_encoder_rules();
	test_wlcp_key();
}
