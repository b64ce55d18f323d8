/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Event queues (PRM "Event Queue"; CREATE_EQ 0x301, DESTROY_EQ 0x302, eqc, eqe).
 *
 * One async EQ on vector 0 takes command completions, page requests, port changes and
 * QP/CQ/SRQ errors; completion EQs, one per further vector, take CQ completion events.
 * No thread: whoever waits (the command engine in event mode, or the application after
 * poll() on the EQ's fd) drains the EQ.
 *
 * Page requests met while the command engine waits are served right there, through the
 * engine's second slot (cmdq_exec_nested): firmware may hold the command being waited
 * for until it gets those pages (PRM "Page Request Event"), as rdma-core
 * providers/mlx5/mlx5_vfio.c (mlx5_vfio_wait_event -> process_async_events ->
 * handle_page_req_event, MANAGE_PAGES on slot MLX5_MAX_COMMANDS - 1) and Linux
 * pagealloc.c (pages_work_handler, separate work on another slot) do.  A queue with a
 * single entry, or polling mode, serves them as soon as the command returns. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/mlx5/barrier.h"
#include "hw/mlx5/mx5_internal.h"
#include "hw/platform/notify.h"

#define MX5_EQE_SIZE 64u
#define MX5_ASYNC_EQ_LOG 7      /* 128 entries: async events are rare */
#define MX5_COMP_EQ_LOG 10      /* 1024 entries */

/* UAR page EQ doorbells: PRM_UAR_EQ_DOORBELL_ARM / _NOARM (firmware-cmd/uar.def).  The
 * doorbell value is the EQ number in bits 31:24 and the consumer counter in 23:0
 * (a UAR register format, not a command layout; Linux eq.c writes the same). */


void mx5_cq_dispatch_comp(struct mx5_device *dev, uint32_t cqn);

static void mx5_eq_doorbell(struct mx5_device *dev, struct mx5_eq *eq, bool arm)
{
	uint32_t v = (eq->cons & 0xffffffu) | (eq->eqn << 24);
	mx5_wmb_before_doorbell();
	shim_mmio_write32(&dev->bar0,
			  dev->uar.bar_off + (arm ? PRM_UAR_EQ_DOORBELL_ARM : PRM_UAR_EQ_DOORBELL_NOARM), v);
}

int mx5_eq_create(struct mx5_device *dev, struct mx5_eq *eq, unsigned vector, bool async,
		  uint32_t nent)
{
	unsigned log = async ? MX5_ASYNC_EQ_LOG : MX5_COMP_EQ_LOG;
	if (nent)
		log = plat_ilog2_ceil(nent);
	unsigned maxlog = (unsigned)MX5_CAP_GEN(dev, log_max_eq_sz);
	if (maxlog && log > maxlog)
		log = maxlog;
	memset(eq, 0, sizeof(*eq));
	eq->dev = dev;
	eq->vector = vector;
	eq->async = async;
	eq->nent = 1u << log;
	size_t bytes = (size_t)eq->nent * MX5_EQE_SIZE;
	bytes = (bytes + dev->host_page - 1) & ~(dev->host_page - 1);
	int rc = shim_dma_alloc(dev->shim, bytes, dev->host_page, &eq->buf);
	if (rc)
		return mx5_fail(dev, rc, "CREATE_EQ: no DMA memory for %u entries", eq->nent);
	/* Every entry starts owned by hardware: owner = 1 while the consumer counter's
	 * wrap bit is 0 (PRM "EQE ownership"). */
	for (uint32_t i = 0; i < eq->nent; i++) {
		uint8_t *e = (uint8_t *)eq->buf.va + (size_t)i * MX5_EQE_SIZE;
		memset(e, 0, MX5_EQE_SIZE);
		PRM_SET(eqe, e, owner, 1);
	}

	size_t npas = bytes / dev->host_page;
	size_t inlen = PRM_SIZE(create_eq_in) + npas * 8;
	uint8_t *in = calloc(1, inlen);
	uint8_t out[PRM_SIZE(create_eq_out)];
	if (!in) {
		shim_dma_free(dev->shim, &eq->buf);
		return mx5_fail(dev, -ENOMEM, "CREATE_EQ: out of memory");
	}
	PRM_SET(create_eq_in, in, opcode, PRM_CMD_OP_CREATE_EQ);
	uint8_t *eqc = PRM_ADDR(create_eq_in, in, eq_context_entry);
	PRM_SET(eqc, eqc, log_eq_size, log);
	PRM_SET(eqc, eqc, uar_page, dev->uar.index);
	PRM_SET(eqc, eqc, intr, vector);
	PRM_SET(eqc, eqc, log_page_size, dev->log_host_page - MX5_FW_PAGE_SHIFT);

	/* event_bitmask: four big-endian 64-bit words, bit n of word n/64 = type n. */
	uint64_t mask[4] = { 0 };
	if (async) {
		/* What Linux asks for on its async EQ (eq.c gather_async_events_mask:
		 * MLX5_ASYNC_EVENT_MASK; 0x001f02be in the ConnectX-4 trace's CREATE_EQ):
		 * PATH_MIG 0x01, COMM_EST 0x02, SQ_DRAINED 0x03, CQ_ERROR 0x04, WQ_CATAS 0x05,
		 * PATH_MIG_FAILED 0x07, PORT_CHANGE 0x09, WQ_INVAL_REQ 0x10, WQ_ACCESS 0x11,
		 * SRQ_CATAS 0x12, SRQ_LAST_WQE 0x13, SRQ_LIMIT 0x14.  Linux adds further types
		 * only when a capability announces them (port_module_event, temp_warn_event,
		 * general_notification_event, ...); this driver handles none of those, so it
		 * asks for none.  Plus CMD 0x0a and PAGE_REQUEST 0x0b, which Linux takes on EQs
		 * of their own and this driver on this one.  Not INTERNAL_ERROR (0x08): Linux
		 * never subscribes to it, and the health watch (health.c) covers that case. */
		static const uint8_t types[] = {
			PRM_EVENT_PATH_MIG, PRM_EVENT_COMM_EST, PRM_EVENT_SQ_DRAINED, PRM_EVENT_CQ_ERROR,
			PRM_EVENT_WQ_CATAS_ERROR, PRM_EVENT_PATH_MIG_FAILED, PRM_EVENT_PORT_CHANGE,
			PRM_EVENT_WQ_INVAL_REQ_ERROR, PRM_EVENT_WQ_ACCESS_ERROR, PRM_EVENT_SRQ_CATAS_ERROR,
			PRM_EVENT_SRQ_LAST_WQE, PRM_EVENT_SRQ_RQ_LIMIT,
			PRM_EVENT_CMD, PRM_EVENT_PAGE_REQUEST,
		};
		for (size_t i = 0; i < sizeof(types); i++)
			mask[types[i] / 64] |= 1ull << (types[i] % 64);
		memcpy(dev->bi.async_event_mask, mask, sizeof(mask));
	} else {
		mask[0] |= 1ull << PRM_EVENT_COMP;
	}
	uint8_t *bm = PRM_ADDR(create_eq_in, in, event_bitmask);
	for (int i = 0; i < 4; i++) {
		uint64_t be = htobe64(mask[i]);
		memcpy(bm + i * 8, &be, 8);
	}
	uint8_t *pas = PRM_ADDR(create_eq_in, in, pas);
	for (size_t i = 0; i < npas; i++) {
		uint64_t be = htobe64(eq->buf.iova + i * dev->host_page);
		memcpy(pas + i * 8, &be, 8);
	}
	rc = mx5_exec(dev, in, inlen, out, sizeof(out));
	free(in);
	if (rc) {
		shim_dma_free(dev->shim, &eq->buf);
		return mx5_cmd_fail(dev, rc, async ? "bring-up" : "completion EQ");
	}
	eq->eqn = (uint32_t)PRM_GET(create_eq_out, out, eq_number);
	eq->created = true;
	mx5_eq_doorbell(dev, eq, true);
	return 0;
}

void mx5_eq_destroy(struct mx5_device *dev, struct mx5_eq *eq)
{
	if (!eq->created)
		return;
	eq->created = false;
	if (eq->remote)
		return;   /* the device daemon's */
	if (dev->health == MX5_HEALTH_OK) {
		uint8_t in[PRM_SIZE(destroy_eq_in)] = { 0 }, out[PRM_SIZE(destroy_eq_out)];
		PRM_SET(destroy_eq_in, in, opcode, PRM_CMD_OP_DESTROY_EQ);
		PRM_SET(destroy_eq_in, in, eq_number, eq->eqn);
		if (mx5_exec(dev, in, sizeof(in), out, sizeof(out)))
			mx5_cmd_fail(dev, -EIO, "teardown");
	}
	shim_dma_free(dev->shim, &eq->buf);
}

void mx5_eq_destroy_all_comp(struct mx5_device *dev)
{
	for (unsigned i = 0; i < MX5_MAX_COMP_EQS; i++) {
		if (!dev->comp_eqs[i])
			continue;
		mx5_eq_destroy(dev, dev->comp_eqs[i]);
		free(dev->comp_eqs[i]);
		dev->comp_eqs[i] = NULL;
	}
}

void mx5_raise_event(struct mx5_device *dev, enum mx5_event_type type, uint32_t num,
		     uint8_t eqe_type, uint8_t synd)
{
	if (!dev->event_fn)
		return;
	struct mx5_event ev = { .type = type, .num = num, .eqe_type = eqe_type, .syndrome = synd };
	dev->event_fn(dev->event_ctx, &ev);
}

void mx5_device_set_event_handler(struct mx5_device *dev, mx5_event_fn fn, void *ctx)
{
	dev->event_fn = fn;
	dev->event_ctx = ctx;
}

void mx5_device_set_comp_route(struct mx5_device *dev, void (*fn)(void *ctx, uint32_t cqn), void *ctx)
{
	dev->comp_route = fn;
	dev->comp_route_ctx = ctx;
}

static void mx5_async_eqe(struct mx5_device *dev, uint8_t *e, bool from_cmd_wait);

/* An event of the process's own engine (a device daemon's client, hw/shim/uvd.c): the
 * EQE it stands for, decoded as the async EQ's entries are.  Command and page events
 * belong to the daemon's EQ and never come this way. */
static void mx5_remote_eqe(struct mx5_device *dev, const struct shim_remote_event *ev)
{
	uint8_t e[MX5_EQE_SIZE] = { 0 };
	uint8_t *data = PRM_ADDR(eqe, e, event_data);

	if (ev->type == PRM_EVENT_CMD || ev->type == PRM_EVENT_PAGE_REQUEST || ev->type > 0xff)
		return;
	PRM_SET(eqe, e, event_type, ev->type);
	PRM_SET(eqe, e, event_sub_type, ev->eqe_type);
	switch (ev->type) {
	case PRM_EVENT_CQ_ERROR:
		PRM_SET(cq_error, data, cqn, ev->num);
		PRM_SET(cq_error, data, syndrome, ev->syndrome);
		break;
	case PRM_EVENT_PORT_CHANGE:
		PRM_SET(port_state_change_event, data, port_num, ev->num);
		break;
	default:
		PRM_SET(qp_events, data, qpn_rqn_sqn, ev->num);
		break;
	}
	mx5_async_eqe(dev, e, false);
}

int mx5_remote_events(struct mx5_device *dev)
{
	int fd = shim_irq_fd(dev->shim, 0), n = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (fd >= 0 && poll(&p, 1, 0) > 0)
		plat_notify_read(fd, NULL);
	struct shim_remote_event ev;
	int rc;
	while (dev->health == MX5_HEALTH_OK && (rc = dev->shim->ops->next_event(dev->shim, &ev)) != 0) {
		if (rc < 0) {
			/* The daemon is gone: like a removed function, every queue flushes and
			 * DEVICE_FATAL is raised once. */
			snprintf(dev->err, sizeof(dev->err), "the device daemon is gone");
			mx5_mark_fatal(dev, MX5_HEALTH_REMOVED, 0);
			break;
		}
		n++;
		if (ev.kind == SHIM_REMOTE_COMP) {
			mx5_cq_dispatch_comp(dev, ev.num);
			continue;
		}
		if (ev.kind == SHIM_REMOTE_EQE) {
			mx5_remote_eqe(dev, &ev);
			continue;
		}
		if (ev.kind != SHIM_REMOTE_ASYNC)
			continue;
		enum mx5_event_type t = (enum mx5_event_type)ev.type;
		if (t == MX5_EVENT_DEVICE_FATAL) {
			snprintf(dev->err, sizeof(dev->err), "device fatal (reported by the device daemon)");
			mx5_mark_fatal(dev, MX5_HEALTH_FATAL, ev.syndrome);
			break;
		}
		if (t >= MX5_EVENT_QP_FATAL && t != MX5_EVENT_SRQ_LIMIT && t != MX5_EVENT_SRQ_ERROR)
			mx5_qp_async_event(dev, ev.num, t);
		mx5_raise_event(dev, t, ev.num, ev.eqe_type, ev.syndrome);
	}
	return n;
}

/* The next software-owned EQE, or NULL (owner bit equals the consumer counter's wrap
 * bit when software owns it). */
static uint8_t *mx5_eq_next(struct mx5_eq *eq)
{
	uint8_t *e = (uint8_t *)eq->buf.va + (size_t)(eq->cons & (eq->nent - 1)) * MX5_EQE_SIZE;
	unsigned sw = (eq->cons & eq->nent) ? 1u : 0u;
	if ((unsigned)PRM_GET(eqe, e, owner) != sw)
		return NULL;
	mx5_rmb_after_owner();
	return e;
}

void mx5_qp_async_event(struct mx5_device *dev, uint32_t qpn, enum mx5_event_type type);

static void mx5_async_eqe(struct mx5_device *dev, uint8_t *e, bool from_cmd_wait)
{
	uint8_t type = (uint8_t)PRM_GET(eqe, e, event_type);
	const uint8_t *data = PRM_ADDR(eqe, e, event_data);
	switch (type) {
	case PRM_EVENT_CMD:
		cmdq_event_complete(dev->cmdq,
				    (uint32_t)PRM_GET(cmd_inter_comp_event, data, command_completion_vector));
		break;
	case PRM_EVENT_PAGE_REQUEST: {
		/* num_pages > 0 asks for pages, < 0 offers some back.  The release-all flag
		 * (Linux pagealloc.c RELEASE_ALL_PAGES_MASK in ec_function) says the firmware
		 * already let go of every page: requests queued before it are void, and the
		 * pages are freed without a command.  Served after the drain, in order. */
		int32_t n = (int32_t)(uint32_t)PRM_GET(pages_req_event, data, num_pages);
		dev->pages.st.requests++;
		if (PRM_GET(pages_req_event, data, release_all_pages)) {
			dev->pending_pages = 0;
			dev->pending_release_all = true;
		} else {
			dev->pending_pages += n;
		}
		(void)from_cmd_wait;
		break;
	}
	case PRM_EVENT_PORT_CHANGE: {
		uint8_t sub = (uint8_t)PRM_GET(eqe, e, event_sub_type);
		uint32_t port = (uint32_t)PRM_GET(port_state_change_event, data, port_num);
		mx5_raise_event(dev, sub == PRM_PORT_CHANGE_ACTIVE ? MX5_EVENT_PORT_ACTIVE
				: MX5_EVENT_PORT_DOWN, port, type, sub);
		break;
	}
	case PRM_EVENT_CQ_ERROR:
		mx5_raise_event(dev, MX5_EVENT_CQ_ERROR, (uint32_t)PRM_GET(cq_error, data, cqn), type,
				(uint8_t)PRM_GET(cq_error, data, syndrome));
		break;
	case PRM_EVENT_INTERNAL_ERROR:
		snprintf(dev->err, sizeof(dev->err), "health: internal error event");
		mx5_mark_fatal(dev, MX5_HEALTH_FATAL, 0);
		break;
	case PRM_EVENT_SRQ_CATAS_ERROR:
	case PRM_EVENT_SRQ_RQ_LIMIT:
		mx5_raise_event(dev, type == PRM_EVENT_SRQ_RQ_LIMIT ? MX5_EVENT_SRQ_LIMIT : MX5_EVENT_SRQ_ERROR,
				(uint32_t)PRM_GET(qp_events, data, qpn_rqn_sqn), type, 0);
		break;
	default: {
		enum mx5_event_type t;
		switch (type) {
		case PRM_EVENT_PATH_MIG: t = MX5_EVENT_PATH_MIG; break;
		case PRM_EVENT_COMM_EST: t = MX5_EVENT_COMM_EST; break;
		case PRM_EVENT_SQ_DRAINED: t = MX5_EVENT_SQ_DRAINED; break;
		case PRM_EVENT_WQ_CATAS_ERROR: t = MX5_EVENT_QP_FATAL; break;
		case PRM_EVENT_PATH_MIG_FAILED: t = MX5_EVENT_PATH_MIG_ERR; break;
		case PRM_EVENT_WQ_INVAL_REQ_ERROR: t = MX5_EVENT_QP_REQ_ERROR; break;
		case PRM_EVENT_WQ_ACCESS_ERROR: t = MX5_EVENT_QP_ACCESS_ERROR; break;
		case PRM_EVENT_SRQ_LAST_WQE: t = MX5_EVENT_LAST_WQE_REACHED; break;
		default: return; /* not asked for: ignore */
		}
		uint32_t qpn = (uint32_t)PRM_GET(qp_events, data, qpn_rqn_sqn);
		mx5_qp_async_event(dev, qpn, t);
		mx5_raise_event(dev, t, qpn, type, 0);
	}
	}
}

/* Consume every EQE software owns, each through fn, then update the consumer index and
 * re-arm.  Returns the number consumed. */
static int mx5_eq_consume(struct mx5_device *dev, struct mx5_eq *eq,
			  void (*fn)(struct mx5_device *dev, uint8_t *e, bool arg), bool arg)
{
	int n = 0;
	uint8_t *e;
	while ((e = mx5_eq_next(eq))) {
		fn(dev, e, arg);
		eq->cons++;
		n++;
		/* Tell the device about consumed entries every half queue so it never overruns. */
		if ((eq->cons & (eq->nent / 2 - 1)) == 0)
			mx5_eq_doorbell(dev, eq, false);
	}
	mx5_eq_doorbell(dev, eq, true);
	return n;
}

/* Drain the async EQ; `from_cmd_wait` when called by the command engine's wait. */
static int mx5_async_eq_drain(struct mx5_device *dev, bool from_cmd_wait)
{
	if (!dev->async_eq.created)
		return 0;
	return mx5_eq_consume(dev, &dev->async_eq, mx5_async_eqe, from_cmd_wait);
}

static void mx5_comp_eqe(struct mx5_device *dev, uint8_t *e, bool unused);

/* The completion EQs that share the async EQ's interrupt vector (a shim with one
 * vector: a one-MSI kext, a refused MSI-X request, vfio msix=1).  Whoever acknowledges
 * that vector's interrupt must drain them too, or their completion events stay in the
 * EQ, unarmed, and ibv_get_cq_event waits for an interrupt that never comes.  Linux
 * never meets this: each EQ has its own vector (eq.c create_comp_eqs, and the command
 * EQ is consumed in its own IRQ, mlx5_eq_async_int). */
static int mx5_drain_shared_comp_eqs(struct mx5_device *dev)
{
	int n = 0;
	for (unsigned v = 0; v < dev->ncomp_vectors; v++) {
		struct mx5_eq *eq = dev->comp_eqs[v];
		if (eq && eq->created && !eq->remote && eq->vector == dev->async_eq.vector)
			n += mx5_eq_consume(dev, eq, mx5_comp_eqe, false);
	}
	return n;
}

static void mx5_irq_ack(int fd)
{
	/* one read returns (and clears) the whole count (hw/platform/notify.h) */
	if (fd >= 0 && plat_notify_read(fd, NULL) < 0)
		return;
}

/* Page requests collected by the drain.  `nested`: from inside the wait for a command,
 * whose slot is taken, so MANAGE_PAGES goes through the engine's second slot; without
 * one they stay pending and mx5_after_cmd serves them once the command returned.
 * in_page_service keeps a page command's own wait from coming back here. */
static int mx5_serve_pending_pages(struct mx5_device *dev, bool nested)
{
	if (dev->in_page_service || dev->health != MX5_HEALTH_OK)
		return 0;
	if (!dev->pending_pages && !dev->pending_release_all)
		return 0;
	if (nested && cmdq_nested_slot(dev->cmdq) < 0)
		return 0;
	dev->in_page_service = true;
	dev->cmd_nested = nested;
	if (dev->pending_release_all) {
		dev->pending_release_all = false;
		mx5_pages_released_all(dev);
	}
	int rc = 0;
	while (dev->pending_pages && rc == 0) {
		int64_t n = dev->pending_pages;
		int32_t c = n > INT32_MAX ? INT32_MAX : n < INT32_MIN ? INT32_MIN : (int32_t)n;
		dev->pending_pages -= c;
		rc = mx5_pages_request(dev, c);
		/* Nothing was sent (second slot missing, busy or still owned after a
		 * timeout): keep the request for after the command.  Any other failure is
		 * the firmware's answer, dropped as Linux does (give_pages_dropped). */
		if (nested && (rc == -EBUSY || rc == -EOPNOTSUPP || rc == -EDEADLK || rc == -EPERM))
			dev->pending_pages += c;
		else if (nested && rc == 0)
			dev->pages.st.served_in_wait++;
	}
	dev->cmd_nested = false;
	dev->in_page_service = false;
	return rc;
}

int mx5_device_async_fd(struct mx5_device *dev)
{
	return shim_irq_fd(dev->shim, dev->async_eq.vector);
}

int mx5_device_poll_events(struct mx5_device *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->health != MX5_HEALTH_OK)
		return 0;
	if (dev->remote)
		return mx5_remote_events(dev);
	int fd = shim_irq_fd(dev->shim, dev->async_eq.vector);
	/* eventfd is nonblocking only if the shim made it so: poll before reading */
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (fd >= 0 && poll(&p, 1, 0) > 0)
		mx5_irq_ack(fd);
	int n = mx5_async_eq_drain(dev, false);
	mx5_drain_shared_comp_eqs(dev);
	int rc = mx5_serve_pending_pages(dev, false);
	return rc ? rc : n;
}

/* Hook for mx5_exec: serve page requests still pending after a command returned
 * (polling mode, a single-entry queue, or a second slot that was not usable). */
void mx5_after_cmd(struct mx5_device *dev)
{
	if (dev->pending_pages || dev->pending_release_all)
		mx5_serve_pending_pages(dev, false);
}

/* cmdq wait callback in event mode: sleep on the async vector, then drain. */
static int mx5_cmd_wait(void *ctx, unsigned timeout_ms)
{
	struct mx5_device *dev = ctx;
	int fd = shim_irq_fd(dev->shim, dev->async_eq.vector);
	if (fd < 0)
		return -EIO;
	/* Short slices: an EQE may already be in the queue when the interrupt was
	 * consumed by an earlier drain. */
	unsigned slice = timeout_ms < 100 ? timeout_ms : 100;
	if (mx5_async_eq_drain(dev, true) == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)slice);
		if (r < 0)
			return -errno;
		if (r > 0)
			mx5_irq_ack(fd);
		mx5_async_eq_drain(dev, true);
	}
	/* the interrupt this wait may have acknowledged also stood for them */
	mx5_drain_shared_comp_eqs(dev);
	/* The command waited for may be held until these pages arrive: serve them now,
	 * beside it.  A failure stays in dev->err; the command's own wait goes on. */
	mx5_serve_pending_pages(dev, true);
	return 0;
}

int mx5_eq_enable_cmd_events(struct mx5_device *dev)
{
	if (!dev->async_eq.created || shim_irq_fd(dev->shim, dev->async_eq.vector) < 0)
		return -ENODEV;
	cmdq_set_event_mode(dev->cmdq, mx5_cmd_wait, dev);
	dev->cmd_event_mode = true;
	return 0;
}

/* ---- completion EQs ---- */

int mx5_comp_eq_get(struct mx5_device *dev, unsigned vector, struct mx5_eq **out)
{
	if (!dev || !out)
		return -EINVAL;
	if (vector >= dev->ncomp_vectors)
		return mx5_fail(dev, -EINVAL, "completion vector %u: device has %u", vector,
				dev->ncomp_vectors);
	if (!dev->comp_eqs[vector]) {
		struct mx5_eq *eq = calloc(1, sizeof(*eq));
		if (!eq)
			return -ENOMEM;
		if (dev->remote) {
			/* the daemon's completion EQ; its events come through the shim */
			*eq = (struct mx5_eq){ .dev = dev, .eqn = dev->shim->ops->comp_eqn(dev->shim),
					       .vector = 1, .created = true, .remote = true };
			dev->comp_eqs[vector] = eq;
			*out = eq;
			return 0;
		}
		/* vector 0 is the async EQ's; completion vector v uses interrupt v+1 when the
		 * shim has that many, else shares vector 0 */
		unsigned irq = shim_irq_count(dev->shim) > vector + 1 ? vector + 1 : 0;
		int rc = mx5_eq_create(dev, eq, irq, false, 0);
		if (rc) {
			free(eq);
			return rc;
		}
		dev->comp_eqs[vector] = eq;
	}
	*out = dev->comp_eqs[vector];
	return 0;
}

int mx5_eq_fd(struct mx5_eq *eq)
{
	return shim_irq_fd(eq->dev->shim, eq->vector);
}

uint32_t mx5_eq_num(const struct mx5_eq *eq)
{
	return eq->eqn;
}

/* A completion EQE: its CQ's handler runs. */
static void mx5_comp_eqe(struct mx5_device *dev, uint8_t *e, bool unused)
{
	(void)unused;
	if (PRM_GET(eqe, e, event_type) == PRM_EVENT_COMP)
		mx5_cq_dispatch_comp(dev, (uint32_t)PRM_GET(comp_event, PRM_ADDR(eqe, e, event_data),
							     cq_number));
}

int mx5_eq_poll(struct mx5_eq *eq)
{
	if (!eq || !eq->created)
		return -EINVAL;
	struct mx5_device *dev = eq->dev;
	if (dev->health != MX5_HEALTH_OK)
		return 0;
	if (eq->remote)
		return mx5_remote_events(dev);
	int fd = mx5_eq_fd(eq);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (fd >= 0 && poll(&p, 1, 0) > 0)
		mx5_irq_ack(fd);
	/* on the async EQ's vector the acknowledged interrupt may have been for the async
	 * EQ or another completion EQ sharing it: serve them all (mx5_drain_shared_comp_eqs) */
	if (eq->vector == dev->async_eq.vector && dev->async_eq.created) {
		int n = mx5_drain_shared_comp_eqs(dev);
		mx5_async_eq_drain(dev, false);
		mx5_serve_pending_pages(dev, false);
		return n;
	}
	return mx5_eq_consume(dev, eq, mx5_comp_eqe, false);
}
