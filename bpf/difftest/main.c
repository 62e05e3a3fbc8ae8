/* ccdiff: runs Linux's congestion control (the oracle, built from the kernel's
 * own tcp_<name>.c) and ITB's (bpf/<name>.bpf.c built as C) through the same
 * scripts in lockstep and compares cwnd, ssthresh and the window counter after
 * every event. Prints one JSON line per script; exit 0 when every script
 * agrees and covers its case, 1 otherwise, 2 on a usage or build problem.
 * Usage: ccdiff-<name>-hz<HZ> [SCRIPT...]   (all scripts without arguments)
 * Written for ITB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "scripts.h"

#ifndef ITB_OPS
#error "ITB_OPS (the struct_ops variable of ITB's source) must be defined"
#endif
#ifndef CCDIFF_HZ
#error "CCDIFF_HZ must be defined"
#endif

extern struct tcp_congestion_ops ITB_OPS;
unsigned int CONFIG_HZ = CCDIFF_HZ;  /* what ITB's program reads as the kernel's HZ */
unsigned long jiffies;
unsigned long long ccdiff_now_ns;

static const struct tcp_congestion_ops *linux_ops;

/* (for adapter.c: the simulator's translation around Linux's own hooks) */
const struct tcp_congestion_ops *ccdiff_linux_ops(void)
{
	return linux_ops;
}
static unsigned warnings;
static char warned_in[64];

int tcp_register_congestion_control(struct tcp_congestion_ops *ca)
{
	linux_ops = ca;
	return 0;
}

void tcp_unregister_congestion_control(struct tcp_congestion_ops *ca)
{
	(void)ca;
}

bool ccdiff_warn(bool cond, const char *where)
{
	if (cond && !warnings++)
		snprintf(warned_in, sizeof(warned_in), "%s", where);
	return cond;
}

static const struct script *current;

static void script_action(struct sim *s, int i)
{
	apply_action(s, &current->actions[i]);
}

static void side_json(const struct sim *s)
{
	printf("{\"cwnd\": %u, \"ssthresh\": %u, \"cwnd_cnt\": %u, \"ca_state\": %u}",
	       s->tp.snd_cwnd, s->tp.snd_ssthresh, s->tp.snd_cwnd_cnt,
	       s->tp.inet_conn.icsk_ca_state);
}

static const char *differs(const struct sim *a, const struct sim *b)
{
	if (a->last.kind != b->last.kind || a->last.at_us != b->last.at_us)
		return "event";
	if (a->tp.snd_cwnd != b->tp.snd_cwnd)
		return "cwnd";
	if (a->tp.snd_ssthresh != b->tp.snd_ssthresh)
		return "ssthresh";
	if (a->tp.snd_cwnd_cnt != b->tp.snd_cwnd_cnt)
		return "cwnd_cnt";
	if (a->tp.inet_conn.icsk_ca_state != b->tp.inet_conn.icsk_ca_state)
		return "ca_state";
	return NULL;
}

static const char *short_of(const struct script *sc, const struct counters *c)
{
	const struct expect *x = &sc->expect;

	if (c->max_cwnd < x->min_cwnd) return "window never reached its target";
	if (c->recoveries < x->recoveries) return "too few fast recoveries";
	if (c->rtos < x->rtos) return "too few timeouts";
	if (c->undos < x->undos) return "too few undone events";
	if (c->restarts < x->restarts) return "no restart after idle";
	if (c->tx_starts < x->tx_starts) return "too few sends from idle";
	if (c->not_cwnd_limited_acks < x->not_cwnd_limited) return "never limited by something else than cwnd";
	if (c->app_limited_cuts < x->app_limited_cuts) return "no application-limited reduction";
	return NULL;
}

static int run(const struct script *sc)
{
	struct sim a, b;
	const char *field = NULL, *cover;
	char what[200];
	int rc = 0;

	current = sc;
	warnings = 0;
	if (sim_init(&a, linux_ops, &sc->link, CCDIFF_HZ, sc->init_cwnd, sc->init_ssthresh) ||
	    sim_init(&b, &ITB_OPS, &sc->link, CCDIFF_HZ, sc->init_cwnd, sc->init_ssthresh)) {
		fprintf(stderr, "ccdiff: out of memory\n");
		exit(2);
	}
	for (unsigned i = 0; i < sc->n_actions; i++) {
		struct event e = { .at_us = sc->actions[i].at_us, .kind = EV_SCRIPT,
				   .action = (int)i, .sack = -1, .dsack = -1 };

		sim_push(&a, e);
		sim_push(&b, e);
	}
	sim_send(&a);
	sim_send(&b);
	field = differs(&a, &b);
	while (!field) {
		bool more_a = sim_step(&a, sc->duration_us, script_action);
		bool more_b = sim_step(&b, sc->duration_us, script_action);

		if (more_a != more_b) {
			field = "event";
			break;
		}
		if (!more_a)
			break;
		field = differs(&a, &b);
		if (sc->stop_cwnd && a.tp.snd_cwnd >= sc->stop_cwnd)
			break;
	}
	printf("{\"script\": \"%s\", \"algorithm\": \"%s\", \"hz\": %d, ", sc->name,
	       linux_ops->name, CCDIFF_HZ);
	if (field) {
		sim_describe(&a, what, sizeof(what));
		printf("\"ok\": false, \"differs\": \"%s\", \"event\": %llu, \"what\": \"%s\", "
		       "\"linux\": ", field, (unsigned long long)a.c.events, what);
		side_json(&a);
		printf(", \"itb\": ");
		side_json(&b);
		rc = 1;
	} else {
		cover = short_of(sc, &a.c);
		if (warnings)
			cover = "the stack's WARN_ON_ONCE fired";
		printf("\"ok\": %s, ", cover ? "false" : "true");
		if (cover)
			printf("\"coverage\": \"%s\", ", cover);
		if (warnings)
			printf("\"warning_in\": \"%s\", ", warned_in);
		printf("\"events\": %llu, \"t_s\": %.3f, \"final\": ", (unsigned long long)a.c.events,
		       a.now_us / 1e6);
		side_json(&a);
		printf(", \"max_cwnd\": %u, \"acks\": %llu, \"cong_avoid\": %llu, "
		       "\"not_cwnd_limited\": %llu, \"recoveries\": %llu, \"rtos\": %llu, "
		       "\"undos\": %llu, \"restarts\": %llu, \"tx_starts\": %llu, "
		       "\"app_limited_cuts\": %llu, \"drops\": %llu, \"dsacks\": %llu, "
		       "\"delivered\": %u, \"mean_beta\": %.4f, \"random_drops\": %llu, "
		       "\"sent\": %llu",
		       a.c.max_cwnd, (unsigned long long)a.c.acks,
		       (unsigned long long)a.c.cong_avoid_calls,
		       (unsigned long long)a.c.not_cwnd_limited_acks,
		       (unsigned long long)a.c.recoveries, (unsigned long long)a.c.rtos,
		       (unsigned long long)a.c.undos, (unsigned long long)a.c.restarts,
		       (unsigned long long)a.c.tx_starts, (unsigned long long)a.c.app_limited_cuts,
		       (unsigned long long)a.c.drops, (unsigned long long)a.c.spurious_retrans,
		       a.tp.delivered, a.c.recoveries ? a.c.beta_sum / a.c.recoveries : 0.0,
		       (unsigned long long)a.c.random_drops, (unsigned long long)a.c.orig_sent);
		rc = cover ? 1 : 0;
	}
	printf("}\n");
	fflush(stdout);
	sim_free(&a);
	sim_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (!linux_ops) {
		fprintf(stderr, "ccdiff: the Linux module did not register itself\n");
		return 2;
	}
	if (argc == 1) {
		for (unsigned i = 0; i < N_SCRIPTS; i++)
			rc |= run(&SCRIPTS[i]);
		return rc;
	}
	for (int i = 1; i < argc; i++) {
		const struct script *sc = find_script(argv[i]);
		static struct script custom;
		unsigned rtt_ms, every, secs, seed = 1, ack_every = 2;
		const char *seed_at;

		/* custom:RTT_MS:EVERY:SECONDS[:bernoulli][:seed=N][:ack=N]: every EVERY-th segment lost
		 * (or each with probability 1/EVERY) behind a 1 Gbit/s bottleneck with a one-BDP buffer,
		 * from slow start: the response-function study's path, for planning it */
		if (!sc && sscanf(argv[i], "custom:%u:%u:%u", &rtt_ms, &every, &secs) == 3) {
			double sps = 1e9 / (8.0 * 1500);
			bool random = strstr(argv[i], ":bernoulli") != NULL;

			if ((seed_at = strstr(argv[i], ":seed=")))
				seed = (unsigned)atoi(seed_at + 6);
			if ((seed_at = strstr(argv[i], ":ack=")))
				ack_every = (unsigned)atoi(seed_at + 5);

			custom = (struct script){ .name = argv[i], .init_cwnd = 10,
				.link = { .owd_us = rtt_ms * 500, .drop_every = random ? 0 : every,
					  .loss_p = random ? 1.0 / every : 0,
					  .rng = 0x9E3779B97F4A7C15ULL * (2 * seed + 1),
					  .rate_sps = sps, .buffer = (u32)(sps * rtt_ms / 1000),
					  .ack_every = ack_every },
				.duration_us = secs * 1000000ULL };
			sc = &custom;
		}

		/* NAME:to=N: a growth script (one that stops at a window) ending at N segments
		 * instead, and expected to reach it */
		const char *to_at = strstr(argv[i], ":to=");
		static struct script shorter;
		if (!sc && to_at) {
			char base[64];
			size_t n = (size_t)(to_at - argv[i]);
			unsigned to = (unsigned)atoi(to_at + 4);

			if (n < sizeof(base)) {
				memcpy(base, argv[i], n);
				base[n] = '\0';
				sc = find_script(base);
			}
			if (!sc || !sc->stop_cwnd || to < 2 || to > sc->stop_cwnd) {
				fprintf(stderr, "ccdiff: %s: :to= needs a growth script and 2..its window\n",
					argv[i]);
				return 2;
			}
			shorter = *sc;
			shorter.name = argv[i];
			shorter.stop_cwnd = to;
			shorter.expect.min_cwnd = to;
			sc = &shorter;
		}

		if (!sc) {
			fprintf(stderr, "ccdiff: no script named %s\n", argv[i]);
			return 2;
		}
		rc |= run(sc);
	}
	return rc;
}
