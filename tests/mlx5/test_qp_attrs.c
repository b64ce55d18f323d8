/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* QP transitions as the device stores them: every check reads the QP context back with
 * a raw QUERY_QP (decoded here with the qpc/ads layouts), not the driver's own copy.
 *
 *  - the RoCE v2 address path: GID index, hop limit, traffic class (and DSCP), flow
 *    label, and the UDP source port derived from it as rdma-core's
 *    ibv_flow_label_to_udp_sport does (computed here independently);
 *  - RDMA READ/atomic depths: the requester never exceeds max_rd_atomic (rounds down),
 *    the responder accepts at least max_dest_rd_atomic (rounds up);
 *  - optional parameters a service type does not have (UC: no READ, atomics, RNR) are
 *    not sent, so a UC QP takes access flags on every transition. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "tests/mlx5/mx5_loop.h"

static void setup(void)
{
	loop_open("emu:");
}

static void teardown(void)
{
	loop_close();
}

TestSuite(qp_attrs, .init = setup, .fini = teardown, .timeout = 60);

/* The device's qpc of qpn (query_qp_out is large: off the stack). */
static uint8_t *query_qpc(uint32_t qpn, uint8_t **keep)
{
	uint8_t in[PRM_SIZE(query_qp_in)] = { 0 };
	uint8_t *out = calloc(1, PRM_SIZE(query_qp_out));
	cr_assert_not_null(out);
	PRM_SET(query_qp_in, in, opcode, PRM_CMD_OP_QUERY_QP);
	PRM_SET(query_qp_in, in, qpn, qpn);
	cr_assert_eq(mx5_cmd(dev, in, sizeof(in), out, PRM_SIZE(query_qp_out)), 0, "%s",
		     mx5_device_error(dev));
	*keep = out;
	return PRM_ADDR(query_qp_out, out, qpc);
}

static struct mx5_qp *qp_of(enum mx5_qp_type t, struct mx5_cq *cq)
{
	struct mx5_qp_init_attr a = { .type = t, .send_cq = cq, .recv_cq = cq,
				      .cap = { .max_send_wr = 8, .max_recv_wr = 8,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct mx5_qp *qp = NULL;
	cr_assert_eq(mx5_qp_create(pd, &a, &qp), 0, "%s", mx5_device_error(dev));
	return qp;
}

static void to_init(struct mx5_qp *qp, unsigned access)
{
	struct mx5_qp_attr a = { .qp_state = MX5_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_PKEY_INDEX | MX5_QP_PORT |
				   MX5_QP_ACCESS_FLAGS), 0, "INIT: %s", mx5_device_error(dev));
}

static void rtr_attrs(struct mx5_qp_attr *a, uint32_t rqpn)
{
	struct mx5_gid_entry g;
	cr_assert_eq(mx5_gid_get(dev, 1, 0, &g), 0);
	memset(a, 0, sizeof(*a));
	a->qp_state = MX5_QPS_RTR;
	a->path_mtu = 3;
	a->dest_qp_num = rqpn;
	a->rq_psn = 0x42;
	memcpy(a->ah.dgid, g.gid, 16);
	memcpy(a->ah.dmac, g.mac, 6);
	a->ah.port_num = 1;
}

/* rdma-core ibv_flow_label_to_udp_sport, restated: the low 14 bits of the flow label
 * XOR its high 6, in the range 0xC000..0xFFFF (IBTA A17.3.1). */
static uint16_t sport_of(uint32_t fl)
{
	return (uint16_t)(0xc000u | ((fl & 0x3fffu) ^ ((fl >> 14) & 0x3fu)));
}

Test(qp_attrs, rc_rtr_and_rts_program_the_roce_v2_path_and_read_depths)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_READ);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x1234);
	a.ah.hop_limit = 7;
	a.ah.traffic_class = 0x68;         /* DSCP 26 (AF31), ECN 0 */
	a.ah.flow_label = 0xabcde;
	a.max_dest_rd_atomic = 3;
	a.min_rnr_timer = 5;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.sq_psn = 0x77;
	a.timeout = 14;
	a.retry_cnt = 6;
	a.rnr_retry = 5;
	a.max_rd_atomic = 3;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTS_RC), 0, "RTS: %s", mx5_device_error(dev));

	uint8_t *keep;
	const uint8_t *c = query_qpc(mx5_qp_num(qp), &keep);
	const uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	cr_assert_eq(PRM_GET(ads, ads, grh), 1);
	cr_assert_eq(PRM_GET(ads, ads, src_addr_index), 0);
	cr_assert_eq(PRM_GET(ads, ads, hop_limit), 7);
	cr_assert_eq(PRM_GET(ads, ads, tclass), 0x68);
	cr_assert_eq(PRM_GET(ads, ads, dscp), 26);
	cr_assert_eq(PRM_GET(ads, ads, flow_label), 0xabcde);
	cr_assert_eq(PRM_GET(ads, ads, udp_sport), sport_of(0xabcde), "udp_sport 0x%x",
		     (unsigned)PRM_GET(ads, ads, udp_sport));
	cr_assert_eq(PRM_GET(ads, ads, ack_timeout), 14);
	cr_assert_eq(PRM_GET(qpc, c, retry_count), 6);
	cr_assert_eq(PRM_GET(qpc, c, rnr_retry), 5);
	cr_assert_eq(PRM_GET(qpc, c, min_rnr_nak), 5);
	/* 3 READs in flight at most from us: 2^1; at least 3 accepted from the peer: 2^2 */
	cr_assert_eq(PRM_GET(qpc, c, log_sra_max), 1, "log_sra_max %u",
		     (unsigned)PRM_GET(qpc, c, log_sra_max));
	cr_assert_eq(PRM_GET(qpc, c, log_rra_max), 2, "log_rra_max %u",
		     (unsigned)PRM_GET(qpc, c, log_rra_max));
	free(keep);
}

Test(qp_attrs, power_of_two_read_depths_are_kept_exactly)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_READ);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x1234);
	a.max_dest_rd_atomic = 4;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.max_rd_atomic = 1;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTS_RC), 0, "RTS: %s", mx5_device_error(dev));
	uint8_t *keep;
	const uint8_t *c = query_qpc(mx5_qp_num(qp), &keep);
	cr_assert_eq(PRM_GET(qpc, c, log_sra_max), 0);
	cr_assert_eq(PRM_GET(qpc, c, log_rra_max), 2);
	free(keep);
}

Test(qp_attrs, flow_label_zero_takes_the_udp_source_port_from_the_qp_numbers)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x2345);
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	/* Linux rdma_calc_flow_label, restated */
	uint64_t v = (uint64_t)mx5_qp_num(qp) * 0x2345u;
	v ^= v >> 20;
	v ^= v >> 40;
	uint8_t *keep;
	const uint8_t *c = query_qpc(mx5_qp_num(qp), &keep);
	const uint8_t *ads = PRM_ADDR(qpc, c, primary_address_path);
	cr_assert_eq(PRM_GET(ads, ads, flow_label), 0, "the flow label stays what was asked");
	cr_assert_eq(PRM_GET(ads, ads, udp_sport), sport_of((uint32_t)(v & 0xfffff)));
	free(keep);
}

Test(qp_attrs, uc_qp_takes_access_flags_on_every_transition)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_UC, cq);
	unsigned acc = MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE;
	to_init(qp, acc);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x1234);
	a.qp_access_flags = acc;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_AV | MX5_QP_PATH_MTU |
				   MX5_QP_DEST_QPN | MX5_QP_RQ_PSN | MX5_QP_ACCESS_FLAGS), 0,
		     "UC RTR with access flags: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.qp_access_flags = acc;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_SQ_PSN | MX5_QP_ACCESS_FLAGS), 0,
		     "UC RTS with access flags: %s", mx5_device_error(dev));
	a.qp_access_flags = MX5_ACCESS_LOCAL_WRITE;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_ACCESS_FLAGS), 0,
		     "UC RTS->RTS with access flags: %s", mx5_device_error(dev));
	uint8_t *keep;
	const uint8_t *c = query_qpc(mx5_qp_num(qp), &keep);
	cr_assert_eq(PRM_GET(qpc, c, state), 3, "RTS");
	cr_assert_eq(PRM_GET(qpc, c, rwe), 0, "remote write revoked by RTS->RTS");
	free(keep);
}

/* Linux mlx5_ib's rule (to_mlx5_access_flags): a QP without responder resources cannot
 * answer READs or atomics, so rre and rae stay off in the device until INIT->RTR gives
 * max_dest_rd_atomic; remote write does not need them. */
Test(qp_attrs, rre_and_rae_stay_off_until_the_qp_has_responder_resources)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE | MX5_ACCESS_REMOTE_READ |
			    MX5_ACCESS_REMOTE_ATOMIC);
	uint8_t *keep;
	const uint8_t *c = query_qpc(mx5_qp_num(qp), &keep);
	cr_assert_eq(PRM_GET(qpc, c, rwe), 1);
	cr_assert_eq(PRM_GET(qpc, c, rre), 0);
	cr_assert_eq(PRM_GET(qpc, c, rae), 0);
	free(keep);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x99);
	a.max_dest_rd_atomic = 2;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	c = query_qpc(mx5_qp_num(qp), &keep);
	cr_assert_eq(PRM_GET(qpc, c, rwe), 1);
	cr_assert_eq(PRM_GET(qpc, c, rre), 1);
	cr_assert_eq(PRM_GET(qpc, c, rae), 1);
	free(keep);
	/* what the application asked for is what it reads back */
	struct mx5_qp_attr q;
	memset(&q, 0, sizeof(q));
	cr_assert_eq(mx5_qp_query(qp, &q, NULL), 0);
	cr_assert(q.qp_access_flags & MX5_ACCESS_REMOTE_ATOMIC);
}

/* IBTA 11.2.4.2: each transition takes its required attributes and a few optional ones;
 * anything else is refused by name, before any command (the device could not apply
 * it: responder resources, for one, are fixed at INIT->RTR). */
Test(qp_attrs, attributes_a_transition_cannot_take_are_refused_by_name)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE);
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x99);
	a.max_dest_rd_atomic = 1;
	/* an SQ PSN belongs to RTR->RTS */
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC | MX5_QP_SQ_PSN), -EINVAL);
	cr_assert_not_null(strstr(mx5_device_error(dev), "sq_psn cannot be set"), "%s", mx5_device_error(dev));
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), 0, "RTR: %s", mx5_device_error(dev));
	memset(&a, 0, sizeof(a));
	a.qp_state = MX5_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTS_RC), 0, "RTS: %s", mx5_device_error(dev));
	/* RTS->RTS: responder resources cannot change; the ACK timeout can (mlx5) */
	a.max_dest_rd_atomic = 4;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_MAX_DEST_RD_ATOMIC), -EINVAL);
	cr_assert_not_null(strstr(mx5_device_error(dev), "max_dest_rd_atomic cannot be set"), "%s",
			   mx5_device_error(dev));
	struct mx5_qp_attr q;
	memset(&q, 0, sizeof(q));
	cr_assert_eq(mx5_qp_query(qp, &q, NULL), 0);
	cr_assert_eq(q.max_dest_rd_atomic, 1, "the refused value was not recorded");
	a.timeout = 18;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_STATE | MX5_QP_TIMEOUT), 0, "%s", mx5_device_error(dev));
	/* to the error state: nothing but the state (and the current state) */
	struct mx5_qp_attr e = { .qp_state = MX5_QPS_ERR, .port_num = 1 };
	cr_assert_eq(mx5_qp_modify(qp, &e, MX5_QP_STATE | MX5_QP_PORT), -EINVAL);
	cr_assert_eq(mx5_qp_modify(qp, &e, MX5_QP_STATE), 0, "%s", mx5_device_error(dev));
}

/* GID index 3 is inside the table but nobody programmed it: there is no source address
 * to send from.  The driver refuses it by name, and INIT2RTR never reaches the device. */
Test(qp_attrs, rtr_from_an_empty_gid_entry_is_refused_by_name)
{
	struct mx5_cq *cq = loop_cq(16, NULL);
	struct mx5_qp *qp = qp_of(MX5_QPT_RC, cq);
	to_init(qp, MX5_ACCESS_LOCAL_WRITE | MX5_ACCESS_REMOTE_WRITE);
	struct mx5_gid_entry g;
	cr_assert_eq(mx5_gid_get(dev, 1, 3, &g), 0);
	cr_assert_eq(g.valid, 0, "entry 3 is empty in this fixture");
	struct mx5_qp_attr a;
	rtr_attrs(&a, 0x99);
	a.ah.sgid_index = 3;
	a.max_dest_rd_atomic = 1;
	cr_assert_eq(mx5_qp_modify(qp, &a, MX5_QP_RTR_RC), -EINVAL);
	cr_assert_not_null(strstr(mx5_device_error(dev), "GID index 3 is empty"), "%s", mx5_device_error(dev));
	uint8_t *keep;
	const uint8_t *qpc = query_qpc(mx5_qp_num(qp), &keep);
	cr_assert_eq(PRM_GET(qpc, qpc, state), 1, "the device still has the QP in INIT");
	free(keep);
}
