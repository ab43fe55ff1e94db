/*
 * fuzz/fuzz_kft_ksyms.c - libFuzzer target of the kernel symbol filter of
 * `ktrace kft --kernel extract -m System.map` (kclient/ksyms.c): any input
 * gives output no longer than the input plus one newline, made only of
 * lines "HEX TYPE NAME..." with a function type, and counts that agree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kclient/ksyms.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = malloc(size + 1);
	size_t kept, nonzero, n, lines = 0;

	if (!out)
		return 0;
	n = kft_ksyms_filter((const char *)data, size, out, &kept, &nonzero);
	if (n > size + 1 || nonzero > kept)
		abort();
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(out + i, '\n', n - i);
		size_t j = i;

		if (!nl)
			abort(); /* every line ends in a newline */
		while (out[j] != ' ')
			j++;
		if (j == i || j - i > 16 || !memchr("tTwW", out[j + 1], 4) || out[j + 2] != ' ')
			abort();
		lines++;
		i = (size_t)(nl - out) + 1;
	}
	if (lines != kept)
		abort();
	free(out);
	return 0;
}
