/*
 * kclient/ftrace_copy.c - the raw ftrace copy of a kernel sub-trace,
 * DIR/kernel/ftrace/ (docs/FORMAT.md, "The raw ftrace copy"), and the
 * tracepoints `ktrace record --kernel -e SYS:NAME` names.
 *
 * `ktrace record --kernel` converts the catalogue's events into KEVENT
 * records (kclient/tracefs_record.c); every other field and event would be
 * lost.  So it also keeps what trace-cmd keeps: the ring-buffer pages
 * exactly as trace_pipe_raw gave them (ftrace/cpuN, written by
 * tracefs_record.c), and here, at the start, the files a reader of those
 * pages needs, copied from tracefs into a tree laid out as tracefs is
 * (so libtracecmd's tracecmd_output_set_trace_dir() can point at it,
 * kclient/tracedat.c):
 *
 *   ftrace/events/header_page, ftrace/events/header_event
 *   ftrace/events/SYS/NAME/format    every enabled event's, and every
 *                                    ftrace/NAME's (the tracer's own record
 *                                    types: print, function, ...; libtracecmd's
 *                                    writer fails without them)
 *   ftrace/printk_formats            (addresses of the kernel's constant strings)
 *   ftrace/trace_clock               the instance's ("[mono]")
 *   ftrace/set_event                 the enabled events, "SYS:NAME" a line
 *   ftrace/saved_cmdlines            at the end (krec_ftrace_end())
 *
 * Directories are made with ksf_dir_open(KSF_CREATE) (mode 0700, never
 * through another user's link), files with ksf_replace_at() (mode 0600).
 * Not thread-safe: called by the recording's set-up and end only.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "kclient/internal.h"
#include "lib/safefile.h"

int krec_evlist_add(struct krec_evlist *l, const char *sys, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->sys[i], sys) && !strcmp(l->name[i], name))
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **s = realloc(l->sys, cap * sizeof(*s)), **n;

		if (!s)
			return -ENOMEM;
		l->sys = s;
		n = realloc(l->name, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->name = n;
		l->cap = cap;
	}
	l->sys[l->n] = strdup(sys);
	l->name[l->n] = strdup(name);
	if (!l->sys[l->n] || !l->name[l->n]) {
		free(l->sys[l->n]);
		free(l->name[l->n]);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

void krec_evlist_free(struct krec_evlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->sys[i]);
		free(l->name[i]);
	}
	free(l->sys);
	free(l->name);
	memset(l, 0, sizeof(*l));
}

/* A name tracefs gave that is safe as one path component. */
static int plain_name(const char *s)
{
	return *s && *s != '.' && !strchr(s, '/');
}

/* Expand one pattern "SYS:NAME", "SYS/NAME" or "SYS" (all its events). */
static int match_one(const char *pat, char **systems, struct krec_evlist *l, char *msg, size_t len)
{
	char sp[256];
	const char *np;
	size_t sl = strcspn(pat, ":/");
	unsigned found = 0;

	if (sl == 0 || sl >= sizeof(sp) || (pat[sl] && !pat[sl + 1])) {
		snprintf(msg, len, "'%s' is not a tracepoint: SYS:NAME, SYS:* or SYS", pat);
		return -1;
	}
	memcpy(sp, pat, sl);
	sp[sl] = 0;
	np = pat[sl] ? pat + sl + 1 : "*";
	for (size_t i = 0; systems && systems[i]; i++) {
		char **evs;

		if (!plain_name(systems[i]) || fnmatch(sp, systems[i], 0))
			continue;
		evs = tracefs_system_events(NULL, systems[i]);
		for (size_t j = 0; evs && evs[j]; j++) {
			if (!plain_name(evs[j]) || fnmatch(np, evs[j], 0))
				continue;
			if (krec_evlist_add(l, systems[i], evs[j]) < 0) {
				tracefs_list_free(evs);
				snprintf(msg, len, "out of memory");
				return -1;
			}
			found++;
		}
		tracefs_list_free(evs);
	}
	if (!found) {
		snprintf(msg, len, "unknown tracepoint '%s' (no %s/events/%s/%s)", pat,
			 tracefs_tracing_dir(), sp, np);
		return -1;
	}
	return 0;
}

int krec_events_match(const char *const *pats, size_t n, struct krec_evlist *l, char *msg, size_t len)
{
	char **systems;
	int rc = 0;

	if (!n)
		return 0;
	systems = tracefs_event_systems(NULL);
	if (!systems) {
		snprintf(msg, len, "cannot list %s/events: %s", tracefs_tracing_dir() ? tracefs_tracing_dir() : "tracefs",
			 strerror(errno ? errno : ENOENT));
		return -1;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = match_one(pats[i], systems, l, msg, len);
	tracefs_list_free(systems);
	return rc;
}

int krec_check_events(const char *const *events, size_t n, char *msg, size_t len)
{
	struct krec_evlist l = { 0 };
	const char *tdir;
	char path[PATH_MAX];
	int rc;

	if (!n)
		return 0;
	/* the syntax first: it needs no tracefs */
	for (size_t i = 0; i < n; i++) {
		size_t sl = strcspn(events[i], ":/");

		if (sl == 0 || (events[i][sl] && !events[i][sl + 1])) {
			snprintf(msg, len, "'%s' is not a tracepoint: SYS:NAME, SYS:* or SYS", events[i]);
			return -1;
		}
	}
	tdir = tracefs_tracing_dir();
	snprintf(path, sizeof(path), "%s/events", tdir ? tdir : "");
	if (!tdir || access(path, R_OK | X_OK) < 0)
		return 1; /* not root or no tracefs: krec_start() will say so */
	rc = krec_events_match(events, n, &l, msg, len);
	krec_evlist_free(&l);
	return rc;
}

/* Copy tracefs file @file (of @inst, NULL: the top level) to @name in @dfd. */
static int copy_file(struct tracefs_instance *inst, const char *file, int dfd, const char *name,
		     const char *where, char *msg, size_t len)
{
	int size = 0, err;
	char *text = tracefs_instance_file_read(inst, file, &size);

	if (!text) {
		snprintf(msg, len, "%s: cannot read %s from tracefs", where, file);
		return -1;
	}
	err = ksf_replace_at(dfd, name, text, size > 0 ? (size_t)size : 0);
	free(text);
	if (err < 0) {
		snprintf(msg, len, "%s/%s: cannot write: %s", where, name, strerror(-err));
		return -1;
	}
	return 0;
}

/* Copy events/@sys/@name/format into @kdir/ftrace/events/@sys/@name/. */
static int copy_format(const char *kdir, const char *sys, const char *name, char *msg, size_t len)
{
	char path[PATH_MAX], file[512];
	int sfd, rc;

	if (snprintf(path, sizeof(path), "%s/ftrace/events/%s/%s", kdir, sys, name) >= (int)sizeof(path)) {
		snprintf(msg, len, "%s: path too long", kdir);
		return -1;
	}
	sfd = ksf_dir_open(path, KSF_CREATE, msg, len);
	if (sfd < 0)
		return -1;
	snprintf(file, sizeof(file), "events/%s/%s/format", sys, name);
	rc = copy_file(NULL, file, sfd, "format", path, msg, len);
	close(sfd);
	return rc;
}

int krec_ftrace_begin(const char *kdir, struct tracefs_instance *inst, const struct krec_evlist *l,
		      char *msg, size_t len)
{
	char path[PATH_MAX], *list = NULL;
	size_t llen = 0;
	int fd, efd;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/ftrace/events", kdir) >= (int)sizeof(path)) {
		snprintf(msg, len, "%s: path too long", kdir);
		return -1;
	}
	efd = ksf_dir_open(path, KSF_CREATE, msg, len);
	if (efd < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/ftrace", kdir);
	fd = ksf_dir_open(path, 0, msg, len);
	if (fd < 0) {
		close(efd);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ftrace/events", kdir);
	if (copy_file(NULL, "events/header_page", efd, "header_page", path, msg, len) < 0 ||
	    copy_file(NULL, "events/header_event", efd, "header_event", path, msg, len) < 0)
		goto fail;
	close(efd);
	efd = -1;
	snprintf(path, sizeof(path), "%s/ftrace", kdir);
	if (copy_file(NULL, "printk_formats", fd, "printk_formats", path, msg, len) < 0 ||
	    copy_file(inst, "trace_clock", fd, "trace_clock", path, msg, len) < 0)
		goto fail;
	f = open_memstream(&list, &llen);
	if (!f) {
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < l->n; i++) {
		fprintf(f, "%s:%s\n", l->sys[i], l->name[i]);
		if (copy_format(kdir, l->sys[i], l->name[i], msg, len) < 0) {
			fclose(f);
			goto fail;
		}
	}
	{
		char **evs = tracefs_system_events(NULL, "ftrace");

		for (size_t j = 0; evs && evs[j]; j++)
			if (plain_name(evs[j]) && copy_format(kdir, "ftrace", evs[j], msg, len) < 0) {
				tracefs_list_free(evs);
				fclose(f);
				goto fail;
			}
		tracefs_list_free(evs);
	}
	if (fclose(f) != 0) {
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	{
		int err = ksf_replace_at(fd, "set_event", list, llen);

		free(list);
		list = NULL;
		if (err < 0) {
			snprintf(msg, len, "%s/ftrace/set_event: cannot write: %s", kdir, strerror(-err));
			goto fail;
		}
	}
	return fd;
fail:
	free(list);
	if (efd >= 0)
		close(efd);
	close(fd);
	return -1;
}

int krec_ftrace_end(int fd, const char *kdir, char *msg, size_t len)
{
	char where[PATH_MAX];

	snprintf(where, sizeof(where), "%s/ftrace", kdir);
	return copy_file(NULL, "saved_cmdlines", fd, "saved_cmdlines", where, msg, len);
}
