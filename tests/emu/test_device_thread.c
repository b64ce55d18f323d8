/* The device thread's scheduling (hw/emu/rx_thread.c): SCHED_FIFO when this process may
 * have it, SCHED_OTHER without the privilege, and SCHED_OTHER on purpose with
 * emu:sched=normal.  The counters say which policy the thread got. */
#include <pthread.h>
#include <sched.h>

#include "hw/emu/transport.h"
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
	et_close(&t);
}

Test(emu_device_thread, sched_normal_keeps_it_sched_other)
{
	struct et t;

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
