#!/bin/sh
# tests/kernel_tracedat.sh - the raw ftrace copy of `ktrace record --kernel`
# (DIR/kernel/ftrace, kclient/ftrace_copy.c), `-e SYS:NAME` tracepoints,
# and `ktrace export --format=trace.dat` (kclient/tracedat.c, libtracecmd)
# read back by trace-cmd itself (`trace-cmd report`, a third-party reader).
#
# tests/formats/badname.c runs under `record --kernel -e
# syscalls:sys_enter_openat -e 'block:*'`.  Checked independently of
# ktrace's own decoding: the context switches trace-cmd decodes from the
# trace.dat (libtraceevent) are, one for one, those `ktrace print -C`
# shows (time, prev_pid, next_pid; its KEVENT conversion); sys_enter_openat
# (outside ktrace's catalogue) appears with all its fields, also in the
# badname process; the non-UTF-8 comm "bad\xff\xfe\x80name" appears as
# raw bytes in trace-cmd's output; set_event lists every block tracepoint
# of the running kernel; files are 0600 and directories 0700.  Errors: an
# unknown `-e nosuch:event` is one line and exit 2, a trace without the
# raw copy cannot be exported (one line, exit 1, no file left); a raw copy
# with a link, FIFO or device among its files is refused before
# libtracecmd opens anything.
#
# As another user than root only the checks that need no tracefs run.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

# An ASan/UBSan build of libktrace.so needs its runtime first in the
# uninstrumented program (as tests/kernel_record.sh does).
san_preload

# ---- usage errors, no tracefs needed ------------------------------------------
run "$KTRACE" record -q --kernel -e 'sched:' -o "$T/syn" -- true
is "$rc" 2 "-e 'sched:': usage error"
like "$T/err" "^ktrace record: option '-e': 'sched:' is not a tracepoint" "... saying why"
run "$KTRACE" record -q -e sched:sched_switch -o "$T/nok" -- true
is "$rc" 2 "-e without --kernel: usage error"
mkdir -p "$T/empty"
run "$KTRACE" export --format=trace.dat -o "$T/none.dat" "$T/empty"
is "$rc" 1 "export --format=trace.dat of a trace without kernel/ftrace: exit 1"
is "$(lines "$T/err")" 1 "... one line"
like "$T/err" "no raw ftrace copy" "... saying there is no raw copy"
ok "$([ ! -e "$T/none.dat" ]; echo $?)" "... and no file is left"
run "$KTRACE" export --format=trace.dat "$T/empty"
is "$rc" 2 "export --format=trace.dat without -o: usage error"

if [ "$(id -u)" -ne 0 ] || ! grep -qw tracefs /proc/filesystems; then
	done_testing
fi

# ---- unknown tracepoint -------------------------------------------------------
run "$KTRACE" record -q --kernel -e nosuch:event -o "$T/unk" -- true
is "$rc" 2 "-e nosuch:event: exit 2"
is "$(lines "$T/err")" 1 "... one line"
like "$T/err" "^ktrace record: option '-e': unknown tracepoint 'nosuch:event'" "... naming it"
ok "$([ ! -e "$T/unk" ]; echo $?)" "... before anything is recorded"

# ---- record badname with extra tracepoints ------------------------------------
cc -O1 -g -finstrument-functions -pthread -o "$T/badname" "$KTRACE_SRC/tests/formats/badname.c" ||
	{ echo "Bail out! cannot compile badname"; exit 1; }
D=$T/d
run "$KTRACE" record -q --kernel -e syscalls:sys_enter_openat -e 'block:*' -o "$D" -- "$T/badname"
is "$rc" 0 "record --kernel -e syscalls:sys_enter_openat -e 'block:*': exit 0"
F=$D/kernel/ftrace
ok "$([ -d "$F" ] && [ -s "$F/cpu0" ]; echo $?)" "kernel/ftrace holds the raw pages (cpu0 not empty)"
ok "$(for f in "$F"/cpu*; do [ $(($(stat -c %s "$f") % $(getconf PAGESIZE))) -eq 0 ] || exit 1; done; echo 0)" \
	"... each cpuN a whole number of pages"
ok "$(find "$D/kernel" -type f ! -perm 0600 | grep -q .; [ $? -ne 0 ]; echo $?)" "every file of kernel/ is mode 0600"
ok "$(find "$D/kernel" -type d ! -perm 0700 | grep -q .; [ $? -ne 0 ]; echo $?)" "every directory of kernel/ is mode 0700"
for f in events/header_page events/header_event events/sched/sched_switch/format \
	events/syscalls/sys_enter_openat/format printk_formats saved_cmdlines trace_clock set_event; do
	ok "$([ -s "$F/$f" ]; echo $?)" "ftrace/$f is there"
done
like "$F/trace_clock" "\[mono\]" "trace_clock: the instance's, mono"
cmp "$F/events/sched/sched_switch/format" /sys/kernel/tracing/events/sched/sched_switch/format >&2
ok $? "sched_switch's format is the kernel's"
like "$F/set_event" "^syscalls:sys_enter_openat$" "set_event lists the -e tracepoint"
like "$F/set_event" "^sched:sched_switch$" "... and the catalogue's"
want=$(ls /sys/kernel/tracing/events/block | while read -r e; do [ -d "/sys/kernel/tracing/events/block/$e" ] && echo "block:$e"; done | sort)
got=$(grep '^block:' "$F/set_event" | sort)
is "$got" "$want" "'block:*' enabled every block tracepoint of this kernel ($(echo "$want" | wc -l))"

# ---- export and read back with trace-cmd --------------------------------------
run "$KTRACE" export --format=trace.dat -o "$T/t.dat" "$D"
is "$rc" 0 "export --format=trace.dat: exit 0"
ok "$(stat -c %a "$T/t.dat" | grep -q '^600$'; echo $?)" "... mode 0600"
trace-cmd report -R -t "$T/t.dat" >"$T/report" 2>"$T/report.err"
is "$?" 0 "trace-cmd report reads it"
"$KTRACE" print -C "$D" >"$T/print.csv" 2>/dev/null
pid=$(sed -n 's/^pid //p' "$D/metadata")
python3 - "$T/report" "$T/print.csv" "$pid" >"$T/facts" <<'EOF'
# Compare trace-cmd's decoding of the trace.dat with ktrace print's CSV.
import csv, re, sys
rep = open(sys.argv[1], "rb").read().split(b"\n")
pid = sys.argv[3].encode()
line_re = re.compile(rb"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s+(.*)$")
tc_sw = []
openat = []
tc_open = []
comms = set()
for l in rep:
    m = line_re.match(l)
    if not m:
        continue
    ts = int(m.group(4)) * 1000000000 + int(m.group(5))
    ev, rest = m.group(6), m.group(7)
    if ev == b"sched_switch":
        f = dict(re.findall(rb"(\w+)=(\S*)", rest))
        for k in (b"prev", b"next"):
            c = re.search(k + rb"_comm=(.*?) " + k + rb"_pid=", rest).group(1)
            a = re.fullmatch(rb"ARRAY\[([0-9a-f, ]*)\]", c)
            if a:  # -R prints a char array with unprintable bytes as hex
                c = bytes(int(h, 16) for h in a.group(1).split(b", ")).rstrip(b"\0")
            comms.add(c)
        tc_sw.append((ts, int(f[b"prev_pid"]), int(f[b"next_pid"])))
    elif ev == b"sys_enter_openat":
        openat.append((int(m.group(2)), rest))
        f = dict(re.findall(rb"(\w+)=(\S*)", rest))
        tc_open.append((ts, int(m.group(2)), int(f[b"dfd"], 0), int(f[b"flags"], 0), int(f[b"mode"], 0)))
kt_sw = []
kt_open = []
for r in csv.DictReader(open(sys.argv[2], newline="", encoding="utf-8", errors="replace")):
    a = dict(kv.split("=", 1) for kv in r["args"].split(";") if "=" in kv)
    if r["name"] == "sys_enter_openat":
        kt_open.append((int(r["time_ns"]), int(r["tid"]), int(a["dfd"]), int(a["flags"]), int(a["mode"])))
    if r["name"] != "PROCESS_CONTEXTSWITCH":
        continue
    kt_sw.append((int(r["time_ns"]), int(a["prev_pid"]), int(a["next_pid"])))
print("switches_tracecmd", len(tc_sw))
print("switches_ktrace", len(kt_sw))
print("switches_same", "yes" if sorted(tc_sw) == sorted(kt_sw) else "no")
print("openat", len(openat))
print("openat_ktrace", len(kt_open))
# ktrace keeps the 64-bit value; trace-cmd -R prints the raw field (also 64-bit for syscalls)
norm = lambda v: (v[0], v[1]) + tuple(x & 0xffffffffffffffff for x in v[2:])
print("openat_same", "yes" if sorted(map(norm, tc_open)) == sorted(map(norm, kt_open)) else
      "no: %s vs %s" % (sorted(map(norm, tc_open))[:2], sorted(map(norm, kt_open))[:2]))
fields = [b"dfd=", b"filename=", b"flags=", b"mode="]
print("openat_fields", "yes" if openat and all(all(f in r for f in fields) for _, r in openat) else "no")
print("badcomm", "yes" if b"bad\xff\xfe\x80name" in comms else "no")
print("badthread", "yes" if b"thr\xc3\x28\xff" in comms else "no")
EOF
fact() { sed -n "s/^$1 //p" "$T/facts"; }
n=$(fact switches_tracecmd)
ok "$([ "${n:-0}" -gt 0 ]; echo $?)" "trace-cmd shows sched_switch events ($n)"
is "$n" "$(fact switches_ktrace)" "... as many as ktrace print shows context switches"
is "$(fact switches_same)" "yes" "... the same ones: time (ns), prev_pid, next_pid"
ok "$([ "$(fact openat)" -gt 0 ]; echo $?)" "trace-cmd shows the -e tracepoint sys_enter_openat ($(fact openat))"
is "$(fact openat_fields)" "yes" "... with its fields dfd, filename, flags, mode"
is "$(fact openat_ktrace)" "$(fact openat)" "ktrace print -C shows as many sys_enter_openat events (a tracepoint outside the catalogue)"
is "$(fact openat_same)" "yes" "... the same ones: time, tid, dfd, flags, mode"
is "$(fact badcomm)" "yes" "the non-UTF-8 comm bad\\xff\\xfe\\x80name is in trace-cmd's sched_switch fields, bytes as they were"
is "$(fact badthread)" "yes" "... and the thread's thr\\xc3\\x28\\xff"

# ---- a hostile raw copy: libtracecmd opens these files itself (blocking,
# following links), so each is checked first.  Planted, one at a time, in
# a copy of the trace: a link to a root-only file, a FIFO, a device node
# (/dev/zero's numbers) as set_event, events/header_page, an event's format
# file, cpu0 and printk_formats, and kernel/ftrace itself as a link to a
# directory.  Each export: does not hang, exits non-zero, one line naming
# the planted path, the secret file's content nowhere.
SECRET="ktrace-tracedat-secret-$$"
echo "$SECRET" >"$T/secret"
chmod 600 "$T/secret"
fmt=$(cd "$F" && ls events/*/*/format | head -1)
for name in set_event events/header_page "$fmt" cpu0 printk_formats; do
	for shape in link fifo device; do
		rm -rf "$T/h" "$T/h.dat"
		cp -a "$D" "$T/h"
		rm -f "$T/h/kernel/ftrace/$name"
		case $shape in
		link) ln -s "$T/secret" "$T/h/kernel/ftrace/$name" ;;
		fifo) mkfifo "$T/h/kernel/ftrace/$name" ;;
		device) mknod "$T/h/kernel/ftrace/$name" c 1 5 ;;
		esac
		timeout -k 5 30 "$KTRACE" export --format=trace.dat -o "$T/h.dat" "$T/h" >"$T/out" 2>"$T/err"
		rc=$?
		leak=no
		grep -qs -- "$SECRET" "$T/h.dat" "$T/out" "$T/err" && leak=yes
		is "$rc:$(lines "$T/err"):$(grep -c -- "$T/h/kernel/ftrace/$name" "$T/err"):$leak" "1:1:1:no" \
			"export --format=trace.dat, $name as a $shape: exit 1 (not hung), one line naming it, nothing read"
		[ "$(lines "$T/err")" -eq 1 ] || sed 's/^/#   /' "$T/err" | head -3
	done
done
rm -rf "$T/h" "$T/h.dat"
cp -a "$D" "$T/h"
mv "$T/h/kernel/ftrace" "$T/h/ftrace.real"
ln -s "$T/h/ftrace.real" "$T/h/kernel/ftrace"
run "$KTRACE" export --format=trace.dat -o "$T/h.dat" "$T/h"
is "$rc:$(lines "$T/err"):$(grep -c -- "$T/h/kernel/ftrace" "$T/err")" "1:1:1" \
	"export --format=trace.dat, kernel/ftrace a link to a directory: exit 1, one line naming it"
like "$T/err" "symbolic link" "... saying it is a link"

# ---- the directory can be recorded into again (kernel/ftrace is cleared) --------
run "$KTRACE" record -q --kernel=RNOTHING -o "$D" -- true
is "$rc" 0 "recording again into the same DIR: exit 0 (the old kernel/ftrace removed)"
ok "$([ "$(grep -c . "$F/set_event")" -lt 5 ]; echo $?)" "... and set_event is the new recording's"

done_testing
