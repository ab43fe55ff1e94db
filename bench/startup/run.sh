#!/bin/bash
# bench/startup/run.sh - start-up: what ktrace costs a short program and
# how quickly its commands answer, beside uftrace and the untraced run
# (`make bench`, PARTS=startup; a few seconds).  Prints the table of
# docs/PERFORMANCE.md, "Start-up", and appends it to
# BUILD_DIR/bench/results.md.
#
#   bench/startup/run.sh BUILD_DIR [SRC_DIR]
#
# Rows, each run STARTUP_REPS times (default 20), all rows interleaved
# run by run so that a change of the machine's speed touches every row
# alike; wall milliseconds of the whole process, median:
#   tiny              bench/startup/tiny.c (main() and one call), untraced,
#                     under `ktrace record` (-finstrument-functions build)
#                     and under `uftrace record` (-pg build)
#   chain             bench/startup/chain.c 100: 100 short processes, each
#                     forked and exec'd by the one before, untraced and
#                     under each tracer (every image traced: ktrace in
#                     DIR and DIR.exec-PID-N, uftrace in one directory)
#   --version         `ktrace --version`, `uftrace --version`
#   info              `ktrace info` and `uftrace info` of their trace of
#                     the tiny program
# The "over" column is the row minus its untraced run (for --version and
# info: minus the tiny program's start, the cost of any process), and
# "x uftrace" the row's median over uftrace's.
#
# The traces are written under STARTUP_WORK (default /dev/shm, a tmpfs,
# else BUILD_DIR/bench/startup): each traced image creates a dozen files
# (ktrace: DIR.exec-PID-N per exec'd image), which every run then deletes,
# and on an ext4 without a journal (this project's VMs' root) creating an
# inode costs time in proportion to the inodes deleted in the last 30 s
# (ext4's recently_deleted()), so the chain rows there measure the file
# system's churn more than the tracers.  The table names the file system.
set -euo pipefail
B=$(cd "${1:?usage: bench/startup/run.sh BUILD_DIR [SRC_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
KT=$B/ktrace
O=$B/bench/startup
CC=${CC:-cc}
die() { echo "bench/startup: $*" >&2; exit 1; }
[ -x "$KT" ] || die "$KT is missing: run make B=$B first"
mkdir -p "$O"
WD=${STARTUP_WORK:-/dev/shm}
[ -d "$WD" ] && [ -w "$WD" ] || WD=$O
W=$(mktemp -d "$WD/ktrace-startup.XXXXXX")
trap 'rm -rf "$W"' EXIT
for p in tiny chain; do
	"$CC" -O2 -finstrument-functions -o "$O/$p-inst" "$SRC/bench/startup/$p.c" &&
		"$CC" -O2 -pg -o "$O/$p-pg" "$SRC/bench/startup/$p.c" || die "cannot build bench/startup/$p.c"
done
"$O/chain-inst" 100 || die "chain-inst 100 failed"
have_uf=0
command -v uftrace > /dev/null 2>&1 && have_uf=1
# the traces `info` reads: the tiny program's
"$KT" record -q -o "$W/kt-info" -- "$O/tiny-inst" || die "ktrace record of tiny failed"
if [ $have_uf = 1 ]; then
	env -u LD_PRELOAD uftrace record -d "$W/uf-info" "$O/tiny-pg" > /dev/null 2>&1 ||
		die "uftrace record of tiny failed"
fi

python3 - "$O" "$KT" "$W" "${STARTUP_REPS:-20}" "$have_uf" > "$O/startup.md" <<'PY' || die "start-up rows failed"
import glob, os, shutil, statistics, subprocess, sys, time
o, kt, w, reps, have_uf = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
env = dict(os.environ)
env.pop("LD_PRELOAD", None)  # uftrace refuses a preload of its own
uf = ["uftrace"]
# (group, row, command, row it is measured over, uftrace's row)
rows = [
    ("tiny", "tiny, untraced (-finstrument-functions build)", [o + "/tiny-inst"], None, None),
    ("tiny", "ktrace record tiny", [kt, "record", "-q", "-o", w + "/s", "--", o + "/tiny-inst"],
     "tiny, untraced (-finstrument-functions build)", "uftrace record tiny"),
    ("chain", "chain 100, untraced", [o + "/chain-inst", "100"], None, None),
    ("chain", "ktrace record chain 100", [kt, "record", "-q", "-o", w + "/s", "--", o + "/chain-inst", "100"],
     "chain 100, untraced", "uftrace record chain 100"),
    ("cmd", "ktrace --version", [kt, "--version"], "tiny, untraced (-finstrument-functions build)",
     "uftrace --version"),
    ("cmd", "ktrace info (trace of tiny)", [kt, "info", w + "/kt-info"],
     "tiny, untraced (-finstrument-functions build)", "uftrace info (trace of tiny)"),
]
if have_uf:
    rows += [
        ("tiny", "tiny, untraced (-pg build)", [o + "/tiny-pg"], None, None),
        ("tiny", "uftrace record tiny", uf + ["record", "-d", w + "/s", o + "/tiny-pg"],
         "tiny, untraced (-pg build)", None),
        ("chain", "chain 100, untraced (-pg build)", [o + "/chain-pg", "100"], None, None),
        ("chain", "uftrace record chain 100", uf + ["record", "-d", w + "/s", o + "/chain-pg", "100"],
         "chain 100, untraced (-pg build)", None),
        ("cmd", "uftrace --version", uf + ["--version"], "tiny, untraced (-pg build)", None),
        ("cmd", "uftrace info (trace of tiny)", uf + ["info", "-d", w + "/uf-info"],
         "tiny, untraced (-pg build)", None),
    ]
ms = {r[1]: [] for r in rows}
for _ in range(reps):
    for _, name, cmd, _, _ in rows:
        t = time.perf_counter()
        rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env).returncode
        ms[name].append((time.perf_counter() - t) * 1000)
        if rc != 0 and "tiny" not in name:  # tiny exits 0; a failure is the bench's
            sys.exit(f"{name}: exit status {rc}")
        shutil.rmtree(w + "/s", ignore_errors=True)
        for d in glob.glob(w + "/s.exec-*"):
            shutil.rmtree(d, ignore_errors=True)
med = {k: statistics.median(v) for k, v in ms.items()}
print("| start-up | median ms | over, ms | x uftrace |")
print("|---|---:|---:|---:|")
for group in ("tiny", "chain", "cmd"):
    for g, name, _, over, peer in rows:
        if g != group:
            continue
        o_ms = f"{med[name] - med[over]:.2f}" if over else ""
        x = f"{med[name] / med[peer]:.2f}" if peer and peer in med else ""
        print(f"| {name} | {med[name]:.2f} | {o_ms} | {x} |")
print()
print(f"Median of {reps} runs of each row, interleaved; wall time of the whole process.")
print("\"over\": minus the untraced run (--version and info: minus the tiny program's).")
PY
{
	echo "Traces written in $WD ($(stat -f -c %T "$WD"))."
	echo "ktrace: $("$KT" --version); $(uftrace --version 2>/dev/null | head -n 1 || echo "no uftrace")"
	echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r), $(date -u +%Y-%m-%d)"
} >> "$O/startup.md"
cat "$O/startup.md"
cat "$O/startup.md" >> "$B/bench/results.md"
