/*
 * twag — twagd internal: the accounting thread (acct.c) as server.c
 * starts, stops and serves it.
 */
#ifndef TWAG_ACCT_SRV_H
#define TWAG_ACCT_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tw_srv;
struct tw_acct_session;
struct tw_srv_config;
struct opt;

/*
 * Opens the accounting socket and its tables (srv->acct) from
 * cfg.acct_listen: "" is the --listen address with port 1813 (port 0
 * when --listen has port 0), "off" none. When the default address cannot
 * be bound, accounting is off with a warning (a twagd beside another
 * accounting server keeps starting as before); an --acct-listen given
 * that cannot be bound is a start-up error. TW_OK or TW_ERR_* with err.
 */
int tw_srv_acct_open(struct tw_srv *srv, char *err, size_t err_len);

/* After the privilege drop (the file is the running user's): opens the
 * records on disk (--acct-db; acct_db.c) and puts the live sessions they
 * hold back into the table. TW_OK (also with accounting or --acct-db
 * off), else TW_ERR_* with err. */
int tw_srv_acct_db_open(struct tw_srv *srv, char *err, size_t err_len);

/* Starts the thread (twagd-acct). TW_OK, or TW_ERR_NOMEM. */
int tw_srv_acct_start(struct tw_srv *srv);

/* After srv->stop: joins the thread, frees everything. */
void tw_srv_acct_stop(struct tw_srv *srv);

/* The accounting thread has moved on to client table epoch (or there is
 * none): a SIGHUP reload may free the previous table. */
bool tw_srv_acct_moved_on(struct tw_srv *srv, uint64_t epoch);

/* Appends the accounting metrics (Prometheus text) at buf; returns the
 * octets written (0 when off or out of room). */
size_t tw_srv_acct_metrics(struct tw_srv *srv, char *buf, size_t max);

/* GET /sessions and /sessions/ID on the metrics listener: answers req
 * on fd by deadline (ms, CLOCK_MONOTONIC) and returns true, or false
 * when req is for another path. */
bool tw_srv_acct_http(struct tw_srv *srv, const char *req, int fd, uint64_t deadline);

/*
 * An Accounting-Request that came over RADIUS/TLS (radsec.c) from client
 * (its address from): checked and recorded as a datagram would be, but
 * without the duplicate cache; the Accounting-Response written to out.
 * Returns its length, or 0 when the request is discarded (counted) or
 * accounting is off.
 */
struct tw_srv_client;
struct tw_srv_addr;
size_t tw_srv_acct_stream(struct tw_srv *srv, const struct tw_srv_client *client,
			  const struct tw_srv_addr *from, const uint8_t *in, size_t len, bool v11,
			  uint8_t out[static 4096]);
/* The live sessions whose Acct-Session-Id is id (any client and NAS), at
 * most max copied into out; 0 also when accounting is off (dynauth.c). */
size_t tw_srv_acct_find(struct tw_srv *srv, const uint8_t *id, size_t id_len,
			struct tw_acct_session *out, size_t max);

/* The live sessions whose Class is cls[0..len), at most max (a walk of
 * the table, a bounded chunk per lock hold: for a control command, not
 * the packet path). */
size_t tw_srv_acct_find_class(struct tw_srv *srv, const uint8_t *cls, size_t len,
			      struct tw_acct_session *out, size_t max);

/* The accounting options (names beginning "acct-") of config.c. */
int tw_srv_acct_config(struct tw_srv_config *c, const char *name, const char *v,
		       const char *where, char *err, size_t err_len);

#endif
