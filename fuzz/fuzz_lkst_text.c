/*
 * fuzz/fuzz_lkst_text.c - libFuzzer target for the LKST maskset text parser
 * of `ktrace lkst write` (kclient/lkst_text.c, compiled in here: it has no
 * library dependency).  The input is the maskset text; handlers 1..255 by
 * number and DEFAULT, NOTHING, pid_switch by name exist.
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kclient/lkst_text.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_handler(const char *tok, void *arg)
{
	unsigned v;

	(void)arg;
	if (!lkst_parse_number(tok, &v))
		return v >= 1 && v <= 255 ? (int)v : -1;
	if (!strcasecmp(tok, "DEFAULT"))
		return 1;
	if (!strcasecmp(tok, "NOTHING"))
		return 255;
	if (!strcmp(tok, "pid_switch"))
		return 2;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char handler[KTRACE_LKST_MAX_ID];
	char err[128];
	int n, count = 0;

	n = lkst_text_parse((const char *)data, size, fuzz_handler, NULL, handler, err, sizeof(err));
	if (n < 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort(); /* a failure always says why, as a string */
		return 0;
	}
	for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++) {
		if (!handler[i])
			continue;
		if (!lkst_event_name(i))
			abort(); /* only catalogue events */
		count++;
	}
	if (count != n)
		abort();
	return 0;
}
