/*
 * tests/kft_kernel_cli.c - `ktrace kft --kernel` and `ktrace kft --tracefs`
 * without a kernel module: --proc DIR points the command at fake
 * /proc/kft, /proc/kft_data, /proc/kft_callsites and /proc/kallsyms files
 * laid out as ktrace.ko writes them (kmod/kft_probes.c), so `extract` and
 * the trace directory it writes (docs/FORMAT.md, "Kernel traces") are
 * checked with the reader library; and the usage and refusal paths of
 * both.  The module itself is tested in the VM (kmod/tests/suite_kft.sh).
 *
 * test: serial (it arms the host kernel's tracing; `make test` runs such
 * tests one at a time, the others in parallel)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ktrace/format.h>

#include "reader/reader.h"
#include "tests/tap.h"

static char ktrace_bin[4096], tmp[64];

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fwrite(p, 1, n, f);
	return fclose(f);
}

static char *read_file(const char *dir, const char *name, size_t *n)
{
	char path[4200];
	FILE *f;
	char *buf;
	long sz;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)sz + 1);
	if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (n)
		*n = (size_t)sz;
	return buf;
}

/* Run ktrace with @args (a shell word list); stdout+stderr into *@out. */
static int run(const char *args, char **out)
{
	char cmd[8192], outf[128];
	int st;

	snprintf(outf, sizeof(outf), "%s/out", tmp);
	snprintf(cmd, sizeof(cmd), "%s %s > %s 2>&1", ktrace_bin, args, outf);
	st = system(cmd);
	if (out) {
		*out = read_file(tmp, "out", NULL);
		if (!*out)
			*out = strdup("");
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A /proc/kft_data image: one shared packed sub-buffer of 3 CALL records. */
static size_t make_data(uint8_t *buf)
{
	struct ktrace_subbuf *sb = (struct ktrace_subbuf *)buf;
	uint64_t *w = (uint64_t *)(buf + sizeof(*sb));
	static const struct {
		uint64_t ts, dur;
		uint32_t site, pid, depth, sig, flags;
	} r[3] = {
		{ 5000000000ull, 2000, 0, 42, 1, 0, 0 },
		{ 5000010000ull, 15000, 1, 42, 0, 0, 0 },
		{ 5000020000ull, 3000, 0, 0, 0, 2, KTRACE_CALLF_UNFINISHED },
	};
	size_t n = 0;

	memset(sb, 0, sizeof(*sb));
	sb->magic = KTRACE_SUBBUF_MAGIC;
	sb->hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	sb->flags = KTRACE_SBF_CTX | KTRACE_SBF_CLOSED;
	sb->first_ts = sb->first_ns = r[0].ts;
	sb->last_ts = r[2].ts;
	sb->cpu = 0xffff;
	sb->nrec = 3;
	for (int i = 0; i < 3; i++) {
		w[n++] = KTRACE_REC_HDR(r[i].ts, KTRACE_CLASS_CALL, KTRACE_CALL_WORDS,
					KTRACE_CALL_ID(r[i].site));
		w[n++] = KTRACE_CTX(r[i].pid, 1, r[i].sig);
		w[n++] = KTRACE_CALL_W0(r[i].dur, r[i].site, r[i].depth, r[i].sig, r[i].flags);
	}
	sb->used = (uint32_t)(n * 8);
	return sizeof(*sb) + n * 8;
}

static size_t make_sites(uint8_t *buf)
{
	struct ktrace_callsites *h = (struct ktrace_callsites *)buf;
	struct ktrace_callsite *e = (struct ktrace_callsite *)(h + 1);

	memset(h, 0, sizeof(*h));
	h->magic = KTRACE_CALLSITES_MAGIC;
	h->version = KTRACE_CALLSITES_VERSION;
	h->hdr_size = sizeof(*h);
	h->entry_size = sizeof(*e);
	h->capacity = h->count = 2;
	e[0].func = 0xffffffff81000100ull; /* kft_outer */
	e[0].site = 0xffffffff81000290ull; /* in kft_caller+0x10 */
	e[1].func = 0xffffffff81000200ull; /* kft_inner */
	e[1].site = 0xffffffff81000120ull; /* in kft_outer+0x20 */
	return sizeof(*h) + 2 * sizeof(*e);
}

static const char status[] = "tracer: kretprobes on the configured functions\n"
			     "probes: 2 (calls missed 0)\n"
			     "error: 2:8: unknown function 'nope'\n"
			     "state: stopped\n"
			     "started: 5000000 us by command\n";

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000100 T kft_outer\n"
			       "ffffffff81000200 t kft_inner\n"
			       "ffffffff81000280 T kft_caller\n"
			       "ffffffff82000000 D some_data\n"
			       "ffffffffc0000000 t modfn\t[mymod]\n";

int main(void)
{
	const char *b = getenv("KTRACE_BUILD") ? getenv("KTRACE_BUILD") : "build";
	char proc[128], dst[128], args[1024], *out, *s;
	uint8_t data[4096], sites[256];
	size_t dlen, slen, n;
	struct ktr_trace *t;
	struct ktr_rec r;
	struct ktr_call c;
	struct stat st;
	int rc, ncalls = 0, good = 0;

	snprintf(ktrace_bin, sizeof(ktrace_bin), "%s/ktrace", b);
	snprintf(tmp, sizeof(tmp), "/tmp/kft_kernel_cli.XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(dst, sizeof(dst), "%s/trace", tmp);
	mkdir(proc, 0700);
	dlen = make_data(data);
	slen = make_sites(sites);
	write_file(proc, "kft_data", data, dlen);
	write_file(proc, "kft_callsites", sites, slen);
	write_file(proc, "kft", status, strlen(status));
	write_file(proc, "kallsyms", kallsyms, strlen(kallsyms));

	/* status */
	snprintf(args, sizeof(args), "kft --kernel --proc %s status", proc);
	rc = run(args, &out);
	ok(rc == 0 && !strcmp(out, status), "status prints /proc/kft");
	free(out);

	/* extract */
	snprintf(args, sizeof(args), "kft --kernel --proc %s extract %s", proc, dst);
	rc = run(args, &out);
	is_int(rc, 0, "extract DST");
	ok(strstr(out, "3 call sites") == NULL && strstr(out, "2 call sites") != NULL,
	   "extract says how much it copied: %s", out);
	free(out);
	ok(stat(dst, &st) == 0 && (st.st_mode & 0777) == 0700, "DST is 0700");
	snprintf(args, sizeof(args), "%s/cpu0", dst);
	ok(stat(args, &st) == 0 && (st.st_mode & 0777) == 0600, "DST/cpu0 is 0600");
	s = read_file(dst, "cpu0", &n);
	ok(s && n == dlen && !memcmp(s, data, n), "cpu0 is /proc/kft_data, byte for byte");
	free(s);
	s = read_file(dst, "callsites", &n);
	ok(s && n == slen && !memcmp(s, sites, n), "callsites is /proc/kft_callsites");
	free(s);
	s = read_file(dst, "kft-status", NULL);
	ok(s && !strcmp(s, status), "kft-status is /proc/kft");
	free(s);
	s = read_file(dst, "kallsyms", NULL);
	ok(s && strstr(s, " kft_outer\n") && strstr(s, " kft_inner\n") && strstr(s, "modfn\t[mymod]") &&
		   !strstr(s, "some_data"),
	   "kallsyms keeps the function symbols (t T), not data");
	free(s);
	s = read_file(dst, "metadata", NULL);
	ok(s && strstr(s, "ktrace-format 1\n") && strstr(s, "\nclock mono\n") &&
		   strstr(s, "\nscope global\n") && strstr(s, "\nlayout packed\n") &&
		   strstr(s, "\nstream 0 shared cpu0\n") && strstr(s, "\nchannel kft\n") &&
		   strstr(s, "\ncreated-ns 0\n"),
	   "metadata: clock mono, one shared packed stream, channel kft, origin boot");
	free(s);

	/* The reader sees the calls, with the kernel's names. */
	t = ktr_open(dst);
	ok(t != NULL, "ktr_open(DST)");
	while (t && ktr_next(t, &r) == 1) {
		if (r.kind != KTR_RECORD || !ktr_call_decode(t, &r, &c))
			continue;
		ncalls++;
		if (ncalls == 1)
			good += c.func == 0xffffffff81000100ull && c.site == 0xffffffff81000290ull &&
				c.dur_ns == 2000 && c.tid == 42 && c.depth == 1 && c.sig == 0 &&
				c.entry_ns == 5000000000ull - 2000;
		if (ncalls == 2)
			good += c.func == 0xffffffff81000200ull && c.dur_ns == 15000 && c.depth == 0;
		if (ncalls == 3)
			good += c.sig == 2 && c.tid == 0 && (c.flags & KTRACE_CALLF_UNFINISHED);
	}
	is_int(ncalls, 3, "three CALL records");
	is_int(good, 3, "function, call site, duration, thread, depth, context and flags decode");
	if (t) {
		struct ktr_syms *sy = ktr_syms_new(t);
		struct ktr_sym sym;
		char name[128];

		ok(sy && ktr_sym_lookup(sy, 0xffffffff81000200ull, 0, &sym)->name &&
			   !strcmp(sym.name, "kft_inner"),
		   "the symbolizer names kernel functions from DIR/kallsyms");
		ok(sy && !strcmp(ktr_sym_format(ktr_sym_lookup(sy, 0xffffffff81000290ull, KTR_SYM_RETADDR,
							       &sym),
						2, name, sizeof(name)),
				 "kft_caller+0x10"),
		   "and call sites as function+offset (%s)", name);
		ktr_syms_free(sy);
		is_int((int)ktr_error_count(t), 0, "no reader error");
		ktr_close(t);
	}
	snprintf(args, sizeof(args), "kd %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, "kft_outer") && strstr(out, "kft_inner"), "ktrace kd names the functions");
	free(out);
	/* issue 15: no "? (pid 0)" program, no "0/42" task on a kernel trace */
	snprintf(args, sizeof(args), "addr2sym %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, "Function trace of the kernel") && !strstr(out, "(pid 0)"),
	   "addr2sym: a function trace of the kernel, not of '? (pid 0)'");
	free(out);
	snprintf(args, sizeof(args), "info %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, "program         : none (a kernel trace)"), "info: no program");
	free(out);
	snprintf(args, sizeof(args), "print %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, " ?/42 ") && !strstr(out, " 0/42 "),
	   "print: thread 42 of an unknown process is ?/42, not 0/42");
	free(out);

	/* extract again into the same directory: allowed (an earlier KFT trace) */
	snprintf(args, sizeof(args), "%s/42", proc);
	mkdir(args, 0700);
	{
		static const char st42[] = "Name:\tkft worker\nUmask:\t0022\nTgid:\t40\nPid:\t42\n";

		write_file(args, "status", st42, sizeof(st42) - 1);
	}
	snprintf(args, sizeof(args), "kft --kernel --proc %s extract %s", proc, dst);
	is_int(run(args, NULL), 0, "extract into an earlier kernel KFT trace replaces it");
	/* ... and names thread 42, which PROC/42/status says is alive */
	s = read_file(dst, "threads", NULL);
	ok(s && !strcmp(s, "42 40 kft worker\n"), "DST/threads names the calls' thread from PROC/42/status");
	free(s);
	snprintf(args, sizeof(args), "print %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, " 40/42 ") && !strstr(out, "?/42"), "print: 40/42 now");
	free(out);
	snprintf(args, sizeof(args), "kd -c %s", dst);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, "kft worker"), "kd -c names the thread");
	if (!strstr(out ? out : "", "kft worker"))
		diag("%s", out);
	free(out);
	/* ... but not into another kind of trace */
	snprintf(args, sizeof(args), "%s/other", tmp);
	mkdir(args, 0700);
	write_file(args, "metadata", "ktrace-format 1\nscope thread\n", 29);
	snprintf(args, sizeof(args), "kft --kernel --proc %s extract %s/other", proc, tmp);
	rc = run(args, &out);
	ok(rc == 1 && strstr(out, "not overwriting"), "extract refuses to overwrite another trace: %s", out);
	free(out);
	s = read_file(tmp, "other/metadata", NULL);
	ok(s && !strcmp(s, "ktrace-format 1\nscope thread\n"), "which stays as it was");
	free(s);

	/* hidden addresses (not root): no kallsyms, a warning, the data still copied */
	write_file(proc, "kallsyms", "0000000000000000 T kft_outer\n", 29);
	snprintf(args, sizeof(args), "kft --kernel --proc %s extract %s/hidden", proc, tmp);
	rc = run(args, &out);
	ok(rc == 0 && strstr(out, "all addresses are 0"), "zero addresses: warning, trace still written");
	free(out);
	snprintf(args, sizeof(args), "%s/hidden/kallsyms", tmp);
	ok(access(args, F_OK) != 0, "and no kallsyms file");
	snprintf(args, sizeof(args), "%s/hidden/cpu0", tmp);
	ok(access(args, F_OK) == 0, "but cpu0");

	/* load passes the text through in one write; errors come from the status */
	write_file(tmp, "cfg", "trigger start entry kernel_clone\n", 33);
	snprintf(args, sizeof(args), "kft --kernel --proc %s load %s/cfg", proc, tmp);
	is_int(run(args, NULL), 0, "load FILE");
	s = read_file(proc, "kft", NULL);
	ok(s && !strncmp(s, "trigger start entry kernel_clone\n", 33), "the configuration was written unchanged");
	free(s);
	{
		char *big = malloc(70000);

		memset(big, '#', 70000);
		write_file(tmp, "big", big, 70000);
		free(big);
	}
	snprintf(args, sizeof(args), "kft --kernel --proc %s load %s/big", proc, tmp);
	rc = run(args, &out);
	ok(rc == 1 && strstr(out, "larger than 64 KiB"), "a configuration over 64 KiB is refused: %s", out);
	free(out);

	/* no module */
	rc = run("kft --kernel --proc /nonexistent-kft status", &out);
	ok(rc == 1 && strstr(out, "is ktrace.ko loaded?"), "no /proc/kft: says the module is missing");
	free(out);
	rc = run("kft --kernel --proc /nonexistent-kft extract /tmp/never-kft", &out);
	ok(rc == 1 && access("/tmp/never-kft", F_OK) != 0, "extract without the module creates nothing");
	free(out);

	/* usage errors */
	is_int(run("kft --kernel frob", NULL), 2, "unknown command: usage error");
	is_int(run("kft --kernel extract", NULL), 2, "extract without DST: usage error");
	is_int(run("kft --kernel -m /x status", NULL), 2, "-m outside extract: usage error");
	is_int(run("kft --kernel status extra", NULL), 2, "a stray argument: usage error");
	is_int(run("kft --kernel --bogus", NULL), 2, "unknown option: usage error");
	rc = run("kft --kernel --help", &out);
	ok(rc == 0 && strstr(out, "extract DST"), "--kernel --help");
	free(out);
	is_int(run("kft --tracefs -b 1", NULL), 2, "--tracefs -b 1: usage error");
	is_int(run("kft --tracefs -d soon", NULL), 2, "--tracefs -d soon: usage error");
	rc = run("kft --tracefs --help", &out);
	ok(rc == 0 && strstr(out, "function_graph"), "--tracefs --help");
	free(out);
	write_file(tmp, "watch", "watch stack 4096\n", 17);
	snprintf(args, sizeof(args), "kft --tracefs -c %s/watch -o %s/w", tmp, tmp);
	rc = run(args, &out);
	ok(rc == 1 && (strstr(out, "watch stack needs") || strstr(out, "kallsyms")),
	   "--tracefs refuses stack watches: %s", out);
	free(out);
	write_file(tmp, "badcfg", "filter mintime\n", 15);
	snprintf(args, sizeof(args), "kft --tracefs -c %s/badcfg -o %s/w", tmp, tmp);
	rc = run(args, &out);
	ok(rc == 1 && (strstr(out, "badcfg:1:15: expected a time") || strstr(out, "kallsyms")),
	   "--tracefs reports a bad configuration as FILE:LINE:COL: %s", out);
	free(out);

	snprintf(args, sizeof(args), "rm -rf %s", tmp);
	if (system(args) != 0)
		diag("could not remove %s", tmp);
	return done_testing();
}
