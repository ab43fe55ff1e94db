#!/bin/sh
# tests/kft_report.sh - the reports a uftrace user checks first, on programs
# with a known call structure (tests/kft/shapes.c, tests/kft/cxx.cc): kd's
# Count, Time and Local against answers computed here, independently, by
# python3 from the raw calls (entry, duration, depth), and against the
# programs' own counts; recursion counted once; C++ names demangled; one
# signal-handler section per handler call; record's -F/-N/-D/-t/-T; the
# readers' shared options, formats (parsed by python3's csv and json),
# pager and colours; info and graph; output errors; the stack watch's
# independence from the stack's placement.
. "$KTRACE_SRC/tests/helpers/tap.sh"
# the programs' own calls: library calls (on by default) are tests/kft_plt.sh's
KTRACE_LIBCALL=0
export KTRACE_LIBCALL
cd "$T" || exit 1
cc -O1 -g -finstrument-functions -o shapes "$KTRACE_SRC/tests/kft/shapes.c" || exit 1
g++ -O1 -g -finstrument-functions -I"$KTRACE_SRC/include" -o cxx "$KTRACE_SRC/tests/kft/cxx.cc" || exit 1
# An ASan/UBSan build of libktrace.so needs its runtime first in the
# uninstrumented programs (as tests/kernel_record.sh does).
san_preload

# The independent answer: per function, calls, total time counted once per
# outermost call, and self time, from export's raw rows (time_ns, dur_ns,
# tid, name, depth); compared exactly with kd --format=csv.
cat >check.py <<'PY'
import csv, sys
calls = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["category"] != "call":
        continue
    depth = int(dict(kv.split("=") for kv in r["args"].split(";"))["depth"])
    calls.setdefault(r["tid"], []).append((int(r["time_ns"]), depth, int(r["dur_ns"]), r["name"]))
want = {}
for tid, cs in calls.items():
    cs.sort()
    stack = []  # (end, depth, name, index of the child-duration sum)
    for entry, depth, dur, name in cs:
        while stack and not (entry + dur <= stack[-1][0] and depth > stack[-1][1]):
            stack.pop()
        w = want.setdefault(name, [0, 0, 0])
        w[0] += 1
        if not any(s[2] == name for s in stack):
            w[1] += dur                      # outermost: counts once
        w[2] += dur
        if stack:
            want[stack[-1][2]][2] -= dur     # the caller's self time
        stack.append((entry + dur, depth, name))
got = {r["name"]: (int(r["count"]), int(r["total_ns"]), int(r["self_ns"]))
       for r in csv.DictReader(open(sys.argv[2]))}
bad = [n for n in want if tuple(want[n]) != got.get(n)]
for n in bad:
    print("# %s: computed %s, kd %s" % (n, want[n], got.get(n)))
main = got.get("main", (0, 0, 0))[1]
over = [n for n in got if got[n][1] > main]
for n in over:
    print("# %s: Time %d above main's %d" % (n, got[n][1], main))
sys.exit(1 if bad or over or not want else 0)
PY

check() { # DIR DESC
	"$KTRACE" export --format=csv -o "$T/raw.csv" "$1" && "$KTRACE" kd --format=csv "$1" >"$T/kd.csv" &&
		python3 check.py "$T/raw.csv" "$T/kd.csv"
	ok $? "$2: kd Count, Time (recursion once) and Local equal the independent answer"
}
count() { # FILE FUNCTION -> kd's count
	python3 -c 'import csv,sys; print(next((r["count"] for r in csv.DictReader(open(sys.argv[1])) if r["name"] == sys.argv[2]), "none"))' "$1" "$2"
}

run "$KTRACE" record -q -o fib ./shapes fib 20
is "$rc" 0 "record fib(20)"
check fib "fib(20)"
"$KTRACE" kd --format=csv fib >kd.csv
is "$(count kd.csv fib)" "$(sed -n 's/^fib //p' fib.out 2>/dev/null || echo 21891)" "fib: 21891 calls"
is "$(count kd.csv fib)" 21891 "fib: 2 F(21) - 1 = 21891 calls, as the program counted"
run "$KTRACE" record -q -o mutual ./shapes mutual 40
check mutual "even/odd mutual recursion"

# C++: demangled names, templates, exceptions, the header as C++
run "$KTRACE" record -q -o cxxt ./cxx
like "$T/out" "^thrower 3$" "C++ program ran (exception caught)"
check cxxt "C++ (std::sort's recursion, templates, exceptions)"
"$KTRACE" kd --format=csv cxxt >kd.csv
is "$(count kd.csv 'geo::Rect::area() const')" 5 "kd: geo::Rect::area() const demangled, 5 calls"
is "$(count kd.csv 'thrower(int)')" 3 "kd: thrower(int) 3 calls, its exits seen through the exception"
is "$(count kd.csv 'int total<int>(std::vector<int, std::allocator<int> > const&)')" 1 "a template instance"
"$KTRACE" kd --no-demangle --format=csv cxxt >kd.csv
is "$(count kd.csv _ZNK3geo4Rect4areaEv)" 5 "kd --no-demangle: the symbol table's name"
run "$KTRACE" addr2sym -H cxxt
like "$T/out" " geo::Rect::area\(\) const " "addr2sym demangles"
run "$KTRACE" print cxxt
like "$T/out" "geo::Rect::area\(\) const " "print demangles"
grep -q 'geo::Rect::area() const' raw.csv
ok $? "export demangles"

# signal handlers with onlyints: one section per handler invocation
printf 'filter onlyints\n' >onlyints.kft
run "$KTRACE" record -q --config onlyints.kft -o sig ./shapes signals 23
is "$(sed -n 's/^handler_work //p' "$T/out")" 23 "the program counted 23 handler calls"
run "$KTRACE" kd -c sig
is "$(grep -c '!!!! start' "$T/out")" 23 "kd -c: 23 '!!!! start' lines"
is "$(grep -c '!!!! end' "$T/out")" 23 "kd -c: 23 '!!!! end' lines"
"$KTRACE" kd --format=csv sig >kd.csv
is "$(count kd.csv handler_work)" 23 "kd: 23 calls of handler_work"

# print -C on a function trace: the shared row schema, every row as wide as the header
"$KTRACE" print -C sig >print.csv
python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
calls = [r for r in rows if r["category"] == "call"]
bad = [r for r in rows if None in r or None in r.values() or not r["time_ns"].isdigit()]
print(len(bad), sum(r["name"] == "handler_work" for r in calls), all(r["dur_ns"].isdigit() for r in calls))' \
	print.csv >print.check
is "$(cat print.check)" "0 23 True" \
	"print -C on a function trace: python3 csv reads every row with the header's columns, 23 handler_work calls with durations"

# record's uftrace-style options
run "$KTRACE" record -q -F fib -o F ./shapes fib 12
"$KTRACE" kd --format=csv F >kd.csv
ok "$([ "$(count kd.csv fib)" = 465 ] && [ "$(count kd.csv compute)" = none ]; echo $?)" "-F fib: only fib (465 calls)"
run "$KTRACE" record -q -F 'comp*' -F main -o F2 ./shapes fib 12
"$KTRACE" kd --format=csv F2 >kd.csv
ok "$([ "$(count kd.csv compute)" = 1 ] && [ "$(count kd.csv fib)" = none ]; echo $?)" "-F 'comp*': a pattern"
run "$KTRACE" record -q -N fib -o N ./shapes fib 12
"$KTRACE" kd --format=csv N >kd.csv
ok "$([ "$(count kd.csv compute)" = 1 ] && [ "$(count kd.csv fib)" = none ]; echo $?)" "-N fib: all but fib"
run "$KTRACE" record -q -D 2 -o D ./shapes fib 12
"$KTRACE" kd --format=csv D >kd.csv
ok "$([ "$(count kd.csv compute)" = 1 ] && [ "$(count kd.csv main)" = 1 ] && [ "$(count kd.csv fib)" = none ]; echo $?)" "-D 2: main and compute only"
run "$KTRACE" record -q -T compute@trace-on -o Tr ./shapes fib 12
"$KTRACE" kd --format=csv Tr >kd.csv
ok "$([ "$(count kd.csv compute)" = 1 ] && [ "$(count kd.csv main)" = none ] && [ "$(count kd.csv fib)" = 465 ]; echo $?)" "-T compute@trace-on: from compute on"
run "$KTRACE" record -q -t 1s -o t ./shapes fib 12
"$KTRACE" kd --format=csv t >kd.csv
is "$(count kd.csv fib)" none "-t 1s: no call lasts a second"
run "$KTRACE" record -q -F no_such_function -o bad ./shapes fib 3
is "$rc" 1 "an unknown function: exit 1"
is "$(cat "$T/err")" "ktrace record: ./shapes was not traced: option '-F no_such_function': unknown function 'no_such_function'" "said once, naming the option"
mkdir -p notatrace && touch notatrace/x
run "$KTRACE" record -q -o notatrace ./shapes fib 3
ok "$([ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && ! grep -q 'ktrace: ktrace:' "$T/err"; echo $?)" "a directory holding other files: one line, one prefix, exit 1"
run "$KTRACE" record -q -T fib@explode ./shapes fib 3
is "$rc" 2 "-T with an unknown action: usage error"
# found by fuzz/fuzz_cli_options.c: values the KFT language cannot hold
bad_opt() { # OPTION VALUE
	run "$KTRACE" record -q "$1" "$2" -o bad ./shapes fib 3
	ok "$([ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "^ktrace record: option '$1'" "$T/err"; echo $?)" \
		"record $1 '$(printf '%.12s' "$2" | tr -c '[:print:]' '?')': one line naming the option, exit 2"
}
bad_opt -F 0x0
bad_opt -F 0x12g4
bad_opt -D "$(printf '\n5')"
bad_opt -F "ma$(printf '\001')in"
bad_opt -F "$(head -c 1500 /dev/zero | tr '\0' a)"

# readers: default directory, time range, formats, pager, colour
"$KTRACE" record -q ./shapes fib 10 >/dev/null
run "$KTRACE" kd
like "$T/out" "^fib " "kd reads ./ktrace.data without an argument"
run "$KTRACE" kd --time-range 1h~ fib
is "$rc:$(wc -l <"$T/out")" "1:0" "--time-range after the end: no function, exit 1"
like "$T/err" "fib: no function call inside --time-range \\([0-9]+ sub-buffers outside it\\)" "--time-range after the end: says so (the sub-buffers skipped unread)"
run "$KTRACE" kd --time-range 0ns~1h --format=csv fib
cmp -s "$T/out" "$(printf '%s' "$T/kd0")" 2>/dev/null; "$KTRACE" kd --format=csv fib >kd0.csv
cmp -s "$T/out" kd0.csv
ok $? "--time-range over the whole run: the same table"
"$KTRACE" kd --format=json fib >kd.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(f["name"]=="fib" and f["count"]==21891 for f in d["functions"]) else 1)' kd.json
ok $? "kd --format=json: python's json reads it"
"$KTRACE" kd -c --format=csv fib | head -1 >h1
"$KTRACE" export --format=csv fib | head -1 >h2
cmp -s h1 h2
ok $? "kd -c --format=csv and export --format=csv share the header"
"$KTRACE" kd -c --format=json fib >calls.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if sum(c["name"]=="fib" for c in d["calls"])==21891 else 1)' calls.json
ok $? "kd -c --format=json: every call"
if command -v script >/dev/null 2>&1; then
	script -qec "env PAGER='sed s/^/PAGED:/' $KTRACE kd -n 1 fib" /dev/null >tty.out 2>&1
	like tty.out "^PAGED:" "on a terminal the output goes through \$PAGER"
	grep -q "$(printf '\033')\[" tty.out
	ok $? "on a terminal the header has colour"
fi
"$KTRACE" kd -n 1 fib >piped.out
! grep -q "$(printf '\033')" piped.out
ok $? "piped: no colour"
run "$KTRACE" export --format=csv -o - fib
like "$T/out" "^time_ns,dur_ns,self_ns" "-o - writes to standard output"

# info and graph
run "$KTRACE" info fib
like "$T/out" "^# cmdline *: ./shapes fib 20$" "info: the command line"
like "$T/out" "^# calls *: 21893 \\(0 unfinished\\)" "info: calls written"
like "$T/out" "^# records *: 21893 in 1 streams \\(streamed, rings of 32 x 262144 bytes\\)" "info: streamed through the default rings"
run "$KTRACE" graph fib fib
like "$T/out" " 1 : fib$" "graph fib: one outermost call at the root"
like "$T/out" " 2 : \+-fib$" "graph fib: two calls one level down"
run "$KTRACE" graph nosuch fib
is "$rc" 1 "graph of a function never called: exit 1"

# output errors and status after the end
run sh -c "'$KTRACE' kft fib status >/dev/full"
ok "$([ "$rc" = 1 ] && grep -q 'writing standard output' "$T/err"; echo $?)" "kft status >/dev/full: exit 1 with a message"
run sh -c "'$KTRACE' ctl fib status >/dev/full"
ok "$([ "$rc" = 1 ] && grep -q 'writing standard output' "$T/err"; echo $?)" "ctl status >/dev/full: exit 1 with a message"
run "$KTRACE" ctl fib status
like "$T/out" "^state: +ended \(pid [0-9]+ has exited" "ctl status: the program has ended"
printf 'trigger start entry compute\n' >trig.kft
"$KTRACE" record -q --config trig.kft -o trig ./shapes fib 3 >/dev/null
run "$KTRACE" kft trig status
like "$T/out" "^started: .* by entry to compute$" "kft status after the end names the trigger"

# the stack watch counts from the thread's base: the same in every run
printf 'watch stack 10\n' >watch.kft
X=a "$KTRACE" record -q --config watch.kft -o w1 ./shapes fib 8 >/dev/null
X=$(head -c 5000 /dev/zero | tr '\0' a) "$KTRACE" record -q --config watch.kft -o w2 ./shapes fib 8 >/dev/null
l1=$(sed -n 's/^lowest stack: //p' w1/kft-status)
l2=$(sed -n 's/^lowest stack: //p' w2/kft-status)
ok "$([ -n "$l1" ] && [ "$l1" = "$l2" ]; echo $?)" "lowest stack left identical with 5 KB more environment ($l1, $l2)"
done_testing
