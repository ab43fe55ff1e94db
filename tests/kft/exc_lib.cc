/*
 * tests/kft/exc_lib.cc - a C++ exception thrown inside an instrumented
 * shared library reached through the PLT (tests/kft_exc.sh, issue 25 item
 * 10b).  Built twice: with -DEXC_LIB as libexclib.so (XXX::XXX throws when
 * asked to, YYY::YYY does not), else as the program, which constructs an
 * XXX that throws (caught in main), then a YYY, then one more XXX.  Before
 * the fix YYY::YYY nested under the XXX::XXX library call the exception
 * had unwound.
 *
 * The program keeps its own log of the calls made (in the library: both
 * objects write it), the library calls included (the program logs each
 * constructor it calls, the library its functions), without calling
 * anything, and prints it at the end in tests/helpers/calltree.py's
 * format.
 */
#include <cstdio>

extern const char *exc_names[64];
extern int exc_depths[64], exc_nlog, exc_depth;

#define ENTER(n)                                        \
	do {                                            \
		if (exc_nlog < 64) {                    \
			exc_names[exc_nlog] = (n);      \
			exc_depths[exc_nlog++] = exc_depth; \
		}                                       \
		exc_depth++;                            \
	} while (0)
#define LEAVE() (exc_depth--)

struct XXX {
	int v;
	XXX(int x);
};
struct YYY {
	int v;
	YYY();
};
extern volatile int exc_sink;

#ifdef EXC_LIB
volatile int exc_sink;
const char *exc_names[64];
int exc_depths[64], exc_nlog, exc_depth;

__attribute__((noinline)) static int inner(int x)
{
	ENTER("inner");
	if (x)
		throw x;
	LEAVE();
	return exc_sink + 1;
}

XXX::XXX(int x)
{
	ENTER("XXX::XXX");
	v = inner(x);
	LEAVE();
}

YYY::YYY()
{
	ENTER("YYY::YYY");
	v = exc_sink + 2;
	LEAVE();
}
#else
__attribute__((noinline)) static int k(int x)
{
	ENTER("k");
	exc_sink = exc_sink + x;
	LEAVE();
	return exc_sink;
}

int main()
{
	int saved;

	ENTER("main");
	saved = exc_depth;
	try {
		ENTER("XXX::XXX"); /* the library call */
		XXX a(1);
		LEAVE();
		exc_sink = a.v;
	} catch (int e) {
		exc_depth = saved;
		exc_sink = exc_sink + e;
	}
	ENTER("YYY::YYY");
	YYY b;
	LEAVE();
	exc_sink = exc_sink + b.v;
	ENTER("XXX::XXX");
	XXX c(0);
	LEAVE();
	exc_sink = k(c.v);
	LEAVE();
	std::printf("thread\n");
	for (int i = 0; i < exc_nlog; i++)
		std::printf("%d %s\n", exc_depths[i], exc_names[i]);
	return 0;
}
#endif
