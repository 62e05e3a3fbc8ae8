/* Linux's congestion controls as itb-sim links them (itb.cc.simlinux builds this with
 * Linux's net/ipv4/tcp_<name>.c and tcp_cong.c's helpers against bpf/difftest's kernel
 * shim): the registry their module_init fills, Reno as tcp_cong.c defines it, and the
 * kernel's clock, which the adapter (linux_cc.cc) sets before every call. Written for
 * ITB. */
#include <string.h>
#include "kernel.h"

unsigned long jiffies;
unsigned long long ccdiff_now_ns;
unsigned int CONFIG_HZ = CCDIFF_HZ;

#define MAX_OPS 16
static struct tcp_congestion_ops *registered[MAX_OPS];
static int n_registered;
static unsigned warnings;

int tcp_register_congestion_control(struct tcp_congestion_ops *ca)
{
	if (n_registered < MAX_OPS)
		registered[n_registered++] = ca;
	return 0;
}

void tcp_unregister_congestion_control(struct tcp_congestion_ops *ca)
{
	(void)ca;
}

bool ccdiff_warn(bool cond, const char *where)
{
	(void)where;
	if (cond)
		warnings++;
	return cond;
}

/* net/ipv4/tcp_cong.c's tcp_reno, with the functions extracted from it */
static struct tcp_congestion_ops linux_reno = {
	.name = "reno",
	.ssthresh = tcp_reno_ssthresh,
	.cong_avoid = tcp_reno_cong_avoid,
	.undo_cwnd = tcp_reno_undo_cwnd,
};

const struct tcp_congestion_ops *itb_linux_ops(const char *name)
{
	if (!strcmp(name, "reno"))
		return &linux_reno;
	for (int i = 0; i < n_registered; i++)
		if (!strcmp(registered[i]->name, name))
			return registered[i];
	return 0;
}

/* jiffies start far from 0, as the kernel's (INITIAL_JIFFIES): an algorithm that takes
 * a 0 date for "unset" (CUBIC's epoch_start) must not meet one */
void itb_linux_clock(unsigned long long now_ns)
{
	ccdiff_now_ns = now_ns;
	jiffies = 1000000UL + now_ns / (1000000000ULL / HZ);
}

unsigned itb_linux_warnings(void)
{
	return warnings;
}
