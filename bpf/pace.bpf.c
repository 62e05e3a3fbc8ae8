// SPDX-License-Identifier: GPL-2.0
/* Holds an unmodified program's TCP sockets to a rate: a cgroup sock_ops program that
 * sets SO_MAX_PACING_RATE (and, when asked, the congestion control: before the SYN of a
 * connection it opens, on establishment of one it accepts) of every TCP socket of the
 * processes in its cgroup, from a one-entry map that ITB updates at each date of a rate
 * profile (docs/profile.md).
 *
 * The rate is the total over the group's data sockets: each paces at rate / n, where n
 * is the number of data sockets the program has counted and not yet seen close (the
 * streams of a parallel transfer share the profile as flow's streams do). A socket is
 * counted as a data socket once DATA_BYTES of what it sent have been acknowledged
 * (a control connection, e.g. iperf3's, which shares the data connections' port, never
 * gets there). Until then it paces at rate / m, m the number of the group's open
 * connections, so that the first RTT of a set of new connections stays within the rate
 * too. A connection with `skip_port` as its local or remote port (e.g. GridFTP's
 * control channel, 2811) is neither paced nor counted (it still gets the congestion
 * control). A socket picks a new rate up at its next RTT sample (the RTT callback is
 * enabled on every socket), so a step takes effect within about one RTT.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#define SOL_SOCKET 1
#define SO_MAX_PACING_RATE 47
#define SOL_TCP 6
#define TCP_CONGESTION 13
#define ITB_CC_NAME 16
/* 64 KiB: about 45 full segments, a few ms at the rates of interest */
#define DATA_BYTES 65536

struct pace_config {
	__u64 rate_bps;          /* total payload bit/s; 0: leave the sockets unpaced */
	__u32 generation;        /* bumped by ITB at each step */
	__u32 set_cc;            /* 1: also set the congestion control below */
	char cc[ITB_CC_NAME];
	__u32 skip_port;         /* a socket with this local or remote port is not counted */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pace_config);
} itb_pace_config SEC(".maps");

/* The group's sockets now: [DATA] counted data sockets, [OPEN] open connections (not
 * skipped), counted or not. */
#define DATA 0
#define OPEN 1
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __s64);
} itb_pace_sockets SEC(".maps");

struct sock_state {
	__u64 applied;  /* what the rate was last divided by: generation, counted, count */
	__u32 counted;  /* in the DATA count */
	__u32 open;     /* in the OPEN count */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sock_state);
} itb_pace_applied SEC(".maps");

static __always_inline __s64 *count(__u32 which)
{
	return bpf_map_lookup_elem(&itb_pace_sockets, &which);
}

static __always_inline void set_cc(struct bpf_sock_ops *skops, struct pace_config *cfg)
{
	char name[ITB_CC_NAME];

	__builtin_memcpy(name, cfg->cc, ITB_CC_NAME);
	name[ITB_CC_NAME - 1] = 0;
	bpf_setsockopt(skops, SOL_TCP, TCP_CONGESTION, name, sizeof(name));
}

/* The socket's share of the rate: rate / DATA for a data socket, rate / OPEN before. */
static __always_inline void apply(struct bpf_sock_ops *skops, struct sock_state *st, int force)
{
	__u32 zero = 0;
	struct pace_config *cfg = bpf_map_lookup_elem(&itb_pace_config, &zero);
	__s64 *n = count(st->counted ? DATA : OPEN);
	__u64 want, per64, div;
	__u32 per;

	if (!cfg || !n)
		return;
	div = *n > 0 ? (__u64)*n : 1;
	want = ((__u64)cfg->generation << 33) | ((__u64)st->counted << 32) | (__u32)div;
	if (!force && st->applied == want)
		return;
	st->applied = want;
	/* The kernel takes an int here: bytes/s, ~0U for unpaced, so at most ~34 Gbit/s. */
	if (cfg->rate_bps == 0) {
		per = ~0U;
	} else {
		per64 = cfg->rate_bps / 8 / div;
		per = per64 == 0 ? 1 : per64 >= ~0U ? ~0U - 1 : (__u32)per64;
	}
	bpf_setsockopt(skops, SOL_SOCKET, SO_MAX_PACING_RATE, &per, sizeof(per));
}

SEC("sockops")
int itb_pace(struct bpf_sock_ops *skops)
{
	__u32 zero = 0;
	struct pace_config *cfg;
	struct bpf_sock *sk = skops->sk;
	struct sock_state *st;
	__s64 *data = count(DATA), *open = count(OPEN);

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		/* before the SYN: the congestion control can still be chosen */
		cfg = bpf_map_lookup_elem(&itb_pace_config, &zero);
		if (cfg && cfg->set_cc)
			set_cc(skops, cfg);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		cfg = bpf_map_lookup_elem(&itb_pace_config, &zero);
		if (!cfg || !data || !open || !sk)
			break;
		/* an accepted connection has its listener's; nothing was sent yet */
		if (cfg->set_cc && skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
			set_cc(skops, cfg);
		if (cfg->skip_port && (skops->local_port == cfg->skip_port ||
				       bpf_ntohl(skops->remote_port) == cfg->skip_port))
			break;
		st = bpf_sk_storage_get(&itb_pace_applied, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!st)
			break;
		st->open = 1;
		__sync_fetch_and_add(open, 1);
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_RTT_CB_FLAG | BPF_SOCK_OPS_STATE_CB_FLAG);
		apply(skops, st, 1);  /* paced from its first segment */
		break;
	case BPF_SOCK_OPS_RTT_CB:
		st = sk ? bpf_sk_storage_get(&itb_pace_applied, sk, 0, 0) : 0;
		if (!st || !data)
			break;
		if (!st->counted && skops->bytes_acked >= DATA_BYTES) {
			st->counted = 1;  /* a data socket from now on */
			__sync_fetch_and_add(data, 1);
		}
		apply(skops, st, 0);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		/* args[1] is the new state: a socket that closes leaves the counts */
		if (skops->args[1] != BPF_TCP_CLOSE)
			break;
		st = sk ? bpf_sk_storage_get(&itb_pace_applied, sk, 0, 0) : 0;
		if (!st)
			break;
		if (st->counted && data) {
			st->counted = 0;
			__sync_fetch_and_add(data, -1);
		}
		if (st->open && open) {
			st->open = 0;
			__sync_fetch_and_add(open, -1);
		}
		break;
	}
	return 1;
}
