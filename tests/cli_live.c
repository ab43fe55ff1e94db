/*
 * tests/cli_live.c - `ktrace ctl` and `ktrace read` against a live program
 * using the real runtime, then `ktrace print` after it was killed.
 *
 * A child process sets a channel up, logs K records, tells the parent, and
 * keeps polling ktrace_running().  The parent copies the live session with
 * `ktrace read` (the copy must hold the K records), stops the channel with
 * `ktrace ctl DIR stop` (the child must see it through the shared control
 * page and report), kills the child with SIGKILL and prints the crashed
 * trace (the K records, exit 0).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "tap.h"
#include "mktrace.h"

#define K 5000

/* Run a shell command; return its exit status and its first output line. */
static int sh(const char *cmd, char *line, size_t len)
{
	FILE *p = popen(cmd, "r");
	int st;

	line[0] = 0;
	if (!p)
		return -1;
	if (!fgets(line, (int)len, p))
		line[0] = 0;
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	const char *b = getenv("KTRACE_BUILD") ? getenv("KTRACE_BUILD") : "build";
	char dir[600], dst[600], cmd[2048], line[512], msg[64] = "";
	int up[2], status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s", mk_path("live"));
	snprintf(dst, sizeof(dst), "%s", mk_path("copy"));
	if (pipe(up) < 0)
		bail_out("pipe");
	pid = fork();
	if (pid == 0) {
		struct ktrace_channel *ch = ktrace_setup(mk_path(""), "live", 65536, 4, 0);

		if (!ch)
			_exit(3);
		ktrace_start(ch);
		for (unsigned i = 0; i < K; i++)
			ktrace_log2(1, KT_EVENT_USER, i, 0);
		if (write(up[1], "logged\n", 7) != 7)
			_exit(4);
		alarm(30); /* never outlive a broken test */
		while (ktrace_running(ch))
			usleep(1000);
		if (write(up[1], "stopped\n", 8) != 8)
			_exit(4);
		for (;;)
			pause(); /* killed by the parent, like a crash */
	}
	close(up[1]);
	ok(read(up[0], msg, 7) == 7 && !strncmp(msg, "logged", 6), "child logged %d records", K);

	snprintf(cmd, sizeof(cmd), "'%s/ktrace' read '%s' '%s' 2>&1", b, dir, dst);
	is_int(sh(cmd, line, sizeof(line)), 0, "ktrace read of a live session: exit 0");
	ok(strstr(line, " 5000 records,") != NULL, "the live copy holds every committed record");
	if (!strstr(line, "5000 records"))
		diag("read said: %s", line);

	snprintf(cmd, sizeof(cmd), "'%s/ktrace' ctl '%s' stop 2>&1", b, dir);
	is_int(sh(cmd, line, sizeof(line)), 0, "ktrace ctl stop: exit 0");
	memset(msg, 0, sizeof(msg));
	ok(read(up[0], msg, 8) == 8 && !strncmp(msg, "stopped", 7),
	   "the program saw the stop through the control page");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "program killed with SIGKILL");

	snprintf(cmd, sizeof(cmd), "'%s/ktrace' print '%s' | grep -vc '\\['", b, dir);
	sh(cmd, line, sizeof(line));
	is_int(atoi(line), K, "ktrace print after the crash: every committed record");
	snprintf(cmd, sizeof(cmd), "'%s/ktrace' print '%s' >/dev/null 2>&1", b, dir);
	is_int(sh(cmd, line, sizeof(line)), 0, "ktrace print after the crash: exit 0");
	snprintf(cmd, sizeof(cmd), "cat '%s/state'", dir);
	sh(cmd, line, sizeof(line));
	is_str(line, "stop\n", "state file says stop");
	mk_cleanup();
	return done_testing();
}
