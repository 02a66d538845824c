/*
 * twagd's packet path in-process for the unit tests (tw_srv_handle, no
 * sockets): a server over a real SQLite store in a temporary directory,
 * phones with the library's EAP peers and simulated USIM/SIM, and a NAS
 * that builds Access-Requests and verifies each reply (Response
 * Authenticator, Message-Authenticator first). Used by test_server_flow
 * and test_faults.
 */
#ifndef TW_SRV_FLOW_H
#define TW_SRV_FLOW_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "twag/aka.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/eap_sim.h"
#include "twag/radius.h"
#include "twag/store.h"
#include "twag/usim.h"

#include "../../src/server/srv.h"

extern const char flow_secret[], flow_realm[];
extern char flow_dir[64], flow_db[128];
extern struct tw_srv srv;
extern struct tw_srv_worker *srv_w;
extern struct tw_srv_clients srv_clients;
extern uint64_t now;

struct phone {
	uint8_t method;             /* 18, 23, 50 */
	char imsi[16];
	struct tw_sub_keys keys;
	struct tw_usim usim;
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids ids;
	struct tw_aka_peer_ctx aka;
	struct tw_eap_sim_peer sim;
	uint8_t msk[64];
};

struct nas {
	struct sockaddr_in from;
	uint8_t id;
	char station[32];
	uint8_t state[253];
	size_t state_len;
	uint8_t req[4096], req_auth[16];
	size_t req_len;
	uint8_t reply[4096];
	size_t reply_len;
	struct tw_radius_pkt rp;
	uint8_t eap[4096];           /* EAP of the last reply */
	size_t eap_len;
	bool valid;                  /* reply verified, MA first */
};

struct attach_result {
	uint8_t code;           /* last RADIUS code */
	bool keys_ok;           /* MPPE keys == the phone's MSK */
	bool peer_ok;           /* the phone accepted EAP-Success */
	unsigned rounds;
	char user_name[254];
	uint32_t session_timeout;
	bool has_class;
};

/* A worker counter; the vectors and triplets the store handed out. */
uint64_t ctr(enum tw_srv_ctr c);
uint64_t store_vectors(void);
/* A subscriber of method 18 (SIM, COMP128-1), 23 (AKA) or 50 (AKA') with
 * random keys, stored, and its phone. */
void provision(struct phone *ph, uint8_t method, const char *imsi, bool replace);
int peer_init(struct phone *ph);
int peer_input(struct phone *ph, const uint8_t *in, size_t len, uint8_t *out,
	       size_t *out_len);
bool peer_msk(struct phone *ph);
void nas_init(struct nas *n, const char *ip, uint16_t port, const char *station);
/* An Access-Request (Message-Authenticator first unless !with_ma). */
void nas_build(struct nas *n, const uint8_t *eap, size_t eap_len, bool with_ma);
/* Hands the request to the server; decodes and verifies the reply. */
size_t nas_xmit(struct nas *n);
size_t nas_send(struct nas *n, const uint8_t *eap, size_t eap_len);
/* The EAP-Response/Identity of a phone (the NAS's identity round). */
size_t identity_response(struct phone *ph, uint8_t *out);
/* A whole attach; before_round (if set) runs before each round after the
 * first. */
void attach(struct phone *ph, struct nas *n, struct attach_result *r,
	    void (*before_round)(unsigned round));
/* The server, its store, one worker; and their removal. */
bool flow_setup(void);
void flow_teardown(void);

#endif
