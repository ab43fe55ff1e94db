/*
 * consumer/snapshot.c - the flight recorder's dump while the program runs
 * (kc_snapshot(), consumer/consumer.h): `ktrace ctl DIR dump` and SIGUSR2
 * to `ktrace record --flight`, as seed 003's flight-recorder channels were
 * read out while the kernel ran, and as LTTng's `snapshot record`.
 *
 * The writers never wait for a dump, so a ring slot may be reused while it
 * is copied.  The copy is validated the way a seqlock reader validates:
 *
 *   1. load the header's magic and seq (acquire): the slot must hold the
 *      expected sequence number, initialised;
 *   2. the extent: a thread stream's `used` (acquire: the records below it
 *      are complete); a shared stream's only when its commit count says
 *      that every reservation made in it is committed (closed slots: the
 *      whole lap; the open one: up to the head loaded before);
 *   3. copy the header and the extent;
 *   4. fence, then load magic and seq again: a writer reusing the slot
 *      clears the magic first and stores the new seq before it writes a
 *      record (kt_open_subbuf(), lib/stream_thread.c), so a copy that saw
 *      any byte of the new lap sees a changed header here and is dropped.
 *
 * On x86-64 stores become visible in program order and loads are not
 * reordered with older loads, which step 4 relies on (the writer's records
 * after its header stores; the copy's loads before the second read).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer/internal.h"
#include "lib/runtime.h"
#include "lib/safefile.h"

/*
 * Copy sub-buffer @seq of stream @i into @buf (c->bs bytes, made a closed
 * sub-buffer of the file: `used` set, tail cleared, `nrec` counted).
 * @head: the stream's head, loaded before.  Return: 1 copied, 0 being
 * rewritten (or not yet complete), -1 nothing in it.
 */
static int snap_slot(struct kc_chan *c, unsigned i, uint64_t seq, uint64_t head, uint8_t *buf)
{
	const struct ktrace_subbuf *sb =
		(const struct ktrace_subbuf *)(c->st[i].ring + (seq % c->nr) * c->bs);
	struct ktrace_subbuf *h = (struct ktrace_subbuf *)buf;
	uint64_t room = c->bs - KTRACE_SUBBUF_HDR_SIZE, extent;
	int shared = c->sctl[i].kind == KTRACE_STREAM_SHARED;

	if (__atomic_load_n(&sb->magic, __ATOMIC_ACQUIRE) != KTRACE_SUBBUF_MAGIC ||
	    __atomic_load_n(&sb->seq, __ATOMIC_ACQUIRE) != seq)
		return 0;
	if (shared) {
		uint32_t commit = __atomic_load_n(&sb->commit, __ATOMIC_ACQUIRE);
		uint64_t lap = seq / c->nr;

		if (seq < head >> c->shift) {
			if (commit != (uint32_t)((lap + 1) * room))
				return 0;
			extent = __atomic_load_n(&sb->used, __ATOMIC_RELAXED);
		} else {
			extent = (head & (c->bs - 1)) - KTRACE_SUBBUF_HDR_SIZE;
			if (commit != (uint32_t)(lap * room + extent))
				return 0;
		}
	} else {
		extent = __atomic_load_n(&sb->used, __ATOMIC_ACQUIRE);
	}
	if (extent > room)
		extent = room;
	extent &= ~(uint64_t)7;
	memcpy(buf, sb, KTRACE_SUBBUF_HDR_SIZE + extent);
	/* the copy's loads before the header's second read: x86-64 does not
	 * reorder loads with older loads, so a compiler barrier (TSan builds
	 * take no fence); an acquire fence elsewhere */
#if defined(__x86_64__)
	KT_BARRIER();
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
	if (__atomic_load_n(&sb->magic, __ATOMIC_RELAXED) != KTRACE_SUBBUF_MAGIC ||
	    __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) != seq)
		return 0;
	if (!extent && !h->lost)
		return -1;
	memset(buf + KTRACE_SUBBUF_HDR_SIZE + extent, 0, room - extent);
	h->used = (uint32_t)extent;
	h->flags |= KTRACE_SBF_CLOSED;
	/* the header's count may be ahead of the extent loaded (the writer went on) */
	h->nrec = shared ? 0 : (uint32_t)kc_count_records(buf + KTRACE_SUBBUF_HDR_SIZE, extent, 0);
	return 1;
}

/* Per stream of a dump: what went into its traceN (the `stream-written` line). */
struct snap_file {
	uint64_t size, records;
	int written;
};

/* Stream @i of @c into @dirfd/traceN.  Return: 0, or -errno (said). */
static int snap_stream(struct kc_session *s, struct kc_chan *c, unsigned i, int dirfd,
		       uint8_t *buf, struct snap_file *f, struct kc_snapshot *out)
{
	uint64_t head, hseq, seq;
	char name[32];
	int fd = -1, rc = 0;

	if (!kc_ring(s, c, i))
		return 0;
	head = __atomic_load_n(&c->sctl[i].head, __ATOMIC_ACQUIRE);
	if (!head)
		return 0;
	hseq = head >> c->shift;
	snprintf(name, sizeof(name), "trace%u", i);
	for (seq = hseq + 1 > c->nr ? hseq + 1 - c->nr : 0; seq <= hseq && !rc; seq++) {
		int r = snap_slot(c, i, seq, head, buf);
		const struct ktrace_subbuf *h = (const struct ktrace_subbuf *)buf;

		if (r == 0)
			out->skipped++;
		if (r <= 0)
			continue;
		if (fd < 0 && (fd = ksf_create_at(dirfd, name, O_WRONLY)) < 0) {
			rc = fd;
			break;
		}
		if (write(fd, buf, c->bs) != (ssize_t)c->bs) {
			rc = errno ? -errno : -ENOSPC;
			break;
		}
		f->size += c->bs;
		f->records += h->nrec ? h->nrec
				      : kc_count_records(buf + KTRACE_SUBBUF_HDR_SIZE, h->used,
							 (h->flags & KTRACE_SBF_CTX) != 0);
		out->subbufs++;
		out->bytes += c->bs;
	}
	f->written = fd >= 0;
	out->records += f->records;
	out->overwritten += __atomic_load_n(&c->sctl[i].overwritten, __ATOMIC_RELAXED);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	if (rc < 0)
		kc_error(s, "%s.dump-%u/%s: cannot write: %s", c->dir, out->n, name, strerror(-rc));
	return rc;
}

/* The files of a trace directory a dump copies (lib/safefile.c's list, less `session`). */
static const char *const snap_names[] = { "metadata", "control", "state", "dropped", "threads",
					  "callsites", "kft", "kft-status", "kft-patch",
					  "kft-dynpatch", NULL };

/*
 * The channel's other files as they are now, after the rings (so that the
 * names and maps every copied record refers to are there): each file of
 * the trace (ksf_trace_name()) but the streams, the session's name and
 * (when the session holds it) the call-site table; metadata gets the end
 * lines the consumer appends at the end of a run.
 */
static int snap_files(struct kc_session *s, struct kc_chan *c, int dirfd, int has_cs,
		      const struct snap_file *f, const struct kc_snapshot *out)
{
	const char *const *names = snap_names;
	int rc = 0;

	for (int n = 0; names[n] && !rc; n++) {
		size_t len = 0, cap = 0, got;
		char *text = NULL;
		FILE *in;
		int fd;

		if (has_cs && !strcmp(names[n], "callsites"))
			continue;
		fd = ksf_open_at(c->dirfd, names[n], O_RDONLY);
		if (fd == -ENOENT)
			continue;
		in = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!in) {
			rc = fd < 0 ? fd : -errno;
			if (fd >= 0)
				close(fd);
			kc_error(s, "%s/%s: %s", c->dir, names[n], ksf_read_why(rc));
			break;
		}
		do {
			if (len + 65536 > cap) {
				char *t = realloc(text, cap = 2 * cap + 65536);

				if (!t) {
					rc = -ENOMEM;
					break;
				}
				text = t;
			}
			got = fread(text + len, 1, cap - len - 4096, in);
			len += got;
		} while (got);
		fclose(in);
		if (!rc && !strcmp(names[n], "metadata")) {
			uint64_t raw, ns;

			kt_calib_pair(&raw, &ns);
			if (strcmp(kt_clock_name(), "tsc") == 0)
				len += (size_t)snprintf(text + len, cap - len, "calib %llu %llu\n",
							(unsigned long long)raw, (unsigned long long)ns);
			for (uint32_t i = 0; i < c->nstreams; i++) {
				if (!f[i].written)
					continue;
				if (len + 128 > cap) {
					char *t = realloc(text, cap = 2 * cap);

					if (!t) {
						rc = -ENOMEM;
						break;
					}
					text = t;
				}
				len += (size_t)snprintf(text + len, cap - len,
							"stream-written %u trace%u %llu %llu\n", i, i,
							(unsigned long long)f[i].size,
							(unsigned long long)f[i].records);
			}
		}
		if (!rc)
			rc = ksf_replace_at(dirfd, names[n], text, len);
		free(text);
		if (rc < 0)
			kc_error(s, "%s.dump-%u/%s: cannot write: %s", c->dir, out->n, names[n],
				 strerror(-rc));
	}
	return rc;
}

/* Channel @idx into CHANDIR.dump-@n.  Return: 0, or -errno (said; the directory removed). */
static int snap_chan(struct kc_session *s, unsigned idx, struct kc_snapshot *out)
{
	struct kc_chan *c = &s->chans[idx];
	uint64_t cs = __atomic_load_n(&s->chan[idx].callsites, __ATOMIC_ACQUIRE);
	struct snap_file *f;
	char path[PATH_MAX];
	uint8_t *buf;
	int dirfd, rc = 0;

	snprintf(path, sizeof(path), "%s.dump-%u", c->dir, out->n);
	if (mkdir(path, 0700) < 0) {
		rc = -errno;
		kc_error(s, "%s: cannot create: %s", path, strerror(errno));
		return rc;
	}
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	f = calloc(c->nstreams, sizeof(*f));
	buf = NULL;
	if (dirfd < 0 || !f || posix_memalign((void **)&buf, 4096, c->bs)) {
		rc = dirfd < 0 ? -errno : -ENOMEM;
		kc_error(s, "%s: %s", path, strerror(-rc));
	}
	for (uint32_t i = 0; !rc && i < c->nstreams; i++)
		rc = snap_stream(s, c, i, dirfd, buf, &f[i], out);
	if (!rc && cs)
		rc = kc_write_callsites(s, c, cs, dirfd);
	if (!rc)
		rc = snap_files(s, c, dirfd, cs != 0, f, out);
	if (rc < 0 && dirfd >= 0) {
		char name[32]; /* nothing half made stays behind */

		for (uint32_t i = 0; i < c->nstreams; i++) {
			snprintf(name, sizeof(name), "trace%u", i);
			unlinkat(dirfd, name, 0);
		}
		for (int n = 0; snap_names[n]; n++)
			unlinkat(dirfd, snap_names[n], 0);
		rmdir(path);
	} else if (!rc) {
		out->channels++;
		if (!out->dir[0])
			snprintf(out->dir, sizeof(out->dir), "%s", path);
	}
	if (dirfd >= 0)
		close(dirfd);
	free(buf);
	free(f);
	return rc;
}

/* Is channel @idx one to dump: live (or cleaned up, not drained yet) and a flight recorder? */
static int snap_wanted(struct kc_session *s, unsigned idx)
{
	uint32_t state = __atomic_load_n(&s->chan[idx].state, __ATOMIC_ACQUIRE);

	if (state != KT_CHAN_LIVE && state != KT_CHAN_ENDED)
		return 0;
	if (kc_chan_open(s, idx) < 0)
		return 0;
	return (s->chans[idx].flags & KTRACE_FLIGHT_CHANNEL) || (s->hdr->flags & KT_SESSION_FLIGHT);
}

int kc_snapshot(struct kc_session *s, struct kc_snapshot *out)
{
	uint32_t nchan = __atomic_load_n(&s->hdr->nchan, __ATOMIC_ACQUIRE);
	unsigned wanted = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (nchan > KT_SESSION_NCHAN)
		nchan = KT_SESSION_NCHAN;
	for (uint32_t idx = 0; idx < nchan; idx++)
		wanted += snap_wanted(s, idx) != 0;
	if (!wanted) {
		for (uint32_t idx = 0; idx < nchan; idx++)
			if (s->chans[idx].state == 1)
				return -EINVAL; /* live, but not a flight recorder */
		return (s->hdr->flags & KT_SESSION_FLIGHT) ? -ENOENT : -EINVAL;
	}
	/* the first N free beside every channel */
	for (out->n = 1; out->n < 100000; out->n++) {
		int taken = 0;

		for (uint32_t idx = 0; idx < nchan && !taken; idx++) {
			char path[PATH_MAX];
			struct stat st;

			if (s->chans[idx].state != 1)
				continue;
			snprintf(path, sizeof(path), "%s.dump-%u", s->chans[idx].dir, out->n);
			taken = lstat(path, &st) == 0;
		}
		if (!taken)
			break;
	}
	for (uint32_t idx = 0; idx < nchan; idx++)
		if (snap_wanted(s, idx)) {
			int r = snap_chan(s, idx, out);

			if (r < 0 && !rc)
				rc = r;
		}
	return rc;
}
