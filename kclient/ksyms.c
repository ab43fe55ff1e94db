/*
 * kclient/ksyms.c - the kernel symbol filter of `ktrace kft --kernel
 * extract` and `ktrace kft --tracefs`: keep the function symbols of a
 * /proc/kallsyms or System.map text for the trace directory's `kallsyms`
 * file (docs/FORMAT.md, "Kernel traces").
 *
 * Pure: no I/O, no allocation, so fuzz/fuzz_kft_ksyms.c runs it directly
 * (a System.map given with -m is untrusted input).
 */
#include <stddef.h>
#include <string.h>

#include "kclient/kclient.h"

static int hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

size_t kft_ksyms_filter(const char *in, size_t len, char *out, size_t *kept, size_t *nonzero)
{
	size_t pos = 0, n = 0;

	*kept = *nonzero = 0;
	while (pos < len) {
		const char *line = in + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos, i = 0, digits = 0, name;
		int zero = 1;

		pos += ll + (nl ? 1 : 0);
		/* "ADDR TYPE NAME [MODULE]": 1..16 hex digits, a function type, a name. */
		for (; i < ll && hex_digit(line[i]); i++, digits++)
			zero &= line[i] == '0';
		if (!digits || digits > 16 || i + 3 > ll || line[i] != ' ' || line[i + 2] != ' ' ||
		    !memchr("tTwW", line[i + 1], 4))
			continue;
		name = i + 3;
		if (name >= ll || line[name] == ' ' || line[name] == '\t' || memchr(line, '\0', ll))
			continue;
		(*kept)++;
		*nonzero += !zero;
		memcpy(out + n, line, ll);
		n += ll;
		out[n++] = '\n';
	}
	return n;
}
