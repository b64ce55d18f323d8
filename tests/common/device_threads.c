/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tests/common/device_threads.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/emu/transport.h"

int test_each_device_thread(bool (*fn)(pid_t tid, void *arg), void *arg)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		char path[300], comm[64] = "";
		pid_t tid = (pid_t)atoi(e->d_name);
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, EMU_DEVICE_THREAD_NAME, strlen(EMU_DEVICE_THREAD_NAME)))
			continue;
		n++;
		if (fn(tid, arg))
			break;
	}
	closedir(dir);
	return n;
}
