/* The differential test's "adapter" side: Linux's own algorithm called through the
 * translation itb-sim's ns-3 adapter makes around every hook (native/sim/linux_state.h:
 * Linux's tcp_sock to ns-3's view in bytes and back, a tcp_sock of its own kept between
 * calls), compared event for event with the same algorithm called directly. Built as
 * ITB_OPS = itb_adapter (itb.cc.difftest, `itb cc verify --adapter`). What it checks: the
 * translation loses nothing an algorithm reads or writes; what it cannot: when ns-3
 * calls each hook. Written for ITB. */
#include "kernel.h"
#include "linux_state.h"

#define MSS_BYTES 1448U

const struct tcp_congestion_ops *ccdiff_linux_ops(void);

static struct tcp_sock shadow; /* the adapter's tcp_sock (the model has one sender) */
static u32 ssthresh_in;

/* the model's tcp_sock as ns-3 would hold it */
static struct ns3_view view_of(const struct tcp_sock *tp)
{
	struct ns3_view v = {0};
	v.cwnd_bytes = tp->snd_cwnd * MSS_BYTES;
	v.ssthresh_bytes =
		tp->snd_ssthresh >= 0x7fffffffU ? 0xffffffffU : tp->snd_ssthresh * MSS_BYTES;
	v.mss = MSS_BYTES;
	v.bytes_in_flight = tcp_packets_in_flight(tp) * MSS_BYTES;
	v.srtt_ns = (u64)tp->srtt_us * 1000 / 8;
	v.last_acked_seq = tp->snd_una;
	v.next_tx_seq = tp->snd_nxt;
	v.cwnd_limited = tp->is_cwnd_limited;
	v.ca_state = tp->inet_conn.icsk_ca_state;
	v.now_us = tp->tcp_mstamp;
	v.lsndtime = tp->lsndtime;
	return v;
}

static struct sock *in(struct sock *sk)
{
	struct ns3_view v = view_of(tcp_sk(sk));
	ssthresh_in = itb_state_in(&shadow, &v);
	return (struct sock *)&shadow;
}

static void out(struct sock *sk, int window)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ns3_view v = view_of(tp);
	itb_state_out(&shadow, &v, window, ssthresh_in);
	tp->snd_cwnd = v.cwnd_bytes / MSS_BYTES;
	tp->snd_ssthresh = v.ssthresh_bytes >= 0x7fffffffU ? 0x7fffffffU : v.ssthresh_bytes / MSS_BYTES;
	/* the window counter is Linux's own state: the model's side shows the adapter's */
	tp->snd_cwnd_cnt = shadow.snd_cwnd_cnt;
}

static void a_init(struct sock *sk)
{
	const struct tcp_congestion_ops *L = ccdiff_linux_ops();
	memset(&shadow, 0, sizeof(shadow));
	shadow.inet_conn.icsk_ca_ops = L;
	shadow.snd_cwnd_clamp = tcp_sk(sk)->snd_cwnd_clamp;
	shadow.snd_cwnd = tcp_sk(sk)->snd_cwnd;
	in(sk);
	if (L->init)
		L->init((struct sock *)&shadow);
	out(sk, 0);
}

static u32 a_ssthresh(struct sock *sk)
{
	struct sock *ssk = in(sk);
	itb_state_reduction(&shadow);
	u32 r = ccdiff_linux_ops()->ssthresh(ssk);
	shadow.snd_ssthresh = r;
	return r;
}

static void a_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	ccdiff_linux_ops()->cong_avoid(in(sk), ack, acked);
	out(sk, 1);
}

static void a_set_state(struct sock *sk, u8 new_state)
{
	tcp_set_ca_state(in(sk), new_state); /* Linux's: set_state, then the state */
	out(sk, 0);
}

static void a_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	const struct tcp_congestion_ops *L = ccdiff_linux_ops();
	if (!L->cwnd_event)
		return;
	L->cwnd_event(in(sk), ev);
	out(sk, 0);
}

static void a_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_congestion_ops *L = ccdiff_linux_ops();
	if (!L->pkts_acked)
		return;
	struct sock *ssk = in(sk);
	/* as the ns-3 adapter builds it: ns-3's acked segments and RTT, its bytes in flight */
	struct ack_sample s = {sample->pkts_acked, sample->rtt_us, shadow.packets_out};
	L->pkts_acked(ssk, &s);
	out(sk, 0);
}

static u32 a_undo_cwnd(struct sock *sk)
{
	return ccdiff_linux_ops()->undo_cwnd(in(sk));
}

struct tcp_congestion_ops itb_adapter = {
	.init = a_init,
	.ssthresh = a_ssthresh,
	.cong_avoid = a_cong_avoid,
	.set_state = a_set_state,
	.cwnd_event = a_cwnd_event,
	.pkts_acked = a_pkts_acked,
	.undo_cwnd = a_undo_cwnd,
	.name = "itb_adapter",
};
