/*
 * cli/cmd_kft.c - `ktrace kft DIR [status|prime|start|stop|load FILE]`:
 * the dynamic side of the function tracer, what writing to and reading
 * from /proc/kft did in KFT (seed 002).
 *
 * The traced program and this command share DIR/kft (kft/runfile.h: struct
 * kft_file, then the engine's struct kft_run, then one counter block per
 * thread), mapped MAP_SHARED: commands run the engine's own transitions
 * (kft/engine.c) on the shared run, so the program needs no syscall, signal
 * or lock to see them.  `load` parses a configuration here; function names
 * are resolved against the live process with elfutils (libdwfl reads
 * /proc/PID/maps and the ELF files: KFT's sym2addr step, done for you) and
 * the loaded configuration holds addresses only.
 *
 * `status` sums the counter blocks and prints the run (state, start and stop
 * with reason and time, entries kept / unfinished / filtered per filter /
 * lost, lowest stack, the configuration), naming functions while the
 * program is alive.  Every command also rewrites DIR/kft-status.
 *
 * Exit status: 0 done; 1 DIR/kft missing or corrupt, the command does not
 * apply in the run's state, or the configuration is bad (FILE:LINE:COL:
 * message); 2 usage error.
 */
#include <elfutils/libdwfl.h>
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
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "lib/safefile.h"
#include "cli/cmd_kft.h"
#include "reader/reader.h"
#include "kft/runfile.h"
#include "lib/runtime.h"

#define CMD "kft"

/* What `ktrace kft --help` prints and its parser takes (cli/options.h). */
static const struct cli_cmd_opts cmd_opts = {
	.cmd = CMD,
	.usage =
		"usage: ktrace kft DIR [status]\n"
		"       ktrace kft DIR prime|start|stop\n"
		"       ktrace kft DIR load FILE|-\n"
		"\n"
		"Drive the function tracer (KFT) of the program recording into DIR, as\n"
		"/proc/kft did: read its status, load a configuration, prime, start or stop\n"
		"the run.  Works while the program runs (changes take effect at its next\n"
		"function call); status also works afterwards.\n"
		"\n"
		"  status      state, start and stop (reason, time), entries kept, unfinished,\n"
		"              filtered (per filter) and lost, lowest stack, configuration\n"
		"  load FILE   load a configuration (docs/KFT-CONFIG.md; - reads stdin); a\n"
		"              running run stops; function names are resolved in the live\n"
		"              program; the run is configured, or primed if FILE says prime\n"
		"  prime       arm the run: it starts at its start trigger (at once if none)\n"
		"  start       start recording now, whatever the trigger\n"
		"  stop        stop recording now\n",
	.opts = NULL, /* only --help; --kernel, --tracefs, --boot first: see run() */
	.tail =
		"Exit status: 0 done, 1 DIR/kft missing or corrupt, a command the run's\n"
		"state refuses, or a bad configuration (FILE:LINE:COL: message), 2 usage\n"
		"error.  See docs/KFT-CONFIG.md.\n"
		"\n"
		"The kernel (docs/KMOD.md, \"KFT in the kernel\"):\n"
		"  ktrace kft --kernel [status|load FILE|prime|start|stop|extract DST]\n"
		"              drive ktrace.ko's /proc/kft (kretprobes on chosen functions)\n"
		"  ktrace kft --tracefs [-c CONFIG] [-o DIR] [-- COMMAND]\n"
		"              every kernel function through function_graph (tracefs)\n"
		"  ktrace kft --boot [--tracefs|--kernel] [-m SYSTEM.MAP] CONFIG\n"
		"              print the boot parameters that run CONFIG from boot\n"
		"  ktrace kft --tracefs extract DST\n"
		"              the trace of a boot-time function_graph run\n"
		"  (ktrace kft --kernel --help, --tracefs --help, --boot --help)\n",
	/* stop at DIR: what follows are its command's words */
	.in_order = 1,
};

struct kft_map {
	char dir[4096];
	void *base;
	size_t size;
	struct kft_file *hdr;
	struct kft_run *run;
	struct kft_counters *blocks;
	Dwfl *dwfl; /* the live process's modules, or NULL */
	struct ktr_trace *trace;  /* when the program has ended: its recorded maps */
	struct ktr_syms *syms;
};

static int kmap_open(struct kft_map *m, const char *dir, int rw)
{
	char path[4200];
	struct stat st;
	int fd;

	memset(m, 0, sizeof(*m));
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/" KFT_FILE_NAME, dir);
	if (cli_check_trace(CMD, dir))
		return -1; /* a link, FIFO or device named like a trace file */
	/* never read or written through a link, never a FIFO or device */
	fd = rw ? open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : ksf_read_open(dir, KFT_FILE_NAME, 0);
	if (fd < 0) {
		int err = rw ? errno : -fd;

		cli_error(CMD, "%s: %s%s", path, ksf_read_why(err),
			  err == ENOENT ? " (not a trace of ktrace record?)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_error(CMD, "%s: %s", path, ksf_read_why(EINVAL));
		close(fd);
		return -1;
	}
	if (st.st_size < (off_t)sizeof(struct kft_file)) {
		cli_error(CMD, "%s: offset 0: too short for a KFT run file", path);
		close(fd);
		return -1;
	}
	m->size = (size_t)st.st_size;
	m->base = mmap(NULL, m->size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	close(fd);
	if (m->base == MAP_FAILED) {
		cli_error(CMD, "%s: cannot map: %s", path, strerror(errno));
		return -1;
	}
	m->hdr = m->base;
	if (m->hdr->magic != KFT_FILE_MAGIC) {
		cli_error(CMD, "%s: offset 0: bad magic 0x%08x", path, m->hdr->magic);
		return -1;
	}
	if (m->hdr->version != KFT_FILE_VERSION) {
		cli_error(CMD, "%s: offset 4: version %u, this ktrace knows %u", path, m->hdr->version,
			  KFT_FILE_VERSION);
		return -1;
	}
	if ((uint64_t)m->hdr->run_off + sizeof(struct kft_run) > m->size ||
	    (uint64_t)m->hdr->blocks_off + (uint64_t)m->hdr->nblocks * sizeof(struct kft_counters) >
		    m->size ||
	    m->hdr->run_off % 8 || m->hdr->blocks_off % 8) {
		cli_error(CMD, "%s: offset 16: run or counter table outside the file", path);
		return -1;
	}
	m->run = (struct kft_run *)((char *)m->base + m->hdr->run_off);
	m->blocks = (struct kft_counters *)((char *)m->base + m->hdr->blocks_off);
	if (m->run->magic != KFT_RUN_MAGIC || m->run->size != sizeof(struct kft_run)) {
		cli_error(CMD, "%s: offset %u: not a KFT run (bad magic or size)", path, m->hdr->run_off);
		return -1;
	}
	return 0;
}

/* Report the live program's modules to libdwfl (NULL if it is gone). */
static Dwfl *live_dwfl(uint32_t pid)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *d;

	if (!kt_pid_alive(pid))
		return NULL;
	d = dwfl_begin(&cb);
	if (!d)
		return NULL;
	if (dwfl_linux_proc_report(d, (pid_t)pid) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
		dwfl_end(d);
		return NULL;
	}
	return d;
}

struct lookup {
	const char *name;
	uint32_t len;
	uint64_t addr;
};

static int lookup_module(Dwfl_Module *mod, void **ud, const char *mname, Dwarf_Addr start,
			 void *arg)
{
	struct lookup *l = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)ud;
	(void)mname;
	(void)start;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && addr &&
		    strncmp(s, l->name, l->len) == 0 && s[l->len] == '\0') {
			l->addr = addr;
			return DWARF_CB_ABORT;
		}
	}
	return DWARF_CB_OK;
}

/* kft_resolve_fn over the live program (sym2addr). */
static int resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	struct kft_map *m = arg;
	struct lookup l = { name, len, 0 };

	if (!m->dwfl)
		return -ENOENT;
	dwfl_getmodules(m->dwfl, lookup_module, &l, 0);
	if (!l.addr)
		return -ENOENT;
	*addr = l.addr;
	return 0;
}

/* kft_name_fn: "name" or "name+0xoff" in the live program. */
static kt_u32 name_of(void *arg, kt_u64 addr, char *buf, kt_u32 size)
{
	struct kft_map *m = arg;
	Dwfl_Module *mod;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *s;
	int n;

	if (!m->dwfl && m->syms) {
		struct ktr_sym sym;

		ktr_sym_lookup(m->syms, addr, 0, &sym);
		if (!sym.name)
			return 0;
		ktr_sym_format(&sym, 1, buf, size);
		return (kt_u32)strlen(buf);
	}
	if (!m->dwfl || !(mod = dwfl_addrmodule(m->dwfl, addr)))
		return 0;
	s = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!s)
		return 0;
	n = off ? snprintf(buf, size, "%s+0x%" PRIx64, s, (uint64_t)off) : snprintf(buf, size, "%s", s);
	return n < 0 ? 0 : (kt_u32)n;
}

static char *status_text(struct kft_map *m, int with_names)
{
	static char buf[65536];
	struct kft_status st;
	size_t n;

	kft_status_begin(m->run, &st);
	for (uint32_t i = 0; i < m->hdr->nblocks; i++)
		kft_status_add(&st, &m->blocks[i]);
	n = (size_t)snprintf(buf, sizeof(buf), "pid: %u%s\n", m->hdr->pid,
			     kt_pid_alive(m->hdr->pid) ? "" : " (ended)");
	if (m->hdr->error[0])
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "error: %.*s\n",
				      (int)strnlen(m->hdr->error, sizeof(m->hdr->error)), m->hdr->error);
	kft_status_format(m->run, &st, buf + n, (kt_u32)(sizeof(buf) - n), with_names ? name_of : NULL,
			  m);
	return buf;
}

/* Rewrite DIR/kft-status (addresses only, as the program writes it). */
static void write_status(struct kft_map *m)
{
	int err;

	m->hdr->status_epoch = __atomic_load_n(&m->run->epoch, __ATOMIC_ACQUIRE);
	err = cli_write_file_atomic(m->dir, KFT_STATUS_NAME, status_text(m, 0));
	if (err < 0)
		cli_error(CMD, "%s/kft-status: cannot write: %s", m->dir, strerror(-err));
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t cap = 0, n = 0;
	char *buf = NULL;

	if (!f)
		return NULL;
	for (;;) {
		size_t r;

		if (n == cap) {
			char *p = cap >= (1u << 20) ? NULL : realloc(buf, cap ? 2 * cap : 4096);

			if (!p) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			buf = p;
			cap = cap ? 2 * cap : 4096;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

static int load(struct kft_map *m, const char *path)
{
	struct kft_config *cfg = calloc(1, sizeof(*cfg));
	struct kft_error err;
	char msg[600];
	size_t len = 0;
	char *text = read_all(path, &len);
	int rc = 1;

	if (!cfg || !text) {
		cli_error(CMD, "%s: cannot read: %s", strcmp(path, "-") ? path : "stdin", strerror(errno));
		goto out;
	}
	m->dwfl = live_dwfl(m->hdr->pid);
	if (kft_config_parse(cfg, text, len, m->dwfl ? resolve : NULL, m, &err) < 0) {
		kft_error_format(msg, sizeof(msg), strcmp(path, "-") ? path : "stdin", &err);
		cli_error(CMD, "%s%s", msg,
			  m->dwfl ? "" : " (the program has ended: names cannot be resolved)");
		goto out;
	}
	if (kft_load(m->run, cfg, ktrace_now()) < 0) {
		cli_error(CMD, "%s: the run refused the configuration", path);
		goto out;
	}
	m->hdr->error[0] = '\0';
	rc = 0;
out:
	free(text);
	free(cfg);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *dir, *what;
	struct kft_map m;
	int rc, cmd = 0;

	/* KFT in the kernel: cli/cmd_kft_kernel.c, cli/cmd_kft_tracefs.c */
	if (argc > 1 && !strcmp(argv[1], "--kernel"))
		return kft_run_kernel(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--tracefs"))
		return kft_run_tracefs(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--boot")) /* cli/cmd_kft_boot.c */
		return kft_run_boot(argc - 1, argv + 1);
	rc = cli_opts_parse(&cmd_opts, argc, argv, NULL, NULL, NULL);
	if (rc != CLI_OPTS_GO)
		return rc;
	rc = 0;
	if (optind >= argc) {
		cli_error(CMD, "no trace directory (see ktrace kft --help)");
		return 2;
	}
	dir = argv[optind++];
	what = optind < argc ? argv[optind++] : "status";
	if (!strcmp(what, "prime"))
		cmd = KFT_CMD_PRIME;
	else if (!strcmp(what, "start"))
		cmd = KFT_CMD_START;
	else if (!strcmp(what, "stop"))
		cmd = KFT_CMD_STOP;
	else if (strcmp(what, "status") && strcmp(what, "load")) {
		cli_error(CMD, "unknown command '%s': expected status, load, prime, start or stop", what);
		return 2;
	}
	if (!strcmp(what, "load") && optind >= argc) {
		cli_error(CMD, "load needs a configuration file (or -)");
		return 2;
	}
	if (optind + (!strcmp(what, "load") ? 1 : 0) < argc) {
		cli_error(CMD, "unexpected argument '%s'", argv[optind + (!strcmp(what, "load") ? 1 : 0)]);
		return 2;
	}
	if (kmap_open(&m, dir, strcmp(what, "status") != 0) < 0)
		return 1;
	if (!strcmp(what, "status")) {
		m.dwfl = live_dwfl(m.hdr->pid);
		if (!m.dwfl) {
			/* the program has ended: name functions from the maps it recorded */
			m.trace = ktr_open(dir);
			m.syms = m.trace ? ktr_syms_new(m.trace) : NULL;
		}
		fputs(status_text(&m, 1), stdout);
	} else if (!strcmp(what, "load")) {
		rc = load(&m, argv[optind]);
		if (rc == 0)
			write_status(&m);
	} else {
		int e = kft_command(m.run, cmd, ktrace_now());

		if (e < 0) {
			cli_error(CMD, "%s: the run is %s: cannot %s", dir,
				  kft_state_name(KFT_EPOCH_STATE(__atomic_load_n(&m.run->epoch, __ATOMIC_ACQUIRE))),
				  what);
			rc = 1;
		} else {
			write_status(&m);
		}
	}
	if (m.dwfl)
		dwfl_end(m.dwfl);
	ktr_syms_free(m.syms);
	ktr_close(m.trace);
	munmap(m.base, m.size);
	return rc;
}

KTRACE_COMMAND_OPTS(kft, "function tracer runs: a program's, the kernel's (--kernel, --tracefs)", run, cmd_opts);
