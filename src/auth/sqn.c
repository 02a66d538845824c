/*
 * twag — SQN management, 3GPP TS 33.102 V17.0.0 Annex C (see
 * include/twag/sqn.h for the scheme this project chose and why).
 *
 * Sequence numbers are public (they travel concealed by AK only to stop
 * user tracking), so nothing here is wiped or constant-time.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/sqn.h"

/* C.1.1: SQN = SEQ || IND, 48 bits in all. */
static uint64_t seq_limit(unsigned ind_bits)
{
	return ((uint64_t)1 << (48 - ind_bits)) - 1;
}

static bool he_ok(const struct tw_sqn_he *he)
{
	if (he->ind_bits > TW_SQN_IND_BITS_MAX || he->ind_count == 0)
		return false;
	if ((unsigned)he->ind_first + he->ind_count > (1u << he->ind_bits))
		return false;
	if (he->ind_next >= he->ind_count)
		return false;
	return he->seq_he <= seq_limit(he->ind_bits);
}

int tw_sqn_he_init(struct tw_sqn_he *he, unsigned ind_bits, unsigned ind_first,
		   unsigned ind_count, uint64_t seq_he)
{
	if (he == NULL)
		return TW_ERR_INVAL;
	if (ind_bits > TW_SQN_IND_BITS_MAX || ind_count == 0 ||
	    ind_first >= (1u << ind_bits) || ind_count > (1u << ind_bits) - ind_first ||
	    seq_he > seq_limit(ind_bits))
		return TW_ERR_RANGE;
	he->seq_he = seq_he;
	he->ind_bits = (uint8_t)ind_bits;
	he->ind_first = (uint8_t)ind_first;
	he->ind_count = (uint8_t)ind_count;
	he->ind_next = 0;
	return TW_OK;
}

int tw_sqn_he_next(struct tw_sqn_he *he, uint8_t sqn[static 6])
{
	uint64_t seq, ind;

	if (he == NULL || sqn == NULL || !he_ok(he))
		return TW_ERR_INVAL;
	/* C.1.1.2: SEQ = SEQ_HE + 1. Exhaustion is an error: a wrapped SEQ
	 * would be rejected by every USIM (C.2.1) or, worse, replay one. */
	if (he->seq_he >= seq_limit(he->ind_bits))
		return TW_ERR_RANGE;
	seq = he->seq_he + 1;
	/* C.1.2: IND from this node's own slots, used in turn. */
	ind = (uint64_t)he->ind_first + he->ind_next;
	tw_store_be48(sqn, seq << he->ind_bits | ind);
	he->seq_he = seq;
	he->ind_next = (uint8_t)((he->ind_next + 1u) % he->ind_count);
	return TW_OK;
}

int tw_sqn_he_resync(struct tw_sqn_he *he, const uint8_t sqn_ms[static 6])
{
	if (he == NULL || sqn_ms == NULL || !he_ok(he))
		return TW_ERR_INVAL;
	/* §6.3.5 / C.3: SQN_HE is reset to SQN_MS; the next vector then
	 * carries SEQ_MS + 1, fresh in every array entry of the USIM. Always
	 * resetting (also backwards) is what the spec's reset branch does and
	 * is guaranteed to resynchronise whatever check (C.2.1-C.2.3) failed. */
	he->seq_he = tw_load_be48(sqn_ms) >> he->ind_bits;
	return TW_OK;
}

static bool ms_ok(const struct tw_sqn_ms *ms)
{
	return ms->ind_bits <= TW_SQN_IND_BITS_MAX && ms->delta != 0;
}

int tw_sqn_ms_init(struct tw_sqn_ms *ms, unsigned ind_bits, uint64_t delta, uint64_t l)
{
	if (ms == NULL)
		return TW_ERR_INVAL;
	if (ind_bits > TW_SQN_IND_BITS_MAX || delta == 0)
		return TW_ERR_RANGE;
	memset(ms, 0, sizeof(*ms));
	ms->ind_bits = (uint8_t)ind_bits;
	ms->delta = delta;
	ms->l = l;
	return TW_OK;
}

/* The entry holding SEQ_MSmax, the highest SEQ accepted anywhere. */
static unsigned ms_max_index(const struct tw_sqn_ms *ms)
{
	unsigned n = 1u << ms->ind_bits, best = 0;

	for (unsigned i = 1; i < n; i++)
		if (ms->seq_ms[i] > ms->seq_ms[best])
			best = i;
	return best;
}

int tw_sqn_ms_check(const struct tw_sqn_ms *ms, const uint8_t sqn[static 6])
{
	uint64_t v, seq, seq_max;
	unsigned ind;

	if (ms == NULL || sqn == NULL || !ms_ok(ms))
		return TW_ERR_INVAL;
	v = tw_load_be48(sqn);
	seq = v >> ms->ind_bits;
	ind = (unsigned)(v & ((1u << ms->ind_bits) - 1));
	seq_max = ms->seq_ms[ms_max_index(ms)];

	/* C.2.1: SEQ > SEQ_MS(IND). */
	if (seq <= ms->seq_ms[ind])
		return TW_ERR_SYNC;
	/* C.2.2: SEQ - SEQ_MS <= Δ against the highest accepted SEQ, so a
	 * forged-free but far-ahead SQN cannot exhaust the counter. */
	if (seq > seq_max && seq - seq_max > ms->delta)
		return TW_ERR_SYNC;
	/* C.2.3 (optional): SEQ_MS - SEQ <= L, an age limit on SQNs that
	 * arrive late in another array entry. */
	if (ms->l != TW_SQN_L_NONE && seq < seq_max && seq_max - seq > ms->l)
		return TW_ERR_SYNC;
	return TW_OK;
}

int tw_sqn_ms_accept(struct tw_sqn_ms *ms, const uint8_t sqn[static 6])
{
	uint64_t v;
	int rc;

	rc = tw_sqn_ms_check(ms, sqn);
	if (rc != TW_OK)
		return rc;
	v = tw_load_be48(sqn);
	ms->seq_ms[v & ((1u << ms->ind_bits) - 1)] = v >> ms->ind_bits;
	return TW_OK;
}

void tw_sqn_ms_get(const struct tw_sqn_ms *ms, uint8_t sqn_ms[static 6])
{
	unsigned i;

	if (ms == NULL || !ms_ok(ms)) {
		memset(sqn_ms, 0, 6);
		return;
	}
	/* SQN_MS = SEQ_MSmax || IND of its entry. */
	i = ms_max_index(ms);
	tw_store_be48(sqn_ms, ms->seq_ms[i] << ms->ind_bits | i);
}
