/*
 * kclient/text.c - a growing text buffer for the metadata and status files
 * kclient writes (kclient/internal.h: kcl_text_add(), kcl_text_host()).
 * Plain libc, so the VM tests' helper can link it with kclient/relay.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kclient/internal.h"

void kcl_text_add(struct kcl_text *t, const char *fmt, ...)
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

void kcl_text_host(struct kcl_text *t)
{
	struct utsname u;

	if (uname(&u) == 0) {
		kcl_text_add(t, "host %s\n", u.nodename);
		kcl_text_add(t, "kernel %s\n", u.release);
		kcl_text_add(t, "machine %s\n", u.machine);
	}
	kcl_text_add(t, "cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
}
