#!/bin/sh
# scripts/check-patch-sqlite.sh - check ktrace's run-time patching of a
# program built without hooks against uftrace's, on the SQLite shell.
#
#   scripts/check-patch-sqlite.sh [BUILD_DIR]      (make test-patch-sqlite)
#
# Builds the plain SQLite shell (scripts/sqlite-build.sh BUILD_DIR plain:
# cc -O2 -g, no hooks -> BUILD_DIR/demo/sqlite3-plain), runs a small SQL
# workload (written below) on a fresh database file three times: plain,
# under `ktrace record --no-libcall` (every function patched at start) and
# under `uftrace record --no-libcall -P .` (uftrace's dynamic patching),
# and compares
#   - the shell's output of the three runs;
#   - the call count of every function both traces contain
#     (`ktrace kd --format=csv`, `uftrace report -f call`);
#   - the call trees (tests/helpers/calltree.py: per thread, one
#     "DEPTH NAME" line per call in entry order), after dropping from both
#     the functions only one tool recorded (each tool leaves some
#     functions unpatched that the other patches: they are listed).
# Then prints a summary.  uftrace v0.13 leaves alone functions of exactly
# 5 bytes (a tail `jmp`), those with a jump to their .cold part ("bad
# jump") and some whose first instructions are RIP-relative; ktrace
# patches these: they are the usual "only ktrace recorded" functions.
#
# Not part of `make test` or .ci/run: it takes about 20 s once SQLite is
# built (~1 min): uftrace records and replays ~0.9 million calls.
#
# BUILD_DIR (default build) holds the ktrace built by `make`.  Needs uftrace
# (scripts/deps.sh --bench) and python3.  KTRACE_DEMO_CACHE: where the
# SQLite sources are cached (scripts/sqlite-build.sh).  KEEP=1 keeps the
# working directory (the two traces, the count and tree files) and says
# where it is.
#
# Exit status: 0 outputs, counts and trees equal; 1 they differ or ktrace
# record failed; 2 usage or setup error (no ktrace built, no uftrace, the
# SQLite build or uftrace's record failed).
set -eu

me=check-patch-sqlite.sh
usage() { echo "usage: $me [BUILD_DIR]   (default: build; run make first)" >&2; exit 2; }
setup() { echo "$me: $*" >&2; exit 2; }

case "${1:-}" in -h|--help|-*) usage ;; esac
[ $# -le 1 ] || usage
B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
case "$B" in /*) ;; *) B=$(pwd)/$B ;; esac

KTRACE=$B/ktrace
[ -x "$KTRACE" ] || setup "$KTRACE not found: build ktrace first (make)"
command -v uftrace >/dev/null 2>&1 ||
	setup "uftrace not installed: run scripts/deps.sh --bench (or apt install uftrace)"
command -v python3 >/dev/null 2>&1 || setup "python3 not found"
TREE=$SRC/tests/helpers/calltree.py

"$SRC/scripts/sqlite-build.sh" "$B" plain || setup "building the plain SQLite shell failed"
SQLITE=$B/demo/sqlite3-plain

W=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-patch-sqlite-XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
	trap 'echo "$me: files kept in $W" >&2' EXIT
else
	trap 'rm -rf "$W"' EXIT
fi
trap 'exit 2' HUP INT PIPE TERM

# The workload: small enough for uftrace to record and replay in well
# under a minute, broad enough to reach the parser, the code generator,
# the VDBE, the B-tree, the pager and the OS layer (a database file), the
# sorter, indexes, a join, aggregates and a window function.  Every value
# is computed, so each run does the same work.
cat >"$W/workload.sql" <<'EOF'
BEGIN;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, day INTEGER,
                    amount REAL, status TEXT, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO customer
  SELECT i, 'customer-' || i, 'city-' || (i * 7 % 97), 2000 + i % 25 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO orders
  SELECT i, (i * 7919) % 1000 + 1, i % 365, ((i * 31337) % 100000) / 100.0,
         CASE i % 5 WHEN 0 THEN 'open' WHEN 1 THEN 'paid' WHEN 2 THEN 'shipped'
                    WHEN 3 THEN 'paid' ELSE 'returned' END,
         printf('order %d for %d', i, (i * 7919) % 1000 + 1)
  FROM n;
COMMIT;
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_day_amount ON orders(day, amount);
SELECT status, count(*), round(sum(amount), 2), round(avg(amount), 2)
  FROM orders GROUP BY status ORDER BY status;
SELECT day, count(*), max(amount) FROM orders WHERE day BETWEEN 100 AND 110
  GROUP BY day ORDER BY day LIMIT 3;
SELECT c.city, count(*) AS n, round(sum(o.amount), 2) AS total
  FROM orders o JOIN customer c ON c.id = o.customer_id
  GROUP BY c.city ORDER BY total DESC LIMIT 5;
SELECT customer_id, day, running FROM (
  SELECT customer_id, day,
         round(sum(amount) OVER (PARTITION BY customer_id ORDER BY day, id), 2) AS running
    FROM orders WHERE customer_id <= 200)
  ORDER BY running DESC LIMIT 3;
UPDATE orders SET status = 'late' WHERE status = 'open' AND day < 60;
DELETE FROM orders WHERE amount < 50;
SELECT status, count(*) FROM orders GROUP BY status ORDER BY status;
SELECT name FROM customer WHERE city = 'city-13' ORDER BY since DESC, id LIMIT 2;
EOF

# each run starts from no database, at the same path
DB=$W/test.db
fresh() { rm -f "$DB" "$DB-journal" "$DB-wal" "$DB-shm"; }

start=$(date +%s)
fresh
"$SQLITE" "$DB" <"$W/workload.sql" >"$W/plain.out" 2>&1 && rc=0 || rc=$?
echo "exit $rc" >>"$W/plain.out"

fresh
krc=0
"$KTRACE" record -q --no-libcall -o "$W/k" -- "$SQLITE" "$DB" <"$W/workload.sql" >"$W/k.out" 2>"$W/k.err" || krc=$?
echo "exit $krc" >>"$W/k.out"

fresh
urc=0
env -u LD_PRELOAD uftrace record --no-libcall -P . -d "$W/u" "$SQLITE" "$DB" \
	<"$W/workload.sql" >"$W/u.out" 2>"$W/u.err" || urc=$?
echo "exit $urc" >>"$W/u.out"
if [ ! -d "$W/u" ]; then
	sed 's/^/  /' "$W/u.err" >&2
	setup "uftrace record failed (status $urc)"
fi

fail=0
if ! cmp -s "$W/k.out" "$W/plain.out" || [ -s "$W/k.err" ]; then
	echo "FAIL: ktrace record changed the shell's output or status, or printed to stderr:"
	diff "$W/plain.out" "$W/k.out" | head -n 10 | sed 's/^/  /'
	head -n 10 "$W/k.err" | sed 's/^/  stderr: /'
	fail=1
fi
if ! cmp -s "$W/u.out" "$W/plain.out"; then
	echo "note: uftrace record changed the shell's output or status:"
	diff "$W/plain.out" "$W/u.out" | head -n 10 | sed 's/^/  /'
fi
[ -d "$W/k" ] || { echo "FAIL: ktrace record wrote no trace (status $krc)"; exit 1; }

# "name count" per function, sorted (as tests/helpers/tap.sh's kd_counts
# and uftrace_counts)
"$KTRACE" kd --format=csv "$W/k" | python3 -c '
import csv, sys
for n, c in sorted((r["name"], r["count"]) for r in csv.DictReader(sys.stdin)):
    print(n, c)' >"$W/k.counts"
uftrace report -d "$W/u" -f call --no-pager 2>/dev/null | python3 -c '
import sys
rows = []
for line in sys.stdin.read().splitlines()[2:]:
    parts = line.split(None, 1)
    if len(parts) == 2 and not parts[1].startswith("linux:"):
        rows.append((parts[1].strip(), parts[0]))
for n, c in sorted(rows):
    print(n, c)' >"$W/u.counts"

# join the two: common functions, mismatches, functions of one tool only
python3 - "$W/k.counts" "$W/u.counts" "$W" <<'EOF'
import sys
def load(p):
    d = {}
    for line in open(p):
        n, c = line.rsplit(None, 1)
        d[n] = int(c)
    return d
k, u = load(sys.argv[1]), load(sys.argv[2])
w = sys.argv[3]
common = sorted(set(k) & set(u))
konly = sorted(set(k) - set(u))
uonly = sorted(set(u) - set(k))
bad = [(n, k[n], u[n]) for n in common if k[n] != u[n]]
with open(w + "/summary", "w") as f:
    f.write("%d %d %d %d %d\n" % (len(common), sum(k[n] for n in common), len(bad), len(konly), len(uonly)))
with open(w + "/drop", "w") as f:
    f.write(",".join(konly + uonly) + "\n")
with open(w + "/mismatch", "w") as f:
    for n, a, b in bad:
        f.write("  %-40s ktrace %d, uftrace %d\n" % (n, a, b))
with open(w + "/konly", "w") as f:
    for n in konly:
        f.write("  %-40s %d calls\n" % (n, k[n]))
with open(w + "/uonly", "w") as f:
    for n in uonly:
        f.write("  %-40s %d calls\n" % (n, u[n]))
EOF
read -r ncommon ncalls nbad nkonly nuonly <"$W/summary"
# at most 40 lines of a list (KEEP=1 keeps the whole)
list() {
	head -n 40 "$W/$1"
	n=$(wc -l <"$W/$1")
	[ "$n" -le 40 ] || echo "  ... $((n - 40)) more (KEEP=1 keeps them all in $1)"
}
drop=$(cat "$W/drop")

# the call trees at the depths each tool recorded, without those functions
"$KTRACE" kd -c --format=csv "$W/k" | python3 "$TREE" ktrace-csv --drop "$drop" >"$W/k.tree"
uftrace replay -d "$W/u" --no-pager 2>/dev/null | python3 "$TREE" uftrace --drop "$drop" >"$W/u.tree"
end=$(date +%s)

echo "SQLite shell built without hooks ($SQLITE):"
# DIR/kft-dynpatch: "selected: N", "patched: N", then "REASON: N" lines
# (the functions left alone, by reason), then "skipped: NAME: reason"
awk -F': ' '
	/^skipped: / { next }
	$1 == "selected" { sel = $2; next }
	$1 == "patched" { pat = $2; next }
	NF == 2 && $2 > 0 { why = why sep $2 " " $1; sep = ", " }
	END {
		printf "  ktrace patched %s of its %s functions", pat, sel
		if (why != "") printf " (left alone: %s)", why
		printf "\n"
	}' "$W/k/kft-dynpatch" 2>/dev/null || echo "  ktrace: no $W/k/kft-dynpatch"
echo "functions both recorded: $ncommon ($ncalls calls each)"
if [ "$nbad" -eq 0 ]; then
	echo "counts: equal for all $ncommon"
else
	echo "counts: $nbad functions differ (name, ktrace's count, uftrace's):"
	list mismatch
	fail=1
fi
echo "functions only ktrace recorded: $nkonly"
list konly
echo "functions only uftrace recorded: $nuonly"
list uonly
ktlines=$(wc -l <"$W/k.tree" | tr -d ' ')
utlines=$(wc -l <"$W/u.tree" | tr -d ' ')
if [ "$ktlines" -gt 0 ] && cmp -s "$W/k.tree" "$W/u.tree"; then
	echo "call trees: equal without those ($(grep -c '^thread$' "$W/k.tree") thread(s), $((ktlines - $(grep -c '^thread$' "$W/k.tree"))) calls)"
else
	echo "call trees: differ (ktrace $ktlines lines, uftrace $utlines; first difference, '<' ktrace, '>' uftrace):"
	diff "$W/k.tree" "$W/u.tree" | head -n 12 | sed 's/^/  /'
	fail=1
fi
echo "time: $((end - start)) s (three runs, counts and trees)"
if [ $fail -eq 0 ]; then
	echo "PASS"
else
	echo "FAIL"
fi
exit $fail
