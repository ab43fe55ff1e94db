#!/bin/sh
# tests/kft_longjmp.sh - longjmp out of traced calls (issue 25, item 8):
# the frames it abandons end there (reported unfinished), so the calls that
# follow are not nested in them (before: with -finstrument-functions the
# next calls nested in the dead frame, `main | foo [unfinished] | | bar`,
# whenever their frames lay lower; with -pg, the library calls made before
# the next entry of an instrumented function did).  lib/kft_plt.c tells
# the hooks about setjmp (the depth, by jmp_buf) and longjmp (the frames
# above it are dead), with library calls recorded or not.
#
# tests/kft/jumps.c (longjmp out of 1 and of 3 frames, siglongjmp out of
# 3), built -finstrument-functions and -pg at -O0 and -O2 and -pg -mfentry
# at -O2.  Each run's call tree (thread, depth, function in entry order,
# tests/helpers/calltree.py) must equal
#   - with library calls: uftrace's on the same binary (`uftrace record`,
#     which hooks setjmp/longjmp through the PLT too; `uftrace replay`), the
#     setjmp and longjmp families left out of uftrace's tree (ktrace does
#     not record them, kft/libcall.h);
#   - without (KTRACE_LIBCALL=0): the program's own log of its calls,
#     which it prints (uftrace --no-libcall is wrong here: it nests bar in
#     foo, as ktrace did);
# and the program's output and exit status are those of a run without
# tracing.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

SRC="$KTRACE_SRC/tests/kft/jumps.c"
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
JMP=_setjmp,setjmp,__sigsetjmp,sigsetjmp,longjmp,_longjmp,siglongjmp,__longjmp_chk
BUILDS=$KFT_BUILDS
for b in $BUILDS; do
	# shellcheck disable=SC2046
	cc -g $(hook_flags "$b") -o "jm-$b" "$SRC" || exit 1
done

for mode in 1 3 sig3; do
	for b in $BUILDS; do
		"./jm-$b" $mode >plain.out 2>&1
		echo "exit $?" >>plain.out
		# the program's own log: its output without the exit line
		grep -v '^exit ' plain.out >log.tree

		rm -rf k k0 u
		"$KTRACE" record -q -o k "./jm-$b" $mode >k.out 2>k.err
		echo "exit $?" >>k.out
		is "$(cat k.out)" "$(cat plain.out)" "longjmp $mode $b: output and exit status unchanged"
		is "$(cat k.err)" "" "longjmp $mode $b: nothing on stderr"
		env -u LD_PRELOAD uftrace record -d u "./jm-$b" $mode >/dev/null 2>&1
		uftrace replay -d u --no-pager 2>/dev/null | python3 "$TREE" uftrace --drop "$JMP" >u.tree
		"$KTRACE" kd -c k | python3 "$TREE" ktrace --drop "$JMP" >k.tree
		is "$(cat k.tree)" "$(cat u.tree)" "longjmp $mode $b: call tree as uftrace's (library calls too)"
		[ -s u.tree ] || ok 1 "longjmp $mode $b: uftrace recorded something"

		KTRACE_LIBCALL=0 "$KTRACE" record -q -o k0 "./jm-$b" $mode >k0.out 2>&1
		echo "exit $?" >>k0.out
		is "$(cat k0.out)" "$(cat plain.out)" "longjmp $mode $b, no library calls: output and exit status unchanged"
		"$KTRACE" kd -c k0 | python3 "$TREE" ktrace >k0.tree
		is "$(cat k0.tree)" "$(cat log.tree)" "longjmp $mode $b, no library calls: call tree as the program's log"
	done
done

# the abandoned frames are reported unfinished, once each
rm -rf k
"$KTRACE" record -q -o k ./jm-inst-O0 3 >/dev/null 2>&1
is "$("$KTRACE" kd --format=csv k | python3 -c '
import csv, sys
print(" ".join("%s:%s/%s" % (r["name"], r["count"], r["unfinished"])
               for r in sorted(csv.DictReader(sys.stdin), key=lambda r: r["name"])
               if r["name"] in ("foo", "foo2", "foo3", "bar", "main")))')" \
	"bar:1/0 foo:1/1 foo2:1/1 foo3:1/1 main:1/0" "longjmp 3: foo, foo2, foo3 unfinished once each; bar and main finished"

done_testing
