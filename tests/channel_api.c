/*
 * tests/channel_api.c - the channel and static-event API: argument checks
 * and their messages, the files of a trace directory and their modes,
 * start/stop, enabling and disabling events, the catalogue in the
 * metadata, ktrace_log4's layout, a full disk at setup, an unwritable
 * root, and a directory that is not a trace.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ktrace/ktrace.h>

#include "tap.h"
#include "walk.h"

static char *slurp(const char *dir, const char *name)
{
	static char buf[65536];
	char path[4200];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static uint64_t count_id;
static uint64_t log4_words[2];
static void count_rec(const struct walk_rec *r, void *arg)
{
	uint16_t *want = arg;

	if (KTRACE_REC_ID(r->hdr) == *want) {
		count_id++;
		if (KTRACE_REC_CLASS(r->hdr) == KTRACE_CLASS_LOG4) {
			log4_words[0] = r->payload[0];
			log4_words[1] = r->payload[1];
		}
	}
}

static uint64_t count(const char *dir, uint16_t id)
{
	count_id = 0;
	walk_trace(dir, count_rec, &id);
	return count_id;
}

static int mode_of(const char *dir, const char *name)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "");
	return stat(path, &st) ? -1 : (int)(st.st_mode & 0777);
}

int main(void)
{
	const char *root = walk_tmpdir("api");
	char dir[4200], *s;
	struct ktrace_channel *ch;
	struct ktrace_stats st;

	/* Argument checks. */
	ok(!ktrace_setup(root, "x", 3000, 4, 0) && errno == EINVAL &&
		   strstr(ktrace_error(), "buf_size 3000"),
	   "buf_size not a power of two: EINVAL, message names it (%s)", ktrace_error());
	ok(!ktrace_setup(root, "x", 4096, 1, 0) && errno == EINVAL && strstr(ktrace_error(), "buf_nr"),
	   "buf_nr 1: EINVAL (%s)", ktrace_error());
	ok(!ktrace_setup(root, "a/b", 4096, 4, 0) && errno == EINVAL, "name with a slash: EINVAL");
	ok(!ktrace_setup(root, "x", 4096, 4, 0x100) && errno == EINVAL, "unknown flag: EINVAL");
	ok(!ktrace_setup("/dev/null/sub", "x", 4096, 4, 0) && errno == ENOTDIR &&
		   strstr(ktrace_error(), "/dev/null/sub"),
	   "unwritable root: ENOTDIR, message names the path (%s)", ktrace_error());

	/* A directory that holds other files is not replaced. */
	snprintf(dir, sizeof(dir), "%s/notatrace", root);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/notatrace/precious.txt", root);
	fclose(fopen(dir, "w"));
	ok(!ktrace_setup(root, "notatrace", 4096, 4, 0) && errno == EEXIST &&
		   access(dir, F_OK) == 0,
	   "a non-trace directory is refused and left alone (%s)", ktrace_error());

	/* A full disk is reported at setup (emulated with RLIMIT_FSIZE). */
	{
		struct rlimit old, lim;

		signal(SIGXFSZ, SIG_IGN);
		int err;

		getrlimit(RLIMIT_FSIZE, &old);
		lim = old;
		lim.rlim_cur = 256 * 1024; /* soft limit only: it can be raised back */
		setrlimit(RLIMIT_FSIZE, &lim);
		ch = ktrace_setup(root, "full", 64 * 1024, 16, 0);
		err = errno;
		setrlimit(RLIMIT_FSIZE, &old);
		ok(!ch && (err == EFBIG || err == ENOSPC) && strstr(ktrace_error(), "/full/trace0") &&
			   strstr(ktrace_error(), "cannot allocate 1048576 bytes"),
		   "no room for the buffers: error at setup naming the file (%s)", ktrace_error());
	}

	/* A good channel. */
	ch = ktrace_setup(root, "good", 4096, 8, 0);
	ok(ch != NULL, "setup succeeds (%s)", ch ? "" : ktrace_error());
	if (!ch)
		bail_out("cannot continue");
	snprintf(dir, sizeof(dir), "%s/good", root);
	is_str(ktrace_dir(ch), dir, "ktrace_dir");
	ok(mode_of(dir, NULL) == 0700 && mode_of(dir, "control") == 0600 &&
		   mode_of(dir, "trace0") == 0600 && mode_of(dir, "metadata") == 0600 &&
		   mode_of(dir, "state") == 0600,
	   "directory 0700, files 0600");
	s = slurp(dir, "metadata");
	ok(s && !strncmp(s, "ktrace-format 1\n", 16) && strstr(s, "\nclock ") &&
		   strstr(s, "\ncalib ") && strstr(s, "\nstream 0 thread trace0\n") &&
		   strstr(s, "\nmap "),
	   "metadata: version, clock, calibration, streams, maps");
	is_str(slurp(dir, "state"), "stop\n", "created stopped");
	ok(!ktrace_running(ch), "ktrace_running: 0");

	ktrace_log2(5, 1, 1, 2);
	is_int(count(dir, KTRACE_EVENT_ID(5, 1)), 0, "nothing recorded while stopped");
	ktrace_start(ch);
	ok(ktrace_running(ch), "ktrace_running: 1 after start");
	is_str(slurp(dir, "state"), "start\n", "state file says start");
	ktrace_log2(5, 1, 1, 2);
	ktrace_log4(5, 2, 0x11111111, 0x22222222, 0x33333333, 0x44444444);
	is_int(count(dir, KTRACE_EVENT_ID(5, 1)), 1, "one record while running");
	is_int(count(dir, KTRACE_EVENT_ID(5, 2)), 1, "log4 record");
	ok(log4_words[0] == 0x2222222211111111ull && log4_words[1] == 0x4444444433333333ull,
	   "log4 packs a, b in word 0 and c, d in word 1 (low half first)");

	ktrace_event_enable(5, 1, 0);
	ktrace_log2(5, 1, 1, 2);
	ktrace_log2(5, 3, 1, 2);
	is_int(count(dir, KTRACE_EVENT_ID(5, 1)), 1, "a disabled event is not recorded");
	is_int(count(dir, KTRACE_EVENT_ID(5, 3)), 1, "other events still are");
	ktrace_event_enable(5, -1, 0);
	ktrace_log2(5, 3, 1, 2);
	is_int(count(dir, KTRACE_EVENT_ID(5, 3)), 1, "func 5 wholly disabled");
	ktrace_event_enable(-1, -1, 1);
	ktrace_log2(5, 1, 1, 2);
	is_int(count(dir, KTRACE_EVENT_ID(5, 1)), 2, "re-enabled");

	/* Catalogue. */
	{
		static const char *const funcs[] = { "parse", "reply" };
		struct ktrace_event_desc ev[] = {
			{ .func = 0, .event = KT_EVENT_USER, .name = "parse_done", .category = "io",
			  .args = { "bytes", "status" } },
			{ .func = 1, .event = KT_EVENT_USER, .name = "quad", .is_log4 = 1 },
		};
		struct ktrace_event_desc bad = { .func = 2, .event = 1, .name = "has space" };

		ok(ktrace_catalog_funcs(ch, funcs, 2) == 0, "declare function names");
		ok(ktrace_catalog_add(ch, ev, 2) == 0, "declare events");
		ok(ktrace_catalog_add(ch, &bad, 1) == -EINVAL && strstr(ktrace_error(), "has space"),
		   "a name with a space is refused (%s)", ktrace_error());
		s = slurp(dir, "metadata");
		ok(s && strstr(s, "\nfunc 0 parse\n") && strstr(s, "\nfunc 1 reply\n"),
		   "metadata names the functions");
		ok(s && strstr(s, "\nevent 16 log2 parse_done io bytes,status\n") &&
			   strstr(s, "\nevent 272 log4 quad default a,b,c,d\n"),
		   "metadata holds the catalogue");
	}

	ktrace_stop(ch);
	ktrace_log2(5, 1, 1, 2);
	is_int(count(dir, KTRACE_EVENT_ID(5, 1)), 2, "nothing recorded after stop");
	ktrace_get_stats(ch, &st);
	is_int(st.written, 4, "stats: the 4 records written");
	ktrace_cleanup(ch);
	ktrace_log2(5, 1, 1, 2); /* no default channel: a no-op */
	is_str(slurp(dir, "state"), "stop\n", "after cleanup the state is stop");
	is_str(slurp(dir, "dropped"), "0\n", "dropped file");

	/* The same name again replaces the old trace. */
	ch = ktrace_setup(root, "good", 4096, 8, KTRACE_DISABLE_STATE);
	ok(ch && count(dir, KTRACE_EVENT_ID(5, 1)) == 0, "setting up the same name replaces the trace");
	s = slurp(dir, "control");
	ok(s && ((const struct ktrace_control *)s)->flags == KTRACE_DISABLE_STATE,
	   "flags are in the control page");
	ktrace_cleanup(ch);
	return done_testing();
}
