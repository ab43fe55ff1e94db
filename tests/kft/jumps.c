/*
 * tests/kft/jumps.c - longjmp out of traced calls (tests/kft_longjmp.sh):
 * `jumps MODE`, MODE 1 (longjmp out of foo), 3 (out of foo3 <- foo2 <-
 * foo) or sig3 (siglongjmp out of the same three).  After the jump main()
 * calls getpid() (a library call) and bar(), which must not nest in the
 * abandoned frames (bar's frame is the larger, so its stack pointer does
 * not show them dead).
 *
 * The program keeps its own log of the calls it made (its functions only,
 * the depth of each: main 0), written without calling anything, and
 * prints it at the end in tests/helpers/calltree.py's format: the answer
 * the trace must give, independent of any tracer.  No function makes a
 * tail call.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *names[64];
static int depths[64], nlog, depth;
static volatile int saved_depth, sink;
static jmp_buf jb;
static sigjmp_buf sjb;
static int use_sig;

#define ENTER(n)                              \
	do {                                  \
		if (nlog < 64) {              \
			names[nlog] = (n);    \
			depths[nlog++] = depth; \
		}                             \
		depth++;                      \
	} while (0)
#define LEAVE() (depth--)

/* a frame larger than foo's: its entry's stack pointer lies below theirs */
__attribute__((noinline)) int bar(int x)
{
	volatile char pad[512];

	ENTER("bar");
	pad[x & 511] = (char)x;
	sink += x + pad[x & 511];
	LEAVE();
	return sink + 1;
}

#define JUMP()                         \
	do {                           \
		if (use_sig)           \
			siglongjmp(sjb, 1); \
		longjmp(jb, 1);        \
	} while (0)

__attribute__((noinline)) int foo3(int x)
{
	int r;

	ENTER("foo3");
	if (x)
		JUMP();
	r = bar(x);
	LEAVE();
	return r + 1;
}

__attribute__((noinline)) int foo2(int x)
{
	int r;

	ENTER("foo2");
	r = foo3(x);
	LEAVE();
	return r + 1;
}

__attribute__((noinline)) int foo(int x, int deep)
{
	int r;

	ENTER("foo");
	if (deep) {
		r = foo2(x);
	} else {
		if (x)
			JUMP();
		r = bar(x);
	}
	LEAVE();
	return r + 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "1";
	int deep = strcmp(mode, "1") != 0;

	ENTER("main");
	use_sig = !strcmp(mode, "sig3");
	saved_depth = depth;
	if (use_sig ? sigsetjmp(sjb, 1) == 0 : setjmp(jb) == 0)
		sink = foo(1, deep);
	depth = saved_depth; /* what the longjmp abandoned */
	sink = (int)getpid();
	sink = bar(2);
	LEAVE();
	printf("thread\n");
	for (int i = 0; i < nlog; i++)
		printf("%d %s\n", depths[i], names[i]);
	return 0;
}
