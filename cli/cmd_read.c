/*
 * cli/cmd_read.c - `ktrace read [-b SUBBUF_SIZE] [-n N_SUBBUFS] SRC DST`:
 * copy a live or crashed session's streams into a trace directory with
 * cpu0..cpuN files, as klog's reader did (seed 000).
 *
 * SRC is either
 *   - a ktrace user-space trace directory (it has `control` and
 *     `metadata`): every stream file is copied byte for byte to DST/cpuN (N
 *     its stream index), the metadata with its `stream` lines renamed, and
 *     threads, control, state, dropped and the function tracer's
 *     callsites, kft and kft-status as they are; or
 *   - a kernel channel's debugfs directory (no `control`; `trace0` and
 *     `state`): handed to read_relay() (kclient/relay.c, kernel module);
 *   - with --crash, ktrace.ko's crash region (debugfs ktrace/crash, or an
 *     image file of it) after a panic or a reboot: handed to read_crash()
 *     (kclient/crash.c), which writes the same kind of trace directory.
 * DST is created with mode 0700 and its files with 0600, or an existing
 * DST of the caller's holding nothing or an earlier copy is emptied first
 * (cli_trace_dir(), lib/safefile.h: never a link, never another user's
 * directory).  Files are copied
 * through a 256 KiB buffer, so memory does not grow with the trace.  The
 * copy is then read back with the trace reader and summarised, so a damaged
 * source is reported here and not only when printing.
 *
 * Exit status: 0 copied and clean; 1 a file could not be read or written
 * (what was copied stays) or the copy has errors; 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "consumer/consumer.h"
#include "kclient/kclient.h"
#include "lib/safefile.h"
#include "reader/reader.h"

#define CMD "read"
#define COPY_BUF (256u * 1024u)

struct read_opts {
	uint64_t bsize, nsub; /* -b, -n; 0: the default */
	int quiet, recover, crash;
	const char *channel;
};

enum { OPT_RECOVER = CLI_OPT_LONG, OPT_CRASH, OPT_CHANNEL };

/* cli_opt_fn: -b, -n. */
static int take_option(void *arg, int key, const char *val)
{
	struct read_opts *o = arg;

	if (key == 'b' && (cli_parse_u64(val, &o->bsize) < 0 || o->bsize == 0 || o->bsize > (1u << 30))) {
		cli_error(CMD, "option '-b': '%s' is not a sub-buffer size in bytes (1..2^30)", val);
		return 2;
	}
	if (key == 'n' && (cli_parse_u64(val, &o->nsub) < 0 || o->nsub == 0 || o->nsub > (1u << 20))) {
		cli_error(CMD, "option '-n': '%s' is not a number of sub-buffers (1..2^20)", val);
		return 2;
	}
	return 0;
}

static const struct cli_opt opts[] = {
	CLI_OPT("subbuf-size", 'b', "BYTES", "relay sub-buffer size (kernel channels only)"),
	CLI_OPT("n-subbufs", 'n', "N", "relay sub-buffers (kernel channels only)"),
	CLI_OPT_FLAG("quiet", 'q', struct read_opts, quiet, "no summary line"),
	CLI_OPT_FLAG("recover", OPT_RECOVER, struct read_opts, recover,
		     "DIR is the trace of a `ktrace record` that died:\n"
		     "copy what its rings in /dev/shm still hold into\n"
		     "DIR (waiting for the program if it still runs),\n"
		     "then remove them"),
	CLI_OPT_FLAG("crash", OPT_CRASH, struct read_opts, crash,
		     "SRC is ktrace.ko's crash region (debugfs\n"
		     "ktrace/crash, or its image file) kept over a panic\n"
		     "or reboot: write its channel's records (torn ones\n"
		     "skipped and counted) to DST"),
	CLI_OPT_STRING("channel", OPT_CHANNEL, "NAME", struct read_opts, channel,
		       "with --crash: the channel to convert (default:\n"
		       "the only one holding records)"),
	CLI_OPT_END,
};

static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace read [-b SUBBUF_SIZE] [-n N_SUBBUFS] SRC DST\n"
		"       ktrace read --recover DIR\n"
		"       ktrace read --crash [--channel NAME] SRC DST\n"
		"\n"
		"Copy the streams of a live or crashed trace session SRC into the directory DST\n"
		"as cpu0..cpuN, with the metadata, threads and control files, then check the\n"
		"copy and print a summary.  SRC is a ktrace trace directory (it has control\n"
		"and metadata) or a kernel channel's debugfs directory (trace0.., state).\n"
		"DST is created (mode 0700; files 0600) or reused if it is your directory\n"
		"holding nothing or an earlier copy (replaced); a link is refused.\n",
	.opts = opts,
	.tail =
		"Exit status: 0 copied, 1 a file could not be read or written (what was\n"
		"copied stays) or the copy has errors, 2 usage error.  See ktrace-read(1).\n",
	.help_column = 27,
};

/* 1 if @dir/@name exists (lstat: a link counts, and is refused later). */
static int exists(const char *dir, const char *name)
{
	struct stat st;

	return ksf_read_stat(dir, name, 0, &st) == 0;
}

/* Create DST/name for writing, mode 0600 (DST was emptied).  Return: fd or -1 (error printed). */
static int create_out(const char *dst, const char *name)
{
	int fd = ksf_create(dst, name, O_WRONLY);

	if (fd < 0)
		cli_error(CMD, "%s/%s: cannot create: %s", dst, name, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

static int write_all(int fd, const char *path, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cli_error(CMD, "%s: write: %s", path, strerror(n < 0 ? errno : ENOSPC));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copy SRC/from to DST/to.  @optional: a missing source is not an error.  Return: 0 or 1. */
static int copy_file(const char *src, const char *from, const char *dst, const char *to,
		     int optional, char *buf)
{
	char in[4096], out[4096];
	int ifd, ofd, rc = 0;

	snprintf(in, sizeof(in), "%s/%s", src, from);
	snprintf(out, sizeof(out), "%s/%s", dst, to);
	/* never through a link, never a FIFO or device (a copy without end) */
	ifd = ksf_read_open(src, from, 0);
	if (ifd < 0) {
		if (optional && ifd == -ENOENT)
			return 0;
		cli_error(CMD, "%s: %s", in, ksf_read_why(ifd));
		return 1;
	}
	ofd = create_out(dst, to);
	if (ofd < 0) {
		close(ifd);
		return 1;
	}
	for (;;) {
		ssize_t n = read(ifd, buf, COPY_BUF);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error(CMD, "%s: read: %s", in, strerror(errno));
			rc = 1;
			break;
		}
		if (n == 0)
			break;
		if (write_all(ofd, out, buf, (size_t)n) < 0) {
			rc = 1;
			break;
		}
	}
	if (close(ofd) < 0 && !rc) {
		cli_error(CMD, "%s: close: %s", out, strerror(errno));
		rc = 1;
	}
	close(ifd);
	return rc;
}

/*
 * Write DST/metadata: SRC's metadata with each `stream INDEX KIND FILE`
 * and `stream-written INDEX FILE ...` line naming cpuINDEX.  Return: 0 or 1.
 */
static int copy_metadata(const char *src, const char *dst)
{
	char path[4096], outp[4096], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int fd, rc = 0, err = 0;

	snprintf(path, sizeof(path), "%s/metadata", src);
	snprintf(outp, sizeof(outp), "%s/metadata", dst);
	in = cli_fopen_in(src, "metadata", &err);
	if (!in) {
		cli_error(CMD, "%s: %s", path, ksf_read_why(err));
		return 1;
	}
	fd = create_out(dst, "metadata");
	if (fd < 0) {
		fclose(in);
		return 1;
	}
	while (!rc && (n = getline(&line, &cap, in)) > 0) {
		char *kind = NULL, *file = NULL, buf[32];
		unsigned idx;

		if (strncmp(line, "stream ", 7) == 0 && sscanf(line + 7, "%u", &idx) == 1 &&
		    (kind = strchr(line + 7, ' ')))
			file = strchr(kind + 1, ' ');
		if (file) {
			/* keep "stream INDEX KIND ", replace FILE */
			int len = snprintf(buf, sizeof(buf), "cpu%u\n", idx);

			rc = write_all(fd, outp, line, (size_t)(file + 1 - line)) < 0 ||
			     write_all(fd, outp, buf, (size_t)len) < 0;
		} else if (strncmp(line, "stream-written ", 15) == 0 && sscanf(line + 15, "%u", &idx) == 1 &&
			   (file = strchr(line + 15, ' ')) && (kind = strchr(file + 1, ' '))) {
			/* "stream-written INDEX FILE BYTES RECORDS": FILE is cpuINDEX now
			 * (copied byte for byte: BYTES and RECORDS still hold) */
			int len = snprintf(buf, sizeof(buf), "cpu%u", idx);

			rc = write_all(fd, outp, line, (size_t)(file + 1 - line)) < 0 ||
			     write_all(fd, outp, buf, (size_t)len) < 0 ||
			     write_all(fd, outp, kind, (size_t)(line + n - kind)) < 0;
		} else {
			rc = write_all(fd, outp, line, (size_t)n) < 0;
		}
	}
	if (ferror(in)) {
		cli_error(CMD, "%s: read: %s", path, strerror(errno));
		rc = 1;
	}
	if (close(fd) < 0 && !rc) {
		cli_error(CMD, "%s: close: %s", outp, strerror(errno));
		rc = 1;
	}
	free(line);
	fclose(in);
	return rc;
}

/* Read the copy back; print its diagnostics and a summary.  Return: 0 or 1. */
static int check_copy(const char *dst, int quiet)
{
	struct ktr_trace *t = ktr_open(dst);
	struct ktr_rec r;
	uint64_t recs = 0, lost = 0, over = 0, dropped = 0, corrupt = 0;
	int rc;

	if (!t) {
		cli_error(CMD, "%s: %s", dst, strerror(errno));
		return 1;
	}
	while (ktr_next(t, &r)) {
		cli_diags(CMD, t);
		if (r.kind == KTR_RECORD)
			recs++;
		else if (r.gap == KTR_GAP_LOST)
			lost += r.count;
		else if (r.gap == KTR_GAP_DROPPED)
			dropped += r.count;
		else if (r.gap == KTR_GAP_OVERWRITTEN)
			over += r.count;
		else
			corrupt++;
	}
	cli_diags(CMD, t);
	if (!quiet)
		printf("%s: %u streams, %" PRIu64 " records, %" PRIu64 " lost, %" PRIu64
		       " dropped, %" PRIu64 " sub-buffers overwritten, %" PRIu64 " corrupt regions\n",
		       dst, ktr_info(t)->nstreams, recs, lost, dropped, over, corrupt);
	rc = ktr_error_count(t) ? 1 : 0;
	ktr_close(t);
	return rc;
}

static int same_dir(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Copy a user-space trace.  Return: the exit status. */
static int read_user(const char *src, const char *dst, int quiet)
{
	struct ktr_trace *t;
	char *buf = malloc(COPY_BUF);
	const char *m;
	int rc = 0;

	if (cli_trace_dir(CMD, dst, KSF_CREATE | KSF_TRACE | KSF_CLEAR) < 0) {
		free(buf);
		return 1;
	}
	t = ktr_open(src);
	if (!t || !buf) {
		cli_error(CMD, "out of memory");
		free(buf);
		ktr_close(t);
		return 1;
	}
	while ((m = ktr_diag_next(t)))
		; /* the copy is checked (and its problems reported) below */
	for (unsigned i = 0; i < ktr_info(t)->nstreams; i++) {
		const struct ktr_stream_info *s = ktr_stream(t, i);
		const char *name = strrchr(s->path, '/');
		char to[32];

		snprintf(to, sizeof(to), "cpu%u", s->index);
		rc |= copy_file(src, name ? name + 1 : s->path, dst, to, 0, buf);
	}
	ktr_close(t);
	rc |= copy_metadata(src, dst);
	rc |= copy_file(src, "threads", dst, "threads", 1, buf);
	rc |= copy_file(src, "control", dst, "control", 0, buf);
	rc |= copy_file(src, "state", dst, "state", 1, buf);
	rc |= copy_file(src, "dropped", dst, "dropped", 1, buf);
	/* The function tracer's files: call-site table, run state, status. */
	rc |= copy_file(src, "callsites", dst, "callsites", 1, buf);
	rc |= copy_file(src, "kft", dst, "kft", 1, buf);
	rc |= copy_file(src, "kft-status", dst, "kft-status", 1, buf);
	rc |= copy_file(src, "kallsyms", dst, "kallsyms", 1, buf); /* kernel function names */
	free(buf);
	if (rc)
		return 1;
	return check_copy(dst, quiet);
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* kc_consume()'s test for --recover: no process of the session left (or Ctrl-C). */
static int all_gone(void *arg)
{
	return interrupted || kc_alive(arg) == 0;
}

/*
 * `ktrace read --recover DIR`: be the consumer a dead `ktrace record`
 * was (consumer/consumer.h).  Return: the exit status.
 */
static int recover(const char *dir, int quiet)
{
	char err[PATH_MAX + 256];
	struct kc_session *s;
	unsigned alive;
	int rc;

	if (cli_check_trace(CMD, dir))
		return 1; /* a link, FIFO or device named like a trace file */
	s = kc_open(dir, CMD, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	alive = kc_alive(s);
	if (alive) {
		kc_hold(s); /* its writers wait for this consumer now (if the session says so) */
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (!quiet)
			fprintf(stderr, "ktrace read: %u process(es) of the recording still run: copying "
					"their records until they end (Ctrl-C: stop now)\n",
				alive);
		kc_consume(s, all_gone, s);
	}
	kc_drain(s, 1);
	rc = kc_finish(s, 0) < 0;
	if (!quiet)
		kc_report(s, CMD);
	rc |= kc_stats(s)->errors != 0;
	kc_close(s, 1);
	return rc ? 1 : check_copy(dir, quiet);
}

/*
 * `ktrace read --crash SRC DST`: convert, check the copy like any other,
 * and say what the crash region held.  Return: the exit status.
 */
static int read_crash_cmd(const char *src, const char *dst, const char *channel, int quiet)
{
	struct kcr_stats st;
	int rc;

	if (read_crash(src, dst, channel, &st))
		return 1;
	/* the tasks named by the trace itself: /proc is another boot's now */
	cli_kernel_tasks(CMD, dst, NULL);
	rc = check_copy(dst, quiet);
	if (!quiet) {
		printf("%s: crash region: %" PRIu64 " records, %" PRIu64 " torn (skipped), %" PRIu64
		       " bad sub-buffers; ", dst, st.records, st.torn, st.bad_subbufs);
		if (st.panic_ns && st.records)
			printf("last record %" PRIu64 " ns, panic %" PRIu64 " ns (%+.3f ms), CPUs stopped %" PRIu64
			       " ns\n", st.last_ns, st.panic_ns, ((double)st.last_ns - (double)st.panic_ns) / 1e6,
			       st.stop_ns);
		else if (st.panic_ns)
			printf("panic %" PRIu64 " ns, no record\n", st.panic_ns);
		else
			printf("last record %" PRIu64 " ns, no panic stamped (a reboot, or the region is live)\n",
			       st.last_ns);
	}
	return rc;
}

/* `read --crash SRC DST`: @args holds the operands. */
static int run_crash(const struct read_opts *o, char **args, int nargs)
{
	if (o->recover || o->bsize || o->nsub) {
		cli_error(CMD, "--crash takes none of --recover, -b, -n");
		return 2;
	}
	if (nargs != 2) {
		cli_error(CMD, "--crash needs SRC and DST (see ktrace read --help)");
		return 2;
	}
	if (same_dir(args[0], args[1])) {
		cli_error(CMD, "%s: is the source directory", args[1]);
		return 2;
	}
	return read_crash_cmd(args[0], args[1], o->channel, o->quiet);
}

/*
 * `read SRC DST`: a user trace directory (control, metadata) copied, or a
 * kernel channel (trace0, state) read through relay; then checked.
 */
static int read_copy(const struct read_opts *o, const char *src, const char *dst)
{
	struct stat st;
	int kernel;

	if (stat(src, &st) < 0) {
		cli_error(CMD, "%s: %s", src, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error(CMD, "%s: not a directory", src);
		return 1;
	}
	/* a link, FIFO or device named like a trace file (a user trace's or a
	 * kernel channel's): refused, nothing copied, DST not touched */
	if (cli_check_trace(CMD, src))
		return 1;
	if (exists(src, "control") && exists(src, "metadata")) {
		kernel = 0;
	} else if (!exists(src, "control") && exists(src, "trace0") && exists(src, "state")) {
		kernel = 1;
	} else {
		cli_error(CMD, "%s: neither a ktrace trace directory (control, metadata) nor a kernel channel (trace0, state)",
			  src);
		return 1;
	}
	if (same_dir(src, dst)) {
		cli_error(CMD, "%s: is the source directory", dst);
		return 2;
	}
	if (kernel) {
		int rc = read_relay(src, dst, (unsigned)o->bsize, (unsigned)o->nsub);

		/* the copy's tasks named, read back and summarised */
		if (!rc)
			cli_kernel_tasks(CMD, dst, "/proc");
		return rc ? rc : check_copy(dst, o->quiet);
	}
	if (o->bsize || o->nsub)
		cli_error(CMD, "warning: -b and -n apply to kernel channels only; ignored");
	return read_user(src, dst, o->quiet);
}

/* `ktrace read`: options, then --crash, --recover or a copy. */
static int run(int argc, char **argv)
{
	struct read_opts o = { 0 };
	int rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, take_option, &o);

	if (rc != CLI_OPTS_GO)
		return rc;
	if (o.channel && !o.crash) {
		cli_error(CMD, "--channel applies to --crash only (see ktrace read --help)");
		return 2;
	}
	if (o.crash)
		return run_crash(&o, argv + optind, argc - optind);
	if (o.recover) {
		if (argc - optind != 1) {
			cli_error(CMD, "--recover takes one directory (see ktrace read --help)");
			return 2;
		}
		return recover(argv[optind], o.quiet);
	}
	if (argc - optind != 2) {
		cli_error(CMD, argc - optind < 2 ? "need SRC and DST (see ktrace read --help)"
						 : "unexpected argument '%s' (see ktrace read --help)",
			  argv[argc - 1]);
		return 2;
	}
	return read_copy(&o, argv[optind], argv[optind + 1]);
}

KTRACE_COMMAND_OPTS(read, "copy a live or crashed session's streams to cpu0..cpuN", run, cmd_opts);
