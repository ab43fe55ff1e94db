/*
 * lib/util.c - small helpers of the runtime: the per-thread error message
 * behind ktrace_error(), whole-file writes with rename, the threads file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runtime.h"

static __thread char kt_errbuf[512];

/* Record a one-line error for ktrace_error() and set errno to @err. */
void kt_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kt_errbuf, sizeof(kt_errbuf), fmt, ap);
	va_end(ap);
	errno = err;
}

KT_EXPORT const char *ktrace_error(void)
{
	return kt_errbuf;
}

/*
 * Replace dir/name with @text atomically (write dir/.name.tmp, rename), mode
 * 0600.  Return: 0 or -errno (message set).
 */
int kt_write_file(const char *dir, const char *name, const char *text)
{
	char tmp[4096], path[4096];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		kt_seterr(err, "ktrace: %s: cannot create: %s", tmp, strerror(err));
		return -err;
	}
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		text += n;
		len -= (size_t)n;
	}
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		kt_seterr(err, "ktrace: %s: cannot write: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

/* Async-signal-safe formatting: decimal of @v into @buf, returns length. */
static int kt_utoa(char *buf, uint32_t v)
{
	char tmp[12];
	int n = 0, len = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		buf[len++] = tmp[--n];
	return len;
}

/* Append @s to @buf at @at (at most @cap - 1 bytes in all), NUL-terminated. */
static int kt_cat(char *buf, int at, size_t cap, const char *s)
{
	while (*s && (size_t)at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = 0;
	return at;
}

/*
 * Append "tid pid comm" for @tid to the trace's threads file.  Uses only
 * async-signal-safe calls (it can run in a thread's first, possibly
 * nested, record).  Failures are ignored: the names are a convenience.
 */
void kt_append_thread(struct ktrace_channel *ch, uint32_t tid)
{
	char path[4096], line[64], comm[17] = "";
	int fd, n;

	if (prctl(PR_GET_NAME, comm) < 0)
		comm[0] = 0;
	comm[16] = 0;
	for (char *c = comm; *c; c++)
		if (*c == '\n' || *c == ' ')
			*c = '_';
	n = kt_cat(path, 0, sizeof(path), ch->dir);
	n = kt_cat(path, n, sizeof(path), "/threads");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = kt_utoa(line, tid);
	line[n++] = ' ';
	n += kt_utoa(line + n, (uint32_t)getpid());
	line[n++] = ' ';
	n = kt_cat(line, n, sizeof(line) - 1, comm[0] ? comm : "?");
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}
