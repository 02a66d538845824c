/*
 * twag — anti-replay window (RFC 4303, December 2005, §3.4.3 and
 * Appendix A; RFC 6479, January 2012), see twag/replay.h.
 */
#include <string.h>

#include "twag/replay.h"

int tw_replay_init(struct tw_replay_ctx *ctx, uint32_t window)
{
	uint32_t nb = 1;

	if (ctx == NULL)
		return TW_ERR_INVAL;
	if (window < TW_REPLAY_WINDOW_MIN || window > TW_REPLAY_WINDOW_MAX)
		return TW_ERR_RANGE;
	/* RFC 6479 §2: a ring of n blocks serves a window of up to
	 * (n - 1) * 64 numbers; n a power of two so the index is a mask. */
	while ((uint64_t)(nb - 1) * 64 < window)
		nb <<= 1;
	memset(ctx, 0, sizeof(*ctx));
	ctx->window = window;
	ctx->nblocks = nb;
	ctx->bitmap[0] = 1; /* sequence number 0 is never valid */
	return TW_OK;
}

static inline uint64_t *block_of(const struct tw_replay_ctx *ctx, uint64_t seq)
{
	return (uint64_t *)&ctx->bitmap[(seq >> 6) & (ctx->nblocks - 1)];
}

int tw_replay_check(const struct tw_replay_ctx *ctx, uint64_t seq)
{
	if (seq > ctx->top)
		return TW_OK; /* right of the window: new */
	/* §3.4.3: "duplicates are rejected ... packets that fall to the left
	 * of the window are rejected" */
	if (ctx->top - seq >= ctx->window)
		return TW_ERR_RANGE;
	if ((*block_of(ctx, seq) >> (seq & 63)) & 1)
		return TW_ERR_REPLAY;
	return TW_OK;
}

int tw_replay_update(struct tw_replay_ctx *ctx, uint64_t seq)
{
	int err = tw_replay_check(ctx, seq);

	if (err != TW_OK)
		return err;
	if (seq > ctx->top) {
		/* RFC 6479 §2: clear every block from the one after the top's
		 * up to seq's; at most the whole ring. */
		uint64_t cur = ctx->top >> 6, next = seq >> 6;
		uint64_t diff = next - cur;

		if (diff > ctx->nblocks)
			diff = ctx->nblocks;
		for (uint64_t i = 1; i <= diff; i++)
			ctx->bitmap[(cur + i) & (ctx->nblocks - 1)] = 0;
		ctx->top = seq;
	}
	*block_of(ctx, seq) |= (uint64_t)1 << (seq & 63);
	return TW_OK;
}

int tw_replay_esn_infer(const struct tw_replay_ctx *ctx, uint32_t seq_lo,
			uint64_t *seq)
{
	uint32_t th = (uint32_t)(ctx->top >> 32), tl = (uint32_t)ctx->top;
	uint32_t w = ctx->window;
	uint32_t bottom = tl - w + 1; /* mod 2^32 */
	uint64_t sh;

	if (tl >= w - 1) {
		/* Case A: the window lies within one 2^32 subspace. */
		sh = seq_lo >= bottom ? (uint64_t)th : (uint64_t)th + 1;
	} else {
		/* Case B: the window spans two subspaces. */
		if (seq_lo >= bottom) {
			if (th == 0)
				return TW_ERR_RANGE;
			sh = (uint64_t)th - 1;
		} else {
			sh = th;
		}
	}
	if (sh > UINT32_MAX)
		return TW_ERR_RANGE; /* the 64-bit space is exhausted */
	*seq = sh << 32 | seq_lo;
	return TW_OK;
}
