/*
 * tests/mktrace.h - run tests/helpers/mktrace from a C test and read its
 * summary line; plus a temporary directory helper.  Header-only, test use.
 *
 * The helper is found as $KTRACE_BUILD/tests/helpers/mktrace (make test
 * sets KTRACE_BUILD); see tests/helpers/mktrace.c for what it writes.
 */
#ifndef KTRACE_TESTS_MKTRACE_H
#define KTRACE_TESTS_MKTRACE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

struct mk_sum {
	unsigned long long records, kept, dropped, overwritten, lost;
};

/* A fresh directory name under a per-test temporary root, "ROOT/NAME". */
static inline const char *mk_path(const char *name)
{
	static char root[256], path[512];

	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/ktrace-test-XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(root))
			bail_out("mkdtemp %s", root);
	}
	snprintf(path, sizeof(path), "%s/%s", root, name);
	return path;
}

/* Remove the temporary root (call at the end). */
static inline void mk_cleanup(void)
{
	char cmd[600];
	const char *p = mk_path("");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
	if (system(cmd) != 0)
		diag("cleanup of %s failed", p);
}

/* Run mktrace ARGS DIR; fill *@s from its summary.  Bails out on failure. */
static inline void mktrace(const char *dir, const char *args, struct mk_sum *s)
{
	const char *b = getenv("KTRACE_BUILD");
	char cmd[2048], line[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && '%s/tests/helpers/mktrace' %s '%s'", dir,
		 b ? b : "build", args, dir);
	p = popen(cmd, "r");
	if (!p || !fgets(line, sizeof(line), p) || pclose(p) != 0 ||
	    sscanf(line, "records %llu kept %llu dropped %llu overwritten %llu lost %llu",
		   &s->records, &s->kept, &s->dropped, &s->overwritten, &s->lost) != 5)
		bail_out("mktrace %s failed: %s", args, line);
}

#endif
