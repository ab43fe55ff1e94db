#!/bin/sh
# tests/export_ctf.sh - `ktrace export --format=ctf -o OUTDIR`, read back by
# babeltrace2 (its source.ctf.fs and text sink; --clock-cycles prints the
# clock values, CLOCK_MONOTONIC ns, exactly) and checked by python against
# `ktrace export --format=csv` of the same trace, read with python's csv
# module:
#   - tests/formats/badname.c recorded under `ktrace record`: every call is
#     one func_entry at its entry time and one func_exit at entry + dur
#     (with duration_ns = dur) on its thread, names, tids, pids and CPUs as
#     the CSV says, 150 calls of work(); per thread the entries and exits
#     nest (each exit closes the innermost open entry); the non-UTF-8
#     process and thread names arrive as the text \xNN (computed here from
#     the names' bytes);
#   - a synthetic trace (tests/helpers/mktrace: static LOG2/LOG4 events, a
#     `lost` and a `dropped` gap, a kernel/ sub-trace of two CPU streams):
#     every event with its time, thread and arguments, the gaps as
#     ktrace:lost events, one stream file per thread and per kernel CPU,
#     -K leaving the kernel out;
#   - the output directory: mode 0700, files 0600, a non-empty directory
#     or a symbolic link refused (exit 1, nothing written), -o required
#     (exit 2).
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1

cat >check.py <<'PY'
import csv, re, sys
from collections import Counter

def utf8fix(b):
    """A name as valid UTF-8, an invalid byte as the text \\xNN (the rule of
    docs/READING.md), computed with python's decoder."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                out.append(b[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\\x%02x" % b[i])
            i += 1
    return "".join(out)

LINE = re.compile(r'^\[(\d+)\] \([^)]*\) (\S+) (\S+): \{ (.*) \}, \{ (.*) \}$')

def fields(s):
    """babeltrace2's text sink fields 'k = v, k = "str"' as a dict."""
    d, i = {}, 0
    while i < len(s):
        m = re.compile(r'(\w+) = ').match(s, i)
        k = m.group(1)
        i = m.end()
        if s[i] == '"':
            i += 1
            v = []
            while s[i] != '"':
                if s[i] == "\\":
                    i += 1
                    v.append({"n": "\n", "t": "\t", "r": "\r"}.get(s[i], s[i]))
                else:
                    v.append(s[i])
                i += 1
            i += 1
            d[k] = "".join(v)
        else:
            j = s.find(", ", i)
            j = len(s) if j < 0 else j
            v = s[i:j]
            d[k] = int(v, 16) if v.startswith("0x") else int(v)
            i = j
        if s.startswith(", ", i):
            i += 2
    return d

def ctf_events(path):
    ev = []
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            print("FAIL unparsed babeltrace2 line: %r" % line)
            continue
        ev.append((int(m.group(1)), m.group(3), fields(m.group(4)), fields(m.group(5))))
    return ev

def csv_rows(path):
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        return list(csv.DictReader(f))

def check(what, got, want):
    print(("ok" if got == want else "FAIL") + " " + what +
          ("" if got == want else ": got %r, want %r" % (got, want)))

mode = sys.argv[1]
ev = ctf_events(sys.argv[2])
rows = csv_rows(sys.argv[3])
if mode == "calls":
    calls = [r for r in rows if r["category"] == "call"]
    ent = [e for e in ev if e[1] == "lttng_ust_cyg_profile:func_entry"]
    ext = [e for e in ev if e[1] == "lttng_ust_cyg_profile:func_exit"]
    check("every event is an entry or an exit", len(ent) + len(ext), len(ev))
    check("entries = CSV calls", len(ent), len(calls))
    check("exits = CSV calls", len(ext), len(calls))
    check("150 calls of work()", sum(1 for e in ent if e[3]["name"] == "work"), 150)
    want = Counter((int(r["time_ns"]), int(r["tid"]), int(r["pid"]), int(r["cpu"] or -1), r["name"])
                   for r in calls)
    got = Counter((e[0], e[2]["vtid"], e[2]["vpid"], e[2]["cpu_id"], e[3]["name"]) for e in ent)
    check("entries: time (ns), tid, pid, cpu, name as the CSV's calls", got, want)
    want = Counter((int(r["time_ns"]) + int(r["dur_ns"]), int(r["tid"]), int(r["dur_ns"])) for r in calls)
    got = Counter((e[0], e[2]["vtid"], e[3]["duration_ns"]) for e in ext)
    check("exits: at entry + dur, duration_ns = dur", got, want)
    # procname: the CSV's comm bytes made UTF-8 here
    want = {int(r["tid"]): utf8fix(r["comm"].encode("utf-8", "surrogateescape")) for r in calls}
    got = {e[2]["vtid"]: e[2]["procname"] for e in ev}
    check("procname per thread = the comm with \\xNN for invalid bytes", got, want)
    check("process name", sorted(set(got.values())), sorted(["bad\\xff\\xfe\\x80name", "thr\\xc3(\\xff"]))
    # nesting per thread, in babeltrace2's (time) order
    stacks, bad = {}, 0
    for e in ev:
        st = stacks.setdefault(e[2]["vtid"], [])
        if e[1].endswith("func_entry"):
            st.append((e[3]["addr"], e[3]["depth"]))
        elif not st or st.pop() != (e[3]["addr"], e[3]["depth"]):
            bad += 1
    check("entries and exits nest on every thread", (bad, sum(len(s) for s in stacks.values())), (0, 0))
    times = [e[0] for e in ev]
    check("times never decrease", times, sorted(times))
else:
    evr = [r for r in rows if r["category"] not in ("call", "ktrace")]
    gaps = [r for r in rows if r["category"] == "ktrace"]
    def args(s):
        return {k: int(v) for k, v in (kv.split("=") for kv in s.split(";") if kv)}
    want = Counter((int(r["time_ns"]), int(r["tid"]), int(r["pid"]), r["name"],
                    tuple(sorted(args(r["args"]).items()))) for r in evr)
    got = Counter((e[0], e[2]["vtid"], e[2]["vpid"], e[1], tuple(sorted(e[3].items())))
                  for e in ev if e[1] != "ktrace:lost")
    check("events: time, tid, pid, name, arguments as the CSV's (%d)" % len(evr), got, want)
    want = Counter((int(r["time_ns"]), r["name"].strip("[]"), args(r["args"])["count"],
                    args(r["args"])["stream"]) for r in gaps)
    got = Counter((e[0], e[3]["kind"], e[3]["count"], e[3]["stream"]) for e in ev if e[1] == "ktrace:lost")
    check("gaps as ktrace:lost: time, kind, count, stream (%d)" % len(gaps), got, want)
    check("the trace has a lost and a dropped gap", sorted(g[1] for g in got), ["dropped", "lost"])
PY

# ---- a recorded program with non-UTF-8 names -------------------------------------
san=$(san_runtime)
cc -O1 -g -finstrument-functions -pthread -o badname "$KTRACE_SRC/tests/formats/badname.c" ||
	{ echo "Bail out! cannot compile badname"; exit 1; }
if [ -n "$san" ]; then
	LD_PRELOAD="$san" ASAN_OPTIONS=detect_leaks=0 "$KTRACE" record -o tr ./badname >/dev/null 2>&1
else
	"$KTRACE" record -o tr ./badname >/dev/null 2>&1
fi
ok $? "record badname"
run "$KTRACE" export --format=ctf -o bad.ctf tr
ok $rc "export --format=ctf"
is "$(cat err)" "" "nothing on stderr"
"$KTRACE" export --format=csv -o tr.csv tr
ok $? "export --format=csv"
babeltrace2 --clock-cycles bad.ctf >bt.txt 2>bt.err
ok $? "babeltrace2 reads the CTF trace"
python3 check.py calls bt.txt tr.csv >res.txt 2>&1
ok $? "the checker ran"
tap_results res.txt
head -1 bad.ctf/metadata >m1
is "$(cat m1)" "/* CTF 1.8 */" "metadata is TSDL of CTF 1.8"
is "$(stat -c %a bad.ctf)" 700 "OUTDIR mode 0700"
is "$(find bad.ctf -type f ! -perm 600 | wc -l)" 0 "its files are mode 0600"
is "$(ls bad.ctf | grep -c '^thread-')" 2 "a stream file per thread"
is "$(ls -a . | grep -c '^[.]bad[.]ctf[.]')" 0 "no staging directory left"

# ---- static events, gaps, a kernel sub-trace ------------------------------------
"$MKTRACE" -s 2 -r 100 -b 1024 --log4-every 7 --lost 0:1:5 --dropped 1:3 st >/dev/null &&
	"$MKTRACE" --kind cpu --clock mono -s 2 -r 20 st/kernel >/dev/null
ok $? "mktrace: an application trace with gaps and a kernel sub-trace"
run "$KTRACE" export --format=ctf -o st.ctf st
ok $rc "export --format=ctf of static and kernel events"
"$KTRACE" export --format=csv -o st.csv st
babeltrace2 --clock-cycles st.ctf >st.txt 2>st.err
ok $? "babeltrace2 reads it"
python3 check.py events st.txt st.csv >res.txt 2>&1
ok $? "the checker ran"
tap_results res.txt
is "$(ls st.ctf | tr '\n' ' ')" "kernel-cpu0 kernel-cpu1 metadata thread-1000 thread-1001 " \
	"a stream file per thread and per kernel CPU"
run "$KTRACE" export --format=ctf -K -o st-k.ctf st
ok $rc "export -K"
is "$(ls st-k.ctf | tr '\n' ' ')" "metadata thread-1000 thread-1001 " "-K: no kernel streams"

# ---- the output directory ----------------------------------------------------------
mkdir full && echo x >full/keep
run "$KTRACE" export --format=ctf -o full tr
is "$rc" 1 "a non-empty directory: exit 1"
like err "full: not empty" "... saying so"
is "$(ls full)" keep "... and leaving it alone"
mkdir empty && chmod 755 empty
run "$KTRACE" export --format=ctf -o empty tr
ok $rc "an empty directory is used"
is "$(stat -c %a empty)" 700 "... mode 0700"
test -f empty/metadata
ok $? "... with the trace in it"
mkdir target && ln -s target link
run "$KTRACE" export --format=ctf -o link tr
is "$rc" 1 "a symbolic link: exit 1"
is "$(ls target | wc -l)" 0 "... nothing written through it"
run "$KTRACE" export --format=ctf tr
is "$rc" 2 "no -o: exit 2"
like err "give it with -o OUTDIR" "... saying -o OUTDIR is required"

done_testing
