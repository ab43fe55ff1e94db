/*
 * tests/kft/calltree.c - an instrumented program with a known call tree for
 * the function tracer's end-to-end tests (tests/kft_record.c compiles it
 * with -finstrument-functions at test time and runs it under ktrace record).
 *
 *   calltree tree        main -> run_tree -> outer -> {slow, fast x3}; slow -> fast
 *   calltree late        the same after spinning 300 ms in main
 *   calltree loop FILE   run_tree again and again until FILE exists
 *   calltree threads N   N threads, each calls worker -> fast x100
 *   calltree signal      a SIGUSR1 handler (in_handler -> fast) interrupts slow
 *   calltree sigstorm N  main calls fast() in a loop (so it is mostly inside the
 *                        hooks) while another thread sends it N SIGUSR1, one at a
 *                        time; the handler (not instrumented) calls sig_leaf()
 *                        once; the number of sig_leaf() calls made is written to
 *                        the file "made"
 *   calltree longjmp     jumper -> deep -> deeper, which longjmps back to jumper
 *   calltree fork        the child calls child_work -> fast, the parent parent_work
 *   calltree exit        exits from inside nested calls (open frames at exit)
 *   calltree recurse N   recursion to depth N
 *   calltree inline      inliner -> inlined (always_inline) -> fast, twice
 *
 * With KFT_SYMS=FILE it first writes "ADDRESS NAME" lines for its functions
 * (addresses differ per run: PIE), which the test uses to name records.
 * slow() spins for 20 ms, fast() returns at once.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINST __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#define NOINLINE __attribute__((noinline))

static volatile int sink;
static jmp_buf env;

static NOINST void spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

NOINLINE void fast(void)
{
	sink++;
}

NOINLINE void slow(void)
{
	spin_us(20000);
	fast();
}

NOINLINE void outer(void)
{
	slow();
	fast();
	fast();
	fast();
}

NOINLINE void run_tree(void)
{
	outer();
}

NOINLINE void *worker(void *arg)
{
	for (int i = 0; i < 100; i++)
		fast();
	return arg;
}

NOINLINE void in_handler(void)
{
	fast();
}

NOINLINE void handler(int sig)
{
	(void)sig;
	in_handler();
}

NOINLINE void sig_leaf(void)
{
	sink++;
}

static volatile int storm_made, storm_done;

static NOINST void storm_handler(int sig)
{
	(void)sig;
	sig_leaf();
	__atomic_fetch_add(&storm_made, 1, __ATOMIC_RELEASE);
}

/* Send N SIGUSR1 to the main thread, each once the previous was handled. */
static NOINST void *storm_sender(void *arg)
{
	pthread_t *target = arg;
	int n = atoi(getenv("STORM_N") ? getenv("STORM_N") : "1000");

	for (int i = 0; i < n; i++) {
		pthread_kill(*target, SIGUSR1);
		while (__atomic_load_n(&storm_made, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
	}
	__atomic_store_n(&storm_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

NOINLINE void deeper(void)
{
	longjmp(env, 1);
}

NOINLINE void deep(void)
{
	deeper();
	sink++;
}

NOINLINE void jumper(void)
{
	if (setjmp(env) == 0)
		deep();
	fast();
}

NOINLINE void child_work(void)
{
	fast();
}

NOINLINE void parent_work(void)
{
	fast();
}

NOINLINE void exit_inside(void)
{
	fast();
	exit(3);
}

NOINLINE void exiter(void)
{
	exit_inside();
}

/* Inlined into inliner(): gcc still calls the hooks for it, from
 * inliner's frame, so with inliner's stack pointer and call site. */
static inline __attribute__((always_inline)) void inlined(void)
{
	fast();
}

NOINLINE void inliner(void)
{
	inlined();
	inlined();
}

NOINLINE int recurse(int n)
{
	return n <= 1 ? 1 : 1 + recurse(n - 1);
}

int main(int argc, char **argv);

static NOINST void syms(void)
{
	const char *path = getenv("KFT_SYMS");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
#define SYM(fn) fprintf(f, "%p %s\n", (void *)(fn), #fn)
	SYM(main); SYM(fast); SYM(slow); SYM(outer); SYM(run_tree); SYM(worker);
	SYM(in_handler); SYM(handler); SYM(deeper); SYM(deep); SYM(jumper);
	SYM(child_work); SYM(parent_work); SYM(exit_inside); SYM(exiter); SYM(recurse);
	SYM(inliner); SYM(inlined); SYM(sig_leaf);
#undef SYM
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "tree";

	syms();
	if (!strcmp(mode, "tree")) {
		run_tree();
	} else if (!strcmp(mode, "loop")) {
		/* run_tree again and again until FILE exists (the test's go-ahead) */
		const char *stop = argc > 2 ? argv[2] : "stop";

		while (access(stop, F_OK) != 0)
			run_tree();
	} else if (!strcmp(mode, "late")) {
		spin_us(300000);
		run_tree();
	} else if (!strcmp(mode, "threads")) {
		int n = argc > 2 ? atoi(argv[2]) : 4;
		pthread_t t[64];

		if (n > 64)
			n = 64;
		for (int i = 0; i < n; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "signal")) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = handler;
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR1, NULL, &old);
		if (old.sa_handler != handler)
			return 10; /* the wrapper must be invisible */
		raise(SIGUSR1);
		slow();
	} else if (!strcmp(mode, "sigstorm")) {
		pthread_t self = pthread_self(), sender;
		struct sigaction sa;
		FILE *f;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = storm_handler;
		sigaction(SIGUSR1, &sa, NULL);
		setenv("STORM_N", argc > 2 ? argv[2] : "1000", 1);
		pthread_create(&sender, NULL, storm_sender, &self);
		while (!__atomic_load_n(&storm_done, __ATOMIC_ACQUIRE))
			fast();
		pthread_join(sender, NULL);
		f = fopen("made", "w");
		if (!f)
			return 1;
		fprintf(f, "%d\n", storm_made);
		fclose(f);
	} else if (!strcmp(mode, "longjmp")) {
		jumper();
		fast();
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();

		if (pid == 0) {
			child_work();
			return 0;
		}
		waitpid(pid, NULL, 0);
		parent_work();
	} else if (!strcmp(mode, "exit")) {
		exiter();
	} else if (!strcmp(mode, "inline")) {
		inliner();
	} else if (!strcmp(mode, "recurse")) {
		return recurse(argc > 2 ? atoi(argv[2]) : 10) > 0 ? 0 : 1;
	}
	return 0;
}
