/*
 * tests/kft/account.c - the program tests/record_account.sh traces (built
 * with -finstrument-functions): it counts the calls of its own instrumented
 * functions and prints the count, so the test can check that records in
 * the trace + records counted lost = calls made.
 *
 *   account calls N            main() -> N x leaf(); prints "calls N+1"
 *   account closefds N         the same after closing descriptors 3..1023,
 *                              as daemons and test harnesses do
 *   account close_range N      the same after close_range(3, ~0U, 0)
 *   account reusefds N FILE    closes 3..1023, then opens FILE 64 times, so
 *                              the numbers the runtime held are FILE's now;
 *                              after the calls prints "own-size S": FILE's
 *                              size, which must stay 0
 *
 * Exit 0 (3 if FILE cannot be opened).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long long calls;
static volatile unsigned sink;

void __attribute__((noinline)) leaf(void)
{
	calls++;
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc >= 3 ? strtoull(argv[2], NULL, 0) : 0;
	int own = -1;

	calls++; /* main itself */
	if (argc < 3) {
		fprintf(stderr, "usage: account calls|closefds|close_range|reusefds N [FILE]\n");
		return 2;
	}
	if (!strcmp(argv[1], "closefds") || !strcmp(argv[1], "reusefds"))
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	if (!strcmp(argv[1], "close_range"))
		syscall(SYS_close_range, 3u, ~0u, 0u);
	if (!strcmp(argv[1], "reusefds")) {
		if (argc < 4)
			return 2;
		for (int i = 0; i < 64; i++) {
			int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

			if (fd < 0)
				return 3;
			own = fd;
		}
	}
	for (unsigned long long i = 0; i < n; i++)
		leaf();
	if (own >= 0) {
		struct stat st;

		printf("own-size %lld\n", fstat(own, &st) == 0 ? (long long)st.st_size : -1LL);
	}
	printf("calls %llu\n", calls);
	return 0;
}
