/*
 * fuzz/fuzz_lkst_text.c - libFuzzer target for the LKST maskset text parser
 * of `ktrace lkst write` (kclient/lkst_text.c, compiled in here: it has no
 * library dependency).  The input is the maskset text; handlers 1..255 by
 * number and DEFAULT, NOTHING, pid_switch by name exist.  The same input,
 * its first line as FUNC[+OFFSET] and the rest as ARGS, goes to the hook
 * location parser lkst_hook_parse().
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

/* lkst_hook_parse(): a failure says why; a success gives a valid name. */
static void fuzz_hook(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1), *args, func[144], argstr[32], err[256];
	unsigned char argn[KTRACE_LKST_HOOK_MAX_ARGS];
	unsigned off;
	int n;

	if (!spec)
		return;
	memcpy(spec, data, size);
	spec[size] = '\0';
	args = strchr(spec, '\n');
	if (args)
		*args++ = '\0';
	n = lkst_hook_parse(spec, args, func, sizeof(func), &off, argn, argstr, sizeof(argstr), err,
			    sizeof(err));
	if (n < 0 && (!memchr(err, 0, sizeof(err)) || !err[0]))
		abort();
	if (n > KTRACE_LKST_HOOK_MAX_ARGS || (n >= 0 && (!func[0] || strlen(func) > 127 ||
							  off > 0xfffff)))
		abort();
	for (int i = 0; i < n; i++)
		if (argn[i] > 5)
			abort();
	free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char handler[KTRACE_LKST_MAX_ID];
	char err[128];
	int n, count = 0;

	fuzz_hook(data, size);
	n = lkst_text_parse((const char *)data, size, fuzz_handler, NULL, handler, err, sizeof(err));
	if (n < 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort(); /* a failure always says why, as a string */
		return 0;
	}
	for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++) {
		if (!handler[i])
			continue;
		if (!lkst_event_name(i) && !KTRACE_LKST_IS_HOOK(i))
			abort(); /* only catalogue events and hook ids */
		count++;
	}
	if (count != n)
		abort();
	return 0;
}
