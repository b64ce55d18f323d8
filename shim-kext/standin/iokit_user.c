/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IOKit stand-in's user half: what IOKitLib, Mach and libdispatch give a macOS
 * process, as far as hw/shim/kext.c uses them, on Linux (README.md beside this file).
 *
 * Objects (services, iterators, connections, notification ports) are numbered like Mach
 * port names.  IOConnectCall*Method carry their arguments as IOKitLib.c does: up to
 * 16 scalars (io_scalar_inband64_t; more and the MIG stub refuses the message) and
 * structures in the message up to 4096 bytes (io_struct_inband_t), larger ones as
 * out-of-line memory descriptors, which the kext then sees as
 * structureInputDescriptor/structureOutputDescriptor.  IOConnectMapMemory64 answers
 * kIOReturnBadArgument for any mapping the kernel refused (xnu
 * iokit/Kernel/IOUserClient.cpp, is_io_connect_map_memory_into_task).  A serial
 * dispatch queue is one thread running work in order.
 *
 * The kernel is in this process (kext_standin.c), or, with UVERBS_KEXT_STANDIN_KERNEL
 * naming its socket, in the stand-in kernel daemon (kerneld.c), reached through
 * kernel_client.c: then services and connections name the daemon's, and mappings are
 * of its shared memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shim-kext/include/uvshim_abi.h"
#include "shim-kext/standin/kernel_client.h"
#include "shim-kext/standin/standin.h"

#define STANDIN_TASK ((mach_port_t)0x103)   /* mach_task_self(): one task per process */
/* A name is Mach's MACH_PORT_MAKE(index, generation): the entry's index above 8 bits of
 * generation, which steps by 4 each time the entry is reused (xnu osfmk/mach/port.h
 * MACH_PORT_MAKE, osfmk/ipc/ipc_entry.h IE_BITS_GEN_ONE), so a name held after its
 * object is gone never names the next object in that entry: a late interrupt callout
 * for a closed connection's notification port finds no port, as a message to a dead
 * receive right is dropped, instead of being delivered to a new port in the same slot
 * (shim_test_kext_standin: a use-after-free of the closed device's vector). */
#define STANDIN_FIRST_INDEX 0x10u
#define STANDIN_FIRST_GEN 0x03u
#define STANDIN_GEN_STEP 0x04u
#define STANDIN_MAX_OBJECTS 1024u

enum obj_kind { OBJ_FREE = 0, OBJ_ITERATOR, OBJ_SERVICE, OBJ_CONNECT, OBJ_PORT };

struct standin_iter {
	unsigned next, count;
};

struct IONotificationPort {
	mach_port_t name;
	dispatch_queue_t queue;
};

struct obj {
	enum obj_kind kind;
	union {
		struct standin_iter iter;
		struct standin_kext *kext;
		struct standin_client *client;
		struct IONotificationPort *port;
	} u;
	/* with the kernel in its own process: a service's index, a connection's name there */
	bool remote;
	unsigned index;
	uint32_t rconn;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj g_obj[STANDIN_MAX_OBJECTS];
static mach_port_t g_name[STANDIN_MAX_OBJECTS];   /* each entry's current name, 0 before first use */

mach_port_t mach_task_self(void)
{
	return STANDIN_TASK;
}

static mach_port_t obj_new(enum obj_kind kind)
{
	for (unsigned i = 0; i < STANDIN_MAX_OBJECTS; i++)
		if (g_obj[i].kind == OBJ_FREE) {
			unsigned gen = g_name[i] ? ((g_name[i] & 0xffu) + STANDIN_GEN_STEP) & 0xffu : STANDIN_FIRST_GEN;

			memset(&g_obj[i], 0, sizeof(g_obj[i]));
			g_obj[i].kind = kind;
			g_name[i] = ((STANDIN_FIRST_INDEX + i) << 8) | gen;
			return g_name[i];
		}
	return MACH_PORT_NULL;
}

static struct obj *obj_get(mach_port_t name, enum obj_kind kind)
{
	unsigned i = (name >> 8) - STANDIN_FIRST_INDEX;

	if ((name >> 8) < STANDIN_FIRST_INDEX || i >= STANDIN_MAX_OBJECTS || g_name[i] != name)
		return NULL;
	struct obj *o = &g_obj[i];
	return o->kind == kind ? o : NULL;
}

/* ---- libdispatch: a serial queue ---- */

struct work {
	struct work *next;
	dispatch_function_t fn;
	void *ctx;
	void (*callout)(void *, IOReturn, void **, uint32_t);
	void *refcon;
	void *args[UVSHIM_IRQ_NARGS];
	uint32_t nargs;
	bool *done;
};

struct uvshim_standin_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct work *head, *tail;
	unsigned refs;
	bool stop;
	pthread_t thread;
};

static void *queue_main(void *arg)
{
	struct uvshim_standin_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		struct work *w = q->head;
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->lock);
		if (w->fn)
			w->fn(w->ctx);
		else
			w->callout(w->refcon, kIOReturnSuccess, w->args, w->nargs);
		pthread_mutex_lock(&q->lock);
		if (w->done) {
			*w->done = true;
			pthread_cond_broadcast(&q->cond);
		}
		free(w);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

dispatch_queue_t dispatch_queue_create(const char *label, dispatch_queue_attr_t attr)
{
	struct uvshim_standin_queue *q = calloc(1, sizeof(*q));

	(void)label;
	(void)attr;
	if (!q)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->refs = 1;
	if (pthread_create(&q->thread, NULL, queue_main, q)) {
		free(q);
		return NULL;
	}
	return q;
}

static void queue_push(struct uvshim_standin_queue *q, struct work *w)
{
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void dispatch_sync_f(dispatch_queue_t q, void *ctx, dispatch_function_t fn)
{
	bool done = false;
	struct work *w = calloc(1, sizeof(*w));

	if (!q || !w) {
		free(w);
		return;
	}
	w->fn = fn;
	w->ctx = ctx;
	w->done = &done;
	queue_push(q, w);
	pthread_mutex_lock(&q->lock);
	while (!done)
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

static void queue_release(struct uvshim_standin_queue *q)
{
	bool last;

	pthread_mutex_lock(&q->lock);
	last = --q->refs == 0;
	if (last) {
		q->stop = true;
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	if (!last)
		return;
	pthread_join(q->thread, NULL);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
}

void dispatch_release(dispatch_queue_t q)
{
	if (q)
		queue_release(q);
}

/* ---- notification ports ---- */

IONotificationPortRef IONotificationPortCreate(mach_port_t mainPort)
{
	struct IONotificationPort *p = calloc(1, sizeof(*p));

	(void)mainPort;
	if (!p)
		return NULL;
	pthread_mutex_lock(&g_lock);
	p->name = obj_new(OBJ_PORT);
	if (p->name != MACH_PORT_NULL)
		obj_get(p->name, OBJ_PORT)->u.port = p;
	pthread_mutex_unlock(&g_lock);
	if (p->name == MACH_PORT_NULL) {
		free(p);
		return NULL;
	}
	return p;
}

void IONotificationPortDestroy(IONotificationPortRef p)
{
	struct obj *o;

	if (!p)
		return;
	pthread_mutex_lock(&g_lock);
	o = obj_get(p->name, OBJ_PORT);
	if (o)
		o->kind = OBJ_FREE;
	pthread_mutex_unlock(&g_lock);
	if (p->queue)
		queue_release(p->queue);
	free(p);
}

mach_port_t IONotificationPortGetMachPort(IONotificationPortRef p)
{
	return p ? p->name : MACH_PORT_NULL;
}

void IONotificationPortSetDispatchQueue(IONotificationPortRef p, dispatch_queue_t q)
{
	if (!p || !q)
		return;
	pthread_mutex_lock(&q->lock);
	q->refs++;   /* the port keeps its queue, as libdispatch retains it */
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_lock(&g_lock);
	p->queue = q;
	pthread_mutex_unlock(&g_lock);
}

void standin_port_send(mach_port_t port, const uint64_t *ref, const uint64_t *args, uint32_t nargs)
{
	struct obj *o;
	struct work *w = calloc(1, sizeof(*w));

	if (!w)
		return;
	w->callout = (void (*)(void *, IOReturn, void **, uint32_t))(uintptr_t)ref[kIOAsyncCalloutFuncIndex];
	w->refcon = (void *)(uintptr_t)ref[kIOAsyncCalloutRefconIndex];
	w->nargs = nargs < UVSHIM_IRQ_NARGS ? nargs : UVSHIM_IRQ_NARGS;
	for (uint32_t i = 0; i < w->nargs; i++)
		w->args[i] = (void *)(uintptr_t)args[i];
	pthread_mutex_lock(&g_lock);
	o = obj_get(port, OBJ_PORT);
	if (o && o->u.port->queue && w->callout) {
		queue_push(o->u.port->queue, w);
		w = NULL;
	}
	pthread_mutex_unlock(&g_lock);
	free(w);   /* a dead port, or one nobody serves: the message is lost */
}

/* ---- services ---- */

struct __CFDictionary {
	char class_name[64];
};

CFMutableDictionaryRef IOServiceMatching(const char *name)
{
	struct __CFDictionary *d = calloc(1, sizeof(*d));

	if (d && name)
		strncpy(d->class_name, name, sizeof(d->class_name) - 1);
	return d;
}

kern_return_t IOServiceGetMatchingServices(mach_port_t mainPort, CFDictionaryRef matching, io_iterator_t *existing)
{
	unsigned n;
	mach_port_t it;

	(void)mainPort;
	if (!matching || !existing)
		return kIOReturnBadArgument;
	/* The dictionary is consumed (IOKitLib.h: "one reference is consumed"). */
	if (strcmp(matching->class_name, UVSHIM_SERVICE_CLASS) != 0)
		n = 0;
	else if (skc_remote()) {
		kern_return_t kr = skc_count(&n);
		if (kr != KERN_SUCCESS) {
			free((void *)matching);
			return kr;
		}
	} else
		n = standin_kext_count();
	free((void *)matching);
	pthread_mutex_lock(&g_lock);
	it = obj_new(OBJ_ITERATOR);
	if (it != MACH_PORT_NULL)
		obj_get(it, OBJ_ITERATOR)->u.iter = (struct standin_iter){ 0, n };
	pthread_mutex_unlock(&g_lock);
	if (it == MACH_PORT_NULL)
		return kIOReturnNoResources;
	*existing = it;
	return KERN_SUCCESS;
}

io_object_t IOIteratorNext(io_iterator_t iterator)
{
	struct obj *o;
	unsigned index;
	struct standin_kext *k;
	mach_port_t s = MACH_PORT_NULL;

	pthread_mutex_lock(&g_lock);
	o = obj_get(iterator, OBJ_ITERATOR);
	if (!o || o->u.iter.next >= o->u.iter.count) {
		pthread_mutex_unlock(&g_lock);
		return IO_OBJECT_NULL;
	}
	index = o->u.iter.next++;
	pthread_mutex_unlock(&g_lock);
	if (skc_remote()) {
		pthread_mutex_lock(&g_lock);
		s = obj_new(OBJ_SERVICE);
		if (s != MACH_PORT_NULL) {
			obj_get(s, OBJ_SERVICE)->remote = true;
			obj_get(s, OBJ_SERVICE)->index = index;
		}
		pthread_mutex_unlock(&g_lock);
		return s;
	}
	k = standin_kext_get(index);
	if (!k)
		return IO_OBJECT_NULL;
	pthread_mutex_lock(&g_lock);
	s = obj_new(OBJ_SERVICE);
	if (s != MACH_PORT_NULL)
		obj_get(s, OBJ_SERVICE)->u.kext = k;
	pthread_mutex_unlock(&g_lock);
	if (s == MACH_PORT_NULL)
		standin_kext_put(k);
	return s;
}

kern_return_t IOObjectRelease(io_object_t object)
{
	struct obj *o;
	struct standin_kext *k = NULL;

	pthread_mutex_lock(&g_lock);
	if ((o = obj_get(object, OBJ_SERVICE))) {
		k = o->u.kext;
		o->kind = OBJ_FREE;
	} else if ((o = obj_get(object, OBJ_ITERATOR))) {
		o->kind = OBJ_FREE;
	} else {
		pthread_mutex_unlock(&g_lock);
		return kIOReturnBadArgument;
	}
	pthread_mutex_unlock(&g_lock);
	if (k)
		standin_kext_put(k);
	return KERN_SUCCESS;
}

kern_return_t IOServiceOpen(io_service_t service, task_port_t owningTask, uint32_t type, io_connect_t *connect)
{
	struct obj *o;
	struct standin_kext *k;
	struct standin_client *c = NULL;
	struct standin_task task;
	bool remote;
	unsigned index;
	uint32_t rconn = 0;
	IOReturn r;
	mach_port_t name;

	if (!connect)
		return kIOReturnBadArgument;
	*connect = IO_OBJECT_NULL;
	if (owningTask != STANDIN_TASK)
		return kIOReturnBadArgument;
	pthread_mutex_lock(&g_lock);
	o = obj_get(service, OBJ_SERVICE);
	k = o ? o->u.kext : NULL;
	remote = o && o->remote;
	index = o ? o->index : 0;
	pthread_mutex_unlock(&g_lock);
	if (!k && !remote)
		return kIOReturnBadArgument;   /* MIG: not a service object */
	if (remote)
		r = skc_open(index, type, &rconn);
	else {
		standin_task_self(&task);
		r = standin_client_open(k, &task, type, &c);
	}
	if (r != kIOReturnSuccess)
		return r;
	pthread_mutex_lock(&g_lock);
	name = obj_new(OBJ_CONNECT);
	if (name != MACH_PORT_NULL) {
		obj_get(name, OBJ_CONNECT)->u.client = c;
		obj_get(name, OBJ_CONNECT)->remote = remote;
		obj_get(name, OBJ_CONNECT)->rconn = rconn;
	}
	pthread_mutex_unlock(&g_lock);
	if (name == MACH_PORT_NULL) {
		if (remote)
			skc_close(rconn);
		else
			standin_client_close(c);
		return kIOReturnNoResources;
	}
	*connect = name;
	return KERN_SUCCESS;
}

static struct standin_client *client_of(io_connect_t connect)
{
	struct obj *o;
	struct standin_client *c;

	pthread_mutex_lock(&g_lock);
	o = obj_get(connect, OBJ_CONNECT);
	c = o && !o->remote ? o->u.client : NULL;
	pthread_mutex_unlock(&g_lock);
	return c;
}

/* The daemon's name of a connection to a kernel in its own process, or 0. */
static uint32_t rconn_of(io_connect_t connect)
{
	struct obj *o;
	uint32_t r;

	pthread_mutex_lock(&g_lock);
	o = obj_get(connect, OBJ_CONNECT);
	r = o && o->remote ? o->rconn : 0;
	pthread_mutex_unlock(&g_lock);
	return r;
}

kern_return_t IOServiceClose(io_connect_t connect)
{
	struct obj *o;
	struct standin_client *c = NULL;
	uint32_t rconn = 0;

	pthread_mutex_lock(&g_lock);
	o = obj_get(connect, OBJ_CONNECT);
	if (o) {
		c = o->u.client;
		rconn = o->remote ? o->rconn : 0;
		o->kind = OBJ_FREE;
	}
	pthread_mutex_unlock(&g_lock);
	if (rconn)
		return skc_close(rconn);
	if (!c)
		return kIOReturnBadArgument;
	standin_client_close(c);
	return KERN_SUCCESS;
}

/* ---- methods ---- */

/* MIG_ARRAY_TOO_LARGE (mach/mig_errors.h): the stub refuses more scalars than
 * io_scalar_inband64_t holds before any message is sent. */
#define STANDIN_MIG_ARRAY_TOO_LARGE (-307)

static kern_return_t call(mach_port_t connection, uint32_t selector, mach_port_t wake_port, uint64_t *reference,
			  uint32_t referenceCnt, uint32_t inputCnt, const void *inputStruct, size_t inputStructCnt,
			  uint32_t *outputCnt, void *outputStruct, size_t *outputStructCnt)
{
	struct standin_client *c = client_of(connection);
	uint32_t rconn = c ? 0 : rconn_of(connection);
	struct standin_method_args a;
	IOReturn r;

	if (!c && !rconn)
		return kIOReturnBadArgument;
	if (inputCnt > UVSHIM_STANDIN_MAX_SCALARS || (outputCnt && *outputCnt > UVSHIM_STANDIN_MAX_SCALARS))
		return STANDIN_MIG_ARRAY_TOO_LARGE;
	if (wake_port != MACH_PORT_NULL && (!reference || referenceCnt > kOSAsyncRef64Count))
		return kIOReturnBadArgument;
	memset(&a, 0, sizeof(a));
	a.selector = selector;
	a.scalar_in_count = inputCnt;
	a.scalar_out_count = outputCnt ? *outputCnt : 0;
	a.struct_in = inputStruct;
	a.struct_in_size = inputStruct ? inputStructCnt : 0;
	a.struct_in_ool = a.struct_in_size > UVSHIM_STANDIN_INBAND_BYTES;
	a.struct_out = outputStruct;
	a.struct_out_size = outputStruct && outputStructCnt ? *outputStructCnt : 0;
	a.struct_out_ool = a.struct_out_size > UVSHIM_STANDIN_INBAND_BYTES;
	a.wake_port = wake_port;
	a.async_ref = reference;
	a.async_ref_count = wake_port != MACH_PORT_NULL ? referenceCnt : 0;
	r = rconn ? skc_call(rconn, &a) : standin_external_method(c, &a);
	if (outputStructCnt && outputStruct)
		*outputStructCnt = a.struct_out_size;
	if (outputCnt)
		*outputCnt = a.scalar_out_count;
	return r;
}

kern_return_t IOConnectCallMethod(mach_port_t connection, uint32_t selector, const uint64_t *input, uint32_t inputCnt,
				  const void *inputStruct, size_t inputStructCnt, uint64_t *output, uint32_t *outputCnt,
				  void *outputStruct, size_t *outputStructCnt)
{
	(void)input;
	(void)output;
	return call(connection, selector, MACH_PORT_NULL, NULL, 0, inputCnt, inputStruct, inputStructCnt, outputCnt,
		    outputStruct, outputStructCnt);
}

kern_return_t IOConnectCallAsyncMethod(mach_port_t connection, uint32_t selector, mach_port_t wake_port,
				       uint64_t *reference, uint32_t referenceCnt, const uint64_t *input,
				       uint32_t inputCnt, const void *inputStruct, size_t inputStructCnt, uint64_t *output,
				       uint32_t *outputCnt, void *outputStruct, size_t *outputStructCnt)
{
	(void)input;
	(void)output;
	return call(connection, selector, wake_port, reference, referenceCnt, inputCnt, inputStruct, inputStructCnt,
		    outputCnt, outputStruct, outputStructCnt);
}

kern_return_t IOConnectCallStructMethod(mach_port_t connection, uint32_t selector, const void *inputStruct,
					size_t inputStructCnt, void *outputStruct, size_t *outputStructCnt)
{
	return IOConnectCallMethod(connection, selector, NULL, 0, inputStruct, inputStructCnt, NULL, NULL,
				   outputStruct, outputStructCnt);
}

kern_return_t IOConnectCallAsyncStructMethod(mach_port_t connection, uint32_t selector, mach_port_t wake_port,
					     uint64_t *reference, uint32_t referenceCnt, const void *inputStruct,
					     size_t inputStructCnt, void *outputStruct, size_t *outputStructCnt)
{
	return IOConnectCallAsyncMethod(connection, selector, wake_port, reference, referenceCnt, NULL, 0,
					inputStruct, inputStructCnt, NULL, NULL, outputStruct, outputStructCnt);
}

kern_return_t IOConnectCallScalarMethod(mach_port_t connection, uint32_t selector, const uint64_t *input,
					uint32_t inputCnt, uint64_t *output, uint32_t *outputCnt)
{
	return IOConnectCallMethod(connection, selector, input, inputCnt, NULL, 0, output, outputCnt, NULL, NULL);
}

/* ---- memory ---- */

kern_return_t IOConnectMapMemory64(io_connect_t connect, uint32_t memoryType, task_port_t intoTask,
				   mach_vm_address_t *atAddress, mach_vm_size_t *ofSize, IOOptionBits options)
{
	struct standin_client *c = client_of(connect);
	uint32_t rconn = c ? 0 : rconn_of(connect);
	uint64_t addr = 0, size = 0;

	if ((!c && !rconn) || !atAddress)
		return kIOReturnBadArgument;
	if (intoTask != STANDIN_TASK)
		return kIOReturnBadArgument;
	/* Without kIOMapAnywhere the caller names the address: the stand-in cannot place
	 * a mapping, and kext.c never asks for one. */
	if (!(options & kIOMapAnywhere))
		return kIOReturnBadArgument;
	if ((rconn ? skc_map(rconn, memoryType, options, &addr, &size)
		   : standin_client_map(c, memoryType, options, &addr, &size, NULL)) != kIOReturnSuccess)
		return kIOReturnBadArgument;
	*atAddress = addr;
	if (ofSize)
		*ofSize = size;
	return KERN_SUCCESS;
}

kern_return_t IOConnectUnmapMemory64(io_connect_t connect, uint32_t memoryType, task_port_t fromTask,
				     mach_vm_address_t atAddress)
{
	struct standin_client *c = client_of(connect);
	uint32_t rconn = c ? 0 : rconn_of(connect);

	if ((!c && !rconn) || fromTask != STANDIN_TASK)
		return kIOReturnBadArgument;
	if (rconn)
		return skc_unmap(rconn, memoryType, atAddress);
	return standin_client_unmap(c, memoryType);
}

struct emu_dev *uvshim_standin_emu_of(io_connect_t connect)
{
	struct standin_client *c = client_of(connect);

	return c ? standin_client_emu(c) : NULL;
}

int uvshim_standin_remote_of(io_connect_t connect)
{
	return rconn_of(connect) != 0;
}

void uvshim_standin_mmio(io_connect_t connect, int op, uint64_t off, unsigned size)
{
	uint32_t rconn = rconn_of(connect);

	if (rconn)
		skc_mmio(rconn, op, off, size);
}

uint32_t uvshim_standin_ipv4(io_connect_t connect)
{
	uint32_t rconn = rconn_of(connect);

	return rconn ? skc_ipv4(rconn) : 0;
}

/* In this process the kernel has no guests, so nothing is ever revoked here. */
void standin_revoke_mapping(struct standin_client *guest, uint32_t memory_type)
{
	(void)guest;
	(void)memory_type;
}

/* ---- errors ---- */

const char *mach_error_string(kern_return_t kr)
{
	static const struct { kern_return_t kr; const char *s; } names[] = {
		{ KERN_SUCCESS, "(os/kern) successful" },
		{ kIOReturnError, "(iokit/common) general error" },
		{ kIOReturnNoMemory, "(iokit/common) memory allocation error" },
		{ kIOReturnNoResources, "(iokit/common) resource shortage" },
		{ kIOReturnNoDevice, "(iokit/common) no such device" },
		{ kIOReturnNotPrivileged, "(iokit/common) privilege violation" },
		{ kIOReturnBadArgument, "(iokit/common) invalid argument" },
		{ kIOReturnExclusiveAccess, "(iokit/common) exclusive access and device already open" },
		{ kIOReturnUnsupported, "(iokit/common) unsupported function" },
		{ kIOReturnNotOpen, "(iokit/common) device not open" },
		{ kIOReturnNotPermitted, "(iokit/common) not permitted" },
		{ STANDIN_MIG_ARRAY_TOO_LARGE, "(ipc/mig) array not large enough" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].kr == kr)
			return names[i].s;
	return "unknown error code";
}
