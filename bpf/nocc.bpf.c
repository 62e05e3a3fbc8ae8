// SPDX-License-Identifier: GPL-2.0
/* "TCP without congestion control" for paced transfers (profile pursuit; the
 * ITB documents' fixed-window TCP). Not a published algorithm: a constant,
 * large window from the first ACK on, no slow start, and no reaction to loss
 * (the stack still retransmits what is lost). The rate is set by pacing
 * (SO_MAX_PACING_RATE), so the window must only never be the limit.
 *
 * It owns the whole control (cong_control): Linux's loss-recovery window
 * reduction is not applied, after a retransmission timeout the next ACK
 * restores the window, and every ACK sets the pacing rate to the cap.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

/* Segments: 1 << 20 full segments is ~1.5 GB in flight, far above any BDP the
 * emulator makes (10 Gbit/s × 1 s); the socket buffers bound it in practice. */
#define NOCC_CWND (1U << 20)

static __always_inline void nocc_hold(struct sock *sk)
{
	struct tcp_sock *tp = itb_tcp(sk);

	tp->snd_cwnd = ITB_MIN(NOCC_CWND, tp->snd_cwnd_clamp);
	tp->snd_ssthresh = tp->snd_cwnd;  /* never "in slow start" */
	/* The pacing rate is the cap the sender sets (SO_MAX_PACING_RATE), raised as well as
	 * lowered: owning cong_control, nocc is what the stack leaves the pacing rate to
	 * (setting the cap alone only ever lowers it). */
	sk->sk_pacing_rate = sk->sk_max_pacing_rate;
}

SEC("struct_ops")
void BPF_PROG(nocc_init, struct sock *sk)
{
	nocc_hold(sk);
}

SEC("struct_ops")
void BPF_PROG(nocc_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	nocc_hold(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(nocc_ssthresh, struct sock *sk)
{
	return itb_tcp(sk)->snd_cwnd;  /* a loss does not lower the window */
}

SEC("struct_ops")
__u32 BPF_PROG(nocc_undo_cwnd, struct sock *sk)
{
	return itb_tcp(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_nocc = {
	.init = (void *)nocc_init,
	.cong_control = (void *)nocc_cong_control,
	.ssthresh = (void *)nocc_ssthresh,
	.undo_cwnd = (void *)nocc_undo_cwnd,
	.name = "itb_nocc",
};
