#!/bin/sh
# tests/hostile_dir.sh - issue 25 items 17 and 18: hostile or damaged trace
# directories.  Traces are handed around (bug reports, CI artifacts), so a
# reader must not be turned against the machine that reads them.
#
# Item 17.  A small function trace is recorded, then, one at a time, every
# file name a reader opens in DIR is replaced by: a symbolic link to a
# root-only file (mode 0600, a distinctive content), a link to a directory,
# a link to /dev/zero, a FIFO, and a device node (mknod c 1 5, /dev/zero's
# numbers).  Every reading command runs on it under `timeout`: info, print,
# kd, kd -c, addr2sym, graph, export in each format, timeline, locks,
# memview, ctl status, ctl kft status, read DIR DST and read --recover.  Checked for each
# planted file: no command hangs (timeout's 124), the root-only file's
# content is in no output and in nothing `read` wrote, every command exits
# non-zero, and every command's stderr names the planted file on exactly
# one line (a file that is there but is not a regular file is an error even
# where the file is optional: it is never opened as something else).  The
# same shapes planted as the program's `map` path (the ELF file symbols come
# from): nothing hangs, the secret is never printed, and one warning names
# the path ("not a regular file"; a link to a regular file is followed, as
# /lib64/ld-linux-x86-64.so.2 must be: the secret file is then "not an ELF
# file").
#
# Item 18.  Metadata of 10^6 `stream` lines (all naming trace0, and each
# naming its own missing file) and of 10^6 `map` lines: each is refused
# with one line per kind of bad line naming DIR/metadata:LINE, and info and
# print stay under 100 MB of maximum RSS (/usr/bin/time's %M; 400 MB in a
# sanitizer build, whose shadow memory and quarantine are not the
# reader's) and under a generous 60 s timeout (a size bound, not a speed
# test).
#
# Needs root (mknod; the secret must be unreadable to others) and
# /usr/bin/time; without them it says so and checks nothing.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"
san_preload

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/bin/time ]; then
	echo "# needs root and /usr/bin/time (apt-get install time): nothing checked"
	ok 0 "skipped: not root or no /usr/bin/time"
	done_testing
fi

cd "$T" || exit 1
cc -O1 -g -finstrument-functions -o shapes "$KTRACE_SRC/tests/kft/shapes.c" || exit 1
"$KTRACE" record -o "$T/good" -- ./shapes >/dev/null 2>"$T/rec.err"
ok $? "a small function trace recorded"
[ -s "$T/good/callsites" ] && [ -s "$T/good/kft-status" ] && [ -s "$T/good/trace0" ]
ok $? "... with callsites, kft-status and trace0"
# the optional files a trace may hold: made here so their names are planted too
: >"$T/good/kallsyms"
echo 0 >"$T/good/dropped"

SECRET="ktrace-hostile-secret-$$-7f3a9c"
mkdir -m 700 "$T/rootonly" "$T/adir"
printf '%s\n%s\n' "$SECRET" "$SECRET" >"$T/rootonly/secret"
chmod 600 "$T/rootonly/secret"

TO=${KTRACE_HOSTILE_TIMEOUT:-20}
# tk NAME CMD...: run CMD under timeout; out/err in $T/o.NAME and $T/e.NAME
tk() {
	n=$1
	shift
	timeout -k 5 "$TO" "$@" >"$T/o.$n" 2>"$T/e.$n" </dev/null
	echo $? >"$T/rc.$n"
}
# every reading command on $1 (a trace directory)
readers() {
	d=$1
	rm -rf "$T/dst" "$T/ctf"
	tk info "$KTRACE" info "$d"
	tk print "$KTRACE" print "$d"
	tk kd "$KTRACE" kd "$d"
	tk kdc "$KTRACE" kd -c "$d"
	tk a2s "$KTRACE" addr2sym -l "$d"
	tk graph "$KTRACE" graph main "$d"
	for f in perfetto json folded csv; do
		tk "exp_$f" "$KTRACE" export --format=$f "$d"
	done
	tk exp_ctf "$KTRACE" export --format=ctf -o "$T/ctf" "$d"
	tk timeline "$KTRACE" timeline "$d"
	tk locks "$KTRACE" locks "$d"
	tk memview "$KTRACE" memview "$d"
	tk ctl "$KTRACE" ctl "$d" status
	tk ctlkft "$KTRACE" ctl "$d" kft status
	tk read "$KTRACE" read "$d" "$T/dst"
	tk recover "$KTRACE" read --recover "$d"
}
CMDS="info print kd kdc a2s graph exp_perfetto exp_json exp_folded exp_csv exp_ctf timeline locks memview ctl ctlkft read recover"
# commands that read the map lines (symbols)
SYMCMDS="print kd kdc a2s graph exp_perfetto exp_json exp_folded exp_csv exp_ctf"

# plant WHAT at path $1
plant() {
	rm -rf "$1"
	case $2 in
	link-secret) ln -s "$T/rootonly/secret" "$1" ;;
	link-dir) ln -s "$T/adir" "$1" ;;
	link-zero) ln -s /dev/zero "$1" ;;
	fifo) mkfifo "$1" ;;
	device) mknod "$1" c 1 5 ;;
	esac
}
SHAPES="link-secret link-dir link-zero fifo device"

# Every command run: none hung, none showed the secret (checked for all)
# (a list of the offenders is printed on failure).
nohang_nosecret() { # $1 label, $2 commands
	hung= leaked=
	for c in $2; do
		[ "$(cat "$T/rc.$c")" -eq 124 ] || [ "$(cat "$T/rc.$c")" -eq 137 ] && hung="$hung $c"
		grep -qs -- "$SECRET" "$T/o.$c" "$T/e.$c" && leaked="$leaked $c"
	done
	if [ -d "$T/dst" ] && grep -rqs -- "$SECRET" "$T/dst"; then leaked="$leaked read(DST)"; fi
	if [ -d "$T/ctf" ] && grep -rqs -- "$SECRET" "$T/ctf"; then leaked="$leaked ctf(OUT)"; fi
	is "${hung:-none}" none "$1: no command hangs"
	is "${leaked:-none}" none "$1: the root-only file's content is read by no command"
}

# kernel/metadata: a kernel sub-trace's file (a directory made for it)
NAMES="metadata threads callsites kft-status kft control state dropped trace0 kallsyms session kernel kernel/metadata"
for name in $NAMES; do
	for shape in $SHAPES; do
		rm -rf "$T/h"
		cp -a "$T/good" "$T/h"
		mkdir -p "$(dirname "$T/h/$name")"
		plant "$T/h/$name" $shape
		readers "$T/h"
		nohang_nosecret "$name as $shape" "$CMDS"
		zero= notone=
		for c in $CMDS; do
			[ "$(cat "$T/rc.$c")" -ne 0 ] || zero="$zero $c"
			[ "$(grep -c -- "$T/h/$name\b" "$T/e.$c")" -eq 1 ] || notone="$notone $c($(grep -c -- "$T/h/$name\b" "$T/e.$c"))"
		done
		is "${zero:-none}" none "$name as $shape: every command exits non-zero"
		is "${notone:-none}" none "$name as $shape: every command names $name on exactly one line"
		if [ -n "$notone" ]; then
			for c in $notone; do
				c=${c%%(*}
				sed "s/^/#   $c: /" "$T/e.$c" | head -4 >&2
			done
		fi
	done
done
like "$T/e.info" "^ktrace info: $T/h/kernel/metadata: not a regular file \(a FIFO, device or socket\): not reading it$" \
	"the refusal says why (the last one planted: a device node as kernel/metadata)"

# The program's map path (symbols): shapes planted as the file the map lines name.
for shape in $SHAPES; do
	rm -rf "$T/h"
	cp -a "$T/good" "$T/h"
	plant "$T/mapobj" $shape
	sed -i "s# $T/shapes\$# $T/mapobj#" "$T/h/metadata"
	readers "$T/h"
	nohang_nosecret "map path as $shape" "$CMDS"
	notone=
	for c in $SYMCMDS; do
		[ "$(grep -c -- "$T/mapobj" "$T/e.$c")" -eq 1 ] || notone="$notone $c($(grep -c -- "$T/mapobj" "$T/e.$c"))"
	done
	is "${notone:-none}" none "map path as $shape: each symbolizing command warns once naming it"
	case $shape in
	link-secret) like "$T/e.kd" "$T/mapobj: warning: not an ELF file" "... a link to a regular file is followed: not ELF" ;;
	link-dir) like "$T/e.kd" "$T/mapobj: warning: is a directory" "... refused: a directory" ;;
	*) like "$T/e.kd" "$T/mapobj: warning: not a regular file" "... refused: not a regular file" ;;
	esac
done

# ---- item 18: sizes in the metadata are bounded before anything is allocated
# mbig NAME KIND: DIR $T/NAME with 10^6 lines of KIND appended to the metadata
mbig() {
	rm -rf "$T/$1"
	cp -a "$T/good" "$T/$1"
	awk -v kind="$2" 'BEGIN {
		for (i = 0; i < 1000000; i++) {
			if (kind == "stream-same") printf "stream %d thread trace0\n", i
			else if (kind == "stream-own") printf "stream %d thread trace%d\n", i, i
			else printf "map %x %x 0 - /nonexistent/lib%d.so\n", 268435456 + i * 4096, 268435456 + i * 4096 + 2048, i
		}
	}' >>"$T/$1/metadata"
}
last=$(($(wc -l <"$T/good/metadata") + 1000000))
maxkb=100000
[ -n "$KTRACE_SAN" ] && maxkb=400000
for kind in stream-same stream-own map; do
	mbig big "$kind"
	for c in info print; do
		timeout -k 5 60 /usr/bin/time -f '%M' -o "$T/rss" "$KTRACE" $c "$T/big" >"$T/out" 2>"$T/err"
		rc=$?
		rss=$(tail -1 "$T/rss")
		ok "$([ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; echo $?)" "10^6 $kind lines, $c: finishes (rc $rc)"
		ok "$([ "$rc" -ne 0 ]; echo $?)" "... refused: non-zero exit"
		ok "$([ "${rss:-999999999}" -lt $maxkb ]; echo $?)" "... in under $((maxkb / 1000)) MB (max RSS $rss KB)"
		n=$(grep -c "$T/big/metadata:[0-9]" "$T/err")
		ok "$([ "$n" -ge 1 ] && [ "$n" -le 2 ]; echo $?)" "... one line per kind of bad line naming metadata:LINE ($n)"
		[ "$n" -ge 1 ] && [ "$n" -le 2 ] || head -5 "$T/err" | sed 's/^/#   /' >&2
		like "$T/err" "$T/big/metadata:[0-9]+-$last: " "... the refused lines given as one range, to the last"
		ok "$([ "$(lines "$T/err")" -le 300 ]; echo $?)" "... a bounded number of lines ($(lines "$T/err"))"
	done
done

done_testing
