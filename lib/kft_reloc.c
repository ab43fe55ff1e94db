/*
 * lib/kft_reloc.c - the first instructions of a function moved to a
 * trampoline, re-encoded for their new address (lib/kft_reloc.h has the
 * design).  Decoding and encoding are Zydis 4's, loaded with dlopen().
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "kft_reloc.h"

#if defined(__x86_64__)

#include <Zydis/Zydis.h>

const char *const kft_reloc_reason[KFT_RELOC_NR] = {
	[KFT_RELOC_OK] = "patched",
	[KFT_RELOC_NODECODER] = "no instruction decoder (libZydis.so.4)",
	[KFT_RELOC_SMALL] = "shorter than 5 bytes",
	[KFT_RELOC_BADINSN] = "an instruction that does not decode",
	[KFT_RELOC_CALL] = "a call followed by other moved instructions",
	[KFT_RELOC_UNMOVABLE] = "an instruction that cannot be moved",
	[KFT_RELOC_JUMPIN] = "a jump into the first bytes",
};

/* The Zydis functions used, from libZydis.so.4.0. */
static struct {
	int state;          /* 0 not tried, 1 loaded, -1 failed */
	ZydisDecoder dec;   /* full decoding: the instructions moved */
	ZydisDecoder sweep; /* minimal mode (length, raw fields): the branch sweep */
	ZyanStatus (*init)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
	ZyanStatus (*decode)(const ZydisDecoder *, ZydisDecoderContext *, const void *, ZyanUSize,
			     ZydisDecodedInstruction *);
	ZyanStatus (*decode_full)(const ZydisDecoder *, const void *, ZyanUSize,
				  ZydisDecodedInstruction *, ZydisDecodedOperand *);
	ZyanStatus (*absolute)(const ZydisDecodedInstruction *, const ZydisDecodedOperand *, ZyanU64,
			       ZyanU64 *);
	ZyanStatus (*to_request)(const ZydisDecodedInstruction *, const ZydisDecodedOperand *, ZyanU8,
				 ZydisEncoderRequest *);
	ZyanStatus (*encode)(ZydisEncoderRequest *, void *, ZyanUSize *, ZyanU64);
	ZyanU64 (*version)(void);
	ZyanStatus (*mode)(ZydisDecoder *, ZydisDecoderMode, ZyanBool);
} zy;

int kft_reloc_load(void)
{
	static const char *const names[] = { "libZydis.so.4.0", "libZydis.so.4" };
	void *lib = NULL;

	if (zy.state)
		return zy.state > 0 ? 0 : -ENOENT;
	zy.state = -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return -ENOENT;
	*(void **)&zy.init = dlsym(lib, "ZydisDecoderInit");
	*(void **)&zy.decode = dlsym(lib, "ZydisDecoderDecodeInstruction");
	*(void **)&zy.decode_full = dlsym(lib, "ZydisDecoderDecodeFull");
	*(void **)&zy.absolute = dlsym(lib, "ZydisCalcAbsoluteAddress");
	*(void **)&zy.to_request = dlsym(lib, "ZydisEncoderDecodedInstructionToEncoderRequest");
	*(void **)&zy.encode = dlsym(lib, "ZydisEncoderEncodeInstructionAbsolute");
	*(void **)&zy.version = dlsym(lib, "ZydisGetVersion");
	*(void **)&zy.mode = dlsym(lib, "ZydisDecoderEnableMode");
	/* the structures above are Zydis 4's: another major version is refused */
	if (!zy.init || !zy.decode || !zy.decode_full || !zy.absolute || !zy.to_request ||
	    !zy.encode || !zy.version || !zy.mode || (zy.version() >> 48) != (ZYDIS_VERSION >> 48) ||
	    !ZYAN_SUCCESS(zy.init(&zy.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(zy.init(&zy.sweep, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(zy.mode(&zy.sweep, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE))) {
		dlclose(lib);
		return -ENOENT;
	}
	zy.state = 1;
	return 0;
}

/*
 * Could a relative branch of @code[0..@size) at @addr land at @t inside its
 * first bytes, other than at @addr itself or at the patch site @addr +
 * @start?
 */
static int in_window(uint64_t t, uint64_t addr, uint64_t start, uint64_t end)
{
	return t > addr && t < addr + end && t != addr + start;
}

/*
 * A quick filter before the decoder: every byte position where a relative
 * branch's opcode could stand (jcc/jmp/loop/jrcxz rel8, call/jmp rel32,
 * jcc rel32, xbegin) and whose target, read as that branch's, lies in the
 * window of in_window().  A real branch into the window is always among
 * them (prefixes stand before the opcode, and in 64-bit mode a near
 * branch's displacement is 32 bits whatever its prefixes); most positions
 * are not instructions at all.  Return: the end of the last such position
 * (the decoder checks the instructions that start before it), or 0: no
 * branch of the function can land in the window.
 */
static size_t window_candidates(const uint8_t *code, size_t size, uint64_t addr, uint64_t start,
				uint64_t end)
{
	size_t last = 0;

	for (size_t q = 0; q + 2 <= size; q++) {
		uint8_t b = code[q], b1 = code[q + 1];
		int32_t rel32;
		size_t len;
		int64_t rel;

		if ((b >= 0x70 && b <= 0x7f) || b == 0xeb || (b >= 0xe0 && b <= 0xe3)) {
			rel = (int8_t)b1;
			len = 2;
		} else if ((b == 0xe8 || b == 0xe9) && q + 5 <= size) {
			memcpy(&rel32, code + q + 1, 4);
			rel = rel32;
			len = 5;
		} else if (((b == 0x0f && (b1 & 0xf0) == 0x80) || (b == 0xc7 && b1 == 0xf8)) &&
			   q + 6 <= size) {
			memcpy(&rel32, code + q + 2, 4);
			rel = rel32;
			len = 6;
		} else {
			continue;
		}
		if (in_window(addr + q + len + (uint64_t)rel, addr, start, end))
			last = q + len;
	}
	return last;
}

/*
 * Does a branch of the function @code[0..@size) at @addr land inside its
 * first bytes [@addr, @addr + @end), other than at @addr itself or at the
 * patch site @addr + @start (after endbr64)?  A branch to the entry is a
 * recursive call, or a jump the compiler made of a tail self-call: the
 * stack is as the caller left it there (nothing runs before the entry),
 * so it runs the entry hook again and is recorded as a call, as it is in
 * a -pg build and by uftrace.  The decoder sweeps the instructions
 * linearly (a byte that does not decode, data or padding, is stepped
 * over), as far as window_candidates() finds a position worth it: for
 * most functions, not at all.
 */
static int jumps_in(const uint8_t *code, size_t size, uint64_t addr, uint64_t start, uint64_t end)
{
	size_t lim = window_candidates(code, size, addr, start, end);
	ZydisDecodedInstruction in;

	for (size_t off = 0; off < lim;) {
		uint64_t t;

		if (!ZYAN_SUCCESS(zy.decode(&zy.sweep, NULL, code + off, size - off, &in))) {
			off++;
			continue;
		}
		off += in.length;
		if (!(in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) || !in.raw.imm[0].is_relative)
			continue;
		t = addr + off + (uint64_t)in.raw.imm[0].value.s;
		if (in_window(t, addr, start, end))
			return 1;
	}
	return 0;
}

/*
 * Re-encode the instruction @in (operands @ops) of address @from to run at
 * @to, into @out (@cap bytes): its relative operands (branch targets,
 * RIP-relative memory), if any, made absolute, then encoded relative to
 * @to; a branch may change width.  @as_jmp: encode a call as the jump to
 * the same target.  Return: its length, or 0 if it cannot be.
 */
static size_t reencode(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			    uint64_t from, uint64_t to, uint8_t *out, size_t cap, int as_jmp)
{
	ZydisEncoderRequest req;
	ZyanUSize len = cap;

	if (!ZYAN_SUCCESS(zy.to_request(in, ops, in->operand_count_visible, &req)))
		return 0;
	if (as_jmp)
		req.mnemonic = ZYDIS_MNEMONIC_JMP;
	for (unsigned k = 0; k < in->operand_count_visible && k < ZYDIS_ENCODER_MAX_OPERANDS; k++) {
		ZyanU64 abs;
		int imm = ops[k].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[k].imm.is_relative;
		int rip = ops[k].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			  ops[k].mem.base == ZYDIS_REGISTER_RIP;

		if (!imm && !rip)
			continue;
		if (!ZYAN_SUCCESS(zy.absolute(in, &ops[k], from, &abs)))
			return 0;
		if (imm) {
			req.operands[k].imm.u = abs;
			req.branch_type = ZYDIS_BRANCH_TYPE_NONE;
			req.branch_width = ZYDIS_BRANCH_WIDTH_NONE;
		} else {
			req.operands[k].mem.displacement = (ZyanI64)abs;
		}
	}
	if (!ZYAN_SUCCESS(zy.encode(&req, out, &len, to)))
		return 0;
	return len;
}

/* Does an explicit operand of @in use the stack pointer (which a push before it moves)? */
static int uses_rsp(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	for (unsigned k = 0; k < in->operand_count_visible; k++)
		if ((ops[k].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[k].reg.value == ZYDIS_REGISTER_RSP) ||
		    (ops[k].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		     (ops[k].mem.base == ZYDIS_REGISTER_RSP || ops[k].mem.index == ZYDIS_REGISTER_RSP)))
			return 1;
	return 0;
}

/*
 * The call @in at @from, the last instruction moved, made to run at @to
 * as "push [its return address]; jmp target" into @r->out, the return
 * address (@from + its length, the first instruction left in place) kept
 * in 8 bytes after the jump back, which the caller appends.  So the
 * function returns from the callee straight into its own code: the return
 * address on the stack is the one the program would have pushed, and
 * unwinders find the function there.  Return: 0, or -1 if it cannot be.
 */
static int move_call(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		     uint64_t from, uint64_t to, struct kft_reloc *r)
{
	unsigned at = r->out_len, lit;
	uint64_t ret = from + in->length;
	size_t n;
	int32_t disp;

	if (uses_rsp(in, ops) || at + 6 > KFT_RELOC_MAX - KFT_RELOC_JMP - 8)
		return -1;
	n = reencode(in, ops, from, to + at + 6, r->out + at + 6,
		     KFT_RELOC_MAX - KFT_RELOC_JMP - 8 - at - 6, 1);
	if (!n)
		return -1;
	/* push qword [rip + disp32] (ff 35): the literal after the jump back */
	lit = at + 6 + (unsigned)n + KFT_RELOC_JMP;
	disp = (int32_t)(lit - (at + 6));
	r->out[at] = 0xff;
	r->out[at + 1] = 0x35;
	memcpy(r->out + at + 2, &disp, 4);
	memcpy(r->out + lit, &ret, 8);
	r->out_len = at + 6 + (unsigned)n;
	r->lit = 8;
	return 0;
}

enum kft_reloc_err kft_reloc_entry(const uint8_t *code, size_t size, uint64_t addr, uint64_t to,
				   struct kft_reloc *r)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t off;
	int64_t back;

	if (zy.state <= 0)
		return KFT_RELOC_NODECODER;
	memset(r, 0, sizeof(*r));
	r->start = size >= 4 && !memcmp(code, endbr64, 4) ? 4 : 0;
	/* the whole instructions the jump covers */
	for (off = r->start; off < r->start + KFT_RELOC_JMP; off += in.length) {
		size_t n;

		if (off >= size)
			return KFT_RELOC_SMALL;
		if (!ZYAN_SUCCESS(zy.decode_full(&zy.dec, code + off, size - off, &in, ops)))
			return KFT_RELOC_BADINSN;
		if (in.meta.category == ZYDIS_CATEGORY_CALL) {
			/* only as the last one: the callee returns to the code left in place */
			if (off + in.length < r->start + KFT_RELOC_JMP)
				return KFT_RELOC_CALL;
			if (move_call(&in, ops, addr + off, to, r) < 0)
				return KFT_RELOC_UNMOVABLE;
			continue;
		}
		if (r->out_len + in.length > KFT_RELOC_MAX - KFT_RELOC_JMP)
			return KFT_RELOC_UNMOVABLE;
		if (!(in.attributes & ZYDIS_ATTRIB_IS_RELATIVE)) {
			memcpy(r->out + r->out_len, code + off, in.length);
			r->out_len += in.length;
			continue;
		}
		n = reencode(&in, ops, addr + off, to + r->out_len, r->out + r->out_len,
				  KFT_RELOC_MAX - KFT_RELOC_JMP - r->out_len, 0);
		if (!n)
			return KFT_RELOC_UNMOVABLE;
		r->out_len += (unsigned)n;
	}
	r->len = (unsigned)(off - r->start);
	if (jumps_in(code, size, addr, r->start, off))
		return KFT_RELOC_JUMPIN;
	/* the jump back to the first instruction left in place */
	back = (int64_t)(addr + off - (to + r->out_len + KFT_RELOC_JMP));
	if (back < INT32_MIN || back > INT32_MAX)
		return KFT_RELOC_UNMOVABLE;
	r->out[r->out_len] = 0xe9;
	memcpy(r->out + r->out_len + 1, &(int32_t){ (int32_t)back }, 4);
	r->out_len += KFT_RELOC_JMP + r->lit;
	return KFT_RELOC_OK;
}

#else /* !__x86_64__ */

const char *const kft_reloc_reason[KFT_RELOC_NR] = {
	[KFT_RELOC_OK] = "patched",
	[KFT_RELOC_NODECODER] = "run-time patching is x86-64 only",
};

int kft_reloc_load(void)
{
	return -ENOENT;
}

enum kft_reloc_err kft_reloc_entry(const uint8_t *code, size_t size, uint64_t addr, uint64_t to,
				   struct kft_reloc *r)
{
	(void)code;
	(void)size;
	(void)addr;
	(void)to;
	(void)r;
	return KFT_RELOC_NODECODER;
}

#endif
