/*
 * cli/cmd_addr2sym.c - `ktrace addr2sym [options] DIR`: KFT's addr2sym
 * listing (seed 002) of a function trace: one line per recorded call with
 * its Entry time and Delta (duration) in microseconds, the PID (the thread,
 * as KFT showed the kernel task), the Function and where it was Called At
 * (`function+0xoff` of the return address), symbols from the trace's
 * memory maps and build ids through elfutils (reader/symbols.c).
 *
 * Calls are listed in entry order (callers before their callees, all
 * threads interlaced by time), as KFT's log was; records are written at
 * exit, so they are streamed in entry order (reader/preorder.c) where
 * the trace allows, else sorted first
 * (reader/callsort.c, bounded memory); --unsorted lists them as recorded.  A header taken from the
 * run's status file (DIR/kft-status) says how the run started and stopped
 * and what the filters dropped, like KFT's log header.
 *
 * Exit status: 0, 1 the trace had errors (everything readable was
 * printed) or output failed, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "formats/formats.h"
#include "cli/output.h"
#include "cli/select.h"
#include "reader/reader.h"

#define CMD "addr2sym"

struct aopts {
	int lines, inl, unsorted, noheader, usec;
	const char *symfile;
	size_t sort_mem;
	struct cli_select sel;
	const char *dir;
};

/* What a call-site key prints as (cached per key). */
struct keytext {
	char *func, *site, *src;
	char *tail;   /* the line after the PID column, as print_call() writes it (made on first use) */
	size_t ntail;
};

struct a2s {
	struct aopts o;
	struct ktr_trace *t;
	struct ktr_syms *syms;
	struct keytext *kt; /* by key, for keys < nkt */
	size_t nkt;
	struct keytext extra; /* scratch for keys beyond the array */
	uint64_t origin;
	int wf; /* Function column width */
	struct ktr_callsort *sorter; /* NULL with --unsorted */
	struct ktr_preorder *pre;    /* the calls streamed in entry order (a2s_stream()) */
	uint64_t calls, call_records; /* after and before the selection */
};

enum { OPT_INLINE = CLI_OPT_LONG, OPT_UNSORTED, OPT_SORTMEM };

/* cli_opt_fn: --sort-mem. */
static int take_option(void *arg, int key, const char *val)
{
	struct aopts *o = arg;

	return cli_parse_sort_mem(CMD, val, &o->sort_mem);
}

static const struct cli_opt opts[] = {
	CLI_OPT_FLAG("lines", 'l', struct aopts, lines, "add the source file:line of each call site"),
	CLI_OPT_FLAG("inline", OPT_INLINE, struct aopts, inl, "name the functions inlined at each call site"),
	CLI_OPT_STRING("symbols", 'm', "FILE", struct aopts, symfile,
		       "read the traced executable's symbols from FILE\n"
		       "(a copy with debug information, or a moved binary)"),
	CLI_OPT_FLAG("unsorted", OPT_UNSORTED, struct aopts, unsorted,
		     "list calls as recorded (by exit time), streaming"),
	CLI_OPT_INCLUDE(cli_select_opts),
	CLI_OPT_FLAG("no-header", 'H', struct aopts, noheader, "only the table"),
	CLI_OPT_FLAG("usec", 'u', struct aopts, usec, "whole microseconds, as KFT printed them"),
	CLI_OPT("sort-mem", OPT_SORTMEM, "BYTES", "sort the calls in this much memory (default 64M)\n"
							 "instead of streaming them"),
	CLI_OPT_INCLUDE(cli_output_opts),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace addr2sym [options] [DIR]\n"
		"\n"
		"KFT's addr2sym listing of the function trace in DIR: one line per recorded\n"
		"call, in entry order, with\n"
		"  Entry      when the call began, microseconds since the trace was set up\n"
		"  Delta      how long it lasted, microseconds (0: the exit was not seen)\n"
		"  PID        the thread that made it\n"
		"  Function   the function called\n"
		"  Called At  the return address in the caller, as function+0xoffset\n"
		"Symbols come from the files and build ids recorded in the trace (PIE\n"
		"executables, shared libraries, separate debug files); a file that changed or\n"
		"has no symbols is named once on stderr and its addresses are printed as\n"
		"[file]+0xoffset.  DIR defaults to ./ktrace.data.\n",
	.opts = opts,
	.tail =
		"Exit status: 0, 1 the trace has errors (all readable calls were printed)\n"
		"or output failed, 2 usage error.  See ktrace-addr2sym(1).\n",
};

/* ------------------------------------------------------------------ */
/* The header: KFT's log header, from DIR/kft-status                   */
/* ------------------------------------------------------------------ */

/* The value of "KEY: value" in @text (up to the newline) into @buf, or NULL. */
static const char *status_value(const char *text, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':' && p[kl + 1] == ' ') {
			const char *v = p + kl + 2, *e = strchr(v, '\n');
			size_t n = e ? (size_t)(e - v) : strlen(v);

			if (n >= len)
				n = len - 1;
			memcpy(buf, v, n);
			buf[n] = 0;
			return buf;
		}
	}
	return NULL;
}

/* "31312 us by entry to f" -> "31312 usec by entry to function f" */
static void put_event(FILE *out, const char *what, const char *v)
{
	const char *by = strstr(v, " us by ");

	if (!v[0] || !strcmp(v, "-"))
		return;
	if (!by) {
		fprintf(out, "Logging %s at %s\n", what, v);
		return;
	}
	fprintf(out, "Logging %s at %.*s usec by ", what, (int)(by - v), v);
	by += 7;
	if (!strncmp(by, "entry to ", 9))
		fprintf(out, "entry to function %s\n", by + 9);
	else if (!strncmp(by, "exit from ", 10))
		fprintf(out, "exit from function %s\n", by + 10);
	else
		fprintf(out, "%s\n", by);
}

static void print_header(struct a2s *a, FILE *out)
{
	char v[512], *text;
	const struct ktr_info *in = ktr_info(a->t);
	FILE *f = cli_fopen_in(ktr_dir(a->t), "kft-status", NULL); /* refusals: said by ktr_open() */
	size_t n;

	if (!f)
		return;
	text = malloc(65536);
	n = text ? fread(text, 1, 65535, f) : 0;
	fclose(f);
	if (!text)
		return;
	text[n] = 0;
	if (in->pid) /* a program's trace */
		fprintf(out, "Function trace of %s (pid %" PRIu32 "), run %s\n\n",
			in->comm && in->comm[0] ? in->comm : "?", in->pid,
			status_value(text, "run", v, sizeof(v)) ? v : "?");
	else /* the kernel's (ktrace kft --kernel/--tracefs): no program */
		fprintf(out, "Function trace of the kernel%s%s, run %s\n\n", in->kernel[0] ? " " : "",
			in->kernel, status_value(text, "run", v, sizeof(v)) ? v : "?");
	if (status_value(text, "started", v, sizeof(v)))
		put_event(out, "started", v);
	if (status_value(text, "stopped", v, sizeof(v)))
		put_event(out, "stopped", v);
	{
		const char *cfg = strstr(text, "configuration text:\n");
		int any = 0;

		for (const char *p = cfg ? cfg + 20 : NULL; p && *p;) {
			const char *e = strchr(p, '\n'), *w = p;
			size_t len = e ? (size_t)(e - p) : strlen(p);

			while (w < p + len && (*w == ' ' || *w == '\t'))
				w++;
			if ((size_t)(w - p) < len && strncmp(w, "new", 3) && strncmp(w, "begin", 5) &&
			    strncmp(w, "end", 3)) {
				if (!any)
					fputs("\nConfiguration:\n", out);
				fprintf(out, "  %.*s\n", (int)(len - (size_t)(w - p)), w);
				any = 1;
			}
			p = e ? e + 1 : NULL;
		}
	}
	fputs("\nFilter counters:\n", out);
	if (status_value(text, "entries filtered", v, sizeof(v)))
		fprintf(out, "Entries filtered = %s\n", v);
	if (status_value(text, "entries unfinished", v, sizeof(v)))
		fprintf(out, "Entries not finished (Delta 0) = %s\n", v);
	if (status_value(text, "entries lost", v, sizeof(v)))
		fprintf(out, "Entries lost = %s\n", v);
	if (status_value(text, "entries kept", v, sizeof(v)))
		fprintf(out, "Number of entries after filters = %s\n", v);
	fputc('\n', out);
	free(text);
}

/* ------------------------------------------------------------------ */
/* The listing                                                         */
/* ------------------------------------------------------------------ */

static void keytext_free(struct keytext *k)
{
	free(k->func);
	free(k->site);
	free(k->src);
	free(k->tail);
	memset(k, 0, sizeof(*k));
}

/* What key @key prints as. */
static struct keytext *text_of(struct a2s *a, uint32_t key)
{
	struct keytext *k;
	uint64_t func = 0, site = 0;
	struct ktr_sym s;
	char buf[1024];
	unsigned flags = KTR_SYM_RETADDR;

	if (key < (1u << 24)) {
		if (key >= a->nkt) {
			size_t n = a->nkt ? a->nkt : 1024;
			struct keytext *nk;

			while (n <= key)
				n *= 2;
			nk = realloc(a->kt, n * sizeof(*nk));
			if (!nk)
				goto scratch;
			memset(nk + a->nkt, 0, (n - a->nkt) * sizeof(*nk));
			a->kt = nk;
			a->nkt = n;
		}
		k = &a->kt[key];
		if (k->func)
			return k;
	} else {
scratch:
		k = &a->extra;
		keytext_free(k);
	}
	ktr_call_key_addrs(a->t, key, &func, &site);
	if (func) {
		ktr_sym_lookup(a->syms, func, 0, &s);
		k->func = strdup(ktr_sym_format(&s, 1, buf, sizeof(buf)));
	} else {
		k->func = strdup("?");
	}
	if (a->o.lines)
		flags |= KTR_SYM_LINES;
	if (a->o.inl)
		flags |= KTR_SYM_INLINE;
	if (site) {
		size_t n;

		ktr_sym_lookup(a->syms, site, flags, &s);
		ktr_sym_format(&s, 2, buf, sizeof(buf));
		n = strlen(buf);
		for (unsigned i = 0; i < s.ninline && n + 16 < sizeof(buf); i++) {
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : " (inlined: ",
					      s.inl[i].name);
			if (i + 1 == s.ninline && n + 2 < sizeof(buf))
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, ")");
		}
		k->site = strdup(buf);
		if (s.src) {
			const char *base = strrchr(s.src, '/');

			snprintf(buf, sizeof(buf), "%s:%u", base ? base + 1 : s.src, s.line);
			k->src = strdup(buf);
		}
	} else {
		k->site = strdup("?");
	}
	if (!k->src)
		k->src = strdup("?");
	if (!k->func || !k->site || !k->src) {
		keytext_free(k);
		return NULL;
	}
	return k;
}

static void print_columns(struct a2s *a, FILE *out)
{
	int we = a->o.usec ? 8 : 11;

	fprintf(out, "%*s   %*s   %5s   %*s   %s%s\n", -we, " Entry", -we, " Delta", "PID", a->wf,
		"Function", a->o.lines ? "Called At                    " : "Called At",
		a->o.lines ? "Source" : "");
	fprintf(out, "%.*s   %.*s   -----   %.*s   --------------------------%s\n", we,
		"------------", we, "------------", a->wf,
		"----------------------------------------------------------------", a->o.lines ? "   --------------------" : "");
}

/*
 * Key @k's Function and Called At columns (with -l the source too), as
 * one text made once: "   FUNCTION   SITE" with the widths of the header.
 */
static const char *tail_of(struct a2s *a, struct keytext *k, size_t *len)
{
	struct fmt_line l;
	FILE *mem;
	char *text = NULL;
	size_t n = 0;

	if (k->tail) {
		*len = k->ntail;
		return k->tail;
	}
	if (!(mem = open_memstream(&text, &n)))
		return NULL;
	l.out = mem;
	l.n = 0;
	fmt_line_put(&l, "   ", 3);
	fmt_line_pad(&l, k->func, a->wf);
	fmt_line_put(&l, "   ", 3);
	if (a->o.lines) {
		fmt_line_pad(&l, k->site, -26);
		fmt_line_put(&l, "   ", 3);
		fmt_line_pad(&l, k->src, 0);
	} else {
		fmt_line_pad(&l, k->site, 0);
	}
	fwrite_unlocked(l.b, 1, l.n, mem);
	if (fclose(mem)) {
		free(text);
		return NULL;
	}
	k->tail = text;
	*len = k->ntail = n;
	return text;
}

/* One call's line: Entry, Delta, PID, then its key's columns (tail_of()), written at once. */
static void print_call(struct a2s *a, FILE *out, uint64_t entry, uint64_t dur, unsigned flags,
		       uint32_t tid, uint32_t key)
{
	struct keytext *k = text_of(a, key), unknown = { "?", "?", "?", NULL, 0 };
	char num[32], line[4096], *p = line;
	size_t we = a->o.usec ? 8 : 11, n = 0;
	const char *tail = tail_of(a, k ? k : &unknown, &n);

	p = fmt_rjust_to(p, num, (size_t)(fmt_us_to(num, entry >= a->origin ? (int64_t)(entry - a->origin) :
						     -(int64_t)(a->origin - entry), a->o.usec) - num), we);
	p = (char *)memcpy(p, "   ", 3) + 3;
	if (flags & KTRACE_CALLF_UNFINISHED)
		p = fmt_rjust_to(p, "0", 1, we);
	else
		p = fmt_rjust_to(p, num, (size_t)(fmt_us_to(num, (int64_t)dur, a->o.usec) - num), we);
	p = (char *)memcpy(p, "   ", 3) + 3;
	p = fmt_rjust_to(p, num, (size_t)(fmt_u64_to(num, tid) - num), 5);
	if (!tail)
		n = 0;
	if (n <= sizeof(line) - (size_t)(p - line) - 16) { /* the whole line at once */
		p = (char *)memcpy(p, tail, n) + n;
		if (flags & KTRACE_CALLF_WATCH)
			p = stpcpy(p, "   [watch]");
		*p++ = '\n';
		fwrite_unlocked(line, 1, (size_t)(p - line), out);
	} else {
		fwrite_unlocked(line, 1, (size_t)(p - line), out);
		fwrite_unlocked(tail, 1, n, out);
		if (flags & KTRACE_CALLF_WATCH)
			fputs("   [watch]", out);
		putc_unlocked('\n', out);
	}
	if (!k)
		free(unknown.tail);
}

static void print_gap(FILE *out, unsigned gap, uint64_t count, uint32_t stream)
{
	switch (gap) {
	case KTR_GAP_LOST:
		fprintf(out, "----------- %" PRIu64 " record%s lost (stream %u) -----------\n", count,
			count == 1 ? "" : "s", stream);
		break;
	case KTR_GAP_OVERWRITTEN:
		fprintf(out, "----------- %" PRIu64 " sub-buffer%s overwritten (stream %u) -----------\n",
			count, count == 1 ? "" : "s", stream);
		break;
	case KTR_GAP_DROPPED:
		fprintf(out, "----------- %" PRIu64 " record%s dropped (stream %u) -----------\n", count,
			count == 1 ? "" : "s", stream);
		break;
	default:
		fprintf(out, "----------- corrupt data skipped (stream %u) -----------\n", stream);
		break;
	}
}

/*
 * The calls streamed in entry order (ktr_preorder_new(): each thread's in
 * windows, the threads merged; the first line at once, no sort), without
 * --time-range or --sort-mem, where the trace allows; else sorted after
 * the trace is read.  Return: 0, or -errno.
 */
static int a2s_stream(struct a2s *a)
{
	const struct cli_select *sel = &a->o.sel;
	uint32_t pid, tid;

	if (!a->sorter || a->o.sort_mem || sel->from || sel->to != UINT64_MAX)
		return 0;
	a->pre = ktr_preorder_new(a->t, a->sorter, sel->tids.n || sel->pids.n ? cli_select_task : NULL, NULL,
				  (void *)sel);
	if (!a->pre)
		return errno == ENOTSUP ? 0 : -errno;
	if (!ktr_callsort_thread_ids(a->sorter, 0, &pid, &tid)) { /* no call: as the sorted path says it */
		ktr_preorder_free(a->pre);
		a->pre = NULL;
	}
	return 0;
}

/*
 * Open the trace, its symbols (-m: the executable's from FILE) and the
 * sorter.  Return: 0; 1 or 2 (printed); or -errno.
 */
static int a2s_open(struct a2s *a)
{
	a->t = cli_select_open(&a->o.sel, CMD, a->o.dir);
	if (!a->t)
		return 1;
	cli_select_window(&a->o.sel, a->t);
	cli_diags(CMD, a->t);
	a->origin = ktr_time_origin(a->t);
	a->syms = cli_select_syms(&a->o.sel, a->t);
	if (!a->syms)
		return -ENOMEM;
	if (a->o.symfile && ktr_syms_set_file(a->syms, NULL, a->o.symfile) < 0) {
		cli_error(CMD, "option '-m': %s maps no executable: the trace has no map lines",
			  ktr_dir(a->t));
		return 2;
	}
	if (!a->o.unsorted && !(a->sorter = ktr_callsort_new(a->o.sort_mem, KTR_SORT_ENTRY)))
		return -ENOMEM;
	return a2s_stream(a);
}

/* Gap @r where it happened: printed now (--unsorted) or sorted among the calls.  Return: 0, or -errno. */
static int a2s_gap(struct a2s *a, FILE *out, const struct ktr_rec *r)
{
	struct ktr_callent e = { 0 };

	if (a->o.unsorted) {
		print_gap(out, r->gap, r->count, r->stream);
		return 0;
	}
	e.entry_ns = r->ns;
	e.flags = KTR_CALLENT_GAP;
	e.key = r->gap;
	e.local_ns = r->count;
	e.cpu = r->stream;
	e.depth = 0xffff; /* after the calls entered at the same time */
	return ktr_callsort_add(a->sorter, &e);
}

/*
 * One pass over the records: each selected call (and gap) printed as it
 * comes (--unsorted) or handed to the sorter.  Return: 0, or -errno.
 */
static int a2s_read(struct a2s *a, FILE *out)
{
	struct ktr_rec r;
	struct ktr_call c;
	int rc;

	while (ktr_next(a->t, &r)) {
		cli_diags(CMD, a->t);
		if (r.kind == KTR_GAP) {
			if ((rc = a2s_gap(a, out, &r)) < 0)
				return rc;
			continue;
		}
		if (!ktr_call_decode(a->t, &r, &c))
			continue;
		a->call_records++;
		if (!cli_select_call(&a->o.sel, &c))
			continue;
		a->calls++;
		if (a->o.unsorted) {
			print_call(a, out, c.entry_ns, c.dur_ns, c.flags, c.tid, c.key);
			if (ferror(out))
				break;
		} else if ((rc = ktr_callsort_add_call(a->sorter, &c, c.key, 0)) < 0) {
			return rc;
		}
	}
	cli_diags(CMD, a->t);
	return 0;
}

/* The sorted (or streamed) calls and gaps, in entry order.  Return: 0, or -errno. */
static int a2s_print_sorted(struct a2s *a, FILE *out)
{
	struct ktr_callent e;
	int rc;

	print_columns(a, out);
	while ((rc = a->pre ? ktr_preorder_next(a->pre, &e) : ktr_callsort_next(a->sorter, &e)) > 0) {
		if (a->pre)
			a->calls++, a->call_records++;
		uint32_t pid = 0, tid = 0;

		if (e.flags & KTR_CALLENT_GAP) {
			print_gap(out, e.key, e.local_ns, e.cpu);
			continue;
		}
		ktr_callsort_thread_ids(a->sorter, e.thread, &pid, &tid);
		print_call(a, out, e.entry_ns, e.dur_ns, e.flags, tid, e.key);
		if (ferror(out))
			break;
		if ((e.entry_ns & 0xfff) == 0)
			cli_diags(CMD, a->t);
	}
	return rc;
}

/* The listing: header, columns, calls.  Return: 0, 1 (no call), or -errno. */
static int a2s_list(struct a2s *a, FILE *out)
{
	int rc;

	cli_pager_start();
	if (!a->o.noheader)
		print_header(a, out);
	if (a->o.unsorted)
		print_columns(a, out);
	rc = a->pre ? 0 : a2s_read(a, out);
	if (rc < 0)
		return rc;
	if (a->sorter)
		rc = a2s_print_sorted(a, out);
	cli_diags(CMD, a->t);
	if (!a->calls) {
		cli_no_calls(CMD, a->t, a->o.dir, a->call_records);
		rc = 1;
	}
	return rc;
}

static void a2s_free(struct a2s *a)
{
	for (size_t i = 0; i < a->nkt; i++)
		keytext_free(&a->kt[i]);
	free(a->kt);
	keytext_free(&a->extra);
	cli_select_free(&a->o.sel);
	ktr_preorder_free(a->pre);
	ktr_callsort_free(a->sorter);
	ktr_syms_free(a->syms);
	ktr_close(a->t);
}

/* `ktrace addr2sym`: options, the listing, the exit status. */
static int run(int argc, char **argv)
{
	struct a2s a;
	int rc;

	memset(&a, 0, sizeof(a));
	cli_select_init(&a.o.sel);
	a.wf = 25;
	rc = cli_opts_parse_dir(&cmd_opts, argc, argv, &a.o.sel, take_option, &a.o, &a.o.dir);
	if (rc != CLI_OPTS_GO)
		return rc;
	rc = a2s_open(&a);
	if (!rc)
		rc = a2s_list(&a, stdout);
	if (rc < 0)
		rc = cli_calls_failed(CMD, a.sorter != NULL, rc);
	if (!rc && ktr_error_count(a.t))
		rc = 1;
	a2s_free(&a);
	return rc;
}

KTRACE_COMMAND_OPTS(addr2sym, "list a function trace's calls with symbols (KFT's addr2sym)", run, cmd_opts);
