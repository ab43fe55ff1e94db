#!/bin/sh
# tests/kft_ucontext.sh - coroutines with ucontext (issue 25, item 9): a
# context made with makecontext() on a stack of its own, entered and left
# with swapcontext() several times, ending through uc_link.  Before the fix
# the shadow stack saw one stack: with -finstrument-functions and -pg the
# coroutine's calls after a switch nested in the wrong frames (`bar` at
# depth 2 in place of 3), and with the coroutine's stack on the main stack
# above foo's frame (`local`) `main` and `foo` ended unfinished at the
# coroutine's first call and everything after sat at depth 0 or 1.  Now
# lib/kft_plt.c tells the hooks about getcontext, makecontext, swapcontext
# and setcontext, and each context keeps its own frames (kft_hooks.c,
# kft_hooks_swapcontext()).
#
# tests/kft/ucontext.c with its coroutine stack in .bss, in an mmap and in
# main()'s frame, 0, 2 and 3 rounds, built -finstrument-functions and -pg
# at -O0 and -O2 and -pg -mfentry at -O2.  Each run's call tree (thread,
# recorded depth, function in entry order: `kd -c --format=csv`,
# tests/helpers/calltree.py ktrace-csv; `kd -c` draws levels from the
# calls' times, which interleave with coroutines) must equal the program's
# own log of its calls, with library calls on (they are left out of the
# comparison) and off; uftrace cannot be the reference: uftrace 0.13 stops
# tracing at the first switch ("uftrace stopped tracing with remaining
# functions": main, foo, swapcontext, coro).  The program's output and exit
# status are those of a run without tracing.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

# under ASan (make SAN=asan) its one-line warning about swapcontext is no output of the program
nowarn() { grep -v "ASan doesn't fully support makecontext/swapcontext" || true; }

SRC="$KTRACE_SRC/tests/kft/ucontext.c"
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
BUILDS=$KFT_BUILDS
for b in $BUILDS; do
	# shellcheck disable=SC2046
	cc -g $(hook_flags "$b") -o "uc-$b" "$SRC" || exit 1
done

# the program's own functions only: library calls are not in its log
mine() {
	python3 -c '
import sys
keep = {"main", "foo", "coro", "bar", "baz"}
for line in sys.stdin:
    w = line.split()
    if w == ["thread"] or (len(w) == 2 and w[1] in keep):
        sys.stdout.write(line)'
}

for rounds in 2 0 3; do
	for stack in bss mmap local; do
		for b in $BUILDS; do
			c="ucontext $stack $rounds $b"
			{ "./uc-$b" $stack $rounds; echo "exit $?" >rc; } 2>&1 | nowarn >plain.out
			cat rc >>plain.out
			grep -v '^exit ' plain.out >log.tree

			rm -rf k k0
			"$KTRACE" record -q -o k "./uc-$b" $stack $rounds >k.out 2>k.err.san
			echo "exit $?" >>k.out
			nowarn <k.err.san >k.err
			is "$(cat k.out)" "$(cat plain.out)" "$c: output and exit status unchanged"
			is "$(cat k.err)" "" "$c: nothing on stderr"
			"$KTRACE" kd -c --format=csv k | python3 "$TREE" ktrace-csv | mine >k.tree
			is "$(cat k.tree)" "$(cat log.tree)" "$c: call tree as the program's log (library calls on)"

			KTRACE_LIBCALL=0 "$KTRACE" record -q -o k0 "./uc-$b" $stack $rounds >k0.out 2>k0.err
			echo "exit $?" >>k0.out
			nowarn <k0.err >>k0.out
			is "$(cat k0.out)" "$(cat plain.out)" "$c, no library calls: output and exit status unchanged"
			"$KTRACE" kd -c --format=csv k0 | python3 "$TREE" ktrace-csv >k0.tree
			is "$(cat k0.tree)" "$(cat log.tree)" "$c, no library calls: call tree as the program's log"
		done
	done
done

# nothing unfinished: every call of the coroutine returned
rm -rf k
"$KTRACE" record -q -o k ./uc-inst-O0 local 2 >/dev/null 2>&1
is "$("$KTRACE" kd --format=csv k | python3 -c '
import csv, sys
print(" ".join("%s:%s/%s" % (r["name"], r["count"], r["unfinished"])
               for r in sorted(csv.DictReader(sys.stdin), key=lambda r: r["name"])
               if r["name"] in ("main", "foo", "coro", "bar", "baz")))')" \
	"bar:6/0 baz:4/0 coro:1/0 foo:1/0 main:1/0" "ucontext local 2: counts, none unfinished"

done_testing
