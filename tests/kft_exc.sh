#!/bin/sh
# tests/kft_exc.sh - C++ exceptions (issue 25, item 10):
#  a) thrown through a cleanup landing pad and a function-local static's
#     guard (tests/kft/exc_cleanup.cc: A::A throws while g's static is
#     constructed; g's pad calls __cxa_guard_abort, h's runs D::~D and
#     _Unwind_Resume; f catches).  Before the fix, with -pg, the pads'
#     calls nested in the dead frames (`__cxa_guard_abort` inside `A::A`):
#     the -pg return stack found those entries dead, the shadow stack did
#     not hear of it;
#  b) thrown inside an instrumented shared library reached through the PLT
#     (tests/kft/exc_lib.cc): before the fix the next library call,
#     `YYY::YYY`, nested under the `XXX::XXX` library call the exception
#     had unwound (__cxa_begin_catch dropped its return-stack entry, not its
#     shadow frame).
# lib/kft_pg.c now tells the hooks whenever it drops dead entries
# (kft_hooks_pg_dead()).
#
# Builds: -finstrument-functions and -pg at -O0 and -O2, -pg -mfentry at
# -O2 (the library of b built the same way).  Call trees (thread, depth,
# function in entry order, tests/helpers/calltree.py; argument lists
# dropped from ktrace's names, uftrace prints none) must equal:
#  a) without library calls (KTRACE_LIBCALL=0): the program's own log;
#     with them: uftrace's (`uftrace record`, `uftrace replay`) of the
#     -finstrument-functions build at the same -O (uftrace 0.13 hangs on
#     the -pg builds, spinning; gcrt1's __monstartup and __cxa_atexit
#     left out);
#  b) with library calls: the program's own log, which logs each library
#     call it makes (uftrace is wrong here: it shows the last XXX::XXX
#     call without the library's own XXX::XXX level under it).
# The program's output and exit status are those of a run without tracing.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

command -v g++ >/dev/null 2>&1 || skip_all "no g++"
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
BUILDS=$KFT_BUILDS
noargs() { sed 's/(.*)$//'; }
for b in $BUILDS; do
	f=$(hook_flags "$b")
	# shellcheck disable=SC2086
	g++ -g $f -o "ec-$b" "$KTRACE_SRC/tests/kft/exc_cleanup.cc" || exit 1
	# shellcheck disable=SC2086
	g++ -g $f -fPIC -shared -DEXC_LIB -o "libexc-$b.so" "$KTRACE_SRC/tests/kft/exc_lib.cc" || exit 1
	# shellcheck disable=SC2086
	g++ -g $f -o "el-$b" "$KTRACE_SRC/tests/kft/exc_lib.cc" -L. "-lexc-$b" "-Wl,-rpath,$T" || exit 1
done

# run PROG NAME: record it (library calls on: k, off: k0); output checks
run() {
	"./$1" >plain.out 2>&1
	echo "exit $?" >>plain.out
	grep -v '^exit ' plain.out >log.tree
	rm -rf k k0
	"$KTRACE" record -q -o k "./$1" >k.out 2>k.err
	echo "exit $?" >>k.out
	is "$(cat k.out)" "$(cat plain.out)" "$2: output and exit status unchanged"
	is "$(cat k.err)" "" "$2: nothing on stderr"
	KTRACE_LIBCALL=0 "$KTRACE" record -q -o k0 "./$1" >k0.out 2>&1
	echo "exit $?" >>k0.out
	is "$(cat k0.out)" "$(cat plain.out)" "$2, no library calls: output and exit status unchanged"
}

for b in $BUILDS; do
	c="exception through cleanup pads $b"
	run "ec-$b" "$c"
	"$KTRACE" kd -c k0 | python3 "$TREE" ktrace | noargs >k0.tree
	is "$(cat k0.tree)" "$(cat log.tree)" "$c, no library calls: call tree as the program's log"
	# uftrace's tree of the -finstrument-functions build at this -O
	rm -rf u
	env -u LD_PRELOAD timeout 60 uftrace record -d u "./ec-inst-${b#*-}" >/dev/null 2>&1
	uftrace replay -d u --no-pager 2>/dev/null | python3 "$TREE" uftrace >u.tree
	[ -s u.tree ] || ok 1 "$c: uftrace recorded something"
	"$KTRACE" kd -c k | python3 "$TREE" ktrace --drop __monstartup,__cxa_atexit | noargs >k.tree
	is "$(cat k.tree)" "$(cat u.tree)" "$c: call tree as uftrace's (library calls too: __cxa_guard_abort in g)"
	case $b in
	inst-*) want="A::A:2/0 D::~D:2/0 f:2/0 g:2/0 h:2/0" ;;
	*) want="A::A:2/1 D::~D:2/0 f:2/0 g:2/1 h:2/1" ;; # the unwound calls' exits are not seen
	esac
	is "$("$KTRACE" kd --format=csv k | python3 -c '
import csv, re, sys
rows = [(re.sub(r"\(.*\)$", "", r["name"]), r) for r in csv.DictReader(sys.stdin)]
print(" ".join("%s:%s/%s" % (n, r["count"], r["unfinished"]) for n, r in sorted(rows, key=lambda x: x[0])
               if n in ("f", "h", "g", "A::A", "D::~D")))')" "$want" "$c: counts, unfinished only what the exception unwound"
done

for b in $BUILDS; do
	c="exception in a library $b"
	run "el-$b" "$c"
	"$KTRACE" kd -c k | python3 "$TREE" ktrace --drop puts,printf,__monstartup,__cxa_atexit | noargs >k.tree
	is "$(cat k.tree)" "$(cat log.tree)" "$c: call tree as the program's log (YYY::YYY at depth 1)"
done

done_testing
