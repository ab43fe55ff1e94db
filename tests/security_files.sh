#!/bin/sh
# tests/security_files.sh - issue 12 item 1: ktrace never writes through a
# link it did not make and never reuses a directory another user owns
# (lib/safefile.h).  As root (CI), an unprivileged user (nobody) prepares
# the attacks, as the issue's attack run did: a directory with links named
# like the files ktrace writes (.metadata.tmp, .state.tmp, .dropped.tmp,
# threads, metadata, ...) pointing at files root owns, a link to a
# root-owned directory given as -o, a link among the leading components,
# the old predictable `record --kernel` staging directory, links planted as
# export/timeline outputs.  Each command must refuse (or replace the link,
# never its target) with one line and a non-zero exit, and the targets must
# stay byte for byte and mode for mode as they were.
#
# Not root: nobody cannot be impersonated, so the refusals a user can
# provoke alone are asserted (a directory root owns, a link given as -o,
# no staging directory left behind), and the rest is said in a diagnostic.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

# An ASan/UBSan build of libktrace.so needs its runtime first in the
# uninstrumented programs it is preloaded into (as kernel_record.sh does).
san_preload
me=$(id -u)

as_nobody() {
	if command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	else
		runuser -u nobody -- "$@"
	fi
}

# The link targets: files only root reads, and a fingerprint of them.
NAMES=".metadata.tmp .state.tmp .dropped.tmp threads metadata control state dropped trace0 cpu0 callsites kft kft-status kallsyms"
mkdir -m 700 "$T/secret"
for n in $NAMES export.json timeline.svg; do
	printf 'root data %s\n' "$n" >"$T/secret/$n"
	chmod 640 "$T/secret/$n"
done
fingerprint() {
	(cd "$T/secret" && for f in .* *; do
		[ -f "$f" ] && printf '%s %s %s\n' "$f" "$(stat -c '%a %u %s' "$f")" "$(cksum <"$f")"
	done)
}
SECRET=$(fingerprint)
secret_intact() {
	is "$(fingerprint)" "$SECRET" "$1: every link target unchanged (contents, mode, owner)"
}

# A trace to copy, and fake /proc/kft files for `kft --kernel extract`.
"$MKTRACE" -s 2 -r 20 "$T/src" >/dev/null
mkdir "$T/proc"
for f in kft kft_data kft_callsites kallsyms; do echo x >"$T/proc/$f"; done

# A root-owned empty directory, and links to it given as -o.
mkdir -m 755 "$T/rootdir"
ln -s "$T/rootdir" "$T/mylink"
rootdir_intact() {
	is "$(stat -c %a "$T/rootdir") $(ls -A "$T/rootdir" | wc -l)" "755 0" "$1: the directory's mode and contents unchanged"
}

# ---- what any user can check --------------------------------------------
run "$KTRACE" record -o "$T/mylink" -- sh -c "touch '$T/ran'"
is "$rc" 1 "record -o LINK (even one of yours): refused"
is "$(cat "$T/err")" "ktrace record: $T/mylink: is a symbolic link: not following it (name the directory itself)" \
	"... with one line saying why"
ok "$([ ! -e "$T/ran" ]; echo $?)" "... before the program runs"
rootdir_intact "record -o LINK"
run "$KTRACE" read "$T/src" "$T/mylink"
is "$rc:$(lines "$T/err")" "1:1" "read SRC LINK: refused, one line"
like "$T/err" "^ktrace read: $T/mylink: is a symbolic link: not following it" "... saying why"
run "$KTRACE" kft --kernel --proc "$T/proc" extract "$T/mylink"
is "$rc:$(lines "$T/err")" "1:1" "kft --kernel extract LINK: refused, one line"
like "$T/err" "^ktrace kft: $T/mylink: is a symbolic link: not following it" "... saying why"
rootdir_intact "read/extract to LINK"

if [ "$me" -ne 0 ]; then
	other=/
	who=0
else
	mkdir -m 755 "$T/nobodys" && chown nobody "$T/nobodys"
	other=$T/nobodys
	who=$(id -u nobody)
fi
run "$KTRACE" record -o "$other" -- true
is "$rc" 1 "record -o into another user's directory: refused"
is "$(cat "$T/err")" "ktrace record: $other: owned by uid $who, not by you (uid $me): refusing to write into another user's directory" \
	"... with one line naming the owner"
run "$KTRACE" read "$T/src" "$other"
is "$rc:$(lines "$T/err")" "1:1" "read into another user's directory: refused, one line"

# record --kernel stages beside DIR in a fresh mkdtemp(3) directory, and
# leaves none behind when it cannot record (here: possibly not root)
mkdir "$T/par"
run "$KTRACE" record -q --kernel -o "$T/par/k" -- sh -c "ls -a '$T/par' >'$T/listing'"
ok "$(ls -A "$T/par" | grep -q '^\.k\.kernel-'; [ $? -ne 0 ]; echo $?)" \
	"record --kernel: no staging directory left beside DIR"

if [ "$me" -ne 0 ]; then
	echo "# not root: the attacks prepared by another user (nobody) need root; CI runs them"
	done_testing
fi

# ---- attacks prepared by nobody, run by root ----------------------------
chmod 711 "$T"                 # nobody may pass, not list
mkdir -m 1777 "$T/pub"         # a world-writable sticky directory, as /tmp
plant() { # DIR: nobody makes DIR and plants a link per name to root's file
	as_nobody mkdir "$1" || echo "Bail out! nobody cannot create $1"
	for n in $NAMES; do as_nobody ln -s "$T/secret/$n" "$1/$n"; done
}
listing() { ls -la "$1" | awk '{ print $1, $3, $9, $10, $11 }'; }

plant "$T/pub/kt-pre"
L0=$(listing "$T/pub/kt-pre")
run "$KTRACE" record -o "$T/pub/kt-pre" -- sh -c "touch '$T/ran'"
is "$rc" 1 "record -o DIR prepared by nobody: refused"
is "$(cat "$T/err")" "ktrace record: $T/pub/kt-pre: owned by uid $who, not by you (uid 0): refusing to write into another user's directory" \
	"... one line naming the owner"
ok "$([ ! -e "$T/ran" ]; echo $?)" "... before the program runs"
secret_intact "record -o DIR prepared by nobody"
is "$(listing "$T/pub/kt-pre")" "$L0" "... and nobody's directory untouched"

# the runtime itself (a program started without ktrace record)
KTRACE_RECORD_DIR=$T/pub/kt-pre LD_PRELOAD=${san:+$san:}$KTRACE_BUILD/libktrace.so.0 /bin/true 2>"$T/err"
rc=$?
is "$rc" 0 "the runtime given nobody's directory: the program still runs"
is "$(cat "$T/err")" "ktrace: $T/pub/kt-pre: owned by uid $who, not by you (uid 0): refusing to write into another user's directory (the program runs untraced)" \
	"... untraced, with one line"
secret_intact "the runtime given nobody's directory"

run "$KTRACE" record -q --kernel -o "$T/pub/kt-pre" -- true
is "$rc:$(lines "$T/err")" "1:1" "record --kernel -o DIR prepared by nobody: refused, one line"
run "$KTRACE" read "$T/src" "$T/pub/kt-pre"
is "$rc:$(lines "$T/err")" "1:1" "read SRC DST prepared by nobody: refused, one line"
like "$T/err" "owned by uid $who, not by you" "... naming the owner"
run "$KTRACE" kft --kernel --proc "$T/proc" extract "$T/pub/kt-pre"
is "$rc:$(lines "$T/err")" "1:1" "kft --kernel extract DST prepared by nobody: refused, one line"
secret_intact "read/extract into nobody's directory"
is "$(listing "$T/pub/kt-pre")" "$L0" "... and nobody's directory untouched"

# -o a link nobody made to a root-owned directory
as_nobody ln -s "$T/rootdir" "$T/pub/LINK"
run "$KTRACE" record -o "$T/pub/LINK" -- true
is "$rc:$(lines "$T/err")" "1:1" "record -o nobody's LINK to a root directory: refused, one line"
like "$T/err" "is a symbolic link: not following it" "... saying why"
run timeout 20 "$KTRACE" record -q --kernel -o "$T/pub/LINK"
is "$rc:$(lines "$T/err")" "1:1" "record --kernel (system) -o LINK: refused, one line"
rootdir_intact "nobody's LINK as -o"

# a link nobody made among the leading components
as_nobody ln -s "$T/secret" "$T/pub/sl"
run "$KTRACE" record -o "$T/pub/sl/trace" -- true
is "$rc" 1 "record -o through nobody's link: refused"
is "$(cat "$T/err")" "ktrace record: $T/pub/sl/trace: 'sl' is a symbolic link owned by uid $who (neither root nor you): not following it" \
	"... one line naming the link and its owner"
ok "$([ ! -e "$T/secret/trace" ]; echo $?)" "... nothing created behind it"
mkdir "$T/okdir" && ln -s "$T/okdir" "$T/rootlink"
run "$KTRACE" record -q -o "$T/rootlink/trace" -- true
# (true is not instrumented: record says it was not traced, but its trace directory is made)
ok "$([ -f "$T/okdir/trace/metadata" ] && ! grep -q 'symbolic link' "$T/err"; echo $?)" \
	"a link root made among them is followed"

# a root-owned directory anyone can write into, with links planted in it:
# accepted (it is root's), made 0700, the links replaced, never followed
mkdir -m 1777 "$T/pub/shared"
for n in $NAMES; do as_nobody ln -s "$T/secret/$n" "$T/pub/shared/$n"; done
run "$KTRACE" read -q "$T/src" "$T/pub/shared"
is "$rc" 0 "read into root's world-writable DST holding nobody's links: copied"
ok "$(for f in "$T/pub/shared"/*; do [ -L "$f" ] && { echo 1; exit; }; done; echo 0)" "... every link replaced by a file"
is "$(stat -c '%a %U' "$T/pub/shared")" "700 root" "... the directory made private"
secret_intact "read into a directory holding planted links"
mkdir -m 1777 "$T/pub/kdir"
for n in $NAMES; do as_nobody ln -s "$T/secret/$n" "$T/pub/kdir/$n"; done
run "$KTRACE" kft --kernel --proc "$T/proc" extract "$T/pub/kdir"
secret_intact "kft --kernel extract into a directory holding planted links"

# outputs named by the user: a link planted there is not written through
as_nobody ln -s "$T/secret/export.json" "$T/pub/out.json"
run "$KTRACE" export --format=csv -o "$T/pub/out.json" "$T/src"
is "$rc:$(lines "$T/err")" "1:1" "export -o nobody's link: refused, one line"
like "$T/err" "^ktrace export: $T/pub/out.json: is a symbolic link: not writing through it" "... saying why"
as_nobody ln -s "$T/secret/timeline.svg" "$T/pub/t.svg"
run "$KTRACE" timeline --svg "$T/pub/t.svg" "$T/src"
is "$rc" 1 "timeline --svg nobody's link: refused"
secret_intact "export/timeline outputs"
run "$KTRACE" export --format=csv -o "$T/pub/new.csv" "$T/src"
is "$rc $(stat -c '%a %U' "$T/pub/new.csv")" "0 600 root" "export -o a new file: written, mode 0600"

# ---- record --kernel: the staging directory ----------------------------
if ! grep -qw tracefs /proc/filesystems; then
	echo "# no tracefs: the staging directory of record --kernel cannot be observed"
	done_testing
fi
# nobody plants the name the old code used (.BASE.kernel-PID, PID = the
# ktrace about to run: the shell's, which exec keeps) with links inside
stage_run() {
	sh -c 'd=$1/.krec.kernel-$$ s=$2; shift 2
		nb() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
		nb mkdir "$d" && nb ln -s "$s" "$d/metadata" && nb ln -s "$s" "$d/cpu0" || exit 99
		exec "$@"' sh "$T/pub" "$T/secret/metadata" \
		"$KTRACE" record -q --kernel -o "$T/pub/krec" -- sh -c "ls -a '$T/pub' >'$T/listing'" \
		>"$T/out" 2>"$T/err"
	rc=$?
}
stage_run
is "$rc" 0 "record --kernel beside nobody's decoy staging directory: exit 0"
ok "$([ -f "$T/pub/krec/kernel/metadata" ] && [ -f "$T/pub/krec/kernel/cpu0" ]; echo $?)" "... the kernel events are in DIR/kernel"
ok "$([ ! -L "$T/pub/krec/kernel/metadata" ]; echo $?)" "... in files of its own"
secret_intact "record --kernel with a decoy staging directory"
s1=$(grep '^\.krec\.kernel-' "$T/listing" | grep -v '^\.krec\.kernel-[0-9]*$')
ok "$(echo "$s1" | grep -Eq '^\.krec\.kernel-[A-Za-z0-9]{6}$'; echo $?)" \
	"the staging directory has a random name ($s1), not the predictable one"
ok "$(ls -A "$T/pub" | grep -Eq '^\.krec\.kernel-[A-Za-z0-9]{6}$'; [ $? -ne 0 ]; echo $?)" "... and is gone afterwards"
ok "$(for d in "$T/pub"/.krec.kernel-*; do [ "$(stat -c %U "$d")" = nobody ] || { echo 1; exit; }; done; echo 0)" \
	"nobody's decoys are left as they were (never reused)"
stage_run
s2=$(grep '^\.krec\.kernel-' "$T/listing" | grep -v '^\.krec\.kernel-[0-9]*$')
ok "$([ "$rc" -eq 0 ] && [ -n "$s2" ] && [ "$s1" != "$s2" ]; echo $?)" "a second run stages under another name ($s2)"
secret_intact "a second record --kernel"

done_testing
