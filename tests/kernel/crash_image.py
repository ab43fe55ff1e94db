#!/usr/bin/env python3
"""tests/kernel/crash_image.py - make and check ktrace.ko crash region
images for tests/crash_read.sh, from docs/FORMAT.md ("Crash region") alone:
byte offsets and the check function written out here, no ktrace code.

  crash_image.py make KIND IMAGE   write an image; print the expected
                                   "records N", "torn T", "bad B",
                                   "last L", "panic P" of channel lkst
  crash_image.py walk DIR          count the records and lost of the
                                   trace directory's cpuN files (packed
                                   sub-buffers): "records N lost L
                                   badlen B tsback S"

KIND: good (two channels: lkst with KEVENT records, old bytes after the end
word of two sub-buffers, a torn record at the
end of ring 0, a record with a wrong check in ring 1, a sub-buffer with a
bad header check, overwritten sub-buffers; default with LOG2 records and
a catalogue), one (only lkst holds records), magic, hdrcheck, chancheck,
short, geometry.
"""
import struct
import sys

M = (1 << 64) - 1
K = 0x9E3779B97F4A7C15
SEED = 0x6B74726163652121


def mix(h, w):
    x = ((h ^ w) * K) & M
    return x ^ (x >> 31)


def fold(h, words):
    for w in words:
        h = mix(h, w)
    return h


def fin(h):
    return h if h else 1


def words_of(b):
    return [struct.unpack_from("<Q", b, i)[0] for i in range(0, len(b) - len(b) % 8, 8)]


import os

# CRASH_IMAGE_SMALL=1: a 32 KiB region, one ring per channel (fuzz seeds)
SMALL = os.environ.get("CRASH_IMAGE_SMALL") == "1"
SIZE = 32768 if SMALL else 1 << 20
SUB = 4096
NR = 2 if SMALL else 4
CAT = 512 if SMALL else 65536
NRINGS = 1 if SMALL else 2
SYSCALL_ENTRY = 0x30  # include/ktrace/lkst.h: 4 args


def rec_hdr(ts, cls, nwords, rid):
    return (ts & ((1 << 40) - 1)) | (nwords << 40) | (cls << 44) | (rid << 48)


def subbuf(seq, ring, first_ts, recs, torn_tail=None, bad_mid=None, bad_hdr=False, stale=False):
    """recs: list of word lists (header first).  Returns (bytes, shown, torn, last).
    stale: the space after the end word holds an earlier lap's bytes."""
    b = bytearray(SUB)
    if stale:
        b[:] = bytes((i * 37 + 11) & 0xFF or 1 for i in range(SUB))
    flags = 0x0008
    w0 = 0x4253544B | (64 << 32) | (flags << 48)
    commit = fin(fold(SEED ^ 6, [w0, seq, first_ts, first_ts, ring | (ring << 16)])) & 0xFFFFFFFF
    if bad_hdr:
        commit ^= 1
    off = 64
    shown = torn = 0
    last = 0
    for i, r in enumerate(recs):
        ck = fin(fold(mix(mix(SEED ^ 7, seq), off), r))
        if bad_mid is not None and i == bad_mid:
            ck ^= 0x100
        for j, w in enumerate(r):
            struct.pack_into("<Q", b, off + 8 * j, w)
        struct.pack_into("<Q", b, off + 8 * len(r), ck)
        if bad_mid is not None and i >= bad_mid:
            if i == bad_mid:
                torn += 1
        else:
            shown += 1
            last = first_ts + ((r[0] & ((1 << 40) - 1)) - (first_ts & ((1 << 40) - 1)))
        off += 8 * (len(r) + 1)
    if torn_tail is not None:  # a record stopped halfway: header and one word, no check
        for j, w in enumerate(torn_tail[:2]):
            struct.pack_into("<Q", b, off + 8 * j, w)
        torn += 1
    elif off + 8 <= SUB:  # the end word
        struct.pack_into("<Q", b, off, 0)
    struct.pack_into("<IHHQQQQIIIIIHH", b, 0, 0x4253544B, 64, flags, seq, first_ts, first_ts,
                     0, off - 64, 0, len(recs), 0, commit, ring, ring)
    return b, shown, torn, last


def make(kind, path):
    img = bytearray(SIZE)
    base_ts = 5_000_000_000
    exp = {"records": 0, "torn": 0, "bad": 0, "last": 0}
    # channel table: lkst at 256, default at 512
    chans = []
    dsize = (SIZE - 4096) // 2
    for i, (name, nrings) in enumerate((("lkst", NRINGS), ("default", NRINGS))):
        e = bytearray(256)
        e[0:len(name)] = name.encode()
        cat_off = 4096 + i * dsize
        ring_off = cat_off + CAT
        struct.pack_into("<IIIIQQQ", e, 64, 2, nrings, SUB, NR, ring_off, cat_off, CAT)
        chk = fin(fold(SEED ^ 3, words_of(bytes(e[:144]))))
        if kind == "chancheck" and i == 1:
            chk ^= 1
        if kind == "geometry" and i == 0:
            struct.pack_into("<I", e, 76, 1 << 30)  # subbuf_nr far beyond the image
            chk = fin(fold(SEED ^ 3, words_of(bytes(e[:144]))))
        struct.pack_into("<Q", e, 144, chk)
        chans.append((e, cat_off, ring_off, nrings))
    # lkst, ring 0: seq 0..5 written, slots keep 2..5; a torn record at the end
    ts = base_ts
    e, cat_off, ring_off, nrings = chans[0]
    for seq in range(6):
        recs = []
        for k in range(20):
            ts += 1000
            recs.append([rec_hdr(ts, 5, 5, SYSCALL_ENTRY), 100 + seq, 39, 1, 2, 3])
        first = recs[0][0] & ((1 << 40) - 1)
        tail = [rec_hdr(ts + 500, 5, 5, SYSCALL_ENTRY), 100] if seq == 5 else None
        b, shown, torn, last = subbuf(seq, 0, first, recs, torn_tail=tail, stale=seq in (3, 4))
        slot = seq % NR
        img[ring_off + slot * SUB: ring_off + (slot + 1) * SUB] = b
        if seq >= 6 - NR:
            exp["records"] += shown
            exp["torn"] += torn
            exp["last"] = max(exp["last"], last)
    # ring 1: seq 0 fine, seq 1 a bad check in record 3, seq 2 a bad header
    r1 = ring_off + NR * SUB
    ts1 = base_ts + 7
    for seq in range(3 if NRINGS > 1 else 0):
        recs = []
        for k in range(10):
            ts1 += 900
            recs.append([rec_hdr(ts1, 5, 5, SYSCALL_ENTRY), 200 + seq, 39, 4, 5, 6])
        first = recs[0][0] & ((1 << 40) - 1)
        b, shown, torn, last = subbuf(seq, 1, first, recs, bad_mid=3 if seq == 1 else None,
                                      bad_hdr=seq == 2)
        img[r1 + seq * SUB: r1 + (seq + 1) * SUB] = b
        if seq == 2:
            exp["bad"] += 1
        else:
            exp["records"] += shown
            exp["torn"] += torn
            exp["last"] = max(exp["last"], last)
    # default channel: LOG2 records of func 1 event 1, and its catalogue
    e2, cat2, ring2, _ = chans[1]
    if kind != "one":
        recs = []
        t2 = base_ts + 3
        for k in range(8):
            t2 += 5000
            recs.append([rec_hdr(t2, 1, 2, (1 << 8) | 1), k, 2 * k])
        b, _, _, _ = subbuf(0, 0, recs[0][0] & ((1 << 40) - 1), recs)
        img[ring2: ring2 + SUB] = b
    def catalogue(e, off, text):
        img[off: off + len(text)] = text
        padded = text + b"\0" * ((8 - len(text) % 8) % 8)
        cchk = fin(fold(mix(SEED ^ 4, len(text)), words_of(padded)))
        struct.pack_into("<QQQ", e, 152, len(text), cchk, base_ts)
    catalogue(e2, cat2, b"func 1 myfunc\nevent 257 log2 myfunc_entry demo a,b\nnot a catalogue line\n")
    catalogue(chans[0][0], chans[0][1], b"event 48 kevent SYSCALL_ENTRY syscall id,args[0],args[1],args[2]\n")
    for i, (e, _, _, _) in enumerate(chans):
        img[256 + 256 * i: 512 + 256 * i] = e
    # header
    h = bytearray(216)
    struct.pack_into("<QIIQ", h, 0, 0x314853415243544B, 1, 4096, SIZE)
    h[24:40] = bytes(range(16))
    struct.pack_into("<QQIIII", h, 40, base_ts - 1_000_000, 1_700_000_000_000_000_000, 2, 256, 256, 0)
    hchk = fin(fold(SEED ^ 1, words_of(bytes(h[:104]))))
    if kind == "hdrcheck":
        hchk ^= 4
    struct.pack_into("<Q", h, 104, hchk)
    panic = exp["last"] + 2_000_000
    stop = panic + 30_000_000
    struct.pack_into("<QIIQ", h, 112, panic, 1, 1, stop)
    struct.pack_into("<Q", h, 136, fin(fold(SEED ^ 2, [panic, 1 | (1 << 32), stop])))
    note = b"test note 42".ljust(64, b"\0")
    h[152:216] = note
    struct.pack_into("<Q", h, 144, fin(fold(SEED ^ 5, words_of(note))))
    if kind == "magic":
        h[0:8] = b"NOTCRASH"
    img[0:216] = h
    if kind == "short":
        img = img[: SIZE // 2]
    with open(path, "wb") as f:
        f.write(img)
    exp["panic"] = panic
    for k in ("records", "torn", "bad", "last", "panic"):
        print(k, exp[k])


def walk(d):
    import glob
    import os
    records = lost = badlen = tsback = 0
    for p in sorted(glob.glob(os.path.join(d, "cpu*"))):
        data = open(p, "rb").read()
        off = 0
        prev = 0
        while off + 64 <= len(data):
            (magic, hs, flags, seq, first, _fns, _last, used, lst, nrec, _tid, _c, _cpu,
             _st) = struct.unpack_from("<IHHQQQQIIIIIHH", data, off)
            assert magic == 0x4253544B, "bad magic in %s at %d" % (p, off)
            lost += lst
            o = off + hs
            end = o + used
            while o < end:
                w = struct.unpack_from("<Q", data, o)[0]
                n = (w >> 40) & 15
                cls = (w >> 44) & 15
                if cls == 5 and (w >> 48) == SYSCALL_ENTRY and n != 5:
                    badlen += 1
                if cls == 0:
                    badlen += 1
                ts40 = w & ((1 << 40) - 1)
                d40 = (ts40 - (first & ((1 << 40) - 1))) & ((1 << 40) - 1)
                if d40 >= 1 << 39:
                    d40 -= 1 << 40
                full = first + d40
                if full < prev:
                    tsback += 1
                prev = full
                records += 1
                o += 8 * (1 + n)
            off = end + (8 - end % 8) % 8
    print("records %d lost %d badlen %d tsback %d" % (records, lost, badlen, tsback))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "walk":
        walk(sys.argv[2])
    else:
        sys.exit("usage: crash_image.py make KIND IMAGE | walk DIR")
