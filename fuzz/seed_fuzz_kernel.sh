#!/bin/sh
# fuzz/seed_fuzz_kernel.sh CORPUS SRC OUT - seeds for fuzz_kernel: a small
# application trace (tests/helpers/mktrace) with a synthetic kernel
# sub-trace (context switches, wakeups, a syscall, a lost-records gap),
# packed in fuzz_kernel's section format.
set -e
corpus=$1 out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$out/mktrace" -b 256 -n 4 -r 8 --no-control --clock mono "$tmp/app" >/dev/null
python3 - "$tmp/app" "$corpus" <<'PY'
import os, struct, sys
app, corpus = sys.argv[1], sys.argv[2]
T0 = 1000000000000
def rec(ts, ident, words):
    return struct.pack("<Q", (ts & ((1 << 40) - 1)) | len(words) << 40 | 5 << 44 | ident << 48) + \
        b"".join(struct.pack("<Q", w & 0xffffffffffffffff) for w in words)
def subbuf(seq, cpu, first, recs, lost=0):
    body = b"".join(recs)
    hdr = struct.pack("<IHHQQQQIIIIIHH", 0x4253544b, 64, 2, seq, first, first, first, len(body), lost,
                      len(recs), 0, 0, cpu, cpu)
    return hdr + body
cpu0 = subbuf(0, 0, T0 + 1000, [
    rec(T0 + 1000, 1, [1000 | 1000 << 32, 1000, 2000, 1]),
    rec(T0 + 1500, 2, [2000 | 2000 << 32, 1000, 0]),
    rec(T0 + 3000, 1, [2000 | 2000 << 32, 2000, 1000, 0]),
], lost=2) + subbuf(1, 0, T0 + 5000, [rec(T0 + 5000, 1, [1000 | 1000 << 32, 1000, 0, 0x100])])
cpu1 = subbuf(0, 1, T0 + 1200, [rec(T0 + 1200, 0x30, [3000, 35, 1, 2, 3]), rec(T0 + 1300, 0x31, [3000, 35, 0])])
meta = ("ktrace-format 1\nclock mono\nchannel kernel\nscope cpu\nlayout packed\nbuf-size 4096\n"
        "stream 0 cpu cpu0\nstream 1 cpu cpu1\n"
        "event 1 kevent PROCESS_CONTEXTSWITCH process prev_pid,next_pid,prev_state\n"
        "event 2 kevent PROCESS_WAKEUP process pid,target_cpu\n"
        "event 48 kevent SYSCALL_ENTRY syscall id,args[0],args[1],args[2]\n"
        "thread 1000 1000 a\nthread 2000 2000 b\nthread 3000 3000 c\n").encode()
names = ["metadata", "trace0", "threads", "kernel/metadata", "kernel/cpu0", "kernel/cpu1", "kernel/threads"]
def section(name, data):
    return bytes([names.index(name)]) + struct.pack("<I", len(data))[:3] + data
def read(p):
    try:
        return open(os.path.join(app, p), "rb").read()
    except OSError:
        return None
parts = [(n, read(n)) for n in ("metadata", "trace0", "threads")]
full = b"".join(section(n, d) for n, d in parts if d is not None)
kern = section("kernel/metadata", meta) + section("kernel/cpu0", cpu0) + section("kernel/cpu1", cpu1)
open(os.path.join(corpus, "seed-1"), "wb").write(full + kern)
open(os.path.join(corpus, "seed-2"), "wb").write(kern)
open(os.path.join(corpus, "seed-3"), "wb").write(section("kernel/metadata", meta) + section("kernel/cpu0", cpu0))
PY
