// SPDX-License-Identifier: GPL-2.0
/* Scalable TCP as Linux runs it: the behaviour of net/ipv4/tcp_scalable.c
 * (Linux 6.12, the version the differential test in tests/difftest runs
 * against). Written for ITB from that behaviour; the algorithm is T. Kelly,
 * "Scalable TCP: Improving Performance in Highspeed Wide Area Networks",
 * ACM SIGCOMM CCR 33(2), 2003.
 *
 * Linux's rules: in congestion avoidance cwnd grows by one segment per
 * min(cwnd, 100) acknowledged segments, so Reno's +1 per RTT up to 100
 * segments and the paper's a = 0.01 per ACK above; every congestion event
 * keeps 7/8 of cwnd (b = 1/8, also at small windows, where the paper falls
 * back to Reno). Only a cwnd-limited flow grows; slow start is the stack's,
 * and what is left of an ACK when slow start reaches ssthresh goes to the
 * increase; undo is the stack's max(cwnd, cwnd before the event).
 * Remaining difference: none (tests/difftest checks every event).
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define SCALABLE_AI_CNT  100U /* acknowledged segments per +1 above 100 */
#define SCALABLE_MD_SHIFT 3   /* a congestion event gives up cwnd >> 3 */

SEC("struct_ops")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);

	if (!itb_cwnd_limited(sk))
		return;
	if (itb_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, ITB_MIN(tp->snd_cwnd, SCALABLE_AI_CNT), acked);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	__u32 cwnd = itb_tcp(sk)->snd_cwnd;

	return ITB_MAX(cwnd - (cwnd >> SCALABLE_MD_SHIFT), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_scalable = {
	.ssthresh = (void *)scalable_ssthresh,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.cong_avoid = (void *)scalable_cong_avoid,
	.name = "itb_scalable",
};
