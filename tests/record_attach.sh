#!/bin/sh
# tests/record_attach.sh - `ktrace record -p PID`: attach to a running
# process built without hooks, record, detach, and attach again
# (cli/record_attach.c, lib/kft_attach.c).
#
# tests/kft/attach.c runs worker threads that do work on command and
# count their own calls: the trace of a window in which it did `run N`
# must hold exactly the calls the program counted (its results unchanged),
# and the calls open at the attach (main, the workers' loops) once each,
# flagged unfinished;
# after the detach its code is byte for byte what it was (the program
# prints its functions' first bytes), it goes on computing the same
# answers, and it can be attached to again, also while its threads are
# inside the patched functions (`spin`), ATTACHES times in a row.  Built
# with -finstrument-functions or -pg -mfentry, its hooks are bound to
# libktrace's while attached, with the same exact counts.  A record
# killed with SIGKILL while attached: the next one undoes its attach.
# With --flight, `ktrace ctl DIR dump` and SIGUSR2 write what the rings
# hold (exact counts while idle; dumps during work read back cleanly).
# Refusals: no such process, a static program, another user's process,
# a process already traced, -p with a program,
# --duration without -p.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
trap '' PIPE # a program that died: writes to its FIFO fail, the test goes on and says so
san_preload
# (2 in the sanitizer builds, where each takes 4x as long; `make test-stress` can set more)
ATTACHES=${KTRACE_TEST_ATTACHES:-$([ -n "${KTRACE_SAN:-}" ] && echo 2 || echo 5)}

cc -O2 -g -o attach "$KTRACE_SRC/tests/kft/attach.c" -lpthread || exit 1

# wait until FILE has at least N lines (10 s at most)
lines() {
	i=0
	while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# wait until FILE has a line matching RE (20 s at most)
has() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ $i -lt 400 ] || echo "# no '$2' in $1 after 20 s" >&2
}
say() { # send a command, wait for its answer lines
	n=$(wc -l <out)
	echo "$1" >&3
	lines out $((n + $2))
}

mkfifo in || exit 1
./attach 3 <in >out 2>prog.err &
pid=$!
exec 3>in
lines out 1
is "$(head -1 out)" "ready" "the program runs"
say entry 3
before=$(tail -3 out)
say "run 20" 1
want=$(tail -1 out)
is "$want" "done rounds=60 step=600 leaf=1200 sum=$(echo "$want" | sed 's/.*sum=//')" \
	"untraced: 3 threads x 20 rounds counted by the program"

# ---- attach, a window of work, detach ----
"$KTRACE" record -p "$pid" -o tr 2>rec.err &
rec=$!
has rec.err "attached to process"
like rec.err "^ktrace record: attached to process $pid \\(4 threads\\): [0-9]+ functions patched, 4 calls open in them followed from now \\(shown unfinished\\); Ctrl-C ends the recording$" \
	"record -p: attached, every thread stopped and resumed, its functions patched"
is "$(wc -l <rec.err)" 1 "record -p: that line alone before the end"
say "run 20" 1
is "$(tail -1 out)" "$want" "attached: the program's counts and results unchanged"
kill -INT "$rec"
wait "$rec"
is "$?" 0 "record -p: Ctrl-C detaches, exit 0"
like rec.err "^ktrace record: detached from process $pid; trace in " "record -p: says it detached"
is "$(kd_counts tr 'round_ step leaf')" "$(printf 'leaf 1200\nround_ 60\nstep 600')" \
	"the trace holds exactly the calls the program counted in the window"
is "$(kd_counts tr 'main worker')" "$(printf 'main 1\nworker 3')" \
	"main and the 3 workers' loops, open since before the attach, are in the trace once each"
"$KTRACE" info tr >info.out 2>&1
like info.out "^# calls .*\\(4 unfinished\\)$" "... shown unfinished (their entries were not seen, nor their exits)"
say entry 3
is "$(tail -3 out)" "$before" "after the detach the functions' first bytes are as before"
say "run 20" 1
is "$(tail -1 out)" "$want" "after the detach: the same counts and results"

# ---- attach again, while the threads are inside the patched functions ----
k=0
spun=0
unf=0
while [ $k -lt "$ATTACHES" ]; do
	k=$((k + 1))
	n=$(wc -l <out)
	echo "spin 1200" >&3
	sleep 0.2
	rm -rf "tr$k"
	"$KTRACE" record -q -p "$pid" --duration 400ms -o "tr$k" 2>"rec$k.err"
	rc=$?
	lines out $((n + 1))
	r=$(kd_counts "tr$k" round_ | awk '{ print $2 }')
	s=$(kd_counts "tr$k" step | awk '{ print $2 }')
	u=$("$KTRACE" info "tr$k" | sed -n 's/^# calls .*(\([0-9]*\) unfinished)$/\1/p')
	[ "${u:-0}" -gt 0 ] && unf=$((unf + 1))
	# a round has 10 steps; rounds open at either end hold fewer (3 threads)
	if [ "$rc" = 0 ] && [ ! -s "rec$k.err" ] && [ "$(tail -1 out | cut -d' ' -f2)" = "ok=1" ] &&
		[ "${r:-0}" -gt 0 ] && [ "${s:-0}" -ge $(((r - 3) * 10)) ] && [ "${s:-0}" -le $(((r + 3) * 10)) ]; then
		spun=$((spun + 1))
	else
		echo "# attach $k: exit $rc, round_ ${r:-none} step ${s:-none}, program: $(tail -1 out)" >&2
		sed 's/^/#   /' "rec$k.err" >&2
		"$KTRACE" info "tr$k" 2>&1 | grep -E 'lost|records|dropped' | sed 's/^/#   /' >&2
	fi
done
is "$spun" "$ATTACHES" "$ATTACHES attaches during work: each exit 0, silent, steps = 10 x rounds, the program's results right"
ok $([ "$unf" -ge 1 ] && echo 0 || echo 1) \
	"... the calls open at the detach are shown as unfinished ($unf of $ATTACHES traces have some)"
say entry 3
is "$(tail -3 out)" "$before" "after $ATTACHES attaches: the code is as it was"
say "run 20" 1
is "$(tail -1 out)" "$want" "after $ATTACHES attaches: the same counts and results"

# ---- detach while threads wait for a slow consumer (their ring full): libktrace
# sleeps in libc then, and the run is retired only once no stack holds a frame
# of libktrace (before, the process crashed on the first of these) ----
k=0
slow=0
while [ $k -lt 3 ]; do
	k=$((k + 1))
	n=$(wc -l <out)
	echo "spin 1200" >&3
	sleep 0.2
	KTRACE_TEST_CONSUMER_DELAY_US=3000 "$KTRACE" record -q -b 16K -p "$pid" --duration 400ms \
		-o "trw$k" 2>"recw$k.err"
	rc=$?
	lines out $((n + 1))
	if [ "$rc" = 0 ] && [ ! -s "recw$k.err" ] && [ "$(tail -1 out | cut -d' ' -f2)" = "ok=1" ]; then
		slow=$((slow + 1))
	else
		echo "# slow consumer $k: exit $rc, program: $(tail -1 out)" >&2
		sed 's/^/#   /' "recw$k.err" >&2
	fi
done
is "$slow" 3 "3 detaches while threads wait for a slow consumer: each exit 0, the program's results right"

# ---- --flight: the rings alone, the newest calls kept, written at the detach ----
n=$(wc -l <out)
echo "spin 1500" >&3
sleep 0.2
"$KTRACE" record -q -p "$pid" --flight -b 64K --duration 600ms -o trf 2>f.err
is "$? $(cat f.err)" "0 " "--flight: exit 0, nothing said"
lines out $((n + 1))
is "$(tail -1 out | cut -d' ' -f2)" "ok=1" "--flight: the program's results right"
"$KTRACE" info trf >info.out 2>&1
like info.out "flight recorder" "--flight: the trace is a flight recording"
like info.out "[1-9][0-9]* sub-buffers overwritten" "--flight: the older sub-buffers were overwritten, and counted"
r=$(kd_counts trf round_ | awk '{ print $2 }')
ok $([ "${r:-0}" -gt 0 ] && echo 0 || echo 1) "--flight: the newest calls are there ($r round_)"

# ---- --flight dumps while attached: `ktrace ctl DIR dump` and SIGUSR2, the program not stopped ----
"$KTRACE" record -p "$pid" --flight -b 64K -o trd 2>d.err &
rec=$!
has d.err "attached to process"
say "run 10" 1
is "$(tail -1 out | cut -d' ' -f2-4)" "rounds=30 step=300 leaf=600" "--flight attached: the program's counts"
"$KTRACE" ctl trd dump >dump.out 2>dump.err
is "$? $(cat dump.err)" "0 " "ctl DIR dump: exit 0, nothing on stderr"
like dump.out "^$T/trd.dump-1: [0-9]+ records in [0-9]+ sub-buffers" "ctl DIR dump: says where the dump went"
is "$(kd_counts trd.dump-1 'round_ step leaf')" "$(printf 'leaf 600\nround_ 30\nstep 300')" \
	"the dump holds exactly the calls the program counted so far"
say "run 5" 1
kill -USR2 "$rec"
has d.err "dump: "
like d.err "^ktrace record: dump: $T/trd.dump-2: [0-9]+ records" "SIGUSR2 to record: a second dump, said on stderr"
is "$(kd_counts trd.dump-2 'round_ step leaf')" "$(printf 'leaf 900\nround_ 45\nstep 450')" \
	"... with the calls since attached (30 + 15 rounds)"
n=$(wc -l <out)
echo "spin 1000" >&3
sleep 0.3
d=0
for k in 1 2 3 4 5; do # dumps while every thread writes
	"$KTRACE" ctl trd dump >>dump.out 2>>dump.err && "$KTRACE" kd trd.dump-$((k + 2)) >/dev/null 2>>dump.err &&
		"$KTRACE" info trd.dump-$((k + 2)) | grep -q ' 0 corrupt areas' && d=$((d + 1))
done
lines out $((n + 1))
is "$d $(grep -v "lower bounds\\|overwritten in stream\\|stretches in all" dump.err)" "5 " \
	"5 dumps while the threads call the traced functions: each written and read back without error"
is "$(tail -1 out | cut -d' ' -f2)" "ok=1" "... the program's results right"
kill -INT "$rec"
wait "$rec"
is "$?" 0 "record -p --flight: Ctrl-C detaches after the dumps, exit 0"
r=$(kd_counts trd round_ | awk '{ print $2 }')
ok $([ "${r:-0}" -ge 45 ] && echo 0 || echo 1) "... and writes its own trace at the end ($r round_)"
"$KTRACE" ctl trd dump >/dev/null 2>dump.err
is "$?" 1 "ctl DIR dump after the end: exit 1"
like dump.err "no recording in progress" "... says why"
"$KTRACE" record -p "$pid" -o trs 2>s.err &
rec=$!
has s.err "attached to process"
"$KTRACE" ctl trs dump >/dev/null 2>dump.err
is "$?" 1 "ctl DIR dump of a recording without --flight: exit 1"
like dump.err "not a flight recording" "... says why"
kill -INT "$rec"
wait "$rec"

# ---- a record killed (SIGKILL) while attached: the next attach undoes its attach first ----
"$KTRACE" record -p "$pid" -o trk 2>k.err &
rec=$!
has k.err "attached to process"
kill -KILL "$rec"
wait "$rec" 2>/dev/null
say "run 20" 1
is "$(tail -1 out)" "$want" "record killed while attached: the program's counts and results unchanged"
"$KTRACE" record -p "$pid" -o trk2 2>k2.err &
rec=$!
has k2.err "attached to process"
like k2.err "^ktrace record: process $pid: the attach of a ktrace record that died was undone first$" \
	"the next record -p undoes the dead one's attach and says so"
say "run 20" 1
kill -INT "$rec"
wait "$rec"
is "$?" 0 "... records and detaches, exit 0"
is "$(kd_counts trk2 'round_ step leaf')" "$(printf 'leaf 1200\nround_ 60\nstep 600')" \
	"... with exactly the calls of its window"
say entry 3
is "$(tail -3 out)" "$before" "... and the code is as it was afterwards"

# ---- refusals ----
"$KTRACE" record -p "$pid" -- ./attach >o 2>e
is "$?" 2 "-p with a program: usage error"
"$KTRACE" record --duration 1s -- ./attach >o 2>e
is "$?" 2 "--duration without -p: usage error"
like e "needs -p PID" "... says so"
"$KTRACE" record -p 99999999 -o trx >o 2>e
is "$?" 2 "-p: an impossible process id is a usage error"
sleep 60 &
gone=$!
kill "$gone"
wait "$gone" 2>/dev/null
"$KTRACE" record -p "$gone" -o trx >o 2>e
is "$?" 1 "-p: a process that is gone: exit 1"
like e "^ktrace record: process $gone: no such process$" "... no such process"

if cc -O1 -static -o static "$KTRACE_SRC/tests/kft/attach.c" -lpthread 2>/dev/null; then
	mkfifo in2
	./static 1 <in2 >out2 &
	spid=$!
	exec 4>in2
	lines out2 1
	"$KTRACE" record -p "$spid" -o trs >o 2>e
	is "$?" 1 "a static program: exit 1"
	like e "^ktrace record: process $spid has no dlopen\\(\\) in a libc.so.6 \\(a static program" \
		"... says why"
	echo "run 5" >&4
	lines out2 2
	like out2 "^done rounds=5 step=50 leaf=100 " "... and the program runs on untouched"
	echo quit >&4
	exec 4>&-
	wait "$spid"
else
	ok 1 "cc -static (libc6-dev's libc.a) builds a static program"
fi

if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	# root attaches to a process of user 65534: record becomes that user
	# (keeping CAP_SYS_PTRACE), so the trace is that user's; the program
	# and libktrace are copied where that user can read them
	od=$(mktemp -d /tmp/ktrace-attach-other.XXXXXX) || exit 1
	chmod 755 "$od"
	cp attach "$KTRACE_BUILD/libktrace.so.0" "$KTRACE_BUILD/libktrace-record.so.0" "$od/" || exit 1
	mkdir "$od/out" && chown 65534:65534 "$od/out"
	rm -f in5 out5
	mkfifo in5
	setpriv --reuid=65534 --regid=65534 --clear-groups "$od/attach" 2 <in5 >out5 2>&1 &
	other=$!
	exec 5>in5
	lines out5 1
	KTRACE_LIB="$od/libktrace.so.0" "$KTRACE" record -p "$other" -o "$od/out/tr" 2>o.err &
	rec=$!
	has o.err "attached to process"
	like o.err "^ktrace record: process $other runs as user 65534: recording as that user" \
		"root, another user's process: record says it records as that user"
	echo "run 5" >&5
	lines out5 2
	kill -INT "$rec"
	wait "$rec"
	is "$?" 0 "... attached, recorded and detached: exit 0"
	is "$(kd_counts "$od/out/tr" 'round_ step leaf')" "$(printf 'leaf 200\nround_ 10\nstep 100')" \
		"... the trace holds the calls the program counted (2 threads x 5 rounds)"
	is "$(stat -c %u "$od/out/tr" "$od/out/tr/trace1" "$od/out/tr/metadata" 2>&1 | sort -u)" 65534 \
		"... and it belongs to the process's owner"
	is "$(sed -n 2p out5 | cut -d' ' -f2-4)" "rounds=10 step=100 leaf=200" "... the program's counts"
	# an unprivileged user cannot attach to another user's process
	setpriv --reuid=65534 --regid=65534 --clear-groups "$KTRACE" record -p "$pid" -o "$od/out/tr2" \
		>o 2>e
	is "$?" 1 "a user attaching to another user's process: exit 1"
	like e "^ktrace record: process $pid runs as user 0: attaching to another user's process needs root" \
		"... says what it takes"
	echo quit >&5
	exec 5>&-
	wait "$other"
	is "$?" 0 "... the other user's program exits 0"
	rm -rf "$od"
fi

# built with hooks: -finstrument-functions and -pg -mfentry bind their
# hooks to libktrace's while attached; patchable entries (and -mnop-mcount)
# get calls written into their NOPs, as at a started program's start
for b in "inst -finstrument-functions" "fentry -pg -mfentry" "patchable -fpatchable-function-entry=5" \
	"nopmcount -pg -mfentry -mnop-mcount -mrecord-mcount -fno-pie -no-pie"; do
	set -- $b
	name=$1
	shift
	case $name in
	inst | fentry) how="its compiled hooks bound to libktrace's \\([0-9]+ GOT slots\\)" what="hooks bound" ;;
	*) how="[1-9][0-9]* functions patched, 3 calls open in them followed from now \\(shown unfinished\\)" what="entry NOPs patched" ;;
	esac
	cc -O1 "$@" -o "$name" "$KTRACE_SRC/tests/kft/attach.c" -lpthread || exit 1
	rm -f in4 out4
	mkfifo in4
	./"$name" 2 <in4 >out4 &
	ipid=$!
	exec 6>in4
	lines out4 1
	# the last round's e is gone first: `2>e &` truncates it only once the
	# background shell runs, and `has` must not find the old round's line
	# (seen in CI under load: e empty when checked)
	rm -f e
	"$KTRACE" record -p "$ipid" -o "tr-$name" 2>e &
	rec=$!
	has e "attached to process"
	like e "attached to process $ipid \\(3 threads\\): $how;" "$name: attached, $what"
	head -1 e >e1
	like e1 "^ktrace record: attached to process $ipid " "$name: its first line is the attach (no line about a start)"
	echo "run 10" >&6
	lines out4 2
	kill -INT "$rec"
	wait "$rec"
	is "$?" 0 "$name: detached, exit 0"
	is "$(kd_counts "tr-$name" 'round_ step leaf')" "$(printf 'leaf 400\nround_ 20\nstep 200')" \
		"$name: the window's calls, as the program counted them (2 threads x 10 rounds)"
	echo "run 10" >&6
	lines out4 3
	is "$(sed -n 3p out4 | cut -d' ' -f2-4)" "rounds=20 step=200 leaf=400" "$name: after the detach, the same counts"
	echo quit >&6
	exec 6>&-
	wait "$ipid"
	is "$?" 0 "$name: exits 0"
done

# a process started by `ktrace record` is traced already
mkfifo in3
"$KTRACE" record -q -o trr ./attach 1 <in3 >out3 2>/dev/null &
rpid=$!
exec 5>in3
lines out3 1
# its child (no pgrep: procps under the sanitizer's LD_PRELOAD can hang)
child=""
for st in /proc/[0-9]*/stat; do
	read -r p _ _ pp _ <"$st" 2>/dev/null && [ "$pp" = "$rpid" ] && child=$p
done
"$KTRACE" record -p "$child" -o trx2 >o 2>e
is "$?" 1 "a process already traced: exit 1"
like e "^ktrace record: process $child: the process is already traced" "... says so"
echo "run 20" >&5
echo quit >&5
exec 5>&-
wait "$rpid"
is "$?" 0 "... and its own recording goes on to the end"
is "$(kd_counts trr 'round_ step leaf')" "$(printf 'leaf 400\nround_ 20\nstep 200')" "... with every call"
is "$(kd_counts trr 'round_ step leaf' | awk '{ print $1, $2 * 3 }')" "$(kd_counts tr 'round_ step leaf')" \
	"record -p's window (3 threads x run 20) has the counts of record from the start (1 thread x run 20) x 3"

say quit 0
exec 3>&-
wait "$pid"
is "$?" 0 "the program attached to $((ATTACHES + 1)) times exits 0"
done_testing
