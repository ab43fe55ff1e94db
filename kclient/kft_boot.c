/*
 * kclient/kft_boot.c - boot-time KFT (seed 002's "static mode"): a KFT
 * configuration turned into the kernel command line that runs it from
 * boot, kft_boot_params() in kclient/kclient.h, what
 *
 *   ktrace kft --boot [--tracefs | --kernel] [-m SYSTEM.MAP] [-b KB] CONFIG
 *
 * prints (cli/cmd_kft_boot.c).  After the boot, `ktrace kft --tracefs
 * extract` (kft_fgraph_extract(), kclient/kft_tracefs.c) or `ktrace kft
 * --kernel extract` writes the trace directory.
 *
 * tracefs backend: the kernel's function_graph tracer, started by the
 * boot parameters alone (6.1 has no bootconfig in Debian's build:
 * CONFIG_BOOT_CONFIG and CONFIG_BOOTTIME_TRACING are off):
 *
 *   always                   ftrace=function_graph trace_clock=mono
 *                            trace_options=nooverwrite (KFT's log stopped
 *                            when full) trace_buf_size=KB per CPU
 *   filter mintime U         tracing_thresh=U (us; only exits are written)
 *   filter noints            trace_options=...,nofuncgraph-irqs
 *   filter funclist F.. fend ftrace_filter=F,..
 *   filter notrace F.. fend  ftrace_notrace=F,..
 *   filter depth N           ftrace_graph_max_depth=N
 *   logentries N             trace_buf_size=N*96 bytes per CPU (an exit and
 *                            an entry event), at least 1 MiB; -b overrides
 *   trigger start entry start_kernel
 *                            nothing: function_graph records from the moment
 *                            it is registered during boot (core initcalls;
 *                            "Starting tracer" in dmesg), the earliest a
 *                            boot parameter can start it
 *   trigger start entry F    kprobe_event=p:ktrace_kft/start,F
 *     + trigger stop exit F  ftrace_graph_filter=F instead: F's call tree
 *   trigger stop entry|exit G kprobe_event=p|r:ktrace_kft/stop,G
 *   the configuration        ktrace_kft.config="S1;S2;..." (names, one
 *                            statement per ';'), read back by extract
 *
 * 6.1 has no trace_trigger= (6.2 added it), so no boot parameter can attach
 * traceon/traceoff to the trigger events: the kernel records from boot
 * until `ktrace kft --tracefs extract` switches tracing off, and extract
 * applies the triggers (the trigger events are in the ring buffer), time
 * triggers, maxtime, onlyints, funclist, notrace, depth and logentries to
 * the calls read, as `ktrace kft --tracefs` does.
 *
 * Refused (FILE:LINE: message): watch stack / worst-stack (function_graph
 * has no stack pointer), triggers that name start_kernel other than
 * "trigger start entry start_kernel" (it runs before the tracer and never
 * returns), a command line longer than x86's 2048 bytes.
 *
 * module backend: ktrace.kft_boot="S1;S2;..." (ktrace.ko's parameter: the
 * module loads the configuration and primes the run in its init, so
 * loading it from the initramfs starts the run; modprobe takes
 * ktrace.PARAM= from the kernel command line).  "trigger start entry
 * start_kernel" becomes "start when the module loads" (the statement is
 * dropped); a kretprobe cannot be placed on start_kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kclient/internal.h"
#include "kft/config.h"

#define CMD "kft"
#define CMDLINE_MAX 2048 /* x86 COMMAND_LINE_SIZE, NUL included */

/* 1-based line of the first statement whose words begin @w1 [@w2] [@w3], else 0. */
static unsigned stmt_line(const char *text, const char *w1, const char *w2, const char *w3)
{
	const char *want[3] = { w1, w2, w3 };
	unsigned line = 1;

	for (const char *p = text; *p; line++) {
		const char *e = strchr(p, '\n'), *q = p;
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int ok = 1;

		for (int i = 0; i < 3 && want[i] && ok; i++) {
			size_t l = strlen(want[i]);

			while (q < p + n && (*q == ' ' || *q == '\t'))
				q++;
			if ((size_t)(p + n - q) < l || strncmp(q, want[i], l) ||
			    (q + l < p + n && q[l] != ' ' && q[l] != '\t' && q[l] != '\r'))
				ok = 0;
			q += l;
		}
		if (ok)
			return line;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/*
 * kft_resolve_fn without a symbol map (-m -): any name is taken as written,
 * given an invented address above every real one (so @arg stays sorted).
 */
static int any_name(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	struct kft_ksyms *s = arg;

	if (kft_ksym_resolve(s, name, len, addr) == 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct kft_ksym *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n].name = strndup(name, len);
	if (!s->v[s->n].name)
		return -ENOMEM;
	s->v[s->n].addr = *addr = 0xfff0000000000000ull + s->n;
	s->n++;
	return 0;
}

static kt_u32 map_name(void *arg, kt_u64 addr, char *buf, kt_u32 size)
{
	const char *s = kft_ksym_name(arg, addr);
	int n = s ? snprintf(buf, size, "%s", s) : 0;

	return n < 0 || (kt_u32)n >= size ? 0 : (kt_u32)n;
}

/* Append @fmt to the line @b (*@n bytes used, @cap bytes); -1 if it does not fit. */
static int put(char *b, size_t cap, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int put(char *b, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(b + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= cap - *n)
		return -1;
	*n += (size_t)r;
	return 0;
}

/* ",".join of the names of @fn[0..@n) into @b; -1 on a name the map lacks (*@bad). */
static int put_list(char *b, size_t cap, size_t *n, const char *param, const kt_u64 *fn, kt_u32 cnt,
		    const struct kft_ksyms *syms, kt_u64 *bad)
{
	if (put(b, cap, n, " %s=", param) < 0)
		return -1;
	for (kt_u32 i = 0; i < cnt; i++) {
		const char *s = kft_ksym_name(syms, fn[i]);

		if (!s) {
			*bad = fn[i];
			return -2;
		}
		if (put(b, cap, n, "%s%s", i ? "," : "", s) < 0)
			return -1;
	}
	return 0;
}

/*
 * The configuration as one parameter value: statements with names (from
 * @syms), ';' between them, without new/begin/end; the start_kernel start
 * dropped if @drop_start.
 */
static int encode(const struct kft_config *cfg, const struct kft_ksyms *syms, int drop_start, char *out,
		  size_t cap)
{
	struct kft_config c = *cfg;
	static char text[32768];
	size_t n = 0;
	char *line, *save = NULL;

	if (drop_start)
		c.start.kind = KFT_TRIG_NONE;
	if (kft_config_format(&c, text, sizeof(text), "", map_name, (void *)syms) >= sizeof(text))
		return -1;
	out[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "new") || !strcmp(line, "begin") || !strcmp(line, "end") || !line[0])
			continue;
		if (put(out, cap, &n, "%s%s", n ? ";" : "", line) < 0)
			return -1;
	}
	return 0;
}

char *kft_boot_params(const struct kft_boot_opts *o)
{
	static struct kft_config cfg;
	const char *map = o->symbols ? o->symbols : "/proc/kallsyms", *path = o->config;
	int nomap = !strcmp(map, "-");
	struct kft_ksyms syms = { 0 };
	struct kft_error err;
	char *text = NULL, *out = NULL, msg[400], enc[CMDLINE_MAX + 1];
	const char *fstart = NULL, *fstop = NULL;
	size_t len = 0, n = 0, cap = 8192;
	kt_u64 bad = 0, sk = 0;
	int from_boot = 0, graph = 0, r;
	unsigned kb;

	if (!nomap && kft_ksyms_load(&syms, map) < 0) {
		kcl_error(CMD, "%s: %s", map, strerror(errno));
		goto fail;
	}
	if (!nomap && !syms.n) {
		kcl_error(CMD, "%s: no function symbols (not root? a stub System.map? -m - skips the check)", map);
		goto fail;
	}
	text = kcl_slurp(path, &len, 65536);
	if (!text) {
		kcl_error(CMD, "%s: %s", path, errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
		goto fail;
	}
	kft_config_init(&cfg);
	if (kft_config_parse(&cfg, text, len, nomap ? any_name : kft_ksym_resolve, &syms, &err) < 0) {
		kft_error_format(msg, sizeof(msg), path, &err);
		kcl_error(CMD, "%s (names are looked up in %s)", msg, nomap ? "no symbol map" : map);
		goto fail;
	}
	kft_ksym_resolve(&syms, "start_kernel", 12, &sk);
	if (cfg.start.kind == KFT_TRIG_ENTRY && sk && cfg.start.arg == sk)
		from_boot = 1;
	if ((cfg.start.kind == KFT_TRIG_EXIT && sk && cfg.start.arg == sk) ||
	    ((cfg.stop.kind == KFT_TRIG_ENTRY || cfg.stop.kind == KFT_TRIG_EXIT) && sk && cfg.stop.arg == sk)) {
		int stop = !(cfg.start.kind == KFT_TRIG_EXIT && cfg.start.arg == sk);

		kcl_error(CMD, "%s:%u: trigger %s %s start_kernel: start_kernel runs before any boot-time tracer and never returns; only 'trigger start entry start_kernel' (trace from boot) can name it",
			  path, stmt_line(text, "trigger", stop ? "stop" : "start", NULL), stop ? "stop" : "start",
			  (stop ? cfg.stop.kind : cfg.start.kind) == KFT_TRIG_ENTRY ? "entry" : "exit");
		goto fail;
	}
	out = malloc(cap);
	if (!out)
		goto fail;
	if (o->module) {
		if (encode(&cfg, &syms, from_boot, enc, sizeof(enc)) < 0 ||
		    put(out, cap, &n, "ktrace.kft_boot=\"%s\"", enc) < 0)
			goto too_long;
		goto done;
	}
	if (cfg.watch != KFT_WATCH_NONE) {
		const char *w = cfg.watch == KFT_WATCH_STACK ? "stack" : "worst-stack";

		kcl_error(CMD, "%s:%u: watch %s: function_graph does not record the stack pointer, so a boot-time tracefs run cannot watch the stack (ktrace kft --boot --kernel can)",
			  path, stmt_line(text, "watch", w, NULL), w);
		goto fail;
	}
	if ((cfg.start.kind == KFT_TRIG_ENTRY || cfg.start.kind == KFT_TRIG_EXIT) && !from_boot)
		fstart = kft_ksym_name(&syms, cfg.start.arg);
	if (cfg.stop.kind == KFT_TRIG_ENTRY || cfg.stop.kind == KFT_TRIG_EXIT)
		fstop = kft_ksym_name(&syms, cfg.stop.arg);
	if ((cfg.start.kind == KFT_TRIG_ENTRY || cfg.start.kind == KFT_TRIG_EXIT) && !from_boot && !fstart) {
		bad = cfg.start.arg;
		goto not_func;
	}
	if ((cfg.stop.kind == KFT_TRIG_ENTRY || cfg.stop.kind == KFT_TRIG_EXIT) && !fstop) {
		bad = cfg.stop.arg;
		goto not_func;
	}
	graph = fstart && cfg.start.kind == KFT_TRIG_ENTRY && cfg.stop.kind == KFT_TRIG_EXIT &&
		cfg.start.arg == cfg.stop.arg;
	kb = o->buf_kb;
	if (!kb)
		kb = cfg.logentries ? (unsigned)((cfg.logentries * 96 + 1023) / 1024) : 4096;
	if (kb < 1024)
		kb = o->buf_kb ? o->buf_kb : 1024;
	if (put(out, cap, &n, "ftrace=function_graph trace_clock=mono trace_buf_size=%uK trace_options=nooverwrite%s",
		kb, (cfg.flags & KFT_CF_NOINTS) ? ",nofuncgraph-irqs" : "") < 0)
		goto too_long;
	if ((cfg.flags & KFT_CF_MINTIME) && cfg.mintime_us &&
	    put(out, cap, &n, " tracing_thresh=%" PRIu64, (uint64_t)cfg.mintime_us) < 0)
		goto too_long;
	if ((cfg.flags & KFT_CF_FUNCLIST) && cfg.nfuncs) {
		r = put_list(out, cap, &n, "ftrace_filter", cfg.funcs, cfg.nfuncs, &syms, &bad);
		if (r == -2)
			goto not_func;
		if (r < 0 || (graph && put(out, cap, &n, ",%s", fstart) < 0))
			goto too_long;
	}
	if ((cfg.flags & KFT_CF_NOTRACE) && cfg.nnotrace) {
		r = put_list(out, cap, &n, "ftrace_notrace", cfg.notrace_fns, cfg.nnotrace, &syms, &bad);
		if (r == -2)
			goto not_func;
		if (r < 0)
			goto too_long;
	}
	if ((cfg.flags & KFT_CF_DEPTH) && put(out, cap, &n, " ftrace_graph_max_depth=%u", cfg.max_depth) < 0)
		goto too_long;
	if (graph) {
		if (put(out, cap, &n, " ftrace_graph_filter=%s", fstart) < 0)
			goto too_long;
	} else if (fstart || fstop) {
		if (put(out, cap, &n, " kprobe_event=") < 0)
			goto too_long;
		if (fstart && put(out, cap, &n, "%c:ktrace_kft/start,%s%s", cfg.start.kind == KFT_TRIG_EXIT ? 'r' : 'p',
				  fstart, fstop ? ";" : "") < 0)
			goto too_long;
		if (fstop && put(out, cap, &n, "%c:ktrace_kft/stop,%s", cfg.stop.kind == KFT_TRIG_EXIT ? 'r' : 'p',
				 fstop) < 0)
			goto too_long;
	}
	if (encode(&cfg, &syms, 0, enc, sizeof(enc)) < 0 ||
	    put(out, cap, &n, " " KFT_BOOT_CONFIG_PARAM "=\"%s\"", enc) < 0)
		goto too_long;
done:
	if (n >= CMDLINE_MAX)
		goto too_long;
	free(text);
	kft_ksyms_free(&syms);
	return out;
not_func:
	kcl_error(CMD, "%s: function 0x%" PRIx64 " is no function start in %s", path, (uint64_t)bad,
		  nomap ? "no symbol map (-m -): name the function" : map);
	goto fail;
too_long:
	kcl_error(CMD, "%s: the boot parameters do not fit in the kernel command line (%zu bytes or more; x86 holds %d): shorten the funclist or notrace list",
		  path, n, CMDLINE_MAX - 1);
fail:
	free(out);
	free(text);
	kft_ksyms_free(&syms);
	return NULL;
}

int kft_boot_config_text(const char *cmdline, const char *param, char *out, size_t cap)
{
	size_t pl = strlen(param);
	const char *p = cmdline, *v, *e;

	while ((p = strstr(p, param)) != NULL) {
		if ((p == cmdline || p[-1] == ' ') && p[pl] == '=')
			break;
		p += pl;
	}
	if (!p)
		return 0;
	v = p + pl + 1;
	if (*v == '"') {
		v++;
		e = strchr(v, '"');
		if (!e)
			e = v + strlen(v);
	} else {
		e = v + strcspn(v, " \n");
	}
	if ((size_t)(e - v) >= cap)
		return -1;
	for (size_t i = 0; v + i < e; i++)
		out[i] = v[i] == ';' ? '\n' : v[i];
	out[e - v] = '\0';
	return 1;
}
