/* twag — the library's version, from the VERSION file (the Makefile passes
 * it as TW_VERSION). */
#include "twag/version.h"

#ifndef TW_VERSION
#error "TW_VERSION is set by the Makefile from the VERSION file"
#endif

const char *tw_version(void)
{
	return TW_VERSION;
}
