#!/bin/sh
# tests/export_names.sh - a process and a thread whose names are not UTF-8
# (tests/formats/badname.c), recorded with their kernel events, read back
# from every text export by the third-party parser of its format:
# python3's json (print --json, export --format=chrome, kd --format=json,
# kd -c --format=json), python3's csv (print -C, export --format=csv) and
# xml.etree (timeline --svg).  The names each must carry are computed by
# python from the bytes the program gave prctl() (every byte that is not
# UTF-8 as the text \xNN: errors="backslashreplace"), not by ktrace.
#
# A flight-recorder trace (tests/helpers/mktrace) checks that exits whose
# entry was overwritten still make slices viewers keep (no lone "E").
# The timeline is checked for what a reader of a many-task picture needs:
# a lane per CPU showing which task ran there, the time axis above and
# below the lanes, and task labels without a placeholder pid.  As another
# user than root the kernel part cannot be recorded: the application-only
# checks still run and the kernel ones are asserted to be impossible.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

cd "$T" || exit 1
san_preload
cc -O1 -g -finstrument-functions -pthread -o badname "$KTRACE_SRC/tests/formats/badname.c" ||
	{ echo "Bail out! cannot compile badname"; exit 1; }

kernel=0
if [ "$(id -u)" -eq 0 ] && grep -qw tracefs /proc/filesystems; then
	kernel=1
	run "$KTRACE" record -q --kernel -o d ./badname
else
	run "$KTRACE" record -q -o d ./badname
fi
is "$rc" 0 "record badname: exit 0"

run "$KTRACE" print --json d
cp out p.json
is "$rc" 0 "print --json: exit 0"
run "$KTRACE" export --format=chrome -o e.json d
is "$rc" 0 "export --format=chrome: exit 0"
run "$KTRACE" kd --format=json d
cp out kd.json
is "$rc" 0 "kd --format=json: exit 0"
run "$KTRACE" kd -c --format=json d
cp out kdc.json
is "$rc" 0 "kd -c --format=json: exit 0"
run "$KTRACE" print -C d
cp out p.csv
is "$rc" 0 "print -C: exit 0"
run "$KTRACE" export --format=csv -o e.csv d
is "$rc" 0 "export --format=csv: exit 0"
run "$KTRACE" timeline --all --svg t.svg d
is "$rc" 0 "timeline --svg: exit 0"
run "$KTRACE" timeline --all --summary d
is "$rc" 0 "timeline --summary: exit 0"
cp "$T/out" summary.txt

# a flight-recorder trace whose oldest entries were overwritten: exits
# without their entry (klog's codes 2 without 1); mktrace's records are
# predictable (tests/helpers/mktrace.c), so python knows which
"$KTRACE_BUILD/tests/helpers/mktrace" --flight -s 2 -r 1000 fl >mk.out
run "$KTRACE" export --format=chrome -o fl.json fl
is "$rc" 0 "export of a flight-recorder trace: exit 0"

cat >check.py <<'PY'
import csv, json, re, sys
import xml.etree.ElementTree as ET

kernel = sys.argv[1] == "1"
MAIN = b"bad\xff\xfe\x80name".decode("utf-8", "backslashreplace")
THR = b"thr\xc3\x28\xff".decode("utf-8", "backslashreplace")

def check(what, got, want):
    print(("ok" if got == want else "FAIL") + " " + what + ("" if got == want else ": got %r, want %r" % (got, want)))

def strict(path):
    raw = open(path, "rb").read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print("FAIL %s: not UTF-8: %s" % (path, e))
        return raw.decode("utf-8", "replace")

def dupkeys(kv):
    keys = [k for k, _ in kv]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(kv)

for f in ("p.json", "e.json"):
    d = json.loads(strict(f), object_pairs_hook=dupkeys)
    ev = d["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check(f + ": thread names", {MAIN, THR} <= names, True)
    calls = [e for e in ev if e.get("cat") == "call" and e["name"] == "work"]
    check(f + ": work() calls", len(calls), 150)
    tids = {e["tid"] for e in calls}
    check(f + ": on two threads", len(tids), 2)
    check(f + ": call arguments the same for every call of work()",
          len({json.dumps(e["args"], sort_keys=True) for e in calls}), 1)
    if f == "e.json":
        check(f + ": kernel events present", any(e.get("pid") == 1000000000 for e in ev), kernel)

kd = json.loads(strict("kd.json"))["functions"]
check("kd.json: work() counted", [r["count"] for r in kd if r["name"] == "work"], [150])
kc = json.loads(strict("kdc.json"))["calls"]
check("kdc.json: comm of work() calls", sorted({r["comm"] for r in kc if r["name"] == "work"}), sorted([MAIN, THR]))
for f in ("p.csv", "e.csv"):
    rows = list(csv.DictReader(open(f, encoding="utf-8", newline="")))
    work = [r for r in rows if r["category"] == "call" and r["name"] == "work"]
    check(f + ": work() rows", len(work), 150)
    check(f + ": their comms", sorted({r["comm"] for r in work}), sorted([MAIN, THR]))

# every E closes a B of its thread (viewers drop an E they cannot pair)
d = json.loads(strict("fl.json"))
ev = sorted((e for e in d["traceEvents"] if e["ph"] in "BEX"), key=lambda e: (e["ts"], e["ph"] != "X"))
open_b, unpaired = {}, 0
for e in ev:
    if e["ph"] == "B":
        open_b[e["tid"]] = open_b.get(e["tid"], 0) + 1
    elif e["ph"] == "E":
        if open_b.get(e["tid"], 0):
            open_b[e["tid"]] -= 1
        else:
            unpaired += 1
lost = sorted((e for e in ev if e["ph"] == "X" and e["args"].get("begin_lost")), key=lambda e: e["tid"])
check("flight: no E without its B", unpaired, 0)
# mktrace: "records N kept K"; record i of stream s (tid 1000+s, S streams) is
# global g = i*S+s at 1e12 + 1000*g ns, an entry if i%10 == 0, an exit if 9
f = open("mk.out").read().split()
S, R, K = 2, int(f[1]) // 2, int(f[3])  # records and kept over all streams
i0 = R - K // S
want = []
for s in range(S):
    if i0 % 10:
        i = i0 + (9 - i0 % 10)
        want.append((1000 + s, (10**12 + 1000 * (i * S + s)) / 1000))
check("flight: exits whose entry was overwritten became X slices ending at the exit",
      [(e["tid"], round(e["ts"] + e["dur"], 3)) for e in lost], want)
check("flight: ... counted in otherData", d["otherData"].get("begins_lost"), len(want))
check("flight: ... starting at their thread's first event",
      [e["ts"] for e in lost], [min(x["ts"] for x in d["traceEvents"] if x["ph"] != "M" and x.get("tid") == e["tid"]) for e in lost])

svg = ET.parse("t.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
groups = {}
for g in svg.iter(ns + "g"):
    if g.get("class"):
        groups.setdefault(g.get("class"), []).append(g)
labels = [g.find(ns + "text").text for g in groups.get("task", [])]
check("svg: a lane labelled with each badname thread",
      sum(1 for l in labels if l.startswith(MAIN + " ") or l.startswith(THR + " ")), 2)
check("svg: no placeholder pid 0 in labels", [l for l in labels if re.search(r" 0/| 0$", l)], [])
top = [t.text for t in groups["axis-top"][0].findall(ns + "text")]
bottom = [t.text for t in groups["axis-bottom"][0].findall(ns + "text")]
check("svg: the axis above and below the lanes, same ticks", top[:-1], bottom[:-1])
check("svg: ticks start at 0 ms", top[0], "0")
cpus = groups.get("cpu", [])
check("svg: CPU lanes (kernel events recorded)", len(cpus) > 0, kernel)
if kernel:
    tips = {t.text for g in cpus for t in g.iter(ns + "title")}
    check("svg: the badname threads ran on a CPU lane", {l for l in labels if l.startswith((MAIN, THR))} <= tips, True)
    summ = open("summary.txt", "rb").read().decode("utf-8", "replace")
    check("summary: a line per CPU", bool(re.search(r"^cpu 0: the tasks shown ran [0-9.]+ ms", summ, re.M)), True)
PY
python3 check.py "$kernel" >check.out 2>&1
ok $? "python3 parsed every output"
tap_results check.out
done_testing
