/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * ktrace/lkst.h - the kernel event catalogue: LKST's hook points (seed 001,
 * "Linux Kernel State Tracer") mapped onto today's kernel tracepoints.
 *
 * One table for every producer and consumer of kernel events: the module's
 * LKST tracer (kmod/, tracepoint_probe_register on the tracepoint found by
 * name), the tracefs backend (`ktrace record --kernel`, libtracefs), and the
 * tools (names, categories, argument names, masksets).  Freestanding: the
 * table is an X-macro, expanded by each user into what it needs.
 *
 *   KTRACE_LKST_EVENTS(X) calls, for every event,
 *     X(id, MNEMONIC, category, "system", "tracepoint", nargs,
 *       "arg names", primary)
 *   id        LKST event type, the record id (KTRACE_CLASS_KEVENT); the
 *             seed's numbers where it gave one (context switch 0x01, wakeup
 *             0x02, signal send 0x03, kernel thread 0x04, hardware interrupt
 *             0x10, syscall 0x30 ...), new ones in the same category ranges
 *   MNEMONIC  LKST's name, printed by the tools (PROCESS_CONTEXTSWITCH)
 *   category  process, interrupt, exception, syscall, memory, network,
 *             lock, timer, workqueue, block
 *   system, tracepoint   the tracefs event providing it ("sched",
 *             "sched_switch"); "" = no tracepoint on any kernel (LKST's
 *             wait-queue hooks): always listed as unavailable; system
 *             "ktrace" = made by ktrace.ko itself, not a tracepoint
 *             (EXCEPTION_ENTRY/EXIT: the die notifier chain, the page fault
 *             tracepoints and kretprobes, kmod/lkst_exc.c; vector = the
 *             x86 trap number X86_TRAP_*, 0 divide error, 3 int3, 14 page
 *             fault; tracefs: ENTRY from kprobe events, kclient/exc_tracefs.c)
 *   nargs     argument words recorded (0..4)
 *   arg names comma-separated; for tracefs these are the event's field names
 *             (an array element is written field[i], e.g. "args[0]")
 *   primary   1 if the event is in the RDEFAULT maskset ("primary events")
 *
 * Record layout (class KTRACE_CLASS_KEVENT = 5, id = event type):
 *   word 0      bits 0..31 pid (the kernel's task pid, i.e. the thread id)
 *               of the task the event happened in; bits 32..55 its tgid
 *               when the producer knows it, else 0 (PID_MAX_LIMIT is
 *               2^22); bits 56..59 the hidden mask: bit 56 + i set means
 *               argument i + 1 was a kernel address and is recorded as 0
 *               (KTRACE_KEVENT_HIDDEN()); bits 60..63 0
 *   words 1..n  the nargs arguments, each zero- or sign-extended to 64 bits
 * So `words` = 1 + nargs and a context switch is 8 + 8 + 3 * 8 = 40 bytes.
 * The CPU is the stream's (per-CPU streams) or the context word's.
 *
 * No argument is a kernel address: LKST recorded task_struct pointers; ktrace
 * records pids, so a trace shows nothing of the kernel's layout.  A hook's
 * argument in the kernel's half of the address space (x86-64: from
 * 0xffff800000000000, 4-level paging) is recorded as 0 with its hidden bit
 * set in word 0, so readers show it as hidden, not as 0; error codes
 * (-4095..-1) and every other value (LLONG_MAX, a 64-bit size) stay.  The page
 * fault events' address and ip are kernel addresses when the fault or the
 * faulting instruction is in the kernel: the module records those as 0.
 * The contention events' lock_addr is not the address either but an opaque
 * lock id: a keyed hash of it (SipHash in the module, a random key per
 * module load; a keyed 64-bit mix in the tracefs backend, a random key per
 * recording), the same for the same lock within one trace, so `ktrace
 * locks` can tell locks apart and nothing of the layout shows.
 *
 * PROCESS_COMM names a task (the module only; a tracefs recording names
 * tasks from sched_switch's comm fields in its `thread` lines): pid, tgid,
 * then its comm, 16 bytes NUL-padded, in two words (bytes 0..7 little-
 * endian in comm, 8..15 in comm2).  The module writes one, at a context
 * switch, for each task switched in or out whose pid and name the CPU has
 * not named yet in its current sub-buffer, so every sub-buffer names the
 * tasks it shows switching (a flight recorder's or a crash region's last
 * sub-buffers included); `ktrace read` turns them into `thread` lines.
 *
 * System masksets (LKST): RDEFAULT = the primary events, RALL = every
 * available event, RNOTHING = none.  Handlers: KTRACE_LKST_HANDLER_DEFAULT
 * (1) writes the record above, KTRACE_LKST_HANDLER_NOTHING (255) drops it.
 */
#ifndef KTRACE_LKST_H
#define KTRACE_LKST_H

/* Word 0 of a KEVENT record: the thread id, the tgid, the hidden mask. */
#define KTRACE_KEVENT_TID(w0) ((unsigned int)((w0) & 0xffffffffu))
#define KTRACE_KEVENT_TGID(w0) ((unsigned int)(((w0) >> 32) & 0xffffffu))
#define KTRACE_KEVENT_HIDDEN(w0) ((unsigned int)(((w0) >> 56) & 0xfu))
/* The hidden bit of argument @i (0-based: the word after word 0 is 0). */
#define KTRACE_KEVENT_HIDE(i) (1ULL << (56 + (i)))

#define KTRACE_LKST_HANDLER_DEFAULT 1
#define KTRACE_LKST_HANDLER_NOTHING 255

/*
 * Maskset ids of the module (`ktrace lkst read -m N`).  0 is the null
 * maskset, so the seed's process-trace recipe (`read -m 0 | write -m 3`:
 * "create a null maskset") gives an empty maskset; user masksets are 3..63.
 */
#define KTRACE_LKST_MASKSET_RNOTHING 0
#define KTRACE_LKST_MASKSET_RDEFAULT 1
#define KTRACE_LKST_MASKSET_RALL 2

/* clang-format off */
#define KTRACE_LKST_EVENTS(X) \
	/* process management */ \
	X(0x01, PROCESS_CONTEXTSWITCH, process, "sched", "sched_switch", 3, "prev_pid,next_pid,prev_state", 1) \
	X(0x02, PROCESS_WAKEUP, process, "sched", "sched_wakeup", 2, "pid,target_cpu", 1) \
	X(0x03, PROCESS_SIGSEND, process, "signal", "signal_generate", 3, "sig,pid,result", 1) \
	X(0x04, PROCESS_LTHREADGEN, process, "task", "task_newtask", 2, "pid,clone_flags", 1) \
	X(0x05, PROCESS_INIT_WQH, process, "", "", 0, "", 0) \
	X(0x06, PROCESS_ADD_WQ, process, "", "", 0, "", 0) \
	X(0x07, PROCESS_REM_WQ, process, "", "", 0, "", 0) \
	X(0x08, PROCESS_FORK, process, "sched", "sched_process_fork", 2, "parent_pid,child_pid", 1) \
	X(0x09, PROCESS_EXEC, process, "sched", "sched_process_exec", 2, "pid,old_pid", 1) \
	X(0x0a, PROCESS_EXIT, process, "sched", "sched_process_exit", 2, "pid,prio", 1) \
	X(0x0b, PROCESS_WAKEUP_NEW, process, "sched", "sched_wakeup_new", 2, "pid,target_cpu", 1) \
	X(0x0c, PROCESS_SIGDELIVER, process, "signal", "signal_deliver", 3, "sig,errno,code", 0) \
	X(0x0d, PROCESS_COMM, process, "ktrace", "sched_switch", 4, "pid,tgid,comm,comm2", 1) \
	/* interrupts */ \
	X(0x10, INT_HARDWARE_ENTRY, interrupt, "irq", "irq_handler_entry", 1, "irq", 1) \
	X(0x11, INT_HARDWARE_EXIT, interrupt, "irq", "irq_handler_exit", 2, "irq,ret", 1) \
	X(0x12, INT_TASKLETHI_ENTRY, interrupt, "irq", "tasklet_hi_entry", 0, "", 0) \
	X(0x13, INT_TASKLETHI_EXIT, interrupt, "irq", "tasklet_hi_exit", 0, "", 0) \
	X(0x14, INT_TASKLET_ENTRY, interrupt, "irq", "tasklet_entry", 0, "", 0) \
	X(0x15, INT_TASKLET_EXIT, interrupt, "irq", "tasklet_exit", 0, "", 0) \
	X(0x16, INT_SOFTIRQ_ENTRY, interrupt, "irq", "softirq_entry", 1, "vec", 1) \
	X(0x17, INT_SOFTIRQ_EXIT, interrupt, "irq", "softirq_exit", 1, "vec", 1) \
	X(0x18, INT_SOFTIRQ_RAISE, interrupt, "irq", "softirq_raise", 1, "vec", 0) \
	X(0x19, INT_IPI_ENTRY, interrupt, "ipi", "ipi_entry", 0, "", 0) \
	X(0x1a, INT_IPI_EXIT, interrupt, "ipi", "ipi_exit", 0, "", 0) \
	/* exceptions */ \
	X(0x20, EXCEPTION_ENTRY, exception, "ktrace", "exception_entry", 3, "vector,error_code,ip", 0) \
	X(0x21, EXCEPTION_EXIT, exception, "ktrace", "exception_exit", 1, "vector", 0) \
	X(0x22, EXCEPTION_PAGEFAULT_USER, exception, "exceptions", "page_fault_user", 3, "address,ip,error_code", 1) \
	X(0x23, EXCEPTION_PAGEFAULT_KERNEL, exception, "exceptions", "page_fault_kernel", 3, "address,ip,error_code", 1) \
	X(0x24, EXCEPTION_NMI, exception, "nmi", "nmi_handler", 2, "delta_ns,handled", 0) \
	X(0x25, EXCEPTION_MCE, exception, "mce", "mce_record", 2, "mcgstatus,status", 0) \
	/* system calls */ \
	X(0x30, SYSCALL_ENTRY, syscall, "raw_syscalls", "sys_enter", 4, "id,args[0],args[1],args[2]", 1) \
	X(0x31, SYSCALL_EXIT, syscall, "raw_syscalls", "sys_exit", 2, "id,ret", 1) \
	/* memory management */ \
	X(0x40, MEM_PAGE_ALLOC, memory, "kmem", "mm_page_alloc", 3, "pfn,order,gfp_flags", 0) \
	X(0x41, MEM_PAGE_FREE, memory, "kmem", "mm_page_free", 2, "pfn,order", 0) \
	X(0x42, MEM_KMALLOC, memory, "kmem", "kmalloc", 3, "bytes_req,bytes_alloc,gfp_flags", 0) \
	X(0x43, MEM_KFREE, memory, "kmem", "kfree", 0, "", 0) \
	X(0x44, MEM_CACHE_ALLOC, memory, "kmem", "kmem_cache_alloc", 3, "bytes_req,bytes_alloc,gfp_flags", 0) \
	X(0x45, MEM_CACHE_FREE, memory, "kmem", "kmem_cache_free", 0, "", 0) \
	/* network */ \
	X(0x50, NET_DEV_XMIT, network, "net", "net_dev_xmit", 2, "len,rc", 0) \
	X(0x51, NET_RECEIVE_SKB, network, "net", "netif_receive_skb", 1, "len", 0) \
	/* locks */ \
	X(0x70, LOCK_CONTENTION_BEGIN, lock, "lock", "contention_begin", 2, "flags,lock_addr", 0) \
	X(0x71, LOCK_CONTENTION_END, lock, "lock", "contention_end", 2, "ret,lock_addr", 0) \
	/* timers */ \
	X(0x80, TIMER_EXPIRE_ENTRY, timer, "timer", "timer_expire_entry", 1, "now", 0) \
	X(0x81, TIMER_EXPIRE_EXIT, timer, "timer", "timer_expire_exit", 0, "", 0) \
	X(0x82, HRTIMER_EXPIRE_ENTRY, timer, "timer", "hrtimer_expire_entry", 1, "now", 0) \
	X(0x83, HRTIMER_EXPIRE_EXIT, timer, "timer", "hrtimer_expire_exit", 0, "", 0) \
	/* workqueues */ \
	X(0x90, WORKQUEUE_EXECUTE_START, workqueue, "workqueue", "workqueue_execute_start", 0, "", 0) \
	X(0x91, WORKQUEUE_EXECUTE_END, workqueue, "workqueue", "workqueue_execute_end", 0, "", 0) \
	/* block I/O */ \
	X(0xa0, BLOCK_RQ_ISSUE, block, "block", "block_rq_issue", 4, "dev,sector,nr_sector,bytes", 0) \
	X(0xa1, BLOCK_RQ_COMPLETE, block, "block", "block_rq_complete", 4, "dev,sector,nr_sector,error", 0)
/* clang-format on */

/* Enumerators KTRACE_LKST_PROCESS_CONTEXTSWITCH, ... */
#define KTRACE_LKST_ENUM_(id, mn, cat, sys, tp, nargs, args, primary) KTRACE_LKST_##mn = id,
enum ktrace_lkst_event { KTRACE_LKST_EVENTS(KTRACE_LKST_ENUM_) };
#undef KTRACE_LKST_ENUM_

/* Highest event id + 1 (bitmaps and per-event tables are this large). */
#define KTRACE_LKST_MAX_ID 0x100

/*
 * User-placed hooks (LKST's "hooks in arbitrary kernel source code
 * locations"): `ktrace lkst hook add FUNC[+OFFSET] [ARGS]` defines an event
 * on any kernel function, through a kprobe (ktrace.ko, debugfs
 * ktrace/lkst/hooks) or a kprobe event (tracefs).  Their ids are
 * KTRACE_LKST_HOOK_FIRST..KTRACE_LKST_HOOK_LAST (64 hooks), above every
 * catalogue category and inside the 8-bit event type space of LKST, so
 * masksets, handlers and counters take them unchanged.  A hook's record is a
 * KEVENT like any other: word 0 = pid | tgid << 32, then its arguments
 * (a1..a6: the function's first six arguments, x86-64 %di %si %dx %cx %r8
 * %r9 at the probe; at most KTRACE_LKST_HOOK_MAX_ARGS of them).  Its
 * metadata line is `event ID kevent FUNC+OFFSET hook ARGS`.
 */
#define KTRACE_LKST_HOOK_FIRST 0xc0
#define KTRACE_LKST_HOOK_LAST 0xff
#define KTRACE_LKST_HOOK_MAX_ARGS 4
#define KTRACE_LKST_IS_HOOK(id) ((id) >= KTRACE_LKST_HOOK_FIRST && (id) <= KTRACE_LKST_HOOK_LAST)

#endif /* KTRACE_LKST_H */
