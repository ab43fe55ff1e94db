#!/bin/sh
# tests/kft_boot.sh - `ktrace kft --boot`: a KFT configuration translated
# into the kernel command line that runs it from boot (kclient/kft_boot.c).
# The expected parameter lines are written out by hand from the kernel's
# documented parameters (Documentation/admin-guide/kernel-parameters.txt:
# ftrace=, trace_clock=, trace_buf_size=, trace_options=, tracing_thresh=,
# ftrace_filter=, ftrace_notrace=, ftrace_graph_filter=,
# ftrace_graph_max_depth=, kprobe_event=), and the refusals must name the
# statement as FILE:LINE.  The kernel side (the parameters really run the
# seed's boot sample) is kmod/tests/run-vm.sh boot.
. "${KTRACE_SRC:-.}/tests/helpers/tap.sh"

# A System.map of an imaginary kernel (function symbols t/T/W; data ignored).
M=$T/System.map
cat >"$M" <<'MAP'
ffffffff81000000 T _stext
ffffffff81001000 T kernel_clone
ffffffff81002000 t copy_process
ffffffff81003000 T schedule
ffffffff81004000 T schedule_timeout
ffffffff81005000 W free_initmem
ffffffff81006000 t run_init_process
ffffffff82000000 D jiffies
ffffffff83079e46 T start_kernel
MAP

cfg() { printf "$2" >"$T/$1.conf"; }
kb() { run "$KTRACE" kft --boot "$@"; }

cfg seed 'trigger start entry start_kernel\ntrigger stop entry free_initmem\nfilter mintime 500\n'
kb -m "$M" "$T/seed.conf"
is "$rc" 0 "the seed's boot sample: exit 0"
is "$(cat "$T/out")" 'ftrace=function_graph trace_clock=mono trace_buf_size=4096K trace_options=nooverwrite tracing_thresh=500 kprobe_event=p:ktrace_kft/stop,free_initmem ktrace_kft.config="trigger start entry start_kernel;trigger stop entry free_initmem;filter mintime 500"' \
	"  function_graph from boot, tracing_thresh=500, a kprobe event for the stop, the configuration"
is "$(lines "$T/err")" 0 "  nothing on stderr"

# The seed's do_fork sample with lists, depth, noints and a small log.
cfg graph '# the call tree of kernel_clone\ntrigger start entry kernel_clone\ntrigger stop exit kernel_clone\nfilter noints\nfilter funclist copy_process 0xffffffff81003000 fend\nfilter notrace schedule_timeout fend\nfilter depth 6\nlogentries 500\n'
kb -m "$M" "$T/graph.conf"
is "$(cat "$T/out")" 'ftrace=function_graph trace_clock=mono trace_buf_size=1024K trace_options=nooverwrite,nofuncgraph-irqs ftrace_filter=copy_process,schedule,kernel_clone ftrace_notrace=schedule_timeout ftrace_graph_max_depth=6 ftrace_graph_filter=kernel_clone ktrace_kft.config="trigger start entry kernel_clone;trigger stop exit kernel_clone;filter noints;filter funclist copy_process schedule fend;filter notrace schedule_timeout fend;filter depth 6;logentries 500"' \
	"start entry F + stop exit F: ftrace_graph_filter=F; lists, depth, noints; 0x address named; 500 entries -> the 1 MiB minimum"

cfg big 'trigger start exit kernel_clone\ntrigger stop exit schedule\nlogentries 100000\nfilter maxtime 900\nfilter onlyints\nautorepeat\n'
kb -m "$M" "$T/big.conf"
is "$(cat "$T/out")" 'ftrace=function_graph trace_clock=mono trace_buf_size=9375K trace_options=nooverwrite kprobe_event=r:ktrace_kft/start,kernel_clone;r:ktrace_kft/stop,schedule ktrace_kft.config="trigger start exit kernel_clone;trigger stop exit schedule;filter maxtime 900;filter onlyints;logentries 100000;autorepeat"' \
	"exit triggers: kretprobe events; 100000 entries x 96 bytes = 9375 KiB; maxtime, onlyints, autorepeat only in the configuration"

cfg time 'trigger start time 2000000\ntrigger stop time 5000\n'
kb -m "$M" -b 8192 "$T/time.conf"
is "$(cat "$T/out")" 'ftrace=function_graph trace_clock=mono trace_buf_size=8192K trace_options=nooverwrite ktrace_kft.config="trigger start time 2000000;trigger stop time 5000"' \
	"time triggers: no kprobe event; -b 8192 sets the buffer"

kb --kernel -m "$M" "$T/seed.conf"
is "$(cat "$T/out")" 'ktrace.kft_boot="trigger stop entry free_initmem;filter mintime 500"' \
	"--kernel: ktrace.ko's kft_boot parameter; start entry start_kernel = when the module loads"
cfg kwatch 'trigger start entry kernel_clone\nwatch stack 4096\n'
kb --kernel -m "$M" "$T/kwatch.conf"
is "$(cat "$T/out")" 'ktrace.kft_boot="trigger start entry kernel_clone;watch stack 4096"' "--kernel: a stack watch is kept"

kb -m - "$T/seed.conf"
is "$rc" 0 "-m -: names taken as written (no symbol map)"
is "$(sed 's/ ktrace_kft.config=.*//' "$T/out")" 'ftrace=function_graph trace_clock=mono trace_buf_size=4096K trace_options=nooverwrite tracing_thresh=500 kprobe_event=p:ktrace_kft/stop,free_initmem' \
	"  the same parameters"

# ---- refusals: one line naming FILE:LINE, exit 1, nothing on stdout
cfg watch '# stack\n\nfilter mintime 10\n  watch worst-stack 2048\n'
kb -m "$M" "$T/watch.conf"
is "$rc" 1 "watch: refused (exit 1)"
is "$(cat "$T/err")" "ktrace kft: $T/watch.conf:4: watch worst-stack: function_graph does not record the stack pointer, so a boot-time tracefs run cannot watch the stack (ktrace kft --boot --kernel can)" \
	"  FILE:LINE of the watch statement and why"
is "$(lines "$T/out")" 0 "  nothing printed"

cfg sk 'trigger start entry kernel_clone\ntrigger stop exit start_kernel\n'
kb -m "$M" "$T/sk.conf"
is "$rc:$(cat "$T/err")" "1:ktrace kft: $T/sk.conf:2: trigger stop exit start_kernel: start_kernel runs before any boot-time tracer and never returns; only 'trigger start entry start_kernel' (trace from boot) can name it" \
	"stop exit start_kernel: refused with FILE:LINE"
cfg sk2 'trigger start exit start_kernel\n'
kb -m "$M" "$T/sk2.conf"
like "$T/err" "^ktrace kft: $T/sk2.conf:1: trigger start exit start_kernel: " "start exit start_kernel: refused with FILE:LINE"

cfg unk 'filter mintime 500\ntrigger stop entry to_userspace\n'
kb -m "$M" "$T/unk.conf"
is "$rc:$(cat "$T/err")" "1:ktrace kft: $T/unk.conf:2:20: unknown function 'to_userspace' (names are looked up in $M)" \
	"a function the kernel does not have: FILE:LINE:COL"
cfg data 'filter funclist jiffies fend\n'
kb -m "$M" "$T/data.conf"
like "$T/err" "^ktrace kft: $T/data.conf:1:17: unknown function 'jiffies'" "a data symbol is no function"
cfg addr 'filter funclist 0xffffffff81000010 fend\n'
kb -m "$M" "$T/addr.conf"
is "$rc:$(cat "$T/err")" "1:ktrace kft: $T/addr.conf: function 0xffffffff81000010 is no function start in $M" \
	"an address inside a function: refused"
kb -m - "$T/addr.conf"
like "$T/err" "no symbol map \\(-m -\\): name the function" "-m - with an address: refused"

# 200 functions of 20 characters: more than x86's 2048-byte command line
{
	i=0
	while [ $i -lt 200 ]; do printf 'ffffffff8%07x T function_number_%04d\n' $((0x100000 + i * 16)) $i; i=$((i + 1)); done
} >>"$M"
{
	printf 'filter funclist'
	i=0
	while [ $i -lt 200 ]; do printf ' function_number_%04d' $i; i=$((i + 1)); done
	printf ' fend\n'
} >"$T/long.conf"
kb -m "$M" "$T/long.conf"
is "$rc" 1 "a command line over 2048 bytes: refused"
like "$T/err" "^ktrace kft: $T/long.conf: the boot parameters do not fit in the kernel command line \\([0-9]+ bytes or more; x86 holds 2047\\)" \
	"  and says why"

kb -m "$T/nomap" "$T/seed.conf"
is "$rc:$(cat "$T/err")" "1:ktrace kft: $T/nomap: No such file or directory" "a missing symbol map"
printf 'ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n' >"$T/stub.map"
kb -m "$T/stub.map" "$T/seed.conf"
like "$T/err" "stub.map: no function symbols .*-m - skips the check" "Debian's stub System.map: says what to do"
kb -m "$M" "$T/none.conf"
is "$rc:$(cat "$T/err")" "1:ktrace kft: $T/none.conf: No such file or directory" "a missing configuration"
kb
is "$rc" 2 "no configuration: usage error (exit 2)"
kb -b 1 "$T/seed.conf"
is "$rc" 2 "-b 1: usage error"
run "$KTRACE" kft --boot --help
like "$T/out" '^usage: ktrace kft --boot ' "--help"
run "$KTRACE" kft --tracefs extract
is "$rc" 2 "--tracefs extract without DST: usage error"

done_testing
