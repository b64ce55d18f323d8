/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* uvinfo --counters: the queue counters that running uverbs processes publish
 * (uverbs/stats.h), so an application that hangs can be looked at while it hangs:
 * out_of_buffer counts the messages dropped (UC, UD) or RNR-NAKed (RC) because no
 * receive was posted. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "tools/common/parse.h"
#include "tools/uvinfo/uvinfo.h"
#include "uverbs/stats.h"

#define UVI_MAX_COUNTERS 16

struct uvi_stats {
	long pid;
	char device[64], uri[300];
	unsigned long long updated_ms;
	size_t n;
	char name[UVI_MAX_COUNTERS][64];
	unsigned long long value[UVI_MAX_COUNTERS];
	int unavailable;
};

/* 0 when the file is a complete counters file; -1 otherwise (being replaced, foreign). */
static int uvi_stats_read(const char *path, struct uvi_stats *s)
{
	char line[400];
	FILE *f = fopen(path, "r");
	int ok = 0, bad = 0;

	if (!f)
		return -1;
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		char key[64], val[300];
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, UV_STATS_MAGIC)) {
			ok = 1;
			continue;
		}
		if (sscanf(line, "%63s %299[^\n]", key, val) != 2)
			continue;
		/* numbers strictly (tools/common/parse.h): a line that is not one makes the
		 * file foreign, rather than a counter read as 0 or as the digits before junk */
		uint64_t num;
		if (!strcmp(key, "pid")) {
			if (uvt_parse_u64(val, INT32_MAX, &num))
				bad = 1;
			else
				s->pid = (long)num;
		}
		else if (!strcmp(key, "device"))
			snprintf(s->device, sizeof(s->device), "%.63s", val);
		else if (!strcmp(key, "uri"))
			snprintf(s->uri, sizeof(s->uri), "%.299s", val);
		else if (!strcmp(key, "updated_ms")) {
			if (uvt_parse_u64(val, UINT64_MAX, &num))
				bad = 1;
			else
				s->updated_ms = num;
		}
		else if (!strcmp(key, "port1.counters") && !strcmp(val, "unavailable"))
			s->unavailable = 1;
		else if (!strncmp(key, "port1.", 6) && s->n < UVI_MAX_COUNTERS) {
			snprintf(s->name[s->n], sizeof(s->name[0]), "%.57s", key + 6);
			if (uvt_parse_u64(val, UINT64_MAX, &num))
				bad = 1;
			else
				s->value[s->n++] = num;
		}
	}
	fclose(f);
	return ok && !bad && s->pid > 0 ? 0 : -1;
}

int uvi_print_counters(FILE *f, struct jw *w, long only_pid)
{
	char dir[200], path[512];
	DIR *dp;
	struct dirent *e;
	unsigned shown = 0;

	if (uv_stats_dir(dir, sizeof(dir))) {
		fprintf(stderr, "uvinfo: UVERBS_RUN_DIR=off: processes publish no counters\n");
		return 1;
	}
	uvi_list_open(f, w, "processes", "counters published by running uverbs processes (%s):\n", dir);
	dp = opendir(dir);
	while (dp && (e = readdir(dp))) {
		size_t len = strlen(e->d_name), sl = strlen(UV_STATS_SUFFIX);
		struct uvi_stats s;

		if (len <= sl || strcmp(e->d_name + len - sl, UV_STATS_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (uvi_stats_read(path, &s))
			continue;
		if (only_pid > 0 && s.pid != only_pid)
			continue;
		/* a process that died without closing its devices leaves its file behind */
		if (kill((pid_t)s.pid, 0) && errno == ESRCH)
			continue;
		shown++;
		if (w) {
			jw_obj(w, NULL);
			jw_i64(w, "pid", s.pid);
			jw_str(w, "device", s.device);
			jw_str(w, "uri", s.uri);
			jw_u64(w, "updated_ms", s.updated_ms);
			jw_obj(w, "port1");
			for (size_t i = 0; i < s.n; i++)
				jw_u64(w, s.name[i], s.value[i]);
			jw_obj_end(w);
			jw_bool(w, "counters_available", !s.unavailable);
			jw_obj_end(w);
		} else {
			fprintf(f, "  pid %ld  %s  (%s)\n", s.pid, s.device, s.uri);
			if (s.unavailable)
				fprintf(f, "    port 1: the device has no queue counter set\n");
			for (size_t i = 0; i < s.n; i++)
				fprintf(f, "    port 1 %-24s %llu\n", s.name[i], s.value[i]);
		}
	}
	if (dp)
		closedir(dp);
	if (w)
		jw_arr_end(w);
	else if (!shown)
		fprintf(f, "  none%s\n", only_pid > 0 ? " for that pid" : "");
	return only_pid > 0 && !shown ? 1 : 0;
}
