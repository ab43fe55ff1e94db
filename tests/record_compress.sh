#!/bin/sh
# tests/record_compress.sh - compressed streams (issue 29): `ktrace record`
# writes zstd frames by default (--compress=zstd[:LEVEL]|none), readers
# take both.  Checked: the calls the programs count themselves are in both
# kinds of trace; a default trace takes under 5 bytes a call, an
# uncompressed one 16; the same trace read uncompressed and compressed
# (tests/helpers/zpack rewrites an uncompressed one with the consumer's
# codec) gives byte-identical kd, kd -c, kd --format=csv and print -C, for
# thread streams and for a shared stream (context words), and for every
# kind of stream and gap tests/helpers/mktrace makes; a flipped byte
# and a cut frame are reported with their file and offset, the other
# sub-buffers read; a bad --compress is refused in one line.
. "$KTRACE_SRC/tests/helpers/tap.sh"
KTRACE_LIBCALL=0 # the program's own calls: it knows how many it made
export KTRACE_LIBCALL
cd "$T" || exit 1
ZPACK=$KTRACE_BUILD/tests/helpers/zpack
cc -O1 -g -finstrument-functions -o stream "$KTRACE_SRC/tests/kft/stream.c" || exit 1
cat > threads.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
static volatile unsigned sink;
void __attribute__((noinline)) leaf(unsigned i) { sink += i; }
static void *work(void *a) { for (unsigned i = 0; i < 20000; i++) leaf(i); return a; }
int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, work, 0);
	for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
	printf("leaf %u\n", 4 * 20000u);
	return 0;
}
EOF
cc -O1 -g -finstrument-functions -pthread -o threads threads.c || exit 1
san_preload
N=100000

magic() { od -An -c -N4 "$1" | tr -d ' '; }
per_call() { echo $(( $(stat -c %s "$1/trace0") * 100 / $2 )); } # bytes a call x 100

"$KTRACE" record -o z -- ./stream calls $N > /dev/null 2> z.err
ok $? "record (default): main -> loop -> $N x leaf"
like z.err "compressed \\(zstd level 1\\)" "its summary says it compressed"
is "$(magic z/trace0)" "KTZF" "z/trace0 is frames"
is "$(kd_counts z "leaf loop main" | tr '\n' ' ')" "leaf $N loop 1 main 1 " "the counts the program made"
b=$(per_call z $N)
ok $([ "$b" -lt 500 ]; echo $?) "under 5 bytes a call: $b/100"

"$KTRACE" record -q --compress=none -o p -- ./stream calls $N > /dev/null
ok $? "record --compress=none"
is "$(magic p/trace0)" "KTSB" "p/trace0 is slots"
is "$(kd_counts p "leaf loop main" | tr '\n' ' ')" "leaf $N loop 1 main 1 " "the counts the program made"
b=$(per_call p $N)
ok $([ "$b" -ge 1600 ]; echo $?) "16 bytes a call or more: $b/100"

"$KTRACE" record -q --compress=zstd:5 -o z5 -- ./stream calls 1000 > /dev/null
ok $? "record --compress=zstd:5"
is "$(kd_counts z5 "leaf" | tr '\n' ' ')" "leaf 1000 " "the counts the program made"

# one trace, read both ways
"$KTRACE" record -q --compress=none --threads=1 -o sp -- ./threads > threads.out
ok $? "record --compress=none --threads=1 of 4 threads: a shared stream"
is "$(kd_counts sp leaf)" "$(cat threads.out)" "the counts the program made"
for d in p sp; do
	cp -r "$d" "$d.z" && "$ZPACK" "$d.z" > "$d.zpack"
	ok $? "$d: rewritten as frames: $(tr '\n' ' ' < "$d.zpack")"
	for args in "kd" "kd --format=csv" "kd -c" "print -C"; do
		# shellcheck disable=SC2086 # $args: the command and its options
		"$KTRACE" $args "$d" > "$d.plain" 2> "$d.plain.err"
		rc1=$?
		# shellcheck disable=SC2086
		"$KTRACE" $args "$d.z" > "$d.framed" 2> "$d.framed.err"
		rc2=$?
		ok $([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ -s "$d.plain" ] && cmp -s "$d.plain" "$d.framed" &&
			cmp -s "$d.plain.err" "$d.framed.err"; echo $?) \
			"$d: $args: the same from frames ($(wc -l < "$d.plain") lines)"
	done
done

# every kind of stream and gap tests/helpers/mktrace writes, in slots and
# then in frames of 3 sub-buffers: print shows the same records and gaps
MK=$KTRACE_BUILD/tests/helpers/mktrace
i=0
while read -r args; do
	i=$((i + 1))
	# shellcheck disable=SC2086 # $args: mktrace's options
	"$MK" --layout slots -b 4096 -n 8 -r 700 $args "mk$i" > /dev/null &&
		"$KTRACE" print "mk$i" > "mk$i.slots" 2> "mk$i.slots.err"
	rc1=$?
	"$ZPACK" -n 3 "mk$i" > /dev/null && "$KTRACE" print "mk$i" > "mk$i.frames" 2> "mk$i.frames.err"
	rc2=$?
	# (messages name file offsets, which differ: a slot's, a frame entry's)
	for f in "mk$i.slots" "mk$i.slots.err" "mk$i.frames" "mk$i.frames.err"; do
		sed 's/offset [0-9]*/offset N/' "$f" > "$f.n"
	done
	ok $([ "$rc1" = "$rc2" ] && [ -s "mk$i.slots" ] && cmp -s "mk$i.slots.n" "mk$i.frames.n" &&
		cmp -s "mk$i.slots.err.n" "mk$i.frames.err.n"; echo $?) \
		"mktrace $args: print the same from frames ($(wc -l < "mk$i.slots") lines, exit $rc1)"
done <<'VARIANTS'
--no-control
--kind shared
--kind shared --open
--flight -r 3000
--lost 0:1:3 --dropped 1:5
--log4-every 3 --unknown-every 4 --cpu-every 2
--clock mono --kind cpu
--nrec 1:0:3
VARIANTS

# damage: one byte of the first sub-buffer's compressed data, then a cut frame
cp -r p.z bad
python3 - bad/trace0 <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    hdr = f.read(64)
    ent = f.read(96)
    zoff, zlen = struct.unpack_from("<II", ent, 64)
    f.seek(zoff + zlen // 2)
    b = f.read(1)
    f.seek(zoff + zlen // 2)
    f.write(bytes([b[0] ^ 0x40]))
PY
"$KTRACE" kd bad > bad.out 2> bad.err
ok $([ $? != 0 ]; echo $?) "kd of a flipped byte exits non-zero"
like bad.err "bad/trace0: offset 64: compressed sub-buffer seq 0: [A-Z]" \
	"it names the file, the sub-buffer's entry and zstd's reason"
unlike bad.err "overwritten in stream" "the damaged sub-buffer is not taken for an overwritten one"
like bad.err "records" "and counts what is missing"
got=$(kd_counts bad leaf | awk '{print $2}')
ok $([ "${got:-0}" -gt $((N - 20000)) ] && [ "$got" -lt $N ]; echo $?) \
	"the other sub-buffers are read: $got of $N calls of leaf"
cp -r p.z cut
size=$(stat -c %s cut/trace0)
truncate -s $((size - 4096)) cut/trace0
"$KTRACE" kd cut > cut.out 2> cut.err
ok $([ $? != 0 ]; echo $?) "kd of a cut frame exits non-zero"
like cut.err "cut/trace0: offset [0-9]*: truncated frame" "it says where the frame is cut"

"$KTRACE" record --compress=lz4 -o x -- ./stream calls 1 > /dev/null 2> opt.err
is "$?:$(wc -l < opt.err)" "2:1" "--compress=lz4: exit 2, one line"
like opt.err "option '--compress' needs zstd, zstd:LEVEL \\(LEVEL -7..19\\) or none, not 'lz4'" \
	"it says what is taken"
"$KTRACE" record --compress=zstd:30 -o x -- ./stream calls 1 > /dev/null 2> opt.err
is "$?" "2" "--compress=zstd:30: refused"
done_testing
