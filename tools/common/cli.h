/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command-line convention of every uverbs tool (docs/tools.md, "Conventions"), in
 * one place for the C tools (fwcmd, uvperf, uvinfo, uvd, uvcp):
 *
 *   -h, --help     the usage text on stdout, exit 0
 *   --version      "NAME (uverbs) VERSION" then "build: DESCRIBE, TYPE, COMPILER" on
 *                  stdout, exit 0
 *   long options beside the short ones (every short option has a long name)
 *   a usage error  one line on stderr, "NAME: what is wrong (see NAME --help)", exit 2
 *   a runtime error (no device, a failed command, output that cannot be written)
 *                  one line on stderr naming the cause, exit 1
 *
 * The scripts (uvplot, hwcheck: Python's argparse; vfio-bind: bash) follow the same
 * rules with the same --version lines; tests/tools/test_cli.py runs every tool's --help,
 * --version and a bad option and checks streams and exit codes.  The version and build
 * come from the build system (uv_tool_identity, tools/cmake/tool-identity.cmake). */
#ifndef UVERBS_TOOLS_COMMON_CLI_H
#define UVERBS_TOOLS_COMMON_CLI_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef UVT_VERSION
#define UVT_VERSION "unknown"
#endif
#ifndef UVT_BUILD
#define UVT_BUILD "unknown"
#endif

enum { UVT_EXIT_OK = 0, UVT_EXIT_FAIL = 1, UVT_EXIT_USAGE = 2 };

/* stdout that could not be written (a full disk, /dev/full) is a runtime error: the
 * output the user asked for is not there.  Returns rc, or UVT_EXIT_FAIL. */
static inline int uvt_flush_stdout(const char *name, int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write the output: %s\n", name, strerror(errno ? errno : EIO));
		return UVT_EXIT_FAIL;
	}
	return rc;
}

/* --help: the text on stdout, exit 0. */
static inline int uvt_help(const char *name, const char *text)
{
	fputs(text, stdout);
	return uvt_flush_stdout(name, UVT_EXIT_OK);
}

/* --version: the tool's name, the project and its version, then the build. */
static inline int uvt_version(const char *name)
{
	printf("%s (uverbs) %s\nbuild: %s\n", name, UVT_VERSION, UVT_BUILD);
	return uvt_flush_stdout(name, UVT_EXIT_OK);
}

/* A usage error: one line on stderr pointing at --help; returns UVT_EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
static inline int uvt_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see %s --help)\n", name);
	return UVT_EXIT_USAGE;
}

/* A getopt_long error as one usage line.  The caller sets opterr = 0 (getopt then says
 * nothing itself) and gives an optstring that starts with ':', so that a missing value
 * comes back as ':' and an unknown option as '?'. */
static inline int uvt_getopt_error(const char *name, int ch, char *const argv[])
{
	const char *a = optind > 0 ? argv[optind - 1] : "";
	char opt[64];
	if (!strncmp(a, "--", 2)) {
		size_t n = strcspn(a, "=");
		snprintf(opt, sizeof(opt), "%.*s", (int)(n < 60 ? n : 60), a);
	} else if (optopt > 0 && optopt < 128) {
		snprintf(opt, sizeof(opt), "-%c", optopt);
	} else {
		snprintf(opt, sizeof(opt), "%.60s", a);
	}
	if (ch == ':')
		return uvt_usage_error(name, "option '%s' needs a value", opt);
	return uvt_usage_error(name, "unknown option '%s'", opt);
}

#endif
