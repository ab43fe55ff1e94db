/*
 * kclient/tracedat.c - `ktrace export --format=trace.dat`: the raw ftrace
 * copy of a kernel sub-trace (DIR/kernel/ftrace, kclient/ftrace_copy.c)
 * written as a trace-cmd trace.dat, file format version 6 (trace-cmd's
 * trace-cmd.dat.v6(5)), which `trace-cmd report` and KernelShark open.
 *
 * libtracecmd writes the file (kclient/tracecmd_output.h: its writer is
 * exported but declared in a private header of trace-cmd 3.1.6, so the
 * Makefile builds this only against libtracecmd 1.3.x).  The copy is laid
 * out as tracefs is, so tracecmd_output_set_trace_dir() points the writer
 * at it: events/header_page and header_event, every events/SYS/NAME/format,
 * printk_formats, saved_cmdlines and trace_clock come from there, the ring
 * buffer pages from ftrace/cpuN, unchanged.  Version 6 is chosen because
 * every trace-cmd since 2.x and KernelShark 1.x and 2.x read it; nothing
 * is compressed.
 *
 * Kernel symbols: the file gets DIR/kallsyms if the trace already holds
 * one (a kernel function trace, recorded by root), else none, never the
 * live /proc/kallsyms (no kernel address is added to what the trace held;
 * libtracecmd is given a path that does not exist, which it writes as an
 * empty kallsyms section, and so never touches kptr_restrict).
 *
 * The copy comes from the trace directory, which is not trusted (traces
 * are handed around), and libtracecmd opens its files itself, blocking and
 * following links: so before it is given the copy, every entry under
 * DIR/kernel/ftrace must be a regular file or a directory, none a link
 * (ftrace_tree_check(); a FIFO there would hang the export, a link would
 * copy what it points at into the output).
 *
 * libtracecmd's own warnings ("error in size of file ...") are caught by
 * the tracecmd_warning() below, which overrides the library's weak
 * definition, and returned as the error message.  Not thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/safefile.h"
#include "kclient/kclient.h"

#ifdef KTRACE_HAVE_TRACECMD
#include "kclient/tracecmd_output.h"

#define TRACEDAT_VERSION 6
#define MAX_CPUS 4096

static char *warn_buf; /* the first warning of libtracecmd while writing, or NULL */
static size_t warn_len;

/* Overrides libtracecmd's weak tracecmd_warning() (trace-cmd 3.1.6,
 * lib/trace-cmd/trace-util.c): keep the first message.  ktrace-export.so
 * exports it (formats/plugin.map), so libtracecmd, loaded with the plugin,
 * finds it first.  (Its leak is suppressed in cli/plugin.c.) */
void tracecmd_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2), visibility("default")));
void tracecmd_warning(const char *fmt, ...)
{
	va_list ap;

	if (!warn_buf || warn_buf[0])
		return;
	va_start(ap, fmt);
	vsnprintf(warn_buf, warn_len, fmt, ap);
	va_end(ap);
}

/* The data size of a page from header_page's "field: char data; offset:O; size:S;". */
static long header_page_size(const char *ftdir)
{
	char path[PATH_MAX + 32], line[256];
	long page = -1;
	FILE *f;

	int fd;

	snprintf(path, sizeof(path), "%s/events/header_page", ftdir);
	fd = ksf_read_open(NULL, path, 0); /* a regular file, not a link or FIFO */
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *o = strstr(line, "offset:"), *s = strstr(line, "size:");

		if (strstr(line, " data;") && o && s)
			page = strtol(o + 7, NULL, 10) + strtol(s + 5, NULL, 10);
	}
	fclose(f);
	return page;
}

static char tree_bad[PATH_MAX + 64]; /* the first entry ftrace_tree_check() refused */

static int tree_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *why = NULL;

	(void)ftw;
	if (type == FTW_SL || type == FTW_SLN)
		why = ksf_read_why(-ELOOP);
	else if (type == FTW_NS || type == FTW_DNR)
		why = strerror(errno);
	else if (type == FTW_F && !S_ISREG(st->st_mode))
		why = ksf_read_why(-EINVAL);
	if (!why)
		return 0;
	snprintf(tree_bad, sizeof(tree_bad), "%s: %s", path, why);
	return 1;
}

/*
 * ftrace_tree_check() - every entry under @ftdir (itself included) a
 * regular file or a directory, walked without following links (nftw(3),
 * FTW_PHYS: a FIFO or device is never opened).  Return: 0, or -1 with
 * "PATH: why" in @msg.  Not thread-safe (nftw()'s callback has no argument).
 */
static int ftrace_tree_check(const char *ftdir, char *msg, size_t len)
{
	int rc;

	tree_bad[0] = 0;
	rc = nftw(ftdir, tree_entry, 16, FTW_PHYS);
	if (rc == 0)
		return 0;
	if (tree_bad[0])
		snprintf(msg, len, "%s", tree_bad);
	else
		snprintf(msg, len, "%s: %s", ftdir, strerror(errno));
	return -1;
}

/*
 * tracedat_check_copy - is @dir's raw ftrace copy (its path into @ftdir,
 * PATH_MAX bytes) there, safe to hand to libtracecmd, with ring-buffer
 * pages of this system's size (*@page, bytes)?  Returns 0, or -1 with
 * @msg (@len bytes) set.
 */
static int tracedat_check_copy(const char *dir, char *ftdir, long *page, char *msg, size_t len)
{
	char path[PATH_MAX + 32];
	struct stat st;
	long sys_page = sysconf(_SC_PAGESIZE);

	if (snprintf(ftdir, PATH_MAX, "%s/kernel/ftrace", dir) >= PATH_MAX) {
		snprintf(msg, len, "%s: path too long", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/set_event", ftdir);
	if (stat(path, &st) < 0) {
		snprintf(msg, len, "%s: no raw ftrace copy (%s: %s); record one with `ktrace record --kernel`",
			 dir, path, strerror(errno));
		return -1;
	}
	if (ftrace_tree_check(ftdir, msg, len) < 0)
		return -1;
	*page = header_page_size(ftdir);
	if (*page <= 0) {
		snprintf(msg, len, "%s/events/header_page: missing or without its data field", ftdir);
		return -1;
	}
	if (*page != sys_page) {
		/* libtracecmd 1.3 lays the data out in pages of this system's size */
		snprintf(msg, len, "%s: ring-buffer pages of %ld bytes; libtracecmd writes pages of %ld here",
			 ftdir, *page, sys_page);
		return -1;
	}
	return 0;
}

/*
 * tracedat_cpu_files - the copy's per-CPU page files ftdir/cpu0.. (regular
 * files, whole @page-byte pages) into @files (MAX_CPUS entries, the caller
 * frees them), their count into *@ncpu (on failure: how many @files
 * holds), info->pages.  Returns 0, or -1 with @msg (@len bytes) set.
 */
static int tracedat_cpu_files(const char *ftdir, long page, char **files, int *ncpu,
			      struct krec_tracedat_info *info, char *msg, size_t len)
{
	char path[PATH_MAX + 32];
	struct stat st;

	for (*ncpu = 0; *ncpu < MAX_CPUS; (*ncpu)++) {
		snprintf(path, sizeof(path), "%s/cpu%d", ftdir, *ncpu);
		if (lstat(path, &st) < 0) /* a link is "not a file" */
			break;
		if (!S_ISREG(st.st_mode) || st.st_size % page) {
			snprintf(msg, len, "%s: %s", path,
				 S_ISREG(st.st_mode) ? "not a whole number of ring-buffer pages" : "not a file");
			return -1;
		}
		info->pages += (uint64_t)st.st_size / (uint64_t)page;
		files[*ncpu] = strdup(path);
		if (!files[*ncpu]) {
			snprintf(msg, len, "out of memory");
			return -1;
		}
	}
	if (!*ncpu) {
		snprintf(msg, len, "%s: no cpu0 (no raw ring-buffer pages)", ftdir);
		return -1;
	}
	info->cpus = (unsigned)*ncpu;
	return 0;
}

/*
 * tracedat_emit - write the trace.dat to (a dup of) @fd with libtracecmd:
 * headers and formats from @ftdir, symbols from @kallsyms (a missing file:
 * none), the ring-buffer pages of @ncpu CPUs from @files.  Returns 0, or
 * -1 with @msg (@len bytes) set, libtracecmd's first warning if any.
 */
static int tracedat_emit(int fd, const char *ftdir, const char *kallsyms, int ncpu, char **files,
			 char *msg, size_t len)
{
	struct tracecmd_output *h;
	char lib_msg[512];
	int wfd, rc = -1;

	wfd = dup(fd);
	if (wfd < 0) {
		snprintf(msg, len, "dup: %s", strerror(errno));
		return -1;
	}
	lib_msg[0] = 0;
	warn_buf = lib_msg;
	warn_len = sizeof(lib_msg);
	h = tracecmd_output_create_fd(wfd);
	if (!h) {
		close(wfd);
		snprintf(msg, len, "libtracecmd: cannot start the output: %s", lib_msg[0] ? lib_msg : strerror(errno ? errno : ENOMEM));
		goto out;
	}
	tracecmd_set_quiet(h, true);
	errno = 0;
	if (tracecmd_output_set_version(h, TRACEDAT_VERSION) < 0 ||
	    tracecmd_output_set_trace_dir(h, ftdir) < 0 || tracecmd_output_set_kallsyms(h, kallsyms) < 0) {
		snprintf(msg, len, "libtracecmd: cannot set up the output: %s", lib_msg[0] ? lib_msg : strerror(errno ? errno : EINVAL));
		goto out;
	}
	if (tracecmd_output_write_headers(h, NULL) < 0) {
		snprintf(msg, len, "libtracecmd: writing the headers from %s: %s", ftdir,
			 lib_msg[0] ? lib_msg : strerror(errno ? errno : EIO));
		goto out;
	}
	if (tracecmd_write_cmdlines(h) < 0) {
		snprintf(msg, len, "libtracecmd: writing %s/saved_cmdlines: %s", ftdir,
			 lib_msg[0] ? lib_msg : strerror(errno ? errno : EIO));
		goto out;
	}
	if (tracecmd_append_cpu_data(h, ncpu, files) < 0) {
		snprintf(msg, len, "libtracecmd: writing the ring-buffer pages of %s: %s", ftdir,
			 lib_msg[0] ? lib_msg : strerror(errno ? errno : EIO));
		goto out;
	}
	rc = 0;
out:
	if (h)
		tracecmd_output_close(h);
	warn_buf = NULL;
	return rc;
}

int krec_tracedat_write(const char *dir, int fd, struct krec_tracedat_info *info, char *msg, size_t len)
{
	char ftdir[PATH_MAX], kallsyms[PATH_MAX + 16];
	char **files = NULL;
	struct stat st;
	long page;
	int ncpu = 0, rc = -1;

	memset(info, 0, sizeof(*info));
	if (tracedat_check_copy(dir, ftdir, &page, msg, len) < 0)
		return -1;
	files = calloc(MAX_CPUS, sizeof(*files));
	if (!files) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	if (tracedat_cpu_files(ftdir, page, files, &ncpu, info, msg, len) < 0)
		goto out;
	/* kernel symbols only if the trace has them (DIR/kallsyms), else a missing file: none */
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", dir);
	if (lstat(kallsyms, &st) < 0 || !S_ISREG(st.st_mode))
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", ftdir);
	else
		info->kallsyms = 1;
	rc = tracedat_emit(fd, ftdir, kallsyms, ncpu, files, msg, len);
out:
	for (int i = 0; files && i < ncpu; i++)
		free(files[i]);
	free(files);
	return rc;
}

#else /* !KTRACE_HAVE_TRACECMD */

int krec_tracedat_write(const char *dir, int fd, struct krec_tracedat_info *info, char *msg, size_t len)
{
	(void)dir;
	(void)fd;
	memset(info, 0, sizeof(*info));
	snprintf(msg, len, "this ktrace was built without libtracecmd 1.3 (Debian's libtracecmd-dev "
			   "3.1.6), which writes trace.dat: trace.dat export is left out");
	return -1;
}

#endif
