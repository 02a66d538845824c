/*
 * Tests of the anti-replay window (RFC 4303 §3.4.3, Appendix A; RFC 6479):
 * in order, out of order within the window, duplicates, too old, huge
 * jumps, check without update, every window size against a plain model
 * (an explicit set of received numbers) on random traffic, and the ESN
 * high-half inference of Appendix A2.2 around the 2^32 wrap.
 */
#include "tw_test.h"
#include "twag/replay.h"

static void basics(void)
{
	struct tw_replay_ctx r;

	CHECK_ERR(tw_replay_init(&r, 31), TW_ERR_RANGE);
	CHECK_ERR(tw_replay_init(&r, 4097), TW_ERR_RANGE);
	CHECK_ERR(tw_replay_init(NULL, 64), TW_ERR_INVAL);
	CHECK_OK(tw_replay_init(&r, 64));
	CHECK(r.nblocks == 2);
	/* 0 is never valid */
	CHECK_ERR(tw_replay_check(&r, 0), TW_ERR_REPLAY);
	/* in order */
	for (uint64_t s = 1; s <= 10; s++) {
		CHECK_OK(tw_replay_check(&r, s));
		CHECK_OK(tw_replay_update(&r, s));
	}
	CHECK(r.top == 10);
	/* duplicates */
	CHECK_ERR(tw_replay_check(&r, 10), TW_ERR_REPLAY);
	CHECK_ERR(tw_replay_check(&r, 3), TW_ERR_REPLAY);
	CHECK_ERR(tw_replay_update(&r, 3), TW_ERR_REPLAY);
	/* a check alone changes nothing */
	CHECK_OK(tw_replay_check(&r, 1000));
	CHECK_OK(tw_replay_check(&r, 1000));
	CHECK(r.top == 10);
	/* jump, then out of order inside the window */
	CHECK_OK(tw_replay_update(&r, 70));
	CHECK_OK(tw_replay_update(&r, 69));
	CHECK_ERR(tw_replay_update(&r, 6), TW_ERR_RANGE);
	/* window = 64: 70 - 64 + 1 = 7 is the oldest still inside */
	CHECK_OK(tw_replay_check(&r, 11));
	CHECK_ERR(tw_replay_check(&r, 6), TW_ERR_RANGE);
	CHECK_OK(tw_replay_update(&r, 7 + 5));
	CHECK_ERR(tw_replay_check(&r, 12), TW_ERR_REPLAY);
	/* a huge jump clears everything: old bits must not reappear */
	CHECK_OK(tw_replay_update(&r, 1000000));
	CHECK_ERR(tw_replay_check(&r, 999936), TW_ERR_RANGE);
	CHECK_OK(tw_replay_check(&r, 999937));
	CHECK_OK(tw_replay_check(&r, 999999));
	CHECK_ERR(tw_replay_check(&r, 1000000), TW_ERR_REPLAY);
	/* a block that aliases an old one (same ring slot) is clean */
	CHECK_OK(tw_replay_update(&r, 1000000 + 128));
	CHECK_ERR(tw_replay_check(&r, 1000000 + 64), TW_ERR_RANGE);
	CHECK_OK(tw_replay_check(&r, 1000000 + 65));
	CHECK_OK(tw_replay_check(&r, 1000000 + 127));
}

/* Random traffic against an explicit model, for several window sizes. */
static void model(uint32_t w)
{
	static uint8_t seen[1 << 16];
	struct tw_replay_ctx r;
	uint64_t top = 0;
	unsigned bad = 0, n = 0;

	memset(seen, 0, sizeof(seen));
	if (!CHECK_OK(tw_replay_init(&r, w)))
		return;
	seen[0] = 1;
	for (int i = 0; i < 20000; i++, n++) {
		/* mostly near the top, sometimes far behind, sometimes ahead */
		uint32_t k = tw_test_random_u32();
		int64_t d = (k % 10 == 0) ? (int64_t)(k >> 8) % (3 * w) - (int64_t)(2 * w)
					  : (int64_t)((k >> 8) % 40) - 30;
		int64_t s64 = (int64_t)top + d;
		if (s64 < 0 || s64 >= (int64_t)sizeof(seen))
			continue;
		uint64_t s = (uint64_t)s64;
		int want = s > top ? TW_OK
			   : top - s >= w ? TW_ERR_RANGE
			   : seen[s] ? TW_ERR_REPLAY : TW_OK;
		int got = tw_replay_check(&r, s);

		bad += got != want;
		/* ~1 in 8 "ICV failures": checked but never updated */
		if (got == TW_OK && (k & 7) != 0) {
			bad += tw_replay_update(&r, s) != TW_OK;
			seen[s] = 1;
			if (s > top)
				top = s;
		}
		bad += r.top != top;
	}
	CHECK(n == 20000);
	CHECK(bad == 0);
}

/* RFC 4303 Appendix A2.2 around the wrap. */
static void esn(void)
{
	struct tw_replay_ctx r;
	uint64_t s;

	CHECK_OK(tw_replay_init(&r, 64));
	/* Case B with Th = 0: a number from "before 0" is impossible. */
	CHECK_OK(tw_replay_update(&r, 5));
	CHECK_OK(tw_replay_esn_infer(&r, 6, &s));
	CHECK(s == 6);
	CHECK_OK(tw_replay_esn_infer(&r, 3, &s));
	CHECK(s == 3);
	CHECK_ERR(tw_replay_esn_infer(&r, 0xfffffff0u, &s), TW_ERR_RANGE);
	/* Case A: top = 2^32 - 10, window inside subspace 0. */
	CHECK_OK(tw_replay_update(&r, 0xfffffff6ull));
	CHECK_OK(tw_replay_esn_infer(&r, 0xfffffff0u, &s));
	CHECK(s == 0xfffffff0ull);
	CHECK_OK(tw_replay_esn_infer(&r, 0xfffffffbu, &s));
	CHECK(s == 0xfffffffbull);
	/* low numbers are the next subspace (the counter wrapped) */
	CHECK_OK(tw_replay_esn_infer(&r, 3, &s));
	CHECK(s == 0x100000003ull);
	CHECK_OK(tw_replay_check(&r, s));
	CHECK_OK(tw_replay_update(&r, s));
	/* Case B with Th = 1: top = 2^32 + 3 */
	CHECK_OK(tw_replay_esn_infer(&r, 0xfffffff0u, &s));
	CHECK(s == 0xfffffff0ull);
	CHECK_OK(tw_replay_check(&r, s)); /* inside the window, not seen */
	CHECK_OK(tw_replay_esn_infer(&r, 0xfffffff6u, &s));
	CHECK_ERR(tw_replay_check(&r, s), TW_ERR_REPLAY);
	CHECK_OK(tw_replay_esn_infer(&r, 2, &s));
	CHECK(s == 0x100000002ull);
	CHECK_OK(tw_replay_esn_infer(&r, 1000, &s));
	CHECK(s == 0x1000003e8ull);
	/* Case B: a low half below the window's bottom (2^32 - 60) is read
	 * as ahead in subspace 1; only the ICV can confirm it */
	CHECK_OK(tw_replay_esn_infer(&r, 0x80000000u, &s));
	CHECK(s == 0x180000000ull);
	/* the end of the 64-bit space */
	r.top = UINT64_MAX - 2;
	CHECK_ERR(tw_replay_esn_infer(&r, 1, &s), TW_ERR_RANGE);
}

void test_main(void)
{
	basics();
	static const uint32_t sizes[] = { 32, 64, 65, 100, 128, 1000, 1024, 4096 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		model(sizes[i]);
	esn();
}
