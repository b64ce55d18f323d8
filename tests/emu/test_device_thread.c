/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The device thread's scheduling (hw/emu/rx_thread.c): SCHED_FIFO when this process may
 * have it, SCHED_OTHER without the privilege, and SCHED_OTHER on purpose with
 * emu:sched=normal.  The counters say which policy the thread got. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "hw/emu/transport.h"
#include "tests/common/device_threads.h"
#include "tests/emu/emu_test.h"

/* Whether a thread of this process may take SCHED_FIFO: try it on a throwaway thread. */
static void *probe_main(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	*(int *)arg = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	return NULL;
}

static int fifo_allowed(void)
{
	pthread_t t;
	int ok = 0;

	cr_assert_eq(pthread_create(&t, NULL, probe_main, &ok), 0);
	pthread_join(t, NULL);
	return ok;
}

/* Policy and real-time priority of this process's device threads, from the kernel
 * (/proc/self/task/TID/stat fields 40 rt_priority and 41 policy); -1 if none found. */
struct sched_read {
	int policy, rt_prio;
};

static bool read_sched(pid_t tid, void *arg)
{
	struct sched_read *r = arg;
	char path[64], stat[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!(f = fopen(path, "r")))
		return false;
	size_t n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* fields after the ")" that closes comm start at field 3 */
	char *p = strrchr(stat, ')');
	cr_assert_not_null(p);
	p += 2;
	for (int field = 3; field < 40 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p, "%d %d", &r->rt_prio, &r->policy), 2);
	return true;
}

static int device_thread_policy(int *rt_prio)
{
	struct sched_read r = { .policy = -1 };

	cr_assert_geq(test_each_device_thread(read_sched, &r), 0);
	*rt_prio = r.rt_prio;
	return r.policy;
}

/* The thread sets the counter as it starts: wait for it (bounded). */
static uint64_t device_thread_fifo(struct emu_dev *d, uint64_t want)
{
	struct emu_tp_counters c;
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < 500; i++) {
		emu_tp_counters(d, &c);
		if (c.device_thread_fifo == want)
			break;
		nanosleep(&ts, NULL);
	}
	return c.device_thread_fifo;
}

Test(emu_device_thread, runs_sched_fifo_exactly_when_the_process_may)
{
	struct et t;
	uint64_t want = (uint64_t)fifo_allowed();

	et_open(&t, "emu:");
	cr_assert_eq(device_thread_fifo(t.emu, want), want, "SCHED_FIFO %s here",
		     want ? "is allowed" : "is not allowed");
	int prio = -1, policy = device_thread_policy(&prio);
	cr_assert_eq(policy, want ? SCHED_FIFO : SCHED_OTHER, "the kernel says policy %d", policy);
	if (want)
		cr_assert_eq(prio, 1);
	et_close(&t);
}

/* A device opened by a real-time thread: the device thread never runs below it, and
 * sched=normal makes it SCHED_OTHER whatever it inherited. */
struct rt_open {
	const char *uri;
	int policy, prio;
};

static void *open_as_rt_main(void *arg)
{
	struct rt_open *o = arg;
	struct sched_param sp = { .sched_priority = 5 };
	struct emu_config cfg;
	struct emu_dev *d = NULL;
	char err[256];

	o->policy = -2;
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		return NULL;
	memset(&cfg, 0, sizeof(cfg));
	if (emu_config_parse(o->uri, &cfg, err, sizeof(err)) || emu_create(&cfg, &d, err, sizeof(err)))
		return NULL;
	struct timespec ts = { 0, 50000000 };   /* let the device thread start and set itself */
	nanosleep(&ts, NULL);
	o->policy = device_thread_policy(&o->prio);
	emu_destroy(d);
	return NULL;
}

static struct rt_open open_as_rt(const char *uri)
{
	struct rt_open o = { .uri = uri };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, open_as_rt_main, &o), 0);
	pthread_join(t, NULL);
	cr_assert_neq(o.policy, -2, "opening %s from a SCHED_FIFO thread failed", uri);
	return o;
}

/* One above: at equal priority SCHED_FIFO never preempts, so a creator that spins on a
 * CQ or on memory would starve the thread that must place its data. */
Test(emu_device_thread, above_a_real_time_creator)
{
	if (!fifo_allowed())
		cr_skip_test("SCHED_FIFO is not allowed here");
	struct rt_open o = open_as_rt("");
	cr_assert_eq(o.policy, SCHED_FIFO);
	cr_assert_eq(o.prio, 6, "device thread at priority %d under a priority-5 creator", o.prio);
}

Test(emu_device_thread, sched_normal_is_sched_other_even_under_a_real_time_creator)
{
	if (!fifo_allowed())
		cr_skip_test("SCHED_FIFO is not allowed here");
	struct rt_open o = open_as_rt("sched=normal");
	cr_assert_eq(o.policy, SCHED_OTHER, "policy %d", o.policy);
}

Test(emu_device_thread, sched_normal_keeps_it_sched_other)
{
	struct et t;

	/* where FIFO is never granted, sched=normal cannot be told from the default */
	if (!fifo_allowed())
		cr_skip_test("SCHED_FIFO is not allowed here: nothing to tell apart");

	et_open(&t, "emu:sched=normal");
	/* give a FIFO request time to show before judging that none was made */
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	cr_assert_eq(device_thread_fifo(t.emu, 0), 0);
	et_close(&t);
}

Test(emu_device_thread, sched_option_refuses_other_values)
{
	struct emu_config cfg;
	char err[512];

	memset(&cfg, 0, sizeof(cfg));
	cr_assert_lt(emu_config_parse("sched=realtime", &cfg, err, sizeof(err)), 0);
	cr_assert_not_null(strstr(err, "sched=fifo|normal"), "%s", err);
	memset(&cfg, 0, sizeof(cfg));
	cr_assert_eq(emu_config_parse("sched=normal", &cfg, err, sizeof(err)), 0);
	cr_assert_eq(cfg.sched_normal, 1);
}

/* emu_config_dataplane_opts, what a daemon's engines run with (tools/uvd/engine.c):
 * the options of a URI that shape the data plane and none of the others, as a string
 * emu_config_parse reads back to the same fields; "" for the defaults; -ENOSPC and an
 * empty string, not a cut one, when the buffer is short. */
Test(emu_device_thread, dataplane_options_are_the_data_planes_and_read_back)
{
	static const char uri[] = "ip=127.0.0.9,fail=0x102:0x3,pages=4,loss=0.01,seed=5,sched=normal,copy=syscall,"
				  "bf=torn,gso=off,gro=off,hold_us=4200,port=down,link=down";
	struct emu_config a, b;
	char s[256], err[2048];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cr_assert_eq(emu_config_parse(uri, &a, err, sizeof(err)), 0, "%s", err);
	int n = emu_config_dataplane_opts(&a, s, sizeof(s));
	cr_assert_eq(n, (int)strlen(s));
	cr_assert_str_eq(s, "loss=0.01,seed=5,link=down,sched=normal,copy=syscall,bf=torn,gso=off,gro=off,hold_us=4200");
	cr_assert_eq(emu_config_parse(s, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(b.wire_faults, a.wire_faults);
	cr_assert(b.sched_normal && b.copy_syscall && b.bf_torn && b.gso_off && b.gro_off);
	cr_assert_eq(b.poll_hold_us, 4200);
	cr_assert(!b.ipv4 && !b.auto_pages && !b.port_down && !b.nfail, "a control-plane option came along");
	cr_assert_eq(emu_config_dataplane_opts(&a, s, 20), -ENOSPC);
	cr_assert_str_eq(s, "", "a short buffer kept '%s'", s);
	memset(&a, 0, sizeof(a));
	cr_assert_eq(emu_config_dataplane_opts(&a, s, sizeof(s)), 0);
	cr_assert_str_eq(s, "");
}

/* hold_us= (hw/emu/transport.h EMU_POLL_HOLD_MAX_NS): a hold from the default, 300 us,
 * to 5 ms; anything else refused with the range in the message, and nothing set. */
Test(emu_device_thread, hold_option_takes_300_to_5000_us)
{
	static const char *refused[] = { "hold_us=299", "hold_us=5001", "hold_us=0", "hold_us=", "hold_us=4k",
					 "hold_us=-1" };
	struct emu_config cfg;
	char err[2048];   /* the whole list of options, which names hold_us near its end */

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memset(&cfg, 0, sizeof(cfg));
		err[0] = '\0';
		cr_assert_lt(emu_config_parse(refused[i], &cfg, err, sizeof(err)), 0, "%s was taken", refused[i]);
		cr_assert_not_null(strstr(err, "hold_us=300..5000"), "%s: %s", refused[i], err);
		cr_assert_eq(cfg.poll_hold_us, 0, "%s set %u", refused[i], cfg.poll_hold_us);
	}
	memset(&cfg, 0, sizeof(cfg));
	cr_assert_eq(emu_config_parse("hold_us=300", &cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cfg.poll_hold_us, 300);
	cr_assert_eq(emu_config_parse("ip=127.0.0.9,hold_us=4200", &cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cfg.poll_hold_us, 4200);
	cr_assert_eq(emu_config_parse("hold_us=5000", &cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cfg.poll_hold_us, 5000);
}
