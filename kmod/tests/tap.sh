#!/bin/sh
# kmod/tests/tap.sh - the TAP helpers of the VM suites (busybox sh), sourced
# as /tap.sh by suite.sh and suite_kboot.sh in the test VM's initramfs
# (run-vm.sh copies it).  Tests are numbered as they run; $failed counts
# the failures.  (suite_crash.sh prints unnumbered lines instead: its tests
# span several boots and the host numbers them.)
#
#   ok STATUS DESCRIPTION          passes when STATUS is 0
#   is GOT EXPECTED DESCRIPTION    string equality
#   isnt GOT UNEXPECTED DESCRIPTION
#   cmp_ok A OP B DESCRIPTION      OP: -gt -ge -lt -le -eq
#   diag TEXT                      a "# TEXT" line
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
is() {
	if [ "$1" = "$2" ]; then ok 0 "$3"; else
		ok 1 "$3"
		echo "#   got '$1', expected '$2'"
	fi
}
isnt() {
	if [ "$1" != "$2" ]; then ok 0 "$3"; else
		ok 1 "$3"
		echo "#   got '$1'"
	fi
}
cmp_ok() {
	if [ "$1" "$2" "$3" ] 2>/dev/null; then ok 0 "$4"; else
		ok 1 "$4"
		echo "#   '$1' $2 '$3' is false"
	fi
}
diag() { echo "# $*"; }
