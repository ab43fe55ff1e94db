/*
 * cli/kft_kernel.c - `ktrace kft --kernel`: KFT in the kernel (seed 002's
 * /proc/kft), driven from the command line.
 *
 *   ktrace kft --kernel [status]          cat /proc/kft
 *   ktrace kft --kernel load FILE|-       write a configuration (one write)
 *   ktrace kft --kernel prime|start|stop  write a command
 *   ktrace kft --kernel extract DST       copy the log into trace directory DST
 *
 * ktrace.ko (kmod/kft_*.c) parses configurations itself, with the same
 * parser (kft/config.c) as `ktrace record -c`, and resolves function names
 * by probing them, so `load` passes the file through unchanged.  A refused
 * write is explained by the `error:` line of /proc/kft, which `load`
 * prints as FILE:LINE:COL: message.
 *
 * `extract` reads /proc/kft_data first (the module enters the call sites
 * of the records it returns), then /proc/kft_callsites and /proc/kft, and
 * writes DST/cpu0, DST/callsites, DST/kft-status, DST/metadata (one shared
 * packed stream, clock mono) and DST/kallsyms: the kernel's function
 * symbols from /proc/kallsyms (root only: others see zero addresses), or
 * from a System.map given with -m, so the trace can be read later and
 * elsewhere (docs/FORMAT.md, "Kernel traces").
 *
 * --proc DIR reads DIR/kft... instead of /proc/kft... (tests).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <ktrace/format.h>

#include "cli/cli.h"
#include "kclient/internal.h"
#include "lib/safefile.h"

#define CMD "kft"
#define KFT_TEXT_MAX (64u * 1024u) /* what /proc/kft takes in one write */
#define KFT_DATA_SUBBUF 65536u     /* /proc/kft_data's sub-buffer size */

void kft_kernel_help(FILE *out)
{
	fprintf(out,
		"usage: ktrace kft --kernel [--proc DIR] [status]\n"
		"       ktrace kft --kernel [--proc DIR] load FILE|-\n"
		"       ktrace kft --kernel [--proc DIR] prime|start|stop\n"
		"       ktrace kft --kernel [--proc DIR] [-m SYSTEM.MAP] extract DST\n"
		"\n"
		"Drive KFT in the kernel (ktrace.ko's /proc/kft, seed 002): the configured\n"
		"functions (triggers and funclist) are probed with kretprobes, entry and exit\n"
		"with duration.  For every kernel function use ktrace kft --tracefs.\n"
		"\n"
		"  status        the run's state, probes, log use, counters, configuration\n"
		"  load FILE     load a configuration (docs/KFT-CONFIG.md; - reads stdin);\n"
		"                function names or 0x addresses; a bad one is refused and\n"
		"                the loaded configuration stays\n"
		"  prime         arm the run: it starts at its start trigger (at once if none)\n"
		"  start, stop   start or stop recording now\n"
		"  extract DST   copy the log (/proc/kft_data), its call sites, the status\n"
		"                and the kernel's function symbols into trace directory DST\n"
		"                (ktrace kd, addr2sym and print read it)\n"
		"\n"
		"  -m, --system-map FILE  symbols for extract from FILE instead of\n"
		"                /proc/kallsyms (addresses must match: no KASLR offset)\n"
		"  --proc DIR    the kft files are in DIR instead of /proc\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 done, 1 refused (bad configuration: FILE:LINE:COL: message;\n"
		"a command the run's state refuses; module not loaded), 2 usage error.\n");
}

/* Read a whole file (also /proc files, whose size is 0) into memory. */
static char *slurp(const char *path, size_t *len, size_t max)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	size_t cap = 0, n = 0;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			size_t ncap = cap ? 2 * cap : 65536;
			char *p = ncap > max + 2 ? NULL : realloc(buf, ncap);

			if (!p) {
				free(buf);
				buf = NULL;
				errno = p ? ENOMEM : EFBIG;
				break;
			}
			buf = p;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (fd > 0)
		close(fd);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

int kft_kdir_create(const char *dst)
{
	char path[4200];
	size_t len = 0;
	char *meta;
	DIR *d;
	struct dirent *e;
	int used = 0;

	/* yours, not a link, holding nothing or a trace (lib/safefile.h) */
	if (cli_trace_dir(CMD, dst, KSF_CREATE | KSF_TRACE) < 0)
		return -1;
	/* Reuse an empty directory or an earlier kernel KFT trace, nothing else. */
	d = opendir(dst);
	while (d && (e = readdir(d)))
		used |= strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	if (!used)
		return 0;
	snprintf(path, sizeof(path), "%s/metadata", dst);
	meta = slurp(path, &len, 1 << 24);
	if (meta && strstr(meta, "\nchannel kft\n") && strstr(meta, "\nscope global\n")) {
		free(meta);
		return 0;
	}
	free(meta);
	cli_error(CMD, "%s: exists and is not a kernel KFT trace: not overwriting it (choose another directory)",
		  dst);
	return -1;
}

int kft_kdir_symbols(const char *dst, const char *kallsyms)
{
	size_t len = 0, out, kept, nonzero;
	char *text = slurp(kallsyms, &len, (size_t)1 << 30), *buf;
	int rc;

	if (!text) {
		cli_error(CMD, "%s: %s", kallsyms, strerror(errno));
		return -1;
	}
	buf = malloc(len + 1);
	if (!buf) {
		free(text);
		cli_error(CMD, "%s: out of memory", kallsyms);
		return -1;
	}
	out = kft_ksyms_filter(text, len, buf, &kept, &nonzero);
	free(text);
	if (!kept || !nonzero) {
		free(buf);
		cli_error(CMD, "warning: %s: %s: trace addresses stay unnamed", kallsyms,
			  kept ? "all addresses are 0 (run as root, or see kptr_restrict)"
			       : "no function symbols");
		return 0;
	}
	rc = ksf_replace(dst, "kallsyms", buf, out);
	free(buf);
	if (rc < 0) {
		cli_error(CMD, "%s/kallsyms: %s", dst, strerror(-rc));
		return -1;
	}
	return 1;
}

struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		size_t cap;
		char *p;

		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		cap = t->cap ? 2 * t->cap : 8192;
		while (cap <= t->len + (size_t)n)
			cap *= 2;
		p = realloc(t->buf, cap);
		if (!p) {
			t->failed = 1;
			return;
		}
		t->buf = p;
		t->cap = cap;
	}
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* `thread TID PID COMM` for every task listed in @procdir. */
static void add_threads(struct text *t, const char *procdir)
{
	DIR *d = opendir(procdir);
	struct dirent *p;

	if (!d)
		return;
	while ((p = readdir(d))) {
		char path[600];
		DIR *td;
		struct dirent *q;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/task", procdir, p->d_name);
		td = opendir(path);
		if (!td)
			continue;
		while ((q = readdir(td))) {
			char cpath[900], comm[64] = "";
			FILE *f;

			if (q->d_name[0] < '1' || q->d_name[0] > '9')
				continue;
			snprintf(cpath, sizeof(cpath), "%s/%s/comm", path, q->d_name);
			f = fopen(cpath, "re");
			if (!f)
				continue;
			if (fgets(comm, sizeof(comm), f)) {
				comm[strcspn(comm, "\n")] = '\0';
				add(t, "thread %s %s %s\n", q->d_name, p->d_name, comm[0] ? comm : "?");
			}
			fclose(f);
		}
		closedir(td);
	}
	closedir(d);
}

int kft_kdir_metadata(const char *dst, const char *source, uint32_t buf_size, int have_syms,
		      const char *procdir)
{
	struct text t = { 0 };
	struct utsname u;
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);
	int rc;

	add(&t, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	add(&t, "# KFT kernel trace from %s (ktrace kft)\n", source);
	add(&t, "clock mono\n");
	add(&t, "calib %" PRIu64 " %" PRIu64 "\n", mono / 2, mono / 2);
	add(&t, "calib %" PRIu64 " %" PRIu64 "\n", mono, mono);
	if (uname(&u) == 0) {
		add(&t, "host %s\n", u.nodename);
		add(&t, "kernel %s\n", u.release);
		add(&t, "machine %s\n", u.machine);
	}
	add(&t, "cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	add(&t, "channel kft\n");
	add(&t, "mode discard\n");
	add(&t, "scope global\n");
	add(&t, "buf-size %u\n", buf_size);
	add(&t, "buf-nr 1\n");
	add(&t, "layout packed\n");
	add(&t, "stream 0 shared cpu0\n");
	/* KFT's times count from boot: CLOCK_MONOTONIC 0. */
	add(&t, "created-ns 0\n");
	add(&t, "realtime-ns %" PRIu64 "\n", real - mono);
	if (have_syms)
		add(&t, "# kernel function symbols: kallsyms (docs/FORMAT.md, \"Kernel traces\")\n");
	add_threads(&t, procdir);
	if (t.failed) {
		free(t.buf);
		cli_error(CMD, "%s/metadata: out of memory", dst);
		return -1;
	}
	rc = ksf_replace(dst, "metadata", t.buf, t.len);
	free(t.buf);
	if (rc < 0) {
		cli_error(CMD, "%s/metadata: %s", dst, strerror(-rc));
		return -1;
	}
	return 0;
}

/* ---- /proc/kft --------------------------------------------------------- */

struct kk {
	const char *proc;
	char kft[4200], data[4200], sites[4200];
};

/* The value of the status's `error:` line (static buffer), or NULL. */
static const char *status_error(const struct kk *k)
{
	static char msg[512];
	size_t len;
	char *s = slurp(k->kft, &len, 1 << 20), *p;

	if (!s)
		return NULL;
	p = strstr(s, "\nerror: ");
	if (!p) {
		free(s);
		return NULL;
	}
	p += 8;
	p[strcspn(p, "\n")] = '\0';
	snprintf(msg, sizeof(msg), "%s", p);
	free(s);
	return strcmp(msg, "-") ? msg : NULL;
}

static int no_module(const struct kk *k, const char *path)
{
	cli_error(CMD, "%s: %s%s", path, strerror(errno),
		  errno == ENOENT ? " (is ktrace.ko loaded? modprobe ktrace)" : "");
	return 1;
}

/* One write of @len bytes to /proc/kft.  Return: 0 or errno. */
static int write_kft(const struct kk *k, const char *buf, size_t len)
{
	int fd = open(k->kft, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t w;

	if (fd < 0)
		return errno;
	w = write(fd, buf, len);
	if (w < 0)
		err = errno;
	else if ((size_t)w != len)
		err = EIO;
	close(fd);
	return err;
}

static int do_status(const struct kk *k)
{
	size_t len;
	char *s = slurp(k->kft, &len, 1 << 20);

	if (!s)
		return no_module(k, k->kft);
	fwrite(s, 1, len, stdout);
	free(s);
	return 0;
}

static int do_load(const struct kk *k, const char *file)
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	size_t len = 0;
	char *text = slurp(file, &len, KFT_TEXT_MAX);
	int err;

	if (!text) {
		cli_error(CMD, "%s: %s", name,
			  errno == EFBIG ? "larger than 64 KiB (what /proc/kft takes)" : strerror(errno));
		return 1;
	}
	if (access(k->kft, W_OK) < 0) {
		free(text);
		return no_module(k, k->kft);
	}
	err = len ? write_kft(k, text, len) : EINVAL;
	free(text);
	if (!err)
		return 0;
	if (err == EINVAL || err == ENOMEM) {
		const char *msg = status_error(k);

		if (!len)
			cli_error(CMD, "%s: empty configuration", name);
		else if (msg && msg[0] >= '0' && msg[0] <= '9')
			cli_error(CMD, "%s:%s", name, msg);
		else
			cli_error(CMD, "%s: %s", name, msg ? msg : strerror(err));
		return 1;
	}
	cli_error(CMD, "%s: %s", k->kft, strerror(err));
	return 1;
}

static int do_command(const struct kk *k, const char *what)
{
	int err = write_kft(k, what, strlen(what));
	const char *msg;

	if (!err)
		return 0;
	if (err == ENOENT || err == EACCES || err == EPERM) {
		errno = err;
		return no_module(k, k->kft);
	}
	msg = status_error(k);
	cli_error(CMD, "%s", msg ? msg : strerror(err));
	return 1;
}

static int do_extract(const struct kk *k, const char *dst, const char *map)
{
	size_t dlen = 0, slen = 0, klen = 0;
	char *data, *sites = NULL, *status = NULL;
	char kallsyms[4200];
	int rc = 1, syms, e;

	/* The data first: reading it enters its call sites in the table. */
	data = slurp(k->data, &dlen, (size_t)1 << 31);
	if (!data)
		return no_module(k, k->data);
	sites = slurp(k->sites, &slen, (size_t)1 << 30);
	if (!sites) {
		no_module(k, k->sites);
		goto out;
	}
	status = slurp(k->kft, &klen, 1 << 20);
	if (!status) {
		no_module(k, k->kft);
		goto out;
	}
	if (kft_kdir_create(dst) < 0)
		goto out;
	if ((e = ksf_replace(dst, "cpu0", data, dlen)) < 0 ||
	    (e = ksf_replace(dst, "callsites", sites, slen)) < 0 ||
	    (e = ksf_replace(dst, "kft-status", status, klen)) < 0) {
		cli_error(CMD, "%s: cannot write: %s", dst, strerror(-e));
		goto out;
	}
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", k->proc);
	syms = kft_kdir_symbols(dst, map ? map : kallsyms);
	if (syms < 0)
		goto out;
	if (kft_kdir_metadata(dst, k->data, KFT_DATA_SUBBUF, syms > 0, k->proc) < 0)
		goto out;
	printf("%s: %zu bytes of calls, %zu call sites\n", dst, dlen,
	       slen > sizeof(struct ktrace_callsites) ?
		       (slen - sizeof(struct ktrace_callsites)) / sizeof(struct ktrace_callsite) : 0);
	rc = 0;
out:
	free(data);
	free(sites);
	free(status);
	return rc;
}

int kft_kernel_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "system-map", required_argument, NULL, 'm' },
		{ "proc", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *what, *map = NULL;
	struct kk k = { "/proc", "", "", "" };
	int c, need;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, "+:hm:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			kft_kernel_help(stdout);
			return 0;
		case 'm':
			map = optarg;
			break;
		case 'P':
			k.proc = optarg;
			break;
		default:
			return cli_bad_option(CMD, c, argc, argv);
		}
	}
	snprintf(k.kft, sizeof(k.kft), "%s/kft", k.proc);
	snprintf(k.data, sizeof(k.data), "%s/kft_data", k.proc);
	snprintf(k.sites, sizeof(k.sites), "%s/kft_callsites", k.proc);
	what = optind < argc ? argv[optind++] : "status";
	need = !strcmp(what, "load") || !strcmp(what, "extract");
	if (strcmp(what, "status") && strcmp(what, "prime") && strcmp(what, "start") &&
	    strcmp(what, "stop") && !need) {
		cli_error(CMD, "unknown command '%s': expected status, load, prime, start, stop or extract (see ktrace kft --kernel --help)",
			  what);
		return 2;
	}
	if (need && optind >= argc) {
		cli_error(CMD, "%s needs %s", what, strcmp(what, "load") ? "a trace directory" : "a configuration file (or -)");
		return 2;
	}
	if (optind + need < argc) {
		cli_error(CMD, "unexpected argument '%s'", argv[optind + need]);
		return 2;
	}
	if (map && strcmp(what, "extract")) {
		cli_error(CMD, "-m applies to extract only");
		return 2;
	}
	if (!strcmp(what, "status"))
		return do_status(&k);
	if (!strcmp(what, "load"))
		return do_load(&k, argv[optind]);
	if (!strcmp(what, "extract"))
		return do_extract(&k, argv[optind], map);
	return do_command(&k, what);
}
