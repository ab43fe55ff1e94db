#!/bin/sh
# tests/cli_print.sh - `ktrace print`: text, CSV and JSON output, filters,
# gaps in line, exit statuses, and every bad input of issue 2 (truncated
# stream, corrupt header, newer version, missing metadata, unknown option,
# failing output): a one-line error naming the file and offset or option, a
# non-zero exit, and every readable record still printed.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

D=$T/trace
$MKTRACE -s 2 -r 100 "$D" >/dev/null

run "$KTRACE" print "$D"
is "$rc" 0 "clean trace: exit 0"
is "$(lines "$T/out")" 200 "one line per record"
is "$(lines "$T/err")" 0 "nothing on stderr"
is "$(head -1 "$T/out" | tr -s ' ' | sed 's/^ //')" "1000000000000 0 999/1000 parse:entry a=0 b=0" \
	"time ns, CPU, PID/TID, name, args"
like "$T/out" '^ +1000000019000 +1 +999/1001 +send:exit +a=1 b=19$' "exit event of a named function"
like "$T/out" ' request +len=0 seq=6$' "catalogue name and argument names"

run "$KTRACE" print --relative "$D"
is "$(sed -n 2p "$T/out" | awk '{print $1}')" 1000 "--relative: ns since the first record"

run "$KTRACE" print -x "$D"
like "$T/out" ' request +len=0x0 seq=0x6$' "-x: hexadecimal arguments"

run "$KTRACE" print -C -r "$D"
is "$(head -1 "$T/out")" "time_ns,dur_ns,self_ns,cpu,pid,tid,comm,category,name,args" \
	"-C: header line (the row schema of export --format=csv and kd -c --format=csv)"
is "$(sed -n 2p "$T/out")" "0,,,0,999,1000,worker0,default,parse:entry,a=0;b=0" "-C: first row"
like "$T/out" '^6000,,,0,999,1000,worker0,net,request,len=0;seq=6$' "-C: catalogue row"
is "$(lines "$T/out")" 201 "-C: header plus one row per record"
python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
bad = [r for r in rows[1:] if len(r) != len(rows[0]) or not r[0].lstrip("-").isdigit()]
print(len(rows) - 1, len(bad))' "$T/out" >"$T/csvcheck"
is "$(cat "$T/csvcheck")" "200 0" "-C: python3 csv reads 200 rows, each with the header's 10 fields and an integer time"

run "$KTRACE" print --json "$D"
is "$rc" 0 "--json: exit 0"
perl -MJSON::PP -e '
	local $/; my $d = decode_json(<STDIN>); my %ph;
	$ph{$_->{ph}}++ for @{$d->{traceEvents}};
	print join(",", map { "$_=$ph{$_}" } sort keys %ph), "\n";' <"$T/out" >"$T/phases" 2>&1
is "$(cat "$T/phases")" "B=20,E=20,M=3,i=160" "--json: valid JSON; entry/exit as B/E slices, thread names"
like "$T/out" '"name":"thread_name","ph":"M","pid":999,"tid":1000,"args":\{"name":"worker0"\}' \
	"--json: thread_name metadata event"
like "$T/out" '\{"name":"parse","cat":"default","ph":"B","ts":1000000000\.000,"pid":999,"tid":1000' \
	"--json: ts in microseconds with decimals"

# filters
run "$KTRACE" print --tid 1001 "$D"
is "$(awk '{print $3}' "$T/out" | sort -u)" "999/1001" "--tid keeps that thread"
run "$KTRACE" print --event request --event send:exit "$D"
is "$(awk '{print $4}' "$T/out" | sort -u | tr '\n' ' ')" "request send:exit " "--event by name and FUNC:exit"
run "$KTRACE" print --cpu 1 "$D"
is "$(lines "$T/out")" 100 "--cpu 1"
run "$KTRACE" print --pid 999 "$D"
is "$(lines "$T/out")" 200 "--pid 999: every record of that process"
run "$KTRACE" print -p 998 "$D"
is "$rc:$(lines "$T/out")" "0:0" "-p 998: no record, exit 0"
"$KTRACE" print "$D" | awk '$1 >= 1000000050000 && $1 <= 1000000099000' >"$T/want"
run "$KTRACE" print --time-range 1000000050000~1000000099000 "$D"
ok "$([ "$(lines "$T/want")" = 50 ] && cmp -s "$T/want" "$T/out"; echo $?)" \
	"--time-range in CLOCK_MONOTONIC ns: the 50 records inside, bounds included"
# a bound with a unit counts from the trace's origin: the channel's creation here
origin=$(awk '$1 == "created-ns" {print $2}' "$D/metadata")
"$KTRACE" print "$D" | awk -v o="$origin" '$1 >= o + 50000 && $1 <= o + 99000' >"$T/want"
run "$KTRACE" print --time-range 50us~99us "$D"
ok "$([ "$(lines "$T/want")" -gt 0 ] && cmp -s "$T/want" "$T/out"; echo $?)" \
	"--time-range with units: from the trace's origin (created-ns $origin)"
run "$KTRACE" export --format=csv --tid 1001 -o - "$D"
ok "$([ "$rc" = 0 ] && [ "$(tail -n +2 "$T/out" | cut -d, -f6 | sort -u)" = 1001 ] && [ "$(lines "$T/out")" -gt 1 ]; echo $?)" \
	"export --tid: only that thread's rows"
run "$KTRACE" print --tid abc "$D"
is "$rc" 2 "--tid abc: usage error"
is "$(cat "$T/err")" "ktrace print: option '--tid': 'abc' is not a list of ids" "--tid abc: one line naming the option"
run "$KTRACE" print --event nosuch "$D"
is "$rc" 2 "--event nosuch: usage error"
like "$T/err" "no event 'nosuch' in .*/metadata" "--event nosuch: says so"

# gaps where they happened
$MKTRACE -s 2 -r 1000 --flight "$T/flight" >/dev/null
run "$KTRACE" print "$T/flight"
is "$rc" 0 "flight trace: exit 0"
is "$(grep -c 'overwritten\]' "$T/out")" 2 "flight: one overwritten line per stream"
like "$T/out" '\[overwritten\] +2 sub-buffers overwritten \(stream 0\)$' "flight: says how many"
is "$(sed -n 1p "$T/out" | awk '{print $4}')" "[overwritten]" "flight: the gap comes before the oldest kept record"
$MKTRACE -s 1 -r 400 --lost 0:0:5 "$T/lost" >/dev/null
run "$KTRACE" print "$T/lost"
is "$(grep -n 'lost\]' "$T/out" | cut -d: -f1)" 169 "lost records shown right after their sub-buffer"
run "$KTRACE" print -C "$T/lost"
like "$T/out" '^[0-9]+,,,0,999,1000,,ktrace,\[lost\],count=5;stream=0$' "-C: gap row"
run "$KTRACE" print --json "$T/lost"
like "$T/out" '"name":"\[lost\]","cat":"ktrace","ph":"i"' "--json: gap as an instant event"

# bad input: truncated stream
$MKTRACE -s 1 -r 400 --truncate 0:5000 "$T/trunc" >/dev/null
run "$KTRACE" print "$T/trunc"
is "$rc" 1 "truncated stream: exit 1"
like "$T/err" "^ktrace print: $T/trunc/trace0: offset 5000: truncated" "truncated stream: file and offset named"
is "$(grep -vc '\[' "$T/out")" 203 "truncated stream: every readable record printed"
like "$T/out" '\[corrupt\] +trace0 offset 5000: truncated' "truncated stream: marked in line"

# bad input: corrupt sub-buffer header
$MKTRACE -s 1 -r 400 --corrupt-header 0:1 "$T/hdr" >/dev/null
run "$KTRACE" print "$T/hdr"
is "$rc" 1 "corrupt header: exit 1"
is "$(cat "$T/err")" "ktrace print: $T/hdr/trace0: offset 4096: bad sub-buffer magic 0xdeadbeef" \
	"corrupt header: one line, file and offset"
is "$(grep -vc '\[' "$T/out")" 232 "corrupt header: the other sub-buffers printed"

# bad input: corrupt record
$MKTRACE -s 1 -r 400 --corrupt-record 0:1 "$T/rec" >/dev/null
run "$KTRACE" print "$T/rec"
is "$rc" 1 "corrupt record: exit 1"
like "$T/err" "trace0: offset 4184: invalid record header" "corrupt record: file and offset"

# bad input: newer format version
$MKTRACE -s 2 -r 100 --version 2 "$T/newer" >/dev/null
run "$KTRACE" print "$T/newer"
is "$rc" 1 "newer version: exit 1"
like "$T/err" "^ktrace print: $T/newer/metadata:1: format version 2 is newer than this reader's 1" \
	"newer version: file, line and versions named"
is "$(lines "$T/out")" 200 "newer version: everything readable printed"

# bad input: missing metadata
$MKTRACE -s 2 -r 100 --no-metadata "$T/nometa" >/dev/null
run "$KTRACE" print "$T/nometa"
is "$rc" 1 "missing metadata: exit 1"
is "$(cat "$T/err")" "ktrace print: $T/nometa/metadata: No such file or directory; reading the streams without it (clock tsc assumed)" \
	"missing metadata: one line"
is "$(lines "$T/out")" 200 "missing metadata: every record printed"
is "$(head -1 "$T/out" | awk '{print $1}')" 1000000000000 "missing metadata: times from the sub-buffer calibration"

# bad metadata line
$MKTRACE -s 1 -r 10 --no-names --meta-line "calib 1 x" "$T/badmeta" >/dev/null
run "$KTRACE" print "$T/badmeta"
is "$rc" 1 "bad metadata line: exit 1"
like "$T/err" "metadata:22: bad calib line" "bad metadata line: file and line"
is "$(lines "$T/out")" 10 "bad metadata line: records printed"

# usage errors
run "$KTRACE" print --bogus "$D"
is "$rc" 2 "unknown option: exit 2"
is "$(cat "$T/err")" "ktrace print: unknown option '--bogus' (see ktrace print --help)" "unknown option: one line naming it"
is "$(lines "$T/out")" 0 "unknown option: no output"
run "$KTRACE" print -Z "$D"
is "$(cat "$T/err")" "ktrace print: unknown option '-Z' (see ktrace print --help)" "unknown short option"
run "$KTRACE" print --tid
is "$(cat "$T/err")" "ktrace print: option '--tid' needs a value (see ktrace print --help)" "option without its value"
run sh -c "cd '$T' && '$KTRACE' print"
is "$rc" 1 "no directory: ./ktrace.data is read; missing: exit 1"
run "$KTRACE" print -C --json "$D"
is "$rc" 2 "--csv with --json: exit 2"
run "$KTRACE" print "$T/nonexistent"
is "$rc" 1 "missing directory: exit 1"
is "$(cat "$T/err")" "ktrace print: $T/nonexistent: No such file or directory" "missing directory: one line"
run "$KTRACE" print --help
is "$rc" 0 "--help: exit 0"
like "$T/out" "^usage: ktrace print \[options\] \[DIR\]" "--help: usage line"

# output that cannot be written
"$KTRACE" print "$D" >/dev/full 2>"$T/err"
is "$?" 1 "full output: exit 1"
like "$T/err" "^ktrace print: writing standard output: No space left on device$" "full output: one line"

done_testing
