/*
 * fuzz/pack_trace.c - pack a trace directory into one fuzz_reader input
 * (format in fuzz/fuzz_reader.h), to seed the corpus.
 *
 * Usage: pack_trace DIR OUT.  Files larger than 16 MiB are cut.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz_reader.h"

int main(int argc, char **argv)
{
	FILE *out;
	char *buf = malloc(1 << 24);

	if (argc != 3 || !buf) {
		fprintf(stderr, "usage: pack_trace DIR OUT\n");
		return 2;
	}
	out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	for (unsigned i = 0; i < FUZZ_NFILES; i++) {
		char path[4096];
		FILE *in;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", argv[1], fuzz_files[i]);
		in = fopen(path, "rb");
		if (!in)
			continue;
		len = fread(buf, 1, (1 << 24) - 1, in);
		fclose(in);
		fputc((int)i, out);
		fputc((int)(len & 0xff), out);
		fputc((int)((len >> 8) & 0xff), out);
		fputc((int)((len >> 16) & 0xff), out);
		fwrite(buf, 1, len, out);
	}
	free(buf);
	return fclose(out) ? 1 : 0;
}
