/*
 * tests/kft/ownmalloc.c - a program with a malloc of its own
 * (tests/kft_malloc.sh): a bump allocator in a static heap until a
 * .preinit_array hook, as some programs do, with a calloc that GCC at -O2
 * turns into a call to itself (malloc + memset becomes calloc): broken,
 * but this program never calls it.  main calls work() 10 times, then
 * malloc(10) and free() of it, and prints the sum and how many malloc and
 * free calls reached it once the hook ran.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static char heap[1 << 24];
static size_t used;
static int ready;
static int nmalloc, nfree;

static void init(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	ready = 1;
}

__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) = init;

void *malloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (used + n > sizeof(heap))
		return NULL;
	p = heap + used;
	used += n;
	if (ready)
		nmalloc++;
	return p;
}

void free(void *p)
{
	if (p && ready)
		nfree++;
}

void *calloc(size_t a, size_t b)
{
	void *p = malloc(a * b);

	if (p)
		memset(p, 0, a * b);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);

	if (q && p)
		memcpy(q, p, n); /* the heap is one array: reading past p's block is safe */
	return q;
}

__attribute__((noinline)) int work(int i)
{
	return i * 2;
}

int main(void)
{
	int s = 0;
	void *volatile p;

	for (int i = 0; i < 10; i++)
		s += work(i);
	p = malloc(10);
	free(p);
	printf("%d malloc %d free %d\n", s, nmalloc, nfree);
	return 0;
}
