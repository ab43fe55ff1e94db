#!/usr/bin/env python3
# tests/kernel/check_chrome.py - validate a Chrome trace-event JSON file (the
# "JSON Object Format" of the Trace Event Format document that
# chrome://tracing and ui.perfetto.dev read), as `ktrace export
# --format=chrome` writes it.  Prints one "ok"/"error: ..." line per check
# class and "summary KEY=VALUE ..." for the test to compare; exit 1 on errors.
#
# Checks: top level is an object with a traceEvents array; every event has
# name (string), ph (one of the phases used: X B E i M), pid and tid
# (non-negative integers); every event but M has a numeric ts >= 0; X has a
# numeric dur >= 0; i has s in g/p/t; M is process_name, thread_name or
# process_sort_index with the matching args; args is an object; X slices on
# one thread nest properly (a slice starting inside another ends inside it,
# to the ns), as Perfetto requires; B/E balance per thread; no object has a
# key twice (JSON readers keep one of them).
import json
import sys
from collections import defaultdict

def main(path):
    errors = []
    dups = []

    def pairs(kv):
        keys = [k for k, _ in kv]
        if len(set(keys)) != len(keys) and len(dups) < 5:
            dups.append(sorted(k for k in set(keys) if keys.count(k) > 1))
        return dict(kv)
    with open(path) as f:
        d = json.load(f, object_pairs_hook=pairs)
    for k in dups:
        errors.append("duplicate keys in an object: %r" % (k,))
    if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list):
        print("error: no traceEvents array")
        return 1
    ev = d["traceEvents"]
    phases = defaultdict(int)
    slices = defaultdict(list)
    depth = defaultdict(int)
    names = set()
    thread_names = {}
    for i, e in enumerate(ev):
        def err(msg):
            if len(errors) < 20:
                errors.append("event %d: %s: %r" % (i, msg, e))
        if not isinstance(e, dict):
            err("not an object"); continue
        ph = e.get("ph")
        phases[ph] += 1
        if not isinstance(e.get("name"), str) or not e["name"]:
            err("name")
        if ph not in ("X", "B", "E", "i", "M"):
            err("phase")
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int) or isinstance(e.get(k), bool) or e[k] < 0:
                err(k)
        if "args" in e and not isinstance(e["args"], dict):
            err("args")
        if ph == "M":
            if e["name"] not in ("process_name", "thread_name", "process_sort_index"):
                err("metadata name")
            elif e["name"] == "process_sort_index":
                if not isinstance(e.get("args", {}).get("sort_index"), int):
                    err("sort_index")
            elif not isinstance(e.get("args", {}).get("name"), str):
                err("metadata args.name")
            if e["name"] == "thread_name":
                thread_names[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            err("ts")
            continue
        names.add(e["name"])
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                err("dur")
                continue
            slices[(e["pid"], e["tid"])].append((round(ts * 1000), round((ts + dur) * 1000), e["name"]))
        elif ph == "i":
            if e.get("s", "t") not in ("g", "p", "t"):
                err("instant scope")
        elif ph == "B":
            depth[(e["pid"], e["tid"])] += 1
        elif ph == "E":
            depth[(e["pid"], e["tid"])] -= 1
            if depth[(e["pid"], e["tid"])] < 0:
                err("E without B")
    bad_nest = 0
    for key, v in slices.items():
        v.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s, t, n in v:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and t > stack[-1]:
                bad_nest += 1
                if len(errors) < 20:
                    errors.append("slice %s [%d,%d] on %s overlaps its parent ending %d" % (n, s, t, key, stack[-1]))
            stack.append(t)
    unnamed = [k for k in slices if k not in thread_names]
    for k in unnamed:
        errors.append("thread %s has slices but no thread_name" % (k,))
    for e in errors:
        print("error: " + e)
    print("summary events=%d X=%d i=%d M=%d B=%d E=%d badnest=%d threads=%d" % (
        len(ev), phases["X"], phases["i"], phases["M"], phases["B"], phases["E"], bad_nest, len(slices)))
    print("names " + " ".join(sorted(n.replace(" ", "_") for n in names)))
    return 1 if errors else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
