#!/bin/sh
# tests/crash_read.sh - `ktrace read --crash`: converting ktrace.ko's crash
# region (docs/FORMAT.md "Crash region") into a trace directory, from
# images made by tests/kernel/crash_image.py out of the format's byte
# offsets alone: records whose check word matches are kept, a torn record
# (stopped halfway) and a record with a wrong check are skipped and
# counted as lost, an earlier lap's bytes after a sub-buffer's end word are
# ignored, a sub-buffer with a bad header check is skipped and
# counted, overwritten sub-buffers show as such; the copy is walked by the
# Python script and by kmod/tests/crashcheck.c (both independent of
# ktrace's code), printed, shown by timeline and exported to Chrome JSON
# (read back by Python's json); damaged images (magic, header check,
# channel check, truncated, geometry) and usage errors fail with one line.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

SRC=${KTRACE_SRC:-.}
IMG=$SRC/tests/kernel/crash_image.py
python3 "$IMG" make good "$T/img" > "$T/exp"
exp() { sed -n "s/^$1 //p" "$T/exp"; }
cc -O1 -g -o "$T/crashcheck" "$SRC/kmod/tests/crashcheck.c"
ok $? "crashcheck builds"
"$T/crashcheck" -c lkst "$T/img" > "$T/cc"
cc() { sed -n "s/^$1 //p" "$T/cc"; }
is "$(cc records) $(cc torn) $(cc bad-subbufs) $(cc last-ns) $(cc panic-ns)" \
	"$(exp records) $(exp torn) $(exp bad) $(exp last) $(exp panic)" \
	"crashcheck and the image generator agree on what the region holds"

# two channels hold records: one must be chosen
run "$KTRACE" read --crash "$T/img" "$T/d"
is "$rc" 1 "two channels with records, no --channel: exit 1"
is "$(cat "$T/err")" "ktrace read: $T/img: several channels hold records: choose one with --channel NAME (lkst, default)" \
	"it names the channels"

run "$KTRACE" read --crash --channel lkst "$T/img" "$T/d"
is "$rc" 0 "--channel lkst: exit 0"
is "$(sed -n 2p "$T/out")" "$T/d: crash region: $(exp records) records, $(exp torn) torn (skipped), $(exp bad) bad sub-buffers; last record $(exp last) ns, panic $(exp panic) ns (-2.000 ms), CPUs stopped $(($(exp panic) + 30000000)) ns" \
	"the summary counts records, torn records and bad sub-buffers"
is "$(sed -n 1p "$T/out")" "$T/d: 2 streams, $(exp records) records, $(exp torn) lost, 0 dropped, 2 sub-buffers overwritten, 0 corrupt regions" \
	"the copy reads back: torn records are lost, overwritten sub-buffers shown"
is "$(python3 "$IMG" walk "$T/d")" "records $(exp records) lost $(exp torn) badlen 0 tsback 0" \
	"walked independently: every record well-formed and in time order, torn ones only counted"
is "$(cd "$T/d" && ls | tr '\n' ' ')" "cpu0 cpu1 dropped metadata " "cpu0, cpu1, dropped, metadata"
is "$(stat -c %a "$T/d") $(stat -c %a "$T/d"/* | sort -u)" "700 600" "DST 0700, files 0600"
is "$(cat "$T/d/dropped")" "$(exp torn)" "dropped holds the torn count"
is "$(grep -E '^(channel|mode|scope|buf-size|buf-nr|layout|crash-panic-ns|crash-torn|crash-note|crash-panic-stamp) ' "$T/d/metadata" | tr '\n' '|')" \
	"channel lkst|mode flight|scope cpu|buf-size 4096|buf-nr 4|layout packed|crash-panic-ns $(exp panic)|crash-panic-stamp entry|crash-torn $(exp torn)|crash-note test note 42|" \
	"metadata: the channel, its geometry, the panic stamp, the torn count, the note"
"$KTRACE" print "$T/d" > "$T/print" 2>&1
ok $? "ktrace print reads it"
is "$(grep -c SYSCALL_ENTRY "$T/print")" "$(exp records)" "ktrace print shows every valid record, by its LKST name"
like "$T/print" "1 record lost" "ktrace print shows the loss of a torn record"
run "$KTRACE" timeline "$T/d"
is "$rc" 0 "ktrace timeline reads it"
run "$KTRACE" export --format=chrome -o "$T/d.json" "$T/d"
is "$rc" 0 "ktrace export --format=chrome writes it"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d; sys.exit(0 if sum(1 for e in ev if "SYSCALL_ENTRY" in e.get("name", "")) == int(sys.argv[2]) else 1)' \
	"$T/d.json" "$(exp records)"
ok $? "Python's json reads the export, with every record"

# the default channel: static events named by the catalogue kept in the region
run "$KTRACE" read --crash --channel default "$T/img" "$T/def"
is "$rc" 0 "--channel default: exit 0"
"$KTRACE" print "$T/def" > "$T/defprint" 2>&1
is "$(grep -c 'myfunc_entry' "$T/defprint")" 8 "its 8 static events print with their catalogue names"
is "$(grep -c '^func \|^event ' "$T/def/metadata") $(grep -c 'not a catalogue' "$T/def/metadata")" "2 0" \
	"only the catalogue's func/event lines go to the metadata"

# a directory holding `image` (debugfs ktrace/crash) works like the file
mkdir "$T/dbg" && cp "$T/img" "$T/dbg/image"
run "$KTRACE" read -q --crash --channel lkst "$T/dbg" "$T/d2"
is "$rc:$(cat "$T/out")" "0:" "SRC may be the crash directory (its image); -q: no summary"
cmp -s "$T/d/cpu0" "$T/d2/cpu0"
ok $? "the same copy"

# only one channel holds records: chosen without --channel
python3 "$IMG" make one "$T/one" > /dev/null
run "$KTRACE" read --crash "$T/one" "$T/d3"
is "$rc $(grep '^channel' "$T/d3/metadata")" "0 channel lkst" "one channel with records: converted without --channel"

# damaged images: one line, exit 1, nothing written
for k in magic hdrcheck chancheck short geometry; do
	python3 "$IMG" make $k "$T/$k" > /dev/null
done
run "$KTRACE" read --crash "$T/magic" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/magic: offset 0: bad magic 0x4853415243544f4e: not a ktrace crash region" "wrong magic"
run "$KTRACE" read --crash "$T/hdrcheck" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/hdrcheck: offset 104: the header check fails: damaged header" "wrong header check"
run "$KTRACE" read --crash "$T/chancheck" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/chancheck: channel 1 (offset 512): the check fails: damaged entry" "wrong channel check"
run "$KTRACE" read --crash "$T/short" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/short: the header says 1048576 bytes, the image has 524288: truncated or not a whole region" \
	"truncated image"
run "$KTRACE" read --crash "$T/geometry" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/geometry: channel 0: geometry outside the region (rings 2 x 1073741824 x 4096 at 69632)" \
	"a channel whose rings lie outside the image"
ok "$([ ! -e "$T/x" ]; echo $?)" "no DST was created for a damaged image"
run "$KTRACE" read --crash --channel nope "$T/img" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/img: no channel 'nope' in the crash region (it has: lkst default)" "unknown channel"
run "$KTRACE" read --crash "$T/nonexistent" "$T/x"
is "$rc $(cat "$T/err")" "1 ktrace read: $T/nonexistent: No such file or directory" "missing image"

# DST safety: the same rules as every ktrace read
mkdir "$T/other" && touch "$T/other/notes.txt"
run "$KTRACE" read --crash --channel lkst "$T/img" "$T/other"
is "$rc" 1 "DST holding other files: exit 1"
like "$T/err" "exists and holds 'notes.txt', not a ktrace trace" "DST holding other files: refused"

# usage
run "$KTRACE" read --channel lkst "$T/img" "$T/x"
is "$rc $(cat "$T/err")" "2 ktrace read: --channel applies to --crash only (see ktrace read --help)" "--channel without --crash"
run "$KTRACE" read --crash -b 4096 "$T/img" "$T/x"
is "$rc $(cat "$T/err")" "2 ktrace read: --crash takes none of --recover, -b, -n" "--crash with -b"
run "$KTRACE" read --crash "$T/img"
is "$rc $(cat "$T/err")" "2 ktrace read: --crash needs SRC and DST (see ktrace read --help)" "--crash without DST"
"$KTRACE" read --help | grep -q -- '--crash'
ok $? "--help documents --crash"

done_testing
