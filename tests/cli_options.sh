#!/bin/sh
# tests/cli_options.sh - the commands whose options are a table of
# cli/options.h: --help, the man page and the parser name the same
# options.  For each command: every option line of --help has the one
# format (the text at one column, 26 but for read's 28 and lkst's 25, or
# on the next line); every option it lists is in docs/man/ktrace-CMD.1 with the same
# short letter, and the man page names no "-x, --name" pair that --help
# does not; the parser knows every listed option, long and short (no
# "unknown option", "needs a value" or "takes no value").  Then export's
# selection lines (CLI_SELECT_HELP: cmd_export.c is not on the table yet)
# are those of the shared table.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

CMDS="locks memview info graph timeline addr2sym print kd read lkst"
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

for c in $CMDS; do
	man=$KTRACE_SRC/docs/man/ktrace-$c.1
	run "$KTRACE" "$c" --help
	is "$rc" 0 "$c --help: exit 0"
	col=26
	[ "$c" = read ] && col=28
	[ "$c" = lkst ] && col=25
	help_options "$T/out" $col >"$T/opts"
	unlike "$T/opts" '^BADCOL' "$c --help: every option's text at column $col"
	sed 's/\\-/-/g' "$man" >"$T/man"
	# the "-x, --name" pairs of the man page, as "x name"
	# (".BR \-x ", " \-\-name" or ".BI "\-x, \-\-name "")
	grep -oE -- '-[A-Za-z](, | ", " )--[a-z][a-z-]*' "$T/man" | sed -E 's/^-(.)(, | ", " )--/\1 /' |
		sort -u >"$T/manpairs"
	awk '$1 != "-" { print $1, $2 }' "$T/opts" | sort -u >"$T/helppairs"
	extra=$(comm -23 "$T/manpairs" "$T/helppairs" | tr '\n' ';')
	is "$extra" "" "$c: the man page's -x, --name pairs are those of --help"
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
		val=
		case $arg in -|\[*) ;; *) val=1 ;; esac
		"$KTRACE" "$c" "--$name${val:+=$val}" $func >/dev/null 2>"$T/err" </dev/null
		unlike "$T/err" "unknown option|needs a value|takes no value" "$c: the parser knows --$name"
		if [ "$short" != - ]; then
			"$KTRACE" "$c" "-$short" $val $func >/dev/null 2>"$T/err" </dev/null
			unlike "$T/err" "unknown option|needs a value|takes no value" "$c: the parser knows -$short"
		fi
	done <"$T/opts"
done

# export's selection lines (CLI_SELECT_HELP) are the shared table's (graph's)
run "$KTRACE" export --help
sed -n '/^  -p, --pid/,/--no-demangle/p' "$T/out" >"$T/export-sel"
run "$KTRACE" graph --help
sed -n '/^  -p, --pid/,/--no-demangle/p' "$T/out" >"$T/graph-sel"
cmp -s "$T/export-sel" "$T/graph-sel"
ok $? "export --help's selection options are cli_select_opts[]'s"
like "$T/graph-sel" "--no-demangle" "graph --help lists the selection options"

done_testing
