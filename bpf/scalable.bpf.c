// SPDX-License-Identifier: GPL-2.0
/* Scalable TCP, after T. Kelly, "Scalable TCP: Improving Performance in
 * Highspeed Wide Area Networks", ACM SIGCOMM CCR 33(2), 2003.
 *
 * The paper's rules: in congestion avoidance cwnd grows by a = 0.01 per
 * acknowledged segment (so by 1 % per RTT); on a congestion event it is
 * multiplied by 1 - b with b = 0.125. Below the legacy window (16 segments)
 * it behaves as standard TCP so that it is no more aggressive than Reno there.
 * Response function: w = 0.08 / p (c = 0.08, d = 1).
 *
 * Differences from the paper: segments rather than bytes, and the 0.01 per
 * ACK is applied as one segment every 100 acknowledged segments (integer
 * arithmetic; the same average growth). Slow start is the kernel's.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define LEGACY_WINDOW 16U   /* segments: standard TCP below this */
#define AI_SEGMENTS   100U  /* 1 / a: acknowledged segments per cwnd + 1 */
#define DECREASE_NUM  1U    /* b = 1/8 */
#define DECREASE_DEN  8U

SEC("struct_ops")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);

	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	if (tp->snd_cwnd < LEGACY_WINDOW)
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);       /* +1 per RTT */
	else
		tcp_cong_avoid_ai(tp, AI_SEGMENTS, acked);        /* +0.01 per ACK */
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = itb_tcp(sk);
	__u32 cwnd = tp->snd_cwnd;

	if (cwnd < LEGACY_WINDOW)
		return ITB_MAX(cwnd / 2, 2U);
	return ITB_MAX(cwnd - cwnd * DECREASE_NUM / DECREASE_DEN, 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_scalable = {
	.cong_avoid = (void *)scalable_cong_avoid,
	.ssthresh = (void *)scalable_ssthresh,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.name = "itb_scalable",
};
