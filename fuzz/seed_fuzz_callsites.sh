#!/bin/sh
# fuzz/seed_fuzz_callsites.sh CORPUS SRC OUT - seed inputs for fuzz_callsites
# (format in fuzz/fuzz_callsites.c): a small call tree whose call-site
# table is valid, the same with a table cut short, and one with inline
# addresses and a long duration.
set -e
corpus=$1

# le VALUE BYTES: VALUE as BYTES little-endian bytes
le() {
	v=$1 n=$2
	while [ "$n" -gt 0 ]; do
		# shellcheck disable=SC2059
		printf "\\$(printf '%03o' $((v & 255)))"
		v=$((v >> 8)) n=$((n - 1))
	done
}

# rec ID W0 STEP EXTRA: one 16-byte record description
rec() { le "$1" 2; le "$2" 8; le "$3" 4; le "$4" 1; le 0 1; }

# callsites HEADER COUNT CAPACITY, then COUNT entries (func, site)
table() {
	le $((0x5343544b)) 4; le 1 2; le 64 2; le 16 4; le 0 4; le "$2" 8; le "$1" 8
	i=0; while [ $i -lt 32 ]; do le 0 1; i=$((i + 1)); done
	i=0; while [ $i -lt "$1" ]; do le $((0x1000 + 16 * i)) 8; le $((0x2000 + 16 * i)) 8; i=$((i + 1)); done
}

depth() { echo $(($1 << 40)); }

{
	le 4 1; le 1 1
	rec 2 $((50 + $(depth 2))) 100 0
	rec 1 $((300 + $(depth 1))) 400 0
	rec 3 $((20 + $(depth 1) + (1 << 56))) 50 0
	rec 0 $((1000 + (1 << 60))) 700 0
	le 4096 8
	table 4 8
} > "$corpus/tree"
{
	le 3 1; le 2 1
	rec 1 $((30 + $(depth 1))) 100 0
	rec 2 $((60 + $(depth 1))) 100 0
	rec 0 500 100 1
	i=0; while [ $i -lt 40 ]; do le 255 1; i=$((i + 1)); done
	table 2 2 | head -c 90
} > "$corpus/truncated"
{
	le 2 1; le 4 1
	rec 65535 $(((255 << 32) + 7)) 10 3
	rec 5 $((1 << 32)) 10 1
	table 6 6
} > "$corpus/inline"
{
	le 2 1; le 8 1
	rec 1 $((30 + $(depth 1))) 100 0
	rec 0 500 100 0
	printf 'ffffffff81001000 T do_fork\nffffffff81002000 t copy_process [ext4]\n0000 T zero\nzz\n'
	table 2 2
} > "$corpus/kallsyms"
