#!/bin/sh
# tests/kd_stream.sh - kd -c streams its calls in entry order (reader/
# preorder.c: window by window, the frames' depth_min index finding where
# each open call returns) and prints exactly what sorting the whole trace
# prints (kd -c --sort-mem, the sorter of reader/callsort.c): programs
# whose calls nest deep (recursion across many 4 KiB sub-buffers), spread
# over threads, forked, interrupted by a signal handler, cut by longjmp,
# ended inside nested calls, with and without a mintime filter that leaves
# open calls out of the trace.  The lines count what the program did
# (calltree_want, from its source).  addr2sym and export --format=perfetto
# and ctf (read back by babeltrace2) stream the calls the same way (threads merged by entry time, also four
# running at once), and write what they write sorted.  Where streaming would
# not be exact, kd sorts: ucontext switches, uncompressed streams.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
cc -O1 -finstrument-functions -o calltree "$KTRACE_SRC/tests/kft/calltree.c" -lpthread || exit 1
cc -O1 -finstrument-functions -o ucontext "$KTRACE_SRC/tests/kft/ucontext.c" || exit 1

# same NAME DIR: kd -c streams, and prints what the sort prints; so does addr2sym
same() {
	"$KTRACE" addr2sym "$2" >a-stream.txt 2>/dev/null
	"$KTRACE" addr2sym --sort-mem 64M "$2" >a-sorted.txt 2>/dev/null
	"$KTRACE" kd -c -v "$2" >stream.txt 2>stream.err
	"$KTRACE" kd -c --sort-mem 64M "$2" >sorted.txt 2>/dev/null
	like stream.err "calls streamed in entry order" "$1: kd -c streams the calls"
	ok "$([ -s sorted.txt ] && cmp -s stream.txt sorted.txt; echo $?)" \
		"$1: ... and prints what sorting them prints ($(lines sorted.txt) lines)"
	ok "$([ -s a-sorted.txt ] && cmp -s a-stream.txt a-sorted.txt; echo $?)" \
		"$1: addr2sym prints what sorting prints ($(lines a-sorted.txt) lines)"
	"$KTRACE" export --format=perfetto -o stream.pf "$2" 2>/dev/null
	"$KTRACE" export --format=perfetto --sort-mem 64M -o sorted.pf "$2" 2>/dev/null
	ok "$([ -s sorted.pf ] && cmp -s stream.pf sorted.pf; echo $?)" \
		"$1: export --format=perfetto writes what it writes sorted ($(wc -c <sorted.pf) bytes)"
	rm -rf stream.ctf sorted.ctf
	"$KTRACE" export --format=ctf -o stream.ctf "$2" 2>/dev/null
	"$KTRACE" export --format=ctf --sort-mem 64M -o sorted.ctf "$2" 2>/dev/null
	babeltrace2 stream.ctf >stream.bt 2>/dev/null
	babeltrace2 sorted.ctf >sorted.bt 2>/dev/null
	ok "$([ -s sorted.bt ] && cmp -s stream.bt sorted.bt; echo $?)" \
		"$1: export --format=ctf, as babeltrace2 reads it, the same streamed and sorted ($(lines sorted.bt) events)"
}

# counts FILE: "name count" of kd -c's call lines, sorted
counts() {
	sed 's/ \[unfinished\]$//; s/ \[watch\]$//' "$1" |
		awk 'NR > 2 && !/^-/ { n[$NF]++ } END { for (f in n) print f, n[f] }' | LC_ALL=C sort
}

for b in 4096 262144; do
	"$KTRACE" record -q --no-libcall -b $b -o rec-$b ./calltree recurse 2000 >/dev/null 2>&1
	same "recurse 2000, $b-byte sub-buffers" rec-$b
	is "$(counts stream.txt)" "$(calltree_want 'recurse 50' | sed 's/recurse 50/recurse 2000/')" \
		"... a line for each call the program made"
done
for m in tree "threads 4" signal longjmp fork exit; do
	"$KTRACE" record -q --no-libcall -b 4096 -o t ./calltree $m >/dev/null 2>&1
	same "$m" t
	is "$(counts stream.txt)" "$(calltree_want "$m")" "... a line for each call the program made"
done
"$KTRACE" record -q --no-libcall -b 4096 -o thr ./calltree threads 4 >/dev/null 2>&1
wtid=$("$KTRACE" print -C thr 2>/dev/null | awk -F, 'NR > 1 && $5 != $6 { print $6; exit }')
"$KTRACE" kd -c -v --tid "$wtid" thr >stream.txt 2>stream.err
"$KTRACE" kd -c --sort-mem 64M --tid "$wtid" thr >sorted.txt 2>/dev/null
ok "$(grep -q streamed stream.err && [ -s sorted.txt ] && cmp -s stream.txt sorted.txt; echo $?)" \
	"threads 4, --tid $wtid: one thread streamed as sorted ($(lines sorted.txt) lines)"
# threads running at once, each over many sub-buffers: their calls interleave
# in time (addr2sym and export merge the threads' windows by entry time)
cat >conc.c <<'C'
#include <pthread.h>
static volatile int sink;
__attribute__((noinline)) static int leaf(int i) { return sink += i; }
__attribute__((noinline)) static int mid(int n) { for (int i = 0; i < n; i++) leaf(i); return n; }
__attribute__((noinline)) static int rec(int d) { return d ? rec(d - 1) + mid(3) : mid(5); }
static void *work(void *a) { for (int i = 0; i < 400; i++) rec(i % 40); return a; }
int main(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], 0, work, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], 0);
	return 0;
}
C
cc -O1 -finstrument-functions -pthread -o conc conc.c || exit 1
"$KTRACE" record -q --no-libcall -b 4096 -o conc-t ./conc >/dev/null 2>&1
same "4 threads at once, 4 KiB sub-buffers" conc-t
is "$(grep -c '^-* thread ' sorted.txt)" 5 "... (the sections of main's thread and the four)"

# a mintime filter: calls open at a sub-buffer's start that are not in the trace
"$KTRACE" record -q --no-libcall -b 4096 -t 1us -o mt ./calltree recurse 2000 >/dev/null 2>&1
same "recurse 2000, -t 1us (calls under 1 us left out)" mt

# where it would not be exact, kd -c sorts
"$KTRACE" record -q --no-libcall -o uc ./ucontext >/dev/null 2>&1
"$KTRACE" kd -c -v uc >stream.txt 2>stream.err
unlike stream.err "streamed" "ucontext switches: kd -c sorts (the calls of two stacks interleave)"
"$KTRACE" record -q --no-libcall --compress=none -b 4096 -o none ./calltree recurse 2000 >/dev/null 2>&1
"$KTRACE" kd -c -v none >stream.txt 2>stream.err
unlike stream.err "streamed" "uncompressed streams (no depth_min index): kd -c sorts"
is "$(counts stream.txt)" "$(calltree_want 'recurse 50' | sed 's/recurse 50/recurse 2000/')" "... the same calls"
done_testing
