/* twag — constant-time comparison, wiping and XOR. */
#include <string.h>

#include "twag/bytes.h"

bool tw_ct_eq(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *x = a;
	const volatile uint8_t *y = b;
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= (uint8_t)(x[i] ^ y[i]);
	/* Map 0 -> 1 and 1..255 -> 0 without a data-dependent branch. */
	return (bool)(1 & (((uint32_t)acc - 1) >> 8));
}

bool tw_ct_is_zero(const void *a, size_t len)
{
	const volatile uint8_t *x = a;
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= x[i];
	return (bool)(1 & (((uint32_t)acc - 1) >> 8));
}

void tw_wipe(void *p, size_t len)
{
	explicit_bzero(p, len);
}

void tw_xor(uint8_t *out, const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = a[i] ^ b[i];
}
