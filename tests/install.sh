#!/bin/sh
# tests/install.sh - ktrace installed like a library (issue 14, item 5):
# `make install PREFIX=P` into a fresh prefix; a program built with only
# `pkg-config --cflags --libs ktrace` starts without LD_LIBRARY_PATH and
# traces; libktrace.so leaves sigaction/signal to libc while the installed
# `ktrace record` still counts signal handlers (its preloaded shim); the
# reader library builds with `pkg-config ktrace-reader` and reads that trace;
# a man page for every function of ktrace.h and for the KFT language; the
# docs the man pages name are installed; the installed `ktrace export`
# loads its plugin from ../lib/ktrace; `make uninstall` removes every
# installed file.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL LD_LIBRARY_PATH
P=$T/prefix
mk() { make -s -C "$KTRACE_SRC" B="$KTRACE_BUILD" SAN="${KTRACE_SAN:-}" PREFIX="$P" "$@"; }

run mk install
ok $rc "make install PREFIX=\$T/prefix"
[ $rc -eq 0 ] || cat "$T/err" >&2
# an ASan/UBSan libktrace.so needs its runtime first (as kft_report.sh)
san_preload "$P/lib/libktrace.so.0"
export PKG_CONFIG_PATH="$P/lib/pkgconfig"

cat >app.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <ktrace/ktrace.h>

int main(int argc, char **argv)
{
	struct ktrace_channel *ch = ktrace_setup(argv[1], "app", 0, 0, 0);
	Dl_info di;

	if (!ch) {
		fprintf(stderr, "%s\n", ktrace_error());
		return 1;
	}
	ktrace_start(ch);
	for (unsigned i = 0; i < 1000; i++)
		ktrace_log2(1, 3, i, 2 * i);
	ktrace_cleanup(ch);
	/* which library's sigaction this program calls */
	if (dladdr((void *)sigaction, &di) && di.dli_fname)
		printf("%s\n", di.dli_fname);
	return 0;
}
C
cc -o app app.c $(pkg-config --cflags --libs ktrace) -ldl 2>"$T/err"
ok $? "a program builds with pkg-config --cflags --libs ktrace alone"
mkdir traces
run ./app "$T/traces"
ok $rc "it starts and traces without LD_LIBRARY_PATH"
unlike "$T/out" 'libktrace' "its sigaction is libc's (or a sanitizer's), not libktrace's"
like "$T/out" '/lib(c|asan|tsan)\.so' "... and comes from the C library or a sanitizer runtime"
is "$(ldd ./app | awk '$1 == "libktrace.so.0" { print $3 }')" "$P/lib/libktrace.so.0" \
	"libktrace.so.0 found in the installed prefix"
is "$(nm -D --defined-only "$P/lib/libktrace.so.0" | awk '$3 == "sigaction" || $3 == "signal"' | wc -l)" 0 \
	"libktrace.so.0 defines neither sigaction nor signal"
is "$(nm -D --defined-only "$P/lib/libktrace-record.so.0" | awk '$3 == "sigaction" || $3 == "signal"' | wc -l)" 2 \
	"libktrace-record.so.0 (the record shim) defines both"

cat >count.c <<'C'
#include <stdio.h>
#include <ktrace/reader.h>

int main(int argc, char **argv)
{
	struct ktr_trace *t = ktr_open(argv[1]);
	struct ktr_rec r;
	unsigned long n = 0;

	if (!t)
		return 1;
	while (ktr_next(t, &r) > 0)
		n += r.kind == KTR_RECORD && r.cls == KTRACE_CLASS_LOG2;
	ktr_close(t);
	printf("%lu\n", n);
	return 0;
}
C
# a sanitizer build's static library links with its runtime
case ${KTRACE_SAN:-} in
asan) sancc=-fsanitize=address,undefined ;;
tsan) sancc=-fsanitize=thread ;;
*) sancc= ;;
esac
cc $sancc -o count count.c $(pkg-config --cflags --libs ktrace-reader) 2>"$T/err"
ok $? "a reader program builds with pkg-config --cflags --libs ktrace-reader"
run ./count "$T/traces/app"
is "$(cat "$T/out")" 1000 "it reads the 1000 events the program logged"

# the installed ktrace record: ../lib found from bin/, signal handlers counted
cc -O1 -finstrument-functions -o shapes "$KTRACE_SRC/tests/kft/shapes.c"
printf 'filter onlyints\n' >onlyints.kft
run "$P/bin/ktrace" record -q --config onlyints.kft -o sig ./shapes signals 5
ok $rc "the installed ktrace record runs a program"
run "$P/bin/ktrace" kd -c sig
is "$(grep -c '!!!! start' "$T/out")" 5 "its 5 signal-handler calls are marked (onlyints: 5 sections)"
run "$P/bin/ktrace" export --format=perfetto -o sig.pftrace sig
ok $rc "the installed ktrace export finds ktrace-export.so in ../lib/ktrace"

# a man page for every function the header declares (ktrace__*: the inline
# ktrace_log2/4's internals), and the KFT language
missing=
for f in $(grep -o '\bktrace_[a-z0-9_]*(' "$KTRACE_SRC/include/ktrace/ktrace.h" | tr -d '(' | grep -v '^ktrace__' | sort -u); do
	[ -f "$P/share/man/man3/$f.3" ] || missing="$missing $f"
done
is "$missing" "" "man3: a page for every function of ktrace.h"
ok "$([ -f "$P/share/man/man5/ktrace-kft.5" ]; echo $?)" "man5: ktrace-kft(5), the KFT language"
missing=
for d in $(grep -ho "$P/share/doc/ktrace/[A-Z-]*\.md" "$P"/share/man/man*/*); do
	[ -f "$d" ] || missing="$missing $d"
done
is "$missing" "" "every document the man pages name is installed"
unlike "$P/share/man/man1/ktrace-record.1" 'docs/[A-Z]' "installed man pages name no source-tree path"

run mk uninstall
ok $rc "make uninstall"
is "$(find "$P" -type f -o -type l | wc -l)" 0 "make uninstall removes every installed file"
done_testing
