/*
 * lib/locks.c - the catalogue of the lock events (include/ktrace/locks.h)
 * that libktrace-locks.so (lib/preload/locks.c, preloaded by `ktrace
 * record --locks`) writes: declared in the default channel's metadata so
 * the tools print "mutex_lock:acquired lock=0x... site=0x...".
 */
#include <stdio.h>
#include <string.h>

#include <ktrace/locks.h>

#include "runtime.h"

static const struct {
	unsigned op, kind;
	const char *name;
} kt_lock_ops[] = {
#define KT_LOCK_OP(op, name, kind, flags) { op, kind, #name },
	KTRACE_LOCK_OPS(KT_LOCK_OP)
#undef KT_LOCK_OP
};

static const char *const kt_lock_phases[4] = { "acquire", "acquired", "failed", "release" };

/**
 * ktrace__locks_catalog() - declare the lock events in the default
 * channel's catalogue (ktrace_catalog_add()).  Called once by
 * libktrace-locks.so's constructor; not for applications.
 * Return: 0, -ENODEV without a default channel, or ktrace_catalog_add()'s error.
 */
KT_EXPORT int ktrace__locks_catalog(void)
{
	static char names[sizeof(kt_lock_ops) / sizeof(kt_lock_ops[0])][4][40];
	struct ktrace_event_desc ev[sizeof(kt_lock_ops) / sizeof(kt_lock_ops[0]) * 4];
	struct ktrace_channel *ch = __atomic_load_n(&kt_default, __ATOMIC_ACQUIRE);
	size_t n = 0;

	if (!ch)
		return -ENODEV;
	memset(ev, 0, sizeof(ev));
	for (size_t i = 0; i < sizeof(kt_lock_ops) / sizeof(kt_lock_ops[0]); i++) {
		unsigned kind = kt_lock_ops[i].kind;

		for (unsigned p = 0; p < 4; p++) {
			int single = kind == KTRACE_LOCK_K_SIGNAL || kind == KTRACE_LOCK_K_EXIT;

			if (single && p)
				break;
			/* the phases an op writes: locks acquire, acquired, failed;
			 * unlocks release; cond waits release, acquired, failed */
			if ((kind == KTRACE_LOCK_K_UNLOCK && p != KTRACE_LOCK_RELEASE) ||
			    ((kind == KTRACE_LOCK_K_LOCK || kind == KTRACE_LOCK_K_RDLOCK) &&
			     p == KTRACE_LOCK_RELEASE) ||
			    (kind == KTRACE_LOCK_K_WAIT && p == KTRACE_LOCK_ACQUIRE))
				continue;
			if (single)
				snprintf(names[i][p], sizeof(names[i][p]), "%s", kt_lock_ops[i].name);
			else
				snprintf(names[i][p], sizeof(names[i][p]), "%s:%s", kt_lock_ops[i].name,
					 kt_lock_phases[p]);
			ev[n].func = KTRACE_LOCKS_FUNC;
			ev[n].event = (uint8_t)KTRACE_LOCK_CODE(kt_lock_ops[i].op, p);
			ev[n].name = names[i][p];
			ev[n].category = "locks";
			ev[n].args[0] = "lock";
			ev[n].args[1] = p == KTRACE_LOCK_FAILED ? "site_err" : "site";
			n++;
		}
	}
	return ktrace_catalog_add(ch, ev, n);
}
