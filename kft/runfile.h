/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/runfile.h - layout of DIR/kft, the file through which a traced
 * program (lib/kft_setup.c) and `ktrace kft DIR ...` (cli/cmd_kft.c) share
 * one KFT run.
 *
 *   offset 0           struct kft_file (256 bytes)
 *   offset run_off     struct kft_run (kft/engine.h)
 *   offset blocks_off  nblocks struct kft_counters (128 bytes each), one per
 *                      writer thread; summed by kft_status_add()
 *   offset owners_off  nblocks u32: tid owning each block (0 = free)
 *
 * The file is mapped MAP_SHARED by the program, its forked children and
 * the ktrace command; everything in it is plain data without pointers.
 * Little-endian, host layout (the file is read on the machine that wrote
 * it, while or after the program runs).
 */
#ifndef KFT_RUNFILE_H
#define KFT_RUNFILE_H

#include "engine.h"

#define KFT_FILE_MAGIC 0x5354464bu /* "KFTS" */
#define KFT_FILE_VERSION 1u
#define KFT_FILE_NAME "kft"
#define KFT_STATUS_NAME "kft-status"
#define KFT_CALLSITES_NAME "callsites"

/**
 * struct kft_file - header of DIR/kft.
 * @pid:          the process that set the trace up (the run's owner: its exit
 *                ends the run; forked children share the file).
 * @status_epoch: the run epoch last written to DIR/kft-status.
 * @status_lock:  nonzero while a process rewrites DIR/kft-status.
 * @error:        the configuration error of a static run, NUL-terminated
 *                ("FILE:LINE:COL: message"; "" if none): the run then stays
 *                unconfigured and the program untraced.
 */
struct kft_file {
	kt_u32 magic;
	kt_u32 version;
	kt_u32 hdr_size;
	kt_u32 nblocks;
	kt_u32 run_off;
	kt_u32 blocks_off;
	kt_u32 owners_off;
	kt_u32 pid;
	kt_u64 status_epoch;
	kt_u32 status_lock;
	kt_u32 pad;
	kt_u64 reserved[4];
	char error[176];
};

_Static_assert(sizeof(struct kft_file) == 256, "kft file header is 256 bytes");

#endif /* KFT_RUNFILE_H */
