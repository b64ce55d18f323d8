/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/guarded_copy.h on Linux and macOS: POSIX sigaction(2), sigsetjmp(3) and
 * siglongjmp(3) only.
 *
 * The handler runs with SA_NODEFER: the kernel then leaves SIGSEGV/SIGBUS unblocked
 * while it runs, so siglongjmp out of it needs no saved signal mask, and the copy can
 * use sigsetjmp(env, 0), which is a few register stores instead of a sigprocmask(2)
 * system call per copy.  SA_ONSTACK: a thread that set up an alternate signal stack
 * (sigaltstack(2)) for stack overflows keeps it.  After the jump the copy puts back the
 * signal mask the thread had at the fault (the handler's ucontext, uc_sigmask), which a
 * runtime that wraps handlers may have changed; that system call is on the fault path
 * only.
 *
 * The thread's current guard is a thread-local pointer with the initial-exec TLS model
 * where the object format has one (ELF): reading it in the handler is one load from the
 * thread pointer, with no lazy allocation that could call malloc inside a signal
 * handler (glibc's __tls_get_addr does for dynamic TLS).  Glibc keeps spare static TLS
 * for libraries loaded later with initial-exec variables (ld.so's rtld.nns /
 * rtld.optional_static_tls tunables), which two pointers fit in. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "hw/platform/guarded_copy.h"

#if defined(__ELF__)
#define GUARD_TLS __thread __attribute__((tls_model("initial-exec")))
#else
#define GUARD_TLS __thread
#endif

struct guard {
	sigjmp_buf env;
	uintptr_t lo, hi;   /* the application's range, widened to whole pages */
	int have_mask;
	sigset_t mask;      /* the thread's signal mask when it faulted (uc_sigmask) */
};

static GUARD_TLS struct guard *volatile guard_cur;
static GUARD_TLS volatile int guard_forwarding;  /* inside a forwarded handler */

static const int guard_sigs[2] = { SIGSEGV, SIGBUS };

/* The dispositions to forward to, per signal, double-buffered: a claim writes the slot
 * the handler is not reading and then publishes its index, so a handler never sees a
 * half-written struct sigaction (a second claim while a fault is being forwarded could
 * still; claims are rare and come from one place). */
static struct sigaction guard_prev[2][2];
static int guard_prev_slot;
static int guard_claimed;
static uintptr_t guard_page = 4096;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

static int sig_index(int sig)
{
	return sig == SIGBUS;
}

static void to_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
}

/* Call the disposition that was there before us the way the kernel would have. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	int slot = __atomic_load_n(&guard_prev_slot, __ATOMIC_ACQUIRE);
	const struct sigaction *p = &guard_prev[slot][sig_index(sig)];
	sigset_t block, was;

	if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN || guard_forwarding) {
		/* SIG_IGN too: the kernel does not ignore a fault it forces on a thread (it
		 * resets the handler to SIG_DFL, kernel/signal.c force_sig_info_to_task).
		 * A forwarded handler that calls us again (it chains to what it replaced,
		 * which was us) ends here as well: nobody handles the fault. */
		to_default(sig);
		return;
	}
	block = p->sa_mask;
	if (!(p->sa_flags & SA_NODEFER))
		sigaddset(&block, sig);
	if (p->sa_flags & SA_RESETHAND)
		to_default(sig);
	pthread_sigmask(SIG_BLOCK, &block, &was);
	guard_forwarding = 1;
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	guard_forwarding = 0;
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = guard_cur;
	int saved_errno = errno;

	if (g && si && (uintptr_t)si->si_addr >= g->lo && (uintptr_t)si->si_addr < g->hi) {
		if (uc) {
			g->mask = ((ucontext_t *)uc)->uc_sigmask;
			g->have_mask = 1;
		}
		guard_cur = NULL;
		siglongjmp(g->env, 1);
	}
	forward(sig, si, uc);
	errno = saved_errno;
}

static bool is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fault;
}

int plat_guarded_copy_claim(void)
{
	int next, rc = 0;

	pthread_mutex_lock(&guard_lock);
	if (!__atomic_load_n(&guard_claimed, __ATOMIC_RELAXED)) {
		long pg = sysconf(_SC_PAGESIZE);

		if (pg > 0)
			guard_page = (uintptr_t)pg;
	}
	next = !__atomic_load_n(&guard_prev_slot, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		struct sigaction cur, ours;

		if (sigaction(guard_sigs[i], NULL, &cur) != 0) {
			rc = -errno;
			goto out;
		}
		if (is_ours(&cur)) {
			guard_prev[next][i] = guard_prev[!next][i];
			continue;
		}
		guard_prev[next][i] = cur;
		__atomic_store_n(&guard_prev_slot, next, __ATOMIC_RELEASE);
		memset(&ours, 0, sizeof(ours));
		ours.sa_sigaction = on_fault;
		ours.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
		sigemptyset(&ours.sa_mask);
		if (sigaction(guard_sigs[i], &ours, NULL) != 0) {
			rc = -errno;
			goto out;
		}
	}
	__atomic_store_n(&guard_prev_slot, next, __ATOMIC_RELEASE);
	__atomic_store_n(&guard_claimed, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&guard_lock);
	return rc;
}

bool plat_guarded_copy_owns_signals(void)
{
	for (int i = 0; i < 2; i++) {
		struct sigaction cur;

		if (sigaction(guard_sigs[i], NULL, &cur) != 0 || !is_ours(&cur))
			return false;
	}
	return true;
}

static int guarded(void *dst, const void *src, size_t len, const void *app)
{
	struct guard g;
	struct guard *volatile gp = &g;

	if (!len)
		return 0;
	if (!__atomic_load_n(&guard_claimed, __ATOMIC_ACQUIRE)) {
		int rc = plat_guarded_copy_claim();

		if (rc)
			return rc;
	}
	g.lo = (uintptr_t)app & ~(guard_page - 1);
	g.hi = (uintptr_t)app + len;
	g.hi = g.hi < g.lo ? UINTPTR_MAX : g.hi;
	g.have_mask = 0;
	if (sigsetjmp(g.env, 0)) {
		/* The handler cleared guard_cur.  Put back the mask the thread had when it
		 * faulted: SA_NODEFER already left it so, but a runtime that interposes
		 * sigaction (ThreadSanitizer's wrapper blocks signals around the handler it
		 * calls) may not, and a blocked SIGSEGV at the next fault would kill the
		 * process.  One system call, on the fault path only. */
		if (gp->have_mask)
			pthread_sigmask(SIG_SETMASK, &gp->mask, NULL);
		return -EFAULT;
	}
	guard_cur = &g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(dst, src, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	guard_cur = NULL;
	return 0;
}

int plat_guarded_read(void *dst, const void *src, size_t len)
{
	return guarded(dst, src, len, src);
}

int plat_guarded_write(void *dst, const void *src, size_t len)
{
	return guarded(dst, src, len, dst);
}
