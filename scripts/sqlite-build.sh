#!/bin/sh
# scripts/sqlite-build.sh - fetch, verify and build the SQLite shell that
# `make demo` (scripts/demo.sh) and the function-tracing benchmark
# (bench/kft/run.sh) trace.
#
#   scripts/sqlite-build.sh BUILD_DIR VARIANT...
#
# VARIANT is one of
#   plain   cc -O2 -g                            -> BUILD_DIR/demo/sqlite3-plain
#   inst    cc -O2 -g -finstrument-functions     -> BUILD_DIR/demo/sqlite3-inst
#   pg      cc -O2 -g -pg  (for uftrace)         -> BUILD_DIR/demo/sqlite3-pg
#   pgf     cc -O2 -g -pg -mfentry               -> BUILD_DIR/demo/sqlite3-pgf
#   patch   cc -O2 -g -fpatchable-function-entry=5  -> BUILD_DIR/demo/sqlite3-patch
#   nop     cc -O2 -g -fno-pie -pg -mfentry -mnop-mcount -mrecord-mcount,
#           linked -no-pie without -pg (no gmon.out) -> BUILD_DIR/demo/sqlite3-nop
# Each is the whole shell (shell.c + the sqlite3.c amalgamation) built with
# those flags, and is rebuilt only when missing or when its flags change.
# Variants are compiled in parallel (sqlite3.c takes ~30 s per variant).
#
# The source is the amalgamation tarball inside the npm package sqlite3@6.0.1
# (deps/sqlite-autoconf-3520000.tar.gz), fetched with curl from the npm
# registry (or with `npm pack` when curl fails and npm is installed) and
# checked against its sha256 before use.  Downloads are cached in
# $KTRACE_DEMO_CACHE (default: demo/ at the top of the repository, which git
# ignores), so a second run needs no network.  Offline: put either
# sqlite3-6.0.1.tgz or sqlite-autoconf-3520000.tar.gz in that directory.
#
# Environment: CC (default cc), KTRACE_DEMO_CACHE.
# Exit status: 0 built, 1 download/verification/build failed (one line on
# stderr says what and where), 2 usage error.
set -eu

SQLITE_NPM_VERSION=6.0.1
SQLITE_TGZ_URL=https://registry.npmjs.org/sqlite3/-/sqlite3-$SQLITE_NPM_VERSION.tgz
SQLITE_INNER=package/deps/sqlite-autoconf-3520000.tar.gz
SQLITE_NAME=sqlite-autoconf-3520000
SQLITE_SHA256=f6b50b0c103392af32a8be15b2b9d25959de9a00a70c3979128aafeaa5338b3f

me=sqlite-build.sh
die() { echo "$me: $*" >&2; exit 1; }

[ $# -ge 2 ] || { echo "usage: $me BUILD_DIR plain|inst|pg|pgf|patch|nop..." >&2; exit 2; }
B=$1
shift
for v in "$@"; do
	case "$v" in plain|inst|pg|pgf|patch|nop) ;; *) echo "$me: unknown variant '$v' (plain, inst, pg, pgf, patch or nop)" >&2; exit 2 ;; esac
done

SRC=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KTRACE_DEMO_CACHE:-$SRC/demo}
CC=${CC:-cc}
OUT=$B/demo
TARBALL=$CACHE/$SQLITE_NAME.tar.gz

command -v "$CC" >/dev/null 2>&1 || die "no C compiler '$CC' (run scripts/deps.sh)"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (coreutils)"
command -v tar >/dev/null 2>&1 || die "tar not found"
mkdir -p "$CACHE" "$OUT" || die "cannot create $CACHE or $OUT"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Take the amalgamation out of the npm package tarball $1 into $TARBALL,
# verifying it first.
from_package() {
	tar -xzOf "$1" "$SQLITE_INNER" > "$TARBALL.tmp" 2>/dev/null ||
		{ rm -f "$TARBALL.tmp"; die "$1: no $SQLITE_INNER inside (not the sqlite3@$SQLITE_NPM_VERSION npm package?)"; }
	got=$(sha_of "$TARBALL.tmp")
	if [ "$got" != "$SQLITE_SHA256" ]; then
		rm -f "$TARBALL.tmp"
		die "$1: $SQLITE_INNER has sha256 $got, expected $SQLITE_SHA256: refusing to build it (delete $1 to fetch again)"
	fi
	mv "$TARBALL.tmp" "$TARBALL"
}

fetch() {
	pkg=$CACHE/sqlite3-$SQLITE_NPM_VERSION.tgz
	if [ ! -s "$pkg" ]; then
		echo "$me: downloading $SQLITE_TGZ_URL" >&2
		ok=0
		if command -v curl >/dev/null 2>&1; then
			if curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$pkg.tmp" "$SQLITE_TGZ_URL"; then
				mv "$pkg.tmp" "$pkg" && ok=1
			else
				rm -f "$pkg.tmp"
			fi
		fi
		if [ $ok = 0 ] && command -v npm >/dev/null 2>&1; then
			echo "$me: curl failed or missing; trying npm pack sqlite3@$SQLITE_NPM_VERSION" >&2
			if (cd "$CACHE" && npm pack --silent "sqlite3@$SQLITE_NPM_VERSION" >/dev/null 2>&1) && [ -s "$pkg" ]; then
				ok=1
			fi
		fi
		[ $ok = 1 ] || die "cannot download $SQLITE_TGZ_URL (no network? no curl?). Put sqlite3-$SQLITE_NPM_VERSION.tgz or $SQLITE_NAME.tar.gz (sha256 $SQLITE_SHA256) in $CACHE/ and run again"
	fi
	from_package "$pkg"
}

if [ -s "$TARBALL" ]; then
	got=$(sha_of "$TARBALL")
	[ "$got" = "$SQLITE_SHA256" ] ||
		die "$TARBALL: sha256 $got, expected $SQLITE_SHA256: refusing to build it (delete it to fetch again)"
else
	fetch
fi

# Unpack once per verified tarball.
if [ ! -f "$OUT/$SQLITE_NAME/.unpacked" ]; then
	rm -rf "${OUT:?}/$SQLITE_NAME"
	tar -xzf "$TARBALL" -C "$OUT" "$SQLITE_NAME/sqlite3.c" "$SQLITE_NAME/sqlite3.h" \
		"$SQLITE_NAME/sqlite3ext.h" "$SQLITE_NAME/shell.c" ||
		die "$TARBALL: cannot unpack into $OUT"
	touch "$OUT/$SQLITE_NAME/.unpacked"
fi

flags_of() {
	case "$1" in
	plain) echo "-O2 -g" ;;
	inst) echo "-O2 -g -finstrument-functions" ;;
	pg) echo "-O2 -g -pg" ;;
	pgf) echo "-O2 -g -pg -mfentry" ;;
	patch) echo "-O2 -g -fpatchable-function-entry=5" ;;
	nop) echo "-O2 -g -fno-pie -pg -mfentry -mnop-mcount -mrecord-mcount" ;;
	esac
}

# link flags: the compile flags, but -mnop-mcount's build links without
# -pg (gcrt1.o would write gmon.out) and without PIE (it has no -fPIC form)
lflags_of() {
	case "$1" in
	nop) echo "-O2 -g -no-pie" ;;
	*) flags_of "$1" ;;
	esac
}

# Build variant $1 (in the background; status in $OUT/.build-$1.rc).
build() {
	v=$1
	flags=$(flags_of "$v")
	lflags=$(lflags_of "$v")
	s=$OUT/$SQLITE_NAME
	# shellcheck disable=SC2086
	(
		$CC $flags -I"$s" -c "$s/sqlite3.c" -o "$OUT/sqlite3-$v.o" &&
		$CC $flags -I"$s" -c "$s/shell.c" -o "$OUT/shell-$v.o" &&
		$CC $lflags -o "$OUT/sqlite3-$v.tmp" "$OUT/shell-$v.o" "$OUT/sqlite3-$v.o" -lpthread -lm &&
		mv "$OUT/sqlite3-$v.tmp" "$OUT/sqlite3-$v" &&
		rm -f "$OUT/sqlite3-$v.o" "$OUT/shell-$v.o" &&
		echo "$CC $flags" > "$OUT/sqlite3-$v.flags"
	) > "$OUT/build-$v.log" 2>&1 && rc=0 || rc=$?
	echo "$rc" > "$OUT/.build-$v.rc"
}

pids=""
todo=""
for v in "$@"; do
	want="$CC $(flags_of "$v")"
	if [ -x "$OUT/sqlite3-$v" ] && [ "$(cat "$OUT/sqlite3-$v.flags" 2>/dev/null)" = "$want" ]; then
		continue
	fi
	echo "$me: building $OUT/sqlite3-$v ($want)" >&2
	rm -f "$OUT/sqlite3-$v" "$OUT/.build-$v.rc"
	build "$v" &
	pids="$pids $!"
	todo="$todo $v"
done
for p in $pids; do
	wait "$p" || true
done
for v in $todo; do
	rc=$(cat "$OUT/.build-$v.rc" 2>/dev/null || echo 1)
	rm -f "$OUT/.build-$v.rc"
	if [ "$rc" != 0 ] || [ ! -x "$OUT/sqlite3-$v" ]; then
		tail -n 5 "$OUT/build-$v.log" >&2
		die "building sqlite3-$v failed (full log: $OUT/build-$v.log)"
	fi
done
exit 0
