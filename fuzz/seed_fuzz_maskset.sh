#!/bin/sh
# fuzz/seed_fuzz_maskset.sh CORPUS SRC OUT - seed masksets for fuzz_maskset.
set -e
corpus=$1
i=0
for spec in RDEFAULT RALL RNOTHING process,syscall PROCESS_CONTEXTSWITCH,PROCESS_WAKEUP \
	"rdefault,memory" "interrupt,,timer" "NOSUCH" ","; do
	i=$((i + 1))
	printf '%s' "$spec" >"$corpus/seed-$i"
done
