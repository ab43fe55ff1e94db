#!/bin/sh
# kmod/tests/suite.sh - the TAP test suite of ktrace.ko, run inside the test
# VM by vm-init.sh (busybox sh, as root).  Each test asserts something that
# can fail; the host (run-vm.sh) feeds the TAP lines to prove and also fails
# on kernel warnings in the dmesg dump.
#
# Uses: /lib/modules-ktrace/*.ko (ktrace, ktrace_sample, ktrace_test,
# ktrace_bench), /bin/kthelper (kmod/tests/kthelper.c, static), /bin/ktrace
# (the CLI, with its shared libraries).

D=/sys/kernel/debug
K=$D/ktrace/default
M=/lib/modules-ktrace
NCPU=$(nproc)
. /tap.sh # ok, is, isnt, cmp_ok, diag (kmod/tests/tap.sh)
# Read a whole small file without sendfile (busybox cat uses it).
rd() { { IFS= read -r l || [ -n "$l" ]; echo "$l"; } < "$1" 2>/dev/null; }
# Value of KEY in a "key value" file (info, result, check output).
kv() { sed -n "s/^$2 //p" "$1" | head -n 1; }
st() { stat -c %a "$1" 2>/dev/null; }
w() { kthelper write "$1" "$2"; }
# A CPU hog on every CPU, in the background; unload_hogs kills them.
hogs=""
load_hogs() {
	i=0
	while [ $i -lt "$NCPU" ]; do
		(while :; do ( : ); done) &
		hogs="$hogs $!"
		i=$((i + 1))
	done
}
# rmmod, retried: a control file held open for a moment pins the module.
rmmod_retry() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rmmod "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	rmmod "$1"
}
unload_hogs() {
	for p in $hogs; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	hogs=""
}

echo "TAP version 13"
diag "kernel $(uname -r), $NCPU CPUs"

# `run-vm.sh hooks`: the LKST hook tests alone (kmod/tests/suite_hooks.sh)
if [ "${KTRACE_SUITE_ONLY:-}" = hooks ]; then
	. /suite_hooks.sh
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN' | head -n 5)
	is "$bad" "" "no kernel warning, BUG or oops"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi
# `run-vm.sh exc`: the exception event tests alone (kmod/tests/suite_exc.sh)
if [ "${KTRACE_SUITE_ONLY:-}" = exc ]; then
	. /suite_exc.sh
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN' | head -n 5)
	is "$bad" "" "no kernel warning, BUG or oops"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# `run-vm.sh locks`: ktrace locks on the contention events alone (kmod/tests/suite_locks.sh)
if [ "${KTRACE_SUITE_ONLY:-}" = locks ]; then
	. /suite_locks.sh
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN' | head -n 5)
	is "$bad" "" "no kernel warning, BUG or oops"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# ------------------------------------------------------------------
# load / unload
# ------------------------------------------------------------------
insmod $M/ktrace.ko
ok $? "insmod ktrace.ko"
rmmod ktrace && insmod $M/ktrace.ko && rmmod ktrace && insmod $M/ktrace.ko
ok $? "unload and load again, twice"
missing=""
for f in state dropped info buf_size buf_nr consumed catalog; do [ -f $K/$f ] || missing="$missing $f"; done
i=0
while [ $i -lt "$NCPU" ]; do
	[ -f $K/trace$i ] || missing="$missing trace$i"
	i=$((i + 1))
done
is "$missing" "" "ktrace/default has the control files and trace0..trace$((NCPU - 1))"
is "$(st $K/state) $(st $K/buf_size) $(st $K/buf_nr) $(st $K/consumed)" "600 600 600 600" "writable control files are 0600"
is "$(st $K/dropped) $(st $K/info) $(st $K/catalog) $(st $K/trace0)" "400 400 400 400" \
	"read-only files and relay files are 0400"
is "$(stat -c %a /sys/module/ktrace/parameters/* | sort -u)" "400" "module parameters are 0400"
clash=$(grep -E ' (trace_setup|trace_start|trace_stop|trace_cleanup|trace_running|trace_log2|trace_log4|trace_record|trace_catalog_func|trace_catalog_event|ktrace_log2|ktrace_log4|ktrace_default_channel|ktrace_catalog_func)$' /proc/kallsyms | wc -l)
is "$clash" 0 "no kernel symbol has the name of an exported ktrace function"

# ------------------------------------------------------------------
# start / stop
# ------------------------------------------------------------------
is "$(rd $K/state)" "stop" "a new channel is stopped"
is "$(w $K/state start)" "ok" "write start"
is "$(rd $K/state) $(kv $K/info state)" "start start" "state and info say start"
is "$(w $K/state 'stop\n')" "ok" "write stop (with newline)"
is "$(rd $K/state)" "stop" "state says stop"
is "$(w $K/state stop)" "ok" "stopping a stopped channel is fine"

# ------------------------------------------------------------------
# bad values to every control file: -EINVAL and nothing changes
# ------------------------------------------------------------------
sed -n p $K/info > /tmp/info.before
bad=""
for v in "" "bogus" "star" "start stop" "START" "1" "\\0start" "start\\n\\n" \
	"startstartstartstartstartstartstart"; do
	r=$(w $K/state "$v")
	[ "$r" = EINVAL ] || bad="$bad state:'$v'=$r"
done
for v in "" "0" "4095" "5000" "-4096" "+4096" "0x1000" "134217728" "abc" " 4096" "4096 " \
	"99999999999999999999" "4096\\n\\n"; do
	r=$(w $K/buf_size "$v")
	[ "$r" = EINVAL ] || bad="$bad buf_size:'$v'=$r"
done
for v in "" "0" "1" "-1" "65537" "abc" "2x" "8 " "99999999999999999999"; do
	r=$(w $K/buf_nr "$v")
	[ "$r" = EINVAL ] || bad="$bad buf_nr:'$v'=$r"
done
for v in "" "0" "abc" "0 -1" "0 x" "x 0" "$NCPU 0" "99999 0" "0 99999" " 0 0" "0  0" "0 0 0" "0 0x0" \
	"0 99999999999999999999999"; do
	r=$(w $K/consumed "$v")
	[ "$r" = EINVAL ] || bad="$bad consumed:'$v'=$r"
done
r=$(w $K/buf_nr 8192) # 64 KiB x 8192 = 512 MiB per CPU: over the limit
[ "$r" = EINVAL ] || bad="$bad buf_nr:8192=$r"
for f in dropped info catalog trace0; do
	r=$(w $K/$f 0)
	[ "$r" = EINVAL ] || bad="$bad $f:'0'=$r"
done
is "$bad" "" "bad values are rejected with EINVAL by state, buf_size, buf_nr, consumed, dropped, info, catalog, trace0"
sed -n p $K/info > /tmp/info.after
cmp -s /tmp/info.before /tmp/info.after
ok $? "nothing changed (info identical)"
is "$(rd $K/state) $(rd $K/buf_size) $(rd $K/buf_nr)" "stop 65536 16" "state and geometry unchanged"
is "$(w /sys/module/ktrace/parameters/buf_size 8192)" "EACCES" "module parameters cannot be written"

# ------------------------------------------------------------------
# security: a non-root user is refused
# ------------------------------------------------------------------
r=""
for f in state buf_size buf_nr info dropped catalog trace0; do
	r="$r $(kthelper asuser 65534 open $K/$f r)"
done
for f in state buf_size buf_nr consumed; do
	r="$r $(kthelper asuser 65534 open $K/$f w)"
done
is "$r" "$(printf ' EACCES%.0s' 1 2 3 4 5 6 7 8 9 10 11)" "uid 65534 can neither read nor write any channel file"
is "$(kthelper asuser 65534 write $K/state start)" "EACCES" "uid 65534 cannot start tracing"
is "$(rd $K/state)" "stop" "state still stop"
kthelper asuser 65534 read $K /tmp/nobody > /dev/null 2>/tmp/nobody.err
isnt "$?" 0 "ktrace read as uid 65534 fails"
diag "$(head -n 1 /tmp/nobody.err)"

# ------------------------------------------------------------------
# geometry (klog's -b/-n) through buf_size and buf_nr
# ------------------------------------------------------------------
is "$(w $K/buf_size 8192) $(w $K/buf_nr 4)" "ok ok" "resize a stopped channel to 8192 x 4"
is "$(rd $K/buf_size) $(kv $K/info buf-size) $(kv $K/info buf-nr)" "8192 8192 4" "the new geometry is in effect"
[ -f $K/trace$((NCPU - 1)) ]
ok $? "relay files were re-created"
w $K/state start > /dev/null
is "$(w $K/buf_size 16384)" "EBUSY" "a running channel cannot be resized"
w $K/state stop > /dev/null
# A stopped channel with nothing unread: the reader waits for it to start.
kthelper read -b 16384 -n 8 $K /tmp/geom > /dev/null 2>/tmp/geom.err &
reader=$!
sleep 1
kill -0 $reader 2>/dev/null
ok $? "kthelper read -b 16384 -n 8 on a stopped, empty channel waits for it to start"
w $K/state start > /dev/null
w $K/state stop > /dev/null
wait $reader
ok $? "kthelper read -b 16384 -n 8 (read_relay) on the default channel"
grep -q "waiting for it to start" /tmp/geom.err
ok $? "  it said it was waiting"
is "$(rd $K/buf_size) $(rd $K/buf_nr) $(kv /tmp/geom/metadata buf-size) $(kv /tmp/geom/metadata buf-nr)" \
	"16384 8 16384 8" "-b/-n reached the module and the metadata"
is "$(kv /tmp/geom/metadata clock) $(kv /tmp/geom/metadata layout) $(kv /tmp/geom/metadata scope)" \
	"mono packed cpu" "metadata: clock mono, layout packed, scope cpu"
w $K/buf_size 65536 > /dev/null
w $K/buf_nr 16 > /dev/null

# ------------------------------------------------------------------
# per-CPU channel under load, read while it is written
# ------------------------------------------------------------------
T=$D/ktrace_test/pc
C=$D/ktrace_test_ctl
insmod $M/ktrace_test.ko name=pc buf_size=16384 buf_nr=8
ok $? "insmod ktrace_test.ko (per-CPU channel, 16 KiB x 8, discard)"
w $T/state start > /dev/null
kthelper read $T /tmp/pc > /tmp/pc.out 2>&1 &
reader=$!
load_hogs
N=20000
echo $N > $C/run
ok $? "$((3 * NCPU)) writers (thread, softirq, hardirq on each CPU) logged $N records each"
w $T/state stop > /dev/null
wait $reader
ok $? "read_relay ran concurrently and ended at stop"
unload_hogs
sed 's/^/#   /' /tmp/pc.out
sed -n p $C/result > /tmp/pc.res
kthelper check -t /tmp/pc > /tmp/pc.chk
sed 's/^/#   /' /tmp/pc.chk
att=$(kv /tmp/pc.res attempted)
wr=$(kv /tmp/pc.res written)
dr=$(kv /tmp/pc.res dropped)
is "$att" "$((3 * NCPU * N))" "every attempt was made while running"
is "$((wr + dr))" "$att" "written + dropped = attempted"
is "$(kv $T/info written) $(kv $T/info dropped) $(rd $T/dropped)" "$wr $dr $dr" \
	"info and dropped agree with the writers' return codes"
is "$(kv /tmp/pc.chk records) $(kv /tmp/pc.chk testrecs)" "$wr $wr" "the copy holds every written record"
is "$(kv /tmp/pc.chk lost)" "$dr" "lost counts in the copy = dropped"
is "$(kv /tmp/pc.chk errors) $(kv /tmp/pc.chk order) $(kv /tmp/pc.chk wrongcpu) $(kv /tmp/pc.chk tsback)" \
	"0 0 0 0" "no corrupt, doubled, reordered or misplaced record; time never goes back"
is "$(kv /tmp/pc.chk streams) $(kv /tmp/pc.chk writers)" "$NCPU $((3 * NCPU))" "one stream per CPU, all writers seen"

# the same without a reader and with room: nothing may be dropped
rmmod ktrace_test
insmod $M/ktrace_test.ko name=big buf_size=262144 buf_nr=16
T=$D/ktrace_test/big
w $T/state start > /dev/null
N=4000
echo $N > $C/run
w $T/state stop > /dev/null
sed -n p $C/result > /tmp/big.res
# issue 15: -b/-n replaced the buffers of a stopped channel with its records
ktrace read -b 8192 $T /tmp/bigb > /tmp/bigb.out 2>&1
is "$?" 1 "ktrace read -b on a stopped channel holding unread records: exit 1"
grep -q "not read yet" /tmp/bigb.out
ok $? "  saying the records are not read yet"
diag "$(head -n 1 /tmp/bigb.out)"
is "$(kv $T/info buf-size) $(kv $T/info written)" "262144 $((3 * NCPU * N))" \
	"  the buffers and the count of their records are unchanged"
kthelper read $T /tmp/big > /dev/null 2>&1
kthelper check -t /tmp/big > /tmp/big.chk
is "$(kv /tmp/big.res written) $(kv /tmp/big.res dropped)" "$((3 * NCPU * N)) 0" \
	"per-CPU, 256 KiB x 16: all $((3 * NCPU * N)) records written, none dropped"
is "$(kv /tmp/big.chk records) $(kv /tmp/big.chk lastseq-sum) $(kv /tmp/big.chk order) $(kv /tmp/big.chk errors)" \
	"$((3 * NCPU * N)) $((3 * NCPU * N)) 0 0" "the copy has every attempt of every writer, in order"

# ktrace print reads it unchanged
if ktrace print /tmp/big > /tmp/big.txt 2>/tmp/big.perr; then ok 0 "ktrace print of a kernel trace"; else
	ok 1 "ktrace print of a kernel trace"
	sed 's/^/#   /' /tmp/big.perr | head -n 5
fi
is "$(grep -c 'test_thread\|test_softirq\|test_hardirq' /tmp/big.txt)" "$((3 * NCPU * N))" \
	"ktrace print shows every record, named from the catalogue"
diag "$(sed -n 1p /tmp/big.txt)"
rmmod ktrace_test

# ------------------------------------------------------------------
# global channel under load
# ------------------------------------------------------------------
insmod $M/ktrace_test.ko name=gl global=1 buf_size=65536 buf_nr=16
T=$D/ktrace_test/gl
is "$(ls $T | grep -c '^trace')" "1" "a global channel has one relay file"
w $T/state start > /dev/null
kthelper read $T /tmp/gl > /tmp/gl.out 2>&1 &
reader=$!
load_hogs
N=10000
echo $N > $C/run
w $T/state stop > /dev/null
wait $reader
ok $? "read_relay of the global channel"
unload_hogs
sed 's/^/#   /' /tmp/gl.out
sed -n p $C/result > /tmp/gl.res
kthelper check -t /tmp/gl > /tmp/gl.chk
sed 's/^/#   /' /tmp/gl.chk
wr=$(kv /tmp/gl.res written)
dr=$(kv /tmp/gl.res dropped)
is "$((wr + dr))" "$((3 * NCPU * N))" "global: written + dropped = attempted"
is "$(kv /tmp/gl.chk records) $(kv /tmp/gl.chk lost)" "$wr $dr" "global: copy = written, lost = dropped"
is "$(kv /tmp/gl.chk errors) $(kv /tmp/gl.chk order) $(kv /tmp/gl.chk wrongcpu) $(kv /tmp/gl.chk tsback)" \
	"0 0 0 0" "global: serialised writers from all contexts, no record torn or reordered"
is "$(kv /tmp/gl/metadata scope) $(kv /tmp/gl/metadata stream)" \
	"global 0 shared cpu0" "global: metadata scope global, one shared stream"
if ktrace print /tmp/gl > /tmp/gl.txt 2>/tmp/gl.perr; then ok 0 "ktrace print of a global kernel trace"; else
	ok 1 "ktrace print of a global kernel trace"
	sed 's/^/#   /' /tmp/gl.perr | head -n 5
fi
# issue 15: records of the global channel showed their thread as 0/TID.
# ktrace read (the CLI) names the threads still alive from /proc: the
# writers loop (they live until `loop 0`) while the read ends at stop.
ktrace read $T /tmp/gl2 > /tmp/gl2.out 2>&1 &
reader=$!
sleep 0.5
w $T/state start > /dev/null
echo 1 > $C/loop
sleep 0.5
w $T/state stop > /dev/null
wait $reader
ok $? "ktrace read of the global channel, started before tracing"
echo 0 > $C/loop
sed 's/^/#   /' /tmp/gl2.out
# a second read of a channel: what the first copied is neither "missing"
# nor its drops counted again
grep -q "^/tmp/gl2: 1 streams, [0-9]* records, [0-9]* lost, 0 dropped, 0 sub-buffers overwritten" /tmp/gl2.out
ok $? "  a second read's copy does not count the first read's sub-buffers as missing (seq-base)"
is "$(sed -n 's/^\/tmp\/gl2: 1 streams, [0-9]* records, \([0-9]*\) lost.*/\1/p' /tmp/gl2.out)" \
	"$(($(kv $T/info dropped) - dr))" "  its lost count is the drops of this run only ($(kv $T/info dropped) - $dr)"
grep -q "^[0-9]* [0-9]* ktrace_test/0$" /tmp/gl2/threads
ok $? "  DST/threads names the writer threads (ktrace_test/0) from /proc"
diag "threads: $(head -n 2 /tmp/gl2/threads 2>&1 | tr '\n' '|')"
ktrace print /tmp/gl2 > /tmp/gl2.txt 2>/dev/null
is "$(grep -c ' 0/[1-9][0-9]* ' /tmp/gl2.txt)" "0" "  print shows no thread as 0/TID"
cmp_ok "$(grep -c ' \([1-9][0-9]*\)/\1 *test_thread' /tmp/gl2.txt)" -ge 1 \
	"  the writer threads' records show PID/TID (kernel threads: pid = tid)"
rmmod ktrace_test

# ------------------------------------------------------------------
# discard mode: exact accounting when full
# ------------------------------------------------------------------
insmod $M/ktrace_test.ko name=dis buf_size=4096 buf_nr=2
T=$D/ktrace_test/dis
w $T/state start > /dev/null
N=500
echo $N > $C/run
w $T/state stop > /dev/null
sed -n p $C/result > /tmp/dis.res
wr=$(kv /tmp/dis.res written)
dr=$(kv /tmp/dis.res dropped)
is "$((wr + dr))" "$((3 * NCPU * N))" "discard: written + dropped = attempted"
cmp_ok "$dr" -gt 0 "discard: a 4 KiB x 2 buffer dropped records"
is "$(kv $T/info written) $(rd $T/dropped)" "$wr $dr" "discard: the module counted exactly that"
kthelper read $T /tmp/dis > /dev/null 2>&1
kthelper check -t /tmp/dis > /tmp/dis.chk
is "$(kv /tmp/dis.chk records) $(kv /tmp/dis.chk lost) $(kv /tmp/dis.chk errors)" "$wr $dr 0" \
	"discard: the copy holds the written records and a lost count of the dropped ones"
is "$(rd /tmp/dis/dropped)" "$dr" "discard: DST/dropped"
# After the reader made room, writing resumes in a new sub-buffer.
w $T/state start > /dev/null
echo 10 > $C/run
w $T/state stop > /dev/null
kthelper read $T /tmp/dis2 > /dev/null 2>&1
kthelper check -t /tmp/dis2 > /tmp/dis2.chk
is "$(kv /tmp/dis2/metadata layout) $(kv /tmp/dis2.chk records)" \
	"packed $((3 * NCPU * 10))" "discard: after a read the channel has room again"
rmmod ktrace_test

# ------------------------------------------------------------------
# flight recorder: overwrite the oldest, exact accounting
# ------------------------------------------------------------------
insmod $M/ktrace_test.ko name=fl flight=1 buf_size=4096 buf_nr=4
T=$D/ktrace_test/fl
w $T/state start > /dev/null
kthelper read $T /tmp/fl > /tmp/fl.out 2>&1 &
reader=$!
N=2000
echo $N > $C/run
sleep 1
kill -0 $reader 2>/dev/null
ok $? "flight: the reader waits while the recorder runs"
w $T/state stop > /dev/null
wait $reader
ok $? "flight: the reader copies it once stopped"
sed -n p $C/result > /tmp/fl.res
wr=$(kv /tmp/fl.res written)
ov=$(kv $T/info overwritten)
is "$wr $(kv /tmp/fl.res dropped)" "$((3 * NCPU * N)) 0" "flight: nothing dropped"
cmp_ok "$ov" -gt 0 "flight: old sub-buffers were overwritten"
kthelper check -t /tmp/fl > /tmp/fl.chk
sed 's/^/#   /' /tmp/fl.chk
is "$(kv /tmp/fl.chk records)" "$((wr - ov))" "flight: copy = written - overwritten"
is "$(kv /tmp/fl.chk subbufs) $(kv /tmp/fl.chk errors) $(kv /tmp/fl.chk order)" "$((NCPU * 4)) 0 0" \
	"flight: the last 4 sub-buffers of each CPU, intact"
if ktrace print /tmp/fl > /dev/null 2>/tmp/fl.perr; then ok 0 "ktrace print of a flight recording"; else
	ok 1 "ktrace print of a flight recording"
	sed 's/^/#   /' /tmp/fl.perr | head -n 5
fi
rmmod ktrace_test

# TRACE_DISABLE_STATE
insmod $M/ktrace_test.ko name=ro disable_state=1
T=$D/ktrace_test/ro
is "$(st $T/state) $(w $T/state start) $(w $T/state bogus) $(rd $T/state)" "400 EPERM EINVAL stop" \
	"TRACE_DISABLE_STATE: state is 0400, start refused, bad value EINVAL"
rmmod ktrace_test

# ------------------------------------------------------------------
# the sample module, ktrace read and ktrace print (the real CLI)
# ------------------------------------------------------------------
insmod $M/ktrace_sample.ko period_ms=5
ok $? "insmod ktrace_sample.ko"
# klog's order: the reader first, then tracing (issue 15: it ended at once)
ktrace read $K /tmp/sample > /tmp/sample.out 2>&1 &
reader=$!
sleep 1.5
kill -0 $reader 2>/dev/null
ok $? "ktrace read started before tracing waits for the channel to start"
w $K/state start > /dev/null
sleep 1
# issue 28: a second reader of the same channel copied part of the
# sub-buffers each (4000 + 3328 of 4000 records, both exit 0)
ktrace read $K /tmp/sample2 > /tmp/sample2.out 2>&1
is "$?" "1" "a second ktrace read of a channel being read: exit 1"
grep -q "another ktrace read is copying this channel" /tmp/sample2.out
ok $? "  and it says another ktrace read is copying the channel"
sed 's/^/#   /' /tmp/sample2.out
sleep 1
w $K/state stop > /dev/null
wait $reader
ok $? "ktrace read $K /tmp/sample"
sed 's/^/#   /' /tmp/sample.out
kthelper check /tmp/sample > /tmp/sample.chk
cmp_ok "$(kv /tmp/sample.chk records)" -gt 20 "the sample logged entry and exit events"
is "$(kv /tmp/sample.chk errors)" "0" "the copy is clean"
# issue 15: no summary was printed for a kernel channel
grep -q "^/tmp/sample: $NCPU streams, $(kv /tmp/sample.chk records) records, 0 lost," /tmp/sample.out
ok $? "ktrace read prints the summary: $NCPU streams and as many records as the checker counts"
ktrace print /tmp/sample > /tmp/sample.txt 2>/tmp/sample.perr
ok $? "ktrace print /tmp/sample"
ent=$(grep -c 'ktrace_sample_work:entry' /tmp/sample.txt)
ext=$(grep -c 'ktrace_sample_work:exit' /tmp/sample.txt)
cmp_ok "$ent" -gt 10 "entry events are named from the catalogue ($ent)"
cmp_ok "$((ent - ext))" -le 1 "each entry has its exit ($ext)"
is "$(grep -c . /tmp/sample.txt)" "$(kv /tmp/sample.chk records)" "one line per record"
diag "$(grep -m 1 'ktrace_sample_work:exit' /tmp/sample.txt)"
rmmod ktrace_sample

# ------------------------------------------------------------------
# unload while tracing under load
# ------------------------------------------------------------------
insmod $M/ktrace_test.ko name=ul buf_size=16384 buf_nr=8
T=$D/ktrace_test/ul
w $T/state start > /dev/null
kthelper read $T /tmp/ul > /tmp/ul.out 2>&1 &
reader=$!
load_hogs
echo 1 > $C/loop
sleep 1
rmmod_retry ktrace_test
ok $? "rmmod ktrace_test while its writers log into a running channel being read"
wait $reader
ok $? "the reader ends cleanly when the channel goes away"
is "$(kthelper check -t /tmp/ul | sed -n 's/^\(errors\|order\|wrongcpu\) //p' | tr '\n' ' ')" "0 0 0 " \
	"what it copied is intact"

insmod $M/ktrace_bench.ko
ok $? "insmod ktrace_bench.ko (sched_switch probe -> ktrace_log2)"
w $K/state start > /dev/null
ktrace read $K /tmp/sched > /tmp/sched.out 2>&1 &
reader=$!
sleep 1
rmmod_retry ktrace_bench
ok $? "rmmod ktrace_bench while the default channel runs under load"
sleep 0.2
rmmod_retry ktrace
ok $? "rmmod ktrace while its default channel runs and is being read"
wait $reader
is "$?" "0" "ktrace read ends cleanly when the module goes away"
unload_hogs
sed 's/^/#   /' /tmp/sched.out
kthelper check /tmp/sched > /tmp/sched.chk
sed 's/^/#   /' /tmp/sched.chk
cmp_ok "$(kv /tmp/sched.chk records)" -gt 100 "sched_switch events were recorded"
is "$(kv /tmp/sched.chk errors)" "0" "and copied intact"
ktrace print /tmp/sched > /tmp/sched.txt 2>/dev/null
cmp_ok "$(grep -c sched_switch /tmp/sched.txt)" -gt 100 "ktrace print names them sched_switch"
insmod $M/ktrace.ko && rmmod ktrace
ok $? "load and unload once more after all that"

# ------------------------------------------------------------------
# LKST: kernel events, handlers, masksets (kmod/tests/suite_lkst.sh)
# ------------------------------------------------------------------
. /suite_lkst.sh

# ------------------------------------------------------------------
# KFT in the kernel: /proc/kft, ktrace kft --kernel and --tracefs
# (kmod/tests/suite_kft.sh)
# ------------------------------------------------------------------
. /suite_kft.sh

# ------------------------------------------------------------------
# LKST hooks anywhere: kprobes as LKST events (kmod/tests/suite_hooks.sh)
# ------------------------------------------------------------------
. /suite_hooks.sh

# exception entry/exit events (kmod/tests/suite_exc.sh)
. /suite_exc.sh

# ------------------------------------------------------------------
# ktrace locks on the lock contention events (kmod/tests/suite_locks.sh)
# ------------------------------------------------------------------
. /suite_locks.sh

# ------------------------------------------------------------------
# the kernel log
# ------------------------------------------------------------------
dmesg > /tmp/dmesg.txt
bad=$(grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|list_del corruption|refcount_t:|UBSAN|KASAN|ktrace: ' /tmp/dmesg.txt | grep -vE 'module verification failed|loading out-of-tree module' | head -n 5)
is "$bad" "" "no kernel warning, BUG or oops"

echo "1..$n"
[ "$failed" = 0 ]
