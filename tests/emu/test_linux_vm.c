/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What Linux's own mlx5_core and mlx5_ib asked of the emulator in the VM (tools/vm,
 * tests/vm) and the emulator got wrong or lacked, one behaviour each: the DTOR and
 * NODE_DESC registers, ALLOC_XRCD/DEALLOC_XRCD, capabilities this device cannot back
 * left clear, device_frequency_khz, DMA through a host callback (the QEMU device's
 * pci_dma_read/write), and the command log in dump_command form.  (The command EQE for
 * a polled CREATE_EQ is in test_eq.c.) */
#include <stdio.h>
#include <unistd.h>

#include "tests/emu/emu_test.h"

#define REG_NODE_DESC 0x6001
#define REG_DTOR 0xc00e
#define REG_UNKNOWN 0x9999

static int reg_read(struct et *t, uint16_t id, size_t size)
{
	uint8_t in[16 + 64] = { 0 };

	PRM_SET(access_register_in, in, opcode, PRM_CMD_OP_ACCESS_REG);
	PRM_SET(access_register_in, in, op_mod, 1);
	PRM_SET(access_register_in, in, register_id, id);
	return et_exec(t, in, 16 + size, 16 + size);
}

static uint32_t reg_dword(struct et *t, unsigned dw)
{
	const uint8_t *d = PRM_ADDR(access_register_out, t->out, register_data);

	return (uint32_t)d[dw * 4] << 24 | (uint32_t)d[dw * 4 + 1] << 16 | (uint32_t)d[dw * 4 + 2] << 8 | d[dw * 4 + 3];
}

Test(emu_linux_vm, dtor_register_gives_the_default_timeouts)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, reg_read(&t, REG_DTOR, 64), 0, 0);
	/* pcie_toggle_to (dword 1): 2000 ms; fw_reset_to (dword 7): 60 s (multiplier 1) */
	cr_assert_eq(reg_dword(&t, 1), 2000u);
	cr_assert_eq(reg_dword(&t, 5), 2000u, "health_poll_to");
	cr_assert_eq(reg_dword(&t, 7), 1u << 29 | 60u);
	cr_assert_eq(reg_dword(&t, 13), 1u << 29 | 120u, "reclaim_vfs_pages_to");
	et_close(&t);
}

Test(emu_linux_vm, dtor_register_is_read_only)
{
	struct et t;
	uint8_t in[16 + 64] = { 0 };

	et_open(&t, "emu:");
	et_bringup(&t);
	PRM_SET(access_register_in, in, opcode, PRM_CMD_OP_ACCESS_REG);
	PRM_SET(access_register_in, in, op_mod, 0);
	PRM_SET(access_register_in, in, register_id, REG_DTOR);
	et_expect(&t, et_exec(&t, in, sizeof(in), sizeof(in)), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_OP_MOD);
	et_close(&t);
}

Test(emu_linux_vm, node_desc_register_names_the_device)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, reg_read(&t, REG_NODE_DESC, 64), 0, 0);
	cr_assert_str_eq((const char *)PRM_ADDR(access_register_out, t.out, register_data),
			 "uverbs emulated ConnectX-5 Ex");
	et_close(&t);
}

Test(emu_linux_vm, unknown_register_is_refused)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, reg_read(&t, REG_UNKNOWN, 64), PRM_CMD_STAT_BAD_PARAM, PRM_SYND_BAD_REGISTER_ID);
	et_close(&t);
}

Test(emu_linux_vm, alloc_xrcd_numbers_a_domain_and_dealloc_frees_it_once)
{
	struct et t;
	uint32_t x0, x1;

	et_open(&t, "emu:");
	et_bringup(&t);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_XRCD, 0, PRM_SIZE(alloc_xrcd_in), PRM_SIZE(alloc_xrcd_out)), 0, 0);
	x0 = (uint32_t)PRM_GET(alloc_xrcd_out, t.out, xrcd);
	et_expect(&t, et_simple(&t, PRM_CMD_OP_ALLOC_XRCD, 0, PRM_SIZE(alloc_xrcd_in), PRM_SIZE(alloc_xrcd_out)), 0, 0);
	x1 = (uint32_t)PRM_GET(alloc_xrcd_out, t.out, xrcd);
	cr_assert_neq(x0, x1);
	{
		ET_IN(dealloc_xrcd_in);
		PRM_SET(dealloc_xrcd_in, in, opcode, PRM_CMD_OP_DEALLOC_XRCD);
		PRM_SET(dealloc_xrcd_in, in, xrcd, x0);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), 0, 0);
		et_expect(&t, et_exec(&t, in, sizeof(in), PRM_SIZE(dealloc_xrcd_out)), PRM_CMD_STAT_BAD_RES,
			  PRM_SYND_BAD_XRCD);
	}
	et_close(&t);
}

static int query_cap(struct et *t, unsigned type, int cur)
{
	ET_IN(query_hca_cap_in);
	PRM_SET(query_hca_cap_in, in, opcode, PRM_CMD_OP_QUERY_HCA_CAP);
	PRM_SET(query_hca_cap_in, in, op_mod, (type << 1) | (cur ? 1 : 0));
	return et_exec(t, in, sizeof(in), PRM_SIZE(query_hca_cap_out));
}

/* Each of these sent Linux's mlx5_core or mlx5_ib to a command this device lacks. */
Test(emu_linux_vm, capabilities_it_cannot_back_are_clear)
{
	struct et t;

	et_open(&t, "emu:");
	et_bringup(&t);
	for (int cur = 0; cur < 2; cur++) {
		const uint8_t *cap;

		et_expect(&t, query_cap(&t, PRM_CAP_GENERAL_DEVICE, cur), 0, 0);
		cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, eswitch_manager), 0);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, vport_group_manager), 0);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, nic_flow_table), 0);
		/* XRC is backed (XRC SRQs, initiator and target QPs: tests/emu/test_xrc.c),
		 * as the ConnectX-4 offered it; Linux 6.1's mlx5_ib needs it to register */
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, xrc), 1);
		cr_assert_eq(PRM_GET(cmd_hca_cap, cap, device_frequency_khz), 1000000, "the internal timer counts ns");
		/* ethernet offloads: tunnel_lro_gre .. tunnel_stateless_vxlan (bits 0x1c-0x1f) */
		et_expect(&t, query_cap(&t, 1, cur), 0, 0);
		cap = PRM_ADDR(query_hca_cap_out, t.out, capability);
		cr_assert_eq(prm_bits_get32(cap, 0x1c, 4), 0);
	}
	et_close(&t);
}

/* ---- DMA through the host (emu_config.dma) and the command log ---- */

#define HOST_MEM 0x10000u
#define HOST_BASE 0x40000000ull  /* the "guest physical" address of host_mem */
struct host {
	uint8_t mem[HOST_MEM];
	unsigned calls, refused;
};

static int host_dma(void *arg, uint64_t iova, void *buf, size_t len, int write)
{
	struct host *h = arg;

	h->calls++;
	if (iova < HOST_BASE || iova - HOST_BASE > HOST_MEM || len > HOST_MEM - (iova - HOST_BASE)) {
		h->refused++;
		return -EFAULT;
	}
	if (write)
		memcpy(h->mem + (iova - HOST_BASE), buf, len);
	else
		memcpy(buf, h->mem + (iova - HOST_BASE), len);
	return 0;
}

static void bar_store32(struct emu_dev *d, unsigned off, uint32_t v)
{
	prm_store_be32((uint8_t *)emu_bar_base(d), off * 8, v);
	emu_mmio_access(d, 1, off, 4);
}

static int initializing(struct emu_dev *d)
{
	emu_mmio_access(d, 0, PRM_OFF(initial_seg, initializing) / 32 * 4, 4);
	return (int)PRM_GET(initial_seg, (const uint8_t *)emu_bar_base(d), initializing);
}

/* A device whose command queue sits at cmdq (a host address); returns it ready. */
static struct emu_dev *host_device(struct host *h, int log_fd)
{
	struct emu_config cfg = { 0 };
	struct emu_dev *d;
	char err[128];

	cfg.dma = host_dma;
	cfg.dma_arg = h;
	cfg.cmd_log_fd = log_fd;
	cr_assert_eq(emu_create(&cfg, &d, err, sizeof(err)), 0, "%s", err);
	/* the host's PCI core enables the function (memory space, bus mastering) */
	cr_assert_eq(emu_pci_host_enable(d), 0);
	for (int i = 0; i < 2000 && initializing(d); i++)
		usleep(1000);
	bar_store32(d, PRM_OFF(initial_seg, cmdq_phy_addr_63_32) / 8, (uint32_t)(HOST_BASE >> 32));
	bar_store32(d, PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32 * 4, (uint32_t)HOST_BASE);
	for (int i = 0; i < 2000 && initializing(d); i++)
		usleep(1000);
	cr_assert_eq(initializing(d), 0, "device stays initializing");
	return d;
}

/* ENABLE_HCA in entry 0 (inline input and output), rung, and the entry read back. */
static void host_enable_hca(struct host *h, struct emu_dev *d)
{
	uint8_t *e = h->mem;

	memset(e, 0, PRM_SIZE(cmd_queue_entry));
	PRM_SET(cmd_queue_entry, e, type, 7);
	PRM_SET(cmd_queue_entry, e, input_length, PRM_SIZE(enable_hca_in));
	PRM_SET(cmd_queue_entry, e, output_length, 16);
	PRM_SET(cmd_queue_entry, e, token, 1);
	PRM_SET(cmd_in, PRM_ADDR(cmd_queue_entry, e, command_input_inline_data), opcode, PRM_CMD_OP_ENABLE_HCA);
	PRM_SET(cmd_queue_entry, e, ownership, 1);
	bar_store32(d, PRM_OFF(initial_seg, command_doorbell_vector) / 32 * 4, 1);
}

Test(emu_linux_vm, dma_goes_through_the_host_callback)
{
	static struct host h;
	struct emu_dev *d;
	struct emu_counters c;

	memset(&h, 0, sizeof(h));
	d = host_device(&h, -1);
	host_enable_hca(&h, d);
	cr_assert_eq(PRM_GET(cmd_queue_entry, h.mem, ownership), 0, "the device gave the entry back");
	cr_assert_eq(PRM_GET(cmd_queue_entry, h.mem, status), 0);
	cr_assert_eq(PRM_GET(cmd_out, PRM_ADDR(cmd_queue_entry, h.mem, command_output_inline_data), status), 0);
	cr_assert_gt(h.calls, 1u, "the entry was read and written through the callback");
	cr_assert_eq(emu_hca_state(d) != 0, 1, "ENABLE_HCA ran");
	emu_counters(d, &c);
	cr_assert_eq(c.dma_faults, 0u);
	emu_destroy(d);
}

Test(emu_linux_vm, dma_the_host_refuses_is_a_dma_fault)
{
	static struct host h;
	struct emu_dev *d;
	struct emu_counters c;
	unsigned lo = PRM_OFF(initial_seg, cmdq_phy_addr_31_12) / 32 * 4;

	memset(&h, 0, sizeof(h));
	d = host_device(&h, -1);
	/* move the queue outside what the host maps: the entry cannot be fetched */
	bar_store32(d, PRM_OFF(initial_seg, cmdq_phy_addr_63_32) / 8, 1);
	bar_store32(d, lo, 0);
	usleep(20000);
	bar_store32(d, PRM_OFF(initial_seg, command_doorbell_vector) / 32 * 4, 1);
	emu_counters(d, &c);
	cr_assert_geq(c.dma_faults, 1u);
	cr_assert_geq(h.refused, 1u);
	cr_assert(emu_drverr_find(d, "refused by the host"));
	emu_destroy(d);
}

Test(emu_linux_vm, command_log_is_in_dump_command_form)
{
	static struct host h;
	struct emu_dev *d;
	char buf[4096] = "";
	FILE *f = tmpfile();
	size_t n;

	cr_assert_not_null(f);
	memset(&h, 0, sizeof(h));
	d = host_device(&h, fileno(f));
	host_enable_hca(&h, d);
	emu_destroy(d);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cr_assert(strstr(buf, "dump command ENABLE_HCA(0x104) op_mod 0x0 INPUT len 16\n000: 01040000 00000000 00000000 00000000\n"), "%s", buf);
	cr_assert(strstr(buf, "dump command ENABLE_HCA(0x104) op_mod 0x0 OUTPUT len 16 status 0x0 syndrome 0x0\n"),
		  "%s", buf);
}

/* ---- the device thread started by the host (emu_config.thread_start: QEMU's
 * qemu_thread_create in hw/qemu) ---- */

static unsigned started;

static int host_thread_start(void *arg, pthread_t *out, void *(*fn)(void *), void *fn_arg)
{
	started++;
	if (arg)
		return -EAGAIN;   /* a host that cannot start one */
	return -pthread_create(out, NULL, fn, fn_arg);
}

Test(emu_linux_vm, the_device_thread_is_started_by_the_host_when_it_asks)
{
	struct emu_config cfg = { 0 };
	struct emu_dev *d = NULL;
	char err[128];

	started = 0;
	cfg.thread_start = host_thread_start;
	cr_assert_eq(emu_create(&cfg, &d, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(started, 1u);
	emu_destroy(d);   /* joins it */

	cfg.thread_arg = &cfg;
	d = NULL;
	cr_assert_lt(emu_create(&cfg, &d, err, sizeof(err)), 0, "a thread the host refuses fails the create");
	cr_assert_null(d);
	cr_assert_eq(started, 2u);
}
