/*
 * tests/reader_basic.c - the trace reader on well-formed traces written by
 * tests/helpers/mktrace: merge order, exact timestamps (40-bit wrap, TSC
 * calibration), CPU/thread/pid attribution, names and arguments, per-stream
 * iteration, layouts (fixed, packed), stream kinds (thread, shared, cpu),
 * clocks (tsc, mono) and the normal gaps (flight-recorder overwrite, lost
 * and dropped records).
 *
 * mktrace's records are predictable (see its file comment): record i of
 * stream s is global number g = i*S + s at ns = NS0 + 1000*g, payload b = g.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "mktrace.h"
#include "reader/reader.h"

#define NS0 1000000000000ull

static unsigned long drain(struct ktr_trace *t)
{
	unsigned long n = 0;
	const char *m;

	while ((m = ktr_diag_next(t))) {
		diag("reader: %s", m);
		n++;
	}
	return n;
}

/* Walk the merge; check every record against mktrace's numbering. */
static void check_merge(struct ktr_trace *t, unsigned streams, unsigned long long want,
			const char *what)
{
	struct ktr_rec r;
	unsigned long long n = 0, bad_ns = 0, bad_meta = 0, bad_order = 0, gaps = 0;
	uint64_t prev_g = 0, prev_raw = 0;
	int first = 1;

	while (ktr_next(t, &r)) {
		uint64_t g;

		if (r.kind == KTR_GAP) {
			gaps++;
			continue;
		}
		g = r.cls == KTRACE_CLASS_LOG4 ? r.w[0] >> 32 : r.w[1];
		if (r.ns != NS0 + 1000 * g)
			bad_ns++;
		if (r.stream != g % streams || r.pid != 999)
			bad_meta++;
		if (!first && (g <= prev_g || r.raw < prev_raw))
			bad_order++;
		prev_g = g;
		prev_raw = r.raw;
		first = 0;
		n++;
	}
	is_int(n, want, "%s: %llu records", what, want);
	is_int(bad_ns, 0, "%s: every time is exact", what);
	is_int(bad_meta, 0, "%s: every stream and pid is right", what);
	is_int(bad_order, 0, "%s: merged in time order", what);
	(void)gaps;
}

static void test_thread(void)
{
	const char *dir = mk_path("thread");
	struct mk_sum s;
	struct ktr_trace *t;
	struct ktr_rec r;
	const struct ktr_info *in;
	char name[64];
	const char *names[15], *comm = NULL;
	uint64_t vals[15];
	uint32_t pid = 0;
	unsigned n, bad = 0;

	mktrace(dir, "-s 3 -r 500", &s);
	t = ktr_open(dir);
	ok(t != NULL, "open a thread-stream trace");
	is_int(drain(t), 0, "no diagnostics");
	is_int(ktr_error_count(t), 0, "no errors");
	in = ktr_info(t);
	is_int(in->version, 1, "format version 1");
	is_int(in->clock_tsc, 1, "clock tsc");
	is_int(in->nstreams, 3, "3 streams");
	is_int(in->buf_size, 4096, "buf-size");
	is_int(in->buf_nr, 4, "buf-nr");
	is_str(in->host, "testhost", "host");
	is_str(in->comm, "mktrace test", "comm is the rest of the line");
	ok(strstr(ktr_stream(t, 2)->path, "/trace2") && ktr_stream(t, 2)->index == 2,
	   "stream 2 is DIR/trace2");
	check_merge(t, 3, s.kept, "thread");

	/* names, args, cpu, tid on a few known records */
	ktr_rewind(t);
	for (uint64_t g = 0; ktr_next(t, &r) && g < 12; g++) {
		static const char *const want[12] = {
			"parse:entry", "send:entry", "F2:E1", "parse:17", "reply",  "F2:E17",
			"parse:18",    "send:18",    "batch",  "request", "send:16", "F2:E16",
		};
		ktr_rec_name(t, &r, name, sizeof(name));
		if (strcmp(name, want[g]) || r.tid != 1000 + g % 3 || r.cpu != (int)(g % 3 % 2)) {
			diag("g=%llu name %s (want %s) tid %u cpu %d", (unsigned long long)g, name,
			     want[g], r.tid, r.cpu);
			bad++;
		}
		if (g == 9) {
			n = ktr_rec_args(t, &r, names, vals);
			is_int(n, 2, "request has 2 args");
			is_str(names[0], "len", "catalogue arg name 1");
			is_str(names[1], "seq", "catalogue arg name 2");
			is_int(vals[1], 9, "arg value");
			is_str(ktr_rec_category(t, &r), "net", "category");
		}
		if (g == 4)
			is_str(ktr_rec_category(t, &r), "io", "category of reply");
	}
	is_int(bad, 0, "names, tids and cpus of the first records");
	ok(ktr_thread(t, 1001, &pid, &comm) && pid == 999 && strcmp(comm, "worker1") == 0,
	   "thread 1001 is worker1 of pid 999");
	ok(!ktr_thread(t, 4242, NULL, NULL), "unknown thread");

	/* one stream alone */
	n = 0;
	bad = 0;
	ktr_rewind(t);
	while (ktr_stream_next(t, 1, &r)) {
		if (r.kind != KTR_RECORD || r.w[1] != 3ull * n + 1)
			bad++;
		n++;
	}
	is_int(n, 500, "stream 1 alone: 500 records");
	is_int(bad, 0, "stream 1 alone: in order");
	ktr_rewind(t);
	n = 0;
	while (ktr_next(t, &r))
		n++;
	is_int(n, s.kept, "rewind reads everything again");
	ktr_close(t);
}

static void test_cpu_and_log4(void)
{
	const char *dir = mk_path("cpu");
	struct mk_sum s;
	struct ktr_trace *t;
	struct ktr_rec r;
	unsigned bad = 0, i = 0, unknown = 0, log4 = 0;
	char name[64];
	const char *names[15];
	uint64_t vals[15];

	mktrace(dir, "-s 1 -r 600 --cpu-every 50", &s);
	t = ktr_open(dir);
	while (ktr_next(t, &r)) {
		int want = i < 50 ? 0 : (int)((i / 50) % 4);

		if (r.kind != KTR_RECORD || r.cpu != want || r.w[1] != i)
			bad++;
		i++;
	}
	is_int(i, 600, "600 records with CPU changes (INTERNAL records not returned)");
	is_int(bad, 0, "CPU of every record follows the INTERNAL CPU records");
	is_int(drain(t), 0, "no diagnostics");
	ktr_close(t);

	mktrace(dir, "-s 3 -r 30 --log4-every 3 --unknown-every 10", &s);
	t = ktr_open(dir);
	while (ktr_next(t, &r)) {
		ktr_rec_name(t, &r, name, sizeof(name));
		if (r.cls == 9) {
			unsigned n = ktr_rec_args(t, &r, names, vals);

			unknown++;
			if (strcmp(name, "class 9 id 7") || n != 1 || strcmp(names[0], "w0") ||
			    vals[0] != 0x1234)
				bad++;
		} else if (r.cls == KTRACE_CLASS_LOG4 && r.stream == 2 && (r.w[0] >> 32) == 8) {
			unsigned n = ktr_rec_args(t, &r, names, vals);

			log4++;
			is_str(name, "batch", "log4 catalogue name");
			ok(n == 4 && !strcmp(names[0], "x") && !strcmp(names[3], "w") && vals[0] == 2 &&
				   vals[1] == 8 && vals[2] == 2 && vals[3] == 0xdeadbeef,
			   "log4 arguments: four u32 by name");
		}
	}
	is_int(unknown, 9, "unknown class records skipped by length and returned");
	is_int(log4, 1, "the log4 record was found");
	is_int(bad, 0, "unknown records named 'class 9 id 7' with w0");
	ktr_close(t);
}

static void test_gaps(void)
{
	const char *dir = mk_path("gaps");
	struct mk_sum s;
	struct ktr_trace *t;
	struct ktr_rec r;
	unsigned long long over = 0, lost = 0, dropped = 0, recs = 0, first_i[2] = { ~0ull, ~0ull };
	int first_is_gap[2] = { -1, -1 };

	/* flight recorder: the oldest sub-buffers are overwritten */
	mktrace(dir, "-s 2 -r 1000 --flight", &s);
	t = ktr_open(dir);
	while (ktr_next(t, &r)) {
		if (first_is_gap[r.stream] < 0)
			first_is_gap[r.stream] = r.kind == KTR_GAP && r.gap == KTR_GAP_OVERWRITTEN;
		if (r.kind == KTR_GAP && r.gap == KTR_GAP_OVERWRITTEN)
			over += r.count;
		else if (r.kind == KTR_RECORD) {
			recs++;
			if (first_i[r.stream] == ~0ull)
				first_i[r.stream] = r.w[1] / 2;
		}
	}
	is_int(recs, s.kept, "flight: every kept record");
	is_int(over, 4, "flight: 2 sub-buffers overwritten per stream");
	ok(first_is_gap[0] == 1 && first_is_gap[1] == 1, "flight: the gap comes first in each stream");
	ok(first_i[0] == 336 && first_i[1] == 336, "flight: the newest records are kept (from i = 336)");
	is_int(ktr_error_count(t), 0, "flight: overwrite is not an error");
	ktr_close(t);

	/* discard: a full stream counts lost/dropped */
	mktrace(dir, "-s 2 -r 1000 --dropped 0:7", &s);
	t = ktr_open(dir);
	recs = 0;
	while (ktr_next(t, &r)) {
		if (r.kind == KTR_RECORD)
			recs++;
		else if (r.gap == KTR_GAP_LOST)
			lost += r.count;
		else if (r.gap == KTR_GAP_DROPPED)
			dropped += r.count;
	}
	is_int(recs, s.kept, "discard: every kept record");
	is_int(lost, s.lost, "discard: lost gaps sum to the sub-buffers' lost");
	is_int(dropped, 7, "discard: the control file's extra dropped count shows at the end");
	is_int(ktr_stream(t, 0)->dropped, 328 + 7, "stream 0's dropped counter from the control file");
	ktr_close(t);

	/* lost in the middle: the gap follows that sub-buffer's last record */
	mktrace(dir, "-s 1 -r 400 --lost 0:0:5", &s);
	t = ktr_open(dir);
	recs = 0;
	lost = 0;
	while (ktr_next(t, &r)) {
		if (r.kind == KTR_GAP) {
			ok(r.gap == KTR_GAP_LOST && r.count == 5 && recs == 168,
			   "lost: 5 records lost right after sub-buffer 0's 168 records");
			lost++;
		} else {
			recs++;
		}
	}
	is_int(lost, 1, "lost: exactly one gap (dropped == lost adds nothing)");
	ktr_close(t);
}

static void test_variants(void)
{
	const char *dir = mk_path("var");
	struct mk_sum s;
	struct ktr_trace *t;
	struct ktr_rec r;
	unsigned bad = 0, n = 0;
	const char *comm = NULL;

	mktrace(dir, "-s 1 -r 400 --kind shared --open", &s);
	t = ktr_open(dir);
	ok(ktr_stream(t, 0)->kind == KTRACE_STREAM_SHARED, "shared stream kind");
	while (ktr_next(t, &r)) {
		if (r.kind != KTR_RECORD || r.tid != 2000 + r.w[1] % 3 || r.pid != 999)
			bad++;
		n++;
	}
	is_int(n, 400, "shared: the open sub-buffer is read up to the control file's head");
	is_int(bad, 0, "shared: tids from the context words");
	ok(ktr_thread(t, 2001, NULL, &comm) && !strcmp(comm, "helper one"), "comm with a space");
	is_int(drain(t), 0, "shared: no diagnostics");
	ktr_close(t);

	mktrace(dir, "-s 2 -r 400 --layout packed", &s);
	t = ktr_open(dir);
	ok(ktr_info(t)->packed, "packed layout from the metadata");
	check_merge(t, 2, 800, "packed");
	is_int(drain(t), 0, "packed: no diagnostics");
	ktr_close(t);

	mktrace(dir, "-s 2 -r 400 --clock mono --kind cpu", &s);
	t = ktr_open(dir);
	ok(!ktr_info(t)->clock_tsc, "clock mono");
	n = 0;
	bad = 0;
	while (ktr_next(t, &r)) {
		if (r.ns != NS0 + 1000 * r.w[1] || r.cpu != (int)r.stream || r.tid != 0)
			bad++;
		n++;
	}
	is_int(n, 800, "per-CPU mono trace: all records");
	is_int(bad, 0, "per-CPU mono trace: ns = raw, cpu = stream");
	ktr_close(t);

	mktrace(dir, "-s 2 -r 1000 --flight --no-metadata --no-control", &s);
	t = ktr_open(dir);
	is_int(ktr_info(t)->buf_size, 4096, "no metadata/control: sub-buffer size guessed");
	check_merge(t, 2, s.kept, "no metadata/control (tsc from sub-buffer pairs)");
	ok(ktr_error_count(t) == 1, "no metadata: exactly one error (the missing file)");
	drain(t);
	ktr_close(t);
}

int main(void)
{
	test_thread();
	test_cpu_and_log4();
	test_gaps();
	test_variants();
	mk_cleanup();
	return done_testing();
}
