/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/emu/cpu_hints.h: a file of per-CPU poll times in the user's run directory, mapped
 * once per process.  Each CPU's time has a cache line of its own, so pollers on two
 * CPUs never write the same line.  The file is made by whichever process comes first
 * (O_CREAT, mode 0600 in a 0700 directory this user owns) and only ever grown to the
 * one fixed size, so a late process never shrinks it under another's mapping. */
#include "hw/emu/cpu_hints.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/platform/cpu.h"
#include "hw/platform/run_dir.h"

#define CPU_HINTS_CPUS 1024u
#define CPU_HINTS_FILE "cpu-hints"

struct cpu_hint {
	_Alignas(64) uint64_t polled_ns;
};

static struct cpu_hint *hints;   /* NULL: no hints in this process */
static pthread_once_t hints_once = PTHREAD_ONCE_INIT;

static void hints_map(void)
{
	char dir[512], path[600], why[256];
	size_t len = CPU_HINTS_CPUS * sizeof(struct cpu_hint);
	struct stat st;
	int fd;
	void *p;

	if (plat_run_dir(dir, sizeof(dir)) || plat_run_dir_check(dir, true, why, sizeof(why)))
		return;
	if (snprintf(path, sizeof(path), "%s/%s", dir, CPU_HINTS_FILE) >= (int)sizeof(path))
		return;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_size < (off_t)len && ftruncate(fd, (off_t)len) < 0) ||
	    (fstat(fd, &st) < 0 || st.st_size < (off_t)len)) {
		close(fd);
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		__atomic_store_n(&hints, (struct cpu_hint *)p, __ATOMIC_RELEASE);
}

static struct cpu_hint *hints_get(void)
{
	struct cpu_hint *h = __atomic_load_n(&hints, __ATOMIC_ACQUIRE);

	if (h)
		return h;
	pthread_once(&hints_once, hints_map);
	return __atomic_load_n(&hints, __ATOMIC_ACQUIRE);
}

void emu_cpu_hint_polled(uint64_t now_ns)
{
	struct cpu_hint *h = hints_get();
	int cpu = plat_current_cpu();

	if (h && cpu >= 0 && (unsigned)cpu < CPU_HINTS_CPUS)
		__atomic_store_n(&h[cpu].polled_ns, now_ns, __ATOMIC_RELAXED);
}

bool emu_cpu_hint_polled_recently(int cpu, uint64_t now_ns, uint64_t within_ns)
{
	struct cpu_hint *h = hints_get();

	if (!h || cpu < 0 || (unsigned)cpu >= CPU_HINTS_CPUS)
		return false;
	uint64_t t = __atomic_load_n(&h[cpu].polled_ns, __ATOMIC_RELAXED);
	return t && now_ns >= t && now_ns - t < within_ns;
}
