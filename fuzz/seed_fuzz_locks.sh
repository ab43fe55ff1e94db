#!/bin/sh
# fuzz/seed_fuzz_locks.sh CORPUS SRC OUT - seeds for fuzz_locks: a
# synthetic trace of two threads' lock events (an inversion, a release by
# a non-holder, a double acquire, a lock held at thread exit) with their
# catalogue, and a kernel sub-trace of nested contention events, packed in
# fuzz_locks' section format.
set -e
corpus=$1
python3 - "$corpus" <<'PY'
import os, struct, sys
corpus = sys.argv[1]
T0 = 1000000000000
FUNC = 0xfd
def rec(ts, cls, ident, words):
    return struct.pack("<Q", (ts & ((1 << 40) - 1)) | len(words) << 40 | cls << 44 | ident << 48) + \
        b"".join(struct.pack("<Q", w & 0xffffffffffffffff) for w in words)
def subbuf(seq, cpu, tid, first, recs):
    body = b"".join(recs)
    hdr = struct.pack("<IHHQQQQIIIIIHH", 0x4253544b, 64, 2, seq, first, first, first, len(body), 0,
                      len(recs), tid, 0, cpu, 0)
    return hdr + body
def ev(op, phase):
    return FUNC << 8 | op << 2 | phase
A, B, W = 0x601000, 0x601040, 0x601080
ops = {1: "mutex_lock", 2: "mutex_trylock", 4: "mutex_unlock", 19: "cond_wait", 23: "thread_exit"}
t0 = [rec(T0 + 10, 1, ev(1, 0), [A, 0x401010]), rec(T0 + 20, 1, ev(1, 1), [A, 0x401010]),
      rec(T0 + 30, 1, ev(1, 0), [B, 0x401020]), rec(T0 + 40, 1, ev(1, 1), [B, 0x401020]),
      rec(T0 + 50, 1, ev(4, 3), [B, 0x401030]), rec(T0 + 60, 1, ev(4, 3), [A, 0x401040]),
      rec(T0 + 70, 1, ev(1, 0), [W, 0x401050]), rec(T0 + 80, 1, ev(1, 1), [W, 0x401050]),
      rec(T0 + 90, 1, ev(2, 0), [W, 0x401060]), rec(T0 + 95, 1, ev(2, 2), [W, 0x401060]),
      rec(T0 + 99, 1, ev(23, 0), [0, 0x401070])]
t1 = [rec(T0 + 100, 1, ev(1, 0), [B, 0x402010]), rec(T0 + 110, 1, ev(1, 1), [B, 0x402010]),
      rec(T0 + 120, 1, ev(1, 0), [A, 0x402020]), rec(T0 + 130, 1, ev(1, 1), [A, 0x402020]),
      rec(T0 + 140, 1, ev(19, 3), [A, 0x402030]), rec(T0 + 150, 1, ev(19, 1), [A, 0x402030]),
      rec(T0 + 160, 1, ev(4, 3), [W, 0x402040]), rec(T0 + 170, 1, ev(4, 3), [A, 0x402050])]
lines = ["ktrace-format 1", "clock mono", "scope thread", "layout packed", "buf-size 4096",
         "stream 0 thread trace0", "stream 1 thread trace1", "thread 100 100 a", "thread 200 100 b"]
for op, name in ops.items():
    for ph, pn in enumerate(["acquire", "acquired", "failed", "release"]):
        lines.append("event %d log2 %s:%s locks lock,site" % (ev(op, ph), name, pn))
meta = ("\n".join(lines) + "\n").encode()
kmeta = ("ktrace-format 1\nclock mono\nchannel kernel\nscope cpu\nlayout packed\nbuf-size 4096\n"
         "stream 0 cpu cpu0\n"
         "event 112 kevent LOCK_CONTENTION_BEGIN lock flags,lock_addr\n"
         "event 113 kevent LOCK_CONTENTION_END lock ret,lock_addr\n").encode()
task = 100 | 100 << 32
kcpu0 = subbuf(0, 0, 0, T0 + 5, [rec(T0 + 5, 5, 0x70, [task, 6, 0x1111]), rec(T0 + 6, 5, 0x70, [task, 1, 0x2222]),
                                rec(T0 + 7, 5, 0x71, [task, 0, 0x2222]), rec(T0 + 9, 5, 0x71, [task, 0, 0x1111]),
                                rec(T0 + 11, 5, 0x71, [task, 0, 0x3333])])
names = ["metadata", "trace0", "trace1", "threads", "kernel/metadata", "kernel/cpu0"]
def section(name, data):
    return bytes([names.index(name)]) + struct.pack("<I", len(data))[:3] + data
app = section("metadata", meta) + section("trace0", subbuf(0, 0, 100, T0 + 10, t0)) + \
    section("trace1", subbuf(0, 1, 200, T0 + 100, t1))
kern = section("kernel/metadata", kmeta) + section("kernel/cpu0", kcpu0)
open(os.path.join(corpus, "seed-1"), "wb").write(app + kern)
open(os.path.join(corpus, "seed-2"), "wb").write(app)
open(os.path.join(corpus, "seed-3"), "wb").write(kern)
PY
