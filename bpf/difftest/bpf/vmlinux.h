/* Stands in for the BTF dump a BPF program is built against: the kernel types
 * of ../ktypes.h, so ITB's bpf/<name>.bpf.c builds as ordinary C. */
#include "../ktypes.h"
