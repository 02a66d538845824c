/*
 * twag — twagd, the RADIUS/EAP gateway: the parts of the daemon that are
 * unit-tested on their own (configuration and the client table, the EAP
 * session table, the RADIUS duplicate cache, metrics text, logs) and its
 * entry point.
 *
 * RFCs: RFC 2865 (June 2000) RADIUS, RFC 3579 (September 2003) RADIUS for
 * EAP, RFC 5080 (December 2007) §2.2.2 duplicate detection, RFC 5997
 * (August 2010) Status-Server, RFC 4669 (October 2006) server counters,
 * Prometheus text exposition format 0.0.4.
 *
 * This layer does I/O, allocates at start-up only and runs threads; the
 * packet path (src/server/worker.c) allocates nothing: every table here is
 * sized once (--max-sessions, --dup-cache) and an exhausted table is a
 * counted, clean rejection.
 */
#ifndef TWAG_SERVER_H
#define TWAG_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "twag/eap_aka.h"
#include "twag/eap_method.h"
#include "twag/eap_sim.h"
#include "twag/err.h"
#include "twag/radius.h"

enum {
	TW_SRV_DEFAULT_PORT = 1812,              /* RFC 2865 §3 */
	TW_SRV_SECRET_MAX = TW_RADIUS_SECRET_MAX, /* shared secret octets */
	TW_SRV_PATH_MAX = 1024,
	TW_SRV_MAX_THREADS = 64,
	TW_SRV_DEFAULT_MAX_SESSIONS = 65536,
	TW_SRV_MIN_SESSIONS = 16,
	TW_SRV_MAX_SESSIONS = 1 << 24,
	TW_SRV_DEFAULT_SESSION_TIMEOUT = 60,     /* s, from the last packet */
	TW_SRV_DEFAULT_REPLY_SESSION_TIMEOUT = 3600, /* Session-Timeout sent */
	TW_SRV_DEFAULT_REAUTH_LIMIT = 16,        /* re-auths per full auth */
	TW_SRV_DEFAULT_DUP_ENTRIES = 32768,      /* per worker */
	TW_SRV_DEFAULT_DUP_EXPIRY = 10,          /* s (RFC 5080 §2.2.2) */
	TW_SRV_DEFAULT_RX_COALESCE_US = 1000,    /* worker.c: receive coalescing */
	TW_SRV_MAX_RX_COALESCE_US = 10000,
	TW_SRV_DUP_AVG_REPLY = 256,              /* reply ring octets per entry */
	TW_SRV_DUP_REPLY_MAX = 4096,             /* TW_RADIUS_MAX_LEN */
	TW_SRV_STATION_MAX = 64,                 /* Calling-Station-Id octets
						  * kept; longer ones hashed */
	TW_SRV_STATE_LEN = 16,                   /* State we send */
	TW_SRV_TOKEN_LEN = 12,                   /* its random part */
	TW_SRV_N_METHODS = 3,
	TW_SRV_IDPKT_MAX = 5 + TW_EAP_ID_MAX,    /* EAP-Response/Identity */
};

/* ---- addresses and the client table ------------------------------------ */

/* An IPv4 (a[0..3]) or IPv6 address. IPv4-mapped IPv6 sources are
 * normalised to IPv4 so that "--client 127.0.0.1" matches on a dual-stack
 * socket. */
struct tw_srv_addr {
	uint8_t family; /* 4 or 6 */
	uint8_t a[16];
};

/* One RADIUS client (RFC 2865 §3: the NAS and its shared secret). The
 * secret is kept prepared (its HMAC-MD5 states computed when the table is
 * built, at start-up and on SIGHUP), so the packet path never redoes the
 * key blocks; key.secret / key.len are the octets. */
struct tw_srv_client {
	struct tw_srv_addr net;
	unsigned prefix;        /* 0..32 or 0..128 */
	struct tw_radius_secret key;
	bool from_cmdline;      /* kept over SIGHUP reloads */
	char name[64];          /* "addr/prefix" for logs */
};

struct tw_srv_clients {
	size_t n, cap;
	struct tw_srv_client *v;
	/* the index (tw_srv_clients_add keeps it): every entry in one
	 * open-addressed table of indices into v, keyed by a seeded hash of
	 * (family, prefix, network); per family, the prefix lengths that
	 * entries have, longest first. A look-up masks the address to each
	 * of those lengths in turn and probes the table: the first hit is
	 * the most specific network. Its cost grows with the number of
	 * distinct prefix lengths (a few in practice; at most 33 or 129),
	 * not with the number of clients. */
	uint64_t *slot;            /* nslot slots (power of 2): hash bits | index + 1, 0 empty */
	size_t nslot;
	uint8_t lens[2][129];      /* [0] IPv4, [1] IPv6: prefix lengths, longest first */
	uint64_t len_mask[2][129][2]; /* the mask of lens[f][k] as two words */
	uint8_t nlens[2];
	uint32_t len_count[2][129]; /* entries per (family, prefix length) */
	uint64_t seed[2];
};

/* Parses "IP" or "IP/PREFIX" (IPv4 or IPv6; a bare IP is a host route).
 * Host bits below the prefix are cleared. TW_OK or TW_ERR_DECODE. */
TW_MUST_CHECK int tw_srv_addr_parse(struct tw_srv_addr *a, unsigned *prefix,
				    const char *text);

/* A socket address as a tw_srv_addr and port (IPv4-mapped IPv6 made IPv4).
 * TW_OK or TW_ERR_UNSUPPORTED for another family. */
TW_MUST_CHECK int tw_srv_addr_from_sockaddr(struct tw_srv_addr *a, uint16_t *port,
					    const struct sockaddr *sa);

/* "a.b.c.d" or the RFC 5952 IPv6 text. out_max >= 46. */
void tw_srv_addr_text(const struct tw_srv_addr *a, char *out, size_t out_max);

bool tw_srv_addr_eq(const struct tw_srv_addr *x, const struct tw_srv_addr *y);

/*
 * Adds a client (spec "IP[/PREFIX]", secret 1..TW_SRV_SECRET_MAX octets).
 * The same network given twice: the later one replaces the earlier.
 * Returns TW_OK, TW_ERR_DECODE (bad address, message in err),
 * TW_ERR_LENGTH (bad secret length), TW_ERR_NOMEM.
 */
TW_MUST_CHECK int tw_srv_clients_add(struct tw_srv_clients *t, const char *spec,
				     const uint8_t *secret, size_t secret_len,
				     bool from_cmdline, char *err, size_t err_len);

/* The client whose network holds addr, longest prefix first; NULL. */
const struct tw_srv_client *tw_srv_clients_find(const struct tw_srv_clients *t,
						const struct tw_srv_addr *addr);

/* Wipes every secret and frees. */
/* The entry of t for exactly c's network and prefix (not the most
 * specific one holding it), or NULL: through the index, one probe. */
const struct tw_srv_client *tw_srv_clients_get(const struct tw_srv_clients *t,
					       const struct tw_srv_client *c);

void tw_srv_clients_free(struct tw_srv_clients *t);

/* Copies the from_cmdline entries of src into dst (dst empty). */
TW_MUST_CHECK int tw_srv_clients_copy_cmdline(struct tw_srv_clients *dst,
					      const struct tw_srv_clients *src);

/* ---- configuration ------------------------------------------------------ */

enum tw_log_level {
	TW_LOG_ERROR = 0,
	TW_LOG_WARN = 1,
	TW_LOG_INFO = 2,
	TW_LOG_DEBUG = 3,
};

/* --radsec-alpn: RFC 9765 §3.1's "RADIUS-1.1" flag. */
enum { TW_SRV_RADSEC_ALPN_FORBID = 0, TW_SRV_RADSEC_ALPN_ALLOW = 1, TW_SRV_RADSEC_ALPN_REQUIRE = 2 };

/* Per-request debug conditions (--debug-client, --debug-imsi; debug.c):
 * client networks and IMSIs whose conversations are logged attribute by
 * attribute. */
enum { TW_SRV_DEBUG_MAX = 16 };
struct tw_srv_debug_set {
	unsigned n_net, n_imsi;
	struct tw_srv_addr net[TW_SRV_DEBUG_MAX];
	unsigned prefix[TW_SRV_DEBUG_MAX];
	char imsi[TW_SRV_DEBUG_MAX][16];
};

/* Adds an IMSI (imsi) or an IP[/PREFIX] to d; already there: TW_OK.
 * TW_ERR_INVAL (bad text) or TW_ERR_RANGE (full), with err. */
TW_MUST_CHECK int tw_srv_debug_add(struct tw_srv_debug_set *d, bool imsi, const char *text,
				   char *err, size_t err_len);
/* Removes one: TW_OK, TW_ERR_NOTFOUND, TW_ERR_INVAL. */
TW_MUST_CHECK int tw_srv_debug_del(struct tw_srv_debug_set *d, bool imsi, const char *text);
bool tw_srv_debug_set_eq(const struct tw_srv_debug_set *x, const struct tw_srv_debug_set *y);
/* "client=NET/P ... imsi=MASKED ..." (IMSIs masked); its length. */
size_t tw_srv_debug_text(const struct tw_srv_debug_set *d, char *out, size_t max);

/* Index of a method in counters and --methods. */
enum tw_srv_method {
	TW_SRV_M_AKA_PRIME = 0,
	TW_SRV_M_AKA = 1,
	TW_SRV_M_SIM = 2,
};

struct tw_srv_config {
	char listen[128];
	char store[TW_SRV_PATH_MAX];     /* path (the "sqlite:" prefix removed) */
	char kek_file[TW_SRV_PATH_MAX];  /* "" : TWAG_KEK or PATH.kek */
	char config_file[TW_SRV_PATH_MAX];
	char log_file[TW_SRV_PATH_MAX];  /* "" : stderr */
	char pid_file[TW_SRV_PATH_MAX];
	char metrics[128];               /* "" : no metrics endpoint */
	char network_name[256];
	char realm[TW_EAP_REALM_MAX + 1];
	unsigned threads;
	enum tw_log_level log_level;
	int log_format;                  /* enum tw_log_format */
	struct tw_srv_debug_set debug;   /* --debug-client, --debug-imsi */
	unsigned max_sessions, session_timeout, reply_session_timeout;
	unsigned reauth_limit;           /* fast re-auths per full auth */
	unsigned dup_entries, dup_expiry;
	/* under load, a worker waits this long before its next receive so
	 * that datagrams arrive in batches (0: never waits; worker.c) */
	unsigned rx_coalesce_us;
	/* the subscriber store (store.h; 0: the store's default) */
	unsigned sqn_block, resync_max, resync_window, resync_bad_max;
	unsigned reauth_ttl, identity_cache, identity_flush_ms, subscriber_cache;
	unsigned pseudonym_ttl;          /* s, volatile identities (0: the store's) */
	bool fast_reauth, pseudonyms, result_ind, sim_fullauth_id_req;
	bool udp_gso;                    /* replies of one length to one client: UDP GSO */
	bool udp_gro;                    /* coalesced receive (UDP GRO) */
	bool spread_by_id;               /* spread over workers by RADIUS Identifier */
	bool volatile_ids;               /* identity privacy state in memory only */
	enum tw_eap_id_policy id_policy;
	uint8_t methods[TW_SRV_N_METHODS]; /* enum tw_srv_method, in order */
	unsigned n_methods;
	struct tw_srv_clients clients;   /* file clients + --client */
	bool help;
	bool check_config;               /* --check-config [FILE]: check, do not run */
	bool version;                    /* --version: print it, exit 0 */
	char user[64], group[64];        /* --user/--group: drop to them ("": stay) */
	/* RADIUS accounting (acct.c): "" the --listen address with port
	 * 1813, "off" none; the session table's slots */
	char acct_listen[128];
	unsigned acct_max_sessions;
	/* the records on disk (acct_db.c): "" next to the store, "off"
	 * none; days an ended session is kept */
	char acct_db[TW_SRV_PATH_MAX];
	unsigned acct_history_days;
	unsigned acct_interim_interval;  /* s, in Access-Accepts (0: none) */
	/* RADIUS over TLS (src/server/radsec.c; RFC 6614): the listen
	 * addresses ("" off; several separated by ' '), the server's
	 * certificate chain and key (PEM), the idle timeout (s) and the
	 * connection bound; the clients (networks, with the shared secret
	 * "radsec", RFC 6614 §2.3) and for radsec_clients.v[i] the CA file
	 * its certificate must verify against and the name it must carry
	 * (radsec_peers[i]) */
	char radsec_listen[512];
	char tls_cert[TW_SRV_PATH_MAX], tls_key[TW_SRV_PATH_MAX];
	unsigned radsec_idle_timeout, radsec_max_conns;
	int radsec_alpn;                 /* TW_SRV_RADSEC_ALPN_* (RFC 9765) */
	struct tw_srv_clients radsec_clients;
	struct tw_srv_radsec_peer {
		char ca[TW_SRV_PATH_MAX];
		char name[256];           /* "" : any name the CA vouches for */
	} *radsec_peers;
	size_t radsec_peers_cap;
	/* dynamic authorization (dynauth.c, control.c): the control socket
	 * ("": none), the NAS's port, the requests' timeout and
	 * retransmissions, the store check period (0: off), the authorized
	 * sessions kept */
	char control_socket[TW_SRV_PATH_MAX];
	unsigned dynauth_port, dynauth_timeout_ms, dynauth_retries;
	unsigned dynauth_check_interval, dynauth_max_sessions;
};

/* Defaults: listen 127.0.0.1:1812, threads = online CPUs (capped),
 * sessions 65536 / 60 s, Session-Timeout 3600, methods aka-prime,aka,sim,
 * fast re-auth, pseudonyms and result indications on, id-policy trust. */
void tw_srv_config_defaults(struct tw_srv_config *c);

/*
 * Command line (argv[1..argc)) over the --config file over the defaults:
 * "--name value" or "--name=value"; flags take no value. The config file
 * holds "key = value" lines (keys are the long option names, '#' starts a
 * comment, "client = IP[/PREFIX] SECRET" may repeat, a flag is "key" or
 * "key = yes|no"). On error returns TW_ERR_INVAL with one line in err
 * naming the option (or FILE:LINE). Checks that store, network name and
 * at least one client are present (unless --help).
 */
TW_MUST_CHECK int tw_srv_config_load(struct tw_srv_config *c, int argc,
				     char **argv, char *err, size_t err_len);

/*
 * As tw_srv_config_load, but going on past each problem: say(arg, text)
 * gets every one, in one line naming FILE:LINE or the option, and the
 * count is returned (0: the configuration loads). For --check-config
 * and for a reload, which applies a configuration only when it has no
 * problem. c is left as loaded so far; free it with tw_srv_config_free.
 */
unsigned tw_srv_config_check_load(struct tw_srv_config *c, int argc, char **argv,
				  void (*say)(void *arg, const char *problem), void *arg);

/* say(arg, key) for each option whose value differs between a and b (the
 * option names of the file; clients aside). */
void tw_srv_config_changes(const struct tw_srv_config *a, const struct tw_srv_config *b,
			   void (*say)(void *arg, const char *key), void *arg);

/* Re-reads only the client lines of c->config_file into out, with c's
 * command-line clients added (SIGHUP). TW_OK or TW_ERR_INVAL (message). */
TW_MUST_CHECK int tw_srv_config_reload_clients(const struct tw_srv_config *c,
					       struct tw_srv_clients *out,
					       char *err, size_t err_len);

/* Frees what load allocated (the client table; secrets wiped). */
void tw_srv_config_free(struct tw_srv_config *c);

/* "aka-prime", "aka", "sim". */
const char *tw_srv_method_name(unsigned m);

/* Parses "HOST:PORT", "[V6]:PORT", "HOST" (default_port) into ss.
 * TW_OK or TW_ERR_DECODE. */
TW_MUST_CHECK int tw_srv_sockaddr_parse(struct sockaddr_storage *ss, socklen_t *len,
					const char *text, uint16_t default_port);

/* ---- EAP session table ------------------------------------------------- */

/* One EAP conversation (RFC 3579 §2.1: the State attribute ties the
 * Access-Requests of one conversation together). */
struct tw_srv_session {
	/* owned by the table (under its lock) */
	uint32_t idx;
	uint32_t prev, next;      /* list links (free list: next only) */
	uint32_t hnext;           /* station-index chain */
	uint8_t list;             /* internal */
	bool busy;                /* a worker is processing a packet of it */
	bool doomed;              /* replaced while busy: freed on release */
	bool established;         /* the peer answered one of our requests */
	bool debug;               /* its packets are logged (debug.c) */
	uint64_t last_ms;         /* last packet (expiry base) */
	uint64_t station_hash;
	uint8_t station[TW_SRV_STATION_MAX];
	uint8_t station_len;      /* 0: none */
	bool has_station;
	uint8_t token[TW_SRV_TOKEN_LEN];
	struct tw_srv_addr nas;   /* the client that started it (set at
				   * start, under the lock; never changed) */
	/* owned by the worker holding it busy */
	uint8_t method;           /* enum tw_srv_method */
	uint8_t tried;            /* methods tried (bit per tw_srv_method) */
	uint8_t last_req_id;      /* EAP Identifier of our last request */
	uint8_t idpkt[TW_SRV_IDPKT_MAX]; /* the EAP-Response/Identity (Nak) */
	uint16_t idpkt_len;
	union {
		struct tw_aka_server_ctx aka;
		struct tw_eap_sim_server sim;
	} eng;
};

struct tw_srv_sessions_stats {
	uint64_t active, max, evicted, expired, replaced, refused;
};

struct tw_srv_sessions {
	pthread_mutex_t lock;
	struct tw_srv_session *slots;
	uint32_t cap;
	uint32_t used;               /* slots handed out at least once */
	uint32_t free_head;
	uint32_t head[2], tail[2];   /* half-open, established (each in
				      * last-packet order) */
	uint32_t *buckets;           /* station index */
	uint32_t nbuckets;
	uint32_t mask;               /* obfuscates the slot index in State */
	uint64_t hash_key[2];
	uint64_t timeout_ms;
	struct tw_srv_sessions_stats st;
};

/* Allocates cap sessions (all memory of the table, once). seed: 16 random
 * octets (State index mask, station hash key). TW_OK, TW_ERR_NOMEM,
 * TW_ERR_INVAL. */
TW_MUST_CHECK int tw_srv_sessions_init(struct tw_srv_sessions *t, uint32_t cap,
				       unsigned timeout_s, const uint8_t seed[static 16]);

/* Wipes every engine context and frees. */
void tw_srv_sessions_free(struct tw_srv_sessions *t);

/*
 * Starts a conversation of client nas (the source address of the request:
 * only that client may continue it, see _acquire) for station
 * (Calling-Station-Id; NULL/0: none).
 * One live conversation per station and client: an earlier one of the
 * same station started through the same client (nas) is ended (counted
 * as replaced; if a worker holds it, it is freed when released); another
 * client's conversations are never touched. When the
 * table is full: expired sessions are freed first, then the least
 * recently used HALF-OPEN one (the peer has not answered any request of
 * ours: an identity round or a challenge is out); ESTABLISHED
 * conversations (the peer answered) are never evicted before they
 * expire. See sessions.c for why half-open sessions with a challenge out
 * are not protected.
 * token: TW_SRV_TOKEN_LEN fresh random octets (the State's random part).
 * Returns the session, held busy by the caller, or NULL (full: counted).
 */
struct tw_srv_session *tw_srv_sessions_start(struct tw_srv_sessions *t,
					     const struct tw_srv_addr *nas,
					     const uint8_t *station, size_t station_len,
					     const uint8_t token[static TW_SRV_TOKEN_LEN],
					     uint64_t now_ms);

/*
 * Looks a conversation up by the State we sent, presented by client nas,
 * and holds it busy. A State is bound to the client it was sent to (RFC
 * 3579 §2.1: the NAS echoes it): presented by any other client it is
 * TW_ERR_AUTH and changes nothing (not marked busy, expiry and eviction
 * order untouched), so another client can neither continue, keep alive
 * nor block a conversation it learnt the State of.
 * Returns TW_OK, TW_ERR_NOTFOUND (unknown, ended or expired: an expired
 * one is freed and counted), TW_ERR_AUTH (another client's), TW_ERR_STATE
 * (another worker holds it).
 */
TW_MUST_CHECK int tw_srv_sessions_acquire(struct tw_srv_sessions *t,
					  const struct tw_srv_addr *nas,
					  const uint8_t *state, size_t state_len,
					  uint64_t now_ms, struct tw_srv_session **out);

/* The State attribute of a session: index ^ mask (4 octets) | token. */
void tw_srv_session_state(const struct tw_srv_sessions *t,
			  const struct tw_srv_session *s,
			  uint8_t out[static TW_SRV_STATE_LEN]);

/* Releases a busy session: ended (its engine is wiped, the slot freed) or
 * kept for the next packet (expiry counted from now), on the list its
 * established flag (set by the caller) names. */
void tw_srv_sessions_release(struct tw_srv_sessions *t, struct tw_srv_session *s,
			     bool ended, uint64_t now_ms);

/* Frees idle sessions whose last packet is older than the timeout, at most
 * max of them (each one's engine context is wiped under the table lock:
 * the bound keeps every lock hold short, so a sweep after a flood never
 * stalls the workers; call again while it returns max). Returns how many. */
unsigned tw_srv_sessions_expire(struct tw_srv_sessions *t, uint64_t now_ms, unsigned max);

void tw_srv_sessions_stats(struct tw_srv_sessions *t,
			   struct tw_srv_sessions_stats *out);

/* ---- RADIUS duplicate cache (RFC 5080 §2.2.2) --------------------------- */

/* A request is identified by the client's source address and port, the
 * Identifier and the Request Authenticator. One cache per worker (the
 * kernel's SO_REUSEPORT hash sends one source address/port to one
 * socket), so no locks. Fixed memory: a ring of n compact entries and a
 * ring of n * TW_SRV_DUP_AVG_REPLY octets for the replies, each reused
 * oldest first (a reply whose octets were overwritten is a miss), and an
 * index of 2n or more slots, each holding an entry's number and part of
 * its key's hash, so that a look-up reads an entry only when that part
 * matches (open addressing, linear probing). */
struct tw_srv_dup_entry {     /* 64 octets: one cache line */
	uint8_t state;            /* internal: free, pending, done */
	uint8_t id;
	uint16_t port;
	uint64_t reply_off;       /* absolute offset in the reply ring */
	uint64_t expires_ms;
	struct tw_srv_addr addr;
	uint8_t auth[16];
	uint16_t reply_len;
};

struct tw_srv_dup {
	struct tw_srv_dup_entry *e;
	uint32_t n, next;         /* ring of entries, oldest reused first */
	uint64_t *slots;          /* index: hash bits | entry number + 1; 0 empty */
	uint32_t nslots;          /* a power of two, at least 2n */
	uint32_t *homes;          /* entry i's first index slot + 1; 0 when it
				   * is not indexed (free): the prefetch of
				   * the entry a look-up will reuse reads 4
				   * octets, not the entry */
	uint8_t *ring;            /* reply octets */
	size_t ring_len;
	uint64_t wpos;            /* absolute write position in ring */
	uint64_t key[2];
	uint64_t expiry_ms;
};

enum tw_srv_dup_result {
	TW_SRV_DUP_NEW = 0,     /* not seen: *e is a pending entry for it, or
				 * NULL when every entry is pending (not cached;
				 * tw_srv_dup_done/forget accept NULL) */
	TW_SRV_DUP_REPLAY,      /* answered: resend tw_srv_dup_reply(), byte for byte */
	TW_SRV_DUP_PENDING,     /* being processed: drop the retransmission */
};

/* n entries (16..2^24), expiry_s seconds, seed 16 random octets. */
TW_MUST_CHECK int tw_srv_dup_init(struct tw_srv_dup *d, uint32_t n, unsigned expiry_s,
				  const uint8_t seed[static 16]);
void tw_srv_dup_free(struct tw_srv_dup *d);

/* The keyed hash of a request's key (SipHash-2-4 under the cache's
 * random key), which the calls below take with it: made once per
 * request. */
uint64_t tw_srv_dup_hash(const struct tw_srv_dup *d, const struct tw_srv_addr *addr,
			 uint16_t port, uint8_t id, const uint8_t auth[static 16]);

/* Looks up (and on a miss inserts as pending) the request; h is
 * tw_srv_dup_hash() of the same key. */
enum tw_srv_dup_result tw_srv_dup_lookup(struct tw_srv_dup *d, uint64_t h,
					 const struct tw_srv_addr *addr, uint16_t port,
					 uint8_t id, const uint8_t auth[static 16],
					 uint64_t now_ms, struct tw_srv_dup_entry **e);

/* A hint, no effect on results: the k-th lookup from now will be of the
 * request whose hash is h; the cache lines it will touch (its index
 * slots, the entry it will reuse and that entry's slots) are prefetched,
 * so that a receive batch's lookups overlap their cache misses. */
void tw_srv_dup_prefetch(const struct tw_srv_dup *d, uint64_t h, uint32_t k);

/* The cached reply of an entry found with TW_SRV_DUP_REPLAY
 * (e->reply_len octets). */
const uint8_t *tw_srv_dup_reply(const struct tw_srv_dup *d, const struct tw_srv_dup_entry *e);

/* The reply of a pending entry (longer than TW_RADIUS_MAX_LEN: forgotten). */
void tw_srv_dup_done(struct tw_srv_dup *d, struct tw_srv_dup_entry *e,
		     const uint8_t *reply, size_t len, uint64_t now_ms);

/* A pending request that got no reply (silently discarded): forgotten,
 * so a retransmission is processed again. */
void tw_srv_dup_forget(struct tw_srv_dup *d, struct tw_srv_dup_entry *e);

/* ---- counters and metrics text ----------------------------------------- */

/* Counters of one worker (single writer, read by the metrics thread). */
enum tw_srv_ctr {
	TW_C_REQUESTS = 0,       /* Access-Requests from known clients */
	TW_C_ACCEPTS,
	TW_C_REJECTS,
	TW_C_CHALLENGES,
	TW_C_MALFORMED,
	TW_C_BAD_AUTH,           /* missing/invalid Message-Authenticator */
	TW_C_DROPPED,            /* silently discarded for another reason */
	TW_C_DUPLICATES,
	TW_C_UNKNOWN_CLIENTS,
	TW_C_STATUS_SERVER,
	TW_C_UNKNOWN_TYPES,
	TW_C_ATTACH_FULL,        /* + method: 3 counters */
	TW_C_ATTACH_REAUTH = TW_C_ATTACH_FULL + TW_SRV_N_METHODS,
	TW_C_AUTH_FAIL = TW_C_ATTACH_REAUTH + TW_SRV_N_METHODS,
	TW_C_RESYNCS = TW_C_AUTH_FAIL + TW_SRV_N_METHODS,
	TW_C_RESYNCS_REFUSED,
	TW_C_STORE_VECTORS,
	TW_C_STORE_ERRORS,
	TW_C_STORE_LAT_NS,
	TW_C_STORE_LAT_COUNT,
	TW_C_NAKS,
	TW_C_AKA_BATCHED,        /* AKA' challenges built with others of their batch */
	TW_C_RX_WAITS,           /* receive coalescing waits (--rx-coalesce-us) */
	TW_C_RX_BATCHES,         /* receive batches (recvmmsg calls that returned datagrams) */
	TW_C_TX_GSO_SENDS,       /* UDP GSO sends (each carrying two or more replies) */
	TW_C_TX_GSO_REPLIES,     /* replies in them */
	TW_C_TX_GSO_FALLBACKS,   /* GSO sends refused, their replies sent one by one */
	TW_C_UDP_GSO_ON,         /* a gauge: 1 while the worker sends with UDP GSO */
	TW_C_RX_GRO_DGRAMS,      /* datagrams that came coalesced by UDP GRO */
	TW_C_COUNT,
};

struct tw_srv_counters {
	_Atomic uint64_t v[TW_C_COUNT];
} __attribute__((aligned(64)));

/* One writer per counter set: a relaxed load and store (a plain add on
 * x86, no lock prefix), read atomically by the metrics thread. */
static inline void tw_srv_count(struct tw_srv_counters *c, enum tw_srv_ctr i,
				uint64_t n)
{
	atomic_store_explicit(&c->v[i],
			      atomic_load_explicit(&c->v[i], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Everything /metrics shows. */
struct tw_srv_metrics {
	uint64_t v[TW_C_COUNT];  /* summed over workers */
	struct tw_srv_sessions_stats sessions;
	uint64_t store_reservations, store_loaded;
	uint64_t store_reservations_sync, store_reservations_ahead;
	uint64_t store_reservations_batched, store_reservation_batch_commits;
	uint64_t store_evicted, store_recycled;
	uint64_t store_ident_written, store_ident_full, store_ident_row_writes;
	/* the identity write-behind's rounds and the WAL checkpoints */
	uint64_t store_ident_rounds, store_ident_yields;
	uint64_t store_ident_write_ns, store_ident_write_max_ns, store_checkpoint_ns;
	unsigned threads;
	/* Access-Requests of each worker (the first n_workers of them) */
	unsigned n_workers;
	uint64_t worker_requests[TW_SRV_MAX_THREADS];
};

/* Sums worker counters into m->v; m->worker_requests[w] and n_workers
 * say how the requests were spread. */
void tw_srv_metrics_sum(struct tw_srv_metrics *m, struct tw_srv_counters *const *c,
			unsigned n);

/* Prometheus text format 0.0.4 (# HELP / # TYPE, one sample per line).
 * TW_OK with *len, or TW_ERR_OVERFLOW. */
TW_MUST_CHECK int tw_srv_metrics_format(const struct tw_srv_metrics *m, char *buf,
					size_t max, size_t *len);

/* ---- logs ---------------------------------------------------------------- */

/*
 * One line per event: "ts=<RFC 3339 UTC, ms> level=<l> event=<e> k=v...".
 * Worker threads write into their own tw_log_buf and flush it once per
 * batch (whole lines, at most PIPE_BUF per write so lines from threads
 * never interleave); other threads pass NULL and write at once.
 */
struct tw_log_buf {
	size_t len;
	char buf[16384];
};

/* Opens path (O_APPEND, created 0640) as the log, or stderr when NULL/"".
 * TW_OK or TW_ERR_IO. */
TW_MUST_CHECK int tw_log_open(const char *path);
/* Reopens the log file (SIGHUP, after rotation); atomic for writers. */
TW_MUST_CHECK int tw_log_reopen(void);
void tw_log_close(void);
void tw_log_set_level(enum tw_log_level l);
/* --log-format: the key=value text (default), or one JSON object per
 * line ("ts", "level", "event" and the fields, in that order; a value
 * that is a plain integer or decimal is a JSON number, any other a
 * string). */
enum tw_log_format { TW_LOG_TEXT = 0, TW_LOG_JSON = 1 };
void tw_log_set_format(enum tw_log_format f);
enum tw_log_format tw_log_get_format(void);
/* The JSON object of one text line (len octets, its newline optional)
 * into out[0..max), newline included; returns its length. Fields that
 * would not fit are left out whole. */
size_t tw_log_text_to_json(char *out, size_t max, const char *text, size_t len);
/* "error", "warn", "info", "debug". */
const char *tw_log_level_name(enum tw_log_level l);
bool tw_log_enabled(enum tw_log_level l);
/* fmt continues the line with " k=v" fields (no trailing newline). */
void tw_logf(struct tw_log_buf *b, enum tw_log_level l, const char *event,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same whatever --log-level says: the daemon's life-cycle lines
 * (ready, reload, stopping, stop, start-failed), which tests and
 * supervisors wait for. */
void tw_log_always(struct tw_log_buf *b, enum tw_log_level l, const char *event,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void tw_log_flush(struct tw_log_buf *b);
/* Copies text into out as a log value: quoted when it holds a space, '"'
 * or '=', control characters and '"' replaced by '?'. */
void tw_log_quote(char *out, size_t out_max, const char *text);

/* ---- the daemon --------------------------------------------------------- */

/* twagd's main(): returns the exit status (0 after SIGTERM, 1 on a
 * start-up failure, 2 on bad usage). */
int tw_srv_main(int argc, char **argv);

#endif
