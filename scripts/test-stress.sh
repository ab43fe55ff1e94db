#!/bin/sh
# scripts/test-stress.sh - run the test suite while another job keeps every
# CPU busy (`make test-stress`): no test may depend on how busy the machine
# is (a tolerance on a measured time, a fixed wait for something to start),
# and this is how that is checked.
#
#   scripts/test-stress.sh [RUNS] [MAKE ARGS...]
#
# The load is a parallel build of ktrace itself, with as many jobs as there
# are CPUs, in a scratch folder, again and again (compilers, the linker,
# fork, disk: what a developer's machine runs beside its tests), started
# before the first test and stopped after the last.  RUNS (default 1)
# runs of `make test MAKE ARGS...` one after the other; the script stops at
# the first failed run and exits with its status, else 0.  Each run's prove
# summary and the load's build count are printed.
set -eu
cd "$(dirname "$0")/.."

runs=${1:-1}
[ $# -gt 0 ] && shift
case "$runs" in '' | *[!0-9]*)
	echo "test-stress.sh: RUNS must be a number, not '$runs'" >&2; exit 2 ;;
esac
jobs=$(nproc)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-stress.XXXXXXXX")

make all "$@" >/dev/null # the tests' own build first, unloaded

# the load in a session of its own, so that stopping it stops its compilers
setsid sh -c '
	n=0
	while :; do
		make -s -j"$1" B="$2/build" all >/dev/null 2>&1 || true
		rm -rf "$2/build"
		n=$((n + 1))
		echo "$n" > "$2/builds"
	done' load "$jobs" "$scratch" &
load=$!
stop_load() {
	kill -TERM -- "-$load" 2>/dev/null || true
	wait "$load" 2>/dev/null || true
	rm -rf "$scratch"
}
trap stop_load EXIT
trap 'exit 130' INT TERM

rc=0
i=1
while [ "$i" -le "$runs" ]; do
	echo "test-stress.sh: run $i of $runs under load ($jobs build jobs)"
	if ! make test "$@"; then
		rc=1
		echo "test-stress.sh: run $i of $runs FAILED under load" >&2
		break
	fi
	i=$((i + 1))
done
echo "test-stress.sh: $((i - 1)) of $runs runs passed; $(cat "$scratch/builds" 2>/dev/null || echo 0) load builds finished meanwhile"
exit "$rc"
