/*
 * twag — management of the AKA sequence number SQN (3GPP TS 33.102
 * V17.0.0 Annex C): the HE/AuC side that issues SQNs and the MS/USIM side
 * that checks their freshness.
 *
 *   SQN = SEQ || IND                                        (C.1.1, C.1.2)
 *
 * IND is the low ind_bits bits (5 by default, so a = 32 array entries; up
 * to TW_SQN_IND_BITS_MAX here so the USIM array has a fixed size) and SEQ
 * the remaining 48 - ind_bits high bits.
 *
 * HE side (C.1.1.2 / C.1.2): this project uses the per-subscriber counter
 * SEQ_HE (not the global counter GLC, not the time-based SEQ1 || SEQ2 of
 * C.1.1.3): each vector takes SEQ = SEQ_HE + 1. The IND part comes from the
 * slots this node may use (C.1.2: IND values are allocated per issuing
 * node/service so that vectors of different nodes do not invalidate each
 * other): ind_first .. ind_first + ind_count - 1, used in turn, so up to
 * ind_count vectors of one node may be consumed out of order. A SEQ that
 * would pass its maximum is an error (TW_ERR_RANGE), never a wrap/reuse.
 *
 * MS side (C.2): SEQ_MS(i) is the highest SEQ accepted with IND = i; SQN is
 * fresh iff SEQ > SEQ_MS(IND) (C.2.1), SEQ - SEQ_MSmax <= Δ (C.2.2,
 * wrap-around protection) and, if configured, SEQ_MSmax - SEQ <= L (C.2.3,
 * age limit). SEQ_MSmax is the highest SEQ accepted in any entry; the
 * SQN_MS a failed check puts into AUTS is SEQ_MSmax || its IND.
 *
 * HE resynchronisation (§6.3.5, C.3): on an AUTS whose MAC-S verifies, the
 * HE resets SEQ_HE to SEQ_MS so the next vector (SEQ_MS + 1) is accepted.
 * Rate-limiting resynchronisations per subscriber is the subscriber store's
 * job, not this module's.
 *
 * Nothing here is secret; nothing allocates.
 */
#ifndef TWAG_SQN_H
#define TWAG_SQN_H

#include <stdbool.h>
#include <stdint.h>

#include "twag/err.h"

enum {
	TW_SQN_LEN = 6,
	TW_SQN_IND_BITS_DEFAULT = 5, /* a = 32 entries */
	TW_SQN_IND_BITS_MAX = 6,     /* fixed-size array: 64 entries */
	TW_SQN_MS_SLOTS_MAX = 1 << TW_SQN_IND_BITS_MAX,
};

/* Δ (C.2.2), the suggested 2^28, and L (C.2.3) disabled. */
#define TW_SQN_DELTA_DEFAULT ((uint64_t)1 << 28)
#define TW_SQN_L_NONE ((uint64_t)0)

/* The HE/AuC record of one subscriber (part of struct tw_subscriber). The
 * caller persists it after every change, before a vector leaves. */
struct tw_sqn_he {
	uint64_t seq_he;   /* SEQ_HE: the highest SEQ issued (or learnt in resync) */
	uint8_t ind_bits;  /* length of IND in bits, 0..TW_SQN_IND_BITS_MAX */
	uint8_t ind_first; /* this node's IND slots: ind_first .. */
	uint8_t ind_count; /* .. ind_first + ind_count - 1 (ind_count >= 1) */
	uint8_t ind_next;  /* the slot the next vector uses, 0..ind_count-1 */
};

/* The USIM's SQN state (part of struct tw_usim). */
struct tw_sqn_ms {
	uint64_t seq_ms[TW_SQN_MS_SLOTS_MAX]; /* SEQ_MS(i), 0 = none accepted yet */
	uint64_t delta; /* Δ (C.2.2), >= 1 */
	uint64_t l;     /* L (C.2.3); TW_SQN_L_NONE = no age check */
	uint8_t ind_bits;
};

/*
 * Sets up an HE record: IND of ind_bits bits, this node's slots
 * ind_first .. ind_first + ind_count - 1, and SEQ_HE (0 for a new
 * subscriber). Returns TW_OK, TW_ERR_INVAL (NULL), or TW_ERR_RANGE
 * (ind_bits > TW_SQN_IND_BITS_MAX, ind_count 0, slots beyond 2^ind_bits, or
 * seq_he beyond the SEQ range).
 */
TW_MUST_CHECK int tw_sqn_he_init(struct tw_sqn_he *he, unsigned ind_bits, unsigned ind_first,
				 unsigned ind_count, uint64_t seq_he);

/*
 * C.1.1.2/C.1.2: the next SQN = (SEQ_HE + 1) || IND, with IND this node's
 * next slot; advances he. Returns TW_OK; TW_ERR_RANGE when SEQ is exhausted
 * (he untouched: SQNs are never reused); TW_ERR_INVAL for NULL or an
 * inconsistent record.
 */
TW_MUST_CHECK int tw_sqn_he_next(struct tw_sqn_he *he, uint8_t sqn[static 6]);

/*
 * §6.3.5 / C.3: after MAC-S verified, SEQ_HE = SEQ(SQN_MS), so the next
 * SQN is SEQ_MS + 1 in this node's next slot. Returns TW_OK or TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_sqn_he_resync(struct tw_sqn_he *he, const uint8_t sqn_ms[static 6]);

/*
 * Sets up a USIM's array with no SQN accepted yet. ind_bits as above, delta
 * >= 1 (TW_SQN_DELTA_DEFAULT), l = TW_SQN_L_NONE or the age limit.
 * Returns TW_OK, TW_ERR_INVAL (NULL) or TW_ERR_RANGE.
 */
TW_MUST_CHECK int tw_sqn_ms_init(struct tw_sqn_ms *ms, unsigned ind_bits, uint64_t delta,
				 uint64_t l);

/*
 * C.2.1-C.2.3: is SQN fresh? Does not change ms. Returns TW_OK, TW_ERR_SYNC
 * (not fresh: send AUTS with tw_sqn_ms_get()), or TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_sqn_ms_check(const struct tw_sqn_ms *ms, const uint8_t sqn[static 6]);

/*
 * Records SQN as accepted: SEQ_MS(IND) = SEQ. Call only after a successful
 * tw_sqn_ms_check() and MAC verification. Returns TW_OK, TW_ERR_SYNC (not
 * fresh: ms untouched) or TW_ERR_INVAL.
 */
TW_MUST_CHECK int tw_sqn_ms_accept(struct tw_sqn_ms *ms, const uint8_t sqn[static 6]);

/* SQN_MS for AUTS: SEQ_MSmax || the IND it was accepted with (all zero
 * before any acceptance). */
void tw_sqn_ms_get(const struct tw_sqn_ms *ms, uint8_t sqn_ms[static 6]);

#endif
