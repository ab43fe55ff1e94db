/*
 * formats/plugin.c - the table of ktrace-export.so (formats/plugin.h):
 * the exporters that need libprotobuf-c, libbabeltrace2 and libtracecmd,
 * loaded by `ktrace export` when it writes one of their formats.
 */
#include "formats/plugin.h"

__attribute__((visibility("default"))) const struct fmt_plugin ktrace_export_plugin = {
	.abi = FMT_PLUGIN_ABI,
	.size = sizeof(struct fmt_plugin),
	.pf_begin = fmt_pf_begin,
	.pf_seq_init = fmt_pf_seq_init,
	.pf_seq_free = fmt_pf_seq_free,
	.pf_process = fmt_pf_process,
	.pf_thread = fmt_pf_thread,
	.pf_track = fmt_pf_track,
	.pf_event = fmt_pf_event,
	.pf_sched_switch = fmt_pf_sched_switch,
	.pf_sched_wakeup = fmt_pf_sched_wakeup,
	.pf_end = fmt_pf_end,
	.ctf_open = fmt_ctf_open,
	.ctf_connect = fmt_ctf_connect,
	.ctf_event_class = fmt_ctf_event_class,
	.ctf_fail = fmt_ctf_fail,
	.ctf_run = fmt_ctf_run,
	.ctf_close = fmt_ctf_close,
	.tracedat_write = krec_tracedat_write,
};
