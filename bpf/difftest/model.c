/* The differential test's TCP model (see model.h): the sender's ACK path, loss
 * recovery, RTO, undo, cwnd validation and idle restart as Linux's stack
 * calls the congestion control, written for ITB after tcp_input.c and
 * tcp_output.c. It uses Linux's own inline helpers (tcp_packets_in_flight,
 * tcp_current_ssthresh, tcp_is_cwnd_limited, tcp_ca_event, tcp_set_ca_state)
 * from the oracle's source tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "kernel/kernel.h"

#define FLAG_DATA_ACKED 0x04
#define FLAG_DATA_SACKED 0x20
#define FLAG_SND_UNA_ADVANCED 0x400
#define FLAG_DSACKING_ACK 0x800
#define DUPTHRESH 3U
#define DELACK_US 40000U
#define RTO_MIN_US 200000U
#define RTO_MAX_US 120000000ULL

static struct seg *R(struct sim *s, u32 q)
{
	return &s->ring[q & (RING - 1)];
}

static struct sock *SK(struct sim *s)
{
	return (struct sock *)&s->tp;
}

static u32 seq(const struct sim *s, u32 q)
{
	return s->iss + q * MSS;
}

static u32 us_to_jiffies(const struct sim *s, u64 us)
{
	return (u32)((us * s->hz + 999999) / 1000000);
}

static void set_clock(struct sim *s, u64 t)
{
	s->now_us = t;
	jiffies = s->jiffies0 + t * s->hz / 1000000;
	ccdiff_now_ns = t * 1000;
	s->tp.tcp_mstamp = t;
}

/* --- event queue: a binary heap on (time, insertion order) --- */

static bool ev_before(const struct event *a, const struct event *b)
{
	return a->at_us < b->at_us || (a->at_us == b->at_us && a->order < b->order);
}

void sim_push(struct sim *s, struct event e)
{
	u32 i;

	if (s->heap_len == s->heap_cap) {
		s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 1024;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(*s->heap));
		if (!s->heap) {
			fprintf(stderr, "ccdiff: out of memory\n");
			exit(2);
		}
	}
	e.order = s->order++;
	for (i = s->heap_len++; i > 0 && ev_before(&e, &s->heap[(i - 1) / 2]); i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = e;
}

static struct event ev_pop(struct sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->heap_len];
	u32 i = 0, c;

	while ((c = 2 * i + 1) < s->heap_len) {
		if (c + 1 < s->heap_len && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	s->heap[i] = last;
	return top;
}

static void fifo_push(struct sim *s, struct fifo *f, struct event e)
{
	if (f->len == f->cap) {
		u32 cap = f->cap ? 2 * f->cap : 1024;
		struct event *buf = malloc(cap * sizeof(*buf));

		if (!buf) {
			fprintf(stderr, "ccdiff: out of memory\n");
			exit(2);
		}
		for (u32 i = 0; i < f->len; i++)
			buf[i] = f->buf[(f->head + i) % f->cap];
		free(f->buf);
		f->buf = buf;
		f->head = 0;
		f->cap = cap;
	}
	e.order = s->order++;
	f->buf[(f->head + f->len++) % f->cap] = e;
}

static const struct event *fifo_peek(const struct fifo *f)
{
	return f->len ? &f->buf[f->head] : NULL;
}

static struct event fifo_pop(struct fifo *f)
{
	struct event e = f->buf[f->head];

	f->head = (f->head + 1) % f->cap;
	f->len--;
	return e;
}

static void push_at(struct sim *s, u64 at, u8 kind, u32 gen)
{
	struct event e = { .at_us = at, .kind = kind, .gen = gen, .sack = -1, .dsack = -1 };

	sim_push(s, e);
}

static void push_app_write(struct sim *s, u64 at)
{
	struct event e = { .at_us = at, .kind = EV_SCRIPT, .action = -1, .sack = -1, .dsack = -1 };

	sim_push(s, e);
}

/* --- network --- */

static void transmit(struct sim *s, u32 q, bool retrans)
{
	struct link *l = &s->link;
	struct event e = { .kind = EV_ARRIVE, .seg = q, .retrans = retrans, .sack = -1,
			   .dsack = -1, .echo_us = s->now_us };
	double depart = s->now_us;
	bool drop = false;

	R(s, q)->sent_us = s->now_us;
	if (!retrans && l->drop_every && ++s->orig_sent % l->drop_every == 0)
		drop = true;
	if (!retrans && l->loss_p > 0) {
		l->rng ^= l->rng >> 12;
		l->rng ^= l->rng << 25;
		l->rng ^= l->rng >> 27;
		if ((double)((l->rng * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53) < l->loss_p) {
			drop = true;
			s->c.random_drops++;
		}
	}
	if (!retrans)
		s->c.orig_sent++;
	if (s->now_us >= l->burst_from_us && s->now_us < l->burst_to_us)
		drop = true;
	if (l->rate_sps > 0) {
		double start = s->link_free_us > depart ? s->link_free_us : depart;
		double backlog = (start - depart) * l->rate_sps / 1e6;

		if (l->buffer && backlog >= l->buffer) {
			drop = true;
		} else if (!drop) {
			s->link_free_us = start + 1e6 / l->rate_sps;
			depart = s->link_free_us;
		}
	}
	if (drop) {
		s->c.drops++;
		return;
	}
	e.at_us = (u64)depart + l->owd_us;
	if (!retrans && l->reorder_us && q == l->reorder_seg) {
		e.at_us += l->reorder_us;
		s->c.reordered++;
		sim_push(s, e);  /* out of order: the heap */
		return;
	}
	fifo_push(s, &s->arrivals, e);
}

/* --- receiver: cumulative ACK, one SACK or D-SACK block, delayed ACKs --- */

static void send_ack(struct sim *s, s64 sack, s64 dsack)
{
	struct event e = { .at_us = s->now_us + s->link.owd_us, .kind = EV_ACK,
			   .seg = s->rcv_nxt, .sack = sack, .dsack = dsack,
			   .echo_us = s->ts_recent };

	s->rcv_unacked = 0;
	s->delack_armed = false;
	fifo_push(s, &s->acks, e);
}

static void on_arrive(struct sim *s, const struct event *e)
{
	u32 q = e->seg;
	bool had_ooo;

	if ((s32)(q - s->rcv_nxt) < 0 || R(s, q)->received) {
		send_ack(s, -1, q);  /* a duplicate: D-SACK it */
		return;
	}
	R(s, q)->received = 1;
	if (q != s->rcv_nxt) {
		s->rcv_ooo++;
		send_ack(s, q, -1);  /* out of order: ACK at once with a SACK */
		return;
	}
	had_ooo = s->rcv_ooo > 0;
	s->ts_recent = e->echo_us;
	s->rcv_nxt++;
	while (s->rcv_ooo && R(s, s->rcv_nxt)->received) {
		s->rcv_nxt++;
		s->rcv_ooo--;
	}
	if (had_ooo || ++s->rcv_unacked >= s->link.ack_every) {
		send_ack(s, -1, -1);
	} else if (!s->delack_armed) {
		s->delack_armed = true;
		s->delack_due_us = s->now_us + DELACK_US;
		if (!s->delack_pending) {
			s->delack_pending = true;
			push_at(s, s->delack_due_us, EV_DELACK, 0);
		}
	}
}

/* --- sender helpers --- */

static u32 in_flight(struct sim *s)
{
	return tcp_packets_in_flight(&s->tp);
}

static void rearm_rto(struct sim *s)
{
	s->rto_gen++;
	if (!s->tp.packets_out) {
		s->rto_at = 0;
		return;
	}
	s->rto_at = s->now_us + s->rto_us;
	push_at(s, s->rto_at, EV_RTO, s->rto_gen);
}

static void rtt_sample(struct sim *s, u64 rtt)
{
	if (!s->srtt_us) {
		s->srtt_us = rtt;
		s->rttvar_us = rtt / 2;
	} else {
		u64 err = rtt > s->srtt_us ? rtt - s->srtt_us : s->srtt_us - rtt;

		s->rttvar_us = (3 * s->rttvar_us + err) / 4;
		s->srtt_us = (7 * s->srtt_us + rtt) / 8;
	}
	s->rto_us = s->srtt_us + (4 * s->rttvar_us > RTO_MIN_US ? 4 * s->rttvar_us : RTO_MIN_US);
	s->tp.srtt_us = (u32)(s->srtt_us << 3);
	s->tp.inet_conn.icsk_rto = us_to_jiffies(s, s->rto_us);
}

static bool any_retrans_done(struct sim *s)
{
	return s->tp.retrans_out || (s->una != s->nxt && R(s, s->una)->ever_retrans);
}

static bool no_space(const struct sim *s)
{
	return s->app == APP_BULK;  /* the application is blocked on a full buffer */
}

/* tcp_cwnd_validate, with tcp_cwnd_application_limited */
static void cwnd_validate(struct sim *s, bool is_cwnd_limited)
{
	struct tcp_sock *tp = &s->tp;

	if (!before(tp->snd_una, tp->cwnd_usage_seq) || is_cwnd_limited ||
	    (!tp->is_cwnd_limited && tp->packets_out > tp->max_packets_out)) {
		tp->is_cwnd_limited = is_cwnd_limited;
		tp->max_packets_out = tp->packets_out;
		tp->cwnd_usage_seq = tp->snd_nxt;
	}
	if (tcp_is_cwnd_limited(SK(s))) {
		tp->snd_cwnd_used = 0;
		tp->snd_cwnd_stamp = tcp_jiffies32;
		return;
	}
	if (tp->packets_out > tp->snd_cwnd_used)
		tp->snd_cwnd_used = tp->packets_out;
	if ((s32)(tcp_jiffies32 - tp->snd_cwnd_stamp) >= (s32)tp->inet_conn.icsk_rto &&
	    !s->ops->cong_control) {
		if (tp->inet_conn.icsk_ca_state == TCP_CA_Open && !no_space(s)) {
			u32 win_used = max(tp->snd_cwnd_used, (u32)TCP_INIT_CWND);

			if (win_used < tcp_snd_cwnd(tp)) {
				tp->snd_ssthresh = tcp_current_ssthresh(SK(s));
				tcp_snd_cwnd_set(tp, (tcp_snd_cwnd(tp) + win_used) >> 1);
				s->c.app_limited_cuts++;
			}
			tp->snd_cwnd_used = 0;
		}
		tp->snd_cwnd_stamp = tcp_jiffies32;
	}
}

/* tcp_event_data_sent: the first segment sent with nothing in flight */
static void data_sent(struct sim *s)
{
	if (in_flight(s) == 0) {
		tcp_ca_event(SK(s), CA_EVENT_TX_START);
		s->c.tx_starts++;
	}
	s->tp.lsndtime = tcp_jiffies32;
}

static void retransmit(struct sim *s, u32 q)
{
	struct tcp_sock *tp = &s->tp;
	struct seg *g = R(s, q);

	data_sent(s);
	transmit(s, q, true);
	if (!s->retrans_stamp_us)
		s->retrans_stamp_us = s->now_us;
	if (tp->undo_retrans < 0)
		tp->undo_retrans = 0;
	tp->undo_retrans++;
	g->in_retrans = 1;
	g->ever_retrans = 1;
	tp->retrans_out++;
	if (tcp_in_cwnd_reduction(SK(s)))
		tp->prr_out++;
	if (!s->rto_at)
		rearm_rto(s);
}

static bool app_has_data(const struct sim *s)
{
	return s->app == APP_BULK || (s->app == APP_RATE && s->app_credit >= 1);
}

void sim_send(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;
	u32 sent = 0, q;
	bool cwnd_limited = false;

	/* lost segments first (tcp_xmit_retransmit_queue) */
	for (q = s->rexmit_hint; tp->lost_out && (s32)(q - s->nxt) < 0; q++) {
		struct seg *g = R(s, q);

		if (!g->lost || g->in_retrans || g->sacked) {
			if (q == s->rexmit_hint)
				s->rexmit_hint++;
			continue;
		}
		if (in_flight(s) >= tcp_snd_cwnd(tp))
			break;
		retransmit(s, q);
	}
	/* new data (tcp_write_xmit) */
	while (app_has_data(s)) {
		struct seg *g;
		u32 prior_packets = tp->packets_out;

		if (s->pace_sps > 0 && s->now_us < s->pace_next_us) {
			if (!s->pace_timer) {
				s->pace_timer = true;
				push_at(s, s->pace_next_us, EV_PACE, ++s->pace_gen);
			}
			break;
		}
		if (in_flight(s) >= tcp_snd_cwnd(tp))
			break;
		if (s->nxt - s->una >= RING - 1) {
			fprintf(stderr, "ccdiff: more than %u segments in flight\n", RING - 1);
			exit(2);
		}
		data_sent(s);
		q = s->nxt++;
		g = R(s, q);
		memset(g, 0, sizeof(*g));
		tp->packets_out++;
		tp->snd_nxt = seq(s, s->nxt);
		transmit(s, q, false);
		if (!prior_packets)
			rearm_rto(s);
		if (s->app == APP_RATE)
			s->app_credit -= 1;
		if (s->pace_sps > 0) {
			u64 base = s->pace_next_us > s->now_us ? s->pace_next_us : s->now_us;

			s->pace_next_us = base + (u64)(1e6 / s->pace_sps);
		}
		sent++;
	}
	cwnd_limited = in_flight(s) >= tcp_snd_cwnd(tp);
	if (sent || cwnd_limited)
		cwnd_validate(s, cwnd_limited);
	if (sent && tcp_in_cwnd_reduction(SK(s)))
		tp->prr_out += sent;
}

/* --- congestion events (tcp_input.c) --- */

static void init_undo(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;

	tp->undo_marker = tp->snd_una;
	tp->undo_retrans = tp->retrans_out ? (int)tp->retrans_out : -1;
}

static void init_cwnd_reduction(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;

	tp->high_seq = tp->snd_nxt;
	tp->snd_cwnd_cnt = 0;
	tp->prior_cwnd = tcp_snd_cwnd(tp);
	tp->prr_delivered = 0;
	tp->prr_out = 0;
	tp->snd_ssthresh = s->ops->ssthresh(SK(s));
}

static void cwnd_reduction(struct sim *s, int newly_acked_sacked, int newly_lost, int flag)
{
	struct tcp_sock *tp = &s->tp;
	int sndcnt = 0, delta = tp->snd_ssthresh - in_flight(s);

	if (newly_acked_sacked <= 0 || ccdiff_warn(!tp->prior_cwnd, "cwnd_reduction"))
		return;
	tp->prr_delivered += newly_acked_sacked;
	if (delta < 0) {
		u64 dividend = (u64)tp->snd_ssthresh * tp->prr_delivered + tp->prior_cwnd - 1;

		sndcnt = (int)(dividend / tp->prior_cwnd - tp->prr_out);
	} else {
		sndcnt = max_t(int, tp->prr_delivered - tp->prr_out, newly_acked_sacked);
		if ((flag & FLAG_SND_UNA_ADVANCED) && !newly_lost)
			sndcnt++;
		sndcnt = min(delta, sndcnt);
	}
	sndcnt = max(sndcnt, tp->prr_out ? 0 : 1);
	tcp_snd_cwnd_set(tp, in_flight(s) + sndcnt);
}

static void end_cwnd_reduction(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;

	if (s->ops->cong_control)
		return;
	if (tp->snd_ssthresh < TCP_INFINITE_SSTHRESH &&
	    (tp->inet_conn.icsk_ca_state == TCP_CA_CWR || tp->undo_marker)) {
		tcp_snd_cwnd_set(tp, tp->snd_ssthresh);
		tp->snd_cwnd_stamp = tcp_jiffies32;
	}
	tcp_ca_event(SK(s), CA_EVENT_COMPLETE_CWR);
}

static void enter_recovery(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;

	tp->prior_ssthresh = 0;
	init_undo(s);
	if (!tcp_in_cwnd_reduction(SK(s))) {
		tp->prior_ssthresh = tcp_current_ssthresh(SK(s));
		init_cwnd_reduction(s);
	}
	tcp_set_ca_state(SK(s), TCP_CA_Recovery);
	s->c.recoveries++;
	if (tp->prior_cwnd)
		s->c.beta_sum += 1.0 - (double)tp->snd_ssthresh / tp->prior_cwnd;
}

static void undo_cwnd_reduction(struct sim *s, bool unmark_loss)
{
	struct tcp_sock *tp = &s->tp;

	if (unmark_loss) {
		for (u32 q = s->una; (s32)(q - s->nxt) < 0; q++)
			R(s, q)->lost = 0;
		tp->lost_out = 0;
		s->mark_from = s->una;
	}
	if (tp->prior_ssthresh) {
		tcp_snd_cwnd_set(tp, s->ops->undo_cwnd(SK(s)));
		if (tp->prior_ssthresh > tp->snd_ssthresh)
			tp->snd_ssthresh = tp->prior_ssthresh;
		s->c.undos++;
	}
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tp->undo_marker = 0;
}

static bool packet_delayed(const struct sim *s, const struct event *e)
{
	return s->retrans_stamp_us && e->echo_us < s->retrans_stamp_us;
}

static bool may_undo(const struct sim *s, const struct event *e)
{
	return s->tp.undo_marker && (!s->tp.undo_retrans || packet_delayed(s, e));
}

static void try_keep_open(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;
	int state = TCP_CA_Open;

	if (tp->sacked_out + tp->lost_out || any_retrans_done(s))
		state = TCP_CA_Disorder;
	if (tp->inet_conn.icsk_ca_state != state) {
		tcp_set_ca_state(SK(s), state);
		tp->high_seq = tp->snd_nxt;
	}
}

static void try_to_open(struct sim *s)
{
	if (!any_retrans_done(s))
		s->retrans_stamp_us = 0;
	if (s->tp.inet_conn.icsk_ca_state != TCP_CA_CWR)
		try_keep_open(s);
}

static void try_undo_recovery(struct sim *s, const struct event *e)
{
	if (may_undo(s, e))
		undo_cwnd_reduction(s, false);
	tcp_set_ca_state(SK(s), TCP_CA_Open);
}

static bool try_undo_dsack(struct sim *s)
{
	if (s->tp.undo_marker && !s->tp.undo_retrans) {
		undo_cwnd_reduction(s, false);
		return true;
	}
	return false;
}

/* FACK-style marking: a segment with DUPTHRESH segments SACKed above it is
 * lost (a retransmission is left to the RTO). */
static int mark_losses(struct sim *s)
{
	int newly = 0;
	u32 q;

	if (!s->highest_sacked)
		return 0;
	if ((s32)(s->mark_from - s->una) < 0)
		s->mark_from = s->una;
	for (q = s->mark_from; (s32)(q + DUPTHRESH - s->highest_sacked) < 0; q++) {
		struct seg *g = R(s, q);

		if (g->sacked || g->lost || g->ever_retrans)
			continue;
		g->lost = 1;
		s->tp.lost_out++;
		if ((s32)(q - s->rexmit_hint) < 0)
			s->rexmit_hint = q;
		newly++;
	}
	s->mark_from = q;
	return newly;
}

static void fastretrans_alert(struct sim *s, int flag, const struct event *e, int *newly_lost)
{
	struct tcp_sock *tp = &s->tp;
	u8 state = tp->inet_conn.icsk_ca_state;

	if (state == TCP_CA_Open) {
		s->retrans_stamp_us = 0;
	} else if (!before(tp->snd_una, tp->high_seq) && state == TCP_CA_Recovery) {
		try_undo_recovery(s, e);
		end_cwnd_reduction(s);
	}
	switch (tp->inet_conn.icsk_ca_state) {
	case TCP_CA_Recovery:
		/* tcp_try_undo_partial: the hole was filled by a delayed original */
		if ((flag & FLAG_SND_UNA_ADVANCED) && tp->undo_marker && packet_delayed(s, e)) {
			if (tp->retrans_out)
				return;
			if (!any_retrans_done(s))
				s->retrans_stamp_us = 0;
			undo_cwnd_reduction(s, true);
			try_keep_open(s);
		}
		if (try_undo_dsack(s))
			try_to_open(s);
		*newly_lost += mark_losses(s);
		if (tp->inet_conn.icsk_ca_state != TCP_CA_Recovery) {
			if (!tp->lost_out)
				return;
			enter_recovery(s);
		}
		return;
	case TCP_CA_Loss:
		/* tcp_process_loss (no F-RTO) */
		if ((flag & FLAG_SND_UNA_ADVANCED) && may_undo(s, e)) {
			undo_cwnd_reduction(s, true);
			tp->inet_conn.icsk_retransmits = 0;
			tcp_set_ca_state(SK(s), TCP_CA_Open);
		} else if (!before(tp->snd_una, tp->high_seq)) {
			try_undo_recovery(s, e);
		}
		*newly_lost += mark_losses(s);
		if (tp->inet_conn.icsk_ca_state != TCP_CA_Open)
			return;
		fallthrough;  /* the state machine goes on from Open */
	default:
		if (tp->inet_conn.icsk_ca_state <= TCP_CA_Disorder)
			try_undo_dsack(s);
		*newly_lost += mark_losses(s);
		if (!tp->lost_out) {
			try_to_open(s);
			return;
		}
		enter_recovery(s);
	}
}

/* tcp_enter_loss, from the retransmission timer */
static void on_rto(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;
	u8 state = tp->inet_conn.icsk_ca_state;

	if (!tp->packets_out)
		return;
	for (u32 q = s->una; (s32)(q - s->nxt) < 0; q++) {
		struct seg *g = R(s, q);

		if (g->sacked)
			continue;
		if (g->in_retrans) {
			g->in_retrans = 0;
			tp->retrans_out--;
		}
		if (!g->lost) {
			g->lost = 1;
			tp->lost_out++;
		}
	}
	s->rexmit_hint = s->una;
	if (state <= TCP_CA_Disorder || !after(tp->high_seq, tp->snd_una) ||
	    (state == TCP_CA_Loss && !tp->inet_conn.icsk_retransmits)) {
		tp->prior_ssthresh = tcp_current_ssthresh(SK(s));
		tp->prior_cwnd = tcp_snd_cwnd(tp);
		tp->snd_ssthresh = s->ops->ssthresh(SK(s));
		tcp_ca_event(SK(s), CA_EVENT_LOSS);
		init_undo(s);
	}
	tcp_snd_cwnd_set(tp, in_flight(s) + 1);
	tp->snd_cwnd_cnt = 0;
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tcp_set_ca_state(SK(s), TCP_CA_Loss);
	tp->high_seq = tp->snd_nxt;
	s->c.rtos++;
	tp->inet_conn.icsk_retransmits++;
	s->rto_us = s->rto_us * 2 > RTO_MAX_US ? RTO_MAX_US : s->rto_us * 2;
	tp->inet_conn.icsk_rto = us_to_jiffies(s, s->rto_us);
	s->rto_at = 0;
	sim_send(s);
	rearm_rto(s);
}

/* tcp_ack: SACK tagging, tcp_clean_rtx_queue, pkts_acked, the recovery state
 * machine, then PRR or cong_avoid, then transmission. */
static void on_ack(struct sim *s, const struct event *e)
{
	struct tcp_sock *tp = &s->tp;
	struct sock *sk = SK(s);
	int flag = 0, newly_lost = 0;
	u32 delivered = 0, pkts_acked = 0, q;
	s64 ca_rtt = -1, sack_rtt = -1;
	bool retrans_acked = false, have_ackt = false;
	u64 last_ackt = 0;

	s->c.acks++;
	if ((s32)(e->seg - s->una) < 0)
		return;  /* an old ACK */
	if (e->sack >= 0 && (s32)((u32)e->sack - s->una) >= 0 && (s32)((u32)e->sack - s->nxt) < 0) {
		struct seg *g = R(s, (u32)e->sack);

		if (!g->sacked) {
			g->sacked = 1;
			tp->sacked_out++;
			if (g->lost) {
				g->lost = 0;
				tp->lost_out--;
				if (g->in_retrans) {
					g->in_retrans = 0;
					tp->retrans_out--;
				}
			}
			if (!g->ever_retrans)
				sack_rtt = s->now_us - g->sent_us;
			delivered++;
			flag |= FLAG_DATA_SACKED;
			if ((s32)((u32)e->sack + 1 - s->highest_sacked) > 0 || !s->highest_sacked)
				s->highest_sacked = (u32)e->sack + 1;
		}
	}
	if (e->dsack >= 0) {
		u32 d = (u32)e->dsack;

		flag |= FLAG_DSACKING_ACK;
		s->c.spurious_retrans++;
		if (tp->undo_marker && tp->undo_retrans > 0 &&
		    (s32)(seq(s, d) - tp->undo_marker) >= 0 && (s32)(d - s->una) < 0)
			tp->undo_retrans--;
	}
	for (q = s->una; (s32)(q - e->seg) < 0; q++) {
		struct seg *g = R(s, q);

		if (g->in_retrans)
			tp->retrans_out--;
		if (g->ever_retrans) {
			retrans_acked = true;
		} else if (!g->sacked) {
			last_ackt = g->sent_us;
			have_ackt = true;
		}
		if (g->sacked)
			tp->sacked_out--;
		else
			delivered++;
		if (g->lost)
			tp->lost_out--;
		tp->packets_out--;
		pkts_acked++;
	}
	if (pkts_acked) {
		s->una = e->seg;
		tp->snd_una = seq(s, s->una);
		if ((s32)(s->rexmit_hint - s->una) < 0)
			s->rexmit_hint = s->una;
		flag |= FLAG_DATA_ACKED | FLAG_SND_UNA_ADVANCED;
		tp->inet_conn.icsk_retransmits = 0;
	}
	tp->delivered += delivered;
	if (have_ackt && !retrans_acked)
		ca_rtt = s->now_us - last_ackt;
	if (sack_rtt >= 0)
		ca_rtt = sack_rtt;
	if (ca_rtt < 0 && (flag & FLAG_DATA_ACKED) && e->echo_us) {
		u64 ms = s->now_us / 1000 - e->echo_us / 1000;  /* from the echoed timestamp */

		ca_rtt = (ms ? ms : 1) * 1000;
	}
	if (ca_rtt >= 0)
		rtt_sample(s, ca_rtt);
	if (s->ops->pkts_acked) {
		struct ack_sample sample = { .pkts_acked = pkts_acked,
					     .rtt_us = ca_rtt >= 0 ? (s32)ca_rtt : -1,
					     .in_flight = MSS * in_flight(s) };

		s->ops->pkts_acked(sk, &sample);
	}
	if (flag & FLAG_DATA_ACKED)
		rearm_rto(s);
	if (!(flag & FLAG_SND_UNA_ADVANCED) || (flag & (FLAG_DATA_SACKED | FLAG_DSACKING_ACK)) ||
	    tp->inet_conn.icsk_ca_state != TCP_CA_Open)
		fastretrans_alert(s, flag, e, &newly_lost);
	if (tcp_in_cwnd_reduction(sk)) {
		cwnd_reduction(s, (int)delivered, newly_lost, flag);
	} else if (flag & FLAG_DATA_ACKED) {
		if (!tcp_is_cwnd_limited(sk))
			s->c.not_cwnd_limited_acks++;
		s->c.cong_avoid_calls++;
		s->ops->cong_avoid(sk, seq(s, e->seg), delivered);
		tp->snd_cwnd_stamp = tcp_jiffies32;
	}
	sim_send(s);
}

/* tcp_slow_start_after_idle_check, then tcp_cwnd_restart */
static void idle_check(struct sim *s)
{
	struct tcp_sock *tp = &s->tp;
	s32 delta;
	u32 restart, cwnd;

	if (tp->packets_out || s->ops->cong_control)
		return;
	delta = tcp_jiffies32 - tp->lsndtime;
	if (!(delta > (s32)tp->inet_conn.icsk_rto))
		return;
	restart = TCP_INIT_CWND;
	cwnd = tcp_snd_cwnd(tp);
	tcp_ca_event(SK(s), CA_EVENT_CWND_RESTART);
	s->c.restarts++;
	tp->snd_ssthresh = tcp_current_ssthresh(SK(s));
	restart = min(restart, cwnd);
	while ((delta -= tp->inet_conn.icsk_rto) > 0 && cwnd > restart)
		cwnd >>= 1;
	tcp_snd_cwnd_set(tp, max(cwnd, restart));
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tp->snd_cwnd_used = 0;
}

void sim_set_app(struct sim *s, enum app_mode mode, double sps)
{
	bool resumed = s->app == APP_STOPPED && mode != APP_STOPPED;

	s->app = mode;
	s->app_sps = sps;
	s->app_credit = 0;
	if (mode == APP_RATE)
		push_app_write(s, s->now_us);
	if (resumed)
		idle_check(s);  /* the application writes again (tcp_skb_entail) */
	sim_send(s);
}

void sim_set_pacing(struct sim *s, double sps)
{
	s->pace_sps = sps;
	s->pace_next_us = s->now_us;
	s->pace_timer = false;
	s->pace_gen++;
	sim_send(s);
}

static void app_write(struct sim *s)
{
	if (s->app != APP_RATE)
		return;
	s->app_credit += 1;
	idle_check(s);
	sim_send(s);
	push_app_write(s, s->now_us + (u64)(1e6 / s->app_sps));
}

bool sim_step(struct sim *s, u64 until_us, void (*script_action)(struct sim *, int))
{
	const struct event *heads[3] = { s->heap_len ? &s->heap[0] : NULL,
					 fifo_peek(&s->arrivals), fifo_peek(&s->acks) };
	int next = -1;
	struct event e;

	for (int i = 0; i < 3; i++)
		if (heads[i] && (next < 0 || ev_before(heads[i], heads[next])))
			next = i;
	if (next < 0 || heads[next]->at_us > until_us)
		return false;
	e = next == 0 ? ev_pop(s) : fifo_pop(next == 1 ? &s->arrivals : &s->acks);
	set_clock(s, e.at_us);
	s->last = e;
	s->c.events++;
	switch (e.kind) {
	case EV_ARRIVE:
		on_arrive(s, &e);
		break;
	case EV_ACK:
		on_ack(s, &e);
		break;
	case EV_DELACK:  /* one timer event at a time; a later deadline requeues it */
		s->delack_pending = false;
		if (s->delack_armed && s->rcv_unacked) {
			if (s->now_us >= s->delack_due_us) {
				send_ack(s, -1, -1);
			} else {
				s->delack_pending = true;
				push_at(s, s->delack_due_us, EV_DELACK, 0);
			}
		}
		break;
	case EV_RTO:
		if (e.gen == s->rto_gen && s->rto_at)
			on_rto(s);
		break;
	case EV_PACE:
		if (e.gen == s->pace_gen) {
			s->pace_timer = false;
			sim_send(s);
		}
		break;
	case EV_SCRIPT:
		if (e.action < 0)
			app_write(s);
		else
			script_action(s, e.action);
		break;
	}
	if (s->tp.snd_cwnd > s->c.max_cwnd)
		s->c.max_cwnd = s->tp.snd_cwnd;
	return true;
}

static const char *const STATE[] = { "Open", "Disorder", "CWR", "Recovery", "Loss" };

void sim_describe(const struct sim *s, char *out, size_t len)
{
	const struct event *e = &s->last;
	const char *st = STATE[s->tp.inet_conn.icsk_ca_state % 5];
	double t = e->at_us / 1e6;

	switch (e->kind) {
	case EV_ACK:
		snprintf(out, len, "t=%.6f s: ACK of segment %u (sack %lld, dsack %lld), now %s, "
			 "%u in flight", t, e->seg, (long long)e->sack, (long long)e->dsack, st,
			 tcp_packets_in_flight(&s->tp));
		break;
	case EV_RTO:
		snprintf(out, len, "t=%.6f s: retransmission timeout, now %s", t, st);
		break;
	case EV_PACE:
		snprintf(out, len, "t=%.6f s: pacing timer, %s", t, st);
		break;
	case EV_SCRIPT:
		snprintf(out, len, "t=%.6f s: script: %s, %s", t,
			 e->action < 0 ? "application write" : s->last_what, st);
		break;
	case EV_ARRIVE:
		snprintf(out, len, "t=%.6f s: segment %u reaches the receiver", t, e->seg);
		break;
	default:
		snprintf(out, len, "t=%.6f s: delayed ACK timer", t);
	}
}

int sim_init(struct sim *s, const struct tcp_congestion_ops *ops, const struct link *link,
	     u32 hz, u32 init_cwnd, u32 init_ssthresh)
{
	struct tcp_sock *tp = &s->tp;

	memset(s, 0, sizeof(*s));
	s->ring = calloc(RING, sizeof(*s->ring));
	if (!s->ring)
		return -1;
	s->ops = ops;
	s->link = *link;
	if (!s->link.ack_every)
		s->link.ack_every = 2;
	s->hz = hz;
	/* jiffies start 5 minutes before their 32-bit wrap, as after boot, less 10 s:
	 * every script longer than 10 s crosses the wrap */
	s->jiffies0 = (unsigned long)(unsigned int)(-(int)(hz * 10));
	s->iss = 0xfff00000U;  /* sequence numbers wrap early too */
	s->rto_us = 1000000;
	s->app = APP_BULK;
	set_clock(s, 0);
	tp->mss_cache = MSS;
	tp->snd_una = tp->snd_nxt = s->iss;
	tp->snd_cwnd = init_cwnd;
	tp->snd_ssthresh = init_ssthresh ? init_ssthresh : TCP_INFINITE_SSTHRESH;
	tp->snd_cwnd_clamp = ~0U;
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tp->lsndtime = tcp_jiffies32;
	tp->inet_conn.icsk_ca_ops = ops;
	tp->inet_conn.icsk_rto = us_to_jiffies(s, s->rto_us);
	/* tcp_init_congestion_control */
	tp->prior_ssthresh = 0;
	if (ops->init)
		ops->init(SK(s));
	tp->inet_conn.icsk_ca_initialized = 1;
	return 0;
}

void sim_free(struct sim *s)
{
	free(s->ring);
	free(s->heap);
	free(s->arrivals.buf);
	free(s->acks.buf);
}
