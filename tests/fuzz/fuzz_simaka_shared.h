/*
 * What fuzz_simaka and fuzz_simaka_encr both check: the AT_MAC and
 * AT_ENCR_DATA references computed with OpenSSL, and the argument
 * contract of simaka.h with its batch calls against the single ones
 * (run once per process). Included by the two targets after their own
 * includes.
 */
#ifndef FUZZ_SIMAKA_SHARED_H
#define FUZZ_SIMAKA_SHARED_H

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

#endif
