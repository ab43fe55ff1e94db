#!/bin/sh
# tests/cli_read.sh - `ktrace read SRC DST`: copying a session to
# cpu0..cpuN with renamed stream lines and private permissions, the copy
# printing the same records, damaged sources, and every way DST can fail
# (exists as a file, under a file, unwritable, another user's, full disk,
# a link planted in it), plus usage errors.  (tests/security_files.sh has
# the symlink attacks run as root against a directory prepared by nobody.)
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

# reuse an existing directory holding an old copy: replaced by new 0600 files
mkdir "$T/again" && touch "$T/again/cpu0" "$T/again/cpu7" && chmod 644 "$T/again/cpu0"
chmod 755 "$T/again"
run "$KTRACE" read -q "$S" "$T/again"
is "$rc" 0 "existing DST directory: exit 0"
is "$(lines "$T/out")" 0 "-q: no summary"
is "$(stat -c %a "$T/again/cpu0")" 600 "an old file is replaced by a 0600 file"
ok "$([ ! -e "$T/again/cpu7" ]; echo $?)" "the old copy's other files are removed"
is "$(stat -c %a "$T/again")" 700 "the reused DST is made 0700"
mkdir "$T/other" && touch "$T/other/notes.txt"
run "$KTRACE" read "$S" "$T/other"
is "$rc" 1 "DST holding other files: exit 1"
is "$(cat "$T/err")" "ktrace read: $T/other: exists and holds 'notes.txt', not a ktrace trace (choose another directory)" \
	"DST holding other files: one line naming one"

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

# a link planted where a stream goes: replaced, never written through
mkdir "$T/planted"
ln -s /dev/full "$T/planted/cpu0"
mode=$(stat -L -c %a /dev/full)
run "$KTRACE" read "$S" "$T/planted"
is "$rc" 0 "a link planted as DST/cpu0: copied"
ok "$([ -f "$T/planted/cpu0" ] && [ ! -L "$T/planted/cpu0" ]; echo $?)" "... into a new file, not through the link"
is "$(stat -L -c %a /dev/full)" "$mode" "... the link's target untouched"

# a full disk: a 20 KiB tmpfs in a mount namespace of our own (unshare -r
# maps the caller to root in it, so this runs as any user)
mkdir "$T/full"
unshare -rm sh -c "mount -t tmpfs -o size=20k none '$T/full' && '$KTRACE' read '$S' '$T/full/dst' && exit 0; \
	echo rc=\$? >&2; cmp -s '$S/trace0' '$T/full/dst/cpu0' && echo cpu0 >&2; exit 0" >"$T/out" 2>"$T/err"
like "$T/err" "^rc=1$" "full disk: exit 1"
like "$T/err" "^ktrace read: $T/full/dst/cpu1: write: No space left on device$" "full disk: one line naming the file"
like "$T/err" "^cpu0$" "full disk: what fitted is kept"

# another user's DST directory: refused before anything is written
mkdir "$T/ro" && chmod 555 "$T/ro"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$T/ro"
	run "$KTRACE" read "$S" "$T/ro"
	who=65534
else
	run "$KTRACE" read "$S" /
	who=0
fi
is "$rc" 1 "another user's DST: exit 1"
like "$T/err" "^ktrace read: [^ ]*: owned by uid $who, not by you \(uid $(id -u)\): refusing to write into another user's directory$" \
	"another user's DST: one line saying whose it is"

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
