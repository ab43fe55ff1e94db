/*
 * reader/files.c - access to the files of a trace directory: read-only
 * mappings of the real files, or the caller's buffers for ktr_open_mem().
 *
 * Files are mapped whole (MAP_PRIVATE, PROT_READ): the kernel pages them in
 * as the cursors walk, so even a large trace costs address space, not
 * memory.  Every file is opened through ksf_read_open() (lib/safefile.h):
 * never through a symbolic link (in DIR/kernel/NAME, neither kernel nor
 * NAME may be one), only regular files, O_NONBLOCK; a FIFO or device
 * planted in a trace directory is refused with one line before it is
 * opened, so it cannot hang the reader or make it read without end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/safefile.h"
#include "reader/internal.h"

static const struct ktr_memfile *mem_find(struct ktr_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nmfiles; i++)
		if (t->mfiles[i].name && strcmp(t->mfiles[i].name, name) == 0)
			return &t->mfiles[i];
	return NULL;
}

/*
 * ktr_open_in() - ksf_read_open() of DIR/@name for @t: relative to the
 * directory the user named (a sub-trace's "kernel/" is one more component
 * not followed).  Return: a descriptor or -errno.
 */
int ktr_open_in(struct ktr_trace *t, const char *name, unsigned flags)
{
	char rel[4096];

	if (snprintf(rel, sizeof(rel), "%s%s", t->sub_prefix ? t->sub_prefix : "", name) >=
	    (int)sizeof(rel))
		return -ENAMETOOLONG;
	return ksf_read_open(t->base ? t->base : t->dir, rel, flags);
}

/* The callback of ktr_check_files(): one line per refused file, remembered. */
static void bad_file(void *arg, const char *name, int err)
{
	struct ktr_trace *t = arg;
	char **n;

	ktr_diag(t, 1, "%s/%s: %s", t->dir, name, ksf_read_why(err));
	n = realloc(t->badf, (t->nbadf + 1) * sizeof(*n));
	if (!n)
		return;
	t->badf = n;
	if ((n[t->nbadf] = strdup(name)))
		t->nbadf++;
}

/*
 * ktr_check_files() - before anything is read: every file of DIR with a
 * trace file's name must be a regular file (ksf_trace_check()); each that
 * is not is reported once, as an error, and never opened
 * (ktr_file_open() then fails quietly with -EINVAL).
 */
void ktr_check_files(struct ktr_trace *t)
{
	int rc;

	if (t->mfiles)
		return;
	rc = ksf_trace_check(t->base ? t->base : t->dir, t->base ? "kernel" : NULL, bad_file, t);
	if (rc < 0)
		ktr_diag(t, 1, "%s: %s", t->dir, ksf_read_why(rc));
}

/* ktr_file_refused() - 1 if ktr_check_files() refused DIR/@name. */
int ktr_file_refused(const struct ktr_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nbadf; i++)
		if (!strcmp(t->badf[i], name))
			return 1;
	return 0;
}

/*
 * ktr_file_open() - open DIR/@name into @f.  A missing file is reported as
 * an error unless @quiet.  Return: 0, or -errno (@f->exists is then 0, but
 * @f->path is always set when memory allows).
 */
int ktr_file_open(struct ktr_trace *t, struct ktr_file *f, const char *name, int quiet)
{
	struct stat st;
	int fd, err;

	memset(f, 0, sizeof(*f));
	if (asprintf(&f->path, "%s/%s", t->dir, name) < 0) {
		f->path = NULL;
		return -ENOMEM;
	}
	if (t->mfiles) {
		const struct ktr_memfile *m = mem_find(t, name);

		if (!m) {
			if (!quiet)
				ktr_diag(t, 1, "%s: %s", f->path, strerror(ENOENT));
			return -ENOENT;
		}
		f->p = m->data;
		f->size = m->size;
		f->exists = 1;
		return 0;
	}
	if (ktr_file_refused(t, name))
		return -EINVAL; /* said once by ktr_check_files() */
	fd = ktr_open_in(t, name, 0);
	if (fd < 0) {
		if (!quiet || fd != -ENOENT)
			ktr_diag(t, 1, "%s: %s", f->path, ksf_read_why(fd));
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		ktr_diag(t, 1, "%s: %s", f->path, strerror(err));
		close(fd);
		return -err;
	}
	f->exists = 1;
	f->size = (size_t)st.st_size;
	if (f->size) {
		void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			err = errno;
			ktr_diag(t, 1, "%s: mmap: %s", f->path, strerror(err));
			f->size = 0;
			close(fd);
			return -err;
		}
		f->p = p;
		f->mapped = 1;
	}
	close(fd);
	return 0;
}

/* ktr_file_close() - unmap @f and free its path. */
void ktr_file_close(struct ktr_file *f)
{
	if (f->mapped && f->p)
		munmap((void *)f->p, f->size);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* ktr_file_exists() - 1 if DIR/@name exists (any type, a link included:
 * opening it then says what it is), 0 if not. */
int ktr_file_exists(struct ktr_trace *t, const char *name)
{
	char rel[4096];
	struct stat st;

	if (t->mfiles)
		return mem_find(t, name) != NULL;
	if (snprintf(rel, sizeof(rel), "%s%s", t->sub_prefix ? t->sub_prefix : "", name) >=
	    (int)sizeof(rel))
		return 0;
	/* a link among the components "exists": opening it says it is one */
	switch (ksf_read_stat(t->base ? t->base : t->dir, rel, 0, &st)) {
	case 0:
	case -ELOOP:
		return 1;
	default:
		return 0;
	}
}

/*
 * ktr_list_files() - the names in the trace directory (malloc'ed array of
 * malloc'ed strings, *@n of them), or NULL with a diagnostic if the
 * directory cannot be read.
 */
char **ktr_list_files(struct ktr_trace *t, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	DIR *d;
	struct dirent *de;
	int fd;

	*n = 0;
	if (t->mfiles) {
		v = calloc(t->nmfiles + 1, sizeof(*v));
		for (size_t i = 0; v && i < t->nmfiles; i++)
			if (t->mfiles[i].name && (v[*n] = strdup(t->mfiles[i].name)))
				(*n)++;
		return v;
	}
	fd = ktr_open_in(t, ".", KSF_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		ktr_diag(t, 1, "%s: %s", t->dir, fd < 0 ? ksf_read_why(fd) : strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		if ((v[*n] = strdup(de->d_name)))
			(*n)++;
	}
	closedir(d);
	if (!v)
		v = calloc(1, sizeof(*v));
	return v;
}
