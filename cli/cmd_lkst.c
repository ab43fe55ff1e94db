/*
 * cli/cmd_lkst.c - `ktrace lkst`: drive the LKST tracer of ktrace.ko (seed
 * 001) the way LKST's lkstm did: list the event set, read/write/config
 * masksets, switch the current maskset on the fly, start and stop.
 *
 *   ktrace lkst [-d DIR] list | handlers | masksets | status | start | stop
 *   ktrace lkst [-d DIR] read -m N
 *   ktrace lkst [-d DIR] write -m N [-n NAME] [-f FILE]
 *   ktrace lkst [-d DIR] config -m N EVENT HANDLER
 *   ktrace lkst [-d DIR] set -m N | delete -m N
 *   ktrace lkst [-d DIR] hook add FUNC[+OFFSET] [ARGS] [--id N]
 *   ktrace lkst [-d DIR] hook list | hook del ID|FUNC[+OFFSET]
 *   ktrace lkst --tracefs hook add|list|del ...   (kprobe events instead)
 *
 * Everything goes through the module's debugfs files in DIR (default
 * /sys/kernel/debug/ktrace/lkst; kmod/lkst_fs.c documents them), read and
 * written by kclient/lkst.c; this file parses the command line and
 * prints.  Event mnemonics come from the catalogue compiled in
 * (include/ktrace/lkst.h), handler and maskset names from the module.
 * `write` checks its whole input first and then changes the maskset with
 * one write(2), so a bad line changes nothing; its errors name
 * FILE:LINE:COLUMN.
 *
 * The seed's process trace, as written there:
 *   ktrace lkst read -m 0 | ktrace lkst write -m 3   # a null maskset
 *   ktrace lkst config -m 3 1 1                      # context switch -> DEFAULT
 *   ktrace lkst config -m 3 2 1                      # wakeup -> DEFAULT
 *   ktrace lkst set -m 3
 * then `ktrace read DIR OUT` (lkstbuf read) and `ktrace print -C OUT`
 * (lkstbuf print -C) or `ktrace timeline OUT`.
 *
 * Exit status: 0 done, 1 the module refused or a file could not be read
 * or written, 2 usage error or bad input.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h> /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "kclient/kclient.h"
#include "ktrace/lkst.h"

#define CMD "lkst"
#define MAX_MASKSETS KCL_LKST_MASKSETS
#define FIRST_USER KCL_LKST_FIRST_USER

struct lkst_opts {
	const char *mopt, *name, *file, *idopt; /* -m, -n, -f, -i */
	const char *dir;                        /* -d */
	int tracefs;
};

enum { OPT_TRACEFS = CLI_OPT_LONG };

/* cli_opt_fn: -n (checked here). */
static int take_option(void *arg, int key, const char *val)
{
	struct lkst_opts *o = arg;

	if (!*val || strlen(val) > 31 || isdigit((unsigned char)val[0]) ||
	    strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(val)) {
		cli_error(CMD, "option '-n': '%s' is not a maskset name (1..31 of A-Z a-z 0-9 _ -, not starting with a digit)",
			  val);
		return 2;
	}
	o->name = val;
	return 0;
}

static const struct cli_opt opts[] = {
	CLI_OPT_TEXT("Options:"),
	CLI_OPT_STRING("maskset", 'm', "N", struct lkst_opts, mopt, "the maskset"),
	CLI_OPT("name", 'n', "NAME", "name of the maskset written (default: maskset<N>)"),
	CLI_OPT_STRING("file", 'f', "FILE", struct lkst_opts, file, "read the maskset from FILE instead of stdin"),
	CLI_OPT_STRING("id", 'i', "N", struct lkst_opts, idopt,
		       "hook add: the hook's id (0xc0..0xff; default: the\n"
		       "first free one)"),
	CLI_OPT_FLAG("tracefs", OPT_TRACEFS, struct lkst_opts, tracefs,
		     "hook commands: kprobe events of tracefs (group\n"
		     KCL_LKST_TF_GROUP ") instead of ktrace.ko; record them\n"
		     "with ktrace record --kernel=hook"),
	CLI_OPT_STRING("dir", 'd', "DIR", struct lkst_opts, dir,
		       "the tracer's debugfs directory (default\n"
		       KCL_LKST_DIR ")"),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace lkst [-d DIR] COMMAND [ARGS]\n"
		"\n"
		"Control the LKST kernel event tracer of ktrace.ko (what lkstm did): which\n"
		"kernel events are trapped and which handler each goes to (masksets).\n"
		"\n"
		"Commands:\n"
		"  list                      the event set: id, mnemonic, category, tracepoint,\n"
		"                            availability (and why not), the current maskset's\n"
		"                            handler, counters since the last start\n"
		"  handlers                  the event handlers: DEFAULT (1), NOTHING (255) and\n"
		"                            those that modules registered, with their calls\n"
		"  masksets                  every maskset: id, name, kind, entries, current\n"
		"  read -m N                 print maskset N, one 'EVENT HANDLER' line per\n"
		"                            connected event (what write takes)\n"
		"  write -m N [-n NAME] [-f FILE]\n"
		"                            create or replace user maskset N (3..63) from FILE\n"
		"                            or standard input: 'EVENT HANDLER' lines, '#'\n"
		"                            starts a comment; no lines make a null maskset\n"
		"  config -m N EVENT HANDLER connect EVENT to HANDLER in user maskset N\n"
		"                            (HANDLER NOTHING disconnects it)\n"
		"  set -m N                  make maskset N current, on the fly\n"
		"  delete -m N               remove user maskset N (not the current one)\n"
		"  start, stop               start or stop recording (DIR/state); read the\n"
		"                            events with `ktrace read DIR OUT`\n"
		"  status                    state, current maskset, records written/dropped\n"
		"  hook add FUNC[+OFFSET] [ARGS] [--id N]\n"
		"                            a user-placed hook: an event on any kernel function\n"
		"                            (a kprobe), id 0xc0..0xff, in RALL; ARGS a1..a6\n"
		"                            (at most 4): the function's arguments to record\n"
		"  hook list                 the hooks: id, FUNC+OFFSET, args, probe, hits, missed\n"
		"  hook del ID|FUNC[+OFFSET] remove a hook\n"
		"\n"
		"N is a maskset id or name: 0 RNOTHING, 1 RDEFAULT (the primary events),\n"
		"2 RALL (every event), 3..63 user masksets.  EVENT is an event id (decimal, or\n"
		"hex with 0x) or mnemonic (PROCESS_CONTEXTSWITCH); HANDLER an id or name\n"
		"(1 DEFAULT, 255 NOTHING, or an extended handler's).\n",
	.opts = opts,
	.tail =
		"The seed's process trace: ktrace lkst read -m 0 | ktrace lkst write -m 3;\n"
		"ktrace lkst config -m 3 1 1; ktrace lkst config -m 3 2 1; ktrace lkst set -m 3.\n"
		"\n"
		"Exit status: 0 done, 1 the module refused or a file failed, 2 usage error or\n"
		"bad input.  See ktrace-lkst(1).\n",
	.help_column = 24,
};

static const char *dir = KCL_LKST_DIR;
static struct kcl_lkst_handlers handlers;
static struct kcl_lkst_maskset msets[MAX_MASKSETS];

static const char *hname(unsigned id)
{
	return id < 256 && handlers.name[id][0] ? handlers.name[id] : "?";
}

/* -m N: an id 0..63 or a maskset name (needs the masksets loaded). */
static int maskset_arg(const char *s, int *id)
{
	unsigned v;

	if (isdigit((unsigned char)s[0])) {
		if (lkst_parse_number(s, &v) < 0 || v >= MAX_MASKSETS) {
			cli_error(CMD, "option '-m': '%s' is not a maskset id (0..%d) or name", s,
				  MAX_MASKSETS - 1);
			return -1;
		}
		*id = (int)v;
		return 0;
	}
	for (int i = 0; i < MAX_MASKSETS; i++) {
		if (msets[i].present && !strcasecmp(msets[i].name, s)) {
			*id = i;
			return 0;
		}
	}
	cli_error(CMD, "option '-m': no maskset called '%s' (see ktrace lkst masksets)", s);
	return -1;
}

/* HANDLER: id or name of a handler the module has.  Return: id or -1. */
static int handler_arg(const char *s, void *unused)
{
	(void)unused;
	unsigned v;

	if (isdigit((unsigned char)s[0]))
		return lkst_parse_number(s, &v) == 0 && v >= 1 && v <= 255 && handlers.name[v][0] ?
			       (int)v : -1;
	for (int i = 1; i < 256; i++)
		if (handlers.name[i][0] && !strcasecmp(handlers.name[i], s))
			return i;
	return -1;
}

/* Explain the -errno of a maskset command. */
static int refused(const char *what, int err, int id)
{
	const char *why = strerror(-err);

	if (err == -EPERM)
		why = "system masksets (0 RNOTHING, 1 RDEFAULT, 2 RALL) cannot be changed";
	else if (err == -EBUSY)
		why = "it is the current maskset (switch to another one first)";
	else if (err == -EEXIST)
		why = "another maskset has that name";
	else if (err == -ENOENT)
		why = "no such maskset, event or handler";
	else if (err == -EINVAL && id >= 0 && id < FIRST_USER)
		why = "user masksets are 3..63";
	cli_error(CMD, "%s/masksets: %s maskset %d refused: %s", dir, what, id, why);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

static int do_list(void)
{
	struct kcl_lkst_event *v;
	size_t n;
	int bad = kcl_lkst_events(dir, &v, &n);

	if (bad < 0 || kcl_lkst_handlers(dir, &handlers) < 0) {
		free(v);
		return 1;
	}
	kcl_lkst_reasons(dir, v, n);
	printf("%-5s %-26s %-10s %-32s %-11s %-8s %10s %10s %8s\n", "ID", "EVENT", "CATEGORY",
	       "TRACEPOINT", "STATUS", "HANDLER", "HITS", "WRITTEN", "DROPPED");
	for (size_t i = 0; i < n; i++) {
		const struct kcl_lkst_event *e = &v[i];

		printf("0x%02x  %-26s %-10s %-32s %-11s %-8s %10llu %10llu %8llu", e->id, e->name,
		       e->category, e->tracepoint, e->status,
		       e->handler == KTRACE_LKST_HANDLER_NOTHING ? "-" : hname(e->handler), e->hits,
		       e->written, e->dropped);
		if (strcmp(e->status, "available"))
			printf("  (%s)", e->reason);
		putchar('\n');
	}
	free(v);
	return bad > 0;
}

static int do_handlers(void)
{
	if (kcl_lkst_handlers(dir, &handlers) < 0)
		return 1;
	printf("%-4s %-31s %s\n", "ID", "HANDLER", "CALLS");
	for (int i = 1; i < 256; i++)
		if (handlers.name[i][0])
			printf("%-4d %-31s %llu\n", i, handlers.name[i], handlers.calls[i]);
	return 0;
}

static int nentries(const struct kcl_lkst_maskset *m)
{
	int n = 0;

	for (int j = 0; j < KTRACE_LKST_MAX_ID; j++)
		n += m->handler[j] != 0;
	return n;
}

static int do_masksets(void)
{
	if (kcl_lkst_masksets(dir, msets) < 0)
		return 1;
	printf("%-3s %-31s %-7s %7s\n", "ID", "MASKSET", "KIND", "EVENTS");
	for (int i = 0; i < MAX_MASKSETS; i++)
		if (msets[i].present)
			printf("%-3d %-31s %-7s %7d%s\n", i, msets[i].name,
			       msets[i].system ? "system" : "user", nentries(&msets[i]),
			       msets[i].current ? "  current" : "");
	return 0;
}

static int do_read(int id)
{
	const struct kcl_lkst_maskset *m = &msets[id];

	if (!m->present) {
		cli_error(CMD, "maskset %d does not exist (see ktrace lkst masksets)", id);
		return 1;
	}
	printf("# maskset %d %s (%s%s): EVENT HANDLER\n", id, m->name, m->system ? "system" : "user",
	       m->current ? ", current" : "");
	for (unsigned j = 0; j < KTRACE_LKST_MAX_ID; j++) {
		const char *e = lkst_event_name(j);

		if (!m->handler[j])
			continue;
		printf("0x%02x %u\t# %s -> %s\n", j, m->handler[j], e ? e : "?",
		       hname(m->handler[j]));
	}
	return 0;
}

/* Read all of @f (at most @cap - 1 bytes).  Return: length, or -1 (printed). */
static long read_all(FILE *f, const char *fname, char *buf, size_t cap)
{
	size_t len = fread(buf, 1, cap - 1, f);

	if (ferror(f)) {
		cli_error(CMD, "%s: %s", fname, strerror(errno));
		return -1;
	}
	if (len == cap - 1 && fgetc(f) != EOF) {
		cli_error(CMD, "%s: offset %zu: more than %zu bytes", fname, len, cap - 1);
		return -1;
	}
	buf[len] = '\0';
	return (long)len;
}

/*
 * Parse maskset text from @f (named @fname) into @handler
 * (KTRACE_LKST_MAX_ID entries).  Return: 0, 1 (read error) or 2.
 */
static int parse_maskset(FILE *f, const char *fname, unsigned char *handler)
{
	char *text = malloc(1 << 20), err[256];
	long n;

	if (!text) {
		cli_error(CMD, "out of memory");
		return 1;
	}
	n = read_all(f, fname, text, 1 << 20);
	if (n < 0) {
		free(text);
		return 1;
	}
	if (lkst_text_parse(text, (size_t)n, handler_arg, NULL, handler, err, sizeof(err)) < 0) {
		cli_error(CMD, "%s:%s%s", fname, err,
			  strstr(err, "unknown handler") ? " (see ktrace lkst handlers)" :
			  strstr(err, "unknown event") ? " (see ktrace lkst list)" : "");
		free(text);
		return 2;
	}
	free(text);
	return 0;
}

static int do_write(int id, const char *name, const char *file)
{
	unsigned char handler[KTRACE_LKST_MAX_ID];
	FILE *f = stdin;
	int rc, err;

	if (id < FIRST_USER) {
		cli_error(CMD, "maskset %d is a system maskset; user masksets are %d..%d", id,
			  FIRST_USER, MAX_MASKSETS - 1);
		return 2;
	}
	if (file && strcmp(file, "-")) {
		f = fopen(file, "r");
		if (!f) {
			cli_error(CMD, "%s: %s", file, strerror(errno));
			return 1;
		}
	}
	rc = parse_maskset(f, f == stdin ? "<stdin>" : file, handler);
	if (f != stdin)
		fclose(f);
	if (!rc && (err = kcl_lkst_maskset_write(dir, id, name, handler)))
		rc = refused("writing", err, id);
	return rc;
}

static int do_state(const char *word)
{
	int err = kcl_lkst_state(dir, word);

	if (err) {
		cli_error(CMD, "%s/state: %s: %s", dir, word, strerror(-err));
		return 1;
	}
	return 0;
}

static int do_status(void)
{
	char *state = kcl_lkst_read(dir, "state"), *info;
	int cur = -1;

	if (!state || kcl_lkst_masksets(dir, msets) < 0) {
		free(state);
		return 1;
	}
	for (int i = 0; i < MAX_MASKSETS; i++)
		if (msets[i].present && msets[i].current)
			cur = i;
	printf("state %s", state);
	if (cur >= 0)
		printf("maskset %d %s (%d events)\n", cur, msets[cur].name, nentries(&msets[cur]));
	info = kcl_lkst_read(dir, "info");
	if (info) {
		char *p;

		for (p = strtok(info, "\n"); p; p = strtok(NULL, "\n"))
			if (!strncmp(p, "written ", 8) || !strncmp(p, "dropped ", 8) ||
			    !strncmp(p, "buf-size ", 9) || !strncmp(p, "buf-nr ", 7) ||
			    !strncmp(p, "mode ", 5))
				printf("%s\n", p);
	}
	free(info);
	free(state);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Hooks (DIR/hooks, kmod/lkst_hooks.c)                                */
/* ------------------------------------------------------------------ */

/* The id of the active hook called @name (FUNC+OFFSET), or -1. */
static int hook_by_name(const char *name)
{
	struct kcl_lkst_hook *v;
	size_t n;
	int id = -1;

	if (kcl_lkst_hooks(dir, &v, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].state, "deleted") && !strcmp(v[i].name, name))
			id = (int)v[i].id;
	free(v);
	return id;
}

/* EVENT of config: a catalogue id or mnemonic, a hook id, or a hook's FUNC+OFFSET. */
static int event_arg(const char *s)
{
	int ev = lkst_event_id(s);

	if (ev < 0 && strchr(s, '+'))
		ev = hook_by_name(s);
	return ev;
}

static int tracefs_hooks; /* --tracefs: kprobe events, kclient/lkst_tracefs.c */

static int hook_refused(const char *what, const char *where, int err)
{
	const char *why = strerror(-err);

	switch (-err) {
	case ENOENT:
		why = "no such kernel function (see /proc/kallsyms)";
		break;
	case EPERM:
		why = "the kernel forbids a probe there (kprobe blacklist, noinstr or entry "
		      "code, not kernel text)";
		break;
	case EILSEQ:
		why = "not an instruction boundary (or inside the ftrace call at the "
		      "function's entry)";
		break;
	case ERANGE:
		why = "the offset is not inside the function";
		break;
	case EBUSY:
		why = "that hook id is taken (see ktrace lkst hook list)";
		break;
	case EEXIST:
		why = "there is a hook at that place already";
		break;
	case ENOSPC:
		why = "all 64 hook ids (0xc0..0xff) are in use";
		break;
	case ENODEV:
		why = "ktrace.ko is being unloaded";
		break;
	default:
		break;
	}
	cli_error(CMD, "%s/hooks: %s %s refused: %s", dir, what, where, why);
	return 1;
}

/* A refusal of the tracefs backend: the errno and tracefs's error_log line. */
static int tf_refused(const char *what, const char *where, int err, const char *log)
{
	const char *why = strerror(-err);

	if (err == -EEXIST)
		why = "there is a hook at that place already";
	else if (err == -EBUSY && !strcmp(what, "adding"))
		why = "that hook id is taken (see ktrace lkst --tracefs hook list)";
	else if (err == -EBUSY)
		why = "its event is enabled (a recording runs?)";
	else if (err == -ENOSPC)
		why = "all 64 hook ids (0xc0..0xff) are in use";
	else if (err == -ENOENT && !strcmp(what, "deleting"))
		why = "no such hook (see ktrace lkst --tracefs hook list)";
	else if (err == -ENOENT || err == -EINVAL || err == -EILSEQ)
		why = err == -EILSEQ ? "not an instruction boundary" :
				       "the kernel refused a kprobe there (unknown function, "
				       "blacklisted, notrace or not an instruction boundary)";
	if (err == -ENODEV)
		return 1; /* reported by kclient */
	cli_error(CMD, "tracefs kprobe_events: %s %s refused: %s%s%s%s", what, where, why,
		  log && *log ? " (error_log: " : "", log && *log ? log : "", log && *log ? ")" : "");
	return 1;
}

static int do_hook_add(char **args, int nargs, const char *idopt)
{
	char func[144], argstr[32], err[256], name[160], joined[256] = "";
	unsigned char argn[KTRACE_LKST_HOOK_MAX_ARGS];
	unsigned off, v;
	int id = -1, rc;

	if (nargs < 1) {
		cli_error(CMD, "hook add needs FUNC[+OFFSET] (see ktrace lkst --help)");
		return 2;
	}
	for (int i = 1; i < nargs; i++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
			 i > 1 ? "," : "", args[i]);
	if (lkst_hook_parse(args[0], joined, func, sizeof(func), &off, argn, argstr, sizeof(argstr),
			    err, sizeof(err)) < 0) {
		cli_error(CMD, "hook add: %s", err);
		return 2;
	}
	if (idopt) {
		if (lkst_parse_number(idopt, &v) < 0 || !KTRACE_LKST_IS_HOOK(v)) {
			cli_error(CMD, "option '--id': '%s' is not a hook id (0x%02x..0x%02x)", idopt,
				  KTRACE_LKST_HOOK_FIRST, KTRACE_LKST_HOOK_LAST);
			return 2;
		}
		id = (int)v;
	}
	snprintf(name, sizeof(name), "%s+%u", func, off);
	if (tracefs_hooks) {
		char log[512];
		int nargs = argstr[0] == '-' ? 0 : (int)(strlen(argstr) + 1) / 3;

		rc = kcl_lkst_tf_hook_add(id, func, off, argn, nargs, log, sizeof(log));
		if (rc < 0)
			return tf_refused("adding", name, rc, log);
		printf("hook 0x%02x %s %s (tracefs %s/lkst_hook_%02x)\n", (unsigned)rc, name, argstr,
		       KCL_LKST_TF_GROUP, (unsigned)rc);
		return 0;
	}
	rc = kcl_lkst_hook_add(dir, id, func, off, argstr);
	if (rc)
		return hook_refused("adding", name, rc);
	id = hook_by_name(name);
	if (id < 0) {
		cli_error(CMD, "%s/hooks: the hook %s was added but is not listed", dir, name);
		return 1;
	}
	printf("hook 0x%02x %s %s\n", (unsigned)id, name, argstr);
	return 0;
}

static int do_hook_list(void)
{
	struct kcl_lkst_hook *v;
	size_t n;

	if ((tracefs_hooks ? kcl_lkst_tf_hooks(&v, &n) : kcl_lkst_hooks(dir, &v, &n)) < 0)
		return 1;
	printf("%-5s %-40s %-12s %-9s %-7s %10s %8s\n", "ID", "HOOK", "ARGS", "PROBE", "STATE",
	       "HITS", "MISSED");
	for (size_t i = 0; i < n; i++)
		printf("0x%02x  %-40s %-12s %-9s %-7s %10llu %8llu\n", v[i].id, v[i].name, v[i].args,
		       v[i].probe, v[i].state, v[i].hits, v[i].missed);
	free(v);
	return 0;
}

static int do_hook_del(const char *what)
{
	char name[160];
	unsigned v;
	int rc;

	if (isdigit((unsigned char)what[0])) {
		if (lkst_parse_number(what, &v) < 0 || !KTRACE_LKST_IS_HOOK(v)) {
			cli_error(CMD, "hook del: '%s' is not a hook id (0x%02x..0x%02x) or FUNC[+OFFSET]",
				  what, KTRACE_LKST_HOOK_FIRST, KTRACE_LKST_HOOK_LAST);
			return 2;
		}
		snprintf(name, sizeof(name), "0x%02x", v);
	} else {
		char func[144], argstr[16], err[256];
		unsigned char argn[KTRACE_LKST_HOOK_MAX_ARGS];
		unsigned off;

		if (lkst_hook_parse(what, NULL, func, sizeof(func), &off, argn, argstr, sizeof(argstr),
				    err, sizeof(err)) < 0) {
			cli_error(CMD, "hook del: %s", err);
			return 2;
		}
		snprintf(name, sizeof(name), "%s+%u", func, off);
	}
	if (tracefs_hooks) {
		struct kcl_lkst_hook *hv;
		size_t n;
		char log[512];
		int id = -1;

		if (kcl_lkst_tf_hooks(&hv, &n) < 0)
			return 1;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(hv[i].name, name) ||
			    (isdigit((unsigned char)what[0]) && hv[i].id == v))
				id = (int)hv[i].id;
		free(hv);
		rc = id < 0 ? -ENOENT : kcl_lkst_tf_hook_del(id, log, sizeof(log));
		return rc ? tf_refused("deleting", name, rc, id < 0 ? NULL : log) : 0;
	}
	rc = kcl_lkst_hook_del(dir, name);
	if (rc == -ENOENT) {
		cli_error(CMD, "%s/hooks: no hook %s (see ktrace lkst hook list)", dir, name);
		return 1;
	}
	return rc ? hook_refused("deleting", name, rc) : 0;
}

static int do_hook(char **args, int nargs, const char *idopt)
{
	const char *sub = nargs ? args[0] : "";

	if (idopt && strcmp(sub, "add")) {
		cli_error(CMD, "option '--id' is for hook add only");
		return 2;
	}
	if (!strcmp(sub, "add"))
		return do_hook_add(args + 1, nargs - 1, idopt);
	if (!strcmp(sub, "list") || !strcmp(sub, "del")) {
		int want = !strcmp(sub, "del") ? 2 : 1;

		if (nargs != want) {
			cli_error(CMD, want == 2 ? "hook del needs one ID or FUNC[+OFFSET]" :
						   "hook list takes no argument");
			return 2;
		}
		return want == 2 ? do_hook_del(args[1]) : do_hook_list();
	}
	cli_error(CMD, nargs ? "unknown hook command '%s' (add, list, del)" :
			       "hook needs a command: add, list, del%s",
		  nargs ? sub : "");
	return 2;
}

/*
 * The options and arguments command @cmd takes (not hook's): 0, or 2
 * after one line saying what is wrong.
 */
static int check_usage(const char *cmd, const struct lkst_opts *o, char **args, int nargs)
{
	int want_m = !strcmp(cmd, "read") || !strcmp(cmd, "write") || !strcmp(cmd, "config") ||
		     !strcmp(cmd, "set") || !strcmp(cmd, "delete");
	int want_args = !strcmp(cmd, "config") ? 2 : 0;
	int known = want_m || !strcmp(cmd, "list") || !strcmp(cmd, "handlers") ||
		    !strcmp(cmd, "masksets") || !strcmp(cmd, "start") ||
		    !strcmp(cmd, "stop") || !strcmp(cmd, "status");

	if (o->idopt) {
		cli_error(CMD, "option '--id' is for hook add only");
		return 2;
	}
	if (o->tracefs) {
		cli_error(CMD, "option '--tracefs' is for hook commands (LKST's tracefs backend "
			       "records with ktrace record --kernel)");
		return 2;
	}
	if (!known) {
		cli_error(CMD, "unknown command '%s' (see ktrace lkst --help)", cmd);
		return 2;
	}
	if (want_m && !o->mopt) {
		cli_error(CMD, "%s needs -m N (a maskset id or name)", cmd);
		return 2;
	}
	if (!want_m && o->mopt) {
		cli_error(CMD, "%s takes no -m", cmd);
		return 2;
	}
	if ((o->name || o->file) && strcmp(cmd, "write")) {
		cli_error(CMD, "option '%s' is for write only", o->name ? "-n" : "-f");
		return 2;
	}
	if (nargs != want_args) {
		if (want_args)
			cli_error(CMD, "%s needs EVENT and HANDLER", cmd);
		else
			cli_error(CMD, "unexpected argument '%s' (see ktrace lkst --help)", args[0]);
		return 2;
	}
	return 0;
}

/* `config -m N EVENT HANDLER`. */
static int do_config(int id, char **args)
{
	int ev = event_arg(args[0]), h, err;

	if (ev < 0) {
		cli_error(CMD, "unknown event '%s' (see ktrace lkst list)", args[0]);
		return 2;
	}
	h = handler_arg(args[1], NULL);
	if (h < 0) {
		cli_error(CMD, "unknown handler '%s' (see ktrace lkst handlers)", args[1]);
		return 2;
	}
	err = kcl_lkst_maskset_config(dir, id, (unsigned)ev, (unsigned)h);
	return err ? refused("configuring", err, id) : 0;
}

/* The maskset commands: read, write, config, set, delete. */
static int do_maskset(const char *cmd, const struct lkst_opts *o, char **args)
{
	int id = -1, err;

	if (kcl_lkst_masksets(dir, msets) < 0 || kcl_lkst_handlers(dir, &handlers) < 0)
		return 1;
	if (maskset_arg(o->mopt, &id) < 0)
		return 2;
	if (!strcmp(cmd, "read"))
		return do_read(id);
	if (!strcmp(cmd, "write"))
		return do_write(id, o->name, o->file);
	if (!strcmp(cmd, "config"))
		return do_config(id, args);
	if (!strcmp(cmd, "set"))
		err = kcl_lkst_maskset_set(dir, id);
	else
		err = kcl_lkst_maskset_delete(dir, id);
	return err ? refused(!strcmp(cmd, "set") ? "switching to" : "deleting", err, id) : 0;
}

/* `ktrace lkst`: options, then the command. */
static int run(int argc, char **argv)
{
	struct lkst_opts o = { 0 };
	const char *cmd;
	char **args;
	int nargs, rc;

	if (getenv("KTRACE_LKST_DIR") && *getenv("KTRACE_LKST_DIR"))
		dir = getenv("KTRACE_LKST_DIR");
	rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, &o);
	if (rc != CLI_OPTS_GO)
		return rc;
	if (o.dir)
		dir = o.dir;
	tracefs_hooks = o.tracefs;
	if (optind >= argc) {
		cli_error(CMD, "need a command: list, handlers, masksets, read, write, config, set, delete, start, stop, status, hook (see ktrace lkst --help)");
		return 2;
	}
	cmd = argv[optind];
	args = argv + optind + 1;
	nargs = argc - optind - 1;
	if (!strcmp(cmd, "hook")) {
		if (o.mopt || o.name || o.file) {
			cli_error(CMD, "hook takes no -m, -n or -f");
			return 2;
		}
		return do_hook(args, nargs, o.idopt);
	}
	if ((rc = check_usage(cmd, &o, args, nargs)) != 0)
		return rc;
	if (!strcmp(cmd, "list"))
		return do_list();
	if (!strcmp(cmd, "handlers"))
		return do_handlers();
	if (!strcmp(cmd, "masksets"))
		return do_masksets();
	if (!strcmp(cmd, "start") || !strcmp(cmd, "stop"))
		return do_state(cmd);
	if (!strcmp(cmd, "status"))
		return do_status();
	return do_maskset(cmd, &o, args);
}

KTRACE_COMMAND_OPTS(lkst, "control the LKST kernel event tracer: event set, masksets, handlers", run, cmd_opts);
