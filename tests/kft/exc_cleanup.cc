/*
 * tests/kft/exc_cleanup.cc - a C++ exception thrown through a cleanup
 * landing pad and a function-local static's guard (tests/kft_exc.sh,
 * issue 25 item 10a).  f() calls h(), which has a D on its stack (a
 * cleanup pad that runs D::~D and calls _Unwind_Resume), which calls g(),
 * whose function-local static A is constructed by A::A, which throws the
 * first time: g's pad calls __cxa_guard_abort, h's runs D::~D, f catches.
 * The second f() constructs the static for good.
 *
 * The program keeps its own log of the calls it made (its functions only,
 * the depth of each: main 0), written without calling anything, and
 * prints it at the end in tests/helpers/calltree.py's format.
 */
#include <cstdio>

static const char *names[64];
static int depths[64], nlog, depth;
static volatile int sink;

#define ENTER(n)                                \
	do {                                    \
		if (nlog < 64) {                \
			names[nlog] = (n);      \
			depths[nlog++] = depth; \
		}                               \
		depth++;                        \
	} while (0)
#define LEAVE() (depth--)

struct A {
	int v;
	A(int x);
};

__attribute__((noinline)) A::A(int x)
{
	ENTER("A::A");
	if (x)
		throw x;
	v = sink + 1;
	LEAVE();
}

struct D {
	int d; /* the depth of the frame that holds it */
	~D();
};

__attribute__((noinline)) D::~D()
{
	int was = depth; /* after an exception: the thrower's (f's catch resets it) */

	depth = d;
	ENTER("D::~D");
	sink = sink + 1;
	LEAVE();
	depth = was < d ? was : d;
}

__attribute__((noinline)) int g(int x)
{
	ENTER("g");
	static A a(x);
	LEAVE();
	return a.v;
}

__attribute__((noinline)) int h(int x)
{
	ENTER("h");
	D dd = { depth };
	int r = g(x) + 1;
	sink = sink + r;
	LEAVE();
	return r;
}

__attribute__((noinline)) int f(int x)
{
	int saved;

	ENTER("f");
	saved = depth;
	try {
		sink = h(x);
	} catch (int e) {
		depth = saved;
		sink = sink + e;
	}
	LEAVE();
	return sink;
}

__attribute__((noinline)) int bar(int x)
{
	ENTER("bar");
	sink = sink + x;
	LEAVE();
	return sink;
}

int main()
{
	ENTER("main");
	sink = f(1);
	sink = f(0);
	sink = bar(2);
	LEAVE();
	std::printf("thread\n");
	for (int i = 0; i < nlog; i++)
		std::printf("%d %s\n", depths[i], names[i]);
	return 0;
}
