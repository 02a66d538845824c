/* twag — constant-time comparison, wiping and XOR. */
#include <string.h>

#include "twag/bytes.h"

/*
 * Under valgrind's Memcheck (tests/ct/ct_check.c) secrets are marked
 * undefined, and every branch on a value derived from them is reported.
 * The one-bit verdict of a comparison is public by nature (the caller
 * accepts or rejects), so it is marked defined here; the compared data
 * stay undefined. Outside valgrind a client request is a few no-op
 * instructions.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TW_HAVE_MEMCHECK 1
#endif
#endif

#ifdef TW_HAVE_MEMCHECK
#define DECLASSIFY(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#else
#define DECLASSIFY(p, n) ((void)(p), (void)(n))
#endif

bool tw_ct_eq(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *x = a;
	const volatile uint8_t *y = b;
	uint8_t acc = 0;
	bool eq;

	for (size_t i = 0; i < len; i++)
		acc |= (uint8_t)(x[i] ^ y[i]);
	/* Map 0 -> 1 and 1..255 -> 0 without a data-dependent branch. */
	eq = (bool)(1 & (((uint32_t)acc - 1) >> 8));
	DECLASSIFY(&eq, sizeof(eq));
	return eq;
}

bool tw_ct_is_zero(const void *a, size_t len)
{
	const volatile uint8_t *x = a;
	uint8_t acc = 0;
	bool zero;

	for (size_t i = 0; i < len; i++)
		acc |= x[i];
	zero = (bool)(1 & (((uint32_t)acc - 1) >> 8));
	DECLASSIFY(&zero, sizeof(zero));
	return zero;
}

void tw_ct_declassify(const void *p, size_t len)
{
	DECLASSIFY(p, len);
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
