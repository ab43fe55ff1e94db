#!/usr/bin/env python3
# tests/kernel/check_png.py - decode a PNG (8-bit RGB or RGBA, any filter,
# not interlaced: what rsvg-convert writes) with zlib alone and report its
# size and how many pixels have each of the given colours.
#
#   check_png.py FILE RRGGBB...   prints "size W H" and "colour RRGGBB N" lines
import struct
import sys
import zlib

def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, bits, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            if bits != 8 or ctype not in (2, 6) or inter:
                raise SystemExit("unsupported PNG: bits %d type %d interlace %d" % (bits, ctype, inter))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, off = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[off]; line = bytearray(raw[off + 1:off + 1 + stride]); off += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line)); prev = line
    return w, h, bpp, rows

def main():
    w, h, bpp, rows = decode(sys.argv[1])
    want = {c.lower(): 0 for c in sys.argv[2:]}
    for r in rows:
        for x in range(0, len(r), bpp):
            key = "%02x%02x%02x" % (r[x], r[x + 1], r[x + 2])
            if key in want:
                want[key] += 1
    print("size %d %d" % (w, h))
    for c, n in want.items():
        print("colour %s %d" % (c, n))

main()
