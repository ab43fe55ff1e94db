/*
 * cli/record_attach.h - `ktrace record -p PID`: attach to a running
 * process, load libktrace into it and patch its functions, and undo it at
 * the end (cli/record_attach.c; the library's side: lib/kft_attach.h).
 */
#ifndef KTRACE_CLI_RECORD_ATTACH_H
#define KTRACE_CLI_RECORD_ATTACH_H

#include <sys/types.h>

/**
 * struct rec_attach - what to attach: @pid the process, @lib the absolute
 * path of libktrace.so.0 to load into it, @settings the run's settings
 * ("NAME=VALUE\0"... ended by an empty string, @len bytes in all: the
 * environment a program record starts would have).  @idle(@arg), if set,
 * is called each time the threads are let run between two tries (of a
 * write a thread was inside, of retiring the run): the consumer drains
 * the session then, since threads may be waiting for it to make room.
 * @stopped(@arg), if set, is called at the detach once the run is stopped
 * and every thread is stopped outside libktrace, before the run is
 * retired: nothing writes then (the consumer's final drain, open calls).
 */
struct rec_attach {
	pid_t pid;
	const char *lib;
	const char *settings;
	size_t len;
	void (*idle)(void *arg);
	void (*stopped)(void *arg);
	void *arg;
};

/**
 * struct rec_attach_result - @threads stopped and resumed; @planned
 * entries the library could patch, @patched of them written, @inside left
 * alone because a thread was stopped inside their first bytes; @hooks GOT
 * slots of compiled hooks pointed at libktrace's; @taken_over 1 when an
 * earlier attach whose record had died was undone first; @adopted calls
 * of patched functions that were open at the attach, traced from then on
 * (flagged unfinished: their entry was not seen).
 */
struct rec_attach_result {
	unsigned threads, planned, patched, inside, hooks, taken_over, adopted;
};

/**
 * rec_attach_become() - root attaching to another user's process: become
 * that user (@uid, @gid and the supplementary groups @groups[@ngroups],
 * as the process has them), keeping only CAP_SYS_PTRACE, so that the
 * session, the trace directory and everything the library writes in the
 * process belong to the process's owner while ptrace still works (Yama
 * and non-dumpable processes included).  The process stays non-dumpable,
 * so the user cannot take that capability over through ptrace.
 * Return: 0, or -errno (@err says which step failed).
 */
int rec_attach_become(uid_t uid, gid_t gid, const gid_t *groups, int ngroups, char *err,
		      size_t errlen);

struct rec_attach_state;

/**
 * rec_attach_start() - stop every thread of @a->pid (ptrace), load
 * libktrace into it, set the run up, patch the planned entries, resume.
 * Return: the state for rec_attach_stop(), or NULL with one line in @err
 * (the process resumed untouched, except when a call into it faulted:
 * @err says so).
 */
struct rec_attach_state *rec_attach_start(const struct rec_attach *a, struct rec_attach_result *res,
					  char *err, size_t errlen);

/**
 * rec_attach_stop() - stop every thread again, put the entries' old bytes
 * back, stop the run in the process, resume it and detach.  Return: 0, or
 * -1 with one line in @err.
 */
int rec_attach_stop(struct rec_attach_state *s, char *err, size_t errlen);

/** rec_attach_free() - release @s (after rec_attach_stop(), or when the process has ended). */
void rec_attach_free(struct rec_attach_state *s);

#endif
