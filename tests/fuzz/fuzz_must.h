/*
 * MUST(c) for the fuzz targets' contract blocks: the condition, with the
 * file and line, on stderr before abort(), so a broken promise names
 * itself. nul is a NULL the compiler cannot see through (a literal NULL
 * passed where the prototype forbids it would be folded away).
 */
#ifndef FUZZ_MUST_H
#define FUZZ_MUST_H

#include <stdio.h>
#include <stdlib.h>

static void *volatile nul;

#define MUST(c)                                                                 \
	do {                                                                    \
		if (!(c)) {                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                \
		}                                                               \
	} while (0)

#endif
