/*
 * twag-tunnel — a userspace IPsec tunnel endpoint: RFC 4303 ESP (or RFC
 * 4302 AH) tunnel mode between a Linux TUN device and a peer, carried in
 * UDP (RFC 3948, port 4500) or directly in IP (protocol 50 / 51), with
 * manually keyed SAs (from the command line, a file, or an EAP MSK).
 *
 * Data path, per worker thread (one TUN queue and one UDP socket each):
 *   TUN -> peer: one read() returns up to 64 KiB of TCP (the device offers
 *     TSO and checksum offload through the virtio-net header), which is cut
 *     into MTU-sized segments with their checksums completed, encapsulated
 *     as one batch, and sent as one UDP GSO buffer (or one sendmmsg).
 *   peer -> TUN: recvmmsg with UDP GRO, the ESP packets verified and
 *     decrypted as one batch, consecutive segments of one TCP stream joined
 *     back into one GSO packet written to the TUN device with one writev.
 * No allocation per packet: every buffer is the worker's, made at start.
 */
#ifndef TWAG_TUNNEL_H
#define TWAG_TUNNEL_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "twag/esp.h"

enum {
	TUN_MAX_THREADS = 16,
	TUN_BATCH = 128,         /* packets per batch: 64 KiB cut at the smallest MSS (536) */
	TUN_SLOT = 2048,         /* octets per packet slot */
	TUN_SLOT_HEAD = 128,     /* room before a payload for the headers */
	TUN_READ_MAX = 65536 + 256,
	TUN_RECV_MSGS = 16,      /* UDP datagrams (or GRO buffers) per recvmmsg */
	TUN_ESP_PORT = 4500,     /* RFC 3948 */
	TUN_VNET_HDR = 10,       /* struct virtio_net_hdr */
};

enum tun_encap { TUN_ENCAP_UDP = 0, TUN_ENCAP_IP = 1 };

/* One direction's security association: ESP or AH, and the lock that makes
 * its sequence counter and replay window one per SA across the workers. */
struct tun_sa {
	bool ah;
	uint32_t spi;
	char xform[40];
	pthread_mutex_t lock;
	struct tw_esp_sa esp;
	struct tw_ah_sa ahsa;
	bool exhausted_logged;
};

/* Counters of one worker; read (relaxed) by the metrics thread. */
struct tun_counters {
	uint64_t tun_rx_pkts, tun_rx_bytes;   /* read from the TUN device (segments) */
	uint64_t tun_tx_pkts, tun_tx_bytes;   /* written to it (inner packets) */
	uint64_t tun_tx_writes;               /* writes (joined GSO packets count once) */
	uint64_t net_tx_pkts, net_tx_bytes;   /* ESP/AH packets sent */
	uint64_t net_rx_pkts, net_rx_bytes;   /* ESP/AH packets received */
	uint64_t drop_too_big;                /* inner packet over the tunnel MTU */
	uint64_t drop_bad_inner;              /* not IPv4/IPv6, bad length, bad GSO header */
	uint64_t drop_seq_exhausted;          /* out SA used up (rekey) */
	uint64_t drop_non_esp;                /* RFC 3948 keepalive / IKE marker / runt */
	uint64_t drop_bad_outer;              /* raw IP: not from the peer, bad header */
	uint64_t drop_fragmented;             /* arrived in IP fragments (reassembled by the kernel) */
	uint64_t drop_oversized;              /* longer than any packet of the SA can be */
	uint64_t drop_dummy;                  /* RFC 4303 §2.6 dummy packets (next header 59) */
	uint64_t send_errors, tun_write_errors;
};

struct tun_cfg {
	char tun_name[16];
	uint32_t addr4, prefix;   /* host order; 0 = leave the device unaddressed */
	unsigned mtu;             /* 0 = computed from the SA and the encapsulation */
	int family;               /* AF_INET or AF_INET6 (outer) */
	struct sockaddr_storage local, remote;
	socklen_t addr_len;
	enum tun_encap encap;
	unsigned threads;
	char metrics[80];         /* HOST:PORT or "" */
	bool allow_null;
	bool no_gro, no_gso;      /* for measurements: turn the offloads off */
};

struct tun_ctx;

/* Joins decapsulated inner packets into GSO writes to the TUN device. */
struct tun_join {
	struct iovec iov[TUN_BATCH + 1];
	unsigned niov;
	uint8_t vh[TUN_VNET_HDR];
	uint8_t *first;           /* the first packet (headers edited in place) */
	size_t hdr_len, seg_len, total;
	uint32_t next_seq;
	unsigned count;
	bool v6, open;
};

struct tun_worker {
	struct tun_ctx *ctx;
	unsigned id;
	pthread_t thr;
	int tun_fd, net_fd, net_rx_fd; /* net_rx_fd: raw receive socket (IP encap) */
	struct tun_counters c;
	bool gso_on;
	/* TUN -> peer */
	uint8_t *rbuf;            /* TUN_READ_MAX */
	uint8_t *slots;           /* TUN_BATCH * TUN_SLOT */
	struct tw_esp_pkt pk[TUN_BATCH];
	size_t seg_len[TUN_BATCH];
	/* peer -> TUN */
	uint8_t *rxbufs;          /* TUN_RECV_MSGS * TUN_READ_MAX */
	struct tw_esp_pkt rpk[TUN_BATCH];
	struct tun_join join;
};

struct tun_ctx {
	struct tun_cfg cfg;
	struct tun_sa out, in;
	unsigned mtu;             /* the TUN device's MTU */
	size_t wire_max;          /* the longest packet the peer's SA can send us */
	int raw_proto;            /* IP encapsulation: 50 (ESP) or 51 (AH) */
	struct tun_worker w[TUN_MAX_THREADS];
	volatile int stop;
	int metrics_fd;
	pthread_t metrics_thr;
};

/* ---- sa.c ---- */
/* Parses "spi=HEX,xform=NAME,key=HEX[,esn][,window=N]" into sa (keys
 * prepared, then wiped from the parse buffers). err: a message. */
int tun_sa_parse(struct tun_sa *sa, const char *spec, bool allow_null,
		 char *err, size_t err_len);
/* Keys for both directions from an EAP MSK (RFC 7296 §2.13 prf+ with
 * HMAC-SHA-256, see sa.c). */
int tun_sa_from_msk(struct tun_sa *out, struct tun_sa *in, const uint8_t *msk,
		    size_t msk_len, const char *xform, uint32_t spi_out,
		    uint32_t spi_in, bool initiator, bool esn, bool allow_null,
		    char *err, size_t err_len);
/* prf+ (RFC 7296 §2.13) with HMAC-SHA-256 over seed; out_len ≤ 255 * 32. */
int tun_prf_plus(uint8_t *out, size_t out_len, const uint8_t *key,
		 size_t key_len, const uint8_t *seed, size_t seed_len);
void tun_sa_wipe(struct tun_sa *sa);
/* Octets an inner packet of len octets becomes on the wire (outer IP and UDP
 * headers included). */
size_t tun_sa_wire_len(const struct tun_sa *sa, size_t len, int family,
		       enum tun_encap encap);

/* ---- seg.c: TCP segmentation and joining, checksums ---- */
/* RFC 1071 sum (not folded, not complemented) of len octets. */
uint64_t tun_csum_add(uint64_t sum, const uint8_t *p, size_t len);
uint16_t tun_csum_fold(uint64_t sum);
/*
 * Cuts the packet read from the TUN device (virtio-net header vh, then the
 * IP packet pkt[0..len)) into segments of at most mss payload octets; each
 * segment is written at slot i + TUN_SLOT_HEAD with its IP/TCP headers and
 * checksums complete; lens[i] receives its length. A packet without GSO has
 * its checksum completed if the header asks for it (one segment). Returns
 * the number of segments, or -1 for a malformed header/packet.
 */
int tun_segment(const uint8_t *vh, const uint8_t *pkt, size_t len,
		uint8_t *slots, size_t max_segs, size_t *lens);

/* Adds pkt[0..len) (a whole inner IP packet); returns true if it was taken
 * (into the pending packet, or as the first of a new one when count is 0),
 * false if the caller must write the pending one first (tun_join_finish,
 * writev, count = 0) and add it again. */
bool tun_join_add(struct tun_join *j, uint8_t *pkt, size_t len);
/* Completes the headers of the pending packet; iov[0..niov) is the write. */
void tun_join_finish(struct tun_join *j);

/* ---- metrics.c ---- */
int tun_metrics_start(struct tun_ctx *ctx);
void tun_metrics_stop(struct tun_ctx *ctx);

/* ---- dp.c ---- */
void *tun_worker_main(void *arg);

#endif
