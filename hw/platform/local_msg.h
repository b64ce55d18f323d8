/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Whole messages between two processes of this machine over an AF_UNIX socket, with a
 * file descriptor passed along (SCM_RIGHTS, unix(7) / unix(4)): what the device daemon
 * (tools/uvd) and its clients (hw/shim/uvd.c, hw/shim/uvd_proto.h) speak.
 *
 * Every message starts with a uint32_t in host byte order that holds the length of the
 * whole message, itself included (uvd_hdr.len).  The receiver sees each message whole,
 * or learns its true length when it was larger than the buffer, whichever system runs:
 *
 * Linux: SOCK_SEQPACKET, which keeps message boundaries; recvmsg(MSG_TRUNC) answers a
 * message's real length and discards what did not fit (unix(7), "MSG_TRUNC").
 * macOS: AF_UNIX has no SOCK_SEQPACKET (xnu bsd/kern/uipc_usrreq.c offers SOCK_STREAM
 * and SOCK_DGRAM), so SOCK_STREAM framed by the length word: the receiver reads the
 * word, then exactly the rest of the message, and reads and discards what does not fit.
 * A sender writes the whole message under a per-descriptor lock, because a blocking
 * stream send may return to the caller's peers part-way (sosend drops the socket's
 * send lock while it waits for room, xnu bsd/kern/uipc_socket.c), and another thread's
 * message must not land inside it.  A length word smaller than the word itself cannot
 * be framed: the receiver answers the 4 bytes as the message, which every caller drops
 * as shorter than its header, together with the connection.
 *
 * All functions return as described, or -errno; EINTR is retried inside. */
#ifndef UV_PLATFORM_LOCAL_MSG_H
#define UV_PLATFORM_LOCAL_MSG_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PLAT_LMSG_DONTWAIT 1u   /* fail with -EAGAIN instead of waiting for room or a message */

/* A socket for messages, not yet connected or listening (close-on-exec, no SIGPIPE):
 * fd or -errno. */
int plat_lmsg_socket(void);
/* A connected pair of them: 0 or -errno. */
int plat_lmsg_socketpair(int sv[2]);

/* Send one message, the concatenation of iov[0..iovcnt), whose first 4 bytes are its
 * length; pass_fd >= 0 travels with it.  0, or -errno: -EPIPE once the peer has gone,
 * -EAGAIN with PLAT_LMSG_DONTWAIT when there is no room (nothing of the message was
 * sent then: a peer never sees part of one), -EMSGSIZE for a length word that differs
 * from the bytes given. */
int plat_lmsg_send(int fd, const struct iovec *iov, int iovcnt, int pass_fd, unsigned flags);

/* Receive one message into buf (cap bytes, at least 4).  Answers its whole length,
 * larger than cap when it did not fit (then buf holds its first cap bytes and the rest
 * is gone), 0 when the peer closed, or -errno (-EAGAIN with PLAT_LMSG_DONTWAIT when no
 * message waits).  *fd_out receives a descriptor passed with the message
 * (close-on-exec) or -1; with fd_out NULL one that came is closed. */
ssize_t plat_lmsg_recv(int fd, void *buf, size_t cap, int *fd_out, unsigned flags);

#endif
