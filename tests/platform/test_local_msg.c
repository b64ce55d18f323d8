/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hw/platform/local_msg.h: whole messages between processes whichever socket carries
 * them (SOCK_SEQPACKET on Linux, SOCK_STREAM framed by the length word on macOS): each
 * arrives whole and in order, a too-large one answers its real length and leaves the
 * next intact, a descriptor travels with its message, a closed peer reads as 0. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hw/platform/local_msg.h"

struct msg {
	uint32_t len;
	uint32_t tag;
};

static int send_msg(int fd, uint32_t tag, const void *body, size_t blen, int pass_fd)
{
	struct msg h = { .len = (uint32_t)(sizeof(h) + blen), .tag = tag };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, blen } };
	return plat_lmsg_send(fd, iov, 2, pass_fd, 0);
}

static void pair(int sv[2])
{
	cr_assert_eq(plat_lmsg_socketpair(sv), 0);
}

Test(local_msg, message_arrives_whole_with_its_length)
{
	int sv[2];
	pair(sv);
	char body[100];
	memset(body, 0x5a, sizeof(body));
	cr_assert_eq(send_msg(sv[0], 7, body, sizeof(body), -1), 0);
	uint8_t buf[256];
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), NULL, 0), (ssize_t)(8 + sizeof(body)));
	struct msg h;
	memcpy(&h, buf, sizeof(h));
	cr_assert_eq(h.tag, 7);
	cr_assert_eq(memcmp(buf + 8, body, sizeof(body)), 0);
	close(sv[0]);
	close(sv[1]);
}

Test(local_msg, larger_message_answers_real_length_and_next_is_intact)
{
	int sv[2];
	pair(sv);
	char big[1000], small[4] = { 1, 2, 3, 4 };
	memset(big, 0x11, sizeof(big));
	cr_assert_eq(send_msg(sv[0], 1, big, sizeof(big), -1), 0);
	cr_assert_eq(send_msg(sv[0], 2, small, sizeof(small), -1), 0);
	uint8_t buf[64];
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), NULL, 0), (ssize_t)(8 + sizeof(big)));
	cr_assert_eq(buf[8], 0x11);
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), NULL, 0), 12);
	struct msg h;
	memcpy(&h, buf, sizeof(h));
	cr_assert_eq(h.tag, 2);
	cr_assert_eq(memcmp(buf + 8, small, 4), 0);
	close(sv[0]);
	close(sv[1]);
}

Test(local_msg, passed_descriptor_arrives_with_its_message)
{
	int sv[2], p[2];
	pair(sv);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(send_msg(sv[0], 3, "x", 1, -1), 0);
	cr_assert_eq(send_msg(sv[0], 4, "y", 1, p[1]), 0);
	uint8_t buf[64];
	int fd = 123;
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), &fd, 0), 9);
	cr_assert_eq(fd, -1, "the descriptor came with the first message");
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), &fd, 0), 9);
	cr_assert_geq(fd, 0);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(write(fd, "z", 1), 1);
	char c = 0;
	cr_assert_eq(read(p[0], &c, 1), 1);
	cr_assert_eq(c, 'z');
	close(fd);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

Test(local_msg, length_word_that_differs_from_bytes_is_refused)
{
	int sv[2];
	pair(sv);
	struct msg h = { .len = 100, .tag = 0 };
	struct iovec iov = { &h, sizeof(h) };
	cr_assert_eq(plat_lmsg_send(sv[0], &iov, 1, -1, 0), -EMSGSIZE);
	uint8_t buf[16];
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), NULL, PLAT_LMSG_DONTWAIT), -EAGAIN);
	close(sv[0]);
	close(sv[1]);
}

Test(local_msg, closed_peer_reads_as_zero_and_send_fails_with_epipe)
{
	int sv[2];
	pair(sv);
	close(sv[0]);
	uint8_t buf[16];
	cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), NULL, 0), 0);
	cr_assert_eq(send_msg(sv[1], 1, "a", 1, -1), -EPIPE);
	close(sv[1]);
}

/* Several threads of one process send on one socket, each message larger than the
 * socket's buffer: each arrives whole, never interleaved with another. */
#define SENDERS 4
#define PER 50
#define BODY (96 * 1024)
static int shared_fd;
static void *sender(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	char *body = malloc(BODY);
	memset(body, (int)id, BODY);
	for (int i = 0; i < PER; i++)
		if (send_msg(shared_fd, id, body, BODY, -1))
			break;
	free(body);
	return NULL;
}

Test(local_msg, concurrent_senders_never_interleave)
{
	int sv[2];
	pair(sv);
	shared_fd = sv[0];
	pthread_t t[SENDERS];
	for (uintptr_t i = 0; i < SENDERS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, sender, (void *)(i + 1)), 0);
	uint8_t *buf = malloc(BODY + 64);
	for (int k = 0; k < SENDERS * PER; k++) {
		ssize_t n = plat_lmsg_recv(sv[1], buf, BODY + 64, NULL, 0);
		cr_assert_eq(n, 8 + BODY);
		struct msg h;
		memcpy(&h, buf, sizeof(h));
		cr_assert(h.tag >= 1 && h.tag <= SENDERS);
		for (size_t j = 8; j < 8 + BODY; j += 4093)
			cr_assert_eq(buf[j], h.tag, "message %d byte %zu", k, j);
		cr_assert_eq(buf[8 + BODY - 1], h.tag);
	}
	for (int i = 0; i < SENDERS; i++)
		pthread_join(t[i], NULL);
	free(buf);
	close(sv[0]);
	close(sv[1]);
}

/* Descriptors of this process now open, counted among the first 1024. */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* A peer may put several descriptors in one message: one reaches the caller, and the
 * others are closed, not left open in the receiver. */
Test(local_msg, extra_descriptors_in_one_message_are_closed)
{
	int sv[2];
	pair(sv);
	int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert(a >= 0 && b >= 0);
	struct msg h = { .len = sizeof(h), .tag = 9 };
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	memset(&cm, 0, sizeof(cm));
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	int two[2] = { a, b };
	memcpy(CMSG_DATA(c), two, sizeof(two));
	int before = open_fds();
	for (int i = 0; i < 5; i++)
		cr_assert_eq(sendmsg(sv[0], &m, 0), (ssize_t)sizeof(h));
	for (int i = 0; i < 5; i++) {
		uint8_t buf[64];
		int got = -1;
		cr_assert_eq(plat_lmsg_recv(sv[1], buf, sizeof(buf), &got, 0), (ssize_t)sizeof(h));
		cr_assert_geq(got, 0, "no descriptor reached the caller");
		close(got);
	}
	cr_assert_eq(open_fds(), before, "%d descriptors left open by 5 messages of two", open_fds() - before);
	close(a);
	close(b);
	close(sv[0]);
	close(sv[1]);
}
