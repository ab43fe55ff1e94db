#!/bin/bash
# bench/kft/run.sh - the function-tracing benchmark: the SQLite workload of
# `make demo` (scripts/demo.sql on the sqlite3 shell, see
# scripts/sqlite-build.sh) run side by side, interleaved, under
#
#   plain        the -O2 build, not instrumented
#   empty        the -O2 -finstrument-functions build with empty hooks
#                (empty_hooks.c, preloaded like libktrace.so)
#   floor        the same build with floor_hooks.c preloaded: shadow stack,
#                two rdtsc and a 16-byte store per call, nothing else (what
#                any TSC-timed tracer pays at least)
#   kt-stream    ktrace record with its default options: every call kept,
#                streamed to disk through 8 MiB rings by the consumer
#                (the program's own calls and its library calls)
#   kt-stream-nolib  the same with --no-libcall: the program's own calls
#   kt-flight    ktrace record --flight, every call, flight recorder of 64 MiB
#                (all calls are written, the newest ~4M stay)
#   kt-mintime1  ktrace record --config "filter mintime 1" (1 us)
#   kt-funclist  ktrace record --config "filter funclist sqlite3BtreeInsert fend"
#   uf-pg        uftrace record on the -O2 -pg build (every call + libcalls)
#   uf-pg-t1us   uftrace record -t 1us on the -pg build
#   uf-pg-F      uftrace record -F sqlite3BtreeInsert on the -pg build
#   uf-inst      uftrace record on the -finstrument-functions build
#   kt-pg        ktrace record, every call, on the -pg build (lib/kft_pg.c)
#                and the library calls (lib/kft_plt.c), as uf-pg
#   kt-pg-nolib  ktrace record --no-libcall on the -pg build: its own calls
#   kt-pgf       ktrace record, every call, on the -pg -mfentry build
#   uf-pgf       uftrace record on the -pg -mfentry build
#   kt-patch     ktrace record, every call, on the -fpatchable-function-entry=5
#                build (every entry patched at start, lib/kft_patch.c)
#   kt-patch-F1  the same with funclist sqlite3BtreeInsert: that one entry patched
#   patch-untraced  the -fpatchable-function-entry=5 build run alone (NOPs)
#   uf-patch     uftrace record -P . on the patchable build (dynamic tracing)
#   uf-patch-F1  uftrace record -P sqlite3BtreeInsert on the patchable build
#   kt-dyn       ktrace record, every call, on the plain -O2 build: its
#                functions patched at run time (lib/kft_dynpatch.c)
#   kt-dyn-nolib the same with --no-libcall: the program's own calls
#   uf-dyn       uftrace record -P . on the plain build (dynamic tracing)
#   uf-dyn-nolib uftrace record --no-libcall -P . on the plain build
#
# and prints the table of docs/PERFORMANCE.md, "Function tracing (KFT) on
# SQLite": median wall and CPU (user + sys, all processes) seconds, ratio to
# plain, for ktrace the program's and the consumer's CPU apart and their
# peak memory (as `ktrace record` reports them), calls made and recorded,
# bytes on disk per recorded call, ns per call, records lost; then the
# start-up of the SQLite shell with every function patched (median of
# KFT_STARTUP_REPS runs; a tiny program's start-up is bench/startup/run.sh's).
#
#   bench/kft/run.sh BUILD_DIR [SRC_DIR]
#
# BUILD_DIR must hold ktrace and libktrace.so.0 (`make B=BUILD_DIR`).
# Environment:
#   KFT_REPS   timed repetitions of every row (default 3; the first, untimed,
#              run of each build warms the page cache)
#   KFT_ONLY   a regex of row names to run (default all; plain always runs)
#   KFT_WORK   where traces are written (default BUILD_DIR/bench/kft/work;
#              each trace is deleted after its row; kt-stream needs ~3 GB and
#              uf-inst ~7 GB free there for a moment)
#   KFT_STARTUP_REPS  runs of the start-up rows (default 20)
#   KTRACE_LIB another libktrace.so.0 for every ktrace row
#   KFT_ALT_LIB  a second libktrace.so.0: adds the rows kt-*+alt, the same
#              runs with that library, side by side with the tree's (to
#              measure a change of lib/ in one run)
#
# Output: BUILD_DIR/bench/kft/results.md (the table), raw.tsv (every run:
# row rep wall_s cpu_s setup_s recorded ondisk bytes lost note maxrss_kib
# prog_cpu_s cons_cpu_s prog_mib cons_mib), calls.txt, startup.md.
#
# ns per call = (median seconds - plain's median seconds) / calls made, where
# "calls made" is what the build executes: counted (untimed) with
# empty_hooks.c -DKFT_COUNT for the -finstrument-functions build; for
# uftrace, the calls its full record hooked (its events / 2: mcount calls
# plus the library calls it hooks through the PLT), counted by the uf-pg and
# uf-inst rows (count_mcount.c gives the -pg build's own calls, for the
# record).  uftrace's rows use the uf-pg divisor for -t and -F too.
# ktrace records library calls by default as uftrace does: its rows use the
# same divisors (uf-inst's for the -finstrument-functions build, uf-pg's for
# -pg; tests/kft_plt.sh checks that both tracers see the same library calls),
# but kt-pg-nolib and kt-stream-nolib, which use the build's own calls.
#
# Timings drift up to 2x on shared machines: rows are interleaved (one
# repetition of every row, then the next), and medians are compared.
#
# Exit status 0; 1 (with a one-line reason) when ktrace is missing, a build,
# the download or the call count fails.  A run whose output differs from
# the plain build's is kept and marked "output-differs" in raw.tsv.
set -u
export LC_ALL=C
B=${1:?usage: run.sh BUILD_DIR [SRC_DIR]}
B=$(cd "$B" && pwd) || exit 1
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd) || exit 1
O=$B/bench/kft
W=${KFT_WORK:-$O/work}
REPS=${KFT_REPS:-3}
ONLY=${KFT_ONLY:-.}
KT=$B/ktrace
SQL=$SRC/scripts/demo.sql
D=$B/demo
CC=${CC:-cc}

die() { echo "bench/kft: $*" >&2; exit 1; }
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
[ -x "$KT" ] || die "$KT is missing: run make B=$B first"
mkdir -p "$O" "$W" || die "cannot create $O or $W"
W=$(cd "$W" && pwd) || exit 1
# Run everything from $O: the -pg build writes gmon.out into its directory.
cd "$O" || exit 1

"$SRC/scripts/sqlite-build.sh" "$B" plain inst pg pgf patch || exit 1
"$CC" -O2 -Wall -Wextra -shared -fPIC -o "$O/empty_hooks.so" "$SRC/bench/kft/empty_hooks.c" ||
	die "cannot build empty_hooks.so"
"$CC" -O2 -Wall -Wextra -shared -fPIC -o "$O/floor_hooks.so" "$SRC/bench/kft/floor_hooks.c" ||
	die "cannot build floor_hooks.so"
"$CC" -O2 -Wall -Wextra -shared -fPIC -DKFT_COUNT -o "$O/count_hooks.so" \
	"$SRC/bench/kft/empty_hooks.c" -lpthread || die "cannot build count_hooks.so"
"$CC" -O2 -Wall -Wextra -shared -fPIC -o "$O/count_mcount.so" "$SRC/bench/kft/count_mcount.c" ||
	die "cannot build count_mcount.so"

have_uftrace=0
command -v uftrace >/dev/null 2>&1 && have_uftrace=1
[ $have_uftrace = 1 ] || echo "bench/kft: uftrace not installed (scripts/deps.sh --bench): its rows say n/a" >&2

# Calls made, counted once (untimed).
count_of() { sed -n 's/^kft-calls: //p' "$1" | tail -n 1; }
LD_PRELOAD=$O/count_hooks.so "$D/sqlite3-inst" :memory: < "$SQL" > "$O/expected.out" 2> "$O/count.err" ||
	die "the instrumented sqlite3 failed (see $O/count.err)"
CALLS_INST=$(count_of "$O/count.err")
LD_PRELOAD=$O/count_mcount.so "$D/sqlite3-pg" :memory: < "$SQL" > /dev/null 2> "$O/count.err" ||
	die "the -pg sqlite3 failed (see $O/count.err)"
CALLS_PG_MCOUNT=$(count_of "$O/count.err")
{ [ -n "$CALLS_INST" ] && [ -n "$CALLS_PG_MCOUNT" ]; } || die "could not count the calls (see $O/count.err)"
"$D/sqlite3-plain" :memory: < "$SQL" > "$O/plain.out" || die "the plain sqlite3 failed"
cmp -s "$O/plain.out" "$O/expected.out" || die "plain and instrumented builds disagree on $SQL"
{
	echo "calls_inst $CALLS_INST"
	echo "calls_pg_mcount $CALLS_PG_MCOUNT"
} > "$O/calls.txt"

printf 'filter mintime 1\n' > "$O/mintime1.kft"
printf 'filter funclist sqlite3BtreeInsert fend\n' > "$O/funclist.kft"

ROWS="plain empty floor kt-stream kt-stream-nolib kt-flight kt-mintime1 kt-funclist uf-pg uf-pg-t1us uf-pg-F uf-inst kt-pg kt-pg-nolib kt-pgf uf-pgf"
ROWS="$ROWS kt-patch kt-patch-F1 patch-untraced uf-patch uf-patch-F1 kt-dyn kt-dyn-nolib uf-dyn uf-dyn-nolib"
declare -A DESC BUF
DESC[plain]="plain -O2"
DESC[empty]="-finstrument-functions, empty hooks"
DESC[floor]="floor: shadow stack, 2 x rdtsc, 16-byte store"
DESC[kt-stream]="ktrace record (defaults: every call, streamed)"
DESC[kt-flight]="ktrace record --flight, every call"
DESC[kt-mintime1]="ktrace record, filter mintime 1"
DESC[kt-funclist]="ktrace record, filter funclist sqlite3BtreeInsert"
DESC[uf-pg]="uftrace record (-pg build)"
DESC[uf-pg-t1us]="uftrace record -t 1us (-pg)"
DESC[uf-pg-F]="uftrace record -F sqlite3BtreeInsert (-pg)"
DESC[uf-inst]="uftrace record (-finstrument-functions build)"
DESC[kt-pg]="ktrace record (-pg build, every call)"
DESC[kt-pg-nolib]="ktrace record --no-libcall (-pg build, own calls)"
DESC[kt-stream-nolib]="ktrace record --no-libcall (own calls, streamed)"
DESC[kt-pgf]="ktrace record (-pg -mfentry build, every call)"
DESC[uf-pgf]="uftrace record (-pg -mfentry build)"
DESC[kt-patch]="ktrace record (-fpatchable-function-entry=5 build, every call)"
DESC[kt-patch-F1]="ktrace record, funclist sqlite3BtreeInsert (patchable build)"
DESC[patch-untraced]="-fpatchable-function-entry=5 build, untraced"
DESC[uf-patch]="uftrace record -P . (patchable build)"
DESC[uf-patch-F1]="uftrace record -P sqlite3BtreeInsert (patchable build)"
DESC[kt-dyn]="ktrace record (plain build, patched at run time, every call)"
DESC[kt-dyn-nolib]="ktrace record --no-libcall (plain build, patched at run time)"
DESC[uf-dyn]="uftrace record -P . (plain build)"
DESC[uf-dyn-nolib]="uftrace record --no-libcall -P . (plain build)"
BUF[kt-dyn]="ring 32 x 256 KiB"
BUF[kt-dyn-nolib]="ring 32 x 256 KiB"
BUF[kt-patch]="ring 32 x 256 KiB"
BUF[kt-patch-F1]="ring 32 x 256 KiB"
BUF[kt-pg]="ring 32 x 256 KiB"
BUF[kt-pg-nolib]="ring 32 x 256 KiB"
BUF[kt-stream-nolib]="ring 32 x 256 KiB"
BUF[kt-pgf]="ring 32 x 256 KiB"
BUF[kt-stream]="ring 32 x 256 KiB"
BUF[kt-flight]="flight, 64 x 1 MiB"
BUF[kt-mintime1]="ring 32 x 256 KiB"
BUF[kt-funclist]="ring 32 x 256 KiB"
if [ -n "${KFT_ALT_LIB:-}" ]; then
	[ -r "$KFT_ALT_LIB" ] || die "KFT_ALT_LIB=$KFT_ALT_LIB cannot be read"
	for r in kt-stream kt-flight kt-mintime1 kt-funclist; do
		ROWS="$ROWS $r+alt"
		DESC[$r+alt]="${DESC[$r]} [KFT_ALT_LIB]"
		BUF[$r+alt]=${BUF[$r]}
	done
fi

wanted() { [ "$1" = plain ] || [[ $1 =~ $ONLY ]]; }

# The command of row $1 (trace into $W/t).
row_cmd() {
	local k=("$KT" record -o "$W/t")
	case "$1" in *+alt) k=(env "KTRACE_LIB=$KFT_ALT_LIB" "${k[@]}") ;; esac
	case "${1%+alt}" in
	plain) CMD=("$D/sqlite3-plain" :memory:) ;;
	empty) CMD=(env "LD_PRELOAD=$O/empty_hooks.so" "$D/sqlite3-inst" :memory:) ;;
	floor) CMD=(env "LD_PRELOAD=$O/floor_hooks.so" "$D/sqlite3-inst" :memory:) ;;
	kt-stream) CMD=("${k[@]}" -- "$D/sqlite3-inst" :memory:) ;;
	kt-stream-nolib) CMD=("${k[@]}" --no-libcall -- "$D/sqlite3-inst" :memory:) ;;
	kt-flight) CMD=("${k[@]}" --flight -b 1M -n 64 -- "$D/sqlite3-inst" :memory:) ;;
	kt-mintime1) CMD=("${k[@]}" --config "$O/mintime1.kft" -- "$D/sqlite3-inst" :memory:) ;;
	kt-funclist) CMD=("${k[@]}" --config "$O/funclist.kft" -- "$D/sqlite3-inst" :memory:) ;;
	uf-pg) CMD=(uftrace record -d "$W/t" "$D/sqlite3-pg" :memory:) ;;
	uf-pg-t1us) CMD=(uftrace record -t 1us -d "$W/t" "$D/sqlite3-pg" :memory:) ;;
	uf-pg-F) CMD=(uftrace record -F sqlite3BtreeInsert -d "$W/t" "$D/sqlite3-pg" :memory:) ;;
	uf-inst) CMD=(uftrace record -d "$W/t" "$D/sqlite3-inst" :memory:) ;;
	kt-pg) CMD=("${k[@]}" -- "$D/sqlite3-pg" :memory:) ;;
	kt-pg-nolib) CMD=("${k[@]}" --no-libcall -- "$D/sqlite3-pg" :memory:) ;;
	kt-pgf) CMD=("${k[@]}" -- "$D/sqlite3-pgf" :memory:) ;;
	uf-pgf) CMD=(uftrace record -d "$W/t" "$D/sqlite3-pgf" :memory:) ;;
	kt-patch) CMD=("${k[@]}" -- "$D/sqlite3-patch" :memory:) ;;
	kt-patch-F1) CMD=("${k[@]}" --config "$O/funclist.kft" -- "$D/sqlite3-patch" :memory:) ;;
	patch-untraced) CMD=("$D/sqlite3-patch" :memory:) ;;
	uf-patch) CMD=(uftrace record -P . -d "$W/t" "$D/sqlite3-patch" :memory:) ;;
	uf-patch-F1) CMD=(uftrace record -P sqlite3BtreeInsert -d "$W/t" "$D/sqlite3-patch" :memory:) ;;
	kt-dyn) CMD=("${k[@]}" -- "$D/sqlite3-plain" :memory:) ;;
	kt-dyn-nolib) CMD=("${k[@]}" --no-libcall -- "$D/sqlite3-plain" :memory:) ;;
	uf-dyn) CMD=(uftrace record -P . -d "$W/t" "$D/sqlite3-plain" :memory:) ;;
	uf-dyn-nolib) CMD=(uftrace record --no-libcall -P . -d "$W/t" "$D/sqlite3-plain" :memory:) ;;
	esac
}

status_val() { sed -n "s/^$1: \\([0-9]*\\).*/\\1/p" "$W/t/kft-status" 2>/dev/null | head -n 1; }

# Run row $1, repetition $2; append a line to raw.tsv.
run_row() {
	local row=$1 rep=$2 wall cpu setup="" rec=0 ondisk=0 bytes=0 lost=0 note="" st u s rss
	local pcpu=- ccpu=- pmib=- cmib=-
	case "$row" in uf-*) [ $have_uftrace = 1 ] || return 0 ;; esac
	rm -rf "$W/t"
	row_cmd "$row"
	/usr/bin/time -f '%e %U %S %M' -o "$O/time.txt" "${CMD[@]}" < "$SQL" > "$O/row.out" 2> "$O/row.err"
	read -r wall u s rss < <(tail -n 1 "$O/time.txt")
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
	cmp -s "$O/row.out" "$O/expected.out" || note="${note}output-differs;"
	case "$row" in
	kt-*)
		rec=$(status_val "entries kept")
		lost=$(status_val "entries lost")
		# The run starts once the buffers are allocated and pre-faulted.
		setup=$(awk -v us="$(status_val started)" 'BEGIN { printf "%.3f", us / 1e6 }')
		st=$(python3 "$SRC/bench/kft/tracestat.py" ktrace "$W/t") || note="${note}tracestat-failed;"
		ondisk=$(sed -n 's/.*records=\([0-9]*\).*/\1/p' <<< "$st")
		bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<< "$st")
		note="${note}stopped-by-$(sed -n 's/^stopped: [0-9]* us by //p' "$W/t/kft-status" | tr ' ' '-');"
		note="${note}unfinished=$(status_val "entries unfinished");"
		note="${note}exits-without-entry=$(status_val "exits without entry");"
		# `ktrace record`'s summary: the consumer's and the program's CPU and memory apart
		read -r ccpu cmib < <(sed -n 's/.*consumer CPU \([0-9.]*\) s, peak memory \([0-9.]*\) MiB.*/\1 \2/p' "$O/row.err")
		read -r pcpu pmib < <(sed -n 's/^ktrace record: [^ ]*: CPU \([0-9.]*\) s, peak memory \([0-9.]*\) MiB.*/\1 \2/p' "$O/row.err")
		;;
	uf-*)
		st=$(python3 "$SRC/bench/kft/tracestat.py" uftrace "$W/t") || note="${note}tracestat-failed;"
		ondisk=$(sed -n 's/.*records=\([0-9]*\).*/\1/p' <<< "$st")
		bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<< "$st")
		rec=$((ondisk / 2))
		ondisk=$rec
		grep -qi lost "$O/row.err" && note="${note}uftrace-reports-lost;"
		;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$rep" "$wall" \
		"$cpu" "${setup:--}" "${rec:-0}" "${ondisk:-0}" "${bytes:-0}" "${lost:-0}" "${note:--}" \
		"$rss" "${pcpu:--}" "${ccpu:--}" "${pmib:--}" "${cmib:--}" >> "$O/raw.tsv"
	printf '  %-16s rep %s: %6.2f s wall %6.2f s cpu  recorded %s\n' "$row" "$rep" "$wall" "$cpu" \
		"${rec:-0}" >&2
	rm -rf "$W/t"
	case "$row" in kt-stream*|uf-pg|uf-inst) sync ;; esac
}

echo "bench/kft: $CALLS_INST calls (-finstrument-functions), $CALLS_PG_MCOUNT mcount calls (-pg);" \
	"$REPS repetitions; traces in $W" >&2
printf '# row\trep\twall_s\tcpu_s\tsetup_s\trecorded\tondisk\tbytes\tlost\tnote\tmaxrss_kib\tprog_cpu_s\tcons_cpu_s\tprog_mib\tcons_mib\n' > "$O/raw.tsv"
# Warm the page cache (binaries, libraries).
"$D/sqlite3-plain" :memory: < "$SQL" > /dev/null
LD_PRELOAD=$O/empty_hooks.so "$D/sqlite3-inst" :memory: < "$SQL" > /dev/null
LD_PRELOAD=$O/empty_hooks.so "$D/sqlite3-pg" :memory: < "$SQL" > /dev/null 2>&1
"$D/sqlite3-patch" :memory: < "$SQL" > /dev/null
for rep in $(seq 1 "$REPS"); do
	for row in $ROWS; do
		if wanted "$row"; then run_row "$row" "$rep"; fi
	done
done

# The table.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -F'\t' -v r="$1" -v c="$2" '$1 == r && $c != "-" { print $c }' "$O/raw.tsv"; }
PLAIN_W=$(col plain 3 | median)
PLAIN_C=$(col plain 4 | median)
UF_PG_CALLS=$(col uf-pg 6 | median)
UF_INST_CALLS=$(col uf-inst 6 | median)
UF_SRC="counted by its full records"
if [ -z "$UF_PG_CALLS" ] || [ -z "$UF_INST_CALLS" ]; then
	UF_SRC="the rows uf-pg / uf-inst did not run: own calls without library calls used where missing"
fi
[ -n "$UF_PG_CALLS" ] || UF_PG_CALLS=$CALLS_PG_MCOUNT
[ -n "$UF_INST_CALLS" ] || UF_INST_CALLS=$CALLS_INST
{
	echo "| run | buffer | wall s | x plain | CPU s | program CPU s | consumer CPU s | peak MiB | calls made | calls recorded | B per recorded call | ns per call (wall) | ns per call (program CPU) | lost |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for row in $ROWS; do
		w=$(col "$row" 3 | median)
		[ -n "$w" ] || { wanted "$row" && echo "| ${DESC[$row]} | | n/a | | | | | | | | | | | |"; continue; }
		c=$(col "$row" 4 | median)
		rec=$(col "$row" 6 | median)
		ond=$(col "$row" 7 | median)
		byt=$(col "$row" 8 | median)
		lost=$(col "$row" 9 | sort -n | tail -n 1)
		rss=$(col "$row" 11 | median)
		pc=$(col "$row" 12 | median)
		cc=$(col "$row" 13 | median)
		pm=$(col "$row" 14 | median)
		cm=$(col "$row" 15 | median)
		case "$row" in
		plain) calls="" ;;
		uf-inst) calls=$UF_INST_CALLS ;;
		uf-*) calls=$UF_PG_CALLS ;;
		kt-pg|kt-pgf) calls=$UF_PG_CALLS ;; # -mfentry hooks the same functions
		kt-pg-nolib) calls=$CALLS_PG_MCOUNT ;;
		kt-stream-nolib) calls=$CALLS_INST ;;
		kt-patch) calls=$UF_PG_CALLS ;; # every entry patched: library calls included
		kt-dyn*|uf-dyn*) calls=$rec ;; # the functions each could patch: its own count
		kt-patch-F1|patch-untraced) calls=$CALLS_PG_MCOUNT ;; # the same functions have entries
		kt-*) calls=$UF_INST_CALLS ;; # library calls included
		*) calls=$CALLS_INST ;;
		esac
		buf=${BUF[$row]:-}
		case "$row" in uf-*) buf="uftrace default"; lost="not reported" ;; plain|empty|floor|patch-untraced) lost="" ;; esac
		awk -v d="${DESC[$row]}" -v buf="$buf" -v w="$w" -v c="$c" -v pw="$PLAIN_W" \
			-v pc="$PLAIN_C" -v calls="$calls" -v rec="$rec" -v ond="$ond" -v byt="$byt" \
			-v lost="$lost" -v row="$row" -v rss="$rss" -v prc="$pc" -v cc="$cc" -v pm="$pm" \
			-v cm="$cm" 'BEGIN {
			printf "| %s | %s | %.3f | %.2f | %.3f | ", d, buf, w, w / pw, c;
			if (prc != "") printf "%.3f | %.3f | %.1f + %.1f | ", prc, cc, pm, cm;
			else printf "%.3f | | %.1f | ", c, rss / 1024;
			if (calls == "") { printf "| | | | | |\n"; exit }
			printf "%.1fM | ", calls / 1e6;
			if (row == "empty" || row == "floor") printf "- | - | "; else {
				printf "%.2fM", rec / 1e6;
				if (ond != rec) printf " (%.2fM on disk)", ond / 1e6;
				printf " | %.1f | ", (ond > 0 ? byt / ond : 0) }
			printf "%.1f | %.1f | %s |\n", (w - pw) * 1e9 / calls,
				((prc != "" ? prc : c) - pc) * 1e9 / calls, lost
		}'
	done
} > "$O/results.md"
{
	echo
	echo "Calls made: $CALLS_INST by the -finstrument-functions build (counted), $CALLS_PG_MCOUNT mcount"
	echo "calls by the -pg build (counted); uftrace hooked $UF_PG_CALLS (-pg) and $UF_INST_CALLS"
	echo "(-finstrument-functions) calls, library calls included ($UF_SRC).  Plain: ${PLAIN_W} s wall, ${PLAIN_C} s CPU"
	echo "(medians of $REPS).  ktrace rows: the program's and the consumer's CPU and peak resident memory as"
	echo "ktrace record reports them (shared rings counted in both); other rows: all processes (GNU time)."
	LIBW=$(col kt-pg 3 | median)
	NOLIBW=$(col kt-pg-nolib 3 | median)
	if [ -n "$LIBW" ] && [ -n "$NOLIBW" ] && [ "$UF_PG_CALLS" -gt "$CALLS_PG_MCOUNT" ]; then
		awk -v a="$LIBW" -v b="$NOLIBW" -v n="$((UF_PG_CALLS - CALLS_PG_MCOUNT))" 'BEGIN {
			printf "Library calls (kt-pg - kt-pg-nolib): %.1fM calls, %.1f ns each (wall).\n",
				n / 1e6, (a - b) * 1e9 / n }'
	fi
	echo "ktrace: $($KT --version 2>/dev/null || echo "$KT"), lib ${KTRACE_LIB:-$B/libktrace.so.0}${KFT_ALT_LIB:+, KFT_ALT_LIB $KFT_ALT_LIB}; $(uftrace --version 2>/dev/null | head -n 1)"
	echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r), load before the run $LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
} >> "$O/results.md"
# Start-up with run-time patching: the SQLite shell with no input (it
# starts and exits at once), KFT_STARTUP_REPS times each (interleaved),
# median wall milliseconds.  A tiny program's start-up, beside uftrace's,
# is bench/startup/run.sh's.
python3 - "$KT" "$W" "${KFT_STARTUP_REPS:-20}" "$D" > "$O/startup.md" <<'PY' || die "start-up rows failed"
import shutil, statistics, subprocess, sys, time
kt, w, reps, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sq = d + "/sqlite3-plain"
rows = [("sqlite3 plain build, untraced", [sq, ":memory:"]),
        ("ktrace record -U . --no-libcall (sqlite3 plain: nothing patched)",
         [kt, "record", "-q", "-U", ".", "--no-libcall", "-o", w + "/s", "--", sq, ":memory:"]),
        ("ktrace record --no-libcall (sqlite3 plain: every function patched)",
         [kt, "record", "-q", "--no-libcall", "-o", w + "/s", "--", sq, ":memory:"])]
ms = {name: [] for name, _ in rows}
for _ in range(reps):
    for name, cmd in rows:
        t = time.perf_counter()
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ms[name].append((time.perf_counter() - t) * 1000)
        shutil.rmtree(w + "/s", ignore_errors=True)
med = {k: statistics.median(v) for k, v in ms.items()}
print("| start-up of the SQLite shell | median ms | over its plain run, ms |")
print("|---|---:|---:|")
for name, _ in rows:
    print(f"| {name} | {med[name]:.2f} | {med[name] - med[rows[0][0]]:.2f} |")
print()
print(f"Median of {reps} runs each, interleaved: the difference of the last two rows")
print("is what patching every function of the shell adds to its start.")
PY
cat "$O/startup.md" >> "$O/results.md"
cat "$O/results.md"
echo
echo "bench/kft: raw runs in $O/raw.tsv; notes of each ktrace row's first run:" >&2
awk -F'\t' '$1 ~ /^kt-/ && $2 == 1 { print "  " $1 ": " $10 }' "$O/raw.tsv" >&2
