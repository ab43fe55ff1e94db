#!/bin/sh
# kmod/tests/suite_kboot.sh - boot-time KFT (ktrace kft --boot) in the test
# VM: run-vm.sh boot booted the kernel with the parameters `ktrace kft
# --boot` printed on the host for kmod/tests/kboot-seed.conf (the seed's
# boot sample: start entry start_kernel, stop entry free_initmem, mintime
# 500).  This /init-time suite checks what the boot left in tracefs, runs
# `ktrace kft --tracefs extract`, and reads the result with kd, addr2sym
# and print.  TAP on stdout (busybox sh).

T=/sys/kernel/tracing
B=/tmp/kboot
. /tap.sh # ok, is, cmp_ok (kmod/tests/tap.sh)
kv() { sed -n "s/^$2: *//p" "$1" | head -n 1; }
mkdir -p $B

echo "# kernel command line: $(cat /proc/cmdline)"
# ---- what the boot parameters set up
is "$(cat $T/current_tracer)" function_graph "boot: function_graph runs since boot (ftrace=function_graph)"
is "$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock)" mono "  trace_clock mono"
is "$(cat $T/tracing_thresh)" 500 "  tracing_thresh 500 (filter mintime 500)"
is "$(cat $T/options/overwrite)" 0 "  the ring buffer does not overwrite (nooverwrite)"
is "$(cat $T/kprobe_events)" "p:ktrace_kft/stop free_initmem" "  the stop trigger is a kprobe event on free_initmem"
grep -q 'ktrace_kft.config="trigger start entry start_kernel;trigger stop entry free_initmem;filter mintime 500"' /proc/cmdline
ok $? "  the configuration is on the command line"
env | grep -q ktrace_kft
ok $((!$?)) "  and was not passed to init's environment"

# Independent expectation from the `trace` file (read, not consumed):
# funcgraph exits before the stop event, each with its duration.
echo 0 > $T/tracing_on
echo 1 > $T/options/funcgraph-abstime
cat $T/trace > $B/trace.txt
echo 0 > $T/options/funcgraph-abstime
stop_s=$(grep 'stop: (free_initmem' $B/trace.txt | head -n 1 | awk '{print $1}')
ok $([ -n "$stop_s" ]; echo $?) "  the stop event (entry of free_initmem) is in the ring buffer at ${stop_s}s"
# exit lines: "  14.063681 |   1)  ! 525.830 us  |  } /* f */"
awk -v s="$stop_s" '/\} \/\*/ && $1 + 0 < s + 0 {n++} END {print n + 0}' $B/trace.txt > $B/exp_before
awk -v s="$stop_s" '/\} \/\*/ && $1 + 0 > s + 0 {n++} END {print n + 0}' $B/trace.txt > $B/exp_after
exp=$(cat $B/exp_before)
after=$(cat $B/exp_after)
cmp_ok "$exp" -gt 20 "  $exp calls of 500 us or more returned before it"
cmp_ok "$after" -gt 0 "  and $after after it (tracing went on: 6.1 has no trace_trigger=)"

# ---- ktrace kft --tracefs extract
[ -d $T/events/ktrace_kft/stop ] || echo "# tracefs made no events/ktrace_kft/stop directory: extract falls back to the trace text"
ktrace kft --tracefs extract $B/run > $B/extract.out 2> $B/extract.err
ok $? "extract: ktrace kft --tracefs extract (the configuration from /proc/cmdline)"
sed 's/^/#   /' $B/extract.out $B/extract.err
is "$(cat $T/current_tracer) $(cat $T/tracing_thresh) $(grep -c . $T/kprobe_events)" "nop 0 0" \
	"  then function_graph is off, the threshold and the trigger event gone"
sed 's/^/#   kprobe_events: /' $T/kprobe_events
# The clean-up for the 6.1 race above (remove_stale_events() in
# kclient/kft_tracefs.c) relies on this: kprobe_event= enables its events,
# an enabled kprobe event cannot be deleted, and set_event disables it by
# name without its events/ directory.  Checked on an event made here.
echo 'p:ktrace_kft/race do_sys_openat2' >> $T/kprobe_events && echo 'ktrace_kft:race' >> $T/set_event
is "$(grep -c '^ktrace_kft:race$' $T/set_event)" 1 "  (the race's clean-up) a kprobe event enabled through set_event"
echo '-:ktrace_kft/race' >> $T/kprobe_events 2>/dev/null
is "$(grep -c 'ktrace_kft/race ' $T/kprobe_events)" 1 "  is not deleted while enabled"
echo '!ktrace_kft:race' >> $T/set_event && echo '-:ktrace_kft/race' >> $T/kprobe_events
is "$(grep -c . $T/kprobe_events)" 0 "  and is deleted once disabled through set_event"
kept=$(kv $B/run/kft-status "entries kept")
cmp_ok "$kept" -le "$exp" "  it kept the calls that returned before the stop event ($kept of $exp)"
# Those near the threshold may be dropped: ftrace's durations are
# trace_clock_local (sched_clock), ktrace's CLOCK_MONOTONIC, and a TCG
# guest's two clocks differ by 0.4% idle, 4% on a loaded host (issue 28).
# extract converts at the rate it measured and names it when it is off by
# more than 0.1%; a call of up to 500 us times that rate (plus 1% for the
# rate's drift over the boot) may fall under mintime.
rate=$(sed -n 's/.*ran at \([0-9.]*\) times CLOCK_MONOTONIC.*/\1/p' $B/extract.err | head -n 1)
rate=${rate:-1}
ok $(awk -v r="$rate" 'BEGIN { exit !(r > 0.9 && r < 1.1) }'; echo $?) "  the clocks' rates differ by less than 10% ($rate)"
border=$(awk -v s="$stop_s" -v r="$rate" '/\} \/\*/ && $1 + 0 < s + 0 { for (i = 2; i < NF; i++) if ($(i + 1) == "us" && $i + 0 < 500 * r * 1.01) n++ } END {print n + 0}' $B/trace.txt)
cmp_ok "$kept" -ge "$((exp - border))" "  all of them but some of the $border within 1% of mintime at that rate"
is "$(kv $B/run/kft-status "trigger events")" 1 "  one trigger event (the stop)"
is "$(kv $B/run/kft-status "entries lost")" "0 (ring buffer full)" "  nothing lost"
stopped=$(kv $B/run/kft-status stopped | cut -d' ' -f1)
is "$stopped" "$(echo "$stop_s" | awk '{printf "%d", $1 * 1000000 + 0.5}')" "  stopped at the stop event (us since boot)"

# ---- the records: ktrace print
ktrace print -C $B/run > $B/run.csv 2> $B/print.err
ok $? "print: ktrace print -C reads the trace"
head -n 1 $B/run.csv | grep -q '^time_ns,dur_ns,'
ok $? "  CSV header time_ns,dur_ns,..."
is "$(sed 1d $B/run.csv | grep -c .)" "$kept" "  one row per call"
is "$(sed 1d $B/run.csv | awk -F, '$2 < 500000' | wc -l)" 0 "  every call lasted 500 us or more"
# CSV: time_ns is the entry, dur_ns the duration
last=$(sed 1d $B/run.csv | awk -F, 'BEGIN {m = 0} $1 + $2 > m {m = $1 + $2} END {printf "%d", m / 1000}')
cmp_ok "$last" -le "$stopped" "  none returned after the stop ($last us <= $stopped us)"
first=$(sed 1d $B/run.csv | awk -F, 'NR == 1 || $1 < m {m = $1} END {printf "%d", m / 1000}')
tstart=$(dmesg | sed -n "s/^\[ *\([0-9]*\)\.\([0-9]*\)\] Starting tracer 'function_graph'.*/\1\2/p")
# (dmesg's clock is sched_clock, the trace's CLOCK_MONOTONIC: not compared)
cmp_ok "$first" -gt 0 "  the first call entered at $first us (CLOCK_MONOTONIC; the tracer started at $tstart us of dmesg's clock)"

# ---- kd: Count, Time, Local per function
ktrace kd $B/run > $B/run.kd 2> $B/kd.err
ok $? "kd: ktrace kd reads it"
sed -n '1,14p' $B/run.kd | sed 's/^/#   /'
head -n 1 $B/run.kd | grep -q 'Function  *Count  *Time  *Average  *Local'
ok $? "  columns Function Count Time Average Local"
nf=$(sed 1,2d $B/run.kd | grep -c '^[A-Za-z_]')
cmp_ok "$nf" -gt 5 "  $nf boot functions listed"
calls=$(sed 1,2d $B/run.kd | awk '$2 ~ /^[0-9]+$/ {s += $2} END {print s + 0}')
is "$calls" "$kept" "  their counts add up to the calls"
grep -qE '^(do_one_initcall|do_initcall_level|kernel_init_freeable|async_synchronize_full|populate_rootfs|do_basic_setup) ' $B/run.kd
ok $? "  boot functions are among them (initcalls)"

# ---- addr2sym: Entry, Delta, PID, Function, Called At
ktrace addr2sym $B/run > $B/run.a2s 2> $B/a2s.err
ok $? "addr2sym: ktrace addr2sym reads it"
grep -A8 'Entry  *Delta' $B/run.a2s | sed 's/^/#   /'
grep -q 'Entry  *Delta  *PID  *Function  *Called At' $B/run.a2s
ok $? "  columns Entry Delta PID Function Called At"
rows=$(grep -cE '^ *[0-9.]+ +[0-9.]+ +[0-9]+ ' $B/run.a2s)
is "$rows" "$kept" "  one row per call"
is "$(grep -E '^ *[0-9.]+ +[0-9.]+ +[0-9]+ ' $B/run.a2s | awk '$4 ~ /^0x/ || $4 == "" ' | wc -l)" 0 "  every function named (none left as an address)"

# ---- the module: ktrace.kft_boot, applied when the initramfs loads ktrace.ko
# (busybox insmod does not read /proc/cmdline as modprobe does: pass it on)
P=/proc/kft
ks() { sed -n "s/^$1: //p" "${2:-$P}" | head -n 1; }
v=$(sed -n 's/.*ktrace\.kft_boot="\([^"]*\)".*/\1/p' /proc/cmdline)
is "$v" "trigger stop time 3000000;filter funclist kernel_clone fend" \
	"module: ktrace.kft_boot on the command line (start entry start_kernel = at load)"
insmod /lib/modules-ktrace/ktrace.ko "kft_boot=\"$v\""
ok $? "  insmod ktrace.ko kft_boot=..."
is "$(ks state)" running "  the run started when the module loaded"
is "$(ks error)" "-" "  no error"
i=0
while [ $i -lt 25 ]; do ( : ); i=$((i + 1)); done
i=0
while [ "$(ks state)" != stopped ] && [ $i -lt 60 ]; do sleep 0.1; i=$((i + 1)); done
is "$(ks state)" stopped "  and stopped by itself"
is "$(ks stopped | sed 's/^[0-9]* us //')" "by time" "  by the stop time trigger"
s0=$(ks started | cut -d' ' -f1)
s1=$(ks stopped | cut -d' ' -f1)
is "$((s1 - s0))" 3000000 "  3 s after the start"
ktrace kft --kernel extract $B/mod > /dev/null 2> $B/mod.err
ok $? "  ktrace kft --kernel extract"
ktrace kd $B/mod > $B/mod.kd 2>&1
cnt=$(awk '$1 == "kernel_clone" {print $2}' $B/mod.kd)
cmp_ok "${cnt:-0}" -ge 25 "  kd counts the $cnt forks (25 made here) of kernel_clone"
rmmod ktrace
ok $? "  rmmod ktrace"

echo "1..$n"
[ "$failed" = 0 ]
