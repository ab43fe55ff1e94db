#!/bin/sh
# tests/cli_options.sh - every command's options are a table of
# cli/options.h: --help, the man page and the parser name the same
# options.  For each command (and each mode of kft: --kernel, --tracefs,
# --boot, which have options of their own): every option line of --help
# has the one format (the text at one column, 26 but for read's 28 and
# lkst's 25, or on the next line); every option it lists is in
# docs/man/ktrace-CMD.1 with the same short letter, and the man page names
# no "-x, --name" pair that the command's helps do not; the parser knows
# every listed option, long and short (no "unknown option", "needs a
# value" or "takes no value").
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

# COMMAND or COMMAND/MODE (MODE: the first argument, a mode with its own table)
CMDS="locks memview info graph timeline addr2sym print kd read lkst ctl export kft kft/--kernel kft/--tracefs kft/--boot"
cd "$T" || exit 1 # no ktrace.data here: a parsed command line ends in "no trace"

# "SHORT NAME ARG" per option line of the help in $1 ("-" for none), or
# "BADCOL LINE" for a line whose text is not at column $2.
help_options() {
	awk -v col="$2" '/^  -[^ -], --[a-z]|^      --[a-z]/ {
		line = $0; sub(/^ +/, "", line); n = split(line, part, /  +/); left = part[1]
		if (n > 1 && (substr($0, col - 2, 2) != "  " || substr($0, col, 1) == " "))
			print "BADCOL " $0
		short = "-"
		if (left ~ /^-[^-],/) { short = substr(left, 2, 1); left = substr(left, 5) }
		name = substr(left, 3); arg = "-"
		if (match(name, /[ []/)) { arg = substr(name, RSTART); name = substr(name, 1, RSTART - 1); sub(/^ /, "", arg) }
		print short, name, arg
	}' "$1"
}

# the "-x, --name" pairs of the man page of $1, as "x name"
# (".BR \-x ", " \-\-name" or ".BI "\-x, \-\-name "")
man_pairs() {
	sed 's/\\-/-/g' "$KTRACE_SRC/docs/man/ktrace-$1.1" |
		grep -oE -- '-[A-Za-z](, | ", " )--[a-z][a-z-]*' | sed -E 's/^-(.)(, | ", " )--/\1 /' | sort -u
}

rm -f "$T"/pairs-*
for spec in $CMDS; do
	c=${spec%%/*}
	mode=
	[ "$c" != "$spec" ] && mode=${spec#*/}
	man=$KTRACE_SRC/docs/man/ktrace-$c.1
	run "$KTRACE" "$c" $mode --help
	is "$rc" 0 "$c $mode --help: exit 0"
	col=26
	[ "$c" = read ] && col=28
	[ "$c" = lkst ] && col=25
	help_options "$T/out" $col >"$T/opts"
	unlike "$T/opts" '^BADCOL' "$c $mode --help: every option's text at column $col"
	sed 's/\\-/-/g' "$man" >"$T/man"
	awk '$1 != "-" { print $1, $2 }' "$T/opts" >>"$T/pairs-$c"
	while read -r short name arg; do
		[ "$short" = BADCOL ] && continue
		grep -Eq -- "--$name([^a-z-]|\$)" "$T/man"
		ok $? "$c --$name: in ktrace-$c.1"
		if [ "$short" != - ]; then
			grep -Eq -- "-$short(, | \", \" )--$name([^a-z-]|\$)" "$T/man"
			ok $? "$c --$name: ktrace-$c.1 names it -$short too"
		fi
		func=
		[ "$c" = graph ] && func=main
		[ "$c" = read ] && func="a b"
		[ "$c" = lkst ] && func=frob
		# kft's modes would run (trace the kernel, read /proc/kft): the
		# option, then --help, which ends the command at once
		[ -n "$mode" ] && func=--help
		val=
		case $arg in -|\[*) ;; *) val=1 ;; esac
		"$KTRACE" "$c" $mode "--$name${val:+=$val}" $func >/dev/null 2>"$T/err" </dev/null
		unlike "$T/err" "unknown option|needs a value|takes no value" "$c $mode: the parser knows --$name"
		if [ "$short" != - ]; then
			"$KTRACE" "$c" $mode "-$short" $val $func >/dev/null 2>"$T/err" </dev/null
			unlike "$T/err" "unknown option|needs a value|takes no value" "$c $mode: the parser knows -$short"
		fi
	done <"$T/opts"
done

# the man page names no "-x, --name" pair that the command's helps (all
# its modes') do not
for c in $(echo "$CMDS" | tr ' ' '\n' | sed 's,/.*,,' | sort -u); do
	man_pairs "$c" >"$T/manpairs"
	sort -u "$T/pairs-$c" >"$T/helppairs"
	extra=$(comm -23 "$T/manpairs" "$T/helppairs" | tr '\n' ';')
	is "$extra" "" "$c: the man page's -x, --name pairs are those of --help"
done

done_testing
