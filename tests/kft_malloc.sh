#!/bin/sh
# tests/kft_malloc.sh - a program with a malloc of its own
# (tests/kft/ownmalloc.c, issue 25 item 5): libktrace's allocations use
# glibc's allocator itself (kt_malloc(), lib/util.c), its metadata is built
# without open_memstream() and the main thread's stack without
# pthread_getattr_np(), so the program's malloc, free and calloc see none of
# libktrace's own calls: the trace holds only the program's calls, and a
# calloc that would crash (GCC at -O2 makes it call itself) is never
# called.  Before: records of calloc/malloc/free from libktrace's start-up
# before main, and at -O2 with -finstrument-functions a crash before the
# tracer started (record: "never started the tracer", exit 1).
#
# Expected answers: uftrace 0.13's counts on the same binary, where uftrace
# runs it (it crashes on the -O2 -finstrument-functions build, for the same
# reason: there, the -pg -O2 build's uftrace counts, the same functions);
# and the program's output, the same as untraced; and the program's own
# malloc/free counts, the same as the untraced -finstrument-functions
# build's (a -pg build's untraced run has one more malloc: gmon's
# histogram, which ktrace's no-op __monstartup() never allocates).  Before,
# libc's allocations for libktrace (setenv() at start, fdopendir() when the
# trace directory was prepared) were counted as the program's: 4 malloc and
# 1 free more.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
KTRACE_LIBCALL=0 # the program's own calls, as uftrace --no-libcall
export KTRACE_LIBCALL

SRC="$KTRACE_SRC/tests/kft/ownmalloc.c"
counts() {
	"$KTRACE" kd --format=csv "$1" | awk -F, 'NR > 1 { print $1, $2 }' | sort | paste -sd' '
}
ucounts() {
	rm -rf u
	env -u LD_PRELOAD uftrace record --no-libcall -d u "$1" >/dev/null 2>&1 || return
	uftrace report -d u -f call --no-pager 2>/dev/null | tail -n +3 |
		awk '$2 !~ /^linux:/ { print $2, $1 }' | sort | paste -sd' '
}

# A sanitizer build of libktrace (make SAN=asan test) runs its hooks through
# the sanitizer's runtime, which calls malloc itself: in a program whose
# malloc is instrumented that recurses into the hooks, and kt_malloc() is
# malloc there by design (so that ASan checks libktrace's heap).  What this
# test checks is the plain build's; in a sanitizer build it says so.
if [ -n "${KTRACE_SAN:-}" ]; then
	echo "ok 1 # SKIP a program with its own instrumented malloc cannot run the $KTRACE_SAN build of libktrace (its runtime's malloc calls re-enter the hooks); make test runs these checks"
	tap_n=1
	set -- # nothing more for the own-malloc programs
	OWN_MALLOC_BUILDS=""
else
	OWN_MALLOC_BUILDS="O0 O2"
fi
for o in $OWN_MALLOC_BUILDS; do
	for f in inst:-finstrument-functions pg:-pg fentry:"-pg -mfentry"; do
		b=${f%%:*}-$o
		# shellcheck disable=SC2086
		cc -$o -g ${f#*:} -o "om-$b" "$SRC" || exit 1
	done
	want=$(ucounts "./om-pg-$o")
	plain=$("./om-pg-$o" | cut -d' ' -f1) # the sum
	# the program's own allocations, untraced, without -pg's gmon (whose
	# __monstartup() allocates its histogram; a no-op under ktrace)
	own=$("./om-inst-$o" | cut -d' ' -f2-)
	for b in inst-$o pg-$o fentry-$o; do
		rm -rf tr
		"$KTRACE" record -q -o tr "./om-$b" >out 2>err
		is "$?:$(cut -d' ' -f1 out)" "0:$plain" "$b: output and status as untraced"
		is "$(cut -d' ' -f2- out)" "$own" \
			"$b: the program's own malloc/free counts are those of the untraced -finstrument-functions build"
		is "$(counts tr)" "$want" "$b: only the program's calls, as uftrace counts them on -pg"
	done
	case $o in
	O0) is "$(ucounts ./om-inst-O0)" "$want" "uftrace agrees on the -finstrument-functions build" ;;
	esac
done

# a program that dies before its tracer starts (here in .preinit_array,
# which runs before libktrace's constructor): record says so, with the
# signal, and exits as the program did (128 + 11), not 'a static binary?'
cat > early.c <<'C'
#include <signal.h>
#include <unistd.h>
static void die(int c, char **v, char **e) { (void)c; (void)v; (void)e; kill(getpid(), SIGSEGV); }
__attribute__((section(".preinit_array"), used)) static void (*pre)(int, char **, char **) = die;
int main(void) { return 0; }
C
cc -O1 -finstrument-functions -o early early.c || exit 1
rm -rf tr
"$KTRACE" record -o tr ./early >out 2>err
is "$?" 139 "a program killed before its tracer started: record exits 128 + 11"
like err "^ktrace record: \./early was not traced: it was killed by signal 11 \(Segmentation fault\) before it started the tracer$" \
	"... and says so, with the signal"

done_testing
