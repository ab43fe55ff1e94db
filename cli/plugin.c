/*
 * cli/plugin.c - cli_export_plugin() (cli/cli.h): ktrace-export.so, the
 * exporters whose libraries (libprotobuf-c, libbabeltrace2 with GLib,
 * libtracecmd) only `ktrace export --format=perfetto|ctf|trace.dat` needs,
 * loaded when one of them runs, so that no other command maps them at
 * start (formats/plugin.h).
 */
#include <dlfcn.h>
#include <limits.h>

#include "cli/cli.h"
#include "formats/plugin.h"

const struct fmt_plugin *cli_export_plugin(const char *cmd)
{
	static const char *const rel[] = { FMT_PLUGIN_FILE, "../lib/ktrace/" FMT_PLUGIN_FILE };
	static const struct fmt_plugin *plugin;
	const struct fmt_plugin *p;
	char path[PATH_MAX];
	void *h;

	if (plugin)
		return plugin;
	if (cli_find_beside("KTRACE_EXPORT_PLUGIN", rel, sizeof(rel) / sizeof(rel[0]), path,
			    sizeof(path)) < 0) {
		cli_error(cmd, "cannot find %s (the exporters of this format) beside the ktrace binary "
			       "or in ../lib/ktrace; KTRACE_EXPORT_PLUGIN names it", FMT_PLUGIN_FILE);
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		cli_error(cmd, "%s", dlerror());
		return NULL;
	}
	p = dlsym(h, FMT_PLUGIN_SYMBOL);
	if (!p || p->abi != FMT_PLUGIN_ABI || p->size != sizeof(*p)) {
		cli_error(cmd, "%s: not the export plugin of this ktrace (another build?)", path);
		dlclose(h);
		return NULL;
	}
	return plugin = p; /* kept loaded until exit */
}

/*
 * libtracecmd 1.3.1's tracecmd_output_free() never frees the path that
 * tracecmd_output_set_kallsyms() copied (trace-cmd 3.1.6's trace-output.c;
 * later versions only free it on a second call): a few bytes once per
 * trace.dat export (in the plugin), which LeakSanitizer must not report as
 * ktrace's (asan builds, which read this from the executable; unused
 * otherwise).
 */
const char *__lsan_default_suppressions(void) __attribute__((used));
const char *__lsan_default_suppressions(void)
{
	return "leak:tracecmd_output_set_kallsyms\n";
}
