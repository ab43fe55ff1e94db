/*
 * tests/channel_slots.c - thread stream slots: a thread that exits gives
 * its slot back and the next thread continues that stream in a new
 * sub-buffer carrying its own tid; a forked child claims a slot of its
 * own instead of writing into its parent's; threads beyond the slots use
 * the shared stream; the threads file names every writer.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "../lib/runtime.h"
#include "tap.h"
#include "walk.h"

struct seen {
	uint64_t n[4];   /* records per tag */
	uint32_t tid[4]; /* writer tid per tag (sub-buffer tid or ctx tid) */
	unsigned stream[4];
	uint64_t bad;
};

static const char *g_dir;

static void on_rec(const struct walk_rec *r, void *arg)
{
	struct seen *s = arg;
	uint64_t tag = r->payload[0];
	char path[4200];
	const struct ktrace_subbuf *sb;
	FILE *f;

	if (tag >= 4) {
		s->bad++;
		return;
	}
	s->n[tag]++;
	s->stream[tag] = r->stream;
	if (r->ctx) {
		s->tid[tag] = KTRACE_CTX_TID(r->ctx);
		return;
	}
	/* Thread stream: the tid is in the sub-buffer header. */
	snprintf(path, sizeof(path), "%s/trace%u", g_dir, r->stream);
	f = fopen(path, "r");
	if (!f)
		return;
	{
		static struct ktrace_subbuf hdr;

		fseek(f, (long)((r->seq % 4) * 4096), SEEK_SET);
		if (fread(&hdr, sizeof(hdr), 1, f) == 1) {
			sb = &hdr;
			s->tid[tag] = sb->tid;
		}
	}
	fclose(f);
}

static uint32_t thread_tid[4];

/* Tag 2, @arg records: fills the shared stream past its pre-faulted part. */
static void *many(void *arg)
{
	for (uint64_t i = 0; i < (uint64_t)(uintptr_t)arg; i++)
		ktrace_log2(1, KT_EVENT_USER, 2, i);
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t tag = (uint64_t)(uintptr_t)arg;

	thread_tid[tag] = kt_gettid();
	for (int i = 0; i < 10; i++)
		ktrace_log2(1, KT_EVENT_USER, tag, (uint64_t)i);
	return NULL;
}

int main(void)
{
	const char *root = walk_tmpdir("slots");
	struct ktrace_options o = { .root = root, .name = "s", .buf_size = 4096, .buf_nr = 4,
				    .nthreads = 1, .start = 1 };
	struct ktrace_channel *ch = ktrace_setup_opts(&o);
	struct seen s = { 0 };
	char dir[4200], threads[4300] = "";
	pthread_t th;
	pid_t pid, child_pid;
	int status;
	FILE *f;

	if (!ch)
		bail_out("setup: %s", ktrace_error());
	snprintf(dir, sizeof(dir), "%s/s", root);
	g_dir = dir;

	/* Tag 0 and tag 1: two threads one after the other share slot 0. */
	pthread_create(&th, NULL, writer, (void *)0);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, writer, (void *)1);
	pthread_join(th, NULL);

	/* Tag 2: a forked child (the main thread holds no slot yet; the child
	 * takes the free slot 0 and must not inherit anything). */
	pid = fork();
	if (pid == 0) {
		writer((void *)2);
		_exit(0);
	}
	child_pid = pid;
	waitpid(pid, &status, 0);

	/* Tag 3: the main thread; the child gave slot 0 back at exit. */
	writer((void *)3);
	ktrace_stop(ch);
	walk_trace(dir, on_rec, &s);

	ok(s.n[0] == 10 && s.n[1] == 10 && s.n[2] == 10 && s.n[3] == 10 && !s.bad,
	   "all 40 records read back (%llu %llu %llu %llu)", (unsigned long long)s.n[0],
	   (unsigned long long)s.n[1], (unsigned long long)s.n[2], (unsigned long long)s.n[3]);
	ok(s.stream[0] == 0 && s.stream[1] == 0, "the second thread reused the first's slot");
	ok(s.tid[0] == thread_tid[0] && s.tid[1] == thread_tid[1] && s.tid[0] != s.tid[1],
	   "each sub-buffer names its own writer (%u, %u)", s.tid[0], s.tid[1]);
	is_int(s.tid[2], child_pid, "the forked child wrote under its own tid");
	is_int(s.tid[3], getpid(), "the main thread wrote under its tid");

	/* More threads than slots: while the main thread holds slot 0, another
	 * thread has to use the shared stream. */
	ktrace_start(ch);
	ktrace_log2(1, KT_EVENT_USER, 3, 99);
	memset(&s, 0, sizeof(s));
	pthread_create(&th, NULL, writer, (void *)1);
	pthread_join(th, NULL);
	ktrace_stop(ch);
	walk_trace(dir, on_rec, &s);
	ok(s.stream[1] == 1 && s.tid[1] == thread_tid[1],
	   "a thread finding no free slot writes to the shared stream, tid in the context word");

	/* The shared stream beside thread streams is pre-faulted for two
	 * sub-buffers only; the rest faults in when written and keeps its
	 * records all the same (300 x 32 bytes spread over 3 of its 4). */
	ktrace_start(ch);
	ktrace_log2(1, KT_EVENT_USER, 3, 100);
	memset(&s, 0, sizeof(s));
	pthread_create(&th, NULL, many, (void *)(uintptr_t)300);
	pthread_join(th, NULL);
	ktrace_stop(ch);
	walk_trace(dir, on_rec, &s);
	ok(s.n[2] == 10 + 300 && !s.bad,
	   "300 records of a thread beyond the slots read back from the shared stream "
	   "(tag 2: %llu, with the forked child's 10)", (unsigned long long)s.n[2]);

	snprintf(threads, sizeof(threads), "%s/threads", dir);
	f = fopen(threads, "r");
	{
		char line[256];
		int lines = 0, has_child = 0;

		while (f && fgets(line, sizeof(line), f)) {
			unsigned tid, p;

			lines++;
			if (sscanf(line, "%u %u", &tid, &p) == 2 && tid == (unsigned)child_pid &&
			    p == (unsigned)child_pid)
				has_child = 1;
		}
		if (f)
			fclose(f);
		ok(lines >= 5 && has_child, "the threads file lists every writer (%d lines)", lines);
	}
	ktrace_cleanup(ch);
	return done_testing();
}
