#!/bin/sh
# kmod/tests/suite_exc.sh - the VM tests of LKST's exception events
# (kmod/lkst_exc.c: EXCEPTION_ENTRY 0x20 "vector,error_code,ip" from the
# die notifier chain and the page fault tracepoints, EXCEPTION_EXIT 0x21
# "vector" from kretprobes on the trap handlers this kernel lets us probe).
# Sourced by suite.sh (helpers ok/is/cmp_ok/diag/kv, $D $M); starts and
# ends with ktrace.ko unloaded.  `run-vm.sh exc` runs it alone.
#
# `excprog N` (kmod/tests/excprog.c) executes int3 N times (vector 3), an
# integer divide by zero N times (vector 0) and reads N unmapped addresses
# 0x10, 0x18, ... (vector 14), and with "ss" single-steps N times (vector
# 1: popf sets TF), each caught by a signal handler.  Expected, for its
# pid: exactly N entries with vector 3 and N with vector 0; N with vector
# 1, error code DR6 = 0x4000 (DR_STEP) and the ip in main; as
# many vector-14 entries as page fault events (EXCEPTION_PAGEFAULT_USER +
# _KERNEL, the same tracepoints), of which N user faults at the addresses
# read; exits: N per trap whose handler function is probe-able here (the
# events file says which), none for page faults.  No field of any
# EXCEPTION_ENTRY, in either backend's trace, is a kernel address.

L=$D/ktrace/lkst
XN=25
# records of the CSV $1 in task $2 named $3 with argument text $4 (a regex)
ex_count() { awk -F, -v t="$2" -v n="$3" -v a="$4" '$6 == t && $9 == n && $0 ~ a { c++ } END { print c + 0 }' "$1"; }
# EXCEPTION_ENTRY fields of the CSV $1 (every task) in the kernel half
# (>= 0xffff800000000000 = 18446603336221196288, decimal or 0x hex)
ex_kaddr() { awk -F, '$9 == "EXCEPTION_ENTRY" { n = split($10, f, ";"); for (i = 1; i <= n; i++) {
	v = substr(f[i], index(f[i], "=") + 1)
	if (v ~ /^0x/) { if (length(v) == 18 && substr(v, 3, 1) ~ /[89a-fA-F]/) c++ }
	else if (v + 0 >= 18446603336221196288) c++ } } END { print c + 0 }' "$1"; }

insmod $M/ktrace.ko
ok $? "insmod ktrace.ko (exceptions)"
is "$(awk '$2 == "EXCEPTION_ENTRY" { print $4, $5 }' $L/events)" "ktrace:exception_entry available" \
	"EXCEPTION_ENTRY is available (ktrace:exception_entry)"
xstat=$(awk '$2 == "EXCEPTION_EXIT" { print $5 }' $L/events)
diag "EXCEPTION_EXIT: $xstat; trap handlers in kallsyms: $(grep -E ' t (do_int3_user|do_error_trap|math_error|do_trap|do_int3|gp_user_force_sig_segv|handle_invalid_op)(\.[a-z0-9.]*)?$' /proc/kallsyms | awk '{ printf "%s ", $3 }')"
diag "kprobe blacklist: $(grep -E 'do_int3|do_trap|do_error_trap|math_error|notify_die|exc_int3' $D/kprobes/blacklist | awk '{ printf "%s ", $2 }')"
printf '0x20 DEFAULT\n0x21 DEFAULT\n0x22 DEFAULT\n0x23 DEFAULT\n' | ktrace lkst write -m 7 -n exc
ok $? "a maskset with EXCEPTION_ENTRY/EXIT and the page fault events (ktrace lkst write -m 7)"
ktrace lkst set -m exc
ok $? "ktrace lkst set -m exc"
ktrace lkst start
ok $? "ktrace lkst start"
is "$(awk '$2 == "EXCEPTION_ENTRY" { print $6 }' $L/events)" "on" "EXCEPTION_ENTRY's sources are on while tracing"
ktrace read $L /tmp/ex > /tmp/ex.out 2>&1 &
reader=$!
excprog $XN ss > /tmp/ex.prog
ok $? "excprog $XN ss: every int3, divide error, bad read and single step was caught"
xpid=$(kv /tmp/ex.prog pid)
sleep 0.2
ktrace lkst stop
wait $reader
ok $? "ktrace read of the exception trace ended at stop"
sed 's/^/#   /' /tmp/ex.out
is "$(awk '$2 == "EXCEPTION_ENTRY" { print $6 }' $L/events)" "off" "and off after stop"
lkstcheck -p "$xpid" /tmp/ex > /tmp/ex.chk
is "$(kv /tmp/ex.chk errors) $(kv /tmp/ex.chk badlen) $(kv /tmp/ex.chk lost)" "0 0 0" \
	"the exception trace is intact, every record of its catalogue length"
ktrace print -C /tmp/ex > /tmp/ex.csv 2> /tmp/ex.perr
ok $? "ktrace print -C of the exception trace"
diag "$(grep -m 1 ',EXCEPTION_ENTRY,' /tmp/ex.csv)"
e3=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_ENTRY 'vector=3([^0-9]|$)')
e0=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_ENTRY 'vector=0([^0-9]|$)')
e14=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_ENTRY 'vector=14([^0-9]|$)')
pfu=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_PAGEFAULT_USER '')
pfk=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_PAGEFAULT_KERNEL '')
bad=$(awk -F, -v t="$xpid" -v n="$XN" '$6 == t && $9 == "EXCEPTION_PAGEFAULT_USER" {
	if (match($0, /address=[0-9]+/)) { v = substr($0, RSTART + 8, RLENGTH - 8) + 0;
	if (v >= 16 && v < 16 + 8 * n && (v - 16) % 8 == 0) c++ } } END { print c + 0 }' /tmp/ex.csv)
is "$e3" "$XN" "int3: $XN EXCEPTION_ENTRY with vector 3 (X86_TRAP_BP) in excprog's pid $xpid"
is "$e0" "$XN" "divide by zero: $XN EXCEPTION_ENTRY with vector 0 (X86_TRAP_DE)"
set -- $(awk '$4 == "main" { print $1, $2 }' /excprog.nm)
e1=$(awk -F, -v t="$xpid" -v lo=$((0x$1)) -v hi=$((0x$1 + 0x$2)) '$6 == t && $9 == "EXCEPTION_ENTRY" && $10 ~ /^vector=1;/ {
	split($10, a, ";"); n++; if (a[2] == "error_code=16384") d++; ip = substr(a[3], 4) + 0; if (ip >= lo && ip < hi) m++ }
	END { print n + 0, d + 0, m + 0 }' /tmp/ex.csv)
is "$e1" "$XN $XN $XN" "single step: $XN EXCEPTION_ENTRY with vector 1, error_code DR6 = 0x4000 (DR_STEP), ip in main"
is "$e14" "$((pfu + pfk))" "page faults: EXCEPTION_ENTRY with vector 14 = the page fault events of the pid ($pfu user + $pfk kernel)"
is "$bad" "$XN" "of which $XN user faults at the $XN unmapped addresses read"
other=$(awk -F, -v t="$xpid" '$6 == t && $9 == "EXCEPTION_ENTRY" && $0 !~ /vector=(0|1|3|14)([^0-9]|$)/' /tmp/ex.csv | wc -l)
is "$other" "0" "no other vector in excprog"
is "$(ex_kaddr /tmp/ex.csv)" 0 "no EXCEPTION_ENTRY field of the module's trace ($(grep -c ',EXCEPTION_ENTRY,' /tmp/ex.csv) records) is a kernel address"
x3=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_EXIT 'vector=3([^0-9]|$)')
x0=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_EXIT 'vector=0([^0-9]|$)')
x14=$(ex_count /tmp/ex.csv "$xpid" EXCEPTION_EXIT 'vector=14([^0-9]|$)')
probe_ok() { grep -q " t $1\$" /proc/kallsyms && ! grep -q "[[:space:]]$1\$" $D/kprobes/blacklist; }
want3=0; probe_ok do_int3_user && want3=$XN
want0=0; probe_ok do_error_trap && want0=$XN
diag "exits: int3 $x3 (do_int3_user probe-able: $want3), divide error $x0 (do_error_trap: $want0), page fault $x14"
is "$x3 $x0 $x14" "$want3 $want0 0" \
	"EXCEPTION_EXIT: one per int3/divide error whose handler is probe-able here, none for page faults"
if [ "$xstat" = unavailable ]; then
	why=$(sed -n 's/^unavailable 33 EXCEPTION_EXIT //p' /tmp/ex/metadata)
	isnt "$why" "" "EXCEPTION_EXIT unavailable, the metadata says why ($why)"
else
	ok 0 "EXCEPTION_EXIT available ($xstat)"
fi

# ------------------------------------------------------------------
# memview on the module's page events (MEM_PAGE_ALLOC/FREE 0x40/0x41):
# memphases (tests/kernel/memphases.c) grows by MV MiB, holds, munmaps;
# expected from MV alone: E = MV * 256 pages allocated and peak, E .. E +
# E/10 + 1024, and at least E freed (tests/memview.sh does the same on
# the tracefs backend)
# ------------------------------------------------------------------
MV=16
ME=$((MV * 256))
printf '0x40 DEFAULT\n0x41 DEFAULT\n' | ktrace lkst write -m 8 -n pages
ok $? "a maskset of MEM_PAGE_ALLOC and MEM_PAGE_FREE (ktrace lkst write -m 8)"
ktrace lkst set -m pages
w $L/buf_size 1048576 > /dev/null
ktrace lkst start
ktrace read $L /tmp/mvk > /tmp/mvk.out 2>&1 &
reader=$!
memphases $MV > /tmp/mvk.prog
ok $? "memphases $MV ran"
mpid=$(kv /tmp/mvk.prog pid)
ktrace lkst stop
wait $reader
sed 's/^/#   /' /tmp/mvk.out
ktrace memview -n 0 /tmp/mvk > /tmp/mvk.txt 2> /tmp/mvk.err
ok $? "ktrace memview on the module's trace"
sed -n 1,6p /tmp/mvk.txt | sed 's/^/#   /'
set -- $(awk -v p="$mpid" '$1 == p && NF == 9 { print $3, $4, $8; exit }' /tmp/mvk.txt)
mhi=$((ME + ME / 10 + 1024))
[ "${1:-0}" -ge "$ME" ] && [ "$1" -le "$mhi" ]
ok $? "memphases (pid $mpid) allocated ${1:-?} pages: E = $ME .. $mhi"
[ "${3:-0}" -ge "$ME" ] && [ "$3" -le "$mhi" ]
ok $? "its peak: ${3:-?} pages, E .. $mhi"
[ "${2:-0}" -ge "$ME" ]
ok $? "it freed ${2:-?} >= E pages"
ktrace memview -p "$mpid" --svg /tmp/mvk.svg /tmp/mvk 2> /dev/null &&
	grep -q "<polyline class=\"proc\" data-pid=\"$mpid\"" /tmp/mvk.svg
ok $? "memview --svg draws its polyline"
ktrace lkst set -m RDEFAULT
rmmod_retry ktrace
ok $? "rmmod ktrace (exceptions)"

# ------------------------------------------------------------------
# The tracefs backend (kclient/exc_tracefs.c, no module): EXCEPTION_ENTRY
# from kprobe events on the trap handlers (do_error_trap: vector 0 here;
# int3 only where do_int3_user or do_trap is probe-able, the metadata
# says), vector 14 beside the page fault tracepoints.  Expected for
# excprog's pid (`excprog XN ud`: also XN ud2): XN vector-0 and XN
# vector-6 entries with the ip inside main (nm -S of
# excprog, /excprog.nm, made by run-vm.sh), vector 3 XN or 0 as covered,
# vector 14 as many as the page fault events, no other; no kprobe event
# of ktrace's pid left after SIGINT; one left by SIGKILL is removed by
# the next recording.
# ------------------------------------------------------------------
TK=/sys/kernel/tracing
set -- $(awk '$4 == "main" { print $1, $2 }' /excprog.nm)
mlo=$((0x$1))
mhi=$((0x$1 + 0x$2))
ktrace record -q --kernel=EXCEPTION_ENTRY,EXCEPTION_EXIT,EXCEPTION_PAGEFAULT_USER,EXCEPTION_PAGEFAULT_KERNEL \
	-o /tmp/xt > /dev/null 2> /tmp/xt.err &
rec=$!
i=0
while [ ! -s /tmp/xt/kernel/metadata ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
diag "kprobe events while recording: $(grep ktrace_exc $TK/kprobe_events | tr '\n' '|')"
excprog $XN ud > /tmp/xt.prog
ok $? "tracefs: excprog $XN ud ran while ktrace record --kernel=EXCEPTION_ENTRY,... records"
kill -INT $rec
wait $rec
ok $? "tracefs: the recording ended at SIGINT"
sed 's/^/#   /' /tmp/xt.err
xpid=$(kv /tmp/xt.prog pid)
grep '^# EXCEPTION_ENTRY\|^unavailable 3[23]' /tmp/xt/kernel/metadata | sed 's/^/#   /'
cov=" $(sed -n 's/^# EXCEPTION_ENTRY vectors \([0-9 ]*\).*/\1/p' /tmp/xt/kernel/metadata) "
case "$cov" in *" 0 "*) c0=0 ;; *) c0=1 ;; esac
ok $c0 "tracefs: vector 0 covered (a kprobe event on do_error_trap)"
ktrace print -C /tmp/xt > /tmp/xt.csv 2> /dev/null
ok $? "tracefs: ktrace print -C"
inmain() { awk -F, -v p="$xpid" -v v="$1" -v lo="$mlo" -v hi="$mhi" '$6 == p && $9 == "EXCEPTION_ENTRY" {
	split($10, a, ";"); ip = substr(a[3], 4) + 0; if (a[1] == "vector=" v && ip >= lo && ip < hi) n++ } END { print n + 0 }' /tmp/xt.csv; }
is "$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_ENTRY 'vector=0;')" "$XN" "tracefs: $XN EXCEPTION_ENTRY with vector 0 in excprog's pid"
is "$(inmain 0)" "$XN" "tracefs: ... with their ip in main"
is "$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_ENTRY 'vector=6;') $(inmain 6)" "$XN $XN" \
	"tracefs: ud2: $XN EXCEPTION_ENTRY with vector 6 (invalid opcode), ip in main"
case "$cov" in *" 3 "*) w3=$XN ;; *) w3=0 ;; esac
is "$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_ENTRY 'vector=3;') $(inmain 3)" "$w3 $w3" \
	"tracefs: vector 3: $w3 entries in main (covered: $cov)"
if [ "$w3" = 0 ]; then
	grep -q '^# EXCEPTION_ENTRY vectors .*; not: .*do_int3_user.*do_trap' /tmp/xt/kernel/metadata
	ok $? "tracefs: int3 not covered: the metadata names do_int3_user and do_trap and why"
fi
pfu=$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_PAGEFAULT_USER '')
pfk=$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_PAGEFAULT_KERNEL '')
is "$(ex_count /tmp/xt.csv "$xpid" EXCEPTION_ENTRY 'vector=14;')" "$((pfu + pfk))" \
	"tracefs: vector 14 = the page fault events ($pfu user + $pfk kernel)"
is "$(inmain 14)" "$XN" "tracefs: $XN of them in main (the unmapped reads)"
other=$(awk -F, -v t="$xpid" '$6 == t && $9 == "EXCEPTION_ENTRY" && $10 !~ /^vector=(0|3|6|14);/' /tmp/xt.csv | wc -l)
is "$other" "0" "tracefs: no other vector"
is "$(ex_kaddr /tmp/xt.csv)" 0 "tracefs: no EXCEPTION_ENTRY field ($(grep -c ',EXCEPTION_ENTRY,' /tmp/xt.csv) records) is a kernel address"
grep -q '^unavailable 33 EXCEPTION_EXIT module only' /tmp/xt/kernel/metadata
ok $? "tracefs: EXCEPTION_EXIT unavailable (module only), saying why"
is "$(grep -c "ktrace_exc/[a-z0-9]*_$rec " $TK/kprobe_events)" "0" "tracefs: no kprobe event of ktrace (pid $rec) left"
ktrace record -q --kernel=EXCEPTION_ENTRY -o /tmp/xk > /dev/null 2>&1 &
rec=$!
i=0
while [ ! -s /tmp/xk/kernel/metadata ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL $rec
wait $rec 2> /dev/null
cmp_ok "$(grep -c "ktrace_exc/[a-z0-9]*_$rec " $TK/kprobe_events)" -ge 1 "tracefs: SIGKILL leaves its kprobe events"
ktrace record -q --kernel=RNOTHING -o /tmp/xn > /dev/null 2>&1 &
rec2=$!
i=0
while [ ! -s /tmp/xn/kernel/metadata ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT $rec2
wait $rec2
is "$(grep -c "ktrace_exc/[a-z0-9]*_$rec " $TK/kprobe_events)" "0" "tracefs: the next recording removes them"
