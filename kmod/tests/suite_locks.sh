#!/bin/sh
# kmod/tests/suite_locks.sh - `ktrace locks` on the module's LKST lock
# contention events (LOCK_CONTENTION_BEGIN/END, kmod/lkst_events.c): the
# test module's mutex, contended by two kthreads per CPU (`contend N` of
# ktrace_lkst_test.ko), shows as a kernel mutex in the wait table, every
# contention paired; lock_addr is an opaque id (SipHash of the address),
# never a kernel address.  Sourced by suite.sh (its helpers ok/is/cmp_ok/
# diag/rd/kv/w, rmmod_retry and $D $M); starts and ends with ktrace.ko
# unloaded.  `run-vm.sh locks` runs it alone.

L=$D/ktrace/lkst
LT=$D/ktrace_lkst_test/ctl
insmod $M/ktrace.ko
ok $? "insmod ktrace.ko (locks)"
grep -q '^ktrace_lkst_test ' /proc/modules || insmod $M/ktrace_lkst_test.ko
printf 'LOCK_CONTENTION_BEGIN DEFAULT\nLOCK_CONTENTION_END DEFAULT\n' | ktrace lkst write -m 6 -n locks
ktrace lkst set -m locks
ok $? "ktrace lkst set -m locks (the two contention events)"
ktrace lkst start
ktrace read $L /tmp/lk > /tmp/lk.out 2>&1 &
reader=$!
is "$(kthelper write $LT "contend 200")" "ok" "ktrace_lkst_test contended its mutex"
sleep 0.3
ktrace lkst stop
wait $reader
ok $? "ktrace read of the contention trace"
ktrace locks --top 0 /tmp/lk > /tmp/lk.locks 2> /tmp/lk.err
is "$?" "0" "ktrace locks: no misuse in kernel contention (exit 0)"
sed 's/^/#   /' /tmp/lk.locks /tmp/lk.err | head -n 12
ktrace print -x /tmp/lk > /tmp/lk.print 2> /dev/null
nb=$(grep -c 'LOCK_CONTENTION_BEGIN' /tmp/lk.print)
ne=$(grep -c 'LOCK_CONTENTION_END' /tmp/lk.print)
cmp_ok "$nb" -gt 0 "contention_begin events recorded ($nb)"
sum=$(awk '$1 == "-" && $2 == "-" && / kernel / { n += $7 } END { print n + 0 }' /tmp/lk.locks)
is "$sum" "$ne" "the wait table counts every contention_end ($ne)"
# (PREEMPT_RT: a mutex is an rt_mutex, contention_begin's flag LCB_F_RT)
grep -qE '^- +- +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9]+  kernel (rt-)?mutex #[0-9a-f]{16} ' /tmp/lk.locks
ok $? "the test module's mutex is a kernel mutex (rt-mutex on PREEMPT_RT) in the table"
# the ids: 64-bit hashes, none 0, none in the kernel's address range (the
# chance that a hash of n locks starts with 17 one bits: n / 2^17)
ids=$(grep -o 'lock_addr=0x[0-9a-f]*' /tmp/lk.print | sort -u)
is "$(echo "$ids" | grep -c '=0x0$')" "0" "no lock id is 0"
is "$(echo "$ids" | grep -cE '=0xffff[89a-f][0-9a-f]{11}$')" "0" "no lock id looks like a kernel address"
ktrace lkst set -m RDEFAULT
rmmod_retry ktrace_lkst_test
rmmod_retry ktrace
ok $? "rmmod ktrace (locks)"
