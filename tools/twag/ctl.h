/*
 * twag CLI — the client side of twagd's control socket (protocol:
 * src/server/control.c): one request line, "result ..." lines, a last
 * "ok ..." or "error ..." line.
 */
#ifndef TWAG_CLI_CTL_H
#define TWAG_CLI_CTL_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_DEFAULT_PATH "/run/twagd/control"

enum ctl_status {
	CTL_OK = 0,       /* the last line began "ok" */
	CTL_ERROR,        /* "error ..." (its text in the answer) */
	CTL_NO_DAEMON,    /* nothing listens at the path */
	CTL_FAILED,       /* no whole answer (timeout, cut) or another fault */
};

/* Appends word w to line (max octets), percent-encoding a space, '%',
 * control characters and octets >= 0x80; false when it does not fit. */
bool ctl_word(char *line, size_t max, const char *w);

/*
 * Sends line (no newline) to the socket at path and reads the whole
 * answer into ans (max octets, NUL-terminated) within timeout_ms.
 * why: the reason of CTL_NO_DAEMON / CTL_FAILED.
 */
enum ctl_status ctl_request(const char *path, const char *line, char *ans, size_t max,
			    unsigned timeout_ms, char *why, size_t why_len);

/*
 * Prints an answer: text (each result line without "result ", then the
 * last line) or, with json, one object {"results":[{...}],"ok":{...}} or
 * {"results":[...],"error":"..."} with the values percent-decoded. Counts
 * the results' outcome=ack and the others into *acks / *others.
 */
void ctl_print(const char *ans, bool json, unsigned *acks, unsigned *others);

#endif
