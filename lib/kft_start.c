/*
 * lib/kft_start.c - what `ktrace record` tells a static run through the
 * environment besides the configuration: when the program started, and
 * where to say why it could not be traced.
 *
 *   KTRACE_EXEC_NS=NS        CLOCK_MONOTONIC ns just before `ktrace record`
 *                            exec()ed the program: time 0 of `trigger start
 *                            time` (KFT counted from boot; a program's
 *                            counterpart is its start).  So the run's time
 *                            origin does not move with the tracer's own
 *                            set-up, however long that takes.  Without it
 *                            (a run set up by hand with KTRACE_CONFIG) the
 *                            origin is the moment the runtime began its
 *                            set-up.  Read once and removed from the
 *                            environment, so programs the traced one
 *                            exec()s start their own clock.
 *   KTRACE_REPORT_FD=FD,INO  a pipe to `ktrace record` (inode INO): a run
 *                            that cannot start writes its one-line reason
 *                            there, and record reports it once and exits
 *                            non-zero.  The inode guards against FD being
 *                            another file in an exec()ed image.  Without
 *                            it the reason goes to stderr.
 *
 * Both run in the constructor, before main(): not thread-safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kft_attach.h"
#include "kft_rt.h"

uint64_t kft_exec_origin(uint64_t raw_now, uint64_t ns_now, uint64_t raw_per_sec)
{
	const char *s = kt_env("KTRACE_EXEC_NS");
	unsigned long long exec_ns;
	uint64_t back;
	char *end;

	if (!s)
		return raw_now;
	exec_ns = strtoull(s, &end, 10);
	unsetenv("KTRACE_EXEC_NS");
	/* not a number, in the future, or older than a minute: not our exec */
	if (*end || end == s || exec_ns > ns_now || ns_now - exec_ns > 60000000000ull)
		return raw_now;
	back = (uint64_t)((unsigned __int128)(ns_now - exec_ns) * raw_per_sec / 1000000000u);
	return back < raw_now ? raw_now - back : raw_now;
}

void kft_report_untraced(const char *msg)
{
	const char *s = kt_env("KTRACE_REPORT_FD");
	unsigned long fd = 0, ino = 0;
	struct stat st;
	char line[1200];
	int n;

	if (!strncmp(msg, "ktrace: ", 8))
		msg += 8; /* one prefix per message */
	if (kft_attaching()) {
		kft_attach_error(msg); /* to `ktrace record -p`, not the program's stderr */
		return;
	}
	if (s && sscanf(s, "%lu,%lu", &fd, &ino) == 2 && fd <= 65535 &&
	    fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == ino) {
		n = snprintf(line, sizeof(line), "%s\n", msg);
		if (n > 0 && write((int)fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) > 0)
			return;
	}
	fprintf(stderr, "ktrace: %s (the program runs untraced)\n", msg);
}
