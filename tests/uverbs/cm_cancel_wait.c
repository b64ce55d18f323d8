/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A thread blocked in rdma_get_cm_event is cancelled, and the CM is used again: libiscsi
 * 1.19.0's iSER initiator does that on every disconnect (lib/iser.c
 * iser_free_iser_conn_res: pthread_cancel of its cm_thread, no join, then
 * rdma_destroy_id), and the kernel's ucma_get_event waits interruptibly, so the thread
 * goes with nothing held.  librdmacm is dlopen()ed (its headers need not be installed).
 *
 * Three rounds, each: an event channel and an ID, a thread waiting for an event on the
 * channel, pthread_cancel, then rdma_destroy_id and rdma_destroy_event_channel.  Rounds
 * 0 and 2 join the thread (it must have been cancelled), round 1 does not (as libiscsi).
 * Prints "ok" and exits 0 when every call returned; a CM lock left held by the
 * cancelled thread hangs the next call (the test's timeout catches it). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct rdma_event_channel;
struct rdma_cm_event;
struct rdma_cm_id;

#define RDMA_PS_TCP 0x0106 /* rdma-core librdmacm/rdma_cma.h enum rdma_port_space */

static struct {
	struct rdma_event_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rdma_event_channel *);
	int (*create_id)(struct rdma_event_channel *, struct rdma_cm_id **, void *, int);
	int (*destroy_id)(struct rdma_cm_id *);
	int (*get_cm_event)(struct rdma_event_channel *, struct rdma_cm_event **);
} cm;

static void *waiter(void *arg)
{
	struct rdma_cm_event *e;

	/* no event ever comes: only the cancellation ends this */
	cm.get_cm_event(arg, &e);
	return NULL;
}

int main(void)
{
	void *h = dlopen("librdmacm.so.1", RTLD_NOW);

	if (!h) {
		printf("dlopen librdmacm.so.1: %s\n", dlerror());
		return 2;
	}
	cm.create_event_channel = (struct rdma_event_channel * (*)(void)) dlsym(h, "rdma_create_event_channel");
	cm.destroy_event_channel = (void (*)(struct rdma_event_channel *))dlsym(h, "rdma_destroy_event_channel");
	cm.create_id = (int (*)(struct rdma_event_channel *, struct rdma_cm_id **, void *, int))dlsym(h, "rdma_create_id");
	cm.destroy_id = (int (*)(struct rdma_cm_id *))dlsym(h, "rdma_destroy_id");
	cm.get_cm_event = (int (*)(struct rdma_event_channel *, struct rdma_cm_event **))dlsym(h, "rdma_get_cm_event");
	if (!cm.create_event_channel || !cm.destroy_event_channel || !cm.create_id || !cm.destroy_id ||
	    !cm.get_cm_event) {
		printf("librdmacm lacks an rdma_* entry point\n");
		return 2;
	}
	for (int round = 0; round < 3; round++) {
		struct rdma_event_channel *ch = cm.create_event_channel();
		struct rdma_cm_id *id;
		pthread_t t;

		if (!ch || cm.create_id(ch, &id, NULL, RDMA_PS_TCP)) {
			printf("round %d: channel or ID not created\n", round);
			return 1;
		}
		if (pthread_create(&t, NULL, waiter, ch)) {
			printf("round %d: pthread_create failed\n", round);
			return 1;
		}
		usleep(100000); /* the thread is in rdma_get_cm_event's wait by now */
		pthread_cancel(t);
		if (round != 1) {
			void *rv = NULL;

			pthread_join(t, &rv);
			printf("round %d: waiter %s\n", round, rv == PTHREAD_CANCELED ? "cancelled" : "returned");
		}
		printf("round %d: rdma_destroy_id %d\n", round, cm.destroy_id(id));
		fflush(stdout);
		/* libiscsi 1.19.0 never destroys its channel; a joined waiter is gone, so the
		 * channel can go too */
		if (round != 1)
			cm.destroy_event_channel(ch);
	}
	printf("ok\n");
	return 0;
}
