/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Firmware never crashes on what a driver sends: every registered opcode gets random
 * inputs (fixed seed, random lengths and op_mods) through the real engine; the device
 * must answer each one, and a reset afterwards must leave no object or page behind. */
#include <stdio.h>

#include "hw/emu/emu_dev.h"
#include "tests/emu/emu_test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

Test(emu_robustness, random_inputs_to_every_opcode_are_answered_and_reset_cleans_up, .timeout = 600)
{
	struct et t;
	struct emu_counters c;
	size_t sent = 0;
	uint8_t *in = calloc(1, 8192), *out = calloc(1, 8192);

	/* UVERBS_EMU_FUZZ_SEED / UVERBS_EMU_FUZZ_ROUNDS explore further by hand. */
	const char *seed = getenv("UVERBS_EMU_FUZZ_SEED"), *rounds = getenv("UVERBS_EMU_FUZZ_ROUNDS");
	int nrounds = rounds ? atoi(rounds) : 40;

	if (seed)
		rng = strtoull(seed, NULL, 0) | 1;
	et_open(&t, "emu:");
	et_bringup(&t);
	for (size_t a = 0; a < emu_nareas; a++) {
		for (size_t k = 0; k < emu_areas[a]->ncmds; k++) {
			const struct emu_cmd_desc *desc = &emu_areas[a]->cmds[k];

			/* Life-cycle commands would end the session; they have their own tests. */
			if (desc->opcode == PRM_CMD_OP_TEARDOWN_HCA || desc->opcode == PRM_CMD_OP_DISABLE_HCA ||
			    desc->opcode == PRM_CMD_OP_MANAGE_PAGES)
				continue;
			for (int i = 0; i < nrounds; i++) {
				size_t inlen = 16 + rnd() % (desc->in_bytes + 64);
				size_t outlen = 16 + rnd() % (desc->out_bytes + 600);

				if (inlen > 8192)
					inlen = 8192;
				if (outlen > 8192)
					outlen = 8192;
				for (size_t b = 0; b < inlen; b++)
					in[b] = (uint8_t)rnd();
				/* Mostly small numbers in the first dwords, where object numbers live. */
				if (rnd() & 1)
					memset(in + 8, 0, inlen > 24 ? 16 : inlen - 8);
				PRM_SET(cmd_in, in, opcode, desc->opcode);
				PRM_SET(cmd_in, in, op_mod, rnd() % 4);
				int rc = cmdq_exec(t.q, in, inlen, out, outlen);
				cr_assert(rc == 0 || cmdq_last_status(t.q) != 0, "opcode 0x%x: no firmware answer (%d: %s)",
					  desc->opcode, rc, cmdq_error(t.q));
				sent++;
			}
		}
	}
	emu_counters(t.emu, &c);
	cr_assert_eq(c.cmd_delivery_errors, 0);
	cr_assert_geq(c.cmds, sent);
	cr_assert_eq(shim_reset(t.dev), 0);
	emu_counters(t.emu, &c);
	cr_assert_eq(c.pages_held, 0);
	for (int k = 0; k < EMU_OBJ_NTYPES; k++)
		cr_assert_eq(c.objects_live[k], 0, "%s", emu_obj_type_name(k));
	printf("robustness: %zu random commands answered\n", sent);
	free(in);
	free(out);
	et_close(&t);
}
