/*
 * lib/metadata.c - writes the trace's `metadata` file (docs/FORMAT.md,
 * "The metadata file"): version, clock and calibration pairs, host,
 * channel geometry, streams, the event catalogue, and the memory maps with
 * build ids of every loaded object (from dl_iterate_phdr, so symbols can be
 * resolved later by elfutils against the right files).
 *
 * The file is rewritten whole (temp file + rename) at setup, at every
 * start/stop, when the catalogue grows and at cleanup, so a crash leaves
 * the last complete version.
 */
#include <elf.h>
#include <link.h>
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

static int kt_map_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kt_out *o = arg;
	char exe[4096], buildid[2 * 64 + 1] = "-";
	const char *path = info->dlpi_name;

	(void)size;
	if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	if (!*path)
		return 0;
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
					sprintf(buildid + 2 * k, "%02x", desc[k]);
				break;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
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
 * Write the metadata file with the memory maps of this moment (objects
 * loaded later appear in the next version).  Caller holds ch->lock or owns
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
	if (o.oom) {
		kt_free(o.buf);
		kt_seterr(ENOMEM, "ktrace: %s/metadata: out of memory", ch->dir);
		return -ENOMEM;
	}
	rc = kt_write_file(ch->dir, "metadata", o.buf);
	kt_free(o.buf);
	return rc;
}
