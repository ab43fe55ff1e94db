#!/bin/sh
# tests/kft_patch.sh - the function tracer on patchable builds, patched at
# program start (lib/kft_patch.c; x86-64): -fpatchable-function-entry=5,
# =7 (N > 5), with -fcf-protection (the NOPs after endbr64), and -pg
# -mfentry -mnop-mcount -mrecord-mcount (a 5-byte NOP, sites in
# __mcount_loc), and record's one-line account of them (cli/record_detect.c).
#
# The shape of tests/kft_pg.sh: tests/kft/calltree.c (threads, signal
# handler, longjmp, fork, exit inside calls, recursion), tests/kft/pgtail.c
# (tail calls), tests/kft/cxx.cc (a C++ exception through traced frames)
# and a fork+exec program, each built -finstrument-functions and
# patchable.  Per-function call counts (kd --format=csv) must equal the
# answer written here from the source, and uftrace's (`uftrace record
# --no-libcall -P .`, its dynamic patching of the same binary); call
# paths (export --format=folded) must equal the -finstrument-functions
# build's; output and exit status must not change.  Also: `record -F f`
# patches f alone (the program reads its own functions' first bytes: only
# f's became a call, e8), a listed site that is not a NOP is skipped and
# counted, M > 0 and N < 5 are refused and counted, a patchable shared
# library is patched, and a patchable program runs untouched without a run.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
# the program's own calls (library calls of patchable builds: tests/kft_plt.sh)
KTRACE_LIBCALL=0
export KTRACE_LIBCALL

FLAVOURS="patch patch7 cet nop"
# build FLAVOUR OUT SRC [CC]: compile and link SRC for one patchable flavour
build() {
	c=${4:-cc}
	case "$1" in
	patch) $c -O1 -g -fpatchable-function-entry=5 -pthread -o "$2" "$3" ;;
	patch7) $c -O1 -g -fpatchable-function-entry=7 -pthread -o "$2" "$3" ;;
	cet) $c -O1 -g -fcf-protection=full -fpatchable-function-entry=5 -pthread -o "$2" "$3" ;;
	# -mnop-mcount has no PIC form; linked without -pg (no gmon.out)
	nop) $c -O1 -g -fno-pie -pg -mfentry -mnop-mcount -mrecord-mcount -pthread -c -o "$2.o" "$3" &&
		$c -no-pie -pthread -o "$2" "$2.o" ;;
	esac
}

CT="$KTRACE_SRC/tests/kft/calltree.c"
cc -O1 -g -finstrument-functions -pthread -o ct-inst "$CT" || exit 1
for b in $FLAVOURS; do build "$b" "ct-$b" "$CT" || exit 1; done
is "$(objdump -d ct-cet | awk '/<fast>:/,/^$/' | sed -n '2,3p' | grep -c 'endbr64\|nop')" 2 \
	"the -fcf-protection build's fast() begins with endbr64 then the NOPs"

counts() { kd_counts "$@"; }
ucounts() { uftrace_counts "$@"; }
paths() {
	"$KTRACE" export --format=folded -o - "$1" | sed 's/ [0-9]*$//; s/^[^;]*;//' | sort -u
}
want() { calltree_want "$1"; }

for mode in tree "threads 4" signal longjmp fork exit "recurse 50"; do
	want "$mode" >want
	for b in inst $FLAVOURS; do
		rm -rf "tr-$b"
		# shellcheck disable=SC2086
		"$KTRACE" record -q -o "tr-$b" ./ct-$b $mode >"out-$b" 2>"err-$b"
		echo "exit $?" >>"out-$b"
		counts "tr-$b" >"cnt-$b"
		paths "tr-$b" >"paths-$b"
	done
	is "$(cat cnt-inst)" "$(cat want)" "$mode: -finstrument-functions counts as the source says"
	for b in $FLAVOURS; do
		is "$(cat "cnt-$b")" "$(cat want)" "$mode: $b counts as the source says"
		is "$(cat "out-$b")" "$(cat out-inst)" "$mode: $b output and exit status unchanged"
		is "$(cat "paths-$b")" "$(cat paths-inst)" "$mode: $b call paths as -finstrument-functions"
		is "$(cat "err-$b")" "" "$mode: $b nothing on stderr"
		[ "$b" = patch ] || [ "$b" = nop ] || continue
		rm -rf "u-$b"
		# shellcheck disable=SC2086
		env -u LD_PRELOAD uftrace record --no-libcall -P . -d "u-$b" ./ct-$b $mode >/dev/null 2>&1
		ucounts "u-$b" >"ucnt-$b"
		cp want "want-$b"
		is "$(cat "ucnt-$b")" "$(cat "want-$b")" "$mode: uftrace -P . on the $b binary counts the same"
	done
done
nsites=$(( 0x$(objdump -h ct-patch | awk '/__patchable_function_entries/ { print $3 }') / 8 ))
is "$(cat tr-patch/kft-patch)" "$(printf 'sites: %s\npatched: %s\nnot selected: 0\nnot a nop: 0\nnot at a function entry: 0\nfailed: 0' "$nsites" "$nsites")" \
	"kft-patch: every site of the section patched (count from objdump)"

# clang's -fpatchable-function-entry=5
build patch ct-clang "$CT" clang || exit 1
for mode in tree "threads 4" longjmp "recurse 50"; do
	rm -rf tr-clang
	# shellcheck disable=SC2086
	"$KTRACE" record -q -o tr-clang ./ct-clang $mode >/dev/null 2>&1
	is "$?" 0 "clang patch $mode: exit 0"
	is "$(counts tr-clang)" "$(want "$mode")" "clang patch $mode: counts as the source says"
done

# sigstorm: handlers that may interrupt the hooks, each traced or counted missed
for b in patch nop; do
	rm -rf "tr-$b" made
	"$KTRACE" record -q -o "tr-$b" "./ct-$b" sigstorm 300 >/dev/null 2>&1
	is "$?" 0 "sigstorm: $b exits 0"
	is "$(cat made 2>/dev/null)" 300 "sigstorm: $b every handler ran"
done

# tail calls at -O2 (jumps from hop to leaf in the patchable build)
PT="$KTRACE_SRC/tests/kft/pgtail.c"
cc -O2 -g -finstrument-functions -o pt-inst "$PT" || exit 1
cc -O2 -g -fpatchable-function-entry=5 -o pt-patch "$PT" || exit 1
is "$(objdump -d --no-show-raw-insn pt-patch | awk '/<hop>:/,/^$/' | grep -c 'jmp .*<leaf>')" 1 \
	"pgtail: the patchable build's hop() jumps to leaf() (a tail call)"
for b in inst patch; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./pt-$b" >"out-$b" 2>&1
	echo "exit $?" >>"out-$b"
	"$KTRACE" kd --format=csv "tr-$b" | cut -d, -f1,2,8 | sort >"cnt-$b"
	paths "tr-$b" >"paths-$b"
done
is "$(cat cnt-inst)" "$(printf 'hop,3,0\nleaf,3,0\nmain,1,0\nname,count,unfinished\nwalk,21,0')" \
	"pgtail: -finstrument-functions counts as the source says"
is "$(cat out-patch)" "$(cat out-inst)" "pgtail: patch output unchanged"
is "$(cat cnt-patch)" "$(cat cnt-inst)" "pgtail: patch counts as -finstrument-functions, none unfinished"
is "$(cat paths-patch)" "$(cat paths-inst)" "pgtail: patch call paths as -finstrument-functions"
env -u LD_PRELOAD uftrace record --no-libcall -P . -d u-pt ./pt-patch >/dev/null 2>&1
is "$(ucounts u-pt)" "$(printf 'hop 3\nleaf 3\nmain 1\nwalk 21')" "pgtail: uftrace -P . on the patch binary counts the same"

# fork + exec: the exec'd image is patched again by its own constructor
cp "$KTRACE_SRC/tests/kft/forkexec.c" fe.c # fork + exec
cc -O1 -finstrument-functions -o fe-inst fe.c || exit 1
build patch fe-patch fe.c || exit 1
for b in inst patch; do
	mkdir "fe-$b.d" && cd "fe-$b.d" || exit 1
	"$KTRACE" record -q -o tr "../fe-$b" >out 2>&1
	echo "exit $?" >>out
	"$KTRACE" kd --format=csv tr | cut -d, -f1,2,8 | sort >cnt
	"$KTRACE" kd --format=csv tr.exec-*-1 | cut -d, -f1,2,8 | sort >cnt-exec
	cd .. || exit 1
done
is "$(cat fe-inst.d/cnt fe-inst.d/cnt-exec | tr '\n' ' ')" \
	"child_side,1,1 leaf,2,0 main,1,0 name,count,unfinished leaf,2,0 main,1,0 name,count,unfinished " \
	"fork+exec: -finstrument-functions: parent and child, the new image apart"
is "$(cat fe-patch.d/out)" "$(cat fe-inst.d/out)" "fork+exec: patch output unchanged"
is "$(cat fe-patch.d/cnt)" "$(cat fe-inst.d/cnt)" "fork+exec: patch counts as -finstrument-functions"
is "$(cat fe-patch.d/cnt-exec)" "$(cat fe-inst.d/cnt-exec)" "fork+exec: patch exec'd image's counts as -finstrument-functions"

# C++: an exception thrown through traced frames and caught
CX="$KTRACE_SRC/tests/kft/cxx.cc"
g++ -O1 -g -finstrument-functions -I"$KTRACE_SRC/include" -o cxx-inst "$CX" || exit 1
g++ -O1 -g -fpatchable-function-entry=5 -I"$KTRACE_SRC/include" -o cxx-patch "$CX" || exit 1
KEEP='^(main|thrower|geo::Rect::area|total)'
for b in inst patch; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./cxx-$b" >"out-$b" 2>"err-$b"
	echo "exit $?" >>"out-$b"
	"$KTRACE" kd --format=csv "tr-$b" | cut -d, -f1,2 | grep -E "$KEEP" | sort >"cnt-$b"
done
like out-inst "caught 1" "cxx: -finstrument-functions build catches"
is "$(cat out-patch)" "$(cat out-inst)" "cxx: patch output (exception caught) and exit status unchanged"
is "$(cat cnt-patch)" "$(cat cnt-inst)" "cxx: patch counts of main, thrower, area, total as -finstrument-functions"

# -F one function: only it is patched.  The program prints its functions'
# first bytes (e8: a call written there, 90: the NOP left alone).
cat >sel.c <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int alpha(int x) { return x + 1; }
__attribute__((noinline)) int beta(int x) { return alpha(x) * 2; }
__attribute__((noinline)) int gamma_(int x) { return beta(x) + alpha(x); }
int main(void)
{
	int s = 0;

	for (int i = 0; i < 5; i++)
		s += gamma_(i);
	printf("%d %02x %02x %02x %02x\n", s, *(unsigned char *)alpha, *(unsigned char *)beta,
	       *(unsigned char *)gamma_, *(unsigned char *)main);
	return 0;
}
EOF
build patch sel sel.c || exit 1
./sel >out-plain
rm -rf tr
"$KTRACE" record -q -F beta -o tr ./sel >out 2>err
is "$(cat out-plain)" "45 90 90 90 90" "sel: untraced, every entry is its NOP"
is "$(cat out)" "45 90 e8 90 90" "-F beta: beta's entry became a call, the others' bytes are unchanged"
is "$(cat err)" "" "-F beta: nothing on stderr"
is "$(counts tr)" "beta 5" "-F beta: only beta is traced (5 calls)"
is "$(sed -n '1,3p' tr/kft-patch | tr '\n' ' ')" "sites: 4 patched: 1 not selected: 3 " \
	"-F beta: kft-patch: 4 sites, 1 patched, 3 not selected"
rm -rf tr
"$KTRACE" record -q -F 'beta' -F alpha -o tr ./sel >out 2>&1
is "$(cat out)" "45 e8 e8 90 90" "-F beta -F alpha: both patched, gamma_ and main not"
is "$(counts tr)" "$(printf 'alpha 10\nbeta 5')" "-F beta -F alpha: counts (alpha: 5 from beta, 5 from gamma_)"

# a second record into the same directory: kft-patch is one of the trace's files
"$KTRACE" record -q -F beta -o tr ./sel >out 2>err
is "$? $(cat out) $(cat err)" "0 45 90 e8 90 90 " "record again into the directory holding kft-patch: accepted"

# a trigger's function is patched too (it must enter the hooks to fire)
printf 'trigger start entry gamma_\nfilter funclist beta fend\n' >trig.kft
rm -rf tr
"$KTRACE" record -q --config trig.kft -o tr ./sel >out 2>&1
is "$(cat out)" "45 90 e8 e8 90" "funclist beta + trigger on gamma_: both patched, alpha and main not"
is "$(counts tr)" "beta 5" "funclist beta + trigger on gamma_: the run starts, beta's 5 calls kept"

# a listed site that is not a NOP: skipped, counted, said on stderr
cat >odd.c <<'EOF'
#include <stdio.h>
/* odd(): listed as a patchable entry, but it begins with a real instruction */
__asm__(".text\n.globl odd\n.type odd,@function\nodd:\n\tmovl $7, %eax\n\tret\n.size odd, .-odd\n"
	".section __patchable_function_entries,\"awo\",@progbits,odd\n\t.quad odd\n.text\n");
int odd(void);
__attribute__((noinline)) int even(int x) { return x * 2; }
int main(void)
{
	int s = 0;

	for (int i = 0; i < 3; i++)
		s += odd() + even(i);
	printf("%d\n", s);
	return 0;
}
EOF
build patch odd odd.c || exit 1
rm -rf tr
"$KTRACE" record -o tr ./odd >out 2>err
is "$(cat out)" 27 "odd: output unchanged"
is "$(cat tr/kft-patch)" "$(printf 'sites: 3\npatched: 2\nnot selected: 0\nnot a nop: 1\nnot at a function entry: 0\nfailed: 0')" \
	"odd: kft-patch: 3 sites, 2 patched, 1 not a NOP"
like err "^ktrace record: ./odd: patchable entries in 2 functions \\(-fpatchable-function-entry\\): patched at start, only those selected by -F/funclist .*; 1 sites left alone \\(1 not a 5-byte NOP, 0 not at a function entry\\)" \
	"odd: record says 2 patchable, 1 left alone"
like err "^ktrace: patchable entries: 1 of 3 sites not patched \\(1 not a 5-byte NOP, 0 not at a function entry, 0 failed\\)" \
	"odd: the run says 1 site not patched"
is "$(counts tr)" "$(printf 'even 3\nmain 1')" "odd: even and main traced, odd not"

# refused: N,M with M > 0 (the NOPs before the entry), N < 5
cc -O1 -fpatchable-function-entry=7,2 -o p72 sel.c || exit 1
cc -O1 -fpatchable-function-entry=3 -o p3 sel.c || exit 1
rm -rf tr
"$KTRACE" record -o tr ./p72 >out 2>err
is "$(cat out)" "$(./p72)" "7,2: output unchanged"
like err "^ktrace record: ./p72: built with -fpatchable-function-entry=N,M with M > 0 .*rebuild with -fpatchable-function-entry=5" \
	"7,2: record refuses, says which flag works"
is "$(sed -n '1,2p;5p' tr/kft-patch | tr '\n' ' ')" "sites: 4 patched: 0 not at a function entry: 4 " \
	"7,2: kft-patch: none patched, 4 not at a function entry"
rm -rf tr
"$KTRACE" record -o tr ./p3 >out 2>err
like err "^ktrace record: ./p3: built with -fpatchable-function-entry=N with N < 5 .*rebuild with -fpatchable-function-entry=5" \
	"N=3: record refuses, says which flag works"
is "$(sed -n '1,2p;4p' tr/kft-patch | tr '\n' ' ')" "sites: 4 patched: 0 not a nop: 4 " \
	"N=3: kft-patch: none patched, 4 not a NOP"

# another architecture: the sel binary with e_machine set to AArch64 (183)
cp sel sel-arm64
printf '\267\000' | env -u LD_PRELOAD dd of=sel-arm64 bs=1 seek=18 conv=notrunc 2>/dev/null
is "$(od -An -tu2 -j18 -N2 sel-arm64 | tr -d ' ')" 183 "sel-arm64: e_machine is EM_AARCH64"
rm -rf tr
"$KTRACE" record -o tr ./sel-arm64 >/dev/null 2>err
like err "^ktrace record: ./sel-arm64: built with patchable function entries, but patching them is supported on x86-64 only: rebuild with -finstrument-functions" \
	"another architecture: record refuses, names the flag"

# record's line for the flavours
for b in patch nop; do
	rm -rf tr
	"$KTRACE" record -o tr "./ct-$b" tree 2>err >/dev/null
	head -n 1 err >"line-$b"
done
like line-patch "^ktrace record: ./ct-patch: patchable entries in [0-9]* functions \\(-fpatchable-function-entry\\): patched at start, only those selected by -F/funclist \\(all without one\\)$" \
	"record says: -fpatchable-function-entry, patched at start"
like line-nop "^ktrace record: ./ct-nop: patchable entries in [0-9]* functions \\(-mnop-mcount -mrecord-mcount\\): patched at start" \
	"record says: -mnop-mcount -mrecord-mcount, patched at start"

# a patchable shared library, loaded at start, is patched too
cat >libp.c <<'EOF'
__attribute__((noinline)) int lib_work(int x) { return x * 3; }
EOF
cat >usep.c <<'EOF'
#include <stdio.h>
int lib_work(int);
int main(void) { int s = 0; for (int i = 0; i < 7; i++) s += lib_work(i); printf("%d\n", s); return 0; }
EOF
cc -O1 -fPIC -shared -fpatchable-function-entry=5 -o libp.so libp.c || exit 1
cc -O1 -o usep usep.c -L. -lp -Wl,-rpath,"$T" || exit 1
rm -rf tr
"$KTRACE" record -q -o tr ./usep >out 2>&1
is "$(cat out)" 63 "shared library: output unchanged"
is "$(counts tr)" "$(printf 'lib_work 7\nmain 1')" \
	"shared library: its patchable function traced (7 calls); the plain program's main patched at run time"

# no run: a patchable program with libktrace preloaded is left as it is
LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$KTRACE_BUILD/libktrace.so.0" ./sel >out 2>&1
is "$(cat out)" "45 90 90 90 90" "libktrace preloaded without a run: nothing patched"

done_testing
