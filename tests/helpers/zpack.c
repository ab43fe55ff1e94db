/*
 * tests/helpers/zpack.c - rewrite the slots-layout stream files of a trace
 * directory (`ktrace record --compress=none`) as compressed frames, with
 * the consumer's codec (reader/zframe.h), so that tests can read one trace
 * both ways and compare what every tool prints.  Test use only.
 *
 * Usage: zpack [-n SUBBUFS_PER_FRAME] [-l LEVEL] DIR
 *
 * Every DIR/traceN becomes frames of up to -n sub-buffers (default 16, as
 * the consumer's batches), through DIR/.zpack.tmp renamed over it.  The
 * record counts of the entries are those of the sub-buffer headers (`nrec`;
 * shared streams are counted by walking their records).  Prints one line
 * per file: "traceN SLOTS FRAMES BYTES_BEFORE BYTES_AFTER".  Exit 0, or 1
 * with a message.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/zframe.h"

static uint32_t count_records(const struct ktrace_subbuf *h)
{
	const uint8_t *p = (const uint8_t *)h + KTRACE_SUBBUF_HDR_SIZE;
	int ctx = (h->flags & KTRACE_SBF_CTX) != 0;
	uint64_t off = 0;
	uint32_t n = 0;

	if (!ctx)
		return h->nrec;
	while (off + 8 <= h->used) {
		uint64_t w;

		memcpy(&w, p + off, 8);
		if (!KTRACE_REC_CLASS(w))
			break;
		off += 16 + 8 * (uint64_t)KTRACE_REC_WORDS(w);
		n += KTRACE_REC_CLASS(w) != KTRACE_CLASS_INTERNAL;
	}
	return n;
}

static uint32_t buf_size(const char *dir)
{
	char path[4096], line[256];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "buf-size %lu", &v) == 1)
			break;
	fclose(f);
	return (uint32_t)v;
}

/*
 * The metadata's `stream-written INDEX FILE BYTES RECORDS` line of @name
 * gets the file's new size @bytes (readers check the file against it).
 */
static int fix_written(const char *dir, const char *name, long bytes)
{
	char path[4096], tmp[4096], line[1024], file[256];
	unsigned long long b, r;
	unsigned idx;
	FILE *f, *o;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	snprintf(tmp, sizeof(tmp), "%s/.zpack.meta", dir);
	if (!(f = fopen(path, "r")) || !(o = fopen(tmp, "w")))
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "stream-written %u %255s %llu %llu", &idx, file, &b, &r) == 4 &&
		    !strcmp(file, name))
			fprintf(o, "stream-written %u %s %ld %llu\n", idx, file, bytes, r);
		else
			fputs(line, o);
	}
	fclose(f);
	return fclose(o) || rename(tmp, path);
}

static int pack(const char *dir, const char *name, uint32_t bs, unsigned per, int level)
{
	char in[4096], out[4096];
	unsigned long slots = 0, frames = 0;
	long before, after;
	struct kz_enc *z = kz_enc_new(level, bs, per);
	const struct ktrace_subbuf *sb[KTRACE_ZFRAME_MAX];
	uint32_t rec[KTRACE_ZFRAME_MAX];
	uint8_t *buf = malloc((size_t)bs * per);
	FILE *fi, *fo;
	size_t got;

	snprintf(in, sizeof(in), "%s/%s", dir, name);
	snprintf(out, sizeof(out), "%s/.zpack.tmp", dir);
	if (!z || !buf || !(fi = fopen(in, "rb")) || !(fo = fopen(out, "wb"))) {
		fprintf(stderr, "zpack: %s: cannot open, or out of memory\n", in);
		return 1;
	}
	while ((got = fread(buf, bs, per, fi)) > 0) {
		unsigned n = 0;
		const uint8_t *frame;
		size_t len;

		for (size_t k = 0; k < got; k++) {
			const struct ktrace_subbuf *h = (const void *)(buf + k * bs);

			if (h->magic != KTRACE_SUBBUF_MAGIC) {
				fprintf(stderr, "zpack: %s: slot %lu is not a sub-buffer\n", in, slots + k);
				return 1;
			}
			sb[n] = h;
			rec[n++] = count_records(h);
		}
		slots += got;
		len = kz_frame(z, sb, rec, n, &frame);
		if (!len || fwrite(frame, 1, len, fo) != len) {
			fprintf(stderr, "zpack: %s: cannot write a frame\n", out);
			return 1;
		}
		frames++;
	}
	before = ftell(fi);
	after = ftell(fo);
	fclose(fi);
	if (fclose(fo) || rename(out, in)) {
		fprintf(stderr, "zpack: %s: cannot replace it\n", in);
		return 1;
	}
	printf("%s %lu %lu %ld %ld\n", name, slots, frames, before, after);
	if (fix_written(dir, name, after))
		return 1;
	kz_enc_free(z);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned per = 16;
	int level = KZ_LEVEL_DEFAULT, o, rc = 0;
	struct dirent *d;
	uint32_t bs;
	DIR *dp;

	while ((o = getopt(argc, argv, "n:l:")) != -1) {
		if (o == 'n')
			per = (unsigned)atoi(optarg);
		else if (o == 'l')
			level = atoi(optarg);
		else
			return 2;
	}
	if (optind + 1 != argc || !per || per > KTRACE_ZFRAME_MAX) {
		fprintf(stderr, "usage: zpack [-n 1..%u] [-l LEVEL] DIR\n", KTRACE_ZFRAME_MAX);
		return 2;
	}
	if (!(bs = buf_size(argv[optind])) || !(dp = opendir(argv[optind]))) {
		fprintf(stderr, "zpack: %s: no buf-size in its metadata\n", argv[optind]);
		return 1;
	}
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, "trace", 5) && d->d_name[5] >= '0' && d->d_name[5] <= '9')
			rc |= pack(argv[optind], d->d_name, bs, per, level);
	closedir(dp);
	return rc;
}
