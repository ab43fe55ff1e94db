#!/usr/bin/env python3
"""tests/helpers/calltree.py - a call tree as comparable text, from ktrace or uftrace.

    calltree.py ktrace [--drop NAMES] < `ktrace kd -c DIR` (several concatenated: exec'd images)
    calltree.py ktrace-csv [--drop NAMES] < `ktrace kd -c --format=csv DIR` (the same)
    calltree.py uftrace [--drop NAMES] < `uftrace replay --no-pager -d DIR`

Prints one block per thread: a line "thread" and then one line "DEPTH NAME"
per call, in entry order; the blocks sorted by their text, so the thread
ids of two runs do not matter.  Independent of ktrace's code: it reads only
the text the two tools print.

uftrace: a line `NAME() {` or `NAME();` enters a call at the depth its
indentation gives; `} /* NAME */` closes the open call of that depth; a
close with no open call of that name at that depth in that thread is the
return from a call the thread inherited from the process that forked it
(uftrace shows the child's returns from fork() and main()): such calls are
listed first in the thread's block, outermost first, as they were entered
before anything the thread did.  Kernel events (`/* linux:... */`) are
left out.

ktrace: `kd -c` text, `|  ` per level, the Pid column, and the
"----- thread TID (...)" headers when there are several threads; a call's
" [unfinished]" mark is dropped (uftrace shows none).  kd -c draws the
levels from the calls in the trace; ktrace-csv takes each call's recorded
depth instead (the `depth=N` of `kd -c --format=csv`, in the same order):
the depth uftrace shows too when a thread never returns from a call it
inherited (a forked child that exec()s: uftrace shows its calls under the
main() it never leaves, kd -c at level 0).

--drop NAMES (comma-separated): calls of these functions are left out, and
the calls nested in them (until the depth comes back) moved up one level:
for the library functions ktrace does not hook on purpose
(kft/libcall.h: they never return, or return twice), which uftrace records.
"""
import csv
import re
import sys


def relevel(calls, drop):
    """calls: [(depth, name)] in entry order -> with the dropped names removed."""
    out = []
    stack = []  # depths of dropped calls still open
    for depth, name in calls:
        while stack and depth <= stack[-1]:
            stack.pop()
        if name in drop:
            stack.append(depth)
            continue
        out.append((depth - len(stack), name))
    return out


def parse_uftrace(lines):
    threads = {}  # tid -> {"open": {depth: name}, "inherited": [], "calls": []}
    order = []
    pat = re.compile(r"^\s*(?:[0-9.]+ [a-z]+)?\s*\[\s*(\d+)\]\s*\|\s(.*)$")
    for line in lines:
        m = pat.match(line.rstrip("\n"))
        if not m:
            continue
        tid, rest = int(m.group(1)), m.group(2)
        body = rest.lstrip(" ")
        depth = (len(rest) - len(body)) // 2
        t = threads.get(tid)
        if t is None:
            t = threads[tid] = {"open": {}, "inherited": [], "calls": []}
            order.append(tid)
        if body.startswith("/*"):
            continue  # kernel event
        m2 = re.match(r"^\} /\* (.*) \*/$", body)
        if m2:
            name = m2.group(1)
            if t["open"].get(depth) == name:
                del t["open"][depth]
            else:
                t["inherited"].append((depth, name))
            continue
        m3 = re.match(r"^(.*?)\(\)(?: \{|;)$", body)
        if not m3:
            continue
        name = m3.group(1)
        for d in [d for d in t["open"] if d >= depth]:
            del t["open"][d]
        if body.endswith("{"):
            t["open"][depth] = name
        t["calls"].append((depth, name))
    return [sorted(set(threads[tid]["inherited"])) + threads[tid]["calls"] for tid in order]


def parse_ktrace(lines):
    threads = {}
    order = []
    cur = None
    for line in lines:
        line = line.rstrip("\n")
        if re.match(r"^\s*Pid\s+Trace", line):
            cur = None  # the next directory's output begins
            continue
        m = re.match(r"^-+ thread (\d+) ", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"^\s*(\d+) ((?:\|  )*)(\S.*)$", line)
        if not m:
            continue
        tid = cur if cur is not None else int(m.group(1))
        name = m.group(3)
        if name.endswith(" [unfinished]"):
            name = name[: -len(" [unfinished]")]
        if tid not in threads:
            threads[tid] = []
            order.append(tid)
        threads[tid].append((len(m.group(2)) // 3, name))
    return [threads[tid] for tid in order]


def parse_ktrace_csv(lines):
    threads = {}
    order = []
    for row in csv.reader(lines):
        if len(row) < 10 or row[0] == "time_ns" or row[7] != "call":
            continue
        tid = int(row[5])
        args = dict(a.split("=", 1) for a in row[9].split(";") if "=" in a)
        if tid not in threads:
            threads[tid] = []
            order.append(tid)
        threads[tid].append((int(args.get("depth", "0")), row[8]))
    return [threads[tid] for tid in order]


def main():
    args = sys.argv[1:]
    drop = set()
    if "--drop" in args:
        i = args.index("--drop")
        drop = set(n for n in args[i + 1].split(",") if n)
        del args[i : i + 2]
    parsers = {"ktrace": parse_ktrace, "ktrace-csv": parse_ktrace_csv, "uftrace": parse_uftrace}
    if len(args) != 1 or args[0] not in parsers:
        sys.exit("usage: calltree.py ktrace|ktrace-csv|uftrace [--drop NAMES] < text")
    blocks = parsers[args[0]](sys.stdin.readlines())
    texts = []
    for calls in blocks:
        calls = relevel(calls, drop)
        if calls:
            texts.append("thread\n" + "".join("%d %s\n" % c for c in calls))
    sys.stdout.write("".join(sorted(texts)))


if __name__ == "__main__":
    main()
