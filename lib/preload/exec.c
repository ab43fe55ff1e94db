/*
 * lib/preload/exec.c - part of libktrace-record.so, the shim `ktrace
 * record` preloads: a traced program that starts another with an
 * environment of its own (execve(), execle(), execvpe(), fexecve(),
 * posix_spawn(), posix_spawnp() with an explicit envp) passes the session
 * on, as uftrace's libmcount does.  The new environment gets what `ktrace
 * record` gave this process and it lacks: LD_PRELOAD (the whole value at
 * start when it has none; libktrace's entries appended to one of its own
 * that lacks them, and a sanitizer build's runtimes put first) and each KTRACE_* variable by name.  So the new program
 * is traced as one that inherits environ is; without this, it ran untraced
 * and unseen.  exec*() without an envp (execv, execvp, execl, execlp) and
 * system()/popen() use environ and need nothing.
 *
 * What to add is copied once, in the constructor (the program may change
 * its environ later), into static memory (no malloc: the program's may be
 * its own).  The wrappers allocate nothing (a vfork() child may
 * call them): the merged environment is built on the stack.  Thread and
 * async-signal safety: as the wrapped functions (execve is
 * async-signal-safe; so are these, reading only what the constructor set).
 */
#include <dlfcn.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))
#define EX_MAX 64 /* KTRACE_* variables passed on, at most */

extern char **environ;

static char *ex_vars[EX_MAX]; /* "KTRACE_...=...", as at start */
static size_t ex_nvars;
static char *ex_preload;     /* "LD_PRELOAD=..." at start, or NULL */
static char *ex_ours;        /* its libktrace*.so entries, ':'-separated, or NULL */
static char *ex_san;         /* its sanitizer runtimes (a sanitizer build), which must lead */

typedef int (*ex_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*ex_fexecve_fn)(int, char *const[], char *const[]);
typedef int (*ex_spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);

static ex_execve_fn ex_execve, ex_execvpe;
static ex_fexecve_fn ex_fexecve;
static ex_spawn_fn ex_spawn, ex_spawnp;

/*
 * Room for the copies: static, so that a program with a malloc of its own
 * sees no call from here (the variables' size is checked, a variable that
 * does not fit is left out).
 */
static char ex_pool[1 << 16];
static size_t ex_used;

static char *ex_alloc(size_t n)
{
	char *p;

	if (n > sizeof(ex_pool) - ex_used)
		return NULL;
	p = ex_pool + ex_used;
	ex_used += n;
	return p;
}

static char *ex_copy(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = ex_alloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

/*
 * The entries of LD_PRELOAD value @v whose file name begins with one of
 * the @n prefixes @pre, ':'-separated, or NULL if none.
 */
static char *ex_entries(const char *v, const char *const *pre, size_t n_pre)
{
	size_t len = strlen(v), n = 0;
	char *out = ex_alloc(len + 1);
	const char *p = v;

	if (!out)
		return NULL;
	while (*p) {
		size_t k = strcspn(p, ": ");
		const char *base = memrchr(p, '/', k);
		int mine = 0;

		base = base ? base + 1 : p;
		for (size_t i = 0; k && i < n_pre; i++)
			mine |= (size_t)(p + k - base) >= strlen(pre[i]) && !strncmp(base, pre[i], strlen(pre[i]));
		if (mine) {
			if (n)
				out[n++] = ':';
			memcpy(out + n, p, k);
			n += k;
		}
		p += k;
		p += *p != '\0';
	}
	out[n] = '\0';
	return n ? out : NULL;
}

__attribute__((constructor)) static void ex_init(void)
{
	for (char **e = environ; e && *e; e++) {
		if (!strncmp(*e, "KTRACE_", 7) && ex_nvars < EX_MAX) {
			char *c = ex_copy(*e);

			if (c)
				ex_vars[ex_nvars++] = c;
		} else if (!strncmp(*e, "LD_PRELOAD=", 11) && !ex_preload) {
			ex_preload = ex_copy(*e);
			static const char *const kt[] = { "libktrace" };
			static const char *const san[] = { "libasan", "libubsan", "libtsan", "libhwasan" };

			ex_ours = ex_entries(*e + 11, kt, 1);
			ex_san = ex_entries(*e + 11, san, 4);
		}
	}
	ex_execve = (ex_execve_fn)dlsym(RTLD_NEXT, "execve");
	ex_execvpe = (ex_execve_fn)dlsym(RTLD_NEXT, "execvpe");
	ex_fexecve = (ex_fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	ex_spawn = (ex_spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
	ex_spawnp = (ex_spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
}

static size_t ex_count(char *const *envp)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/* The index of variable @name (with its '=') in @envp, or -1. */
static ptrdiff_t ex_find(char *const *envp, const char *var)
{
	size_t k = strcspn(var, "=") + 1;

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], var, k))
			return (ptrdiff_t)i;
	return -1;
}

/* Bytes ex_merge() may need for a merged LD_PRELOAD of @envp. */
static size_t ex_room(char *const *envp)
{
	ptrdiff_t i = ex_find(envp, "LD_PRELOAD=");

	return (i >= 0 ? strlen(envp[i]) : 0) + (ex_ours ? strlen(ex_ours) : 0) +
	       (ex_san ? strlen(ex_san) : 0) + 3;
}

/*
 * @envp with the session added, in @out (room for ex_count(envp) + EX_MAX
 * + 2 pointers); @buf (ex_room(envp) bytes) holds a merged LD_PRELOAD.
 */
static char *const *ex_merge(char *const *envp, char **out, char *buf)
{
	size_t n = 0;
	ptrdiff_t pl = ex_find(envp, "LD_PRELOAD=");

	for (size_t i = 0; envp && envp[i]; i++)
		out[n++] = envp[i];
	if (pl < 0 && ex_preload) {
		out[n++] = ex_preload;
	} else if (pl >= 0 && ex_ours && !strstr(envp[pl] + 11, ex_ours)) {
		/* LD_PRELOAD=[sanitizers:]ITS OWN:libktrace's */
		size_t k = 11, own = strlen(envp[pl] + 11);

		memcpy(buf, "LD_PRELOAD=", 11);
		if (ex_san && !strstr(envp[pl] + 11, ex_san)) {
			strcpy(buf + k, ex_san);
			k += strlen(ex_san);
			buf[k++] = ':';
		}
		memcpy(buf + k, envp[pl] + 11, own);
		k += own;
		if (own)
			buf[k++] = ':';
		strcpy(buf + k, ex_ours);
		out[pl] = buf;
	}
	for (size_t v = 0; v < ex_nvars; v++)
		if (ex_find(envp, ex_vars[v]) < 0)
			out[n++] = ex_vars[v];
	out[n] = NULL;
	return out;
}

/* Declares out[] and buf[] for @envp on the stack and merges into them. */
#define EX_ENV(envp, merged)                                                   \
	char *ex_out[ex_count(envp) + EX_MAX + 2], ex_buf[ex_room(envp)];      \
	char *const *merged = ex_merge(envp, ex_out, ex_buf)

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EX_ENV(envp, env);
	return ex_execve(path, argv, env);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EX_ENV(envp, env);
	return ex_execvpe(file, argv, env);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	EX_ENV(envp, env);
	return ex_fexecve(fd, argv, env);
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n = 1;

	va_start(ap, arg);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	{
		char *argv[n + 1], *const *envp;

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (size_t i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *); /* argv[n]: the NULL */
		envp = va_arg(ap, char *const *);
		va_end(ap);
		{
			EX_ENV(envp, env);
			return ex_execve(path, argv, env);
		}
	}
}

SHIM_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	EX_ENV(envp, env);
	return ex_spawn(pid, path, fa, attr, argv, env);
}

SHIM_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	EX_ENV(envp, env);
	return ex_spawnp(pid, file, fa, attr, argv, env);
}
