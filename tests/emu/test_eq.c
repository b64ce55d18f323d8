/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* EQs: create/query/destroy, EQEs with the owner bit, arming through the UAR
 * doorbell, interrupts on the vector's eventfd, overrun, and the checks CREATE_EQ
 * makes (UAR, size, vector, pinned buffer). */
#include <poll.h>
#include <unistd.h>

#include "tests/emu/emu_test.h"

#define EV_CMD 0x0a
#define EV_PAGE_REQ 0x0b
#define EV_PORT 0x09

static int irq_pending(struct et *t, unsigned vec)
{
	struct pollfd p = { .fd = shim_irq_fd(t->dev, vec), .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, 0) != 1)
		return 0;
	cr_assert_eq(read(p.fd, &v, sizeof(v)), 8);
	return (int)v;
}

Test(emu_eq, create_query_destroy)
{
	struct et t;
	struct et_eq eq;
	uint32_t uar;

	et_open(&t, "emu:");
	et_bringup(&t);
	uar = et_alloc_uar(&t);
	et_expect(&t, et_create_eq(&t, &eq, uar, 6, 3, ET_EVBIT(EV_PAGE_REQ) | ET_EVBIT(EV_PORT)), 0, 0);
	{
		ET_IN(query_eq_in);
		PRM_SET(query_eq_in, in, opcode, PRM_CMD_OP_QUERY_EQ);
		PRM_SET(query_eq_in, in, eq_number, eq.eqn);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(query_eq_out) + 8), 0, 0);
		const uint8_t *eqc = PRM_ADDR(query_eq_out, t.out, eq_context_entry);
		cr_assert_eq(PRM_GET(eqc, eqc, log_eq_size), 6);
		cr_assert_eq(PRM_GET(eqc, eqc, uar_page), uar);
		cr_assert_eq(PRM_GET(eqc, eqc, intr), 3);
		cr_assert_eq(PRM_GET(query_eq_out, t.out, event_bitmask), ET_EVBIT(EV_PAGE_REQ) | ET_EVBIT(EV_PORT));
		cr_assert_eq(prm_bits_get64(t.out + PRM_SIZE(query_eq_out), 0), eq.buf.iova);
	}
	struct emu_counters c;
	emu_counters(t.emu, &c);
	cr_assert_eq(c.objects_live[EMU_OBJ_EQ], 1);
	et_expect(&t, et_destroy_eq(&t, eq.eqn), 0, 0);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.objects_live[EMU_OBJ_EQ], 0);
	et_expect(&t, et_destroy_eq(&t, eq.eqn), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_EQN);
	et_close(&t);
}

Test(emu_eq, page_request_eqe_has_owner_bit_and_interrupts_when_armed)
{
	struct et t;
	struct et_eq eq;
	const uint8_t *e;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 2, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	cr_assert_eq(et_eq_next(&eq), NULL);
	et_eq_doorbell(&t, &eq, 1, 0);
	cr_assert_eq(emu_pages_request(t.emu, 5), 0);
	e = et_eq_next(&eq);
	cr_assert_not_null(e, "EQE written with owner 0 on the first lap");
	cr_assert_eq(PRM_GET(eqe, e, event_type), EV_PAGE_REQ);
	const uint8_t *data = PRM_ADDR(eqe, e, event_data);
	cr_assert_eq((int32_t)PRM_GET(pages_req_event, data, num_pages), 5);
	cr_assert_eq(irq_pending(&t, 2), 1);
	/* Not re-armed: a second event writes an EQE but no interrupt. */
	cr_assert_eq(emu_pages_request(t.emu, -2), 0);
	e = et_eq_next(&eq);
	cr_assert_not_null(e);
	cr_assert_eq((int32_t)PRM_GET(pages_req_event, PRM_ADDR(eqe, e, event_data), num_pages), -2);
	cr_assert_eq(irq_pending(&t, 2), 0);
	et_eq_doorbell(&t, &eq, 1, eq.cc);
	int32_t n;
	et_query_pages(&t, 3, &n);
	cr_assert_eq(n, 3, "regular pages: +5 asked, -2 offered back");
	et_close(&t);
}

Test(emu_eq, arming_with_unconsumed_eqes_interrupts_at_once)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 1, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(irq_pending(&t, 1), 0);
	et_eq_doorbell(&t, &eq, 1, 0);
	cr_assert_eq(irq_pending(&t, 1), 1);
	et_close(&t);
}

Test(emu_eq, owner_bit_flips_on_the_second_lap)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 1, 0, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(emu_pages_request(t.emu, 1), 0, "event %d", i);
		cr_assert_not_null(et_eq_next(&eq), "event %d", i);
		et_eq_doorbell(&t, &eq, 0, eq.cc);
	}
	struct emu_counters c;
	emu_counters(t.emu, &c);
	cr_assert_eq(c.eq_overruns, 0);
	cr_assert_eq(c.driver_errors, 0);
	et_close(&t);
}

Test(emu_eq, overrun_is_detected_and_reported)
{
	struct et t;
	struct et_eq eq;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 1, 0, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), -ENOSPC, "third EQE in a 2-entry EQ nobody consumed");
	emu_counters(t.emu, &c);
	cr_assert_eq(c.eq_overruns, 1);
	cr_assert(emu_drverr_find(t.emu, "overrun"));
	et_close(&t);
}

Test(emu_eq, arm_beyond_the_producer_is_a_driver_error)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	et_eq_doorbell(&t, &eq, 1, 9);
	cr_assert(emu_drverr_find(t.emu, "beyond the producer"));
	et_close(&t);
}

Test(emu_eq, command_completion_eqe_on_the_eq_that_asked)
{
	struct et t;
	struct et_eq eq;
	const uint8_t *e;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, ET_EVBIT(EV_CMD)), 0, 0);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_QUERY_ISSI, 0, PRM_SIZE(query_issi_in), PRM_SIZE(query_issi_out)), 0, 0);
	e = et_eq_next(&eq);
	cr_assert_not_null(e, "a command rung while the EQ listens is reported on it");
	cr_assert_eq(PRM_GET(eqe, e, event_type), EV_CMD);
	cr_assert_neq(PRM_GET(cmd_inter_comp_event, PRM_ADDR(eqe, e, event_data), command_completion_vector), 0);
	et_close(&t);
}

/* Found by Linux's mlx5_core in the VM (tools/vm): it creates the EQ that asks for
 * command completions with a polled CREATE_EQ, then switches to events; an EQE for
 * that CREATE_EQ made it warn "Command completion arrived after timeout" and underflow
 * a reference count.  Only commands rung while an EQ listens get one. */
Test(emu_eq, create_eq_that_asks_for_command_events_gets_no_eqe_of_its_own)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, ET_EVBIT(EV_CMD)), 0, 0);
	cr_assert_null(et_eq_next(&eq), "the polled CREATE_EQ's completion must not be posted as an event");
	et_close(&t);
}

Test(emu_eq, create_eq_on_unknown_uar_is_bad_resource)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, 0x3ff, 4, 0, 0), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	et_close(&t);
}

Test(emu_eq, create_eq_larger_than_log_max_eq_sz_is_limits)
{
	struct et t;
	struct et_eq eq;
	uint64_t pas[1] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq_at(&t, &eq, et_alloc_uar(&t), 23, 0, 0, pas), PRM_CMD_STAT_LIM_ERR,
		  PRM_SYND_SIZE_TOO_LARGE);
	et_close(&t);
}

Test(emu_eq, create_eq_with_a_vector_that_does_not_exist_is_bad_param)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, EMU_NUM_VECTORS, 0), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BAD_INTR_VECTOR);
	et_close(&t);
}

Test(emu_eq, create_eq_on_unpinned_memory_is_refused)
{
	struct et t;
	struct et_eq eq;
	uint64_t pas[1] = { 0x777000000000ull };

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq_at(&t, &eq, et_alloc_uar(&t), 4, 0, 0, pas), PRM_CMD_STAT_BAD_PARAM,
		  PRM_SYND_BUFFER_NOT_PINNED);
	cr_assert(emu_drverr_find(t.emu, "CREATE_EQ page 0"));
	et_close(&t);
}

Test(emu_eq, uar_in_use_by_an_eq_cannot_be_freed)
{
	struct et t;
	struct et_eq eq;
	uint32_t uar;
	ET_IN(dealloc_uar_in);

	et_open(&t, "emu:");
	et_bringup(&t);
	uar = et_alloc_uar(&t);
	et_expect(&t, et_create_eq(&t, &eq, uar, 4, 0, 0), 0, 0);
	PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
	PRM_SET(dealloc_uar_in, in, uar, uar);
	et_expect(&t, et_exec(&t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_RES_STATE, PRM_SYND_OBJECT_IN_USE);
	et_expect(&t, et_destroy_eq(&t, eq.eqn), 0, 0);
	et_expect(&t, et_exec(&t, in, sizeof(in), 16), 0, 0);
	et_close(&t);
}

Test(emu_eq, teardown_destroys_remaining_eqs_and_uars)
{
	struct et t;
	struct et_eq eq;
	struct emu_counters c;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 0, 0), 0, 0);
	et_teardown(&t);
	emu_counters(t.emu, &c);
	for (int i = 0; i < EMU_OBJ_NTYPES; i++)
		cr_assert_eq(c.objects_live[i], 0, "%s", emu_obj_type_name(i));
	cr_assert_eq(c.objects_created[EMU_OBJ_EQ], 1);
	et_close(&t);
}

/* A 16 KiB-page host sets log_uar_page_sz 2 before INIT_HCA (hw/mlx5/init.c mx5_set_general_caps): UAR
 * index i then sits at i * 16 KiB, and the EQ doorbell must be found there. */
/* SET_HCA_CAP log_uar_page_sz (and uar_4k) before INIT_HCA, then the rest of the
 * bring-up. */
static void bringup_with_uar(struct et *t, unsigned log_uar, unsigned uar_4k)
{
	uint8_t *in = calloc(1, PRM_SIZE(set_hca_cap_in));
	uint8_t q[PRM_SIZE(query_hca_cap_in)] = { 0 };

	et_simple(t, PRM_CMD_OP_ENABLE_HCA, 0, PRM_SIZE(enable_hca_in), 16);
	PRM_SET(query_hca_cap_in, q, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, q, op_mod, 1);
	et_expect(t, et_exec(t, q, sizeof(q), PRM_SIZE(query_hca_cap_out)), 0, 0);
	PRM_SET(set_hca_cap_in, in, opcode, PRM_CMD_OP_SET_HCA_CAP);
	memcpy(PRM_ADDR(set_hca_cap_in, in, capability), PRM_ADDR(query_hca_cap_out, t->out, capability), 0x1000);
	PRM_SET(cmd_hca_cap, PRM_ADDR(set_hca_cap_in, in, capability), log_uar_page_sz, log_uar);
	PRM_SET(cmd_hca_cap, PRM_ADDR(set_hca_cap_in, in, capability), uar_4k, uar_4k);
	et_expect(t, et_exec(t, in, PRM_SIZE(set_hca_cap_in), 16), 0, 0);
	free(in);
	et_pages_and_init_hca(t);
}

/* A 16 KiB-page host sets log_uar_page_sz 2 (uar_4k off, as our driver does): UAR
 * index i then sits at i * 16 KiB, and the EQ doorbell must be found there. */
Test(emu_eq, doorbell_through_a_16k_uar_page)
{
	struct et t;
	struct et_eq eq;

	et_open(&t, "emu:page=16k");
	bringup_with_uar(&t, 2, 0);
	t.uar_page_size = 16384;
	et_expect(&t, et_create_eq(&t, &eq, et_alloc_uar(&t), 4, 5, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	et_eq_doorbell(&t, &eq, 1, 0);
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(irq_pending(&t, 5), 1, "armed through the 16 KiB UAR page");
	cr_assert_eq(emu_drverr_count(t.emu), 0);
	et_close(&t);
}

/* uar_4k on (what Linux does on large-page hosts): indexes count 4 KiB UARs, ALLOC_UAR
 * returns the first of a 16 KiB page's four, and each of the four is usable. */
Test(emu_eq, uar_4k_numbers_4k_uars_inside_the_page)
{
	struct et t;
	struct et_eq eq;
	uint32_t uar;

	et_open(&t, "emu:page=16k");
	bringup_with_uar(&t, 2, 1);
	uar = et_alloc_uar(&t);
	cr_assert_eq(uar % 4, 0, "index %u is the first 4 KiB UAR of its page", uar);
	et_expect(&t, et_create_eq(&t, &eq, uar + 1, 4, 6, ET_EVBIT(EV_PAGE_REQ)), 0, 0);
	eq.uar = uar + 1;
	et_eq_doorbell(&t, &eq, 1, 0); /* uar_page_size stays 4096: the 4 KiB unit */
	cr_assert_eq(emu_pages_request(t.emu, 1), 0);
	cr_assert_eq(irq_pending(&t, 6), 1);
	{
		ET_IN(dealloc_uar_in);
		PRM_SET(dealloc_uar_in, in, opcode, PRM_CMD_OP_DEALLOC_UAR);
		PRM_SET(dealloc_uar_in, in, uar, uar + 2);
		et_expect(&t, et_exec(&t, in, sizeof(in), 16), PRM_CMD_STAT_BAD_RES, PRM_SYND_BAD_UAR);
	}
	cr_assert_eq(emu_drverr_count(t.emu), 0);
	et_close(&t);
}

Test(emu_eq, uar_stores_are_counted_as_doorbells_and_blueflame_writes)
{
	struct et t;
	struct emu_counters a, b;
	uint32_t uar;

	et_open(&t, "emu:");
	et_bringup(&t);
	uar = et_alloc_uar(&t);
	emu_counters(t.emu, &a);
	/* A 64-byte BlueFlame burst into the first buffer, then a plain 8-byte doorbell. */
	memset((uint8_t *)t.bar.wc_base + (uint64_t)uar * 4096 + 0x800, 0, 64);
	shim_mmio_notify(&t.bar, SHIM_MMIO_WC_WRITE, (uint64_t)uar * 4096 + 0x800, 64);
	shim_mmio_write64_raw(&t.bar, (uint64_t)uar * 4096 + 0x900, 0);
	emu_counters(t.emu, &b);
	cr_assert_eq(b.bf_writes, a.bf_writes + 1);
	cr_assert_eq(b.send_doorbells, a.send_doorbells + 1);
	cr_assert_eq(b.uar_doorbells, a.uar_doorbells + 2);
	et_close(&t);
}
