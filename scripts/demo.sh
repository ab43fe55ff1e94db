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
# 3. Runs it under `ktrace record --config scripts/demo.kft` (filter mintime 1: the
#    calls of 1 us or more; that file says why) into BUILD_DIR/demo/trace,
#    and checks that the traced run printed the same results.
# 4. Prints `ktrace kd -n 20` (the 20 functions with the most time) and the
#    start of `ktrace kd -c` (the nested call trace).  Until `ktrace kd`
#    exists it prints the first records of `ktrace print` instead.
#
# About a minute the first time (two builds of sqlite3.c), then ~15 s.
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
CONF=$SRC/scripts/demo.kft

die() { echo "demo: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

[ -x "$KT" ] || die "$KT is missing: run make (or make B=$B) first"
{ [ -r "$SQL" ] && [ -r "$CONF" ]; } || die "scripts/demo.sql or scripts/demo.kft is missing"

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
echo "== $KT record --config scripts/demo.kft --threads 1 -b 1M -n 64 -o $T -- $D/sqlite3-inst :memory:"
sed -n '/^[^#]/p' "$CONF" | sed 's/^/   config: /'
# One thread stream (the shell has one thread) of 64 MiB: room for ~4M
# calls, nearly three times what the filter keeps.
t0=$(now)
rc=0
"$KT" record --config "$CONF" --threads 1 -b 1M -n 64 -o "$T" -- "$D/sqlite3-inst" :memory: \
	< "$SQL" > "$D/traced.out" || rc=$?
echo "   traced run: $(since "$t0") s"
[ "$rc" = 0 ] || die "ktrace record failed (exit status $rc); trace (if any) in $T"
cmp -s "$D/plain.out" "$D/traced.out" ||
	die "the traced run printed other results than the plain one (see $D/plain.out, $D/traced.out)"
echo "   results identical to the plain run ($(wc -l < "$D/plain.out") lines)"

if "$KT" kd --help >/dev/null 2>&1; then
	echo
	echo "== $KT kd -n 20 $T"
	echo "   (microseconds as measured while tracing: each of the ~180M calls, kept or"
	echo "   filtered, pays the hooks' ~20 ns, so the totals exceed the plain run's)"
	"$KT" kd -n 20 "$T" || die "ktrace kd failed on $T"
	echo
	echo "== $KT kd -c $T | head -n 40"
	# head closes the pipe early: kd stops there (SIGPIPE), which is fine.
	"$KT" kd -c "$T" | head -n 40
else
	echo
	echo "== $KT print $T | head (ktrace kd is not built yet)"
	"$KT" print "$T" | head -n 10
fi
if "$KT" addr2sym --help >/dev/null 2>&1; then
	echo
	echo "== $KT addr2sym $T | head -n 24"
	"$KT" addr2sym "$T" | head -n 24
fi
echo
echo "demo: done. Try: $KT kd -t 1000 $T; $KT kd -c $T | less; bench/kft/run.sh $B for the costs"
