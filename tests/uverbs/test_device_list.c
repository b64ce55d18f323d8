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
