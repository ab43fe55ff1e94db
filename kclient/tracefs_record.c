/*
 * kclient/tracefs_record.c - the tracefs backend of `ktrace record
 * --kernel`: LKST catalogue events recorded through libtracefs and
 * libtraceevent (API and rationale in kclient/kclient.h, krec_*; the steps
 * krec_start() and krec_stop() in kclient/internal.h).
 *
 * Set-up.  A tracefs instance "ktrace-PID" is created (libtracefs), its
 * tracing is switched off while it is configured: trace_clock mono, a ring
 * buffer of buf_kb KiB per CPU in overwrite mode (a reader too slow loses the
 * oldest events and is told how many, in the page headers), buffer_percent
 * 25 (poll() wakes the reader when a CPU's buffer is a quarter full, not at
 * every event, leaving three quarters for the time it takes to run), set_event_notrace_pid = the reader thread (its reads and writes do
 * not feed the trace; a switch between it and another task is still
 * recorded).  The event formats of the needed systems are parsed
 * with tracefs_local_events_system() (libtraceevent), each selected
 * catalogue event is looked up, its argument fields resolved, and enabled;
 * what is missing is written as an `unavailable` metadata line.
 * Tracepoints given with -e are recorded too: a catalogue tracepoint as
 * its catalogue event, any other as an event of its own (setup_extra():
 * ids from 0x100, its numeric fields as arguments; pointers into the
 * kernel written as 0; strings and arrays only in the raw copy).
 *
 * Reading.  One thread (nice -10 when allowed: it sleeps almost always, but
 * once woken it must run before the buffer fills, even on a machine kept
 * busy by the traced program) polls the per-CPU trace_pipe_raw files (non
 * blocking) with a wake-up pipe and a 1 s timeout, reads whole ring-buffer
 * pages, walks their events with the kbuffer that tep_kbuffer() describes,
 * and appends a KEVENT record per event to that CPU's current output
 * sub-buffer (64 KiB, packed layout).  A full sub-buffer is written with
 * one write(2).  So ktrace's memory is one page, one sub-buffer per CPU and
 * the task table, whatever the trace's length; and the traced program sees
 * one reader wake-up per quarter buffer per CPU.
 *
 * Records.  KTRACE_CLASS_KEVENT, id = the catalogue's event type, word 0 =
 * common_pid | tgid << 32, then the catalogue's arguments (tracefs field
 * names; "f[i]" is element i of an array field), zero- or sign-extended as
 * the field's type says; a page fault's address and ip are 0 when they
 * point into the kernel (no kernel address in a trace, lkst.h).  The tgid
 * comes from a task table filled by
 * task_newtask (CLONE_THREAD tells a thread from a process), the program's
 * pid (krec_program_pid(): the per-CPU buffers are read one after the
 * other, so a thread's task_newtask may be read before its process's, once
 * the program has left /proc) and, at a task's first event,
 * /proc/PID/status; 0 when none knows.  Task names
 * come from sched_switch, sched_wakeup and task_newtask's comm fields.
 *
 * Lost events.  A page whose header says events were lost before it closes
 * the current sub-buffer with that count in `lost`; at the end the per-CPU
 * `stats` overrun counter adds what the pages did not say.
 *
 * Removal.  The instance is removed by krec_stop(); an atexit() handler and
 * a handler of the fatal signals (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL)
 * close the pipe files and rmdir() it if the process ends another way;
 * SIGKILL leaves it, and the next recording removes instances whose
 * ktrace process is gone (krec_remove_stale()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "kclient/internal.h"
#include "lib/safefile.h"

#define CMD "record"

#define OUT_SUBBUF (64u * 1024u)       /* output sub-buffer, header included */
#define DEFAULT_BUF_KB 4096u           /* ring buffer per CPU */
#define CLONE_THREAD_FLAG 0x00010000u  /* <linux/sched.h> CLONE_THREAD */
#define WAKE_PERCENT "25"              /* poll() wakes the reader at 1/4 full */
#define READER_NICE (-10)              /* the reader thread's nice value */
#define XID_BASE KTRACE_LKST_MAX_ID    /* ids of -e tracepoints outside the catalogue */
#define MAX_ARGS 8u                    /* arguments of a record (catalogue events: 4) */

/* ---- the catalogue (kclient/catalogue.c) --------------------------------- */

static const struct lkst_def *lkst_defs;
static size_t NDEFS;

/*
 * The catalogue followed by the selected user-placed hooks of tracefs
 * (kclient/lkst_tracefs.c): what lkst_defs points to while recording, so
 * every step below handles a hook as one more catalogue event.
 */
#define NHOOKS (KTRACE_LKST_HOOK_LAST - KTRACE_LKST_HOOK_FIRST + 1)
static struct lkst_def with_hooks[256 + NHOOKS];
static char hook_names[NHOOKS][160], hook_args[NHOOKS][32], hook_events[NHOOKS][32];

static void add_hooks(const uint8_t *sel)
{
	size_t n;
	const struct lkst_def *cat = krec_catalogue(&n);

	if (n > 256)
		n = 256;
	memcpy(with_hooks, cat, n * sizeof(*cat));
	lkst_defs = with_hooks;
	NDEFS = n + (size_t)krec_hook_defs(sel, with_hooks + n, hook_names, hook_args, hook_events);
}

/* ---- the task table: pid -> tgid, comm ----------------------------------- */

struct task {
	int32_t pid; /* -1: empty slot */
	uint32_t tgid;
	uint8_t looked; /* /proc was asked already */
	char comm[16];
};

struct tasks {
	struct task *v;
	size_t cap, n; /* cap a power of two */
};

static struct task *task_get(struct tasks *ts, int32_t pid)
{
	size_t mask, i;

	if (ts->n * 2 >= ts->cap) {
		size_t ncap = ts->cap ? ts->cap * 2 : 1024;
		struct task *nv = malloc(ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		for (size_t k = 0; k < ncap; k++)
			nv[k].pid = -1;
		for (size_t k = 0; k < ts->cap; k++) {
			if (ts->v[k].pid < 0)
				continue;
			for (i = (size_t)ts->v[k].pid * 2654435761u & (ncap - 1); nv[i].pid >= 0;
			     i = (i + 1) & (ncap - 1))
				;
			nv[i] = ts->v[k];
		}
		free(ts->v);
		ts->v = nv;
		ts->cap = ncap;
	}
	mask = ts->cap - 1;
	for (i = (size_t)pid * 2654435761u & mask; ts->v[i].pid >= 0; i = (i + 1) & mask)
		if (ts->v[i].pid == pid)
			return &ts->v[i];
	memset(&ts->v[i], 0, sizeof(ts->v[i]));
	ts->v[i].pid = pid;
	ts->n++;
	return &ts->v[i];
}

static void set_comm(struct task *t, const char *comm, size_t max)
{
	size_t i;

	for (i = 0; i < max && i < sizeof(t->comm) - 1 && comm[i]; i++)
		t->comm[i] = (unsigned char)comm[i] < 0x20 || comm[i] == 0x7f ? '?' : comm[i];
	t->comm[i] = 0;
}

/* Tgid and comm of a live task from /proc, once per task. */
static void task_lookup(struct task *t)
{
	char path[64], buf[512];
	ssize_t n;
	int fd;

	t->looked = 1;
	if (t->pid <= 0) {
		if (t->pid == 0 && !t->comm[0])
			snprintf(t->comm, sizeof(t->comm), "swapper");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	if (!t->comm[0] && !strncmp(buf, "Name:\t", 6)) {
		size_t l = strcspn(buf + 6, "\n");

		set_comm(t, buf + 6, l);
	}
	if (!t->tgid) {
		char *p = strstr(buf, "\nTgid:\t");

		if (p)
			t->tgid = (uint32_t)strtoul(p + 7, NULL, 10);
	}
}

/* ---- per-CPU output ------------------------------------------------------ */

struct kout {
	int fd;
	unsigned cpu;
	uint8_t *buf;      /* OUT_SUBBUF bytes: header + records */
	uint32_t used;     /* record bytes after the header */
	uint32_t nrec;
	uint64_t seq;
	uint64_t first_ts, last_ts;
	uint32_t lost;     /* for the current sub-buffer */
	uint64_t lost_total, missed_pages;
	int failed;        /* a write failed: records are counted as lost */
	uint64_t overrun0; /* stats overrun when recording started */
};

/* A tracepoint's argument: a field, or an element of an array field. */
struct karg {
	struct tep_format_field *f;
	unsigned elem; /* array element index */
	int is_signed;
	unsigned size;
	int is_ptr;    /* a pointer: a kernel address is written as 0 */
};

struct kev {
	const struct lkst_def *d;
	struct karg a[MAX_ARGS];
	int special; /* 1 sched_switch, 2 wakeup(_new), 3 task_newtask */
	int silent;  /* enabled for the task table only: no record */
	int pf_entry; /* a page fault tracepoint: also EXCEPTION_ENTRY vector 14 */
	struct tep_format_field *comm, *pid, *comm2, *pid2, *flags;
};

struct krec {
	struct tracefs_instance *inst;
	int32_t prog_pid;  /* krec_program_pid(): set by the main thread, read by the reader (atomics) */
	char name[64];
	char dir[PATH_MAX];
	int dirfd;         /* @dir, opened by ksf_dir_open(): the files go in there */
	char inst_path[PATH_MAX];
	struct tep_handle *tep;
	struct kbuffer *kbuf;
	uint8_t sel[KTRACE_LKST_MAX_ID];
	uint64_t lock_key[2]; /* random: the contention events' lock ids (lock_id()) */
	/*
	 * -e tracepoints: @xl as matched; those outside the catalogue become
	 * events of their own, @xdefs (ids XID_BASE + i, name the tracepoint's,
	 * category its system, arguments its numeric fields; @xargs owns the
	 * argument lists)
	 */
	struct krec_evlist xl;
	struct lkst_def *xdefs;
	char **xargs;
	size_t nx;
	const char *unavail[KTRACE_LKST_MAX_ID]; /* reason, NULL = available */
	char unavail_buf[KTRACE_LKST_MAX_ID][96];
	struct kev *bytype; /* indexed by tracefs event id */
	int maxtype;
	unsigned ncpu;
	int *fds;
	struct kout *out;
	uint8_t *page;
	int pagesize;
	int wake[2];
	pthread_t thr;
	int thr_started;
	int stop; /* set by krec_stop() (atomic), then the wake pipe is written */
	int progress;
	struct tasks tasks;
	uint64_t events, bytes;
	unsigned enabled, nunavail;
	char maskset[256];
	uint64_t created_ns, realtime_ns;
	int werr; /* a write error was reported */
	uint64_t reader_ns; /* CPU time of the reader thread (user + system) */
	/* the raw copy, DIR/kernel/ftrace (kclient/ftrace_copy.c) */
	struct krec_evlist evl; /* the instance's enabled events */
	int ftfd;               /* DIR/kernel/ftrace, -1: none */
	int *rawfd;             /* ftrace/cpuN, -1: none (or a write failed) */
	uint64_t raw_pages;
	/* EXCEPTION_ENTRY: kprobe events made (kclient/exc_tracefs.c), what
	 * was refused, the vectors covered (metadata comment) */
	int nexc;
	char exc_why[256], exc_how[160];
};

/* For the atexit/fatal-signal cleanup: the live recording, if any. */
static struct krec *volatile live;
static int live_fds[1024];
static volatile int live_nfds;
static char live_path[PATH_MAX];

static void emergency_remove(void)
{
	if (!live)
		return;
	for (int i = 0; i < live_nfds; i++)
		close(live_fds[i]);
	rmdir(live_path);
	krec_exc_emergency(); /* after the instance that enabled them */
	live = NULL;
}

static void fatal_handler(int sig)
{
	emergency_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_cleanup(struct krec *k)
{
	static int once;
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

	snprintf(live_path, sizeof(live_path), "%s", k->inst_path);
	live_nfds = 0;
	for (unsigned i = 0; i < k->ncpu && i < 1024; i++)
		if (k->fds[i] >= 0)
			live_fds[live_nfds++] = k->fds[i];
	live = k;
	if (once)
		return;
	once = 1;
	atexit(emergency_remove);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = fatal_handler;
		sa.sa_flags = SA_RESETHAND;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void write_err(struct krec *k, struct kout *o, int err)
{
	if (!o->failed)
		kcl_error(CMD, "%s/cpu%u: write: %s; kernel events of CPU %u from here on are "
			       "counted as lost", k->dir, o->cpu, strerror(err), o->cpu);
	o->failed = 1;
	k->werr = 1;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write the current sub-buffer (if it holds anything) and start a new one. */
static void out_flush(struct krec *k, struct kout *o)
{
	struct ktrace_subbuf h;
	int err;

	if (!o->nrec && !o->lost)
		return;
	memset(&h, 0, sizeof(h));
	h.magic = KTRACE_SUBBUF_MAGIC;
	h.hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	h.flags = KTRACE_SBF_CLOSED;
	h.seq = o->seq;
	h.first_ts = o->first_ts;
	h.first_ns = o->first_ts; /* clock mono: raw is ns */
	h.last_ts = o->last_ts;
	h.used = o->used;
	h.lost = o->lost;
	h.nrec = o->nrec;
	h.cpu = (uint16_t)o->cpu;
	h.stream = (uint16_t)o->cpu;
	memcpy(o->buf, &h, sizeof(h));
	if (!o->failed) {
		err = write_all(o->fd, o->buf, KTRACE_SUBBUF_HDR_SIZE + o->used);
		if (err < 0) {
			write_err(k, o, -err);
			o->lost_total += o->nrec;
		} else {
			k->bytes += KTRACE_SUBBUF_HDR_SIZE + o->used;
			o->seq++;
		}
	} else {
		o->lost_total += o->nrec;
	}
	o->used = 0;
	o->nrec = 0;
	o->lost = 0;
}

/* Append one KEVENT record of @nw argument words. */
static void out_record(struct krec *k, struct kout *o, uint64_t ts, unsigned id, uint64_t w0,
		       const uint64_t *args, unsigned nw)
{
	uint32_t len = 8 * (2 + nw);
	uint64_t *p;

	if (o->nrec) {
		int64_t d = (int64_t)(ts - o->first_ts);

		if (o->used + len > OUT_SUBBUF - KTRACE_SUBBUF_HDR_SIZE ||
		    d >= (int64_t)KTRACE_TS_WINDOW || d <= -(int64_t)KTRACE_TS_WINDOW)
			out_flush(k, o);
	} else if (o->used + len > OUT_SUBBUF - KTRACE_SUBBUF_HDR_SIZE) {
		out_flush(k, o);
	}
	if (!o->nrec)
		o->first_ts = ts;
	p = (uint64_t *)(o->buf + KTRACE_SUBBUF_HDR_SIZE + o->used);
	p[0] = KTRACE_REC_HDR(ts, KTRACE_CLASS_KEVENT, 1 + nw, id);
	p[1] = w0;
	for (unsigned i = 0; i < nw; i++)
		p[2 + i] = args[i];
	o->used += len;
	o->nrec++;
	o->last_ts = ts;
	k->events++;
}

/*
 * Events were lost before the next page (at raw time @ts or earlier): close
 * the current sub-buffer with the count in `lost`, so the gap sits after its
 * last record; with no record pending, an empty sub-buffer carries it.
 */
static void out_lost(struct krec *k, struct kout *o, uint64_t n, uint64_t ts)
{
	o->lost_total += n;
	if (!o->nrec)
		o->first_ts = o->last_ts ? o->last_ts : ts;
	o->lost += (uint32_t)(n > UINT32_MAX - o->lost ? UINT32_MAX - o->lost : n);
	out_flush(k, o);
}

/* ---- converting events --------------------------------------------------- */

static uint64_t read_arg(const struct karg *a, const uint8_t *data, int size)
{
	unsigned off, sz = a->size;
	uint64_t v = 0;

	if (!a->f)
		return 0;
	off = (unsigned)a->f->offset + a->elem * sz;
	if (!sz || sz > 8 || off + sz > (unsigned)size)
		return 0;
	memcpy(&v, data + off, sz); /* little-endian host */
	if (a->is_signed && sz < 8 && (v >> (8 * sz - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * sz);
	return v;
}

static int64_t read_num(const struct tep_format_field *f, const uint8_t *data, int size)
{
	struct karg a = { (struct tep_format_field *)f, 0, 1, f ? (unsigned)f->size : 0, 0 };

	return (int64_t)read_arg(&a, data, size);
}

static void read_comm(const struct tep_format_field *f, const uint8_t *data, int size, struct task *t)
{
	if (!f || !t || f->offset + f->size > size)
		return;
	set_comm(t, (const char *)data + f->offset, (size_t)f->size);
}

static struct task *task_seen(struct krec *k, int32_t pid)
{
	struct task *t = task_get(&k->tasks, pid);

	if (t && !t->looked && !t->tgid) {
		/* the program's main thread is its own tgid, even when its
		 * fork's task_newtask is read after its threads' (the per-CPU
		 * buffers are read one after the other) and it is gone from
		 * /proc by then */
		if (pid > 0 && pid == __atomic_load_n(&k->prog_pid, __ATOMIC_ACQUIRE))
			t->tgid = (uint32_t)pid;
		task_lookup(t);
	}
	return t;
}

void krec_program_pid(struct krec *k, int pid)
{
	if (k)
		__atomic_store_n(&k->prog_pid, (int32_t)pid, __ATOMIC_RELEASE);
}

/*
 * The id of the lock at kernel address @a (lkst.h: no kernel address in a
 * trace): a keyed 64-bit mix (MurmurHash3's fmix64 around the two random
 * key halves), the same for the same lock in one recording.  Not a
 * cryptographic hash: the trace is root's (0600) in any case.
 */
static uint64_t lock_id(const struct krec *k, uint64_t a)
{
	a ^= k->lock_key[0];
	for (int i = 0; i < 2; i++) {
		a ^= a >> 33;
		a *= 0xff51afd7ed558ccdull;
		a ^= a >> 33;
		a *= 0xc4ceb9fe1a85ec53ull;
		a ^= a >> 33;
		a ^= k->lock_key[1];
	}
	return a;
}

static void convert_event(struct krec *k, struct kout *o, uint64_t ts, void *data, int size)
{
	struct tep_record rec;
	struct kev *e;
	struct task *t;
	uint64_t args[MAX_ARGS], hidden = 0;
	int type, pid;

	memset(&rec, 0, sizeof(rec));
	rec.ts = ts;
	rec.data = data;
	rec.size = size;
	rec.cpu = (int)o->cpu;
	type = tep_data_type(k->tep, &rec);
	if (type < 0 || type > k->maxtype || !k->bytype[type].d)
		return;
	e = &k->bytype[type];
	pid = tep_data_pid(k->tep, &rec);
	switch (e->special) {
	case 1: /* sched_switch: name both tasks */
		read_comm(e->comm, data, size, task_get(&k->tasks, (int32_t)read_num(e->pid, data, size)));
		read_comm(e->comm2, data, size, task_get(&k->tasks, (int32_t)read_num(e->pid2, data, size)));
		break;
	case 2: /* wakeups */
		read_comm(e->comm, data, size, task_get(&k->tasks, (int32_t)read_num(e->pid, data, size)));
		break;
	case 3: { /* task_newtask: thread or process */
		int32_t child = (int32_t)read_num(e->pid, data, size);
		uint64_t fl = (uint64_t)read_num(e->flags, data, size);
		uint32_t ptgid = (t = task_seen(k, pid)) ? t->tgid : 0; /* before t moves */

		t = task_get(&k->tasks, child);
		if (t) {
			read_comm(e->comm, data, size, t);
			t->looked = 1;
			t->tgid = fl & CLONE_THREAD_FLAG ? ptgid : (uint32_t)child;
		}
		break;
	}
	default:
		break;
	}
	if (e->pf_entry) { /* EXCEPTION_ENTRY 14 as the module's (kclient/exc_tracefs.c) */
		uint64_t ip = read_arg(&e->a[1], data, size);
		uint64_t x[3] = { 14, read_arg(&e->a[2], data, size), ip >> 63 ? 0 : ip };

		t = task_seen(k, pid);
		out_record(k, o, ts, KTRACE_LKST_EXCEPTION_ENTRY,
			   (uint32_t)pid | (uint64_t)(t ? t->tgid : 0) << 32, x, 3);
	}
	if (e->silent)
		return;
	t = task_seen(k, pid);
	for (unsigned i = 0; i < e->d->nargs; i++) {
		args[i] = read_arg(&e->a[i], data, size);
		if (e->a[i].is_ptr && args[i] >> 63)
			args[i] = 0; /* no kernel address in a trace (lkst.h) */
	}
	if (KTRACE_LKST_IS_HOOK(e->d->id)) {
		/* a hook's raw registers: kernel-half values become 0, marked
		 * hidden, as in the module (kmod/lkst_hooks.c); error codes
		 * -4095..-1 and the non-canonical rest (LLONG_MAX) stay */
		for (unsigned i = 0; i < e->d->nargs; i++)
			if (args[i] >= 0xffff800000000000ull && args[i] < (uint64_t)-4095) {
				args[i] = 0;
				hidden |= KTRACE_KEVENT_HIDE(i);
			}
	}
	if ((e->d->id == KTRACE_LKST_LOCK_CONTENTION_BEGIN ||
	     e->d->id == KTRACE_LKST_LOCK_CONTENTION_END) && e->d->nargs > 1) {
		uint64_t a = read_arg(&e->a[1], data, size);

		args[1] = a ? lock_id(k, a) : 0;
	}
	if (e->d->id == KTRACE_LKST_EXCEPTION_ENTRY && args[2] >> 63)
		args[2] = 0; /* a kprobe's ip in the kernel, as the module */
	if (e->d->id == KTRACE_LKST_EXCEPTION_PAGEFAULT_USER ||
	    e->d->id == KTRACE_LKST_EXCEPTION_PAGEFAULT_KERNEL) {
		/* no kernel address in a trace (lkst.h): address and ip in the
		 * kernel's half of the address space are written as 0, as the
		 * module does */
		for (unsigned i = 0; i < 2 && i < e->d->nargs; i++)
			if (args[i] >> 63)
				args[i] = 0;
	}
	out_record(k, o, ts, e->d->id, (uint32_t)pid | (uint64_t)(t ? t->tgid : 0) << 32 | hidden, args,
		   e->d->nargs);
}

static void convert_page(struct krec *k, struct kout *o, void *page)
{
	unsigned long long ts;
	void *data;
	int missed;

	if (kbuffer_load_subbuffer(k->kbuf, page) < 0)
		return;
	missed = kbuffer_missed_events(k->kbuf);
	if (missed) {
		o->missed_pages++;
		out_lost(k, o, missed > 0 ? (uint64_t)missed : 1,
			 kbuffer_subbuf_timestamp(k->kbuf, page));
	}
	for (data = kbuffer_read_event(k->kbuf, &ts); data; data = kbuffer_next_event(k->kbuf, &ts))
		convert_event(k, o, ts, data, kbuffer_event_size(k->kbuf));
}

/*
 * Append the page just read (@r bytes; a short read is padded with zeros
 * to a whole page, as trace-cmd's readers expect) to ftrace/cpu@i.
 */
static void raw_page(struct krec *k, unsigned i, size_t r)
{
	int err;

	if (!k->rawfd || k->rawfd[i] < 0)
		return;
	if (r < (size_t)k->pagesize)
		memset(k->page + r, 0, (size_t)k->pagesize - r);
	err = write_all(k->rawfd[i], k->page, (size_t)k->pagesize);
	if (err < 0) {
		kcl_error(CMD, "%s/ftrace/cpu%u: write: %s; the raw copy of CPU %u ends here", k->dir, i,
			  strerror(-err), i);
		close(k->rawfd[i]);
		k->rawfd[i] = -1;
		k->werr = 1;
		return;
	}
	k->raw_pages++;
}

/* Read every page available on CPU @i now.  Return: pages read. */
static unsigned drain_cpu(struct krec *k, unsigned i)
{
	unsigned n = 0;

	if (k->fds[i] < 0)
		return 0;
	for (;;) {
		ssize_t r = read(k->fds[i], k->page, (size_t)k->pagesize);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		raw_page(k, i, (size_t)r);
		convert_page(k, &k->out[i], k->page);
		n++;
	}
	return n;
}

static void *reader_main(void *arg)
{
	struct krec *k = arg;
	struct pollfd *pf = calloc(k->ncpu + 1, sizeof(*pf));
	int tty = k->progress && isatty(2);
	uint64_t last = 0;
	char tidbuf[32];

	/* wakes rarely, must then run soon: a CPU-bound program (or a busy
	 * machine) must not delay it until the ring buffer overflows */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE);
	/* this thread reads and writes a lot: keep it out of the trace */
	snprintf(tidbuf, sizeof(tidbuf), "%ld", (long)syscall(SYS_gettid));
	tracefs_instance_file_append(k->inst, "set_event_notrace_pid", tidbuf);
	if (!pf)
		return NULL;
	for (unsigned i = 0; i < k->ncpu; i++) {
		pf[i].fd = k->fds[i];
		pf[i].events = POLLIN;
	}
	pf[k->ncpu].fd = k->wake[0];
	pf[k->ncpu].events = POLLIN;
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		int r = poll(pf, k->ncpu + 1, 1000);

		if (r < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < k->ncpu; i++)
			if (r > 0 && (pf[i].revents & POLLIN))
				drain_cpu(k, i);
		if (tty && k->events != last) {
			fprintf(stderr, "\rktrace record: %" PRIu64 " kernel events ", k->events);
			last = k->events;
		}
	}
	if (tty && last)
		fputc('\n', stderr);
	free(pf);
	{
		struct rusage ru;

		if (getrusage(RUSAGE_THREAD, &ru) == 0)
			k->reader_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	}
	return NULL;
}

/* ---- set-up -------------------------------------------------------------- */

/* Resolve argument @name ("field" or "field[i]") of event @ev. */
static void resolve_arg(struct tep_event *ev, const char *name, size_t nlen, struct karg *a)
{
	char buf[64];
	const char *br;
	unsigned elem = 0;

	memset(a, 0, sizeof(*a));
	if (nlen >= sizeof(buf))
		return;
	memcpy(buf, name, nlen);
	buf[nlen] = 0;
	br = strchr(buf, '[');
	if (br) {
		elem = (unsigned)strtoul(br + 1, NULL, 10);
		buf[br - buf] = 0;
	}
	a->f = tep_find_field(ev, buf);
	if (!a->f)
		return;
	a->elem = elem;
	a->is_signed = (a->f->flags & TEP_FIELD_IS_SIGNED) != 0;
	a->is_ptr = (a->f->flags & TEP_FIELD_IS_POINTER) != 0;
	if (a->f->flags & TEP_FIELD_IS_ARRAY) {
		a->size = a->f->elementsize;
		if (elem >= a->f->arraylen)
			a->f = NULL;
	} else {
		a->size = (unsigned)a->f->size;
		a->elem = 0;
	}
	if (a->f && (a->size == 0 || a->size > 8))
		a->f = NULL;
}

static void mark_unavailable(struct krec *k, unsigned id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void mark_unavailable(struct krec *k, unsigned id, const char *fmt, ...)
{
	va_list ap;

	if (!k->sel[id])
		return; /* the silent task_newtask: nothing to say */
	va_start(ap, fmt);
	vsnprintf(k->unavail_buf[id], sizeof(k->unavail_buf[id]), fmt, ap);
	va_end(ap);
	k->unavail[id] = k->unavail_buf[id];
	k->nunavail++;
}

/*
 * Events enabled: the selected ones, and task_newtask always, silently when
 * not selected (not written): its clone flags tell a new thread's process
 * even after the thread is gone.
 */
static int used(const struct krec *k, unsigned id)
{
	return k->sel[id] || id == KTRACE_LKST_PROCESS_LTHREADGEN ||
	       ((id == KTRACE_LKST_EXCEPTION_PAGEFAULT_USER || id == KTRACE_LKST_EXCEPTION_PAGEFAULT_KERNEL) &&
		k->sel[KTRACE_LKST_EXCEPTION_ENTRY]); /* its vector 14 */
}

/* The systems the enabled events need, NULL-terminated (static storage). */
static const char **needed_systems(const struct krec *k)
{
	static const char *sys[2 * KTRACE_LKST_MAX_ID + 1];
	size_t n = 0;

	for (size_t i = 0; i < k->xl.n && n < KTRACE_LKST_MAX_ID; i++) {
		size_t j;

		for (j = 0; j < n && strcmp(sys[j], k->xl.sys[i]); j++)
			;
		if (j == n)
			sys[n++] = k->xl.sys[i];
	}

	for (size_t i = 0; i < NDEFS; i++) {
		const struct lkst_def *d = &lkst_defs[i];
		size_t j;

		if (!used(k, d->id) || !d->sys[0] || !strcmp(d->sys, "ktrace"))
			continue;
		for (j = 0; j < n && strcmp(sys[j], d->sys); j++)
			;
		if (j == n)
			sys[n++] = d->sys;
	}
	if (k->nexc)
		sys[n++] = KREC_EXC_GROUP;
	sys[n] = NULL;
	return sys;
}

/* The catalogue's event on tracepoint @sys:@tp, or NULL. */
static const struct lkst_def *catalogue_tp(const char *sys, const char *tp)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (lkst_defs[i].tp[0] && !strcmp(lkst_defs[i].sys, sys) && !strcmp(lkst_defs[i].tp, tp))
			return &lkst_defs[i];
	return NULL;
}

/*
 * The -e tracepoints outside the catalogue: an event each (id XID_BASE + i,
 * named as the tracepoint, its system the category), with its numeric
 * fields as arguments, at most MAX_ARGS of them in the format's order;
 * strings, arrays and dynamic fields are left to the raw copy
 * (DIR/kernel/ftrace, trace.dat).  Enabled by enable_extra().
 */
static int setup_extra(struct krec *k)
{
	if (!k->xl.n)
		return 0;
	k->xdefs = calloc(k->xl.n, sizeof(*k->xdefs));
	k->xargs = calloc(k->xl.n, sizeof(*k->xargs));
	if (!k->xdefs || !k->xargs)
		return -1;
	for (size_t i = 0; i < k->xl.n && XID_BASE + k->nx <= 0xffff; i++) {
		struct tep_event *ev = tep_find_event_by_name(k->tep, k->xl.sys[i], k->xl.name[i]);
		struct tep_format_field **fields;
		struct lkst_def *d = &k->xdefs[k->nx];
		struct kev *e;
		size_t len = 0, cap = 1;
		char *args;

		if (catalogue_tp(k->xl.sys[i], k->xl.name[i]) || !ev || ev->id < 0)
			continue;
		fields = tep_event_fields(ev);
		for (size_t f = 0; fields && fields[f]; f++)
			cap += strlen(fields[f]->name) + 1;
		args = malloc(cap);
		if (!args) {
			free(fields);
			return -1;
		}
		args[0] = 0;
		for (size_t f = 0; fields && fields[f] && d->nargs < MAX_ARGS; f++) {
			const struct tep_format_field *fl = fields[f];

			if ((fl->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) ||
			    fl->size < 1 || fl->size > 8)
				continue;
			len += (size_t)sprintf(args + len, "%s%s", len ? "," : "", fl->name);
			d->nargs++;
		}
		free(fields);
		k->xargs[k->nx] = args;
		d->id = XID_BASE + (unsigned)k->nx;
		d->mn = k->xl.name[i];
		d->cat = d->sys = k->xl.sys[i];
		d->tp = k->xl.name[i];
		d->args = args;
		if (ev->id > k->maxtype) {
			struct kev *nb = realloc(k->bytype, ((size_t)ev->id + 1) * sizeof(*nb));

			if (!nb)
				return -1;
			memset(nb + k->maxtype + 1, 0, (size_t)(ev->id - k->maxtype) * sizeof(*nb));
			k->bytype = nb;
			k->maxtype = ev->id;
		}
		e = &k->bytype[ev->id];
		e->d = d;
		for (unsigned a = 0, off = 0; a < d->nargs; a++) {
			size_t l = strcspn(args + off, ",");

			resolve_arg(ev, args + off, l, &e->a[a]);
			off += (unsigned)l + 1;
		}
		k->enabled++;
		k->nx++;
	}
	return 0;
}

/*
 * EXCEPTION_ENTRY (kclient/exc_tracefs.c): the kprobe events made by
 * krec_exc_create(), each enabled (with its filter) and converted as the
 * catalogue's event, and the page fault tracepoints (enabled by used())
 * writing vector 14 beside their own event.  Unavailable if none is.
 */
static int setup_exc(struct krec *k)
{
	static const char *const pf[2] = { "page_fault_user", "page_fault_kernel" };
	const struct lkst_def *d = NULL;
	size_t hl = 0;

	for (size_t i = 0; i < NDEFS; i++)
		if (lkst_defs[i].id == KTRACE_LKST_EXCEPTION_ENTRY)
			d = &lkst_defs[i];
	if (!d || !k->sel[d->id])
		return 0;
	for (int i = 0; i < 2; i++) {
		struct tep_event *ev = tep_find_event_by_name(k->tep, "exceptions", pf[i]);

		if (ev && ev->id >= 0 && ev->id <= k->maxtype && k->bytype[ev->id].d) {
			k->bytype[ev->id].pf_entry = 1;
			if (!hl)
				hl = (size_t)snprintf(k->exc_how, sizeof(k->exc_how), "14");
		}
	}
	for (unsigned i = 0; i < krec_exc_nprobes(); i++) {
		const char *filter, *vec, *name = krec_exc_event(i, &filter, &vec), *p = d->args;
		struct tep_event *ev = name ? tep_find_event_by_name(k->tep, KREC_EXC_GROUP, name) : NULL;
		struct kev *e;

		if (!ev || ev->id < 0)
			continue;
		if (ev->id > k->maxtype) {
			struct kev *nb = realloc(k->bytype, ((size_t)ev->id + 1) * sizeof(*nb));

			if (!nb)
				return -1;
			memset(nb + k->maxtype + 1, 0, (size_t)(ev->id - k->maxtype) * sizeof(*nb));
			k->bytype = nb;
			k->maxtype = ev->id;
		}
		if ((filter && tracefs_event_file_write(k->inst, KREC_EXC_GROUP, name, "filter", filter) < 0) ||
		    tracefs_event_enable(k->inst, KREC_EXC_GROUP, name) < 0) {
			snprintf(k->exc_why + strlen(k->exc_why), sizeof(k->exc_why) - strlen(k->exc_why),
				 "%scannot enable %s/%s", k->exc_why[0] ? "; " : "", KREC_EXC_GROUP, name);
			continue;
		}
		e = &k->bytype[ev->id];
		e->d = d;
		for (unsigned a = 0; a < d->nargs && *p; a++) {
			size_t l = strcspn(p, ",");

			resolve_arg(ev, p, l, &e->a[a]);
			p += l + (p[l] == ',');
		}
		if (hl < sizeof(k->exc_how))
			hl += (size_t)snprintf(k->exc_how + hl, sizeof(k->exc_how) - hl, "%s%s",
					       hl ? " " : "", vec);
	}
	if (!hl)
		mark_unavailable(k, d->id, "no kprobe event on the trap handlers (%s) and no page "
					   "fault tracepoint",
				 k->exc_why[0] ? k->exc_why : "none made");
	else
		k->enabled++;
	return 0;
}

static int setup_events(struct krec *k)
{
	const char **systems = needed_systems(k);

	k->tep = systems[0] ? tracefs_local_events_system(NULL, systems) : tep_alloc();
	if (!k->tep)
		return -1;
	k->maxtype = 0;
	for (size_t i = 0; i < NDEFS; i++) {
		const struct lkst_def *d = &lkst_defs[i];
		struct tep_event *ev;

		if (!used(k, d->id))
			continue;
		if (d->id == KTRACE_LKST_PROCESS_COMM)
			continue; /* the module's: here the comm fields name the tasks (thread lines) */
		if (!strcmp(d->sys, "ktrace")) { /* EXCEPTION_ENTRY: setup_exc() */
			if (d->id != KTRACE_LKST_EXCEPTION_ENTRY)
				mark_unavailable(k, d->id, "module only (kretprobes): a tracefs kretprobe "
							   "cannot read the trap number at the return");
			continue;
		}
		if (!d->tp[0]) {
			mark_unavailable(k, d->id, "no tracepoint: LKST hook without a kernel tracepoint");
			continue;
		}
		ev = tep_find_event_by_name(k->tep, d->sys, d->tp);
		if (!ev) {
			mark_unavailable(k, d->id, "no tracepoint %s:%s on this kernel", d->sys, d->tp);
			continue;
		}
		if (ev->id > k->maxtype)
			k->maxtype = ev->id;
	}
	k->bytype = calloc((size_t)k->maxtype + 1, sizeof(*k->bytype));
	if (!k->bytype)
		return -1;
	for (size_t i = 0; i < NDEFS; i++) {
		const struct lkst_def *d = &lkst_defs[i];
		struct tep_event *ev;
		struct kev *e;
		const char *p;

		if (!used(k, d->id) || k->unavail[d->id] || d->id == KTRACE_LKST_PROCESS_COMM)
			continue;
		ev = tep_find_event_by_name(k->tep, d->sys, d->tp);
		if (!ev || ev->id < 0 || ev->id > k->maxtype)
			continue;
		if (tracefs_event_enable(k->inst, d->sys, d->tp) < 0) {
			mark_unavailable(k, d->id, "cannot enable %s:%s: %s", d->sys, d->tp,
					 strerror(errno ? errno : EINVAL));
			continue;
		}
		e = &k->bytype[ev->id];
		e->d = d;
		e->silent = !k->sel[d->id];
		p = d->args;
		for (unsigned a = 0; a < d->nargs && *p; a++) {
			size_t l = strcspn(p, ",");

			resolve_arg(ev, p, l, &e->a[a]);
			p += l + (p[l] == ',');
		}
		if (!strcmp(d->tp, "sched_switch")) {
			e->special = 1;
			e->comm = tep_find_field(ev, "prev_comm");
			e->pid = tep_find_field(ev, "prev_pid");
			e->comm2 = tep_find_field(ev, "next_comm");
			e->pid2 = tep_find_field(ev, "next_pid");
		} else if (!strcmp(d->tp, "sched_wakeup") || !strcmp(d->tp, "sched_wakeup_new")) {
			e->special = 2;
			e->comm = tep_find_field(ev, "comm");
			e->pid = tep_find_field(ev, "pid");
		} else if (!strcmp(d->tp, "task_newtask")) {
			e->special = 3;
			e->comm = tep_find_field(ev, "comm");
			e->pid = tep_find_field(ev, "pid");
			e->flags = tep_find_field(ev, "clone_flags");
		}
		if (!e->silent)
			k->enabled++;
	}
	if (setup_exc(k) < 0)
		return -1;
	return setup_extra(k);
}

/* Per-CPU `stats` counter @key ("overrun: N"), or 0. */
static uint64_t cpu_stat(struct krec *k, unsigned cpu, const char *key)
{
	char file[64], *text, *p;
	uint64_t v = 0;

	snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
	text = tracefs_instance_file_read(k->inst, file, NULL);
	if (!text)
		return 0;
	p = strstr(text, key);
	if (p)
		v = strtoull(p + strlen(key), NULL, 10);
	free(text);
	return v;
}

/* The metadata text of the sub-trace; @final adds the task table. */
static char *metadata_text(struct krec *k, int final, const struct krec_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	fprintf(f, "# kernel events recorded through tracefs by `ktrace record --kernel`\n");
	fprintf(f, "clock mono\n");
	kcl_md_machine(f, k->ncpu);
	fprintf(f, "pid %d\ncomm ktrace\n", (int)getpid());
	fprintf(f, "channel kernel\nmode discard\nscope cpu\nlayout packed\nbuf-size %u\n", OUT_SUBBUF);
	fprintf(f, "created-ns %" PRIu64 "\nrealtime-ns %" PRIu64 "\n", k->created_ns, k->realtime_ns);
	fprintf(f, "source tracefs %s\nmaskset %s\n", k->name, k->maskset);
	for (unsigned i = 0; i < k->ncpu; i++)
		fprintf(f, "stream %u cpu cpu%u\n", i, i);
	for (size_t i = 0; i < NDEFS; i++) {
		const struct lkst_def *d = &lkst_defs[i];

		if (!d->tp[0])
			continue;
		fprintf(f, "event %u kevent %s %s %s\n", d->id, d->mn, d->cat,
			d->nargs ? d->args : "-");
	}
	for (size_t i = 0; i < k->nx; i++) {
		const struct lkst_def *d = &k->xdefs[i];

		fprintf(f, "event %u kevent %s %s %s\n", d->id, d->mn, d->cat, d->nargs ? d->args : "-");
	}
	for (size_t i = 0; i < NDEFS; i++) {
		const struct lkst_def *d = &lkst_defs[i];

		if (k->sel[d->id] && k->unavail[d->id])
			fprintf(f, "unavailable %u %s %s\n", d->id, d->mn, k->unavail[d->id]);
	}
	if (k->exc_how[0]) /* kclient/exc_tracefs.c */
		fprintf(f, "# EXCEPTION_ENTRY vectors %s%s%s\n", k->exc_how,
			k->exc_why[0] ? "; not: " : "", k->exc_why);
	if (final) {
		for (size_t i = 0; i < k->tasks.cap; i++) {
			const struct task *t = &k->tasks.v[i];

			if (t->pid < 0)
				continue;
			fprintf(f, "thread %d %u %s\n", (int)t->pid, t->tgid,
				t->comm[0] ? t->comm : t->pid == 0 ? "swapper" : "?");
		}
		if (st)
			fprintf(f, "# events %" PRIu64 " lost %" PRIu64 " bytes %" PRIu64
				   " reader-cpu-ns %" PRIu64 "\n",
				st->events, st->lost, st->bytes, k->reader_ns);
		fprintf(f, "# ftrace pages %" PRIu64 " of %d bytes in ftrace/cpuN, %zu events enabled "
			   "(ftrace/set_event)\n",
			k->raw_pages, k->pagesize, k->evl.n);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_metadata(struct krec *k, int final, const struct krec_stats *st)
{
	char *text = metadata_text(k, final, st);
	int err;

	if (!text) {
		kcl_error(CMD, "%s/metadata: out of memory", k->dir);
		return -1;
	}
	err = ksf_replace_at(k->dirfd, "metadata", text, strlen(text));
	free(text);
	if (err < 0) {
		kcl_error(CMD, "%s/metadata: cannot write: %s", k->dir, strerror(-err));
		return -1;
	}
	return 0;
}

static void destroy(struct krec *k)
{
	if (live == k)
		live = NULL;
	if (k->rawfd)
		for (unsigned i = 0; i < k->ncpu; i++)
			if (k->rawfd[i] >= 0)
				close(k->rawfd[i]);
	free(k->rawfd);
	if (k->ftfd >= 0)
		close(k->ftfd);
	krec_evlist_free(&k->evl);
	krec_evlist_free(&k->xl);
	for (size_t i = 0; i < k->nx; i++)
		free(k->xargs[i]);
	free(k->xargs);
	free(k->xdefs);
	if (k->fds)
		for (unsigned i = 0; i < k->ncpu; i++)
			if (k->fds[i] >= 0)
				close(k->fds[i]);
	if (k->out)
		for (unsigned i = 0; i < k->ncpu; i++) {
			if (k->out[i].fd >= 0)
				close(k->out[i].fd);
			free(k->out[i].buf);
		}
	if (k->inst) {
		tracefs_instance_file_write(k->inst, "tracing_on", "0");
		if (tracefs_instance_destroy(k->inst) < 0 && rmdir(k->inst_path) < 0 && errno != ENOENT)
			kcl_error(CMD, "cannot remove the tracefs instance %s: %s", k->inst_path,
				  strerror(errno));
		tracefs_instance_free(k->inst);
	}
	krec_exc_destroy(); /* kprobe events: once the instance is gone */
	if (k->dirfd >= 0)
		close(k->dirfd);
	if (k->wake[0] >= 0)
		close(k->wake[0]);
	if (k->wake[1] >= 0)
		close(k->wake[1]);
	if (k->kbuf)
		kbuffer_free(k->kbuf);
	if (k->tep)
		tep_free(k->tep);
	free(k->bytype);
	free(k->fds);
	free(k->out);
	free(k->page);
	free(k->tasks.v);
	free(k);
}

static int stale_cb(const char *name, void *ctx)
{
	int *n = ctx;
	long pid;
	char *end;

	if (strncmp(name, "ktrace-", 7))
		return 0;
	pid = strtol(name + 7, &end, 10);
	if (*end || pid <= 0 || pid == getpid())
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	{
		struct tracefs_instance *i = tracefs_instance_alloc(NULL, name);

		if (i) {
			if (tracefs_instance_destroy(i) == 0)
				(*n)++;
			tracefs_instance_free(i);
		}
	}
	return 0;
}

int krec_remove_stale(void)
{
	int n = 0;

	if (!tracefs_tracing_dir())
		return 0;
	tracefs_instances_walk(stale_cb, &n);
	return n + krec_exc_remove_stale(); /* after the instances that enabled them */
}

/*
 * Remove the kernel sub-trace @dir (a staging directory): its files, then
 * the directory; a directory holding anything else, a link or another
 * user's directory is left as it is.
 */
static void krec_clear_dir(const char *dir)
{
	int fd = ksf_dir_open(dir, KSF_TRACE | KSF_CLEAR, NULL, 0);

	if (fd >= 0) {
		close(fd);
		rmdir(dir);
	}
}

/*
 * Enable the tracepoints of `-e` (@o->events) in the instance, besides the
 * catalogue's: events/SYS/NAME/enable, one exact event each.  Those
 * outside the catalogue have no KEVENT conversion (convert_event() skips
 * a type it does not know): they are kept in the raw copy only.
 */
static int enable_extra(struct krec *k, char *msg, size_t len)
{
	const struct krec_evlist l = k->xl;
	int rc = 0;

	for (size_t i = 0; i < l.n && !rc; i++) {
		char file[600];

		snprintf(file, sizeof(file), "events/%s/%s/enable", l.sys[i], l.name[i]);
		if (tracefs_instance_file_write(k->inst, file, "1") < 0) {
			snprintf(msg, len, "cannot enable the tracepoint %s:%s in %s: %s", l.sys[i],
				 l.name[i], k->inst_path, strerror(errno ? errno : EINVAL));
			rc = -1;
		}
	}
	return rc;
}

/*
 * Start the raw copy (kclient/ftrace_copy.c): the instance's enabled
 * events as its set_event file lists them (what the ring buffer will hold,
 * whatever matched), the tracefs files, and ftrace/cpuN open for append.
 */
static int start_raw_copy(struct krec *k, char *msg, size_t len)
{
	char *text = tracefs_instance_file_read(k->inst, "set_event", NULL), *save = NULL, *line;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = 0;
		if (krec_evlist_add(&k->evl, line, colon + 1) < 0) {
			free(text);
			snprintf(msg, len, "out of memory");
			return -1;
		}
	}
	free(text);
	k->ftfd = krec_ftrace_begin(k->dir, k->inst, &k->evl, msg, len);
	if (k->ftfd < 0)
		return -1;
	k->rawfd = malloc(k->ncpu * sizeof(*k->rawfd));
	if (!k->rawfd) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < k->ncpu; i++)
		k->rawfd[i] = -1;
	for (unsigned i = 0; i < k->ncpu; i++) {
		char file[32];

		snprintf(file, sizeof(file), "cpu%u", i);
		k->rawfd[i] = ksf_create_at(k->ftfd, file, O_WRONLY | O_APPEND);
		if (k->rawfd[i] < 0) {
			snprintf(msg, len, "%s/ftrace/%s: cannot create: %s", k->dir, file,
				 strerror(-k->rawfd[i]));
			k->rawfd[i] = -1;
			return -1;
		}
	}
	return 0;
}

/*
 * A new recorder for @outdir: its lock key, the maskset of @o and the
 * hooks it names.  Return: the recorder, or NULL (the reason in @msg).
 */
static struct krec *krec_new(const char *outdir, const struct krec_opts *o, char *msg, size_t len)
{
	struct krec *k = calloc(1, sizeof(*k));
	char err[256];

	if (!k) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	if (getrandom(k->lock_key, sizeof(k->lock_key), 0) != (ssize_t)sizeof(k->lock_key)) {
		k->lock_key[0] = now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
		k->lock_key[1] = now_ns(CLOCK_REALTIME);
	}
	lkst_defs = krec_catalogue(&NDEFS);
	k->wake[0] = k->wake[1] = k->dirfd = k->ftfd = -1;
	k->progress = o->progress;
	snprintf(k->maskset, sizeof(k->maskset), "%s", o->maskset && *o->maskset ? o->maskset : "RDEFAULT");
	if (krec_parse_maskset(k->maskset, k->sel, err, sizeof(err)) < 0) {
		snprintf(msg, len, "--kernel: %s", err);
		free(k);
		return NULL;
	}
	for (unsigned i = KTRACE_LKST_HOOK_FIRST; i <= KTRACE_LKST_HOOK_LAST; i++) {
		if (k->sel[i]) {
			add_hooks(k->sel);
			break;
		}
	}
	if (snprintf(k->dir, sizeof(k->dir), "%s", outdir) >= (int)sizeof(k->dir)) {
		snprintf(msg, len, "%s: path too long", outdir);
		free(k);
		return NULL;
	}
	return k;
}

/*
 * The tracefs instance ktrace-PID (a stale one of this pid replaced), in
 * tracefs at *@tdir.  Return: 0, -1 (the reason in @msg).
 */
static int krec_instance(struct krec *k, const char **tdir, char *msg, size_t len)
{
	*tdir = tracefs_tracing_dir();
	if (!*tdir || access(*tdir, F_OK) < 0) {
		snprintf(msg, len, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing "
				   "needs root)");
		return -1;
	}
	krec_remove_stale();
	snprintf(k->name, sizeof(k->name), "ktrace-%d", (int)getpid());
	if (tracefs_instance_exists(k->name)) {
		struct tracefs_instance *old = tracefs_instance_alloc(NULL, k->name);

		if (old) {
			tracefs_instance_destroy(old);
			tracefs_instance_free(old);
		}
	}
	errno = 0;
	k->inst = tracefs_instance_create(k->name);
	if (!k->inst) {
		int e = errno ? errno : EACCES;

		if (e == EACCES || e == EPERM || e == EROFS)
			snprintf(msg, len, "no permission to create a tracefs instance in %s/instances "
					   "(%s): kernel events need root", *tdir, strerror(e));
		else
			snprintf(msg, len, "cannot create the tracefs instance %s/instances/%s: %s", *tdir,
				 k->name, strerror(e));
		return -1;
	}
	snprintf(k->inst_path, sizeof(k->inst_path), "%s/instances/%s", *tdir, k->name);
	return 0;
}

/*
 * The instance set up, tracing still off: the clock, the buffer size, the
 * events of the maskset and of -e.  Return: 0, -1 (the reason in @msg).
 */
static int krec_configure(struct krec *k, const struct krec_opts *o, const char *tdir, char *msg,
			  size_t len)
{
	unsigned buf_kb = o->buf_kb ? o->buf_kb : DEFAULT_BUF_KB;
	char val[64];

	if (tracefs_instance_file_write(k->inst, "tracing_on", "0") < 0 ||
	    tracefs_instance_file_write(k->inst, "trace_clock", "mono") < 0) {
		snprintf(msg, len, "%s: cannot set tracing_on/trace_clock mono: %s", k->inst_path,
			 strerror(errno ? errno : EINVAL));
		return -1;
	}
	snprintf(val, sizeof(val), "%u", buf_kb);
	if (tracefs_instance_file_write(k->inst, "buffer_size_kb", val) < 0) {
		snprintf(msg, len, "%s/buffer_size_kb: cannot set %u KiB per CPU: %s", k->inst_path,
			 buf_kb, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	tracefs_instance_file_write(k->inst, "buffer_percent", WAKE_PERCENT);
	tracefs_option_enable(k->inst, TRACEFS_OPTION_OVERWRITE);
	/* -e: catalogue tracepoints are recorded as the catalogue's events */
	if (o->nevents && krec_events_match(o->events, o->nevents, &k->xl, msg, len) < 0)
		return -1;
	for (size_t i = 0; i < k->xl.n; i++) {
		const struct lkst_def *d = catalogue_tp(k->xl.sys[i], k->xl.name[i]);

		if (d)
			k->sel[d->id] = 1;
	}
	if (k->sel[KTRACE_LKST_EXCEPTION_ENTRY]) /* kclient/exc_tracefs.c */
		k->nexc = krec_exc_create(k->exc_why, sizeof(k->exc_why));
	/* only the reader thread is left out (reader_main()): ktrace's main thread
	 * forks the program, and that task_newtask names the program's tgid */
	if (setup_events(k) < 0) {
		snprintf(msg, len, "%s: cannot read the event formats: %s", tdir,
			 strerror(errno ? errno : EINVAL));
		return -1;
	}
	k->kbuf = tep_kbuffer(k->tep);
	if (!k->kbuf) {
		snprintf(msg, len, "libtraceevent: no kbuffer for this kernel's ring-buffer pages");
		return -1;
	}
	return enable_extra(k, msg, len);
}

/* The CPUs, the ring-buffer page size and the per-CPU tables.  Return: 0, -1 (in @msg). */
static int krec_cpus(struct krec *k, char *msg, size_t len)
{
	long nc = sysconf(_SC_NPROCESSORS_CONF);
	char *sub = tracefs_instance_file_read(k->inst, "buffer_subbuf_size_kb", NULL);

	k->ncpu = nc > 0 ? (unsigned)nc : 1;
	k->pagesize = (int)sysconf(_SC_PAGESIZE);
	if (sub) {
		long kb = strtol(sub, NULL, 10);

		if (kb > 0 && kb <= 1024)
			k->pagesize = (int)(kb * 1024);
		free(sub);
	}
	k->fds = malloc(k->ncpu * sizeof(*k->fds));
	k->out = calloc(k->ncpu, sizeof(*k->out));
	k->page = malloc((size_t)k->pagesize);
	if (!k->fds || !k->out || !k->page) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < k->ncpu; i++) {
		k->fds[i] = -1;
		k->out[i].fd = -1;
	}
	return 0;
}

/* CPU @i: its trace_pipe_raw opened, OUTDIR/kernel's cpuN created.  Return: 0, -1 (in @msg). */
static int krec_open_cpu(struct krec *k, unsigned i, char *msg, size_t len)
{
	char file[64];
	char *p;

	snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", i);
	p = tracefs_instance_get_file(k->inst, file);
	if (p) {
		k->fds[i] = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		tracefs_put_tracing_file(p);
	}
	k->out[i].cpu = i;
	k->out[i].buf = malloc(OUT_SUBBUF);
	snprintf(file, sizeof(file), "cpu%u", i);
	k->out[i].fd = ksf_create_at(k->dirfd, file, O_WRONLY);
	if (k->out[i].fd < 0 || !k->out[i].buf) {
		snprintf(msg, len, "%s/%s: cannot create: %s", k->dir, file,
			 strerror(k->out[i].fd < 0 ? -k->out[i].fd : ENOMEM));
		return -1;
	}
	k->out[i].overrun0 = cpu_stat(k, i, "overrun: ");
	return 0;
}

/*
 * Tracing on: the metadata written, the wake pipe, the cleanup handlers,
 * tracing_on, the reader thread.  Return: 0, -1 (in @msg).
 */
static int krec_go(struct krec *k, char *msg, size_t len)
{
	sigset_t all, old;

	k->created_ns = now_ns(CLOCK_MONOTONIC);
	k->realtime_ns = now_ns(CLOCK_REALTIME);
	if (write_metadata(k, 0, NULL) < 0) {
		snprintf(msg, len, "%s/metadata: cannot write", k->dir);
		return -1;
	}
	if (pipe2(k->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(msg, len, "pipe: %s", strerror(errno));
		return -1;
	}
	install_cleanup(k);
	if (tracefs_instance_file_write(k->inst, "tracing_on", "1") < 0) {
		snprintf(msg, len, "%s/tracing_on: %s", k->inst_path, strerror(errno ? errno : EINVAL));
		return -1;
	}
	/* the reader thread: signals stay with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	k->thr_started = pthread_create(&k->thr, NULL, reader_main, k) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!k->thr_started) {
		snprintf(msg, len, "cannot start the reader thread");
		return -1;
	}
	return 0;
}

struct krec *krec_start(const char *outdir, const struct krec_opts *o, char *msg, size_t len)
{
	struct krec *k = krec_new(outdir, o, msg, len);
	const char *tdir;
	int created_dir = 0;

	if (!k)
		return NULL;
	if (krec_instance(k, &tdir, msg, len) < 0) {
		free(k);
		return NULL;
	}
	if (krec_configure(k, o, tdir, msg, len) < 0 || krec_cpus(k, msg, len) < 0)
		goto fail;
	k->dirfd = ksf_dir_open(k->dir, KSF_CREATE | KSF_TRACE, msg, len);
	if (k->dirfd < 0)
		goto fail;
	created_dir = 1;
	if (start_raw_copy(k, msg, len) < 0)
		goto fail;
	for (unsigned i = 0; i < k->ncpu; i++)
		if (krec_open_cpu(k, i, msg, len) < 0)
			goto fail;
	if (krec_go(k, msg, len) < 0)
		goto fail;
	return k;
fail:
	if (created_dir)
		krec_clear_dir(k->dir);
	destroy(k);
	return NULL;
}

int krec_stop(struct krec *k, struct krec_stats *st)
{
	struct krec_stats s;
	int rc = 0;

	if (!k)
		return 0;
	tracefs_instance_file_write(k->inst, "tracing_on", "0");
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	if (k->thr_started) {
		if (write(k->wake[1], "x", 1) < 0)
			(void)0;
		pthread_join(k->thr, NULL);
	}
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < k->ncpu; i++) {
		struct kout *o = &k->out[i];
		uint64_t overrun;

		drain_cpu(k, i);
		overrun = cpu_stat(k, i, "overrun: ");
		if (overrun >= o->overrun0 && overrun - o->overrun0 > o->lost_total &&
		    !o->missed_pages) {
			/* lost events no page told about */
			out_lost(k, o, overrun - o->overrun0 - o->lost_total, o->last_ts);
		}
		out_flush(k, o);
		s.lost += o->lost_total;
		if (o->fd >= 0 && fsync(o->fd) < 0 && errno != EINVAL && !o->failed) {
			write_err(k, o, errno);
		}
	}
	if (k->ftfd >= 0) {
		char m[512];

		for (unsigned i = 0; i < k->ncpu; i++)
			if (k->rawfd[i] >= 0 && fsync(k->rawfd[i]) < 0 && errno != EINVAL) {
				kcl_error(CMD, "%s/ftrace/cpu%u: fsync: %s", k->dir, i, strerror(errno));
				k->werr = 1;
			}
		if (krec_ftrace_end(k->ftfd, k->dir, m, sizeof(m)) < 0) {
			kcl_error(CMD, "%s", m);
			k->werr = 1;
		}
	}
	s.events = k->events;
	s.bytes = k->bytes;
	s.raw_pages = k->raw_pages;
	s.raw_enabled = (unsigned)k->evl.n;
	s.enabled = k->enabled;
	s.unavailable = k->nunavail;
	s.cpus = k->ncpu;
	if (write_metadata(k, 1, &s) < 0 || k->werr)
		rc = -1;
	if (st)
		*st = s;
	destroy(k);
	return rc;
}

/* ---- the `ktrace record --kernel` flows ----------------------------------- */

/*
 * The template "PARENT/.BASE.kernel-XXXXXX" beside @dir for mkdtemp(3):
 * where a program's kernel events go while it runs (its runtime clears
 * DIR when it starts).  mkdtemp() makes the name unpredictable and the
 * directory new (mode 0700), never one that already exists.
 */
static int staging_path(const char *dir, char *out, size_t size)
{
	const char *slash = strrchr(dir, '/');
	int n;

	if (slash)
		n = snprintf(out, size, "%.*s/.%s.kernel-XXXXXX", (int)(slash - dir), dir, slash + 1);
	else
		n = snprintf(out, size, ".%s.kernel-XXXXXX", dir);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static void summary(const char *where, const struct krec_stats *st)
{
	fprintf(stderr, "ktrace record: kernel: %" PRIu64 " events, %" PRIu64 " lost, from %u tracepoint%s "
			"on %u CPU%s, %.1f MB in %s",
		st->events, st->lost, st->enabled, st->enabled == 1 ? "" : "s", st->cpus,
		st->cpus == 1 ? "" : "s", (double)st->bytes / 1e6, where);
	if (st->unavailable)
		fprintf(stderr, "; %u selected event%s unavailable (see %s/metadata)", st->unavailable,
			st->unavailable == 1 ? "" : "s", where);
	fprintf(stderr, "; raw: %" PRIu64 " pages of %u tracepoint%s in %s/ftrace", st->raw_pages,
		st->raw_enabled, st->raw_enabled == 1 ? "" : "s", where);
	fputc('\n', stderr);
}

struct krec *krec_begin_program(const char *dir, const struct krec_opts *o, const char *prog)
{
	char stage[PATH_MAX], msg[512];
	struct krec *k;

	if (!o)
		return NULL;
	if (staging_path(dir, stage, sizeof(stage)) < 0) {
		kcl_error(CMD, "%s: path too long", dir);
		return NULL;
	}
	if (!mkdtemp(stage)) {
		kcl_error(CMD, "kernel events not recorded: %s: cannot create a staging directory: %s; recording %s alone",
			  stage, strerror(errno), prog);
		return NULL;
	}
	k = krec_start(stage, o, msg, sizeof(msg));
	if (!k) {
		rmdir(stage); /* still empty: krec_start() leaves nothing behind */
		kcl_error(CMD, "kernel events not recorded: %s; recording %s alone", msg, prog);
	}
	return k;
}

int krec_end_program(struct krec *k, const char *dir, int keep, int quiet)
{
	char kdir[PATH_MAX + 8], stage[PATH_MAX], msg[512];
	struct krec_stats st;
	int rc, dfd;

	if (!k)
		return 0;
	snprintf(stage, sizeof(stage), "%s", k->dir);
	rc = krec_stop(k, &st);
	if (!keep) {
		krec_clear_dir(stage);
		return rc;
	}
	snprintf(kdir, sizeof(kdir), "%s/kernel", dir);
	/* (the final calibration pair of DIR/metadata is the consumer's: consumer/consumer.c) */
	dfd = ksf_dir_open(dir, KSF_CREATE, msg, sizeof(msg));
	if (dfd < 0 || renameat(AT_FDCWD, stage, dfd, "kernel") < 0) {
		kcl_error(CMD, "cannot move the kernel events from %s to %s: %s", stage, kdir,
			  dfd < 0 ? msg : strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	close(dfd);
	if (!quiet)
		summary(kdir, &st);
	return rc;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

int krec_record_system(const char *dir, const struct krec_opts *o, int quiet)
{
	char kdir[PATH_MAX + 8], msg[512];
	struct sigaction sa, old[3];
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	sigset_t block, prev;
	struct krec_stats st;
	struct krec *k;
	int rc, dfd;

	dfd = ksf_dir_open(dir, KSF_CREATE | KSF_TRACE | KSF_CLEAR, msg, sizeof(msg));
	if (dfd < 0) {
		kcl_error(CMD, "%s", msg);
		return 1;
	}
	close(dfd);
	snprintf(kdir, sizeof(kdir), "%s/kernel", dir);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&block);
	for (int i = 0; i < 3; i++) {
		sigaction(sigs[i], &sa, &old[i]);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &prev);
	got_signal = 0;
	k = krec_start(kdir, o, msg, sizeof(msg));
	if (!k) {
		kcl_error(CMD, "kernel events cannot be recorded: %s", msg);
		rmdir(dir);
		rc = 1;
		goto out;
	}
	if (!quiet)
		fprintf(stderr, "ktrace record: recording kernel events (%s) into %s; Ctrl-C stops\n",
			o->maskset && *o->maskset ? o->maskset : "RDEFAULT", kdir);
	while (!got_signal)
		sigsuspend(&prev);
	rc = krec_stop(k, &st) < 0 ? 1 : 0;
	if (!quiet)
		summary(kdir, &st);
out:
	sigprocmask(SIG_SETMASK, &prev, NULL);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	return rc;
}
