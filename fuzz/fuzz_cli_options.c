/*
 * fuzz/fuzz_cli_options.c - libFuzzer target for the option parsers that
 * take free text: times and ranges of the readers (cli_parse_time(),
 * cli_parse_range(), cli/select.c: `--time-range`, `-t 100us`) and the
 * uftrace-style options of `ktrace record` (rec_opts_add() and
 * rec_opts_check(), cli/record_opts.c: -F -N -D -t -T, turned into KFT
 * configuration lines).  The files are compiled in, as fuzz_maskset.c does.
 *
 * Input: NUL-separated strings.  Each is parsed as a time (bare number in
 * ns and in us) and as a range, then given to rec_opts_add() as the value
 * of the option its first byte names (F N D t T; other bytes pick one).  Besides crashes and sanitizer
 * reports the target checks:
 *   - a time with a unit means the same whatever a bare number's unit is;
 *     a bare number in us is 1000 times the same number in ns;
 *   - each end of a range that parses is absolute or relative, and two
 *     ends of one kind are in order;
 *   - every option rec_opts_add() accepted yields configuration text the
 *     KFT parser accepts (rec_opts_check() succeeds): record never starts
 *     a program with a configuration it generated wrongly.
 *
 * cli_error()'s messages go to the fuzzer's log (run with -close_fd_mask=2
 * to silence them by hand; the crash report then goes too).
 *
 * Build and run: make -C fuzz SRC=$PWD (see fuzz/Makefile).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/safefile.h" /* lib/safefile.c is linked (fuzz/Makefile LIBSRC) */
#include "cli/cli_util.c"
#include "cli/select.c"
#include "cli/record_opts.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_time(const char *s)
{
	uint64_t ns1 = 0, ns1000 = 0;
	int r1 = cli_parse_time(s, 1, &ns1), r1000 = cli_parse_time(s, 1000, &ns1000);

	if (r1 == 0 && r1000 == 0 && ns1000 != ns1 && ns1000 != ns1 * 1000)
		abort(); /* a bare unit changes only a bare number */
}

static void check_range(const char *s)
{
	uint64_t from = 7, to = 7;
	int from_rel = 7, to_rel = 7;

	if (cli_parse_range(s, &from, &from_rel, &to, &to_rel) < 0)
		return;
	if ((from_rel != 0 && from_rel != 1) || (to_rel != 0 && to_rel != 1))
		abort(); /* each end is absolute or relative */
	if (from_rel == to_rel && from > to)
		abort(); /* ends of one kind are in order */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char letters[] = "FNDtT";
	struct rec_opts o;
	char *buf = malloc(size + 1);
	size_t at = 0;
	int all_ok = 1, n = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	memset(&o, 0, sizeof(o));
	while (at <= size && n < 16) {
		char *s = buf + at;
		size_t len = strlen(s);

		check_time(s);
		check_range(s);
		if (len) {
			int opt = strchr(letters, s[0]) ? s[0] : letters[(unsigned char)s[0] % 5];

			if (rec_opts_add(&o, opt, s + 1) < 0)
				all_ok = 0;
			n++;
		}
		at += len + 1;
	}
	if (all_ok && o.text && rec_opts_check(&o, NULL, NULL, 0) < 0)
		abort(); /* accepted options made a configuration the engine refuses */
	rec_opts_free(&o);
	free(buf);
	return 0;
}
