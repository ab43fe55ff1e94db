/*
 * lib/safefile.c - creating trace directories and files without following
 * links or reusing another user's directory (the rules and the API are in
 * lib/safefile.h).
 *
 * Paths are resolved by hand, one component at a time with openat(2) and
 * O_NOFOLLOW, so that the decision to follow a symbolic link is ours (root's
 * or the caller's links only) and does not depend on the kernel's
 * fs.protected_symlinks setting or on sticky bits.  After that, every
 * operation is relative to a directory descriptor whose owner was checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH, renameat2(); set when built alone (kmod/tests) */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "safefile.h"

#define KSF_MAX_LINKS 40 /* as the kernel's MAXSYMLINKS */

static void __attribute__((format(printf, 3, 4))) say_(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* Set the message, if there is a buffer: without one nothing is evaluated
 * (strerror() and vsnprintf() are not async-signal-safe). */
#define say(msg, len, ...)                              \
	do {                                            \
		if ((msg) && (len))                     \
			say_((msg), (len), __VA_ARGS__); \
	} while (0)

/*
 * openat(@fd, @name, @flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), making
 * the directory (mode 0700) first if it is missing and @create.
 * Return: the descriptor, or -1 with errno set.
 */
static int open_dir_at(int fd, const char *name, int flags, unsigned create)
{
	int d = openat(fd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (d < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, name, 0700) < 0 && errno != EEXIST)
			return -1;
		d = openat(fd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return d;
}

/*
 * Resolve @path up to its last component, which is left in *@last (inside
 * @buf, PATH_MAX bytes; "." for "/").  Symbolic links among the leading
 * components are followed only if root or the caller owns them.  With
 * KSF_CREATE missing leading directories are created (0700).
 * Return: an O_PATH descriptor of the directory holding the last
 * component, or -errno (@msg set).
 */
static int walk(const char *path, unsigned flags, char *buf, const char **last, char *msg,
		size_t len)
{
	char link[PATH_MAX];
	size_t n = strlen(path);
	int fd, links = 0;
	char *p;

	if (!n) {
		say(msg, len, "empty path");
		return -ENOENT;
	}
	if (n >= PATH_MAX) {
		say(msg, len, "%.64s...: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	fd = open(buf[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		say(msg, len, "%s: %s", path, strerror(err));
		return -err;
	}
	for (p = buf;;) {
		struct stat st;
		char *comp, *slash;
		size_t rest;
		ssize_t l;
		int nfd, err;

		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (!slash) {
			*last = *p ? p : ".";
			return fd;
		}
		*slash = '\0';
		comp = p;
		p = slash + 1;
		nfd = open_dir_at(fd, comp, O_PATH, flags & KSF_CREATE);
		if (nfd >= 0) {
			close(fd);
			fd = nfd;
			continue;
		}
		err = errno;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode)) {
			err = err == ELOOP ? ENOTDIR : err;
			say(msg, len, "%s: %s", path, strerror(err));
			close(fd);
			return -err;
		}
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
			say(msg, len,
			    "%s: '%s' is a symbolic link owned by uid %u (neither root nor you): not following it",
			    path, comp, (unsigned)st.st_uid);
			close(fd);
			return -ELOOP;
		}
		l = readlinkat(fd, comp, link, sizeof(link));
		rest = strlen(p);
		if (++links > KSF_MAX_LINKS || l <= 0 || (size_t)l + 1 + rest >= sizeof(link)) {
			err = l < 0 ? errno : links > KSF_MAX_LINKS ? ELOOP : ENAMETOOLONG;
			say(msg, len, "%s: '%s': %s", path, comp, strerror(err));
			close(fd);
			return -err;
		}
		/* go on with the link's target followed by the rest of the path */
		link[l] = '/';
		memcpy(link + l + 1, p, rest + 1);
		memcpy(buf, link, (size_t)l + 1 + rest + 1);
		p = buf;
		if (buf[0] == '/') {
			close(fd);
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
		}
	}
}

int ksf_parent_open(const char *path, char *buf, const char **last, char *msg, size_t len)
{
	if (msg && len)
		msg[0] = '\0';
	return walk(path, 0, buf, last, msg, len);
}

int ksf_trace_name(const char *name, int top)
{
	static const char *const fixed[] = { "metadata", "control", "state", "dropped", "threads",
					     "callsites", "kft", "kft-status", "kallsyms", "session",
					     "kft-patch", /* lib/kft_patch.c */
					     "kft-dynpatch", /* lib/kft_dynpatch.c */
					     NULL };
	const char *d;

	if (top && !strcmp(name, "kernel"))
		return 1;
	for (int i = 0; fixed[i]; i++) {
		size_t n = strlen(fixed[i]);

		if (!strcmp(name, fixed[i]))
			return 1;
		/* a temporary of an atomic rewrite: ".NAME.<anything>" */
		if (name[0] == '.' && !strncmp(name + 1, fixed[i], n) && name[n + 1] == '.')
			return 1;
	}
	if (!strncmp(name, "trace", 5))
		d = name + 5;
	else if (!strncmp(name, "cpu", 3))
		d = name + 3;
	else
		return 0;
	if (!*d)
		return 0;
	for (; *d; d++)
		if (*d < '0' || *d > '9')
			return 0;
	return 1;
}

/*
 * A directory's entries read with getdents64(2) into a buffer of its own:
 * no DIR (fdopendir() allocates it with the program's malloc, and
 * libktrace runs inside programs whose malloc may be their own).
 */
struct dir_it {
	int fd, err;
	size_t pos, len;
	char buf[4096] __attribute__((aligned(8)));
};

static void dir_start(struct dir_it *it, int fd)
{
	it->fd = fd;
	it->err = 0;
	it->pos = it->len = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		it->err = -errno;
}

/* The next name other than "." and "..", or NULL at the end or on an error (it->err). */
static const char *dir_next(struct dir_it *it)
{
	for (;;) {
		const struct dirent64 *e;

		if (it->pos >= it->len) {
			ssize_t n = it->err ? 0 : getdents64(it->fd, it->buf, sizeof(it->buf));

			if (n < 0)
				it->err = -errno;
			if (n <= 0)
				return NULL;
			it->len = (size_t)n;
			it->pos = 0;
		}
		e = (const struct dirent64 *)(it->buf + it->pos);
		it->pos += e->d_reclen;
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			return e->d_name;
	}
}

/*
 * Remove everything in the directory @fd: files, links (not followed) and
 * directories down to @depth levels (the raw ftrace copy of a kernel
 * sub-trace, ftrace/, laid out as tracefs: events/SYS/NAME/format).
 * Return: 0 or -errno.
 */
static int clear_tree(int fd, int depth)
{
	struct dir_it it;
	const char *n;
	int err = 0;

	dir_start(&it, fd);
	while (!err && (n = dir_next(&it))) {
		int sub;

		if (unlinkat(fd, n, 0) == 0 || errno == ENOENT)
			continue;
		if ((errno != EISDIR && errno != EPERM) || depth <= 0) {
			err = -errno;
			break;
		}
		sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			err = -errno;
			break;
		}
		err = clear_tree(sub, depth - 1);
		close(sub);
		if (!err && unlinkat(fd, n, AT_REMOVEDIR) < 0)
			err = -errno;
	}
	return err ? err : it.err;
}

/*
 * Check that the directory @fd (@path in messages) holds only a trace
 * (@top: a kernel/ sub-trace allowed; ftrace/, the raw copy of a kernel
 * sub-trace's ring buffer, allowed at either level); with @clear remove it.
 * Return: 0 or -errno (@msg set).
 */
static int trace_dir(int fd, const char *path, int top, int clear, char *msg, size_t len)
{
	struct dir_it it;
	const char *n;
	int err = 0;

	dir_start(&it, fd);
	while ((n = dir_next(&it))) {
		if (!ksf_trace_name(n, top) && strcmp(n, "ftrace")) {
			say(msg, len, "%s: exists and holds '%s', not a ktrace trace (choose another directory)",
			    path, n);
			return -EEXIST;
		}
	}
	if (it.err) {
		say(msg, len, "%s: cannot list: %s", path, strerror(-it.err));
		return it.err;
	}
	dir_start(&it, fd);
	while (clear && !err && (n = dir_next(&it))) {
		int kfd;

		kfd = top && !strcmp(n, "kernel") ?
			      openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (kfd < 0 && !strcmp(n, "ftrace"))
			kfd = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (kfd >= 0) {
			err = strcmp(n, "ftrace") ? trace_dir(kfd, path, 0, 1, msg, len) : clear_tree(kfd, 3);
			close(kfd);
			if (!err && unlinkat(fd, n, AT_REMOVEDIR) < 0)
				err = -errno;
		} else if (unlinkat(fd, n, 0) < 0 && errno != ENOENT) {
			err = -errno;
		}
		if (err && msg && !*msg)
			say(msg, len, "%s: cannot remove the old trace's '%s': %s", path, n,
			    strerror(-err));
	}
	return err;
}

int ksf_dir_open(const char *path, unsigned flags, char *msg, size_t len)
{
	char buf[PATH_MAX];
	const char *last = ".";
	struct stat st;
	int pfd, fd, err;

	if (msg && len)
		msg[0] = '\0';
	pfd = walk(path, flags, buf, &last, msg, len);
	if (pfd < 0)
		return pfd;
	fd = open_dir_at(pfd, last, O_RDONLY, flags & KSF_CREATE);
	if (fd < 0) {
		err = errno;
		if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			err = ELOOP;
			say(msg, len, "%s: is a symbolic link: not following it (name the directory itself)",
			    path);
		} else if (err == ENOTDIR || err == ELOOP) {
			err = ENOTDIR;
			say(msg, len, "%s: exists and is not a directory", path);
		} else {
			say(msg, len, "%s: %s", path, strerror(err));
		}
		close(pfd);
		return -err;
	}
	close(pfd);
	if (fstat(fd, &st) < 0) {
		err = errno;
		say(msg, len, "%s: %s", path, strerror(err));
		close(fd);
		return -err;
	}
	if (st.st_uid != geteuid()) {
		say(msg, len, "%s: owned by uid %u, not by you (uid %u): refusing to write into another user's directory",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
		err = errno;
		say(msg, len, "%s: cannot make it private (chmod 0700): %s", path, strerror(err));
		close(fd);
		return -err;
	}
	if (flags & KSF_TRACE) {
		err = trace_dir(fd, path, 1, (flags & KSF_CLEAR) != 0, msg, len);
		if (err) {
			close(fd);
			return err;
		}
	}
	return fd;
}

int ksf_create_at(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name,
			(flags & (O_ACCMODE | O_APPEND)) | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
				O_CLOEXEC,
			0600);

	return fd < 0 ? -errno : fd;
}

int ksf_open_at(int dirfd, const char *name, int flags)
{
	struct stat st;
	int fd = openat(dirfd, name,
			(flags & (O_ACCMODE | O_APPEND)) | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* 64 unpredictable bits: getrandom(), else the clock mixed with the pid. */
static uint64_t random64(void)
{
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
	    (uint64_t)(uintptr_t)&v;
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finaliser */
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

int ksf_tmp_at(int dirfd, const char *name, char *tmp, size_t len)
{
	size_t n = strlen(name);
	int fd = -EEXIST;

	if (n + KSF_TMP_DIGITS + 3 > len || n + KSF_TMP_DIGITS + 2 > NAME_MAX)
		return -ENAMETOOLONG;
	tmp[0] = '.';
	memcpy(tmp + 1, name, n);
	tmp[n + 1] = '.';
	tmp[n + 2 + KSF_TMP_DIGITS] = '\0';
	for (int tries = 0; tries < 16 && fd == -EEXIST; tries++) {
		uint64_t r = random64();

		for (int i = 0; i < KSF_TMP_DIGITS; i++, r >>= 4)
			tmp[n + 2 + i] = "0123456789abcdef"[r & 15];
		fd = ksf_create_at(dirfd, tmp, O_WRONLY);
	}
	return fd;
}

/*
 * Put the finished temporary @tmp in place of @name.  An existing @name is
 * swapped with it (renameat2(RENAME_EXCHANGE)) and the old file, now named
 * @tmp, unlinked: ext4 (auto_da_alloc) starts writing a file back at once
 * when rename(2) replaces another, about 1 ms per small file, 4 ms at the
 * end of a run, against 0.25 ms for the exchange.  A @name that does not
 * exist yet, or a file system without RENAME_EXCHANGE, gets renameat(2).
 * A directory named @name is swapped back (rename(2) would have failed
 * with EISDIR too).  Return: 0 or an errno value.
 */
static int install(int dirfd, const char *tmp, const char *name)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
		if (unlinkat(dirfd, tmp, 0) == 0)
			return 0;
		renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE);
		return EISDIR;
	}
	if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
		return errno;
	return renameat(dirfd, tmp, dirfd, name) < 0 ? errno : 0;
}

int ksf_replace_at(int dirfd, const char *name, const void *buf, size_t len)
{
	char tmp[NAME_MAX + 1];
	const char *p = buf;
	int fd = ksf_tmp_at(dirfd, name, tmp, sizeof(tmp)), err = 0;

	if (fd < 0)
		return fd;
	while (len && !err) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : ENOSPC;
		} else {
			p += w;
			len -= (size_t)w;
		}
	}
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err)
		err = install(dirfd, tmp, name);
	if (err)
		unlinkat(dirfd, tmp, 0);
	return -err;
}

int ksf_create(const char *dir, const char *name, int flags)
{
	int dfd = ksf_dir_open(dir, 0, NULL, 0), fd;

	if (dfd < 0)
		return dfd;
	fd = ksf_create_at(dfd, name, flags);
	close(dfd);
	return fd;
}

int ksf_open(const char *dir, const char *name, int flags)
{
	int dfd = ksf_dir_open(dir, 0, NULL, 0), fd;

	if (dfd < 0)
		return dfd;
	fd = ksf_open_at(dfd, name, flags);
	close(dfd);
	return fd;
}

int ksf_replace(const char *dir, const char *name, const void *buf, size_t len)
{
	int dfd = ksf_dir_open(dir, 0, NULL, 0), rc;

	if (dfd < 0)
		return dfd;
	rc = ksf_replace_at(dfd, name, buf, len);
	close(dfd);
	return rc;
}

int ksf_unlink(const char *dir, const char *name)
{
	int dfd = ksf_dir_open(dir, 0, NULL, 0), rc;

	if (dfd < 0)
		return dfd;
	rc = unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	close(dfd);
	return rc;
}

/*
 * Resolve @name (relative to @dir, or a whole path if @dir is NULL) up to
 * its last component, leading components opened with O_NOFOLLOW unless
 * KSF_FOLLOW (a whole path's leading components are followed: the caller
 * named them).  @buf: PATH_MAX bytes; *@last points into it.
 * Return: an O_PATH descriptor of the directory holding the last
 * component (AT_FDCWD-like for a NULL @dir and a bare name), or -errno.
 */
static int read_parent(const char *dir, const char *name, unsigned flags, char *buf,
		       const char **last)
{
	size_t n = name ? strlen(name) : 0;
	char *p, *slash;
	int fd;

	if (!n)
		return -ENOENT;
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, name, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (!dir) {
		/* a whole path: everything but the last component as given */
		slash = strrchr(buf, '/');
		if (!slash) {
			*last = buf;
			fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
			return fd < 0 ? -errno : fd;
		}
		*last = slash[1] ? slash + 1 : ".";
		if (slash == buf) {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			*slash = '\0';
			fd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		return fd < 0 ? -errno : fd;
	}
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (p = buf;;) {
		int nfd, err;
		struct stat st;

		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (!slash) {
			*last = *p ? p : ".";
			return fd;
		}
		*slash = '\0';
		nfd = openat(fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC |
				     (flags & KSF_FOLLOW ? 0 : O_NOFOLLOW));
		if (nfd < 0) {
			err = errno;
			if ((err == ENOTDIR || err == ELOOP) &&
			    fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0)
				err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
			close(fd);
			return -err;
		}
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
}

/* The error for a file of type @mode that is not what @flags ask for, or 0. */
static int wrong_type(mode_t mode, unsigned flags)
{
	if (S_ISLNK(mode))
		return -ELOOP;
	if (flags & KSF_DIRECTORY)
		return S_ISDIR(mode) ? 0 : -ENOTDIR;
	if (S_ISREG(mode))
		return 0;
	return S_ISDIR(mode) ? -EISDIR : -EINVAL;
}

int ksf_read_stat(const char *dir, const char *name, unsigned flags, struct stat *st)
{
	char buf[PATH_MAX];
	const char *last;
	int dfd = read_parent(dir, name, flags, buf, &last), rc;

	if (dfd < 0)
		return dfd;
	rc = fstatat(dfd, last, st, flags & KSF_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(dfd);
	return rc;
}

int ksf_read_open(const char *dir, const char *name, unsigned flags)
{
	char buf[PATH_MAX];
	const char *last;
	struct stat st, st2;
	int dfd = read_parent(dir, name, flags, buf, &last), fd, err;

	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, last, &st, flags & KSF_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		err = -errno;
		close(dfd);
		return err;
	}
	err = wrong_type(st.st_mode, flags);
	if (err) {
		close(dfd);
		return err;
	}
	fd = openat(dfd, last,
		    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
			    (flags & KSF_DIRECTORY ? O_DIRECTORY : 0) |
			    (flags & KSF_FOLLOW ? 0 : O_NOFOLLOW));
	err = fd < 0 ? -errno : 0;
	close(dfd);
	if (fd < 0)
		return err;
	if (fstat(fd, &st2) < 0 || (err = wrong_type(st2.st_mode, flags)) ||
	    st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		err = err ? err : -EAGAIN; /* swapped while we looked */
		close(fd);
		return err;
	}
	return fd;
}

const char *ksf_read_why(int err)
{
	switch (err < 0 ? -err : err) {
	case ELOOP:
		return "is a symbolic link: not following it";
	case EISDIR:
		return "is a directory, not a regular file: not reading it";
	case EINVAL:
		return "not a regular file (a FIFO, device or socket): not reading it";
	case EAGAIN:
		return "replaced while being opened: not reading it";
	case ENOTDIR:
		return "not a directory: not reading it";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

int ksf_trace_check(const char *dir, const char *sub,
		    void (*report)(void *arg, const char *name, int err), void *arg)
{
	int fd = ksf_read_open(dir, sub ? sub : ".", KSF_DIRECTORY), bad = 0;
	struct dir_it it;
	const char *n;

	if (fd == -ENOENT && sub)
		return 0;
	if (fd < 0)
		return fd;
	dir_start(&it, fd);
	while ((n = dir_next(&it))) {
		struct stat st;
		int err;

		if (n[0] == '.' || !ksf_trace_name(n, !sub))
			continue;
		if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		err = wrong_type(st.st_mode, !sub && !strcmp(n, "kernel") ? KSF_DIRECTORY : 0);
		if (err) {
			bad++;
			if (report)
				report(arg, n, err);
		}
	}
	close(fd);
	return it.err ? it.err : bad;
}
