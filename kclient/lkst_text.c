/*
 * kclient/lkst_text.c - parser of the LKST maskset text (`ktrace lkst
 * write`), see kclient/kclient.h (lkst_text_parse).  Works on a buffer
 * with explicit length, line by line, and reports the first error with its
 * line and column.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kclient/kclient.h"

#define LINE_MAX_BYTES 4096

struct cat_ev {
	unsigned id;
	const char *name;
};

static const struct cat_ev catalogue[] = {
#define EV_(id_, mn, cat, sys, tp, n, args, prim) { id_, #mn },
	KTRACE_LKST_EVENTS(EV_)
#undef EV_
};

int lkst_parse_number(const char *s, unsigned *v)
{
	unsigned long long x = 0;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		base = 16;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		x = x * (unsigned)base + (unsigned)d;
		if (x > 0xffffffffull)
			return -1;
	}
	*v = (unsigned)x;
	return 0;
}

int lkst_event_id(const char *tok)
{
	unsigned v;

	if (isdigit((unsigned char)tok[0])) {
		if (lkst_parse_number(tok, &v) < 0)
			return -1;
		for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
			if (catalogue[i].id == v)
				return (int)v;
		/* a user-placed hook's id: the module knows whether it exists */
		return KTRACE_LKST_IS_HOOK(v) ? (int)v : -1;
	}
	for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (!strcasecmp(catalogue[i].name, tok))
			return (int)catalogue[i].id;
	return -1;
}

const char *lkst_event_name(unsigned id)
{
	for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (catalogue[i].id == id)
			return catalogue[i].name;
	return NULL;
}

int lkst_text_parse(const char *text, size_t len, lkst_handler_fn hfn, void *harg,
		    unsigned char *handler, char *err, size_t errlen)
{
	char line[LINE_MAX_BYTES + 1];
	size_t pos = 0;
	unsigned lineno = 0;
	int n = 0;

	memset(handler, 0, KTRACE_LKST_MAX_ID);
	if (errlen)
		err[0] = '\0';
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = (nl ? (size_t)(nl - text) : len) - pos;
		char *tok[3], *p = line, *hash;
		int ntok = 0, ev, h;

		lineno++;
		if (ll > LINE_MAX_BYTES) {
			snprintf(err, errlen, "%u:1: line longer than %d bytes", lineno, LINE_MAX_BYTES);
			return -1;
		}
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos += ll + (nl ? 1 : 0);
		if (strlen(line) != ll) {
			snprintf(err, errlen, "%u:%zu: NUL byte", lineno, strlen(line) + 1);
			return -1;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (ntok < 3) {
			p += strspn(p, " \t\r");
			if (!*p)
				break;
			tok[ntok++] = p;
			p += strcspn(p, " \t\r");
			if (*p)
				*p++ = '\0';
		}
		if (ntok == 0)
			continue;
		if (ntok != 2) {
			snprintf(err, errlen, "%u:%d: expected 'EVENT HANDLER'", lineno,
				 ntok == 1 ? 1 : (int)(tok[2] - line) + 1);
			return -1;
		}
		ev = lkst_event_id(tok[0]);
		if (ev < 0) {
			snprintf(err, errlen, "%u:%d: unknown event '%.64s'", lineno,
				 (int)(tok[0] - line) + 1, tok[0]);
			return -1;
		}
		h = hfn ? hfn(tok[1], harg) : -1;
		if (h < 1 || h > 255) {
			snprintf(err, errlen, "%u:%d: unknown handler '%.64s'", lineno,
				 (int)(tok[1] - line) + 1, tok[1]);
			return -1;
		}
		if (handler[ev]) {
			snprintf(err, errlen, "%u:%d: event '%.64s' appears twice", lineno,
				 (int)(tok[0] - line) + 1, tok[0]);
			return -1;
		}
		handler[ev] = (unsigned char)h;
		n++;
	}
	return n;
}

int lkst_hook_parse(const char *spec, const char *args, char *func, size_t funclen,
		    unsigned *off, unsigned char *argn, char *argstr, size_t argstrlen, char *err,
		    size_t errlen)
{
	static const char symch[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.";
	const char *plus = strchr(spec, '+');
	size_t fl = plus ? (size_t)(plus - spec) : strlen(spec);
	int n = 0;

	if (fl == 0 || fl > 127 || fl >= funclen || strspn(spec, symch) != fl ||
	    isdigit((unsigned char)spec[0])) {
		snprintf(err, errlen, "'%.160s': FUNC must be 1..127 of A-Z a-z 0-9 _ . (a kernel symbol)",
			 spec);
		return -1;
	}
	memcpy(func, spec, fl);
	func[fl] = '\0';
	*off = 0;
	if (plus && (lkst_parse_number(plus + 1, off) < 0 || *off > 0xfffff)) {
		snprintf(err, errlen, "'%.160s': OFFSET must be a number (decimal or 0x hex) up to 0xfffff",
			 spec);
		return -1;
	}
	snprintf(argstr, argstrlen, "-");
	for (const char *p = args ? args : ""; *p;) {
		size_t l;

		p += strspn(p, ", \t");
		if (!*p)
			break;
		l = strcspn(p, ", \t");
		if (l != 2 || p[0] != 'a' || p[1] < '1' || p[1] > '6') {
			snprintf(err, errlen, "argument '%.*s': arguments are a1..a6 (the function's first six)",
				 (int)(l > 32 ? 32 : l), p);
			return -1;
		}
		if (n == KTRACE_LKST_HOOK_MAX_ARGS) {
			snprintf(err, errlen, "at most %d arguments", KTRACE_LKST_HOOK_MAX_ARGS);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (argn[i] == p[1] - '1') {
				snprintf(err, errlen, "argument '%.2s' given twice", p);
				return -1;
			}
		}
		argn[n++] = (unsigned char)(p[1] - '1');
		p += l;
	}
	if (n) {
		size_t len = 0;

		for (int i = 0; i < n && len + 4 < argstrlen; i++)
			len += (size_t)snprintf(argstr + len, argstrlen - len, "%sa%d", i ? "," : "",
						argn[i] + 1);
	}
	return n;
}
