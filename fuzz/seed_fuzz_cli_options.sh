#!/bin/sh
# fuzz/seed_fuzz_cli_options.sh CORPUS SRC OUT - seed option values for
# fuzz_cli_options: NUL-separated strings, the first byte of each names the
# option (F N D t T) whose value follows.
set -e
corpus=$1
i=0
for spec in 'Fmain' 'Nsqlite3Btree*' 'D10' 't100us' 'Tmain@trace-on' 'Tfoo@trace-off' \
	'1.5ms~2s' '~100ms' '12345~' 't1.5ms' 'D0' 'F0x401000' 'Tmain@bogus' 'F#x'; do
	i=$((i + 1))
	printf '%s' "$spec" >"$corpus/seed-$i"
done
printf 'Fmain\000D3\000t2ms\000Tmain@trace-on\000Nleaf' >"$corpus/seed-multi"
