/*
 * cli/cli_util.c - helpers shared by the `ktrace` subcommands: one-line
 * errors, option errors, number parsing, atomic file replacement, output
 * files (through lib/safefile.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "lib/safefile.h"
#include "reader/reader.h"

void cli_error(const char *cmd, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c; c++) /* one line, whatever the user typed */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	fflush(stdout);
	fprintf(stderr, "ktrace%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
}

int cli_bad_option(const char *cmd, int c, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	int is_long = arg[0] == '-' && arg[1] == '-';
	int len = (int)strcspn(arg, "=");
	char what[3072];

	if (c == ':' && is_long)
		snprintf(what, sizeof(what), "option '%.*s' needs a value", len, arg);
	else if (c == ':')
		snprintf(what, sizeof(what), "option '-%c' needs a value", optopt);
	else if (is_long && !optopt)
		snprintf(what, sizeof(what), "unknown option '%.*s'", len, arg);
	else if (is_long)
		snprintf(what, sizeof(what), "option '%.*s' takes no value", len, arg);
	else
		snprintf(what, sizeof(what), "unknown option '-%c'", optopt);
	cli_error(cmd, "%s (see ktrace%s%s --help)", what, cmd ? " " : "", cmd ? cmd : "");
	return 2;
}

void cli_diags(const char *cmd, struct ktr_trace *t)
{
	const char *m;

	while ((m = ktr_diag_next(t)))
		cli_error(cmd, "%s", m);
}

struct check_arg {
	const char *cmd, *dir, *sub;
};

static void check_say(void *arg, const char *name, int err)
{
	const struct check_arg *a = arg;

	cli_error(a->cmd, "%s/%s%s%s: %s", a->dir, a->sub ? a->sub : "", a->sub ? "/" : "", name,
		  ksf_read_why(err));
}

int cli_check_trace(const char *cmd, const char *dir)
{
	struct check_arg a = { cmd, dir, NULL };
	int bad = ksf_trace_check(dir, NULL, check_say, &a), sub = 0;

	if (bad < 0) {
		cli_error(cmd, "%s: %s", dir, ksf_read_why(bad));
		return 1;
	}
	a.sub = "kernel";
	if (!bad)
		sub = ksf_trace_check(dir, "kernel", check_say, &a);
	if (sub < 0 && sub != -ENOTDIR) {
		cli_error(cmd, "%s/kernel: %s", dir, ksf_read_why(sub));
		return 1;
	}
	return bad > 0 || sub > 0;
}

FILE *cli_fopen_in(const char *dir, const char *name, int *err)
{
	int fd = ksf_read_open(dir, name, 0);
	FILE *f;

	if (fd < 0) {
		if (err)
			*err = fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		if (err)
			*err = -errno;
		close(fd);
	}
	return f;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !(*s >= '0' && *s <= '9'))
		return -1; /* strtoull() would take blanks and a sign first */
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int cli_write_file_atomic(const char *dir, const char *name, const char *text)
{
	/* an existing trace named by the user, whoever owns it: the file
	 * operations themselves never follow a link (lib/safefile.h) */
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), rc;

	if (dfd < 0)
		return -errno;
	rc = ksf_replace_at(dfd, name, text, strlen(text));
	close(dfd);
	return rc;
}

void cli_no_calls(const char *cmd, const struct ktr_trace *t, const char *dir, uint64_t call_records)
{
	if (!call_records && ktr_window_skipped(t))
		cli_error(cmd, "%s: no function call inside --time-range (%llu sub-buffers outside it)",
			  dir, (unsigned long long)ktr_window_skipped(t));
	else if (call_records)
		cli_error(cmd, "%s: none of its %llu function calls is selected (--tid, --pid, --time-range)",
			  dir, (unsigned long long)call_records);
	else
		cli_error(cmd, "%s: no function calls to report: the trace holds no CALL record "
			       "(function traces come from ktrace record or ktrace kft)", dir);
}

int cli_calls_failed(const char *cmd, int sorting, int err)
{
	const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	if (err == -EPROTO) /* ktr_preorder_next() */
		cli_error(cmd, "the calls do not nest as one stack per thread, so they cannot be streamed in "
			       "entry order: the output stops here; --sort-mem sorts them instead");
	else if (sorting)
		cli_error(cmd, "ordering the calls (temporary files in %s; see --sort-mem): %s", tmpdir,
			  strerror(-err));
	else
		cli_error(cmd, "reading the trace: %s", strerror(-err));
	return 1;
}

int cli_parse_sort_mem(const char *cmd, const char *arg, size_t *bytes)
{
	uint64_t size;

	if (cli_parse_size(arg, &size) < 0 || size < 4096 || size > SIZE_MAX) {
		cli_error(cmd, "option '--sort-mem': '%s' is not a size of 4K or more", arg);
		return 2;
	}
	*bytes = (size_t)size;
	return 0;
}

int cli_trace_dir(const char *cmd, const char *dir, unsigned flags)
{
	char msg[512];
	int fd = ksf_dir_open(dir, flags, msg, sizeof(msg));

	if (fd < 0) {
		cli_error(cmd, "%s", msg);
		return -1;
	}
	close(fd);
	return 0;
}

int cli_out_open(const char *cmd, struct cli_out *o, const char *path)
{
	char buf[PATH_MAX], msg[512];
	const char *last;
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		o->path = "standard output";
		return 0;
	}
	o->path = path;
	o->dirfd = ksf_parent_open(path, buf, &last, msg, sizeof(msg));
	if (o->dirfd < 0) {
		cli_error(cmd, "%s", msg);
		return 1;
	}
	if (fstatat(o->dirfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		const char *why = S_ISLNK(st.st_mode) ? "is a symbolic link: not writing through it (name its target, or use '-')"
			       : S_ISDIR(st.st_mode) ? "is a directory" : NULL;

		if (why) {
			cli_error(cmd, "%s: %s", path, why);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			/* a device or a FIFO: written in place */
			fd = openat(o->dirfd, last, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			close(o->dirfd);
			o->dirfd = -1;
			if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
				cli_error(cmd, "%s: cannot open: %s", path, strerror(errno));
				if (fd >= 0)
					close(fd);
				return 1;
			}
			return 0;
		}
	}
	if (!strcmp(last, ".") || !strcmp(last, "..") || strlen(last) >= sizeof(o->name)) {
		cli_error(cmd, "%s: not a file name", path);
		goto fail;
	}
	strcpy(o->name, last);
	fd = ksf_tmp_at(o->dirfd, o->name, o->tmp, sizeof(o->tmp));
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		cli_error(cmd, "%s: cannot create: %s", path, strerror(fd < 0 ? -fd : errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(o->dirfd, o->tmp, 0);
		}
		goto fail;
	}
	return 0;
fail:
	close(o->dirfd);
	o->dirfd = -1;
	return 1;
}

int cli_out_close(const char *cmd, struct cli_out *o)
{
	int err = 0;

	if (!o->f)
		return 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		err = errno ? errno : EIO;
	if (o->f != stdout && fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (o->dirfd >= 0) {
		if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0)
			err = errno;
		if (err)
			unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
		o->dirfd = -1;
	}
	if (err) {
		cli_error(cmd, "%s: write: %s", o->path, strerror(err));
		return 1;
	}
	return 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o->f)
		return;
	if (o->f == stdout)
		fflush(stdout);
	else
		fclose(o->f);
	o->f = NULL;
	if (o->dirfd >= 0) {
		unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
		o->dirfd = -1;
	}
}

void cli_getopt_reset(void)
{
	optind = 0; /* glibc: 0 also reinitialises the scanner */
	opterr = 0;
	optopt = 0;
}

int cli_idlist_parse(const char *arg, uint64_t max, struct ka_ids *l)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	size_t before = l->n;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t x, *n;

		if (cli_parse_u64(tok, &x) < 0 || x > max) {
			rc = -1;
			break;
		}
		n = realloc(l->v, (l->n + 1) * sizeof(*n));
		if (!n) {
			rc = -1;
			break;
		}
		l->v = n;
		l->v[l->n++] = x;
	}
	if (l->n == before)
		rc = -1;
	free(copy);
	return rc;
}

void cli_idlist_free(struct ka_ids *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	unsigned shift = 0;
	unsigned long long x;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || (x << shift) >> shift != x)
		return -1;
	*bytes = x << shift;
	return 0;
}

void cli_losses(const char *cmd, const struct ktr_trace *t)
{
	struct ktr_loss l[5];
	size_t n = ktr_losses(t, l, 5, NULL);

	for (size_t i = 0; i < n && i < 5; i++) {
		const char *what = l[i].gap == KTR_GAP_OVERWRITTEN ? "sub-buffers overwritten"
				   : l[i].gap == KTR_GAP_DROPPED   ? "records dropped"
								   : "records lost";

		fprintf(stderr, "ktrace %s:   %" PRIu64 " %s in stream %u", cmd, l[i].count, what,
			l[i].stream);
		if (l[i].from_ns && l[i].to_ns)
			fprintf(stderr, " between %.6f and %.6f s\n", (double)l[i].from_ns / 1e9,
				(double)l[i].to_ns / 1e9);
		else if (l[i].from_ns)
			fprintf(stderr, " after %.6f s\n", (double)l[i].from_ns / 1e9);
		else if (l[i].to_ns)
			fprintf(stderr, " before %.6f s\n", (double)l[i].to_ns / 1e9);
		else
			fputc('\n', stderr);
	}
	if (n > 5)
		fprintf(stderr, "ktrace %s:   ... %zu stretches in all (ktrace print shows each where it is)\n",
			cmd, n);
}

int cli_find_beside(const char *env, const char *const *rel, size_t n, char *out, size_t size)
{
	const char *v = getenv(env);
	char exe[PATH_MAX];
	ssize_t len;
	char *slash;

	if (v && *v) {
		if (access(v, R_OK) != 0)
			return -1;
		snprintf(out, size, "%s", v);
		return 0;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + 64], real[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", exe, rel[i]);
		if (access(path, R_OK) == 0 && realpath(path, real)) {
			snprintf(out, size, "%s", real);
			return 0;
		}
	}
	return -1;
}
