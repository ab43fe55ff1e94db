/*
 * lib/kft_setup.c - starting, describing and ending a KFT run in a program.
 *
 * Static run (KFT's boot-time run): when the program starts, a constructor
 * looks at the environment that `ktrace record` sets (or a user sets by
 * hand):
 *
 *   KTRACE_RECORD_DIR=DIR   trace directory (default "ktrace.data" when only
 *                           KTRACE_CONFIG is given)
 *   KTRACE_CONFIG=FILE      the run's configuration (docs/KFT-CONFIG.md);
 *                           without it every call is recorded
 *   KTRACE_BUF_SIZE, KTRACE_BUF_NR, KTRACE_FLIGHT=1, KTRACE_THREADS
 *                           the channel's geometry (ktrace_setup_opts())
 *
 * and if either of the first two is set it creates the channel, the shared
 * file DIR/kft (struct kft_file + struct kft_run + counter blocks), the
 * call-site table DIR/callsites, loads and primes the configuration, and
 * writes DIR/kft-status.  A configuration that does not parse or names an
 * unknown function is reported on stderr ("ktrace: FILE:LINE:COL: ...")
 * and in DIR/kft-status, and the program runs untraced.
 *
 * Function names are resolved against the ELF symbol tables of every
 * object loaded at that moment (main program first), read with elfutils'
 * libelf, loaded with dlopen() so that libktrace itself does not depend on
 * it; without libelf only exported symbols (dlsym) resolve.
 *
 * Dynamic run: `ktrace kft DIR load|prime|start|stop|status` maps
 * DIR/kft and drives the same engine on the shared struct kft_run; names
 * are resolved by `ktrace kft` (KFT's sym2addr step, done for you).
 *
 * An exec()ed program (LD_PRELOAD stays in the environment) records into
 * DIR.exec-PID-N beside DIR, N counting the images, so it never replaces
 * the trace of the process that exec()ed it.  Forked children share the parent's run
 * and files (their threads claim their own streams and counter blocks);
 * a child starts with a copy of the forking thread's open calls, marked
 * inherited (lib/kft_hooks.c): its returns from them (fork, main) are
 * recorded in its own thread, as uftrace records them.
 *
 * At exit the program's open calls are reported as unfinished, the
 * metadata is rewritten with the final memory maps and DIR/kft-status is
 * written a last time.  The run stops with reason "program end" there
 * (only in the process that set it up) when the program runs on its own;
 * under `ktrace record` (a session) children may outlive it, and the
 * consumer stops the run once every process of the session has ended.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kft_attach.h"
#include "kft_rt.h"
#include "safefile.h"
#include "session.h"

struct kft_global *kft_g;
static struct kft_global kft_global_store;
/*
 * The run being set up or recorded: kft_global_store, or, for a process
 * attached to again (lib/kft_attach.c), a new one: the previous stays as it
 * was, stopped, for the threads that still point to it (lib/kft_hooks.c
 * moves each to the new run at its next entry).
 */
static struct kft_global *kft_cur = &kft_global_store;
static pthread_key_t kft_key;
static char kft_status_buf[65536];

/* ---- counter blocks ------------------------------------------------------ */

struct kft_counters *kft_claim_block(uint32_t tid)
{
	struct kft_global *g = kft_cur;

	if (!g->blocks)
		return NULL;
	for (uint32_t i = 0; i < g->file->nblocks; i++) {
		uint32_t free_ = 0;

		if (__atomic_load_n(&g->owners[i], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&g->owners[i], &free_, tid ? tid : 1, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return &g->blocks[i];
	}
	return NULL;
}

void kft_release_block(struct kft_counters *c)
{
	struct kft_global *g = kft_cur;

	if (g->blocks && c >= g->blocks && c < g->blocks + g->file->nblocks)
		__atomic_store_n(&g->owners[c - g->blocks], 0, __ATOMIC_RELEASE);
}

static void kft_key_destructor(void *arg)
{
	(void)arg;
	kft_thread_end();
}

void kft_hooks_thread_started(void)
{
	pthread_setspecific(kft_key, (void *)1);
}

/* ---- status file ----------------------------------------------------------- */

size_t kft_status_text(const struct kft_file *file, struct kft_run *run,
		       const struct kft_counters *blocks, char *b, size_t size)
{
	struct kft_status st;
	size_t n;

	kft_status_begin(run, &st);
	for (uint32_t i = 0; i < file->nblocks; i++)
		kft_status_add(&st, &blocks[i]);
	n = (size_t)snprintf(b, size, "pid: %u\n", file->pid);
	if (file->error[0] && n < size)
		n += (size_t)snprintf(b + n, size - n, "error: %.*s\n", (int)sizeof(file->error),
				      file->error);
	if (n < size)
		n += kft_status_format(run, &st, b + n, (kt_u32)(size - n), NULL, NULL);
	return n >= size ? size - 1 : n;
}

void kft_write_status(int force)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);
	uint32_t unlocked = 0;
	uint64_t e;

	if (!g)
		return;
	e = __atomic_load_n(&g->run->epoch, __ATOMIC_ACQUIRE);
	if (!force && e == __atomic_load_n(&g->file->status_epoch, __ATOMIC_ACQUIRE))
		return;
	if (!__atomic_compare_exchange_n(&g->file->status_lock, &unlocked, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return; /* someone is writing it; they loop until it is current */
	do {
		size_t n;

		e = __atomic_load_n(&g->run->epoch, __ATOMIC_ACQUIRE);
		n = kft_status_text(g->file, g->run, g->blocks, kft_status_buf, sizeof(kft_status_buf));
		ksf_replace(g->dir, KFT_STATUS_NAME, kft_status_buf, n); /* async-signal-safe */
		__atomic_store_n(&g->file->status_epoch, e, __ATOMIC_RELEASE);
	} while (__atomic_load_n(&g->run->epoch, __ATOMIC_ACQUIRE) != e);
	__atomic_store_n(&g->file->status_lock, 0, __ATOMIC_RELEASE);
}

/* ---- setup ---------------------------------------------------------------- */

static uint32_t env_u32(const char *name, uint32_t dflt)
{
	const char *s = kt_env(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return dflt;
	v = strtoul(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > UINT32_MAX) {
		fprintf(stderr, "ktrace: ignoring %s=%s: not a number\n", name, s);
		return dflt;
	}
	return (uint32_t)v;
}

/* Read FILE (at most 1 MiB). Return: malloc'd text or NULL with *err set. */
static char *kft_read_file(const char *path, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 20, n = 0;
	char *buf;

	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	buf = kt_malloc(cap);
	if (!buf) {
		*err = ENOMEM;
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = errno;
			kt_free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			*err = EFBIG;
			kt_free(buf);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

/* Create DIR/kft and map it. */
static int kft_file_create(struct kft_global *g)
{
	size_t run_off = (sizeof(struct kft_file) + 63) & ~(size_t)63;
	size_t blocks_off = (run_off + sizeof(struct kft_run) + 127) & ~(size_t)127;
	size_t owners_off = blocks_off + (size_t)KFT_NBLOCKS * sizeof(struct kft_counters);
	size_t size = owners_off + (size_t)KFT_NBLOCKS * sizeof(uint32_t);
	void *p;
	int fd, err;

	fd = ksf_create(g->dir, KFT_FILE_NAME, O_RDWR);
	if (fd < 0)
		return fd;
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		close(fd);
		return -err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -err;
	g->file = p;
	g->file_size = size;
	g->file->version = KFT_FILE_VERSION;
	g->file->hdr_size = sizeof(struct kft_file);
	g->file->nblocks = KFT_NBLOCKS;
	g->file->run_off = (uint32_t)run_off;
	g->file->blocks_off = (uint32_t)blocks_off;
	g->file->owners_off = (uint32_t)owners_off;
	g->file->pid = (uint32_t)getpid();
	g->run = (struct kft_run *)((char *)p + run_off);
	g->blocks = (struct kft_counters *)((char *)p + blocks_off);
	g->owners = (uint32_t *)((char *)p + owners_off);
	return 0;
}

/* The raw clock rate from the channel's first two calibration pairs. */
static uint64_t kft_clock_rate(const struct ktrace_channel *ch)
{
	uint64_t draw, dns;

	if (ch->ncalib < 2)
		return 1000000000u;
	draw = ch->calib[1][0] - ch->calib[0][0];
	dns = ch->calib[1][1] - ch->calib[0][1];
	if (!dns || !draw)
		return 1000000000u;
	return (uint64_t)((unsigned __int128)draw * 1000000000u / dns);
}

/*
 * A configuration error in KTRACE_CONFIG_TEXT (ktrace record's options,
 * one statement per line, each ending with "# OPTION"): name the option
 * rather than a line of a text the user never wrote.
 */
static void kft_text_error(char *buf, size_t size, const char *text, const struct kft_error *err)
{
	const char *line = text, *end, *hash;

	for (kt_u32 l = 1; l < err->line && line; l++)
		line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
	end = line ? line + strcspn(line, "\n") : NULL;
	hash = line ? memchr(line, '#', (size_t)(end - line)) : NULL;
	if (hash) {
		hash++;
		while (*hash == ' ')
			hash++;
		snprintf(buf, size, "option '%.*s': %s", (int)(end - hash), hash, err->msg);
	} else {
		char where[64];

		snprintf(where, sizeof(where), "KTRACE_CONFIG_TEXT");
		kft_error_format(buf, (kt_u32)size, where, err);
	}
}

/*
 * Load the configuration: FILE (KTRACE_CONFIG) and KTRACE_CONFIG_TEXT
 * (ktrace record's -F/-N/-D/-t/-T, combined with FILE as if appended), or
 * the default "record every call" run; prime it.
 */
/* Every entry of a patchable build was patched (kft_load_config()): its
 * library calls are traced too, as those of a -pg build. */
static int kft_patched_all;

static void kft_load_config(struct kft_global *g, const char *path)
{
	struct kft_config *cfg = kt_calloc(1, sizeof(*cfg)), *more = NULL;
	const char *opts = kt_env("KTRACE_CONFIG_TEXT");
	struct kft_resolver *res = NULL;
	struct kft_names names = { NULL, NULL, NULL, 0 };
	struct kft_error err;
	uint64_t now = kt_clock();

	if (!cfg)
		return;
	if (opts && !*opts)
		opts = NULL;
	if (path || opts) {
		res = kft_resolver_open();
		if (res) {
			names.resolve = kft_resolve;
			names.glob = kft_glob;
			names.arg = res;
		}
	}
	if (path) {
		size_t len = 0;
		int e = 0;
		char *text = kft_read_file(path, &len, &e);

		if (!text) {
			snprintf(g->file->error, sizeof(g->file->error), "%s: cannot read: %s", path,
				 strerror(e));
			goto fail;
		}
		if (kft_config_parse_names(cfg, text, len, &names, &err) < 0) {
			kft_error_format(g->file->error, sizeof(g->file->error), path, &err);
			kt_free(text);
			goto fail;
		}
		kt_free(text);
	}
	if (opts) {
		more = kt_calloc(1, sizeof(*more));
		if (!more) {
			snprintf(g->file->error, sizeof(g->file->error), "out of memory");
			goto fail;
		}
		if (kft_config_parse_names(more, opts, strlen(opts), &names, &err) < 0) {
			kft_text_error(g->file->error, sizeof(g->file->error), opts, &err);
			goto fail;
		}
		if (kft_config_merge(cfg, more, &err) < 0) {
			snprintf(g->file->error, sizeof(g->file->error), "%.60s and the options: %.90s",
				 path ? path : "the configuration", err.msg);
			goto fail;
		}
	}
	if (kft_load(g->run, cfg, now) < 0) {
		snprintf(g->file->error, sizeof(g->file->error), "%s: inconsistent configuration",
			 path ? path : "default");
		goto fail;
	}
	/* A static run is primed when the program starts (KFT's boot-time run);
	 * in a process attached to, once record has made every write */
	if (!(cfg->flags & KFT_CF_PRIME) && kft_attaching())
		kft_attach_prime_later();
	else if (!(cfg->flags & KFT_CF_PRIME))
		kft_command(g->run, KFT_CMD_PRIME, now);
	/* patchable builds: the selected functions' entry NOPs become hook calls;
	 * programs without hooks: their entries patched (`record -P`) */
	kft_patched_all = kft_patch_apply(path || opts ? cfg : NULL, res, g->dir);
	kft_patched_all |= kft_dyn_apply(path || opts ? cfg : NULL, res, g->dir);
	goto out;
fail:
	kft_report_untraced(g->file->error);
out:
	kft_resolver_close(res);
	kt_free(more);
	kt_free(cfg);
}

static void kft_atexit(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);

	if (!g)
		return;
	kft_thread_end();
	if (g->owner) {
		/*
		 * The run ends with the program.  Under `ktrace record` the
		 * program is every process of the session: children that
		 * outlive this one keep recording into the run, and the
		 * consumer stops it when the last of them has gone
		 * (consumer/unfinished.c).
		 */
		if (!g->ch->sess)
			kft_stop(g->run, KFT_REASON_END, 0, kt_clock());
		pthread_mutex_lock(&g->ch->lock);
		kt_metadata_write(g->ch); /* the maps of objects loaded since setup */
		pthread_mutex_unlock(&g->ch->lock);
	}
	kft_write_status(1);
}

static void kft_atfork_prepare(void)
{
	if (__atomic_load_n(&kft_g, __ATOMIC_ACQUIRE))
		kft_hooks_atfork_prepare();
}

static void kft_atfork_parent(void)
{
	kft_hooks_atfork_parent();
}

static void kft_atfork_child(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);

	if (!g)
		return;
	g->owner = 0;
	kft_hooks_atfork_child();
}

/* Split DIR into root and name for ktrace_setup_opts(). */
static void kft_split(const char *dir, char *root, size_t rsize, char *name, size_t nsize)
{
	char tmp[PATH_MAX];
	size_t n;
	char *slash;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	slash = strrchr(tmp, '/');
	if (!slash) {
		snprintf(root, rsize, ".");
		snprintf(name, nsize, "%s", tmp);
	} else {
		*slash = '\0';
		snprintf(root, rsize, "%s", slash == tmp ? "/" : tmp);
		snprintf(name, nsize, "%s", slash + 1);
	}
}

/*
 * Set the run up from the settings kt_env() reads: the constructor's work,
 * and kft_attach_start()'s (lib/kft_attach.c) in a running process.
 * Return: 0, or -1 when nothing was set up (the settings name no run) or
 * the run could not be (said through kft_report_untraced()).
 */
int kft_begin(void)
{
	static int once; /* the process-wide hooks are registered */
	const char *dir = kt_env("KTRACE_RECORD_DIR");
	const char *config = kt_env("KTRACE_CONFIG");
	const char *image = kt_env("KTRACE_RECORD_IMAGE");
	struct kft_global *g = kft_cur;
	struct ktrace_options o;
	char root[PATH_MAX], name[256], num[32];
	unsigned long n = image ? strtoul(image, NULL, 10) : 0;
	uint64_t origin = kt_clock(), origin_ns = kt_mono_ns(); /* for `trigger start time` */
	int err;

	if ((!dir || !*dir) && (!config || !*config))
		return -1;
	if (!dir || !*dir)
		dir = "ktrace.data";
	if (config && !*config)
		config = NULL;
	/* Later images (exec) record beside, not over, this one (not when attached:
	 * the environment is the program's, and an exec'd image is not preloaded). */
	snprintf(num, sizeof(num), "%lu", n + 1);
	if (!kft_attaching())
		kt_setenv("KTRACE_RECORD_IMAGE", num);
	kft_split(dir, root, sizeof(root), name, sizeof(name));
	if (n > 0) {
		size_t len = strlen(name);

		snprintf(name + len, sizeof(name) - len, ".exec-%d-%lu", (int)getpid(), n);
	}

	if (g->ch) { /* attached to again: a new run beside the stopped one */
		g = kt_calloc(1, sizeof(*g));
		if (!g) {
			kft_report_untraced("out of memory");
			return -1;
		}
		kft_cur = g;
	}
	/* Our thread-exit key before the runtime's: our records go out first. */
	if (!once && pthread_key_create(&kft_key, kft_key_destructor) != 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.root = root;
	o.name = name;
	o.flags = env_u32("KTRACE_FLIGHT", 0) ? KTRACE_FLIGHT_CHANNEL : 0;
	o.buf_size = env_u32("KTRACE_BUF_SIZE", 256u << 10);
	/*
	 * Streamed by a consumer (`ktrace record`): a ring of 32 sub-buffers
	 * (8 MiB) per thread; the consumer empties it as it fills, and it
	 * absorbs the disk's slow moments (a call every 20 ns fills 8 MiB in
	 * about 12 ms).  Otherwise, and in flight mode, the buffer is all
	 * there is: 64 (16 MiB).
	 */
	o.buf_nr = env_u32("KTRACE_BUF_NR", kt_session() && !o.flags ? 32 : 64);
	o.nthreads = env_u32("KTRACE_THREADS", 0);
	/* The first image's directory was made by the consumer (it holds DIR/session). */
	g->ch = kt_setup(&o, n == 0 && kt_session() ? KT_SETUP_PREPARED : 0);
	if (!g->ch) {
		kft_report_untraced(ktrace_error());
		return -1;
	}
	snprintf(g->dir, sizeof(g->dir), "%s", ktrace_dir(g->ch));
	err = kft_file_create(g);
	if (err < 0) {
		char msg[4200];

		snprintf(msg, sizeof(msg), "%s/%s: %s", g->dir, KFT_FILE_NAME, strerror(-err));
		kft_report_untraced(msg);
		return -1;
	}
	/* time 0 of `trigger start time`: the exec of the program (lib/kft_start.c) */
	kft_run_init(g->run, kft_clock_rate(g->ch),
		     kft_exec_origin(origin, origin_ns, kft_clock_rate(g->ch)));
	err = kft_callsites_create(g);
	if (err < 0) {
		static uint32_t no_index[1];

		g->cs_index = no_index; /* every lookup misses */
		g->cs_mask = 0;
		fprintf(stderr, "ktrace: %s/%s: %s (calls are recorded with full addresses)\n", g->dir,
			KFT_CALLSITES_NAME, strerror(-err));
	}
	__atomic_store_n(&g->file->magic, KFT_FILE_MAGIC, __ATOMIC_RELEASE);
	g->owner = 1;
	kft_load_config(g, config);
	if (!once) {
		pthread_atfork(kft_atfork_prepare, kft_atfork_parent, kft_atfork_child);
		atexit(kft_atexit);
	}
	once = 1;
	ktrace_start(g->ch);
	__atomic_store_n(&kft_g, g, __ATOMIC_RELEASE);
	/* library calls of the program (lib/kft_plt.c); with KTRACE_LIBCALL=0
	 * only vfork, setjmp and longjmp, told to the hooks, not recorded (not
	 * in a process attached to: its GOT is left as it is) */
	if (!kft_attaching())
		kft_plt_setup(kft_patched_all, !env_u32("KTRACE_LIBCALL", 1));
	else
		kft_plt_attach_hooks(); /* compiled hooks bound to libc's no-ops */
	kft_write_status(1);
	return g->file->error[0] ? -1 : 0;
}

__attribute__((constructor)) static void kft_ctor(void)
{
	if (!kft_attaching()) /* dlopen()ed by `ktrace record -p`: kft_attach_start() sets up */
		kft_begin();
}
