#!/bin/bash
# bench/big/run.sh - big traces (issue 29): how long the first answers take
# on the SQLite demo trace (`make demo`'s workload: scripts/demo.sql on the
# -finstrument-functions sqlite3 shell, ~197M calls, ~3 GB), side by side
# with uftrace's report and replay of its own trace of the same program,
# and what a slow disk does to a recording.  Prints the tables of
# docs/PERFORMANCE.md, "Big traces".
#
#   bench/big/run.sh BUILD_DIR [SRC_DIR]          (`make bench PARTS=big`)
#
# First the recording, side by side: the demo not traced, recorded with
# --compress=none and with the default (zstd level 1): wall, the program's
# CPU (and per call), the consumer's CPU (`ktrace record`'s own), bytes on
# disk per call, how long the program waited for the consumer.
#
# Then the analysis rows, on the compressed trace and (marked "none") on
# the uncompressed one (each command run once, output to /dev/null; wall
# and CPU seconds, records per wall second, peak RSS, which counts the
# trace's mapped pages: the "anon" column is the peak of the process's own
# memory):
#   kt kd              ktrace kd (two threads: a reader and a counter)
#   kt kd 1 thread     the same with KTRACE_ONE_THREAD=1
#   kt kd -c           the call tree of every call (sorted on disk)
#   kt addr2sym        every call with its call site
#   kt export perfetto ktrace export --format=perfetto
#   kt print, print -C every record as a text line, as a CSV row
#   uf report          uftrace report on uftrace's trace of the same build
#   uf replay          uftrace replay on it
# then kd, kd -c and print of half a second in the middle of the trace
# (--time-range 3s~3.5s: the sub-buffers outside are skipped), wall
# seconds; then how soon kd -c, addr2sym, print and uftrace replay print
# their first lines; then bytes on disk per call of the traces.
#
# With BIG_THROTTLE=1 (root, cgroup v1 blkio, losetup, mkfs.ext4): the demo
# is recorded into an ext4 file system on a loop device whose writes are
# throttled to 100 MiB/s (blkio.throttle.write_bps_device for the cgroup
# of `ktrace record`; its consumer writes with O_DIRECT, which the
# throttle sees), once with the default wait and once with
# --block-timeout=100ms (the default before issue 29): records dropped,
# wall time, how long the program waited.  Needs 6 GB of disk in BIG_WORK.
#
# Environment: BIG_WORK (default BUILD_DIR/bench/big/work: ~8 GB for the
# three traces, up to ~10 GB more for kd -c's sort), BIG_TRACE (an existing
# ktrace trace of the demo instead of recording one: no recording table),
# BIG_QUICK=1 (no kd -c, addr2sym, export rows).
set -euo pipefail
B=$(cd "${1:?usage: bench/big/run.sh BUILD_DIR [SRC_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
KT=$B/ktrace
W=${BIG_WORK:-$B/bench/big/work}
die() { echo "bench/big: $*" >&2; exit 1; }
[ -x "$KT" ] || die "$KT is missing: run make B=$B first"
mkdir -p "$W"
[ -x "$B/demo/sqlite3-inst" ] || "$SRC/scripts/sqlite-build.sh" "$B" inst > /dev/null ||
	die "cannot build the instrumented sqlite3 (scripts/sqlite-build.sh)"
PROG=$B/demo/sqlite3-inst
SQL=$SRC/scripts/demo.sql

TR=${BIG_TRACE:-}
TRN=
if [ -z "$TR" ]; then
	TR=$W/kt
	TRN=$W/kt-none
	echo "| recording the demo | wall s | program CPU s | ns a call | consumer CPU s | bytes a call | the program waited |"
	echo "|---|---|---|---|---|---|---|"
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$W/time" "$PROG" :memory: < "$SQL" > /dev/null
	wall=$(echo "$(date +%s.%N) - $t0" | bc -l)
	read -r usr sys < "$W/time"
	printf '| not traced | %.1f | %.2f | | | | |\n' "$wall" "$(echo "$usr + $sys" | bc -l)"
	for opt in --compress=none --compress=zstd; do
		d=$TR
		[ "$opt" = --compress=none ] && d=$TRN
		rm -rf "$d"
		t0=$(date +%s.%N)
		"$KT" record "$opt" -o "$d" -- "$PROG" :memory: < "$SQL" > /dev/null 2> "$W/rec.err" ||
			die "ktrace record $opt failed: $(tail -n 1 "$W/rec.err")"
		wall=$(echo "$(date +%s.%N) - $t0" | bc -l)
		n=$(sed -n 's/^ktrace record: \([0-9]*\) records,.*/\1/p' "$W/rec.err")
		pcpu=$(sed -n 's/^ktrace record: .*: CPU \([0-9.]*\) s, peak memory.*/\1/p' "$W/rec.err" | tail -n 1)
		ccpu=$(sed -n 's/.*consumer CPU \([0-9.]*\) s.*/\1/p' "$W/rec.err")
		waited=$(sed -n 's/^ktrace record: the program waited \([0-9.]*\) ms.*/\1 ms/p' "$W/rec.err")
		printf '| %s | %.1f | %s | %.1f | %s | %.2f | %s |\n' "$opt" "$wall" "$pcpu" \
			"$(echo "$pcpu * 1000000000 / $n" | bc -l)" "$ccpu" \
			"$(echo "$(du -sb "$d" | cut -f1) / $n" | bc -l)" "${waited:-0}"
	done
	echo
fi
calls=$("$KT" info "$TR" | sed -n 's/^# calls *: *\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$calls" ] && [ "$calls" -gt 0 ] || die "cannot count the calls of $TR"
UF=$W/uf
if command -v uftrace > /dev/null; then
	rm -rf "$UF"
	echo "recording the same with uftrace into $UF" >&2
	env -u LD_PRELOAD uftrace record -d "$UF" "$PROG" :memory: < "$SQL" > /dev/null 2> "$W/uf.err" ||
		die "uftrace record failed: $(tail -n 1 "$W/uf.err")"
fi

# row NAME CMD...: run CMD (stdout to /dev/null), sampling its anonymous memory
row() {
	local name=$1 wall usr sys rss anon=0 pid a
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@" > /dev/null 2> "$W/err" &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		for p in $(pgrep -P "$pid"); do
			a=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status" 2> /dev/null || true)
			[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
		done
		sleep 0.5
	done
	wait "$pid" || die "$name failed: $(tail -n 1 "$W/err")"
	read -r wall usr sys rss < <(tail -n 1 "$W/time")
	printf '| %s | %.1f | %.1f | %.1f | %d | %d |\n' "$name" "$wall" "$(echo "$usr + $sys" | bc -l)" \
		"$(echo "$calls / $wall / 1000000" | bc -l)" "$((rss / 1024))" "$((anon / 1024))"
}

echo "| command | wall s | CPU s | M records/s (wall) | peak RSS MiB | peak anon MiB |"
echo "|---|---|---|---|---|---|"
row "kt kd" "$KT" kd "$TR"
[ -n "$TRN" ] && row "kt kd, none" "$KT" kd "$TRN"
row "kt kd, 1 thread" env KTRACE_ONE_THREAD=1 "$KT" kd "$TR"
[ -n "$TRN" ] && row "kt kd, 1 thread, none" env KTRACE_ONE_THREAD=1 "$KT" kd "$TRN"
if [ "${BIG_QUICK:-0}" != 1 ]; then
	row "kt kd -c" "$KT" kd -c "$TR"
	row "kt addr2sym" "$KT" addr2sym "$TR"
	row "kt export perfetto" "$KT" export --format=perfetto "$TR"
	row "kt print" "$KT" print "$TR"
	row "kt print -C" "$KT" print -C "$TR"
fi
if [ -d "$UF" ]; then
	row "uf report" env -u LD_PRELOAD uftrace report -d "$UF"
	row "uf replay" env -u LD_PRELOAD uftrace replay -d "$UF"
fi
printf '\n--time-range 3s~3.5s, wall s:'
for c in kd "kd -c" print; do
	/usr/bin/time -f %e -o "$W/time.txt" "$KT" $c --time-range 3s~3.5s "$TR" >/dev/null
	printf ' %s %s' "$c" "$(cat "$W/time.txt")"
done
printf '\nfirst line after, wall s:'
for c in "kd -c" addr2sym print "uf replay"; do
	case $c in
	uf*) [ -d "$UF" ] || continue
	     set -- env -u LD_PRELOAD uftrace replay -d "$UF" ;;
	*) set -- "$KT" $c "$TR" ;;
	esac
	/usr/bin/time -f %e -o "$W/time.txt" sh -c '"$@" 2>/dev/null | head -n 3 >/dev/null' sh "$@"
	printf ' %s %s' "$c" "$(cat "$W/time.txt")"
done
printf '\n(%s calls; bytes on disk per call: ktrace %.2f' "$calls" \
	"$(echo "$(du -sb "$TR" | cut -f1) / $calls" | bc -l)"
[ -n "$TRN" ] && printf ', ktrace --compress=none %.1f' "$(echo "$(du -sb "$TRN" | cut -f1) / $calls" | bc -l)"
[ -d "$UF" ] && printf ', uftrace %.1f' "$(echo "$(du -sb "$UF" | cut -f1) / $calls" | bc -l)"
printf ')\n'

[ "${BIG_THROTTLE:-0}" = 1 ] || exit 0
# ---- a disk of 100 MiB/s -------------------------------------------------
CG=/sys/fs/cgroup/blkio/ktrace-bench-big
IMG=$W/slow.img
MNT=$W/slow
[ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/blkio ] || die "BIG_THROTTLE=1 needs root and cgroup v1 blkio"
truncate -s 6G "$IMG"
LOOP=$(losetup -f --show "$IMG")
cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	losetup -d "$LOOP"
	rm -f "$IMG"
	rmdir "$CG" 2> /dev/null || true
}
trap cleanup EXIT
mkfs.ext4 -q "$LOOP"
mkdir -p "$MNT" "$CG"
mount "$LOOP" "$MNT"
echo "$(lsblk -no MAJ:MIN "$LOOP" | tr -d ' ') 104857600" > "$CG/blkio.throttle.write_bps_device"
echo
echo "| ktrace record into a 100 MiB/s disk | wall s | records kept | dropped | the program waited |"
echo "|---|---|---|---|---|"
for opt in "" --compress=none --block-timeout=100ms; do
	rm -rf "$MNT/t"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # $opt: no option or one word
	sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
		"$KT" record $opt -o "$MNT/t" -- "$PROG" :memory: < "$SQL" > /dev/null 2> "$W/slow.err" ||
		die "ktrace record $opt failed: $(tail -n 1 "$W/slow.err")"
	wall=$(echo "$(date +%s.%N) - $t0" | bc -l)
	kept=$(sed -n 's/^ktrace record: \([0-9]*\) records,.*/\1/p' "$W/slow.err")
	dropped=$(sed -n 's/^ktrace record: \([0-9]*\) records dropped.*/\1/p' "$W/slow.err")
	waited=$(sed -n 's/^ktrace record: the program waited \([0-9.]*\) ms.*/\1 ms/p' "$W/slow.err")
	printf '| %s | %.1f | %s | %s | %s |\n' "${opt:-default}" "$wall" "$kept" "${dropped:-0}" "${waited:-0}"
done
