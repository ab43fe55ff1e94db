#!/bin/sh
# tests/formats_writers.sh - the writers of formats/ (JSON strings, Chrome
# trace events, CSV and JSON rows) read back by python3's json and csv
# modules: strings with quotes, backslashes, control characters, UTF-8 and
# lengths beyond the writers' stack buffers come back byte for byte;
# numbers at the edges (2^53, 2^64-1, 2^63-1, none, negative times) as the
# schema says.  The expected values are decoded from hex by python, not
# by ktrace's code.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
# every writer but perfetto.c (protoc-c's generated C) and ctf.c (libbabeltrace2), and not
# plugin.c (ktrace-export.so's table of them), as fuzz/Makefile
cc -std=gnu11 -D_GNU_SOURCE -O1 -I"$KTRACE_SRC" -I"$KTRACE_SRC/include" -o gen \
	"$KTRACE_SRC/tests/formats/gen.c" $(ls "$KTRACE_SRC"/formats/*.c | grep -v -e /perfetto.c -e /ctf.c -e /plugin.c) -lyajl -lm || exit 1
run ./gen "$T"
ok $rc "the generator ran"

cat >check.py <<'PY'
import csv, json, sys
S = [bytes.fromhex(l.strip()).decode("utf-8") for l in open("strings.hex")]
KEY = S.pop()
N = len(S)
def check(what, got, want):
    print(("ok" if got == want else "FAIL") + " " + what + ("" if got == want else ": got %r, want %r" % (got, want)))

dups = []
def pairs(kv):
    keys = [k for k, _ in kv]
    if len(set(keys)) != len(keys):
        dups.append(keys)
    return dict(kv)
d = json.load(open("te.json", encoding="utf-8"), object_pairs_hook=pairs)
check("te: no object has a key twice", dups, [])
ev = d["traceEvents"]
check("te: event count", len(ev), N + 2)
for i in range(N):
    e, a = ev[i], ev[i]["args"]
    check("te %d: name" % i, e["name"], S[i])
    check("te %d: cat" % i, e["cat"], S[(i + 1) % N])
    check("te %d: ph, scope" % i, (e["ph"], e.get("s")), ("X", None) if i % 2 else ("i", "t"))
    check("te %d: ts (us)" % i, e["ts"], (1000000 * i + 1234) / 1000)
    check("te %d: dur (us)" % i, e.get("dur"), 5.678 if i % 2 else None)
    check("te %d: pid, tid" % i, (e["pid"], e["tid"]), (10 + i, 20 + i))
    k = S[(i + 2) % N] or "empty"
    check("te %d: arg keys" % i, list(a), ["n", k, "addr", KEY, "flag"])
    check("te %d: value beyond 2^53 as hex, else a number" % i, a[k],
          "0xffffffffffffffff" if i == N - 1 else 2 ** 53)
    check("te %d: args" % i, (a["n"], a["addr"], a[KEY], a["flag"]), (i, "0xdeadbeef", S[i], True))
check("te: relative time before t0", (ev[N]["ts"], ev[N]["s"], "cat" in ev[N]), (-0.5, "g", False))
check("te: a repeated key made unique", ev[N]["args"], {"pid": 1, "pid#2": 2, "pid#3": "three"})
check("te: metadata", (ev[N + 1]["ph"], ev[N + 1]["args"]["name"]), ("M", S[1]))
check("te: otherData", d["otherData"], {"generator": S[2], "long": S[5]})

def rows(it):
    out = []
    for i, r in enumerate(it):
        out.append(r)
    return out
want = []
for i in range(N):
    want.append({"time_ns": -1234 if i == N - 1 else 2 ** 63 - 1 - i, "dur_ns": 100 + i if i % 3 else None,
                 "self_ns": 7 if i % 2 else None, "cpu": i, "pid": 1000 + i, "tid": 2000 + i,
                 "comm": S[i], "category": S[(i + 1) % N], "name": S[(i + 2) % N],
                 "args": S[(i + 3) % N]})
js = json.load(open("rows.json", encoding="utf-8"))["calls"]
check("json rows", js, want)
cs = list(csv.DictReader(open("rows.csv", encoding="utf-8", newline="")))
num = lambda v: None if v == "" else int(v)
cs = [dict(r, **{k: num(r[k]) for k in ("time_ns", "dur_ns", "self_ns", "cpu", "pid", "tid")}) for r in cs]
check("csv rows", cs, want)

# numbers: each as python writes it, in decimal and hex
bad = [l for l in open("nums.txt") if (lambda v, d, h, p: (d, h, p) != (str(int(v)), hex(int(v)), str(int(v))))(*l.split())]
check("numbers: fmt_u64_to(), fmt_hex_to(), fmt_put_u64() of %d values" % len(open("nums.txt").readlines()), bad, [])

# names that are not UTF-8: python's own decoder says what each must become
# (each byte it cannot decode as the text \xNN: errors="backslashreplace")
B = [bytes.fromhex(l.strip()) for l in open("bad.hex")]
W = [b.decode("utf-8", "backslashreplace") for b in B]
NB = len(B)
check("bad names: the test strings are not all UTF-8", sum(1 for b in B if b.decode("utf-8", "replace").encode() != b), NB - 1)
raw = open("bad.json", "rb").read()
check("bad.json: valid UTF-8", raw.decode("utf-8", "replace").encode() == raw, True)
d = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
ev = d["traceEvents"]
for i in range(NB):
    m, e = ev[2 * i], ev[2 * i + 1]
    check("bad %d: thread name" % i, m["args"]["name"], W[i])
    check("bad %d: event name, category" % i, (e["name"], e["cat"]), (W[i], W[(i + 1) % NB]))
    check("bad %d: argument key and value" % i, e["args"], {W[(i + 2) % NB]: W[(i + 3) % NB]})
t7 = [e for e in ev if e.get("tid") == 7]
check("E without B: written as a complete slice from the thread's first event",
      [(e["name"], e["ph"], e["ts"], e.get("dur"), e["args"]) for e in t7],
      [("first", "i", 2.0, None, {}), ("lost_entry", "X", 2.0, 7.0, {"begin_lost": True}),
       ("pair", "B", 10.0, None, {}), ("pair", "E", 11.0, None, {})])
check("E without B: counted in otherData", d["otherData"], {"begins_lost": 1})
rs = json.load(open("badrows.json", encoding="utf-8"))
check("bad rows", [(r["comm"], r["category"], r["name"], r["args"]) for r in rs],
      [(W[i], W[(i + 1) % NB], W[(i + 2) % NB], W[(i + 3) % NB]) for i in range(NB)])
import xml.etree.ElementTree as ET
root = ET.parse("bad.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
check("bad.svg: well-formed, title", root.find(ns + "title").text, W[0])
check("bad.svg: texts", [t.text for t in root.findall(ns + "text")], W)
PY
python3 check.py >check.out 2>&1
ok $? "python3 parsed the documents"
tap_results check.out
done_testing
