/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The libdispatch subset hw/shim/kext.c uses, for the IOKit stand-in on Linux
 * (shim-kext/standin/README.md): a serial queue is one thread running its work items
 * in order, as libdispatch's serial queues do. */
#ifndef UVSHIM_STANDIN_DISPATCH_DISPATCH_H
#define UVSHIM_STANDIN_DISPATCH_DISPATCH_H

typedef struct uvshim_standin_queue *dispatch_queue_t;
typedef void *dispatch_queue_attr_t;
typedef void (*dispatch_function_t)(void *);

#define DISPATCH_QUEUE_SERIAL ((dispatch_queue_attr_t)0)

dispatch_queue_t dispatch_queue_create(const char *label, dispatch_queue_attr_t attr);
/* Run fn(ctx) on the queue after what is queued, and wait for it. */
void dispatch_sync_f(dispatch_queue_t queue, void *ctx, dispatch_function_t fn);
void dispatch_release(dispatch_queue_t queue);

#endif
