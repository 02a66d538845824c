/* twag — strict lowercase/uppercase hex decoding, lowercase encoding. */
#ifndef TWAG_HEX_H
#define TWAG_HEX_H

#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

/*
 * Decodes exactly len hex characters of s into out (len/2 bytes).
 * Returns TW_ERR_LENGTH if len is odd or len/2 > out_max, TW_ERR_DECODE on a
 * non-hex character. On success *out_len = len/2 (out_len may be NULL).
 */
TW_MUST_CHECK int tw_hex_decode(uint8_t *out, size_t out_max, size_t *out_len,
				const char *s, size_t len);

/* Writes 2*len lowercase hex characters and a NUL into out[2*len+1]. */
void tw_hex_encode(char *out, const uint8_t *in, size_t len);

/* The value of one hex digit (either case), or -1. */
int tw_hex_nibble(char c);

#endif
