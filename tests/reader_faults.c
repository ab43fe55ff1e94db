/*
 * tests/reader_faults.c - the trace reader on damaged and unusual input
 * (issue 2's bad-input list): truncated stream, corrupt sub-buffer header,
 * corrupt record, newer format version, missing metadata, bad metadata
 * lines, missing stream file, bad control file, missing or empty
 * directory, a dead writer's unfinished record, random bytes; records
 * missing without a trace of it elsewhere (a sub-buffer's nrec against the
 * records found, an empty stream file).
 *
 * Each case must give a diagnostic naming the file and the offset (or
 * line), count as an error, and still return every readable record.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "mktrace.h"
#include "reader/reader.h"

static int quiet;

/* Records returned, gaps of kind @gk counted into *@gaps, diagnostics into @diags. */
static unsigned long long read_all(struct ktr_trace *t, int gk, unsigned long long *gaps,
				   char *diags, size_t len)
{
	struct ktr_rec r;
	unsigned long long n = 0;
	const char *m;
	size_t used = 0;

	if (gaps)
		*gaps = 0;
	diags[0] = 0;
	for (;;) {
		int more = ktr_next(t, &r);

		while ((m = ktr_diag_next(t))) {
			if (!quiet)
				diag("reader: %s", m);
			used += (size_t)snprintf(diags + used, used < len ? len - used : 0, "%s\n", m);
			if (used >= len)
				used = len - 1;
		}
		if (!more)
			break;
		if (r.kind == KTR_RECORD)
			n++;
		else if (gaps && (int)r.gap == gk)
			*gaps += 1;
	}
	return n;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		bail_out("cannot write %s", path);
}

int main(void)
{
	const char *dir = mk_path("t");
	char diags[8192], path[600];
	struct mk_sum s;
	struct ktr_trace *t;
	unsigned long long n, gaps;

	/* truncated stream: sub-buffer 1 cut at byte 5000 (35 of its records left) */
	mktrace(dir, "-s 1 -r 400 --truncate 0:5000", &s);
	t = ktr_open(dir);
	n = read_all(t, KTR_GAP_CORRUPT, &gaps, diags, sizeof(diags));
	is_int(n, 168 + 35, "truncated: every record before the cut");
	ok(strstr(diags, "trace0: offset 5000: truncated") != NULL, "truncated: file and offset named");
	is_int(gaps, 1, "truncated: one corrupt gap in line");
	ok(ktr_error_count(t) > 0, "truncated: an error");
	ktr_close(t);

	/* corrupt sub-buffer header */
	mktrace(dir, "-s 1 -r 400 --corrupt-header 0:1", &s);
	t = ktr_open(dir);
	n = read_all(t, KTR_GAP_CORRUPT, &gaps, diags, sizeof(diags));
	is_int(n, 400 - 168, "corrupt header: the other sub-buffers are read");
	ok(strstr(diags, "trace0: offset 4096: bad sub-buffer magic 0xdeadbeef") != NULL,
	   "corrupt header: file, offset and magic named");
	is_int(gaps, 1, "corrupt header: one corrupt gap");
	ktr_rewind(t);
	n = read_all(t, KTR_GAP_OVERWRITTEN, &gaps, diags, sizeof(diags));
	is_int(gaps, 0, "corrupt header: not also counted as an overwritten sub-buffer");
	ok(ktr_error_count(t) > 0, "corrupt header: an error");
	ktr_close(t);

	/* corrupt record: the rest of that sub-buffer is skipped */
	mktrace(dir, "-s 1 -r 400 --corrupt-record 0:1", &s);
	t = ktr_open(dir);
	n = read_all(t, KTR_GAP_CORRUPT, &gaps, diags, sizeof(diags));
	is_int(n, 168 + 1 + 64, "corrupt record: records before it and in later sub-buffers");
	ok(strstr(diags, "trace0: offset 4184: invalid record header") != NULL,
	   "corrupt record: file and offset named");
	ktr_close(t);

	/*
	 * A shared stream whose writer died between reserve and write (its
	 * header word left invalid): the reader finds the next record, counts
	 * the torn one as lost, reads everything else, and calls it a warning
	 * (a writer's death loses a record, the file is not damaged).
	 */
	mktrace(dir, "-s 1 -r 400 --kind shared --corrupt-record 0:1", &s);
	t = ktr_open(dir);
	n = read_all(t, KTR_GAP_LOST, &gaps, diags, sizeof(diags));
	ok(strstr(diags, "trace0: offset 4192: a record torn by the death of its writer: 32 bytes skipped to the next record") != NULL,
	   "torn shared record: reported with its offset and the bytes skipped");
	is_int(n, 400 - 1, "torn shared record: every other record is read, after it too");
	is_int(gaps, 1, "torn shared record: one record lost");
	is_int(ktr_error_count(t), 0, "torn shared record: a warning, not an error");
	ktr_close(t);

	/* newer format version */
	mktrace(dir, "-s 2 -r 100 --version 2", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	is_int(n, 200, "newer version: everything understood is read");
	ok(strstr(diags, "metadata:1: format version 2 is newer than this reader's 1") != NULL,
	   "newer version: metadata file, line and both versions named");
	ok(ktr_error_count(t) > 0, "newer version: an error");
	ktr_close(t);

	/* missing metadata */
	mktrace(dir, "-s 2 -r 100 --no-metadata", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	is_int(n, 200, "no metadata: every record");
	ok(strstr(diags, "/metadata: No such file or directory") != NULL, "no metadata: reported");
	is_int(ktr_error_count(t), 1, "no metadata: one error");
	ktr_close(t);

	/* bad metadata lines: reported by line, the rest is used */
	mktrace(dir, "-s 1 -r 10 --no-names --meta-line 'calib 12 x' --meta-line 'buf-size 1000' --meta-line 'event 70000 log2 x y -' --meta-line 'future-key whatever'",
		&s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	is_int(n, 10, "bad metadata lines: records still read");
	ok(strstr(diags, "metadata:22: bad calib line") != NULL, "bad calib line named by line");
	ok(strstr(diags, "metadata:23: buf-size must be a power of two") != NULL, "bad buf-size named");
	ok(strstr(diags, "metadata:24: bad event id") != NULL, "bad event id named");
	ok(strstr(diags, "future-key") == NULL, "unknown keys are ignored");
	is_int(ktr_error_count(t), 3, "three errors");
	ktr_close(t);

	mktrace(dir, "-s 1 -r 10 --meta-first 'hello world'", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(strstr(diags, "metadata:1: not a ktrace metadata file") != NULL, "bad first line");
	is_int(n, 10, "bad first line: records still read");
	ktr_close(t);

	/* missing stream file */
	mktrace(dir, "-s 2 -r 100", &s);
	snprintf(path, sizeof(path), "%s/trace1", dir);
	unlink(path);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	is_int(n, 100, "missing stream file: the other stream is read");
	ok(strstr(diags, "trace1: No such file or directory") != NULL, "missing stream file named");
	ktr_close(t);

	/* bad control file: ignored with an error */
	mktrace(dir, "-s 2 -r 100", &s);
	snprintf(path, sizeof(path), "%s/control", dir);
	write_text(path, "this is not a control file at all, but long enough to have a magic........"
			 "........................................................................");
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	is_int(n, 200, "bad control file: records still read");
	ok(strstr(diags, "control: offset 0: bad magic") != NULL, "bad control file: offset named");
	ktr_close(t);

	/*
	 * Records missing with nothing else saying so (issue 12, item 6).  A
	 * 4096-byte sub-buffer holds (4096 - 64) / 24 = 168 LOG2 records of a
	 * thread stream: slot 1 of a 400-record stream is full.
	 */
	mktrace(dir, "-s 1 -r 400 --used 0:1:0", &s);
	t = ktr_open(dir);
	n = read_all(t, KTR_GAP_CORRUPT, &gaps, diags, sizeof(diags));
	ok(strstr(diags, "trace0: offset 4096: sub-buffer seq 1: nrec says 168 records, its 0 bytes of records hold 0\n") != NULL,
	   "used 0, nrec 168: file, offset and both counts named");
	is_int(n, 400 - 168, "... the other sub-buffers are read");
	is_int(gaps, 1, "... one corrupt gap where the records are missing");
	is_int(ktr_error_count(t), 1, "... an error");
	ktr_close(t);
	mktrace(dir, "-s 1 -r 400 --nrec 0:0:100", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(strstr(diags, "trace0: offset 0: sub-buffer seq 0: nrec says 100 records, its 4032 bytes of records hold 168\n") != NULL,
	   "nrec below the records found (closed sub-buffer): reported");
	is_int(n, 400, "... every record still read");
	ktr_close(t);
	/* the open sub-buffer: 400 - 2 * 168 = 64 records; nrec may count one being written */
	mktrace(dir, "-s 1 -r 400 --open --nrec 0:2:65", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(n == 400 && ktr_error_count(t) == 0, "open sub-buffer, nrec one above (a record being written): no error");
	ktr_close(t);
	mktrace(dir, "-s 1 -r 400 --open --nrec 0:2:70", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(strstr(diags, "trace0: offset 8192: sub-buffer seq 2: nrec says 70 records, its 1536 bytes of records hold 64\n") &&
		   ktr_error_count(t) == 1,
	   "open sub-buffer, nrec six above: reported");
	ktr_close(t);
	mktrace(dir, "-s 1 -r 400 --kind shared --nrec 0:0:0 --nrec 0:1:0", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(n == 400 && ktr_error_count(t) == 0, "a shared stream's nrec 0 (not counted there): no error");
	ktr_close(t);
	mktrace(dir, "-s 2 -r 100 --truncate 1:0", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(strstr(diags, "trace1: offset 0: empty stream file (4 sub-buffers of 4096 bytes expected)\n") &&
		   ktr_error_count(t) == 1 && n == 100,
	   "an empty stream file: named, an error, the other stream read");
	ktr_close(t);
	mktrace(dir, "-s 2 -r 100 --layout packed --truncate 1:0", &s);
	t = ktr_open(dir);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(n == 100 && ktr_error_count(t) == 0, "an empty packed stream (a CPU without events): no error");
	ktr_close(t);

	/* no trace at all */
	t = ktr_open("/nonexistent/ktrace");
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(n == 0 && strstr(diags, "/nonexistent/ktrace: No such file or directory"),
	   "missing directory: reported");
	ok(ktr_error_count(t) > 0, "missing directory: an error");
	ktr_close(t);
	snprintf(path, sizeof(path), "%s", mk_path("empty"));
	if (mkdir(path, 0700) < 0)
		bail_out("mkdir");
	t = ktr_open(path);
	n = read_all(t, 0, NULL, diags, sizeof(diags));
	ok(n == 0 && strstr(diags, "no stream files"), "empty directory: no stream files");
	ktr_close(t);

	/* random bytes: no crash, no hang (the fuzz target does this at scale) */
	{
		static uint8_t buf[3][20000];
		uint64_t x = 88172645463325252ull;
		unsigned long long total = 0;

		quiet = 1;
		for (int round = 0; round < 200; round++) {
			struct ktr_memfile f[3] = {
				{ "metadata", buf[0], 200 + (size_t)round * 10 },
				{ "trace0", buf[1], sizeof(buf[1]) - (size_t)round * 37 },
				{ "control", buf[2], (size_t)round * 100 },
			};

			for (int k = 0; k < 3; k++)
				for (size_t i = 0; i < sizeof(buf[k]); i++) {
					x ^= x << 13;
					x ^= x >> 7;
					x ^= x << 17;
					buf[k][i] = (uint8_t)x;
				}
			/* a plausible metadata start and a few valid-looking headers */
			memcpy(buf[0], "ktrace-format 1\nbuf-size 4096\nbuf-nr 4\nclock tsc\n", 49);
			for (int k = 0; k < 4; k++)
				memcpy(buf[1] + 4096 * k, "KTSB@\0", 6);
			t = ktr_open_mem("random", f, 3);
			total += read_all(t, 0, NULL, diags, sizeof(diags));
			ktr_close(t);
		}
		ok(1, "200 random traces read without a crash (%llu records found)", total);
	}
	mk_cleanup();
	return done_testing();
}
