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

/* `thread TID PID COMM` for every task listed in @procdir. */
static void add_threads(FILE *t, const char *procdir)
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
				fprintf(t, "thread %s %s %s\n", q->d_name, p->d_name, comm[0] ? comm : "?");
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
	uint64_t mono = kcl_now_ns(CLOCK_MONOTONIC), real = kcl_now_ns(CLOCK_REALTIME);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f) {
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -1;
	}
	fprintf(f, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	fprintf(f, "# KFT kernel trace from %s (ktrace kft)\n", source);
	fprintf(f, "clock mono\n");
	fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", mono / 2, mono / 2);
	fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", mono, mono);
	kcl_md_machine(f, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "channel kft\nmode discard\nscope global\nbuf-size %u\nbuf-nr 1\nlayout packed\n", buf_size);
	fprintf(f, "stream 0 shared cpu0\n");
	/* KFT's times count from boot: CLOCK_MONOTONIC 0. */
	fprintf(f, "created-ns 0\n");
	fprintf(f, "realtime-ns %" PRIu64 "\n", real - mono);
	if (have_syms)
		fprintf(f, "# kernel function symbols: kallsyms (docs/FORMAT.md, \"Kernel traces\")\n");
	add_threads(f, procdir);
	if (fclose(f) != 0) {
		free(buf);
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -1;
	}
	rc = ksf_replace(dst, "metadata", buf, len);
	free(buf);
	if (rc < 0) {
		kcl_error(CMD, "%s/metadata: %s", dst, strerror(-rc));
		return -1;
	}
	return 0;
}
