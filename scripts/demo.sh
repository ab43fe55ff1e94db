#!/bin/sh
# scripts/demo.sh BUILD_DIR - `make demo`, the README's first command: trace
# a real program with the function tracer (KFT) and show where its time went.
#
# 1. scripts/sqlite-build.sh fetches the SQLite 3.52.0 amalgamation (from
#    the npm package sqlite3@6.0.1, sha256-checked, cached in demo/) and
#    builds the sqlite3 shell twice: plain -O2 and -O2 -finstrument-functions
#    (into BUILD_DIR/demo/; git ignores both places).
# 2. Runs the workload scripts/demo.sql (200k-row inserts, three indexes,
#    aggregates, joins, a window function, UPDATE/DELETE/CREATE TABLE AS on
#    an in-memory database) with the plain build and with the instrumented
#    build untraced, for comparison.
# 3. Runs it under `ktrace record` with its defaults, into BUILD_DIR/demo/trace:
#    every one of its ~197M calls kept (178M of its own and 18.5M calls
#    into libc through the PLT; about 360 MB in zstd frames, 3.2 GB raw:
#    the program writes into small rings in shared memory and `ktrace
#    record` streams them to disk as they fill), and checks that the traced
#    run printed the same results.
# 4. Prints `ktrace info`, `ktrace kd -v -n 20` (the 20 functions with the
#    most time; -v says how many calls were read and that none was lost),
#    the start of `ktrace kd -c` (the nested call trace) and of `ktrace
#    addr2sym`.
# 5. Records again with a uftrace-style option, `-F 'sqlite3Btree*'` (only
#    the b-tree layer's functions), and prints that profile.
#
# About a minute the first time (two builds of sqlite3.c), then ~1 minute.
# Environment: KTRACE_DEMO_CACHE (download cache, default demo/), CC.
# Exit status 0, or 1 with a one-line reason (no network, checksum, build or
# trace failure).
set -eu

B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
D=$B/demo
T=$D/trace
KT=$B/ktrace
SQL=$SRC/scripts/demo.sql

die() { echo "demo: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

[ -x "$KT" ] || die "$KT is missing: run make (or make B=$B) first"
[ -r "$SQL" ] || die "scripts/demo.sql is missing"

echo "== SQLite 3.52.0 shell: plain -O2 and -O2 -finstrument-functions"
"$SRC/scripts/sqlite-build.sh" "$B" plain inst || exit 1
echo "   $D/sqlite3-plain, $D/sqlite3-inst"

echo
echo "== the workload: $SQL on :memory:"
t0=$(now)
"$D/sqlite3-plain" :memory: < "$SQL" > "$D/plain.out" || die "the plain sqlite3 failed on $SQL"
echo "   plain build:                    $(since "$t0") s"
t0=$(now)
"$D/sqlite3-inst" :memory: < "$SQL" > "$D/inst.out" || die "the instrumented sqlite3 failed on $SQL"
echo "   -finstrument-functions, untraced: $(since "$t0") s  (glibc's empty hooks)"

echo
echo "== $KT record -o $T -- $D/sqlite3-inst :memory:     (every call)"
t0=$(now)
rc=0
"$KT" record -o "$T" -- "$D/sqlite3-inst" :memory: < "$SQL" > "$D/traced.out" || rc=$?
echo "   traced run: $(since "$t0") s"
[ "$rc" = 0 ] || die "ktrace record failed (exit status $rc); trace (if any) in $T"
cmp -s "$D/plain.out" "$D/traced.out" ||
	die "the traced run printed other results than the plain one (see $D/plain.out, $D/traced.out)"
echo "   results identical to the plain run ($(wc -l < "$D/plain.out") lines)"

echo
echo "== $KT info $T"
"$KT" info "$T" || die "ktrace info failed on $T"
echo
echo "== $KT kd -v -n 20 $T"
echo "   (microseconds as measured while tracing: each of the ~197M calls pays the"
echo "   hooks' ~20-90 ns, so the totals exceed the plain run's)"
"$KT" kd -v -n 20 "$T" || die "ktrace kd failed on $T"
echo
echo "== $KT kd -c $T | head -n 40"
# head closes the pipe early: kd stops there (SIGPIPE), which is fine.
"$KT" kd -c "$T" | head -n 40
echo
echo "== $KT addr2sym $T | head -n 24"
"$KT" addr2sym "$T" | head -n 24

echo
echo "== $KT record -F 'sqlite3Btree*' -o $T.btree -- $D/sqlite3-inst :memory:"
echo "   (uftrace's -F: only the b-tree layer's functions are recorded)"
t0=$(now)
rc=0
"$KT" record -q -F 'sqlite3Btree*' -o "$T.btree" -- "$D/sqlite3-inst" :memory: < "$SQL" \
	> "$D/traced.out" || rc=$?
echo "   traced run: $(since "$t0") s"
[ "$rc" = 0 ] || die "ktrace record -F failed (exit status $rc)"
"$KT" kd -n 10 "$T.btree" || die "ktrace kd failed on $T.btree"
echo
echo "demo: done. Try: $KT kd -t 1ms $T; $KT graph sqlite3BtreeInsert $T; $KT kd -c $T | less;"
echo "      bench/kft/run.sh $B for the costs"
