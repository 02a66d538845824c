/*
 * twag — memory for the large tables looked up on the packet path
 * (identity table, subscriber record chains, duplicate cache, EAP
 * sessions).
 *
 * Such a table is tens of megabytes read at random: with 4 KiB pages nearly
 * every look-up misses the TLB as well as the cache. These allocations are
 * mapped directly, aligned to 2 MiB and marked for transparent huge pages
 * (madvise MADV_HUGEPAGE: honoured when the system's THP setting is
 * "madvise" or "always", ignored otherwise). The memory is zeroed and is
 * committed as it is first touched, like calloc's, but in 2 MiB steps
 * where huge pages are in use.
 */
#ifndef TWAG_MEM_H
#define TWAG_MEM_H

#include <stddef.h>

#include "twag/err.h"

/* count * size zeroed octets, or NULL (overflow, no memory, count or size 0). */
void *tw_table_alloc(size_t count, size_t size);
/* Frees what tw_table_alloc(count, size) returned (NULL: nothing). The
 * contents are not wiped: a table holding secrets wipes them first. */
void tw_table_free(void *p, size_t count, size_t size);
/* Commits the whole of what tw_table_alloc(count, size) returned now
 * (MADV_POPULATE_WRITE, or a write to each page where the kernel lacks
 * it), so that no page fault, each a 2 MiB zeroing with huge pages, falls
 * on the packet path later: for the tables every packet writes to in
 * turn (the duplicate cache), which a long-running server fills whole
 * anyway. Call it before other threads use the table (where the kernel
 * lacks MADV_POPULATE_WRITE each page is read and written back). The
 * contents are unchanged. TW_OK, or TW_ERR_NOMEM when the
 * memory could not be committed (a start-up error, not a later kill). */
TW_MUST_CHECK int tw_table_populate(void *p, size_t count, size_t size);

#endif
