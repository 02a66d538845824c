/*
 * twag-bench — heap bytes per operation, counted for real.
 *
 * The bench program defines malloc, calloc, realloc, free and the aligned
 * allocators itself; the dynamic linker binds every library's calls
 * (libcrypto, libosmocore, libc) to these first definitions, which count
 * the request in per-thread counters and forward to glibc's __libc_*
 * entry points. realloc counts the new size (the bytes it may copy into).
 *
 * Sanitizer builds replace malloc themselves, so there the hook is left out
 * and the heap columns read "n/a".
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_COUNT_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define BENCH_COUNT_HEAP 0
#endif
#endif
#if !defined(BENCH_COUNT_HEAP) && defined(__GLIBC__)
#define BENCH_COUNT_HEAP 1
#endif
#ifndef BENCH_COUNT_HEAP
#define BENCH_COUNT_HEAP 0
#endif

/* Initial-exec TLS in the executable itself: no allocation on first use,
 * so it is safe inside malloc. */
static _Thread_local uint64_t tl_bytes, tl_allocs;

uint64_t bench_heap_bytes(void)
{
	return tl_bytes;
}

uint64_t bench_heap_allocs(void)
{
	return tl_allocs;
}

bool bench_heap_counting(void)
{
	return BENCH_COUNT_HEAP;
}

#if BENCH_COUNT_HEAP
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
	tl_bytes += n;
	tl_allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	tl_bytes += n * size;
	tl_allocs++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	tl_bytes += n;
	tl_allocs++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

void *memalign(size_t align, size_t n);
void *memalign(size_t align, size_t n)
{
	tl_bytes += n;
	tl_allocs++;
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = memalign(align, n);
	if (!p && n)
		return ENOMEM;
	*out = p;
	return 0;
}
#endif
