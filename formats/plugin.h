/*
 * formats/plugin.h - the exporters that need big libraries, as one shared
 * object that `ktrace export` loads on first use: Perfetto's protobuf
 * (formats/perfetto.c, libprotobuf-c), CTF (formats/ctf.c,
 * libbabeltrace2 with GLib) and trace-cmd's trace.dat (kclient/tracedat.c,
 * libtracecmd).  Linked into the ktrace binary, these libraries cost every
 * command their loading at start (a third of `ktrace --version`'s time);
 * in ktrace-export.so only the exports that use them pay.
 *
 * The plugin exports one symbol, FMT_PLUGIN_SYMBOL: a struct fmt_plugin
 * whose members are the functions of formats/formats.h and
 * kclient/kclient.h of the same names (fmt_pf_begin -> pf_begin, ...),
 * with their documented behaviour.  Everything else in the object is
 * local (formats/plugin.map), so its copies of lib/safefile.c and
 * formats/utf8.c never interpose on the binary's.  The loader is
 * cli_export_plugin() (cli/plugin.c); @abi and @size guard against a
 * plugin from another build.
 */
#ifndef KTRACE_FORMATS_PLUGIN_H
#define KTRACE_FORMATS_PLUGIN_H

#include <stdint.h>
#include <stdio.h>

#include "formats/formats.h"
#include "kclient/kclient.h"

#define FMT_PLUGIN_ABI 1
#define FMT_PLUGIN_SYMBOL "ktrace_export_plugin"
#define FMT_PLUGIN_FILE "ktrace-export.so"

struct fmt_plugin {
	unsigned abi;  /* FMT_PLUGIN_ABI */
	unsigned size; /* sizeof(struct fmt_plugin) */

	/* Perfetto (formats/perfetto.c) */
	int (*pf_begin)(struct fmt_pf *w, FILE *out, uint64_t mono_ns, uint64_t realtime_ns);
	void (*pf_seq_init)(struct fmt_pf_seq *s, uint32_t id);
	void (*pf_seq_free)(struct fmt_pf_seq *s);
	void (*pf_process)(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid,
			   const char *name);
	void (*pf_thread)(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint32_t pid,
			  uint32_t tid, const char *name);
	void (*pf_track)(struct fmt_pf *w, struct fmt_pf_seq *s, uint64_t uuid, uint64_t parent,
			 const char *name);
	void (*pf_event)(struct fmt_pf *w, struct fmt_pf_seq *s, int type, uint64_t ts_ns,
			 uint64_t track, const char *name, const char *cat,
			 const struct fmt_pf_arg *args, unsigned nargs);
	void (*pf_sched_switch)(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns,
				const char *prev_comm, uint32_t prev_pid, uint64_t prev_state,
				const char *next_comm, uint32_t next_pid);
	void (*pf_sched_wakeup)(struct fmt_pf *w, uint32_t seq, int cpu, uint64_t ts_ns,
				uint32_t cur_pid, const char *comm, uint32_t pid);
	int (*pf_end)(struct fmt_pf *w);

	/* CTF (formats/ctf.c) */
	struct fmt_ctf *(*ctf_open)(const char *outdir, fmt_ctf_report_fn *report, void *arg);
	int (*ctf_connect)(struct fmt_ctf *w, const struct fmt_ctf_trace *tr, fmt_ctf_next_fn *next,
			   void *arg);
	int (*ctf_event_class)(struct fmt_ctf *w, const char *name, const char *const *fields,
			       unsigned n);
	void (*ctf_fail)(struct fmt_ctf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	int (*ctf_run)(struct fmt_ctf *w);
	int (*ctf_close)(struct fmt_ctf *w, int ok, uint64_t *events);

	/* trace-cmd's trace.dat (kclient/tracedat.c) */
	int (*tracedat_write)(const char *dir, int fd, struct krec_tracedat_info *info, char *msg,
			      size_t len);
};

#endif
