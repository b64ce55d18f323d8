/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/emu/cpu_hints.h: a poll noted on one CPU is seen, for that CPU only and only for
 * the window asked, by every process of the user (the file in the run directory, 0600,
 * MAP_SHARED); with the run directory off there are no hints and nothing fails. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/emu/cpu_hints.h"
#include "hw/emu/emu_dev.h"
#include "hw/platform/cpu.h"

static char rundir[64];

static void setup(void)
{
	snprintf(rundir, sizeof(rundir), "/tmp/uverbs-test-hints-%d", (int)getpid());
	cr_assert_eq(mkdir(rundir, 0700), 0);
	setenv("UVERBS_RUN_DIR", rundir, 1);
}

static void teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/cpu-hints", rundir);
	unlink(path);
	rmdir(rundir);
}

static void pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		cr_skip_test("cannot run on CPU %d here", cpu);
	cr_assert_eq(plat_current_cpu(), cpu);
}

TestSuite(cpu_hints, .init = setup, .fini = teardown);

Test(cpu_hints, a_poll_is_seen_for_its_cpu_only_and_within_its_window)
{
	pin(0);
	uint64_t t = emu_now_ns();
	emu_cpu_hint_polled(t);
	cr_assert(emu_cpu_hint_polled_recently(0, t + 1000, 20000));
	cr_assert(!emu_cpu_hint_polled_recently(0, t + 30000, 20000), "seen after its window");
	cr_assert(!emu_cpu_hint_polled_recently(1, t + 1000, 20000), "seen on a CPU nobody polled on");
	cr_assert(!emu_cpu_hint_polled_recently(-1, t, 20000));

	char path[128];
	struct stat st;
	snprintf(path, sizeof(path), "%s/cpu-hints", rundir);
	cr_assert_eq(stat(path, &st), 0, "no hint file in the run directory");
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
}

Test(cpu_hints, another_process_poll_is_seen_here)
{
	emu_cpu_hint_polled_recently(0, emu_now_ns(), 1);   /* map the file before the fork */
	pid_t p = fork();
	cr_assert_geq(p, 0);
	if (p == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		if (sched_setaffinity(0, sizeof(one), &one) || plat_current_cpu() != 1)
			_exit(77);
		emu_cpu_hint_polled(emu_now_ns());
		_exit(0);
	}
	int st = 0;
	cr_assert_eq(waitpid(p, &st, 0), p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		cr_skip_test("this machine has no CPU 1 to poll on");
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert(emu_cpu_hint_polled_recently(1, emu_now_ns(), 1000000000ull), "the child's poll on CPU 1 is not seen");
	cr_assert(!emu_cpu_hint_polled_recently(0, emu_now_ns(), 1000000000ull), "nobody polled on CPU 0");
}

Test(cpu_hints, no_run_directory_no_hints)
{
	setenv("UVERBS_RUN_DIR", "off", 1);
	pin(0);
	emu_cpu_hint_polled(emu_now_ns());
	cr_assert(!emu_cpu_hint_polled_recently(0, emu_now_ns(), 1000000000ull));
}
