/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What local_msg_linux.c and local_msg_macos.c share: the length-word rule of a message
 * and the SCM_RIGHTS control message that carries one descriptor (unix(7) / unix(4),
 * cmsg(3)).  Not for other callers: hw/platform/local_msg.h is the interface. */
#ifndef UV_PLATFORM_LOCAL_MSG_COMMON_H
#define UV_PLATFORM_LOCAL_MSG_COMMON_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Room for one SCM_RIGHTS descriptor, aligned for struct cmsghdr. */
union plat_lmsg_cmsg {
	struct cmsghdr c;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* The message iov[0..iovcnt) is framed right: at least the 4-byte length word, which
 * holds the total of the iov lengths (set in *total).  0 or -EMSGSIZE. */
int plat_lmsg_frame_check(const struct iovec *iov, int iovcnt, size_t *total);

/* pass_fd >= 0: attach it to m as SCM_RIGHTS, in cm.  Otherwise m is left alone. */
void plat_lmsg_attach_fd(struct msghdr *m, union plat_lmsg_cmsg *cm, int pass_fd);

/* Take the SCM_RIGHTS descriptors a received r carries: the last one ends in *got,
 * every other one (and a previous *got) is closed. */
void plat_lmsg_take_fds(struct msghdr *r, int *got);

#endif
