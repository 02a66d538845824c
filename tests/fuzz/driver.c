/*
 * Plain-file driver for the fuzz targets: without libFuzzer, each target
 * builds into a program that feeds it every file named on the command line
 * (or every file in a named directory), so the committed seed corpora run in
 * every ordinary test build. Prints "N passed, 0 failed"; a crash or a
 * failed invariant (abort) is the failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static unsigned long runs;

static void run_file(const char *path)
{
	static unsigned char buf[1 << 20];
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* A private copy of exactly n bytes, so ASan sees any overread. */
	unsigned char *copy = malloc(n ? n : 1);
	if (copy == NULL)
		exit(1);
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	runs++;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			run_file(argv[i]);
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		if (d == NULL)
			return 1;
		while ((e = readdir(d)) != NULL) {
			char p[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			run_file(p);
		}
		closedir(d);
	}
	printf("%s: %lu passed, 0 failed\n", argv[0], runs);
	return runs > 0 ? 0 : 1;
}
