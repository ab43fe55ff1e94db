#!/bin/bash
# bench/attach/run.sh - the cost of `ktrace record -p PID` (attached to a
# running process) beside `ktrace record` from the program's start, and
# the speed of the process after the detach beside its untraced speed.
#
# The program is tests/kft/attach.c built plain (-O2, no hooks: both ways
# patch its functions at run time), with WORKERS threads (default 1: this
# machine kind has 2 CPUs, the consumer needs the other).  `spin MS` makes
# the workers call round() (31 calls: round, 10 step, 20 leaf) for MS
# milliseconds and report how many rounds they did.  Per repetition
# (REPS, default 7), interleaved:
#
#   untraced   a fresh process, not traced
#   start      the same under `ktrace record` from its start (every call)
#   attached   a fresh process with `ktrace record -p` attached (every call)
#   detached   that process again after the detach
#
# Printed: the median ns per round of each and the ratios attached/start
# and detached/untraced (1.00: back to its untraced speed); written to
# B/bench/attach.tsv.  Usage: bench/attach/run.sh BUILD_DIR SRC_DIR.
set -eu
B=$1
SRC=$2
REPS=${REPS:-7}
WORKERS=${WORKERS:-1}
MS=${MS:-1500}
K="$B/ktrace"
W=$(mktemp -d /tmp/ktrace-bench-attach.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -g -o "$W/attach" "$SRC/tests/kft/attach.c" -lpthread

# start PROG... reading commands from $W/in, answers in $W/out; sets pid
start() {
	rm -f "$W/in" "$W/out"
	mkfifo "$W/in"
	"$@" <"$W/in" >"$W/out" 2>/dev/null &
	pid=$!
	exec 3>"$W/in"
	wait_lines 1
}
wait_lines() {
	for _ in $(seq 400); do
		[ "$(cat "$W/out" 2>/dev/null | wc -l)" -ge "$1" ] && return 0
		sleep 0.02
	done
	echo "bench/attach: the program did not answer" >&2
	exit 1
}
# ns per round of one `spin MS`
spin() {
	local n
	n=$(wc -l <"$W/out")
	echo "spin $MS" >&3
	wait_lines $((n + 1))
	tail -1 "$W/out" | awk -v ms="$MS" -v w="$WORKERS" '{ split($3, r, "="); printf "%.1f\n", ms * 1e6 * w / r[2] }'
}
finish() {
	echo quit >&3
	exec 3>&-
	wait "$pid" 2>/dev/null || true
}

declare -A v
for rep in $(seq "$REPS"); do
	start "$W/attach" "$WORKERS"
	v[untraced]+="$(spin) "
	finish

	start "$K" record -q --no-libcall -o "$W/t1" "$W/attach" "$WORKERS"
	v[start]+="$(spin) "
	finish

	start "$W/attach" "$WORKERS"
	"$K" record -q -p "$pid" -o "$W/t2" 2>/dev/null &
	rec=$!
	sleep 0.5
	v[attached]+="$(spin) "
	kill -INT "$rec"
	wait "$rec"
	v[detached]+="$(spin) "
	finish
	rm -rf "$W/t1" "$W/t2"
done

med() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf '%-10s %12s   (ns per round of 31 calls, median of %d, %d worker(s))\n' case ns/round "$REPS" "$WORKERS"
: >"$B/bench/attach.tsv" 2>/dev/null || mkdir -p "$B/bench"
for c in untraced start attached detached; do
	m=$(echo "${v[$c]}" | med)
	eval "m_$c=$m"
	printf '%-10s %12s   all: %s\n' "$c" "$m" "${v[$c]}"
	printf '%s\t%s\n' "$c" "$m" >>"$B/bench/attach.tsv"
done
awk -v a="$m_attached" -v s="$m_start" -v d="$m_detached" -v u="$m_untraced" 'BEGIN {
	printf "attached / start:    %.2fx\ndetached / untraced: %.2fx\n", a / s, d / u
	printf "cost per call: start %.1f ns, attached %.1f ns\n", (s - u) / 31, (a - u) / 31 }' |
	tee -a "$B/bench/attach.tsv"
