/*
 * twag — large tables on huge pages (see twag/mem.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "twag/err.h"
#include "twag/mem.h"

enum { HUGE_2M = 2u << 20 };

/* The mapping's length for count * size octets (0: overflow or empty). */
static size_t map_len(size_t count, size_t size)
{
	size_t n, page = (size_t)sysconf(_SC_PAGESIZE), unit;

	if (count == 0 || size == 0 || count > SIZE_MAX / size)
		return 0;
	n = count * size;
	unit = n >= HUGE_2M / 2 ? HUGE_2M : page;
	if (n > SIZE_MAX - 2 * (size_t)HUGE_2M)
		return 0;
	return (n + unit - 1) / unit * unit;
}

void *tw_table_alloc(size_t count, size_t size)
{
	size_t len = map_len(count, size), extra, lead;
	uint8_t *p;

	if (len == 0)
		return NULL;
	if (len % HUGE_2M != 0) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* map 2 MiB more, keep the aligned part */
	extra = HUGE_2M;
	p = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	lead = (HUGE_2M - (uintptr_t)p % HUGE_2M) % HUGE_2M;
	if (lead > 0)
		(void)munmap(p, lead);
	if (extra - lead > 0)
		(void)munmap(p + lead + len, extra - lead);
	p += lead;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);
#endif
	return p;
}

int tw_table_populate(void *p, size_t count, size_t size)
{
	size_t len = map_len(count, size), page = (size_t)sysconf(_SC_PAGESIZE);

	if (p == NULL || len == 0)
		return TW_ERR_INVAL;
#ifdef MADV_POPULATE_WRITE
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return TW_OK;
	if (errno == ENOMEM || errno == EFAULT
#ifdef EHWPOISON
	    || errno == EHWPOISON
#endif
	)
		return TW_ERR_NOMEM; /* the memory itself could not be committed */
#endif
	/* before Linux 5.14 (EINVAL), or the advice filtered (a sandbox's
	 * EPERM, ENOSYS): each page's first octet written back */
	for (size_t off = 0; off < len; off += page) {
		volatile uint8_t *b = (volatile uint8_t *)p + off;

		*b = *b;
	}
	return TW_OK;
}

void tw_table_free(void *p, size_t count, size_t size)
{
	if (p != NULL)
		(void)munmap(p, map_len(count, size));
}
