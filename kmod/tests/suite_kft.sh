# kmod/tests/suite_kft.sh - VM tests of KFT in the kernel (docs/KMOD.md, "KFT in
# the kernel"): /proc/kft, /proc/kft_data, `ktrace kft --kernel` and
# `ktrace kft --tracefs`.  Sourced by suite.sh (busybox sh, as root), whose
# helpers it uses (ok, is, isnt, cmp_ok, diag, rd, kv, st, w, load_hogs,
# unload_hogs, rmmod_retry); ktrace.ko is not loaded when it starts.
#
# Every configuration sample of seed 002's Appendix A is run, with today's
# names: do_fork is kernel_clone; the boot samples' start_kernel (freed
# after boot) and to_userspace (a KFT patch's marker) become a module's
# init, do_init_module, the runtime counterpart of booting a kernel part.

P=/proc/kft
KS=/tmp/kft
mkdir -p $KS
# Value of "KEY: value" in /proc/kft (or in FILE).
ks() { sed -n "s/^$1: //p" "${2:-$P}" | head -n 1; }
# Wait up to $2 tenths of a second for state $1.
kft_wait() {
	i=0
	while [ "$(ks state)" != "$1" ] && [ $i -lt "$2" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(ks state)" = "$1" ]
}
# Load a configuration written with printf escapes; prints nothing, returns the status.
kft_load() { printf "$1" > $KS/cfg && ktrace kft --kernel load $KS/cfg; }
# The sum of the filtered counters.
kft_filtered() { ks "entries filtered" | cut -d' ' -f1; }
# Records in a trace directory, by kthelper's walk.
kft_records() { kthelper check "$1" | sed -n 's/^records //p'; }
forks() { for i in 1 2 3 4 5; do ( : ); done; }

kft_t0=$(cut -d' ' -f1 /proc/uptime)
insmod $M/ktrace.ko
ok $? "KFT: insmod ktrace.ko"
is "$(st $P) $(st /proc/kft_data) $(st /proc/kft_callsites)" "600 400 400" \
	"KFT: /proc/kft is 0600, /proc/kft_data and /proc/kft_callsites 0400"
r="$(kthelper asuser 65534 open $P r) $(kthelper asuser 65534 open $P w) $(kthelper asuser 65534 open /proc/kft_data r)"
is "$r" "EACCES EACCES EACCES" "KFT: uid 65534 can neither read nor write the kft files"
is "$(ks state) $(ks probes)" "unconfigured 0 (calls missed 0)" "KFT: a new module has no configuration"

# ---- seed sample: short routines called by do_fork, in a small log (by name)
kft_load 'trigger start entry kernel_clone\ntrigger stop exit kernel_clone\nfilter mintime 10\nfilter maxtime 400\nfilter noints\nlogentries 500\n'
ok $? "KFT sample do_fork (kernel_clone by name): ktrace kft --kernel load"
is "$(ks state) $(ks probes)" "configured 1 (calls missed 0)" "  configured, one kretprobe"
echo prime > $P
ok $? "  echo prime > /proc/kft"
forks
kft_wait stopped 50
ok $? "  a fork started and stopped the run"
is "$(ks started | sed 's/^[0-9]* us //') | $(ks stopped | sed 's/^[0-9]* us //')" \
	"by entry to kernel_clone | by exit from kernel_clone" "  started by entry to, stopped by exit from kernel_clone"
kept=$(ks "entries kept" | cut -d' ' -f1)
cmp_ok "$((kept + $(kft_filtered)))" -ge 1 "  the triggering call was decided (kept $kept, filtered $(kft_filtered))"
ktrace kft --kernel extract $KS/s3 > /dev/null
ok $? "  ktrace kft --kernel extract"
is "$(kft_records $KS/s3)" "$kept" "  /proc/kft_data holds the kept calls"
if [ "$kept" -gt 0 ]; then
	ktrace print $KS/s3 | grep -o 'dur=[0-9]*' | cut -d= -f2 > $KS/s3.dur
	is "$(awk '$1 < 10000 || $1 > 400000' $KS/s3.dur | wc -l)" "0" "  every kept call lasted 10..400 us"
else
	ok 0 "  (the call lasted more than 400 us under TCG: filtered by maxtime)"
fi

# ---- seed sample: >500 us for 5 s after the next fork, do_fork by address (sym2addr)
addr=$(sed -n 's/^\([0-9a-f]*\) [Tt] kernel_clone$/\1/p' /proc/kallsyms | head -n 1)
kft_load "trigger start entry 0x$addr\ntrigger stop time 5000000\nfilter mintime 500\nfilter maxtime 0\nfilter noints\n"
ok $? "KFT sample >500 us for 5 s after a fork (kernel_clone at 0x$addr)"
echo prime > $P
forks
kft_wait running 20
ok $? "  the fork started it"
load_hogs
forks
kft_wait stopped 90
ok $? "  it stopped by itself (hrtimer time trigger)"
unload_hogs
s=$(ks started | cut -d' ' -f1)
e=$(ks stopped | cut -d' ' -f1)
is "$(ks started | sed 's/^[0-9]* us //') | $(ks stopped | sed 's/^[0-9]* us //')" \
	"by entry to kernel_clone | by time" "  started by entry to kernel_clone, stopped by time"
cmp_ok "$((e - s))" -ge 4999999 "  after 5 s (started $s us, stopped $e us)"
cmp_ok "$((e - s))" -le 5000001 "  and not later"
ktrace kft --kernel extract $KS/s2 > /dev/null
ktrace print $KS/s2 > $KS/s2.txt
is "$(grep -c ' dur=' $KS/s2.txt)" "$(ks "entries kept" | cut -d' ' -f1)" "  every kept call is in the trace"
# Calls open at the stop are kept as unfinished: time filters do not apply to them.
is "$(grep -v unfinished $KS/s2.txt | grep -o 'dur=[0-9]*' | awk -F= '$2 < 500000' | wc -l) $(grep -c 'sig=' $KS/s2.txt)" "0 0" \
	"  each finished call lasted 500 us or more, none in interrupt context"

# ---- seed sample: the boot trace (start_kernel .. to_userspace), as a module's init
kft_load 'trigger start entry do_init_module\ntrigger stop exit do_init_module\nfilter mintime 500\nfilter maxtime 0\nfilter noints\n'
ok $? "KFT sample boot >500 us without interrupts (do_init_module for start_kernel/to_userspace)"
echo prime > $P
insmod $M/ktrace_sample.ko period_ms=1000 && rmmod ktrace_sample
kft_wait stopped 50
ok $? "  loading a module ran it"
is "$(ks started | sed 's/^[0-9]* us //') | $(ks stopped | sed 's/^[0-9]* us //')" \
	"by entry to do_init_module | by exit from do_init_module" "  started and stopped by do_init_module"
is "$(($(ks "entries kept" | cut -d' ' -f1) + $(kft_filtered)))" "1" "  the init call was kept or filtered by mintime"

# ---- seed sample: interrupts for 5 ms, 5 s after boot (no function: no probe)
kft_load 'trigger start time 5000000\ntrigger stop time 5000\nfilter onlyints\n'
ok $? "KFT sample interrupts for 5 ms after 5 s"
echo prime > $P
kft_wait stopped 80
ok $? "  it ran and stopped on time, with no probed function (hrtimer)"
is "$(ks started) | $(ks stopped) | $(ks probes)" "5000000 us by time | 5005000 us by time | 0 (calls missed 0)" \
	"  started 5 s after boot by time, stopped 5 ms later"

# ---- seed sample: every call to schedule after 10 s, by name and by address
kft_load 'trigger start time 10000000\nfilter funclist schedule fend\n'
ok $? "KFT sample schedule after 10 s (by name)"
echo prime > $P
kft_wait running 150
ok $? "  running after 10 s"
forks
sleep 0.3
echo stop > $P
kept=$(ks "entries kept" | cut -d' ' -f1)
cmp_ok "$kept" -gt 0 "  calls of schedule were kept ($kept)"
ktrace kft --kernel extract $KS/s5 > /dev/null
kthelper check $KS/s5 > $KS/s5.chk
nrec=$(kv $KS/s5.chk records)
# Calls open at the stop are written (unfinished) when they return: there may be more now.
cmp_ok "$nrec" -ge "$kept" "  the extracted stream has the kept calls ($nrec)"
is "$(kv $KS/s5.chk errors) $(kv $KS/s5.chk tsback)" "0 0" "  the stream is intact and in time order"
cmp_ok "$nrec" -le "$(ks log $KS/s5/kft-status | cut -d' ' -f1)" "  and has no more calls than the log (copied after it)"
saddr=$(sed -n 's/^\([0-9a-f]*\) [Tt] schedule$/\1/p' /proc/kallsyms | head -n 1)
ktrace print $KS/s5 > $KS/s5.txt
is "$(grep -c ' schedule  *entry=' $KS/s5.txt)" "$nrec" "  ktrace print names every call schedule (from DIR/kallsyms)"
if ktrace kd $KS/s5 > $KS/s5.kd 2>$KS/s5.kderr; then ok 0 "  ktrace kd reads the kernel trace"; else
	ok 1 "  ktrace kd reads the kernel trace"
	sed 's/^/#   /' $KS/s5.kderr | head -n 3
fi
is "$(awk '$1 == "schedule" {print $2}' $KS/s5.kd)" "$nrec" "  kd counts $nrec calls of schedule"
ktrace addr2sym $KS/s5 > $KS/s5.a2s 2>$KS/s5.a2err
ok $? "  ktrace addr2sym reads it"
is "$(grep -c ' schedule  *[a-z_0-9.]*+0x[0-9a-f]*$' $KS/s5.a2s)" "$nrec" "  addr2sym names schedule and where it was called"
diag "$(grep -m 1 ' schedule ' $KS/s5.a2s)"
kft_load "trigger start time 10000000\nfilter funclist 0x$saddr fend\n"
ok $? "KFT sample schedule after 10 s (by address 0x$saddr)"
echo prime > $P && sleep 0.2 && echo stop > $P
cmp_ok "$(ks "entries kept" | cut -d' ' -f1)" -gt 0 "  calls of schedule were kept"

# ---- malformed configurations: EINVAL, and the running configuration stays
kft_load 'filter funclist schedule kernel_clone fend\n'
echo start > $P
gen=$(ks configuration)
probes=$(ks probes)
bad=""
for c in 'frobnicate' 'trigger start entry no_such_function_kft' 'filter funclist schedule' \
	'filter mintime 500\nfilter maxtime 400' 'filter funclist schedule 0x1 fend' \
	'filter noints\nfilter onlyints' 'begin\ntrigger start time 1' 'logentries 0' \
	'trigger start entry' 'watch stack' 'new\nnew' 'filter\0noints' \
	'trigger start entry kernel_clone\ntrigger start entry schedule' 'end' \
	'trigger start entry notify_die' 'filter funclist schedule 0xffffffffffffff00 fend'; do
	r=$(w $P "$c")
	[ "$r" = EINVAL ] || bad="$bad '$c'=$r"
	[ "$(ks state) $(ks configuration) $(ks probes)" = "running $gen $probes" ] || bad="$bad '$c':changed"
done
is "$bad" "" "KFT: 16 malformed configurations fail with EINVAL, the running one is untouched"
# issue 15: logentries beyond the log the module can allocate was accepted
# and then reported as that many entries over a 1M-entry log
is "$(w $P 'filter mintime 5\nlogentries 99999999999') $(ks state) $(ks configuration)" "EINVAL running $gen" \
	"KFT: logentries 99999999999 (more than the module's 1M-entry log) is refused, nothing changes"
is "$(ks error)" "2:12: logentries 99999999999 is more than the log can hold (at most 1048576 entries)" \
	"  the error names line, column and the limit"
w $P 'filter funclist notify_die fend' > /dev/null
diag "$(ks error)"
head -c 70000 /dev/zero | tr '\0' '#' > $KS/big
dd if=$KS/big of=$P bs=70000 count=1 2>/dev/null
isnt "$?" 0 "  a 70000-byte write is refused"
is "$(ks state) $(ks configuration)" "running $gen" "  still running the same configuration"
printf 'trigger start entry kernel_clone\nfilter mintime 5 # ok\nfilter funclist sched0le fend\n' > $KS/bad.cfg
ktrace kft --kernel load $KS/bad.cfg 2> $KS/bad.err
is "$?:$(cat $KS/bad.err)" "1:ktrace kft: $KS/bad.cfg:3:17: unknown function 'sched0le'" \
	"  ktrace kft --kernel load names file, line and column"
is "$(w $P prime)" "EBUSY" "  prime while running: EBUSY"
echo stop > $P
is "$(w $P stop)" "EBUSY" "  stop while stopped: EBUSY"
is "$(ks error)" "stop: the run is stopped: cannot stop" "  the status says why"

# ---- noints / onlyints: hard and soft irq context
kft_load 'filter funclist update_process_times kernel_clone fend\nfilter onlyints\n'
ok $? "KFT: onlyints with a hard-irq function (update_process_times) and kernel_clone"
echo start > $P
load_hogs
forks
sleep 0.5
echo stop > $P
unload_hogs
ktrace kft --kernel extract $KS/oi > /dev/null
ktrace print $KS/oi > $KS/oi.txt
cmp_ok "$(grep -c 'sig=2' $KS/oi.txt)" -gt 0 "  calls in hard-irq context were kept"
is "$(grep ' dur=' $KS/oi.txt | grep -vc 'sig=')" "0" "  none in task context"
cmp_ok "$(ks "entries filtered" | sed 's/.*(ints \([0-9]*\),.*/\1/')" -gt 0 "  kernel_clone calls were filtered as not in interrupt context"
kft_load 'filter funclist update_process_times kernel_clone fend\nfilter noints\n'
echo start > $P
forks
sleep 0.3
echo stop > $P
ktrace kft --kernel extract $KS/ni > /dev/null
ktrace print $KS/ni > $KS/ni.txt
cmp_ok "$(grep -c ' dur=' $KS/ni.txt)" -gt 0 "KFT: noints keeps calls in task context"
is "$(grep -c 'sig=' $KS/ni.txt)" "0" "  and none in interrupt context"

# ---- stack watch, worst-stack, logentries, autorepeat
kft_load 'filter funclist schedule fend\nwatch stack 16384\n'
echo start > $P
forks
sleep 0.2
echo stop > $P
cmp_ok "$(ks "stack watch" | sed 's/.*fired \([0-9]*\) times/\1/')" -gt 0 "KFT: watch stack 16384 fires at every entry of schedule"
ktrace kft --kernel extract $KS/ws > /dev/null
ktrace print $KS/ws > $KS/ws.txt
is "$(grep -c ' watch' $KS/ws.txt)" "$(grep -c ' dur=' $KS/ws.txt)" "  the kept calls are flagged watch"
kft_load 'filter funclist schedule kernel_clone fend\nwatch worst-stack 16384\n'
echo start > $P
forks
sleep 0.2
echo stop > $P
th=$(ks "stack watch" | sed 's/.*threshold \([0-9]*\) bytes.*/\1/')
low=$(ks "lowest stack" | cut -d' ' -f1)
cmp_ok "$th" -lt 16384 "KFT: worst-stack lowered its threshold to the deepest stack ($th bytes)"
is "$low" "$th" "  the lowest stack is in the status"
kft_load 'filter funclist schedule fend\nlogentries 10\n'
echo start > $P
forks
kft_wait stopped 50
ok $? "KFT: logentries 10 stopped the run"
is "$(ks stopped | sed 's/^[0-9]* us //') $(ks "entries kept" | cut -d' ' -f1)" "by logentries 10" "  by logentries, with 10 entries"
kft_load 'trigger start entry kernel_clone\ntrigger stop exit kernel_clone\nautorepeat\n'
echo prime > $P
forks
sleep 0.2
echo stop > $P
cmp_ok "$(ks run)" -ge 5 "KFT: autorepeat re-primed after each stop trigger ($(ks run) runs)"

# ---- a full log stops the run (KFT's log is not circular)
rmmod ktrace && insmod $M/ktrace.ko kft_log=16
kft_load 'filter funclist schedule fend\n'
echo start > $P
forks
kft_wait stopped 50
ok $? "KFT: a 16-entry log (kft_log=16) filled up and stopped the run"
is "$(ks stopped | sed 's/^[0-9]* us //') $(ks log | cut -d' ' -f1-3)" "by buffer full 16 of 16" "  stopped by buffer full"
# "entries lost" is live: calls that entered before the stop and return
# after it are still counted, so the snapshot's count lies between the
# status read before and after it.
lost0=$(ks "entries lost")
ktrace kft --kernel extract $KS/full > /dev/null
lost1=$(ks "entries lost")
klost=$(kthelper check $KS/full | sed -n 's/^lost //p')
is "$(kft_records $KS/full)" 16 "  the trace has 16 calls"
ok $([ -n "$klost" ] && [ "$lost0" -le "$klost" ] && [ "$klost" -le "$lost1" ]; echo $?) \
	"  and counts the lost ones ($klost; status said $lost0 before, $lost1 after)"

# ---- unload while probes fire
kft_load 'filter funclist schedule kernel_clone update_process_times fend\n'
echo start > $P
load_hogs
sleep 0.5
rmmod_retry ktrace
ok $? "KFT: rmmod ktrace while its kretprobes fire under load"
unload_hogs
[ ! -e $P ] && [ ! -e /proc/kft_data ]
ok $? "  the /proc files are gone"

# ---- ktrace kft --tracefs: every function through function_graph
T=/sys/kernel/tracing
printf 'trigger start entry kernel_clone\ntrigger stop exit kernel_clone\n' > $KS/tf1.cfg
ktrace kft --tracefs -c $KS/tf1.cfg -o $KS/tf1 -- sh -c '( : )' > $KS/tf1.out 2>&1
ok $? "KFT --tracefs: the seed's do_fork call tree (set_graph_function kernel_clone)"
sed 's/^/#   /' $KS/tf1.out
cmp_ok "$(kft_records $KS/tf1)" -gt 20 "  the calls made by kernel_clone are CALL records"
ktrace kd -c $KS/tf1 > $KS/tf1.kd 2>&1
ok $? "  ktrace kd -c reads them"
grep -q ' kernel_clone$' $KS/tf1.kd && grep -q '|  copy_process$' $KS/tf1.kd
ok $? "  kd -c shows kernel_clone with copy_process nested inside"
sed -n '1,12p' $KS/tf1.kd | sed 's/^/#   /'
ktrace print $KS/tf1 | head -n 8 | sed 's/^/#   /' 
is "$(cat $T/current_tracer) $(cat $T/tracing_thresh) $(grep -c . $T/kprobe_events) $(grep -vc '^#' $T/set_graph_function)" \
	"nop 0 0 0" "  tracefs is put back (tracer, thresh, probes, graph function)"
printf 'trigger start entry kernel_clone\ntrigger stop time 400000\nfilter funclist schedule kernel_clone fend\nfilter mintime 1\nlogentries 100\n' > $KS/tf2.cfg
ktrace kft --tracefs -c $KS/tf2.cfg -o $KS/tf2 -- sh -c 'sleep 0.3; ( : ); ( : ); sleep 0.6' > $KS/tf2.out 2>&1
ok $? "KFT --tracefs: start entry (kprobe event + traceon), stop time, funclist, mintime, logentries"
sed 's/^/#   /' $KS/tf2.out
nrec=$(kft_records $KS/tf2)
cmp_ok "$nrec" -gt 0 "  calls were kept ($nrec)"
cmp_ok "$nrec" -le 100 "  no more than logentries"
cmp_ok "$(ks "trigger events" $KS/tf2/kft-status)" -ge 1 "  the start trigger event was recorded"
ktrace print $KS/tf2 > $KS/tf2.txt
is "$(grep ' dur=' $KS/tf2.txt | grep -vc -e ' schedule  *entry=' -e ' kernel_clone  *entry=')" "0" "  only funclist functions"
is "$(grep -o 'dur=[0-9]*' $KS/tf2.txt | awk -F= '$2 < 1000' | wc -l)" "0" "  each lasted 1 us or more (tracing_thresh)"
ktrace kft --tracefs -c $KS/tf2.cfg -o $KS/tfk -d 30 > /dev/null 2>&1 &
kp=$!
i=0
while [ ! -e $T/events/ktrace_kft/start ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $kp
wait $kp 2>/dev/null
# what a SIGKILL leaves (nothing can put it back): the tracer, and
# tracing_on 0 when the run was waiting for its start trigger; the suites
# after this one (suite_hooks.sh) count events in the top-level buffer
echo nop > $T/current_tracer
echo 1 > $T/tracing_on
ktrace kft --tracefs -c $KS/tf2.cfg -o $KS/tf4 -- sh -c '( : ); sleep 0.5' > $KS/tf4.out 2>&1
ok $? "KFT --tracefs after a run killed with SIGKILL (its kprobe events are removed)"
is "$(grep -c . $T/kprobe_events)" "0" "  and none is left"
# issue 28: a call's duration is CLOCK_MONOTONIC time (funcgraph's
# calltime/rettime are trace_clock_local, sched_clock: its rate may differ),
# checked against the program's own clock around a 2 s sleep
printf 'filter funclist hrtimer_nanosleep fend\nfilter mintime 500000\n' > $KS/tf5.cfg
ktrace kft --tracefs -c $KS/tf5.cfg -o $KS/tf5 -- sh -c "kthelper now > $KS/tf5.marks; sleep 2; kthelper now >> $KS/tf5.marks" > $KS/tf5.out 2>&1
ok $? "KFT --tracefs: hrtimer_nanosleep of a 2 s sleep"
t0=$(sed -n 1p $KS/tf5.marks)
t1=$(sed -n 2p $KS/tf5.marks)
ktrace print -C $KS/tf5 > $KS/tf5.csv 2> /dev/null
# CSV: time_ns (entry), dur_ns; the one call inside the two marks
set -- $(sed 1d $KS/tf5.csv | awk -F, -v a="$t0" -v b="$t1" '$1 >= a && $1 + $2 <= b { n++; d = $2 } END { printf "%d %d", n, d }')
is "$1" "1" "  one hrtimer_nanosleep call lies between the program's marks (entry and exit on CLOCK_MONOTONIC)"
cmp_ok "$2" -ge 2000000000 "  it lasted the 2 s asked for ($2 ns)"
cmp_ok "$2" -le "$((t1 - t0))" "  and no longer than the marks are apart ($((t1 - t0)) ns)"
printf 'filter funclist schedule fend\nwatch stack 4096\n' > $KS/tf3.cfg
ktrace kft --tracefs -c $KS/tf3.cfg -o $KS/tf3 -d 0.1 2> $KS/tf3.err
is "$?" "1" "KFT --tracefs refuses a stack watch"
diag "$(cat $KS/tf3.err)"
diag "KFT tests: $kft_t0 s -> $(cut -d' ' -f1 /proc/uptime) s of uptime"
