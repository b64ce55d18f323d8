/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The part of hw/platform/local_msg.h that both systems' implementations share
 * (local_msg_common.h); compiled on Linux and on macOS. */
#include "hw/platform/local_msg_common.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int plat_lmsg_frame_check(const struct iovec *iov, int iovcnt, size_t *total)
{
	uint32_t len = 0;

	*total = 0;
	for (int i = 0; i < iovcnt; i++)
		*total += iov[i].iov_len;
	if (iovcnt < 1 || iov[0].iov_len < sizeof(len))
		return -EMSGSIZE;
	memcpy(&len, iov[0].iov_base, sizeof(len));
	return len == *total ? 0 : -EMSGSIZE;
}

void plat_lmsg_attach_fd(struct msghdr *m, union plat_lmsg_cmsg *cm, int pass_fd)
{
	if (pass_fd < 0)
		return;
	memset(cm, 0, sizeof(*cm));
	m->msg_control = cm->buf;
	m->msg_controllen = sizeof(cm->buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
}

void plat_lmsg_take_fds(struct msghdr *r, int *got)
{
	/* One SCM_RIGHTS message may carry several descriptors, all installed in this
	 * process (unix(7)): every one but the last is closed, or a peer that sends two
	 * leaks one here per message. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(r); c; c = CMSG_NXTHDR(r, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int one;
			memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*got >= 0)
				close(*got);
			*got = one;
		}
	}
}
