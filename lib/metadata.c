/*
 * lib/metadata.c - writes the trace's `metadata` file (docs/FORMAT.md,
 * "The metadata file"): version, clock and calibration pairs, host,
 * channel geometry, streams, the event catalogue, and the memory maps with
 * build ids of every loaded object (from dl_iterate_phdr, so symbols can be
 * resolved later by elfutils against the right files), and the load
 * generations of every object seen loaded during the run (`map-gen`
 * lines, below), so that a dlclose()d library is still named.
 *
 * The file is rewritten whole (temp file + rename) at setup, at every
 * start/stop, when the catalogue grows and at cleanup, so a crash leaves
 * the last complete version.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime.h"

/* Add a (raw, ns) calibration pair; keeps the first two and the latest. */
void kt_add_calib(struct ktrace_channel *ch)
{
	unsigned n = ch->ncalib < 32 ? ch->ncalib++ : 31;

	kt_calib_pair(&ch->calib[n][0], &ch->calib[n][1]);
}

static void kt_put_name(struct kt_out *o, const char *s)
{
	kt_outf(o, "%s", s && *s ? s : "-");
}

/* The build id of @info's object in hex into @out ("-" if none). */
static void kt_buildid(const struct dl_phdr_info *info, char out[2 * 64 + 1])
{
	strcpy(out, "-");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 64) {
				for (unsigned k = 0; k < nh->n_descsz; k++)
					sprintf(out + 2 * k, "%02x", desc[k]);
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* @info's object's path: its name, or the executable's (into @exe) for the
 * main program, which dl_iterate_phdr() names ""; "" if unknown. */
static const char *kt_obj_path(const struct dl_phdr_info *info, char exe[4096])
{
	ssize_t n;

	if (info->dlpi_name && *info->dlpi_name)
		return info->dlpi_name;
	n = readlink("/proc/self/exe", exe, 4095);
	exe[n > 0 ? n : 0] = 0;
	return exe;
}

static int kt_map_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kt_out *o = arg;
	char exe[4096], buildid[2 * 64 + 1];
	const char *path = kt_obj_path(info, exe);

	(void)size;
	if (!*path)
		return 0;
	kt_buildid(info, buildid);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start;

		if (ph->p_type != PT_LOAD)
			continue;
		start = info->dlpi_addr + ph->p_vaddr;
		kt_outf(o, "map %lx %lx %lx %s %s\n", (unsigned long)start,
			(unsigned long)(start + ph->p_memsz), (unsigned long)ph->p_offset, buildid,
			path);
	}
	return 0;
}

/*
 * Load generations (docs/FORMAT.md, `map-gen`): every object seen loaded,
 * with the time range it was mapped in, so that the readers can tell a
 * dlclose()d library from the one later loaded at its address.  The
 * objects are listed by scans of dl_iterate_phdr(): at each metadata
 * rewrite and before each dlopen() and dlclose() (and after dlclose()) of
 * the program, which the preloaded shim (lib/preload/dl.c) reports
 * through ktrace_rt_dl_note().  An object new at a scan was loaded after
 * the previous scan (its LOAD is that scan's time; 0 at the first scan:
 * before the trace); one gone was unloaded by this scan (UNLOAD).  Loads
 * and unloads the program makes without dlopen()/dlclose() (libc's own)
 * are seen at the next scan, with a wider range.
 *
 * Bounded: at most KT_DL_MAX objects are remembered (the oldest unloaded
 * one is forgotten for a new one), KT_DL_SEGS segments each.  Not a hot
 * path: a mutex, dl_iterate_phdr() and kt_malloc() are fine here.
 */
#define KT_DL_MAX 8192
#define KT_DL_SEGS 8

struct kt_dlobj {
	uintptr_t base;             /* dlpi_addr */
	uint64_t load_ns, unload_ns; /* CLOCK_MONOTONIC; unload_ns UINT64_MAX: loaded */
	unsigned nseg, seen;
	uintptr_t seg[KT_DL_SEGS][3]; /* start, end, file offset */
	char buildid[2 * 64 + 1];
	char *path;                 /* kt_malloc() */
};

static pthread_mutex_t kt_dl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kt_dlobj *kt_dl;
static size_t kt_ndl, kt_capdl;
static uint64_t kt_dl_last; /* time of the previous scan, 0 before the first */

/*
 * fork() while another thread scans would leave the child's kt_dl_lock
 * locked for good (its metadata rewrite at exit would hang): the lock is
 * taken around fork (a scan in progress only lists objects, it ends).
 */
static void kt_dl_fork_prepare(void)
{
	pthread_mutex_lock(&kt_dl_lock);
}

static void kt_dl_fork_done(void)
{
	pthread_mutex_unlock(&kt_dl_lock);
}

__attribute__((constructor)) static void kt_dl_init(void)
{
	pthread_atfork(kt_dl_fork_prepare, kt_dl_fork_done, kt_dl_fork_done);
}

/* dl_iterate_phdr() callback of kt_dl_scan(): mark a known object seen, or add a new one. */
static int kt_dl_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	char exe[4096];
	const char *path = kt_obj_path(info, exe);
	struct kt_dlobj *o;

	(void)size;
	(void)arg;
	if (!*path)
		return 0;
	for (size_t i = 0; i < kt_ndl; i++)
		if (kt_dl[i].unload_ns == UINT64_MAX && kt_dl[i].base == info->dlpi_addr &&
		    !strcmp(kt_dl[i].path, path)) {
			kt_dl[i].seen = 1;
			return 0;
		}
	if (kt_ndl == KT_DL_MAX) { /* forget the oldest unloaded object */
		size_t i = 0;

		while (i < kt_ndl && kt_dl[i].unload_ns == UINT64_MAX)
			i++;
		if (i == kt_ndl)
			return 0;
		kt_free(kt_dl[i].path);
		memmove(&kt_dl[i], &kt_dl[i + 1], (kt_ndl - i - 1) * sizeof(*kt_dl));
		kt_ndl--;
	}
	if (kt_ndl == kt_capdl) {
		size_t cap = kt_capdl ? 2 * kt_capdl : 64;
		struct kt_dlobj *n = kt_realloc(kt_dl, cap * sizeof(*n));

		if (!n)
			return 0;
		kt_dl = n;
		kt_capdl = cap;
	}
	o = &kt_dl[kt_ndl];
	memset(o, 0, sizeof(*o));
	o->path = kt_malloc(strlen(path) + 1);
	if (!o->path)
		return 0;
	strcpy(o->path, path);
	o->base = info->dlpi_addr;
	o->load_ns = kt_dl_last;
	o->unload_ns = UINT64_MAX;
	o->seen = 1;
	kt_buildid(info, o->buildid);
	for (int i = 0; i < info->dlpi_phnum && o->nseg < KT_DL_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		o->seg[o->nseg][0] = info->dlpi_addr + ph->p_vaddr;
		o->seg[o->nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		o->seg[o->nseg][2] = ph->p_offset;
		o->nseg++;
	}
	kt_ndl++;
	return 0;
}

/* Scan the loaded objects at time @now (CLOCK_MONOTONIC ns).  Caller holds kt_dl_lock. */
static void kt_dl_scan(uint64_t now)
{
	for (size_t i = 0; i < kt_ndl; i++)
		kt_dl[i].seen = 0;
	dl_iterate_phdr(kt_dl_cb, NULL);
	for (size_t i = 0; i < kt_ndl; i++)
		if (kt_dl[i].unload_ns == UINT64_MAX && !kt_dl[i].seen)
			kt_dl[i].unload_ns = now > kt_dl[i].load_ns ? now : kt_dl[i].load_ns;
	kt_dl_last = now;
}

/*
 * ktrace_rt_dl_note() - the program is about to call dlopen() or dlclose(),
 * or has just returned from dlclose(): scan the loaded objects (see above).
 * Called by the preloaded shim (lib/preload/dl.c) alone; exported, not an
 * API.  Thread-safe (a mutex); not async-signal-safe (neither are dlopen()
 * and dlclose()).  Allocates with kt_malloc() (never the program's malloc).
 */
KT_EXPORT void ktrace_rt_dl_note(void)
{
	pthread_mutex_lock(&kt_dl_lock);
	kt_dl_scan(kt_mono_ns());
	pthread_mutex_unlock(&kt_dl_lock);
}

/* Scan, then append a `map-gen` line per segment of every object remembered. */
static void kt_dl_write(struct kt_out *o)
{
	pthread_mutex_lock(&kt_dl_lock);
	kt_dl_scan(kt_mono_ns());
	for (size_t i = 0; i < kt_ndl; i++) {
		const struct kt_dlobj *d = &kt_dl[i];
		char unl[24] = "-";

		if (d->unload_ns != UINT64_MAX)
			snprintf(unl, sizeof(unl), "%llu", (unsigned long long)d->unload_ns);
		for (unsigned k = 0; k < d->nseg; k++)
			kt_outf(o, "map-gen %llu %s %lx %lx %lx %s %s\n", (unsigned long long)d->load_ns,
				unl, (unsigned long)d->seg[k][0], (unsigned long)d->seg[k][1],
				(unsigned long)d->seg[k][2], d->buildid, d->path);
	}
	pthread_mutex_unlock(&kt_dl_lock);
}

/*
 * Write the metadata file with the memory maps of this moment (objects
 * loaded later appear in the next version) and the load generations of
 * every object seen so far (`map-gen`).  Caller holds ch->lock or owns
 * @ch alone.
 * Return: 0 or -errno (ktrace_error() set).
 */
int kt_metadata_write(struct ktrace_channel *ch)
{
	struct utsname u;
	char comm[17] = "";
	struct kt_out o = { 0 };
	int rc;

	uname(&u);
	prctl(PR_GET_NAME, comm);
	kt_outf(&o, "ktrace-format %d\n", KTRACE_FORMAT_VERSION);
	kt_outf(&o, "clock %s\n", kt_clock_name());
	for (unsigned i = 0; i < ch->ncalib; i++)
		kt_outf(&o, "calib %llu %llu\n", (unsigned long long)ch->calib[i][0],
			(unsigned long long)ch->calib[i][1]);
	kt_outf(&o, "host %s\nkernel %s\nmachine %s\n", u.nodename, u.release, u.machine);
	kt_outf(&o, "cpus %ld\npid %d\ncomm %s\n", sysconf(_SC_NPROCESSORS_ONLN), (int)ch->pid,
		comm[0] ? comm : "?");
	kt_outf(&o, "channel %s\nmode %s\nscope %s\n", ch->name,
		ch->flags & KTRACE_FLIGHT_CHANNEL ? "flight" : "discard",
		ch->flags & KTRACE_GLOBAL_CHANNEL ? "global" : "thread");
	/* Streamed channels: the consumer writes a traceN file of slots for
	 * each stream that has records; readers find them by name and take
	 * their kind from the control file. */
	kt_outf(&o, "buf-size %u\nbuf-nr %u\nlayout %s\n", ch->buf_size, ch->buf_nr,
		ch->sess ? "slots" : "fixed");
	kt_outf(&o, "created-ns %llu\nrealtime-ns %llu\n", (unsigned long long)ch->created_ns,
		(unsigned long long)ch->realtime_ns);
	for (uint32_t i = 0; !ch->sess && i < ch->nstreams; i++)
		kt_outf(&o, "stream %u %s trace%u\n", i,
			ch->streams[i].kind == KTRACE_STREAM_THREAD ? "thread" : "shared", i);
	for (int i = 0; i < 256; i++)
		if (ch->funcs[i])
			kt_outf(&o, "func %d %s\n", i, ch->funcs[i]);
	for (size_t i = 0; i < ch->nevents; i++) {
		const struct ktrace_event_desc *d = &ch->events[i].d;
		int nargs = d->is_log4 ? 4 : 2;

		kt_outf(&o, "event %u %s %s ", KTRACE_EVENT_ID(d->func, d->event),
			d->is_log4 ? "log4" : "log2", d->name);
		kt_put_name(&o, d->category ? d->category : "default");
		kt_outf(&o, " ");
		for (int a = 0; a < nargs; a++) {
			static const char *const dflt[] = { "a", "b", "c", "d" };

			kt_outf(&o, "%s%s", a ? "," : "", d->args[a] ? d->args[a] : dflt[a]);
		}
		kt_outf(&o, "\n");
	}
	dl_iterate_phdr(kt_map_cb, &o);
	kt_dl_write(&o);
	if (o.oom) {
		kt_free(o.buf);
		kt_seterr(ENOMEM, "ktrace: %s/metadata: out of memory", ch->dir);
		return -ENOMEM;
	}
	rc = kt_write_file(ch->dir, "metadata", o.buf);
	kt_free(o.buf);
	return rc;
}
