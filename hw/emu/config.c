/* Option string of the "emu:" URI: ip=127.0.0.N, page=4k|16k, iova=offset|scatter,
 * fail=OPCODE:STATUS[:SYNDROME][@SKIP], hang=OPCODE, fatal=SYNDROME, port=down,
 * init_ms=N, pages=N (PAGE_REQUEST traffic on its own after INIT_HCA), icm=N (every
 * CREATE_* held until the driver gave N more pages), pagehold=OPCODE:N|-N|all[@SKIP]
 * (one command held for a page exchange, hw/emu/hold.c), cmdq_entries=N (queue size the
 * init segment reports), the wire faults
 * (loss|reorder|dup|corrupt=RATE, seed=N, link=up|down) and sched=fifo|normal (the
 * device thread's scheduling, rx_thread.c).  Opcodes may be numbers or names (CREATE_EQ). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firmware-cmd/names.h"
#include "firmware-cmd/prm.h"
#include "hw/emu/emu.h"
#include "hw/emu/transport.h"

static int parse_num(const char *s, unsigned long *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	*v = strtoul(s, &end, 0);
	return *end ? -EINVAL : 0;
}

static int parse_opcode(const char *s, uint16_t *op)
{
	unsigned long v;

	if (parse_num(s, &v) == 0 && v < 0x10000) {
		*op = (uint16_t)v;
		return 0;
	}
	return prm_opcode_from_name(s, op);
}

int emu_config_parse(const char *opts, struct emu_config *cfg, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;
	int rc = 0;

	if (!cfg)
		return -EINVAL;
	if (!opts || !*opts)
		return 0;
	if (strlen(opts) >= sizeof(buf)) {
		snprintf(err, errlen, "emu: option string too long");
		return -EINVAL;
	}
	strcpy(buf, opts);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		unsigned long v;

		if (!val) {
			rc = -EINVAL;
			break;
		}
		*val++ = '\0';
		if (!strcmp(tok, "ip")) {
			struct in_addr a;

			if (inet_pton(AF_INET, val, &a) != 1) {
				rc = -EINVAL;
				break;
			}
			cfg->ipv4 = ntohl(a.s_addr);
		} else if (!strcmp(tok, "page")) {
			if (!strcmp(val, "4k") || !strcmp(val, "4096"))
				cfg->host_page_size = 4096;
			else if (!strcmp(val, "16k") || !strcmp(val, "16384"))
				cfg->host_page_size = 16384;
			else {
				rc = -EINVAL;
				break;
			}
		} else if (!strcmp(tok, "iova")) {
			if (!strcmp(val, "offset"))
				cfg->iova_mode = EMU_IOVA_OFFSET;
			else if (!strcmp(val, "scatter"))
				cfg->iova_mode = EMU_IOVA_SCATTER;
			else {
				rc = -EINVAL;
				break;
			}
		} else if (!strcmp(tok, "fail") || !strcmp(tok, "hang")) {
			struct emu_fail_rule r = { 0 };
			char *parts[4] = { val, NULL, NULL, NULL }, *at = strchr(val, '@');

			if (cfg->nfail == EMU_MAX_FAIL_RULES) {
				rc = -ENOSPC;
				break;
			}
			if (at) {
				*at++ = '\0';
				if (parse_num(at, &v) < 0) {
					rc = -EINVAL;
					break;
				}
				r.skip = (unsigned)v;
			}
			for (int i = 1; i < 3; i++) {
				parts[i] = parts[i - 1] ? strchr(parts[i - 1], ':') : NULL;
				if (parts[i])
					*parts[i]++ = '\0';
			}
			if (parse_opcode(parts[0], &r.opcode) < 0) {
				rc = -EINVAL;
				break;
			}
			if (!strcmp(tok, "hang")) {
				r.hang = 1;
			} else {
				if (!parts[1] || parse_num(parts[1], &v) < 0 || v == 0 || v > 0xff) {
					rc = -EINVAL;
					break;
				}
				r.status = (uint8_t)v;
				if (parts[2]) {
					if (parse_num(parts[2], &v) < 0) {
						rc = -EINVAL;
						break;
					}
					r.syndrome = (uint32_t)v;
				}
			}
			cfg->fail[cfg->nfail++] = r;
		} else if (!strcmp(tok, "pagehold")) {
			struct emu_fail_rule r = { .page_hold = 1 };
			char *colon = strchr(val, ':'), *at = strchr(val, '@');
			long n;
			char *end;

			if (cfg->nfail == EMU_MAX_FAIL_RULES) {
				rc = -ENOSPC;
				break;
			}
			if (at) {
				*at++ = '\0';
				if (parse_num(at, &v) < 0) {
					rc = -EINVAL;
					break;
				}
				r.skip = (unsigned)v;
			}
			if (!colon) {
				rc = -EINVAL;
				break;
			}
			*colon++ = '\0';
			if (parse_opcode(val, &r.opcode) < 0) {
				rc = -EINVAL;
				break;
			}
			if (!strcmp(colon, "all")) {
				r.release_all = 1;
			} else {
				n = strtol(colon, &end, 0);
				if (!*colon || *end || n == 0 || n > (1l << 20) || n < -(1l << 20)) {
					rc = -EINVAL;
					break;
				}
				r.pages = (int32_t)n;
			}
			cfg->fail[cfg->nfail++] = r;
		} else if (!strcmp(tok, "cmdq_entries")) {
			if (parse_num(val, &v) < 0 || v == 0 || v > 32 || (v & (v - 1))) {
				rc = -EINVAL;
				break;
			}
			cfg->cmdq_entries = (unsigned)v;
		} else if (!strcmp(tok, "icm")) {
			if (parse_num(val, &v) < 0 || v > (1u << 20)) {
				rc = -EINVAL;
				break;
			}
			cfg->icm_pages = (unsigned)v;
		} else if (!strcmp(tok, "fatal")) {
			if (parse_num(val, &v) < 0 || v == 0 || v > 0xff) {
				rc = -EINVAL;
				break;
			}
			cfg->fatal_synd = (uint8_t)v;
		} else if (!strcmp(tok, "port")) {
			if (!strcmp(val, "down"))
				cfg->port_down = 1;
			else if (!strcmp(val, "up"))
				cfg->port_down = 0;
			else {
				rc = -EINVAL;
				break;
			}
		} else if (!strcmp(tok, "pages")) {
			if (parse_num(val, &v) < 0 || v > (1u << 20)) {
				rc = -EINVAL;
				break;
			}
			cfg->auto_pages = (unsigned)v;
		} else if (!strcmp(tok, "loss") || !strcmp(tok, "reorder") || !strcmp(tok, "dup") ||
			   !strcmp(tok, "corrupt") || !strcmp(tok, "seed") || !strcmp(tok, "link")) {
			/* Wire faults (wire_faults.c): validated now by the data plane's own parser,
			 * kept as text and applied once the device's transport exists. */
			struct emu_wire_faults wf = { 0 };
			char one[96];
			size_t used = strlen(cfg->wire_faults);

			snprintf(one, sizeof(one), "%s=%s", tok, val);
			if (emu_wire_faults_parse(one, &wf, NULL) < 0 ||
			    used + strlen(one) + 2 > sizeof(cfg->wire_faults)) {
				rc = -EINVAL;
				break;
			}
			snprintf(cfg->wire_faults + used, sizeof(cfg->wire_faults) - used, "%s%s", used ? "," : "", one);
		} else if (!strcmp(tok, "sched")) {
			if (!strcmp(val, "normal"))
				cfg->sched_normal = 1;
			else if (!strcmp(val, "fifo"))
				cfg->sched_normal = 0;
			else {
				rc = -EINVAL;
				break;
			}
		} else if (!strcmp(tok, "cap") || !strcmp(tok, "capmax")) {
			static const struct { const char *name, *layout; uint8_t type; } blocks[] = {
				{ "general", "cmd_hca_cap", 0 }, { "odp", "odp_cap", 2 },
				{ "atomic", "atomic_caps", 3 }, { "roce", "roce_cap", 4 },
			};
			char *dot = strchr(val, '.'), *colon = strrchr(val, ':');
			struct emu_cap_override *o = &cfg->cap_override[cfg->ncap_override];
			size_t b = 0;

			if (!dot || !colon || colon < dot || cfg->ncap_override >= 8) {
				rc = -EINVAL;
				break;
			}
			*dot = *colon = '\0';
			while (b < sizeof(blocks) / sizeof(blocks[0]) && strcmp(blocks[b].name, val))
				b++;
			if (b == sizeof(blocks) / sizeof(blocks[0]) ||
			    !prm_field_find(prm_struct_find(blocks[b].layout), dot + 1) ||
			    strlen(dot + 1) >= sizeof(o->field) || parse_num(colon + 1, &v) < 0) {
				rc = -EINVAL;
				break;
			}
			o->type = blocks[b].type;
			o->max_only = !strcmp(tok, "capmax");
			snprintf(o->field, sizeof(o->field), "%s", dot + 1);
			o->value = (uint32_t)v;
			cfg->ncap_override++;
		} else if (!strcmp(tok, "flr_ms")) {
			if (parse_num(val, &v) < 0 || v > 60000) {
				rc = -EINVAL;
				break;
			}
			cfg->flr_ms = (unsigned)v;
		} else if (!strcmp(tok, "init_ms")) {
			if (parse_num(val, &v) < 0 || v > 60000) {
				rc = -EINVAL;
				break;
			}
			cfg->init_delay_ms = (unsigned)v;
		} else {
			rc = -EINVAL;
			break;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0 && err)
		snprintf(err, errlen, "emu: bad option '%s' in '%s' (ip=127.0.0.N, page=4k|16k, iova=offset|scatter, "
			 "fail=OP:STATUS[:SYND][@SKIP], hang=OP, fatal=SYND, port=up|down, init_ms=N, pages=N, icm=N, "
			 "pagehold=OP:N|-N|all[@SKIP], cmdq_entries=1..32, "
			 "loss|reorder|dup|corrupt=RATE, seed=N, link=up|down, sched=fifo|normal)", tok ? tok : "",
			 opts);
	return rc;
}
