/*
 * reader/control.c - the binary `control` file (format.h, struct
 * ktrace_control): validation, shared with `ktrace ctl`, and the snapshot of
 * the stream table the reader uses for stream kinds, the open sub-buffer of
 * shared streams (`head`) and the `dropped` counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

int ktr_control_check(const void *p, size_t size, char *msg, size_t len)
{
	struct ktrace_control c;
	uint64_t tab_end, map_end;

	if (size < sizeof(c)) {
		snprintf(msg, len, "offset %zu: file too short for the control header (%zu bytes)",
			 size, sizeof(c));
		return -1;
	}
	memcpy(&c, p, sizeof(c));
	if (c.magic != KTRACE_CONTROL_MAGIC) {
		snprintf(msg, len, "offset 0: bad magic 0x%08x (expected 0x%08x)", c.magic,
			 KTRACE_CONTROL_MAGIC);
		return -1;
	}
	tab_end = (uint64_t)c.streams_off + (uint64_t)c.nstreams * sizeof(struct ktrace_stream_ctl);
	if (c.streams_off < sizeof(c) || c.streams_off % 8 || tab_end > size) {
		snprintf(msg, len,
			 "offset 24: stream table of %u entries at offset %u does not fit in %zu bytes",
			 c.nstreams, c.streams_off, size);
		return -1;
	}
	map_end = (uint64_t)c.enable_off + KTRACE_ENABLE_MAP_SIZE;
	if (c.enable_off < sizeof(c) || map_end > size) {
		snprintf(msg, len, "offset 32: enable map at offset %u does not fit in %zu bytes",
			 c.enable_off, size);
		return -1;
	}
	if (c.version > KTRACE_FORMAT_VERSION) {
		snprintf(msg, len, "offset 4: version %u is newer than this reader's %u", c.version,
			 KTRACE_FORMAT_VERSION);
		return 1;
	}
	return 0;
}

/*
 * ktr_read_control() - take a snapshot of DIR/control if it exists.  A bad
 * file is reported and ignored.
 */
void ktr_read_control(struct ktr_trace *t)
{
	struct ktr_file f;
	char msg[160];
	int r;

	if (ktr_file_open(t, &f, "control", 1) < 0) {
		ktr_file_close(&f);
		return;
	}
	r = ktr_control_check(f.p, f.size, msg, sizeof(msg));
	if (r)
		ktr_diag(t, 1, "%s: %s", f.path, msg);
	if (r >= 0) {
		memcpy(&t->ctl, f.p, sizeof(t->ctl));
		t->sctl = calloc(t->ctl.nstreams ? t->ctl.nstreams : 1, sizeof(*t->sctl));
		if (t->sctl) {
			memcpy(t->sctl, f.p + t->ctl.streams_off,
			       (size_t)t->ctl.nstreams * sizeof(*t->sctl));
			t->nsctl = t->ctl.nstreams;
			t->have_ctl = 1;
		}
	}
	ktr_file_close(&f);
}
