#!/bin/sh
# bench/locks/run.sh B SRC - the cost of lock recording (`ktrace record
# --locks`): ns per uncontended pthread_mutex_lock/unlock pair of
# bench/locks/lockloop.c untraced, under `ktrace record` without --locks
# (libktrace preloaded, the lock shim not: should cost nothing), and with
# --locks (three 24-byte lock events per pair).  REPS runs each (default
# 5), the median printed; N pairs per run (default 1000000; 72 bytes of
# trace per pair).  Writes $B/bench/locks.tsv.  Run it on a quiet machine.
set -e
B=${1:?build dir}
SRC=${2:?source dir}
N=${BENCH_LOCK_PAIRS:-1000000}
REPS=${BENCH_REPS:-5}
O=$B/bench/locks
mkdir -p "$O"
cc -O2 -g -pthread -o "$O/lockloop" "$SRC/bench/locks/lockloop.c"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one() { # LABEL CMD...: REPS runs, the median ns/pair
	label=$1
	shift
	i=0
	: >"$O/runs"
	while [ "$i" -lt "$REPS" ]; do
		"$@" 2>/dev/null | awk '$1 == "ns_per_pair" { print $2 }' >>"$O/runs"
		rm -rf "$O/trace"
		i=$((i + 1))
	done
	printf '%s\t%s\n' "$label" "$(median <"$O/runs")"
}

{
	one untraced "$O/lockloop" "$N"
	one "ktrace record (no --locks)" "$B/ktrace" record -q -o "$O/trace" "$O/lockloop" "$N"
	one "ktrace record --locks" "$B/ktrace" record -q --locks -o "$O/trace" "$O/lockloop" "$N"
} >"$B/bench/locks.tsv"
echo "lock/unlock pair, ns (median of $REPS runs of $N pairs):"
column -t -s "$(printf '\t')" "$B/bench/locks.tsv"
