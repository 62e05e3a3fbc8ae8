/* What Linux's net/ipv4/tcp_<name>.c needs from the kernel, for building it in
 * user space as the differential test's oracle. Macros and helpers are ITB's;
 * the TCP helpers it calls (tcp_slow_start, tcp_cong_avoid_ai, the Reno
 * functions, the inline helpers of include/net/tcp.h) are Linux's own,
 * extracted from the same source tree at test time (tcp_inline.h, kfuncs.c in
 * the build directory). CCDIFF_HZ is the tick rate, fixed at compile time as
 * the kernel's HZ is. Written for ITB. */
#ifndef CCDIFF_KERNEL_H
#define CCDIFF_KERNEL_H

#include <string.h>
#include "../ktypes.h"

#ifndef CCDIFF_HZ
#error "CCDIFF_HZ (the kernel's HZ) must be defined"
#endif
#define HZ CCDIFF_HZ
#define MSEC_PER_SEC 1000L
#define USEC_PER_SEC 1000000L
#if (MSEC_PER_SEC % HZ) || (USEC_PER_SEC % HZ)
#error "the jiffies conversions here assume HZ divides 1000"
#endif

#define __read_mostly
#define __init
#define __exit
#define __bpf_kfunc
#define __always_inline inline
#define EXPORT_SYMBOL(x)
#define EXPORT_SYMBOL_GPL(x)
#define EXPORT_IPV6_MOD(x)
#define THIS_MODULE ((struct module *)0)
#define module_param(name, type, perm)
#define MODULE_PARM_DESC(name, text)
#define MODULE_AUTHOR(x)
#define MODULE_LICENSE(x)
#define MODULE_DESCRIPTION(x)
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define likely(x) (x)
#define unlikely(x) (x)
#define READ_ONCE(x) (x)
#define WRITE_ONCE(x, v) ((x) = (v))
#define WARN_ON_ONCE(c) ccdiff_warn(!!(c), __func__)
#define trace_tcp_cong_state_set(sk, state) ((void)0)
#define fallthrough __attribute__((fallthrough))

#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define do_div(n, base) ({ u32 _rem = (u32)((n) % (base)); (n) /= (base); _rem; })

#define TCPF_CA_Open (1 << TCP_CA_Open)
#define TCPF_CA_Disorder (1 << TCP_CA_Disorder)
#define TCPF_CA_CWR (1 << TCP_CA_CWR)
#define TCPF_CA_Recovery (1 << TCP_CA_Recovery)
#define TCPF_CA_Loss (1 << TCP_CA_Loss)
#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define TCP_INIT_CWND 10
#define INET_DIAG_VEGASINFO 3
#define ICSK_CA_PRIV_SIZE sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv)

#define tcp_jiffies32 ((u32)jiffies)
#define tcp_sk(ptr) ((struct tcp_sock *)(ptr))

static inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* include/linux/jiffies.h for HZ dividing 1000: round up to a whole tick. */
static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	if ((int)m < 0)
		return ~0UL >> 2;
	return (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ);
}

static inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	return (u + (USEC_PER_SEC / HZ) - 1) / (USEC_PER_SEC / HZ);
}

/* The module registers itself from a constructor (module_init). */
int tcp_register_congestion_control(struct tcp_congestion_ops *ca);
void tcp_unregister_congestion_control(struct tcp_congestion_ops *ca);
#define module_init(fn) \
	static void __attribute__((constructor)) ccdiff_module_init(void) { fn(); }
#define module_exit(fn) \
	static void (*ccdiff_module_exit)(void) __attribute__((unused)) = fn;

/* What net/ipv4/tcp_cubic.c needs besides (built for the simulator, itb-sim, whose
 * Linux congestion controls are these files too): statistics and debug output are
 * dropped, its kfunc registration for BPF does nothing. */
#define USEC_PER_MSEC 1000L
#define MODULE_VERSION(x)
#define pr_debug(...) ((void)0)
#define NET_INC_STATS(net, field) ((void)0)
#define NET_ADD_STATS(net, field, v) ((void)0)
#define BTF_KFUNCS_START(name) static int name __attribute__((unused));
#define BTF_ID_FLAGS(...)
#define BTF_KFUNCS_END(name)
#define BPF_PROG_TYPE_STRUCT_OPS 0
struct btf_kfunc_id_set {
	struct module *owner;
	int *set;
};
static inline int register_btf_kfunc_id_set(int type, const struct btf_kfunc_id_set *s)
{
	(void)type;
	(void)s;
	return 0;
}
static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}
static inline u64 div64_u64(u64 a, u64 b)
{
	return a / b;
}
#define div64_ul(a, b) ((a) / (b))

/* Linux's own, extracted from the oracle's source tree. */
#include "tcp_inline.h"
#define after(seq2, seq1) before(seq1, seq2)

u32 tcp_slow_start(struct tcp_sock *tp, u32 acked);
void tcp_cong_avoid_ai(struct tcp_sock *tp, u32 w, u32 acked);
void tcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked);
u32 tcp_reno_ssthresh(struct sock *sk);
u32 tcp_reno_undo_cwnd(struct sock *sk);
void tcp_set_ca_state(struct sock *sk, const u8 ca_state);

#endif
