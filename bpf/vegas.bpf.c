// SPDX-License-Identifier: GPL-2.0
/* TCP Vegas, after L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion
 * Avoidance on a Global Internet", IEEE JSAC 13(8), 1995.
 *
 * The paper's rules: BaseRTT is the smallest RTT seen. Once per RTT,
 * Expected = cwnd / BaseRTT and Actual = cwnd / RTT; their difference times
 * BaseRTT, diff = cwnd (RTT - BaseRTT) / RTT, is the number of the flow's
 * segments queued in the network. If diff < alpha = 2 the window grows by one
 * segment in the next RTT, if diff > beta = 4 it shrinks by one, otherwise it
 * stays. Slow start doubles the window only every other RTT (it is held in
 * between so that a valid comparison can be made) and ends when
 * diff > gamma = 1. Vegas keeps a queue of alpha..beta segments rather than
 * filling the buffer, so it has no loss-based response function; where it
 * does see losses it is Reno (c = 1.22, d = 0.5).
 *
 * Differences from the paper: RTT is the minimum sample of the last round
 * (a round ends when the data outstanding at its start is acknowledged)
 * rather than the RTT of one timed segment per round. If the ACKs carrying
 * RTT samples in a round cover fewer than 3 segments there is no decision
 * and the next round is Reno (the kernel's slow start / +1 per RTT);
 * segments rather than ACKs are counted so that stretch ACKs (GRO) do not
 * force Reno at high rates. On a congestion event the window is halved as
 * Reno (the paper cuts by 3/4 on losses seen by its fine-grained timer); its
 * fine-grained retransmission check is left to the kernel's loss detection.
 * A state change (loss, recovery) restarts the current round.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define ALPHA       2U  /* segments queued: grow below this */
#define BETA        4U  /* segments queued: shrink above this */
#define GAMMA       1U  /* segments queued: leave slow start above this */
#define MIN_SAMPLES 3U  /* segments RTT-sampled per round for a decision */

struct vegas {
	__u32 round_end;   /* the round ends when an ACK goes past this snd_nxt */
	__u32 base_rtt_us; /* smallest RTT seen */
	__u32 min_rtt_us;  /* smallest RTT in this round */
	__u32 samples;     /* segments acknowledged by ACKs with an RTT sample */
	__u8 reno;         /* too few samples last round: Reno this round */
	__u8 ss_hold;      /* slow start: this round keeps the window fixed */
};
_Static_assert(sizeof(struct vegas) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline void vegas_new_round(struct sock *sk)
{
	struct vegas *v = itb_priv(sk);

	v->round_end = itb_tcp(sk)->snd_nxt;
	v->min_rtt_us = ~0U;
	v->samples = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	struct vegas *v = itb_priv(sk);

	v->base_rtt_us = ~0U;
	v->reno = 1;  /* no samples yet */
	v->ss_hold = 0;
	vegas_new_round(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *v = itb_priv(sk);
	__s32 rtt = sample->rtt_us;

	if (rtt <= 0)
		return;  /* no sample with this ACK */
	v->base_rtt_us = ITB_MIN(v->base_rtt_us, (__u32)rtt);
	v->min_rtt_us = ITB_MIN(v->min_rtt_us, (__u32)rtt);
	/* count segments, not ACKs: one stretch ACK (GRO, LRO) is a good sample */
	v->samples += sample->pkts_acked;
}

/* Once per RTT: compare the expected and actual rates and set the window. */
static __always_inline void vegas_round_done(struct sock *sk)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct vegas *v = itb_priv(sk);
	__u64 rtt = v->min_rtt_us, cwnd = tp->snd_cwnd;
	__u64 queued;  /* diff x RTT: compared with alpha x RTT etc., no rounding */

	queued = cwnd * (rtt - ITB_MIN(v->base_rtt_us, v->min_rtt_us));
	if (itb_in_slow_start(tp)) {
		if (v->ss_hold && queued > GAMMA * rtt)
			tp->snd_ssthresh = tp->snd_cwnd;  /* leave slow start */
		v->ss_hold = !v->ss_hold;  /* double every other round */
	} else if (queued < ALPHA * rtt) {
		tp->snd_cwnd = ITB_MIN(tp->snd_cwnd + 1, tp->snd_cwnd_clamp);
	} else if (queued > BETA * rtt) {
		tp->snd_cwnd = ITB_MAX(tp->snd_cwnd - 1, 2U);
		/* stay out of slow start below the old threshold */
		tp->snd_ssthresh = ITB_MIN(tp->snd_ssthresh, tp->snd_cwnd);
	}
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct vegas *v = itb_priv(sk);

	if (itb_after(ack, v->round_end)) {
		v->reno = v->samples < MIN_SAMPLES;
		if (!v->reno)
			vegas_round_done(sk);
		vegas_new_round(sk);
	}
	if (v->reno)
		tcp_reno_cong_avoid(sk, ack, acked);
	else if (itb_in_slow_start(tp) && !v->ss_hold)
		tcp_slow_start(tp, acked);
}

SEC("struct_ops")
void BPF_PROG(vegas_set_state, struct sock *sk, __u8 new_state)
{
	vegas_new_round(sk);  /* samples across a loss describe no one window */
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return ITB_MAX(itb_tcp(sk)->snd_cwnd / 2, 2U);  /* Reno: halve */
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_vegas = {
	.init = (void *)vegas_init,
	.cong_avoid = (void *)vegas_cong_avoid,
	.pkts_acked = (void *)vegas_pkts_acked,
	.set_state = (void *)vegas_set_state,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.name = "itb_vegas",
};
