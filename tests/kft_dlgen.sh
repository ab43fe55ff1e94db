#!/bin/sh
# tests/kft_dlgen.sh - functions of dlclose()d libraries, and of two
# libraries loaded in turn at the same address, are named by load
# generation (issue 25, item 11; `map-gen` lines, docs/FORMAT.md).
#
# tests/kft/dlgen.c is built as two libraries of the same layout,
# libalpha.so and libbravo.so (alpha_one/bravo_one and alpha_two/bravo_two
# at the same offsets), and as a program that dlopen()s alpha, calls its
# functions, dlclose()s it, does the same with bravo (mapped where alpha
# was: the program prints each load's base address, checked equal), then
# dlopen()s alpha again and calls its functions (and dlclose()s it with
# `close`).  Built five ways (KFT_BUILDS: -finstrument-functions and -pg
# at -O0 and -O2, -pg -mfentry at -O2).  The
# program prints how many times it called each library function; then
#   - `ktrace kd` (counts per function, summed over the rows of a name:
#     kd keeps each load of a library apart) gives those counts;
#   - `ktrace kd -c` names every call: its tree equals uftrace's
#     (`uftrace record` + `replay`, which gets this right), dlopen and
#     dlsym left out (ktrace does not hook them, kft/libcall.h);
#   - `ktrace addr2sym` and `ktrace print` name each call as the program's
#     log counts it (print: the call site inside bravo too);
#   - no address is left bare ([libalpha.so]+0x... or 0x...).
# A trace without map-gen lines reads as before; a bad map-gen line is an
# error.  Before the fix, the first alpha's and bravo's calls were named after
# the last alpha (or shown as [libalpha.so]+0x1119 with `close`).
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

SRC="$KTRACE_SRC/tests/kft/dlgen.c"
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
for f in $KFT_BUILDS; do
	mkdir -p "$f"
	for l in alpha bravo; do
		# shellcheck disable=SC2046
		cc -g $(hook_flags "$f") -fPIC -shared -DDLGEN_LIB=$l -o "$f/lib$l.so" "$SRC" || exit 1
	done
	# shellcheck disable=SC2046
	cc -g $(hook_flags "$f") -o "$f/dlgen" "$SRC" || exit 1
done

# name,count rows of `kd --format=csv` summed per name, for the libraries' functions
kdcounts() {
	"$KTRACE" kd --format=csv "$1" | awk -F, 'NR > 1 && $1 ~ /^(alpha|bravo)_/ { n[$1] += $2 }
		END { for (k in n) print "count", k, n[k] }' | sort
}

for f in $KFT_BUILDS; do
	for mode in open close; do
		rm -rf k u
		"$T/$f/dlgen" "$T/$f" $mode >plain.out 2>&1
		is "$?" 0 "$f $mode: the program runs"
		"$KTRACE" record -q -o k "$T/$f/dlgen" "$T/$f" $mode >k.out 2>k.err
		is "$?" 0 "$f $mode: exit status under ktrace"
		is "$(cat k.err)" "" "$f $mode: nothing on stderr"
		bases=$(awk '$1 == "base" { print $3 }' k.out | sort -u | wc -l)
		is "$bases" 1 "$f $mode: the three loads at the same address ($(awk '$1 == "base" { printf "%s ", $3 }' k.out))"
		grep '^count' k.out | sort >log.counts
		kdcounts k >kd.counts
		is "$(cat kd.counts)" "$(cat log.counts)" "$f $mode: kd counts per function as the program's log"
		"$KTRACE" kd --format=csv k 2>kd.err | cut -d, -f1 >kd.names
		unlike kd.names '^\[lib|^0x' "$f $mode: kd names every function"
		is "$(cat kd.err)" "" "$f $mode: kd says nothing on stderr"
		"$KTRACE" addr2sym k 2>/dev/null | awk '$4 ~ /^(alpha|bravo)_/ { n[$4]++ } $4 ~ /^\[lib/ { n[$4]++ }
			END { for (k in n) print "count", k, n[k] }' | sort >a2s.counts
		is "$(cat a2s.counts)" "$(cat log.counts)" "$f $mode: addr2sym names each call as the program's log"
		"$KTRACE" print k 2>/dev/null >print.out
		awk '$4 ~ /^(alpha|bravo)_/ { n[$4]++ } $4 ~ /^\[lib/ { n[$4]++ }
			END { for (k in n) print "count", k, n[k] }' print.out | sort >print.counts
		is "$(cat print.counts)" "$(cat log.counts)" "$f $mode: print names each call as the program's log"
		is "$(grep -c ' bravo_one .* at=bravo_two+0x' print.out)" 1 \
			"$f $mode: print: bravo_two's call site (in the library) named in bravo"
		"$KTRACE" kd -c --format=csv k | python3 "$TREE" ktrace-csv --drop dlopen,dlsym >k.tree
		"$KTRACE" kd -c k | python3 "$TREE" ktrace --drop dlopen,dlsym >kd.tree
		env -u LD_PRELOAD uftrace record -d u "$T/$f/dlgen" "$T/$f" $mode >/dev/null 2>&1
		uftrace replay -d u --no-pager 2>/dev/null | python3 "$TREE" uftrace --drop dlopen,dlsym >u.tree
		if grep -q alpha_one u.tree; then
			is "$(cat k.tree)" "$(cat u.tree)" "$f $mode: call tree (recorded depths) as uftrace's"
			is "$(cat kd.tree)" "$(cat u.tree)" "$f $mode: kd -c's tree as uftrace's"
		else
			ok 0 "# SKIP $f $mode: uftrace recorded no library function"
		fi
		grep -q 'map-gen .* - .*/libalpha.so$' k/metadata
		is "$?" "$([ $mode = open ] && echo 0 || echo 1)" "$f $mode: the last alpha is still loaded (map-gen UNLOAD -) or not"
	done
done

# a trace without map-gen lines (written before them) is read as before:
# every map line's object named, the loads not told apart
rm -rf old
"$KTRACE" record -q -o old "$T/inst-O0/dlgen" "$T/inst-O0" open >/dev/null
grep -v '^map-gen ' old/metadata >old.meta
cp old.meta old/metadata
"$KTRACE" kd --format=csv old >old.csv 2>old.err
is "$(cat old.err)" "" "old trace (map lines only): read without a word"
is "$(awk -F, '$1 ~ /^(alpha|bravo)_/ { print $1 }' old.csv | sort -u | tr '\n' ' ')" "alpha_one alpha_two " \
	"old trace: the functions named after the objects of the map lines"
# a damaged map-gen line is an error naming the line
cp k/metadata bad.meta
echo "map-gen 20 10 1000 2000 0 - /x" >>k/metadata
"$KTRACE" kd k >/dev/null 2>bad.err
like bad.err "metadata:[0-9]+: bad map-gen line" "a map-gen line unloading before it loads: an error"
cp bad.meta k/metadata

done_testing
