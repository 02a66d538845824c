/*
 * twag — twagd internal: dynamic authorization (RFC 5176, dynauth.c) and
 * the control socket that asks for it (control.c), as server.c starts,
 * stops and serves them and worker.c feeds them.
 */
#ifndef TWAG_DYNAUTH_SRV_H
#define TWAG_DYNAUTH_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "textout.h"
#include "twag/radius.h"
#include "twag/server.h"

struct tw_srv;

enum {
	TW_SRV_DYNAUTH_DEFAULT_MAX = 65536,    /* authorized sessions kept */
	TW_SRV_DYNAUTH_MIN = 16,
	TW_SRV_DYNAUTH_MAX = 1 << 22,
	TW_SRV_DYNAUTH_DEFAULT_TIMEOUT_MS = 1000,
	TW_SRV_DYNAUTH_DEFAULT_RETRIES = 2,    /* retransmissions after the first */
	TW_SRV_DYNAUTH_DEFAULT_CHECK = 30,     /* s between store checks (0: off) */
	TW_SRV_DYNAUTH_BATCH = 32,             /* requests one command sends at most */
	TW_SRV_COA_MAX_ATTRS = 16,             /* ATTR=VALUE of one CoA */
	TW_SRV_CLASS_TOKEN_LEN = 8,            /* "twag:" + 16 hex digits */
	TW_SRV_CONTROL_LINE_MAX = 1024,        /* one control request */
	TW_SRV_CONTROL_ARGS = 24,
	TW_SRV_CONTROL_OUT = 16384,            /* one control answer */
};

/* ---- configuration (config.c calls it for "dynauth-*", "control-socket") ---- */

int tw_srv_dynauth_config(struct tw_srv_config *c, const char *name, const char *v,
			  const char *where, char *err, size_t err_len);

/* ---- the authorized sessions and the requests (dynauth.c) ---------------- */

/* Allocates the authorized-session table and the UDP sockets the requests
 * leave from. TW_OK or an error with err. */
int tw_srv_dynauth_open(struct tw_srv *srv, char *err, size_t err_len);
void tw_srv_dynauth_close(struct tw_srv *srv);

/*
 * The packet path, at an Access-Accept (worker.c reply_accept): keeps
 * that the session of Class token tok was authorized for imsi with user
 * (the Access-Accept's User-Name), from client, with the Access-Request
 * req's Calling-Station-Id and NAS identification. Queued in the calling
 * thread (at most 32) and written into the table by
 * tw_srv_dynauth_flush, which the worker loop calls once a batch's
 * replies are sent (tw_srv_handle on its own calls it before returning).
 * No allocation; a spin lock per set of 4 held for one copy.
 */
void tw_srv_dynauth_flush(struct tw_srv *srv);
void tw_srv_dynauth_note_accept(struct tw_srv *srv, const struct tw_radius_pkt *req,
				const struct tw_srv_addr *client,
				const uint8_t tok[static TW_SRV_CLASS_TOKEN_LEN], const char *imsi,
				size_t imsi_len, const uint8_t *user, size_t user_len);

/* The control thread has moved on to client table epoch (SIGHUP). */
bool tw_srv_dynauth_moved_on(struct tw_srv *srv, uint64_t epoch);

/* Control commands (control.c's table): args after the command name;
 * result lines and the last "ok ..." or "error ..." line into o. */
void tw_srv_dynauth_cmd_disconnect(struct tw_srv *srv, struct out *o, int argc, char **argv);
void tw_srv_dynauth_cmd_coa(struct tw_srv *srv, struct out *o, int argc, char **argv);
void tw_srv_dynauth_cmd_sessions(struct tw_srv *srv, struct out *o, int argc, char **argv);

/* One turn of the periodic store check (--dynauth-check-interval), from
 * the control thread: a bounded slice of the table. */
void tw_srv_dynauth_tick(struct tw_srv *srv, uint64_t now_ms);

/* Appends the twag_dynauth_* metrics; returns the octets (0: none). */
size_t tw_srv_dynauth_metrics(struct tw_srv *srv, char *buf, size_t max);

/*
 * One CoA attribute from "NAME=VALUE": Session-Timeout, Idle-Timeout,
 * Acct-Interim-Interval (decimal, 32 bits), Filter-Id (text, 1..253
 * octets), or "TYPE=HEX" (TYPE 1..255 decimal, 0..253 octets of hex; not
 * EAP-Message, Message-Authenticator or the session identification that
 * twagd sets). TW_OK with *type, val[0..*len); else TW_ERR_INVAL and one
 * line in err.
 */
TW_MUST_CHECK int tw_srv_dynauth_parse_attr(const char *text, uint8_t *type, uint8_t val[253],
					    size_t *len, char *err, size_t err_len);

/* ---- the control socket (control.c) -------------------------------------- */

/* Creates the socket (before the privilege drop): a stale file replaced,
 * mode 0660, owned by --user/--group. TW_OK (also when none is
 * configured) or an error with err. */
int tw_srv_control_open(struct tw_srv *srv, char *err, size_t err_len);
/* The thread (twagd-control): the socket when there is one, the store
 * check. TW_OK or TW_ERR_NOMEM. */
int tw_srv_control_start(struct tw_srv *srv);
/* After srv->stop: joins the thread, closes and removes the socket. */
void tw_srv_control_stop(struct tw_srv *srv);

/*
 * Splits a request line (line[0..len), no newline) in place into words:
 * separated by one or more spaces, each percent-decoded (RFC 3986 §2.1:
 * "%20" for a space, "%25" for '%'); a control character, an octet
 * >= 0x80 before decoding, a bad or NUL-producing escape, or more than max
 * words is TW_ERR_DECODE. TW_OK with *argc (0 for a blank line).
 */
TW_MUST_CHECK int tw_srv_control_split(char *line, size_t len, char **argv, int max, int *argc);

/* Runs one split request: the command table's answer into o. */
void tw_srv_control_dispatch(struct tw_srv *srv, struct out *o, int argc, char **argv);

#endif
