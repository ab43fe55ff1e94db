#!/bin/sh
# tests/cli_main.sh - the `ktrace` dispatcher: --version, --help, `help
# COMMAND`, every subcommand's --help, unknown commands and options (one
# line, exit 2), and the man pages of the reading commands (groff -ww clean).
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

run "$KTRACE" --version
is "$rc" 0 "--version: exit 0"
like "$T/out" "^ktrace [0-9]+\.[0-9]+\.[0-9]+$" "--version: ktrace X.Y.Z"
run "$KTRACE" --help
is "$rc" 0 "--help: exit 0"
cp "$T/out" "$T/mainhelp"
for c in print read ctl; do
	like "$T/mainhelp" "^  $c " "--help lists $c"
	run "$KTRACE" "$c" --help
	is "$rc" 0 "$c --help: exit 0"
	like "$T/out" "^usage: ktrace $c " "$c --help: usage line"
	cp "$T/out" "$T/help1"
	run "$KTRACE" help "$c"
	cmp -s "$T/out" "$T/help1"
	ok $? "help $c is $c --help"
done
run "$KTRACE"
is "$rc" 2 "no command: exit 2"
like "$T/err" "^usage: ktrace" "no command: usage on stderr"
run "$KTRACE" frobnicate
is "$rc" 2 "unknown command: exit 2"
is "$(cat "$T/err")" "ktrace: 'frobnicate' is not a ktrace command (see ktrace --help)" "unknown command: one line"
run "$KTRACE" --frobnicate print
is "$rc" 2 "unknown global option: exit 2"
is "$(cat "$T/err")" "ktrace: unknown option '--frobnicate' (see ktrace --help)" "unknown global option: one line"
run "$KTRACE" -z
is "$(cat "$T/err")" "ktrace: unknown option '-z' (see ktrace --help)" "unknown short global option: one line"
run "$KTRACE" --version=3
is "$rc" 2 "global option with a value it does not take: exit 2"
is "$(cat "$T/err")" "ktrace: option '--version' takes no value (see ktrace --help)" "... one line naming it"
run "$KTRACE" --color=bad print
is "$(cat "$T/err")" "ktrace: option '--color': 'bad' is not always, never or auto" "bad --color value: one line"
run "$KTRACE" help frobnicate
is "$rc" 2 "help for an unknown command: exit 2"

if command -v groff >/dev/null 2>&1; then
	for p in ktrace ktrace-print ktrace-read ktrace-ctl ktrace-export; do
		groff -man -ww -z "$KTRACE_SRC/docs/man/$p.1" >"$T/groff" 2>&1
		is "$(cat "$T/groff")" "" "man page $p.1 renders without warnings"
	done
else
	for p in ktrace ktrace-print ktrace-read ktrace-ctl ktrace-export; do
		like "$KTRACE_SRC/docs/man/$p.1" '^\.TH ' "man page $p.1 exists"
	done
fi
# a text line starting with "." is a troff request: an example's "./prog" line vanishes
is "$(cd "$KTRACE_SRC/docs/man" && grep -n '^\.[^A-Za-z\\]' *.1 *.3 *.5)" "" \
	"no man page line starts with a dot that is not a request (write \\&./prog)"

# issue 30: a file where a trace directory is expected said "Inappropriate
# ioctl for device" (a stale errno); now what the file is and what to do
printf 'hello\n' > "$T/plain"
printf '\027\010\104tracing6' > "$T/k.dat"
printf '{"traceEvents": []}\n' > "$T/k.json"
: > "$T/k.pftrace"
mkdir "$T/tr" && : > "$T/tr/cpu0"
for f in plain:"a file, not a trace directory" k.dat:"trace-cmd trace.dat" k.json:"a JSON file" \
	k.pftrace:"a Perfetto trace" tr/cpu0:"a stream file of a trace: give the directory"; do
	run "$KTRACE" info "$T/${f%%:*}"
	is "$rc" 1 "info on ${f%%:*}: exit 1"
	like "$T/err" "^ktrace info: $T/${f%%:*}: .*${f#*:}" "  says it is ${f#*:}"
	is "$(grep -c . "$T/err")" 1 "  in one line"
done
run "$KTRACE" kd /dev/null
like "$T/err" "^ktrace kd: /dev/null: not a trace directory$" "kd on a device: not a trace directory"

done_testing
