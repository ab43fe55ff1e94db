/*
 * kmod/tests/crashcheck.c - the crash-region checker of the VM crash test
 * (kmod/tests/suite_crash.sh) and of tests/crash_read.sh: reads a crash
 * region image (debugfs ktrace/crash/image) by the byte offsets of
 * docs/FORMAT.md ("Crash region"), without ktrace's code or structures,
 * and prints "key value" lines:
 *
 *   crashcheck [-c CHANNEL] IMAGE
 *
 *   region      ok, or what is wrong (then nothing else)
 *   boot-id     the 16 bytes in hex
 *   panic-ns    the panic stamp if its check holds, else 0; then
 *               panic-cpu and stop-ns (when the other CPUs were stopped)
 *   note        the note if its check holds, else -
 *   channels    channel names, comma separated
 *   records     with -c: records of CHANNEL whose check word matches
 *   torn        records whose check fails (the walk of that sub-buffer stops)
 *   bad-subbufs sub-buffer headers with a magic whose check fails
 *   last-ns     the latest full timestamp of a valid record (0: none)
 *   last-ns-cpuN  the same for ring N (rings with records only)
 *   tsback      valid records whose time goes back within a ring
 *
 * Exit status 0 (the keys say what is wrong), 2 for a usage error.
 * Static and plain libc for the guest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned char *img;
static size_t len;

static uint64_t u64at(size_t off)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | img[off + i];
	return v;
}

static uint32_t u32at(size_t off)
{
	return (uint32_t)(u64at(off) & 0xffffffffu);
}

static uint32_t u16at(size_t off)
{
	return img[off] | (uint32_t)img[off + 1] << 8;
}

/* The spec's mix: ((h ^ w) * K) ^ (((h ^ w) * K) >> 31). */
static uint64_t mix(uint64_t h, uint64_t w)
{
	uint64_t x = (h ^ w) * 0x9e3779b97f4a7c15ull;

	return x ^ (x >> 31);
}

static uint64_t fin(uint64_t h)
{
	return h == 0 ? 1 : h;
}

#define SEED 0x6b74726163652121ull

static uint64_t fold_at(uint64_t h, size_t off, size_t nwords)
{
	for (size_t i = 0; i < nwords; i++)
		h = mix(h, u64at(off + 8 * i));
	return h;
}

int main(int argc, char **argv)
{
	const char *want = NULL;
	FILE *f;
	size_t cap = 1 << 20;
	unsigned char *buf;
	uint64_t nchan, chan_off, records = 0, torn = 0, bad = 0, last = 0, tsback = 0;
	int c;

	while ((c = getopt(argc, argv, "c:")) != -1) {
		if (c != 'c') {
			fprintf(stderr, "usage: crashcheck [-c CHANNEL] IMAGE\n");
			return 2;
		}
		want = optarg;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: crashcheck [-c CHANNEL] IMAGE\n");
		return 2;
	}
	f = fopen(argv[optind], "rb");
	if (!f) {
		printf("region cannot-open\n");
		return 0;
	}
	buf = malloc(cap);
	for (;;) {
		size_t n;

		if (len == cap)
			buf = realloc(buf, cap *= 2);
		n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	img = buf;
	if (len < 4096 || u64at(0) != 0x314853415243544bull) {
		printf("region no-magic\n");
		return 0;
	}
	if (fin(fold_at(SEED ^ 1, 0, 13)) != u64at(104)) {
		printf("region bad-header-check\n");
		return 0;
	}
	if (u64at(16) != len) {
		printf("region size-mismatch\n");
		return 0;
	}
	printf("region ok\nboot-id ");
	for (int i = 0; i < 16; i++)
		printf("%02x", img[24 + i]);
	{
		uint64_t h = mix(mix(mix(SEED ^ 2, u64at(112)), u64at(120)), u64at(128));
		int good = u64at(112) && fin(h) == u64at(136);

		printf("\npanic-ns %llu\npanic-cpu %u\nstop-ns %llu\n",
		       (unsigned long long)(good ? u64at(112) : 0), good ? u32at(120) : 0,
		       (unsigned long long)(good ? u64at(128) : 0));
	}
	if (u64at(144) && fin(fold_at(SEED ^ 5, 152, 8)) == u64at(144) && img[152])
		printf("note %.63s\n", (const char *)img + 152);
	else
		printf("note -\n");
	nchan = u32at(56);
	chan_off = u32at(60);
	if (nchan > 8 || chan_off < 216 || chan_off + nchan * 256 > 4096) {
		printf("channels bad-table\n");
		return 0;
	}
	printf("channels ");
	for (uint64_t i = 0; i < nchan; i++)
		printf("%s%.63s", i ? "," : "", (const char *)img + chan_off + i * 256);
	printf("\n");
	for (uint64_t i = 0; i < nchan && want; i++) {
		size_t e = chan_off + i * 256;
		uint64_t flags, nrings, size, nr, roff;
		int ctx;

		if (strncmp((const char *)img + e, want, 64))
			continue;
		if (fin(fold_at(SEED ^ 3, e, 18)) != u64at(e + 144)) {
			printf("channel-check bad\n");
			return 0;
		}
		flags = u32at(e + 64);
		nrings = u32at(e + 68);
		size = u32at(e + 72);
		nr = u32at(e + 76);
		roff = u64at(e + 80);
		ctx = (flags & 1) != 0;
		if (size < 4096 || nr < 2 || roff + nrings * size * nr > len) {
			printf("channel-geometry bad\n");
			return 0;
		}
		for (uint64_t r = 0; r < nrings; r++) {
			uint64_t prev = 0, bestseq = 0, rlast = 0;
			/* walk the slots in seq order: find the smallest seq first */
			uint64_t *seqs = calloc(nr, sizeof(*seqs));
			int *valid = calloc(nr, sizeof(*valid));

			for (uint64_t s = 0; s < nr; s++) {
				size_t sb = roff + (r * nr + s) * size;
				uint64_t w0, h;

				if (u32at(sb) == 0)
					continue;
				w0 = (uint64_t)u32at(sb) | (uint64_t)u16at(sb + 4) << 32 |
				     (uint64_t)(u16at(sb + 6) & ~2u) << 48;
				h = mix(SEED ^ 6, w0);
				h = mix(h, u64at(sb + 8));
				h = mix(h, u64at(sb + 16));
				h = mix(h, u64at(sb + 24));
				h = mix(h, (uint64_t)u16at(sb + 60) | (uint64_t)u16at(sb + 62) << 16);
				if (u32at(sb) != 0x4253544bu || u16at(sb + 4) != 64 || !(u16at(sb + 6) & 8) ||
				    u64at(sb + 8) % nr != s || u16at(sb + 62) != r ||
				    (uint32_t)fin(h) != u32at(sb + 56)) {
					bad++;
					continue;
				}
				seqs[s] = u64at(sb + 8);
				valid[s] = 1;
			}
			for (;;) { /* next smallest seq above bestseq */
				uint64_t pick = nr, min = UINT64_MAX;
				size_t sb, off;
				uint64_t first, seqmix;

				for (uint64_t s = 0; s < nr; s++)
					if (valid[s] && seqs[s] < min)
						min = seqs[s], pick = s;
				if (pick == nr)
					break;
				valid[pick] = 0;
				bestseq = min;
				sb = roff + (r * nr + pick) * size;
				first = u64at(sb + 16);
				seqmix = mix(SEED ^ 7, bestseq);
				for (off = 64; off + 8 <= size;) {
					uint64_t hw = u64at(sb + off), ck, full;
					uint64_t nw = 1 + ctx + ((hw >> 40) & 15);
					int64_t d;

					if (hw == 0)
						break;
					if (((hw >> 44) & 15) == 0 || off + 8 * nw + 8 > size) {
						torn++;
						break;
					}
					ck = mix(seqmix, off);
					for (uint64_t j = 0; j < nw; j++)
						ck = mix(ck, u64at(sb + off + 8 * j));
					if (fin(ck) != u64at(sb + off + 8 * nw)) {
						torn++;
						break;
					}
					d = (int64_t)(((hw & 0xffffffffffull) - first) << 24) >> 24;
					full = first + (uint64_t)d;
					if (full < prev)
						tsback++;
					prev = full;
					if (full > last)
						last = full;
					if (full > rlast)
						rlast = full;
					records++;
					off += 8 * (nw + 1);
				}
			}
			free(seqs);
			free(valid);
			if (rlast)
				printf("last-ns-cpu%llu %llu\n", (unsigned long long)r, (unsigned long long)rlast);
		}
		printf("records %llu\ntorn %llu\nbad-subbufs %llu\nlast-ns %llu\ntsback %llu\n",
		       (unsigned long long)records, (unsigned long long)torn, (unsigned long long)bad,
		       (unsigned long long)last, (unsigned long long)tsback);
	}
	return 0;
}
