#!/bin/sh
# tests/cli_lkst.sh - `ktrace lkst` against a fake LKST directory made of
# plain files (the real one is ktrace.ko's debugfs ktrace/lkst, tested in
# the VM by kmod/tests/suite_lkst.sh): listing, maskset read/write/config/
# set/delete and the exact command each one writes, input errors with
# FILE:LINE:COLUMN, usage errors, and a missing module.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

L=$T/lkst
mkdir "$L"
cat > "$L/events" << 'X'
# id name category tracepoint status probe handler hits written dropped
0x01 PROCESS_CONTEXTSWITCH process sched:sched_switch available on 1 10 9 1
0x02 PROCESS_WAKEUP process sched:sched_wakeup available off 1 0 0 0
0x05 PROCESS_INIT_WQH process - unavailable off 255 0 0 0
X
printf 'event 1 kevent PROCESS_CONTEXTSWITCH process prev_pid,next_pid,prev_state\nunavailable 5 PROCESS_INIT_WQH no tracepoint for this hook in Linux\n' > "$L/catalog"
printf '# id name calls\n1 DEFAULT 10\n2 pid_switch 4\n255 NOTHING 0\n' > "$L/handlers"
masksets() {
	printf 'maskset 0 RNOTHING system\nmaskset 1 RDEFAULT system current\n0x01 1\n0x02 1\nmaskset 2 RALL system\n0x01 1\n0x02 1\n0x05 1\nmaskset 3 mine user\n0x01 2\n%0200d\n' 0 > "$L/masksets"
}
masksets
# is the command CMD (with its final newline) at the start of the file?
# (writes do not truncate the fake file; $(...) strips newlines on both sides)
sent_is() { is "$(head -c "$(printf '%s' "$1" | wc -c)" "$L/masksets")" "$(printf '%s' "$1")" "$2"; }
printf 'stop\n' > "$L/state"
printf 'name lkst\nwritten 9\ndropped 1\nbuf-size 262144\nbuf-nr 16\nmode discard\n' > "$L/info"
K() { run "$KTRACE" lkst -d "$L" "$@"; }

K list
is "$rc" 0 "list: exit 0"
like "$T/out" '^0x01  PROCESS_CONTEXTSWITCH +process +sched:sched_switch +available +DEFAULT +10 +9 +1$' \
	"list: an available event with its handler and counters"
like "$T/out" '^0x05  PROCESS_INIT_WQH .*unavailable +- .*\(no tracepoint for this hook in Linux\)$' \
	"list: an unavailable event with the reason from the catalog"
K handlers
is "$(sed -n 3p "$T/out" | tr -s ' ')" "2 pid_switch 4" "handlers: id, name, calls"
K masksets
like "$T/out" '^1 +RDEFAULT +system +2  current$' "masksets: RDEFAULT current with 2 events"
like "$T/out" '^3 +mine +user +1$' "masksets: a user maskset"

K read -m 0
is "$rc $(grep -vc '^#' "$T/out")" "0 0" "read -m 0: RNOTHING has no entries"
K read -m RDEFAULT
is "$(grep -v '^#' "$T/out" | cut -f1 | tr '\n' '|')" "0x01 1|0x02 1|" "read -m RDEFAULT (by name)"
like "$T/out" '^0x01 1	# PROCESS_CONTEXTSWITCH -> DEFAULT$' "read: the entry names in a comment"
K read -m 9
is "$rc" 1 "read of a missing maskset: exit 1"

"$KTRACE" lkst -d "$L" read -m 0 | "$KTRACE" lkst -d "$L" write -m 3 > "$T/out" 2> "$T/err"
is "$?" 0 "read -m 0 | write -m 3 (the seed's null maskset)"
sent_is 'write 3
' "write sent 'write 3' and no entry"
masksets
printf '# mine\nPROCESS_CONTEXTSWITCH pid_switch\n0x02 DEFAULT\nPROCESS_INIT_WQH nothing\n' > "$T/ms"
K write -m 4 -n onepid -f "$T/ms"
is "$rc" 0 "write -m 4 -n onepid -f FILE"
sent_is 'write 4 onepid
0x01 2
0x02 1
' "write sent the entries by id, NOTHING left out"
masksets
K config -m mine 1 1
is "$rc" 0 "config -m NAME EVENT HANDLER: exit 0"
sent_is 'config 3 0x01 1
' "config -m NAME EVENT HANDLER"
masksets
K config -m 3 PROCESS_WAKEUP pid_switch
sent_is 'config 3 0x02 2
' "config with a mnemonic and a handler name"
masksets
K set -m 3
sent_is 'set 3
' "set -m 3"
masksets
K delete -m mine
sent_is 'delete 3
' "delete -m NAME"
K start
is "$rc $(cat "$L/state")" "0 start" "start writes the state file"
K status
like "$T/out" '^maskset 1 RDEFAULT \(2 events\)$' "status: the current maskset"

# bad input: nothing written, FILE:LINE:COLUMN
masksets
cp "$L/masksets" "$T/before"
printf 'PROCESS_CONTEXTSWITCH DEFAULT\nPROCESS_WAKEUP BOGUS\n' > "$T/bad"
K write -m 3 -f "$T/bad"
is "$rc" 2 "unknown handler: exit 2"
is "$(cat "$T/err")" "ktrace lkst: $T/bad:2:16: unknown handler 'BOGUS' (see ktrace lkst handlers)" \
	"unknown handler: FILE:LINE:COLUMN"
printf 'NOSUCH 1\n' | "$KTRACE" lkst -d "$L" write -m 3 > /dev/null 2> "$T/err"
is "$(cat "$T/err")" "ktrace lkst: <stdin>:1:1: unknown event 'NOSUCH' (see ktrace lkst list)" "unknown event on stdin"
printf '1 1 1\n' | "$KTRACE" lkst -d "$L" write -m 3 > /dev/null 2> "$T/err"
like "$T/err" "<stdin>:1:5: expected 'EVENT HANDLER'" "three tokens"
cmp -s "$L/masksets" "$T/before"
ok $? "nothing was written"
K write -m 1 -f "$T/ms"
is "$rc" 2 "write to a system maskset: exit 2"
K config -m 3 1 BOGUS
is "$rc" 2 "config with an unknown handler: exit 2"
K config -m 3 0x99 1
like "$T/err" "unknown event '0x99'" "config with an unknown event"
cmp -s "$L/masksets" "$T/before"
ok $? "still nothing written"

# usage errors
K
is "$rc" 2 "no command: exit 2"
K bogus
like "$T/err" "^ktrace lkst: unknown command 'bogus'" "unknown command"
K read
like "$T/err" "read needs -m N" "read without -m"
K list -m 1
is "$rc" 2 "list takes no -m"
K set -m 64
like "$T/err" "option '-m': '64' is not a maskset id" "maskset id out of range"
K set -m nosuch
like "$T/err" "no maskset called 'nosuch'" "unknown maskset name"
K write -m 3 -n 9bad
is "$rc" 2 "a maskset name must not start with a digit"
K config -m 3 1
like "$T/err" "config needs EVENT and HANDLER" "config with one argument"
K list extra
like "$T/err" "unexpected argument 'extra'" "an extra argument"
K --bogus list
like "$T/err" "unknown option '--bogus'" "unknown option"
run "$KTRACE" lkst --help
is "$rc" 0 "--help: exit 0"
like "$T/out" "ktrace lkst read -m 0 \\| ktrace lkst write -m 3" "--help shows the process-trace recipe"

# no module
run "$KTRACE" lkst -d "$T/none" list
is "$rc" 1 "no LKST directory: exit 1"
like "$T/err" "^ktrace lkst: $T/none/events: No such file or directory \(is ktrace.ko loaded and debugfs mounted\?\)$" \
	"and says the module may be missing"
KTRACE_LKST_DIR=$L "$KTRACE" lkst list > /dev/null 2>&1
is "$?" 0 "KTRACE_LKST_DIR selects the directory"

done_testing
