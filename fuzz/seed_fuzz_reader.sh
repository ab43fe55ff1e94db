#!/bin/sh
# fuzz/seed_fuzz_reader.sh CORPUS SRC OUT - small seed traces for fuzz_reader:
# each variant of tests/helpers/mktrace, packed by fuzz/pack_trace.
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
