#!/bin/sh
# kmod/bench/bench_lkst.sh - the LKST part of the kernel benchmark, run in
# the test VM after bench.sh (ktrace.mode=bench, `make bench-kmod`).
#
# Two loads, each pinned to CPU 0:
#   context switches  pingpong: two processes bounce a byte through pipes
#                     (per round trip: 2 switches, 2 wakeups, 4 syscalls)
#   syscalls          sysloop: getppid() in a loop (per call: sys_enter and
#                     sys_exit)
# and three configurations, interleaved in each repetition:
#   off      nothing traced
#   ftrace   a tracefs instance of its own recording exactly the
#            tracepoints of ktrace's RDEFAULT maskset (the same events)
#   ktrace   ktrace.ko's LKST tracer with RDEFAULT (probes on the same
#            tracepoints, DEFAULT handler, per-CPU relay channel)
# Both tracers get 8 MiB per CPU in overwrite mode (ftrace's overwrite
# option, ktrace's flight recorder: lkst_flags=2), so neither drops and
# neither needs a reader.  Reported: median ns per operation, the median
# of per-repetition slowdown ratios against off, events per operation, and
# bytes per event (ftrace: its per-CPU stats; ktrace: the copy that
# `ktrace read` makes of the flight recorder, sub-buffer headers included).
M=/lib/modules-ktrace
T=/sys/kernel/tracing
L=/sys/kernel/debug/ktrace/lkst
ROUNDS=${LKST_ROUNDS:-20000}
CALLS=${LKST_CALLS:-200000}
REPS=${LKST_REPS:-11}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { paste "$1" "$2" | awk '{ print $1 / $2 }' | median | awk '{ printf "%.2f", $1 }'; }
load_pp() { pingpong -n "$ROUNDS" -c 0 | sed -n 's/.*ns_per_round //p'; }
load_sc() { sysloop -n "$CALLS" -c 0 | sed -n 's/.*ns_per_call //p'; }

insmod $M/ktrace.ko lkst_flags=2 lkst_buf_size=1048576 lkst_buf_nr=8 || exit 1
I=$T/instances/lkst_bench
rmdir $I 2> /dev/null
mkdir $I || exit 1
echo 0 > $I/tracing_on
echo 8192 > $I/buffer_size_kb
echo 1 > $I/options/overwrite
echo mono > $I/trace_clock
# RDEFAULT's events, by tracepoint (events file: handler 1 in the current maskset)
tps=$(awk '!/^#/ && $5 == "available" && $7 == 1 { print $4 }' $L/events)
for tp in $tps; do
	echo 1 > "$I/events/${tp%%:*}/${tp#*:}/enable" || echo "bench_lkst: cannot enable $tp in ftrace" >&2
done
ntp=$(echo $tps | wc -w)

ft_stats() { # bytes entries overrun, summed over CPUs
	b=0; e=0; o=0
	for s in $I/per_cpu/cpu*/stats; do
		b=$((b + $(sed -n 's/^bytes: //p' "$s")))
		e=$((e + $(sed -n 's/^entries: //p' "$s")))
		o=$((o + $(sed -n 's/^overrun: //p' "$s")))
	done
	echo "$b $e $o"
}
kt_written() { sed -n 's/^written //p' $L/info; }

for load in pp sc; do
	: > /tmp/b.$load.off; : > /tmp/b.$load.ft; : > /tmp/b.$load.kt
	eval "ft_ev_$load=0; ft_by_$load=0; ft_en_$load=0; kt_ev_$load=0"
done
r=1
while [ $r -le "$REPS" ]; do
	for load in pp sc; do
		load_$load >> /tmp/b.$load.off

		echo > $I/trace
		echo 1 > $I/tracing_on
		load_$load >> /tmp/b.$load.ft
		echo 0 > $I/tracing_on
		set -- $(ft_stats)
		eval "ft_by_$load=\$((ft_by_$load + $1)); ft_en_$load=\$((ft_en_$load + $2)); ft_ev_$load=\$((ft_ev_$load + $2 + $3))"

		w0=$(kt_written)
		echo start > $L/state
		load_$load >> /tmp/b.$load.kt
		echo stop > $L/state
		w1=$(kt_written)
		eval "kt_ev_$load=\$((kt_ev_$load + w1 - w0))"
	done
	r=$((r + 1))
done
echo 0 > $I/tracing_on
rmdir $I

# ktrace's bytes per event: copy the flight recorder (last run: syscalls)
# and of a context-switch run, and divide the stream bytes by the records.
kt_bpe() {
	rm -rf /tmp/kb
	ktrace read -q $L /tmp/kb > /dev/null 2>&1
	bytes=$(cat /tmp/kb/cpu* | wc -c)
	recs=$(lkstcheck /tmp/kb | sed -n 's/^records //p')
	awk -v b="$bytes" -v n="$recs" 'BEGIN { if (n) printf "%.1f", b / n; else print "?" }'
}
kt_bpe_sc=$(kt_bpe)
echo start > $L/state
load_pp > /dev/null
echo stop > $L/state
kt_bpe_pp=$(kt_bpe)

per_op() { awk -v e="$1" -v n="$2" 'BEGIN { printf "%.1f", e / n }'; }
bpe() { awk -v b="$1" -v e="$2" 'BEGIN { if (e) printf "%.1f", b / e; else print "?" }'; }
echo
echo "LKST kernel events: $ntp tracepoints of RDEFAULT ($(echo $tps | tr ' ' ',')), 8 MiB per CPU, overwrite"
echo
echo "| load | configuration | ns per op (median of $REPS) | slowdown vs off (median of per-run ratios) | events per op | bytes per event |"
echo "|---|---|---:|---:|---:|---:|"
for load in pp sc; do
	if [ $load = pp ]; then what="context switches (pingpong round trip)"; ops=$((ROUNDS * REPS)); else
		what="syscalls (getppid)"; ops=$((CALLS * REPS)); fi
	eval "fe=\$ft_ev_$load; fb=\$ft_by_$load; fn=\$ft_en_$load; ke=\$kt_ev_$load; kb=\$kt_bpe_$load"
	echo "| $what | tracing off | $(median < /tmp/b.$load.off) | 1.00 | - | - |"
	echo "| $what | ftrace (tracefs instance, same tracepoints) | $(median < /tmp/b.$load.ft) | $(ratio /tmp/b.$load.ft /tmp/b.$load.off) | $(per_op "$fe" "$ops") | $(bpe "$fb" "$fn") |"
	echo "| $what | ktrace LKST, RDEFAULT maskset | $(median < /tmp/b.$load.kt) | $(ratio /tmp/b.$load.kt /tmp/b.$load.off) | $(per_op "$ke" "$ops") | $kb |"
done
echo
for load in pp sc; do
	for c in off ft kt; do echo "raw lkst $load $c $(tr '\n' ' ' < /tmp/b.$load.$c)"; done
done
echo "dropped ktrace-lkst $(sed -n 's/^dropped //p' $L/info) overwritten $(sed -n 's/^overwritten //p' $L/info)"
rmmod ktrace
