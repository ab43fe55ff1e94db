#!/bin/sh
# tests/export_perfetto.sh - `ktrace export --format=perfetto` (Perfetto's
# protobuf trace, formats/perfetto.c) read back by protoc (protobuf-compiler)
# against the vendored perfetto.protos schema, its text parsed by python3
# and compared with `export --format=csv` (python's csv module), not with
# ktrace's writer: per thread, the call slices rebuilt from the begin/end
# packets (interned names resolved, delta timestamps summed per sequence,
# begin/end nesting replayed in time order as trace_processor's sort does)
# equal the CSV's calls (entry, duration, name); badname's 100/50 work()
# calls; its non-UTF-8 process and thread names arrive as UTF-8 with \xNN;
# timestamps never decrease within a sequence; static events (a mktrace
# trace) as instants and klog slices with their arguments; with root and
# tracefs, a `record --kernel` trace's context switches as ftrace
# sched_switch events and its other kernel events as instants.
# chrome and json still write Chrome JSON.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
cc -O1 -g -finstrument-functions -pthread -o badname "$KTRACE_SRC/tests/formats/badname.c" || exit 1
PROTO_I=$KTRACE_SRC/third_party/perfetto
decode() { protoc --decode=perfetto.protos.Trace -I"$PROTO_I" protos/perfetto/trace/trace.proto <"$1" >"$2"; }

cat >check.py <<'PY'
# check.py PB_TEXT CSV MODE: compare protoc's text of a Perfetto trace with the CSV export
import codecs, collections, csv, re, sys

def parse(path):
    """protoc's text format -> nested dicts of lists (field -> [values])."""
    root = {}; stack = [root]
    for line in open(path, encoding="ascii"):
        line = line.strip()
        if line.endswith("{"):
            d = {}; stack[-1].setdefault(line[:-1].strip(), []).append(d); stack.append(d)
        elif line == "}":
            stack.pop()
        elif line:
            k, v = line.split(": ", 1)
            if v.startswith('"'):
                v = codecs.escape_decode(v[1:-1].encode("ascii"))[0].decode("utf-8")  # strict UTF-8
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            stack[-1].setdefault(k, []).append(v)
    return root

def one(d, k, dflt=None):
    return d[k][0] if k in d else dflt

def res(what, good, detail=""):
    print(("ok " if good else "FAIL ") + what + ("" if good else ": " + detail))

pb = parse(sys.argv[1]); mode = sys.argv[3]
# (the CSV carries names as recorded, any bytes: only numbers and ASCII names are compared)
rows = list(csv.DictReader(open(sys.argv[2], encoding="utf-8", errors="surrogateescape", newline="")))
tracks = {}      # uuid -> descriptor
procs = {}
seqclock = {}    # seq -> current value of its incremental clock
mono_ok = True
interned = collections.defaultdict(lambda: collections.defaultdict(dict))  # seq -> kind -> iid -> name
events = []      # (ts, order, seq, track_uuid, type, name, cat, args)
ftrace = []      # (ts, cpu, kind, fields)
lastts = {}
for i, p in enumerate(pb.get("packet", [])):
    seq = one(p, "trusted_packet_sequence_id", 0)
    if "track_descriptor" in p:
        td = p["track_descriptor"][0]; tracks[one(td, "uuid")] = td
    if "clock_snapshot" in p:
        for c in p["clock_snapshot"][0]["clocks"]:
            if one(c, "clock_id") == 64:
                seqclock[seq] = one(c, "timestamp")
    for idd in p.get("interned_data", []):
        for kind in ("event_names", "event_categories", "debug_annotation_names"):
            for e in idd.get(kind, []):
                interned[seq][kind][one(e, "iid")] = one(e, "name")
    if "track_event" in p:
        te = p["track_event"][0]
        if one(p, "timestamp_clock_id") == 3:
            ts = one(p, "timestamp")
        else:
            seqclock[seq] += one(p, "timestamp"); ts = seqclock[seq]
        if ts < lastts.get(seq, 0):
            mono_ok = False
        lastts[seq] = ts
        name = one(te, "name") or interned[seq]["event_names"].get(one(te, "name_iid"))
        if "name_iid" in te and name is None:
            name = "<UNRESOLVED>"
        cats = [interned[seq]["event_categories"].get(c, "<UNRESOLVED>") for c in te.get("category_iids", [])]
        args = {}
        for a in te.get("debug_annotations", []):
            k = one(a, "name") or interned[seq]["debug_annotation_names"].get(one(a, "name_iid"), "<UNRESOLVED>")
            v = [one(a, f) for f in ("uint_value", "string_value", "bool_value", "pointer_value") if f in a][0]
            args[k] = v
        events.append((ts, i, seq, one(te, "track_uuid"), one(te, "type"), name, cats[0] if cats else None, args))
    for b in p.get("ftrace_events", []):
        for e in b.get("event", []):
            kind = [k for k in ("sched_switch", "sched_wakeup") if k in e][0]
            ftrace.append((one(e, "timestamp"), one(b, "cpu"), kind, e[kind][0]))
res("timestamps never decrease within a sequence", mono_ok)
res("every event's track is declared", all(e[3] in tracks for e in events))

def tid_of(uuid):
    th = tracks[uuid].get("thread")
    return str(one(th[0], "tid")) if th else None

# call slices per thread: replay begin/end per track in (time, file order), as trace_processor sorts
slices = collections.defaultdict(collections.Counter); bad_nest = 0
open_ = collections.defaultdict(list)
for ts, i, seq, uuid, typ, name, cat, args in sorted(events):
    if seq != 2:
        continue
    if typ == "TYPE_SLICE_BEGIN":
        open_[uuid].append((ts, name))
    elif typ == "TYPE_SLICE_END":
        if not open_[uuid]:
            bad_nest += 1; continue
        t0, n = open_[uuid].pop()
        slices[tid_of(uuid)][(t0, ts - t0, n)] += 1
res("call slices: every end closes an open slice, none left open",
    bad_nest == 0 and not any(open_.values()), "%d ends without a begin" % bad_nest)
want = collections.defaultdict(collections.Counter)
for r in rows:
    if r["category"] == "call":
        want[r["tid"]][(int(r["time_ns"]), int(r["dur_ns"]), r["name"])] += 1
res("call slices per thread equal the CSV's calls (entry, duration, name)", slices == want,
    "got %d threads/%d slices, want %d/%d" % (len(slices), sum(map(sum, [c.values() for c in slices.values()])),
                                              len(want), sum(map(sum, [c.values() for c in want.values()]))))
names = {}
for uuid, td in tracks.items():
    for th in td.get("thread", []):
        names[str(one(th, "tid"))] = one(th, "thread_name")
    for pr in td.get("process", []):
        procs[one(pr, "pid")] = one(pr, "process_name")

if mode == "badname":
    work = {names[t]: sum(n for (a, b, nm), n in c.items() if nm == "work") for t, c in slices.items()}
    res("badname: work() 100 times in the main thread, 50 in the other",
        work == {"bad\\xff\\xfe\\x80name": 100, "thr\\xc3(\\xff": 50}, repr(work))
    res("badname: the process name is UTF-8 with \\xNN", list(procs.values()) == ["bad\\xff\\xfe\\x80name"],
        repr(procs))

if mode == "static":
    got = collections.Counter(); wantc = collections.Counter()
    for ts, i, seq, uuid, typ, name, cat, args in events:
        if seq == 1:
            got[(tid_of(uuid), ts, typ, name if typ == "TYPE_INSTANT" else name or "", cat,
                 tuple(sorted(args.items())))] += 1
    for r in rows:
        nm = r["name"]; typ = "TYPE_INSTANT"
        m = re.fullmatch(r"(.*):(entry|E1|exit|E2)", nm)  # klog's codes 1 and 2 (named or not)
        if m and m.group(2) in ("entry", "E1"):
            typ, nm = "TYPE_SLICE_BEGIN", m.group(1)
        elif m:
            typ, nm = "TYPE_SLICE_END", ""
        a = tuple(sorted((k, int(v)) for k, v in (kv.split("=") for kv in r["args"].split(";") if kv)))
        wantc[(r["tid"], int(r["time_ns"]), typ, nm, r["category"], a)] += 1
    res("static events: instants and klog slices equal the CSV's rows (thread, time, name, category, args)",
        got == wantc, "got %d, want %d; e.g. got %r want %r" % (sum(got.values()), sum(wantc.values()),
        sorted(got - wantc)[:2], sorted(wantc - got)[:2]))

if mode == "kernel":
    sw = [r for r in rows if r["name"] == "PROCESS_CONTEXTSWITCH"]
    fsw = [e for e in ftrace if e[2] == "sched_switch"]
    res("kernel: one ftrace sched_switch per context switch", len(fsw) == len(sw) > 0,
        "%d vs %d" % (len(fsw), len(sw)))
    key = lambda ts, cpu, a, b: (ts, cpu, a, b)
    g = sorted(key(e[0], e[1], one(e[3], "prev_pid"), one(e[3], "next_pid")) for e in fsw)
    w = sorted(key(int(r["time_ns"]), int(r["cpu"]), *[int(dict(kv.split("=") for kv in r["args"].split(";"))[k])
               for k in ("prev_pid", "next_pid")]) for r in sw)
    res("kernel: sched_switch time, CPU, prev_pid, next_pid as the CSV", g == w, repr((g[:2], w[:2])))
    kev = collections.Counter((int(r["time_ns"]), r["name"]) for r in rows if r["category"] not in ("call",)
                              and r["name"].isupper() and r["name"] not in
                              ("PROCESS_CONTEXTSWITCH", "PROCESS_WAKEUP", "PROCESS_WAKEUP_NEW"))
    gk = collections.Counter((e[0], e[5]) for e in events if e[2] == 1 and not tid_of(e[3]))
    res("kernel: other kernel events as instants on CPU tracks", gk == kev and len(kev) > 0,
        "%d vs %d" % (sum(gk.values()), sum(kev.values())))
    nw = sum(1 for r in rows if r["name"] in ("PROCESS_WAKEUP", "PROCESS_WAKEUP_NEW"))
    res("kernel: one sched_wakeup per wakeup", sum(1 for e in ftrace if e[2] == "sched_wakeup") == nw)
PY

check() { # PB CSV MODE WHAT
	decode "$1" "$1.txt"
	ok $? "$4: protoc decodes it as perfetto.protos.Trace"
	python3 check.py "$1.txt" "$2" "$3" >check.out 2>&1
	ok $? "$4: python3 read protoc's text and the CSV"
	tap_results check.out "$4"
}

# ---- calls: badname (non-UTF-8 names) -----------------------------------------
run "$KTRACE" record -q -o bn ./badname
is "$rc" 0 "record badname: exit 0"
run "$KTRACE" export --format=perfetto -o bn.pb bn
is "$rc" 0 "export --format=perfetto: exit 0"
run "$KTRACE" export --format=csv -o bn.csv bn
check bn.pb bn.csv badname badname
# the whole document is Trace.packet fields (0x0a), not JSON
ok "$(od -An -tx1 -N1 bn.pb | grep -q 0a; echo $?)" "the file starts with a Trace.packet field"

# ---- static events (synthetic trace: klog entry/exit and other codes, LOG2/LOG4) ----
"$KTRACE_BUILD/tests/helpers/mktrace" -s 3 -r 200 --log4-every 7 mk >/dev/null || exit 1
run "$KTRACE" export --format=perfetto -o mk.pb mk
is "$rc" 0 "static events: export exit 0"
"$KTRACE" export --format=csv -o mk.csv mk
check mk.pb mk.csv static static

# ---- chrome and json keep the JSON writer ---------------------------------------
for f in chrome json; do
	run "$KTRACE" export --format=$f -o bn.$f.json bn
	python3 -c 'import json, sys; d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "surrogateescape"))
sys.exit(not d["traceEvents"])' bn.$f.json
	ok $? "--format=$f: Chrome JSON still"
done
run "$KTRACE" export --format=perfetto -o /dev/full bn
is "$rc" 1 "export --format=perfetto to a full disk: exit 1"

# ---- kernel: a record --kernel trace (root with tracefs, as tests/kernel_record.sh) ----
if [ "$(id -u)" -ne 0 ] || ! grep -qw tracefs /proc/filesystems; then
	done_testing
fi
run "$KTRACE" record -q --kernel -o kb ./badname
is "$rc" 0 "record --kernel badname: exit 0"
run "$KTRACE" export --format=perfetto -o kb.pb kb
is "$rc" 0 "kernel: export exit 0"
"$KTRACE" export --format=csv -o kb.csv kb
check kb.pb kb.csv kernel kernel
check kb.pb kb.csv badname "kernel+calls"
done_testing
