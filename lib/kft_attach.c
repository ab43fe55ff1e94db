/*
 * lib/kft_attach.c - libktrace's side of `ktrace record -p PID`
 * (lib/kft_attach.h): set a run up in a process that is already running,
 * from settings record hands over, listing the entry writes for record to
 * make; and stop it again.
 *
 * Called by one thread of the process, which record made call us (the
 * others run); see lib/kft_attach.h for the whole protocol.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "kft_attach.h"
#include "kft_rt.h"
#include "session.h"

static struct kft_attach_info info;

#if defined(__x86_64__)
extern char kft_pg_return[], kft_dyn_return[]; /* lib/kft_pg_entry.S */
#endif

/* The answer is complete: the trampolines' addresses, then the magic (release). */
static void answer_done(void)
{
#if defined(__x86_64__)
	info.returns[0] = (uint64_t)(uintptr_t)kft_dyn_return;
	info.returns[1] = (uint64_t)(uintptr_t)kft_pg_return;
#endif
	__atomic_store_n(&info.magic, KFT_ATTACH_MAGIC, __ATOMIC_RELEASE);
}

static int attaching;
static int attached; /* the run in the process was set up by kft_attach_start() */
static struct kft_patch_write *writes;
static size_t nwrites, capwrites;

int kft_attaching(void)
{
	return attaching;
}

static int prime_pending; /* kft_attach_prime_later(): kft_attach_go() primes the run */

void kft_attach_prime_later(void)
{
	prime_pending = 1;
}

struct kft_attach_info *kft_attach_adopt(const uint64_t *pairs, uint64_t n)
{
	memset(&info, 0, sizeof(info));
#if defined(__x86_64__)
	if (__atomic_load_n(&kft_g, __ATOMIC_ACQUIRE))
		for (uint64_t i = n; i-- > 0;) /* outermost first */
			kft_pg_adopt(pairs[2 * i], pairs[2 * i + 1]);
#else
	(void)pairs;
	(void)n;
#endif
	answer_done();
	return &info;
}

struct kft_attach_info *kft_attach_go(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);

	memset(&info, 0, sizeof(info));
	if (g && prime_pending)
		kft_command(g->run, KFT_CMD_PRIME, kt_clock());
	prime_pending = 0;
	answer_done();
	return &info;
}

int kft_attach_add_write(uint64_t addr, const uint8_t *new_, uint32_t len, uint32_t kind)
{
	struct kft_patch_write *w;

	if (len > sizeof(w->new_))
		return -EINVAL;
	if (nwrites == capwrites) {
		size_t cap = capwrites ? capwrites * 2 : 1024;
		struct kft_patch_write *m = kt_realloc(writes, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		writes = m;
		capwrites = cap;
	}
	w = &writes[nwrites++];
	memset(w, 0, sizeof(*w));
	w->addr = addr;
	w->len = len;
	w->kind = kind;
	memcpy(w->old, (const void *)(uintptr_t)addr, len);
	memcpy(w->new_, new_, len);
	return 0;
}

/* kft_report_untraced() while attaching: the reason goes to record, not to the program's stderr. */
void kft_attach_error(const char *msg)
{
	if (!info.error[0])
		snprintf(info.error, sizeof(info.error), "%s", msg);
}

/* Is the consumer of the session this process records into gone (a `record -p` killed)? */
static int consumer_gone(void)
{
	struct kt_session *sess = kt_session();
	pid_t pid = sess ? (pid_t)__atomic_load_n(&sess->hdr->consumer, __ATOMIC_RELAXED) : 0;

	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

struct kft_attach_info *kft_attach_start(const char *settings)
{
	memset(&info, 0, sizeof(info));
	if (__atomic_load_n(&kft_g, __ATOMIC_ACQUIRE)) {
		if (attached && consumer_gone()) {
			/* the writes still in place, for record to undo before it stops and
			 * releases this run and attaches again */
			info.status = -EOWNERDEAD;
			info.writes = (uint64_t)(uintptr_t)writes;
			info.nwrites = (uint32_t)nwrites;
			snprintf(info.error, sizeof(info.error), "an attach whose ktrace record died "
								 "is still in the process");
		} else {
			info.status = -EBUSY;
			snprintf(info.error, sizeof(info.error),
				 "the process is already traced (libktrace has a run in it)");
		}
		goto out;
	}
	nwrites = 0; /* a new list (the last attach's writes were undone) */
	if (kt_env_use(settings) < 0) {
		info.status = -ENOMEM;
		snprintf(info.error, sizeof(info.error), "out of memory");
		goto out;
	}
	attaching = 1;
	if (kft_begin() < 0) {
		info.status = -EINVAL;
		if (!info.error[0])
			snprintf(info.error, sizeof(info.error), "the run could not be set up");
	}
	attaching = 0;
	attached = info.status == 0;
	info.writes = (uint64_t)(uintptr_t)writes;
	info.nwrites = (uint32_t)nwrites;
out:
	answer_done();
	return &info;
}

struct kft_attach_info *kft_attach_release(void)
{
	struct kft_global *g = __atomic_exchange_n(&kft_g, NULL, __ATOMIC_ACQ_REL);

	memset(&info, 0, sizeof(info));
	if (g) {
		kt_channel_retire(g->ch);
		kt_session_reset();
		kt_env_use(NULL);
		attached = 0;
	}
	answer_done();
	return &info;
}

struct kft_attach_info *kft_attach_stop(void)
{
	struct kft_global *g = __atomic_load_n(&kft_g, __ATOMIC_ACQUIRE);

	memset(&info, 0, sizeof(info));
	if (!g) {
		info.status = -ENOENT;
		snprintf(info.error, sizeof(info.error), "no run to stop");
	} else {
		kft_stop(g->run, KFT_REASON_COMMAND, 0, kt_clock());
		pthread_mutex_lock(&g->ch->lock);
		kt_metadata_write(g->ch); /* the maps of objects loaded since attach */
		pthread_mutex_unlock(&g->ch->lock);
		kft_write_status(1);
	}
	answer_done();
	return &info;
}
