/*
 * twag — status codes shared by every module.
 *
 * Every fallible function returns int: TW_OK (0) or a negative enum tw_err.
 * Outputs are valid only when TW_OK is returned.
 */
#ifndef TWAG_ERR_H
#define TWAG_ERR_H

/* A caller that ignores a status does not compile (-Werror). */
#define TW_MUST_CHECK __attribute__((warn_unused_result))

enum tw_err {
	TW_OK = 0,
	TW_ERR_INVAL = -1,       /* argument outside its domain */
	TW_ERR_LENGTH = -2,      /* a length is not one the spec allows */
	TW_ERR_AUTH = -3,        /* a MAC, tag, RES or ICV did not verify */
	TW_ERR_SYNC = -4,        /* SQN outside the accepted range (resync) */
	TW_ERR_OVERFLOW = -5,    /* caller's output buffer is too small */
	TW_ERR_DECODE = -6,      /* malformed input bytes */
	TW_ERR_UNSUPPORTED = -7, /* option, profile or CPU path not available */
	TW_ERR_CRYPTO = -8,      /* an underlying library call failed */
	TW_ERR_NOMEM = -9,       /* a pool or library allocation failed */
	TW_ERR_RANGE = -10,      /* a value is out of its permitted range */
	TW_ERR_STATE = -11,      /* call not valid in the object's state */
	TW_ERR_REPLAY = -12,     /* a sequence number was seen before */
	TW_ERR_IO = -13,         /* I/O failure (store, socket, file) */
	TW_ERR_NOTFOUND = -14,   /* no such subscriber, key id or entry */
	TW_ERR_DISABLED = -15,   /* the subscriber is disabled in the store */
};

/* Returns a short, static, human-readable text for a status code. */
const char *tw_strerror(int err);

#endif
