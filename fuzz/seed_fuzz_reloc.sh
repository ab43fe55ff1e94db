#!/bin/sh
# fuzz/seed_fuzz_reloc.sh CORPUS SRC OUT - seed functions for fuzz_reloc:
# the first bytes of the functions of tests/kft/relocs.c as the compiler
# assembles them (one per instruction form), and a few rule texts.
set -e
corpus=$1 src=$2 out=$3
cc -O1 -o "$out/relocs" "$src/tests/kft/relocs.c"
i=0
for f in rip_load rip_store lea_rip sse_rip jmp8 jmp32 jcc8 jcc32 cet_frame push_sub tail_jmp \
	call_first loop_top jump_mid tiny jrcxz_first helper main; do
	i=$((i + 1))
	# the symbol's bytes, after a byte choosing the trampoline's place
	python3 - "$out/relocs" "$f" "$corpus/seed-$i" <<'PY'
import subprocess, sys
exe, name, path = sys.argv[1:4]
syms = subprocess.run(["nm", "-S", exe], capture_output=True, text=True).stdout.split("\n")
for line in syms:
    p = line.split()
    if len(p) == 4 and p[3] == name:
        addr, size = int(p[0], 16), int(p[1], 16)
        break
else:
    sys.exit(0)
hdr = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True).stdout
for line in hdr.split("\n"):
    q = line.replace("[ ", "[").split()
    if len(q) > 6 and q[1] == ".text":
        vaddr, off = int(q[3], 16), int(q[4], 16)
data = open(exe, "rb").read()[off + addr - vaddr: off + addr - vaddr + size]
open(path, "wb").write(bytes([len(name) & 3]) + data)
PY
done
for spec in "+." "+deflate*@libz.so.1;-inflate" "-.;+main" "+@" ";;+a@b@c"; do
	i=$((i + 1))
	printf '%s' "$spec" >"$corpus/seed-$i"
done
# a build-id note section, as kft_note_build_id() reads it
i=$((i + 1))
objcopy -O binary --only-section=.note.gnu.build-id /bin/sh "$corpus/seed-$i" 2>/dev/null || true
