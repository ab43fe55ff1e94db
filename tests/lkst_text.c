/*
 * tests/lkst_text.c - the LKST maskset text parser of `ktrace lkst write`
 * (kclient/lkst_text.c, compiled in): accepted forms, every error with its
 * line and column, and the catalogue lookups.  The kernel side of masksets
 * is tested in the VM (kmod/tests/suite_lkst.sh).
 */
#include <string.h>
#include <strings.h>

#include "tap.h"
#include "kclient/lkst_text.c"

static int handlers(const char *tok, void *arg)
{
	unsigned v;

	(void)arg;
	if (!lkst_parse_number(tok, &v))
		return v == 1 || v == 2 || v == 255 ? (int)v : -1;
	if (!strcasecmp(tok, "DEFAULT"))
		return 1;
	if (!strcasecmp(tok, "pid_switch"))
		return 2;
	if (!strcasecmp(tok, "NOTHING"))
		return 255;
	return -1;
}

static int parse(const char *text, unsigned char *h, char *err)
{
	return lkst_text_parse(text, strlen(text), handlers, NULL, h, err, 128);
}

int main(void)
{
	unsigned char h[KTRACE_LKST_MAX_ID];
	char err[128];
	unsigned v;

	plan(22);
	is_int(parse("", h, err), 0, "empty text: a null maskset");
	is_int(parse("# comment\n\n  \t\n", h, err), 0, "comments and blank lines only");
	is_int(parse("0x01 1\t# PROCESS_CONTEXTSWITCH -> DEFAULT\n0x02 1\n", h, err), 2,
	       "`ktrace lkst read` output parses back");
	ok(h[1] == 1 && h[2] == 1 && h[3] == 0, "events 1 and 2 -> handler 1, nothing else");
	is_int(parse("process_contextswitch pid_switch\r\nSYSCALL_ENTRY nothing", h, err), 2,
	       "mnemonics and handler names in any case, CRLF, no final newline");
	ok(h[1] == 2 && h[0x30] == 255, "NOTHING is kept as 255");
	is_int(parse("48 DEFAULT\n", h, err), 1, "decimal event ids");
	ok(h[0x30] == 1, "48 is SYSCALL_ENTRY (0x30)");

	is_int(parse("0x01 1\nPROCESS_WAKEUP BOGUS\n", h, err), -1, "unknown handler");
	is_str(err, "2:16: unknown handler 'BOGUS'", "line and column of the handler");
	is_int(parse("0x99 1", h, err), -1, "event id not in the catalogue");
	is_str(err, "1:1: unknown event '0x99'", "named with its column");
	is_int(parse("  1 1 1\n", h, err), -1, "three tokens");
	is_str(err, "1:7: expected 'EVENT HANDLER'", "column of the extra token");
	is_int(parse("1\n", h, err), -1, "one token");
	is_int(parse("1 1\n0x1 1\n", h, err), -1, "an event twice");
	is_str(err, "2:1: event '0x1' appears twice", "reported on its second line");
	is_int(lkst_text_parse("1 1\n\0002 1", 8, handlers, NULL, h, err, 128), -1, "a NUL byte");
	is_int(parse("1 0x1g\n", h, err), -1, "a bad number is an unknown handler");
	ok(lkst_parse_number("0x", &v) < 0 && lkst_parse_number("", &v) < 0 &&
		   lkst_parse_number("4294967296", &v) < 0 && lkst_parse_number("-1", &v) < 0,
	   "numbers: empty, bare 0x, overflow and signs are refused");
	ok(lkst_parse_number("0X1F", &v) == 0 && v == 31, "0X1F is 31");
	is_str(lkst_event_name(KTRACE_LKST_PROCESS_WAKEUP), "PROCESS_WAKEUP", "event names");
	return done_testing();
}
