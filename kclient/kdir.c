/*
 * kclient/kdir.c - the trace directory of a KFT kernel run, shared by
 * `ktrace kft --kernel extract` (kclient/kft_proc.c) and `ktrace kft
 * --tracefs` (kclient/kft_tracefs.c): creating it (or reusing an earlier
 * one), the copy of the kernel's function symbols (DST/kallsyms) and the
 * metadata (docs/FORMAT.md, "Kernel traces").  API in kclient/kclient.h
 * (kft_kdir_*).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/format.h>

#include "kclient/internal.h"
#include "lib/safefile.h"

#define CMD "kft"

int kft_kdir_create(const char *dst)
{
	char path[4200], msg[512];
	size_t len = 0;
	char *meta;
	DIR *d;
	struct dirent *e;
	int used = 0, fd;

	/* yours, not a link, holding nothing or a trace (lib/safefile.h) */
	fd = ksf_dir_open(dst, KSF_CREATE | KSF_TRACE, msg, sizeof(msg));
	if (fd < 0) {
		kcl_error(CMD, "%s", msg);
		return -1;
	}
	close(fd);
	/* Reuse an empty directory or an earlier kernel KFT trace, nothing else. */
	d = opendir(dst);
	while (d && (e = readdir(d)))
		used |= strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	if (!used)
		return 0;
	snprintf(path, sizeof(path), "%s/metadata", dst);
	meta = kcl_slurp(path, &len, 1 << 24);
	if (meta && strstr(meta, "\nchannel kft\n") && strstr(meta, "\nscope global\n")) {
		free(meta);
		return 0;
	}
	free(meta);
	kcl_error(CMD, "%s: exists and is not a kernel KFT trace: not overwriting it (choose another directory)",
		  dst);
	return -1;
}

int kft_kdir_symbols(const char *dst, const char *kallsyms)
{
	size_t len = 0, out, kept, nonzero;
	char *text = kcl_slurp(kallsyms, &len, (size_t)1 << 30), *buf;
	int rc;

	if (!text) {
		kcl_error(CMD, "%s: %s", kallsyms, strerror(errno));
		return -1;
	}
	buf = malloc(len + 1);
	if (!buf) {
		free(text);
		kcl_error(CMD, "%s: out of memory", kallsyms);
		return -1;
	}
	out = kft_ksyms_filter(text, len, buf, &kept, &nonzero);
	free(text);
	if (!kept || !nonzero) {
		free(buf);
		kcl_error(CMD, "warning: %s: %s: trace addresses stay unnamed", kallsyms,
			  kept ? "all addresses are 0 (run as root, or see kptr_restrict)"
			       : "no function symbols");
		return 0;
	}
	rc = ksf_replace(dst, "kallsyms", buf, out);
	free(buf);
	if (rc < 0) {
		kcl_error(CMD, "%s/kallsyms: %s", dst, strerror(-rc));
		return -1;
	}
	return 1;
}

struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		size_t cap;
		char *p;

		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		cap = t->cap ? 2 * t->cap : 8192;
		while (cap <= t->len + (size_t)n)
			cap *= 2;
		p = realloc(t->buf, cap);
		if (!p) {
			t->failed = 1;
			return;
		}
		t->buf = p;
		t->cap = cap;
	}
}

/* `thread TID PID COMM` for every task listed in @procdir. */
static void add_threads(struct text *t, const char *procdir)
{
	DIR *d = opendir(procdir);
	struct dirent *p;

	if (!d)
		return;
	while ((p = readdir(d))) {
		char path[600];
		DIR *td;
		struct dirent *q;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/task", procdir, p->d_name);
		td = opendir(path);
		if (!td)
			continue;
		while ((q = readdir(td))) {
			char cpath[900], comm[64] = "";
			FILE *f;

			if (q->d_name[0] < '1' || q->d_name[0] > '9')
				continue;
			snprintf(cpath, sizeof(cpath), "%s/%s/comm", path, q->d_name);
			f = fopen(cpath, "re");
			if (!f)
				continue;
			if (fgets(comm, sizeof(comm), f)) {
				comm[strcspn(comm, "\n")] = '\0';
				add(t, "thread %s %s %s\n", q->d_name, p->d_name, comm[0] ? comm : "?");
			}
			fclose(f);
		}
		closedir(td);
	}
	closedir(d);
}

int kft_kdir_metadata(const char *dst, const char *source, uint32_t buf_size, int have_syms,
		      const char *procdir)
{
	struct text t = { 0 };
	struct utsname u;
	uint64_t mono = kcl_now_ns(CLOCK_MONOTONIC), real = kcl_now_ns(CLOCK_REALTIME);
	int rc;

	add(&t, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	add(&t, "# KFT kernel trace from %s (ktrace kft)\n", source);
	add(&t, "clock mono\n");
	add(&t, "calib %" PRIu64 " %" PRIu64 "\n", mono / 2, mono / 2);
	add(&t, "calib %" PRIu64 " %" PRIu64 "\n", mono, mono);
	if (uname(&u) == 0) {
		add(&t, "host %s\n", u.nodename);
		add(&t, "kernel %s\n", u.release);
		add(&t, "machine %s\n", u.machine);
	}
	add(&t, "cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	add(&t, "channel kft\n");
	add(&t, "mode discard\n");
	add(&t, "scope global\n");
	add(&t, "buf-size %u\n", buf_size);
	add(&t, "buf-nr 1\n");
	add(&t, "layout packed\n");
	add(&t, "stream 0 shared cpu0\n");
	/* KFT's times count from boot: CLOCK_MONOTONIC 0. */
	add(&t, "created-ns 0\n");
	add(&t, "realtime-ns %" PRIu64 "\n", real - mono);
	if (have_syms)
		add(&t, "# kernel function symbols: kallsyms (docs/FORMAT.md, \"Kernel traces\")\n");
	add_threads(&t, procdir);
	if (t.failed) {
		free(t.buf);
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -1;
	}
	rc = ksf_replace(dst, "metadata", t.buf, t.len);
	free(t.buf);
	if (rc < 0) {
		kcl_error(CMD, "%s/metadata: %s", dst, strerror(-rc));
		return -1;
	}
	return 0;
}
