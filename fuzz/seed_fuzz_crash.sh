#!/bin/sh
# fuzz/seed_fuzz_crash.sh CORPUS SRC BUILD - seed inputs for fuzz_crash: a
# small crash region (tests/kernel/crash_image.py: two channels, a torn
# record, overwritten sub-buffers, a catalogue), as it is (first byte 0)
# and to be fixed up (first byte 1), and a damaged one.
c=$1
src=$2
t=$(mktemp)
CRASH_IMAGE_SMALL=1 python3 "$src/tests/kernel/crash_image.py" make good "$t" > /dev/null || exit 1
{ printf '\000'; cat "$t"; } > "$c/seed-good"
{ printf '\001'; cat "$t"; } > "$c/seed-fixed"
CRASH_IMAGE_SMALL=1 python3 "$src/tests/kernel/crash_image.py" make hdrcheck "$t" > /dev/null || exit 1
{ printf '\000'; cat "$t"; } > "$c/seed-hdrcheck"
rm -f "$t"
