#!/bin/sh
# scripts/deps.sh - install the Debian 12 packages ktrace needs to build,
# test, fuzz and benchmark.  Idempotent and quick when everything is there;
# must run as root (or with sudo) when something is missing.
#
#   scripts/deps.sh            build + test dependencies: the libraries ktrace
#                              links (elfutils, libiberty, libtracefs,
#                              libtraceevent, libtracecmd, yajl, protobuf-c, libzstd, libaudit,
#                              libbabeltrace2; Zydis, the instruction decoder of
#                              run-time patching) and the third-party readers the
#                              tests run on its output (trace-cmd, babeltrace2,
#                              protoc, rsvg-convert, python3; sqlite3 for
#                              tests/cli_locks.sh's threaded clean run; uftrace for
#                              tests/kft_pg.sh's -pg call counts; libc6-dbg,
#                              the detached symbols of libc that tests/kft_dynpatch.sh
#                              patches a local function of)
#   scripts/deps.sh --bench    also LTTng, uftrace and perf (the benchmarks' peers)
#   scripts/deps.sh --kmod     also the kernel images/headers (generic and
#                              PREEMPT_RT), qemu, busybox
set -eu

pkgs="build-essential pkg-config perl libelf-dev libdw-dev elfutils clang libclang-rt-dev
      libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd libiberty-dev libyajl-dev libaudit-dev libzydis-dev
      libprotobuf-c-dev libzstd-dev protobuf-c-compiler protobuf-compiler libbabeltrace2-dev babeltrace2
      python3 xz-utils curl ca-certificates librsvg2-bin uftrace sqlite3 libc6-dbg"
for arg in "$@"; do
	case "$arg" in
	--bench) pkgs="$pkgs liblttng-ust-dev lttng-tools uftrace linux-perf time" ;;
	--kmod) pkgs="$pkgs linux-headers-amd64 linux-image-amd64 linux-headers-rt-amd64 linux-image-rt-amd64
	              qemu-system-x86 busybox-static cpio kmod" ;;
	*) echo "deps.sh: unknown option '$arg' (use --bench or --kmod)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo "$0" "$@"
	fi
	echo "deps.sh: missing packages:$missing; run this script as root" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
