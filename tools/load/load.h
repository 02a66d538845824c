/*
 * twag-load — plays many phones (the peer side of EAP-AKA' RFC 9048,
 * EAP-AKA RFC 4187, EAP-SIM RFC 4186) over real RADIUS (RFC 2865, RFC 3579,
 * RFC 2548) against a server, and measures it.
 *
 * Shape (HAProxy style): T threads, each owning a share of the phones and
 * of the concurrency. A thread runs C_t attach slots over a few connected
 * UDP sockets (SLOTS_PER_SOCK slots each, so more than 256 RADIUS
 * Identifiers can be in flight) with recvmmsg/sendmmsg batches; every slot
 * is one in-flight attach: a peer engine context, the phone's simulated
 * USIM, the RADIUS Identifier and Request Authenticator of the outstanding
 * Access-Request (kept for retransmission: same Identifier, same
 * Authenticator, RFC 5080 §2.2.1) and the State the server gave.
 *
 * A phone is used by at most one slot at a time: the server's vectors for
 * one subscriber then reach its USIM in the order they were issued, so a
 * USIM that sees a stale SQN (an AKA-Synchronization-Failure) means the
 * server issued an SQN that was not fresh — which is what the kill -9 test
 * looks for.
 *
 * Nothing is allocated on the packet path: slots, buffers and phones are
 * allocated before the clock starts.
 */
#ifndef TWAG_LOAD_H
#define TWAG_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "twag/eap_aka.h"
#include "twag/eap_sim.h"
#include "twag/radius.h"
#include "twag/usim.h"

enum {
	LOAD_EXIT_FAIL = 1,   /* the run had failures */
	LOAD_EXIT_USAGE = 2,  /* bad command line (one line on stderr) */
	SLOTS_PER_SOCK = 64,  /* attach slots sharing one UDP socket */
	IDS_PER_SLOT = 4,     /* 256 / SLOTS_PER_SOCK: Identifiers a slot cycles */
	LOAD_BATCH = 64,      /* datagrams per recvmmsg/sendmmsg */
	LOAD_MAX_TRIES = 4,   /* first send + 3 retransmissions */
	LOAD_SECRET_MAX = TW_RADIUS_SECRET_MAX,
	LOAD_REALM_MAX = 200,
	LOAD_MAX_THREADS = 64,
	LOAD_MAX_CONCURRENCY = 1 << 16,
};

/* Retransmission interval (RFC 5080 §2.2.1 leaves it to the client). */
#define LOAD_RETRANSMIT_NS (1000ull * 1000 * 1000)

enum load_method {
	LOAD_AKA_PRIME = 1,
	LOAD_AKA,
	LOAD_SIM,
};

/* Why an attach failed (one cause per attach, first one wins). */
enum load_cause {
	CAUSE_REJECT = 0,   /* Access-Reject without a sync failure before */
	CAUSE_TIMEOUT,      /* no answer after LOAD_MAX_TRIES sends */
	CAUSE_BAD_AUTH,     /* Response Authenticator / Message-Authenticator */
	CAUSE_MPPE,         /* MS-MPPE keys missing or != the peer's MSK */
	CAUSE_SYNC,         /* the USIM saw a stale SQN (sent AUTS) */
	CAUSE_PEER,         /* the peer refused: MAC-A wrong, Client-Error */
	CAUSE_OTHER,        /* anything else: no State, no EAP, bad EAP ... */
	CAUSE_COUNT
};

extern const char *const load_cause_names[CAUSE_COUNT];

/* One phone: its (U)SIM and its RADIUS Calling-Station-Id. */
enum { LOAD_STATION_LEN = 17 };
struct load_phone {
	struct tw_usim usim;
	uint32_t index;         /* position in the subscriber file */
	/* "02-00-XX-XX-XX-XX" (a locally administered MAC from the low 32
	 * bits of the IMSI's value): the server keeps one conversation per
	 * station (RFC 3580 §3.20) */
	char station[LOAD_STATION_LEN + 1];
};

/* Latency histogram (ns), log-linear: 2^HIST_SUB buckets per octave, so a
 * percentile is within 1/2^HIST_SUB of the true value. */
enum { HIST_SUB = 5, HIST_OCTAVES = 44, HIST_N = (HIST_OCTAVES + 1) << HIST_SUB };
struct load_hist {
	uint64_t n[HIST_N];
	uint64_t count, max, sum;
};
void load_hist_add(struct load_hist *h, uint64_t v);
void load_hist_merge(struct load_hist *into, const struct load_hist *h);
/* Nearest-rank percentile (p in 1/10000): the bucket's upper bound, capped
 * by the exact maximum. 0 when empty. */
uint64_t load_hist_percentile(const struct load_hist *h, unsigned p_10000);

/* Per-thread counters, summed at the end. */
struct load_counters {
	uint64_t ok;
	uint64_t fail[CAUSE_COUNT];
	uint64_t sync_events;   /* AKA-Synchronization-Failures sent */
	uint64_t sent, retransmits, received;
	uint64_t stray;         /* replies for no outstanding request */
	uint64_t malformed;     /* replies that did not decode */
	uint64_t unfinished;    /* attaches abandoned at the end of the drain */
	struct load_hist latency;
};

/* Everything a run needs, filled by main. */
struct load_cfg {
	enum load_method method;
	struct sockaddr_storage server;
	socklen_t server_len;
	struct tw_radius_secret key;     /* --secret, prepared once (its
					  * HMAC-MD5 key blocks, RFC 2104 §4) */
	char realm[LOAD_REALM_MAX + 1];
	size_t realm_len;
	const uint8_t *network_name;     /* NULL: accept any AT_KDF_INPUT */
	size_t network_name_len;
	unsigned threads;
	unsigned concurrency;
	double time_s;                   /* > 0: run this long */
	uint64_t attaches;               /* > 0: run this many */
	uint64_t drain_ns;               /* wait for in-flight after the end */
	bool udp_gso;                    /* requests of one length: UDP GSO */
	struct load_phone *phones;
	size_t n_phones;
	/* shared state of the run */
	_Atomic uint64_t started;        /* attaches claimed (--attaches) */
	_Atomic bool stop;               /* no new attaches */
	uint64_t t_start, t_end;         /* CLOCK_MONOTONIC ns */
};

/* ---- subscribers (subs.c) --------------------------------------------- */

/* Reads the `twag subscriber import` CSV (header imsi,algo,ki,opc,op,amf,
 * sqn) into phones; each USIM starts with the CSV's SQN accepted (it is the
 * SQN last used). Returns 0, or -1 with a message on stderr. */
int load_read_csv(const char *path, struct load_phone **phones, size_t *n);

/* Writes n random subscribers (alg "milenage" or "comp128v1".."v3") to
 * path in that CSV form; IMSIs imsi_base, imsi_base + 1, ... Returns 0/-1. */
int load_gen_csv(const char *path, size_t n, const char *alg, uint64_t imsi_base);

/* USIM SQN arrays: "IMSI IND_BITS IND:SEQHEX ..." per line. Loading a
 * missing file is not an error (a first run). Returns 0/-1. */
int load_usim_state_read(const char *path, struct load_phone *phones, size_t n);
int load_usim_state_write(const char *path, const struct load_phone *phones, size_t n);

/* ---- the run (worker.c) ------------------------------------------------ */

struct load_worker {
	struct load_cfg *cfg;
	unsigned index;
	struct load_phone **phones;      /* this thread's share */
	size_t n_phones;
	unsigned concurrency;
	struct load_counters c;
	int err;                         /* setup error (message printed) */
};

/* The thread body: runs until cfg says stop and in-flight attaches are
 * done (or the drain time is over). */
void *load_worker_run(void *arg);

/* ---- helpers (util.c) -------------------------------------------------- */

uint64_t load_now_ns(void);
/* Fills out with random octets (OpenSSL's DRBG, buffered per thread). */
void load_random(void *out, size_t len);

#endif
