/*
 * tests/sanitizers.h - for tests that run `ktrace record` (LD_PRELOAD of
 * libktrace.so) on uninstrumented programs: in a sanitizer build the
 * sanitizer runtime must be loaded first, so preload what the library
 * links to.  Does nothing in a normal build.  Include after tap.h.
 */
#ifndef KTRACE_TESTS_SANITIZERS_H
#define KTRACE_TESTS_SANITIZERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A sanitizer build of libktrace.so needs its runtime loaded first in the
 * uninstrumented test program: preload what the library links to.
 */
static inline void preload_sanitizers(const char *build)
{
	char cmd[1024], line[1024], list[4096] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ldd %s/libktrace.so.0 2>/dev/null", build);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char name[256], path[512];

		if (sscanf(line, " %255s => %511s", name, path) == 2 &&
		    (strstr(name, "libasan") || strstr(name, "libtsan") || strstr(name, "libubsan")) &&
		    strlen(list) + strlen(path) + 2 < sizeof(list)) {
			if (*list)
				strcat(list, ":");
			strcat(list, path);
		}
	}
	pclose(p);
	if (*list) {
		setenv("LD_PRELOAD", list, 1);
		/* The traced test program leaks nothing worth reporting here, and its
		 * crashes are the tests' (not the sanitizer's to report). */
		setenv("ASAN_OPTIONS", "detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_abort=0", 0);
		diag("sanitizer build: LD_PRELOAD=%s", list);
	}
}

#endif
