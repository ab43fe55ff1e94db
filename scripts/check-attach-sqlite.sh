#!/bin/sh
# scripts/check-attach-sqlite.sh - `ktrace record -p PID` on a long-running
# SQLite shell built without hooks: attach, record 2 s, detach, 20 times
# in a row.
#
#   scripts/check-attach-sqlite.sh [BUILD_DIR]      (make test-attach-sqlite)
#
# Builds the plain SQLite shell (scripts/sqlite-build.sh BUILD_DIR plain:
# cc -O2 -g, no hooks -> BUILD_DIR/demo/sqlite3-plain) and starts ONE shell
# (in-memory database) reading SQL from a FIFO; it lives through every
# round.  Each statement prints a line this script computes beforehand
# (recursive CTEs over N rows, sums done here with awk), so every result
# is checked.  Each round (ROUNDS, default 20):
#   1. a long statement A (replace() over 100 000-character strings, one
#      replaceFunc call per row, ~0.9 s) is started, then
#      `ktrace record -p PID -o DIR` (every function of the shell patched,
#      the default; odd rounds end with SIGINT 2 s after record started,
#      even rounds with --duration 2s): A is running when record attaches;
#   2. while attached, statements E (abs() over 1 000-4 000 rows: SQLite
#      calls absFunc once per row, so the count(*) the shell prints is the
#      program's own count of absFunc calls) are fed one at a time, each
#      awaited, until 1.5 s after record started (one at least);
#   3. then a long statement D (instr() over 100 000-character strings,
#      ~2.4 s) is fed: it is running when record detaches.
# Checked per round: record exits 0 and says only that it attached, its
# summary line, and that it detached (no warning, nothing lost); every
# line the shell printed (in the window and outside it) is the expected
# one; the shell still runs, and its code (its r-xp mapping, read through
# /proc/PID/mem) is byte for byte what it was before the first attach;
# the trace's absFunc count equals the sum of the counts the E statements
# printed; A spanned the attach (the trace holds some of its replaceFunc
# calls, not all) and D the detach (some of its instrFunc calls, not
# all), and the calls open at the attach and at the detach are shown as
# unfinished (ktrace-record(1), "A running process"): shell_exec once per
# E statement, and once, unfinished, for each of A and D.  Between
# rounds, untraced statements of each kind are checked too.  At the end
# the shell gets .quit and must exit 0, every line printed, nothing on
# stderr.
#
# Prints one line per round (absFunc traced and counted, the unfinished
# calls at the detach, the attach time, record's wall time) and a summary.
# Every wait is bounded (statements 60 s, record 60 s, kd 300 s): the
# script always ends.  Takes ~5 s a round, ~100 s in all once SQLite is
# built (~1 min).  Not part of `make test` or .ci/run.
#
# BUILD_DIR (default build) holds the ktrace built by `make`.  Needs python3
# (for the kd CSV).  KTRACE_DEMO_CACHE: where the SQLite sources are cached
# (scripts/sqlite-build.sh).  ROUNDS=N: N rounds instead of 20.  KEEP=1
# keeps the working directory (the shell's output, every trace) and says
# where it is; otherwise it is removed, except after a failure, when it
# keeps the first failed round's trace.
#
# Exit status: 0 every round right; 1 a round failed (a result, a count,
# a record status, the shell died or hung); 2 usage or setup error (no
# ktrace built, the SQLite build failed, the shell did not start).
set -eu

me=check-attach-sqlite.sh
usage() { echo "usage: $me [BUILD_DIR]   (default: build; run make first)" >&2; exit 2; }
setup() { echo "$me: $*" >&2; exit 2; }

case "${1:-}" in -h|--help|-*) usage ;; esac
[ $# -le 1 ] || usage
B=${1:-build}
case "$B" in /*) ;; *) B=$(pwd)/$B ;; esac
ROUNDS=${ROUNDS:-20}
case "$ROUNDS" in ''|*[!0-9]*|0) setup "ROUNDS must be a positive number" ;; esac

KTRACE=$B/ktrace
[ -x "$KTRACE" ] || setup "$KTRACE not found: build ktrace first (make)"
command -v python3 >/dev/null 2>&1 || setup "python3 not found"
command -v timeout >/dev/null 2>&1 || setup "timeout (coreutils) not found"
date +%s%N | grep -q '^[0-9]*$' || setup "date +%s%N does not give nanoseconds (GNU date needed)"

"$(dirname "$0")/sqlite-build.sh" "$B" plain || setup "building the plain SQLite shell failed"
SQLITE=$B/demo/sqlite3-plain
nm "$SQLITE" 2>/dev/null | grep -q ' t absFunc$' ||
	setup "$SQLITE has no local function absFunc (nm): another SQLite?"

W=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-attach-sqlite-XXXXXX")
SPID=""
RPID=""
keep=${KEEP:-0}
# shellcheck disable=SC2317 # (called by the EXIT trap)
cleanup() {
	# only the processes this script started
	if [ -n "$RPID" ] && alive "$RPID"; then kill -INT "$RPID" 2>/dev/null || true; sleep 1; kill -KILL "$RPID" 2>/dev/null || true; fi
	exec 3>&-
	if [ -n "$SPID" ] && alive "$SPID"; then sleep 0.2; kill -KILL "$SPID" 2>/dev/null || true; fi
	if [ "$keep" = 1 ]; then
		echo "$me: files kept in $W" >&2
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 2' HUP INT TERM
# a write to the shell after it died fails (feed() says so) instead of killing the script
trap '' PIPE

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# process $1 runs (not gone, not a zombie)
alive() {
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	case "$st" in Z*|X*) return 1 ;; esac
	return 0
}

OUT=$W/out
: >"$W/expect"
nfed=0
# lines of OUT
nout() { wc -l <"$OUT" | tr -d ' '; }
# wait (at most $2 ms) until OUT has $1 lines: 0 it has, 1 timeout, 2 the shell is gone
wait_out() {
	dl=$(($(now_ms) + $2))
	while [ "$(nout)" -lt "$1" ]; do
		alive "$SPID" || { [ "$(nout)" -ge "$1" ] && return 0; return 2; }
		[ "$(now_ms)" -lt "$dl" ] || return 1
		sleep 0.01
	done
	return 0
}
# feed statement $2 whose line will be $1
feed() {
	printf '%s\n' "$2" >&3 2>/dev/null || { dead=1; why="the shell is gone (statement $((nfed + 1)) could not be written)"; }
	printf '%s\n' "$1" >>"$W/expect"
	nfed=$((nfed + 1))
}
# line $1 of OUT is the expected one: 0 yes, 1 (and $why set) no
line_ok() {
	got=$(sed -n "$1p" "$OUT")
	want=$(sed -n "$1p" "$W/expect")
	[ "$got" = "$want" ] && return 0
	why="statement $1: printed '$got', expected '$want'"
	return 1
}
# wait for the line of the last statement fed and check it; $1: timeout ms
await() {
	if wait_out "$nfed" "$1"; then :; else
		case $? in
		1) why="the shell printed nothing for $(($1 / 1000)) s (statement $nfed): hung?" ;;
		*) why="the shell died (statement $nfed)" ;;
		esac
		dead=1
		return 1
	fi
	line_ok "$nfed"
}

# The statements.  cte N: the rows 1..N.
cte() { echo "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<$1)"; }
# E: sum(abs(x-K)) over 1..N (1 <= K <= N): K(K-1)/2 + (N-K)(N-K+1)/2; absFunc once per row
stmt_e() { # TAG N K
	feed "$1|$2|$(($3 * ($3 - 1) / 2 + ($2 - $3) * ($2 - $3 + 1) / 2))" \
		"$(cte "$2") SELECT '$1', count(*), sum(abs(x-$3)) FROM c;"
}
# A: replace 'xx' by 'y' in WIDTH+x%7 x's: ceil((WIDTH+x%7)/2) characters left
WIDTH=100000
stmt_a() { # TAG N
	feed "$1|$2|$(awk -v n="$2" -v w=$WIDTH 'BEGIN { for (x = 1; x <= n; x++) { m = w + x % 7; s += int((m + 1) / 2) } printf "%d", s }')" \
		"$(cte "$2") SELECT '$1', count(*), sum(length(replace(printf('%.*c', $WIDTH+x%7, 'x'), 'xx', 'y'))) FROM c;"
}
# D: instr(WIDTH+x%7 x's then 'y', 'y'): WIDTH+x%7+1
stmt_d() { # TAG N
	feed "$1|$2|$(awk -v n="$2" -v w=$WIDTH 'BEGIN { for (x = 1; x <= n; x++) s += w + x % 7 + 1; printf "%d", s }')" \
		"$(cte "$2") SELECT '$1', count(*), sum(instr(printf('%.*c', $WIDTH+x%7, 'x') || 'y', 'y')) FROM c;"
}

# sha256 of the shell's code (its r-xp mapping, read through /proc/PID/mem)
text_sum() {
	m=$(awk -v f="$SQLITE" '$2 ~ /^r-xp/ && $6 == f { print $1; exit }' "/proc/$SPID/maps" 2>/dev/null)
	[ -n "$m" ] || { echo none; return; }
	lo=$(printf '%d' "0x${m%-*}")
	hi=$(printf '%d' "0x${m#*-}")
	dd if="/proc/$SPID/mem" bs=65536 iflag=skip_bytes,count_bytes skip="$lo" count=$((hi - lo)) 2>/dev/null |
		sha256sum | cut -d' ' -f1
}

# "name count unfinished" per function of trace $1 (as tests/helpers/tap.sh's kd_counts)
kd_rows() {
	timeout 300 "$KTRACE" kd --format=csv "$1" | python3 -c '
import csv, sys
for r in sorted(csv.DictReader(sys.stdin), key=lambda r: r["name"]):
    print(r["name"], r["count"], r["unfinished"])'
}
# count ($2 = 2) or unfinished ($2 = 3) of function $1 in $W/rows (0 if absent)
field() { awk -v n="$1" -v f="$2" '$1 == n { v = $f } END { print v + 0 }' "$W/rows"; }

# ---- the shell ----
mkfifo "$W/in"
"$SQLITE" <"$W/in" >"$OUT" 2>"$W/sqlite.err" &
SPID=$!
exec 3>"$W/in"
printf '.echo off\n.bail off\n' >&3
dead=0
why=""

# calibrate A and D to ~0.9 s and ~2.4 s on this machine (untraced): long
# enough to span the attach and the detach on a busy machine too
stmt_a cal.a 200
t=$(now_ms)
await 60000 || setup "the SQLite shell does not answer: $why"
ms_a=$(($(now_ms) - t))
stmt_d cal.d 1000
t=$(now_ms)
await 60000 || setup "the SQLite shell does not answer: $why"
ms_d=$(($(now_ms) - t))
text0=$(text_sum)
case "$text0" in none|e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)
	setup "cannot read the shell's code through /proc/$SPID/mem" ;;
esac
NA=$((200 * 900 / (ms_a > 0 ? ms_a : 1)))
ND=$((1000 * 2400 / (ms_d > 0 ? ms_d : 1)))
[ "$NA" -ge 20 ] || NA=20
[ "$ND" -ge 100 ] || ND=100

echo "SQLite shell built without hooks ($SQLITE), pid $SPID; each round: A $NA rows (replace, ~0.9 s)" \
	"across the attach, E statements (abs) for 1.5 s, D $ND rows (instr, ~2.4 s) across the detach"

# a failure of the round
fail() { fails="$fails${fails:+; }$*"; }
ok=0
ok_but_unf=0
attach_min=""
attach_max=0
first_bad=""
r=0
while [ "$r" -lt "$ROUNDS" ] && [ "$dead" = 0 ]; do
	r=$((r + 1))
	fails=""
	unf_note=""
	TR=$W/trace$r
	if [ $((r % 2)) = 1 ]; then mode=SIGINT; dur=""; else mode=--duration; dur="--duration 2s"; fi

	# untraced, before: one statement of each kind
	stmt_e "u$r.e" $((500 + r * 37)) $((1 + r * 13))
	await 60000 || fail "untraced: $why"
	stmt_a "u$r.a" 3
	[ "$dead" = 1 ] || await 60000 || fail "untraced: $why"
	stmt_d "u$r.d" 7
	[ "$dead" = 1 ] || await 60000 || fail "untraced: $why"
	[ "$dead" = 0 ] || { echo "round $r: FAIL: $fails"; break; }

	# A runs, then record attaches
	stmt_a "a$r" "$NA"
	sleep 0.1
	# emptied first: the last round's "attached" must not be seen before record opens it
	: >"$W/rec.err"
	: >"$W/rec.out"
	t0=$(now_ms)
	# shellcheck disable=SC2086
	"$KTRACE" record -p "$SPID" -o "$TR" $dur >"$W/rec.out" 2>"$W/rec.err" &
	RPID=$!
	while ! grep -q "attached to process" "$W/rec.err" && alive "$RPID" && [ $(($(now_ms) - t0)) -lt 60000 ]; do
		sleep 0.005
	done
	ta=$(now_ms)
	att=$((ta - t0))
	if ! grep -q "attached to process" "$W/rec.err"; then
		fail "record did not say it attached within $((att / 1000)) s"
	else
		[ -n "$attach_min" ] && [ "$attach_min" -le "$att" ] || attach_min=$att
		[ "$attach_max" -ge "$att" ] || attach_max=$att
	fi
	await 60000 || fail "A: $why"

	# E statements, one at a time, until 1.5 s after record started, one at least
	ne=0
	counted=0
	while [ "$dead" = 0 ] && { [ "$ne" = 0 ] || [ $(($(now_ms) - t0)) -lt 1500 ]; }; do
		ne=$((ne + 1))
		n=$((1000 + (r * 7919 + ne * 104729) % 3001))
		stmt_e "e$r.$ne" "$n" $((1 + (r * 31 + ne * 17) % n))
		if await 60000; then
			counted=$((counted + $(sed -n "${nfed}p" "$OUT" | cut -d'|' -f2)))
		else
			fail "E: $why"
		fi
	done

	# D runs across the detach: SIGINT 2 s after record started, or --duration
	stmt_d "d$r" "$ND"
	if [ "$mode" = SIGINT ]; then
		left=$((2000 - ($(now_ms) - t0)))
		[ "$left" -le 0 ] || sleep "$((left / 1000)).$(printf '%03d' $((left % 1000)))"
		kill -INT "$RPID" 2>/dev/null || true
	fi
	while alive "$RPID" && [ $(($(now_ms) - t0)) -lt 60000 ]; do
		sleep 0.01
	done
	t1=$(now_ms)
	if alive "$RPID"; then
		fail "record still runs 60 s after it started: hung (SIGINT, then SIGKILL)"
		kill -INT "$RPID" 2>/dev/null || true
		sleep 5
		kill -KILL "$RPID" 2>/dev/null || true
	fi
	wait "$RPID" && rrc=0 || rrc=$?
	RPID=""
	[ "$rrc" = 0 ] || fail "record exited $rrc"
	# what record said: attached, its summary, the calls open at the detach, detached; nothing else
	grep -v -e "^ktrace record: attached to process $SPID (1 threads): [0-9]* functions patched[,;] " \
		-e "^ktrace record: [0-9]* records, .* in [0-9]* sub-buffers; consumer CPU .*, peak memory .*$" \
		-e "^ktrace record: [0-9]* calls were open at the detach: recorded as unfinished$" \
		-e "^ktrace record: detached from process $SPID; trace in $TR$" "$W/rec.err" >"$W/rec.other" || true
	[ ! -s "$W/rec.other" ] || fail "record said: $(head -n 3 "$W/rec.other" | tr '\n' ' ')"
	[ ! -s "$W/rec.out" ] || fail "record printed on stdout: $(head -n 1 "$W/rec.out")"
	patched=$(sed -n 's/^ktrace record: attached to process [0-9]* ([0-9]* threads): \([0-9]*\) functions patched.*/\1/p' "$W/rec.err")

	# the trace
	if [ -d "$TR" ] && kd_rows "$TR" >"$W/rows" 2>"$W/kd.err"; then
		abs=$(field absFunc 2)
		absu=$(field absFunc 3)
		rep=$(field replaceFunc 2)
		ins=$(field instrFunc 2)
		sx=$(field shell_exec 2)
		sxu=$(field shell_exec 3)
		unf=$(awk '{ s += $3 } END { print s + 0 }' "$W/rows")
		{ [ "$abs" = "$counted" ] && [ "$absu" = 0 ]; } ||
			fail "absFunc: $abs calls traced ($absu unfinished), the shell counted $counted"
		{ [ "$rep" -gt 0 ] && [ "$rep" -lt "$NA" ]; } ||
			fail "replaceFunc: $rep calls traced, not between 1 and $((NA - 1)) (A across the attach)"
		{ [ "$ins" -gt 0 ] && [ "$ins" -lt "$ND" ]; } ||
			fail "instrFunc: $ins calls traced, not between 1 and $((ND - 1)) (D across the detach)"
		# shell_exec: once per E, and A's (open at the attach) and D's (open at the detach) unfinished
		unf_ok=1
		[ "$sx" = $((ne + 2)) ] && [ "$sxu" = 2 ] || unf_ok=0
		if [ "$unf_ok" = 0 ]; then
			fail "shell_exec: $sx calls ($sxu unfinished), expected $((ne + 2)) with 2 unfinished (E statements, A and D)"
			unf_note=""
		fi
	else
		fail "ktrace kd $TR failed: $(head -n 2 "$W/kd.err" 2>/dev/null | tr '\n' ' ')"
		abs=- rep=- ins=- sx=- sxu=- unf=- unf_ok=1
	fi

	# D ends (kd ran meanwhile); the shell runs on, its code as it was before the first attach
	await 60000 || fail "D: $why"
	alive "$SPID" || { fail "the shell died"; dead=1; }
	[ "$dead" = 1 ] || [ "$(text_sum)" = "$text0" ] || fail "after the detach the shell's code is not what it was"

	rec_s=$(((t1 - t0) / 1000)).$(printf '%02d' $(((t1 - t0) % 1000 / 10)))
	line=$(printf 'round %2d (%-10s): absFunc traced %6s, counted %6s (%2d statements); unfinished %s (open at the attach and at the detach); A %s/%s, D %s/%s calls; attach %4d ms (%s patched), record %s s' \
		"$r" "$mode" "$abs" "$counted" "$ne" "$unf" "$rep" "$NA" "$ins" "$ND" "$att" "${patched:-?}" "$rec_s")
	if [ -z "$fails" ] && [ "$unf_ok" = 1 ]; then
		echo "$line: ok"
		ok=$((ok + 1))
	elif [ -z "$fails" ]; then
		echo "$line: FAIL: $unf_note"
		ok_but_unf=$((ok_but_unf + 1))
	else
		echo "$line: FAIL: $fails${unf_note:+; $unf_note}"
	fi
	if [ "$keep" != 1 ]; then
		if [ -z "$fails" ] && [ "$unf_ok" = 1 ] || [ -n "$first_bad" ]; then
			rm -rf "$TR"
		else
			first_bad=$TR
		fi
	fi
done

# the end: .quit, exit 0, every line printed, nothing on stderr
end_ok=1
if [ "$dead" = 0 ]; then
	stmt_e "last" 100 50
	await 60000 || { echo "last statement: FAIL: $why"; end_ok=0; }
fi
printf '.quit\n' >&3 2>/dev/null || true
exec 3>&-
i=0
while alive "$SPID" && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
if alive "$SPID"; then
	echo "FAIL: the shell did not end 30 s after .quit (killed)"
	kill -KILL "$SPID" 2>/dev/null || true
	end_ok=0
fi
wait "$SPID" && src=0 || src=$?
SPID=""
if [ "$src" -gt 128 ]; then
	echo "FAIL: the shell was killed by signal $((src - 128)) ($(kill -l $((src - 128)) 2>/dev/null || echo '?'))"
	end_ok=0
	keep=1
elif [ "$src" != 0 ]; then
	echo "FAIL: the shell exited $src"
	end_ok=0
	keep=1
fi
if ! cmp -s "$OUT" "$W/expect"; then
	echo "FAIL: the shell's output is not the expected ($(nout) lines, $nfed expected; first difference, '<' printed, '>' expected):"
	diff "$OUT" "$W/expect" | head -n 6 | sed 's/^/  /'
	end_ok=0
fi
if [ -s "$W/sqlite.err" ]; then
	echo "FAIL: the shell wrote on stderr:"
	head -n 5 "$W/sqlite.err" | sed 's/^/  /'
	end_ok=0
fi
[ "$end_ok" = 0 ] || echo "the shell: $nfed statements answered right, exited 0 after .quit"
echo "attach time: ${attach_min:--} to $attach_max ms"
if [ "$ok_but_unf" -gt 0 ]; then
	echo "$me: $ok_but_unf rounds right except the calls open at the detach, which are not shown as unfinished"
fi
echo "$me: $ok of $ROUNDS rounds ok"
if [ "$ok" = "$ROUNDS" ] && [ "$end_ok" = 1 ]; then
	exit 0
fi
if [ -n "$first_bad" ]; then
	keep=1
	echo "$me: the first failed round's trace is $first_bad"
fi
exit 1
