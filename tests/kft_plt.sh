#!/bin/sh
# tests/kft_plt.sh - library calls (lib/kft_plt.c, kft_plt_entry in lib/kft_pg_entry.S):
# the program's calls into shared libraries, recorded by default by
# `ktrace record`, off with --no-libcall, named by the readers after the
# GOT slot's symbol (reader/symbols.c).
#
# tests/kft/libcalls.c calls malloc/free/memcpy/strlen/pthread_* and qsort
# (with a traced comparator) a known number of times, in threads too, and
# prints the counts it made: built -finstrument-functions, -pg,
# -pg -mfentry, -pg -fno-plt (GOT calls) and -finstrument-functions with
# BIND_NOW + RELRO (read-only GOT), kd's count of each of those functions
# must equal the program's, none unfinished, the program's output
# unchanged; built without hooks, nothing is recorded.  On the -pg builds every row of kd (own and library
# functions) must equal uftrace's (`uftrace record` with its default
# library calls + `uftrace report`).  With --no-libcall only the program's
# own functions remain.  print, addr2sym and export (folded, chrome JSON
# read by python's json) show the names.  Then the programs of
# tests/kft_pg.sh (calltree.c's modes: threads, signal handler, longjmp,
# fork, exit inside calls, recursion; cxx.cc's exceptions; a fork+exec
# program), built three ways, run with library calls on: their own
# functions' counts, unfinished counts and call paths (library frames
# taken out) must equal the --no-libcall run's, output and exit status
# unchanged.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
unset KTRACE_LIBCALL

LC="$KTRACE_SRC/tests/kft/libcalls.c"
for v in inst:-finstrument-functions pg:-pg fentry:"-pg -mfentry" noplt:"-pg -fno-plt" \
	now:"-finstrument-functions -Wl,-z,now -Wl,-z,relro" patch:-fpatchable-function-entry=5 plain:; do
	# shellcheck disable=SC2086
	cc -O1 -g ${v#*:} -pthread -o "lc-${v%%:*}" "$LC" || exit 1
done
is "$(readelf -d lc-now | grep -c 'BIND_NOW')" 1 "lc-now is linked BIND_NOW"
is "$(readelf -r lc-noplt | grep -c 'JUMP_SLO.*malloc')" 0 "lc-noplt calls malloc through its GOT (no PLT slot)"

# kd rows as "name count unfinished", sorted (python's csv: names may hold commas)
rows() {
	"$KTRACE" kd --format=csv "$1" | python3 -c '
import csv, sys
for r in sorted(csv.DictReader(sys.stdin), key=lambda r: r["name"]):
    print(r["name"], r["count"], r["unfinished"])'
}

# uftrace report rows as "name count", sorted (kernel events left out)
urows() { uftrace_counts "$1"; }

# the library functions a binary imports (demangled, no version)
libnames() {
	nm -D -C --undefined-only "$1" | sed 's/^ *[A-Za-z] //; s/@.*//' | sort -u
}

# keep (own) or drop (lib) the rows whose name is in file $2
own() { python3 -c '
import sys
lib = set(open(sys.argv[1]).read().splitlines())
for line in sys.stdin:
    name = line.rsplit(" ", 2)[0] if sys.argv[2] == "3" else line.rstrip("\n")
    if name not in lib:
        sys.stdout.write(line)' "$1" "${2:-3}"; }

# call paths without the library frames (folded stacks, thread and weights dropped)
paths() {
	"$KTRACE" export --format=folded -o - "$1" | sed 's/ [0-9]*$//; s/^[^;]*;//' | python3 -c '
import sys
lib = set(open(sys.argv[1]).read().splitlines())
out = set()
for line in sys.stdin:
    fr = [f for f in line.rstrip("\n").split(";") if f not in lib]
    if fr:
        out.add(";".join(fr))
print("\n".join(sorted(out)))' "$2"
}

./lc-inst 100 3 50 >expect || exit 1
for b in inst pg fentry noplt now patch plain; do
	rm -rf "tr-$b" "no-$b"
	"$KTRACE" record -o "tr-$b" "./lc-$b" 100 3 50 >"out-$b" 2>"err-$b"
	is "$?" 0 "libcalls -$b: exit 0"
	is "$(cat "out-$b")" "$(cat expect)" "libcalls -$b: output unchanged"
	like "err-$b" "lc-$b: .* \\+ [0-9]+ library functions through the PLT" \
		"libcalls -$b: record's build line counts the library functions"
	rows "tr-$b" >"rows-$b"
	# the program's own count of each library function it called
	got=$(while read -r name n; do
		c=$(awk -v f="$name" '$1 == f { print $2 }' "rows-$b")
		echo "$name ${c:-none}"
	done <expect)
	is "$got" "$(cat expect)" "libcalls -$b: kd counts each library function's calls as the program"
	is "$(awk '$3 != 0' "rows-$b")" "" "libcalls -$b: no call unfinished"
	"$KTRACE" record -q --no-libcall -o "no-$b" "./lc-$b" 100 3 50 >/dev/null 2>&1
	is "$(rows "no-$b" | cut -d' ' -f1 | tr '\n' ' ')" "cmp main worker " \
		"libcalls -$b: --no-libcall: the program's own functions only"
	is "$(rows "no-$b" | grep -v '^cmp')" "$(grep -E '^(main|worker) ' "rows-$b")" \
		"libcalls -$b: own functions' counts the same with library calls"
done
# a patchable build gets library calls only when every entry is patched:
# with -F selecting one function, nothing else is hooked (nearly free)
"$KTRACE" record -F worker -o sel-patch ./lc-patch 100 3 50 >/dev/null 2>err-sel
is "$(rows sel-patch | cut -d' ' -f1 | tr '\n' ' ')" "worker " \
	"libcalls -patch -F worker: only worker, no library calls"
like err-sel "through the PLT when all are patched" "libcalls -patch: the build line says when library calls are traced"
# qsort nests its comparator: same count both ways
is "$(awk '$1 == "cmp"' rows-pg)" "$(rows no-pg | awk '$1 == "cmp"')" "libcalls: cmp's calls (inside qsort) the same"
KTRACE_LIBCALL=0 "$KTRACE" record -o env-off ./lc-pg >/dev/null 2>err-env
is "$(rows env-off | cut -d' ' -f1 | tr '\n' ' ')" "cmp main worker " "KTRACE_LIBCALL=0: no library calls"
unlike err-env "library functions" "KTRACE_LIBCALL=0: the build line counts none"

# a program without hooks (lc-plain, in the loop above): its functions are
# patched at start (lib/kft_dynpatch.c), so its library calls are traced too

# uftrace (library calls by default) on the same -pg binaries: every row
# uftrace itself sometimes misses library calls made by threads
# (seen once, in a CI run under ASan, on a loaded machine: 7 of 150
# pthread_mutex_lock entries, all 150 unlocks): a uftrace run whose
# library-call counts differ from the program's own (expect) is named
# and run again, up to 3 times, before the rows are compared.
for b in pg fentry; do
	for try in 1 2 3; do
		rm -rf "u-$b"
		env -u LD_PRELOAD uftrace record -d "u-$b" "./lc-$b" 100 3 50 >/dev/null 2>&1
		bad=$(urows "u-$b" | awk 'NR == FNR { want[$1] = $2; next }
			($1 in want) && want[$1] != $2 { printf "%s %s (made %s); ", $1, $2, want[$1] }' expect -)
		[ -z "$bad" ] && break
		echo "# uftrace run $try on lc-$b miscounted the program's calls: $bad"
	done
	# (a sanitizer build runs the program with libasan, whose qsort calls
	# the comparator more to check the order; uftrace runs without it)
	if [ -n "${KTRACE_SAN:-}" ]; then drop='^cmp '; else drop='^$'; fi
	is "$(cut -d' ' -f1,2 "rows-$b" | grep -v "$drop")" "$(urows "u-$b" | grep -v "$drop")" \
		"libcalls -$b: kd's rows (own and library functions) equal uftrace's"
done

# names in the other readers
is "$("$KTRACE" print tr-pg | grep -c ' malloc ')" 250 "print: 250 malloc calls by name"
is "$("$KTRACE" addr2sym tr-inst | grep -c ' pthread_mutex_lock ')" 150 "addr2sym: 150 pthread_mutex_lock calls by name"
"$KTRACE" export --format=folded -o folded tr-fentry
like folded "worker;pthread_mutex_lock [0-9]" "export folded: worker;pthread_mutex_lock"
like folded "main;qsort;cmp [0-9]" "export folded: the comparator nested in qsort"
"$KTRACE" export --format=chrome -o chrome.json tr-pg
is "$(python3 -c '
import json, sys
ev = json.load(open("chrome.json"))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
print(sum(1 for e in ev if e.get("name") == "strlen" and e.get("ph") in ("X", "B")))')" 100 \
	"export chrome (python json): 100 strlen events"

# the -pg test programs with library calls on: the program's own calls unchanged
CT="$KTRACE_SRC/tests/kft/calltree.c"
CX="$KTRACE_SRC/tests/kft/cxx.cc"
for v in inst:-finstrument-functions pg:-pg fentry:"-pg -mfentry"; do
	# shellcheck disable=SC2086
	cc -O1 -g ${v#*:} -pthread -o "ct-${v%%:*}" "$CT" || exit 1
	# shellcheck disable=SC2086
	g++ -O1 -g ${v#*:} -I"$KTRACE_SRC/include" -o "cxx-${v%%:*}" "$CX" || exit 1
	libnames "ct-${v%%:*}" >"lib-ct-${v%%:*}"
	libnames "cxx-${v%%:*}" >"lib-cxx-${v%%:*}"
done
check() { # check PROG-BUILD MODE...: own functions with and without library calls
	p=$1
	shift
	rm -rf on off
	# shellcheck disable=SC2068
	"$KTRACE" record -q -o on "./$p" $@ >out-on 2>err-on
	echo "exit $?" >>out-on
	# shellcheck disable=SC2068
	"$KTRACE" record -q --no-libcall -o off "./$p" $@ >out-off 2>err-off
	echo "exit $?" >>out-off
	is "$(cat out-on)" "$(cat out-off)" "$p $*: output and exit status unchanged"
	is "$(cat err-on)" "$(cat err-off)" "$p $*: stderr unchanged"
	is "$(rows on | own "lib-${p}")" "$(rows off)" "$p $*: own functions' counts and unfinished unchanged"
	[ "$(rows on | own "lib-${p}" | wc -l)" -lt "$(rows on | wc -l)" ]
	ok $? "$p $*: library calls recorded"
	is "$(paths on "lib-${p}")" "$(paths off "lib-${p}")" "$p $*: own call paths unchanged"
}
for b in inst pg fentry; do
	for mode in tree "threads 4" signal longjmp fork exit "recurse 50"; do
		# shellcheck disable=SC2086
		check "ct-$b" $mode
	done
	check "cxx-$b"
done

# fork + exec: the exec'd image's library calls are recorded beside the trace
cat >fe.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) int leaf(int x) { static volatile int s; s += x; return x + 1; }
void *volatile keep;
int main(int argc, char **argv)
{
	pid_t p;

	if (argc > 1) {
		leaf(2);
		keep = malloc(8);
		free(keep);
		printf("exec'd\n");
		return 0;
	}
	p = fork();
	if (p == 0) {
		leaf(1);
		execl(argv[0], argv[0], "exec", (char *)0);
		return 1;
	}
	waitpid(p, 0, 0);
	leaf(4);
	return 0;
}
EOF
cc -O1 -g -pg -o fe-pg fe.c || exit 1
mkdir fe.d && cd fe.d || exit 1
"$KTRACE" record -q -o tr ../fe-pg >out 2>&1
is "$?" 0 "fork+exec -pg: exit 0"
is "$(cat out)" "exec'd" "fork+exec -pg: the exec'd image ran"
is "$(rows tr | grep -E '^(execl|fork|waitpid|leaf) ')" \
	"$(printf 'execl 1 1\nfork 2 0\nleaf 2 0\nwaitpid 1 0')" \
	"fork+exec -pg: fork returns in both processes (as uftrace counts), execl unfinished, leaf in both"
ex=$(ls -d tr.exec-* 2>/dev/null | head -1)
is "$(rows "$ex" | grep -E '^(malloc|free|leaf) ')" "$(printf 'free 1 0\nleaf 1 0\nmalloc 1 0')" \
	"fork+exec -pg: the exec'd image's library calls"
cd ..

done_testing
