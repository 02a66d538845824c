/*
 * Tests of the RADIUS codec (RFC 2865, RFC 2869 §5.14, RFC 3579 §3.1/§3.2,
 * RFC 2548 §2.4.2/§2.4.3, RFC 5997 §3).
 *
 * - The RFC 2865 §7 example packets (tests/vectors/radius.vec): decode,
 *   the §7.1 Access-Accept's Response Authenticator verifies and is
 *   rebuilt octet for octet by the builder with secret "xyzzy5461"; an
 *   EAP Access-Accept with MA and MPPE keys written with Python
 *   hashlib/hmac verifies, its keys decrypt, and it is rebuilt.
 * - Message-Authenticator and Response Authenticator of random packets,
 *   recomputed here with OpenSSL (HMAC(EVP_md5()), EVP md5) from the
 *   formulas of RFC 3579 §3.2 and RFC 2865 §3.
 * - MS-MPPE-Recv/Send-Key encryption redone here with OpenSSL MD5 step by
 *   step per RFC 2548 §2.4.2, and round trips through the decrypter.
 * - Every malformed-packet rule of tw_radius_decode, each on its own, and
 *   the builder's sticky errors.
 * - EAP split/join for every size 0..1500 and the largest that fits.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/radius.h"

/* ---- independent primitives (OpenSSL) ----------------------------------- */

/* MD5(a | b | c) with OpenSSL's EVP. */
static void ossl_md5(uint8_t out[16], const uint8_t *a, size_t al,
		     const uint8_t *b, size_t bl, const uint8_t *c, size_t cl)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;

	if (!CHECK(ctx != NULL))
		return;
	CHECK(EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 &&
	      EVP_DigestUpdate(ctx, a, al) == 1 && EVP_DigestUpdate(ctx, b, bl) == 1 &&
	      EVP_DigestUpdate(ctx, c, cl) == 1 &&
	      EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == 16);
	EVP_MD_CTX_free(ctx);
}

static void ossl_hmac_md5(uint8_t out[16], const uint8_t *key, size_t kl,
			  const uint8_t *msg, size_t ml)
{
	unsigned int n = 0;
	static const uint8_t none[1];

	CHECK(HMAC(EVP_md5(), kl ? key : none, (int)kl, msg, ml, out, &n) != NULL &&
	      n == 16);
}


static bool attr_is(const struct tw_radius_pkt *p, uint8_t type,
		    const uint8_t *v, size_t len)
{
	const struct tw_radius_attr *a = tw_radius_find(p, type);

	return a != NULL && a->len == len && memcmp(tw_radius_value(p, a), v, len) == 0;
}

/* ---- RFC 2865 §7 examples ------------------------------------------------ */

static void rfc_case(const struct tv_case *c)
{
	uint8_t pkt[256], secret[64], req_auth[16], v[128], out[256], bad[256];
	size_t pl = tv_hex(c, "pkt", pkt, sizeof(pkt)), sl = 0, n, ol = 0;
	struct tw_radius_pkt p;
	struct tw_radius_builder b;

	if (!CHECK_OK(tw_radius_decode(&p, pkt, pl)))
		return;
	CHECK(p.code == tv_int(c, "code", -1));
	CHECK(p.id == tv_int(c, "id", -1));
	CHECK(p.n_attrs == (unsigned)tv_int(c, "n_attrs", -1));
	CHECK(p.len == pl && p.authenticator == pkt + 4);
	if (tv_has(c, "eap")) {
		if (CHECK_OK(tw_radius_eap_join(&p, v, sizeof(v), &n)))
			TV_EXPECT(c, "eap", v, n);
	} else {
		CHECK(p.n_eap == 0);
	}
	/* The views tile the packet exactly. */
	size_t sum = TW_RADIUS_HDR_LEN;
	for (unsigned i = 0; i < p.n_attrs; i++) {
		CHECK(p.attrs[i].off == sum + 2 && pkt[sum] == p.attrs[i].type);
		sum += 2u + p.attrs[i].len;
	}
	CHECK(sum == pl);
	if (tv_has(c, "user_name")) {
		n = tv_bytes(c, "user_name", v, sizeof(v));
		CHECK(attr_is(&p, TW_RADIUS_USER_NAME, v, n));
	}
	if (tv_has(c, "reply_message")) {
		n = tv_bytes(c, "reply_message", v, sizeof(v));
		CHECK(attr_is(&p, TW_RADIUS_REPLY_MESSAGE, v, n));
	}
	if (tv_has(c, "state")) {
		n = tv_bytes(c, "state", v, sizeof(v));
		CHECK(attr_is(&p, TW_RADIUS_STATE, v, n));
	}
	if (tv_has(c, "secret"))
		sl = tv_bytes(c, "secret", secret, sizeof(secret));
	if (tv_has(c, "password")) {
		/* RFC 2865 §5.2: c(1) = p(1) ^ MD5(S + RA): checks the
		 * transcription of the vector, independently of the codec. */
		const struct tw_radius_attr *a = tw_radius_find(&p, 2);
		uint8_t bk[16], pw[16] = { 0 };

		n = tv_bytes(c, "password", v, sizeof(v));
		if (CHECK(a != NULL && a->len == 16 && n <= 16)) {
			memcpy(pw, v, n);
			ossl_md5(bk, secret, sl, pkt + 4, 16, NULL, 0);
			for (int i = 0; i < 16; i++)
				bk[i] ^= tw_radius_value(&p, a)[i];
			CHECK_MEM(bk, pw, 16);
		}
	}
	if (p.code == TW_RADIUS_ACCESS_REQUEST) {
		/* No EAP, no Message-Authenticator: nothing to refuse. */
		CHECK_OK(tw_radius_verify_request(&p, secret, sl));
		CHECK_ERR(tw_radius_eap_join(&p, v, sizeof(v), &n), TW_ERR_NOTFOUND);
	}
	if (!tv_has(c, "req_auth"))
		return;
	tv_hex(c, "req_auth", req_auth, 16);
	/* RFC 2865 §3: the Response Authenticator recomputes. */
	CHECK_OK(tw_radius_verify_response(&p, req_auth, secret, sl, false));
	/* ... and with require_msg_auth only when it has one ... */
	CHECK_ERR(tw_radius_verify_response(&p, req_auth, secret, sl, true),
		  p.msg_auth >= 0 ? TW_OK : TW_ERR_AUTH);
	if (tv_has(c, "msk")) {
		uint8_t msk[64];

		if (CHECK_OK(tw_radius_get_mppe_keys(&p, secret, sl, req_auth, msk)))
			TV_EXPECT(c, "msk", msk, 64);
	}
	/* ... nor with another secret, request, or a flipped bit anywhere. */
	CHECK_ERR(tw_radius_verify_response(&p, req_auth, secret, sl - 1, false),
		  TW_ERR_AUTH);
	req_auth[15] ^= 1;
	CHECK_ERR(tw_radius_verify_response(&p, req_auth, secret, sl, false), TW_ERR_AUTH);
	req_auth[15] ^= 1;
	for (size_t bit = 0; bit < 8 * pl; bit += 7) {
		struct tw_radius_pkt q;

		memcpy(bad, pkt, pl);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (tw_radius_decode(&q, bad, pl) == TW_OK)
			CHECK_ERR(tw_radius_verify_response(&q, req_auth, secret, sl, false),
				  TW_ERR_AUTH);
	}
	/* The builder reproduces the packet octet for octet (the MA, when
	 * first, recomputed in place). */
	if (!CHECK(p.msg_auth <= 0))
		return;
	tw_radius_build_init(&b, out, sizeof(out), p.code, p.id, req_auth, p.msg_auth == 0);
	for (unsigned i = p.msg_auth == 0 ? 1 : 0; i < p.n_attrs; i++)
		tw_radius_add(&b, p.attrs[i].type, tw_radius_value(&p, &p.attrs[i]),
			      p.attrs[i].len);
	CHECK_OK(tw_radius_finish_response(&b, secret, sl, &ol));
	CHECK(ol == pl);
	CHECK_MEM(out, pkt, pl);
}

/* ---- authenticators on random packets, against OpenSSL ------------------ */

static size_t rnd(size_t n)
{
	return n ? tw_test_random_u32() % n : 0;
}

static uint8_t rnd_type(void)
{
	for (;;) {
		uint8_t t = (uint8_t)(1 + rnd(255));

		if (t != TW_RADIUS_EAP_MESSAGE && t != TW_RADIUS_MESSAGE_AUTHENTICATOR)
			return t;
	}
}

/* A random EAP packet of length n >= 4 (RFC 3748 §4 header). */
static void rnd_eap(uint8_t *eap, size_t n)
{
	tw_test_random(eap, n);
	eap[0] = (uint8_t)(1 + rnd(4));
	tw_store_be16(eap + 2, (uint16_t)n);
}

/* Random attributes, some EAP, into a builder; returns the EAP length. */
static size_t rnd_attrs(struct tw_radius_builder *b, uint8_t *eap, bool with_eap)
{
	uint8_t v[64];
	size_t en = 0;
	unsigned na = (unsigned)rnd(8), at = (unsigned)rnd(na + 1);

	for (unsigned i = 0; i < na; i++) {
		size_t n = rnd(sizeof(v));

		if (i == at && with_eap) {
			en = 4 + rnd(700);
			rnd_eap(eap, en);
			tw_radius_add_eap(b, eap, en);
		}
		tw_test_random(v, n);
		tw_radius_add(b, rnd_type(), v, n);
	}
	if (with_eap && en == 0) {
		en = 4 + rnd(300);
		rnd_eap(eap, en);
		tw_radius_add_eap(b, eap, en);
	}
	return en;
}

static void test_random_responses(void)
{
	static const uint8_t codes[] = { TW_RADIUS_ACCESS_ACCEPT, TW_RADIUS_ACCESS_REJECT,
					 TW_RADIUS_ACCESS_CHALLENGE };
	uint8_t out[4096], copy[4096], secret[100], req_auth[16], eap[1024], mac[16],
		ra[16], joined[1024];

	for (int iter = 0; iter < 300; iter++) {
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t sl = 1 + rnd(sizeof(secret)), ol = 0, jl = 0;
		bool with_ma = iter % 4 != 0;
		uint8_t code = codes[rnd(3)], id = (uint8_t)rnd(256);

		tw_test_random(secret, sl);
		tw_test_random(req_auth, 16);
		tw_radius_build_init(&b, out, sizeof(out), code, id, req_auth, with_ma);
		size_t en = rnd_attrs(&b, eap, with_ma);
		if (!CHECK_OK(tw_radius_finish_response(&b, secret, sl, &ol)))
			continue;
		CHECK(out[0] == code && out[1] == id && tw_load_be16(out + 2) == ol);
		/* Message-Authenticator FIRST (the header's Blast-RADIUS rule). */
		if (with_ma)
			CHECK(ol >= 38 && out[20] == 80 && out[21] == 18);
		/* RFC 3579 §3.2: HMAC-MD5 over the packet with the Request
		 * Authenticator in the header and the MA value zeroed. */
		memcpy(copy, out, ol);
		memcpy(copy + 4, req_auth, 16);
		if (with_ma) {
			memset(copy + 22, 0, 16);
			ossl_hmac_md5(mac, secret, sl, copy, ol);
			CHECK_MEM(mac, out + 22, 16);
			memcpy(copy + 22, out + 22, 16);
		}
		/* RFC 2865 §3: MD5(Code|ID|Length|RequestAuth|Attributes|Secret). */
		ossl_md5(ra, copy, ol, secret, sl, NULL, 0);
		CHECK_MEM(ra, out + 4, 16);

		if (!CHECK_OK(tw_radius_decode(&p, out, ol)))
			continue;
		CHECK(p.msg_auth == (with_ma ? 0 : -1));
		CHECK_OK(tw_radius_verify_response(&p, req_auth, secret, sl, with_ma));
		if (en != 0) {
			CHECK_OK(tw_radius_eap_join(&p, joined, sizeof(joined), &jl));
			CHECK(jl == en && memcmp(joined, eap, en) == 0);
		}
		/* One flipped bit anywhere: refused by decode or verify. */
		size_t bit = rnd(8 * ol);
		memcpy(copy, out, ol);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (tw_radius_decode(&p, copy, ol) == TW_OK)
			CHECK_ERR(tw_radius_verify_response(&p, req_auth, secret, sl, false),
				  TW_ERR_AUTH);
		/* A flipped Message-Authenticator bit with a Response
		 * Authenticator made valid again: the MA alone must refuse. */
		if (with_ma) {
			memcpy(copy, out, ol);
			copy[22 + rnd(16)] ^= (uint8_t)(1u << rnd(8));
			memcpy(copy + 4, req_auth, 16);
			ossl_md5(ra, copy, ol, secret, sl, NULL, 0);
			memcpy(copy + 4, ra, 16);
			if (CHECK_OK(tw_radius_decode(&p, copy, ol)))
				CHECK_ERR(tw_radius_verify_response(&p, req_auth, secret, sl,
								    false), TW_ERR_AUTH);
		}
	}
}

static void test_random_requests(void)
{
	uint8_t out[4096], copy[4096], secret[100], req_auth[16], eap[1024], mac[16];

	for (int iter = 0; iter < 300; iter++) {
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t sl = 1 + rnd(sizeof(secret)), ol = 0;
		uint8_t code = iter % 5 == 0 ? TW_RADIUS_STATUS_SERVER : TW_RADIUS_ACCESS_REQUEST;

		tw_test_random(secret, sl);
		tw_test_random(req_auth, 16);
		tw_radius_build_init(&b, out, sizeof(out), code, (uint8_t)iter, req_auth, true);
		rnd_attrs(&b, eap, code == TW_RADIUS_ACCESS_REQUEST);
		if (!CHECK_OK(tw_radius_finish_request(&b, secret, sl, &ol)))
			continue;
		/* The Request Authenticator is the caller's, untouched. */
		CHECK(tw_load_be16(out + 2) == ol && memcmp(out + 4, req_auth, 16) == 0);
		CHECK(out[20] == 80 && out[21] == 18);
		memcpy(copy, out, ol);
		memset(copy + 22, 0, 16);
		ossl_hmac_md5(mac, secret, sl, copy, ol);
		CHECK_MEM(mac, out + 22, 16);
		if (!CHECK_OK(tw_radius_decode(&p, out, ol)))
			continue;
		CHECK_OK(tw_radius_verify_request(&p, secret, sl));
		/* Another secret. */
		size_t k = rnd(sl);
		secret[k] ^= 0x40;
		CHECK_ERR(tw_radius_verify_request(&p, secret, sl), TW_ERR_AUTH);
		secret[k] ^= 0x40;
		/* A flipped bit anywhere in the packet: refused, unless the
		 * flip took the Message-Authenticator away (its type, or a
		 * Length that ends the packet before it) from a request
		 * without EAP-Message, which has nothing to check (RFC 3579
		 * §3.2 requires it only with EAP) */
		size_t bit = rnd(8 * ol);
		memcpy(copy, out, ol);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (tw_radius_decode(&p, copy, ol) == TW_OK)
			CHECK_ERR(tw_radius_verify_request(&p, secret, sl),
				  p.msg_auth < 0 && p.n_eap == 0 && p.code == TW_RADIUS_ACCESS_REQUEST
					  ? TW_OK
					  : TW_ERR_AUTH);
	}
}

/* A flipped bit in a request, with the right secret. */
static void test_request_bitflips(void)
{
	uint8_t out[600], copy[600], eap[300], req_auth[16];
	static const uint8_t secret[] = "testing123";
	struct tw_radius_builder b;
	struct tw_radius_pkt p;
	size_t ol = 0;

	tw_test_random(req_auth, 16);
	rnd_eap(eap, 280);
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_REQUEST, 7, req_auth, true);
	tw_radius_add(&b, TW_RADIUS_USER_NAME, "6001010000000001@wlan", 21);
	tw_radius_add_eap(&b, eap, 280);
	tw_radius_add_u32(&b, TW_RADIUS_FRAMED_MTU, 1400);
	if (!CHECK_OK(tw_radius_finish_request(&b, secret, 10, &ol)))
		return;
	unsigned refused = 0, tried = 0;
	for (size_t bit = 0; bit < 8 * ol; bit++) {
		memcpy(copy, out, ol);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		tried++;
		if (tw_radius_decode(&p, copy, ol) != TW_OK ||
		    tw_radius_verify_request(&p, secret, 10) == TW_ERR_AUTH)
			refused++;
	}
	CHECK(tried == 8 * ol && refused == tried);
}

/* ---- MS-MPPE keys (RFC 2548 §2.4.2, §2.4.3) ------------------------------ */

/* RFC 2548 §2.4.2 encryption done here, block by block, with OpenSSL MD5. */
static void ossl_mppe_encrypt(uint8_t *c, const uint8_t *p, size_t len,
			      const uint8_t *secret, size_t sl,
			      const uint8_t req_auth[16], const uint8_t salt[2])
{
	uint8_t bk[16];

	for (size_t i = 0; i < len; i += 16) {
		if (i == 0)
			ossl_md5(bk, secret, sl, req_auth, 16, salt, 2); /* b(1) = MD5(S + R + A) */
		else
			ossl_md5(bk, secret, sl, c + i - 16, 16, NULL, 0); /* b(i) = MD5(S + c(i-1)) */
		for (int j = 0; j < 16; j++)
			c[i + j] = p[i + j] ^ bk[j];
	}
}

static void ossl_mppe_decrypt(uint8_t *p, const uint8_t *c, size_t len,
			      const uint8_t *secret, size_t sl,
			      const uint8_t req_auth[16], const uint8_t salt[2])
{
	uint8_t bk[16];

	for (size_t i = 0; i < len; i += 16) {
		if (i == 0)
			ossl_md5(bk, secret, sl, req_auth, 16, salt, 2);
		else
			ossl_md5(bk, secret, sl, c + i - 16, 16, NULL, 0);
		for (int j = 0; j < 16; j++)
			p[i + j] = c[i + j] ^ bk[j];
	}
}

static void test_mppe(void)
{
	static const uint16_t seeds[] = { 0x0000, 0x7fff, 0x8000, 0xfffe, 0xffff };
	uint8_t out[512], secret[80], req_auth[16], msk[64], got[64], key[32], plain[48],
		val[64];
	static const uint8_t success[4] = { 3, 9, 0, 4 };

	for (int iter = 0; iter < 40; iter++) {
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t sl = 1 + rnd(sizeof(secret)), ol = 0;
		uint16_t seed = iter < 5 ? seeds[iter] : (uint16_t)tw_test_random_u32();

		tw_test_random(secret, sl);
		tw_test_random(req_auth, 16);
		tw_test_random(msk, 64);
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_ACCEPT, 9,
				     req_auth, true);
		tw_radius_add_eap(&b, success, 4);
		tw_radius_add_mppe_keys(&b, secret, sl, req_auth, msk, seed);
		if (!CHECK_OK(tw_radius_finish_response(&b, secret, sl, &ol)))
			continue;

		/* Walk the packet here, without the decoder. */
		int seen = 0;
		uint16_t salts[2] = { 0, 0 };
		for (size_t off = 20; off + 2 <= ol && out[off + 1] >= 2; off += out[off + 1]) {
			const uint8_t *a = out + off;

			if (a[0] != TW_RADIUS_VENDOR_SPECIFIC)
				continue;
			/* Type 26, Length 58, Vendor-Id 311, Vendor-Type,
			 * Vendor-Length 52, Salt (2), String (48). */
			CHECK(a[1] == 58 && tw_load_be32(a + 2) == 311 && a[7] == 52);
			uint8_t vt = a[6];
			const uint8_t *exp_key = vt == 17 ? msk : msk + 32;
			uint16_t salt = tw_load_be16(a + 8);

			CHECK(vt == 16 || vt == 17);
			CHECK((salt & 0x8000) != 0);
			/* The documented salts: Recv = seed | 0x8000,
			 * Send = (seed + 1) | 0x8000. */
			CHECK(salt == (uint16_t)((vt == 17 ? seed : (uint16_t)(seed + 1)) | 0x8000));
			salts[seen & 1] = salt;
			ossl_mppe_decrypt(plain, a + 10, 48, secret, sl, req_auth, a + 8);
			CHECK(plain[0] == 32);
			CHECK_MEM(plain + 1, exp_key, 32);
			CHECK(tw_ct_is_zero(plain + 33, 15));
			/* And the other way round: the same ciphertext. */
			uint8_t enc[48];
			plain[0] = 32;
			memcpy(plain + 1, exp_key, 32);
			memset(plain + 33, 0, 15);
			ossl_mppe_encrypt(enc, plain, 48, secret, sl, req_auth, a + 8);
			CHECK_MEM(enc, a + 10, 48);
			/* The codec's own decrypter on the value after
			 * Vendor-Id, Vendor-Type and Vendor-Length. */
			if (CHECK_OK(tw_radius_mppe_decrypt(a + 8, 50, secret, sl, req_auth, key)))
				CHECK_MEM(key, exp_key, 32);
			seen++;
		}
		CHECK(seen == 2 && salts[0] != salts[1]);

		if (!CHECK_OK(tw_radius_decode(&p, out, ol)))
			continue;
		CHECK_OK(tw_radius_verify_response(&p, req_auth, secret, sl, true));
		if (CHECK_OK(tw_radius_get_mppe_keys(&p, secret, sl, req_auth, got)))
			CHECK_MEM(got, msk, 64);
		/* Another request authenticator: wrong keys or a refusal. */
		req_auth[3] ^= 0x20;
		int e = tw_radius_get_mppe_keys(&p, secret, sl, req_auth, got);
		CHECK(e == TW_ERR_DECODE || (e == TW_OK && memcmp(got, msk, 64) != 0));
		req_auth[3] ^= 0x20;
	}

	/* Decrypter refusals: lengths, salt bit, Key-Length octet. */
	uint8_t s[8] = "s3cr3t!", ra[16];
	tw_test_random(ra, 16);
	tw_test_random(msk, 32);
	val[0] = 0x81;
	val[1] = 0x23;
	plain[0] = 32;
	memcpy(plain + 1, msk, 32);
	memset(plain + 33, 0, 15);
	ossl_mppe_encrypt(val + 2, plain, 48, s, 7, ra, val);
	if (CHECK_OK(tw_radius_mppe_decrypt(val, 50, s, 7, ra, key)))
		CHECK_MEM(key, msk, 32);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 49, s, 7, ra, key), TW_ERR_DECODE);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 17, s, 7, ra, key), TW_ERR_DECODE);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 2, s, 7, ra, key), TW_ERR_DECODE);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 0, s, 7, ra, key), TW_ERR_DECODE);
	/* 16 octets hold no 32-octet key. */
	CHECK_ERR(tw_radius_mppe_decrypt(val, 18, s, 7, ra, key), TW_ERR_DECODE);
	val[0] = 0x01; /* salt without its top bit */
	ossl_mppe_encrypt(val + 2, plain, 48, s, 7, ra, val);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 50, s, 7, ra, key), TW_ERR_DECODE);
	val[0] = 0x81;
	plain[0] = 31; /* Key-Length not 32 */
	ossl_mppe_encrypt(val + 2, plain, 48, s, 7, ra, val);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 50, s, 7, ra, key), TW_ERR_DECODE);
	plain[0] = 32; /* a 32-octet key announced in a 16-octet String */
	ossl_mppe_encrypt(val + 2, plain, 16, s, 7, ra, val);
	CHECK_ERR(tw_radius_mppe_decrypt(val, 18, s, 7, ra, key), TW_ERR_DECODE);

	/* An Accept with one key only, or one key twice. */
	{
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		uint8_t vsa[56];
		size_t ol = 0;

		tw_test_random(msk, 64);
		tw_store_be32(vsa, 311);
		vsa[4] = 17;
		vsa[5] = 52;
		vsa[6] = 0x80;
		vsa[7] = 0x01;
		plain[0] = 32;
		memcpy(plain + 1, msk, 32);
		memset(plain + 33, 0, 15);
		ossl_mppe_encrypt(vsa + 8, plain, 48, s, 7, ra, vsa + 6);
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_ACCEPT, 1, ra, true);
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
		if (CHECK_OK(tw_radius_finish_response(&b, s, 7, &ol)) &&
		    CHECK_OK(tw_radius_decode(&p, out, ol)))
			CHECK_ERR(tw_radius_get_mppe_keys(&p, s, 7, ra, got), TW_ERR_NOTFOUND);
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_ACCEPT, 1, ra, true);
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
		vsa[4] = 16;
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
		if (CHECK_OK(tw_radius_finish_response(&b, s, 7, &ol)) &&
		    CHECK_OK(tw_radius_decode(&p, out, ol)))
			CHECK_ERR(tw_radius_get_mppe_keys(&p, s, 7, ra, got), TW_ERR_DECODE);
		/* Both keys from hand-made VSAs (salt 0x8001 for both is
		 * accepted on receipt): the Recv/Send placement. */
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_ACCEPT, 1, ra, true);
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa)); /* Send */
		vsa[4] = 17;
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa)); /* Recv */
		if (CHECK_OK(tw_radius_finish_response(&b, s, 7, &ol)) &&
		    CHECK_OK(tw_radius_decode(&p, out, ol)) &&
		    CHECK_OK(tw_radius_get_mppe_keys(&p, s, 7, ra, got))) {
			CHECK_MEM(got, msk, 32);
			CHECK_MEM(got + 32, msk, 32);
		}
		/* A truncated Microsoft sub-attribute. */
		vsa[5] = 60;
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_ACCEPT, 1, ra, true);
		tw_radius_add(&b, TW_RADIUS_VENDOR_SPECIFIC, vsa, sizeof(vsa));
		if (CHECK_OK(tw_radius_finish_response(&b, s, 7, &ol)) &&
		    CHECK_OK(tw_radius_decode(&p, out, ol)))
			CHECK_ERR(tw_radius_get_mppe_keys(&p, s, 7, ra, got), TW_ERR_DECODE);
	}
}

/* ---- strict decoding ----------------------------------------------------- */

/* A header with Length = len over a zeroed authenticator. */
/* ---- prepared secrets (struct tw_radius_secret, the _ctx variants) ------ */

/* Secret lengths around the MD5 block (64: HMAC keys longer than that are
 * hashed first, RFC 2104 §2; a 64-octet secret fills the MPPE prefix
 * block exactly) and the bounds of a prepared secret. */
static size_t ctx_secret_len(int iter)
{
	static const size_t fixed[] = { 0, 1, 10, 55, 56, 63, 64, 65, 100, 127, 128 };

	if (iter < (int)(sizeof(fixed) / sizeof(fixed[0])))
		return fixed[iter];
	return rnd(TW_RADIUS_SECRET_MAX + 1);
}

/* A copy of a packet under construction, writing into buf (4096). */
static void fork_builder(struct tw_radius_builder *dst, uint8_t *buf,
			 const struct tw_radius_builder *src)
{
	*dst = *src;
	dst->buf = buf;
	memcpy(buf, src->buf, src->len);
}

/* Every _ctx function gives the same octets and verdicts as its plain
 * twin, and both agree with OpenSSL (HMAC(EVP_md5()) for RFC 3579 §3.2,
 * EVP MD5 for RFC 2865 §3 and RFC 2548 §2.4.2), on random packets. */
static void test_prepared_secret(void)
{
	static const uint8_t codes[] = { TW_RADIUS_ACCESS_ACCEPT, TW_RADIUS_ACCESS_REJECT,
					 TW_RADIUS_ACCESS_CHALLENGE };
	static uint8_t a[4096], c[4096], copy[4096], eap[1024];
	uint8_t secret[TW_RADIUS_SECRET_MAX + 8], req_auth[16], msk[64], got[64], mac[16],
		ra[16], plain[48], key[32];
	struct tw_radius_secret ks;

	for (int iter = 0; iter < 200; iter++) {
		struct tw_radius_builder ba, bc;
		struct tw_radius_pkt p;
		size_t sl = ctx_secret_len(iter), la = 0, lc = 0, ma_at = 0;
		uint8_t code = codes[rnd(3)], id = (uint8_t)rnd(256);
		uint16_t seed = (uint16_t)tw_test_random_u32();
		bool with_ma = iter % 5 != 0;

		tw_test_random(secret, sl);
		tw_test_random(req_auth, 16);
		tw_test_random(msk, 64);
		if (!CHECK_OK(tw_radius_secret_init(&ks, sl ? secret : NULL, sl)))
			continue;
		CHECK(ks.len == sl && memcmp(ks.secret, secret, sl) == 0);

		/* A response with random attributes, the builder forked: one
		 * copy finished the plain way, one with the prepared secret. */
		tw_radius_build_init(&ba, a, 4096, code, id, req_auth, with_ma);
		rnd_attrs(&ba, eap, with_ma);
		fork_builder(&bc, c, &ba);
		if (code == TW_RADIUS_ACCESS_ACCEPT) {
			tw_radius_add_mppe_keys(&ba, secret, sl, req_auth, msk, seed);
			tw_radius_add_mppe_keys_ctx(&bc, &ks, req_auth, msk, seed);
		}
		if (!CHECK_OK(tw_radius_finish_response(&ba, secret, sl, &la)) ||
		    !CHECK_OK(tw_radius_finish_response_ctx(&bc, &ks, &lc)))
			continue;
		CHECK(la == lc && memcmp(a, c, la) == 0);
		/* OpenSSL: MA (first attribute) and Response Authenticator */
		memcpy(copy, c, lc);
		memcpy(copy + 4, req_auth, 16);
		if (with_ma) {
			memset(copy + 22, 0, 16);
			ossl_hmac_md5(mac, secret, sl, copy, lc);
			CHECK_MEM(mac, c + 22, 16);
			memcpy(copy + 22, c + 22, 16);
		}
		ossl_md5(ra, copy, lc, secret, sl, NULL, 0);
		CHECK_MEM(ra, c + 4, 16);
		if (!CHECK_OK(tw_radius_decode(&p, c, lc)))
			continue;
		CHECK_OK(tw_radius_verify_response_ctx(&p, req_auth, &ks, with_ma));
		if (code == TW_RADIUS_ACCESS_ACCEPT) {
			/* OpenSSL decrypts the first key (RFC 2548 §2.4.2) */
			const struct tw_radius_attr *vsa = tw_radius_find(&p, TW_RADIUS_VENDOR_SPECIFIC);

			while (vsa != NULL && !(vsa->len == 56 &&
						tw_load_be32(tw_radius_value(&p, vsa)) == 311))
				vsa = vsa + 1 < p.attrs + p.n_attrs ? vsa + 1 : NULL;
			if (CHECK(vsa != NULL)) {
				const uint8_t *v = tw_radius_value(&p, vsa);

				ossl_mppe_decrypt(plain, v + 8, 48, secret, sl, req_auth, v + 6);
				CHECK(plain[0] == 32);
				CHECK_MEM(plain + 1, v[4] == 17 ? msk : msk + 32, 32);
				if (CHECK_OK(tw_radius_mppe_decrypt_ctx(v + 6, 50, &ks, req_auth, key)))
					CHECK_MEM(key, v[4] == 17 ? msk : msk + 32, 32);
			}
			if (CHECK_OK(tw_radius_get_mppe_keys_ctx(&p, &ks, req_auth, got)))
				CHECK_MEM(got, msk, 64);
		}
		/* A flipped bit: both verdicts agree (refused unless the bit
		 * fell where decode already refuses) */
		{
			size_t bit = rnd(8 * lc);
			int e1, e2;

			memcpy(copy, c, lc);
			copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (tw_radius_decode(&p, copy, lc) == TW_OK) {
				e1 = tw_radius_verify_response(&p, req_auth, secret, sl, false);
				e2 = tw_radius_verify_response_ctx(&p, req_auth, &ks, false);
				CHECK(e1 == TW_ERR_AUTH && e2 == TW_ERR_AUTH);
			}
		}

		/* A request, finished both ways; verified both ways. */
		tw_radius_build_init(&ba, a, 4096, TW_RADIUS_ACCESS_REQUEST, id, req_auth, true);
		rnd_attrs(&ba, eap, true);
		fork_builder(&bc, c, &ba);
		if (!CHECK_OK(tw_radius_finish_request(&ba, secret, sl, &la)) ||
		    !CHECK_OK(tw_radius_finish_request_ctx(&bc, &ks, &lc)))
			continue;
		CHECK(la == lc && memcmp(a, c, la) == 0);
		memcpy(copy, c, lc);
		memset(copy + 22, 0, 16);
		ossl_hmac_md5(mac, secret, sl, copy, lc);
		CHECK_MEM(mac, c + 22, 16);
		if (!CHECK_OK(tw_radius_decode(&p, c, lc)))
			continue;
		CHECK_OK(tw_radius_verify_request_ctx(&p, &ks));
		CHECK_OK(tw_radius_verify_request(&p, secret, sl));
		ma_at = 22 + rnd(16);
		c[ma_at] ^= (uint8_t)(1u << rnd(8));
		CHECK_ERR(tw_radius_verify_request_ctx(&p, &ks), TW_ERR_AUTH);
		CHECK_ERR(tw_radius_verify_request(&p, secret, sl), TW_ERR_AUTH);
		c[ma_at] = a[ma_at];
		/* the prepared key of another secret */
		if (sl > 0) {
			struct tw_radius_secret other;

			secret[rnd(sl)] ^= 0x01;
			if (CHECK_OK(tw_radius_secret_init(&other, secret, sl)))
				CHECK_ERR(tw_radius_verify_request_ctx(&p, &other), TW_ERR_AUTH);
			tw_radius_secret_wipe(&other);
		}
		tw_radius_secret_wipe(&ks);
		CHECK(tw_ct_is_zero(&ks, sizeof(ks)));
	}

	/* Bounds: longer than a prepared secret holds, NULL with a length.
	 * The plain functions still take any length (here 200 octets). */
	tw_test_random(secret, sizeof(secret));
	memset(&ks, 0xa5, sizeof(ks));
	CHECK_ERR(tw_radius_secret_init(&ks, secret, TW_RADIUS_SECRET_MAX + 1), TW_ERR_LENGTH);
	CHECK(tw_ct_is_zero(&ks, sizeof(ks)));
	CHECK_ERR(tw_radius_secret_init(&ks, NULL, 5), TW_ERR_INVAL);
	CHECK_ERR(tw_radius_secret_init(NULL, secret, 5), TW_ERR_INVAL);
	{
		static uint8_t longsecret[200];
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t l = 0;

		tw_test_random(longsecret, sizeof(longsecret));
		tw_test_random(req_auth, 16);
		tw_radius_build_init(&b, a, sizeof(a), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
		tw_radius_add_eap(&b, (const uint8_t *)"\x02\x01\x00\x05\x01", 5);
		if (CHECK_OK(tw_radius_finish_request(&b, longsecret, sizeof(longsecret), &l))) {
			memcpy(copy, a, l);
			memset(copy + 22, 0, 16);
			ossl_hmac_md5(mac, longsecret, sizeof(longsecret), copy, l);
			CHECK_MEM(mac, a + 22, 16);
			if (CHECK_OK(tw_radius_decode(&p, a, l)))
				CHECK_OK(tw_radius_verify_request(&p, longsecret, sizeof(longsecret)));
		}
	}
	/* NULL prepared secrets are argument errors, never a pass */
	{
		struct tw_radius_builder b;
		struct tw_radius_pkt p;
		size_t l = 0;

		tw_radius_build_init(&b, a, sizeof(a), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
		CHECK_ERR(tw_radius_finish_request_ctx(&b, NULL, &l), TW_ERR_INVAL);
		tw_radius_build_init(&b, a, sizeof(a), TW_RADIUS_ACCESS_ACCEPT, 1, req_auth, true);
		CHECK_ERR(tw_radius_finish_response_ctx(&b, NULL, &l), TW_ERR_INVAL);
		tw_radius_build_init(&b, a, sizeof(a), TW_RADIUS_ACCESS_ACCEPT, 1, req_auth, true);
		tw_radius_add_mppe_keys_ctx(&b, NULL, req_auth, msk, 1);
		CHECK(b.err == TW_ERR_INVAL);
		tw_radius_build_init(&b, a, sizeof(a), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
		tw_radius_add_eap(&b, (const uint8_t *)"\x02\x01\x00\x05\x01", 5);
		if (CHECK_OK(tw_radius_finish_request(&b, secret, 10, &l)) &&
		    CHECK_OK(tw_radius_decode(&p, a, l))) {
			CHECK_ERR(tw_radius_verify_request_ctx(&p, NULL), TW_ERR_INVAL);
			CHECK_ERR(tw_radius_verify_response_ctx(&p, req_auth, NULL, false),
				  TW_ERR_INVAL);
			CHECK_ERR(tw_radius_get_mppe_keys_ctx(&p, NULL, req_auth, got), TW_ERR_INVAL);
		}
	}
}

static void hdr(uint8_t *buf, uint8_t code, size_t len)
{
	memset(buf, 0, 20);
	buf[0] = code;
	buf[1] = 0x42;
	tw_store_be16(buf + 2, (uint16_t)len);
}

static int dec(const uint8_t *buf, size_t len)
{
	struct tw_radius_pkt p;

	return tw_radius_decode(&p, buf, len);
}

static void test_decode_negative(void)
{
	static uint8_t buf[8192];
	struct tw_radius_pkt p;
	uint8_t eap[64];
	size_t n;

	/* RFC 2865 §3: minimum 20, Length within the datagram, max 4096. */
	hdr(buf, 1, 20);
	CHECK_OK(dec(buf, 20));
	CHECK_ERR(dec(buf, 19), TW_ERR_DECODE);
	CHECK_ERR(dec(buf, 0), TW_ERR_DECODE);
	hdr(buf, 1, 19);
	CHECK_ERR(dec(buf, 40), TW_ERR_DECODE);
	hdr(buf, 1, 0);
	CHECK_ERR(dec(buf, 40), TW_ERR_DECODE);
	hdr(buf, 1, 26);
	buf[20] = 1;
	buf[21] = 6;
	CHECK_OK(dec(buf, 26));
	CHECK_ERR(dec(buf, 25), TW_ERR_DECODE); /* Length > datagram */
	/* Octets after Length are padding (§3): ignored. */
	memset(buf + 26, 0xee, 30);
	if (CHECK_OK(tw_radius_decode(&p, buf, 56)))
		CHECK(p.len == 26 && p.n_attrs == 1);
	/* Length 4096 is the maximum; 4097 is refused even when received. */
	hdr(buf, 1, 4096);
	for (n = 20; n + 255 <= 4096; n += 255) {
		buf[n] = 26;
		buf[n + 1] = 255;
		memset(buf + n + 2, 0x11, 253);
	}
	buf[n] = 26;
	buf[n + 1] = (uint8_t)(4096 - n);
	if (CHECK_OK(tw_radius_decode(&p, buf, 4096)))
		CHECK(p.len == 4096 && p.n_attrs == 16);
	hdr(buf, 1, 4097);
	buf[n + 1]++;
	CHECK_ERR(dec(buf, 4097), TW_ERR_DECODE);
	CHECK_ERR(dec(buf, 8192), TW_ERR_DECODE);

	/* RFC 2865 §5: attribute Length 0 and 1; overrun; lone type octet. */
	hdr(buf, 1, 24);
	buf[20] = 1;
	buf[21] = 0;
	buf[22] = 1;
	buf[23] = 2;
	CHECK_ERR(dec(buf, 24), TW_ERR_DECODE);
	buf[21] = 1;
	CHECK_ERR(dec(buf, 24), TW_ERR_DECODE);
	buf[21] = 2;
	CHECK_OK(dec(buf, 24));
	buf[21] = 5; /* runs past Length */
	CHECK_ERR(dec(buf, 24), TW_ERR_DECODE);
	buf[21] = 4; /* exactly to Length */
	CHECK_OK(dec(buf, 24));
	buf[21] = 2;
	buf[23] = 3; /* second attribute runs past Length by one */
	CHECK_ERR(dec(buf, 26), TW_ERR_DECODE);
	hdr(buf, 1, 23); /* one attribute and a lone type octet */
	buf[20] = 1;
	buf[21] = 2;
	buf[22] = 1;
	CHECK_ERR(dec(buf, 30), TW_ERR_DECODE);
	/* Type 0. */
	hdr(buf, 1, 22);
	buf[20] = 0;
	buf[21] = 2;
	CHECK_ERR(dec(buf, 22), TW_ERR_DECODE);

	/* 128 attributes are accepted, 129 are too many. */
	hdr(buf, 1, 20 + 2 * 128);
	for (int i = 0; i < 129; i++) {
		buf[20 + 2 * i] = 33;
		buf[21 + 2 * i] = 2;
	}
	if (CHECK_OK(tw_radius_decode(&p, buf, 20 + 2 * 128)))
		CHECK(p.n_attrs == 128);
	hdr(buf, 1, 20 + 2 * 129);
	CHECK_ERR(dec(buf, 20 + 2 * 129), TW_ERR_DECODE);

	/* RFC 2869 §5.14 / RFC 3579 §3.2: one Message-Authenticator of
	 * Length 18. */
	hdr(buf, 1, 20 + 18 + 18);
	memset(buf + 20, 0, 36);
	buf[20] = 80;
	buf[21] = 18;
	buf[38] = 80;
	buf[39] = 18;
	CHECK_ERR(dec(buf, 56), TW_ERR_DECODE);
	buf[38] = 24; /* the second becomes a State: fine */
	if (CHECK_OK(tw_radius_decode(&p, buf, 56)))
		CHECK(p.msg_auth == 0);
	hdr(buf, 1, 20 + 17);
	buf[20] = 80;
	buf[21] = 17;
	CHECK_ERR(dec(buf, 37), TW_ERR_DECODE);
	hdr(buf, 1, 20 + 19);
	buf[21] = 19;
	CHECK_ERR(dec(buf, 39), TW_ERR_DECODE);
	hdr(buf, 1, 20 + 2);
	buf[21] = 2;
	CHECK_ERR(dec(buf, 22), TW_ERR_DECODE);

	/* RFC 3579 §3.1: EAP-Message attributes consecutive. Two fragments
	 * of one 8-octet EAP packet with a User-Name between them: refused. */
	static const uint8_t frag1[] = { 79, 6, 2, 1, 0, 8 };
	static const uint8_t frag2[] = { 79, 6, 1, 0, 0, 0 };
	static const uint8_t other[] = { 1, 3, 'x' };
	hdr(buf, 1, 35);
	memcpy(buf + 20, frag1, 6);
	memcpy(buf + 26, other, 3);
	memcpy(buf + 29, frag2, 6);
	CHECK_ERR(dec(buf, 35), TW_ERR_DECODE);
	/* The same fragments side by side: one EAP packet of 8. */
	memcpy(buf + 26, frag2, 6);
	memcpy(buf + 32, other, 3);
	if (CHECK_OK(tw_radius_decode(&p, buf, 35))) {
		CHECK(p.n_eap == 2 && p.eap_len == 8);
		CHECK_OK(tw_radius_eap_join(&p, eap, sizeof(eap), &n));
		CHECK(n == 8 && memcmp(eap, "\x02\x01\x00\x08\x01\x00\x00\x00", 8) == 0);
		CHECK_ERR(tw_radius_eap_join(&p, eap, 7, &n), TW_ERR_OVERFLOW);
	}
	/* EAP Length disagreeing with the joined length (RFC 3579 §3.1). */
	buf[25] = 9;
	if (CHECK_OK(tw_radius_decode(&p, buf, 35)))
		CHECK_ERR(tw_radius_eap_join(&p, eap, sizeof(eap), &n), TW_ERR_DECODE);
	buf[25] = 7;
	if (CHECK_OK(tw_radius_decode(&p, buf, 35)))
		CHECK_ERR(tw_radius_eap_join(&p, eap, sizeof(eap), &n), TW_ERR_DECODE);
	/* An EAP-Message of 1..3 octets holds no EAP header. */
	for (int k = 1; k <= 3; k++) {
		hdr(buf, 1, 22 + (size_t)k);
		buf[20] = 79;
		buf[21] = (uint8_t)(2 + k);
		memset(buf + 22, 0, 3);
		if (CHECK_OK(tw_radius_decode(&p, buf, 22 + (size_t)k)))
			CHECK_ERR(tw_radius_eap_join(&p, eap, sizeof(eap), &n), TW_ERR_DECODE);
	}
	/* EAP-Start (RFC 3579 §2.1): one empty EAP-Message. */
	hdr(buf, 1, 22);
	buf[20] = 79;
	buf[21] = 2;
	n = 99;
	if (CHECK_OK(tw_radius_decode(&p, buf, 22))) {
		CHECK_OK(tw_radius_eap_join(&p, eap, sizeof(eap), &n));
		CHECK(n == 0);
	}
	/* ... but two empty ones are no EAP packet. */
	hdr(buf, 1, 24);
	buf[20] = 79;
	buf[21] = 2;
	buf[22] = 79;
	buf[23] = 2;
	if (CHECK_OK(tw_radius_decode(&p, buf, 24)))
		CHECK_ERR(tw_radius_eap_join(&p, eap, sizeof(eap), &n), TW_ERR_DECODE);
}

/* ---- request verification rules ----------------------------------------- */

static void test_verify_request_rules(void)
{
	uint8_t out[512], copy[512], ra[16];
	static const uint8_t secret[] = "sharedsecret";
	static const uint8_t eap[] = { 2, 0, 0, 9, 1, 'u', 's', 'e', 'r' };
	struct tw_radius_builder b;
	struct tw_radius_pkt p;
	size_t ol = 0;

	tw_test_random(ra, 16);
	/* EAP with a valid MA: OK; a flipped MA bit: AUTH. */
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_REQUEST, 1, ra, true);
	tw_radius_add_eap(&b, eap, sizeof(eap));
	if (!CHECK_OK(tw_radius_finish_request(&b, secret, 12, &ol)))
		return;
	CHECK_OK(tw_radius_decode(&p, out, ol));
	CHECK_OK(tw_radius_verify_request(&p, secret, 12));
	for (int bit = 0; bit < 128; bit++) {
		memcpy(copy, out, ol);
		copy[22 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (CHECK_OK(tw_radius_decode(&p, copy, ol)))
			CHECK_ERR(tw_radius_verify_request(&p, secret, 12), TW_ERR_AUTH);
	}
	/* Padding after Length does not change the MAC (RFC 2865 §3). */
	memcpy(copy, out, ol);
	memset(copy + ol, 0x5a, 20);
	if (CHECK_OK(tw_radius_decode(&p, copy, ol + 20)))
		CHECK_OK(tw_radius_verify_request(&p, secret, 12));
	/* EAP without a Message-Authenticator: AUTH (RFC 3579 §3.2). */
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_REQUEST, 1, ra, false);
	tw_radius_add_eap(&b, eap, sizeof(eap));
	if (CHECK_OK(tw_radius_finish_request(&b, secret, 12, &ol)) &&
	    CHECK_OK(tw_radius_decode(&p, out, ol)))
		CHECK_ERR(tw_radius_verify_request(&p, secret, 12), TW_ERR_AUTH);
	/* Status-Server: needs one (RFC 5997 §3), and passes with one. */
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_STATUS_SERVER, 2, ra, false);
	if (CHECK_OK(tw_radius_finish_request(&b, secret, 12, &ol)) &&
	    CHECK_OK(tw_radius_decode(&p, out, ol)))
		CHECK_ERR(tw_radius_verify_request(&p, secret, 12), TW_ERR_AUTH);
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_STATUS_SERVER, 2, ra, true);
	if (CHECK_OK(tw_radius_finish_request(&b, secret, 12, &ol)) &&
	    CHECK_OK(tw_radius_decode(&p, out, ol))) {
		CHECK_OK(tw_radius_verify_request(&p, secret, 12));
		CHECK_ERR(tw_radius_verify_request(&p, secret, 11), TW_ERR_AUTH);
	}
	/* Codes that are not requests this server verifies. */
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCOUNTING_REQUEST, 3, ra, true);
	if (CHECK_OK(tw_radius_finish_request(&b, secret, 12, &ol)) &&
	    CHECK_OK(tw_radius_decode(&p, out, ol)))
		CHECK_ERR(tw_radius_verify_request(&p, secret, 12), TW_ERR_AUTH);
	/* A response carrying EAP without MA: refused by the client even
	 * when the caller does not ask for MA (RFC 3579 §3.2). */
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_CHALLENGE, 4, ra, false);
	tw_radius_add_eap(&b, eap, sizeof(eap));
	if (CHECK_OK(tw_radius_finish_response(&b, secret, 12, &ol)) &&
	    CHECK_OK(tw_radius_decode(&p, out, ol)))
		CHECK_ERR(tw_radius_verify_response(&p, ra, secret, 12, false), TW_ERR_AUTH);
}

/* ---- builder errors ------------------------------------------------------- */

static void test_builder_errors(void)
{
	uint8_t out[5000], ra[16] = { 0 }, v[300];
	struct tw_radius_builder b;
	size_t ol = 0;

	memset(v, 0x61, sizeof(v));
	/* 253 octets fit one attribute; 254 do not (RFC 2865 §5). */
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, true);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 253);
	CHECK(b.err == TW_OK && b.len == 20 + 18 + 255 && out[39] == 255);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 254);
	CHECK(b.err == TW_ERR_LENGTH);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 1);
	CHECK(b.len == 20 + 18 + 255); /* nothing after a sticky error */
	CHECK_ERR(tw_radius_finish_request(&b, (const uint8_t *)"k", 1, &ol), TW_ERR_LENGTH);

	/* Overflow is sticky: later, smaller attributes are not added and
	 * the first error is kept. */
	tw_radius_build_init(&b, out, 60, 1, 0, ra, true);
	tw_radius_add(&b, TW_RADIUS_USER_NAME, v, 20); /* 38 + 22 = 60: fits */
	CHECK(b.err == TW_OK && b.len == 60);
	tw_radius_add(&b, TW_RADIUS_USER_NAME, v, 0);
	CHECK(b.err == TW_ERR_OVERFLOW);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 254);
	tw_radius_add_u32(&b, TW_RADIUS_SESSION_TIMEOUT, 1);
	CHECK(b.err == TW_ERR_OVERFLOW && b.len == 60);
	CHECK_ERR(tw_radius_finish_response(&b, (const uint8_t *)"k", 1, &ol), TW_ERR_OVERFLOW);
	/* A buffer too small for the header, or for the MA. */
	tw_radius_build_init(&b, out, 19, 1, 0, ra, false);
	CHECK(b.err == TW_ERR_OVERFLOW);
	tw_radius_build_init(&b, out, 37, 1, 0, ra, true);
	CHECK(b.err == TW_ERR_OVERFLOW);
	tw_radius_build_init(&b, out, 38, 1, 0, ra, true);
	CHECK(b.err == TW_OK && b.msg_auth_off == 22);
	/* max is capped at 4096 (RFC 2865 §3). */
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, false);
	CHECK(b.max == 4096);
	for (int i = 0; i < 15; i++)
		tw_radius_add(&b, TW_RADIUS_CLASS, v, 253);
	CHECK(b.err == TW_OK && b.len == 20 + 15 * 255);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 4096 - 20 - 15 * 255 - 2 + 1);
	CHECK(b.err == TW_ERR_OVERFLOW);
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, false);
	for (int i = 0; i < 15; i++)
		tw_radius_add(&b, TW_RADIUS_CLASS, v, 253);
	tw_radius_add(&b, TW_RADIUS_CLASS, v, 4096 - 20 - 15 * 255 - 2);
	if (CHECK_OK(tw_radius_finish_request(&b, NULL, 0, &ol)))
		CHECK(ol == 4096 && tw_load_be16(out + 2) == 4096);
	/* Finishing twice would sign the Response Authenticator: refused. */
	CHECK_ERR(tw_radius_finish_request(&b, NULL, 0, &ol), TW_ERR_STATE);
	/* Type 0, a second MA, a NULL value with a length. */
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, true);
	tw_radius_add(&b, 0, v, 1);
	CHECK(b.err == TW_ERR_INVAL);
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, true);
	tw_radius_add(&b, TW_RADIUS_MESSAGE_AUTHENTICATOR, v, 16);
	CHECK(b.err == TW_ERR_INVAL);
	tw_radius_build_init(&b, out, sizeof(out), 1, 0, ra, true);
	tw_radius_add(&b, TW_RADIUS_STATE, NULL, 3);
	CHECK(b.err == TW_ERR_INVAL);
	/* add_u32 is big endian (RFC 2865 §5). */
	tw_radius_build_init(&b, out, sizeof(out), 2, 0, ra, false);
	tw_radius_add_u32(&b, TW_RADIUS_SESSION_TIMEOUT, 0x01020304);
	CHECK(b.len == 26 && memcmp(out + 20, "\x1b\x06\x01\x02\x03\x04", 6) == 0);
	/* MPPE keys into a full builder: overflow, nothing half-written. */
	uint8_t msk[64] = { 0 };
	tw_radius_build_init(&b, out, 20 + 18 + 58 + 57, 2, 0, ra, true);
	tw_radius_add_mppe_keys(&b, (const uint8_t *)"k", 1, ra, msk, 5);
	CHECK(b.err == TW_ERR_OVERFLOW && b.len == 20 + 18 + 58);
}

/* ---- EAP split and join ------------------------------------------------- */

static void test_eap_split_join(void)
{
	static uint8_t out[4096], eap[4096], joined[4096];
	static const uint8_t secret[] = "eapsecret";
	uint8_t ra[16];
	struct tw_radius_builder b;
	struct tw_radius_pkt p;
	unsigned bad = 0;

	tw_test_random(ra, 16);
	for (size_t n = 0; n <= 1500; n++) {
		size_t ol = 0, jl = 0;
		bool ok = true;

		if (n >= 4)
			rnd_eap(eap, n);
		else
			tw_test_random(eap, n);
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_REQUEST,
				     (uint8_t)n, ra, true);
		tw_radius_add(&b, TW_RADIUS_USER_NAME, "u", 1);
		tw_radius_add_eap(&b, eap, n);
		tw_radius_add(&b, TW_RADIUS_NAS_IDENTIFIER, "ap", 2);
		ok &= tw_radius_finish_request(&b, secret, 9, &ol) == TW_OK;
		ok &= tw_radius_decode(&p, out, ol) == TW_OK;
		if (!ok) {
			bad++;
			continue;
		}
		/* RFC 3579 §3.1: ceil(n / 253) attributes (one for n = 0),
		 * all of 253 octets but the last, consecutive. */
		size_t want = n == 0 ? 1 : (n + 252) / 253;
		ok &= p.n_eap == want && p.eap_len == n;
		ok &= p.attrs[1].type == TW_RADIUS_USER_NAME;
		for (size_t i = 0; i < want; i++) {
			const struct tw_radius_attr *a = &p.attrs[2 + i];
			size_t exp = i + 1 < want ? 253 : n - 253 * (want - 1);

			ok &= a->type == TW_RADIUS_EAP_MESSAGE && a->len == exp;
		}
		ok &= p.attrs[2 + want].type == TW_RADIUS_NAS_IDENTIFIER;
		ok &= tw_radius_verify_request(&p, secret, 9) == TW_OK;
		int e = tw_radius_eap_join(&p, joined, sizeof(joined), &jl);
		if (n == 0 || n >= 4)
			ok &= e == TW_OK && jl == n && memcmp(joined, eap, n) == 0;
		else
			ok &= e == TW_ERR_DECODE;
		if (!ok) {
			tw_note("EAP split/join fails at %zu octets", n);
			bad++;
		}
	}
	CHECK(bad == 0);

	/* The named boundaries, once more by attribute count. */
	static const size_t sizes[] = { 253, 254, 506, 507 };
	static const unsigned counts[] = { 1, 2, 2, 3 };
	for (int i = 0; i < 4; i++) {
		size_t ol = 0;

		rnd_eap(eap, sizes[i]);
		tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_CHALLENGE, 1, ra, true);
		tw_radius_add_eap(&b, eap, sizes[i]);
		if (CHECK_OK(tw_radius_finish_response(&b, secret, 9, &ol)) &&
		    CHECK_OK(tw_radius_decode(&p, out, ol)))
			CHECK(p.n_eap == counts[i] && ol == 20 + 18 + sizes[i] + 2 * counts[i]);
	}

	/* The largest EAP packet in one 4096-octet packet with MA: 4096 - 20
	 * - 18 = 4058 octets of attributes = 15 * 255 + 233, so 15 * 253 +
	 * 231 = 4026 octets of EAP; 4027 overflow. */
	size_t ol = 0, jl = 0;
	rnd_eap(eap, 4026);
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_CHALLENGE, 1, ra, true);
	tw_radius_add_eap(&b, eap, 4026);
	if (CHECK_OK(tw_radius_finish_response(&b, secret, 9, &ol)) &&
	    CHECK(ol == 4096) && CHECK_OK(tw_radius_decode(&p, out, ol))) {
		CHECK_OK(tw_radius_verify_response(&p, ra, secret, 9, true));
		CHECK_OK(tw_radius_eap_join(&p, joined, sizeof(joined), &jl));
		CHECK(jl == 4026 && memcmp(joined, eap, 4026) == 0);
		CHECK_ERR(tw_radius_eap_join(&p, joined, 4025, &jl), TW_ERR_OVERFLOW);
	}
	rnd_eap(eap, 4027);
	tw_radius_build_init(&b, out, sizeof(out), TW_RADIUS_ACCESS_CHALLENGE, 1, ra, true);
	tw_radius_add_eap(&b, eap, 4027);
	CHECK(b.err == TW_ERR_OVERFLOW);
	CHECK_ERR(tw_radius_finish_response(&b, secret, 9, &ol), TW_ERR_OVERFLOW);
}

static bool has_bytes(const uint8_t *buf, size_t n, const uint8_t *pat, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(buf + i, pat, m) == 0)
			return true;
	return false;
}

/*
 * tw_radius_add_mppe_keys_later: the single finish gives the octets of the
 * immediate call; OpenSSL decrypts the MSK from them; a builder that fails
 * after it keeps no key in the clear; a second call is refused.
 */
static void test_mppe_later(void)
{
	static uint8_t a[4096], c[4096], eap[300];
	struct tw_radius_secret ks;
	struct tw_radius_builder ba, bc;
	uint8_t secret[20], req_auth[16], msk[64], plain[48];
	size_t la = 0, lc = 0;

	for (int it = 0; it < 50; it++) {
		uint16_t seed = (uint16_t)rnd(65536);

		tw_test_random(secret, sizeof(secret));
		tw_test_random(req_auth, sizeof(req_auth));
		tw_test_random(msk, sizeof(msk));
		if (!CHECK_OK(tw_radius_secret_init(&ks, secret, 1 + (size_t)it % 20)))
			return;
		tw_radius_build_init(&ba, a, sizeof(a), TW_RADIUS_ACCESS_ACCEPT, 7, req_auth, true);
		tw_radius_build_init(&bc, c, sizeof(c), TW_RADIUS_ACCESS_ACCEPT, 7, req_auth, true);
		tw_radius_add_mppe_keys_ctx(&ba, &ks, req_auth, msk, seed);
		tw_radius_add_mppe_keys_later(&bc, msk, seed);
		tw_radius_add(&ba, TW_RADIUS_USER_NAME, "x", 1);
		tw_radius_add(&bc, TW_RADIUS_USER_NAME, "x", 1);
		if (!CHECK_OK(tw_radius_finish_response_ctx(&ba, &ks, &la)) ||
		    !CHECK_OK(tw_radius_finish_response_ctx(&bc, &ks, &lc)))
			return;
		CHECK(la == lc && memcmp(a, c, la) == 0);
		/* the Recv key: Vendor-Specific after Message-Authenticator
		 * (20 + 18), value at 40: Vendor-Id, type, length, salt, string */
		ossl_mppe_decrypt(plain, c + 48, 48, secret, ks.len, req_auth, c + 46);
		CHECK(plain[0] == 32 && memcmp(plain + 1, msk, 32) == 0);
		tw_radius_secret_wipe(&ks);
	}
	/* a failed builder: no key left in the clear */
	CHECK_OK(tw_radius_secret_init(&ks, secret, 8));
	tw_radius_build_init(&bc, c, sizeof(c), TW_RADIUS_ACCESS_ACCEPT, 7, req_auth, true);
	tw_radius_add_mppe_keys_later(&bc, msk, 1);
	tw_radius_add_mppe_keys_later(&bc, msk, 2);
	CHECK(bc.err == TW_ERR_INVAL);
	CHECK(tw_radius_finish_response_ctx(&bc, &ks, &lc) != TW_OK);
	CHECK(!has_bytes(c, sizeof(c), msk, 32) && !has_bytes(c, sizeof(c), msk + 32, 32));
	tw_radius_build_init(&bc, c, sizeof(c), TW_RADIUS_ACCESS_ACCEPT, 7, req_auth, true);
	tw_radius_add_mppe_keys_later(&bc, msk, 1);
	tw_radius_add(&bc, 1, eap, 300); /* too long */
	CHECK(tw_radius_finish_response_ctx(&bc, &ks, &lc) != TW_OK);
	CHECK(!has_bytes(c, sizeof(c), msk, 32) && !has_bytes(c, sizeof(c), msk + 32, 32));
	tw_radius_secret_wipe(&ks);
}

/*
 * tw_radius_finish_responses_ctx: batches of 1..70 responses (past one
 * chunk of 64), each with its own prepared secret (0..128 octets), with
 * and without Message-Authenticator, some builders failed, about half
 * with MS-MPPE keys left to the finish (some of those failing after the
 * keys were put: no key may stay in the clear), and a batch of 64 with
 * keys in every reply (two groups of keys): each packet is byte for byte
 * what tw_radius_finish_response_ctx makes of its twin, and its
 * authenticators verify with OpenSSL; each rc as the single call's.
 */
static void test_finish_batch(void)
{
	enum { N = 70 };
	static const uint8_t codes[] = { TW_RADIUS_ACCESS_ACCEPT, TW_RADIUS_ACCESS_REJECT,
					 TW_RADIUS_ACCESS_CHALLENGE };
	static uint8_t a[N][4096], c[N][4096], copy[4096], eap[1024];
	static struct tw_radius_secret ks[N];
	static uint8_t secret[N][TW_RADIUS_SECRET_MAX], req_auth[N][16];
	static size_t sl[N];
	struct tw_radius_builder ba[N], bc[N];
	struct tw_radius_finish_job jobs[N];
	unsigned bad = 0, runs = 0;

	for (int round = 0; round < 30; round++) {
		size_t n = round == 0 ? 64 : 1 + rnd(N);
		static uint8_t msks[N][64];
		bool keys[N], late_fail[N];

		for (size_t i = 0; i < n; i++) {
			bool with_ma = rnd(5) != 0;

			sl[i] = ctx_secret_len((int)rnd(40));
			tw_test_random(secret[i], sl[i]);
			tw_test_random(req_auth[i], 16);
			if (!CHECK_OK(tw_radius_secret_init(&ks[i], sl[i] ? secret[i] : NULL, sl[i])))
				return;
			tw_radius_build_init(&ba[i], a[i], 4096, codes[rnd(3)], (uint8_t)rnd(256),
					     req_auth[i], with_ma);
			(void)rnd_attrs(&ba[i], eap, with_ma);
			if (rnd(10) == 0)
				tw_radius_add(&ba[i], 1, eap, 300); /* too long: a failed builder */
			fork_builder(&bc[i], c[i], &ba[i]);
			keys[i] = round == 0 || rnd(2) == 0;
			late_fail[i] = keys[i] && bc[i].err == TW_OK && rnd(8) == 0;
			if (keys[i]) {
				/* MS-MPPE keys: encrypted at once on one side, by the
				 * batch finish on the other */
				uint16_t seed = (uint16_t)rnd(65536);

				tw_test_random(msks[i], 64);
				tw_radius_add_mppe_keys_ctx(&ba[i], &ks[i], req_auth[i], msks[i], seed);
				tw_radius_add_mppe_keys_later(&bc[i], msks[i], seed);
			}
			if (late_fail[i]) {
				/* fails with the keys in the clear in its buffer */
				tw_radius_add(&ba[i], 1, eap, 300);
				tw_radius_add(&bc[i], 1, eap, 300);
			}
			jobs[i].b = &bc[i];
			jobs[i].s = &ks[i];
		}
		tw_radius_finish_responses_ctx(jobs, n);
		for (size_t i = 0; i < n; i++, runs++) {
			size_t la = 0;
			int rc = tw_radius_finish_response_ctx(&ba[i], &ks[i], &la);
			uint8_t mac[16], ra[16];

			bad += jobs[i].rc != rc;
			if (keys[i])
				bad += has_bytes(c[i], 4096, msks[i], 32) ||
				       has_bytes(c[i], 4096, msks[i] + 32, 32);
			if (rc != TW_OK) {
				bad += jobs[i].len != 0;
				continue;
			}
			bad += jobs[i].len != la || memcmp(a[i], c[i], la) != 0;
			/* and OpenSSL agrees */
			memcpy(copy, c[i], la);
			memcpy(copy + 4, req_auth[i], 16);
			if (ba[i].msg_auth_off != 0) {
				memset(copy + 22, 0, 16);
				ossl_hmac_md5(mac, secret[i], sl[i], copy, la);
				bad += memcmp(mac, c[i] + 22, 16) != 0;
				memcpy(copy + 22, c[i] + 22, 16);
			}
			ossl_md5(ra, copy, la, secret[i], sl[i], NULL, 0);
			bad += memcmp(ra, c[i] + 4, 16) != 0;
			/* finished: a second finish is refused, as for the single call */
			{
				struct tw_radius_finish_job again = { &bc[i], &ks[i], 0, 0 };

				tw_radius_finish_responses_ctx(&again, 1);
				bad += again.rc != TW_ERR_STATE || memcmp(a[i], c[i], la) != 0;
			}
		}
		for (size_t i = 0; i < n; i++)
			tw_radius_secret_wipe(&ks[i]);
	}
	tw_radius_finish_responses_ctx(NULL, 4);
	CHECK(runs > 200);
	CHECK(bad == 0);
}

/*
 * The batch calls leave neither the secret (its last partial block goes
 * through the scratch tails), nor the MSK, nor an HMAC inner hash on the
 * stack: replies with keys signed, then requests checked, under a
 * 16-octet secret, the stack scanned after each (tw_test_stack_copies).
 * The secret and the MSK live in static storage, not on the stack.
 */
static struct tw_radius_secret resid_ks;
static uint8_t resid_secret[16], resid_msk[64], resid_buf[8][4096];

static __attribute__((noinline)) void batch_secret_calls(bool requests)
{
	struct tw_radius_builder b[8];
	struct tw_radius_finish_job fj[8];
	struct tw_radius_verify_job vj[8];
	static struct tw_radius_pkt p[8];
	static const uint8_t ra[16] = { 9, 8, 7 };

	for (int i = 0; i < 8; i++) {
		tw_radius_build_init(&b[i], resid_buf[i], 4096,
				     requests ? TW_RADIUS_ACCESS_REQUEST : TW_RADIUS_ACCESS_ACCEPT,
				     (uint8_t)i, ra, true);
		tw_radius_add(&b[i], TW_RADIUS_USER_NAME, "someone", 7);
		if (!requests)
			tw_radius_add_mppe_keys_later(&b[i], resid_msk, (uint16_t)i);
		fj[i].b = &b[i];
		fj[i].s = &resid_ks;
	}
	if (!requests) {
		tw_radius_finish_responses_ctx(fj, 8);
		return;
	}
	tw_radius_finish_requests_ctx(fj, 8);
	for (int i = 0; i < 8; i++) {
		if (tw_radius_decode(&p[i], resid_buf[i], fj[i].len) != TW_OK)
			return;
		vj[i].p = &p[i];
		vj[i].s = &resid_ks;
	}
	tw_radius_verify_requests_ctx(vj, 8);
}

static void test_batch_no_residue(void)
{
	int hits;

	tw_test_random(resid_secret, sizeof(resid_secret));
	tw_test_random(resid_msk, sizeof(resid_msk));
	if (!CHECK_OK(tw_radius_secret_init(&resid_ks, resid_secret, sizeof(resid_secret))))
		return;
	batch_secret_calls(false);
	hits = tw_test_stack_copies(resid_secret, sizeof(resid_secret));
	batch_secret_calls(false);
	hits += tw_test_stack_copies(resid_msk, 16) + tw_test_stack_copies(resid_msk + 32, 16);
	batch_secret_calls(true);
	hits += tw_test_stack_copies(resid_secret, sizeof(resid_secret));
	{
		/* and the HMAC inner hash of a checked request (RFC 2104:
		 * MD5(K ^ ipad | message with the Message-Authenticator zero)),
		 * computed here with OpenSSL */
		uint8_t kpad[64], msg[4096], inner[16];
		size_t len = tw_load_be16(resid_buf[0] + 2);

		memset(kpad, 0x36, sizeof(kpad));
		for (size_t i = 0; i < sizeof(resid_secret); i++)
			kpad[i] ^= resid_secret[i];
		memcpy(msg, resid_buf[0], len);
		memset(msg + 22, 0, 16);
		ossl_md5(inner, kpad, sizeof(kpad), msg, len, NULL, 0);
		tw_wipe(kpad, sizeof(kpad));
		batch_secret_calls(true);
		hits += tw_test_stack_copies(inner, sizeof(inner));
	}
	if (!CHECK(hits == 0))
		tw_note("RADIUS batch calls: %d copies of the secret or a key left on the stack", hits);
	if (tw_cpu_has(TW_CPU_AVX2)) {
		/* and the vector registers (the lanes of tw_md5_mb, AVX2 or
		 * AVX-512, hold the keyed HMAC states and MD5 after the
		 * secret, chaining words replicated over the lanes; below
		 * AVX2 the jobs run one by one in C, which makes no such
		 * promise) */
		uint8_t regs[32][64];
		uint32_t w[12];
		int nreg, rh;

		uint8_t regs2[32][64];

		batch_secret_calls(false);
		nreg = tw_test_vec_regs(regs);
		batch_secret_calls(true);
		(void)tw_test_vec_regs(regs2);
		/* the words looked for copied after the dumps, so that no
		 * copy of them sits in a register before */
		memcpy(w, resid_ks.hmac.istate, 16);
		memcpy(w + 4, resid_ks.hmac.ostate, 16);
		memcpy(w + 8, resid_ks.md5.h, 16);
		rh = tw_test_regs_words(regs, w, 12) + tw_test_regs_words(regs2, w, 12);
		if (!CHECK(rh == 0))
			tw_note("RADIUS batch calls: %d words of keyed MD5 states left in the %d "
				"vector registers", rh, nreg);
		tw_wipe(regs, sizeof(regs));
		tw_wipe(regs2, sizeof(regs2));
		tw_wipe(w, sizeof(w));
	}
	tw_radius_secret_wipe(&resid_ks);
}

/*
 * na random attributes after the header of b (the first an EAP-Message of
 * at least 4 octets, with that length in it, when eap; values of up to
 * vmax - 1 octets), with a zeroed Message-Authenticator put before
 * attribute ma_i (SIZE_MAX: none) and its value offset in *ma_at; the
 * header Length set. Returns the length.
 */
static size_t rnd_attr_list(uint8_t *b, size_t na, size_t ma_i, bool eap, size_t vmax,
			    size_t *ma_at)
{
	uint8_t v[255];
	size_t len = 20;

	*ma_at = 0;
	for (size_t a = 0; a <= na; a++) {
		if (a == ma_i) {
			b[len] = TW_RADIUS_MESSAGE_AUTHENTICATOR;
			b[len + 1] = 18;
			memset(b + len + 2, 0, 16);
			*ma_at = len + 2;
			len += 18;
		}
		if (a == na)
			break;
		size_t vl = rnd(vmax);

		tw_test_random(v, vl);
		b[len] = a == 0 && eap ? TW_RADIUS_EAP_MESSAGE : rnd_type();
		if (b[len] == TW_RADIUS_EAP_MESSAGE && vl < 4)
			vl = 4;
		if (b[len] == TW_RADIUS_EAP_MESSAGE)
			tw_store_be16(v + 2, (uint16_t)vl);
		b[len + 1] = (uint8_t)(2 + vl);
		memcpy(b + len + 2, v, vl);
		len += 2 + vl;
	}
	tw_store_be16(b + 2, (uint16_t)len);
	return len;
}

/*
 * tw_radius_verify_requests_ctx: batches of 1..70 requests whose
 * Message-Authenticator sits anywhere (first, in the middle, last, across
 * a 64-octet block boundary), signed here with OpenSSL; some with a bit
 * flipped, some without Message-Authenticator (with and without EAP),
 * some Status-Server or another code: each rc is the single call's, and a
 * sound one is TW_OK.
 */
static void test_verify_batch(void)
{
	enum { N = 70 };
	static uint8_t pkt[N][4096], secret[N][TW_RADIUS_SECRET_MAX];
	static struct tw_radius_pkt p[N];
	static struct tw_radius_secret ks[N];
	struct tw_radius_verify_job jobs[N];
	bool sound[N];
	unsigned bad = 0, runs = 0, sound_ok = 0;

	for (int round = 0; round < 40; round++) {
		size_t n = 1 + rnd(N), m = 0;

		for (size_t i = 0; i < n; i++) {
			uint8_t *b = pkt[m], mac[16], copy[4096];
			size_t len = 20, ma_at = 0, na = 1 + rnd(12), ma_i = rnd(na + 1);
			size_t sl = ctx_secret_len((int)rnd(40));
			unsigned kind = (unsigned)rnd(10);
			bool with_ma = kind != 0, eap = kind != 1;
			uint8_t code = kind == 2 ? TW_RADIUS_STATUS_SERVER
					     : kind == 3 ? TW_RADIUS_ACCESS_ACCEPT : TW_RADIUS_ACCESS_REQUEST;

			tw_test_random(secret[m], sl);
			b[0] = code;
			b[1] = (uint8_t)rnd(256);
			tw_test_random(b + 4, 16);
			len = rnd_attr_list(b, na, with_ma ? ma_i : SIZE_MAX, eap, 100, &ma_at);
			if (with_ma) {
				memcpy(copy, b, len);
				ossl_hmac_md5(mac, secret[m], sl, copy, len);
				memcpy(b + ma_at, mac, 16);
			}
			sound[m] = rnd(4) != 0;
			if (!sound[m]) {
				size_t bit = rnd(8 * len);

				b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			}
			if (tw_radius_decode(&p[m], b, len) != TW_OK)
				continue;
			if (!CHECK_OK(tw_radius_secret_init(&ks[m], sl ? secret[m] : NULL, sl)))
				return;
			jobs[m].p = &p[m];
			jobs[m].s = &ks[m];
			jobs[m].rc = 12345;
			m++;
		}
		tw_radius_verify_requests_ctx(jobs, m);
		for (size_t i = 0; i < m; i++, runs++) {
			int rc = tw_radius_verify_request_ctx(&p[i], &ks[i]);

			bad += jobs[i].rc != rc;
			if (sound[i] && p[i].code == TW_RADIUS_ACCESS_REQUEST && p[i].msg_auth >= 0) {
				bad += rc != TW_OK;
				sound_ok++;
			}
			tw_radius_secret_wipe(&ks[i]);
		}
	}
	tw_radius_verify_requests_ctx(NULL, 3);
	CHECK(runs > 500 && sound_ok > 200);
	CHECK(bad == 0);
}

/*
 * tw_radius_verify_responses_ctx: batches of 1..70 responses, the
 * Message-Authenticator anywhere (also past 256 octets: the single call),
 * signed here with OpenSSL (MA with the Request Authenticator in the
 * header, then the Response Authenticator); some with a bit flipped, some
 * without MA (with or without EAP, required or not): each rc is the single
 * call's and a sound one is TW_OK. And tw_radius_finish_requests_ctx makes
 * the octets of tw_radius_finish_request_ctx.
 */
static void test_verify_resp_batch(void)
{
	enum { N = 70 };
	static uint8_t pkt[N][4096], secret[N][TW_RADIUS_SECRET_MAX], ra_of[N][16];
	static struct tw_radius_pkt p[N];
	static struct tw_radius_secret ks[N];
	struct tw_radius_verify_resp_job jobs[N];
	bool sound[N];
	unsigned bad = 0, runs = 0, sound_ok = 0, far = 0;

	for (int round = 0; round < 40; round++) {
		size_t n = 1 + rnd(N), m = 0;

		for (size_t i = 0; i < n; i++) {
			uint8_t *b = pkt[m], mac[16], copy[4096], ra[16];
			size_t len = 20, ma_at = 0, na = 1 + rnd(12), ma_i = rnd(na + 1);
			size_t sl = ctx_secret_len((int)rnd(40)), big = rnd(4) == 0 ? 250 : 100;
			unsigned kind = (unsigned)rnd(10);
			bool with_ma = kind != 0, eap = kind != 1;

			tw_test_random(secret[m], sl);
			tw_test_random(ra_of[m], 16);
			b[0] = TW_RADIUS_ACCESS_CHALLENGE;
			b[1] = (uint8_t)rnd(256);
			memcpy(b + 4, ra_of[m], 16);
			len = rnd_attr_list(b, na, with_ma ? ma_i : SIZE_MAX, eap, big, &ma_at);
			if (with_ma) {
				memcpy(copy, b, len);
				ossl_hmac_md5(mac, secret[m], sl, copy, len);
				memcpy(b + ma_at, mac, 16);
				far += ma_at + 16 > 256;
			}
			ossl_md5(ra, b, len, secret[m], sl, NULL, 0);
			memcpy(b + 4, ra, 16);
			sound[m] = rnd(4) != 0;
			if (!sound[m]) {
				size_t bit = rnd(8 * len);

				b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			}
			if (tw_radius_decode(&p[m], b, len) != TW_OK)
				continue;
			if (!CHECK_OK(tw_radius_secret_init(&ks[m], sl ? secret[m] : NULL, sl)))
				return;
			jobs[m].p = &p[m];
			jobs[m].req_auth = ra_of[m];
			jobs[m].s = &ks[m];
			jobs[m].require_msg_auth = rnd(2) == 0;
			jobs[m].rc = 12345;
			m++;
		}
		tw_radius_verify_responses_ctx(jobs, m);
		for (size_t i = 0; i < m; i++, runs++) {
			int rc = tw_radius_verify_response_ctx(&p[i], ra_of[i], &ks[i],
							       jobs[i].require_msg_auth);

			bad += jobs[i].rc != rc;
			if (sound[i] && p[i].msg_auth >= 0) {
				bad += rc != TW_OK;
				sound_ok++;
			}
			tw_radius_secret_wipe(&ks[i]);
		}
	}
	tw_radius_verify_responses_ctx(NULL, 2);
	CHECK(runs > 500 && sound_ok > 200 && far > 10);
	CHECK(bad == 0);

	/* requests */
	{
		static uint8_t a[N][4096], c[N][4096], eap[1024];
		struct tw_radius_builder ba[N], bc[N];
		struct tw_radius_finish_job fj[N];
		uint8_t req_auth[16];
		size_t n = N;

		bad = 0;
		for (size_t i = 0; i < n; i++) {
			size_t sl = ctx_secret_len((int)rnd(40));

			tw_test_random(secret[i], sl);
			tw_test_random(req_auth, 16);
			if (!CHECK_OK(tw_radius_secret_init(&ks[i], sl ? secret[i] : NULL, sl)))
				return;
			tw_radius_build_init(&ba[i], a[i], 4096,
					     rnd(5) ? TW_RADIUS_ACCESS_REQUEST : TW_RADIUS_STATUS_SERVER,
					     (uint8_t)i, req_auth, rnd(5) != 0);
			(void)rnd_attrs(&ba[i], eap, true);
			fork_builder(&bc[i], c[i], &ba[i]);
			fj[i].b = &bc[i];
			fj[i].s = &ks[i];
		}
		tw_radius_finish_requests_ctx(fj, n);
		for (size_t i = 0; i < n; i++) {
			size_t la = 0;
			int rc = tw_radius_finish_request_ctx(&ba[i], &ks[i], &la);

			bad += fj[i].rc != rc || (rc == TW_OK && (fj[i].len != la ||
								  memcmp(a[i], c[i], la) != 0));
			tw_radius_secret_wipe(&ks[i]);
		}
		tw_radius_finish_requests_ctx(NULL, 1);
		CHECK(bad == 0);
	}
}

void test_main(void)
{
	CHECK(tv_run_file("radius.vec", rfc_case) == 5);
	test_random_responses();
	test_random_requests();
	test_request_bitflips();
	test_mppe();
	test_prepared_secret();
	test_decode_negative();
	test_verify_request_rules();
	test_builder_errors();
	test_eap_split_join();
	test_mppe_later();
	test_finish_batch();
	test_batch_no_residue();
	test_verify_batch();
	test_verify_resp_batch();
}
