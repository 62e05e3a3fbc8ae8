/* Stands in for libbpf's bpf_helpers.h when ITB's eBPF congestion controls are
 * built as ordinary C for the differential test: sections and kernel symbols
 * are ordinary definitions, helpers read the model's clock. Written for ITB. */
#ifndef CCDIFF_BPF_HELPERS_H
#define CCDIFF_BPF_HELPERS_H

#define SEC(name)
#define __ksym
#define __kconfig
#define __weak __attribute__((weak))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static inline unsigned long long bpf_jiffies64(void)
{
	return jiffies;
}

static inline unsigned long long bpf_ktime_get_ns(void)
{
	return ccdiff_now_ns;
}

#endif
