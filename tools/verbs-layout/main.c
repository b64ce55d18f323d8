/* verbs-layout: the size, alignment and field offsets of every <infiniband/verbs.h>
 * structure libuverbs reads or writes, one line each, and a digest of them all.
 *
 * libuverbs is ABI-compatible with the verbs header it is built against: rdma-core's
 * on Linux, the SDK's on macOS (Apple's librdma, macOS 26.2 and later).  Run on a Mac,
 * this prints what Apple's header lays out; `diff` against the Linux output (or compare
 * the digest line) shows at once whether the two agree, which docs/hardware.md assumes
 * until that run.  Members are named as in rdma-core's verbs.h; a member Apple's header
 * lacks fails to compile, which is itself the answer.
 *
 *   verbs-layout            the lines, then "verbs-layout: N structures, M members, digest H"
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static uint64_t digest = 0xcbf29ce484222325ull;    /* FNV-1a 64 over every line */
static unsigned nstruct, nmember;

static void line(const char *s)
{
	fputs(s, stdout);
	for (const char *p = s; *p; p++) {
		digest ^= (uint8_t)*p;
		digest *= 0x100000001b3ull;
	}
}

static void vl_struct(const char *name, size_t size, size_t align)
{
	char b[160];

	snprintf(b, sizeof(b), "struct %s size %zu align %zu\n", name, size, align);
	line(b);
	nstruct++;
}

static void vl_member(const char *st, const char *m, size_t off, size_t size)
{
	char b[200];

	snprintf(b, sizeof(b), "  %s.%s offset %zu size %zu\n", st, m, off, size);
	line(b);
	nmember++;
}

#define F(t, m) vl_member(#t, #m, offsetof(struct t, m), sizeof(((struct t *)0)->m));
#define S(t, ...)                                                   \
	do {                                                        \
		vl_struct(#t, sizeof(struct t), _Alignof(struct t)); \
		__VA_ARGS__                                         \
	} while (0);

int main(void)
{
	S(ibv_sge,
	  F(ibv_sge, addr) F(ibv_sge, length) F(ibv_sge, lkey))
	S(ibv_send_wr,
	  F(ibv_send_wr, wr_id) F(ibv_send_wr, next) F(ibv_send_wr, sg_list)
	  F(ibv_send_wr, num_sge) F(ibv_send_wr, opcode) F(ibv_send_wr, send_flags)
	  F(ibv_send_wr, imm_data) F(ibv_send_wr, invalidate_rkey) F(ibv_send_wr, wr)
	  F(ibv_send_wr, wr.rdma) F(ibv_send_wr, wr.rdma.remote_addr) F(ibv_send_wr, wr.rdma.rkey)
	  F(ibv_send_wr, wr.atomic) F(ibv_send_wr, wr.atomic.remote_addr)
	  F(ibv_send_wr, wr.atomic.compare_add) F(ibv_send_wr, wr.atomic.swap)
	  F(ibv_send_wr, wr.atomic.rkey) F(ibv_send_wr, wr.ud) F(ibv_send_wr, wr.ud.ah)
	  F(ibv_send_wr, wr.ud.remote_qpn) F(ibv_send_wr, wr.ud.remote_qkey)
	  F(ibv_send_wr, qp_type) F(ibv_send_wr, qp_type.xrc)
	  F(ibv_send_wr, qp_type.xrc.remote_srqn) F(ibv_send_wr, bind_mw)
	  F(ibv_send_wr, bind_mw.mw) F(ibv_send_wr, bind_mw.rkey)
	  F(ibv_send_wr, bind_mw.bind_info) F(ibv_send_wr, tso) F(ibv_send_wr, tso.hdr)
	  F(ibv_send_wr, tso.hdr_sz) F(ibv_send_wr, tso.mss))
	S(ibv_recv_wr,
	  F(ibv_recv_wr, wr_id) F(ibv_recv_wr, next) F(ibv_recv_wr, sg_list)
	  F(ibv_recv_wr, num_sge))
	S(ibv_wc,
	  F(ibv_wc, wr_id) F(ibv_wc, status) F(ibv_wc, opcode) F(ibv_wc, vendor_err)
	  F(ibv_wc, byte_len) F(ibv_wc, imm_data) F(ibv_wc, invalidated_rkey) F(ibv_wc, qp_num)
	  F(ibv_wc, src_qp) F(ibv_wc, wc_flags) F(ibv_wc, pkey_index) F(ibv_wc, slid)
	  F(ibv_wc, sl) F(ibv_wc, dlid_path_bits))
	S(ibv_qp_attr,
	  F(ibv_qp_attr, qp_state) F(ibv_qp_attr, cur_qp_state) F(ibv_qp_attr, path_mtu)
	  F(ibv_qp_attr, path_mig_state) F(ibv_qp_attr, qkey) F(ibv_qp_attr, rq_psn)
	  F(ibv_qp_attr, sq_psn) F(ibv_qp_attr, dest_qp_num) F(ibv_qp_attr, qp_access_flags)
	  F(ibv_qp_attr, cap) F(ibv_qp_attr, ah_attr) F(ibv_qp_attr, alt_ah_attr)
	  F(ibv_qp_attr, pkey_index) F(ibv_qp_attr, alt_pkey_index)
	  F(ibv_qp_attr, en_sqd_async_notify) F(ibv_qp_attr, sq_draining)
	  F(ibv_qp_attr, max_rd_atomic) F(ibv_qp_attr, max_dest_rd_atomic)
	  F(ibv_qp_attr, min_rnr_timer) F(ibv_qp_attr, port_num) F(ibv_qp_attr, timeout)
	  F(ibv_qp_attr, retry_cnt) F(ibv_qp_attr, rnr_retry) F(ibv_qp_attr, alt_port_num)
	  F(ibv_qp_attr, alt_timeout) F(ibv_qp_attr, rate_limit))
	S(ibv_qp_cap,
	  F(ibv_qp_cap, max_send_wr) F(ibv_qp_cap, max_recv_wr) F(ibv_qp_cap, max_send_sge)
	  F(ibv_qp_cap, max_recv_sge) F(ibv_qp_cap, max_inline_data))
	S(ibv_qp_init_attr,
	  F(ibv_qp_init_attr, qp_context) F(ibv_qp_init_attr, send_cq)
	  F(ibv_qp_init_attr, recv_cq) F(ibv_qp_init_attr, srq) F(ibv_qp_init_attr, cap)
	  F(ibv_qp_init_attr, qp_type) F(ibv_qp_init_attr, sq_sig_all))
	S(ibv_qp_init_attr_ex,
	  F(ibv_qp_init_attr_ex, qp_context) F(ibv_qp_init_attr_ex, send_cq)
	  F(ibv_qp_init_attr_ex, recv_cq) F(ibv_qp_init_attr_ex, srq) F(ibv_qp_init_attr_ex, cap)
	  F(ibv_qp_init_attr_ex, qp_type) F(ibv_qp_init_attr_ex, sq_sig_all)
	  F(ibv_qp_init_attr_ex, comp_mask) F(ibv_qp_init_attr_ex, pd)
	  F(ibv_qp_init_attr_ex, xrcd) F(ibv_qp_init_attr_ex, create_flags)
	  F(ibv_qp_init_attr_ex, max_tso_header) F(ibv_qp_init_attr_ex, rwq_ind_tbl)
	  F(ibv_qp_init_attr_ex, rx_hash_conf) F(ibv_qp_init_attr_ex, source_qpn)
	  F(ibv_qp_init_attr_ex, send_ops_flags))
	S(ibv_ah_attr,
	  F(ibv_ah_attr, grh) F(ibv_ah_attr, dlid) F(ibv_ah_attr, sl)
	  F(ibv_ah_attr, src_path_bits) F(ibv_ah_attr, static_rate) F(ibv_ah_attr, is_global)
	  F(ibv_ah_attr, port_num))
	S(ibv_global_route,
	  F(ibv_global_route, dgid) F(ibv_global_route, flow_label)
	  F(ibv_global_route, sgid_index) F(ibv_global_route, hop_limit)
	  F(ibv_global_route, traffic_class))
	S(ibv_grh,
	  F(ibv_grh, version_tclass_flow) F(ibv_grh, paylen) F(ibv_grh, next_hdr)
	  F(ibv_grh, hop_limit) F(ibv_grh, sgid) F(ibv_grh, dgid))
	S(ibv_gid_entry,
	  F(ibv_gid_entry, gid) F(ibv_gid_entry, gid_index) F(ibv_gid_entry, port_num)
	  F(ibv_gid_entry, gid_type) F(ibv_gid_entry, ndev_ifindex))
	S(ibv_port_attr,
	  F(ibv_port_attr, state) F(ibv_port_attr, max_mtu) F(ibv_port_attr, active_mtu)
	  F(ibv_port_attr, gid_tbl_len) F(ibv_port_attr, port_cap_flags)
	  F(ibv_port_attr, max_msg_sz) F(ibv_port_attr, bad_pkey_cntr)
	  F(ibv_port_attr, qkey_viol_cntr) F(ibv_port_attr, pkey_tbl_len) F(ibv_port_attr, lid)
	  F(ibv_port_attr, sm_lid) F(ibv_port_attr, lmc) F(ibv_port_attr, max_vl_num)
	  F(ibv_port_attr, sm_sl) F(ibv_port_attr, subnet_timeout)
	  F(ibv_port_attr, init_type_reply) F(ibv_port_attr, active_width)
	  F(ibv_port_attr, active_speed) F(ibv_port_attr, phys_state) F(ibv_port_attr, link_layer)
	  F(ibv_port_attr, flags) F(ibv_port_attr, port_cap_flags2))
	S(ibv_device_attr,
	  F(ibv_device_attr, fw_ver) F(ibv_device_attr, node_guid)
	  F(ibv_device_attr, sys_image_guid) F(ibv_device_attr, max_mr_size)
	  F(ibv_device_attr, page_size_cap) F(ibv_device_attr, vendor_id)
	  F(ibv_device_attr, vendor_part_id) F(ibv_device_attr, hw_ver) F(ibv_device_attr, max_qp)
	  F(ibv_device_attr, max_qp_wr) F(ibv_device_attr, device_cap_flags)
	  F(ibv_device_attr, max_sge) F(ibv_device_attr, max_sge_rd) F(ibv_device_attr, max_cq)
	  F(ibv_device_attr, max_cqe) F(ibv_device_attr, max_mr) F(ibv_device_attr, max_pd)
	  F(ibv_device_attr, max_qp_rd_atom) F(ibv_device_attr, max_ee_rd_atom)
	  F(ibv_device_attr, max_res_rd_atom) F(ibv_device_attr, max_qp_init_rd_atom)
	  F(ibv_device_attr, max_ee_init_rd_atom) F(ibv_device_attr, atomic_cap)
	  F(ibv_device_attr, max_ee) F(ibv_device_attr, max_rdd) F(ibv_device_attr, max_mw)
	  F(ibv_device_attr, max_raw_ipv6_qp) F(ibv_device_attr, max_raw_ethy_qp)
	  F(ibv_device_attr, max_mcast_grp) F(ibv_device_attr, max_mcast_qp_attach)
	  F(ibv_device_attr, max_total_mcast_qp_attach) F(ibv_device_attr, max_ah)
	  F(ibv_device_attr, max_fmr) F(ibv_device_attr, max_map_per_fmr)
	  F(ibv_device_attr, max_srq) F(ibv_device_attr, max_srq_wr)
	  F(ibv_device_attr, max_srq_sge) F(ibv_device_attr, max_pkeys)
	  F(ibv_device_attr, local_ca_ack_delay) F(ibv_device_attr, phys_port_cnt))
	S(ibv_device_attr_ex,
	  F(ibv_device_attr_ex, orig_attr) F(ibv_device_attr_ex, comp_mask)
	  F(ibv_device_attr_ex, odp_caps) F(ibv_device_attr_ex, completion_timestamp_mask)
	  F(ibv_device_attr_ex, hca_core_clock) F(ibv_device_attr_ex, device_cap_flags_ex)
	  F(ibv_device_attr_ex, tso_caps) F(ibv_device_attr_ex, rss_caps)
	  F(ibv_device_attr_ex, max_wq_type_rq) F(ibv_device_attr_ex, packet_pacing_caps)
	  F(ibv_device_attr_ex, raw_packet_caps) F(ibv_device_attr_ex, tm_caps)
	  F(ibv_device_attr_ex, cq_mod_caps) F(ibv_device_attr_ex, max_dm_size)
	  F(ibv_device_attr_ex, pci_atomic_caps) F(ibv_device_attr_ex, xrc_odp_caps)
	  F(ibv_device_attr_ex, phys_port_cnt_ex))
	S(ibv_odp_caps,
	  F(ibv_odp_caps, general_caps) F(ibv_odp_caps, per_transport_caps)
	  F(ibv_odp_caps, per_transport_caps.rc_odp_caps)
	  F(ibv_odp_caps, per_transport_caps.uc_odp_caps)
	  F(ibv_odp_caps, per_transport_caps.ud_odp_caps))
	S(ibv_srq_attr,
	  F(ibv_srq_attr, max_wr) F(ibv_srq_attr, max_sge) F(ibv_srq_attr, srq_limit))
	S(ibv_srq_init_attr,
	  F(ibv_srq_init_attr, srq_context) F(ibv_srq_init_attr, attr))
	S(ibv_srq_init_attr_ex,
	  F(ibv_srq_init_attr_ex, srq_context) F(ibv_srq_init_attr_ex, attr)
	  F(ibv_srq_init_attr_ex, comp_mask) F(ibv_srq_init_attr_ex, srq_type)
	  F(ibv_srq_init_attr_ex, pd) F(ibv_srq_init_attr_ex, xrcd) F(ibv_srq_init_attr_ex, cq)
	  F(ibv_srq_init_attr_ex, tm_cap))
	S(ibv_cq_init_attr_ex,
	  F(ibv_cq_init_attr_ex, cqe) F(ibv_cq_init_attr_ex, cq_context)
	  F(ibv_cq_init_attr_ex, channel) F(ibv_cq_init_attr_ex, comp_vector)
	  F(ibv_cq_init_attr_ex, wc_flags) F(ibv_cq_init_attr_ex, comp_mask)
	  F(ibv_cq_init_attr_ex, flags) F(ibv_cq_init_attr_ex, parent_domain))
	S(ibv_async_event,
	  F(ibv_async_event, element) F(ibv_async_event, element.cq)
	  F(ibv_async_event, element.qp) F(ibv_async_event, element.srq)
	  F(ibv_async_event, element.wq) F(ibv_async_event, element.port_num)
	  F(ibv_async_event, event_type))
	S(ibv_device,
	  F(ibv_device, _ops) F(ibv_device, node_type) F(ibv_device, transport_type)
	  F(ibv_device, name) F(ibv_device, dev_name) F(ibv_device, dev_path)
	  F(ibv_device, ibdev_path))
	S(ibv_context,
	  F(ibv_context, device) F(ibv_context, ops) F(ibv_context, cmd_fd)
	  F(ibv_context, async_fd) F(ibv_context, num_comp_vectors) F(ibv_context, mutex)
	  F(ibv_context, abi_compat))
	S(ibv_comp_channel,
	  F(ibv_comp_channel, context) F(ibv_comp_channel, fd) F(ibv_comp_channel, refcnt))
	S(ibv_pd,
	  F(ibv_pd, context) F(ibv_pd, handle))
	S(ibv_cq,
	  F(ibv_cq, context) F(ibv_cq, channel) F(ibv_cq, cq_context) F(ibv_cq, handle)
	  F(ibv_cq, cqe) F(ibv_cq, mutex) F(ibv_cq, cond) F(ibv_cq, comp_events_completed)
	  F(ibv_cq, async_events_completed))
	S(ibv_cq_ex,
	  F(ibv_cq_ex, context) F(ibv_cq_ex, channel) F(ibv_cq_ex, cq_context)
	  F(ibv_cq_ex, handle) F(ibv_cq_ex, cqe) F(ibv_cq_ex, mutex) F(ibv_cq_ex, cond)
	  F(ibv_cq_ex, comp_events_completed) F(ibv_cq_ex, async_events_completed)
	  F(ibv_cq_ex, comp_mask) F(ibv_cq_ex, status) F(ibv_cq_ex, wr_id)
	  F(ibv_cq_ex, start_poll) F(ibv_cq_ex, next_poll) F(ibv_cq_ex, end_poll)
	  F(ibv_cq_ex, read_opcode) F(ibv_cq_ex, read_vendor_err) F(ibv_cq_ex, read_byte_len)
	  F(ibv_cq_ex, read_imm_data) F(ibv_cq_ex, read_qp_num) F(ibv_cq_ex, read_src_qp)
	  F(ibv_cq_ex, read_wc_flags) F(ibv_cq_ex, read_slid) F(ibv_cq_ex, read_sl)
	  F(ibv_cq_ex, read_dlid_path_bits) F(ibv_cq_ex, read_completion_ts)
	  F(ibv_cq_ex, read_cvlan) F(ibv_cq_ex, read_flow_tag) F(ibv_cq_ex, read_tm_info)
	  F(ibv_cq_ex, read_completion_wallclock_ns))
	S(ibv_poll_cq_attr,
	  F(ibv_poll_cq_attr, comp_mask))
	S(ibv_qp,
	  F(ibv_qp, context) F(ibv_qp, qp_context) F(ibv_qp, pd) F(ibv_qp, send_cq)
	  F(ibv_qp, recv_cq) F(ibv_qp, srq) F(ibv_qp, handle) F(ibv_qp, qp_num) F(ibv_qp, state)
	  F(ibv_qp, qp_type) F(ibv_qp, mutex) F(ibv_qp, cond) F(ibv_qp, events_completed))
	S(ibv_qp_ex,
	  F(ibv_qp_ex, qp_base) F(ibv_qp_ex, comp_mask) F(ibv_qp_ex, wr_id) F(ibv_qp_ex, wr_flags)
	  F(ibv_qp_ex, wr_atomic_cmp_swp) F(ibv_qp_ex, wr_atomic_fetch_add)
	  F(ibv_qp_ex, wr_bind_mw) F(ibv_qp_ex, wr_local_inv) F(ibv_qp_ex, wr_rdma_read)
	  F(ibv_qp_ex, wr_rdma_write) F(ibv_qp_ex, wr_rdma_write_imm) F(ibv_qp_ex, wr_send)
	  F(ibv_qp_ex, wr_send_imm) F(ibv_qp_ex, wr_send_inv) F(ibv_qp_ex, wr_send_tso)
	  F(ibv_qp_ex, wr_set_ud_addr) F(ibv_qp_ex, wr_set_xrc_srqn)
	  F(ibv_qp_ex, wr_set_inline_data) F(ibv_qp_ex, wr_set_inline_data_list)
	  F(ibv_qp_ex, wr_set_sge) F(ibv_qp_ex, wr_set_sge_list) F(ibv_qp_ex, wr_start)
	  F(ibv_qp_ex, wr_complete) F(ibv_qp_ex, wr_abort) F(ibv_qp_ex, wr_atomic_write))
	S(ibv_srq,
	  F(ibv_srq, context) F(ibv_srq, srq_context) F(ibv_srq, pd) F(ibv_srq, handle)
	  F(ibv_srq, mutex) F(ibv_srq, cond) F(ibv_srq, events_completed))
	S(ibv_mr,
	  F(ibv_mr, context) F(ibv_mr, pd) F(ibv_mr, addr) F(ibv_mr, length) F(ibv_mr, handle)
	  F(ibv_mr, lkey) F(ibv_mr, rkey))
	S(ibv_ah,
	  F(ibv_ah, context) F(ibv_ah, pd) F(ibv_ah, handle))
	S(ibv_mw,
	  F(ibv_mw, context) F(ibv_mw, pd) F(ibv_mw, rkey) F(ibv_mw, handle) F(ibv_mw, type))
	S(ibv_query_device_ex_input,
	  F(ibv_query_device_ex_input, comp_mask))
	S(verbs_context,
	  F(verbs_context, query_port) F(verbs_context, advise_mr) F(verbs_context, alloc_null_mr)
	  F(verbs_context, read_counters) F(verbs_context, attach_counters_point_flow)
	  F(verbs_context, create_counters) F(verbs_context, destroy_counters)
	  F(verbs_context, reg_dm_mr) F(verbs_context, alloc_dm) F(verbs_context, free_dm)
	  F(verbs_context, modify_flow_action_esp) F(verbs_context, destroy_flow_action)
	  F(verbs_context, create_flow_action_esp) F(verbs_context, modify_qp_rate_limit)
	  F(verbs_context, alloc_parent_domain) F(verbs_context, dealloc_td)
	  F(verbs_context, alloc_td) F(verbs_context, modify_cq) F(verbs_context, post_srq_ops)
	  F(verbs_context, destroy_rwq_ind_table) F(verbs_context, create_rwq_ind_table)
	  F(verbs_context, destroy_wq) F(verbs_context, modify_wq) F(verbs_context, create_wq)
	  F(verbs_context, query_rt_values) F(verbs_context, create_cq_ex) F(verbs_context, priv)
	  F(verbs_context, query_device_ex) F(verbs_context, ibv_destroy_flow)
	  F(verbs_context, ABI_placeholder2) F(verbs_context, ibv_create_flow)
	  F(verbs_context, ABI_placeholder1) F(verbs_context, open_qp)
	  F(verbs_context, create_qp_ex) F(verbs_context, get_srq_num)
	  F(verbs_context, create_srq_ex) F(verbs_context, open_xrcd) F(verbs_context, close_xrcd)
	  F(verbs_context, _ABI_placeholder3) F(verbs_context, sz) F(verbs_context, context))
	/* Function-pointer table whose members rdma-core renames (_compat_*): its size only. */
	S(ibv_context_ops, )

	printf("verbs-layout: %u structures, %u members, digest %016" PRIx64 "\n", nstruct, nmember, digest);
	return 0;
}
