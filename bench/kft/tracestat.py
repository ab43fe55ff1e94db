#!/usr/bin/env python3
"""bench/kft/tracestat.py - what a trace occupies, for bench/kft/run.sh.

    tracestat.py ktrace DIR     -> records=N bytes=B lost=L
    tracestat.py uftrace DIR    -> records=N bytes=B

ktrace (docs/FORMAT.md): walks the sub-buffer headers of every stream file
(traceN) of DIR, and sums, over the sub-buffers holding data (magic
"KTSB"), the records (nrec), the bytes written (64-byte header + used) and
the records lost (lost); then adds the call-site table in use (64-byte
header + 16 bytes per entry of DIR/callsites).  The stream files are
allocated in full at setup, so their size says nothing about the data.

uftrace: its per-thread data files DIR/<tid>.dat hold 16 bytes per event
(an entry or an exit): records = their size / 16, bytes = their size.

Reads only headers: a few milliseconds for a 3 GB trace.  Exit status 1 with
a message naming the file when something cannot be read.
"""
import os
import re
import struct
import sys

SUBBUF_MAGIC = 0x4253544B
CALLSITES_MAGIC = 0x5343544B


def ktrace(d):
    buf_size = None
    with open(os.path.join(d, "metadata")) as f:
        for line in f:
            if line.startswith("buf-size "):
                buf_size = int(line.split()[1])
    if not buf_size:
        raise ValueError(f"{d}/metadata: no buf-size line")
    records = nbytes = lost = 0
    for name in sorted(os.listdir(d)):
        if not re.fullmatch(r"trace[0-9]+", name):
            continue
        path = os.path.join(d, name)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            for off in range(0, size - 63, buf_size):
                f.seek(off)
                h = f.read(64)
                magic, hdr_size = struct.unpack_from("<IH", h, 0)
                if magic != SUBBUF_MAGIC:
                    continue
                used, sb_lost, nrec = struct.unpack_from("<III", h, 40)
                records += nrec
                nbytes += hdr_size + used
                lost += sb_lost
    cs = os.path.join(d, "callsites")
    if os.path.exists(cs):
        with open(cs, "rb") as f:
            h = f.read(64)
        magic, _ver, hdr_size, entry_size, _pad, cap, count = struct.unpack_from("<IHHIIQQ", h, 0)
        if magic == CALLSITES_MAGIC:
            nbytes += hdr_size + min(count, cap) * entry_size
    return f"records={records} bytes={nbytes} lost={lost}"


def uftrace(d):
    nbytes = 0
    for name in os.listdir(d):
        if re.fullmatch(r"[0-9]+\.dat", name):
            nbytes += os.path.getsize(os.path.join(d, name))
    return f"records={nbytes // 16} bytes={nbytes}"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("ktrace", "uftrace"):
        print("usage: tracestat.py ktrace|uftrace DIR", file=sys.stderr)
        return 2
    try:
        print(ktrace(sys.argv[2]) if sys.argv[1] == "ktrace" else uftrace(sys.argv[2]))
    except (OSError, ValueError, struct.error) as e:
        print(f"tracestat.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
