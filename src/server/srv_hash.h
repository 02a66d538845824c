/*
 * twag — twagd internal: SipHash-2-4 (Aumasson and Bernstein, 2012), the
 * keyed hash of the session station index and the duplicate cache. Keyed
 * with random octets at start-up so that a client cannot aim requests at
 * one hash chain.
 */
#ifndef TWAG_SRV_HASH_H
#define TWAG_SRV_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "twag/bytes.h"

#define TW_SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define TW_SIP_ROUND(v0, v1, v2, v3)                                             \
	do {                                                                     \
		v0 += v1; v1 = TW_SIP_ROTL(v1, 13); v1 ^= v0; v0 = TW_SIP_ROTL(v0, 32); \
		v2 += v3; v3 = TW_SIP_ROTL(v3, 16); v3 ^= v2;                    \
		v0 += v3; v3 = TW_SIP_ROTL(v3, 21); v3 ^= v0;                    \
		v2 += v1; v1 = TW_SIP_ROTL(v1, 17); v1 ^= v2; v2 = TW_SIP_ROTL(v2, 32); \
	} while (0)

static inline uint64_t tw_srv_siphash(const uint64_t key[2], const uint8_t *in,
				      size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dULL ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ key[0];
	uint64_t v3 = 0x7465646279746573ULL ^ key[1];
	uint64_t b = (uint64_t)len << 56, m;
	size_t i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		m = tw_load_le64(in + i);
		v3 ^= m;
		TW_SIP_ROUND(v0, v1, v2, v3);
		TW_SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; j < left; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	TW_SIP_ROUND(v0, v1, v2, v3);
	TW_SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	TW_SIP_ROUND(v0, v1, v2, v3);
	TW_SIP_ROUND(v0, v1, v2, v3);
	TW_SIP_ROUND(v0, v1, v2, v3);
	TW_SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

#endif
