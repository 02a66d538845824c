/*
 * twag — IPsec anti-replay window (RFC 4303 §3.4.3 and Appendix A, RFC 6479
 * "IPsec Anti-Replay Algorithm without Bit Shifting", January 2012).
 *
 * The window is a ring of 64-bit blocks (RFC 6479 §2): sequence number s
 * lives in bit s % 64 of block (s / 64) % nblocks. When a higher number
 * arrives, the blocks it skips are cleared and the top moves: nothing is
 * shifted, so the cost does not grow with the window. nblocks is a power
 * of two with at least one spare block, so the window proper (the last
 * `window` numbers up to the top) never shares a block with a number that
 * just left it.
 *
 * Two steps, as RFC 4303 §3.4.3 orders them for the receiver:
 *   tw_replay_check()  before the ICV is verified: no state change;
 *   tw_replay_update() only after the ICV verified: marks the number and
 *                      moves the window.
 * So a forged packet with a huge sequence number (whose ICV fails) can
 * never move the window. Sequence numbers are 64-bit: the full extended
 * sequence number with ESN (RFC 4303 §2.2.1), or the 32-bit one.
 */
#ifndef TWAG_REPLAY_H
#define TWAG_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_REPLAY_WINDOW_MIN = 32,   /* RFC 4303 §3.4.3: at least 32 */
	TW_REPLAY_WINDOW_DEFAULT = 64, /* RFC 4303 §3.4.3: default 64 */
	TW_REPLAY_WINDOW_MAX = 4096,
	TW_REPLAY_MAX_BLOCKS = 128,  /* smallest power of 2 > 4096/64 */
};

struct tw_replay_ctx {
	uint64_t top;      /* highest number accepted (0: none yet) */
	uint32_t window;   /* size W: numbers top-W+1 .. top are in it */
	uint32_t nblocks;  /* ring size, a power of two */
	uint64_t bitmap[TW_REPLAY_MAX_BLOCKS];
};

/*
 * Prepares an empty window of `window` numbers (TW_REPLAY_WINDOW_MIN ..
 * TW_REPLAY_WINDOW_MAX). Sequence number 0 is never valid (RFC 4303 §3.3.3:
 * the first packet carries 1), so it starts out marked.
 * Returns TW_ERR_RANGE for another size, TW_ERR_INVAL for NULL.
 */
TW_MUST_CHECK int tw_replay_init(struct tw_replay_ctx *ctx, uint32_t window);

/*
 * RFC 4303 §3.4.3 pre-check of sequence number seq, without changing the
 * state. Returns TW_OK if seq is above the top or inside the window and
 * not yet seen, TW_ERR_REPLAY if it was seen, TW_ERR_RANGE if it is below
 * the window (too old).
 */
TW_MUST_CHECK int tw_replay_check(const struct tw_replay_ctx *ctx, uint64_t seq);

/*
 * Marks seq as received and moves the window if seq is above the top
 * (RFC 6479 §2: the blocks passed over are cleared). Call only after the
 * packet's ICV verified. Re-checks, so it returns the same errors as
 * tw_replay_check() (a duplicate that raced past the check).
 */
TW_MUST_CHECK int tw_replay_update(struct tw_replay_ctx *ctx, uint64_t seq);

/*
 * RFC 4303 Appendix A2.2: the full 64-bit sequence number a receiver
 * assumes for a packet carrying the low 32 bits seq_lo, from the window
 * state (Th/Tl = high/low half of the top, W the window):
 *   Tl >= W - 1: Seqh = Th + 1 if seq_lo < Tl - W + 1, else Th;
 *   Tl <  W - 1: Seqh = Th - 1 if seq_lo >= Tl - W + 1 (mod 2^32), else Th.
 * The guess is confirmed only by the ICV (the high half is in it). When
 * the rule points below 0 (Th = 0), the packet is older than any number
 * possible and TW_ERR_RANGE is returned.
 */
TW_MUST_CHECK int tw_replay_esn_infer(const struct tw_replay_ctx *ctx,
				      uint32_t seq_lo, uint64_t *seq);

#endif
