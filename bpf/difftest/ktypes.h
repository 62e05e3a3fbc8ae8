/* Kernel data types as the differential test needs them: the parts of struct
 * sock / inet_connection_sock / tcp_sock that congestion controls, the stack
 * helpers and the stack model touch, laid out so that the usual casts
 * (tcp_sock -> inet_connection_sock -> sock) hold. Both sides are built
 * against this one header: Linux's tcp_<name>.c through kernel/ and ITB's
 * bpf/<name>.bpf.c through bpf/ (as its vmlinux.h). Written for ITB. */
#ifndef CCDIFF_KTYPES_H
#define CCDIFF_KTYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef u8 __u8;
typedef u16 __u16;
typedef u32 __u32;
typedef u64 __u64;
typedef s32 __s32;
typedef s64 __s64;

enum tcp_ca_state {
	TCP_CA_Open = 0,
	TCP_CA_Disorder = 1,
	TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3,
	TCP_CA_Loss = 4,
};

enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

enum sk_pacing { SK_PACING_NONE = 0, SK_PACING_NEEDED = 1, SK_PACING_FQ = 2 };

struct sock {
	unsigned char sk_state;
	unsigned long sk_pacing_rate;
	u8 sk_pacing_status;   /* tcp_cubic.c's HyStart reads these two */
	unsigned int sk_gso_max_size;
};

struct tcp_congestion_ops;

struct inet_connection_sock {
	struct sock icsk_inet;
	const struct tcp_congestion_ops *icsk_ca_ops;
	u32 icsk_rto;  /* jiffies */
	u8 icsk_retransmits;
	u8 icsk_ca_state : 5, icsk_ca_initialized : 1, icsk_ca_setsockopt : 1,
	   icsk_ca_dst_locked : 1;
	u64 icsk_ca_priv[104 / sizeof(u64)];
};

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	u32 snd_una, snd_nxt;     /* bytes */
	u32 snd_cwnd, snd_cwnd_cnt, snd_cwnd_clamp, snd_cwnd_used, snd_cwnd_stamp;
	u32 snd_ssthresh, prior_cwnd, prior_ssthresh;
	u32 packets_out, sacked_out, lost_out, retrans_out, max_packets_out;
	u32 cwnd_usage_seq, lsndtime, mss_cache, srtt_us, mdev_us;
	u32 high_seq, undo_marker, retrans_stamp, prr_delivered, prr_out, delivered;
	int undo_retrans;
	u8 is_cwnd_limited : 1, app_limited : 1;
	u64 tcp_mstamp;
};

struct ack_sample {
	u32 pkts_acked;
	s32 rtt_us;
	u32 in_flight;
};

struct rate_sample {
	s64 interval_us;
	u32 delivered;
	s32 rtt_us;
	int losses;
};

struct tcpvegas_info {
	u32 tcpv_enabled, tcpv_rttcnt, tcpv_rtt, tcpv_minrtt;
};

union tcp_cc_info {
	struct tcpvegas_info vegas;
};

struct module;

struct tcp_congestion_ops {
	u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, u32 ack, u32 acked);
	void (*set_state)(struct sock *sk, u8 new_state);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	void (*in_ack_event)(struct sock *sk, u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, u32 ack, int flag, const struct rate_sample *rs);
	u32 (*undo_cwnd)(struct sock *sk);
	u32 (*sndbuf_expand)(struct sock *sk);
	size_t (*get_info)(struct sock *sk, u32 ext, int *attr, union tcp_cc_info *info);
	char name[16];
	struct module *owner;
	u32 key;
	u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
};

/* The clock both sides read: set by the model before every call. */
extern unsigned long jiffies;
extern unsigned long long ccdiff_now_ns;
/* Calls of the stack's WARN_ON_ONCE that fired (tcp_snd_cwnd_set's (int)cwnd <= 0). */
bool ccdiff_warn(bool cond, const char *where);

#endif
