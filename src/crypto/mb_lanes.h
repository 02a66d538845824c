/*
 * twag — the lane scheduler of the multi-buffer hashes (md5_mb.c,
 * sha256_mb.c), not a public header: sixteen jobs advance side by side,
 * one 64-octet block each per step of a 16-lane compression kernel; a
 * lane whose job ends takes the next one, so jobs of different lengths
 * keep the lanes busy, and idle lanes read a block of zeros whose result
 * is thrown away.
 */
#ifndef TWAG_MB_LANES_H
#define TWAG_MB_LANES_H

#include <stddef.h>
#include <stdint.h>

enum { TW_MB_LANES = 16, TW_MB_MAX_WORDS = 8, TW_MB_SEGS = 4 };

/* Where the scheduler finds a job's chaining value and segments. */
struct tw_mb_view {
	uint32_t *h;               /* words of chaining value */
	const uint8_t *const *seg; /* TW_MB_SEGS segments ... */
	const size_t *nblk;        /* ... of this many blocks each */
};

/* A 16-lane kernel: one block of each lane, lane j's chaining value in
 * column j of st (words rows), its block at p[j]. */
typedef void (*tw_mb_kernel)(uint32_t st[][TW_MB_LANES], const uint8_t *const p[TW_MB_LANES]);

/* Runs n jobs (view(jobs, i) describes job i) through kernel; words is
 * the chaining value's length in 32-bit words (at most TW_MB_MAX_WORDS).
 * Wipes its copies of the chaining values. */
void tw_mb_run(void *jobs, size_t n, struct tw_mb_view (*view)(void *jobs, size_t i),
	       unsigned words, tw_mb_kernel kernel);

#endif
