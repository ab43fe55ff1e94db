/*
 * reader/callsort.c - an external merge sort of calls (struct
 * ktr_callent), to list a trace's calls in entry order: CALL records are
 * written at exit, but call listings (addr2sym) and call trees (kd -c)
 * read in entry order, callers before callees.  A caller's record comes
 * after its whole subtree, so no bounded window reorders them: the calls
 * are sorted.
 *
 * Entries are collected in a memory buffer; when it is full it is sorted
 * (LSD radix sort on the key, 8 bits a pass) and appended as one sorted
 * run to an unlinked temporary file; at the end the runs are merged with
 * a binary heap, each read through a small buffer.  Memory: the buffer
 * plus 64 kB per run.  The file is created with mode 0600 (traces are
 * private to their owner) and disappears when the sorter is freed or the
 * process dies.
 *
 * The sorter also numbers threads (ktr_callsort_thread()), since entries
 * name their thread by a 32-bit ordinal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/internal.h"

#define RUN_BUF 1638         /* entries per run buffer (64 kB) */
#define RUN_BYTES (64u << 10) /* encoded bytes read at a time */
#define ENC_MAX 64            /* the longest encoded entry (7 varints of at most 10 bytes, 2 bytes) */

struct run {
	uint64_t off, end; /* file offsets: the next unread byte, the run's end */
	uint64_t left;     /* entries not yet decoded */
	uint64_t prev;     /* the last decoded entry's entry_ns */
	struct ktr_callent *buf;
	uint8_t *raw;      /* encoded bytes read, not yet decoded: raw[0 .. nraw) */
	size_t nraw;
	size_t n, pos;
};

struct tid_ent {
	uint32_t pid, tid;
};

struct ktr_callsort {
	int order;
	struct ktr_callent *mem, *tmp;
	uint32_t *link; /* sort_tree(): 3 x cap: next, tail, below */
	size_t n, cap;
	int fd;
	uint64_t fsize; /* bytes written to the file */
	struct run *runs;
	size_t nruns, capruns;
	unsigned *heap;
	size_t nheap;
	int reading;
	size_t pos; /* in-memory reading */
	int err;

	struct tid_ent *tids; /* ordinal -> ids */
	size_t ntids, captids;
	uint32_t *tidhash;    /* ordinal + 1, 0 = empty */
	size_t tidhash_size;
	uint64_t last_id;     /* the last thread looked up (pid << 32 | tid), its ordinal + 1 */
	uint32_t last_ord;
};

struct ktr_callsort *ktr_callsort_new(size_t mem, int order)
{
	struct ktr_callsort *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (!mem)
		mem = 64u << 20;
	/* the sorts need a copy, and sort_tree() three links an entry */
	s->cap = mem / (2 * sizeof(struct ktr_callent) + 3 * sizeof(uint32_t));
	if (s->cap < 1024)
		s->cap = 1024;
	s->order = order;
	s->fd = -1;
	return s;
}

void ktr_callsort_free(struct ktr_callsort *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	for (size_t i = 0; i < s->nruns; i++) {
		free(s->runs[i].buf);
		free(s->runs[i].raw);
	}
	free(s->runs);
	free(s->heap);
	free(s->mem);
	free(s->tmp);
	free(s->link);
	free(s->tids);
	free(s->tidhash);
	free(s);
}

int ktr_callsort_order(const struct ktr_callsort *s)
{
	return s->order;
}

void ktr_callsort_reset(struct ktr_callsort *s)
{
	for (size_t i = 0; i < s->nruns; i++) {
		free(s->runs[i].buf);
		free(s->runs[i].raw);
	}
	s->nruns = 0;
	free(s->heap);
	s->heap = NULL;
	s->nheap = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->fsize = 0;
	s->n = s->pos = 0;
	s->reading = 0;
	s->err = 0;
}

size_t ktr_callsort_runs(const struct ktr_callsort *s)
{
	return s->nruns;
}

/* ktr_callsort_thread() without its one-entry cache. */
static uint32_t thread_find(struct ktr_callsort *s, uint32_t pid, uint32_t tid, uint64_t id)
{
	size_t mask, i;

	if ((s->ntids + 1) * 2 > s->tidhash_size) {
		size_t size = s->tidhash_size ? 2 * s->tidhash_size : 64;
		uint32_t *h = calloc(size, sizeof(*h));

		if (!h)
			return 0;
		for (size_t k = 0; k < s->ntids; k++) {
			uint64_t kid = (uint64_t)s->tids[k].pid << 32 | s->tids[k].tid;
			size_t j = (size_t)((kid * 0x9e3779b97f4a7c15ull) >> 20) & (size - 1);

			while (h[j])
				j = (j + 1) & (size - 1);
			h[j] = (uint32_t)k + 1;
		}
		free(s->tidhash);
		s->tidhash = h;
		s->tidhash_size = size;
	}
	mask = s->tidhash_size - 1;
	for (i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & mask; s->tidhash[i]; i = (i + 1) & mask) {
		const struct tid_ent *e = &s->tids[s->tidhash[i] - 1];

		if (e->pid == pid && e->tid == tid)
			return s->tidhash[i] - 1;
	}
	if (s->ntids == s->captids) {
		size_t cap = s->captids ? 2 * s->captids : 16;
		struct tid_ent *n = realloc(s->tids, cap * sizeof(*n));

		if (!n)
			return 0;
		s->tids = n;
		s->captids = cap;
	}
	s->tids[s->ntids].pid = pid;
	s->tids[s->ntids].tid = tid;
	s->tidhash[i] = (uint32_t)++s->ntids;
	return (uint32_t)s->ntids - 1;
}

uint32_t ktr_callsort_thread(struct ktr_callsort *s, uint32_t pid, uint32_t tid)
{
	uint64_t id = (uint64_t)pid << 32 | tid;
	uint32_t ord;

	if (s->last_ord && s->last_id == id) /* calls come in runs of one thread */
		return s->last_ord - 1;
	ord = thread_find(s, pid, tid, id);
	if (ord < s->ntids) { /* (not the 0 of a failed allocation) */
		s->last_id = id;
		s->last_ord = ord + 1;
	}
	return ord;
}

int ktr_callsort_thread_ids(const struct ktr_callsort *s, uint32_t ord, uint32_t *pid,
			    uint32_t *tid)
{
	if (ord >= s->ntids)
		return 0;
	*pid = s->tids[ord].pid;
	*tid = s->tids[ord].tid;
	return 1;
}

/* The 64-bit radix keys of an entry: most significant first. */
static inline uint64_t key_hi(const struct ktr_callsort *s, const struct ktr_callent *e)
{
	if (s->order != KTR_SORT_THREAD)
		return e->entry_ns;
	if (e->thread < s->ntids) /* processes by pid, their threads by tid */
		return (uint64_t)s->tids[e->thread].pid << 32 | s->tids[e->thread].tid;
	return ~0ull;
}

static inline uint64_t key_lo(const struct ktr_callsort *s, const struct ktr_callent *e)
{
	if (s->order == KTR_SORT_THREAD)
		return e->entry_ns;
	return (uint64_t)e->depth << 32 | e->thread;
}

static inline uint64_t key_lo2(const struct ktr_callsort *s, const struct ktr_callent *e)
{
	return s->order == KTR_SORT_THREAD ? e->depth : 0;
}

static int less(const struct ktr_callsort *s, const struct ktr_callent *a,
		const struct ktr_callent *b)
{
	uint64_t x = key_hi(s, a), y = key_hi(s, b);

	if (x != y)
		return x < y;
	x = key_lo(s, a);
	y = key_lo(s, b);
	if (x != y)
		return x < y;
	return key_lo2(s, a) < key_lo2(s, b);
}

/* One stable counting-sort pass on byte @shift of the key part @part. */
static void pass(struct ktr_callsort *s, struct ktr_callent *src, struct ktr_callent *dst, size_t n,
		 int part, unsigned shift)
{
	size_t count[256] = { 0 }, sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = part == 0 ? key_lo2(s, &src[i]) : part == 1 ? key_lo(s, &src[i]) : key_hi(s, &src[i]);

		count[(k >> shift) & 255]++;
	}
	for (unsigned b = 0; b < 256; b++) {
		size_t c = count[b];

		count[b] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = part == 0 ? key_lo2(s, &src[i]) : part == 1 ? key_lo(s, &src[i]) : key_hi(s, &src[i]);

		dst[count[(k >> shift) & 255]++] = src[i];
	}
}

#define NIL UINT32_MAX

/*
 * Sort s->mem[0..n) by thread, entry and depth (KTR_SORT_THREAD; or by
 * entry time when it holds one thread's calls only) in one pass, from
 * what the order of the entries already says: calls come in
 * exit order, so per thread every call comes after its callees, and the
 * sorted order is the pre-order of each thread's call trees.  As the
 * calls arrive, each thread keeps a stack of subtrees whose caller has
 * not come yet, each a linked list in pre-order (its root first); a call
 * takes the subtrees above it that it contains (deeper, entered at or
 * after it: they are its callees) as its own list, after itself, and
 * goes on the stack.  At the end each thread's subtrees, bottom to top,
 * are its calls in order, and the threads are laid out by pid and tid.
 * Equal keys keep the order they came in, as the radix sort's.  Whatever
 * the nesting, the result is checked as it is copied out: if two entries
 * are out of order (a trace whose times contradict its nesting), the
 * radix sort does it instead.  Return: 0 sorted, -1 not.
 */
static int sort_tree(struct ktr_callsort *s)
{
	struct ktr_callent *a = s->mem, *b = s->tmp;
	uint32_t *next = s->link, *tail = next + s->cap, *below = tail + s->cap, *top, *ord;
	size_t n = s->n, k = 0;
	int ok = 1;

	if (!s->link || !b || s->ntids == 0 || n >= NIL)
		return -1;
	top = malloc(s->ntids * sizeof(*top));
	ord = malloc(s->ntids * sizeof(*ord));
	if (!top || !ord) {
		free(top);
		free(ord);
		return -1;
	}
	for (size_t t = 0; t < s->ntids; t++)
		top[t] = NIL;
	for (uint32_t i = 0; ok && i < n; i++) {
		const struct ktr_callent *e = &a[i];
		uint32_t head = NIL, last = i, t = e->thread;

		if (t >= s->ntids || (s->order != KTR_SORT_THREAD && t != a[0].thread)) {
			ok = 0; /* by entry time, threads interleave: not one thread's pre-order */
			break;
		}
		/* its callees: the subtrees on top, popped newest first, so prepended */
		while (top[t] != NIL && a[top[t]].depth > e->depth && a[top[t]].entry_ns >= e->entry_ns) {
			uint32_t r = top[t];

			top[t] = below[r];
			if (head == NIL)
				last = tail[r];
			else
				next[tail[r]] = head;
			head = r;
		}
		next[i] = head;
		tail[i] = last;
		below[i] = top[t];
		top[t] = i;
	}
	/* threads by pid, tid (few: an insertion sort) */
	for (uint32_t t = 0; ok && t < s->ntids; t++) {
		size_t j = t;

		while (j > 0 && ((uint64_t)s->tids[ord[j - 1]].pid << 32 | s->tids[ord[j - 1]].tid) >
				       ((uint64_t)s->tids[t].pid << 32 | s->tids[t].tid)) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = t;
	}
	for (size_t o = 0; ok && o < s->ntids; o++) {
		uint32_t t = ord[o], r = top[t], prev = NIL;

		/* the stack bottom first: reverse its links */
		while (r != NIL) {
			uint32_t d = below[r];

			below[r] = prev;
			prev = r;
			r = d;
		}
		for (r = prev; ok && r != NIL; r = below[r])
			for (uint32_t i = r; i != NIL; i = i == tail[r] ? NIL : next[i]) {
				if (k && less(s, &a[i], &b[k - 1])) {
					ok = 0;
					break;
				}
				b[k++] = a[i];
			}
	}
	free(top);
	free(ord);
	if (!ok || k != n)
		return -1;
	s->mem = b;
	s->tmp = a;
	return 0;
}

/*
 * Sort s->mem[0..n): sort_tree() when it can, else an LSD radix sort over
 * the key parts, least significant first, skipping bytes that are equal in
 * every entry.
 */
static void sort_mem(struct ktr_callsort *s)
{
	struct ktr_callent *a = s->mem, *b = s->tmp;
	size_t n = s->n;

	if (n < 2)
		return;
	if (n >= 64 && sort_tree(s) == 0)
		return;
	if (n < 64 || !b) {
		/* insertion sort for tiny buffers (or no scratch memory) */
		for (size_t i = 1; i < n; i++) {
			struct ktr_callent e = a[i];
			size_t j = i;

			while (j > 0 && less(s, &e, &a[j - 1])) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = e;
		}
		return;
	}
	for (int part = 0; part < 3; part++) {
		uint64_t orv = 0, andv = ~0ull;

		for (size_t i = 0; i < n; i++) {
			uint64_t k = part == 0 ? key_lo2(s, &a[i]) : part == 1 ? key_lo(s, &a[i]) : key_hi(s, &a[i]);

			orv |= k;
			andv &= k;
		}
		for (unsigned shift = 0; shift < 64; shift += 8) {
			struct ktr_callent *t;

			if ((((orv ^ andv) >> shift) & 255) == 0)
				continue; /* this byte is the same everywhere */
			pass(s, a, b, n, part, shift);
			t = a;
			a = b;
			b = t;
		}
	}
	if (a != s->mem) {
		memcpy(s->mem, a, n * sizeof(*a));
	}
}

static int open_tmp(struct ktr_callsort *s)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/ktrace-sort.XXXXXX", dir);
	s->fd = mkostemp(path, O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	fchmod(s->fd, 0600);
	unlink(path);
	return 0;
}

/*
 * Runs are written compactly, a third of the bytes of struct ktr_callent
 * (the demo's 197M calls: 2.6 GB through the page cache instead of 7.9):
 * per entry, LEB128 varints of the entry time's difference from the
 * previous entry's (zigzag: a new thread may start earlier), the
 * duration, local time, key, thread, depth and CPU + 1 (so unknown is 0),
 * then the signal depth and flags bytes.
 */
static uint8_t *put_var(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A varint at *@p before @end.  Return: 0, or -1 (cut short or longer than 10 bytes). */
static int get_var(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned sh = 0; sh < 70 && *p < end; sh += 7) {
		uint8_t b = *(*p)++;

		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static uint8_t *encode(uint8_t *p, const struct ktr_callent *e, uint64_t prev)
{
	int64_t d = (int64_t)(e->entry_ns - prev);

	p = put_var(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	p = put_var(p, e->dur_ns);
	p = put_var(p, e->local_ns);
	p = put_var(p, e->key);
	p = put_var(p, e->thread);
	p = put_var(p, e->depth);
	p = put_var(p, (uint32_t)(e->cpu + 1));
	*p++ = e->sig;
	*p++ = e->flags;
	return p;
}

/* Decode one entry at *@p before @end after one of entry time *@prev.  Return: 0, or -1 (damaged). */
static int decode(const uint8_t **p, const uint8_t *end, uint64_t *prev, struct ktr_callent *e)
{
	uint64_t z, v[6];

	if (get_var(p, end, &z) < 0)
		return -1;
	for (int i = 0; i < 6; i++)
		if (get_var(p, end, &v[i]) < 0)
			return -1;
	if (end - *p < 2)
		return -1;
	memset(e, 0, sizeof(*e));
	e->entry_ns = *prev + (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
	*prev = e->entry_ns;
	e->dur_ns = v[0];
	e->local_ns = v[1];
	e->key = (uint32_t)v[2];
	e->thread = (uint32_t)v[3];
	e->depth = (uint16_t)v[4];
	e->cpu = (uint32_t)v[5] - 1;
	e->sig = *(*p)++;
	e->flags = *(*p)++;
	return 0;
}

static int write_all(struct ktr_callsort *s, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t w = pwrite(s->fd, p, len, (off_t)s->fsize);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		p += w;
		len -= (size_t)w;
		s->fsize += (uint64_t)w;
	}
	return 0;
}

/* Sort the buffer and append it to the file as a run (encoded through the free copy, s->tmp). */
static int spill(struct ktr_callsort *s)
{
	uint8_t *buf, *p, *lim;
	uint64_t prev = 0;
	struct run *r;
	int rc;

	if (s->fd < 0 && open_tmp(s) < 0)
		return -errno;
	if (s->nruns == s->capruns) {
		size_t cap = s->capruns ? 2 * s->capruns : 16;
		struct run *n = realloc(s->runs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->runs = n;
		s->capruns = cap;
	}
	sort_mem(s); /* (which may swap s->mem and s->tmp) */
	r = &s->runs[s->nruns];
	memset(r, 0, sizeof(*r));
	r->off = s->fsize;
	r->left = s->n;
	buf = s->tmp ? (uint8_t *)s->tmp : malloc(RUN_BYTES);
	if (!buf)
		return -ENOMEM;
	lim = buf + (s->tmp ? s->cap * sizeof(*s->tmp) : RUN_BYTES) - ENC_MAX;
	p = buf;
	for (size_t i = 0; i < s->n; i++) {
		p = encode(p, &s->mem[i], prev);
		prev = s->mem[i].entry_ns;
		if (p >= lim) {
			if ((rc = write_all(s, buf, (size_t)(p - buf))) < 0)
				goto out;
			p = buf;
		}
	}
	rc = write_all(s, buf, (size_t)(p - buf));
out:
	if (buf != (uint8_t *)s->tmp)
		free(buf);
	if (rc < 0)
		return rc;
	r->end = s->fsize;
	s->nruns++;
	s->n = 0;
	return 0;
}

int ktr_callsort_add_call(struct ktr_callsort *s, const struct ktr_call *c, uint32_t key,
			  uint64_t local_ns)
{
	struct ktr_callent e;

	memset(&e, 0, sizeof(e));
	e.entry_ns = c->entry_ns;
	e.dur_ns = c->dur_ns;
	e.local_ns = local_ns;
	e.key = key;
	e.thread = ktr_callsort_thread(s, c->pid, c->tid);
	e.depth = (uint16_t)(c->depth > 0xffff ? 0xffff : c->depth);
	e.sig = (uint8_t)c->sig;
	e.flags = (uint8_t)(c->flags & ~KTR_CALLENT_GAP);
	e.cpu = c->cpu >= 0 ? (uint32_t)c->cpu : 0xffffffffu;
	return ktr_callsort_add(s, &e);
}

/* ---- exits of the calls entered: a min-heap ------------------------------------------ */

/* 1 if @a leaves before @b: earlier, or deeper at the same time. */
static int exits_before(const struct ktr_callent *a, const struct ktr_callent *b)
{
	uint64_t xa = a->entry_ns + a->dur_ns, xb = b->entry_ns + b->dur_ns;

	return xa < xb || (xa == xb && a->depth > b->depth);
}

int ktr_exits_push(struct ktr_exits *h, const struct ktr_callent *e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		struct ktr_callent *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	for (i = h->n++; i && exits_before(e, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = *e;
	return 0;
}

const struct ktr_callent *ktr_exits_top(const struct ktr_exits *h)
{
	return h->n ? &h->v[0] : NULL;
}

void ktr_exits_pop(struct ktr_exits *h)
{
	struct ktr_callent last = h->v[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && exits_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!exits_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

void ktr_exits_free(struct ktr_exits *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

int ktr_callsort_add(struct ktr_callsort *s, const struct ktr_callent *e)
{
	if (s->reading)
		return -EINVAL;
	if (s->err)
		return s->err;
	if (!s->mem) {
		s->mem = malloc(s->cap * sizeof(*s->mem));
		if (!s->mem)
			return s->err = -ENOMEM;
		s->tmp = malloc(s->cap * sizeof(*s->tmp)); /* NULL: insertion sort (slow) */
		s->link = malloc(3 * s->cap * sizeof(*s->link)); /* NULL: the radix sort */
	}
	if (s->n == s->cap) {
		int rc = spill(s);

		if (rc < 0)
			return s->err = rc;
	}
	s->mem[s->n++] = *e;
	return 0;
}

/* Refill run @r's buffer: read encoded bytes, decode entries.  Return: entries now buffered, or -errno. */
static int refill(struct ktr_callsort *s, struct run *r)
{
	const uint8_t *p, *end;

	if (!r->buf && !(r->buf = malloc(RUN_BUF * sizeof(*r->buf))))
		return -ENOMEM;
	if (!r->raw && !(r->raw = malloc(RUN_BYTES)))
		return -ENOMEM;
	/* at least RUN_BUF entries' worth, or the rest of the run */
	while (r->nraw < RUN_BYTES && r->off < r->end) {
		size_t want = RUN_BYTES - r->nraw;
		ssize_t n;

		if (want > r->end - r->off)
			want = (size_t)(r->end - r->off);
		n = pread(s->fd, r->raw + r->nraw, want, (off_t)r->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		r->nraw += (size_t)n;
		r->off += (uint64_t)n;
	}
	p = r->raw;
	end = r->raw + r->nraw;
	r->n = r->pos = 0;
	while (r->n < RUN_BUF && r->left) {
		const uint8_t *q = p;

		if (decode(&q, end, &r->prev, &r->buf[r->n]) < 0) {
			if (r->off < r->end && end - p < ENC_MAX)
				break; /* the rest of it is still in the file */
			return -EIO; /* our own file, damaged */
		}
		p = q;
		r->n++;
		r->left--;
	}
	r->nraw = (size_t)(end - p);
	memmove(r->raw, p, r->nraw);
	return (int)r->n;
}

static int run_less(const struct ktr_callsort *s, unsigned a, unsigned b)
{
	const struct run *x = &s->runs[a], *y = &s->runs[b];

	if (less(s, &x->buf[x->pos], &y->buf[y->pos]))
		return 1;
	if (less(s, &y->buf[y->pos], &x->buf[x->pos]))
		return 0;
	return a < b; /* runs are in insertion order: stable */
}

static void sift(struct ktr_callsort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		unsigned t;

		if (l < s->nheap && run_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nheap && run_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* End adding: sort what is in memory; with runs on disk, spill it too and start the merge. */
static int start_reading(struct ktr_callsort *s)
{
	int rc;

	s->reading = 1;
	if (!s->nruns) {
		sort_mem(s);
		s->pos = 0;
		return 0;
	}
	if (s->n && (rc = spill(s)) < 0)
		return rc;
	free(s->mem);
	free(s->tmp);
	free(s->link);
	s->mem = s->tmp = NULL;
	s->link = NULL;
	s->heap = malloc(s->nruns * sizeof(*s->heap));
	if (!s->heap)
		return -ENOMEM;
	for (size_t i = 0; i < s->nruns; i++) {
		if ((rc = refill(s, &s->runs[i])) < 0)
			return rc;
		if (rc > 0)
			s->heap[s->nheap++] = (unsigned)i;
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		sift(s, i);
	return 0;
}

int ktr_callsort_next(struct ktr_callsort *s, struct ktr_callent *e)
{
	struct run *r;
	int rc;

	if (!s->reading && (rc = start_reading(s)) < 0)
		return s->err = rc;
	if (s->err)
		return s->err;
	if (!s->nruns) {
		if (s->pos >= s->n)
			return 0;
		*e = s->mem[s->pos++];
		return 1;
	}
	if (!s->nheap)
		return 0;
	r = &s->runs[s->heap[0]];
	*e = r->buf[r->pos++];
	if (r->pos == r->n) {
		if (r->left) {
			if ((rc = refill(s, r)) < 0)
				return s->err = rc;
		} else {
			free(r->buf);
			free(r->raw);
			r->buf = NULL;
			r->raw = NULL;
			s->heap[0] = s->heap[--s->nheap];
		}
	}
	if (s->nheap)
		sift(s, 0);
	return 1;
}
