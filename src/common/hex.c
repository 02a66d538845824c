/* twag — hex conversion. Decoding is branch-light but not secret-safe:
 * hex strings come from operators and vector files, not from the wire. */
#include "twag/hex.h"

int tw_hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tw_hex_decode(uint8_t *out, size_t out_max, size_t *out_len,
		  const char *s, size_t len)
{
	if (len % 2 != 0 || len / 2 > out_max)
		return TW_ERR_LENGTH;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = tw_hex_nibble(s[2 * i]);
		int lo = tw_hex_nibble(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return TW_ERR_DECODE;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	if (out_len != NULL)
		*out_len = len / 2;
	return TW_OK;
}

void tw_hex_encode(char *out, const uint8_t *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}
