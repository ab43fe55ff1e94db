/*
 * cli/select.c - the selection options every reading subcommand shares
 * (cli/select.h): the trace directory (./ktrace.data by default), --pid,
 * --tid, --time-range and --no-demangle, and the time syntax with units
 * that `ktrace record -t` uses too.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "cli/select.h"
#include "lib/safefile.h"

/* The selection options of a command's table (cli/options.h). */
const struct cli_opt cli_select_opts[] = {
	CLI_OPT("pid", 'p', "LIST", "only these processes (comma-separated ids)"),
	CLI_OPT("tid", CLI_OPT_TID, "LIST", "only these threads"),
	CLI_OPT("time-range", CLI_OPT_RANGE, "START~END",
		"only calls (records) inside [START, END]; a bound with a\n"
		"unit (ns, us, ms, s, m) counts from the trace's origin,\n"
		"a bare number is CLOCK_MONOTONIC ns; one may be omitted"),
	CLI_OPT("no-demangle", CLI_OPT_NO_DEMANGLE, NULL, "C++ names as mangled in the symbol table"),
	CLI_OPT_END,
};

void cli_select_init(struct cli_select *s)
{
	memset(s, 0, sizeof(*s));
	s->to = UINT64_MAX;
	s->demangle = 1;
}

void cli_select_free(struct cli_select *s)
{
	cli_idlist_free(&s->tids);
	cli_idlist_free(&s->pids);
}

/* The unit at @u (ns per unit), or 0; *@len its length. */
static uint64_t unit_ns(const char *u, size_t *len)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000ull },
		{ "m", 60000000000ull }, { "min", 60000000000ull }, { "h", 3600000000000ull },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].name)) {
			*len = strlen(units[i].name);
			return units[i].ns;
		}
	return 0;
}

/* Like cli_parse_time(); *@had_unit says whether a unit was given. */
static int parse_time(const char *s, uint64_t bare_unit_ns, uint64_t *ns, int *had_unit)
{
	uint64_t whole = 0, frac = 0, fdiv = 1, unit;
	const char *p = s;
	size_t ulen = 0;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (fdiv < 1000000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fdiv *= 10;
			}
	}
	if (!digits)
		return -1;
	if (*p) {
		unit = unit_ns(p, &ulen);
		if (!unit)
			return -1;
		*had_unit = 1;
	} else {
		if (!bare_unit_ns || (fdiv > 1 && bare_unit_ns == 1))
			return -1; /* a fraction of a nanosecond means nothing */
		unit = bare_unit_ns;
		*had_unit = 0;
	}
	if (whole > UINT64_MAX / unit)
		return -1;
	*ns = whole * unit + (uint64_t)((unsigned __int128)frac * unit / fdiv);
	return 0;
}

int cli_parse_time(const char *s, uint64_t bare_unit_ns, uint64_t *ns)
{
	int had;

	return parse_time(s, bare_unit_ns, ns, &had);
}

int cli_parse_range(const char *s, uint64_t *from, int *from_rel, uint64_t *to, int *to_rel)
{
	const char *tilde = strchr(s, '~');
	char a[64];
	size_t n;

	*from = 0;
	*to = UINT64_MAX;
	*from_rel = *to_rel = 0;
	if (!tilde || strchr(tilde + 1, '~'))
		return -1;
	n = (size_t)(tilde - s);
	if ((!n && !tilde[1]) || n >= sizeof(a))
		return -1;
	memcpy(a, s, n);
	a[n] = 0;
	/* a bare number is a CLOCK_MONOTONIC time in ns */
	if (n && parse_time(a, 1, from, from_rel) < 0)
		return -1;
	if (tilde[1] && parse_time(tilde + 1, 1, to, to_rel) < 0)
		return -1;
	if (n && tilde[1] && *from_rel == *to_rel && *from > *to)
		return -1;
	return 0;
}

int cli_select_option(struct cli_select *s, const char *cmd, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
	case CLI_OPT_TID:
		if (cli_idlist_parse(arg, UINT32_MAX, opt == 'p' ? &s->pids : &s->tids) < 0) {
			cli_error(cmd, "option '%s': '%s' is not a list of ids", opt == 'p' ? "--pid" : "--tid",
				  arg);
			return -1;
		}
		return 1;
	case CLI_OPT_RANGE:
		if (cli_parse_range(arg, &s->from, &s->from_rel, &s->to, &s->to_rel) < 0) {
			cli_error(cmd, "option '--time-range': '%s' is not START~END (times such as 10ms or "
				       "1.5s from the trace's start, or CLOCK_MONOTONIC ns; one may be omitted)",
				  arg);
			return -1;
		}
		return 1;
	case CLI_OPT_NO_DEMANGLE:
		s->demangle = 0;
		return 1;
	default:
		return 0;
	}
}

const char *cli_select_dir(const char *cmd, int argc, char **argv, int optind)
{
	if (optind + 1 < argc) {
		cli_error(cmd, "unexpected argument '%s' (see ktrace %s --help)", argv[optind + 1], cmd);
		return NULL;
	}
	return optind < argc ? argv[optind] : "ktrace.data";
}

/*
 * What the regular file @path given as a trace directory is, as the end of
 * a one-line error: a file of a trace, or an export another tool reads.
 */
static const char *file_hint(const char *path)
{
	static const char dat[] = "\027\010\104tracing";
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	char head[16] = "";
	int fd = ksf_read_open(NULL, path, 0); /* a regular file, not through a link */

	if (fd >= 0) {
		if (read(fd, head, sizeof(head) - 1) < 0)
			head[0] = 0;
		close(fd);
	}
	if (!memcmp(head, dat, sizeof(dat) - 1))
		return "a trace-cmd trace.dat (as ktrace export --format=trace.dat writes): "
		       "open it with trace-cmd report or KernelShark; ktrace reads the trace directory it came from";
	if (head[0] == '{' || head[0] == '[')
		return "a JSON file (an export: open it in Perfetto, DevTools or speedscope); "
		       "ktrace reads the trace directory it came from";
	if (dot && (!strcmp(dot, ".pftrace") || !strcmp(dot, ".perfetto-trace") || !strcmp(dot, ".pb")))
		return "a Perfetto trace (an export: open it in ui.perfetto.dev or trace_processor); "
		       "ktrace reads the trace directory it came from";
	if ((!strncmp(base, "trace", 5) || !strncmp(base, "cpu", 3)) && ksf_trace_name(base, 0)) /* traceN, cpuN */
		return "a stream file of a trace: give the directory that holds it";
	return "a file, not a trace directory (the directory ktrace record, ktrace read or ktrace kft wrote)";
}

struct ktr_trace *cli_select_open(struct cli_select *s, const char *cmd, const char *dir)
{
	struct stat st;
	struct ktr_trace *t;
	uint64_t origin;

	if (stat(dir, &st) < 0) {
		if (!strcmp(dir, "ktrace.data") && errno == ENOENT)
			cli_error(cmd, "no trace directory given and ./ktrace.data does not exist "
				       "(see ktrace %s --help)", cmd);
		else
			cli_error(cmd, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error(cmd, "%s: %s", dir, S_ISREG(st.st_mode) ? file_hint(dir) : "not a trace directory");
		return NULL;
	}
	t = ktr_open(dir);
	if (!t) {
		cli_error(cmd, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	origin = ktr_time_origin(t);
	if (s->from_rel)
		s->from = s->from > UINT64_MAX - origin ? UINT64_MAX : s->from + origin;
	if (s->to_rel && s->to != UINT64_MAX)
		s->to = s->to > UINT64_MAX - origin ? UINT64_MAX : s->to + origin;
	s->from_rel = s->to_rel = 0;
	return t;
}

int cli_select_task(void *sel, uint32_t pid, uint32_t tid)
{
	const struct cli_select *s = sel;

	return ka_ids_has(&s->tids, tid) && ka_ids_has(&s->pids, pid);
}

void cli_select_window(const struct cli_select *s, struct ktr_trace *t)
{
	if (s->from || s->to != UINT64_MAX)
		ktr_set_window(t, s->from, s->to);
}

struct ktr_syms *cli_select_syms(const struct cli_select *s, struct ktr_trace *t)
{
	struct ktr_syms *syms = ktr_syms_new(t);

	if (syms)
		ktr_syms_set_demangle(syms, s->demangle);
	return syms;
}

int cli_select_everything(const struct cli_select *s)
{
	return !s->tids.n && !s->pids.n && !s->from && s->to == UINT64_MAX;
}

int cli_select_call(const struct cli_select *s, const struct ktr_call *c)
{
	return ka_ids_has(&s->tids, c->tid) && ka_ids_has(&s->pids, c->pid) &&
	       c->entry_ns >= s->from && c->exit_ns <= s->to;
}

int cli_select_rec(const struct cli_select *s, const struct ktr_rec *r)
{
	if (r->kind == KTR_GAP)
		return 1;
	return ka_ids_has(&s->tids, r->tid) && ka_ids_has(&s->pids, r->pid) &&
	       r->ns >= s->from && r->ns <= s->to;
}
