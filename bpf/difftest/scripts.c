/* The differential test's scripts: each sets up a path and a timeline of what
 * happens on it (losses, a timeout, reordering, pacing, the application
 * stopping or slowing down) and says which situations it must reach, so that a
 * script that stopped exercising its case fails instead of passing quietly.
 * Written for ITB. */
#include <stdio.h>
#include <string.h>

#include "scripts.h"

#define MS 1000ULL
#define S 1000000ULL
#define GBIT (1e9 / (8.0 * 1500))   /* segments per second: 1500-byte packets */
#define MBIT100 (1e8 / (8.0 * 1500))

/* growth from 2 segments (ssthresh 2: congestion avoidance from the start, as
 * after a timeout at a small window) to 10 000 on a loss-free, queue-free path */
#define GROWTH(nm, rtt_ms)                                                          \
	{ .name = nm, .link = { .owd_us = (rtt_ms) * MS / 2 }, .init_cwnd = 2,          \
	  .init_ssthresh = 2, .duration_us = 4000 * S, .stop_cwnd = 10000,              \
	  .expect = { .min_cwnd = 10000 } }

/* a bulk flow from slow start, every n-th original segment lost, behind a
 * 1 Gbit/s bottleneck with a one-BDP buffer */
#define LOSS(nm, rtt_ms, n, secs)                                                   \
	{ .name = nm, .link = { .owd_us = (rtt_ms) * MS / 2, .rate_sps = GBIT,          \
				.buffer = (u32)(GBIT * (rtt_ms) / 1000), .drop_every = n }, \
	  .init_cwnd = 10, .duration_us = (secs) * S,                                   \
	  .expect = { .recoveries = 3 } }

static const struct action RTO_ACTIONS[] = {
	{ 3 * S, A_BURST, 1 * S },  /* everything sent in 1 s is lost: RTOs, backoff */
	{ 9 * S, A_BURST, 30 * MS }, /* a short burst: RTO or recovery */
};
static const struct action SPURIOUS_ACTIONS[] = {
	{ 2 * S, A_REORDER, 8 * MS }, { 4 * S, A_REORDER, 8 * MS },
	{ 6 * S, A_REORDER, 8 * MS }, { 8 * S, A_REORDER, 8 * MS },
};
static const struct action PACED_ACTIONS[] = {
	{ 5 * S, A_PACE_HALF, 0 }, { 15 * S, A_PACE_OFF, 0 },
};
static const struct action IDLE_ACTIONS[] = {
	{ 4 * S, A_APP_STOP, 0 }, { 5 * S, A_APP_BULK, 0 },   /* idle 1 s, then resume */
	{ 8 * S, A_APP_STOP, 0 }, { 8 * S + 300 * MS, A_APP_BULK, 0 },
};
static const struct action APP_ACTIONS[] = {
	{ 3 * S, A_APP_HALF, 0 }, { 13 * S, A_APP_BULK, 0 },
};

const struct script SCRIPTS[] = {
	GROWTH("growth-1ms", 1),
	GROWTH("growth-20ms", 20),
	GROWTH("growth-200ms", 200),
	LOSS("loss-1e-2-20ms", 20, 100, 30),
	LOSS("loss-1e-3-20ms", 20, 1000, 30),
	LOSS("loss-1e-4-20ms", 20, 10000, 30),
	LOSS("loss-1e-3-1ms", 1, 1000, 20),
	LOSS("loss-1e-4-200ms", 200, 10000, 120),
	{ .name = "rto", .link = { .owd_us = 10 * MS, .rate_sps = MBIT100, .buffer = 167 },
	  .init_cwnd = 10, .duration_us = 16 * S, .actions = RTO_ACTIONS, .n_actions = 2,
	  .expect = { .rtos = 3 } },
	{ .name = "spurious-undo", .link = { .owd_us = 10 * MS, .rate_sps = MBIT100, .buffer = 167 },
	  .init_cwnd = 10, .duration_us = 12 * S, .actions = SPURIOUS_ACTIONS, .n_actions = 4,
	  .expect = { .undos = 2, .recoveries = 2 } },
	{ .name = "paced-half-window", .link = { .owd_us = 10 * MS, .rate_sps = GBIT, .buffer = 1667 },
	  .init_cwnd = 10, .duration_us = 20 * S, .actions = PACED_ACTIONS, .n_actions = 2,
	  .expect = { .not_cwnd_limited = 1000 } },
	{ .name = "idle-restart", .link = { .owd_us = 10 * MS, .rate_sps = MBIT100, .buffer = 167 },
	  .init_cwnd = 10, .duration_us = 12 * S, .actions = IDLE_ACTIONS, .n_actions = 4,
	  .expect = { .restarts = 1, .tx_starts = 3 } },
	{ .name = "app-limited", .link = { .owd_us = 10 * MS, .rate_sps = GBIT, .buffer = 1667 },
	  .init_cwnd = 10, .duration_us = 16 * S, .actions = APP_ACTIONS, .n_actions = 2,
	  .expect = { .not_cwnd_limited = 1000 } },
};
const unsigned N_SCRIPTS = sizeof(SCRIPTS) / sizeof(SCRIPTS[0]);

const struct script *find_script(const char *name)
{
	for (unsigned i = 0; i < N_SCRIPTS; i++)
		if (!strcmp(SCRIPTS[i].name, name))
			return &SCRIPTS[i];
	return NULL;
}

static const char *const KIND[] = {
	[A_PACE_HALF] = "pace at half the window",
	[A_PACE_OFF] = "pacing off",
	[A_APP_STOP] = "application stops",
	[A_APP_BULK] = "application writes all it can",
	[A_APP_HALF] = "application writes at half the rate",
	[A_BURST] = "burst loss",
	[A_REORDER] = "next segment delayed",
};

void apply_action(struct sim *s, const struct action *a)
{
	double rate;

	snprintf(s->last_what, sizeof(s->last_what), "%s", KIND[a->kind]);
	switch (a->kind) {
	case A_PACE_HALF:  /* half the window per smoothed RTT */
		sim_set_pacing(s, s->tp.snd_cwnd / 2.0 / (s->srtt_us / 1e6));
		break;
	case A_PACE_OFF:
		sim_set_pacing(s, 0);
		break;
	case A_APP_STOP:
		sim_set_app(s, APP_STOPPED, 0);
		break;
	case A_APP_BULK:
		sim_set_app(s, APP_BULK, 0);
		break;
	case A_APP_HALF:
		rate = s->tp.snd_cwnd / (s->srtt_us / 1e6);
		if (s->link.rate_sps > 0 && rate > s->link.rate_sps)
			rate = s->link.rate_sps;
		sim_set_app(s, APP_RATE, rate / 2);
		break;
	case A_BURST:
		s->link.burst_from_us = s->now_us;
		s->link.burst_to_us = s->now_us + a->arg;
		break;
	case A_REORDER:
		s->link.reorder_seg = s->nxt;
		s->link.reorder_us = (u32)a->arg;
		break;
	}
}
