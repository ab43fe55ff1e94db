#!/bin/sh
# kmod/tests/vm-init.sh - /init of the test VM's initramfs (built by
# kmod/tests/run-vm.sh).  Mounts the pseudo file systems, runs the test
# suite (ktrace.mode=test on the kernel command line) or the benchmark
# (ktrace.mode=bench), sends the results to the second serial port
# (/dev/ttyS1, a file on the host) and powers the VM off.  Progress and
# kernel messages go to the console (ttyS0).
export PATH=/bin:/sbin
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# mode=755: let non-root users reach our files, so their own modes are tested.
mount -t debugfs -o mode=755 debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /root && chmod 700 /root
echo "KTRACE-VM-START $(uname -r) cpus=$(nproc)"

mode=test
for w in $(cat /proc/cmdline); do
	case "$w" in ktrace.mode=*) mode=${w#ktrace.mode=} ;; esac
done

out=/dev/ttyS1
[ -c "$out" ] || out=/dev/console
stty -F "$out" raw -echo 2>/dev/null
if [ "$mode" = crash ]; then
	# Crash extraction (run-vm.sh crash): one boot of many in the same qemu
	# process; suite_crash.sh says whether to panic, reboot or finish.
	sh /suite_crash.sh > /tmp/results.txt 2> /tmp/suite.err
	{
		echo "KTRACE-RESULTS-BEGIN"
		grep -v '^KTRACE-CRASH-' /tmp/results.txt
		echo "KTRACE-RESULTS-END"
		grep '^KTRACE-CRASH-' /tmp/results.txt
		echo "KTRACE-STDERR-BEGIN"
		cat /tmp/suite.err
		echo "KTRACE-STDERR-END"
	} > "$out" # the close waits until the serial port sent it all
	next=$(sed -n 's/^KTRACE-CRASH-NEXT [0-9]* //p' /tmp/results.txt)
	case "$next" in
	panic) echo c > /proc/sysrq-trigger ;;
	reboot) reboot -f ;;
	tear) echo panic > /sys/kernel/debug/ktrace/crash/tear ;; # crash_test=1
	esac
	{
		echo "KTRACE-DMESG-BEGIN"
		dmesg
		echo "KTRACE-DMESG-END"
		echo "KTRACE-VM-DONE rc=0"
	} > "$out"
	poweroff -f
fi
# The output also goes to the console as it comes, so a hang shows where.
case "$mode" in
bench) { sh /bench.sh 2>&1; echo $? > /tmp/rc; } | tee /tmp/results.txt ;;
boot) { sh /suite_kboot.sh 2>/tmp/suite.err; echo $? > /tmp/rc; } | tee /tmp/results.txt ;; # boot-time KFT
hooks) { KTRACE_SUITE_ONLY=hooks sh /suite.sh 2>/tmp/suite.err; echo $? > /tmp/rc; } | tee /tmp/results.txt ;;
exc) { KTRACE_SUITE_ONLY=exc sh /suite.sh 2>/tmp/suite.err; echo $? > /tmp/rc; } | tee /tmp/results.txt ;;
locks) { KTRACE_SUITE_ONLY=locks sh /suite.sh 2>/tmp/suite.err; echo $? > /tmp/rc; } | tee /tmp/results.txt ;;
*) { sh /suite.sh 2>/tmp/suite.err; echo $? > /tmp/rc; } | tee /tmp/results.txt ;;
esac
read rc < /tmp/rc
{
	echo "KTRACE-RESULTS-BEGIN"
	cat /tmp/results.txt
	echo "KTRACE-RESULTS-END"
	echo "KTRACE-STDERR-BEGIN"
	cat /tmp/suite.err 2>/dev/null
	echo "KTRACE-STDERR-END"
	echo "KTRACE-DMESG-BEGIN"
	dmesg
	echo "KTRACE-DMESG-END"
	echo "KTRACE-VM-DONE rc=$rc"
} > "$out"
sync
echo "KTRACE-VM-DONE rc=$rc"
poweroff -f
