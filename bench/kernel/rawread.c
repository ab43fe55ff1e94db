/*
 * bench/kernel/rawread.c - the "tracefs raw" row of the kernel-event
 * benchmark: a tracefs instance read the way `ktrace record --kernel`
 * reads it (non-blocking trace_pipe_raw per CPU, poll() woken at a quarter
 * of a buffer, nice -10, whole pages), with the pages written to files as
 * they are, no conversion.  So the row measures the ring buffer and its reading alone.
 *
 *   rawread INSTANCE_DIR OUT_PREFIX -- PROG ARGS...
 *
 * The instance must exist with its events enabled and tracing off; this
 * program leaves itself out of the trace (set_event_notrace_pid), turns
 * tracing on, runs PROG, turns it off, drains every CPU and prints
 * "pages P bytes B" on stderr.  OUT_PREFIX.cpuN get the pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(const char *dir, const char *file, const char *val)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), pages = 0, bytes = 0;
	int *in, *out, st;
	struct pollfd *pf;
	char buf[65536], path[4096];
	pid_t p;

	if (argc < 5 || strcmp(argv[3], "--"))
		return 2;
	in = calloc((size_t)ncpu, sizeof(int));
	out = calloc((size_t)ncpu, sizeof(int));
	pf = calloc((size_t)ncpu, sizeof(*pf));
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	put(argv[1], "set_event_notrace_pid", buf);
	put(argv[1], "buffer_percent", "25");
	for (long c = 0; c < ncpu; c++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%ld/trace_pipe_raw", argv[1], c);
		in[c] = open(path, O_RDONLY | O_NONBLOCK);
		snprintf(path, sizeof(path), "%s.cpu%ld", argv[2], c);
		out[c] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in[c] < 0 || out[c] < 0)
			return 1;
		pf[c].fd = in[c];
		pf[c].events = POLLIN;
	}
	setpriority(PRIO_PROCESS, 0, -10); /* as ktrace's reader thread */
	put(argv[1], "tracing_on", "1");
	p = fork();
	if (p == 0) {
		setpriority(PRIO_PROCESS, 0, 0); /* the program at the normal priority */
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	for (;;) {
		int r = poll(pf, (nfds_t)ncpu, 100), done = waitpid(p, &st, WNOHANG) == p;

		for (long c = 0; c < ncpu; c++) {
			ssize_t n;

			if (!done && !(r > 0 && (pf[c].revents & POLLIN)))
				continue;
			if (done)
				put(argv[1], "tracing_on", "0");
			while ((n = read(in[c], buf, 4096)) > 0) {
				if (write(out[c], buf, (size_t)n) != n)
					return 1;
				pages++;
				bytes += n;
			}
		}
		if (done)
			break;
	}
	fprintf(stderr, "pages %ld bytes %ld\n", pages, bytes);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
