/* The in-process server harness of srv_flow.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srv_flow.h"
#include "tw_test.h"
#include "twag/bytes.h"

const char flow_secret[] = "testing123";
const char flow_realm[] = "wlan.mnc001.mcc001.3gppnetwork.org";
char flow_dir[64];
char flow_db[128];
struct tw_srv srv;
struct tw_srv_worker *srv_w;
struct tw_srv_clients srv_clients;
uint64_t now = 1000000;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static int t_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	tw_test_random(out, len);
	return TW_OK;
}

uint64_t ctr(enum tw_srv_ctr c)
{
	return atomic_load(&srv_w->ctr.v[c]);
}

uint64_t store_vectors(void)
{
	struct tw_store_stats s;

	tw_store_get_stats(srv.store, &s);
	return s.vectors + s.triplets;
}

/* ---- subscribers and phones --------------------------------------------- */




void provision(struct phone *ph, uint8_t method, const char *imsi, bool replace)
{
	struct tw_subscriber s;
	uint8_t k[16], opc[16], amf[2] = { 0x80, 0x00 };

	memset(ph, 0, sizeof(*ph));
	ph->method = method;
	snprintf(ph->imsi, sizeof(ph->imsi), "%s", imsi);
	tw_test_random(k, 16);
	tw_test_random(opc, 16);
	if (method == TW_EAP_TYPE_SIM)
		CHECK_OK(tw_sub_keys_comp128(&ph->keys, 1, k));
	else
		CHECK_OK(tw_sub_keys_milenage(&ph->keys, k, opc, NULL));
	CHECK_OK(tw_subscriber_init(&s, imsi, &ph->keys, amf));
	CHECK_OK(tw_store_sub_put(srv.store, &s, replace));
	CHECK_OK(tw_usim_init(&ph->usim, imsi, &ph->keys));
	ph->pc.imsi = ph->imsi;
	ph->pc.imsi_len = strlen(ph->imsi);
	ph->pc.realm = flow_realm;
	ph->pc.realm_len = strlen(flow_realm);
	ph->pc.support_aka_prime = method == TW_EAP_TYPE_AKA_PRIME;
	ph->pc.result_ind = true;
	ph->pc.use_pseudonym = false;
	ph->pc.use_reauth = true;
	ph->pc.network_name = (const uint8_t *)"WLAN";
	ph->pc.network_name_len = 4;
	ph->pc.random = t_random;
	tw_wipe(&s, sizeof(s));
}

int peer_init(struct phone *ph)
{
	if (ph->method == TW_EAP_TYPE_SIM)
		return tw_eap_sim_peer_init(&ph->sim, &ph->pc, &ph->ids, &ph->usim, t_random, NULL);
	return tw_aka_peer_init(&ph->aka, &ph->pc, &ph->usim, &ph->ids);
}

int peer_input(struct phone *ph, const uint8_t *in, size_t len, uint8_t *out,
		      size_t *out_len)
{
	if (ph->method == TW_EAP_TYPE_SIM)
		return tw_eap_sim_peer_input(&ph->sim, in, len, out, 2048, out_len);
	return tw_aka_peer_input(&ph->aka, in, len, out, 2048, out_len);
}

bool peer_msk(struct phone *ph)
{
	struct tw_eap_keys k;

	if (ph->method == TW_EAP_TYPE_SIM) {
		const struct tw_eap_keys *kp = tw_eap_sim_peer_keys(&ph->sim);

		if (kp == NULL)
			return false;
		memcpy(ph->msk, kp->msk, 64);
		return true;
	}
	if (tw_aka_peer_keys(&ph->aka, &k) != TW_OK)
		return false;
	memcpy(ph->msk, k.msk, 64);
	tw_wipe(&k, sizeof(k));
	return true;
}

/* ---- the NAS ------------------------------------------------------------- */



void nas_init(struct nas *n, const char *ip, uint16_t port, const char *station)
{
	memset(n, 0, sizeof(*n));
	n->from.sin_family = AF_INET;
	n->from.sin_port = htons(port);
	CHECK(inet_pton(AF_INET, ip, &n->from.sin_addr) == 1);
	snprintf(n->station, sizeof(n->station), "%s", station);
	n->id = (uint8_t)tw_test_random_u32();
}

/* Builds an Access-Request (Message-Authenticator first unless !with_ma). */
void nas_build(struct nas *n, const uint8_t *eap, size_t eap_len, bool with_ma)
{
	struct tw_radius_builder b;

	n->id++;
	tw_test_random(n->req_auth, 16);
	tw_radius_build_init(&b, n->req, sizeof(n->req), TW_RADIUS_ACCESS_REQUEST, n->id,
			     n->req_auth, with_ma);
	tw_radius_add(&b, TW_RADIUS_NAS_IDENTIFIER, "test-ap", 7);
	if (n->station[0])
		tw_radius_add(&b, TW_RADIUS_CALLING_STATION_ID, n->station, strlen(n->station));
	if (n->state_len)
		tw_radius_add(&b, TW_RADIUS_STATE, n->state, n->state_len);
	if (eap != NULL)
		tw_radius_add_eap(&b, eap, eap_len);
	if (with_ma)
		CHECK_OK(tw_radius_finish_request(&b, (const uint8_t *)flow_secret, strlen(flow_secret),
						  &n->req_len));
	else {
		/* no Message-Authenticator: just the length */
		CHECK_OK(b.err);
		tw_store_be16(n->req + 2, (uint16_t)b.len);
		n->req_len = b.len;
	}
}

/* Hands the request to the server; decodes and verifies the reply. */
size_t nas_xmit(struct nas *n)
{
	const struct tw_radius_attr *st;

	n->valid = false;
	n->eap_len = 0;
	n->reply_len = tw_srv_handle(srv_w, n->req, n->req_len, (const struct sockaddr *)&n->from,
				     n->reply, now);
	tw_log_flush(&srv_w->log);
	if (n->reply_len == 0)
		return 0;
	if (!CHECK_OK(tw_radius_decode(&n->rp, n->reply, n->reply_len)))
		return n->reply_len;
	CHECK(n->rp.id == n->id);
	/* RFC 2865 §3 Response Authenticator, RFC 3579 §3.2 MA, and MA first */
	n->valid = CHECK_OK(tw_radius_verify_response(&n->rp, n->req_auth,
						      (const uint8_t *)flow_secret, strlen(flow_secret),
						      true)) &&
		   CHECK(n->rp.n_attrs > 0 &&
			 n->rp.attrs[0].type == TW_RADIUS_MESSAGE_AUTHENTICATOR);
	if (n->rp.n_eap > 0 &&
	    tw_radius_eap_join(&n->rp, n->eap, sizeof(n->eap), &n->eap_len) != TW_OK)
		n->eap_len = 0;
	st = tw_radius_find(&n->rp, TW_RADIUS_STATE);
	if (st != NULL) {
		memcpy(n->state, tw_radius_value(&n->rp, st), st->len);
		n->state_len = st->len;
	}
	return n->reply_len;
}

size_t nas_send(struct nas *n, const uint8_t *eap, size_t eap_len)
{
	nas_build(n, eap, eap_len, true);
	return nas_xmit(n);
}

/* The EAP-Response/Identity of a phone (the NAS's identity round). */
size_t identity_response(struct phone *ph, uint8_t *out)
{
	uint8_t req[16];
	size_t len = 0, out_len = 0;

	CHECK_OK(tw_eap_request_identity(req, sizeof(req), 1, &len));
	CHECK(peer_input(ph, req, len, out, &out_len) == TW_EAP_SEND);
	return out_len;
}



/* Runs a whole attach; before_round (if set) runs before each round after
 * the first, e.g. to flood the table. */
void attach(struct phone *ph, struct nas *n, struct attach_result *r,
		   void (*before_round)(unsigned round))
{
	uint8_t out[2048];
	size_t out_len;
	int act;

	memset(r, 0, sizeof(r[0]));
	n->state_len = 0;
	CHECK_OK(peer_init(ph));
	out_len = identity_response(ph, out);
	for (r->rounds = 0; r->rounds < 12; r->rounds++) {
		if (r->rounds > 0 && before_round != NULL)
			before_round(r->rounds);
		if (nas_send(n, out, out_len) == 0 || !n->valid)
			return;
		r->code = n->rp.code;
		if (n->rp.code == TW_RADIUS_ACCESS_CHALLENGE) {
			act = peer_input(ph, n->eap, n->eap_len, out, &out_len);
			if (act != TW_EAP_SEND)
				return;
			continue;
		}
		if (n->rp.code == TW_RADIUS_ACCESS_ACCEPT) {
			const struct tw_radius_attr *a;
			uint8_t msk[64];

			act = peer_input(ph, n->eap, n->eap_len, out, &out_len);
			r->peer_ok = act == TW_EAP_ACCEPT && peer_msk(ph);
			r->keys_ok = r->peer_ok &&
				     tw_radius_get_mppe_keys(&n->rp, (const uint8_t *)flow_secret,
							     strlen(flow_secret), n->req_auth,
							     msk) == TW_OK &&
				     memcmp(msk, ph->msk, 64) == 0;
			a = tw_radius_find(&n->rp, TW_RADIUS_USER_NAME);
			if (a != NULL) {
				memcpy(r->user_name, tw_radius_value(&n->rp, a), a->len);
				r->user_name[a->len] = 0;
			}
			a = tw_radius_find(&n->rp, TW_RADIUS_SESSION_TIMEOUT);
			if (a != NULL && a->len == 4)
				r->session_timeout = tw_load_be32(tw_radius_value(&n->rp, a));
			r->has_class = tw_radius_find(&n->rp, TW_RADIUS_CLASS) != NULL;
			tw_wipe(msk, sizeof(msk));
		}
		return;
	}
}

/* ---- set-up ---------------------------------------------------------------- */

bool flow_setup(void)
{
	struct tw_store_opts so;
	uint8_t kek[32], seed[16];
	char err[256];

	snprintf(flow_dir, sizeof(flow_dir), "/tmp/twag-test-flow-XXXXXX");
	if (mkdtemp(flow_dir) == NULL)
		return false;
	snprintf(flow_db, sizeof(flow_db), "%s/twag.db", flow_dir);
	tw_test_random(kek, sizeof(kek));
	memset(&so, 0, sizeof(so));
	so.path = flow_db;
	so.kek = kek;
	if (!CHECK_OK(tw_store_open(&srv.store, &so, err, sizeof(err)))) {
		tw_note("store: %s", err);
		return false;
	}
	tw_srv_config_defaults(&srv.cfg);
	srv.cfg.dup_entries = 64;
	snprintf(srv.cfg.realm, sizeof(srv.cfg.realm), "%s", flow_realm);
	tw_srv_eap_setup(&srv);
	tw_test_random(seed, sizeof(seed));
	if (!CHECK_OK(tw_srv_sessions_init(&srv.sessions, 64, 60, seed)))
		return false;
	CHECK_OK(tw_srv_clients_add(&srv_clients, "127.0.0.0/8", (const uint8_t *)flow_secret,
				    strlen(flow_secret), true, err, sizeof(err)));
	atomic_store(&srv.clients, &srv_clients);
	if (posix_memalign((void **)&srv_w, 64, sizeof(*srv_w)) != 0)
		return false;
	if (!CHECK_OK(tw_srv_worker_init(srv_w, &srv, 0, -1)))
		return false;
	srv_w->clients = &srv_clients;
	srv.workers = &srv_w;
	srv.n_workers = 1;
	/* the log (info level) goes to stderr: the test output shows it */
	tw_log_set_level(TW_LOG_WARN);
	return true;
}

void flow_teardown(void)
{
	tw_srv_worker_free(srv_w);
	free(srv_w);
	tw_srv_sessions_free(&srv.sessions);
	tw_store_close(srv.store);
	tw_srv_clients_free(&srv_clients);
	(void)nftw(flow_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

