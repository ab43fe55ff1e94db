#!/bin/sh
# tests/kernel_record.sh - kernel events through tracefs (`ktrace record
# --kernel`, kclient/tracefs_record.c) on one time line with a program's
# function calls, and the views built on them: `ktrace timeline` (text, SVG
# rendered to PNG), `ktrace export` (Chrome JSON checked against the
# trace-event format, folded stacks, CSV), system-wide recording until SIGINT, instance
# removal, and the path without root (run as nobody: one clear message and
# an application-only trace).
#
# As root on a kernel with tracefs (CI) every kernel assertion runs; as
# another user only the no-permission path can run here, and it is asserted
# instead (the recorder must say so and still record the program).
# tests/kernel/kprog.c is the traced program (compiled here with
# -finstrument-functions).  Times are compared with generous bounds only
# where the issue asks for them (the nanosleep gap within 100 us of the
# call's duration); nothing else depends on speed.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"
# the programs' own calls: library calls (on by default) are tests/kft_plt.sh's
KTRACE_LIBCALL=0
export KTRACE_LIBCALL

K=$KTRACE_SRC/tests/kernel
PROG=$T/kprog
# An ASan/UBSan build of libktrace.so needs its runtime first in the
# uninstrumented program (as tests/kft_record.c does).
san_preload
cc -O1 -g -finstrument-functions -o "$PROG" "$K/kprog.c" || { echo "Bail out! cannot compile kprog"; exit 1; }
chmod 755 "$T" "$PROG"

have_tracefs=0
grep -qw tracefs /proc/filesystems && have_tracefs=1

# ---- the path without root: as nobody --------------------------------------
nobody_run() {
	if command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	else
		runuser -u nobody -- "$@"
	fi
}
mkdir -p "$T/nb" && chmod 777 "$T/nb"
if [ "$(id -u)" -eq 0 ]; then
	nobody_run "$KTRACE" record -q --kernel -o "$T/nb/trace" -- "$PROG" "$T/nb/io" >"$T/out" 2>"$T/err"
	rc=$?
else
	"$KTRACE" record -q --kernel -o "$T/nb/trace" -- "$PROG" "$T/nb/io" >"$T/out" 2>"$T/err"
	rc=$?
fi
is "$rc" 0 "without root: the program runs and its status is returned"
is "$(lines "$T/err")" 1 "without root: one line on stderr"
like "$T/err" "^ktrace record: kernel events not recorded: .*(need root|not mounted).*; recording .*kprog alone$" \
	"without root: the message says kernel events need root and the program is recorded alone"
ok "$([ -f "$T/nb/trace/metadata" ] && [ ! -e "$T/nb/trace/kernel" ]; echo $?)" \
	"without root: an application-only trace"
run "$KTRACE" print "$T/nb/trace"
like "$T/out" " sleep_50ms +entry=" "without root: the application trace holds the calls"

# ---- the views on an application-only trace, and bad input -------------------
run "$KTRACE" timeline "$T/nb/trace"
is "$rc" 0 "timeline without kernel events: exit 0"
like "$T/err" "no kernel events \(record with .ktrace record --kernel.\)" "... and says why it is empty"
run "$KTRACE" export --format=chrome -o "$T/nb.json" "$T/nb/trace"
is "$rc" 0 "export of an application-only trace: exit 0"
python3 "$K/check_chrome.py" "$T/nb.json" >"$T/chk"
ok $? "... valid Chrome JSON"
like "$T/chk" "^names .*sleep_50ms" "... with the calls"
run "$KTRACE" export --format=nosuch "$T/nb/trace"
is "$rc" 2 "export --format=nosuch: usage error"
like "$T/err" "^ktrace export: option '--format': unknown format 'nosuch'" "... naming it"
run "$KTRACE" export "$T/nb/trace"
is "$rc" 2 "export without --format: usage error"
run "$KTRACE" export --format=csv -o /nonexistent/dir/x.csv "$T/nb/trace"
is "$rc" 1 "export to an unwritable file: exit 1"
is "$(lines "$T/err")" 1 "... with one line"
run "$KTRACE" timeline --svg /nonexistent/dir/x.svg "$T/nb/trace"
is "$rc" 1 "timeline --svg to an unwritable file: exit 1"
run "$KTRACE" timeline --width 10 "$T/nb/trace"
is "$rc" 2 "timeline --width 10: usage error"
"$MKTRACE" -s 2 -r 50 -b 256 --corrupt-record 0:1 "$T/bad" >/dev/null
run "$KTRACE" export --format=csv "$T/bad"
is "$rc" 1 "export of a corrupt trace: exit 1"
like "$T/err" "trace0: offset [0-9]+: " "... the problem named with its file and offset"
ok "$([ "$(lines "$T/out")" -gt 40 ]; echo $?)" "... and every readable record still exported"
if [ -e /dev/full ]; then
	run "$KTRACE" export --format=csv -o /dev/full "$T/nb/trace"
	is "$rc" 1 "export to a full disk (/dev/full): exit 1"
	like "$T/err" "^ktrace export: /dev/full: write: No space left on device$" "... saying so"
fi

if [ "$(id -u)" -ne 0 ]; then
	done_testing
fi

if [ "$have_tracefs" -eq 0 ]; then
	# root, but a kernel without tracefs: the same clear message
	run "$KTRACE" record -q --kernel -o "$T/k" -- "$PROG" "$T/io"
	is "$rc" 0 "no tracefs: the program still runs"
	like "$T/err" "kernel events not recorded: tracefs" "no tracefs: says so"
	done_testing
fi

# ---- record a program with its kernel events --------------------------------
D=$T/k
python3 - "$KTRACE" "$D" "$PROG" "$T/io" >"$T/times" <<'EOF'
import subprocess, sys, time
t0 = time.monotonic_ns()
rc = subprocess.call([sys.argv[1], "record", "-q", "--kernel", "-o", sys.argv[2], "--", sys.argv[3], sys.argv[4]])
t1 = time.monotonic_ns()
print(rc, t0, t1)
EOF
read rec_rc T0 T1 <"$T/times"
is "$rec_rc" 0 "record --kernel: exit 0"
like "$D/kernel/metadata" "^clock mono$" "kernel/ is a trace of its own: clock mono"
like "$D/kernel/metadata" "^scope cpu$" "... with per-CPU streams"
like "$D/kernel/metadata" "^event 1 kevent PROCESS_CONTEXTSWITCH process prev_pid,next_pid,prev_state$" \
	"... and the kevent catalogue"
inst=$(sed -n 's/^source tracefs //p' "$D/kernel/metadata")
ok "$([ -n "$inst" ] && [ ! -e "/sys/kernel/tracing/instances/$inst" ]; echo $?)" \
	"its tracefs instance ($inst) is removed at the end"
ok "$(ls "$D/kernel" | grep -qv '^\(cpu[0-9]*\|metadata\|ftrace\)$'; [ $? -ne 0 ]; echo $?)" \
	"kernel/ holds metadata, cpuN streams and the raw copy ftrace/ only"
ok "$(stat -c %a "$D/kernel" | grep -q '^700$'; echo $?)" "kernel/ is mode 0700"

run "$KTRACE" print "$D"
is "$rc" 0 "print of the merged trace: exit 0"
ok "$(awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' "$T/out"; echo $?)" \
	"print interleaves application and kernel records by time"
like "$T/out" " sleep_50ms +entry=" "print shows the program's calls"
like "$T/out" " PROCESS_CONTEXTSWITCH +prev_pid=[0-9]+ next_pid=[0-9]+ prev_state=" "... and its context switches"

run "$KTRACE" export --format=csv -o "$T/k.csv" "$D"
is "$rc" 0 "export csv: exit 0"
python3 - "$T/k.csv" "$T0" "$T1" >"$T/facts" <<'EOF'
# Facts about the recorded run, as "key value" lines, from the CSV export.
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t0, t1 = int(sys.argv[2]), int(sys.argv[3])
def args(r):
    d = {}
    for kv in r["args"].split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            d[k] = v
    return d
calls = {}
for r in rows:
    if r["category"] == "call":
        calls.setdefault(r["name"], []).append((int(r["time_ns"]), int(r["time_ns"]) + int(r["dur_ns"]), int(r["pid"]), int(r["tid"])))
facts = {}
main = calls.get("main", [(0, 0, 0, 0)])
prog = main[0][2]
facts["calls"] = " ".join(sorted(calls))
kev = [r for r in rows if r["category"] not in ("call", "ktrace", "default")]
mine = [r for r in kev if int(r["pid"]) == prog]
facts["prog_kevents"] = "many" if len(mine) > 20 else str(len(mine))
facts["inside_run"] = "yes" if all(t0 <= int(r["time_ns"]) <= t1 for r in mine) else "no"
facts["calls_inside_run"] = "yes" if all(t0 <= s and e <= t1 for v in calls.values() for s, e, p, t in v) else "no"
# the nanosleep of sleep_50ms: its syscall, switch-out and switch-in inside the call
s, e, p, tid = calls.get("sleep_50ms", [(0, 0, 0, 0)])[0]
ev = [r for r in kev if s <= int(r["time_ns"]) <= e]
sys_in = [r for r in ev if r["name"] == "SYSCALL_ENTRY" and int(r["tid"]) == tid and args(r).get("id") in ("35", "230")]
facts["nanosleep_syscall_inside"] = "yes" if sys_in else "no"
# how long the kernel kept it in nanosleep (entry to exit): 50 ms, more if
# the host delayed the timer (a busy VM host can take the vCPU for ms)
sys_out = [r for r in ev if r["name"] == "SYSCALL_EXIT" and int(r["tid"]) == tid and args(r).get("id") in ("35", "230")]
facts["nanosleep_us"] = "%d" % ((int(sys_out[-1]["time_ns"]) - int(sys_in[0]["time_ns"])) // 1000) if sys_in and sys_out else "0"
# switched out to sleep, then back: a switch-in, or (this kernel leaves out
# switches from the idle task) the thread's own next event, as ktrace infers
out = [int(r["time_ns"]) for r in ev if r["name"] == "PROCESS_CONTEXTSWITCH" and args(r)["prev_pid"] == str(tid) and args(r)["prev_state"] != "0"]
inn = [int(r["time_ns"]) for r in ev if out and int(r["time_ns"]) > out[0] and
       ((r["name"] == "PROCESS_CONTEXTSWITCH" and args(r)["next_pid"] == str(tid)) or
        (r["tid"] == str(tid) and r["name"] != "PROCESS_CONTEXTSWITCH"))]
if out and inn:
    # Only orderings the kernel guarantees, whatever the load: the timer is
    # armed after the syscall's entry and expires 50 ms later at the
    # earliest; the thread runs again (inn) after that, and returns from
    # the syscall, then from the call, after it runs again.
    gap = inn[0] - out[0]
    facts["sleep_switch"] = "yes"
    facts["sleep_order"] = "yes" if sys_in and sys_out and s <= int(sys_in[0]["time_ns"]) <= out[0] < inn[0] <= int(sys_out[-1]["time_ns"]) <= e else \
        "no: call %d, nanosleep %s..%s, out %d, in %d, return %d" % (s, sys_in[0]["time_ns"] if sys_in else "?", sys_out[-1]["time_ns"] if sys_out else "?", out[0], inn[0], e)
    facts["sleep_gap"] = "50ms+" if sys_in and inn[0] - int(sys_in[0]["time_ns"]) >= 50000000 else "%d ns" % gap
    facts["gap_us"] = "%d" % (gap // 1000)
    # the least the thread can have been blocked: 50 ms minus what ran
    # between the syscall's entry and the switch-out (rounded up, in us)
    facts["min_blocked_us"] = "%d" % (50000 - (out[0] - int(sys_in[0]["time_ns"]) + 999) // 1000 - 1) if sys_in else "50000"
    facts["sleep_dur_ns"] = "%d" % (e - s)
else:
    facts["sleep_switch"] = "no"
    near = [r for r in rows if (r["tid"] == str(tid) or str(tid) in r["args"].split(";")[0:2] or r["category"] == "ktrace") and s <= int(r["time_ns"]) <= e + 1000000]
    facts["sleep_debug"] = "call %d..%d tid %d; records of tid around it: %s" % (s, e, tid, " | ".join("%s %s %s %s" % (r["time_ns"], r["tid"], r["name"], r["args"]) for r in near[:40]))
# do_io: write and fsync syscalls inside it
s, e, p, tid = calls.get("do_io", [(0, 0, 0, 0)])[0]
ids = {args(r).get("id") for r in kev if r["name"] == "SYSCALL_ENTRY" and int(r["tid"]) == tid and s <= int(r["time_ns"]) <= e}
facts["io_syscalls"] = "yes" if {"1", "74", "17"} <= ids else "no: %s" % sorted(ids)
# do_fork: the fork event inside it, the child's call and its switch-out inside child_work
s, e, p, tid = calls.get("do_fork", [(0, 0, 0, 0)])[0]
forks = [args(r) for r in kev if r["name"] == "PROCESS_FORK" and int(r["pid"]) == prog and s <= int(r["time_ns"]) <= e]
facts["fork_inside"] = "yes" if forks else "no"
cs, ce, cp, ct = calls.get("child_work", [(0, 0, 0, 0)])[0]
facts["child_is_forked"] = "yes" if forks and forks[0]["child_pid"] == str(cp) and cp != prog else "no"
facts["child_switch"] = "yes" if any(r["name"] == "PROCESS_CONTEXTSWITCH" and args(r)["prev_pid"] == str(ct) and cs <= int(r["time_ns"]) <= ce for r in kev) else "no"
for k, v in facts.items():
    print(k, v)
EOF
fact() { sed -n "s/^$1 //p" "$T/facts"; }
is "$(fact calls)" "child_work do_fork do_io main sleep_50ms" "CALL records of every function, child included"
is "$(fact prog_kevents)" "many" "kernel events of the traced PID"
is "$(fact inside_run)" "yes" "every kernel event of the traced PID lies inside the program's run (CLOCK_MONOTONIC)"
is "$(fact calls_inside_run)" "yes" "every call lies inside the program's run (TSC converted to CLOCK_MONOTONIC)"
is "$(fact nanosleep_syscall_inside)" "yes" "sleep_50ms: its nanosleep syscall lies inside the call"
is "$(fact sleep_switch)" "yes" "sleep_50ms: switched out and in again inside the call"
[ "$(fact sleep_switch)" = yes ] || { sed -n 's/^sleep_debug /#   /p' "$T/facts"; sed -n 's/^# events/#   kernel: events/p' "$D/kernel/metadata"; } >&2
is "$(fact sleep_order)" "yes" "sleep_50ms: call entry <= nanosleep entry <= switch-out < switch-in <= nanosleep exit <= call exit"
is "$(fact sleep_gap)" "50ms+" "sleep_50ms: back on a CPU 50 ms or more after entering nanosleep"
is "$(fact io_syscalls)" "yes" "do_io: its write, fsync and pread64 syscalls lie inside the call"
is "$(fact fork_inside)" "yes" "do_fork: the fork event lies inside the call"
is "$(fact child_is_forked)" "yes" "the child's calls are in the trace, under the forked pid"
is "$(fact child_switch)" "yes" "child_work: the child's context switch lies inside its call"

# ---- kd: off-CPU time from the context switches -------------------------------
# (on a busy machine the wakeup can wait for a CPU: the blocked part is the
# 50 ms, the whole off-CPU time is 50 ms plus that wait)
run "$KTRACE" kd -f Fctlo "$D"
is "$rc" 0 "kd: exit 0"
like "$T/out" "^Function +Count +Time +Local +Off-CPU$" "kd: the Off-CPU column"
off=$(awk '$1 == "sleep_50ms" { print int($5) }' "$T/out")
tim=$(awk '$1 == "sleep_50ms" { print int($3) }' "$T/out")
gap_us=$(fact gap_us)
ok "$([ "${off:-0}" -ge "${gap_us:-1}" ] && [ "$off" -le "$tim" ]; echo $?)" \
	"kd: sleep_50ms's Off-CPU holds its switch-out..switch-in gap and fits in its Time ($gap_us <= $off <= $tim us)"
loc=$(awk '$1 == "sleep_50ms" { print int($4) }' "$T/out")
ok "$([ -n "$loc" ] && [ $((loc + off - tim)) -ge -2 ] && [ $((loc + off - tim)) -le 2 ]; echo $?)" \
	"kd: sleep_50ms's Local is on-CPU time only: Local + Off-CPU = Time ($loc + $off of $tim us, whole us)"
run "$KTRACE" kd "$D"
like "$T/out" "^Function +Count +Time +Average +Local +Off-CPU$" "kd: Off-CPU is a default column with kernel events"
run "$KTRACE" kd -c "$D"
like "$T/out" "^ +[0-9]+ \|  sleep_50ms$" "kd -c: the call"
like "$T/out" "^ +[0-9]+ \|  \|  <off CPU [0-9]+\.[0-9]{3} us: blocked, woken after [0-9.]+ us, CPU [0-9]+ -> [0-9]+>$" \
	"kd -c: its context switch inside it, one level deeper, with the time off CPU"
blk=$(awk '/\|  \|  <off CPU/ && !done { sub(/.*woken after /, ""); print int($1); done = 1 }' "$T/out")
ns_us=$(fact nanosleep_us)
min_blk=$(fact min_blocked_us)
ok "$([ "${blk:-0}" -ge "${min_blk:-50000}" ] && [ "$blk" -le "$((ns_us + 1))" ]; echo $?)" \
	"kd -c: blocked in nanosleep at least 50 ms from its entry and no longer than the syscall ($min_blk <= $blk <= $ns_us us)"
run "$KTRACE" kd "$T/nb/trace"
unlike "$T/out" "Off-CPU" "kd without kernel events: no Off-CPU column"

# ---- timeline ---------------------------------------------------------------
run "$KTRACE" timeline --summary "$D"
is "$rc" 0 "timeline -s: exit 0"
is "$(grep -c '^task ' "$T/out")" 2 "timeline: the program and its child, no other task"
main_blocked=$(awk '/^task .*kprog/ { for (i = 1; i <= NF; i++) if ($i == "blocked") { print int($(i + 1)); exit } }' "$T/out")
ok "$([ "${main_blocked:-0}" -ge "$((min_blk / 1000))" ]; echo $?)" "timeline: the program was blocked at least as long as the sleep ($main_blocked ms)"
# "N switches" is how often the task left a CPU: its sched_switch events as
# prev_pid, counted by python from print -C (a sleep used to count twice:
# its blocked and its ready interval)
"$KTRACE" print -C "$D" > "$T/all.csv"
python3 - "$T/all.csv" "$T/out" > "$T/sw" <<'PY'
import csv, re, sys
n = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["name"] == "PROCESS_CONTEXTSWITCH":
        a = dict(kv.split("=", 1) for kv in r["args"].split(";"))
        n[int(a["prev_pid"])] = n.get(int(a["prev_pid"]), 0) + 1
for line in open(sys.argv[2]):
    m = re.match(r"task (?:\d+/)?(\d+) .*, (\d+) switch(?:es)?$", line.strip())
    if m:
        tid, got = int(m.group(1)), int(m.group(2))
        print(("ok" if got == n.get(tid, 0) and got > 0 else "FAIL") +
              " timeline -s: task %d left a CPU %d times, as its sched_switch events say (%d)" % (tid, got, n.get(tid, 0)))
PY
tap_results "$T/sw"
run "$KTRACE" timeline --mark sleep_50ms "$D"
like "$T/out" "^ +[0-9.]+ +[0-9.]+ +[0-9.]+  running +[0-9]+$" "timeline: running intervals with their CPU"
ok "$(awk -v lo="$min_blk" -v hi="$((ns_us + 1))" '$4 == "blocked" && $3 >= lo && $3 <= hi { f = 1 } END { exit !f }' "$T/out"; echo $?)" \
	"timeline: the blocked interval of the 50 ms sleep ($min_blk..$ns_us us)"
like "$T/out" "  call sleep_50ms$" "timeline --mark: the call is marked on its lane"
run "$KTRACE" timeline --all --summary "$D"
ok "$([ "$(grep -c '^task ' "$T/out")" -gt 2 ]; echo $?)" "timeline --all: other tasks too"
run "$KTRACE" timeline --svg "$T/t.svg" --mark sleep_50ms "$D"
is "$rc" 0 "timeline --svg: exit 0"
if command -v rsvg-convert >/dev/null 2>&1; then
	rsvg-convert -o "$T/t.png" "$T/t.svg"
	ok $? "the SVG renders to PNG (rsvg-convert)"
	python3 "$K/check_png.py" "$T/t.png" 2ca02c 4a78b5 d62728 ffffff >"$T/png"
	like "$T/png" "^size 1200 [0-9]+$" "PNG: 1200 pixels wide"
	ok "$(awk '$1 == "colour" && $2 == "2ca02c" && $3 > 100 { f = 1 } END { exit !f }' "$T/png"; echo $?)" \
		"PNG: running (green) pixels"
	ok "$(awk '$1 == "colour" && $2 == "4a78b5" && $3 > 100 { f = 1 } END { exit !f }' "$T/png"; echo $?)" \
		"PNG: blocked (blue) pixels"
	ok "$(awk '$1 == "colour" && $2 == "d62728" && $3 > 20 { f = 1 } END { exit !f }' "$T/png"; echo $?)" \
		"PNG: the marked call (red) is drawn"
else
	ok 1 "rsvg-convert is installed (scripts/deps.sh installs librsvg2-bin)"
fi
like "$T/t.svg" "<text [^>]*>time \(ms\)</text>" "SVG: time axis in ms"
like "$T/t.svg" ">blocked</text>" "SVG: legend"

# ---- export -----------------------------------------------------------------
run "$KTRACE" export --format=chrome -o "$T/k.json" "$D"
is "$rc" 0 "export chrome: exit 0"
python3 "$K/check_chrome.py" "$T/k.json" >"$T/chk"
ok $? "Chrome JSON validates against the trace-event format"
like "$T/chk" "^summary .* badnest=0 " "Chrome JSON: slices nest per thread"
like "$T/chk" "^names .*PROCESS_CONTEXTSWITCH" "Chrome JSON: kernel events"
like "$T/chk" "^names .* sleep_50ms( |$)" "Chrome JSON: function calls named"
like "$T/k.json" '"name":"thread_name","ph":"M","pid":1000000000,"tid":1000000001,"args":\{"name":"CPU 0"\}' \
	"Chrome JSON: a track per CPU"
run "$KTRACE" export --format=folded "$D"
is "$rc" 0 "export folded: exit 0"
ok "$(grep -vqE '^[^ ;]+(;[^;]+)* [0-9]+$' "$T/out"; [ $? -ne 0 ]; echo $?)" "folded: every line is 'frames... self_ns'"
ok "$(awk -v d="$(fact sleep_dur_ns)" '$1 == "kprog;main;sleep_50ms" && $2 == d { f = 1 } END { exit !f }' "$T/out"; echo $?)" \
	"folded: sleep_50ms's self time is its whole duration, asleep included ($(fact sleep_dur_ns) ns)"
like "$T/out" "^kprog;child_work [0-9]+$" "folded: the forked child's own stack (its thread's calls)"

run "$KTRACE" export --format=csv -o "$T/k2.csv" "$D"
is "$(lines "$T/err")" 0 "export: no progress line when stderr is not a terminal"
run env KTRACE_PROGRESS=1 "$KTRACE" export --format=csv -o "$T/k2.csv" "$D"
like "$T/err" "^ktrace export: 100% [0-9.]+M records, [0-9.]+M records/s$" "export: the progress line (forced)"

# ---- the whole system until SIGINT ------------------------------------------
"$KTRACE" record -q --kernel -o "$T/sys" >"$T/out" 2>"$T/err" &
pid=$!
i=0 # recording once its instance exists (not after a fixed second: a loaded machine starts it later)
while [ ! -e "/sys/kernel/tracing/instances/ktrace-$pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kill -INT $pid
wait $pid
is "$?" 0 "record --kernel without a program: SIGINT ends it cleanly (exit 0)"
ok "$([ ! -e "/sys/kernel/tracing/instances/ktrace-$pid" ]; echo $?)" "... and removes its instance"
run "$KTRACE" print "$T/sys"
is "$rc" 0 "... and the kernel-only trace reads without errors"
ok "$([ "$(lines "$T/out")" -gt 10 ]; echo $?)" "... with kernel events"

# ---- killed with SIGKILL: the next recording removes the stale instance ----
"$KTRACE" record -q --kernel -o "$T/killed" >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -e "/sys/kernel/tracing/instances/ktrace-$pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done # 60 s: a hang guard
kill -KILL $pid
wait $pid 2>/dev/null
ok "$([ -e "/sys/kernel/tracing/instances/ktrace-$pid" ]; echo $?)" "SIGKILL leaves its instance behind"
run "$KTRACE" record -q --kernel=RNOTHING -o "$T/k2" -- true
ok "$([ ! -e "/sys/kernel/tracing/instances/ktrace-$pid" ]; echo $?)" "the next recording removes it"

# ---- masksets -----------------------------------------------------------------
run "$KTRACE" record -q --kernel=RALL -o "$T/k3" -- true
like "$T/k3/kernel/metadata" "^unavailable 5 PROCESS_INIT_WQH no tracepoint" "RALL: events without a tracepoint are listed as unavailable"
like "$T/k3/kernel/metadata" "^# EXCEPTION_ENTRY vectors 14" \
	"RALL: EXCEPTION_ENTRY through tracefs: vector 14 at least (tests/kernel_exc.sh tests the rest)"
like "$T/k3/kernel/metadata" "^unavailable 33 EXCEPTION_EXIT module only" "... EXCEPTION_EXIT is module only, saying why"
run "$KTRACE" record -q --kernel=syscall -o "$T/k4" -- "$PROG" "$T/io"
run "$KTRACE" print "$T/k4"
is "$(awk '$4 ~ /^[A-Z_]+$/ { print $4 }' "$T/out" | sort -u | tr '\n' ' ')" "SYSCALL_ENTRY SYSCALL_EXIT " \
	"--kernel=syscall: only the syscall category"
run "$KTRACE" record --kernel=NOSUCH -- true
is "$rc" 2 "--kernel=NOSUCH: usage error"
like "$T/err" "option '--kernel': unknown event or category 'NOSUCH'" "... naming it"

done_testing
