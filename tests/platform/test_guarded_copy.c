/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/guarded_copy.h: a fault inside the application's range of a guarded copy
 * is -EFAULT and the process lives; every other SIGSEGV/SIGBUS reaches the handler the
 * application had installed, or kills the process as before; many threads at once. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/platform/guarded_copy.h"

static size_t pg(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Two pages: the first read-write, the second with `prot2`. */
static uint8_t *two_pages(int prot2)
{
	uint8_t *p = mmap(NULL, 2 * pg(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	memset(p, 0x11, 2 * pg());
	cr_assert_eq(mprotect(p + pg(), pg(), prot2), 0);
	return p;
}

/* The application's own handler: records the fault and jumps back into the test. */
static sigjmp_buf app_env;
static volatile int app_calls;
static void *volatile app_addr;

static void app_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	app_calls++;
	app_addr = si->si_addr;
	siglongjmp(app_env, 1);
}

static void install_app_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = app_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
}

/* Touch p for writing outside any guarded copy; 1 if the application's handler ran. */
static int fault_outside_copy(uint8_t *p)
{
	if (sigsetjmp(app_env, 1))
		return 1;
	*(volatile uint8_t *)p = 1;
	return 0;
}

Test(guarded_copy, copies_bytes_both_ways)
{
	uint8_t *p = two_pages(PROT_READ | PROT_WRITE), out[100];
	uint8_t in[100];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	cr_assert_eq(plat_guarded_write(p + pg() - 50, in, sizeof(in)), 0);
	cr_assert_eq(memcmp(p + pg() - 50, in, sizeof(in)), 0);
	cr_assert_eq(plat_guarded_read(out, p + pg() - 50, sizeof(out)), 0);
	cr_assert_eq(memcmp(out, in, sizeof(in)), 0);
}

Test(guarded_copy, write_into_read_only_page_is_efault)
{
	uint8_t *p = two_pages(PROT_READ), in[64];

	memset(in, 0x5a, sizeof(in));
	cr_assert_eq(plat_guarded_write(p + pg() - 32, in, sizeof(in)), -EFAULT);
	cr_assert_eq(p[pg()], 0x11, "the read-only page changed");
	/* and the thread goes on copying afterwards */
	cr_assert_eq(plat_guarded_write(p, in, sizeof(in)), 0);
	cr_assert_eq(p[63], 0x5a);
}

Test(guarded_copy, read_from_unmapped_page_is_efault)
{
	uint8_t *p = two_pages(PROT_READ | PROT_WRITE), out[64];

	cr_assert_eq(munmap(p + pg(), pg()), 0);
	cr_assert_eq(plat_guarded_read(out, p + pg() - 8, sizeof(out)), -EFAULT);
	cr_assert_eq(plat_guarded_read(out, p + pg() + 8, 8), -EFAULT);
}

Test(guarded_copy, read_past_the_end_of_a_truncated_file_is_efault)
{
	FILE *f = tmpfile();
	uint8_t *p, out[16];

	cr_assert_not_null(f);
	cr_assert_eq(ftruncate(fileno(f), (off_t)pg()), 0);
	p = mmap(NULL, pg(), PROT_READ, MAP_SHARED, fileno(f), 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(ftruncate(fileno(f), 0), 0);   /* the page is gone: SIGBUS */
	cr_assert_eq(plat_guarded_read(out, p, sizeof(out)), -EFAULT);
	fclose(f);
}

Test(guarded_copy, fault_outside_a_guarded_copy_still_kills_the_process_with_sigsegv)
{
	uint8_t *p = two_pages(PROT_READ);
	int status;
	pid_t child = fork();

	cr_assert_geq(child, 0);
	if (child == 0) {
		struct sigaction dfl;

		alarm(20);   /* a fault handled by returning would run again for ever */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;   /* what a process has unless someone (ASan) changed it */
		sigaction(SIGSEGV, &dfl, NULL);
		if (plat_guarded_copy_claim() != 0 || !plat_guarded_copy_owns_signals())
			_exit(2);
		*(volatile uint8_t *)(p + pg()) = 1;
		_exit(0);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "child status 0x%x", status);
}

Test(guarded_copy, application_handler_installed_before_gets_faults_outside_copies)
{
	uint8_t *p = two_pages(PROT_READ), in[8] = { 0 };

	install_app_handler();
	cr_assert_eq(plat_guarded_copy_claim(), 0);
	cr_assert(plat_guarded_copy_owns_signals());
	cr_assert_eq(plat_guarded_write(p + pg(), in, sizeof(in)), -EFAULT);
	cr_assert_eq(app_calls, 0, "a fault inside a guarded copy reached the application");
	cr_assert_eq(fault_outside_copy(p + pg()), 1);
	cr_assert_eq(app_calls, 1);
	cr_assert_eq(app_addr, p + pg());
}

Test(guarded_copy, fault_in_the_callers_own_buffer_is_not_swallowed)
{
	uint8_t *p = two_pages(PROT_READ), src[8] = { 0 };
	volatile int rc = 99;

	install_app_handler();
	cr_assert_eq(plat_guarded_copy_claim(), 0);
	/* the application's range (src) is fine; the device's buffer (dst) is the bug */
	if (!sigsetjmp(app_env, 1))
		rc = plat_guarded_read(p + pg(), src, sizeof(src));
	cr_assert_eq(rc, 99, "the copy returned %d instead of faulting", rc);
	cr_assert_eq(app_calls, 1);
}

Test(guarded_copy, claim_takes_the_signals_back_from_a_later_application_handler)
{
	uint8_t *p = two_pages(PROT_READ), in[8] = { 0 };

	cr_assert_eq(plat_guarded_copy_claim(), 0);
	install_app_handler();
	cr_assert_not(plat_guarded_copy_owns_signals());
	cr_assert_eq(plat_guarded_copy_claim(), 0);
	cr_assert(plat_guarded_copy_owns_signals());
	cr_assert_eq(plat_guarded_write(p + pg(), in, sizeof(in)), -EFAULT);
	cr_assert_eq(app_calls, 0);
	cr_assert_eq(fault_outside_copy(p + pg()), 1, "the application's handler was not forwarded to");
	cr_assert_eq(app_calls, 1);
}

#define GC_THREADS 8
#define GC_ROUNDS 3000

struct gc_worker {
	uint8_t *p;     /* two pages, the second read-only */
	int id, bad;
};

static void *gc_worker_run(void *arg)
{
	struct gc_worker *w = arg;
	uint8_t in[256], out[256];

	for (int r = 0; r < GC_ROUNDS && !w->bad; r++) {
		memset(in, (uint8_t)(w->id * 31 + r), sizeof(in));
		if (plat_guarded_write(w->p, in, sizeof(in)) != 0 || plat_guarded_read(out, w->p, sizeof(out)) != 0 ||
		    memcmp(in, out, sizeof(in)))
			w->bad = 1;
		if (plat_guarded_write(w->p + pg() - 100, in, sizeof(in)) != -EFAULT)
			w->bad = 2;
	}
	return NULL;
}

Test(guarded_copy, many_threads_copying_and_faulting_at_once_each_get_their_own_result)
{
	pthread_t t[GC_THREADS];
	struct gc_worker w[GC_THREADS];

	for (int i = 0; i < GC_THREADS; i++) {
		w[i] = (struct gc_worker){ two_pages(PROT_READ), i, 0 };
		cr_assert_eq(pthread_create(&t[i], NULL, gc_worker_run, &w[i]), 0);
	}
	for (int i = 0; i < GC_THREADS; i++) {
		cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_assert_eq(w[i].bad, 0, "thread %d: %d", i, w[i].bad);
	}
}
