#!/bin/sh
# tests/kernel_exc.sh - EXCEPTION_ENTRY on the tracefs backend (`ktrace
# record --kernel=EXCEPTION_ENTRY`, kclient/exc_tracefs.c): kprobe events
# on the trap handlers where the kernel has kprobe events, vector 14 beside
# the page fault tracepoints always, as ktrace.ko makes them.
#
# kmod/tests/excprog.c (the module suite's program, built -no-pie so nm's
# addresses are its run-time ones) raises N int3, N divide errors and N
# reads of unmapped addresses 0x10 + 8 i and (argument "ud") N ud2, each
# caught by a signal handler.
# Expected, independently of ktrace: for the program's pid, N vector-0
# entries whose ip lies in main (nm -S) when the metadata says vector 0 is
# covered (a kernel with kprobe events), else none and the reason naming
# the missing kprobe events (the host's 6.18 has CONFIG_KPROBES off); the
# same for int3 (vector 3) and ud2 (vector 6); vector-14 entries exactly
# as many as the exceptions:page_fault_user/kernel events that trace-cmd
# decodes from the raw copy (export --format=trace.dat, a third-party
# reader), with the same ips, N of them in main; no other vector; no
# kprobe event of ktrace's pid left in dynamic_events after the run,
# after SIGINT too;
# EXCEPTION_EXIT unavailable, saying why.  Root and tracefs needed (CI);
# the recording runs in ktrace's own instance, so other tracefs users do
# not disturb it.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

N=25
TF=/sys/kernel/tracing
PROG=$T/excprog
san_preload
cc -O1 -g -no-pie -o "$PROG" "$KTRACE_SRC/kmod/tests/excprog.c" || { echo "Bail out! cannot compile excprog"; exit 1; }
[ "$(id -u)" -eq 0 ] && [ -d $TF/instances ] || { echo "Bail out! needs root and tracefs at $TF"; exit 1; }
set -- $(nm -S "$PROG" | awk '$4 == "main" { print $1, $2 }')
MAIN_LO=$((0x$1))
MAIN_HI=$((0x$1 + 0x$2))
KPROBES=0
[ -e $TF/kprobe_events ] && KPROBES=1

run "$KTRACE" record -q --kernel=EXCEPTION_ENTRY,EXCEPTION_EXIT -o "$T/tr" -- "$PROG" $N ud ss
is "$rc" 0 "record --kernel=EXCEPTION_ENTRY,EXCEPTION_EXIT of excprog $N ud ss: exit 0"
XPID=$(sed -n 's/^pid //p' "$T/out")
KPID=$(sed -n 's/^pid //p' "$T/tr/kernel/metadata")
like "$T/out" "^de $N$" "excprog caught its $N divide errors"
like "$T/out" "^ud $N$" "... and its $N invalid opcodes"
like "$T/out" "^ss $N$" "... and its $N single steps"
M=$T/tr/kernel/metadata
unlike "$M" "^unavailable 32 " "EXCEPTION_ENTRY is available"
like "$M" "^unavailable 33 EXCEPTION_EXIT module only .*cannot read the trap number" \
	"EXCEPTION_EXIT is unavailable, saying why"
cov=$(sed -n 's/^# EXCEPTION_ENTRY vectors \([0-9 ]*\).*/\1/p' "$M")
echo "# covered vectors: $cov; $(grep '^# EXCEPTION_ENTRY' "$M")"
has_vec() { case " $cov " in *" $1 "*) return 0 ;; esac; return 1; }
ok "$(has_vec 14; echo $?)" "vector 14 is covered (the page fault tracepoints)"
if [ $KPROBES = 0 ]; then
	is "$cov" "14" "no kprobe events on this kernel: vector 14 only"
	like "$M" "^# EXCEPTION_ENTRY vectors 14; not: no kprobe events on this kernel" "... and the metadata says why"
else
	ok "$(has_vec 0; echo $?)" "kprobe events: vector 0 covered (do_error_trap)"
fi
grep -q "ktrace_exc/[a-z0-9]*_$KPID\b" $TF/dynamic_events
ok "$([ $? -ne 0 ]; echo $?)" "no kprobe event of ktrace (pid $KPID) left in dynamic_events"

"$KTRACE" print -C "$T/tr" >"$T/p.csv" 2>"$T/err"
is "$?" 0 "ktrace print -C reads the trace"
"$KTRACE" export --format=trace.dat -o "$T/t.dat" "$T/tr" 2>"$T/err"
is "$?" 0 "export --format=trace.dat"
trace-cmd report -R -t "$T/t.dat" >"$T/report" 2>"$T/report.err"
is "$?" 0 "trace-cmd report reads it"

# count of EXCEPTION_ENTRY of excprog with vector $1 (and ip in main: $2 = 1)
count() {
	awk -F, -v p="$XPID" -v v="$1" -v m="$2" -v lo="$MAIN_LO" -v hi="$MAIN_HI" '
		$6 == p && $9 == "EXCEPTION_ENTRY" {
			split($10, a, ";"); vec = substr(a[1], 8); ip = substr(a[3], 4) + 0
			if (vec == v && (!m || (ip >= lo && ip < hi))) n++
		} END { print n + 0 }' "$T/p.csv"
}
for v in 0 3 6; do
	if has_vec $v; then want=$N; else want=0; fi
	is "$(count $v 0)" "$want" "vector $v: $want EXCEPTION_ENTRY for excprog (pid $XPID)"
	is "$(count $v 1)" "$want" "... with the ip in main ($(printf '%#x' $MAIN_LO)..$(printf '%#x' $MAIN_HI))"
done
if ! has_vec 0; then
	like "$M" "^# EXCEPTION_ENTRY vectors .*; not: .*(kprobe|do_error_trap)" "vector 0 not covered: the metadata says why"
fi
other=$(awk -F, -v p="$XPID" '$6 == p && $9 == "EXCEPTION_ENTRY" && $10 !~ /^vector=(0|3|6|14);/' "$T/p.csv" | wc -l)
is "$other" 0 "no other vector in excprog (single steps, vector 1, are not covered here)"
kaddr=$(awk -F, '$9 == "EXCEPTION_ENTRY" { n = split($10, f, ";"); for (i = 1; i <= n; i++)
	if (substr(f[i], index(f[i], "=") + 1) + 0 >= 18446603336221196288) c++ } END { print c + 0 }' "$T/p.csv")
is "$kaddr" 0 "no EXCEPTION_ENTRY field of the trace ($(grep -c ',EXCEPTION_ENTRY,' "$T/p.csv") records, every task) is a kernel address"

# vector 14 against the page fault tracepoints as trace-cmd decodes them
# (raw: "address=0x.. ip=0x.. error_code=0x..")
python3 - "$T/report" "$T/p.csv" "$XPID" "$MAIN_LO" "$MAIN_HI" "$N" >"$T/facts" <<'EOF'
import csv, re, sys
rep, pcsv, pid, lo, hi, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
tc = []
for l in open(rep, "rb").read().decode("utf-8", "replace").split("\n"):
    m = re.search(r"-(\d+)\s+\[\d+\].*\s(page_fault_(?:user|kernel)):\s+(.*)$", l)
    if not m or m.group(1) != pid:
        continue
    f = dict(kv.split("=", 1) for kv in m.group(3).split() if "=" in kv)
    ip = int(f["ip"], 16)
    tc.append(ip if ip < 1 << 63 else 0)
kt = []
for r in csv.DictReader(open(pcsv)):
    if r["tid"] == pid and r["name"] == "EXCEPTION_ENTRY" and r["args"].startswith("vector=14;"):
        kt.append(int(r["args"].split(";")[2][3:]))
print("tc_pf", len(tc))
print("kt_14", len(kt))
print("same_ips", int(sorted(tc) == sorted(kt)))
print("in_main", sum(1 for ip in kt if lo <= ip < hi))
EOF
fact() { sed -n "s/^$1 //p" "$T/facts"; }
ok "$([ "$(fact tc_pf)" -ge $N ]; echo $?)" "trace-cmd: $(fact tc_pf) page fault events of excprog (>= $N)"
is "$(fact kt_14)" "$(fact tc_pf)" "as many vector-14 EXCEPTION_ENTRY as page fault events"
is "$(fact same_ips)" 1 "... with the same ips"
is "$(fact in_main)" "$N" "... $N of them in main (the unmapped reads)"

# SIGINT: a system-wide recording removes its kprobe events
"$KTRACE" record -q --kernel=EXCEPTION_ENTRY -o "$T/sys" >/dev/null 2>"$T/err" &
pid=$!
i=0
while [ ! -e "$TF/instances/ktrace-$pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done # 60 s: a hang guard, not a tolerance
sleep 0.3
kill -INT $pid
wait $pid
is "$?" 0 "record --kernel=EXCEPTION_ENTRY system-wide: SIGINT ends it (exit 0)"
grep -q "ktrace_exc/[a-z0-9]*_$pid\b" $TF/dynamic_events
ok "$([ $? -ne 0 ]; echo $?)" "... and leaves no kprobe event of pid $pid"
ok "$([ ! -e "$TF/instances/ktrace-$pid" ]; echo $?)" "... nor its instance"

done_testing
