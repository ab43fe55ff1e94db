/*
 * kclient/kft_proc.c - the client of KFT in the kernel (seed 002's
 * /proc/kft, ktrace.ko's kmod/kft_proc.c): read the status, load a
 * configuration, prime/start/stop the run, extract the log into a trace
 * directory.  `ktrace kft --kernel` (cli/cmd_kft_kernel.c) parses the
 * command line and calls these (API in kclient/kclient.h, kft_proc_*).
 *
 * ktrace.ko parses configurations itself, with the same parser
 * (kft/config.c) as `ktrace record -c`, and resolves function names by
 * probing them, so a load passes the file through unchanged.  A refused
 * write is explained by the `error:` line of /proc/kft, which is reported
 * as FILE:LINE:COL: message.
 *
 * An extract reads /proc/kft_data first (the module enters the call sites
 * of the records it returns), then /proc/kft_callsites and /proc/kft, and
 * writes DST/cpu0, DST/callsites, DST/kft-status, DST/metadata (one shared
 * packed stream, clock mono) and DST/kallsyms: the kernel's function
 * symbols from /proc/kallsyms (root only: others see zero addresses), or
 * from a System.map, so the trace can be read later and elsewhere
 * (docs/FORMAT.md, "Kernel traces"; kclient/kdir.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ktrace/format.h>

#include "kclient/internal.h"
#include "lib/safefile.h"

#define CMD "kft"
#define KFT_TEXT_MAX (64u * 1024u) /* what /proc/kft takes in one write */
#define KFT_DATA_SUBBUF 65536u     /* /proc/kft_data's sub-buffer size */

/* The files of PROCDIR. */
struct kk {
	char kft[4200], data[4200], sites[4200];
};

static void kk_init(struct kk *k, const char *procdir)
{
	snprintf(k->kft, sizeof(k->kft), "%s/kft", procdir);
	snprintf(k->data, sizeof(k->data), "%s/kft_data", procdir);
	snprintf(k->sites, sizeof(k->sites), "%s/kft_callsites", procdir);
}

/* The value of the status's `error:` line (static buffer), or NULL. */
static const char *status_error(const struct kk *k)
{
	static char msg[512];
	size_t len;
	char *s = kcl_slurp(k->kft, &len, 1 << 20), *p;

	if (!s)
		return NULL;
	p = strstr(s, "\nerror: ");
	if (!p) {
		free(s);
		return NULL;
	}
	p += 8;
	p[strcspn(p, "\n")] = '\0';
	snprintf(msg, sizeof(msg), "%s", p);
	free(s);
	return strcmp(msg, "-") ? msg : NULL;
}

/* Report that @path cannot be used (errno), hinting at the module. */
static int no_module(const char *path)
{
	kcl_error(CMD, "%s: %s%s", path, strerror(errno),
		  errno == ENOENT ? " (is ktrace.ko loaded? modprobe ktrace)" : "");
	return -1;
}

/* One write of @len bytes to /proc/kft.  Return: 0 or errno. */
static int write_kft(const struct kk *k, const char *buf, size_t len)
{
	int fd = open(k->kft, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t w;

	if (fd < 0)
		return errno;
	w = write(fd, buf, len);
	if (w < 0)
		err = errno;
	else if ((size_t)w != len)
		err = EIO;
	close(fd);
	return err;
}

char *kft_proc_status(const char *procdir, size_t *len)
{
	struct kk k;
	char *s;

	kk_init(&k, procdir);
	s = kcl_slurp(k.kft, len, 1 << 20);
	if (!s)
		no_module(k.kft);
	return s;
}

int kft_proc_load(const char *procdir, const char *file)
{
	const char *name = strcmp(file, "-") ? file : "stdin";
	size_t len = 0;
	char *text = strcmp(file, "-") ? kcl_slurp(file, &len, KFT_TEXT_MAX)
				       : kcl_slurp_fd(0, &len, KFT_TEXT_MAX);
	struct kk k;
	int err;

	kk_init(&k, procdir);
	if (!text) {
		kcl_error(CMD, "%s: %s", name,
			  errno == EFBIG ? "larger than 64 KiB (what /proc/kft takes)" : strerror(errno));
		return -1;
	}
	if (access(k.kft, W_OK) < 0) {
		free(text);
		return no_module(k.kft);
	}
	err = len ? write_kft(&k, text, len) : EINVAL;
	free(text);
	if (!err)
		return 0;
	if (err == EINVAL || err == ENOMEM) {
		const char *msg = status_error(&k);

		if (!len)
			kcl_error(CMD, "%s: empty configuration", name);
		else if (msg && msg[0] >= '0' && msg[0] <= '9')
			kcl_error(CMD, "%s:%s", name, msg);
		else
			kcl_error(CMD, "%s: %s", name, msg ? msg : strerror(err));
		return -1;
	}
	kcl_error(CMD, "%s: %s", k.kft, strerror(err));
	return -1;
}

int kft_proc_command(const char *procdir, const char *cmd)
{
	struct kk k;
	const char *msg;
	int err;

	kk_init(&k, procdir);
	err = write_kft(&k, cmd, strlen(cmd));
	if (!err)
		return 0;
	if (err == ENOENT || err == EACCES || err == EPERM) {
		errno = err;
		return no_module(k.kft);
	}
	msg = status_error(&k);
	kcl_error(CMD, "%s", msg ? msg : strerror(err));
	return -1;
}

int kft_proc_extract(const char *procdir, const char *dst, const char *system_map,
		     struct kft_proc_extract_stats *st)
{
	size_t dlen = 0, slen = 0, klen = 0;
	char *data, *sites = NULL, *status = NULL;
	char kallsyms[4200];
	struct kk k;
	int rc = -1, syms, e;

	kk_init(&k, procdir);
	/* The data first: reading it enters its call sites in the table. */
	data = kcl_slurp(k.data, &dlen, (size_t)1 << 31);
	if (!data)
		return no_module(k.data);
	sites = kcl_slurp(k.sites, &slen, (size_t)1 << 30);
	if (!sites) {
		no_module(k.sites);
		goto out;
	}
	status = kcl_slurp(k.kft, &klen, 1 << 20);
	if (!status) {
		no_module(k.kft);
		goto out;
	}
	if (kft_kdir_create(dst) < 0)
		goto out;
	if ((e = ksf_replace(dst, "cpu0", data, dlen)) < 0 ||
	    (e = ksf_replace(dst, "callsites", sites, slen)) < 0 ||
	    (e = ksf_replace(dst, "kft-status", status, klen)) < 0) {
		kcl_error(CMD, "%s: cannot write: %s", dst, strerror(-e));
		goto out;
	}
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", procdir);
	syms = kft_kdir_symbols(dst, system_map ? system_map : kallsyms);
	if (syms < 0)
		goto out;
	if (kft_kdir_metadata(dst, k.data, KFT_DATA_SUBBUF, syms > 0, procdir) < 0)
		goto out;
	st->bytes = dlen;
	st->callsites = slen > sizeof(struct ktrace_callsites) ?
				(slen - sizeof(struct ktrace_callsites)) / sizeof(struct ktrace_callsite) : 0;
	rc = 0;
out:
	free(data);
	free(sites);
	free(status);
	return rc;
}
