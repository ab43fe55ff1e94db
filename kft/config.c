/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * kft/config.c - parser and printer of the KFT configuration language.
 *
 * The language (seed 002, Appendix A; docs/KFT-CONFIG.md) is a list of
 * words separated by blanks and newlines; '#' starts a comment that runs to
 * the end of the line.  A configuration is
 *
 *     [new] [begin] statement... [end]
 *
 * where 'end' is required exactly when 'begin' was given.  Statements:
 *
 *     trigger start|stop entry FUNC | exit FUNC | time USECS
 *     filter mintime USECS | maxtime USECS | noints | onlyints
 *     filter funclist FUNC... fend
 *     filter notrace FUNC... fend
 *     filter depth N
 *     watch stack BYTES | worst-stack BYTES
 *     logentries N
 *     autorepeat
 *     prime
 *
 * FUNC is a name (given to the caller's resolver), a shell pattern (given
 * to the caller's glob function: every match in a list, exactly one in a
 * trigger) or a 0x address.  The
 * statement words (new begin end trigger filter watch logentries
 * autorepeat prime fend) are reserved: they cannot name a function, which
 * is how a funclist missing its 'fend' is caught.
 *
 * The parser is a loop over tokens with one token of lookahead; it stops at
 * the first error and reports its line, column and what was expected.  A
 * missing argument at the end of a line is reported just after the word
 * that wanted it; a wrong argument is reported at the argument itself.
 */
#include "config.h"
#include "text.h"

struct kft_tok {
	const char *s; /* NULL at end of input */
	kt_u32 n;
	kt_u32 line, col;
};

struct kft_pos {
	kt_u32 line, col; /* line 0: not seen */
};

/* Statements that may appear once; their first position, for messages. */
enum { SEEN_START, SEEN_STOP, SEEN_MINTIME, SEEN_MAXTIME, SEEN_NOINTS, SEEN_ONLYINTS,
       SEEN_WATCH, SEEN_LOGENTRIES, SEEN_AUTOREPEAT, SEEN_PRIME, SEEN_DEPTH, SEEN_N };

struct kft_parser {
	const char *text;
	kt_u64 len, pos;
	kt_u32 line, col;          /* position of text[pos] */
	kt_u32 prev_line, prev_col; /* just after the previous token */
	struct kft_tok cur;
	struct kft_config *cfg;
	kft_resolve_fn resolve;
	kft_glob_fn glob;
	void *arg;
	kt_u64 max_logentries;
	struct kft_error *err;
	struct kft_buf eb;
	int failed;
	struct kft_pos seen[SEEN_N];
};

static const char *const reserved[] = {
	"new", "begin", "end", "trigger", "filter", "watch", "logentries", "autorepeat", "prime", "fend",
};

void kft_config_init(struct kft_config *cfg)
{
	unsigned char *p = (unsigned char *)cfg;

	for (kt_u64 i = 0; i < sizeof(*cfg); i++)
		p[i] = 0;
}

/* ---- tokens ---------------------------------------------------------- */

static int tok_is(const struct kft_tok *t, const char *word)
{
	kt_u32 n = kft_strlen(word);

	return t->s && t->n == n && kft_memeq(t->s, word, n);
}

static int tok_reserved(const struct kft_tok *t)
{
	for (unsigned i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (tok_is(t, reserved[i]))
			return 1;
	return 0;
}

/* Begin an error at @line:@col; the caller appends the message. */
static struct kft_buf *fail_at(struct kft_parser *p, kt_u32 line, kt_u32 col)
{
	if (!p->failed) {
		p->failed = 1;
		p->err->line = line;
		p->err->col = col;
		kft_buf_init(&p->eb, p->err->msg, KFT_ERRMSG_MAX);
		return &p->eb;
	}
	/* A second error: write it nowhere. */
	kft_buf_init(&p->eb, (char *)0, 0);
	return &p->eb;
}

static struct kft_buf *fail_tok(struct kft_parser *p, const struct kft_tok *t)
{
	return fail_at(p, t->line, t->col);
}

static void buf_tok(struct kft_buf *b, const struct kft_tok *t)
{
	kft_buf_quote(b, t->s, t->n);
}

static void buf_pos(struct kft_buf *b, kt_u32 line, kt_u32 col)
{
	kft_buf_u64(b, line);
	kft_buf_char(b, ':');
	kft_buf_u64(b, col);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Read the next token into p->cur (s == NULL at end of input). */
static void advance(struct kft_parser *p)
{
	if (p->cur.s) {
		p->prev_line = p->cur.line;
		p->prev_col = p->cur.col + p->cur.n;
	}
	p->cur.s = NULL;
	p->cur.n = 0;
	while (p->pos < p->len && !p->failed) {
		unsigned char c = (unsigned char)p->text[p->pos];

		if (c == '\n') {
			p->pos++;
			p->line++;
			p->col = 1;
		} else if (is_blank((char)c)) {
			p->pos++;
			p->col++;
		} else if (c == '#') {
			while (p->pos < p->len && p->text[p->pos] != '\n') {
				p->pos++;
				p->col++;
			}
		} else if (c < 0x20 || c == 0x7f) {
			struct kft_buf *b = fail_at(p, p->line, p->col);

			kft_buf_str(b, "unexpected control character ");
			kft_buf_hex(b, c);
		} else {
			break;
		}
	}
	p->cur.line = p->line;
	p->cur.col = p->col;
	if (p->pos >= p->len || p->failed)
		return;
	p->cur.s = p->text + p->pos;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->text[p->pos];

		if (c <= 0x20 || c == 0x7f || c == '#')
			break;
		p->pos++;
		p->col++;
		p->cur.n++;
	}
}

/*
 * The current token is not the argument @what that word @after wanted.  If
 * the input ended, or the next word is on a later line, the argument is
 * missing: point just after @after.  Otherwise point at the wrong word.
 */
static void expected(struct kft_parser *p, const char *what, const char *after)
{
	struct kft_buf *b;

	if (!p->cur.s || p->cur.line != p->prev_line) {
		b = fail_at(p, p->prev_line, p->prev_col);
		kft_buf_str(b, "expected ");
		kft_buf_str(b, what);
		kft_buf_str(b, " after '");
		kft_buf_str(b, after);
		kft_buf_char(b, '\'');
		return;
	}
	b = fail_tok(p, &p->cur);
	kft_buf_str(b, "expected ");
	kft_buf_str(b, what);
	kft_buf_str(b, " after '");
	kft_buf_str(b, after);
	kft_buf_str(b, "', found ");
	buf_tok(b, &p->cur);
}

/* Remember that statement @which was seen at @t; refuse a second one. */
static int once(struct kft_parser *p, int which, const struct kft_tok *t, const char *name)
{
	struct kft_pos *s = &p->seen[which];

	if (s->line) {
		struct kft_buf *b = fail_tok(p, t);

		kft_buf_str(b, "duplicate '");
		kft_buf_str(b, name);
		kft_buf_str(b, "' (the first is at ");
		buf_pos(b, s->line, s->col);
		kft_buf_char(b, ')');
		return -1;
	}
	s->line = t->line;
	s->col = t->col;
	return 0;
}

/* ---- arguments ------------------------------------------------------- */

/* A decimal number argument of word @after. */
static int number(struct kft_parser *p, const char *what, const char *after, kt_u64 *out)
{
	const struct kft_tok *t = &p->cur;
	kt_u64 v = 0;

	if (!t->s || t->line != p->prev_line || !(t->s[0] >= '0' && t->s[0] <= '9')) {
		expected(p, what, after);
		return -1;
	}
	for (kt_u32 i = 0; i < t->n; i++) {
		char c = t->s[i];
		kt_u64 d;

		if (c < '0' || c > '9') {
			expected(p, what, after);
			return -1;
		}
		d = (kt_u64)(c - '0');
		if (v > (~(kt_u64)0 - d) / 10) {
			struct kft_buf *b = fail_tok(p, t);

			kft_buf_str(b, "number ");
			buf_tok(b, t);
			kft_buf_str(b, " is too large");
			return -1;
		}
		v = v * 10 + d;
	}
	*out = v;
	advance(p);
	return 0;
}

static int is_pattern(const struct kft_tok *t)
{
	for (kt_u32 i = 0; i < t->n; i++)
		if (t->s[i] == '*' || t->s[i] == '?' || t->s[i] == '[')
			return 1;
	return 0;
}

/*
 * function_address - the current token, 0x followed by 1 to 16 hex
 * digits, as a function address into @out (*@n = 1).  Returns 0, or -1
 * with the error set (a bad address, or 0x0).
 */
static int function_address(struct kft_parser *p, kt_u64 *out, kt_u32 *n)
{
	const struct kft_tok *t = &p->cur;
	struct kft_buf *b;
	kt_u64 v = 0;
	kt_u32 i;

	for (i = 2; i < t->n; i++) {
		char c = t->s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (i - 2 >= 16)
			break;
		v = (v << 4) | d;
	}
	if (t->n == 2 || i != t->n) {
		b = fail_tok(p, t);
		kft_buf_str(b, "bad address ");
		buf_tok(b, t);
		kft_buf_str(b, ": expected 0x and 1 to 16 hex digits");
		return -1;
	}
	if (v == 0) {
		b = fail_tok(p, t);
		kft_buf_str(b, "function address 0x0 is not valid");
		return -1;
	}
	*out = v;
	*n = 1;
	advance(p);
	return 0;
}

/*
 * function_pattern - the current token, a glob pattern, resolved by the
 * glob function into @out (at most @room addresses; *@n of them).  A
 * trigger (@room 1) needs exactly one match.  Returns 0, or -1 with the
 * error set.
 */
static int function_pattern(struct kft_parser *p, kt_u64 *out, kt_u32 room, kt_u32 *n)
{
	const struct kft_tok *t = &p->cur;
	struct kft_buf *b;
	int found;

	if (!p->glob) {
		b = fail_tok(p, t);
		kft_buf_str(b, "function pattern ");
		buf_tok(b, t);
		kft_buf_str(b, " cannot be resolved here: name the functions");
		return -1;
	}
	found = p->glob(p->arg, t->s, t->n, out, room);
	if (found <= 0) {
		b = fail_tok(p, t);
		kft_buf_str(b, "no function matches ");
		buf_tok(b, t);
		return -1;
	}
	if (room == 1 && found > 1) {
		b = fail_tok(p, t);
		kft_buf_str(b, "pattern ");
		buf_tok(b, t);
		kft_buf_str(b, " matches ");
		kft_buf_u64(b, (kt_u64)found);
		kft_buf_str(b, " functions: a trigger needs exactly one");
		return -1;
	}
	if ((kt_u32)found > room) {
		b = fail_tok(p, t);
		kft_buf_str(b, "pattern ");
		buf_tok(b, t);
		kft_buf_str(b, " matches ");
		kft_buf_u64(b, (kt_u64)found);
		kft_buf_str(b, " functions: more than the list has room for (");
		kft_buf_u64(b, KFT_FUNCLIST_MAX);
		kft_buf_str(b, " in all)");
		return -1;
	}
	*n = (kt_u32)found;
	advance(p);
	return 0;
}

/*
 * function_name - the current token, a function name, resolved by the
 * resolver into @out (*@n = 1).  Returns 0, or -1 with the error set
 * (no resolver, or an unknown name).
 */
static int function_name(struct kft_parser *p, kt_u64 *out, kt_u32 *n)
{
	const struct kft_tok *t = &p->cur;
	struct kft_buf *b;

	if (!p->resolve) {
		b = fail_tok(p, t);
		kft_buf_str(b, "function name ");
		buf_tok(b, t);
		kft_buf_str(b, " cannot be resolved here: give its 0x address");
		return -1;
	}
	*out = 0;
	if (p->resolve(p->arg, t->s, t->n, out) < 0 || *out == 0) {
		b = fail_tok(p, t);
		kft_buf_str(b, "unknown function ");
		buf_tok(b, t);
		return -1;
	}
	*n = 1;
	advance(p);
	return 0;
}

/*
 * A function argument: a name given to the resolver, a pattern given to
 * the glob function, or 0x followed by 1 to 16 hex digits.  @line_bound:
 * the argument must be on the same line as @after (triggers); list
 * entries may continue over lines.  The addresses go to @out: one for a
 * name, an address or (in a trigger, @room 1) a pattern; every match of
 * a pattern in a list, at most @room; *@n says how many were stored.
 */
static int function(struct kft_parser *p, const char *after, int line_bound, kt_u64 *out,
		    kt_u32 room, kt_u32 *n)
{
	const struct kft_tok *t = &p->cur;

	*n = 0;
	if (!t->s || (line_bound && t->line != p->prev_line) || tok_reserved(t) ||
	    (t->s[0] >= '0' && t->s[0] <= '9' && !(t->n >= 2 && t->s[0] == '0' &&
						    (t->s[1] == 'x' || t->s[1] == 'X')))) {
		expected(p, "a function name or 0x address", after);
		return -1;
	}
	if (t->s[0] == '0')
		return function_address(p, out, n);
	if (is_pattern(t))
		return function_pattern(p, out, room, n);
	return function_name(p, out, n);
}

/* ---- statements ------------------------------------------------------ */

static int trigger(struct kft_parser *p)
{
	struct kft_tok kw = p->cur;
	struct kft_trigger *trig;
	int is_start;
	kt_u32 n;

	advance(p);
	is_start = tok_is(&p->cur, "start");
	if ((!is_start && !tok_is(&p->cur, "stop")) || p->cur.line != p->prev_line) {
		expected(p, "'start' or 'stop'", "trigger");
		return -1;
	}
	if (once(p, is_start ? SEEN_START : SEEN_STOP, &kw,
		 is_start ? "trigger start" : "trigger stop") < 0)
		return -1;
	trig = is_start ? &p->cfg->start : &p->cfg->stop;
	advance(p);
	if (p->cur.line == p->prev_line && tok_is(&p->cur, "entry")) {
		advance(p);
		trig->kind = KFT_TRIG_ENTRY;
		return function(p, "entry", 1, &trig->arg, 1, &n);
	}
	if (p->cur.line == p->prev_line && tok_is(&p->cur, "exit")) {
		advance(p);
		trig->kind = KFT_TRIG_EXIT;
		return function(p, "exit", 1, &trig->arg, 1, &n);
	}
	if (p->cur.line == p->prev_line && tok_is(&p->cur, "time")) {
		advance(p);
		trig->kind = KFT_TRIG_TIME;
		return number(p, "a time in microseconds", "time", &trig->arg);
	}
	expected(p, "'entry', 'exit' or 'time'", is_start ? "start" : "stop");
	return -1;
}

/* mintime must not exceed a nonzero maxtime: nothing would be kept. */
static int check_times(struct kft_parser *p, const struct kft_tok *kw)
{
	const struct kft_config *c = p->cfg;

	if ((c->flags & KFT_CF_MINTIME) && (c->flags & KFT_CF_MAXTIME) && c->maxtime_us &&
	    c->mintime_us > c->maxtime_us) {
		struct kft_buf *b = fail_tok(p, kw);

		kft_buf_str(b, "mintime ");
		kft_buf_u64(b, c->mintime_us);
		kft_buf_str(b, " is greater than maxtime ");
		kft_buf_u64(b, c->maxtime_us);
		kft_buf_str(b, ": no call could be kept");
		return -1;
	}
	return 0;
}

/* The functions of a funclist or notrace list, up to 'fend' (@kw: the list's keyword). */
static int funclist(struct kft_parser *p, const struct kft_tok *kw)
{
	struct kft_config *c = p->cfg;
	int is_notrace = tok_is(kw, "notrace");
	kt_u64 *list = is_notrace ? c->notrace_fns : c->funcs;
	kt_u32 *count = is_notrace ? &c->nnotrace : &c->nfuncs, given = 0, n;
	const char *name = is_notrace ? "notrace list" : "funclist";
	struct kft_buf *b;

	c->flags |= is_notrace ? KFT_CF_NOTRACE : KFT_CF_FUNCLIST;
	for (;;) {
		if (!p->cur.s) {
			b = fail_at(p, p->cur.line, p->cur.col);
			kft_buf_str(b, "expected 'fend' to close the ");
			kft_buf_str(b, name);
			kft_buf_str(b, " begun at ");
			buf_pos(b, kw->line, kw->col);
			return -1;
		}
		if (tok_is(&p->cur, "fend")) {
			if (!given) {
				b = fail_tok(p, &p->cur);
				kft_buf_str(b, "expected at least one function before 'fend'");
				return -1;
			}
			advance(p);
			return 0;
		}
		if (tok_reserved(&p->cur)) {
			b = fail_tok(p, &p->cur);
			kft_buf_str(b, "expected 'fend' before ");
			buf_tok(b, &p->cur);
			kft_buf_str(b, " (");
			kft_buf_str(b, name);
			kft_buf_str(b, " begun at ");
			buf_pos(b, kw->line, kw->col);
			kft_buf_char(b, ')');
			return -1;
		}
		if (*count >= KFT_FUNCLIST_MAX) {
			b = fail_tok(p, &p->cur);
			kft_buf_str(b, is_notrace ? "too many functions in notrace lists (at most "
					       : "too many functions in funclists (at most ");
			kft_buf_u64(b, KFT_FUNCLIST_MAX);
			kft_buf_char(b, ')');
			return -1;
		}
		if (function(p, name, 0, &list[*count], KFT_FUNCLIST_MAX - *count, &n) < 0)
			return -1;
		*count += n;
		given++;
	}
}

static int filter(struct kft_parser *p)
{
	struct kft_config *c = p->cfg;
	struct kft_tok kw;

	advance(p);
	kw = p->cur;
	if (p->cur.line != p->prev_line) {
		expected(p, "mintime, maxtime, noints, onlyints, funclist, notrace or depth", "filter");
		return -1;
	}
	if (tok_is(&kw, "depth")) {
		struct kft_tok num;
		kt_u64 depth;

		if (once(p, SEEN_DEPTH, &kw, "filter depth") < 0)
			return -1;
		advance(p);
		num = p->cur;
		if (number(p, "a depth (number of levels)", "depth", &depth) < 0)
			return -1;
		if (depth == 0 || depth > 65535) {
			struct kft_buf *b = fail_tok(p, &num);

			kft_buf_str(b, "depth must be 1 to 65535");
			return -1;
		}
		c->max_depth = (kt_u32)depth;
		c->flags |= KFT_CF_DEPTH;
		return 0;
	}
	if (tok_is(&kw, "mintime") || tok_is(&kw, "maxtime")) {
		int min = tok_is(&kw, "mintime");

		if (once(p, min ? SEEN_MINTIME : SEEN_MAXTIME, &kw,
			 min ? "filter mintime" : "filter maxtime") < 0)
			return -1;
		advance(p);
		if (number(p, "a time in microseconds", min ? "mintime" : "maxtime",
			   min ? &c->mintime_us : &c->maxtime_us) < 0)
			return -1;
		c->flags |= min ? KFT_CF_MINTIME : KFT_CF_MAXTIME;
		return check_times(p, &kw);
	}
	if (tok_is(&kw, "noints") || tok_is(&kw, "onlyints")) {
		int no = tok_is(&kw, "noints");
		const struct kft_pos *other = &p->seen[no ? SEEN_ONLYINTS : SEEN_NOINTS];

		if (once(p, no ? SEEN_NOINTS : SEEN_ONLYINTS, &kw,
			 no ? "filter noints" : "filter onlyints") < 0)
			return -1;
		if (other->line) {
			struct kft_buf *b = fail_tok(p, &kw);

			kft_buf_str(b, no ? "'noints' contradicts 'onlyints' at "
					  : "'onlyints' contradicts 'noints' at ");
			buf_pos(b, other->line, other->col);
			return -1;
		}
		c->flags |= no ? KFT_CF_NOINTS : KFT_CF_ONLYINTS;
		advance(p);
		return 0;
	}
	if (tok_is(&kw, "funclist") || tok_is(&kw, "notrace")) {
		advance(p);
		return funclist(p, &kw);
	}
	expected(p, "mintime, maxtime, noints, onlyints, funclist, notrace or depth", "filter");
	return -1;
}

static int watch(struct kft_parser *p)
{
	struct kft_config *c = p->cfg;
	struct kft_tok kw = p->cur;
	int worst;

	advance(p);
	worst = tok_is(&p->cur, "worst-stack");
	if ((!worst && !tok_is(&p->cur, "stack")) || p->cur.line != p->prev_line) {
		expected(p, "'stack' or 'worst-stack'", "watch");
		return -1;
	}
	if (once(p, SEEN_WATCH, &kw, "watch") < 0)
		return -1;
	advance(p);
	c->watch = worst ? KFT_WATCH_WORST_STACK : KFT_WATCH_STACK;
	return number(p, "a number of bytes", worst ? "worst-stack" : "stack", &c->watch_threshold);
}

static int logentries(struct kft_parser *p)
{
	struct kft_config *c = p->cfg;
	struct kft_tok kw = p->cur;

	struct kft_tok num;

	if (once(p, SEEN_LOGENTRIES, &kw, "logentries") < 0)
		return -1;
	advance(p);
	num = p->cur;
	if (number(p, "a number of entries", "logentries", &c->logentries) < 0)
		return -1;
	if (c->logentries == 0) {
		struct kft_buf *b = fail_tok(p, &num);

		kft_buf_str(b, "logentries must be at least 1");
		return -1;
	}
	if (p->max_logentries && c->logentries > p->max_logentries) {
		struct kft_buf *b = fail_tok(p, &num);

		kft_buf_str(b, "logentries ");
		kft_buf_u64(b, c->logentries);
		kft_buf_str(b, " is more than the log can hold (at most ");
		kft_buf_u64(b, p->max_logentries);
		kft_buf_str(b, " entries)");
		return -1;
	}
	c->flags |= KFT_CF_LOGENTRIES;
	return 0;
}

static int statement(struct kft_parser *p, int in_block)
{
	struct kft_tok kw = p->cur;
	struct kft_buf *b;

	if (tok_is(&kw, "trigger"))
		return trigger(p);
	if (tok_is(&kw, "filter"))
		return filter(p);
	if (tok_is(&kw, "watch"))
		return watch(p);
	if (tok_is(&kw, "logentries"))
		return logentries(p);
	if (tok_is(&kw, "autorepeat") || tok_is(&kw, "prime")) {
		int auto_ = tok_is(&kw, "autorepeat");

		if (once(p, auto_ ? SEEN_AUTOREPEAT : SEEN_PRIME, &kw,
			 auto_ ? "autorepeat" : "prime") < 0)
			return -1;
		p->cfg->flags |= auto_ ? KFT_CF_AUTOREPEAT : KFT_CF_PRIME;
		advance(p);
		return 0;
	}
	b = fail_tok(p, &kw);
	if (tok_is(&kw, "fend")) {
		kft_buf_str(b, "'fend' without 'filter funclist' or 'filter notrace'");
		return -1;
	}
	kft_buf_str(b, "unknown keyword ");
	buf_tok(b, &kw);
	kft_buf_str(b, in_block ? ": expected trigger, filter, watch, logentries, autorepeat, prime or end"
				: ": expected trigger, filter, watch, logentries, autorepeat or prime");
	return -1;
}

int kft_config_parse(struct kft_config *cfg, const char *text, kt_u64 len, kft_resolve_fn resolve,
		     void *arg, struct kft_error *err)
{
	struct kft_names names = { resolve, (kft_glob_fn)0, arg, 0 };

	return kft_config_parse_names(cfg, text, len, &names, err);
}

int kft_config_parse_names(struct kft_config *cfg, const char *text, kt_u64 len,
			   const struct kft_names *names, struct kft_error *err)
{
	struct kft_parser p;
	struct kft_tok begin = { NULL, 0, 0, 0 };
	struct kft_buf *b;
	unsigned char *z = (unsigned char *)&p;

	for (kt_u64 i = 0; i < sizeof(p); i++)
		z[i] = 0;
	kft_config_init(cfg);
	err->line = 0;
	err->col = 0;
	err->msg[0] = '\0';
	p.text = text;
	p.len = text ? len : 0;
	p.line = p.col = 1;
	p.prev_line = p.prev_col = 1;
	p.cfg = cfg;
	p.resolve = names->resolve;
	p.glob = names->glob;
	p.arg = names->arg;
	p.max_logentries = names->max_logentries;
	p.err = err;

	advance(&p);
	if (tok_is(&p.cur, "new")) {
		cfg->flags |= KFT_CF_NEW;
		advance(&p);
	}
	if (tok_is(&p.cur, "begin")) {
		begin = p.cur;
		cfg->flags |= KFT_CF_BLOCK;
		advance(&p);
	}
	while (!p.failed) {
		if (!p.cur.s) {
			if (begin.s) {
				b = fail_at(&p, p.cur.line, p.cur.col);
				kft_buf_str(b, "expected 'end' to close the block begun at ");
				buf_pos(b, begin.line, begin.col);
			}
			break;
		}
		if (tok_is(&p.cur, "end")) {
			if (!begin.s) {
				b = fail_tok(&p, &p.cur);
				kft_buf_str(b, "'end' without 'begin'");
				break;
			}
			advance(&p);
			if (p.cur.s) {
				b = fail_tok(&p, &p.cur);
				kft_buf_str(b, "expected nothing after 'end', found ");
				buf_tok(b, &p.cur);
			}
			break;
		}
		if (tok_is(&p.cur, "begin")) {
			b = fail_tok(&p, &p.cur);
			if (begin.s) {
				kft_buf_str(b, "'begin' inside the block begun at ");
				buf_pos(b, begin.line, begin.col);
			} else {
				kft_buf_str(b, "'begin' must come before every statement");
			}
			break;
		}
		if (tok_is(&p.cur, "new")) {
			b = fail_tok(&p, &p.cur);
			kft_buf_str(b, "'new' must be the first word of a configuration");
			break;
		}
		statement(&p, begin.s != NULL);
	}
	if (p.failed) {
		kft_config_init(cfg);
		return -KFT_EINVAL;
	}
	return 0;
}

kt_u32 kft_error_format(char *buf, kt_u32 size, const char *file, const struct kft_error *e)
{
	struct kft_buf b;

	kft_buf_init(&b, buf, size);
	if (file) {
		kft_buf_str(&b, file);
		kft_buf_char(&b, ':');
	}
	buf_pos(&b, e->line, e->col);
	kft_buf_str(&b, ": ");
	kft_buf_str(&b, e->msg);
	return b.len;
}

/* ---- combining ------------------------------------------------------- */

static int clash(struct kft_error *err, const char *what)
{
	struct kft_buf b;

	err->line = err->col = 0;
	kft_buf_init(&b, err->msg, KFT_ERRMSG_MAX);
	kft_buf_str(&b, what);
	return -KFT_EINVAL;
}

int kft_config_merge(struct kft_config *dst, const struct kft_config *src, struct kft_error *err)
{
	kt_u32 f = src->flags, d = dst->flags;

	if (src->start.kind && dst->start.kind)
		return clash(err, "'trigger start' given twice");
	if (src->stop.kind && dst->stop.kind)
		return clash(err, "'trigger stop' given twice");
	if (f & d & KFT_CF_MINTIME)
		return clash(err, "'filter mintime' given twice");
	if (f & d & KFT_CF_MAXTIME)
		return clash(err, "'filter maxtime' given twice");
	if (f & d & KFT_CF_DEPTH)
		return clash(err, "'filter depth' given twice");
	if (f & d & KFT_CF_LOGENTRIES)
		return clash(err, "'logentries' given twice");
	if (src->watch && dst->watch)
		return clash(err, "'watch' given twice");
	if (((f | d) & KFT_CF_NOINTS) && ((f | d) & KFT_CF_ONLYINTS))
		return clash(err, "'noints' contradicts 'onlyints'");
	if (dst->nfuncs + src->nfuncs > KFT_FUNCLIST_MAX)
		return clash(err, "too many functions in funclists (at most 256)");
	if (dst->nnotrace + src->nnotrace > KFT_FUNCLIST_MAX)
		return clash(err, "too many functions in notrace lists (at most 256)");
	if ((((f & KFT_CF_MINTIME) && (d & KFT_CF_MAXTIME) && dst->maxtime_us &&
	      src->mintime_us > dst->maxtime_us)) ||
	    ((d & KFT_CF_MINTIME) && (f & KFT_CF_MAXTIME) && src->maxtime_us &&
	     dst->mintime_us > src->maxtime_us))
		return clash(err, "mintime is greater than maxtime: no call could be kept");
	if (src->start.kind)
		dst->start = src->start;
	if (src->stop.kind)
		dst->stop = src->stop;
	if (f & KFT_CF_MINTIME)
		dst->mintime_us = src->mintime_us;
	if (f & KFT_CF_MAXTIME)
		dst->maxtime_us = src->maxtime_us;
	if (f & KFT_CF_DEPTH)
		dst->max_depth = src->max_depth;
	if (f & KFT_CF_LOGENTRIES)
		dst->logentries = src->logentries;
	if (src->watch) {
		dst->watch = src->watch;
		dst->watch_threshold = src->watch_threshold;
	}
	for (kt_u32 i = 0; i < src->nfuncs; i++)
		dst->funcs[dst->nfuncs++] = src->funcs[i];
	for (kt_u32 i = 0; i < src->nnotrace; i++)
		dst->notrace_fns[dst->nnotrace++] = src->notrace_fns[i];
	dst->flags = d | (f & ~(KFT_CF_NEW | KFT_CF_BLOCK));
	return 0;
}

/* ---- printing -------------------------------------------------------- */

static void put_func(struct kft_buf *b, kt_u64 addr, kft_name_fn name, void *arg)
{
	char tmp[128];

	if (name && name(arg, addr, tmp, sizeof(tmp)) > 0) {
		tmp[sizeof(tmp) - 1] = '\0';
		kft_buf_str(b, tmp);
	} else {
		kft_buf_hex(b, addr);
	}
}

static void put_trigger(struct kft_buf *b, const char *indent, const char *which,
			const struct kft_trigger *t, kft_name_fn name, void *arg)
{
	if (t->kind == KFT_TRIG_NONE)
		return;
	kft_buf_str(b, indent);
	kft_buf_str(b, "trigger ");
	kft_buf_str(b, which);
	if (t->kind == KFT_TRIG_TIME) {
		kft_buf_str(b, " time ");
		kft_buf_u64(b, t->arg);
	} else {
		kft_buf_str(b, t->kind == KFT_TRIG_ENTRY ? " entry " : " exit ");
		put_func(b, t->arg, name, arg);
	}
	kft_buf_char(b, '\n');
}

kt_u32 kft_config_format(const struct kft_config *cfg, char *buf, kt_u32 size, const char *indent,
			 kft_name_fn name, void *arg)
{
	struct kft_buf b;

	kft_buf_init(&b, buf, size);
	kft_buf_str(&b, "new\nbegin\n");
	put_trigger(&b, indent, "start", &cfg->start, name, arg);
	put_trigger(&b, indent, "stop", &cfg->stop, name, arg);
	if (cfg->flags & KFT_CF_MINTIME) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter mintime ");
		kft_buf_u64(&b, cfg->mintime_us);
		kft_buf_char(&b, '\n');
	}
	if (cfg->flags & KFT_CF_MAXTIME) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter maxtime ");
		kft_buf_u64(&b, cfg->maxtime_us);
		kft_buf_char(&b, '\n');
	}
	if (cfg->flags & KFT_CF_NOINTS) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter noints\n");
	}
	if (cfg->flags & KFT_CF_ONLYINTS) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter onlyints\n");
	}
	if ((cfg->flags & KFT_CF_FUNCLIST) && cfg->nfuncs) {
		kt_u32 n = cfg->nfuncs > KFT_FUNCLIST_MAX ? KFT_FUNCLIST_MAX : cfg->nfuncs;

		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter funclist");
		for (kt_u32 i = 0; i < n; i++) {
			kft_buf_char(&b, ' ');
			put_func(&b, cfg->funcs[i], name, arg);
		}
		kft_buf_str(&b, " fend\n");
	}
	if ((cfg->flags & KFT_CF_NOTRACE) && cfg->nnotrace) {
		kt_u32 n = cfg->nnotrace > KFT_FUNCLIST_MAX ? KFT_FUNCLIST_MAX : cfg->nnotrace;

		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter notrace");
		for (kt_u32 i = 0; i < n; i++) {
			kft_buf_char(&b, ' ');
			put_func(&b, cfg->notrace_fns[i], name, arg);
		}
		kft_buf_str(&b, " fend\n");
	}
	if (cfg->flags & KFT_CF_DEPTH) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "filter depth ");
		kft_buf_u64(&b, cfg->max_depth);
		kft_buf_char(&b, '\n');
	}
	if (cfg->watch != KFT_WATCH_NONE) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, cfg->watch == KFT_WATCH_WORST_STACK ? "watch worst-stack " : "watch stack ");
		kft_buf_u64(&b, cfg->watch_threshold);
		kft_buf_char(&b, '\n');
	}
	if (cfg->flags & KFT_CF_LOGENTRIES) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "logentries ");
		kft_buf_u64(&b, cfg->logentries);
		kft_buf_char(&b, '\n');
	}
	if (cfg->flags & KFT_CF_AUTOREPEAT) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "autorepeat\n");
	}
	if (cfg->flags & KFT_CF_PRIME) {
		kft_buf_str(&b, indent);
		kft_buf_str(&b, "prime\n");
	}
	kft_buf_str(&b, "end\n");
	return b.len;
}
