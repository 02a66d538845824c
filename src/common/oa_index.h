/*
 * twag — an index by open addressing, not a public header: the duplicate
 * cache (src/server/dupcache.c) and the store's identity table
 * (src/store/ident.c) find their entries through it.
 *
 * Linear probing over a power-of-2 count of 64-bit slots, at least twice
 * the entries (so every run ends at an empty slot). A slot holds an entry's
 * number + 1 in its low TW_OA_IDX_BITS (0: empty) and the entry's hash
 * above them; the hash's bits past TW_OA_IDX_BITS give the slot a probe
 * starts from (its home). A look-up compares the hash bits slot by slot and
 * reads an entry only when they match, so a miss costs the line or two of
 * its slots. Deletion shifts the later slots of the run back (no
 * tombstones).
 */
#ifndef TWAG_OA_INDEX_H
#define TWAG_OA_INDEX_H

#include <stdbool.h>
#include <stdint.h>

enum { TW_OA_IDX_BITS = 25 }; /* entry numbers + 1 up to 2^24 */

#define TW_OA_IDX_MASK ((UINT64_C(1) << TW_OA_IDX_BITS) - 1)

/* The slot a hash (or a slot's value, which keeps its bits) starts from;
 * mask is the slot count - 1. */
static inline uint32_t tw_oa_home(uint64_t h, uint32_t mask)
{
	return (uint32_t)(h >> TW_OA_IDX_BITS) & mask;
}

/* The hash bits a slot keeps (compare with a slot's value & ~TW_OA_IDX_MASK). */
static inline uint64_t tw_oa_tag(uint64_t h)
{
	return h & ~TW_OA_IDX_MASK;
}

/* The entry a non-empty slot names. */
static inline uint32_t tw_oa_entry(uint64_t v)
{
	return (uint32_t)(v & TW_OA_IDX_MASK) - 1;
}

/* Entry i, of hash h, into the first empty slot of its run; returns its
 * home (the caller keeps it for tw_oa_del). */
static inline uint32_t tw_oa_put(uint64_t *slots, uint32_t mask, uint64_t h, uint32_t i)
{
	uint32_t home = tw_oa_home(h, mask), s = home;

	while (slots[s] != 0)
		s = (s + 1) & mask;
	slots[s] = tw_oa_tag(h) | ((uint64_t)i + 1);
	return home;
}

/*
 * Entry i, whose home is home, out of the index. The hole it leaves is
 * filled by a later slot of the run whose home is not after the hole
 * (cyclically), and so on to the run's end, so that every entry stays
 * reachable from its home without an empty slot between. False (and
 * nothing changed) when no slot of the run names i.
 */
static inline bool tw_oa_del(uint64_t *slots, uint32_t mask, uint32_t home, uint32_t i)
{
	uint32_t s = home;

	while (slots[s] != 0 && (slots[s] & TW_OA_IDX_MASK) != (uint64_t)i + 1)
		s = (s + 1) & mask;
	if (slots[s] == 0)
		return false;
	for (uint32_t j = s;;) {
		uint64_t v;

		j = (j + 1) & mask;
		v = slots[j];
		if (v == 0)
			break;
		if (((j - tw_oa_home(v, mask)) & mask) >= ((j - s) & mask)) {
			slots[s] = v;
			s = j;
		}
	}
	slots[s] = 0;
	return true;
}

#endif
