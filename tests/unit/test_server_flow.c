/* twagd's packet path in-process (tw_srv_handle, no sockets) over a real
 * SQLite store in a temporary directory, with the library's EAP peers as
 * phones and its RADIUS client side as the NAS:
 *  - EAP-AKA', EAP-AKA and EAP-SIM (COMP128v1) full authentication: the
 *    MS-MPPE keys of the Access-Accept decrypt to the MSK the phone
 *    derived; User-Name, Session-Timeout and Class present;
 *    Message-Authenticator first in every reply and valid;
 *  - fast re-authentication, AUTS resynchronisation;
 *  - a retransmission answered byte for byte from the cache with no
 *    second vector; missing/invalid Message-Authenticator dropped without
 *    state and without touching the cache; unknown clients; malformed
 *    packets; Status-Server; EAP-Start; non-EAP requests; unknown State;
 *    unknown subscribers; a Nak moving to the proposed method;
 *  - a flood of identity-only starts does not stop a phone that answers.
 * Real third-party peers (eapol_test, radeapclient) are in
 * tests/integration/. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/eap_sim.h"
#include "twag/radius.h"
#include "twag/store.h"
#include "twag/usim.h"

#include "srv_flow.h"

/* ---- tests ------------------------------------------------------------------ */

static struct phone ph_aka_prime, ph_aka, ph_sim;

static void test_full_auth(void)
{
	struct attach_result r;
	struct nas n;
	uint64_t v0;
	char want[64];

	provision(&ph_aka_prime, TW_EAP_TYPE_AKA_PRIME, "001010000000001", false);
	provision(&ph_aka, TW_EAP_TYPE_AKA, "001010000000002", false);
	provision(&ph_sim, TW_EAP_TYPE_SIM, "001010000000101", false);

	nas_init(&n, "127.0.0.1", 40000, "02-00-00-00-00-01");
	v0 = store_vectors();
	attach(&ph_aka_prime, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.peer_ok && r.keys_ok);
	snprintf(want, sizeof(want), "6%s@%s", ph_aka_prime.imsi, flow_realm);
	CHECK(strcmp(r.user_name, want) == 0);
	CHECK(r.session_timeout == 3600 && r.has_class);
	CHECK(store_vectors() == v0 + 1);
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME) == 1);

	attach(&ph_aka, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.peer_ok && r.keys_ok);
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA) == 1);

	attach(&ph_sim, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.peer_ok && r.keys_ok);
	snprintf(want, sizeof(want), "1%s@%s", ph_sim.imsi, flow_realm);
	CHECK(strcmp(r.user_name, want) == 0);
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_SIM) == 1);

	/* fast re-authentication: the phones use their re-auth ids now */
	v0 = store_vectors();
	CHECK(ph_aka_prime.ids.reauth_id_len > 0 && ph_aka_prime.ids.reauth_id[0] == '8');
	attach(&ph_aka_prime, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	CHECK(r.user_name[0] == '8');
	CHECK(ctr(TW_C_ATTACH_REAUTH + TW_SRV_M_AKA_PRIME) == 1);
	attach(&ph_sim, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	CHECK(ctr(TW_C_ATTACH_REAUTH + TW_SRV_M_SIM) == 1);
	CHECK(store_vectors() == v0); /* re-auth uses no vector */

	/* every session ended */
	{
		struct tw_srv_sessions_stats st;

		tw_srv_sessions_stats(&srv.sessions, &st);
		CHECK(st.active == 0);
	}
}

/* The USIM is ahead of the store (TS 33.102 C.2: it accepted SQNs the
 * store never issued, e.g. from another HSS): it answers the challenge
 * with AUTS, the server resynchronises and the attach succeeds with one
 * more vector. */
static void test_resync(void)
{
	struct attach_result r;
	struct tw_store_sub_info info;
	struct nas n;
	uint64_t v0 = store_vectors(), rs0 = ctr(TW_C_RESYNCS), ahead;

	CHECK_OK(tw_store_sub_info(srv.store, ph_aka.imsi, &info));
	ahead = (info.seq_he > info.sqn_reserved ? info.seq_he : info.sqn_reserved) + 50;
	for (unsigned i = 0; i < TW_SQN_MS_SLOTS_MAX; i++)
		ph_aka.usim.sqn.seq_ms[i] = ahead;
	memset(&ph_aka.ids, 0, sizeof(ph_aka.ids)); /* full authentication */
	nas_init(&n, "127.0.0.1", 40001, "02-00-00-00-00-02");
	attach(&ph_aka, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	CHECK(ctr(TW_C_RESYNCS) == rs0 + 1);
	CHECK(store_vectors() == v0 + 2);
	CHECK_OK(tw_store_sub_info(srv.store, ph_aka.imsi, &info));
	CHECK(info.seq_he > ahead); /* the store moved past the USIM */
}

/* --reauth-limit 1: one fast re-authentication per full one (RFC 4187
 * §5.1: a full authentication sets AT_COUNTER to 1). */
static void test_reauth_limit(void)
{
	struct attach_result r;
	struct nas n;
	uint64_t f0 = ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME),
		 r0 = ctr(TW_C_ATTACH_REAUTH + TW_SRV_M_AKA_PRIME);

	srv.cfg.reauth_limit = 1;
	tw_srv_eap_setup(&srv);
	memset(&ph_aka_prime.ids, 0, sizeof(ph_aka_prime.ids));
	nas_init(&n, "127.0.0.1", 40005, "02-00-00-00-00-05");
	for (int i = 0; i < 4; i++) {
		attach(&ph_aka_prime, &n, &r, NULL);
		CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	}
	/* full, re-auth, full, re-auth */
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME) == f0 + 2);
	CHECK(ctr(TW_C_ATTACH_REAUTH + TW_SRV_M_AKA_PRIME) == r0 + 2);
	srv.cfg.reauth_limit = 0; /* none */
	tw_srv_eap_setup(&srv);
	for (int i = 0; i < 2; i++) {
		attach(&ph_aka_prime, &n, &r, NULL);
		CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	}
	CHECK(ctr(TW_C_ATTACH_REAUTH + TW_SRV_M_AKA_PRIME) == r0 + 2);
	srv.cfg.reauth_limit = TW_SRV_DEFAULT_REAUTH_LIMIT;
	tw_srv_eap_setup(&srv);
}

/* RFC 5080 §2.2.2: the same request again gets the same bytes, and no
 * second vector is issued. */
static void test_duplicates(void)
{
	struct phone *ph = &ph_aka_prime;
	struct nas n;
	static uint8_t out[2048], first[4096], first_req[4096], first_auth[16];
	size_t out_len, first_len, first_req_len;
	uint64_t v0, d0 = ctr(TW_C_DUPLICATES);

	memset(&ph->ids, 0, sizeof(ph->ids));
	nas_init(&n, "127.0.0.1", 40002, "02-00-00-00-00-03");
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	v0 = store_vectors();
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(store_vectors() == v0 + 1);
	memcpy(first, n.reply, n.reply_len);
	first_len = n.reply_len;
	memcpy(first_req, n.req, n.req_len);
	first_req_len = n.req_len;
	memcpy(first_auth, n.req_auth, 16);
	/* retransmit the very same datagram */
	CHECK(nas_xmit(&n) == first_len && memcmp(n.reply, first, first_len) == 0);
	CHECK(nas_xmit(&n) == first_len && memcmp(n.reply, first, first_len) == 0);
	CHECK(ctr(TW_C_DUPLICATES) == d0 + 2);
	CHECK(store_vectors() == v0 + 1);
	/* the conversation goes on and completes */
	{
		struct tw_radius_pkt rp;
		uint8_t eap[1024];
		size_t eap_len;
		int act;

		CHECK_OK(tw_radius_decode(&rp, first, first_len));
		CHECK_OK(tw_radius_eap_join(&rp, eap, sizeof(eap), &eap_len));
		{
			const struct tw_radius_attr *st = tw_radius_find(&rp, TW_RADIUS_STATE);

			CHECK(st != NULL && st->len == 16);
			if (st != NULL) {
				memcpy(n.state, tw_radius_value(&rp, st), st->len);
				n.state_len = st->len;
			}
		}
		act = peer_input(ph, eap, eap_len, out, &out_len);
		CHECK(act == TW_EAP_SEND);
		while (act == TW_EAP_SEND && nas_send(&n, out, out_len) > 0 &&
		       n.rp.code == TW_RADIUS_ACCESS_CHALLENGE)
			act = peer_input(ph, n.eap, n.eap_len, out, &out_len);
		CHECK(n.rp.code == TW_RADIUS_ACCESS_ACCEPT);
		/* the Accept retransmitted: same bytes, counted once more */
		memcpy(first, n.reply, n.reply_len);
		first_len = n.reply_len;
		CHECK(nas_xmit(&n) == first_len && memcmp(n.reply, first, first_len) == 0);
		CHECK(ctr(TW_C_DUPLICATES) == d0 + 3);
	}
	CHECK(store_vectors() == v0 + 1);
	/* the first request again from another source port: a new request
	 * (RFC 5080 key), which starts another session */
	memcpy(n.req, first_req, first_req_len);
	n.req_len = first_req_len;
	memcpy(n.req_auth, first_auth, 16);
	n.id = n.req[1];
	n.from.sin_port = htons(40003);
	CHECK(nas_xmit(&n) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(ctr(TW_C_DUPLICATES) == d0 + 3);
	CHECK(store_vectors() == v0 + 2);
}

/* Blast-RADIUS mitigations: no Message-Authenticator or a wrong one is a
 * silent drop that creates no session and leaves the cache alone. */
static void test_message_authenticator(void)
{
	struct phone *ph = &ph_aka_prime;
	struct tw_srv_sessions_stats st0, st1;
	struct nas n;
	uint8_t out[2048];
	size_t out_len;
	uint64_t v0 = store_vectors(), bad0 = ctr(TW_C_BAD_AUTH);

	memset(&ph->ids, 0, sizeof(ph->ids));
	nas_init(&n, "127.0.0.1", 40010, "02-00-00-00-00-10");
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	tw_srv_sessions_stats(&srv.sessions, &st0);

	nas_build(&n, out, out_len, false); /* EAP without MA */
	CHECK(nas_xmit(&n) == 0);
	nas_build(&n, out, out_len, true);
	/* flip one octet of the MA value (first attribute, value at 22) */
	n.req[22] ^= 0x01;
	CHECK(nas_xmit(&n) == 0);
	CHECK(ctr(TW_C_BAD_AUTH) == bad0 + 2);
	tw_srv_sessions_stats(&srv.sessions, &st1);
	CHECK(st1.active == st0.active && st1.evicted == st0.evicted);
	CHECK(store_vectors() == v0);
	/* the same Identifier and authenticator with the right MA: processed
	 * as new (the forged copy did not poison the duplicate cache) */
	n.req[22] ^= 0x01;
	CHECK(nas_xmit(&n) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(store_vectors() == v0 + 1);
	/* a wrong shared flow_secret */
	{
		struct tw_radius_builder b;
		uint8_t auth[16];

		tw_test_random(auth, 16);
		tw_radius_build_init(&b, n.req, sizeof(n.req), TW_RADIUS_ACCESS_REQUEST, 9, auth,
				     true);
		tw_radius_add_eap(&b, out, out_len);
		CHECK_OK(tw_radius_finish_request(&b, (const uint8_t *)"wrong", 5, &n.req_len));
		CHECK(tw_srv_handle(srv_w, n.req, n.req_len, (const struct sockaddr *)&n.from, n.reply,
				    now) == 0);
		CHECK(ctr(TW_C_BAD_AUTH) == bad0 + 3);
	}
}

/* RFC 3579 §2.1: a State is answered only to the client it was sent to.
 * Another client (here 127.0.0.2, inside the same 127.0.0.0/8 client
 * entry, so its Message-Authenticator is valid) replaying the phone's
 * answer with that State gets nothing, and does not keep the conversation
 * alive: once the session timeout has passed since the owner's last
 * packet, the owner's answer finds no session. */
static void test_state_binding(void)
{
	struct phone *ph = &ph_aka_prime;
	struct nas n, other;
	uint8_t out[2048];
	size_t out_len;
	uint64_t d0 = ctr(TW_C_DROPPED), v0, t0 = now;

	memset(&ph->ids, 0, sizeof(ph->ids));
	nas_init(&n, "127.0.0.1", 40050, "02-00-00-00-00-50");
	nas_init(&other, "127.0.0.2", 40050, "02-00-00-00-00-50");
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(n.state_len == 16);
	CHECK(peer_input(ph, n.eap, n.eap_len, out, &out_len) == TW_EAP_SEND);
	v0 = store_vectors();
	/* the other client, the phone's answer and the State, 50 s later and
	 * again 59 s later */
	memcpy(other.state, n.state, n.state_len);
	other.state_len = n.state_len;
	now = t0 + 50000;
	CHECK(nas_send(&other, out, out_len) == 0);
	now = t0 + 59000;
	CHECK(nas_send(&other, out, out_len) == 0);
	CHECK(ctr(TW_C_DROPPED) == d0 + 2);
	/* the owner, 61 s after its last packet: the conversation expired
	 * (60 s), whatever the other client sent */
	now = t0 + 61000;
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_REJECT);
	CHECK(n.eap_len == 4 && n.eap[0] == TW_EAP_FAILURE);
	CHECK(store_vectors() == v0);

	/* within the timeout the owner still completes after another client
	 * presented its State */
	memset(&ph->ids, 0, sizeof(ph->ids));
	n.state_len = 0;
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(peer_input(ph, n.eap, n.eap_len, out, &out_len) == TW_EAP_SEND);
	memcpy(other.state, n.state, n.state_len);
	CHECK(nas_send(&other, out, out_len) == 0);
	CHECK(nas_send(&n, out, out_len) > 0);
	while (n.reply_len > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE &&
	       peer_input(ph, n.eap, n.eap_len, out, &out_len) == TW_EAP_SEND)
		nas_send(&n, out, out_len);
	CHECK(n.rp.code == TW_RADIUS_ACCESS_ACCEPT);
	now = t0 + 62000;
}

/* The accept line names the client's address (from a host entry's name,
 * or formatted for an address inside a network entry) and the IMSI only
 * masked. */
static void test_log_lines(void)
{
	struct attach_result r;
	struct nas n;
	char path[256], line[1024], want[64], err[128];
	bool host = false, net = false, clear_imsi = false;
	FILE *f;

	CHECK_OK(tw_srv_clients_add(&srv_clients, "127.0.0.9", (const uint8_t *)flow_secret,
				    strlen(flow_secret), true, err, sizeof(err)));
	snprintf(path, sizeof(path), "%s/log.txt", flow_dir);
	if (!CHECK_OK(tw_log_open(path)))
		return;
	tw_log_set_level(TW_LOG_INFO);
	memset(&ph_aka.ids, 0, sizeof(ph_aka.ids));
	nas_init(&n, "127.0.0.9", 40060, "02-00-00-00-00-60");
	attach(&ph_aka, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT);
	memset(&ph_aka.ids, 0, sizeof(ph_aka.ids));
	nas_init(&n, "127.0.0.3", 40061, "02-00-00-00-00-61");
	attach(&ph_aka, &n, &r, NULL);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT);
	tw_log_flush(&srv_w->log);
	tw_log_set_level(TW_LOG_WARN);
	tw_log_close();
	f = fopen(path, "r");
	if (!CHECK(f != NULL))
		return;
	snprintf(want, sizeof(want), "imsi=%.6s", ph_aka.imsi);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "event=accept") == NULL)
			continue;
		CHECK(strstr(line, want) != NULL && strstr(line, "*****") != NULL);
		clear_imsi |= strstr(line, ph_aka.imsi) != NULL;
		host |= strstr(line, " client=127.0.0.9\n") != NULL;
		net |= strstr(line, " client=127.0.0.3\n") != NULL;
	}
	fclose(f);
	CHECK(host && net && !clear_imsi);
}

static void test_misc_requests(void)
{
	struct nas n, other;
	uint64_t u0 = ctr(TW_C_UNKNOWN_CLIENTS), m0 = ctr(TW_C_MALFORMED);
	uint8_t out[2048], fail_id;
	size_t out_len;

	/* unknown client address */
	nas_init(&other, "10.9.9.9", 1, "x");
	CHECK(nas_send(&other, NULL, 0) == 0);
	CHECK(ctr(TW_C_UNKNOWN_CLIENTS) == u0 + 1);

	/* malformed: Length beyond the datagram, attribute of length 1 */
	nas_init(&n, "127.0.0.1", 40020, "02-00-00-00-00-20");
	nas_build(&n, (const uint8_t *)"\x02\x01\x00\x06\x01\x61", 6, true);
	n.req_len -= 1;
	CHECK(nas_xmit(&n) == 0);
	nas_build(&n, (const uint8_t *)"\x02\x01\x00\x06\x01\x61", 6, true);
	n.req[20 + 18 + 1] = 1; /* the attribute after MA: length 1 */
	CHECK(nas_xmit(&n) == 0);
	CHECK(ctr(TW_C_MALFORMED) == m0 + 2);

	/* RFC 5997: Status-Server answered with Access-Accept (MA checked by
	 * nas_xmit) */
	{
		struct tw_radius_builder b;

		n.id++;
		tw_test_random(n.req_auth, 16);
		tw_radius_build_init(&b, n.req, sizeof(n.req), TW_RADIUS_STATUS_SERVER, n.id,
				     n.req_auth, true);
		CHECK_OK(tw_radius_finish_request(&b, (const uint8_t *)flow_secret, strlen(flow_secret),
						  &n.req_len));
		CHECK(nas_xmit(&n) > 0 && n.valid && n.rp.code == TW_RADIUS_ACCESS_ACCEPT);
		CHECK(ctr(TW_C_STATUS_SERVER) == 1);
	}

	/* EAP-Start: EAP-Request/Identity, no State */
	n.state_len = 0;
	CHECK(nas_send(&n, (const uint8_t *)"", 0) > 0 && n.valid);
	CHECK(n.rp.code == TW_RADIUS_ACCESS_CHALLENGE && n.eap_len == 5 &&
	      n.eap[0] == TW_EAP_REQUEST && n.eap[4] == TW_EAP_TYPE_IDENTITY);
	CHECK(n.state_len == 0);

	/* no EAP at all (a PAP request): Access-Reject */
	{
		struct tw_radius_builder b;

		n.id++;
		tw_test_random(n.req_auth, 16);
		tw_radius_build_init(&b, n.req, sizeof(n.req), TW_RADIUS_ACCESS_REQUEST, n.id,
				     n.req_auth, true);
		tw_radius_add(&b, TW_RADIUS_USER_NAME, "bob", 3);
		CHECK_OK(tw_radius_finish_request(&b, (const uint8_t *)flow_secret, strlen(flow_secret),
						  &n.req_len));
		CHECK(nas_xmit(&n) > 0 && n.valid && n.rp.code == TW_RADIUS_ACCESS_REJECT);
	}

	/* a State we never sent: Access-Reject with EAP-Failure */
	memset(n.state, 0x42, 16);
	n.state_len = 16;
	fail_id = 77;
	out[0] = TW_EAP_RESPONSE;
	out[1] = fail_id;
	out[2] = 0;
	out[3] = 8;
	out[4] = TW_EAP_TYPE_AKA;
	out[5] = 1;
	out[6] = out[7] = 0;
	CHECK(nas_send(&n, out, 8) > 0 && n.valid && n.rp.code == TW_RADIUS_ACCESS_REJECT);
	CHECK(n.eap_len == 4 && n.eap[0] == TW_EAP_FAILURE && n.eap[1] == fail_id);

	/* an unknown subscriber: Access-Reject with EAP-Failure */
	{
		struct phone ghost;

		memset(&ghost, 0, sizeof(ghost));
		provision(&ghost, TW_EAP_TYPE_AKA_PRIME, "001019999999999", false);
		CHECK_OK(tw_store_sub_del(srv.store, "001019999999999"));
		n.state_len = 0;
		CHECK_OK(peer_init(&ghost));
		out_len = identity_response(&ghost, out);
		CHECK(nas_send(&n, out, out_len) > 0 && n.valid);
		CHECK(n.rp.code == TW_RADIUS_ACCESS_REJECT && n.eap_len == 4 &&
		      n.eap[0] == TW_EAP_FAILURE);
		CHECK(ctr(TW_C_AUTH_FAIL + TW_SRV_M_AKA_PRIME) >= 1);
	}
}

/* RFC 3748 §5.3.1: a Nak proposing EAP-AKA' moves an EAP-AKA session to it;
 * a Nak with nothing acceptable ends it. */
static void test_nak(void)
{
	struct nas n;
	uint8_t out[2048], nak[8];
	size_t out_len;
	uint8_t req_id;
	struct phone *ph = &ph_aka;

	memset(&ph->ids, 0, sizeof(ph->ids));
	nas_init(&n, "127.0.0.1", 40030, "02-00-00-00-00-30");
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out); /* "0<imsi>@flow_realm": EAP-AKA */
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(n.eap_len > 5 && n.eap[4] == TW_EAP_TYPE_AKA);
	req_id = n.eap[1];
	nak[0] = TW_EAP_RESPONSE;
	nak[1] = req_id;
	nak[2] = 0;
	nak[3] = 7;
	nak[4] = TW_EAP_TYPE_NAK;
	nak[5] = 99;                    /* unknown to us */
	nak[6] = TW_EAP_TYPE_AKA_PRIME; /* acceptable */
	CHECK(nas_send(&n, nak, 7) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(n.eap_len > 5 && n.eap[0] == TW_EAP_REQUEST && n.eap[4] == TW_EAP_TYPE_AKA_PRIME &&
	      n.eap[1] == (uint8_t)(req_id + 1));
	CHECK(ctr(TW_C_NAKS) == 1);
	/* now a Nak proposing only what was tried already: EAP-Failure */
	nak[1] = n.eap[1];
	nak[3] = 6;
	nak[5] = TW_EAP_TYPE_AKA;
	CHECK(nas_send(&n, nak, 6) > 0 && n.rp.code == TW_RADIUS_ACCESS_REJECT);
	CHECK(n.eap_len == 4 && n.eap[0] == TW_EAP_FAILURE);
}

/* A worker whose last batch ended with a parked EAP-AKA' step (the loop
 * finished it: no park slot in use, but the mark of the last request
 * handled still set) answers a request handed to tw_srv_handle on its own,
 * and takes no park slot for it. */
static void test_after_parked_batch(void)
{
	struct nas n;
	uint8_t out[2048];
	size_t out_len;
	struct phone *ph = &ph_aka_prime;

	memset(&ph->ids, 0, sizeof(ph->ids));
	nas_init(&n, "127.0.0.1", 40040, "02-00-00-00-00-40");
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	srv_w->parked_now = true; /* as finish_parked leaves it */
	srv_w->n_park = 0;
	CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	CHECK(srv_w->n_park == 0 && !srv_w->parked_now);
}

/* A flood of EAP starts that are never continued (from distinct
 * Calling-Station-Ids) goes on around a phone's attach against a 64-slot
 * table: the table stays bounded, evicts the oldest unanswered starts, and
 * the phone completes. */
static unsigned flood_n, flood_per_round;

static void flood(unsigned round)
{
	(void)round;
	for (unsigned i = 0; i < flood_per_round; i++) {
		struct nas f;
		uint8_t eap[64];
		size_t len;
		char station[32];

		snprintf(station, sizeof(station), "66-66-%08x", flood_n++);
		nas_init(&f, "127.0.0.2", (uint16_t)(1024 + flood_n % 50000), station);
		/* half of them anonymous (an identity round), half with a real
		 * IMSI (a challenge, a vector spent) */
		if (flood_n & 1)
			len = (size_t)snprintf((char *)eap + 5, sizeof(eap) - 5, "anonymous@x.org");
		else
			len = (size_t)snprintf((char *)eap + 5, sizeof(eap) - 5, "6%s@%s",
					       ph_aka.imsi, flow_realm);
		eap[0] = TW_EAP_RESPONSE;
		eap[1] = 1;
		tw_store_be16(eap + 2, (uint16_t)(len + 5));
		eap[4] = TW_EAP_TYPE_IDENTITY;
		CHECK(nas_send(&f, eap, len + 5) > 0 && f.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
	}
}

static void test_flood(void)
{
	struct attach_result r;
	struct tw_srv_sessions_stats st;
	struct nas n;
	uint64_t a0 = ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME);

	/* AKA' is fine for ph_aka's IMSI too (milenage subscriber) */
	flood_per_round = 200; /* fills the table three times over */
	flood(0);
	flood_per_round = 40;  /* fewer than the table per round trip */
	memset(&ph_aka_prime.ids, 0, sizeof(ph_aka_prime.ids));
	nas_init(&n, "127.0.0.1", 40040, "02-00-00-00-00-40");
	attach(&ph_aka_prime, &n, &r, flood);
	CHECK(r.code == TW_RADIUS_ACCESS_ACCEPT && r.keys_ok);
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME) == a0 + 1);
	tw_srv_sessions_stats(&srv.sessions, &st);
	CHECK(st.active <= 64 && st.evicted >= flood_n - 64);

	/* once the phone has answered (an identity round first with
	 * id-policy any), no amount of flooding evicts it */
	srv.cfg.id_policy = TW_EAP_ID_ALWAYS_ANY;
	tw_srv_eap_setup(&srv);
	flood_per_round = 300;
	memset(&ph_aka_prime.ids, 0, sizeof(ph_aka_prime.ids));
	nas_init(&n, "127.0.0.1", 40041, "02-00-00-00-00-41");
	{
		uint8_t out[2048];
		size_t out_len;
		int act;

		CHECK_OK(peer_init(&ph_aka_prime));
		out_len = identity_response(&ph_aka_prime, out);
		CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
		act = peer_input(&ph_aka_prime, n.eap, n.eap_len, out, &out_len);
		/* the answer to AKA-Identity, then the flood, then the rest */
		CHECK(act == TW_EAP_SEND && nas_send(&n, out, out_len) > 0 &&
		      n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
		flood(0);
		act = peer_input(&ph_aka_prime, n.eap, n.eap_len, out, &out_len);
		while (act == TW_EAP_SEND && nas_send(&n, out, out_len) > 0 &&
		       n.rp.code == TW_RADIUS_ACCESS_CHALLENGE)
			act = peer_input(&ph_aka_prime, n.eap, n.eap_len, out, &out_len);
		CHECK(n.rp.code == TW_RADIUS_ACCESS_ACCEPT);
	}
	CHECK(ctr(TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME) == a0 + 2);
	/* a fresh start that the flood buries before it answers is lost
	 * (it cannot be told from the flood): the NAS restarts it */
	{
		uint8_t out[2048];
		size_t out_len;

		srv.cfg.id_policy = TW_EAP_ID_TRUST_EAP_IDENTITY;
		tw_srv_eap_setup(&srv);
		memset(&ph_aka_prime.ids, 0, sizeof(ph_aka_prime.ids));
		nas_init(&n, "127.0.0.1", 40042, "02-00-00-00-00-42");
		CHECK_OK(peer_init(&ph_aka_prime));
		out_len = identity_response(&ph_aka_prime, out);
		CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_CHALLENGE);
		flood(0);
		CHECK(peer_input(&ph_aka_prime, n.eap, n.eap_len, out, &out_len) == TW_EAP_SEND);
		CHECK(nas_send(&n, out, out_len) > 0 && n.rp.code == TW_RADIUS_ACCESS_REJECT);
	}
}

/* Hostile but authenticated input: requests signed with the right flow_secret
 * (so they get past the Message-Authenticator) whose EAP and attributes
 * are mutated at random: identities, truncated/extended/bit-flipped
 * challenge answers of live conversations, a State cut or altered, EAP
 * Length fields that lie. Whatever comes back is a well-formed reply
 * (Message-Authenticator first, valid), and no session is left behind:
 * once the session timeout has passed the table is empty (a slot left
 * busy by some error path would never be freed). */
static void mutate(uint8_t *b, size_t *len, size_t max)
{
	switch (tw_test_random_u32() % 6) {
	case 0: /* bit flips */
		for (unsigned k = 1 + tw_test_random_u32() % 4; k > 0 && *len > 0; k--) {
			size_t i = tw_test_random_u32() % *len;

			b[i] ^= (uint8_t)(1u << (tw_test_random_u32() % 8));
		}
		break;
	case 1: /* truncation, the EAP Length left as it was */
		if (*len > 0)
			*len = tw_test_random_u32() % *len;
		break;
	case 2: /* random tail */
		if (*len < max) {
			size_t add = 1 + tw_test_random_u32() % (max - *len < 64 ? max - *len : 64);

			tw_test_random(b + *len, add);
			*len += add;
		}
		break;
	case 3: /* an EAP Length that lies */
		if (*len >= 4)
			tw_store_be16(b + 2, (uint16_t)tw_test_random_u32());
		break;
	case 4: /* another Type / Subtype */
		if (*len >= 6) {
			b[4] = (uint8_t)tw_test_random_u32();
			b[5] = (uint8_t)tw_test_random_u32();
		}
		break;
	default: /* an attribute of the SIM/AKA payload mangled */
		if (*len > 12) {
			size_t i = 8 + tw_test_random_u32() % (*len - 8);

			b[i] = (uint8_t)(tw_test_random_u32() % 3 == 0 ? 0 : tw_test_random_u32());
		}
		break;
	}
}

static void test_robustness(void)
{
	static struct phone *phs[3] = { &ph_aka_prime, &ph_aka, &ph_sim };
	struct tw_srv_sessions_stats st;
	struct nas n;
	uint8_t out[2048], eap[2048];
	size_t out_len, len;
	unsigned replies = 0;

	for (unsigned i = 0; i < 3000; i++) {
		struct phone *ph = phs[i % 3];

		nas_init(&n, "127.0.0.1", (uint16_t)(41000 + i % 500),
			 i % 7 == 0 ? "" : "02-00-00-00-77-77");
		memset(&ph->ids, 0, sizeof(ph->ids));
		if (!CHECK_OK(peer_init(ph)))
			break;
		out_len = identity_response(ph, out);
		memcpy(eap, out, out_len);
		len = out_len;
		if (i % 2 == 0) {
			/* a live conversation first, then its next answer mutated */
			if (nas_send(&n, out, out_len) == 0 || !n.valid ||
			    n.rp.code != TW_RADIUS_ACCESS_CHALLENGE)
				continue;
			if (peer_input(ph, n.eap, n.eap_len, out, &out_len) != TW_EAP_SEND) {
				/* the phone refused: send the challenge back as garbage */
				memcpy(out, n.eap, n.eap_len);
				out_len = n.eap_len;
			}
			memcpy(eap, out, out_len);
			len = out_len;
			if (i % 10 == 0 && n.state_len > 0)
				n.state[tw_test_random_u32() % n.state_len] ^= 0x10;
			if (i % 14 == 0)
				n.state_len = tw_test_random_u32() % (n.state_len + 1);
		}
		mutate(eap, &len, sizeof(eap) - 1);
		if (len > TW_RADIUS_EAP_MAX - 200)
			len = TW_RADIUS_EAP_MAX - 200;
		if (nas_send(&n, eap, len) > 0) {
			replies++;
			CHECK(n.valid);
		}
	}
	CHECK(replies > 1000);
	now += 61000;
	while (tw_srv_sessions_expire(&srv.sessions, now, 1000) > 0)
		;
	tw_srv_sessions_stats(&srv.sessions, &st);
	if (!CHECK(st.active == 0))
		tw_note("%llu sessions left after the timeout", (unsigned long long)st.active);
}

void test_main(void)
{
	if (!flow_setup()) {
		CHECK(0);
		return;
	}
	test_full_auth();
	test_resync();
	test_reauth_limit();
	test_duplicates();
	test_message_authenticator();
	test_state_binding();
	test_log_lines();
	test_misc_requests();
	test_nak();
	test_after_parked_batch();
	test_flood();
	test_robustness();
	flow_teardown();
}
