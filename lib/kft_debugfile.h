/*
 * lib/kft_debugfile.h - the separate debug file of a stripped object, found
 * where elfutils and gdb look for it, so that run-time patching
 * (lib/kft_names.c) and `ktrace record`'s plan (cli/record_patch.c) see
 * the functions of a stripped binary or library through the .symtab of
 * its debug file (Debian's -dbg and -dbgsym packages, or
 * `objcopy --only-keep-debug` + `--add-gnu-debuglink`):
 *
 *   1. /usr/lib/debug/.build-id/XX/YYYY.debug   (build id XXYYYY..., hex)
 *   2. DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK
 *      (LINK: the object's .gnu_debuglink name; DIR: the directory of the
 *      object's real path)
 *
 * debuginfod is not consulted (no network at a program's start).  Only
 * regular files are opened (never a FIFO or a device); a debug file whose
 * build id differs from the object's is the caller's to reject.
 *
 * Thread-safe (no shared state); not async-signal-safe (realpath()).
 */
#ifndef KTRACE_LIB_KFT_DEBUGFILE_H
#define KTRACE_LIB_KFT_DEBUGFILE_H

#include <stddef.h>

/**
 * kft_debugfile_open() - open the debug file of the object at @path, whose
 * build id is @id (@idlen bytes; 0: none) and .gnu_debuglink name is
 * @link (NULL: none), read-only and close-on-exec.
 * Return: a file descriptor of a regular file, or -1 if none was found.
 */
int kft_debugfile_open(const char *path, const unsigned char *id, size_t idlen, const char *link);

/**
 * kft_note_build_id() - the NT_GNU_BUILD_ID descriptor in the bytes of an
 * ELF note section or segment (@data, @size bytes, 4-byte aligned notes
 * of the machine's byte order) into *@id (pointing into @data).
 * Return: its length in bytes, or 0 if the notes hold none or are torn.
 */
size_t kft_note_build_id(const void *data, size_t size, const unsigned char **id);

#endif
