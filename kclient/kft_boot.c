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

/*
 * kft_boot_params() in steps over one struct boot: each step returns 0 or
 * a BOOT_* failure, and kft_boot_params() reports the failure (BOOT_FAIL:
 * the step has reported it already).
 */
enum { BOOT_FAIL = -1, BOOT_LONG = -2, BOOT_NOT_FUNC = -3 };

struct boot {
	const struct kft_boot_opts *o;
	const char *map, *path;     /* the symbol map ("-": none), the configuration file */
	int nomap;
	struct kft_ksyms syms;
	char *text;                 /* the configuration's text, @len bytes */
	size_t len;
	struct kft_config *cfg;     /* as parsed */
	char *out;                  /* the parameters so far: @n bytes used of @cap */
	size_t n, cap;
	kt_u64 bad;                 /* BOOT_NOT_FUNC: the address no symbol names */
	int from_boot;              /* "trigger start entry start_kernel" */
	const char *fstart, *fstop; /* the trigger functions' names (NULL: none) */
	int graph;                  /* start entry F + stop exit F: ftrace_graph_filter=F */
};

/*
 * boot_load - load the symbol map (unless -m -), read and parse the
 * configuration into b->cfg.  Returns 0 or BOOT_FAIL (reported).
 */
static int boot_load(struct boot *b)
{
	struct kft_error err;
	char msg[400];

	if (!b->nomap && kft_ksyms_load(&b->syms, b->map) < 0) {
		kcl_error(CMD, "%s: %s", b->map, strerror(errno));
		return BOOT_FAIL;
	}
	if (!b->nomap && !b->syms.n) {
		kcl_error(CMD, "%s: no function symbols (not root? a stub System.map? -m - skips the check)", b->map);
		return BOOT_FAIL;
	}
	b->text = kcl_slurp(b->path, &b->len, 65536);
	if (!b->text) {
		kcl_error(CMD, "%s: %s", b->path, errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
		return BOOT_FAIL;
	}
	kft_config_init(b->cfg);
	if (kft_config_parse(b->cfg, b->text, b->len, b->nomap ? any_name : kft_ksym_resolve, &b->syms,
			     &err) < 0) {
		kft_error_format(msg, sizeof(msg), b->path, &err);
		kcl_error(CMD, "%s (names are looked up in %s)", msg, b->nomap ? "no symbol map" : b->map);
		return BOOT_FAIL;
	}
	return 0;
}

/*
 * boot_start_kernel - triggers on start_kernel: "trigger start entry
 * start_kernel" sets b->from_boot; any other is refused.  Returns 0 or
 * BOOT_FAIL (reported).
 */
static int boot_start_kernel(struct boot *b)
{
	const struct kft_config *cfg = b->cfg;
	kt_u64 sk = 0;

	kft_ksym_resolve(&b->syms, "start_kernel", 12, &sk);
	if (cfg->start.kind == KFT_TRIG_ENTRY && sk && cfg->start.arg == sk)
		b->from_boot = 1;
	if ((cfg->start.kind == KFT_TRIG_EXIT && sk && cfg->start.arg == sk) ||
	    ((cfg->stop.kind == KFT_TRIG_ENTRY || cfg->stop.kind == KFT_TRIG_EXIT) && sk && cfg->stop.arg == sk)) {
		int stop = !(cfg->start.kind == KFT_TRIG_EXIT && cfg->start.arg == sk);

		kcl_error(CMD, "%s:%u: trigger %s %s start_kernel: start_kernel runs before any boot-time tracer and never returns; only 'trigger start entry start_kernel' (trace from boot) can name it",
			  b->path, stmt_line(b->text, "trigger", stop ? "stop" : "start", NULL), stop ? "stop" : "start",
			  (stop ? cfg->stop.kind : cfg->start.kind) == KFT_TRIG_ENTRY ? "entry" : "exit");
		return BOOT_FAIL;
	}
	return 0;
}

/* boot_config - append @fmt's one %s, the configuration encoded; 0 or BOOT_LONG. */
static int boot_config(struct boot *b, int drop_start, const char *fmt)
{
	char enc[CMDLINE_MAX + 1];

	if (encode(b->cfg, &b->syms, drop_start, enc, sizeof(enc)) < 0 ||
	    put(b->out, b->cap, &b->n, fmt, enc) < 0)
		return BOOT_LONG;
	return 0;
}

/*
 * boot_triggers - the tracefs backend's checks: no stack watch; the
 * trigger functions' names (b->fstart, b->fstop) and whether they make a
 * graph filter (b->graph).  Returns 0, BOOT_FAIL (reported) or
 * BOOT_NOT_FUNC.
 */
static int boot_triggers(struct boot *b)
{
	const struct kft_config *cfg = b->cfg;
	int start = (cfg->start.kind == KFT_TRIG_ENTRY || cfg->start.kind == KFT_TRIG_EXIT) && !b->from_boot;
	int stop = cfg->stop.kind == KFT_TRIG_ENTRY || cfg->stop.kind == KFT_TRIG_EXIT;

	if (cfg->watch != KFT_WATCH_NONE) {
		const char *w = cfg->watch == KFT_WATCH_STACK ? "stack" : "worst-stack";

		kcl_error(CMD, "%s:%u: watch %s: function_graph does not record the stack pointer, so a boot-time tracefs run cannot watch the stack (ktrace kft --boot --kernel can)",
			  b->path, stmt_line(b->text, "watch", w, NULL), w);
		return BOOT_FAIL;
	}
	if (start)
		b->fstart = kft_ksym_name(&b->syms, cfg->start.arg);
	if (stop)
		b->fstop = kft_ksym_name(&b->syms, cfg->stop.arg);
	if (start && !b->fstart) {
		b->bad = cfg->start.arg;
		return BOOT_NOT_FUNC;
	}
	if (stop && !b->fstop) {
		b->bad = cfg->stop.arg;
		return BOOT_NOT_FUNC;
	}
	b->graph = b->fstart && cfg->start.kind == KFT_TRIG_ENTRY && cfg->stop.kind == KFT_TRIG_EXIT &&
		   cfg->start.arg == cfg->stop.arg;
	return 0;
}

/*
 * boot_filters - ftrace= and its buffer size (KiB per CPU), options,
 * tracing_thresh, the function filters and the depth.  Returns 0,
 * BOOT_LONG or BOOT_NOT_FUNC.
 */
static int boot_filters(struct boot *b)
{
	const struct kft_config *cfg = b->cfg;
	unsigned kb = b->o->buf_kb;
	int r;

	if (!kb)
		kb = cfg->logentries ? (unsigned)((cfg->logentries * 96 + 1023) / 1024) : 4096;
	if (kb < 1024)
		kb = b->o->buf_kb ? b->o->buf_kb : 1024;
	if (put(b->out, b->cap, &b->n, "ftrace=function_graph trace_clock=mono trace_buf_size=%uK trace_options=nooverwrite%s",
		kb, (cfg->flags & KFT_CF_NOINTS) ? ",nofuncgraph-irqs" : "") < 0)
		return BOOT_LONG;
	if ((cfg->flags & KFT_CF_MINTIME) && cfg->mintime_us &&
	    put(b->out, b->cap, &b->n, " tracing_thresh=%" PRIu64, (uint64_t)cfg->mintime_us) < 0)
		return BOOT_LONG;
	if ((cfg->flags & KFT_CF_FUNCLIST) && cfg->nfuncs) {
		r = put_list(b->out, b->cap, &b->n, "ftrace_filter", cfg->funcs, cfg->nfuncs, &b->syms, &b->bad);
		if (r == -2)
			return BOOT_NOT_FUNC;
		if (r < 0 || (b->graph && put(b->out, b->cap, &b->n, ",%s", b->fstart) < 0))
			return BOOT_LONG;
	}
	if ((cfg->flags & KFT_CF_NOTRACE) && cfg->nnotrace) {
		r = put_list(b->out, b->cap, &b->n, "ftrace_notrace", cfg->notrace_fns, cfg->nnotrace,
			     &b->syms, &b->bad);
		if (r == -2)
			return BOOT_NOT_FUNC;
		if (r < 0)
			return BOOT_LONG;
	}
	if ((cfg->flags & KFT_CF_DEPTH) &&
	    put(b->out, b->cap, &b->n, " ftrace_graph_max_depth=%u", cfg->max_depth) < 0)
		return BOOT_LONG;
	return 0;
}

/*
 * boot_trigger_params - the triggers as ftrace_graph_filter= or
 * kprobe_event=, then the configuration.  Returns 0 or BOOT_LONG.
 */
static int boot_trigger_params(struct boot *b)
{
	const struct kft_config *cfg = b->cfg;

	if (b->graph) {
		if (put(b->out, b->cap, &b->n, " ftrace_graph_filter=%s", b->fstart) < 0)
			return BOOT_LONG;
	} else if (b->fstart || b->fstop) {
		if (put(b->out, b->cap, &b->n, " kprobe_event=") < 0)
			return BOOT_LONG;
		if (b->fstart && put(b->out, b->cap, &b->n, "%c:ktrace_kft/start,%s%s",
				     cfg->start.kind == KFT_TRIG_EXIT ? 'r' : 'p', b->fstart, b->fstop ? ";" : "") < 0)
			return BOOT_LONG;
		if (b->fstop && put(b->out, b->cap, &b->n, "%c:ktrace_kft/stop,%s",
				    cfg->stop.kind == KFT_TRIG_EXIT ? 'r' : 'p', b->fstop) < 0)
			return BOOT_LONG;
	}
	return boot_config(b, 0, " " KFT_BOOT_CONFIG_PARAM "=\"%s\"");
}

/*
 * boot_tracefs - the tracefs backend's parameters, in order.  Returns 0,
 * BOOT_FAIL (reported), BOOT_LONG or BOOT_NOT_FUNC.
 */
static int boot_tracefs(struct boot *b)
{
	int r = boot_triggers(b);

	if (!r)
		r = boot_filters(b);
	if (!r)
		r = boot_trigger_params(b);
	return r;
}

/* kft_boot_params - see kclient/kclient.h: the steps above, failures reported here. */
char *kft_boot_params(const struct kft_boot_opts *o)
{
	static struct kft_config cfg;
	struct boot b = { .o = o, .map = o->symbols ? o->symbols : "/proc/kallsyms", .path = o->config,
			  .cfg = &cfg, .cap = 8192 };
	int r;

	b.nomap = !strcmp(b.map, "-");
	r = boot_load(&b);
	if (!r)
		r = boot_start_kernel(&b);
	if (!r && !(b.out = malloc(b.cap)))
		r = BOOT_FAIL;
	if (!r)
		r = o->module ? boot_config(&b, b.from_boot, "ktrace.kft_boot=\"%s\"") : boot_tracefs(&b);
	if (!r && b.n >= CMDLINE_MAX)
		r = BOOT_LONG;
	if (!r) {
		free(b.text);
		kft_ksyms_free(&b.syms);
		return b.out;
	}
	if (r == BOOT_NOT_FUNC)
		kcl_error(CMD, "%s: function 0x%" PRIx64 " is no function start in %s", b.path, (uint64_t)b.bad,
			  b.nomap ? "no symbol map (-m -): name the function" : b.map);
	else if (r == BOOT_LONG)
		kcl_error(CMD, "%s: the boot parameters do not fit in the kernel command line (%zu bytes or more; x86 holds %d): shorten the funclist or notrace list",
			  b.path, b.n, CMDLINE_MAX - 1);
	free(b.out);
	free(b.text);
	kft_ksyms_free(&b.syms);
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
