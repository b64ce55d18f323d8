/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A listed device that cannot be opened says why, once, on stderr, without UVERBS_LOG:
 * here its RoCE address is taken (another owner of 127.0.73.2's RoCE port), so
 * ibv_get_device_guid cannot read the GUID; it returns 0 with errno EADDRINUSE and the
 * reason is printed the first time only. */
#include <fcntl.h>
#include <unistd.h>

#include "hw/mlx5/mx5.h"
#include "tests/uverbs/uv_test.h"

static struct mx5_device *holder;

static void fini(void)
{
	if (holder)
		mx5_device_close(holder);
}

TestSuite(device_list, .fini = fini);

/* Everything written to stderr while fn runs. */
static size_t capture_stderr(void (*fn)(void *), void *arg, char *out, size_t cap)
{
	int p[2], saved;
	ssize_t n;

	cr_assert_eq(pipe(p), 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	saved = dup(2);
	fflush(stderr);
	dup2(p[1], 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], out, cap - 1);
	close(p[0]);
	out[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

static void guid_of_first(void *arg)
{
	uint64_t *g = arg;

	errno = 0;
	g[0] = ibv_get_device_guid(ut_list[0]);
	g[1] = (uint64_t)errno;
}

Test(device_list, unopenable_device_names_its_reason_once_without_uverbs_log)
{
	uint64_t g[2];
	char out[1024];

	unsetenv("UVERBS_LOG");
	cr_assert_eq(mx5_device_open("emu:ip=127.0.73.2", &holder), 0, "%s", mx5_open_error());
	ut_devices("emu:ip=127.0.73.2");
	cr_assert_eq(ut_ndev, 1);
	cr_assert_gt(capture_stderr(guid_of_first, g, out, sizeof(out)), 0, "nothing said about the failed open");
	cr_assert_eq(g[0], 0);
	cr_assert_eq(g[1], EADDRINUSE, "errno %d", (int)g[1]);
	cr_assert(strstr(out, "uverbs0") && strstr(out, "emu:ip=127.0.73.2"), "names the device: %s", out);
	cr_assert(strstr(out, "Address already in use"), "gives the reason: %s", out);
	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
	/* once: asking again prints nothing more */
	cr_assert_eq(capture_stderr(guid_of_first, g, out, sizeof(out)), 0, "said twice: %s", out);
	cr_assert_eq(g[1], EADDRINUSE);
}

/* UVERBS_DEVICES used to keep the first 16 URIs and drop the rest without a word
 * (unless UVERBS_LOG was set): every listed device is there, in order. */
Test(device_list, every_device_of_a_long_uverbs_devices_is_listed)
{
	enum { N = 40 };
	char env[N * 32] = "", name[32];
	size_t l = 0;

	for (int i = 0; i < N; i++)
		l += (size_t)snprintf(env + l, sizeof(env) - l, "%semu:ip=127.62.3.%d,page=4k", i ? "," : "", i + 2);
	ut_devices(env);
	cr_assert_eq(ut_ndev, N, "%d devices listed of %d", ut_ndev, N);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "uverbs%d", i);
		cr_assert_str_eq(ibv_get_device_name(ut_list[i]), name);
		cr_assert_eq(ibv_get_device_index(ut_list[i]), i);
	}
	cr_assert_null(ut_list[N]);
	/* the last one is a real device, not a name only: it opens */
	struct ibv_context *c = ut_open(N - 1);
	union ibv_gid g;
	cr_assert_eq(ibv_query_gid(c, 1, 1, &g), 0);
	cr_assert_eq(g.raw[12], 127);
	cr_assert_eq(g.raw[13], 62);
	cr_assert_eq(g.raw[14], 3);
	cr_assert_eq(g.raw[15], N + 1, "device %d is emu:ip=127.62.3.%d", N - 1, N + 1);
	cr_assert_eq(ibv_close_device(c), 0);
}
