/* Stands in for libbpf's bpf_tracing.h: BPF_PROG(name, args...) declares an
 * ordinary function taking those arguments. Written for ITB. */
#ifndef CCDIFF_BPF_TRACING_H
#define CCDIFF_BPF_TRACING_H

#define BPF_PROG(name, args...) name(args)

#endif
