/* RADIUS/1.1 (RFC 9765; the draft-dekok-radext-radiusv11 text: the
 * Authenticator field is a 4-octet Token and 12 reserved zero octets,
 * Message-Authenticator is never sent and is ignored when received, the
 * MS-MPPE keys are plain strings of their octets):
 *  - tw_radius_finish_v11 on a reply with a Message-Authenticator, EAP,
 *    State and keys added with _later: no attribute 80, every other
 *    attribute in order and unchanged, each key a 32-octet string equal to
 *    the MSK half (RFC 5247 §3: Recv = MSK[0..31], Send = MSK[32..63]),
 *    Token and zeros in the header, Length right, nothing of the keys left
 *    past the end; a builder in error gives the error;
 *  - twagd's packet path in RADIUS/1.1 mode (w->v11): a whole EAP-AKA'
 *    attach whose requests carry no Message-Authenticator, each reply
 *    with the request's Token, no Message-Authenticator, and in the
 *    Access-Accept the phone's own MSK in the clear; a request with a
 *    garbage Message-Authenticator is handled all the same (ignored), and
 *    the same request without the mode is dropped. Expected values are
 *    the phone's own keys (the library's EAP peer) and the test's MSK. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "tw_test.h"
#include "srv_flow.h"
#include "twag/bytes.h"
#include "twag/mem.h"

static void test_finish(void)
{
	uint8_t buf[TW_RADIUS_MAX_LEN], req_auth[16], msk[64], token[4] = { 0xde, 0xad, 0x00, 0x01 };
	uint8_t eap[300];
	struct tw_radius_builder b;
	struct tw_radius_pkt p;
	size_t n, before;

	tw_test_random(req_auth, sizeof(req_auth));
	tw_test_random(msk, sizeof(msk));
	tw_test_random(eap, sizeof(eap));
	eap[0] = 3;
	eap[1] = 9;
	eap[2] = 0;
	eap[3] = 4;
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCESS_ACCEPT, 77, req_auth, true);
	tw_radius_add_eap(&b, eap, 4);
	tw_radius_add_mppe_keys_later(&b, msk, 0x1234);
	tw_radius_add(&b, TW_RADIUS_STATE, "state-xyz", 9);
	before = b.len;
	if (!CHECK_OK(tw_radius_finish_v11(&b, token, &n)))
		return;
	CHECK(n == before - 18 - 2 * (50 - 32));
	if (!CHECK_OK(tw_radius_decode(&p, buf, n)))
		return;
	CHECK(p.code == TW_RADIUS_ACCESS_ACCEPT && p.id == 77 && p.len == n);
	CHECK(memcmp(buf + 4, token, 4) == 0);
	CHECK(tw_ct_is_zero(buf + 8, 12));
	CHECK(p.msg_auth < 0);
	CHECK(p.n_attrs == 4);
	CHECK(p.attrs[0].type == TW_RADIUS_EAP_MESSAGE && p.attrs[0].len == 4 &&
	      memcmp(tw_radius_value(&p, &p.attrs[0]), eap, 4) == 0);
	for (unsigned i = 0; i < 2; i++) {
		const struct tw_radius_attr *a = &p.attrs[1 + i];
		const uint8_t *v = tw_radius_value(&p, a);

		CHECK(a->type == TW_RADIUS_VENDOR_SPECIFIC && a->len == 4 + 2 + 32);
		CHECK(v[0] == 0 && v[1] == 0 && v[2] == 0x01 && v[3] == 0x37);
		CHECK(v[4] == (i == 0 ? TW_RADIUS_MS_MPPE_RECV_KEY : TW_RADIUS_MS_MPPE_SEND_KEY));
		CHECK(v[5] == 2 + 32);
		CHECK(memcmp(v + 6, msk + 32 * i, 32) == 0);
	}
	CHECK(p.attrs[3].type == TW_RADIUS_STATE && p.attrs[3].len == 9 &&
	      memcmp(tw_radius_value(&p, &p.attrs[3]), "state-xyz", 9) == 0);
	/* the old tail is wiped: no copy of either key half past the end */
	CHECK(tw_ct_is_zero(buf + n, before - n));
	CHECK(tw_radius_finish_v11(&b, token, &n) == TW_ERR_STATE);

	/* an error on the way: the builder's error, keys wiped */
	tw_radius_build_init(&b, buf, 80, TW_RADIUS_ACCESS_ACCEPT, 1, req_auth, true);
	tw_radius_add_mppe_keys_later(&b, msk, 1);
	tw_radius_add(&b, TW_RADIUS_STATE, eap, 200);
	CHECK(tw_radius_finish_v11(&b, token, &n) != TW_OK);
	CHECK(memmem(buf, 80, msk, 8) == NULL && memmem(buf, 80, msk + 32, 8) == NULL);
}

/* An Access-Request of RADIUS/1.1: the Token in the Authenticator field,
 * no Message-Authenticator (or a garbage one). */
static void v11_request(struct nas *n, const uint8_t *eap, size_t eap_len, uint32_t token,
			bool junk_ma)
{
	nas_build(n, eap, eap_len, junk_ma);
	if (junk_ma) {
		/* the MA nas_build signed, garbled: it must not matter */
		n->req[20 + 2] ^= 0x55;
	}
	n->req[1] = 0; /* Reserved-1 */
	tw_store_be32(n->req + 4, token);
	memset(n->req + 8, 0, 12);
}

static size_t v11_xmit(struct nas *n, uint32_t token)
{
	n->reply_len = tw_srv_handle(srv_w, n->req, n->req_len, (const struct sockaddr *)&n->from,
				     n->reply, now);
	tw_log_flush(&srv_w->log);
	n->valid = false;
	n->eap_len = 0;
	if (n->reply_len == 0 || !CHECK_OK(tw_radius_decode(&n->rp, n->reply, n->reply_len)))
		return 0;
	n->valid = CHECK(tw_load_be32(n->reply + 4) == token) && CHECK(tw_ct_is_zero(n->reply + 8, 12)) &&
		   CHECK(n->rp.msg_auth < 0) && CHECK(n->rp.id == 0);
	if (n->rp.n_eap > 0 && tw_radius_eap_join(&n->rp, n->eap, sizeof(n->eap), &n->eap_len) != TW_OK)
		n->eap_len = 0;
	{
		const struct tw_radius_attr *st = tw_radius_find(&n->rp, TW_RADIUS_STATE);

		n->state_len = 0;
		if (st != NULL) {
			memcpy(n->state, tw_radius_value(&n->rp, st), st->len);
			n->state_len = st->len;
		}
	}
	return n->reply_len;
}

static void test_attach(void)
{
	struct phone ph;
	struct nas n;
	uint8_t out[2048], msk[64];
	size_t out_len;
	uint32_t token = tw_test_random_u32();
	bool accepted = false;
	int act;

	provision(&ph, TW_EAP_TYPE_AKA_PRIME, "001019900000011", false);
	nas_init(&n, "127.0.0.1", 40000, "02-00-00-00-11-11");
	CHECK_OK(peer_init(&ph));
	out_len = identity_response(&ph, out);
	srv_w->v11 = true;
	for (unsigned round = 0; round < 6 && !accepted; round++) {
		v11_request(&n, out, out_len, ++token, round == 1);
		if (!CHECK(v11_xmit(&n, token) > 0) || !n.valid)
			break;
		if (n.rp.code == TW_RADIUS_ACCESS_CHALLENGE) {
			act = peer_input(&ph, n.eap, n.eap_len, out, &out_len);
			if (!CHECK(act == TW_EAP_SEND))
				break;
			continue;
		}
		if (!CHECK(n.rp.code == TW_RADIUS_ACCESS_ACCEPT))
			break;
		accepted = true;
		act = peer_input(&ph, n.eap, n.eap_len, out, &out_len);
		CHECK(act == TW_EAP_ACCEPT && peer_msk(&ph));
		/* the keys in the clear, 32 octets each, Recv then Send */
		memset(msk, 0, sizeof(msk));
		for (unsigned i = 0; i < n.rp.n_attrs; i++) {
			const struct tw_radius_attr *a = &n.rp.attrs[i];
			const uint8_t *v = tw_radius_value(&n.rp, a);

			if (a->type != TW_RADIUS_VENDOR_SPECIFIC || a->len != 38 || v[3] != 0x37)
				continue;
			if (v[4] == TW_RADIUS_MS_MPPE_RECV_KEY)
				memcpy(msk, v + 6, 32);
			if (v[4] == TW_RADIUS_MS_MPPE_SEND_KEY)
				memcpy(msk + 32, v + 6, 32);
		}
		CHECK(memcmp(msk, ph.msk, 64) == 0);
	}
	CHECK(accepted);
	/* without the mode the same kind of request is dropped (no valid
	 * Message-Authenticator) */
	srv_w->v11 = false;
	n.state_len = 0;
	CHECK_OK(peer_init(&ph));
	out_len = identity_response(&ph, out);
	v11_request(&n, out, out_len, ++token, false);
	CHECK(tw_srv_handle(srv_w, n.req, n.req_len, (const struct sockaddr *)&n.from, n.reply, now) ==
	      0);
	tw_log_flush(&srv_w->log);
}

void test_main(void)
{
	test_finish();
	if (!CHECK(flow_setup()))
		return;
	test_attach();
	flow_teardown();
}
