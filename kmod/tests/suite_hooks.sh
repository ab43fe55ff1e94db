#!/bin/sh
# kmod/tests/suite_hooks.sh - the VM tests of LKST's user-placed hooks
# (kmod/lkst_hooks.c, `ktrace lkst hook`): a hook on a function without a
# tracepoint, checked against a tracefs kprobe event on the same function,
# masksets and handlers on its id, refused locations, deletion, unloading
# with hooks active.  Sourced by suite.sh (its helpers ok/is/cmp_ok/diag/
# rd/kv/st, load_hogs/unload_hogs, rmmod_retry, $D $M); starts and ends
# with ktrace.ko unloaded.
#
# The function: shmem_file_llseek, tmpfs's llseek (/tmp is tmpfs here),
# reached only through file->f_op->llseek, so never inlined, and no
# tracepoint on its path but the syscall ones.  `kthelper lseek FILE N`
# calls lseek(fd, i, SEEK_SET) for i = 0..N-1: N calls, whose second
# argument (the offset) sums to N(N-1)/2; the first is the struct file
# pointer, a kernel address, which a hook records as 0.

L=$D/ktrace/lkst
H=$L/hooks
TR=/sys/kernel/tracing
FN=shmem_file_llseek
HN=5000 # calls per load
hk_t0=$(cut -d' ' -f1 /proc/uptime)
hk_field() { awk -v n="$1" -v c="$2" '$2 == n { print $c }' $H; }   # NAME COLUMN
hk_ev() { awk -v n="$1" -v c="$2" '$2 == n { print $c }' $L/events; } # NAME COLUMN
# lines of the tracefs trace from task $1 for event $2
tr_count() { grep -c -- "-$1 .* $2: " $TR/trace; }

insmod $M/ktrace.ko
ok $? "insmod ktrace.ko (hooks)"
: > /tmp/hkfile
is "$(st $H)" "600" "ktrace/lkst/hooks is 0600"
is "$(kthelper asuser 65534 open $H r) $(kthelper asuser 65534 open $H w)" "EACCES EACCES" \
	"uid 65534 can neither read nor write it"
is "$(grep -vc '^#' $H)" "0" "no hook after load"
grep -q " [tT] $FN\$" /proc/kallsyms
ok $? "$FN is a kernel function here"
grep -q ":$FN\$" $TR/available_events 2> /dev/null
isnt "$?" "0" "and no tracepoint is called so"

# ------------------------------------------------------------------
# refused locations and bad commands
# ------------------------------------------------------------------
ktrace lkst hook add no_such_function_xyz > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'no such kernel function' /tmp/hk.err)" "1 1" "an unknown function: exit 1, 'no such kernel function'"
sed 's/^/#   /' /tmp/hk.err
# a function in the kernel's own kprobe blacklist
bl=""
for f in kprobe_int3_handler exc_int3 do_int3 kprobe_breakpoint_handler; do
	if grep -q "[[:space:]]$f\$" $D/kprobes/blacklist && grep -q " [tT] $f\$" /proc/kallsyms; then
		bl=$f
		break
	fi
done
isnt "$bl" "" "a blacklisted function found in $D/kprobes/blacklist ($bl)"
ktrace lkst hook add "$bl" > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'the kernel forbids a probe there' /tmp/hk.err)" "1 1" "a blacklisted function: exit 1, 'the kernel forbids a probe there'"
sed 's/^/#   /' /tmp/hk.err
ktrace lkst hook add "$FN+1" > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'not an instruction boundary' /tmp/hk.err)" "1 1" "FUNC+1: exit 1, 'not an instruction boundary'"
sed 's/^/#   /' /tmp/hk.err
ktrace lkst hook add "$FN+0x40000" > /dev/null 2> /tmp/hk.err
is "$?" "1" "an offset far beyond the function is refused"
sed 's/^/#   /' /tmp/hk.err
ktrace lkst hook add "$FN" a7 > /dev/null 2> /tmp/hk.err
is "$?" "2" "argument a7: usage error, exit 2"
r=""
for c in "add 0x10 $FN" "add auto $FN a1,a1" "add auto $FN a1,a2,a3,a4,a5" "add auto 9abc" "add auto $FN+x" \
	"add" "del" "del 0xc5" "frob 1"; do
	r="$r $(kthelper write $H "$c")"
done
is "$r" " EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL ENOENT EINVAL" \
	"bad commands to hooks: EINVAL (id out of range, args, name, offset, syntax), ENOENT (no such hook)"
is "$(grep -vc '^#' $H) $(grep -c "$FN" $D/kprobes/list)" "0 0" "nothing was left behind (no hook, no kprobe)"

# ------------------------------------------------------------------
# a hook and a tracefs kprobe event on the same function
# ------------------------------------------------------------------
ktrace lkst hook add $FN a1 a2 > /tmp/hk.add 2> /tmp/hk.err
is "$? $(cat /tmp/hk.add)" "0 hook 0xc0 $FN+0 a1,a2" "ktrace lkst hook add $FN a1 a2: id 0xc0"
sed 's/^/#   /' /tmp/hk.err
is "$(hk_field $FN+0 3) $(hk_field $FN+0 4) $(hk_field $FN+0 5) $(hk_field $FN+0 7)" "$FN 0 a1,a2 off" \
	"hooks lists it: function, offset, args, off while stopped"
diag "probe kind at offset 0: $(hk_field $FN+0 6)"
grep -q "^event 192 kevent $FN+0 hook a1,a2\$" $L/catalog
ok $? "the catalog names it: event 192 kevent $FN+0 hook a1,a2"
is "$(hk_ev $FN+0 1) $(hk_ev $FN+0 3) $(hk_ev $FN+0 5)" "0xc0 hook available" "events lists it as an available hook"
ktrace lkst read -m RALL | grep -q '^0xc0 1'
ok $? "RALL (every event) connects it to DEFAULT"
ktrace lkst read -m RDEFAULT | grep -q '^0xc0'
isnt "$?" "0" "RDEFAULT does not"
ktrace lkst hook add $FN > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'there is a hook at that place already' /tmp/hk.err)" "1 1" "the same place twice: refused"
ktrace lkst hook add vfs_llseek --id 0xc0 > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'hook id is taken' /tmp/hk.err)" "1 1" "a taken id: refused"
ktrace lkst hook list | grep -q "^0xc0  $FN+0 "
ok $? "ktrace lkst hook list shows it"

printf '# the hook only\n0xc0 DEFAULT\n' | ktrace lkst write -m 5 -n hooks
ok $? "a user maskset with the hook's id (ktrace lkst write -m 5)"
ktrace lkst config -m 5 $FN+0 DEFAULT
ok $? "config names the hook by FUNC+OFFSET"
ktrace lkst set -m hooks

echo "p:ktest/llseek $FN off=%si:u64" >> $TR/kprobe_events
ok $? "a tracefs kprobe event on $FN (p:ktest/llseek)"
echo 1 > $TR/events/ktest/llseek/enable
echo > $TR/trace
ktrace lkst start
ok $? "ktrace lkst start"
is "$(hk_field $FN+0 7)" "on" "the hook's kprobe is enabled while tracing"
ktrace read $L /tmp/hk > /tmp/hk.out 2>&1 &
reader=$!
kthelper lseek /tmp/hkfile $HN > /tmp/hk.pid
ok $? "kthelper lseek /tmp/hkfile $HN"
hpid=$(kv /tmp/hk.pid pid)
ktrace lkst stop
wait $reader
ok $? "ktrace read of the hook's records ended at stop"
echo 0 > $TR/events/ktest/llseek/enable
sed 's/^/#   /' /tmp/hk.out
is "$(hk_field $FN+0 7)" "off" "and disabled at stop"
lkstcheck -p "$hpid" /tmp/hk > /tmp/hk.chk
hrec=$(sed -n "s/^hook $FN+0 //p" /tmp/hk.chk)
set -- $hrec
is "$(kv /tmp/hk.chk errors) $(kv /tmp/hk.chk badlen) $(kv /tmp/hk.chk lost)" "0 0 0" "the trace is intact"
tcount=$(tr_count "$hpid" llseek)
[ "$tcount" -gt 0 ] || diag "tracefs trace: $(grep -v '^#' $TR/trace | head -n 3 | tr '\n' '|') ($(grep -vc '^#' $TR/trace) lines, tracing_on $(cat $TR/tracing_on))"
is "$2" "$tcount" "the hook recorded as many calls of task $hpid as the tracefs kprobe event ($tcount)"
is "$2" "$HN" "which is the number of calls made"
tsum=$(grep -- "-$hpid .* llseek: " $TR/trace | sed -n 's/.* off=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { printf "%d", s }')
is "$3" "0,$tsum" "its arguments: a1 (a pointer) 0, a2 summing as tracefs's off= do ($tsum)"
is "$tsum" "$((HN * (HN - 1) / 2))" "which is 0 + 1 + ... + (N-1)"
is "$(hk_ev $FN+0 8) $(hk_ev $FN+0 9) $(hk_ev $FN+0 10)" "$1 $1 0" \
	"events: hits = written = the records copied ($1), none dropped"
prof=$(awk '$1 == "llseek" || $1 == "ktest/llseek" { print $2 }' $TR/kprobe_profile)
cmp_ok "$prof" -ge "$tcount" "kprobe_profile's hitcount ($prof) covers them"
diag "hook records $1 (task $hpid: $2), tracefs lines of the task $tcount, kprobe_profile $prof"
ktrace print /tmp/hk > /tmp/hk.txt 2> /dev/null
is "$(grep -c "$FN+0 .*a2=" /tmp/hk.txt)" "$1" "ktrace print names every record $FN+0 with its arguments"
grep "$FN+0" /tmp/hk.txt | head -n 2 | sed 's/^/#   /'
# issue 28: a kernel address is shown as hidden (it read 0), and only a
# kernel address is hidden (vfs_fsync_range's end, LLONG_MAX, read 0)
is "$(grep -c "$FN+0 .*a1=hidden a2=" /tmp/hk.txt)" "$1" "ktrace print shows a1 (a struct file pointer) as hidden in every record"
ktrace lkst hook add vfs_fsync_range a1 a3 a4 > /tmp/hf.add 2> /tmp/hf.err
ok $? "ktrace lkst hook add vfs_fsync_range a1 a3 a4"
hid=$(awk '{ print $2 }' /tmp/hf.add)
printf '# the fsync hook only\n%s DEFAULT\n' "$hid" | ktrace lkst write -m 6 -n fsynchook
ktrace lkst set -m fsynchook
ktrace lkst start
ktrace read $L /tmp/hf > /tmp/hf.out 2>&1 &
reader=$!
sync /tmp/hkfile && sync /tmp/hkfile && sync /tmp/hkfile # fsync(): vfs_fsync_range(file, 0, LLONG_MAX, 0)
ok $? "sync FILE three times"
ktrace lkst stop
wait $reader
ktrace print /tmp/hf > /tmp/hf.txt 2> /dev/null
nfs=$(grep -c "vfs_fsync_range+0 .*a1=hidden a3=9223372036854775807 a4=0\$" /tmp/hf.txt)
cmp_ok "$nfs" -ge 3 "vfs_fsync_range: a1 hidden, a3 = LLONG_MAX as it is ($nfs records for 3 fsync calls)"
is "$(grep 'vfs_fsync_range+0' /tmp/hf.txt | grep -vc ' a1=hidden a3=9223372036854775807 a4=[01]$')" "0" \
	"  every record of the hook reads so (others: ktrace read's own fsync/fdatasync)"
grep 'vfs_fsync_range+0' /tmp/hf.txt | head -n 1 | sed 's/^/#   /'
ktrace lkst hook del vfs_fsync_range
ktrace lkst set -m hooks

# ------------------------------------------------------------------
# masksets switch it off and on, a handler sees it
# ------------------------------------------------------------------
ktrace lkst start
kthelper lseek /tmp/hkfile 300 > /dev/null
h1=$(hk_ev $FN+0 8)
ktrace lkst set -m RNOTHING
kthelper lseek /tmp/hkfile 300 > /dev/null
h2=$(hk_ev $FN+0 8)
ktrace lkst set -m hooks
kthelper lseek /tmp/hkfile 300 > /dev/null
h3=$(hk_ev $FN+0 8)
ktrace lkst stop
is "$h1 $h2 $h3" "300 300 600" "masksets: 300 hits, none under RNOTHING, 300 more when switched back"
insmod $M/ktrace_lkst_pid.ko
ok $? "insmod ktrace_lkst_pid.ko (a counting handler)"
ktrace lkst config -m hooks 0xc0 pid_switch
ok $? "connect the hook to pid_switch"
ktrace lkst start
kthelper lseek /tmp/hkfile 400 > /dev/null
ktrace lkst stop
is "$(cat /sys/module/ktrace_lkst_pid/parameters/skipped) $(hk_ev $FN+0 8) $(hk_ev $FN+0 9)" "400 400 0" \
	"the handler saw the 400 hits (and, not a context switch, wrote none)"
is "$(awk '$2 == "pid_switch" { print $3 }' $L/handlers)" "400" "handlers counts its 400 calls"
rmmod_retry ktrace_lkst_pid
ok $? "rmmod ktrace_lkst_pid"
ktrace lkst config -m hooks 0xc0 DEFAULT

# ------------------------------------------------------------------
# a hook inside the function (int3 or optimized)
# ------------------------------------------------------------------
off=0
eilseq=0
for o in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	r=$(kthelper write $H "add 0xc5 $FN+$o a1")
	if [ "$r" = ok ]; then off=$o; break; fi
	[ "$r" = EILSEQ ] && eilseq=$((eilseq + 1))
done
cmp_ok "$off" -gt 0 "an offset inside $FN is accepted (+$off, after $eilseq EILSEQ)"
is "$(hk_field $FN+$off 1)" "0xc5" "with the id asked for (0xc5)"
ktrace lkst config -m hooks 0xc5 DEFAULT
# First as a breakpoint: kprobe optimization off, so the handler runs in
# the int3 exception, which x86 enters as an NMI.
echo 0 > /proc/sys/debug/kprobes-optimization
ktrace lkst start
is "$(hk_field $FN+$off 6) $(hk_field $FN+0 6)" "kprobe ftrace" "inside: a kprobe; at the entry: ftrace-based"
kl=$(grep -E " $FN\+0x$(printf %x $off)([[:space:]]|\$)" $D/kprobes/list)
diag "kprobes/list: $kl"
kthelper lseek /tmp/hkfile 500 > /dev/null
ktrace lkst stop
is "$(hk_ev $FN+$off 8) $(hk_ev $FN+0 8)" "500 500" "as a breakpoint it counted the 500 calls, as the entry hook did"
is "$(hk_ev $FN+$off 9) $(hk_ev $FN+$off 10) $(hk_ev $FN+0 9)" "0 500 500" \
	"in int3's NMI context the channel refuses them: 500 dropped (counted), the entry hook wrote 500"
# Then optimized into a jump: a handler in the traced code's context.
echo 1 > /proc/sys/debug/kprobes-optimization
ktrace lkst start
i=0
while ! grep -qE " $FN\+0x$(printf %x $off)[[:space:]].*OPTIMIZED" $D/kprobes/list && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
kl=$(grep -E " $FN\+0x$(printf %x $off)([[:space:]]|\$)" $D/kprobes/list)
diag "kprobes/list: $kl"
# [OPTIMIZED] shows once the probe is queued; the jump is written after an
# RCU-tasks grace period: call until a record is written (at most ~10 s)
i=0
while [ "$(hk_ev $FN+$off 9)" = 0 ] && [ $i -lt 100 ]; do
	kthelper lseek /tmp/hkfile 1 > /dev/null
	sleep 0.1
	i=$((i + 1))
done
h0=$(hk_ev $FN+$off 8)
w0=$(hk_ev $FN+$off 9)
d0=$(hk_ev $FN+$off 10)
kthelper lseek /tmp/hkfile 500 > /dev/null
ktrace lkst stop
diag "optimized after $i tries: hits $h0 written $w0 dropped $d0 before the 500 calls"
case "$kl" in
*OPTIMIZED*)
	is "$(($(hk_ev $FN+$off 8) - h0)) $(($(hk_ev $FN+$off 9) - w0)) $(($(hk_ev $FN+$off 10) - d0))" \
		"500 500 0" "optimized into a jump: 500 more hits, all written"
	;;
*)
	is "$(($(hk_ev $FN+$off 9) + $(hk_ev $FN+$off 10) - w0 - d0))" "500" \
		"not optimizable here: 500 hits, written or dropped"
	;;
esac
diag "inner hook: written $(hk_ev $FN+$off 9) dropped $(hk_ev $FN+$off 10) missed $(hk_field $FN+$off 9)"

# ------------------------------------------------------------------
# deletion
# ------------------------------------------------------------------
ktrace lkst start
(while :; do kthelper lseek /tmp/hkfile 100 > /dev/null; done) &
lp1=$!
(while :; do kthelper lseek /tmp/hkfile 100 > /dev/null; done) &
lp2=$!
sleep 0.5
ktrace lkst hook del $FN
ok $? "ktrace lkst hook del $FN while tracing, the function called in a loop on both CPUs"
kill $lp1 $lp2 2> /dev/null
wait $lp1 $lp2 2> /dev/null
cmp_ok "$(hk_ev $FN+$off 8)" -gt 0 "the loops did call it (the other hook counted $(hk_ev $FN+$off 8))"
is "$(hk_field $FN+0 7) $(hk_ev $FN+0 1)" "deleted " "listed as deleted, gone from events"
grep -q "^event 192 kevent $FN+0 hook" $L/catalog
ok $? "still named in the catalog until the next start"
is "$(ktrace lkst read -m RALL | grep -c '^0xc0') $(ktrace lkst read -m hooks | grep -c '^0xc0')" "0 0" \
	"no maskset connects its id any more"
ktrace lkst stop
ktrace lkst start
ktrace lkst stop
grep -q "^event 192 kevent $FN+0 hook" $L/catalog
isnt "$?" "0" "gone from the catalog after a new start"
ktrace lkst hook del 0xc0 2> /tmp/hk.err
is "$? $(grep -c 'no hook 0xc0' /tmp/hk.err)" "1 1" "deleting it again: 'no hook 0xc0'"
ktrace lkst hook del 0xc5
ok $? "ktrace lkst hook del 0xc5 (by id)"
is "$(grep -c "$FN" $D/kprobes/list)" "1" "only the tracefs kprobe is left on $FN"
echo "-:ktest/llseek" >> $TR/kprobe_events

# ------------------------------------------------------------------
# the tracefs backend: a kprobe event per hook, recorded by record --kernel
# ------------------------------------------------------------------
ktrace lkst --tracefs hook add $FN a2 > /tmp/hk.tf 2> /tmp/hk.err
is "$? $(cat /tmp/hk.tf)" "0 hook 0xc0 $FN+0 a2 (tracefs ktrace_lkst/lkst_hook_c0)" \
	"ktrace lkst --tracefs hook add $FN a2"
sed 's/^/#   /' /tmp/hk.err
grep -qE "^p:ktrace_lkst/lkst_hook_c0 $FN(\+0)? a2=%si:u64\$" $TR/kprobe_events
ok $? "it is the kprobe event p:ktrace_lkst/lkst_hook_c0 $FN a2=%si:u64"
grep ktrace_lkst $TR/kprobe_events | sed 's/^/#   /'
ktrace lkst --tracefs hook add $FN > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'there is a hook at that place already' /tmp/hk.err)" "1 1" "--tracefs: the same place twice is refused"
ktrace lkst --tracefs hook add no_such_function_xyz > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'refused' /tmp/hk.err)" "1 1" "--tracefs: an unknown function is refused"
sed 's/^/#   /' /tmp/hk.err
ktrace lkst --tracefs hook add "$bl" > /dev/null 2> /tmp/hk.err
is "$? $(grep -c 'refused' /tmp/hk.err)" "1 1" "--tracefs: a blacklisted function is refused"
sed 's/^/#   /' /tmp/hk.err
# the whole system until SIGINT (a program under `record` needs libktrace)
ktrace record -q --kernel=hook -o /tmp/kr > /dev/null 2> /tmp/kr.err &
rec=$!
i=0
while [ ! -s /tmp/kr/kernel/metadata ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kthelper lseek /tmp/hkfile 3000 > /tmp/kr.out
kill -INT $rec
wait $rec
ok $? "ktrace record --kernel=hook while kthelper lseek /tmp/hkfile 3000 runs"
sed 's/^/#   /' /tmp/kr.err
kpid=$(kv /tmp/kr.out pid)
grep -q "^event 192 kevent $FN+0 hook a2\$" /tmp/kr/kernel/metadata
ok $? "the kernel sub-trace names the hook: event 192 kevent $FN+0 hook a2"
lkstcheck -p "$kpid" /tmp/kr/kernel > /tmp/kr.chk
is "$(kv /tmp/kr.chk errors) $(kv /tmp/kr.chk badlen) $(kv /tmp/kr.chk lost)" "0 0 0" "and is intact"
is "$(sed -n "s/^hook $FN+0 [0-9]* //p" /tmp/kr.chk)" "3000 $((3000 * 2999 / 2))" \
	"3000 records of the program's task, a2 = 0..2999, as the module's hook records"
ktrace lkst --tracefs hook list > /tmp/hk.tl
like_hits=$(awk '$1 == "0xc0" { print $6 }' /tmp/hk.tl)
cmp_ok "$like_hits" -ge 3000 "--tracefs hook list: kprobe_profile's hits ($like_hits)"
ktrace lkst --tracefs hook del $FN
ok $? "ktrace lkst --tracefs hook del $FN"
is "$(grep -c ktrace_lkst $TR/kprobe_events)" "0" "the kprobe event is gone"

# ------------------------------------------------------------------
# unloading with hooks active, under load
# ------------------------------------------------------------------
ktrace lkst hook add $FN a2 > /dev/null && ktrace lkst hook add vfs_llseek > /dev/null
ok $? "two hooks again ($FN, vfs_llseek)"
ktrace lkst set -m RALL
ktrace lkst start
ktrace read $L /tmp/hk2 > /tmp/hk2.out 2>&1 &
reader=$!
load_hogs
(while :; do kthelper lseek /tmp/hkfile 100 > /dev/null; done) &
lp=$!
sleep 1
rmmod_retry ktrace
ok $? "rmmod ktrace while hooks fire under load and the channel is read"
kill $lp 2> /dev/null
wait $lp 2> /dev/null
wait $reader
is "$?" "0" "the reader ends cleanly"
unload_hogs
is "$(grep -cE "$FN|vfs_llseek" $D/kprobes/list)" "0" "no kprobe is left behind"
kthelper lseek /tmp/hkfile 10 > /dev/null
ok $? "the function still works with the hooks gone"
rm -f /tmp/hkfile
diag "hook tests: $hk_t0 s -> $(cut -d' ' -f1 /proc/uptime) s of uptime"
