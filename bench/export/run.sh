#!/bin/bash
# bench/export/run.sh - how fast and how big each viewer format is on the
# SQLite demo trace (`make demo`'s workload: scripts/demo.sql on the
# instrumented sqlite3 shell, ~178M calls): records it once with `ktrace
# record` (defaults: every call, streamed), then runs each export once,
# writing its output to a file on the same disk, and prints the table of
# docs/PERFORMANCE.md, "The viewers' formats": output bytes, bytes per
# call, wall and CPU seconds (user + system: steadier than wall on a
# shared machine), million calls per CPU second, peak RSS.
#
#   bench/export/run.sh BUILD_DIR [SRC_DIR]          (`make bench PARTS=export`)
#
# BUILD_DIR must hold ktrace (`make B=BUILD_DIR`) and, from `make demo` or
# scripts/sqlite-build.sh, demo/sqlite3-inst (built here when missing).
# Environment:
#   EXPORT_WORK     where the trace and the outputs go (default
#                   BUILD_DIR/bench/export/work; needs ~3 GB for the trace and
#                   ~23 GB for the largest output, each output deleted after
#                   its row)
#   EXPORT_FORMATS  the formats to run (default "perfetto chrome csv ctf folded")
#   EXPORT_TRACE    an existing trace to export instead of recording one
set -euo pipefail
B=$(cd "${1:?usage: bench/export/run.sh BUILD_DIR [SRC_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
KT=$B/ktrace
W=${EXPORT_WORK:-$B/bench/export/work}
FORMATS=${EXPORT_FORMATS:-perfetto chrome csv ctf folded}
die() { echo "bench/export: $*" >&2; exit 1; }
[ -x "$KT" ] || die "$KT is missing: run make B=$B first"
mkdir -p "$W"

TR=${EXPORT_TRACE:-}
if [ -z "$TR" ]; then
	[ -x "$B/demo/sqlite3-inst" ] || "$SRC/scripts/sqlite-build.sh" "$B" inst > /dev/null ||
		die "cannot build the instrumented sqlite3 (scripts/sqlite-build.sh)"
	TR=$W/trace
	rm -rf "$TR"
	echo "recording the demo workload into $TR" >&2
	"$KT" record -q -o "$TR" -- "$B/demo/sqlite3-inst" :memory: < "$SRC/scripts/demo.sql" > /dev/null ||
		die "ktrace record failed"
fi
calls=$("$KT" info "$TR" | sed -n 's/^# calls *: *\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$calls" ] && [ "$calls" -gt 0 ] || die "cannot count the calls of $TR"
tbytes=$(du -sb "$TR" | cut -f1)

echo "| format | output bytes | bytes/call | wall s | CPU s | M calls/s (CPU) | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|"
printf '| ktrace'"'"'s own trace | %s | %.1f | | | | |\n' "$tbytes" "$(echo "$tbytes / $calls" | bc -l)"
for f in $FORMATS; do
	out=$W/out.$f
	rm -rf "$out"
	case $f in
	ctf) args=(export --format=ctf -o "$out" "$TR") ;;
	*) args=(export --format="$f" -o "$out" "$TR") ;;
	esac
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$KT" "${args[@]}" 2> "$W/err" ||
		die "ktrace ${args[*]} failed: $(tail -n 1 "$W/err")"
	read -r wall usr sys rss < <(tail -n 1 "$W/time")
	bytes=$(du -sb "$out" | cut -f1)
	cpu=$(echo "$usr + $sys" | bc -l)
	printf '| %s | %s | %s | %.2f | %.2f | %.2f | %d |\n' "$f" "$bytes" \
		"$([ "$f" = folded ] && echo - || printf '%.1f' "$(echo "$bytes / $calls" | bc -l)")" \
		"$wall" "$cpu" "$(echo "$calls / $cpu / 1000000" | bc -l)" "$((rss / 1024))"
	rm -rf "$out"
done
echo "($calls calls; trace $TR)"
