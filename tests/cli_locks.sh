#!/bin/sh
# tests/cli_locks.sh - `ktrace record --locks` and `ktrace locks`: the
# planted misuse of tests/locks/misuse.c (one kind per mode) is reported
# exactly once, with call sites in the functions the program plants them
# in, each "NAME+0xOFF" checked against nm's symbol table (OFF inside NAME's
# size: OFF - 1, as sites are return addresses); the error-checking mutex's EDEADLK is a double acquire too; the
# clean thread pool (condvars, rwlock, spinlock, recursive mutex, trylocks)
# and the SQLite shell with sorter threads report nothing; exit statuses (3 misuse, 0 clean, 1 no lock events, 2
# usage); without --locks the shim is not preloaded and nothing is recorded.
# As root with tracefs, --kernel=lock: the kernel's contention events of
# tests/locks/mmap_contend.c (mmap_lock) in the wait table, their number
# the contention_end events trace-cmd reads from the raw copy, and no
# kernel address among the lock ids.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

san_preload
# third-party tools run without the sanitizer runtimes (ASan's interceptors
# find over-reads in mawk itself)
awk() { env -u LD_PRELOAD awk "$@"; }
trace_cmd() { env -u LD_PRELOAD trace-cmd "$@"; }
cd "$T" || exit 1
cc -O1 -g -pthread -o misuse "$KTRACE_SRC/tests/locks/misuse.c" || exit 1
nm -S --defined-only misuse >syms || exit 1

# check_sites FILE NAME... : the "at NAME+0xOFF" sites of FILE, in order,
# are these functions, and each offset lies inside the function (nm -S)
check_sites() {
	f=$1
	shift
	got=$(grep -o ' at [A-Za-z_][A-Za-z_0-9]*+0x[0-9a-f]*' "$f" | sed 's/^ at //')
	names=$(echo "$got" | sed 's/+0x.*//' | tr '\n' ' ' | sed 's/ $//')
	is "$names" "$*" "$(basename "$f"): the call sites are in $*"
	bad=0
	for s in $got; do
		n=${s%%+0x*}
		off=$((0x${s##*+0x}))
		size=$(awk -v n="$n" '$4 == n { print $2 }' syms)
		# a return address: the call ends at OFF, so OFF - 1 is inside
		if [ -z "$size" ] || [ "$off" -lt 1 ] || [ "$off" -gt $((0x$size)) ]; then
			bad=$((bad + 1))
			echo "# $s: not inside $n (nm size 0x$size)"
		fi
	done
	is "$bad" 0 "$(basename "$f"): every return address follows a call inside its function (nm -S)"
}

# findings FILE: the number of finding headers (misuse and notes)
findings() {
	grep -cE '^(lock-order inversion|lock-order cycle|unlock by non-holder|double acquire|held at thread exit|note:)' "$1"
}

for m in order cycle unlock double errchk exit clean; do
	run "$KTRACE" record -q --locks -o "d.$m" ./misuse "$m"
	is "$rc" 0 "$m: record --locks runs the uninstrumented program (exit 0)"
	run "$KTRACE" locks "d.$m"
	cp "$T/out" "locks.$m"
	cp "$T/err" "err.$m"
	if [ "$m" = clean ]; then
		is "$rc" 0 "$m: no misuse: exit 0"
	else
		is "$rc" 3 "$m: misuse found: exit 3"
	fi
	is "$(lines "err.$m")" 0 "$m: nothing on stderr (no reader diagnostics, no gaps)"
done

is "$(findings locks.order)" 1 "order: one finding"
like locks.order '^lock-order inversion \(potential deadlock\): lock_[ab] \(0x[0-9a-f]+\) and lock_[ab] ' \
	"order: an inversion of lock_a and lock_b, named from the symbol table"
# the first thread's acquisition, then what it held; the second's
check_sites locks.order take_ba take_ba take_ab take_ab
like locks.order '^  thread [0-9]+ \(misuse\) acquired lock_a .* at take_ba\+' "order: take_ba took lock_a while holding lock_b"
like locks.order '^    while holding lock_a .* acquired at take_ab\+' "order: take_ab held lock_a"
like locks.order '^1 misuse finding \(14 lock events\)$' "order: 14 lock events (2 threads x (2 x acquire, acquired, release) + 2 thread exits)"

is "$(findings locks.cycle)" 1 "cycle: one finding"
like locks.cycle '^lock-order cycle \(potential deadlock\) of 3 locks: lock_[abc] .* -> lock_[abc] .* -> lock_[abc] .* -> lock_[abc] ' \
	"cycle: three locks, named"
# each edge's two sites are in one function; the three functions are the three threads'
grep -o ' at [A-Za-z_][A-Za-z_0-9]*+0x[0-9a-f]*' locks.cycle | sed 's/^ at //; s/+0x.*//' >cycle.fn
is "$(paste - - <cycle.fn | awk '$1 == $2 { print $1 }' | sort | tr '\n' ' ')" "take_ab take_bc take_ca " \
	"cycle: each edge acquired and held in take_ab, take_bc, take_ca"
set -- $(paste -d' ' - - <cycle.fn | awk '{ print $1 }')
check_sites locks.cycle "$1" "$1" "$2" "$2" "$3" "$3"

is "$(findings locks.unlock)" 1 "unlock: one finding"
like locks.unlock '^unlock by non-holder: lock_w ' "unlock: lock_w"
check_sites locks.unlock unlock_other hold_w
pid_main=$(grep -o 'released by thread [0-9]*' locks.unlock | grep -o '[0-9]*$')
pid_other=$(grep -o 'held by thread [0-9]*' locks.unlock | grep -o '[0-9]*$')
ok "$([ -n "$pid_main" ] && [ -n "$pid_other" ] && [ "$pid_main" != "$pid_other" ]; echo $?)" \
	"unlock: released by one thread ($pid_main), held by another ($pid_other)"

is "$(findings locks.double)" 1 "double: one finding"
like locks.double '^double acquire: lock_d ' "double: lock_d"
like locks.double '^  thread [0-9]+ \(misuse\) acquired it again at retake_d\+0x[0-9a-f]+ \(misuse\.c:[0-9]+\): EBUSY$' \
	"double: the trylock's EBUSY (POSIX: a locked mutex)"
check_sites locks.double retake_d take_d

is "$(findings locks.errchk)" 1 "errchk: one finding"
like locks.errchk '^double acquire: lock_e ' "errchk: lock_e"
like locks.errchk ' acquired it again at retake_e\+0x[0-9a-f]+ .*: EDEADLK$' \
	"errchk: EDEADLK (POSIX: an error-checking mutex relocked by its owner)"
check_sites locks.errchk retake_e take_e

is "$(findings locks.exit)" 1 "exit: one finding"
like locks.exit '^held at thread exit: lock_x ' "exit: lock_x"
check_sites locks.exit hold_and_exit hold_and_exit

is "$(findings locks.clean)" 0 "clean: the thread pool has no finding"
like locks.clean '^0 misuse findings \([0-9]+ lock events\)$' "clean: the summary"
like locks.clean '^[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +200  spin ' \
	"clean: the times table: the spinlock acquired 200 times (one per job)"
like locks.clean ' +[0-9]+  table .* worker\+0x[0-9a-f]+ \(misuse\.c:[0-9]+\)$' \
	"clean: the rwlock's read site with file:line"

# instrumented builds (library calls hooked through the GOT, the default):
# the shim's return address is then libktrace's exit trampoline, which it
# took for libktrace's own call and left out (no lock event at all); it
# asks for the real call site.  The same findings, events and sites as the
# uninstrumented build's.
for b in inst:-finstrument-functions pg:-pg; do
	v=${b%%:*}
	# shellcheck disable=SC2086
	cc -O1 -g ${b#*:} -pthread -o "misuse-$v" "$KTRACE_SRC/tests/locks/misuse.c" || exit 1
	run "$KTRACE" record -q --locks -o "d.order.$v" "./misuse-$v" order
	run "$KTRACE" locks "d.order.$v"
	is "$rc:$(grep -E "^[0-9]+ misuse finding" "$T/out")" "3:1 misuse finding (14 lock events)" \
		"order, ${b#*:} with library calls: the inversion and its 14 lock events"
	is "$(grep -o ' at [A-Za-z_][A-Za-z_0-9]*+0x' "$T/out" | sed 's/^ at //; s/+0x$//' | tr '\n' ' ')" \
		"take_ba take_ba take_ab take_ab " "order, ${b#*:}: the call sites in the program's functions"
	run "$KTRACE" record -q --locks -o "d.clean.$v" "./misuse-$v" clean
	run "$KTRACE" locks "d.clean.$v"
	like "$T/out" '^[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +200  spin ' \
		"clean, ${b#*:}: the spinlock acquired 200 times (one per job)"
done

# a real program: the SQLite shell (libsqlite3's mutexes, sorter threads)
run "$KTRACE" record -q --locks -o d.sql sqlite3 :memory: "PRAGMA threads=4; CREATE TABLE t(x);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50000)
INSERT INTO t SELECT abs(random()) FROM c; CREATE INDEX ti ON t(x); SELECT count(*) FROM t;"
is "$(tail -n 1 "$T/out")" 50000 "sqlite3 under record --locks: its answer"
run "$KTRACE" locks d.sql
is "$rc" 0 "sqlite3 with sorter threads: no misuse (exit 0)"
is "$(findings "$T/out")" 0 "sqlite3: no finding"
like "$T/out" '^0 misuse findings \([0-9]{5,} lock events\)$' "sqlite3: tens of thousands of lock events"
like "$T/out" ' sqlite3Malloc\+0x[0-9a-f]+$' "sqlite3: libsqlite3's sites named (sqlite3Malloc's mutex)"

# the events themselves, as `ktrace print` names them from the catalogue
run "$KTRACE" print -x d.double
is "$(grep -c 'mutex_trylock:failed' "$T/out")" 1 "print: one failed trylock (EBUSY) in the double mode"
is "$(grep -c 'mutex_lock:acquired' "$T/out")" 1 "print: one acquired lock"
like "$T/out" 'mutex_unlock:release +lock=0x[0-9a-f]+ site=0x[0-9a-f]+' "print: lock and site arguments"
is "$(sed -n 's/.*mutex_trylock:failed .*site_err=\(0x[0-9a-f]*\).*/\1/p' "$T/out" |
	python3 -c 'import errno, sys; v = int(sys.stdin.read(), 16); print(errno.errorcode.get(v >> 48), hex(v & (2**48 - 1)) != "0x0")')" \
	"EBUSY True" "print: the failed trylock's site_err holds EBUSY in bits 48..63 (python's errno table) and the site"

# --top
run "$KTRACE" locks --top 1 d.clean
like "$T/out" '^\([0-9]+ more; --top 0 shows all\)$' "--top 1: one row and the rest counted"

# without --locks: no shim, no lock events
run "$KTRACE" record -q -o d.none ./misuse double
run "$KTRACE" locks d.none
is "$rc" 1 "a trace without lock events: exit 1"
like "$T/err" '^ktrace locks: .*d\.none: no lock events' "... saying so"
run "$KTRACE" record -q -o d.env sh -c 'echo "$LD_PRELOAD"'
unlike "$T/out" 'libktrace-locks' "without --locks libktrace-locks.so is not preloaded"
run "$KTRACE" record -q --locks -o d.env2 sh -c 'echo "$LD_PRELOAD"'
like "$T/out" 'libktrace-locks\.so\.0' "with --locks it is"

# ---- the kernel's contention events (root, tracefs; an instance of our own) ----
cc -O1 -pthread -o mmap_contend "$KTRACE_SRC/tests/locks/mmap_contend.c" || exit 1
if [ "$(id -u)" -eq 0 ] && grep -qw tracefs /proc/filesystems; then
	run "$KTRACE" record -q --locks --kernel=lock -o d.kernel ./mmap_contend
	is "$rc" 0 "kernel: record --locks --kernel=lock (exit 0)"
	run "$KTRACE" locks --top 0 d.kernel
	is "$rc" 0 "kernel: contention is no misuse (exit 0)"
	cp "$T/out" locks.kernel
	n=$(sed -n 's/.*, \([0-9]*\) kernel contention events).*/\1/p' locks.kernel)
	rows=$(awk '$1 == "-" && $2 == "-" && / kernel (rwsem|spinlock|mutex|rwlock|lock) / { n += $7 } END { print n + 0 }' locks.kernel)
	ok "$([ "${n:-0}" -gt 0 ]; echo $?)" "kernel: contention events of the program's tasks ($n)"
	# trace-cmd, a third-party reader, from the raw copy: the program's contentions
	run "$KTRACE" export --format=trace.dat -o k.dat d.kernel
	trace_cmd report k.dat 2>/dev/null >k.report
	# every task's contention_end events: ktrace's records against trace-cmd's
	# reading of the raw copy; then the program's (its pid: the recorder
	# names a thread's process from task_newtask or /proc, which a thread
	# that died before the recorder read its events may miss under load:
	# so the program's share is checked against ktrace print, not trace-cmd)
	ppid=$(sed -n 's/^pid //p' d.kernel/metadata)
	tc=$(grep -c 'contention_end:' k.report)
	"$KTRACE" print -C d.kernel | awk -F, '$9 == "LOCK_CONTENTION_END"' >k.ends
	is "$(lines k.ends)" "$tc" "kernel: ktrace print's contention_end records = trace-cmd's, every task ($tc)"
	tcp=$(awk -v p="$ppid" '/contention_end:/ { split($1, a, "-"); t = a[length(a)];
		if (t == p || $1 ~ /^mmap_contend-/) n++ } END { print n + 0 }' k.report)
	is "$rows" "$(awk -F, -v p="$ppid" '$5 == p' k.ends | wc -l | tr -d ' ')" \
		"kernel: the wait table's contentions are print's contention_end records of the program (trace-cmd: $tcp of mmap_contend)"
	like locks.kernel '^- +- +[0-9.]+ [nmu]?s +[0-9.]+ [nmu]?s +[0-9]+  kernel rwsem #[0-9a-f]{16} +\(kernel contention\)$' \
		"kernel: the mmap_lock rwsem in the table (flags READ/WRITE, no SPIN)"
	# no kernel address in the records: the ids are none of trace-cmd's lock_addr values
	grep -o 'contention_[a-z]*: *0x[0-9a-f]*' k.report | sed 's/.* //' | sort -u >addrs
	"$KTRACE" print -x d.kernel | grep -o 'lock_addr=0x[0-9a-f]*' | sed 's/.*=//' | sort -u >ids
	ok "$([ -s addrs ] && [ -s ids ] && [ -z "$(comm -12 addrs ids)" ] && ! grep -q '^0xffff' ids; echo $?)" \
		"kernel: lock_addr is an id, never the kernel address trace-cmd shows ($(wc -l <ids) locks)"
	# every thread of the program (its own "PID TID" lines) is in the kernel
	# trace's thread table under the program's pid, whichever CPU buffer
	# the recorder read first (before the fix, a thread created on one CPU
	# and read before the program's fork from the other got tgid 0 in
	# about half of the runs, and its contention left the table); 4 runs
	bad=""
	for i in 1 2 3 4; do
		rm -rf "d.tg$i"
		"$KTRACE" record -q --kernel=lock -o "d.tg$i" ./mmap_contend >"tg$i.out" 2>/dev/null
		bad="$bad$(awk 'NR == FNR { want[$2] = $1; next }
			$1 == "thread" && ($2 in want) { seen[$2] = 1; if ($3 != want[$2]) printf "tid %s tgid %s (pid %s); ", $2, $3, want[$2] }
			END { for (t in want) if (!seen[t]) printf "tid %s missing; ", t }' "tg$i.out" "d.tg$i/kernel/metadata")"
	done
	is "$bad" "" "kernel: each of the program's 4 threads has the program's pid as tgid in the thread table (4 runs)"
else
	run "$KTRACE" record -q --locks --kernel=lock -o d.kernel ./mmap_contend
	run "$KTRACE" locks d.kernel
	ok "$([ "$rc" = 0 ] || [ "$rc" = 1 ]; echo $?)" "kernel (not root): the lock events of the program only"
fi

run "$KTRACE" locks --bogus d.clean
is "$rc" 2 "unknown option: exit 2"
run "$KTRACE" locks "$T/missing"
is "$rc" 1 "missing directory: exit 1"
run "$KTRACE" locks --help
like "$T/out" '^usage: ktrace locks' "--help"

done_testing
