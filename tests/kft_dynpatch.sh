#!/bin/sh
# tests/kft_dynpatch.sh - programs built without function hooks, traced by
# patching their functions' entries at start (lib/kft_dynpatch.c,
# lib/kft_reloc.c; x86-64): `ktrace record -- PROG` with no flag, -P, -U,
# and record's one-line account of them (cli/record_patch.c).
#
# tests/kft/relocs.c has one function per instruction form the relocator
# moves or refuses: counts must be the program's own (each called CALLS
# times), the refused ones absent and listed in DIR/kft-dynpatch with
# their reason, the output unchanged.  tests/kft/calltree.c (threads,
# signal handler, longjmp, fork, exit inside calls, recursion),
# tests/kft/pgtail.c (tail calls at -O2), tests/kft/cxx.cc (a C++
# exception) and tests/kft/forkexec.c, built plain: counts must equal
# the answer written from the source and uftrace's (`uftrace record
# --no-libcall -P .` on the same binary), call paths the
# -finstrument-functions build's, output and exit status unchanged.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
# the program's own calls (library calls: tests/kft_plt.sh)
KTRACE_LIBCALL=0
export KTRACE_LIBCALL

counts() { kd_counts "$@"; }
ucounts() { uftrace_counts "$@"; }
paths() {
	"$KTRACE" export --format=folded -o - "$1" | sed 's/ [0-9]*$//; s/^[^;]*;//' | sort -u
}

# ---- every instruction form (tests/kft/relocs.c) ----
cc -O1 -g -o relocs "$KTRACE_SRC/tests/kft/relocs.c" || exit 1
./relocs 3 >out-plain
rm -rf tr
"$KTRACE" record -o tr ./relocs 3 >out 2>err
is "$?" 0 "relocs: exit 0"
is "$(cat out)" "$(cat out-plain)" "relocs: output unchanged"
# 13 forms moved + helper + main; 4 refused
like err "^ktrace record: ./relocs: built without function hooks: 15 functions patched at start, 4 left alone \\(1 shorter than 5 bytes, 1 a call followed by other moved instructions, 1 an instruction that cannot be moved, 1 a jump into the first bytes\\)$" \
	"relocs: record's line counts 15 patched, 4 left alone, by reason"
is "$(counts tr)" "$(printf '%s\n' 'call_first 3' 'cet_frame 3' 'helper 6' 'jcc32 3' 'jcc8 3' 'jmp32 3' \
	'jmp8 3' 'lea_rip 3' 'loop_top 6' 'main 1' 'push_sub 6' 'rip_load 3' 'rip_store 3' 'sse_rip 3' \
	'tail_jmp 3')" \
	"relocs: every moved form counted as often as main() calls it (push_sub: 3 + 3 through tail_jmp; helper: 3 from call_first, 3 from call_reg; loop_top: 1 + 2 + 3 passes)"
is "$("$KTRACE" export --format=folded -o - tr | grep -c 'call_first;helper')" 1 \
	"relocs: helper nested in call_first (moved as push + jmp, it returns into call_first)"
is "$(grep -c '^skipped:' tr/kft-dynpatch)" 4 "relocs: kft-dynpatch lists the 4 left alone"
for f in "call_reg: a call followed by other moved instructions" \
	"jump_mid: a jump into the first bytes" "tiny: shorter than 5 bytes" \
	"jrcxz_first: an instruction that cannot be moved"; do
	is "$(grep -c "^skipped: $f\$" tr/kft-dynpatch)" 1 "relocs: kft-dynpatch: $f"
done
is "$(sed -n '1,3p' tr/kft-dynpatch | tr '\n' ' ')" "selected: 19 patched: 15 failed: 0 " \
	"relocs: kft-dynpatch: 19 selected, 15 patched"
rm -rf u-relocs
env -u LD_PRELOAD uftrace record --no-libcall -P . -d u-relocs ./relocs 3 >/dev/null 2>&1
for f in call_first cet_frame helper jcc32 jcc8 jmp32 jmp8 lea_rip loop_top push_sub rip_load rip_store \
	sse_rip; do
	u=$(ucounts u-relocs | awk -v f="$f" '$1 == f { print $2 }')
	[ -n "$u" ] || continue # a form uftrace does not patch
	is "$(counts tr | awk -v f="$f" '$1 == f { print $2 }')" "$u" "relocs: $f counted as uftrace -P . counts it"
done

# the same, not position-independent (-fno-pie -no-pie: fixed addresses)
cc -O1 -g -fno-pie -no-pie -o relocs-nopie "$KTRACE_SRC/tests/kft/relocs.c" || exit 1
rm -rf tr-nopie
"$KTRACE" record -q -o tr-nopie ./relocs-nopie 3 >out 2>err
is "$? $(cat err)" "0 " "relocs -no-pie: exit 0, nothing on stderr"
is "$(cat out)" "$(cat out-plain)" "relocs -no-pie: output unchanged"
is "$(counts tr-nopie)" "$(counts tr)" "relocs -no-pie: the same counts as the PIE build"

# stripped: no function to patch, its library calls traced (printf: 3 lines + "sum")
strip -o relocs-stripped relocs || exit 1
rm -rf tr-stripped
KTRACE_LIBCALL=1 "$KTRACE" record -o tr-stripped ./relocs-stripped 3 >out 2>err
is "$?" 0 "relocs stripped: exit 0"
is "$(cat out)" "$(cat out-plain)" "relocs stripped: output unchanged"
like err "^ktrace record: ./relocs-stripped: built without function hooks, and its symbol tables name no function to patch .* \\+ [0-9]+ library functions through the PLT$" \
	"relocs stripped: record says nothing can be patched, library calls are traced"
is "$(counts tr-stripped printf)" "printf 4" "relocs stripped: printf counted as the program called it"

# stripped, with its debug file (objcopy --only-keep-debug, found by its
# .gnu_debuglink in .debug/ beside the binary, as gdb and elfutils look)
mkdir -p dbg/.debug || exit 1
objcopy --only-keep-debug relocs dbg/.debug/relocs.debug &&
	strip -o dbg/relocs relocs && objcopy --add-gnu-debuglink=dbg/.debug/relocs.debug dbg/relocs || exit 1
rm -rf tr-dbg
"$KTRACE" record -o tr-dbg dbg/relocs 3 >out 2>err
is "$?" 0 "relocs stripped + debug file: exit 0"
is "$(cat out)" "$(cat out-plain)" "relocs stripped + debug file: output unchanged"
like err "^ktrace record: dbg/relocs: built without function hooks: 15 functions patched at start, 4 left alone " \
	"relocs stripped + debug file: record plans the 15 of the unstripped build from the debug file's .symtab"
is "$(counts tr-dbg)" "$(counts tr)" "relocs stripped + debug file: the unstripped build's functions, names and counts"

# a local function of Debian's stripped libc, named only in its detached
# debug file (libc6-dbg: /usr/lib/debug/.build-id/XX/YYYY.debug)
cat >lc.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	char buf[32];
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100, sum = 0;
	int calls = 1; /* strtol(argv[1]) */

	for (long i = 0; i < n; i++, calls++) {
		snprintf(buf, sizeof(buf), "%ld", i);
		sum += strtol(buf, NULL, 10);
	}
	printf("%d strtol calls, sum %ld\n", calls, sum);
	return 0;
}
EOF
cc -O1 -o lc lc.c || exit 1
libc=$(ldd ./lc | awk '/libc\.so/ { print $3 }')
id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
[ -f "/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" ]
ok $? "libc's debug file is installed (libc6-dbg, scripts/deps.sh) for $libc, build id $id"
! nm -D "$libc" | grep -q '____strtol_l_internal'
ok $? "libc's .dynsym does not name ____strtol_l_internal (a local function)"
rm -rf tr
"$KTRACE" record -q -P '____strtol_l_internal@libc.so.6' -U . --no-libcall -o tr ./lc 250 >out 2>err
is "$? $(cat err)" "0 " "libc debug file: exit 0, nothing on stderr"
is "$(cat out)" "251 strtol calls, sum 31125" "libc debug file: output unchanged"
is "$(counts tr | awk '$1 ~ /^____strtol+_l_internal$/ { print $2 }')" \
	"$(awk '{ print $1 }' out)" "libc debug file: ____strtol_l_internal patched and counted once per strtol() the program counted"

# ---- a shared library's functions: -P NAME@LIB ----
cat >z.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <zlib.h>
int main(void)
{
	unsigned char src[4096], dst[8192], back[4096];
	int made = 0;

	memset(src, 'k', sizeof(src));
	for (int i = 0; i < 6; i++) {
		uLongf n = sizeof(dst), m = sizeof(back);

		src[i] = (unsigned char)i;
		if (compress2(dst, &n, src, sizeof(src), 6) != Z_OK ||
		    uncompress(back, &m, dst, n) != Z_OK || memcmp(src, back, sizeof(src)))
			return 1;
		made++;
	}
	printf("compress2 %d uncompress %d\n", made, made);
	return 0;
}
EOF
cc -O1 -o z z.c -lz || exit 1
./z >out-plain
rm -rf tr
KTRACE_LIBCALL=1 "$KTRACE" record -P 'compress2@libz' -P 'uncompress@libz.so.1' -P 'deflateEnd@libz' \
	-P 'inflateEnd@libz' -U . -o tr ./z >out 2>err
is "$?" 0 "libz: exit 0"
is "$(cat out)" "$(cat out-plain)" "libz: output unchanged"
is "$(counts tr 'compress2 uncompress deflateEnd inflateEnd')" \
	"$(printf 'compress2 6\ndeflateEnd 6\ninflateEnd 6\nuncompress 6')" \
	"libz: -P NAME@libz: each counted as the program made its calls (a compress2 ends one deflate stream, an uncompress one inflate stream), not a second time as a library call"
is "$("$KTRACE" export --format=folded -o - tr | grep -c 'main;compress2;deflateEnd')" 0 \
	"libz: -U .: main not patched"
is "$("$KTRACE" export --format=folded -o - tr | grep -c '^[^;]*;compress2;deflateEnd ')" 1 \
	"libz: deflateEnd nested in compress2 (a call inside libz, patched)"
is "$(grep -c '^patched: 4$' tr/kft-dynpatch)" 1 "libz: kft-dynpatch: 4 functions patched"
rm -rf tr
"$KTRACE" record -q --lib libz -U . --no-libcall -o tr ./z >out 2>err
is "$?:$(cat out)" "0:$(cat out-plain)" "--lib libz: exit 0, output unchanged"
zlib=$(ldd ./z | awk '/libz\.so/ { print $3 }')
is "$(sed -n 's/^selected: //p' tr/kft-dynpatch)" "$(nm -D --defined-only "$zlib" | grep -c ' T ')" \
	"--lib libz: every function libz exports is selected (nm -D counts them)"
is "$(counts tr 'compress2 uncompress deflate inflate')" \
	"$(printf 'compress2 6\ndeflate 6\ndeflateEnd 6\ndeflateInit2_ 6\ndeflateInit_ 6\ndeflateReset 6\ndeflateResetKeep 6\ninflate 6\ninflateEnd 6\ninflateInit2_ 6\ninflateInit_ 6\ninflateReset 6\ninflateReset2 6\ninflateResetKeep 6\nuncompress 6\nuncompress2 6')" \
	"--lib libz: compress2 and uncompress and the deflate and inflate calls inside them, once per round"
"$KTRACE" record -q --lib 'libz@x' -o tr ./z >out 2>err
is "$?" 2 "--lib with an @: usage error"
rm -rf tr
"$KTRACE" record -q -P 'nosuchfunction@libz' -U . --no-libcall -o tr ./z >out 2>err
is "$?:$(cat out)" "1:$(cat out-plain)" "libz: a pattern that matches nothing: the program runs as it is, record exits 1"
like err "^ktrace record: ./z was not traced: no function was patched \\(-P/-U chose none" \
	"libz: ... and says no function was patched"

# ---- -P and -U: which functions are patched ----
cat >sel.c <<'EOF'
#include <stdio.h>
volatile int seen;
__attribute__((noinline)) int alpha(int x) { seen = x; return x + 1; }
__attribute__((noinline)) int beta(int x) { return alpha(x) * 2 + x; }
__attribute__((noinline)) int gamma_(int x) { return beta(x) + alpha(x) + x; }
int main(void)
{
	int s = 0;

	for (int i = 0; i < 5; i++)
		s += gamma_(i);
	/* the first byte of each: e9 where a jump was written */
	printf("%d %02x %02x %02x\n", s, *(unsigned char *)alpha, *(unsigned char *)beta,
	       *(unsigned char *)gamma_);
	return 0;
}
EOF
cc -O1 -g -o sel sel.c || exit 1
./sel >out-plain
rm -rf tr
"$KTRACE" record -q -P beta -o tr ./sel >out 2>err
is "$(cut -d' ' -f1 out)" "$(cut -d' ' -f1 out-plain)" "-P beta: output unchanged"
is "$(cut -d' ' -f3 out)" e9 "-P beta: beta's entry became a jump"
is "$(cut -d' ' -f2,4 out)" "$(cut -d' ' -f2,4 out-plain)" "-P beta: alpha's and gamma_'s bytes unchanged"
is "$(counts tr)" "beta 5" "-P beta: only beta traced (5 calls)"
rm -rf tr
"$KTRACE" record -q -U alpha -U main -o tr ./sel >out 2>err
is "$(counts tr)" "$(printf 'beta 5\ngamma_ 5')" "-U alpha -U main: every other function traced"
rm -rf tr
"$KTRACE" record -q -P 'gam*' -P alpha -o tr ./sel >out 2>err
is "$(counts tr)" "$(printf 'alpha 10\ngamma_ 5')" "-P 'gam*' -P alpha: the pattern and the name"
rm -rf tr
"$KTRACE" record -q -F alpha -o tr ./sel >out 2>err
is "$(cut -d' ' -f2,3,4 out)" "e9 $(cut -d' ' -f3,4 out-plain)" "-F alpha: only alpha patched (funclist)"
is "$(counts tr)" "alpha 10" "-F alpha: alpha's 10 calls"
"$KTRACE" record -q -P 'a;b' -o tr ./sel >out 2>err
is "$? $(cat err)" "2 ktrace record: option '-P': 'a;b': a pattern cannot hold ';'" "-P 'a;b': a usage error"
"$KTRACE" record -q -P 'x@' -o tr ./sel >out 2>err
is "$?" 2 "-P 'x@': a usage error (empty library name)"

# ---- the shapes of tests/kft_patch.sh, built plain ----
CT="$KTRACE_SRC/tests/kft/calltree.c"
cc -O1 -g -finstrument-functions -pthread -o ct-inst "$CT" || exit 1
cc -O1 -g -pthread -o ct-O1 "$CT" || exit 1
cc -O2 -g -pthread -o ct-O2 "$CT" || exit 1
want() { calltree_want "$1"; }
for mode in tree "threads 4" signal longjmp fork exit "recurse 50"; do
	want "$mode" >want
	for b in inst O1 O2; do
		rm -rf "tr-$b"
		# shellcheck disable=SC2086
		"$KTRACE" record -q -o "tr-$b" ./ct-$b $mode >"out-$b" 2>"err-$b"
		echo "exit $?" >>"out-$b"
		counts "tr-$b" >"cnt-$b"
		paths "tr-$b" >"paths-$b"
	done
	is "$(cat cnt-inst)" "$(cat want)" "$mode: -finstrument-functions counts as the source says"
	for b in O1 O2; do
		is "$(cat "out-$b")" "$(cat out-inst)" "$mode: plain -$b output and exit status unchanged"
		is "$(cat "err-$b")" "" "$mode: plain -$b nothing on stderr"
		rm -rf "u-$b"
		# shellcheck disable=SC2086
		env -u LD_PRELOAD uftrace record --no-libcall -P . -d "u-$b" ./ct-$b $mode >/dev/null 2>&1
		ucounts "u-$b" >"ucnt-$b"
		is "$(cat "cnt-$b")" "$(cat "ucnt-$b")" "$mode: plain -$b counts equal uftrace -P .'s"
		[ "$b" = O1 ] || continue # -O2 inlines and clones differently from the -finstrument-functions build
		# spin_us is no_instrument_function: in the -finstrument-functions build only
		is "$(grep -v '^spin_us ' "cnt-$b")" "$(cat want)" "$mode: plain -$b counts as the source says"
		is "$(grep -v 'spin_us$' "paths-$b")" "$(cat paths-inst)" \
			"$mode: plain -$b call paths as -finstrument-functions"
	done
done

# tail calls at -O2
PT="$KTRACE_SRC/tests/kft/pgtail.c"
cc -O2 -g -finstrument-functions -o pt-inst "$PT" || exit 1
cc -O2 -g -o pt-plain "$PT" || exit 1
is "$(objdump -d --no-show-raw-insn pt-plain | awk '/<hop>:/,/^$/' | grep -c 'jmp .*<leaf>')" 1 \
	"pgtail: the plain build's hop() jumps to leaf() (a tail call)"
for b in inst plain; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./pt-$b" >"out-$b" 2>&1
	echo "exit $?" >>"out-$b"
	"$KTRACE" kd --format=csv "tr-$b" | cut -d, -f1,2,8 | sort >"cnt-$b"
	paths "tr-$b" >"paths-$b"
done
is "$(cat out-plain)" "$(cat out-inst)" "pgtail: plain output unchanged"
is "$(cat cnt-plain)" "$(cat cnt-inst)" "pgtail: plain counts as -finstrument-functions, none unfinished"
is "$(cat paths-plain)" "$(cat paths-inst)" "pgtail: plain call paths as -finstrument-functions"

# fork + exec: the exec'd image is patched by its own constructor
cp "$KTRACE_SRC/tests/kft/forkexec.c" fe.c
cc -O1 -finstrument-functions -o fe-inst fe.c || exit 1
cc -O1 -o fe-plain fe.c || exit 1
for b in inst plain; do
	mkdir "fe-$b.d" && cd "fe-$b.d" || exit 1
	"$KTRACE" record -q -o tr "../fe-$b" >out 2>&1
	echo "exit $?" >>out
	"$KTRACE" kd --format=csv tr | cut -d, -f1,2,8 | sort >cnt
	"$KTRACE" kd --format=csv tr.exec-*-1 | cut -d, -f1,2,8 | sort >cnt-exec
	cd .. || exit 1
done
is "$(cat fe-plain.d/out)" "$(cat fe-inst.d/out)" "fork+exec: plain output unchanged"
is "$(cat fe-plain.d/cnt)" "$(cat fe-inst.d/cnt)" "fork+exec: plain counts as -finstrument-functions"
is "$(cat fe-plain.d/cnt-exec)" "$(cat fe-inst.d/cnt-exec)" "fork+exec: plain exec'd image's counts as -finstrument-functions"

# C++: an exception thrown through patched frames and caught
CX="$KTRACE_SRC/tests/kft/cxx.cc"
g++ -O1 -g -finstrument-functions -I"$KTRACE_SRC/include" -o cxx-inst "$CX" || exit 1
g++ -O1 -g -I"$KTRACE_SRC/include" -o cxx-plain "$CX" || exit 1
KEEP='^(main|thrower|geo::Rect::area|total)'
for b in inst plain; do
	rm -rf "tr-$b"
	"$KTRACE" record -q -o "tr-$b" "./cxx-$b" >"out-$b" 2>"err-$b"
	echo "exit $?" >>"out-$b"
	"$KTRACE" kd --format=csv "tr-$b" | cut -d, -f1,2 | grep -E "$KEEP" | sort >"cnt-$b"
done
like out-inst "caught 1" "cxx: -finstrument-functions build catches"
is "$(cat out-plain)" "$(cat out-inst)" "cxx: plain output (exception caught) and exit status unchanged"
is "$(cat cnt-plain)" "$(cat cnt-inst)" "cxx: plain counts of main, thrower, area, total as -finstrument-functions"

# a program with hooks is not patched again
rm -rf tr
"$KTRACE" record -o tr ./ct-inst tree >out 2>err
is "$(cat tr/kft-dynpatch 2>/dev/null | sed -n 2p)" "" "-finstrument-functions build: nothing patched (no kft-dynpatch)"
is "$(counts tr)" "$(want tree)" "-finstrument-functions build: counts unchanged"

done_testing
