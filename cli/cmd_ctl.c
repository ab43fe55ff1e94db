/*
 * cli/cmd_ctl.c - `ktrace ctl DIR start|stop|status|dump|enable EVENT|disable
 * EVENT`: drive a running program's channel from outside, as seed 003's
 * debugfs `state` file did, with no syscall on the writer's side.
 *
 * The command maps DIR/control (struct ktrace_control, the stream table and
 * the event enable map of format.h) MAP_SHARED, the same pages the traced
 * program has mapped:
 *   start/stop  store start_ns/stop_ns, then the state word with release
 *               order (writers load it relaxed, so they see the change
 *               within a few records); refused when the channel was set up
 *               with KTRACE_DISABLE_STATE.  The text mirrors DIR/state and
 *               DIR/dropped are then replaced atomically (temp + rename).
 *   enable/disable  set or clear bytes of the enable map; the event names
 *               come from DIR/metadata's catalogue (reader/names.c).
 *   status      prints the control page and the per-stream counters.
 *   dump        a flight recorder's dump while `ktrace record --flight`
 *               runs: kc_open() of the session DIR/session names, then
 *               kc_snapshot() (consumer/snapshot.c) into DIR.dump-N.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "consumer/consumer.h"
#include "lib/safefile.h"
#include "lib/runtime.h"
#include "reader/reader.h"

#define CMD "ctl"

/* What `ktrace ctl --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace ctl DIR start|stop|status|dump\n"
		"       ktrace ctl DIR enable|disable EVENT\n"
		"       ktrace ctl DIR kft status|load FILE|prime|start|stop\n"
		"\n"
		"Control the channel whose trace directory is DIR while its program runs (or\n"
		"after).  The change goes through DIR/control, shared with the program: no\n"
		"signal, no syscall and no lock on the program's side.\n"
		"\n"
		"  start           start recording (refused if the channel was set up with\n"
		"                  KTRACE_DISABLE_STATE)\n"
		"  stop            stop recording; committed records stay\n"
		"  status          state, mode, and per stream: owner thread, records\n"
		"                  written, dropped and overwritten, with totals\n"
		"  dump            a flight recorder's dump while the program runs\n"
		"                  (`ktrace record --flight`, with or without -p): what\n"
		"                  the rings hold now, written to DIR.dump-N (a trace\n"
		"                  directory; N counts up), the program not stopped\n"
		"  enable EVENT    enable static events; EVENT is a catalogue name,\n"
		"  disable EVENT   FUNC:entry, FUNC:exit, FUNC:N, FUNC:* (every event of a\n"
		"                  function), a numeric id (decimal or 0x), or all\n"
		"  kft CMD         drive the function tracer's run in the program (KFT's\n"
		"                  /proc/kft): the same as `ktrace kft DIR CMD`\n",
	.opts = NULL, /* only --help: the actions are operands, listed above */
	.tail =
		"Exit status: 0 done, 1 the control file is missing, unreadable, corrupt or\n"
		"refuses the change, 2 usage error.  See ktrace-ctl(1).\n",
};

struct ctl {
	const char *dir;
	uint8_t *map;
	size_t size;
	struct ktrace_control *c;
	struct ktrace_stream_ctl *s;
	uint8_t *enable;
	int newer;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Map DIR/control; @rw for changes.  Return: 0, or 1 after printing the error. */
static int ctl_open(struct ctl *k, const char *dir, int rw)
{
	char path[4096], msg[200];
	struct stat st = { 0 };
	int fd, r;

	memset(k, 0, sizeof(*k));
	k->dir = dir;
	snprintf(path, sizeof(path), "%s/control", dir);
	if (cli_check_trace(CMD, dir))
		return 1; /* a link, FIFO or device named like a trace file */
	/* never read or written through a link, never a FIFO or device */
	fd = rw ? open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) : ksf_read_open(dir, "control", 0);
	if (fd < 0) {
		cli_error(CMD, "%s: %s", path, ksf_read_why(rw ? errno : fd));
		return 1;
	}
	errno = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		int err = errno;

		cli_error(CMD, "%s: %s", path,
			  err && !S_ISREG(st.st_mode) ? strerror(err) :
			  !S_ISREG(st.st_mode) ? "not a regular file" : "offset 0: empty file");
		close(fd);
		return 1;
	}
	k->size = (size_t)st.st_size;
	k->map = mmap(NULL, k->size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	close(fd);
	if (k->map == MAP_FAILED) {
		cli_error(CMD, "%s: mmap: %s", path, strerror(errno));
		k->map = NULL;
		return 1;
	}
	r = ktr_control_check(k->map, k->size, msg, sizeof(msg));
	if (r < 0 || (r > 0 && rw)) {
		cli_error(CMD, "%s: %s%s", path, msg, r > 0 ? "; not changing it" : "");
		munmap(k->map, k->size);
		k->map = NULL;
		return 1;
	}
	if (r > 0)
		cli_error(CMD, "%s: warning: %s", path, msg);
	k->c = (struct ktrace_control *)k->map;
	k->s = (struct ktrace_stream_ctl *)(k->map + k->c->streams_off);
	k->enable = k->map + k->c->enable_off;
	return 0;
}

static void ctl_close(struct ctl *k)
{
	if (k->map)
		munmap(k->map, k->size);
}

/* Rewrite DIR/state and DIR/dropped from the control page.  Return: 0 or 1. */
static int write_mirrors(struct ctl *k)
{
	uint64_t dropped = 0;
	char text[32];
	int err;

	for (uint32_t i = 0; i < k->c->nstreams; i++)
		dropped += __atomic_load_n(&k->s[i].dropped, __ATOMIC_RELAXED);
	err = cli_write_file_atomic(k->dir, "state",
				    __atomic_load_n(&k->c->state, __ATOMIC_RELAXED) ==
						    KTRACE_STATE_RUNNING ? "start\n" : "stop\n");
	if (err) {
		cli_error(CMD, "%s/state: %s", k->dir, strerror(-err));
		return 1;
	}
	snprintf(text, sizeof(text), "%" PRIu64 "\n", dropped);
	err = cli_write_file_atomic(k->dir, "dropped", text);
	if (err) {
		cli_error(CMD, "%s/dropped: %s", k->dir, strerror(-err));
		return 1;
	}
	return 0;
}

static int do_state(const char *dir, int start)
{
	struct ctl k;
	int rc;

	if (ctl_open(&k, dir, 1))
		return 1;
	if (k.c->flags & KTRACE_DISABLE_STATE) {
		cli_error(CMD, "%s/control: offset 12: state control is disabled for this channel (KTRACE_DISABLE_STATE)",
			  dir);
		ctl_close(&k);
		return 1;
	}
	if (start)
		__atomic_store_n(&k.c->start_ns, mono_ns(), __ATOMIC_RELAXED);
	else
		__atomic_store_n(&k.c->stop_ns, mono_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&k.c->state, start ? KTRACE_STATE_RUNNING : KTRACE_STATE_STOPPED,
			 __ATOMIC_RELEASE);
	rc = write_mirrors(&k);
	ctl_close(&k);
	return rc;
}

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case KTRACE_STREAM_THREAD:
		return "thread";
	case KTRACE_STREAM_SHARED:
		return "shared";
	case KTRACE_STREAM_CPU:
		return "cpu";
	default:
		return "?";
	}
}

/* "12.345 s ago" for a CLOCK_MONOTONIC stamp, or "never". */
static void ago(char *buf, size_t len, uint64_t ns)
{
	uint64_t now = mono_ns();

	if (!ns)
		snprintf(buf, len, "never");
	else if (ns > now)
		snprintf(buf, len, "at %" PRIu64 " ns (CLOCK_MONOTONIC of another boot?)", ns);
	else
		snprintf(buf, len, "%.3f s ago", (double)(now - ns) / 1e9);
}


static int do_status(const char *dir)
{
	struct ctl k;
	struct ktr_trace *t;
	uint64_t tw = 0, td = 0, to = 0;
	unsigned enabled = 0;
	char a[96], b[96];
	const char *m;

	if (ctl_open(&k, dir, 0))
		return 1;
	t = ktr_open(dir); /* for the channel name; its diagnostics do not matter here */
	while (t && (m = ktr_diag_next(t)))
		;
	for (unsigned i = 0; i < KTRACE_ENABLE_MAP_SIZE; i++)
		enabled += k.enable[i] != 0;
	ago(a, sizeof(a), k.c->start_ns);
	ago(b, sizeof(b), k.c->stop_ns);
	printf("trace:    %s\n", dir);
	if (t && ktr_info(t)->channel[0])
		printf("channel:  %s (pid %" PRIu32 ", %s)\n", ktr_info(t)->channel, k.c->owner_pid,
		       ktr_info(t)->comm[0] ? ktr_info(t)->comm : "?");
	else
		printf("channel:  pid %" PRIu32 "\n", k.c->owner_pid);
	if (!kt_pid_alive(k.c->owner_pid))
		printf("state:    ended (pid %" PRIu32 " has exited; it was %s: last start %s, last stop %s)\n",
		       k.c->owner_pid,
		       __atomic_load_n(&k.c->state, __ATOMIC_ACQUIRE) == KTRACE_STATE_RUNNING ? "running" : "stopped",
		       a, b);
	else
		printf("state:    %s (last start %s, last stop %s)\n",
		       __atomic_load_n(&k.c->state, __ATOMIC_ACQUIRE) == KTRACE_STATE_RUNNING ? "running" : "stopped",
		       a, b);
	printf("mode:     %s, %s streams%s\n", k.c->flags & KTRACE_FLIGHT_CHANNEL ? "flight" : "discard",
	       k.c->flags & KTRACE_GLOBAL_CHANNEL ? "global" : "per-thread",
	       k.c->flags & KTRACE_DISABLE_STATE ? ", state control disabled" : "");
	printf("buffers:  %" PRIu32 " streams x %" PRIu32 " sub-buffers x %" PRIu32 " bytes\n",
	       k.c->nstreams, k.c->buf_nr, k.c->buf_size);
	printf("events:   %u of %u ids enabled\n", enabled, KTRACE_ENABLE_MAP_SIZE);
	printf("\n%6s %-7s %8s %8s %12s %12s %12s\n", "stream", "kind", "owner", "pid", "written",
	       "dropped", "overwritten");
	for (uint32_t i = 0; i < k.c->nstreams; i++) {
		const struct ktrace_stream_ctl *s = &k.s[i];
		uint64_t w = __atomic_load_n(&s->written, __ATOMIC_RELAXED);
		uint64_t d = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
		uint64_t o = __atomic_load_n(&s->overwritten, __ATOMIC_RELAXED);
		uint32_t owner = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);

		printf("%6" PRIu32 " %-7s %8s %8" PRIu32 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", i,
		       kind_name(s->kind), owner ? (snprintf(a, sizeof(a), "%" PRIu32, owner), a) : "-",
		       s->pid, w, d, o);
		tw += w;
		td += d;
		to += o;
	}
	printf("%6s %-7s %8s %8s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", "total", "", "", "", tw,
	       td, to);
	ktr_close(t);
	ctl_close(&k);
	return 0; /* standard output is checked by the dispatcher */
}

static int do_enable(const char *dir, const char *spec, int on)
{
	struct ctl k;
	struct ktr_trace *t;
	uint8_t *want;
	const char *m;
	int n;

	if (ctl_open(&k, dir, 1))
		return 1;
	t = ktr_open(dir);
	want = calloc(1, KTRACE_ENABLE_MAP_SIZE);
	if (!t || !want) {
		cli_error(CMD, "out of memory");
		n = -ENOMEM;
		goto out;
	}
	while ((m = ktr_diag_next(t)))
		;
	n = ktr_resolve_events(t, spec, want);
	if (n < 0) {
		cli_error(CMD, "no event '%s' in %s/metadata (a catalogue name, FUNC:entry, FUNC:*, an id or all)",
			  spec, dir);
		goto out;
	}
	for (unsigned i = 0; i < KTRACE_ENABLE_MAP_SIZE; i++)
		if (want[i])
			__atomic_store_n(&k.enable[i], (uint8_t)(on ? 1 : 0), __ATOMIC_RELAXED);
	printf("%s %d event id%s\n", on ? "enabled" : "disabled", n, n == 1 ? "" : "s");
out:
	free(want);
	ktr_close(t);
	ctl_close(&k);
	return n == -EINVAL ? 2 : n < 0 ? 1 : 0;
}

int cli_dump(const char *cmd, struct kc_session *s, const char *dir, FILE *out, const char *prefix)
{
	struct kc_snapshot snap;
	int rc = kc_snapshot(s, &snap);

	if (rc == -EINVAL) {
		cli_error(cmd, "%s: not a flight recording: its records are written to %s as they "
			       "come (record --flight keeps them in memory for dumps)", dir, dir);
		return 1;
	}
	if (rc == -ENOENT) {
		cli_error(cmd, "%s: nothing is recording yet (no live channel in the session)", dir);
		return 1;
	}
	if (rc < 0)
		return 1;
	fprintf(out, "%s%s: %llu records in %llu sub-buffers (%.1f MiB)", prefix, snap.dir,
		(unsigned long long)snap.records, (unsigned long long)snap.subbufs,
		(double)snap.bytes / 1048576);
	if (snap.channels > 1)
		fprintf(out, ", %u channels (each in CHANDIR.dump-%u)", snap.channels, snap.n);
	if (snap.overwritten)
		fprintf(out, "; %llu older records overwritten before",
			(unsigned long long)snap.overwritten);
	if (snap.skipped)
		fprintf(out, "; %llu sub-buffers being rewritten left out",
			(unsigned long long)snap.skipped);
	fputc('\n', out);
	return 0;
}

/* `ktrace ctl DIR dump`: the rings of a `record --flight` session into DIR.dump-N. */
static int do_dump(const char *dir)
{
	char err[PATH_MAX + 256];
	struct kc_session *s;
	int rc;

	if (cli_check_trace(CMD, dir))
		return 1;
	s = kc_open(dir, CMD, err, sizeof(err));
	if (!s) {
		if (strstr(err, "nothing to recover"))
			cli_error(CMD, "%s: no recording in progress (no %s/session): dumps are taken "
				       "while `ktrace record --flight` runs; a finished recording's "
				       "trace is %s itself", dir, dir, dir);
		else
			fprintf(stderr, "%s\n", err);
		return 1;
	}
	rc = cli_dump(CMD, s, dir, stdout, "");
	kc_close(s, 0);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *dir, *action;
	int nargs, rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, NULL, NULL);

	if (rc != CLI_OPTS_GO)
		return rc;
	nargs = argc - optind;
	if (nargs < 2) {
		cli_error(CMD, nargs ? "missing action: start, stop, status, dump, enable, disable or kft (see ktrace ctl --help)"
				     : "missing trace directory (see ktrace ctl --help)");
		return 2;
	}
	dir = argv[optind];
	action = argv[optind + 1];
	if (!strcmp(action, "kft")) {
		/* `ktrace ctl DIR kft CMD...` is `ktrace kft DIR CMD...`: the
		 * function tracer's run (prime, start, stop, load, status). */
		const struct ktrace_cmd *kft = cli_find_command("kft");
		char **av = calloc((size_t)nargs + 1, sizeof(*av));

		if (!kft || !av) {
			free(av);
			cli_error(CMD, "the function tracer is not built in");
			return 1;
		}
		av[0] = "kft";
		av[1] = (char *)dir;
		for (int i = 2; i < nargs; i++)
			av[i] = argv[optind + i];
		cli_getopt_reset();
		rc = kft->run(nargs, av);
		free(av);
		return rc;
	}
	if (!strcmp(action, "enable") || !strcmp(action, "disable")) {
		if (nargs != 3) {
			cli_error(CMD, nargs < 3 ? "'%s' needs an EVENT (see ktrace ctl --help)"
						 : "'%s' takes one EVENT (see ktrace ctl --help)",
				  action);
			return 2;
		}
		return do_enable(dir, argv[optind + 2], action[0] == 'e');
	}
	if (strcmp(action, "start") && strcmp(action, "stop") && strcmp(action, "status") &&
	    strcmp(action, "dump")) {
		cli_error(CMD, "unknown action '%s': start, stop, status, dump, enable, disable or kft",
			  action);
		return 2;
	}
	if (nargs != 2) {
		cli_error(CMD, "unexpected argument '%s' (see ktrace ctl --help)", argv[optind + 2]);
		return 2;
	}
	if (!strcmp(action, "status"))
		return do_status(dir);
	if (!strcmp(action, "dump"))
		return do_dump(dir);
	return do_state(dir, !strcmp(action, "start"));
}

KTRACE_COMMAND_OPTS(ctl, "start, stop, inspect a channel or switch its events", run, cmd_opts);
