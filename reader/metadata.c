/*
 * reader/metadata.c - parsing the text files of a trace: `metadata` (keys
 * in docs/FORMAT.md, "The metadata file") and `threads`.
 *
 * The parser is line based and forgiving: a bad line is reported as
 * "DIR/metadata:LINE: what" and skipped, unknown keys and '#' comments are
 * ignored, and a newer format version is reported but parsing goes on
 * (FORMAT.md, "Compatibility").  Fields are separated by single spaces; the
 * last field of comm, host, kernel, machine, channel, map, thread and func
 * lines is the rest of the line.  `map` lines (hex START END OFFSET, hex
 * BUILDID or -, PATH) are kept in file order for the symbolizer.
 *
 * parse_line() looks a line's key up in line_kinds[] and hands the rest of
 * the line to that kind's function (line_*()), which returns the line's
 * error text or NULL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

/* A cursor over the fields of one line. */
struct fields {
	const char *p, *end;
};

/* Take the next space-separated field; 0 if there is none. */
static int field(struct fields *fs, const char **s, size_t *len)
{
	const char *q;

	if (fs->p >= fs->end)
		return 0;
	q = memchr(fs->p, ' ', (size_t)(fs->end - fs->p));
	if (!q)
		q = fs->end;
	*s = fs->p;
	*len = (size_t)(q - fs->p);
	fs->p = q < fs->end ? q + 1 : q;
	return *len > 0;
}

/* The rest of the line as one field; 0 if empty. */
static int rest(struct fields *fs, const char **s, size_t *len)
{
	*s = fs->p;
	*len = (size_t)(fs->end - fs->p);
	fs->p = fs->end;
	return *len > 0;
}

static int eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/**
 * ktr_parse_u64() - parse exactly @len decimal digits (or "0x" and hex
 * digits) into *@v.  Return: 0, or -EINVAL (empty, bad digit, overflow).
 */
int ktr_parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	}
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return -EINVAL;
		if (x > (UINT64_MAX - d) / base)
			return -EINVAL;
		x = x * base + d;
	}
	*v = x;
	return 0;
}

/* Exactly @len hex digits (no 0x; at most 16) into *@v.  Return: 0 or -EINVAL. */
static int parse_hex(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (!len || len > 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		unsigned d;

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			return -EINVAL;
		x = x << 4 | d;
	}
	*v = x;
	return 0;
}

/* A build id: an even number of hex digits, 2..128.  Return: 0 or -EINVAL. */
static int parse_hex_id(const char *s, size_t len)
{
	if (len < 2 || len > 128 || len % 2)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return -EINVAL;
	return 0;
}

/* A copy of @len bytes of @s with control characters made '?'. */
static char *copy_str(const char *s, size_t len)
{
	char *c = malloc(len + 1);

	if (!c)
		return NULL;
	for (size_t i = 0; i < len; i++)
		c[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	c[len] = 0;
	return c;
}

/* Set owned string slot @slot of the info (host, kernel, ...). */
static void set_str(struct ktr_trace *t, int slot, const char **dst, const char *s, size_t len)
{
	char *c = copy_str(s, len);

	if (!c)
		return;
	free(t->strs[slot]);
	t->strs[slot] = c;
	*dst = c;
}

/*
 * ktr_add_thread() - remember thread @tid of process @pid named @comm
 * (@len bytes).  Later additions win over earlier ones for the same tid.
 */
void ktr_add_thread(struct ktr_trace *t, uint32_t tid, uint32_t pid, const char *comm, size_t len)
{
	struct ktr_thread_ent *e;

	if (t->nthreads == t->capthreads) {
		size_t cap = t->capthreads ? 2 * t->capthreads : 16;
		struct ktr_thread_ent *n = realloc(t->threads, cap * sizeof(*n));

		if (!n)
			return;
		t->threads = n;
		t->capthreads = cap;
	}
	e = &t->threads[t->nthreads];
	e->comm = copy_str(comm, len);
	if (!e->comm)
		return;
	e->tid = tid;
	e->pid = pid;
	e->order = t->nthreads++;
}

/*
 * ktr_add_map() - remember a `map` line: [@start, @end) at file offset @off
 * of @path (@plen bytes), build id @id (@idlen hex digits, 0 = none).
 */
void ktr_add_map(struct ktr_trace *t, uint64_t start, uint64_t end, uint64_t off, const char *id,
		 size_t idlen, const char *path, size_t plen)
{
	struct ktr_map_ent *e;

	if (t->nmaps == t->capmaps) {
		size_t cap = t->capmaps ? 2 * t->capmaps : 32;
		struct ktr_map_ent *n = realloc(t->maps, cap * sizeof(*n));

		if (!n)
			return;
		t->maps = n;
		t->capmaps = cap;
	}
	e = &t->maps[t->nmaps];
	e->buildid = copy_str(id, idlen);
	e->path = copy_str(path, plen);
	if (!e->buildid || !e->path) {
		free(e->buildid);
		free(e->path);
		return;
	}
	for (char *p = e->buildid; *p; p++)
		if (*p >= 'A' && *p <= 'F')
			*p = (char)(*p - 'A' + 'a');
	e->m.start = start;
	e->m.end = end;
	e->m.offset = off;
	e->m.buildid = e->buildid;
	e->m.path = e->path;
	e->m.timed = 0;
	e->m.load_ns = 0;
	e->m.unload_ns = UINT64_MAX;
	t->nmaps++;
}

/* The map-gen lines' index for ktr_map_pick(): sorted by start, with the prefix maximum of end. */
static int cmp_gidx(const void *a, const void *b, void *arg)
{
	const struct ktr_map_ent *maps = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (maps[x].m.start != maps[y].m.start)
		return maps[x].m.start < maps[y].m.start ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void build_gidx(struct ktr_trace *t)
{
	size_t n = 0;

	t->gidx_built = 1;
	if (!t->nmapgen)
		return;
	t->gidx = malloc(t->nmapgen * sizeof(*t->gidx));
	t->gmaxend = malloc(t->nmapgen * sizeof(*t->gmaxend));
	if (!t->gidx || !t->gmaxend) {
		free(t->gidx);
		free(t->gmaxend);
		t->gidx = NULL;
		t->gmaxend = NULL;
		return;
	}
	for (size_t i = 0; i < t->nmaps; i++)
		if (t->maps[i].m.timed && n < t->nmapgen)
			t->gidx[n++] = i;
	qsort_r(t->gidx, n, sizeof(*t->gidx), cmp_gidx, t->maps);
	for (size_t j = 0; j < n; j++) {
		uint64_t e = t->maps[t->gidx[j]].m.end;

		t->gmaxend[j] = j && t->gmaxend[j - 1] > e ? t->gmaxend[j - 1] : e;
	}
	t->ngidx = n;
}

size_t ktr_map_pick(struct ktr_trace *t, uint64_t addr, uint64_t ns, int *ambiguous)
{
	size_t lo = 0, hi, best = SIZE_MAX, first = SIZE_MAX;
	uint64_t bestdist = UINT64_MAX;
	int bestin = 0, amb = 0;

	if (!t->gidx_built)
		build_gidx(t);
	hi = t->ngidx;
	while (lo < hi) { /* first line starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->maps[t->gidx[mid]].m.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back over the lines starting at or below addr while one may still reach it */
	for (size_t j = lo, steps = 0; j > 0 && t->gmaxend[j - 1] > addr && steps < 4096; j--, steps++) {
		const struct ktr_map *m = &t->maps[t->gidx[j - 1]].m;
		int in;
		uint64_t dist;

		if (addr >= m->end)
			continue;
		if (first == SIZE_MAX)
			first = t->gidx[j - 1];
		else if (m->load_ns != t->maps[first].m.load_ns || strcmp(m->path, t->maps[first].m.path))
			amb = 1;
		in = m->load_ns <= ns && ns <= m->unload_ns;
		dist = in ? 0 : ns < m->load_ns ? m->load_ns - ns : ns - m->unload_ns;
		/* inside its time: the latest loaded; else the nearest in time */
		if (best == SIZE_MAX || (in && (!bestin || m->load_ns > t->maps[best].m.load_ns)) ||
		    (!in && !bestin && dist < bestdist)) {
			best = t->gidx[j - 1];
			bestin = in;
			bestdist = dist;
		}
	}
	if (ambiguous)
		*ambiguous = amb;
	return best;
}

const struct ktr_map *ktr_map_at(const struct ktr_trace *t, size_t i)
{
	return i < t->nmaps ? &t->maps[i].m : NULL;
}

static int add_event(struct ktr_trace *t, uint64_t id, unsigned cls, const char *name, size_t nlen,
		     const char *cat, size_t clen, const char *args, size_t alen)
{
	struct ktr_event *e;

	if (t->nevents == t->capevents) {
		size_t cap = t->capevents ? 2 * t->capevents : 64;
		struct ktr_event *n = realloc(t->events, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->events = n;
		t->capevents = cap;
	}
	e = &t->events[t->nevents];
	memset(e, 0, sizeof(*e));
	e->id = (unsigned)id;
	e->cls = cls;
	e->name = copy_str(name, nlen);
	e->category = (clen == 1 && cat[0] == '-') ? strdup("default") : copy_str(cat, clen);
	if (!(alen == 1 && args[0] == '-')) {
		const char *p = args, *end = args + alen;

		while (p <= end && e->nargs < KTRACE_MAX_WORDS) {
			const char *c = memchr(p, ',', (size_t)(end - p));

			if (!c)
				c = end;
			e->args[e->nargs++] = copy_str(p, (size_t)(c - p));
			p = c + 1;
		}
	}
	t->nevents++;
	return 0;
}

static unsigned kind_of(const char *s, size_t len)
{
	if (eq(s, len, "thread"))
		return KTRACE_STREAM_THREAD;
	if (eq(s, len, "shared"))
		return KTRACE_STREAM_SHARED;
	if (eq(s, len, "cpu"))
		return KTRACE_STREAM_CPU;
	return 0;
}

/* FNV-1a of a NUL-terminated name. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Put mstreams[@i] into the file-name table (t->hashcap a power of two, half full at most). */
static void hash_put(struct ktr_trace *t, size_t i)
{
	size_t m = t->hashcap - 1, h = name_hash(t->mstreams[i].file) & m;

	while (t->mstream_hash[h])
		h = (h + 1) & m;
	t->mstream_hash[h] = (uint32_t)(i + 1);
}

/*
 * Add a `stream` line (@file malloc'ed, taken on success): in time and
 * memory linear in the lines, a file named twice found by a hash of the
 * names.  Return: 0, -EEXIST (@file is an earlier line's), -ENOMEM.
 */
static int mstream_add(struct ktr_trace *t, unsigned index, unsigned kind, char *file, unsigned line)
{
	size_t m, h;

	if (2 * (t->nmstreams + 1) > t->hashcap) {
		size_t cap = t->hashcap ? 2 * t->hashcap : 64;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		free(t->mstream_hash);
		t->mstream_hash = n;
		t->hashcap = cap;
		for (size_t i = 0; i < t->nmstreams; i++)
			hash_put(t, i);
	}
	m = t->hashcap - 1;
	for (h = name_hash(file) & m; t->mstream_hash[h]; h = (h + 1) & m)
		if (!strcmp(t->mstreams[t->mstream_hash[h] - 1].file, file))
			return -EEXIST;
	if (t->nmstreams == t->capmstreams) {
		size_t cap = t->capmstreams ? 2 * t->capmstreams : 16;
		struct ktr_mstream *n = realloc(t->mstreams, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->mstreams = n;
		t->capmstreams = cap;
	}
	t->mstreams[t->nmstreams] = (struct ktr_mstream){ index, kind, file, line };
	hash_put(t, t->nmstreams++);
	return 0;
}

/*
 * The line kinds.  Each parses the fields after its key (@fs) into @t,
 * @arg telling apart the kinds one function parses.  Return: the error
 * text for the line, or NULL.
 */
typedef const char *line_fn(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg);

static const char *line_format(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a;
	size_t al;
	uint64_t x;

	if (lineno != 1)
		return "ktrace-format must be the first line";
	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &x) || x == 0 || x > 65535)
		return "bad format version";
	t->info.version = (unsigned)x;
	return NULL;
}

static const char *line_clock(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a;
	size_t al;

	if (!field(fs, &a, &al))
		return "clock needs a value";
	if (eq(a, al, "tsc"))
		t->info.clock_tsc = 1;
	else if (eq(a, al, "mono"))
		t->info.clock_tsc = 0;
	else
		return "unknown clock (expected tsc or mono)";
	t->have_clock = 1;
	return NULL;
}

static const char *line_calib(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a, *b;
	size_t al, bl;
	uint64_t x, y;

	if (!field(fs, &a, &al) || !field(fs, &b, &bl) || ktr_parse_u64(a, al, &x) ||
	    ktr_parse_u64(b, bl, &y))
		return "bad calib line (expected calib RAW NS)";
	ktr_add_pair(t, x, y);
	return NULL;
}

/* host, kernel, machine, comm, channel (@arg: set_str()'s slot): the rest of the line */
static const char *line_string(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	struct ktr_info *in = &t->info;
	const char **dst[] = { &in->host, &in->kernel, &in->machine, &in->comm, &in->channel };
	const char *a;
	size_t al;

	rest(fs, &a, &al);
	set_str(t, arg, dst[arg], a, al);
	return NULL;
}

enum { NUM_CPUS, NUM_PID, NUM_BUF_SIZE, NUM_BUF_NR, NUM_CREATED, NUM_REALTIME };

/* cpus, pid, buf-size, buf-nr, created-ns, realtime-ns (@arg: NUM_*) */
static const char *line_number(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	struct ktr_info *in = &t->info;
	const char *a;
	size_t al;
	uint64_t x;

	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &x))
		return "bad number";
	switch (arg) {
	case NUM_CPUS:
		in->cpus = x > 65536 ? 65536 : (unsigned)x;
		break;
	case NUM_PID:
		in->pid = (uint32_t)x;
		break;
	case NUM_BUF_SIZE:
		if (x < 128 || x > (1u << 30) || (x & (x - 1)))
			return "buf-size must be a power of two from 128 to 2^30";
		t->meta_buf_size = (uint32_t)x;
		break;
	case NUM_BUF_NR:
		if (x < 1 || x > (1u << 24))
			return "buf-nr must be from 1 to 2^24";
		t->meta_buf_nr = (uint32_t)x;
		break;
	case NUM_CREATED:
		in->created_ns = x;
		break;
	default:
		in->realtime_ns = x;
	}
	return NULL;
}

/* The next field as an index into @words (NULL-terminated); -1 if there is none or it is none of them. */
static int one_of(struct fields *fs, const char *const *words)
{
	const char *a;
	size_t al;

	if (field(fs, &a, &al))
		for (int i = 0; words[i]; i++)
			if (eq(a, al, words[i]))
				return i;
	return -1;
}

static const char *line_mode(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	static const char *const modes[] = { "discard", "flight", NULL };
	int i = one_of(fs, modes);

	if (i < 0)
		return "mode must be discard or flight";
	t->info.flight = i == 1;
	return NULL;
}

static const char *line_scope(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	static const char *const scopes[] = { "thread", "global", "cpu", NULL };
	int i = one_of(fs, scopes);

	if (i < 0)
		return "scope must be thread, global or cpu";
	t->info.scope = scopes[i];
	return NULL;
}

static const char *line_layout(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	static const char *const layouts[] = { "fixed", "packed", "slots", NULL }; /* meta_layout 0, 1, 2 */
	int i = one_of(fs, layouts);

	if (i < 0)
		return "layout must be fixed, packed or slots";
	t->meta_layout = i;
	return NULL;
}

/* A stream index field (below KTR_MAX_STREAMS) into *@x; 0 if bad. */
static int stream_index(struct fields *fs, uint64_t *x)
{
	const char *a;
	size_t al;

	return field(fs, &a, &al) && !ktr_parse_u64(a, al, x) && *x < KTR_MAX_STREAMS;
}

/* A stream file name field (one path component, at most 255 bytes); 0 if bad. */
static int stream_file(struct fields *fs, const char **c, size_t *cl)
{
	return field(fs, c, cl) && !memchr(*c, '/', *cl) && !memchr(*c, 0, *cl) && !eq(*c, *cl, ".") &&
	       !eq(*c, *cl, "..") && *cl <= 255;
}

/* Whether index @x already had a line, by the bits *@seen (allocated on first use). */
static const char *index_seen(uint8_t **seen, uint64_t x)
{
	if (!*seen && !(*seen = calloc(KTR_MAX_STREAMS / 8, 1)))
		return "out of memory";
	if ((*seen)[x >> 3] & (1u << (x & 7)))
		return "duplicate stream index";
	return NULL;
}

static const char *line_stream(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *b, *c, *err;
	size_t bl, cl;
	uint64_t x;
	unsigned kind;
	char *file;

	if (!stream_index(fs, &x))
		return "bad stream index";
	if (!field(fs, &b, &bl) || !(kind = kind_of(b, bl)))
		return "stream kind must be thread, shared or cpu";
	if (!stream_file(fs, &c, &cl))
		return "bad stream file name";
	if ((err = index_seen(&t->mstream_seen, x)))
		return err;
	file = copy_str(c, cl);
	if (!file)
		return "out of memory";
	switch (mstream_add(t, (unsigned)x, kind, file, lineno)) {
	case 0:
		t->mstream_seen[x >> 3] |= (uint8_t)(1u << (x & 7));
		return NULL;
	case -EEXIST:
		free(file);
		/* one file read as two streams: twice its memory, its records twice */
		return "stream file named by an earlier stream line";
	default:
		free(file);
		return "out of memory";
	}
}

static const char *line_seq_base(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *b;
	size_t bl;
	uint64_t x, seq;

	if (!stream_index(fs, &x))
		return "bad stream index";
	if (!field(fs, &b, &bl) || ktr_parse_u64(b, bl, &seq))
		return "bad sequence number";
	if (!t->seqbase) {
		t->seqbase = malloc(KTR_MAX_STREAMS * sizeof(*t->seqbase));
		t->seqbase_set = calloc(KTR_MAX_STREAMS / 8, 1);
		if (!t->seqbase || !t->seqbase_set) {
			free(t->seqbase);
			free(t->seqbase_set);
			t->seqbase = NULL;
			t->seqbase_set = NULL;
			return "out of memory";
		}
	}
	t->seqbase[x] = seq; /* a later line wins */
	t->seqbase_set[x >> 3] |= (uint8_t)(1u << (x & 7));
	return NULL;
}

static const char *line_stream_written(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	struct ktr_swritten *n;
	const char *b, *c, *err;
	size_t bl, cl;
	uint64_t x, bytes, recs;

	if (!stream_index(fs, &x))
		return "bad stream index";
	if (!stream_file(fs, &c, &cl))
		return "bad stream file name";
	if (!field(fs, &b, &bl) || ktr_parse_u64(b, bl, &bytes))
		return "bad byte count";
	if (!field(fs, &b, &bl) || ktr_parse_u64(b, bl, &recs))
		return "bad record count";
	if ((err = index_seen(&t->swritten_seen, x)))
		return err;
	if (t->nswritten == t->capswritten) { /* doubling: linear in the lines */
		size_t cap = t->capswritten ? 2 * t->capswritten : 16;

		n = realloc(t->swritten, cap * sizeof(*n));
		if (!n)
			return "out of memory";
		t->swritten = n;
		t->capswritten = cap;
	}
	n = t->swritten;
	t->swritten_seen[x >> 3] |= (uint8_t)(1u << (x & 7));
	n[t->nswritten] = (struct ktr_swritten){ (unsigned)x, copy_str(c, cl), bytes, recs };
	if (n[t->nswritten].file)
		t->nswritten++;
	return NULL;
}

static const char *line_func(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a, *b;
	size_t al, bl;
	uint64_t x;

	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &x) || x > 255)
		return "bad function id (0..255)";
	if (!rest(fs, &b, &bl))
		return "func needs a name";
	free(t->funcs[x]);
	t->funcs[x] = copy_str(b, bl);
	return NULL;
}

static const char *line_event(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a, *b, *c, *cat, *args;
	size_t al, bl, cl, catl, argsl;
	uint64_t x;
	unsigned cls;

	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &x) || x > 65535)
		return "bad event id (0..65535)";
	if (!field(fs, &b, &bl))
		return "event needs a class";
	if (eq(b, bl, "log2"))
		cls = KTRACE_CLASS_LOG2;
	else if (eq(b, bl, "log4"))
		cls = KTRACE_CLASS_LOG4;
	else if (eq(b, bl, "kevent"))
		cls = KTRACE_CLASS_KEVENT;
	else
		return "event class must be log2, log4 or kevent";
	if (!field(fs, &c, &cl) || !field(fs, &cat, &catl) || !field(fs, &args, &argsl))
		return "event needs NAME CATEGORY ARGS";
	if (add_event(t, x, cls, c, cl, cat, catl, args, argsl))
		return "out of memory";
	return NULL;
}

static const char *line_thread(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	const char *a, *b, *c;
	size_t al, bl, cl;
	uint64_t x, y;

	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &x) || x > UINT32_MAX ||
	    !field(fs, &b, &bl) || ktr_parse_u64(b, bl, &y) || y > UINT32_MAX)
		return "bad thread line (expected thread TID PID COMM)";
	rest(fs, &c, &cl);
	ktr_add_thread(t, (uint32_t)x, (uint32_t)y, c, cl);
	return NULL;
}

/* A mapping's fields after a map or map-gen line's own. */
struct map_fields {
	uint64_t start, end, off;
	const char *id, *path;
	size_t idl, pathl;
};

/*
 * Parse hex START END OFFSET, BUILDID (hex digits or -) and the PATH (the
 * rest) into @m.  Return: 0, 1 bad numbers, 2 bad build id, 3 no path.
 */
static int map_fields(struct fields *fs, struct map_fields *m)
{
	const char *a, *b, *c;
	size_t al, bl, cl;

	if (!field(fs, &a, &al) || parse_hex(a, al, &m->start) || !field(fs, &b, &bl) ||
	    parse_hex(b, bl, &m->end) || m->end < m->start || !field(fs, &c, &cl) ||
	    parse_hex(c, cl, &m->off))
		return 1;
	if (!field(fs, &m->id, &m->idl) || !(eq(m->id, m->idl, "-") || !parse_hex_id(m->id, m->idl)))
		return 2;
	if (!rest(fs, &m->path, &m->pathl))
		return 3;
	return 0;
}

static void add_map_fields(struct ktr_trace *t, const struct map_fields *m)
{
	ktr_add_map(t, m->start, m->end, m->off, m->id, eq(m->id, m->idl, "-") ? 0 : m->idl, m->path,
		    m->pathl);
}

static const char *line_map(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	static const char *const errs[] = {
		NULL, "bad map line (expected map START END OFFSET BUILDID PATH, hex numbers)",
		"bad map build id (hex digits or -)", "map needs a path"
	};
	struct map_fields m;
	int rc;

	if (t->nmaps - t->nmapgen >= KTR_MAX_MAPS)
		return "too many map lines (at most " KTR_STR(KTR_MAX_MAPS) "): refused";
	if ((rc = map_fields(fs, &m)))
		return errs[rc];
	add_map_fields(t, &m);
	return NULL;
}

static const char *line_map_gen(struct ktr_trace *t, struct fields *fs, unsigned lineno, int arg)
{
	static const char *const errs[] = {
		NULL,
		"bad map-gen line (expected map-gen LOAD UNLOAD START END OFFSET BUILDID PATH, hex addresses)",
		"bad map-gen build id (hex digits or -)", "map-gen needs a path"
	};
	const char *a, *b;
	size_t al, bl, n0 = t->nmaps;
	uint64_t ld, ul = UINT64_MAX;
	struct map_fields m;
	int rc;

	if (t->nmapgen >= KTR_MAX_MAPS)
		return "too many map-gen lines (at most " KTR_STR(KTR_MAX_MAPS) "): refused";
	if (!field(fs, &a, &al) || ktr_parse_u64(a, al, &ld) || !field(fs, &b, &bl) ||
	    (!eq(b, bl, "-") && (ktr_parse_u64(b, bl, &ul) || ul < ld)))
		return "bad map-gen line (expected map-gen LOAD UNLOAD START END OFFSET BUILDID PATH, LOAD <= UNLOAD in ns or -)";
	if ((rc = map_fields(fs, &m)))
		return errs[rc];
	add_map_fields(t, &m);
	if (t->nmaps == n0)
		return "out of memory";
	t->maps[n0].m.timed = 1;
	t->maps[n0].m.load_ns = ld;
	t->maps[n0].m.unload_ns = ul;
	t->nmapgen++;
	return NULL;
}

/* The line kinds by key (docs/FORMAT.md, "The metadata file"). */
static const struct line_kind {
	const char *key;
	line_fn *parse;
	int arg;
} line_kinds[] = {
	{ "ktrace-format", line_format, 0 },
	{ "clock", line_clock, 0 },
	{ "calib", line_calib, 0 },
	{ "host", line_string, 0 },
	{ "kernel", line_string, 1 },
	{ "machine", line_string, 2 },
	{ "comm", line_string, 3 },
	{ "channel", line_string, 4 },
	{ "cpus", line_number, NUM_CPUS },
	{ "pid", line_number, NUM_PID },
	{ "buf-size", line_number, NUM_BUF_SIZE },
	{ "buf-nr", line_number, NUM_BUF_NR },
	{ "created-ns", line_number, NUM_CREATED },
	{ "realtime-ns", line_number, NUM_REALTIME },
	{ "mode", line_mode, 0 },
	{ "scope", line_scope, 0 },
	{ "layout", line_layout, 0 },
	{ "stream", line_stream, 0 },
	{ "seq-base", line_seq_base, 0 },
	{ "stream-written", line_stream_written, 0 },
	{ "func", line_func, 0 },
	{ "event", line_event, 0 },
	{ "thread", line_thread, 0 },
	{ "map", line_map, 0 },
	{ "map-gen", line_map_gen, 0 },
};

/* Parse one metadata line (without its newline).  Return: error text or NULL. */
static const char *parse_line(struct ktr_trace *t, const char *line, size_t llen, unsigned lineno)
{
	struct fields fs = { line, line + llen };
	const char *k;
	size_t kl;

	if (!field(&fs, &k, &kl))
		return llen ? "empty key" : NULL;
	for (size_t i = 0; i < sizeof(line_kinds) / sizeof(line_kinds[0]); i++)
		if (eq(k, kl, line_kinds[i].key))
			return line_kinds[i].parse(t, &fs, lineno, line_kinds[i].arg);
	return NULL; /* unknown keys: ignored */
}

/* Say the pending run of one error: "FILE:LINE: what" or "FILE:FIRST-LAST: what (N lines)". */
static void run_flush(struct ktr_trace *t, const struct ktr_file *f)
{
	if (!t->run_err)
		return;
	if (t->run_first == t->run_last)
		ktr_diag(t, 1, "%s:%u: %s", f->path, t->run_first, t->run_err);
	else
		ktr_diag(t, 1, "%s:%u-%u: %s (%u lines)", f->path, t->run_first, t->run_last,
			 t->run_err, t->run_last - t->run_first + 1);
	t->run_err = NULL;
}

/*
 * Call @fn on each line of @f; lines end at '\n' (a last unterminated line
 * counts).  An error on consecutive lines is said once, with the range: a
 * metadata file of a million bad lines gives one line, not a million.
 */
static void each_line(struct ktr_trace *t, const struct ktr_file *f,
		      const char *(*fn)(struct ktr_trace *, const char *, size_t, unsigned))
{
	const char *p = (const char *)f->p, *end = p + f->size;
	unsigned lineno = 0;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		const char *err;

		lineno++;
		if (len && p[len - 1] == '\r')
			len--;
		if (!(len && p[0] == '#') && (err = fn(t, p, len, lineno))) {
			if (t->run_err && !strcmp(t->run_err, err) && lineno == t->run_last + 1) {
				t->run_last = lineno;
			} else {
				run_flush(t, f);
				t->run_err = err;
				t->run_first = t->run_last = lineno;
			}
		}
		p = nl ? nl + 1 : end;
	}
	run_flush(t, f);
}

/**
 * ktr_parse_metadata() - parse the metadata file @f into @t, reporting bad
 * lines, a missing or bad first line and a newer version as errors.
 */
void ktr_parse_metadata(struct ktr_trace *t, const struct ktr_file *f)
{
	if (f->size < 14 || memcmp(f->p, "ktrace-format ", 14) != 0)
		ktr_diag(t, 1, "%s:1: not a ktrace metadata file (first line must be 'ktrace-format N')",
			 f->path);
	each_line(t, f, parse_line);
	free(t->mstream_seen); /* parsing aids */
	free(t->mstream_hash);
	t->mstream_seen = NULL;
	t->mstream_hash = NULL;
	t->hashcap = 0;
	if (t->info.version > KTRACE_FORMAT_VERSION)
		ktr_diag(t, 1,
			 "%s:1: format version %u is newer than this reader's %u; reading what it can",
			 f->path, t->info.version, KTRACE_FORMAT_VERSION);
}

static const char *thread_line(struct ktr_trace *t, const char *line, size_t len, unsigned lineno)
{
	struct fields fs = { line, line + len };
	const char *a, *b, *c;
	size_t al, bl, cl;
	uint64_t x, y;

	(void)lineno;
	if (!len)
		return NULL;
	if (!field(&fs, &a, &al) || ktr_parse_u64(a, al, &x) || x > UINT32_MAX ||
	    !field(&fs, &b, &bl) || ktr_parse_u64(b, bl, &y) || y > UINT32_MAX)
		return "bad thread line (expected TID PID COMM)";
	rest(&fs, &c, &cl);
	ktr_add_thread(t, (uint32_t)x, (uint32_t)y, c, cl);
	return NULL;
}

/** ktr_parse_threads() - parse the `threads` file @f ("TID PID COMM" lines). */
void ktr_parse_threads(struct ktr_trace *t, const struct ktr_file *f)
{
	each_line(t, f, thread_line);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct ktr_thread_ent *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static unsigned cls_group(unsigned cls)
{
	return cls == KTRACE_CLASS_LOG4 ? KTRACE_CLASS_LOG2 : cls;
}

static int cmp_event(const void *a, const void *b)
{
	const struct ktr_event *x = a, *y = b;
	unsigned gx = cls_group(x->cls), gy = cls_group(y->cls);

	if (gx != gy)
		return gx < gy ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

/* Indexes into the event array, by (class group, id, line order). */
static int cmp_event_idx(const void *a, const void *b, void *arg)
{
	const struct ktr_event *ev = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = cmp_event(&ev[x], &ev[y]);

	return c ? c : (x < y ? -1 : x > y);
}

static void free_event(struct ktr_event *e)
{
	free((char *)e->name);
	free((char *)e->category);
	for (unsigned i = 0; i < e->nargs; i++)
		free((char *)e->args[i]);
}

/*
 * ktr_sort_tables() - sort threads and events for binary search, keeping
 * the last definition of a duplicate tid or event id.
 */
void ktr_sort_tables(struct ktr_trace *t)
{
	size_t n = 0;

	if (t->nthreads) {
		qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_thread);
		for (size_t i = 0; i < t->nthreads; i++) {
			if (n && t->threads[n - 1].tid == t->threads[i].tid) {
				free(t->threads[n - 1].comm);
				t->threads[n - 1] = t->threads[i];
			} else {
				t->threads[n++] = t->threads[i];
			}
		}
		t->nthreads = n;
	}
	if (t->nevents) {
		size_t *idx = malloc(t->nevents * sizeof(*idx));
		struct ktr_event *sorted = malloc(t->nevents * sizeof(*sorted));

		if (!idx || !sorted) {
			free(idx);
			free(sorted);
			qsort(t->events, t->nevents, sizeof(*t->events), cmp_event);
			return;
		}
		for (size_t i = 0; i < t->nevents; i++)
			idx[i] = i;
		qsort_r(idx, t->nevents, sizeof(*idx), cmp_event_idx, t->events);
		n = 0;
		for (size_t i = 0; i < t->nevents; i++) {
			struct ktr_event *e = &t->events[idx[i]];

			if (n && cmp_event(&sorted[n - 1], e) == 0) {
				free_event(&sorted[n - 1]);
				sorted[n - 1] = *e;
			} else {
				sorted[n++] = *e;
			}
		}
		free(idx);
		free(t->events);
		t->events = sorted;
		t->nevents = n;
	}
}
