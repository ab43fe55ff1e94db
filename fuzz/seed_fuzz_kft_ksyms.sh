#!/bin/sh
# fuzz/seed_fuzz_kft_ksyms.sh CORPUS SRC OUT - seeds for fuzz_kft_ksyms:
# /proc/kallsyms-like and System.map-like texts, hidden addresses, junk.
c=$1
printf 'ffffffff81000000 T _stext\nffffffff81000100 t do_thing\nffffffff82000000 D data\nffffffffc0001000 t modfn\t[mod]\n' > "$c/kallsyms"
printf '0000000000000000 T hidden\n0000000000000000 t hidden2\n' > "$c/hidden"
printf 'c001d804 T do_fork\nc02cb754 T schedule\n' > "$c/systemmap32"
printf 'zz T x\n1234 T\n1234 TT y\n\n 1 t a\n12345678901234567 T toolong\n' > "$c/junk"
exit 0
