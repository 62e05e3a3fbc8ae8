// SPDX-License-Identifier: GPL-2.0
/* BIC-TCP as Linux runs it: the behaviour of net/ipv4/tcp_bic.c (Linux 6.12,
 * the version the differential test in tests/difftest runs against) with its
 * module parameters at their defaults. Written for ITB from that behaviour;
 * the algorithm is L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion
 * Control for Fast, Long Distance Networks", IEEE INFOCOM 2004.
 *
 * Linux's BIC differs from the paper, and so does this file:
 * - a congestion event cuts cwnd to 819/1024 (beta 0.8, a 20 % decrease) above
 *   low_window = 14 segments and halves it at or below;
 * - the binary search moves a quarter of the way to W_max per RTT
 *   (BICTCP_B = 4), at most max_increment = 16 segments per RTT; near W_max
 *   (and just above it) it grows by B / smooth_part = 1/5 segment per RTT;
 * - fast convergence: a loss below the previous W_max sets W_max to
 *   cwnd (1 + beta) / 2;
 * - before the first loss (W_max = 0) growth is capped at 5 % per RTT;
 * - the per-ACK count is corrected for delayed ACKs with a moving average of
 *   segments per ACK (Open state only);
 * - the increase is recomputed at most every HZ/32 ticks while cwnd stays put;
 * - only a cwnd-limited flow grows; slow start is the stack's, and what is
 *   left of an ACK when slow start reaches ssthresh goes to the increase;
 * - an RTO (Loss state) forgets everything; undo is the stack's
 *   max(cwnd, cwnd before the event).
 * Remaining difference: none in cwnd/ssthresh (tests/difftest checks every
 * event). Linux's get_info is absent (no BPF hook for it).
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define BIC_BETA        819U /* ssthresh = cwnd * 819 / 1024 above low_window */
#define BIC_BETA_SCALE  1024U
#define BIC_B           4U   /* search step: 1/B of the distance to W_max */
#define BIC_MAX_INC     16U  /* segments per RTT at most */
#define BIC_LOW_WINDOW  14U  /* Reno at or below this window */
#define BIC_SMOOTH      20U  /* RTTs from W_max - B to W_max */
#define BIC_PROBE_CAP   20U  /* before any loss: at most cwnd/20 per RTT */
#define ACK_SHIFT       4    /* segments per ACK kept << 4 */

struct bic {
	__u32 acks_per_inc;  /* ACKs (of one segment) per +1 segment */
	__u32 w_max;         /* segments: cwnd at the last congestion event */
	__u32 seen_cwnd;     /* cwnd when acks_per_inc was computed */
	__u32 seen_at;       /* jiffies of that computation */
	__u32 epoch;         /* jiffies: first computation since the event; 0 none */
	__u32 seg_per_ack;   /* moving average of segments per ACK, << ACK_SHIFT */
};
_Static_assert(sizeof(struct bic) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline void bic_forget(struct bic *ca)
{
	ca->acks_per_inc = 0;
	ca->w_max = 0;
	ca->seen_cwnd = 0;
	ca->seen_at = 0;
	ca->epoch = 0;
	ca->seg_per_ack = 2U << ACK_SHIFT;  /* assume delayed ACKs */
}

SEC("struct_ops")
void BPF_PROG(bic_init, struct sock *sk)
{
	bic_forget(itb_priv(sk));
}

/* ACKs of one segment per +1 segment, for a window of cwnd segments. */
static __always_inline __u32 bic_acks_per_inc(const struct bic *ca, __u32 cwnd)
{
	__u32 n;

	if (cwnd < ca->w_max) {
		__u32 gap = (ca->w_max - cwnd) / BIC_B;

		if (gap > BIC_MAX_INC)
			n = cwnd / BIC_MAX_INC;              /* far below: +16 per RTT */
		else if (gap <= 1)
			n = cwnd * BIC_SMOOTH / BIC_B;       /* at W_max: +1/5 per RTT */
		else
			n = cwnd / gap;                      /* +gap per RTT */
	} else if (cwnd < ca->w_max + BIC_B) {
		n = cwnd * BIC_SMOOTH / BIC_B;               /* just above: +1/5 */
	} else if (cwnd < ca->w_max + BIC_MAX_INC * (BIC_B - 1)) {
		n = cwnd * (BIC_B - 1) / (cwnd - ca->w_max); /* probing, growing */
	} else {
		n = cwnd / BIC_MAX_INC;                      /* +16 per RTT */
	}
	if (ca->w_max == 0 && n > BIC_PROBE_CAP)
		n = BIC_PROBE_CAP;                           /* no loss yet: 5 %/RTT */
	n = (n << ACK_SHIFT) / ca->seg_per_ack;              /* per ACK, not segment */
	return n ? n : 1;
}

static __always_inline void bic_recompute(struct bic *ca, __u32 cwnd)
{
	__u32 now = itb_jiffies32();

	if (ca->seen_cwnd == cwnd && (__s32)(now - ca->seen_at) <= (__s32)(CONFIG_HZ / 32))
		return;
	ca->seen_cwnd = cwnd;
	ca->seen_at = now;
	if (ca->epoch == 0)
		ca->epoch = now;
	if (cwnd <= BIC_LOW_WINDOW)
		ca->acks_per_inc = cwnd;  /* Reno: +1 per RTT, uncorrected */
	else
		ca->acks_per_inc = bic_acks_per_inc(ca, cwnd);
}

SEC("struct_ops")
void BPF_PROG(bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct bic *ca = itb_priv(sk);

	if (!itb_cwnd_limited(sk))
		return;
	if (itb_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bic_recompute(ca, tp->snd_cwnd);
	tcp_cong_avoid_ai(tp, ca->acks_per_inc, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_ssthresh, struct sock *sk)
{
	struct bic *ca = itb_priv(sk);
	__u32 cwnd = itb_tcp(sk)->snd_cwnd;

	ca->epoch = 0;
	if (cwnd < ca->w_max)  /* fast convergence: leave room to others */
		ca->w_max = cwnd * (BIC_BETA_SCALE + BIC_BETA) / (2 * BIC_BETA_SCALE);
	else
		ca->w_max = cwnd;
	if (cwnd <= BIC_LOW_WINDOW)
		return ITB_MAX(cwnd >> 1, 2U);
	return ITB_MAX(cwnd * BIC_BETA / BIC_BETA_SCALE, 2U);
}

SEC("struct_ops")
void BPF_PROG(bic_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bic_forget(itb_priv(sk));
}

SEC("struct_ops")
void BPF_PROG(bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct bic *ca = itb_priv(sk);

	if (itb_ca_state(sk) == TCP_CA_Open)
		ca->seg_per_ack += sample->pkts_acked - (ca->seg_per_ack >> ACK_SHIFT);
}

SEC("struct_ops")
__u32 BPF_PROG(bic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_bic = {
	.init = (void *)bic_init,
	.ssthresh = (void *)bic_ssthresh,
	.cong_avoid = (void *)bic_cong_avoid,
	.set_state = (void *)bic_set_state,
	.undo_cwnd = (void *)bic_undo_cwnd,
	.pkts_acked = (void *)bic_pkts_acked,
	.name = "itb_bic",
};
