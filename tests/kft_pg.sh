#!/bin/sh
# tests/kft_pg.sh - the function tracer on programs built with -pg and with
# -pg -mfentry (lib/kft_pg.c, lib/kft_pg_entry.S; x86-64), and record's
# one-line account of how a program was built (cli/record_detect.c).
#
# tests/kft/calltree.c (threads, signal handler, longjmp, fork, exit inside
# calls, recursion), tests/kft/pgtail.c (tail calls) and tests/kft/cxx.cc
# (C++ exception thrown through traced frames and caught) are built three
# ways: -finstrument-functions,
# -pg, -pg -mfentry.  For each mode the per-function call counts (kd
# --format=csv) must equal the answer written here from the programs'
# source, the -finstrument-functions build's, and uftrace's (`uftrace
# record --no-libcall` + `uftrace report`, on the same -pg binary); the
# call paths (export --format=folded, weights dropped) must equal the
# -finstrument-functions build's; the program's own output and exit
# status must not change.  Also: a signal storm into the hooks, fork+exec
# (a program here), -lktrace instead of LD_PRELOAD, -pg programs without a
# run, and the build line `record` prints for each flavour, a plain and a
# -fpatchable-function-entry program (patched: tests/kft_patch.sh).
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
# the program's own calls only: library calls (on by default) are tests/kft_plt.sh's
KTRACE_LIBCALL=0
export KTRACE_LIBCALL

CT="$KTRACE_SRC/tests/kft/calltree.c"
cc -O1 -g -finstrument-functions -pthread -o ct-inst "$CT" || exit 1
cc -O1 -g -pg -pthread -o ct-pg "$CT" || exit 1
cc -O1 -g -pg -mfentry -pthread -o ct-fentry "$CT" || exit 1
CX="$KTRACE_SRC/tests/kft/cxx.cc"
for v in inst:-finstrument-functions pg:-pg fentry:"-pg -mfentry"; do
	# shellcheck disable=SC2086
	g++ -O1 -g ${v#*:} -I"$KTRACE_SRC/include" -o "cxx-${v%%:*}" "$CX" || exit 1
done

# name,count per function from kd's csv, sorted (only names in $2 if given)
counts() { kd_counts "$@"; }

# the same from uftrace on the same binary (library calls and kernel events left out)
ucounts() { uftrace_counts "$@"; }

# the set of call paths (folded stacks without the thread and the weights)
paths() {
	"$KTRACE" export --format=folded -o - "$1" | sed 's/ [0-9]*$//; s/^[^;]*;//' | sort -u
}

# want MODE: the call counts calltree.c's source gives for MODE
want() { calltree_want "$1"; }

for mode in tree "threads 4" signal longjmp fork exit "recurse 50"; do
	want "$mode" >want
	for b in inst pg fentry; do
		rm -rf "tr-$b"
		# shellcheck disable=SC2086
		"$KTRACE" record -q -o "tr-$b" ./ct-$b $mode >"out-$b" 2>"err-$b"
		echo "exit $?" >>"out-$b"
		counts "tr-$b" >"cnt-$b"
		paths "tr-$b" >"paths-$b"
	done
	is "$(cat cnt-inst)" "$(cat want)" "$mode: -finstrument-functions counts as the source says"
	for b in pg fentry; do
		is "$(cat "cnt-$b")" "$(cat want)" "$mode: -$b counts as the source says"
		is "$(cat "out-$b")" "$(cat out-inst)" "$mode: -$b output and exit status unchanged"
		is "$(cat "paths-$b")" "$(cat paths-inst)" "$mode: -$b call paths as -finstrument-functions"
		is "$(cat "err-$b")" "" "$mode: -$b nothing on stderr"
		# uftrace 0.13 mishandles longjmp out of -pg (mcount) frames: the
		# program goes round its setjmp 256 times; its -mfentry is right
		[ "$mode$b" = longjmppg ] && continue
		rm -rf "u-$b"
		# shellcheck disable=SC2086
		env -u LD_PRELOAD uftrace record --no-libcall -d "u-$b" ./ct-$b $mode >/dev/null 2>&1
		ucounts "u-$b" >"ucnt-$b"
		cp want "want-$b"
		is "$(cat "ucnt-$b")" "$(cat "want-$b")" "$mode: uftrace on the -$b binary counts the same"
	done
done

# clang's -pg and -pg -mfentry (mcount after its own prologue, __fentry__ first)
for v in clang-pg:-pg clang-fentry:"-pg -mfentry"; do
	b=${v%%:*}
	# shellcheck disable=SC2086
	clang -O1 -g ${v#*:} -pthread -o "ct-$b" "$CT" || exit 1
	for mode in tree "threads 4" longjmp signal "recurse 50"; do
		rm -rf "tr-$b"
		# shellcheck disable=SC2086
		"$KTRACE" record -q -o "tr-$b" "./ct-$b" $mode >/dev/null 2>&1
		is "$?" 0 "$b $mode: exit 0"
		is "$(counts "tr-$b")" "$(want "$mode")" "$b $mode: counts as the source says"
	done
done

# sigstorm: a handler that may interrupt the hooks; the program's count of
# handler calls against the trace's (each either traced or counted missed)
for b in pg fentry; do
	rm -rf "tr-$b" made
	"$KTRACE" record -q -o "tr-$b" "./ct-$b" sigstorm 300 >/dev/null 2>&1
	is "$?" 0 "sigstorm: -$b exits 0"
	is "$(cat made 2>/dev/null)" 300 "sigstorm: -$b every handler ran"
done

# tail calls (tests/kft/pgtail.c at -O2: jumps in the -pg builds, calls in
# the -finstrument-functions one): same counts, nesting, none unfinished
PT="$KTRACE_SRC/tests/kft/pgtail.c"
cc -O2 -g -finstrument-functions -o pt-inst "$PT" || exit 1
cc -O2 -g -pg -o pt-pg "$PT" || exit 1
cc -O2 -g -pg -mfentry -o pt-fentry "$PT" || exit 1
is "$(objdump -d --no-show-raw-insn pt-pg | awk '/<hop>:/,/^$/' | grep -c 'jmp .*<leaf>')" 1 \
	"pgtail: the -pg build's hop() jumps to leaf() (a tail call)"
for b in inst pg fentry; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./pt-$b" >"out-$b" 2>&1
	echo "exit $?" >>"out-$b"
	"$KTRACE" kd --format=csv "tr-$b" | cut -d, -f1,2,8 | sort >"cnt-$b"
	paths "tr-$b" >"paths-$b"
done
is "$(cat cnt-inst)" "$(printf 'hop,3,0\nleaf,3,0\nmain,1,0\nname,count,unfinished\nwalk,21,0')" \
	"pgtail: -finstrument-functions counts as the source says, none unfinished"
for b in pg fentry; do
	is "$(cat "out-$b")" "$(cat out-inst)" "pgtail: -$b output unchanged"
	is "$(cat "cnt-$b")" "$(cat cnt-inst)" "pgtail: -$b counts as -finstrument-functions, none unfinished"
	is "$(cat "paths-$b")" "$(cat paths-inst)" "pgtail: -$b call paths (leaf in hop, walk 21 deep) as -finstrument-functions"
	env -u LD_PRELOAD uftrace record --no-libcall -d "u-$b" "./pt-$b" >/dev/null 2>&1
	is "$(ucounts "u-$b")" "$(printf 'hop 3\nleaf 3\nmain 1\nwalk 21')" "pgtail: uftrace on the -$b binary counts the same"
done

# fork + exec: the child execs the program again; the new image records
# beside the trace (DIR.exec-PID-N, lib/kft_setup.c) with fresh stacks
cp "$KTRACE_SRC/tests/kft/forkexec.c" fe.c # fork + exec
for v in inst:-finstrument-functions pg:-pg fentry:"-pg -mfentry"; do
	b=${v%%:*}
	# shellcheck disable=SC2086
	cc -O1 ${v#*:} -o "fe-$b" fe.c || exit 1
	mkdir "fe-$b.d" && cd "fe-$b.d" || exit 1
	"$KTRACE" record -q -o tr "../fe-$b" >out 2>&1
	echo "exit $?" >>out
	"$KTRACE" kd --format=csv tr | cut -d, -f1,2,8 | sort >cnt
	"$KTRACE" kd --format=csv tr.exec-*-1 | cut -d, -f1,2,8 | sort >cnt-exec
	cd .. || exit 1
done
is "$(cat fe-inst.d/cnt fe-inst.d/cnt-exec | tr '\n' ' ')" \
	"child_side,1,1 leaf,2,0 main,1,0 name,count,unfinished leaf,2,0 main,1,0 name,count,unfinished " \
	"fork+exec: -finstrument-functions: parent and child (child_side left by exec), the new image apart"
for b in pg fentry; do
	is "$(cat "fe-$b.d/out")" "$(cat fe-inst.d/out)" "fork+exec: -$b output unchanged"
	is "$(cat "fe-$b.d/cnt")" "$(cat fe-inst.d/cnt)" "fork+exec: -$b counts as -finstrument-functions"
	is "$(cat "fe-$b.d/cnt-exec")" "$(cat fe-inst.d/cnt-exec)" "fork+exec: -$b exec'd image's counts as -finstrument-functions"
done

# kd's C++ names as uftrace writes them: no return type, template
# arguments or parameters, instantiations summed ("int total<int>(...) 1"
# and "double total<double>(...) 1" are "total 2")
uftrace_names() {
	python3 -c '
import sys
out = {}
for line in sys.stdin.read().splitlines():
    name, count = line.rsplit(" ", 1)
    flat, depth = "", 0
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            flat += ch
    flat = flat.replace(" const", "").split()[-1]
    out[flat] = out.get(flat, 0) + int(count)
for n in sorted(out):
    print(n, out[n])'
}

# C++: an exception thrown through two traced frames and caught
KEEP='^(main|thrower|geo::Rect::area|total) '
for b in inst pg fentry; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./cxx-$b" >"out-$b" 2>"err-$b"
	echo "exit $?" >>"out-$b"
	counts "tr-$b" | uftrace_names | grep -E "$KEEP" >"cnt-$b"
done
like out-inst "caught 1" "cxx: -finstrument-functions build catches"
for b in pg fentry; do
	is "$(cat "out-$b")" "$(cat out-inst)" "cxx: -$b output (exception caught) and exit status unchanged"
	is "$(cat "cnt-$b")" "$(cat cnt-inst)" "cxx: -$b counts of main, thrower, area, total as -finstrument-functions"
	rm -rf "u-$b"
	env -u LD_PRELOAD uftrace record --no-libcall -d "u-$b" "./cxx-$b" >/dev/null 2>&1
	ucounts "u-$b" | grep -E "$KEEP" >"ucnt-$b"
	is "$(cat "ucnt-$b")" "$(cat "cnt-$b")" "cxx: uftrace on the -$b binary counts the same"
done
is "$(cat cnt-pg)" "$(printf 'geo::Rect::area 5\nmain 1\nthrower 3\ntotal 2')" \
	"cxx: -pg counts as the program says (area 5, total 2, thrower 3)"

# pthread_exit() from nested traced calls, in C++: its unwinding runs the
# cleanup handler (a destructor) through the diverted frames
cat >pe.cc <<'EOF'
#include <pthread.h>
#include <stdio.h>
static volatile int s;
__attribute__((noinline)) void inner() { s++; pthread_exit(NULL); }
__attribute__((noinline)) void middle() { inner(); s++; }
static void cleanup(void *) { printf("cleanup ran\n"); }
__attribute__((noinline)) void *thr(void *a)
{
	pthread_cleanup_push(cleanup, NULL);
	middle();
	pthread_cleanup_pop(0);
	return a;
}
int main()
{
	pthread_t t;

	for (int i = 0; i < 3; i++) {
		pthread_create(&t, NULL, thr, NULL);
		pthread_join(t, NULL);
	}
	printf("joined\n");
	return 0;
}
EOF
for v in pg:-pg fentry:"-pg -mfentry"; do
	b=${v%%:*}
	# shellcheck disable=SC2086
	g++ -O1 ${v#*:} -pthread -o "pe-$b" pe.cc || exit 1
	rm -rf tr
	"$KTRACE" record -q -o tr "./pe-$b" >out 2>&1
	is "$(cat out; echo "exit $?")" "$(printf 'cleanup ran\ncleanup ran\ncleanup ran\njoined\nexit 0')" \
		"pthread_exit in C++, -$b: the cleanup handlers run, the threads end"
	is "$("$KTRACE" kd --format=csv tr | grep -E '^(inner|middle|thr)' | cut -d, -f1,2 | sort | tr '\n' ' ')" \
		"inner(),3 middle(),3 thr(void*),3 " "pthread_exit in C++, -$b: the calls it left counted"
done

# a -pg program without ktrace: glibc's mcount, or libktrace's without a run
./ct-pg tree >/dev/null 2>&1
is "$?" 0 "-pg program runs on its own"
LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$KTRACE_BUILD/libktrace.so.0" ./ct-fentry tree >/dev/null 2>&1
is "$?" 0 "-pg -mfentry program with libktrace preloaded but no run: runs"
LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$KTRACE_BUILD/libktrace.so.0" ./cxx-pg >out 2>&1
like out "caught 1" "-pg C++ program with libktrace preloaded but no run: catches"

# linked with -lktrace: libktrace's mcount wins over glibc's
cc -O1 -g -pg -pthread -o ct-pgl "$CT" -L"$KTRACE_BUILD" -lktrace -Wl,-rpath,"$KTRACE_BUILD" || exit 1
rm -rf tr-l
"$KTRACE" record -q -o tr-l ./ct-pgl tree >/dev/null 2>&1
is "$(counts tr-l)" "$(want tree)" "-pg linked with -lktrace: counts as the source says"

# record's account of the build (without -q), one line first
cc -O1 -o plain "$KTRACE_SRC/tests/kft/shapes.c" || exit 1
cc -O1 -fpatchable-function-entry=5 -o patchable "$KTRACE_SRC/tests/kft/shapes.c" || exit 1
for b in inst pg fentry; do
	rm -rf tr
	"$KTRACE" record -o tr "./ct-$b" tree 2>err >/dev/null
	head -n 1 err >"line-$b"
done
like line-inst "^ktrace record: ./ct-inst: built with -finstrument-functions: tracing every call$" \
	"record says: -finstrument-functions"
like line-pg "^ktrace record: ./ct-pg: built with -pg: tracing every call through mcount" \
	"record says: -pg"
like line-fentry "^ktrace record: ./ct-fentry: built with -pg -mfentry: tracing every call through __fentry__" \
	"record says: -pg -mfentry"
rm -rf tr
"$KTRACE" record -o tr ./plain fib 3 2>err >/dev/null
head -n 1 err >line
like line "^ktrace record: ./plain: built without function hooks: [0-9]+ functions patched at start" \
	"record says: no hooks, its functions patched at start (tests/kft_dynpatch.sh tests them)"
rm -rf tr
"$KTRACE" record -o tr ./patchable fib 3 2>err >/dev/null
head -n 1 err >line
like line "^ktrace record: ./patchable: patchable entries in [0-9]* functions .*patched at start" \
	"record says: patchable entries patched at start (tests/kft_patch.sh tests them)"
rm -rf tr
"$KTRACE" record -q -o tr ./ct-pg tree 2>err >/dev/null
is "$(cat err)" "" "record -q: no account"

# GCC nested functions: -pg -mfentry saves the static chain (%r10) around
# the hook call, so the return address is one word higher (the program
# printed garbage or crashed).  The expected counts: uftrace's on the -pg
# build of the same source (uftrace 0.13 records nothing of the -pg
# -mfentry build: it is not the reference there); the output: 23, as
# computed by the program untraced.
for o in O0 O2; do
	cc -$o -g -pg -o "nest-pg-$o" "$KTRACE_SRC/tests/kft/nested.c" 2>/dev/null || exit 1
	cc -$o -g -pg -mfentry -o "nest-fentry-$o" "$KTRACE_SRC/tests/kft/nested.c" 2>/dev/null || exit 1
	rm -rf "u-nest-$o"
	env -u LD_PRELOAD uftrace record --no-libcall -d "u-nest-$o" "./nest-pg-$o" >/dev/null 2>&1
	want_n=$(ucounts "u-nest-$o")
	for b in pg fentry; do
		fl=-pg
		[ $b = fentry ] && fl="-pg -mfentry"
		rm -rf tr
		"$KTRACE" record -q -o tr "./nest-$b-$o" >out 2>err
		is "$?:$(cat out)" "0:23" "nested functions, -$o $fl: the program's output and status unchanged"
		is "$(counts tr)" "$want_n" "nested functions, -$o $fl: counts equal uftrace's on -pg"
	done
done
is "$(counts tr | paste -sd' ')" "add.0 2 apply 2 main 1 outer 1" "... which the source says too"

# gmon: under ktrace, glibc's profiling timer is never armed (libktrace's
# __monstartup is a no-op, as uftrace's), so a program a thread exec()s is
# not killed by SIGPROF; the program reports the timer itself
cc -O2 -g -pg -pthread -o pgexec "$KTRACE_SRC/tests/kft/pgexec.c" || exit 1
rm -rf tr gmon.out
"$KTRACE" record -q -o tr ./pgexec >out 2>err
is "$?:$(tr '\n' ' ' <out)" "0:itimer_prof off exec-done " \
	"-pg program exec()ing from a thread: no gmon timer, the exec()ed shell finishes, status 0"
ls gmon.out >/dev/null 2>&1
ok "$([ $? -ne 0 ]; echo $?)" "... and no gmon.out written"

done_testing
