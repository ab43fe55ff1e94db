# tests/helpers/tap.sh - TAP helpers for the shell tests (sourced).
#
# Sets KTRACE (the command), MKTRACE (the trace generator) and T (a
# temporary directory removed by done_testing).  Functions:
#   run CMD...            run CMD; stdout in $T/out, stderr in $T/err, status in $rc
#   ok STATUS DESC        a test passing when STATUS is 0
#   is GOT WANT DESC      string equality
#   like FILE REGEX DESC  FILE has a line matching the extended REGEX
#   unlike FILE REGEX DESC
#   lines FILE            number of lines of FILE
#   done_testing          print the plan, clean up, exit 0 only if all passed

: "${KTRACE_BUILD:?KTRACE_BUILD must name the build directory (make test sets it)}"
KTRACE=$KTRACE_BUILD/ktrace
MKTRACE=$KTRACE_BUILD/tests/helpers/mktrace
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-test-XXXXXX")
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}

is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got '$1', expected '$2'" >&2
	fi
}

like() {
	if grep -Eq -- "$2" "$1"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   no line of $1 matches /$2/:" >&2
		sed 's/^/#     /' "$1" | head -5 >&2
	fi
}

unlike() {
	if grep -Eq -- "$2" "$1"; then
		ok 1 "$3"
		echo "#   a line of $1 matches /$2/" >&2
	else
		ok 0 "$3"
	fi
}

lines() {
	wc -l <"$1" | tr -d ' '
}

done_testing() {
	echo "1..$tap_n"
	rm -rf "$T"
	[ "$tap_failed" -eq 0 ]
	exit $?
}
