#!/bin/sh
# tests/kd_threads.sh - kd's two-thread read (analysis/profile.c: a reader
# thread decodes batches of 4096 calls, the caller's thread counts them;
# issue 29) on traces long enough to cycle its 8 batches many times: the
# same output as one thread ($KTRACE_ONE_THREAD=1) for the table, the CSV
# and the call tree (-c), and the counts the program made.  CI runs it in
# the TSan build too (.ci/run), where a data race between the two threads
# fails the run.
. "$KTRACE_SRC/tests/helpers/tap.sh"
KTRACE_LIBCALL=0 # the program's own calls: it knows how many it made
export KTRACE_LIBCALL
cd "$T" || exit 1
cc -O1 -g -finstrument-functions -o stream "$KTRACE_SRC/tests/kft/stream.c" || exit 1
# What is checked is kd.  A TSan build of libktrace cannot run inside an
# uninstrumented program, so under TSan the traces are recorded by the
# plain build (.ci/run builds it first) and read by the TSan one.
# (TSan's kd is ~10 times slower: shorter traces, still 15 batches.)
REC=$KTRACE
N=300000 R=20000
if [ "${KTRACE_SAN:-}" = tsan ]; then
	N=60000 R=5000
	REC=$KTRACE_SRC/build/ktrace
	[ -x "$REC" ] || { echo "Bail out! KTRACE_SAN=tsan: $REC is missing (run make first)"; exit 1; }
else
	san_preload
fi

"$REC" record -q -o flat -- ./stream calls $N > /dev/null 2> rec1.err
ok $? "record: main -> loop -> $N x leaf"
"$REC" record -q -o deep -- ./stream recurse $R > /dev/null 2> rec2.err
ok $? "record: main -> deep($R) -> ... -> deep(1) (recursion: Time counted once)"

for d in flat deep; do
	for args in "" "--format=csv" "-c"; do
		# shellcheck disable=SC2086 # $args: no option or one word
		"$KTRACE" kd $args "$d" > "two$args.$d" 2> "two$args.$d.err"
		rc2=$?
		# shellcheck disable=SC2086
		KTRACE_ONE_THREAD=1 "$KTRACE" kd $args "$d" > "one$args.$d" 2> "one$args.$d.err"
		rc1=$?
		ok $([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ -s "one$args.$d" ] &&
			cmp -s "one$args.$d" "two$args.$d"; echo $?) \
			"$d: kd $args: two threads print what one prints ($(wc -l < "two$args.$d") lines)"
		sed 's/^/#   /' "two$args.$d.err"
	done
done
is "$(kd_counts flat "leaf loop main" | tr '\n' ' ')" "leaf $N loop 1 main 1 " "flat: the counts the program made"
is "$(kd_counts deep "deep main" | tr '\n' ' ')" "deep $R main 1 " "deep: the counts the program made"
# deep's Time is its outermost call's duration, which main's contains
python3 - two--format=csv.deep <<'PY'
import csv, sys
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[1]))}
d, m = int(rows["deep"]["total_ns"]), int(rows["main"]["total_ns"])
sys.exit(0 if 0 < d <= m else 1)
PY
ok $? "deep: Time counted once through $R levels of recursion (not above main's)"
done_testing
