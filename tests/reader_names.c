/*
 * tests/reader_names.c - the reader's clock conversion (piecewise-linear
 * calibration, extrapolation, a bad pair dropped, clock mono) and naming:
 * event specifications (ktr_resolve_events), record names for every rule
 * of docs/FORMAT.md, thread lookup.  Traces are given in memory
 * (ktr_open_mem) so each case states its metadata exactly.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "reader/reader.h"
#include <ktrace/lkst.h>

static struct ktr_trace *open_meta(const char *meta, const char *threads)
{
	struct ktr_memfile f[2] = {
		{ "metadata", meta, strlen(meta) },
		{ "threads", threads, threads ? strlen(threads) : 0 },
	};
	struct ktr_trace *t = ktr_open_mem("mem", f, threads ? 2 : 1);

	while (ktr_diag_next(t))
		; /* "no stream files" */
	return t;
}

static void test_clock(void)
{
	struct ktr_trace *t;

	t = open_meta("ktrace-format 1\nclock tsc\n"
		      "calib 1000 1000000\ncalib 4000 2000000\ncalib 10000 3000000\n"
		      "calib 5000 100\n", /* a bad pair: ns going backwards */
		      NULL);
	is_int(ktr_info(t)->ncalib, 3, "the pair going backwards is dropped");
	is_int(ktr_raw_to_ns(t, 1000), 1000000, "a pair maps exactly");
	is_int(ktr_raw_to_ns(t, 2500), 1500000, "interpolated in the first segment");
	is_int(ktr_raw_to_ns(t, 7000), 2500000, "interpolated in the second segment");
	is_int(ktr_raw_to_ns(t, 0), 666667, "before the first pair: the first slope");
	is_int(ktr_raw_to_ns(t, 13000), 3500000, "after the last pair: the last slope");
	is_int(ktr_raw_to_ns(t, 0xffffffffffffffffull) > 3500000, 1, "huge raw: no overflow");
	ktr_close(t);

	t = open_meta("ktrace-format 1\nclock tsc\ncalib 1000 1000000\ncalib 1000 2000000\n", NULL);
	is_int(ktr_info(t)->ncalib, 1, "duplicate raw values: one kept");
	is_int(ktr_raw_to_ns(t, 1500), 1000500, "one pair: 1 tick = 1 ns from it");
	ktr_close(t);

	t = open_meta("ktrace-format 1\nclock mono\ncalib 1000 5\n", NULL);
	is_int(ktr_raw_to_ns(t, 123456789), 123456789, "clock mono: identity");
	ktr_close(t);
}

/*
 * Random calibrations (slopes 0.05 to 20 ns per tick, segments of a few
 * ticks to 2^40) against the definition: ns = a.ns + floor((raw - a.raw) *
 * (b.ns - a.ns) / (b.raw - a.raw)) on the segment around raw, computed
 * here with a 128-bit division (reader/clock.c multiplies by a reciprocal).
 */
static void test_clock_exact(void)
{
	enum { NPAIR = 64 };
	static char meta[NPAIR * 48 + 64];
	uint64_t raw[NPAIR], ns[NPAIR], x = 88172645463325252ull;
	size_t len, bad = 0, tried = 0;
	struct ktr_trace *t;

	for (int trial = 0; trial < 4; trial++) {
		len = (size_t)snprintf(meta, sizeof(meta), "ktrace-format 1\nclock tsc\n");
		for (int i = 0; i < NPAIR; i++) {
			uint64_t dr, dn;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			dr = 1 + (x >> (24 + (x & 15) + 8 * trial % 16)); /* 1 .. 2^40 */
			dn = (uint64_t)((unsigned __int128)dr * (50 + (x >> 40) % 20000) / 1000) + 1;
			raw[i] = i ? raw[i - 1] + dr : 1000000 + (x & 0xffff);
			ns[i] = i ? ns[i - 1] + dn : 5000000;
			len += (size_t)snprintf(meta + len, sizeof(meta) - len, "calib %llu %llu\n",
						(unsigned long long)raw[i], (unsigned long long)ns[i]);
		}
		t = open_meta(meta, NULL);
		for (int k = 0; k < 20000; k++) {
			int i;
			uint64_t r, want;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			i = (int)(x % (NPAIR - 1));
			r = raw[i] + 1 + (x >> 8) % (raw[i + 1] - raw[i]); /* in (raw[i], raw[i + 1]] */
			if (k & 1) { /* a time whose ns is a whole number: the reciprocal's floor is then 1 short */
				uint64_t a = raw[i + 1] - raw[i], b = ns[i + 1] - ns[i], step;

				while (b) {
					uint64_t m = a % b;

					a = b;
					b = m;
				}
				step = (raw[i + 1] - raw[i]) / a; /* dx = m * step: dx * dn / dr exact */
				r = raw[i] + step * (1 + (x >> 8) % a);
			}
			want = ns[i] + (uint64_t)((unsigned __int128)(r - raw[i]) * (ns[i + 1] - ns[i]) /
						  (raw[i + 1] - raw[i]));
			tried++;
			if (ktr_raw_to_ns(t, r) != want && bad++ < 3)
				diag("raw %llu: %llu, by definition %llu", (unsigned long long)r,
				     (unsigned long long)ktr_raw_to_ns(t, r), (unsigned long long)want);
		}
		ktr_close(t);
	}
	ok(bad == 0, "%zu random times on random calibrations: every one exact (%zu off)", tried, bad);
}

static void test_names(void)
{
	static uint8_t map[65536];
	struct ktr_trace *t;
	struct ktr_rec r;
	char buf[64];
	uint32_t pid = 0;
	const char *comm = NULL;

	t = open_meta("ktrace-format 1\nclock mono\npid 7\n"
		      "func 0 parse\nfunc 3 the func\n"
		      "event 16 log2 request net len,seq\n"
		      "event 16 log2 request2 net2 a2,b2\n" /* a later definition wins */
		      "event 300 kevent sched_switch sched prev,next\n"
		      "thread 10 7 main\n",
		      "11 7 worker one\n10 8 renamed\n");
	memset(&r, 0, sizeof(r));
	r.cls = KTRACE_CLASS_LOG2;
	r.id = 16;
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "request2", "catalogue name (last one wins)");
	r.id = KTRACE_EVENT_ID(0, 1);
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "parse:entry", "NAME:entry");
	r.id = KTRACE_EVENT_ID(0, 2);
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "parse:exit", "NAME:exit");
	r.cls = KTRACE_CLASS_LOG4;
	r.id = KTRACE_EVENT_ID(3, 40);
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "the func:40", "NAME:N (name with a space)");
	r.id = KTRACE_EVENT_ID(5, 17);
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "F5:E17", "F<func>:E<event>");
	r.cls = KTRACE_CLASS_KEVENT;
	r.id = 300;
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "sched_switch", "kevent catalogue");
	r.id = 301;
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "class 5 id 301", "unnamed kevent");
	/* issue 28: word 0's hidden mask (include/ktrace/lkst.h) */
	r.nwords = 3;
	r.w[0] = 42 | (uint64_t)4194303 << 32 | KTRACE_KEVENT_HIDE(1);
	is_int(ktr_rec_hidden(&r), 2, "a KEVENT's hidden mask: bit 1 = its second argument");
	is_int(KTRACE_KEVENT_TGID(r.w[0]), 4194303, "the tgid (up to 2^22 - 1) is bits 32..55, apart from the mask");
	r.id = KTRACE_LKST_PROCESS_COMM;
	r.nwords = 5;
	r.w[1] = 77;
	r.w[2] = 70;
	memcpy(&r.w[3], "kworker/0:1H\0\0\0\0", 16);
	is_str(ktr_rec_comm(&r, buf, sizeof(buf)), "kworker/0:1H", "PROCESS_COMM: the name from words 3 and 4");
	memcpy(&r.w[3], "a b\ncdefghijklmn", 16);
	is_str(ktr_rec_comm(&r, buf, sizeof(buf)), "a?b?cdefghijklmn", "  16 bytes, no NUL; space and control bytes as ?");
	r.id = 301;
	ok(!ktr_rec_comm(&r, buf, sizeof(buf)), "  NULL for another event");
	r.cls = KTRACE_CLASS_LOG2;
	is_int(ktr_rec_hidden(&r), 0, "no hidden mask in other classes");
	r.cls = KTRACE_CLASS_KEVENT;
	r.nwords = 0;
	r.cls = 12;
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "class 12 id 301", "unknown class");
	is_str(ktr_rec_name(t, &r, buf, 4), "cla", "truncated to the buffer");
	r.kind = KTR_GAP;
	r.gap = KTR_GAP_LOST;
	is_str(ktr_rec_name(t, &r, buf, sizeof(buf)), "[lost]", "gap name");

	ok(ktr_thread(t, 10, &pid, &comm) && pid == 8 && !strcmp(comm, "renamed"),
	   "threads file after metadata: the later line wins");
	ok(ktr_thread(t, 11, &pid, &comm) && pid == 7 && !strcmp(comm, "worker one"),
	   "threads file line");

	is_int(ktr_resolve_events(t, "request2", map), 1, "resolve a catalogue name");
	ok(map[16], "... to its id");
	memset(map, 0, sizeof(map));
	is_int(ktr_resolve_events(t, "parse:*", map), 256, "FUNC:* is 256 ids");
	ok(map[KTRACE_EVENT_ID(0, 255)] && !map[KTRACE_EVENT_ID(1, 0)], "... of that function only");
	memset(map, 0, sizeof(map));
	is_int(ktr_resolve_events(t, "parse:exit", map), 1, "FUNC:exit");
	ok(map[KTRACE_EVENT_ID(0, 2)], "... is code 2");
	is_int(ktr_resolve_events(t, "the func:7", map), 1, "function name with a space");
	ok(map[KTRACE_EVENT_ID(3, 7)], "... FUNC:N");
	is_int(ktr_resolve_events(t, "F9:E3", map), 1, "F<func>:E<event>");
	ok(map[KTRACE_EVENT_ID(9, 3)], "... its id");
	is_int(ktr_resolve_events(t, "0x105", map), 1, "hex id");
	ok(map[0x105], "... set");
	is_int(ktr_resolve_events(t, "all", map), 65536, "all");
	is_int(ktr_resolve_events(t, "nosuch", map), -EINVAL, "unknown name");
	is_int(ktr_resolve_events(t, "nosuch:*", map), -EINVAL, "unknown function");
	is_int(ktr_resolve_events(t, "parse:bogus", map), -EINVAL, "unknown event code");
	is_int(ktr_resolve_events(t, "70000", map), -EINVAL, "id out of range");
	is_int(ktr_resolve_events(t, "", map), -EINVAL, "empty");
	ktr_close(t);
}

int main(void)
{
	test_clock();
	test_clock_exact();
	test_names();
	return done_testing();
}
