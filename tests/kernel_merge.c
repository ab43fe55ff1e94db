/*
 * tests/kernel_merge.c - the kernel sub-trace in the reader and the
 * scheduling states built on it, on synthetic traces (no root needed):
 *
 *   - DIR/kernel (clock mono, per-CPU KEVENT streams) merged with an
 *     application trace on the TSC by CLOCK_MONOTONIC ns, not raw time;
 *   - KEVENT records: tid/pid from word 0, arguments after it by their
 *     catalogue names, names and threads found in the sub-trace;
 *   - a directory holding only kernel/ reads without errors;
 *   - reader/sched.c: running/ready/blocked intervals from switches and
 *     wakeups, off-CPU time and switch counts in windows, lost switch-outs
 *     (a CPU runs one task), gaps making states unknown.
 *
 * Traces are built in memory (ktr_open_mem()) from sub-buffers made here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktrace/format.h>
#include <ktrace/lkst.h>

#include "reader/reader.h"
#include "reader/sched.h"
#include "tap.h"

/* A packed stream: sub-buffers appended one after another. */
struct sbuf {
	uint8_t data[16384];
	size_t len;
	/* the open sub-buffer */
	size_t hdr;
	uint64_t first, seq;
	uint32_t nrec;
	int cpu;
};

static void sb_open(struct sbuf *b, int cpu, uint64_t first)
{
	b->hdr = b->len;
	b->len += KTRACE_SUBBUF_HDR_SIZE;
	b->first = first;
	b->nrec = 0;
	b->cpu = cpu;
}

static void sb_close(struct sbuf *b, uint32_t lost, uint32_t tid)
{
	struct ktrace_subbuf h;

	memset(&h, 0, sizeof(h));
	h.magic = KTRACE_SUBBUF_MAGIC;
	h.hdr_size = KTRACE_SUBBUF_HDR_SIZE;
	h.flags = KTRACE_SBF_CLOSED;
	h.seq = b->seq++;
	h.first_ts = b->first;
	h.used = (uint32_t)(b->len - b->hdr - KTRACE_SUBBUF_HDR_SIZE);
	h.lost = lost;
	h.nrec = b->nrec;
	h.tid = tid;
	h.cpu = (uint16_t)b->cpu;
	memcpy(b->data + b->hdr, &h, sizeof(h));
}

static void sb_rec(struct sbuf *b, uint64_t ts, unsigned cls, unsigned id, const uint64_t *w,
		   unsigned n)
{
	uint64_t hw = KTRACE_REC_HDR(ts, cls, n, id);

	memcpy(b->data + b->len, &hw, 8);
	memcpy(b->data + b->len + 8, w, 8 * n);
	b->len += 8 + 8 * n;
	b->nrec++;
}

static void kev(struct sbuf *b, uint64_t ns, unsigned id, uint32_t tid, uint32_t pid, uint64_t a1,
		uint64_t a2, uint64_t a3)
{
	uint64_t w[4] = { tid | (uint64_t)pid << 32, a1, a2, a3 };
	unsigned n = id == KTRACE_LKST_PROCESS_CONTEXTSWITCH ? 4 : id == KTRACE_LKST_PROCESS_WAKEUP ? 3 : 2;

	sb_rec(b, ns, KTRACE_CLASS_KEVENT, id, w, n);
}

static const char app_meta[] =
	"ktrace-format 1\nclock tsc\ncalib 0 1000000\ncalib 2000000 2000000\n"
	"pid 100\ncomm app\nscope thread\nlayout packed\nbuf-size 4096\nstream 0 thread trace0\n"
	"event 1 log2 tick default a,b\nthread 100 100 app\n";
static const char kern_meta[] =
	"ktrace-format 1\nclock mono\nchannel kernel\npid 4242\nscope cpu\nlayout packed\n"
	"buf-size 4096\nstream 0 cpu cpu0\nstream 1 cpu cpu1\n"
	"event 1 kevent PROCESS_CONTEXTSWITCH process prev_pid,next_pid,prev_state\n"
	"event 2 kevent PROCESS_WAKEUP process pid,target_cpu\n"
	"event 48 kevent SYSCALL_ENTRY syscall id,args[0],args[1],args[2]\n"
	"thread 100 100 app\nthread 200 200 other\nthread 300 0 lonely\n";

static struct sbuf app, cpu0, cpu1;

/* Times: the application's TSC runs at 2 ticks per ns from raw 0 = 1000000 ns. */
#define T0 1000000ull

static void build(void)
{
	uint64_t w[2] = { 7, 8 };

	/* application: LOG2 ticks at 1000, 3500 and 5000 ns after T0 */
	sb_open(&app, 0, 2000);
	sb_rec(&app, 2000, KTRACE_CLASS_LOG2, 1, w, 2);
	sb_rec(&app, 7000, KTRACE_CLASS_LOG2, 1, w, 2);
	sb_rec(&app, 10000, KTRACE_CLASS_LOG2, 1, w, 2);
	sb_close(&app, 0, 100);
	/* cpu0: 100 sleeps at 1500, is woken at 2500, runs again at 4000 */
	sb_open(&cpu0, 0, T0 + 1500);
	kev(&cpu0, T0 + 1500, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 100, 100, 100, 200, 1);
	kev(&cpu0, T0 + 2500, KTRACE_LKST_PROCESS_WAKEUP, 200, 200, 100, 0, 0);
	kev(&cpu0, T0 + 4000, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 200, 200, 200, 100, 0);
	sb_close(&cpu0, 0, 0);
	/* cpu1: a syscall of 300 (tgid unknown in word 0: from the thread line) */
	sb_open(&cpu1, 1, T0 + 2000);
	kev(&cpu1, T0 + 2000, KTRACE_LKST_SYSCALL_ENTRY, 300, 0, 35, 1, 2);
	sb_close(&cpu1, 0, 0);
}

struct ivs {
	char text[2048];
	size_t len;
};

static void on_iv(void *arg, const struct ktr_sched_iv *iv)
{
	struct ivs *s = arg;

	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%u:%s:%llu-%llu ",
				   iv->tid, ktr_task_state_name(iv->state),
				   (unsigned long long)(iv->start_ns - T0),
				   (unsigned long long)(iv->end_ns - T0));
}

static int only_100_200(void *arg, uint32_t tid, uint32_t pid)
{
	(void)arg;
	(void)pid;
	return tid == 100 || tid == 200;
}

static void test_merge(void)
{
	struct ktr_memfile files[] = {
		{ "metadata", app_meta, sizeof(app_meta) - 1 },
		{ "trace0", app.data, app.len },
		{ "kernel/metadata", kern_meta, sizeof(kern_meta) - 1 },
		{ "kernel/cpu0", cpu0.data, cpu0.len },
		{ "kernel/cpu1", cpu1.data, cpu1.len },
	};
	struct ktr_trace *t = ktr_open_mem("m", files, 5);
	struct ktr_sched *s;
	struct ivs ivs = { "", 0 };
	struct ktr_rec r;
	char order[512] = "", name[64];
	size_t len = 0;
	const char *names[KTRACE_MAX_WORDS], *comm = NULL, *m;
	uint64_t vals[KTRACE_MAX_WORDS], nsw, blk, off, last = 0;
	int n = 0, kstreams = 1, sw_args = 0, sys_pid = 0;

	ok(t != NULL, "open an application trace with a kernel sub-trace");
	ok(ktr_kernel(t) != NULL, "ktr_kernel() gives the sub-trace");
	is_int(ktr_info(t)->nstreams, 1, "nstreams counts the application's streams");
	s = ktr_sched_new(KTR_SCHED_OFFCPU, on_iv, &ivs);
	ktr_sched_follow(s, only_100_200, NULL);
	while (ktr_next(t, &r)) {
		len += (size_t)snprintf(order + len, sizeof(order) - len, "%s@%llu ",
					ktr_rec_name(t, &r, name, sizeof(name)),
					(unsigned long long)(r.ns - T0));
		if (r.cls == KTRACE_CLASS_KEVENT && r.stream < KTR_KERNEL_STREAM)
			kstreams = 0;
		if (r.cls == KTRACE_CLASS_KEVENT && r.id == KTRACE_LKST_PROCESS_CONTEXTSWITCH &&
		    r.ns == T0 + 1500) {
			unsigned k = ktr_rec_args(t, &r, names, vals);

			sw_args = k == 3 && !strcmp(names[0], "prev_pid") && vals[0] == 100 &&
				  !strcmp(names[1], "next_pid") && vals[1] == 200 &&
				  !strcmp(names[2], "prev_state") && vals[2] == 1 && r.tid == 100 &&
				  r.pid == 100 && r.cpu == 0;
		}
		if (r.cls == KTRACE_CLASS_KEVENT && r.id == KTRACE_LKST_SYSCALL_ENTRY)
			sys_pid = r.tid == 300 && r.pid == 0 && r.cpu == 1 &&
				  r.stream == KTR_KERNEL_STREAM + 1;
		ktr_sched_feed(s, t, &r);
		last = r.ns;
		n++;
	}
	ktr_sched_finish(s, last);
	is_str(order,
	       "tick@1000 PROCESS_CONTEXTSWITCH@1500 SYSCALL_ENTRY@2000 PROCESS_WAKEUP@2500 tick@3500 "
	       "PROCESS_CONTEXTSWITCH@4000 tick@5000 ",
	       "application (TSC) and kernel (mono) records merged by CLOCK_MONOTONIC ns");
	ok(kstreams, "kernel records carry stream numbers from KTR_KERNEL_STREAM");
	ok(sw_args, "a context switch: tid/pid from word 0, arguments by catalogue name");
	ok(sys_pid, "tgid 0 in word 0 and no tgid in the thread line: pid 0, the right CPU and stream");
	ok(ktr_thread(t, 200, NULL, &comm) && comm && !strcmp(comm, "other"),
	   "ktr_thread() falls through to the sub-trace's thread lines");
	ok(ktr_event_find(t, KTRACE_CLASS_KEVENT, 2) != NULL, "ktr_event_find() finds the kevent catalogue");
	while ((m = ktr_diag_next(t)))
		diag("diagnostic: %s", m);
	is_int((int)ktr_error_count(t), 0, "no errors");

	is_str(ivs.text,
	       "100:blocked:1500-2500 200:running:1500-4000 100:ready:2500-4000 100:running:4000-5000 "
	       "200:ready:4000-5000 ",
	       "sched: blocked, woken (ready), running; the preempted task ready");
	off = ktr_sched_offcpu(s, 100, T0, T0 + 5000, &nsw, &blk);
	is_int((int)off, 2500, "off-CPU time of 100 over the whole run");
	is_int((int)blk, 1000, "... of which blocked");
	is_int((int)nsw, 1, "... one switch-out");
	is_int((int)ktr_sched_offcpu(s, 100, T0 + 2000, T0 + 3000, &nsw, &blk), 1000,
	       "off-CPU time inside a window");
	is_int((int)blk, 500, "... of which blocked");
	is_int((int)nsw, 0, "... no switch-out inside it");
	is_int((int)ktr_sched_offcpu(s, 100, T0 + 4500, T0 + 5000, NULL, NULL), 0,
	       "no off-CPU time while it runs");
	is_int((int)ktr_sched_offcpu(s, 200, T0, T0 + 5000, NULL, NULL), 1000,
	       "the preempted task: off CPU from 4000 to the end");
	is_int((int)ktr_sched_switches(s), 2, "two context switches");
	ktr_sched_free(s);

	/* rewinding replays the merge */
	ktr_rewind(t);
	n = 0;
	while (ktr_next(t, &r))
		n++;
	is_int(n, 7, "ktr_rewind() restarts the merged reading");
	ktr_close(t);
}

static void test_kernel_only(void)
{
	struct ktr_memfile files[] = {
		{ "kernel/metadata", kern_meta, sizeof(kern_meta) - 1 },
		{ "kernel/cpu0", cpu0.data, cpu0.len },
		{ "kernel/cpu1", cpu1.data, cpu1.len },
	};
	struct ktr_trace *t = ktr_open_mem("k", files, 3);
	struct ktr_rec r;
	const char *m;
	int n = 0;

	while (ktr_next(t, &r))
		n++;
	while ((m = ktr_diag_next(t)))
		diag("diagnostic: %s", m);
	is_int(n, 4, "a directory with only kernel/: its records");
	is_int((int)ktr_error_count(t), 0, "... and no error for the missing top-level metadata");
	is_str(ktr_info(t)->channel, "kernel", "... its info is the sub-trace's");
	ktr_close(t);
}

/* Feed @s every record of a kernel-only trace: metadata @meta, one stream @c0. */
static void feed_cpu0(struct ktr_sched *s, const char *meta, const struct sbuf *c0)
{
	struct ktr_memfile files[] = {
		{ "kernel/metadata", meta, strlen(meta) },
		{ "kernel/cpu0", c0->data, c0->len },
	};
	struct ktr_trace *t = ktr_open_mem("k", files, 2);
	struct ktr_rec r;
	uint64_t last = 0;

	while (t && ktr_next(t, &r)) {
		ktr_sched_feed(s, t, &r);
		last = r.ns;
	}
	ktr_sched_finish(s, last);
	ktr_close(t);
}

static void test_lost_and_gap(void)
{
	struct sbuf c0;
	struct ivs ivs = { "", 0 };
	struct ktr_sched *s = ktr_sched_new(KTR_SCHED_OFFCPU, on_iv, &ivs);

	memset(&c0, 0, sizeof(c0));
	/* 100 runs at 100; its switch-out is missing: 200 switches out at 300 */
	sb_open(&c0, 0, T0 + 100);
	kev(&c0, T0 + 100, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 0, 0, 0, 100, 0);
	kev(&c0, T0 + 300, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 200, 200, 200, 0, 1);
	kev(&c0, T0 + 400, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 0, 0, 0, 200, 0);
	sb_close(&c0, 5, 0); /* 5 records lost after this sub-buffer */
	sb_open(&c0, 0, T0 + 900);
	kev(&c0, T0 + 900, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 200, 200, 200, 100, 0);
	kev(&c0, T0 + 1000, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 100, 100, 100, 0, 1);
	sb_close(&c0, 0, 0);
	feed_cpu0(s, kern_meta, &c0);
	is_str(ivs.text, "100:running:100-300 200:blocked:300-400 100:running:900-1000 200:ready:900-1000 ",
	       "a switch-out never recorded ends the running interval at the CPU's next switch; "
	       "a lost-records gap makes every state unknown until the next event");
	ktr_sched_free(s);
}

/* A switch from the idle task not traced: the task's own event shows it running. */
static void test_untraced_switch_in(void)
{
	struct sbuf c0;
	struct ivs ivs = { "", 0 };
	struct ktr_sched *s = ktr_sched_new(KTR_SCHED_OFFCPU, on_iv, &ivs);
	uint64_t nsw = 0, blk = 0;

	memset(&c0, 0, sizeof(c0));
	sb_open(&c0, 0, T0 + 100);
	kev(&c0, T0 + 100, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 100, 100, 100, 0, 1); /* 100 sleeps */
	kev(&c0, T0 + 5000, KTRACE_LKST_PROCESS_WAKEUP, 0, 0, 100, 0, 0);          /* idle wakes it */
	/* no switch 0 -> 100: its syscall exit is the first sign it runs */
	kev(&c0, T0 + 5007, KTRACE_LKST_SYSCALL_ENTRY + 1, 100, 100, 230, 0, 0);
	kev(&c0, T0 + 6000, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 100, 100, 100, 0, 1);
	sb_close(&c0, 0, 0);
	feed_cpu0(s, kern_meta, &c0);
	is_str(ivs.text, "100:blocked:100-5000 100:ready:5000-5007 100:running:5007-6000 ",
	       "a switch-in not traced: running from the task's own next event");
	is_int((int)ktr_sched_offcpu(s, 100, T0, T0 + 5500, &nsw, &blk), 4907,
	       "... so its off-CPU time ends there");
	is_int((int)blk, 4900, "... blocked until the wakeup");
	ktr_sched_free(s);
}

static int only_pid_400(void *arg, uint32_t tid, uint32_t pid)
{
	(void)arg;
	return tid && (pid == 400 || tid == 400); /* as `-p 400` (analysis/tasks.c) */
}

/*
 * issue 28: `timeline -p PID` found no task in an LKST trace.  A task met
 * first as a switch's next task has no process yet (no thread line); the
 * tgid in its own events' word 0 gives it, and the choice waits for it.
 */
static void test_follow_by_tgid(void)
{
	static const char meta[] = "ktrace-format 1\nclock mono\nchannel kernel\nscope cpu\nlayout packed\n"
				   "buf-size 4096\nstream 0 cpu cpu0\n"
				   "event 1 kevent PROCESS_CONTEXTSWITCH process prev_pid,next_pid,prev_state\n"
				   "event 48 kevent SYSCALL_ENTRY syscall id,args[0],args[1],args[2]\n";
	struct sbuf c0;
	struct ivs ivs = { "", 0 };
	struct ktr_sched *s = ktr_sched_new(KTR_SCHED_OFFCPU, on_iv, &ivs);

	memset(&c0, 0, sizeof(c0));
	sb_open(&c0, 0, T0 + 100);
	/* 7 (tgid 7) switches to 501, a thread of process 400 */
	kev(&c0, T0 + 100, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 7, 7, 7, 501, 1);
	kev(&c0, T0 + 200, KTRACE_LKST_SYSCALL_ENTRY, 501, 400, 0, 0, 0);
	kev(&c0, T0 + 900, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 501, 400, 501, 7, 1);
	kev(&c0, T0 + 1000, KTRACE_LKST_PROCESS_CONTEXTSWITCH, 7, 7, 7, 501, 0);
	kev(&c0, T0 + 1500, KTRACE_LKST_SYSCALL_ENTRY, 501, 400, 0, 0, 0);
	sb_close(&c0, 0, 0);
	ktr_sched_follow(s, only_pid_400, NULL);
	feed_cpu0(s, meta, &c0);
	is_str(ivs.text, "501:running:200-900 501:blocked:900-1000 501:running:1000-1500 ",
	       "-p 400 follows its thread 501 from its first own event (tgid 400 in word 0), "
	       "though first met as a switch's next task with no thread line");
	ktr_sched_free(s);
}

int main(void)
{
	build();
	test_merge();
	test_kernel_only();
	test_lost_and_gap();
	test_untraced_switch_in();
	test_follow_by_tgid();
	return done_testing();
}
