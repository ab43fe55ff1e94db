#!/bin/bash
# kmod/tests/run-vm.sh - `make test-kmod` (and, with "bench", `make
# bench-kmod`): build ktrace.ko against Debian's kernel, boot that kernel
# in qemu with a busybox initramfs, run the TAP suite (kmod/tests/suite.sh)
# or the benchmark (kmod/bench/bench.sh) inside, bring the output back
# over a second serial port, and judge it here.
#
#   kmod/tests/run-vm.sh [test|bench|boot|hooks|crash|exc|locks]
#
# boot: boot-time KFT (kmod/tests/suite_kboot.sh): the kernel boots with the
# parameters `ktrace kft --boot` prints for kmod/tests/kboot-seed.conf.
# hooks: kmod/tests/suite_hooks.sh alone.
# exc: kmod/tests/suite_exc.sh (exception entry/exit events) alone.
# locks: kmod/tests/suite_locks.sh alone (ktrace locks on contention events).
# crash: the crash-extraction test (kmod/tests/suite_crash.sh): one qemu
# process without -no-reboot, panic=1 and memmap=16M$0x38000000, panicked
# (sysrq-c) 20 times and rebooted twice by the guest, then panicked once with a
# record torn on purpose (crash_test=1); the judge accepts exactly the
# panics the guest announced and nothing else.
#
# Fails on: a build error or compiler warning, a failed TAP test (prove
# reads the guest's TAP), a kernel warning/BUG/oops in the guest's dmesg,
# and a timeout (KTRACE_VM_TIMEOUT seconds, default 420 for the suite: a
# hang guard, not a speed limit; the suite's guest runs about 200 s under
# TCG on a quiet 2-CPU host, and 270 s was reached on a loaded one).
#
# Environment: KTRACE_VM_BUILD (work dir, default build-kmod/ in the tree),
# KTRACE_VM_KTRACE (use this ktrace binary instead of building one),
# KTRACE_VM_ACCEL (kvm or tcg; default: try KVM if /dev/kvm is usable,
# fall back to TCG when the guest does not come up), KTRACE_VM_CPUS (2),
# KTRACE_VM_TCG_THREAD (single, the default, or multi; see tcg_opt below),
# KTRACE_VM_KERNEL (generic, the default: Debian's linux-image-amd64; or rt:
# its PREEMPT_RT kernel, linux-image-rt-amd64; `make test-kmod KERNEL=rt`).
# KTRACE_VM_IMAGE (a directory holding the kernel image package's files,
# boot/ and lib/modules/, e.g. from `dpkg-deb -x`: use that image instead
# of an installed one, whose /boot/vmlinuz other scripts would also pick).
# Installs (apt-get) that kernel's image and headers, qemu-system-x86,
# busybox-static and cpio if missing.
set -euo pipefail

MODE=${1:-test}
case "$MODE" in test | bench | boot | hooks | crash | exc | locks) ;; *)
	echo "usage: $0 [test|bench|boot|hooks|crash|exc|locks]" >&2
	exit 2
	;;
esac
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${KTRACE_VM_BUILD:-$SRC/build-kmod}
FLAVOUR=${KTRACE_VM_KERNEL:-generic}
case "$FLAVOUR" in
generic) W=$B/vm KPKG=amd64 ;;
rt) W=$B/vm-rt KPKG=rt-amd64 ;;
*)
	echo "run-vm: KTRACE_VM_KERNEL must be generic or rt, not '$FLAVOUR'" >&2
	exit 2
	;;
esac
CPUS=${KTRACE_VM_CPUS:-2}
if [ "$MODE" = bench ]; then TIMEOUT=${KTRACE_VM_TIMEOUT:-900}; else TIMEOUT=${KTRACE_VM_TIMEOUT:-420}; fi
[ "$MODE" = crash ] && TIMEOUT=${KTRACE_VM_TIMEOUT:-900} # 23 boots of 15-20 s under TCG (374 s on -rt); each boot has its own guard (panic_watch)
PANICS=${KTRACE_VM_CRASH_PANICS:-20} # crash: panic trials (then 2 reboot trials)
mkdir -p "$W"
log() { echo "run-vm: $*" >&2; }
die() {
	echo "run-vm: error: $*" >&2
	exit 1
}
t0=$(date +%s)

# ---------------------------------------------------------------- packages
missing=""
IMG=${KTRACE_VM_IMAGE:-}
pkgs="linux-headers-$KPKG qemu-system-x86 busybox-static cpio"
[ -n "$IMG" ] || pkgs="linux-image-$KPKG $pkgs"
for p in $pkgs; do
	dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root or install them)"
	log "installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing > "$W/apt.log" 2>&1 ||
		die "apt-get install failed, see $W/apt.log"
fi

# ---------------------------------------------------------------- kernel
# The newest installed kernel of the flavour (the ABI name changes with
# security updates): VER-amd64 for generic, VER-rt-amd64 for rt.
KVER=""
for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V); do
	v=$(basename "$(dirname "$d")")
	case "$v" in *-rt-amd64) f=rt ;; *-amd64) f=generic ;; *) continue ;; esac
	[ "$f" = "$FLAVOUR" ] && [ -f "$IMG/boot/vmlinuz-$v" ] && KVER=$v
done
[ -n "$KVER" ] || die "no $FLAVOUR kernel with both $IMG/boot/vmlinuz-VER and /lib/modules/VER/build"
KDIR=/lib/modules/$KVER/build
VMLINUX=$W/vmlinux-$KVER
if [ ! -s "$VMLINUX" ] || [ "$IMG/boot/vmlinuz-$KVER" -nt "$VMLINUX" ]; then
	# The uncompressed ELF boots directly (PVH) and skips decompression.
	log "extracting vmlinux from $IMG/boot/vmlinuz-$KVER"
	rm -f "$VMLINUX"
	for magic in '\xfd\x37\x7a\x58\x5a\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08\x00:gzip -dc'; do
		pat=${magic%%:*}
		dec=${magic#*:}
		for off in $(LC_ALL=C grep -obUaP "$pat" "$IMG/boot/vmlinuz-$KVER" 2>/dev/null | cut -d: -f1); do
			tail -c +$((off + 1)) "$IMG/boot/vmlinuz-$KVER" | $dec > "$VMLINUX.tmp" 2>/dev/null || true
			if [ "$(head -c 4 "$VMLINUX.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				mv "$VMLINUX.tmp" "$VMLINUX"
				break 2
			fi
		done
	done
	rm -f "$VMLINUX.tmp"
	[ -s "$VMLINUX" ] || die "cannot extract vmlinux from $IMG/boot/vmlinuz-$KVER"
fi

# ---------------------------------------------------------------- build
# The modules build in a copy so the source tree stays clean.
KSRC=$W/kmod-src
mkdir -p "$KSRC/include/ktrace" "$KSRC/tests" "$KSRC/bench"
cp "$SRC"/kmod/Kbuild "$SRC"/kmod/*.c "$SRC"/kmod/*.h "$KSRC/"
cp "$SRC"/kmod/tests/ktrace_test_mod.c "$KSRC/tests/"
cp "$SRC"/kmod/bench/ktrace_bench_mod.c "$KSRC/bench/"
cp "$SRC"/include/ktrace/format.h "$KSRC/include/ktrace/"
cp "$SRC"/include/ktrace/lkst.h "$KSRC/include/ktrace/" # LKST event catalogue
cp "$SRC"/kmod/tests/ktrace_lkst_test_mod.c "$KSRC/tests/" # LKST test load
mkdir -p "$KSRC/kft" && cp "$SRC"/kft/*.c "$SRC"/kft/*.h "$KSRC/kft/" # KFT engine + parser, in ktrace.ko
log "building modules for $KVER"
if ! make -C "$KDIR" M="$KSRC" KTRACE_EXTRA=y modules > "$W/kbuild.log" 2>&1; then
	cat "$W/kbuild.log" >&2
	die "module build failed"
fi
if grep -E 'warning:|error:' "$W/kbuild.log" | grep -v 'Skipping BTF' > /dev/null; then
	grep -E 'warning:|error:' "$W/kbuild.log" >&2
	die "the module build has warnings"
fi
KTRACE_BIN=${KTRACE_VM_KTRACE:-}
if [ -z "$KTRACE_BIN" ]; then
	log "building ktrace (make B=$B) and the static helpers"
	make -s -C "$SRC" B="$B" CI="${CI:-}" "$B/ktrace" > "$W/make.log" 2>&1 || {
		cat "$W/make.log" >&2
		die "building ktrace failed"
	}
	KTRACE_BIN=$B/ktrace
fi
CFLAGS_HELPER="-std=gnu11 -O2 -Wall -Wextra ${CI:+-Werror} -static -I$SRC/include -I$SRC"
cc $CFLAGS_HELPER -o "$W/kthelper" "$SRC/kmod/tests/kthelper.c" "$SRC/kclient/relay.c" "$SRC/kclient/report.c" "$SRC/kclient/metadata.c" "$SRC/lib/safefile.c"
cc $CFLAGS_HELPER -o "$W/pingpong" "$SRC/kmod/bench/pingpong.c"
# LKST: the KEVENT checker and the syscall-heavy bench load
cc $CFLAGS_HELPER -o "$W/lkstcheck" "$SRC/kmod/tests/lkstcheck.c"
cc $CFLAGS_HELPER -o "$W/sysloop" "$SRC/kmod/bench/sysloop.c"
cc $CFLAGS_HELPER -o "$W/crashcheck" "$SRC/kmod/tests/crashcheck.c" # crash region checker
cc $CFLAGS_HELPER -o "$W/excprog" "$SRC/kmod/tests/excprog.c" # raises int3, #DE, #PF
cc $CFLAGS_HELPER -o "$W/memphases" "$SRC/tests/kernel/memphases.c" # memview: grow, hold, free

# ---------------------------------------------------------------- initramfs
R=$W/root
rm -rf "$R"
mkdir -p "$R"/{bin,sbin,proc,sys,dev,tmp,root,etc,lib/modules-ktrace}
cp /bin/busybox "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do
	[ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"
done
cp "$SRC/kmod/tests/vm-init.sh" "$R/init"
cp "$SRC/kmod/tests/suite.sh" "$R/suite.sh"
cp "$SRC/kmod/tests/tap.sh" "$R/tap.sh" # the suites' TAP helpers
cp "$SRC/kmod/bench/bench.sh" "$R/bench.sh"
chmod 755 "$R/init"
cp "$KSRC"/ktrace.ko "$KSRC"/ktrace_sample.ko "$KSRC"/ktrace_test.ko "$KSRC"/ktrace_bench.ko "$R/lib/modules-ktrace/"
cp "$W/kthelper" "$W/pingpong" "$R/bin/"
# LKST: second suite file, bench part, modules, helpers; null_blk (and
# configfs, which it needs) so that block requests happen in the VM
cp "$SRC/kmod/tests/suite_lkst.sh" "$R/suite_lkst.sh"
cp "$SRC/kmod/tests/suite_kft.sh" "$R/suite_kft.sh" # KFT in the kernel
cp "$SRC/kmod/tests/suite_kboot.sh" "$R/suite_kboot.sh" # boot-time KFT (mode boot)
cp "$SRC/kmod/tests/suite_hooks.sh" "$R/suite_hooks.sh" # LKST hooks anywhere
cp "$SRC/kmod/tests/suite_locks.sh" "$R/suite_locks.sh" # ktrace locks on contention events (mode locks)
cp "$SRC/kmod/bench/bench_lkst.sh" "$R/bench_lkst.sh"
cp "$KSRC"/ktrace_lkst_pid.ko "$KSRC"/ktrace_lkst_test.ko "$R/lib/modules-ktrace/"
cp "$W/lkstcheck" "$W/sysloop" "$R/bin/"
cp "$SRC/kmod/tests/suite_crash.sh" "$R/suite_crash.sh" && cp "$W/crashcheck" "$R/bin/" # crash extraction
cp "$SRC/kmod/tests/suite_exc.sh" "$R/suite_exc.sh" && cp "$W/excprog" "$W/memphases" "$R/bin/" # exception events, memview
nm -S "$W/excprog" > "$R/excprog.nm" # its main for the tracefs part's ip check (suite_exc.sh)
for m in fs/configfs/configfs.ko drivers/block/null_blk/null_blk.ko; do
	if [ -f "$IMG/lib/modules/$KVER/kernel/$m" ]; then cp "$IMG/lib/modules/$KVER/kernel/$m" "$R/lib/modules-ktrace/"; fi
done
cp "$KTRACE_BIN" "$R/bin/ktrace"
# The ktrace CLI is dynamic: bring its libraries and loader along.
for lib in $(ldd "$KTRACE_BIN" | grep -oE '/[^ ]+' | sort -u); do
	mkdir -p "$R$(dirname "$lib")"
	cp -L "$lib" "$R$lib"
done
echo 'root:x:0:0:root:/root:/bin/sh' > "$R/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/:/bin/false' >> "$R/etc/passwd"
INITRD=$W/initramfs-$MODE.cpio.gz
(cd "$R" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1 > "$INITRD")

# ---------------------------------------------------------------- boot
# boot-time KFT: the parameters come from the ktrace just built (names not
# checked here: Debian's System.map is a stub and the host runs another kernel).
EXTRA_APPEND=""
if [ "$MODE" = boot ]; then
	EXTRA_APPEND=$("$KTRACE_BIN" kft --boot -m - "$SRC/kmod/tests/kboot-seed.conf") ||
		die "ktrace kft --boot refused kmod/tests/kboot-seed.conf"
	EXTRA_APPEND="$EXTRA_APPEND $("$KTRACE_BIN" kft --boot --kernel -m - "$SRC/kmod/tests/kboot-kmod.conf")" ||
		die "ktrace kft --boot --kernel refused kmod/tests/kboot-kmod.conf"
	log "boot parameters: $EXTRA_APPEND"
fi
CONSOLE=$W/console-$MODE.log
export QEMU_PID=$W/qemu.pid
RESULTS=$W/results-$MODE.log
# TCG runs both vCPUs on one host thread (thread=single): with one host
# thread per vCPU (multi-threaded TCG, QEMU 7.2), a guest that patches its
# kernel text while the other vCPU runs the patched code (tracepoint probes
# attached or detached under load: LKST's masksets, `rmmod ktrace`) hung in
# about half of the runs, both vCPUs spinning at the patched jump label; with
# thread=single it never did (kmod/tests/suite_lkst.sh).
# KTRACE_VM_TCG_THREAD=multi brings the faster mode back.
tcg_opt() { if [ "$1" = tcg ]; then echo ",thread=${KTRACE_VM_TCG_THREAD:-single}"; fi; }
boot() { # boot ACCEL -> status of qemu/timeout
	local accel=$1 pid st=0 i
	rm -f "$CONSOLE" "$RESULTS" "$W/panic-hang"
	log "booting $KVER under $accel ($CPUS CPUs, timeout ${TIMEOUT}s)"
	rm -f "$W/qemu.pid"
	# crash: a panic or reboot resets the same qemu (RAM kept): no
	# -no-reboot; the region at 896 MiB is above the kernel and below the
	# initrd, which qemu puts at the top of the 1 GiB.
	local append="console=ttyS0 quiet panic=-1 ktrace.mode=$MODE${EXTRA_APPEND:+ $EXTRA_APPEND}" noreboot=-no-reboot
	if [ "$MODE" = crash ]; then
		append="console=ttyS0 quiet panic=1 memmap=16M\$0x38000000 ktrace.mode=crash ktrace.panics=$PANICS"
		noreboot=""
	fi
	# Through sh, so a qemu that aborts is reported in qemu.log, not by bash.
	sh -c 'timeout -k 5 "$0" "$@" < /dev/null & echo $! > "$QEMU_PID"; wait $!' \
		"$TIMEOUT" qemu-system-x86_64 -accel "$accel$(tcg_opt "$accel")" -cpu max -smp "$CPUS" -m 1G \
		-kernel "$VMLINUX" -initrd "$INITRD" \
		-append "$append" \
		-display none -monitor none $noreboot \
		-serial "file:$CONSOLE" -serial "file:$RESULTS" > "$W/qemu.log" 2>&1 &
	pid=$!
	if [ "$accel" = kvm ]; then
		# Nested KVM can stall or die with "KVM internal error" without
		# qemu exiting: give the guest 30 s to start, else stop it.
		for i in $(seq 30); do
			grep -q KTRACE-VM-START "$CONSOLE" 2> /dev/null && break
			kill -0 "$pid" 2> /dev/null || break
			grep -q 'KVM internal error' "$W/qemu.log" && break
			sleep 1
		done
		if ! grep -q KTRACE-VM-START "$CONSOLE" 2> /dev/null && [ -s "$W/qemu.pid" ]; then
			kill "$(cat "$W/qemu.pid")" 2> /dev/null || true
		fi
	fi
	[ "$MODE" = crash ] && panic_watch "$pid" &
	{ wait "$pid"; } 2> /dev/null || st=$?
	return "$st"
}
# crash: every panic must reboot.  A panic line on the console with no
# boot after it for PANIC_REBOOT_TIMEOUT seconds (the test's reboots take
# a few seconds under TCG) stops qemu and leaves $W/panic-hang (the
# judge fails the run and says which boot hung).
PANIC_REBOOT_TIMEOUT=${KTRACE_VM_PANIC_REBOOT_TIMEOUT:-90}
panic_watch() { # panic_watch QEMU_SH_PID
	local since=0 np nb
	while kill -0 "$1" 2> /dev/null; do
		sleep 2
		np=$(grep -c 'Kernel panic - not syncing' "$CONSOLE" 2> /dev/null || true)
		nb=$(grep -c 'KTRACE-VM-START' "$CONSOLE" 2> /dev/null || true)
		if [ "${np:-0}" -lt "${nb:-0}" ]; then
			since=0
		elif [ "$since" = 0 ]; then
			since=$(date +%s)
		elif [ $(($(date +%s) - since)) -ge "$PANIC_REBOOT_TIMEOUT" ]; then
			echo "boot $nb: its panic did not reboot within ${PANIC_REBOOT_TIMEOUT}s" > "$W/panic-hang"
			kill "$(cat "$W/qemu.pid")" 2> /dev/null || true
			return
		fi
	done
}
status=0
accel=${KTRACE_VM_ACCEL:-}
if [ -z "$accel" ]; then
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel=kvm; else accel=tcg; fi
fi
boot "$accel" || status=$?
if [ "$accel" = kvm ] && ! grep -q KTRACE-VM-START "$CONSOLE" 2>/dev/null; then
	log "KVM did not bring the guest up ($(head -c 200 "$W/qemu.log" | tr '\n' ' ')); using TCG"
	accel=tcg
	status=0
	boot tcg || status=$?
fi
t1=$(date +%s)
[ "$status" = 124 ] && log "TIMEOUT after ${TIMEOUT}s"

# ---------------------------------------------------------------- judge
tr -d '\r' < "$RESULTS" > "$RESULTS.txt" 2>/dev/null || : > "$RESULTS.txt"
section() { sed -n "/^KTRACE-$1-BEGIN\$/,/^KTRACE-$1-END\$/p" "$RESULTS.txt" | sed '1d;$d'; }
section RESULTS > "$W/$MODE.out"
section DMESG > "$W/dmesg-$MODE.txt"
section STDERR > "$W/stderr-$MODE.txt"
fail=0
if ! grep -q '^KTRACE-VM-DONE' "$RESULTS.txt"; then
	log "the guest did not finish (status $status); console tail:"
	tr -d '\r' < "$CONSOLE" | tail -n 30 >&2 || true
	fail=1
fi
if [ "$MODE" = crash ] && [ -s "$W/panic-hang" ]; then
	log "crash: $(cat "$W/panic-hang"); console tail:"
	tr -d '\r' < "$CONSOLE" | tail -n 15 >&2 || true
	fail=1
fi
if [ "$MODE" = crash ]; then
	# The guest announced each panic (KTRACE-CRASH-NEXT K panic): exactly
	# that many sysrq panics, each with its one stack dump, and no other
	# panic, warning or oops.
	npanic=$(grep -c '^KTRACE-CRASH-NEXT [0-9]* panic' "$RESULTS.txt" || true)
	ntear=$(grep -c '^KTRACE-CRASH-NEXT [0-9]* tear' "$RESULTS.txt" || true)
	tear_msg='Kernel panic - not syncing: ktrace: crash/tear: a record torn on purpose (crash_test)'
	tr -d '\r' < "$CONSOLE" > "$W/console-crash.txt"
	nsysrq=$(grep -c 'Kernel panic - not syncing: sysrq triggered crash$' "$W/console-crash.txt" || true)
	ntore=$(grep -c "$tear_msg\$" "$W/console-crash.txt" || true)
	nother=$(grep 'Kernel panic' "$W/console-crash.txt" |
		grep -v 'Kernel panic - not syncing: sysrq triggered crash' | grep -vcF "$tear_msg" || true)
	ntrace=$(grep -c 'Call Trace' "$W/console-crash.txt" || true)
	if [ "$nsysrq" != "$npanic" ] || [ "$ntore" != "$ntear" ] || [ "$nother" != 0 ] ||
		[ "$ntrace" -gt $((npanic + ntear)) ]; then
		log "panics: $nsysrq sysrq panics for $npanic announced, $ntore crash/tear panics for $ntear, $nother other panic lines, $ntrace stack dumps"
		fail=1
	fi
	sed -i '/Kernel panic - not syncing: sysrq triggered crash/d; /Call Trace/d' "$W/console-crash.txt"
	grep -vF "$tear_msg" "$W/console-crash.txt" > "$W/console-crash.tmp" || true
	mv "$W/console-crash.tmp" "$W/console-crash.txt"
	CONSOLE=$W/console-crash.txt
fi
if grep -E 'WARNING:|BUG:|Oops|general protection|Kernel panic|Call Trace|UBSAN|KASAN' \
	"$W/dmesg-$MODE.txt" "$CONSOLE" > "$W/kernel-bad.txt" 2>/dev/null; then
	log "kernel problems in the guest:"
	head -n 20 "$W/kernel-bad.txt" >&2
	fail=1
fi
if [ "$MODE" = crash ]; then
	if grep -qv '^KTRACE-' "$W/stderr-crash.txt"; then
		grep -v '^KTRACE-' "$W/stderr-crash.txt" | sed 's/^/    stderr: /' >&2 || true
	fi
	# Every boot sent its section; number the lines across boots, add the
	# plan, and require one first boot and every trial recovered.
	sed -n '/^KTRACE-RESULTS-BEGIN$/,/^KTRACE-RESULTS-END$/p' "$RESULTS.txt" |
		grep -Ev '^KTRACE-RESULTS-(BEGIN|END)$' |
		awk '/^(not )?ok / { n++; sub(/^ok /, "ok " n " "); sub(/^not ok /, "not ok " n " ") } { print } END { print "1.." n }' \
			> "$W/crash.out"
	grep '^KTRACE-CRASH-\(TRIAL\|BENCH\)' "$RESULTS.txt" | sed 's/^KTRACE-CRASH-/run-vm: /' >&2 || true
	# The quality figure (no verdict: it depends on the host's load): how
	# long before panic() the panicking CPU's last record was written.
	grep '^KTRACE-CRASH-TRIAL .* panic-cpu-gap-ns ' "$RESULTS.txt" |
		sed 's/.* panic-cpu-gap-ns \(-*[0-9]*\) .*/\1/' | sort -n |
		awk '{ v[n++] = -$1 } END { if (n) printf "run-vm: crash: the panicking CPU'"'"'s last record %.3f ms before panic() (median of %d panics), %.3f ms at most\n", v[int(n / 2)] / 1e6, n, v[0] / 1e6 }' >&2 || true
	ntrials=$(grep -c '^KTRACE-CRASH-TRIAL' "$RESULTS.txt" || true)
	nfirst=$(grep -c '^KTRACE-CRASH-FIRST-BOOT' "$RESULTS.txt" || true)
	if [ "$ntrials" != $((PANICS + 3)) ] || [ "$nfirst" != 1 ] ||
		! grep -q "^KTRACE-CRASH-FINISHED $((PANICS + 3))" "$RESULTS.txt"; then
		log "crash: $ntrials of $((PANICS + 3)) trials recovered, $nfirst first boots"
		fail=1
	fi
	if ! prove -v --exec cat "$W/crash.out"; then
		fail=1
	fi
elif [ "$MODE" != bench ]; then
	if [ -s "$W/stderr-$MODE.txt" ]; then
		log "stderr of the suite:"
		sed 's/^/    /' "$W/stderr-$MODE.txt" >&2
	fi
	# prove parses the guest's TAP (a plan, every test ok) and prints the summary.
	if ! prove -v --exec cat "$W/$MODE.out"; then
		fail=1
	fi
else
	cat "$W/bench.out"
	grep -q '^| ktrace probe' "$W/bench.out" || fail=1
fi
log "$MODE in the VM ($accel): $((t1 - t0)) s in all; logs in $W"
exit $fail
