// SPDX-License-Identifier: GPL-2.0
/* H-TCP as Linux runs it: the behaviour of net/ipv4/tcp_htcp.c (Linux 6.12,
 * the version the differential test in tests/difftest runs against) with its
 * module parameters at their defaults (use_rtt_scaling = 1,
 * use_bandwidth_switch = 1). Written for ITB from that behaviour; the
 * algorithm is D. Leith, R. Shorten, "H-TCP: TCP for high-speed and
 * long-distance networks", PFLDnet 2004.
 *
 * Linux's rules, all in jiffies and fixed point (<< 7):
 * - Delta: time since the last congestion event (its start, or the end of an
 *   undone one). factor = 1 for Delta <= 1 s, else
 *   1 + (10 d + (d/2)^2 / HZ) / HZ with d = Delta - 1 s, in jiffies;
 * - RTT scaling: factor * 8 / clamp(HZ * 8 / (10 minRTT), 4, 80), so that a
 *   flow's growth in time does not depend on its RTT (reference 100 ms);
 * - alpha = 2 factor (1 - beta), recomputed each time cwnd grows; cwnd grows
 *   by one when snd_cwnd_cnt * alpha reaches cwnd, the count advancing by the
 *   segments of the last ACK in Open state (else by one);
 * - beta = minRTT / maxRTT in [0.5, 0.8] on a congestion event, but 0.5 on
 *   the first one, below a 10 ms minRTT, and whenever the achieved throughput
 *   (the bandwidth switch: a filtered rate measured once per window in Open
 *   or Disorder state) moved more than 20 % since the previous event;
 * - maxRTT grows only in Open state by steps of at most 20 ms and fades 5 %
 *   towards minRTT at each event; RTT samples in jiffies, rounded up;
 * - an undone event restores Delta's start, maxRTT and the throughput mark.
 * Only a cwnd-limited flow grows; slow start is the stack's (no carry-over).
 * Remaining difference: none in cwnd/ssthresh at HZ 100, 250 and 1000
 * (tests/difftest checks every event); at HZ 300 an RTT on an exact tick
 * boundary may round to the other tick (itb_us_to_jiffies). Jiffies come from
 * bpf_jiffies64() and HZ from the kernel's config.
 */
#include "itb_cc.h"

char _license[] SEC("license") = "GPL";

#define HTCP_ONE       128U /* 1.0, << 7 */
#define HTCP_BETA_MIN  64U  /* 0.5 */
#define HTCP_BETA_MAX  102U /* 0.8 */

struct htcp {
	__u32 alpha;        /* segments per RTT, << 7 */
	__u8 beta;          /* << 7 */
	__u8 had_event;     /* beta may follow the RTTs (after one event) */
	__u16 last_acked;   /* segments of the last ACK in Open (16 bits as Linux) */
	__u32 rate_count;   /* segments acknowledged since rate_at */
	__u32 rtt_min;      /* jiffies; 0: none yet */
	__u32 rtt_max;      /* jiffies */
	__u32 event_at;     /* jiffies: start of Delta */
	__u32 undo_event_at; /* event_at before the current event; 0: nothing to undo */
	__u32 undo_rtt_max;
	__u32 undo_rate_mark;
	__u32 rate_min;     /* segments per second */
	__u32 rate_max;
	__u32 rate_mark;    /* rate_max at the previous event */
	__u32 rate;         /* filtered rate */
	__u32 rate_at;      /* jiffies */
};
_Static_assert(sizeof(struct htcp) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline __u32 htcp_since_event(const struct htcp *ca)
{
	return itb_jiffies32() - ca->event_at;
}

SEC("struct_ops")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->alpha = HTCP_ONE;
	ca->beta = HTCP_BETA_MIN;
	ca->last_acked = 1;
	ca->event_at = itb_jiffies32();
}

static __always_inline void htcp_new_alpha(struct htcp *ca)
{
	__u32 hz = CONFIG_HZ, delta = htcp_since_event(ca), factor = 1;

	if (delta > hz) {
		delta -= hz;
		factor = 1 + (10 * delta + ((delta / 2) * (delta / 2) / hz)) / hz;
	}
	if (ca->rtt_min) {
		__u32 scale = (hz << 3) / (10 * ca->rtt_min);

		scale = ITB_MIN(ITB_MAX(scale, 4U), 80U);
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}
	ca->alpha = 2 * factor * (HTCP_ONE - ca->beta);
	if (!ca->alpha)
		ca->alpha = HTCP_ONE;
}

static __always_inline void htcp_new_beta(struct htcp *ca, __u32 rtt_min, __u32 rtt_max)
{
	__u32 rate_max = ca->rate_max, mark = ca->rate_mark;

	ca->rate_mark = rate_max;
	if (!itb_between(5 * rate_max, 4 * mark, 6 * mark)) {
		/* throughput moved by more than 20 %: back off by half */
		ca->beta = HTCP_BETA_MIN;
		ca->had_event = 0;
		return;
	}
	if (ca->had_event && rtt_min > itb_ms_to_jiffies(10) && rtt_max) {
		ca->beta = (__u8)((rtt_min << 7) / rtt_max);
		if (ca->beta < HTCP_BETA_MIN)
			ca->beta = HTCP_BETA_MIN;
		else if (ca->beta > HTCP_BETA_MAX)
			ca->beta = HTCP_BETA_MAX;
	} else {
		ca->beta = HTCP_BETA_MIN;
		ca->had_event = 1;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_ssthresh, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);
	__u32 rtt_min = ca->rtt_min, rtt_max = ca->rtt_max;

	htcp_new_beta(ca, rtt_min, rtt_max);
	htcp_new_alpha(ca);
	if (rtt_min > 0 && rtt_max > rtt_min)  /* fade maxRTT towards minRTT */
		ca->rtt_max = rtt_min + ((rtt_max - rtt_min) * 95) / 100;
	return ITB_MAX((itb_tcp(sk)->snd_cwnd * ca->beta) >> 7, 2U);
}

SEC("struct_ops")
void BPF_PROG(htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = itb_tcp(sk);
	struct htcp *ca = itb_priv(sk);

	if (!itb_cwnd_limited(sk))
		return;
	if (itb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* cwnd += alpha / cwnd per segment acknowledged */
	if ((tp->snd_cwnd_cnt * ca->alpha) >> 7 >= tp->snd_cwnd) {
		if (tp->snd_cwnd < tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd + 1;
		tp->snd_cwnd_cnt = 0;
		htcp_new_alpha(ca);
	} else {
		tp->snd_cwnd_cnt += ca->last_acked;
	}
	ca->last_acked = 1;
}

static __always_inline void htcp_rtt_sample(struct sock *sk, struct htcp *ca, __u32 rtt)
{
	if (ca->rtt_min > rtt || !ca->rtt_min)
		ca->rtt_min = rtt;
	if (itb_ca_state(sk) == TCP_CA_Open) {
		if (ca->rtt_max < ca->rtt_min)
			ca->rtt_max = ca->rtt_min;
		if (ca->rtt_max < rtt && rtt <= (__u64)ca->rtt_max + itb_ms_to_jiffies(20))
			ca->rtt_max = rtt;  /* no jump of more than 20 ms at once */
	}
}

SEC("struct_ops")
void BPF_PROG(htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct htcp *ca = itb_priv(sk);
	__u8 state = itb_ca_state(sk);
	__u32 now = itb_jiffies32(), cwnd = itb_tcp(sk)->snd_cwnd, step;

	if (state == TCP_CA_Open)
		ca->last_acked = (__u16)sample->pkts_acked;
	if (sample->rtt_us > 0)
		htcp_rtt_sample(sk, ca, itb_us_to_jiffies((__u32)sample->rtt_us));

	/* bandwidth switch: achieved rate, once per window, in Open or Disorder */
	if (state != TCP_CA_Open && state != TCP_CA_Disorder) {
		ca->rate_count = 0;
		ca->rate_at = now;
		return;
	}
	ca->rate_count += sample->pkts_acked;
	step = ca->alpha >> 7;
	if (!step)
		step = 1;
	if (ca->rate_count >= cwnd - step && now - ca->rate_at >= ca->rtt_min &&
	    ca->rtt_min > 0) {
		__u32 rate = ca->rate_count * CONFIG_HZ / (now - ca->rate_at);

		if (htcp_since_event(ca) / ca->rtt_min <= 3) {
			ca->rate_min = rate;  /* just after a backoff */
			ca->rate_max = rate;
			ca->rate = rate;
		} else {
			ca->rate = (3 * ca->rate + rate) / 4;
			if (ca->rate > ca->rate_max)
				ca->rate_max = ca->rate;
			if (ca->rate_min > ca->rate_max)
				ca->rate_min = ca->rate_max;
		}
		ca->rate_count = 0;
		ca->rate_at = now;
	}
}

SEC("struct_ops")
void BPF_PROG(htcp_set_state, struct sock *sk, __u8 new_state)
{
	struct htcp *ca = itb_priv(sk);

	if (new_state == TCP_CA_Open) {
		if (ca->undo_event_at) {  /* an event ended: Delta restarts now */
			ca->event_at = itb_jiffies32();
			ca->undo_event_at = 0;
		}
	} else if (new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery ||
		   new_state == TCP_CA_Loss) {
		ca->undo_event_at = ca->event_at;
		ca->undo_rtt_max = ca->rtt_max;
		ca->undo_rate_mark = ca->rate_mark;
		ca->event_at = itb_jiffies32();
	}
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_undo_cwnd, struct sock *sk)
{
	struct htcp *ca = itb_priv(sk);

	if (ca->undo_event_at) {
		ca->event_at = ca->undo_event_at;
		ca->rtt_max = ca->undo_rtt_max;
		ca->rate_mark = ca->undo_rate_mark;
		ca->undo_event_at = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops itb_htcp = {
	.init = (void *)htcp_init,
	.ssthresh = (void *)htcp_ssthresh,
	.cong_avoid = (void *)htcp_cong_avoid,
	.set_state = (void *)htcp_set_state,
	.undo_cwnd = (void *)htcp_undo_cwnd,
	.pkts_acked = (void *)htcp_pkts_acked,
	.name = "itb_htcp",
};
