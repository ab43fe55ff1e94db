#!/bin/sh
# kmod/tests/suite_crash.sh - the crash-extraction VM test (run-vm.sh
# crash; docs/KMOD-DESIGN.md "The VM test").  Runs at every boot of one qemu
# process that a panic (panic=1) or `reboot -f` warm-resets, so the crash
# region (memmap=16M$0x38000000, crash_mem=16M@0x38000000) keeps its
# content from boot to boot.  The phase comes from what ktrace.ko finds:
#
#   region armed (fresh: first boot)   -> record trial 1
#   region kept, note "trial K KIND"   -> recover and check trial K, release
#                                         the region, record trial K+1 (or
#                                         finish after the last)
#
# A trial records LKST (RDEFAULT, flight mode) and the default channel
# (ktrace_sample.ko's static events) under load (pingpong on both CPUs +
# sysloop), then
# panics with sysrq-c (KIND panic, trials 1..N, ktrace.panics=N, 20) or
# reboots with `reboot -f` (KIND reboot, the 2 trials after them); the
# last trial (KIND tear) leaves a record torn on purpose through debugfs
# crash/tear (crash_test=1) and panics: the reader must find it torn.  The check:
# `ktrace read --crash` writes a trace that ktrace print reads; every
# record is well-formed (lkstcheck on the copy) and their number, the torn
# count and the last record's time equal what crashcheck computes from the
# raw image by itself; every CPU's last record follows the last mark the
# test took (CLOCK_MONOTONIC, kept in the region's note "trial K KIND
# MARK_NS" just before the panic: the panicking CPU records at least the
# write to sysrq-trigger after it, and the load keeps the other CPU busy)
# and precedes the stop of the CPUs (the module's panic notifier); after a
# reboot the region is from the previous boot and has no panic stamp.  How
# close to the panic the last record is, a quality figure and not a
# verdict (it depends on the host's load), is printed on the
# KTRACE-CRASH-TRIAL lines and summed up by run-vm.sh.
#
# TAP lines carry no numbers (the host numbers them across boots and adds
# the plan); each boot prints its lines, then "KTRACE-CRASH-NEXT K KIND"
# before it panics or reboots, or "KTRACE-CRASH-FINISHED N" at the end.

D=/sys/kernel/debug
M=/lib/modules-ktrace
C=$D/ktrace/crash
L=$D/ktrace/lkst
PANICS=20  # ktrace.panics=N on the kernel command line (run-vm.sh)
for w in $(cat /proc/cmdline); do
	case "$w" in ktrace.panics=*) PANICS=${w#ktrace.panics=} ;; esac
done
REBOOTS=2
REGION=16M@0x38000000

ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi; }
is() { if [ "$1" = "$2" ]; then echo "ok - $3"; else echo "not ok - $3"; echo "#   got '$1', expected '$2'"; fi; }
cmp_ok() { if [ "$1" "$2" "$3" ] 2>/dev/null; then echo "ok - $4"; else echo "not ok - $4"; echo "#   got '$1' $2 '$3' false"; fi; }
kv() { sed -n "s/^$2 //p" "$1" | head -n 1; }
diag() { echo "# $*"; }

insmod $M/ktrace.ko flags=2 lkst_flags=2 crash_mem=$REGION crash_test=1
ok $? "insmod ktrace.ko crash_mem=$REGION (flight channels)"
cat $C/info > /tmp/info
state=$(kv /tmp/info state)
note=$(kv /tmp/info note)

record() { # record K KIND: trial K, ended by a panic or a reboot
	echo "trial $1 $2" > $C/note
	is "$(cat $C/note)" "trial $1 $2" "trial $1: the note is in the region"
	insmod $M/ktrace_sample.ko period_ms=10
	echo start > $D/ktrace/default/state
	ktrace lkst start
	ok $? "trial $1: LKST records (RDEFAULT, flight mode, crash rings armed)"
	# the load of issue 28: ping-pong on both CPUs, system calls on one
	pingpong -n 100000000 -c 0 > /dev/null &
	pingpong -n 100000000 -c 1 > /dev/null &
	sysloop -n 1000000000 -c 1 > /dev/null &
	sleep 1
	# the mark: every CPU must record after it (the note survives the panic)
	echo "trial $1 $2 $(kthelper now)" > $C/note
	echo "KTRACE-CRASH-NEXT $1 $2"
}

if [ "$state" = armed ]; then
	echo "KTRACE-CRASH-FIRST-BOOT"
	is "$(kv /tmp/info boot)" "this" "first boot: a fresh region, laid out in this boot"
	is "$(grep -c '^channel ' /tmp/info)" "2" "both flight channels (default, lkst) have crash rings"
	record 1 panic
	exit 0
fi

is "$state" "kept" "the region of the last boot is kept (not overwritten)"
set -- $note
k=$2
kind=$3
mark=${4:-0}
case "$state $1 $k $kind" in
"kept trial "[0-9]*" panic" | "kept trial "[0-9]*" reboot" | "kept trial "[0-9]*" tear") ;;
*) # not a region this test wrote: stop here rather than loop
	cat /tmp/info | sed 's/^/# info: /'
	echo "not ok - the region names no trial (note '$note')"
	echo "KTRACE-CRASH-FINISHED 0"
	exit 0
	;;
esac
diag "recovering trial $k ($kind)"
is "$(kv /tmp/info boot)" "previous" "trial $k: the region is recognised as a previous boot's"
is "$(cat /sys/module/ktrace/parameters/crash_mem) $(stat -c %a $C/image $C/info $C/release | tr '\n' ' ')" \
	"$REGION 400 400 200 " "trial $k: crash_mem and ktrace/crash/ files are root-only"
is "$(kthelper asuser 65534 open $C/image r)" "EACCES" "trial $k: uid 65534 cannot read the image"
is "$(kthelper write $C/note x)" "EBUSY" \
	"trial $k: the kept region's note cannot be changed"

crashcheck -c lkst $C/image > /tmp/cc
is "$(kv /tmp/cc region)" "ok" "trial $k: crashcheck finds the region valid"
rm -rf /tmp/rec
ktrace read --crash --channel lkst $C /tmp/rec > /tmp/rec.out 2> /tmp/rec.err
ok $? "trial $k: ktrace read --crash converts the LKST channel"
cat /tmp/rec.out /tmp/rec.err | sed "s/^/# /"
lkstcheck /tmp/rec > /tmp/lc
recs=$(kv /tmp/cc records)
torn=$(kv /tmp/cc torn)
is "$(kv /tmp/lc records) $(kv /tmp/lc errors) $(kv /tmp/lc badlen) $(kv /tmp/lc tsback)" "$recs 0 0 0" \
	"trial $k: all $recs valid records read back, each well-formed (lkstcheck)"
cmp_ok "$recs" -gt 1000 "trial $k: the recording under load has records ($recs)"
is "$(kv /tmp/lc lost)" "$torn" "trial $k: the torn records ($torn) are counted as lost, not shown"
grep -q " $recs records, $torn torn (skipped)" /tmp/rec.out
ok $? "trial $k: ktrace read reports $recs records and $torn torn"
is "$(kv /tmp/rec/metadata crash-last-ns)" "$(kv /tmp/cc last-ns)" "trial $k: the last record's time agrees with crashcheck"
# print and timeline read the same directory every time: first and last trial
if [ "$k" = 1 ] || [ "$k" -ge $((PANICS + REBOOTS + 1)) ]; then
	n=$(ktrace print /tmp/rec 2>/dev/null | grep -c 'PROCESS_CONTEXTSWITCH\|SYSCALL_ENTRY')
	cmp_ok "$n" -gt 500 "trial $k: ktrace print shows the records ($n switches and syscalls)"
	ktrace timeline /tmp/rec > /tmp/tl 2>&1
	ok $? "trial $k: ktrace timeline reads the recovered trace"
	# issue 28: tasks of a crash trace had no name (/proc is another boot's)
	n=$(grep -c ' pingpong$' /tmp/rec/threads 2> /dev/null)
	cmp_ok "${n:-0}" -ge 4 "trial $k: the trace names its tasks itself (${n:-0} pingpong tasks, 2 x 2 ran)"
	ktrace export --format=chrome -o /tmp/rec.json /tmp/rec > /dev/null 2>&1
	ok $? "trial $k: ktrace export writes it as Chrome JSON"
fi
panic=$(kv /tmp/cc panic-ns)
last=$(kv /tmp/cc last-ns)
if [ "$kind" = tear ]; then
	# crash/tear left one half-written record in the panicking CPU's ring
	is "$torn" "1" "trial $k: the record torn on purpose is found torn (crashcheck)"
fi
if [ "$kind" = panic ] || [ "$kind" = tear ]; then
	pcpu=$(kv /tmp/cc panic-cpu)
	stop=$(kv /tmp/cc stop-ns)
	cmp_ok "$panic" -gt 0 "trial $k: the panic time was stamped (panic() entered on CPU $pcpu)"
	cmp_ok "$stop" -ge "$panic" "trial $k: the panic notifier stamped when the other CPUs were stopped"
	plast=$(kv /tmp/cc last-ns-cpu$pcpu)
	cmp_ok "$mark" -gt 0 "trial $k: the note kept the test's last mark before the panic"
	cmp_ok "${plast:-0}" -ge "$mark" "trial $k: the panicking CPU recorded after the test's last mark ($((plast - mark)) ns after it)"
	cmp_ok "$last" -le "$stop" "trial $k: no record is later than the stop of the CPUs"
	early=0
	for c in $(sed -n 's/^last-ns-cpu\([0-9]*\) .*/\1/p' /tmp/cc); do
		[ "$(kv /tmp/cc last-ns-cpu$c)" -lt "$mark" ] && early="$early $c"
	done
	is "$early" "0" "trial $k: every CPU recorded until the panic (none ends before the test's last mark)"
	echo "KTRACE-CRASH-TRIAL $k $kind records $recs torn $torn panic-cpu-gap-ns $((plast - panic)) last-gap-ns $((last - panic)) stop-gap-ns $((stop - panic)) uptime $(cut -d' ' -f1 /proc/uptime)"
else
	is "$panic" "0" "trial $k: a clean reboot: no panic stamp"
	echo "KTRACE-CRASH-TRIAL $k reboot records $recs torn $torn uptime $(cut -d' ' -f1 /proc/uptime)"
fi
# the static events of the default channel, with their catalogue
rm -rf /tmp/def
ktrace read --crash --channel default $C /tmp/def > /dev/null 2>&1
ok $? "trial $k: ktrace read --crash converts the default channel"
n=$(ktrace print /tmp/def 2>/dev/null | grep -c 'ktrace_sample_work:entry')
cmp_ok "$n" -gt 5 "trial $k: its static events print by name ($n ktrace_sample_work entries)"

last_trial=0
[ "$k" -ge $((PANICS + REBOOTS + 1)) ] && last_trial=1
bench() { # bench: ns per getppid() call (2 LKST records) with LKST started, best of 3
	b=""
	ktrace lkst start
	for i in 1 2 3; do
		v=$(sysloop -n 50000 -c 0 | sed -n 's/.*ns_per_call \([0-9]*\).*/\1/p')
		[ -z "$b" ] || [ "$v" -lt "$b" ] && b=$v
	done
	ktrace lkst stop
	echo "$b"
}
if [ $last_trial = 1 ]; then # the cost of the crash copy: kept (no rings) against armed
	base=$(sysloop -n 50000 -c 0 | sed -n 's/.*ns_per_call \([0-9]*\).*/\1/p')
	norings=$(bench)
fi
kthelper write $C/release release > /dev/null
is "$(kv $C/info state)" "armed" "trial $k: released: the region records again"

if [ $last_trial = 1 ]; then
	rings=$(bench)
	echo "KTRACE-CRASH-BENCH getppid-ns untraced $base lkst-flight $norings lkst-flight+crash $rings (TCG)"
	echo "KTRACE-CRASH-FINISHED $k"
	exit 0
fi
if [ "$((k + 1))" -le "$PANICS" ]; then
	record $((k + 1)) panic
elif [ "$((k + 1))" -le "$((PANICS + REBOOTS))" ]; then
	record $((k + 1)) reboot
else
	record $((k + 1)) tear # the last: a torn record, then a panic
fi
exit 0
