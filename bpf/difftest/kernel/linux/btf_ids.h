/* Stands in for <linux/btf_ids.h>: see kernel.h. */
#include "../kernel.h"
