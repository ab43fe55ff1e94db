#!/bin/sh
# tests/memview.sh - `ktrace memview` (cli/cmd_memview.c, analysis/memview.c)
# on a real recording: tests/kernel/memphases.c grows by N MiB touching
# every page over ~1 s, holds it 1 s, munmaps it and sleeps 1 s, recorded
# with `ktrace record --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE` through tracefs
# (its own instance: other tracefs users do not disturb it).  Expected,
# computed here from N alone: E = N MiB / 4 KiB pages; the program's
# allocations and peak are E plus its own small start-up (at most E/10 +
# 1024 pages: page tables, stack, libc); with 500 ms intervals the held
# series shows growth (an interval end between 15% and 85% of E), then a
# plateau (>= E), then the drop (an interval freeing >= 90% of E, and
# under E/10 held at the end), in that order.  The SVG is parsed with
# python3's xml.etree (the program's polyline, its points).  Without root
# or tracefs only the refusal and memview's "no page events" are checked.
# The accounting rules themselves are tested on crafted traces in
# tests/memview_acct.c.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

N=48
E=$((N * 256))
PROG=$T/memphases
# An ASan/UBSan build of libktrace.so needs its runtime first in the
# uninstrumented program (as tests/kernel_record.sh does).
san_preload
cc -O1 -g -o "$PROG" "$KTRACE_SRC/tests/kernel/memphases.c" || { echo "Bail out! cannot compile memphases"; exit 1; }
chmod 755 "$T" "$PROG"

# usage errors and a trace without page events
"$MKTRACE" -s 1 -r 20 "$T/plain" >/dev/null
run "$KTRACE" memview "$T/plain"
is "$rc" 1 "memview of a trace without page events: exit 1"
like "$T/err" "^ktrace memview: .*no page allocation or free events \(record with" "... saying how to record them"
run "$KTRACE" memview -i 0 "$T/plain"
is "$rc" 2 "memview -i 0: usage error"
like "$T/err" "^ktrace memview: option '--interval' needs 1..86400000 ms, not '0'$" "... naming the option"
run "$KTRACE" memview --svg /nonexistent/dir/x.svg "$T/plain"
is "$rc" 1 "memview of a trace without events, to an unwritable file: exit 1"
run "$KTRACE" memview --help
like "$T/out" "^usage: ktrace memview" "memview --help"

if [ "$(id -u)" -ne 0 ] || ! grep -qw tracefs /proc/filesystems; then
	run "$KTRACE" record -q --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE -o "$T/nr" -- "$PROG" 1
	like "$T/err" "kernel events not recorded" "without root or tracefs: record says kernel events are not recorded"
	done_testing
fi

# ---- the recording ----------------------------------------------------------
run "$KTRACE" record -q --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE --kernel-buffer 32M -o "$T/mv" -- "$PROG" "$N"
is "$rc" 0 "record --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE of memphases $N: exit 0"
P=$(sed -n 's/^pid //p' "$T/out")
ok "$([ -n "$P" ]; echo $?)" "memphases said its pid ($P)"
like "$T/mv/kernel/metadata" "^event 64 kevent MEM_PAGE_ALLOC memory pfn,order,gfp_flags$" "the trace has MEM_PAGE_ALLOC"

run "$KTRACE" memview -n 0 "$T/mv"
is "$rc" 0 "memview: exit 0"
cp "$T/out" "$T/tot"
like "$T/tot" "^# ktrace memview .*: [0-9]+ page events, interval 1.000 s, pages of 4 KiB$" "a header line"
row=$(awk -v p="$P" '$1 == p && NF == 9 { print; exit }' "$T/tot")
echo "# $row"
set -- $row
alloc=$3 freed=$4 peak=$8 peakk=$9
hi=$((E + E / 10 + 1024))
ok "$([ "${alloc:-0}" -ge "$E" ] && [ "$alloc" -le "$hi" ]; echo $?)" \
	"the program allocated $alloc pages: E = $E ($N MiB) .. $hi"
ok "$([ "${peak:-0}" -ge "$E" ] && [ "$peak" -le "$hi" ]; echo $?)" "its peak is $peak pages, E .. $hi"
is "$peakk" "$((peak * 4))" "peak-KiB = 4 x peak pages"
is "$2" memphases "its name is the program's (metadata comm, not the recorder's pre-exec name)"
ok "$([ "${freed:-0}" -ge "$E" ]; echo $?)" "it freed $freed >= E pages"

run "$KTRACE" memview -i 500 -p "$P" "$T/mv"
is "$rc" 0 "memview -i 500 -p PID: exit 0"
cp "$T/out" "$T/iv"
is "$(awk 'NF == 9 && $1 ~ /^[0-9]+$/' "$T/iv" | wc -l | tr -d ' ')" 1 "-p: one process in the totals"
# the phases: (index of first growth, plateau, drop) in interval order
awk -v p="$P" -v e="$E" '$2 == p && NF == 7 && $1 ~ /^[0-9.]+$/ {
	n++; held = $6; freed = $5
	if (!g && held >= 0.15 * e && held <= 0.85 * e) g = n
	if (g && !h && held >= e) h = n
	if (h && !d && freed >= 0.9 * e) d = n
	last = held
} END { printf "%d %d %d %d %d\n", n, g, h, d, (last < e / 10) }' "$T/iv" >"$T/ph"
read nint g h d low <"$T/ph"
echo "# intervals $nint: growth at $g, plateau at $h, drop at $d"
ok "$([ "$g" -gt 0 ]; echo $?)" "phase 1: an interval end with held pages between 15% and 85% of E (growing)"
ok "$([ "$h" -gt "$g" ]; echo $?)" "phase 2: later, an interval end holding >= E pages"
ok "$([ "$d" -gt "$h" ]; echo $?)" "phase 3: later, an interval freeing >= 90% of E pages"
is "$low" 1 "at the end it holds under E/10 pages"

# The page events are the whole system's: under load, other processes may
# allocate more than memphases, so -n 3's three are whoever the text table
# ranks first; the program's own curve is drawn with -p.
run "$KTRACE" memview -i 500 -n 3 "$T/mv"
top3=$(awk 'NF == 9 && $1 ~ /^[0-9]+$/ { print $1 }' "$T/out" | sort -n | paste -sd' ')
run "$KTRACE" memview -i 500 -n 3 --svg "$T/mv3.svg" "$T/mv"
is "$rc" 0 "memview -n 3 --svg: exit 0"
run "$KTRACE" memview -i 500 -p "$P" --svg "$T/mv.svg" "$T/mv"
is "$rc" 0 "memview -p PID --svg: exit 0"
python3 - "$T/mv.svg" "$P" "$T/mv3.svg" "$top3" >"$T/svgchk" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
    root3 = ET.parse(sys.argv[3]).getroot()
except Exception as e:
    print("FAIL the SVGs parse:", e); sys.exit()
print("ok the SVGs parse with xml.etree")
print(("ok" if root.tag.endswith("svg") and root3.tag.endswith("svg") else "FAIL") + " their root is <svg>")
pids3 = sorted(int(e.get("data-pid")) for e in root3.iter() if e.tag.endswith("polyline"))
want3 = sorted(int(p) for p in sys.argv[4].split())
print(("ok" if 1 <= len(pids3) <= 3 and pids3 == want3 else "FAIL") +
      " -n 3: 1..3 polylines, the processes the text table lists (%s; the table: %s)" % (pids3, want3))
lines = [e for e in root.iter() if e.tag.endswith("polyline")]
mine = [e for e in lines if e.get("data-pid") == sys.argv[2]]
print(("ok" if len(mine) == 1 else "FAIL") + " the program's polyline (data-pid %s)" % sys.argv[2])
if mine:
    pts = [tuple(map(float, p.split(","))) for p in mine[0].get("points").split()]
    ys = [y for x, y in pts]
    xs = [x for x, y in pts]
    print(("ok" if len(pts) >= 6 else "FAIL") + " it has a point per interval (%d)" % len(pts))
    print(("ok" if xs == sorted(xs) else "FAIL") + " its x coordinates grow")
    top = ys.index(min(ys))
    print(("ok" if 0 < top < len(ys) - 1 and ys[-1] > min(ys) + 0.8 * (max(ys) - min(ys)) else "FAIL")
          + " it rises to its peak and falls back at the end")
EOF
tap_results "$T/svgchk" "SVG"

# ---- a non-UTF-8 process name (tests/formats/badname.c) ----------------------
cc -O1 -g -finstrument-functions -pthread -o "$T/badname" "$KTRACE_SRC/tests/formats/badname.c" ||
	{ echo "Bail out! cannot compile badname"; exit 1; }
chmod 755 "$T/badname"
run "$KTRACE" record -q --kernel=MEM_PAGE_ALLOC,MEM_PAGE_FREE -o "$T/bn" -- "$T/badname"
is "$rc" 0 "record of badname with page events: exit 0"
BP=$(sed -n 's/^pid //p' "$T/bn/metadata")
run "$KTRACE" memview -p "$BP" --svg "$T/bn.svg" "$T/bn"
is "$rc" 0 "memview --svg -p BADNAME_PID: exit 0"
python3 - "$T/bn.svg" "$BP" >"$T/bnchk" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print("FAIL the SVG parses:", e); sys.exit()
print("ok the SVG with a non-UTF-8 process name parses")
t = [e.findtext("{http://www.w3.org/2000/svg}title") or e.findtext("title") for e in root.iter()
     if e.tag.endswith("polyline") and e.get("data-pid") == sys.argv[2]]
want = "bad\\xff\\xfe\\x80name " + sys.argv[2]
print(("ok" if t == [want] else "FAIL") + " the polyline's title is the name with \\xNN for the bad bytes (%r)" % t)
EOF
tap_results "$T/bnchk" "badname"
run "$KTRACE" memview -p "$BP" "$T/bn"
like "$T/out" "^ +$BP bad\\\\xff\\\\xfe\\\\x80name " "the text table writes it the same way"

done_testing
