/*
 * fuzz/fuzz_reader.h - the input format of fuzz_reader: a trace directory
 * packed into one buffer, so libFuzzer can mutate every file of it.
 *
 * The input is a sequence of sections, each one byte naming the file
 * (index into fuzz_files[], modulo its size), a 3-byte little-endian
 * length, then that many bytes (clipped at the end of the input).  A file
 * named twice keeps its first section.  fuzz/pack_trace.c builds seeds
 * from trace directories in this format.
 */
#ifndef KTRACE_FUZZ_READER_H
#define KTRACE_FUZZ_READER_H

static const char *const fuzz_files[] = {
	"metadata", "control", "threads", "trace0", "trace1", "trace2", "cpu0", "cpu1",
	"kft", /* KFT's run file: origin and the counter blocks' missed calls */
};
#define FUZZ_NFILES (sizeof(fuzz_files) / sizeof(fuzz_files[0]))

#endif
