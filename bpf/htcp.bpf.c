// SPDX-License-Identifier: GPL-2.0
/* H-TCP, after D. Leith, R. Shorten, "H-TCP: TCP for high-speed and
 * long-distance networks", PFLDnet 2004, and D. Leith, R. Shorten, Y. Lee,
 * "H-TCP: A framework for congestion control in high-speed and long-distance
 * networks", 2005.
 *
 * The paper's rules: Delta is the time since the last congestion event and
 * Delta_L = 1 s. The increase per RTT is
 *   alpha(Delta) = 1                                      if Delta <= Delta_L
 *                = 1 + 10 (Delta - Delta_L) + ((Delta - Delta_L) / 2)^2  else
 * (Delta in seconds), scaled by 2 (1 - beta) so that the flow's average
 * share does not depend on its backoff; each ACK adds alpha / cwnd. On a
 * congestion event cwnd = beta cwnd with the adaptive backoff
 * beta = RTT_min / RTT_max clamped to [0.5, 0.8] (so that the queue just
 * drains), and Delta restarts from 0. Below Delta_L (about a second after
 * each loss) it is standard TCP; the response function therefore has no
 * single (c, d): Reno's at small windows, much steeper at large ones.
 *
 * Differences from the papers: no RTT scaling of alpha (alpha is per RTT as
 * above, so flows with shorter RTTs grow faster in time), and no adaptive
 * reset of beta to 0.5 on a change of throughput (the 2005 paper's 20 %
 * rule). RTT_min is the connection's minimum, RTT_max the maximum since the
 * last congestion event; beta is 0.5 until there are samples. The increase
 * is capped at one segment per ACK (never faster than slow start, which
 * matters after a long loss-free time). An undone (spurious) event restores
 * Delta's start, beta and RTT_max. Slow start is the kernel's.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define FP           1024U      /* alpha and beta in 1/1024 */
#define BETA_MIN     512U       /* 0.5 */
#define BETA_MAX     819U       /* 0.8 */
#define DELTA_L_MS   1000ULL    /* low-speed period after a congestion event */
#define DELTA_CAP_MS 3600000ULL /* keeps alpha's square well inside 64 bits */

struct htcp {
	__u64 epoch_ns;       /* time of the last congestion event */
	__u64 inc;            /* accumulated increase, 1/1024 segment x cwnd */
	__u64 prior_epoch_ns; /* restored if the congestion event is undone */
	__u32 rtt_min_us;     /* connection's minimum RTT (0: none yet) */
	__u32 rtt_max_us;     /* maximum RTT since the last congestion event */
	__u32 beta;           /* backoff at the last event, 1/1024 */
	__u32 prior_rtt_max_us;
	__u32 prior_beta;
};
_Static_assert(sizeof(struct htcp) <= 104, "icsk_ca_priv is 104 bytes");

SEC("struct_ops")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->epoch_ns = bpf_ktime_get_ns();
	ca->beta = BETA_MIN;
}

/* alpha(Delta) * 2 (1 - beta), in 1/1024 segments per RTT */
static __always_inline __u64 htcp_alpha(const struct htcp *ca)
{
	__u64 ms = (bpf_ktime_get_ns() - ca->epoch_ns) / 1000000, d, a = FP;

	if (ms > DELTA_L_MS) {
		d = ITB_MIN(ms - DELTA_L_MS, DELTA_CAP_MS);  /* Delta - Delta_L, ms */
		a += 10 * FP * d / 1000 + FP * d * d / 4000000;  /* 10 d + (d/2)^2 */
	}
	return a * 2 * (FP - ca->beta) / FP;
}

SEC("struct_ops")
void BPF_PROG(htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct htcp *ca = itb_priv(sk);
	__u64 cwnd = tp->snd_cwnd, whole;

	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* alpha / cwnd per ACK: accumulate alpha per ACK, a segment per cwnd*FP */
	ca->inc += acked * ITB_MIN(htcp_alpha(ca), cwnd * FP);
	whole = ca->inc / (cwnd * FP);
	if (whole) {
		ca->inc -= whole * cwnd * FP;
		tp->snd_cwnd = ITB_MIN(cwnd + whole, (__u64)tp->snd_cwnd_clamp);
	}
}

SEC("struct_ops")
void BPF_PROG(htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct htcp *ca = itb_priv(sk);
	__s32 rtt = sample->rtt_us;

	if (rtt <= 0)
		return;  /* no sample with this ACK */
	if (!ca->rtt_min_us || (__u32)rtt < ca->rtt_min_us)
		ca->rtt_min_us = rtt;
	if ((__u32)rtt > ca->rtt_max_us)
		ca->rtt_max_us = rtt;
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_ssthresh, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);
	__u32 cwnd = itb_tcp(sk)->snd_cwnd, beta = BETA_MIN;

	if (ca->rtt_max_us)  /* drain the queue: RTT_min / RTT_max, in [0.5, 0.8] */
		beta = ITB_MAX(ITB_MIN((__u64)ca->rtt_min_us * FP / ca->rtt_max_us,
				       (__u64)BETA_MAX), (__u64)BETA_MIN);
	ca->prior_epoch_ns = ca->epoch_ns;
	ca->prior_rtt_max_us = ca->rtt_max_us;
	ca->prior_beta = ca->beta;
	ca->beta = beta;
	ca->epoch_ns = bpf_ktime_get_ns();  /* Delta restarts */
	ca->rtt_max_us = 0;
	ca->inc = 0;
	return ITB_MAX((__u32)((__u64)cwnd * beta / FP), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_undo_cwnd, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);

	/* the event was spurious: the epoch before it goes on */
	ca->epoch_ns = ca->prior_epoch_ns;
	ca->rtt_max_us = ITB_MAX(ca->rtt_max_us, ca->prior_rtt_max_us);
	ca->beta = ca->prior_beta;
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_htcp = {
	.init = (void *)htcp_init,
	.cong_avoid = (void *)htcp_cong_avoid,
	.pkts_acked = (void *)htcp_pkts_acked,
	.ssthresh = (void *)htcp_ssthresh,
	.undo_cwnd = (void *)htcp_undo_cwnd,
	.name = "itb_htcp",
};
