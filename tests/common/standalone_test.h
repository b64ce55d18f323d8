/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* criterion's Test / TestSuite / cr_assert* for a test program built without criterion.
 *
 * Why: under ThreadSanitizer a criterion program dies before its first test
 * ("Could not initialize inheritable arena"): criterion 2.4's sandbox (BoxFort) maps a
 * shared arena at an address inside TSan's shadow memory.  The tools/run-tests "tsan"
 * stage therefore builds the concurrency tests with -DUV_TEST_STANDALONE, which gives
 * them this header instead: each test runs in its own forked child, as under
 * criterion, with the suite's init and timeout; a failed assertion prints where and
 * why and fails the child; ThreadSanitizer's exit code (66 when it reported anything)
 * fails it too.  Only the parts of criterion's API the tests use are here.
 */
#ifndef UVERBS_TESTS_COMMON_STANDALONE_TEST_H
#define UVERBS_TESTS_COMMON_STANDALONE_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct uvt_suite {
	void (*init)(void);
	unsigned timeout;
};

struct uvt_test {
	const char *suite, *name;
	void (*fn)(void);
	const struct uvt_suite *s;
};

#define UVT_MAX_TESTS 64
static struct uvt_test uvt_tests[UVT_MAX_TESTS];
static unsigned uvt_ntests;

static inline void uvt_register(const char *suite, const char *name, void (*fn)(void),
				const struct uvt_suite *s)
{
	if (uvt_ntests < UVT_MAX_TESTS)
		uvt_tests[uvt_ntests++] = (struct uvt_test){ suite, name, fn, s };
}

__attribute__((format(printf, 4, 5), noreturn))
static inline void uvt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: Assertion failed: %s\n  ", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(1);
}

#define TestSuite(suite, ...) static const struct uvt_suite uvt_suite_##suite = { __VA_ARGS__ }
#define Test(suite, name)                                                                  \
	static void suite##_##name(void);                                                  \
	__attribute__((constructor)) static void uvt_reg_##suite##_##name(void)            \
	{                                                                                  \
		uvt_register(#suite, #name, suite##_##name, &uvt_suite_##suite);           \
	}                                                                                  \
	static void suite##_##name(void)

#define cr_assert(cond, ...)                                                               \
	do {                                                                               \
		if (!(cond))                                                               \
			uvt_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);              \
	} while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)

/* Every registered test in its own child; the exit status is the number that failed. */
int main(void)
{
	unsigned failed = 0;

	for (unsigned i = 0; i < uvt_ntests; i++) {
		const struct uvt_test *t = &uvt_tests[i];
		int st = 0;

		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			if (t->s->timeout)
				alarm(t->s->timeout);
			if (t->s->init)
				t->s->init();
			t->fn();
			exit(0);    /* exit, not _exit: TSan reports and sets its exit code here */
		}
		waitpid(pid, &st, 0);
		bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		printf("[%s] %s::%s", ok ? "PASS" : "FAIL", t->suite, t->name);
		if (WIFSIGNALED(st))
			printf(" (signal %d)", WTERMSIG(st));
		else if (!ok)
			printf(" (exit %d)", WEXITSTATUS(st));
		printf("\n");
		failed += !ok;
	}
	printf("%u of %u tests passed\n", uvt_ntests - failed, uvt_ntests);
	return (int)failed;
}

#endif
