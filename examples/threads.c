/*
 * examples/threads.c - a small multi-threaded program traced with the
 * channel API and static events, in the style of seed 000's klog example:
 * each worker logs the entry and exit of the functions it runs, the exit
 * carrying the duration, plus one event with named arguments.
 *
 *   build:  make            (-> build/examples/threads)
 *   run:    build/examples/threads [-f] [-t THREADS] [-n REQUESTS] [DIR]
 *   read:   build/ktrace print DIR/threads      (default DIR: /tmp/ktrace-example)
 *
 * -f records in flight-recorder mode: only the newest sub-buffers are kept.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ktrace/ktrace.h>

/* Function ids, like klog's KT_FUNC_* enumerator. */
#define EXAMPLE_FUNCS(X) X(handle_request) X(parse) X(checksum)
enum { EXAMPLE_FUNCS(KTRACE_FUNC_ENUM) };
static const char *const func_names[] = { EXAMPLE_FUNCS(KTRACE_FUNC_NAME) };

#define EV_REQUEST_DONE KT_EVENT_USER

static int requests = 2000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t checksum(const unsigned char *p, size_t n)
{
	uint64_t start = now_ns();
	uint32_t h = 2166136261u;

	ktrace_log2(KT_FUNC_checksum, KT_EVENT_ENTRY, n, 0);
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	ktrace_log2(KT_FUNC_checksum, KT_EVENT_EXIT, now_ns() - start, h);
	return h;
}

static size_t parse(unsigned char *buf, size_t cap, unsigned seed)
{
	uint64_t start = now_ns();
	size_t n = 64 + seed % (cap - 64);

	ktrace_log2(KT_FUNC_parse, KT_EVENT_ENTRY, seed, 0);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(seed * 31 + i);
	ktrace_log2(KT_FUNC_parse, KT_EVENT_EXIT, now_ns() - start, n);
	return n;
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	unsigned char buf[4096];

	for (int r = 0; r < requests; r++) {
		uint64_t start = now_ns();
		size_t n;
		uint32_t h;

		ktrace_log2(KT_FUNC_handle_request, KT_EVENT_ENTRY, id, (uint64_t)r);
		n = parse(buf, sizeof(buf), id * 7919u + (unsigned)r);
		h = checksum(buf, n);
		ktrace_log4(KT_FUNC_handle_request, EV_REQUEST_DONE, id, (uint32_t)r, (uint32_t)n, h & 0xff);
		ktrace_log2(KT_FUNC_handle_request, KT_EVENT_EXIT, now_ns() - start, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct ktrace_event_desc events[] = {
		{ .func = KT_FUNC_handle_request, .event = EV_REQUEST_DONE, .name = "request_done",
		  .category = "app", .args = { "worker", "request", "bytes", "status" }, .is_log4 = 1 },
		{ .func = KT_FUNC_handle_request, .event = KT_EVENT_ENTRY, .name = "handle_request:entry",
		  .category = "app", .args = { "worker", "request" } },
		{ .func = KT_FUNC_handle_request, .event = KT_EVENT_EXIT, .name = "handle_request:exit",
		  .category = "app", .args = { "duration_ns", "unused" } },
	};
	const char *root = "/tmp/ktrace-example";
	uint32_t flags = 0;
	int nthreads = 4, c;
	struct ktrace_channel *ch;
	struct ktrace_stats st;
	pthread_t th[64];

	while ((c = getopt(argc, argv, "ft:n:h")) != -1) {
		switch (c) {
		case 'f':
			flags |= KTRACE_FLIGHT_CHANNEL;
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'n':
			requests = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-f] [-t THREADS] [-n REQUESTS] [DIR]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || requests < 1) {
		fprintf(stderr, "%s: -t takes 1..64, -n a positive number\n", argv[0]);
		return 2;
	}
	if (optind < argc)
		root = argv[optind];

	/* seed 003: trace_setup(root, name, buf_size, buf_nr, flags) */
	ch = ktrace_setup(root, "threads", 256 * 1024, 8, flags);
	if (!ch) {
		fprintf(stderr, "%s\n", ktrace_error());
		return 1;
	}
	ktrace_catalog_funcs(ch, func_names, sizeof(func_names) / sizeof(func_names[0]));
	ktrace_catalog_add(ch, events, sizeof(events) / sizeof(events[0]));
	ktrace_start(ch);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	ktrace_stop(ch);
	ktrace_get_stats(ch, &st);
	printf("trace: %s\nrecords written %llu, dropped %llu, overwritten %llu\n", ktrace_dir(ch),
	       (unsigned long long)st.written, (unsigned long long)st.dropped,
	       (unsigned long long)st.overwritten);
	ktrace_cleanup(ch);
	return 0;
}
