/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CQ number -> CQ, for completion events (EQE comp_event.cq_number names the CQ): a
 * chained hash table that doubles with the number of CQs, so an event costs the same
 * with one CQ or thousands.  Capacity is reserved before CREATE_CQ, so adding the new
 * CQ afterwards cannot fail. */
#include <errno.h>
#include <stdlib.h>

#include "hw/mlx5/mx5_objects.h"

#define MX5_CQ_INDEX_MIN 64u

static unsigned bucket(uint32_t nbuckets, uint32_t cqn)
{
	/* CQ numbers are handed out mostly in sequence: the low bits spread them well */
	return (cqn ^ (cqn >> 12)) & (nbuckets - 1);
}

int mx5_cq_index_reserve(struct mx5_device *dev)
{
	uint32_t want = dev->cq_index.n + 1;
	uint32_t nb = dev->cq_index.nbuckets;
	if (nb && want <= nb)
		return 0;
	uint32_t grown = nb ? nb * 2 : MX5_CQ_INDEX_MIN;
	struct mx5_cq **t = calloc(grown, sizeof(*t));
	if (!t)
		return nb ? 0 : -ENOMEM;   /* a full table still works, with longer chains */
	for (uint32_t i = 0; i < nb; i++) {
		struct mx5_cq *cq = dev->cq_index.buckets[i];
		while (cq) {
			struct mx5_cq *next = cq->index_next;
			unsigned b = bucket(grown, cq->cqn);
			cq->index_next = t[b];
			t[b] = cq;
			cq = next;
		}
	}
	free(dev->cq_index.buckets);
	dev->cq_index.buckets = t;
	dev->cq_index.nbuckets = grown;
	return 0;
}

void mx5_cq_index_add(struct mx5_device *dev, struct mx5_cq *cq)
{
	unsigned b = bucket(dev->cq_index.nbuckets, cq->cqn);
	cq->index_next = dev->cq_index.buckets[b];
	dev->cq_index.buckets[b] = cq;
	dev->cq_index.n++;
}

void mx5_cq_index_del(struct mx5_device *dev, struct mx5_cq *cq)
{
	if (!dev->cq_index.nbuckets)
		return;
	struct mx5_cq **p = &dev->cq_index.buckets[bucket(dev->cq_index.nbuckets, cq->cqn)];
	for (; *p; p = &(*p)->index_next) {
		if (*p == cq) {
			*p = cq->index_next;
			cq->index_next = NULL;
			dev->cq_index.n--;
			return;
		}
	}
}

struct mx5_cq *mx5_cq_index_find(const struct mx5_device *dev, uint32_t cqn)
{
	if (!dev->cq_index.nbuckets)
		return NULL;
	struct mx5_cq *cq = dev->cq_index.buckets[bucket(dev->cq_index.nbuckets, cqn)];
	while (cq && cq->cqn != cqn)
		cq = cq->index_next;
	return cq;
}

void mx5_cq_index_free(struct mx5_device *dev)
{
	free(dev->cq_index.buckets);
	dev->cq_index.buckets = NULL;
	dev->cq_index.nbuckets = dev->cq_index.n = 0;
}
