/*
 * cli/kernel_tasks.c - names for the tasks of a kernel trace.  The records
 * of a ktrace.ko channel (`ktrace read`) and of the kernel's KFT log
 * (`ktrace kft --kernel extract`) carry a thread id but neither its process
 * nor its name (LKST's records carry the process, not the name), so print
 * showed ?/TID and every view a task "?".  The copy is made
 * on the traced machine, where most of those tasks still run: their
 * /proc/TID/status has both, and cli_kernel_tasks() writes them to
 * DST/threads as `TID PID COMM` lines (docs/FORMAT.md), which the reader
 * uses.  The module's LKST channel names the tasks it switches itself
 * (PROCESS_COMM records, include/ktrace/lkst.h): those names come first,
 * they are the ones of the traced time, and they are the only ones for a
 * crash region read after the reboot (no /proc then: @procdir NULL).
 * Other tasks gone by then stay unnamed; the idle task (0) is never named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ktrace/format.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "lib/safefile.h"
#include "reader/reader.h"

/* "Name:" and "Tgid:" of @procdir/@tid/status: 0, or -1 if the task is gone. */
static int task_of(const char *procdir, uint32_t tid, uint32_t *pid, char *comm, size_t len)
{
	char path[4096], line[256];
	FILE *f;
	int have = 0;

	snprintf(path, sizeof(path), "%s/%u/status", procdir, tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (have != 3 && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(comm, len, "%.63s", line + 6);
			have |= 1;
		} else if (sscanf(line, "Tgid: %u", pid) == 1) {
			have |= 2;
		}
	}
	fclose(f);
	return have == 3 && *pid ? 0 : -1;
}

/* Append "TID PID COMM\n" to *@buf.  Return: 0, or -1 out of memory. */
static int add_line(char **buf, size_t *len, size_t *cap, uint32_t tid, uint32_t pid, const char *comm)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%u %u %s\n", tid, pid, comm);

	if (*len + (size_t)n + 1 > *cap) {
		char *nb = realloc(*buf, *cap = 2 * *cap + 4096);

		if (!nb)
			return -1;
		*buf = nb;
	}
	memcpy(*buf + *len, line, (size_t)n);
	*len += (size_t)n;
	return 0;
}

int cli_kernel_tasks(const char *cmd, const char *dst, const char *procdir)
{
	struct ktr_trace *t = ktr_open(dst);
	struct ka_map64 seen = { 0 }, named = { 0 };
	struct { uint32_t tid, pid; char comm[20]; } *names = NULL;
	size_t nnames = 0, capnames = 0, nunnamed = 0, capunnamed = 0;
	uint32_t *unnamed = NULL;
	struct ktr_rec r;
	struct ktr_call c;
	char *buf = NULL, msg[512];
	size_t len = 0, cap = 0;
	int dfd, rc = 0;

	if (!t)
		return -1;
	/*
	 * One pass: the names the trace itself holds (PROCESS_COMM, the last
	 * one of each task), and the threads it shows without a process or
	 * a name, for @procdir.
	 */
	while (ktr_next(t, &r)) {
		uint32_t tid = r.tid, pid = r.pid;
		char comm[20];
		long i;

		if (r.kind != KTR_RECORD)
			continue;
		if (ktr_rec_comm(&r, comm, sizeof(comm))) {
			tid = (uint32_t)r.w[1];
			if (!tid)
				continue;
			if ((i = ka_map64_get(&named, tid)) < 0) {
				if (nnames == capnames) {
					void *nn = realloc(names, (capnames = 2 * capnames + 256) * sizeof(*names));

					if (!nn)
						break;
					names = nn;
				}
				i = (long)nnames++;
				if (ka_map64_put(&named, tid, (uint32_t)i) < 0)
					break;
			}
			names[i].tid = tid;
			names[i].pid = (uint32_t)r.w[2];
			snprintf(names[i].comm, sizeof(names[i].comm), "%s", comm);
			continue;
		}
		if (r.cls == KTRACE_CLASS_CALL && ktr_call_decode(t, &r, &c)) {
			tid = c.tid;
			pid = c.pid;
		}
		/* each thread once, if its process or name is unknown */
		if (!procdir || !tid || ka_map64_get(&seen, tid) >= 0)
			continue;
		if (ka_map64_put(&seen, tid, 0) < 0)
			break;
		if (pid && strcmp(ka_comm(t, tid), "?"))
			continue;
		if (nunnamed == capunnamed) {
			uint32_t *nu = realloc(unnamed, (capunnamed = 2 * capunnamed + 256) * sizeof(*unnamed));

			if (!nu)
				break;
			unnamed = nu;
		}
		unnamed[nunnamed++] = tid;
	}
	for (size_t i = 0; i < nnames; i++)
		if (add_line(&buf, &len, &cap, names[i].tid, names[i].pid, names[i].comm) < 0)
			break;
	for (size_t i = 0; i < nunnamed; i++) {
		uint32_t pid = 0;
		char comm[64];

		if (ka_map64_get(&named, unnamed[i]) >= 0 ||
		    task_of(procdir, unnamed[i], &pid, comm, sizeof(comm)) < 0)
			continue;
		if (add_line(&buf, &len, &cap, unnamed[i], pid, comm) < 0)
			break;
	}
	ktr_close(t);
	ka_map64_free(&seen);
	ka_map64_free(&named);
	free(names);
	free(unnamed);
	if (len) {
		dfd = ksf_dir_open(dst, 0, msg, sizeof(msg));
		if (dfd < 0 || ksf_replace_at(dfd, "threads", buf, len) < 0) {
			cli_error(cmd, "%s/threads: cannot write the names of the kernel trace's tasks%s%s",
				  dst, dfd < 0 ? ": " : "", dfd < 0 ? msg : "");
			rc = -1;
		}
		if (dfd >= 0)
			close(dfd);
	}
	free(buf);
	return rc;
}
