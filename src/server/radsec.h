/*
 * twag — twagd internal: RADIUS over TLS (RFC 6614, May 2012; its radext
 * revision draft-ietf-radext-radiusdtls-bis, "RFC 6614bis", keeps the
 * framing and the "radsec" secret): the stream framer (radsec_frame.c,
 * pure, fuzzed)
 * and the RadSec thread (radsec.c) as server.c opens, starts, reloads and
 * stops it.
 */
#ifndef TWAG_RADSEC_H
#define TWAG_RADSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"
#include "twag/radius.h"

/* ---- the stream framer ----------------------------------------------------- */

/*
 * RFC 6614 §2.5 (via RFC 6613 §2.6.4 and RFC 2865 §3): a RADIUS/TLS
 * stream is RADIUS packets back to back, each delimited by its own Length
 * field (octets 2-3), with nothing between them. A Length below 20 or
 * above 4096 cannot be skipped (the next packet's start is unknown): the
 * connection is closed. The buffer holds one packet at most, so a
 * connection costs TW_RADIUS_MAX_LEN octets however it sends.
 */
struct tw_radsec_rx {
	size_t off;      /* the first octet not yet taken */
	size_t have;     /* octets in buf */
	size_t taken;    /* length of the packet last returned (dropped at the next call) */
	bool bad;        /* a Length field was out of range */
	uint8_t buf[TW_RADIUS_MAX_LEN];
};

void tw_radsec_rx_init(struct tw_radsec_rx *r);

/* Where the next octets from the stream go: *room octets (at least one
 * whenever _next returned no whole packet). The packet last returned by
 * _next is given up. */
uint8_t *tw_radsec_rx_space(struct tw_radsec_rx *r, size_t *room);

/* n octets were written at tw_radsec_rx_space (n <= room). */
void tw_radsec_rx_got(struct tw_radsec_rx *r, size_t n);

/*
 * The next whole packet of the stream: TW_OK with *pkt and *len (a view
 * into r, valid until the next call on r), or TW_OK with *len 0 when the
 * packet is not whole yet (read more), or TW_ERR_DECODE when a Length
 * field is below TW_RADIUS_MIN_LEN or above TW_RADIUS_MAX_LEN (close the
 * connection; r stays in error).
 */
TW_MUST_CHECK int tw_radsec_rx_next(struct tw_radsec_rx *r, const uint8_t **pkt, size_t *len);

/* Octets received but not yet returned as a packet (a partial one). */
size_t tw_radsec_rx_pending(const struct tw_radsec_rx *r);

/* ---- the RadSec server ----------------------------------------------------- */

struct tw_srv;
struct tw_srv_config;

enum {
	TW_SRV_RADSEC_PORT = 2083,           /* RFC 6614 §2.1 */
	TW_SRV_RADSEC_MAX_LISTEN = 4,        /* --radsec-listen given this often */
	TW_SRV_RADSEC_DEFAULT_IDLE = 60,     /* s, --radsec-idle-timeout */
	TW_SRV_RADSEC_DEFAULT_MAX_CONNS = 256,
	TW_SRV_RADSEC_MAX_CONNS = 65536,
	TW_SRV_RADSEC_HANDSHAKE_S = 10,      /* at most, and never above the idle timeout */
};

/* The radsec-* and tls-* options of config.c. */
int tw_srv_radsec_config(struct tw_srv_config *c, const char *name, const char *v,
			 bool cmdline, const char *where, char *err, size_t err_len);

/* The checks of a loaded configuration that config.c makes at its end
 * (listen without certificate, key or client). say() each; returns how
 * many. */
unsigned tw_srv_radsec_config_check(const struct tw_srv_config *c,
				    void (*say)(void *arg, const char *problem), void *arg);

/* Frees the radsec clients of c. */
void tw_srv_radsec_config_free(struct tw_srv_config *c);

/*
 * --check-config: the server certificate and key read, the key matching
 * the certificate, every client's CA file loaded, as start-up would.
 * Each problem printed to stderr; returns how many.
 */
unsigned tw_srv_radsec_check_files(const struct tw_srv_config *c);

/* Binds the listeners and reads the certificates (before the privilege
 * drop). Off when no --radsec-listen. TW_OK or an error with err. */
int tw_srv_radsec_open(struct tw_srv *srv, char *err, size_t err_len);

/* Starts the thread (twagd-radsec). TW_OK or TW_ERR_NOMEM. */
int tw_srv_radsec_start(struct tw_srv *srv);

/* After srv->stop: joins the thread, closes every connection, frees. */
void tw_srv_radsec_stop(struct tw_srv *srv);

/*
 * SIGHUP: the certificate, key, clients and their CA files of nc read
 * again; on success the thread takes them for new connections (the open
 * ones keep theirs), else the running ones stay and the reason is in err.
 * TW_OK (also when RadSec is off) or an error.
 */
int tw_srv_radsec_reload(struct tw_srv *srv, const struct tw_srv_config *nc, char *err,
			 size_t err_len);

/* The counters of the RadSec thread's packet path (tw_srv_handle), for
 * the sums of /metrics; NULL when off. */
struct tw_srv_counters *tw_srv_radsec_counters(struct tw_srv *srv);

/* Appends the RadSec metrics (Prometheus text); returns the octets. */
size_t tw_srv_radsec_metrics(struct tw_srv *srv, char *buf, size_t max);

#endif
