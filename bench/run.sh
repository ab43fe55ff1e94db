#!/bin/bash
# bench/run.sh - run every static-event benchmark side by side in one run and
# print the table of docs/PERFORMANCE.md ("Static events (user space)").
#
#   bench/run.sh BUILD_DIR [SRC_DIR]
#
# BUILD_DIR/bench/ must hold bench_floor, bench_lttng and bench_ktrace (built
# by bench/Makefile).  Environment: BENCH_EVENTS (events per thread per
# repetition, default 10000000), BENCH_REPS (timed repetitions, 7),
# BENCH_WARMUP (untimed, 1), BENCH_THREADS (thread counts, "1 2"),
# BENCH_ONLY (a regex of variants to run, default all), BENCH_OVERSUB
# (thread counts of the oversubscribed drop-rate runs, "8 32").
#
# Writes BUILD_DIR/bench/results.tsv (one line per variant and thread count:
# variant threads median_ns min_ns max_ns reps events bytes_per_event
# ratio_to_floor note wall_median_ns; ns are per event per thread, thread
# CPU time unless "wall"; '#' lines describe the machine) and results.md (the
# table below).  Trace files go to BUILD_DIR/bench/work/ and are removed.
#
# LTTng-UST needs root (or the tracing group) and lttng-sessiond: if no
# session daemon runs, this script starts one and stops that one (by its
# pid) at the end.  Without lttng the LTTng rows say n/a.

set -u
B=${1:?usage: run.sh BUILD_DIR [SRC_DIR]}
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
O=$B/bench
W=$O/work
EVENTS=${BENCH_EVENTS:-10000000}
REPS=${BENCH_REPS:-7}
WARMUP=${BENCH_WARMUP:-1}
THREADS=${BENCH_THREADS:-1 2}
ONLY=${BENCH_ONLY:-.}
RAW=$O/results.raw
TSV=$O/results.tsv
MD=$O/results.md
ARGS=(-n "$EVENTS" -r "$REPS" -w "$WARMUP")

mkdir -p "$W" && chmod 0700 "$W" || exit 1
: >"$RAW"

log() { echo "run.sh: $*" >&2; }
want() { [[ $1 =~ $ONLY ]]; }

# --- the machine ------------------------------------------------------------
model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
family=$(lscpu | sed -n 's/^CPU family: *//p' | head -1)
cpumodel=$(lscpu | sed -n 's/^Model: *//p' | head -1)
hyper=$(lscpu | sed -n 's/^Hypervisor vendor: *//p' | head -1)
tsc=$( (dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz.*/\1/p' | head -1) )
[ -n "$tsc" ] || tsc=$(sed -n 's/^cpu MHz[^:]*: *//p' /proc/cpuinfo | head -1)
machine="$model (family $family model $cpumodel), $(nproc) CPUs${hyper:+, $hyper guest}, TSC ${tsc:-?} MHz, kernel $(uname -r), $(ldd --version 2>&1 | head -1 | sed 's/.*) //;s/^/glibc /'), $(${CC:-cc} --version | head -1)"
lttng_ver=$(lttng --version 2>/dev/null | head -1)
{
	echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine: $machine"
	echo "# lttng: ${lttng_ver:-not installed}"
	echo "# events per thread per repetition: $EVENTS, timed repetitions: $REPS, warm-up: $WARMUP"
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$TSV"
log "$machine"
# The numbers are only comparable on an otherwise idle machine: say so.
busy=$(ps -eo pcpu=,pid=,comm= --sort=-pcpu | awk '$1 >= 20 {printf "%s%s(%s%%)", (n++ ? " " : ""), $3, $1}')
if [ -n "$busy" ]; then
	log "WARNING: other processes are using the CPUs: $busy"
	echo "# busy at start: $busy" >>"$TSV"
fi

run() { # program variant threads [extra args]
	local prog=$1 var=$2 t=$3
	shift 3
	want "$var" || return 0
	"$O/$prog" "${ARGS[@]}" -t "$t" "$@" "$var" >>"$RAW" || {
		log "$prog $var -t $t failed"
		printf 'result\t%s\t%s\t-\t-\t-\t-\t-\t-\tFAILED\t-\n' "$var" "$t" >>"$RAW"
	}
}

# --- floor and ktrace ------------------------------------------------------
for t in $THREADS; do
	for v in floor-store floor-rdtsc floor-rdtsc-firsttouch floor-rdtsc-ring; do
		run bench_floor "$v" "$t"
	done
	if [ -x "$O/bench_ktrace" ]; then
		for v in ktrace-discard ktrace-flight ktrace-global ktrace-stopped \
			ktrace-disabled-event ktrace-disabled-nochannel; do
			run bench_ktrace "$v" "$t" -d "$W"
		done
	else
		log "no $O/bench_ktrace (libktrace.a missing?): ktrace rows skipped"
	fi
done

# --- oversubscribed: drop rates ----------------------------------------------
# More writer threads than CPUs, 1/10 of the events: how many records a shared
# (global) flight stream drops while a preempted writer holds a sub-buffer,
# beside per-thread flight streams (which cannot drop).  Each run's counters
# cover the warm-up and the timed repetitions.
OVER_RAW=$O/oversub.raw
: >"$OVER_RAW"
if [ -x "$O/bench_ktrace" ]; then
	for t in ${BENCH_OVERSUB:-8 32}; do
		for v in ktrace-flight ktrace-global; do
			want "$v" || continue
			"$O/bench_ktrace" -n $((EVENTS / 10)) -r 3 -w 1 -t "$t" -d "$W" "$v" >>"$OVER_RAW" ||
				log "bench_ktrace $v -t $t (oversubscribed) failed"
		done
	done
fi

# --- LTTng-UST ---------------------------------------------------------------
started_sessiond=
lttng_ok=
if command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null && [ -x "$O/bench_lttng" ]; then
	if ! lttng list >/dev/null 2>&1; then
		if lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1; then
			started_sessiond=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
			log "started lttng-sessiond (pid ${started_sessiond:-?})"
		fi
	fi
	lttng list >/dev/null 2>&1 && lttng_ok=1
fi
[ -n "$lttng_ok" ] || log "LTTng not usable here (lttng-tools, root and bench_lttng needed): rows n/a"

SESS=ktbench$$
lttng_q() { lttng "$@" >/dev/null 2>>"$O/lttng.log"; }

lttng_session() { # threads mode(session|snapshot)
	local t=$1 mode=$2 var=lttng-$2 out=$W/lttng-$2-$1 fired disc size bpe note=
	rm -rf "$out"
	if [ "$mode" = snapshot ]; then
		lttng_q create "$SESS" --snapshot --output="$out" || return 1
		lttng_q enable-channel -u ch --overwrite || return 1
	else
		lttng_q create "$SESS" --output="$out" || return 1
		lttng_q enable-channel -u ch --subbuf-size=1M --num-subbuf=8 || return 1
	fi
	lttng_q enable-event -u -c ch ktbench:ev && lttng_q start || { lttng_q destroy "$SESS"; return 1; }
	"$O/bench_lttng" "${ARGS[@]}" -t "$t" "$var" >"$O/lttng.out" 2>"$O/lttng.err"
	local rc=$?
	cat "$O/lttng.err" >&2
	[ "$mode" = snapshot ] && lttng_q snapshot record -s "$SESS"
	lttng_q stop "$SESS"
	disc=$(lttng list "$SESS" 2>/dev/null | sed -n 's/.*Discarded events: *//p' | awk '{s+=$1} END {print s+0}')
	lttng_q destroy "$SESS"
	if [ $rc -ne 0 ]; then
		printf 'result\t%s\t%s\t-\t-\t-\t-\t-\t-\tFAILED\t-\n' "$var" "$t" >>"$RAW"
		return 1
	fi
	fired=$(sed -n 's/^fired //p' "$O/lttng.err")
	size=$(du -sb "$out" | cut -f1)
	if [ "$mode" = session ] && [ -n "$fired" ] && [ "$fired" -gt "$disc" ]; then
		bpe=$(awk -v s="$size" -v n="$fired" -v d="$disc" 'BEGIN {printf "%.2f", s / (n - d)}')
		note="trace-bytes=$size,events=$((fired - disc)),discarded=$disc"
	else
		bpe=-
		note="snapshot-bytes=$size,fired=$fired"
	fi
	awk -F'\t' -v b="$bpe" -v n="$note" 'BEGIN {OFS = "\t"} $1 == "result" {$9 = b; $10 = n; print}' \
		"$O/lttng.out" >>"$RAW"
	rm -rf "$out"
}

if [ -n "$lttng_ok" ]; then
	lttng destroy "$SESS" >/dev/null 2>&1
	for t in $THREADS; do
		# Disabled: compiled in, the daemon runs, no session enables it.
		want lttng-disabled && run bench_lttng lttng-disabled "$t"
		want lttng-session && { lttng_session "$t" session || log "lttng session run failed (see $O/lttng.log)"; }
		want lttng-snapshot && { lttng_session "$t" snapshot || log "lttng snapshot run failed (see $O/lttng.log)"; }
	done
else
	for t in $THREADS; do
		for v in lttng-disabled lttng-session lttng-snapshot; do
			want "$v" && printf 'result\t%s\t%s\t-\t-\t-\t-\t-\t-\tn/a\t-\n' "$v" "$t" >>"$RAW"
		done
	done
fi
if [ -n "$started_sessiond" ]; then
	if kill "$started_sessiond" 2>/dev/null; then
		for _ in $(seq 50); do kill -0 "$started_sessiond" 2>/dev/null || break; sleep 0.1; done
		log "stopped lttng-sessiond (pid $started_sessiond)"
	fi
fi
rmdir "$W" 2>/dev/null
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$TSV"

# --- the table ----------------------------------------------------------------
# results.tsv: add the ratio to floor-rdtsc of the same thread count.
awk -F'\t' 'BEGIN {OFS = "\t"}
	$1 == "result" { n++; line[n] = $0; if ($2 == "floor-rdtsc") floor[$3] = $4 }
	END {
		print "variant", "threads", "median_ns", "min_ns", "max_ns", "reps", "events", "bytes_per_event", "ratio_to_floor", "note", "wall_median_ns"
		for (i = 1; i <= n; i++) {
			split(line[i], f, "\t")
			r = (f[4] != "-" && floor[f[3]] > 0) ? sprintf("%.2f", f[4] / floor[f[3]]) : "-"
			print f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], r, f[10], (f[11] == "" ? "-" : f[11])
		}
	}' "$RAW" >>"$TSV"

# results.md: one row per variant, 1 and 2 threads side by side.
awk -F'\t' -v threads="$THREADS" '
	/^#/ || $1 == "variant" { next }
	{
		v = $1; t = $2
		if (!(v in seen)) { seen[v] = 1; order[++nv] = v }
		cell[v, t] = ($3 == "-") ? "n/a" : sprintf("%.2f (%.2f-%.2f)", $3, $4, $5)
		ratio[v, t] = $9
		wall[v, t] = ($11 == "-") ? "" : sprintf("%.2f", $11)
		if ($8 != "-") bytes[v] = bytes[v] (bytes[v] == "" ? "" : " / ") $8
	}
	END {
		nt = split(threads, T, " ")
		hdr = "| variant |"; sep = "|---|"
		for (i = 1; i <= nt; i++) {
			hdr = hdr " " T[i] "T ns/event median (min-max) | " T[i] "T x floor | " T[i] "T wall |"
			sep = sep "---|---|---|"
		}
		print hdr " bytes/event |"; print sep "---|"
		for (k = 1; k <= nv; k++) {
			v = order[k]; row = "| " v " |"
			for (i = 1; i <= nt; i++)
				row = row " " ((v, T[i]) in cell ? cell[v, T[i]] : "") " | " ((v, T[i]) in ratio ? ratio[v, T[i]] : "") " | " ((v, T[i]) in wall ? wall[v, T[i]] : "") " |"
			print row " " (bytes[v] == "" ? "-" : bytes[v]) " |"
		}
	}' "$TSV" >"$MD"

echo
echo "Static events, $EVENTS events/thread x $REPS reps (+$WARMUP warm-up), ns per event per thread"
echo "(thread CPU time; 'wall': median in wall-clock time, higher when other processes took the CPU)"
echo "Machine: $machine"
grep -E '^# (load|busy)' "$TSV" | sed 's/^# //'
echo
cat "$MD"
echo
grep -v '^#' "$TSV" | awk -F'\t' '$10 != "-" && $1 != "variant" {print "  note " $1 " " $2 "T: " $10}'
if [ -s "$OVER_RAW" ]; then
	echo
	echo "Oversubscribed ($(nproc) CPUs): records dropped by flight-mode channels, $((EVENTS / 10)) events/thread x 4 runs"
	echo
	awk -F'\t' -v ev=$((EVENTS / 10)) 'BEGIN {
		print "| variant | threads | records attempted | dropped | drop rate | ns/event median |"
		print "|---|---:|---:|---:|---:|---:|"
	}
	$1 == "result" {
		d = $10; sub(/.*dropped=/, "", d); sub(/,.*/, "", d)
		n = ev * $3 * 4
		printf "| %s | %d | %d | %d | %.1f%% | %.1f |\n", $2, $3, n, d, 100 * d / n, $4
	}' "$OVER_RAW" | tee "$O/oversub.md"
fi
echo
echo "results: $TSV, $MD"
