#!/bin/sh
# tests/cli_ctl.sh - `ktrace ctl DIR start|stop|status|enable|disable`:
# the state word and start/stop stamps in the shared control page, the
# state/dropped mirror files, KTRACE_DISABLE_STATE, the enable map by event
# name, FUNC:*, id and all; and missing, corrupt, truncated or newer
# control files and usage errors (one-line error, non-zero exit).
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

# u32 at byte offset $2 of file $1, and one byte
u32() { od -A n -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u8() { od -A n -t u1 -j "$2" -N 1 "$1" | tr -d ' '; }

D=$T/trace
$MKTRACE -s 2 -r 1000 "$D" >/dev/null # discard mode: 328 dropped per stream
EN=$((128 + 64 * 2)) # mktrace's enable map offset

run "$KTRACE" ctl "$D" status
is "$rc" 0 "status: exit 0"
like "$T/out" "^state: +ended \(pid [0-9]+ has exited; it was stopped" "status: stopped, and its program has exited"
like "$T/out" "^mode: +discard, per-thread streams$" "status: mode"
like "$T/out" "^buffers: +2 streams x 4 sub-buffers x 4096 bytes$" "status: geometry"
like "$T/out" "^ +1 thread +1001 +999 +672 +328 +0$" "status: a stream's owner, pid, written, dropped, overwritten"
like "$T/out" "^ total +1344 +656 +0$" "status: totals"

run "$KTRACE" ctl "$D" start
is "$rc" 0 "start: exit 0"
is "$(u32 "$D/control" 8)" 1 "start: state word is 1 (running)"
is "$(cat "$D/state")" start "start: state file mirrors it"
is "$(cat "$D/dropped")" 656 "start: dropped file is the sum of the streams' counters"
is "$(stat -c %a "$D/state")" 600 "start: state file is 0600"
run "$KTRACE" ctl "$D" status
like "$T/out" "^state: +ended \(pid [0-9]+ has exited; it was running: last start 0\.[0-9]+ s ago" "status after start: running, just started (its program has exited)"
run "$KTRACE" ctl "$D" stop
is "$rc" 0 "stop: exit 0"
is "$(u32 "$D/control" 8)" 0 "stop: state word is 0"
is "$(cat "$D/state")" stop "stop: state file"
ls -a "$D" >"$T/files"
unlike "$T/files" "tmp" "no temporary file left behind"

# the enable map
is "$(u8 "$D/control" $((EN + 1)))" 1 "event 1 starts enabled"
run "$KTRACE" ctl "$D" disable 'parse:*'
is "$rc" 0 "disable FUNC:*: exit 0"
is "$(cat "$T/out")" "disabled 256 event ids" "disable FUNC:*: says how many"
is "$(u8 "$D/control" $((EN + 1)))$(u8 "$D/control" $((EN + 255)))$(u8 "$D/control" $((EN + 256)))" 001 \
	"disable parse:*: ids 0..255 off, 256 on"
run "$KTRACE" ctl "$D" enable parse:entry
is "$(u8 "$D/control" $((EN + 1)))" 1 "enable FUNC:entry"
run "$KTRACE" ctl "$D" disable request
is "$(u8 "$D/control" $((EN + 16)))" 0 "disable by catalogue name"
run "$KTRACE" ctl "$D" disable 0x101
is "$(u8 "$D/control" $((EN + 257)))" 0 "disable by hex id"
run "$KTRACE" ctl "$D" disable all
run "$KTRACE" ctl "$D" status
like "$T/out" "^events: +0 of 65536 ids enabled$" "disable all"
run "$KTRACE" ctl "$D" enable nosuch
is "$rc" 2 "unknown event: exit 2"
is "$(cat "$T/err")" "ktrace ctl: no event 'nosuch' in $D/metadata (a catalogue name, FUNC:entry, FUNC:*, an id or all)" \
	"unknown event: one line"

# KTRACE_DISABLE_STATE
$MKTRACE -s 1 -r 10 --disable-state --running "$T/locked" >/dev/null
run "$KTRACE" ctl "$T/locked" stop
is "$rc" 1 "disabled state control: stop refused"
is "$(cat "$T/err")" "ktrace ctl: $T/locked/control: offset 12: state control is disabled for this channel (KTRACE_DISABLE_STATE)" \
	"disabled state control: one line"
is "$(u32 "$T/locked/control" 8)" 1 "disabled state control: still running"
is "$(cat "$T/locked/state")" start "disabled state control: state file unchanged"

# bad control files
$MKTRACE -s 1 -r 10 --no-control "$T/noctl" >/dev/null
run "$KTRACE" ctl "$T/noctl" start
is "$rc" 1 "no control file: exit 1"
is "$(cat "$T/err")" "ktrace ctl: $T/noctl/control: No such file or directory" "no control file: one line"
cp "$D/control" "$T/noctl/control"
printf 'XXXX' | dd of="$T/noctl/control" conv=notrunc 2>/dev/null
run "$KTRACE" ctl "$T/noctl" status
is "$rc" 1 "corrupt control file: exit 1"
like "$T/err" "^ktrace ctl: $T/noctl/control: offset 0: bad magic 0x58585858" "corrupt control file: offset named"
head -c 1000 "$D/control" >"$T/noctl/control"
run "$KTRACE" ctl "$T/noctl" start
is "$rc" 1 "truncated control file: exit 1"
like "$T/err" "control: offset 32: enable map at offset 256 does not fit in 1000 bytes" "truncated control file: says what"
: >"$T/noctl/control"
run "$KTRACE" ctl "$T/noctl" status
is "$rc" 1 "empty control file: exit 1"
$MKTRACE -s 1 -r 10 --version 2 "$T/newer" >/dev/null
run "$KTRACE" ctl "$T/newer" start
is "$rc" 1 "newer control file: not changed"
like "$T/err" "offset 4: version 2 is newer than this reader's 1; not changing it" "newer control file: says why"
run "$KTRACE" ctl "$T/newer" status
is "$rc" 0 "newer control file: status still shown"
like "$T/err" "warning: offset 4: version 2 is newer" "newer control file: with a warning"

# usage
run "$KTRACE" ctl "$D" jump
is "$rc" 2 "unknown action: exit 2"
is "$(cat "$T/err")" "ktrace ctl: unknown action 'jump': start, stop, status, dump, enable, disable or kft" "unknown action: one line"
run "$KTRACE" ctl "$D"
is "$rc" 2 "missing action: exit 2"
run "$KTRACE" ctl "$D" enable
is "$rc" 2 "enable without an event: exit 2"
run "$KTRACE" ctl "$D" start now
is "$rc" 2 "extra argument: exit 2"
# `ctl DIR kft ...` forwards to `ktrace kft DIR ...`
run "$KTRACE" ctl "$D" kft status
is "$rc" 1 "ctl kft on a trace without a function tracer run: exit 1"
like "$T/err" "ktrace kft: .*/kft: No such file or directory" "ctl kft: forwarded to ktrace kft, which names the file"
run "$KTRACE" ctl "$D" kft bogus
is "$rc" 2 "ctl kft with an unknown command: exit 2"

run "$KTRACE" ctl --force "$D" start
is "$(cat "$T/err")" "ktrace ctl: unknown option '--force' (see ktrace ctl --help)" "unknown option: one line"
is "$rc" 2 "unknown option: exit 2"

done_testing
