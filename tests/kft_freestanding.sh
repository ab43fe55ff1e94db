#!/bin/sh
# tests/kft_freestanding.sh - the KFT engine (kft/) stays freestanding C:
# it compiles with -ffreestanding -nostdinc (only the compiler's own headers),
# without floating point (-mgeneral-regs-only on x86-64), and the linked
# objects need no symbol from outside kft/ (no libc call, not even memcpy),
# so the kernel module can compile the same files.
set -u
src=${KTRACE_SRC:-.}
cc=${CC:-cc}
tmp=$(mktemp -d /tmp/kft_freestanding.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
inc=$($cc -print-file-name=include)
flags="-std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror -ffreestanding -fno-builtin -nostdinc -isystem $inc -I$src/include -I$src"
case $(uname -m) in x86_64|i?86) flags="$flags -mgeneral-regs-only" ;; esac

n=0
for f in "$src"/kft/*.c; do n=$((n + 1)); done
echo "1..$((n + 1))"
i=0
objs=
for f in "$src"/kft/*.c; do
	i=$((i + 1))
	o="$tmp/$(basename "$f" .c).o"
	if $cc $flags -c "$f" -o "$o" 2>"$tmp/err"; then
		echo "ok $i - $(basename "$f") compiles freestanding, without floating point"
		objs="$objs $o"
	else
		echo "not ok $i - $(basename "$f") compiles freestanding, without floating point"
		sed 's/^/# /' "$tmp/err"
	fi
done
i=$((i + 1))
if ld -r -o "$tmp/all.o" $objs 2>"$tmp/err" && [ -z "$(nm -u "$tmp/all.o")" ]; then
	echo "ok $i - the engine needs no outside symbol"
else
	echo "not ok $i - the engine needs no outside symbol"
	nm -u "$tmp/all.o" 2>/dev/null | sed 's/^/# undefined: /'
	sed 's/^/# /' "$tmp/err"
fi
