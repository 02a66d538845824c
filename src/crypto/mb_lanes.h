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

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include "twag/bytes.h"

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

/* The block every idle lane reads (its result is thrown away). */
static const uint8_t tw_mb_idle_block[64];

struct tw_mb_lane {
	bool busy;
	struct tw_mb_view v;
	unsigned seg;
	size_t left;            /* blocks left in seg */
	const uint8_t *p;       /* the next block */
};

/* Moves l to its job's next non-empty segment; false at the job's end. */
static inline bool tw_mb_lane_seg(struct tw_mb_lane *l)
{
	while (l->seg < TW_MB_SEGS) {
		if (l->v.nblk[l->seg] > 0) {
			l->p = l->v.seg[l->seg];
			l->left = l->v.nblk[l->seg];
			return true;
		}
		l->seg++;
	}
	return false;
}

/* Lane j takes the next job with blocks to do (*next advances); jobs
 * without any are done as they are. */
static inline void tw_mb_lane_take(struct tw_mb_lane *l, uint32_t st[][TW_MB_LANES], unsigned words, unsigned j,
		      void *jobs, size_t n, size_t *next,
		      struct tw_mb_view (*view)(void *jobs, size_t i))
{
	l->busy = false;
	while (*next < n) {
		l->v = view(jobs, (*next)++);
		l->seg = 0;
		if (tw_mb_lane_seg(l)) {
			for (unsigned w = 0; w < words; w++)
				st[w][j] = l->v.h[w];
			l->busy = true;
			return;
		}
	}
}

/*
 * Runs n jobs (view(jobs, i) describes job i) through kernel; words is
 * the chaining value's length in 32-bit words (at most TW_MB_MAX_WORDS).
 * Wipes its copies of the chaining values. Always inline, so that each
 * hash's copy calls its view and kernel directly with words a constant
 * (and the kernel's frame lies right below its caller's, for
 * tw_vec_scrub_stack): the
 * jobs of RADIUS are a few blocks each, and the bookkeeping per job
 * weighed as much as the 16-lane kernel when it went through pointers.
 */
static inline __attribute__((always_inline)) void
tw_mb_run(void *jobs, size_t n, struct tw_mb_view (*view)(void *jobs, size_t i), unsigned words,
	  tw_mb_kernel kernel)
{
	uint32_t st[TW_MB_MAX_WORDS][TW_MB_LANES];
	const uint8_t *p[TW_MB_LANES];
	struct tw_mb_lane lanes[TW_MB_LANES];
	size_t next = 0;
	uint32_t busy = 0; /* bit j: lane j has a job */

	memset(st, 0, sizeof(st));
	for (unsigned j = 0; j < TW_MB_LANES; j++) {
		tw_mb_lane_take(&lanes[j], st, words, j, jobs, n, &next, view);
		p[j] = lanes[j].busy ? lanes[j].p : tw_mb_idle_block;
		busy |= (uint32_t)lanes[j].busy << j;
	}
	/* p[j] is lane j's next block, kept up to date as lanes advance;
	 * only the busy lanes are visited */
	while (busy != 0) {
		kernel(st, p);
		for (uint32_t m = busy; m != 0; m &= m - 1) {
			unsigned j = (unsigned)__builtin_ctz(m);
			struct tw_mb_lane *l = &lanes[j];

			l->p += 64;
			if (--l->left == 0) {
				l->seg++;
				if (!tw_mb_lane_seg(l)) {
					for (unsigned w = 0; w < words; w++)
						l->v.h[w] = st[w][j];
					tw_mb_lane_take(l, st, words, j, jobs, n, &next, view);
					if (!l->busy) {
						busy &= ~(1u << j);
						p[j] = tw_mb_idle_block;
						continue;
					}
				}
			}
			p[j] = l->p;
		}
	}
	tw_wipe(st, sizeof(st)); /* keyed HMAC states pass through here */
}

#endif
