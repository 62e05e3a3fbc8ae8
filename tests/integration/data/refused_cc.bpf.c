// SPDX-License-Identifier: GPL-2.0
/* A congestion control the verifier must refuse (it writes a read-only field of
 * tcp_sock): the test of how a failed load is reported. Registers as itb_bic. */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
__u32 BPF_PROG(refused_ssthresh, struct sock *sk)
{
	itb_tcp(sk)->snd_una = 5;  /* not writable: the verifier says so */
	return 2;
}

SEC("struct_ops")
void BPF_PROG(refused_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops")
__u32 BPF_PROG(refused_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_bic = {
	.cong_avoid = (void *)refused_cong_avoid,
	.ssthresh = (void *)refused_ssthresh,
	.undo_cwnd = (void *)refused_undo_cwnd,
	.name = "itb_bic",
};
