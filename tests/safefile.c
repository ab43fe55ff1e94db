/*
 * tests/safefile.c - lib/safefile.c, the one helper through which ktrace
 * creates files and directories: path resolution (links among the leading
 * components followed only if root or the caller owns them, the last never),
 * directory ownership and mode, trace-directory checks and clearing, files
 * created without following links, atomic rewrites through unpredictable
 * temporaries.  Every expectation is checked with plain stat/readlink/open
 * calls of this file, not with the helper.
 *
 * As root, the link "owned by another user" is a link lchown()ed to nobody
 * (65534); as another user that case cannot be made and is said so.  The
 * attacks through the ktrace command are tests/security_files.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/safefile.h"
#include "tap.h"

static char tmp[256];

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmp, rel);
	return buf[k];
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(P(rel), "w");

	if (!f)
		bail_out("cannot write %s", P(rel));
	fputs(text, f);
	fclose(f);
}

static const char *get(const char *rel)
{
	static char buf[256];
	FILE *f = fopen(P(rel), "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static unsigned mode_of(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

static int is_link(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) == 0 && S_ISLNK(st.st_mode);
}

static int is_dir(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries of directory @path other than "." and "..". */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_dirs(void)
{
	char msg[512];
	int fd;

	fd = ksf_dir_open(P("a/b/c"), KSF_CREATE, msg, sizeof(msg));
	ok(fd >= 0 && mode_of("a") == 0700 && mode_of("a/b/c") == 0700,
	   "KSF_CREATE makes the directory and its parents, mode 0700");
	close(fd);
	mkdir(P("open"), 0755);
	fd = ksf_dir_open(P("open"), 0, msg, sizeof(msg));
	ok(fd >= 0 && mode_of("open") == 0700, "an existing directory of yours is made 0700");
	close(fd);
	is_int(ksf_dir_open(P("missing"), 0, msg, sizeof(msg)), -ENOENT, "missing, without KSF_CREATE: -ENOENT");

	symlink(P("open"), P("lnk"));
	fd = ksf_dir_open(P("lnk"), KSF_CREATE, msg, sizeof(msg));
	is_int(fd, -ELOOP, "the last component a link (even yours): -ELOOP");
	ok(strstr(msg, "lnk: is a symbolic link: not following it") != NULL, "... said so: %s", msg);
	put("file", "x");
	is_int(ksf_dir_open(P("file"), KSF_CREATE, msg, sizeof(msg)), -ENOTDIR, "a file: -ENOTDIR");
	is_int(ksf_dir_open(P("file/sub"), KSF_CREATE, msg, sizeof(msg)), -ENOTDIR,
	       "a file among the leading components: -ENOTDIR");

	/* links among the leading components: yours (or root's) are followed */
	symlink("open", P("rel"));          /* relative target */
	symlink("../open", P("a/up"));      /* relative, through .. */
	fd = ksf_dir_open(P("rel/x"), KSF_CREATE, msg, sizeof(msg));
	ok(fd >= 0 && mode_of("open/x") == 0700, "a relative link of yours is followed: open/x made");
	close(fd);
	fd = ksf_dir_open(P("a/up/y"), KSF_CREATE, msg, sizeof(msg));
	ok(fd >= 0 && mode_of("open/y") == 0700, "... and one through '..'");
	close(fd);
	symlink("loop2", P("loop1"));
	symlink("loop1", P("loop2"));
	is_int(ksf_dir_open(P("loop1/z"), KSF_CREATE, msg, sizeof(msg)), -ELOOP, "a loop of links: -ELOOP");

	if (geteuid() == 0) {
		symlink(P("open"), P("theirs"));
		if (lchown(P("theirs"), 65534, 65534) < 0)
			bail_out("lchown: %s", strerror(errno));
		is_int(ksf_dir_open(P("theirs/t"), KSF_CREATE, msg, sizeof(msg)), -ELOOP,
		       "a link another user owns among the leading components: -ELOOP");
		ok(strstr(msg, "'theirs' is a symbolic link owned by uid 65534") && mode_of("open/t") == 0,
		   "... nothing created behind it, and said so: %s", msg);
		mkdir(P("nobodys"), 0700);
		chown(P("nobodys"), 65534, 65534);
		is_int(ksf_dir_open(P("nobodys"), KSF_CREATE, msg, sizeof(msg)), -EPERM,
		       "another user's directory: -EPERM");
		ok(strstr(msg, "owned by uid 65534, not by you (uid 0)") != NULL, "... said so: %s", msg);
	} else {
		diag("not root: links and directories of another user cannot be made here");
		is_int(ksf_dir_open("/", 0, msg, sizeof(msg)), -EPERM, "root's directory: -EPERM");
	}
}

static void test_trace_dirs(void)
{
	char msg[512];
	int fd;

	mkdir(P("t"), 0700);
	put("t/metadata", "m");
	put("t/trace0", "0");
	put("t/.metadata.1234abcd", "tmp");
	symlink(P("victim"), P("t/threads"));
	put("victim", "victim");
	mkdir(P("t/kernel"), 0700);
	put("t/kernel/cpu0", "k");
	fd = ksf_dir_open(P("t"), KSF_TRACE, msg, sizeof(msg));
	ok(fd >= 0 && mode_of("t/metadata"), "KSF_TRACE accepts a trace (kernel/ and temporaries included)");
	close(fd);
	fd = ksf_dir_open(P("t"), KSF_TRACE | KSF_CLEAR, msg, sizeof(msg));
	ok(fd >= 0 && !mode_of("t/metadata") && !mode_of("t/trace0") && !mode_of("t/kernel") &&
		   !is_link("t/threads") && !mode_of("t/.metadata.1234abcd"),
	   "KSF_CLEAR removes it, kernel/ too, the planted link itself");
	is_str(get("victim"), "victim", "... never the link's target");
	close(fd);
	put("t/notes", "mine");
	put("t/metadata", "m");
	is_int(ksf_dir_open(P("t"), KSF_TRACE | KSF_CLEAR, msg, sizeof(msg)), -EEXIST,
	       "a directory holding other files: -EEXIST");
	ok(strstr(msg, "exists and holds 'notes', not a ktrace trace") && mode_of("t/metadata"),
	   "... nothing removed, and said so: %s", msg);
	ok(ksf_trace_name("cpu12", 0) && ksf_trace_name("kallsyms", 0) && !ksf_trace_name("cpu", 0) &&
		   !ksf_trace_name("trace1x", 0) && !ksf_trace_name("kernel", 0) &&
		   ksf_trace_name("kernel", 1) && ksf_trace_name(".kft-status.x", 0),
	   "ksf_trace_name: the names of docs/FORMAT.md");
}

static void test_files(void)
{
	char t1[NAME_MAX + 1], t2[NAME_MAX + 1];
	int dfd = open(tmp, O_PATH | O_DIRECTORY), fd, fd2;
	struct stat st;

	put("victim", "victim");
	symlink(P("victim"), P("planted"));
	is_int(ksf_create_at(dfd, "planted", O_WRONLY), -EEXIST, "create over a planted link: -EEXIST");
	is_str(get("victim"), "victim", "... its target untouched");
	fd = ksf_create_at(dfd, "new", O_RDWR);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600, "a new file is mode 0600");
	close(fd);
	is_int(ksf_open_at(dfd, "planted", O_WRONLY | O_APPEND), -ELOOP, "opening a link: -ELOOP");
	mkfifo(P("fifo"), 0600);
	ok(ksf_open_at(dfd, "fifo", O_WRONLY) < 0, "opening a FIFO for writing: refused, not blocked");

	is_int(ksf_replace_at(dfd, "planted", "new text", 8), 0, "replace a planted link: 0");
	ok(!is_link("planted") && !strcmp(get("planted"), "new text") && mode_of("planted") == 0600,
	   "... the link replaced by a 0600 file with the new text");
	is_str(get("victim"), "victim", "... its target untouched");

	fd = ksf_tmp_at(dfd, "metadata", t1, sizeof(t1));
	fd2 = ksf_tmp_at(dfd, "metadata", t2, sizeof(t2));
	ok(fd >= 0 && fd2 >= 0 && strlen(t1) == 10 + KSF_TMP_DIGITS && !strncmp(t1, ".metadata.", 10) &&
		   strspn(t1 + 10, "0123456789abcdef") == KSF_TMP_DIGITS && strcmp(t1, t2),
	   "temporaries: .NAME.<16 hex digits>, a new name each time (%s, %s)", t1, t2);
	close(fd);
	close(fd2);
	is_int(ksf_replace(P("a/b/c"), "state", "start\n", 6), 0, "ksf_replace by path");
	is_str(get("a/b/c/state"), "start\n", "... the file written");
	is_int(ksf_replace(P("lnk"), "state", "x", 1), -ELOOP, "... into a directory given as a link: -ELOOP");

	/* Replacing an existing file swaps it out (RENAME_EXCHANGE): nothing else is left. */
	is_int(ksf_replace(P("a/b/c"), "state", "stop\n", 5), 0, "ksf_replace over an existing file");
	is_str(get("a/b/c/state"), "stop\n", "... the new contents in place");
	is_int(count_entries(P("a/b/c")), 1, "... and no temporary or old file left beside it");
	mkdir(P("a/b/c/dir"), 0700);
	is_int(ksf_replace(P("a/b/c"), "dir", "x", 1), -EISDIR, "replacing a directory: -EISDIR");
	ok(is_dir("a/b/c/dir") && count_entries(P("a/b/c")) == 2, "... the directory still there, nothing left beside it");
	close(dfd);
}

/* The readers' side: ksf_read_open(), ksf_read_stat(), ksf_trace_check(). */
static int nbad;
static char bad[256];

static void note_bad(void *arg, const char *name, int err)
{
	(void)arg;
	nbad++;
	snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s:%d ", name, -err);
}

static void test_read(void)
{
	struct stat st;
	char buf[8];
	int fd;

	mkdir(P("r"), 0700);
	mkdir(P("r/kernel"), 0700);
	mkdir(P("r/sub"), 0700);
	put("r/metadata", "ktrace-format 1\n");
	put("r/kernel/metadata", "k\n");
	put("r/secret", "secret\n");
	fd = ksf_read_open(P("r"), "metadata", 0);
	ok(fd >= 0 && read(fd, buf, 6) == 6 && !memcmp(buf, "ktrace", 6), "a regular file: opened and read");
	ok(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	   "... O_NONBLOCK and close-on-exec");
	if (fd >= 0)
		close(fd);
	fd = ksf_read_open(P("r"), "kernel/metadata", 0);
	ok(fd >= 0, "a file in a sub-directory: opened");
	if (fd >= 0)
		close(fd);
	symlink(P("r/secret"), P("r/threads"));
	is_int(ksf_read_open(P("r"), "threads", 0), -ELOOP, "a link to a regular file: -ELOOP");
	is_int(ksf_read_open(NULL, P("r/threads"), 0), -ELOOP, "... also given as a whole path");
	fd = ksf_read_open(NULL, P("r/threads"), KSF_FOLLOW);
	ok(fd >= 0, "... followed with KSF_FOLLOW (a map line's ELF file)");
	if (fd >= 0)
		close(fd);
	symlink("/dev/zero", P("r/trace1"));
	is_int(ksf_read_open(NULL, P("r/trace1"), KSF_FOLLOW), -EINVAL,
	       "a link to /dev/zero, followed: -EINVAL (not a regular file)");
	mkfifo(P("r/state"), 0600);
	is_int(ksf_read_open(P("r"), "state", 0), -EINVAL, "a FIFO: -EINVAL, without blocking");
	is_int(ksf_read_open(P("r"), "sub", 0), -EISDIR, "a directory: -EISDIR");
	fd = ksf_read_open(P("r"), "sub", KSF_DIRECTORY);
	ok(fd >= 0, "... opened with KSF_DIRECTORY");
	if (fd >= 0)
		close(fd);
	is_int(ksf_read_open(P("r"), "metadata", KSF_DIRECTORY), -ENOTDIR, "KSF_DIRECTORY on a file: -ENOTDIR");
	is_int(ksf_read_open(P("r"), "missing", 0), -ENOENT, "missing: -ENOENT");
	mkdir(P("elsewhere"), 0700);
	put("elsewhere/metadata", "x\n");
	symlink(P("elsewhere"), P("r2"));
	fd = ksf_read_open(P("r2"), "metadata", 0);
	ok(fd >= 0, "the directory the user named may be a link");
	if (fd >= 0)
		close(fd);
	mkdir(P("r3"), 0700);
	symlink(P("elsewhere"), P("r3/kernel"));
	is_int(ksf_read_open(P("r3"), "kernel/metadata", 0), -ELOOP, "a link among the components: -ELOOP");
	is_int(ksf_read_stat(P("r3"), "kernel/metadata", 0, &st), -ELOOP, "... ksf_read_stat() too");
	ok(ksf_read_stat(P("r"), "threads", 0, &st) == 0 && S_ISLNK(st.st_mode), "ksf_read_stat(): lstat");
	ok(strstr(ksf_read_why(-ELOOP), "symbolic link") && strstr(ksf_read_why(-EINVAL), "not a regular file"),
	   "ksf_read_why() says what");
	is_int(ksf_trace_check(P("r"), NULL, note_bad, NULL), 3, "ksf_trace_check(): threads, trace1, state refused");
	ok(strstr(bad, "threads:40 ") && strstr(bad, "trace1:40 ") && strstr(bad, "state:22 ") &&
	   !strstr(bad, "secret") && !strstr(bad, "sub"), "... each once, with its error; other names ignored");
	nbad = 0;
	bad[0] = 0;
	is_int(ksf_trace_check(P("r3"), NULL, note_bad, NULL), 1, "kernel as a link: refused");
	is_int(ksf_trace_check(P("r"), "kernel", note_bad, NULL), 0, "a clean kernel/: nothing refused");
	is_int(ksf_trace_check(P("r"), "nokernel", note_bad, NULL), 0, "a missing sub-directory: 0");
}

int main(void)
{
	char cmd[300];

	umask(022);
	snprintf(tmp, sizeof(tmp), "/tmp/ktrace-safefile.XXXXXX");
	if (!mkdtemp(tmp))
		bail_out("mkdtemp: %s", strerror(errno));
	test_dirs();
	test_trace_dirs();
	test_files();
	test_read();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (!tap_failed && system(cmd) != 0)
		diag("cannot remove %s", tmp);
	return done_testing();
}
