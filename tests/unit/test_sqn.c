/*
 * Tests of SQN management (3GPP TS 33.102 V17.0.0 Annex C): the HE
 * per-subscriber SEQ_HE with this node's IND slots, the USIM array checks
 * C.2.1 (SEQ > SEQ_MS(IND)), C.2.2 (Δ) and C.2.3 (L), boundaries of each,
 * exhaustion, and random HE->MS runs (each SQN accepted exactly once, any
 * order within the slots accepted, every replay refused).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/err.h"
#include "twag/sqn.h"

static uint64_t mk(uint64_t seq, unsigned ind, unsigned ind_bits)
{
	return seq << ind_bits | ind;
}

static int ms_offer(struct tw_sqn_ms *ms, uint64_t sqn)
{
	uint8_t b[6];

	tw_store_be48(b, sqn);
	return tw_sqn_ms_accept(ms, b);
}

static int ms_check(const struct tw_sqn_ms *ms, uint64_t sqn)
{
	uint8_t b[6];

	tw_store_be48(b, sqn);
	return tw_sqn_ms_check(ms, b);
}

static void vec_case(const struct tv_case *c)
{
	struct tw_sqn_ms ms;
	const char *sqns = tv_str(c, "sqns"), *acc = tv_str(c, "accept");
	char *end;
	int n = 0;

	if (sqns == NULL || acc == NULL)
		return;
	CHECK_OK(tw_sqn_ms_init(&ms, (unsigned)tv_int(c, "ind_bits", 5), TW_SQN_DELTA_DEFAULT,
				TW_SQN_L_NONE));
	for (;;) {
		unsigned long long sqn = strtoull(sqns, &end, 10);
		long want;

		if (end == sqns)
			break;
		sqns = end;
		want = strtol(acc, &end, 10);
		CHECK(end != acc);
		acc = end;
		if (want)
			CHECK_OK(ms_offer(&ms, sqn));
		else
			CHECK_ERR(ms_offer(&ms, sqn), TW_ERR_SYNC);
		n++;
	}
	CHECK(n >= 3);
}

static void test_he(void)
{
	struct tw_sqn_he he, before;
	uint8_t sqn[6];

	CHECK_ERR(tw_sqn_he_init(NULL, 5, 0, 1, 0), TW_ERR_INVAL);
	CHECK_ERR(tw_sqn_he_init(&he, 7, 0, 1, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_sqn_he_init(&he, 5, 0, 0, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_sqn_he_init(&he, 5, 32, 1, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_sqn_he_init(&he, 5, 30, 3, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_sqn_he_init(&he, 5, 0, 1, (uint64_t)1 << 43), TW_ERR_RANGE);
	CHECK_OK(tw_sqn_he_init(&he, 5, 30, 2, 0));
	CHECK_OK(tw_sqn_he_init(&he, 0, 0, 1, ((uint64_t)1 << 48) - 1));

	/* C.1.1.2/C.1.2: SEQ = SEQ_HE + 1, IND from this node's slots in turn. */
	CHECK_OK(tw_sqn_he_init(&he, 5, 3, 4, 10));
	static const uint64_t want[] = { 11 << 5 | 3, 12 << 5 | 4, 13 << 5 | 5, 14 << 5 | 6,
					 15 << 5 | 3 };
	for (unsigned i = 0; i < 5; i++) {
		CHECK_OK(tw_sqn_he_next(&he, sqn));
		CHECK(tw_load_be48(sqn) == want[i]);
	}
	CHECK(he.seq_he == 15);

	/* C.3: the reset takes SEQ from SQN_MS, whatever its IND. */
	tw_store_be48(sqn, mk(1000, 17, 5));
	CHECK_OK(tw_sqn_he_resync(&he, sqn));
	CHECK(he.seq_he == 1000);
	CHECK_OK(tw_sqn_he_next(&he, sqn));
	CHECK(tw_load_be48(sqn) == mk(1001, 4, 5));
	/* Backwards too (the USIM refused SQNs that were far ahead). */
	tw_store_be48(sqn, mk(7, 0, 5));
	CHECK_OK(tw_sqn_he_resync(&he, sqn));
	CHECK(he.seq_he == 7);

	/* Exhaustion: never wraps, record unchanged. */
	CHECK_OK(tw_sqn_he_init(&he, 5, 31, 1, ((uint64_t)1 << 43) - 2));
	CHECK_OK(tw_sqn_he_next(&he, sqn));
	CHECK(tw_load_be48(sqn) == ((uint64_t)1 << 48) - 1);
	before = he;
	CHECK_ERR(tw_sqn_he_next(&he, sqn), TW_ERR_RANGE);
	CHECK_MEM(&he, &before, sizeof(he));
	CHECK_OK(tw_sqn_he_init(&he, 0, 0, 1, ((uint64_t)1 << 48) - 1));
	CHECK_ERR(tw_sqn_he_next(&he, sqn), TW_ERR_RANGE);
	CHECK_OK(tw_sqn_he_init(&he, 6, 0, 64, ((uint64_t)1 << 42) - 1));
	CHECK_ERR(tw_sqn_he_next(&he, sqn), TW_ERR_RANGE);

	/* A corrupted record is refused, not used. */
	CHECK_OK(tw_sqn_he_init(&he, 5, 0, 1, 0));
	he.ind_next = 1;
	CHECK_ERR(tw_sqn_he_next(&he, sqn), TW_ERR_INVAL);
	he.ind_next = 0;
	he.ind_bits = 9;
	CHECK_ERR(tw_sqn_he_next(&he, sqn), TW_ERR_INVAL);
	CHECK_ERR(tw_sqn_he_resync(&he, sqn), TW_ERR_INVAL);
}

static void test_ms(void)
{
	struct tw_sqn_ms ms, before;
	uint8_t b[6];

	CHECK_ERR(tw_sqn_ms_init(NULL, 5, 1, 0), TW_ERR_INVAL);
	CHECK_ERR(tw_sqn_ms_init(&ms, 7, 1, 0), TW_ERR_RANGE);
	CHECK_ERR(tw_sqn_ms_init(&ms, 5, 0, 0), TW_ERR_RANGE);

	CHECK_OK(tw_sqn_ms_init(&ms, 5, 1000, TW_SQN_L_NONE));
	tw_sqn_ms_get(&ms, b);
	CHECK(tw_load_be48(b) == 0);
	/* C.2.1: SEQ 0 is never fresh; SEQ 1 is. */
	CHECK_ERR(ms_offer(&ms, mk(0, 4, 5)), TW_ERR_SYNC);
	CHECK_OK(ms_offer(&ms, mk(100, 4, 5)));
	tw_sqn_ms_get(&ms, b);
	CHECK(tw_load_be48(b) == mk(100, 4, 5));
	CHECK_ERR(ms_offer(&ms, mk(100, 4, 5)), TW_ERR_SYNC); /* replay */
	CHECK_ERR(ms_offer(&ms, mk(99, 4, 5)), TW_ERR_SYNC);  /* older, same slot */
	CHECK_OK(ms_offer(&ms, mk(50, 5, 5)));                /* older, other slot */
	tw_sqn_ms_get(&ms, b);
	CHECK(tw_load_be48(b) == mk(100, 4, 5));
	/* C.2.2: SEQ - SEQ_MSmax <= Δ, at the boundary and one past it. */
	CHECK_OK(ms_check(&ms, mk(1100, 0, 5)));
	CHECK_ERR(ms_check(&ms, mk(1101, 0, 5)), TW_ERR_SYNC);
	CHECK_ERR(ms_check(&ms, mk(1101, 4, 5)), TW_ERR_SYNC);
	before = ms;
	CHECK_ERR(ms_offer(&ms, mk(1101, 0, 5)), TW_ERR_SYNC);
	CHECK_MEM(&ms, &before, sizeof(ms)); /* a refused SQN changes nothing */
	CHECK_OK(ms_offer(&ms, mk(1100, 0, 5)));
	tw_sqn_ms_get(&ms, b);
	CHECK(tw_load_be48(b) == mk(1100, 0, 5));
	CHECK_OK(ms_check(&ms, mk(2100, 31, 5)));

	/* C.2.3: SEQ_MSmax - SEQ <= L, only when L is configured. */
	CHECK_OK(tw_sqn_ms_init(&ms, 5, TW_SQN_DELTA_DEFAULT, 10));
	CHECK_OK(ms_offer(&ms, mk(100, 0, 5)));
	CHECK_OK(ms_offer(&ms, mk(90, 1, 5)));
	CHECK_ERR(ms_offer(&ms, mk(89, 2, 5)), TW_ERR_SYNC);
	CHECK_OK(tw_sqn_ms_init(&ms, 5, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE));
	CHECK_OK(ms_offer(&ms, mk(100, 0, 5)));
	CHECK_OK(ms_offer(&ms, mk(1, 2, 5)));

	/* IND of 0 bits: a single counter. */
	CHECK_OK(tw_sqn_ms_init(&ms, 0, 5, TW_SQN_L_NONE));
	CHECK_OK(ms_offer(&ms, 3));
	CHECK_ERR(ms_offer(&ms, 3), TW_ERR_SYNC);
	CHECK_OK(ms_offer(&ms, 8));
	CHECK_ERR(ms_offer(&ms, 14), TW_ERR_SYNC);
	/* The top of the SEQ range. */
	CHECK_OK(tw_sqn_ms_init(&ms, 6, (uint64_t)1 << 42, TW_SQN_L_NONE));
	CHECK_OK(ms_offer(&ms, ((uint64_t)1 << 48) - 1));
	tw_sqn_ms_get(&ms, b);
	CHECK(tw_load_be48(b) == ((uint64_t)1 << 48) - 1);
	ms.delta = 0;
	CHECK_ERR(ms_check(&ms, 1), TW_ERR_INVAL);
}

/* Random HE -> MS runs: a node with `count` slots issues a batch of
 * `count` SQNs; delivered in any order, each is accepted exactly once. */
static void test_random_runs(void)
{
	bool all = true;

	for (int i = 0; i < 5000; i++) {
		struct tw_sqn_he he;
		struct tw_sqn_ms ms;
		uint64_t batch[TW_SQN_MS_SLOTS_MAX];
		uint32_t r = tw_test_random_u32();
		unsigned ind_bits = r % 7, slots = 1u << ind_bits;
		unsigned first = (r >> 3) % slots, count = 1 + (r >> 9) % (slots - first);
		uint8_t b[6];

		all &= tw_sqn_he_init(&he, ind_bits, first, count, tw_test_random_u32()) == TW_OK;
		all &= tw_sqn_ms_init(&ms, ind_bits, TW_SQN_DELTA_DEFAULT, TW_SQN_L_NONE) == TW_OK;
		/* The USIM last accepted SEQ_HE (a random u32 may be beyond Δ
		 * of a new card, so it is set, not offered). */
		ms.seq_ms[first] = he.seq_he;
		for (int round = 0; round < 3; round++) {
			for (unsigned j = 0; j < count; j++) {
				all &= tw_sqn_he_next(&he, b) == TW_OK;
				batch[j] = tw_load_be48(b);
			}
			/* Fisher-Yates shuffle of the batch. */
			for (unsigned j = count; j > 1; j--) {
				unsigned k = tw_test_random_u32() % j;
				uint64_t t = batch[j - 1];

				batch[j - 1] = batch[k];
				batch[k] = t;
			}
			for (unsigned j = 0; j < count; j++)
				all &= ms_offer(&ms, batch[j]) == TW_OK;
			for (unsigned j = 0; j < count; j++)
				all &= ms_offer(&ms, batch[j]) == TW_ERR_SYNC;
		}
		tw_sqn_ms_get(&ms, b);
		all &= tw_load_be48(b) >> ind_bits == he.seq_he;
		if (!all) {
			tw_note("random run %d: ind_bits %u slots %u+%u", i, ind_bits, first, count);
			break;
		}
	}
	CHECK(all);
}

void test_main(void)
{
	CHECK(tv_run_file("sqn.vec", vec_case) == 2);
	test_he();
	test_ms();
	test_random_runs();
}
