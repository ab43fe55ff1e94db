/*
 * reader/files.c - access to the files of a trace directory: read-only
 * mappings of the real files, or the caller's buffers for ktr_open_mem().
 *
 * Files are mapped whole (MAP_PRIVATE, PROT_READ): the kernel pages them in
 * as the cursors walk, so even a large trace costs address space, not
 * memory.  Only regular files are opened (O_NONBLOCK, so a FIFO planted in
 * a trace directory cannot hang the reader).
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

#include "reader/internal.h"

static const struct ktr_memfile *mem_find(struct ktr_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nmfiles; i++)
		if (t->mfiles[i].name && strcmp(t->mfiles[i].name, name) == 0)
			return &t->mfiles[i];
	return NULL;
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
	fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (!quiet || err != ENOENT)
			ktr_diag(t, 1, "%s: %s", f->path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		ktr_diag(t, 1, "%s: %s", f->path, strerror(err));
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		ktr_diag(t, 1, "%s: not a regular file", f->path);
		close(fd);
		return -EINVAL;
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

/* ktr_file_exists() - 1 if DIR/@name exists (any type), 0 if not. */
int ktr_file_exists(struct ktr_trace *t, const char *name)
{
	char *path;
	struct stat st;
	int r;

	if (t->mfiles)
		return mem_find(t, name) != NULL;
	if (asprintf(&path, "%s/%s", t->dir, name) < 0)
		return 0;
	r = stat(path, &st) == 0;
	free(path);
	return r;
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

	*n = 0;
	if (t->mfiles) {
		v = calloc(t->nmfiles + 1, sizeof(*v));
		for (size_t i = 0; v && i < t->nmfiles; i++)
			if (t->mfiles[i].name && (v[*n] = strdup(t->mfiles[i].name)))
				(*n)++;
		return v;
	}
	d = opendir(t->dir);
	if (!d) {
		ktr_diag(t, 1, "%s: %s", t->dir, strerror(errno));
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
