/*
 * twag — twagd internal: the daemon's shared state and its workers
 * (server.c starts them, worker.c runs the packet path).
 */
#ifndef TWAG_SRV_H
#define TWAG_SRV_H

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "twag/eap.h"
#include "twag/radius.h"
#include "twag/server.h"
#include "twag/store.h"
#include "twag/udp_gso.h"
#include "twag/vecsrc.h"

enum {
	TW_SRV_BATCH = 32,        /* datagrams per recvmmsg/sendmmsg */
	TW_SRV_RND_POOL = 4096,   /* DRBG octets buffered per worker (worker.c rnd) */
	TW_SRV_CMSG_LEN = TW_UDP_GSO_CMSG_MAX, /* a reply's IP(V6)_PKTINFO */
	/* a request's control messages: IP_PKTINFO and IPV6_PKTINFO (both on
	 * a dual-stack socket) and UDP_GRO, with room to spare */
	TW_SRV_RX_CMSG_LEN = 192,
	/* a receive slot: one datagram (RFC 2865 §3: at most 4096 octets),
	 * or with UDP GRO several of one flow coalesced (at most 64 KiB) */
	TW_SRV_RX_LEN = 65536,
	TW_SRV_EAP_OUT = 2048,    /* >= TW_EAP_OUT_MIN */
};

struct tw_srv;

/* What one Access-Request is about, for the helpers below. */
struct tw_srv_req {
	struct tw_srv_worker *w;
	struct tw_srv *srv;
	const struct tw_srv_client *client;
	const struct tw_radius_pkt *p;
	struct tw_srv_addr addr;
	char ip[48];
	struct tw_eap_view ev;     /* the EAP-Response (w->eap_in) */
	size_t eap_len;
	uint8_t *reply;
	uint64_t now;
	const char *reason;        /* why a reject, for the log */
};

/* An EAP-AKA' or EAP-AKA step that needs a vector while its batch is
 * being handled: the vector is fetched and the challenge built with the
 * batch's others at its end (tw_store_aka_vectors,
 * tw_aka_server_vector_many), then the step goes on as it would have. */
struct tw_srv_park {
	struct tw_srv_req r;          /* the request (r.p: a batch packet) */
	struct tw_srv_session *s;     /* held busy until then */
	bool first;
	struct tw_srv_dup_entry *e;   /* its duplicate-cache entry */
	int tx;                       /* its send slot */
	/* the vector is fetched at the batch's end too, with the others
	 * (tw_store_aka_vectors: one commit for the SQN reservations they
	 * need), for this IMSI and RAND */
	char imsi[16];
	uint8_t rand_[16];
	struct tw_eap_aka_vec v;
	uint8_t out[TW_SRV_EAP_OUT];
};

struct tw_srv_worker {
	struct tw_srv_counters ctr;     /* first: its own cache lines */
	struct tw_srv *srv;
	unsigned idx;
	int fd;
	pthread_t thread;
	bool started;
	_Atomic uint64_t epoch_seen;    /* client-table generation in use */
	_Atomic uint64_t beats;         /* loop turns finished (the watchdog's) */
	const struct tw_srv_clients *clients;
	uint64_t last_sweep_ms;
	uint64_t last_full_log_ms;      /* rate limit of event=sessions-full */
	struct tw_srv_dup dup;
	struct tw_log_buf log;
	size_t rnd_pos;
	uint8_t rnd[TW_SRV_RND_POOL];
	/* one batch */
	struct mmsghdr rx[TW_SRV_BATCH], tx[TW_SRV_BATCH];
	struct iovec rx_iov[TW_SRV_BATCH], tx_iov[TW_SRV_BATCH];
	struct sockaddr_storage rx_addr[TW_SRV_BATCH];
	uint8_t rx_cmsg[TW_SRV_BATCH][TW_SRV_RX_CMSG_LEN] __attribute__((aligned(8)));
	uint8_t tx_cmsg[TW_SRV_BATCH][TW_SRV_CMSG_LEN] __attribute__((aligned(8)));
	/* the receive slots: TW_SRV_BATCH of rx_slot octets (TW_SRV_RX_LEN
	 * with UDP GRO, else TW_RADIUS_MAX_LEN + 1 so that a longer datagram
	 * shows), mapped apart from the worker (2 MiB with GRO: likely one
	 * huge page, committed at its first touch) */
	uint8_t *rx_mem;
	size_t rx_slot;
	/*
	 * The datagrams of the batch being handled, in arrival order: a
	 * receive slot holds one, or with UDP GRO (w->gro) several of one
	 * length from one source cut from it. bad: longer than RFC 2865
	 * allows (or cut by the kernel): dropped as malformed.
	 */
	bool gro;
	int ndg;
	struct tw_srv_dgram {
		const uint8_t *p;
		uint32_t len;
		uint16_t slot;
		bool bad;
	} dg[TW_SRV_BATCH];
	uint8_t tx_buf[TW_SRV_BATCH][TW_RADIUS_MAX_LEN];
	struct tw_udp_gso txg;          /* the replies' sender (send.c) */
	/*
	 * Replies whose authenticators are computed for the whole batch at
	 * once (defer_sign, set by tw_srv_worker_run; tw_srv_handle called on
	 * its own signs each reply itself): the builder of each, its client's
	 * secret, its duplicate-cache entry (filled once signed) and its
	 * send slot. cur_pend: the reply of the request being handled (-1).
	 */
	bool defer_sign;
	int n_pend, cur_pend;
	struct {
		struct tw_radius_builder b;
		const struct tw_radius_secret *s;
		struct tw_srv_dup_entry *e;
		int tx;
	} pend[TW_SRV_BATCH];
	/*
	 * The Message-Authenticators of a receive batch checked at once
	 * before the requests are handled (tw_radius_verify_requests_ctx):
	 * vpkt/vjob per datagram (vhash: its duplicate-cache hash, made
	 * once, for an EAP Access-Request); pre_rc is the verdict of the one being handled when
	 * pre_set.
	 */
	struct tw_radius_pkt vpkt[TW_SRV_BATCH];
	struct tw_radius_verify_job vjob[TW_SRV_BATCH];
	const struct tw_srv_client *vclient[TW_SRV_BATCH];
	uint64_t vhash[TW_SRV_BATCH];
	int vidx[TW_SRV_BATCH];       /* datagram -> vjob, -1: none */
	/* the datagram being handled was found, decoded and checked by the
	 * batch (pre_rc, its client, its packet, its hash): else
	 * tw_srv_handle does it */
	bool pre_set;
	int pre_rc;
	const struct tw_srv_client *pre_client;
	const struct tw_radius_pkt *pre_pkt;
	uint64_t pre_hash;
	/* the batch's parked EAP-AKA' steps (park_ok: the worker loop,
	 * which builds them; parked_now: the request just handled was) */
	bool park_ok, parked_now;
	bool dbg_done;                /* the request handled was debugged */
	/* the requests are RADIUS/1.1 (RFC 9765, a RadSec connection that
	 * negotiated ALPN "radius/1.1"): no Message-Authenticator checked
	 * or sent, replies finished by tw_radius_finish_v11 */
	bool v11;
	int n_park;
	struct tw_srv_park park[TW_SRV_BATCH];
	/* scratch of one request */
	struct tw_radius_pkt pkt;
	uint8_t eap_in[TW_RADIUS_EAP_MAX];
	uint8_t eap_out[TW_SRV_EAP_OUT];
};

/* The service manager's notify socket (notify.c); fd -1: none. */
struct tw_srv_notify {
	int fd;
	uint64_t period_ms;             /* WATCHDOG=1 this often (0: no watchdog) */
	uint64_t stuck_ms;              /* a worker without a turn this long: no ping */
	uint64_t next_ms;
	bool armed, stuck_logged, send_failed;
	uint64_t beats[TW_SRV_MAX_THREADS], beat_ms[TW_SRV_MAX_THREADS];
};

/* The debug conditions in force (debug.c): on is their number, read
 * without the lock on the packet path. */
struct tw_srv_debug {
	pthread_mutex_t lock;
	atomic_uint on;
	struct tw_srv_debug_set set;
};

struct tw_srv {
	struct tw_srv_config cfg;       /* cfg.clients: the --client entries */
	struct tw_store *store;
	struct tw_eap_server_cfg eap;
	struct tw_eap_sim_server_opts sim_opts;
	struct tw_srv_sessions sessions;
	_Atomic(struct tw_srv_clients *) clients; /* current table */
	_Atomic uint64_t epoch;
	atomic_bool stop;
	bool pktinfo;                   /* wildcard listen: answer from the
					 * address the request was sent to */
	struct tw_srv_worker **workers;
	unsigned n_workers;
	struct sockaddr_storage listen_addr;
	socklen_t listen_len;
	int metrics_fd;
	pthread_t metrics_thread;
	bool metrics_started;
	int argc;                       /* the command line, read again on SIGHUP */
	char **argv;
	struct tw_srv_notify notify;
	struct tw_srv_acct *acct;       /* accounting (acct.c), NULL: off */
	struct tw_srv_debug debug;      /* per-request debug (debug.c) */
	struct tw_srv_radsec *radsec;   /* RADIUS over TLS (radsec.c), NULL: off */
	struct tw_srv_dynauth *dynauth; /* dynamic authorization (dynauth.c) */
	struct tw_srv_control *control; /* the control socket's thread (control.c) */
};

/* A worker with its socket fd (owned), tables and buffers. */
TW_MUST_CHECK int tw_srv_worker_init(struct tw_srv_worker *w, struct tw_srv *srv,
				     unsigned idx, int fd);
void tw_srv_worker_free(struct tw_srv_worker *w);

/* ---- operating: notify socket, privilege drop (notify.c, privdrop.c) ---- */

/* Reads NOTIFY_SOCKET (a path or "@abstract"), WATCHDOG_USEC and
 * WATCHDOG_PID, and connects the socket. TW_OK (also without
 * NOTIFY_SOCKET: then every call below does nothing), else an error with
 * the reason in err (n stays off). */
TW_MUST_CHECK int tw_srv_notify_open(struct tw_srv_notify *n, char *err, size_t err_len);
/* Sends msg ("READY=1", "STOPPING=1", ...) as one datagram. */
void tw_srv_notify(struct tw_srv_notify *n, const char *msg);
/* RELOADING=1 with MONOTONIC_USEC. */
void tw_srv_notify_reloading(struct tw_srv_notify *n);
/* sigwaitinfo(sigs) that sends WATCHDOG=1 each period meanwhile, as long
 * as every worker of srv keeps turning. */
int tw_srv_notify_sigwait(struct tw_srv *srv, struct tw_srv_notify *n, const sigset_t *sigs,
			  siginfo_t *si);
void tw_srv_notify_close(struct tw_srv_notify *n);

/* --user/--group: becomes that user (initgroups, setgid, setuid) when
 * root, checks root cannot come back; *dropped tells whether it did. Not
 * root: TW_OK when already that user, else an error. TW_OK without
 * --user. Error messages name the cause. */
TW_MUST_CHECK int tw_srv_privdrop(const struct tw_srv_config *c, bool *dropped, char *err,
				  size_t err_len);
/* Whether the permissions let this process open the store at path for
 * writing: its directory (SQLite creates PATH-wal and PATH-shm there), the
 * file and its WAL files. TW_OK, else TW_ERR_IO with the owner and mode of
 * what is in the way (other causes are tw_store_open's to name). Checked
 * before the KEK is read, so that a store left to root after a drop is
 * named as such. */
TW_MUST_CHECK int tw_srv_store_access(const char *path, char *err, size_t err_len);

/* Sends the replies tx[0..m) (one iovec each) on w->fd with
 * tw_udp_gso_send (w->txg) and updates the worker's counters from it. */
void tw_srv_send_replies(struct tw_srv_worker *w, struct mmsghdr *tx, int m);

/* Where the cutting of a receive batch into datagrams stands. */
struct tw_srv_rx_cursor {
	int slot;      /* receive slot */
	uint32_t off;  /* octets of it already taken */
	uint32_t seg;  /* its datagrams' length (found when off is 0) */
};

/*
 * Fills w->dg with the next datagrams (at most TW_SRV_BATCH) of the n
 * receive slots w->rx[0..n), from *cur on: a slot is one datagram, or
 * with UDP GRO those of its UDP_GRO segment size (the last may be
 * shorter). Returns how many (0: all taken).
 */
int tw_srv_next_datagrams(struct tw_srv_worker *w, int n, struct tw_srv_rx_cursor *cur);

/* The datagrams in the n receive slots. */
int tw_srv_count_datagrams(const struct tw_srv_worker *w, int n);

/* A worker loop between its turns (tw_srv_worker_run): how a turn
 * receives and tells the time, and the receive coalescing state
 * (--rx-coalesce-us) one turn leaves to the next. */
struct tw_srv_loop {
	int rx_flags;                 /* recvmmsg's flags: MSG_WAITFORONE */
	uint64_t (*clock_ms)(void);   /* the sessions' and duplicates' clock:
				       * tw_srv_now_ms */
	uint64_t co_ns;               /* the coalescing span */
	uint64_t last_rx, calm_until; /* now_ns() of the last receive; no
				       * waits before calm_until */
	unsigned unpaid;              /* waits in a row that brought < 2 */
	bool dense;                   /* the next receive waits */
	int used;                     /* receive slots the last one filled */
};

/* The start of a worker loop: w->defer_sign and w->park_ok from the
 * environment (TWAG_NO_SIGN_BATCH, TWAG_NO_AKA_LANES), the thread's DRBG
 * made, l set for the first turn (MSG_WAITFORONE, tw_srv_now_ms). */
void tw_srv_worker_begin(struct tw_srv_worker *w, struct tw_srv_loop *l);

/* One turn of the worker loop: the current client table taken, one
 * receive (recvmmsg with l->rx_flags, after a coalescing wait), its
 * datagrams handled and the replies sent, the sessions swept (worker 0,
 * once a second), the log flushed. Returns what recvmmsg returned. */
int tw_srv_worker_turn(struct tw_srv_worker *w, struct tw_srv_loop *l);

/* With a wildcard listen address a reply leaves from the address the
 * request was sent to: in's IP_PKTINFO / IPV6_PKTINFO echoed into
 * out[0..max) (zeroed first). Returns the control length, 0 for none. */
size_t tw_srv_reply_cmsg(const struct msghdr *in, uint8_t *out, size_t max);

/* CLOCK_MONOTONIC in ms (the HTTP endpoints' and the watchdog's
 * deadlines; tw_srv_now_ms is the coarse one of the packet path). */
uint64_t tw_srv_mono_ms(void);

/* Sends p[0..len) on a non-blocking stream socket by deadline
 * (tw_srv_mono_ms); false when the peer is gone or too slow. */
bool tw_srv_send_all(int fd, const char *p, size_t len, uint64_t deadline);

/* "IP:PORT" or "[IPv6]:PORT" of a socket address ("?" if neither). */
void tw_srv_sockaddr_text(const struct sockaddr_storage *ss, char *out, size_t max);

/* The worker thread: tw_srv_worker_begin, then turns until stop. */
void *tw_srv_worker_run(void *arg);

/*
 * The packet path for one datagram from `from`: returns the length of the
 * reply written to reply (TW_RADIUS_MAX_LEN octets), or 0 when the
 * datagram is silently discarded. Counts and logs what it did.
 */
size_t tw_srv_handle(struct tw_srv_worker *w, const uint8_t *in, size_t len,
		     const struct sockaddr *from, uint8_t *reply, uint64_t now_ms);

/* One HTTP/1.0 exchange of the metrics endpoint on connected socket fd:
 * GET /metrics gets the Prometheus text (body: body_max octets of
 * scratch), anything else 404. The whole exchange (reading the request,
 * writing the answer) ends within timeout_ms whatever the client does;
 * fd is not closed. */
void tw_srv_metrics_serve(struct tw_srv *srv, int fd, char *body, size_t body_max,
			  unsigned timeout_ms);

/* ---- per-request debug (debug.c) ---------------------------------------- */

void tw_srv_debug_init(struct tw_srv_debug *g);
void tw_srv_debug_destroy(struct tw_srv_debug *g);
/* Puts d in force (any thread). */
void tw_srv_debug_publish(struct tw_srv_debug *g, const struct tw_srv_debug_set *d);
void tw_srv_debug_get(struct tw_srv_debug *g, struct tw_srv_debug_set *out);
/* Whether a conversation of client (NULL: not known) or of the IMSI
 * imsi[0..imsi_len) (NULL: not known yet) is to be debugged. */
bool tw_srv_debug_match(struct tw_srv_debug *g, const struct tw_srv_addr *client,
			const char *imsi, size_t imsi_len);
/* The control socket's "debug" command (debug.c; control.c's table). */
struct out;
void tw_srv_debug_cmd(struct tw_srv *srv, struct out *o, int argc, char **argv);
/* Logs the RADIUS packet pkt[0..len) (dir "in" or "out") attribute by
 * attribute, secrets elided, IMSIs masked, into b. */
void tw_srv_debug_dump(struct tw_log_buf *b, const char *dir, const char *client,
		       const uint8_t *pkt, size_t len);

/* Fills srv->eap and srv->sim_opts from srv->cfg (store ops included). */
void tw_srv_eap_setup(struct tw_srv *srv);

/* Monotonic milliseconds (coarse clock: expiry only). */
uint64_t tw_srv_now_ms(void);

#endif
