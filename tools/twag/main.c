/* twag — command-line front end to libtwag (placeholder main, see cli). */
#include <stdio.h>

int main(void)
{
	puts("twag");
	return 0;
}
