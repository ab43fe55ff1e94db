/*
 * fuzz/fuzz_maskset.c - libFuzzer target for the maskset parser of
 * `ktrace record --kernel=MASKSET` (kclient/catalogue.c, compiled in here:
 * it has no library dependency).  The input is the specification text.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kclient/catalogue.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel[KTRACE_LKST_MAX_ID];
	char err[256], *spec = malloc(size + 1);
	int n;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	n = krec_parse_maskset(spec, sel, err, sizeof(err));
	if (n < 0 && !memchr(err, 0, sizeof(err)))
		abort(); /* the message must be a string */
	if (n > 0) {
		int count = 0;

		for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++)
			count += sel[i];
		if (count != n)
			abort(); /* the count is the number of selected events */
	}
	free(spec);
	return 0;
}
