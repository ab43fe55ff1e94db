#!/bin/sh
# tests/cli_lkst_hooks.sh - `ktrace lkst hook add|list|del` and hook ids in
# masksets, against a fake LKST directory of plain files (the real
# ktrace/lkst/hooks of ktrace.ko is tested in the VM by
# kmod/tests/suite_hooks.sh): the exact command each one writes, the
# listing, and every usage error (one line, exit 2) before anything is
# written.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

L=$T/lkst
mkdir "$L"
# Writes do not truncate a plain file: a long comment line takes what the
# CLI writes, the hook lines after it stay readable.
hooks() {
	{
		printf '#%0200d\n' 0
		printf '0xc3 vfs_getattr+0 vfs_getattr 0 a1,a2 ftrace on 12 0\n'
		printf '0xc4 f+16 f 16 - int3 off 0 3\n'
		printf '0xc0 old+0 old 0 - - deleted 0 0\n'
	} > "$L/hooks"
}
hooks
printf 'maskset 3 mine user\n%0200d\n' 0 > "$L/masksets"
printf '# id name calls\n1 DEFAULT 10\n255 NOTHING 0\n' > "$L/handlers"
# the command CMD (with its newline) at the start of FILE?
sent_is() { is "$(head -c "$(printf '%s' "$2" | wc -c)" "$L/$1")" "$(printf '%s' "$2")" "$3"; }
K() { run "$KTRACE" lkst -d "$L" "$@"; }

K hook add vfs_getattr a1 a2
is "$rc $(cat "$T/out")" "0 hook 0xc3 vfs_getattr+0 a1,a2" "hook add FUNC a1 a2: prints the id the module gave"
sent_is hooks 'add auto vfs_getattr+0 a1,a2
' "and sent 'add auto vfs_getattr+0 a1,a2'"
hooks
K hook add f+0x10 --id 0xc4
is "$rc $(cat "$T/out")" "0 hook 0xc4 f+16 -" "hook add FUNC+0x10 --id 0xc4"
sent_is hooks 'add 0xc4 f+16 -
' "sent 'add 0xc4 f+16 -' (offset in decimal, no arguments)"
hooks
K hook add vfs_getattr a3,a1
sent_is hooks 'add auto vfs_getattr+0 a3,a1
' "arguments comma-separated, in the order given"
hooks

K hook list
is "$rc" 0 "hook list: exit 0"
like "$T/out" '^0xc3  vfs_getattr\+0 +a1,a2 +ftrace +on +12 +0$' "hook list: an active hook"
like "$T/out" '^0xc0  old\+0 +- +- +deleted +0 +0$' "hook list: a deleted one"
is "$(grep -c '^0x' "$T/out")" 3 "hook list: three hooks (the junk line is skipped)"

long=a_function_name_of_eighty_characters_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
printf '# id name category tracepoint status probe handler hits written dropped\n0xc3 vfs_getattr+0 hook kprobe:vfs_getattr+0 available on 1 12 12 0\n0xc4 %s+0 hook kprobe:%s+0 available off 255 0 0 0\n' \
	$long $long > "$L/events"
: > "$L/catalog"
K list
is "$rc $(wc -l < "$T/err")" "0 0" "list with hooks in events: exit 0, no complaint"
like "$T/out" '^0xc3  vfs_getattr\+0 +hook +kprobe:vfs_getattr\+0 +available +DEFAULT +12 +12 +0$' "list: a hook's line"
like "$T/out" "^0xc4  $long\\+0 +hook +kprobe:$long\\+0 +available +- +0 +0 +0\$" "list: a hook with an 80-character name"

K hook del vfs_getattr
is "$rc" 0 "hook del FUNC"
sent_is hooks 'del vfs_getattr+0
' "sent 'del vfs_getattr+0'"
hooks
K hook del 196
sent_is hooks 'del 0xc4
' "hook del 196 sent 'del 0xc4'"
hooks

K config -m 3 vfs_getattr+0 DEFAULT
is "$rc" 0 "config names a hook by FUNC+OFFSET"
sent_is masksets 'config 3 0xc3 1
' "sent 'config 3 0xc3 1'"
K config -m 3 0xc7 1
sent_is masksets 'config 3 0xc7 1
' "a hook id is passed on (the module knows whether it exists)"
K config -m 3 nosuch+0 1
like "$T/err" "unknown event 'nosuch\+0'" "an unknown hook name"
printf '0xc5 DEFAULT\n' | "$KTRACE" lkst -d "$L" write -m 3 > /dev/null 2>&1
is "$?" 0 "write -m takes hook ids"
sent_is masksets 'write 3
0xc5 1
' "sent 'write 3' with the hook's entry"

# usage errors: exit 2, one line, nothing written
hooks
cp "$L/hooks" "$T/before"
err_is() { # err_is MESSAGE-REGEX DESCRIPTION ARGS...
	re=$1
	d=$2
	shift 2
	K "$@"
	is "$rc $(wc -l < "$T/err")" "2 1" "$d: exit 2, one line"
	like "$T/err" "$re" "$d: message"
}
err_is "FUNC must be 1..127 of A-Z" "a name with a blank" hook add 'a b'
err_is "FUNC must be 1..127 of A-Z" "a name starting with a digit" hook add 9abc
err_is "FUNC must be 1..127 of A-Z" "an empty name" hook add +4
err_is "OFFSET must be a number" "a bad offset" hook add f+x1
err_is "OFFSET must be a number" "an offset over 0xfffff" hook add f+0x100000
err_is "arguments are a1..a6" "argument a7" hook add f a7
err_is "arguments are a1..a6" "argument arg1" hook add f arg1
err_is "argument 'a1' given twice" "an argument twice" hook add f a1 a1
err_is "at most 4 arguments" "five arguments" hook add f a1 a2 a3 a4 a5
err_is "'--id': '0xbf' is not a hook id \(0xc0..0xff\)" "--id below the range" hook add f --id 0xbf
err_is "'--id': '256' is not a hook id" "--id above the range" hook add f --id 256
err_is "option '--id' is for hook add only" "--id with list" hook list --id 0xc0
err_is "option '--id' is for hook add only" "--id with another command" list --id 0xc0
err_is "hook add needs FUNC" "add without a function" hook add
err_is "hook needs a command: add, list, del" "hook alone" hook
err_is "unknown hook command 'frob'" "an unknown hook command" hook frob
err_is "hook list takes no argument" "list with an argument" hook list x
err_is "hook del needs one ID or FUNC" "del without what" hook del
err_is "'0x10' is not a hook id" "del of an id outside the range" hook del 0x10
err_is "hook takes no -m, -n or -f" "hook with -m" -m 3 hook list
cmp -s "$L/hooks" "$T/before"
ok $? "nothing was written to hooks"

# refusals the module gives (a directory cannot be written: EISDIR)
mkdir "$T/isdir" && mkdir "$T/isdir/hooks"
run "$KTRACE" lkst -d "$T/isdir" hook add f
is "$rc" 1 "a refused add: exit 1"
like "$T/err" "^ktrace lkst: $T/isdir/hooks: adding f\+0 refused: Is a directory$" "and says what and where"
run "$KTRACE" lkst -d "$T/none" hook list
is "$rc" 1 "no LKST directory: exit 1"
like "$T/err" "^ktrace lkst: $T/none/hooks: No such file or directory \(is ktrace.ko loaded" "and says so"
run "$KTRACE" record --kernel=0xbf -- true
is "$rc" 2 "record --kernel=0xbf (below the hook ids): exit 2"
like "$T/err" "unknown event or category '0xbf' .*hook id 0xc0..0xff" "and names the hook ids"
run "$KTRACE" lkst --tracefs list
like "$T/err" "option '--tracefs' is for hook commands" "--tracefs without hook: exit 2"
run "$KTRACE" lkst --help
like "$T/out" "hook add FUNC\[\+OFFSET\] \[ARGS\] \[--id N\]" "--help shows hook add"

done_testing
