/* twag — status code texts. */
#include "twag/err.h"

const char *tw_strerror(int err)
{
	switch (err) {
	case TW_OK: return "ok";
	case TW_ERR_INVAL: return "invalid argument";
	case TW_ERR_LENGTH: return "invalid length";
	case TW_ERR_AUTH: return "authentication failed";
	case TW_ERR_SYNC: return "synchronisation failure";
	case TW_ERR_OVERFLOW: return "output buffer too small";
	case TW_ERR_DECODE: return "malformed input";
	case TW_ERR_UNSUPPORTED: return "unsupported";
	case TW_ERR_CRYPTO: return "cryptographic library failure";
	case TW_ERR_NOMEM: return "out of memory";
	case TW_ERR_RANGE: return "value out of range";
	case TW_ERR_STATE: return "invalid state";
	case TW_ERR_REPLAY: return "replayed sequence number";
	case TW_ERR_IO: return "I/O error";
	case TW_ERR_NOTFOUND: return "not found";
	case TW_ERR_DISABLED: return "subscriber disabled";
	}
	return "unknown error";
}
