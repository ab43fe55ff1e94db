/* SPDX-License-Identifier: MIT */
/*
 * bench/lttng_tp.h - the LTTng-UST tracepoint provider the benchmark compares
 * ktrace_log2() with: provider "ktbench", event "ev", two u64 fields, i.e.
 * the same payload as one ktrace LOG2 record.  LTTng-UST 2.13 API
 * (lttng-ust(3)); compiled into bench_lttng by lttng_tp.c.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ktbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(KTRACE_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define KTRACE_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(ktbench, ev,
	LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint64_t, b, b)
	)
)

#endif /* KTRACE_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
