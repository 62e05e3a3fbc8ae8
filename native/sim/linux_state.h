/* The translation between ns-3's TCP state and Linux's struct tcp_sock that itb-sim's
 * adapter (linux_cc.cc) makes around every call of a Linux congestion-control hook; C,
 * so that the differential test runs Linux's algorithms through this very translation
 * (bpf/difftest's "adapter" build) and compares them event for event with Linux's
 * algorithms called directly. Written for ITB. */
#ifndef ITB_SIM_LINUX_STATE_H
#define ITB_SIM_LINUX_STATE_H

#include "ktypes.h"

/* What ns-3's TcpSocketState holds, in its units. */
struct ns3_view {
	u32 cwnd_bytes, ssthresh_bytes; /* ssthresh ≥ 0x7fffffff: not set yet (infinite) */
	u32 mss, bytes_in_flight;
	u64 srtt_ns;
	u32 last_acked_seq, next_tx_seq;
	u8 cwnd_limited, ca_state;
	u32 max_packets_out; /* the most packets out in the window (slow start's test) */
	u64 now_us;
	u32 lsndtime; /* jiffies of the last transmission */
	/* the socket's pacing as Linux keeps it beside every TCP socket (HyStart reads it):
	 * the cap in bytes/s (SO_MAX_PACING_RATE; ~0: none, so no pacing; 0: not modelled,
	 * the sock's fields left as they are), and the device's largest GSO frame */
	u64 max_pacing_rate;
	u32 gso_max_size;
};

/* Linux's sk_pacing_rate (net/ipv4/tcp_input.c, tcp_update_pacing_rate), bytes/s: the
 * window over the smoothed RTT, × 2 in slow start's first half (cwnd < ssthresh / 2;
 * sysctl tcp_pacing_ss_ratio 200), × 1.2 after it (tcp_pacing_ca_ratio 120), at most
 * the cap. */
static inline u64 itb_pacing_rate(const struct tcp_sock *tp, u64 max_pacing_rate)
{
	u64 rate = (u64)tp->mss_cache * ((1000000 / 100) << 3);
	u32 segs = tp->snd_cwnd > tp->packets_out ? tp->snd_cwnd : tp->packets_out;
	rate *= tp->snd_cwnd < tp->snd_ssthresh / 2 ? 200 : 120;
	rate *= segs;
	if (tp->srtt_us)
		rate /= tp->srtt_us;
	return rate < max_pacing_rate ? rate : max_pacing_rate;
}

/* Fills Linux's tcp_sock from ns-3's view; returns the threshold it set (in segments), to
 * tell afterwards whether the hook changed it. The window counter (snd_cwnd_cnt) and
 * the algorithm's private state stay as the previous call left them; the window too,
 * unless ns-3 changed it (recovery, a timeout). */
static inline u32 itb_state_in(struct tcp_sock *tp, const struct ns3_view *v)
{
	u32 cwnd = v->cwnd_bytes / v->mss;
	if (cwnd < 1)
		cwnd = 1;
	if (cwnd != tp->snd_cwnd)
		tp->snd_cwnd = cwnd;
	tp->mss_cache = v->mss;
	tp->snd_ssthresh =
		v->ssthresh_bytes >= 0x7fffffffU ? 0x7fffffffU : v->ssthresh_bytes / v->mss;
	tp->srtt_us = (u32)(v->srtt_ns * 8 / 1000); /* Linux keeps 8 × the smoothed RTT in µs */
	tp->snd_una = v->last_acked_seq;
	tp->snd_nxt = v->next_tx_seq;
	tp->packets_out = v->bytes_in_flight / v->mss;
	tp->is_cwnd_limited = v->cwnd_limited;
	tp->max_packets_out = v->max_packets_out;
	tp->inet_conn.icsk_ca_state = v->ca_state;
	tp->tcp_mstamp = v->now_us;
	tp->lsndtime = v->lsndtime;
	if (v->max_pacing_rate) {
		struct sock *sk = &tp->inet_conn.icsk_inet;
		sk->sk_pacing_rate = itb_pacing_rate(tp, v->max_pacing_rate);
		/* a finite SO_MAX_PACING_RATE turns TCP's own pacing on (net/core/sock.c) */
		sk->sk_pacing_status = v->max_pacing_rate != ~0ULL ? SK_PACING_NEEDED : SK_PACING_NONE;
		sk->sk_gso_max_size = v->gso_max_size;
	}
	return tp->snd_ssthresh;
}

/* After a segment is sent, Linux's tcp_cwnd_validate: whether the window limits the
 * sender, kept as the strongest signal over a window of data (until SND.UNA passes the
 * SND.NXT of when it was set), and the most packets out meanwhile, which lets slow start
 * grow the window to twice that (tcp_is_cwnd_limited). ns-3's own flag says only
 * whether the window was full at the last transmission: a paced sender, whose window is
 * full only for the moment before each ACK, rarely was, and its slow start stalled. */
static inline void itb_state_sent(struct tcp_sock *tp, int limited, u32 packets_out, u32 snd_una,
				  u32 snd_nxt)
{
	if ((s32)(snd_una - tp->cwnd_usage_seq) >= 0 || limited ||
	    (!tp->is_cwnd_limited && packets_out > tp->max_packets_out)) {
		tp->is_cwnd_limited = limited;
		tp->max_packets_out = packets_out;
		tp->cwnd_usage_seq = snd_nxt;
	}
}

/* What the hook changed, back into ns-3's view: the window when `window` (after
 * cong_avoid or undo), the threshold when the hook set it. */
static inline void itb_state_out(const struct tcp_sock *tp, struct ns3_view *v, int window,
				 u32 ssthresh_in)
{
	if (window)
		v->cwnd_bytes = tp->snd_cwnd * v->mss;
	if (tp->snd_ssthresh != ssthresh_in)
		v->ssthresh_bytes =
			tp->snd_ssthresh >= 0x7fffffffU ? 0xffffffffU : tp->snd_ssthresh * v->mss;
}

/* What Linux's stack does to the tcp_sock when a window reduction begins (recovery or a
 * timeout: tcp_init_cwnd_reduction, tcp_enter_loss) before it asks the algorithm for its
 * threshold; ns-3's stack does it to its own state, not to this one. */
static inline void itb_state_reduction(struct tcp_sock *tp)
{
	tp->snd_cwnd_cnt = 0;
	tp->prior_cwnd = tp->snd_cwnd;
}

#endif
