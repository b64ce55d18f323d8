/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One side of an RC connection made with librdmacm that, once connected, only waits
 * for its next CM event: the idle peer of the kill tests (tests/uverbs/test_rdma_cm.py,
 * and in the VM against Linux's kernel rdma_cm, tests/vm/test_rdma_cm.sh).
 *
 *   cm_idle_peer server ADDR PORT
 *   cm_idle_peer client SERVER PORT [fork-child | exec-sleep | close-pipes]
 *
 * librdmacm's synchronous calls (rdma_getaddrinfo, rdma_create_ep, rdma_listen,
 * rdma_get_request, rdma_accept, rdma_connect: rdma-core librdmacm/man), with the QP
 * they create.  Prints "listening" (server), "established" once connected, then, when
 * the next event comes on the ID's own channel, "event NAME" and exits 0 if it is
 * DISCONNECTED, 1 otherwise; 2 for a failed call.  Nothing is ever posted on the QP:
 * only the CM can tell this side that its peer is gone.  The caller bounds the wait.
 * With fork-child, once connected the client forks a child that exits at once
 * (exit: destructors run) and prints "child exited" when it has.  With exec-sleep it
 * execs /bin/sleep 30 once connected; with close-pipes it closes every pipe it has and
 * prints "closed N pipes".
 *
 * librdmacm is dlopen()ed (its headers need not be installed).  The few fields read
 * are at the offsets of rdma-core's librdmacm/rdma_cma.h: rdma_cm_id's channel (the
 * second pointer), rdma_cm_event's event (after two pointers). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define RDMA_PS_TCP 0x0106              /* enum rdma_port_space */
#define RAI_PASSIVE 0x00000001
#define RDMA_CM_EVENT_DISCONNECTED 10   /* enum rdma_cm_event_type */

struct rdma_addrinfo {                  /* rdma_cma.h */
	int ai_flags, ai_family, ai_qp_type, ai_port_space;
	socklen_t ai_src_len, ai_dst_len;
	struct sockaddr *ai_src_addr, *ai_dst_addr;
	char *ai_src_canonname, *ai_dst_canonname;
	size_t ai_route_len;
	void *ai_route;
	size_t ai_connect_len;
	void *ai_connect;
	struct rdma_addrinfo *ai_next;
};
struct rdma_cm_id_head {                /* the start of struct rdma_cm_id */
	struct ibv_context *verbs;
	void *channel;
};
struct rdma_cm_event_head {             /* the start of struct rdma_cm_event */
	void *id, *listen_id;
	int event, status;
};

static struct {
	int (*getaddrinfo)(const char *, const char *, const struct rdma_addrinfo *, struct rdma_addrinfo **);
	int (*create_ep)(void **, struct rdma_addrinfo *, struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*listen)(void *, int);
	int (*get_request)(void *, void **);
	int (*accept)(void *, void *);
	int (*connect)(void *, void *);
	int (*get_cm_event)(void *, struct rdma_cm_event_head **);
	int (*ack_cm_event)(struct rdma_cm_event_head *);
	const char *(*event_str)(int);
} cm;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "cm_idle_peer: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void check(int rc, const char *what)
{
	if (rc) {
		perror(what);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: cm_idle_peer server ADDR PORT | client SERVER PORT [fork-child | exec-sleep | close-pipes]\n");
		return 2;
	}
	bool server = !strcmp(argv[1], "server");
	void *h = dlopen("librdmacm.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "cm_idle_peer: %s\n", dlerror());
		return 2;
	}
	cm.getaddrinfo = sym(h, "rdma_getaddrinfo");
	cm.create_ep = sym(h, "rdma_create_ep");
	cm.listen = sym(h, "rdma_listen");
	cm.get_request = sym(h, "rdma_get_request");
	cm.accept = sym(h, "rdma_accept");
	cm.connect = sym(h, "rdma_connect");
	cm.get_cm_event = sym(h, "rdma_get_cm_event");
	cm.ack_cm_event = sym(h, "rdma_ack_cm_event");
	cm.event_str = sym(h, "rdma_event_str");

	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP, .ai_flags = server ? RAI_PASSIVE : 0 }, *res;
	check(cm.getaddrinfo(argv[2], argv[3], &hints, &res), "rdma_getaddrinfo");
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	void *id, *lid;
	if (server) {
		check(cm.create_ep(&lid, res, NULL, &qa), "rdma_create_ep");
		check(cm.listen(lid, 1), "rdma_listen");
		printf("listening\n");
		fflush(stdout);
		check(cm.get_request(lid, &id), "rdma_get_request");
		check(cm.accept(id, NULL), "rdma_accept");
	} else {
		check(cm.create_ep(&id, res, NULL, &qa), "rdma_create_ep");
		check(cm.connect(id, NULL), "rdma_connect");
	}
	printf("established\n");
	fflush(stdout);
	if (argc > 4 && !strcmp(argv[4], "exec-sleep")) {
		/* Linux's librdmacm opens its rdma_cm file O_CLOEXEC: an exec closes it and
		 * the kernel ends the connections; the process lives on as sleep(1) */
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		perror("execl /bin/sleep");
		return 2;
	}
	if (argc > 4 && !strcmp(argv[4], "close-pipes")) {
		/* a stray close, as a buggy program or a closefrom() might do: every pipe of
		 * the process (the CM's guardian watches one end) */
		int closed = 0;
		for (int fd = 3; fd < 1024; fd++) {
			char link[64], target[64];
			ssize_t n;
			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			n = readlink(link, target, sizeof(target) - 1);
			if (n > 0 && (target[n] = 0, !strncmp(target, "pipe:", 5)) && !close(fd))
				closed++;
		}
		printf("closed %d pipes\n", closed);
		fflush(stdout);
	}
	if (argc > 4 && !strcmp(argv[4], "fork-child")) {
		pid_t pid = fork();
		if (pid == 0)
			exit(0);   /* atexit handlers and the libraries' destructors run */
		waitpid(pid, NULL, 0);
		printf("child exited\n");
		fflush(stdout);
	}
	struct rdma_cm_event_head *ev;
	check(cm.get_cm_event(((struct rdma_cm_id_head *)id)->channel, &ev), "rdma_get_cm_event");
	int type = ev->event;
	printf("event %s\n", cm.event_str(type));
	fflush(stdout);
	cm.ack_cm_event(ev);
	return type == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1;
}
