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
 * exit, so they are sorted first (reader/callsort.c, bounded memory);
 * -u lists them as recorded instead, streaming.  A header taken from the
 * run's status file (DIR/kft-status) says how the run started and stopped
 * and what the filters dropped, like KFT's log header.
 *
 * Exit status: 0, 1 the trace had errors (everything readable was
 * printed) or output failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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
};

/* What a call-site key prints as (cached per key). */
struct keytext {
	char *func, *site, *src;
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
};

static void help(FILE *out)
{
	fprintf(out,
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
		"[file]+0xoffset.  DIR defaults to ./ktrace.data.\n"
		"\n"
		"  -l, --lines            add the source file:line of each call site\n"
		"      --inline           name the functions inlined at each call site\n"
		"  -m, --symbols FILE     read the traced executable's symbols from FILE\n"
		"                         (a copy with debug information, or a moved binary)\n"
		"      --unsorted         list calls as recorded (by exit time), streaming\n"
		CLI_SELECT_HELP
		"  -H, --no-header        only the table\n"
		"  -u, --usec             whole microseconds, as KFT printed them\n"
		"      --sort-mem BYTES   memory for ordering the calls (default 64M)\n"
		CLI_OUTPUT_HELP
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0, 1 the trace has errors (all readable calls were printed)\n"
		"or output failed, 2 usage error.  See ktrace-addr2sym(1).\n");
}

static const char *us(const struct aopts *o, uint64_t ns, char *buf, size_t len)
{
	return fmt_us((int64_t)ns, o->usec, buf, len);
}

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
	memset(k, 0, sizeof(*k));
}

/* What key @key prints as. */
static const struct keytext *text_of(struct a2s *a, uint32_t key)
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

static void print_call(struct a2s *a, FILE *out, uint64_t entry, uint64_t dur, unsigned flags,
		       uint32_t tid, uint32_t key)
{
	const struct keytext *k = text_of(a, key);
	char b1[32], b2[32];
	int we = a->o.usec ? 8 : 11;

	if (entry >= a->origin)
		us(&a->o, entry - a->origin, b1, sizeof(b1));
	else {
		b1[0] = '-';
		us(&a->o, a->origin - entry, b1 + 1, sizeof(b1) - 1);
	}
	if (flags & KTRACE_CALLF_UNFINISHED)
		snprintf(b2, sizeof(b2), "0");
	else
		us(&a->o, dur, b2, sizeof(b2));
	fprintf(out, "%*s   %*s   %5" PRIu32 "   %*s   ", we, b1, we, b2, tid, a->wf,
		k ? k->func : "?");
	if (a->o.lines)
		fprintf(out, "%-26s   %s", k ? k->site : "?", k ? k->src : "?");
	else
		fputs(k ? k->site : "?", out);
	if (flags & KTRACE_CALLF_WATCH)
		fputs("   [watch]", out);
	fputc('\n', out);
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

static int run(int argc, char **argv)
{
	enum { OPT_INLINE = CLI_OPT_SELECT_END, OPT_UNSORTED, OPT_SORTMEM };
	static const struct option opts[] = {
		{ "lines", no_argument, NULL, 'l' },       { "inline", no_argument, NULL, OPT_INLINE },
		{ "symbols", required_argument, NULL, 'm' }, { "unsorted", no_argument, NULL, OPT_UNSORTED },
		{ "no-header", no_argument, NULL, 'H' },   { "usec", no_argument, NULL, 'u' },
		{ "sort-mem", required_argument, NULL, OPT_SORTMEM },
		{ "help", no_argument, NULL, 'h' },
		CLI_SELECT_LONGOPTS, CLI_OUTPUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct a2s a;
	struct ktr_callsort *sorter = NULL;
	struct ktr_rec r;
	struct ktr_call c;
	FILE *out = stdout;
	const char *dir;
	int opt, rc = 0, taken;
	uint64_t calls = 0, call_records = 0; /* after and before the selection */

	memset(&a, 0, sizeof(a));
	cli_select_init(&a.o.sel);
	a.wf = 25;
	while ((opt = getopt_long(argc, argv, ":lm:uHp:h", opts, NULL)) != -1) {
		if ((taken = cli_select_option(&a.o.sel, CMD, opt, optarg)) != 0 ||
		    (taken = cli_output_option(CMD, opt, optarg)) != 0) {
			if (taken < 0)
				return 2;
			continue;
		}
		switch (opt) {
		case 'l': a.o.lines = 1; break;
		case OPT_INLINE: a.o.inl = 1; break;
		case 'm': a.o.symfile = optarg; break;
		case OPT_UNSORTED: a.o.unsorted = 1; break;
		case 'H': a.o.noheader = 1; break;
		case 'u': a.o.usec = 1; break;
		case OPT_SORTMEM:
		{
			uint64_t size;

			if (cli_parse_size(optarg, &size) < 0 || size < 4096 || size > SIZE_MAX) {
				cli_error(CMD, "option '--sort-mem': '%s' is not a size of 4K or more", optarg);
				return 2;
			}
			a.o.sort_mem = (size_t)size;
			break;
		}
		case 'h':
			help(stdout);
			return 0;
		default:
			return cli_bad_option(CMD, opt, argc, argv);
		}
	}
	dir = cli_select_dir(CMD, argc, argv, optind);
	if (!dir)
		return 2;
	a.t = cli_select_open(&a.o.sel, CMD, dir);
	if (!a.t)
		return 1;
	cli_diags(CMD, a.t);
	a.origin = ktr_time_origin(a.t);
	a.syms = cli_select_syms(&a.o.sel, a.t);
	if (!a.syms) {
		rc = -ENOMEM;
		goto done;
	}
	if (a.o.symfile && ktr_syms_set_file(a.syms, NULL, a.o.symfile) < 0) {
		cli_error(CMD, "option '-m': %s maps no executable: the trace has no map lines",
			  ktr_dir(a.t));
		rc = 2;
		goto out;
	}
	if (!a.o.unsorted && !(sorter = ktr_callsort_new(a.o.sort_mem, KTR_SORT_ENTRY))) {
		rc = -ENOMEM;
		goto done;
	}
	cli_pager_start();
	if (!a.o.noheader)
		print_header(&a, out);
	if (a.o.unsorted)
		print_columns(&a, out);
	while (ktr_next(a.t, &r)) {
		cli_diags(CMD, a.t);
		if (r.kind == KTR_GAP) {
			if (a.o.unsorted) {
				print_gap(out, r.gap, r.count, r.stream);
			} else {
				struct ktr_callent e = { 0 };

				e.entry_ns = r.ns;
				e.flags = KTR_CALLENT_GAP;
				e.key = r.gap;
				e.local_ns = r.count;
				e.cpu = r.stream;
				e.depth = 0xffff; /* after the calls entered at the same time */
				if ((rc = ktr_callsort_add(sorter, &e)) < 0)
					goto done;
			}
			continue;
		}
		if (!ktr_call_decode(a.t, &r, &c))
			continue;
		call_records++;
		if (!cli_select_call(&a.o.sel, &c))
			continue;
		calls++;
		if (a.o.unsorted) {
			print_call(&a, out, c.entry_ns, c.dur_ns, c.flags, c.tid, c.key);
			if (ferror(out))
				break;
		} else {
			if ((rc = ktr_callsort_add_call(sorter, &c, c.key, 0)) < 0)
				goto done;
		}
	}
	cli_diags(CMD, a.t);
	if (sorter) {
		struct ktr_callent e;

		print_columns(&a, out);
		while ((rc = ktr_callsort_next(sorter, &e)) > 0) {
			uint32_t pid = 0, tid = 0;

			if (e.flags & KTR_CALLENT_GAP) {
				print_gap(out, e.key, e.local_ns, e.cpu);
				continue;
			}
			ktr_callsort_thread_ids(sorter, e.thread, &pid, &tid);
			print_call(&a, out, e.entry_ns, e.dur_ns, e.flags, tid, e.key);
			if (ferror(out))
				break;
			if ((e.entry_ns & 0xfff) == 0)
				cli_diags(CMD, a.t);
		}
	}
	cli_diags(CMD, a.t);
	if (!calls) {
		cli_no_calls(CMD, dir, call_records);
		rc = 1;
	}
done:
	if (rc < 0) {
		const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		if (sorter)
			cli_error(CMD, "ordering the calls (temporary files in %s; see --sort-mem): %s",
				  tmpdir, strerror(-rc));
		else
			cli_error(CMD, "reading the trace: %s", strerror(-rc));
		rc = 1;
	}
	if (!rc && ktr_error_count(a.t))
		rc = 1;
out:
	for (size_t i = 0; i < a.nkt; i++)
		keytext_free(&a.kt[i]);
	free(a.kt);
	keytext_free(&a.extra);
	cli_select_free(&a.o.sel);
	ktr_callsort_free(sorter);
	ktr_syms_free(a.syms);
	ktr_close(a.t);
	return rc;
}

KTRACE_COMMAND(addr2sym, "list a function trace's calls with symbols (KFT's addr2sym)", run, help);
