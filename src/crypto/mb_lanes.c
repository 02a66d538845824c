/*
 * twag — the lane scheduler of the multi-buffer hashes (mb_lanes.h).
 */
#include <stdbool.h>
#include <string.h>

#include "mb_lanes.h"
#include "twag/bytes.h"

/* The block every idle lane reads (its result is thrown away). */
static const uint8_t idle_block[64];

struct lane {
	bool busy;
	struct tw_mb_view v;
	unsigned seg;
	size_t left;            /* blocks left in seg */
	const uint8_t *p;       /* the next block */
};

/* Moves l to its job's next non-empty segment; false at the job's end. */
static bool lane_seg(struct lane *l)
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
static void lane_take(struct lane *l, uint32_t st[][TW_MB_LANES], unsigned words, unsigned j,
		      void *jobs, size_t n, size_t *next,
		      struct tw_mb_view (*view)(void *jobs, size_t i))
{
	l->busy = false;
	while (*next < n) {
		l->v = view(jobs, (*next)++);
		l->seg = 0;
		if (lane_seg(l)) {
			for (unsigned w = 0; w < words; w++)
				st[w][j] = l->v.h[w];
			l->busy = true;
			return;
		}
	}
}

void tw_mb_run(void *jobs, size_t n, struct tw_mb_view (*view)(void *jobs, size_t i),
	       unsigned words, tw_mb_kernel kernel)
{
	uint32_t st[TW_MB_MAX_WORDS][TW_MB_LANES];
	const uint8_t *p[TW_MB_LANES];
	struct lane lanes[TW_MB_LANES];
	size_t next = 0;
	unsigned active = 0;

	memset(st, 0, sizeof(st));
	for (unsigned j = 0; j < TW_MB_LANES; j++) {
		lane_take(&lanes[j], st, words, j, jobs, n, &next, view);
		active += lanes[j].busy;
	}
	while (active > 0) {
		for (unsigned j = 0; j < TW_MB_LANES; j++)
			p[j] = lanes[j].busy ? lanes[j].p : idle_block;
		kernel(st, p);
		for (unsigned j = 0; j < TW_MB_LANES; j++) {
			struct lane *l = &lanes[j];

			if (!l->busy)
				continue;
			l->p += 64;
			if (--l->left > 0)
				continue;
			l->seg++;
			if (lane_seg(l))
				continue;
			for (unsigned w = 0; w < words; w++)
				l->v.h[w] = st[w][j];
			lane_take(l, st, words, j, jobs, n, &next, view);
			active -= !l->busy;
		}
	}
	tw_wipe(st, sizeof(st)); /* keyed HMAC states pass through here */
}
