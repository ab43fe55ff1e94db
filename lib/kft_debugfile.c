/*
 * lib/kft_debugfile.c - where a stripped object's debug file is
 * (lib/kft_debugfile.h): the build-id and .gnu_debuglink rules of
 * elfutils' dwfl_standard_find_debuginfo() and gdb, without debuginfod.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kft_debugfile.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* @path opened read-only if it is a regular file, else -1. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(const unsigned char *id, size_t idlen)
{
	char path[sizeof(DEBUG_ROOT "/.build-id/") + 2 * 64 + 8];
	size_t n;

	if (idlen < 2 || idlen > 64)
		return -1;
	n = (size_t)snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < idlen; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", id[i]);
	snprintf(path + n, sizeof(path) - n, ".debug");
	return open_regular(path);
}

static int by_debuglink(const char *path, const char *link)
{
	char real[PATH_MAX], cand[PATH_MAX + 256], *slash;
	const char *const fmt[] = { "%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s" };
	int fd = -1;

	if (!link || !*link || strchr(link, '/') || strlen(link) > 255 || !realpath(path, real))
		return -1;
	slash = strrchr(real, '/');
	if (!slash)
		return -1;
	*slash = '\0'; /* "" for an object in / */
	for (size_t k = 0; k < sizeof(fmt) / sizeof(fmt[0]) && fd < 0; k++) {
		snprintf(cand, sizeof(cand), fmt[k], real, link);
		/* the object itself (a link naming its own file) is not its debug file */
		if (k == 0 && !strcmp(cand + strlen(real) + 1, slash + 1))
			continue;
		fd = open_regular(cand);
	}
	return fd;
}

int kft_debugfile_open(const char *path, const unsigned char *id, size_t idlen, const char *link)
{
	int fd = idlen ? by_build_id(id, idlen) : -1;

	return fd >= 0 ? fd : by_debuglink(path, link);
}

size_t kft_note_build_id(const void *data, size_t size, const unsigned char **id)
{
	const unsigned char *p = data;
	size_t off = 0;

	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name, desc;

		memcpy(&nh, p + off, sizeof(nh)); /* Elf32_Nhdr and Elf64_Nhdr are alike */
		off += sizeof(nh);
		name = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		desc = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (name > size - off || desc > size - off - name)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + off, "GNU", 4) && nh.n_descsz) {
			*id = p + off + name;
			return nh.n_descsz;
		}
		off += name + desc;
	}
	return 0;
}
