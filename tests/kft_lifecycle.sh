#!/bin/sh
# tests/kft_lifecycle.sh - a process's life cycle under `ktrace record`
# (issue 25, items 1-3): children that outlive their parent, daemons,
# double forks, the depth and the inherited returns of a forked child,
# vfork + exec; and record's bounded wait for processes left running.
#
# tests/kft/lifecycle.c, built five ways (-finstrument-functions and -pg
# at -O0 and -O2, -pg -mfentry at -O2), runs each mode under ktrace and
# under uftrace (`uftrace record` with its library calls, `uftrace
# replay`).  The call trees, thread by thread (depth and function in entry
# order; tests/helpers/calltree.py turns `ktrace kd -c` and `uftrace
# replay` into the same text, independently of ktrace's code), must be
# equal (at the depths ktrace records, `kd -c --format=csv`; and as
# `kd -c` draws them, but for forkexec, where kd -c draws the child's calls
# at level 0: it never returns from the main() it inherited):
#   fork    the child returns from the fork() and main() it inherited
#           (uftrace shows `} /* fork */`, `} /* main */`): ktrace records
#           them in the child's thread at depth 1 and 0, and the child's
#           own calls at uftrace's depth (before: one level deeper, from
#           a racy copy of the parent's shadow stack; the returns were not
#           recorded);
#   orphan, daemon, double
#           the processes that outlive the program are traced to their end
#           (before: `record` stopped at the program's exit and the run
#           stopped with it: their trace was lost, "entries lost: 0");
#   forkexec  the child's fork() and execl() at depth 1, its exec'd image
#           traced beside (DIR.exec-PID-1);
#   vfork   vfork() in the parent, the child's return from it and its
#           execl() (unfinished) in the child's own thread, the exec'd
#           image beside (DIR.exec-PID-1); the parent's waitpid() at its
#           own depth (before: the child's execl() was on the parent's
#           stack and the parent's waitpid() nested under it; later the
#           child's calls were not recorded at all);
#   threadexec  a thread calls child_work() and execl()s while main
#           waits in pthread_join(): both threads' calls and the exec'd
#           image's (checked against the program's code, below: uftrace
#           is wrong there).
# exit, _exit and _Exit are left out everywhere: ktrace does not hook them
# on purpose (kft/libcall.h), uftrace does.  The program's output and
# exit status must be those of a run without tracing, record's stderr
# (-q) empty.  Then record's wait for a daemon that does not exit:
# --wait 300ms ends it, and so does SIGINT, each saying how many
# processes still run; the program's exit status is kept.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

SRC="$KTRACE_SRC/tests/kft/lifecycle.c"
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
BUILDS=$KFT_BUILDS
for b in $BUILDS; do
	# shellcheck disable=SC2046
	cc -g $(hook_flags "$b") -pthread -o "lc-$b" "$SRC" || exit 1
done

# ktrace's tree of trace directory $1 and of the images exec()ed beside it:
# as kd -c draws it ($3 = ktrace) or at the recorded depths ($3 = ktrace-csv)
ktree() {
	for d in "$1" "$1".exec-*; do
		if [ -d "$d" ]; then
			if [ "$3" = ktrace ]; then
				"$KTRACE" kd -c "$d"
			else
				"$KTRACE" kd -c --format=csv "$d"
			fi
		fi
	done | python3 "$TREE" "$3" --drop "$2"
}

# wait (a 60 s hang guard) for processes of this test directory's programs to end
# (pgrep without the sanitizer runtimes san_preload exports: it hangs with them)
settle() {
	i=0
	while env -u LD_PRELOAD pgrep -f "$T/lc-" >/dev/null 2>&1 && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

for mode in fork forkexec orphan daemon double vfork; do
	drop=exit,_exit,_Exit
	udrop=$drop
	for b in $BUILDS; do
		"$T/lc-$b" $mode >plain.out 2>&1
		echo "exit $?" >>plain.out
		settle
		rm -rf k k.exec-* u
		"$KTRACE" record -q -o k "$T/lc-$b" $mode >k.out 2>k.err
		echo "exit $?" >>k.out
		is "$(cat k.out)" "$(cat plain.out)" "$mode $b: output and exit status unchanged"
		is "$(cat k.err)" "" "$mode $b: nothing on stderr"
		env -u LD_PRELOAD uftrace record -d u "$T/lc-$b" $mode >/dev/null 2>&1
		settle
		uftrace replay -d u --no-pager 2>/dev/null | python3 "$TREE" uftrace --drop "$udrop" >u.tree
		ktree k "$drop" ktrace-csv >k.tree
		is "$(cat k.tree)" "$(cat u.tree)" "$mode $b: call tree (thread, recorded depth, function) as uftrace's"
		# kd -c draws levels from the calls present: a child that never
		# returns from the main() it inherited (it exec()s) is drawn a level
		# higher than uftrace shows it (forkexec, vfork)
		if [ "$mode" != forkexec ] && [ "$mode" != vfork ]; then
			ktree k "$drop" ktrace >kd.tree
			is "$(cat kd.tree)" "$(cat u.tree)" "$mode $b: kd -c's tree as uftrace's"
		fi
		[ -s u.tree ] || ok 1 "$mode $b: uftrace recorded something"
	done
done

# threadexec: uftrace 0.13 is no reference here: it loses the main
# thread's last records at the exec (pthread_join(), entered and ended by
# the exec; under load pthread_create() too) and nests the exec'd image
# under the old main() (the exec'ing thread takes the leader's tid, whose
# old stack uftrace goes on from).  The expected tree of the program's own
# functions, from its code: the thread exec_thread > child_work > leaf x2;
# the leader main > leaf, then the new image's main > leaf (at depth 0:
# a new program), in its block (same tid).
printf 'thread\n0 exec_thread\n1 child_work\n2 leaf\n2 leaf\nthread\n0 main\n1 leaf\n0 main\n1 leaf\n' >te.want
for b in $BUILDS; do
	"$T/lc-$b" threadexec >plain.out 2>&1
	echo "exit $?" >>plain.out
	rm -rf k k.exec-*
	KTRACE_LIBCALL=0 "$KTRACE" record -q -o k "$T/lc-$b" threadexec >k.out 2>k.err
	echo "exit $?" >>k.out
	is "$(cat k.out)" "$(cat plain.out)" "threadexec $b: output and exit status unchanged"
	is "$(cat k.err)" "" "threadexec $b: nothing on stderr"
	ktree k "exit,_exit,_Exit" ktrace-csv >k.tree
	is "$(cat k.tree)" "$(cat te.want)" "threadexec $b: both threads' calls and the exec'd image's, at their depths"
	ktree k "exit,_exit,_Exit" ktrace >kd.tree
	is "$(cat kd.tree)" "$(cat te.want)" "threadexec $b: kd -c's tree the same"
done

# orphan, without -q: nothing is lost, the child's calls are in (that record
# says it waits is checked with linger below: here the child may be gone by
# the time record sees its parent's exit, on a loaded machine)
rm -rf k
"$KTRACE" record -o k "$T/lc-inst-O0" orphan >/dev/null 2>k.err
is "$?" 0 "orphan: exit 0"
like k.err "entries lost: 0" "orphan: nothing lost"
unlike k.err "still run" "orphan: waited to the end"
is "$("$KTRACE" kd --format=csv k | awk -F, '$1 == "child_work" { print $2 }')" 1 \
	"orphan: the child's call made 200 ms after the parent's exit is in the trace"

# a daemon that stays: --wait bounds the waiting
rm -rf k linger.pid
s=$(date +%s)
"$KTRACE" record --wait 300ms -o k "$T/lc-inst-O0" linger >/dev/null 2>k.err
rc=$?
e=$(date +%s)
is "$rc" 0 "linger --wait 300ms: the program's exit status"
# an ordering, not a time: record returned while the daemon (30 s of sleep) still ran
ok "$([ -s linger.pid ] && kill -0 "$(cat linger.pid)" 2>/dev/null && echo 0 || echo 1)" \
	"linger --wait 300ms: record ends without the daemon, which still runs ($((e - s)) s)"
like k.err "stopped waiting for the processes .* left running: 1 still run" \
	"linger --wait 300ms: the daemon still running is counted"
[ -s linger.pid ] && kill "$(cat linger.pid)" 2>/dev/null

# ... and so does Ctrl-C (SIGINT to record)
rm -rf k linger.pid
"$KTRACE" record -o k "$T/lc-inst-O0" linger >/dev/null 2>k.err &
rp=$!
i=0
while [ ! -s linger.pid ] && [ $i -lt 600 ]; do # 60 s: a hang guard
	sleep 0.1
	i=$((i + 1))
done
sleep 0.3
kill -INT $rp
i=0
while kill -0 $rp 2>/dev/null && [ $i -lt 600 ]; do # 60 s: a hang guard
	sleep 0.1
	i=$((i + 1))
done
if kill -0 $rp 2>/dev/null; then
	ok 1 "linger, SIGINT: record ended"
	kill $rp
else
	ok 0 "linger, SIGINT: record ended"
fi
wait $rp
is "$?" 0 "linger, SIGINT: the program's exit status"
like k.err "waiting for the 1 process it left running \\(Ctrl-C stops waiting\\)" "linger: record says it waits"
like k.err "1 still run" "linger, SIGINT: the daemon still running is counted"
is "$("$KTRACE" kd --format=csv k | awk -F, '$1 == "leaf" { print $2 }')" 1 "linger, SIGINT: the trace is readable"
[ -s linger.pid ] && kill "$(cat linger.pid)" 2>/dev/null

done_testing
