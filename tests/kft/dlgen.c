/*
 * tests/kft/dlgen.c - two libraries loaded in turn at the same address
 * (issue 25, item 11; tests/kft_dlgen.sh).
 *
 * Built with -DDLGEN_LIB=alpha and -DDLGEN_LIB=bravo it is two shared
 * libraries of the same layout (names of the same length), whose
 * functions PFX_one and PFX_two sit at the same offsets.  Built without,
 * it is the program: `dlgen DIR [close]` dlopen()s DIR/libalpha.so, calls
 * its functions, dlclose()s it, dlopen()s DIR/libbravo.so (which the
 * kernel maps where alpha was), calls its functions, dlclose()s it, and
 * dlopen()s alpha again and calls its functions (dlclose()d too with
 * `close`).  It prints each load's base address ("base N ADDR") and, at
 * the end, how many times it called each library function ("count NAME
 * N": PFX_two calls PFX_one once per call).
 */
#ifdef DLGEN_LIB
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

int CAT(DLGEN_LIB, _one)(int x);
int CAT(DLGEN_LIB, _two)(int x);

__attribute__((noinline)) int CAT(DLGEN_LIB, _one)(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int CAT(DLGEN_LIB, _two)(int x)
{
	return CAT(DLGEN_LIB, _one)(x) + 2;
}
#else
#define _GNU_SOURCE /* dlinfo() */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static unsigned counts[2][2]; /* [alpha, bravo][one, two] */

static int load_and_call(const char *dir, const char *lib, int gen, int ones, int twos, int close)
{
	char path[4096], name[64];
	struct link_map *lm = NULL;
	int (*one)(int), (*two)(int);
	int k = lib[0] == 'b', sum = 0;
	void *h;

	snprintf(path, sizeof(path), "%s/lib%s.so", dir, lib);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0) {
		fprintf(stderr, "dlgen: %s: %s\n", path, dlerror());
		return -1;
	}
	printf("base %d %lx\n", gen, (unsigned long)lm->l_addr);
	snprintf(name, sizeof(name), "%s_one", lib);
	*(void **)&one = dlsym(h, name);
	snprintf(name, sizeof(name), "%s_two", lib);
	*(void **)&two = dlsym(h, name);
	if (!one || !two) {
		fprintf(stderr, "dlgen: %s: no %s\n", path, name);
		return -1;
	}
	for (int i = 0; i < ones; i++, counts[k][0]++)
		sum += one(i);
	for (int i = 0; i < twos; i++, counts[k][0]++, counts[k][1]++)
		sum += two(i);
	if (close)
		dlclose(h);
	return sum;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int last = argc > 2 && !strcmp(argv[2], "close");

	if (load_and_call(dir, "alpha", 1, 3, 2, 1) < 0 || load_and_call(dir, "bravo", 2, 4, 1, 1) < 0 ||
	    load_and_call(dir, "alpha", 3, 1, 5, last) < 0)
		return 1;
	printf("count alpha_one %u\ncount alpha_two %u\n", counts[0][0], counts[0][1]);
	printf("count bravo_one %u\ncount bravo_two %u\n", counts[1][0], counts[1][1]);
	return 0;
}
#endif
