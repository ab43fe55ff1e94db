/*
 * fuzz/fuzz_kft_config.c - libFuzzer target for the KFT configuration
 * parser (kft/config.c) and what consumes its output.
 *
 * For any input: the parser returns 0 or -EINVAL with a position inside
 * the text and a NUL-terminated message; a configuration that parsed is
 * printed in the address form (kft_config_format) and must parse back,
 * without a resolver, to the identical configuration; and the engine must
 * accept it (kft_load) and answer a few calls without crashing.
 *
 * Built and run by fuzz/Makefile (make fuzz); the corpus is seeded from
 * fuzz/corpus/kft_config (fuzz/seed_fuzz_kft_config.sh).  For a longer run
 * by hand, add the keyword dictionary: build-fuzz/fuzz_kft_config
 * -dict=fuzz/kft_config.dict build-fuzz/corpus/fuzz_kft_config
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kft/config.h"
#include "kft/engine.h"

/* Resolve names starting with a lowercase letter to a hash; others are unknown. */
static int resolve(void *arg, const char *name, kt_u32 len, kt_u64 *addr)
{
	kt_u64 h = 1469598103934665603ull;

	(void)arg;
	if (len == 0 || name[0] < 'a' || name[0] > 'z')
		return -KFT_ENOENT;
	for (kt_u32 i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	*addr = h | 1;
	return 0;
}

static void check_error(const struct kft_error *err, const uint8_t *data, size_t size)
{
	size_t lines = 1;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (err->line < 1 || err->line > lines || err->col < 1 || err->msg[0] == '\0' ||
	    memchr(err->msg, '\0', KFT_ERRMSG_MAX) == NULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kft_config cfg, again;
	static struct kft_run run;
	static char text[16384];
	struct kft_error err;
	struct kft_counters c;
	struct kft_thread t;
	kt_u32 n;
	int rc;

	rc = kft_config_parse(&cfg, (const char *)data, size, resolve, NULL, &err);
	if (rc < 0) {
		if (rc != -KFT_EINVAL)
			abort();
		check_error(&err, data, size);
		return 0;
	}
	n = kft_config_format(&cfg, text, sizeof(text), "", NULL, NULL);
	if (n >= sizeof(text))
		abort(); /* 256 functions of 18 bytes fit easily */
	if (kft_config_parse(&again, text, n, NULL, NULL, &err) != 0)
		abort();
	/* The printed form always has new/begin/end; everything else must match. */
	again.flags &= ~(KFT_CF_NEW | KFT_CF_BLOCK);
	cfg.flags &= ~(KFT_CF_NEW | KFT_CF_BLOCK);
	if (memcmp(&again, &cfg, sizeof(cfg)) != 0)
		abort();

	kft_run_init(&run, 1000000, 0);
	if (kft_load(&run, &cfg, 1) != 0)
		abort();
	memset(&t, 0, sizeof(t));
	t.c = &c;
	kft_command(&run, KFT_CMD_PRIME, 2);
	for (kt_u64 now = 10; now < 200; now += 10) {
		kt_u64 fn = cfg.nfuncs ? cfg.funcs[now % cfg.nfuncs] : now;

		kft_entry(&run, &t, fn, now, 4096 - now);
		kft_exit(&run, &t, fn, now, now + 5, (unsigned)(now & 1), 0);
	}
	return 0;
}
