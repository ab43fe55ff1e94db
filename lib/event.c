/*
 * lib/event.c - static events (seed 000's ktrace_log2 / ktrace_log4), their
 * catalogue and their run-time enable map.
 *
 * The inline ktrace_log2() in <ktrace/ktrace.h> tests one byte of the
 * default channel's enable map (a zero map when there is none) and calls
 * ktrace__log2() only for an enabled event.  The map lives in the control
 * file, so `ktrace ctl DIR enable|disable EVENT` flips it from outside.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

KT_EXPORT void ktrace__log2(uint16_t id, uint64_t u1, uint64_t u2)
{
	struct ktrace_channel *ch = __atomic_load_n(&kt_default, __ATOMIC_ACQUIRE);
	uint64_t w[2] = { u1, u2 };

	if (KT_UNLIKELY(!ch || !kt_running(ch)))
		return;
	kt_write(ch, kt_clock(), KTRACE_CLASS_LOG2, id, w, 2);
}

KT_EXPORT void ktrace__log4(uint16_t id, uint32_t u1, uint32_t u2, uint32_t u3, uint32_t u4)
{
	struct ktrace_channel *ch = __atomic_load_n(&kt_default, __ATOMIC_ACQUIRE);
	uint64_t w[2] = { u1 | ((uint64_t)u2 << 32), u3 | ((uint64_t)u4 << 32) };

	if (KT_UNLIKELY(!ch || !kt_running(ch)))
		return;
	kt_write(ch, kt_clock(), KTRACE_CLASS_LOG4, id, w, 2);
}

KT_EXPORT int ktrace_event_enable(int func, int event, int on)
{
	struct ktrace_channel *ch = kt_default;

	if (!ch)
		return -ENODEV;
	if (func > 255 || event > 255)
		return -EINVAL;
	for (int f = func < 0 ? 0 : func; f <= (func < 0 ? 255 : func); f++)
		for (int e = event < 0 ? 0 : event; e <= (event < 0 ? 255 : event); e++)
			__atomic_store_n(&ch->enable[KTRACE_EVENT_ID(f, e)], (uint8_t)!!on,
					 __ATOMIC_RELAXED);
	return 0;
}

/* A catalogue name: non-empty, printable, no spaces or commas. */
static int kt_valid_name(const char *s, int allow_null)
{
	if (!s)
		return allow_null;
	if (!*s || strlen(s) > 128)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == ',' || *s == 0x7f)
			return 0;
	return 1;
}

static char *kt_strdup_or_null(const char *s)
{
	return s ? kt_strdup(s) : NULL;
}

KT_EXPORT int ktrace_catalog_add(struct ktrace_channel *ch, const struct ktrace_event_desc *ev,
				 size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		int ok = kt_valid_name(ev[i].name, 0) && kt_valid_name(ev[i].category, 1);

		for (int a = 0; a < 4; a++)
			ok = ok && kt_valid_name(ev[i].args[a], 1);
		if (!ok) {
			kt_seterr(EINVAL, "ktrace: catalogue entry %zu (%s): names must be non-empty, "
					  "without spaces or commas", i, ev[i].name ? ev[i].name : "null");
			return -EINVAL;
		}
	}
	pthread_mutex_lock(&ch->lock);
	for (size_t i = 0; i < n; i++) {
		struct kt_event *e = NULL;

		/* Re-declaring an id replaces it. */
		for (size_t k = 0; k < ch->nevents; k++)
			if (ch->events[k].d.func == ev[i].func && ch->events[k].d.event == ev[i].event)
				e = &ch->events[k];
		if (!e) {
			struct kt_event *grown = kt_realloc(ch->events, (ch->nevents + 1) * sizeof(*grown));

			if (!grown) {
				pthread_mutex_unlock(&ch->lock);
				kt_seterr(ENOMEM, "ktrace: catalogue: out of memory");
				return -ENOMEM;
			}
			ch->events = grown;
			e = &ch->events[ch->nevents++];
		} else {
			kt_free((char *)e->d.name);
			kt_free((char *)e->d.category);
			for (int a = 0; a < 4; a++)
				kt_free((char *)e->d.args[a]);
		}
		e->d = ev[i];
		e->d.name = kt_strdup(ev[i].name);
		e->d.category = kt_strdup_or_null(ev[i].category);
		for (int a = 0; a < 4; a++)
			e->d.args[a] = kt_strdup_or_null(ev[i].args[a]);
	}
	rc = kt_metadata_write(ch);
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

KT_EXPORT int ktrace_catalog_funcs(struct ktrace_channel *ch, const char *const *names, size_t n)
{
	int rc;

	if (n > 256) {
		kt_seterr(EINVAL, "ktrace: catalogue: %zu function ids, at most 256", n);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (!kt_valid_name(names[i], 0)) {
			kt_seterr(EINVAL, "ktrace: catalogue: function id %zu has a bad name", i);
			return -EINVAL;
		}
	pthread_mutex_lock(&ch->lock);
	for (size_t i = 0; i < n; i++) {
		kt_free(ch->funcs[i]);
		ch->funcs[i] = kt_strdup(names[i]);
	}
	rc = kt_metadata_write(ch);
	pthread_mutex_unlock(&ch->lock);
	return rc;
}
