/* Prints the TWAG_CPU levels this machine can run, one per line, narrowest
 * first; tests/run.sh runs every test program once per level. */
#include <stdio.h>
#include <stdlib.h>

#include "twag/cpu.h"

int main(void)
{
	uint32_t hw = tw_cpu_features_hw();

	puts("portable");
	if (hw & TW_CPU_AESNI)
		puts("aesni");
	if (hw & TW_CPU_AVX2)
		puts("avx2");
	if (hw & TW_CPU_VAES)
		puts("vaes");
	if (hw & TW_CPU_AVX512)
		puts("avx512");
	return 0;
}
