/*
 * kmod/tests/kthelper.c - the static helper of the VM test suite
 * (kmod/tests/suite.sh): what busybox's shell cannot do precisely.
 *
 *   kthelper read [-b SIZE] [-n N] SRC DST   read_relay() (kclient/relay.c)
 *   kthelper check [-t] DIR                  walk a packed trace directory,
 *                                            print "key value" statistics
 *   kthelper write FILE STRING               one write(2) of STRING (\n and
 *                                            \0 escapes); prints ok or the
 *                                            errno name (EINVAL, ...)
 *   kthelper open FILE r|w                   open(2); prints ok or errno name
 *   kthelper asuser UID CMD ARGS...          drop to UID/GID UID (no groups)
 *                                            and run one of the above
 *   kthelper lseek FILE N                    lseek(fd, i, SEEK_SET) for i =
 *                                            0..N-1 (LKST hooks: a known
 *                                            number of calls with known
 *                                            arguments); prints "pid P" and
 *                                            "fd F"
 *   kthelper now                             CLOCK_MONOTONIC in ns, the
 *                                            kernel records' clock (a
 *                                            marker the crash test keeps
 *                                            in the region's note)
 *
 * `check` validates every sub-buffer (magic, sizes, records parse to
 * `used`) and prints: streams, subbufs, records, lost, errors, tsback
 * (timestamps going backwards in a stream; beyond 10 us for global
 * streams, whose writers read the clock on different CPUs), and with -t
 * the statistics of ktrace_test.ko's records (tests/ktrace_test_mod.c):
 * testrecs, writers, order (a writer's attempt numbers not increasing:
 * a record doubled or reordered), wrongcpu (written on another CPU than
 * its stream's, or than its context word says), lastseq-sum (sum over
 * writers of the highest attempt number + 1).
 *
 * Linked statically (the guest has no libc), from this file,
 * kclient/relay.c, kclient/report.c (read_relay()'s error messages, as
 * "ktrace read: ..." on stderr) and lib/safefile.c only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "kclient/kclient.h"

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EUNKNOWN";
}

/* ------------------------------------------------------------------ */
/* write / open                                                        */
/* ------------------------------------------------------------------ */

static int cmd_write(const char *file, const char *arg)
{
	char buf[4096];
	size_t n = 0;
	int fd;

	for (const char *p = arg; *p && n < sizeof(buf); p++) {
		if (p[0] == '\\' && p[1] == 'n') {
			buf[n++] = '\n';
			p++;
		} else if (p[0] == '\\' && p[1] == '0') {
			buf[n++] = '\0';
			p++;
		} else {
			buf[n++] = *p;
		}
	}
	fd = open(file, O_WRONLY);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 0;
	}
	if (write(fd, buf, n) < 0)
		printf("%s\n", errname(errno));
	else
		printf("ok\n");
	close(fd);
	return 0;
}

static int cmd_open(const char *file, const char *mode)
{
	int fd = open(file, mode[0] == 'w' ? O_WRONLY : O_RDONLY);

	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 0;
	}
	printf("ok\n");
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

#define MAX_WRITERS (4 * 1024)

struct writer {
	int seen;
	uint64_t last, count;
};

struct stats {
	uint64_t streams, subbufs, records, lost, errors, tsback;
	uint64_t testrecs, order, wrongcpu, lastseq_sum;
	uint64_t maxback;
	struct writer w[MAX_WRITERS];
};

static void err(struct stats *st, const char *file, uint64_t off, const char *what)
{
	if (st->errors++ < 20)
		fprintf(stderr, "check: %s: offset %llu: %s\n", file, (unsigned long long)off, what);
}

static void check_stream(struct stats *st, const char *path, unsigned idx, int global, int test)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	long size;
	uint64_t off = 0, prev_ts = 0;
	int have_prev = 0;

	if (!f) {
		err(st, path, 0, strerror(errno));
		return;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(size ? (size_t)size : 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
		err(st, path, 0, "cannot read");
		fclose(f);
		free(data);
		return;
	}
	fclose(f);
	st->streams++;
	while (off + KTRACE_SUBBUF_HDR_SIZE <= (uint64_t)size) {
		struct ktrace_subbuf h;
		uint64_t end, p;
		int ctx;

		memcpy(&h, data + off, sizeof(h));
		if (h.magic != KTRACE_SUBBUF_MAGIC || h.hdr_size < KTRACE_SUBBUF_HDR_SIZE) {
			err(st, path, off, "bad sub-buffer header");
			break;
		}
		if (!(h.flags & KTRACE_SBF_CLOSED))
			err(st, path, off, "sub-buffer not CLOSED");
		ctx = (h.flags & KTRACE_SBF_CTX) ? 1 : 0;
		if (ctx != global)
			err(st, path, off, "CTX flag does not match the channel scope");
		end = off + h.hdr_size + h.used;
		if (end > (uint64_t)size) {
			err(st, path, off, "sub-buffer truncated");
			break;
		}
		st->subbufs++;
		st->lost += h.lost;
		uint64_t nrec = 0;

		for (p = off + h.hdr_size; p < end;) {
			uint64_t hw, cw = 0, pl[15];
			unsigned words, cls;
			int64_t d;
			uint64_t ts;

			memcpy(&hw, data + p, 8);
			cls = KTRACE_REC_CLASS(hw);
			words = KTRACE_REC_WORDS(hw);
			if (cls == KTRACE_CLASS_INVALID || p + 8 * (1 + ctx + words) > end) {
				err(st, path, p, "bad record");
				break;
			}
			if (ctx)
				memcpy(&cw, data + p + 8, 8);
			memcpy(pl, data + p + 8 * (1 + ctx), 8 * words);
			p += 8 * (1 + ctx + words);
			nrec++;
			st->records++;

			/* Full timestamp: nearest to first_ts (signed 40-bit difference). */
			d = (int64_t)((KTRACE_REC_TS(hw) - h.first_ts) & KTRACE_TS_MASK);
			if (d & ((int64_t)1 << (KTRACE_TS_BITS - 1)))
				d -= (int64_t)1 << KTRACE_TS_BITS;
			ts = h.first_ts + (uint64_t)d;
			if (have_prev && ts < prev_ts) {
				uint64_t back = prev_ts - ts;

				if (back > st->maxback)
					st->maxback = back;
				if (!global || back > 10000)
					st->tsback++;
			}
			prev_ts = ts;
			have_prev = 1;

			if (test && cls == KTRACE_CLASS_LOG2 && KTRACE_EVENT_FUNC(KTRACE_REC_ID(hw)) == 1) {
				uint64_t wid = pl[0] >> 32, seq = pl[0] & 0xffffffffu, cpu = pl[1];
				struct writer *w;

				st->testrecs++;
				if (global ? KTRACE_CTX_CPU(cw) != cpu : cpu != idx)
					st->wrongcpu++;
				if (wid >= MAX_WRITERS)
					continue;
				w = &st->w[wid];
				if (w->seen && seq <= w->last)
					st->order++;
				w->seen = 1;
				w->last = seq;
				w->count++;
			}
		}
		if (nrec != h.nrec)
			err(st, path, off, "nrec does not match the records");
		off = end + (8 - end % 8) % 8;
	}
	if (off != (uint64_t)size)
		err(st, path, off, "trailing bytes");
	free(data);
}

static int cmd_check(const char *dir, int test)
{
	static struct stats st;
	char path[4096], line[1024];
	int global = 0;
	FILE *m;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	m = fopen(path, "r");
	if (!m) {
		fprintf(stderr, "check: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), m))
		if (!strcmp(line, "scope global\n"))
			global = 1;
	rewind(m);
	while (fgets(line, sizeof(line), m)) {
		unsigned idx;
		char kind[32], file[256];

		if (sscanf(line, "stream %u %31s %255s", &idx, kind, file) == 3) {
			snprintf(path, sizeof(path), "%s/%s", dir, file);
			check_stream(&st, path, idx, global, test);
		}
	}
	fclose(m);
	printf("streams %llu\nsubbufs %llu\nrecords %llu\nlost %llu\nerrors %llu\ntsback %llu\nmaxback %llu\n",
	       (unsigned long long)st.streams, (unsigned long long)st.subbufs,
	       (unsigned long long)st.records, (unsigned long long)st.lost,
	       (unsigned long long)st.errors, (unsigned long long)st.tsback,
	       (unsigned long long)st.maxback);
	if (test) {
		uint64_t writers = 0;

		for (int i = 0; i < MAX_WRITERS; i++)
			if (st.w[i].seen) {
				writers++;
				st.lastseq_sum += st.w[i].last + 1;
			}
		printf("testrecs %llu\nwriters %llu\norder %llu\nwrongcpu %llu\nlastseq-sum %llu\n",
		       (unsigned long long)st.testrecs, (unsigned long long)writers,
		       (unsigned long long)st.order, (unsigned long long)st.wrongcpu,
		       (unsigned long long)st.lastseq_sum);
	}
	return 0;
}

/* ------------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr, "usage: kthelper read [-b SIZE] [-n N] SRC DST | check [-t] DIR |\n"
			"       write FILE STRING | open FILE r|w | lseek FILE N | asuser UID CMD ARGS...\n");
	return 2;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "read")) {
		unsigned b = 0, n = 0;
		int i = 2;

		for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
			if (!strcmp(argv[i], "-b"))
				b = (unsigned)strtoul(argv[i + 1], NULL, 0);
			else if (!strcmp(argv[i], "-n"))
				n = (unsigned)strtoul(argv[i + 1], NULL, 0);
			else
				return usage();
		}
		if (argc - i != 2)
			return usage();
		return read_relay(argv[i], argv[i + 1], b, n);
	}
	if (!strcmp(argv[1], "check") && argc >= 3) {
		int test = !strcmp(argv[2], "-t");

		if (argc != 3 + test)
			return usage();
		return cmd_check(argv[2 + test], test);
	}
	if (!strcmp(argv[1], "write") && argc == 4)
		return cmd_write(argv[2], argv[3]);
	if (!strcmp(argv[1], "open") && argc == 4)
		return cmd_open(argv[2], argv[3]);
	if (!strcmp(argv[1], "now") && argc == 2) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%llu\n", (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
		return 0;
	}
	if (!strcmp(argv[1], "lseek") && argc == 4) {
		long n = strtol(argv[3], NULL, 10);
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0) {
			printf("%s\n", errname(errno));
			return 1;
		}
		printf("pid %d\nfd %d\n", (int)getpid(), fd);
		for (long i = 0; i < n; i++)
			if (lseek(fd, i, SEEK_SET) != i)
				return 1;
		close(fd);
		return 0;
	}
	if (!strcmp(argv[1], "asuser") && argc >= 4) {
		uid_t uid = (uid_t)strtoul(argv[2], NULL, 10);

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
			perror("kthelper asuser");
			return 1;
		}
		return dispatch(argc - 2, argv + 2);
	}
	return usage();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return dispatch(argc, argv);
}
