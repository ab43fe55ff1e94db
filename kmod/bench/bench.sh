#!/bin/sh
# kmod/bench/bench.sh - the kernel benchmark, run inside the test VM by
# vm-init.sh (ktrace.mode=bench; host side: kmod/bench/run-bench.sh).
#
# Workload: pingpong (two processes on CPU 0 bouncing a byte through
# pipes: two context switches per round).  Configurations, interleaved in
# each repetition, median of REPS runs reported:
#   off        no tracing
#   ftrace     the kernel's ring buffer recording sched_switch (tracefs)
#   ktrace-off ktrace_bench.ko's sched_switch probe registered, channel
#              stopped (the cost of a disabled ktrace_log2 call)
#   ktrace     the probe logging every switch with ktrace_log2() into
#              ktrace.ko's default channel (per-CPU relay buffers)
# Both tracers get 8 MiB per CPU in overwrite (flight-recorder) mode, so
# neither ever drops.  Prints a markdown table and "key value" raw lines.
M=/lib/modules-ktrace
T=/sys/kernel/tracing
K=/sys/kernel/debug/ktrace/default
ROUNDS=${ROUNDS:-20000}
REPS=${REPS:-9}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
run() { pingpong -n "$ROUNDS" -c 0 | sed -n 's/.*ns_per_round //p'; }

insmod $M/ktrace.ko flags=2 buf_size=1048576 buf_nr=8 || exit 1
insmod $M/ktrace_bench.ko || exit 1
echo 0 > $T/tracing_on
echo 8192 > $T/buffer_size_kb
echo 1 > $T/options/overwrite
echo sched_switch > $T/set_event

ftrace_bytes=0
ftrace_events=0
: > /tmp/off; : > /tmp/ftrace; : > /tmp/koff; : > /tmp/kon
r=1
while [ $r -le "$REPS" ]; do
	run >> /tmp/off

	echo > $T/trace
	echo 1 > $T/tracing_on
	run >> /tmp/ftrace
	echo 0 > $T/tracing_on
	b=0; e=0
	for s in $T/per_cpu/cpu*/stats; do
		b=$((b + $(sed -n 's/^bytes: //p' "$s")))
		e=$((e + $(sed -n 's/^entries: //p' "$s")))
	done
	ftrace_bytes=$((ftrace_bytes + b))
	ftrace_events=$((ftrace_events + e))

	run >> /tmp/koff

	w0=$(sed -n 's/^written //p' $K/info)
	echo start > $K/state
	run >> /tmp/kon
	echo stop > $K/state
	w1=$(sed -n 's/^written //p' $K/info)
	kt_events=$((${kt_events:-0} + w1 - w0))
	r=$((r + 1))
done
echo > $T/set_event

off=$(median < /tmp/off)
ft=$(median < /tmp/ftrace)
koff=$(median < /tmp/koff)
kon=$(median < /tmp/kon)
# Slowdown: the median over repetitions of (configuration / off of the same
# repetition), so drift of the host between repetitions cancels out.
ratio() { paste "$1" /tmp/off | awk '{ print $1 / $2 }' | median | awk '{ printf "%.2f", $1 }'; }
# ktrace: a 24-byte record per event plus a 64-byte header per 1 MiB sub-buffer.
kt_bpe=$(awk 'BEGIN { printf "%.1f", 24 + 64 * 24 / 1048576 }')
ft_bpe=$(awk -v b="$ftrace_bytes" -v e="$ftrace_events" 'BEGIN { if (e) printf "%.1f", b / e; else print "?" }')

# Two sched_switch events per round trip.
per_ev() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (a - b) / 2 }'; }
echo "| configuration | ns per round trip (median of $REPS) | slowdown vs off (median of per-run ratios) | added ns per event | bytes per event |"
echo "|---|---:|---:|---:|---:|"
echo "| tracing off | $off | 1.00 | - | - |"
echo "| ftrace ring buffer, sched_switch event | $ft | $(ratio /tmp/ftrace) | $(per_ev "$ft" "$off") | $ft_bpe |"
echo "| ktrace probe registered, channel stopped | $koff | $(ratio /tmp/koff) | $(per_ev "$koff" "$off") | - |"
echo "| ktrace probe -> ktrace_log2, channel running | $kon | $(ratio /tmp/kon) | $(per_ev "$kon" "$off") | $kt_bpe |"
echo
echo "raw off $(tr '\n' ' ' < /tmp/off)"
echo "raw ftrace $(tr '\n' ' ' < /tmp/ftrace)"
echo "raw ktrace-off $(tr '\n' ' ' < /tmp/koff)"
echo "raw ktrace $(tr '\n' ' ' < /tmp/kon)"
echo "events ftrace $ftrace_events ktrace $kt_events (rounds $ROUNDS x $REPS, 2 switches per round)"
echo "dropped ktrace $(sed -n 's/^dropped //p' $K/info) overwritten $(sed -n 's/^overwritten //p' $K/info)"
rmmod ktrace_bench
rmmod ktrace

# LKST kernel events: context-switch and syscall loads, off / ftrace / ktrace
[ -f /bench_lkst.sh ] && sh /bench_lkst.sh
