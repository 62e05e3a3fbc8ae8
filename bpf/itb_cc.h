/* Shared by ITB's eBPF congestion controls: the kernel's TCP helpers that a
 * struct_ops congestion control may call (kfuncs), and the small inline helpers
 * of include/net/tcp.h that a BPF program cannot call and so restates.
 * Built against the running kernel's BTF (vmlinux.h, made at set-up time); the
 * differential test (tests/difftest) builds the same sources in user space
 * against its own vmlinux.h and bpf/ headers. */
#ifndef ITB_CC_H
#define ITB_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define ITB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define ITB_MAX(a, b) ((a) > (b) ? (a) : (b))

/* The stack's "no threshold yet" value (TCP_INFINITE_SSTHRESH). */
#define ITB_INFINITE_SSTHRESH 0x7fffffffU

/* The running kernel's tick rate, read by libbpf from its configuration
 * (/proc/config.gz or /boot/config-*); jiffies-based algorithms need it. */
extern unsigned int CONFIG_HZ __kconfig;

/* The TCP stack's own building blocks, exported to BPF congestion controls. */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

static __always_inline struct tcp_sock *itb_tcp(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

/* Per-connection state lives in the socket's icsk_ca_priv area (104 bytes). */
static __always_inline void *itb_priv(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline __u8 itb_ca_state(const struct sock *sk)
{
	return ((const struct inet_connection_sock *)sk)->icsk_ca_state;
}

static __always_inline bool itb_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* Is the flow using its window? Cut-off as in the stack: true when the last
 * flight filled cwnd; in slow start also while cwnd is below twice the most
 * data recently in flight. A flow held back by pacing, the application or the
 * receiver must not grow a window it does not use. */
static __always_inline bool itb_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = itb_tcp(sk);

	if (tp->is_cwnd_limited)
		return true;
	if (itb_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* CWR or Recovery: the stack is lowering cwnd towards ssthresh. */
static __always_inline bool itb_in_cwnd_reduction(const struct sock *sk)
{
	return ((1U << itb_ca_state(sk)) & ((1U << TCP_CA_CWR) | (1U << TCP_CA_Recovery))) != 0;
}

/* The threshold to keep when cwnd is set outside a congestion event: the
 * current one during a reduction, else at least 3/4 of cwnd. */
static __always_inline __u32 itb_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = itb_tcp(sk);
	__u32 three_quarters = (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2);

	if (itb_in_cwnd_reduction(sk))
		return tp->snd_ssthresh;
	return ITB_MAX(tp->snd_ssthresh, three_quarters);
}

/* Sequence-number order with wrap-around: is a later than b? */
static __always_inline bool itb_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* Is lo <= x <= hi in modulo-2^32 order (the stack's between())? */
static __always_inline bool itb_between(__u32 x, __u32 lo, __u32 hi)
{
	return hi - lo >= x - lo;
}

/* The kernel's tick counter, as the stack's tcp_jiffies32 reads it. */
static __always_inline __u32 itb_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* msecs_to_jiffies()/usecs_to_jiffies(): rounded up to the next tick. The kernel's
 * own formulas when HZ divides 1000 (100, 250, 1000: what the differential test
 * runs); with HZ 300 the kernel approximates the same rounding with a multiply and
 * shift, which can differ by a tick at exact boundaries. */
static __always_inline __u32 itb_ms_to_jiffies(__u32 ms)
{
	return (__u32)(((__u64)ms * CONFIG_HZ + 999) / 1000);
}

static __always_inline __u32 itb_us_to_jiffies(__u32 us)
{
	return (__u32)(((__u64)us * CONFIG_HZ + 999999) / 1000000);
}

#endif
