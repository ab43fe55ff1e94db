/*
 * cli/read_relay.h - `ktrace read` for kernel relay channels: the
 * interface between cli/cmd_read.c and the kernel-side reader.
 *
 * cli/read_relay.c implements it; until the kernel module lands it is a
 * stub that says so.
 */
#ifndef KTRACE_CLI_READ_RELAY_H
#define KTRACE_CLI_READ_RELAY_H

/**
 * read_relay() - copy a kernel channel's relay files to a trace directory.
 * @src:        the channel's debugfs directory (has trace0.. and state).
 * @dst:        the trace directory to create (mode 0700; files 0600): one
 *              packed stream file cpuN per relay file, plus metadata.
 * @subbuf_size, @n_subbufs: the -b/-n options of `ktrace read` (klog's
 *              relay geometry), 0 = the channel's own.
 * Errors are printed as one line ("ktrace read: FILE: what") on stderr.
 * Return: the exit status: 0 done, 1 failed (what was copied stays).
 */
int read_relay(const char *src, const char *dst, unsigned subbuf_size, unsigned n_subbufs);

#endif
