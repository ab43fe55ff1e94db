/*
 * kclient/crash.c - `ktrace read --crash`: turn a crash region of
 * ktrace.ko (debugfs ktrace/crash/image after a panic and a reboot, or a
 * copy of it) into a normal trace directory: DST/cpuN (layout packed),
 * metadata, dropped.  The region's format is the "crash region" block of
 * include/ktrace/format.h (docs/FORMAT.md, "Crash region"); the module's
 * half is kmod/ktrace_crash.c.
 *
 * The checks and the conversion of each ring are kclient/crash_parse.c's
 * (pure, also in the fuzz target); this file reads the image and writes
 * the files: cpuN for each ring with records, metadata (the catalogue from
 * the region, crash-* lines), dropped (torn records).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "kclient/internal.h"
#include "kclient/kclient.h"
#include "lib/safefile.h"

#define CMD "read"

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

struct emit_ctx {
	int fd;
	const char *dst;
	unsigned idx;
	int failed;
};

static int emit_file(void *arg, const void *buf, size_t len)
{
	static const unsigned char zeros[8];
	struct emit_ctx *e = arg;
	size_t pad = (8 - len % 8) % 8;
	const char *p = buf;

	while (len) {
		ssize_t w = write(e->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			kcl_error(CMD, "%s/cpu%u: write: %s", e->dst, e->idx, strerror(w < 0 ? errno : ENOSPC));
			e->failed = 1;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	if (pad && write(e->fd, zeros, pad) != (ssize_t)pad) {
		kcl_error(CMD, "%s/cpu%u: write: %s", e->dst, e->idx, strerror(errno));
		e->failed = 1;
		return -1;
	}
	return 0;
}

/* Read the image: SRC itself, or SRC/image when SRC is a directory. */
static unsigned char *load_image(const char *src, size_t *len)
{
	char path[4200];
	struct stat st;
	int fd;
	unsigned char *img;

	snprintf(path, sizeof(path), "%s", src);
	if (stat(src, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "%s/image", src);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kcl_error(CMD, "%s: %s%s", path, strerror(errno),
			  errno == EACCES ? " (the crash region is root-only)" : "");
		return NULL;
	}
	img = (unsigned char *)kcl_slurp_fd(fd, len, (size_t)1 << 34);
	if (!img)
		kcl_error(CMD, "%s: %s", path, strerror(errno ? errno : EFBIG));
	close(fd);
	return img;
}

static void hex_id(char *out, const unsigned char *id)
{
	static const char hx[] = "0123456789abcdef";
	int o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hx[id[i] >> 4];
		out[o++] = hx[id[i] & 15];
	}
	out[o] = '\0';
}

/*
 * The channel to convert, into *@ch: @channel, or else the one channel
 * that holds records.  Return: 0, -1 (reported).
 */
static int crash_channel(const char *src, const struct kcr_region *r, const char *channel, unsigned *ch)
{
	unsigned withdata = 0;
	int found = 0;

	*ch = 0;
	for (unsigned i = 0; i < r->nchan; i++) {
		struct kcr_stats s = { 0 };

		if (channel && !strcmp(channel, r->chan[i].name)) {
			*ch = i;
			found = 1;
		}
		for (unsigned k = 0; k < r->chan[i].nrings; k++)
			kcr_ring(r, i, k, NULL, NULL, &s);
		if (s.records && !channel) {
			withdata++;
			*ch = i;
		}
	}
	if (channel && !found) {
		kcl_error(CMD, "%s: no channel '%s' in the crash region (it has:%s%s%s%s)", src, channel,
			  r->nchan > 0 ? " " : " none", r->nchan > 0 ? r->chan[0].name : "",
			  r->nchan > 1 ? " " : "", r->nchan > 1 ? r->chan[1].name : "");
		return -1;
	}
	if (!channel && withdata > 1) {
		kcl_error(CMD, "%s: several channels hold records: choose one with --channel NAME (%s, %s%s)",
			  src, r->chan[0].name, r->chan[1].name, r->nchan > 2 ? ", ..." : "");
		return -1;
	}
	if (!channel && withdata == 0 && r->nchan == 0) {
		kcl_error(CMD, "%s: the crash region has no channel (no flight channel was armed)", src);
		return -1;
	}
	return 0;
}

/* DST created, or emptied if it is a trace directory of ours.  Return: 0, -1 (reported). */
static int crash_dst(const char *dst)
{
	char err[512];
	int dfd;

	snprintf(err, sizeof(err), "%s/control", dst);
	if (access(err, F_OK) == 0) {
		kcl_error(CMD, "%s: DST holds a user-space trace; choose another directory", err);
		return -1;
	}
	dfd = ksf_dir_open(dst, KSF_CREATE | KSF_TRACE | KSF_CLEAR, err, sizeof(err));
	if (dfd < 0) {
		kcl_error(CMD, "%s", err);
		return -1;
	}
	close(dfd);
	return 0;
}

/* Add ring @s's counts to @total. */
static void crash_add(struct kcr_stats *total, const struct kcr_stats *s)
{
	total->subbufs += s->subbufs;
	total->records += s->records;
	total->torn += s->torn;
	total->bad_subbufs += s->bad_subbufs;
	total->empty_subbufs += s->empty_subbufs;
	if (s->last_ns > total->last_ns)
		total->last_ns = s->last_ns;
	if (s->first_ns && (!total->first_ns || s->first_ns < total->first_ns))
		total->first_ns = s->first_ns;
}

/*
 * Channel @ch's rings as DST/cpuN (at least one stream), their indexes
 * into @streams (*@nstreams), their counts into @total.  Return: 0, -1
 * (reported).
 */
static int crash_streams(const struct kcr_region *r, unsigned ch, const char *dst, unsigned *streams,
			 unsigned *nstreams, struct kcr_stats *total)
{
	const struct kcr_chan *c = &r->chan[ch];

	for (unsigned k = 0; k < c->nrings; k++) {
		struct kcr_stats s = { 0 };
		struct emit_ctx e = { .dst = dst, .idx = k };
		char name[32];

		kcr_ring(r, ch, k, NULL, NULL, &s);
		if (!s.subbufs && (*nstreams || k + 1 < c->nrings))
			continue; /* nothing of this CPU (keep at least one stream) */
		snprintf(name, sizeof(name), "cpu%u", k);
		e.fd = ksf_create(dst, name, O_WRONLY);
		if (e.fd < 0) {
			kcl_error(CMD, "%s/%s: cannot create: %s", dst, name, strerror(-e.fd));
			return -1;
		}
		memset(&s, 0, sizeof(s));
		if (kcr_ring(r, ch, k, emit_file, &e, &s) < 0 && !e.failed)
			kcl_error(CMD, "out of memory");
		if (close(e.fd) < 0 || e.failed) {
			if (!e.failed)
				kcl_error(CMD, "%s/%s: %s", dst, name, strerror(errno));
			return -1;
		}
		streams[(*nstreams)++] = k;
		crash_add(total, &s);
	}
	total->panic_ns = r->panic_ns;
	total->stop_ns = r->stop_ns;
	return 0;
}

/* The metadata's lines of the clock, the machine, the channel and its streams. */
static void crash_md_channel(FILE *f, const struct kcr_region *r, const struct kcr_chan *c,
			     const unsigned *streams, unsigned nstreams, const struct kcr_stats *total)
{
	uint64_t end = r->panic_ns > total->last_ns ? r->panic_ns : total->last_ns;

	fprintf(f, "clock mono\n");
	/* The raw clock is CLOCK_MONOTONIC of the crashed boot: identity pairs. */
	fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", r->created_ns, r->created_ns);
	if (end <= r->created_ns)
		end = r->created_ns + 1000000000ull;
	fprintf(f, "calib %" PRIu64 " %" PRIu64 "\n", end, end);
	kcl_md_machine(f, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "channel %s\n", c->name);
	fprintf(f, "mode flight\n");
	fprintf(f, "scope %s\n", (c->flags & KTRACE_GLOBAL_CHANNEL) ? "global" : "cpu");
	fprintf(f, "buf-size %u\nbuf-nr %u\nlayout packed\n", c->subbuf_size, c->subbuf_nr);
	for (unsigned i = 0; i < nstreams; i++)
		fprintf(f, "stream %u %s cpu%u\n", streams[i],
			(c->flags & KTRACE_GLOBAL_CHANNEL) ? "shared" : "cpu", streams[i]);
	fprintf(f, "created-ns %" PRIu64 "\n", r->created_ns);
	fprintf(f, "realtime-ns %" PRIu64 "\n", r->realtime_ns + r->created_ns);
}

/* The metadata's crash-* lines: the boot, the panic, what was lost, the note. */
static void crash_md_crash(FILE *f, const struct kcr_region *r, const struct kcr_stats *total)
{
	char id[40];

	hex_id(id, r->boot_id);
	fprintf(f, "crash-boot-id %s\n", id);
	fprintf(f, "crash-panic-ns %" PRIu64 "\n", r->panic_ns);
	if (r->panic_ns)
		fprintf(f, "crash-panic-cpu %u\ncrash-panic-stamp %s\ncrash-stop-ns %" PRIu64 "\n",
			r->panic_cpu, r->panic_src == KTRACE_CRASH_PANIC_ENTRY ? "entry" : "notifier",
			r->stop_ns);
	fprintf(f, "crash-last-ns %" PRIu64 "\n", total->last_ns);
	fprintf(f, "crash-torn %" PRIu64 "\n", total->torn);
	fprintf(f, "crash-bad-subbufs %" PRIu64 "\n", total->bad_subbufs);
	if (r->note[0]) {
		fprintf(f, "crash-note ");
		for (const char *s = r->note; *s; s++)
			fputc(*s >= ' ' && *s <= '~' ? *s : '?', f);
		fputc('\n', f);
	}
}

/* The channel's catalogue lines (func, event, unavailable; printable ones only). */
static void crash_md_catalog(FILE *f, const struct kcr_chan *c)
{
	const char *p = c->catalog, *end = c->catalog + c->catalog_len;

	if (!c->catalog) {
		fprintf(f, "# the channel's catalogue was not in the region: names of static events unknown\n");
		return;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if ((l > 5 && !strncmp(p, "func ", 5)) || (l > 6 && !strncmp(p, "event ", 6)) ||
		    (l > 12 && !strncmp(p, "unavailable ", 12))) {
			int ok = 1;

			for (size_t i = 0; i < l; i++)
				ok &= p[i] >= ' ' && p[i] <= '~';
			if (ok)
				fprintf(f, "%.*s\n", (int)l, p);
		}
		p += l + 1;
	}
}

/* DST/metadata and DST/dropped.  Return: 0, -1 (reported). */
static int crash_metadata(const char *src, const char *dst, const struct kcr_region *r, unsigned ch,
			  const unsigned *streams, unsigned nstreams, const struct kcr_stats *total)
{
	char *meta = NULL, text[32];
	size_t mlen = 0;
	FILE *f = open_memstream(&meta, &mlen);
	int rc = -1, fd;

	if (!f) {
		kcl_error(CMD, "%s/metadata: out of memory", dst);
		return -1;
	}
	fprintf(f, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	fprintf(f, "# recovered from the crash region %s by ktrace read --crash\n", src);
	crash_md_channel(f, r, &r->chan[ch], streams, nstreams, total);
	crash_md_crash(f, r, total);
	crash_md_catalog(f, &r->chan[ch]);
	if (fclose(f) != 0) {
		kcl_error(CMD, "%s/metadata: out of memory", dst);
	} else if ((fd = ksf_replace(dst, "metadata", meta, mlen)) < 0) {
		kcl_error(CMD, "%s/metadata: cannot write: %s", dst, strerror(-fd));
	} else {
		snprintf(text, sizeof(text), "%" PRIu64 "\n", total->torn);
		if ((fd = ksf_replace(dst, "dropped", text, strlen(text))) < 0)
			kcl_error(CMD, "%s/dropped: cannot write: %s", dst, strerror(-fd));
		else
			rc = 0;
	}
	free(meta);
	return rc;
}

int read_crash(const char *src, const char *dst, const char *channel, struct kcr_stats *total)
{
	struct kcr_region *r = malloc(sizeof(*r));
	unsigned char *img;
	size_t len = 0;
	char err[512];
	unsigned ch, nstreams = 0, *streams = NULL;
	int rc = 1;

	memset(total, 0, sizeof(*total));
	if (!r) {
		kcl_error(CMD, "out of memory");
		return 1;
	}
	img = load_image(src, &len);
	if (!img)
		goto out;
	if (kcr_open(img, len, r, err, sizeof(err))) {
		kcl_error(CMD, "%s: %s", src, err);
		goto out;
	}
	if (crash_channel(src, r, channel, &ch) < 0 || crash_dst(dst) < 0)
		goto out;
	streams = calloc(r->chan[ch].nrings, sizeof(*streams));
	if (!streams) {
		kcl_error(CMD, "out of memory");
		goto out;
	}
	if (crash_streams(r, ch, dst, streams, &nstreams, total) < 0 ||
	    crash_metadata(src, dst, r, ch, streams, nstreams, total) < 0)
		goto out;
	rc = 0;
out:
	free(streams);
	free(img);
	free(r);
	return rc;
}
