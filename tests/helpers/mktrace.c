/*
 * tests/helpers/mktrace.c - write format-conformant trace directories
 * without the runtime, including faulty ones, for the reader and CLI tests
 * and the fuzz seed corpus.
 *
 * It simulates the writers of docs/FORMAT.md: records fill sub-buffers,
 * a full sub-buffer is closed and the next opened; in discard mode a full
 * stream drops (counting `lost` in its last sub-buffer and `dropped` in the
 * control file), in flight mode the oldest sub-buffer is reopened and its
 * records counted as `overwritten`.  Then the requested faults are applied.
 *
 * The records are predictable so tests can check what the reader returns.
 * Record i of stream s (S streams) has the global number g = i*S + s:
 *   time     ns = 1000000000000 + 1000*g; raw = RAW0 + 3000*g for `clock
 *            tsc` (3 ticks per ns, RAW0 just below 2^40 so the 40-bit
 *            stamps wrap at g = 50), raw = ns for `clock mono`
 *   event    func s % 4; code 1 (entry) if i % 10 == 0, 2 (exit) if
 *            i % 10 == 9, else 16 + i % 3
 *   payload  LOG2 a = s, b = g; every --log4-every'th record LOG4
 *            a = s, b = g, c = i, d = 0xdeadbeef
 * Threads: thread stream s is tid 1000+s; shared-stream records carry
 * tid 2000 + g % 3; all of pid 999.  Per-CPU streams: cpu s, tid 0.
 *
 * Prints one summary line: "records N kept K dropped D overwritten O lost L"
 * (kept = records in the buffers, what a reader must return).
 *
 * Usage: mktrace [options] DIR   (mktrace --help lists the options)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ktrace/format.h>

#define NS0 1000000000000ull
#define RAW0 ((1ull << 40) - 3000ull * 50)
#define MAXS 64

struct fault {
	int stream;
	uint64_t a, b;
};

static struct {
	unsigned streams, buf_size, buf_nr, kind, version;
	uint64_t records;
	int flight, packed, mono, no_meta, no_ctl, no_threads, no_names, open_last;
	int disable_state, running;
	unsigned cpu_every, log4_every, unknown_every;
	struct fault lost[16], dropped[16], trunc[16], badhdr[16], badrec[16], nrec[16], used[16];
	int nlost, ndropped, ntrunc, nbadhdr, nbadrec, nnrec, nused;
	const char *meta_lines[16];
	int nmeta;
	const char *meta_first;
} o = { .streams = 2, .buf_size = 4096, .buf_nr = 4, .kind = KTRACE_STREAM_THREAD,
	.version = KTRACE_FORMAT_VERSION, .records = 100 };

struct stream {
	uint8_t *img; /* buf_nr * buf_size */
	uint64_t seq; /* current sub-buffer */
	int open, full;
	uint32_t pos; /* write offset in the current sub-buffer */
	uint64_t dropped, overwritten, written;
	unsigned cpu;
};

static uint64_t kept, dropped_total, overwritten_total, lost_total;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "mktrace: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t raw_of(uint64_t g)
{
	return o.mono ? NS0 + 1000 * g : RAW0 + 3000 * g;
}

static uint64_t ns_of_raw(uint64_t raw)
{
	return o.mono ? raw : (uint64_t)((int64_t)NS0 + ((int64_t)(raw - RAW0)) / 3);
}

static struct ktrace_subbuf *sb_at(struct stream *st, uint64_t seq)
{
	return (struct ktrace_subbuf *)(st->img + (seq % o.buf_nr) * o.buf_size);
}

static unsigned ctx_words(void)
{
	return o.kind == KTRACE_STREAM_SHARED ? 1 : 0;
}

static void open_subbuf(struct stream *st, unsigned s, uint64_t seq, uint64_t raw)
{
	struct ktrace_subbuf *sb = sb_at(st, seq);

	if (sb->magic == KTRACE_SUBBUF_MAGIC) {
		st->overwritten += sb->nrec;
		kept -= sb->nrec;
	}
	memset(sb, 0, o.buf_size);
	sb->magic = KTRACE_SUBBUF_MAGIC;
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	sb->flags = ctx_words() ? KTRACE_SBF_CTX : 0;
	sb->seq = seq;
	sb->first_ts = raw - 300; /* opened just before its first record */
	sb->first_ns = ns_of_raw(raw - 300);
	sb->tid = o.kind == KTRACE_STREAM_THREAD ? 1000 + s : 0;
	sb->cpu = (uint16_t)(o.kind == KTRACE_STREAM_CPU ? s : st->cpu);
	sb->stream = (uint16_t)s;
	st->seq = seq;
	st->open = 1;
	st->pos = KTRACE_SUBBUF_HDR_SIZE;
}

static void close_subbuf(struct stream *st)
{
	struct ktrace_subbuf *sb = sb_at(st, st->seq);

	sb->flags |= KTRACE_SBF_CLOSED;
	sb->commit = o.buf_size - KTRACE_SUBBUF_HDR_SIZE;
	st->open = 0;
}

/* Append one record; return 0, or -1 if dropped (discard mode, full). */
static int put(struct stream *st, unsigned s, uint64_t raw, unsigned cls, unsigned id,
	       const uint64_t *w, unsigned words, uint32_t tid, int counted)
{
	unsigned len = 8 * (1 + ctx_words() + words);
	struct ktrace_subbuf *sb;
	uint64_t *p;

	if (st->full || (st->open && st->pos + len > o.buf_size)) {
		if (!st->full && st->open) {
			close_subbuf(st);
			if (!o.flight && st->seq + 1 >= o.buf_nr)
				st->full = 1;
			else
				open_subbuf(st, s, st->seq + 1, raw);
		}
		if (st->full) {
			if (counted) {
				sb_at(st, st->seq)->lost++;
				st->dropped++;
			}
			return -1;
		}
	}
	if (!st->open)
		open_subbuf(st, s, 0, raw);
	sb = sb_at(st, st->seq);
	p = (uint64_t *)((uint8_t *)sb + st->pos);
	*p++ = KTRACE_REC_HDR(raw, cls, words, id);
	if (ctx_words())
		*p++ = KTRACE_CTX(tid, st->cpu, 0);
	memcpy(p, w, 8 * words);
	st->pos += len;
	sb->used = st->pos - KTRACE_SUBBUF_HDR_SIZE;
	sb->last_ts = raw;
	if (counted) {
		sb->nrec++;
		st->written++;
	}
	return 0;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) < 0)
		die("cannot write %s", path);
}

static void parse_fault(const char *arg, struct fault *f, int *n, int three)
{
	unsigned long long a = 0, b = 0;
	int s, k = three ? sscanf(arg, "%d:%llu:%llu", &s, &a, &b) : sscanf(arg, "%d:%llu", &s, &a);

	if (k != (three ? 3 : 2) || s < 0 || s >= MAXS || *n >= 16)
		die("bad fault argument '%s'", arg);
	f[*n].stream = s;
	f[*n].a = a;
	f[*n].b = b;
	(*n)++;
}

static void usage(void)
{
	puts("usage: mktrace [options] DIR\n"
	     "  -s, --streams N          streams (2)\n"
	     "  -r, --records N          records per stream (100)\n"
	     "  -b, --buf-size BYTES     sub-buffer size (4096)\n"
	     "  -n, --buf-nr N           sub-buffers per stream (4)\n"
	     "      --kind thread|shared|cpu\n"
	     "      --flight             flight-recorder mode\n"
	     "      --layout fixed|packed|slots\n"
	     "      --clock tsc|mono\n"
	     "      --version N          metadata ktrace-format version\n"
	     "      --no-metadata --no-control --no-threads --no-names\n"
	     "      --open               leave each stream's last sub-buffer open\n"
	     "      --disable-state      control flag KTRACE_DISABLE_STATE\n"
	     "      --running            control state running\n"
	     "      --cpu-every N        thread streams: change CPU every N records\n"
	     "      --log4-every N       every Nth record is a LOG4\n"
	     "      --unknown-every N    an extra record of class 9 every N records\n"
	     "      --lost S:SEQ:N       add N to `lost` of stream S's sub-buffer SEQ\n"
	     "      --dropped S:N        add N to stream S's dropped counter\n"
	     "      --truncate S:BYTES   truncate stream S's file to BYTES\n"
	     "      --corrupt-header S:SLOT  smash the magic of ring slot SLOT\n"
	     "      --corrupt-record S:SLOT  smash the 2nd record of ring slot SLOT\n"
	     "      --nrec S:SLOT:N      set `nrec` of ring slot SLOT to N (records found stay)\n"
	     "      --used S:SLOT:N      set `used` of ring slot SLOT to N bytes\n"
	     "      --meta-line TEXT     append a metadata line\n"
	     "      --meta-first TEXT    replace the metadata's first line");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "streams", 1, 0, 's' },     { "records", 1, 0, 'r' },   { "buf-size", 1, 0, 'b' },
		{ "buf-nr", 1, 0, 'n' },      { "kind", 1, 0, 'K' },      { "flight", 0, 0, 'F' },
		{ "layout", 1, 0, 'L' },      { "clock", 1, 0, 'C' },     { "version", 1, 0, 'V' },
		{ "no-metadata", 0, 0, 'M' }, { "no-control", 0, 0, 'T' }, { "no-threads", 0, 0, 'H' },
		{ "no-names", 0, 0, 'N' },    { "open", 0, 0, 'O' },      { "cpu-every", 1, 0, 'c' },
		{ "log4-every", 1, 0, '4' },  { "unknown-every", 1, 0, 'u' }, { "lost", 1, 0, 'l' },
		{ "dropped", 1, 0, 'd' },     { "truncate", 1, 0, 't' },  { "corrupt-header", 1, 0, 'h' },
		{ "corrupt-record", 1, 0, 'R' }, { "meta-line", 1, 0, 'm' }, { "meta-first", 1, 0, 'f' },
		{ "disable-state", 0, 0, 'D' }, { "running", 0, 0, 'G' },
		{ "nrec", 1, 0, 'e' },        { "used", 1, 0, 'U' },
		{ "help", 0, 0, 'X' },        { 0, 0, 0, 0 }
	};
	struct stream st[MAXS];
	const char *dir;
	char name[64];
	FILE *f;
	char *buf = NULL;
	size_t blen = 0;
	int c;

	while ((c = getopt_long(argc, argv, "s:r:b:n:", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.streams = (unsigned)atoi(optarg); break;
		case 'r': o.records = strtoull(optarg, NULL, 0); break;
		case 'b': o.buf_size = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': o.buf_nr = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'K':
			o.kind = !strcmp(optarg, "shared") ? KTRACE_STREAM_SHARED :
				 !strcmp(optarg, "cpu")    ? KTRACE_STREAM_CPU :
							     KTRACE_STREAM_THREAD;
			break;
		case 'F': o.flight = 1; break;
		case 'L': o.packed = !strcmp(optarg, "packed") ? 1 : !strcmp(optarg, "slots") ? 2 : 0; break;
		case 'C': o.mono = !strcmp(optarg, "mono"); break;
		case 'V': o.version = (unsigned)atoi(optarg); break;
		case 'M': o.no_meta = 1; break;
		case 'T': o.no_ctl = 1; break;
		case 'H': o.no_threads = 1; break;
		case 'N': o.no_names = 1; break;
		case 'O': o.open_last = 1; break;
		case 'c': o.cpu_every = (unsigned)atoi(optarg); break;
		case '4': o.log4_every = (unsigned)atoi(optarg); break;
		case 'u': o.unknown_every = (unsigned)atoi(optarg); break;
		case 'l': parse_fault(optarg, o.lost, &o.nlost, 1); break;
		case 'd': parse_fault(optarg, o.dropped, &o.ndropped, 0); break;
		case 't': parse_fault(optarg, o.trunc, &o.ntrunc, 0); break;
		case 'h': parse_fault(optarg, o.badhdr, &o.nbadhdr, 0); break;
		case 'R': parse_fault(optarg, o.badrec, &o.nbadrec, 0); break;
		case 'e': parse_fault(optarg, o.nrec, &o.nnrec, 1); break;
		case 'U': parse_fault(optarg, o.used, &o.nused, 1); break;
		case 'm':
			if (o.nmeta < 16)
				o.meta_lines[o.nmeta++] = optarg;
			break;
		case 'f': o.meta_first = optarg; break;
		case 'D': o.disable_state = 1; break;
		case 'G': o.running = 1; break;
		case 'X': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc - 1)
		die("%s", "need exactly one DIR (see --help)");
	dir = argv[optind];
	if (o.streams < 1 || o.streams > MAXS || o.buf_size < 128 || (o.buf_size & (o.buf_size - 1)) ||
	    o.buf_nr < 1)
		die("%s", "bad geometry");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		die("cannot create %s", dir);

	/* Write the records, interleaved in time across streams. */
	memset(st, 0, sizeof(st));
	for (unsigned s = 0; s < o.streams; s++) {
		st[s].img = calloc(o.buf_nr, o.buf_size);
		st[s].cpu = s % 2;
		if (!st[s].img)
			die("%s", "out of memory");
	}
	for (uint64_t i = 0; i < o.records; i++) {
		for (unsigned s = 0; s < o.streams; s++) {
			uint64_t g = i * o.streams + s, raw = raw_of(g), w[2];
			unsigned code = i % 10 == 0 ? 1 : i % 10 == 9 ? 2 : 16 + (unsigned)(i % 3);
			unsigned id = KTRACE_EVENT_ID(s % 4, code), cls = KTRACE_CLASS_LOG2;
			uint32_t tid = o.kind == KTRACE_STREAM_SHARED ? 2000 + (uint32_t)(g % 3) : 1000 + s;

			if (o.kind == KTRACE_STREAM_THREAD && o.cpu_every && i && i % o.cpu_every == 0) {
				uint64_t cw;

				st[s].cpu = (unsigned)((i / o.cpu_every) % 4);
				cw = st[s].cpu | ((uint64_t)tid << 32);
				put(&st[s], s, raw, KTRACE_CLASS_INTERNAL, KTRACE_INT_CPU, &cw, 1, tid, 0);
			}
			if (o.unknown_every && i % o.unknown_every == o.unknown_every - 1) {
				uint64_t uw = 0x1234;

				put(&st[s], s, raw, 9, 7, &uw, 1, tid, 0);
			}
			if (o.log4_every && i % o.log4_every == o.log4_every - 1) {
				cls = KTRACE_CLASS_LOG4;
				w[0] = s | (g << 32);
				w[1] = (i & 0xffffffff) | (0xdeadbeefull << 32);
			} else {
				w[0] = s;
				w[1] = g;
			}
			if (put(&st[s], s, raw, cls, id, w, 2, tid, 1) == 0)
				kept++;
		}
	}

	/* Close sub-buffers, apply counters, write the stream files. */
	for (unsigned s = 0; s < o.streams; s++) {
		struct stream *x = &st[s];

		if (x->open && !o.open_last)
			close_subbuf(x);
		if (x->open && o.open_last && o.kind == KTRACE_STREAM_SHARED)
			sb_at(x, x->seq)->used = 0; /* shared: used is set at close */
		for (int k = 0; k < o.nlost; k++)
			if (o.lost[k].stream == (int)s && sb_at(x, o.lost[k].a)->seq == o.lost[k].a) {
				sb_at(x, o.lost[k].a)->lost += (uint32_t)o.lost[k].b;
				x->dropped += o.lost[k].b;
			}
		for (int k = 0; k < o.ndropped; k++)
			if (o.dropped[k].stream == (int)s)
				x->dropped += o.dropped[k].a;
		dropped_total += x->dropped;
		overwritten_total += x->overwritten;
		for (uint32_t k = 0; k < o.buf_nr; k++) {
			struct ktrace_subbuf *sb = (struct ktrace_subbuf *)(x->img + k * o.buf_size);

			if (sb->magic == KTRACE_SUBBUF_MAGIC)
				lost_total += sb->lost;
		}
		for (int k = 0; k < o.nbadrec; k++)
			if (o.badrec[k].stream == (int)s) {
				uint8_t *sbp = x->img + o.badrec[k].a % o.buf_nr * o.buf_size;
				uint64_t bad = (0xfull << 40) | 1; /* class 0 */
				unsigned rl = 8 * (3 + ctx_words());

				memcpy(sbp + KTRACE_SUBBUF_HDR_SIZE + rl, &bad, 8);
			}
		for (int k = 0; k < o.nnrec; k++)
			if (o.nrec[k].stream == (int)s)
				((struct ktrace_subbuf *)(x->img + o.nrec[k].a % o.buf_nr * o.buf_size))->nrec =
					(uint32_t)o.nrec[k].b;
		for (int k = 0; k < o.nused; k++)
			if (o.used[k].stream == (int)s)
				((struct ktrace_subbuf *)(x->img + o.used[k].a % o.buf_nr * o.buf_size))->used =
					(uint32_t)o.used[k].b;
		for (int k = 0; k < o.nbadhdr; k++)
			if (o.badhdr[k].stream == (int)s) {
				uint32_t bad = 0xdeadbeef;

				memcpy(x->img + o.badhdr[k].a % o.buf_nr * o.buf_size, &bad, 4);
			}
		snprintf(name, sizeof(name), o.packed == 1 ? "cpu%u" : "trace%u", s);
		if (o.packed) {
			/* sub-buffers in sequence order, each hdr + used, padded to 8
			 * (packed), or each in a whole slot, closed (slots: what
			 * `ktrace record`'s consumer writes, tests/helpers/zpack
			 * makes frames of) */
			FILE *pf;
			char path[4096];
			uint64_t first = x->seq + 1 > o.buf_nr ? x->seq + 1 - o.buf_nr : 0;

			snprintf(path, sizeof(path), "%s/%s", dir, name);
			pf = fdopen(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), "w");
			if (!pf)
				die("cannot write %s", path);
			for (uint64_t q = first; o.records && q <= x->seq; q++) {
				struct ktrace_subbuf *sb = sb_at(x, q);
				size_t len = (KTRACE_SUBBUF_HDR_SIZE + sb->used + 7) & ~(size_t)7;

				if (o.packed == 2 && sb->magic == KTRACE_SUBBUF_MAGIC)
					sb->flags |= KTRACE_SBF_CLOSED;
				if (o.packed == 2)
					len = o.buf_size;
				if (sb->magic == KTRACE_SUBBUF_MAGIC || sb->magic == 0xdeadbeef)
					fwrite(sb, 1, len, pf);
			}
			if (fclose(pf))
				die("cannot write %s", path);
		} else {
			write_file(dir, name, x->img, (size_t)o.buf_nr * o.buf_size);
		}
		for (int k = 0; k < o.ntrunc; k++)
			if (o.trunc[k].stream == (int)s) {
				char path[4096];

				snprintf(path, sizeof(path), "%s/%s", dir, name);
				if (truncate(path, (off_t)o.trunc[k].a) < 0)
					die("cannot truncate %s", path);
			}
	}

	/* control file */
	if (!o.no_ctl) {
		size_t off = 128, eoff = off + 64 * (size_t)o.streams, size = eoff + KTRACE_ENABLE_MAP_SIZE;
		uint8_t *img = calloc(1, size);
		struct ktrace_control *ctl = (struct ktrace_control *)img;
		unsigned shift = 0;

		while ((1u << shift) < o.buf_size)
			shift++;
		ctl->magic = KTRACE_CONTROL_MAGIC;
		ctl->version = (uint16_t)(o.version > 65535 ? 65535 : o.version);
		ctl->hdr_size = sizeof(*ctl);
		ctl->state = o.running ? KTRACE_STATE_RUNNING : KTRACE_STATE_STOPPED;
		ctl->flags = (o.disable_state ? KTRACE_DISABLE_STATE : 0) |
			     (o.flight ? KTRACE_FLIGHT_CHANNEL : 0) |
			     (o.kind == KTRACE_STREAM_SHARED ? KTRACE_GLOBAL_CHANNEL : 0);
		ctl->buf_size = o.buf_size;
		ctl->buf_nr = o.buf_nr;
		ctl->nstreams = o.streams;
		ctl->streams_off = (uint32_t)off;
		ctl->enable_off = (uint32_t)eoff;
		ctl->owner_pid = 999;
		ctl->start_ns = NS0 - 5000;
		ctl->stop_ns = ns_of_raw(raw_of(o.records * o.streams));
		for (unsigned s = 0; s < o.streams; s++) {
			struct ktrace_stream_ctl *e = (struct ktrace_stream_ctl *)(img + off) + s;

			e->head = (st[s].seq << shift) | (st[s].pos ? st[s].pos : KTRACE_SUBBUF_HDR_SIZE);
			e->dropped = st[s].dropped;
			e->overwritten = st[s].overwritten;
			e->written = st[s].written;
			e->owner = o.kind == KTRACE_STREAM_THREAD ? 1000 + s : 0;
			e->pid = 999;
			e->kind = o.kind;
		}
		memset(img + eoff, 1, KTRACE_ENABLE_MAP_SIZE);
		write_file(dir, "control", img, size);
		write_file(dir, "state", o.running ? "start\n" : "stop\n", o.running ? 6 : 5);
		snprintf(name, sizeof(name), "%llu\n", (unsigned long long)dropped_total);
		write_file(dir, "dropped", name, strlen(name));
		free(img);
	}

	/* threads file */
	if (!o.no_threads) {
		f = open_memstream(&buf, &blen);
		for (unsigned s = 0; s < o.streams && o.kind == KTRACE_STREAM_THREAD; s++)
			fprintf(f, "%u 999 worker%u\n", 1000 + s, s);
		if (o.kind == KTRACE_STREAM_SHARED)
			fprintf(f, "2000 999 main\n2001 999 helper one\n2002 999 helper two\n");
		fclose(f);
		write_file(dir, "threads", buf, blen);
		free(buf);
		buf = NULL;
	}

	/* metadata */
	if (!o.no_meta) {
		static const char *const kinds[] = { "", "thread", "shared", "cpu" };

		f = open_memstream(&buf, &blen);
		if (o.meta_first)
			fprintf(f, "%s\n", o.meta_first);
		else
			fprintf(f, "ktrace-format %u\n", o.version);
		fprintf(f, "# written by tests/helpers/mktrace\n");
		fprintf(f, "clock %s\n", o.mono ? "mono" : "tsc");
		if (!o.mono)
			fprintf(f, "calib %llu %llu\ncalib %llu %llu\n", RAW0 - 3000, NS0 - 1000,
				RAW0 + 3000000000ull, NS0 + 1000000000ull);
		fprintf(f, "host testhost\nkernel 6.1.0-test\nmachine x86_64\ncpus 4\npid 999\n"
			   "comm mktrace test\nchannel test\n");
		fprintf(f, "mode %s\nscope %s\nbuf-size %u\nbuf-nr %u\nlayout %s\n",
			o.flight ? "flight" : "discard",
			o.kind == KTRACE_STREAM_SHARED ? "global" : o.kind == KTRACE_STREAM_CPU ? "cpu" : "thread",
			o.buf_size, o.buf_nr, o.packed == 2 ? "slots" : o.packed ? "packed" : "fixed");
		fprintf(f, "created-ns %llu\nrealtime-ns %llu\n", NS0 - 10000, 1700000000000000000ull);
		for (unsigned s = 0; s < o.streams; s++)
			fprintf(f, "stream %u %s %s%u\n", s, kinds[o.kind], o.packed == 1 ? "cpu" : "trace", s);
		if (!o.no_names) {
			fprintf(f, "func 0 parse\nfunc 1 send\n");
			fprintf(f, "event %u log2 request net len,seq\n", KTRACE_EVENT_ID(0, 16));
			fprintf(f, "event %u log2 reply io -\n", KTRACE_EVENT_ID(1, 17));
			fprintf(f, "event %u log4 batch - x,y,z,w\n", KTRACE_EVENT_ID(2, 18));
		}
		fprintf(f, "thread 1000 999 worker0\n");
		for (int k = 0; k < o.nmeta; k++)
			fprintf(f, "%s\n", o.meta_lines[k]);
		fclose(f);
		write_file(dir, "metadata", buf, blen);
		free(buf);
	}
	printf("records %llu kept %llu dropped %llu overwritten %llu lost %llu\n",
	       (unsigned long long)(o.records * o.streams), (unsigned long long)kept,
	       (unsigned long long)dropped_total, (unsigned long long)overwritten_total,
	       (unsigned long long)lost_total);
	for (unsigned s = 0; s < o.streams; s++)
		free(st[s].img);
	return 0;
}
