/*
 * twag — wire byte order, constant-time helpers and secret wiping.
 *
 * Wire bytes are only read and written through these helpers; structures are
 * never overlaid on packets.
 */
#ifndef TWAG_BYTES_H
#define TWAG_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t tw_load_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t tw_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t tw_load_be48(const uint8_t *p)
{
	return (uint64_t)tw_load_be16(p) << 32 | tw_load_be32(p + 2);
}

static inline uint64_t tw_load_be64(const uint8_t *p)
{
	return (uint64_t)tw_load_be32(p) << 32 | tw_load_be32(p + 4);
}

static inline uint32_t tw_load_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | (uint32_t)p[0];
}

static inline uint64_t tw_load_le64(const uint8_t *p)
{
	return (uint64_t)tw_load_le32(p + 4) << 32 | tw_load_le32(p);
}

static inline void tw_store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void tw_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void tw_store_be48(uint8_t *p, uint64_t v)
{
	tw_store_be16(p, (uint16_t)(v >> 32));
	tw_store_be32(p + 2, (uint32_t)v);
}

static inline void tw_store_be64(uint8_t *p, uint64_t v)
{
	tw_store_be32(p, (uint32_t)(v >> 32));
	tw_store_be32(p + 4, (uint32_t)v);
}

static inline void tw_store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void tw_store_le64(uint8_t *p, uint64_t v)
{
	tw_store_le32(p, (uint32_t)v);
	tw_store_le32(p + 4, (uint32_t)(v >> 32));
}

/*
 * Constant-time equality of two byte strings of the same public length:
 * the time taken depends on len only, never on the contents. Use it for
 * every MAC, RES, tag and ICV comparison.
 */
bool tw_ct_eq(const void *a, const void *b, size_t len);

/* Constant-time test that len bytes are all zero. */
bool tw_ct_is_zero(const void *a, size_t len);

/*
 * Declares p[0..len) public: a value computed from secrets that the
 * protocol then reveals, such as an authenticated plaintext the receiver
 * acts on (an ESP trailer whose ICV verified, the SQN of an AUTN whose
 * MAC-A verified). Under valgrind's Memcheck it marks the bytes defined, so
 * the constant-time check (tests/ct/ct_check.c) no longer tracks them as
 * secret; built without valgrind's headers it does nothing. The verdicts
 * of tw_ct_eq() and tw_ct_is_zero() are declassified the same way; the
 * bytes they compare are not.
 */
void tw_ct_declassify(const void *p, size_t len);

/* Wipes a secret; the compiler may not elide it (explicit_bzero). */
void tw_wipe(void *p, size_t len);

/* out[i] = a[i] ^ b[i]; out may alias a or b. */
void tw_xor(uint8_t *out, const uint8_t *a, const uint8_t *b, size_t len);

#endif
