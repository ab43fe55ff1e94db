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
#   tap_results FILE [PREFIX]
#                         a test per line of FILE, a checker's report ("ok WHAT"
#                         or "FAIL WHAT"; any other line, a traceback, fails)
#   san_runtime [LIB]     the sanitizer runtimes LIB (default libktrace.so.0)
#                         is linked with, ':'-separated ("" for a plain build)
#   san_preload [LIB]     san=$(san_runtime); export LD_PRELOAD=$san (and ASAN_OPTIONS
#                         detect_leaks=0) when there are any: an uninstrumented
#                         program loading a sanitized libktrace needs them first
#   done_testing          print the plan, clean up, exit 0 only if all passed
#   kd_counts DIR [PREFIXES]
#                         "name count" per function of `ktrace kd --format=csv
#                         DIR`, sorted (only names starting with one of the
#                         space-separated PREFIXES if given)
#   uftrace_counts DIR [PREFIXES]
#                         the same from `uftrace report -f call` of uftrace's
#                         DIR (kernel events left out)
#   calltree_want MODE    "name count" per function, sorted, that
#                         tests/kft/calltree.c makes in MODE (tree, "threads
#                         4", signal, longjmp, fork, exit, "recurse 50"):
#                         the answer written from its source
#   hook_flags BUILD      the compiler flags of a function-tracing build named
#                         KIND-OPT (KIND inst, pg or fentry; OPT O0, O2...):
#                         "-OPT -finstrument-functions", "-OPT -pg",
#                         "-OPT -pg -mfentry"; KFT_BUILDS lists the five builds
#                         the process-life and control-flow tests use

: "${KTRACE_BUILD:?KTRACE_BUILD must name the build directory (make test sets it)}"
KTRACE=$KTRACE_BUILD/ktrace
MKTRACE=$KTRACE_BUILD/tests/helpers/mktrace
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-test-XXXXXX")
tap_n=0
tap_failed=0

# A test whose header says "test: serial" arms the host kernel's tracing:
# prove runs such tests of one `make test` one after another (Makefile),
# and this lock does the same across checkouts tested at once on one
# machine (root only: /run is root's, so the lock file is nobody else's;
# held until the test and what it started exit: a process left running
# that holds it makes the next wait give up after 300 s, saying so).
if [ "$(id -u)" -eq 0 ] && grep -q '^# test: serial' "$0" 2>/dev/null && [ -d /run ] &&
	command -v flock >/dev/null 2>&1; then
	exec 9>>/run/ktrace-test-tracefs.lock
	flock -w 300 9 || echo "# /run/ktrace-test-tracefs.lock still held after 300 s: going on"
fi

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

tap_results() {
	while read -r tap_res tap_what; do
		case $tap_res in
		ok) ok 0 "${2:+$2: }$tap_what" ;;
		FAIL) ok 1 "${2:+$2: }$tap_what" ;;
		*) ok 1 "${2:+$2: }python3: $tap_res $tap_what" ;;
		esac
	done <"$1"
}

san_runtime() {
	ldd "${1:-$KTRACE_BUILD/libktrace.so.0}" 2>/dev/null |
		awk '$1 ~ /lib(asan|ubsan)/ { printf "%s%s", sep, $3; sep = ":" }'
}

san_preload() {
	san=$(san_runtime "$@")
	if [ -n "$san" ]; then
		export LD_PRELOAD="$san"
		export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
	fi
}

KFT_BUILDS="inst-O0 inst-O2 pg-O0 pg-O2 fentry-O2"
kd_counts() {
	"$KTRACE" kd --format=csv "$1" | python3 -c '
import csv, sys
keep = sys.argv[1].split() if len(sys.argv) > 1 and sys.argv[1] else None
rows = [(r["name"], r["count"]) for r in csv.DictReader(sys.stdin)]
for n, c in sorted(rows):
    if keep is None or any(n.startswith(k) for k in keep):
        print(n, c)' "${2:-}"
}

uftrace_counts() {
	uftrace report -d "$1" -f call --no-pager 2>/dev/null | python3 -c '
import sys
keep = sys.argv[1].split() if len(sys.argv) > 1 and sys.argv[1] else None
rows = []
for line in sys.stdin.read().splitlines()[2:]:
    parts = line.split(None, 1)
    if len(parts) == 2 and not parts[1].startswith("linux:"):
        rows.append((parts[1].strip(), parts[0]))
for n, c in sorted(rows):
    if keep is None or any(n.startswith(k) for k in keep):
        print(n, c)' "${2:-}"
}

calltree_want() {
	case "$1" in
	tree) printf 'fast 4\nmain 1\nouter 1\nrun_tree 1\nslow 1\n' ;;
	"threads 4") printf 'fast 400\nmain 1\nworker 4\n' ;;
	signal) printf 'fast 2\nhandler 1\nin_handler 1\nmain 1\nslow 1\n' ;;
	longjmp) printf 'deep 1\ndeeper 1\nfast 2\njumper 1\nmain 1\n' ;;
	# main twice: the child returns from the main() it inherited (as uftrace counts)
	fork) printf 'child_work 1\nfast 2\nmain 2\nparent_work 1\n' ;;
	exit) printf 'exit_inside 1\nexiter 1\nfast 1\nmain 1\n' ;;
	"recurse 50") printf 'main 1\nrecurse 50\n' ;;
	esac
}

hook_flags() {
	case $1 in
	inst-*) echo "-${1#*-} -finstrument-functions" ;;
	pg-*) echo "-${1#*-} -pg" ;;
	fentry-*) echo "-${1#*-} -pg -mfentry" ;;
	esac
}

done_testing() {
	echo "1..$tap_n"
	rm -rf "$T"
	[ "$tap_failed" -eq 0 ]
	exit $?
}
