/*
 * cli/output.c - pager, colours, "-" for standard output, and the check of
 * standard output at the end of every subcommand (cli/output.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"

static int no_pager;
static enum cli_when color_when = CLI_AUTO;
static int color_state = -1; /* decided: 0 or 1 */
static int stdout_tty = -1;  /* standard output was a terminal before any pager */
static pid_t pager_pid;

/* The output options of a command's table (cli/options.h). */
const struct cli_opt cli_output_opts[] = {
	CLI_OPT("no-pager", CLI_OPT_NO_PAGER, NULL,
		"do not page the output on a terminal ($PAGER, less -FRX)"),
	CLI_OPT("color", CLI_OPT_COLOR, "[=WHEN]", "colours: auto (default: on a terminal), always, never"),
	CLI_OPT("colour", CLI_OPT_COLOR, "[=WHEN]", NULL),
	CLI_OPT_END,
};

void cli_output_color_default(enum cli_when when)
{
	color_when = when;
}

int cli_output_option(const char *cmd, int opt, const char *arg)
{
	if (opt == CLI_OPT_NO_PAGER) {
		no_pager = 1;
		return 1;
	}
	if (opt != CLI_OPT_COLOR)
		return 0;
	if (!arg || !strcmp(arg, "always") || !strcmp(arg, "yes"))
		color_when = CLI_ALWAYS;
	else if (!strcmp(arg, "never") || !strcmp(arg, "no"))
		color_when = CLI_NEVER;
	else if (!strcmp(arg, "auto"))
		color_when = CLI_AUTO;
	else {
		cli_error(cmd, "option '--color': '%s' is not always, never or auto", arg);
		return -1;
	}
	return 1;
}

static int is_tty(void)
{
	if (stdout_tty < 0)
		stdout_tty = isatty(STDOUT_FILENO);
	return stdout_tty;
}

void cli_pager_start(void)
{
	const char *pager = getenv("KTRACE_PAGER");
	int fds[2];
	pid_t pid;

	if (no_pager || !is_tty() || pager_pid)
		return;
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat"))
		return;
	cli_color(); /* decided while standard output is still the terminal */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
		if (!getenv("LV"))
			setenv("LV", "-c", 1);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	pager_pid = pid;
	/* a pager the user quits early closes the pipe: stop quietly */
	signal(SIGPIPE, SIG_DFL);
}

int cli_color(void)
{
	if (color_state < 0) {
		if (color_when == CLI_ALWAYS)
			color_state = 1;
		else if (color_when == CLI_NEVER || getenv("NO_COLOR"))
			color_state = 0;
		else
			color_state = is_tty();
	}
	return color_state;
}

static const char *esc(const char *code)
{
	return cli_color() ? code : "";
}

const char *cli_c_bold(void) { return esc("\033[1m"); }
const char *cli_c_red(void) { return esc("\033[31m"); }
const char *cli_c_yellow(void) { return esc("\033[33m"); }
const char *cli_c_magenta(void) { return esc("\033[35m"); }
const char *cli_c_reset(void) { return esc("\033[0m"); }

int cli_output_end(const char *cmd, int rc)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	/* close the descriptor, not the stream: errors are still reported through stdio */
	if (close(STDOUT_FILENO) != 0 && !err && errno != EBADF)
		err = errno;
	if (pager_pid) {
		int st;

		while (waitpid(pager_pid, &st, 0) < 0 && errno == EINTR)
			;
		pager_pid = 0;
		if (err == EPIPE)
			err = 0; /* the user quit the pager */
	}
	if (err) {
		clearerr(stdout);
		cli_error(cmd, "writing standard output: %s", strerror(err));
		if (!rc)
			rc = 1;
	}
	return rc;
}
