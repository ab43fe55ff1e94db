#!/bin/sh
# tests/reader_bulk.sh - ktr_next_calls() (the calls of a trace decoded in
# runs, kd's reading path) gives exactly what ktr_next() + ktr_call_decode()
# give, call for call and field for field, with every other record and gap
# in its place (tests/helpers/callsdump.c prints both): one thread and
# many sub-buffers, four threads on four streams merged by time, threads
# sharing the shared stream (context words: the runs leave those to
# ktr_next()), a signal handler, a fork, a flight recorder that
# overwrote sub-buffers, compressed and not.  And kd, which reads that
# way, counts what the program did (calltree_want, from its source); so
# does print (text and CSV, also reading in runs), which writes what it
# writes record by record (KTRACE_READ_RECORDS), as export --format=csv
# does.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
DUMP=$KTRACE_BUILD/tests/helpers/callsdump
cc -O1 -finstrument-functions -o calltree "$KTRACE_SRC/tests/kft/calltree.c" -lpthread || exit 1

# print_counts DIR: "name count" per function from print's CSV rows, sorted
print_counts() {
	"$KTRACE" print -C "$1" 2>/dev/null | awk -F, '$8 == "call" { n[$9]++ } END { for (f in n) print f, n[f] }' |
		LC_ALL=C sort
}

# check_print NAME DIR [OPTIONS]: print (which reads calls in runs) writes
# what it writes record by record (KTRACE_READ_RECORDS), as text and CSV
check_print() {
	n=$1 d=$2
	shift 2
	for fmt in "" "-C -r"; do
		KTRACE_READ_RECORDS=1 "$KTRACE" print $fmt "$@" "$d" >prs.txt 2>/dev/null
		"$KTRACE" print $fmt "$@" "$d" >prb.txt 2>/dev/null
		ok "$([ -s prs.txt ] && cmp -s prs.txt prb.txt; echo $?)" "$n: print ${fmt:-(text)} $* writes the same in runs ($(lines prs.txt) lines)"
	done
	rm -f prs.csv prb.csv
	KTRACE_READ_RECORDS=1 "$KTRACE" export --format=csv -o prs.csv "$@" "$d" 2>/dev/null
	"$KTRACE" export --format=csv -o prb.csv "$@" "$d" 2>/dev/null
	ok "$([ -s prs.csv ] && cmp -s prs.csv prb.csv; echo $?)" "$n: export --format=csv $* writes the same in runs ($(lines prs.csv) rows)"
}

# check_depths NAME DIR COMPRESS: the frame entries' depth_min (the index of a
# compressed stream) is the smallest depth of each sub-buffer's CALL records
check_depths() {
	"$DUMP" depths "$2" >depths.txt 2>/dev/null
	if [ "$3" = zstd ]; then
		ok "$(awk '$4 != $5 { bad = 1 } END { exit bad || NR == 0 }' depths.txt; echo $?)" \
			"$1: each compressed sub-buffer's depth_min is its calls' smallest depth ($(lines depths.txt) sub-buffers)"
	else
		ok "$(awk '$4 != -1 { bad = 1 } END { exit bad || NR == 0 }' depths.txt; echo $?)" \
			"$1: uncompressed sub-buffers have no depth_min ($(lines depths.txt))"
	fi
}

# check NAME DIR: the two readings agree; the runs carried most calls (at least MIN%)
check() {
	"$DUMP" slow "$2" >slow.txt 2>/dev/null
	"$DUMP" bulk "$2" >bulk.txt 2>bulk.err
	ok "$(cmp -s slow.txt bulk.txt; echo $?)" "$1: ktr_next_calls() gives what ktr_next() gives ($(lines slow.txt) lines)"
	[ -z "${3:-}" ] && return
	set -- "$1" "$2" "$3" $(sed -n 's/^bulk \([0-9]*\) of \([0-9]*\)$/\1 \2/p' bulk.err)
	ok "$([ "${5:-0}" -gt 0 ] && [ $(($4 * 100)) -ge $(($5 * $3)) ]; echo $?)" \
		"$1: $4 of ${5:-?} calls came in runs (>= $3%)"
}

for z in zstd none; do
	"$KTRACE" record -q --no-libcall --compress=$z -b 4096 -o tree-$z ./calltree recurse 2000 >/dev/null 2>&1
	check "recurse 2000, 4 KiB sub-buffers, $z" tree-$z 90
	check_print "recurse 2000, $z" tree-$z
	check_depths "recurse 2000" tree-$z $z
	is "$(print_counts tree-$z)" "$(calltree_want 'recurse 50' | sed 's/recurse 50/recurse 2000/')" \
		"recurse 2000, $z: print has a line for each call the program made"
	is "$(kd_counts tree-$z)" "$(calltree_want 'recurse 50' | sed 's/recurse 50/recurse 2000/')" \
		"recurse 2000, $z: kd counts what the program did"
	"$KTRACE" record -q --no-libcall --compress=$z -b 4096 -o thr-$z ./calltree threads 4 >/dev/null 2>&1
	check "threads 4, $z" thr-$z 50
	# --time-range: the sub-buffers outside are skipped unread (ktr_set_window()),
	# and what is selected is what the whole trace's rows say lies inside: the
	# span of the call at depth 1500 (it holds the 500 calls below it, whose
	# records come first: the sub-buffers after them are skipped)
	"$KTRACE" print -C tree-$z 2>/dev/null | awk -F, 'NR > 1 && $8 == "call"' >all.csv
	set -- $(awk -F, '$10 ~ /^depth=1500;/ { printf "%s %.0f\n", $1, $1 + $2 }' all.csv)
	awk -F, -v f="$1" -v t="$2" '$1 >= f && $1 + $2 <= t' all.csv >want.csv
	"$KTRACE" print -C --time-range "$1~$2" tree-$z 2>/dev/null | tail -n +2 >got.csv
	ok "$([ -s want.csv ] && cmp -s want.csv got.csv; echo $?)" \
		"recurse 2000, $z: print --time-range (the call at depth 1500) gives the rows inside it ($(lines want.csv) of $(lines all.csv))"
	"$KTRACE" kd -v --format=csv --time-range "$1~$2" tree-$z >kd.csv 2>kd.err
	is "$(awk -F, 'NR > 1 { print $1, $2 }' kd.csv)" "recurse $(lines want.csv)" "... kd --time-range counts those calls"
	like kd.err "[1-9][0-9]* sub-buffers outside --time-range skipped" \
		"... and did not read the sub-buffers outside ($(grep -o '[0-9]* sub-buffers outside' kd.err))"
	check_print "threads 4, $z" thr-$z
	check_depths "threads 4" thr-$z $z
	wtid=$("$KTRACE" print -C thr-$z 2>/dev/null | awk -F, 'NR > 1 && $5 != $6 { print $6; exit }')
	check_print "threads 4, $z" thr-$z --tid "$wtid"
	like prs.txt ",$wtid,calltree,call,fast," "... the selection keeps worker $wtid's calls"
	unlike prs.txt ",call,main," "... and not the main thread's (main)"
	KTRACE_READ_RECORDS=1 "$KTRACE" print --cpu 0,1 thr-$z >prs.txt 2>/dev/null
	"$KTRACE" print --cpu 0,1 thr-$z >prb.txt 2>/dev/null
	ok "$(cmp -s prs.txt prb.txt; echo $?)" "threads 4, $z: print --cpu 0,1 writes the same in runs ($(lines prs.txt) lines)"
	is "$(print_counts thr-$z)" "$(calltree_want 'threads 4')" "threads 4, $z: print has a line for each call"
	is "$(kd_counts thr-$z)" "$(calltree_want 'threads 4')" "threads 4, $z: kd counts what the program did"
	"$KTRACE" record -q --no-libcall --compress=$z --threads 1 -o shr-$z ./calltree threads 4 >/dev/null 2>&1
	check "threads 4 on 1 thread stream (the rest shared), $z" shr-$z
	check_print "shared stream, $z" shr-$z
	is "$(kd_counts shr-$z)" "$(calltree_want 'threads 4')" "shared stream, $z: kd counts what the program did"
	for m in signal fork; do
		"$KTRACE" record -q --no-libcall --compress=$z -o $m-$z ./calltree $m >/dev/null 2>&1
		check "$m, $z" $m-$z
		check_print "$m, $z" $m-$z
		check_depths "$m" $m-$z $z
		is "$(print_counts $m-$z)" "$(calltree_want $m)" "$m, $z: print has a line for each call"
		is "$(kd_counts $m-$z)" "$(calltree_want $m)" "$m, $z: kd counts what the program did"
	done
	"$KTRACE" record -q --no-libcall --compress=$z --flight -b 4096 -n 4 -o fl-$z ./calltree recurse 3000 >/dev/null 2>&1
	check "flight recorder, 4 x 4 KiB, $z" fl-$z
	check_print "flight recorder, $z" fl-$z
	like slow.txt '^R 1 ' "flight, $z: the dump has gaps (overwritten sub-buffers) among the calls"
done
# records that are not calls (LOG2), with damage, lost and dropped records,
# in thread and shared streams: nothing for the runs, the same records
"$MKTRACE" --streams 3 --records 3000 --corrupt-record 1:2 --lost 0:1:5 --dropped 2:7 tr >/dev/null 2>&1
check "mktrace, 3 thread streams of LOG2 records, damaged" tr
like slow.txt '^R 1 ' "... the dump has its gaps"
# --time-range over events: the middle third of their times, sub-buffers before
# and after it skipped; the gaps (lost, dropped, corrupt) are still shown
"$KTRACE" print -C tr 2>/dev/null | tail -n +2 >ev.csv
set -- $(awk -F, 'NR == 1 || $1 < lo { lo = $1 } $1 > hi { hi = $1 }
	END { printf "%.0f %.0f\n", lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3 }' ev.csv)
awk -F, -v f="$1" -v t="$2" '$8 == "ktrace" || ($1 >= f && $1 <= t)' ev.csv >want.csv
"$KTRACE" print -C --time-range "$1~$2" tr 2>/dev/null | tail -n +2 >got.csv
ok "$(awk -F, '$8 != "ktrace"' want.csv | grep -q . && cmp -s want.csv got.csv; echo $?)" \
	"mktrace: print --time-range (the middle third) gives the records inside it and every gap ($(lines want.csv) of $(lines ev.csv) rows)"
"$DUMP" window "$1" "$2" tr >win.txt 2>win.err
ok "$(grep -q '^skipped [1-9]' win.err; echo $?)" "... the reader skipped sub-buffers before and after it ($(cat win.err))"
for side in "<" ">"; do
	all=$(awk -F, -v f="$1" -v t="$2" '$8 != "ktrace" && ("'"$side"'" == "<" ? $1 < f : $1 > t)' ev.csv | wc -l)
	win=$(awk -v f="$1" -v t="$2" '$1 == "R" && $2 == 0 && ("'"$side"'" == "<" ? $4 < f : $4 > t)' win.txt | wc -l)
	ok "$([ "$win" -lt "$all" ]; echo $?)" "... records on the $side side of it: $win read of $all"
done
"$MKTRACE" --kind shared --records 3000 shared >/dev/null 2>&1
check "mktrace, a shared stream of LOG2 records" shared
done_testing
