/*
 * reader/open.c - opening a trace directory: metadata, threads, control
 * file, stream discovery and geometry, then the per-stream indexes and the
 * clock calibration.
 *
 * Where each piece comes from, in order of preference:
 *   streams   metadata `stream` lines; else every traceN / cpuN file
 *   kind      metadata `stream` line; else the control file's stream table
 *   geometry  metadata buf-size/buf-nr/layout (fixed, packed, slots); else the control file;
 *             else guessed from the headers (ktr_guess_fixed()), else packed
 *   clock     metadata `clock`; else tsc, calibrated by the sub-buffer
 *             headers (FORMAT.md: without metadata the reader assumes tsc)
 *   calls     the `callsites` file, when there is one (calls.c)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/safefile.h"
#include "reader/internal.h"
#include "reader/zframe.h"

static struct ktr_trace *trace_new(const char *dir)
{
	struct ktr_trace *t = calloc(1, sizeof(*t));
	size_t len;

	if (!t)
		return NULL;
	t->dir = strdup(dir && *dir ? dir : ".");
	if (!t->dir) {
		free(t);
		return NULL;
	}
	len = strlen(t->dir);
	while (len > 1 && t->dir[len - 1] == '/')
		t->dir[--len] = 0;
	t->no_runs = getenv("KTRACE_READ_RECORDS") && *getenv("KTRACE_READ_RECORDS");
	t->meta_layout = -1;
	t->info.scope = "";
	t->info.host = t->info.kernel = t->info.machine = t->info.channel = t->info.comm = "";
	return t;
}

/* Stream index N of a file named traceN or cpuN, or -1. */
static long stream_file_index(const char *name)
{
	const char *p = NULL;
	uint64_t v;

	if (strncmp(name, "trace", 5) == 0)
		p = name + 5;
	else if (strncmp(name, "cpu", 3) == 0)
		p = name + 3;
	if (!p || !*p || (p[0] == '0' && p[1]))
		return -1; /* no number, or a leading zero */
	for (const char *c = p; *c; c++)
		if (*c < '0' || *c > '9')
			return -1;
	if (ktr_parse_u64(p, strlen(p), &v) || v >= KTR_MAX_STREAMS)
		return -1;
	return (long)v;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct ktr_stream *x = a, *y = b;

	return x->info.index < y->info.index ? -1 : x->info.index > y->info.index;
}

static int add_stream(struct ktr_trace *t, unsigned index, unsigned kind, const char *file)
{
	struct ktr_stream *s;

	if (t->nstreams == t->capstreams) { /* doubling: linear in the streams */
		size_t cap = t->capstreams ? 2 * t->capstreams : 16;
		struct ktr_stream *n = realloc(t->streams, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->streams = n;
		t->capstreams = cap;
	}
	s = &t->streams[t->nstreams++];
	memset(s, 0, sizeof(*s));
	s->index = index;
	s->info.index = index;
	s->info.kind = kind;
	ktr_file_open(t, &s->f, file, 0);
	s->info.path = s->f.path ? s->f.path : t->dir;
	return 0;
}

/* Streams from the directory listing: traceN and cpuN files. */
static void find_streams(struct ktr_trace *t)
{
	size_t n = 0;
	char **names = ktr_list_files(t, &n);
	uint8_t *seen = calloc(KTR_MAX_STREAMS / 8, 1); /* indexes taken: linear, not quadratic */

	for (size_t i = 0; names && seen && i < n; i++) {
		long idx = stream_file_index(names[i]);

		if (idx < 0)
			continue;
		if (seen[idx >> 3] & (1u << (idx & 7))) {
			ktr_diag(t, 0, "%s/%s: warning: another file is stream %ld already; ignored",
				 t->dir, names[i], idx);
			continue;
		}
		seen[idx >> 3] |= (uint8_t)(1u << (idx & 7));
		add_stream(t, (unsigned)idx, 0, names[i]);
	}
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(seen);
}

/* Geometry of stream @s (see the file comment). */
static void set_geometry(struct ktr_trace *t, struct ktr_stream *s)
{
	uint32_t bs = t->meta_buf_size, nr = t->meta_buf_nr;

	if (!bs && t->have_ctl && t->ctl.buf_size >= 128 && !(t->ctl.buf_size & (t->ctl.buf_size - 1)) &&
	    t->ctl.buf_size <= (1u << 30))
		bs = t->ctl.buf_size;
	if (!nr && t->have_ctl && t->ctl.buf_nr >= 1 && t->ctl.buf_nr <= (1u << 24))
		nr = t->ctl.buf_nr;
	s->packed = t->meta_layout == 1 || t->meta_layout == 2;
	s->stride = t->meta_layout == 2 ? bs : 0;
	if (s->packed) {
		s->room = bs ? bs : KTRACE_MAX_BUF_SIZE_GUESS;
		s->info.buf_size = bs;
		return;
	}
	if (bs && !nr)
		nr = (uint32_t)((s->f.size + bs - 1) / bs);
	if (!bs && s->f.p && ktr_guess_fixed(s, &bs, &nr) < 0) {
		ktr_diag(t, 0, "%s: warning: sub-buffer size unknown and not a fixed layout; reading it as packed",
			 s->f.path);
		s->packed = 1;
		s->room = KTRACE_MAX_BUF_SIZE_GUESS;
		return;
	}
	if (!nr)
		nr = 1;
	s->room = bs;
	s->info.buf_size = bs;
	s->info.buf_nr = nr;
}

/*
 * DIR/session left behind: `ktrace record` (the consumer) ended without
 * finishing the trace, so the newest records are still in its rings, and
 * the call-site table and final counts are not written.  Its second line
 * `consumer PID` tells a recording still running (read live: nothing to
 * say) from a dead consumer's; `ktrace read --recover DIR` finishes it.
 */
static void check_session(struct ktr_trace *t)
{
	struct ktr_file f;
	const char *p;
	long pid = 0;

	if (t->is_sub)
		return;
	if (ktr_file_open(t, &f, "session", 1) < 0) {
		ktr_file_close(&f); /* its path */
		return;
	}
	p = f.p ? memchr(f.p, '\n', f.size) : NULL;
	if (p && (size_t)(p + 1 - (const char *)f.p) + 9 < f.size &&
	    !strncmp(p + 1, "consumer ", 9)) {
		char num[16];
		size_t n = 0;

		for (p += 10; n < sizeof(num) - 1 && p < (const char *)f.p + f.size && *p >= '0' &&
			      *p <= '9';)
			num[n++] = *p++;
		num[n] = 0;
		pid = n ? strtol(num, NULL, 10) : 0;
	}
	if (pid <= 0 || pid > 0x7fffffff || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
		ktr_diag(t, 1, "%s: the recording was not finished (ktrace record was killed: %s/session "
			       "is left): run `ktrace read --recover %s` to keep what its rings hold",
			 t->dir, t->dir, t->dir);
	ktr_file_close(&f);
}

/*
 * The trace directory itself: DIR as the user named it; a sub-trace's
 * DIR/kernel never through a link.  Return: 1, or 0 if unusable (reported).
 */
static int check_dir(struct ktr_trace *t)
{
	struct stat st;
	int rc;

	if (t->mfiles)
		return 1;
	rc = t->base ? ksf_read_stat(t->base, "kernel", 0, &st) : stat(t->dir, &st) < 0 ? -errno : 0;
	if (!rc && S_ISLNK(st.st_mode))
		rc = -ELOOP;
	if (rc < 0) {
		ktr_diag(t, 1, "%s: %s", t->dir, ksf_read_why(rc));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		ktr_diag(t, 1, "%s: not a directory", t->dir);
		return 0;
	}
	return 1;
}

/* The metadata and threads files (clock tsc assumed without a metadata clock line). */
static void load_text_files(struct ktr_trace *t)
{
	struct ktr_file f;

	/* `ktrace record --kernel` without a program: only DIR/kernel (kernel.c) */
	t->kernel_only = !t->is_sub && !ktr_file_exists(t, "metadata") &&
			 ktr_file_exists(t, "kernel/metadata");
	if (ktr_file_open(t, &f, "metadata", 1) == 0) {
		ktr_parse_metadata(t, &f);
		if (!t->have_clock) {
			ktr_diag(t, 1, "%s: no clock line; assuming tsc", f.path);
			t->info.clock_tsc = 1;
		}
	} else if (f.path && !ktr_file_exists(t, "metadata") && !t->kernel_only) {
		ktr_diag(t, 1, "%s: %s; reading the streams without it (clock tsc assumed)", f.path,
			 strerror(ENOENT));
		t->info.clock_tsc = 1;
	} else {
		t->info.clock_tsc = 1;
	}
	ktr_file_close(&f);

	if (ktr_file_open(t, &f, "threads", 1) == 0)
		ktr_parse_threads(t, &f);
	ktr_file_close(&f);
}

/* The control file: what the metadata left out, checked against it. */
static void load_control(struct ktr_trace *t)
{
	ktr_read_control(t);
	if (t->have_ctl) {
		if (t->ctl.flags & KTRACE_FLIGHT_CHANNEL)
			t->info.flight = 1;
		if (!t->info.scope[0])
			t->info.scope = t->ctl.flags & KTRACE_GLOBAL_CHANNEL ? "global" : "thread";
		if (!t->info.pid)
			t->info.pid = t->ctl.owner_pid;
		if (t->meta_buf_size && t->ctl.buf_size != t->meta_buf_size)
			ktr_diag(t, 1, "%s/control: offset 16: buf_size %u disagrees with the metadata's buf-size %u",
				 t->dir, t->ctl.buf_size, t->meta_buf_size);
	}
	t->info.packed = t->meta_layout > 0 ? t->meta_layout : 0;
}

/* The streams: the metadata's stream lines or the files found, and what the consumer wrote. */
static void load_streams(struct ktr_trace *t)
{
	uint32_t *pos; /* index -> k + 1 */

	if (t->nmstreams) {
		for (size_t i = 0; i < t->nmstreams; i++)
			add_stream(t, t->mstreams[i].index, t->mstreams[i].kind, t->mstreams[i].file);
	} else {
		find_streams(t);
	}
	/* what the consumer wrote: a stream file missing is a stream still */
	pos = t->nswritten ? calloc(KTR_MAX_STREAMS, sizeof(*pos)) : NULL;
	for (unsigned k = 0; pos && k < t->nstreams; k++)
		if (t->streams[k].index < KTR_MAX_STREAMS)
			pos[t->streams[k].index] = k + 1;
	for (size_t j = 0; pos && j < t->nswritten; j++) {
		unsigned k = pos[t->swritten[j].index] ? pos[t->swritten[j].index] - 1 : t->nstreams;

		if (k == t->nstreams && add_stream(t, t->swritten[j].index, 0, t->swritten[j].file) < 0)
			continue;
		t->streams[k].have_want = 1;
		t->streams[k].want_bytes = t->swritten[j].bytes;
		t->streams[k].want_records = t->swritten[j].records;
	}
	if (t->nswritten && !pos)
		ktr_diag(t, 1, "%s: out of memory: stream files are not checked against what was written", t->dir);
	free(pos);
	if (t->nstreams)
		qsort(t->streams, t->nstreams, sizeof(*t->streams), cmp_stream);
}

/* Stream @i (sorted): its control slot, its size against what was written, its geometry, its index. */
static void stream_setup(struct ktr_trace *t, unsigned i)
{
	struct ktr_stream *s = &t->streams[i];

	s->info.path = s->f.path ? s->f.path : t->dir;
	if (t->have_ctl && s->index < t->nsctl) {
		const struct ktrace_stream_ctl *c = &t->sctl[s->index];

		s->info.have_ctl = 1;
		s->info.head = c->head;
		s->info.dropped = c->dropped;
		s->info.overwritten = c->overwritten;
		s->info.written = c->written;
		s->info.owner = c->owner;
		s->info.pid = c->pid;
		if (!s->info.kind && c->kind >= KTRACE_STREAM_THREAD && c->kind <= KTRACE_STREAM_CPU)
			s->info.kind = c->kind;
	}
	if (ktr_stream_cut(s))
		ktr_diag(t, 1, "%s: %llu bytes, but the recording wrote %llu (%llu records): cut "
			       "short after it was recorded; the missing records are counted as lost",
			 s->info.path, (unsigned long long)s->f.size,
			 (unsigned long long)s->want_bytes, (unsigned long long)s->want_records);
	if (t->seqbase && s->index < KTR_MAX_STREAMS &&
	    (t->seqbase_set[s->index >> 3] & (1u << (s->index & 7))))
		s->seq_base = t->seqbase[s->index];
	set_geometry(t, s);
	if (i == 0 || !t->info.buf_size) {
		t->info.buf_size = s->info.buf_size;
		t->info.buf_nr = t->meta_layout == 2 ? t->meta_buf_nr : s->info.buf_nr;
	}
	ktr_stream_index(t, s);
}

static void load(struct ktr_trace *t)
{
	if (!check_dir(t))
		return;
	ktr_check_files(t); /* links, FIFOs, devices named like trace files: refused */
	load_text_files(t);
	check_session(t);
	load_control(t);
	load_streams(t);
	for (unsigned i = 0; i < t->nstreams; i++)
		stream_setup(t, i);
	t->info.nstreams = t->nstreams;
	ktr_sort_tables(t);
	ktr_calib_finish(t);
	ktr_callsites_load(t);
	ktr_sub_open(t);
	/*
	 * No stream files: an error, unless a kernel sub-trace holds the
	 * records (`record --kernel` of a program that wrote none, e.g. one
	 * not built with -finstrument-functions).
	 */
	if (!t->nstreams && !t->kernel_only && !t->sub)
		ktr_diag(t, 1, "%s: no stream files (trace0... or cpu0...)", t->dir);
}

struct ktr_trace *ktr_open(const char *dir)
{
	struct ktr_trace *t = trace_new(dir);

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	load(t);
	return t;
}

/* ktr_open_sub() - open the kernel sub-trace @parent/kernel (kernel.c): as
 * ktr_open() or ktr_open_mem() (@files not NULL), without looking for a
 * kernel/ in it; "kernel" is a component its files are opened through,
 * never followed if it is a link (ktr_open_in()). */
struct ktr_trace *ktr_open_sub(const char *parent, const struct ktr_memfile *files, size_t n)
{
	static const struct ktr_memfile none;
	struct ktr_trace *t;
	char *dir;

	if (asprintf(&dir, "%s/kernel", parent) < 0)
		return NULL;
	t = trace_new(dir);
	free(dir);
	if (!t)
		return NULL;
	t->base = strdup(parent);
	if (!t->base) {
		ktr_close(t);
		return NULL;
	}
	t->sub_prefix = "kernel/";
	t->is_sub = 1;
	if (files) {
		t->mfiles = n ? files : &none;
		t->nmfiles = n;
	}
	load(t);
	return t;
}

struct ktr_trace *ktr_open_mem(const char *dir, const struct ktr_memfile *files, size_t n)
{
	static const struct ktr_memfile none;
	struct ktr_trace *t = trace_new(dir);

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->mfiles = n ? files : &none;
	t->nmfiles = n;
	load(t);
	return t;
}

void ktr_close(struct ktr_trace *t)
{
	if (!t)
		return;
	ktr_sub_close(t);
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct ktr_stream *s = &t->streams[i];

		for (size_t k = 0; k < s->nsb; k++)
			free(s->sb[k].why);
		free(s->sb);
		free(s->zbuf);
		ktr_file_close(&s->f);
	}
	free(t->streams);
	kz_dec_free(t->zdec);
	for (size_t i = 0; i < t->nmstreams; i++)
		free(t->mstreams[i].file);
	free(t->mstreams);
	free(t->seqbase);
	free(t->seqbase_set);
	free(t->mstream_seen);
	free(t->mstream_hash);
	for (size_t j = 0; j < t->nswritten; j++)
		free(t->swritten[j].file);
	free(t->swritten);
	free(t->swritten_seen);
	for (size_t i = 0; i < t->nevents; i++) {
		struct ktr_event *e = &t->events[i];

		free((char *)e->name);
		free((char *)e->category);
		for (unsigned a = 0; a < e->nargs; a++)
			free((char *)e->args[a]);
	}
	free(t->events);
	for (int i = 0; i < 256; i++)
		free(t->funcs[i]);
	for (size_t i = 0; i < t->nthreads; i++)
		free(t->threads[i].comm);
	free(t->threads);
	free(t->calib);
	free(t->slope);
	free(t->cs_plain);
	for (size_t i = 0; i < t->nmaps; i++) {
		free(t->maps[i].buildid);
		free(t->maps[i].path);
	}
	free(t->maps);
	free(t->gidx);
	free(t->gmaxend);
	ktr_calls_free(t);
	free(t->sctl);
	free(t->heap);
	for (int i = 0; i < 6; i++)
		free(t->strs[i]);
	ktr_diag_free(t);
	for (size_t i = 0; i < t->nbadf; i++)
		free(t->badf[i]);
	free(t->badf);
	free(t->dir);
	free(t->base);
	free(t);
}

const struct ktr_info *ktr_info(const struct ktr_trace *t)
{
	return &t->info;
}

const struct ktr_stream_info *ktr_stream(const struct ktr_trace *t, unsigned i)
{
	return i < t->nstreams ? &t->streams[i].info : NULL;
}

const char *ktr_dir(const struct ktr_trace *t)
{
	return t->dir;
}
