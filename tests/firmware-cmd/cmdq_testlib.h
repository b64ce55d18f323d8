/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared set-up for the command-queue tests: a scripted device (tests/common) and a
 * command queue on it, plus the byte patterns payload tests compare. */
#ifndef UVERBS_TESTS_FIRMWARE_CMD_CMDQ_TESTLIB_H
#define UVERBS_TESTS_FIRMWARE_CMD_CMDQ_TESTLIB_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "firmware-cmd/cmdq.h"
#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "tests/common/scripted_dev.h"

struct cmdq_fix {
	struct scripted_dev *d;
	struct cmdq *q;
};

static inline void cmdq_fix_up(struct cmdq_fix *f, const struct cmdq_config *cfg, bool device_checks_sigs)
{
	int rc;

	f->d = scripted_dev_create(NULL);
	cr_assert_not_null(f->d);
	f->d->cfg.check_signatures = device_checks_sigs;
	rc = cmdq_create(&f->d->shim, &f->d->bar, cfg, &f->q);
	cr_assert_eq(rc, 0, "cmdq_create: %d %s", rc, f->d->shim.err);
}

static inline void cmdq_fix_down(struct cmdq_fix *f)
{
	cmdq_destroy(f->q);
	scripted_dev_destroy(f->d);
}

/* Input pattern: a real header (opcode, op_mod) then bytes that differ per position. */
static inline uint8_t cmdq_pat(size_t i, uint8_t seed)
{
	return (uint8_t)(i * 131u + (i >> 8) * 7u + seed);
}

static inline void cmdq_fill_in(uint8_t *in, size_t len, uint16_t opcode)
{
	for (size_t i = 0; i < len; i++)
		in[i] = cmdq_pat(i, 0x11);
	if (len >= 8) {
		memset(in, 0, 8);
		PRM_SET(cmd_in, in, opcode, opcode);
		PRM_SET(cmd_in, in, op_mod, 0x1);
	}
}

/* Output pattern: status 0 (byte 0) and distinct bytes everywhere else. */
static inline void cmdq_fill_out(uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = cmdq_pat(i, 0x5a);
	if (len)
		out[0] = 0;
}

/* A responder answering with a fixed firmware status and syndrome. */
struct cmdq_status_reply {
	uint8_t status;
	uint32_t syndrome;
};

static inline void cmdq_reply_status(struct scripted_dev *d, struct scripted_cmd *c, void *ctx)
{
	const struct cmdq_status_reply *r = ctx;
	uint8_t out[16] = { 0 };

	PRM_SET(cmd_out, out, status, r->status);
	PRM_SET(cmd_out, out, syndrome, r->syndrome);
	scripted_cmd_reply(d, c, out, sizeof(out));
	scripted_cmd_complete(d, c, 0, false);
}

#endif
