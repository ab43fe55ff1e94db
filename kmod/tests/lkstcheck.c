/*
 * kmod/tests/lkstcheck.c - the LKST checker of the VM test suite
 * (kmod/tests/suite_lkst.sh): walks a trace directory copied from
 * ktrace/lkst by `ktrace read` (layout packed, per-CPU streams) and prints
 * "key value" lines about its KEVENT records.
 *
 *   lkstcheck [-p PID] DIR
 *
 *   streams, subbufs, records, lost, errors   as `kthelper check` counts
 *                  them (errors: bad headers, records that do not parse
 *                  to `used`, nrec mismatches, trailing bytes)
 *   kevents        KEVENT records
 *   badlen         KEVENT records whose length is not 1 + the catalogue's
 *                  nargs for their id, or whose id is not in the catalogue
 *   tsback         timestamps going back within a stream
 *   chain-breaks   context switches whose prev_pid is not the next_pid of
 *                  the previous context switch of the same CPU (a lost or
 *                  doubled event); the chain restarts after a sub-buffer
 *                  that lost records
 *   self-mismatch  context switches whose word 0 (the current task) is
 *                  not prev_pid
 *   pid-switches, other-switches   with -p: context switches that involve
 *                  PID (as prev or next) and those that do not
 *   count NAME N   KEVENT records per catalogue event (every event, 0
 *                  included)
 *   hook NAME R P S1,S2,..   per user-placed hook of the metadata (`event
 *                  ID kevent NAME hook ARGS`, ids KTRACE_LKST_HOOK_FIRST..
 *                  LAST): R records, P of them in task PID (-p), S1.. the
 *                  sums of each argument word over those P records
 *
 * Exit status 0 (the keys say what is wrong), 2 for a usage error.
 * Linked statically for the guest; uses include/ktrace/format.h and
 * include/ktrace/lkst.h only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktrace/format.h"
#include "ktrace/lkst.h"

struct ev_info {
	const char *name;
	int nargs; /* -1: not in the catalogue */
};

static struct ev_info evs[KTRACE_LKST_MAX_ID];

struct stats {
	uint64_t streams, subbufs, records, lost, errors, kevents, badlen, tsback;
	uint64_t chain_breaks, self_mismatch, pid_sw, other_sw;
	uint64_t count[KTRACE_LKST_MAX_ID];
	uint64_t hook_pid[KTRACE_LKST_MAX_ID], hook_sum[KTRACE_LKST_MAX_ID][KTRACE_LKST_HOOK_MAX_ARGS];
};
static char hook_name[KTRACE_LKST_MAX_ID][160];

static struct stats st;
static long want_pid = -1;

static void err(const char *file, uint64_t off, const char *what)
{
	if (st.errors++ < 20)
		fprintf(stderr, "lkstcheck: %s: offset %llu: %s\n", file, (unsigned long long)off,
			what);
}

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(n > 0 ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return data;
}

static void check_stream(const char *path)
{
	size_t size = 0;
	unsigned char *data = slurp(path, &size);
	uint64_t off = 0, prev_ts = 0, last_next = 0;
	int have_prev = 0, have_chain = 0;

	if (!data) {
		err(path, 0, strerror(errno));
		return;
	}
	st.streams++;
	while (off + KTRACE_SUBBUF_HDR_SIZE <= size) {
		struct ktrace_subbuf h;
		uint64_t end, p, nrec = 0;
		int ctx;

		memcpy(&h, data + off, sizeof(h));
		if (h.magic != KTRACE_SUBBUF_MAGIC || h.hdr_size < KTRACE_SUBBUF_HDR_SIZE) {
			err(path, off, "bad sub-buffer header");
			break;
		}
		ctx = (h.flags & KTRACE_SBF_CTX) ? 1 : 0;
		end = off + h.hdr_size + h.used;
		if (end > size) {
			err(path, off, "sub-buffer truncated");
			break;
		}
		st.subbufs++;
		for (p = off + h.hdr_size; p < end;) {
			uint64_t hw, w[16];
			unsigned words, cls, id;
			int64_t d;
			uint64_t ts;

			memcpy(&hw, data + p, 8);
			cls = KTRACE_REC_CLASS(hw);
			words = KTRACE_REC_WORDS(hw);
			id = KTRACE_REC_ID(hw);
			if (cls == KTRACE_CLASS_INVALID || p + 8 * (1 + ctx + words) > end) {
				err(path, p, "bad record");
				break;
			}
			memcpy(w, data + p + 8 * (1 + ctx), 8 * words);
			p += 8 * (1 + ctx + words);
			nrec++;
			st.records++;
			d = (int64_t)((KTRACE_REC_TS(hw) - h.first_ts) & KTRACE_TS_MASK);
			if (d & ((int64_t)1 << (KTRACE_TS_BITS - 1)))
				d -= (int64_t)1 << KTRACE_TS_BITS;
			ts = h.first_ts + (uint64_t)d;
			if (have_prev && ts < prev_ts)
				st.tsback++;
			prev_ts = ts;
			have_prev = 1;
			if (cls != KTRACE_CLASS_KEVENT)
				continue;
			st.kevents++;
			if (id >= KTRACE_LKST_MAX_ID || evs[id].nargs < 0 ||
			    words != 1u + (unsigned)evs[id].nargs) {
				st.badlen++;
				continue;
			}
			st.count[id]++;
			if (KTRACE_LKST_IS_HOOK(id) && want_pid >= 0 && (uint32_t)w[0] == (uint32_t)want_pid) {
				st.hook_pid[id]++;
				for (unsigned a = 0; a < words - 1 && a < KTRACE_LKST_HOOK_MAX_ARGS; a++)
					st.hook_sum[id][a] += w[1 + a];
			}
			if (id != KTRACE_LKST_PROCESS_CONTEXTSWITCH)
				continue;
			/* w[0] current, w[1] prev_pid, w[2] next_pid, w[3] prev_state */
			if ((uint32_t)w[0] != (uint32_t)w[1])
				st.self_mismatch++;
			if (have_chain && w[1] != last_next)
				st.chain_breaks++;
			last_next = w[2];
			have_chain = 1;
			if (want_pid >= 0) {
				if ((long)w[1] == want_pid || (long)w[2] == want_pid)
					st.pid_sw++;
				else
					st.other_sw++;
			}
		}
		if (nrec != h.nrec)
			err(path, off, "nrec does not match the records");
		st.lost += h.lost;
		if (h.lost)
			have_chain = 0; /* the gap explains a break */
		off = end + (8 - end % 8) % 8;
	}
	if (off != size)
		err(path, off, "trailing bytes");
	free(data);
}

int main(int argc, char **argv)
{
	char path[4096], line[1024];
	FILE *m;
	int opt;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt == 'p') {
			want_pid = strtol(optarg, NULL, 10);
		} else {
			fprintf(stderr, "usage: lkstcheck [-p PID] DIR\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: lkstcheck [-p PID] DIR\n");
		return 2;
	}
	for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++)
		evs[i].nargs = -1;
#define EV_(id, mn, cat, sys, tp, n, args, prim) evs[id].name = #mn, evs[id].nargs = n;
	KTRACE_LKST_EVENTS(EV_)
#undef EV_

	snprintf(path, sizeof(path), "%s/metadata", argv[optind]);
	m = fopen(path, "r");
	if (!m) {
		/* still print every key: `lkstcheck /nonexistent` lists the catalogue */
		fprintf(stderr, "lkstcheck: %s: %s\n", path, strerror(errno));
		st.errors++;
	}
	/* first the hooks' event lines: they give their records' lengths */
	while (m && fgets(line, sizeof(line), m)) {
		unsigned idx;
		char name[160], args[64];

		if (sscanf(line, "event %u kevent %159s hook %63s", &idx, name, args) == 3 &&
		    KTRACE_LKST_IS_HOOK(idx)) {
			snprintf(hook_name[idx], sizeof(hook_name[idx]), "%s", name);
			evs[idx].name = hook_name[idx];
			evs[idx].nargs = strcmp(args, "-") ? 1 : 0;
			for (const char *p = args; *p; p++)
				evs[idx].nargs += *p == ',';
		}
	}
	if (m)
		rewind(m);
	while (m && fgets(line, sizeof(line), m)) {
		unsigned idx;
		char kind[32], file[256];

		if (sscanf(line, "stream %u %31s %255s", &idx, kind, file) == 3) {
			snprintf(path, sizeof(path), "%s/%s", argv[optind], file);
			check_stream(path);
		}
	}
	if (m)
		fclose(m);
	printf("streams %llu\nsubbufs %llu\nrecords %llu\nlost %llu\nerrors %llu\n",
	       (unsigned long long)st.streams, (unsigned long long)st.subbufs,
	       (unsigned long long)st.records, (unsigned long long)st.lost,
	       (unsigned long long)st.errors);
	printf("kevents %llu\nbadlen %llu\ntsback %llu\nchain-breaks %llu\nself-mismatch %llu\n",
	       (unsigned long long)st.kevents, (unsigned long long)st.badlen,
	       (unsigned long long)st.tsback, (unsigned long long)st.chain_breaks,
	       (unsigned long long)st.self_mismatch);
	if (want_pid >= 0)
		printf("pid-switches %llu\nother-switches %llu\n", (unsigned long long)st.pid_sw,
		       (unsigned long long)st.other_sw);
	for (unsigned i = 0; i < KTRACE_LKST_MAX_ID; i++)
		if (evs[i].nargs >= 0 && !KTRACE_LKST_IS_HOOK(i))
			printf("count %s %llu\n", evs[i].name, (unsigned long long)st.count[i]);
	for (unsigned i = KTRACE_LKST_HOOK_FIRST; i <= KTRACE_LKST_HOOK_LAST; i++) {
		if (evs[i].nargs < 0)
			continue;
		printf("hook %s %llu %llu ", evs[i].name, (unsigned long long)st.count[i],
		       (unsigned long long)st.hook_pid[i]);
		for (int a = 0; a < evs[i].nargs; a++)
			printf("%s%llu", a ? "," : "", (unsigned long long)st.hook_sum[i][a]);
		printf("%s\n", evs[i].nargs ? "" : "-");
	}
	return 0;
}
