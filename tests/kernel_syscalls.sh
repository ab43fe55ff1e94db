#!/bin/sh
# tests/kernel_syscalls.sh - system call names on the kernel's syscall
# events (analysis/syscalls.c, libaudit's tables for the trace's machine),
# and a `record --kernel` trace of a program that wrote no records of its
# own (built without -finstrument-functions) read by print, export and
# timeline.
#
# tests/kernel/syscalls.c makes 37 getppid and 23 getpgid calls.  The
# expected names come from the kernel's own headers, parsed by python
# (asm/unistd_64.h for x86_64, asm-generic/unistd.h for a trace whose
# metadata says aarch64), never from libaudit: every SYSCALL_ENTRY/EXIT
# that `ktrace print -C`, `print --json` and `export --format=chrome`
# show must carry the header's name for its number (or libaudit's
# spelling of it: pread for pread64, newfstat for fstat).  Needs root and
# tracefs; as another user only the usage checks run.
#
# test: serial (it arms the host kernel's tracing; `make test` runs such
# tests one at a time, the others in parallel)
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

san_preload
cc -O1 -o "$T/syscalls" "$KTRACE_SRC/tests/kernel/syscalls.c" ||
	{ echo "Bail out! cannot compile tests/kernel/syscalls.c"; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! grep -qw tracefs /proc/filesystems; then
	ok 0 "not root or no tracefs: only the build is checked"
	done_testing
fi

D=$T/d
# -U .: nothing patched, no library call: the program writes no record of its own
run "$KTRACE" record -q -U . --no-libcall --kernel=syscall -o "$D" -- "$T/syscalls"
is "$rc" 0 "record --kernel=syscall of an uninstrumented program, -U .: exit 0"
pid=$(cat "$T/out")
ok "$([ ! -e "$D/trace0" ]; echo $?)" "... the program wrote no stream of its own"
for c in "print" "print -C" "print --json" "export --format=chrome" "export --format=csv" "timeline"; do
	# shellcheck disable=SC2086 # $c is a command and its options
	run "$KTRACE" $c "$D"
	is "$rc" 0 "$c of it: exit 0 (the kernel sub-trace is the trace)"
	is "$(lines "$T/err")" 0 "... nothing on stderr"
	cp "$T/out" "$T/$(echo "$c" | tr -c 'a-zA-Z\n' _)"
done

check() { # check MACHINE-HEADER CSV JSON CHROME
	python3 - "$pid" "$@" <<'PY'
import csv, json, re, sys
pid, header, csvf, jsonf, chromef = sys.argv[1:]
names = {}
for line in open(header):
    m = re.match(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", line)
    if m:
        names.setdefault(int(m.group(2)), m.group(1))
def same(got, hdr):
    # libaudit's spellings of a few: pread for pread64, getdents for
    # getdents64 (asm-generic), newfstat for fstat, sync_file_range
    return got is not None and got in (hdr, hdr[:-2] if hdr.endswith("64") else hdr, "new" + hdr,
                                       hdr[:-1] if hdr.endswith("2") else hdr)
def args_of(s):
    return dict(kv.split("=", 1) for kv in s.split(";") if "=" in kv)
rows = [r for r in csv.DictReader(open(csvf)) if r["name"] in ("SYSCALL_ENTRY", "SYSCALL_EXIT")]
bad = [r for r in rows if int(args_of(r["args"])["id"]) in names
       and not same(args_of(r["args"]).get("syscall"), names[int(args_of(r["args"])["id"])])]
print(("ok" if rows and not bad else "FAIL") + " print -C: %d syscall rows, the header's name on each (%d wrong%s)"
      % (len(rows), len(bad), ": %s" % bad[0] if bad else ""))
named = sum(1 for r in rows if "syscall" in args_of(r["args"]))
known = sum(1 for r in rows if int(args_of(r["args"])["id"]) in names)
print(("ok" if named >= known else "FAIL") + " print -C: every number the header knows is named (%d of %d)" % (named, known))
mine = [r for r in rows if r["pid"] == pid and r["name"] == "SYSCALL_ENTRY"]
for nm, want in (("getppid", 37), ("getpgid", 23)):
    got = sum(1 for r in mine if args_of(r["args"]).get("syscall") == nm)
    if header.endswith("unistd_64.h"):
        print(("ok" if got == want else "FAIL") + " the program's %s entries: %d (it made %d)" % (nm, got, want))
for what, f in (("print --json", jsonf), ("export --format=chrome", chromef)):
    ev = [e for e in json.load(open(f))["traceEvents"] if e.get("name") in ("SYSCALL_ENTRY", "SYSCALL_EXIT")]
    bad = [e for e in ev if e["args"]["id"] in names and not same(e["args"].get("syscall"), names[e["args"]["id"]])]
    print(("ok" if len(ev) == len(rows) and not bad else "FAIL") +
          " %s: %d syscall events (csv %d), the header's name on each (%d wrong)" % (what, len(ev), len(rows), len(bad)))
PY
}
check /usr/include/x86_64-linux-gnu/asm/unistd_64.h "$T/print__C" "$T/print___json" "$T/export___format_chrome" > "$T/x86"
tap_results "$T/x86" "x86_64"

# The same trace said to come from an aarch64 machine: the names follow
# the trace's machine, not the reader's.
sed -i 's/^machine .*/machine aarch64/' "$D/metadata" "$D/kernel/metadata"
"$KTRACE" print -C "$D" > "$T/a.csv" && "$KTRACE" print --json "$D" > "$T/a.json" &&
	"$KTRACE" export --format=chrome "$D" > "$T/a.chrome"
is "$?" 0 "the trace relabelled aarch64 reads"
check /usr/include/asm-generic/unistd.h "$T/a.csv" "$T/a.json" "$T/a.chrome" > "$T/arm"
tap_results "$T/arm" "aarch64"
# a machine libaudit has no table for: numbers only, no wrong name
sed -i 's/^machine .*/machine pdp11/' "$D/metadata" "$D/kernel/metadata"
run "$KTRACE" print -C "$D"
is "$rc" 0 "machine pdp11: print -C exits 0"
ok "$(grep -c 'syscall=' "$T/out" | grep -qx 0; echo $?)" "... and names no system call"
done_testing
