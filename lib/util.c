/*
 * lib/util.c - small helpers of the runtime: the per-thread error message
 * behind ktrace_error(), whole-file writes with rename, the threads file
 * (files are created through lib/safefile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runtime.h"
#include "safefile.h"

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
 * Replace dir/name with @text atomically (lib/safefile.c: a temporary with
 * an unpredictable name, then rename), mode 0600.  Return: 0 or -errno
 * (message set).
 */
int kt_write_file(const char *dir, const char *name, const char *text)
{
	int err = ksf_replace(dir, name, text, strlen(text));

	if (err < 0)
		kt_seterr(-err, "ktrace: %s/%s: cannot write: %s", dir, name, strerror(-err));
	return err;
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
	char line[64], comm[17] = "";
	int fd, n;

	if (prctl(PR_GET_NAME, comm) < 0)
		comm[0] = 0;
	comm[16] = 0;
	for (char *c = comm; *c; c++)
		if (*c == '\n' || *c == ' ')
			*c = '_';
	fd = ksf_open(ch->dir, "threads", O_WRONLY | O_APPEND); /* created at setup */
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

#if defined(__SANITIZE_ADDRESS__)
#define KT_HEAP(f) f
#else
/* glibc's allocator, which an interposed malloc does not replace */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
#define KT_HEAP(f) __libc_##f
#endif

void *kt_malloc(size_t n)
{
	return KT_HEAP(malloc)(n);
}

void *kt_calloc(size_t n, size_t size)
{
	return KT_HEAP(calloc)(n, size);
}

void *kt_realloc(void *p, size_t n)
{
	return KT_HEAP(realloc)(p, n);
}

void kt_free(void *p)
{
	KT_HEAP(free)(p);
}

char *kt_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = kt_malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

/* Settings that replace the environment (kt_env_use()): "NAME=VALUE\0"..., "\0" at the end. */
static char *kt_env_text;

int kt_env_use(const char *text)
{
	size_t n = 0;
	char *t = NULL;

	if (text) {
		while (text[n])
			n += strlen(text + n) + 1;
		t = kt_malloc(n + 1);
		if (!t)
			return -ENOMEM;
		memcpy(t, text, n + 1);
	}
	kt_free(kt_env_text);
	kt_env_text = t;
	return 0;
}

const char *kt_env(const char *name)
{
	size_t nl = strlen(name);

	if (!kt_env_text)
		return getenv(name);
	for (const char *e = kt_env_text; *e; e += strlen(e) + 1)
		if (!strncmp(e, name, nl) && e[nl] == '=')
			return e + nl + 1;
	return NULL;
}

int kt_setenv(const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value), n = 0;
	char *s = kt_malloc(nl + vl + 2), **e;

	if (!s)
		return -ENOMEM;
	memcpy(s, name, nl);
	s[nl] = '=';
	memcpy(s + nl + 1, value, vl + 1);
	for (e = environ; e && *e; e++, n++)
		if (!strncmp(*e, name, nl) && (*e)[nl] == '=') {
			*e = s; /* the old string is whoever's it was: left alone */
			return 0;
		}
	e = kt_malloc((n + 2) * sizeof(*e));
	if (!e) {
		kt_free(s);
		return -ENOMEM;
	}
	if (n)
		memcpy(e, environ, n * sizeof(*e));
	e[n] = s;
	e[n + 1] = NULL;
	environ = e;
	return 0;
}

void kt_outf(struct kt_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = 1;
			return;
		}
		if (o->buf && (size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		{
			size_t cap = o->cap ? o->cap : 4096;
			char *b;

			while (cap - o->len <= (size_t)n)
				cap *= 2;
			b = kt_realloc(o->buf, cap);
			if (!b) {
				o->oom = 1;
				return;
			}
			o->buf = b;
			o->cap = cap;
		}
	}
}
