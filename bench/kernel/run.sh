#!/bin/bash
# bench/kernel/run.sh - kernel events without the module, and exports: the
# benchmark of docs/PERFORMANCE.md, "Kernel events via tracefs, and exports".
#
#   bench/kernel/run.sh BUILD_DIR [SRC_DIR]
#
# Part 1, recording.  The same load (pingpong.c: a fork/pipe ping-pong, a
# load made of context switches, wakeups and syscalls) run side by side,
# interleaved, KBENCH_REPS times each:
#
#   off      not traced
#   perf     perf record -a -e <the tracepoints of LKST's RDEFAULT maskset>
#            (4 MiB mmap buffer per CPU)
#   raw      a tracefs instance with the same tracepoints, clock mono, 4 MiB
#            per CPU, its trace_pipe_raw pages copied to files by rawread.c
#            the way ktrace reads them (poll at a quarter buffer, nice -10,
#            whole pages):
#            the ring buffer alone, no conversion
#   ktrace   ktrace record --kernel (RDEFAULT, 4 MiB per CPU, converted to
#            KEVENT records as it runs)
#
# The time is the load's own (its loop, as pingpong prints it), so set-up and
# tear-down of the tracers do not count.  Reported: median seconds, ratio to
# off, events recorded, bytes on disk per event, events lost.
#
# Part 2, exporting.  A trace of KBENCH_CALLS function calls (calls.c under
# `ktrace record --kernel`, one 16-byte CALL record per call) exported to
# /dev/null with `ktrace export` in each format: wall and CPU seconds (user +
# system; on a shared machine the CPU time is the steadier number), records
# per second, peak resident memory (/usr/bin/time).  Folded stacks sort every call (on
# disk beyond 64 MiB); KBENCH_FOLDED_CALLS (default: KBENCH_CALLS / 10) sets
# the size of its own, smaller trace when that is too slow.
#
# Environment: KBENCH_TRIPS (round trips, 200000), KBENCH_REPS (5),
# KBENCH_CALLS (100000000), KBENCH_FOLDED_CALLS, KBENCH_ONLY (regex of parts:
# record, export; default both), KBENCH_WORK (default BUILD_DIR/bench/kernel/
# work; part 2 needs about 1.8 GB per 100M calls there, and as much in
# $TMPDIR for the folded sort).
#
# Needs root (tracefs, perf -a).  Writes BUILD_DIR/bench/kernel/results.md
# (the tables) and raw.tsv (every run).  Shared machines drift: compare the
# rows of one run, not runs.
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR [SRC_DIR]}" && pwd)
SRC=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
O=$B/bench/kernel
W=${KBENCH_WORK:-$O/work}
TRIPS=${KBENCH_TRIPS:-200000}
REPS=${KBENCH_REPS:-5}
CALLS=${KBENCH_CALLS:-100000000}
FCALLS=${KBENCH_FOLDED_CALLS:-$((CALLS / 10))}
ONLY=${KBENCH_ONLY:-.}
KTRACE=$B/ktrace
TRACEFS=/sys/kernel/tracing
INST=kbench-raw-$$
TPS="sched:sched_switch sched:sched_wakeup signal:signal_generate task:task_newtask
     sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit
     sched:sched_wakeup_new irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry
     irq:softirq_exit exceptions:page_fault_user exceptions:page_fault_kernel
     raw_syscalls:sys_enter raw_syscalls:sys_exit"

log() { echo "kernel/run.sh: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (tracefs instances, perf -a)"
[ -x "$KTRACE" ] || die "$KTRACE missing: make B=$B first"
mkdir -p "$W" && chmod 0700 "$W" || exit 1
cc -O2 -o "$O/pingpong" "$SRC/bench/kernel/pingpong.c" || exit 1
cc -O2 -finstrument-functions -o "$O/calls" "$SRC/bench/kernel/calls.c" || exit 1
cc -O2 -o "$O/rawread" "$SRC/bench/kernel/rawread.c" || exit 1
[ -d "$TRACEFS/instances" ] || mount -t tracefs nodev "$TRACEFS" || die "no tracefs"

cleanup() {
	[ -d "$TRACEFS/instances/$INST" ] && { echo 0 >"$TRACEFS/instances/$INST/tracing_on"; rmdir "$TRACEFS/instances/$INST"; }
	rm -rf "$W"
}
trap cleanup EXIT

RAW=$O/raw.tsv
MD=$O/results.md
machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, kernel $(uname -r), $(perf --version 2>/dev/null)"
{
	echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine: $machine"
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# variant rep seconds events bytes lost reader_cpu_ns"
} >"$RAW"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
secs() { sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$1" | tail -1; }

run_off() {
	"$O/pingpong" "$TRIPS" >"$W/out" || return 1
	echo "$(secs "$W/out") 0 0 0 0"
}

run_perf() {
	local ev
	ev=$(echo $TPS | tr ' ' ',')
	rm -f "$W/perf.data"
	perf record -q -a -m 4M -e "$ev" -o "$W/perf.data" -- "$O/pingpong" "$TRIPS" >"$W/out" 2>"$W/err" || return 1
	local n lost
	perf report -i "$W/perf.data" --stats >"$W/stats" 2>/dev/null
	n=$(sed -n 's/^ *SAMPLE events: *\([0-9]*\).*/\1/p' "$W/stats" | head -1)
	lost=$(sed -n 's/^ *LOST events: *\([0-9]*\).*/\1/p' "$W/stats" | head -1)
	echo "$(secs "$W/out") ${n:-0} $(stat -c %s "$W/perf.data") ${lost:-0} 0"
}

run_raw() {
	local I=$TRACEFS/instances/$INST c n=0 lost=0 bytes=0 t
	mkdir "$I" || return 1
	echo 0 >"$I/tracing_on"
	echo mono >"$I/trace_clock"
	echo 4096 >"$I/buffer_size_kb"
	for t in $TPS; do echo 1 >"$I/events/${t%%:*}/${t#*:}/enable" 2>/dev/null; done
	"$O/rawread" "$I" "$W/raw" -- "$O/pingpong" "$TRIPS" >"$W/out" 2>"$W/err" || { rmdir "$I"; return 1; }
	for c in $(seq 0 $(($(nproc) - 1))); do
		n=$((n + $(sed -n 's/^read events: //p' "$I/per_cpu/cpu$c/stats")))
		lost=$((lost + $(sed -n 's/^overrun: //p' "$I/per_cpu/cpu$c/stats")))
		bytes=$((bytes + $(stat -c %s "$W/raw.cpu$c")))
	done
	rmdir "$I"
	rm -f "$W"/raw.cpu*
	echo "$(secs "$W/out") $n $bytes $lost 0"
}

run_ktrace() {
	rm -rf "$W/kt"
	"$KTRACE" record -q --kernel --kernel-buffer 4M -o "$W/kt" -- "$O/pingpong" "$TRIPS" >"$W/out" || return 1
	local m n lost bytes cpu
	m=$(grep '^# events ' "$W/kt/kernel/metadata")
	n=$(echo "$m" | awk '{ print $3 }')
	lost=$(echo "$m" | awk '{ print $5 }')
	cpu=$(echo "$m" | awk '{ print $9 }')
	bytes=$(cat "$W"/kt/kernel/cpu* | wc -c)
	rm -rf "$W/kt"
	echo "$(secs "$W/out") $n $bytes $lost ${cpu:-0}"
}

if [[ record =~ $ONLY ]]; then
	log "recording: $TRIPS round trips, $REPS reps, $machine"
	"$O/pingpong" 20000 >/dev/null # warm up
	for rep in $(seq 1 "$REPS"); do
		for v in off perf raw ktrace; do
			r=$(run_$v) || { log "$v failed"; r="0 0 0 0 0"; }
			echo "$v $rep $r" >>"$RAW"
			log "rep $rep $v: $r"
		done
	done
	{
		echo "### Recording kernel events: $TRIPS fork/pipe round trips, median of $REPS"
		echo
		echo "$machine; load average at start $(sed -n 's/^# load average at start: //p' "$RAW")"
		echo
		echo "| tracer | median s | x off | events | B/event | ns/event | lost | reader CPU ns/event |"
		echo "|---|---|---|---|---|---|---|---|"
	} >"$MD"
	off=$(awk '$1 == "off" { print $3 }' "$RAW" | median)
	for v in off perf raw ktrace; do
		s=$(awk -v v=$v '$1 == v { print $3 }' "$RAW" | median)
		ev=$(awk -v v=$v '$1 == v { print $4 }' "$RAW" | median)
		by=$(awk -v v=$v '$1 == v { print $5 }' "$RAW" | median)
		lo=$(awk -v v=$v '$1 == v { print $6 }' "$RAW" | median)
		rc=$(awk -v v=$v '$1 == v { print $7 }' "$RAW" | median)
		awk -v v=$v -v s="$s" -v off="$off" -v ev="$ev" -v by="$by" -v lo="$lo" -v rc="$rc" 'BEGIN {
			name = v == "off" ? "off (not traced)" : v == "perf" ? "perf record -a -e (same tracepoints)" : \
			       v == "raw" ? "tracefs raw (pages copied, rawread.c)" : "ktrace record --kernel";
			if (v == "off")
				printf "| %s | %.3f | 1.00 | | | | | |\n", name, s;
			else if (rc > 0)
				printf "| %s | %.3f | %.2f | %d | %.1f | %.0f | %d | %.0f |\n", name, s, s / off, ev,
				       (ev ? by / ev : 0), (ev ? (s - off) * 1e9 / ev : 0), lo, (ev ? rc / ev : 0);
			else
				printf "| %s | %.3f | %.2f | %d | %.1f | %.0f | %d | |\n", name, s, s / off, ev,
				       (ev ? by / ev : 0), (ev ? (s - off) * 1e9 / ev : 0), lo;
		}' >>"$MD"
	done
	echo >>"$MD"
fi

export_row() { # FORMAT TRACE RECORDS
	local out
	/usr/bin/time -o "$W/time" -f "%e %U %S %M" "$KTRACE" export --format="$1" -o /dev/null "$2" \
		2>"$W/export.err" || die "export --format=$1 failed: $(head -c 300 "$W/export.err")"
	out=$(tail -1 "$W/time")
	awk -v f="$1" -v r="$3" -v o="$out" 'BEGIN { split(o, a, " "); cpu = a[2] + a[3];
		printf "| %s | %d | %.1f | %.1f | %.2f | %.2f | %.0f |\n", f, r, a[1], cpu,
		       (a[1] > 0 ? r / a[1] / 1e6 : 0), (cpu > 0 ? r / cpu / 1e6 : 0), a[4] / 1024 }'
}

if [[ export =~ $ONLY ]]; then
	log "exporting: recording $CALLS calls"
	rm -rf "$W/big"
	nsub=$(( (CALLS * 16 + (64 << 20) - 1) / (64 << 20) + 2 ))
	"$KTRACE" record -q --threads 1 -b 64M -n "$nsub" --kernel -o "$W/big" -- "$O/calls" "$CALLS" || die "record failed"
	recs=$(( CALLS + $(sed -n 's/^# events \([0-9]*\) .*/\1/p' "$W/big/kernel/metadata") ))
	{
		echo "### Exporting a trace of $CALLS calls (+ its kernel events) to /dev/null"
		echo
		echo "| format | records | wall s | CPU s | M records/s (wall) | M records/s (CPU) | peak RSS MiB |"
		echo "|---|---|---|---|---|---|---|"
	} >>"$MD"
	for f in chrome csv; do
		log "export $f"
		export_row $f "$W/big" "$recs" >>"$MD"
	done
	if [ "$FCALLS" -ne "$CALLS" ]; then
		rm -rf "$W/big"
		nsub=$(( (FCALLS * 16 + (64 << 20) - 1) / (64 << 20) + 2 ))
		"$KTRACE" record -q --threads 1 -b 64M -n "$nsub" --kernel -o "$W/big" -- "$O/calls" "$FCALLS" || die "record failed"
		recs=$(( FCALLS + $(sed -n 's/^# events \([0-9]*\) .*/\1/p' "$W/big/kernel/metadata") ))
	fi
	log "export folded ($recs records)"
	export_row folded "$W/big" "$recs" >>"$MD"
	echo >>"$MD"
	rm -rf "$W/big"
fi
cat "$MD"
