/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The service thread (uverbs/device.c uv_service) reads the health registers on a
 * clock of its own, once a second, and not only when its poll() found nothing: under
 * a steady stream of interrupts a device whose firmware raised a fatal health syndrome
 * must still be noticed and IBV_EVENT_DEVICE_FATAL delivered (Linux health.c samples
 * from a timer, mlx5_start_health_poll).  The stream here is the async vector's
 * interrupt signalled every 20 ms, as the shim does on each MSI: nothing in it needs a
 * command, so it goes on after the firmware stopped executing them.  The program is
 * linked with the verbs layer's objects (as test_evq.c) to reach the emulated device
 * and the interrupt fd behind a context. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "firmware-cmd/names.h"
#include "hw/emu/emu.h"
#include "hw/mlx5/mx5.h"
#include "hw/platform/notify.h"
#include "uverbs/uv.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct storm {
	int fd;
	atomic_int stop;
};

static void *interrupt_storm(void *p)
{
	struct storm *s = p;
	while (!atomic_load(&s->stop)) {
		plat_notify_signal(s->fd);
		usleep(20000);
	}
	return NULL;
}

Test(health_busy, fatal_syndrome_is_noticed_while_interrupts_keep_the_service_thread_busy, .timeout = 60)
{
	setenv("UVERBS_DEVICES", "emu:ip=127.61.9.1", 1);
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_eq(n, 1);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx, "ibv_open_device: %s", strerror(errno));
	struct uv_dev *d = uv_ctx_dev(ctx);
	cr_assert_not_null(d->mx5);
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(d->mx5));
	cr_assert_not_null(e, "an emu: device");

	struct storm s = { .fd = mx5_device_async_fd(d->mx5) };
	cr_assert_geq(s.fd, 0);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, interrupt_storm, &s), 0);
	usleep(1500 * 1000); /* the service thread's poll() has not timed out since open */

	emu_fault_fatal(e, 0x5);
	double t0 = now_s(), waited = -1;
	/* the bound: the 1 s health period twice over, plus slack for a loaded machine */
	while (now_s() - t0 < 4.0) {
		struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		struct ibv_async_event ev;
		if (ibv_get_async_event(ctx, &ev))
			break;
		enum ibv_event_type type = ev.event_type;
		ibv_ack_async_event(&ev);
		if (type == IBV_EVENT_DEVICE_FATAL) {
			waited = now_s() - t0;
			break;
		}
	}
	atomic_store(&s.stop, 1);
	pthread_join(t, NULL);
	cr_assert_geq(waited, 0, "no IBV_EVENT_DEVICE_FATAL within 4 s of a fatal health "
		      "syndrome: the busy service thread never sampled the health registers");
	cr_log_info("IBV_EVENT_DEVICE_FATAL %.2f s after the syndrome", waited);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

static void *fatal_later(void *p)
{
	usleep(200 * 1000);
	emu_fault_fatal(p, 0x7);
	return NULL;
}

/* A destroy whose command the firmware never answers because it went fatal meanwhile
 * succeeds, and the host's side of the object goes: in the error state teardown commands
 * report success (Linux cmd.c mlx5_internal_err_ret_value(), MLX5_CMD_STAT_OK for
 * DESTROY_QP/CQ/RMP...), so that an application tearing down after a fatal error
 * neither fails nor leaks (ASan's leak check sees a QP left behind). */
Test(health_busy, destroys_succeed_and_free_when_the_device_goes_fatal_under_them, .timeout = 60)
{
	setenv("UVERBS_DEVICES", "emu:ip=127.61.9.2", 1);
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	cr_assert_eq(n, 1);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	cr_assert_not_null(ctx, "ibv_open_device: %s", strerror(errno));
	struct uv_dev *d = uv_ctx_dev(ctx);
	struct emu_dev *e = emu_device_from_shim(mx5_device_shim(d->mx5));
	cr_assert_not_null(e, "an emu: device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	cr_assert_not_null(pd);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert_not_null(cq);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	cr_assert_not_null(srq);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	cr_assert_not_null(qp);

	/* the firmware goes fatal while DESTROY_QP waits for it */
	cr_assert_eq(emu_fault_hang(e, PRM_CMD_OP_DESTROY_QP), 0);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fatal_later, e), 0);
	int rc = ibv_destroy_qp(qp);
	pthread_join(t, NULL);
	cr_assert_eq(rc, 0, "ibv_destroy_qp after the device went fatal: %s", strerror(rc));
	cr_assert_eq(mx5_device_is_fatal(d->mx5), 1);
	/* a child of fork() may not destroy its parent's objects, fatal device or not
	 * (ibv_fork_init(3)): refused, rather than freeing them or waiting on its copy of
	 * the parent's event counts */
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(ibv_destroy_cq(cq) == EPERM ? 0 : 1);
	int status = 0;
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's ibv_destroy_cq was not refused");
	/* and the ones after it, on a device known to be fatal */
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}
