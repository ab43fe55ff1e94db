/*
 * cli/record_attach.c - `ktrace record -p PID`: the ptrace side of
 * attaching to a running process (x86-64), loading libktrace into it,
 * patching its functions while every thread is stopped, and undoing that
 * at the end so that the process runs on as it was.  The protocol with
 * the library is lib/kft_attach.h's.
 *
 * Stopping: every thread is seized (PTRACE_SEIZE, listed from
 * /proc/PID/task until no new one appears) and interrupted
 * (PTRACE_INTERRUPT); a thread that stops for a signal instead keeps the
 * signal, delivered when it resumes.
 *
 * Calling a function in the process (att_call()): one thread's registers
 * and extended state (PTRACE_GETREGSET NT_X86_XSTATE: SSE/AVX) are saved;
 * its stack pointer is moved below the red zone, the arguments' bytes are
 * written there, a return address of 0 is pushed and %rip set to the
 * function: the call ends with a SIGSEGV at address 0, where the saved
 * state is put back.  orig_rax = -1 keeps the kernel from restarting the
 * system call the thread was stopped in while the call runs; the saved
 * registers restart it afterwards, as gdb's `call` does.  The other
 * threads run meanwhile (a lock the call needs may be held by one of
 * them); any stop of theirs is resumed at once.
 *
 * Patching: record reads the list of writes the library planned
 * (process_vm_readv: functions' entries, and the GOT slots of compiled
 * hooks) and, every thread stopped, makes each with PTRACE_POKEDATA (which
 * writes read-only text and RELRO), unless a thread's %rip lies inside the
 * bytes of an entry to replace: that one is tried again after the threads
 * ran for a millisecond (50 times at most, then left alone).  At the
 * end the same writes are undone, where the bytes are still ours.
 *
 * Not thread-safe (one attach per process); uses waitpid(-1): the caller
 * has no other child to wait for while it runs.
 */
#include <dirent.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <libelf.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/record_attach.h"
#include "cli/record_opts.h"
#include "lib/kft_attach.h"

#if defined(__x86_64__)

#define XSTATE_MAX 16384

/* One thread of the process: its tid, and the signal it stopped with, to deliver when it resumes. */
struct att_thread {
	pid_t tid;
	int sig;
	int gone;
};

struct rec_attach_state {
	pid_t pid;
	struct att_thread *t;
	size_t n, cap;
	uint64_t info;                /* the library's struct kft_attach_info */
	struct kft_patch_write *w;    /* the writes planned */
	unsigned char *done;          /* per write: 1 written */
	size_t nw;
	char lib[256];                /* libktrace's file name */
	void (*idle)(void *arg);      /* struct rec_attach's */
	void (*stopped)(void *arg);
	void *arg;
	int solo;                     /* att_call(): the other threads stay stopped */
	char *err;
	size_t errlen;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int att_fail(struct rec_attach_state *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int att_fail(struct rec_attach_state *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int att_known(const struct rec_attach_state *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return 1;
	return 0;
}

/* The reason a PTRACE_SEIZE of @pid was refused, in words with what to do. */
static void seize_refused(struct rec_attach_state *s, int e)
{
	char scope = '0';
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &scope, 1) != 1)
			scope = '0';
		close(fd);
	}
	if (e == EPERM && scope == '3')
		att_fail(s, "process %d: ptrace refused: Yama's ptrace_scope is 3 (no process may attach "
			    "to another, root included, until the next boot): start the program under "
			    "`ktrace record` instead", (int)s->pid);
	else if (e == EPERM && (scope == '1' || scope == '2') && geteuid() != 0)
		att_fail(s, "process %d: ptrace refused: Yama's ptrace_scope is %c (%s): run ktrace as "
			    "root%s", (int)s->pid, scope,
			 scope == '1' ? "a process may trace only its descendants"
				      : "only root (CAP_SYS_PTRACE) may attach",
			 scope == '1' ? ", or `sysctl kernel.yama.ptrace_scope=0`" : "");
	else if (e == EPERM)
		att_fail(s, "process %d: ptrace refused (another user's process, a set-user-ID or "
			    "non-dumpable program, or one already traced): run ktrace as its user or "
			    "as root",
			 (int)s->pid);
	else
		att_fail(s, "process %d: ptrace(PTRACE_SEIZE): %s", (int)s->pid, strerror(e));
}

/* Wait for thread @tid's next stop; its signal kept if it stopped for one.  -1: it is gone. */
static int wait_stop(struct rec_attach_state *s, struct att_thread *t)
{
	for (;;) {
		int st;
		pid_t r = waitpid(t->tid, &st, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return -1;
		}
		if (WIFSTOPPED(st)) {
			if (st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP)
				t->sig = WSTOPSIG(st); /* signal-delivery-stop: deliver it later */
			return 0;
		}
	}
	(void)s;
}

/*
 * Seize and stop every thread of the process: those seized already (and
 * running) but @stopped, then any not seized yet.  Return: 0, or -1 with
 * s->err.
 */
static int att_stop_all(struct rec_attach_state *s, pid_t stopped)
{
	char path[64];
	int added;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
	for (size_t i = 0; i < s->n; i++)
		if (!s->t[i].gone && s->t[i].tid != stopped &&
		    ptrace(PTRACE_INTERRUPT, s->t[i].tid, 0, 0) == 0)
			wait_stop(s, &s->t[i]);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return att_fail(s, "process %d: %s", (int)s->pid,
					errno == ENOENT ? "no such process" : strerror(errno));
		added = 0;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || att_known(s, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
				int e = errno;

				if (e == ESRCH)
					continue; /* a thread that just ended */
				closedir(d);
				seize_refused(s, e);
				return -1;
			}
			if (s->n == s->cap) {
				size_t cap = s->cap ? s->cap * 2 : 64;
				struct att_thread *m = realloc(s->t, cap * sizeof(*m));

				if (!m) {
					closedir(d);
					return att_fail(s, "out of memory");
				}
				s->t = m;
				s->cap = cap;
			}
			s->t[s->n] = (struct att_thread){ tid, 0, 0 };
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0)
				wait_stop(s, &s->t[s->n]);
			else
				s->t[s->n].gone = 1;
			s->n++;
			added = 1;
		}
		closedir(d);
	} while (added); /* a thread created while we looked */
	return 0;
}

/* Let thread @t run again, with the signal it stopped for. */
static void att_resume(struct att_thread *t)
{
	if (!t->gone && ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)t->sig) == 0)
		t->sig = 0;
}

static void att_resume_all(struct rec_attach_state *s, pid_t except)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid != except)
			att_resume(&s->t[i]);
}

static void att_detach_all(struct rec_attach_state *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->t[i].gone)
			ptrace(PTRACE_DETACH, s->t[i].tid, 0, (void *)(long)s->t[i].sig);
	s->n = 0;
}

/* Copy @len bytes to the process at @addr (its writable memory, or text through ptrace). */
static int poke(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	const unsigned char *b = buf;

	while (len) {
		uint64_t base = addr & ~(uint64_t)7;
		size_t off = addr - base, k = 8 - off < len ? 8 - off : len;
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, tid, (void *)base, 0);
		if (errno)
			return -1;
		memcpy((char *)&word + off, b, k);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)base, (void *)word) != 0)
			return -1;
		addr += k;
		b += k;
		len -= k;
	}
	return 0;
}

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * Make thread @t (stopped) call @fn(@a0, @a1) in the process, @data
 * (@dlen bytes) copied onto its stack first and its address passed for
 * @a0 when @a0 is ~0.  The other threads run meanwhile.  Return: 0 with
 * the function's return value in *@ret, or -1 with s->err.
 */
static int att_call(struct rec_attach_state *s, struct att_thread *t, uint64_t fn, uint64_t a0,
		    uint64_t a1, const void *data, size_t dlen, uint64_t *ret)
{
	struct user_regs_struct saved, regs;
	static unsigned char xsave[XSTATE_MAX];
	struct iovec xv = { xsave, sizeof(xsave) };
	uint64_t sp;
	int have_x, rc = -1;
	time_t said = time(NULL) + 10;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &saved) != 0)
		return att_fail(s, "thread %d: PTRACE_GETREGS: %s", (int)t->tid, strerror(errno));
	have_x = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &xv) == 0;
	regs = saved;
	sp = (saved.rsp - 4096 - dlen) & ~(uint64_t)15; /* below the red zone and more */
	if (data && poke(t->tid, sp, data, dlen) < 0)
		return att_fail(s, "thread %d: cannot write its stack: %s", (int)t->tid, strerror(errno));
	if (a0 == ~(uint64_t)0)
		a0 = sp;
	sp -= 8;
	if (poke(t->tid, sp, &(uint64_t){ 0 }, 8) < 0)
		return att_fail(s, "thread %d: cannot write its stack: %s", (int)t->tid, strerror(errno));
	regs.rsp = sp;
	regs.rip = fn;
	regs.rdi = a0;
	regs.rsi = a1;
	regs.rax = 0;
	regs.orig_rax = (uint64_t)-1; /* no restart of the interrupted system call meanwhile */
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &regs) != 0)
		return att_fail(s, "thread %d: PTRACE_SETREGS: %s", (int)t->tid, strerror(errno));
	if (!s->solo)
		att_resume_all(s, t->tid);
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) != 0) {
		att_fail(s, "thread %d: PTRACE_CONT: %s", (int)t->tid, strerror(errno));
		goto restore;
	}
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			struct timespec ms = { 0, 1000000 };

			if (time(NULL) > said) {
				fprintf(stderr, "ktrace record: still waiting for thread %d of process %d to "
						"return from libktrace's set-up\n",
					(int)t->tid, (int)s->pid);
				said = time(NULL) + 30;
			}
			nanosleep(&ms, NULL);
			continue;
		}
		if (r < 0) {
			att_fail(s, "process %d: waitpid: %s", (int)s->pid, strerror(errno));
			return -1;
		}
		if (r != t->tid) {
			/* another thread stopped: a signal or a late interrupt */
			for (size_t i = 0; i < s->n; i++)
				if (s->t[i].tid == r) {
					if (WIFEXITED(st) || WIFSIGNALED(st)) {
						s->t[i].gone = 1;
					} else if (WIFSTOPPED(st)) {
						if (st >> 16 == 0)
							s->t[i].sig = WSTOPSIG(st);
						att_resume(&s->t[i]);
					}
				}
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return att_fail(s, "process %d ended during the call into it", (int)s->pid);
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == 0 && WSTOPSIG(st) == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) != 0) {
				att_fail(s, "thread %d: PTRACE_GETREGS: %s", (int)t->tid, strerror(errno));
				goto restore;
			}
			if (regs.rip == 0) {
				*ret = regs.rax;
				rc = 0;
				break;
			}
			att_fail(s, "thread %d: the call into the process faulted at %#llx (the "
				    "process is left stopped there; it will die of the fault)",
				 (int)t->tid, (unsigned long long)regs.rip);
			return -1;
		}
		/* a signal for this thread meanwhile: its handler runs, then the call goes on */
		ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)(st >> 16 == 0 ? WSTOPSIG(st) : 0));
	}
restore:
	/* stop the others again, then put the thread back where it was */
	if (!s->solo)
		att_stop_all(s, t->tid);
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &saved) != 0 ||
	    (have_x && ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &xv) != 0))
		return att_fail(s, "thread %d: cannot restore its registers: %s", (int)t->tid,
				strerror(errno));
	return rc;
}

/* A mapping of /proc/PID/maps (maps_of()). */
struct map_line {
	uint64_t lo, hi, off;
	unsigned long ino;
	char perm[8];
	const char *path;
};

/*
 * Call @fn(@m, @arg) for each mapping of process @pid whose path ends with
 * "/@file", in address order, until it returns nonzero.
 * Return: that value, 0 when none did, -1 if the maps cannot be read.
 */
static int maps_of(pid_t pid, const char *file, int (*fn)(const struct map_line *m, void *arg),
		   void *arg)
{
	char path[64], line[4400], p[4096];
	size_t fl = strlen(file);
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!rc && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		struct map_line m;
		size_t pl;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %lu %4095s", &lo, &hi, m.perm, &off, &m.ino,
			   p) != 6)
			continue;
		pl = strlen(p);
		if (pl <= fl || p[pl - fl - 1] != '/' || strcmp(p + pl - fl, file))
			continue;
		m.lo = lo;
		m.hi = hi;
		m.off = off;
		m.path = p;
		rc = fn(&m, arg);
	}
	fclose(f);
	return rc;
}

struct obj_base {
	uint64_t base;
	char *obj;
	size_t size;
	unsigned long ino;
};

static int first_mapping(const struct map_line *m, void *arg)
{
	struct obj_base *o = arg;

	if (m->off)
		return 0;
	o->base = m->lo;
	o->ino = m->ino;
	snprintf(o->obj, o->size, "%s", m->path);
	return 1;
}

/*
 * The object of process @pid whose path ends with "/@file": its first
 * mapping's address (offset 0: its base, ET_DYN objects are linked at 0)
 * into *@base, its path into @obj and its inode into *@ino.  Return: 0, or
 * -1 if none is mapped.
 */
static int remote_obj(pid_t pid, const char *file, uint64_t *base, char *obj, size_t size,
		      unsigned long *ino)
{
	struct obj_base o = { 0, obj, size, 0 };

	if (maps_of(pid, file, first_mapping, &o) != 1)
		return -1;
	*base = o.base;
	*ino = o.ino;
	return 0;
}

/* rec_elf_funcs()'s callback for dynsym_value(): @arg is {name, value}. */
struct sym_value {
	const char *name;
	uint64_t value;
};

static int is_named(const GElf_Sym *sym, const char *name, void *arg)
{
	struct sym_value *v = arg;

	if (strcmp(name, v->name))
		return 0;
	v->value = sym->st_value;
	return 1;
}

/* The value of the defined function symbol @name in @elf's .dynsym, or 0. */
static uint64_t dynsym_value(Elf *elf, const char *name)
{
	struct sym_value v = { name, 0 };

	rec_elf_funcs(elf, SHT_DYNSYM, is_named, &v);
	return v.value;
}

/*
 * The run-time address in process @pid of symbol @name of the loaded
 * object whose path ends with "/@file", read from the file the process
 * mapped (its mount namespace; a file replaced since, a rebuilt library,
 * is another inode: refused, its addresses would be wrong).
 * Return: the address, or 0.
 */
static uint64_t remote_sym(pid_t pid, const char *file, const char *name)
{
	char obj[4096], path[4200];
	uint64_t base, value = 0;
	unsigned long ino;
	struct stat st;
	Elf *elf;
	int fd;

	if (remote_obj(pid, file, &base, obj, sizeof(obj), &ino) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, obj);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_ino == ino) {
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (elf) {
			value = dynsym_value(elf, name);
			elf_end(elf);
		}
	}
	close(fd);
	return value ? base + value : 0;
}

/* The thread to make calls: the main thread, else the first one still there. */
static struct att_thread *caller(struct rec_attach_state *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == s->pid && !s->t[i].gone)
			return &s->t[i];
	for (size_t i = 0; i < s->n; i++)
		if (!s->t[i].gone)
			return &s->t[i];
	return NULL;
}

/* Read the library's answer at @addr; -1 with s->err if it failed. */
static int read_info(struct rec_attach_state *s, uint64_t addr, struct kft_attach_info *info,
		     const char *what)
{
	if (!addr || peek(s->pid, addr, info, sizeof(*info)) < 0 || info->magic != KFT_ATTACH_MAGIC) {
		info->status = -EIO;
		return att_fail(s, "process %d: libktrace's %s gave no answer", (int)s->pid, what);
	}
	info->error[sizeof(info->error) - 1] = '\0';
	if (info->status)
		return att_fail(s, "process %d: %s", (int)s->pid,
				info->error[0] ? info->error : strerror(-info->status));
	return 0;
}

/* The %rip of every thread (stopped) into a malloc'ed array of *@n; NULL if none could be read. */
static uint64_t *thread_rips(struct rec_attach_state *s, size_t *n)
{
	uint64_t *rip = malloc((s->n ? s->n : 1) * sizeof(*rip));

	*n = 0;
	for (size_t i = 0; rip && i < s->n; i++) {
		struct user_regs_struct regs;

		if (!s->t[i].gone && ptrace(PTRACE_GETREGS, s->t[i].tid, 0, &regs) == 0)
			rip[(*n)++] = regs.rip;
	}
	return rip;
}

/* Is one of the @n addresses @rip inside the bytes write @w replaces (after their first)? */
static int thread_inside(const uint64_t *rip, size_t n, const struct kft_patch_write *w)
{
	for (size_t i = 0; i < n; i++)
		if (rip[i] > w->addr && rip[i] < w->addr + w->len)
			return 1;
	return 0;
}

/*
 * Make the writes the library planned not made yet, every thread
 * stopped, counted into @res; an entry a thread is stopped inside is left
 * for the next round.  Return: how many are left for that reason.
 */
static unsigned att_write_round(struct rec_attach_state *s, struct rec_attach_result *res)
{
	pid_t tid = caller(s)->tid;
	size_t nrip = 0;
	uint64_t *rip = thread_rips(s, &nrip);
	unsigned left = 0;

	for (size_t k = 0; rip && k < s->nw; k++) {
		unsigned char now[16];
		const struct kft_patch_write *w = &s->w[k];

		if (s->done[k]) /* 1 made, 2 given up */
			continue;
		if (w->len > sizeof(now) || peek(s->pid, w->addr, now, w->len) < 0 ||
		    memcmp(now, w->old, w->len)) {
			s->done[k] = 2; /* changed since it was planned */
			continue;
		}
		if (w->kind == KFT_WRITE_ENTRY && thread_inside(rip, nrip, w)) {
			left++;
			continue;
		}
		if (poke(tid, w->addr, w->new_, w->len) == 0) {
			s->done[k] = 1;
			if (w->kind == KFT_WRITE_HOOK)
				res->hooks++;
			else
				res->patched++;
		} else {
			s->done[k] = 2;
		}
	}
	free(rip);
	return left;
}

/* The library's list of writes @info names into s->w (none made yet).  Return: 0 or -1. */
static int read_writes(struct rec_attach_state *s, const struct kft_attach_info *info)
{
	free(s->w);
	free(s->done);
	s->w = NULL;
	s->done = NULL;
	s->nw = info->nwrites;
	if (!s->nw)
		return -1;
	s->w = calloc(s->nw, sizeof(*s->w));
	s->done = calloc(s->nw, 1);
	if (!s->w || !s->done || peek(s->pid, info->writes, s->w, s->nw * sizeof(*s->w)) < 0) {
		s->nw = 0;
		return -1;
	}
	return 0;
}

/* Let every thread run for about @ns ns (the consumer drains meanwhile: s->idle). */
static void att_let_run(struct rec_attach_state *s, long ns)
{
	att_resume_all(s, 0);
	if (s->idle)
		s->idle(s->arg);
	nanosleep(&(struct timespec){ 0, ns }, NULL);
}

/*
 * Every thread stopped: make the writes the library planned.  A function a
 * thread is stopped inside (its hot loop, say) is tried again after the
 * threads ran for a moment, 50 times at most; then it is left alone,
 * counted in @res->inside.
 */
static void att_patch(struct rec_attach_state *s, const struct kft_attach_info *info,
		      struct rec_attach_result *res)
{
	if (read_writes(s, info) < 0)
		return;
	for (int round = 0; (res->inside = att_write_round(s, res)) && round < 50; round++) {
		att_let_run(s, 1000000);
		if (att_stop_all(s, 0) < 0)
			break;
	}
}

/* Every thread stopped: put the old bytes back where ours are still there. */
static void att_unpatch(struct rec_attach_state *s)
{
	pid_t tid = caller(s) ? caller(s)->tid : 0;

	for (size_t k = 0; tid && k < s->nw; k++) {
		unsigned char now[16];
		const struct kft_patch_write *w = &s->w[k];

		if (s->done[k] == 1 && peek(s->pid, w->addr, now, w->len) == 0 &&
		    !memcmp(now, w->new_, w->len))
			poke(tid, w->addr, w->old, w->len);
	}
}

static int att_retire(struct rec_attach_state *s);

/*
 * An unwinder of process @pid, whose threads record has stopped (ptrace):
 * elfutils' libdwfl over /proc/PID/maps.  Return: it (dwfl_end() after), or NULL.
 */
static Dwfl *proc_dwfl(pid_t pid)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (dwfl && (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
		     dwfl_linux_proc_attach(dwfl, pid, true) != 0)) {
		dwfl_end(dwfl);
		dwfl = NULL;
	}
	return dwfl;
}

/* ---- calls open at the attach ---- */

#define ADOPT_MAX 256 /* calls adopted per thread at most (the outermost beyond are left) */

/* What adopt_frame() gathers from one thread's stack. */
struct adopt {
	struct rec_attach_state *s;
	Dwfl *dwfl;
	uint64_t pairs[2 * ADOPT_MAX]; /* (return-address slot, function), innermost first */
	unsigned n, depth;
	uint64_t callee_pc; /* the previous (inner) frame's pc, in its function */
	uint64_t rest[2];   /* the exit trampolines: a call already diverted */
};

/* Is @fn a function whose entry record patched (a write of kind ENTRY made)? */
static int entry_patched(const struct rec_attach_state *s, uint64_t fn)
{
	for (size_t i = 0; i < s->nw; i++)
		if (s->done[i] && s->w[i].kind == KFT_WRITE_ENTRY &&
		    (s->w[i].addr == fn || s->w[i].addr == fn + 4)) /* (after endbr64) */
			return 1;
	return 0;
}

/*
 * dwfl_getthread_frames()'s callback: in frame k >= 1 (a caller), the
 * stack pointer is the inner frame's CFA, so the inner call's return
 * address lies in the word below it; that call is adopted if its
 * function's entry was patched and the word holds this frame's pc.
 */
static int adopt_frame(Dwfl_Frame *state, void *arg)
{
	struct adopt *a = arg;
	bool activation;
	Dwarf_Addr pc;
	Dwarf_Word sp;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* (an exact pc past frame 0 is a signal-interrupted context: its stack
	 * pointer is not the inner frame's CFA, so nothing is adopted there) */
	if (a->depth++ && !activation && dwfl_frame_reg(state, 7 /* DWARF %rsp */, &sp) == 0 &&
	    a->n < ADOPT_MAX) {
		Dwfl_Module *mod = dwfl_addrmodule(a->dwfl, a->callee_pc);
		GElf_Off off = 0;
		GElf_Sym sym;
		uint64_t word = 0;

		/* (a thread stopped on a patched entry itself enters through the patch) */
		if (mod && dwfl_module_addrinfo(mod, a->callee_pc, &off, &sym, NULL, NULL, NULL) &&
		    (a->depth > 2 || (off != 0 && off != 4)) && entry_patched(a->s, a->callee_pc - off) &&
		    peek(a->s->pid, sp - 8, &word, 8) == 0 && word == pc) {
			a->pairs[2 * a->n] = sp - 8;
			a->pairs[2 * a->n + 1] = a->callee_pc - off;
			a->n++;
		}
	}
	if (pc == a->rest[0] || pc == a->rest[1])
		return DWARF_CB_ABORT; /* returns into a trampoline: no CFI beyond */
	a->callee_pc = activation ? pc : pc - 1;
	return a->depth < 1024 ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Every thread stopped, the run started (kft_attach_go()): each thread's
 * calls of patched functions that were open when record attached are
 * handed to it (kft_attach_adopt(), injected into that thread), so they
 * show in the trace, flagged unfinished.  A thread whose stack cannot be
 * unwound keeps its calls unseen.  Return: calls adopted.
 */
static unsigned att_adopt(struct rec_attach_state *s, const uint64_t rest[2])
{
	uint64_t at = remote_sym(s->pid, s->lib, "kft_attach_adopt"), answer;
	struct adopt *a = calloc(1, sizeof(*a));
	Dwfl *dwfl = proc_dwfl(s->pid);
	unsigned adopted = 0;

	if (!a || !dwfl || !at)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		if (s->t[i].gone)
			continue;
		memset(a, 0, sizeof(*a));
		a->s = s;
		a->dwfl = dwfl;
		a->rest[0] = rest[0];
		a->rest[1] = rest[1];
		dwfl_getthread_frames(dwfl, s->t[i].tid, adopt_frame, a);
		if (a->n && att_call(s, &s->t[i], at, ~(uint64_t)0, a->n, a->pairs,
				     (size_t)a->n * 16, &answer) == 0)
			adopted += a->n;
	}
out:
	if (dwfl)
		dwfl_end(dwfl);
	free(a);
	return adopted;
}

struct rec_attach_state *rec_attach_start(const struct rec_attach *a, struct rec_attach_result *res,
					  char *err, size_t errlen)
{
	struct rec_attach_state *s = calloc(1, sizeof(*s));
	struct kft_attach_info info;
	uint64_t dlopen_at, start_at, handle = 0, answer = 0;
	struct att_thread *t;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->pid = a->pid;
	s->idle = a->idle;
	s->stopped = a->stopped;
	s->arg = a->arg;
	snprintf(s->lib, sizeof(s->lib), "%s", base_name(a->lib));
	s->err = err;
	s->errlen = errlen;
	if (a->pid == getpid()) {
		att_fail(s, "process %d is ktrace itself", (int)a->pid);
		goto fail;
	}
	if (att_stop_all(s, 0) < 0 || !(t = caller(s)))
		goto fail_detach;
	dlopen_at = remote_sym(a->pid, "libc.so.6", "dlopen");
	if (!dlopen_at) {
		att_fail(s, "process %d has no dlopen() in a libc.so.6 (a static program, or another C "
			    "library): libktrace cannot be loaded into it", (int)a->pid);
		goto fail_detach;
	}
	if (att_call(s, t, dlopen_at, ~(uint64_t)0, 2 /* RTLD_NOW */, a->lib, strlen(a->lib) + 1,
		     &handle) < 0)
		goto fail_detach;
	start_at = handle ? remote_sym(a->pid, base_name(a->lib), "kft_attach_start") : 0;
	if (!start_at) {
		att_fail(s, "process %d: dlopen(\"%s\") failed in the process (its mount namespace may "
			    "not have that file)", (int)a->pid, a->lib);
		goto fail_detach;
	}
	if (att_call(s, t, start_at, ~(uint64_t)0, 0, a->settings, a->len, &answer) < 0)
		goto fail_detach;
	if (read_info(s, answer, &info, "set-up") < 0 && info.status == -EOWNERDEAD) {
		/* a `record -p` killed before it detached: undo its attach, then ours */
		if (read_writes(s, &info) == 0)
			memset(s->done, 1, s->nw); /* all of them its own */
		if (att_retire(s) < 0 ||
		    att_call(s, t, start_at, ~(uint64_t)0, 0, a->settings, a->len, &answer) < 0 ||
		    read_info(s, answer, &info, "set-up") < 0)
			goto fail_detach;
		res->taken_over = 1;
	} else if (info.status) {
		goto fail_detach;
	}
	s->info = answer;
	res->threads = 0;
	for (size_t i = 0; i < s->n; i++)
		res->threads += !s->t[i].gone;
	res->planned = info.nwrites;
	att_patch(s, &info, res);
	/* every write made: the run starts now (kft_attach_go()), then the calls open */
	start_at = remote_sym(s->pid, s->lib, "kft_attach_go");
	/* every other thread stays stopped (kft_attach_go() takes no lock): no call
	 * is entered between the last write and the start, untimed */
	s->solo = 1;
	rc = start_at && (t = caller(s)) ? att_call(s, t, start_at, 0, 0, NULL, 0, &answer) : -1;
	s->solo = 0;
	if (rc < 0 || read_info(s, answer, &info, "go") < 0) {
		att_retire(s);
		goto fail_detach;
	}
	res->adopted = att_adopt(s, info.returns);
	att_detach_all(s);
	return s;
fail_detach:
	att_detach_all(s);
fail:
	free(s->t);
	free(s);
	return NULL;
}

struct text_ranges {
	uint64_t *lo, *hi;
	unsigned n;
};

static int text_mapping(const struct map_line *m, void *arg)
{
	struct text_ranges *t = arg;

	if (m->perm[2] == 'x') {
		t->lo[t->n] = m->lo;
		t->hi[t->n++] = m->hi;
	}
	return t->n >= 8;
}

/* The executable mappings of the object whose path ends with "/@file", into @lo/@hi (at most 8). */
static unsigned remote_text(pid_t pid, const char *file, uint64_t *lo, uint64_t *hi)
{
	struct text_ranges t = { lo, hi, 0 };

	maps_of(pid, file, text_mapping, &t);
	return t.n;
}

/* libktrace's text and its resting points, for in_lib_frames(). */
struct lib_text {
	uint64_t lo[8], hi[8];
	unsigned n;
	uint64_t rest[2]; /* kft_dyn_return, kft_pg_return: calls in flight return there */
	int depth, inside;
};

static int lib_has(const struct lib_text *l, uint64_t pc)
{
	for (unsigned k = 0; k < l->n; k++)
		if (pc >= l->lo[k] && pc < l->hi[k])
			return 1;
	return 0;
}

/* dwfl_getthread_frames()'s callback: is this frame's code libktrace's? */
static int frame_in_lib(Dwfl_Frame *state, void *arg)
{
	struct lib_text *l = arg;
	bool activation;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	l->depth++;
	if (pc == l->rest[0] || pc == l->rest[1])
		return DWARF_CB_ABORT; /* a call in flight's return: the frames further out are the program's */
	if (lib_has(l, activation ? pc : pc - 1)) {
		l->inside = 1;
		return DWARF_CB_ABORT;
	}
	return l->depth < 64 ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Is any thread inside libktrace's code: its %rip there, or a frame of
 * its stack (unwound with elfutils' libdwfl from the CFI, every thread
 * stopped): a thread libktrace made call libc (nanosleep() while it waits
 * for the consumer, a futex, mmap() of a ring) returns into libktrace and
 * would find its run gone.  A stack that cannot be unwound past its first
 * frame counts as inside (the retirement waits).  Return: 1, 0, or -1 if
 * the unwinder cannot be set up.
 */
static int in_lib_frames(struct rec_attach_state *s, struct lib_text *l)
{
	Dwfl *dwfl = proc_dwfl(s->pid);
	int inside = 0;

	if (!dwfl)
		return -1;
	for (size_t i = 0; i < s->n && !inside; i++) {
		struct user_regs_struct regs;

		if (s->t[i].gone || ptrace(PTRACE_GETREGS, s->t[i].tid, 0, &regs) != 0)
			continue;
		if (lib_has(l, regs.rip)) {
			inside = 1;
			break;
		}
		l->depth = l->inside = 0;
		dwfl_getthread_frames(dwfl, s->t[i].tid, frame_in_lib, l);
		inside = l->inside || l->depth < 2;
	}
	dwfl_end(dwfl);
	return inside;
}

/*
 * Every thread stopped outside libktrace's code (none can be inside a
 * write then): stopped, checked, resumed for a moment and stopped again
 * while one is inside, 200 times at most.  @returns: the exit
 * trampolines (struct kft_attach_info's).  Return: 1 when they are, 0 not.
 */
static int outside_lib(struct rec_attach_state *s, const uint64_t returns[2])
{
	struct lib_text l;

	memset(&l, 0, sizeof(l));
	l.n = remote_text(s->pid, s->lib, l.lo, l.hi);
	l.rest[0] = returns[0];
	l.rest[1] = returns[1];
	for (int tries = 0; tries < 200; tries++) {
		int inside = in_lib_frames(s, &l);

		if (inside < 0)
			return 0;
		if (!inside)
			return 1;
		att_let_run(s, 2000000);
		if (att_stop_all(s, 0) < 0)
			return 0;
	}
	return 0;
}

/*
 * Every thread stopped: undo the writes in s->w, stop the run
 * (kft_attach_stop()) and, once no thread is inside libktrace, retire it
 * (kft_attach_release()).  Return: 0, or -1 with s->err.
 */
static int att_retire(struct rec_attach_state *s)
{
	struct kft_attach_info info;
	uint64_t at, answer = 0;
	struct att_thread *t = caller(s);

	att_unpatch(s);
	at = remote_sym(s->pid, s->lib, "kft_attach_stop");
	if (!at || !t)
		return att_fail(s, "process %d: libktrace is no longer loaded, or its file was "
				   "replaced since (a rebuilt library: its functions cannot be found)",
				(int)s->pid);
	if (att_call(s, t, at, 0, 0, NULL, 0, &answer) < 0 || read_info(s, answer, &info, "stop") < 0)
		return -1;
	/* the run stopped: retire it once no thread is inside libktrace */
	at = remote_sym(s->pid, s->lib, "kft_attach_release");
	if (!at || !outside_lib(s, info.returns))
		return att_fail(s, "process %d: its threads kept running libktrace's code: the "
				   "stopped run stays in it (it cannot be attached to again)",
				(int)s->pid);
	if (s->stopped)
		s->stopped(s->arg); /* nothing writes now: the final drain, the open calls */
	if (!(t = caller(s)) || att_call(s, t, at, 0, 0, NULL, 0, &answer) < 0 ||
	    read_info(s, answer, &info, "release") < 0)
		return -1;
	return 0;
}

int rec_attach_stop(struct rec_attach_state *s, char *err, size_t errlen)
{
	int rc = -1;

	s->err = err;
	s->errlen = errlen;
	if (att_stop_all(s, 0) == 0 && caller(s))
		rc = att_retire(s);
	att_detach_all(s);
	return rc;
}

void rec_attach_free(struct rec_attach_state *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->w);
	free(s->done);
	free(s);
}

#else /* !__x86_64__ */

struct rec_attach_state *rec_attach_start(const struct rec_attach *a, struct rec_attach_result *res,
					  char *err, size_t errlen)
{
	(void)a;
	memset(res, 0, sizeof(*res));
	snprintf(err, errlen, "attaching to a running process is x86-64 only");
	return NULL;
}

int rec_attach_stop(struct rec_attach_state *s, char *err, size_t errlen)
{
	(void)s;
	snprintf(err, errlen, "attaching to a running process is x86-64 only");
	return -1;
}

void rec_attach_free(struct rec_attach_state *s)
{
	(void)s;
}

#endif

/* ---- root attaching to another user's process ---- */

int rec_attach_become(uid_t uid, gid_t gid, const gid_t *groups, int ngroups, char *err,
		      size_t errlen)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cap[2];
	const char *step;

	memset(cap, 0, sizeof(cap));
	cap[0].effective = cap[0].permitted = 1u << CAP_SYS_PTRACE;
	if ((step = "prctl(PR_SET_KEEPCAPS)", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) ||
	    (step = "setgroups", setgroups((size_t)ngroups, groups) < 0) ||
	    (step = "setresgid", setresgid(gid, gid, gid) < 0) ||
	    (step = "setresuid", setresuid(uid, uid, uid) < 0) ||
	    (step = "capset(CAP_SYS_PTRACE)", syscall(SYS_capset, &hdr, cap) < 0) ||
	    (step = "prctl(PR_SET_DUMPABLE)", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)) {
		int e = errno;

		snprintf(err, errlen, "cannot become user %u to record its process: %s: %s",
			 (unsigned)uid, step, strerror(e));
		return -e;
	}
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return 0;
}
