/* The device daemon's protocol (tools/uvd is the server, hw/shim/uvd.c the client).
 *
 * Two AF_UNIX connections of whole messages per client (hw/platform/local_msg.h:
 * SOCK_SEQPACKET on Linux, SOCK_STREAM framed by uvd_hdr.len on macOS):
 *  - the control socket, at the daemon's path: one request, one reply, in order;
 *  - the event socket, a socketpair the daemon hands over in the HELLO reply
 *    (SCM_RIGHTS): the client sends UAR stores (doorbells, BlueFlame bursts, CQ arms)
 *    on it without waiting, and the daemon sends the events it routed to this client.
 *
 * Every message starts with struct uvd_hdr, whose len is the whole message; the
 * receiver reads into a buffer of UVD_MAX_MSG bytes, drops a truncated message
 * (plat_lmsg_recv answers more than the buffer) and one whose len differs from what arrived, and checks each payload's
 * size for its op before it reads a field.  A client that breaks the protocol is
 * disconnected and its objects destroyed.  Fields are host order: both ends run on
 * one machine.  Reply rc: 0 or -errno.
 */
#ifndef UVERBS_HW_SHIM_UVD_PROTO_H
#define UVERBS_HW_SHIM_UVD_PROTO_H

#include <stdint.h>

#include "hw/shim/shim.h"

#define UVD_VERSION 1u
#define UVD_MAX_MSG (256u * 1024u)
#define UVD_MSG_LEN 192u           /* error text in a reply */
#define UVD_MAX_SEGS 4096u         /* IOVA segments in one PIN reply */
#define UVD_MAX_STORE 512u         /* bytes of one UAR store (a BlueFlame register) */
#define UVD_MAX_ADDRS 8u

enum uvd_op {
	UVD_OP_HELLO = 1,      /* uvd_hello -> uvd_hello_rep + the event socket */
	UVD_OP_CMD = 2,        /* uvd_cmd + input -> uvd_cmd_rep + output */
	UVD_OP_READ = 3,       /* uvd_read -> uvd_read_rep: a register of the init segment */
	UVD_OP_DMA_ALLOC = 4,  /* uvd_dma_alloc -> uvd_dma_rep + a memfd of the memory */
	UVD_OP_DMA_FREE = 5,   /* uvd_id */
	UVD_OP_PIN = 6,        /* uvd_pin -> uvd_pin_rep + segments */
	UVD_OP_UNPIN = 7,      /* uvd_id */
	UVD_OP_PORT_ADDRS = 8, /* -> uvd_addrs_rep */
	UVD_OP_NEIGH = 9,      /* uvd_neigh -> uvd_neigh_rep */
	UVD_OP_STORE = 16,     /* event socket, client -> daemon: uvd_store + bytes */
	UVD_OP_EVENT = 17,     /* event socket, daemon -> client: struct shim_remote_event */
};

struct uvd_hdr {
	uint32_t len;          /* whole message, header included */
	uint16_t op;
	uint16_t flags;
	int32_t rc;            /* replies */
	uint32_t seq;          /* echoed in the reply */
};

struct uvd_hello {
	uint32_t version;
	uint32_t pad;
};
struct uvd_hello_rep {
	uint32_t version;
	uint32_t page_size;
	uint64_t bar_len;
	uint32_t comp_eqn;
	int32_t daemon_pid;
	uint32_t uar_page_bytes;
	uint32_t pad;
	struct shim_pci_info pci;
};

struct uvd_cmd {
	uint32_t inlen, outlen;
	/* inlen bytes of command input follow */
};
struct uvd_cmd_rep {
	uint8_t status;
	uint8_t pad[3];
	uint32_t syndrome;
	uint32_t outlen;
	uint32_t pad2;
	char msg[UVD_MSG_LEN];
	/* outlen bytes of command output follow */
};

struct uvd_read {
	uint64_t off;
	uint32_t size;
	uint32_t pad;
};
struct uvd_read_rep {
	uint64_t val;
};

struct uvd_dma_alloc {
	uint64_t len, align;
};
struct uvd_dma_rep {
	uint64_t id, iova, len;
};

struct uvd_id {
	uint64_t id;
};

struct uvd_pin {
	uint64_t va, len;
};
struct uvd_pin_rep {
	uint64_t id;
	uint32_t nseg;
	uint32_t readonly;
	/* nseg struct shim_iova_seg follow */
};

struct uvd_addrs_rep {
	uint32_t n;
	uint32_t pad;
	uint8_t addrs[UVD_MAX_ADDRS][16];
};

struct uvd_neigh {
	uint8_t addr[16];
};
struct uvd_neigh_rep {
	uint8_t mac[6];
	uint8_t pad[2];
};

struct uvd_store {
	uint64_t off;          /* BAR0 offset, inside one of the client's UAR pages */
	uint32_t size;         /* bytes that follow, 1..UVD_MAX_STORE */
	uint32_t op;           /* enum shim_mmio_op: SHIM_MMIO_WRITE or SHIM_MMIO_WC_WRITE */
};

_Static_assert(sizeof(struct uvd_hdr) == 16, "uvd_hdr layout");
_Static_assert(sizeof(struct uvd_cmd_rep) == 16 + UVD_MSG_LEN, "uvd_cmd_rep layout");
_Static_assert(sizeof(struct uvd_store) == 16, "uvd_store layout");

/* Where a daemon listens when none is named: $UVERBS_RUN_DIR, default
 * /tmp/uverbs-<uid>, file "uvd.sock". */
#define UVD_SOCK_NAME "uvd.sock"

#endif
