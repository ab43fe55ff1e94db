#!/bin/sh
# tests/cli_read.sh - `ktrace read SRC DST`: copying a session to
# cpu0..cpuN with renamed stream lines and private permissions, the copy
# printing the same records, damaged sources, and every way DST can fail
# (exists as a file, under a file, unwritable, read-only, full disk),
# plus usage errors.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

S=$T/src
$MKTRACE -s 3 -r 100 --lost 1:0:4 "$S" >/dev/null

run "$KTRACE" read "$S" "$T/dst"
is "$rc" 0 "copy: exit 0"
is "$(cat "$T/out")" "$T/dst: 3 streams, 300 records, 4 lost, 0 dropped, 0 sub-buffers overwritten, 0 corrupt regions" \
	"copy: summary of the checked copy"
is "$(cd "$T/dst" && ls | tr '\n' ' ')" "control cpu0 cpu1 cpu2 dropped metadata state threads " "copy: cpu0..cpuN and the text files"
is "$(grep '^stream' "$T/dst/metadata" | tr '\n' ' ')" "stream 0 thread cpu0 stream 1 thread cpu1 stream 2 thread cpu2 " \
	"copy: metadata stream lines name the new files"
is "$(grep -vc '^stream' "$T/dst/metadata")" "$(grep -vc '^stream' "$S/metadata")" "copy: the other metadata lines kept"
is "$(stat -c %a "$T/dst")" 700 "copy: DST is 0700"
is "$(stat -c %a "$T/dst"/* | sort -u)" 600 "copy: files are 0600"
cmp -s "$S/trace1" "$T/dst/cpu1"
ok $? "copy: streams copied byte for byte"
"$KTRACE" print "$S" >"$T/a" 2>&1
"$KTRACE" print "$T/dst" >"$T/b" 2>&1
cmp -s "$T/a" "$T/b"
ok $? "copy: prints exactly like the source"

# reuse an existing directory; an existing file there gets mode 0600
mkdir "$T/again" && touch "$T/again/cpu0" && chmod 644 "$T/again/cpu0"
run "$KTRACE" read -q "$S" "$T/again"
is "$rc" 0 "existing DST directory: exit 0"
is "$(lines "$T/out")" 0 "-q: no summary"
is "$(stat -c %a "$T/again/cpu0")" 600 "an existing file is made 0600"

# damaged source: everything is copied, the problem reported
$MKTRACE -s 1 -r 400 --corrupt-header 0:1 "$T/bad" >/dev/null
run "$KTRACE" read "$T/bad" "$T/badcopy"
is "$rc" 1 "damaged source: exit 1"
like "$T/err" "^ktrace read: $T/badcopy/cpu0: offset 4096: bad sub-buffer magic 0xdeadbeef$" \
	"damaged source: file and offset named"
cmp -s "$T/bad/trace0" "$T/badcopy/cpu0"
ok $? "damaged source: copied anyway"

# DST problems
touch "$T/file"
run "$KTRACE" read "$S" "$T/file"
is "$rc" 1 "DST is a file: exit 1"
is "$(cat "$T/err")" "ktrace read: $T/file: exists and is not a directory" "DST is a file: one line"
run "$KTRACE" read "$S" "$T/file/sub"
is "$rc" 1 "DST under a file: exit 1"
is "$(cat "$T/err")" "ktrace read: $T/file/sub: Not a directory" "DST under a file: one line"
run "$KTRACE" read "$S" /sys/ktrace-read-test
is "$rc" 1 "unwritable DST: exit 1"
like "$T/err" "^ktrace read: /sys/ktrace-read-test: (Operation not permitted|Permission denied|Read-only file system)$" \
	"unwritable DST: one line"

mkdir "$T/full"
ln -s /dev/full "$T/full/cpu0"
run "$KTRACE" read "$S" "$T/full"
is "$rc" 1 "full disk: exit 1"
is "$(head -1 "$T/err")" "ktrace read: $T/full/cpu0: write: No space left on device" "full disk: one line naming the file"
is "$(stat -c %a /dev/full)" "$(stat -L -c %a "$T/full/cpu0")" "full disk: the device's mode untouched"
is "$(grep -c '^stream' "$T/full/metadata")" 3 "full disk: the other files are still copied"

# a read-only DST directory (as an unprivileged user when running as root)
mkdir "$T/ro" && chmod 555 "$T/ro"
if [ "$(id -u)" = 0 ]; then
	# the build tree may be private to root: run a copy of the command
	chmod 755 "$T" && chmod -R a+rX "$S" && cp "$KTRACE" "$T/ktrace" && chmod 755 "$T/ktrace"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$T/ktrace" read "$S" "$T/ro"
else
	run "$KTRACE" read "$S" "$T/ro"
fi
is "$rc" 1 "read-only DST: exit 1"
like "$T/err" "^ktrace read: $T/ro/cpu0: Permission denied$" "read-only DST: one line naming the file"
chmod 700 "$T"

# SRC problems and usage
run "$KTRACE" read "$T/nonexistent" "$T/x"
is "$rc" 1 "missing SRC: exit 1"
is "$(cat "$T/err")" "ktrace read: $T/nonexistent: No such file or directory" "missing SRC: one line"
mkdir "$T/empty"
run "$KTRACE" read "$T/empty" "$T/x"
is "$rc" 1 "SRC not a trace: exit 1"
like "$T/err" "neither a ktrace trace directory" "SRC not a trace: says so"
run "$KTRACE" read "$S" "$S"
is "$rc" 2 "DST = SRC: refused"
mkdir "$T/relay" && touch "$T/relay/trace0" "$T/relay/state"
run "$KTRACE" read "$T/relay" "$T/relaycopy"
unlike "$T/err" "neither a ktrace" "a kernel channel directory goes to the relay reader"
run "$KTRACE" read --bogus "$S" "$T/x"
is "$rc" 2 "unknown option: exit 2"
is "$(cat "$T/err")" "ktrace read: unknown option '--bogus' (see ktrace read --help)" "unknown option: one line"
run "$KTRACE" read -b "$S" "$T/x"
is "$rc" 2 "bad -b value: exit 2"
like "$T/err" "^ktrace read: option '-b': '.*' is not a sub-buffer size" "bad -b value: names the option"
run "$KTRACE" read "$S"
is "$rc" 2 "one argument: exit 2"
run "$KTRACE" read -b 4096 -n 8 "$S" "$T/bn"
like "$T/err" "-b and -n apply to kernel channels only" "-b/-n on a user-space trace: a warning"
is "$rc" 0 "-b/-n on a user-space trace: still copied"

done_testing
