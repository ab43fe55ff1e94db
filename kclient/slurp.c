/*
 * kclient/slurp.c - reading a whole file into memory: kernel files (/proc
 * and debugfs files report size 0, so the file is read to its end, not
 * stat()ed), configurations, System.map files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kclient/internal.h"

char *kcl_slurp_fd(int fd, size_t *len, size_t max)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int err = 0;

	for (;;) {
		ssize_t r;

		if (cap - n < 2) {
			size_t ncap = cap ? 2 * cap : 65536;
			char *p = realloc(buf, ncap);

			if (!p) {
				err = ENOMEM;
				break;
			}
			buf = p;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			err = EFBIG;
			break;
		}
	}
	*len = n;
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

char *kcl_slurp(const char *path, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	char *buf;

	*len = 0;
	if (fd < 0)
		return NULL;
	buf = kcl_slurp_fd(fd, len, max);
	err = errno;
	close(fd);
	errno = err;
	return buf;
}
