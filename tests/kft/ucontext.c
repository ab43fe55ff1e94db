/*
 * tests/kft/ucontext.c - coroutines with ucontext (tests/kft_ucontext.sh,
 * issue 25 item 9): `ucontext STACK [ROUNDS]`.  foo() makes a context with
 * makecontext() on a stack of its own (STACK: bss, a static array; mmap,
 * an anonymous mapping; local, an array in main()'s frame, i.e. on the
 * main stack above foo's frame) and swapcontext()s
 * into it ROUNDS + 1 times; the coroutine coro() calls bar() and
 * swapcontext()s back, ROUNDS times, then returns (uc_link: back to foo).
 * Between the switches foo() calls baz().
 *
 * The program keeps its own log of the calls it made (its functions
 * only), written without calling anything, and prints it at the end in
 * tests/helpers/calltree.py's format: the answer the trace must give,
 * independent of any tracer.  Each context has its own depth: the
 * coroutine's calls nest under the swapcontext() that first entered it
 * (foo's: depth 2), and after a switch back foo's calls are at foo's
 * depth again.  No function makes a tail call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static const char *names[64];
static int depths[64], nlog, depth;
static volatile int sink;
static ucontext_t main_uc, co_uc;
static int rounds = 2, main_depth, co_depth;
static char bss_stack[256 * 1024] __attribute__((aligned(64)));
static char *co_stack;
#define CO_STACK (256 * 1024)

#define ENTER(n)                                \
	do {                                    \
		if (nlog < 64) {                \
			names[nlog] = (n);      \
			depths[nlog++] = depth; \
		}                               \
		depth++;                        \
	} while (0)
#define LEAVE() (depth--)

/* switch from the context at @from to @to, each context keeping its depth */
#define SWITCH(from, from_depth, to, to_depth)   \
	do {                                     \
		from_depth = depth;              \
		depth = to_depth;                \
		if (swapcontext(from, to) != 0)  \
			abort();                 \
	} while (0)

__attribute__((noinline)) int bar(int x)
{
	ENTER("bar");
	sink += x;
	LEAVE();
	return sink + 1;
}

__attribute__((noinline)) int baz(int x)
{
	ENTER("baz");
	sink += bar(x) + x;
	LEAVE();
	return sink + 1;
}

__attribute__((noinline)) void coro(void)
{
	ENTER("coro");
	for (int i = 0; i < rounds; i++) {
		sink += bar(i);
		SWITCH(&co_uc, co_depth, &main_uc, main_depth);
	}
	LEAVE();
	depth = main_depth; /* returns to uc_link: main_uc */
}

__attribute__((noinline)) int foo(void)
{
	ENTER("foo");
	if (getcontext(&co_uc) != 0)
		abort();
	co_uc.uc_stack.ss_sp = co_stack;
	co_uc.uc_stack.ss_size = CO_STACK;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, coro, 0);
	co_depth = depth; /* the coroutine starts under this swapcontext() */
	for (int i = 0; i <= rounds; i++) {
		SWITCH(&main_uc, main_depth, &co_uc, co_depth);
		sink += baz(i);
	}
	LEAVE();
	return sink + 1;
}

int main(int argc, char **argv)
{
	char local_stack[CO_STACK + 64] __attribute__((aligned(64)));
	const char *stack = argc > 1 ? argv[1] : "bss";

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (!strcmp(stack, "local"))
		co_stack = local_stack;
	else if (!strcmp(stack, "mmap"))
		co_stack = mmap(NULL, CO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		co_stack = bss_stack;
	if (co_stack == MAP_FAILED)
		return 2;
	ENTER("main");
	sink = foo();
	sink = baz(9);
	LEAVE();
	printf("thread\n");
	for (int i = 0; i < nlog; i++)
		printf("%d %s\n", depths[i], names[i]);
	return 0;
}
