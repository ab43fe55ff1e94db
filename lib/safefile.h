/*
 * lib/safefile.h - the one way ktrace creates and rewrites files and
 * directories: the runtime (lib/) and the `ktrace` command (cli/) both go
 * through these functions (lib/safefile.c), so a directory prepared by
 * another user, or a symbolic link planted where a trace file goes, never
 * makes ktrace write through it.
 *
 * The rules (docs/FORMAT.md, "The trace directory", says what users see):
 *
 *  - A path is resolved one component at a time.  A symbolic link among
 *    the leading components is followed only if root or the caller (the
 *    effective uid) owns it; the last component is never followed.
 *  - A directory ktrace writes into is created with mode 0700, or, if it
 *    exists, must be a real directory owned by the caller's euid; its mode
 *    is then set to 0700.  With KSF_TRACE it must also be empty or hold
 *    only the files of a ktrace trace (ksf_trace_name()).
 *  - A file is created with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600,
 *    relative to the directory's descriptor: never an existing file, never
 *    through a link.
 *  - A file is rewritten by creating ".NAME.<16 hex digits>" that way (the
 *    digits from getrandom(2), so the name cannot be predicted) and
 *    renaming it over NAME: rename(2) replaces the directory entry, a
 *    planted link included, and writes through nothing.  (An existing
 *    NAME is swapped with it by renameat2(RENAME_EXCHANGE) and then
 *    unlinked, which ext4 does without writing the new file back at once.)  (O_TMPFILE and
 *    linkat(2) cannot replace an existing name, and naming an O_TMPFILE
 *    file needs /proc or CAP_DAC_READ_SEARCH; the random name gives the
 *    same guarantee everywhere.)
 *  - Staging directories are made with mkdtemp(3).
 *
 * Errors are negative errno values: -ELOOP a symbolic link that is not
 * followed, -EPERM a directory owned by another user, -EEXIST a directory
 * holding files that are not a trace, -ENOTDIR not a directory; anything
 * else is the system call's.
 *
 * Thread and signal safety: every function is thread-safe.  All but
 * ksf_dir_open() with a @msg buffer or with KSF_TRACE are async-signal-safe
 * (only system calls and string functions), so the runtime may rewrite its
 * files from a signal handler or at exit.
 */
#ifndef KTRACE_LIB_SAFEFILE_H
#define KTRACE_LIB_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* ksf_dir_open() flags */
#define KSF_CREATE 1u /* create the directory and missing parents (mode 0700) */
#define KSF_TRACE 2u  /* an existing directory must be empty or hold only a trace */
#define KSF_CLEAR 4u  /* with KSF_TRACE: remove that trace's files (and its kernel/, kernel/ftrace/) */

/* Length of a temporary name's random part (hex digits). */
#define KSF_TMP_DIGITS 16

/**
 * ksf_dir_open() - open the directory @path to write a trace into it,
 * following the rules above (created if missing with KSF_CREATE).
 * @flags: KSF_CREATE, KSF_TRACE, KSF_CLEAR.
 * @msg, @len: on failure (may be NULL), one line "PATH: what" saying why,
 *             e.g. "/tmp/t: owned by uid 65534, not by you (uid 0): refusing
 *             to write into another user's directory".
 * Return: a descriptor (O_RDONLY | O_DIRECTORY | O_CLOEXEC; the caller
 * closes it), or -errno.
 */
int ksf_dir_open(const char *path, unsigned flags, char *msg, size_t len);

/**
 * ksf_parent_open() - resolve @path up to its last component (leading
 * links followed only if root or the caller owns them; nothing created).
 * @buf:  PATH_MAX bytes of scratch space; *@last points into it at the
 *        last component ("." for "/"), which is not looked at.
 * @msg, @len: as for ksf_dir_open().
 * Return: an O_PATH descriptor of the directory holding the last
 * component, or -errno.
 */
int ksf_parent_open(const char *path, char *buf, const char **last, char *msg, size_t len);

/**
 * ksf_trace_name() - is @name a file of a ktrace trace directory
 * (docs/FORMAT.md): metadata, control, state, dropped, threads, callsites,
 * kft, kft-status, kallsyms, session (the streaming recorder's), traceN,
 * cpuN, a temporary ".NAME.*" of one of these, or (@top nonzero) the
 * kernel/ sub-trace.  Return: 1 or 0.
 */
int ksf_trace_name(const char *name, int top);

/**
 * ksf_create_at() - create @name in the directory @dirfd: O_CREAT | O_EXCL
 * | O_NOFOLLOW | O_CLOEXEC, mode 0600.
 * @flags: O_RDONLY, O_WRONLY or O_RDWR, and O_APPEND; other bits ignored.
 * Return: the descriptor, or -errno (-EEXIST: the name exists, whatever it
 * is; nothing was opened).
 */
int ksf_create_at(int dirfd, const char *name, int flags);

/**
 * ksf_open_at() - open the existing regular file @name of @dirfd without
 * following a link (O_NOFOLLOW | O_CLOEXEC, never created).
 * @flags: access mode and O_APPEND.
 * Return: the descriptor, or -errno (-ELOOP a link, -EINVAL not a regular
 * file).
 */
int ksf_open_at(int dirfd, const char *name, int flags);

/**
 * ksf_tmp_at() - create a temporary ".NAME.<16 hex digits>" for @name in
 * @dirfd as ksf_create_at() does (write only).
 * @tmp: receives the temporary's name; @len >= strlen(@name) +
 *       KSF_TMP_DIGITS + 3.
 * Return: the descriptor, or -errno.
 */
int ksf_tmp_at(int dirfd, const char *name, char *tmp, size_t len);

/**
 * ksf_replace_at() - replace @name in @dirfd by the @len bytes at @buf,
 * atomically (ksf_tmp_at(), write, renameat2()): a reader sees the old or
 * the new contents, never a mix, and a link named @name is replaced, not
 * followed.  Return: 0, or -errno (the temporary removed; @name unchanged).
 */
int ksf_replace_at(int dirfd, const char *name, const void *buf, size_t len);

/* ksf_read_open() and ksf_read_stat() flags */
#define KSF_FOLLOW 8u     /* follow symbolic links (a `map` line's ELF file), any component */
#define KSF_DIRECTORY 16u /* the file must be a directory (an O_DIRECTORY descriptor) */

/**
 * ksf_read_open() - open an existing file for reading, the one way every
 * reader of a trace directory opens its files (reader/files.c, the
 * `ktrace` commands, read, --recover), so that a trace handed around
 * cannot make ktrace read another file, a device or a FIFO.
 * @dir:   the directory the user named (resolved as given, links
 *         included: the user chose it), or NULL: @name is then a whole
 *         path whose leading components are followed.
 * @name:  the file, relative to @dir; may hold '/'-separated components
 *         ("kernel/metadata"), each opened with O_NOFOLLOW.
 * @flags: KSF_FOLLOW: follow links everywhere, the target must still be a
 *         regular file (a program's libraries are often reached through
 *         one: /lib64/ld-linux-x86-64.so.2); KSF_DIRECTORY: open a
 *         directory instead of a regular file.
 *
 * The type is checked with fstatat() before anything is opened (a device
 * is never opened, so opening has no side effect), the open is O_RDONLY |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC (with O_NOFOLLOW unless KSF_FOLLOW),
 * and fstat() checks the type again on the descriptor (a file swapped in
 * between is refused).
 * Return: the descriptor (the caller closes it), or -errno: -ELOOP a
 * symbolic link (or a link among @name's components), -EISDIR a
 * directory, -EINVAL another file that is not a regular file (FIFO,
 * device, socket), -ENOTDIR a leading component or (KSF_DIRECTORY) the
 * file not a directory; anything else is the system call's (-ENOENT).
 * ksf_read_why() turns these into the words of a one-line error.
 */
int ksf_read_open(const char *dir, const char *name, unsigned flags);

/**
 * ksf_read_stat() - lstat(2) of @name in @dir resolved as ksf_read_open()
 * does (leading components of @name never followed; with KSF_FOLLOW,
 * stat(2)).  Return: 0 and *@st, or -errno (-ELOOP a link among the
 * leading components).
 */
int ksf_read_stat(const char *dir, const char *name, unsigned flags, struct stat *st);

/**
 * ksf_read_why() - the words for ksf_read_open()'s error @err (negative
 * or positive errno): "is a symbolic link: not following it", "not a
 * regular file (a FIFO, device or socket): not reading it", "is a
 * directory, not a regular file: ...", "not a directory: ...", or
 * strerror().  Return: a static string (not thread-safe for unknown
 * errors, as strerror()).
 */
const char *ksf_read_why(int err);

/**
 * ksf_trace_check() - check the files of the trace directory @dir (or of
 * its sub-directory @sub, e.g. "kernel", never followed) before reading
 * them: every entry whose name is a trace file's (ksf_trace_name(), not
 * the ".NAME.*" temporaries) must be a regular file, and "kernel" a
 * directory, not a link to one.
 * @report: called with @arg, the entry's name and -errno (as ksf_read_open()
 *        returns: -ELOOP a link, -EISDIR, -EINVAL a FIFO, device or socket,
 *        -ENOTDIR "kernel" not a directory) for each entry that is not.
 * Return: the number of such entries, or -errno if the directory itself
 * cannot be read (a missing @sub: 0).
 */
int ksf_trace_check(const char *dir, const char *sub,
		    void (*report)(void *arg, const char *name, int err), void *arg);

/*
 * The same for a file of the directory @dir, which must satisfy the rules
 * (it is reopened each time: ksf_dir_open(@dir, 0, NULL, 0)).  Return:
 * as the *_at() functions; ksf_unlink(): 0 or -errno.
 */
int ksf_create(const char *dir, const char *name, int flags);
int ksf_open(const char *dir, const char *name, int flags);
int ksf_replace(const char *dir, const char *name, const void *buf, size_t len);
int ksf_unlink(const char *dir, const char *name);

#endif /* KTRACE_LIB_SAFEFILE_H */
