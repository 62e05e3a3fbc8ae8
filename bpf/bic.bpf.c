// SPDX-License-Identifier: GPL-2.0
/* BIC-TCP, after L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion
 * Control for Fast, Long Distance Networks", IEEE INFOCOM 2004.
 *
 * The paper's rules: on a congestion event W_max = cwnd (the window where the
 * loss happened) and cwnd = cwnd (1 - beta), beta = 1/8; the new cwnd is W_min.
 * Fast convergence: if the loss came below the previous W_max, the flow is
 * giving way to others, so W_max = cwnd (2 - beta) / 2 instead. Between
 * losses the window binary-searches W_max: each RTT it moves to the midpoint
 * (W_min + W_max) / 2, by at most S_max = 32 and at least S_min = 0.01
 * segments, and the reached window becomes the new W_min. Above W_max it
 * probes by mirroring the search (increments S_min, 2 S_min, 4 S_min, ...
 * like slow start) until they reach S_max, then grows linearly by S_max.
 * Below low_window = 14 segments it is standard TCP (+1 per RTT, halve).
 * Response function (SPEC): w = 15.5 / p^0.5 (c = 15.5, d = 0.5), for the
 * window sizes where BIC's rules apply.
 *
 * Differences from the paper: the per-RTT step is applied per ACK (step /
 * cwnd each) and recomputed on every ACK from the current window, so the
 * search is a continuous version of "halve the distance each RTT" (W_min is
 * always the current window) and the probing a continuous doubling. Windows
 * are kept in 1/100 segment (S_min is one unit; the fraction comes from
 * snd_cwnd_cnt). An undone (spurious) congestion event also restores W_max.
 * Slow start is the kernel's.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define LOW_WINDOW 14U   /* segments: standard TCP below this */
#define UNIT       100U  /* windows and steps in 1/100 segment; S_min = 1 */
#define S_MAX      (32U * UNIT)
#define BETA_NUM   1U    /* beta = 1/8 */
#define BETA_DEN   8U

struct bic {
	__u32 w_max;       /* 1/100 segments; 0: no loss yet, probe from the start */
	__u32 prior_w_max; /* restored if the congestion event is undone */
};
_Static_assert(sizeof(struct bic) <= 104, "icsk_ca_priv is 104 bytes");

SEC("struct_ops")
void BPF_PROG(bic_init, struct sock *sk)
{
	struct bic *ca = itb_priv(sk);

	ca->w_max = 0;
	ca->prior_w_max = 0;
}

SEC("struct_ops")
void BPF_PROG(bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct bic *ca = itb_priv(sk);
	__u32 cwnd = tp->snd_cwnd, w, step;

	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	if (cwnd < LOW_WINDOW) {
		tcp_cong_avoid_ai(tp, cwnd, acked);  /* Reno: +1 per RTT */
		return;
	}
	/* snd_cwnd_cnt counts units towards the next whole segment: the fraction */
	w = cwnd * UNIT + ITB_MIN(tp->snd_cwnd_cnt / cwnd, UNIT - 1);
	if (w < ca->w_max)
		step = (ca->w_max - w) / 2;  /* to the midpoint of [cwnd, W_max] */
	else
		step = w - ca->w_max;        /* mirror: the step doubles each RTT */
	step = ITB_MAX(ITB_MIN(step, S_MAX), 1U);
	/* +step per window of ACKs: step / (cwnd * UNIT) segments each */
	tcp_cong_avoid_ai(tp, cwnd * UNIT, acked * step);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_ssthresh, struct sock *sk)
{
	struct bic *ca = itb_priv(sk);
	__u32 cwnd = itb_tcp(sk)->snd_cwnd;

	ca->prior_w_max = ca->w_max;
	if (cwnd * UNIT < ca->w_max)  /* fast convergence: release bandwidth */
		ca->w_max = cwnd * UNIT * (2 * BETA_DEN - BETA_NUM) / (2 * BETA_DEN);
	else
		ca->w_max = cwnd * UNIT;
	if (cwnd < LOW_WINDOW)
		return ITB_MAX(cwnd / 2, 2U);
	return ITB_MAX(cwnd - cwnd * BETA_NUM / BETA_DEN, 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_undo_cwnd, struct sock *sk)
{
	struct bic *ca = itb_priv(sk);

	ca->w_max = ca->prior_w_max;  /* the event was spurious: forget it */
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_bic = {
	.init = (void *)bic_init,
	.cong_avoid = (void *)bic_cong_avoid,
	.ssthresh = (void *)bic_ssthresh,
	.undo_cwnd = (void *)bic_undo_cwnd,
	.name = "itb_bic",
};
