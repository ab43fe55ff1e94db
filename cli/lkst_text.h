/*
 * cli/lkst_text.h - the text form of an LKST maskset, as `ktrace lkst read`
 * prints it and `ktrace lkst write` takes it (cli/lkst_text.c): one
 * "EVENT HANDLER" pair per line, '#' to the end of the line is a comment,
 * blank lines are ignored.  EVENT is an event id of the catalogue
 * (include/ktrace/lkst.h; decimal, or hex with 0x) or its mnemonic (any
 * case); HANDLER a handler id (decimal or 0x hex) or name, resolved by the
 * caller.  Pure functions: no I/O, no global state (fuzz/fuzz_lkst_text.c).
 */
#ifndef KTRACE_CLI_LKST_TEXT_H
#define KTRACE_CLI_LKST_TEXT_H

#include <stddef.h>

#include "ktrace/lkst.h"

/**
 * lkst_handler_fn - resolves a handler token for lkst_text_parse().
 * @tok: the token (NUL-terminated, no spaces).
 * @arg: the caller's argument.
 * Return: the handler id 1..255, or -1 if there is no such handler.
 */
typedef int (*lkst_handler_fn)(const char *tok, void *arg);

/**
 * lkst_text_parse() - parse maskset text.
 * @text:    the input, @len bytes (need not end with a newline; a NUL byte
 *           is an error).
 * @hfn:     resolves HANDLER tokens; @harg is passed to it.
 * @handler: out, KTRACE_LKST_MAX_ID entries: the handler id of each event
 *           the text names (NOTHING, 255, included), 0 for the others.
 * @err:     out, on failure: "LINE:COLUMN: what" (1-based), @errlen bytes.
 *
 * Errors: a line with other than two tokens, an unknown event or handler,
 * an event named twice, a NUL byte, a line longer than 4096 bytes.
 * Thread-safe if @hfn is.
 * Return: the number of entries, or -1 (nothing in @handler is meaningful).
 */
int lkst_text_parse(const char *text, size_t len, lkst_handler_fn hfn, void *harg,
		    unsigned char *handler, char *err, size_t errlen);

/**
 * lkst_event_id() - the catalogue id of EVENT token @tok (id or mnemonic).
 * Return: 0..KTRACE_LKST_MAX_ID-1, or -1 if the catalogue has no such event.
 */
int lkst_event_id(const char *tok);

/** lkst_event_name() - the mnemonic of event @id, or NULL. */
const char *lkst_event_name(unsigned id);

/**
 * lkst_parse_number() - a whole decimal number, or hex with 0x/0X.
 * Return: 0 and *@v, or -1 (empty, other characters, over 2^32 - 1).
 */
int lkst_parse_number(const char *s, unsigned *v);

#endif /* KTRACE_CLI_LKST_TEXT_H */
