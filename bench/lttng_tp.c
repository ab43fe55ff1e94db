/* SPDX-License-Identifier: MIT */
/*
 * bench/lttng_tp.c - instantiates the LTTng-UST probe of lttng_tp.h (the
 * provider is linked statically into bench_lttng, the usual way).
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
