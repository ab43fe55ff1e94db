#!/bin/sh
# fuzz/seed_fuzz_reader.sh CORPUS SRC OUT - small seed traces for fuzz_reader:
# each variant of tests/helpers/mktrace, packed by fuzz/pack_trace (slots
# layouts also as compressed frames, tests/helpers/zpack); then
# metadata past the reader's bounds (fuzz/Makefile makes them 64): 100
# stream lines naming one file, 100 naming their own, 100 seq-base lines,
# 100 map lines of distinct and of repeated paths; 100 map-gen lines of
# loads in turn at the same addresses (and a map line beside them); and
# function traces that ktrace record wrote, when build/ktrace exists.
set -e
corpus=$1 src=$2 out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while read -r args; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$out/mktrace" -b 256 -n 4 -r 12 $args "$tmp/t$i" >/dev/null
	"$out/pack_trace" "$tmp/t$i" "$corpus/seed-$i"
done <<'VARIANTS'
--no-control
--no-control --flight -r 40
--no-control --kind shared --open
--no-control --layout packed
--no-control --clock mono --kind cpu
--no-control --log4-every 3 --unknown-every 4 --cpu-every 2
--no-control --lost 0:0:3
--no-control --corrupt-header 1:1 -r 30
--no-control --no-metadata
-s 1
--version 2 --no-control
--no-control --used 0:1:0 -r 40
--no-control --nrec 1:0:3 --open
--truncate 1:0
VARIANTS
# slots, and the same in compressed frames (tests/helpers/zpack: 2 per frame)
for args in "" "--kind shared" "--lost 0:1:2 --cpu-every 3"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$out/mktrace" --layout slots -b 256 -n 4 -r 12 $args "$tmp/t$i" >/dev/null
	"$out/pack_trace" "$tmp/t$i" "$corpus/seed-$i"
	"$out/zpack" -n 2 "$tmp/t$i" >/dev/null
	"$out/pack_trace" "$tmp/t$i" "$corpus/seed-$i-frames"
done
# past the metadata's bounds
"$out/mktrace" -b 256 -n 4 -r 12 "$tmp/big" >/dev/null
for kind in same own seq map maprep mapgen; do
	rm -rf "$tmp/b-$kind"
	cp -r "$tmp/big" "$tmp/b-$kind"
	awk -v kind=$kind 'BEGIN {
		for (i = 0; i < 100; i++) {
			if (kind == "same") printf "stream %d thread trace0\n", i
			else if (kind == "own") printf "stream %d thread trace%d\n", i, i
			else if (kind == "seq") printf "seq-base %d %d\n", i % 70, i
			else if (kind == "map") printf "map %x %x 0 - /lib/l%d.so\n", 4096 * i, 4096 * i + 100, i
			else if (kind == "mapgen") printf "map-gen %d %s %x %x %x - /lib/l%d.so\n", 1000 * i,
				i % 7 ? 1000 * i + 900 : "-", 4096 * (i % 4), 4096 * (i % 4) + 4000, 4096 * (i % 2), i % 3
			else printf "map %x %x %x - /lib/l%d.so\n", 4096 * i, 4096 * i + 100, 4096 * (i % 3), i % 5
		}
		if (kind == "mapgen") print "map 0 4000 0 - /lib/l0.so"
	}' >>"$tmp/b-$kind/metadata"
	"$out/pack_trace" "$tmp/b-$kind" "$corpus/seed-bounds-$kind"
done
# function traces as `ktrace record` writes them (compressed frames with
# their depth_min, for the streamed entry order), when the tree has been
# built (make fuzz runs after make in CI): recursion across 4 KiB
# sub-buffers, and threads
kt=$src/build/ktrace
if [ -x "$kt" ] && cc -O1 -finstrument-functions -pthread -o "$tmp/calltree" "$src/tests/kft/calltree.c" 2>/dev/null; then
	for m in "recurse 300" "threads 2" "tree"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		env -u LD_PRELOAD "$kt" record -q --no-libcall -b 4096 -o "$tmp/k$i" "$tmp/calltree" $m >/dev/null 2>&1 &&
			"$out/pack_trace" "$tmp/k$i" "$corpus/seed-kft-$i"
	done
fi
