/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Socket calls whose spelling differs between Linux and macOS.
 *
 * Close-on-exec: Linux takes SOCK_CLOEXEC in the type (socket, socketpair, accept4);
 * macOS has neither flag nor accept4 and sets FD_CLOEXEC right after the call.
 * No SIGPIPE on a closed peer: Linux passes MSG_NOSIGNAL per send; macOS has no such
 * flag and sets SO_NOSIGPIPE once on the socket (done here for every stream socket).
 * Don't-fragment: Linux IP_MTU_DISCOVER = IP_PMTUDISC_DO, macOS IP_DONTFRAG; both send
 * DF=1.  The IPv4 ID of those packets is 0 on Linux (ip_select_ident for an
 * unconnected socket) and, on macOS, 0 while sysctl net.inet.ip.rfc6864 is 1, its
 * default (xnu bsd/netinet/ip_output.c gives an atomic datagram ID 0, otherwise a
 * random ID); docs/hardware.md says why the emulator's ICRC cares. */
#ifndef UV_PLATFORM_SOCK_H
#define UV_PLATFORM_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* socket(2), close-on-exec (and SIGPIPE-free for SOCK_STREAM): fd or -errno. */
int plat_socket(int domain, int type, int protocol);
/* socketpair(2), the same way: 0 or -errno. */
int plat_socketpair(int domain, int type, int protocol, int sv[2]);
/* accept(2) with no peer address, the same way: fd or -errno. */
int plat_accept(int lfd);
/* send(2) that never raises SIGPIPE (EPIPE instead); as send, errno set. */
ssize_t plat_send(int fd, const void *buf, size_t len, int flags);
/* Send this UDP socket's IPv4 packets with DF=1: 0 or -errno. */
int plat_sock_set_df(int fd);

/* One datagram of a batch: the message and, after the call, its length. */
struct plat_dgram {
	struct msghdr hdr;
	unsigned int len;            /* bytes received or sent */
};

/* Several datagrams in one system call where the system has one (Linux recvmmsg(2),
 * sendmmsg(2)); elsewhere one recvmsg/sendmsg each, stopping at the first failure.
 * recv: up to n datagrams, the first as `flags` says (MSG_DONTWAIT: none waits), the
 * rest only if already queued; send: the first n, in order.  How many were done (at
 * least 1), or -errno when the first one failed. */
int plat_recv_many(int fd, struct plat_dgram *v, unsigned n, int flags);
int plat_send_many(int fd, struct plat_dgram *v, unsigned n);

/* UDP segmentation (Linux UDP_SEGMENT, udp(7), since 4.18): one sendmsg whose payload
 * the kernel cuts into datagrams of `seg` bytes each (the last may be shorter), one
 * trip through the IP layer for all of them.  Writes that control message at c (room:
 * PLAT_UDP_SEGMENT_SPACE) and returns its space, or 0 where the system has none
 * (macOS): send the datagrams one by one. */
#define PLAT_UDP_SEGMENT_SPACE CMSG_SPACE(sizeof(unsigned short))
#define PLAT_UDP_SEGMENT_MAX_SEGS 64          /* UDP_MAX_SEGMENTS in Linux's include/linux/udp.h */
#define PLAT_UDP_SEGMENT_MAX_BYTES 65507u     /* one IPv4 datagram's UDP payload at most */
size_t plat_udp_segment_cmsg(struct cmsghdr *c, unsigned short seg);
/* Whether this UDP socket's kernel segments (Linux: getsockopt UDP_SEGMENT answers;
 * before 4.18 it does not, and the control message would be ignored). */
bool plat_udp_segment_supported(int fd);

/* UDP receive coalescing (Linux UDP_GRO, udp(7), since 5.0): a socket that asks for it
 * may get several datagrams of one flow as one, their payloads back to back, with a
 * control message saying how long each was (the last may be shorter).  On loopback it
 * is what a segmented send (above) becomes: the kernel hands the sender's run over
 * whole instead of cutting it up (Linux net/ipv4/udp.c, udp_unexpected_gso).  Enable:
 * 0, or -errno where the system has none (macOS: every datagram comes alone).
 * Segment: the segment size a received control message gives, or 0 when c is not
 * that message. */
int plat_udp_gro_enable(int fd);
unsigned plat_udp_gro_segment(const struct cmsghdr *c);

#endif
