// SPDX-License-Identifier: GPL-2.0
/* TCP Vegas as Linux runs it: the behaviour of net/ipv4/tcp_vegas.c (Linux
 * 6.12, the version the differential test in tests/difftest runs against) with
 * its module parameters at their defaults (alpha 2, beta 4, gamma 1). Written
 * for ITB from that behaviour; the algorithm is L. Brakmo, L. Peterson, "TCP
 * Vegas: End to End Congestion Avoidance on a Global Internet", IEEE JSAC
 * 13(8), 1995.
 *
 * Linux's rules: BaseRTT is the smallest RTT sample (+1 us) since the last
 * (re)start; RTT the smallest in the last round (a round ends when an ACK
 * passes the snd_nxt of its start). With more than 2 samples in the round,
 * diff = cwnd (RTT - BaseRTT) / BaseRTT segments are queued:
 * - in slow start, diff > gamma sets cwnd to the actual rate times BaseRTT,
 *   plus one, and ends slow start; otherwise slow start goes on (every RTT,
 *   not every other one as in the paper);
 * - in congestion avoidance, diff > beta takes one segment off (and lowers
 *   ssthresh with it), diff < alpha adds one;
 * - then ssthresh is kept at least 3/4 of cwnd outside a reduction.
 * With 2 samples or fewer, or outside Open state, or before the first round
 * after a (re)start, it is Reno (the kernel's). Vegas restarts (BaseRTT
 * forgotten) at connection start, after idle (the stack's restart and the
 * first send with nothing in flight) and leaves its mode outside Open state.
 * Losses are Reno's: halve, undo to max(cwnd, cwnd before the event).
 * As Linux, the Vegas adjustments do not ask whether the flow is cwnd-limited
 * (Reno's part does).
 * Remaining difference: none in cwnd/ssthresh (tests/difftest checks every
 * event). Linux's get_info (Vegas state for `ss -i`) has no BPF hook.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define VEGAS_ALPHA 2U  /* segments queued: grow below this */
#define VEGAS_BETA  4U  /* segments queued: shrink above this */
#define VEGAS_GAMMA 1U  /* segments queued: leave slow start above this */
#define VEGAS_NO_RTT 0x7fffffffU

struct vegas {
	__u32 round_end;   /* snd_nxt at the start of this round */
	__u8 active;       /* Vegas decisions this round (else Reno) */
	__u16 samples;     /* RTT samples this round (16 bits, as Linux) */
	__u32 round_rtt;   /* us + 1: smallest sample this round */
	__u32 base_rtt;    /* us + 1: smallest sample since the (re)start */
};
_Static_assert(sizeof(struct vegas) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline void vegas_start_round(struct sock *sk)
{
	struct vegas *v = itb_priv(sk);

	v->active = 1;
	v->round_end = itb_tcp(sk)->snd_nxt;
	v->samples = 0;
	v->round_rtt = VEGAS_NO_RTT;
}

static __always_inline void vegas_restart(struct sock *sk)
{
	struct vegas *v = itb_priv(sk);

	v->base_rtt = VEGAS_NO_RTT;
	vegas_start_round(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	vegas_restart(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *v = itb_priv(sk);
	__u32 rtt;

	if (sample->rtt_us < 0)
		return;
	rtt = (__u32)(sample->rtt_us + 1);  /* never zero */
	if (rtt < v->base_rtt)
		v->base_rtt = rtt;
	v->round_rtt = ITB_MIN(v->round_rtt, rtt);
	v->samples++;
}

SEC("struct_ops")
void BPF_PROG(vegas_set_state, struct sock *sk, __u8 new_state)
{
	struct vegas *v = itb_priv(sk);

	if (new_state == TCP_CA_Open)
		vegas_start_round(sk);
	else
		v->active = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_restart(sk);
}

/* The once-per-round decision, with at least 3 samples. */
static __always_inline void vegas_adjust(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct vegas *v = itb_priv(sk);
	__u32 rtt = v->round_rtt, base = v->base_rtt, cwnd = tp->snd_cwnd;
	__u64 target = (__u64)cwnd * base / rtt;  /* actual rate x BaseRTT */
	__u32 queued = cwnd * (rtt - base) / base;

	if (queued > VEGAS_GAMMA && itb_in_slow_start(tp)) {
		tp->snd_cwnd = ITB_MIN(cwnd, (__u32)target + 1);
		tp->snd_ssthresh = ITB_MIN(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else if (queued > VEGAS_BETA) {
		tp->snd_cwnd = cwnd - 1;
		tp->snd_ssthresh = ITB_MIN(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (queued < VEGAS_ALPHA) {
		tp->snd_cwnd = cwnd + 1;
	}
	if (tp->snd_cwnd < 2)
		tp->snd_cwnd = 2;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
	tp->snd_ssthresh = itb_current_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct vegas *v = itb_priv(sk);

	if (!v->active) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (itb_after(ack, v->round_end)) {
		v->round_end = tp->snd_nxt;
		if (v->samples <= 2)
			tcp_reno_cong_avoid(sk, ack, acked);  /* too few samples */
		else
			vegas_adjust(sk, acked);
		v->samples = 0;
		v->round_rtt = VEGAS_NO_RTT;
	} else if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_vegas = {
	.init = (void *)vegas_init,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.cong_avoid = (void *)vegas_cong_avoid,
	.pkts_acked = (void *)vegas_pkts_acked,
	.set_state = (void *)vegas_set_state,
	.cwnd_event = (void *)vegas_cwnd_event,
	.name = "itb_vegas",
};
