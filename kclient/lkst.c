/*
 * kclient/lkst.c - the client of ktrace.ko's LKST tracer (seed 001): its
 * debugfs files (default /sys/kernel/debug/ktrace/lkst; kmod/lkst_fs.c
 * documents them) read and parsed (events, handlers, masksets, catalog,
 * state, info, hooks) and its commands written (maskset
 * write/config/set/delete, start/stop, hook add/del), each command with
 * one write(2).  `ktrace lkst`
 * (cli/cmd_lkst.c) parses its command line and prints; API in
 * kclient/kclient.h (kcl_lkst_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kclient/internal.h"

#define CMD "lkst"

char *kcl_lkst_read(const char *dir, const char *file)
{
	char path[4096], *buf;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kcl_error(CMD, "%s: %s%s", path, strerror(errno),
			  errno == ENOENT ? " (is ktrace.ko loaded and debugfs mounted?)" : "");
		return NULL;
	}
	buf = kcl_slurp_fd(fd, &len, (size_t)1 << 30);
	if (!buf)
		kcl_error(CMD, "%s: offset %zu: %s", path, len, strerror(errno));
	close(fd);
	return buf;
}

/* One write(2) of @text to DIR/@file.  Return: 0 or -errno. */
static int lkst_put(const char *dir, const char *file, const char *text)
{
	char path[4096];
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

int kcl_lkst_handlers(const char *dir, struct kcl_lkst_handlers *h)
{
	char *text = kcl_lkst_read(dir, "handlers"), *line, *save = NULL;

	if (!text)
		return -1;
	memset(h, 0, sizeof(*h));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned id;
		char name[64];
		unsigned long long calls;

		if (line[0] == '#' || sscanf(line, "%u %63s %llu", &id, name, &calls) != 3 || id > 255)
			continue;
		snprintf(h->name[id], sizeof(h->name[id]), "%s", name);
		h->calls[id] = calls;
	}
	free(text);
	return 0;
}

int kcl_lkst_masksets(const char *dir, struct kcl_lkst_maskset *m)
{
	char *text = kcl_lkst_read(dir, "masksets"), *line, *save = NULL;
	struct kcl_lkst_maskset *cur = NULL;

	if (!text)
		return -1;
	memset(m, 0, KCL_LKST_MASKSETS * sizeof(*m));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned id, ev, h;
		char name[64], kind[16], extra[16];
		int n;

		n = sscanf(line, "maskset %u %63s %15s %15s", &id, name, kind, extra);
		if (n >= 3 && id < KCL_LKST_MASKSETS) {
			cur = &m[id];
			cur->present = 1;
			snprintf(cur->name, sizeof(cur->name), "%s", name);
			cur->system = !strcmp(kind, "system");
			cur->current = n == 4 && !strcmp(extra, "current");
			continue;
		}
		if (cur && sscanf(line, "%x %u", &ev, &h) == 2 && ev < KTRACE_LKST_MAX_ID && h < 256)
			cur->handler[ev] = (unsigned char)h;
	}
	free(text);
	return 0;
}

int kcl_lkst_events(const char *dir, struct kcl_lkst_event **events, size_t *n)
{
	char *text = kcl_lkst_read(dir, "events"), *line, *save = NULL;
	struct kcl_lkst_event *v;
	int bad = 0;

	*events = NULL;
	*n = 0;
	if (!text)
		return -1;
	v = calloc(KTRACE_LKST_MAX_ID, sizeof(*v));
	if (!v) {
		kcl_error(CMD, "%s/events: out of memory", dir);
		free(text);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kcl_lkst_event *e = &v[*n];

		if (line[0] == '#')
			continue;
		if (*n == KTRACE_LKST_MAX_ID ||
		    sscanf(line, "%x %159s %31s %175s %15s %7s %u %llu %llu %llu", &e->id, e->name,
			   e->category, e->tracepoint, e->status, e->probe, &e->handler, &e->hits,
			   &e->written, &e->dropped) != 10) {
			kcl_error(CMD, "%s/events: unexpected line '%s'", dir, line);
			if (*n < KTRACE_LKST_MAX_ID)
				memset(e, 0, sizeof(*e));
			bad++;
			continue;
		}
		(*n)++;
	}
	free(text);
	*events = v;
	return bad;
}

void kcl_lkst_reasons(const char *dir, struct kcl_lkst_event *v, size_t n)
{
	char *catalog = kcl_lkst_read(dir, "catalog");

	/* lines "unavailable ID MNEMONIC REASON..." */
	for (const char *p = catalog; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *eol = p + strcspn(p, "\n"), *why;
		unsigned long id;
		char *end;

		if (strncmp(p, "unavailable ", 12) || p[12] < '0' || p[12] > '9')
			continue;
		id = strtoul(p + 12, &end, 10);
		if (*end != ' ')
			continue;
		why = memchr(end + 1, ' ', (size_t)(eol - (end + 1)));
		why = why ? why + 1 : eol;
		for (size_t i = 0; i < n; i++)
			if (v[i].id == id && !v[i].reason[0])
				snprintf(v[i].reason, sizeof(v[i].reason), "%.*s", (int)(eol - why), why);
	}
	free(catalog);
}

int kcl_lkst_state(const char *dir, const char *word)
{
	char text[16];

	snprintf(text, sizeof(text), "%s\n", word);
	return lkst_put(dir, "state", text);
}

int kcl_lkst_maskset_write(const char *dir, int id, const char *name, const unsigned char *handler)
{
	/* "write N NAME\n", then at most one "0xEV H\n" line (10 bytes) per event */
	size_t cap = 32 + (name ? strlen(name) : 0) + KTRACE_LKST_MAX_ID * 10, len;
	char *cmd = malloc(cap);
	int rc;

	if (!cmd)
		return -ENOMEM;
	len = (size_t)snprintf(cmd, cap, "write %d%s%s\n", id, name ? " " : "", name ? name : "");
	for (unsigned ev = 0; ev < KTRACE_LKST_MAX_ID; ev++)
		if (handler[ev] && handler[ev] != KTRACE_LKST_HANDLER_NOTHING)
			len += (size_t)snprintf(cmd + len, cap - len, "0x%02x %u\n", ev, handler[ev]);
	rc = lkst_put(dir, "masksets", cmd);
	free(cmd);
	return rc;
}

int kcl_lkst_maskset_config(const char *dir, int id, unsigned ev, unsigned handler)
{
	char text[64];

	snprintf(text, sizeof(text), "config %d 0x%02x %u\n", id, ev, handler);
	return lkst_put(dir, "masksets", text);
}

int kcl_lkst_maskset_set(const char *dir, int id)
{
	char text[32];

	snprintf(text, sizeof(text), "set %d\n", id);
	return lkst_put(dir, "masksets", text);
}

int kcl_lkst_maskset_delete(const char *dir, int id)
{
	char text[32];

	snprintf(text, sizeof(text), "delete %d\n", id);
	return lkst_put(dir, "masksets", text);
}

int kcl_lkst_hooks(const char *dir, struct kcl_lkst_hook **events, size_t *n)
{
	char *text = kcl_lkst_read(dir, "hooks"), *line, *save = NULL;
	struct kcl_lkst_hook *v;

	*events = NULL;
	*n = 0;
	if (!text)
		return -1;
	v = calloc(KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST + 1, sizeof(*v));
	if (!v) {
		kcl_error(CMD, "%s/hooks: out of memory", dir);
		free(text);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kcl_lkst_hook *h = &v[*n];

		if (line[0] == '#' || *n > KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST)
			continue;
		if (sscanf(line, "%x %159s %143s %u %31s %15s %15s %llu %llu", &h->id, h->name,
			   h->func, &h->offset, h->args, h->probe, h->state, &h->hits,
			   &h->missed) == 9)
			(*n)++;
	}
	free(text);
	*events = v;
	return 0;
}

int kcl_lkst_hook_add(const char *dir, int id, const char *func, unsigned off, const char *argstr)
{
	char text[256], ids[16];

	if (id < 0)
		snprintf(ids, sizeof(ids), "auto");
	else
		snprintf(ids, sizeof(ids), "0x%02x", (unsigned)id);
	if ((size_t)snprintf(text, sizeof(text), "add %s %s+%u %s\n", ids, func, off,
			     argstr && *argstr ? argstr : "-") >= sizeof(text))
		return -EINVAL;
	return lkst_put(dir, "hooks", text);
}

int kcl_lkst_hook_del(const char *dir, const char *what)
{
	char text[256];

	if ((size_t)snprintf(text, sizeof(text), "del %s\n", what) >= sizeof(text))
		return -EINVAL;
	return lkst_put(dir, "hooks", text);
}
