/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One interrupt vector for every EQ (emu:msix=1, as with a one-MSI kext, a refused
 * MSI-X request or vfio msix=1): the completion EQ shares vector 0 with the async and
 * command EQ.  Whoever acknowledges that vector's interrupt (the async poll, a
 * command's wait: both call hw/mlx5/eq.c mx5_drain_shared_comp_eqs) must also drain the
 * completion EQ, or the completion event is lost and a waiter on the vector
 * (ibv_get_cq_event) blocks forever.  Both the async poll and a command's wait are
 * driven here. */
#include <poll.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "tests/mlx5/mx5_loop.h"

static int comp_events;
static void comp_count(void *ctx, struct mx5_cq *cq)
{
	(void)ctx;
	(void)cq;
	comp_events++;
}

TestSuite(shared_vector, .fini = loop_close);

/* A signalled WRITE on a loopback RC QP whose CQ is armed; returns once the
 * completion's interrupt is pending on the shared vector (not acknowledged). */
static struct mx5_eq *armed_write(const char *uri, struct mx5_cq **cqp, struct mx5_qp **qpp, struct mx5_mr **mrp)
{
	static uint8_t buf[4096];
	loop_open(uri);
	struct mx5_cq *cq = loop_cq(64, comp_count);
	struct mx5_eq *eq;
	cr_assert_eq(mx5_comp_eq_get(dev, 0, &eq), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_eq_fd(eq), mx5_device_async_fd(dev), "msix=1: the completion EQ shares vector 0");
	struct mx5_qp *qp = loop_qp(cq, cq, NULL, 16);
	loop_connect(qp, mx5_qp_num(qp));
	struct mx5_mr *mr;
	cr_assert_eq(mx5_mr_reg(pd, buf, sizeof(buf), MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE, &mr), 0,
		     "%s", mx5_device_error(dev));
	uint32_t key = loop_lkey(mr);
	/* whatever bring-up left on the vector is served first */
	mx5_device_poll_events(dev);
	mx5_eq_poll(eq);
	comp_events = 0;
	cr_assert_eq(mx5_cq_arm(cq, 0), 0);
	loop_post_rdma(qp, IBV_WR_RDMA_WRITE, 1, buf, 64, key, (uintptr_t)(buf + 1024), key, IBV_SEND_SIGNALED);
	struct pollfd p = { .fd = mx5_eq_fd(eq), .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "no interrupt for the completion");
	*cqp = cq;
	*qpp = qp;
	*mrp = mr;
	return eq;
}

/* After `take` acknowledged the shared interrupt, wait as ibv_get_cq_event's service
 * thread does: on the fd, then serve the EQ.  The event must have been delivered
 * already, or still be signalled. */
static void expect_event_delivered(struct mx5_eq *eq, struct mx5_cq *cq, struct mx5_qp *qp, struct mx5_mr *mr)
{
	struct pollfd p = { .fd = mx5_eq_fd(eq), .events = POLLIN };
	for (int i = 0; i < 10 && !comp_events; i++)
		if (poll(&p, 1, 100) > 0)
			mx5_eq_poll(eq);
	cr_assert_eq(comp_events, 1, "the completion event was lost: its shared interrupt was "
		     "acknowledged and the completion EQ left undrained");
	struct ibv_wc wc;
	loop_wait(cq, &wc, 5000);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	mx5_mr_dereg(mr);
	mx5_qp_destroy(qp);
	mx5_cq_destroy(cq);
}

Test(shared_vector, completion_event_survives_the_async_poll_on_the_shared_vector)
{
	struct mx5_cq *cq;
	struct mx5_qp *qp;
	struct mx5_mr *mr;
	struct mx5_eq *eq = armed_write("emu:msix=1", &cq, &qp, &mr);
	/* the async side takes the interrupt (its fd is the same one) */
	mx5_device_poll_events(dev);
	expect_event_delivered(eq, cq, qp, mr);
}

/* The command wait (hw/mlx5/eq.c mx5_cmd_wait) sleeps on the same vector: the pending
 * completion interrupt wakes it and is acknowledged there.  The command is held for a
 * page exchange (emu pagehold, hw/emu/hold.c) so its wait goes round on the interrupt
 * more than once before it completes.  The completion event must reach the CQ's
 * handler during that wait, not be left in the EQ with its interrupt consumed. */
Test(shared_vector, completion_event_survives_a_command_wait_on_the_shared_vector)
{
	struct mx5_cq *cq;
	struct mx5_qp *qp;
	struct mx5_mr *mr;
	struct mx5_eq *eq = armed_write("emu:msix=1", &cq, &qp, &mr);
	cr_assert_eq(emu_fault_page_hold(emu, PRM_CMD_OP_ALLOC_PD, 16, 0), 0);
	struct mx5_pd *pd2 = NULL;
	cr_assert_eq(mx5_pd_alloc(dev, &pd2), 0, "%s", mx5_device_error(dev));
	emu_fault_clear(emu);
	cr_assert_eq(comp_events, 1, "the command's wait acknowledged the shared interrupt "
		     "and left the completion EQ undrained");
	cr_assert_eq(mx5_pd_free(pd2), 0, "%s", mx5_device_error(dev));
	expect_event_delivered(eq, cq, qp, mr);
}

/* A function with fewer vectors than the driver would like (emu:msix=3: its MSI-X
 * table has 3 entries, Table Size 2): vector 0 for the async and command EQ, one
 * completion EQ on each of the others (Linux mlx5_irq_table_create: one vector for the
 * control EQs, the rest for completions), and no completion vector beyond them. */
Test(shared_vector, three_vectors_give_two_completion_eqs_each_on_its_own)
{
	loop_open("emu:msix=3");
	uint8_t b[2];
	cr_assert_eq(emu_pci_cfg_read(emu, EMU_PCI_CAP_MSIX + 2, b, 2), 0);
	cr_assert_eq(((b[0] | b[1] << 8) & 0x7ff) + 1, 3, "the table the driver was given");
	struct mx5_device_info info;
	cr_assert_eq(mx5_device_query(dev, &info), 0);
	cr_assert_eq(info.num_comp_vectors, 2);
	struct shim_dev *s = mx5_device_shim(dev);
	cr_assert_eq(shim_irq_count(s), 3);
	struct mx5_eq *e0, *e1, *e2 = NULL;
	cr_assert_eq(mx5_comp_eq_get(dev, 0, &e0), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_comp_eq_get(dev, 1, &e1), 0, "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_eq_fd(e0), shim_irq_fd(s, 1));
	cr_assert_eq(mx5_eq_fd(e1), shim_irq_fd(s, 2));
	cr_assert_neq(mx5_eq_fd(e0), mx5_device_async_fd(dev));
	cr_assert_eq(mx5_comp_eq_get(dev, 2, &e2), -EINVAL);
	cr_assert_null(e2);
}
