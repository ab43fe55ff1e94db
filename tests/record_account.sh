#!/bin/sh
# tests/record_account.sh - every record of `ktrace record` accounted for
# (issue 25, items 12-16): in each case below, records in the trace +
# records counted lost = calls the program made (tests/kft/account.c
# counts its own calls and prints the count), and `record`, `info` and `kd`
# print the same loss figure, each loss message once.
#
#   - disk full (a 3 MB tmpfs) during a streamed record: the rings' last
#     contents the consumer could not write are counted, "No space left on
#     device" is printed once, record exits with the program's status;
#   - the disk filling while the program runs: not "was not traced", the
#     program's exit status, the call-site table written;
#   - a program closing all its descriptors (a loop to 1024, close_range),
#     or reusing their numbers for a file of its own (never extended);
#   - a stream file emptied or cut short after recording: readers say so in
#     one line, exit 1, and count the missing records as lost;
#   - `ktrace record` killed (SIGKILL): readers point at `ktrace read
#     --recover DIR`, which then accounts for every call.
#
# The tmpfs cases need root (mount); they are skipped otherwise.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

SRC=${KTRACE_SRC:-.}
export KTRACE_LIBCALL=0 # the program's own calls only: it counts those
san_preload
MNT=$T/full
cleanup() { mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"; }
trap cleanup EXIT

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # skip $1"
}

cc -O1 -finstrument-functions -o "$T/account" "$SRC/tests/kft/account.c"
ok $? "tests/kft/account.c builds"
A=$T/account

# calls the program made (its stdout), records and losses each command shows
made() { sed -n 's/^calls //p' "$1"; }
info_records() { sed -n 's/^# records *: \([0-9]*\) .*/\1/p' "$1"; }
info_lost() { sed -n 's/^# lost *: \([0-9]*\) records lost, [0-9]* sub-buffers overwritten, \([0-9]*\) records dropped.*/\1 \2/p' "$1" | awk '{ print $1 + $2 }'; }
kd_lost() { sed -n 's/^ktrace kd: warning: \([0-9]*\) records lost or dropped.*/\1/p' "$1"; }
rec_lost() { sed -n 's/^ktrace record: \([0-9]*\) records dropped.*/\1/p' "$1"; }

# account NAME DIR OUT: info and kd of DIR; records + lost = the calls in OUT,
# and kd's loss figure = info's (and = $4 when given: record's or read's)
account() {
	"$KTRACE" info "$2" >"$T/info" 2>"$T/info.err"
	"$KTRACE" kd "$2" >/dev/null 2>"$T/kd.err"
	r=$(info_records "$T/info")
	l=$(info_lost "$T/info")
	m=$(made "$3")
	is "$((${r:-0} + ${l:-0}))" "${m:-none}" "$1: records in the trace ($r) + records counted lost ($l) = calls made ($m)"
	if [ "${l:-0}" -gt 0 ]; then
		is "$(kd_lost "$T/kd.err")" "$l" "$1: kd prints info's loss figure"
		[ -n "$4" ] && is "$4" "$l" "$1: record (read --recover) prints info's loss figure"
	else
		unlike "$T/kd.err" "lost or dropped" "$1: kd reports no loss either"
	fi
}

# ---- 12: disk full during a streamed record ------------------------------
mkdir -p "$MNT"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=3m tmpfs "$MNT" 2>/dev/null; then
	# uncompressed: 64 MB of slots for 3 MB (frames of these calls would fit;
	# 13 fills the disk with frames)
	run "$KTRACE" record --compress=none -o "$MNT/t" -- "$A" calls 4000000
	cp "$T/out" "$T/out12"
	cp "$T/err" "$T/err12"
	is "$rc" 0 "disk full: record exits with the program's status (0)"
	is "$(grep -c 'cannot write: No space left on device' "$T/err12")" 1 "disk full: 'cannot write: No space left on device' printed once"
	like "$T/err12" "records dropped: $MNT/t/trace0 could not be written \(No space left on device\)" \
		"disk full: the summary names the file and the cause, not a slow consumer"
	unlike "$T/err12" "fell behind" "disk full: the consumer is not blamed"
	account "disk full" "$MNT/t" "$T/out12" "$(rec_lost "$T/err12")"
	like "$T/err12" "entries lost: $(info_lost "$T/info")\$" "disk full: the run's status counts the same loss"
	umount "$MNT"

	# ---- 13: the disk fills while the program runs ---------------------
	mount -t tmpfs -o size=3m tmpfs "$MNT"
	"$KTRACE" record -o "$MNT/t" -- "$A" calls 20000000 >"$T/out13" 2>"$T/err13" &
	pid=$!
	i=0
	# 1 MiB written first: the newest slot (256 KiB) that makes room for
	# the call-site table and the status files leaves records to name
	while [ "$(stat -c %s "$MNT/t/trace0" 2>/dev/null || echo 0)" -lt 1048576 ] && [ $i -lt 6000 ]; do # 60 s: a hang guard
		sleep 0.01
		i=$((i + 1))
	done
	dd if=/dev/zero of="$MNT/fill" bs=4k >/dev/null 2>&1
	wait $pid
	rc=$?
	is "$rc" 0 "disk filling: record exits with the program's status (0)"
	unlike "$T/err13" "was not traced" "disk filling: the program is not said to be untraced"
	ok "$([ -s "$MNT/t/callsites" ]; echo $?)" "disk filling: the call-site table is written"
	is "$(grep -c 'cannot write: No space left on device' "$T/err13")" 1 "disk filling: 'cannot write: No space left on device' printed once"
	account "disk filling" "$MNT/t" "$T/out13" "$(rec_lost "$T/err13")"
	"$KTRACE" kd "$MNT/t" >"$T/kd13" 2>/dev/null
	like "$T/kd13" "leaf" "disk filling: kd names the functions"
	umount "$MNT"
else
	for w in "disk full" "disk filling"; do
		skip "$w: needs root to mount a tmpfs"
	done
fi

# ---- 14: a program that closes its descriptors ---------------------------
for how in closefds close_range; do
	run "$KTRACE" record -o "$T/$how" -- "$A" $how 900000
	cp "$T/out" "$T/out14"
	is "$rc" 0 "$how: exit 0"
	unlike "$T/err" "fell behind|trace256|dropped" "$how: nothing dropped, no slow consumer blamed"
	account "$how" "$T/$how" "$T/out14"
	is "$(info_records "$T/info")" "$(made "$T/out14")" "$how: every call recorded"
done
run "$KTRACE" record -o "$T/reuse" -- "$A" reusefds 900000 "$T/own"
cp "$T/out" "$T/out14"
is "$(sed -n 's/^own-size //p' "$T/out14")" 0 "reused descriptors: the program's own file is never written by ktrace"
account "reused descriptors" "$T/reuse" "$T/out14"
is "$(info_records "$T/info")" "$(made "$T/out14")" "reused descriptors: every call recorded"

# ---- 15: a stream file emptied or cut short after recording --------------
run "$KTRACE" record -q --compress=none -b 4096 -o "$T/cut" -- "$A" calls 1010 # 5 slots (cut frames: record_compress.sh)
cp "$T/out" "$T/out15"
cp "$T/cut/trace0" "$T/trace0.orig"
truncate -s 0 "$T/cut/trace0"
run "$KTRACE" print "$T/cut"
is "$rc" 1 "emptied stream: print exits 1"
is "$(grep -c 'trace0: 0 bytes, but the recording wrote' "$T/err")" 1 "emptied stream: print says so, once"
account "emptied stream" "$T/cut" "$T/out15"
is "$(grep -c 'cut short' "$T/info.err")" 1 "emptied stream: info says so, once"
cp "$T/trace0.orig" "$T/cut/trace0"
truncate -s 8192 "$T/cut/trace0"
account "stream cut at 8 KiB" "$T/cut" "$T/out15"
like "$T/info.err" "trace0: 8192 bytes, but the recording wrote" "stream cut at 8 KiB: info says so"

# a copy (ktrace read DIR DST: cpuN files) is checked the same way
cp "$T/trace0.orig" "$T/cut/trace0"
run "$KTRACE" read "$T/cut" "$T/copy"
is "$rc" 0 "copy of the whole trace: read exits 0"
truncate -s 0 "$T/copy/cpu0"
account "emptied stream of a copy" "$T/copy" "$T/out15"
like "$T/info.err" "copy/cpu0: 0 bytes, but the recording wrote" "emptied stream of a copy: info names cpu0"

# ---- 16: ktrace record killed --------------------------------------------
"$KTRACE" record -q -o "$T/killed" -- "$A" calls 30000000 >"$T/out16" 2>"$T/err16" &
pid=$!
i=0
while [ ! -s "$T/killed/trace0" ] && [ $i -lt 6000 ]; do # 60 s: a hang guard
	sleep 0.01
	i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
for cmd in info kd print; do
	run "$KTRACE" $cmd "$T/killed"
	is "$(grep -c "run \`ktrace read --recover $T/killed\`" "$T/err")" 1 "killed recorder: $cmd points at ktrace read --recover, once"
	is "$rc" 1 "killed recorder: $cmd exits 1"
done
run "$KTRACE" read --recover "$T/killed" # waits for the program
cp "$T/err" "$T/err16r"
like "$T/out16" "^calls " "killed recorder: the program ran to its end"
account "killed recorder" "$T/killed" "$T/out16" "$(sed -n 's/^ktrace read: \([0-9]*\) records dropped.*/\1/p' "$T/err16r")"
run "$KTRACE" info "$T/killed"
unlike "$T/err" "recover" "killed recorder: after --recover nothing more to say"

done_testing
