// SPDX-License-Identifier: GPL-2.0
/* HighSpeed TCP, after S. Floyd, RFC 3649 "HighSpeed TCP for Large Congestion
 * Windows" (2003).
 *
 * At or below Low_Window (38 segments) it is standard TCP. Above it, in
 * congestion avoidance each ACK adds a(w)/w segments (a(w) per RTT), and a
 * congestion event multiplies the window by 1 - b(w); a(w) and b(w) come from
 * the RFC's formulas (section 5), tabulated by gen_highspeed_table.py
 * (highspeed_table.h). Response function: w = 0.12 / p^0.835.
 *
 * Differences from the RFC: the window is in segments; a(w) and b(w) are kept
 * in 1/256 at windows 6 % apart (the row at or below cwnd applies), where
 * Appendix B's table rounds a(w) down to whole segments (which makes HighSpeed
 * Reno up to 118 segments and bends the response function there). Slow start
 * is the kernel's (the RFC leaves it to RFC 3742).
 */
#include "itb_cc.h"
#include "highspeed_table.h"

char _license[] SEC("license") = "GPL";

/* The table row holding cwnd: a binary search of fixed depth (log2 HS_SLOTS
 * steps) that the verifier checks in a few instructions. The asm mask proves
 * every index in bounds (the compiler would drop a C mask as redundant). */
static __always_inline __u32 hs_row(__u32 cwnd)
{
	__u64 row = 0, next;
	int step;

#pragma unroll
	for (step = HS_SLOTS / 2; step > 0; step /= 2) {
		next = row + step;
		asm volatile("%0 &= %1" : "+r"(next) : "i"(HS_SLOTS - 1));
		if (cwnd >= hs_window[next])
			row = next;
	}
	asm volatile("%0 &= %1" : "+r"(row) : "i"(HS_SLOTS - 1));
	return row;
}

SEC("struct_ops")
void BPF_PROG(hs_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);

	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* +a(w) segments per window of ACKs, in 1/HS_FIXED; row 0 (w < 38 too) is Reno's +1 */
	tcp_cong_avoid_ai(tp, tp->snd_cwnd * HS_FIXED, acked * hs_increase[hs_row(tp->snd_cwnd)]);
}

SEC("struct_ops")
__u32 BPF_PROG(hs_ssthresh, struct sock *sk)
{
	__u32 cwnd = itb_tcp(sk)->snd_cwnd;
	__u32 give_up = (__u32)(((__u64)cwnd * hs_decrease[hs_row(cwnd)]) >> 8);

	return ITB_MAX(cwnd - give_up, 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(hs_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_highspeed = {
	.cong_avoid = (void *)hs_cong_avoid,
	.ssthresh = (void *)hs_ssthresh,
	.undo_cwnd = (void *)hs_undo_cwnd,
	.name = "itb_highspeed",
};
