// SPDX-License-Identifier: GPL-2.0
/* HighSpeed TCP as Linux runs it: the behaviour of net/ipv4/tcp_highspeed.c
 * (Linux 6.12, the version the differential test in tests/difftest runs
 * against). Written for ITB from that behaviour; the algorithm is S. Floyd,
 * RFC 3649 "HighSpeed TCP for Large Congestion Windows" (2003).
 *
 * Linux's rules: the RFC's Appendix B table of windows (highspeed_table.h)
 * with whole-segment increases. A row index follows cwnd in congestion
 * avoidance (window above row i - 1's, up to row i's); each ACK, whatever it
 * acknowledges, adds i + 1 to a counter that grows cwnd by one when it
 * reaches cwnd, so +(i + 1) per RTT with one ACK per segment. A congestion
 * event gives up b(row) / 256 of cwnd, with the row as the last increase left
 * it (after slow start that is row 0: halving). Only a cwnd-limited flow
 * grows; slow start is the stack's; undo is the stack's max(cwnd, cwnd before
 * the event). Linux lowers the socket's snd_cwnd_clamp to 2^32/128 so that
 * cwnd * b cannot overflow.
 *
 * Remaining difference: a BPF program may not write snd_cwnd_clamp, so this
 * one applies the same bound itself where it grows cwnd (after slow start and
 * in the increase); cwnd and ssthresh are the same (tests/difftest checks every
 * event), the socket's clamp as getsockopt shows it is not.
 */
#include "itb_cc.h"
#include "highspeed_table.h"

char _license[] SEC("license") = "GPL";

#define HS_CLAMP (0xffffffffU / 128) /* cwnd * b(w) stays within 32 bits */

struct hstcp {
	__u32 row;  /* table row of the last increase */
};
_Static_assert(sizeof(struct hstcp) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline __u32 hs_clamp(const struct tcp_sock *tp)
{
	return ITB_MIN(tp->snd_cwnd_clamp, HS_CLAMP);
}

SEC("struct_ops")
void BPF_PROG(hs_init, struct sock *sk)
{
	struct hstcp *ca = itb_priv(sk);

	ca->row = 0;
}

/* The row whose window range holds cwnd: the number of rows whose window is
 * below it, at most the last row. Linux walks there from the previous row;
 * the table rises strictly, so the row is the same from any start. */
static __always_inline __u32 hs_row_for(__u32 cwnd)
{
	__u32 row = 0;
	int i;

	for (i = 0; i < HS_ROWS - 1; i++) {
		if (cwnd <= hs_window[i])
			break;
		row = i + 1;
	}
	return row;
}

SEC("struct_ops")
void BPF_PROG(hs_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct hstcp *ca = itb_priv(sk);
	__u32 cwnd;

	if (!itb_cwnd_limited(sk))
		return;
	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);  /* no carry-over into the increase */
		if (tp->snd_cwnd > HS_CLAMP)
			tp->snd_cwnd = HS_CLAMP;
		return;
	}
	cwnd = tp->snd_cwnd;
	ca->row = hs_row_for(cwnd);
	if (cwnd < hs_clamp(tp)) {
		/* +(row + 1) per window of ACKs */
		tp->snd_cwnd_cnt += ca->row + 1;
		if (tp->snd_cwnd_cnt >= cwnd) {
			tp->snd_cwnd_cnt -= cwnd;
			tp->snd_cwnd = cwnd + 1;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(hs_ssthresh, struct sock *sk)
{
	struct hstcp *ca = itb_priv(sk);
	__u32 cwnd = itb_tcp(sk)->snd_cwnd, row = ca->row;

	if (row >= HS_ROWS)
		row = HS_ROWS - 1;
	return ITB_MAX(cwnd - ((cwnd * hs_decrease[row]) >> 8), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(hs_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_highspeed = {
	.init = (void *)hs_init,
	.ssthresh = (void *)hs_ssthresh,
	.undo_cwnd = (void *)hs_undo_cwnd,
	.cong_avoid = (void *)hs_cong_avoid,
	.name = "itb_highspeed",
};
