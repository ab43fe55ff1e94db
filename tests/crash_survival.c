/*
 * tests/crash_survival.c - records survive the death of the traced
 * program.  A child process traces from two threads; after each
 * ktrace_log2() returns, the thread publishes "i + 1 committed" in an
 * anonymous shared page (the side channel).  The parent kills the child
 * with SIGKILL in the middle of tracing (or the child dies of SIGSEGV or
 * abort()), then reads the trace: every record the side channel promised
 * must be there, untorn.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "tap.h"
#include "walk.h"

#define NT 2
#define LIMIT 60000 /* records per thread: below the buffer's capacity */

static volatile uint64_t *side; /* [NT] committed counts, shared with the parent */
static int death;               /* 0 SIGKILL by parent, 1 SIGSEGV, 2 abort() */
static uint64_t *seen[NT];
static const char *root;

static void *child_writer(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0;; i++) {
		if (i == LIMIT) {
			for (;;)
				pause();
		}
		ktrace_log2(2, KT_EVENT_USER, (t << 40) | i, ~i);
		__atomic_store_n(&side[t], i + 1, __ATOMIC_RELEASE);
		if (t == 0 && death && i == 25000) {
			static int *volatile low_page = (int *)8; /* not NULL: UBSan would catch it */

			/* Die while the other thread is tracing too. */
			while (__atomic_load_n(&side[1], __ATOMIC_ACQUIRE) < 1000)
				;
			if (death == 1)
				*low_page = 1;
			abort();
		}
	}
	return NULL;
}

static void child(const char *name)
{
	struct ktrace_channel *ch = ktrace_setup(root, name, 64 * 1024, 32, 0);
	pthread_t th[NT];

	if (!ch)
		_exit(3);
	ktrace_start(ch);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, child_writer, (void *)(uintptr_t)t);
	for (;;)
		pause();
}

static void on_rec(const struct walk_rec *r, void *arg)
{
	uint64_t t = r->payload[0] >> 40, i = r->payload[0] & ((1ull << 40) - 1);
	uint64_t *bad = arg;

	if (t >= NT || i >= LIMIT || r->payload[1] != ~i) {
		(*bad)++;
		return;
	}
	seen[t][i]++;
}

static void one(int how)
{
	static const char *const names[] = { "SIGKILL", "SIGSEGV", "abort" };
	char dir[4200];
	pid_t pid;
	int status;
	uint64_t bad = 0, missing = 0, dup = 0, promised[NT];
	struct walk_stats ws;

	death = how;
	for (int t = 0; t < NT; t++) {
		side[t] = 0;
		seen[t] = calloc(LIMIT, sizeof(uint64_t));
	}
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		child(names[how]);
	}
	if (how == 0) {
		/* Kill once both threads are well into tracing (10 s at most). */
		for (int w = 0; w < 10000 && (side[0] < 20000 || side[1] < 20000); w++)
			usleep(1000);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status) &&
		   WTERMSIG(status) == (how == 0 ? SIGKILL : how == 1 ? SIGSEGV : SIGABRT),
	   "%s: the child died of the signal (status 0x%x)", names[how], status);
	for (int t = 0; t < NT; t++)
		promised[t] = __atomic_load_n(&side[t], __ATOMIC_ACQUIRE);
	snprintf(dir, sizeof(dir), "%s/%s", root, names[how]);
	ws = walk_trace(dir, on_rec, &bad);
	for (int t = 0; t < NT; t++)
		for (uint64_t i = 0; i < LIMIT; i++) {
			if (i < promised[t] && !seen[t][i])
				missing++;
			if (seen[t][i] > 1)
				dup++;
		}
	ok(promised[0] > 0 && promised[1] > 0, "%s: both threads committed records (%llu, %llu)",
	   names[how], (unsigned long long)promised[0], (unsigned long long)promised[1]);
	is_int(missing, 0, "%s: every committed record is read back", names[how]);
	ok(bad == 0 && dup == 0 && ws.bad == 0, "%s: no torn, duplicate or corrupt record", names[how]);
	ok(ws.records >= promised[0] + promised[1] && ws.records <= promised[0] + promised[1] + NT,
	   "%s: at most one unpublished record per thread (%llu read, %llu promised)", names[how],
	   (unsigned long long)ws.records, (unsigned long long)(promised[0] + promised[1]));
	for (int t = 0; t < NT; t++)
		free(seen[t]);
}

int main(void)
{
	side = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (side == MAP_FAILED)
		bail_out("mmap");
	root = walk_tmpdir("crash");
	plan(15);
	for (int how = 0; how < 3; how++)
		one(how);
	return done_testing();
}
