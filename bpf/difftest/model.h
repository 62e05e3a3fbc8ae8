/* The differential test's TCP model: one bulk sender whose congestion control
 * hooks are called in the order and with the arguments Linux's stack uses
 * (tcp_input.c, tcp_output.c, tcp_cong.c), a bottleneck (rate, FIFO buffer,
 * propagation delay, scripted losses and reordering) and a SACK receiver
 * with delayed ACKs. Two models run the same script in lockstep, one with
 * Linux's algorithm and one with ITB's; being deterministic, they see the same
 * events as long as their windows agree. Written for ITB.
 *
 * Simplifications (the same for both sides, so they do not affect the
 * comparison, only which situations a script reaches): loss detection marks a
 * segment lost once 3 segments above it are SACKed (no RACK timer, no tail
 * loss probe, no F-RTO); a lost retransmission is recovered by the RTO; one
 * segment per packet (no TSO); ECN is off. */
#ifndef CCDIFF_MODEL_H
#define CCDIFF_MODEL_H

#include "ktypes.h"

#define MSS 1448U
#define RING_BITS 18
#define RING (1U << RING_BITS)

enum ev_kind { EV_ARRIVE, EV_ACK, EV_DELACK, EV_RTO, EV_PACE, EV_SCRIPT };

struct event {
	u64 at_us;
	u64 order;      /* insertion order: ties run first come, first served */
	u8 kind;
	u8 retrans;     /* EV_ARRIVE: a retransmission */
	u32 seg;        /* EV_ARRIVE: segment; EV_ACK: cumulative ACK (segment) */
	s64 sack, dsack; /* EV_ACK: newly SACKed / duplicate segment, or -1 */
	u64 echo_us;    /* EV_ACK: echoed timestamp (send time); EV_ARRIVE: send time */
	u32 gen;        /* EV_RTO, EV_DELACK, EV_PACE: timer generation */
	int action;     /* EV_SCRIPT: index of the script action; -1: application write */
};

/* Arrivals and ACKs happen in the order they are scheduled (a FIFO link, fixed
 * delays): they wait in FIFOs; timers, script actions and reordered segments
 * in a heap. The next event is the earliest head, ties in scheduling order. */
struct fifo {
	struct event *buf;
	u32 head, len, cap;
};

struct seg {
	u64 sent_us;
	u8 sacked, lost, in_retrans, ever_retrans, received;
};

enum app_mode { APP_BULK, APP_STOPPED, APP_RATE };

struct counters {
	u64 events, acks, cong_avoid_calls, not_cwnd_limited_acks, recoveries, rtos,
	    undos, restarts, tx_starts, app_limited_cuts, drops, reordered,
	    spurious_retrans, random_drops, orig_sent;
	u32 max_cwnd;
	double beta_sum;  /* 1 - ssthresh / cwnd at each fast recovery */
};

struct link {
	u32 owd_us;        /* one-way propagation delay, each direction */
	double rate_sps;   /* bottleneck, segments per second; 0: unlimited */
	u32 buffer;        /* bottleneck queue, segments; 0: unlimited */
	u32 drop_every;    /* drop every n-th original transmission; 0: none */
	double loss_p;     /* drop an original transmission with this probability */
	u64 rng;           /* its seeded generator (xorshift64*) */
	u64 burst_from_us, burst_to_us; /* drop everything sent in [from, to) */
	u32 reorder_seg;   /* this original transmission is delayed ... */
	u32 reorder_us;    /* ... by this much (0: none) */
	u32 ack_every;     /* receiver ACKs every n in-order segments */
};

struct sim {
	const struct tcp_congestion_ops *ops;
	struct tcp_sock tp;
	struct link link;
	u64 now_us, jiffies0;
	u32 hz;
	/* sender */
	u32 una, nxt;          /* segments */
	u32 iss;               /* sequence number of segment 0 */
	u32 highest_sacked;    /* segment + 1; 0: none */
	u32 rexmit_hint;       /* first segment that may need a retransmission */
	u32 mark_from;         /* first segment loss marking has not decided */
	u64 retrans_stamp_us;  /* first retransmission of this episode; 0: none */
	u64 srtt_us, rttvar_us, rto_us;
	u32 rto_gen, pace_gen;
	u64 rto_at;            /* 0: not armed */
	u64 pace_next_us;
	double pace_sps;       /* 0: not paced */
	bool pace_timer;
	enum app_mode app;
	double app_sps;        /* APP_RATE: segments the application writes per second */
	double app_credit;     /* APP_RATE: segments written, not yet sent */
	u64 app_at_us;
	u32 orig_sent;         /* original transmissions, for drop_every */
	/* receiver */
	u32 rcv_nxt, rcv_unacked, rcv_ooo;
	u64 ts_recent;
	u64 delack_due_us;
	bool delack_armed, delack_pending;  /* a delayed ACK is due / its timer event is queued */
	/* network */
	double link_free_us;
	struct seg *ring;
	struct event *heap;
	u32 heap_len, heap_cap;
	struct fifo arrivals, acks;
	u64 order;
	struct counters c;
	/* the last event, for reports */
	struct event last;
	char last_what[160];
};

int sim_init(struct sim *s, const struct tcp_congestion_ops *ops, const struct link *link,
	     u32 hz, u32 init_cwnd, u32 init_ssthresh);
void sim_free(struct sim *s);
void sim_push(struct sim *s, struct event e);
/* Runs the next event; returns false when none is left before until_us. */
bool sim_step(struct sim *s, u64 until_us, void (*script_action)(struct sim *, int));
void sim_describe(const struct sim *s, char *out, size_t len);
/* Script controls. */
void sim_set_app(struct sim *s, enum app_mode mode, double sps);
void sim_set_pacing(struct sim *s, double sps);
void sim_send(struct sim *s);

#endif
