/* Shared by ITB's eBPF congestion controls: the kernel's TCP helpers that a
 * struct_ops congestion control may call (kfuncs), and small accessors.
 * Built against the running kernel's BTF (vmlinux.h, made at set-up time). */
#ifndef ITB_CC_H
#define ITB_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define ITB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define ITB_MAX(a, b) ((a) > (b) ? (a) : (b))

/* The TCP stack's own building blocks, exported to BPF congestion controls. */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
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

static __always_inline bool itb_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* Sequence-number order with wrap-around: is a later than b? */
static __always_inline bool itb_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

#endif
